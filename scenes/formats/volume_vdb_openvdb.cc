// The OpenVDB shim: a .vdb file's density (and albedo) grid to the bytes of
// a NanoVDB file, through Debian's OpenVDB and NanoVDB (libopenvdb-dev,
// libnanovdb-dev). Contract: scenes/formats/volume_vdb_shim.h. OpenVDB reads the
// file, NanoVDB's own converter (nanovdb::openToNanoVDB) and writer
// (nanovdb::io::writeGrids) make the NanoVDB file; everything after that is
// the .nvdb parser's (scenes/formats/volume_nanovdb.c), so a .vdb and its .nvdb load
// through one path. No exception leaves this file.
//
// Sizes: from a file, the grids' metadata is read first (OpenVDB writes each
// grid's active box and in-memory size as "file_bbox_min/max" and
// "file_mem_bytes"), and a grid whose densified box or tree would exceed
// max_bytes is refused before its tree is read. From memory (the fuzzer)
// OpenVDB's stream reads every tree at once; the same limits are checked
// after reading, on the trees themselves.
#include "scenes/formats/volume_vdb_shim.h"

// NanoVDB's writer compresses with zlib only when this is defined (Debian's
// headers leave the codecs to the user); BLOSC is not used: the .nvdb parser
// refuses it.
#define NANOVDB_USE_ZIP 1

#include <nanovdb/util/IO.h>
#include <nanovdb/util/OpenToNanoVDB.h>
#include <openvdb/io/Stream.h>
#include <openvdb/openvdb.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

void set_error(VptVdbResult *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void set_error(VptVdbResult *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->error, sizeof out->error, fmt, ap);
    va_end(ap);
}

void init_once()
{
    static std::once_flag once;
    std::call_once(once, [] { openvdb::initialize(); });
}

// The grids to convert: the density (a float grid) and the albedo (a Vec3f
// grid named "albedo"), or null.
struct Choice {
    openvdb::GridBase::ConstPtr density, albedo;
};

// The density grid among grids: "density" if a float grid has that name,
// else the first float grid; and the Vec3f grid named "albedo". Fails naming
// the grids found when there is no float grid.
bool choose(const char *name, const openvdb::GridPtrVec &grids, Choice *c, VptVdbResult *out)
{
    for (const auto &g : grids) {
        if (!g) continue;
        if (g->isType<openvdb::FloatGrid>() && (!c->density || (g->getName() == "density" && c->density->getName() != "density")))
            c->density = g;
        if (g->isType<openvdb::Vec3SGrid>() && g->getName() == "albedo" && !c->albedo) c->albedo = g;
    }
    if (c->density) return true;
    std::string found;
    for (const auto &g : grids)
        if (g) found += (found.empty() ? "" : ", ") + ("'" + g->getName() + "' (" + g->type() + ")");
    set_error(out, "%s: no float grid (a density) in the file; its grids: %s", name, found.empty() ? "none" : found.c_str());
    return false;
}

std::string box_text(const openvdb::CoordBBox &b)
{
    std::ostringstream os;
    os << b;
    return os.str();
}

// A grid's densified active box (4 bytes a voxel) and its tree's size in
// memory against max_bytes; bbox and mem from the file's metadata or the tree.
bool check_size(const char *name, const std::string &grid, const openvdb::CoordBBox &bbox, uint64_t mem,
                size_t max_bytes, VptVdbResult *out)
{
    double voxels = 1;
    for (int k = 0; k < 3; k++) voxels *= bbox.empty() ? 0.0 : double(bbox.max()[k]) - double(bbox.min()[k]) + 1.0;
    if (voxels * 4.0 > double(max_bytes))
        return set_error(out, "%s: grid '%s': its active box %s holds %.0f voxels, %.0f bytes as floats, more than the "
                              "%zu allowed",
                         name, grid.c_str(), box_text(bbox).c_str(), voxels, voxels * 4.0, max_bytes),
               false;
    if (mem > max_bytes)
        return set_error(out, "%s: grid '%s': its tree takes %llu bytes in memory, more than the %zu allowed", name,
                         grid.c_str(), (unsigned long long)mem, max_bytes),
               false;
    return true;
}

