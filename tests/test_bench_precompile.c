/* bin/bench --precompile: fills the cubin cache for an architecture without
 * a GPU, with the entries a GPU session looks up (the evaluator's request of
 * the same configs); a second run finds them all; a compile that crashes its
 * worker is reported as a failed compile, and the run goes on. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "codegen/config.h"
#include "codegen/kernel_source.h"
#include "harness/cubin_cache.h"
#include "harness/variant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 16];

/* Runs "env bench args" (env: NAME=VALUE words or ""), stdout and stderr
 * into out; returns the exit status (-1 when it did not exit normally). */
static int bench(const char *env, const char *args)
{
    const char *bin = vpt_test_tool("bench");
    REQUIRE_MSG(access(bin, X_OK) == 0, "%s is missing: run the tests from the repository root after make", bin);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s %s 2>&1", env, bin, args);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *write_configs(void)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/configs.txt", vpt_test_tmpdir());
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fputs("# what a GPU run will measure\n"
          "naiveSK\n"
          "regenerationSK-warp\n"
          "naiveMK   # multi kernel\n"
          "regen=warp,reorder=compact\n", f);
    fclose(f);
    return path;
}

TEST_TIMEOUT(bench_precompile_fills_the_cache_without_a_gpu, 300)
{
    const char *cfg = write_configs();
    char cache[700], args[2048];
    snprintf(cache, sizeof cache, "%s/cubin", vpt_test_tmpdir());
    snprintf(args, sizeof args, "--precompile --arch sm_90 --configs %s --cache %s --jobs 2", cfg, cache);
    int rc = bench("", args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    CHECK_STR_CONTAINS(out, "2 compiles at a time in worker processes");
    CHECK_STR_CONTAINS(out, "cache key: Cuda compilation tools, release ");
    CHECK_STR_CONTAINS(out, "(reference)");
    CHECK_STR_CONTAINS(out, "reorder=compact needs regen=block");
    /* naiveSK is the reference: compiled once. */
    CHECK_STR_CONTAINS(out, "3 kernels for sm_90: 3 compiled, 0 already cached, 0 failed to compile (1 config breaks "
                            "a rule: no kernel)");
    vpt_test_log("%s", out);

    /* What a GPU session on an sm_90 device asks the cache for is there. */
    VptCubinCache *c = vpt_cubin_cache_open(cache);
    REQUIRE(c);
    static const char *const names[] = {"naiveSK", "regenerationSK-warp", "naiveMK"};
    for (int i = 0; i < 3; i++) {
        VptConfig conf;
        VptKernelSource ks;
        REQUIRE(vpt_config_parse(names[i], &conf) == 0 && vpt_kernel_source_build(&conf, &ks) == 0);
        VptCompileRequest req = vpt_compile_request_of(&ks, 9, 0);
        VptCompileResult r;
        CHECK_MSG(vpt_cubin_cache_lookup(c, &req, &r) == 1, "%s is not in the cache", names[i]);
        vpt_compile_result_free(&r);
        req = vpt_compile_request_of(&ks, 8, 0); /* another architecture is not */
        CHECK(vpt_cubin_cache_lookup(c, &req, &r) == 0);
        vpt_kernel_source_free(&ks);
    }
    vpt_cubin_cache_close(c);

    /* Again: nothing left to compile (as on the machine the cache is
     * carried to, when its toolkit matches). */
    rc = bench("", args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    CHECK_STR_CONTAINS(out, "0 compiled, 3 already cached, 0 failed to compile");
}

TEST_TIMEOUT(bench_precompile_worker_crash_is_a_failed_compile, 300)
{
    const char *cfg = write_configs();
    char args[2048];
    snprintf(args, sizeof args, "--precompile --arch sm_90 --configs %s --cache %s/cubin --jobs 2", cfg,
             vpt_test_tmpdir());
    /* The warp kernel's source starts "// vptune kernel: regen=warp,...". */
    int rc = bench("VPT_COMPILE_INJECT=segv@regen=warp,", args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    CHECK_STR_CONTAINS(out, "FAILED");
    CHECK_STR_CONTAINS(out, "NVRTC compile of vptune_regenerationSK-warp.cu failed: compile worker process ");
    CHECK_STR_CONTAINS(out, "died: killed by signal 11 (Segmentation fault)");
    CHECK_STR_CONTAINS(out, "2 compiled, 0 already cached, 1 failed to compile");
    vpt_test_log("%s", out);
}

TEST(bench_precompile_usage_errors)
{
    const char *cfg = write_configs();
    static const struct {
        const char *args;
        const char *says;
    } cases[] = {
        {"--precompile --configs CFG", "--precompile needs --arch sm_XY"},
        {"--precompile --arch sm_9x --configs CFG", "--arch: 'sm_9x' is not a GPU architecture"},
        {"--precompile --arch 2.0 --configs CFG", "--arch: '2.0' is not a GPU architecture"},
        {"--arch sm_90 --scene bucky --configs CFG", "--arch is for --precompile"},
        {"--precompile --arch sm_90", "nothing to precompile"},
        {"--precompile --arch", "--arch needs a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[2048];
        const char *at = strstr(cases[i].args, "CFG");
        if (at) snprintf(args, sizeof args, "%.*s%s", (int)(at - cases[i].args), cases[i].args, cfg);
        else snprintf(args, sizeof args, "%s", cases[i].args);
        int rc = bench("", args);
        CHECK_MSG(rc == 2, "%s: exit %d: %s", cases[i].args, rc, out);
        CHECK_MSG(strstr(out, cases[i].says), "%s: should say '%s': %s", cases[i].args, cases[i].says, out);
    }
}

/* --precompile --roofline compiles the probes a measurement of the same
 * configs runs: the global probe and one grid probe per majorant grid the
 * configs use (each once, whatever their formats), under the cache keys the
 * evaluator asks for. */
TEST_TIMEOUT(bench_precompile_roofline_compiles_the_configs_grid_probes, 300)
{
    char cfg[700], cache[700], args[2048];
    snprintf(cfg, sizeof cfg, "%s/grid_configs.txt", vpt_test_tmpdir());
    FILE *f = fopen(cfg, "w");
    REQUIRE(f);
    fputs("naiveSK,majorant=grid8\n"
          "regenerationSK-warp,majorant=grid8,density=u8\n"
          "regenerationSK-thread,majorant=grid32,density=f16\n"
          "regenerationSK-warp,majorant=skip,density=u8\n"
          "regenerationSK-thread\n", f);
    fclose(f);
    snprintf(cache, sizeof cache, "%s/cubin-roofline", vpt_test_tmpdir());
    snprintf(args, sizeof args, "--precompile --arch sm_90 --roofline --configs %s --cache %s --jobs 2", cfg, cache);
    int rc = bench("", args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    CHECK_STR_CONTAINS(out, "  roofline probe\n");
    CHECK_STR_CONTAINS(out, "  roofline probe, majorant=grid8\n");
    CHECK_STR_CONTAINS(out, "  roofline probe, majorant=grid32\n");
    CHECK_STR_CONTAINS(out, "  roofline probe, majorant=skip\n");
    CHECK_MSG(!strstr(out, "majorant=grid4\n") && !strstr(out, "majorant=grid16\n"), "a probe no config needs: %s",
              out);
    /* the reference, 5 configs, 4 probes */
    CHECK_STR_CONTAINS(out, "10 kernels for sm_90: 10 compiled, 0 already cached, 0 failed to compile");
    vpt_test_log("%s", out);

    VptCubinCache *c = vpt_cubin_cache_open(cache);
    REQUIRE(c);
    static const int cells[] = {0, 8, 32, -1};
    for (int i = 0; i < 4; i++) {
        VptKernelSource ks;
        REQUIRE(vpt_kernel_source_build_roofline(256, cells[i], &ks) == 0);
        VptCompileRequest req = vpt_compile_request_of(&ks, 9, 0);
        VptCompileResult r;
        CHECK_MSG(vpt_cubin_cache_lookup(c, &req, &r) == 1, "the probe of majorant cells %d is not in the cache",
                  cells[i]);
        vpt_compile_result_free(&r);
        vpt_kernel_source_free(&ks);
    }
    vpt_cubin_cache_close(c);

    /* without --roofline no probe; without grids, the global probe only */
    snprintf(args, sizeof args, "--precompile --arch sm_90 --roofline --config regenerationSK-thread --cache %s", cache);
    rc = bench("", args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    CHECK_STR_CONTAINS(out, "  roofline probe\n");
    CHECK(!strstr(out, "roofline probe, majorant="));
    CHECK_STR_CONTAINS(out, "0 compiled, 3 already cached, 0 failed to compile");
}

TEST(bench_help_describes_the_roofline_probes)
{
    int rc = bench("", "--help");
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    CHECK_STR_CONTAINS(out, "--roofline measures the divergence-free Woodcock step loop");
    CHECK_STR_CONTAINS(out, "each majorant grid the configs use (majorant=gridC)");
    CHECK_STR_CONTAINS(out, "against the probe of its own\nmajorant and format");
}
