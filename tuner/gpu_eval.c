#include "tuner/gpu_eval.h"

#include "base/error.h"
#include "harness/eval_worker.h"
#include "tuner/tune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct VptGpuEval {
    VptEvaluatorOptions opt;
    const VptScene *scene;
    VptRenderSettings rs[2];   /* [fidelity] */
    VptEvalWorker *ev[2];      /* worker processes, one per fidelity, started on first use */
    char visible[128];         /* their CUDA_VISIBLE_DEVICES; "": not pinned */
    int no_gpu;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Evaluations run in a worker process (harness/eval_worker.h): a kernel that
 * faults poisons only the worker, which is replaced, and the tune goes on. */
static VptEvalWorker *session(VptGpuEval *g, int fidelity)
{
    if (g->ev[fidelity]) return g->ev[fidelity];
    VptWorkerSpec spec = vpt_worker_spec_default();
    spec.eval = g->opt;
    spec.scene = g->scene;
    spec.settings = g->rs[fidelity];
    snprintf(spec.visible_devices, sizeof spec.visible_devices, "%s", g->visible);
    g->ev[fidelity] = vpt_eval_worker_start(&spec, &g->no_gpu);
    return g->ev[fidelity];
}

VptGpuEval *vpt_gpu_eval_create(const VptEvaluatorOptions *opt, const VptScene *scene, const VptRenderSettings *rs,
                                int *no_gpu)
{
    return vpt_gpu_eval_create_pinned(opt, NULL, scene, rs, no_gpu);
}

VptGpuEval *vpt_gpu_eval_create_pinned(const VptEvaluatorOptions *opt, const char *visible, const VptScene *scene,
                                       const VptRenderSettings *rs, int *no_gpu)
{
    if (visible && strlen(visible) >= sizeof ((VptGpuEval *)0)->visible) {
        vpt_fail("CUDA_VISIBLE_DEVICES value too long: %.64s...", visible);
        *no_gpu = 0;
        return NULL;
    }
    VptGpuEval *g = vpt_calloc(1, sizeof *g);
    if (!g) return NULL;
    if (visible) snprintf(g->visible, sizeof g->visible, "%s", visible);
    g->opt = *opt;
    g->scene = scene;
    g->rs[1] = *rs;
    g->rs[0] = *rs;
    int spp = rs->spp > 0 ? rs->spp : scene->spp;
    g->rs[0].spp = spp / 8 > 0 ? spp / 8 : 1;
    if (!session(g, 1)) {
        *no_gpu = g->no_gpu;
        free(g);
        return NULL;
    }
    return g;
}

void vpt_gpu_eval_destroy(VptGpuEval *g)
{
    if (!g) return;
    for (int f = 0; f < 2; f++)
        if (g->ev[f]) vpt_eval_worker_stop(g->ev[f]);
    free(g);
}

const VptProvenance *vpt_gpu_eval_harness_provenance(const VptGpuEval *g)
{
    return vpt_eval_worker_provenance(g->ev[1]);
}

void vpt_gpu_eval_provenance(const VptGpuEval *g, VptTuneProvenance *out)
{
    memset(out, 0, sizeof *out);
    const VptProvenance *p = vpt_eval_worker_provenance(g->ev[1]);
    const VptParams *P = vpt_eval_worker_params(g->ev[1]);
    snprintf(out->gpu_name, sizeof out->gpu_name, "%.127s", p->gpu_name);
    snprintf(out->gpu_uuid, sizeof out->gpu_uuid, "%s", p->gpu_uuid);
    snprintf(out->driver, sizeof out->driver, "%s", p->driver_release);
    snprintf(out->nvrtc, sizeof out->nvrtc, "%s", p->nvrtc);
    snprintf(out->commit, sizeof out->commit, "%s", p->commit);
    snprintf(out->scene, sizeof out->scene, "%s", g->scene->name);
    out->width = (int)P->width;
    out->height = (int)P->height;
    out->spp = (int)P->spp;
    out->seed = P->seed;
    out->max_depth = g->rs[1].max_depth;
    out->rr_depth = g->rs[1].rr_depth;
    json_t *v = vpt_scene_volume_json(g->scene);
    char *text = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (text && strlen(text) < sizeof out->volume) snprintf(out->volume, sizeof out->volume, "%s", text);
    free(text);
    json_decref(v);
}

