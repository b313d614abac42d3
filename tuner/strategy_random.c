/* Random search: uniform sampling without replacement (tuner/search.h). */
#include "tuner/search_engine.h"

#include <stdlib.h>

/* The members in a uniformly random order (nothing else visits members, so
 * drawing the whole order first is drawing as it goes). */
void vpt_strategy_random_run(VptSearchEngine *e)
{
    VptShuffle sh;
    if (vpt_shuffle_init(&sh, e->n_members)) {
        vpt_search_stop(e, VPT_STOP_ERROR);
        return;
    }
    while (vpt_shuffle_next_unvisited(&sh, e, 1) >= 0) {
    }
    vpt_search_run_sequence(e, sh.perm, sh.n);
    free(sh.perm);
}
