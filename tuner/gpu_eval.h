/* The tuner's evaluator on a real GPU: a VptEvaluateFn over the harness'
 * evaluation session (harness/evaluator.h), with two fidelities and the
 * interleaved re-measurement of finalists.
 *
 * Fidelity 1 is the scene's workload; fidelity 0, the cheap one successive
 * halving screens with, is the same image at 1/8 of the samples per pixel
 * (at least 1). Every evaluation goes through the correctness gate. The cost
 * charged to the tune is the wall time the evaluation took (compile, when it
 * was not prefetched and cached, plus measuring).
 *
 * Lifecycle: vpt_gpu_eval_create opens the GPU (NULL with the message when
 * there is none); vpt_gpu_eval_destroy. The scene is borrowed. */
#ifndef VPT_TUNER_GPU_EVAL_H
#define VPT_TUNER_GPU_EVAL_H

#include "harness/evaluator.h"
#include "tuner/eval.h"

typedef struct VptGpuEval VptGpuEval;

/* *no_gpu tells a missing driver or GPU apart from other failures. */
VptGpuEval *vpt_gpu_eval_create(const VptEvaluatorOptions *opt, const VptScene *scene, const VptRenderSettings *rs,
                                int *no_gpu);
/* The same on one GPU among several: its worker processes are pinned to it
 * as CUDA_VISIBLE_DEVICES=visible would (harness/eval_worker.h,
 * VptWorkerSpec.visible_devices; NULL or "": not pinned, opt->device). */
VptGpuEval *vpt_gpu_eval_create_pinned(const VptEvaluatorOptions *opt, const char *visible, const VptScene *scene,
                                       const VptRenderSettings *rs, int *no_gpu);
void vpt_gpu_eval_destroy(VptGpuEval *g);

/* The provenance a tune cache is keyed by (GPU, driver, NVRTC, commit,
 * scene, workload). */
void vpt_gpu_eval_provenance(const VptGpuEval *g, VptTuneProvenance *out);
const VptProvenance *vpt_gpu_eval_harness_provenance(const VptGpuEval *g);

/* A VptEvaluateFn: ctx is the VptGpuEval. */
int vpt_gpu_eval_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out);

/* A VptRemeasureFn: measures the finalists again, round-robin over
 * VPT_REMEASURE_ROUNDS rounds (tuner/tune.h) so drifts of the GPU's clock
 * hit them alike, and reports each one's median over the rounds. */
int vpt_gpu_eval_remeasure(void *ctx, const VptConfig *configs, size_t n, VptEvalRecord *out);

/* A search prefetch hint: compile these in the background. */
void vpt_gpu_eval_prefetch(void *ctx, const VptConfig *configs, size_t n, int fidelity);

/* Copies a harness result into a tuner record. */
void vpt_eval_record_from_result(const VptEvalResult *r, int fidelity, VptEvalRecord *out);

#endif
