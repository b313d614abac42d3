/* Timing statistics for repeated measurements (the nvbench measure_cold
 * idea): after a warm-up, repeat until the 95% confidence half-width of the
 * mean is at most `target_rel` of the median, within caps on repetitions and
 * time; report the median and the spread, never a single launch. */
#ifndef VPT_HARNESS_MEASURE_H
#define VPT_HARNESS_MEASURE_H

typedef struct {
    int min_reps;        /* at least this many timed runs (default 5) */
    int max_reps;        /* at most (default 50) */
    double max_seconds;  /* stop adding runs after this much measuring (default 10) */
    double target_rel;   /* stop when CI95 half-width <= target_rel * median (default 0.01) */
} VptMeasurePolicy;

VptMeasurePolicy vpt_measure_policy_default(void);

typedef struct {
    int n;
    double median, mean, min, max;
    double ci95_half;    /* t-based half-width of the mean's 95% interval */
    double rel_ci95;     /* ci95_half / median */
    double rel_spread;   /* (q75 - q25) / median */
} VptTimingStats;

/* Summarizes n samples (sorted copy made internally). */
void vpt_timing_stats(const double *samples, int n, VptTimingStats *out);

/* Whether a series of n samples meets the policy's stop rule. */
int vpt_measure_done(const VptMeasurePolicy *p, const double *samples, int n, double elapsed_s);

/* Two-sided Student t quantile for 95% with df degrees of freedom. */
double vpt_t95(int df);

#endif
