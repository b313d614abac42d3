/* A fault boundary for third-party parsers: see base/isolate.h. */
#include "base/isolate.h"

#include "base/error.h"
#include "base/memory.h"
#include "base/parse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MEMORY ((size_t)2 << 30)
#define MEMORY_PER_INPUT_BYTE 16
#define DEFAULT_SECONDS 600.0
#define REPLY_MAGIC 0x7670746973306c61ULL
/* The child's stderr kept for the message: its last bytes. */
#define TAIL 2048
#define ERR_MAX 2048

/* "2G", "512M", "1048576": bytes, with a binary suffix. */
static int parse_bytes(const char *var, const char *s, size_t *out)
{
    char num[64];
    size_t n = strlen(s);
    unsigned shift = 0;
    if (n && strchr("kKmMgGtT", s[n - 1])) {
        shift = (unsigned)(strchr("kKmMgGtT", s[n - 1]) - "kKmMgGtT") / 2 * 10 + 10;
        n--;
    }
    if (n == 0 || n >= sizeof num) return vpt_fail("%s='%s': expected a size in bytes (e.g. 2G, 512M)", var, s);
    memcpy(num, s, n);
    num[n] = '\0';
    uint64_t v;
    if (vpt_parse_u64(num, UINT64_MAX >> shift, var, &v)) return -1;
    if ((v << shift) < ((uint64_t)1 << 20) || (v << shift) > SIZE_MAX)
        return vpt_fail("%s='%s': the parser memory limit must be at least 1M", var, s);
    *out = (size_t)(v << shift);
    return 0;
}

int vpt_isolate_limits(uint64_t input_bytes, VptIsolateLimits *out)
{
    size_t mem = DEFAULT_MEMORY;
    if (input_bytes > (uint64_t)(SIZE_MAX / MEMORY_PER_INPUT_BYTE)) mem = SIZE_MAX;
    else if (input_bytes * MEMORY_PER_INPUT_BYTE > mem) mem = (size_t)input_bytes * MEMORY_PER_INPUT_BYTE;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && (uint64_t)pages * (uint64_t)page < mem) mem = (size_t)pages * (size_t)page;
    out->memory = mem;
    out->seconds = DEFAULT_SECONDS;
    const char *e = getenv("VPT_PARSER_MEMORY");
    if (e && *e && parse_bytes("VPT_PARSER_MEMORY", e, &out->memory)) return -1;
    e = getenv("VPT_PARSER_SECONDS");
    if (e && *e && vpt_parse_double(e, 0.01, 1e7, "VPT_PARSER_SECONDS", &out->seconds)) return -1;
    return 0;
}

/* ---------- the child ---------- */

/* In a sanitizer build (the fuzz targets), the sanitizer runtime calls back
 * into libFuzzer when it reports an error, and libFuzzer then records its
 * current input as a crash: a child the boundary exists to let die must not
 * do that in the parent's name. Weak: absent (NULL) in other builds. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/* Moves all n bytes: read (way 'r'), write ('w') or send without SIGPIPE
 * ('s', on the workers' request socket); -1 at an end or an error. */
