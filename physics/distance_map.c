#include "physics/distance_map.h"

#include "base/error.h"
#include "base/threads.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The map is separable: the L-infinity distance to the nearest voxel with
 * density is
 *   D(x,y,z) = min_z' max(|z-z'|, min_y' max(|y-y'|, min_x' max(|x-x'|, F(x',y',z'))))
 * with F = 0 at a voxel with density and "infinity" elsewhere, because max
 * is associative and min distributes over it. So three passes of the 1D
 * transform g -> min_i max(|x-i|, g(i)), one per axis, compute it exactly,
 * each line independently of the others (the passes run on all cores).
 * Capping at VPT_DISTANCE_MAP_MAX before a pass caps its result and changes
 * nothing below the cap (the line's own term max(0, g(x)) bounds the min),
 * so "infinity" is the cap and the work is in bytes. */

/* f(x, i) = max(|x - i|, g[i]). */
static inline int cone(const uint8_t *g, int x, int i)
{
    const int d = x > i ? x - i : i - x;
    return d > g[i] ? d : g[i];
}

/* For i < u: the largest x at which i's cone is at most u's (Meijster,
 * Roerdink and Hesselink 2000, the chessboard metric's Sep). */
static inline int separation(const uint8_t *g, int i, int u)
{
    const int mid = (i + u) / 2;
    if (g[i] <= g[u]) return i + g[u] > mid ? i + g[u] : mid;
    return u - g[i] < mid ? u - g[i] : mid;
}

/* The 1D transform of g[0..n) into out[0], out[stride], ...: the lower
 * envelope of the cones max(|x - i|, g[i]), built forward in s (the
 * envelope's members) and t (where each begins), read backward. O(n);
 * s and t hold n ints. g and out must not overlap. */
static void minmax_line(const uint8_t *g, int n, uint8_t *out, size_t stride, int *s, int *t)
{
    int q = 0;
    s[0] = 0;
    t[0] = 0;
    for (int u = 1; u < n; u++) {
        while (q >= 0 && cone(g, t[q], s[q]) > cone(g, t[q], u)) q--;
        if (q < 0) {
            q = 0;
            s[0] = u;
        } else {
            const int w = 1 + separation(g, s[q], u);
            if (w < n) {
                q++;
                s[q] = u;
                t[q] = w;
            }
        }
    }
    for (int u = n - 1; u >= 0; u--) {
        out[(size_t)u * stride] = (uint8_t)cone(g, u, s[q]);
        if (u == t[q]) q--;
    }
}

/* How many x-neighbouring lines the y and z passes take at once: one
 * 64-byte cache line of each row or slice, instead of a byte of it per
 * line. */
enum { LINE_BLOCK = 64 };

/* The 1D transform along an axis of stride `stride` bytes, of the lines
 * starting at at[0..bw) (bw <= LINE_BLOCK neighbours in x, each n long):
 * gathered into block (n x bw) a cache line of each at a time, transformed
 * one column at a time through line, written back the same way. */
static void transform_block(uint8_t *at, size_t stride, int n, int bw, uint8_t *block, uint8_t *line, int *s, int *t)
{
    for (int k = 0; k < n; k++) memcpy(block + (size_t)k * bw, at + (size_t)k * stride, (size_t)bw);
    for (int b = 0; b < bw; b++) {
        for (int k = 0; k < n; k++) line[k] = block[(size_t)k * bw + b];
        minmax_line(line, n, block + b, (size_t)bw, s, t);
    }
    for (int k = 0; k < n; k++) memcpy(at + (size_t)k * stride, block + (size_t)k * bw, (size_t)bw);
}

typedef struct {
    const float *d;
    uint8_t *m;
    int nx, ny, nz;
    atomic_int failed; /* a worker could not allocate its scratch */
} Job;

/* Scratch for one item, for lines of up to n voxels: a block of
 * LINE_BLOCK lines, one line, and the envelope's s and t. */
typedef struct {
    uint8_t *block, *line;
    int *s, *t;
} Scratch;

static void scratch_free(Scratch *w)
{
    free(w->block);
    free(w->line);
    free(w->s);
    free(w->t);
}

/* 0 with *w allocated; -1 with nothing held and the job marked failed. */
static int scratch_get(Scratch *w, int n, Job *j)
{
    w->block = malloc((size_t)n * LINE_BLOCK);
    w->line = malloc((size_t)n);
    w->s = malloc((size_t)n * sizeof *w->s);
    w->t = malloc((size_t)n * sizeof *w->t);
    if (w->block && w->line && w->s && w->t) return 0;
    scratch_free(w);
    atomic_store(&j->failed, 1);
    return -1;
}

/* Item z: the x pass (from the densities) and then the y pass of slice z. */
static void pass_xy(void *arg, size_t lo, size_t hi)
{
    Job *j = arg;
    const int nx = j->nx, ny = j->ny;
    Scratch w;
    if (scratch_get(&w, ny, j)) return;
    for (size_t z = lo; z < hi; z++) {
        uint8_t *slice = j->m + z * (size_t)nx * ny;
        const float *dz = j->d + z * (size_t)nx * ny;
        for (int y = 0; y < ny; y++) {
            /* the x pass's input is 0 or the cap: its transform is the
             * distance to the nearest voxel with density on the row, a
             * forward and a backward count (faster than the envelope) */
            const float *row = dz + (size_t)y * nx;
            uint8_t *o = slice + (size_t)y * nx;
            int run = VPT_DISTANCE_MAP_MAX;
            for (int x = 0; x < nx; x++) {
                run = row[x] != 0.0f ? 0 : run < VPT_DISTANCE_MAP_MAX ? run + 1 : run;
                o[x] = (uint8_t)run;
            }
            run = VPT_DISTANCE_MAP_MAX;
            for (int x = nx - 1; x >= 0; x--) {
                run = o[x] == 0 ? 0 : run < VPT_DISTANCE_MAP_MAX ? run + 1 : run;
                if (run < o[x]) o[x] = (uint8_t)run;
            }
        }
        for (int x0 = 0; x0 < nx; x0 += LINE_BLOCK)
            transform_block(slice + x0, (size_t)nx, ny, nx - x0 < LINE_BLOCK ? nx - x0 : LINE_BLOCK, w.block, w.line,
                            w.s, w.t);
    }
    scratch_free(&w);
}

/* Item y: the z pass of row y. */
static void pass_z(void *arg, size_t lo, size_t hi)
{
    Job *j = arg;
    const int nx = j->nx, ny = j->ny, nz = j->nz;
    Scratch w;
    if (scratch_get(&w, nz, j)) return;
    for (size_t y = lo; y < hi; y++)
        for (int x0 = 0; x0 < nx; x0 += LINE_BLOCK)
            transform_block(j->m + y * (size_t)nx + (size_t)x0, (size_t)nx * ny, nz,
                            nx - x0 < LINE_BLOCK ? nx - x0 : LINE_BLOCK, w.block, w.line, w.s, w.t);
    scratch_free(&w);
}

int vpt_distance_map_build(const float *d, int nx, int ny, int nz, int threads, uint8_t **out)
{
    *out = NULL;
    if (nx <= 0 || ny <= 0 || nz <= 0) return vpt_fail("distance map: bad grid size %dx%dx%d", nx, ny, nz);
    const size_t n = (size_t)nx * (size_t)ny * (size_t)nz;
    uint8_t *m = vpt_malloc(n);
    if (!m) return -1;
    Job j = {.d = d, .m = m, .nx = nx, .ny = ny, .nz = nz};
    atomic_init(&j.failed, 0);
    vpt_parallel_items((size_t)nz, threads, pass_xy, &j);
    if (!atomic_load(&j.failed)) vpt_parallel_items((size_t)ny, threads, pass_z, &j);
    if (atomic_load(&j.failed)) {
        free(m);
        return vpt_fail("distance map: out of memory for a worker's line buffers (%dx%dx%d voxels)", nx, ny, nz);
    }
    *out = m;
    return 0;
}

void vpt_params_set_distance_map(VptParams *P, int nx, int ny, int nz)
{
    const int nv[3] = {nx, ny, nz};
    P->tau_per_density = P->density_scale / VPT_LN2;
    P->mg_skip = 1;
    for (int a = 0; a < 3; a++) {
        P->mg_cells[a] = nv[a];
        P->mg_per_uvw[a] = (float)nv[a];
    }
}
