/* No silent failure, and hints that work.
 *
 * Every tool, given a missing, an empty and a garbage input file of each
 * kind it reads (volume, scene file, configs, replay, tuner cache, cubin
 * cache), exits non-zero (or, where a missing or empty file is a valid start,
 * such as a new tuner cache, exits 0) and prints a message that names the
 * file, and leaves no output file behind. Every hint a tool prints when it
 * cannot do what was asked is run as printed (on the CPU: the tests force
 * "no GPU" with VPT_CUDA_DRIVER pointing nowhere), with the tools on PATH as
 * after `make install`, and must succeed. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "base/embedded.h"
#include "harness/cuda_driver.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 16];

/* Runs "cmd 2>&1" (a shell command) into out; returns its exit status. */
static int sh(const char *cmd)
{
    int st = vpt_test_sh(cmd, out, sizeof out);
    REQUIRE(st != -2);
    return st;
}

/* The folder of the tools (bin/ beside the test binary). */
static const char *bin_dir(void)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s", vpt_test_tool("render"));
    char *slash = strrchr(dir, '/');
    REQUIRE(slash);
    *slash = '\0';
    REQUIRE_MSG(access(vpt_test_tool("render"), X_OK) == 0, "bin/render is missing: run make first");
    return dir;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    REQUIRE_MSG(f, "cannot write %s", path);
    REQUIRE(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* 256 fixed bytes that no reader accepts: binary, with NULs, not JSON/XML. */
static void write_garbage(const char *path)
{
    unsigned char g[256];
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < sizeof g; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        g[i] = (unsigned char)(x >> 24);
    }
    g[0] = 0xff, g[7] = 0; /* never valid UTF-8 or text */
    write_bytes(path, g, sizeof g);
}

typedef struct {
    const char *kind;     /* what the file is */
    const char *ext;      /* its name's ending */
    const char *cmd;      /* the command, %1$s the file, %2$s the scratch folder */
    int missing_ok;       /* a missing or empty file is a valid start (exit 0) */
} InputCase;

TEST(cli_bad_input_files_are_named)
{
    const char *bin = bin_dir();
    const char *tmp = vpt_test_tmpdir();
    static const InputCase cases[] = {
        {"volume", "mhd", "render --cpu --volume %1$s -o %2$s/o.png", 0},
        {"volume", "nrrd", "render --cpu --volume %1$s -o %2$s/o.png", 0},
        {"volume", "vol", "bench --config naiveSK --volume %1$s -o %2$s/b.jsonl", 0},
        {"volume", "mhd", "tune --volume %1$s --no-save --cache %2$s/t.jsonl", 0},
        {"scene file", "xml", "render --cpu --scene-file %1$s -o %2$s/o.png", 0},
        {"scene file", "xml", "bench --config naiveSK --scene-file %1$s -o %2$s/b.jsonl", 0},
        {"scene file", "xml", "tune --scene-file %1$s --no-save --cache %2$s/t.jsonl", 0},
        {"configs", "txt", "bench --scene bucky --configs %1$s -o %2$s/b.jsonl", 0},
        {"configs", "txt", "bench --precompile --arch sm_90 --configs %1$s --cache %2$s/cubin", 0},
        {"replay", "jsonl", "tune --replay %1$s", 0},
        {"tuner cache", "jsonl",
         "tune --replay tests/fixtures/tuner/bucky_exhaustive.jsonl --budget 2evals --quiet --cache %1$s", 1},
        {"tuner cache", "jsonl", "tune-plot %1$s -o %2$s/o.png", 0},
    };
    const char *states[] = {"missing", "empty", "garbage"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int s = 0; s < 3; s++) {
            char file[600], cmd[4096], line[2048];
            snprintf(file, sizeof file, "%s/%s-%zu.%s", tmp, states[s], c, cases[c].ext);
            unlink(file);
            if (s == 1) write_bytes(file, "", 0);
            if (s == 2) write_garbage(file);
            snprintf(line, sizeof line, cases[c].cmd, file, tmp);
            snprintf(cmd, sizeof cmd, "VPT_CUDA_DRIVER=/nonexistent %s/%s", bin, line);
            char img[600];
            snprintf(img, sizeof img, "%s/o.png", tmp);
            unlink(img);
            int rc = sh(cmd);
            const char *name = strrchr(file, '/') + 1;
            if (cases[c].missing_ok && s < 2) {
                CHECK_MSG(rc == 0, "%s (%s %s): exit %d: %s", line, states[s], cases[c].kind, rc, out);
            } else {
                CHECK_MSG(rc != 0, "%s (%s %s): exit 0", line, states[s], cases[c].kind);
                CHECK_MSG(rc != 3, "%s (%s %s): the file was not read before the GPU was asked for: %s", line,
                          states[s], cases[c].kind, out);
            }
            CHECK_MSG(strstr(out, name), "%s (%s %s): the output should name %s: %s", line, states[s],
                      cases[c].kind, name, out);
            CHECK_MSG(access(img, F_OK) != 0, "%s: left %s behind", line, img);
        }
    /* tune-score's fixtures folder: missing, holding nothing, holding garbage */
    for (int s = 0; s < 3; s++) {
        char dir[600], cmd[2048];
        snprintf(dir, sizeof dir, "%s/fixtures-%s", tmp, states[s]);
        if (s > 0) REQUIRE(mkdir(dir, 0700) == 0 || access(dir, F_OK) == 0);
        if (s == 2) {
            char f[700];
            snprintf(f, sizeof f, "%s/x_exhaustive.jsonl", dir);
            write_garbage(f);
        }
        snprintf(cmd, sizeof cmd, "%s/tune-score --fixtures %s", bin, dir);
        int rc = sh(cmd);
        CHECK_MSG(rc != 0, "%s: exit 0", cmd);
        CHECK_MSG(strstr(out, strrchr(dir, '/') + 1), "%s: the output should name the folder: %s", cmd, out);
    }
    /* bench's cubin cache folder: a file where the folder should be */
    char f[600], cmd[2048];
    snprintf(f, sizeof f, "%s/cubin-is-a-file", tmp);
    write_garbage(f);
    snprintf(cmd, sizeof cmd, "%s/bench --precompile --arch sm_90 --config naiveSK --cache %s", bin, f);
    CHECK(sh(cmd) != 0);
    CHECK_STR_CONTAINS(out, "cubin-is-a-file");
}

