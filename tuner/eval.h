/* Evaluations: what measuring one config yields, who produces it (an
 * evaluator), and the replay evaluator that answers from a recorded run.
 *
 * A record's status names the first gate the config failed, with Kernel
 * Tuner's / KTT's words: "ok", "compile" (NVRTC failed), "launch_limits"
 * (registers, shared memory or block size exceed what the GPU can launch,
 * found before any launch), "runtime" (a launch or a CUDA call failed),
 * "invalid_output" (the image failed the correctness gate), "timeout".
 * Only ok records have a meaningful time; the objective of every other
 * status is +inf, so a failed config is never the best.
 *
 * Fidelity: 1 is the full workload of the tune, 0 a cheap one (fewer samples
 * per pixel, chosen by the harness) whose times rank configs but are not
 * comparable with full times. Best-so-far and winners use fidelity 1 only. */
#ifndef VPT_TUNER_EVAL_H
#define VPT_TUNER_EVAL_H

#include "codegen/config.h"
#include "harness/results.h"
#include "tuner/space.h"

#include <stddef.h>
#include <stdint.h>

/* VptStatus and its names: harness/results.h. */

#define VPT_REASON_MAX 256
#define VPT_TIMESTAMP_MAX 32

/* One evaluation. Metrics that were not measured are NaN (and are left out
 * of JSON). The metric fields mirror the "metrics" object of the harness'
 * result rows (vptune.result/1), with the same names and units. */
typedef struct {
    VptConfig config;
    int fidelity;                  /* 0 cheap, 1 full */
    VptStatus status;
    char reason[VPT_REASON_MAX];   /* why not ok; for ok, "" or a note */
    double cost_s;                 /* seconds this evaluation cost the tune
                                      (compile + measure, as charged) */
    char time[VPT_TIMESTAMP_MAX];  /* completion time, ISO-8601 UTC */

    double time_ms;                /* median kernel time of the render */
    double time_ms_spread;         /* spread of the repetitions, ms */
    double reps;                   /* repetitions measured */
    double mrays_per_s, gsteps_per_s, mpaths_per_s;
    double rays, steps, paths;
    double registers, spill_bytes, shared_bytes;
    double occupancy_theoretical, occupancy_achieved, simd_efficiency;
    double compile_s, measure_s;
    double image_rel_err;
    double equal_error_factor;     /* with a sun: the variance of the config's estimator over
                                      the scene's default estimator's (harness/evaluator.h);
                                      NaN without */

    /* Who measured it, in a tune on several GPUs (tuner/pool.h): the GPU's
     * UUID, its host, and the MPI rank (-1: not under MPI). by_gpu "" (every
     * record of a tune on one GPU): the GPU the cache header names.
     * Informative only: never part of a lookup, a comparison or a rank. */
    char by_gpu[80];
    char by_host[64];
    int by_rank;
} VptEvalRecord;

/* The metric fields above, by JSON name, for I/O loops. */
typedef struct {
    const char *name;
    size_t offset; /* of a double in VptEvalRecord */
} VptMetricField;
extern const VptMetricField vpt_metric_fields[];
extern const int vpt_metric_field_count;

/* Config c, the given fidelity, status ok, empty reason and time, cost 0,
 * every metric NaN, measured by nobody in particular (by_gpu "", by_rank -1). */
void vpt_eval_record_init(VptEvalRecord *r, const VptConfig *c, int fidelity);

/* time_ms for an ok record with a finite positive time, else +inf; with a
 * sun, times equal_error_factor: the time to the default estimator's error,
 * so that estimators compare at equal error (records of one estimator share
 * the factor, so their order is their times'). */
double vpt_eval_objective(const VptEvalRecord *r);

/* The order a tune ranks records in (qsort over VptEvalRecord): the
 * objective, then the config's canonical text, so that ties rank the same
 * in every run (the finalists, tuner/tune.h; their finish, tuner/finish.h). */
int vpt_eval_record_rank_cmp(const void *a, const void *b);

/* Writes the current UTC time, "2025-01-31T12:34:56Z", into buf. */
void vpt_timestamp_now(char *buf, size_t size);

/* An evaluator's record made safe to cache and to rank: the config and
 * fidelity asked for, a finite cost, a valid status, no "ok" without a
 * time, and a timestamp. */
void vpt_eval_record_sanitize(VptEvalRecord *r, const VptConfig *c, int fidelity);

/* An evaluator measures config c at a fidelity and fills *out (starting from
 * vpt_eval_record_init), whatever the config's fate: a config that fails to
 * compile or launch is a record with that status and a reason, and the call
 * returns 0. It returns -1 (with a message) only when the tune cannot go on
 * (the GPU was lost, the recording lacks the config, ...). It must set
 * cost_s: time budgets are charged from it. */
