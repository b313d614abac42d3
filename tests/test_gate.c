/* The statistical gate (harness/gate.h) on images built here, so that each
 * outcome is known: a block without Monte Carlo noise (a background seen
 * straight through) passes with the rounding of a float sum and fails past
 * it; a noisy block passes or fails by its z. Deterministic: no false
 * alarms to state. */
#include "tests/harness/test.h"

#include "harness/gate.h"

#include <math.h>
#include <stdlib.h>

enum { W = 8, H = 8, NPIX = W * H, SPP = 256 };

/* A pixel's mean as the GPU forms it: SPP equal samples summed in float
 * (atomicAdd), then scaled by 1 / SPP. */
static float float_sum_mean(float v)
{
    float s = 0.0f;
    for (int i = 0; i < SPP; i++) s += v;
    return s * (1.0f / (float)SPP);
}

/* Every pixel of one colour; the environment map test's texel values. */
static void fill(float *img, float r, float g, float b)
{
    for (int i = 0; i < NPIX; i++) {
        img[3 * i + 0] = r;
        img[3 * i + 1] = g;
        img[3 * i + 2] = b;
    }
}

TEST(gate_statistical_a_noiseless_block_may_differ_by_its_float_rounding)
{
    float ref[3 * NPIX], img[3 * NPIX], var[3 * NPIX] = {0};
    VptGateReport rep;
    /* 0.24 and 0.48 lose about 3e-6 relative in a 256-sample float sum */
    const float c[3] = {0.24f, 0.48f, 0.3f};
    fill(ref, c[0], c[1], c[2]);
    fill(img, float_sum_mean(c[0]), float_sum_mean(c[1]), float_sum_mean(c[2]));
    CHECK(img[0] != ref[0] || img[1] != ref[1]); /* the case is real: rounding shows */
    CHECK_MSG(vpt_gate_statistical(img, NULL, ref, var, W, H, 4, 6.0, &rep) == 0,
              "float rounding alone failed the gate: max |z| %.3g", rep.max_block_z);
    CHECK(rep.max_block_z < 1.0);
    /* a noiseless block off by 0.1%: ten times the rounding floor */
    fill(img, c[0] * 1.001f, c[1], c[2]);
    CHECK(vpt_gate_statistical(img, NULL, ref, var, W, H, 4, 6.0, &rep) != 0);
    CHECK(rep.max_block_z > 6.0 && isfinite(rep.max_block_z));
    /* a black background must match exactly */
    float zero[3 * NPIX] = {0}, tiny[3 * NPIX] = {0};
    tiny[0] = 1e-7f;
    CHECK(vpt_gate_statistical(zero, NULL, zero, var, W, H, 4, 6.0, &rep) == 0);
    CHECK(vpt_gate_statistical(tiny, NULL, zero, var, W, H, 4, 6.0, &rep) != 0);
}

TEST(gate_statistical_a_noisy_block_passes_or_fails_by_its_z)
{
    float ref[3 * NPIX], img[3 * NPIX], var[3 * NPIX];
    VptGateReport rep;
    fill(ref, 1.0f, 1.0f, 1.0f);
    for (int i = 0; i < 3 * NPIX; i++) var[i] = 1e-4f;
    /* a 4x4 block's variance with img_var NULL: 2 x 16 x 1e-4; one block's
     * red channel shifted by z sigma of its sum, spread over its pixels */
    const double sigma = sqrt(2.0 * 16 * 1e-4);
    for (int k = 0; k < 2; k++) {
        const double z = k ? 7.0 : 1.5;
        fill(img, 1.0f, 1.0f, 1.0f);
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) img[3 * (y * W + x)] += (float)(z * sigma / 16.0);
        const int rc = vpt_gate_statistical(img, NULL, ref, var, W, H, 4, 6.0, &rep);
        CHECK_MSG(fabs(rep.max_block_z - z) < 0.01, "z %.3f, expected %.1f", rep.max_block_z, z);
        CHECK_MSG((rc != 0) == (z > 6.0), "z %.1f: rc %d", z, rc);
    }
}
