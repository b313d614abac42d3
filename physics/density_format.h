/* Density texture formats: how a scene's density grid is stored in the GPU's
 * 3D texture (and, for the CPU reference, what values that texture returns).
 *
 *   f32  float, the value itself (the thesis' texture, 4 bytes a voxel)
 *   f16  IEEE half, round to nearest even (2 bytes)
 *   u16  16-bit unsigned normalized: texel round(d / dmax * 65535), read by
 *        the texture unit as texel / 65535 (2 bytes)
 *   u8   8-bit unsigned normalized, likewise with 255 (1 byte)
 *
 * The texture returns "texture units": d itself for f32/f16, d / dmax for the
 * normalized formats. The scale is folded into the parameters instead of
 * multiplied per fetch: density_scale becomes density_scale * unit and
 * density_max the largest texture value (vpt_density_format_fold_params), so
 * the kernels compare acceptance levels with raw texture values. Every
 * format's encoding is monotone, so the maximum of encoded values is the
 * encoding of the maximum: a majorant grid built on f32 densities becomes
 * one for the format by encoding each cell's value
 * (vpt_density_format_texture_value).
 *
 * Whether a format's quantisation changes the image beyond the noise is the
 * correctness gate's question (harness/evaluator.c), not this module's. */
#ifndef VPT_PHYSICS_DENSITY_FORMAT_H
#define VPT_PHYSICS_DENSITY_FORMAT_H

#include "physics/vpt_physics.h"

#include <stddef.h>
#include <stdint.h>

typedef enum { VPT_DENSITY_F32, VPT_DENSITY_F16, VPT_DENSITY_U16, VPT_DENSITY_U8 } VptDensityFormat;
#define VPT_DENSITY_FORMAT_COUNT 4

/* "f32", "f16", "u16", "u8". */
const char *vpt_density_format_name(VptDensityFormat f);
/* Parses those names; -1 for anything else. */
int vpt_density_format_parse(const char *s, VptDensityFormat *out);
/* Bytes per texel: 4, 2, 2, 1. */
size_t vpt_density_format_bytes(VptDensityFormat f);

/* Scene density per texture unit: 1 for f32/f16, dmax for u16/u8 (dmax > 0;
 * an all-zero grid has unit 1). */
float vpt_density_format_unit(VptDensityFormat f, float dmax);

/* The value the texture returns at a texel centre for scene density d in
 * [0, dmax]: the format's round trip, in texture units. Monotone in d. */
float vpt_density_format_texture_value(VptDensityFormat f, float d, float dmax);

/* Encodes n densities into texels (vpt_density_format_bytes(f) each, host
 * byte order, as cuMemcpy3D uploads them) and, when decoded is not NULL,
 * writes the texture value of each (what the CPU reference samples). Runs
 * on `threads` threads (<= 0: all cores). */
void vpt_density_format_encode(VptDensityFormat f, const float *d, size_t n, float dmax, void *texels, float *decoded,
                               int threads);

/* Folds the format's unit into P (set by vpt_params_init from a scene whose
 * densities have maximum dmax): density_scale *= unit, density_max = the
 * texture value of dmax, free_path_unit and tau_per_density recomputed,
 * albedo_index *= unit (the table is indexed by scene density). f32
 * leaves P exactly as it is. */
void vpt_density_format_fold_params(VptDensityFormat f, float dmax, VptParams *P);

/* IEEE half conversions (round to nearest even; NaN stays NaN). */
uint16_t vpt_half_from_float(float f);
float vpt_half_to_float(uint16_t h);

#endif
