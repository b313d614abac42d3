/* Asynchronous successive halving over two fidelities (contract in
 * tuner/search.h: halving). */
#include "base/error.h"
#include "tuner/search_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Successive halving over two fidelities, asynchronously (ASHA, Li et al.
 * 2020): whenever a config screened at fidelity 0 ranks among the best
 * floor(n / eta) of the n screened so far (failures never) and is not yet
 * measured at fidelity 1, the best such config is measured at fidelity 1;
 * otherwise the next unscreened member is screened (search.h). */
void vpt_strategy_halving_run(VptSearchEngine *e)
{
    const VptSearchOptions *o = e->o;
    size_t eta = (size_t)(o->sh_eta > 1 ? o->sh_eta : 3);
    VptShuffle order;
    /* screened configs, kept sorted by cheap objective (failures last) */
    VptIndividual *rung = vpt_malloc((e->n_members ? e->n_members : 1) * sizeof *rung);
    size_t *ahead = vpt_malloc(VPT_SEARCH_LOOKAHEAD * sizeof *ahead);
    if (!rung || !ahead || vpt_shuffle_init(&order, e->n_members)) {
        free(rung);
        free(ahead);
        vpt_search_stop(e, VPT_STOP_ERROR);
        return;
    }
    size_t n = 0, n_ahead = 0, next_ahead = 0;
    long prior = vpt_search_prior(e);
    for (;;) {
        /* promote: the best unpromoted config within the top floor(n / eta) */
        size_t top = n / eta;
        long pick = -1;
        for (size_t i = 0; i < top && i < n; i++) {
            if (!isfinite(rung[i].obj)) break;
            if (!vpt_search_visited(e, rung[i].member, 1)) {
                pick = (long)i;
                break;
            }
        }
        if (pick >= 0) {
            size_t m = rung[pick].member;
            double obj;
            vpt_search_hint(e, &m, 1, 1);
            if (!vpt_search_eval(e, m, 1, &obj)) break;
            continue;
        }
        /* screen the next member (the thesis' default first); the order is
         * drawn and announced ahead */
        if (next_ahead == n_ahead) {
            /* with an evaluation budget, announce no more screenings than
             * fit in it along with the promotions they may bring: up to two
             * each (the screened config itself, and one more when the top
             * grows by one) */
            size_t want = VPT_SEARCH_LOOKAHEAD;
            if (o->max_evals) {
                size_t left = o->max_evals > e->res->n_evals ? o->max_evals - e->res->n_evals : 0;
                if (left / 3 < want) want = left / 3 > 0 ? left / 3 : 1;
            }
            n_ahead = next_ahead = 0;
            long m;
            if (n == 0 && prior >= 0) ahead[n_ahead++] = (size_t)prior;
            while (n_ahead < want && (m = vpt_shuffle_next_unvisited(&order, e, 0)) >= 0)
                if (m != prior || n > 0) ahead[n_ahead++] = (size_t)m;
            if (n_ahead == 0) {
                vpt_search_stop(e, VPT_STOP_DONE);
                break;
            }
            vpt_search_hint(e, ahead, n_ahead, 0);
        }
        VptIndividual x = {.member = ahead[next_ahead++]};
        if (!vpt_search_eval(e, x.member, 0, &x.obj)) break;
        size_t at = n; /* insertion keeps the rung sorted; equals keep their order */
        while (at > 0 && vpt_individual_cmp(&rung[at - 1], &x) > 0) at--;
        memmove(&rung[at + 1], &rung[at], (n - at) * sizeof *rung);
        rung[at] = x;
        n++;
    }
    free(order.perm);
    free(rung);
    free(ahead);
}
