/* The properties every environment map must have, shared by the env_map
 * (PFM) and env_map_exr (OpenEXR) fuzz targets (not a public API). */
#ifndef VPT_FUZZ_ENV_MAP_CHECK_H
#define VPT_FUZZ_ENV_MAP_CHECK_H

#include "fuzz/fuzz_common.h"
#include "scenes/env_map.h"

#include <math.h>

/* Every radiance value finite and >= 0; both tables start at 0, never
 * decrease and end at 1; the uniform share in (0, 1]; directions sampled
 * from the tables are unit vectors whose pdf is finite and > 0. Frees m. */
static inline void fuzz_env_map_check(VptEnvMap *m)
{
    const int W = m->width, H = m->height;
    FUZZ_CHECK(W >= 1 && H >= 1, "a %dx%d map", W, H);
    for (size_t k = 0; k < 3 * (size_t)W * (size_t)H; k++)
        FUZZ_CHECK(isfinite(m->radiance[k]) && m->radiance[k] >= 0.0f, "radiance value %zu is %g", k, m->radiance[k]);
    FUZZ_CHECK(m->row_cdf[0] == 0.0f && m->row_cdf[H] == 1.0f, "row table %g .. %g", m->row_cdf[0], m->row_cdf[H]);
    for (int j = 0; j < H; j++) {
        FUZZ_CHECK(m->row_cdf[j + 1] >= m->row_cdf[j], "row table decreases at %d", j);
        const float *c = m->col_cdf + (size_t)j * (size_t)(W + 1);
        FUZZ_CHECK(c[0] == 0.0f && c[W] == 1.0f, "row %d's table %g .. %g", j, c[0], c[W]);
        for (int i = 0; i < W; i++) FUZZ_CHECK(c[i + 1] >= c[i], "row %d's table decreases at %d", j, i);
    }
    FUZZ_CHECK(m->uniform > 0.0f && m->uniform <= 1.0f, "uniform share %g", m->uniform);
    VptParams P;
    memset(&P, 0, sizeof P);
    vpt_env_map_params(m, &P);
    for (int k = 0; k < 16; k++) {
        const float a = (float)k / 16.0f, b = (float)((k * 7) % 16) / 16.0f, c = (float)((k * 5) % 16) / 16.0f;
        const vpt_vec3 d = vpt_env_sample(&P, c, a, b);
        FUZZ_CHECK(fabsf(vpt_dot(d, d) - 1.0f) < 1e-3f, "sample %d has length^2 %g", k, vpt_dot(d, d));
        const float pdf = vpt_env_pdf(&P, d);
        FUZZ_CHECK(isfinite(pdf) && pdf > 0.0f, "sample %d has pdf %g", k, pdf);
    }
    vpt_env_map_destroy(m);
}

#endif
