/* The evaluation pool: where a search's records come from, on one GPU or on
 * many.
 *
 * Every record a search or the estimator stage needs goes through
 * vpt_eval_pool_get, and one evaluation flows one way, each module called
 * once, in this order, none calling back into another:
 *
 *   pool --> cache lookup ------> evaluate -----> row encode ---------> cache append
 *            vpt_cache_lookup     vpt_eval_run     vpt_rows_record_line   vpt_cache_append
 *            (tuner/cache.c)      (tuner/eval.c)   (tuner/rows.c)         (tuner/cache.c)
 *
 * A hit ends the flow at the lookup. The lookup also tells a row that a
 * resumed tune retraces (VPT_CACHE_RETRACED, tuner/cache.h) from any other
 * hit; on a direct pool the evaluator is then told (vpt_eval_pool_set_retrace).
 * On a lanes pool the lane evaluates (vpt_eval_run's steps, in its thread
 * or rank), and the pool, in the caller's thread, sanitizes the record, then
 * encodes and appends it. The cache never encodes and the rows module never
 * writes: the key (vpt_cache_key) is the cache's own.
 *
 * A pool has one of two shapes:
 *
 *   direct (vpt_eval_pool_direct): a tune on one GPU, exactly as vptune
 *     always ran it. get() answers from the cache, else calls the evaluator
 *     in the caller's thread and appends its record to the cache; announce()
 *     passes the hints to the evaluator's prefetch (compile ahead).
 *
 *   lanes (vpt_eval_pool_create): several evaluators side by side: the
 *     lanes of this process (tuner/lanes.h: one thread and one GPU each) and
 *     those of the other MPI ranks (tuner/mpi.h), seen alike through
 *     VptTransport. This is the one code path of distribution, whatever
 *     carries the work: local lanes talk to their GPU worker processes over
 *     the worker protocol (harness/wire.h), remote lanes through MPI
 *     messages.
 *
 * How a search uses many GPUs without changing: the strategies already
 * announce, before evaluating them, the configs they will evaluate next
 * (VptSearchOptions.prefetch: exhaustive and random search their order, local
 * search each neighbourhood, the GA each generation, halving its screenings;
 * tuner/search.h). Those announcements are the batches. A lanes pool queues
 * every announced config, gives each to a lane round-robin (that lane
 * compiles it ahead), and while the search waits for the record it asked
 * for, idle lanes evaluate the next announced ones. With an evaluation
 * budget, or on one lane, the search takes its records one at a time, in
 * its own order, so its path, its records and its winner are those of the
 * same search on one GPU; only the wall time shrinks. Under a time budget
 * on several lanes, local search (the default) runs several descents side
 * by side and takes their records in the order they finish
 * (vpt_eval_pool_get_first), so its path is not that of one GPU: more GPUs
 * buy more evaluations (tuner/search.h: batch). Annealing, which announces
 * nothing, gains nothing.
 *
 * Speculation is bounded: no more than two evaluations per lane are in
 * flight or finished-but-not-taken, and no more than the search's remaining
 * evaluation budget (get's `wanted`). With an evaluation budget, exhaustive,
 * random, the GA and local search take every announced config in the order
 * announced, so nothing is evaluated that one GPU would not have evaluated;
 * halving may leave a screening or two it announced untaken when its budget
 * ends, and with a time budget up to two per lane may finish after the
 * search stopped. Such records are real measurements: they are written to
 * the cache (a longer tune on the same cache uses them) but not counted.
 *
 * The cache stays the one source of truth, with one writer: the pool, in
 * the caller's thread, appends each record (durably, tuner/cache.h) the
 * moment its event arrives, whichever lane or rank measured it, before the
 * search takes it. A kill of any process, or of all, loses no finished
 * evaluation, and the same command resumes. Each record of a lanes pool
 * names the GPU (UUID), host and MPI rank that measured it (VptEvalRecord
 * by_gpu, by_host, by_rank). Configs that have a row in the cache, reached
 * by a retrace or not (vpt_cache_has), are never announced to a lane: a
 * config is evaluated once per cache.
 *
 * GPUs take turns: lanes whose GPUs have the same UUID (two MPI ranks on one
 * GPU, or a replay's simulated GPU shared by several ranks) never run jobs
 * at the same time, so that one measurement never shares a GPU with another
 * and times stay honest; each still compiles its own announced configs
 * meanwhile. Time budgets count wall time: with G distinct GPUs measuring
 * side by side, an evaluation is charged cost_s / G (vpt_eval_pool_gpus).
 *
 * Lost lanes: a lane whose evaluator fails (a GPU lost, a rank that died or
 * went silent) is reported on stderr and takes no more work; the config it
 * was evaluating is queued again, once: lost a second time, it is recorded
 * as a runtime failure naming both losses. When no lane is left, get fails
 * for a config not yet measured; a record that finished before, or one in
 * the cache, is still returned: a search that ends there keeps what the
 * lanes measured for it before they were lost. After the cache failed to
 * take a record, get fails for every config.
 *
 * Only identical GPUs are mixed: vpt_lanes_check_identical refuses lanes
 * whose GPU name, driver or NVRTC version (or build) differ from lane 0's.
 * Lane 0 is this process's first lane; the finalists are re-measured on it
 * (vpt_eval_pool_call), so the winner's time is one GPU's.
 *
 * Everything here runs in the caller's thread. */
#ifndef VPT_TUNER_POOL_H
#define VPT_TUNER_POOL_H

#include "tuner/cache.h"
#include "tuner/eval.h"
#include "tuner/lanes.h"

#include <stddef.h>
#include <stdio.h>

