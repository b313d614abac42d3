/* Tuning under MPI (contract in tuner/mpi.h). */
#include "tuner/mpi.h"

#include "base/error.h"
#include "base/plugin.h"
#include "harness/wire.h"
#include "tuner/mpi_shim.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SHIM_NAME "libvptune-mpi.so"
#define HANDSHAKE_S 3600.0
#define DEFAULT_SILENCE_S 60.0
#define WHAT_MAX 1024

enum {
    TAG_HELLO = 1,   /* r -> 0: Hello, then nlanes VptLaneInfo */
    TAG_WELCOME = 2, /* 0 -> r: Welcome */
    TAG_REFUSE = 3,  /* 0 -> r: Refuse */
    TAG_JOB = 4,     /* 0 -> r: Job */
    TAG_PREFETCH = 5,/* 0 -> r: PrefetchHead, then n VptConfig */
    TAG_RESULT = 6,  /* r -> 0: Result */
    TAG_BEAT = 7,    /* both ways: empty */
    TAG_STOP = 8     /* 0 -> r: empty */
};

/* Layout checks a hello carries: the same binary everywhere. */
#define HELLO_MAGIC 0x4d545056u /* "VPTM" */

typedef struct {
    uint32_t magic;
    uint32_t size_config, size_record, size_info;
    int32_t failed, no_gpu, nlanes, pad;
    char message[1024];
    char what[WHAT_MAX];
} Hello;

typedef struct {
    double silence_s;
} Welcome;

typedef struct {
    char message[1024];
} Refuse;

typedef struct {
    uint64_t job;
    int32_t lane, fidelity;
    VptConfig config;
} Job;

typedef struct {
    int32_t lane, fidelity, n, pad;
} PrefetchHead;

typedef struct {
    uint64_t job;
    int32_t lane, lost;
    char why[768];
    VptEvalRecord rec;
} Result;

struct VptMpi {
    const VptMpiShim *shim;
    int rank, size, local_rank, local_size;
    char host[64];
    char library[256];
    char err[1024];
};

static double now_s(void) { return vpt_wire_now(); }

static double silence_limit(void)
{
    const char *v = getenv("VPT_MPI_SILENCE_S");
    if (v && *v) {
        char *end;
        double s = strtod(v, &end);
        if (*end == '\0' && s >= 0.5 && s <= 86400) return s;
        fprintf(stderr, "tune: VPT_MPI_SILENCE_S='%s' is not a number of seconds in [0.5, 86400]: using %.0f\n", v,
                DEFAULT_SILENCE_S);
    }
    return DEFAULT_SILENCE_S;
}

static double beat_interval(double silence)
{
    double b = silence / 4;
    return b < 1.0 ? b : 1.0;
}

/* ---- environment and start --------------------------------------------- */

static long env_long(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return *end == '\0' && x >= 0 ? x : -1;
}

int vpt_mpi_launched_size(void)
{
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        long n = env_long(sizes[i]);
        if (n >= 1) return (int)(n > 1000000 ? 1000000 : n);
    }
    if (getenv("PMIX_RANK") || getenv("PMI_RANK")) {
        /* srun with PMIx: the step's task count, when Slurm says */
        long n = env_long("SLURM_STEP_NUM_TASKS");
        if (n < 1) n = env_long("SLURM_NTASKS");
        return n >= 1 ? (int)(n > 1000000 ? 1000000 : n) : -1;
    }
    return 0;
}

int vpt_mpi_env_rank(void)
{
    static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        long r = env_long(ranks[i]);
        if (r >= 0) return (int)(r > 1000000 ? 1000000 : r);
    }
    return -1;
}

