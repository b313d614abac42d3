/* The estimator stage of a tune: which free-flight estimator (global
 * majorant, majorant grid, or global majorant skipping empty space,
 * codegen/config.h's `majorant`) and density texture
 * format (`density`) a scene's configs run with.
 *
 * Why a stage and not more dimensions of the space: the estimator changes
 * what every step costs (how many steps, and what each fetch moves), not
 * how the schedule maps flights to lanes, and the two have no constraint in
 * common; multiplying the space's 353,934 schedules by 32 estimators would
 * make an 11-million-member space that the tuner's strategies (and the memory
 * the space is held in) would have to cover blindly. So a tune
 * (tuner/tune.c, estimator_stage)
 *   1. searches the schedules for a quarter of its budget with the list's
 *      first estimator (the thesis' global majorant, f32, in "all"),
 *      stamped onto every member (VptSearchOptions.majorant/density); a
 *      quarter because that search's best rarely improves after it
 *      (tuner/tune.c, FIRST_SHARE, says on what data);
 *   2. screens the estimators on that search's best schedule (all of a
 *      short list, by coordinate descent for "all": vpt_estimators_screen)
 *      and takes the fastest that passes the gate (a quantising format
 *      that changes the image is invalid_output there);
 *   3. when the contenders within VPT_ESTIMATORS_CONTENDER_MARGIN span
 *      several majorants, races them: one descent per majorant's fastest
 *      contender (vpt_estimators_rivals) from the first search's best; and
 *      when another regeneration family's best of the first search is
 *      faster with the screening's choice, one descent of that choice from
 *      it (tuner/tune.c, screen_families);
 *   4. searches the rest of the budget with the screening's choice, or the
 *      race's winner, from the first search's best (or the winning
 *      descent's) as well as from the usual starts;
 *   5. screens the first screening's contenders again on the best so far,
 *      and ranks all records together: the winner is never
 *      slower than the first search's, so an estimator that loses is never
 *      picked.
 * After steps 2 and 5 the driver screens the path order (codegen/config.h:
 * paths) on the best record the same way, one evaluation each, and steps 3
 * and 4 search with the faster order (tuner/tune.c, screen_paths); on a
 * scene with a sun, then the shadow rays' transmittance estimator at equal
 * error (screen_transmittance).
 * Why the search's best and not the thesis' default schedule: an estimator
 * chosen on the default schedule can lead the search to schedules that
 * never meet the global majorant's best, so the tune ends slower than a
 * global-only tune (docs/decisions/screening-on-search-best.md).
 * Every screening evaluation goes through the cache like the search's.
 *
 * The volume's representation (`volume`: the density as a dense texture or
 * a sparse NanoVDB tree, physics/sparse_grid.h) is part of the estimator
 * too, for the same reason: it changes what a fetch costs, not the schedule.
 *
 * Estimator lists are written "all" (every majorant x format, dense: a
 * sparse volume pays eight software lookups where the texture unit fetches
 * once, so it is screened only when asked for), "global" (the thesis'
 * estimator only), or a comma-separated list of
 * MAJORANT:DENSITY[:VOLUME] items, e.g. "global:f32,grid8:u8,global:f32:sparse"
 * (majorant global|grid4|...|grid128|skip, density f32|f16|u16|u8,
 * volume dense (the default) or sparse). */
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
    int sparse;                /* volume=sparse */
} VptEstimator;

#define VPT_ESTIMATORS_MAX (VPT_MAJORANT_COUNT * VPT_DENSITY_FORMAT_COUNT * 2) /* majorants x formats x volumes */
#define VPT_ESTIMATORS_ALL (VPT_MAJORANT_COUNT * VPT_DENSITY_FORMAT_COUNT)       /* "all": the dense ones */

/* Parses a list (see above) into out[0..VPT_ESTIMATORS_MAX); returns how
 * many, or -1 with a message naming the bad item. Duplicates are an error. */
int vpt_estimators_parse(const char *text, VptEstimator *out);

/* Lists of at most this many estimators are screened whole. */
#define VPT_ESTIMATORS_SCREEN_ALL 8

