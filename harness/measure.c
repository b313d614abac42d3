#include "harness/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

VptMeasurePolicy vpt_measure_policy_default(void)
{
    VptMeasurePolicy p = {5, 50, 10.0, 0.01};
    return p;
}

double vpt_t95(int df)
{
    static const double t[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                               2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) return INFINITY;
    if (df <= 30) return t[df];
    return 1.960 + 2.4 / df; /* within 0.2% of the exact quantile beyond 30 */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    double f = pos - i;
    return i + 1 < n ? s[i] * (1 - f) + s[i + 1] * f : s[i];
}

void vpt_timing_stats(const double *samples, int n, VptTimingStats *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n <= 0) return;
    double *s = malloc(sizeof(double) * (size_t)n);
    if (!s) return;
    memcpy(s, samples, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += s[i];
    out->mean = sum / n;
    out->median = quantile(s, n, 0.5);
    out->min = s[0];
    out->max = s[n - 1];
    double var = 0;
    for (int i = 0; i < n; i++) var += (s[i] - out->mean) * (s[i] - out->mean);
    var = n > 1 ? var / (n - 1) : 0;
    out->ci95_half = n > 1 ? vpt_t95(n - 1) * sqrt(var / n) : INFINITY;
    out->rel_ci95 = out->median > 0 ? out->ci95_half / out->median : INFINITY;
    out->rel_spread = out->median > 0 ? (quantile(s, n, 0.75) - quantile(s, n, 0.25)) / out->median : 0;
    free(s);
}

int vpt_measure_done(const VptMeasurePolicy *p, const double *samples, int n, double elapsed_s)
{
    if (n >= p->max_reps) return 1;
    if (n < p->min_reps) return 0;
    if (elapsed_s >= p->max_seconds) return 1;
    VptTimingStats st;
    vpt_timing_stats(samples, n, &st);
    return st.rel_ci95 <= p->target_rel;
}
