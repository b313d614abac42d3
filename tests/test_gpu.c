/* GPU tests: run on a machine with a CUDA GPU, skip with the reason
 * otherwise. Every schedule renders every scene and passes the correctness
 * gate; failures (launch limits, faults, hangs) become results and the
 * session goes on (faults and hangs through the worker process). */
#include "tests/harness/test.h"

#include "base/error.h"
#include "codegen/config.h"
#include "codegen/kernel_source.h"
#include "harness/eval_worker.h"
#include "harness/evaluator.h"

#include <math.h>
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
static const VptRenderSettings small = {72, 40, 4, 7, 0, -1, 1};

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
    /* cooperative flights, every schedule, every group size */
    "naiveSK,coop=2", "naiveMK,coop=4,ppt=2", "regenerationSK-thread,coop=1", "regenerationSK-warp,threshold=50,lookahead=4,coop=4",
    "regenerationSK-block,coop=8,ppt=2", "streamingSK,coop=16,block=64", "streamingMK,coop=4",
    "streamingSK-morton,coop=2,lookahead=2", "sortingSK,coop=8,ppt=4,block=128",
    /* asynchronous flights: every event-round policy, lookahead, a bound */
    "regenerationSK-thread,flights=async", "regenerationSK-warp,threshold=0,flights=async",
    "regenerationSK-warp,threshold=50,lookahead=4,flights=async", "regenerationSK-warp,threshold=100,lookahead=2,flights=async",
    "regenerationSK-thread,grid=1,maxrregcount=64,flights=async",
    /* pixel-major path order: every way a launch hands out path ids */
    "naiveSK,paths=pixel,ppt=2", "naiveMK,paths=pixel", "regenerationSK-thread,paths=pixel",
    "regenerationSK-warp,threshold=50,lookahead=4,coop=4,paths=pixel", "regenerationSK-block,paths=pixel",
    "streamingSK,paths=pixel", "streamingMK,paths=pixel", "sortingSK,paths=pixel",
    "regenerationSK-warp,threshold=50,flights=async,paths=pixel",
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

/* Tiling (thesis 4.1.2) renders the same paths: per schedule, the image of
 * 3x3 and 7x7 tiles (7 does not divide 72 or 40) equals the untiled one up to
 * the order of the per-pixel float sums, with identical counts; in either
 * path order (paths=pixel hands out a tile's pixels' samples in turn). */
TEST_TIMEOUT(gpu_tiled_render_equals_untiled, 300)
{
    VptEvaluator *e = open_or_skip(30);
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s);
    static const char *const tiled[] = {"naiveSK", "regenerationSK-warp", "regenerationSK-block", "streamingSK",
                                        "naiveMK", "streamingMK", "sortingSK,ppt=2",
                                        /* the pixel-major order within a tile */
                                        "regenerationSK-thread,paths=pixel", "streamingMK,paths=pixel"};
    static const int tile_counts[] = {3, 7};
    size_t npix = (size_t)small.width * small.height;
    for (size_t i = 0; i < sizeof tiled / sizeof tiled[0]; i++) {
        VptConfig c = cfg(tiled[i]);
        REQUIRE(vpt_evaluator_set_scene(e, s, &small) == 0);
        VptEvalResult r0, r1;
        float *ref = vpt_evaluator_render(e, &c, &r0);
        REQUIRE_MSG(ref && r0.status == VPT_STATUS_OK, "%s untiled: %s", tiled[i], r0.reason);
        for (size_t t = 0; t < sizeof tile_counts / sizeof tile_counts[0]; t++) {
            VptRenderSettings rs = small;
            rs.tiles = tile_counts[t];
            REQUIRE(vpt_evaluator_set_scene(e, s, &rs) == 0);
            float *img = vpt_evaluator_render(e, &c, &r1);
            REQUIRE_MSG(img && r1.status == VPT_STATUS_OK, "%s tiles=%d: %s", tiled[i], rs.tiles, r1.reason);
            CHECK_MSG(r1.rays == r0.rays && r1.steps == r0.steps && r1.paths == r0.paths,
                      "%s tiles=%d: counts differ", tiled[i], rs.tiles);
            CHECK_MSG(r1.launches >= rs.tiles * rs.tiles, "%s tiles=%d: %d launches", tiled[i], rs.tiles, r1.launches);
            double worst = 0;
            for (size_t k = 0; k < 3 * npix; k++) {
                double d = fabs((double)img[k] - ref[k]) / (fabs((double)ref[k]) + 1e-6);
                if (d > worst) worst = d;
            }
            CHECK_MSG(worst < 1e-5, "%s tiles=%d: worst relative pixel difference %g", tiled[i], rs.tiles, worst);
            free(img);
        }
        free(ref);
    }
    vpt_scene_destroy(s);
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

