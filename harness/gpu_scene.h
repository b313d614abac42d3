/* A scene's medium on the GPU: density (float) and albedo (RGBA8) as 3D CUDA
 * arrays behind texture objects with trilinear filtering, clamping and
 * normalized coordinates (what vpt_medium_density/albedo sample in
 * kernels.cu.in, and what reference/cpu_medium.h emulates).
 *
 * Compact density formats, majorant grids and the distance map (the
 * estimators of physics/vpt_tracer.h) are made per scene when a render first
 * asks for them.
 *
 * Lifecycle: create after vpt_gpu_open on the current context; destroy before
 * the context is reset or closed. Creation refuses volumes that do not fit in
 * the GPU's free memory, before allocating. */
#ifndef VPT_HARNESS_GPU_SCENE_H
#define VPT_HARNESS_GPU_SCENE_H

#include "harness/cuda_driver.h"
#include "physics/density_format.h"
#include "scenes/scene.h"

/* The density texture of one compact format (f32 uses the scene's own). */
typedef struct {
    CUarray array;
    CUtexObject tex;
} VptGpuDensityTexture;

/* A majorant grid on the device: cells of `cell` voxels, in the texture
 * units of one format (physics/majorant_grid.h). */
typedef struct {
    CUdeviceptr cells;
    int n[3];
    double build_ms;        /* host build time, reported by bench */
    double empty_fraction;  /* cells with majorant 0 */
    double mean_over_max;   /* mean cell majorant / density_max */
} VptGpuMajorantGrid;

#define VPT_GPU_GRID_LOG2_MAX 11 /* cells of 1 .. 1024 voxels */

/* The density as a NanoVDB tree (volume=sparse, physics/sparse_grid.h), of
 * one format's texture values. */
typedef struct {
    CUdeviceptr grid;
    size_t bytes;
    double build_ms;        /* host build time */
    double empty_fraction;  /* 8^3 blocks left out */
} VptGpuSparseGrid;

typedef struct {
    const VptScene *scene;  /* borrowed: the scene the textures were made from */
    CUarray density_array, albedo_array;
    CUtexObject density_tex, albedo_tex;
    size_t bytes;           /* device memory held, lazily created media included */
    float mean_density;     /* normalized, for the termination sort key */
    /* created on first use by vpt_gpu_scene_medium, kept until destroy */
    VptGpuDensityTexture formats[VPT_DENSITY_FORMAT_COUNT];
    VptGpuMajorantGrid grids[VPT_GPU_GRID_LOG2_MAX][VPT_DENSITY_FORMAT_COUNT];
    VptGpuSparseGrid sparse[VPT_DENSITY_FORMAT_COUNT];
    /* majorant=skip: per format, the density and the distance map
     * (physics/distance_map.h) as the two channels of one texture */
    VptGpuDensityTexture paired[VPT_DENSITY_FORMAT_COUNT];
    uint8_t *distance_map;  /* host: the map, built once for every format */
    /* The environment map's radiance and sampling tables (scenes/env_map.h),
     * uploaded with the scene; 0 without a map. vpt_gpu_scene_medium points
     * the params' em_* fields at them. */
    CUdeviceptr env_radiance, env_row_cdf, env_col_cdf;
} VptGpuScene;

/* What one render samples: the medium of one estimator (harness/render_gpu.h). */
typedef struct {
    CUtexObject density_tex, albedo_tex;
    CUdeviceptr majorant;   /* 0: the global majorant */
    CUdeviceptr sparse;     /* volume=sparse: the density's NanoVDB grid; 0: the texture */
    int n[3];               /* the density grid's voxels per axis */
    float mean_density;     /* in the density texture's units */
} VptGpuMedium;

int vpt_gpu_scene_create(const VptScene *s, VptGpuScene *out);

/* The medium of estimator (format, majorant, sparse): the density texture
 * of `format` (with sparse, the NanoVDB grid of its values instead) and, for
 * a majorant other than the global one (VptConfig.majorant), the majorant
 * grid of C^3-voxel cells (C > 0), or for skip (-1) the texture of the
 * density and the distance map in two channels instead, each created on first
 * use (the free GPU memory checked first) and kept; *P becomes
 * *base (vpt_params_init of the scene) with the format's scale folded in
 * and the grid's fields set. -1 with a message naming the estimator when it
 * cannot be made. */
int vpt_gpu_scene_medium(VptGpuScene *g, VptDensityFormat format, int majorant, int sparse, const VptParams *base,
                         VptParams *P, VptGpuMedium *out);

/* The estimators a run uses, for what its scene takes on the GPU: the
 * density textures of the formats besides f32 (whose texture, and the
 * albedo's, every scene has), and the majorant grids per format. Sparse
 * (NanoVDB) grids are not counted: their size is the active voxels',
 * known once the tree is built, which checks the free memory then. */
typedef struct {
    unsigned formats;                           /* bit f: format f's density texture */
    unsigned grids[VPT_DENSITY_FORMAT_COUNT];   /* bit k: the grid of 2^k-voxel cells in format f */
    unsigned paired;                            /* bit f: format f's density + distance map texture (skip) */
    int albedo_table;                           /* the scene's albedo is a transfer's table (post-classification,
                                                   scenes/scene.h): no albedo texture per voxel; 0 counts one */
} VptGpuEstimators;

/* Adds the estimator of density format f and majorant `majorant`
 * (VptConfig.majorant: 0 the global one, no grid; C > 0 the grid of C-voxel
 * cells; -1 the distance map). */
void vpt_gpu_estimators_add(VptGpuEstimators *e, VptDensityFormat f, int majorant);
/* Every estimator vptune has (tune --estimators all). */
void vpt_gpu_estimators_all(VptGpuEstimators *e);

/* Bytes of GPU memory the scene's media take for estimators e (NULL: the
 * f32 density and the albedo only), without the margin below. */
double vpt_gpu_scene_bytes(int nx, int ny, int nz, const VptGpuEstimators *e);

/* The pre-allocation check: whether the textures and grids of estimators e
 * (NULL: f32 density and albedo, what vpt_gpu_scene_create allocates) for
 * a grid of nx*ny*nz voxels fit in `free_bytes` of GPU memory, with a
 * margin for the arrays' padding and the render's buffers (1/32 + 256
 * MiB). -1 with a message naming the scene, the grid, what it needs (and
 * of what), what is free, and what would fit: without the compact
 * formats, or the grid downsampled by a factor. Pure, so it is tested
 * without a GPU; the tools call it before loading a large volume too
 * (cli/scene_args.h). */
int vpt_gpu_scene_check_fits(const char *name, int nx, int ny, int nz, const VptGpuEstimators *e, size_t free_bytes,
                             size_t total_bytes);

/* The free and total memory of GPU `ordinal`, asked by a child process
 * (driver, context, cuMemGetInfo; a few tenths of a second), so that a
 * process which must not load CUDA itself (harness/eval_worker.h) can check
 * a scene before it loads it. -1 with a message when the child could not
 * tell (no driver, no such GPU). */
int vpt_gpu_memory_probe(int ordinal, size_t *free_bytes, size_t *total_bytes);
void vpt_gpu_scene_destroy(VptGpuScene *g);

#endif
