/* Provenance of a measurement: which GPU, driver, compiler, commit and host
 * produced it. Every results row carries it (DESIGN.md, "Results"). */
#ifndef VPT_HARNESS_PROVENANCE_H
#define VPT_HARNESS_PROVENANCE_H

#include "harness/cuda_driver.h"

#include <jansson.h>
#include <stddef.h>

typedef struct {
    char gpu_name[256];        /* "NVIDIA H100 80GB HBM3"; "none" without a GPU */
    char gpu_uuid[64];         /* "GPU-..."; "" without a GPU */
    char driver_release[64];   /* "580.159.04" or "unknown" */
    char nvrtc[32];            /* "13.0" */
    char commit[64];           /* git commit the program was built from, "<sha>[-dirty]" */
    char host[128];            /* hostname */
    char cc[16];               /* compute capability "9.0"; "" without a GPU */
    int sm_count;
    int cuda_driver_version;   /* cuDriverGetVersion (13000); 0 without a GPU */
} VptProvenance;

/* Fills *p from g (NULL when there is no GPU: the GPU fields say so, the
 * rest is still filled). Never fails. */
void vpt_provenance_fill(VptProvenance *p, const VptGpu *g);

/* New reference to the object
 *   {"gpu": {"name", "uuid", "sm_count", "cc", "driver", "cuda_driver_version"},
 *    "nvrtc", "commit", "host"}
 * ("driver" is the release string). NULL only when out of memory. */
json_t *vpt_provenance_json(const VptProvenance *p);

/* The current UTC time as "2025-11-21T06:03:00Z". */
void vpt_iso8601_now(char *buf, size_t n);

/* The results/<gpu>/ folder name for a GPU: the models whose results are
 * compared (the SXM H100 and the H200) get short names ("NVIDIA H100 80GB
 * HBM3" -> "h100", "NVIDIA H200" -> "h200"); any other name becomes a
 * lowercase slug without the "NVIDIA" prefix ("NVIDIA H100 PCIe" ->
 * "h100-pcie", "NVIDIA GeForce RTX 4090" -> "geforce-rtx-4090"), so
 * different models never share a folder. -1 if the name has no letters or
 * digits or out is too small. */
int vpt_gpu_dirname(const char *gpu_name, char *out, size_t n);

#endif
