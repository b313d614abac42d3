#include "harness/eval_worker.h"

#include "base/error.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static double now_s(void) { return vpt_wire_now(); }

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static int wait_fd(int fd, short events, double deadline) { return vpt_wire_wait(fd, events, deadline); }

/* ------------------------------------------------------------ messages */

enum {
    /* child -> parent */
    MSG_READY = 1,    /* WireReady */
    MSG_ERROR = 2,    /* WireError */
    MSG_PROGRESS = 3, /* WireProgress */
    MSG_RESULT = 4,   /* WireResult */
    MSG_IMAGE = 5,    /* WireResult, then width * height * 3 floats */
    MSG_ROOF = 6,     /* WireRoof */
    MSG_ECHO = 7,     /* VptWorkerTestEcho */
    /* parent -> child */
    MSG_PREFETCH = 32, /* VptConfig[] */
    MSG_RUN = 33,      /* WireRun */
    MSG_RENDER = 34,   /* VptConfig */
    MSG_ROOFLINE = 35, /* int32_t coherent, int32_t density format */
    MSG_STOP = 36,     /* empty */
    MSG_TEST = 37      /* WireTest */
};

/* Progress phase values besides VptEvalPhase. */
#define PHASE_NONE (-2)     /* nothing heard yet */
#define PHASE_ACCEPTED (-1) /* the request arrived */

typedef struct {
    VptProvenance prov;
    VptGpu gpu;
    VptParams params;
    int32_t have_scene;
    int32_t pid;
} WireReady;

typedef struct {
    int32_t no_gpu;  /* start failures: the GPU could not be opened */
    int32_t restart; /* the worker exits after this message */
    char msg[1024];
} WireError;

/* A MSG_ERROR reply's payload p (freed here) as *e, its message ended. */
static void take_error(void *p, WireError *e)
{
    memcpy(e, p, sizeof *e);
    free(p);
    e->msg[sizeof e->msg - 1] = '\0';
}

typedef struct {
    int32_t phase;    /* VptEvalPhase or PHASE_ACCEPTED */
    int32_t cu_error; /* the child's last CUresult (0: none) */
    char cu_text[256];
} WireProgress;

typedef struct {
    VptEvalResult r;
    int32_t restart;
    int32_t pad;
} WireResult;

typedef struct {
    VptTimingStats ms;
    double gsteps_per_s;
    uint64_t steps;
} WireRoof;

typedef struct {
    VptConfig config;
    int32_t fault;
    int32_t pad;
} WireRun;

typedef struct {
    int32_t op;
    int32_t arg;
} WireTest;

/* Largest request the child accepts; prefetch lists are cut to fit. */
#define REQ_MAX ((size_t)1 << 20)
#define PREFETCH_CHUNK ((int)(REQ_MAX / sizeof(VptConfig)))
/* Largest reply other than an image. */
#define REPLY_MAX (sizeof(WireReady) + sizeof(WireResult) + sizeof(WireError) + 4096)
/* Exit status of a worker that leaves after a broken context. */
#define EXIT_RESTART 75
/* Opening the GPU (cuInit, the context) is bounded by no watchdog and can
 * take seconds without persistence mode: a start gets at least this long
 * before the first sign of life. */
#define START_ALLOWANCE_S 120.0

/* ------------------------------------------------------------ the child */

typedef struct {
    int fd;
    VptEvaluator *ev;
    const VptWorkerSpec *spec;
    int nprefetched;
} Child;

static _Noreturn void child_die(const char *why)
{
    fprintf(stderr, "vptune worker %d: %s\n", (int)getpid(), why);
    _exit(2);
}

/* A child that cannot talk to its parent has nobody to work for. */
static void child_send(Child *ch, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
    if (vpt_wire_send(ch->fd, type, a, alen, b, blen, -1)) _exit(1);
}

static void child_error(Child *ch, int no_gpu, int restart, const char *msg)
{
    WireError e;
    memset(&e, 0, sizeof e);
    e.no_gpu = no_gpu;
    e.restart = restart;
    snprintf(e.msg, sizeof e.msg, "%s", msg);
    child_send(ch, MSG_ERROR, &e, sizeof e, NULL, 0);
}

/* phase: a VptEvalPhase or PHASE_ACCEPTED. Carries the last CUDA error of
 * this (the session's) thread, so that the parent can name it should the
 * process die next. */
static void send_progress(Child *ch, int phase)
{
    WireProgress p;
    memset(&p, 0, sizeof p);
    p.phase = phase;
    if (vpt_cuda_loaded()) {
        CUresult last = vpt_cu_last_error();
        p.cu_error = (int32_t)last;
        if (last != CUDA_SUCCESS) vpt_cu_error_text(last, p.cu_text, sizeof p.cu_text);
    }
    child_send(ch, MSG_PROGRESS, &p, sizeof p, NULL, 0);
}

