/* Provenance, JSON-lines results files, result statuses and the watchdog. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "base/file.h"
#include "harness/provenance.h"
#include "harness/results.h"
#include "harness/watchdog.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void check_dirname(const char *name, const char *want)
{
    char out[64];
    int rc = vpt_gpu_dirname(name, out, sizeof out);
    CHECK_MSG(rc == 0 && strcmp(out, want) == 0, "vpt_gpu_dirname(\"%s\") = %s, want \"%s\"", name,
              rc == 0 ? out : vpt_errmsg(), want);
}

TEST(harness_provenance_gpu_dirname)
{
    check_dirname("NVIDIA H100 80GB HBM3", "h100");
    check_dirname("NVIDIA H200", "h200");
    check_dirname("NVIDIA H100 PCIe", "h100-pcie");
    check_dirname("NVIDIA H100 NVL", "h100-nvl");
    check_dirname("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb");
    check_dirname("NVIDIA GeForce RTX 4090", "geforce-rtx-4090");
    check_dirname("Tesla V100-SXM2-16GB", "tesla-v100-sxm2-16gb");
    check_dirname("  weird//name  ", "weird-name");
    char out[64];
    CHECK(vpt_gpu_dirname("???", out, sizeof out) == -1);
    CHECK(vpt_gpu_dirname("", out, sizeof out) == -1);
    CHECK(vpt_gpu_dirname("NVIDIA GeForce RTX 4090", out, 5) == -1);
}

TEST(harness_provenance_json_fields)
{
    VptGpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "NVIDIA H100 80GB HBM3");
    snprintf(g.uuid, sizeof g.uuid, "GPU-01234567-89ab-cdef-0123-456789abcdef");
    snprintf(g.driver_release, sizeof g.driver_release, "580.159.04");
    g.cc_major = 9;
    g.sm_count = 132;
    g.driver_version = 13000;
    VptProvenance p;
    vpt_provenance_fill(&p, &g);
    json_t *j = vpt_provenance_json(&p);
    REQUIRE(j);
    json_t *gpu = json_object_get(j, "gpu");
    REQUIRE(json_is_object(gpu));
    CHECK(strcmp(json_string_value(json_object_get(gpu, "name")), "NVIDIA H100 80GB HBM3") == 0);
    CHECK(strcmp(json_string_value(json_object_get(gpu, "uuid")), g.uuid) == 0);
    CHECK(json_integer_value(json_object_get(gpu, "sm_count")) == 132);
    CHECK(strcmp(json_string_value(json_object_get(gpu, "cc")), "9.0") == 0);
    CHECK(strcmp(json_string_value(json_object_get(gpu, "driver")), "580.159.04") == 0);
    CHECK(json_integer_value(json_object_get(gpu, "cuda_driver_version")) == 13000);
    CHECK_EQ_INT(json_object_size(gpu), 6);
    const char *nvrtc = json_string_value(json_object_get(j, "nvrtc"));
    REQUIRE(nvrtc);
    int major, minor;
    CHECK(sscanf(nvrtc, "%d.%d", &major, &minor) == 2);
    const char *commit = json_string_value(json_object_get(j, "commit"));
    CHECK(commit && strlen(commit) >= 7);
    const char *host = json_string_value(json_object_get(j, "host"));
    char h[128];
    REQUIRE(gethostname(h, sizeof h) == 0);
    CHECK(host && strcmp(host, h) == 0);
    CHECK_EQ_INT(json_object_size(j), 4);
    json_decref(j);

    /* Without a GPU every field is still there. */
    vpt_provenance_fill(&p, NULL);
    j = vpt_provenance_json(&p);
    REQUIRE(j);
    gpu = json_object_get(j, "gpu");
    CHECK(strcmp(json_string_value(json_object_get(gpu, "name")), "none") == 0);
    CHECK(json_is_string(json_object_get(gpu, "uuid")) && json_is_string(json_object_get(gpu, "driver")));
    CHECK(json_integer_value(json_object_get(gpu, "sm_count")) == 0);
    CHECK_EQ_INT(json_object_size(gpu), 6);
    json_decref(j);
}