VptMpi *vpt_mpi_init(void)
{
    VptMpi *m = vpt_calloc(1, sizeof *m);
    if (!m) return NULL;
    char path[4096], err[8192];
    /* RTLD_GLOBAL: libmpi's own plugins resolve its symbols through it */
    void *h = vpt_plugin_open(SHIM_NAME, "VPT_MPI_SHIM", RTLD_NOW | RTLD_GLOBAL, path, sizeof path, err, sizeof err);
    if (!h) {
        vpt_fail("this program was started by an MPI launcher, and its MPI shim could not be loaded (%s). Build "
                 "with MPI (make MPI=1, which installs libopenmpi-dev), and run where libmpi is found (on a GPU "
                 "machine without a registry: eval \"$(scripts/openmpi_carry.sh .mpi)\")",
                 err);
        free(m);
        return NULL;
    }
    typedef const VptMpiShim *(*TableFn)(void);
    TableFn table = (TableFn)(uintptr_t)dlsym(h, "vpt_mpi_shim_table");
    m->shim = table ? table() : NULL;
    if (!m->shim || m->shim->abi != VPT_MPI_SHIM_ABI) {
        vpt_fail("%s is of another version (ABI %d, expected %d): rebuild it (make MPI=1)", path,
                 m->shim ? m->shim->abi : -1, VPT_MPI_SHIM_ABI);
        free(m);
        return NULL;
    }
    if (m->shim->init(&m->rank, &m->size, &m->local_rank, &m->local_size, m->err, sizeof m->err)) {
        vpt_fail("%s", m->err);
        free(m);
        return NULL;
    }
    m->shim->library(m->library, sizeof m->library);
    if (gethostname(m->host, sizeof m->host) != 0) snprintf(m->host, sizeof m->host, "?");
    m->host[sizeof m->host - 1] = '\0';
    return m;
}

int vpt_mpi_rank(const VptMpi *m) { return m->rank; }
int vpt_mpi_size(const VptMpi *m) { return m->size; }
int vpt_mpi_local_rank(const VptMpi *m) { return m->local_rank; }
int vpt_mpi_local_size(const VptMpi *m) { return m->local_size; }
const char *vpt_mpi_host(const VptMpi *m) { return m->host; }
const char *vpt_mpi_library(const VptMpi *m) { return m->library; }

static volatile sig_atomic_t finalize_rc;

static void finalize_timed_out(int sig)
{
    (void)sig;
    static const char msg[] = "tune: MPI_Finalize did not return (a rank was lost?): exiting without it; "
                              "every finished evaluation is in the cache\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(finalize_rc);
}

void vpt_mpi_finalize(VptMpi *m, int rc)
{
    if (!m) return;
    unsigned seconds = 20;
    const char *env = getenv("VPT_MPI_FINALIZE_S");
    if (env && atoi(env) > 0) seconds = (unsigned)atoi(env);
    finalize_rc = rc;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = finalize_timed_out;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
    m->shim->finalize();
    alarm(0);
    free(m);
}

static int send_msg(VptMpi *m, int dest, int tag, const void *buf, size_t len)
{
    if (m->shim->send(dest, tag, buf, len, m->err, sizeof m->err)) return vpt_fail("to rank %d: %s", dest, m->err);
    return 0;
}

/* The next waiting message, received into a malloc'd buffer (caller frees):
 * 1, 0 when none waits, -1 with a message. */
