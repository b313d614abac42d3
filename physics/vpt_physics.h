/* vpt_physics.h: the medium-free part of vptune's one physics, compiled as
 * C11 by the CPU reference renderer and as CUDA C++17 by NVRTC inside
 * kernels.cu.in.
 *
 * It holds the scene parameters (VptParams), the random numbers, the pinhole
 * camera, ray/box intersection, Henyey-Greenstein phase sampling (any g in
 * (-1, 1)), the boundary of the box (index-matched, smooth dielectric, or GGX
 * rough dielectric with Heitz 2018 visible-normal sampling), a constant
 * environment and the path state. What meets the medium (Woodcock tracking
 * against a global majorant or a majorant grid, the albedo estimator of eq.
 * 3.13, Russian roulette, whole paths) is physics/vpt_tracer.h, which takes
 * the medium through the interface of physics/vpt_medium.h. The three
 * headers include one another one way (physics <- medium <- tracer) and may
 * be included in any order. Kernels add only scheduling (regeneration,
 * compaction, sorting).
 *
 * Determinism contract: every random number is a pure function of
 * (seed, path index, draw index), and a path consumes draws in a fixed order
 * (vpt_path_start, then per extension its Woodcock steps and one interaction
 * draw). Hence every schedule traces exactly the same paths: "rays" and
 * "steps" counts are identical across variants and images differ only by the
 * order of floating-point accumulation. The GPU side must be compiled with
 * --fmad=false and the CPU side with -ffp-contract=off for that to hold.
 * The estimator (global majorant or grid, density texture format) is part of
 * what "the same paths" means: two estimators draw the same numbers but meet
 * different densities, so they agree only statistically.
 *
 * Units and conventions: world space, right-handed, y up; directions are unit
 * vectors of travel; the box is axis aligned. */
#ifndef VPT_PHYSICS_H
#define VPT_PHYSICS_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define VPT_GPU 1
#define VPT_FN __device__ __forceinline__
typedef unsigned int vpt_u32;
typedef unsigned long long vpt_u64;
#define vpt_sqrtf(x) vpt_sqrt_approx(x)
#define vpt_rsqrtf(x) vpt_rsqrt_approx(x)
#define vpt_divf(a, b) vpt_div_approx((a), (b))
#define vpt_logf(x) __logf(x)
#define vpt_log2f(x) vpt_lg2_approx(x)
#define vpt_exp2f(x) exp2f(x)
#define vpt_sincosf(x, s, c) __sincosf((x), (s), (c))
#define vpt_fabsf(x) fabsf(x)
#define vpt_fminf(a, b) fminf(a, b)
#define vpt_fmaxf(a, b) fmaxf(a, b)
#define vpt_powf(a, b) powf(a, b)
#define vpt_fmaf(a, b, c) __fmaf_rn((a), (b), (c))
#define vpt_bits_float(u) __uint_as_float(u)
/* The hardware log2 without the denormal fix-up log2f and __log2f add: for
 * arguments that are never denormal (the Woodcock step's are >= 2^-23). */