static void child_progress(void *ctx, VptEvalPhase phase) { send_progress(ctx, (int)phase); }

static void child_accept(Child *ch) { send_progress(ch, PHASE_ACCEPTED); }

static _Noreturn void child_exit(Child *ch, int status)
{
    if (ch->ev && status == 0) vpt_evaluator_destroy(ch->ev);
    _exit(status);
}

static void child_result(Child *ch, const VptEvalResult *r, int restart)
{
    WireResult w;
    memset(&w, 0, sizeof w);
    w.r = *r;
    w.restart = restart;
    child_send(ch, MSG_RESULT, &w, sizeof w, NULL, 0);
}

static void init_result(VptEvalResult *r, const VptConfig *c)
{
    memset(r, 0, sizeof *r);
    r->config = *c;
    vpt_config_format(c, r->canon, sizeof r->canon);
    r->spill_stores = r->spill_loads = -1;
}

static void child_run(Child *ch, const WireRun *req)
{
    VptEvalResult r;
    init_result(&r, &req->config);
    if (ch->spec->test_mode && req->fault == VPT_WORKER_TEST_QUIT) _exit(3);
    child_accept(ch);
    if (ch->spec->test_mode) {
        if (req->fault == VPT_FAULT_ILLEGAL_ADDRESS) {
            signal(SIGSEGV, SIG_DFL);
            raise(SIGSEGV);
            _exit(1);
        }
        if (req->fault == VPT_FAULT_HANG) {
            send_progress(ch, VPT_EVAL_PHASE_RENDER);
            for (;;) pause();
        }
        r.status = VPT_STATUS_RUNTIME;
        snprintf(r.reason, sizeof r.reason, "test-mode worker %d: not evaluated", (int)getpid());
        child_result(ch, &r, 0);
        return;
    }
    vpt_codegen_inject_fault((VptFault)req->fault);
    int rc = vpt_evaluator_run(ch->ev, &req->config, &r);
    vpt_codegen_inject_fault(VPT_FAULT_NONE);
    int restart = rc != 0 || vpt_evaluator_broken(ch->ev) != NULL;
    if (rc != 0) {
        /* The session broke outside a config's own failure (out of memory,
         * say): still a result, and a fresh worker for the next one. */
        if (r.status == VPT_STATUS_OK) {
            r.status = VPT_STATUS_RUNTIME;
            snprintf(r.reason, sizeof r.reason, "evaluation session failed: %.480s", vpt_errmsg());
        }
    }
    child_result(ch, &r, restart);
    if (restart) _exit(EXIT_RESTART);
}

static void child_render(Child *ch, const VptConfig *c)
{
    VptEvalResult r;
    init_result(&r, c);
    child_accept(ch);
    if (ch->spec->test_mode) {
        child_error(ch, 0, 0, "a test-mode worker does not render");
        return;
    }
    float *img = vpt_evaluator_render(ch->ev, c, &r);
    int restart = vpt_evaluator_broken(ch->ev) != NULL;
    if (img) {
        const VptParams *P = vpt_evaluator_params(ch->ev);
        WireResult w;
        memset(&w, 0, sizeof w);
        w.r = r;
        w.restart = restart;
        child_send(ch, MSG_IMAGE, &w, sizeof w, img, (size_t)P->width * P->height * 3 * sizeof(float));
        free(img);
    } else if (r.status != VPT_STATUS_OK) {
        child_result(ch, &r, restart);
    } else {
        child_error(ch, 0, restart, vpt_errmsg());
    }
    if (restart) _exit(EXIT_RESTART);
}

static void child_roofline(Child *ch, int coherent, int density, int majorant)
{
    child_accept(ch);
    if (ch->spec->test_mode) {
        child_error(ch, 0, 0, "a test-mode worker has no GPU");
        return;
    }
    WireRoof roof;
    memset(&roof, 0, sizeof roof);
    unsigned long long steps = 0;
    int rc = density < 0 || density >= VPT_DENSITY_FORMAT_COUNT
                 ? vpt_fail("roofline request: density format %d is not one vptune has", density)
                 : vpt_evaluator_roofline(ch->ev, coherent, (VptDensityFormat)density, majorant, &roof.ms,
                                          &roof.gsteps_per_s, &steps);
    int restart = vpt_evaluator_broken(ch->ev) != NULL;
    roof.steps = steps;
    if (rc == 0) child_send(ch, MSG_ROOF, &roof, sizeof roof, NULL, 0);
    else child_error(ch, 0, restart, vpt_errmsg());
    if (restart) _exit(EXIT_RESTART);
}