typedef int (*VptEvaluateFn)(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out);

/* One evaluation, the pool's "evaluate" step (tuner/pool.h): *out
 * initialized, fn(ctx, c, fidelity, out), then sanitized
 * (vpt_eval_record_sanitize: the timestamp filled in). Returns fn's -1. */
int vpt_eval_run(VptEvaluateFn fn, void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out);

/* An evaluator that keeps state across evaluations (the replay's simulated
 * clock) told that record r, an evaluation of this same run made before it
 * was interrupted, was taken from the cache (VPT_CACHE_RETRACED,
 * tuner/cache.h) instead of evaluated: it brings its state to where the
 * evaluation had left it. */
typedef void (*VptRetraceFn)(void *ctx, const VptEvalRecord *r);

/* Where results come from; a cache never mixes rows of two provenances. */
typedef struct {
    char gpu_name[128];
    char gpu_uuid[64];
    char driver[64];
    char nvrtc[32];
    char commit[64];
    char scene[VPT_SCENE_NAME_MAX];
    int width, height, spp;
    uint64_t seed;
    int max_depth, rr_depth;
    /* The scene's "volume" (harness/evaluator.h: grid, source format, the
     * file's SHA-256) as compact JSON; "" in caches and rows written before
     * rows carried it. */
    char volume[1024];
} VptTuneProvenance;

/* Compares the fields that decide whether rows may be mixed: GPU UUID,
 * commit, NVRTC version, scene, every workload field and, when both sides
 * name it, the volume's grid, format, SHA-256 and resampling (so a file
 * that changed under the same name is not resumed; the GPU name, the
 * driver and the volume's path are informative only). Returns 0 when they
 * match, else -1 with a message "<field>: recorded '<a>', this run '<b>'". */
int vpt_tune_provenance_match(const VptTuneProvenance *recorded, const VptTuneProvenance *current);

/* ---- replay ------------------------------------------------------------
 *
 * A replay evaluator answers from a recorded run: a JSON-lines file of the
 * harness' result rows ({"kind":"result","schema":"vptune.result/1",...}, one
 * per evaluated config; other kinds of line are skipped).
 *   - fidelity 1 is answered from the row with "fidelity":1 (the default);
 *   - fidelity 0 is answered from the row with "fidelity":0 when the
 *     recording has one. Otherwise it is DERIVED from the full row: the same
 *     status, time_ms and time_ms_spread scaled by the cheap fraction (1/8
 *     by default: the cheap workload's share of the full one), measure_s
 *     scaled by it too, compile_s unchanged. This is an optimistic model (the
 *     cheap workload ranks configs exactly as the full one), used only until
 *     recordings carry real fidelity-0 rows; the record's reason says
 *     "derived fidelity 0".
 * Every row must share one provenance (vpt_tune_provenance_match), configs must
 * parse, and a config recorded twice at one fidelity must be the same
 * measurement both times (vpt_rows_same_measurement; the first row is
 * used): two different ones are refused, the message naming both rows as
 * file:line, as the cache does (tuner/cache.h says why).
 * Asking for a config the recording lacks is an error (-1).
 *
 * The simulated clock: what the real tuner's wall clock would read. The
 * harness that made the recordings (harness/evaluator.h) compiled in a pool
 * of threads, one per core, in one process (the pool now compiles in worker
 * processes, harness/compile_pool.h, which the PARALLEL model below
 * describes), fed in order by the strategies' prefetch hints, while the GPU measures one
 * config after another; an evaluation waits for its own compile (queued at
 * the end when no hint announced it), then measures. The replay simulates
 * that: a pool of `threads` compile threads (VPT_REPLAY_COMPILE_THREADS: the
 * 16 cores of the machine the fixtures were recorded on) takes compiles first
 * come first served; vpt_replay_prefetch (a VptSearchOptions prefetch hook)
 * queues the hinted configs at the current clock, an evaluation queues its
 * own config when no hint did. Compiles of hinted configs that are never
 * evaluated still occupy the pool, as in the harness. A config compiles once
 * per tune (the cubin cache), whatever the fidelity. An evaluation costs
 * (cost_s) the wait for its compile, if not done yet, plus its measure_s,
 * and the clock advances by that.
 *
 * How long a compile takes: c, the median recorded compile_s of the config's
 * schedule, in one of two models (vpt_replay_set_compile_model):
 *   VPT_COMPILE_SERIAL (the default): a compile is a front part of
 *     VPT_REPLAY_COMPILE_FRONT_S (or c, if less) that runs in parallel on its
 *     thread, then a body of (c - front) / threads that runs through one
 *     section shared by the whole pool, in order: one body at a time;
 *   VPT_COMPILE_PARALLEL: compiles run side by side on the threads, each
 *     lasting c.
 * Why the serial model (the evidence is in
 * docs/decisions/compile-worker-processes.md): the recordings were made
 * with every config queued at once into the harness' pool of threads in one
 * process, so each compile_s is the wall time of a compile sharing the
 * machine with the rest of the pool, and
 *   - NVRTC serializes most of a compile within a process, so threads do not
 *     make it parallel: compiles that start together end one after another,
 *     as through a lock, not side by side. The recorded compile_s of
 *     consecutive streaming configs climb in steady steps, which the serial
 *     model reproduces, with the recording's wall clock; the parallel model
 *     matches the wall clock (that run was bound by measuring) but not the
 *     climb, charging a lone compile a full pool's contention;
 *   - a compile's first part, with nothing before it in the pool, does run
 *     side by side: the front (VPT_REPLAY_COMPILE_FRONT_S);
 *   - c is per schedule, because a row's compile_s says more about when it
 *     ran than about the config: its place in the climb, or another run
 *     altogether for rows marked compile_cached.
 * The serial model's throughput with a full pool equals the recording's; with
 * few compiles in flight it charges what a lone compile took, where the
 * parallel model would charge a full pool's contention to every compile. */
