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

#include <stdlib.h>
#include <string.h>

/* naiveSK's image of scene s (the evaluator's gated reference) against the
 * CPU reference's, block means within their error bars. */
static void gate_against_cpu(VptEvaluator *e, VptScene *s, const char *name)
{
    VptRenderSettings rs = {48, 32, 256, 11, 0, -1, 1};
    REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &rs) == 0, "%s: %s", name, vpt_errmsg());
    const VptParams *P = vpt_evaluator_params(e);
    size_t n = (size_t)P->width * P->height * 3;
    float *gpu = malloc(n * sizeof *gpu), *cpu = malloc(n * sizeof *cpu), *var = malloc(n * sizeof *var);
    REQUIRE(gpu && cpu && var);
    memcpy(gpu, vpt_evaluator_reference_image(e), n * sizeof *gpu); /* naiveSK, gated */
    VptRenderStats st;
    VptCpuRenderOptions co = {0, VPT_PROGRESS_OFF, NULL};
    REQUIRE_MSG(vpt_cpu_render(s, P, &co, cpu, var, &st) == 0, "%s", vpt_errmsg());
    VptGateReport rep;
    int rc = vpt_gate_statistical(gpu, NULL, cpu, var, (int)P->width, (int)P->height, 4, 6.0, &rep);
    vpt_test_log("%s: max |z| %.2f, mean z^2 %.2f over 4x4 blocks", name, rep.max_block_z, rep.mean_block_z2);
    CHECK_MSG(rc == 0, "%s: %s", name, vpt_errmsg());
    free(gpu);
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
