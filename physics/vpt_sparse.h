/* vpt_sparse.h: the sparse medium's density, a NanoVDB float grid sampled
 * with the trilinear filter of physics/vpt_medium.h, compiled as C11 by the
 * CPU reference and as CUDA C++ under NVRTC by the kernels (volume=sparse),
 * so both read the same tree with the same code.
 *
 * The grid is NanoVDB's own layout (physics/sparse_grid.h builds one from a
 * dense grid, or a .nvdb file provides it), read through PNanoVDB.h, the C
 * port of NanoVDB that Debian's libnanovdb-dev ships (/usr/include/nanovdb/):
 * a cached ReadAccessor per sample serves its eight taps, which mostly share
 * a leaf. Voxel (i, j, k) of the tree is texel (i, j, k) of the dense
 * texture; a voxel the tree does not hold (an empty leaf left out) reads the
 * background, 0. PNanoVDB does no bounds checking: the buffer must have been
 * checked (vpt_sparse_grid_check) or built here.
 *
 * Under NVRTC PNanoVDB's plain C functions become device functions through
 * -default-device (codegen/kernel_source.c), and its includes of <stdint.h>
 * and <string.h> are served by the kernel source builder. */
#ifndef VPT_SPARSE_H
#define VPT_SPARSE_H

#include "vpt_physics.h"

#ifndef PNANOVDB_C
#define PNANOVDB_C
#endif
#if defined(VPT_GPU)
#include "nanovdb/PNanoVDB.h"
#else
/* PNanoVDB's accessors take arguments some of them do not use */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <nanovdb/PNanoVDB.h>
#pragma GCC diagnostic pop
#endif

/* The density at uvw (texture coordinates in [0,1]^3 over a grid of
 * nx x ny x nz voxels), filtered exactly as vpt_filter_axis defines:
 * the same corners, weights and summation order as the CPU reference's dense
 * sampler (reference/cpu_medium.h), so on the CPU a sparse grid built from a
 * dense one samples to the same bits. */
VPT_FN float vpt_sparse_density(pnanovdb_buf_t buf, pnanovdb_root_handle_t root, int nx, int ny, int nz, vpt_vec3 uvw)
{
    int x0, x1, y0, y1, z0, z1;
    float ax, ay, az;
    vpt_filter_axis(uvw.x, nx, &x0, &x1, &ax);
    vpt_filter_axis(uvw.y, ny, &y0, &y1, &ay);
    vpt_filter_axis(uvw.z, nz, &z0, &z1, &az);
    pnanovdb_readaccessor_t acc;
    pnanovdb_readaccessor_init(&acc, root);
    float v = 0.0f;
    for (int k = 0; k < 8; k++) {
        const int i = k & 1, j = (k >> 1) & 1, l = k >> 2;
        pnanovdb_coord_t ijk;
        ijk.x = i ? x1 : x0;
        ijk.y = j ? y1 : y0;
        ijk.z = l ? z1 : z0;
        const float w = (i ? ax : 1.0f - ax) * (j ? ay : 1.0f - ay) * (l ? az : 1.0f - az);
        const pnanovdb_address_t a = pnanovdb_readaccessor_get_value_address(PNANOVDB_GRID_TYPE_FLOAT, buf, &acc, &ijk);
        v += w * pnanovdb_read_float(buf, a);
    }
    return v;
}

/* The root of the (checked) grid at the start of buf. */
VPT_FN pnanovdb_root_handle_t vpt_sparse_root(pnanovdb_buf_t buf)
{
    pnanovdb_grid_handle_t grid;
    grid.address.byte_offset = 0;
    return pnanovdb_tree_get_root(buf, pnanovdb_grid_get_tree(buf, grid));
}

#endif /* VPT_SPARSE_H */
