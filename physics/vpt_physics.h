/* vpt_physics.h: the one physics of vptune, compiled as C11 by the CPU
 * reference renderer and as CUDA C++17 by NVRTC inside kernels.cu.in.
 *
 * It holds the whole estimator (thesis ch. 1 and 3): pinhole camera, ray/box
 * intersection, Woodcock tracking against one global majorant,
 * Henyey-Greenstein phase sampling (any g in (-1, 1)), the boundary of the box
 * (index-matched, smooth dielectric, or GGX rough dielectric with Heitz 2018
 * visible-normal sampling), a constant environment, the albedo estimator of
 * eq. 3.13, optional Russian roulette and an optional maximum depth.
 * Kernels add only scheduling (regeneration, compaction, sorting).
 *
 * Determinism contract: every random number is a pure function of
 * (seed, path index, draw index), and a path consumes draws in a fixed order
 * (vpt_path_start, then per extension its Woodcock steps and one interaction
 * draw). Hence every schedule traces exactly the same paths: "rays" and
 * "steps" counts are identical across variants and images differ only by the
 * order of floating-point accumulation. The GPU side must be compiled with
 * --fmad=false and the CPU side with -ffp-contract=off for that to hold.
 *
 * An includer that traces paths defines VPT_MEDIUM before including this
 * header, then defines `struct VptMedium` and
 *   VPT_FN float    vpt_medium_density(const VptMedium *m, vpt_vec3 uvw);
 *   VPT_FN vpt_vec3 vpt_medium_albedo (const VptMedium *m, vpt_vec3 uvw);
 * (uvw in [0,1]^3 over the box, trilinear filtering with texel centres at
 * (i + 0.5) / n and clamping, as CUDA's normalized-coordinate textures do).
 * density returns the normalized density d in [0, params.density_max]; the
 * extinction is sigma_t = density_scale * d. Without VPT_MEDIUM only the
 * medium-free parts (parameters, camera, sampling routines) are visible.
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

/* Woodcock tentative steps whose texture fetches are issued together (see
 * vpt_woodcock); any value traces the same paths. Kernels set it per config. */
#ifndef VPT_LOOKAHEAD
#define VPT_LOOKAHEAD 1
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

/* Everything a path needs, plain data: a kernel parameter on the GPU. Built
 * on the host by vpt_params_init() (reference/ or harness/) from a scene. */
typedef struct {
    vpt_vec3 box_min, box_max;
    vpt_vec3 inv_extent;       /* 1 / (box_max - box_min) */
    float density_max;         /* max of the normalized density grid */
    float density_scale;       /* sigma_t = density_scale * d */
    float free_path_unit;      /* ln 2 / (density_scale * density_max): the
                                  distance of one unit of vpt_woodcock_free_path_of */
    float hg_g;                /* Henyey-Greenstein asymmetry, (-1, 1) */
    int boundary;              /* VPT_BOUNDARY_* */
    float ior_inside, ior_outside;
    float ggx_alpha;
    vpt_vec3 env;              /* constant environment radiance */
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
} VptParams;

VPT_FN vpt_vec3 vpt_world_to_uvw(const VptParams *P, vpt_vec3 p)
{
    /* (p - start) / range: the thesis' code computed p - start / range. */
    return vpt_mul(vpt_sub(p, P->box_min), P->inv_extent);
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
 * physically closer, but made vptune's GGX scenes 0.1% brighter than
 * Mitsuba's, a difference the image comparison detects at 400x400, 100 spp
 * (results/h100/mitsuba.jsonl); matching the reference renderer wins. */
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
}

/* Counters every schedule accumulates; identical across schedules for one
 * seed (the correctness gate checks it). */
typedef struct {
    vpt_u64 rays;   /* extensions */
    vpt_u64 steps;  /* Woodcock iterations, null collisions included */
    vpt_u64 paths;  /* finished paths */
} VptCounters;

#ifdef VPT_MEDIUM
typedef struct VptMedium VptMedium;
VPT_FN float vpt_medium_density(const VptMedium *m, vpt_vec3 uvw);
VPT_FN vpt_vec3 vpt_medium_albedo(const VptMedium *m, vpt_vec3 uvw);

