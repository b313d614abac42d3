/* Nonsensical command-line values for bin/render and bin/bench: each is a
 * usage error (exit status 2) whose message names the flag and says what is
 * allowed, and nothing is written. Huge sizes whose products overflow, and
 * volumes larger than the machine's memory, fail before any allocation. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "scenes/volume.h"
#include "scenes/formats/volume_format.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 16];

/* Runs tool with args (shell words), stdout and stderr into out; returns its
 * exit status (-1 when it did not exit normally). */
static int run(const char *tool, const char *args)
{
    const char *bin = vpt_test_tool(tool);
    REQUIRE_MSG(access(bin, X_OK) == 0, "%s is missing: run the tests from the repository root after make", bin);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

typedef struct {
    const char *args;    /* what follows the tool's common arguments */
    const char *says[3]; /* substrings the message must hold */
} Case;

static void expect_usage_errors(const char *tool, const char *common, const Case *cases, size_t n, int status)
{
    for (size_t i = 0; i < n; i++) {
        char args[2048];
        snprintf(args, sizeof args, "%s %s", common, cases[i].args);
        int rc = run(tool, args);
        CHECK_MSG(rc == status, "%s %s: exit status %d, expected %d: %s", tool, cases[i].args, rc, status, out);
        for (int k = 0; k < 3 && cases[i].says[k]; k++)
            CHECK_MSG(strstr(out, cases[i].says[k]), "%s %s: the message should contain '%s': %s", tool,
                      cases[i].args, cases[i].says[k], out);
    }
}

TEST(cli_limits_render)
{
    const char *dir = vpt_test_tmpdir();
    char common[1024];
    snprintf(common, sizeof common, "--cpu --scene bucky -o %s/x.pfm", dir);
    static const Case cases[] = {
        {"--spp 0", {"--spp", "[1, 16777216]"}},
        {"--spp -3", {"--spp", "[1, 16777216]"}},
        {"--spp 16777217", {"--spp", "[1, 16777216]"}},
        {"--width 0", {"--width", "[1, 65536]"}},
        {"--width -64", {"--width", "[1, 65536]"}},
        {"--height 65537", {"--height", "[1, 65536]"}},
        {"--width 99999999999999999999999", {"--width", "[1, 65536]"}},
        {"--width 1.5", {"--width", "not an integer"}},
        {"--width 65536 --height 65536", {"65536x65536", "more than 67108864 pixels"}},
        {"--width 16384 --height 8192", {"16384x8192", "more than 67108864 pixels"}},
        {"--seed -1", {"--seed", "non-negative"}},
        {"--seed 4294967296", {"--seed", "[0, 4294967295]"}},
        {"--threads 0", {"--threads", "[1, 1024]"}},
        {"--threads 100000", {"--threads", "[1, 1024]"}},
        {"--max-depth -1", {"--max-depth", "[0, 1048576]"}},
        {"--rr -2", {"--rr", "[-1, 1048576]"}},
    };
    expect_usage_errors("render", common, cases, sizeof cases / sizeof cases[0], 2);
    CHECK_EQ_INT(count_files(dir), 0);
}

TEST(cli_limits_render_volume_options)
{
    const char *dir = vpt_test_tmpdir();
    char common[1024];
    snprintf(common, sizeof common, "--cpu --volume %s/v.raw -o %s/x.pfm", dir, dir);
    static const Case cases[] = {
        {"--dims 0,4,4 --type u8", {"--dims", "[1, 1048576]"}},
        {"--dims 4,-4,4 --type u8", {"--dims", "[1, 1048576]"}},
        {"--dims 4,4 --type u8", {"--dims", "X,Y,Z"}},
        {"--dims 4,4,4,4 --type u8", {"--dims", "more than three"}},
        {"--dims 4,4,4 --type u64", {"--type", "u8, i8, u16, i16, u32, i32, f32 or f64"}},
        {"--dims 4,4,4 --type u8 --downsample 0", {"--downsample", "[1, 1024]"}},
        {"--dims 4,4,4 --type u8 --upsample 0", {"--upsample", "[1, 1024]"}},
        {"--dims 4,4,4 --type u8 --transfer gamma", {"--transfer", "ct, linear, identity or auto"}},
    };
    expect_usage_errors("render", common, cases, sizeof cases / sizeof cases[0], 2);
    /* Sizes that parse but no loader takes: a runtime error (1) naming the
     * limit, before anything is read or allocated. */
    char raw[700];
    snprintf(raw, sizeof raw, "%s/v.raw", dir);
    FILE *fp = fopen(raw, "wb");
    REQUIRE(fp);
    fputs("12345678", fp);
    fclose(fp);
    static const Case huge[] = {
        {"--dims 1048576,1,1 --type u8", {"--dims", "exceeds the limit of 65536"}},
        {"--dims 65536,65536,65536 --type f64", {"more than the 8589934592 allowed"}},
        {"--dims 4,4,4 --type u8", {"expected 64 bytes", "file has 8"}},
    };
    char args[1024];
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        snprintf(args, sizeof args, "--cpu --volume %s %s -o %s/x.pfm", raw, huge[i].args, dir);
        CHECK_EQ_INT(run("render", args), 1);
        for (int k = 0; k < 3 && huge[i].says[k]; k++) CHECK_STR_CONTAINS(out, huge[i].says[k]);
    }
    CHECK_EQ_INT(count_files(dir), 1); /* v.raw */
}

