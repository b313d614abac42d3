/* NVRTC to CUBIN, the on-disk cubin cache and the compile pool. No GPU
 * needed. Real compiles are few, to keep the suite short: 4 of a small CUB
 * kernel and a handful of trivial ones. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "base/file.h"
#include "harness/compile_pool.h"
#include "harness/cubin_cache.h"
#include "harness/nvrtc_compile.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A kernel with a block-wide scan and radix sort (the two CUB primitives
 * the thesis' streaming and sorting kernels use), an in-memory header, and a
 * #warning so the log is non-empty on success. */
static const char cub_source[] =
    "#include <cub/block/block_scan.cuh>\n"
    "#include <cub/block/block_radix_sort.cuh>\n"
    "#include \"vpt_test_block.h\"\n"
    "#warning vpt-test-warning\n"
    "extern \"C\" __global__ void scan_sort(int *a, unsigned *keys)\n"
    "{\n"
    "    typedef cub::BlockScan<int, VPT_TEST_BLOCK> Scan;\n"
    "    typedef cub::BlockRadixSort<unsigned, VPT_TEST_BLOCK, 2> Sort;\n"
    "    __shared__ union { typename Scan::TempStorage scan; typename Sort::TempStorage sort; } tmp;\n"
    "    int v = a[threadIdx.x], s;\n"
    "    Scan(tmp.scan).ExclusiveSum(v, s);\n"
    "    a[threadIdx.x] = s;\n"
    "    __syncthreads();\n"
    "    unsigned k[2] = { keys[2 * threadIdx.x], keys[2 * threadIdx.x + 1] };\n"
    "    Sort(tmp.sort).Sort(k);\n"
    "    keys[2 * threadIdx.x] = k[0];\n"
    "    keys[2 * threadIdx.x + 1] = k[1];\n"
    "}\n";
static const char *const cub_header_names[] = { "vpt_test_block.h" };
static const char *const cub_headers[] = { "#define VPT_TEST_BLOCK 128\n" };

static VptCompileRequest cub_request(int major, int minor)
{
    VptCompileRequest r = {
        .name = "vpt_test_cub.cu",
        .source = cub_source,
        .nheaders = 1,
        .headers = cub_headers,
        .include_names = cub_header_names,
        .arch_major = major,
        .arch_minor = minor,
    };
    return r;
}

/* The architecture a CUBIN was built for, from its ELF header. */
static int cubin_sm(const VptCompileResult *r)
{
    if (r->cubin_size < sizeof(Elf64_Ehdr)) return -1;
    const unsigned char *b = r->cubin;
    if (memcmp(b, ELFMAG, SELFMAG) != 0) return -1;
    Elf64_Ehdr h;
    memcpy(&h, b, sizeof h);
    if (h.e_machine != EM_CUDA) return -1;
    /* Current CUDA ELF ABI: the SM in bits 8..15 of e_flags (0x5a04: sm_90). */
    return (int)((h.e_flags >> 8) & 0xff);
}

static int cubin_has(const VptCompileResult *r, const char *s)
{
    return r->cubin && memmem(r->cubin, r->cubin_size, s, strlen(s)) != NULL;
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Captures what the code under test prints on stderr. */
typedef struct {
    int saved;
    char path[700];
} Capture;

static void capture_begin(Capture *c, const char *name)
{
    snprintf(c->path, sizeof c->path, "%s/%s.stderr", vpt_test_tmpdir(), name);
    fflush(stderr);
    c->saved = dup(2);
    int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(c->saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
}

/* Returns the captured text (caller frees). */
static char *capture_end(Capture *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    char *data = NULL;
    size_t n = 0;
    if (vpt_read_file(c->path, 1 << 20, &data, &n) != 0) return strdup("");
    return data;
}

/* Counts files under dir whose name contains needle (two levels deep). */
static int count_files(const char *dir, const char *needle, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0))) continue;
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode) && depth > 0) n += count_files(p, needle, depth - 1);
        else if (strstr(e->d_name, needle)) n++;
    }
    closedir(d);
    return n;
}

