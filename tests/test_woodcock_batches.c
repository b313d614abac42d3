/* Woodcock flights taken in batches of four steps, as the GPU kernels with
 * lookahead=4 take them: this file compiles the shared physics with
 * VPT_LOOKAHEAD 4 (the reference renderer and every other test use 1). */
#define VPT_LOOKAHEAD 4
#include "reference/cpu_render.h" /* first: it defines VPT_MEDIUM */
#include "base/error.h"
#include "tests/harness/test.h"
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
    int flights = 0, odd_starts = 0, long_ones = 0;
    for (vpt_u64 id = 0; id < (vpt_u64)p.npaths; id++) {
        VptPath a;
        vpt_path_start(&p, id, &a);
        for (int bounce = 0; bounce < 6; bounce++) {
            const vpt_u32 draw_before = a.draw;
            float t0, tmax;
            if (!vpt_path_extend_begin(&p, &a, &t0, &tmax)) { /* missed the box or met its surface */
                if (a.event == VPT_EV_ESCAPED || vpt_path_interact(&p, &m, &a) != VPT_PATH_ALIVE) break;
                continue;
            }
            odd_starts += draw_before & 1u;
            CHECK_EQ_INT(a.draw & 1u, 0);
            vpt_u32 draw_b = a.draw;
            vpt_u64 steps_b = 0;
            const float t_b = vpt_woodcock(&p, &m, a.o, a.d, t0, tmax, a.path, &draw_b, &steps_b);
            /* one step at a time */
            const vpt_vec3 ou = vpt_world_to_uvw(&p, a.o), du = vpt_mul(a.d, p.inv_extent);
            float t = t0;
            vpt_u32 draw = a.draw;
            vpt_u64 steps = 0;
            for (;;) {
                float level;
                t = vpt_woodcock_advance(&p, t, vpt_woodcock_free_path(&p, a.path, draw, &level));
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
            if (a.event == VPT_EV_ESCAPED || vpt_path_interact(&p, &m, &a) != VPT_PATH_ALIVE) break;
        }
    }
    vpt_test_log("%d flights, %d over 12 steps, %d aligned from an odd draw", flights, long_ones, odd_starts);
    CHECK(flights > 500);
    CHECK(long_ones >= 50);
    CHECK(odd_starts >= 50);
    vpt_scene_destroy(s);
}
