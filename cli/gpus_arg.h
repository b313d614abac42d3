/* --gpus, the one parser of GPU selections (tune and bench):
 *
 *   --gpus all        every GPU this process sees
 *   --gpus 0,2,3      these CUDA ordinals of this host (as nvidia-smi and
 *                     CUDA_VISIBLE_DEVICES count them, within the latter
 *                     when it is set), each once
 *
 * Each selected GPU gets an evaluation worker of its own, pinned to it as
 * CUDA_VISIBLE_DEVICES would (harness/gpu_list.h). */
#ifndef VPT_CLI_GPUS_ARG_H
#define VPT_CLI_GPUS_ARG_H

#define VPT_GPUS_MAX 64

typedef struct {
    int given; /* --gpus was given */
    int all;
    int n;
    int index[VPT_GPUS_MAX];
} VptGpuSelection;

/* Parses "all" or a list of distinct ordinals 0..VPT_GPUS_MAX-1 into *out
 * (given set). -1 with a message naming the bad item. */
int vpt_gpus_parse(const char *text, VptGpuSelection *out);

/* The selection as text: "all" or "0,2,3" (a list parses back to itself). */
void vpt_gpus_format(const VptGpuSelection *s, char *buf, int size);

/* The GPUs a selection names on a host with `available` of them (from
 * harness/gpu_list.h): every one for all, else the list, which must name
 * only GPUs that exist. Fills out[0..n) and returns n, or -1 with a message
 * ("--gpus 3: this host has 2 GPUs (0..1)"). */
int vpt_gpus_resolve(const VptGpuSelection *s, int available, int *out);

#endif
