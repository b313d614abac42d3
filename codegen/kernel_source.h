/* From a configuration to what NVRTC compiles and the harness launches:
 * the kernel source (the configuration's parameters as #defines, then the
 * embedded kernels.cu.in), the in-memory headers, the NVRTC options, the
 * kernel names and the dynamic shared memory per block. Pure C, no CUDA
 * calls: CI tests it without a GPU.
 *
 * Lifecycle: vpt_kernel_source_build fills a VptKernelSource that owns its
 * strings; vpt_kernel_source_free releases them. */
#ifndef VPT_CODEGEN_KERNEL_SOURCE_H
#define VPT_CODEGEN_KERNEL_SOURCE_H

#include "codegen/config.h"

#include <stddef.h>

#define VPT_KS_MAX_OPTIONS 8

typedef struct {
    char *source;                 /* owned */
    char name[64];                /* program name for logs: "vptune_<schedule>.cu" */
    int nheaders;
    const char *headers[8];       /* embedded, not owned */
    const char *include_names[8];
    int noptions;
    const char *options[VPT_KS_MAX_OPTIONS]; /* point into option_buf */
    char option_buf[VPT_KS_MAX_OPTIONS][48];
    int nkernels;
    const char *kernels[2];       /* "vpt_render" | "vpt_mk_start", "vpt_mk_extend" */
    size_t dynamic_smem;          /* bytes per block of vpt_render / vpt_mk_extend */
} VptKernelSource;

/* Fails (with vpt_config_check's message) for configs that break a rule. */
int vpt_kernel_source_build(const VptConfig *c, VptKernelSource *out);
/* Fault injection, for tests of the harness' failure handling only: every
 * kernel built afterwards faults (an illegal address) or hangs (its paths
 * never end; only the abort flag stops a persistent kernel). Process-wide. */
typedef enum { VPT_FAULT_NONE = 0, VPT_FAULT_ILLEGAL_ADDRESS = 1, VPT_FAULT_HANG = 2 } VptFault;
void vpt_codegen_inject_fault(VptFault f);

/* The roofline probe kernel "vpt_roofline" (see kernels.cu.in) of `block`
 * threads a block, taking its steps against the global majorant (majorant
 * 0: the source is the same as before the grid probe existed) or walking
 * the majorant grid of majorant^3-voxel cells (VPT_MAJORANT_GRID 1, as a
 * config's majorant=gridC); fails for a cell size no config has. */
int vpt_kernel_source_build_roofline(int block, int majorant, VptKernelSource *out);
void vpt_kernel_source_free(VptKernelSource *ks);

#endif