typedef struct VptEvalPool VptEvalPool;

typedef void (*VptPrefetchFn)(void *user, const VptConfig *configs, size_t n, int fidelity);

/* One GPU, in this thread: fn(ctx), the cache (may be NULL), prefetch hints
 * (may be NULL). NULL only when out of memory. */
VptEvalPool *vpt_eval_pool_direct(VptEvaluateFn fn, void *ctx, VptCache *cache, VptPrefetchFn prefetch,
                                  void *prefetch_user);

/* Over this process's lanes (their lane 0 is the pool's lane 0) and, when
 * remote is not NULL, the other ranks' lanes. The lanes must be identical
 * (vpt_lanes_check_identical, checked by the caller, which can say more).
 * cache may be NULL. The pool borrows everything. */
VptEvalPool *vpt_eval_pool_create(VptLanes *local, const VptTransport *remote, VptCache *cache);

/* A direct pool's evaluator keeps state across evaluations (the replay's
 * clock): fn(ctx, row) is called for each row a resumed tune retraces
 * (tuner/cache.h), in order, so that the state is that of the uninterrupted
 * tune (vpt_replay_retrace). Ignored on a lanes pool, whose lanes keep
 * their own. */
void vpt_eval_pool_set_retrace(VptEvalPool *p, VptRetraceFn fn, void *ctx);

/* Drains (vpt_eval_pool_drain) and frees. NULL is fine. */
void vpt_eval_pool_destroy(VptEvalPool *p);

/* Lanes (1 for a direct pool) and distinct GPUs among them. */
int vpt_eval_pool_lanes(const VptEvalPool *p);
int vpt_eval_pool_gpus(const VptEvalPool *p);

/* 1 when announcements are used: a lanes pool, or a direct one with a
 * prefetch hook. */
int vpt_eval_pool_wants_hints(const VptEvalPool *p);

/* Configs the caller will ask for next, in that order (see above). Configs
 * already queued, in flight, done or in the cache are ignored. */
void vpt_eval_pool_announce(VptEvalPool *p, const VptConfig *configs, size_t n, int fidelity);

/* The record of (c, fidelity): *fresh 1 when it was evaluated for this
 * caller (now, or ahead of the request), 0 when it came from the cache
 * (a retraced row too: not evaluated again).
 * wanted: how many records (this one included) the caller may still take,
 * SIZE_MAX without a limit; it bounds speculation. The record is already in
 * the cache (a fresh one was sanitized, vpt_eval_record_sanitize, and
 * appended): the caller must not append it. Returns 0, or -1 with the
 * message when the cache failed or no lane is left. */
int vpt_eval_pool_get(VptEvalPool *p, const VptConfig *c, int fidelity, size_t wanted, VptEvalRecord *out,
                      int *fresh);

/* The record of whichever of configs[0..n) (all at fidelity) is ready
 * first: one in the cache or finished ahead, else the first a lane
 * finishes. configs[0] is asked for as by vpt_eval_pool_get; the others run
 * as announced configs do (speculation, on the lane that compiled them
 * ahead; queued when not announced). *which: its index. The others stay
 * queued, in flight or finished for a later call; a direct pool (or
 * n == 1) takes configs[0]. Otherwise as vpt_eval_pool_get. Why: a search
 * that can use any of several results need not wait on one slow
 * evaluation while finished ones hold the speculation bound, so the lanes
 * keep running ahead of it. */
int vpt_eval_pool_get_first(VptEvalPool *p, const VptConfig *configs, size_t n, int fidelity, size_t wanted,
                            VptEvalRecord *out, size_t *which, int *fresh);

/* The speculation bound: evaluations per lane in flight or finished but
 * not taken (see above). */
int vpt_eval_pool_ahead_per_lane(void);

/* The full-fidelity record of c as the tune's screenings take it
 * (tuner/estimators.c, tuner/tune.c): vpt_eval_pool_get without a bound on
 * speculation, and a fresh record's cost over the pool's GPUs added to
 * *seconds (what the budget is charged: the pool measures on its GPUs side
 * by side); so is a row a resumed tune retraces (its own evaluation before
 * the interruption, charged as then); any other record from the cache
 * costs nothing. Returns as vpt_eval_pool_get. */
int vpt_eval_pool_get_charged(VptEvalPool *p, const VptConfig *c, VptEvalRecord *out, double *seconds);

/* Waits for the evaluations in flight and writes them; forgets what was
 * queued. Call it when the caller will ask for nothing more of what it
 * announced. 0, or -1 when writing failed. */
int vpt_eval_pool_drain(VptEvalPool *p);

/* Runs fn(lane 0's evaluator, arg) in lane 0's thread, serving the other
 * lanes and ranks meanwhile (an MPI rank must keep hearing from rank 0);
 * returns fn's value, its message kept. A direct pool runs fn(ctx, arg)
 * here. */
int vpt_eval_pool_call(VptEvalPool *p, int (*fn)(void *evaluator, void *arg), void *arg);

/* One line per lane: who it is and how many evaluations it measured. */
void vpt_eval_pool_print_lanes(const VptEvalPool *p, FILE *f);

/* "rank 1 on node2, GPU 0 (GPU-1c2...)", or "GPU 1 (GPU-...)" without MPI. */
void vpt_lane_describe(const VptLaneInfo *l, char *buf, size_t size);

/* 0 when lanes 1..n-1 measure on GPUs identical to lane 0's: the same GPU
 * name, driver and NVRTC version, from the same build (commit); -1 with a
 * message naming the first lane that differs, the field, and both values. */
int vpt_lanes_check_identical(const VptLaneInfo *lanes, int n);

#endif
