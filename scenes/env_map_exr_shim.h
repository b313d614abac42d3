/* The C interface of the OpenEXR plugin (scenes/env_map_openexr.cc), a
 * shared library of its own (bin/libvptune-openexr.so) that scenes/env_map.c
 * loads with dlopen the first time an .exr environment map is asked for, as
 * the OpenVDB reader's shim is loaded (base/plugin.h). Why a separate
 * library: Debian ships OpenEXR as shared libraries, and the programs must
 * keep running on GPU machines without them: there, only .exr maps fail,
 * saying what to install and how to convert the file to PFM.
 *
 * What it reads: the first part of a scanline file (tiled and deep files are
 * refused), its data window, and its R, G and B channels, or a Y channel for a
 * grey map, each converted to float by OpenEXR's own decoder (half, float or
 * uint), sampled 1 x 1. The values are not checked here: scenes/env_map.c
 * checks every texel as it checks a PFM's. */
#ifndef VPT_SCENES_ENV_MAP_EXR_SHIM_H
#define VPT_SCENES_ENV_MAP_EXR_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the functions or the struct change; the loader refuses a
 * plugin of another version (a stale install). */
#define VPT_EXR_SHIM_ABI 3

typedef struct {
    int width, height;
    float *rgb;              /* malloc'd (the caller frees it with free()): 3 floats a pixel, top row first */
    int lossy;               /* 1: the file's compression is lossy (B44, B44A, DWAA, DWAB) */
    char error[1024];
} VptExrResult;

int vpt_exr_shim_abi(void);

/* The OpenEXR file held in buf[0, size) (name: for messages; scenes/env_map.c
 * reads a file's bytes first, so files and memory are one parser); each side
 * must be in 1..max_dim and the pixels at most max_pixels, checked from the
 * header before any pixel is decoded. 0, or -1 with a message naming the file
 * in out->error (out->rgb NULL). Called in the fault boundary's worker
 * (base/isolate.h), never in the calling process. */
int vpt_exr_read_memory(const char *name, const unsigned char *buf, size_t size, int max_dim, size_t max_pixels,
                        VptExrResult *out);

#ifdef __cplusplus
}
#endif

#endif