static int move_all(int fd, const void *buf, size_t n, char way)
{
    unsigned char *p = (unsigned char *)buf;
    while (n) {
        const ssize_t k = way == 'r' ? read(fd, p, n) : way == 'w' ? write(fd, p, n) : send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t n) { return move_all(fd, buf, n, 'w'); }

/* The private writable memory this process holds (VmData), what
 * RLIMIT_DATA counts; 0 when /proc cannot tell. */
static size_t vm_data(void)
{
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nVmData:");
    return p ? (size_t)strtoull(p + 8, NULL, 10) * 1024 : 0;
}

typedef struct {
    uint64_t magic;
    int64_t status;    /* 0: head and body follow; -1: an error text of body_size bytes */
    uint64_t head_size, body_size;
} Header;

/* The child's setup: output to the parent's pipe, the limits, default
 * signal handling; 0, or -1 with the reason in err. */
static int child_setup(int err_fd, const VptIsolateLimits *lim, pid_t parent, char *err, size_t err_size)
{
    dup2(err_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(NULL);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    const int defaults[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGCHLD};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) signal(defaults[i], SIG_DFL);
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    const size_t base = vm_data();
    if (!base) return snprintf(err, err_size, "cannot read /proc/self/status to set the memory limit"), -1;
    struct rlimit data;
    if (getrlimit(RLIMIT_DATA, &data) == 0) {
        rlim_t want = base > (size_t)RLIM_INFINITY - lim->memory ? RLIM_INFINITY : (rlim_t)(base + lim->memory);
        if (data.rlim_max == RLIM_INFINITY || want < data.rlim_max) data.rlim_cur = want;
        else data.rlim_cur = data.rlim_max;
        setrlimit(RLIMIT_DATA, &data);
    }
    return 0;
}

/* Sends one reply: the head and body of r, or (status -1) the text err. */
static int child_send(int out, int status, const VptIsolateReply *r, char *err, size_t err_size)
{
    Header h = {REPLY_MAGIC, status ? -1 : 0, 0, 0};
    if (status) {
        err[err_size - 1] = '\0';
        h.body_size = strlen(err);
        return write_all(out, &h, sizeof h) == 0 && write_all(out, err, h.body_size) == 0 ? 0 : -1;
    }
    h.head_size = r->head_size;
    h.body_size = r->body_size;
    return write_all(out, &h, sizeof h) == 0 && write_all(out, r->head, r->head_size) == 0 &&
                   write_all(out, r->body, r->body_size) == 0
               ? 0
               : -1;
}

_Noreturn static void child(int out, int err_fd, const VptIsolateLimits *lim, VptIsolateFn fn, void *ctx,
                            pid_t parent)
{
    char err[ERR_MAX];
    err[0] = '\0';
    VptIsolateReply r;
    memset(&r, 0, sizeof r);
    int status = child_setup(err_fd, lim, parent, err, sizeof err);
    if (status == 0) status = fn(ctx, &r, err, sizeof err);
    _exit(child_send(out, status, &r, err, sizeof err) == 0 ? 0 : 124);
}

#define REQUEST_MAGIC 0x7670747265713031ULL

static int read_full(int fd, void *buf, size_t n) { return move_all(fd, buf, n, 'r'); }

/* A worker: serves requests from `in` until it closes. */
_Noreturn static void worker(int in, int out, int err_fd, const VptIsolateLimits *lim, VptIsolateServeFn fn,
                             pid_t parent)
{
    char err[ERR_MAX];
    err[0] = '\0';
    VptIsolateReply none;
    memset(&none, 0, sizeof none);
    if (child_setup(err_fd, lim, parent, err, sizeof err)) {
        uint64_t hdr[2];
        if (read_full(in, hdr, sizeof hdr) == 0) child_send(out, -1, &none, err, sizeof err);
        _exit(124);
    }
    for (;;) {
        uint64_t hdr[2];
        if (read_full(in, hdr, sizeof hdr)) _exit(0);
        unsigned char *req = hdr[0] == REQUEST_MAGIC ? malloc(hdr[1] ? hdr[1] : 1) : NULL;
        if (!req || read_full(in, req, hdr[1])) _exit(124);
        VptIsolateReply r;
        memset(&r, 0, sizeof r);
        err[0] = '\0';
        const int status = fn(req, hdr[1], &r, err, sizeof err);
        free(req);
        if (child_send(out, status, &r, err, sizeof err)) _exit(124);
        free(r.owned);
    }
}

/* ---------- the parent ---------- */

typedef struct {
    Header h;
    size_t got;                  /* bytes of the reply read so far */
    unsigned char *head, *body;  /* where the head and the body go */
    size_t head_size, max_body;
    char err[ERR_MAX + 1];
    int bad;                     /* 1: a head of the wrong size, 2: a body beyond max_body */
    char tail[TAIL];             /* the child's stderr, its last bytes */
    size_t tail_len;
} Reader;

/* Takes n bytes of the reply stream; -1 when the reply is not acceptable. */
static int take(Reader *rd, const unsigned char *p, size_t n)
{
    while (n) {
        if (rd->got < sizeof rd->h) {
            size_t k = sizeof rd->h - rd->got < n ? sizeof rd->h - rd->got : n;
            memcpy((unsigned char *)&rd->h + rd->got, p, k);
            rd->got += k, p += k, n -= k;
            if (rd->got < sizeof rd->h) continue;
            if (rd->h.magic != REPLY_MAGIC) return rd->bad = 3, -1;
            if (rd->h.status) {
                if (rd->h.head_size || rd->h.body_size > ERR_MAX) return rd->bad = 3, -1;
            } else {
                if (rd->h.head_size != rd->head_size) return rd->bad = 1, -1;
                if (rd->h.body_size > rd->max_body) return rd->bad = 2, -1;
                if (rd->h.body_size && !(rd->body = malloc(rd->h.body_size)))
                    return rd->bad = 4, -1;
            }
            continue;
        }
        const size_t at = rd->got - sizeof rd->h, total = rd->h.head_size + rd->h.body_size;
        if (at >= total) return rd->bad = 3, -1; /* more than announced */
        size_t k = total - at < n ? total - at : n;
        for (size_t i = 0; i < k; i++) {
            const size_t j = at + i;
            if (rd->h.status) rd->err[j] = (char)p[i];
            else if (j < rd->h.head_size) rd->head[j] = p[i];
            else break;
        }
        if (!rd->h.status && at + k > rd->h.head_size) {
            const size_t from = at > rd->h.head_size ? at - rd->h.head_size : 0;
            const size_t skip = at < rd->h.head_size ? rd->h.head_size - at : 0;
            memcpy(rd->body + from, p + skip, k - skip);
        }
        rd->got += k, p += k, n -= k;
    }
    return 0;
}

static void keep_tail(Reader *rd, const char *p, size_t n)
{
    if (n >= TAIL) {
        memcpy(rd->tail, p + n - TAIL, TAIL);
        rd->tail_len = TAIL;
        return;
    }
    if (rd->tail_len + n > TAIL) {
        const size_t drop = rd->tail_len + n - TAIL;
        memmove(rd->tail, rd->tail + drop, rd->tail_len - drop);
        rd->tail_len -= drop;
    }
    memcpy(rd->tail + rd->tail_len, p, n);
    rd->tail_len += n;
}

/* The child's last line of output, printable, for a message ("" if none). */
static const char *last_words(const Reader *rd, char *out, size_t outsz)
{
    size_t end = rd->tail_len;
    while (end && isspace((unsigned char)rd->tail[end - 1])) end--;
    size_t start = end;
    while (start && rd->tail[start - 1] != '\n') start--;
    if (end - start > 300) start = end - 300;
    size_t k = 0;
    for (size_t i = start; i < end && k + 1 < outsz; i++)
        out[k++] = isprint((unsigned char)rd->tail[i]) ? rd->tail[i] : '?';
    out[k] = '\0';
    return out;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int looks_like_memory(const char *s)
{
    return strstr(s, "bad_alloc") || strstr(s, "out of memory") || strstr(s, "Cannot allocate memory") ||
           strstr(s, "memory exhausted");
}

/* Reads the child's reply into rd and its output into rd's tail, until the
 * reply is complete (worker: the pipes stay open) or both pipes close
 * (one-shot), the time limit passes (*timed_out) or the reply is refused
 * (rd->bad). 0 when the reply is complete. */
static int await_reply(int out_fd, int err_fd, int until_eof, double seconds, Reader *rd, int *timed_out)
{
    struct pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    const double deadline = now() + seconds;
    char chunk[1 << 16];
    *timed_out = 0;
    for (;;) {
        const int complete = rd->got >= sizeof rd->h && rd->got == sizeof rd->h + rd->h.head_size + rd->h.body_size;
        if (rd->bad || (complete && !until_eof) || (fds[0].fd < 0 && fds[1].fd < 0)) return complete ? 0 : -1;
        if (fds[0].fd < 0 && !until_eof) return -1; /* the worker died: its output is read by the caller's wait */
        const double left = deadline - now();
        if (left <= 0) return *timed_out = 1, -1;
        const int ms = left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
        const int n = poll(fds, 2, ms);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return rd->bad = 3, -1;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            const ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) fds[i].fd = -1; /* the caller closes it */
            else if (i == 1) keep_tail(rd, chunk, (size_t)got);
            else if (!rd->bad) take(rd, (const unsigned char *)chunk, (size_t)got);
        }
    }
}

