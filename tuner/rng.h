/* The tuner's random numbers: xoshiro256** seeded through splitmix64.
 *
 * A strategy's whole trajectory is a function of its seed and of the values
 * its evaluations return; that is what lets an interrupted tune replay its
 * path from the results cache. So the generator is our own (same sequence on
 * every platform and libc) and nothing in the tuner draws from rand(). */
#ifndef VPT_TUNER_RNG_H
#define VPT_TUNER_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} VptRng;

static inline uint64_t vpt_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void vpt_rng_seed(VptRng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = vpt_splitmix64(&seed);
}

static inline uint64_t vpt_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t vpt_rng_next(VptRng *r)
{
    uint64_t *s = r->s;
    uint64_t result = vpt_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = vpt_rng_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1). */
static inline double vpt_rng_uniform(VptRng *r)
{
    return (double)(vpt_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n) without modulo bias; n > 0. */
static inline uint64_t vpt_rng_below(VptRng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = vpt_rng_next(r);
    while (x >= limit);
    return x % n;
}

#endif
