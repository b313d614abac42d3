/* The fault boundary (base/isolate.h) on its own, with child functions that
 * misbehave as third-party parsers do: an abort after printing an assertion,
 * an allocation beyond the memory limit, a hang past the time limit, a reply
 * larger than allowed, a segfault; each becomes an error naming the file and
 * the limit, and the calling process goes on (its memory untouched by what
 * the child did). A well-behaved child's head and body arrive intact. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "base/isolate.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int touched; /* set by the children: the parent's copy must stay 0 */

typedef struct {
    int what;
    size_t n;
} Job;

enum { REPLY, ABORT, ALLOCATE, HANG, SEGFAULT, FAIL, EXIT };

static int child_fn(void *ctx, VptIsolateReply *reply, char *err, size_t err_size)
{
    Job *j = ctx;
    static int head[4] = {1, 2, 3, 4};
    touched = 1;
    switch (j->what) {
    case REPLY: {
        unsigned char *b = malloc(j->n);
        for (size_t i = 0; i < j->n; i++) b[i] = (unsigned char)(i * 7 + 3);
        reply->head = head;
        reply->head_size = sizeof head;
        reply->body = b;
        reply->body_size = j->n;
        return 0;
    }
    case ABORT:
        fprintf(stderr, "parser.cxx:385: Reader: Assertion `is.good()' failed.\n");
        abort();
    case ALLOCATE: {
        /* what a parser does with a length field it believes */
        volatile char *p = malloc(j->n);
        if (!p) {
            snprintf(err, err_size, "fuzz.bin: std::bad_alloc");
            return -1;
        }
        memset((char *)p, 1, j->n);
        snprintf(err, err_size, "fuzz.bin: allocated %zu bytes", j->n);
        return -1;
    }
    case HANG:
        for (;;) pause();
    case SEGFAULT:
        raise(SIGSEGV);
        return -1;
    case FAIL: snprintf(err, err_size, "fuzz.bin: grid 3 is not a float grid"); return -1;
    default: _exit(3);
    }
}

static int run(int what, size_t n, const VptIsolateLimits *lim, unsigned char **body, size_t *size, int head[4])
{
    Job j = {what, n};
    int h[4];
    return vpt_isolate_run("fuzz.bin", "TestLib", lim, child_fn, &j, head ? head : h, sizeof h, (size_t)1 << 24,
                           body, size);
}

TEST(isolate_reply_crosses_intact)
{
    VptIsolateLimits lim = {(size_t)256 << 20, 30};
    const size_t sizes[] = {0, 1, 4095, 65536 + 17, (size_t)3 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        unsigned char *b;
        size_t n;
        int head[4] = {0};
        REQUIRE_MSG(run(REPLY, sizes[k], &lim, &b, &n, head) == 0, "%s", vpt_errmsg());
        CHECK_EQ_INT(n, sizes[k]);
        CHECK(head[0] == 1 && head[3] == 4);
        int bad = 0;
        for (size_t i = 0; i < n; i++) bad += b[i] != (unsigned char)(i * 7 + 3);
        CHECK_EQ_INT(bad, 0);
        free(b);
    }
    CHECK_EQ_INT(touched, 0);
}

