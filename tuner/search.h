/* Search strategies over a VptSpace.
 *
 * Every strategy runs against the same engine (vpt_search_run), which owns
 * the evaluations:
 *   - a point already evaluated in this run (same config and fidelity) is
 *     answered from memory: free, not counted, not repeated;
 *   - otherwise the results cache (when given) is asked first; a cached row
 *     is used as if just measured: it counts as an evaluation and its
 *     recorded cost_s is charged (nothing when the caller says it paid for
 *     it already: VptSearchOptions.paid). Only then is the evaluator called, and its
 *     record appended to the cache before the strategy sees it; with a pool
 *     of several GPUs (VptSearchOptions.pool, tuner/pool.h) the record may
 *     have been evaluated ahead, and is taken all the same, in the
 *     strategy's order.
 * Strategies are deterministic functions of the seed and of the records they
 * receive, so a tune interrupted at any point and started again with the
 * same strategy, seed and budget on the same cache retraces its path from
 * the cache and continues where it stopped: no measurement lost, none
 * repeated (except the one a crash interrupted before it was written).
 *
 * Budget: evaluations (counted as above, any fidelity) and/or seconds, where
 * seconds are the wall time the evaluations take (compile + measure; the
 * replay evaluator's simulated clock, a real evaluator's measured cost): on
 * one GPU the sum of the charged cost_s; on several (a pool), the time the
 * GPUs take side by side, simulated from the same costs: each measurement
 * on the GPU free first, never before the strategy announced it, so that a
 * GPU left idle by the strategy is charged its wait (tuner/search_engine.h).
 * An evaluation starts only while both limits are unreached, so the last
 * one may overrun a time budget by its own cost. 0 means no limit; with no
 * limit at all a strategy runs until it has seen the whole space (exhaustive,
 * random, local search, successive halving) or, for annealing and the GA,
 * until its stall guard stops it (VPT_STOP_STALLED).
 *
 * Batches: the strategies propose `width` members at once, where width is
 * the pool's lanes under a time budget (without an evaluation budget) and 1
 * otherwise (VptSearchOptions.batch overrides it). Why: a wall-clock budget
 * is what users set, and with it more GPUs should buy more evaluations; a
 * strategy that proposes fewer members than there are lanes leaves GPUs
 * idle. With an evaluation budget more lanes only finish sooner, and the
 * path stays the one of one GPU (a width of 1 is the search as it ran on
 * one GPU); under a time budget on several lanes it is not the one-GPU
 * path. Local search is the strategy that uses the width (below); the
 * others already announce far ahead (docs/decisions/search-lanes.md).
 *
 * Best: the ok fidelity-1 record with the least time_ms; records of any
 * other status are never the best, and fidelity-0 times never compete.
 *
 * The prior: local search, annealing, the GA and halving start from the
 * thesis' default variant, regenerationSK (thread regeneration, block 256,
 * one path per thread, the compiler's register count; codegen/config.h), or
 * the member nearest to it when the space lacks it. It is the one point the
 * thesis recommends before any measurement, and it compiles in a fraction of
 * a second where the streaming and sorting kernels take seconds. no_prior
 * turns it off (to measure what it is worth: bin/tune-score --no-prior).
 *
 * The strategies (defaults in VptSearchOptions):
 *   exhaustive   every member in member order.
 *   random       uniform sampling without replacement.
 *   local        iterated local search with variable neighbourhood descent.
 *                A descent starts at the best of a start batch: the prior,
 *                the member nearest to each of starts[], and random_starts
 *                random members (without any of them: the best of 4 random
 *                members), measured together; with the prior alone and no
 *                random starts, at the prior. It moves by steepest descent:
 *                it measures all of a neighbourhood (announced together, in a
 *                random order) and moves to the best member if that
 *                improves. Neighbourhoods, in order: the parameter moves
 *                (every dimension but the schedule: vpt_space_neighbours_in);
 *                at their optimum, the schedule moves with their dependent
 *                parameters (vpt_space_schedule_moves); at the optimum of
 *                both, the caps lifted: the fastest few neighbours by a
 *                move of the kernel's code (not of the launch's shape)
 *                whose kernel cur's register bound held (its cap, or the
 *                block's launch bound), each with the next caps up
 *                (vpt_space_cap_lifted); an
 *                improvement in any of them starts over with the
 *                parameters. At the optimum of all three, the next descent
 *                starts from a perturbation of the best member so far (about two dimensions changed,
 *                vpt_space_mutate), or from a random unvisited member when a
 *                few perturbations land only on evaluated ones. With a batch
 *                width w above 1, 5w descents run side by side on several
 *                GPUs, 3w on one
 *                (tuner/strategy_local.c): each starts at a member of the
 *                start batch (filled with random members to one per
 *                descent), takes its announced list's records, steps, and
 *                announces its next list at once, so that the lanes always
 *                have the other descents' lists queued; a descent standing
 *                where another stands starts again. On several GPUs the
 *                search takes the records of all descents' lists in the
 *                order the GPUs finish them (vpt_search_eval_first), and a
 *                descent steps when its list is complete; on one GPU (an
 *                explicit batch) the descents take turns in a ring.
 *                Stagnation: when the best has not improved
 *                over the last `stagnation` evaluations (nor since the last
 *                wide restart), the next descent starts instead from the best
 *                of max(4, w) random unvisited members (a wide restart).
 *                Pruning: a restart whose objective is at least `prune`
 *                times the best so far is not descended from; the next
 *                restart follows at once (docs/decisions/search-prune.md).
 *                Runs until every member has been evaluated.
 *                Why: steepest rather than first improvement, because the
 *                neighbourhood's compiles overlap anyway and the largest
 *                improvement is the one least likely to be measurement noise;
 *                parameters before schedules, because a parameter move keeps
 *                the kernel (cheap to compile, small effect) while a schedule
 *                move may need a costly compile; dependent parameters with
 *                the schedule, because a parameter the old schedule ignored
 *                (the threshold under thread regeneration) has no value
 *                worth carrying over; pruning, random starts and wide restarts,
 *                because a start learned on one GPU (the thesis' prior, other
 *                scenes' winners) can lead every seed into the same basin on
 *                another GPU (docs/tuner-search.md).
 *   annealing    simulated annealing from the prior (without it: as local):
 *                a move (a dimension drawn uniformly among those that can
 *                move, then one of its moves; the schedule's with their
 *                dependent parameters) is accepted when better, else with
 *                probability exp(-(t_new/t_cur - 1) / T); T falls
 *                geometrically from sa_t0 to sa_tmin over what is left of
 *                the budget (the larger used fraction of evaluations and
 *                seconds), or by sa_alpha per evaluation without a budget.
 *                The walk restarts (reheat) when T reaches sa_tmin or when
 *                every move from the current point has been seen and none
 *                taken, from where local search restarts. Failed configs are
 *                never accepted (from a failed start any move is).
 *   genetic      a generational GA: population ga_population (the prior and
 *                random members at first), tournament selection of 2,
 *                uniform crossover (vpt_space_crossover), per-dimension
 *                mutation rate ga_mutation (vpt_space_mutate), elitism of 2.
 *                A generation is bred whole, then measured; a child equal to
 *                an already evaluated member or to a sibling is mutated again
 *                (a few tries) to spend the budget on new points.
 *   halving      multi-fidelity successive halving, asynchronous (ASHA, Li et
 *                al. 2020): members are screened at fidelity 0 (the prior
 *                first, then in a random order), and whenever one ranks
 *                among the best floor(n / sh_eta) of the n screened so far
 *                (failures never) and has no full measurement yet, the best
 *                such one is measured at fidelity 1 instead of screening
 *                another. So about one screened member in sh_eta is promoted
 *                (a little more: one that drops out of the top stays
 *                promoted), the first after sh_eta screenings: full-fidelity results from
 *                the start, whatever the budget, where fixed brackets of 27
 *                had none before the 28th evaluation. Runs until every
 *                member has been screened. */
