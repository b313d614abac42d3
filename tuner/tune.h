/* The tune driver: one call that runs a search with a live progress line,
 * optionally re-measures the finalists, and prints the top-k table, so that
 * bin/tune is flag parsing around it.
 *
 *   VptTuneOptions o;
 *   vpt_tune_options_init(&o);
 *   o.space = space; o.evaluate = harness_evaluate; o.evaluate_ctx = h;
 *   o.cache = cache; o.search.strategy = VPT_STRATEGY_LOCAL; o.search.max_seconds = 600;
 *   o.progress = stderr; o.report = stdout;
 *   VptTuneResult r;
 *   if (vpt_tune_run(&o, &r)) ...;   // r holds what was found even then
 *   ... r.winner ...
 *   vpt_tune_result_free(&r);
 *
 * The progress line (after each counted evaluation, at most ten times a
 * second on a terminal, every ten seconds otherwise, and once at the end):
 *   [tune local] 123 evals (40 cached) 4m05s | ETA 5m55s | best 1.2345 ms streamingSK maxrregcount=64,...
 * ETA is the budget left: seconds left of a time budget, or evaluations left
 * times the mean cost so far, whichever comes first; for exhaustive and random
 * search without a budget, the unseen part of the space.
 *
 * Finalists: with a remeasure callback, the top_k ok full-fidelity configs
 * (distinct: a config the searches took twice, from the cache or as a
 * rival's start, counts once, at its better record) are measured again
 * together (the harness interleaves them, so drifts of clock and
 * temperature hit all alike) and ranked by the new times; the
 * winner is the best re-measured ok config. Re-measurements are not written
 * to the cache (they would repeat its keys); they are in the result.
 *
 * A time budget (search.max_seconds, and search.wall_deadline on a GPU)
 * covers the whole tune: its searches and screenings, and its finish (the
 * finalists' re-measurement, then the references the caller measures:
 * tuner/finish.h). Before each evaluation starts, the finish is predicted
 * from the records so far, and the search stops once its charged seconds
 * plus that prediction reach the budget (and on the wall clock, once the
 * deadline less the prediction has passed). The screenings get what is
 * left once the finish is set aside. Why: a user who asks for 90 s expects
 * the tune to end near 90 s, and where a render costs a large share of a
 * second the finish is a large share of the budget
 * (docs/decisions/finish-within-the-budget.md). An evaluation budget counts
 * evaluations only: the finish is not one. The report says how the budget
 * went: "budget B s: S s charged to the search, F s set aside for the
 * finish (...)". */
#ifndef VPT_TUNER_TUNE_H
#define VPT_TUNER_TUNE_H

#include "tuner/cache.h"
#include "tuner/estimators.h"
#include "tuner/finish.h"
#include "tuner/search.h"

#include <stdio.h>

/* Measures configs[0..n) again, interleaved, filling out[i] for configs[i]
 * (full fidelity); -1 only when the tune cannot go on. */
typedef int (*VptRemeasureFn)(void *ctx, const VptConfig *configs, size_t n, VptEvalRecord *out);

/* The rounds a GPU's remeasure measures each finalist in
 * (vpt_gpu_eval_remeasure; a replay's simulates the same): three, so that
 * each finalist's median over them stands when one round is disturbed. */
#define VPT_REMEASURE_ROUNDS 3

/* The share of a time budget the finish may take at most (tuner/finish.h,
 * max_s): the finalists re-measured are the best ones that fit it beside
 * the references. A policy, not a measurement: the search keeps at least
 * three quarters of what the user gave, however costly one re-measurement
 * of the scene is, and a scene whose finish is short keeps all its
 * finalists (docs/decisions/finish-within-the-budget.md). */
#define VPT_FINISH_SHARE 0.25

typedef struct {
    const VptSpace *space;
    VptEvaluateFn evaluate;   /* unused when search.pool is set: the pool evaluates */
    void *evaluate_ctx;
    VptCache *cache;          /* NULL: no cache */
    VptSearchOptions search;  /* its progress callback is the driver's own */
    int top_k;                /* table rows and finalists; default 10 */
    FILE *progress;           /* NULL: no progress line */
    FILE *report;             /* NULL: no table */
    VptRemeasureFn remeasure; /* NULL: rank by the search's measurements */
    void *remeasure_ctx;
    /* Measurements of each finalist remeasure makes: its share of the
     * finish (tuner/finish.h). vpt_tune_options_init: VPT_REMEASURE_ROUNDS. */
    int remeasure_rounds;
    /* The configs the caller measures once each after vpt_tune_run returns
     * a winner (bin/tune: the two references), for the finish the budget
     * covers; reference_compiled[i] (NULL: none) 1 when the evaluator has
     * compiled references[i] before the search. */
    const VptConfig *references;
    const int *reference_compiled;
    size_t n_references;
    /* The estimators to choose from (tuner/estimators.h: screened on the
     * search's start config, stamped onto the search, screened again on its
     * best); n_estimators 0: the search's own (search.majorant/density),
     * no screening. */
    const VptEstimator *estimators;
    size_t n_estimators;
    /* The most rivals the estimator stage races, one descent each, before
     * the rest of the budget goes to one (tuner/tune.c, estimator_stage),
     * the rival from a faster regeneration family counted; 1: no race and
     * no family measured, the screening's fastest has it all.
     * vpt_tune_options_init: VPT_ESTIMATORS_RIVALS_MAX. */
    int rivals;
} VptTuneOptions;

void vpt_tune_options_init(VptTuneOptions *o);

typedef struct {
    VptSearchResult search;
    VptEvalRecord *top;    /* best first: the finalists as ranked (re-measured
                              when a remeasure callback was given) */
    size_t n_top;
    int have_winner;
    VptEvalRecord winner;  /* top[0] */
    /* The finish as predicted when the search ended (tuner/finish.h): what
     * the budget set aside for it. */
    VptFinishPrediction finish;
    double search_wall_s;    /* wall seconds from vpt_tune_run's start to the search's end */
    double remeasure_wall_s; /* wall seconds of the finalists' re-measurement (0: none) */
} VptTuneResult;

/* Returns 0, or -1 on an evaluator, cache or remeasure failure (message set;
 * *out holds what was found before it). */
int vpt_tune_run(const VptTuneOptions *o, VptTuneResult *out);
void vpt_tune_result_free(VptTuneResult *r);

/* The table vpt_tune_run prints, for any records (ok fidelity-1 ones are
 * listed, best first, one row per config at its best record, at most k). When a record carries an
 * equal_error_factor (a sun's shadow rays), the rank is the time to equal
 * error and an eq_err_ms column shows it beside time_ms. */
void vpt_tune_print_top(FILE *f, const VptEvalRecord *recs, size_t n, int k);

#endif
