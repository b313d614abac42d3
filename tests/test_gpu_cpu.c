/* The GPU kernels against the CPU reference renderer, statistically. Both
 * evaluate vpt_physics.h, but with different math libraries (__logf against
 * logf) and texture filtering hardware, so individual paths drift apart and
 * only the images' distributions must agree: block means within their
 * error bars (harness/gate.h; 4x4 blocks at 6 sigma). Skips without a GPU. */
#include "reference/cpu_render.h" /* first: the CPU medium */

#include "tests/harness/test.h"
#include "tests/test_ct_volume.h"

#include "base/error.h"
#include "codegen/config.h"
#include "harness/evaluator.h"
#include "harness/gate.h"
#include "image/image.h"

#include <stdlib.h>
#include <string.h>

/* naiveSK's image of scene s (the evaluator's gated reference) against the
 * CPU reference's, block means within their error bars: each image's own
 * variance, so that a block noiseless on one side (every CPU sample in one
 * environment texel) and not on the other is judged by the other's. */
static void gate_against_cpu(VptEvaluator *e, VptScene *s, const char *name)
{
    VptRenderSettings rs = {48, 32, 256, 11, 0, -1, 1};
    REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &rs) == 0, "%s: %s", name, vpt_errmsg());
    const VptParams *P = vpt_evaluator_params(e);
    size_t n = (size_t)P->width * P->height * 3;
    float *gpu = malloc(n * sizeof *gpu), *gpu_var = malloc(n * sizeof *gpu_var), *cpu = malloc(n * sizeof *cpu),
          *var = malloc(n * sizeof *var);
    REQUIRE(gpu && gpu_var && cpu && var);
    memcpy(gpu, vpt_evaluator_reference_image(e), n * sizeof *gpu); /* naiveSK, gated */
    memcpy(gpu_var, vpt_evaluator_reference_variance(e), n * sizeof *gpu_var);
    VptRenderStats st;
    VptCpuRenderOptions co = {0, VPT_PROGRESS_OFF, NULL};
    REQUIRE_MSG(vpt_cpu_render(s, P, &co, cpu, var, &st) == 0, "%s", vpt_errmsg());
    VptGateReport rep;
    int rc = vpt_gate_statistical(gpu, gpu_var, cpu, var, (int)P->width, (int)P->height, 4, 6.0, &rep);
    vpt_test_log("%s: max |z| %.2f, mean z^2 %.2f over 4x4 blocks", name, rep.max_block_z, rep.mean_block_z2);
    CHECK_MSG(rc == 0, "%s: %s", name, vpt_errmsg());
    free(gpu);
    free(gpu_var);
    free(cpu);
    free(var);
}

/* The thesis scenes (pre-classified albedo grids) and a real CT loaded
 * through the CT transfer (post-classified: the kernel classifies the
 * filtered density through the table as the CPU reference does,
 * docs/albedo.md). */
TEST_TIMEOUT(gpu_naive_matches_cpu_reference_statistically, 900)
{
    VptEvaluatorOptions o = vpt_evaluator_options_default();
    o.quiet = 1;
    VptEvaluator *e = vpt_evaluator_create(&o);
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    static const char *const scenes[] = {"bucky", "manix", "artifix", "smoke"};
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        VptScene *s = vpt_scene_builtin(scenes[i]);
        REQUIRE(s);
        gate_against_cpu(e, s, scenes[i]);
        vpt_scene_destroy(s);
    }
    VptScene *s = vpt_test_ct_volume();
    gate_against_cpu(e, s, "engine_small.mhd (CT table)");
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}

/* An environment map (docs/lights.md) on the GPU against the CPU
 * reference: smoke (null boundary: next-event estimation toward the map)
 * with the map alone and beside a delta sun, and manix (a dielectric: the
 * map reached only by escaping paths). A 16 x 8 map with a bright spot, so
 * that the map's sampling, its tables on the device and the texel lookup
 * all show in the image. */
TEST_TIMEOUT(gpu_naive_matches_cpu_reference_with_an_env_map, 900)
{
    VptEvaluatorOptions o = vpt_evaluator_options_default();
    o.quiet = 1;
    VptEvaluator *e = vpt_evaluator_create(&o);
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    char path[4096];
    snprintf(path, sizeof path, "%s/sky.pfm", vpt_test_tmpdir());
    VptImage *img = vpt_image_create(16, 8);
    REQUIRE(img);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 16; x++) {
            float *p = vpt_image_at(img, x, y);
            p[0] = 0.2f + 0.05f * (float)x;
            p[1] = 0.3f;
            p[2] = 0.8f - 0.08f * (float)y;
            if (x == 5 && y == 2) p[0] = p[1] = p[2] = 30.0f;
        }
    REQUIRE(vpt_image_write_pfm(path, img) == 0);
    vpt_image_destroy(img);
    static const struct {
        const char *scene;
        int sun;
    } cases[] = {{"smoke", 0}, {"smoke", 1}, {"manix", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        VptScene *s = vpt_scene_builtin(cases[i].scene);
        REQUIRE(s);
        const VptLightOverride l = {cases[i].sun, {0.3, 1.0, 0.2}, {2.0, 2.0, 2.0}, 0.0, 1, {0.0, 0.0, 0.0}, path, 0};
        REQUIRE_MSG(vpt_scene_set_light(s, &l) == 0, "%s", vpt_errmsg());
        gate_against_cpu(e, s, s->name);
        vpt_scene_destroy(s);
    }
    vpt_evaluator_destroy(e);
}
