/* GPU tests of the estimators (issue 16): every (majorant, density format)
 * pair (the skip of empty space included) on every built-in scene, under schedules that step flights in each
 * way the kernels have (a lane alone, lookahead batches, cooperative groups,
 * multi-kernel, asynchronous flights), passes the gate: its naiveSK reference agrees statistically
 * with the global-majorant f32 reference (harness/evaluator.c states the
 * gate's false-alarm rate), and each schedule traces exactly its
 * reference's paths. Skips without a GPU. */
#include "tests/harness/test.h"
#include "tests/test_ct_volume.h"

#include "base/error.h"
#include "codegen/config.h"
#include "harness/evaluator.h"
#include "image/image.h"

#include <stdio.h>
#include <string.h>

static const char *const schedules[] = {
    "regenerationSK-thread,lookahead=2",
    "regenerationSK-warp,lookahead=4,coop=4",
    "regenerationSK-warp,lookahead=1,coop=8",
    "streamingSK,coop=2",
    "naiveMK",
    "regenerationSK-warp,threshold=50,lookahead=4,flights=async",
};
/* the global majorant, the grids worth testing at these sizes, the skip */
static const char *const majorants[] = {"global", "grid4", "grid8", "grid16", "grid32", "skip"};
#define N_MAJORANTS ((int)(sizeof majorants / sizeof majorants[0]))
static const char *const densities[] = {"f32", "f16", "u16", "u8"};

/* An evaluator that measures little: these tests are about the gate. NULL
 * without a GPU (message set). */
static VptEvaluator *quick_evaluator(void)
{
    VptEvaluatorOptions o = vpt_evaluator_options_default();
    o.quiet = 1;
    o.timeout_s = 30;
    o.policy.min_reps = 1;
    o.policy.max_reps = 2;
    o.policy.max_seconds = 0.5;
    return vpt_evaluator_create(&o);
}

TEST_TIMEOUT(gpu_every_estimator_every_scene_passes_the_gate, 1200)
{
    VptEvaluator *e = quick_evaluator();
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    const VptRenderSettings rs = {128, 96, 16, 7, 0, -1, 1};
    for (const char *const *name = vpt_scene_names(); *name; name++) {
        VptScene *s = vpt_scene_builtin(*name);
        REQUIRE_MSG(s, "%s: %s", *name, vpt_errmsg());
        REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &rs) == 0, "%s: %s", *name, vpt_errmsg());
        unsigned long long global_steps = 0;
        int verdict[N_MAJORANTS][4] = {{0}}; /* 1: the estimator's reference was rejected */
        for (int m = 0; m < N_MAJORANTS; m++)
            for (int d = 0; d < 4; d++)
                for (int k = 0; k < (int)(sizeof schedules / sizeof schedules[0]); k++) {
                    char text[200];
                    snprintf(text, sizeof text, "%s,majorant=%s,density=%s", schedules[k], majorants[m], densities[d]);
                    VptConfig c;
                    REQUIRE_MSG(vpt_config_parse(text, &c) == 0, "%s", vpt_errmsg());
                    VptEvalResult r;
                    REQUIRE_MSG(vpt_evaluator_run(e, &c, &r) == 0, "%s %s: session broke: %s", *name, text,
                                vpt_errmsg());
                    /* a grid or skip never changes the estimate (f32 ones must pass);
                     * a quantising format may, and is then rejected with the
                     * measured difference, for every schedule alike */
                    const int rejected = r.status == VPT_STATUS_INVALID_OUTPUT &&
                                         strstr(r.reason, "changes the image beyond the noise") && d > 0;
                    if (rejected) {
                        if (k == 0) vpt_test_log("%s %s: %s", *name, text, r.reason);
                        CHECK_MSG(k == 0 || verdict[m][d] == 1, "%s %s: rejected after another schedule passed", *name,
                                  text);
                        verdict[m][d] = 1;
                    } else {
                        CHECK_MSG(r.status == VPT_STATUS_OK, "%s %s: %s: %s", *name, text, vpt_status_name(r.status),
                                  r.reason);
                        CHECK_MSG(verdict[m][d] == 0, "%s %s: passed after another schedule was rejected", *name, text);
                    }
                    if (m == 0 && d == 0 && k == 0) global_steps = r.steps;
                    if (r.status == VPT_STATUS_OK && k == 0 && d == 0)
                        vpt_test_log("%s majorant=%s: %.2f steps per ray", *name, majorants[m],
                                     (double)r.steps / (double)r.rays);
                    /* a grid or skip never takes more steps than the global
                     * majorant beyond the grid's 2^-12 margin and the flights' noise */
                    if (r.status == VPT_STATUS_OK && m > 0 && global_steps)
                        CHECK_MSG(r.steps < global_steps * 1.02, "%s %s: %llu steps vs %llu with the global majorant",
                                  *name, text, r.steps, global_steps);
                }
        vpt_scene_destroy(s);
    }
    vpt_evaluator_destroy(e);
}

