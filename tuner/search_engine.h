/* The search engine as the strategies see it (internal to the search
 * module: tuner/search.c is the engine, tuner/strategy_<name>.c one
 * strategy each, tuner/search_starts.c where descents start).
 *
 * The engine owns the evaluations (tuner/search.h says what counts and what
 * is charged); a strategy only proposes members and reads objectives:
 *   vpt_search_hint   announces members it will evaluate next (the batches
 *                     a pool of several GPUs evaluates side by side);
 *   vpt_search_eval   takes one member's record (answered from memory when
 *                     this run already evaluated it); 0 when the search
 *                     must stop (e->res->stop says why).
 *
 * The wall clock: a time budget is charged the wall time a tune on
 * e->servers GPUs would take, simulated from the records' own cost_s: a
 * member is measured on the GPU that is free first, no earlier than the
 * moment the strategy announced it (or asked for it, unannounced), and the
 * strategy knows its result when that measurement ends, and no sooner than
 * the search has taken all but the pool's speculation bound of the records
 * before it (tuner/pool.h: lanes run at most two evaluations per lane ahead
 * of the search). So a GPU that the strategy gives nothing to do waits, and
 * its wait is charged. On one GPU this is the sum of the costs, as it
 * always was. In completion order (vpt_search_eval_first) the search takes
 * each record when its measurement ends, earliest first, so the pool's
 * bound never holds a GPU back. */
#ifndef VPT_TUNER_SEARCH_ENGINE_H
#define VPT_TUNER_SEARCH_ENGINE_H

#include "tuner/rng.h"
#include "tuner/search.h"

#include <stddef.h>

struct VptEvalPool;

/* Announcements go out in calls of at most this many members. */
#define VPT_SEARCH_HINT_MAX 64
/* How far ahead a sequence (and halving's screenings) is announced: enough
 * to keep a compile pool of one thread per core busy while the GPU
 * measures, announced again whenever less than half of it is left. */
#define VPT_SEARCH_LOOKAHEAD 256

#define VPT_SEARCH_MAX_SERVERS 256

/* A member the simulated clock has started on a GPU in completion order
 * (vpt_search_eval_first): its record is fetched, the strategy does not
 * know it before `end`. */
typedef struct {
    size_t member;
    double end;
    int fresh;
    VptEvalRecord rec;
} VptSearchRunning;

typedef struct {
    const VptSpace *space;
    size_t n_members;
    struct VptEvalPool *pool; /* o->pool, or a direct one over fn (tuner/pool.h) */
    VptCache *cache;
    const VptSearchOptions *o;
    VptRng rng;
    long *memo[2];         /* per fidelity: index into res->evals, or -1 */
    double *announced[2];  /* per fidelity: wall time when announced, or < 0 */
    size_t visited[2];
    VptSearchResult *res;
    size_t cap;
    double best_obj;
    size_t best_at;        /* counted evaluations when best_obj last improved */
    size_t widened_at;     /* counted evaluations at the last wide restart */
    size_t restarts_wide;  /* wide restarts so far (search.h: stagnation) */
    size_t stalls;
    int stopped;
    /* Members the strategy proposes at once: 1, or the pool's lanes under a
     * time budget (search.h: batch). */
    int width;
    /* The simulated wall clock (above): GPUs, when each is free again, and
     * the strategy's present. */
    int servers;
    double server_free[VPT_SEARCH_MAX_SERVERS];
    double now;
    /* when the search took each of its last servers x ahead records (a
     * ring, by the count taken; ahead: vpt_eval_pool_ahead_per_lane) */
    size_t taken, ahead;
    double *took_at;
    /* Completion order (vpt_search_eval_first, on several GPUs under a time
     * budget): the members announced at full fidelity, in order, not yet
     * started (window[win_pos..win_n)); those started, at most one per GPU. */
    int completion;
    size_t *window, win_n, win_pos, win_cap;
    unsigned char *queued;
    size_t nrun;
    VptSearchRunning *run;
    /* records fetched ahead of their start, at most servers x ahead */
    size_t nfetched;
    VptSearchRunning *fetched;
} VptSearchEngine;

/* Members in a random order, drawn lazily (incremental Fisher-Yates). */
typedef struct {
    size_t *perm;
    size_t n, pos;
} VptShuffle;

int vpt_shuffle_init(VptShuffle *s, size_t n);
/* The next member not yet evaluated at fidelity, or -1 when none is left. */
long vpt_shuffle_next_unvisited(VptShuffle *s, VptSearchEngine *e, int fidelity);
void vpt_shuffle_array(VptSearchEngine *e, size_t *a, size_t n);

/* A member with its objective, ordered by vpt_individual_cmp: objective
 * (+inf last), then member. */
typedef struct {
    size_t member;
    double obj;
} VptIndividual;
int vpt_individual_cmp(const void *a, const void *b);