/* Runs every hint line of out ("  tune ...", "  render ...": the command
 * ends at three spaces, where its explanation starts) as printed, in cwd
 * with the tools on PATH; returns how many ran. */
static int run_hints(const char *printed, const char *cwd)
{
    static char copy[sizeof out];
    snprintf(copy, sizeof copy, "%s", printed);
    int n = 0;
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "  tune ", 7) && strncmp(line, "  render ", 9) && strncmp(line, "  bench ", 8)) continue;
        char *end = strstr(line + 2, "   ");
        if (end) *end = '\0';
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "cd %s && PATH=%s:$PATH %s", cwd, bin_dir(), line + 2);
        static char saved[sizeof out];
        int rc = sh(cmd);
        snprintf(saved, sizeof saved, "%s", out);
        CHECK_MSG(rc == 0, "the hint '%s' does not work as printed: exit %d: %s", line + 2, rc, saved);
        n++;
    }
    return n;
}

TEST(cli_hints_work_as_printed)
{
    const char *bin = bin_dir();
    const char *tmp = vpt_test_tmpdir();
    /* the hints name paths in the source tree (tests/fixtures) and write
     * out.png where they run: a scratch folder that links the tree's tests/ */
    char root[512], link[600], cmd[4096];
    REQUIRE_MSG(getcwd(root, sizeof root), "getcwd");
    REQUIRE_MSG(access("tests/fixtures/tuner/manix_exhaustive.jsonl", R_OK) == 0,
                "run the tests from the repository root (tests/fixtures is needed)");
    snprintf(link, sizeof link, "%s/tests", tmp);
    char target[600];
    snprintf(target, sizeof target, "%s/tests", root);
    REQUIRE(symlink(target, link) == 0);
    /* a small volume, with an absolute path so that it is found from there */
    char vol[600];
    snprintf(vol, sizeof vol, "%s/head.mhd", tmp);
    {
        char hdr[] = "ObjectType = Image\nNDims = 3\nDimSize = 6 5 4\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n";
        unsigned char data[sizeof hdr - 1 + 120];
        memcpy(data, hdr, sizeof hdr - 1);
        for (int i = 0; i < 120; i++) data[sizeof hdr - 1 + i] = (unsigned char)(i * 2);
        write_bytes(vol, data, sizeof data);
    }

    /* tune without a GPU: a recorded space and a CPU preview, of this scene */
    snprintf(cmd, sizeof cmd, "VPT_CUDA_DRIVER=/nonexistent %s/tune --scene manix", bin);
    CHECK_EQ_INT(sh(cmd), 3);
    CHECK_STR_CONTAINS(out, "render --cpu --scene manix");
    CHECK_EQ_INT(run_hints(out, tmp), 2);
    snprintf(cmd, sizeof cmd, "%s/out.png", tmp);
    CHECK_MSG(access(cmd, F_OK) == 0, "the render hint wrote no out.png");
    unlink(cmd);

    /* ... and of a volume: the hint keeps --like (issue 20) */
    snprintf(cmd, sizeof cmd, "VPT_CUDA_DRIVER=/nonexistent %s/tune --volume %s --like manix", bin, vol);
    CHECK_EQ_INT(sh(cmd), 3);
    CHECK_STR_CONTAINS(out, "--like manix");
    CHECK_EQ_INT(run_hints(out, tmp), 2);

    /* render without a GPU: the same render on the CPU */
    snprintf(cmd, sizeof cmd, "VPT_CUDA_DRIVER=/nonexistent %s/render --volume %s --like manix --spp 1 --config best "
                              "-o %s/gpu.png", bin, vol, tmp);
    CHECK_EQ_INT(sh(cmd), 3);
    CHECK_STR_CONTAINS(out, "--like manix --spp 1 -o");
    CHECK_EQ_INT(run_hints(out, tmp), 1);
    snprintf(cmd, sizeof cmd, "%s/gpu.png", tmp);
    CHECK_MSG(access(cmd, F_OK) == 0, "the render hint wrote no gpu.png");

    /* a usage error's "try 'render --help'" */
    snprintf(cmd, sizeof cmd, "%s/render --scene manix", bin);
    CHECK_EQ_INT(sh(cmd), 2);
    CHECK_STR_CONTAINS(out, "try 'render --help'");
    snprintf(cmd, sizeof cmd, "PATH=%s:$PATH render --help", bin);
    CHECK_EQ_INT(sh(cmd), 0);

    /* an unwritable --export-mitsuba is named as such, not as -o */
    snprintf(cmd, sizeof cmd, "%s/render --scene manix --export-mitsuba %s/nodir/x.xml", bin, tmp);
    CHECK_EQ_INT(sh(cmd), 1);
    CHECK_STR_CONTAINS(out, "--export-mitsuba");
    CHECK(strstr(out, "-o ") == NULL);
}