TEST(harness_nvrtc_version)
{
    const char *v = vpt_nvrtc_version();
    int major = 0, minor = 0;
    CHECK(sscanf(v, "%d.%d", &major, &minor) == 2);
    CHECK(major >= 12);
    CHECK_STR_CONTAINS(vpt_cccl_include_dir(), "/include/cccl");
    /* The build line names the same release (it keys the cubin cache). */
    char release[64];
    snprintf(release, sizeof release, "release %s, V%s.", v, v);
    CHECK_STR_CONTAINS(vpt_nvrtc_build(), release);
    vpt_test_log("%s; CCCL %ld", vpt_nvrtc_build(), vpt_cccl_version(vpt_cccl_include_dir()));
    CHECK(vpt_cccl_version(vpt_cccl_include_dir()) >= 2000000);
    CHECK(vpt_cccl_version("/nonexistent") == -1);
}

TEST_TIMEOUT(harness_nvrtc_cub_sm90_and_sm80, 180)
{
    int archs[2][2] = { { 9, 0 }, { 8, 0 } };
    for (int i = 0; i < 2; i++) {
        VptCompileRequest req = cub_request(archs[i][0], archs[i][1]);
        VptCompileResult res;
        int rc = vpt_nvrtc_compile(&req, &res);
        REQUIRE_MSG(rc == 0, "sm_%d%d: %s\nlog:\n%s", archs[i][0], archs[i][1], vpt_errmsg(), res.log);
        REQUIRE(res.cubin && res.cubin_size > 1000);
        CHECK(memcmp(res.cubin, "\177ELF", 4) == 0);
        CHECK_EQ_INT(cubin_sm(&res), archs[i][0] * 10 + archs[i][1]);
        CHECK(cubin_has(&res, "scan_sort"));
        /* The log is kept on success: it holds the #warning. */
        CHECK_STR_CONTAINS(res.log, "vpt-test-warning");
        CHECK(res.seconds > 0 && res.seconds < 120);
        CHECK(!res.from_cache);
        vpt_test_log("sm_%d%d: %zu bytes in %.2f s", archs[i][0], archs[i][1], res.cubin_size, res.seconds);
        vpt_compile_result_free(&res);
        CHECK(res.cubin == NULL && res.log == NULL);
    }
}

TEST(harness_nvrtc_syntax_error)
{
    VptCompileRequest req = {
        .name = "broken_variant.cu",
        .source = "extern \"C\" __global__ void k(float *a) { a[0] = 1.0f +; }\n",
        .arch_major = 9,
    };
    VptCompileResult res;
    CHECK(vpt_nvrtc_compile(&req, &res) == -1);
    CHECK(res.cubin == NULL && res.cubin_size == 0);
    REQUIRE(res.log != NULL);
    CHECK_STR_CONTAINS(res.log, "broken_variant.cu(1): error");
    CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC compile of broken_variant.cu failed: NVRTC_ERROR_COMPILATION (see log)");
    /* The message carries the start of the log. */
    CHECK_STR_CONTAINS(vpt_errmsg(), "broken_variant.cu(1): error");
    vpt_compile_result_free(&res);
}

