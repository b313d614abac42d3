/* A compile worker's life (see compile_worker.h): NVRTC on a thread with a
 * large stack, answering the pool's requests on its socket until the pool
 * closes it, and the faults a test can inject (VPT_COMPILE_INJECT). */
#include "harness/compile_worker.h"

#include "base/error.h"
#include "harness/compile_protocol.h"
#include "harness/nvrtc_compile.h"
#include "harness/wire.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

typedef enum { FAULT_NONE, FAULT_ABORT, FAULT_SEGV, FAULT_KILL, FAULT_EXIT, FAULT_HANG, FAULT_GARBAGE } Fault;

typedef struct {
    int fd;
    Fault fault;
    const char *fault_text; /* NULL: every request */
} Worker;

static _Noreturn void worker_die(const char *why)
{
    fprintf(stderr, "vptune compile worker %d: %s\n", (int)getpid(), why);
    _exit(2);
}

static void worker_parse_inject(Worker *w)
{
    const char *v = getenv(VPT_COMPILE_INJECT_ENV);
    if (!v || !*v) return;
    static const struct { const char *name; Fault f; } faults[] = {
        {"abort", FAULT_ABORT}, {"segv", FAULT_SEGV}, {"kill", FAULT_KILL},
        {"exit", FAULT_EXIT},   {"hang", FAULT_HANG}, {"garbage", FAULT_GARBAGE},
    };
    const char *at = strchr(v, '@');
    size_t n = at ? (size_t)(at - v) : strlen(v);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        if (strlen(faults[i].name) == n && !strncmp(v, faults[i].name, n)) {
            w->fault = faults[i].f;
            w->fault_text = at ? at + 1 : NULL;
            return;
        }
    fprintf(stderr, "vptune compile worker %d: ignoring %s=%s (abort, segv, kill, exit, hang or garbage[@TEXT])\n",
            (int)getpid(), VPT_COMPILE_INJECT_ENV, v);
}

static void worker_inject(const Worker *w, const VptCompileRequest *req)
{
    if (w->fault == FAULT_NONE || (w->fault_text && !strstr(req->source, w->fault_text))) return;
    switch (w->fault) {
    case FAULT_ABORT:
        signal(SIGABRT, SIG_DFL);
        abort();
    case FAULT_SEGV:
        /* The default action, not a sanitizer's report: as an NVRTC crash
         * looks to the pool. */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        _exit(1);
    case FAULT_KILL:
        raise(SIGKILL);
        _exit(1);
    case FAULT_EXIT:
        _exit(3);
    case FAULT_HANG:
        for (;;) pause();
    case FAULT_GARBAGE: {
        static const char junk[] = "this is no compile result, but long enough to look like a message header";
        if (write(w->fd, junk, sizeof junk) < 0) _exit(1);
        for (;;) pause();
    }
    case FAULT_NONE:
        break;
    }
}

static void worker_reply(Worker *w, int rc, double seconds, const char *msg, const VptCompileResult *res)
{
    VptCompileBuf b = {0};
    if (vpt_compile_result_encode(rc, seconds, msg, res, &b)) worker_die(vpt_errmsg());
    if (vpt_wire_send(w->fd, VPT_COMPILE_MSG_RESULT, b.data, b.len, NULL, 0, -1)) _exit(1); /* the pool is gone */
    free(b.data);
}

static void worker_compile(Worker *w, const void *payload, size_t len)
{
    VptCompileRequest req;
    VptCompileResult res;
    memset(&res, 0, sizeof res);
    if (vpt_compile_request_decode(payload, len, &req)) {
        worker_reply(w, -1, 0.0, "compile worker: malformed request", &res);
        return;
    }
    worker_inject(w, &req);
    vpt_error_clear();
    int rc = vpt_nvrtc_compile(&req, &res);
    worker_reply(w, rc ? -1 : 0, res.seconds, rc ? vpt_errmsg() : "", &res);
    vpt_compile_result_free(&res);
    vpt_compile_request_free(&req);
}

static void *worker_loop(void *arg)
{
    Worker *w = arg;
    VptCompileHello hello;
    memset(&hello, 0, sizeof hello);
    hello.protocol = VPT_COMPILE_PROTOCOL;
    hello.pid = (int32_t)getpid();
    snprintf(hello.nvrtc, sizeof hello.nvrtc, "%s", vpt_nvrtc_version());
    if (vpt_wire_send(w->fd, VPT_COMPILE_MSG_HELLO, &hello, sizeof hello, NULL, 0, -1)) _exit(1);
    for (;;) {
        uint32_t type;
        void *p;
        size_t len;
        VptWireStatus st = vpt_wire_recv(w->fd, VPT_COMPILE_REQUEST_MAX, -1, &type, &p, &len);
        if (st == VPT_WIRE_EOF) _exit(0);
        if (st != VPT_WIRE_OK) worker_die(vpt_errmsg());
        if (type == VPT_COMPILE_MSG_STOP) _exit(0);
        if (type != VPT_COMPILE_MSG_COMPILE) worker_die("unknown request");
        worker_compile(w, p, len);
        free(p);
    }
}

/* A worker's life: NVRTC on a thread with a large stack, answering on
 * VPT_COMPILE_WORKER_FD until the pool closes it. Never returns, never runs main. */
_Noreturn void vpt_compile_worker_main(long parent)
{
    if (VPT_SYS_TRY(prctl, PR_SET_PDEATHSIG, SIGKILL)) worker_die(vpt_errmsg());
    if ((long)getppid() != parent) _exit(1); /* the pool's process died before the prctl */
    signal(SIGPIPE, SIG_IGN);
    static Worker w;
    w.fd = VPT_COMPILE_WORKER_FD;
    worker_parse_inject(&w);
    pthread_attr_t attr;
    pthread_t t;
    if (VPT_ERRNO_TRY(pthread_attr_init, &attr) ||
        VPT_ERRNO_TRY(pthread_attr_setstacksize, &attr, VPT_COMPILE_WORKER_STACK_BYTES) ||
        VPT_ERRNO_TRY(pthread_create, &t, &attr, worker_loop, &w) || VPT_ERRNO_TRY(pthread_join, t, NULL))
        worker_die(vpt_errmsg());
    _exit(0);
}
