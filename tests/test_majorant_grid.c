/* The majorant grid and the density texture formats (issue 16): the grid is
 * a bound, the DDA walk maps optical depth to distance exactly as the
 * majorant's integral along the ray says, on the awkward rays too; flights
 * through the grid are unbiased (white furnace, transmittance); batches of
 * four steps trace the same flights as single steps; the formats' encodings
 * are the ones the hardware reads. */
#define VPT_LOOKAHEAD 4
#include "reference/cpu_render.h"

#include "base/error.h"
#include "codegen/config.h"
#include "harness/gate.h"
#include "tests/harness/test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}
static float frand(uint32_t *s) { return (float)lcg(s) / 16777216.0f; }

/* The params of the random volumes' box [-1, 1] x [-0.6, 0.6] x [-0.8, 0.8]
 * with the global majorant dmax at the given density scale. */
static VptParams box_params(float density_scale, float dmax)
{
    VptParams P;
    memset(&P, 0, sizeof P);
    P.box_min = vpt_v3(-1.0f, -0.6f, -0.8f);
    P.box_max = vpt_v3(1.0f, 0.6f, 0.8f);
    P.inv_extent = vpt_v3(0.5f, 1.0f / 1.2f, 1.0f / 1.6f);
    P.density_scale = density_scale;
    P.density_max = dmax;
    P.free_path_unit = VPT_LN2 / (P.density_scale * dmax);
    P.tau_per_density = P.density_scale / VPT_LN2;
    return P;
}

/* A random sparse volume: mostly zero, some blobs and isolated voxels. */
static float *random_volume(int nx, int ny, int nz, uint32_t seed)
{
    float *d = calloc((size_t)nx * ny * nz, sizeof *d);
    if (!d) return NULL;
    uint32_t s = seed;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++)
        if (frand(&s) < 0.07f) d[i] = frand(&s) * (frand(&s) < 0.1f ? 10.0f : 1.0f);
    return d;
}

/* The medium of density d with the cells of a majorant grid g
 * (vpt_majorant_grid_cells), or with none (g NULL). */
static VptMedium medium_of(int nx, int ny, int nz, const float *d, const float *cells, const VptMajorantGrid *g)
{
    VptMedium m;
    memset(&m, 0, sizeof m);
    m.nx = nx;
    m.ny = ny;
    m.nz = nz;
    m.density = d;
    m.majorant = cells;
    m.minorant = cells && g ? cells + 2 * g->count : NULL;
    return m;
}

TEST(majorant_grid_bounds_the_filtered_density_in_every_cell_and_format)
{
    const int sizes[][3] = {{16, 16, 16}, {13, 7, 21}, {1, 5, 9}, {33, 2, 17}};
    const int cells[] = {1, 2, 4, 8, 16, 32};
    int checked = 0, empty_cells = 0;
    for (int si = 0; si < 4; si++)
        for (int ci = 0; ci < 6; ci++)
            for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++) {
                const int nx = sizes[si][0], ny = sizes[si][1], nz = sizes[si][2], C = cells[ci];
                const size_t n = (size_t)nx * ny * nz;
                float *d = random_volume(nx, ny, nz, 7u + (uint32_t)(si * 31 + ci));
                REQUIRE(d);
                float dmax = 0.0f;
                for (size_t i = 0; i < n; i++) dmax = d[i] > dmax ? d[i] : dmax;
                float *tex = malloc(n * sizeof *tex);
                void *texels = malloc(n * 4);
                REQUIRE(tex && texels);
                vpt_density_format_encode((VptDensityFormat)f, d, n, dmax, texels, tex, 2);
                VptMajorantGrid g;
                REQUIRE_MSG(vpt_majorant_grid_build(d, nx, ny, nz, C, (VptDensityFormat)f, dmax, 2, &g) == 0, "%s",
                            vpt_errmsg());
                CHECK_EQ_INT(g.n[0], (nx + C - 1) / C);
                VptMedium m = medium_of(nx, ny, nz, tex, NULL, NULL); /* the density only */
                uint32_t s = 99u + (uint32_t)f;
                const int nv[3] = {nx, ny, nz};
                for (size_t cell = 0; cell < g.count; cell++) {
                    const int c[3] = {(int)(cell % (size_t)g.n[0]), (int)(cell / (size_t)g.n[0] % (size_t)g.n[1]),
                                      (int)(cell / ((size_t)g.n[0] * g.n[1]))};
                    empty_cells += g.m[cell] <= 0.0f;
                    for (int k = 0; k < 40; k++) {
                        /* a point of the cell, or up to 0.49 voxel beyond one of its faces */
                        float uvw[3];
                        for (int a = 0; a < 3; a++) {
                            float lo = (float)(c[a] * C) - 0.49f, hi = (float)((c[a] + 1) * C) + 0.49f;
                            float v = k < 8 ? ((k >> a) & 1 ? hi : lo) : lo + frand(&s) * (hi - lo);
                            uvw[a] = v / (float)nv[a];
                        }
                        float val = vpt_medium_density(&m, vpt_v3(uvw[0], uvw[1], uvw[2]));
                        if (!(val <= (g.m[cell] > 0.0f ? g.m[cell] : 0.0f)))
                            CHECK_MSG(0, "%dx%dx%d C=%d %s: cell %zu majorant %.9g < density %.9g at (%g %g %g)", nx, ny,
                                      nz, C, vpt_density_format_name((VptDensityFormat)f), cell, g.m[cell], val,
                                      uvw[0], uvw[1], uvw[2]);
                        checked++;
                    }
                }
                /* an empty cell's cube of radius k holds only empty cells */
                for (size_t cell = 0; cell < g.count; cell++) {
                    if (g.m[cell] > 0.0f) continue;
                    CHECK(g.m[cell] <= -1.0f && g.m[cell] >= -(float)VPT_MAJORANT_EMPTY_REACH_MAX);
                    const int k = (int)(-g.m[cell]);
                    const int c[3] = {(int)(cell % (size_t)g.n[0]), (int)(cell / (size_t)g.n[0] % (size_t)g.n[1]),
                                      (int)(cell / ((size_t)g.n[0] * g.n[1]))};
                    for (int z = c[2] - k + 1; z <= c[2] + k - 1; z++)
                        for (int y = c[1] - k + 1; y <= c[1] + k - 1; y++)
                            for (int x = c[0] - k + 1; x <= c[0] + k - 1; x++) {
                                if (x < 0 || y < 0 || z < 0 || x >= g.n[0] || y >= g.n[1] || z >= g.n[2]) continue;
                                const float v = g.m[(size_t)x + (size_t)g.n[0] * ((size_t)y + (size_t)g.n[1] * z)];
                                if (v > 0.0f)
                                    CHECK_MSG(0, "cell %zu claims an empty cube of radius %d, but (%d %d %d) is %g",
                                              cell, k, x, y, z, v);
                            }
                }
                vpt_majorant_grid_free(&g);
                free(d);
                free(tex);
                free(texels);
            }
    vpt_test_log("%d points checked, %d empty cells", checked, empty_cells);
    CHECK(empty_cells > 100); /* the sparse volumes do have empty cells: crossed without a step */
    VptMajorantGrid g;
    float one = 1.0f;
    CHECK(vpt_majorant_grid_build(&one, 1, 1, 1, 3, VPT_DENSITY_F32, 1.0f, 1, &g) != 0); /* not a power of two */
    CHECK_STR_CONTAINS(vpt_errmsg(), "power of two");
    CHECK(vpt_majorant_grid_build(&one, 1, 1, 1, 2048, VPT_DENSITY_F32, 1.0f, 1, &g) != 0);
}

/* The optical depth of the majorant along o + t d from t0 to t, by fine
 * quadrature over the cells' piecewise-constant majorant. */
static double majorant_depth(const VptParams *P, const VptMajorantGrid *g, vpt_vec3 ou, vpt_vec3 du, double t0,
                             double t, int samples)
{
    double sum = 0.0, h = (t - t0) / samples;
    for (int i = 0; i < samples; i++) {
        double tt = t0 + (i + 0.5) * h;
        const double p[3] = {ou.x + du.x * tt, ou.y + du.y * tt, ou.z + du.z * tt};
        int c[3];
        for (int a = 0; a < 3; a++) {
            double q = p[a] * P->mg_per_uvw[a];
            c[a] = q < 0 ? 0 : q >= P->mg_cells[a] ? P->mg_cells[a] - 1 : (int)q;
        }
        const float v = g->m[(size_t)c[0] + (size_t)g->n[0] * ((size_t)c[1] + (size_t)g->n[1] * c[2])];
        sum += v > 0.0f ? v : 0.0f;
    }
    return sum * h * P->tau_per_density;
}

