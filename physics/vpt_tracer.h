/* vpt_tracer.h: Woodcock tracking and whole paths, the part of the physics
 * that meets the medium (through physics/vpt_medium.h's interface, which the
 * includer implements: kernels.cu.in on the GPU, reference/cpu_medium.h on
 * the CPU). Compiled as C11 and as CUDA C++17 under NVRTC, like
 * vpt_physics.h, whose determinism contract it keeps.
 *
 * Two estimators of the free flight, both unbiased delta tracking:
 *   - the global majorant (the thesis'): every tentative step is taken
 *     against density_max, so empty space costs as many steps as dense;
 *   - the majorant grid (pbrt-v4's MajorantGrid and DDAMajorantIterator):
 *     the ray walks the grid's cells with a 3D DDA (VptMajorantWalk) and
 *     takes its steps against each cell's own majorant; cells whose
 *     majorant is 0 are crossed without a step;
 *   - empty-space skipping (majorant=skip): the global majorant's steps, as
 *     the thesis takes them, but the density texture carries the distance
 *     map (physics/distance_map.h) as a second channel, so each step's one
 *     fetch also says how far the nearest density is, and a step far enough
 *     from any jumps the flight across the empty space around it
 *     (vpt_skip_resume). No walk, no per-flight setup, no second load:
 *     inside the medium it costs about what the global majorant costs. (A
 *     separate array of empty space, read after a step or beside the
 *     texture, is a second, dependent or extra, load that costs more than
 *     the steps it saves: docs/decisions/skip-distance-in-texture.md.)
 * The grid is taken in optical depth: a flight draws its free paths as
 * before (one draw a step, in units of ln 2 mean free paths) and chains them
 * in optical depth tau (tau_k = tau_(k-1) + x_k); the walk maps tau to the
 * distance t where the majorant's optical depth along the ray reaches it.
 * By the exponential's memorylessness this is the same process as
 * restarting the flight at every cell face (pbrt), but no draw is spent on a
 * face, and a step's distance depends only on its tau and the cells before
 * it, so batches of steps, lookahead and cooperative groups all trace the
 * same flight. Which estimator: VPT_MAJORANT_GRID (0 or 1, set by the
 * kernels' codegen); undefined (the CPU reference) chooses per render from
 * params.mg_cells. */
#ifndef VPT_TRACER_H
#define VPT_TRACER_H

#include "vpt_medium.h"
#include "vpt_physics.h"

/* Woodcock tentative steps whose texture fetches are issued together (see
 * vpt_woodcock); any value traces the same paths. Kernels set it per config. */
#ifndef VPT_LOOKAHEAD
#define VPT_LOOKAHEAD 1
#endif

#if defined(VPT_MAJORANT_GRID)
#define vpt_uses_grid(P) (VPT_MAJORANT_GRID != 0)
#else
#define vpt_uses_grid(P) ((P)->mg_cells[0] > 0 && !(P)->mg_skip)
#endif
#if defined(VPT_MAJORANT_SKIP)
#define vpt_uses_skip(P) (VPT_MAJORANT_SKIP != 0)
#else
#define vpt_uses_skip(P) ((P)->mg_cells[0] > 0 && (P)->mg_skip)
#endif
/* The sun and its shadow rays' estimator: the kernels fix both at compile
 * time (VPT_SUN, VPT_TRANSMITTANCE), the CPU reference reads the params. */
#if defined(VPT_SUN)
#define vpt_sun_on(P) (VPT_SUN != 0)
#else
#define vpt_sun_on(P) ((P)->sun_on != 0)
#endif
/* The environment map likewise: VPT_ENV_MAP in the kernels, the params on
 * the CPU. */
#if defined(VPT_ENV_MAP)
#define vpt_env_map_on(P) (VPT_ENV_MAP != 0)
#else
#define vpt_env_map_on(P) ((P)->env_map_on != 0)
#endif
#if defined(VPT_TRANSMITTANCE)
#define vpt_transmittance_of(P) (VPT_TRANSMITTANCE)
#else
#define vpt_transmittance_of(P) ((P)->transmittance)
#endif


/* The parts of one tentative Woodcock step, shared by every way of taking
 * steps (a lane's own batches, or several lanes' steps of one flight): the
 * step with draw index `draw` draws its free path and its acceptance level
 * from its two words of the path's step stream (vpt_woodcock_step_words),
 * moves from t to vpt_woodcock_advance(t, free path), samples the density
 * at vpt_woodcock_point (texture space, vpt_woodcock_ray), and ends the
 * flight when vpt_woodcock_stops.
 * Drawing and advancing are apart so that lanes can draw the free paths of
 * consecutive steps in parallel and then chain the advances in step order,
 * which rounds exactly as one lane taking the steps one by one. */
VPT_FN void vpt_woodcock_step_words(VptStepStream ss, vpt_u32 draw, vpt_u32 *wx, vpt_u32 *wy)
{
    vpt_u4 r = vpt_step_stream_pair(ss, draw >> 1);
    *wx = draw & 1u ? r.z : r.x;
    *wy = draw & 1u ? r.w : r.y;
}

/* The words of the steps with draws d and d + 1 (x, y and z, w), where
 * d = draw + 2 pair. With an even VPT_LOOKAHEAD, flights start at even draws
 * and batches take an even number of steps, so a flight's steps pair up from
 * its start: `draw` must be even there, and one hash serves both; otherwise
 * each step's words are looked up on their own. */
VPT_FN vpt_u4 vpt_woodcock_pair_words(VptStepStream ss, vpt_u32 draw, vpt_u32 pair)
{
    if (VPT_LOOKAHEAD % 2 == 0) return vpt_step_stream_pair(ss, (draw >> 1) + pair);
    vpt_u4 w;
    vpt_woodcock_step_words(ss, draw + 2u * pair, &w.x, &w.y);
    vpt_woodcock_step_words(ss, draw + 2u * pair + 1u, &w.z, &w.w);
    return w;
}

/* The free path, in units of ln 2 mean free paths at the majorant:
 * -log2(1 - u) with u uniform on [0, 1) in steps of 2^-23, as -log2(2 - v)
 * with v = vpt_u12(wx) in [1, 2): 2 - v is exact, in [2^-23, 1], never a
 * denormal; the negation folds into the advance's fused multiply-add. *level
 * is (vpt_u12(wy) - 1) * density_max, the density the step's acceptance draw
 * picks (the difference is exact, so one rounding). Three instructions a
 * step fewer than 24-bit integer draws converted to float. */
VPT_FN float vpt_woodcock_level(vpt_u32 wy, float majorant)
{
    return vpt_fmaf(vpt_u12(wy), majorant, -majorant);
}

VPT_FN float vpt_woodcock_free_path_x(vpt_u32 wx) { return -vpt_log2f(2.0f - vpt_u12(wx)); }

VPT_FN float vpt_woodcock_free_path_of(const VptParams *P, vpt_u32 wx, vpt_u32 wy, float *level)
{
    *level = vpt_woodcock_level(wy, P->density_max);
    return vpt_woodcock_free_path_x(wx);
}

