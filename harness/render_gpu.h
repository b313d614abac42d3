/* Running one render of a loaded variant on the GPU.
 *
 * VptRenderBuffers are the device buffers a render needs (image sums,
 * statistics, occupancy windows, abort flag, and path pools for the
 * multi-kernel schedules); create them once per scene and workload and reuse
 * them for every variant. vpt_render_run launches the variant's schedule over
 * all params->npaths paths and reads back its counters; it never leaves a
 * partially measured run looking complete: any failure returns -1 with the
 * status (runtime, timeout) and the reason. */
#ifndef VPT_HARNESS_RENDER_GPU_H
#define VPT_HARNESS_RENDER_GPU_H

#include "harness/gpu_scene.h"
#include "harness/variant.h"

typedef struct {
    CUdeviceptr image, image_sq, stats, windows, abort_flag; /* image_sq: naiveSK's second moments */
    CUdeviceptr paths_a, paths_b;    /* multi-kernel pools */
    unsigned long long pool_capacity;
    CUstream control;                /* non-blocking stream for the abort flag */
    int *abort_host;                 /* pinned: the value copied to abort_flag */
    unsigned width, height;
} VptRenderBuffers;

int vpt_render_buffers_create(const VptParams *P, const VptGpu *g, VptRenderBuffers *b);
void vpt_render_buffers_destroy(VptRenderBuffers *b);

typedef struct {
    double ms;                        /* GPU time of the whole render (events) */
    unsigned long long rays, steps, paths;
    double simd_efficiency;           /* active lanes / 32 per extension round */
    double occupancy_achieved;        /* warp-cycles / (SM busy cycles x max warps) */
    int launches;
} VptRunStats;

/* Renders with the variant through the medium gm (gpu_scene.h: one
 * estimator's textures and majorant grid; P must be that estimator's
 * parameters); image_out (3 floats per pixel, mean radiance) may be NULL;
 * var_out (likewise, may be NULL; naiveSK only) receives the variance of
 * each pixel's mean, from the second moments the kernel accumulates. tiles > 1 renders the image in tiles x tiles rectangles, one
 * after the other (thesis 4.1.2: one launch per tile for single-kernel
 * schedules, one host loop per tile for multi-kernel ones); the paths, and so
 * the image and the counts, are those of the untiled render. timeout_s bounds
 * the render (0: none); a render that exceeds it is asked to stop and
 * reported as VPT_STATUS_TIMEOUT. */
int vpt_render_run(const VptGpu *g, const VptVariant *v, const VptGpuMedium *gm, const VptParams *P, int tiles,
                   VptRenderBuffers *b, double timeout_s, float *image_out, float *var_out, VptRunStats *rs,
                   VptStatus *status);

#endif
