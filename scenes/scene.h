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

/* Where a scene's grid came from, for the "volume" of result rows
 * (harness/evaluator.h), so that rows of different grids never mix: with
 * the grid's size, the voxel type its data came in and its source. */
typedef struct {
    char format[16];         /* the voxel type of the source data: "i16", "u8", "f32", ... */
    char source[256];        /* a built-in scene's name, or the file (or folder) as given */
    char sha256[65];         /* the file's SHA-256; "" for built-in scenes and DICOM series */
    char data_sha256[65];    /* of a separate data file its header names; else "" */
    char resample[24];       /* "up4", "down2"; "" when the grid is the file's */
    double load_s;           /* seconds the load or build took (set by cli/scene_args.c; reported, not
                                part of the grid's identity) */
    /* The grid's box in the file's own world frame (voxel size and origin), when the scene's box is that box
     * scaled uniformly and centred on the origin (a volume loaded without --like and without a box of its own):
     * world_min maps to box_min and world_max to box_max, so a camera or light given in the file's frame (a
     * renderer's scene description of the same file) can be placed in the scene's. has_world 0 otherwise. */
    int has_world;
    double world_min[3], world_max[3];
} VptSceneVolume;


/* A scene's name holds at most VPT_SCENE_NAME_MAX - 1 bytes: a file's stem
 * and every light and medium value it was given ("@sun...@irr...@env...");
 * a longer one is refused, never cut (scenes/scene_common.c). */
#define VPT_SCENE_NAME_MAX 192

typedef struct {
    char name[VPT_SCENE_NAME_MAX];
    char source[256];        /* "procedural stand-in: ..." or the file loaded */
    int nx, ny, nz;
    float *density;          /* owned; normalized densities in [0, 1], x fastest */
    /* The albedo, one of two kinds (docs/albedo.md):
     *   a grid (albedo_table NULL): RGBA8 linear albedo per voxel (A unused,
     *     255), filtered like the density (pre-classification). Built-in
     *     scenes, Mitsuba scenes and files with their own albedo grid.
     *   a table (albedo NULL): the transfer function's, entry
     *     vpt_albedo_entry(d, albedo_entries, albedo_entries) of the
     *     filtered density d (post-classification, vpt_physics.h), so
     *     nothing is stored per voxel. Volumes loaded through a transfer. */
    uint8_t *albedo;         /* owned, or NULL with a table */
    const uint8_t (*albedo_table)[4]; /* borrowed (static, or albedo_constant): albedo_entries RGBA8
                                         entries, or NULL */
    uint8_t albedo_constant[1][4]; /* the one entry of a constant albedo (vpt_scene_set_medium) */
    int albedo_entries;      /* entries of albedo_table; 0 with a grid */
    float density_max;       /* max of density[], set by vpt_scene_finalize */
    float density_mean;      /* mean of density[], set by vpt_scene_finalize */
    float density_scale;     /* sigma_t = density_scale * density */
    float box_min[3], box_max[3];
    float cam_pos[3], cam_target[3], cam_up[3];
    float fov_deg;           /* horizontal field of view */
    int boundary;            /* VPT_BOUNDARY_* */
    float ior_inside, ior_outside, ggx_alpha;
    float hg_g;
    float env[3];            /* constant environment radiance */
    /* A distant light, the sun: on when any sun_irradiance[k] > 0. sun_dir
     * is the unit direction toward the light (world space); sun_irradiance
     * the irradiance it gives a surface facing it; sun_radius_deg its
     * angular radius in degrees, 0 for a delta light (reached only by
     * next-event estimation, which needs a null boundary). */
    float sun_dir[3];
    float sun_irradiance[3];
    float sun_radius_deg;
    /* An environment map (scenes/env_map.h), owned: radiance added to env in
     * each direction, a light next-event estimation samples like the sun.
     * NULL: none. */
    struct VptEnvMap *env_map;
    /* the thesis workload for this scene */
    int width, height, spp;
    VptSceneVolume volume;   /* not part of vpt_scene_digest */
} VptScene;

/* Bytes of the volume's grid in its source format (voxels x the format's
 * size): what result rows report as the volume's size. */
uint64_t vpt_scene_volume_bytes(const VptScene *s);

/* Names of the six thesis scenes, NULL-terminated: cgg-logo, ad, artifix,
 * manix, smoke, bucky: what "every scene" means (bench --thesis, the tests).
 * The scalable scenes head<N> and cloud<N> (N = 16 .. 2048: the same
 * content on an N^3 grid) are built-in too, but not listed here: a loop
 * over every scene must not build 8 GB grids. */
