/* Iterated local search with variable neighbourhood descent; on several
 * lanes, one descent per lane side by side (contract in tuner/search.h:
 * local). */
#include "base/error.h"
#include "tuner/search_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parameter moves: every dimension but the schedule. */
#define PARAM_DIMS (VPT_SPACE_ALL_DIMS & ~(1u << VPT_DIM_SCHEDULE))

/* The parameter moves of cur, and where cur's register cap does not bind,
 * the cap just below the registers its kernel used (vpt_space_register_cap:
 * the domain's steps from a cap that does not bind change nothing, or,
 * from "no cap", fall to the smallest cap, far below any kernel's count, so
 * a descent could never reach the cap that pays). */
static size_t parameter_moves(const VptSearchEngine *e, size_t cur, size_t *nb)
{
    size_t n = vpt_space_neighbours_in(e->space, cur, PARAM_DIMS, nb, VPT_SPACE_MAX_NEIGHBOURS);
    const VptEvalRecord *r = vpt_search_record(e, cur);
    const long cap = r ? vpt_space_register_cap(e->space, cur, r->registers) : -1;
    if (cap >= 0 && !vpt_search_listed(nb, n, (size_t)cap)) nb[n++] = (size_t)cap;
    return n;
}

/* The moves that change a kernel's code, and so what each lane holds: every
 * parameter but the launch's shape (block, grid, threshold) and the cap
 * itself, which leave the registers a kernel wants as they are. */
#define LIFT_DIMS \
    (PARAM_DIMS & ~((1u << VPT_DIM_MAXRREGCOUNT) | (1u << VPT_DIM_BLOCK) | (1u << VPT_DIM_GRID) | (1u << VPT_DIM_THRESHOLD)))

/* How many of cur's capped neighbours get their cap lifted, the fastest
 * first, and by how many places of the cap's domain each (1 .. LIFT_STEPS):
 * at most LIFT_BASES x LIFT_STEPS members per local optimum, so the widening
 * costs a few evaluations where a descent has stopped anyway. */
#define LIFT_BASES 4
#define LIFT_STEPS 2

/* The caps lifted around a local optimum: cur's neighbours by a move of
 * LIFT_DIMS that kept cur's register bound (its cap, or the block's launch
 * bound: vpt_space_register_bound) and whose kernel it held (registers at
 * the bound, their records'), the LIFT_BASES fastest, each with the next
 * LIFT_STEPS caps up (vpt_space_cap_lifted). Why: such a move was measured
 * with its registers cut, so a basin two moves away (cooperative flights and
 * the larger cap they need) sits behind a slower first step that no one-move
 * descent takes, whatever the GPU's register file or the scene. */
static size_t caps_lifted(const VptSearchEngine *e, size_t cur, size_t *nb)
{
    size_t pm[VPT_SPACE_MAX_NEIGHBOURS], base[LIFT_BASES], nbase = 0, n = 0;
    double base_obj[LIFT_BASES];
    const int bound = vpt_space_register_bound(e->space, cur);
    if (bound >= VPT_SPACE_MAX_REGISTERS) return 0;
    const size_t np = vpt_space_neighbours_in(e->space, cur, LIFT_DIMS, pm, VPT_SPACE_MAX_NEIGHBOURS);
    for (size_t i = 0; i < np; i++) {
        const VptEvalRecord *r = vpt_search_record(e, pm[i]);
        if (!r || vpt_space_register_bound(e->space, pm[i]) != bound || !(r->registers >= bound)) continue;
        const double obj = vpt_eval_objective(r);
        if (!isfinite(obj)) continue;
        size_t k = nbase < LIFT_BASES ? nbase++ : LIFT_BASES;
        if (k == LIFT_BASES && obj >= base_obj[LIFT_BASES - 1]) continue;
        if (k == LIFT_BASES) k--;
        for (; k > 0 && base_obj[k - 1] > obj; k--) {
            base[k] = base[k - 1];
            base_obj[k] = base_obj[k - 1];
        }
        base[k] = pm[i];
        base_obj[k] = obj;
    }
    for (size_t i = 0; i < nbase; i++)
        for (int step = 1; step <= LIFT_STEPS; step++) {
            const long m = vpt_space_cap_lifted(e->space, base[i], step);
            if (m >= 0 && (size_t)m != cur && !vpt_search_listed(nb, n, (size_t)m)) nb[n++] = (size_t)m;
        }
    return n;
}