TEST(cli_limits_render_kernel_configs)
{
    const char *dir = vpt_test_tmpdir();
    char common[1024];
    snprintf(common, sizeof common, "--scene bucky --spp 1 -o %s/x.pfm", dir);
    static const Case cases[] = {
        {"--config streamingSK,block=100", {"block=100", "allowed: a multiple of 32 in 32..1024"}},
        {"--config block=0", {"block=0", "allowed: a multiple of 32 in 32..1024"}},
        {"--config block=2048", {"block=2048", "allowed: a multiple of 32 in 32..1024"}},
        {"--config regenerationSK-block,maxrregcount=255,block=1024",
         {"register file", "allowed: block=32..256 at maxrregcount=255", "maxrregcount=24..64 (or 0) at block=1024"}},
        {"--config naiveSK,maxrregcount=65,block=1024", {"allocated as 72", "block=32..896"}},
        {"--config ppt=3", {"ppt=3", "allowed: 1, 2, 4"}},
        {"--config maxrregcount=8", {"maxrregcount=8", "24..255"}},
        {"--config grid=65", {"grid=65", "0..64"}},
        {"--config naiveSK,grid=4", {"grid=4 needs a persistent kernel"}},
        {"--config streamingMK,regen=warp", {"regen=warp"}},
    };
    expect_usage_errors("render", common, cases, sizeof cases / sizeof cases[0], 2);
    CHECK_EQ_INT(count_files(dir), 0);
}

TEST(cli_limits_bench)
{
    const char *dir = vpt_test_tmpdir();
    char common[1024];
    snprintf(common, sizeof common, "--scene bucky --config naiveSK -o %s/r.jsonl", dir);
    static const Case cases[] = {
        {"--spp 0", {"--spp", "[1, 1048576]"}},
        {"--width 0", {"--width", "[1, 16384]"}},
        {"--width 20000", {"--width", "[1, 16384]"}},
        {"--height -4", {"--height", "[1, 16384]"}},
        {"--width 16384 --height 16384", {"16384x16384", "67108864 pixels"}},
        {"--seed 4294967296", {"--seed", "[0, 4294967295]"}},
        {"--jobs 0", {"--jobs", "[1, 256]"}},
        {"--timeout 0", {"--timeout", "[0.1, 86400]"}},
        {"--timeout nan", {"--timeout", "not a finite number"}},
        {"--max-reps 0", {"--max-reps", "[1, 1000]"}},
        {"--max-time -1", {"--max-time", "[0, 86400]"}},
        {"--target-ci 2", {"--target-ci", "[0.0001, 1]"}},
        {"--config block=48", {"block=48", "allowed: a multiple of 32 in 32..1024"}},
        {"--spp", {"--spp needs a value"}},
        {"--frobnicate", {"--frobnicate"}},
    };
    expect_usage_errors("bench", common, cases, sizeof cases / sizeof cases[0], 2);
    /* A results file that cannot be written fails before the GPU is asked
     * for, naming the path. */
    char args[1024], file[700];
    snprintf(file, sizeof file, "%s/results", dir);
    fclose(fopen(file, "w"));
    snprintf(args, sizeof args, "--scene bucky --config naiveSK -o %s/gpu/bench.jsonl", file);
    CHECK_EQ_INT(run("bench", args), 1);
    CHECK_STR_CONTAINS(out, "/results/gpu/bench.jsonl");
    CHECK_STR_CONTAINS(out, "not a directory");
    /* Without a GPU a bench leaves no empty results file behind. */
    snprintf(args, sizeof args, "--scene bucky --config naiveSK -o %s/new.jsonl", dir);
    if (run("bench", args) == 0) SKIP("a GPU is present: bench measured");
    CHECK_EQ_INT(count_files(dir), 1); /* the file named results */
}

