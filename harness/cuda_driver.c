#include "harness/cuda_driver.h"

#include "base/error.h"

#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


VptCudaApi vpt_cu;

/* Each table entry's versioned type is the header's declaration (see
 * VPT_CU_FUNCTIONS): a wrong version with another signature fails here. */
#define VPT_CU_CHECK_TYPE_(fn, ver)                                                        \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), PFN_##fn##_v##ver),       \
                   #fn ": version " #ver " is not the signature <cuda.h> declares");
VPT_CU_FUNCTIONS(VPT_CU_CHECK_TYPE_)
#undef VPT_CU_CHECK_TYPE_

/* The outcome of the one load: vpt_cuda_load() replays it to every caller. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_rc = -1;
static char load_msg[1024];
static int loaded;

static _Thread_local CUresult last_error = CUDA_SUCCESS;

/* Builds the API table in a local copy and publishes it only when complete,
 * so a half-loaded driver never leaves callable pointers behind. */
static int load_driver(void)
{
    const char *path = getenv("VPT_CUDA_DRIVER");
    if (!path || !*path) path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return vpt_fail("no CUDA driver: cannot load %s (%s)", path, e ? e : "unknown dlopen error");
    }
    /* Kept open for the life of the process: the table points into it. */
    PFN_cuGetProcAddress_v12000 get_proc = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
    if (!get_proc)
        return vpt_fail("CUDA driver too old: %s has no cuGetProcAddress_v2 (a driver for CUDA %d.%d or newer is needed)",
                        path, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);

    VptCudaApi api;
    memset(&api, 0, sizeof api);
    struct { const char *name; void **slot; int version; } table[] = {
#define VPT_CU_SLOT_(fn, ver) { #fn, (void **)&api.fn, ver },
        VPT_CU_FUNCTIONS(VPT_CU_SLOT_)
#undef VPT_CU_SLOT_
    };
    /* The version check comes first: asking an older driver for the CUDA 13
     * ABI of a function it only knows in an older form would hand back a
     * pointer with the wrong signature. */
    int drv = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, "cuDriverGetVersion") != 0) continue;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
        CUresult r = get_proc(table[i].name, table[i].slot, table[i].version, CU_GET_PROC_ADDRESS_DEFAULT, &st);
        if (r == CUDA_ERROR_STUB_LIBRARY)
            return vpt_fail("no CUDA driver: %s is the CUDA toolkit's link-time stub, not a driver", path);
        if (r != CUDA_SUCCESS || !*table[i].slot)
            return vpt_fail("CUDA driver %s: cannot resolve cuDriverGetVersion (CUresult %d)", path, (int)r);
        if (api.cuDriverGetVersion(&drv) != CUDA_SUCCESS) return vpt_fail("CUDA driver %s: cuDriverGetVersion failed", path);
    }
    if (drv / 1000 < CUDA_VERSION / 1000)
        return vpt_fail("CUDA driver too old: it supports CUDA %d.%d, vptune was built for CUDA %d.%d "
                        "(install a driver for CUDA %d or newer)",
                        drv / 1000, drv % 1000 / 10, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10, CUDA_VERSION / 1000);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
        CUresult r = get_proc(table[i].name, table[i].slot, table[i].version, CU_GET_PROC_ADDRESS_DEFAULT, &st);
        if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || !*table[i].slot)
            return vpt_fail("CUDA driver %s (CUDA %d.%d): cannot resolve %s (%s)", path, drv / 1000, drv % 1000 / 10,
                            table[i].name,
                            st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND             ? "symbol not found"
                            : st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT     ? "driver version not sufficient"
                                                                                   : "cuGetProcAddress failed");
    }
    CUresult r = api.cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL, *desc = NULL;
        if (api.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
        if (api.cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = NULL;
        char what[256];
        if (name) snprintf(what, sizeof what, "%s (%s)", name, desc ? desc : "no description");
        else snprintf(what, sizeof what, "CUresult %d", (int)r);
        return vpt_fail("no CUDA GPU: cuInit failed: %s", what);
    }
    vpt_cu = api;
    return 0;
}