static int next_msg(VptMpi *m, int *source, int *tag, void **buf, size_t *len)
{
    int got = m->shim->probe(source, tag, len, m->err, sizeof m->err);
    if (got < 0) return vpt_fail("%s", m->err);
    if (got == 0) return 0;
    *buf = vpt_malloc(*len ? *len : 1);
    if (!*buf) return -1;
    if (m->shim->recv(*source, *tag, *buf, *len, m->err, sizeof m->err)) {
        free(*buf);
        return vpt_fail("from rank %d: %s", *source, m->err);
    }
    return 1;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- rank 0 -------------------------------------------------------------- */

typedef struct {
    int alive;
    int first, nlanes;    /* its lanes: [first, first + nlanes) of the remote list */
    double last_heard;
} RankState;

struct VptRemote {
    VptMpi *m;
    int welcomed;
    RankState *rank;      /* [size]; rank 0 unused */
    VptLaneInfo *info;    /* the remote lanes, rank by rank */
    int *owner;           /* each remote lane's rank */
    int *index;           /* its index among its rank's lanes */
    uint64_t *running;    /* its job, VPT_LANE_NO_JOB when idle */
    int nlanes;
    VptLaneEvent *events; /* lost lanes' events, waiting to be polled */
    size_t nevents, capevents;
    double silence, beat, last_beat;
};

void vpt_mpi_refuse(VptMpi *m, const char *why)
{
    Refuse r;
    memset(&r, 0, sizeof r);
    snprintf(r.message, sizeof r.message, "%s", why);
    for (int i = 1; i < m->size; i++) send_msg(m, i, TAG_REFUSE, &r, sizeof r); /* a rank gone cannot be told */
}

static void free_remote(VptRemote *r)
{
    free(r->rank);
    free(r->info);
    free(r->owner);
    free(r->index);
    free(r->running);
    free(r->events);
    free(r);
}

/* Checks one hello and adds its lanes; -1 with a message. */
static int take_hello(VptRemote *r, int source, const void *buf, size_t len, const char *what, int *no_gpu)
{
    Hello h;
    if (len < sizeof h) return vpt_fail("rank %d sent a hello of %zu bytes: it runs another build of tune", source, len);
    memcpy(&h, buf, sizeof h);
    h.message[sizeof h.message - 1] = '\0';
    h.what[sizeof h.what - 1] = '\0';
    if (h.magic != HELLO_MAGIC || h.size_config != sizeof(VptConfig) || h.size_record != sizeof(VptEvalRecord) ||
        h.size_info != sizeof(VptLaneInfo))
        return vpt_fail("rank %d runs another build of tune (its messages have another layout): run the same "
                        "binary on every rank", source);
    if (h.failed) {
        *no_gpu = h.no_gpu != 0;
        return vpt_fail("rank %d could not start: %s", source, h.message);
    }
    if (strcmp(h.what, what) != 0)
        return vpt_fail("rank %d tunes something else than rank 0: it has '%s', rank 0 '%s' (every rank must run "
                        "the same command, with the same scene files and build)", source, h.what, what);
    if (h.nlanes < 1 || h.nlanes > 4096 || len != sizeof h + (size_t)h.nlanes * sizeof(VptLaneInfo))
        return vpt_fail("rank %d sent a malformed hello (%d lanes in %zu bytes)", source, (int)h.nlanes, len);
    int n = r->nlanes + h.nlanes;
    VptLaneInfo *info = realloc(r->info, (size_t)n * sizeof *info);
    if (info) r->info = info;
    int *owner = info ? realloc(r->owner, (size_t)n * sizeof *owner) : NULL;
    if (owner) r->owner = owner;
    int *index = owner ? realloc(r->index, (size_t)n * sizeof *index) : NULL;
    if (index) r->index = index;
    uint64_t *running = index ? realloc(r->running, (size_t)n * sizeof *running) : NULL;
    if (running) r->running = running;
    if (!running) return vpt_fail("out of memory taking rank %d's hello", source);
    const VptLaneInfo *lanes = (const VptLaneInfo *)((const char *)buf + sizeof h);
    r->rank[source].first = r->nlanes;
    r->rank[source].nlanes = h.nlanes;
    for (int i = 0; i < h.nlanes; i++) {
        VptLaneInfo *li = &r->info[r->nlanes];
        *li = lanes[i];
        li->gpu_name[sizeof li->gpu_name - 1] = li->gpu_uuid[sizeof li->gpu_uuid - 1] = '\0';
        li->driver[sizeof li->driver - 1] = li->nvrtc[sizeof li->nvrtc - 1] = '\0';
        li->commit[sizeof li->commit - 1] = li->host[sizeof li->host - 1] = '\0';
        li->rank = source;
        r->owner[r->nlanes] = source;
        r->index[r->nlanes] = i;
        r->running[r->nlanes] = VPT_LANE_NO_JOB;
        r->nlanes++;
    }
    return 0;
}

VptRemote *vpt_mpi_gather(VptMpi *m, const char *what, int *no_gpu)
{
    *no_gpu = 0;
    VptRemote *r = vpt_calloc(1, sizeof *r);
    if (!r) return NULL;
    r->m = m;
    r->rank = vpt_calloc((size_t)m->size, sizeof *r->rank);
    if (!r->rank) {
        free(r);
        return NULL;
    }
    r->silence = silence_limit();
    r->beat = beat_interval(r->silence);
    int heard = 0;
    double deadline = now_s() + HANDSHAKE_S;
    while (heard < m->size - 1) {
        int source, tag;
        void *buf = NULL;
        size_t len;
        int got = next_msg(m, &source, &tag, &buf, &len);
        if (got < 0) {
            free_remote(r);
            return NULL;
        }
        if (got == 0) {
            if (now_s() > deadline) {
                vpt_fail("%d of %d ranks said hello within %.0f s", heard, m->size - 1, HANDSHAKE_S);
                free_remote(r);
                return NULL;
            }
            sleep_s(0.002);
            continue;
        }
        int rc = 0;
        if (tag == TAG_HELLO && source > 0 && source < m->size && !r->rank[source].alive) {
            rc = take_hello(r, source, buf, len, what, no_gpu);
            r->rank[source].alive = 1;
            r->rank[source].last_heard = now_s();
            heard++;
        }
        free(buf);
        if (rc) {
            free_remote(r);
            return NULL;
        }
    }
    return r;
}

int vpt_remote_lanes(const VptRemote *r) { return r->nlanes; }
const VptLaneInfo *vpt_remote_info(const VptRemote *r, int lane) { return &r->info[lane]; }

int vpt_mpi_welcome(VptRemote *r)
{
    Welcome w = {r->silence};
    for (int i = 1; i < r->m->size; i++)
        if (send_msg(r->m, i, TAG_WELCOME, &w, sizeof w)) return -1;
    double t = now_s();
    for (int i = 1; i < r->m->size; i++) r->rank[i].last_heard = t;
    r->last_beat = t;
    r->welcomed = 1;
    return 0;
}

static void push_lost(VptRemote *r, int lane, const char *why)
{
    if (r->nevents == r->capevents) {
        size_t cap = r->capevents ? 2 * r->capevents : 16;
        VptLaneEvent *e = realloc(r->events, cap * sizeof *e);
        if (!e) return;
        r->events = e;
        r->capevents = cap;
    }
    VptLaneEvent *ev = &r->events[r->nevents++];
    memset(ev, 0, sizeof *ev);
    ev->kind = VPT_LANE_LOST;
    ev->lane = lane;
    ev->job = r->running[lane];
    snprintf(ev->why, sizeof ev->why, "%s", why);
    r->running[lane] = VPT_LANE_NO_JOB;
}

/* Rank `rank` is gone: every lane of it is reported lost. */
static void lose_rank(VptRemote *r, int rank, const char *why)
{
    RankState *s = &r->rank[rank];
    if (!s->alive) return;
    s->alive = 0;
    for (int i = s->first; i < s->first + s->nlanes; i++) push_lost(r, i, why);
}

static int r_count(void *self) { return ((VptRemote *)self)->nlanes; }
static const VptLaneInfo *r_info(void *self, int lane) { return &((VptRemote *)self)->info[lane]; }

static int r_submit(void *self, int lane, uint64_t job, const VptConfig *c, int fidelity)
{
    VptRemote *r = self;
    int owner = r->owner[lane];
    if (!r->rank[owner].alive) return vpt_fail("rank %d is lost", owner);
    Job j;
    memset(&j, 0, sizeof j);
    j.job = job;
    j.lane = r->index[lane];
    j.fidelity = fidelity;
    j.config = *c;
    if (send_msg(r->m, owner, TAG_JOB, &j, sizeof j)) {
        char why[1024];
        snprintf(why, sizeof why, "%s", vpt_errmsg());
        lose_rank(r, owner, why);
        return vpt_fail("%s", why);
    }
    r->running[lane] = job;
    return 0;
}

static void r_prefetch(void *self, int lane, const VptConfig *configs, size_t n, int fidelity)
{
    VptRemote *r = self;
    int owner = r->owner[lane];
    if (!r->rank[owner].alive || n == 0 || n > 65536) return;
    size_t len = sizeof(PrefetchHead) + n * sizeof *configs;
    char *buf = malloc(len);
    if (!buf) return; /* only a hint */
    PrefetchHead h = {r->index[lane], fidelity, (int32_t)n, 0};
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, configs, n * sizeof *configs);
    if (send_msg(r->m, owner, TAG_PREFETCH, buf, len)) lose_rank(r, owner, vpt_errmsg());
    free(buf);
}

