/* The CUDA driver API, loaded at run time.
 *
 * Nothing in vptune links -lcuda: a build box or CI machine with the CUDA
 * toolkit but no NVIDIA driver has only the link-time stub of libcuda, and a
 * binary linked against it would not even start there. Instead
 * vpt_cuda_load() dlopen()s "libcuda.so.1" (or $VPT_CUDA_DRIVER) and fetches
 * every entry point through cuGetProcAddress, each at the ABI version that
 * <cuda.h> declares (see VPT_CU_FUNCTIONS). <cuda.h> is included for its
 * types only. The driver must support at least the CUDA major version built
 * against (NVRTC 13 CUBINs need a CUDA 13 driver).
 *
 * Calls go through the table `vpt_cu`, whose members are named like the API
 * functions after <cuda.h>'s versioning macros (cuMemAlloc is cuMemAlloc_v2
 * there), so `vpt_cu.cuMemAlloc(&p, n)` reads like the API and calls the right
 * version. Checked calls use one macro family:
 *
 *     if (VPT_CU_TRY(cuMemAlloc, &p, bytes)) return -1;   // message set
 *     VPT_CU_CHECK(cuCtxSynchronize);                      // fatal on error
 *
 * The failure message names the call as written, file:line, and the error's
 * name and description, e.g.
 *   "cuMemAlloc(&p, bytes) failed at harness/gpu.c:123: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
 *
 * Programs exit with VPT_EXIT_NO_GPU (3) when no driver or no GPU is present,
 * so scripts and tests can tell "cannot run here" apart from a failure (1). */
#ifndef VPT_HARNESS_CUDA_DRIVER_H
#define VPT_HARNESS_CUDA_DRIVER_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stddef.h>

/* Exit status of a program that needs a GPU and found no driver or no GPU. */
#define VPT_EXIT_NO_GPU 3

/* One member per driver function vptune uses, with the ABI version that
 * <cuda.h> declares under that name. The version matters: cuGetProcAddress
 * hands out the newest version not above the one asked for, and CUDA 13
 * added versions with other signatures under old names (cuCtxSynchronize
 * and cuCtxGetDevice now take a context), which the header still declares
 * in their old form. So each function is fetched with its own version, and
 * a compile-time check ties the versioned type from <cudaTypedefs.h> to the
 * header's declaration. To add a function: look up the PFN_<name>_v<N> whose
 * signature is the header's (for a macro-versioned name like cuMemAlloc ->
 * cuMemAlloc_v2, the newest N of that signature). */
#define VPT_CU_FUNCTIONS(X)                                                     \
    X(cuInit, 2000) X(cuDriverGetVersion, 2020)                                \
    X(cuGetErrorName, 6000) X(cuGetErrorString, 6000)                          \
    X(cuDeviceGet, 2000) X(cuDeviceGetCount, 2000) X(cuDeviceGetName, 2000)    \
    X(cuDeviceGetUuid, 11040) X(cuDeviceGetAttribute, 2000)                    \
    X(cuDeviceTotalMem, 3020)                                                  \
    X(cuDevicePrimaryCtxRetain, 7000) X(cuDevicePrimaryCtxRelease, 11000)      \
    X(cuDevicePrimaryCtxReset, 11000)                                          \
    X(cuCtxSetCurrent, 4000) X(cuCtxSynchronize, 2000)                         \
    X(cuCtxGetLimit, 3010) X(cuCtxSetLimit, 3010) X(cuCtxGetDevice, 2000)      \
    X(cuModuleLoadData, 2000) X(cuModuleLoadDataEx, 2010)                      \
    X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000)                       \
    X(cuModuleGetGlobal, 3020)                                                 \
    X(cuFuncGetAttribute, 2020) X(cuFuncSetAttribute, 9000)                    \
    X(cuLaunchKernel, 4000)                                                    \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050)                       \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000)              \
    X(cuMemAlloc, 3020) X(cuMemFree, 3020)                                     \
    X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020)                                \
    X(cuMemsetD8, 3020) X(cuMemsetD32, 3020) X(cuMemGetInfo, 3020)             \
    X(cuMemcpy3D, 3020)                                                        \
    X(cuMemAllocHost, 3020) X(cuMemFreeHost, 2000) X(cuMemHostAlloc, 2020)     \
    X(cuArray3DCreate, 3020) X(cuArrayDestroy, 2000)                           \
    X(cuTexObjectCreate, 5000) X(cuTexObjectDestroy, 5000)                     \
    X(cuEventCreate, 2000) X(cuEventRecord, 2000)                              \
    X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 12080)                   \
    X(cuEventDestroy, 4000) X(cuEventQuery, 2000)                              \
    X(cuStreamCreate, 2000) X(cuStreamDestroy, 4000)                           \
    X(cuStreamSynchronize, 2000) X(cuStreamQuery, 2000)

/* The member is named after the header's (possibly versioned) name, typed
 * with the versioned PFN: `##` keeps fn unexpanded in the type's name. */
#define VPT_CU_MEMBER_(fn, ver) PFN_##fn##_v##ver fn;
typedef struct {
    VPT_CU_FUNCTIONS(VPT_CU_MEMBER_)
} VptCudaApi;
#undef VPT_CU_MEMBER_

/* All NULL until vpt_cuda_load() succeeds; read-only afterwards. */
extern VptCudaApi vpt_cu;

