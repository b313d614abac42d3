/* Environment maps: an equirectangular RGB radiance map as a light
 * (docs/lights.md), and the tables its directions are sampled from.
 *
 * The direction convention and the sampling are physics/vpt_physics.h's
 * "the environment map" (Mitsuba 3's `envmap`); this is the host side: the
 * file, its checks, the tables. A VptEnvMap owns its arrays; create with
 * vpt_env_map_load or vpt_env_map_from_image, release with
 * vpt_env_map_destroy. */
#ifndef VPT_SCENES_ENV_MAP_H
#define VPT_SCENES_ENV_MAP_H

#include "image/image.h"
#include "physics/vpt_physics.h"

/* The share of uniform sphere directions in the sampling mixture: the pdf
 * stays above em_uniform / (4 pi) everywhere, so no direction a map (or a
 * rounding of its tables) lights is left unsampled. 1 for a black map
 * (docs/decisions/env-map-sampling.md). */
#define VPT_ENV_UNIFORM 0.1f

typedef struct VptEnvMap {
    int width, height;
    double scale;            /* the factor the file's texels were multiplied by */
    float *radiance;         /* owned: 3 W H floats, top row (+y) first, the scale folded in */
    float *row_cdf;          /* owned: H + 1 */
    float *col_cdf;          /* owned: H (W + 1) */
    float uniform;           /* VPT_ENV_UNIFORM, or 1 for a black map */
    char stem[256];          /* the file's name without folder and extension (for the scene's name; a
                                longer one is refused there, never cut) */
    char source[256];        /* the file as given */
} VptEnvMap;

/* Loads a map by the file's extension (case-insensitive): ".pfm" (colour
 * "PF" or grey "Pf", image/image.h's rules) or ".exr" (OpenEXR's scanline
 * files, R, G and B or Y, through the plugin libvptune-openexr.so:
 * scenes/env_map_exr_shim.h; where it cannot be loaded, a message saying
 * what to install).
 * Every texel times scale must be finite and >= 0, scale finite and > 0.
 * NULL with a message naming the file and what is wrong. */
VptEnvMap *vpt_env_map_load(const char *path, double scale);
/* An .exr file larger than this is refused before it is read: an
 * uncompressed RGBA float map of the largest size (VPT_IMAGE_MAX_PIXELS)
 * and 64 MiB of headers and offset tables. */
#define VPT_ENV_MAP_EXR_MAX_FILE ((size_t)16 * VPT_IMAGE_MAX_PIXELS + ((size_t)64 << 20))
/* An OpenEXR map from the file's bytes in buf[0, size): what
 * vpt_env_map_load does with an .exr file once it has read it (one parser
 * for files and memory; the fuzz target fuzz/fuzz_env_map_exr.c calls it).
 * OpenEXR decodes the file behind the fault boundary (base/isolate.h), in
 * one worker process kept for the process's later .exr maps: a crash, an
 * abort, a hang or an allocation beyond VPT_PARSER_MEMORY inside OpenEXR is
 * a refusal naming the file. What comes back is checked (its size, then
 * every texel, as vpt_env_map_from_image checks any image). `name` as in
 * vpt_env_map_from_image. NULL with a message naming `name`. */
VptEnvMap *vpt_env_map_parse_exr(const char *name, const unsigned char *buf, size_t size, double scale);
/* Where the OpenEXR plugin was loaded from, or NULL when it cannot be (the
 * tests that need it skip then). */
const char *vpt_env_map_exr_shim_path(void);
/* The same from an image in memory (row 0 the top); `name` is used in
 * messages and its stem in the scene's name. */
VptEnvMap *vpt_env_map_from_image(const char *name, const VptImage *img, double scale);
void vpt_env_map_destroy(VptEnvMap *m); /* NULL is fine */

/* The weight a texel's direction is sampled with, before the sine of its
 * row: a luminance (Rec. 709 weights, all positive, so a texel with any
 * radiance has weight). */
static inline double vpt_env_texel_weight(const float rgb[3])
{
    return 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
}

/* Points p's environment map fields at m's arrays (host addresses: the CPU
 * reference; harness/gpu_scene.c puts device copies there). */
void vpt_env_map_params(const VptEnvMap *m, VptParams *p);

#endif