/* Sends heartbeats when due and loses the ranks not heard from for too
 * long. */
static void r_service(VptRemote *r)
{
    double t = now_s();
    if (t - r->last_beat >= r->beat) {
        r->last_beat = t;
        for (int i = 1; i < r->m->size; i++)
            if (r->rank[i].alive && send_msg(r->m, i, TAG_BEAT, NULL, 0)) lose_rank(r, i, vpt_errmsg());
    }
    for (int i = 1; i < r->m->size; i++)
        if (r->rank[i].alive && t - r->rank[i].last_heard > r->silence) {
            char why[160];
            snprintf(why, sizeof why, "no message from rank %d for %.1f s (VPT_MPI_SILENCE_S=%.1f)", i,
                     t - r->rank[i].last_heard, r->silence);
            lose_rank(r, i, why);
        }
}

static int pop_event(VptRemote *r, VptLaneEvent *ev)
{
    if (r->nevents == 0) return 0;
    *ev = r->events[0];
    memmove(r->events, r->events + 1, (r->nevents - 1) * sizeof *r->events);
    r->nevents--;
    return 1;
}

static int r_poll(void *self, double timeout_s, VptLaneEvent *ev)
{
    (void)timeout_s; /* never waits: the pool's wait is on its own lanes */
    VptRemote *r = self;
    if (pop_event(r, ev)) return 1;
    for (;;) {
        int source, tag;
        void *buf = NULL;
        size_t len;
        int got = next_msg(r->m, &source, &tag, &buf, &len);
        if (got < 0) return -1;
        if (got == 0) break;
        if (source <= 0 || source >= r->m->size || !r->rank[source].alive) { /* a lost rank's late word */
            free(buf);
            continue;
        }
        r->rank[source].last_heard = now_s();
        if (tag != TAG_RESULT) {
            free(buf);
            continue; /* a heartbeat */
        }
        Result res;
        int ok = len == sizeof res;
        if (ok) memcpy(&res, buf, sizeof res);
        free(buf);
        RankState *s = &r->rank[source];
        if (!ok || res.lane < 0 || res.lane >= s->nlanes) {
            lose_rank(r, source, "it sent a malformed result");
            break;
        }
        int lane = s->first + res.lane;
        res.why[sizeof res.why - 1] = '\0';
        memset(ev, 0, sizeof *ev);
        ev->lane = lane;
        ev->job = res.job;
        if (res.lost) {
            ev->kind = VPT_LANE_LOST;
            snprintf(ev->why, sizeof ev->why, "%s", res.why);
        } else {
            ev->kind = VPT_LANE_DONE;
            ev->rec = res.rec;
        }
        r->running[lane] = VPT_LANE_NO_JOB;
        return 1;
    }
    r_service(r);
    return pop_event(r, ev);
}

