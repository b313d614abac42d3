/* Scenes: one dense medium in an axis-aligned box, a camera, a boundary and a
 * constant environment (thesis ch. 4 and 6; ../shared/data/README.md).
 *
 * The six thesis scenes are built in as deterministic procedural stand-ins
 * (the CT scans, logo images, smoke and bucky data are not redistributable or
 * not shipped); --volume loads real data through volume.h. A VptScene owns its
 * grids; create with vpt_scene_builtin or vpt_scene_from_volume, release with
 * vpt_scene_destroy. */
#ifndef VPT_SCENES_SCENE_H
#define VPT_SCENES_SCENE_H

#include "physics/vpt_physics.h"
#include "scenes/volume.h"

#include <stdint.h>
#include <stdio.h>

typedef struct {
    char name[64];
    char source[256];        /* "procedural stand-in: ..." or the file loaded */
    int nx, ny, nz;
    float *density;          /* owned; normalized densities in [0, 1], x fastest */
    uint8_t *albedo;         /* owned; RGBA8 linear albedo per voxel (A unused, 255) */
    float density_max;       /* max of density[], set by vpt_scene_finalize */
    float density_scale;     /* sigma_t = density_scale * density */
    float box_min[3], box_max[3];
    float cam_pos[3], cam_target[3], cam_up[3];
    float fov_deg;           /* horizontal field of view */
    int boundary;            /* VPT_BOUNDARY_* */
    float ior_inside, ior_outside, ggx_alpha;
    float hg_g;
    float env[3];
    /* the thesis workload for this scene */
    int width, height, spp;
} VptScene;

/* Names of the built-in scenes, NULL-terminated: cgg-logo, ad, artifix,
 * manix, smoke, bucky. */
const char *const *vpt_scene_names(void);
/* One line per built-in scene (name, grid, what it stands in for). */
void vpt_scene_print_list(FILE *fp);

/* Builds a built-in scene; deterministic (same bytes every call). Unknown
 * names fail with a message listing the known ones. */
VptScene *vpt_scene_builtin(const char *name);

/* How a loaded volume becomes a medium. */
typedef enum {
    VPT_TF_AUTO,     /* CT for integer data with a range beyond [0,1] or 8 bit... see scene.c */
    VPT_TF_CT,       /* thesis CT: density = smoothstep(0.2, 0.6, (v - min) / (max - min)),
                        albedo from the 100-entry gray -> red -> blue table */
    VPT_TF_LINEAR,   /* density = (v - min) / (max - min), white albedo */
    VPT_TF_IDENTITY  /* density = v (must lie in [0, 1]), white albedo: Mitsuba smoke */
} VptTransfer;

typedef struct {
    VptVolumeLoadOptions load;
    int downsample;          /* 0 or 1: none; N: N^3 box averaging (vpt_volume_downsample) */
    int upsample;            /* 0 or 1: none; N: trilinear (vpt_volume_upsample); not with downsample */
    VptTransfer transfer;
    float density_scale;     /* 0: 100 */
    const char *like;        /* take camera/boundary/scale from this built-in
                                scene (e.g. "manix", "smoke"); NULL: CT scan defaults */
} VptVolumeSceneOptions;

VptScene *vpt_scene_from_volume(const char *path, const VptVolumeSceneOptions *opt);

/* Validates grids and parameters and computes density_max. Builders call it;
 * after editing a scene by hand, call it again. */
int vpt_scene_finalize(VptScene *s);

void vpt_scene_destroy(VptScene *s);

/* SHA-256 of everything that determines a finalized scene's images: grid
 * size, densities, albedos, density scale, box, camera, fov, boundary and its
 * parameters, HG g and environment (each value as its little-endian bytes,
 * in that order), as 64 lowercase hex digits. Name, source and the default
 * workload do not count. */
int vpt_scene_digest(const VptScene *s, char hex[65]);

/* The thesis' CT transfer: 100-entry gray -> red -> blue albedo table. */
void vpt_ct_albedo(float density, uint8_t rgba[4]);
float vpt_ct_density(float normalized_value);

/* Most tiles per image axis (thesis table 4.2 goes to 64). */
#define VPT_MAX_TILES 256

/* Per-render settings. */
typedef struct {
    int width, height, spp;  /* 0: the scene's workload */
    uint32_t seed;
    int max_depth;           /* 0: unlimited */
    int rr_depth;            /* -1: no Russian roulette */
    int tiles;               /* GPU: the image in tiles x tiles launches, one
                                per tile (thesis 4.1.2); 0 or 1: one launch.
                                The image and counts do not depend on it. */
} VptRenderSettings;

/* Fills the kernel/CPU parameter block from a finalized scene. */
void vpt_params_init(VptParams *p, const VptScene *s, const VptRenderSettings *r);

#endif
