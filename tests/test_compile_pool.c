/* The compile pool's worker processes (harness/compile_pool.h), no GPU
 * needed: real kernel configs compiled in two workers give the bytes an
 * in-process compile gives, cache entries included; NVRTC errors stay
 * compile failures with their log; a worker that crashes, is killed, exits,
 * hangs or talks garbage fails only its own compile, with the reason; an
 * idle worker found dead is replaced; a pool that cannot start workers
 * compiles in-process; destroy leaves no process, zombie or descriptor. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "base/file.h"
#include "codegen/config.h"
#include "codegen/kernel_source.h"
#include "harness/compile_pool.h"
#include "harness/cubin_cache.h"
#include "harness/nvrtc_compile.h"
#include "harness/variant.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 when this test process has no child left, not even a zombie. */
static int no_children(void)
{
    int st;
    return waitpid(-1, &st, WNOHANG) == -1 && errno == ECHILD;
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory's own */
}

static const char *dir_of(const char *name)
{
    static char dir[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(dir[k], sizeof dir[k], "%s/%s", vpt_test_tmpdir(), name);
    return dir[k];
}

/* A tiny kernel named after i; `marker` ends up in its source. */
static VptCompileRequest tiny(int i, const char *marker, char *src, size_t n, char *name, size_t nn)
{
    snprintf(name, nn, "tiny_%d.cu", i);
    snprintf(src, n, "// %s\nextern \"C\" __global__ void tiny_%d(float *a) { a[threadIdx.x] *= %d.0f; }\n", marker, i,
             i + 2);
    VptCompileRequest r = {.name = name, .source = src, .arch_major = 9};
    return r;
}

/* The log without what varies between any two compiles of one source:
 * ptxas' "Compile time = 67.801 ms" (caller frees). */
static char *timeless(const char *log, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    static const char tag[] = "Compile time = ";
    const char *p = log, *end = log + n;
    while (p < end) {
        if ((size_t)(end - p) >= sizeof tag - 1 && !memcmp(p, tag, sizeof tag - 1)) {
            memcpy(o, tag, sizeof tag - 1);
            o += sizeof tag - 1;
            p += sizeof tag - 1;
            while (p < end && ((*p >= '0' && *p <= '9') || *p == '.')) p++;
            *o++ = '#';
            continue;
        }
        *o++ = *p++;
    }
    *o = '\0';
    return out;
}

static int same_log(const char *a, const char *b)
{
    char *x = timeless(a, strlen(a)), *y = timeless(b, strlen(b));
    int same = !strcmp(x, y);
    free(x);
    free(y);
    return same;
}

static uint64_t u64_at(const char *b)
{
    uint64_t v;
    memcpy(&v, b, 8);
    return v;
}

/* Two cache entries (cubin_cache.h's layout) hold the same bytes but for the
 * compile time they record: the seconds field, the ptxas timing line of the
 * log, and so the checksum. */
static int same_entry(const char *a, size_t na, const char *b, size_t nb)
{
    const size_t head = 8 + 4 + 32; /* magic, version, key */
    if (na < head + 24 + 32 || nb < head + 24 + 32 || memcmp(a, b, head)) return 0;
    uint64_t la = u64_at(a + head + 8), lb = u64_at(b + head + 8);
    if (la > na - head - 24 - 32 || lb > nb - head - 24 - 32) return 0;
    const char *ca = a + head + 16 + la, *cb = b + head + 16 + lb;
    uint64_t ka = u64_at(ca), kb = u64_at(cb);
    if (ka != kb || ka != na - (size_t)(ca - a) - 8 - 32 || memcmp(ca + 8, cb + 8, (size_t)ka)) return 0;
    char *xa = timeless(a + head + 16, (size_t)la), *xb = timeless(b + head + 16, (size_t)lb);
    int same = !strcmp(xa, xb);
    free(xa);
    free(xb);
    return same;
}

static int same_bytes(const VptCompileResult *a, const VptCompileResult *b)
{
    return a->cubin && b->cubin && a->cubin_size == b->cubin_size && !memcmp(a->cubin, b->cubin, a->cubin_size);
}

TEST(harness_compile_pool_default_jobs)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsetenv("VPT_COMPILE_JOBS");
    CHECK_EQ_INT(vpt_compile_pool_default_jobs(), cores > 1 ? cores - 1 : 1);
    setenv("VPT_COMPILE_JOBS", "3", 1);
    CHECK_EQ_INT(vpt_compile_pool_default_jobs(), 3);
    VptCompilePool *p = vpt_compile_pool_create(NULL, 0);
    REQUIRE(p);
    CHECK_EQ_INT(vpt_compile_pool_threads(p), 3);
    CHECK(vpt_compile_pool_uses_processes(p));
    CHECK_EQ_INT(vpt_compile_pool_workers_started(p), 0); /* none until a compile needs one */
    vpt_compile_pool_destroy(p);
    setenv("VPT_COMPILE_JOBS", "1", 1);
    p = vpt_compile_pool_create(NULL, 0);
    REQUIRE(p);
    CHECK(!vpt_compile_pool_uses_processes(p)); /* 1: in this process */
    vpt_compile_pool_destroy(p);
    setenv("VPT_COMPILE_JOBS", "lots", 1);
    char path[700];
    snprintf(path, sizeof path, "%s/stderr", vpt_test_tmpdir());
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    CHECK_EQ_INT(vpt_compile_pool_default_jobs(), cores > 1 ? cores - 1 : 1);
    CHECK_EQ_INT(vpt_compile_pool_default_jobs(), cores > 1 ? cores - 1 : 1);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *err;
    size_t n;
    REQUIRE(vpt_read_file(path, 1 << 16, &err, &n) == 0);
    CHECK(!strcmp(err, "vptune: ignoring VPT_COMPILE_JOBS=lots (a whole number 1..256)\n")); /* once */
    free(err);
    unsetenv("VPT_COMPILE_JOBS");
}

