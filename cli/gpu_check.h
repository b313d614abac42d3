/* The GPU memory check a tool makes before it loads a scene it will render
 * on the GPU (issue 17): a 906 MB CT that cannot fit on the GPU with the
 * run's estimators is refused once its header is read, not after a long
 * load and the worker's start.
 *
 * The tools put the estimators their configs use (bench), or may use (tune:
 * its estimator list), in a VptGpuCheck and pass vpt_gpu_check_admit as the
 * scene options' admit hook (VptSceneArgs.admit, cli/scene_args.h). A scene
 * whose media need at least a GiB is checked against the free memory of the
 * GPU, asked by a child process (vpt_gpu_memory_probe: the tools must not
 * load CUDA themselves); smaller scenes are left to the worker's own check
 * (harness/gpu_scene.h), which costs no extra CUDA start. Without a GPU the
 * check passes: the tool then says there is none, as before. */
#ifndef VPT_CLI_GPU_CHECK_H
#define VPT_CLI_GPU_CHECK_H

#include "harness/gpu_scene.h"

typedef struct {
    VptGpuEstimators estimators;
    int device;
} VptGpuCheck;

/* ctx: a VptGpuCheck. -1 with vpt_gpu_scene_check_fits' message when the
 * grid (dims, after resampling) cannot fit. */
int vpt_gpu_check_admit(void *ctx, const char *name, const int dims[3]);

#endif