static void load_once_fn(void)
{
    load_rc = load_driver();
    if (load_rc != 0) snprintf(load_msg, sizeof load_msg, "%s", vpt_errmsg());
    else loaded = 1;
}

int vpt_cuda_load(void)
{
    pthread_once(&load_once, load_once_fn);
    if (load_rc != 0) return vpt_fail("%s", load_msg);
    return 0;
}

int vpt_cuda_loaded(void)
{
    /* pthread_once's completion orders the write of `loaded` before any
     * reader that went through vpt_cuda_load(); others may see 0 early. */
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

void vpt_cu_error_text(CUresult r, char *buf, size_t n)
{
    const char *name = NULL, *desc = NULL;
    if (vpt_cuda_loaded()) {
        if (vpt_cu.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
        if (vpt_cu.cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = NULL;
    }
    if (name) snprintf(buf, n, "%s (%s)", name, desc ? desc : "no description");
    else snprintf(buf, n, "CUresult %d", (int)r);
}

int vpt_cu_result(CUresult r, const char *call, const char *file, int line)
{
    if (r == CUDA_SUCCESS) return 0;
    last_error = r;
    char what[256];
    vpt_cu_error_text(r, what, sizeof what);
    return vpt_fail("%s failed at %s:%d: %s", call, file, line, what);
}

int vpt_cu_not_loaded(const char *fn, const char *file, int line)
{
    last_error = CUDA_ERROR_NOT_INITIALIZED;
    return vpt_fail("%s called at %s:%d before the CUDA driver was loaded (vpt_cuda_load)", fn, file, line);
}

void vpt_cu_fatal(void)
{
    fprintf(stderr, "vptune: fatal: %s\n", vpt_errmsg());
    exit(1);
}

CUresult vpt_cu_last_error(void) { return last_error; }
void vpt_cu_clear_last_error(void) { last_error = CUDA_SUCCESS; }

int vpt_cu_is_sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_EXTERNAL_DEVICE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return 1;
    default:
        return 0;
    }
}

int vpt_parse_driver_release(const char *text, char *out, size_t n)
{
    const char *p = text;
    while (*p) {
        while (*p && !isdigit((unsigned char)*p)) {
            /* Skip words that merely contain digits (x86_64, sm_90). */
            if (isalpha((unsigned char)*p) || *p == '_') {
                while (*p && !isspace((unsigned char)*p)) p++;
            } else {
                p++;
            }
        }
        const char *s = p;
        int dots = 0;
        while (isdigit((unsigned char)*p) || *p == '.') dots += *p++ == '.';
        size_t len = (size_t)(p - s);
        if (len > 0 && dots > 0 && s[len - 1] != '.' && (*p == '\0' || isspace((unsigned char)*p))) {
            if (len >= n) return -1;
            memcpy(out, s, len);
            out[len] = '\0';
            return 0;
        }
        while (*p && !isspace((unsigned char)*p)) p++;
    }
    return -1;
}

/* "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04" -> "580.159.04". */
static int release_from_library(char *out, size_t n)
{
    const char *path = getenv("VPT_CUDA_DRIVER");
    if (!path || !*path) path = "libcuda.so.1";
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return -1;
    struct link_map *lm = NULL;
    int rc = -1;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name) {
        char real[PATH_MAX];
        if (realpath(lm->l_name, real)) {
            const char *base = strrchr(real, '/');
            base = base ? base + 1 : real;
            const char *v = strstr(base, ".so.");
            if (v && vpt_parse_driver_release(v + 4, out, n) == 0) rc = 0;
        }
    }
    dlclose(h);
    return rc;
}

void vpt_driver_release(char *out, size_t n)
{
    FILE *fp = fopen("/proc/driver/nvidia/version", "r");
    if (fp) {
        char line[512];
        int ok = fgets(line, sizeof line, fp) && vpt_parse_driver_release(line, out, n) == 0;
        fclose(fp);
        if (ok) return;
    }
    if (release_from_library(out, n) == 0) return;
    snprintf(out, n, "unknown");
}

