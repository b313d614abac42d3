/* An evaluation session: one GPU, one scene, one workload. It evaluates
 * configurations the way every vptune measurement is made:
 *   compile (NVRTC, cached, in parallel threads ahead of the GPU)
 *   -> load and read resources (launch_limits before any launch)
 *   -> warm-up render, checked against the reference variant (naiveSK, same
 *      seed: identical counters, image equal up to summation order)
 *   -> timed renders until the 95% CI half-width is small
 * and describes each result as a JSON row with full provenance. Failures are
 * results with a status and a reason, never crashes.
 *
 * After a failed render the session checks that its context still works.
 * When it does not (a sticky CUDA error such as an illegal address, or a
 * kernel that would not stop), the session is broken: with current drivers
 * only a new process can use the GPU again (see vpt_cu_is_sticky). By
 * default the session still tries an in-process reset and, when that fails,
 * vpt_evaluator_run returns -1; with recover_in_process = 0 (what the worker
 * process of harness/eval_worker.h uses) it returns the failed result, and
 * vpt_evaluator_broken() tells the caller to end the process. Code that
 * runs variants which may crash should use harness/eval_worker.h, which
 * runs this session in a child process and restarts it.
 *
 * Lifecycle: vpt_evaluator_create (opens the GPU; fails with VPT_EXIT_NO_GPU
 * semantics when there is none), vpt_evaluator_set_scene, any number of
 * vpt_evaluator_run, vpt_evaluator_destroy. The scene stays owned by the
 * caller and must outlive the session's use of it. */
#ifndef VPT_HARNESS_EVALUATOR_H
#define VPT_HARNESS_EVALUATOR_H

#include "codegen/config.h"
#include "harness/cuda_driver.h"
#include "harness/measure.h"
#include "harness/provenance.h"
#include "harness/results.h"
#include "scenes/scene.h"

#include <jansson.h>

typedef struct VptEvaluator VptEvaluator;

/* What a session is about to do, reported through the progress hook so that
 * a watcher (the worker's parent) can tell a long phase from a stuck one.
 * Every phase but COMPILE is bounded by the render watchdog (timeout_s, plus
 * the abort grace period) or is short. */
typedef enum {
    VPT_EVAL_PHASE_COMPILE,  /* waiting for NVRTC (or the cache): not bounded by timeout_s */
    VPT_EVAL_PHASE_LOAD,     /* loading a module, reading its resources */
    VPT_EVAL_PHASE_UPLOAD,   /* uploading a scene, allocating buffers */
    VPT_EVAL_PHASE_RENDER,   /* an untimed render: reference or warm-up */
    VPT_EVAL_PHASE_MEASURE,  /* one timed render */
    VPT_EVAL_PHASE_ROOFLINE  /* the roofline probe's launches */
} VptEvalPhase;
#define VPT_EVAL_PHASE_COUNT 6

/* "compile", "load", "upload", "render", "measure", "roofline"; "unknown". */
const char *vpt_eval_phase_name(int phase);

typedef struct {
    int device;                  /* GPU ordinal */
    const char *cache_dir;       /* NULL: default cubin cache */
    int compile_threads;         /* compiles at once (compile_pool.h): 0 default ($VPT_COMPILE_JOBS, else
                                  * cores - 1), 1 in this process, N in N worker processes */
    VptMeasurePolicy policy;
    double timeout_s;            /* per render (0: 60 s) */
    int gate;                    /* check every variant against the reference (default on) */
    int quiet;
    int recover_in_process;      /* on a broken context try vpt_gpu_reset (default on); see above */
    /* Called on the session's thread as each phase begins (NULL: none). */
    void (*progress)(void *ctx, VptEvalPhase phase);
    void *progress_ctx;
} VptEvaluatorOptions;

VptEvaluatorOptions vpt_evaluator_options_default(void);

typedef struct {
    VptConfig config;
    char canon[VPT_CONFIG_STR_MAX];
    VptStatus status;
    char reason[512];
    double compile_s;
    int from_cache;
    int registers, local_bytes, spill_stores, spill_loads, static_smem;
    long dynamic_smem;
    int blocks_per_sm;
    double occupancy_theoretical, occupancy_achieved, simd_efficiency;
    VptTimingStats time_ms;
    unsigned long long rays, steps, paths;
    double mrays_per_s, gsteps_per_s, mpaths_per_s;
    double image_rel_err;
    /* With a sun or an environment map: the variance of the config's
     * estimator (majorant, density, volume and transmittance) over the
     * scene's default estimator's (global majorant, f32, ratio tracking),
     * each the mean pixel variance of its naiveSK reference at this
     * workload: time_ms times it is the time to the default's error.
     * NaN without those lights or without the gate. */
    double equal_error_factor;
    double measure_s;
    int launches;
} VptEvalResult;