/* The parts of one tentative Woodcock step, shared by every way of taking
 * steps (a lane's own batches, or several lanes' steps of one flight): the
 * step with draw index `draw` draws its free path and its acceptance level
 * from its two words of the path's step stream (vpt_woodcock_step_words),
 * moves from t to vpt_woodcock_advance(t, free path), samples the density
 * at vpt_woodcock_point (texture space, vpt_woodcock_ray), and ends the
 * flight when vpt_woodcock_stops.
 * Drawing and advancing are apart so that lanes can draw the free paths of
 * consecutive steps in parallel and then chain the advances in step order,
 * which rounds exactly as one lane taking the steps one by one. */
VPT_FN void vpt_woodcock_step_words(VptStepStream ss, vpt_u32 draw, vpt_u32 *wx, vpt_u32 *wy)
{
    vpt_u4 r = vpt_step_stream_pair(ss, draw >> 1);
    *wx = draw & 1u ? r.z : r.x;
    *wy = draw & 1u ? r.w : r.y;
}

/* The words of the steps with draws d and d + 1 (x, y and z, w), where
 * d = draw + 2 pair. With an even VPT_LOOKAHEAD, flights start at even draws
 * and batches take an even number of steps, so a flight's steps pair up from
 * its start: `draw` must be even there, and one hash serves both; otherwise
 * each step's words are looked up on their own. */
VPT_FN vpt_u4 vpt_woodcock_pair_words(VptStepStream ss, vpt_u32 draw, vpt_u32 pair)
{
    if (VPT_LOOKAHEAD % 2 == 0) return vpt_step_stream_pair(ss, (draw >> 1) + pair);
    vpt_u4 w;
    vpt_woodcock_step_words(ss, draw + 2u * pair, &w.x, &w.y);
    vpt_woodcock_step_words(ss, draw + 2u * pair + 1u, &w.z, &w.w);
    return w;
}

/* The free path, in units of ln 2 mean free paths at the majorant:
 * -log2(1 - u) with u uniform on [0, 1) in steps of 2^-23, as -log2(2 - v)
 * with v = vpt_u12(wx) in [1, 2): 2 - v is exact, in [2^-23, 1], never a
 * denormal; the negation folds into the advance's fused multiply-add. *level
 * is (vpt_u12(wy) - 1) * density_max, the density the step's acceptance draw
 * picks (the difference is exact, so one rounding). Three instructions a
 * step fewer than 24-bit integer draws converted to float. */
VPT_FN float vpt_woodcock_free_path_of(const VptParams *P, vpt_u32 wx, vpt_u32 wy, float *level)
{
    *level = vpt_fmaf(vpt_u12(wy), P->density_max, -P->density_max);
    return -vpt_log2f(2.0f - vpt_u12(wx));
}

VPT_FN float vpt_woodcock_free_path(const VptParams *P, VptStepStream ss, vpt_u32 draw, float *level)
{
    vpt_u32 wx, wy;
    vpt_woodcock_step_words(ss, draw, &wx, &wy);
    return vpt_woodcock_free_path_of(P, wx, wy, level);
}

VPT_FN float vpt_woodcock_advance(const VptParams *P, float t, float free_path)
{
    return vpt_fmaf(free_path, P->free_path_unit, t);
}

/* A flight's ray o + t d in texture space: uvw = ou + du t
 * (vpt_woodcock_point). */
VPT_FN void vpt_woodcock_ray(const VptParams *P, vpt_vec3 o, vpt_vec3 d, vpt_vec3 *ou, vpt_vec3 *du)
{
    *ou = vpt_world_to_uvw(P, o);
    *du = vpt_mul(d, P->inv_extent);
}

VPT_FN vpt_vec3 vpt_woodcock_point(vpt_vec3 ou, vpt_vec3 du, float t)
{
    return vpt_v3(vpt_fmaf(du.x, t, ou.x), vpt_fmaf(du.y, t, ou.y), vpt_fmaf(du.z, t, ou.z));
}

/* A step past the exit (t >= tmax) has density 0 and ends the flight; one
 * inside is a real collision with probability dens / density_max. */
VPT_FN int vpt_woodcock_stops(float t, float tmax, float level, float dens)
{
    return t >= tmax || level < dens;
}