/* Real kernels, two workers: every cubin, log and cache entry is what the
 * same compile in this process produces. */
TEST_TIMEOUT(harness_compile_pool_processes_match_in_process, 400)
{
    static const char *const names[] = {"naiveSK", "regenerationSK-warp,ppt=2", "streamingSK,block=128",
                                        "naiveMK", "sortingSK,maxrregcount=64"};
    enum { N = sizeof names / sizeof names[0] };
    VptKernelSource ks[N];
    VptCompileRequest req[N];
    for (int i = 0; i < N; i++) {
        VptConfig c;
        REQUIRE_MSG(vpt_config_parse(names[i], &c) == 0, "%s: %s", names[i], vpt_errmsg());
        REQUIRE_MSG(vpt_kernel_source_build(&c, &ks[i]) == 0, "%s", vpt_errmsg());
        req[i] = vpt_compile_request_of(&ks[i], 9, 0);
    }
    VptCubinCache *pool_cache = vpt_cubin_cache_open(dir_of("pool-cache"));
    VptCubinCache *here_cache = vpt_cubin_cache_open(dir_of("here-cache"));
    REQUIRE(pool_cache && here_cache);
    VptCompilePool *p = vpt_compile_pool_create(pool_cache, 2);
    REQUIRE(p);
    CHECK(vpt_compile_pool_uses_processes(p));
    int t[N];
    for (int i = 0; i < N; i++) REQUIRE((t[i] = vpt_compile_pool_submit(p, &req[i])) >= 0);
    pid_t pids[4];
    VptCompileResult got[N];
    for (int i = 0; i < N; i++) {
        REQUIRE_MSG(vpt_compile_pool_wait(p, t[i], &got[i]) == 0, "%s: %s", names[i], vpt_errmsg());
        CHECK(!got[i].from_cache);
        CHECK(got[i].seconds > 0);
        if (i == 0) {
            /* The workers run now: in their own process group. */
            int n = vpt_compile_pool_worker_pids(p, pids, 4);
            CHECK(n >= 1 && n <= 2);
            for (int k = 0; k < n && k < 4; k++) CHECK_EQ_INT(getpgid(pids[k]), pids[k]);
        }
    }
    CHECK_EQ_INT(vpt_compile_pool_workers_started(p), 2); /* one per thread, reused */
    double sum = 0;
    for (int i = 0; i < N; i++) {
        VptCompileResult here;
        REQUIRE_MSG(vpt_compile_cached(here_cache, &req[i], &here) == 0, "%s", vpt_errmsg());
        CHECK_MSG(same_bytes(&got[i], &here), "%s: cubin of %zu bytes from the pool, %zu here", names[i],
                  got[i].cubin_size, here.cubin_size);
        CHECK_MSG(same_log(got[i].log, here.log), "%s: the logs differ:\n%s\n---\n%s", names[i], got[i].log, here.log);
        CHECK_STR_CONTAINS(got[i].log, "Used"); /* the ptxas report the evaluator reads */
        sum += got[i].seconds;
        /* The two caches' entries: the same bytes, but for the compile time
         * they record (as two compiles in this process would differ). */
        char hex[65], a[1200], b[1200];
        REQUIRE(vpt_cubin_cache_key(&req[i], hex) == 0);
        vpt_cubin_cache_entry_path(pool_cache, hex, a, sizeof a);
        vpt_cubin_cache_entry_path(here_cache, hex, b, sizeof b);
        char *da, *db;
        size_t na, nb;
        REQUIRE_MSG(vpt_read_file(a, 1 << 26, &da, &na) == 0, "%s", vpt_errmsg());
        REQUIRE_MSG(vpt_read_file(b, 1 << 26, &db, &nb) == 0, "%s", vpt_errmsg());
        CHECK_MSG(same_entry(da, na, db, nb), "%s: cache entries differ (%zu and %zu bytes)", names[i], na, nb);
        free(da);
        free(db);
        /* And the pool's entry is served as a hit, with the worker's time. */
        VptCompileResult hit;
        REQUIRE(vpt_compile_cached(pool_cache, &req[i], &hit) == 0);
        CHECK(hit.from_cache && same_bytes(&hit, &here) && hit.seconds == got[i].seconds);
        vpt_compile_result_free(&hit);
        vpt_compile_result_free(&here);
        vpt_compile_result_free(&got[i]);
    }
    vpt_test_log("%d kernels, %.2f s of NVRTC time in two workers", N, sum);
    /* A second round is all cache hits: no request reaches a worker. */
    for (int i = 0; i < N; i++) REQUIRE((t[i] = vpt_compile_pool_submit(p, &req[i])) >= 0);
    for (int i = 0; i < N; i++) {
        REQUIRE(vpt_compile_pool_wait(p, t[i], &got[i]) == 0);
        CHECK(got[i].from_cache);
        vpt_compile_result_free(&got[i]);
    }
    CHECK_EQ_INT(vpt_compile_pool_workers_started(p), 2);
    vpt_compile_pool_destroy(p);
    CHECK(no_children());
    for (int i = 0; i < N; i++) vpt_kernel_source_free(&ks[i]);
    vpt_cubin_cache_close(pool_cache);
    vpt_cubin_cache_close(here_cache);
}

