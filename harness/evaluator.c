#include "harness/evaluator.h"

#include "base/error.h"
#include "codegen/kernel_abi.h"
#include "codegen/kernel_source.h"
#include "harness/compile_pool.h"
#include "harness/cubin_cache.h"
#include "harness/gate.h"
#include "harness/gpu_scene.h"
#include "harness/render_gpu.h"
#include "harness/variant.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A config submitted for compilation ahead of its evaluation. It is matched
 * by its whole source text, not its name: process-wide codegen state (fault
 * injection) changes the source of a config between submit and run. */
typedef struct {
    VptKernelSource ks;
    int ticket;
} Pending;

/* Block size and |z| limit of the statistical gate between estimators: at
 * 400x400, 2,500 blocks of 8x8 pixels; for independent images the chance
 * that any block of a correct estimator exceeds |z| = 5 is below
 * 2,500 x 5.7e-7 = 0.15%, and the mean-z^2 bound's (a 5-sigma chi-square
 * bound) below 1e-6 (harness/gate.h). The images share their random numbers
 * (same seed), which correlates them positively and only lowers that rate. */
#define EST_GATE_BLOCK 8
#define EST_GATE_ZMAX 5.0
#define MAX_ESTIMATORS 64

typedef struct {
    int cell;
    VptDensityFormat format;
    int sparse;
    VptTransmittance transmittance;
    double mean_var;           /* its reference's mean pixel variance */
    int valid;                 /* passed the statistical gate */
    char why[512];             /* when not */
    float *image;
    unsigned long long rays, steps, paths;
} EstimatorRef;

