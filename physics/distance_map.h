/* The distance map of empty space (majorant=skip, physics/vpt_tracer.h's
 * vpt_skip_resume): for each voxel, the Chebyshev (L-infinity) distance, in
 * voxels, from its centre to the nearest voxel centre whose density is not
 * 0, capped at VPT_DISTANCE_MAP_MAX; 0 at a voxel with density.
 *
 * Why L-infinity: the trilinear filter at a point reads the texels whose
 * centres lie within one voxel of it on every axis, so the density is 0
 * wherever that distance is at least 1, and a cube is what a ray crosses
 * cheaply (its exit is one division, vpt_skip_resume). Computed on the f32
 * densities: a texel that is 0 there is 0 in every texture format (each
 * format's encoding maps 0 to 0 and is monotone), so one map serves them
 * all.
 *
 * Built on the host by the two-pass chamfer transform with unit weights over
 * the 26 neighbours, which is exact for this metric (every voxel's distance
 * is the length of a shortest 26-connected path, and the forward and
 * backward raster passes each relax the half of the neighbourhood already
 * visited). Cost: two passes of 13 neighbours per voxel on one core, 2.4 s
 * for 512^3 voxels (0.3% of them with density) on the project's 2-core AMD
 * EPYC development machine; the raster order is sequential, so a 1024^3
 * volume waits about 20 s for its map (a parallel exact transform is not
 * written yet). Lifecycle: build allocates *out (caller frees). */
#ifndef VPT_PHYSICS_DISTANCE_MAP_H
#define VPT_PHYSICS_DISTANCE_MAP_H

#include "physics/vpt_physics.h"

#include <stdint.h>

#define VPT_DISTANCE_MAP_MAX 255

/* The map of the density grid d (nx * ny * nz, x fastest) into a new array
 * of nx * ny * nz bytes. -1 with a message on a bad size or out of
 * memory. */
int vpt_distance_map_build(const float *d, int nx, int ny, int nz, uint8_t **out);

/* Sets P's grid fields for the map of a volume of nx * ny * nz voxels:
 * 1-voxel cells (mg_cells = the voxel counts, mg_per_uvw likewise) and
 * mg_skip, so the tracer skips (vpt_woodcock_batch_skip) instead of walking
 * a majorant grid. */
void vpt_params_set_distance_map(VptParams *P, int nx, int ny, int nz);

#endif
