/* A scene's medium on the GPU: density (float) and albedo (RGBA8) as 3D CUDA
 * arrays behind texture objects with trilinear filtering, clamping and
 * normalized coordinates (what vpt_medium_density/albedo sample in
 * kernels.cu.in, and what reference/cpu_medium.h emulates).
 *
 * Lifecycle: create after vpt_gpu_open on the current context; destroy before
 * the context is reset or closed. Creation refuses volumes that do not fit in
 * the GPU's free memory, before allocating. */
#ifndef VPT_HARNESS_GPU_SCENE_H
#define VPT_HARNESS_GPU_SCENE_H

#include "harness/cuda_driver.h"
#include "scenes/scene.h"

typedef struct {
    CUarray density_array, albedo_array;
    CUtexObject density_tex, albedo_tex;
    size_t bytes;           /* device memory held */
    float mean_density;     /* normalized, for the termination sort key */
} VptGpuScene;

int vpt_gpu_scene_create(const VptScene *s, VptGpuScene *out);

/* The pre-allocation check behind vpt_gpu_scene_create: whether textures for
 * a grid of nx*ny*nz voxels fit in `free_bytes` of GPU memory (with a margin
 * for the arrays' padding); -1 with a message naming the scene, the grid and
 * both sizes when they do not. Pure, so it is tested without a GPU. */
int vpt_gpu_scene_check_fits(const char *name, int nx, int ny, int nz, size_t free_bytes, size_t total_bytes);
void vpt_gpu_scene_destroy(VptGpuScene *g);

#endif