static void child_test(Child *ch, const WireTest *t)
{
    if (!ch->spec->test_mode) {
        child_error(ch, 0, 0, "test requests need a test-mode worker");
        return;
    }
    switch (t->op) {
    case VPT_WORKER_TEST_ECHO: {
        VptWorkerTestEcho e = {(int)getpid(), ch->nprefetched};
        child_send(ch, MSG_ECHO, &e, sizeof e, NULL, 0);
        return;
    }
    case VPT_WORKER_TEST_GARBAGE: {
        static const char junk[] = "this is not a worker message, but it is long enough to look like one";
        if (write(ch->fd, junk, sizeof junk) < 0) _exit(1);
        return;
    }
    case VPT_WORKER_TEST_EXIT:
        _exit(t->arg);
    default:
        child_error(ch, 0, 0, "unknown test request");
    }
}

/* Serves requests until STOP or until the parent goes away. */
static _Noreturn void child_serve(Child *ch)
{
    for (;;) {
        uint32_t type;
        void *p;
        size_t len;
        VptWireStatus st = vpt_wire_recv(ch->fd, REQ_MAX, -1, &type, &p, &len);
        if (st == VPT_WIRE_EOF) child_exit(ch, 0);
        if (st != VPT_WIRE_OK) child_die(vpt_errmsg());
        switch (type) {
        case MSG_PREFETCH:
            if (len % sizeof(VptConfig)) child_die("malformed prefetch request");
            if (ch->ev) vpt_evaluator_prefetch(ch->ev, p, (int)(len / sizeof(VptConfig)));
            ch->nprefetched += (int)(len / sizeof(VptConfig));
            break;
        case MSG_RUN:
            if (len != sizeof(WireRun)) child_die("malformed run request");
            child_run(ch, p);
            break;
        case MSG_RENDER:
            if (len != sizeof(VptConfig)) child_die("malformed render request");
            child_render(ch, p);
            break;
        case MSG_ROOFLINE: {
            int32_t req[3]; /* coherent, density, majorant cells */
            if (len != sizeof req) child_die("malformed roofline request");
            memcpy(req, p, sizeof req);
            child_roofline(ch, req[0], req[1], req[2]);
            break;
        }
        case MSG_STOP:
            free(p);
            child_exit(ch, 0);
        case MSG_TEST:
            if (len != sizeof(WireTest)) child_die("malformed test request");
            child_test(ch, p);
            break;
        default: {
            char msg[64];
            snprintf(msg, sizeof msg, "unknown request type %u", type);
            child_error(ch, 0, 0, msg);
        }
        }
        free(p);
    }
}

/* The worker process: takes the socket, opens the GPU, sets the scene,
 * reports READY (or why not) and serves. */
static _Noreturn void child_main(const VptWorkerSpec *spec, int fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1); /* the parent died before the prctl */
    signal(SIGPIPE, SIG_IGN);
    dup2(STDERR_FILENO, STDOUT_FILENO); /* stray prints must not reach the parent's stdout */
    /* Keep only stdio and the socket: other workers' sockets and the
     * parent's files stay the parent's (an inherited socket end would hide
     * a worker's death from its parent). */
    if (fd != 3) {
        if (dup2(fd, 3) < 0) _exit(1);
        fd = 3;
    }
    if (close_range(4, ~0U, 0) != 0) {
        long max = sysconf(_SC_OPEN_MAX);
        if (max < 0 || max > 65536) max = 65536;
        for (int i = 4; i < max; i++) close(i);
    }
    Child ch;
    memset(&ch, 0, sizeof ch);
    ch.fd = fd;
    ch.spec = spec;
    WireReady ready;
    memset(&ready, 0, sizeof ready);
    ready.pid = (int32_t)getpid();
    if (spec->test_mode) {
        vpt_provenance_fill(&ready.prov, NULL);
    } else {
        VptEvaluatorOptions o = spec->eval;
        if (spec->visible_devices[0]) {
            /* Pinned, as a job scheduler pins a process: the driver, loaded
             * below for the first time in this process, sees one GPU. */
            if (setenv("CUDA_VISIBLE_DEVICES", spec->visible_devices, 1) != 0) {
                child_error(&ch, 0, 1, "setting CUDA_VISIBLE_DEVICES failed");
                _exit(1);
            }
            o.device = 0;
        }
        o.recover_in_process = 0;
        o.progress = child_progress;
        o.progress_ctx = &ch;
        int no_gpu = 0;
        ch.ev = vpt_evaluator_create_ex(&o, &no_gpu);
        if (!ch.ev) {
            child_error(&ch, no_gpu, 1, vpt_errmsg());
            _exit(1);
        }
        if (spec->scene && vpt_evaluator_set_scene(ch.ev, spec->scene, &spec->settings)) {
            child_error(&ch, 0, 1, vpt_errmsg());
            _exit(1);
        }
        ready.prov = *vpt_evaluator_provenance(ch.ev);
        ready.gpu = *vpt_evaluator_gpu(ch.ev);
        if (spec->scene) {
            ready.params = *vpt_evaluator_params(ch.ev);
            ready.have_scene = 1;
        }
    }
    child_send(&ch, MSG_READY, &ready, sizeof ready, NULL, 0);
    child_serve(&ch);
}