const char *const *vpt_scene_names(void);
/* One line per built-in scene (name, grid, what it stands in for), then
 * one per scalable scene at 128, 256, 512, 1024 and 2048 with its host
 * memory. Builds nothing. */
void vpt_scene_print_list(FILE *fp);
/* 0 when name is a built-in scene (a thesis scene or head<N>, cloud<N>);
 * -1 with a message listing the known ones otherwise. Builds nothing. */
int vpt_scene_builtin_check(const char *name);
/* A built-in scene's parameters and grid size, without its grids
 * (density and albedo NULL), e.g. for --like or a memory check before a
 * large scene is built. -1 with the message of vpt_scene_builtin_check. */
int vpt_scene_builtin_params(const char *name, VptScene *out);

/* Builds a built-in scene; deterministic (same bytes every call, whatever
 * the thread count). Unknown names fail with a message listing the known
 * ones; a scene that cannot fit in host memory (base/memory.h) is refused
 * before it is allocated, naming a size that would fit. */
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
    /* Asked with the scene's grid (after resampling) once the file's header
     * has given it, before any voxel is read: non-zero refuses the volume
     * (the hook sets the message), e.g. the tools' GPU memory check. The
     * host memory check (MemAvailable, the cgroup's limit) is built in and
     * comes first. NULL: none. */
    int (*admit)(void *ctx, const char *name, const int dims[3]);
    void *admit_ctx;
} VptVolumeSceneOptions;

/* Loads, resamples and maps the volume into a scene. Memory: a volume that
 * cannot fit in host memory is refused once its header is read, before
 * any voxel is (naming the sizes and a --downsample or --upsample factor
 * that fits); the loaded float grid becomes the density grid in place and
 * the albedo is the transfer's table (post-classification), so the peak is
 * the scene itself (4 bytes a voxel: the float density), or with
 * resampling the larger of that and both grids. A file's own albedo grid
 * becomes the scene's RGBA8 grid (4 bytes a voxel more). */
VptScene *vpt_scene_from_volume(const char *path, const VptVolumeSceneOptions *opt);

/* Validates grids and parameters and computes density_max. Builders call it;
 * after editing a scene by hand, call it again. */
int vpt_scene_finalize(VptScene *s);

void vpt_scene_destroy(VptScene *s);

/* The medium's parameters a user may override on any scene (the tools'
 * --density-scale, --albedo, --g: cli/scene_args.h). A field left at its
 * "keep" value leaves the scene's own. */
typedef struct {
    double density_scale; /* sigma_t per unit density, > 0; 0: keep */
    int has_albedo;       /* 1: albedo[] replaces the scene's albedo everywhere */
    double albedo[3];     /* linear RGB in [0, 1], stored as 8 bits (round to nearest), as every albedo */
    int has_g;            /* 1: g replaces the Henyey-Greenstein asymmetry */
    double g;             /* in (-1, 1) */
} VptMediumOverride;

/* Applies o to a finalized scene and finalizes it again; the overridden
 * values are appended to the name ("smoke@scale50@albedo0.8@g0.877"), as
 * resampling is (scene_volume.c), so results, caches and saved winners of
 * the scene and of its variant never mix. A constant albedo frees the
 * scene's albedo grid. -1 with a message naming the value otherwise. */
int vpt_scene_set_medium(VptScene *s, const VptMediumOverride *o);

/* 1 when s has a sun: any sun_irradiance[k] > 0. */
static inline int vpt_scene_has_sun(const VptScene *s)
{
    return s->sun_irradiance[0] > 0.0f || s->sun_irradiance[1] > 0.0f || s->sun_irradiance[2] > 0.0f;
}

/* 1 when s has an environment map. */
static inline int vpt_scene_has_env_map(const VptScene *s) { return s->env_map != NULL; }

/* The light a user may set on any scene (the tools' --sun, --sun-irradiance,
 * --sun-radius, --env: cli/scene_args.h; docs/scenes.md "Lights"). A part
 * whose has_ flag is 0 leaves the scene's own. Doubles, as the flags give
 * them: the name records these values, so the same flags name the same
 * scene. */
