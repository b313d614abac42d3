#include "physics/distance_map.h"

#include "base/error.h"

#include <stdlib.h>

static inline uint8_t min_u8(uint8_t a, uint8_t b) { return a < b ? a : b; }

/* One raster pass in direction s (+1 forward, -1 backward): each voxel takes
 * 1 + the least distance among the 13 neighbours the pass has visited (those
 * before it in raster order), when that is smaller than its own. */
static void chamfer_pass(uint8_t *m, int nx, int ny, int nz, int s)
{
    const long sx = 1, sy = nx, sz = (long)nx * ny;
    for (int zi = 0; zi < nz; zi++) {
        const int z = s > 0 ? zi : nz - 1 - zi;
        for (int yi = 0; yi < ny; yi++) {
            const int y = s > 0 ? yi : ny - 1 - yi;
            for (int xi = 0; xi < nx; xi++) {
                const int x = s > 0 ? xi : nx - 1 - xi;
                uint8_t *v = m + x * sx + y * sy + z * sz;
                if (*v == 0) continue;
                uint8_t best = 255;
                /* visited neighbours: the previous slice's 9, the previous
                 * row's 3 (same slice), the previous voxel of the row */
                const int pz = z - s, py = y - s, px = x - s;
                if (pz >= 0 && pz < nz)
                    for (int dy = -1; dy <= 1; dy++) {
                        const int yy = y + dy;
                        if (yy < 0 || yy >= ny) continue;
                        for (int dx = -1; dx <= 1; dx++) {
                            const int xx = x + dx;
                            if (xx < 0 || xx >= nx) continue;
                            best = min_u8(best, m[xx * sx + yy * sy + pz * sz]);
                        }
                    }
                if (py >= 0 && py < ny)
                    for (int dx = -1; dx <= 1; dx++) {
                        const int xx = x + dx;
                        if (xx < 0 || xx >= nx) continue;
                        best = min_u8(best, m[xx * sx + py * sy + z * sz]);
                    }
                if (px >= 0 && px < nx) best = min_u8(best, m[px * sx + y * sy + z * sz]);
                if (best < 255 && (uint8_t)(best + 1) < *v) *v = (uint8_t)(best + 1);
            }
        }
    }
}

int vpt_distance_map_build(const float *d, int nx, int ny, int nz, uint8_t **out)
{
    *out = NULL;
    if (nx <= 0 || ny <= 0 || nz <= 0) return vpt_fail("distance map: bad grid size %dx%dx%d", nx, ny, nz);
    const size_t n = (size_t)nx * (size_t)ny * (size_t)nz;
    uint8_t *m = vpt_malloc(n);
    if (!m) return -1;
    for (size_t i = 0; i < n; i++) m[i] = d[i] != 0.0f ? 0 : VPT_DISTANCE_MAP_MAX;
    chamfer_pass(m, nx, ny, nz, 1);
    chamfer_pass(m, nx, ny, nz, -1);
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