VPT_FN float vpt_woodcock_free_path(const VptParams *P, VptStepStream ss, vpt_u32 draw, float *level)
{
    vpt_u32 wx, wy;
    vpt_woodcock_step_words(ss, draw, &wx, &wy);
    return vpt_woodcock_free_path_of(P, wx, wy, level);
}

VPT_FN float vpt_woodcock_advance(const VptParams *P, float t, float free_path)
{
    return vpt_fmaf(free_path, P->free_path_unit, t);
}

/* A flight's ray o + t d in texture space: uvw = ou + du t
 * (vpt_woodcock_point). */
VPT_FN void vpt_woodcock_ray(const VptParams *P, vpt_vec3 o, vpt_vec3 d, vpt_vec3 *ou, vpt_vec3 *du)
{
    *ou = vpt_world_to_uvw(P, o);
    *du = vpt_mul(d, P->inv_extent);
}

VPT_FN vpt_vec3 vpt_woodcock_point(vpt_vec3 ou, vpt_vec3 du, float t)
{
    return vpt_v3(vpt_fmaf(du.x, t, ou.x), vpt_fmaf(du.y, t, ou.y), vpt_fmaf(du.z, t, ou.z));
}

/* A step past the exit (t >= tmax) has density 0 and ends the flight; one
 * inside is a real collision with probability dens / density_max. */
VPT_FN int vpt_woodcock_stops(float t, float tmax, float level, float dens)
{
    return t >= tmax || level < dens;
}

/* Woodcock (delta) tracking against the majorant, in batches. One batch takes
 * the next VPT_LOOKAHEAD tentative steps along o + t d from *t: each is one
 * step and one draw. Returns 1 when the flight ended in the batch, with *t the
 * real collision's distance or a value >= tmax (the ray left the interval);
 * returns 0 with *t advanced past the batch otherwise. Every schedule traces
 * a flight with these parts, a lane alone (vpt_woodcock, batches) or a group
 * of lanes one step each (cooperative flights, kernels.cu.in), so draws,
 * decisions and counts never depend on the schedule.
 *
 * Steps are taken in texture space (uvw = ou + du t, one fused multiply-add
 * per axis: fmaf is correctly rounded on the CPU and __fmaf_rn on the GPU, so
 * both compute the same points); the flight's ou and du come from
 * vpt_woodcock_ray once, not per batch. A step is a draw: a flight's step
 * count is the number of draws it advanced *draw by, so batches count
 * nothing themselves. With VPT_LOOKAHEAD = L > 1 the batch's L
 * tentative distances are computed from their own draws first and their L
 * density fetches issued together, then consumed in order: the same draws,
 * decisions and counts as L = 1, with L fetches in flight instead of one;
 * fetches past the collision are wasted, and so are those past the exit
 * (clamped to the border; vpt_woodcock_stops ends the flight at t >= tmax
 * whatever the density), cheaper than the per-fetch branch avoiding them. */
VPT_FN int vpt_woodcock_batch(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du, float *t,
                              float tmax, VptStepStream ss, vpt_u32 *draw)
{
    float tt[VPT_LOOKAHEAD], level[VPT_LOOKAHEAD], dens[VPT_LOOKAHEAD];
    float tc = *t;
    vpt_u4 r = {0u, 0u, 0u, 0u};
    for (int k = 0; k < VPT_LOOKAHEAD; k++) {
        vpt_u32 wx, wy;
        if (VPT_LOOKAHEAD % 2 == 0) {
            /* *draw is even, so steps k and k + 1 share one hash */
            if (k % 2 == 0) r = vpt_woodcock_pair_words(ss, *draw, (vpt_u32)(k / 2));
            wx = k % 2 ? r.z : r.x;
            wy = k % 2 ? r.w : r.y;
        } else {
            vpt_woodcock_step_words(ss, *draw + (vpt_u32)k, &wx, &wy);
        }
        tc = vpt_woodcock_advance(P, tc, vpt_woodcock_free_path_of(P, wx, wy, &level[k]));
        tt[k] = tc;
    }
    for (int k = 0; k < VPT_LOOKAHEAD; k++)
        dens[k] = vpt_medium_density(M, vpt_woodcock_point(ou, du, tt[k]));
    /* the first stopping step, found without a branch per step */
    int taken = VPT_LOOKAHEAD, ended = 0;
    float tend = tt[VPT_LOOKAHEAD - 1];
    for (int k = VPT_LOOKAHEAD - 1; k >= 0; k--)
        if (vpt_woodcock_stops(tt[k], tmax, level[k], dens[k])) {
            taken = k + 1;
            ended = 1;
            tend = tt[k];
        }
    *draw += (vpt_u32)taken;
    *t = tend;
    return ended;
}

/* ------------------------------------------------------- the majorant grid */

/* A flight's ray in the grid's cell coordinates q = uvw * mg_per_uvw, as
 * the DDA needs it: the distance at which the ray reaches the far face of
 * cell c on axis a is ((float)c + bq_a) * iq_a, with iq_a = 1 / (du_a
 * mg_per_uvw_a) and bq_a = (1 if the ray moves up the axis, else 0) - oq_a
 * (oq the ray's origin in cell coordinates); an axis the ray does not move
 * along has bq_a = 3e38, iq_a = 1, so its face is never the nearest.
 * Computed once per flight. The walk's types keep one scalar per axis and
 * pick an axis by selection, never by a runtime array index, which would
 * put them in local memory on the GPU. */
typedef struct {
    vpt_vec3 bq, iq;
} VptMajorantRay;

VPT_FN float vpt_axis(vpt_vec3 v, int a) { return a == 0 ? v.x : a == 1 ? v.y : v.z; }

VPT_FN void vpt_majorant_ray_axis(float o, float d, float per_uvw, float *bq, float *iq)
{
    const float dq = d * per_uvw;
    *iq = dq != 0.0f ? vpt_divf(1.0f, dq) : 1.0f;
    *bq = dq != 0.0f ? (dq > 0.0f ? 1.0f : 0.0f) - o * per_uvw : 3.0e38f;
}

VPT_FN VptMajorantRay vpt_majorant_ray(const VptParams *P, vpt_vec3 ou, vpt_vec3 du)
{
    VptMajorantRay R;
    vpt_majorant_ray_axis(ou.x, du.x, P->mg_per_uvw[0], &R.bq.x, &R.iq.x);
    vpt_majorant_ray_axis(ou.y, du.y, P->mg_per_uvw[1], &R.bq.y, &R.iq.y);
    vpt_majorant_ray_axis(ou.z, du.z, P->mg_per_uvw[2], &R.bq.z, &R.iq.z);
    return R;
}

/* A flight's walk through the majorant grid's cells (a 3D DDA,
 * Amanatides and Woo 1987): the cell (or block of empty cells) the walk is
 * in, the ray's interval [t_enter, t_exit] in it and the optical depth tau at
 * both ends. Empty space is crossed in blocks: a cell whose majorant is 0
 * stores the radius k of the cube of (2k - 1)^3 empty cells around it
 * (physics/majorant_grid.h), and the walk leaves that whole cube in one
 * move. A small value type: a lane keeps one per flight, cooperative groups
 * pass it between lanes. */
