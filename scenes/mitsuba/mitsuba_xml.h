/* Mitsuba interoperability: vptune scenes to and from Mitsuba scene files.
 *
 * The scenes vptune renders have one shape: a dense medium filling an
 * axis-aligned box, the box's boundary (index-matched, smooth dielectric or
 * GGX rough dielectric), a constant environment and a pinhole camera. So do
 * the thesis' own Mitsuba 0.5 scene files and the Mitsuba 3 files the export
 * writes. Both directions map our conventions onto Mitsuba's exactly:
 *
 *   camera    perspective sensor, fov_axis x (our fov is horizontal), to_world
 *             = lookat(cam_pos, cam_target, cam_up). Mitsuba's camera space has
 *             x to the left and the film's x to the right, as our image; film
 *             row 0 is the top row, as ours; no flips.
 *   pixels    box reconstruction filter: every sample lands in the pixel it
 *             was drawn in, and a pixel is the mean of its samples (ours is
 *             a uniformly jittered point per sample).
 *   box       a `cube` shape ([-1, 1]^3) scaled by the half extents and
 *             translated to the box centre; our interior IOR is Mitsuba's
 *             int_ior (the side opposite the outward normal).
 *   grids     `gridvolume`s whose to_world maps [0, 1]^3 onto the box. Mitsuba
 *             3 ignores the bounding box stored in a .vol file unless
 *             use_grid_bbox is set; its textures place texel i's centre at
 *             (i + 0.5) / n and clamp, as our CUDA textures and CPU lookups
 *             do (vpt_physics.h). The .vol files we write carry the box as
 *             their bbox as well, for Mitsuba 0.5 and for `--volume`.
 *   density   sigma_t = scale * grid value; the grid holds our normalized
 *             densities in [0, 1] and scale our density_scale.
 *   albedo    a float32 3-channel grid of our 8-bit albedos / 255 (1 channel
 *             when every voxel is grey; a constant when all voxels agree).
 *   phase     isotropic for g = 0, else hg with our g (g > 0 scatters forward
 *             in both).
 *   boundary  null (index-matched), dielectric, or roughdielectric with
 *             distribution ggx, alpha, sample_visible. Both renderers scale
 *             radiance crossing into index eta_t from eta_i by
 *             (eta_i / eta_t)^2.
 *   light     constant emitter, rgb radiance = our env; a sun, when on, a
 *             directional emitter: Mitsuba's direction is the one the light
 *             travels, -sun_dir; irradiance = our sun_irradiance (default
 *             1). Mitsuba's directional is a delta light: a sun with a radius
 *             is exported as one (the XML says so in a comment). The medium's
 *             sample_emitters is true with a sun (a delta light is reached
 *             by shadow rays only), else false (vptune traces none).
 *   integrator volpath, max_depth -1 for our 0 (unlimited; otherwise the
 *             same number: both count scattering and surface events) and,
 *             for no Russian roulette, rr_depth VPT_MITSUBA_NO_RR.
 *   sampler   independent, sample_count = spp; film hdrfilm, rgb float32.
 *
 * Import reads Mitsuba 3 files of that shape and the Mitsuba 0.5 dialect of
 * the thesis' scene files (scene version 0.x: camelCase names, a
 * heterogeneous medium with `density` and `albedo` volumes and `method`
 * woodcock, an `obj` box mesh, a shape without BSDF being index-matched,
 * gridvolumes placed by their file's bounding box). Every element, plugin
 * and property must be understood: anything else is an error naming it and
 * its line, never silently ignored. `<default name= value=>` and `$name`
 * substitution are supported. Conventions that differ and are followed as
 * documented, not reproduced: Mitsuba 0.5 put voxel centres on the bbox
 * faces; vptune and Mitsuba 3 put cell centres half a voxel inside (the
 * `--volume` loader does the same). Albedos are quantized to 8 bits
 * (vptune's texture format): a foreign float albedo moves by at most 1/510.
 *
 * Parsing (mitsuba_xml.c) turns the text into a VptMitsubaDesc and touches
 * no other file; loading (mitsuba_scene.c) reads the .vol and .obj files it
 * names and builds a VptScene. */
#ifndef VPT_SCENES_MITSUBA_XML_H
#define VPT_SCENES_MITSUBA_XML_H

#include "scenes/scene.h"

#include <stddef.h>

/* Mitsuba's rr_depth that stands for "no Russian roulette" in exports; on
 * import, an rr_depth or max_depth of at least VPT_MITSUBA_DEPTH_INFINITE
 * (the thesis' files use 1000000 and 10000000) means none / unlimited: no
 * path of these scenes gets that deep. */
#define VPT_MITSUBA_NO_RR 1073741824
#define VPT_MITSUBA_DEPTH_INFINITE 1000000

/* Largest scene file read, and the deepest element nesting accepted. */
#define VPT_MITSUBA_MAX_XML_BYTES ((size_t)16 << 20)
#define VPT_MITSUBA_MAX_NESTING 32

typedef enum {
    VPT_MTS_VOLUME_NONE = 0,  /* not given: the plugin's default */
    VPT_MTS_VOLUME_CONST,     /* a float, rgb or spectrum value, or a constvolume */
    VPT_MTS_VOLUME_GRID       /* a gridvolume */
} VptMitsubaVolumeKind;

