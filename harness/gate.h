/* The correctness gate: is a variant's image right?
 *
 * Two checks. (1) Exact replay: every schedule traces the same paths for one
 * seed (vpt_physics.h), so a variant's counters must equal the reference
 * variant's exactly and its image may differ only by the order of the
 * floating-point sums: vpt_gate_same_paths. (2) Statistics: GPU and CPU use
 * different math libraries and texture filtering hardware, so their images
 * agree only in distribution: vpt_gate_statistical compares block means
 * against the reference's per-pixel variance. A variant that fails is
 * status invalid_output and is never ranked. */
#ifndef VPT_HARNESS_GATE_H
#define VPT_HARNESS_GATE_H

#include <stddef.h>

typedef struct {
    double max_rel_diff;   /* max over pixels of |a-b| / (|b| + 1e-3) */
    double mean_rel_diff;  /* |mean(a) - mean(b)| / mean(b) */
    double max_block_z;    /* statistical check: largest |z| over blocks */
    double mean_block_z2;  /* statistical check: mean z^2 over blocks (1 expected) */
    int nonfinite;         /* pixels with NaN or Inf */
} VptGateReport;

/* The relative error a float image's pixel sums may carry from rounding
 * alone: summing n samples in float errs by up to about n 2^-24 relative,
 * so 1e-4 covers pixels of a thousand samples or more in any order. */
#define VPT_GATE_FLOAT_SUM_TOL 1e-4

/* Images of n pixels (3 floats each). Passes when nothing is non-finite and
 * max_rel_diff <= tol (VPT_GATE_FLOAT_SUM_TOL absorbs summation order). */
int vpt_gate_same_paths(const float *img, const float *ref, size_t npix, double tol, VptGateReport *rep);

/* img vs ref (mean images, w x h) with ref_var the per-pixel variance of
 * ref's mean and img_var img's (either may be NULL: then twice the other is
 * used); compares bxb block means, each block's variance floored by the
 * rounding of a float sum (VPT_GATE_FLOAT_SUM_TOL of its mean): a block
 * without Monte Carlo noise may then differ by its rounding and no more.
 * Passes when max |z| <= zmax and the mean z^2 <= 1 + 5 sqrt(2 / nblocks)
 * (a chi-square bound). */
int vpt_gate_statistical(const float *img, const float *img_var, const float *ref, const float *ref_var, int w, int h,
                         int b, double zmax, VptGateReport *rep);

#endif
