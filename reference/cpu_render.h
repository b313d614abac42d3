/* reference/cpu_render.h: the CPU reference renderer.
 *
 * It traces every path index in [0, params.npaths) with vpt_trace_path from
 * the shared physics header, i.e. exactly the paths the GPU kernels trace for
 * the same seed, and averages them per pixel. The work is split into blocks
 * of whole pixels handed out through an atomic counter; a pixel's samples
 * (path = s * width * height + pixel, s = 0 .. spp - 1) are always summed by
 * one thread in order s = 0, 1, ... in double precision. Hence the image, the
 * variance and the counters are bit-identical for any thread count.
 *
 * The estimator (majorant grid, density texture format) is the scene's
 * global majorant over f32 densities unless the options name a
 * VptCpuEstimator, which holds the arrays the GPU's textures would. */
#ifndef VPT_REFERENCE_CPU_RENDER_H
#define VPT_REFERENCE_CPU_RENDER_H

#include "physics/density_format.h"
#include "physics/distance_map.h"
#include "physics/majorant_grid.h"
#include "physics/sparse_grid.h"
#include "physics/vpt_tracer.h"
#include "reference/cpu_medium.h"

#include <stddef.h>
#include <stdio.h>

enum {
    VPT_PROGRESS_AUTO = 0,  /* progress line when stderr is a terminal */
    VPT_PROGRESS_OFF = -1,
    VPT_PROGRESS_ON = 1     /* always, even when stderr is a file or pipe */
};

/* An estimator for the CPU reference: the density as texture format
 * `format` returns it, dense or (sparse) as the NanoVDB grid of those values
 * that volume=sparse kernels sample, and the majorant `cell` (a config's
 * majorant: 0 the global one; C > 0 the grid of C-voxel cells; -1 the
 * global one skipping empty space by the distance map). init also folds
 * them into *P (which must come
 * from vpt_params_init on s); free releases the arrays. */
typedef struct {
    VptDensityFormat format;
    int cell;
    int sparse;
    VptSparseGrid tree;      /* sparse: the density's NanoVDB grid */
    float *density;          /* texture values, nx*ny*nz; NULL for f32 (the scene's grid) */
    VptMajorantGrid grid;    /* empty for the global majorant (cell 0) */
    float *cells;            /* the grid as the medium reads it (vpt_majorant_grid_cells) */
    uint8_t *distance;       /* majorant=skip: the distance map (physics/distance_map.h), else NULL */
} VptCpuEstimator;

int vpt_cpu_estimator_init(VptCpuEstimator *e, const VptScene *s, VptDensityFormat format, int cell, int sparse,
                           VptParams *P);
void vpt_cpu_estimator_free(VptCpuEstimator *e);

typedef struct {
    int threads;   /* <= 0: all online cores (sysconf(_SC_NPROCESSORS_ONLN)) */
    int progress;  /* VPT_PROGRESS_*: "\r  42% 1.2 Mpaths/s ETA 3s" on stderr,
                      at most ~4 updates per second, erased at the end */
    const VptCpuEstimator *estimator; /* NULL: global majorant, f32 */
} VptCpuRenderOptions;

typedef struct {
    double seconds;        /* wall time of the tracing */
    VptCounters counters;  /* rays (extensions), steps (Woodcock iterations,
                              null collisions included), paths */
} VptRenderStats;

/* Renders p->npaths paths of scene s (which must be finalized; p normally
 * comes from vpt_params_init on the same scene) and writes, per pixel in
 * row-major order, 3 floats each:
 *   mean_rgb: the pixel's mean radiance over its p->spp samples;
 *   var_rgb (may be NULL): the sample variance of that mean,
 *     sum (L - mean)^2 / (spp * (spp - 1)); 0 when spp == 1.
 * Both buffers hold width * height * 3 floats and are the caller's.
 * o may be NULL (all defaults); st may be NULL.
 * Fails (-1, message) on inconsistent parameters (zero size, npaths !=
 * width * height * spp, a scene without grids), out of memory, or when no
 * thread can be started; buffers are then unspecified. */
int vpt_cpu_render(const VptScene *s, const VptParams *p, const VptCpuRenderOptions *o, float *mean_rgb,
                   float *var_rgb, VptRenderStats *st);

/* The standard metrics line, e.g.
 * "1.234 s, 2.1e+06 paths/s, 12.34 Mrays/s, 0.456 Gsteps/s"
 * (Mrays/s counts path extensions, Gsteps/s Woodcock iterations including
 * null collisions). Always NUL-terminates buf (truncating if needed). */
void vpt_render_stats_format(const VptRenderStats *st, char *buf, size_t bufsz);
/* Writes the metrics line and a newline to fp. */
void vpt_render_stats_print(FILE *fp, const VptRenderStats *st);

#endif
