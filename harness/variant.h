/* A compiled kernel configuration loaded on the GPU, with the resource
 * facts read from it before any launch: registers, local memory (spills),
 * shared memory, and how many blocks fit per SM. A config that cannot launch
 * (too many registers or too much shared memory for its block size) is
 * reported as launch_limits here, never launched.
 *
 * Lifecycle: vpt_variant_load on the current context, vpt_variant_unload
 * before the context is reset; the variant owns its module. */
#ifndef VPT_HARNESS_VARIANT_H
#define VPT_HARNESS_VARIANT_H

#include "codegen/config.h"
#include "codegen/kernel_source.h"
#include "harness/cuda_driver.h"
#include "harness/nvrtc_compile.h"
#include "harness/results.h"

typedef struct {
    VptConfig config;
    char canon[VPT_CONFIG_STR_MAX];
    CUmodule module;
    CUfunction render;       /* vpt_render, or vpt_mk_extend */
    CUfunction start;        /* vpt_mk_start (multi kernel), else NULL */
    int registers;           /* of the main kernel */
    int local_bytes;         /* per thread: spills and local arrays */
    int spill_stores, spill_loads; /* bytes, from the ptxas report in the log; -1 if absent */
    int static_smem;         /* bytes per block */
    size_t dynamic_smem;     /* bytes per block */
    int blocks_per_sm;       /* cuOccupancyMaxActiveBlocksPerMultiprocessor */
    double occupancy_theoretical; /* resident warps / max warps per SM */
    int is_multi;
} VptVariant;

/* The NVRTC request that compiles a kernel source for sm_<major><minor>; it
 * borrows ks's strings, so ks must outlive the compile. */
VptCompileRequest vpt_compile_request_of(const VptKernelSource *ks, int arch_major, int arch_minor);

/* Loads a compiled config. On a resource problem sets *status to
 * VPT_STATUS_LAUNCH_LIMITS, on a driver error to VPT_STATUS_RUNTIME, and
 * returns -1 with the reason in vpt_errmsg(). */
int vpt_variant_load(const VptGpu *g, const VptConfig *c, const VptKernelSource *ks, const VptCompileResult *cr,
                     VptVariant *v, VptStatus *status);
void vpt_variant_unload(VptVariant *v);

/* Blocks of the main kernel for a render of npaths paths. */
unsigned vpt_variant_grid(const VptVariant *v, const VptGpu *g, unsigned long long npaths);

/* Parses "N bytes spill stores, M bytes spill loads" out of a ptxas report. */
void vpt_parse_spills(const char *log, int *stores, int *loads);

#endif