/* Woodcock (delta) tracking against the majorant, in batches. One batch takes
 * the next VPT_LOOKAHEAD tentative steps along o + t d from *t: each is one
 * step and one draw. Returns 1 when the flight ended in the batch, with *t the
 * real collision's distance or a value >= tmax (the ray left the interval);
 * returns 0 with *t advanced past the batch otherwise. Every schedule traces
 * a flight with these parts, a lane alone (vpt_woodcock, batches) or a group
 * of lanes one step each (cooperative flights, kernels.cu.in), so draws,
 * decisions and counts never depend on the schedule.
 *
 * Steps are taken in texture space (uvw = ou + du t, one fused multiply-add
 * per axis: fmaf is correctly rounded on the CPU and __fmaf_rn on the GPU, so
 * both compute the same points); the flight's ou and du come from
 * vpt_woodcock_ray once, not per batch. A step is a draw: a flight's step
 * count is the number of draws it advanced *draw by, so batches count
 * nothing themselves. With VPT_LOOKAHEAD = L > 1 the batch's L
 * tentative distances are computed from their own draws first and their L
 * density fetches issued together, then consumed in order: the same draws,
 * decisions and counts as L = 1, with L fetches in flight instead of one;
 * fetches past the collision are wasted, and so are those past the exit
 * (clamped to the border; vpt_woodcock_stops ends the flight at t >= tmax
 * whatever the density), cheaper than the per-fetch branch avoiding them. */
VPT_FN int vpt_woodcock_batch(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du, float *t,
                              float tmax, VptStepStream ss, vpt_u32 *draw)
{
    float tt[VPT_LOOKAHEAD], level[VPT_LOOKAHEAD], dens[VPT_LOOKAHEAD];
    float tc = *t;
    vpt_u4 r = {0u, 0u, 0u, 0u};
    for (int k = 0; k < VPT_LOOKAHEAD; k++) {
        vpt_u32 wx, wy;
        if (VPT_LOOKAHEAD % 2 == 0) {
            /* *draw is even, so steps k and k + 1 share one hash */
            if (k % 2 == 0) r = vpt_woodcock_pair_words(ss, *draw, (vpt_u32)(k / 2));
            wx = k % 2 ? r.z : r.x;
            wy = k % 2 ? r.w : r.y;
        } else {
            vpt_woodcock_step_words(ss, *draw + (vpt_u32)k, &wx, &wy);
        }
        tc = vpt_woodcock_advance(P, tc, vpt_woodcock_free_path_of(P, wx, wy, &level[k]));
        tt[k] = tc;
    }
    for (int k = 0; k < VPT_LOOKAHEAD; k++)
        dens[k] = vpt_medium_density(M, vpt_woodcock_point(ou, du, tt[k]));
    /* the first stopping step, found without a branch per step */
    int taken = VPT_LOOKAHEAD, ended = 0;
    float tend = tt[VPT_LOOKAHEAD - 1];
    for (int k = VPT_LOOKAHEAD - 1; k >= 0; k--)
        if (vpt_woodcock_stops(tt[k], tmax, level[k], dens[k])) {
            taken = k + 1;
            ended = 1;
            tend = tt[k];
        }
    *draw += (vpt_u32)taken;
    *t = tend;
    return ended;
}

/* A whole Woodcock flight from t: the distance of the real collision, or a
 * value >= tmax when the ray leaves the interval. */
VPT_FN float vpt_woodcock(const VptParams *P, const VptMedium *M, vpt_vec3 o, vpt_vec3 d, float t, float tmax,
                          vpt_u64 path, vpt_u32 *draw, vpt_u64 *steps)
{
    vpt_vec3 ou, du;
    vpt_woodcock_ray(P, o, d, &ou, &du);
    const VptStepStream ss = vpt_step_stream(P->seed, path);
    const vpt_u32 first = *draw;
    while (!vpt_woodcock_batch(P, M, ou, du, &t, tmax, ss, draw)) {
    }
    *steps += (vpt_u64)(*draw - first);
    return t;
}

/* One extension ("ray" in the thesis' rays/s) from the current point to the
 * next event, in two halves around the Woodcock flight so that a schedule
 * may interleave the flight's batches with other work:
 *
 * vpt_path_extend_begin returns 1 when the extension needs a flight over
 * [*t, *tmax] (then s->axis already holds the exit face and s->draw is
 * even); otherwise it has
 * set s->event (and moved s->o) itself: the ray misses the box (ESCAPED) or
 * reaches the dielectric boundary from outside (SURFACE).
 * vpt_path_extend_finish takes the flight's end distance and sets s->event
 * and s->o: SCATTER inside, else ESCAPED (null boundary) or SURFACE at the
 * exit face. */