/* On a GPU: tune's "winner saved to ... (render ... --config best ...)" and
 * the command it names, for a volume tuned with --like. */
TEST(cli_tune_winner_hint_works_on_the_gpu)
{
    if (vpt_cuda_load() != 0) SKIP("no CUDA GPU: %s", vpt_errmsg());
    const char *bin = bin_dir();
    const char *tmp = vpt_test_tmpdir();
    char vol[600], cmd[4096];
    snprintf(vol, sizeof vol, "%s/cranium.mhd", tmp);
    char hdr[] = "ObjectType = Image\nNDims = 3\nDimSize = 6 5 4\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n";
    unsigned char data[sizeof hdr - 1 + 120];
    memcpy(data, hdr, sizeof hdr - 1);
    for (int i = 0; i < 120; i++) data[sizeof hdr - 1 + i] = (unsigned char)(i * 2);
    write_bytes(vol, data, sizeof data);
    /* in the scratch folder: results/<gpu>/best/ is written there */
    snprintf(cmd, sizeof cmd, "cd %s && %s/tune --volume %s --like manix --budget 3evals --top 1 --quiet", tmp, bin, vol);
    int rc = sh(cmd);
    REQUIRE_MSG(rc == 0, "%s: exit %d: %s", cmd, rc, out);
    char *w = strstr(out, "winner saved to ");
    REQUIRE_MSG(w, "no winner line: %s", out);
    char *open = strchr(w, '('), *close = open ? strchr(open, ')') : NULL;
    REQUIRE_MSG(open && close, "the winner line names no command: %s", w);
    *close = '\0';
    CHECK_STR_CONTAINS(open + 1, "--like manix --config best");
    char hint[2048];
    snprintf(hint, sizeof hint, "%s", open + 1);
    snprintf(cmd, sizeof cmd, "cd %s && PATH=%s:$PATH %s", tmp, bin, hint);
    rc = sh(cmd);
    CHECK_MSG(rc == 0, "the hint '%s' does not work as printed: exit %d: %s", hint, rc, out);
}

/* --version on every tool: the commit built from, NVRTC, the driver (or that
 * there is none); experiments/run answers with bench's. */
TEST(cli_version_on_every_tool)
{
    const char *bin = bin_dir();
    const char *tools[] = {"render", "bench", "tune", "tune-score", "tune-plot"};
    char want[128];
    snprintf(want, sizeof want, "(vptune) commit %s\n", vpt_git_commit);
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s/%s --version", bin, tools[i]);
        CHECK_EQ_INT(sh(cmd), 0);
        CHECK_MSG(!strncmp(out, tools[i], strlen(tools[i])) && strstr(out, want), "%s: %s", cmd, out);
        CHECK_MSG(strstr(out, "\nNVRTC ") && strstr(out, "\ndriver"), "%s: %s", cmd, out);
    }
    if (access("experiments/run", X_OK) == 0 && system("python3 -c '' >/dev/null 2>&1") == 0) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "python3 experiments/run --bin %s --version", bin);
        CHECK_EQ_INT(sh(cmd), 0);
        CHECK_STR_CONTAINS(out, want);
    }
}
