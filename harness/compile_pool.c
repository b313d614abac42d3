/* The compile pool (see compile_pool.h): threads taking requests in order,
 * each with a worker process it starts on its first cache miss and restarts
 * when the worker is lost. The messages are compile_protocol.h's, the
 * worker's side compile_worker.c. */
#include "harness/compile_pool.h"

#include "base/error.h"
#include "base/threads.h"
#include "harness/compile_protocol.h"
#include "harness/compile_worker.h"
#include "harness/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_JOBS 256
/* A worker answers its start within this (it loads NVRTC, nothing more). */
#define HELLO_TIMEOUT_S 120.0
/* Once an answer begins, the rest follows within this. */
#define REPLY_REST_TIMEOUT_S 120.0
/* Handing a request to a worker that does not read it. */
#define SEND_TIMEOUT_S 60.0
/* An idle worker asked to stop exits within this, or is killed. */
#define STOP_GRACE_S 10.0

/* Runs before main in every program that links the pool: a program started
 * by the pool as a worker (VPT_COMPILE_WORKER=<protocol>:<parent pid>, its
 * socket on VPT_COMPILE_WORKER_FD) becomes one here. It lives in this file,
 * not in compile_worker.c, because a static library's object is linked only
 * when something refers to it: every program that uses the pool links this
 * one, and this one refers to the worker. */
__attribute__((constructor)) static void compile_worker_entry(void)
{
    const char *v = getenv(VPT_COMPILE_WORKER_ENV);
    if (!v) return;
    unsigned proto = 0;
    long parent = 0;
    struct stat st;
    if (sscanf(v, "%u:%ld", &proto, &parent) != 2 || proto != VPT_COMPILE_PROTOCOL ||
        fstat(VPT_COMPILE_WORKER_FD, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        /* Started by another build's pool, or by hand: never run main in
         * place of a compile worker. */
        fprintf(stderr, "vptune: %s=%s: not a compile worker of this build (protocol %u); exiting\n",
                VPT_COMPILE_WORKER_ENV, v, VPT_COMPILE_PROTOCOL);
        _exit(VPT_COMPILE_EXIT_NOT_OURS);
    }
    unsetenv(VPT_COMPILE_WORKER_ENV);
    vpt_compile_worker_main(parent);
}

/* ------------------------------------------------------------ the pool */

typedef enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE } JobState;

typedef struct {
    VptCompileRequest req;  /* deep copy, owned */
    VptCompileResult res;
    int rc;
    char err[1024];
    JobState state;
} Job;

typedef struct {
    struct VptCompilePool *pool;
    pthread_t thread;
    pid_t pid;              /* the worker process, 0 when none (under the pool's mutex) */
    int fd;                 /* its socket, -1 when none */
} Slot;

struct VptCompilePool {
    VptCubinCache *cache;
    int procs;              /* compiles in worker processes */
    pthread_mutex_t mu;
    pthread_cond_t work;    /* a job was queued, or shutdown */
    pthread_cond_t done;    /* a job finished */
    Job **jobs;             /* indexed by ticket; NULL once collected or dropped */
    int njobs, cap;
    int next_run;           /* first ticket not yet taken by a thread */
    int shutdown;
    Slot *slots;
    int nthreads;
    double timeout_s;
    int stop_pipe[2];       /* written once at destroy: wakes threads waiting on workers */
    char exe[4096];         /* the program the workers run */
    char **envp;            /* their environment */
    atomic_int no_procs;    /* workers could not be started: compile here */
    atomic_int warned;
    atomic_int started;     /* workers spawned */
    atomic_int greeted;     /* workers that said hello */
};

static double now_s(void) { return vpt_wire_now(); }

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int vpt_compile_pool_default_jobs(void)
{
    const char *v = getenv("VPT_COMPILE_JOBS");
    if (v && *v) {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (!errno && *end == '\0' && n >= 1 && n <= MAX_JOBS) return (int)n;
        static atomic_int warned;
        if (atomic_exchange(&warned, 1) == 0)
            fprintf(stderr, "vptune: ignoring VPT_COMPILE_JOBS=%s (a whole number 1..%d)\n", v, MAX_JOBS);
    }
    long n = vpt_cpu_count();
    if (n < 2) return 1;
    return n - 1 > MAX_JOBS ? MAX_JOBS : (int)(n - 1);
}

