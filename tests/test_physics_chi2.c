/* Chi-square goodness-of-fit tests of the direction samplers in
 * physics/vpt_physics.h against their own pdfs (the method of pbrt-v4's and
 * Mitsuba's chi2 tests): 1e6 samples binned on the sphere in
 * (cos theta, phi), expected counts from numerical integration of the pdf over
 * each bin, sparse bins pooled, and a p-value from the incomplete gamma
 * function, rejected below a Sidak-corrected significance. A deliberately
 * wrong sampler must fail, so the test can fail. */
#include "tests/harness/test.h"

#include "physics/vpt_physics.h"
#include "tests/test_physics_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    NSAMPLES = 1000000,
    NPILOT = 20000,
    NCOS = 20,
    NPHI = 40,
    /* every chi2 test in this file that must pass, for the Sidak correction:
     * 7 Henyey-Greenstein + 9 GGX visible normals */
    NTESTS = 16
};
#define SIGNIFICANCE 0.01

typedef vpt_vec3 (*SampleFn)(const void *ctx, float u1, float u2);
typedef double (*PdfFn)(const void *ctx, double x, double y, double z);

typedef struct {
    SampleFn sample;
    PdfFn pdf;
    const void *ctx;
    double cmin;      /* -1: whole sphere, 0: upper hemisphere */
} Chi2Spec;

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static vpt_vec3 draw(const Chi2Spec *sp, vpt_u32 seed, vpt_u64 i)
{
    vpt_u4 r = vpt_rng(seed, i, 0u);
    return sp->sample(sp->ctx, vpt_u01(r.x), vpt_u01(r.y));
}

/* Bins: NPHI equal phi bins times up to NCOS cos(theta) bins whose edges are
 * quantiles of an independent pilot run (another seed), so that peaked
 * distributions still spread over many bins; the edges do not depend on the
 * data under test, which keeps the chi2 statistic valid. */
static VptTestChi2 chi2_run(const Chi2Spec *sp, vpt_u32 seed, const char *label)
{
    double *pilot = malloc(NPILOT * sizeof *pilot);
    REQUIRE(pilot);
    for (int i = 0; i < NPILOT; i++) pilot[i] = draw(sp, seed ^ 0x9e3779b9u, (vpt_u64)i).z;
    qsort(pilot, NPILOT, sizeof *pilot, dcmp);
    double edges[NCOS + 1];
    int nc = 0;
    edges[0] = sp->cmin;
    for (int i = 1; i < NCOS; i++) {
        double e = pilot[(size_t)i * NPILOT / NCOS];
        if (e > edges[nc] + 1e-7 && e < 1.0 - 1e-7) edges[++nc] = e;
    }
    edges[++nc] = 1.0;
    free(pilot);

    int nbins = nc * NPHI;
    VptTestCell *cells = calloc((size_t)nbins, sizeof *cells);
    REQUIRE(cells);
    double outside = 0; /* samples below cmin, non-unit or NaN */
    for (vpt_u64 i = 0; i < NSAMPLES; i++) {
        vpt_vec3 w = draw(sp, seed, i);
        double len = sqrt((double)w.x * w.x + (double)w.y * w.y + (double)w.z * w.z);
        if (!(fabs(len - 1.0) < 1e-4) || !(w.z >= sp->cmin)) {
            outside += 1;
            continue;
        }
        double z = w.z > 1.0f ? 1.0 : (double)w.z;
        int lo = 0, hi = nc; /* edges[lo] <= z < edges[hi] */
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (z >= edges[mid]) lo = mid;
            else hi = mid;
        }
        double phi = atan2((double)w.y, (double)w.x) + M_PI;
        int pb = (int)(phi / (2.0 * M_PI) * NPHI);
        pb = pb < 0 ? 0 : pb >= NPHI ? NPHI - 1 : pb;
        cells[lo * NPHI + pb].observed += 1;
    }
    for (int c = 0; c < nc; c++)
        for (int p = 0; p < NPHI; p++) {
            double p0 = -M_PI + 2.0 * M_PI * p / NPHI, p1 = -M_PI + 2.0 * M_PI * (p + 1) / NPHI;
            cells[c * NPHI + p].expected =
                NSAMPLES * vpt_test_integrate_cell(sp->pdf, sp->ctx, edges[c], edges[c + 1], p0, p1, 8, 8);
        }
    VptTestChi2 r = vpt_test_chi2(cells, nbins, 5.0);
    free(cells);
    if (outside > 0) {
        r.impossible += outside;
        r.pvalue = 0.0;
    }
    vpt_test_log("%s: chi2 %.1f, dof %d, p = %.4g, expected total %.6f of %d, impossible %.0f", label, r.chi2, r.dof,
                 r.pvalue, r.total_expected / NSAMPLES, NSAMPLES, r.impossible);
    return r;
}

