/* Statistics for the physics and reference tests: the regularized upper
 * incomplete gamma function, a chi-square goodness-of-fit test with pooling
 * of sparse cells (as in Mitsuba's and pbrt-v4's chi2 tests), Gauss-Legendre
 * quadrature over (cos theta, phi) cells of the sphere, and a small PCG32.
 * Header-only (static inline) because several test files share it. */
#ifndef VPT_TEST_PHYSICS_STATS_H
#define VPT_TEST_PHYSICS_STATS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Q(a, x) = Gamma(a, x) / Gamma(a), a > 0, x >= 0 (Numerical Recipes 6.2:
 * the series for P when x < a + 1, Lentz's continued fraction otherwise).
 * The p-value of a chi-square statistic c with k degrees of freedom is
 * Q(k / 2, c / 2). */
static inline double vpt_test_gamma_q(double a, double x)
{
    if (!(x > 0.0)) return 1.0;
    double lpre = -x + a * log(x) - lgamma(a);
    if (x < a + 1.0) {
        double ap = a, del = 1.0 / a, sum = del;
        for (int n = 0; n < 100000; n++) {
            ap += 1.0;
            del *= x / ap;
            sum += del;
            if (fabs(del) < fabs(sum) * 1e-16) break;
        }
        double p = sum * exp(lpre);
        return p >= 1.0 ? 0.0 : 1.0 - p;
    }
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) break;
    }
    return exp(lpre) * h;
}

typedef struct {
    double expected, observed;
} VptTestCell;

static inline int vpt_test_cell_cmp(const void *a, const void *b)
{
    double x = ((const VptTestCell *)a)->expected, y = ((const VptTestCell *)b)->expected;
    return x < y ? -1 : x > y;
}

typedef struct {
    double pvalue;
    double chi2;
    int dof;
    int cells;            /* after pooling */
    double impossible;    /* samples observed where the expected count is ~0 */
    double total_expected, total_observed;
} VptTestChi2;

/* Pearson's chi-square over n cells. Cells expecting fewer than min_expected
 * samples are pooled (in order of increasing expectation) until each pool
 * reaches it; a final short pool joins the last one. Observations in a cell
 * whose expectation is below 1e-12 of the total are "impossible": the test
 * then reports p = 0. cells[] is reordered. */
static inline VptTestChi2 vpt_test_chi2(VptTestCell *cells, int n, double min_expected)
{
    VptTestChi2 r = {1.0, 0.0, 0, 0, 0.0, 0.0, 0.0};
    for (int i = 0; i < n; i++) {
        r.total_expected += cells[i].expected;
        r.total_observed += cells[i].observed;
    }
    for (int i = 0; i < n; i++)
        if (cells[i].expected < 1e-12 * r.total_expected) r.impossible += cells[i].observed;
    qsort(cells, (size_t)n, sizeof *cells, vpt_test_cell_cmp);
    double pe = 0, po = 0, last_e = 0, last_o = 0;
    int have_last = 0;
    for (int i = 0; i < n; i++) {
        if (cells[i].expected < 1e-12 * r.total_expected) continue;
        pe += cells[i].expected;
        po += cells[i].observed;
        if (pe >= min_expected) {
            if (have_last) {
                r.chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
                r.cells++;
            }
            last_e = pe;
            last_o = po;
            have_last = 1;
            pe = po = 0;
        }
    }
    if (have_last) {
        last_e += pe; /* a short final pool joins the last cell */
        last_o += po;
        r.chi2 += (last_o - last_e) * (last_o - last_e) / last_e;
        r.cells++;
    }
    r.dof = r.cells - 1;
    r.pvalue = r.dof > 0 ? vpt_test_gamma_q(0.5 * r.dof, 0.5 * r.chi2) : 1.0;
    if (r.impossible > 0) r.pvalue = 0.0;
    return r;
}

/* Sidak-corrected per-test significance for `ntests` tests at overall `alpha`. */
static inline double vpt_test_sidak(double alpha, int ntests) { return 1.0 - pow(1.0 - alpha, 1.0 / ntests); }

/* 5-point Gauss-Legendre on [-1, 1]. */
static const double vpt_test_gl_x[5] = {-0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831,
                                        0.9061798459386640};
static const double vpt_test_gl_w[5] = {0.2369268850561891, 0.4786286704993665, 0.5688888888888889,
                                        0.4786286704993665, 0.2369268850561891};

typedef double (*VptTestSphereFn)(const void *ctx, double x, double y, double z);

/* Integral of f over the directions with cos(theta) = z in [c0, c1] and phi in
 * [p0, p1] (solid angle measure, d omega = dz dphi), on nc x np sub-cells of
 * 5 x 5 Gauss-Legendre points each. */
static inline double vpt_test_integrate_cell(VptTestSphereFn f, const void *ctx, double c0, double c1, double p0,
                                             double p1, int nc, int np)
{
    double sum = 0.0, hc = (c1 - c0) / nc, hp = (p1 - p0) / np;
    for (int i = 0; i < nc; i++)
        for (int a = 0; a < 5; a++) {
            double z = c0 + hc * (i + 0.5 + 0.5 * vpt_test_gl_x[a]);
            double s = sqrt(fmax(0.0, 1.0 - z * z));
            double row = 0.0;
            for (int j = 0; j < np; j++)
                for (int b = 0; b < 5; b++) {
                    double phi = p0 + hp * (j + 0.5 + 0.5 * vpt_test_gl_x[b]);
                    row += vpt_test_gl_w[b] * f(ctx, s * cos(phi), s * sin(phi), z);
                }
            sum += vpt_test_gl_w[a] * row;
        }
    return sum * 0.25 * hc * hp;
}

/* Integral of g(z) over z in [a, b] with n sub-intervals warped as
 * z = b - (b - a) t^4 (t uniform), which concentrates points at z = b where
 * phase functions and microfacet distributions peak. */
static inline double vpt_test_integrate_peak(double (*g)(const void *ctx, double z), const void *ctx, double a,
                                             double b, int n)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 5; k++) {
            double t = (i + 0.5 + 0.5 * vpt_test_gl_x[k]) / n;
            double z = b - (b - a) * t * t * t * t;
            double dz = (b - a) * 4.0 * t * t * t / n; /* |dz/dt| dt, dt = 1/n */
            sum += 0.5 * vpt_test_gl_w[k] * dz * g(ctx, z);
        }
    return sum;
}

/* PCG32 (O'Neill), for test inputs that must not come from the generator
 * under test. */
typedef struct {
    uint64_t state, inc;
} VptTestPcg;

static inline uint32_t vpt_test_pcg32(VptTestPcg *r)
{
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xs = (uint32_t)(((old >> 18u) ^ old) >> 27u), rot = (uint32_t)(old >> 59u);
    return (xs >> rot) | (xs << ((-rot) & 31));
}
static inline VptTestPcg vpt_test_pcg_seed(uint64_t seed)
{
    VptTestPcg r = {0, (seed << 1u) | 1u};
    vpt_test_pcg32(&r);
    r.state += 0x853c49e6748fea9bULL + seed;
    vpt_test_pcg32(&r);
    return r;
}
static inline double vpt_test_pcg_u01(VptTestPcg *r) { return vpt_test_pcg32(r) * (1.0 / 4294967296.0); }

#endif