typedef struct {
    int has_sun;              /* 1: the sun_* fields replace the scene's sun */
    double sun_dir[3];        /* toward the sun, world space; any finite non-zero length (normalized) */
    double sun_irradiance[3]; /* finite, >= 0 (all 0: no sun) */
    double sun_radius_deg;    /* angular radius in [0, 45]; 0: a delta light */
    int has_env;              /* 1: env replaces the scene's environment radiance */
    double env[3];            /* finite, >= 0 */
    const char *env_map;      /* non-NULL: this file (scenes/env_map.h) becomes the scene's environment map */
    double env_map_scale;     /* its texels' factor, finite and > 0; 0: 1 */
} VptLightOverride;

/* Applies o to a finalized scene and finalizes it again (which refuses a
 * delta sun with a dielectric boundary). The light is appended to the name,
 * each value as the flag that sets it takes it and parses back to the same
 * bytes: "@sun<X,Y,Z>@irr<E|R,G,B>" with "@radius<DEG>" when the radius is
 * not 0, "@env<E|R,G,B>" ("smoke@sun0.3,1,0.2@irr3@env0.05,0.08,0.15"), and
 * "@envmap<stem>" with "@emscale<S>" when the scale is not 1 (the map's
 * texels are in the digest, so two files of one stem never share a cache
 * entry). A map that fails to load fails the whole call, leaving s as it
 * was.
 * A name that would not fit in name[] fails (it is never cut: two lights
 * must not share a name). -1 with a message naming the value otherwise. */
int vpt_scene_set_light(VptScene *s, const VptLightOverride *o);

/* The unit direction of d (finite, not all 0) into out; a d that is unit to
 * float precision is kept as given, so that a direction written out and
 * read back (Mitsuba export) keeps its bytes. -1 with a message naming
 * `what` otherwise. */
int vpt_sun_direction(const double d[3], const char *what, float out[3]);

/* The light a cloud gets when the user gives none (the tools apply it to
 * .vdb and .nvdb volumes loaded without --like, --sun or --env;
 * docs/scenes.md "Lights"): a delta sun from above, irradiance 3 (white),
 * toward (0.3, 1, 0.2) in the camera's frame (x right, y up, z back toward
 * the camera: up and a little to the right, in front of the cloud), and a
 * dim blue sky of radiance (0.05, 0.08, 0.15). Fills *o. */
void vpt_scene_cloud_light(const VptScene *s, VptLightOverride *o);
/* Lights a finalized scene as a cloud: the null boundary (a cloud sits in
 * no glass box, and a delta sun is reached only through a null boundary)
 * and vpt_scene_cloud_light's light through vpt_scene_set_light (which
 * names it). 0, or -1 with a message. */
int vpt_scene_light_cloud(VptScene *s);

/* SHA-256 of everything that determines a finalized scene's images: grid
 * size, densities, albedos, density scale, box, camera, fov, boundary and its
 * parameters, HG g and environment (each value as its little-endian bytes,
 * in that order), then, only when the sun is on, a tag, sun_dir,
 * sun_irradiance and sun_radius_deg (so a scene without a sun keeps the
 * digest it had before scenes had suns), then, only with an environment
 * map, a tag, its size and its radiance texels (the scale folded in), as
 * 64 lowercase hex digits. Name, source and the default workload do not
 * count. */
int vpt_scene_digest(const VptScene *s, char hex[65]);

/* The thesis' CT transfer: density = smoothstep(0.2, 0.6, normalized
 * value), albedo from a 100-entry gray -> red -> blue table indexed by the
 * density. Inline and a table, because a loaded CT maps every one of its
 * (up to billions of) voxels through them. */
static inline float vpt_ct_density(float x)
{
    float t = (x - 0.2f) / 0.4f;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    return t * t * (3.0f - 2.0f * t);
}
/* The table's VPT_CT_ALBEDO_ENTRIES RGBA8 entries (made once, thread-safe). */
#define VPT_CT_ALBEDO_ENTRIES 100
const uint8_t (*vpt_ct_albedo_table(void))[4];
static inline void vpt_ct_albedo_from(const uint8_t (*table)[4], float density, uint8_t rgba[4])
{
    const int i = vpt_albedo_entry(density, (float)VPT_CT_ALBEDO_ENTRIES, VPT_CT_ALBEDO_ENTRIES);
    for (int k = 0; k < 4; k++) rgba[k] = table[i][k];
}
void vpt_ct_albedo(float density, uint8_t rgba[4]);
/* The one-entry table of the linear and identity transfers: white. */
const uint8_t (*vpt_white_albedo_table(void))[4];

/* Host memory of the scene's albedo: 4 bytes a voxel for a grid, 0 for a
 * table. */
size_t vpt_scene_albedo_bytes(const VptScene *s);

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
