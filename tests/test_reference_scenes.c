/* Every built-in scene renders on the CPU reference without NaN, infinity or
 * negative values, at a low sample count. */
#include "reference/cpu_render.h"

#include "base/error.h"
#include "tests/harness/test.h"

#include <math.h>
#include <stdlib.h>

TEST_TIMEOUT(reference_builtin_scenes_finite, 300)
{
    int n = 0;
    for (const char *const *name = vpt_scene_names(); *name; name++, n++) {
        VptScene *s = vpt_scene_builtin(*name);
        REQUIRE_MSG(s, "scene %s: %s", *name, vpt_errmsg());
        VptRenderSettings rs = {48, 48, 2, 1u, 0, -1, 1};
        VptParams p;
        vpt_params_init(&p, s, &rs);
        float *img = malloc(48 * 48 * 3 * sizeof(float)), *var = malloc(48 * 48 * 3 * sizeof(float));
        REQUIRE(img && var);
        VptRenderStats st;
        REQUIRE_MSG(vpt_cpu_render(s, &p, NULL, img, var, &st) == 0, "scene %s: %s", *name, vpt_errmsg());
        int bad = 0;
        double sum = 0;
        for (int i = 0; i < 48 * 48 * 3; i++) {
            if (!(isfinite(img[i]) && img[i] >= 0.0f && isfinite(var[i]) && var[i] >= 0.0f)) bad++;
            sum += img[i];
        }
        CHECK_MSG(bad == 0, "scene %s: %d bad pixel values", *name, bad);
        CHECK_EQ_INT(st.counters.paths, 48 * 48 * 2);
        CHECK(st.counters.rays >= st.counters.paths);
        vpt_test_log("%-9s mean %.4f, %.2f rays/path, %.1f steps/path, %.3f s", *name, sum / (48 * 48 * 3),
                     (double)st.counters.rays / st.counters.paths, (double)st.counters.steps / st.counters.paths,
                     st.seconds);
        free(img);
        free(var);
        vpt_scene_destroy(s);
    }
    CHECK_EQ_INT(n, 6);
}
