/* The majorant grid (pbrt-v4's MajorantGrid): the box cut into cells of
 * C x C x C voxels (C a power of two; the last cell of an axis may be
 * partial), each holding the maximum density the medium can return at any
 * point of the cell. The tracer walks it with a DDA (physics/vpt_tracer.h,
 * VptMajorantWalk) and takes its Woodcock steps against each cell's value.
 *
 * A true bound: the trilinear filter at a point of cell c (voxels
 * [cC, cC + C) on an axis) reads texels cC - 1 .. cC + C, so a cell's value
 * is the maximum over that support (clamped to the grid), which also covers
 * points up to half a voxel outside the cell, more than the walk's rounding
 * at a face. The value is then raised by a relative 2^-12 so that the texture
 * hardware's own rounding of the filtered value cannot exceed it (costs
 * 0.02% more null steps). A cell whose support is all zero is empty: it
 * stores -k instead, where k >= 1 is the radius of the cube of (2k - 1)^3
 * cells around it that are all empty (capped at
 * VPT_MAJORANT_EMPTY_REACH_MAX), so that the walk crosses empty space a
 * cube at a time instead of a cell at a time; a value's majorant is
 * max(value, 0).
 *
 * Beside each majorant the grid keeps the cell's minorant, the minimum over
 * the same support, lowered by a relative 2^-12 for the same reason: no
 * density the medium returns in the cell is below it. Residual ratio
 * tracking takes it as the cell's control density (physics/vpt_tracer.h,
 * vpt_shadow_residual), so that each of its factors lies in [0, 1].
 *
 * Built on the host by separable maxima (x, then y, then z windows) on all
 * cores. Lifecycle: build fills *out (caller frees); free releases it. */
#ifndef VPT_PHYSICS_MAJORANT_GRID_H
#define VPT_PHYSICS_MAJORANT_GRID_H

#include "physics/density_format.h"
#include "physics/vpt_physics.h"

#include <stddef.h>

#define VPT_MAJORANT_CELL_MIN 1
#define VPT_MAJORANT_CELL_MAX 1024
#define VPT_MAJORANT_EMPTY_REACH_MAX 16

/* A majorant as configs name it (VptConfig.majorant, codegen/config.h): 0
 * the global one, C > 0 the grid of C-voxel cells walked by the DDA, -1 the
 * global one with empty space skipped by the distance map
 * (physics/distance_map.h). The cell size of the majorant grid it needs (0:
 * none), and whether it skips. */
static inline int vpt_majorant_grid_cell(int majorant) { return majorant > 0 ? majorant : 0; }
static inline int vpt_majorant_skips(int majorant) { return majorant < 0; }

typedef struct {
    int cell;          /* C: voxels per cell edge */
    int n[3];          /* cells per axis: ceil(voxels / C) */
    size_t count;      /* n[0] * n[1] * n[2] */
    float *m;          /* count majorants, x fastest; owned */
    float *lo;         /* count minorants (0 for an empty cell), x fastest; owned */
} VptMajorantGrid;

/* Builds the grid of the density grid d (nx * ny * nz scene densities, x
 * fastest, maximum dmax) with cells of `cell` voxels (a power of two in
 * [1, 1024]) for density texture format f: each cell's maximum is taken on
 * the f32 densities and converted to f's texture units
 * (vpt_density_format_texture_value; exact, since every format's encoding
 * is monotone), then raised. threads <= 0: all cores. -1 with a message on
 * a bad size or out of memory. */
int vpt_majorant_grid_build(const float *d, int nx, int ny, int nz, int cell, VptDensityFormat f, float dmax,
                            int threads, VptMajorantGrid *out);

/* The cells as the medium interface reads them (physics/vpt_medium.h):
 * VPT_MAJORANT_CELL_FLOATS * count floats, first (value, t_per_tau) per
 * cell with t_per_tau = 1 / (value tau_per_density) for a cell with a
 * majorant, else 0; then count minorants (0 for an empty cell). NULL with a
 * message when out of memory; the caller frees it. */
#define VPT_MAJORANT_CELL_FLOATS 3
float *vpt_majorant_grid_cells(const VptMajorantGrid *g, float tau_per_density);

/* Sets P's grid fields (mg_cells, mg_per_uvw, tau_per_density) for g over a
 * volume of nx * ny * nz voxels; g NULL: the global majorant. */
void vpt_params_set_majorant_grid(VptParams *P, const VptMajorantGrid *g, int nx, int ny, int nz);

/* Fraction of cells whose majorant is 0, and the mean majorant over cells
 * relative to density_max: what the grid can save (reported by bench). */
void vpt_majorant_grid_stats(const VptMajorantGrid *g, float density_max, double *empty_fraction,
                             double *mean_over_max);

void vpt_majorant_grid_free(VptMajorantGrid *g);

#endif