/* An NVRTC error in a worker is the same result as in this process: -1, the
 * message with the log's start, the whole log, nothing cached, and the
 * worker lives on. */
TEST(harness_compile_pool_processes_nvrtc_errors)
{
    VptCubinCache *c = vpt_cubin_cache_open(dir_of("cache"));
    REQUIRE(c);
    VptCompilePool *p = vpt_compile_pool_create(c, 2);
    REQUIRE(p);
    VptCompileRequest bad = {.name = "broken_variant.cu",
                             .source = "extern \"C\" __global__ void k(float *a) { a[0] = 1.0f +; }\n",
                             .arch_major = 9};
    VptCompileResult res, here;
    int t = vpt_compile_pool_submit(p, &bad);
    REQUIRE(t >= 0);
    CHECK(vpt_compile_pool_wait(p, t, &res) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC compile of broken_variant.cu failed: NVRTC_ERROR_COMPILATION (see log)");
    CHECK_STR_CONTAINS(vpt_errmsg(), "broken_variant.cu(1): error");
    REQUIRE(res.log);
    CHECK_STR_CONTAINS(res.log, "broken_variant.cu(1): error");
    CHECK(res.cubin == NULL && res.cubin_size == 0);
    CHECK(vpt_nvrtc_compile(&bad, &here) == -1);
    CHECK(same_log(res.log, here.log));
    vpt_compile_result_free(&here);
    vpt_compile_result_free(&res);

    /* A request NVRTC is never given (bad architecture): no log at all, as
     * in this process. */
    VptCompileRequest arch = {.name = "x.cu", .source = "", .arch_major = 2};
    REQUIRE((t = vpt_compile_pool_submit(p, &arch)) >= 0);
    CHECK(vpt_compile_pool_wait(p, t, &res) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bad architecture sm_20");
    CHECK(res.log == NULL && res.cubin == NULL);
    vpt_compile_result_free(&res);

    /* The worker that reported them compiles the next one. */
    char src[256], name[32];
    VptCompileRequest ok = tiny(1, "fine", src, sizeof src, name, sizeof name);
    REQUIRE((t = vpt_compile_pool_submit(p, &ok)) >= 0);
    CHECK_MSG(vpt_compile_pool_wait(p, t, &res) == 0, "%s", vpt_errmsg());
    vpt_compile_result_free(&res);
    CHECK(vpt_compile_pool_workers_started(p) <= 2); /* never replaced */
    VptCubinCacheStats s;
    vpt_cubin_cache_stats(c, &s);
    CHECK_EQ_INT(s.misses, 3);
    vpt_compile_pool_destroy(p);
    vpt_cubin_cache_close(c);
    CHECK(no_children());
}

/* A worker that breaks (the faults of VPT_COMPILE_INJECT) fails only the
 * compile it held, with the reason; the next compile gets a fresh worker. */
TEST_TIMEOUT(harness_compile_pool_faults_in_workers, 240)
{
    static const struct {
        const char *inject;
        const char *reason;
    } cases[] = {
        {"segv@CRASH", "died: killed by signal 11 (Segmentation fault)"},
        {"abort@CRASH", "died: killed by signal 6 (Aborted)"},
        {"kill@CRASH", "died: killed by signal 9 (Killed)"},
        {"exit@CRASH", "died: exited with status 3"},
        {"garbage@CRASH", "broke the protocol (not a worker message: bad magic"},
        {"hang@CRASH", "gave no answer within 2 s (the compile time limit) and was killed by signal 9 (Killed)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        setenv("VPT_COMPILE_INJECT", cases[k].inject, 1);
        VptCubinCache *c = vpt_cubin_cache_open(dir_of("cache"));
        REQUIRE(c);
        VptCompilePool *p = vpt_compile_pool_create(c, 2);
        REQUIRE(p);
        unsetenv("VPT_COMPILE_INJECT"); /* the pool took its workers' environment */
        vpt_compile_pool_set_timeout(p, 2.0);
        char src[3][256], name[3][32];
        VptCompileRequest r[3] = {tiny(10, "first", src[0], 256, name[0], 32),
                                  tiny(11, "CRASH here", src[1], 256, name[1], 32),
                                  tiny(12, "after", src[2], 256, name[2], 32)};
        int t[3];
        double t0 = now_s();
        for (int i = 0; i < 3; i++) REQUIRE((t[i] = vpt_compile_pool_submit(p, &r[i])) >= 0);
        VptCompileResult res;
        CHECK_MSG(vpt_compile_pool_wait(p, t[0], &res) == 0, "%s: %s", cases[k].inject, vpt_errmsg());
        vpt_compile_result_free(&res);
        CHECK(vpt_compile_pool_wait(p, t[1], &res) == -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC compile of tiny_11.cu failed: compile worker process ");
        CHECK_STR_CONTAINS(vpt_errmsg(), cases[k].reason);
        CHECK(res.log && res.log[0] == '\0' && res.cubin == NULL);
        CHECK(res.seconds >= 0 && res.seconds < 60);
        vpt_test_log("%s: %s (%.2f s)", cases[k].inject, vpt_errmsg(), now_s() - t0);
        vpt_compile_result_free(&res);
        CHECK_MSG(vpt_compile_pool_wait(p, t[2], &res) == 0, "%s: %s", cases[k].inject, vpt_errmsg());
        vpt_compile_result_free(&res);
        /* The broken worker was reaped at once: no zombie while the pool
         * lives on. The lost compile left no cache entry. */
        pid_t pids[4];
        int n = vpt_compile_pool_worker_pids(p, pids, 4);
        for (int i = 0; i < n && i < 4; i++) CHECK(kill(pids[i], 0) == 0);
        char hex[65], path[1200];
        REQUIRE(vpt_cubin_cache_key(&r[1], hex) == 0);
        vpt_cubin_cache_entry_path(c, hex, path, sizeof path);
        CHECK(access(path, F_OK) != 0);
        /* Submitted again, the config fails again (no hidden state). */
        int again = vpt_compile_pool_submit(p, &r[1]);
        CHECK(vpt_compile_pool_wait(p, again, &res) == -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), cases[k].reason);
        vpt_compile_result_free(&res);
        CHECK(vpt_compile_pool_workers_started(p) >= 2); /* the broken one was replaced */
        vpt_compile_pool_destroy(p);
        CHECK_MSG(no_children(), "%s: a child is left", cases[k].inject);
        vpt_cubin_cache_close(c);
    }
}

/* A worker killed while idle is replaced without blaming the next compile. */
TEST(harness_compile_pool_faults_idle_worker_replaced)
{
    VptCompilePool *p = vpt_compile_pool_create(NULL, 2);
    REQUIRE(p);
    char src[256], name[32];
    VptCompileRequest r = tiny(1, "x", src, sizeof src, name, sizeof name);
    VptCompileResult res;
    int t = vpt_compile_pool_submit(p, &r);
    REQUIRE(vpt_compile_pool_wait(p, t, &res) == 0);
    vpt_compile_result_free(&res);
    pid_t pid;
    REQUIRE(vpt_compile_pool_worker_pids(p, &pid, 1) == 1);
    REQUIRE(kill(pid, SIGKILL) == 0);
    usleep(100000);
    /* Both threads may take the next requests: each finds its worker (dead
     * or not yet started) and compiles. */
    for (int i = 0; i < 4; i++) {
        r = tiny(2 + i, "y", src, sizeof src, name, sizeof name);
        t = vpt_compile_pool_submit(p, &r);
        CHECK_MSG(vpt_compile_pool_wait(p, t, &res) == 0, "%s", vpt_errmsg());
        vpt_compile_result_free(&res);
    }
    CHECK(vpt_compile_pool_workers_started(p) >= 2);
    vpt_compile_pool_destroy(p);
    CHECK(no_children());
}

/* When no worker can start, the pool says so once and compiles here. */
TEST(harness_compile_pool_faults_no_worker_falls_back)
{
    static const char *const programs[] = {"/nonexistent/vptune-worker", "/bin/true"};
    for (int k = 0; k < 2; k++) {
        VptCompilePool *p = vpt_compile_pool_create(NULL, 2);
        REQUIRE(p);
        vpt_compile_pool_set_program(p, programs[k]);
        char path[700];
        snprintf(path, sizeof path, "%s/stderr-%d", vpt_test_tmpdir(), k);
        fflush(stderr);
        int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        REQUIRE(saved >= 0 && fd >= 0);
        dup2(fd, 2);
        close(fd);
        char src[3][256], name[3][32];
        int t[3];
        for (int i = 0; i < 3; i++) {
            VptCompileRequest r = tiny(i, "z", src[i], 256, name[i], 32);
            REQUIRE((t[i] = vpt_compile_pool_submit(p, &r)) >= 0);
        }
        for (int i = 0; i < 3; i++) {
            VptCompileResult res;
            CHECK_MSG(vpt_compile_pool_wait(p, t[i], &res) == 0, "%s", vpt_errmsg());
            vpt_compile_result_free(&res);
        }
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        CHECK(!vpt_compile_pool_uses_processes(p));
        char *err;
        size_t n;
        REQUIRE(vpt_read_file(path, 1 << 20, &err, &n) == 0);
        CHECK_STR_CONTAINS(err, "vptune: cannot start a compile worker process (");
        CHECK_STR_CONTAINS(err, "); compiling in this process\n");
        /* No such program: posix_spawn's ENOENT (under valgrind, which
         * forks and execs instead, the child's exit status 127). */
        if (k == 0) CHECK_MSG(strstr(err, ": ENOENT (") || strstr(err, "exited with status 127"), "%s", err);
        else CHECK_STR_CONTAINS(err, "gave no hello (it closed the connection): exited with status 0");
        const char *first = strstr(err, "cannot start");
        CHECK(first && !strstr(first + 1, "cannot start")); /* once per pool */
        vpt_test_log("%s", err);
        free(err);
        vpt_compile_pool_destroy(p);
        CHECK(no_children());
    }
}

/* Destroy with compiles queued, one stuck in a worker and others done:
 * prompt, and nothing left behind. */
TEST(harness_compile_pool_faults_destroy_leaves_nothing)
{
    int fds = count_fds();
    setenv("VPT_COMPILE_INJECT", "hang@STUCK", 1);
    VptCompilePool *p = vpt_compile_pool_create(NULL, 2);
    REQUIRE(p);
    unsetenv("VPT_COMPILE_INJECT");
    vpt_compile_pool_set_timeout(p, 0); /* no limit: only destroy stops it */
    char src[8][256], name[8][32];
    int t[8];
    for (int i = 0; i < 8; i++) {
        VptCompileRequest r = tiny(i, i == 1 ? "STUCK" : "fine", src[i], 256, name[i], 32);
        REQUIRE((t[i] = vpt_compile_pool_submit(p, &r)) >= 0);
    }
    VptCompileResult res;
    REQUIRE_MSG(vpt_compile_pool_wait(p, t[0], &res) == 0, "%s", vpt_errmsg());
    vpt_compile_result_free(&res);
    /* Ticket 1 sits in a worker that never answers; the other thread goes on. */
    REQUIRE_MSG(vpt_compile_pool_wait(p, t[2], &res) == 0, "%s", vpt_errmsg());
    vpt_compile_result_free(&res);
    CHECK_EQ_INT(vpt_compile_pool_done(p, t[1]), 0);
    pid_t pids[4];
    int n = vpt_compile_pool_worker_pids(p, pids, 4);
    CHECK_EQ_INT(n, 2);
    CHECK(count_fds() > fds);
    double t0 = now_s();
    vpt_compile_pool_destroy(p);
    double took = now_s() - t0;
    CHECK_MSG(took < 5.0, "destroy took %.2f s", took);
    CHECK(no_children());
    for (int i = 0; i < n && i < 4; i++) CHECK(kill(pids[i], 0) == -1 && errno == ESRCH);
    CHECK_EQ_INT(count_fds(), fds);
    vpt_test_log("destroy in %.3f s", took);
}