/* The neighbourhood of cur in a descent's phase: 0 the parameter moves; 1
 * the schedule moves with their dependent parameters; 2 the caps lifted
 * around cur (measured last: only a local optimum of both move sets needs
 * them, and they read the records of phase 0). The schedule moves leave
 * out the schedules the caller's records show far slower
 * (vpt_search_schedule_pruned). nb holds VPT_SPACE_MAX_SCHEDULE_MOVES. */
#define PHASES 3
static size_t neighbourhood(const VptSearchEngine *e, size_t cur, int phase, size_t *nb)
{
    if (phase == 1) {
        const size_t n = vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES);
        size_t kept = 0;
        for (size_t i = 0; i < n; i++)
            if (!vpt_search_schedule_pruned(e, nb[i])) nb[kept++] = nb[i];
        return kept;
    }
    if (phase == 2) return caps_lifted(e, cur, nb);
    return parameter_moves(e, cur, nb);
}

/* One descent after another (a batch width of 1: the search as it runs on
 * one GPU). */
static void run_one(VptSearchEngine *e, VptShuffle *starts)
{
    size_t nb[VPT_SPACE_MAX_SCHEDULE_MOVES];
    long start = vpt_search_start(e, starts), incumbent = -1;
    double inc_obj = INFINITY;
    size_t descents = 0;
    for (;;) {
        if (start == -2) return;
        if (start < 0) {
            vpt_search_stop(e, VPT_STOP_DONE);
            return;
        }
        size_t cur = (size_t)start, s0 = cur;
        double cur_obj;
        vpt_search_hint(e, &s0, 1, 1);
        if (!vpt_search_eval(e, cur, 1, &cur_obj)) return;
        if (vpt_search_pruned(e, cur_obj, inc_obj)) {
            start = vpt_search_restart(e, starts, incumbent);
            continue;
        }
        /* variable neighbourhood descent: steepest descent over the
         * parameter moves; at their optimum, over the schedule moves, then
         * the caps lifted; an improvement starts over with the parameters */
        for (int phase = 0; phase < PHASES;) {
            size_t n = neighbourhood(e, cur, phase, nb);
            size_t best = cur;
            double best_obj = INFINITY;
            if (n == 0) {
                phase++;
                continue;
            }
            if (!vpt_search_eval_all(e, nb, n, &best, &best_obj)) return;
            if (best_obj < cur_obj) {
                cur = best;
                cur_obj = best_obj;
                phase = 0;
            } else {
                phase++;
            }
        }
        if (cur_obj < inc_obj) {
            inc_obj = cur_obj;
            incumbent = (long)cur;
        }
        if (e->o->max_descents && ++descents >= e->o->max_descents) {
            vpt_search_stop(e, VPT_STOP_DONE);
            return;
        }
        start = vpt_search_restart(e, starts, incumbent);
    }
}

/* A descent of the batched search: where it is, its objective there, its
 * phase, and the members it measures next. */
typedef struct {
    size_t cur;
    double cur_obj;
    int phase;  /* 0 .. PHASES - 1; PHASES: at a local optimum, to start again */
    int fresh;  /* cur was proposed, not yet measured: list is {cur} */
    int idle;   /* nothing left to start from */
    size_t n;
    size_t *list;
} Descent;

/* 1 when a descent other than d[i] stands on d[i].cur. */
static int shared(const Descent *d, size_t nd, size_t i)
{
    for (size_t j = 0; j < nd; j++)
        if (j != i && !d[j].idle && !d[j].fresh && d[j].cur == d[i].cur) return 1;
    return 0;
}

/* Sets x's next list (its neighbourhood in its phase, in a random order, or
 * its fresh start) and announces it. */
static void propose(VptSearchEngine *e, Descent *x)
{
    if (x->fresh) {
        x->list[0] = x->cur;
        x->n = 1;
    } else {
        x->n = neighbourhood(e, x->cur, x->phase, x->list);
        vpt_shuffle_array(e, x->list, x->n);
    }
    vpt_search_hint(e, x->list, x->n, 1);
}

/* Where a descent starts again: the next start batch member no descent
 * has started from yet, else vpt_search_restart. 0 when the search must
 * stop. */
typedef struct {
    size_t *list;
    size_t n, next;
} Pending;