typedef struct VptReplay VptReplay;

VptReplay *vpt_replay_open(const char *path);
void vpt_replay_destroy(VptReplay *r);

/* A VptEvaluateFn; ctx is the VptReplay. */
int vpt_replay_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out);

/* The prefetch hook for VptSearchOptions (user: the VptReplay): queues the
 * compiles of the configs (see above); configs not recorded are ignored. */
void vpt_replay_prefetch(void *ctx, const VptConfig *configs, size_t n, int fidelity);

/* A VptRetraceFn (ctx: the VptReplay): the evaluation of r's config at r's
 * fidelity simulated as vpt_replay_evaluate would (its compile queued if no
 * hint queued it, the clock advanced by its cost), its record discarded:
 * the cache's row is the one the tune takes. A resumed replayed tune that
 * retraces its cache (tuner/cache.h) so reaches the kill point with the
 * clock and compile pool of the uninterrupted run, and charges what that
 * run charged. A config the recording lacks changes nothing. */
void vpt_replay_retrace(void *ctx, const VptEvalRecord *r);

/* A VptRemeasureFn (ctx: the VptReplay): the finish's re-measurement
 * simulated as a GPU's makes it (tuner/gpu_eval.h): VPT_REMEASURE_ROUNDS
 * rounds over configs[0..n), each measurement its recorded measure_s after
 * the wait for its compile if it has not compiled (on a GPU the cubin cache
 * holds what the tune measured); out[i] is the recorded row of configs[i].
 * -1 when the recording lacks one of them. */
int vpt_replay_remeasure(void *ctx, const VptConfig *configs, size_t n, VptEvalRecord *out);

/* Simulated seconds charged since the last reset. */
double vpt_replay_clock(const VptReplay *r);
/* Clock to 0, every config uncompiled again and the pool idle: a fresh tune. */
void vpt_replay_reset(VptReplay *r);

/* The compile model (above) and the pool's threads,
 * 1..VPT_REPLAY_MAX_COMPILE_THREADS; the serial model also takes `threads` as
 * the concurrency the recording was made with (the same harness on the same
 * machine). Resets the replay. Fails (unchanged) on a value out of range. */
typedef enum { VPT_COMPILE_SERIAL, VPT_COMPILE_PARALLEL } VptCompileModel;
#define VPT_REPLAY_COMPILE_THREADS 16
#define VPT_REPLAY_MAX_COMPILE_THREADS 1024
#define VPT_REPLAY_COMPILE_FRONT_S 0.25
int vpt_replay_set_compile_model(VptReplay *r, VptCompileModel model, int threads);
/* The model, and the threads into *threads (may be NULL). */
VptCompileModel vpt_replay_compile_model(const VptReplay *r, int *threads);
void vpt_replay_set_cheap_fraction(VptReplay *r, double fraction);

const VptTuneProvenance *vpt_replay_provenance(const VptReplay *r);
/* The recorded full-fidelity rows, in file order (config recorded twice: the
 * first). Pointers stay valid until destroy. */
size_t vpt_replay_count(const VptReplay *r);
const VptEvalRecord *vpt_replay_record(const VptReplay *r, size_t i);
/* The full-fidelity record of c, or NULL. */
const VptEvalRecord *vpt_replay_find(const VptReplay *r, const VptConfig *c);

/* The space of the recorded full-fidelity configs
 * (vpt_space_create_from_configs); *rejected as there. Caller destroys. */
VptSpace *vpt_replay_space(const VptReplay *r, size_t *rejected);

#endif