typedef struct {
    int cx, cy, cz;     /* the current cell */
    int axis;           /* the axis whose face the walk leaves by; -1: the flight's end, tmax */
    int reach;          /* k - 1: the cells beyond c on each side that the current move spans */
    float t_enter, t_exit;
    float tau_enter, tau_exit;
    float t_per_tau;    /* distance per unit of tau in the cell: 1 / (majorant tau_per_density) */
    float majorant;     /* the cell's majorant, the scale of its steps' acceptance levels */
} VptMajorantWalk;

/* The distance at which the ray leaves cells c - reach .. c + reach of one
 * axis through their far face (bq, iq: that axis' components). */
VPT_FN float vpt_majorant_face(int c, int reach, float bq, float iq)
{
    return ((float)(iq > 0.0f ? c + reach : c - reach) + bq) * iq;
}

/* The index of the walk's cell in the grid (x fastest over mg_cells), as
 * the medium's majorants and minorants are read. */
VPT_FN vpt_u32 vpt_majorant_walk_cell(const VptParams *P, const VptMajorantWalk *w)
{
    return (vpt_u32)w->cx + (vpt_u32)P->mg_cells[0] * ((vpt_u32)w->cy + (vpt_u32)P->mg_cells[1] * (vpt_u32)w->cz);
}

/* Completes the walk's move into its cell: reads the cell's majorant and
 * distance per unit of tau (physics/vpt_medium.h), then the exit distance
 * and face of the cell (or of its empty cube), and the optical depth at the
 * exit. Distances come from the cell index each time, never accumulated, so
 * rounding never drifts; no division. */
VPT_FN void vpt_majorant_walk_enter(const VptParams *P, const VptMedium *M, const VptMajorantRay *R, float tmax,
                                    VptMajorantWalk *w)
{
    const vpt_u32 cell = vpt_majorant_walk_cell(P, w);
    float t_per_tau;
    const float v = vpt_medium_majorant(M, cell, &t_per_tau);
    const int reach = v < 0.0f ? (int)(-v) - 1 : 0;
    const float tx = vpt_majorant_face(w->cx, reach, R->bq.x, R->iq.x);
    const float ty = vpt_majorant_face(w->cy, reach, R->bq.y, R->iq.y);
    const float tz = vpt_majorant_face(w->cz, reach, R->bq.z, R->iq.z);
    const float te = vpt_fminf(vpt_fminf(tx, ty), vpt_fminf(tz, tmax));
    w->axis = te == tmax ? -1 : te == tx ? 0 : te == ty ? 1 : 2;
    w->reach = reach;
    w->t_exit = te;
    w->majorant = vpt_fmaxf(v, 0.0f);
    w->t_per_tau = t_per_tau;
    /* tau at the exit: the cell's depth is its length times majorant *
     * tau_per_density, which is 1 / t_per_tau (0 for an empty cell) */
    w->tau_exit = w->tau_enter + vpt_fmaxf(te - w->t_enter, 0.0f) * (w->majorant * P->tau_per_density);
}

VPT_FN int vpt_majorant_cell_of(float u, float per_uvw, int lo, int hi)
{
    const float f = vpt_fminf(vpt_fmaxf(u * per_uvw, (float)lo), (float)hi); /* NaN -> lo */
    return (int)f;
}

VPT_FN int vpt_clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Starts a flight's walk at distance t0 (tau = 0 there) in the cell that
 * holds the point; a point on a face may land in either neighbour, which is
 * safe because a cell's majorant bounds the density half a voxel beyond it. */
VPT_FN void vpt_majorant_walk_start(const VptParams *P, const VptMedium *M, const VptMajorantRay *R, vpt_vec3 ou,
                                    vpt_vec3 du, float t0, float tmax, VptMajorantWalk *w)
{
    const vpt_vec3 p = vpt_woodcock_point(ou, du, t0);
    w->cx = vpt_majorant_cell_of(p.x, P->mg_per_uvw[0], 0, P->mg_cells[0] - 1);
    w->cy = vpt_majorant_cell_of(p.y, P->mg_per_uvw[1], 0, P->mg_cells[1] - 1);
    w->cz = vpt_majorant_cell_of(p.z, P->mg_per_uvw[2], 0, P->mg_cells[2] - 1);
    w->t_enter = t0;
    w->tau_enter = 0.0f;
    vpt_majorant_walk_enter(P, M, R, tmax, w);
}

/* One move of the walk past its exit face; 0 when that leaves the grid.
 * Leaving an empty cube, the axes other than the exit's take the cell of
 * the exit point, within the cube. */
VPT_FN int vpt_majorant_walk_next(const VptParams *P, const VptMajorantRay *R, vpt_vec3 ou, vpt_vec3 du,
                                  VptMajorantWalk *w)
{
    const int a = w->axis, r = w->reach;
    if (a < 0) return 0;
    if (r > 0) {
        const vpt_vec3 p = vpt_woodcock_point(ou, du, w->t_exit);
        if (a != 0)
            w->cx = vpt_majorant_cell_of(p.x, P->mg_per_uvw[0], vpt_clampi(w->cx - r, 0, P->mg_cells[0] - 1),
                                         vpt_clampi(w->cx + r, 0, P->mg_cells[0] - 1));
        if (a != 1)
            w->cy = vpt_majorant_cell_of(p.y, P->mg_per_uvw[1], vpt_clampi(w->cy - r, 0, P->mg_cells[1] - 1),
                                         vpt_clampi(w->cy + r, 0, P->mg_cells[1] - 1));
        if (a != 2)
            w->cz = vpt_majorant_cell_of(p.z, P->mg_per_uvw[2], vpt_clampi(w->cz - r, 0, P->mg_cells[2] - 1),
                                         vpt_clampi(w->cz + r, 0, P->mg_cells[2] - 1));
    }
    const int step = vpt_axis(R->iq, a) > 0.0f ? r + 1 : -r - 1;
    const int c = (a == 0 ? w->cx : a == 1 ? w->cy : w->cz) + step;
    const int n = a == 0 ? P->mg_cells[0] : a == 1 ? P->mg_cells[1] : P->mg_cells[2];
    w->cx = a == 0 ? c : w->cx;
    w->cy = a == 1 ? c : w->cy;
    w->cz = a == 2 ? c : w->cz;
    return c >= 0 && c < n;
}

/* Moves the walk into the next cell (or empty cube) past its exit face and
 * reads it (vpt_majorant_walk_enter), the optical depth carried over; 0 when
 * that leaves the grid or the flight has reached tmax. */