VptTransport vpt_remote_transport(VptRemote *r)
{
    return (VptTransport){r_count, r_info, r_submit, r_prefetch, r_poll, r};
}

void vpt_remote_stop(VptRemote *r)
{
    if (!r) return;
    for (int i = 1; r->welcomed && i < r->m->size; i++)
        if (r->rank[i].alive) send_msg(r->m, i, TAG_STOP, NULL, 0);
    free_remote(r);
}

/* ---- other ranks ----------------------------------------------------------- */

static int send_result(VptMpi *m, const VptLaneEvent *ev)
{
    Result *res = vpt_calloc(1, sizeof *res);
    if (!res) return -1;
    res->job = ev->job;
    res->lane = ev->lane;
    res->lost = ev->kind == VPT_LANE_LOST;
    snprintf(res->why, sizeof res->why, "%s", ev->why);
    if (!res->lost) res->rec = ev->rec;
    int rc = send_msg(m, 0, TAG_RESULT, res, sizeof *res);
    free(res);
    return rc;
}

/* Waits for rank 0's answer to the hello: 1 welcome, 0 refused, -1 error. */
static int await_welcome(VptMpi *m, double *silence, const volatile sig_atomic_t *interrupt)
{
    double deadline = now_s() + HANDSHAKE_S;
    for (;;) {
        int source, tag;
        void *buf = NULL;
        size_t len;
        int got = next_msg(m, &source, &tag, &buf, &len);
        if (got < 0) return -1;
        if (got == 0) {
            if (interrupt && *interrupt) return vpt_fail("interrupted");
            if (now_s() > deadline) return vpt_fail("rank 0 did not answer the hello within %.0f s", HANDSHAKE_S);
            sleep_s(0.002);
            continue;
        }
        int answer = -2;
        if (source == 0 && tag == TAG_WELCOME && len == sizeof(Welcome)) {
            Welcome w;
            memcpy(&w, buf, sizeof w);
            *silence = w.silence_s;
            answer = 1;
        } else if (source == 0 && (tag == TAG_REFUSE || tag == TAG_STOP)) {
            answer = 0;
        }
        free(buf);
        if (answer >= 0) return answer;
    }
}

