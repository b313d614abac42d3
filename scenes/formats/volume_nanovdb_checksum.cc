// NanoVDB's grid checksum through NanoVDB's own code: see
// volume_nanovdb_checksum.h. Only NanoVDB's header-only templates are
// instantiated here; no exception leaves this file (NanoVDB's checksum code
// throws none, the guard is for std::vector's allocation).
// NanoVDB as its release builds run: its assertions off. They guard against
// what vpt_sparse_grid_check has already refused, except one: building the
// node table of a grid with no nodes at some level (a root of tiles only) it
// asserts on the level's null first node, which it never dereferences, so a
// valid grid of tiles would abort the program.
#ifndef NDEBUG
#define NDEBUG 1
#endif

#include "scenes/formats/volume_nanovdb_checksum.h"

#include <nanovdb/NanoVDB.h>
#include <nanovdb/util/GridChecksum.h>

#include <exception>

namespace {

template <typename ValueT> VptvChecksum verify(const void *grid, uint64_t *stored, uint64_t *computed)
{
    const auto &g = *static_cast<const nanovdb::NanoGrid<ValueT> *>(grid);
    // the mode the grid carries: Disable, Partial (the head only) or Full
    const nanovdb::GridChecksum want(g.checksum(), nanovdb::ChecksumMode::Full);
    *stored = want.checksum();
    *computed = want.checksum();
    if (want.mode() == nanovdb::ChecksumMode::Disable) return VPTV_CHECKSUM_NONE;
    nanovdb::GridChecksum got;
    got(g, want.mode());
    *computed = got.checksum();
    return got == want ? VPTV_CHECKSUM_MATCH : VPTV_CHECKSUM_MISMATCH;
}

} // namespace

extern "C" VptvChecksum vptv_nanovdb_checksum_verify(const void *grid, uint32_t type, uint64_t *stored,
                                                     uint64_t *computed)
{
    try {
        if (type == (uint32_t)nanovdb::GridType::Float) return verify<float>(grid, stored, computed);
        if (type == (uint32_t)nanovdb::GridType::Vec3f) return verify<nanovdb::Vec3f>(grid, stored, computed);
    } catch (const std::exception &) {
        return VPTV_CHECKSUM_NO_MEMORY;
    }
    return VPTV_CHECKSUM_UNKNOWN_TYPE;
}

extern "C" int vptv_nanovdb_checksum_update(void *grid, uint32_t type)
{
    if (type == (uint32_t)nanovdb::GridType::Float)
        nanovdb::updateChecksum(*static_cast<nanovdb::NanoGrid<float> *>(grid), nanovdb::ChecksumMode::Full);
    else if (type == (uint32_t)nanovdb::GridType::Vec3f)
        nanovdb::updateChecksum(*static_cast<nanovdb::NanoGrid<nanovdb::Vec3f> *>(grid), nanovdb::ChecksumMode::Full);
    else
        return -1;
    return 0;
}
