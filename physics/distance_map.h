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
 * Built on the host by three separable 1D passes, one per axis
 * (physics/distance_map.c says why that is exact), each line independent of
 * the others, so the passes run on all cores and the result does not
 * depend on how many. The 1D pass is Meijster, Roerdink and Hesselink's
 * linear-time lower envelope for the chessboard metric. It replaced the
 * two-pass 26-neighbour chamfer transform (exact too, but sequential in
 * raster order: about 20 s for a 1024^3 volume on one core).
 * Lifecycle: build allocates *out (caller frees). */
#ifndef VPT_PHYSICS_DISTANCE_MAP_H
#define VPT_PHYSICS_DISTANCE_MAP_H

#include "physics/vpt_physics.h"

#include <stdint.h>

#define VPT_DISTANCE_MAP_MAX 255

/* The map of the density grid d (nx * ny * nz, x fastest) into a new array
 * of nx * ny * nz bytes, on `threads` threads (<= 0: the online cores).
 * -1 with a message on a bad size or out of memory. */
int vpt_distance_map_build(const float *d, int nx, int ny, int nz, int threads, uint8_t **out);

/* Sets P's grid fields for the map of a volume of nx * ny * nz voxels:
 * 1-voxel cells (mg_cells = the voxel counts, mg_per_uvw likewise) and
 * mg_skip, so the tracer skips (vpt_woodcock_batch_skip) instead of walking
 * a majorant grid. */
void vpt_params_set_distance_map(VptParams *P, int nx, int ny, int nz);

#endif