static int start_again(VptSearchEngine *e, VptShuffle *starts, Pending *p, Descent *x, long incumbent)
{
    long m = -1;
    while (m < 0 && p->next < p->n) {
        size_t c = p->list[p->next++];
        if (!vpt_search_visited(e, c, 1)) m = (long)c;
    }
    if (m < 0) m = vpt_search_restart(e, starts, incumbent);
    if (m == -2) return 0;
    if (m < 0) {
        x->idle = 1;
        return 1;
    }
    x->cur = (size_t)m;
    x->phase = 0;
    x->fresh = !vpt_search_visited(e, x->cur, 1);
    if (!x->fresh && !vpt_search_eval(e, x->cur, 1, &x->cur_obj)) return 0;
    return 1;
}

/* Descents per lane. Why more than one: the search takes records in its
 * own order, so while it waits for one descent's slowest evaluation the
 * lanes must have the other descents' lists queued; with one descent per
 * lane they often ran dry (tune --replay --gpus on the recorded spaces,
 * docs/decisions/search-lanes.md). */
#define DESCENTS_PER_LANE 3
/* In completion order (several GPUs) a descent waits for its whole list
 * while the GPUs run the other descents' lists, so more descents keep the
 * announced queue from running dry (docs/decisions/search-completion-order.md). */
#define DESCENTS_PER_LANE_COMPLETION 5

/* The search's state beside its descents: the incumbent, the start batch. */
typedef struct {
    VptShuffle *starts;
    Pending p;
    long incumbent;
    double inc_obj;
} Shared;

/* Descent i has the records of its whole list, best the least (best_obj):
 * it steps as run_one's would (or starts again: at a start batch member no
 * descent has used, else where vpt_search_restart says, wide on
 * stagnation) and announces its next list. 0 when the search must stop. */
static int step(VptSearchEngine *e, Descent *d, size_t nd, size_t i, size_t best, double best_obj, Shared *g)
{
    Descent *x = &d[i];
    int pruned = 0;
    if (x->fresh) {
        x->fresh = 0;
        x->cur_obj = best_obj;
        pruned = vpt_search_pruned(e, x->cur_obj, g->inc_obj);
    } else if (best_obj < x->cur_obj) {
        x->cur = best;
        x->cur_obj = best_obj;
        x->phase = 0;
    } else {
        x->phase++;
    }
    if (x->cur_obj < g->inc_obj) {
        g->inc_obj = x->cur_obj;
        g->incumbent = (long)x->cur;
    }
    if ((pruned || x->phase >= PHASES || shared(d, nd, i)) && !start_again(e, g->starts, &g->p, x, g->incumbent)) return 0;
    if (!x->idle) propose(e, x);
    return 1;
}

/* The ring (one server, an explicit batch): each descent in turn takes its
 * announced list's records in the list's order, then steps. */
static void run_ring(VptSearchEngine *e, Descent *d, size_t nd, Shared *g)
{
    for (size_t i = 0, idle_run = 0;; i = (i + 1) % nd) {
        Descent *x = &d[i];
        if (x->idle) {
            if (++idle_run >= nd) {
                vpt_search_stop(e, VPT_STOP_DONE);
                return;
            }
            continue;
        }
        idle_run = 0;
        size_t best = x->cur;
        double best_obj = INFINITY;
        for (size_t j = 0; j < x->n; j++) {
            double obj;
            if (!vpt_search_eval(e, x->list[j], 1, &obj)) return;
            if (obj < best_obj) {
                best_obj = obj;
                best = x->list[j];
            }
        }
        if (!step(e, d, nd, i, best, best_obj, g)) return;
    }
}

/* Completion order (several GPUs under a time budget): the search takes
 * whichever record of any descent's list the GPUs finish first
 * (vpt_search_eval_first); a descent steps as soon as its whole list is
 * in, while the others' lists keep the GPUs busy. A record is the best of
 * its list when strictly less than those before it, so equal objectives
 * keep the first to arrive. */
