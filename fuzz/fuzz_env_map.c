/* libFuzzer target: environment maps (scenes/env_map.h) from PFM bytes,
 * colour or grey (vpt_image_parse_pfm_any), through the texel checks and the
 * sampling tables. On success every radiance value must be finite and >= 0,
 * both tables must start at 0, never decrease and end at 1, and directions
 * sampled from them must be unit vectors whose pdf is finite and > 0. */
#include "fuzz/fuzz_common.h"
#include "image/image.h"
#include "scenes/env_map.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vpt_error_clear();
    VptImage *img = vpt_image_parse_pfm_any("fuzz.pfm", data, size);
    if (!img) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_image_parse_pfm_any");
        return 0;
    }
    VptEnvMap *m = vpt_env_map_from_image("fuzz.pfm", img, 1.0);
    vpt_image_destroy(img);
    if (!m) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_env_map_from_image");
        return 0;
    }
    const int W = m->width, H = m->height;
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
    return 0;
}