TEST(majorant_grid_walk_matches_the_majorants_integral_on_awkward_rays)
{
    const int nx = 24, ny = 17, nz = 9, C = 4;
    float *d = random_volume(nx, ny, nz, 5u);
    REQUIRE(d);
    float dmax = 0.0f;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++) dmax = d[i] > dmax ? d[i] : dmax;
    VptMajorantGrid g;
    REQUIRE(vpt_majorant_grid_build(d, nx, ny, nz, C, VPT_DENSITY_F32, dmax, 1, &g) == 0);
    VptParams P;
    memset(&P, 0, sizeof P);
    P.box_min = vpt_v3(-1.2f, -0.85f, -0.45f);
    P.box_max = vpt_v3(1.2f, 0.85f, 0.45f);
    P.inv_extent = vpt_v3(1.0f / 2.4f, 1.0f / 1.7f, 1.0f / 0.9f);
    P.density_scale = 3.0f;
    P.density_max = dmax;
    vpt_params_set_majorant_grid(&P, &g, nx, ny, nz);
    float *cells = vpt_majorant_grid_cells(&g, P.tau_per_density);
    REQUIRE(cells);
    VptMedium m = medium_of(nx, ny, nz, d, cells, &g);
    /* origins and directions in world space: along each axis, both ways,
     * through cell corners, starting inside, grazing the box's faces and
     * edges, and random ones */
    struct {
        vpt_vec3 o, d;
    } rays[64];
    int nr = 0;
    for (int a = 0; a < 3; a++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            vpt_vec3 dir = vpt_v3(a == 0 ? (float)sgn : 0.0f, a == 1 ? (float)sgn : 0.0f, a == 2 ? (float)sgn : 0.0f);
            rays[nr].o = vpt_v3(0.05f, -0.1f, 0.03f);
            rays[nr++].d = dir;
        }
    /* through a cell corner: the corner (8, 8, 4) voxels = world point */
    vpt_vec3 corner = vpt_v3(-1.2f + 2.4f * 8.0f / nx, -0.85f + 1.7f * 8.0f / ny, -0.45f + 0.9f * 4.0f / nz);
    rays[nr].o = vpt_sub(corner, vpt_v3(0.3f, 0.3f, 0.3f));
    rays[nr++].d = vpt_normalize(vpt_v3(1, 1, 1));
    rays[nr].o = corner; /* starting exactly on a corner */
    rays[nr++].d = vpt_normalize(vpt_v3(-1, 0.5f, 0.25f));
    rays[nr].o = vpt_v3(-1.2f, 0.0f, 0.0f); /* on a face, along it (grazing) */
    rays[nr++].d = vpt_v3(0, 1, 0);
    rays[nr].o = vpt_v3(-1.2f, -0.85f, -0.45f); /* along an edge of the box */
    rays[nr++].d = vpt_v3(0, 0, 1);
    uint32_t s = 3u;
    while (nr < 64) {
        rays[nr].o = vpt_v3(-1.2f + 2.4f * frand(&s), -0.85f + 1.7f * frand(&s), -0.45f + 0.9f * frand(&s));
        rays[nr++].d = vpt_normalize(vpt_v3(frand(&s) - 0.5f, frand(&s) - 0.5f, frand(&s) - 0.5f));
    }
    int walks = 0;
    for (int r = 0; r < nr; r++) {
        float t0, t1;
        int a0, a1;
        if (!vpt_box_intersect(P.box_min, P.box_max, rays[r].o, rays[r].d, &t0, &t1, &a0, &a1) || t1 <= 0.0f) continue;
        t0 = t0 > 0.0f ? t0 : 0.0f;
        vpt_vec3 ou, du;
        vpt_woodcock_ray(&P, rays[r].o, rays[r].d, &ou, &du);
        const VptMajorantRay R = vpt_majorant_ray(&P, ou, du);
        VptMajorantWalk w;
        vpt_majorant_walk_start(&P, &m, &R, ou, du, t0, t1, &w);
        const double total = majorant_depth(&P, &g, ou, du, t0, t1, 200000);
        float prev = t0;
        for (int k = 1; k <= 40; k++) {
            const float tau = (float)(total * k / 41.0);
            float maj;
            const float t = vpt_majorant_walk_to(&P, &m, &R, ou, du, t1, &w, tau, &maj);
            CHECK_MSG(t >= prev - 1e-5f && t <= t1 + 1e-5f, "ray %d: t %.7g after %.7g, tmax %.7g", r, t, prev, t1);
            const double back = majorant_depth(&P, &g, ou, du, t0, t, 20000);
            CHECK_MSG(fabs(back - tau) <= 2e-3 * (1.0 + total), "ray %d: tau %.6g walked to t %.6g whose depth is %.6g",
                      r, tau, t, back);
            /* a step inside the ray's depth lands in a cell with a majorant;
             * a ray through empty cells only leaves the box in one go */
            if (total > 0.0)
                CHECK_MSG(maj > 0.0f, "ray %d: a step landed in an empty cell", r);
            else
                CHECK_MSG(t == t1 && maj == 0.0f, "ray %d: empty ray stopped at %.7g of %.7g", r, t, t1);
            prev = t;
        }
        float maj;
        CHECK(vpt_majorant_walk_to(&P, &m, &R, ou, du, t1, &w, (float)(total * 1.001 + 1e-3), &maj) == t1);
        CHECK(vpt_majorant_walk_to(&P, &m, &R, ou, du, t1, &w, 1e30f, &maj) == t1);
        CHECK(maj == 0.0f);
        walks++;
    }
    vpt_test_log("%d rays walked", walks);
    CHECK(walks >= 12);
    free(cells);
    vpt_majorant_grid_free(&g);
    free(d);
}

static void render_estimator(const VptScene *s, int w, int h, int spp, VptDensityFormat f, int cell, float *mean,
                             float *var, VptRenderStats *st)
{
    VptRenderSettings rs = {w, h, spp, 11u, 0, -1, 1};
    VptParams p;
    vpt_params_init(&p, s, &rs);
    VptCpuEstimator e;
    REQUIRE_MSG(vpt_cpu_estimator_init(&e, s, f, cell, 0, &p) == 0, "%s", vpt_errmsg());
    VptCpuRenderOptions o = {0, VPT_PROGRESS_OFF, &e};
    REQUIRE_MSG(vpt_cpu_render(s, &p, &o, mean, var, st) == 0, "%s", vpt_errmsg());
    vpt_cpu_estimator_free(&e);
}

/* With albedo 1 everywhere, an index-matched box and a white environment,
 * every path returns exactly 1, whatever its flights: the grid walk must
 * neither lose nor create energy, and empty cells must be crossed. */
TEST(majorant_grid_white_furnace)
{
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s);
    const size_t n = (size_t)s->nx * s->ny * s->nz;
    for (size_t i = 0; i < n; i++) s->albedo[4 * i] = s->albedo[4 * i + 1] = s->albedo[4 * i + 2] = 255;
    s->boundary = VPT_BOUNDARY_NULL;
    s->env[0] = s->env[1] = s->env[2] = 1.0f;
    const int W = 16, H = 16, SPP = 8;
    float mean[16 * 16 * 3];
    VptRenderStats st;
    for (int cell = 2; cell <= 32; cell *= 2) { /* grid4 .. grid32, then skip (2 stands for it) */
        const int majorant = cell == 2 ? -1 : cell;
        render_estimator(s, W, H, SPP, VPT_DENSITY_U8, majorant, mean, NULL, &st);
        for (int i = 0; i < W * H * 3; i++)
            CHECK_MSG(mean[i] == 1.0f, "%s pixel %d: %.9g", vpt_majorant_name(majorant), i / 3, mean[i]);
        CHECK(st.counters.rays > st.counters.paths); /* paths did scatter */
    }
    vpt_scene_destroy(s);
}

/* The grid cuts manix's null steps (its density's mean is 6.5% of its
 * maximum), and so does skipping its empty cubes, and the image stays
 * statistically the same: per-block z-test of the grid+u8 and skip+u8
 * images against the global f32 one at the same seed (a false alarm has
 * probability below 32 x 6e-7 for 2 x 16 blocks at |z| <= 5, with the
 * mean-z^2 bound; the shared random numbers only lower it). */
