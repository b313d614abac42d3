#include "physics/majorant_grid.h"

#include "base/error.h"
#include "base/threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RAISE (1.0f + 1.0f / 4096.0f)
#define LOWER (1.0f - 1.0f / 4096.0f)

/* Pass 1 (x) and 2 (y) per z slice, pass 3 (z) per output cell column. */
typedef struct {
    const float *d;
    int nx, ny, nz, C;
    VptDensityFormat f;
    float dmax;
    int n[3];
    float *slices;    /* n[0] * n[1] * nz: each slice's (cx, cy) maxima */
    float *slices_lo; /* and minima */
    float *out, *out_lo;
} Build;

static int lo_of(int c, int C) { return c * C - 1 < 0 ? 0 : c * C - 1; }
static int hi_of(int c, int C, int n) { return c * C + C > n - 1 ? n - 1 : c * C + C; }

static void slices_range(void *arg, size_t lo, size_t hi)
{
    Build *b = arg;
    const size_t nrow = (size_t)b->n[0] * (size_t)b->ny;
    float *row = malloc(2 * nrow * sizeof *row), *row_lo = row ? row + nrow : NULL;
    for (size_t z = lo; z < hi; z++) {
        const float *s = b->d + z * (size_t)b->nx * (size_t)b->ny;
        if (row) {
            for (int y = 0; y < b->ny; y++) {
                const float *r = s + (size_t)y * (size_t)b->nx;
                for (int cx = 0; cx < b->n[0]; cx++) {
                    float m = 0.0f, l = INFINITY;
                    for (int x = lo_of(cx, b->C); x <= hi_of(cx, b->C, b->nx); x++) {
                        m = r[x] > m ? r[x] : m;
                        l = r[x] < l ? r[x] : l;
                    }
                    row[(size_t)y * (size_t)b->n[0] + (size_t)cx] = m;
                    row_lo[(size_t)y * (size_t)b->n[0] + (size_t)cx] = l;
                }
            }
        }
        float *o = b->slices + z * (size_t)b->n[0] * (size_t)b->n[1];
        float *o_lo = b->slices_lo + z * (size_t)b->n[0] * (size_t)b->n[1];
        for (int cy = 0; cy < b->n[1]; cy++)
            for (int cx = 0; cx < b->n[0]; cx++) {
                float m = 0.0f, l = INFINITY;
                for (int y = lo_of(cy, b->C); y <= hi_of(cy, b->C, b->ny); y++) {
                    float v, vl;
                    if (row) {
                        v = row[(size_t)y * (size_t)b->n[0] + (size_t)cx];
                        vl = row_lo[(size_t)y * (size_t)b->n[0] + (size_t)cx];
                    } else { /* no scratch row: the x window directly */
                        v = 0.0f;
                        vl = INFINITY;
                        const float *r = s + (size_t)y * (size_t)b->nx;
                        for (int x = lo_of(cx, b->C); x <= hi_of(cx, b->C, b->nx); x++) {
                            v = r[x] > v ? r[x] : v;
                            vl = r[x] < vl ? r[x] : vl;
                        }
                    }
                    m = v > m ? v : m;
                    l = vl < l ? vl : l;
                }
                o[(size_t)cy * (size_t)b->n[0] + (size_t)cx] = m;
                o_lo[(size_t)cy * (size_t)b->n[0] + (size_t)cx] = l;
            }
    }
    free(row);
}

static void columns_range(void *arg, size_t lo, size_t hi)
{
    Build *b = arg;
    const size_t plane = (size_t)b->n[0] * (size_t)b->n[1];
    for (size_t cz = lo; cz < hi; cz++)
        for (size_t i = 0; i < plane; i++) {
            float m = 0.0f, l = INFINITY;
            for (int z = lo_of((int)cz, b->C); z <= hi_of((int)cz, b->C, b->nz); z++) {
                const float v = b->slices[(size_t)z * plane + i], vl = b->slices_lo[(size_t)z * plane + i];
                m = v > m ? v : m;
                l = vl < l ? vl : l;
            }
            b->out[cz * plane + i] = vpt_density_format_texture_value(b->f, m, b->dmax) * RAISE;
            b->out_lo[cz * plane + i] = l > 0.0f ? vpt_density_format_texture_value(b->f, l, b->dmax) * LOWER : 0.0f;
        }
}

/* Empty cubes: the radius k of the largest cube of (2k - 1)^3 cells
 * centred on an empty cell that holds only empty cells (cells outside the
 * grid count as empty: the flight ends there anyway), up to
 * VPT_MAJORANT_EMPTY_REACH_MAX, by repeated separable 3x3x3 minimum filters:
 * r(c) = 1 + min over c's neighbourhood of r, 0 on non-empty cells. */
typedef struct {
    const int *n;
    const float *src;
    float *dst;
    int axis;
} MinPass;

static void min_pass_range(void *arg, size_t lo, size_t hi)
{
    const MinPass *p = arg;
    const int nx = p->n[0], ny = p->n[1], nz = p->n[2];
    const size_t stride = p->axis == 0 ? 1 : p->axis == 1 ? (size_t)nx : (size_t)nx * ny;
    const int len = p->n[p->axis];
    for (size_t z = lo; z < hi; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const size_t i = (size_t)x + (size_t)nx * ((size_t)y + (size_t)ny * z);
                const int pos = p->axis == 0 ? x : p->axis == 1 ? y : (int)z;
                float m = p->src[i];
                const float out = (float)VPT_MAJORANT_EMPTY_REACH_MAX;
                const float a = pos > 0 ? p->src[i - stride] : out, b = pos < len - 1 ? p->src[i + stride] : out;
                m = a < m ? a : m;
                m = b < m ? b : m;
                p->dst[i] = m;
            }
    (void)nz;
}

