/* A generational genetic algorithm (contract in tuner/search.h: genetic). */
#include "base/error.h"
#include "tuner/search_engine.h"

#include <math.h>
#include <stdlib.h>

static size_t tournament(VptSearchEngine *e, const VptIndividual *pop, size_t n)
{
    const VptIndividual *a = &pop[vpt_rng_below(&e->rng, n)], *b = &pop[vpt_rng_below(&e->rng, n)];
    return vpt_individual_cmp(a, b) <= 0 ? a->member : b->member;
}

/* 1 when member m is among the first n of list. */
static int in_list(const VptIndividual *list, size_t n, size_t m)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].member == m) return 1;
    return 0;
}

/* Announces the members of list[from..n) at fidelity. */
static void hint_list(VptSearchEngine *e, const VptIndividual *list, size_t from, size_t n, int fidelity)
{
    size_t members[VPT_SEARCH_HINT_MAX];
    for (size_t i = from; i < n; i += VPT_SEARCH_HINT_MAX) {
        size_t k = 0;
        for (size_t j = i; j < n && k < VPT_SEARCH_HINT_MAX; j++) members[k++] = list[j].member;
        vpt_search_hint(e, members, k, fidelity);
    }
}

/* Evaluates list[from..n) in order after announcing them; 0 when stopped. */
static int eval_generation(VptSearchEngine *e, VptIndividual *list, size_t from, size_t n)
{
    hint_list(e, list, from, n, 1);
    for (size_t i = from; i < n; i++)
        if (!vpt_search_eval(e, list[i].member, 1, &list[i].obj)) return 0;
    return 1;
}

void vpt_strategy_genetic_run(VptSearchEngine *e)
{
    const VptSearchOptions *o = e->o;
    size_t want = (size_t)(o->ga_population > 1 ? o->ga_population : 10);
    size_t p = want < e->n_members ? want : e->n_members;
    double rate = o->ga_mutation > 0 && o->ga_mutation <= 1 ? o->ga_mutation : 1.0 / VPT_DIM_RATE_COUNT;
    /* chance that a per-dimension mutation changes anything at all */
    double p_mutate = 1.0 - pow(1.0 - rate, VPT_DIM_RATE_COUNT);
    VptIndividual *pop = vpt_malloc(p * sizeof *pop), *next = vpt_malloc(p * sizeof *next);
    VptShuffle init;
    if (!pop || !next || vpt_shuffle_init(&init, e->n_members)) {
        free(pop);
        free(next);
        vpt_search_stop(e, VPT_STOP_ERROR);
        return;
    }
    /* the thesis' default and random members */
    long prior = vpt_search_prior(e);
    for (size_t i = 0; i < p; i++) {
        long m = i == 0 && prior >= 0 ? prior : vpt_shuffle_next_unvisited(&init, e, 1);
        while (i > 0 && m >= 0 && m == prior) m = vpt_shuffle_next_unvisited(&init, e, 1);
        pop[i].member = m >= 0 ? (size_t)m : vpt_space_random(e->space, &e->rng);
    }
    if (!eval_generation(e, pop, 0, p)) goto out;
    for (;;) {
        if (e->visited[1] == e->n_members) {
            vpt_search_stop(e, VPT_STOP_DONE);
            break;
        }
        qsort(pop, p, sizeof *pop, vpt_individual_cmp);
        size_t k = 0;
        for (; k < 2 && k < p; k++) next[k] = pop[k]; /* elitism */
        size_t elite = k;
        /* the whole generation first (announced together), then measured */
        for (; k < p; k++) {
            size_t a = tournament(e, pop, p), b = tournament(e, pop, p);
            size_t child = vpt_space_crossover(e->space, a, b, &e->rng);
            if (vpt_rng_uniform(&e->rng) < p_mutate) child = vpt_space_mutate(e->space, child, rate, &e->rng);
            for (int tries = 0; tries < 8 && (vpt_search_visited(e, child, 1) || in_list(next, k, child)); tries++)
                child = vpt_space_mutate(e->space, child, rate, &e->rng);
            next[k].member = child;
        }
        if (!eval_generation(e, next, elite, p)) goto out;
        VptIndividual *t = pop;
        pop = next;
        next = t;
    }
out:
    free(init.perm);
    free(pop);
    free(next);
}
