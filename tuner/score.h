/* Scoring search strategies on a recorded space, after the methodology of
 * Willemsen, van Nieuwpoort and van Werkhoven for comparing auto-tuning
 * optimization algorithms.
 *
 * What is compared: the best-found time as a function of the budget, in
 * counted evaluations and in charged (simulated) seconds, averaged over
 * seeds (at least 20 for any claim; random search's own score on a 336-config
 * space still strays by +-0.2 at 20 seeds, +-0.1 at 100), against
 *   - the optimum: the least time of any member of the recorded space, and
 *   - a random-search baseline. On the evaluation axis it is calculated:
 *     the exact expected best of random sampling without replacement after
 *     k evaluations, from the recorded distribution of all members. Failed
 *     configs are draws too and never the best. A best that does not exist
 *     yet (nothing ok drawn, or no full-fidelity result yet) counts as the
 *     mean ok time, what one random ok config is expected to take, for the
 *     baseline and the strategies alike.
 *     On the time axis there is no such formula: how many evaluations
 *     random search completes by time t depends on which configs it drew
 *     (slow kernels take long to measure, some schedules long to compile),
 *     and its first result waits for a compile. The baseline there is
 *     random search itself, run on the replay's simulated clock: the mean
 *     best-so-far at t over VPT_SCORE_BASELINE_RUNS runs (seeds from
 *     VPT_SCORE_BASELINE_SEED, apart from the seeds scored), no result yet
 *     counting as above.
 * Standardized performance at budget x: P(x) = (b(x) - f(x)) / (b(x) - opt),
 * f the strategy's mean best-so-far, b the baseline: random search scores 0
 * in expectation (on the time axis, up to the baseline's own sampling
 * error), finding the optimum scores 1, worse than random is negative.
 * (Where b(x) = opt, P is 1 if f(x) = opt, else 0.)
 * The score is the mean of P over the budget range, i.e. the normalized area
 * between the curves: over every k = 1..K for evaluations, over
 * VPT_SCORE_TIME_POINTS evenly spaced times in (0, T] for time.
 * The budget: K is where the calculated random search is expected to have
 * come `cutoff` (0.95 by default) of the way from the space's median to the
 * optimum (vpt_score_cutoff_budget), T = K * c with c the mean wall time
 * per member of exhaustive search on the simulated clock; strategies that use
 * cheaper evaluations (successive halving at fidelity 0) get more of them
 * within T. Evaluation-axis runs stop at K evaluations, time-axis runs at T
 * seconds (or at the target time below when later), so each seed runs
 * twice. Every run gets the replay's prefetch hook, so compiles overlap as
 * the strategy's hints allow.
 *
 * The practical target (issue 4): the best found within
 * VPT_SCORE_TARGET_TIME (5%) of the exhaustive search's wall time reaches
 * VPT_SCORE_TARGET_QUALITY (98%) of the optimum's throughput, i.e. a time
 * <= optimum / 0.98. Reported as the fraction of seeds that reach it. */
#ifndef VPT_TUNER_SCORE_H
#define VPT_TUNER_SCORE_H

#include "tuner/eval.h"
#include "tuner/search.h"
#include "tuner/space.h"

#include <stddef.h>

#define VPT_SCORE_TIME_POINTS 100
#define VPT_SCORE_BASELINE_RUNS 2000
#define VPT_SCORE_BASELINE_SEED 0x100000000ull
#define VPT_SCORE_TARGET_TIME 0.05
#define VPT_SCORE_TARGET_QUALITY 0.98
/* The tune's default budget (tools/tune.c) and the issue-21 target: the best
 * a run finds within it is within 2% of the recorded optimum's time. */
#define VPT_SCORE_DEFAULT_BUDGET_S 90.0
#define VPT_SCORE_DEFAULT_TOLERANCE 0.02

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
    double serial_s;    /* sum of compile_s + measure_s: the space done one
                           config after another, nothing overlapped */
    double exhaustive_s; /* simulated wall time of exhaustive search with its
                            hints (compiles overlapping measurements) */
    double mean_cost_s; /* exhaustive_s / n: wall time per member */
} VptSpaceStats;

/* Stats of the members of space as recorded in replay (which it runs an
 * exhaustive search on, and leaves reset); fails when a member is not
 * recorded or none is ok. Free with vpt_space_stats_free. */
int vpt_space_stats(const VptSpace *space, VptReplay *replay, VptSpaceStats *out);
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
    double target_seconds;   /* VPT_SCORE_TARGET_TIME x the exhaustive wall time */
    double reached_target;   /* fraction of seeds whose best at target_seconds
                                is within VPT_SCORE_TARGET_QUALITY of the
                                optimum's throughput */
    double target_rel_throughput; /* mean over seeds of optimum / best at
                                     target_seconds (0 for none found) */
    double median_to_quality; /* median over seeds of the simulated seconds
                                 until the best first has 98% of the
                                 optimum's throughput (+inf: not within the
                                 time-axis run) */
    double default_seconds;  /* VPT_SCORE_DEFAULT_BUDGET_S */
    double within_at_default; /* fraction of seeds whose run with the default
                                 time budget ends with a best within
                                 VPT_SCORE_DEFAULT_TOLERANCE of the optimum
                                 (a third run per seed, budget 90 s) */
    double default_rel_throughput; /* mean of optimum / best of those runs */
    double *curve_evals;     /* K: mean best-so-far after k = 1..K */
    double *curve_seconds;   /* VPT_SCORE_TIME_POINTS: at T * j / points */
    double *baseline_seconds; /* VPT_SCORE_TIME_POINTS: b at the same times */
} VptScore;

/* Runs base->strategy (its knobs from base, seeds base->seed + 0..seeds-1)
 * on the replay, restricted to space, with budget_evals evaluations (0: the
 * cutoff budget at 0.95), and scores it. The replay is reset before each
 * run. Free with vpt_score_free. */
int vpt_score_strategy(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st,
                       const VptSearchOptions *base, int seeds, size_t budget_evals, VptScore *out);
void vpt_score_free(VptScore *s);

/* Scores recorded evaluation orders instead of a strategy (another tuner's
 * runs, e.g. Kernel Tuner's in its simulation mode on the same space, so that
 * both are scored by this one scorer): runs[i][0..lengths[i]) is run i, each
 * config a member of space (else an error naming it). A run is replayed in
 * its order, each config counted at its first occurrence (repeats are free,
 * as Kernel Tuner's cache makes them), charged by the replay's clock without
 * hints (a config compiles when it is evaluated, as in Kernel Tuner's
 * sequential runner), until the axis' limit; a run that ends earlier keeps
 * its best. out->strategy is left 0: the caller names the runs. */
int vpt_score_sequences(const VptSpace *space, VptReplay *replay, const VptSpaceStats *st,
                        const VptConfig *const *runs, const size_t *lengths, int n_runs, size_t budget_evals,
                        VptScore *out);

#endif