TEST(harness_nvrtc_options_reach_the_compiler)
{
    static const char src[] =
        "#ifndef VPT_NEEDED\n#error VPT_NEEDED not defined\n#endif\n"
        "extern \"C\" __global__ void opt_k(float *a) { a[threadIdx.x] = VPT_NEEDED; }\n";
    VptCompileRequest req = { .name = "opt.cu", .source = src, .arch_major = 9 };
    VptCompileResult res;
    CHECK(vpt_nvrtc_compile(&req, &res) == -1);
    CHECK_STR_CONTAINS(res.log, "VPT_NEEDED not defined");
    vpt_compile_result_free(&res);

    const char *opts[] = { "-DVPT_NEEDED=3.0f", "--maxrregcount=32" };
    req.noptions = 2;
    req.options = opts;
    CHECK(vpt_nvrtc_compile(&req, &res) == 0);
    CHECK(cubin_has(&res, "opt_k"));
    vpt_compile_result_free(&res);

    const char *bad[] = { "--no-such-option" };
    req.noptions = 1;
    req.options = bad;
    CHECK(vpt_nvrtc_compile(&req, &res) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC compile of opt.cu failed: NVRTC_ERROR_INVALID_OPTION");
    vpt_compile_result_free(&res);
}

TEST(harness_nvrtc_bad_requests)
{
    VptCompileRequest req = { .name = "x.cu", .source = "", .arch_major = 2 };
    VptCompileResult res;
    CHECK(vpt_nvrtc_compile(&req, &res) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bad architecture sm_20");
    CHECK(res.cubin == NULL && res.log == NULL);
    req.arch_major = 9;
    req.source = NULL;
    CHECK(vpt_nvrtc_compile(&req, &res) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no source");
    vpt_compile_result_free(&res);
}

TEST(harness_nvrtc_missing_cccl)
{
    setenv("VPT_CUDA_HOME", "/nonexistent-cuda", 1);
    CHECK(vpt_cccl_include_dir() == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "/nonexistent-cuda/include/cccl/cub/cub.cuh");
    CHECK_STR_CONTAINS(vpt_errmsg(), "VPT_CUDA_HOME");
    VptCompileRequest req = cub_request(9, 0);
    VptCompileResult res;
    CHECK(vpt_nvrtc_compile(&req, &res) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC compile of vpt_test_cub.cu: CUB headers not found");
    vpt_compile_result_free(&res);
    /* CUDA_HOME is honoured too, VPT_CUDA_HOME first. */
    unsetenv("VPT_CUDA_HOME");
    setenv("CUDA_HOME", "/other-missing-cuda", 1);
    CHECK(vpt_cccl_include_dir() == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "/other-missing-cuda/include/cccl");
}

/* ---- cache ---- */

static char *cache_dir(const char *name)
{
    static char dir[700];
    snprintf(dir, sizeof dir, "%s/%s", vpt_test_tmpdir(), name);
    return dir;
}

TEST_TIMEOUT(harness_cubin_cache_hit_and_miss, 180)
{
    VptCubinCache *c = vpt_cubin_cache_open(cache_dir("cache"));
    REQUIRE_MSG(c, "%s", vpt_errmsg());
    VptCompileRequest req = cub_request(9, 0);
    VptCompileResult first, second;
    REQUIRE_MSG(vpt_compile_cached(c, &req, &first) == 0, "%s", vpt_errmsg());
    CHECK(!first.from_cache);

    double t0 = wall();
    REQUIRE(vpt_compile_cached(c, &req, &second) == 0);
    double hit_time = wall() - t0;
    CHECK(second.from_cache);
    CHECK(second.seconds == first.seconds); /* the original compile's time */
    CHECK(second.cubin_size == first.cubin_size && memcmp(second.cubin, first.cubin, first.cubin_size) == 0);
    CHECK(strcmp(second.log, first.log) == 0);
    CHECK_STR_CONTAINS(second.log, "vpt-test-warning");
    CHECK_MSG(hit_time < first.seconds / 5, "hit took %.4f s, compile %.4f s", hit_time, first.seconds);
    vpt_test_log("compile %.3f s, hit %.5f s", first.seconds, hit_time);

    VptCubinCacheStats s;
    vpt_cubin_cache_stats(c, &s);
    CHECK_EQ_INT(s.hits, 1);
    CHECK_EQ_INT(s.misses, 1);
    CHECK_EQ_INT(s.corrupt, 0);

    /* A changed option is another variant: a miss. */
    const char *opts[] = { "--maxrregcount=64" };
    req.noptions = 1;
    req.options = opts;
    VptCompileResult third;
    REQUIRE(vpt_compile_cached(c, &req, &third) == 0);
    CHECK(!third.from_cache);
    vpt_cubin_cache_stats(c, &s);
    CHECK_EQ_INT(s.misses, 2);

    /* Another cache object on the same directory (another process, later)
     * finds both entries. */
    VptCubinCache *c2 = vpt_cubin_cache_open(cache_dir("cache"));
    REQUIRE(c2);
    VptCompileResult again;
    REQUIRE(vpt_compile_cached(c2, &req, &again) == 0);
    CHECK(again.from_cache);
    req.noptions = 0;
    vpt_compile_result_free(&again);
    REQUIRE(vpt_compile_cached(c2, &req, &again) == 0);
    CHECK(again.from_cache);

    CHECK_EQ_INT(count_files(cache_dir("cache"), ".cubin", 1), 2);
    CHECK_EQ_INT(count_files(cache_dir("cache"), ".tmp.", 1), 0);
    vpt_compile_result_free(&first);
    vpt_compile_result_free(&second);
    vpt_compile_result_free(&third);
    vpt_compile_result_free(&again);
    vpt_cubin_cache_close(c);
    vpt_cubin_cache_close(c2);
}

static const char tiny_source[] = "extern \"C\" __global__ void tiny(float *a) { a[threadIdx.x] *= 3.0f; }\n";

typedef enum { FLIP_MIDDLE, TRUNCATE, GARBAGE, EMPTY } Damage;

static void damage(const char *path, Damage how)
{
    char *data = NULL;
    size_t n = 0;
    REQUIRE(vpt_read_file(path, 1 << 26, &data, &n) == 0);
    REQUIRE(n > 200);
    FILE *fp = fopen(path, "r+b");
    REQUIRE(fp);
    switch (how) {
    case FLIP_MIDDLE:
        fseek(fp, (long)(n / 2), SEEK_SET);
        fputc(data[n / 2] ^ 0x40, fp);
        break;
    case TRUNCATE:
        REQUIRE(ftruncate(fileno(fp), (off_t)(n - 77)) == 0);
        break;
    case GARBAGE:
        REQUIRE(ftruncate(fileno(fp), 0) == 0);
        for (int i = 0; i < 4000; i++) fputc((i * 7919) & 0xff, fp);
        break;
    case EMPTY:
        REQUIRE(ftruncate(fileno(fp), 0) == 0);
        break;
    }
    fclose(fp);
    free(data);
}

TEST(harness_cubin_cache_corrupt_entries_rebuilt)
{
    VptCubinCache *c = vpt_cubin_cache_open(cache_dir("cache"));
    REQUIRE(c);
    VptCompileRequest req = { .name = "tiny.cu", .source = tiny_source, .arch_major = 9 };
    VptCompileResult orig;
    REQUIRE_MSG(vpt_compile_cached(c, &req, &orig) == 0, "%s", vpt_errmsg());
    char hex[65], path[1200];
    REQUIRE(vpt_cubin_cache_key(&req, hex) == 0);
    vpt_cubin_cache_entry_path(c, hex, path, sizeof path);
    REQUIRE(access(path, F_OK) == 0);

    static const struct { Damage how; const char *reason; } cases[] = {
        { FLIP_MIDDLE, "checksum mismatch" },
        { TRUNCATE, "truncated" },
        { GARBAGE, "bad magic" },
        { EMPTY, "truncated: 0 bytes" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        damage(path, cases[i].how);
        Capture cap;
        capture_begin(&cap, "corrupt");
        VptCompileResult res;
        int rc = vpt_compile_cached(c, &req, &res);
        char *err = capture_end(&cap);
        REQUIRE_MSG(rc == 0, "case %zu: %s", i, vpt_errmsg());
        CHECK(!res.from_cache); /* rebuilt, not served damaged */
        CHECK(res.cubin_size == orig.cubin_size && memcmp(res.cubin, orig.cubin, orig.cubin_size) == 0);
        char want[1400];
        snprintf(want, sizeof want, "cubin cache: corrupt entry %s (%s", path, cases[i].reason);
        CHECK_STR_CONTAINS(err, want);
        CHECK_STR_CONTAINS(err, "), rebuilding\n");
        /* Reported once: one line. */
        CHECK(strchr(err, '\n') == err + strlen(err) - 1);
        free(err);
        vpt_compile_result_free(&res);
        /* The rewritten entry is whole again. */
        REQUIRE(vpt_compile_cached(c, &req, &res) == 0);
        CHECK(res.from_cache);
        vpt_compile_result_free(&res);
    }
    VptCubinCacheStats s;
    vpt_cubin_cache_stats(c, &s);
    CHECK_EQ_INT(s.corrupt, 4);
    CHECK_EQ_INT(s.misses, 5);
    CHECK_EQ_INT(s.hits, 4);
    CHECK_EQ_INT(count_files(cache_dir("cache"), ".tmp.", 1), 0);
    vpt_compile_result_free(&orig);
    vpt_cubin_cache_close(c);
}

TEST(harness_cubin_cache_failures_not_cached)
{
    VptCubinCache *c = vpt_cubin_cache_open(cache_dir("cache"));
    REQUIRE(c);
    VptCompileRequest req = { .name = "bad.cu", .source = "this is not C++", .arch_major = 9 };
    VptCompileResult res;
    CHECK(vpt_compile_cached(c, &req, &res) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC compile of bad.cu failed");
    CHECK(res.log && res.log[0]);
    vpt_compile_result_free(&res);
    CHECK_EQ_INT(count_files(cache_dir("cache"), ".cubin", 1), 0);
    vpt_cubin_cache_close(c);
}

TEST(harness_cubin_cache_key_inputs)
{
    VptCompileRequest a = cub_request(9, 0);
    char k1[65], k2[65];
    REQUIRE(vpt_cubin_cache_key(&a, k1) == 0);
    CHECK_EQ_INT(strlen(k1), 64);
    REQUIRE(vpt_cubin_cache_key(&a, k2) == 0);
    CHECK(strcmp(k1, k2) == 0);

    VptCompileRequest b = a;
    b.arch_major = 8;
    REQUIRE(vpt_cubin_cache_key(&b, k2) == 0);
    CHECK(strcmp(k1, k2) != 0);

    const char *other_header[] = { "#define VPT_TEST_BLOCK 256\n" };
    b = a;
    b.headers = other_header;
    REQUIRE(vpt_cubin_cache_key(&b, k2) == 0);
    CHECK(strcmp(k1, k2) != 0);

    const char *renamed[] = { "other.h" };
    b = a;
    b.include_names = renamed;
    REQUIRE(vpt_cubin_cache_key(&b, k2) == 0);
    CHECK(strcmp(k1, k2) != 0);

    /* Option order and boundaries matter: {"-DA", "-DB"} != {"-DB", "-DA"}
     * != {"-DA-DB"}. */
    const char *o1[] = { "-DA", "-DB" }, *o2[] = { "-DB", "-DA" }, *o3[] = { "-DA-DB" };
    char k3[65], k4[65];
    b = a;
    b.noptions = 2;
    b.options = o1;
    REQUIRE(vpt_cubin_cache_key(&b, k2) == 0);
    b.options = o2;
    REQUIRE(vpt_cubin_cache_key(&b, k3) == 0);
    b.noptions = 1;
    b.options = o3;
    REQUIRE(vpt_cubin_cache_key(&b, k4) == 0);
    CHECK(strcmp(k2, k3) != 0 && strcmp(k2, k4) != 0 && strcmp(k3, k4) != 0 && strcmp(k1, k2) != 0);

    b = a;
    b.source = "extern \"C\" __global__ void other() {}\n";
    REQUIRE(vpt_cubin_cache_key(&b, k2) == 0);
    CHECK(strcmp(k1, k2) != 0);

    /* The same toolkit under another path is another key: -lineinfo puts
     * the CCCL headers' paths into the cubin. */
    char link[700], *saved = getenv("VPT_CUDA_HOME") ? strdup(getenv("VPT_CUDA_HOME")) : NULL;
    snprintf(link, sizeof link, "%s/cuda-link", vpt_test_tmpdir());
    REQUIRE(symlink(vpt_cuda_home(), link) == 0);
    setenv("VPT_CUDA_HOME", link, 1);
    REQUIRE(vpt_cubin_cache_key(&a, k2) == 0);
    CHECK(strcmp(k1, k2) != 0);
    if (saved) setenv("VPT_CUDA_HOME", saved, 1);
    else unsetenv("VPT_CUDA_HOME");
    free(saved);
    REQUIRE(vpt_cubin_cache_key(&a, k2) == 0);
    CHECK(strcmp(k1, k2) == 0);
}

TEST(harness_cubin_cache_directory_choice)
{
    char file[700], bad[800];
    snprintf(file, sizeof file, "%s/plain-file", vpt_test_tmpdir());
    REQUIRE(vpt_write_file_atomic(file, "x", 1) == 0);
    snprintf(bad, sizeof bad, "%s/sub", file);
    CHECK(vpt_cubin_cache_open(bad) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), bad);

    char want[900];
    setenv("VPT_CACHE_DIR", cache_dir("from-env"), 1);
    VptCubinCache *c = vpt_cubin_cache_open(NULL);
    REQUIRE(c);
    CHECK(strcmp(vpt_cubin_cache_dir(c), cache_dir("from-env")) == 0);
    vpt_cubin_cache_close(c);

    unsetenv("VPT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", cache_dir("xdg"), 1);
    REQUIRE((c = vpt_cubin_cache_open(NULL)));
    snprintf(want, sizeof want, "%s/vptune/cubin", cache_dir("xdg"));
    CHECK(strcmp(vpt_cubin_cache_dir(c), want) == 0);
    vpt_cubin_cache_close(c);

    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", cache_dir("home"), 1);
    REQUIRE((c = vpt_cubin_cache_open(NULL)));
    snprintf(want, sizeof want, "%s/.cache/vptune/cubin", cache_dir("home"));
    CHECK(strcmp(vpt_cubin_cache_dir(c), want) == 0);
    struct stat st;
    CHECK(stat(want, &st) == 0 && S_ISDIR(st.st_mode));
    vpt_cubin_cache_close(c);

    unsetenv("HOME");
    CHECK(vpt_cubin_cache_open(NULL) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "VPT_CACHE_DIR");
}

/* ---- compile pool ---- */

TEST_TIMEOUT(harness_compile_pool_parallel, 180)
{
    VptCubinCache *c = vpt_cubin_cache_open(cache_dir("cache"));
    REQUIRE(c);
    VptCompilePool *p = vpt_compile_pool_create(c, 2);
    REQUIRE(p);
    CHECK_EQ_INT(vpt_compile_pool_threads(p), 2);

    /* Requests built in buffers reused at once: the pool must copy them. */
    int tickets[5];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 5; i++) {
            char name[32], src[256], opt[32], hdr[64], hname[16];
            snprintf(name, sizeof name, "variant_%d.cu", i);
            if (i == 3)
                snprintf(src, sizeof src, "extern \"C\" __global__ void variant_%d(float *a) { a[0] = ; }\n", i);
            else
                snprintf(src, sizeof src,
                         "#include \"scale.h\"\nextern \"C\" __global__ void variant_%d(float *a) "
                         "{ a[threadIdx.x] *= SCALE * FACTOR; }\n", i);
            snprintf(opt, sizeof opt, "-DFACTOR=%d.0f", i + 1);
            snprintf(hdr, sizeof hdr, "#define SCALE %d.5f\n", i);
            snprintf(hname, sizeof hname, "scale.h");
            const char *opts[] = { opt }, *hdrs[] = { hdr }, *hnames[] = { hname };
            VptCompileRequest req = { .name = name, .source = src, .nheaders = 1, .headers = hdrs,
                                      .include_names = hnames, .noptions = 1, .options = opts,
                                      .arch_major = 9 };
            tickets[i] = vpt_compile_pool_submit(p, &req);
            REQUIRE(tickets[i] >= 0);
            memset(src, 'x', sizeof src - 1);
            memset(name, 'y', sizeof name - 1);
            memset(hdr, 'z', sizeof hdr - 1);
        }
        /* Collected in reverse order, some possibly still compiling. */
        for (int i = 4; i >= 0; i--) {
            VptCompileResult res;
            vpt_error_clear();
            int rc = vpt_compile_pool_wait(p, tickets[i], &res);
            if (i == 3) {
                CHECK(rc == -1);
                CHECK_STR_CONTAINS(vpt_errmsg(), "NVRTC compile of variant_3.cu failed: NVRTC_ERROR_COMPILATION");
                CHECK_STR_CONTAINS(res.log, "variant_3.cu(1): error");
            } else {
                CHECK_MSG(rc == 0, "variant %d: %s", i, vpt_errmsg());
                char sym[32];
                snprintf(sym, sizeof sym, "variant_%d", i);
                CHECK(cubin_has(&res, sym));
                CHECK_EQ_INT(cubin_sm(&res), 90);
                CHECK(res.from_cache == (round == 1));
            }
            vpt_compile_result_free(&res);
            CHECK(vpt_compile_pool_wait(p, tickets[i], &res) == -1); /* collected already */
            CHECK_STR_CONTAINS(vpt_errmsg(), "already collected");
        }
    }
    VptCubinCacheStats s;
    vpt_cubin_cache_stats(c, &s);
    CHECK_EQ_INT(s.hits, 4);
    CHECK_EQ_INT(s.misses, 6); /* 4 + the failing one twice */
    CHECK(vpt_compile_pool_done(p, 12345) == -1);
    vpt_compile_pool_destroy(p);
    CHECK_EQ_INT(count_files(cache_dir("cache"), ".tmp.", 1), 0);
    vpt_cubin_cache_close(c);
}

TEST(harness_compile_pool_same_key_concurrently)
{
    /* Two threads compile and store the same entry at once: both succeed and
     * the entry that remains is whole. */
    VptCubinCache *c = vpt_cubin_cache_open(cache_dir("cache"));
    REQUIRE(c);
    VptCompilePool *p = vpt_compile_pool_create(c, 2);
    REQUIRE(p);
    VptCompileRequest req = { .name = "tiny.cu", .source = tiny_source, .arch_major = 9 };
    int t1 = vpt_compile_pool_submit(p, &req), t2 = vpt_compile_pool_submit(p, &req);
    REQUIRE(t1 >= 0 && t2 > t1);
    VptCompileResult a, b;
    CHECK(vpt_compile_pool_wait(p, t1, &a) == 0);
    CHECK(vpt_compile_pool_wait(p, t2, &b) == 0);
    CHECK(a.cubin_size == b.cubin_size && memcmp(a.cubin, b.cubin, a.cubin_size) == 0);
    int t3 = vpt_compile_pool_submit(p, &req);
    VptCompileResult h;
    CHECK(vpt_compile_pool_wait(p, t3, &h) == 0);
    CHECK(h.from_cache);
    VptCubinCacheStats s;
    vpt_cubin_cache_stats(c, &s);
    CHECK_EQ_INT(s.corrupt, 0);
    CHECK_EQ_INT(s.hits + s.misses, 3);
    vpt_compile_result_free(&a);
    vpt_compile_result_free(&b);
    vpt_compile_result_free(&h);
    vpt_compile_pool_destroy(p);
    vpt_cubin_cache_close(c);
}

TEST(harness_compile_pool_destroy_with_pending)
{
    VptCompilePool *p = vpt_compile_pool_create(NULL, 1);
    REQUIRE(p);
    VptCompileRequest req = { .name = "tiny.cu", .source = tiny_source, .arch_major = 9 };
    int t = -1;
    for (int i = 0; i < 4; i++) REQUIRE((t = vpt_compile_pool_submit(p, &req)) >= 0);
    CHECK(vpt_compile_pool_done(p, t) == 0 || vpt_compile_pool_done(p, t) == 1);
    /* Never collected, three never started: destroy frees all of it. */
    vpt_compile_pool_destroy(p);

    VptCompileRequest bad = { .name = "nosrc.cu", .source = NULL, .arch_major = 9 };
    p = vpt_compile_pool_create(NULL, 0);
    REQUIRE(p);
    CHECK(vpt_compile_pool_threads(p) >= 1);
    CHECK(vpt_compile_pool_submit(p, &bad) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "nosrc.cu");
    vpt_compile_pool_destroy(p);
}