static void run_completion(VptSearchEngine *e, Descent *d, size_t nd, Shared *g)
{
    size_t cap = nd * VPT_SPACE_MAX_SCHEDULE_MOVES;
    size_t *pend = vpt_malloc(cap * sizeof *pend);
    unsigned char **got = vpt_calloc(nd, sizeof *got);
    size_t *best = vpt_calloc(nd, sizeof *best);
    double *best_obj = vpt_malloc(nd * sizeof *best_obj);
    int ok = pend && got && best && best_obj;
    for (size_t i = 0; ok && i < nd; i++) ok = (got[i] = vpt_calloc(VPT_SPACE_MAX_SCHEDULE_MOVES, 1)) != NULL;
    if (!ok) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        goto out;
    }
    for (size_t i = 0; i < nd; i++) best_obj[i] = INFINITY;
    for (;;) {
        size_t np = 0, stepped = 0;
        for (size_t i = 0; i < nd; i++) {
            if (d[i].idle) continue;
            size_t left = 0;
            for (size_t j = 0; j < d[i].n; j++)
                if (!got[i][j]) pend[np + left++] = d[i].list[j];
            if (left == 0) {
                if (!step(e, d, nd, i, d[i].n ? best[i] : d[i].cur, best_obj[i], g)) goto out;
                memset(got[i], 0, VPT_SPACE_MAX_SCHEDULE_MOVES);
                best_obj[i] = INFINITY;
                stepped = 1;
                break; /* a step may start another descent's list over: gather again */
            }
            np += left;
        }
        if (stepped) continue;
        if (np == 0) {
            vpt_search_stop(e, VPT_STOP_DONE);
            goto out;
        }
        size_t which;
        double obj;
        if (!vpt_search_eval_first(e, pend, np, &which, &obj)) goto out;
        size_t m = pend[which];
        for (size_t i = 0; i < nd; i++)
            for (size_t j = 0; !d[i].idle && j < d[i].n; j++)
                if (!got[i][j] && d[i].list[j] == m) {
                    got[i][j] = 1;
                    if (obj < best_obj[i]) {
                        best_obj[i] = obj;
                        best[i] = m;
                    }
                }
    }
out:
    for (size_t i = 0; got && i < nd; i++) free(got[i]);
    free(got);
    free(pend);
    free(best);
    free(best_obj);
}

/* DESCENTS_PER_LANE x width descents side by side: each starts at a member
 * of the start batch (announced together: the prior, starts[], random
 * members), then takes the records of its announced list, steps, and
 * announces its next list at once: in a ring on one GPU, in completion
 * order on several (vpt_search_completion_begin). The lanes measure the
 * announcements first come first served, so while the search waits for
 * one descent's records the others' lists are queued: no lane waits for a
 * round's slowest evaluation, and each lane keeps several configs queued,
 * so that its compiles overlap its measurements as on one GPU. */
static void run_batched(VptSearchEngine *e, VptShuffle *starts)
{
    size_t nd = (size_t)e->width * (e->servers > 1 ? DESCENTS_PER_LANE_COMPLETION : DESCENTS_PER_LANE);
    Descent *d = vpt_calloc(nd, sizeof *d);
    Shared g = {.starts = starts, .incumbent = -1, .inc_obj = INFINITY};
    g.p.list = vpt_malloc((vpt_search_start_cap(e) + nd) * sizeof *g.p.list);
    for (size_t i = 0; d && i < nd; i++)
        if (!(d[i].list = vpt_malloc(VPT_SPACE_MAX_SCHEDULE_MOVES * sizeof *d[i].list))) break;
    if (!d || !g.p.list || !d[nd - 1].list || vpt_search_completion_begin(e)) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        goto out;
    }
    g.p.n = vpt_search_start_list(e, starts, g.p.list);
    if (g.p.n < nd) vpt_search_fill_random(e, starts, g.p.list, &g.p.n, nd - g.p.n);
    vpt_search_hint(e, g.p.list, g.p.n, 1);
    for (size_t i = 0; i < nd; i++) {
        if (!start_again(e, starts, &g.p, &d[i], g.incumbent)) goto out;
        if (!d[i].idle) propose(e, &d[i]);
    }
    if (e->completion) run_completion(e, d, nd, &g);
    else run_ring(e, d, nd, &g);
out:
    for (size_t i = 0; d && i < nd; i++) free(d[i].list);
    free(d);
    free(g.p.list);
}

void vpt_strategy_local_run(VptSearchEngine *e)
{
    VptShuffle starts;
    if (vpt_shuffle_init(&starts, e->n_members)) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return;
    }
    if (e->width > 1) run_batched(e, &starts);
    else run_one(e, &starts);
    free(starts.perm);
}