/* ------------------------------------------------------------ the parent */

struct VptEvalWorker {
    VptWorkerSpec spec;
    char *cache_dir;         /* owned copy of spec.eval.cache_dir */
    double hard_s, compile_s;
    pid_t pid;               /* 0: no child */
    int fd;                  /* -1: no child */
    int starts;
    VptProvenance prov;
    VptGpu gpu;
    VptParams params;
    int have_scene;
    VptConfig *queue;        /* prefetched, not yet run */
    int nqueue, cap_queue;
    /* what the current exchange has heard */
    int phase;
    char last_cu[256];
    int killed_from_outside; /* the child died of SIGKILL or SIGTERM it was not sent here */
};

static const char *phase_text(const VptEvalWorker *w, int starting)
{
    if (w->phase == PHASE_NONE) return starting ? "start" : "before accepting the request";
    if (w->phase == PHASE_ACCEPTED) return "the request";
    return vpt_eval_phase_name(w->phase);
}

/* Closes the connection and reaps the child: waits up to grace_s for it to
 * exit by itself, then kills it. Returns its wait status, or -1 when it was
 * already reaped by someone else (SIGCHLD ignored). Leaves no zombie. */
static int reap(VptEvalWorker *w, double grace_s)
{
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    if (w->pid <= 0) return -1;
    pid_t pid = w->pid;
    w->pid = 0;
    double t0 = now_s();
    int status = 0, killed = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, killed ? 0 : WNOHANG);
        if (r == pid) return status;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (!killed && now_s() - t0 >= grace_s) {
            kill(pid, SIGKILL);
            killed = 1;
            continue;
        }
        sleep_s(0.005);
    }
}

/* Kills the child now and reaps it. */
static int kill_and_reap(VptEvalWorker *w)
{
    if (w->pid > 0) kill(w->pid, SIGKILL);
    return reap(w, 0.0);
}

/* Sets the message for a child that was lost and has been reaped. */
static void lost_message(VptEvalWorker *w, int status, int starting)
{
    char how[160];
    vpt_wire_describe_exit(status, how, sizeof how);
    w->killed_from_outside = status != -1 && WIFSIGNALED(status) &&
                             (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM);
    vpt_fail("worker process died: %s %s%s; last CUDA error: %s", how,
             w->phase == PHASE_NONE ? "" : "during ", phase_text(w, starting),
             w->last_cu[0] ? w->last_cu : "none reported");
}

/* The child's state when it has not answered: 1 when it has exited (reaped,
 * *status set), 0 while it runs. */
static int child_exited(VptEvalWorker *w, int *status)
{
    if (w->pid <= 0) {
        *status = -1;
        return 1;
    }
    for (;;) {
        pid_t r = waitpid(w->pid, status, WNOHANG);
        if (r == 0) return 0;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) *status = -1;
        w->pid = 0;
        if (w->fd >= 0) close(w->fd);
        w->fd = -1;
        return 1;
    }
}

/* Sends a request (none when type is 0: waiting for READY) and waits for
 * the reply, following the child's progress: each progress message restarts
 * the clock with the allowance of its phase. Returns 0 with the reply, or
 * -1 when the child was lost: it is then reaped, the message says how, and
 * *timed_out is 1 when it was killed for silence. w->phase tells whether
 * the request was accepted (not PHASE_NONE). */