static int gpu_attr(VptGpu *g, CUdevice_attribute a, int *v)
{
    return VPT_CU_TRY(cuDeviceGetAttribute, v, a, g->dev);
}

int vpt_gpu_open(int ordinal, VptGpu *g)
{
    memset(g, 0, sizeof *g);
    if (vpt_cuda_load() != 0) return -1;
    int count = 0;
    if (VPT_CU_TRY(cuDeviceGetCount, &count)) return -1;
    if (ordinal < 0 || ordinal >= count)
        return vpt_fail("GPU %d does not exist: %d CUDA device%s found", ordinal, count, count == 1 ? "" : "s");
    g->ordinal = ordinal;
    if (VPT_CU_TRY(cuDeviceGet, &g->dev, ordinal)) return -1;
    if (VPT_CU_TRY(cuDeviceGetName, g->name, (int)sizeof g->name, g->dev)) return -1;
    CUuuid u;
    if (VPT_CU_TRY(cuDeviceGetUuid, &u, g->dev)) return -1;
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(g->uuid, sizeof g->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    if (gpu_attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &g->cc_major) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &g->cc_minor) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &g->sm_count) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &g->max_threads_per_sm) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &g->max_regs_per_sm) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, &g->max_regs_per_block) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &g->max_shared_per_sm) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &g->max_shared_per_block_optin) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_WARP_SIZE, &g->warp_size) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &g->clock_khz) ||
        gpu_attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &g->l2_bytes))
        return -1;
    if (VPT_CU_TRY(cuDeviceTotalMem, &g->total_mem, g->dev)) return -1;
    if (VPT_CU_TRY(cuDriverGetVersion, &g->driver_version)) return -1;
    vpt_driver_release(g->driver_release, sizeof g->driver_release);
    if (VPT_CU_TRY(cuDevicePrimaryCtxRetain, &g->ctx, g->dev)) {
        g->ctx = NULL;
        return -1;
    }
    if (VPT_CU_TRY(cuCtxSetCurrent, g->ctx)) {
        vpt_cu.cuDevicePrimaryCtxRelease(g->dev);
        g->ctx = NULL;
        return -1;
    }
    return 0;
}

void vpt_gpu_close(VptGpu *g)
{
    if (!g->ctx || !vpt_cuda_loaded()) return;
    vpt_cu.cuCtxSetCurrent(NULL);
    vpt_cu.cuDevicePrimaryCtxRelease(g->dev);
    g->ctx = NULL;
}

int vpt_gpu_reset(VptGpu *g)
{
    if (!vpt_cuda_loaded()) return vpt_fail("vpt_gpu_reset: the CUDA driver is not loaded");
    char name[300];
    snprintf(name, sizeof name, "GPU %d (%s)", g->ordinal, g->name);
    if (g->ctx) {
        /* The release may itself report the sticky error; the reset below is
         * what matters. */
        vpt_cu.cuCtxSetCurrent(NULL);
        vpt_cu.cuDevicePrimaryCtxRelease(g->dev);
        g->ctx = NULL;
    }
    if (VPT_CU_TRY(cuDevicePrimaryCtxReset, g->dev) || VPT_CU_TRY(cuDevicePrimaryCtxRetain, &g->ctx, g->dev)) {
        g->ctx = NULL;
        if (vpt_cu_is_sticky(vpt_cu_last_error()))
            vpt_error_prefix("the sticky error survives a context reset of %s: the process must be restarted", name);
        else
            vpt_error_prefix("cannot reset the context of %s", name);
        return -1;
    }
    CUdeviceptr p = 0;
    int rc = VPT_CU_TRY(cuCtxSetCurrent, g->ctx);
    if (rc == 0) rc = VPT_CU_TRY(cuMemAlloc, &p, 256);
    if (rc == 0) rc = VPT_CU_TRY(cuMemsetD32, p, 0x12345678u, 64);
    if (rc == 0) rc = VPT_CU_TRY(cuCtxSynchronize);
    if (p) vpt_cu.cuMemFree(p);
    if (rc != 0) {
        vpt_error_prefix("the context of %s is still unusable after a reset (the process must be restarted)", name);
        return -1;
    }
    return 0;
}
