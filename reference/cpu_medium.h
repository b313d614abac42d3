/* reference/cpu_medium.h: the CPU implementation of the medium interface
 * (physics/vpt_medium.h) that the tracer (physics/vpt_tracer.h) traces
 * through, over a VptScene's grids. It is the CPU twin of the GPU's two 3D
 * textures and majorant grid, so the CPU reference and the kernels sample the
 * same function of space. Headers may be included in any order.
 *
 * Filtering contract (CUDA 3D texture, normalized coordinates,
 * cudaFilterModeLinear, cudaAddressModeClamp, per axis of size n):
 *   x = u * n - 0.5;  i0 = floor(x);  alpha = x - i0;
 *   texels i0 and i0 + 1, each clamped to [0, n - 1];
 *   value = sum over the 8 corners of wx * wy * wz * T  (w = 1 - alpha or alpha).
 * The texture unit holds alpha in 9-bit fixed point with 8 fractional bits
 * (CUDA C Programming Guide, "Texture Fetching"), so alpha is quantized here
 * to round(alpha * 256) / 256. The guide does not say whether the hardware
 * rounds or truncates; rounding is what we match, and either way the
 * difference is below 1/512 of a texel. A side effect we rely on: the eight
 * weights are then multiples of 2^-24 that sum to exactly 1 in float, so a
 * constant grid filters to exactly its value (albedo 255 gives exactly 1.0f,
 * which makes the white furnace estimator exactly 1 per path).
 *
 * Albedo texels are RGBA8 read as normalized floats (v / 255, exact for 0 and
 * 255), filtered like the density; alpha is ignored. A scene with an albedo
 * table instead (post-classification, scenes/scene.h) classifies the density
 * this medium returns at the point (vpt_medium_density: the estimator's
 * format, dense or sparse): entry vpt_albedo_entry(v, albedo_index,
 * albedo_entries), its RGB as v / 255, as the GPU's table holds them
 * (harness/gpu_scene.c). Coordinates outside [0, 1] clamp; NaN coordinates
 * read texel 0 instead of being undefined.
 *
 * The medium borrows the scene's grids: it owns nothing and must not outlive
 * the scene. */
#ifndef VPT_REFERENCE_CPU_MEDIUM_H
#define VPT_REFERENCE_CPU_MEDIUM_H

#include "physics/vpt_medium.h"
#include "physics/vpt_sparse.h"
#include "scenes/scene.h"

#include <math.h>
#include <stdint.h>

struct VptMedium {
    int nx, ny, nz;
    const float *density;   /* nx * ny * nz, x fastest; borrowed */
    const uint8_t *albedo;  /* 4 * nx * ny * nz, RGBA8; borrowed; NULL with a table */
    const float *majorant;  /* the majorant grid's cells (params.mg_cells) as (value, t_per_tau)
                               pairs (vpt_majorant_grid_cells), or NULL; borrowed */
    const float *minorant;  /* and their minorants (the same array, past the pairs), or NULL */
    const uint8_t *distance; /* majorant=skip: the distance map, nx * ny * nz bytes
                               (physics/distance_map.h), filtered like the density
                               (the GPU's second texture channel), or NULL; borrowed */
    const uint32_t *sparse; /* volume=sparse: the density as a NanoVDB grid of nx*ny*nz voxels
                               (physics/sparse_grid.h), sampled by vpt_sparse_density; NULL:
                               the dense array. Borrowed */
    const uint8_t (*albedo_table)[4]; /* post-classification: albedo_entries RGBA8 entries, or NULL; borrowed */
    int albedo_entries;
    float albedo_index;     /* table entries per unit of the density as this medium returns it
                               (VptParams.albedo_index: the renderer sets it after folding a format) */
};

/* Points the medium at the scene's grids (no copy), with the global
 * majorant. A renderer with a majorant grid or another density format sets
 * density and majorant to its own arrays (VptCpuEstimator, cpu_render.h). */