VPT_FN int vpt_majorant_walk_cross(const VptParams *P, const VptMedium *M, const VptMajorantRay *R, vpt_vec3 ou,
                                   vpt_vec3 du, float tmax, VptMajorantWalk *w)
{
    if (!vpt_majorant_walk_next(P, R, ou, du, w)) return 0;
    w->t_enter = w->t_exit;
    w->tau_enter = w->tau_exit;
    vpt_majorant_walk_enter(P, M, R, tmax, w);
    return 1;
}

/* The flight's distance where the majorant's optical depth reaches tau (tau
 * never below the last one asked for): walks on through the cells it needs,
 * crossing empty space a cube at a time. Sets *majorant to the majorant of
 * the cell it ends in. Past the last cell (the flight left the box) it
 * returns tmax from then on, with majorant 0: the step stops there
 * (vpt_woodcock_stops) whatever its density. */
VPT_FN float vpt_majorant_walk_to(const VptParams *P, const VptMedium *M, const VptMajorantRay *R, vpt_vec3 ou,
                                  vpt_vec3 du, float tmax, VptMajorantWalk *w, float tau, float *majorant)
{
    while (!(tau < w->tau_exit)) {
        if (!vpt_majorant_walk_cross(P, M, R, ou, du, tmax, w)) {
            w->axis = -1;
            w->reach = 0;
            w->t_enter = tmax;
            w->tau_exit = 3.0e38f;
            w->t_per_tau = 0.0f;
            w->majorant = 0.0f;
            break;
        }
    }
    *majorant = w->majorant;
    return vpt_fmaf(tau - w->tau_enter, w->t_per_tau, w->t_enter);
}

/* The words of the steps with draws d and d + 1 (x, y and z, w) for any d:
 * one hash when d is even, two when odd (with the majorant grid a batch may
 * end inside a pair, see vpt_woodcock_batch_grid). */
VPT_FN vpt_u4 vpt_woodcock_words_at(VptStepStream ss, vpt_u32 d)
{
    const vpt_u4 a = vpt_step_stream_pair(ss, d >> 1);
    if (!(d & 1u)) return a;
    const vpt_u4 b = vpt_step_stream_pair(ss, (d >> 1) + 1u);
    vpt_u4 w;
    w.x = a.z;
    w.y = a.w;
    w.z = b.x;
    w.w = b.y;
    return w;
}

/* vpt_woodcock_batch against the majorant grid, one move of the flight in
 * an "if-if" loop (Aila and Laine 2009): the batch draws its next
 * VPT_LOOKAHEAD free paths and chains them in optical depth from *tau; the
 * steps whose depth falls inside the walk's current cell are taken (their
 * distances and acceptance levels from the cell, their densities fetched
 * together, the first stopping one ending the flight), and when none does,
 * the walk crosses one cell (or empty cube) instead, taking no step. Steps
 * beyond the cell are not taken: the next batch draws them again, with the
 * same draws, so every step's tau, distance and decision are those of one
 * step at a time (vpt_majorant_walk_to), and the same contract as
 * vpt_woodcock_batch. Each loop iteration of a warp is then either steps or
 * one crossing, never a crossing loop inside a step: lanes diverge less.
 * *tau and *w carry the flight to the next batch; batches may end at odd
 * draws (vpt_woodcock_words_at). */
VPT_FN int vpt_woodcock_batch_grid(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du,
                                   const VptMajorantRay *R, VptMajorantWalk *w, float *tau, float *t, float tmax,
                                   VptStepStream ss, vpt_u32 *draw)
{
    float uu[VPT_LOOKAHEAD], tt[VPT_LOOKAHEAD], level[VPT_LOOKAHEAD], dens[VPT_LOOKAHEAD];
    vpt_u32 wy[VPT_LOOKAHEAD];
    float tc = *tau;
    vpt_u4 r = {0u, 0u, 0u, 0u};
    int inside = 0;
    for (int k = 0; k < VPT_LOOKAHEAD; k++) {
        vpt_u32 wx;
        if (VPT_LOOKAHEAD == 1) {
            vpt_woodcock_step_words(ss, *draw, &wx, &wy[k]);
        } else {
            if (k % 2 == 0) r = vpt_woodcock_words_at(ss, *draw + (vpt_u32)k);
            wx = k % 2 ? r.z : r.x;
            wy[k] = k % 2 ? r.w : r.y;
        }
        tc = tc + vpt_woodcock_free_path_x(wx);
        uu[k] = tc;
        inside += tc < w->tau_exit;
    }
    if (inside == 0) { /* the next step is beyond the cell: cross it */
        if (!vpt_majorant_walk_cross(P, M, R, ou, du, tmax, w)) {
            *draw += 1u; /* that step leaves the box */
            *t = tmax;
            return 1;
        }
        return 0;
    }
    for (int k = 0; k < VPT_LOOKAHEAD; k++) {
        tt[k] = vpt_fmaf(uu[k] - w->tau_enter, w->t_per_tau, w->t_enter);
        level[k] = vpt_woodcock_level(wy[k], w->majorant);
    }
    for (int k = 0; k < VPT_LOOKAHEAD; k++)
        dens[k] = vpt_medium_density(M, vpt_woodcock_point(ou, du, tt[k]));
    int taken = inside, ended = 0;
    float tend = tt[0];
    for (int k = VPT_LOOKAHEAD - 1; k >= 0; k--)
        if (k < inside && vpt_woodcock_stops(tt[k], tmax, level[k], dens[k])) {
            taken = k + 1;
            ended = 1;
            tend = tt[k];
        }
    for (int k = 0; k < VPT_LOOKAHEAD; k++)
        if (k == taken - 1) {
            if (!ended) tend = tt[k];
            tc = uu[k];
        }
    *draw += (vpt_u32)taken;
    *t = tend;
    *tau = tc;
    return ended;
}

/* ------------------------------------------------- empty-space skipping */

/* Where a flight resumes after a step at distance t that did not stop and
 * landed where the filtered distance map reads D voxels (majorant=skip):
 * with D >= 3, at t + (D - 2.125) / s, s the ray's speed in voxels along its
 * fastest axis (an L-infinity length of D - 2.125 voxels); else at t (no
 * jump). Unbiased: the filter averages the map at the 8 texel centres
 * within one voxel of the landing point x, and the map is 1-Lipschitz, so
 * x is more than D - 1 voxels from every centre with density, and each
 * point of the jump more than 1.125: the trilinear filter returns exactly 0
 * there (it reads only centres within one voxel). The flight could have no
 * real collision on the jump, and by the exponential's memorylessness its
 * next free path may start at the jump's end as well as at t. The 1/8 voxel
 * covers the half-float rounding of the map (2^-12 of 255) and the
 * filter's arithmetic. One division, only when a step jumps. */
VPT_FN float vpt_skip_resume(const VptParams *P, vpt_vec3 du, float t, float D)
{
    if (!(D >= 3.0f)) return t;
    const float s = vpt_fmaxf(vpt_fmaxf(vpt_fabsf(du.x) * P->mg_per_uvw[0], vpt_fabsf(du.y) * P->mg_per_uvw[1]),
                              vpt_fabsf(du.z) * P->mg_per_uvw[2]);
    return t + vpt_divf(D - 2.125f, s);
}