/* ---------------------------------------------------------- Henyey-Greenstein */

typedef struct {
    float g_eval, g_sample; /* differ only in the deliberately wrong sampler */
    vpt_vec3 d;
} HgCtx;

static vpt_vec3 hg_sample(const void *ctx, float u1, float u2)
{
    const HgCtx *c = ctx;
    return vpt_hg_sample(c->g_sample, c->d, u1, u2);
}
static double hg_pdf(const void *ctx, double x, double y, double z)
{
    const HgCtx *c = ctx;
    double cosv = x * c->d.x + y * c->d.y + z * c->d.z;
    return vpt_hg_eval(c->g_eval, (float)cosv);
}

static double hg_pvalue(float g, float g_sample, vpt_vec3 d, vpt_u32 seed)
{
    HgCtx c = {g, g_sample, vpt_normalize(d)};
    Chi2Spec sp = {hg_sample, hg_pdf, &c, -1.0};
    char label[128];
    snprintf(label, sizeof label, "HG g=%g (sampled with %g), d=(%.2f,%.2f,%.2f)", g, g_sample, c.d.x, c.d.y, c.d.z);
    VptTestChi2 r = chi2_run(&sp, seed, label);
    CHECK_NEAR(r.total_expected / NSAMPLES, 1.0, 1e-3);
    return r.pvalue;
}

TEST(physics_chi2_hg)
{
    const double alpha = vpt_test_sidak(SIGNIFICANCE, NTESTS);
    const float gs[5] = {-0.9f, -0.3f, 0.0f, 0.5f, 0.95f};
    for (int i = 0; i < 5; i++) {
        double p = hg_pvalue(gs[i], gs[i], vpt_v3(0, 0, 1), 1000u + (vpt_u32)i);
        CHECK_MSG(p >= alpha, "HG g=%g about +z: chi2 p-value %.3g < %.3g", gs[i], p, alpha);
    }
    /* Around a tilted direction (exercises the tangent frame too). */
    const float gt[2] = {0.95f, -0.3f};
    for (int i = 0; i < 2; i++) {
        double p = hg_pvalue(gt[i], gt[i], vpt_v3(0.3f, -0.8f, 0.5f), 2000u + (vpt_u32)i);
        CHECK_MSG(p >= alpha, "HG g=%g about a tilted axis: chi2 p-value %.3g < %.3g", gt[i], p, alpha);
    }
}

TEST(physics_chi2_hg_detects_wrong_sampler)
{
    const double alpha = vpt_test_sidak(SIGNIFICANCE, NTESTS);
    /* The thesis' |g| bug: a negative g sampled as positive. */
    double p = hg_pvalue(-0.3f, 0.3f, vpt_v3(0, 0, 1), 3000u);
    CHECK_MSG(p < alpha, "sampling g=0.3 for g=-0.3 passed the chi2 (p %.3g)", p);
    /* A subtler error: g off by 0.02. */
    p = hg_pvalue(0.5f, 0.52f, vpt_v3(0.3f, -0.8f, 0.5f), 3001u);
    CHECK_MSG(p < alpha, "sampling g=0.52 for g=0.5 passed the chi2 (p %.3g)", p);
}

/* ------------------------------------------------------ GGX visible normals */

typedef struct {
    float alpha_eval, alpha_sample;
    vpt_vec3 wo;
} GgxCtx;

static vpt_vec3 ggx_sample(const void *ctx, float u1, float u2)
{
    const GgxCtx *c = ctx;
    return vpt_ggx_sample_vndf(c->wo, c->alpha_sample, u1, u2);
}
static double ggx_pdf(const void *ctx, double x, double y, double z)
{
    const GgxCtx *c = ctx;
    return vpt_ggx_vndf_pdf(c->wo, vpt_v3((float)x, (float)y, (float)z), c->alpha_eval);
}

static double ggx_pvalue(float alpha, float alpha_sample, float theta_deg, vpt_u32 seed)
{
    float th = theta_deg * VPT_PI / 180.0f;
    /* An azimuth off the axes, so that phi binning sees an asymmetric lobe. */
    GgxCtx c = {alpha, alpha_sample, vpt_v3(sinf(th) * cosf(0.7f), sinf(th) * sinf(0.7f), cosf(th))};
    Chi2Spec sp = {ggx_sample, ggx_pdf, &c, 0.0};
    char label[128];
    snprintf(label, sizeof label, "GGX VNDF alpha=%g (sampled with %g), theta_o=%g deg", alpha, alpha_sample,
             theta_deg);
    VptTestChi2 r = chi2_run(&sp, seed, label);
    CHECK_NEAR(r.total_expected / NSAMPLES, 1.0, 1e-3);
    return r.pvalue;
}

