/* NanoVDB's own grid checksum (nanovdb/util/GridChecksum.h, a C++ header of
 * libnanovdb-dev) for the .nvdb parser, which is C (volume_nanovdb.c), and
 * for the tests that write .nvdb files. Not a public API.
 *
 * A grid carries two CRC32s in its GridData (offset 8): one over the grid,
 * tree and root data ("partial"), one over every internal and leaf node
 * ("full"); NanoVDB writes both, the first only, or neither (all ones). The
 * grid must already have passed vpt_sparse_grid_check (physics/sparse_grid.h):
 * NanoVDB's code walks its nodes without checking them. */
#ifndef VPT_SCENES_VOLUME_NANOVDB_CHECKSUM_H
#define VPT_SCENES_VOLUME_NANOVDB_CHECKSUM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    VPTV_CHECKSUM_NONE = 0,     /* the grid carries no checksum */
    VPTV_CHECKSUM_MATCH = 1,    /* what it carries matches its bytes */
    VPTV_CHECKSUM_MISMATCH = -1,
    VPTV_CHECKSUM_UNKNOWN_TYPE = -2, /* not a float or Vec3f grid */
    VPTV_CHECKSUM_NO_MEMORY = -3     /* the full checksum's node table could not be allocated */
} VptvChecksum;

/* Verifies the checksums grid (of NanoVDB grid type `type`: 1 float, 6
 * Vec3f) carries: the partial one, and the full one when it carries that
 * too. *stored and *computed: the two 64-bit values (for messages). */
VptvChecksum vptv_nanovdb_checksum_verify(const void *grid, uint32_t type, uint64_t *stored, uint64_t *computed);

/* Writes the full checksum into grid (for tests and generators). -1: type
 * not float or Vec3f. */
int vptv_nanovdb_checksum_update(void *grid, uint32_t type);

#ifdef __cplusplus
}
#endif

#endif