static inline void vpt_cpu_medium_init(VptMedium *m, const VptScene *s)
{
    m->nx = s->nx;
    m->ny = s->ny;
    m->nz = s->nz;
    m->density = s->density;
    m->albedo = s->albedo;
    m->albedo_table = s->albedo_table;
    m->albedo_entries = s->albedo_table ? s->albedo_entries : 0;
    m->albedo_index = (float)m->albedo_entries;
    m->majorant = NULL;
    m->minorant = NULL;
    m->distance = NULL;
    m->sparse = NULL;
}

static inline float vpt_medium_majorant(const VptMedium *m, vpt_u32 cell, float *t_per_tau)
{
    *t_per_tau = m->majorant[2 * (size_t)cell + 1];
    return m->majorant[2 * (size_t)cell];
}

static inline float vpt_medium_minorant(const VptMedium *m, vpt_u32 cell) { return m->minorant[cell]; }

/* The 8 corner indices (x fastest) and weights of a trilinear fetch, in the
 * order (x, y, z) = (0,0,0), (1,0,0), (0,1,0), (1,1,0), (0,0,1), ... */
static inline void vpt_cpu_tex_corners(int nx, int ny, int nz, vpt_vec3 uvw, size_t idx[8], float w[8])
{
    int x0, x1, y0, y1, z0, z1;
    float ax, ay, az;
    vpt_filter_axis(uvw.x, nx, &x0, &x1, &ax);
    vpt_filter_axis(uvw.y, ny, &y0, &y1, &ay);
    vpt_filter_axis(uvw.z, nz, &z0, &z1, &az);
    const int xs[2] = {x0, x1}, ys[2] = {y0, y1}, zs[2] = {z0, z1};
    const float wx[2] = {1.0f - ax, ax}, wy[2] = {1.0f - ay, ay}, wz[2] = {1.0f - az, az};
    for (int k = 0; k < 8; k++) {
        int i = k & 1, j = (k >> 1) & 1, l = k >> 2;
        idx[k] = (size_t)xs[i] + (size_t)nx * ((size_t)ys[j] + (size_t)ny * (size_t)zs[l]);
        w[k] = wx[i] * wy[j] * wz[l];
    }
}

static inline float vpt_medium_density(const VptMedium *m, vpt_vec3 uvw)
{
    if (m->sparse) {
        const pnanovdb_buf_t buf = pnanovdb_make_buf((uint32_t *)m->sparse, 0);
        return vpt_sparse_density(buf, vpt_sparse_root(buf), m->nx, m->ny, m->nz, uvw);
    }
    size_t idx[8];
    float w[8];
    vpt_cpu_tex_corners(m->nx, m->ny, m->nz, uvw, idx, w);
    float v = 0.0f;
    for (int k = 0; k < 8; k++) v += w[k] * m->density[idx[k]];
    return v;
}

static inline float vpt_medium_density_distance(const VptMedium *m, vpt_vec3 uvw, float *distance)
{
    size_t idx[8];
    float w[8];
    vpt_cpu_tex_corners(m->nx, m->ny, m->nz, uvw, idx, w);
    float v = 0.0f, d = 0.0f;
    for (int k = 0; k < 8; k++) {
        v += w[k] * m->density[idx[k]];
        d += w[k] * (float)m->distance[idx[k]];
    }
    *distance = d;
    return v;
}

static inline vpt_vec3 vpt_medium_albedo(const VptMedium *m, vpt_vec3 uvw)
{
    if (m->albedo_table) {
        const uint8_t *t = m->albedo_table[vpt_albedo_entry(vpt_medium_density(m, uvw), m->albedo_index,
                                                            m->albedo_entries)];
        return vpt_v3((float)t[0] / 255.0f, (float)t[1] / 255.0f, (float)t[2] / 255.0f);
    }
    size_t idx[8];
    float w[8];
    vpt_cpu_tex_corners(m->nx, m->ny, m->nz, uvw, idx, w);
    float r = 0.0f, g = 0.0f, b = 0.0f;
    for (int k = 0; k < 8; k++) {
        const uint8_t *t = m->albedo + 4 * idx[k];
        r += w[k] * ((float)t[0] / 255.0f);
        g += w[k] * ((float)t[1] / 255.0f);
        b += w[k] * ((float)t[2] / 255.0f);
    }
    return vpt_v3(r, g, b);
}

#endif