/* 1 when m is among list[0..n). */
int vpt_search_listed(const size_t *list, size_t n, size_t m);

void vpt_search_stop(VptSearchEngine *e, VptStopReason why);
int vpt_search_eval(VptSearchEngine *e, size_t m, int fidelity, double *obj);
int vpt_search_visited(const VptSearchEngine *e, size_t m, int fidelity);
/* The record of member m at full fidelity, or NULL when the search has not
 * taken it yet. */
const VptEvalRecord *vpt_search_record(const VptSearchEngine *e, size_t m);
/* Completion order, at full fidelity: the record of whichever of
 * members[0..n) the search knows first. One already taken is answered at
 * once; otherwise the simulated GPUs run the announced members in the order
 * announced (members[] not announced are appended), each GPU the next one
 * when it is free, and the search takes each record when its measurement
 * ends, the earliest first, until one of members[] is among them (those
 * not in members[] are taken all the same: the strategy asks for them
 * later). Records come from the pool by vpt_eval_pool_get_first, so the
 * lanes are never held up by the order in which the search takes them.
 * *which: the index in members[]. 0 when the search must stop.
 * vpt_search_completion_begin turns it on (needs e->servers > 1); then
 * vpt_search_eval at full fidelity takes this path too. */
int vpt_search_completion_begin(VptSearchEngine *e);
int vpt_search_eval_first(VptSearchEngine *e, const size_t *members, size_t n, size_t *which, double *obj);
void vpt_search_hint(VptSearchEngine *e, const size_t *members, size_t n, int fidelity);

/* Fraction of the budget used, 0..1 (the larger of evaluations and
 * seconds), or -1 without a budget. */
double vpt_search_budget_used(const VptSearchEngine *e);

/* Evaluates order[0..n) at full fidelity, announcing it well ahead; ends
 * the search (done) when all are evaluated. */
void vpt_search_run_sequence(VptSearchEngine *e, const size_t *order, size_t n);

/* Evaluates list[0..n) in a random order after announcing it; the best
 * (first of equals) into *best / *best_obj (+inf and unchanged *best when
 * none is ok). 0 when the search must stop. */
int vpt_search_eval_all(VptSearchEngine *e, size_t *list, size_t n, size_t *best, double *best_obj);

/* Where descents start (tuner/search_starts.c; search.h says the rules):
 *   vpt_search_prior       the thesis' default variant's member, or -1;
 *   vpt_search_start_list  the start batch (prior, starts[], random_starts
 *                          random members, padded with random ones to the
 *                          width) into list (vpt_search_start_cap members);
 *                          0 without prior and starts;
 *   vpt_search_start       the member a descent starts at: the start batch's
 *                          best, measured together; the prior alone
 *                          unmeasured; without either the best of
 *                          max(4, width) random members; -1 when no member
 *                          is left, -2 when the search must stop;
 *   vpt_search_restart     where a descent starts again after a local
 *                          optimum: a perturbation of the incumbent, else a
 *                          random unvisited member; on stagnation a wide
 *                          restart. Unmeasured, except a wide restart at
 *                          width 1 (the best of a few random members). */
long vpt_search_prior(VptSearchEngine *e);
size_t vpt_search_start_cap(const VptSearchEngine *e);
size_t vpt_search_start_list(VptSearchEngine *e, VptShuffle *starts, size_t *list);
long vpt_search_start(VptSearchEngine *e, VptShuffle *starts);
long vpt_search_restart(VptSearchEngine *e, VptShuffle *starts, long incumbent);
/* 1 when a descent restarted at an objective of start_obj is not worth
 * descending from: at least o->prune times the incumbent's (search.h). */
int vpt_search_pruned(const VptSearchEngine *e, double start_obj, double incumbent_obj);
/* 1 when member's schedule is not worth a move, a restart or a start:
 * under the search's estimator, the caller's best record of that schedule
 * (VptSearchOptions.schedule_best) is at least prune x prune times its
 * best of any schedule. Why the square: a schedule that slow stays pruned
 * even if its best config were prune times faster than the ones measured,
 * and each move there costs a compile of its own
 * (docs/decisions/schedule-moves-pruned.md). */
int vpt_search_schedule_pruned(const VptSearchEngine *e, size_t member);
/* Appends to list[*n..) up to `want` members not yet evaluated and not in
 * list, drawn from the unvisited ones of starts; returns how many. */
size_t vpt_search_fill_random(VptSearchEngine *e, VptShuffle *starts, size_t *list, size_t *n, size_t want);

/* The strategies. */
void vpt_strategy_exhaustive_run(VptSearchEngine *e);
void vpt_strategy_random_run(VptSearchEngine *e);
void vpt_strategy_local_run(VptSearchEngine *e);
void vpt_strategy_annealing_run(VptSearchEngine *e);
void vpt_strategy_genetic_run(VptSearchEngine *e);
void vpt_strategy_halving_run(VptSearchEngine *e);

#endif
