/* Procedural generators behind the built-in scenes (internal to scenes/ and
 * its tests; not part of the public scene API).
 *
 * Every function here is a pure function of its arguments: no global state
 * (but for tables made once from constants), no rand(). Noise comes from an
 * integer hash of the lattice point and a constant seed, so a scene is the
 * same bytes on every call. The scalable scenes (head<N>, cloud<N>) are
 * built on several threads, each voxel a pure function of its position and
 * the grid's voxel size: the bytes do not depend on the thread count.
 *
 * Grids follow scene.h: x fastest (index x + nx * (y + ny * z)); voxel i's
 * centre lies at box_min + (i + 0.5) / n * (box_max - box_min), so grid index
 * 0 is at box_min. The camera of every thesis scene sits on +z looking down
 * -z with +y up and +x to the right, so "facing the camera" means the +z
 * face, and a picture's top row maps to y = ny - 1. */
#ifndef VPT_SCENES_PHANTOM_H
#define VPT_SCENES_PHANTOM_H

#include "scenes/scene.h"

#include <stdint.h>

/* ---- noise ---- */

/* A well-mixed 32-bit hash (lowbias32). */
uint32_t vpt_hash32(uint32_t x);
/* A seeded stream of numbers in [0, 1) (24 bits each, from vpt_hash32):
 * where the scalable scenes place their towers of puffs and vessels. */
typedef struct {
    uint32_t state;
} VptPhantomRng;
float vpt_phantom_rnd(VptPhantomRng *g);
/* Hash of a lattice point and a seed, mapped to [0, 1). */
float vpt_hash01(int x, int y, int z, uint32_t seed);
/* Value noise in [0, 1] with quintic interpolation (C2 between lattice
 * points); one lattice cell per unit. */
float vpt_value_noise3(float x, float y, float z, uint32_t seed);
/* Fractal sum of `octaves` value-noise octaves (lacunarity 2, gain 0.5),
 * normalized to [0, 1]; each octave has its own seed. */
float vpt_fbm3(float x, float y, float z, int octaves, uint32_t seed);

/* Fast value noise for the scalable scenes, which sample it at billions of
 * voxels: a periodic lattice of 64^3 hashed values (made once), C1
 * (smoothstep) interpolation, in [0, 1]. */
float vpt_lattice_noise3(float x, float y, float z);

/* Band-limited fBm: octaves of lattice noise at frequencies f0, 2 f0, ...
 * (per world unit; each octave's lattice rotated against the last, so the
 * 64-periodicity does not show), each `gain` times the last, around 0.5. An octave counts
 * fully while it has at least 4 voxels of size h per period, fades to
 * nothing at 2 (the grid's Nyquist limit), and the sum is normalized by
 * the weight of all `octaves`, whatever h: a coarser grid of the same
 * scene shows the same low octaves and only loses what it cannot hold
 * (the same content at every size, without aliasing). */
float vpt_fbm_band(float x, float y, float z, float f0, int octaves, float gain, float h);

/* ---- the scalable scenes (phantom_head.c, phantom_cloud.c) ----
 * Grids of any size n^3 in the box [-0.5, 0.5]^3 (scene_builtin.c names
 * them head<n> and cloud<n>), written straight into the scene's density and
 * albedo on `threads` threads (<= 0: every core), in bricks: a brick no
 * solid reaches is filled at once. -1 with a message when out of memory. */

/* Solids binned into the bricks of an n^3 grid of the box [-0.5, 0.5]^3
 * (phantom_bins.c): brick i (x fastest, nb per axis) is reached by the
 * solids idx[start[i] .. start[i + 1]), in their order, which are all those
 * whose box grown by `margin` comes within a voxel of the brick's voxel
 * centres. Evaluating only those gives the same values as evaluating all,
 * when a solid cannot change a voxel farther than `margin` from its box. */
typedef struct {
    int n, brick, nb;
    size_t *start;
    uint32_t *idx;
} VptBins;

/* -1 with a message when out of memory. */
int vpt_bins_build(VptBins *b, int n, int brick, const float (*lo)[3], const float (*hi)[3], size_t count,
                   float margin);
void vpt_bins_free(VptBins *b);

/* Calls fn once per voxel of the n^3 grid, brick by brick, a slab of bricks
 * per work item on `threads` threads (<= 0: every core), with the solids
 * that reach the voxel's brick (ids, nids: none in empty space), the
 * voxel's centre (x, y, z, world units) and its index (x fastest); reports
 * progress (base/progress.h). fn writes that index only. */
typedef void (*VptVoxelFn)(void *ctx, const uint32_t *ids, size_t nids, float x, float y, float z, size_t index);
void vpt_bins_fill(const VptBins *b, int threads, VptVoxelFn fn, void *ctx);