/* vpt_woodcock_batch with empty-space skipping: the batch's VPT_LOOKAHEAD
 * steps are drawn and advanced as there, and each fetches its density and
 * the distance map in one texel; they are consumed in order up to the
 * first that stops the flight (then it ends, as in vpt_woodcock_batch) or
 * jumps (vpt_skip_resume; then the batch ends at the jump's end). Each
 * step's decision is therefore that of one step at a time, whatever the
 * lookahead: the next batch draws on from the step after the last one
 * taken, so batches may start at odd draws (vpt_woodcock_words_at). A jump
 * past tmax ends the flight like a step past it. */
VPT_FN int vpt_woodcock_batch_skip(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du, float *t,
                                   float tmax, VptStepStream ss, vpt_u32 *draw)
{
    float tt[VPT_LOOKAHEAD], level[VPT_LOOKAHEAD], dens[VPT_LOOKAHEAD], dist[VPT_LOOKAHEAD];
    float tc = *t;
    vpt_u4 r = {0u, 0u, 0u, 0u};
    for (int k = 0; k < VPT_LOOKAHEAD; k++) {
        vpt_u32 wx, wy;
        if (VPT_LOOKAHEAD == 1) {
            vpt_woodcock_step_words(ss, *draw, &wx, &wy);
        } else {
            if (k % 2 == 0) r = vpt_woodcock_words_at(ss, *draw + (vpt_u32)k);
            wx = k % 2 ? r.z : r.x;
            wy = k % 2 ? r.w : r.y;
        }
        tc = vpt_woodcock_advance(P, tc, vpt_woodcock_free_path_of(P, wx, wy, &level[k]));
        tt[k] = tc;
    }
    for (int k = 0; k < VPT_LOOKAHEAD; k++)
        dens[k] = vpt_medium_density_distance(M, vpt_woodcock_point(ou, du, tt[k]), &dist[k]);
    /* the first step that stops or jumps, without a branch per step */
    int taken = VPT_LOOKAHEAD, ended = 0;
    float tend = tt[VPT_LOOKAHEAD - 1];
    for (int k = VPT_LOOKAHEAD - 1; k >= 0; k--) {
        const int stop = vpt_woodcock_stops(tt[k], tmax, level[k], dens[k]);
        if (stop || dist[k] >= 3.0f) {
            taken = k + 1;
            ended = stop;
            tend = tt[k];
        }
    }
    /* its distance, picked by selection (no runtime index: registers on the
     * GPU); taken with the others in the loop above, GCC 12's vectorizer at
     * -O2 gave the last jumping step's instead of the first's */
    float dend = 0.0f;
    for (int k = 0; k < VPT_LOOKAHEAD; k++)
        if (k == taken - 1) dend = dist[k];
    if (!ended && dend >= 3.0f) {
        tend = vpt_skip_resume(P, du, tend, dend);
        ended = tend >= tmax;
    }
    *draw += (vpt_u32)taken;
    *t = tend;
    return ended;
}

/* A whole Woodcock flight from t: the distance of the real collision, or a
 * value >= tmax when the ray leaves the interval. */
VPT_FN float vpt_woodcock_in(const VptParams *P, const VptMedium *M, vpt_vec3 o, vpt_vec3 d, float t, float tmax,
                             VptStepStream ss, vpt_u32 *draw, vpt_u64 *steps)
{
    vpt_vec3 ou, du;
    vpt_woodcock_ray(P, o, d, &ou, &du);
    const vpt_u32 first = *draw;
    if (vpt_uses_grid(P)) {
        const VptMajorantRay R = vpt_majorant_ray(P, ou, du);
        VptMajorantWalk w;
        float tau = 0.0f;
        vpt_majorant_walk_start(P, M, &R, ou, du, t, tmax, &w);
        while (!vpt_woodcock_batch_grid(P, M, ou, du, &R, &w, &tau, &t, tmax, ss, draw)) {
        }
    } else if (vpt_uses_skip(P)) {
        while (!vpt_woodcock_batch_skip(P, M, ou, du, &t, tmax, ss, draw)) {
        }
    } else {
        while (!vpt_woodcock_batch(P, M, ou, du, &t, tmax, ss, draw)) {
        }
    }
    *steps += (vpt_u64)(*draw - first);
    return t;
}

/* A path's own flight: its step stream (a shadow ray has another). */
VPT_FN float vpt_woodcock(const VptParams *P, const VptMedium *M, vpt_vec3 o, vpt_vec3 d, float t, float tmax,
                          vpt_u64 path, vpt_u32 *draw, vpt_u64 *steps)
{
    return vpt_woodcock_in(P, M, o, d, t, tmax, vpt_step_stream(P->seed, path), draw, steps);
}

/* ------------------------------------------------ the sun's shadow rays */

/* A shadow ray's random words: a step stream of its own per (seed, path,
 * depth of the scattering it leaves from), pair k for its step k (the x
 * word the free path, the y word the roulette; delta tracking takes its
 * steps' words as a flight does, from draw 0), the last pair for the disk's
 * direction. Its fourth input word carries bit 30 (a path's events,
 * vpt_rng, carry neither bit 30 nor 31, its flights bit 31; path indices
 * stay below 2^62), so shadow rays never reuse a path's words, and paths'
 * depths never share a stream within a render. */
VPT_FN VptStepStream vpt_shadow_stream(const VptParams *P, vpt_u64 path, int depth)
{
    VptStepStream k;
    k.x = vpt_pcg4d_lcg((vpt_u32)path);
    k.z = vpt_pcg4d_lcg(P->seed ^ ((vpt_u32)depth * 0x9E3779B9u));
    k.w = vpt_pcg4d_lcg((vpt_u32)(path >> 32) ^ 0x40000000u);
    return k;
}
#define VPT_SHADOW_DISK_PAIR 0xFFFFFFFFu

/* Roulette on a small shadow weight: below 1/8 it survives with
 * probability 8 T, as 1/8 (unbiased: the expectation is T). The u word's
 * 24 bits decide. */
VPT_FN float vpt_shadow_roulette(float T, vpt_u32 u)
{
    if (T >= 0.125f) return T;
    return vpt_u01(u) < 8.0f * T ? 0.125f : 0.0f;
}

/* Ratio tracking from t to tmax: steps at the majorant, each multiplying T
 * by 1 - density / majorant; through the majorant grid's cells with the
 * grid, jumping empty space by the distance map with skip, against the
 * global majorant otherwise. */
