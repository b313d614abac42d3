/* The run-time loaded CUDA driver API: loading without a driver, the check
 * macros' messages, sticky errors and driver release parsing. None of these
 * needs a GPU; where a driver is present the no-driver cases skip. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "harness/cuda_driver.h"
#include "harness/nvrtc_compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(harness_cuda_load_without_driver)
{
    if (vpt_cuda_load() == 0) SKIP("a CUDA driver was found: loading succeeded");
    const char *msg = vpt_errmsg();
    /* Either no libcuda.so.1 at all (a build box) or no usable GPU. */
    if (strstr(msg, "no CUDA driver")) CHECK_STR_CONTAINS(msg, "libcuda.so.1");
    else CHECK_STR_CONTAINS(msg, "no CUDA GPU");
    CHECK(!vpt_cuda_loaded());
    /* The second call gives the same answer, again with its message. */
    vpt_error_clear();
    CHECK(vpt_cuda_load() == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no CUDA");
    CHECK(vpt_cu.cuInit == NULL && vpt_cu.cuLaunchKernel == NULL);
}

TEST(harness_cuda_load_bad_driver_path)
{
    setenv("VPT_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    CHECK(vpt_cuda_load() == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no CUDA driver: cannot load /nonexistent/libcuda.so.1 (");
    VptGpu g;
    CHECK(vpt_gpu_open(0, &g) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no CUDA driver");
    vpt_gpu_close(&g); /* harmless on a never-opened GPU */
}

TEST(harness_cuda_load_not_a_driver)
{
    /* A library that loads but is no CUDA driver. */
    setenv("VPT_CUDA_DRIVER", "libz.so.1", 1);
    CHECK(vpt_cuda_load() == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "libz.so.1");
    CHECK_STR_CONTAINS(vpt_errmsg(), "cuGetProcAddress_v2");
}

TEST(harness_cuda_result_message)
{
    int have_driver = vpt_cuda_load() == 0;
    vpt_cu_clear_last_error();
    CHECK(vpt_cu_result(CUDA_SUCCESS, "cuMemAlloc(&p, bytes)", "harness/gpu.c", 123) == 0);
    CHECK(vpt_cu_last_error() == CUDA_SUCCESS);
    CHECK(vpt_cu_result(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(&p, bytes)", "harness/gpu.c", 123) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "cuMemAlloc(&p, bytes) failed at harness/gpu.c:123: ");
    if (have_driver) CHECK_STR_CONTAINS(vpt_errmsg(), "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    else CHECK_STR_CONTAINS(vpt_errmsg(), "CUresult 2");
    CHECK(vpt_cu_last_error() == CUDA_ERROR_OUT_OF_MEMORY);
    /* A success does not hide the last failure. */
    CHECK(vpt_cu_result(CUDA_SUCCESS, "cuInit(0)", "x.c", 1) == 0);
    CHECK(vpt_cu_last_error() == CUDA_ERROR_OUT_OF_MEMORY);
    vpt_cu_clear_last_error();
    CHECK(vpt_cu_last_error() == CUDA_SUCCESS);
}

TEST(harness_cuda_try_before_load_fails_cleanly)
{
    setenv("VPT_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    CHECK(vpt_cuda_load() == -1);
    CUdeviceptr p = 0;
    size_t bytes = 64;
    int line = __LINE__ + 1;
    CHECK(VPT_CU_TRY(cuMemAlloc, &p, bytes) == -1);
    char where[64];
    snprintf(where, sizeof where, "test_harness_cuda.c:%d", line);
    /* The call text keeps the unversioned name (not cuMemAlloc_v2). */
    CHECK_STR_CONTAINS(vpt_errmsg(), "cuMemAlloc(&p, bytes)");
    CHECK_STR_CONTAINS(vpt_errmsg(), where);
    CHECK_STR_CONTAINS(vpt_errmsg(), "before the CUDA driver was loaded");
    CHECK(VPT_CU_TRY(cuCtxSynchronize) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "cuCtxSynchronize()");
}

TEST(harness_cuda_check_is_fatal)
{
    setenv("VPT_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(2);
        VPT_CU_CHECK(cuCtxSynchronize);
        _exit(0);
    }
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}

TEST(harness_cuda_sticky_errors)
{
    CHECK(vpt_cu_is_sticky(CUDA_ERROR_ILLEGAL_ADDRESS));
    CHECK(vpt_cu_is_sticky(CUDA_ERROR_LAUNCH_FAILED));
    CHECK(vpt_cu_is_sticky(CUDA_ERROR_MISALIGNED_ADDRESS));
    CHECK(vpt_cu_is_sticky(CUDA_ERROR_ILLEGAL_INSTRUCTION));
    CHECK(vpt_cu_is_sticky(CUDA_ERROR_HARDWARE_STACK_ERROR));
    CHECK(vpt_cu_is_sticky(CUDA_ERROR_ASSERT));
    CHECK(vpt_cu_is_sticky(CUDA_ERROR_LAUNCH_TIMEOUT));
    CHECK(!vpt_cu_is_sticky(CUDA_SUCCESS));
    CHECK(!vpt_cu_is_sticky(CUDA_ERROR_OUT_OF_MEMORY));
    CHECK(!vpt_cu_is_sticky(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)); /* a launch refused, context fine */
    CHECK(!vpt_cu_is_sticky(CUDA_ERROR_INVALID_VALUE));
    CHECK(!vpt_cu_is_sticky(CUDA_ERROR_NOT_READY));
}

TEST(harness_cuda_driver_release_parse)
{
    char out[64];
    CHECK(vpt_parse_driver_release("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 2025\n",
                                   out, sizeof out) == 0);
    CHECK(strcmp(out, "580.159.04") == 0);
    CHECK(vpt_parse_driver_release("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build",
                                   out, sizeof out) == 0);
    CHECK(strcmp(out, "570.86.15") == 0);
    CHECK(vpt_parse_driver_release("NVRM version: NVIDIA UNIX aarch64 Kernel Module 535.54.03", out, sizeof out) == 0);
    CHECK(strcmp(out, "535.54.03") == 0);
    CHECK(vpt_parse_driver_release("580.95.05", out, sizeof out) == 0 && strcmp(out, "580.95.05") == 0);
    CHECK(vpt_parse_driver_release("no version here 42", out, sizeof out) == -1);
    CHECK(vpt_parse_driver_release("", out, sizeof out) == -1);
    CHECK(vpt_parse_driver_release("Module 580.159.04", out, 5) == -1); /* too small */
    /* Whatever the machine, the release is a version or "unknown", never empty. */
    vpt_driver_release(out, sizeof out);
    CHECK(out[0] != '\0');
    CHECK(strcmp(out, "unknown") == 0 || strchr(out, '.') != NULL);
}

TEST(harness_cuda_load_toolkit_stub)
{
    char stub[4200];
    snprintf(stub, sizeof stub, "%s/lib64/stubs/libcuda.so", vpt_cuda_home());
    if (access(stub, R_OK) != 0) SKIP("no link-time stub at %s", stub);
    setenv("VPT_CUDA_DRIVER", stub, 1);
    CHECK(vpt_cuda_load() == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no CUDA driver: ");
    CHECK_STR_CONTAINS(vpt_errmsg(), "link-time stub");
}
