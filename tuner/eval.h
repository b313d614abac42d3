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
} VptEvalRecord;

/* The metric fields above, by JSON name, for I/O loops. */
typedef struct {
    const char *name;
    size_t offset; /* of a double in VptEvalRecord */
} VptMetricField;
extern const VptMetricField vpt_metric_fields[];
extern const int vpt_metric_field_count;

/* Config c, the given fidelity, status ok, empty reason and time, cost 0,
 * every metric NaN. */
void vpt_eval_record_init(VptEvalRecord *r, const VptConfig *c, int fidelity);

/* time_ms for an ok record with a finite positive time, else +inf. */
double vpt_eval_objective(const VptEvalRecord *r);

/* Writes the current UTC time, "2025-01-31T12:34:56Z", into buf. */
void vpt_timestamp_now(char *buf, size_t size);

/* An evaluator measures config c at a fidelity and fills *out (starting from
 * vpt_eval_record_init), whatever the config's fate: a config that fails to
 * compile or launch is a record with that status and a reason, and the call
 * returns 0. It returns -1 (with a message) only when the tune cannot go on
 * (the GPU was lost, the recording lacks the config, ...). It must set
 * cost_s: time budgets are charged from it. */
typedef int (*VptEvaluateFn)(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out);

/* Where results come from; a cache never mixes rows of two provenances. */
typedef struct {
    char gpu_name[128];
    char gpu_uuid[64];
    char driver[64];
    char nvrtc[32];
    char commit[64];
    char scene[64];
    int width, height, spp;
    uint64_t seed;
    int max_depth, rr_depth;
} VptTuneProvenance;

/* Compares the fields that decide whether rows may be mixed: GPU UUID,
 * commit, NVRTC version, scene and every workload field (the GPU name and
 * driver are informative only). Returns 0 when they match, else -1 with a
 * message "<field>: recorded '<a>', this run '<b>'". */
int vpt_tune_provenance_match(const VptTuneProvenance *recorded, const VptTuneProvenance *current);

/* ---- replay ------------------------------------------------------------
 *
 * A replay evaluator answers from a recorded run: a JSON-lines file of the
 * harness' result rows ({"kind":"result","schema":"vptune.result/1",...}, one
 * per evaluated config; other kinds of line are skipped). It keeps a
 * simulated clock and charges each answer's cost to it:
 *   - a config's compile_s is charged the first time the config is asked for
 *     (at any fidelity) since the last reset: the harness keeps compiled
 *     kernels in its cubin cache, so asking again costs only measure_s;
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
 * parse, and a config recorded twice at one fidelity keeps its first row.
 * Asking for a config the recording lacks is an error (-1). */
typedef struct VptReplay VptReplay;

VptReplay *vpt_replay_open(const char *path);
void vpt_replay_destroy(VptReplay *r);

/* A VptEvaluateFn; ctx is the VptReplay. */
int vpt_replay_evaluate(void *ctx, const VptConfig *c, int fidelity, VptEvalRecord *out);

/* Simulated seconds charged since the last reset. */
double vpt_replay_clock(const VptReplay *r);
/* Clock to 0, every config uncompiled again: a fresh tune. */
void vpt_replay_reset(VptReplay *r);
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