VPT_FN float vpt_shadow_ratio(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du, float t, float tmax,
                              VptStepStream ss, vpt_u32 pair, vpt_u64 *steps)
{
    float T = 1.0f;
    if (vpt_uses_grid(P)) {
        const VptMajorantRay R = vpt_majorant_ray(P, ou, du);
        VptMajorantWalk w;
        vpt_majorant_walk_start(P, M, &R, ou, du, t, tmax, &w);
        float tau = 0.0f;
        for (;;) {
            const vpt_u4 r = vpt_step_stream_pair(ss, pair++);
            tau = tau + vpt_woodcock_free_path_x(r.x);
            float maj;
            const float tt = vpt_majorant_walk_to(P, M, &R, ou, du, tmax, &w, tau, &maj);
            *steps += 1u;
            if (tt >= tmax || !(maj > 0.0f)) break;
            const float d = vpt_medium_density(M, vpt_woodcock_point(ou, du, tt));
            T = vpt_shadow_roulette(T * vpt_fmaxf(0.0f, 1.0f - vpt_divf(d, maj)), r.y);
            if (T == 0.0f) break;
        }
        return T;
    }
    for (;;) {
        const vpt_u4 r = vpt_step_stream_pair(ss, pair++);
        t = vpt_woodcock_advance(P, t, vpt_woodcock_free_path_x(r.x));
        *steps += 1u;
        if (t >= tmax) break;
        float d;
        if (vpt_uses_skip(P)) {
            /* a step in empty space multiplies by 1: the jump across it
             * (vpt_skip_resume) drops only factors of 1, and the steps
             * resume past it by memorylessness */
            float D;
            d = vpt_medium_density_distance(M, vpt_woodcock_point(ou, du, t), &D);
            t = vpt_skip_resume(P, du, t, D);
        } else {
            d = vpt_medium_density(M, vpt_woodcock_point(ou, du, t));
        }
        T = vpt_shadow_roulette(T * vpt_fmaxf(0.0f, 1.0f - vpt_divf(d, P->density_max)), r.y);
        if (T == 0.0f) break;
    }
    return T;
}

/* Residual ratio tracking (Novak et al. 2014) about a control density c:
 * T = exp(-sigma_c (tmax - t)) x the product over steps at the residual
 * majorant mr of 1 - (density - c) / mr. Unbiased for any c >= 0 and any
 * mr bounding density - c; the control sets how many steps there are and
 * how heavy the factors' tails are.
 *
 * With the majorant grid (a config's majorant=gridC) each cell has its own
 * control, its minorant, and its own residual majorant, its majorant less
 * the minorant: every factor lies in [0, 1]. The ray draws one free path
 * at a time in residual optical depth (the residual majorant's, in the
 * units of the walk's tau: ln 2 mean free paths) and chains them across
 * the cells as ratio tracking chains its free paths in the majorant's
 * (vpt_shadow_residual_grid): by the exponential's memorylessness this is
 * the process that restarts the free path at each cell's entry, without a
 * draw spent overshooting each cell. A step is taken only where a free path
 * ends inside the ray, so the steps are Poisson in the ray's residual
 * optical depth, plus the one draw that leaves the ray (none when no cell
 * it crosses has a residual); at most ratio tracking's with the same grid,
 * whose rate in every cell is the majorant. A cell of constant density
 * (residual 0) and an empty cell take no step; the constant cell's control
 * attenuation is its transmittance exactly. With the global majorant or
 * skip, one control for the whole ray, params.control_density (the
 * volume's mean density), against mr = max(density_max - c, c): each
 * factor in [0, 2], and long rays through density below c multiply many
 * factors above 1, whose heavy tail few samples see.
 *
 * Either way the control's attenuation is applied step by step, exp(-sigma_c)
 * over each step's own distance (with the grid, over each stretch between
 * a step and a cell face too, each with its cell's control), so that T is
 * a running product whose expectation stays the partial transmittance (in
 * empty space under a constant control each step's factor has expectation
 * 1: (mr / (mr + c)) x (1 + c / mr)). Applied at once, in a thick medium it
 * would start T near 0 (exp(-100) for a control optical depth of 100; 0 in
 * float, flushed, past about 87): the roulette would end almost every ray
 * at its first step, and the rare survivor would have to carry the whole
 * expectation, so in any feasible number of samples the estimate would be
 * 0. The value is the same product either way; only where the roulette
 * acts differs, and the roulette is unbiased wherever it acts. */

/* The steps of one stretch [t, t_end) under control c and residual
 * majorant mr (> 0), continuing T; the stream's pairs from *pair. 0 when
 * the roulette ended the ray. */
VPT_FN float vpt_shadow_residual_run(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du, float t,
                                     float t_end, float c, float mr, float T, VptStepStream ss, vpt_u32 *pair,
                                     vpt_u64 *steps)
{
    /* tau_per_density is optical depth per unit density and distance in
     * units of ln 2: exp(-x ln 2) = exp2(-x) */
    const float ctau = c * P->tau_per_density;
    const float unit = vpt_divf(1.0f, P->tau_per_density * mr); /* distance per unit of free path */
    for (;;) {
        const vpt_u4 r = vpt_step_stream_pair(ss, (*pair)++);
        const float t1 = vpt_fmaf(vpt_woodcock_free_path_x(r.x), unit, t);
        *steps += 1u;
        if (t1 >= t_end) return T * vpt_exp2f(-ctau * vpt_fmaxf(t_end - t, 0.0f));
        const float d = vpt_medium_density(M, vpt_woodcock_point(ou, du, t1));
        T = vpt_shadow_roulette(T * vpt_exp2f(-ctau * (t1 - t)) * (1.0f - vpt_divf(d - c, mr)), r.y);
        if (T == 0.0f) return 0.0f;
        t = t1;
    }
}

/* Residual ratio tracking through the majorant grid's cells from t to
 * tmax (the walk and its crossings, vpt_majorant_walk_cross, as every
 * flight's): rtau is the residual optical depth from t to the current
 * cell's entry, and tau the pending free path's end in it, drawn when the
 * first cell with a residual needs it (pair by pair from `pair`, x the free
 * path, y the roulette). In a cell with control c and residual majorant mr
 * the residual depth grows by mr tau_per_density per unit distance, and
 * each free path that ends before the cell's exit is a step there; the
 * control's attenuation runs over each stretch between the cell's entry,
 * its steps and its exit. A step's distance is clamped into the cell, so
 * however it rounds the stretches of one cell add up to its length and the
 * attenuation is the control's optical depth along the ray. */