/* volume=sparse (issue 17): every thesis schedule, with the global majorant
 * and a majorant grid, samples the NanoVDB tree (physics/vpt_sparse.h) and
 * passes the gate: its sparse naiveSK reference agrees statistically with
 * the dense f32 one (the same false-alarm rate as above), and each schedule
 * traces exactly that reference's paths. Skips without a GPU. */
TEST_TIMEOUT(gpu_sparse_volume_every_schedule_passes_the_gate, 1200)
{
    VptEvaluator *e = quick_evaluator();
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    const VptRenderSettings rs = {128, 96, 16, 7, 0, -1, 1};
    static const char *const scenes[] = {"smoke", "cgg-logo", "manix"};
    VptConfig cs[16];
    const int n = vpt_config_thesis_set(cs, 16);
    for (size_t si = 0; si < sizeof scenes / sizeof scenes[0]; si++) {
        VptScene *s = vpt_scene_builtin(scenes[si]);
        REQUIRE_MSG(s, "%s: %s", scenes[si], vpt_errmsg());
        REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &rs) == 0, "%s: %s", scenes[si], vpt_errmsg());
        for (int m = 0; m < 2; m++)
            for (int i = 0; i < n; i++) {
                VptConfig c = cs[i];
                c.sparse = 1;
                c.majorant = m ? 8 : 0;
                c.lookahead = i % 2 ? 4 : 1;
                char text[VPT_CONFIG_STR_MAX];
                vpt_config_format(&c, text, sizeof text);
                VptEvalResult r;
                REQUIRE_MSG(vpt_evaluator_run(e, &c, &r) == 0, "%s %s: session broke: %s", scenes[si], text,
                            vpt_errmsg());
                CHECK_MSG(r.status == VPT_STATUS_OK, "%s %s: %s: %s", scenes[si], text, vpt_status_name(r.status),
                          r.reason);
                if (i == 0) vpt_test_log("%s %s: %.3f ms", scenes[si], text, r.time_ms.median);
            }
        vpt_scene_destroy(s);
    }
    vpt_evaluator_destroy(e);
}

/* Post-classified albedo (docs/albedo.md): a real CT loaded through the CT
 * transfer, whose kernels classify the density each estimator filters
 * (format, grid, skip's paired texture, the sparse tree), passes the gate
 * with every estimator as the built-in scenes do above (the same verdict
 * rules and false-alarm rate), and each schedule traces its reference's
 * paths exactly. Skips without a GPU. */
TEST_TIMEOUT(gpu_post_classified_albedo_every_estimator_passes_the_gate, 1200)
{
    VptEvaluator *e = quick_evaluator();
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    const VptRenderSettings rs = {128, 96, 16, 7, 0, -1, 1};
    VptScene *s = vpt_test_ct_volume();
    REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &rs) == 0, "%s", vpt_errmsg());
    for (int m = 0; m < N_MAJORANTS; m++)
        for (int d = 0; d < 4; d++)
            for (int sparse = 0; sparse < 2; sparse++) {
                if (sparse && (d > 0 || !strcmp(majorants[m], "skip"))) continue;
                int rejected_first = 0;
                for (int k = 0; k < 2; k++) {
                    char text[200];
                    snprintf(text, sizeof text, "%s,majorant=%s,density=%s%s", schedules[k], majorants[m],
                             densities[d], sparse ? ",volume=sparse" : "");
                    VptConfig c;
                    REQUIRE_MSG(vpt_config_parse(text, &c) == 0, "%s: %s", text, vpt_errmsg());
                    VptEvalResult r;
                    REQUIRE_MSG(vpt_evaluator_run(e, &c, &r) == 0, "%s: session broke: %s", text, vpt_errmsg());
                    const int rejected = r.status == VPT_STATUS_INVALID_OUTPUT &&
                                         strstr(r.reason, "changes the image beyond the noise") && d > 0;
                    if (rejected) {
                        vpt_test_log("%s: %s", text, r.reason);
                        CHECK_MSG(k == 0 || rejected_first, "%s: rejected after another schedule passed", text);
                        rejected_first |= k == 0;
                    } else {
                        CHECK_MSG(r.status == VPT_STATUS_OK, "%s: %s: %s", text, vpt_status_name(r.status), r.reason);
                        CHECK_MSG(!rejected_first, "%s: passed after another schedule was rejected", text);
                    }
                }
            }
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}