TEST_TIMEOUT(majorant_grid_cuts_steps_and_keeps_the_image, 300)
{
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s);
    const int W = 32, H = 32, SPP = 64;
    static float m0[32 * 32 * 3], v0[32 * 32 * 3], m1[32 * 32 * 3], v1[32 * 32 * 3];
    VptRenderStats a, b;
    render_estimator(s, W, H, SPP, VPT_DENSITY_F32, 0, m0, v0, &a);
    const double spr_a = (double)a.counters.steps / a.counters.rays;
    /* the grid walk and the skip of its empty cubes: 2 x 16 blocks tested */
    const int majorants[] = {8, -1};
    const double most[] = {0.5, 0.6}; /* the steps per ray each keeps at most */
    for (int k = 0; k < 2; k++) {
        render_estimator(s, W, H, SPP, VPT_DENSITY_U8, majorants[k], m1, v1, &b);
        const double spr_b = (double)b.counters.steps / b.counters.rays;
        vpt_test_log("steps per ray: global f32 %.2f, %s u8 %.2f", spr_a, vpt_majorant_name(majorants[k]), spr_b);
        CHECK(spr_b < most[k] * spr_a);
        VptGateReport rep;
        int rc = vpt_gate_statistical(m1, v1, m0, v0, W, H, 8, 5.0, &rep);
        CHECK_MSG(rc == 0, "%s: max |z| %.2f, mean z^2 %.2f: %s", vpt_majorant_name(majorants[k]), rep.max_block_z,
                  rep.mean_block_z2, vpt_errmsg());
    }
    vpt_scene_destroy(s);
}

/* One flight of path state a from t0 to tmax taken one step at a time by an
 * estimator's definition: returns where it ends, sets *draw past its last
 * step and *marked when the flight did what its test looks for (crossed a
 * cell, jumped). */
typedef float (*SingleSteps)(const VptParams *p, const VptMedium *m, const VptPath *a, float t0, float tmax,
                             vpt_u32 *draw, int *marked);

/* Every flight of 24x24 pixels x 2 spp of manix (up to 6 bounces) taken by
 * vpt_woodcock (batches of VPT_LOOKAHEAD = 4) and by `single`: the same end,
 * bit for bit, and the same draws. Counts flights and marked ones. */
static void batches_match_single_steps(VptDensityFormat f, int majorant, SingleSteps single, int *flights,
                                       int *marked)
{
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s);
    VptRenderSettings rs = {24, 24, 2, 5u, 0, -1, 1};
    VptParams p;
    vpt_params_init(&p, s, &rs);
    VptCpuEstimator e;
    REQUIRE(vpt_cpu_estimator_init(&e, s, f, majorant, 0, &p) == 0);
    VptMedium m;
    vpt_cpu_medium_init(&m, s);
    vpt_u64 nee_steps = 0; /* no sun: interactions take no shadow steps */
    m.density = e.density;
    m.majorant = e.cells;
    m.distance = e.distance;
    *flights = *marked = 0;
    for (vpt_u64 id = 0; id < (vpt_u64)p.npaths; id++) {
        VptPath a;
        vpt_path_start(&p, id, &a);
        for (int bounce = 0; bounce < 6; bounce++) {
            float t0, tmax;
            if (!vpt_path_extend_begin(&p, &a, &t0, &tmax)) {
                if (a.event == VPT_EV_ESCAPED || vpt_path_interact(&p, &m, &a, &nee_steps) != VPT_PATH_ALIVE) break;
                continue;
            }
            vpt_u32 draw_b = a.draw;
            vpt_u64 steps_b = 0;
            const float t_b = vpt_woodcock(&p, &m, a.o, a.d, t0, tmax, a.path, &draw_b, &steps_b);
            vpt_u32 draw = a.draw;
            int mark = 0;
            const float t = single(&p, &m, &a, t0, tmax, &draw, &mark);
            *marked += mark;
            CHECK_MSG(memcmp(&t, &t_b, sizeof t) == 0, "path %llu: t %.9g vs %.9g", (unsigned long long)id, t, t_b);
            CHECK_EQ_INT(draw, draw_b);
            CHECK_EQ_INT(draw - a.draw, steps_b);
            (*flights)++;
            a.draw = draw_b;
            vpt_path_extend_finish(&p, &a, t_b, tmax);
            if (a.event == VPT_EV_ESCAPED || vpt_path_interact(&p, &m, &a, &nee_steps) != VPT_PATH_ALIVE) break;
        }
    }
    vpt_cpu_estimator_free(&e);
    vpt_scene_destroy(s);
}

/* The grid's flight one step at a time: each step's tau mapped to its
 * distance by vpt_majorant_walk_to. Marked: it left its first cell. */
static float grid_single_steps(const VptParams *p, const VptMedium *m, const VptPath *a, float t0, float tmax,
                               vpt_u32 *draw, int *marked)
{
    vpt_vec3 ou, du;
    vpt_woodcock_ray(p, a->o, a->d, &ou, &du);
    const VptMajorantRay R = vpt_majorant_ray(p, ou, du);
    VptMajorantWalk w;
    vpt_majorant_walk_start(p, m, &R, ou, du, t0, tmax, &w);
    const int c0[3] = {w.cx, w.cy, w.cz};
    const VptStepStream ss = vpt_step_stream(p->seed, a->path);
    float tau = 0.0f, t;
    for (;;) {
        vpt_u32 wx, wy;
        vpt_woodcock_step_words(ss, *draw, &wx, &wy);
        tau = tau + vpt_woodcock_free_path_x(wx);
        float maj;
        t = vpt_majorant_walk_to(p, m, &R, ou, du, tmax, &w, tau, &maj);
        (*draw)++;
        float dens = vpt_medium_density(m, vpt_woodcock_point(ou, du, t));
        if (vpt_woodcock_stops(t, tmax, vpt_woodcock_level(wy, maj), dens)) break;
    }
    *marked = c0[0] != w.cx || c0[1] != w.cy || c0[2] != w.cz;
    return t;
}

/* Batches of four steps through the grid trace the same flights, bit for
 * bit, as one step at a time (the GPU's lookahead and cooperative schedules
 * rely on it), on manix, whose flights cross many cells. */
TEST(majorant_grid_batches_of_four_trace_the_same_flight_as_single_steps)
{
    int flights, crossed;
    batches_match_single_steps(VPT_DENSITY_F16, 8, grid_single_steps, &flights, &crossed);
    vpt_test_log("%d flights, %d crossed cells", flights, crossed);
    CHECK(flights > 500);
    CHECK(crossed > 200);
}

/* The skip's flight one step at a time: a step that stops ends it, a step
 * that lands far from any density moves it on by vpt_skip_resume. Marked:
 * it jumped. */
static float skip_single_steps(const VptParams *p, const VptMedium *m, const VptPath *a, float t0, float tmax,
                               vpt_u32 *draw, int *marked)
{
    vpt_vec3 ou, du;
    vpt_woodcock_ray(p, a->o, a->d, &ou, &du);
    const VptStepStream ss = vpt_step_stream(p->seed, a->path);
    float t = t0;
    for (;;) {
        float level;
        t = vpt_woodcock_advance(p, t, vpt_woodcock_free_path(p, ss, *draw, &level));
        (*draw)++;
        const vpt_vec3 q = vpt_woodcock_point(ou, du, t);
        float dist;
        const float dens = vpt_medium_density_distance(m, q, &dist);
        CHECK(dens == vpt_medium_density(m, q));
        if (vpt_woodcock_stops(t, tmax, level, dens)) break;
        const float tj = vpt_skip_resume(p, du, t, dist);
        if (tj != t) {
            CHECK(tj > t && dens == 0.0f);
            *marked = 1;
            t = tj;
            if (t >= tmax) break;
        }
    }
    return t;
}

/* Empty-space skipping (majorant=skip) in batches of four traces the same
 * flights, bit for bit, as its definition one step at a time, on manix,
 * whose flights start in the empty air around the head. */
TEST(majorant_skip_batches_of_four_trace_the_same_flight_as_single_steps)
{
    int flights, jumped;
    batches_match_single_steps(VPT_DENSITY_U8, -1, skip_single_steps, &flights, &jumped);
    vpt_test_log("%d flights, %d jumped over empty space", flights, jumped);
    CHECK(flights > 500);
    CHECK(jumped > 200);
}

