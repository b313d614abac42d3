/* The tools' GPU memory check before loading: see cli/gpu_check.h. */
#include "cli/gpu_check.h"

#include "base/error.h"

int vpt_gpu_check_admit(void *ctx, const char *name, const int dims[3])
{
    const VptGpuCheck *c = ctx;
    if (vpt_gpu_scene_bytes(dims[0], dims[1], dims[2], &c->estimators) < 1073741824.0) return 0;
    size_t free_b, total_b;
    if (vpt_gpu_memory_probe(c->device, &free_b, &total_b)) {
        vpt_error_clear(); /* no GPU: the tool says so when it opens one */
        return 0;
    }
    return vpt_gpu_scene_check_fits(name, dims[0], dims[1], dims[2], &c->estimators, free_b, total_b);
}