static int exchange(VptEvalWorker *w, uint32_t type, const void *a, size_t alen, size_t max_reply, uint32_t *rtype,
                    void **reply, size_t *rlen, int *timed_out)
{
    *timed_out = 0;
    *reply = NULL;
    w->killed_from_outside = 0;
    w->phase = PHASE_NONE;
    w->last_cu[0] = '\0';
    int starting = type == 0;
    if (type && vpt_wire_send(w->fd, type, a, alen, NULL, 0, w->hard_s)) {
        /* Most likely it died while idle; the reap tells. */
        char why[1024];
        snprintf(why, sizeof why, "%s", vpt_errmsg());
        int status = kill_and_reap(w);
        char how[160];
        vpt_wire_describe_exit(status, how, sizeof how);
        return vpt_fail("worker process lost before accepting the request (%s): %s", why, how);
    }
    double allowance = starting && w->hard_s < START_ALLOWANCE_S ? START_ALLOWANCE_S : w->hard_s;
    double deadline = now_s() + allowance;
    for (;;) {
        double slice = deadline - now_s();
        if (slice > 0.25) slice = 0.25;
        int ready = slice > 0 ? wait_fd(w->fd, POLLIN, now_s() + slice) : 0;
        if (ready < 0) {
            kill_and_reap(w);
            return -1;
        }
        if (ready == 0) {
            int status;
            if (now_s() >= deadline) {
                kill_and_reap(w);
                *timed_out = 1;
                return vpt_fail("timeout: the worker process gave no sign of life for %.1f s during %s and was killed",
                                allowance, phase_text(w, starting));
            }
            /* An exited child whose socket stays open (inherited by a
             * process of its own) would never show EOF. */
            if (w->pid > 0 && child_exited(w, &status)) {
                lost_message(w, status, starting);
                return -1;
            }
            continue;
        }
        uint32_t t;
        void *p;
        size_t len;
        VptWireStatus st = vpt_wire_recv(w->fd, max_reply, deadline - now_s() > 0 ? deadline - now_s() : 0, &t, &p, &len);
        if (st == VPT_WIRE_OK && t == MSG_PROGRESS) {
            if (len != sizeof(WireProgress)) {
                free(p);
                kill_and_reap(w);
                return vpt_fail("worker protocol error: progress message of %zu bytes", len);
            }
            WireProgress pr;
            memcpy(&pr, p, sizeof pr);
            free(p);
            pr.cu_text[sizeof pr.cu_text - 1] = '\0';
            w->phase = pr.phase;
            if (pr.cu_error != 0) snprintf(w->last_cu, sizeof w->last_cu, "%s", pr.cu_text);
            allowance = pr.phase == VPT_EVAL_PHASE_COMPILE ? w->compile_s : w->hard_s;
            deadline = now_s() + allowance;
            continue;
        }
        if (st == VPT_WIRE_OK) {
            *rtype = t;
            *reply = p;
            *rlen = len;
            return 0;
        }
        if (st == VPT_WIRE_EOF) {
            lost_message(w, reap(w, 10.0), starting);
            return -1;
        }
        if (st == VPT_WIRE_TIMEOUT) {
            kill_and_reap(w);
            *timed_out = 1;
            return vpt_fail("timeout: the worker process did not finish a message within %.1f s during %s and was killed",
                            allowance, phase_text(w, starting));
        }
        char why[1024];
        snprintf(why, sizeof why, "%s", vpt_errmsg());
        int status = kill_and_reap(w);
        char how[160];
        vpt_wire_describe_exit(status, how, sizeof how);
        return vpt_fail("worker protocol error during %s: %s (the worker was stopped: %s)", phase_text(w, starting), why,
                        how);
    }
}

/* A reply the exchange did not expect: the child cannot be trusted. */
static int unexpected(VptEvalWorker *w, uint32_t type, size_t len, const char *what)
{
    kill_and_reap(w);
    return vpt_fail("worker protocol error: unexpected reply type %u (%zu bytes) to %s", type, len, what);
}

/* The child announced that it exits after its reply (broken context). */
static void retire(VptEvalWorker *w) { reap(w, 30.0); }

static int send_prefetch(VptEvalWorker *w, const VptConfig *cs, int n)
{
    for (int i = 0; i < n; i += PREFETCH_CHUNK) {
        int k = n - i < PREFETCH_CHUNK ? n - i : PREFETCH_CHUNK;
        if (vpt_wire_send(w->fd, MSG_PREFETCH, cs + i, sizeof *cs * (size_t)k, NULL, 0, w->hard_s)) return -1;
    }
    return 0;
}

