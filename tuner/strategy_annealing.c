/* Simulated annealing with reheats (contract in tuner/search.h:
 * annealing). */
#include "tuner/search_engine.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* A random move from cur for annealing: a dimension drawn uniformly among
 * those that can move (the schedule with its dependent parameters, see
 * vpt_space_schedule_moves), then one of its moves, so that the nine-valued
 * schedule is not proposed more often than a two-valued parameter. -1 when
 * nothing can move. */
static long annealing_move(VptSearchEngine *e, size_t cur)
{
    size_t nb[VPT_SPACE_MAX_SCHEDULE_MOVES];
    size_t count[VPT_DIM_COUNT];
    int dims[VPT_DIM_COUNT], nd = 0;
    for (int d = 0; d < VPT_DIM_COUNT; d++) {
        count[d] = d == VPT_DIM_SCHEDULE
                       ? vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES)
                       : vpt_space_neighbours_in(e->space, cur, 1u << d, nb, VPT_SPACE_MAX_NEIGHBOURS);
        if (count[d]) dims[nd++] = d;
    }
    if (nd == 0) return -1;
    int d = dims[vpt_rng_below(&e->rng, (uint64_t)nd)];
    size_t n = d == VPT_DIM_SCHEDULE ? vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES)
                                     : vpt_space_neighbours_in(e->space, cur, 1u << d, nb, VPT_SPACE_MAX_NEIGHBOURS);
    return (long)nb[vpt_rng_below(&e->rng, n)];
}

void vpt_strategy_annealing_run(VptSearchEngine *e)
{
    const VptSearchOptions *o = e->o;
    double t0 = o->sa_t0 > 0 ? o->sa_t0 : 0.1;
    double tmin = o->sa_tmin > 0 && o->sa_tmin < t0 ? o->sa_tmin : t0 * 1e-3;
    double alpha = o->sa_alpha > 0 && o->sa_alpha < 1 ? o->sa_alpha : 0.995;
    VptShuffle starts;
    if (vpt_shuffle_init(&starts, e->n_members)) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return;
    }
    size_t nb[VPT_SPACE_MAX_SCHEDULE_MOVES];
    long start = vpt_search_start(e, &starts), incumbent = -1;
    double inc_obj = INFINITY;
    for (;;) { /* one walk per (re)heat */
        if (start == -2) break;
        if (start < 0) {
            vpt_search_stop(e, VPT_STOP_DONE);
            break;
        }
        size_t cur = (size_t)start;
        double cur_obj, obj, temp = t0;
        double f_start = vpt_search_budget_used(e);
        if (!vpt_search_eval(e, cur, 1, &cur_obj)) break;
        size_t free_steps = 0;
        while (temp > tmin) {
            long next = annealing_move(e, cur);
            if (next < 0) break;
            size_t before = e->res->n_evals;
            if (!vpt_search_eval(e, (size_t)next, 1, &obj)) goto out;
            if (e->res->n_evals > before) {
                /* cool over what is left of the budget, else geometrically */
                double f = vpt_search_budget_used(e);
                if (f_start >= 0) temp = f_start < 1 ? t0 * pow(tmin / t0, (f - f_start) / (1 - f_start)) : tmin;
                else temp *= alpha;
                free_steps = 0;
            } else if (++free_steps > 4 * (vpt_space_neighbours(e->space, cur, nb, VPT_SPACE_MAX_NEIGHBOURS) +
                                           vpt_space_schedule_moves(e->space, cur, nb, VPT_SPACE_MAX_SCHEDULE_MOVES)) +
                                          16) {
                break; /* every move seen, none taken: reheat elsewhere */
            }
            int accept;
            if (!isfinite(cur_obj)) accept = 1;
            else if (!isfinite(obj)) accept = 0;
            else if (obj < cur_obj) accept = 1;
            else accept = vpt_rng_uniform(&e->rng) < exp(-(obj / cur_obj - 1.0) / temp);
            if (accept) {
                cur = (size_t)next;
                cur_obj = obj;
            }
            if (cur_obj < inc_obj) {
                inc_obj = cur_obj;
                incumbent = (long)cur;
            }
        }
        if (cur_obj < inc_obj) {
            inc_obj = cur_obj;
            incumbent = (long)cur;
        }
        start = vpt_search_restart(e, &starts, incumbent);
    }
out:
    free(starts.perm);
}
