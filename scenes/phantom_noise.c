/* Hash-based value noise for the procedural scenes: deterministic, seeded by
 * constants, no tables. */
#include "scenes/phantom.h"

#include <math.h>

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