/* The L-infinity distance between voxels (ax, ay, az) and (bx, by, bz). */
static int chebyshev(int ax, int ay, int az, int bx, int by, int bz)
{
    int m = abs(ax - bx);
    m = abs(ay - by) > m ? abs(ay - by) : m;
    return abs(az - bz) > m ? abs(az - bz) : m;
}

/* The distance map is the exact Chebyshev distance (by brute force over
 * every pair of voxels, on random sparse volumes, one of them all empty),
 * and the jump it allows is safe: from random points, every point within
 * the L-infinity jump length of vpt_skip_resume has density exactly 0
 * under the medium's trilinear filter. */
TEST(distance_map_is_exact_and_its_jumps_cross_only_empty_space)
{
    const int dims[3][3] = {{9, 7, 11}, {23, 5, 4}, {6, 6, 6}};
    for (int v = 0; v < 3; v++) {
        const int nx = dims[v][0], ny = dims[v][1], nz = dims[v][2];
        float *d = random_volume(nx, ny, nz, 40u + (uint32_t)v);
        REQUIRE(d);
        if (v == 2) memset(d, 0, (size_t)nx * ny * nz * sizeof *d); /* no density: the cap everywhere */
        /* sparser: keep one voxel in 8 of the random ones */
        for (size_t i = 0; i < (size_t)nx * ny * nz; i++)
            if (i % 8) d[i] = 0.0f;
        uint8_t *map;
        REQUIRE(vpt_distance_map_build(d, nx, ny, nz, 0, &map) == 0);
        int mismatches = 0;
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < ny; y++)
                for (int x = 0; x < nx; x++) {
                    int best = VPT_DISTANCE_MAP_MAX;
                    for (int c = 0; c < nz; c++)
                        for (int b = 0; b < ny; b++)
                            for (int a = 0; a < nx; a++) {
                                if (d[a + nx * (b + ny * c)] == 0.0f) continue;
                                const int m = chebyshev(a, b, c, x, y, z);
                                best = m < best ? m : best;
                            }
                    mismatches += map[x + nx * (y + ny * z)] != best;
                }
        CHECK_MSG(mismatches == 0, "volume %d: %d voxels differ from the brute-force distance", v, mismatches);
        /* jumps: random points and directions in a box of these voxels */
        VptParams P;
        memset(&P, 0, sizeof P);
        P.density_scale = 1.0f;
        vpt_params_set_distance_map(&P, nx, ny, nz);
        VptMedium m = medium_of(nx, ny, nz, d, NULL, NULL);
        m.distance = map;
        uint32_t s = 99u + (uint32_t)v;
        int jumps = 0, bad = 0;
        for (int i = 0; i < 4000; i++) {
            const vpt_vec3 p = vpt_v3(frand(&s), frand(&s), frand(&s));
            float dist;
            vpt_medium_density_distance(&m, p, &dist);
            const vpt_vec3 du = vpt_v3(frand(&s) - 0.5f, frand(&s) - 0.5f, frand(&s) - 0.5f);
            const float t1 = vpt_skip_resume(&P, du, 0.0f, dist);
            if (!(t1 > 0.0f)) continue;
            jumps++;
            for (int k = 0; k <= 64; k++) {
                const vpt_vec3 q = vpt_woodcock_point(p, du, t1 * (float)k / 64.0f);
                if (q.x < 0 || q.x > 1 || q.y < 0 || q.y > 1 || q.z < 0 || q.z > 1) break; /* left the box */
                bad += vpt_medium_density(&m, q) != 0.0f;
            }
        }
        CHECK_MSG(bad == 0, "volume %d: %d points of %d jumps have density", v, bad, jumps);
        CHECK(jumps > 100 || v < 2);
        free(map);
        free(d);
    }
}

/* The map beyond the brute-force test's sizes: volumes long enough that
 * distances reach the cap (a single voxel with density at one end of a
 * 600-voxel axis, on each axis in turn), and a larger sparse one whose
 * few voxels with density make an exact reference cheap; every map is the
 * same on 1, 2, 3 and 7 threads (the passes split the volume by slices and
 * rows, so an uneven split is covered). */
TEST(distance_map_caps_far_voxels_and_does_not_depend_on_threads)
{
    for (int axis = 0; axis < 3; axis++) {
        int n[3] = {3, 4, 5};
        n[axis] = 600;
        float *d = calloc((size_t)n[0] * n[1] * n[2], sizeof *d);
        REQUIRE(d);
        d[0] = 1.0f; /* voxel (0, 0, 0) */
        uint8_t *map;
        REQUIRE(vpt_distance_map_build(d, n[0], n[1], n[2], 2, &map) == 0);
        int bad = 0;
        for (int z = 0; z < n[2]; z++)
            for (int y = 0; y < n[1]; y++)
                for (int x = 0; x < n[0]; x++) {
                    int want = chebyshev(x, y, z, 0, 0, 0);
                    want = want < VPT_DISTANCE_MAP_MAX ? want : VPT_DISTANCE_MAP_MAX;
                    bad += map[x + n[0] * ((size_t)y + (size_t)n[1] * z)] != want;
                }
        CHECK_MSG(bad == 0, "axis %d: %d voxels differ from max(x, y, z) capped at %d", axis, bad,
                  VPT_DISTANCE_MAP_MAX);
        free(map);
        free(d);
    }
    const int nx = 131, ny = 67, nz = 97; /* 131 > the z pass's 64-line blocks */
    float *d = calloc((size_t)nx * ny * nz, sizeof *d);
    REQUIRE(d);
    int fx[40], fy[40], fz[40];
    uint32_t s = 7u;
    for (int k = 0; k < 40; k++) {
        fx[k] = (int)(frand(&s) * nx) % nx;
        fy[k] = (int)(frand(&s) * ny) % ny;
        fz[k] = (int)(frand(&s) * nz) % nz;
        d[fx[k] + nx * ((size_t)fy[k] + (size_t)ny * fz[k])] = 0.5f;
    }
    uint8_t *one;
    REQUIRE(vpt_distance_map_build(d, nx, ny, nz, 1, &one) == 0);
    int bad = 0;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                int best = VPT_DISTANCE_MAP_MAX;
                for (int k = 0; k < 40; k++) {
                    const int m = chebyshev(fx[k], fy[k], fz[k], x, y, z);
                    best = m < best ? m : best;
                }
                bad += one[x + nx * ((size_t)y + (size_t)ny * z)] != best;
            }
    CHECK_MSG(bad == 0, "%d voxels differ from the distance to the nearest of the 40 with density", bad);
    const int threads[3] = {2, 3, 7};
    for (int i = 0; i < 3; i++) {
        uint8_t *map;
        REQUIRE(vpt_distance_map_build(d, nx, ny, nz, threads[i], &map) == 0);
        CHECK_MSG(memcmp(map, one, (size_t)nx * ny * nz) == 0, "the map on %d threads differs from one thread's",
                  threads[i]);
        free(map);
    }
    free(one);
    free(d);
}

TEST(density_formats_encode_as_the_texture_unit_reads)
{
    /* IEEE half: exact values, rounding to nearest even, range ends */
    CHECK_EQ_INT(vpt_half_from_float(1.0f), 0x3c00);
    CHECK_EQ_INT(vpt_half_from_float(-2.0f), 0xc000);
    CHECK_EQ_INT(vpt_half_from_float(65504.0f), 0x7bff);
    CHECK_EQ_INT(vpt_half_from_float(65520.0f), 0x7c00);
    CHECK_EQ_INT(vpt_half_from_float(5.960464477539063e-8f), 0x0001); /* smallest subnormal */
    CHECK_EQ_INT(vpt_half_from_float(2.98e-8f), 0x0000);
    CHECK_EQ_INT(vpt_half_from_float(1.0f + 1.0f / 2048.0f), 0x3c00); /* a tie: to even */
    CHECK_EQ_INT(vpt_half_from_float(1.0f + 3.0f / 2048.0f), 0x3c02);
    for (uint32_t h = 0; h < 0x7c00; h++) CHECK_EQ_INT(vpt_half_from_float(vpt_half_to_float((uint16_t)h)), h);
    /* normalized formats: d / dmax rounded to the nearest level */
    const float d[5] = {0.0f, 0.25f, 0.5f, 1.0f, 2.0f};
    uint8_t u8[5];
    uint16_t u16[5];
    float dec[5];
    vpt_density_format_encode(VPT_DENSITY_U8, d, 5, 2.0f, u8, dec, 1);
    CHECK_EQ_INT(u8[1], 32);
    CHECK_EQ_INT(u8[2], 64);
    CHECK_EQ_INT(u8[4], 255);
    CHECK(dec[4] == 1.0f && dec[0] == 0.0f);
    CHECK_NEAR(dec[1], 32.0 / 255.0, 1e-7);
    vpt_density_format_encode(VPT_DENSITY_U16, d, 5, 2.0f, u16, dec, 1);
    CHECK_EQ_INT(u16[2], 16384);
    CHECK_EQ_INT(u16[4], 65535);
    /* folding: sigma_t = density_scale * texture value stays the same */
    VptParams P;
    memset(&P, 0, sizeof P);
    P.density_scale = 10.0f;
    P.density_max = 2.0f;
    VptDensityFormat f;
    REQUIRE(vpt_density_format_parse("u8", &f) == 0);
    vpt_density_format_fold_params(f, 2.0f, &P);
    CHECK_NEAR(P.density_scale * dec[4], 20.0, 1e-5);
    CHECK(P.density_max == 1.0f);
    CHECK(vpt_density_format_parse("f64", &f) != 0);
}