#ifndef VPT_TUNER_SEARCH_H
#define VPT_TUNER_SEARCH_H

#include "tuner/cache.h"
#include "tuner/eval.h"
#include "tuner/space.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    VPT_STRATEGY_EXHAUSTIVE,
    VPT_STRATEGY_RANDOM,
    VPT_STRATEGY_LOCAL,
    VPT_STRATEGY_ANNEALING,
    VPT_STRATEGY_GENETIC,
    VPT_STRATEGY_HALVING,
    VPT_STRATEGY_COUNT
} VptStrategy;

/* "exhaustive", "random", "local", "annealing", "genetic", "halving". */
const char *vpt_strategy_name(VptStrategy s);
int vpt_strategy_parse(const char *name, VptStrategy *out);

typedef enum {
    VPT_STOP_BUDGET,      /* evaluation or time budget reached */
    VPT_STOP_DONE,        /* the strategy saw everything it would look at */
    VPT_STOP_STALLED,     /* the stall guard: too many proposals in a row that
                             were all already evaluated */
    VPT_STOP_INTERRUPTED, /* *interrupt became non-zero */
    VPT_STOP_ERROR        /* the evaluator or the cache failed (see message) */
} VptStopReason;
const char *vpt_stop_reason_name(VptStopReason r);

/* Progress after each counted evaluation. */
typedef struct {
    size_t evals;                  /* counted evaluations so far */
    double seconds;                /* charged seconds so far */
    size_t cached;                 /* how many of them came from the cache */
    const VptEvalRecord *last;     /* the evaluation just counted */
    const VptEvalRecord *best;     /* best so far, NULL while none */
} VptSearchProgress;

