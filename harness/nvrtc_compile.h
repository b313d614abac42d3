/* NVRTC: CUDA C++ source straight to a CUBIN for one real architecture.
 *
 * Needs no GPU and no driver, only libnvrtc and the CCCL headers of the CUDA
 * toolkit (CUB lives in $CUDA_HOME/include/cccl). Every compile gets
 *   -std=c++17 -arch=sm_<major><minor> -I<cccl> -I<cuda>/include
 * followed by the request's own options. Compiles may be called from
 * several threads (NVRTC is thread-safe across programs), but NVRTC runs
 * most of a compile one at a time within a process: the compile pool
 * (compile_pool.h) compiles in parallel in worker processes. */
#ifndef VPT_HARNESS_NVRTC_COMPILE_H
#define VPT_HARNESS_NVRTC_COMPILE_H

#include <nvrtc.h>
#include <stddef.h>

/* Borrowed strings: the request owns nothing and is only read. */
typedef struct {
    const char *name;            /* program name shown in logs, e.g. "vptune_kernels.cu" */
    const char *source;          /* full CUDA C++ source, NUL-terminated */
    int nheaders;                /* in-memory headers: include_names[i] ("physics/vpt_physics.h") */
    const char *const *headers;  /*   has the content headers[i] */
    const char *const *include_names;
    int noptions;                /* extra options, e.g. "--maxrregcount=64", "-DVPT_BLOCK=256", "--fmad=false" */
    const char *const *options;
    int arch_major, arch_minor;  /* compile for sm_<major><minor>: a real CUBIN */
} VptCompileRequest;

/* Owned by whoever received it; free with vpt_compile_result_free. */
typedef struct {
    void *cubin;                 /* ELF image, NULL when the compile failed */
    size_t cubin_size;
    char *log;                   /* NVRTC's log, "" when empty; kept on success too (warnings) */
    double seconds;              /* wall time of the compile (of the original compile when from cache) */
    int from_cache;
} VptCompileResult;

/* Compiles req. On success 0 and *out filled. On failure -1, *out->log holds
 * the NVRTC log (when NVRTC produced one) and the message reads
 *   "NVRTC compile of <name> failed: NVRTC_ERROR_COMPILATION (see log)"
 * followed by the log's first lines. *out is always initialised, so
 * vpt_compile_result_free(out) is right on both paths. */
int vpt_nvrtc_compile(const VptCompileRequest *req, VptCompileResult *out);
void vpt_compile_result_free(VptCompileResult *r);

/* "13.0": NVRTC's version, from nvrtcVersion(). */
const char *vpt_nvrtc_version(void);

/* Which NVRTC build this process runs, beyond nvrtcVersion's "13.0": the
 * version line the library carries ("Cuda compilation tools, release 13.0,
 * V13.0.88"), found in the loaded libnvrtc; "NVRTC <version>" when it cannot
 * be read. A cubin cache entry is keyed on it (cubin_cache.h). */
const char *vpt_nvrtc_build(void);

/* The CUDA toolkit root: $VPT_CUDA_HOME, else $CUDA_HOME, else the one the
 * Makefile built against (VPT_CUDA_HOME). */
const char *vpt_cuda_home(void);
/* <cuda_home>/include/cccl after checking that cub/cub.cuh is there, or NULL
 * with a message naming the directory and the variables to set. The string
 * is per-thread and stays valid until the thread's next call. */
const char *vpt_cccl_include_dir(void);

/* CCCL_VERSION of the CCCL headers in cccl_dir (e.g. 3000001, from
 * cuda/std/__cccl/version.h), or -1 when it cannot be read. */
long vpt_cccl_version(const char *cccl_dir);

/* Checks an NVRTC call: 0 on NVRTC_SUCCESS, else -1 with the message
 * "<call> failed at <file>:<line>: <nvrtcGetErrorString>". */
#define VPT_NVRTC_TRY(fn, ...) \
    vpt_nvrtc_result(fn(__VA_ARGS__), #fn "(" #__VA_ARGS__ ")", __FILE__, __LINE__)
int vpt_nvrtc_result(nvrtcResult r, const char *call, const char *file, int line);

#endif