/* Forks a child and waits for READY. */
static int spawn(VptEvalWorker *w, int *no_gpu)
{
    *no_gpu = 0;
    if (vpt_cuda_loaded())
        return vpt_fail("internal error: this process has loaded the CUDA driver; a forked worker cannot use the GPU "
                        "(start workers before any CUDA call)");
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return vpt_fail_errno("creating the worker socket");
    fflush(NULL); /* else the child would flush the parent's buffered output again */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return vpt_fail_errno("starting the worker process (fork)");
    }
    if (pid == 0) {
        close(sv[0]);
        child_main(&w->spec, sv[1], parent);
    }
    close(sv[1]);
    w->pid = pid;
    w->fd = sv[0];
    uint32_t t;
    void *p;
    size_t len;
    int timed_out;
    if (exchange(w, 0, NULL, 0, REPLY_MAX, &t, &p, &len, &timed_out)) return -1;
    if (t == MSG_ERROR && len == sizeof(WireError)) {
        WireError e;
        take_error(p, &e);
        reap(w, 30.0);
        *no_gpu = e.no_gpu != 0;
        return vpt_fail("%s", e.msg);
    }
    if (t != MSG_READY || len != sizeof(WireReady)) {
        free(p);
        return unexpected(w, t, len, "the start");
    }
    WireReady r;
    memcpy(&r, p, sizeof r);
    free(p);
    r.prov.gpu_name[sizeof r.prov.gpu_name - 1] = '\0';
    w->prov = r.prov;
    w->gpu = r.gpu;
    w->gpu.ctx = NULL; /* the child's */
    w->have_scene = r.have_scene != 0;
    if (w->have_scene) w->params = r.params;
    w->starts++;
    if (w->nqueue && send_prefetch(w, w->queue, w->nqueue)) {
        /* It died at once; the next request finds out and starts another. */
        kill_and_reap(w);
    }
    return 0;
}

/* Makes sure a child is running: starts one when the last was lost. Tries
 * twice (a GPU may need a moment after a crashed process let go of it). */
static int ensure(VptEvalWorker *w)
{
    int status;
    if (w->fd >= 0 && !child_exited(w, &status)) return 0;
    int no_gpu;
    if (spawn(w, &no_gpu) == 0) return 0;
    if (no_gpu) return -1;
    if (!w->spec.eval.quiet) fprintf(stderr, "vptune: starting a worker failed (%s); trying again\n", vpt_errmsg());
    sleep_s(2.0);
    if (spawn(w, &no_gpu) == 0) return 0;
    vpt_error_prefix("starting a fresh evaluation worker");
    return -1;
}

VptWorkerSpec vpt_worker_spec_default(void)
{
    VptWorkerSpec s;
    memset(&s, 0, sizeof s);
    s.eval = vpt_evaluator_options_default();
    s.settings.rr_depth = -1;
    s.settings.seed = 1;
    return s;
}

VptEvalWorker *vpt_eval_worker_start(const VptWorkerSpec *spec, int *no_gpu)
{
    int ng = 0;
    if (no_gpu) *no_gpu = 0;
    VptEvalWorker *w = vpt_calloc(1, sizeof *w);
    if (!w) return NULL;
    w->spec = *spec;
    w->fd = -1;
    if (spec->eval.cache_dir) {
        w->cache_dir = vpt_strdup(spec->eval.cache_dir);
        if (!w->cache_dir) {
            free(w);
            return NULL;
        }
        w->spec.eval.cache_dir = w->cache_dir;
    }
    w->spec.eval.progress = NULL;
    w->spec.eval.progress_ctx = NULL;
    double t = spec->eval.timeout_s > 0 ? spec->eval.timeout_s : 60.0;
    w->hard_s = spec->hard_timeout_s > 0 ? spec->hard_timeout_s : t + 30.0;
    w->compile_s = spec->compile_timeout_s > 0 ? spec->compile_timeout_s : 1800.0;
    if (spawn(w, &ng)) {
        if (no_gpu) *no_gpu = ng;
        free(w->cache_dir);
        free(w);
        return NULL;
    }
    return w;
}

void vpt_eval_worker_stop(VptEvalWorker *w)
{
    if (!w) return;
    if (w->fd >= 0) {
        vpt_wire_send(w->fd, MSG_STOP, NULL, 0, NULL, 0, 5.0);
        shutdown(w->fd, SHUT_WR);
    }
    reap(w, 60.0);
    free(w->queue);
    free(w->cache_dir);
    free(w);
}

const VptProvenance *vpt_eval_worker_provenance(const VptEvalWorker *w) { return &w->prov; }
const VptGpu *vpt_eval_worker_gpu(const VptEvalWorker *w) { return &w->gpu; }
const VptParams *vpt_eval_worker_params(const VptEvalWorker *w) { return w->have_scene ? &w->params : NULL; }
pid_t vpt_eval_worker_pid(const VptEvalWorker *w) { return w->pid; }
int vpt_eval_worker_restarts(const VptEvalWorker *w) { return w->starts > 0 ? w->starts - 1 : 0; }