TEST(isolate_abort_is_an_error_with_the_assertion)
{
    VptIsolateLimits lim = {(size_t)256 << 20, 30};
    unsigned char *b;
    size_t n;
    CHECK(run(ABORT, 0, &lim, &b, &n, NULL) == -1);
    const char *m = vpt_errmsg();
    CHECK_STR_CONTAINS(m, "fuzz.bin: TestLib crashed (signal 6");
    CHECK_STR_CONTAINS(m, "Assertion `is.good()' failed");
    CHECK_STR_CONTAINS(m, "256.0 MiB");
    CHECK(b == NULL && n == 0);
    CHECK(run(SEGFAULT, 0, &lim, &b, &n, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "signal 11");
    CHECK(run(EXIT, 0, &lim, &b, &n, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "exited (status 3) without a complete reply");
    CHECK(run(FAIL, 0, &lim, &b, &n, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "fuzz.bin: grid 3 is not a float grid");
    /* the caller goes on, its memory as it was */
    CHECK_EQ_INT(touched, 0);
    CHECK(run(REPLY, 10, &lim, &b, &n, NULL) == 0);
    free(b);
}

/* An allocation of 1 GiB under a 64 MiB limit fails in the child at once
 * (it is refused, not paid for); one within the limit succeeds. */
TEST(isolate_memory_limit_refuses_the_allocation)
{
#if defined(__SANITIZE_ADDRESS__)
    SKIP("under ASan the child's allocator aborts on the refused allocation before the boundary can name the limit (the load is still refused)");
#endif
    VptIsolateLimits lim = {(size_t)64 << 20, 30};
    unsigned char *b;
    size_t n;
    CHECK(run(ALLOCATE, (size_t)1 << 30, &lim, &b, &n, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "fuzz.bin: TestLib ran out of memory under the parser limit of 64.0 MiB");
    CHECK_STR_CONTAINS(vpt_errmsg(), "VPT_PARSER_MEMORY");
    CHECK(run(ALLOCATE, (size_t)16 << 20, &lim, &b, &n, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "allocated 16777216 bytes");
}

TEST(isolate_time_limit_stops_a_hang)
{
    VptIsolateLimits lim = {(size_t)64 << 20, 0.3};
    unsigned char *b;
    size_t n;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(run(HANG, 0, &lim, &b, &n, NULL) == -1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "fuzz.bin: TestLib took longer than the parser time limit of 0.3 s");
    const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK_MSG(s < 5, "the hang was stopped after %.1f s", s);
}

TEST(isolate_reply_beyond_the_cap_is_refused)
{
    VptIsolateLimits lim = {(size_t)256 << 20, 30};
    unsigned char *b;
    size_t n;
    CHECK(run(REPLY, ((size_t)1 << 24) + 1, &lim, &b, &n, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "16777217 bytes is more than the 16777216 allowed");
    CHECK(b == NULL);
}

TEST(isolate_limits_from_the_environment)
{
    VptIsolateLimits lim;
    unsetenv("VPT_PARSER_MEMORY");
    unsetenv("VPT_PARSER_SECONDS");
    REQUIRE(vpt_isolate_limits(100, &lim) == 0);
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const size_t phys = (size_t)pages * (size_t)page;
    CHECK_EQ_INT(lim.memory, phys < ((size_t)2 << 30) ? phys : ((size_t)2 << 30));
    CHECK_NEAR(lim.seconds, 600, 0);
    REQUIRE(vpt_isolate_limits((uint64_t)200 << 20, &lim) == 0);
    CHECK_EQ_INT(lim.memory, phys < ((size_t)3200 << 20) ? phys : ((size_t)3200 << 20));
    setenv("VPT_PARSER_MEMORY", "3G", 1);
    setenv("VPT_PARSER_SECONDS", "2.5", 1);
    REQUIRE(vpt_isolate_limits(100, &lim) == 0);
    CHECK_EQ_INT(lim.memory, (size_t)3 << 30);
    CHECK_NEAR(lim.seconds, 2.5, 0);
    setenv("VPT_PARSER_MEMORY", "lots", 1);
    CHECK(vpt_isolate_limits(100, &lim) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "VPT_PARSER_MEMORY");
    setenv("VPT_PARSER_MEMORY", "12", 1);
    CHECK(vpt_isolate_limits(100, &lim) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "at least 1M");
    setenv("VPT_PARSER_MEMORY", "2G", 1);
    setenv("VPT_PARSER_SECONDS", "-1", 1);
    CHECK(vpt_isolate_limits(100, &lim) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "VPT_PARSER_SECONDS");
    unsetenv("VPT_PARSER_MEMORY");
    unsetenv("VPT_PARSER_SECONDS");
}

/* A worker: requests cross as bytes, many per process; an abort ends it
 * with the message, and the next call starts a fresh one. */
static int serve(const void *req, size_t n, VptIsolateReply *reply, char *err, size_t err_size)
{
    static int head[4];
    const unsigned char *p = req;
    if (n && p[0] == 'A') abort();
    if (n && p[0] == 'F') return snprintf(err, err_size, "w.bin: refused"), -1;
    head[0] = (int)getpid();
    head[1] = (int)n;
    unsigned char *b = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(p[i] + 1);
    reply->head = head;
    reply->head_size = sizeof head;
    reply->body = b;
    reply->body_size = n;
    reply->owned = b;
    return 0;
}

TEST(isolate_worker_serves_many_and_survives_a_crash)
{
    VptIsolateLimits lim = {(size_t)256 << 20, 30};
    VptIsolateWorker *w = NULL;
    int pid = 0;
    for (int i = 0; i < 50; i++) {
        unsigned char req[100], *b;
        size_t n;
        int head[4];
        for (int k = 0; k < 100; k++) req[k] = (unsigned char)(i + k);
        req[0] = 'x';
        REQUIRE_MSG(vpt_isolate_worker_call(&w, "w.bin", "TestLib", &lim, serve, req, (size_t)i, head, sizeof head,
                                            1000, &b, &n) == 0,
                    "%s", vpt_errmsg());
        CHECK_EQ_INT(n, i);
        CHECK_EQ_INT(head[1], i);
        if (i == 0) pid = head[0];
        CHECK_EQ_INT(head[0], pid); /* one process served them all */
        int bad = 0;
        for (int k = 0; k < i; k++) bad += b[k] != (unsigned char)(req[k] + 1);
        CHECK_EQ_INT(bad, 0);
        free(b);
    }
    unsigned char *b;
    size_t n;
    int head[4];
    CHECK(vpt_isolate_worker_call(&w, "w.bin", "TestLib", &lim, serve, "F", 1, head, sizeof head, 1000, &b, &n) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "w.bin: refused");
    CHECK(w != NULL);
    CHECK(vpt_isolate_worker_call(&w, "w.bin", "TestLib", &lim, serve, "A", 1, head, sizeof head, 1000, &b, &n) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "w.bin: TestLib crashed (signal 6");
    CHECK(w == NULL);
    REQUIRE_MSG(vpt_isolate_worker_call(&w, "w.bin", "TestLib", &lim, serve, "xy", 2, head, sizeof head, 1000, &b,
                                        &n) == 0,
                "%s", vpt_errmsg());
    CHECK(head[0] != pid);
    free(b);
    vpt_isolate_worker_stop(&w);
    CHECK(w == NULL);
}