VPT_FN float vpt_shadow_residual_grid(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du, float t,
                                      float tmax, VptStepStream ss, vpt_u32 pair, vpt_u64 *steps)
{
    const VptMajorantRay R = vpt_majorant_ray(P, ou, du);
    VptMajorantWalk w;
    vpt_majorant_walk_start(P, M, &R, ou, du, t, tmax, &w);
    float T = 1.0f, rtau = 0.0f, tau = 0.0f;
    vpt_u32 u = 0u; /* the pending step's roulette word */
    int drawn = 0;
    for (;;) {
        const float c =
            w.majorant > 0.0f ? vpt_fminf(vpt_medium_minorant(M, vpt_majorant_walk_cell(P, &w)), w.majorant) : 0.0f;
        const float mr = w.majorant - c;
        const float ctau = c * P->tau_per_density;
        float ts = w.t_enter; /* the start of the cell's stretch not yet attenuated */
        if (mr > 0.0f) {
            const float rate = mr * P->tau_per_density; /* residual depth per unit distance */
            const float rexit = rtau + rate * vpt_fmaxf(w.t_exit - w.t_enter, 0.0f);
            for (;;) {
                if (!drawn) {
                    const vpt_u4 r = vpt_step_stream_pair(ss, pair++);
                    tau = tau + vpt_woodcock_free_path_x(r.x);
                    u = r.y;
                    *steps += 1u;
                    drawn = 1;
                }
                if (!(tau < rexit)) break;
                const float t1 = vpt_fminf(w.t_enter + vpt_divf(tau - rtau, rate), w.t_exit);
                const float d = vpt_medium_density(M, vpt_woodcock_point(ou, du, t1));
                T = vpt_shadow_roulette(
                    T * vpt_exp2f(-ctau * vpt_fmaxf(t1 - ts, 0.0f)) * (1.0f - vpt_divf(d - c, mr)), u);
                if (T == 0.0f) return 0.0f;
                ts = vpt_fmaxf(t1, ts);
                drawn = 0;
            }
            rtau = rexit;
        }
        /* the rest of the cell: all of it for a constant cell, its exact transmittance */
        T *= vpt_exp2f(-ctau * vpt_fmaxf(w.t_exit - ts, 0.0f));
        if (!vpt_majorant_walk_cross(P, M, &R, ou, du, tmax, &w)) return T;
    }
}

VPT_FN float vpt_shadow_residual(const VptParams *P, const VptMedium *M, vpt_vec3 ou, vpt_vec3 du, float t,
                                 float tmax, VptStepStream ss, vpt_u32 pair, vpt_u64 *steps)
{
    if (vpt_uses_grid(P)) return vpt_shadow_residual_grid(P, M, ou, du, t, tmax, ss, pair, steps);
    const float c = P->control_density;
    const float mr = vpt_fmaxf(P->density_max - c, c);
    if (!(mr > 0.0f)) return vpt_exp2f(-c * P->tau_per_density * (tmax - t));
    return vpt_shadow_residual_run(P, M, ou, du, t, tmax, c, mr, 1.0f, ss, &pair, steps);
}

/* The transmittance from o toward direction w to the box's exit, by the
 * estimator the kernel (or params) chose; `depth` picks the shadow ray's
 * stream (vpt_shadow_stream). Delta tracking is a whole free flight, with
 * the config's majorant. */
VPT_FN float vpt_shadow_transmittance(const VptParams *P, const VptMedium *M, vpt_vec3 o, vpt_vec3 w, vpt_u64 path,
                                      int depth, vpt_u64 *steps)
{
    float t0, t1;
    int a0, a1;
    if (!vpt_box_intersect(P->box_min, P->box_max, o, w, &t0, &t1, &a0, &a1) || t1 <= VPT_RAY_EPS) return 1.0f;
    const float t = vpt_fmaxf(t0, 0.0f);
    const VptStepStream ss = vpt_shadow_stream(P, path, depth);
    vpt_vec3 ou, du;
    vpt_woodcock_ray(P, o, w, &ou, &du);
    const int kind = vpt_transmittance_of(P);
    if (kind == VPT_TR_RATIO) return vpt_shadow_ratio(P, M, ou, du, t, t1, ss, 0u, steps);
    if (kind == VPT_TR_RESIDUAL) return vpt_shadow_residual(P, M, ou, du, t, t1, ss, 0u, steps);
    vpt_u32 draw = 0u; /* delta tracking: a flight's steps, two to a pair */
    return vpt_woodcock_in(P, M, o, w, t, t1, ss, &draw, steps) >= t1 ? 1.0f : 0.0f;
}

/* A direction toward the sun and the weight of its sample: the sun's
 * direction for a delta light, else uniform in its cone (pdf 1 / solid
 * angle, folded into sun_weight). */
VPT_FN vpt_vec3 vpt_sun_sample(const VptParams *P, vpt_u64 path, int depth)
{
    if (P->sun_cos_max >= 1.0f) return P->sun_dir;
    const vpt_u4 r = vpt_step_stream_pair(vpt_shadow_stream(P, path, depth), VPT_SHADOW_DISK_PAIR);
    const float c = 1.0f - vpt_u01(r.x) * (1.0f - P->sun_cos_max);
    const float sn = vpt_sqrtf(vpt_fmaxf(0.0f, 1.0f - c * c));
    float sp, cp;
    vpt_sincosf(2.0f * VPT_PI * vpt_u01(r.y), &sp, &cp);
    vpt_vec3 t, b;
    vpt_tangent_frame(P->sun_dir, &t, &b);
    return vpt_add(vpt_add(vpt_scale(t, sn * cp), vpt_scale(b, sn * sp)), vpt_scale(P->sun_dir, c));
}

/* The shadow ray toward the environment map leaves from the same
 * scattering as the sun's but draws from a stream of its own: its depth
 * index carries bit 30 (paths' depths stay below 2^30), which moves every
 * word of vpt_shadow_stream's seed input. */
#define VPT_ENV_SHADOW_DEPTH 0x40000000

/* Next-event estimation at a scattering at s->o (s->thr already holds the
 * albedo): each light's radiance over its sampling pdf through the phase
 * function and a shadow ray's transmittance, gathered into s->L. The sun
 * and the map each get a sample of their own (both are always taken: no
 * light is chosen at random). Only with a null boundary: a shadow ray
 * cannot cross a dielectric. */
VPT_FN int vpt_nee_active(const VptParams *P)
{
    return (vpt_sun_on(P) || vpt_env_map_on(P)) && P->boundary == VPT_BOUNDARY_NULL;
}

VPT_FN void vpt_path_nee(const VptParams *P, const VptMedium *M, VptPath *s, vpt_u64 *steps)
{
#if VPT_GATHERS
    if (vpt_sun_on(P)) {
        const vpt_vec3 w = vpt_sun_sample(P, s->path, s->depth);
        const float ph = vpt_hg_eval(P->hg_g, vpt_dot(s->d, w));
        const float T = vpt_shadow_transmittance(P, M, s->o, w, s->path, s->depth, steps);
        if (T > 0.0f) s->L = vpt_add(s->L, vpt_scale(vpt_mul(s->thr, P->sun_weight), ph * T));
    }
    if (vpt_env_map_on(P)) {
        const int depth = s->depth + VPT_ENV_SHADOW_DEPTH;
        const vpt_u4 r = vpt_step_stream_pair(vpt_shadow_stream(P, s->path, depth), VPT_SHADOW_DISK_PAIR);
        const vpt_vec3 w = vpt_env_sample(P, vpt_u01(r.x), vpt_u01(r.y), vpt_u01(r.z));
        const vpt_vec3 Le = vpt_env_radiance(P, w);
        if (vpt_max3(Le) > 0.0f) {
            const float ph = vpt_hg_eval(P->hg_g, vpt_dot(s->d, w));
            const float T = vpt_shadow_transmittance(P, M, s->o, w, s->path, depth, steps);
            if (T > 0.0f) s->L = vpt_add(s->L, vpt_scale(vpt_mul(s->thr, Le), vpt_divf(ph * T, vpt_env_pdf(P, w))));
        }
    }
#else
    (void)P, (void)M, (void)s, (void)steps;
#endif
}