int vpt_eval_worker_set_scene(VptEvalWorker *w, const VptScene *s, const VptRenderSettings *r)
{
    if (w->fd >= 0) {
        vpt_wire_send(w->fd, MSG_STOP, NULL, 0, NULL, 0, 5.0);
        shutdown(w->fd, SHUT_WR);
    }
    reap(w, 60.0);
    w->spec.scene = s;
    w->spec.settings = *r;
    w->have_scene = 0;
    int no_gpu;
    if (spawn(w, &no_gpu)) return -1;
    return 0;
}

void vpt_eval_worker_prefetch(VptEvalWorker *w, const VptConfig *configs, int n)
{
    int first = w->nqueue;
    for (int i = 0; i < n; i++) {
        if (vpt_config_check(&configs[i])) continue; /* run() reports it */
        if (w->nqueue == w->cap_queue) {
            int cap = w->cap_queue ? 2 * w->cap_queue : 64;
            VptConfig *q = vpt_realloc(w->queue, sizeof *q * (size_t)cap);
            if (!q) {
                if (!w->spec.eval.quiet) fprintf(stderr, "warning: could not queue a compile: %s\n", vpt_errmsg());
                break;
            }
            w->queue = q;
            w->cap_queue = cap;
        }
        w->queue[w->nqueue++] = configs[i];
    }
    if (w->fd >= 0 && w->nqueue > first && send_prefetch(w, w->queue + first, w->nqueue - first)) {
        /* Lost while idle: the next request starts a fresh worker, which
         * gets the whole queue. */
        kill_and_reap(w);
    }
}

static void dequeue(VptEvalWorker *w, const VptConfig *c)
{
    for (int i = 0; i < w->nqueue; i++)
        if (vpt_config_equal(&w->queue[i], c)) {
            memmove(&w->queue[i], &w->queue[i + 1], sizeof *c * (size_t)(w->nqueue - i - 1));
            w->nqueue--;
            return;
        }
}

static int need_scene(const VptEvalWorker *w)
{
    if (!w->spec.scene) return vpt_fail("internal error: the worker has no scene (vpt_eval_worker_set_scene)");
    return 0;
}

static void terminate_strings(VptEvalResult *r)
{
    r->canon[sizeof r->canon - 1] = '\0';
    r->reason[sizeof r->reason - 1] = '\0';
}

int vpt_eval_worker_run(VptEvalWorker *w, const VptConfig *c, VptEvalResult *res)
{
    return vpt_eval_worker_run_fault(w, c, VPT_FAULT_NONE, res);
}

int vpt_eval_worker_run_fault(VptEvalWorker *w, const VptConfig *c, VptFault fault, VptEvalResult *res)
{
    if (!w->spec.test_mode && need_scene(w)) return -1;
    WireRun req;
    memset(&req, 0, sizeof req);
    req.config = *c;
    req.fault = (int32_t)fault;
    double t0 = now_s();
    int killed_before = 0;
    for (int attempt = 0;; attempt++) {
        if (ensure(w)) return -1;
        uint32_t t;
        void *p;
        size_t len;
        int timed_out = 0;
        int rc = exchange(w, MSG_RUN, &req, sizeof req, REPLY_MAX, &t, &p, &len, &timed_out);
        if (rc == 0 && t == MSG_RESULT && len == sizeof(WireResult)) {
            WireResult wr;
            memcpy(&wr, p, sizeof wr);
            free(p);
            *res = wr.r;
            terminate_strings(res);
            if (wr.restart) retire(w);
            dequeue(w, c);
            return 0;
        }
        if (rc == 0) {
            free(p);
            unexpected(w, t, len, "an evaluation");
        }
        /* Lost. Blame the config only if the child had accepted it, and
         * not for a kill from outside (an operator, the OOM killer: no
         * kernel fault ends a worker so) the first time: the config is
         * measured again on a fresh worker. */
        if (w->phase == PHASE_NONE && attempt == 0) continue;
        if (w->killed_from_outside && !killed_before) {
            killed_before = 1;
            if (!w->spec.eval.quiet) {
                char text[VPT_CONFIG_STR_MAX];
                vpt_config_format(c, text, sizeof text);
                fprintf(stderr, "vptune: %s: %s; measured again on a fresh worker\n", text, vpt_errmsg());
            }
            continue;
        }
        init_result(res, c);
        res->status = timed_out ? VPT_STATUS_TIMEOUT : VPT_STATUS_RUNTIME;
        snprintf(res->reason, sizeof res->reason, "%s%s", vpt_errmsg(),
                 killed_before && w->killed_from_outside ? " (the second time for this config)" : "");
        res->measure_s = now_s() - t0;
        dequeue(w, c);
        if (!w->spec.eval.quiet)
            fprintf(stderr, "vptune: %s: %s; a fresh worker takes over\n", res->canon, res->reason);
        return 0;
    }
}

