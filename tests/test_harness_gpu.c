/* The host infrastructure on a real GPU: opening the device, NVRTC CUBINs
 * loaded and launched, 3D texture objects read with tex3D<float> and
 * tex3D<float4> under NVRTC, the watchdog against a long kernel, and
 * recovery from a sticky error. Each test skips with the reason when there
 * is no driver or no GPU. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "harness/cuda_driver.h"
#include "harness/nvrtc_compile.h"
#include "harness/watchdog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void open_gpu(VptGpu *g)
{
    if (vpt_gpu_open(0, g) != 0) SKIP("no GPU: %s", vpt_errmsg());
}

/* Compiles src for the GPU and loads it; *mod is the module. */
static void load_module(const VptGpu *g, const char *name, const char *src, CUmodule *mod)
{
    VptCompileRequest req = { .name = name, .source = src, .arch_major = g->cc_major, .arch_minor = g->cc_minor };
    VptCompileResult res;
    int rc = vpt_nvrtc_compile(&req, &res);
    REQUIRE_MSG(rc == 0, "%s\n%s", vpt_errmsg(), res.log);
    rc = VPT_CU_TRY(cuModuleLoadData, mod, res.cubin);
    vpt_compile_result_free(&res);
    REQUIRE_MSG(rc == 0, "%s", vpt_errmsg());
}

