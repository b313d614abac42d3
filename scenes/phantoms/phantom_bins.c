/* Solids binned into bricks of a grid, so that the scalable scenes' voxels
 * evaluate only the solids that can reach them: see phantom.h. */
#include "scenes/phantoms/phantom.h"

#include "base/error.h"
#include "base/progress.h"
#include "base/threads.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The voxels along one axis whose centres lie in [lo, hi] (box [-0.5, 0.5],
 * n voxels), widened by one voxel each way; 0 when none. */
static int voxel_span(float lo, float hi, int n, int *i0, int *i1)
{
    const double a = floor(((double)lo + 0.5) * n - 0.5) - 1, b = ceil(((double)hi + 0.5) * n - 0.5) + 1;
    if (b < 0 || a > n - 1) return 0;
    *i0 = a < 0 ? 0 : (int)a;
    *i1 = b > n - 1 ? n - 1 : (int)b;
    return 1;
}

int vpt_bins_build(VptBins *b, int n, int brick, const float (*lo)[3], const float (*hi)[3], size_t count,
                   float margin)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->brick = brick;
    b->nb = (n + brick - 1) / brick;
    const size_t nb3 = (size_t)b->nb * b->nb * b->nb;
    b->start = vpt_calloc(nb3 + 1, sizeof *b->start);
    if (!b->start) return -1;
    /* two passes over the solids: count, then fill in solid order */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            size_t total = 0;
            for (size_t i = 0; i < nb3; i++) {
                const size_t c = b->start[i];
                b->start[i] = total;
                total += c;
            }
            b->start[nb3] = total;
            if (!(b->idx = vpt_malloc((total ? total : 1) * sizeof *b->idx))) {
                vpt_bins_free(b);
                return -1;
            }
        }
        for (size_t s = 0; s < count; s++) {
            int v0[3], v1[3], ok = 1;
            for (int k = 0; k < 3 && ok; k++) ok = voxel_span(lo[s][k] - margin, hi[s][k] + margin, n, &v0[k], &v1[k]);
            if (!ok) continue;
            for (int z = v0[2] / brick; z <= v1[2] / brick; z++)
                for (int y = v0[1] / brick; y <= v1[1] / brick; y++)
                    for (int x = v0[0] / brick; x <= v1[0] / brick; x++) {
                        const size_t i = (size_t)x + (size_t)b->nb * ((size_t)y + (size_t)b->nb * z);
                        if (pass == 0) b->start[i]++;
                        else b->idx[b->start[i]++] = (uint32_t)s;
                    }
        }
    }
    /* the fill moved every start to its end: shift back */
    memmove(b->start + 1, b->start, nb3 * sizeof *b->start);
    b->start[0] = 0;
    return 0;
}

void vpt_bins_free(VptBins *b)
{
    free(b->start);
    free(b->idx);
    memset(b, 0, sizeof *b);
}

typedef struct {
    const VptBins *b;
    VptVoxelFn fn;
    void *ctx;
    atomic_size_t done; /* slabs finished, for the progress line */
} Fill;

static void fill_slabs(void *arg, size_t lo, size_t hi)
{
    Fill *f = arg;
    const VptBins *b = f->b;
    const int n = b->n, B = b->brick;
    const float h = 1.0f / (float)n;
    for (size_t bz = lo; bz < hi; bz++)
        for (int by = 0; by < b->nb; by++)
            for (int bx = 0; bx < b->nb; bx++) {
                const size_t bi = (size_t)bx + (size_t)b->nb * ((size_t)by + (size_t)b->nb * bz);
                const uint32_t *ids = b->idx + b->start[bi];
                const size_t nids = b->start[bi + 1] - b->start[bi];
                const int z1 = (int)((bz + 1) * (size_t)B) < n ? (int)(bz + 1) * B : n;
                const int y1 = (by + 1) * B < n ? (by + 1) * B : n, x1 = (bx + 1) * B < n ? (bx + 1) * B : n;
                for (int z = (int)bz * B; z < z1; z++)
                    for (int y = by * B; y < y1; y++) {
                        const size_t row = (size_t)n * ((size_t)y + (size_t)n * z);
                        for (int x = bx * B; x < x1; x++)
                            f->fn(f->ctx, ids, nids, -0.5f + ((float)x + 0.5f) * h, -0.5f + ((float)y + 0.5f) * h,
                                  -0.5f + ((float)z + 0.5f) * h, row + (size_t)x);
                    }
            }
    vpt_progress_update((double)atomic_fetch_add(&f->done, hi - lo) / (double)b->nb);
}

void vpt_bins_fill(const VptBins *b, int threads, VptVoxelFn fn, void *ctx)
{
    Fill f = {b, fn, ctx, 0};
    vpt_parallel_items((size_t)b->nb, threads, fill_slabs, &f);
}
