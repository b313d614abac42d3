/* NanoVDB float grids in memory: built from a dense grid, checked before
 * anything reads them, and read back into a dense grid.
 *
 * The sparse representation of a medium (config key volume=sparse) is one
 * NanoVDB grid (NanoVDB 32.x layout, as PNanoVDB.h defines it: grid, tree,
 * root with its tiles, 32^3 upper nodes, 16^3 lower nodes, 8^3 leaves). Why
 * build it here in C rather than with NanoVDB's C++ builder: the GPU machines
 * have no NanoVDB or OpenVDB libraries, and every scene (built in, dense
 * files, .nvdb and .vdb files alike) is dense on the host, so one small
 * builder over PNanoVDB's layout constants serves every scene and tool; the
 * NanoVDB library itself is used only to read .vdb files
 * (scenes/formats/volume_vdb_openvdb.cc).
 *
 * Checking: PNanoVDB follows the offsets it finds without bounds checks, so
 * vpt_sparse_grid_check validates a whole grid before a byte of it is
 * sampled: sizes, version and type, every node array against the buffer, and
 * every child offset of the root, upper and lower nodes against the node
 * arrays (each node referenced once, at a node boundary), so that no lookup
 * of any coordinate can leave the buffer. Its work is proportional to the
 * buffer's size. */
#ifndef VPT_PHYSICS_SPARSE_GRID_H
#define VPT_PHYSICS_SPARSE_GRID_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t *data;          /* the grid's bytes, 32-byte aligned; owned */
    size_t size;             /* bytes */
    int dims[3];             /* the dense grid it stands for: voxels [0, dims) */
    uint32_t leaves;         /* nodes kept */
    uint32_t lowers, uppers;
    double empty_fraction;   /* of the dense grid's 8^3 leaf blocks left out */
} VptSparseGrid;

/* A float grid of the dense grid `dense` (nx*ny*nz values, x fastest),
 * named `name`: voxel (i, j, k) holds dense[i + nx (j + ny k)]; every 8^3
 * block whose values are all exactly 0 is left out (it reads the background,
 * 0), and so is every node left without children. Nonzero voxels are the
 * active ones. Node statistics: min and max of the stored values (average
 * and deviation 0). -1 with a message when out of memory. */
int vpt_sparse_grid_build(const float *dense, int nx, int ny, int nz, const char *name, VptSparseGrid *out);
void vpt_sparse_grid_free(VptSparseGrid *g);

/* What vpt_sparse_grid_check found. */
typedef struct {
    uint32_t grid_type;      /* PNANOVDB_GRID_TYPE_* */
    uint64_t grid_size;      /* bytes of this grid (<= the buffer) */
    char name[257];
    int32_t bbox_min[3], bbox_max[3]; /* index bbox of the active voxels (the root's) */
    double voxel_size[3];
    double map_matrix[9];    /* index to world, row-major (the map's matD) */
    double map_translation[3];
    uint32_t leaves, lowers, uppers, root_tiles;
} VptSparseGridInfo;

/* Checks the grid at the start of buf (size bytes, 8-byte aligned) as
 * described above; `name` starts every message. The grid may be of any value
 * type PNanoVDB reads with a fixed stride (float, Vec3f, ...); quantized and
 * index grids are refused. */
int vpt_sparse_grid_check(const char *name, const void *buf, size_t size, VptSparseGridInfo *info);

/* Reads voxels [lo, lo + dims) of a checked float grid into out (dims[0] *
 * dims[1] * dims[2] floats, x fastest); a value that is not finite fails,
 * naming the voxel. */
int vpt_sparse_grid_densify(const char *name, const void *buf, const int lo[3], const int dims[3], float *out);

/* The same for a checked Vec3f grid, channels interleaved (3 floats a voxel). */
int vpt_sparse_grid_densify_vec3(const char *name, const void *buf, const int lo[3], const int dims[3], float *out);

#endif
