/* Solids binned into bricks of a grid, so that the scalable scenes' voxels
 * evaluate only the solids that can reach them: see phantom.h. */
#include "scenes/phantom.h"

#include "base/error.h"

#include <math.h>
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