/* One of the medium's volumes (sigma_t/density or albedo). */
typedef struct {
    VptMitsubaVolumeKind kind;
    float value[3];           /* CONST: the value (grey: three equal) */
    char filename[1024];      /* GRID: as written in the file */
    double to_world[16];      /* GRID: row-major 4x4; identity when absent */
    int use_grid_bbox;        /* GRID: the local box is the .vol file's bbox
                                 (Mitsuba 0.5 always; 3 with use_grid_bbox),
                                 else [0, 1]^3 */
    int line;                 /* where it was given */
} VptMitsubaVolume;

typedef enum { VPT_MTS_SHAPE_CUBE, VPT_MTS_SHAPE_OBJ } VptMitsubaShapeKind;

/* What a scene file says, in Mitsuba's terms where they need files to
 * resolve (the box of an obj mesh, a grid's bbox), in vptune's otherwise. */
typedef struct {
    int version_major;        /* 0 (0.x files) or 3 (2.x and 3.x files) */
    /* sensor */
    int camera_from_lookat;   /* to_world was one lookat: cam_target as written */
    float cam_pos[3], cam_target[3], cam_up[3];
    double fov_deg;           /* as written, along fov_axis */
    char fov_axis[16];        /* x, y, diagonal, smaller, larger */
    double near_clip, far_clip;
    int width, height, spp;
    /* integrator, in vptune's conventions */
    int max_depth;            /* 0: unlimited */
    int rr_depth;             /* -1: no Russian roulette */
    /* emitters: a constant one (env), a directional one (the sun) and an
     * environment map */
    float env[3];
    int has_sun;              /* a <emitter type="directional"> */
    float sun_dir[3];         /* unit, toward the light: -normalize(direction) */
    float sun_irradiance[3];  /* >= 0 */
    char env_map[1024];       /* an <emitter type="envmap">'s filename as written; "" without one */
    double env_map_scale;     /* its scale, > 0 (Mitsuba's default 1) */
    int env_map_line;
    /* medium */
    VptMitsubaVolume sigma_t, albedo;
    double scale;
    float hg_g;
    int medium_line;
    /* shape and boundary */
    VptMitsubaShapeKind shape;
    char shape_filename[1024];  /* OBJ */
    double shape_to_world[16];
    int shape_line;
    int boundary;             /* VPT_BOUNDARY_* */
    float ior_inside, ior_outside, ggx_alpha;
} VptMitsubaDesc;

/* Parses a scene file's text. `name` starts every message (with ":line"
 * where one applies). Fails with a message on malformed XML, a DOCTYPE,
 * nesting deeper than VPT_MITSUBA_MAX_NESTING, an unknown element, plugin,
 * property or attribute, a missing or malformed value, an undefined $name,
 * and any scene that is not of the shape described above. Any bytes are safe
 * input (fuzz/fuzz_mitsuba_xml.c). */
int vpt_mitsuba_parse(const char *name, const char *text, size_t size, VptMitsubaDesc *out);

/* The 4x4 (row-major) world transform of `m` applied to a point. */
void vpt_mitsuba_transform_point(const double m[16], const double p[3], double out[3]);

/* A scene from a Mitsuba scene file (above): parses it, loads the .vol and
 * .obj files it names (relative paths against the file's directory), and
 * checks that the medium's grids fill the box shape (to 1e-5 of its size;
 * the scene's box is then the grids', exactly, since a mesh's vertices may
 * be printed to fewer digits) and that an albedo grid has the density
 * grid's resolution. A constant sigma_t and albedo make a 1x1x1 grid filling
 * the shape's box. Mitsuba's near/far clipping must not cut the box (vptune
 * does not clip). Densities
 * above 1 are normalized: the grid is divided by its maximum and the scale
 * multiplied by it. The scene's name is the file's stem, '-', and the first
 * 8 hex digits of vpt_scene_digest, so that results of two different scenes
 * never share a cache or best-config file. When integrator is not NULL it
 * receives the file's max_depth and rr_depth (vptune's conventions), which
 * the tools use unless their own flags say otherwise. */
typedef struct {
    int max_depth, rr_depth;
} VptMitsubaIntegrator;
VptScene *vpt_scene_from_mitsuba(const char *path, VptMitsubaIntegrator *integrator);

/* Writes s as a Mitsuba 3 scene: the XML at xml_path and, beside it,
 * <stem>_density.vol, (for a varying albedo) <stem>_albedo.vol and (for a
 * scene with an environment map) <stem>_envmap.pfm, the map with the
 * constant environment added (Mitsuba takes one environment emitter),
 * referred to by their base names; a sun or a map turns the medium's
 * emitter sampling on. r gives the workload (0 fields: the scene's) and
 * the integrator's depths (vptune's conventions); NULL: the scene's workload,
 * unlimited depth, no Russian roulette. Every file is written to a temporary
 * first and renamed into place only when all were written; on failure
 * nothing new is left under those names. */
int vpt_scene_export_mitsuba(const VptScene *s, const char *xml_path, const VptRenderSettings *r);

#endif
