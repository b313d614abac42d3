/* Hash-based value noise for the procedural scenes: deterministic, seeded by
 * constants, no tables. */
#include "scenes/phantoms/phantom.h"

#include <math.h>
#include <pthread.h>

uint32_t vpt_hash32(uint32_t x)
{
    /* lowbias32 (Chris Wellons' hash prospector): full avalanche, cheap. */
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

float vpt_phantom_rnd(VptPhantomRng *g)
{
    g->state = vpt_hash32(g->state + 0x9E3779B9u);
    return (float)(g->state >> 8) * (1.0f / 16777216.0f);
}

float vpt_hash01(int x, int y, int z, uint32_t seed)
{
    uint32_t h = vpt_hash32(seed ^ 0x9e3779b9U);
    h = vpt_hash32(h ^ (uint32_t)x);
    h = vpt_hash32(h ^ (uint32_t)y);
    h = vpt_hash32(h ^ (uint32_t)z);
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

static float fade(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }
static float lerp(float a, float b, float t) { return a + (b - a) * t; }

float vpt_value_noise3(float x, float y, float z, uint32_t seed)
{
    float fx = floorf(x), fy = floorf(y), fz = floorf(z);
    int ix = (int)fx, iy = (int)fy, iz = (int)fz;
    float tx = fade(x - fx), ty = fade(y - fy), tz = fade(z - fz);
    float c[2][2];
    for (int dz = 0; dz < 2; dz++)
        for (int dy = 0; dy < 2; dy++)
            c[dz][dy] = lerp(vpt_hash01(ix, iy + dy, iz + dz, seed), vpt_hash01(ix + 1, iy + dy, iz + dz, seed), tx);
    return lerp(lerp(c[0][0], c[0][1], ty), lerp(c[1][0], c[1][1], ty), tz);
}

float vpt_fbm3(float x, float y, float z, int octaves, uint32_t seed)
{
    float sum = 0.0f, amp = 1.0f, norm = 0.0f;
    for (int o = 0; o < octaves; o++) {
        sum += amp * vpt_value_noise3(x, y, z, seed + 0x632be5abU * (uint32_t)o);
        norm += amp;
        amp *= 0.5f;
        /* lacunarity 2 with a small offset so octave lattices do not align */
        x = x * 2.0f + 17.31f;
        y = y * 2.0f + 5.87f;
        z = z * 2.0f + 11.13f;
    }
    return norm > 0.0f ? sum / norm : 0.0f;
}

/* ---- lattice noise: a table of hashed values, made once ---- */

#define LAT 64
static float lattice[LAT * LAT * LAT];
static pthread_once_t lattice_once = PTHREAD_ONCE_INIT;

static void make_lattice(void)
{
    for (int z = 0; z < LAT; z++)
        for (int y = 0; y < LAT; y++)
            for (int x = 0; x < LAT; x++) lattice[x + LAT * (y + LAT * z)] = vpt_hash01(x, y, z, 0x1A771CEu);
}

static float smooth(float t) { return t * t * (3.0f - 2.0f * t); }

float vpt_lattice_noise3(float x, float y, float z)
{
    pthread_once(&lattice_once, make_lattice);
    const float fx = floorf(x), fy = floorf(y), fz = floorf(z);
    const int ix = (int)fx & (LAT - 1), iy = (int)fy & (LAT - 1), iz = (int)fz & (LAT - 1);
    const int jx = (ix + 1) & (LAT - 1), jy = (iy + 1) & (LAT - 1), jz = (iz + 1) & (LAT - 1);
    const float tx = smooth(x - fx), ty = smooth(y - fy), tz = smooth(z - fz);
#define L(X, Y, Z) lattice[(X) + LAT * ((Y) + LAT * (Z))]
    const float c00 = lerp(L(ix, iy, iz), L(jx, iy, iz), tx), c10 = lerp(L(ix, jy, iz), L(jx, jy, iz), tx);
    const float c01 = lerp(L(ix, iy, jz), L(jx, iy, jz), tx), c11 = lerp(L(ix, jy, jz), L(jx, jy, jz), tx);
#undef L
    return lerp(lerp(c00, c10, ty), lerp(c01, c11, ty), tz);
}

float vpt_fbm_band(float x, float y, float z, float f0, int octaves, float gain, float h)
{
    /* a rotation (orthonormal, irrational angles) between octaves */
    static const float R[3][3] = {{0.00f, 0.80f, 0.60f}, {-0.80f, 0.36f, -0.48f}, {-0.60f, -0.48f, 0.64f}};
    float sum = 0.0f, norm = 0.0f, amp = 1.0f, f = f0;
    float px = x * f0, py = y * f0, pz = z * f0;
    for (int o = 0; o < octaves; o++) {
        norm += amp;
        const float cycles = f * h; /* periods per voxel */
        const float w = cycles <= 0.25f ? 1.0f : cycles >= 0.5f ? 0.0f : (0.5f - cycles) * 4.0f;
        if (w > 0.0f) sum += w * amp * (vpt_lattice_noise3(px, py, pz) - 0.5f);
        const float qx = R[0][0] * px + R[0][1] * py + R[0][2] * pz, qy = R[1][0] * px + R[1][1] * py + R[1][2] * pz,
                    qz = R[2][0] * px + R[2][1] * py + R[2][2] * pz;
        px = 2.0f * qx + 13.7f;
        py = 2.0f * qy + 7.3f;
        pz = 2.0f * qz + 21.1f;
        f *= 2.0f;
        amp *= gain;
    }
    return 0.5f + sum / norm;
}