TEST(config_majorant_and_density_keys)
{
    VptConfig c;
    REQUIRE(vpt_config_parse("regenerationSK-warp,majorant=grid16,density=u16", &c) == 0);
    CHECK_EQ_INT(c.majorant, 16);
    CHECK_EQ_INT(c.density, VPT_DENSITY_U16);
    char buf[VPT_CONFIG_STR_MAX];
    vpt_config_format(&c, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "lookahead=1,majorant=grid16,density=u16");
    VptConfig back;
    REQUIRE(vpt_config_parse(buf, &back) == 0);
    CHECK(vpt_config_equal(&c, &back));
    /* the defaults keep the old canonical text */
    REQUIRE(vpt_config_parse("naiveSK,majorant=global,density=f32", &c) == 0);
    vpt_config_format(&c, buf, sizeof buf);
    CHECK(strstr(buf, "majorant") == NULL && strstr(buf, "density") == NULL);
    CHECK(vpt_config_parse("naiveSK,majorant=grid5", &c) != 0);
    CHECK_STR_CONTAINS(vpt_errmsg(), "global, grid4, grid8, grid16, grid32, grid64, grid128, skip");
    REQUIRE(vpt_config_parse("regenerationSK-warp,coop=4,majorant=skip,density=u8", &c) == 0);
    CHECK_EQ_INT(c.majorant, -1);
    CHECK(vpt_majorant_skips(c.majorant) && vpt_majorant_grid_cell(c.majorant) == 0);
    vpt_config_format(&c, buf, sizeof buf);
    CHECK_STR_CONTAINS(buf, "coop=4,majorant=skip,density=u8");
    REQUIRE(vpt_config_parse(buf, &back) == 0);
    CHECK(vpt_config_equal(&c, &back));
    c.majorant = -8; /* no skip of cells */
    CHECK(vpt_config_check(&c) != 0);
    CHECK(vpt_config_parse("naiveSK,density=f64", &c) != 0);
    CHECK_STR_CONTAINS(vpt_errmsg(), "f32, f16, u16, u8");
    c = vpt_config_default();
    c.majorant = 12;
    CHECK(vpt_config_check(&c) != 0);
}

/* Transmittance through the grid walk: the fraction of flights that leave
 * the box along a ray equals exp(-integral of sigma_t), the integral taken by
 * fine quadrature of the filtered density, on a sparse random volume (empty
 * cells and dense ones) with 4-voxel cells walked by the DDA (gridC), and
 * the same volume with its lower x half emptied, skipped by the distance map
 * (skip). 2 x 24 rays x 20,000 flights; each ray's
 * count is tested at 5 sigma of the binomial (plus the quadrature's error):
 * a false alarm has probability below 48 x 6e-7. */
TEST(majorant_grid_transmittance)
{
    const int nx = 20, ny = 12, nz = 16;
    float *d = random_volume(nx, ny, nz, 21u);
    REQUIRE(d);
    float dmax = 0.0f;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++) dmax = d[i] > dmax ? d[i] : dmax;
    VptMajorantGrid g;
    REQUIRE(vpt_majorant_grid_build(d, nx, ny, nz, 4, VPT_DENSITY_F32, dmax, 1, &g) == 0);
    VptParams P = box_params(0.6f, dmax);
    vpt_params_set_majorant_grid(&P, &g, nx, ny, nz);
    float *cells = vpt_majorant_grid_cells(&g, P.tau_per_density);
    REQUIRE(cells);
    /* the skip's volume: the same with its lower x half emptied, so that
     * flights cross empty space several voxels deep */
    float *e = malloc((size_t)nx * ny * nz * sizeof *e);
    REQUIRE(e);
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++) e[i] = (int)(i % (size_t)nx) < nx / 2 ? 0.0f : d[i];
    uint8_t *map;
    REQUIRE(vpt_distance_map_build(e, nx, ny, nz, 0, &map) == 0);
    const VptParams Pgrid = P;
    VptParams Pskip = P;
    vpt_params_set_distance_map(&Pskip, nx, ny, nz);
    uint32_t s = 17u;
    int fails = 0, tested = 0;
    long jumps = 0;
    for (int r = 0; r < 48; r++) {
        /* the grid walk, then the skip */
        const VptParams P = r < 24 ? Pgrid : Pskip;
        VptMedium m = medium_of(nx, ny, nz, r < 24 ? d : e, cells, &g);
        m.distance = map;
        vpt_vec3 o = vpt_v3(-0.9f + 1.8f * frand(&s), -0.5f + frand(&s), -0.7f + 1.4f * frand(&s));
        vpt_vec3 dir = vpt_normalize(vpt_v3(frand(&s) - 0.5f, frand(&s) - 0.5f, frand(&s) - 0.5f));
        float t0, t1;
        int a0, a1;
        REQUIRE(vpt_box_intersect(P.box_min, P.box_max, o, dir, &t0, &t1, &a0, &a1));
        vpt_vec3 ou, du;
        vpt_woodcock_ray(&P, o, dir, &ou, &du);
        double tau = 0.0;
        const int K = 20000;
        for (int k = 0; k < K; k++) {
            double t = t1 * (k + 0.5) / K;
            tau += vpt_medium_density(&m, vpt_woodcock_point(ou, du, (float)t));
        }
        const double T = exp(-tau * t1 / K * P.density_scale);
        const int N = 20000;
        int escaped = 0;
        for (int i = 0; i < N; i++) {
            vpt_u32 draw = 0;
            vpt_u64 steps = 0;
            float t = vpt_woodcock(&P, &m, o, dir, 0.0f, t1, (vpt_u64)((r % 24) * N + i), &draw, &steps);
            escaped += t >= t1;
        }
        if (r >= 24) { /* count the rays that start where a step jumps, to know the skip was tested */
            float dist;
            vpt_medium_density_distance(&m, vpt_woodcock_point(ou, du, 0.0f), &dist);
            jumps += dist >= 3.0f;
        }
        const double f = (double)escaped / N, se = sqrt(T * (1 - T) / N);
        tested++;
        if (fabs(f - T) > 5 * se + 1e-3) {
            fails++;
            CHECK_MSG(0, "ray %d: %.5f escaped, expected %.5f +- %.5f", r, f, T, se);
        }
    }
    CHECK_EQ_INT(tested, 48);
    vpt_test_log("%ld of the skip's 24 rays start where it jumps", jumps);
    CHECK(jumps >= 3);
    free(map);
    free(e);
    free(cells);
    vpt_majorant_grid_free(&g);
    free(d);
}

/* The sun's shadow rays (vpt_shadow_transmittance): each estimator's mean
 * transmittance through the random volume against a quadrature of its
 * optical depth, with the global majorant, the majorant grid (ratio
 * tracking walks it) and skip (delta tracking jumps with it). 3 estimators
 * x 3 majorants x 8 rays of 20,000 shadow rays; a ray fails past 6
 * standard errors of the sample mean (plus 1e-3 for the quadrature); the
 * estimators are bounded (delta and ratio in [0, 1], residual by 2^steps,
 * in practice below 4 here), so the mean is near normal at this N and a
 * false alarm has probability below 72 x 2e-9. */