/* Evaluates base with the estimators of est[0..n) through the pool
 * (tuner/pool.h: the cache first, new records appended to it; on several
 * GPUs side by side), appending every record to *recs (grown with realloc;
 * *n_recs counts them) and adding the charged seconds of the new ones to
 * *seconds. Sets *best to the estimator of the fastest ok record (untouched
 * when none passed). Returns 0, or -1 when the evaluator or the cache failed.
 *
 * A list of up to VPT_ESTIMATORS_SCREEN_ALL is screened whole. A longer one
 * ("all": 8 majorants x 4 formats) by coordinate descent from base's own
 * estimator: every member sharing its majorant or its texture (format and
 * volume), then the same around the fastest, until the fastest stays: 11
 * evaluations when base's own estimator is the fastest, 14 to 20 typically,
 * instead of 32; each round's members are announced together, so several
 * GPUs measure them side by side, and measured by kind in turn (another
 * format, a grid, skip, the global majorant), so that a round the budget
 * cuts short has not left out a whole kind. Why: the two axes act nearly
 * independently (a format changes what a fetch moves, a majorant how many
 * steps there are), and on large volumes one evaluation costs seconds, so
 * a whole screening can eat most of a tune's budget
 * (docs/decisions/screening-coordinate-descent.md).
 *
 * The budget: a member starts only where it fits, at what this call's
 * members cost so far on average (next_s, the caller's guess, before the
 * first) plus grow_s for each member measured (what a record adds to the
 * finish that max_seconds and wall_deadline leave out, while the
 * finalists are fewer than a tune's top_k): *seconds plus that within
 * max_seconds (> 0), vpt_seconds() plus that before wall_deadline (> 0);
 * what was screened is ranked. Where one evaluation costs seconds, a whole
 * screening can exceed a tune's budget
 * (docs/decisions/screening-within-the-budget.md), and a member started
 * with less left than it takes ends past it
 * (docs/decisions/the-next-evaluation-fits.md). */
int vpt_estimators_screen(const VptConfig *base, const VptEstimator *est, size_t n, VptEvalPool *pool,
                          VptEvalRecord **recs, size_t *n_recs, double *seconds, VptEstimator *best,
                          double max_seconds, double wall_deadline, double next_s, double grow_s);

/* How much slower than a screening's fastest an estimator may be and still
 * be screened again on the second search's best (vpt_estimators_contenders).
 * Why 1.25: in the committed tunes that screened twice, the second
 * screening's fastest had always been within that margin of the first
 * screening's fastest, while the estimators that lost by more never came
 * back (docs/decisions/contender-rescreening.md). */
#define VPT_ESTIMATORS_CONTENDER_MARGIN 1.25

/* The contenders of a screening's records recs[0..n): the estimators of its
 * ok full-fidelity records whose time is within `margin` of the fastest,
 * fastest first, into out[0..VPT_ESTIMATORS_MAX) (each once). Returns how
 * many (0 when none passed), and sets *cost_s to the sum of their records'
 * cost_s: what screening them again costs, about. The last screening of a
 * tune screens these instead of the whole list, and the budget sets aside
 * only that much for it: setting aside what the whole first screening had
 * cost can leave a tune of a large volume no second search
 * (docs/decisions/contender-rescreening.md). */
size_t vpt_estimators_contenders(const VptEvalRecord *recs, size_t n, double margin, VptEstimator *out,
                                 double *cost_s);

/* The rivals among a screening's contenders[0..n) (fastest first, as
 * vpt_estimators_contenders gives them): the fastest contender of each
 * majorant, in that order, at most `max`, into out; returns how many.
 * The tune gives each rival a descent of its own from the first search's
 * best before the rest of the budget goes to one (tuner/tune.c,
 * estimator_stage). Why per majorant: the texture formats of one majorant
 * move the same schedules the same way (a format changes what a fetch
 * moves), while the majorant decides which schedules pay (skipping changes
 * how many steps a flight takes and how they diverge): on manix the global
 * majorant with cooperative flights beat every skip config by 3-4% on an
 * H100, yet lost the screening on the first search's coop-less schedule
 * to skip, and a second search bound to skip never met it
 * (docs/decisions/estimator-rivals.md). */
size_t vpt_estimators_rivals(const VptEstimator *contenders, size_t n, size_t max, VptEstimator *out);

/* At most this many rivals get a descent: with n rivals a descent may take
 * up to 1 / (n + 1) of what the searches have left (tuner/tune.c), so more
 * rivals leave each too little to finish its descent. */
#define VPT_ESTIMATORS_RIVALS_MAX 3

/* The grid majorants one cell size either side of e's (half and twice its
 * cell size, where the domain has them), with e's texture, that appear in
 * list[0..n), into out[0..2); returns how many (0 when e's majorant is not
 * a grid). The tune screens them beside the contenders on its final best:
 * the cell size is ordinal, and a screening on the first search's schedule
 * can rank the grids in another order than the final schedule does, so the
 * winner's neighbours may never have been contenders
 * (docs/decisions/grid-neighbours-in-the-last-screening.md). */
size_t vpt_estimators_cell_neighbours(const VptEstimator *e, const VptEstimator *list, size_t n, VptEstimator *out);

/* Appends to to[0..n_to) those of e's cell neighbours in list[0..n)
 * (vpt_estimators_cell_neighbours) that it does not hold, up to
 * VPT_ESTIMATORS_MAX; returns the new count. */
size_t vpt_estimators_add_cell_neighbours(const VptEstimator *e, const VptEstimator *list, size_t n, VptEstimator *to,
                                          size_t n_to);

/* c with estimator e. */
VptConfig vpt_estimator_apply(const VptConfig *c, const VptEstimator *e);

/* The estimator c names. */
VptEstimator vpt_estimator_of(const VptConfig *c);

/* 1 when a and b are the same estimator: majorant, density format and
 * volume. */
int vpt_estimator_equal(const VptEstimator *a, const VptEstimator *b);

#endif
