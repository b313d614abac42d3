/* Exhaustive search: every member in member order (tuner/search.h). */
#include "base/error.h"
#include "tuner/search_engine.h"

#include <stdlib.h>

void vpt_strategy_exhaustive_run(VptSearchEngine *e)
{
    size_t *order = vpt_malloc((e->n_members ? e->n_members : 1) * sizeof *order);
    if (!order) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return;
    }
    for (size_t m = 0; m < e->n_members; m++) order[m] = m;
    vpt_search_run_sequence(e, order, e->n_members);
    free(order);
}
