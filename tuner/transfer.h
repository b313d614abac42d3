/* The transfer prior of a tune on a GPU: the configs that the tunes of other
 * scenes saved for this GPU model (results/<gpu>/best/<scene>.json, tuner/
 * best.h), handed to the search as a portfolio of starts
 * (VptSearchOptions.starts) beside the thesis' prior.
 *
 * Why (bin/tune-score --leave-one-out on the six recorded 336-config spaces,
 * results/cpu-amd-epyc-2c/kernel_tuner/vptune_loo.jsonl): local search started
 * from the other scenes' fastest configs as well as the thesis' prior scores
 * at least as well by time as from the prior alone on every held-out scene,
 * and without the thesis' prior (the transfer alone) it reaches what local
 * search from random starts misses (98% of the optimum within 5% of the
 * exhaustive time on every seed, against 65-80% of them). The scene's own
 * saved config is never among its starts: a tune learns only from other
 * scenes. */
#ifndef VPT_TUNER_TRANSFER_H
#define VPT_TUNER_TRANSFER_H

#include "codegen/config.h"

#include <stddef.h>

/* The configs saved in <results>/<gpu_dir>/best/<name>.json (results NULL:
 * "results") other than <scene>.json, in the order of their file names,
 * at most max, into out; the scenes they come from into names (a
 * comma-separated list, may be NULL). Files that do not load are left out
 * (a tune must not fail for another scene's file); an absent folder gives
 * 0. Returns how many. */
size_t vpt_transfer_starts(const char *results, const char *gpu_name, const char *scene, VptConfig *out,
                           size_t max, char *names, size_t names_size);

#endif
