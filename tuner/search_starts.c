/* Where descents start and start again (contracts in tuner/search.h:
 * starts, random_starts, stagnation, batch; tuner/search_engine.h). */
#include "base/error.h"
#include "tuner/search_engine.h"

#include <math.h>
#include <stdlib.h>

long vpt_search_prior(VptSearchEngine *e)
{
    VptConfig c;
    if (e->o->no_prior) return -1;
    if (vpt_config_parse("regenerationSK", &c)) {
        vpt_error_clear();
        return -1;
    }
    return vpt_space_nearest(e->space, &c, &e->rng);
}

size_t vpt_search_fill_random(VptSearchEngine *e, VptShuffle *starts, size_t *list, size_t *n, size_t want)
{
    size_t added = 0;
    long m;
    while (added < want && (m = vpt_shuffle_next_unvisited(starts, e, 1)) >= 0)
        if (!vpt_search_listed(list, *n, (size_t)m) && !vpt_search_schedule_pruned(e, (size_t)m)) {
            list[(*n)++] = (size_t)m;
            added++;
        }
    return added;
}

/* Evaluates list[0..n) in order after announcing it together; the best
 * (first of equals, list[0] when none is ok), or -2 when the search must
 * stop. */
static long best_of(VptSearchEngine *e, const size_t *list, size_t n)
{
    vpt_search_hint(e, list, n, 1);
    long best = (long)list[0];
    double best_obj = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double obj;
        if (!vpt_search_eval(e, list[i], 1, &obj)) return -2;
        if (obj < best_obj) {
            best_obj = obj;
            best = (long)list[i];
        }
    }
    return best;
}

/* Without the prior and other starts: the best of a few random members, or
 * of one per lane when there are more lanes, announced together, so that the
 * first descent does not start from whatever a single draw gives. */
#define START_SAMPLE 4

static size_t sample_size(const VptSearchEngine *e)
{
    return (size_t)e->width > START_SAMPLE ? (size_t)e->width : START_SAMPLE;
}

static long sampled_start(VptSearchEngine *e, VptShuffle *starts)
{
    size_t n = 0, want = sample_size(e);
    size_t *list = vpt_malloc(want * sizeof *list);
    if (!list) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return -2;
    }
    vpt_search_fill_random(e, starts, list, &n, want);
    long best = n ? best_of(e, list, n) : -1;
    free(list);
    return best;
}

size_t vpt_search_start_list(VptSearchEngine *e, VptShuffle *starts, size_t *list)
{
    const VptSearchOptions *o = e->o;
    size_t k = 0;
    long prior = vpt_search_prior(e);
    if (prior >= 0) list[k++] = (size_t)prior;
    for (size_t i = 0; o->starts && i < o->n_starts && i < VPT_SEARCH_MAX_STARTS; i++) {
        long m = vpt_space_nearest(e->space, &o->starts[i], NULL);
        if (m >= 0 && !vpt_search_listed(list, k, (size_t)m)) list[k++] = (size_t)m;
    }
    if (k == 0) return 0;
    /* random members beside the prior and the transfer prior, so that no
     * learned start decides alone where every seed descends; as many as keep
     * every lane busy */
    vpt_search_fill_random(e, starts, list, &k, o->random_starts > 0 ? (size_t)o->random_starts : 0);
    if (k < (size_t)e->width) vpt_search_fill_random(e, starts, list, &k, (size_t)e->width - k);
    return k;
}

size_t vpt_search_start_cap(const VptSearchEngine *e)
{
    size_t r = e->o->random_starts > 0 ? (size_t)e->o->random_starts : 0;
    return 1 + VPT_SEARCH_MAX_STARTS + r + sample_size(e);
}

long vpt_search_start(VptSearchEngine *e, VptShuffle *starts)
{
    size_t *list = vpt_malloc(vpt_search_start_cap(e) * sizeof *list);
    if (!list) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return -2;
    }
    size_t k = vpt_search_start_list(e, starts, list);
    long best;
    if (k == 0) best = sampled_start(e, starts);
    else if (k == 1) best = (long)list[0]; /* the prior alone: the descent measures it */
    else best = best_of(e, list, k);
    free(list);
    return best;
}

/* The next unvisited member of starts outside the schedules pruned
 * (vpt_search_schedule_pruned), or -1 when none is left. */
static long unpruned_unvisited(VptSearchEngine *e, VptShuffle *starts)
{
    long m;
    while ((m = vpt_shuffle_next_unvisited(starts, e, 1)) >= 0 && vpt_search_schedule_pruned(e, (size_t)m)) {
    }
    return m;
}

/* A perturbation of member m not yet evaluated nor of a pruned schedule,
 * or -1 after a few tries. */
static long perturbation(VptSearchEngine *e, size_t m)
{
    for (int tries = 0; tries < 8; tries++) {
        size_t c = vpt_space_mutate(e->space, m, 2.0 / VPT_DIM_RATE_COUNT, &e->rng);
        if (!vpt_search_visited(e, c, 1) && !vpt_search_schedule_pruned(e, c)) return (long)c;
    }
    return -1;
}

long vpt_search_restart(VptSearchEngine *e, VptShuffle *starts, long incumbent)
{
    const VptSearchOptions *o = e->o;
    size_t since = e->res->n_evals - (e->best_at > e->widened_at ? e->best_at : e->widened_at);
    if (o->stagnation && since >= o->stagnation) {
        /* stagnation: the best has not moved for a while, so the region
         * around it is spent; widen: one descent alone starts from the best
         * of a few fresh random members, side by side ones from one each */
        e->widened_at = e->res->n_evals;
        e->restarts_wide++;
        return e->width <= 1 ? sampled_start(e, starts) : unpruned_unvisited(e, starts);
    }
    /* iterated local search: a good region usually has more good members
     * than a random point's */
    if (incumbent >= 0) {
        long m = perturbation(e, (size_t)incumbent);
        if (m >= 0) return m;
    }
    return unpruned_unvisited(e, starts);
}

int vpt_search_pruned(const VptSearchEngine *e, double start_obj, double incumbent_obj)
{
    double f = e->o->prune;
    return f > 0 && isfinite(incumbent_obj) && !(start_obj < f * incumbent_obj);
}