/* Drains what a dead child printed (its pipe is at EOF once it is reaped). */
static void drain_tail(int err_fd, Reader *rd)
{
    char chunk[4096];
    struct pollfd p = {err_fd, POLLIN, 0};
    while (poll(&p, 1, 0) > 0) {
        const ssize_t got = read(err_fd, chunk, sizeof chunk);
        if (got <= 0) break;
        keep_tail(rd, chunk, (size_t)got);
    }
}

/* The outcome as the caller's result: 0, or -1 with the message. st: the
 * child's wait status (have_status 0: still running, a worker). */
static int verdict(const char *name, const char *parser, const VptIsolateLimits *lim, Reader *rd, int timed_out,
                   int have_status, int st)
{
    char words[320], mem[32];
    last_words(rd, words, sizeof words);
    vpt_memory_text((double)lim->memory, mem);
    const int complete = rd->got >= sizeof rd->h && rd->got == sizeof rd->h + rd->h.head_size + rd->h.body_size;
    if (timed_out)
        return vpt_fail("%s: %s took longer than the parser time limit of %g s (VPT_PARSER_SECONDS) and was stopped; "
                        "nothing was loaded",
                        name, parser, lim->seconds);
    if (rd->bad == 1)
        return vpt_fail("%s: %s's reply has a head of %llu bytes, not %zu (a mismatched shim?)", name, parser,
                        (unsigned long long)rd->h.head_size, rd->head_size);
    if (rd->bad == 2)
        return vpt_fail("%s: %s's result of %llu bytes is more than the %zu allowed", name, parser,
                        (unsigned long long)rd->h.body_size, rd->max_body);
    if (rd->bad == 4)
        return vpt_fail("%s: out of memory for %s's result of %llu bytes", name, parser,
                        (unsigned long long)rd->h.body_size);
    if (rd->bad == 3) return vpt_fail("%s: %s's reply is malformed", name, parser);
    if (have_status && WIFSIGNALED(st)) {
        const int sig = WTERMSIG(st);
        return vpt_fail("%s: %s crashed (signal %d, %s) reading the file, which was not loaded (the parser runs in a "
                        "process of its own under a memory limit of %s, VPT_PARSER_MEMORY)%s%s",
                        name, parser, sig, strsignal(sig), mem, *words ? "; it said: " : "", words);
    }
    if (complete && rd->h.status) {
        rd->err[rd->h.body_size] = '\0';
        if (looks_like_memory(rd->err))
            return vpt_fail("%s: %s ran out of memory under the parser limit of %s (VPT_PARSER_MEMORY raises it): %s",
                            name, parser, mem, rd->err);
        return vpt_fail("%s", rd->err);
    }
    if (!complete || (have_status && (!WIFEXITED(st) || WEXITSTATUS(st) != 0)))
        return vpt_fail("%s: %s exited (status %d) without a complete reply; the file was not loaded%s%s", name,
                        parser, have_status && WIFEXITED(st) ? WEXITSTATUS(st) : -1, *words ? "; it said: " : "",
                        words);
    return 0;
}