/* Every schedule x majorants[0..3) x transmittance estimator on scene s
 * (set on e with its lights) passes the gate; ratio tracking under the
 * first majorant with the first schedule takes more steps than plain_steps,
 * the scene's naiveSK without lights: the shadow rays are traced. */
static void every_transmittance_passes(VptEvaluator *e, const VptScene *s, const char *const majorants[3],
                                       unsigned long long plain_steps)
{
    static const char *const trs[] = {"delta", "ratio", "residual"};
    for (int t = 0; t < 3; t++)
        for (int m = 0; m < 3; m++) {
            double factor = NAN; /* the estimator's, from its first schedule */
            for (int k = 0; k < (int)(sizeof schedules / sizeof schedules[0]); k++) {
                char text[200];
                snprintf(text, sizeof text, "%s,majorant=%s,transmittance=%s", schedules[k], majorants[m], trs[t]);
                VptConfig c;
                REQUIRE_MSG(vpt_config_parse(text, &c) == 0, "%s", vpt_errmsg());
                VptEvalResult r;
                REQUIRE_MSG(vpt_evaluator_run(e, &c, &r) == 0, "%s %s: session broke: %s", s->name, text,
                            vpt_errmsg());
                CHECK_MSG(r.status == VPT_STATUS_OK, "%s %s: %s: %s", s->name, text, vpt_status_name(r.status),
                          r.reason);
                CHECK(r.config.transmittance == c.transmittance);
                if (t == 1 && m == 0 && k == 0)
                    CHECK_MSG(r.steps > plain_steps, "%s: the shadow rays add no steps (%llu vs %llu)", s->name,
                              (unsigned long long)r.steps, plain_steps);
                if (r.status != VPT_STATUS_OK) continue;
                /* The equal-error factor is the whole estimator's: 1 for the
                 * scene's default (ratio tracking, global majorant), its own
                 * reference's variance ratio for any other, even with ratio
                 * tracking under another majorant; one value per estimator. */
                if (k == 0) factor = r.equal_error_factor;
                CHECK_MSG(r.equal_error_factor == factor, "%s %s: factor %.6f, its estimator's first %.6f", s->name,
                          text, r.equal_error_factor, factor);
                if (t == 1 && m == 0)
                    CHECK_MSG(r.equal_error_factor == 1.0, "%s %s: factor %.6f", s->name, text, r.equal_error_factor);
                else
                    CHECK_MSG(isfinite(r.equal_error_factor) && r.equal_error_factor > 0 && r.equal_error_factor != 1.0,
                              "%s %s: factor %.6f, not its own estimator's", s->name, text, r.equal_error_factor);
                if (k == 0) vpt_test_log("%s majorant=%s transmittance=%s: equal_error_factor %.4f", s->name,
                                         majorants[m], trs[t], r.equal_error_factor);
            }
        }
}

/* Next-event estimation toward a sun (issue 32): on the built-in cloud and
 * smoke with a delta sun, and on the cloud with a sun of radius 2 degrees,
 * every transmittance estimator under every majorant and each way of
 * stepping flights passes the gate: its naiveSK reference agrees
 * statistically with the ratio-tracking global-majorant f32 reference (the
 * false-alarm rate above), and each schedule traces exactly its reference's
 * paths. The shadow rays' steps count in the steps, so a sun adds steps. */