/* One extension ("ray" in the thesis' rays/s) from the current point to the
 * next event, in two halves around the Woodcock flight so that a schedule
 * may interleave the flight's batches with other work:
 *
 * vpt_path_extend_begin returns 1 when the extension needs a flight over
 * [*t, *tmax] (then s->axis already holds the exit face and s->draw is
 * even); otherwise it has
 * set s->event (and moved s->o) itself: the ray misses the box (ESCAPED) or
 * reaches the dielectric boundary from outside (SURFACE).
 * vpt_path_extend_finish takes the flight's end distance and sets s->event
 * and s->o: SCATTER inside, else ESCAPED (null boundary) or SURFACE at the
 * exit face. */
VPT_FN int vpt_path_extend_begin(const VptParams *P, VptPath *s, float *t, float *tmax)
{
    float t0, t1;
    int a0, a1;
    if (!vpt_box_intersect(P->box_min, P->box_max, s->o, s->d, &t0, &t1, &a0, &a1) || t1 <= VPT_RAY_EPS) {
        s->event = VPT_EV_ESCAPED;
        return 0;
    }
    if (P->boundary != VPT_BOUNDARY_NULL && !s->inside) {
        s->o = vpt_madd(s->o, s->d, vpt_fmaxf(t0, 0.0f));
        s->event = VPT_EV_SURFACE;
        s->axis = a0;
        return 0;
    }
    *t = vpt_fmaxf(t0, 0.0f);
    *tmax = t1;
    s->axis = a1;
    s->draw += s->draw & 1u; /* flights start at even draws (vpt_woodcock_batch) */
    return 1;
}

VPT_FN void vpt_path_extend_finish(const VptParams *P, VptPath *s, float t, float tmax)
{
    if (t < tmax) {
        s->o = vpt_madd(s->o, s->d, t);
        s->event = VPT_EV_SCATTER;
        return;
    }
    if (P->boundary == VPT_BOUNDARY_NULL) {
        s->event = VPT_EV_ESCAPED;
        return;
    }
    s->o = vpt_madd(s->o, s->d, tmax);
    s->event = VPT_EV_SURFACE;
}

/* A whole extension: sets s->event and moves s->o there; counts Woodcock
 * steps. */
VPT_FN void vpt_path_extend(const VptParams *P, const VptMedium *M, VptPath *s, vpt_u64 *steps)
{
    float t, tmax;
    if (!vpt_path_extend_begin(P, s, &t, &tmax)) return;
    t = vpt_woodcock(P, M, s->o, s->d, t, tmax, s->path, &s->draw, steps);
    vpt_path_extend_finish(P, s, t, tmax);
}

/* Applies the event of the last extension (one draw): at a collision the
 * albedo estimator of eq. 3.13 (thr *= albedo), next-event estimation
 * toward the sun (vpt_path_nee; its shadow ray's steps count in *steps) and
 * a new HG direction; at the boundary a BSDF sample. Then max depth and
 * Russian roulette. An ESCAPED path must not be passed here: its
 * contribution is vpt_path_radiance. A path this ends (VPT_PATH_DONE)
 * still carries what next-event estimation gathered: vpt_path_radiance. */
VPT_FN int vpt_path_interact(const VptParams *P, const VptMedium *M, VptPath *s, vpt_u64 *steps)
{
    vpt_u4 r = vpt_rng(P->seed, s->path, s->draw);
    s->draw += 1u;
    if (s->event == VPT_EV_SCATTER) {
        vpt_vec3 a = vpt_medium_albedo(M, vpt_world_to_uvw(P, s->o));
        s->thr = vpt_mul(s->thr, a);
        if (vpt_nee_active(P)) vpt_path_nee(P, M, s, steps);
        s->d = vpt_hg_sample(P->hg_g, s->d, vpt_u01(r.x), vpt_u01(r.y));
    } else {
        vpt_vec3 n = vpt_box_normal(P, s->o, s->axis);
        if (vpt_boundary_sample(P, s->d, n, s->inside, vpt_u01(r.x), vpt_u01(r.y), vpt_u01(r.z), &s->d, &s->thr))
            s->inside = !s->inside;
    }
    s->depth += 1;
    if (P->max_depth > 0 && s->depth >= P->max_depth) return VPT_PATH_DONE;
    float m = vpt_max3(s->thr);
    if (!(m > 0.0f)) return VPT_PATH_DONE;
    if (P->rr_depth >= 0 && s->depth >= P->rr_depth && m < 1.0f) {
        if (vpt_u01(r.w) >= m) return VPT_PATH_DONE;
        s->thr = vpt_scale(s->thr, vpt_divf(1.0f, m));
    }
    return VPT_PATH_ALIVE;
}

/* The radiance a finished path carries: what next-event estimation
 * gathered, and for an ESCAPED path thr times the environment, plus the
 * sun's disk where the path leaves through it and the environment map,
 * each only where next-event estimation did not already count that light
 * for that bounce (the camera ray, or a boundary scene, which has no
 * next-event estimation). A delta sun is never hit. */
VPT_FN vpt_vec3 vpt_path_radiance(const VptParams *P, const VptPath *s)
{
#if VPT_GATHERS
    vpt_vec3 L = s->L;
    if (s->event != VPT_EV_ESCAPED) return L;
    vpt_vec3 e = P->env;
    if (vpt_sun_on(P) && P->sun_cos_max < 1.0f && (s->depth == 0 || !vpt_nee_active(P)) &&
        vpt_dot(s->d, P->sun_dir) >= P->sun_cos_max)
        e = vpt_add(e, P->sun_radiance);
    if (vpt_env_map_on(P) && (s->depth == 0 || !vpt_nee_active(P))) e = vpt_add(e, vpt_env_radiance(P, s->d));
    return vpt_add(L, vpt_mul(s->thr, e));
#else
    return vpt_mul(s->thr, P->env);
#endif
}


/* Traces one whole path (algorithm 2 of the thesis) and returns its radiance
 * sample; the reference renderer and naiveSK use it. */
VPT_FN vpt_vec3 vpt_trace_path(const VptParams *P, const VptMedium *M, vpt_u64 path, VptCounters *c)
{
    VptPath s;
    vpt_path_start(P, path, &s);
    vpt_vec3 L = vpt_v3(0.0f, 0.0f, 0.0f);
    for (;;) {
        vpt_path_extend(P, M, &s, &c->steps);
        c->rays += 1u;
        if (s.event == VPT_EV_ESCAPED) {
            L = vpt_path_radiance(P, &s);
            break;
        }
        if (vpt_path_interact(P, M, &s, &c->steps) != VPT_PATH_ALIVE) {
            L = vpt_path_radiance(P, &s);
            break;
        }
    }
    c->paths += 1u;
    return L;
}


#endif /* VPT_TRACER_H */