static void reader_init(Reader *rd, void *head, size_t head_size, size_t max_body)
{
    memset(rd, 0, sizeof *rd);
    rd->head = head;
    rd->head_size = head_size;
    rd->max_body = max_body;
}

/* Hands the body to the caller on success, frees it otherwise. */
static int deliver(int rc, Reader *rd, unsigned char **body, size_t *body_size)
{
    if (rc == 0) {
        *body = rd->body;
        *body_size = rd->h.body_size;
    } else {
        free(rd->body);
    }
    return rc;
}

static void reap(pid_t pid, int *st)
{
    while (waitpid(pid, st, 0) < 0 && errno == EINTR) {}
}

int vpt_isolate_run(const char *name, const char *parser, const VptIsolateLimits *lim, VptIsolateFn fn, void *ctx,
                    void *head, size_t head_size, size_t max_body, unsigned char **body, size_t *body_size)
{
    *body = NULL;
    *body_size = 0;
    int out[2], err[2];
    if (VPT_SYS_TRY(pipe2, out, O_CLOEXEC)) return -1;
    if (VPT_SYS_TRY(pipe2, err, O_CLOEXEC)) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    fcntl(out[0], F_SETPIPE_SZ, 1 << 20); /* fewer wake-ups for a large body; the default works too */
    /* Buffered output would be written twice if the child flushed it. */
    fflush(NULL);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        close(out[0]);
        close(err[0]);
        child(out[1], err[1], lim, fn, ctx, parent);
    }
    const int fork_errno = errno;
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
        close(out[0]);
        close(err[0]);
        errno = fork_errno;
        return VPT_SYS_FAIL("fork()");
    }
    Reader rd;
    reader_init(&rd, head, head_size, max_body);
    int timed_out;
    await_reply(out[0], err[0], 1, lim->seconds, &rd, &timed_out);
    if (timed_out || rd.bad) kill(pid, SIGKILL);
    close(out[0]);
    close(err[0]);
    int st = 0;
    reap(pid, &st);
    return deliver(verdict(name, parser, lim, &rd, timed_out, 1, st), &rd, body, body_size);
}