TEST(harness_provenance_iso8601)
{
    char buf[32];
    vpt_iso8601_now(buf, sizeof buf);
    CHECK_EQ_INT(strlen(buf), 20);
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    CHECK(end && *end == '\0');
    time_t now = time(NULL);
    time_t t = timegm(&tm);
    CHECK(t <= now && now - t < 5);
}

TEST(harness_results_status_names)
{
    static const char *const names[] = { "ok", "compile", "launch_limits", "runtime", "invalid_output", "timeout" };
    for (int i = 0; i < VPT_STATUS_COUNT; i++) {
        CHECK(strcmp(vpt_status_name((VptStatus)i), names[i]) == 0);
        VptStatus s;
        CHECK(vpt_status_parse(names[i], &s) == 0 && s == (VptStatus)i);
    }
    CHECK(strcmp(vpt_status_name(VPT_STATUS_TIMEOUT), "timeout") == 0);
    CHECK(strcmp(vpt_status_name((VptStatus)99), "unknown") == 0);
    VptStatus s;
    CHECK(vpt_status_parse("OK", &s) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "'OK'");
    CHECK_STR_CONTAINS(vpt_errmsg(), "invalid_output");
}

static int count_rows(json_t *row, size_t line, void *ctx)
{
    int *n = ctx;
    CHECK(json_integer_value(json_object_get(row, "i")) == *n);
    CHECK_EQ_INT(line, (size_t)*n + 1);
    (*n)++;
    return 0;
}

static char *read_text(const char *path)
{
    char *d = NULL;
    size_t n;
    if (vpt_read_file(path, 1 << 20, &d, &n) != 0) return NULL;
    return d;
}

TEST(harness_results_append_and_repair)
{
    char path[700];
    snprintf(path, sizeof path, "%s/results/h100/manix.jsonl", vpt_test_tmpdir());
    VptResultsFile *f = vpt_results_open(path); /* creates results/h100/ */
    REQUIRE_MSG(f, "%s", vpt_errmsg());
    for (int i = 0; i < 3; i++) {
        json_t *row = json_pack("{s:i, s:s, s:f}", "i", i, "note", "multi\nline \"text\"", "ms", 1.5 * i);
        REQUIRE(vpt_results_append(f, row) == 0);
        CHECK(row->refcount == 1); /* the reference stays the caller's */
        json_decref(row);
    }
    json_t *arr = json_array();
    CHECK(vpt_results_append(f, arr) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "not a JSON object");
    json_decref(arr);
    vpt_results_close(f);

    /* Each line is one JSON object. */
    char *text = read_text(path);
    REQUIRE(text);
    int lines = 0;
    for (char *p = text; *p; p++) lines += *p == '\n';
    CHECK_EQ_INT(lines, 3);
    CHECK(text[strlen(text) - 1] == '\n');
    free(text);

    /* A crash mid-append leaves a line without its newline. */
    FILE *fp = fopen(path, "ab");
    REQUIRE(fp);
    fputs("{\"i\":3,\"note\":\"interrup", fp);
    fclose(fp);
    int n = 0;
    CHECK(vpt_results_load(path, count_rows, &n) == 0); /* the reader skips it */
    CHECK_EQ_INT(n, 3);

    f = vpt_results_open(path);
    REQUIRE(f);
    text = read_text(path);
    CHECK(text && strstr(text, "interrup") == NULL); /* cut off at open */
    free(text);
    json_t *row = json_pack("{s:i}", "i", 3);
    REQUIRE(vpt_results_append(f, row) == 0);

    /* Another writer leaves a partial line while this file is open: the
     * next append cuts it first. */
    fp = fopen(path, "ab");
    REQUIRE(fp);
    fputs("{\"i\":99", fp);
    fclose(fp);
    json_object_set_new(row, "i", json_integer(4));
    REQUIRE(vpt_results_append(f, row) == 0);
    json_decref(row);
    vpt_results_close(f);

    n = 0;
    CHECK(vpt_results_load(path, count_rows, &n) == 0);
    CHECK_EQ_INT(n, 5);
    text = read_text(path);
    CHECK(text && strstr(text, "99") == NULL);
    free(text);
}