/* Volume headers stating a size beyond this machine's physical memory are
 * refused before allocating, with a message saying so, even when the byte
 * cap would allow them. */
TEST(cli_limits_volume_beyond_physical_memory)
{
    size_t phys = vptv_physical_memory();
    REQUIRE(phys > ((size_t)1 << 20) && phys < SIZE_MAX);
    char hdr[512];
    /* 65536^3 doubles: 2 PiB, more than any machine has. */
    int n = snprintf(hdr, sizeof hdr,
                     "NRRD0004\ntype: double\ndimension: 3\nsizes: 65536 65536 65536\nendian: little\n"
                     "encoding: raw\n\n");
    VptVolume v;
    vpt_error_clear();
    CHECK_EQ_INT(vpt_volume_parse_nrrd("huge.nrrd", NULL, (const unsigned char *)hdr, (size_t)n, SIZE_MAX, &v), -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "huge.nrrd");
    CHECK_STR_CONTAINS(vpt_errmsg(), "physical memory");
    vpt_test_log("%s", vpt_errmsg());
    CHECK(v.data == NULL);
    n = snprintf(hdr, sizeof hdr,
                 "ObjectType = Image\nNDims = 3\nDimSize = 65536 65536 65536\nElementType = MET_FLOAT\n"
                 "ElementDataFile = LOCAL\n");
    vpt_error_clear();
    CHECK_EQ_INT(vpt_volume_parse_metaimage("huge.mha", NULL, (const unsigned char *)hdr, (size_t)n, SIZE_MAX, &v),
                 -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "physical memory");
    /* Just over the machine's memory, as a shape check: the float grid is
     * what a load holds (the stored data streams into it). */
    int64_t dims[3] = {65536, 65536, (int64_t)(phys / ((size_t)65536 * 65536 * 4)) + 1};
    VptvShape sh;
    if (dims[2] <= 65536) {
        vpt_error_clear();
        CHECK_EQ_INT(vptv_shape("x", "sizes", dims, 3, VPT_SCALAR_F32, SIZE_MAX, &sh), -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), "physical memory");
    }
    /* A small one passes. */
    int64_t small[3] = {64, 64, 64};
    CHECK_EQ_INT(vptv_shape("x", "sizes", small, 3, VPT_SCALAR_F32, SIZE_MAX, &sh), 0);
    /* Compressed data that cannot inflate to the stated size is refused
     * before the output buffer is allocated. */
    unsigned char gz[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0x63, 0x60, 0xa0, 0x0c, 0, 0, 0x36, 0x63, 0x8d, 0x75,
                          0x40, 0, 0, 0};
    char buf[512];
    n = snprintf(buf, sizeof buf, "NRRD0004\ntype: float\ndimension: 3\nsizes: 1024 1024 512\nendian: little\n"
                                  "encoding: gzip\n\n");
    memcpy(buf + n, gz, sizeof gz);
    vpt_error_clear();
    CHECK_EQ_INT(vpt_volume_parse_nrrd("bomb.nrrd", NULL, (unsigned char *)buf, (size_t)n + sizeof gz, 0, &v), -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "1032:1");
    vpt_test_log("%s", vpt_errmsg());
}