int vpt_mpi_serve(VptMpi *m, VptLanes *lanes, const char *what, const char *failure, int no_gpu,
                  const volatile sig_atomic_t *interrupt)
{
    int n = lanes ? vpt_lanes_count(lanes) : 0;
    size_t len = sizeof(Hello) + (size_t)n * sizeof(VptLaneInfo);
    char *buf = vpt_calloc(1, len);
    if (!buf) return 1;
    Hello h;
    memset(&h, 0, sizeof h);
    h.magic = HELLO_MAGIC;
    h.size_config = sizeof(VptConfig);
    h.size_record = sizeof(VptEvalRecord);
    h.size_info = sizeof(VptLaneInfo);
    h.failed = lanes == NULL;
    h.no_gpu = no_gpu;
    h.nlanes = n;
    snprintf(h.message, sizeof h.message, "%s", failure ? failure : "");
    snprintf(h.what, sizeof h.what, "%s", what);
    memcpy(buf, &h, sizeof h);
    for (int i = 0; i < n; i++) memcpy(buf + sizeof h + (size_t)i * sizeof(VptLaneInfo), vpt_lanes_info(lanes, i),
                                       sizeof(VptLaneInfo));
    int rc = send_msg(m, 0, TAG_HELLO, buf, len);
    free(buf);
    if (rc) {
        fprintf(stderr, "tune (rank %d on %s): error: %s\n", m->rank, m->host, vpt_errmsg());
        return 1;
    }
    if (!lanes) return 1;
    double silence = DEFAULT_SILENCE_S;
    int answer = await_welcome(m, &silence, interrupt);
    if (answer < 0) fprintf(stderr, "tune (rank %d on %s): error: %s\n", m->rank, m->host, vpt_errmsg());
    if (answer <= 0) return 1;
    const double beat = beat_interval(silence);
    double last_beat = 0, heard = now_s();
    for (;;) {
        if (interrupt && *interrupt) return 1;
        int source, tag;
        void *msg = NULL;
        size_t mlen;
        int got = next_msg(m, &source, &tag, &msg, &mlen);
        if (got < 0) {
            fprintf(stderr, "tune (rank %d on %s): error: %s\n", m->rank, m->host, vpt_errmsg());
            return 1;
        }
        if (got > 0) {
            int stop = 0;
            if (source == 0) heard = now_s();
            if (source == 0 && tag == TAG_JOB && mlen == sizeof(Job)) {
                Job j;
                memcpy(&j, msg, sizeof j);
                if (vpt_lanes_submit(lanes, j.lane, j.job, &j.config, j.fidelity)) {
                    VptLaneEvent ev;
                    memset(&ev, 0, sizeof ev);
                    ev.kind = VPT_LANE_LOST;
                    ev.lane = j.lane;
                    ev.job = j.job;
                    snprintf(ev.why, sizeof ev.why, "%s", vpt_errmsg());
                    send_result(m, &ev);
                }
            } else if (source == 0 && tag == TAG_PREFETCH && mlen >= sizeof(PrefetchHead)) {
                PrefetchHead ph;
                memcpy(&ph, msg, sizeof ph);
                if (ph.n > 0 && mlen == sizeof ph + (size_t)ph.n * sizeof(VptConfig))
                    vpt_lanes_prefetch(lanes, ph.lane, (const VptConfig *)((char *)msg + sizeof ph), (size_t)ph.n,
                                       ph.fidelity);
            } else if (source == 0 && tag == TAG_STOP) {
                stop = 1;
            }
            free(msg);
            if (stop) return 0;
            continue;
        }
        VptLaneEvent ev;
        if (vpt_lanes_poll(lanes, 0.002, &ev) > 0 && ev.kind != VPT_LANE_CALLED && send_result(m, &ev)) {
            fprintf(stderr, "tune (rank %d on %s): error: %s\n", m->rank, m->host, vpt_errmsg());
            return 1;
        }
        double t = now_s();
        if (t - last_beat >= beat) {
            last_beat = t;
            send_msg(m, 0, TAG_BEAT, NULL, 0);
        }
        if (t - heard > silence) {
            fprintf(stderr, "tune (rank %d on %s): rank 0 has not been heard from for %.1f s: it is gone; exiting\n",
                    m->rank, m->host, t - heard);
            return 1;
        }
    }
}
