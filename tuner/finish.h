/* The finish of a tune, and what it is predicted to cost.
 *
 * After its search a tune measures again (tuner/tune.h, tools/tune.c):
 *   1. the finalists, the top_k configs of its ok full-fidelity records
 *      best first, as vpt_tune_run ranks them (a config the searches took
 *      twice is there once, at its better record), each `rounds` times (the
 *      remeasure callback);
 *   2. when there is a finalist, each reference config once (bin/tune:
 *      naiveSK and regenerationSK-thread at the scene's workload, for the
 *      "vs naiveSK" columns).
 * A time budget covers that finish: the search stops once the seconds it
 * charged plus the finish predicted from the records so far reach the
 * budget, so that search and finish end together near the budget (the
 * tune driver, tuner/tune.c; docs/decisions/finish-within-the-budget.md).
 *
 * The prediction uses only the tune's own records, never a constant of a GPU:
 *   - one repetition of a record's measurement costs its renders, the
 *     warm-up and the timed ones, (reps + 1) x time_ms, plus what every
 *     measurement costs beside its renders (loading the module, uploading
 *     the medium, the gate's check of the image): the overhead, the least
 *     measure_s - (reps + 1) x time_ms over the ok full-fidelity records
 *     (0 when that is negative). Not each record's own measure_s: it also
 *     holds what a repetition does not do again (the wait for its compile;
 *     the gate's reference render for the first config of each estimator),
 *     which would set aside seconds the finish never spends. A record
 *     without reps or a time repeats as its measure_s (else its cost_s);
 *   - the finalists: rounds x the sum of their repetitions;
 *   - a reference: one repetition of its own record when the tune measured
 *     it; else one repetition of the nearest record (the fewest config
 *     fields apart; on a tie the costlier), which traces the reference's
 *     paths when the two share the estimator (the gate demands the same rays
 *     and steps of every config of an estimator), plus its compile unless
 *     the plan says the evaluator holds it compiled: the mean compile_s of
 *     the records of its schedule that compiled (compile_s > 0), else of all
 *     records that compiled, else nothing. A config the tune measured is
 *     compiled (the cubin cache), so its repetition compiles nothing.
 * The budget check asks before each evaluation starts, as the budget's own
 * does, and the record that evaluation brings may join the finalists: while
 * they are fewer than top_k it does when it is ok, so next_s holds what it
 * is expected to add, rounds x the mean repetition of the records so far,
 * and the check sets that aside too. Once there are top_k, a new finalist
 * takes the place of the last one, whose repetition it is expected to
 * match, so nothing more is set aside, and the finish may differ from the
 * prediction by what the two repetitions differ. */
#ifndef VPT_TUNER_FINISH_H
#define VPT_TUNER_FINISH_H

#include "tuner/eval.h"

#include <stddef.h>

/* References a plan may list. */
#define VPT_FINISH_MAX_REFS 4

typedef struct {
    size_t top_k;      /* finalists at most */
    double max_s;      /* > 0: the finish's seconds at most: the finalists are the first
                          of the top_k that fit it beside the references (the best one
                          always), so that a costly scene's finish cannot take the search's
                          budget; 0: all top_k */
    int rounds;        /* measurements of each finalist; 0: none */
    VptConfig refs[VPT_FINISH_MAX_REFS];
    int ref_compiled[VPT_FINISH_MAX_REFS]; /* 1: the evaluator compiled it before the search */
    size_t n_refs;
} VptFinishPlan;

typedef struct {
    double total_s;       /* finalists_s + refs_s */
    double finalists_s;   /* their rounds */
    double refs_s;        /* the references, compiles included */
    size_t n_finalists;   /* re-measured: the first n_finalists of the top_k (max_s) */
    int capped;           /* 1: max_s left finalists out */
    size_t n_refs;        /* references predicted (0 without a finalist) */
    size_t refs_estimated; /* of them, without a record of their own */
    double overhead_s;    /* per repetition beside its renders */
    double next_s;        /* what the next record is expected to add (above) */
} VptFinishPrediction;

/* The records a tune has taken, as the finish needs them: kept as they
 * come (vpt_finish_tracker_add, in any order), predicted at any time in
 * O(top_k + references). */
typedef struct VptFinishTracker VptFinishTracker;

/* NULL only when out of memory. The plan is copied. */
VptFinishTracker *vpt_finish_tracker_create(const VptFinishPlan *plan);
void vpt_finish_tracker_destroy(VptFinishTracker *t);
void vpt_finish_tracker_add(VptFinishTracker *t, const VptEvalRecord *r);
/* The finish that would follow if the search stopped now; total_s. */
double vpt_finish_tracker_predict(const VptFinishTracker *t, VptFinishPrediction *out);

/* The same for records recs[0..n) at once: a tracker fed with each. */
double vpt_finish_predict(const VptFinishPlan *plan, const VptEvalRecord *recs, size_t n, VptFinishPrediction *out);

/* One repetition of r's measurement with the given overhead (above). */
double vpt_finish_repetition_s(const VptEvalRecord *r, double overhead_s);

#endif