static void slot_set(Slot *s, pid_t pid, int fd)
{
    pthread_mutex_lock(&s->pool->mu);
    s->pid = pid;
    s->fd = fd;
    pthread_mutex_unlock(&s->pool->mu);
}

/* Closes the worker's socket and reaps it: waits up to grace_s for it to
 * exit, then kills it (kill_first: at once). Returns its wait status, -1
 * when it was reaped elsewhere (SIGCHLD ignored). Leaves no zombie. */
static int slot_reap(Slot *s, double grace_s, int kill_first)
{
    pid_t pid = s->pid;
    int fd = s->fd;
    slot_set(s, 0, -1);
    if (fd >= 0) close(fd);
    if (pid <= 0) return -1;
    double t0 = now_s();
    int status = 0, killed = 0;
    for (;;) {
        if (!killed && (kill_first || now_s() - t0 >= grace_s)) {
            /* Our own unreaped child cannot refuse; should kill fail all the
             * same, give up on it rather than wait forever. */
            if (VPT_SYS_TRY(kill, pid, SIGKILL)) {
                fprintf(stderr, "vptune: compile pool: %s\n", vpt_errmsg());
                return -1;
            }
            killed = 1;
        }
        pid_t r = waitpid(pid, &status, killed ? 0 : WNOHANG);
        if (r == pid) return status;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1; /* ECHILD: reaped elsewhere (SIGCHLD ignored) */
        sleep_s(0.002);
    }
}

/* What stopping a running worker leaves in the message. */
static int lost(Slot *s, int kill_first, const char *name, const char *fmt_why, ...) VPT_PRINTF(4, 5);
static int lost(Slot *s, int kill_first, const char *name, const char *fmt_why, ...)
{
    char why[700];
    va_list ap;
    va_start(ap, fmt_why);
    vsnprintf(why, sizeof why, fmt_why, ap);
    va_end(ap);
    pid_t pid = s->pid;
    char how[160];
    vpt_wire_describe_exit(slot_reap(s, 5.0, kill_first), how, sizeof how);
    return vpt_fail("NVRTC compile of %s failed: compile worker process %d %s%s", name, (int)pid, why, how);
}

/* Waits for the worker's socket to be readable: 1 readable (or closed),
 * 0 at the deadline (< 0: none), 2 when the pool is shutting down, -1 error. */
static int await(VptCompilePool *p, Slot *s, double deadline)
{
    for (;;) {
        struct pollfd f[2] = {{s->fd, POLLIN, 0}, {p->stop_pipe[0], POLLIN, 0}};
        int ms = -1;
        if (deadline >= 0) {
            double left = deadline - now_s();
            if (left <= 0) return 0;
            ms = left * 1000.0 + 1.0 > (double)INT_MAX ? INT_MAX : (int)(left * 1000.0 + 1.0);
        }
        int r = poll(f, 2, ms);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return VPT_SYS_FAIL("poll(worker socket, stop pipe)");
        if (f[1].revents) return 2;
        if (f[0].revents) return 1;
    }
}

/* Builds the workers' environment: ours, without stale VPT_COMPILE_WORKER_ENV, plus
 * VPT_COMPILE_WORKER_ENV for this process. Taken once, at create, so that a setenv
 * elsewhere later never races with a start. */
static int make_env(VptCompilePool *p)
{
    size_t n = 0;
    while (environ && environ[n]) n++;
    p->envp = vpt_calloc(n + 2, sizeof *p->envp);
    if (!p->envp) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(environ[i], VPT_COMPILE_WORKER_ENV "=", sizeof VPT_COMPILE_WORKER_ENV)) continue;
        if (!(p->envp[k++] = vpt_strdup(environ[i]))) return -1;
    }
    char mine[96];
    snprintf(mine, sizeof mine, "%s=%u:%ld", VPT_COMPILE_WORKER_ENV, VPT_COMPILE_PROTOCOL, (long)getpid());
    if (!(p->envp[k] = vpt_strdup(mine))) return -1;
    return 0;
}

/* The program to exec: this one. /proc/self/exe is the very file this
 * process runs (even if it was replaced or deleted since); under valgrind
 * it names valgrind's tool, so there the client's path is taken. */
static void choose_exe(VptCompilePool *p)
{
    const char *pre = getenv("LD_PRELOAD");
    snprintf(p->exe, sizeof p->exe, "/proc/self/exe");
    if (pre && strstr(pre, "vgpreload")) {
        ssize_t n = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
        if (n > 0) p->exe[n] = '\0';
        else snprintf(p->exe, sizeof p->exe, "/proc/self/exe");
    }
}