VPT_FN int vpt_path_extend_begin(const VptParams *P, VptPath *s, float *t, float *tmax)
{
    float t0, t1;
    int a0, a1;
    if (!vpt_box_intersect(P->box_min, P->box_max, s->o, s->d, &t0, &t1, &a0, &a1) || t1 <= VPT_RAY_EPS) {
        s->event = VPT_EV_ESCAPED;
        return 0;
    }
    if (P->boundary != VPT_BOUNDARY_NULL && !s->inside) {
        s->o = vpt_madd(s->o, s->d, vpt_fmaxf(t0, 0.0f));
        s->event = VPT_EV_SURFACE;
        s->axis = a0;
        return 0;
    }
    *t = vpt_fmaxf(t0, 0.0f);
    *tmax = t1;
    s->axis = a1;
    s->draw += s->draw & 1u; /* flights start at even draws (vpt_woodcock_batch) */
    return 1;
}

VPT_FN void vpt_path_extend_finish(const VptParams *P, VptPath *s, float t, float tmax)
{
    if (t < tmax) {
        s->o = vpt_madd(s->o, s->d, t);
        s->event = VPT_EV_SCATTER;
        return;
    }
    if (P->boundary == VPT_BOUNDARY_NULL) {
        s->event = VPT_EV_ESCAPED;
        return;
    }
    s->o = vpt_madd(s->o, s->d, tmax);
    s->event = VPT_EV_SURFACE;
}

/* A whole extension: sets s->event and moves s->o there; counts Woodcock
 * steps. */
VPT_FN void vpt_path_extend(const VptParams *P, const VptMedium *M, VptPath *s, vpt_u64 *steps)
{
    float t, tmax;
    if (!vpt_path_extend_begin(P, s, &t, &tmax)) return;
    t = vpt_woodcock(P, M, s->o, s->d, t, tmax, s->path, &s->draw, steps);
    vpt_path_extend_finish(P, s, t, tmax);
}

/* Applies the event of the last extension (one draw): at a collision the
 * albedo estimator of eq. 3.13 (thr *= albedo) and a new HG direction; at the
 * boundary a BSDF sample. Then max depth and Russian roulette. An ESCAPED
 * path must not be passed here: its contribution is thr * env. */
VPT_FN int vpt_path_interact(const VptParams *P, const VptMedium *M, VptPath *s)
{
    vpt_u4 r = vpt_rng(P->seed, s->path, s->draw);
    s->draw += 1u;
    if (s->event == VPT_EV_SCATTER) {
        vpt_vec3 a = vpt_medium_albedo(M, vpt_world_to_uvw(P, s->o));
        s->thr = vpt_mul(s->thr, a);
        s->d = vpt_hg_sample(P->hg_g, s->d, vpt_u01(r.x), vpt_u01(r.y));
    } else {
        vpt_vec3 n = vpt_box_normal(P, s->o, s->axis);
        if (vpt_boundary_sample(P, s->d, n, s->inside, vpt_u01(r.x), vpt_u01(r.y), vpt_u01(r.z), &s->d, &s->thr))
            s->inside = !s->inside;
    }
    s->depth += 1;
    if (P->max_depth > 0 && s->depth >= P->max_depth) return VPT_PATH_DONE;
    float m = vpt_max3(s->thr);
    if (!(m > 0.0f)) return VPT_PATH_DONE;
    if (P->rr_depth >= 0 && s->depth >= P->rr_depth && m < 1.0f) {
        if (vpt_u01(r.w) >= m) return VPT_PATH_DONE;
        s->thr = vpt_scale(s->thr, vpt_divf(1.0f, m));
    }
    return VPT_PATH_ALIVE;
}

/* The radiance a finished ESCAPED path carries. */
VPT_FN vpt_vec3 vpt_path_radiance(const VptParams *P, const VptPath *s) { return vpt_mul(s->thr, P->env); }


/* Traces one whole path (algorithm 2 of the thesis) and returns its radiance
 * sample; the reference renderer and naiveSK use it. */
VPT_FN vpt_vec3 vpt_trace_path(const VptParams *P, const VptMedium *M, vpt_u64 path, VptCounters *c)
{
    VptPath s;
    vpt_path_start(P, path, &s);
    vpt_vec3 L = vpt_v3(0.0f, 0.0f, 0.0f);
    for (;;) {
        vpt_path_extend(P, M, &s, &c->steps);
        c->rays += 1u;
        if (s.event == VPT_EV_ESCAPED) {
            L = vpt_path_radiance(P, &s);
            break;
        }
        if (vpt_path_interact(P, M, &s) != VPT_PATH_ALIVE) break;
    }
    c->paths += 1u;
    return L;
}

#endif /* VPT_MEDIUM */
#endif /* VPT_PHYSICS_H */