TEST_TIMEOUT(gpu_every_transmittance_passes_the_gate_with_a_sun, 1200)
{
    VptEvaluator *e = quick_evaluator();
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    const VptRenderSettings rs = {128, 96, 16, 7, 0, -1, 1};
    static const char *const scenes[] = {"cloud64", "smoke", "cloud64"};
    static const char *const sun_majorants[] = {"global", "grid8", "skip"};
    for (int sc = 0; sc < 3; sc++) {
        VptScene *s = vpt_scene_builtin(scenes[sc]);
        REQUIRE_MSG(s, "%s: %s", scenes[sc], vpt_errmsg());
        REQUIRE(vpt_evaluator_set_scene(e, s, &rs) == 0);
        VptConfig plain;
        REQUIRE(vpt_config_parse("naiveSK", &plain) == 0);
        VptEvalResult r0;
        REQUIRE(vpt_evaluator_run(e, &plain, &r0) == 0);
        CHECK_MSG(r0.status == VPT_STATUS_OK, "%s without a sun: %s", scenes[sc], r0.reason);
        const VptLightOverride o = {1, {0.3, 1.0, 0.2}, {3.0, 3.0, 3.0}, sc == 2 ? 2.0 : 0.0, 1, {0.05, 0.08, 0.15},
                                    NULL, 0};
        REQUIRE_MSG(vpt_scene_set_light(s, &o) == 0, "%s", vpt_errmsg());
        REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &rs) == 0, "%s: %s", s->name, vpt_errmsg());
        every_transmittance_passes(e, s, sun_majorants, r0.steps);
        /* a config that names no estimator renders with ratio tracking */
        VptEvalResult rd;
        REQUIRE(vpt_evaluator_run(e, &plain, &rd) == 0);
        CHECK(rd.status == VPT_STATUS_OK && rd.config.transmittance == VPT_TRANSMITTANCE_RATIO);
        vpt_scene_destroy(s);
    }
    vpt_evaluator_destroy(e);
}

/* A 32 x 16 environment map with structure (a sky gradient, a bright spot
 * above the horizon, a dark ground) as a PFM in the test's folder. */
static const char *write_env_map(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/gpu_sky.pfm", vpt_test_tmpdir());
    VptImage *img = vpt_image_create(32, 16);
    REQUIRE(img);
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 32; x++) {
            float *p = vpt_image_at(img, x, y);
            const float up = y < 8 ? 1.0f - (float)y / 8.0f : 0.0f;
            p[0] = 0.05f + 0.1f * up;
            p[1] = 0.08f + 0.2f * up;
            p[2] = 0.15f + 0.4f * up;
            if (y >= 8) p[0] = p[1] = p[2] = 0.02f;
            if (x == 9 && y == 4) p[0] = p[1] = p[2] = 60.0f;
        }
    REQUIRE_MSG(vpt_image_write_pfm(path, img) == 0, "%s", vpt_errmsg());
    vpt_image_destroy(img);
    return path;
}

/* Next-event estimation toward an environment map (docs/lights.md): on the
 * built-in cloud with the map alone, and beside a delta sun, every
 * transmittance estimator under every majorant and each way of stepping
 * flights passes the gate, as with the sun alone (the false-alarm rate
 * above); the map's shadow rays add steps. The kernels are those with
 * VPT_ENV_MAP 1 (codegen_every_schedule_compiles_with_an_env_map). */
TEST_TIMEOUT(gpu_every_transmittance_passes_the_gate_with_an_env_map, 1200)
{
    VptEvaluator *e = quick_evaluator();
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    const VptRenderSettings rs = {128, 96, 16, 7, 0, -1, 1};
    static const char *const nee_majorants[] = {"global", "grid8", "skip"};
    const char *map = write_env_map();
    for (int sc = 0; sc < 2; sc++) {
        VptScene *s = vpt_scene_builtin("cloud64");
        REQUIRE_MSG(s, "cloud64: %s", vpt_errmsg());
        s->boundary = VPT_BOUNDARY_NULL;
        REQUIRE(vpt_scene_finalize(s) == 0);
        REQUIRE(vpt_evaluator_set_scene(e, s, &rs) == 0);
        VptConfig plain;
        REQUIRE(vpt_config_parse("naiveSK", &plain) == 0);
        VptEvalResult r0;
        REQUIRE(vpt_evaluator_run(e, &plain, &r0) == 0);
        CHECK_MSG(r0.status == VPT_STATUS_OK, "cloud64 without lights: %s", r0.reason);
        const VptLightOverride o = {sc, {0.3, 1.0, 0.2}, {3.0, 3.0, 3.0}, 0.0, 1, {0.0, 0.0, 0.0}, map, 0};
        REQUIRE_MSG(vpt_scene_set_light(s, &o) == 0, "%s", vpt_errmsg());
        REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &rs) == 0, "%s: %s", s->name, vpt_errmsg());
        every_transmittance_passes(e, s, nee_majorants, r0.steps);
        vpt_scene_destroy(s);
    }
    vpt_evaluator_destroy(e);
}