float *vpt_eval_worker_render(VptEvalWorker *w, const VptConfig *c, VptEvalResult *res)
{
    if (need_scene(w) || ensure(w)) return NULL;
    if (!w->have_scene) {
        vpt_fail("internal error: the worker reported no scene");
        return NULL;
    }
    init_result(res, c);
    size_t npix = (size_t)w->params.width * w->params.height;
    if (npix > (SIZE_MAX - sizeof(WireResult)) / (3 * sizeof(float))) {
        vpt_fail("image of %ux%u pixels too large", w->params.width, w->params.height);
        return NULL;
    }
    size_t img_bytes = npix * 3 * sizeof(float);
    uint32_t t;
    void *p;
    size_t len;
    int timed_out;
    if (exchange(w, MSG_RENDER, c, sizeof *c, sizeof(WireResult) + img_bytes + REPLY_MAX, &t, &p, &len, &timed_out))
        return NULL;
    WireResult wr;
    if ((t == MSG_IMAGE && len == sizeof wr + img_bytes) || (t == MSG_RESULT && len == sizeof wr)) {
        memcpy(&wr, p, sizeof wr);
        *res = wr.r;
        terminate_strings(res);
        if (wr.restart) retire(w);
        if (t == MSG_RESULT) {
            free(p);
            vpt_fail("%s: %s", vpt_status_name(res->status), res->reason);
            return NULL;
        }
        float *img = vpt_malloc(img_bytes ? img_bytes : 1);
        if (img) memcpy(img, (char *)p + sizeof wr, img_bytes);
        free(p);
        return img;
    }
    if (t == MSG_ERROR && len == sizeof(WireError)) {
        WireError e;
        take_error(p, &e);
        if (e.restart) retire(w);
        vpt_fail("%s", e.msg);
        return NULL;
    }
    free(p);
    unexpected(w, t, len, "a render");
    return NULL;
}

int vpt_eval_worker_roofline(VptEvalWorker *w, int coherent, VptDensityFormat density, int majorant,
                             VptTimingStats *ms, double *gsteps_per_s, unsigned long long *steps)
{
    if (need_scene(w) || ensure(w)) return -1;
    /* 0 random, 1 bundle, 2 camera tiles; the majorant's cells: the
     * evaluator checks the ranges */
    int32_t coh[3] = {coherent, (int32_t)density, majorant};
    uint32_t t;
    void *p;
    size_t len;
    int timed_out;
    if (exchange(w, MSG_ROOFLINE, coh, sizeof coh, REPLY_MAX, &t, &p, &len, &timed_out)) return -1;
    if (t == MSG_ROOF && len == sizeof(WireRoof)) {
        WireRoof r;
        memcpy(&r, p, sizeof r);
        free(p);
        *ms = r.ms;
        *gsteps_per_s = r.gsteps_per_s;
        *steps = r.steps;
        return 0;
    }
    if (t == MSG_ERROR && len == sizeof(WireError)) {
        WireError e;
        take_error(p, &e);
        if (e.restart) retire(w);
        return vpt_fail("%s", e.msg);
    }
    free(p);
    return unexpected(w, t, len, "the roofline probe");
}

json_t *vpt_eval_worker_result_json(const VptEvalWorker *w, const VptEvalResult *r)
{
    if (!w->have_scene) return NULL;
    return vpt_eval_result_row(&w->prov, &w->params, &w->spec.settings, w->spec.scene, r);
}

int vpt_eval_worker_test(VptEvalWorker *w, VptWorkerTestOp op, int arg, VptWorkerTestEcho *out)
{
    if (!w->spec.test_mode) return vpt_fail("vpt_eval_worker_test needs a test-mode worker");
    if (ensure(w)) return -1;
    WireTest req = {(int32_t)op, (int32_t)arg};
    uint32_t t;
    void *p;
    size_t len;
    int timed_out;
    if (exchange(w, MSG_TEST, &req, sizeof req, REPLY_MAX, &t, &p, &len, &timed_out)) return -1;
    if (t == MSG_ECHO && len == sizeof(VptWorkerTestEcho)) {
        if (out) memcpy(out, p, sizeof *out);
        free(p);
        return 0;
    }
    if (t == MSG_ERROR && len == sizeof(WireError)) {
        WireError e;
        take_error(p, &e);
        return vpt_fail("%s", e.msg);
    }
    free(p);
    return unexpected(w, t, len, "a test request");
}
