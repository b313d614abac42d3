/* vpt_medium.h: the interface through which the tracer (vpt_tracer.h) meets
 * the medium. Two implementations: the GPU's textures (kernels.cu.in) and the
 * CPU reference's arrays (reference/cpu_medium.h). This header only declares;
 * a translation unit that traces paths defines `struct VptMedium` and the
 * functions below, before or after including vpt_tracer.h.
 *
 * Contract (uvw in [0,1]^3 over the box; coordinates outside clamp):
 *   vpt_medium_density  trilinear filtering with texel centres at
 *                       (i + 0.5) / n and clamping, as CUDA's
 *                       normalized-coordinate textures do (vpt_filter_axis,
 *                       vpt_physics.h); returns the density
 *                       in texture units, in [0, params.density_max]; the
 *                       extinction is sigma_t = density_scale * value
 *                       (a compact texture format folds its scale into
 *                       density_scale, see physics/density_format.h).
 *   vpt_medium_albedo   the single-scattering albedo: a grid's, filtered
 *                       likewise; or with params.albedo_entries > 0 (a
 *                       transfer function's table, post-classification)
 *                       the table's entry vpt_albedo_entry(v,
 *                       params.albedo_index, params.albedo_entries) of the
 *                       density v that vpt_medium_density (majorant=skip:
 *                       vpt_medium_density_distance) returns at uvw.
 *   vpt_medium_majorant the value of cell `cell` of the majorant grid
 *                       (x fastest over params.mg_cells), in the density's
 *                       units: the cell's majorant m > 0 (no density the
 *                       medium returns at a point of that cell, or within
 *                       half a voxel of it, exceeds it), or for an empty
 *                       cell -k, k >= 1 the radius of the cube of empty
 *                       cells around it (physics/majorant_grid.h); and in
 *                       *t_per_tau the distance per unit of optical depth
 *                       at the majorant, 1 / (m tau_per_density) (0 when
 *                       empty), computed once on the host
 *                       (vpt_majorant_grid_cells). Only called when
 *                       params.mg_cells[0] > 0.
 *   vpt_medium_minorant the minorant of cell `cell` of the majorant grid:
 *                       no density the medium returns at a point of that
 *                       cell, or within half a voxel of it, is below it
 *                       (physics/majorant_grid.h); 0 for an empty cell.
 *                       Only called when params.mg_cells[0] > 0.
 *   vpt_medium_density_distance  (majorant=skip only, params.mg_skip) the
 *                       density as vpt_medium_density returns it, and in
 *                       *distance the distance map (physics/distance_map.h)
 *                       filtered the same way, in voxels: the texture holds
 *                       both as two channels of one texel, so one fetch
 *                       returns both. */
#ifndef VPT_MEDIUM_H
#define VPT_MEDIUM_H

#include "vpt_physics.h"

typedef struct VptMedium VptMedium;
VPT_FN float vpt_medium_density(const VptMedium *m, vpt_vec3 uvw);
VPT_FN vpt_vec3 vpt_medium_albedo(const VptMedium *m, vpt_vec3 uvw);
VPT_FN float vpt_medium_majorant(const VptMedium *m, vpt_u32 cell, float *t_per_tau);
VPT_FN float vpt_medium_minorant(const VptMedium *m, vpt_u32 cell);
VPT_FN float vpt_medium_density_distance(const VptMedium *m, vpt_vec3 uvw, float *distance);

#endif