/* A CT head after manix (phantom_ct.c), with the detail a scan resolves at
 * full resolution: trabecular bone in the skull's diploe and the vertebrae,
 * folded cortex with CSF-filled sulci, a contrast-filled arterial tree
 * branching down to vessels thinner than a voxel at 1024^3, tissue texture.
 * Hounsfield units through the thesis' CT transfer, normalized over the
 * scanner's range (-1024 .. 3071) as a 12-bit scan would be. */
int vpt_phantom_head_scaled(VptScene *s, int threads);

/* A sparse cumulus cloud: towers of billowing puffs eroded by noise, in
 * [0, 1], most of the box empty (air is exactly 0), grey albedo as smoke. */
int vpt_phantom_cloud_scaled(VptScene *s, int threads);

/* vpt_scene_builtin on `threads` threads (<= 0: every core), for the tests
 * that check the bytes do not depend on it. */
VptScene *vpt_scene_builtin_threads(const char *name, int threads);

/* ---- printed textures (cgg-logo, ad) ---- */

/* An 8-bit linear RGB picture, row 0 at the top; rgb is owned. */
typedef struct {
    int w, h;
    uint8_t *rgb;
} VptPicture;

/* The pictures printed on the cgg-logo cube (100x100: "CGG" in a ring) and
 * the ad slab (320x320: a poster with text, stripes and shapes). Return -1
 * with a message only when out of memory. Free with vpt_picture_free. */
int vpt_picture_logo(VptPicture *pic, int w, int h);
int vpt_picture_ad(VptPicture *pic, int w, int h);
void vpt_picture_free(VptPicture *pic);

/* Draws text with the built-in 5x7 font (A-Z, 0-9, space and ".-!+%"; other
 * characters draw as blanks), each font pixel a `scale` x `scale` square, top
 * left corner at (x0, y0), 1 font pixel between glyphs. Clipped to the
 * picture. Returns the width in pixels. */
int vpt_picture_text(VptPicture *pic, int x0, int y0, int scale, const char *text, const uint8_t rgb[3]);
int vpt_picture_text_width(int scale, const char *text);

/* Fills the scene's grids as a solid print: density 1 everywhere, albedo
 * white except the picture, printed `depth` voxels deep into the +z face.
 * The picture must be nx x ny (pixel (px, py) colours voxel column
 * x = px, y = ny - 1 - py). */
void vpt_phantom_print(VptScene *s, const VptPicture *pic, int depth);

/* ---- CT stand-ins (artifix, manix) ---- */

/* CT-like raw values in Hounsfield units (int16; air -1024, metal 3071) of
 * a torso section (artifix) and of a head with neck (manix), sampled at the
 * voxel centres of the scene's grid and box (which set the geometry: the
 * phantoms are drawn in world units with the body axis along y and the
 * face/front towards +z). */
void vpt_phantom_torso_hu(const VptScene *s, int16_t *hu);
void vpt_phantom_head_hu(const VptScene *s, int16_t *hu);

/* The thesis' CT transfer over raw values: normalize by the volume's own min
 * and max, density = vpt_ct_density, albedo = vpt_ct_albedo(density). */
void vpt_phantom_ct_transfer(VptScene *s, const int16_t *raw);

/* ---- smoke ---- */

/* A rising, drifting plume of fBm-driven puffs and wisps in [0, 1] (max
 * exactly 1, mostly empty), white albedo. */
void vpt_phantom_smoke(VptScene *s);

/* ---- bucky ---- */

#define VPT_C60_ATOMS 60
#define VPT_C60_BONDS 90

/* The C60 (truncated icosahedron) vertices: even permutations of
 * (0, +-1, +-3phi), (+-1, +-(2+phi), +-2phi), (+-phi, +-2, +-(2phi+1)),
 * edge length 2, circumradius sqrt(9 phi + 10). */
void vpt_c60_atoms(float atoms[VPT_C60_ATOMS][3]);
/* The 90 bonds (pairs of atom indices at distance 2); returns their count. */
int vpt_c60_bonds(const float atoms[VPT_C60_ATOMS][3], int bonds[][2], int cap);

/* Where the molecule sits in the bucky scene: centred at the origin with
 * circumradius VPT_BUCKY_RADIUS (world units, box [-0.5, 0.5]^3), as the cage
 * sits in the real 32^3 volume. */
#define VPT_BUCKY_RADIUS 0.36f
void vpt_bucky_atom_positions(float pos[VPT_C60_ATOMS][3]);

/* Gaussian atoms plus weaker bond density, normalized to max 1, with a green
 * (low) -> red (medium) -> blue (high) albedo (vpt_bucky_albedo). */
void vpt_phantom_bucky(VptScene *s);
void vpt_bucky_albedo(float density, uint8_t rgba[4]);

#endif
