/* GPU tests: run on a machine with a CUDA GPU, skip with the reason
 * otherwise. Every schedule renders every scene and passes the correctness
 * gate; failures (launch limits, faults, hangs) become results and the
 * session goes on. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "codegen/config.h"
#include "codegen/kernel_source.h"
#include "harness/evaluator.h"

#include <stdlib.h>
#include <string.h>

static VptEvaluator *open_or_skip(double timeout_s)
{
    VptEvaluatorOptions o = vpt_evaluator_options_default();
    o.quiet = 1;
    o.timeout_s = timeout_s;
    o.policy.min_reps = 2;
    o.policy.max_reps = 3;
    o.policy.max_seconds = 1.0;
    VptEvaluator *e = vpt_evaluator_create(&o);
    if (!e) SKIP("no CUDA GPU: %s", vpt_errmsg());
    return e;
}

static VptConfig cfg(const char *text)
{
    VptConfig c;
    if (vpt_config_parse(text, &c)) vpt_test_fail_at(__FILE__, __LINE__, "bad config %s: %s", text, vpt_errmsg());
    return c;
}

/* Small, non-square, few samples: fast, and a transposed index shows. */
static const VptRenderSettings small = {72, 40, 4, 7, 0, -1};

static const char *const variants[] = {
    "naiveSK", "naiveSK,ppt=2", "naiveSK,ppt=4,block=128", "naiveMK", "naiveMK,ppt=2",
    "regenerationSK-thread", "regenerationSK-thread,ppt=4", "regenerationSK-thread,grid=1",
    "regenerationSK-warp", "regenerationSK-warp,threshold=50,ppt=2", "regenerationSK-block",
    "regenerationSK-block,threshold=75,block=512", "streamingSK", "streamingSK,ppt=2,block=64",
    "streamingSK,threshold=50", "streamingMK", "streamingMK,ppt=4", "streamingSK-morton",
    "streamingSK-morton,sortkey=termination,ppt=2", "sortingSK", "sortingSK,ppt=4,block=128",
    "regenerationSK-warp,maxrregcount=64", "naiveSK,maxrregcount=40,block=1024",
    "regenerationSK-thread,lookahead=2", "regenerationSK-thread,lookahead=4,ppt=2", "streamingSK,lookahead=4",
    "sortingSK,lookahead=2", "naiveMK,lookahead=4", "streamingMK,lookahead=2",
};

TEST_TIMEOUT(gpu_every_schedule_every_scene_passes_the_gate, 900)
{
    VptEvaluator *e = open_or_skip(30);
    int n = (int)(sizeof variants / sizeof variants[0]);
    VptConfig *cs = calloc((size_t)n, sizeof *cs);
    for (int i = 0; i < n; i++) cs[i] = cfg(variants[i]);
    for (const char *const *name = vpt_scene_names(); *name; name++) {
        VptScene *s = vpt_scene_builtin(*name);
        REQUIRE_MSG(s, "%s: %s", *name, vpt_errmsg());
        REQUIRE_MSG(vpt_evaluator_set_scene(e, s, &small) == 0, "%s: %s", *name, vpt_errmsg());
        vpt_evaluator_prefetch(e, cs, n);
        for (int i = 0; i < n; i++) {
            VptEvalResult r;
            REQUIRE_MSG(vpt_evaluator_run(e, &cs[i], &r) == 0, "%s %s: session broke: %s", *name, variants[i],
                        vpt_errmsg());
            CHECK_MSG(r.status == VPT_STATUS_OK, "%s %s: %s: %s", *name, variants[i], vpt_status_name(r.status),
                      r.reason);
            if (r.status == VPT_STATUS_OK) {
                CHECK(r.simd_efficiency > 0.0 && r.simd_efficiency <= 1.0);
                CHECK(r.occupancy_achieved > 0.0 && r.occupancy_achieved <= 1.0 + 1e-9);
                CHECK(r.occupancy_theoretical > 0.0 && r.occupancy_theoretical <= 1.0);
                CHECK(r.paths == (unsigned long long)small.width * small.height * small.spp);
            }
        }
        vpt_scene_destroy(s);
    }
    free(cs);
    vpt_evaluator_destroy(e);
}

TEST_TIMEOUT(gpu_launch_limits_detected_before_launch, 300)
{
    VptEvaluator *e = open_or_skip(30);
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s && vpt_evaluator_set_scene(e, s, &small) == 0);
    VptEvalResult r;
    VptConfig big = cfg("streamingSK,block=1024,ppt=4"); /* 256 KiB of path pool per block */
    REQUIRE(vpt_evaluator_run(e, &big, &r) == 0);
    CHECK_MSG(r.status == VPT_STATUS_LAUNCH_LIMITS, "status %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_STR_CONTAINS(r.reason, "shared memory");
    VptConfig ok = cfg("streamingSK");
    REQUIRE(vpt_evaluator_run(e, &ok, &r) == 0);
    CHECK_MSG(r.status == VPT_STATUS_OK, "%s", r.reason);
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}

TEST_TIMEOUT(gpu_faulting_kernel_is_runtime_and_session_recovers, 300)
{
    VptEvaluator *e = open_or_skip(30);
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s && vpt_evaluator_set_scene(e, s, &small) == 0);
    VptEvalResult r;
    vpt_codegen_inject_fault(VPT_FAULT_ILLEGAL_ADDRESS);
    VptConfig bad = cfg("regenerationSK-warp");
    REQUIRE_MSG(vpt_evaluator_run(e, &bad, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_RUNTIME, "status %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_STR_CONTAINS(r.reason, "CUDA_ERROR");
    vpt_codegen_inject_fault(VPT_FAULT_NONE);
    VptConfig ok = cfg("regenerationSK-warp,block=128");
    REQUIRE_MSG(vpt_evaluator_run(e, &ok, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_OK, "after recovery: %s", r.reason);
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}

TEST_TIMEOUT(gpu_hanging_kernel_is_timeout_and_session_recovers, 300)
{
    VptEvaluator *e = open_or_skip(2.0);
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s && vpt_evaluator_set_scene(e, s, &small) == 0);
    VptEvalResult r;
    vpt_codegen_inject_fault(VPT_FAULT_HANG);
    VptConfig bad = cfg("regenerationSK-block");
    REQUIRE_MSG(vpt_evaluator_run(e, &bad, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_TIMEOUT, "status %s: %s", vpt_status_name(r.status), r.reason);
    vpt_codegen_inject_fault(VPT_FAULT_NONE);
    VptConfig ok = cfg("regenerationSK-block,block=128");
    REQUIRE_MSG(vpt_evaluator_run(e, &ok, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_OK, "after the timeout: %s", r.reason);
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}

TEST_TIMEOUT(gpu_roofline_probe_measures, 300)
{
    VptEvaluator *e = open_or_skip(30);
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s && vpt_evaluator_set_scene(e, s, &small) == 0);
    VptTimingStats ts;
    double rnd = 0, coh = 0;
    unsigned long long steps;
    REQUIRE_MSG(vpt_evaluator_roofline(e, 0, &ts, &rnd, &steps) == 0, "%s", vpt_errmsg());
    REQUIRE_MSG(vpt_evaluator_roofline(e, 1, &ts, &coh, &steps) == 0, "%s", vpt_errmsg());
    vpt_test_log("roofline: random %.1f Gsteps/s, coherent %.1f Gsteps/s", rnd, coh);
    CHECK(rnd > 1.0);
    CHECK(coh > rnd); /* broadcast fetches must beat scattered ones */
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}
