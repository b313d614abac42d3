/* An evaluation session: one GPU, one scene, one workload. It evaluates
 * configurations the way every vptune measurement is made:
 *   compile (NVRTC, cached, in parallel threads ahead of the GPU)
 *   -> load and read resources (launch_limits before any launch)
 *   -> warm-up render, checked against the reference variant (naiveSK, same
 *      seed: identical counters, image equal up to summation order)
 *   -> timed renders until the 95% CI half-width is small
 * and describes each result as a JSON row with full provenance. Failures are
 * results with a status and a reason, never crashes; after a sticky CUDA
 * error the session resets the context and reloads the scene by itself.
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

typedef struct {
    int device;                  /* GPU ordinal */
    const char *cache_dir;       /* NULL: default cubin cache */
    int compile_threads;         /* 0: all cores */
    VptMeasurePolicy policy;
    double timeout_s;            /* per render (0: 60 s) */
    int gate;                    /* check every variant against the reference (default on) */
    int quiet;
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
    double measure_s;
    int launches;
} VptEvalResult;

VptEvaluator *vpt_evaluator_create(const VptEvaluatorOptions *opt);
void vpt_evaluator_destroy(VptEvaluator *e);

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
 * Returns -1 only when the session itself can no longer work. */
int vpt_evaluator_run(VptEvaluator *e, const VptConfig *c, VptEvalResult *res);

/* Renders once with a config and returns the mean image (3 floats per
 * pixel, caller frees) and its result (no repetitions). */
float *vpt_evaluator_render(VptEvaluator *e, const VptConfig *c, VptEvalResult *res);

/* The reference variant's image of the current scene (owned by e). */
const float *vpt_evaluator_reference_image(const VptEvaluator *e);

/* Divergence-free step loop over the scene's textures: Gsteps/s (median). */
int vpt_evaluator_roofline(VptEvaluator *e, int coherent, VptTimingStats *ms, double *gsteps_per_s,
                           unsigned long long *steps);

/* A result row: {"kind":"result","schema":"vptune.result/1", provenance,
 * "scene", "workload", "config", "schedule", "status", "reason", "metrics"}. */
json_t *vpt_eval_result_json(const VptEvaluator *e, const char *scene, const VptEvalResult *r);
json_t *vpt_workload_json(const VptParams *P, int max_depth, int rr_depth);

#endif