typedef struct {
    VptStrategy strategy;
    uint64_t seed;
    size_t max_evals;   /* 0: no limit */
    double max_seconds; /* 0: no limit */
    /* The wall-clock side of a time budget on real GPUs: no evaluation
     * starts once vpt_seconds() (base/progress.h) reads this (0: none). The
     * charged clock simulates the GPUs side by side from the records'
     * costs; on several GPUs it can run behind the real one (lanes waiting
     * for the search or the compiles), and the user's budget is wall time. */
    double wall_deadline;
    /* A caller's own limit beside the two above, asked before each
     * evaluation starts with the seconds charged so far: non-zero stops the
     * search as a reached budget does (VPT_STOP_BUDGET). The tune driver's
     * holds its whole budget: the searches before this one, the screening
     * after it and the finish (tuner/tune.h). NULL: none. */
    int (*over_budget)(void *user, double seconds);
    void *over_budget_user;
    /* A caller's record of the schedules measured so far, asked by local
     * search before its schedule moves and by the starts and restarts: the
     * best objective of the records the caller took whose estimator
     * (majorant, density, volume) is c's and whose schedule is `schedule`
     * (vpt_config_schedule_index; -1: any schedule), +inf when none. A
     * member of a schedule whose best is at least prune x prune times the
     * best of any is left out (vpt_search_schedule_pruned). NULL: none is. */
    double (*schedule_best)(void *user, const VptConfig *c, int schedule);
    void *schedule_best_user;
    /* A caller's record of what it has paid for already, asked of each
     * record taken from the cache: non-zero charges it nothing. The tune
     * driver's answers for the records its earlier searches and screenings
     * took, so that a tune pays for a measurement once however many of its
     * searches visit that config. NULL: every cached row is charged its
     * recorded cost_s (above). */
    int (*paid)(void *user, const VptEvalRecord *rec);
    void *paid_user;

    /* Strategy knobs; vpt_search_options_init sets the defaults.
     * ga_population was scored on the recorded spaces (tuner/score.h); the
     * others are still provisional (chosen on synthetic landscapes). */
    int ga_population;   /* 10: at the budgets tunes run with (tens to a few
                            hundred evaluations) 20 leaves too few
                            generations; on the recorded fixtures
                            (bin/tune-score, 400 seeds) 20 scored +0.23 and
                            +0.13 by evaluations, 10 +0.35 and +0.32 */
    double ga_mutation;  /* 1 / VPT_DIM_SCHEDULE_COUNT: one dimension per child on
                            average */
    double sa_t0;        /* 0.1: a 10% worse move is first taken with p 0.37 */
    double sa_tmin;      /* 0.001 */
    double sa_alpha;     /* 0.995 per evaluation when max_evals is 0 */
    int sh_eta;          /* 3 */
    /* Local search, annealing, the GA and halving start from the thesis'
     * default variant (see above); 1: from random members instead (for
     * measuring what the prior is worth). */
    int no_prior;
    /* A portfolio of starts (e.g. the best configs of other scenes: the
     * transfer prior of bin/tune-score --leave-one-out): local search and
     * annealing measure the prior (unless no_prior) and the member nearest
     * to each of starts[0..n_starts) first, announced together, and descend
     * from the best of them; at most VPT_SEARCH_MAX_STARTS are used. NULL /
     * 0: the prior alone, as above. */
    const VptConfig *starts;
    size_t n_starts;

    /* Random members in local search's and annealing's start batch, beside
     * the prior and starts[]; vpt_search_options_init:
     * VPT_SEARCH_RANDOM_STARTS. */
    int random_starts;
    /* Local search and annealing restart wide (above) after this many
     * counted evaluations without a better best; 0: never.
     * vpt_search_options_init: VPT_SEARCH_STAGNATION. */
    size_t stagnation;
    /* Local search does not descend from a restart whose objective is at
     * least prune times the best so far's (it restarts again at once);
     * 0: it always descends. vpt_search_options_init: VPT_SEARCH_PRUNE. */
    double prune;
    /* Members proposed at once (above: batches); 0: the pool's lanes under
     * a time budget without an evaluation budget, else 1. */
    int batch;
    /* Local search with a batch of 1 stops ("search complete") once this
     * many descents have reached their local optimum (a pruned start is no
     * descent); 0: no limit. The tune's estimator race gives each rival one
     * descent (tuner/tune.c). */
    size_t max_descents;

    /* Proposals in a row that are all already evaluated before the search
     * gives up (VPT_STOP_STALLED); 0: 100000. */
    size_t stall_limit;

    /* A hint, never a request: configs the strategy is about to evaluate at
     * `fidelity`, in order, so that an evaluator can compile them in
     * background threads while the GPU measures. Configs already evaluated in
     * this run or found in the cache are left out, and no more than the
     * evaluation budget has left (per call). Every strategy but annealing
     * announces every config before evaluating it: exhaustive and random
     * search their order 256 ahead, local search each start and
     * neighbourhood, the GA a generation at a time, halving its screenings
     * 256 ahead and each promotion; annealing, one step at a time, announces
     * nothing. Setting it never changes the search. NULL: no hints. With a
     * pool (below) the announcements go to the pool instead, whose idle GPUs
     * evaluate them ahead: the batches of a tune on several GPUs. */
    void (*prefetch)(void *user, const VptConfig *configs, size_t n, int fidelity);
    void *prefetch_user;

    /* The estimator (codegen/config.h: majorant, density) every member is
     * evaluated with: the space holds schedules, and the tune driver
     * chooses the estimator (tuner/estimators.h). It is stamped onto each
     * member before the cache, the evaluator and prefetch see it, so rows
     * say what was measured. vpt_search_options_init: global, f32, which
     * stamps nothing: the members keep their own (in the schedule space,
     * global f32; in a recorded joint space, tuner/space.h, each its own). */
    int majorant;
    VptDensityFormat density;
    /* The path order (codegen/config.h: paths) stamped likewise when it is
     * not the thesis' sample order: the tune driver screens it beside the
     * estimator (tuner/tune.c). vpt_search_options_init: sample, which
     * stamps nothing. */
    VptPathOrder paths;
    /* The transmittance estimator of a scene with a sun (codegen/config.h:
     * transmittance), stamped likewise when it is not none; the driver
     * screens it at equal error (tuner/tune.c, screen_transmittance).
     * vpt_search_options_init: none, which stamps nothing (the evaluator
     * renders a sun's scene with ratio tracking then). */
    VptTransmittance transmittance;

    /* Where records come from when not NULL: a pool of evaluators on several
     * GPUs (tuner/pool.h; it takes the announcements in place of prefetch,
     * and a time budget is charged wall time: cost_s over its GPUs). NULL:
     * the cache, then fn in this thread, as a tune on one GPU. */
    struct VptEvalPool *pool;

    /* Polled between evaluations (e.g. set by a SIGINT handler); NULL: none. */
    const volatile sig_atomic_t *interrupt;
    void (*progress)(void *user, const VptSearchProgress *p);
    void *progress_user;
} VptSearchOptions;