TEST(sun_shadow_transmittance_estimators_match_the_optical_depth)
{
    const int nx = 20, ny = 12, nz = 16;
    float *d = random_volume(nx, ny, nz, 29u);
    REQUIRE(d);
    /* the lower x half emptied, so that shadow rays cross empty space
     * several voxels deep (skip jumps it) */
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++)
        if ((int)(i % (size_t)nx) < nx / 2) d[i] = 0.0f;
    float dmax = 0.0f;
    double sum = 0.0;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++) {
        dmax = d[i] > dmax ? d[i] : dmax;
        sum += d[i];
    }
    VptMajorantGrid g;
    REQUIRE(vpt_majorant_grid_build(d, nx, ny, nz, 4, VPT_DENSITY_F32, dmax, 1, &g) == 0);
    uint8_t *map;
    REQUIRE(vpt_distance_map_build(d, nx, ny, nz, 0, &map) == 0);
    VptParams P = box_params(0.5f, dmax);
    P.control_density = (float)(sum / ((double)nx * ny * nz)) * 4.0f; /* a control well off the mean: still unbiased */
    P.seed = 7u;
    VptParams Pm[3] = {P, P, P};
    vpt_params_set_majorant_grid(&Pm[1], &g, nx, ny, nz);
    vpt_params_set_distance_map(&Pm[2], nx, ny, nz);
    float *cells = vpt_majorant_grid_cells(&g, Pm[1].tau_per_density);
    REQUIRE(cells);
    uint32_t s = 23u;
    int tested = 0;
    vpt_u64 ratio_steps[3] = {0, 0, 0}, residual_steps[3] = {0, 0, 0};
    for (int r = 0; r < 8; r++) {
        vpt_vec3 o = vpt_v3(-0.9f + 1.8f * frand(&s), -0.5f + frand(&s), -0.7f + 1.4f * frand(&s));
        vpt_vec3 dir = vpt_normalize(vpt_v3(frand(&s) - 0.5f, frand(&s) - 0.5f, frand(&s) - 0.5f));
        float t0, t1;
        int a0, a1;
        REQUIRE(vpt_box_intersect(P.box_min, P.box_max, o, dir, &t0, &t1, &a0, &a1));
        VptMedium m = medium_of(nx, ny, nz, d, cells, &g);
        m.distance = map;
        vpt_vec3 ou, du;
        vpt_woodcock_ray(&P, o, dir, &ou, &du);
        double tau = 0.0;
        const int K = 20000;
        for (int k = 0; k < K; k++) tau += vpt_medium_density(&m, vpt_woodcock_point(ou, du, (float)(t1 * (k + 0.5) / K)));
        const double T = exp(-tau * t1 / K * P.density_scale);
        for (int est = VPT_TR_DELTA; est <= VPT_TR_RESIDUAL; est++)
            for (int mj = 0; mj < 3; mj++) {
                VptParams Q = Pm[mj];
                Q.transmittance = est;
                const int N = 20000;
                double sx = 0.0, sxx = 0.0;
                vpt_u64 steps = 0;
                for (int i = 0; i < N; i++) {
                    const double x = vpt_shadow_transmittance(&Q, &m, o, dir, (vpt_u64)(r * N + i), i % 7, &steps);
                    sx += x;
                    sxx += x * x;
                }
                const double mean = sx / N, var = sxx / N - mean * mean, se = sqrt(var > 0 ? var / N : 0.0);
                tested++;
                CHECK_MSG(fabs(mean - T) <= 6 * se + 1e-3, "ray %d, estimator %d, majorant %d: mean %.5f, expected %.5f +- %.5f",
                          r, est, mj, mean, T, se);
                /* residual tracking with the grid crosses empty cells without a step */
                CHECK(steps > 0 || (est == VPT_TR_RESIDUAL && mj == 1));
                if (est == VPT_TR_RATIO) ratio_steps[mj] += steps;
                if (est == VPT_TR_RESIDUAL) residual_steps[mj] += steps;
            }
    }
    CHECK_EQ_INT(tested, 72);
    /* ratio tracking crosses the empty half without steps with the grid and skip */
    vpt_test_log("ratio tracking's steps: global %llu, grid %llu, skip %llu", (unsigned long long)ratio_steps[0],
                 (unsigned long long)ratio_steps[1], (unsigned long long)ratio_steps[2]);
    CHECK(ratio_steps[1] < ratio_steps[0] && ratio_steps[2] < ratio_steps[0]);
    /* and residual tracking about each cell's minorant takes fewer steps than about one control */
    vpt_test_log("residual tracking's steps: global %llu, grid %llu", (unsigned long long)residual_steps[0],
                 (unsigned long long)residual_steps[1]);
    CHECK(residual_steps[1] < residual_steps[0]);
    free(cells);
    free(map);
    vpt_majorant_grid_free(&g);
    free(d);
}

/* The minorants bound the filtered density from below, in every texture
 * format, at points of each cell and up to 0.49 voxel beyond its faces
 * (where the walk's rounding may still read it), on a volume without empty
 * voxels (a sparse one has minorant 0 almost everywhere). */
TEST(majorant_grid_minorants_bound_the_filtered_density_from_below)
{
    const int nx = 13, ny = 7, nz = 21, cells[] = {1, 4, 8};
    const size_t n = (size_t)nx * ny * nz;
    float *d = random_volume(nx, ny, nz, 43u);
    REQUIRE(d);
    float dmax = 0.0f;
    for (size_t i = 0; i < n; i++) {
        d[i] += 0.05f;
        dmax = d[i] > dmax ? d[i] : dmax;
    }
    int checked = 0;
    for (int ci = 0; ci < 3; ci++)
        for (int f = 0; f < VPT_DENSITY_FORMAT_COUNT; f++) {
            const int C = cells[ci], nv[3] = {nx, ny, nz};
            float *tex = malloc(n * sizeof *tex);
            void *texels = malloc(n * 4);
            REQUIRE(tex && texels);
            vpt_density_format_encode((VptDensityFormat)f, d, n, dmax, texels, tex, 2);
            VptMajorantGrid g;
            REQUIRE(vpt_majorant_grid_build(d, nx, ny, nz, C, (VptDensityFormat)f, dmax, 2, &g) == 0);
            const VptMedium m = medium_of(nx, ny, nz, tex, NULL, NULL);
            uint32_t s = 7u + (uint32_t)f;
            for (size_t cell = 0; cell < g.count; cell++) {
                const int c[3] = {(int)(cell % (size_t)g.n[0]), (int)(cell / (size_t)g.n[0] % (size_t)g.n[1]),
                                  (int)(cell / ((size_t)g.n[0] * g.n[1]))};
                CHECK(g.lo[cell] > 0.0f && g.lo[cell] < g.m[cell]);
                for (int k = 0; k < 24; k++) {
                    float uvw[3];
                    for (int a = 0; a < 3; a++) {
                        const float lo = (float)(c[a] * C) - 0.49f, hi = (float)((c[a] + 1) * C) + 0.49f;
                        uvw[a] = (k < 8 ? ((k >> a) & 1 ? hi : lo) : lo + frand(&s) * (hi - lo)) / (float)nv[a];
                    }
                    const float val = vpt_medium_density(&m, vpt_v3(uvw[0], uvw[1], uvw[2]));
                    if (!(val >= g.lo[cell]))
                        CHECK_MSG(0, "C=%d %s: cell %zu minorant %.9g > density %.9g", C,
                                  vpt_density_format_name((VptDensityFormat)f), cell, g.lo[cell], val);
                    checked++;
                }
            }
            vpt_majorant_grid_free(&g);
            free(tex);
            free(texels);
        }
    vpt_test_log("%d points checked", checked);
    free(d);
}

/* Residual ratio tracking about the majorant grid's cells: each cell's
 * control is its minorant, so every factor lies in [0, 1] and no estimate
 * exceeds 1, where one control for the whole ray (the volume's mean) gives
 * estimates above 1 on rays through density below it; and in a medium of
 * constant density it is nearly exact: its residual majorant is only the
 * grid's two margins of 2^-12, so a step is rare (a shadow ray draws one
 * free path, which leaves it, and about 2^-11 x its optical depth more)
 * and the estimates' spread below 1e-3 of the transmittance. 6 rays of
 * 20,000 shadow rays through a random volume and 4 of 2,000 through a
 * constant one, each mean checked against the optical depth's quadrature
 * within 6 standard errors plus 1e-3. Where constant, the margin is
 * instead the minorant's share, exp(2^-12 x optical depth) - 1 of the
 * transmittance (plus 2^-16 for float rounding): a ray without a step
 * estimates the minorant's transmittance, and the few steps (every factor
 * 1/2 there, since the density lies midway between minorant and majorant)
 * carry the rest; only over 6 standard errors more steps than expected,
 * more than twice their mean, could put the mean below, far rarer than
 * 2e-9 for a mean of a few steps. A false alarm below 6 x 2e-9. */