static __device__ __forceinline__ float vpt_lg2_approx(float x)
{
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
/* Square root, reciprocal square root and division as the hardware
 * approximations (2 ulp at most) without the denormal range fix-ups that
 * sqrtf, 1 / sqrtf and '/' carry even under --prec-sqrt=false
 * --prec-div=false: their operands in the physics (directions, cosines,
 * indices of refraction, pixel coordinates) are never denormal, and the
 * fix-ups were a third of the boundary sampling's instructions. Only these
 * operations flush: a global --ftz would also flush the throughput products
 * of long paths. */
static __device__ __forceinline__ float vpt_sqrt_approx(float x)
{
    float y;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
static __device__ __forceinline__ float vpt_rsqrt_approx(float x)
{
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
static __device__ __forceinline__ float vpt_div_approx(float a, float b)
{
    float y;
    asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
    return y;
}
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
#define VPT_FN static inline
typedef uint32_t vpt_u32;
typedef uint64_t vpt_u64;
#define vpt_sqrtf(x) sqrtf(x)
#define vpt_rsqrtf(x) (1.0f / sqrtf(x))
#define vpt_divf(a, b) ((a) / (b))
#define vpt_logf(x) logf(x)
#define vpt_log2f(x) log2f(x)
#define vpt_exp2f(x) exp2f(x)
#define vpt_sincosf(x, s, c) (*(s) = sinf(x), *(c) = cosf(x))
#define vpt_fabsf(x) fabsf(x)
#define vpt_fminf(a, b) fminf(a, b)
#define vpt_fmaxf(a, b) fmaxf(a, b)
#define vpt_powf(a, b) powf(a, b)
#define vpt_fmaf(a, b, c) fmaf((a), (b), (c))
static inline float vpt_bits_float(vpt_u32 u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
#endif

#define VPT_PI 3.14159265358979323846f
#define VPT_LN2 0.693147180559945309417f
#define VPT_INV_4PI 0.0795774715459476679f
/* Distances below this are treated as zero when leaving a surface. */
#define VPT_RAY_EPS 1e-6f

/* ------------------------------------------------------------------ vectors */

typedef struct {
    float x, y, z;
} vpt_vec3;

VPT_FN vpt_vec3 vpt_v3(float x, float y, float z)
{
    vpt_vec3 v;
    v.x = x;
    v.y = y;
    v.z = z;
    return v;
}
VPT_FN vpt_vec3 vpt_add(vpt_vec3 a, vpt_vec3 b) { return vpt_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
VPT_FN vpt_vec3 vpt_sub(vpt_vec3 a, vpt_vec3 b) { return vpt_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
VPT_FN vpt_vec3 vpt_mul(vpt_vec3 a, vpt_vec3 b) { return vpt_v3(a.x * b.x, a.y * b.y, a.z * b.z); }
VPT_FN vpt_vec3 vpt_scale(vpt_vec3 a, float s) { return vpt_v3(a.x * s, a.y * s, a.z * s); }
VPT_FN vpt_vec3 vpt_madd(vpt_vec3 a, vpt_vec3 d, float t) { return vpt_v3(a.x + d.x * t, a.y + d.y * t, a.z + d.z * t); }
VPT_FN float vpt_dot(vpt_vec3 a, vpt_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
VPT_FN vpt_vec3 vpt_cross(vpt_vec3 a, vpt_vec3 b)
{
    return vpt_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
VPT_FN vpt_vec3 vpt_normalize(vpt_vec3 a) { return vpt_scale(a, vpt_rsqrtf(vpt_dot(a, a))); }
VPT_FN float vpt_max3(vpt_vec3 a) { return vpt_fmaxf(a.x, vpt_fmaxf(a.y, a.z)); }

/* Orthonormal basis (t, b) around a unit vector n, without singularities
 * (Duff et al. 2017, "Building an Orthonormal Basis, Revisited"). The thesis'
 * code divided by sqrt(x^2 + z^2), which is singular along y. */
VPT_FN void vpt_tangent_frame(vpt_vec3 n, vpt_vec3 *t, vpt_vec3 *b)
{
    float sign = n.z >= 0.0f ? 1.0f : -1.0f;
    float a = vpt_divf(-1.0f, sign + n.z);
    float c = n.x * n.y * a;
    *t = vpt_v3(1.0f + sign * n.x * n.x * a, sign * c, -sign * n.x);
    *b = vpt_v3(c, sign + n.y * n.y * a, -n.y);
}

/* ------------------------------------------------------------ random numbers */

typedef struct {
    vpt_u32 x, y, z, w;
} vpt_u4;

/* pcg4d hash (Jarzynski and Olano 2020, "Hash Functions for GPU Rendering"):
 * 4 x 32 bits in, 4 x 32 well-mixed bits out, integer multiply-adds only.
 * It starts with an LCG step on each word (vpt_pcg4d_lcg), then mixes
 * (vpt_pcg4d_mix); apart so that words fixed over many hashes take their LCG
 * step once (vpt_step_stream). */
VPT_FN vpt_u32 vpt_pcg4d_lcg(vpt_u32 x) { return x * 1664525u + 1013904223u; }

VPT_FN vpt_u4 vpt_pcg4d_mix(vpt_u4 v)
{
    v.x += v.y * v.w;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v.w += v.y * v.z;
    v.x ^= v.x >> 16;
    v.y ^= v.y >> 16;
    v.z ^= v.z >> 16;
    v.w ^= v.w >> 16;
    v.x += v.y * v.w;
    v.y += v.z * v.x;
    v.z += v.x * v.y;
    v.w += v.y * v.z;
    return v;
}

VPT_FN vpt_u4 vpt_pcg4d(vpt_u4 v)
{
    v.x = vpt_pcg4d_lcg(v.x);
    v.y = vpt_pcg4d_lcg(v.y);
    v.z = vpt_pcg4d_lcg(v.z);
    v.w = vpt_pcg4d_lcg(v.w);
    return vpt_pcg4d_mix(v);
}

/* Four random words, a pure function of (seed, path, draw). */
VPT_FN vpt_u4 vpt_rng(vpt_u32 seed, vpt_u64 path, vpt_u32 draw)
{
    vpt_u4 v;
    v.x = (vpt_u32)path;
    v.y = draw;
    v.z = seed;
    v.w = (vpt_u32)(path >> 32);
    return vpt_pcg4d(v);
}

/* The random words of Woodcock steps, a stream of its own. A step needs two
 * words (free path, acceptance) and a hash gives four, so the steps with
 * draw indices 2p and 2p + 1 share the hash of pair p (words x, y and z, w):
 * hashing is a third of a step's instructions otherwise. The top bit of the
 * fourth input word (path indices stay below 2^63) keeps the stream apart
 * from vpt_rng's, so a step never reuses an event's words.
 *
 * A path's stream (vpt_step_stream) holds the three input words that do not
 * change along the path, after their LCG step; vpt_step_stream_pair hashes
 * pair p of it, the same words as pcg4d(path, p, seed, path >> 32 | 2^31). */
typedef struct {
    vpt_u32 x, z, w;
} VptStepStream;

VPT_FN VptStepStream vpt_step_stream(vpt_u32 seed, vpt_u64 path)
{
    VptStepStream k;
    k.x = vpt_pcg4d_lcg((vpt_u32)path);
    k.z = vpt_pcg4d_lcg(seed);
    k.w = vpt_pcg4d_lcg((vpt_u32)(path >> 32) ^ 0x80000000u);
    return k;
}

VPT_FN vpt_u4 vpt_step_stream_pair(VptStepStream k, vpt_u32 pair)
{
    vpt_u4 v;
    v.x = k.x;
    v.y = vpt_pcg4d_lcg(pair);
    v.z = k.z;
    v.w = k.w;
    return vpt_pcg4d_mix(v);
}

/* Uniform float in [0, 1) with 24 random bits. */
VPT_FN float vpt_u01(vpt_u32 bits) { return (float)(bits >> 8) * (1.0f / 16777216.0f); }

/* Uniform float in [1, 2) with 23 random bits, made from its bit pattern
 * 0x3f800000 + (bits >> 9): one integer instruction (LEA.HI) instead of a
 * shift, a conversion and a scaling. For the Woodcock steps, the hot loop. */
VPT_FN float vpt_u12(vpt_u32 bits) { return vpt_bits_float(0x3f800000u + (bits >> 9)); }

/* ------------------------------------------------------------------ scene */

enum {
    VPT_BOUNDARY_NULL = 0,   /* index-matched: the box surface is invisible */
    VPT_BOUNDARY_SMOOTH = 1, /* smooth dielectric (Fresnel, refraction, TIR) */
    VPT_BOUNDARY_GGX = 2     /* rough dielectric, GGX, VNDF sampling */
};

/* The shadow ray's transmittance estimator toward the sun (a kernel
 * dimension, config key transmittance=): all unbiased, they differ in
 * variance and cost. */
enum {
    VPT_TR_DELTA = 0,    /* a free flight (the config's majorant): 1 if it leaves the box, else 0 */
    VPT_TR_RATIO = 1,    /* ratio tracking against the config's majorant: the product of 1 - density / majorant */
    VPT_TR_RESIDUAL = 2  /* residual ratio tracking (Novak et al. 2014): per cell about the majorant grid's
                            minorant, else about one control density (vpt_shadow_residual) */
};

/* Everything a path needs, plain data: a kernel parameter on the GPU. Built
 * on the host by vpt_params_init() (reference/ or harness/) from a scene. */
typedef struct {
    vpt_vec3 box_min, box_max;
    vpt_vec3 inv_extent;       /* 1 / (box_max - box_min) */
    float density_max;         /* max of the normalized density grid */
    float density_scale;       /* sigma_t = density_scale * d */
    float free_path_unit;      /* ln 2 / (density_scale * density_max): the
                                  distance of one unit of vpt_woodcock_free_path_of */
    /* The majorant grid (vpt_tracer.h, VptMajorantWalk): the box cut into
     * cells of C^3 voxels, each with its own majorant (vpt_medium_majorant).
     * mg_cells[0] == 0: one global majorant, density_max. With mg_skip the
     * grid only skips empty space (majorant=skip: vpt_woodcock_batch_skip
     * jumps by the distance map, vpt_skip_resume): steps are taken against
     * density_max. */
    int mg_cells[3];           /* cells per axis: ceil(voxels / C) */
    float mg_per_uvw[3];       /* cells per unit of texture space: voxels / C */
    int mg_skip;               /* 1: the fields above describe the distance map's
                                  1-voxel cells, and steps skip empty space by it */
    float tau_per_density;     /* density_scale / ln 2: optical depth, in units
                                  of ln 2, per unit density and distance */
    float hg_g;                /* Henyey-Greenstein asymmetry, (-1, 1) */
    int boundary;              /* VPT_BOUNDARY_* */
    float ior_inside, ior_outside;
    float ggx_alpha;
    vpt_vec3 env;              /* constant environment radiance */
    /* The sun, a distant light (vpt_tracer.h: next-event estimation at
     * every scattering when the boundary is null, else reached by escaping
     * paths only). sun_on 0: no sun, the fields below unused. */
    int sun_on;
    vpt_vec3 sun_dir;          /* unit, toward the light */
    float sun_cos_max;         /* cos of its angular radius; 1: a delta light */
    vpt_vec3 sun_radiance;     /* the disk's radiance (radius > 0) */
    vpt_vec3 sun_weight;       /* a next-event sample's radiance over its pdf:
                                  the irradiance (delta), else radiance x solid angle */
    int transmittance;         /* VPT_TR_*: the shadow ray's estimator (CPU; the
                                  kernels' VPT_TRANSMITTANCE) */
    float control_density;     /* residual ratio tracking's control, in density units */
    vpt_vec3 cam_pos;
    vpt_vec3 cam_fwd;          /* unit */
    vpt_vec3 cam_right;        /* unit right * tan(fov_x / 2) */
    vpt_vec3 cam_up;           /* unit up * tan(fov_x / 2) * height / width */
    vpt_u32 width, height;
    vpt_u32 spp;
    vpt_u32 seed;
    vpt_u64 npaths;            /* width * height * spp */
    int max_depth;             /* 0: unlimited (the thesis' setting) */
    int rr_depth;              /* < 0: no Russian roulette; else from this depth */
    /* Post-classification (a transfer function's albedo table, scenes/scene.h):
     * albedo_entries > 0 entries, the albedo at a point the entry
     * vpt_albedo_entry(v, albedo_index, albedo_entries) of the density v the
     * medium filters there, in texture units (albedo_index is the entries per
     * unit of scene density times the format's unit,
     * vpt_density_format_fold_params). 0: the medium's albedo grid. */
    float albedo_index;
    int albedo_entries;
    /* The environment map, a second distant light (the section "the
     * environment map" below): equirectangular RGB radiance added to env in
     * every direction, reached like the sun by next-event estimation at
     * every scattering when the boundary is null, else by escaping paths
     * only. env_map_on 0: no map, the fields below unused. Addresses travel
     * as 64-bit integers (host pointers on the CPU, device pointers on the
     * GPU). Last, so that every other field keeps the offset it had
     * before maps existed (the kernels' parameter loads, and with them their
     * register counts, stay as they were). */
    int env_map_on;
    int em_width, em_height;   /* texels per row, rows */
    float em_uniform;          /* the defensive mixture's share of uniform sphere directions, in (0, 1] */
    vpt_u64 em_radiance;       /* const float[3 W H]: radiance, the scale folded in, row 0 toward +y */
    vpt_u64 em_row_cdf;        /* const float[H + 1]: the rows' marginal CDF, 0 first, 1 last */
    vpt_u64 em_col_cdf;        /* const float[H (W + 1)]: each row's conditional CDF, 0 first, 1 last */
} VptParams;

/* The table entry of (filtered) density v: floor(v * index) clamped to
 * [0, entries - 1] (v >= 0), the thesis' CT transfer's rule with index =
 * entries = 100. */
VPT_FN int vpt_albedo_entry(float v, float index, int entries)
{
    const int i = (int)(v * index);
    return i < 0 ? 0 : i > entries - 1 ? entries - 1 : i;
}

/* ----------------------------------------------------- the environment map */

/* The direction convention, Mitsuba 3's `envmap` (identity to_world), so
 * that scenes map 1:1 between the two renderers: a direction of travel d
 * (unit, toward the light) has
 *   u = atan2(d.x, -d.z) / (2 pi), wrapped into [0, 1),
 *   v = acos(d.y) / pi, in [0, 1]: v = 0 is +y (up), the map's top row;
 * and back, with theta = pi v and phi = 2 pi u,
 *   d = (sin theta sin phi, cos theta, -sin theta cos phi).
 * Texel (i, j) covers u in [i / W, (i + 1) / W) and v in [j / H, (j + 1) / H),
 * row j = 0 at the top; radiance is constant over a texel (nearest lookup;
 * Mitsuba filters bilinearly: the same map, sharper at texel edges). */
typedef struct {
    float u, v;
} VptEnvUV;

VPT_FN VptEnvUV vpt_env_uv_of(vpt_vec3 d)
{
    VptEnvUV uv;
    float u = atan2f(d.x, -d.z) * (0.5f / VPT_PI);
    uv.u = u < 0.0f ? u + 1.0f : u;
    if (uv.u >= 1.0f) uv.u = 0.0f;
    const float y = vpt_fminf(1.0f, vpt_fmaxf(-1.0f, d.y));
    uv.v = acosf(y) * (1.0f / VPT_PI);
    return uv;
}

VPT_FN vpt_vec3 vpt_env_dir_of(VptEnvUV uv)
{
    float st, ct, sp, cp;
    vpt_sincosf(VPT_PI * uv.v, &st, &ct);
    vpt_sincosf(2.0f * VPT_PI * uv.u, &sp, &cp);
    return vpt_v3(st * sp, ct, -st * cp);
}

/* The map's float arrays from their 64-bit addresses. */
VPT_FN const float *vpt_env_array(vpt_u64 a)
{
#if defined(VPT_GPU)
    return reinterpret_cast<const float *>(a);
#else
    return (const float *)(uintptr_t)a;
#endif
}

/* The texel holding uv (nearest: radiance is constant over a texel). */
VPT_FN int vpt_env_texel(const VptParams *P, VptEnvUV uv)
{
    int i = (int)(uv.u * (float)P->em_width), j = (int)(uv.v * (float)P->em_height);
    i = i < 0 ? 0 : i > P->em_width - 1 ? P->em_width - 1 : i;
    j = j < 0 ? 0 : j > P->em_height - 1 ? P->em_height - 1 : j;
    return j * P->em_width + i;
}

/* The map's radiance toward direction d (of travel, toward the light). */
VPT_FN vpt_vec3 vpt_env_radiance(const VptParams *P, vpt_vec3 d)
{
    const float *L = vpt_env_array(P->em_radiance) + 3 * vpt_env_texel(P, vpt_env_uv_of(d));
    return vpt_v3(L[0], L[1], L[2]);
}

/* Index k in [0, n) with cdf[k] <= x < cdf[k + 1] (cdf nondecreasing, cdf[0]
 * = 0, cdf[n] = 1, x in [0, 1)); an empty bin (cdf[k] == cdf[k + 1]) is
 * never returned, since no x lands in it. */
VPT_FN int vpt_env_cdf_find(const float *cdf, int n, float x)
{
    int lo = 0, hi = n; /* cdf[lo] <= x < cdf[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) >> 1;
        if (cdf[mid] <= x) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The piecewise-constant part's density in (u, v): W H times the texel's
 * probability (its row's marginal times its conditional). */
VPT_FN float vpt_env_pdf_uv(const VptParams *P, int texel)
{
    const int W = P->em_width, j = texel / W, i = texel - j * W;
    const float *rc = vpt_env_array(P->em_row_cdf), *cc = vpt_env_array(P->em_col_cdf) + j * (W + 1);
    return (rc[j + 1] - rc[j]) * (cc[i + 1] - cc[i]) * (float)W * (float)P->em_height;
}

/* The solid-angle density of vpt_env_sample's direction d: the mixture
 * (1 - em_uniform) p_map + em_uniform / (4 pi), where p_map(d) =
 * p_uv / (2 pi^2 sin theta) (d omega = 2 pi^2 sin theta du dv). The poles
 * (sin theta 0, a set of measure 0) count only the uniform part. */
VPT_FN float vpt_env_pdf(const VptParams *P, vpt_vec3 d)
{
    const float sin_t = vpt_sqrtf(d.x * d.x + d.z * d.z);
    float p = P->em_uniform * VPT_INV_4PI;
    if (sin_t > 0.0f && P->em_uniform < 1.0f)
        p += (1.0f - P->em_uniform) * vpt_divf(vpt_env_pdf_uv(P, vpt_env_texel(P, vpt_env_uv_of(d))),
                                                2.0f * VPT_PI * VPT_PI * sin_t);
    return p;
}

/* A direction toward the map from three uniform numbers in [0, 1): with
 * probability em_uniform uniform over the sphere, else a texel by the
 * marginal and conditional CDFs (the weight of each: a luminance times the
 * sine of its row's centre, scenes/env_map.c) and a uniform point in it. */
VPT_FN vpt_vec3 vpt_env_sample(const VptParams *P, float choose, float a, float b)
{
    if (choose < P->em_uniform) {
        const float z = 1.0f - 2.0f * a, r = vpt_sqrtf(vpt_fmaxf(0.0f, 1.0f - z * z));
        float sp, cp;
        vpt_sincosf(2.0f * VPT_PI * b, &sp, &cp);
        return vpt_v3(r * cp, r * sp, z);
    }
    const int W = P->em_width, H = P->em_height;
    const float *rc = vpt_env_array(P->em_row_cdf);
    const int j = vpt_env_cdf_find(rc, H, a);
    const float *cc = vpt_env_array(P->em_col_cdf) + j * (W + 1);
    const int i = vpt_env_cdf_find(cc, W, b);
    /* the offset inside the texel: where a and b fall in their bins */
    const float fv = vpt_fminf(vpt_fmaxf(vpt_divf(a - rc[j], rc[j + 1] - rc[j]), 0.0f), 0.99999994f);
    const float fu = vpt_fminf(vpt_fmaxf(vpt_divf(b - cc[i], cc[i + 1] - cc[i]), 0.0f), 0.99999994f);
    VptEnvUV uv;
    uv.u = ((float)i + fu) * vpt_divf(1.0f, (float)W);
    uv.v = ((float)j + fv) * vpt_divf(1.0f, (float)H);
    return vpt_env_dir_of(uv);
}

VPT_FN vpt_vec3 vpt_world_to_uvw(const VptParams *P, vpt_vec3 p)
{
    /* (p - start) / range: the thesis' code computed p - start / range. */
    return vpt_mul(vpt_sub(p, P->box_min), P->inv_extent);
}

/* ------------------------------------------------------- the texture filter */

/* One axis of the trilinear filter every medium implements (CUDA 3D
 * texture, normalized coordinates, linear filtering, clamping; per axis of
 * size n): x = u n - 0.5, texels floor(x) and floor(x) + 1 clamped to
 * [0, n - 1], and the upper one's weight alpha = x - floor(x) in the texture
 * unit's 8-bit fixed point, round(alpha 256) / 256 (reference/cpu_medium.h
 * says why). Every medium (physics/vpt_medium.h) samples so: the GPU's
 * dense textures in hardware, the CPU reference and the sparse sampler
 * (physics/vpt_sparse.h) with this function. Beyond
 * [-1, n] every index clamps the same way, which also keeps the float -> int
 * conversion defined (fmaxf maps NaN to -1). */
VPT_FN void vpt_filter_axis(float u, int n, int *i0, int *i1, float *alpha)
{
    float x = u * (float)n - 0.5f;
    x = vpt_fminf(vpt_fmaxf(x, -1.0f), (float)n);
    const float f = floorf(x);
    *alpha = roundf((x - f) * 256.0f) * (1.0f / 256.0f);
    const int i = (int)f;
    *i0 = i < 0 ? 0 : i > n - 1 ? n - 1 : i;
    *i1 = i + 1 < 0 ? 0 : i + 1 > n - 1 ? n - 1 : i + 1;
}

/* ------------------------------------------------------------ ray / box */

/* Slab test. On a hit returns 1 with t0 <= t1 (t0 may be negative when o is
 * inside) and the axes (0..2) whose slabs gave t0 and t1. Components of d
 * that are zero are handled without NaN. */
VPT_FN int vpt_box_intersect(vpt_vec3 bmin, vpt_vec3 bmax, vpt_vec3 o, vpt_vec3 d,
                             float *t0, float *t1, int *axis0, int *axis1)
{
    float lo = -3.0e38f, hi = 3.0e38f;
    int a0 = 0, a1 = 0;
    float oc[3] = {o.x, o.y, o.z}, dc[3] = {d.x, d.y, d.z};
    float mn[3] = {bmin.x, bmin.y, bmin.z}, mx[3] = {bmax.x, bmax.y, bmax.z};
    for (int i = 0; i < 3; i++) {
        if (dc[i] == 0.0f) {
            if (oc[i] < mn[i] || oc[i] > mx[i]) return 0;
            continue;
        }
        float inv = vpt_divf(1.0f, dc[i]);
        float ta = (mn[i] - oc[i]) * inv, tb = (mx[i] - oc[i]) * inv;
        if (ta > tb) {
            float s = ta;
            ta = tb;
            tb = s;
        }
        if (ta > lo) {
            lo = ta;
            a0 = i;
        }
        if (tb < hi) {
            hi = tb;
            a1 = i;
        }
    }
    if (lo > hi) return 0;
    *t0 = lo;
    *t1 = hi;
    *axis0 = a0;
    *axis1 = a1;
    return 1;
}

/* Outward unit normal of the box face on `axis` at point p. */
VPT_FN vpt_vec3 vpt_box_normal(const VptParams *P, vpt_vec3 p, int axis)
{
    float c = axis == 0 ? 0.5f * (P->box_min.x + P->box_max.x)
            : axis == 1 ? 0.5f * (P->box_min.y + P->box_max.y)
                        : 0.5f * (P->box_min.z + P->box_max.z);
    float pc = axis == 0 ? p.x : axis == 1 ? p.y : p.z;
    float s = pc >= c ? 1.0f : -1.0f;
    return vpt_v3(axis == 0 ? s : 0.0f, axis == 1 ? s : 0.0f, axis == 2 ? s : 0.0f);
}

/* ------------------------------------------------------- Henyey-Greenstein */

/* Phase function value for the cosine between travel directions before and
 * after scattering (g > 0 scatters forward). Integrates to 1 over the sphere. */
VPT_FN float vpt_hg_eval(float g, float cos_theta)
{
    float denom = 1.0f + g * g - 2.0f * g * cos_theta;
    return vpt_divf(VPT_INV_4PI * (1.0f - g * g), denom * vpt_sqrtf(denom));
}

/* Inverts the CDF of cos(theta) for any g in (-1, 1), negative g included
 * (the thesis' code divided by |g| and so sampled -g as +g). */
VPT_FN float vpt_hg_sample_cos(float g, float u)
{
    /* isotropic limit, increasing in u like the general branch */
    if (vpt_fabsf(g) < 1e-3f) return 2.0f * u - 1.0f;
    float s = vpt_divf(1.0f - g * g, 1.0f - g + 2.0f * g * u);
    float c = vpt_divf(1.0f + g * g - s * s, 2.0f * g);
    return vpt_fminf(1.0f, vpt_fmaxf(-1.0f, c));
}

/* New travel direction around d (unit), distributed as HG(g); pdf = eval. */
VPT_FN vpt_vec3 vpt_hg_sample(float g, vpt_vec3 d, float u1, float u2)
{
    float c = vpt_hg_sample_cos(g, u1);
    float s = vpt_sqrtf(vpt_fmaxf(0.0f, 1.0f - c * c));
    float sp, cp;
    vpt_sincosf(2.0f * VPT_PI * u2, &sp, &cp);
    vpt_vec3 t, b;
    vpt_tangent_frame(d, &t, &b);
    return vpt_add(vpt_add(vpt_scale(t, s * cp), vpt_scale(b, s * sp)), vpt_scale(d, c));
}

/* ------------------------------------------------------------- dielectric */

/* Unpolarized Fresnel reflectance for a wave arriving with cos_i > 0 from a
 * medium of index eta_i into one of index eta_t; 1 under total internal
 * reflection. */
VPT_FN float vpt_fresnel_dielectric(float cos_i, float eta_i, float eta_t)
{
    float eta = vpt_divf(eta_i, eta_t);
    float sin2_t = eta * eta * (1.0f - cos_i * cos_i);
    if (sin2_t >= 1.0f) return 1.0f;
    float cos_t = vpt_sqrtf(1.0f - sin2_t);
    float rs = vpt_divf(eta_i * cos_i - eta_t * cos_t, eta_i * cos_i + eta_t * cos_t);
    float rp = vpt_divf(eta_t * cos_i - eta_i * cos_t, eta_t * cos_i + eta_i * cos_t);
    return 0.5f * (rs * rs + rp * rp);
}

/* Mirror of w (pointing away from the surface) about the unit normal m. */
VPT_FN vpt_vec3 vpt_reflect(vpt_vec3 w, vpt_vec3 m) { return vpt_sub(vpt_scale(m, 2.0f * vpt_dot(w, m)), w); }

/* Refraction of w (pointing away, on m's side, dot(w, m) > 0) through a
 * surface with relative index eta = eta_i / eta_t; returns 0 under total
 * internal reflection. The result points away from the surface on the other
 * side. */
VPT_FN int vpt_refract(vpt_vec3 w, vpt_vec3 m, float eta, vpt_vec3 *out)
{
    float cos_i = vpt_dot(w, m);
    float sin2_t = eta * eta * vpt_fmaxf(0.0f, 1.0f - cos_i * cos_i);
    if (sin2_t >= 1.0f) return 0;
    float cos_t = vpt_sqrtf(1.0f - sin2_t);
    *out = vpt_add(vpt_scale(w, -eta), vpt_scale(m, eta * cos_i - cos_t));
    return 1;
}

/* GGX (Trowbridge-Reitz) isotropic microfacet distribution in the local frame
 * (z = macro normal); integrates so that int D(m) cos(theta_m) dm = 1. */
VPT_FN float vpt_ggx_D(vpt_vec3 m, float alpha)
{
    if (m.z <= 0.0f) return 0.0f;
    float a2 = alpha * alpha;
    float t = m.z * m.z * (a2 - 1.0f) + 1.0f;
    return vpt_divf(a2, VPT_PI * t * t);
}

/* Smith's Lambda for GGX, local frame. */
VPT_FN float vpt_ggx_lambda(vpt_vec3 w, float alpha)
{
    float c2 = w.z * w.z;
    if (c2 >= 1.0f) return 0.0f;
    float tan2 = vpt_divf(1.0f - c2, c2);
    return 0.5f * (-1.0f + vpt_sqrtf(1.0f + alpha * alpha * tan2));
}

VPT_FN float vpt_ggx_G1(vpt_vec3 w, float alpha) { return vpt_divf(1.0f, 1.0f + vpt_ggx_lambda(w, alpha)); }

/* Masking-shadowing: the separable Smith form G1(wo) G1(wi), the one of
 * Mitsuba's roughdielectric (0.5, which the thesis rendered its references
 * with, and 3). The height-correlated form (Heitz 2014) is never smaller and
 * physically closer, but renders GGX scenes measurably brighter than the
 * reference renderer; matching it wins (docs/decisions/
 * ggx-separable-masking.md). */
VPT_FN float vpt_ggx_G(vpt_vec3 wo, vpt_vec3 wi, float alpha)
{
    return vpt_ggx_G1(wo, alpha) * vpt_ggx_G1(wi, alpha);
}

/* Density of visible normals seen from wo (local frame, wo.z > 0):
 * D_wo(m) = G1(wo) max(0, wo.m) D(m) / wo.z. */
VPT_FN float vpt_ggx_vndf_pdf(vpt_vec3 wo, vpt_vec3 m, float alpha)
{
    float wm = vpt_dot(wo, m);
    if (wm <= 0.0f || wo.z <= 0.0f) return 0.0f;
    return vpt_divf(vpt_ggx_G1(wo, alpha) * wm * vpt_ggx_D(m, alpha), wo.z);
}

/* Heitz 2018, "Sampling the GGX Distribution of Visible Normals" (JCGT 7(4)),
 * isotropic alpha; wo in the local frame with wo.z > 0. */
VPT_FN vpt_vec3 vpt_ggx_sample_vndf(vpt_vec3 wo, float alpha, float u1, float u2)
{
    vpt_vec3 vh = vpt_normalize(vpt_v3(alpha * wo.x, alpha * wo.y, wo.z));
    float lensq = vh.x * vh.x + vh.y * vh.y;
    vpt_vec3 t1 = lensq > 0.0f ? vpt_scale(vpt_v3(-vh.y, vh.x, 0.0f), vpt_rsqrtf(lensq)) : vpt_v3(1.0f, 0.0f, 0.0f);
    vpt_vec3 t2 = vpt_cross(vh, t1);
    float r = vpt_sqrtf(u1);
    float sp, cp;
    vpt_sincosf(2.0f * VPT_PI * u2, &sp, &cp);
    float p1 = r * cp, p2 = r * sp;
    float s = 0.5f * (1.0f + vh.z);
    p2 = (1.0f - s) * vpt_sqrtf(vpt_fmaxf(0.0f, 1.0f - p1 * p1)) + s * p2;
    vpt_vec3 nh = vpt_add(vpt_add(vpt_scale(t1, p1), vpt_scale(t2, p2)),
                          vpt_scale(vh, vpt_sqrtf(vpt_fmaxf(0.0f, 1.0f - p1 * p1 - p2 * p2))));
    return vpt_normalize(vpt_v3(alpha * nh.x, alpha * nh.y, vpt_fmaxf(1e-6f, nh.z)));
}

/* Samples the box boundary for a path arriving with travel direction d at a
 * surface point with outward normal n_out. Returns the new travel direction
 * in *d_new, multiplies *thr by the sample weight, and returns 1 when the path
 * crossed the surface (0: reflected, or killed with a zero weight).
 *
 * Rough dielectric (Walter et al. 2007) sampled through visible normals: the
 * microfacet normal m ~ D_wo, reflection with probability F(wo.m), else
 * refraction; the weight is G(wo, wi)/G1(wo) = G1(wi) for both (vpt_ggx_G). Radiance crossing into a medium of
 * index eta_t from eta_i is scaled by (eta_i/eta_t)^2 (pbrt's radiance mode).
 * alpha == 0 or VPT_BOUNDARY_SMOOTH gives the smooth dielectric (weight 1). */
VPT_FN int vpt_boundary_sample(const VptParams *P, vpt_vec3 d, vpt_vec3 n_out, int from_inside,
                               float u1, float u2, float u3, vpt_vec3 *d_new, vpt_vec3 *thr)
{
    float eta_i = from_inside ? P->ior_inside : P->ior_outside;
    float eta_t = from_inside ? P->ior_outside : P->ior_inside;
    vpt_vec3 n = from_inside ? vpt_scale(n_out, -1.0f) : n_out; /* on wo's side */
    vpt_vec3 wo = vpt_scale(d, -1.0f);
    vpt_vec3 t, b;
    vpt_tangent_frame(n, &t, &b);
    vpt_vec3 wl = vpt_v3(vpt_dot(wo, t), vpt_dot(wo, b), vpt_dot(wo, n));
    if (wl.z <= 0.0f) { /* grazing: numerically on the wrong side */
        *thr = vpt_v3(0.0f, 0.0f, 0.0f);
        *d_new = d;
        return 0;
    }
    int smooth = P->boundary == VPT_BOUNDARY_SMOOTH || P->ggx_alpha <= 0.0f;
    vpt_vec3 ml = smooth ? vpt_v3(0.0f, 0.0f, 1.0f) : vpt_ggx_sample_vndf(wl, P->ggx_alpha, u1, u2);
    float cos_om = vpt_dot(wl, ml);
    float F = vpt_fresnel_dielectric(cos_om, eta_i, eta_t);
    vpt_vec3 il;
    int crossed;
    float w;
    if (u3 < F) {
        il = vpt_reflect(wl, ml);
        crossed = 0;
        w = il.z > 0.0f ? 1.0f : 0.0f;
    } else {
        if (!vpt_refract(wl, ml, vpt_divf(eta_i, eta_t), &il)) { /* cannot happen when F < 1 */
            *thr = vpt_v3(0.0f, 0.0f, 0.0f);
            *d_new = d;
            return 0;
        }
        crossed = 1;
        w = il.z < 0.0f ? vpt_divf(eta_i * eta_i, eta_t * eta_t) : 0.0f;
    }
    if (!smooth && w > 0.0f) {
        vpt_vec3 ia = vpt_v3(il.x, il.y, vpt_fabsf(il.z));
        w *= vpt_ggx_G1(ia, P->ggx_alpha); /* G(wo, wi) / G1(wo) */
    }
    *thr = vpt_scale(*thr, w);
    /* il points away from the surface: it is the new travel direction. */
    *d_new = vpt_normalize(vpt_add(vpt_add(vpt_scale(t, il.x), vpt_scale(b, il.y)), vpt_scale(n, il.z)));
    return w > 0.0f ? crossed : 0;
}

/* ------------------------------------------------------------------ paths */

/* Whether paths gather next-event estimation's radiance (VptPath.L): a
 * kernel knows at compile time (VPT_SUN, VPT_ENV_MAP: a scene with a sun or
 * an environment map), the CPU reference always has the field. */
#if !defined(VPT_SUN) || VPT_SUN || (defined(VPT_ENV_MAP) && VPT_ENV_MAP)
#define VPT_GATHERS 1
#else
#define VPT_GATHERS 0
#endif

/* One path's whole state. Small on purpose: streaming kernels move it
 * through shared memory when they compact or sort. */
typedef struct {
    vpt_u64 path;     /* path index in [0, npaths) */
    vpt_vec3 o;       /* current point */
    vpt_vec3 d;       /* travel direction */
    vpt_vec3 thr;     /* throughput */
    vpt_u32 draw;     /* next draw index */
    int depth;        /* scattering + surface events so far */
    int inside;       /* inside the dielectric boundary (unused for NULL) */
    int event;        /* the event the last extension ended on (VPT_EV_*) */
    int axis;         /* box face axis of a VPT_EV_SURFACE event */
#if VPT_GATHERS
    vpt_vec3 L;       /* radiance gathered by next-event estimation so far;
                         absent from kernels without a sun or a map, whose
                         paths move through shared memory as they always did */
#endif
} VptPath;

enum {
    VPT_EV_ESCAPED = 0, /* left to the environment: contributes thr * env */
    VPT_EV_SCATTER = 1, /* real collision inside the medium at o */
    VPT_EV_SURFACE = 2  /* reached the dielectric boundary at o */
};

/* Path status after vpt_path_interact. */
enum {
    VPT_PATH_ALIVE = 0,
    VPT_PATH_DONE = 1   /* terminated: absorbed, max depth or roulette */
};

/* Pixel of a path: paths are numbered sample-major, row-major within a
 * sample (path = sample * width * height + y * width + x), so neighbouring
 * threads start neighbouring camera rays. */
VPT_FN vpt_u32 vpt_path_pixel(const VptParams *P, vpt_u64 path)
{
    const vpt_u32 n = P->width * P->height; /* images have at most 2^26 pixels (image.h) */
    /* 64-bit division is a long software routine on the GPU, so the 32-bit
     * one whenever the path index fits (2^32 paths: 26800 spp at 400 x 400) */
    return path >> 32 ? (vpt_u32)(path % n) : (vpt_u32)path % n;
}

/* Starts path `path`: a pinhole camera ray through a jittered point of its
 * pixel (draw 0). */
VPT_FN void vpt_path_start(const VptParams *P, vpt_u64 path, VptPath *s)
{
    vpt_u32 pix = vpt_path_pixel(P, path);
    vpt_u32 px = pix % P->width, py = pix / P->width;
    vpt_u4 r = vpt_rng(P->seed, path, 0u);
    float sx = vpt_divf(2.0f * ((float)px + vpt_u01(r.x)), (float)P->width) - 1.0f;
    float sy = 1.0f - vpt_divf(2.0f * ((float)py + vpt_u01(r.y)), (float)P->height);
    s->o = P->cam_pos;
    s->d = vpt_normalize(vpt_add(P->cam_fwd, vpt_add(vpt_scale(P->cam_right, sx), vpt_scale(P->cam_up, sy))));
    s->thr = vpt_v3(1.0f, 1.0f, 1.0f);
    s->path = path;
    s->draw = 1u;
    s->depth = 0;
    s->inside = 0;
    s->event = VPT_EV_ESCAPED;
    s->axis = 0;
#if VPT_GATHERS
    s->L = vpt_v3(0.0f, 0.0f, 0.0f);
#endif
}

/* Counters every schedule accumulates; identical across schedules for one
 * seed (the correctness gate checks it). */
typedef struct {
    vpt_u64 rays;   /* extensions */
    vpt_u64 steps;  /* Woodcock iterations, null collisions included */
    vpt_u64 paths;  /* finished paths */
} VptCounters;

#endif /* VPT_PHYSICS_H */