void vpt_search_options_init(VptSearchOptions *o);

#define VPT_SEARCH_MAX_STARTS 16

/* The defaults of random_starts, stagnation and prune: scored on the
 * recorded spaces with every scene held out in turn
 * (docs/decisions/search-stagnation.md, docs/decisions/search-prune.md).
 * Random starts and stagnation restarts are off on one lane: the recorded
 * spaces cannot choose them (none stagnates) or choose none. */
#define VPT_SEARCH_RANDOM_STARTS 0
#define VPT_SEARCH_STAGNATION 0
#define VPT_SEARCH_PRUNE 2.0

/* One point of the best-so-far trace, after each counted evaluation. */
typedef struct {
    size_t evals;
    double seconds;
    double best_ms; /* +inf while no ok fidelity-1 record */
} VptTracePoint;

typedef struct {
    int found;                 /* best is set */
    VptEvalRecord best;
    VptEvalRecord *evals;      /* the counted evaluations, in order */
    VptTracePoint *trace;      /* trace[i] after evals[i] */
    size_t n_evals;
    double seconds;            /* charged seconds in all */
    size_t cached;             /* counted evaluations answered by the cache */
    size_t evaluated;          /* evaluator calls */
    VptStopReason stop;
} VptSearchResult;

/* Runs o->strategy on space with evaluator fn(ctx) and the cache (NULL:
 * none). Fills *out (free it with vpt_search_result_free) in every case, a
 * partial result included. Returns 0, or -1 when stopped by an error (the
 * message says which; the evaluations made so far are in *out and in the
 * cache). */
int vpt_search_run(const VptSpace *space, VptEvaluateFn fn, void *ctx, VptCache *cache,
                   const VptSearchOptions *o, VptSearchResult *out);
void vpt_search_result_free(VptSearchResult *r);

/* The best-so-far of a result after its first k counted evaluations (k >= 1;
 * k beyond the end: the final best), and at charged time t. +inf when none. */
double vpt_search_best_at_evals(const VptSearchResult *r, size_t k);
double vpt_search_best_at_seconds(const VptSearchResult *r, double t);

#endif