/* Starts this thread's worker process and waits for its hello. */
static int slot_spawn(VptCompilePool *p, Slot *s)
{
    char exe[sizeof p->exe];
    pthread_mutex_lock(&p->mu);
    memcpy(exe, p->exe, sizeof exe);
    pthread_mutex_unlock(&p->mu);
    int sv[2];
    if (VPT_SYS_TRY(socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return -1;
    /* posix_spawn's dup2 onto the same number would leave close-on-exec set. */
    if (sv[1] == VPT_COMPILE_WORKER_FD) {
        int d = fcntl(sv[1], F_DUPFD_CLOEXEC, VPT_COMPILE_WORKER_FD + 1);
        if (d < 0) {
            VPT_SYS_FAIL("fcntl(worker socket, F_DUPFD_CLOEXEC)");
            close(sv[0]);
            close(sv[1]);
            return -1;
        }
        close(sv[1]);
        sv[1] = d;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int have_fa = 0, have_at = 0, rc = -1;
    pid_t pid = 0;
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    /* Dispositions an exec keeps (ignored ones) back to the default. */
    int sigs[] = {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&dfl, sigs[i]);
    char *argv[] = {"vptune-compile-worker", NULL};
    if (VPT_ERRNO_TRY(posix_spawn_file_actions_init, &fa)) goto out;
    have_fa = 1;
    if (VPT_ERRNO_TRY(posix_spawnattr_init, &at)) goto out;
    have_at = 1;
    if (VPT_ERRNO_TRY(posix_spawn_file_actions_addopen, &fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) ||
        VPT_ERRNO_TRY(posix_spawn_file_actions_adddup2, &fa, STDERR_FILENO, STDOUT_FILENO) ||
        VPT_ERRNO_TRY(posix_spawn_file_actions_adddup2, &fa, sv[1], VPT_COMPILE_WORKER_FD) ||
        VPT_ERRNO_TRY(posix_spawn_file_actions_addclosefrom_np, &fa, VPT_COMPILE_WORKER_FD + 1) ||
        VPT_ERRNO_TRY(posix_spawnattr_setsigmask, &at, &none) ||
        VPT_ERRNO_TRY(posix_spawnattr_setsigdefault, &at, &dfl) ||
        VPT_ERRNO_TRY(posix_spawnattr_setpgroup, &at, 0) ||
        VPT_ERRNO_TRY(posix_spawnattr_setflags, &at,
                      POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        goto out;
    if (VPT_ERRNO_TRY(posix_spawn, &pid, exe, &fa, &at, argv, p->envp)) goto out;
    rc = 0;
out:
    if (have_fa) posix_spawn_file_actions_destroy(&fa);
    if (have_at) posix_spawnattr_destroy(&at);
    close(sv[1]);
    if (rc) {
        close(sv[0]);
        return -1;
    }
    slot_set(s, pid, sv[0]);
    atomic_fetch_add(&p->started, 1);

    int ready = await(p, s, now_s() + HELLO_TIMEOUT_S);
    char how[160];
    if (ready != 1) {
        if (ready == 0) vpt_fail("no hello within %.0f s", HELLO_TIMEOUT_S);
        else if (ready == 2) vpt_fail("the pool is shutting down");
        char why[1024];
        snprintf(why, sizeof why, "%s", vpt_errmsg());
        vpt_wire_describe_exit(slot_reap(s, 0.0, 1), how, sizeof how);
        return vpt_fail("compile worker %s (%s): %s", exe, why, how);
    }
    uint32_t type;
    void *msg;
    size_t len;
    VptWireStatus st = vpt_wire_recv(s->fd, sizeof(VptCompileHello), REPLY_REST_TIMEOUT_S, &type, &msg, &len);
    VptCompileHello h;
    if (st == VPT_WIRE_OK && type == VPT_COMPILE_MSG_HELLO && len == sizeof h) {
        memcpy(&h, msg, sizeof h);
        free(msg);
        h.nvrtc[sizeof h.nvrtc - 1] = '\0';
        if (h.protocol == VPT_COMPILE_PROTOCOL && !strcmp(h.nvrtc, vpt_nvrtc_version())) {
            atomic_fetch_add(&p->greeted, 1);
            return 0;
        }
        vpt_wire_describe_exit(slot_reap(s, 0.0, 1), how, sizeof how);
        return vpt_fail("compile worker %s speaks protocol %u with NVRTC %s, not %u with %s (stopped: %s)", exe,
                        h.protocol, h.nvrtc, VPT_COMPILE_PROTOCOL, vpt_nvrtc_version(), how);
    }
    free(msg);
    char why[1024];
    snprintf(why, sizeof why, "%s",
             st == VPT_WIRE_OK ? "an unexpected first message" : st == VPT_WIRE_EOF ? "it closed the connection" : vpt_errmsg());
    vpt_wire_describe_exit(slot_reap(s, STOP_GRACE_S, st != VPT_WIRE_EOF), how, sizeof how);
    return vpt_fail("compile worker %s gave no hello (%s): %s", exe, why, how);
}

/* A compile in this thread's worker process. 0 compiled, -1 failed (message
 * set; *out holds what is known), -2 no worker could be started. */
static int remote_compile(VptCompilePool *p, Slot *s, const VptCompileRequest *req, VptCompileResult *out)
{
    const char *name = req->name ? req->name : "(unnamed program)";
    VptCompileBuf b = {0};
    if (vpt_compile_request_encode(req, &b)) {
        free(b.data);
        return -1;
    }
    int rc = -1, worker_lost = 1;
    for (int attempt = 0;; attempt++) {
        if (s->fd < 0 && !atomic_load(&p->no_procs) && slot_spawn(p, s)) {
            /* Never any worker: none will come (compile here from now on).
             * After some did: a passing shortage, this compile here. */
            int never = atomic_load(&p->greeted) == 0;
            if (never) atomic_store(&p->no_procs, 1);
            if (atomic_exchange(&p->warned, 1) == 0)
                fprintf(stderr, "vptune: cannot start a compile worker process (%s); compiling in this process%s\n",
                        vpt_errmsg(), never ? "" : " meanwhile");
        }
        if (s->fd < 0) {
            rc = -2;
            break;
        }
        double t0 = now_s();
        if (vpt_wire_send(s->fd, VPT_COMPILE_MSG_COMPILE, b.data, b.len, NULL, 0, SEND_TIMEOUT_S)) {
            /* Most likely it died while idle: not this compile's doing. */
            char why[1024];
            snprintf(why, sizeof why, "%s", vpt_errmsg());
            pid_t pid = s->pid;
            char how[160];
            vpt_wire_describe_exit(slot_reap(s, 0.0, 1), how, sizeof how);
            if (attempt == 0) continue;
            rc = vpt_fail("NVRTC compile of %s failed: could not hand it to compile worker process %d (%s): %s", name,
                          (int)pid, why, how);
            break;
        }
        pthread_mutex_lock(&p->mu);
        double limit = p->timeout_s;
        pthread_mutex_unlock(&p->mu);
        double deadline = limit > 0 ? t0 + limit : -1.0;
        int ready = await(p, s, deadline);
        out->seconds = now_s() - t0;
        if (ready == 2) {
            slot_reap(s, 0.0, 1);
            rc = vpt_fail("NVRTC compile of %s abandoned: the compile pool is shutting down", name);
            break;
        }
        if (ready == 0) {
            rc = lost(s, 1, name, "gave no answer within %.0f s (the compile time limit) and was ", limit);
            break;
        }
        if (ready < 0) {
            char why[1024];
            snprintf(why, sizeof why, "%s", vpt_errmsg());
            rc = lost(s, 1, name, "could not be waited for (%s); it was ", why);
            break;
        }
        uint32_t type;
        void *msg;
        size_t len;
        VptWireStatus st = vpt_wire_recv(s->fd, VPT_COMPILE_REPLY_MAX, REPLY_REST_TIMEOUT_S, &type, &msg, &len);
        out->seconds = now_s() - t0;
        if (st == VPT_WIRE_OK && type == VPT_COMPILE_MSG_RESULT) {
            rc = vpt_compile_result_decode(msg, len, out);
            free(msg);
            if (rc != -3) {
                worker_lost = 0;
                break;
            }
            rc = lost(s, 1, name, "%s", "sent a malformed answer and was stopped: ");
            break;
        }
        free(msg);
        if (st == VPT_WIRE_EOF) {
            rc = lost(s, 0, name, "%s", "died: ");
        } else {
            char why[1024];
            snprintf(why, sizeof why, "%s", st == VPT_WIRE_OK ? "an unexpected message" : vpt_errmsg());
            rc = lost(s, 1, name, "broke the protocol (%s) and was stopped: ", why);
        }
        break;
    }
    free(b.data);
    if (rc == -1 && worker_lost && !out->log) {
        /* A lost worker leaves no NVRTC log: an empty one, as an NVRTC
         * failure has at least. */
        out->log = calloc(1, 1);
    }
    return rc;
}

/* One compile in a process-pool thread: the cache here, NVRTC in the
 * worker, the entry stored here. */
static int compile_job(VptCompilePool *p, Slot *s, const VptCompileRequest *req, VptCompileResult *out)
{
    memset(out, 0, sizeof *out);
    if (p->cache) {
        int hit = vpt_cubin_cache_lookup(p->cache, req, out);
        if (hit != 0) return hit > 0 ? 0 : -1;
    }
    int rc = remote_compile(p, s, req, out);
    if (rc == -2) rc = vpt_nvrtc_compile(req, out);
    if (rc == 0 && p->cache) vpt_cubin_cache_store(p->cache, req, out);
    return rc;
}

/* Stops an idle worker: asks it to exit, reaps it. */
static void slot_stop(Slot *s)
{
    if (s->fd < 0 && s->pid <= 0) return;
    if (s->fd >= 0) {
        vpt_wire_send(s->fd, VPT_COMPILE_MSG_STOP, NULL, 0, NULL, 0, 1.0);
        shutdown(s->fd, SHUT_WR);
    }
    slot_reap(s, STOP_GRACE_S, 0);
}

static void *pool_thread(void *arg)
{
    Slot *s = arg;
    VptCompilePool *p = s->pool;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->shutdown && p->next_run >= p->njobs) pthread_cond_wait(&p->work, &p->mu);
        if (p->shutdown) break;
        Job *j = p->jobs[p->next_run++];
        j->state = JOB_RUNNING;
        pthread_mutex_unlock(&p->mu);

        vpt_error_clear();
        if (p->procs) j->rc = compile_job(p, s, &j->req, &j->res);
        else j->rc = vpt_compile_cached(p->cache, &j->req, &j->res);
        if (j->rc != 0) snprintf(j->err, sizeof j->err, "%s", vpt_errmsg());

        pthread_mutex_lock(&p->mu);
        j->state = JOB_DONE;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    slot_stop(s);
    return NULL;
}

VptCompilePool *vpt_compile_pool_create(VptCubinCache *cache, int jobs)
{
    if (jobs <= 0) jobs = vpt_compile_pool_default_jobs();
    if (jobs > MAX_JOBS) jobs = MAX_JOBS;
    VptCompilePool *p = vpt_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->cache = cache;
    p->procs = jobs > 1;
    p->timeout_s = VPT_COMPILE_POOL_TIMEOUT_S;
    p->stop_pipe[0] = p->stop_pipe[1] = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->slots = vpt_calloc((size_t)jobs, sizeof *p->slots);
    if (!p->slots) goto fail;
    for (int i = 0; i < jobs; i++) {
        p->slots[i].pool = p;
        p->slots[i].fd = -1;
    }
    if (p->procs) {
        if (VPT_SYS_TRY(pipe2, p->stop_pipe, O_CLOEXEC) || make_env(p)) goto fail;
        choose_exe(p);
    }
    pthread_attr_t attr;
    if (VPT_ERRNO_TRY(pthread_attr_init, &attr)) goto fail;
    int e = pthread_attr_setstacksize(&attr, VPT_COMPILE_WORKER_STACK_BYTES);
    for (int i = 0; e == 0 && i < jobs; i++) {
        e = pthread_create(&p->slots[i].thread, &attr, pool_thread, &p->slots[i]);
        if (e == 0) p->nthreads = i + 1;
    }
    pthread_attr_destroy(&attr);
    if (e != 0) {
        char name[32];
        vpt_fail("cannot start compile thread %d of %d: pthread_create failed at %s:%d: %s (%s)", p->nthreads + 1,
                 jobs, __FILE__, __LINE__, vpt_errno_name(e, name, sizeof name), strerror(e));
        goto fail;
    }
    return p;
fail: {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", vpt_errmsg());
    vpt_compile_pool_destroy(p);
    vpt_fail("%s", msg);
    return NULL;
}
}

void vpt_compile_pool_set_timeout(VptCompilePool *p, double seconds)
{
    pthread_mutex_lock(&p->mu);
    p->timeout_s = seconds > 0 ? seconds : 0;
    pthread_mutex_unlock(&p->mu);
}

void vpt_compile_pool_set_program(VptCompilePool *p, const char *path)
{
    pthread_mutex_lock(&p->mu);
    snprintf(p->exe, sizeof p->exe, "%s", path);
    pthread_mutex_unlock(&p->mu);
}

int vpt_compile_pool_threads(const VptCompilePool *p) { return p->nthreads; }

int vpt_compile_pool_uses_processes(const VptCompilePool *p) { return p->procs && !atomic_load(&p->no_procs); }

int vpt_compile_pool_workers_started(const VptCompilePool *p) { return atomic_load(&p->started); }

int vpt_compile_pool_worker_pids(VptCompilePool *p, pid_t *pids, int max)
{
    int n = 0;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        if (p->slots[i].pid > 0) {
            if (n < max) pids[n] = p->slots[i].pid;
            n++;
        }
    pthread_mutex_unlock(&p->mu);
    return n;
}

int vpt_compile_pool_submit(VptCompilePool *p, const VptCompileRequest *req)
{
    Job *j = vpt_calloc(1, sizeof *j);
    if (!j) return -1;
    if (vpt_compile_request_copy(req, &j->req)) {
        free(j);
        return -1;
    }
    j->state = JOB_QUEUED;
    pthread_mutex_lock(&p->mu);
    int ticket = -1;
    if (p->shutdown) {
        vpt_fail("compile pool is shutting down");
    } else if (p->njobs == INT_MAX) {
        vpt_fail("compile pool: too many submissions");
    } else if (p->njobs == p->cap) {
        int ncap = p->cap ? (p->cap > INT_MAX / 2 ? INT_MAX : p->cap * 2) : 64;
        Job **nj = vpt_realloc(p->jobs, (size_t)ncap * sizeof *nj);
        if (nj) {
            p->jobs = nj;
            p->cap = ncap;
        }
    }
    if (!p->shutdown && p->njobs < p->cap) {
        ticket = p->njobs;
        p->jobs[p->njobs++] = j;
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
    if (ticket < 0) {
        vpt_compile_request_free(&j->req);
        free(j);
    }
    return ticket;
}

int vpt_compile_pool_done(VptCompilePool *p, int ticket)
{
    pthread_mutex_lock(&p->mu);
    int r = -1;
    if (ticket >= 0 && ticket < p->njobs && p->jobs[ticket]) r = p->jobs[ticket]->state == JOB_DONE;
    pthread_mutex_unlock(&p->mu);
    if (r < 0) vpt_fail("compile pool: unknown or already collected ticket %d", ticket);
    return r;
}

int vpt_compile_pool_wait(VptCompilePool *p, int ticket, VptCompileResult *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    if (ticket < 0 || ticket >= p->njobs || !p->jobs[ticket]) {
        pthread_mutex_unlock(&p->mu);
        return vpt_fail("compile pool: unknown or already collected ticket %d", ticket);
    }
    Job *j = p->jobs[ticket];
    while (j->state != JOB_DONE) pthread_cond_wait(&p->done, &p->mu);
    p->jobs[ticket] = NULL;
    pthread_mutex_unlock(&p->mu);

    *out = j->res;
    int rc = j->rc;
    if (rc != 0) vpt_fail("%s", j->err);
    vpt_compile_request_free(&j->req);
    free(j);
    return rc;
}

void vpt_compile_pool_destroy(VptCompilePool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    /* Wakes the threads waiting on a worker: they kill it. An in-process
     * compile finishes before its thread sees the flag. */
    if (p->stop_pipe[1] >= 0) {
        ssize_t w;
        do w = write(p->stop_pipe[1], "x", 1);
        while (w < 0 && errno == EINTR);
    }
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->slots[i].thread, NULL);
    for (int i = 0; i < p->njobs; i++) {
        Job *j = p->jobs[i];
        if (!j) continue;
        vpt_compile_result_free(&j->res);
        vpt_compile_request_free(&j->req);
        free(j);
    }
    for (int i = 0; p->envp && p->envp[i]; i++) free(p->envp[i]);
    free(p->envp);
    if (p->stop_pipe[0] >= 0) close(p->stop_pipe[0]);
    if (p->stop_pipe[1] >= 0) close(p->stop_pipe[1]);
    free(p->jobs);
    free(p->slots);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p);
}
