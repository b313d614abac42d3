/* tune and bench on every GPU they are given, on real GPUs (skipped, saying
 * why, without one; the MPI test also without an MPI build): --gpus all,
 * and two MPI ranks sharing GPU 0, which must take turns. The same paths
 * without a GPU: test_tuner_pool.c and test_tuner_mpi.c. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "harness/cuda_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A small tune: bucky at 64x64, 4 spp, 8 random configs, the global
 * majorant only. */
#define SMALL_TUNE "--scene bucky --width 64 --height 64 --spp 4 --strategy random --budget 8evals --seed 2 " \
                   "--estimators global --top 2 --no-save --quiet"

static char out[1 << 16];

static int gpu_count(void)
{
    if (vpt_cuda_load() != 0) SKIP("no CUDA GPU: %s", vpt_errmsg());
    int n = 0;
    if (VPT_CU_TRY(cuDeviceGetCount, &n) || n < 1) SKIP("no CUDA GPU: %s", vpt_errmsg());
    return n;
}

static int count_in_file(const char *path, const char *what)
{
    char cmd[1200], n[64];
    snprintf(cmd, sizeof cmd, "grep -c -- '%s' %s", what, path);
    vpt_test_sh(cmd, n, sizeof n);
    return atoi(n);
}

TEST_TIMEOUT(gpu_tune_gpus_all, 600)
{
    int gpus = gpu_count();
    char cache[600], cmd[2048];
    snprintf(cache, sizeof cache, "%s/all.jsonl", vpt_test_tmpdir());
    snprintf(cmd, sizeof cmd, "%s " SMALL_TUNE " --gpus all --cache %s", vpt_test_tool("tune"), cache);
    REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    vpt_test_log("%s", out);
    CHECK_STR_CONTAINS(out, "random: 8 evaluations");
    CHECK_STR_CONTAINS(out, "finalists re-measured:");
    if (gpus == 1) { /* the tune on one GPU, as it always was */
        CHECK(!strstr(out, "measuring on"));
        CHECK_EQ_INT(count_in_file(cache, "measured_by"), 0);
    } else {
        char line[64];
        snprintf(line, sizeof line, "measuring on %d GPUs side by side", gpus);
        CHECK_STR_CONTAINS(out, line);
        CHECK_EQ_INT(count_in_file(cache, "\"measured_by\":{\"gpu\":\"GPU-"), 8);
    }
}

TEST_TIMEOUT(gpu_tune_mpi_two_ranks_take_turns_on_one_gpu, 600)
{
    gpu_count();
    char shim[600];
    snprintf(shim, sizeof shim, "%s", vpt_test_tool("libvptune-mpi.so"));
    if (access(shim, R_OK) != 0) SKIP("this build has no MPI (%s missing): make MPI=1", shim);
    if (vpt_test_sh("command -v mpirun", out, sizeof out) != 0) SKIP("mpirun is not installed (openmpi-bin)");
    char cache[600], cmd[2048];
    snprintf(cache, sizeof cache, "%s/np2.jsonl", vpt_test_tmpdir());
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none "
             "timeout -k 5 500 mpirun --oversubscribe -np 2 %s " SMALL_TUNE " --gpus 0 --cache %s",
             vpt_test_tool("tune"), cache);
    REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    vpt_test_log("%s", out);
    CHECK_STR_CONTAINS(out, "measuring with 2 evaluators on 1 GPU");
    CHECK_STR_CONTAINS(out, "(shares its GPU: they measure in turn)");
    CHECK_STR_CONTAINS(out, "random: 8 evaluations");
    CHECK_STR_CONTAINS(out, "finalists re-measured:");
    CHECK_EQ_INT(count_in_file(cache, "\"measured_by\":{\"gpu\":\"GPU-"), 8);
    CHECK(count_in_file(cache, "\"rank\":0}") + count_in_file(cache, "\"rank\":1}") == 8);
}

TEST_TIMEOUT(gpu_bench_gpus_all_keeps_config_order, 600)
{
    gpu_count();
    char rows[600], cmd[2048];
    snprintf(rows, sizeof rows, "%s/bench.jsonl", vpt_test_tmpdir());
    snprintf(cmd, sizeof cmd, "%s --scene bucky --width 64 --height 64 --spp 4 --config streamingSK --config naiveSK "
             "--config regenerationSK-thread --gpus all --max-time 1 -o %s", vpt_test_tool("bench"), rows);
    REQUIRE_MSG(vpt_test_sh(cmd, out, sizeof out) == 0, "%s\n%s", cmd, out);
    vpt_test_log("%s", out);
    snprintf(cmd, sizeof cmd, "grep -o '\"schedule\":\"[^\"]*\"' %s | tr '\\n' ' '", rows);
    vpt_test_sh(cmd, out, sizeof out);
    CHECK_STR_CONTAINS(out, "\"schedule\":\"streamingSK\" \"schedule\":\"naiveSK\" \"schedule\":\"regenerationSK-thread\"");
    CHECK_EQ_INT(count_in_file(rows, "\"uuid\":\"GPU-"), 3);
}