TEST(physics_chi2_ggx_vndf)
{
    const double alpha = vpt_test_sidak(SIGNIFICANCE, NTESTS);
    const float as[3] = {0.1f, 0.5f, 1.0f}, ths[3] = {0.0f, 45.0f, 80.0f};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            double p = ggx_pvalue(as[i], as[i], ths[k], 4000u + (vpt_u32)(3 * i + k));
            CHECK_MSG(p >= alpha, "GGX VNDF alpha=%g theta_o=%g: chi2 p-value %.3g < %.3g", as[i], ths[k], p, alpha);
        }
}

TEST(physics_chi2_ggx_detects_wrong_sampler)
{
    const double alpha = vpt_test_sidak(SIGNIFICANCE, NTESTS);
    double p = ggx_pvalue(0.5f, 0.55f, 45.0f, 5000u);
    CHECK_MSG(p < alpha, "sampling alpha=0.55 for alpha=0.5 passed the chi2 (p %.3g)", p);
    p = ggx_pvalue(0.1f, 0.105f, 0.0f, 5001u);
    CHECK_MSG(p < alpha, "sampling alpha=0.105 for alpha=0.1 passed the chi2 (p %.3g)", p);
}

/* Visible-normal samples checked against the plain NDF pdf D(m) cos(theta_m),
 * the classic mix-up: the test must notice the mismatch. */
static double ggx_ndf_pdf(const void *ctx, double x, double y, double z)
{
    const GgxCtx *c = ctx;
    return vpt_ggx_D(vpt_v3((float)x, (float)y, (float)z), c->alpha_eval) * z;
}

TEST(physics_chi2_detects_wrong_pdf)
{
    const double alpha = vpt_test_sidak(SIGNIFICANCE, NTESTS);
    float th = 60.0f * VPT_PI / 180.0f;
    GgxCtx c = {0.8f, 0.8f, vpt_v3(sinf(th), 0.0f, cosf(th))};
    Chi2Spec sp = {ggx_sample, ggx_ndf_pdf, &c, 0.0};
    VptTestChi2 r = chi2_run(&sp, 6000u, "VNDF samples against D(m) cos");
    CHECK_MSG(r.pvalue < alpha, "VNDF samples matched the NDF pdf (p %.3g)", r.pvalue);
}

/* ---------------------------------------------------------- the statistics */

TEST(physics_stats_incomplete_gamma)
{
    /* Q(1, x) = exp(-x); Q(1/2, x) = erfc(sqrt(x)); Q(k, x) for integer k is
     * a Poisson tail. Both branches (series, continued fraction) are hit. */
    for (double x = 0.01; x < 40; x *= 1.7) {
        CHECK_NEAR(vpt_test_gamma_q(1.0, x), exp(-x), 1e-12 + 1e-10 * exp(-x));
        CHECK_NEAR(vpt_test_gamma_q(0.5, x), erfc(sqrt(x)), 1e-12 + 1e-9 * erfc(sqrt(x)));
        double term = exp(-x), poisson = 0;
        for (int i = 0; i < 10; i++) {
            poisson += term;
            term *= x / (i + 1);
        }
        CHECK_NEAR(vpt_test_gamma_q(10.0, x), poisson, 1e-11);
    }
    CHECK(vpt_test_gamma_q(3.0, 0.0) == 1.0);
    /* chi2 with 779 dof at its mean has p ~ 0.49. */
    double p = vpt_test_gamma_q(779 / 2.0, 779 / 2.0);
    CHECK(p > 0.45 && p < 0.5);
}

TEST(physics_stats_chi2_pooling)
{
    /* Exact expectations give chi2 0 and p 1; an impossible observation gives
     * p 0; a gross excess gives p ~ 0. */
    VptTestCell c[6] = {{100, 100}, {1, 1}, {2, 2}, {3, 3}, {50, 50}, {0, 0}};
    VptTestChi2 r = vpt_test_chi2(c, 6, 5.0);
    CHECK_NEAR(r.chi2, 0.0, 1e-12);
    CHECK_EQ_INT(r.cells, 3); /* {1, 2, 3} pooled, then 50 and 100 */
    CHECK(r.pvalue == 1.0);
    VptTestCell d[3] = {{100, 100}, {100, 100}, {0, 1}};
    r = vpt_test_chi2(d, 3, 5.0);
    CHECK(r.impossible == 1 && r.pvalue == 0.0);
    VptTestCell e[4] = {{1000, 1200}, {1000, 800}, {1000, 1000}, {1000, 1000}};
    r = vpt_test_chi2(e, 4, 5.0);
    CHECK_NEAR(r.chi2, 80.0, 1e-9);
    CHECK(r.pvalue < 1e-15);
}
