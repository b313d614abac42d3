/* Procedural generators behind the built-in scenes (internal to scenes/ and
 * its tests; not part of the public scene API).
 *
 * Every function here is a pure function of its arguments: no global state,
 * no rand(), no threads. Noise comes from an integer hash of the lattice
 * point and a constant seed, so a scene is the same bytes on every call.
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
/* Hash of a lattice point and a seed, mapped to [0, 1). */
float vpt_hash01(int x, int y, int z, uint32_t seed);
/* Value noise in [0, 1] with quintic interpolation (C2 between lattice
 * points); one lattice cell per unit. */
float vpt_value_noise3(float x, float y, float z, uint32_t seed);
/* Fractal sum of `octaves` value-noise octaves (lacunarity 2, gain 0.5),
 * normalized to [0, 1]; each octave has its own seed. */
float vpt_fbm3(float x, float y, float z, int octaves, uint32_t seed);

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