/* Loads the driver, resolves every function and calls cuInit(0). Idempotent
 * and thread-safe: the first call does the work, later calls return its
 * outcome (and its message again). Fails with -1 and a message such as
 *   "no CUDA driver: cannot load libcuda.so.1 (<dlerror>)"
 *   "no CUDA GPU: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
 *   "CUDA driver too old: it supports CUDA 12.4, vptune was built for CUDA 13.0"
 * $VPT_CUDA_DRIVER, when set, is the library path to load instead. */
int vpt_cuda_load(void);

/* 1 after a successful vpt_cuda_load(), else 0. Never loads. */
int vpt_cuda_loaded(void);

/* The checking primitive behind the macros: returns 0 for CUDA_SUCCESS;
 * otherwise records r as this thread's last error, sets the message
 * "<call> failed at <file>:<line>: <NAME> (<description>)" and returns -1.
 * Without a loaded driver the name is "CUresult <n>" (names come from the
 * driver). */
int vpt_cu_result(CUresult r, const char *call, const char *file, int line);

/* Evaluates vpt_cu.fn(...): 0 on success, -1 with the message set. A call
 * before a successful vpt_cuda_load() fails cleanly instead of crashing. */
#define VPT_CU_TRY(fn, ...) VPT_CU_TRY_AS_(fn, #fn "(" #__VA_ARGS__ ")", __VA_ARGS__)
/* Same, but prints the message and exits 1: for places where continuing is
 * impossible (cleanup of a context that must work, test scaffolding). */
#define VPT_CU_CHECK(fn, ...)                                                          \
    do {                                                                               \
        if (VPT_CU_TRY_AS_(fn, #fn "(" #__VA_ARGS__ ")", __VA_ARGS__)) vpt_cu_fatal(); \
    } while (0)
/* The call text is made before fn passes through another macro, which would
 * expand it to the versioned name (cuMemAlloc_v2). */
#define VPT_CU_TRY_AS_(fn, text, ...)                                                  \
    (vpt_cu.fn ? vpt_cu_result(vpt_cu.fn(__VA_ARGS__), text, __FILE__, __LINE__)       \
               : vpt_cu_not_loaded(text, __FILE__, __LINE__))

int vpt_cu_not_loaded(const char *fn, const char *file, int line);
_Noreturn void vpt_cu_fatal(void);

/* The CUresult of this thread's last failing checked call; CUDA_SUCCESS if
 * none failed since the thread started or since vpt_cu_clear_last_error(). */
CUresult vpt_cu_last_error(void);
void vpt_cu_clear_last_error(void);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" or "CUresult 2" into buf. */
void vpt_cu_error_text(CUresult r, char *buf, size_t n);

/* 1 when r means the context is corrupted ("sticky" errors: an illegal or
 * misaligned address, an illegal instruction, a device assert, a launch
 * failure or timeout, a hardware stack error, ...): every later call in that
 * context fails with the same error.
 *
 * <cuda.h> documents these as "the process must be terminated and
 * relaunched", and that is what was seen with driver 580.159.04 (CUDA 13.0)
 * on an H200: after an out-of-bounds store, cuDevicePrimaryCtxReset returns
 * success but cuDevicePrimaryCtxRetain then fails with the same error, so no
 * new context can be made in the process. Code that runs variants which may
 * crash must therefore run them in a child process (started before the
 * parent touches CUDA; a forked child cannot use a parent's CUDA state) and
 * start a new child after a sticky error. vpt_gpu_reset is still provided:
 * it tries, and says clearly when the process must be restarted. */
int vpt_cu_is_sticky(CUresult r);

/* One opened GPU: its primary context retained and made current on the
 * calling thread. Other threads that use it call
 * vpt_cu.cuCtxSetCurrent(g->ctx) first. */
typedef struct {
    CUdevice dev;
    CUcontext ctx;
    int ordinal;
    char name[256];
    char uuid[64];              /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi prints it */
    int cc_major, cc_minor;
    int sm_count;
    int max_threads_per_sm;
    int max_regs_per_sm;
    int max_regs_per_block;
    int max_shared_per_sm;      /* bytes */
    int max_shared_per_block_optin; /* bytes */
    int warp_size;
    int clock_khz;              /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE: the typical (boost) clock */
    int l2_bytes;
    size_t total_mem;
    int driver_version;         /* cuDriverGetVersion, e.g. 13000 */
    char driver_release[64];    /* e.g. "580.159.04", or "unknown" */
} VptGpu;

/* Loads the driver (vpt_cuda_load), fills *g for device `ordinal`, retains
 * its primary context and makes it current. -1 with a message otherwise
 * (no driver, no GPU, ordinal out of range, ...). */
int vpt_gpu_open(int ordinal, VptGpu *g);
/* Releases the primary context (safe on a zeroed or already closed g). */
void vpt_gpu_close(VptGpu *g);
/* After a sticky error: releases, resets and retains the primary context
 * again, makes it current, and checks it works with a small allocation,
 * memset and synchronize. Everything created in the old context is gone.
 * -1 with a message when the device is still unusable; after a sticky error
 * the message says "the process must be restarted" (see vpt_cu_is_sticky:
 * with current drivers this is the expected outcome). */
int vpt_gpu_reset(VptGpu *g);

/* The NVIDIA kernel driver's release ("580.159.04") from
 * /proc/driver/nvidia/version, else from the file name libcuda.so.1 resolves
 * to, else "unknown". Needs no GPU. */
void vpt_driver_release(char *out, size_t n);

/* Extracts the release from the text of /proc/driver/nvidia/version
 * ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..."):
 * the first word of digits and dots with at least one dot. -1 if none. */
int vpt_parse_driver_release(const char *text, char *out, size_t n);

#endif