// The chosen grids, converted by NanoVDB, as one NanoVDB file in memory.
bool convert(const char *name, const Choice &c, nanovdb::io::Codec codec, VptVdbResult *out)
{
    // with the full checksum (every node, not only the headers): the .nvdb
    // parser verifies it, in memory and in an exported file
    std::vector<nanovdb::GridHandle<nanovdb::HostBuffer>> handles;
    handles.push_back(nanovdb::openToNanoVDB<nanovdb::HostBuffer, openvdb::FloatTree>(
        *openvdb::gridConstPtrCast<openvdb::FloatGrid>(c.density), nanovdb::StatsMode::Default,
        nanovdb::ChecksumMode::Full));
    if (c.albedo)
        handles.push_back(nanovdb::openToNanoVDB<nanovdb::HostBuffer, openvdb::Vec3STree>(
            *openvdb::gridConstPtrCast<openvdb::Vec3SGrid>(c.albedo), nanovdb::StatsMode::Default,
            nanovdb::ChecksumMode::Full));
    // writeGrids seeks past the segment header before writing the grids,
    // which a string stream refuses beyond its end: the header's bytes are
    // put there first, and overwritten.
    nanovdb::io::Segment segment(codec);
    for (const auto &h : handles) segment.add(h);
    std::stringstream os(std::ios::in | std::ios::out | std::ios::binary);
    os << std::string(segment.memUsage(), '\0');
    os.seekp(0);
    nanovdb::io::writeGrids<nanovdb::HostBuffer, std::vector>(os, handles, codec);
    if (!os) return set_error(out, "%s: NanoVDB could not write the converted grids", name), false;
    const std::string bytes = os.str();
    out->nvdb = static_cast<unsigned char *>(std::malloc(bytes.size() ? bytes.size() : 1));
    if (!out->nvdb) return set_error(out, "%s: out of memory for a NanoVDB file of %zu bytes", name, bytes.size()), false;
    std::memcpy(out->nvdb, bytes.data(), bytes.size());
    out->size = bytes.size();
    return true;
}

// The grids' sizes from their trees (after reading).
bool check_trees(const char *name, const Choice &c, size_t max_bytes, VptVdbResult *out)
{
    for (const auto &g : {c.density, c.albedo})
        if (g && !check_size(name, g->getName(), g->evalActiveVoxelBoundingBox(), g->memUsage(), max_bytes, out))
            return false;
    return true;
}

int read_file(const char *path, size_t max_bytes, nanovdb::io::Codec codec, VptVdbResult *out)
{
    openvdb::io::File f(path);
    f.open(false);
    // metadata first: choose, and check the sizes before any tree is read
    Choice meta;
    openvdb::GridPtrVecPtr heads = f.readAllGridMetadata();
    if (!choose(path, *heads, &meta, out)) return -1;
    for (const auto &g : {meta.density, meta.albedo}) {
        if (!g) continue;
        const auto lo = g->getMetadata<openvdb::Vec3IMetadata>("file_bbox_min");
        const auto hi = g->getMetadata<openvdb::Vec3IMetadata>("file_bbox_max");
        const auto mem = g->getMetadata<openvdb::Int64Metadata>("file_mem_bytes");
        if (lo && hi && mem &&
            !check_size(path, g->getName(), openvdb::CoordBBox(openvdb::Coord(lo->value()), openvdb::Coord(hi->value())),
                        (uint64_t)std::max<int64_t>(mem->value(), 0), max_bytes, out))
            return -1;
    }
    Choice c;
    c.density = f.readGrid(meta.density->getName());
    if (meta.albedo) c.albedo = f.readGrid(meta.albedo->getName());
    f.close();
    // a file without the size metadata is checked now, before the conversion
    if (!check_trees(path, c, max_bytes, out)) return -1;
    return convert(path, c, codec, out) ? 0 : -1;
}

int read_memory(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVdbResult *out)
{
    std::istringstream is(std::string(reinterpret_cast<const char *>(buf), size), std::ios::binary);
    openvdb::io::Stream stream(is, false);
    openvdb::GridPtrVecPtr grids = stream.getGrids();
    Choice c;
    if (!grids || !choose(name, *grids, &c, out) || !check_trees(name, c, max_bytes, out)) return -1;
    return convert(name, c, nanovdb::io::Codec::NONE, out) ? 0 : -1;
}

// Runs fn, turning any exception into a message; on failure no buffer is left.
template <typename Fn> int guarded(const char *name, VptVdbResult *out, Fn fn)
{
    std::memset(out, 0, sizeof *out);
    int rc;
    try {
        init_once();
        rc = fn();
    } catch (const std::exception &e) {
        set_error(out, "%s: %s", name, e.what());
        rc = -1;
    } catch (...) {
        set_error(out, "%s: OpenVDB failed with an unknown exception", name);
        rc = -1;
    }
    if (rc) {
        std::free(out->nvdb);
        out->nvdb = nullptr;
        out->size = 0;
    }
    return rc;
}

} // namespace

extern "C" int vpt_vdb_shim_abi(void) { return VPT_VDB_SHIM_ABI; }

extern "C" int vpt_vdb_read(const char *path, size_t max_bytes, int zip, VptVdbResult *out)
{
    const auto codec = zip ? nanovdb::io::Codec::ZIP : nanovdb::io::Codec::NONE;
    return guarded(path, out, [&] { return read_file(path, max_bytes, codec, out); });
}

extern "C" int vpt_vdb_read_memory(const char *name, const unsigned char *buf, size_t size, size_t max_bytes,
                                       VptVdbResult *out)
{
    return guarded(name, out, [&] { return read_memory(name, buf, size, max_bytes, out); });
}