static int empty_reach(VptMajorantGrid *g, int threads)
{
    float *r = vpt_malloc(g->count * sizeof(float)), *t = vpt_malloc(g->count * sizeof(float));
    if (!r || !t) {
        free(r);
        free(t);
        return -1;
    }
    for (size_t i = 0; i < g->count; i++) r[i] = g->m[i] > 0.0f ? 0.0f : (float)VPT_MAJORANT_EMPTY_REACH_MAX;
    for (int pass = 0; pass < VPT_MAJORANT_EMPTY_REACH_MAX; pass++) {
        MinPass p = {g->n, r, t, 0};
        vpt_parallel_for((size_t)g->n[2], threads, min_pass_range, &p);
        p = (MinPass){g->n, t, r, 1};
        vpt_parallel_for((size_t)g->n[2], threads, min_pass_range, &p);
        p = (MinPass){g->n, r, t, 2};
        vpt_parallel_for((size_t)g->n[2], threads, min_pass_range, &p);
        int changed = 0;
        for (size_t i = 0; i < g->count; i++) {
            float v = g->m[i] > 0.0f ? 0.0f : t[i] + 1.0f;
            v = v > (float)VPT_MAJORANT_EMPTY_REACH_MAX ? (float)VPT_MAJORANT_EMPTY_REACH_MAX : v;
            changed |= v != r[i];
            r[i] = v;
        }
        if (!changed) break;
    }
    for (size_t i = 0; i < g->count; i++)
        if (!(g->m[i] > 0.0f)) g->m[i] = -r[i];
    free(r);
    free(t);
    return 0;
}

int vpt_majorant_grid_build(const float *d, int nx, int ny, int nz, int cell, VptDensityFormat f, float dmax,
                            int threads, VptMajorantGrid *out)
{
    memset(out, 0, sizeof *out);
    if (cell < VPT_MAJORANT_CELL_MIN || cell > VPT_MAJORANT_CELL_MAX || (cell & (cell - 1)))
        return vpt_fail("majorant grid: cell size %d is not a power of two in [%d, %d]", cell, VPT_MAJORANT_CELL_MIN,
                        VPT_MAJORANT_CELL_MAX);
    if (nx < 1 || ny < 1 || nz < 1) return vpt_fail("majorant grid: volume %dx%dx%d is empty", nx, ny, nz);
    Build b = {d, nx, ny, nz, cell, f, dmax, {(nx + cell - 1) / cell, (ny + cell - 1) / cell, (nz + cell - 1) / cell},
               NULL, NULL, NULL, NULL};
    const size_t plane = (size_t)b.n[0] * (size_t)b.n[1];
    b.slices = vpt_malloc(2 * plane * (size_t)nz * sizeof(float));
    if (!b.slices) return -1;
    b.slices_lo = b.slices + plane * (size_t)nz;
    out->count = plane * (size_t)b.n[2];
    out->m = vpt_malloc(out->count * sizeof(float));
    out->lo = vpt_malloc(out->count * sizeof(float));
    if (!out->m || !out->lo) {
        free(b.slices);
        vpt_majorant_grid_free(out);
        return -1;
    }
    b.out = out->m;
    b.out_lo = out->lo;
    vpt_parallel_for((size_t)nz, threads, slices_range, &b);
    vpt_parallel_for((size_t)b.n[2], threads, columns_range, &b);
    free(b.slices);
    out->cell = cell;
    memcpy(out->n, b.n, sizeof b.n);
    if (empty_reach(out, threads)) {
        vpt_majorant_grid_free(out);
        return -1;
    }
    return 0;
}

float *vpt_majorant_grid_cells(const VptMajorantGrid *g, float tau_per_density)
{
    float *c = vpt_malloc(VPT_MAJORANT_CELL_FLOATS * (g->count ? g->count : 1) * sizeof *c);
    if (!c) return NULL;
    for (size_t i = 0; i < g->count; i++) {
        const float v = g->m[i];
        c[2 * i] = v;
        c[2 * i + 1] = v > 0.0f ? 1.0f / (v * tau_per_density) : 0.0f;
        c[2 * g->count + i] = v > 0.0f ? g->lo[i] : 0.0f;
    }
    return c;
}

void vpt_params_set_majorant_grid(VptParams *P, const VptMajorantGrid *g, int nx, int ny, int nz)
{
    const int nv[3] = {nx, ny, nz};
    P->tau_per_density = P->density_scale / VPT_LN2;
    P->mg_skip = 0;
    for (int a = 0; a < 3; a++) {
        P->mg_cells[a] = g ? g->n[a] : 0;
        P->mg_per_uvw[a] = g ? (float)nv[a] / (float)g->cell : 0.0f;
    }
}

void vpt_majorant_grid_stats(const VptMajorantGrid *g, float density_max, double *empty_fraction,
                             double *mean_over_max)
{
    size_t empty = 0;
    double sum = 0.0;
    for (size_t i = 0; i < g->count; i++) {
        empty += g->m[i] <= 0.0f;
        sum += g->m[i] > 0.0f ? g->m[i] : 0.0f;
    }
    *empty_fraction = g->count ? (double)empty / (double)g->count : 0.0;
    *mean_over_max = g->count && density_max > 0.0f ? sum / (double)g->count / density_max : 0.0;
}

void vpt_majorant_grid_free(VptMajorantGrid *g)
{
    free(g->m);
    free(g->lo);
    memset(g, 0, sizeof *g);
}
