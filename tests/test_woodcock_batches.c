/* Woodcock steps: flights taken in batches of four steps, as the GPU
 * kernels with lookahead=4 take them (this file compiles the shared physics
 * with VPT_LOOKAHEAD 4; the reference renderer and every other test use 1),
 * and the distributions of a step's two draws. */
#define VPT_LOOKAHEAD 4
#include "reference/cpu_render.h"
#include "base/error.h"
#include "tests/harness/test.h"
#include "tests/test_physics_stats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A batch of four steps hashes twice (steps 2p and 2p + 1 share the words
 * of pair p) on the promise that flights start at even draws; a flight
 * traced that way must match the steps taken one at a time from
 * vpt_woodcock_step_words, bit for bit, in distance, draws and steps. On
 * manix at its own density scale, so flights span many batches, some of
 * them starting at an odd draw before vpt_path_extend_begin aligns it. */
TEST(reference_woodcock_batches_of_four_trace_the_same_flight_as_single_steps)
{
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    VptRenderSettings rs = {24, 24, 2, 5u, 0, -1, 1};
    VptParams p;
    vpt_params_init(&p, s, &rs);
    VptMedium m;
    vpt_cpu_medium_init(&m, s);
    vpt_u64 nee_steps = 0; /* no sun: interactions take no shadow steps */
    int flights = 0, odd_starts = 0, long_ones = 0;
    for (vpt_u64 id = 0; id < (vpt_u64)p.npaths; id++) {
        VptPath a;
        vpt_path_start(&p, id, &a);
        for (int bounce = 0; bounce < 6; bounce++) {
            const vpt_u32 draw_before = a.draw;
            float t0, tmax;
            if (!vpt_path_extend_begin(&p, &a, &t0, &tmax)) { /* missed the box or met its surface */
                if (a.event == VPT_EV_ESCAPED || vpt_path_interact(&p, &m, &a, &nee_steps) != VPT_PATH_ALIVE) break;
                continue;
            }
            odd_starts += draw_before & 1u;
            CHECK_EQ_INT(a.draw & 1u, 0);
            vpt_u32 draw_b = a.draw;
            vpt_u64 steps_b = 0;
            const float t_b = vpt_woodcock(&p, &m, a.o, a.d, t0, tmax, a.path, &draw_b, &steps_b);
            /* one step at a time */
            vpt_vec3 ou, du;
            vpt_woodcock_ray(&p, a.o, a.d, &ou, &du);
            float t = t0;
            vpt_u32 draw = a.draw;
            vpt_u64 steps = 0;
            for (;;) {
                float level;
                t = vpt_woodcock_advance(&p, t, vpt_woodcock_free_path(&p, vpt_step_stream(p.seed, a.path), draw, &level));
                draw++;
                steps++;
                float dens = t < tmax ? vpt_medium_density(&m, vpt_woodcock_point(ou, du, t)) : 0.0f;
                if (vpt_woodcock_stops(t, tmax, level, dens)) break;
            }
            CHECK_MSG(memcmp(&t, &t_b, sizeof t) == 0, "path %llu: t %.9g vs %.9g", (unsigned long long)id, t, t_b);
            CHECK_EQ_INT(draw, draw_b);
            CHECK_EQ_INT(steps, steps_b);
            flights++;
            long_ones += steps > 12;
            a.draw = draw_b;
            vpt_path_extend_finish(&p, &a, t_b, tmax);
            if (a.event == VPT_EV_ESCAPED || vpt_path_interact(&p, &m, &a, &nee_steps) != VPT_PATH_ALIVE) break;
        }
    }
    vpt_test_log("%d flights, %d over 12 steps, %d aligned from an odd draw", flights, long_ones, odd_starts);
    CHECK(flights > 500);
    CHECK(long_ones >= 50);
    CHECK(odd_starts >= 50);
    vpt_scene_destroy(s);
}

/* p-value of the chi2 test that u[0..n) is uniform on [0, 1). */
static double chi2_uniform01(const double *u, long n, int bins)
{
    VptTestCell *c = calloc((size_t)bins, sizeof *c);
    if (!c) return 0.0;
    for (int i = 0; i < bins; i++) c[i].expected = (double)n / bins;
    for (long i = 0; i < n; i++) c[(int)(u[i] * bins)].observed += 1;
    const VptTestChi2 r = vpt_test_chi2(c, bins, 5.0);
    free(c);
    return r.pvalue;
}

/* A step's free path (in ln 2 mean free paths) is exponential: 1 - 2^-x is
 * uniform; its acceptance level is uniform on [0, density_max). */
TEST(physics_woodcock_step_draws_are_exponential_and_uniform)
{
    VptParams P;
    memset(&P, 0, sizeof P);
    P.density_max = 0.75f;
    enum { N = 400000, BINS = 50 };
    double *u = malloc(N * sizeof *u), *v = malloc(N * sizeof *v);
    REQUIRE(u && v);
    const VptStepStream ss = vpt_step_stream(9u, 77u);
    for (int i = 0; i < N; i++) {
        vpt_u32 wx, wy;
        vpt_woodcock_step_words(ss, (vpt_u32)i, &wx, &wy);
        float level;
        const float x = vpt_woodcock_free_path_of(&P, wx, wy, &level);
        REQUIRE(x >= 0.0f && x <= 23.0f);
        REQUIRE(level >= 0.0f && level < P.density_max);
        u[i] = 1.0 - exp2(-(double)x);
        v[i] = level / P.density_max;
    }
    const double pu = chi2_uniform01(u, N, BINS), pv = chi2_uniform01(v, N, BINS);
    vpt_test_log("free path p = %.3g, acceptance level p = %.3g (chi2, %d bins, %d steps)", pu, pv, BINS, N);
    CHECK(pu > 1e-3);
    CHECK(pv > 1e-3);
    free(u);
    free(v);
}