/* Faults run in a worker process: a sticky error poisons the process that
 * saw it (vpt_cu_is_sticky), so recovery means a fresh worker. */
static VptEvalWorker *worker_or_skip(const VptScene *s, double timeout_s, double hard_timeout_s)
{
    VptWorkerSpec spec = vpt_worker_spec_default();
    spec.eval.quiet = 1;
    spec.eval.timeout_s = timeout_s;
    spec.eval.policy.min_reps = 2;
    spec.eval.policy.max_reps = 3;
    spec.eval.policy.max_seconds = 1.0;
    spec.scene = s;
    spec.settings = small;
    spec.hard_timeout_s = hard_timeout_s;
    int no_gpu = 0;
    VptEvalWorker *w = vpt_eval_worker_start(&spec, &no_gpu);
    if (!w && no_gpu) SKIP("no CUDA GPU: %s", vpt_errmsg());
    REQUIRE_MSG(w, "starting the worker: %s", vpt_errmsg());
    return w;
}

TEST_TIMEOUT(gpu_faulting_kernel_is_runtime_and_session_recovers, 300)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    VptEvalWorker *w = worker_or_skip(s, 30, 0);
    pid_t first = vpt_eval_worker_pid(w);
    VptEvalResult r;
    VptConfig bad = cfg("regenerationSK-warp");
    REQUIRE_MSG(vpt_eval_worker_run_fault(w, &bad, VPT_FAULT_ILLEGAL_ADDRESS, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_RUNTIME, "status %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_STR_CONTAINS(r.reason, "CUDA_ERROR");
    vpt_test_log("fault: %s", r.reason);
    VptConfig ok = cfg("regenerationSK-warp,block=128");
    REQUIRE_MSG(vpt_eval_worker_run(w, &ok, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_OK, "after recovery: %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_MSG(vpt_eval_worker_pid(w) != first, "the poisoned worker should have been replaced");
    CHECK_EQ_INT(vpt_eval_worker_restarts(w), 1);
    /* the same config as the faulting one, now without the fault */
    REQUIRE_MSG(vpt_eval_worker_run(w, &bad, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_OK, "%s: %s", vpt_status_name(r.status), r.reason);
    vpt_eval_worker_stop(w);
    vpt_scene_destroy(s);
}

TEST_TIMEOUT(gpu_hanging_kernel_is_timeout_and_session_recovers, 300)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    VptEvalWorker *w = worker_or_skip(s, 2.0, 0);
    VptEvalResult r;
    VptConfig bad = cfg("regenerationSK-block");
    REQUIRE_MSG(vpt_eval_worker_run_fault(w, &bad, VPT_FAULT_HANG, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_TIMEOUT, "status %s: %s", vpt_status_name(r.status), r.reason);
    vpt_test_log("hang: %s (worker restarts: %d)", r.reason, vpt_eval_worker_restarts(w));
    VptConfig ok = cfg("regenerationSK-block,block=128");
    REQUIRE_MSG(vpt_eval_worker_run(w, &ok, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_OK, "after the timeout: %s: %s", vpt_status_name(r.status), r.reason);
    vpt_eval_worker_stop(w);
    vpt_scene_destroy(s);
}

/* A worker silent beyond its hard limit (here: a hang with the render
 * watchdog far away) is killed by the parent; the next config runs on a
 * fresh one. */
TEST_TIMEOUT(gpu_worker_hard_deadline_kills_a_stuck_worker, 300)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    VptEvalWorker *w = worker_or_skip(s, 120.0, 4.0);
    pid_t first = vpt_eval_worker_pid(w);
    VptEvalResult r;
    VptConfig bad = cfg("regenerationSK-thread");
    REQUIRE_MSG(vpt_eval_worker_run_fault(w, &bad, VPT_FAULT_HANG, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_TIMEOUT, "status %s: %s", vpt_status_name(r.status), r.reason);
    CHECK_STR_CONTAINS(r.reason, "was killed");
    VptConfig ok = cfg("naiveSK");
    REQUIRE_MSG(vpt_eval_worker_run(w, &ok, &r) == 0, "%s", vpt_errmsg());
    CHECK_MSG(r.status == VPT_STATUS_OK, "after the kill: %s: %s", vpt_status_name(r.status), r.reason);
    CHECK(vpt_eval_worker_pid(w) != first);
    vpt_eval_worker_stop(w);
    vpt_scene_destroy(s);
}

/* Render and roofline through the worker agree with the in-process
 * session's rules: an image of the workload's size, counters filled. */
TEST_TIMEOUT(gpu_worker_renders_measures_and_probes, 300)
{
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s);
    VptEvalWorker *w = worker_or_skip(s, 30, 0);
    const VptParams *P = vpt_eval_worker_params(w);
    REQUIRE(P && P->width == (unsigned)small.width && P->height == (unsigned)small.height);
    CHECK(vpt_eval_worker_gpu(w)->sm_count > 0);
    VptConfig cs[2] = {cfg("streamingSK"), cfg("naiveMK")};
    vpt_eval_worker_prefetch(w, cs, 2);
    VptEvalResult r;
    for (int i = 0; i < 2; i++) {
        REQUIRE_MSG(vpt_eval_worker_run(w, &cs[i], &r) == 0, "%s", vpt_errmsg());
        CHECK_MSG(r.status == VPT_STATUS_OK, "%s: %s", vpt_status_name(r.status), r.reason);
        CHECK(r.paths == (unsigned long long)small.width * small.height * small.spp);
        json_t *row = vpt_eval_worker_result_json(w, &r);
        REQUIRE(row);
        CHECK_STR_CONTAINS(json_string_value(json_object_get(row, "status")), "ok");
        json_decref(row);
    }
    float *img = vpt_eval_worker_render(w, &cs[0], &r);
    REQUIRE_MSG(img, "%s", vpt_errmsg());
    double sum = 0;
    for (int i = 0; i < small.width * small.height * 3; i++) sum += img[i];
    CHECK(sum > 0 && isfinite(sum));
    free(img);
    VptTimingStats ts;
    double gs = 0;
    unsigned long long steps = 0;
    REQUIRE_MSG(vpt_eval_worker_roofline(w, 1, VPT_DENSITY_F32, 0, &ts, &gs, &steps) == 0, "%s", vpt_errmsg());
    CHECK(gs > 1.0 && steps > 0);
    /* the ray mode crosses the pipe intact: camera tiles (2) are not bundles (1) */
    double cam = 0;
    REQUIRE_MSG(vpt_eval_worker_roofline(w, 2, VPT_DENSITY_F32, 0, &ts, &cam, &steps) == 0, "%s", vpt_errmsg());
    CHECK_MSG(cam < gs, "camera tiles %.1f Gsteps/s, bundles %.1f", cam, gs);
    CHECK(vpt_eval_worker_roofline(w, 3, VPT_DENSITY_F32, 0, &ts, &cam, &steps) != 0);
    /* the majorant's cells cross the pipe too: a grid probe, and a cell size
     * no config has, which fails with a reason and leaves the worker */
    double grid = 0;
    REQUIRE_MSG(vpt_eval_worker_roofline(w, 0, VPT_DENSITY_F32, 8, &ts, &grid, &steps) == 0, "%s", vpt_errmsg());
    CHECK(grid > 0 && isfinite(grid) && steps > 0);
    CHECK(vpt_eval_worker_roofline(w, 0, VPT_DENSITY_F32, 5, &ts, &grid, &steps) != 0);
    CHECK_STR_CONTAINS(vpt_errmsg(), "majorant 5 is not one of");
    CHECK_EQ_INT(vpt_eval_worker_restarts(w), 0);
    vpt_eval_worker_stop(w);
    vpt_scene_destroy(s);
}

TEST_TIMEOUT(gpu_roofline_probe_measures, 300)
{
    VptEvaluator *e = open_or_skip(30);
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s && vpt_evaluator_set_scene(e, s, &small) == 0);
    VptTimingStats ts;
    double rnd = 0, coh = 0, cam = 0;
    unsigned long long steps;
    REQUIRE_MSG(vpt_evaluator_roofline(e, 0, VPT_DENSITY_F32, 0, &ts, &rnd, &steps) == 0, "%s", vpt_errmsg());
    REQUIRE_MSG(vpt_evaluator_roofline(e, 1, VPT_DENSITY_F32, 0, &ts, &coh, &steps) == 0, "%s", vpt_errmsg());
    REQUIRE_MSG(vpt_evaluator_roofline(e, 2, VPT_DENSITY_F32, 0, &ts, &cam, &steps) == 0, "%s", vpt_errmsg());
    vpt_test_log("roofline: random %.1f, coherent bundle %.1f, camera tiles %.1f Gsteps/s", rnd, coh, cam);
    CHECK(rnd > 1.0);
    CHECK(coh > rnd); /* one-voxel bundles must beat scattered fetches */
    CHECK(cam > rnd); /* so must coherent camera rays with their own distances */
    CHECK(coh > cam); /* shared distances keep a warp closer together than independent ones */
    CHECK(vpt_evaluator_roofline(e, 3, VPT_DENSITY_F32, 0, &ts, &cam, &steps) != 0);
    /* the probe over a compact density texture (the configs' density=) */
    double rnd8 = 0;
    REQUIRE_MSG(vpt_evaluator_roofline(e, 0, VPT_DENSITY_U8, 0, &ts, &rnd8, &steps) == 0, "%s", vpt_errmsg());
    vpt_test_log("roofline over u8 texels: random %.1f Gsteps/s", rnd8);
    CHECK(rnd8 > 1.0);
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}

/* The grid probe (kernels.cu.in, vpt_roofline with VPT_MAJORANT_GRID 1) on
 * manix, much of whose box is empty: every ray mode runs, its threads all end
 * (a pass through empty cells still takes its exit step), and its steps are
 * counted on the device, at least nsteps (2000) per thread and the same
 * count in every launch (the evaluator checks that). */
TEST_TIMEOUT(gpu_roofline_grid_probe_measures, 300)
{
    VptEvaluator *e = open_or_skip(30);
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s && vpt_evaluator_set_scene(e, s, &small) == 0);
    VptTimingStats ts;
    static const char *const modes[] = {"random", "coherent bundle", "camera tiles"};
    for (int coh = 0; coh < 3; coh++) {
        double gs = 0, global = 0;
        unsigned long long steps = 0, global_steps = 0;
        REQUIRE_MSG(vpt_evaluator_roofline(e, coh, VPT_DENSITY_F32, 8, &ts, &gs, &steps) == 0, "%s: %s", modes[coh],
                    vpt_errmsg());
        REQUIRE_MSG(vpt_evaluator_roofline(e, coh, VPT_DENSITY_F32, 0, &ts, &global, &global_steps) == 0, "%s: %s",
                    modes[coh], vpt_errmsg());
        vpt_test_log("roofline %s: grid8 %.1f Gsteps/s (%llu steps), global %.1f Gsteps/s (%llu steps)", modes[coh], gs,
                     steps, global, global_steps);
        CHECK_MSG(gs > 0 && isfinite(gs), "%s: grid8 %g Gsteps/s", modes[coh], gs);
        /* the global probe takes exactly 2000 steps a thread, the grid's at
         * least as many, at most one batch (2 steps) more */
        CHECK_MSG(steps >= global_steps && steps <= global_steps / 2000 * 2001, "%s: %llu steps vs %llu", modes[coh],
                  steps, global_steps);
    }
    /* with a compact format, and the grid of another cell size */
    double gs = 0;
    unsigned long long steps = 0;
    REQUIRE_MSG(vpt_evaluator_roofline(e, 2, VPT_DENSITY_U8, 32, &ts, &gs, &steps) == 0, "%s", vpt_errmsg());
    CHECK(gs > 0 && isfinite(gs));
    /* a cell size no config has is an error with a reason, not a launch */
    CHECK(vpt_evaluator_roofline(e, 0, VPT_DENSITY_F32, 3, &ts, &gs, &steps) != 0);
    CHECK_STR_CONTAINS(vpt_errmsg(), "majorant 3 is not one of");
    CHECK(vpt_evaluator_broken(e) == NULL);
    vpt_scene_destroy(s);
    vpt_evaluator_destroy(e);
}
