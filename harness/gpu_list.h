/* The CUDA GPUs this process may use, asked in a child process.
 *
 * A process that runs evaluation workers must never load the CUDA driver
 * itself (harness/eval_worker.h: a forked worker cannot use its parent's
 * CUDA state), yet `tune --gpus all` and an MPI rank choosing its GPU need
 * to know how many there are. So a short-lived child loads the driver,
 * lists the devices and exits; the parent reads the list from a pipe. The
 * list honours the caller's CUDA_VISIBLE_DEVICES (and CUDA_DEVICE_ORDER):
 * entry i is what CUDA ordinal i is in the caller's environment, which is
 * what `--gpus i` names. No context is created (no GPU memory is used). */
#ifndef VPT_HARNESS_GPU_LIST_H
#define VPT_HARNESS_GPU_LIST_H

#define VPT_GPU_LIST_MAX 64

typedef struct {
    int ordinal;
    char name[256];
    char uuid[64]; /* "GPU-..." as nvidia-smi prints it */
} VptGpuBrief;

/* Fills out[0..min(count, max)) and returns the count (>= 1), or -1 with
 * the message ("no CUDA driver: ...", "no CUDA GPU: ...", or why the child
 * failed); *no_gpu (may be NULL) is then 1 when the driver or every GPU is
 * missing (a CLI exits VPT_EXIT_NO_GPU), else 0. The child is reaped before
 * returning; one that gives no answer within 120 s is killed. */
int vpt_gpu_list(VptGpuBrief *out, int max, int *no_gpu);

/* The CUDA_VISIBLE_DEVICES value that pins a worker process to GPU
 * `ordinal` of this process's view: the ordinal-th entry of this process's
 * own CUDA_VISIBLE_DEVICES when it has one (an index, a UUID or a MIG
 * name, kept as written), else the ordinal itself. -1 with a message when
 * CUDA_VISIBLE_DEVICES has no such entry or buf is too small. */
int vpt_gpu_visible_value(int ordinal, char *buf, int size);

#endif
