#include "physics/density_format.h"

#include "base/threads.h"

#include <math.h>
#include <string.h>

static const char *const names[VPT_DENSITY_FORMAT_COUNT] = {"f32", "f16", "u16", "u8"};

const char *vpt_density_format_name(VptDensityFormat f)
{
    return (unsigned)f < VPT_DENSITY_FORMAT_COUNT ? names[f] : "unknown";
}

int vpt_density_format_parse(const char *s, VptDensityFormat *out)
{
    for (int i = 0; i < VPT_DENSITY_FORMAT_COUNT; i++)
        if (!strcmp(s, names[i])) {
            *out = (VptDensityFormat)i;
            return 0;
        }
    return -1;
}

size_t vpt_density_format_bytes(VptDensityFormat f)
{
    switch (f) {
    case VPT_DENSITY_F16:
    case VPT_DENSITY_U16: return 2;
    case VPT_DENSITY_U8: return 1;
    default: return 4;
    }
}

float vpt_density_format_unit(VptDensityFormat f, float dmax)
{
    return (f == VPT_DENSITY_U16 || f == VPT_DENSITY_U8) && dmax > 0.0f ? dmax : 1.0f;
}

uint16_t vpt_half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: infinity */
    if (ax < 0x38800000u) {                                       /* below 2^-14: subnormal or zero */
        if (ax < 0x33000000u) return (uint16_t)sign;              /* below half the smallest subnormal */
        const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
        const int shift = 126 - (int)(ax >> 23);                   /* 14..24 */
        const uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
        return (uint16_t)(sign | (q + (rem > half || (rem == half && (q & 1u)))));
    }
    const uint32_t h = ((ax - 0x38000000u) >> 13), rem = ax & 0x1fffu;
    return (uint16_t)(sign | (h + (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))));
}

float vpt_half_to_float(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t x;
    if (e == 0) {
        float v = (float)m * (1.0f / 16777216.0f); /* m * 2^-24, exact */
        memcpy(&x, &v, 4);
        x |= sign;
    } else if (e == 31) {
        x = sign | 0x7f800000u | (m << 13);
    } else {
        x = sign | ((e + 112u) << 23) | (m << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* The normalized formats' texel: round(d / dmax * qmax), clamped. */
static uint32_t unorm(float d, float dmax, float qmax)
{
    if (!(dmax > 0.0f) || !(d > 0.0f)) return 0;
    float q = rintf(d / dmax * qmax);
    return q >= qmax ? (uint32_t)qmax : (uint32_t)q;
}

float vpt_density_format_texture_value(VptDensityFormat f, float d, float dmax)
{
    switch (f) {
    case VPT_DENSITY_F16: return vpt_half_to_float(vpt_half_from_float(d));
    case VPT_DENSITY_U16: return (float)unorm(d, dmax, 65535.0f) / 65535.0f;
    case VPT_DENSITY_U8: return (float)unorm(d, dmax, 255.0f) / 255.0f;
    default: return d;
    }
}

typedef struct {
    VptDensityFormat f;
    const float *d;
    float dmax;
    void *texels;
    float *decoded;
} EncodeJob;

static void encode_range(void *arg, size_t lo, size_t hi)
{
    const EncodeJob *j = arg;
    for (size_t i = lo; i < hi; i++) {
        const float d = j->d[i];
        switch (j->f) {
        case VPT_DENSITY_F16: ((uint16_t *)j->texels)[i] = vpt_half_from_float(d); break;
        case VPT_DENSITY_U16: ((uint16_t *)j->texels)[i] = (uint16_t)unorm(d, j->dmax, 65535.0f); break;
        case VPT_DENSITY_U8: ((uint8_t *)j->texels)[i] = (uint8_t)unorm(d, j->dmax, 255.0f); break;
        default: ((float *)j->texels)[i] = d; break;
        }
        if (j->decoded) j->decoded[i] = vpt_density_format_texture_value(j->f, d, j->dmax);
    }
}

void vpt_density_format_encode(VptDensityFormat f, const float *d, size_t n, float dmax, void *texels, float *decoded,
                               int threads)
{
    EncodeJob j = {f, d, dmax, texels, decoded};
    vpt_parallel_for(n, threads, encode_range, &j);
}

void vpt_density_format_fold_params(VptDensityFormat f, float dmax, VptParams *P)
{
    if (f == VPT_DENSITY_F32) return;
    P->density_scale *= vpt_density_format_unit(f, dmax);
    P->albedo_index *= vpt_density_format_unit(f, dmax);
    P->density_max = vpt_density_format_texture_value(f, dmax, dmax);
    P->free_path_unit = P->density_max > 0.0f ? 1.0f / (P->density_scale * P->density_max) * VPT_LN2 : 3.0e38f;
    P->tau_per_density = P->density_scale / VPT_LN2;
}
