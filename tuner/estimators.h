/* The estimator stage of a tune: which free-flight estimator (majorant grid
 * or global majorant, codegen/config.h's `majorant`) and density texture
 * format (`density`) a scene's configs run with.
 *
 * Why a stage and not more dimensions of the space: the estimator changes
 * what every step costs (how many steps, and what each fetch moves), not
 * how the schedule maps flights to lanes, and the two have no constraint in
 * common; multiplying the space's 349,164 schedules by 20 estimators would
 * make a 7-million-member space that the tuner's strategies (and the memory
 * the space is held in) would have to cover blindly. So a tune
 * (tuner/tune.c, estimator_stage)
 *   1. searches the schedules for half its budget with the list's first
 *      estimator (the thesis' global majorant, f32, in "all"), stamped onto
 *      every member (VptSearchOptions.majorant/density);
 *   2. screens every estimator on that search's best schedule and takes the
 *      fastest that passes the gate (a quantising format that changes the
 *      image is invalid_output there);
 *   3. searches the rest of the budget with that estimator;
 *   4. screens every estimator again on the second search's best,
 *      and ranks all records together: the winner is never slower than the
 *      first half's, so an estimator that loses is never picked.
 * Screening on the thesis' default schedule instead (measured at bd564b4 on
 * an H100) chose grid8:u8 for artifix, whose schedules then never met the
 * global majorant's best: 6.87 ms against 5.63 for a global-only tune.
 * Every screening evaluation goes through the cache like the search's.
 *
 * Estimator lists are written "all", "global" (the thesis' estimator only),
 * or a comma-separated list of MAJORANT:DENSITY pairs, e.g.
 * "global:f32,grid8:u8,grid16:f16" (majorant global|grid4|grid8|grid16|grid32,
 * density f32|f16|u16|u8). */
#ifndef VPT_TUNER_ESTIMATORS_H
#define VPT_TUNER_ESTIMATORS_H

#include "codegen/config.h"
#include "tuner/cache.h"
#include "tuner/eval.h"
#include "tuner/pool.h"

#include <stddef.h>

typedef struct {
    int majorant;              /* 0: global; else the grid's cell size */
    VptDensityFormat density;
} VptEstimator;

#define VPT_ESTIMATORS_MAX 20 /* 5 majorants x 4 formats */

/* Parses a list (see above) into out[0..VPT_ESTIMATORS_MAX); returns how
 * many, or -1 with a message naming the bad item. Duplicates are an error. */
int vpt_estimators_parse(const char *text, VptEstimator *out);

/* Evaluates base with each of est[0..n) through the pool (tuner/pool.h:
 * the cache first, new records appended to it; on several GPUs side by
 * side), appending every record to *recs (grown with realloc; *n_recs
 * counts them) and adding the charged seconds of the new ones to *seconds.
 * Sets *best to the estimator of the fastest ok record (untouched when none
 * passed). Returns 0, or -1 when the evaluator or the cache failed. */
int vpt_estimators_screen(const VptConfig *base, const VptEstimator *est, size_t n, VptEvalPool *pool,
                          VptEvalRecord **recs, size_t *n_recs, double *seconds, VptEstimator *best);

/* c with estimator e. */
VptConfig vpt_estimator_apply(const VptConfig *c, const VptEstimator *e);

#endif