TEST(sun_shadow_residual_tracking_per_cell_is_bounded_and_exact_where_constant)
{
    const int nx = 20, ny = 12, nz = 16;
    float *d = random_volume(nx, ny, nz, 37u), *flat = malloc((size_t)nx * ny * nz * sizeof *flat);
    REQUIRE(d && flat);
    float dmax = 0.0f;
    double sum = 0.0;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++) {
        d[i] += 0.2f; /* no empty cell: every cell has a control above 0 */
        dmax = d[i] > dmax ? d[i] : dmax;
        sum += d[i];
        flat[i] = 0.7f;
    }
    for (int v = 0; v < 2; v++) {
        const float *vol = v ? flat : d;
        const float vmax = v ? 0.7f : dmax;
        VptMajorantGrid g;
        REQUIRE(vpt_majorant_grid_build(vol, nx, ny, nz, 4, VPT_DENSITY_F32, vmax, 1, &g) == 0);
        for (size_t i = 0; i < g.count; i++)
            CHECK_MSG(g.lo[i] > 0.0f && g.lo[i] <= g.m[i], "cell %zu: minorant %g, majorant %g", i, g.lo[i], g.m[i]);
        VptParams P = box_params(2.0f, vmax);
        P.control_density = v ? 0.7f : (float)(sum / ((double)nx * ny * nz));
        P.transmittance = VPT_TR_RESIDUAL;
        P.seed = 13u;
        VptParams G = P;
        vpt_params_set_majorant_grid(&G, &g, nx, ny, nz);
        float *cells = vpt_majorant_grid_cells(&g, G.tau_per_density);
        REQUIRE(cells);
        const VptMedium m = medium_of(nx, ny, nz, vol, cells, &g);
        uint32_t s = 41u;
        double above_one[2] = {0, 0};
        for (int r = 0; r < (v ? 4 : 6); r++) {
            const vpt_vec3 o = vpt_v3(-0.9f + 1.8f * frand(&s), -0.5f + frand(&s), -0.7f + 1.4f * frand(&s));
            const vpt_vec3 dir = vpt_normalize(vpt_v3(frand(&s) - 0.5f, frand(&s) - 0.5f, frand(&s) - 0.5f));
            float t0, t1;
            int a0, a1;
            REQUIRE(vpt_box_intersect(P.box_min, P.box_max, o, dir, &t0, &t1, &a0, &a1));
            vpt_vec3 ou, du;
            vpt_woodcock_ray(&P, o, dir, &ou, &du);
            const int K = 20000;
            double tau = 0.0;
            for (int k = 0; k < K; k++) tau += vpt_medium_density(&m, vpt_woodcock_point(ou, du, (float)(t1 * (k + 0.5) / K)));
            const double T = exp(-tau * t1 / K * P.density_scale);
            const int N = v ? 2000 : 20000;
            double sx = 0.0, sxx = 0.0;
            vpt_u64 steps = 0;
            for (int i = 0; i < N; i++) {
                const double x = vpt_shadow_transmittance(&G, &m, o, dir, (vpt_u64)(r * N + i), 0, &steps);
                CHECK_MSG(x >= 0.0 && x <= 1.0, "ray %d: a per-cell estimate %g outside [0, 1]", r, x);
                sx += x;
                sxx += x * x;
                vpt_u64 one = 0;
                above_one[0] += vpt_shadow_transmittance(&P, &m, o, dir, (vpt_u64)(r * N + i), 0, &one) > 1.0f;
            }
            const double mean = sx / N, var = sxx / N - mean * mean, se = sqrt(var > 0 ? var / N : 0.0);
            if (v) {
                const double depth = tau * t1 / K * P.density_scale;
                CHECK_MSG(fabs(mean - T) <= 6 * se + T * (expm1(depth / 4096.0) + 1.0 / 65536.0) && se <= 1e-3 * T,
                          "constant medium, ray %d: mean %.6f +- %.6f, exact %.6f", r, mean, se, T);
                /* one draw per shadow ray, and a few steps among them all */
                CHECK_MSG(steps <= (vpt_u64)N + 40u, "constant medium, ray %d: %llu steps for %d rays", r,
                          (unsigned long long)steps, N);
            } else {
                CHECK_MSG(fabs(mean - T) <= 6 * se + 1e-3, "ray %d: mean %.5f, expected %.5f +- %.5f", r, mean, T, se);
            }
        }
        if (!v) CHECK_MSG(above_one[0] > 0, "one control for the ray never went above 1: the test shows nothing");
        free(cells);
        vpt_majorant_grid_free(&g);
    }
    free(flat);
    free(d);
}

/* A cloud-like volume: a smooth random field of a few sinusoids plus voxel
 * noise, every voxel in (0, 1] (no empty cell, and the noise gives every
 * cell a small residual, majorant above minorant). */
static float *cloud_volume(int nx, int ny, int nz, uint32_t seed)
{
    float *d = malloc((size_t)nx * ny * nz * sizeof *d);
    if (!d) return NULL;
    uint32_t s = seed;
    float k[4][3], ph[4];
    for (int j = 0; j < 4; j++) {
        for (int a = 0; a < 3; a++) k[j][a] = 0.15f + 0.35f * frand(&s);
        ph[j] = 6.2831853f * frand(&s);
    }
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                float v = 0.55f;
                for (int j = 0; j < 4; j++) v += 0.08f * sinf(k[j][0] * (float)x + k[j][1] * (float)y + k[j][2] * (float)z + ph[j]);
                v += 0.12f * (frand(&s) - 0.5f);
                d[((size_t)z * ny + y) * nx + x] = v < 0.05f ? 0.05f : v > 1.0f ? 1.0f : v;
            }
    return d;
}

/* Residual ratio tracking through the majorant grid carries one free path
 * across the cells, as ratio tracking does: on a cloud-like volume of
 * 2-voxel cells, where every cell has a small residual (majorant above
 * minorant) and a ray crosses a dozen or more of them, 8 rays of 20,000
 * shadow rays each, every shadow ray traced by both estimators with the
 * same grid and the same stream. Until the roulette ends a ray, residual
 * tracking's steps are Poisson in the ray's residual optical depth (the
 * integral of majorant - minorant over its cells) plus the draw that
 * leaves the ray, ratio tracking's Poisson in the majorant's optical depth
 * plus one; the roulette only ends rays early. So
 *   - residual tracking's mean steps per shadow ray are at most 1 + the
 *     mean residual depth (a quadrature of the cells' residuals along the
 *     rays), within 6 standard errors of the mean steps;
 *   - and at most ratio tracking's, on the same shadow rays. Here the
 *     residual depth is under half the majorant's, so residual tracking's
 *     bound lies well below ratio tracking's count even though the roulette
 *     trims ratio tracking's more (its factors 1 - density / majorant are
 *     the smaller; the transmittances, 0.25 to 0.85, keep that trim small):
 *     the gap is over 100 standard errors of the paired difference, so it
 *     never fails by chance. Restarting the free path at each cell's entry
 *     costs a draw per cell crossed, several times ratio tracking's steps
 *     here, and fails both.
 * Each ray's mean transmittance matches the quadrature of its optical
 * depth within 6 standard errors plus 1e-3 (the estimates lie in [0, 1], so
 * the mean is near normal at this N). A false alarm: below 9 x 2e-9. */
