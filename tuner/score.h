/* Scoring search strategies on a recorded space, after the methodology of
 * Willemsen, van Nieuwpoort and van Werkhoven for comparing auto-tuning
 * optimization algorithms.
 *
 * What is compared: the best-found time as a function of the budget, in
 * counted evaluations and in charged (simulated) seconds, averaged over
 * seeds (at least 20 for any claim), against
 *   - the optimum: the least time of any member of the recorded space, and
 *   - a calculated random-search baseline: the exact expected best of random
 *     sampling without replacement after k evaluations, from the recorded
 *     distribution of all members. Failed configs are draws too and never
 *     the best. A best that does not exist yet (nothing ok drawn, or no
 *     full-fidelity result yet) counts as the mean ok time, what one random
 *     ok config is expected to take, for the baseline and the strategies
 *     alike.
 *     On the time axis, k(t) = max(1, round(t / c)) with c the mean cost of
 *     evaluating a member (compile + measure).
 * Standardized performance at budget x: P(x) = (b(x) - f(x)) / (b(x) - opt),
 * f the strategy's mean best-so-far, b the baseline: random search scores 0
 * in expectation, finding the optimum scores 1, worse than random is
 * negative. (Where b(x) = opt, P is 1 if f(x) = opt, else 0.)
 * The score is the mean of P over the budget range, i.e. the normalized area
 * between the curves: over every k = 1..K for evaluations, over
 * VPT_SCORE_TIME_POINTS evenly spaced times in (0, T] for time.
 * The budget: K is where the calculated random search is expected to have
 * come `cutoff` (0.95 by default) of the way from the space's median to the
 * optimum (vpt_score_cutoff_budget), T = K * c; strategies that use
 * cheaper evaluations (successive halving at fidelity 0) get more of them
 * within T. Evaluation-axis runs stop at K evaluations, time-axis runs at T
 * seconds, so each seed runs twice. */
#ifndef VPT_TUNER_SCORE_H
#define VPT_TUNER_SCORE_H

#include "tuner/eval.h"
#include "tuner/search.h"
#include "tuner/space.h"

#include <stddef.h>

#define VPT_SCORE_TIME_POINTS 100

/* The recorded distribution of a space. */
typedef struct {
    double *sorted;     /* each member's full-fidelity objective, ascending,
                           +inf for failures (n values) */
    size_t n, n_ok;
    double optimum;     /* sorted[0] */
    double worst_ok;    /* sorted[n_ok - 1] */
    double no_result;   /* value of a best that does not exist yet: the mean
                           of the ok times */
    double median;      /* median of the ok times */
    double mean_cost_s; /* mean compile_s + measure_s per member */
} VptSpaceStats;

/* Stats of the members of space as recorded in replay; fails when a member is
 * not recorded or none is ok. Free with vpt_space_stats_free. */
int vpt_space_stats(const VptSpace *space, const VptReplay *replay, VptSpaceStats *out);
void vpt_space_stats_free(VptSpaceStats *st);

/* Expected best of k draws without replacement (k >= 1; k > n: n). */
double vpt_random_expected_best(const VptSpaceStats *st, size_t k);

/* The least k whose expected random best is within (1 - cutoff) of the way
 * from the median to the optimum; cutoff in (0, 1). */
size_t vpt_score_cutoff_budget(const VptSpaceStats *st, double cutoff);

typedef struct {
    VptStrategy strategy;
    int seeds;
    size_t budget_evals;     /* K */
    double budget_seconds;   /* T */
    double score_evals;      /* mean P over k = 1..K */
    double score_seconds;    /* mean P over the time points */
    double mean_best_ms;     /* mean best at K evaluations (no_result for a
                                seed that found nothing ok) */
    double random_best_ms;   /* calculated random baseline at K */
    double optimum_ms;
    double found_optimum;    /* fraction of seeds whose best at K is the optimum */
    double *curve_evals;     /* K: mean best-so-far after k = 1..K */
    double *curve_seconds;   /* VPT_SCORE_TIME_POINTS: at T * j / points */
} VptScore;

/* Runs base->strategy (its knobs from base, seeds base->seed + 0..seeds-1)
 * on the replay, restricted to space, with budget_evals evaluations (0: the
 * cutoff budget at 0.95), and scores it. The replay is reset before each
 * run. Free with vpt_score_free. */
int vpt_score_strategy(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st,
                       const VptSearchOptions *base, int seeds, size_t budget_evals, VptScore *out);
void vpt_score_free(VptScore *s);

#endif