TEST(harness_gpu_open_fields)
{
    VptGpu g;
    open_gpu(&g);
    vpt_test_log("%s %s cc %d.%d, %d SMs, %d kHz, L2 %d B, %zu MiB, driver %s (CUDA %d), regs/SM %d, smem/SM %d, "
                 "smem optin %d, threads/SM %d",
                 g.name, g.uuid, g.cc_major, g.cc_minor, g.sm_count, g.clock_khz, g.l2_bytes, g.total_mem >> 20,
                 g.driver_release, g.driver_version, g.max_regs_per_sm, g.max_shared_per_sm,
                 g.max_shared_per_block_optin, g.max_threads_per_sm);
    CHECK(g.name[0] != '\0');
    CHECK_EQ_INT(strlen(g.uuid), 40);
    CHECK(strncmp(g.uuid, "GPU-", 4) == 0 && g.uuid[12] == '-' && g.uuid[17] == '-' && g.uuid[22] == '-' &&
          g.uuid[27] == '-');
    CHECK(g.cc_major >= 7);
    CHECK(g.sm_count > 0 && g.warp_size == 32);
    CHECK(g.max_threads_per_sm >= 1024 && g.max_regs_per_sm >= 65536 && g.max_regs_per_block >= 32768);
    CHECK(g.max_shared_per_sm > 0 && g.max_shared_per_block_optin >= 48 * 1024);
    CHECK(g.clock_khz > 0 && g.l2_bytes > 0 && g.total_mem > ((size_t)1 << 30));
    CHECK(g.driver_version >= 13000);
    CHECK(strchr(g.driver_release, '.') != NULL);
    CUdevice cur;
    CHECK(VPT_CU_TRY(cuCtxGetDevice, &cur) == 0 && cur == g.dev);
    /* Error names come from the driver once it is loaded. */
    CUdeviceptr p = 0;
    size_t huge = (size_t)1 << 50;
    CHECK(VPT_CU_TRY(cuMemAlloc, &p, huge) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "cuMemAlloc(&p, huge) failed at tests/test_harness_gpu.c:");
    CHECK_STR_CONTAINS(vpt_errmsg(), "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    CHECK(vpt_cu_last_error() == CUDA_ERROR_OUT_OF_MEMORY && !vpt_cu_is_sticky(vpt_cu_last_error()));
    vpt_gpu_close(&g);
    CHECK(g.ctx == NULL);
}

static const char saxpy_src[] =
    "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

TEST(harness_gpu_compile_load_launch)
{
    VptGpu g;
    open_gpu(&g);
    CUmodule mod;
    load_module(&g, "saxpy.cu", saxpy_src, &mod);
    CUfunction fn;
    REQUIRE(VPT_CU_TRY(cuModuleGetFunction, &fn, mod, "saxpy") == 0);
    int regs = 0, blocks = 0;
    CHECK(VPT_CU_TRY(cuFuncGetAttribute, &regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn) == 0 && regs > 0);
    CHECK(VPT_CU_TRY(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, fn, 256, 0) == 0 && blocks > 0);
    enum { N = 100000 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    REQUIRE(x && y);
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    CUdeviceptr dx, dy;
    REQUIRE(VPT_CU_TRY(cuMemAlloc, &dx, N * sizeof(float)) == 0);
    REQUIRE(VPT_CU_TRY(cuMemAlloc, &dy, N * sizeof(float)) == 0);
    REQUIRE(VPT_CU_TRY(cuMemcpyHtoD, dx, x, N * sizeof(float)) == 0);
    REQUIRE(VPT_CU_TRY(cuMemcpyHtoD, dy, y, N * sizeof(float)) == 0);
    int n = N;
    float a = 2.0f;
    void *args[] = { &n, &a, &dx, &dy };
    CUevent e0, e1;
    REQUIRE(VPT_CU_TRY(cuEventCreate, &e0, CU_EVENT_DEFAULT) == 0 && VPT_CU_TRY(cuEventCreate, &e1, CU_EVENT_DEFAULT) == 0);
    REQUIRE(VPT_CU_TRY(cuEventRecord, e0, NULL) == 0);
    REQUIRE(VPT_CU_TRY(cuLaunchKernel, fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL) == 0);
    REQUIRE(VPT_CU_TRY(cuEventRecord, e1, NULL) == 0);
    REQUIRE(VPT_CU_TRY(cuEventSynchronize, e1) == 0);
    float ms = -1;
    CHECK(VPT_CU_TRY(cuEventElapsedTime, &ms, e0, e1) == 0 && ms >= 0);
    REQUIRE(VPT_CU_TRY(cuMemcpyDtoH, y, dy, N * sizeof(float)) == 0);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += y[i] != 2.0f * (float)i + 1.0f;
    CHECK_EQ_INT(bad, 0);
    vpt_test_log("saxpy: %d registers, %d blocks/SM, %.3f ms", regs, blocks, ms);
    vpt_cu.cuEventDestroy(e0);
    vpt_cu.cuEventDestroy(e1);
    vpt_cu.cuMemFree(dx);
    vpt_cu.cuMemFree(dy);
    vpt_cu.cuModuleUnload(mod);
    free(x);
    free(y);
    vpt_gpu_close(&g);
}

/* No #include: cudaTextureObject_t, tex3D<float> and tex3D<float4> are
 * built into NVRTC. */
static const char tex_src[] =
    "extern \"C\" __global__ void fetch(cudaTextureObject_t t1, cudaTextureObject_t t4, cudaTextureObject_t th,\n"
    "                                  int nx, int ny, int nz, float *o1, float4 *o4, float *oh, float *mid)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= nx * ny * nz) return;\n"
    "    int x = i % nx, y = i / nx % ny, z = i / (nx * ny);\n"
    "    o1[i] = tex3D<float>(t1, x + 0.5f, y + 0.5f, z + 0.5f);\n"
    "    o4[i] = tex3D<float4>(t4, x + 0.5f, y + 0.5f, z + 0.5f);\n"
    "    oh[i] = tex3D<float>(th, x + 0.5f, y + 0.5f, z + 0.5f);\n"
    "    if (i == 0) mid[0] = tex3D<float>(t1, 1.0f, 0.5f, 0.5f);\n" /* halfway between texels 0 and 1 */
    "}\n";

static CUarray make_array(int nx, int ny, int nz, CUarray_format fmt, unsigned channels, const void *data, size_t elem)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = (size_t)nx;
    d.Height = (size_t)ny;
    d.Depth = (size_t)nz;
    d.Format = fmt;
    d.NumChannels = channels;
    CUarray arr;
    REQUIRE(VPT_CU_TRY(cuArray3DCreate, &arr, &d) == 0);
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = data;
    c.srcPitch = (size_t)nx * elem;
    c.srcHeight = (size_t)ny;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = arr;
    c.WidthInBytes = (size_t)nx * elem;
    c.Height = (size_t)ny;
    c.Depth = (size_t)nz;
    REQUIRE(VPT_CU_TRY(cuMemcpy3D, &c) == 0);
    return arr;
}

static CUtexObject make_tex(CUarray arr, CUfilter_mode filter)
{
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = arr;
    CUDA_TEXTURE_DESC t;
    memset(&t, 0, sizeof t);
    t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
    t.filterMode = filter;
    CUtexObject tex;
    REQUIRE(VPT_CU_TRY(cuTexObjectCreate, &tex, &r, &t, NULL) == 0);
    return tex;
}

static uint16_t to_half(float f)
{
    /* Exact for the small integers used here. */
    if (f == 0) return 0;
    int e;
    float m = frexpf(f, &e); /* f = m * 2^e, m in [0.5, 1) */
    uint16_t exp = (uint16_t)(e - 1 + 15);
    uint16_t mant = (uint16_t)((m * 2.0f - 1.0f) * 1024.0f);
    return (uint16_t)(exp << 10 | mant);
}

TEST(harness_gpu_tex3d_under_nvrtc)
{
    VptGpu g;
    open_gpu(&g);
    CUmodule mod;
    load_module(&g, "tex.cu", tex_src, &mod);
    CUfunction fn;
    REQUIRE(VPT_CU_TRY(cuModuleGetFunction, &fn, mod, "fetch") == 0);
    enum { NX = 5, NY = 4, NZ = 3, N = NX * NY * NZ };
    float v1[N], v4[4 * N];
    uint16_t vh[N];
    for (int i = 0; i < N; i++) {
        v1[i] = (float)(i * 3 + 1);
        for (int c = 0; c < 4; c++) v4[4 * i + c] = (float)(i * 10 + c);
        vh[i] = to_half((float)(i + 1));
    }
    CUarray a1 = make_array(NX, NY, NZ, CU_AD_FORMAT_FLOAT, 1, v1, sizeof(float));
    CUarray a4 = make_array(NX, NY, NZ, CU_AD_FORMAT_FLOAT, 4, v4, 4 * sizeof(float));
    CUarray ah = make_array(NX, NY, NZ, CU_AD_FORMAT_HALF, 1, vh, sizeof(uint16_t));
    CUtexObject t1 = make_tex(a1, CU_TR_FILTER_MODE_LINEAR), t4 = make_tex(a4, CU_TR_FILTER_MODE_POINT),
                th = make_tex(ah, CU_TR_FILTER_MODE_POINT);
    CUdeviceptr o1, o4, oh, mid;
    REQUIRE(VPT_CU_TRY(cuMemAlloc, &o1, sizeof v1) == 0 && VPT_CU_TRY(cuMemAlloc, &o4, sizeof v4) == 0 &&
            VPT_CU_TRY(cuMemAlloc, &oh, sizeof v1) == 0 && VPT_CU_TRY(cuMemAlloc, &mid, sizeof(float)) == 0);
    int nx = NX, ny = NY, nz = NZ;
    void *args[] = { &t1, &t4, &th, &nx, &ny, &nz, &o1, &o4, &oh, &mid };
    REQUIRE(VPT_CU_TRY(cuLaunchKernel, fn, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL) == 0);
    REQUIRE(VPT_CU_TRY(cuCtxSynchronize) == 0);
    float r1[N], r4[4 * N], rh[N], rmid;
    REQUIRE(VPT_CU_TRY(cuMemcpyDtoH, r1, o1, sizeof r1) == 0 && VPT_CU_TRY(cuMemcpyDtoH, r4, o4, sizeof r4) == 0 &&
            VPT_CU_TRY(cuMemcpyDtoH, rh, oh, sizeof rh) == 0 && VPT_CU_TRY(cuMemcpyDtoH, &rmid, mid, sizeof rmid) == 0);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        bad += r1[i] != v1[i]; /* texel centres: exact even with linear filtering */
        bad += rh[i] != (float)(i + 1);
        for (int c = 0; c < 4; c++) bad += r4[4 * i + c] != v4[4 * i + c];
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_NEAR(rmid, 0.5f * (v1[0] + v1[1]), 1e-2); /* 8-bit filtering weights */
    vpt_cu.cuTexObjectDestroy(t1);
    vpt_cu.cuTexObjectDestroy(t4);
    vpt_cu.cuTexObjectDestroy(th);
    vpt_cu.cuArrayDestroy(a1);
    vpt_cu.cuArrayDestroy(a4);
    vpt_cu.cuArrayDestroy(ah);
    vpt_cu.cuMemFree(o1);
    vpt_cu.cuMemFree(o4);
    vpt_cu.cuMemFree(oh);
    vpt_cu.cuMemFree(mid);
    vpt_cu.cuModuleUnload(mod);
    vpt_gpu_close(&g);
}

static const char spin_src[] =
    "extern \"C\" __global__ void spin(long long cycles, int *out)\n"
    "{\n"
    "    long long t0 = clock64();\n"
    "    while (clock64() - t0 < cycles) { }\n"
    "    out[0] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void crash(int *p)\n"
    "{\n"
    "    p[(long long)(threadIdx.x + 1) << 30] = 1;\n"
    "}\n";

TEST(harness_gpu_watchdog_on_long_kernel)
{
    VptGpu g;
    open_gpu(&g);
    CUmodule mod;
    load_module(&g, "spin.cu", spin_src, &mod);
    CUfunction fn;
    REQUIRE(VPT_CU_TRY(cuModuleGetFunction, &fn, mod, "spin") == 0);
    CUdeviceptr out;
    REQUIRE(VPT_CU_TRY(cuMemAlloc, &out, 4) == 0);
    long long cycles = (long long)g.clock_khz * 1000LL / 2; /* about 0.5 s */
    void *args[] = { &cycles, &out };
    CUevent done;
    REQUIRE(VPT_CU_TRY(cuEventCreate, &done, CU_EVENT_DISABLE_TIMING) == 0);
    REQUIRE(VPT_CU_TRY(cuLaunchKernel, fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) == 0);
    REQUIRE(VPT_CU_TRY(cuEventRecord, done, NULL) == 0);
    VptWatchdog *w = vpt_watchdog_start(0.1, "kernel spin");
    int expired = 0;
    CUresult r;
    while ((r = vpt_cu.cuEventQuery(done)) == CUDA_ERROR_NOT_READY) {
        if (vpt_watchdog_expired(w)) {
            expired = 1;
            break;
        }
        usleep(200);
    }
    CHECK(expired);
    CHECK_STR_CONTAINS(vpt_errmsg(), "kernel spin still running after");
    vpt_watchdog_stop(w);
    CHECK(VPT_CU_TRY(cuEventSynchronize, done) == 0); /* it does finish */
    CHECK(vpt_cu.cuEventQuery(done) == CUDA_SUCCESS);
    vpt_cu.cuEventDestroy(done);
    vpt_cu.cuMemFree(out);
    vpt_cu.cuModuleUnload(mod);
    vpt_gpu_close(&g);
}

TEST(harness_gpu_sticky_error_reset)
{
    VptGpu g;
    open_gpu(&g);
    CUmodule mod;
    load_module(&g, "spin.cu", spin_src, &mod);
    CUfunction crash;
    REQUIRE(VPT_CU_TRY(cuModuleGetFunction, &crash, mod, "crash") == 0);
    CUdeviceptr small;
    REQUIRE(VPT_CU_TRY(cuMemAlloc, &small, 4) == 0);
    void *args[] = { &small };
    REQUIRE(VPT_CU_TRY(cuLaunchKernel, crash, 1, 1, 1, 256, 1, 1, 0, NULL, args, NULL) == 0);
    CHECK(VPT_CU_TRY(cuCtxSynchronize) == -1);
    CUresult e = vpt_cu_last_error();
    vpt_test_log("the bad kernel gave: %s", vpt_errmsg());
    REQUIRE_MSG(vpt_cu_is_sticky(e), "error %d is not classed as sticky: %s", (int)e, vpt_errmsg());
    /* The context is poisoned: even an allocation fails now. */
    CUdeviceptr p = 0;
    CHECK(VPT_CU_TRY(cuMemAlloc, &p, 16) == -1);

    if (vpt_gpu_reset(&g) != 0) {
        /* What the driver documents for sticky errors: say so clearly. */
        vpt_test_log("reset refused: %s", vpt_errmsg());
        CHECK_STR_CONTAINS(vpt_errmsg(), "the process must be restarted");
        CHECK(g.ctx == NULL);
        return;
    }
    vpt_test_log("reset worked");
    /* A fresh context: compile, load and run again. */
    load_module(&g, "saxpy.cu", saxpy_src, &mod);
    CUfunction fn;
    REQUIRE(VPT_CU_TRY(cuModuleGetFunction, &fn, mod, "saxpy") == 0);
    float x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = (float)i, y[i] = 0;
    CUdeviceptr dx, dy;
    REQUIRE(VPT_CU_TRY(cuMemAlloc, &dx, sizeof x) == 0 && VPT_CU_TRY(cuMemAlloc, &dy, sizeof y) == 0);
    REQUIRE(VPT_CU_TRY(cuMemcpyHtoD, dx, x, sizeof x) == 0 && VPT_CU_TRY(cuMemcpyHtoD, dy, y, sizeof y) == 0);
    int n = 64;
    float a = 3.0f;
    void *args2[] = { &n, &a, &dx, &dy };
    REQUIRE(VPT_CU_TRY(cuLaunchKernel, fn, 1, 1, 1, 64, 1, 1, 0, NULL, args2, NULL) == 0);
    REQUIRE(VPT_CU_TRY(cuCtxSynchronize) == 0);
    REQUIRE(VPT_CU_TRY(cuMemcpyDtoH, y, dy, sizeof y) == 0);
    CHECK(y[0] == 0.0f && y[63] == 189.0f);
    vpt_cu.cuMemFree(dx);
    vpt_cu.cuMemFree(dy);
    vpt_cu.cuModuleUnload(mod);
    vpt_gpu_close(&g);
}

/* Runs in a child: opens the GPU, then crashes a kernel (crash = 1) or runs
 * saxpy and checks it (crash = 0). Exit: 0 ok, VPT_EXIT_NO_GPU, 10 + n for
 * a failure at step n, 20 when the crash was seen as a sticky error. */
static int gpu_child(int crash)
{
    VptGpu g;
    if (vpt_gpu_open(0, &g) != 0) return VPT_EXIT_NO_GPU;
    VptCompileRequest req = { .name = "child.cu", .source = crash ? spin_src : saxpy_src,
                              .arch_major = g.cc_major, .arch_minor = g.cc_minor };
    VptCompileResult res;
    CUmodule mod;
    if (vpt_nvrtc_compile(&req, &res) != 0 || VPT_CU_TRY(cuModuleLoadData, &mod, res.cubin)) return 11;
    vpt_compile_result_free(&res);
    CUfunction fn;
    CUdeviceptr d;
    if (VPT_CU_TRY(cuModuleGetFunction, &fn, mod, crash ? "crash" : "saxpy") || VPT_CU_TRY(cuMemAlloc, &d, 256))
        return 12;
    if (crash) {
        void *args[] = { &d };
        if (VPT_CU_TRY(cuLaunchKernel, fn, 1, 1, 1, 256, 1, 1, 0, NULL, args, NULL)) return 13;
        return VPT_CU_TRY(cuCtxSynchronize) != 0 && vpt_cu_is_sticky(vpt_cu_last_error()) ? 20 : 14;
    }
    float y[64];
    for (int i = 0; i < 64; i++) y[i] = (float)i;
    int n = 64;
    float a = 1.0f;
    void *args[] = { &n, &a, &d, &d };
    if (VPT_CU_TRY(cuMemcpyHtoD, d, y, sizeof y) || VPT_CU_TRY(cuLaunchKernel, fn, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL) ||
        VPT_CU_TRY(cuCtxSynchronize) || VPT_CU_TRY(cuMemcpyDtoH, y, d, sizeof y))
        return 15;
    return y[63] == 126.0f ? 0 : 16;
}

static int run_child(int crash)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(gpu_child(crash));
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

TEST(harness_gpu_sticky_error_child_process)
{
    /* The pattern for variants that may crash: the GPU work runs in a child
     * process, and the parent, which never touched CUDA, starts a new child
     * after a sticky error. */
    int rc = run_child(1);
    if (rc == VPT_EXIT_NO_GPU) SKIP("no GPU (the child could not open one)");
    CHECK_EQ_INT(rc, 20);
    CHECK(!vpt_cuda_loaded());
    CHECK_EQ_INT(run_child(0), 0);
}