TEST(sun_shadow_residual_tracking_with_the_grid_takes_no_more_steps_than_ratio_tracking)
{
    const int nx = 24, ny = 16, nz = 20;
    float *d = cloud_volume(nx, ny, nz, 53u);
    REQUIRE(d);
    float dmax = 0.0f;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++) dmax = d[i] > dmax ? d[i] : dmax;
    VptMajorantGrid g;
    REQUIRE(vpt_majorant_grid_build(d, nx, ny, nz, 2, VPT_DENSITY_F32, dmax, 1, &g) == 0);
    VptParams P = box_params(2.0f, dmax);
    P.seed = 19u;
    vpt_params_set_majorant_grid(&P, &g, nx, ny, nz);
    float *cells = vpt_majorant_grid_cells(&g, P.tau_per_density);
    REQUIRE(cells);
    const VptMedium m = medium_of(nx, ny, nz, d, cells, &g);
    uint32_t s = 59u;
    const int N = 20000, K = 20000;
    double steps[2] = {0, 0}, sres2 = 0.0, sd = 0.0, sdd = 0.0, depth[2] = {0, 0};
    for (int r = 0; r < 8; r++) {
        const vpt_vec3 o = vpt_v3(-0.9f + 1.8f * frand(&s), -0.5f + frand(&s), -0.7f + 1.4f * frand(&s));
        const vpt_vec3 dir = vpt_normalize(vpt_v3(frand(&s) - 0.5f, frand(&s) - 0.5f, frand(&s) - 0.5f));
        float t0, t1;
        int a0, a1;
        REQUIRE(vpt_box_intersect(P.box_min, P.box_max, o, dir, &t0, &t1, &a0, &a1));
        vpt_vec3 ou, du;
        vpt_woodcock_ray(&P, o, dir, &ou, &du);
        /* the optical depths of the density, the cells' majorants and their residuals along the ray */
        double tau = 0.0, maj = 0.0, res = 0.0;
        for (int k = 0; k < K; k++) {
            const vpt_vec3 p = vpt_woodcock_point(ou, du, (float)(t1 * (k + 0.5) / K));
            tau += vpt_medium_density(&m, p);
            const size_t c = (size_t)vpt_majorant_cell_of(p.x, P.mg_per_uvw[0], 0, P.mg_cells[0] - 1) +
                             (size_t)P.mg_cells[0] *
                                 ((size_t)vpt_majorant_cell_of(p.y, P.mg_per_uvw[1], 0, P.mg_cells[1] - 1) +
                                  (size_t)P.mg_cells[1] * (size_t)vpt_majorant_cell_of(p.z, P.mg_per_uvw[2], 0,
                                                                                          P.mg_cells[2] - 1));
            maj += g.m[c];
            res += g.m[c] - g.lo[c];
        }
        const double T = exp(-tau * t1 / K * P.density_scale);
        depth[0] += maj * t1 / K * P.density_scale;
        depth[1] += res * t1 / K * P.density_scale;
        double sx = 0.0, sxx = 0.0, rs[2] = {0, 0};
        for (int i = 0; i < N; i++) {
            vpt_u64 st[2] = {0, 0};
            VptParams Q = P;
            Q.transmittance = VPT_TR_RATIO;
            vpt_shadow_transmittance(&Q, &m, o, dir, (vpt_u64)(r * N + i), 0, &st[0]);
            Q.transmittance = VPT_TR_RESIDUAL;
            const double x = vpt_shadow_transmittance(&Q, &m, o, dir, (vpt_u64)(r * N + i), 0, &st[1]);
            CHECK_MSG(x >= 0.0 && x <= 1.0, "ray %d: a per-cell estimate %g outside [0, 1]", r, x);
            sx += x;
            sxx += x * x;
            const double diff = (double)st[1] - (double)st[0];
            sd += diff;
            sdd += diff * diff;
            sres2 += (double)st[1] * (double)st[1];
            rs[0] += (double)st[0];
            rs[1] += (double)st[1];
        }
        steps[0] += rs[0];
        steps[1] += rs[1];
        const double mean = sx / N, var = sxx / N - mean * mean, se = sqrt(var > 0 ? var / N : 0.0);
        vpt_test_log("ray %d: T %.4f, residual tracking %.4f +- %.4f; steps per shadow ray: ratio %.3f, residual %.3f "
                     "(optical depths: majorant %.3f, residual %.3f)",
                     r, T, mean, se, rs[0] / N, rs[1] / N, maj * t1 / K * P.density_scale,
                     res * t1 / K * P.density_scale);
        CHECK_MSG(fabs(mean - T) <= 6 * se + 1e-3, "ray %d: mean %.5f, expected %.5f +- %.5f", r, mean, T, se);
    }
    const double n = 8.0 * N, mres = steps[1] / n, se_res = sqrt((sres2 / n - mres * mres) / n);
    const double md = sd / n, se_d = sqrt((sdd / n - md * md) / n), mdepth = depth[1] / 8.0;
    vpt_test_log("steps per shadow ray: ratio %.3f, residual %.3f +- %.3f (1 + residual depth %.3f); residual - ratio "
                 "%.3f +- %.3f",
                 steps[0] / n, mres, se_res, 1.0 + mdepth, md, se_d);
    CHECK(depth[1] < depth[0]);
    CHECK_MSG(mres <= 1.0 + mdepth + 6 * se_res, "residual tracking takes %.3f steps per shadow ray, beyond 1 + %.3f",
              mres, mdepth);
    CHECK_MSG(steps[1] <= steps[0], "residual tracking %.0f steps, ratio tracking %.0f", steps[1], steps[0]);
    free(cells);
    vpt_majorant_grid_free(&g);
    free(d);
}

/* Residual ratio tracking in a thick medium: shadow rays through the empty
 * half of a volume whose control optical depth along them is 30 or more
 * (density scale 4000, the control the volume's mean density). Their
 * transmittance is 1; the estimator applies the control's attenuation step
 * by step, so its running product stays near its expectation and the
 * roulette does not end the rays at their first step (applied at once, the
 * attenuation starts below exp(-30) and the estimate is 0). 4 rays of 8,000
 * shadow rays; a ray fails past 6 standard errors (plus 1e-3); the
 * per-step factors' log-variance, about (c / mr)^2 per step over about
 * 2,000 steps, keeps the mean's distribution close enough to normal at
 * this N that a false alarm has probability far below 1e-6. */
TEST(sun_shadow_residual_tracking_survives_a_thick_control)
{
    const int nx = 20, ny = 12, nz = 16;
    float *d = random_volume(nx, ny, nz, 31u);
    REQUIRE(d);
    double sum = 0.0;
    for (size_t i = 0; i < (size_t)nx * ny * nz; i++) {
        if ((int)(i % (size_t)nx) < nx / 2) d[i] = 0.0f;
        d[i] = d[i] > 1.0f ? 1.0f : d[i];
        sum += d[i];
    }
    VptParams P = box_params(4000.0f, 1.0f);
    P.control_density = (float)(sum / ((double)nx * ny * nz));
    P.transmittance = VPT_TR_RESIDUAL;
    P.seed = 11u;
    VptMedium m = medium_of(nx, ny, nz, d, NULL, NULL);
    /* in the box [-1, 1] in x the empty voxels are x < 0: rays from x = -0.5 toward -x leave without meeting the
     * filtered density of the voxels beyond */
    const float dirs[4][3] = {{-1.0f, 0.1f, 0.05f}, {-1.0f, -0.3f, 0.2f}, {-0.7f, 0.4f, -0.4f}, {-1.0f, 0.0f, -0.6f}};
    for (int r = 0; r < 4; r++) {
        vpt_vec3 o = vpt_v3(-0.5f, 0.05f * (float)r - 0.1f, 0.1f);
        vpt_vec3 dir = vpt_normalize(vpt_v3(dirs[r][0], dirs[r][1], dirs[r][2]));
        float t0, t1;
        int a0, a1;
        REQUIRE(vpt_box_intersect(P.box_min, P.box_max, o, dir, &t0, &t1, &a0, &a1));
        const double control_tau = (double)P.control_density * P.density_scale * t1;
        CHECK_MSG(control_tau > 30.0, "ray %d: the control's optical depth %.1f is not thick", r, control_tau);
        const int N = 8000;
        double sx = 0.0, sxx = 0.0;
        vpt_u64 steps = 0;
        for (int i = 0; i < N; i++) {
            const double x = vpt_shadow_transmittance(&P, &m, o, dir, (vpt_u64)(r * N + i), 0, &steps);
            sx += x;
            sxx += x * x;
        }
        const double mean = sx / N, var = sxx / N - mean * mean, se = sqrt(var > 0 ? var / N : 0.0);
        CHECK_MSG(fabs(mean - 1.0) <= 6 * se + 1e-3, "ray %d (control optical depth %.1f): mean %.4f +- %.4f, expected 1",
                  r, control_tau, mean, se);
    }
    free(d);
}