VptEvaluator *vpt_evaluator_create(const VptEvaluatorOptions *opt);
/* The same; on failure *no_gpu (may be NULL) is 1 when the GPU could not be
 * opened (no driver, no device, no such ordinal, no context: a CLI exits
 * VPT_EXIT_NO_GPU) and 0 for other failures (cache, threads, memory). */
VptEvaluator *vpt_evaluator_create_ex(const VptEvaluatorOptions *opt, int *no_gpu);
void vpt_evaluator_destroy(VptEvaluator *e);

/* NULL while the session works; after a failure that left the context
 * unusable, why (e.g. "sticky CUDA error CUDA_ERROR_ILLEGAL_ADDRESS (...)").
 * A broken session fails every later call; only destroy is allowed, and the
 * process should end (a new process can use the GPU). */
const char *vpt_evaluator_broken(const VptEvaluator *e);

const VptGpu *vpt_evaluator_gpu(const VptEvaluator *e);
const VptProvenance *vpt_evaluator_provenance(const VptEvaluator *e);

/* Uploads the scene, allocates buffers for the workload and, when the gate
 * is on, renders the reference variant (naiveSK). */
int vpt_evaluator_set_scene(VptEvaluator *e, const VptScene *s, const VptRenderSettings *r);
const VptParams *vpt_evaluator_params(const VptEvaluator *e);

/* Starts compiling configs in the background (order kept); run() picks the
 * results up. Optional: run() compiles what was not submitted. */
void vpt_evaluator_prefetch(VptEvaluator *e, const VptConfig *configs, int n);

/* Evaluates one config; the outcome is in *res (status ok or why not).
 * Returns -1 only when the session itself can no longer work (not set up,
 * out of memory, broken with in-process recovery failing: *res then still
 * describes the config's failure when it had one). */
int vpt_evaluator_run(VptEvaluator *e, const VptConfig *c, VptEvalResult *res);

/* Renders once with a config and returns the mean image (3 floats per
 * pixel, caller frees) and its result (no repetitions). */
float *vpt_evaluator_render(VptEvaluator *e, const VptConfig *c, VptEvalResult *res);

/* The reference variant's image of the current scene (owned by e). */
const float *vpt_evaluator_reference_image(const VptEvaluator *e);

/* The variance of each of that image's pixel means (3 floats per pixel,
 * owned by e): the statistical gate's error bars for the reference. */
const float *vpt_evaluator_reference_variance(const VptEvaluator *e);

/* Divergence-free step loop over the scene's textures: Gsteps/s (median).
 * coherent: 0 random rays, 1 one-voxel bundles sharing their distances (a
 * bound no unbiased tracer reaches), 2 the camera's 8x4 pixel tiles with
 * independent distances (kernels.cu.in, vpt_roofline). density: the
 * density texture's format the probe fetches from (as a config's density=).
 * majorant: 0, every step against the global majorant; C > 0, the probe
 * walks the majorant grid of C^3-voxel cells (as a config's majorant=gridC),
 * the grid and parameters a config of that estimator renders with
 * (vpt_gpu_scene_medium), its steps counted on the device as the tracer
 * counts them. *steps: the steps of one launch. */
int vpt_evaluator_roofline(VptEvaluator *e, int coherent, VptDensityFormat density, int majorant, VptTimingStats *ms,
                           double *gsteps_per_s, unsigned long long *steps);

/* A result row: {"kind":"result","schema":"vptune.result/1", provenance,
 * "scene" (its name), "volume" (vpt_scene_volume_json), "workload",
 * "config", "schedule", "status", "reason", "metrics"}.
 * New reference; NULL only when out of memory. */
json_t *vpt_eval_result_json(const VptEvaluator *e, const VptEvalResult *r);
/* The same row from what a process without the session knows: the
 * provenance, the parameter block and the render settings it came from. */
json_t *vpt_eval_result_row(const VptProvenance *pv, const VptParams *P, const VptRenderSettings *rs,
                            const VptScene *scene, const VptEvalResult *r);
json_t *vpt_workload_json(const VptParams *P, const VptRenderSettings *rs);

#endif