TEST(harness_results_repair_single_partial_line)
{
    char path[700];
    snprintf(path, sizeof path, "%s/only-partial.jsonl", vpt_test_tmpdir());
    REQUIRE(vpt_write_file_atomic(path, "{\"i\":", 5) == 0);
    VptResultsFile *f = vpt_results_open(path);
    REQUIRE(f);
    CHECK(vpt_file_size(path) == 0);
    vpt_results_close(f);
}

static int stop_at_two(json_t *row, size_t line, void *ctx)
{
    (void)row;
    (void)ctx;
    return line == 2 ? 7 : 0;
}

TEST(harness_results_load_errors)
{
    char path[700];
    snprintf(path, sizeof path, "%s/missing.jsonl", vpt_test_tmpdir());
    int n = 0;
    CHECK(vpt_results_load(path, count_rows, &n) == 0 && n == 0);

    snprintf(path, sizeof path, "%s/bad.jsonl", vpt_test_tmpdir());
    const char *bad = "{\"i\":0}\n{\"i\":1}\n\n[1,2]\n";
    REQUIRE(vpt_write_file_atomic(path, bad, strlen(bad)) == 0);
    CHECK(vpt_results_load(path, stop_at_two, NULL) == 7);
    n = 0;
    CHECK(vpt_results_load(path, count_rows, &n) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bad.jsonl:4: a results row must be a JSON object");

    const char *garbage = "{\"i\":0}\nnot json\n";
    REQUIRE(vpt_write_file_atomic(path, garbage, strlen(garbage)) == 0);
    n = 0;
    CHECK(vpt_results_load(path, count_rows, &n) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bad.jsonl:2: not valid JSON");

    CHECK(vpt_results_open("/proc/version/x.jsonl") == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "/proc/version");
}

TEST(harness_results_concurrent_writers)
{
    char path[700];
    snprintf(path, sizeof path, "%s/shared.jsonl", vpt_test_tmpdir());
    enum { WRITERS = 4, ROWS = 50 };
    fflush(NULL);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        REQUIRE(pids[w] >= 0);
        if (pids[w] == 0) {
            VptResultsFile *f = vpt_results_open(path);
            if (!f) _exit(2);
            char pad[2000];
            memset(pad, 'a' + w, sizeof pad - 1);
            pad[sizeof pad - 1] = '\0';
            for (int i = 0; i < ROWS; i++) {
                json_t *row = json_pack("{s:i, s:i, s:s}", "w", w, "i", i, "pad", pad);
                if (vpt_results_append(f, row) != 0) _exit(3);
                json_decref(row);
            }
            vpt_results_close(f);
            _exit(0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int st;
        REQUIRE(waitpid(pids[w], &st, 0) == pids[w]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    int counts[WRITERS] = { 0 };
    int total = 0;
    FILE *fp = fopen(path, "r");
    REQUIRE(fp);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        json_error_t err;
        json_t *row = json_loads(line, 0, &err);
        REQUIRE_MSG(row, "line %d: %s", total + 1, err.text);
        int w = (int)json_integer_value(json_object_get(row, "w"));
        int i = (int)json_integer_value(json_object_get(row, "i"));
        CHECK(w >= 0 && w < WRITERS);
        if (w >= 0 && w < WRITERS) {
            CHECK_EQ_INT(i, counts[w]); /* each writer's rows in order */
            counts[w]++;
        }
        total++;
        json_decref(row);
    }
    free(line);
    fclose(fp);
    CHECK_EQ_INT(total, WRITERS * ROWS);
}

TEST(harness_watchdog_deadline)
{
    VptWatchdog *w = vpt_watchdog_start(0.05, "kernel test_k");
    REQUIRE(w);
    CHECK(!vpt_watchdog_expired(w));
    usleep(80 * 1000);
    CHECK(vpt_watchdog_expired(w));
    CHECK_STR_CONTAINS(vpt_errmsg(), "kernel test_k still running after");
    CHECK_STR_CONTAINS(vpt_errmsg(), "(limit 0.05 s)");
    CHECK(vpt_watchdog_elapsed(w) >= 0.08);
    vpt_watchdog_stop(w);

    w = vpt_watchdog_start(0, "unlimited");
    REQUIRE(w);
    usleep(1000);
    CHECK(!vpt_watchdog_expired(w));
    vpt_watchdog_stop(w);
    vpt_watchdog_stop(NULL);
}

#include "harness/gpu_scene.h"

TEST(harness_volume_too_large_for_gpu_memory)
{
    /* an H100's 80 GB, most of it free: manix fits, a 4096^3 grid (8 bytes
     * a voxel: 512 GiB) does not, with both sizes in the message */
    size_t total = (size_t)80 << 30, free_b = (size_t)79 << 30;
    CHECK(vpt_gpu_scene_check_fits("manix", 128, 115, 128, NULL, free_b, total) == 0);
    CHECK(vpt_gpu_scene_check_fits("huge", 4096, 4096, 4096, NULL, free_b, total) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "huge");
    CHECK_STR_CONTAINS(vpt_errmsg(), "4096x4096x4096");
    CHECK_STR_CONTAINS(vpt_errmsg(), "MiB of GPU memory");
    CHECK_STR_CONTAINS(vpt_errmsg(), "--downsample 2"); /* 2048^3: 64 GiB fits in 79 */
    /* nearly full memory refuses even a small scene */
    CHECK(vpt_gpu_scene_check_fits("manix", 128, 115, 128, NULL, (size_t)32 << 20, total) == -1);
    CHECK(vpt_gpu_scene_check_fits("bad", 0, 1, 1, NULL, free_b, total) == -1);
}

/* The check covers what the estimators allocate: compact density textures
 * (2, 2 and 1 bytes a voxel) and majorant grids (12 bytes a cell); a grid
 * that fits with f32 alone is refused with every format, and the message
 * names the parts and that it fits without the compact formats. */
TEST(harness_gpu_check_counts_the_estimators)
{
    const int n = 1024; /* 8 GiB of f32 density and albedo */
    const double vox = (double)n * n * n;
    VptGpuEstimators e;
    memset(&e, 0, sizeof e);
    CHECK(vpt_gpu_scene_bytes(n, n, n, &e) == 8.0 * vox);
    CHECK(vpt_gpu_scene_bytes(n, n, n, NULL) == 8.0 * vox);
    vpt_gpu_estimators_add(&e, VPT_DENSITY_U8, 0);
    CHECK(vpt_gpu_scene_bytes(n, n, n, &e) == 9.0 * vox);
    vpt_gpu_estimators_add(&e, VPT_DENSITY_F32, 8);
    CHECK(vpt_gpu_scene_bytes(n, n, n, &e) == 9.0 * vox + 12.0 * 128 * 128 * 128);
    VptGpuEstimators all;
    vpt_gpu_estimators_all(&all);
    /* grids of 4 .. 128-voxel cells (codegen's vpt_majorant_cells), three floats a cell */
    const double cells =
        12.0 * (256.0 * 256 * 256 + 128.0 * 128 * 128 + 64.0 * 64 * 64 + 32.0 * 32 * 32 + 16.0 * 16 * 16 + 8.0 * 8 * 8);
    /* and skip's two-channel textures of each format: 2 x (4 + 2 + 2 + 1) bytes a voxel */
    CHECK(vpt_gpu_scene_bytes(n, n, n, &all) == 31.0 * vox + 4 * cells);
    /* 12 GiB free: f32 fits, every estimator (13 GiB and grids) does not */
    const size_t free_b = (size_t)12 << 30, total = (size_t)16 << 30;
    CHECK(vpt_gpu_scene_check_fits("head1024", n, n, n, NULL, free_b, total) == 0);
    CHECK(vpt_gpu_scene_check_fits("head1024", n, n, n, &all, free_b, total) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "compact density formats");
    CHECK_STR_CONTAINS(vpt_errmsg(), "majorant grids");
    CHECK_STR_CONTAINS(vpt_errmsg(), "without the compact density formats");
    CHECK_STR_CONTAINS(vpt_errmsg(), "12288 MiB of 16384 MiB are free");
}