/* ---------- workers ---------- */

struct VptIsolateWorker {
    pid_t pid;
    int req, out, err;
    unsigned served;
    VptIsolateServeFn fn;
    VptIsolateLimits lim;
};

#define WORKER_REQUESTS 1000

void vpt_isolate_worker_stop(VptIsolateWorker **w)
{
    if (!*w) return;
    close((*w)->req); /* the worker ends at the end of its requests */
    close((*w)->out);
    kill((*w)->pid, SIGKILL);
    int st;
    reap((*w)->pid, &st);
    close((*w)->err);
    free(*w);
    *w = NULL;
}

static VptIsolateWorker *worker_start(const VptIsolateLimits *lim, VptIsolateServeFn fn)
{
    int req[2], out[2], err[2];
    if (VPT_SYS_TRY(socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, req)) return NULL;
    if (VPT_SYS_TRY(pipe2, out, O_CLOEXEC)) {
        close(req[0]), close(req[1]);
        return NULL;
    }
    if (VPT_SYS_TRY(pipe2, err, O_CLOEXEC)) {
        close(req[0]), close(req[1]), close(out[0]), close(out[1]);
        return NULL;
    }
    VptIsolateWorker *w = vpt_calloc(1, sizeof *w);
    if (!w) {
        close(req[0]), close(req[1]), close(out[0]), close(out[1]), close(err[0]), close(err[1]);
        return NULL;
    }
    fflush(NULL);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
        close(req[0]), close(out[0]), close(err[0]);
        worker(req[1], out[1], err[1], lim, fn, parent);
    }
    const int fork_errno = errno;
    close(req[1]), close(out[1]), close(err[1]);
    if (pid < 0) {
        close(req[0]), close(out[0]), close(err[0]);
        free(w);
        errno = fork_errno;
        VPT_SYS_FAIL("fork()");
        return NULL;
    }
    w->pid = pid;
    w->req = req[0];
    w->out = out[0];
    w->err = err[0];
    w->fn = fn;
    w->lim = *lim;
    return w;
}

static int send_all(int fd, const void *buf, size_t n) { return move_all(fd, buf, n, 's'); }

int vpt_isolate_worker_call(VptIsolateWorker **w, const char *name, const char *parser, const VptIsolateLimits *lim,
                            VptIsolateServeFn fn, const void *req, size_t req_size, void *head, size_t head_size,
                            size_t max_body, unsigned char **body, size_t *body_size)
{
    *body = NULL;
    *body_size = 0;
    if (*w && ((*w)->served >= WORKER_REQUESTS || (*w)->fn != fn || (*w)->lim.memory != lim->memory))
        vpt_isolate_worker_stop(w);
    if (!*w && !(*w = worker_start(lim, fn))) return -1;
    VptIsolateWorker *k = *w;
    k->served++;
    Reader rd;
    reader_init(&rd, head, head_size, max_body);
    const uint64_t hdr[2] = {REQUEST_MAGIC, req_size};
    int timed_out = 0, rc = -1;
    /* a worker that died before reading the request: its end is closed */
    if (send_all(k->req, hdr, sizeof hdr) == 0 && send_all(k->req, req, req_size) == 0)
        rc = await_reply(k->out, k->err, 0, lim->seconds, &rd, &timed_out);
    if (rc == 0 && !rd.bad) return deliver(verdict(name, parser, lim, &rd, 0, 0, 0), &rd, body, body_size);
    /* the worker is gone or of no further use: its status says why */
    if (timed_out || rd.bad) kill(k->pid, SIGKILL);
    close(k->req);
    close(k->out);
    int st = 0;
    reap(k->pid, &st);
    drain_tail(k->err, &rd);
    close(k->err);
    free(k);
    *w = NULL;
    return deliver(verdict(name, parser, lim, &rd, timed_out, 1, st), &rd, body, body_size);
}