struct VptEvaluator {
    VptEvaluatorOptions opt;
    VptGpu gpu;
    VptProvenance prov;
    VptCubinCache *cache;
    VptCompilePool *pool;
    Pending *pending;
    int npending, cap_pending;
    /* scene state */
    const VptScene *scene;
    VptRenderSettings settings;
    VptParams params;
    VptGpuScene gscene;
    VptRenderBuffers buffers;
    int have_scene;
    float *ref_image, *ref_var;
    double ref_mean_var;       /* mean of ref_var */
    unsigned long long ref_rays, ref_steps, ref_paths;
    /* the reference of each other estimator (majorant grid, density format):
     * naiveSK with it, rendered on first use and gated statistically
     * against the global-majorant f32 reference above */
    EstimatorRef est[MAX_ESTIMATORS];
    int nest;
    /* set when the context became unusable (see evaluator.h) */
    int broken;
    char broken_why[600];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

VptEvaluatorOptions vpt_evaluator_options_default(void)
{
    VptEvaluatorOptions o;
    memset(&o, 0, sizeof o);
    o.policy = vpt_measure_policy_default();
    o.timeout_s = 60.0;
    o.gate = 1;
    o.recover_in_process = 1;
    return o;
}

const char *vpt_eval_phase_name(int phase)
{
    static const char *const names[VPT_EVAL_PHASE_COUNT] = {"compile", "load", "upload", "render", "measure", "roofline"};
    return phase >= 0 && phase < VPT_EVAL_PHASE_COUNT ? names[phase] : "unknown";
}

static void phase(VptEvaluator *e, VptEvalPhase p)
{
    if (e->opt.progress) e->opt.progress(e->opt.progress_ctx, p);
}

VptEvaluator *vpt_evaluator_create(const VptEvaluatorOptions *opt) { return vpt_evaluator_create_ex(opt, NULL); }

VptEvaluator *vpt_evaluator_create_ex(const VptEvaluatorOptions *opt, int *no_gpu)
{
    if (no_gpu) *no_gpu = 0;
    VptEvaluator *e = vpt_calloc(1, sizeof *e);
    if (!e) return NULL;
    e->opt = *opt;
    if (e->opt.timeout_s <= 0) e->opt.timeout_s = 60.0;
    if (vpt_gpu_open(opt->device, &e->gpu)) {
        if (no_gpu) *no_gpu = 1;
        free(e);
        return NULL;
    }
    vpt_provenance_fill(&e->prov, &e->gpu);
    e->cache = vpt_cubin_cache_open(opt->cache_dir);
    if (!e->cache) {
        vpt_error_prefix("opening the cubin cache");
        goto fail;
    }
    e->pool = vpt_compile_pool_create(e->cache, opt->compile_threads);
    if (!e->pool) goto fail;
    return e;
fail:
    if (e->cache) vpt_cubin_cache_close(e->cache);
    vpt_gpu_close(&e->gpu);
    free(e);
    return NULL;
}

static void drop_scene(VptEvaluator *e)
{
    if (!e->have_scene) return;
    vpt_render_buffers_destroy(&e->buffers);
    vpt_gpu_scene_destroy(&e->gscene);
    free(e->ref_image);
    free(e->ref_var);
    e->ref_image = e->ref_var = NULL;
    for (int i = 0; i < e->nest; i++) free(e->est[i].image);
    e->nest = 0;
    e->have_scene = 0;
}

void vpt_evaluator_destroy(VptEvaluator *e)
{
    if (!e) return;
    drop_scene(e);
    if (e->pool) vpt_compile_pool_destroy(e->pool);
    for (int i = 0; i < e->npending; i++) vpt_kernel_source_free(&e->pending[i].ks);
    free(e->pending);
    if (e->cache) vpt_cubin_cache_close(e->cache);
    vpt_gpu_close(&e->gpu);
    free(e);
}

const VptGpu *vpt_evaluator_gpu(const VptEvaluator *e) { return &e->gpu; }
const char *vpt_evaluator_broken(const VptEvaluator *e) { return e->broken ? e->broken_why : NULL; }
const VptProvenance *vpt_evaluator_provenance(const VptEvaluator *e) { return &e->prov; }
const VptParams *vpt_evaluator_params(const VptEvaluator *e) { return &e->params; }
const float *vpt_evaluator_reference_image(const VptEvaluator *e) { return e->ref_image; }

const float *vpt_evaluator_reference_variance(const VptEvaluator *e) { return e->ref_var; }

static VptCompileRequest request_of(const VptEvaluator *e, const VptKernelSource *ks)
{
    return vpt_compile_request_of(ks, e->gpu.cc_major, e->gpu.cc_minor);
}

/* c as it renders the session's scene (vpt_config_for_scene): with a sun or
 * an environment map, with a transmittance estimator and those lights;
 * without, with none. */
static VptConfig for_scene(const VptEvaluator *e, const VptConfig *c)
{
    VptConfig x = *c;
    vpt_config_for_scene(&x, e->have_scene && e->params.sun_on, e->have_scene && e->params.env_map_on);
    return x;
}

/* The estimator of a config: its reference variant, naiveSK with the
 * config's majorant, density, volume and transmittance estimator. */
static VptConfig estimator_of(const VptConfig *c)
{
    VptConfig ref = vpt_config_default();
    ref.majorant = c->majorant;
    ref.density = c->density;
    ref.sparse = c->sparse;
    ref.transmittance = c->transmittance;
    return ref;
}

static int same_estimator(const VptConfig *a, const VptConfig *b)
{
    return a->majorant == b->majorant && a->density == b->density && a->sparse == b->sparse &&
           a->transmittance == b->transmittance;
}

static int is_base_estimator(const VptEvaluator *e, const VptConfig *c)
{
    const VptConfig d = vpt_config_default();
    const VptConfig base = for_scene(e, &d);
    return same_estimator(c, &base);
}

static int submit(VptEvaluator *e, const VptConfig *c)
{
    if (e->npending == e->cap_pending) {
        int cap = e->cap_pending ? 2 * e->cap_pending : 64;
        Pending *p = vpt_realloc(e->pending, sizeof *p * (size_t)cap);
        if (!p) return -1;
        e->pending = p;
        e->cap_pending = cap;
    }
    Pending *p = &e->pending[e->npending];
    memset(p, 0, sizeof *p);
    if (vpt_kernel_source_build(c, &p->ks)) return -1;
    VptCompileRequest r = request_of(e, &p->ks);
    p->ticket = vpt_compile_pool_submit(e->pool, &r);
    if (p->ticket < 0) {
        vpt_kernel_source_free(&p->ks);
        return -1;
    }
    e->npending++;
    return 0;
}

/* The index in the queue of c's compile; -1 when it is not queued, -2 when
 * its source cannot be built (message set). */
static int pending_index(const VptEvaluator *e, const VptConfig *c)
{
    VptKernelSource want;
    if (vpt_kernel_source_build(c, &want)) return -2;
    int i = 0;
    while (i < e->npending && strcmp(e->pending[i].ks.source, want.source)) i++;
    vpt_kernel_source_free(&want);
    return i < e->npending ? i : -1;
}

/* The gate renders each estimator's reference variant (naiveSK with its
 * majorant, density and volume: estimator_ref) the first time a config of
 * that estimator is measured. Queued after the configs, its compile would
 * wait for all of them, and a large bench would measure nothing until the
 * whole queue had compiled. So the references of the estimators the list
 * brings are queued first (docs/decisions/evaluator-prefetch-references.md). */
void vpt_evaluator_prefetch(VptEvaluator *e, const VptConfig *configs, int n)
{
    VptConfig asked[MAX_ESTIMATORS]; /* the references this call has looked at (one source build each) */
    int nasked = 0;
    for (int i = 0; i < n && e->opt.gate; i++) {
        const VptConfig c = for_scene(e, &configs[i]);
        if (vpt_config_check(&c) || is_base_estimator(e, &c)) continue;
        int seen = 0;
        for (int k = 0; k < e->nest && !seen; k++)
            seen = e->est[k].cell == c.majorant && e->est[k].format == c.density && e->est[k].sparse == c.sparse &&
                   e->est[k].transmittance == c.transmittance;
        for (int k = 0; k < nasked && !seen; k++) seen = same_estimator(&asked[k], &c);
        if (seen || nasked == MAX_ESTIMATORS) continue;
        const VptConfig ref = estimator_of(&c);
        asked[nasked++] = ref;
        if (pending_index(e, &ref) >= 0) continue;
        if (submit(e, &ref) && !e->opt.quiet)
            fprintf(stderr, "warning: could not queue a compile: %s\n", vpt_errmsg());
    }
    for (int i = 0; i < n; i++) {
        const VptConfig c = for_scene(e, &configs[i]);
        if (vpt_config_check(&c)) continue; /* run() reports it */
        if (submit(e, &c) && !e->opt.quiet)
            fprintf(stderr, "warning: could not queue a compile: %s\n", vpt_errmsg());
    }
}

/* Takes the compile of c out of the queue (submitting it first if needed). */
static int compiled(VptEvaluator *e, const VptConfig *c, VptKernelSource *ks, VptCompileResult *cr)
{
    int i = pending_index(e, c);
    if (i == -2) return -1;
    if (i == -1) {
        if (submit(e, c)) return -1;
        i = e->npending - 1;
    }
    Pending p = e->pending[i];
    memmove(&e->pending[i], &e->pending[i + 1], sizeof p * (size_t)(e->npending - i - 1));
    e->npending--;
    *ks = p.ks;
    return vpt_compile_pool_wait(e->pool, p.ticket, cr);
}

/* After a sticky error the context is gone: reset it and rebuild the scene.
 * With current drivers the reset fails (see vpt_cu_is_sticky). */
static int recover(VptEvaluator *e)
{
    vpt_render_buffers_destroy(&e->buffers);
    vpt_gpu_scene_destroy(&e->gscene);
    if (vpt_gpu_reset(&e->gpu)) return -1;
    if (vpt_gpu_scene_create(e->scene, &e->gscene)) return -1;
    return vpt_render_buffers_create(&e->params, &e->gpu, &e->buffers);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Whether the context still works after a failure: 1 when no sticky error
 * was seen and the default stream drains; 0 (why written) when it is
 * corrupted; -1 (why written) when a kernel that ignored the abort flag still
 * keeps it busy. */
static int context_usable(char *why, size_t n)
{
    char text[300];
    CUresult last = vpt_cu_last_error();
    if (vpt_cu_is_sticky(last)) {
        vpt_cu_error_text(last, text, sizeof text);
        snprintf(why, n, "sticky CUDA error %s", text);
        return 0;
    }
    double t0 = now_s();
    for (;;) {
        CUresult r = vpt_cu.cuStreamQuery(NULL);
        if (r == CUDA_SUCCESS) return 1;
        if (r != CUDA_ERROR_NOT_READY) {
            vpt_cu_error_text(r, text, sizeof text);
            snprintf(why, n, "%sCUDA error %s", vpt_cu_is_sticky(r) ? "sticky " : "", text);
            return 0;
        }
        if (now_s() - t0 > 5.0) {
            snprintf(why, n, "a kernel is still running 5 s after its render was given up");
            return -1;
        }
        sleep_ms(1);
    }
}

/* Called after a step failed with status st (variant already unloaded);
 * r (may be NULL) is the failed result: a kernel that would not stop makes it
 * a timeout. Returns 0 when the session can go on, or when it is broken and
 * the caller only reports the result; -1 when it broke and in-process
 * recovery failed (message set). */
static int check_context(VptEvaluator *e, VptStatus st, VptEvalResult *r)
{
    if (st != VPT_STATUS_RUNTIME && st != VPT_STATUS_TIMEOUT) return 0;
    char why[400];
    int u = context_usable(why, sizeof why);
    if (u == 1) return 0;
    if (u < 0 && r) r->status = VPT_STATUS_TIMEOUT;
    if (e->opt.recover_in_process) {
        if (recover(e) == 0) {
            vpt_cu_clear_last_error();
            return 0;
        }
        snprintf(e->broken_why, sizeof e->broken_why, "%s; in-process recovery failed: %s", why, vpt_errmsg());
        e->broken = 1;
        return vpt_fail("%s", e->broken_why);
    }
    snprintf(e->broken_why, sizeof e->broken_why, "%s", why);
    e->broken = 1;
    return 0;
}

static int fail_if_broken(const VptEvaluator *e)
{
    if (!e->broken) return 0;
    return vpt_fail("the GPU context is unusable after %s: the process must be restarted", e->broken_why);
}

static void fill_rates(VptEvalResult *r, double ms)
{
    double s = ms * 1e-3;
    r->mrays_per_s = s > 0 ? r->rays / s * 1e-6 : 0;
    r->gsteps_per_s = s > 0 ? r->steps / s * 1e-9 : 0;
    r->mpaths_per_s = s > 0 ? r->paths / s * 1e-6 : 0;
}

/* Compiles and loads c, and renders it once (the warm-up) through its
 * estimator's medium (*P, *gm: kept for the timed renders), the image into
 * img and the pixels' variance into var when given. Returns 0 when it
 * rendered, 1 when it produced a result with a failure status, -1 when the
 * session broke. */
static int prepare_and_render(VptEvaluator *e, const VptConfig *asked, VptVariant *v, float *img, float *var,
                              VptEvalResult *r, VptParams *P, VptGpuMedium *gm)
{
    const VptConfig scene_config = for_scene(e, asked);
    const VptConfig *c = &scene_config;
    memset(r, 0, sizeof *r);
    r->equal_error_factor = NAN;
    r->config = *c;
    vpt_config_format(c, r->canon, sizeof r->canon);
    r->spill_stores = r->spill_loads = -1;
    vpt_cu_clear_last_error();
    if (vpt_config_check(c)) {
        r->status = VPT_STATUS_COMPILE;
        snprintf(r->reason, sizeof r->reason, "constraint: %s", vpt_errmsg());
        return 1;
    }
    VptKernelSource ks;
    VptCompileResult cr;
    memset(&cr, 0, sizeof cr);
    memset(&ks, 0, sizeof ks);
    phase(e, VPT_EVAL_PHASE_COMPILE);
    if (compiled(e, c, &ks, &cr)) {
        r->status = VPT_STATUS_COMPILE;
        snprintf(r->reason, sizeof r->reason, "%s", vpt_errmsg());
        vpt_compile_result_free(&cr);
        vpt_kernel_source_free(&ks);
        return 1;
    }
    r->compile_s = cr.seconds;
    r->from_cache = cr.from_cache;
    phase(e, VPT_EVAL_PHASE_LOAD);
    VptStatus st;
    int rc = vpt_variant_load(&e->gpu, c, &ks, &cr, v, &st);
    vpt_compile_result_free(&cr);
    vpt_kernel_source_free(&ks);
    r->registers = v->registers;
    r->local_bytes = v->local_bytes;
    r->spill_stores = v->spill_stores;
    r->spill_loads = v->spill_loads;
    r->static_smem = v->static_smem;
    r->dynamic_smem = (long)v->dynamic_smem;
    r->blocks_per_sm = v->blocks_per_sm;
    r->occupancy_theoretical = v->occupancy_theoretical;
    if (rc) {
        r->status = st;
        snprintf(r->reason, sizeof r->reason, "%s", vpt_errmsg());
        return check_context(e, st, r) ? -1 : 1;
    }
    phase(e, VPT_EVAL_PHASE_UPLOAD);
    if (vpt_gpu_scene_medium(&e->gscene, c->density, c->majorant, c->sparse, &e->params, P, gm)) {
        r->status = VPT_STATUS_RUNTIME;
        snprintf(r->reason, sizeof r->reason, "%s", vpt_errmsg());
        vpt_variant_unload(v);
        return check_context(e, r->status, r) ? -1 : 1;
    }
    phase(e, VPT_EVAL_PHASE_RENDER);
    VptRunStats rs;
    if (vpt_render_run(&e->gpu, v, gm, P, e->settings.tiles, &e->buffers, e->opt.timeout_s, img, var, &rs, &st)) {
        r->status = st;
        snprintf(r->reason, sizeof r->reason, "%s", vpt_errmsg());
        vpt_variant_unload(v);
        return check_context(e, st, r) ? -1 : 1;
    }
    r->rays = rs.rays;
    r->steps = rs.steps;
    r->paths = rs.paths;
    r->simd_efficiency = rs.simd_efficiency;
    r->occupancy_achieved = rs.occupancy_achieved;
    r->launches = rs.launches;
    double one[1] = {rs.ms};
    vpt_timing_stats(one, 1, &r->time_ms);
    fill_rates(r, rs.ms);
    return 0;
}

/* The mean of v[0..n): a reference image's mean pixel variance. */
static double mean_of(const float *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return n ? s / (double)n : NAN;
}

int vpt_evaluator_set_scene(VptEvaluator *e, const VptScene *s, const VptRenderSettings *rset)
{
    if (fail_if_broken(e)) return -1;
    drop_scene(e);
    e->scene = s;
    e->settings = *rset;
    vpt_params_init(&e->params, s, rset);
    phase(e, VPT_EVAL_PHASE_UPLOAD);
    if (vpt_gpu_scene_create(s, &e->gscene)) return -1;
    if (vpt_render_buffers_create(&e->params, &e->gpu, &e->buffers)) {
        vpt_gpu_scene_destroy(&e->gscene);
        return -1;
    }
    e->have_scene = 1;
    if (!e->opt.gate) return 0; /* no reference needed */
    size_t npix = (size_t)e->params.width * e->params.height;
    e->ref_image = vpt_malloc(npix * 3 * sizeof(float));
    e->ref_var = vpt_malloc(npix * 3 * sizeof(float));
    if (!e->ref_image || !e->ref_var) goto fail;
    VptConfig ref = vpt_config_default();
    VptVariant v;
    VptEvalResult r;
    VptParams P;
    VptGpuMedium gm;
    int rc = prepare_and_render(e, &ref, &v, e->ref_image, e->ref_var, &r, &P, &gm);
    if (rc != 0) {
        if (rc > 0) vpt_fail("the reference variant (%s) failed: %s: %s", r.canon, vpt_status_name(r.status), r.reason);
        goto fail;
    }
    vpt_variant_unload(&v);
    e->ref_mean_var = mean_of(e->ref_var, npix * 3);
    e->ref_rays = r.rays;
    e->ref_steps = r.steps;
    e->ref_paths = r.paths;
    return 0;
fail:
    vpt_error_prefix("scene '%s'", s->name);
    drop_scene(e);
    return -1;
}

/* The reference of c's estimator: naiveSK with c's majorant and density,
 * rendered (with its pixels' variance) and gated statistically against the
 * global-majorant f32 reference the first time the estimator is seen. NULL
 * when the session broke (message set); a reference that fails the gate is
 * returned with valid 0 and the measured difference in why. */
static EstimatorRef *estimator_ref(VptEvaluator *e, const VptConfig *c)
{
    for (int i = 0; i < e->nest; i++)
        if (e->est[i].cell == c->majorant && e->est[i].format == c->density && e->est[i].sparse == c->sparse &&
            e->est[i].transmittance == c->transmittance)
            return &e->est[i];
    if (e->nest == MAX_ESTIMATORS) {
        vpt_fail("internal error: more than %d estimators in one session", MAX_ESTIMATORS);
        return NULL;
    }
    EstimatorRef *x = &e->est[e->nest];
    memset(x, 0, sizeof *x);
    x->cell = c->majorant;
    x->format = c->density;
    x->sparse = c->sparse;
    x->transmittance = c->transmittance;
    size_t npix = (size_t)e->params.width * e->params.height;
    x->image = vpt_malloc(npix * 3 * sizeof(float));
    float *var = vpt_malloc(npix * 3 * sizeof(float));
    if (!x->image || !var) {
        free(x->image);
        free(var);
        return NULL;
    }
    const VptConfig ref = estimator_of(c);
    VptVariant v;
    VptEvalResult r;
    VptParams P;
    VptGpuMedium gm;
    char name[160];
    snprintf(name, sizeof name, "majorant=%s,density=%s,volume=%s%s%s", vpt_majorant_name(c->majorant),
             vpt_density_name(c->density), vpt_volume_name(c->sparse),
             c->transmittance != VPT_TRANSMITTANCE_NONE ? ",transmittance=" : "",
             c->transmittance != VPT_TRANSMITTANCE_NONE ? vpt_transmittance_name(c->transmittance) : "");
    int rc = prepare_and_render(e, &ref, &v, x->image, var, &r, &P, &gm);
    if (rc < 0) {
        free(x->image);
        free(var);
        return NULL;
    }
    e->nest++;
    if (rc > 0) {
        snprintf(x->why, sizeof x->why, "the estimator %s failed to render its reference (naiveSK): %s: %.240s",
                 name, vpt_status_name(r.status), r.reason);
        free(var);
        return x;
    }
    vpt_variant_unload(&v);
    x->rays = r.rays;
    x->steps = r.steps;
    x->paths = r.paths;
    x->mean_var = mean_of(var, npix * 3);
    VptGateReport rep;
    int bad = vpt_gate_statistical(x->image, var, e->ref_image, e->ref_var, (int)e->params.width,
                                   (int)e->params.height, EST_GATE_BLOCK, EST_GATE_ZMAX, &rep);
    free(var);
    x->valid = !bad;
    if (bad)
        snprintf(x->why, sizeof x->why,
                 "the estimator %s changes the image beyond the noise: against the global-majorant f32 reference%s, "
                 "max block |z| %.2f (limit %.1f, %dx%d blocks), mean z^2 %.2f, mean differs by %.3f%%%s",
                 name,
                 e->params.sun_on       ? " (ratio tracking toward the sun)"
                 : e->params.env_map_on ? " (ratio tracking toward the environment map)"
                                        : "", rep.max_block_z, EST_GATE_ZMAX,
                 EST_GATE_BLOCK, EST_GATE_BLOCK, rep.mean_block_z2,
                 100.0 * rep.mean_rel_diff, rep.nonfinite ? ", non-finite pixels" : "");
    return x;
}

/* equal_error_factor of a valid record (VptEvalResult): the mean pixel
 * variance of its estimator's reference (naiveSK with its majorant, density,
 * volume and transmittance: estimator_ref) over the session's base
 * reference's; NaN without a sun or an environment map, or when that
 * reference failed the gate. The whole estimator, not the transmittance
 * alone: ratio tracking's variance depends on its majorant, and residual
 * tracking's control on the grid's cells
 * (docs/decisions/equal-error-per-estimator.md). -1 when the session broke. */
static int equal_error_factor(VptEvaluator *e, VptEvalResult *r)
{
    r->equal_error_factor = NAN;
    if (!e->params.sun_on && !e->params.env_map_on) return 0;
    if (is_base_estimator(e, &r->config)) {
        r->equal_error_factor = 1.0;
        return 0;
    }
    EstimatorRef *x = estimator_ref(e, &r->config);
    if (!x) return -1;
    if (x->valid && e->ref_mean_var > 0) r->equal_error_factor = x->mean_var / e->ref_mean_var;
    return 0;
}

static int gate(VptEvaluator *e, const float *img, VptEvalResult *r)
{
    const float *ref_image = e->ref_image;
    unsigned long long rays = e->ref_rays, steps = e->ref_steps, paths = e->ref_paths;
    if (!is_base_estimator(e, &r->config)) {
        EstimatorRef *x = estimator_ref(e, &r->config);
        if (!x) return -1;
        if (!x->valid) {
            r->status = VPT_STATUS_INVALID_OUTPUT;
            snprintf(r->reason, sizeof r->reason, "invalid output: %.480s", x->why);
            return 1;
        }
        ref_image = x->image;
        rays = x->rays;
        steps = x->steps;
        paths = x->paths;
    }
    if (r->rays != rays || r->steps != steps || r->paths != paths) {
        r->status = VPT_STATUS_INVALID_OUTPUT;
        snprintf(r->reason, sizeof r->reason,
                 "invalid output: traced different paths than the reference variant of its estimator "
                 "(rays %llu vs %llu, steps %llu vs %llu, paths %llu vs %llu)",
                 r->rays, rays, r->steps, steps, r->paths, paths);
        return 1;
    }
    VptGateReport rep;
    size_t npix = (size_t)e->params.width * e->params.height;
    int rc = vpt_gate_same_paths(img, ref_image, npix, VPT_GATE_FLOAT_SUM_TOL, &rep);
    r->image_rel_err = rep.max_rel_diff;
    if (rc) {
        r->status = VPT_STATUS_INVALID_OUTPUT;
        snprintf(r->reason, sizeof r->reason, "%s", vpt_errmsg());
        return 1;
    }
    return equal_error_factor(e, r);
}

int vpt_evaluator_run(VptEvaluator *e, const VptConfig *c, VptEvalResult *r)
{
    if (fail_if_broken(e)) return -1;
    if (!e->have_scene) return vpt_fail("internal error: no scene set");
    double t0 = now_s();
    size_t npix = (size_t)e->params.width * e->params.height;
    float *img = vpt_malloc(npix * 3 * sizeof(float));
    if (!img) return -1;
    VptVariant v;
    VptParams P;
    VptGpuMedium gm;
    int rc = prepare_and_render(e, c, &v, img, NULL, r, &P, &gm);
    if (rc != 0) {
        free(img);
        r->measure_s = now_s() - t0;
        return rc < 0 ? -1 : 0;
    }
    int g = e->opt.gate ? gate(e, img, r) : 0;
    if (g) {
        free(img);
        vpt_variant_unload(&v);
        r->measure_s = now_s() - t0;
        return g < 0 ? -1 : 0;
    }
    free(img);
    double samples[1024];
    int n = 0, maxn = e->opt.policy.max_reps < 1024 ? e->opt.policy.max_reps : 1024;
    double tm = now_s();
    VptStatus st = VPT_STATUS_OK;
    while (n < maxn && !vpt_measure_done(&e->opt.policy, samples, n, now_s() - tm)) {
        VptRunStats rs;
        phase(e, VPT_EVAL_PHASE_MEASURE);
        if (vpt_render_run(&e->gpu, &v, &gm, &P, e->settings.tiles, &e->buffers, e->opt.timeout_s, NULL, NULL, &rs, &st)) {
            r->status = st;
            snprintf(r->reason, sizeof r->reason, "%s", vpt_errmsg());
            vpt_variant_unload(&v);
            r->measure_s = now_s() - t0;
            return check_context(e, st, r);
        }
        samples[n++] = rs.ms;
        if (rs.rays != r->rays || rs.steps != r->steps) {
            r->status = VPT_STATUS_INVALID_OUTPUT;
            snprintf(r->reason, sizeof r->reason, "invalid output: repeated render traced different paths (rays %llu vs %llu)",
                     rs.rays, r->rays);
            vpt_variant_unload(&v);
            r->measure_s = now_s() - t0;
            return 0;
        }
        /* keep the better-sampled occupancy/SIMD figures of the last run */
        r->occupancy_achieved = rs.occupancy_achieved;
        r->simd_efficiency = rs.simd_efficiency;
    }
    vpt_variant_unload(&v);
    vpt_timing_stats(samples, n, &r->time_ms);
    fill_rates(r, r->time_ms.median);
    r->status = VPT_STATUS_OK;
    r->measure_s = now_s() - t0;
    return 0;
}

float *vpt_evaluator_render(VptEvaluator *e, const VptConfig *c, VptEvalResult *r)
{
    if (fail_if_broken(e)) return NULL;
    if (!e->have_scene) {
        vpt_fail("internal error: no scene set");
        return NULL;
    }
    size_t npix = (size_t)e->params.width * e->params.height;
    float *img = vpt_malloc(npix * 3 * sizeof(float));
    if (!img) return NULL;
    VptVariant v;
    VptParams P;
    VptGpuMedium gm;
    int rc = prepare_and_render(e, c, &v, img, NULL, r, &P, &gm);
    if (rc != 0) {
        if (rc > 0) vpt_fail("%s: %s", vpt_status_name(r->status), r->reason);
        free(img);
        return NULL;
    }
    vpt_variant_unload(&v);
    return img;
}

int vpt_evaluator_roofline(VptEvaluator *e, int coherent, VptDensityFormat density, int majorant, VptTimingStats *ms,
                           double *gsteps_per_s, unsigned long long *steps)
{
    const int block = 256, nsteps = 2000;
    if (fail_if_broken(e)) return -1;
    if (!e->have_scene) return vpt_fail("internal error: no scene set");
    if (coherent < 0 || coherent > 2) return vpt_fail("internal error: roofline ray mode %d is not 0, 1 or 2", coherent);
    vpt_cu_clear_last_error();
    VptKernelSource ks;
    if (vpt_kernel_source_build_roofline(block, majorant, &ks)) return -1;
    VptCompileRequest req = request_of(e, &ks);
    VptCompileResult cr;
    memset(&cr, 0, sizeof cr);
    int rc = -1;
    CUmodule mod = NULL;
    CUfunction f;
    CUevent e0 = NULL, e1 = NULL;
    phase(e, VPT_EVAL_PHASE_COMPILE);
    if (vpt_compile_cached(e->cache, &req, &cr)) goto out;
    phase(e, VPT_EVAL_PHASE_ROOFLINE);
    if (VPT_CU_TRY(cuModuleLoadData, &mod, cr.cubin) || VPT_CU_TRY(cuModuleGetFunction, &f, mod, "vpt_roofline"))
        goto out;
    int per_sm = 0;
    if (VPT_CU_TRY(cuOccupancyMaxActiveBlocksPerMultiprocessor, &per_sm, f, block, 0)) goto out;
    unsigned grid = (unsigned)(per_sm * e->gpu.sm_count * 4);
    VptLaunch L;
    memset(&L, 0, sizeof L);
    VptGpuMedium gm;
    /* the medium a config of this estimator renders (prepare_and_render):
     * its texture and, for a grid, the same grid and parameters */
    if (vpt_gpu_scene_medium(&e->gscene, density, majorant, 0, &e->params, &L.P, &gm)) goto out;
    L.density_tex = gm.density_tex;
    L.albedo_tex = gm.albedo_tex;
    L.majorant_grid = gm.majorant;
    L.stats = e->buffers.stats;
    L.voxel_uvw[0] = 1.0f / (float)e->scene->nx;
    L.voxel_uvw[1] = 1.0f / (float)e->scene->ny;
    L.voxel_uvw[2] = 1.0f / (float)e->scene->nz;
    int coh = coherent, ns = nsteps;
    void *args[] = {&L, &coh, &ns};
    if (VPT_CU_TRY(cuEventCreate, &e0, CU_EVENT_DEFAULT) || VPT_CU_TRY(cuEventCreate, &e1, CU_EVENT_DEFAULT)) goto out;
    double samples[64];
    int n = 0;
    double tm = now_s();
    /* The global probe (and the skip's, majorant -1: the same loop with its
     * jumps) takes exactly nsteps steps a thread. The grid probe
     * counts its steps on the device (a thread may take one batch more, and
     * every launch the same draws: a launch that counts other steps is an
     * error), into the stats' steps, zeroed before each launch outside the
     * timed events. */
    const CUdeviceptr steps_at = e->buffers.stats + offsetof(VptDevStats, steps);
    unsigned long long counted = 0;
    for (int warm = 1; n < 64; warm = 0) {
        if (majorant > 0 && VPT_CU_TRY(cuMemsetD8, steps_at, 0, sizeof(unsigned long long))) goto out;
        if (VPT_CU_TRY(cuEventRecord, e0, NULL) ||
            VPT_CU_TRY(cuLaunchKernel, f, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL) ||
            VPT_CU_TRY(cuEventRecord, e1, NULL) || VPT_CU_TRY(cuEventSynchronize, e1))
            goto out;
        float t = 0;
        if (VPT_CU_TRY(cuEventElapsedTime, &t, e0, e1)) goto out;
        if (majorant > 0) {
            unsigned long long c = 0;
            if (VPT_CU_TRY(cuMemcpyDtoH, &c, steps_at, sizeof c)) goto out;
            if (c < (unsigned long long)grid * block * nsteps || (!warm && c != counted)) {
                vpt_fail("roofline probe (%s majorant): a launch counted %llu steps (%s %llu)",
                         vpt_majorant_name(majorant), c, warm ? "at least" : "the first",
                         warm ? (unsigned long long)grid * block * nsteps : counted);
                goto out;
            }
            counted = c;
        }
        if (warm) continue;
        samples[n++] = t;
        if (vpt_measure_done(&e->opt.policy, samples, n, now_s() - tm)) break;
    }
    vpt_timing_stats(samples, n, ms);
    *steps = majorant > 0 ? counted : (unsigned long long)grid * block * nsteps;
    *gsteps_per_s = (double)*steps / (ms->median * 1e-3) * 1e-9;
    rc = 0;
out:
    if (e0) vpt_cu.cuEventDestroy(e0);
    if (e1) vpt_cu.cuEventDestroy(e1);
    if (mod) vpt_cu.cuModuleUnload(mod);
    vpt_compile_result_free(&cr);
    vpt_kernel_source_free(&ks);
    if (rc && vpt_cu_last_error() != CUDA_SUCCESS) {
        /* keep the probe's message; the check may replace it */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", vpt_errmsg());
        check_context(e, VPT_STATUS_RUNTIME, NULL);
        vpt_fail("%s", msg);
    }
    return rc;
}

json_t *vpt_workload_json(const VptParams *P, const VptRenderSettings *rs)
{
    json_t *w = json_pack("{s:i, s:i, s:i, s:I, s:i, s:i}", "width", (int)P->width, "height", (int)P->height, "spp",
                          (int)P->spp, "seed", (json_int_t)P->seed, "max_depth", rs->max_depth, "rr_depth",
                          rs->rr_depth);
    /* only when tiled: untiled rows read the same as before tiling existed */
    if (w && rs->tiles > 1) json_object_set_new(w, "tiles", json_integer(rs->tiles));
    return w;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *vpt_eval_result_json(const VptEvaluator *e, const VptEvalResult *r)
{
    return vpt_eval_result_row(&e->prov, &e->params, &e->settings, e->scene, r);
}

json_t *vpt_eval_result_row(const VptProvenance *pv, const VptParams *P, const VptRenderSettings *rs,
                            const VptScene *scene, const VptEvalResult *r)
{
    char when[64];
    vpt_iso8601_now(when, sizeof when);
    json_t *row = vpt_provenance_json(pv);
    if (!row) return NULL;
    json_object_set_new(row, "kind", json_string("result"));
    json_object_set_new(row, "schema", json_string("vptune.result/1"));
    json_object_set_new(row, "time", json_string(when));
    json_object_set_new(row, "scene", json_string(scene->name));
    json_object_set_new(row, "volume", vpt_scene_volume_json(scene));
    json_object_set_new(row, "workload", vpt_workload_json(P, rs));
    json_object_set_new(row, "config", json_string(r->canon));
    json_object_set_new(row, "schedule", json_string(vpt_config_schedule_name(&r->config)));
    json_object_set_new(row, "status", json_string(vpt_status_name(r->status)));
    json_object_set_new(row, "reason", json_string(r->reason));
    json_t *m = json_object();
    json_object_set_new(m, "time_ms", num_or_null(r->time_ms.median));
    json_object_set_new(m, "time_ms_mean", num_or_null(r->time_ms.mean));
    json_object_set_new(m, "time_ms_min", num_or_null(r->time_ms.min));
    json_object_set_new(m, "time_ms_max", num_or_null(r->time_ms.max));
    json_object_set_new(m, "time_ms_ci95", num_or_null(r->time_ms.ci95_half));
    json_object_set_new(m, "time_ms_spread", num_or_null(r->time_ms.rel_spread));
    json_object_set_new(m, "reps", json_integer(r->time_ms.n));
    json_object_set_new(m, "mrays_per_s", num_or_null(r->mrays_per_s));
    json_object_set_new(m, "gsteps_per_s", num_or_null(r->gsteps_per_s));
    json_object_set_new(m, "mpaths_per_s", num_or_null(r->mpaths_per_s));
    json_object_set_new(m, "rays", json_integer((json_int_t)r->rays));
    json_object_set_new(m, "steps", json_integer((json_int_t)r->steps));
    json_object_set_new(m, "paths", json_integer((json_int_t)r->paths));
    /* what an estimator saves: Woodcock steps (null collisions included) per extension */
    json_object_set_new(m, "steps_per_ray", num_or_null(r->rays ? (double)r->steps / (double)r->rays : NAN));
    json_object_set_new(m, "registers", json_integer(r->registers));
    json_object_set_new(m, "local_bytes", json_integer(r->local_bytes));
    json_object_set_new(m, "spill_bytes", json_integer(r->spill_stores));
    json_object_set_new(m, "spill_loads", json_integer(r->spill_loads));
    json_object_set_new(m, "shared_bytes", json_integer(r->static_smem + r->dynamic_smem));
    json_object_set_new(m, "blocks_per_sm", json_integer(r->blocks_per_sm));
    json_object_set_new(m, "occupancy_theoretical", num_or_null(r->occupancy_theoretical));
    json_object_set_new(m, "occupancy_achieved", num_or_null(r->occupancy_achieved));
    json_object_set_new(m, "simd_efficiency", num_or_null(r->simd_efficiency));
    json_object_set_new(m, "compile_s", num_or_null(r->compile_s));
    json_object_set_new(m, "compile_cached", json_boolean(r->from_cache));
    json_object_set_new(m, "measure_s", num_or_null(r->measure_s));
    json_object_set_new(m, "image_rel_err", num_or_null(r->image_rel_err));
    if (isfinite(r->equal_error_factor))
        json_object_set_new(m, "equal_error_factor", json_real(r->equal_error_factor));
    json_object_set_new(m, "launches", json_integer(r->launches));
    json_object_set_new(row, "metrics", m);
    return row;
}