static double nan_if_zero_reps(const VptEvalResult *r, double v) { return r->time_ms.n > 0 ? v : NAN; }

void vpt_eval_record_from_result(const VptEvalResult *r, int fidelity, VptEvalRecord *out)
{
    vpt_eval_record_init(out, &r->config, fidelity);
    out->status = r->status;
    snprintf(out->reason, sizeof out->reason, "%.255s", r->reason);
    vpt_timestamp_now(out->time, sizeof out->time);
    out->compile_s = r->from_cache ? 0.0 : r->compile_s;
    out->measure_s = r->measure_s;
    out->cost_s = r->measure_s;
    out->registers = r->registers;
    out->spill_bytes = r->spill_stores;
    out->shared_bytes = (double)r->static_smem + (double)r->dynamic_smem;
    out->occupancy_theoretical = r->occupancy_theoretical;
    if (r->status != VPT_STATUS_OK) return;
    out->time_ms = nan_if_zero_reps(r, r->time_ms.median);
    out->time_ms_spread = r->time_ms.max - r->time_ms.min;
    out->reps = r->time_ms.n;
    out->mrays_per_s = r->mrays_per_s;
    out->gsteps_per_s = r->gsteps_per_s;
    out->mpaths_per_s = r->mpaths_per_s;
    out->rays = (double)r->rays;
    out->steps = (double)r->steps;
    out->paths = (double)r->paths;
    out->occupancy_achieved = r->occupancy_achieved;
    out->simd_efficiency = r->simd_efficiency;
    out->image_rel_err = r->image_rel_err;
    out->equal_error_factor = r->equal_error_factor;
}

int vpt_gpu_eval_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out)
{
    VptGpuEval *g = ctx;
    VptEvalWorker *e = session(g, fidelity ? 1 : 0);
    if (!e) return -1;
    VptEvalResult r;
    double t0 = now_s();
    if (vpt_eval_worker_run(e, c, &r)) return -1;
    vpt_eval_record_from_result(&r, fidelity, out);
    out->cost_s = now_s() - t0;
    return 0;
}

int vpt_gpu_eval_remeasure(void *ctx, const VptConfig *configs, size_t n, VptEvalRecord *out)
{
    enum { ROUNDS = VPT_REMEASURE_ROUNDS };
    VptGpuEval *g = ctx;
    VptEvalWorker *e = session(g, 1);
    if (!e) return -1;
    double *ms = vpt_calloc(n * ROUNDS, sizeof *ms);
    VptEvalResult *last = vpt_calloc(n, sizeof *last);
    if (!ms || !last) {
        free(ms);
        free(last);
        return -1;
    }
    for (int round = 0; round < ROUNDS; round++)
        for (size_t i = 0; i < n; i++) {
            VptEvalResult r;
            if (vpt_eval_worker_run(e, &configs[i], &r)) {
                free(ms);
                free(last);
                return -1;
            }
            ms[i * ROUNDS + round] = r.status == VPT_STATUS_OK ? r.time_ms.median : INFINITY;
            if (round == 0 || r.status != VPT_STATUS_OK) last[i] = r;
            else if (last[i].status == VPT_STATUS_OK) last[i] = r;
        }
    for (size_t i = 0; i < n; i++) {
        VptTimingStats st;
        vpt_timing_stats(&ms[i * ROUNDS], ROUNDS, &st);
        VptEvalResult r = last[i];
        if (r.status == VPT_STATUS_OK && isfinite(st.median)) {
            r.time_ms = st; /* the spread across rounds */
            double s = st.median * 1e-3;
            r.mrays_per_s = r.rays / s * 1e-6;
            r.gsteps_per_s = r.steps / s * 1e-9;
            r.mpaths_per_s = r.paths / s * 1e-6;
        }
        vpt_eval_record_from_result(&r, 1, &out[i]);
    }
    free(ms);
    free(last);
    return 0;
}

void vpt_gpu_eval_prefetch(void *ctx, const VptConfig *configs, size_t n, int fidelity)
{
    VptGpuEval *g = ctx;
    VptEvalWorker *e = session(g, fidelity ? 1 : 0);
    if (e) vpt_eval_worker_prefetch(e, configs, (int)n);
}
