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
// max_bytes is refused before its tree is read; a file without that
// metadata is checked after reading, on the trees themselves. Bytes held in
// memory (the fuzzer's) take the same path (read_memory).
#include "scenes/formats/volume_vdb_shim.h"

// NanoVDB's writer compresses with zlib only when this is defined (Debian's
// headers leave the codecs to the user); BLOSC is not used: the .nvdb parser
// refuses it.
#define NANOVDB_USE_ZIP 1

#include <nanovdb/util/IO.h>
#include <nanovdb/util/OpenToNanoVDB.h>
#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <new>
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

// The private writable memory this process holds (VmData: what RLIMIT_DATA
// counts), or 0 when /proc cannot tell.
size_t vm_data()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.compare(0, 7, "VmData:") == 0) return size_t(std::strtoull(line.c_str() + 7, nullptr, 10)) * 1024;
    return 0;
}

// While it lives, the process may allocate at most `cap` bytes beyond what
// it holds (a lower soft RLIMIT_DATA, the previous one restored after; no
// change for cap 0, where the limit is already lower, or where /proc cannot
// tell). Why: a file's header (its metadata, its grids' descriptions and
// metadata) is strings and values of the file's own bytes, but OpenVDB
// allocates and fills the lengths the header states before it reads them,
// so a corrupted length within the parser's limit costs seconds of filling
// memory before the read fails (docs/decisions/vdb-header-budget.md).
class HeaderBudget {
    rlimit saved_{};
    bool active_ = false;

  public:
    explicit HeaderBudget(size_t cap)
    {
        const size_t held = cap ? vm_data() : 0;
        if (!held || cap > SIZE_MAX - held || getrlimit(RLIMIT_DATA, &saved_) != 0) return;
        const rlim_t want = rlim_t(held + cap);
        if (saved_.rlim_cur != RLIM_INFINITY && want >= saved_.rlim_cur) return;
        rlimit r = saved_;
        r.rlim_cur = want;
        active_ = setrlimit(RLIMIT_DATA, &r) == 0;
    }
    ~HeaderBudget()
    {
        if (active_) setrlimit(RLIMIT_DATA, &saved_);
    }
    HeaderBudget(const HeaderBudget &) = delete;
    HeaderBudget &operator=(const HeaderBudget &) = delete;
};

// What reading a header may allocate: twice the file's bytes (a string and
// its copy) and a fixed allowance for OpenVDB's own objects.
constexpr size_t HEADER_ALLOWANCE = size_t(64) << 20;

// True when the file at path states that its grids carry offsets (io::File
// then reads only their descriptions when it opens the file; a file without
// them, as io::Stream writes, is read whole at the open). The flag is the
// byte after the magic number, the format version and the library version
// (file versions from 212 on).
bool has_grid_offsets(const char *path)
{
    unsigned char head[21];
    std::ifstream f(path, std::ios::binary);
    if (!f.read(reinterpret_cast<char *>(head), sizeof head)) return false;
    uint32_t version;
    std::memcpy(&version, head + 8, sizeof version);
    return version >= 212 && head[20] != 0;
}

// The file at path; name starts messages (the path, or the name of a file
// held in memory).
int read_file(const char *path, const char *name, size_t max_bytes, nanovdb::io::Codec codec, VptVdbResult *out)
{
    openvdb::io::File f(path);
    // metadata first: choose, and check the sizes before any tree is read;
    // the header within what its bytes can hold (HeaderBudget)
    Choice meta;
    openvdb::GridPtrVecPtr heads;
    {
        struct stat st;
        const size_t bytes = stat(path, &st) == 0 && st.st_size > 0 ? size_t(st.st_size) : 0;
        const bool budget = has_grid_offsets(path) && bytes <= (SIZE_MAX - HEADER_ALLOWANCE) / 2;
        const size_t cap = budget ? HEADER_ALLOWANCE + 2 * bytes : 0;
        try {
            HeaderBudget b(cap);
            f.open(false);
            heads = f.readAllGridMetadata();
        } catch (const std::bad_alloc &) {
            if (!budget) throw;
            set_error(out,
                      "%s: its header states lengths that its %zu bytes cannot hold (reading the file's and its "
                      "grids' metadata took more than the %zu bytes it may use)",
                      name, bytes, cap);
            return -1;
        }
    }
    if (!choose(name, *heads, &meta, out)) return -1;
    for (const auto &g : {meta.density, meta.albedo}) {
        if (!g) continue;
        const auto lo = g->getMetadata<openvdb::Vec3IMetadata>("file_bbox_min");
        const auto hi = g->getMetadata<openvdb::Vec3IMetadata>("file_bbox_max");
        const auto mem = g->getMetadata<openvdb::Int64Metadata>("file_mem_bytes");
        if (lo && hi && mem &&
            !check_size(name, g->getName(), openvdb::CoordBBox(openvdb::Coord(lo->value()), openvdb::Coord(hi->value())),
                        (uint64_t)std::max<int64_t>(mem->value(), 0), max_bytes, out))
            return -1;
    }
    Choice c;
    c.density = f.readGrid(meta.density->getName());
    if (meta.albedo) c.albedo = f.readGrid(meta.albedo->getName());
    f.close();
    // a file without the size metadata is checked now, before the conversion
    if (!check_trees(name, c, max_bytes, out)) return -1;
    return convert(name, c, codec, out) ? 0 : -1;
}

// Bytes held in memory go through the file path above, from an anonymous
// in-memory file, so that the fuzzer exercises the reader a file on disk
// meets; OpenVDB's stream reader (io::Stream) takes other steps, and
// allocates what some headers state where io::File refuses them
// (docs/decisions/vdb-memory-through-file.md).
int read_memory(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVdbResult *out)
{
    const int fd = memfd_create("vptune-vdb", MFD_CLOEXEC);
    if (fd < 0) return set_error(out, "%s: memfd_create: %s", name, std::strerror(errno)), -1;
    for (size_t done = 0; done < size;) {
        const ssize_t k = write(fd, buf + done, size - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            set_error(out, "%s: writing it to an in-memory file: %s", name, k < 0 ? std::strerror(errno) : "no progress");
            close(fd);
            return -1;
        }
        done += size_t(k);
    }
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int rc;
    try {
        rc = read_file(path, name, max_bytes, nanovdb::io::Codec::NONE, out);
    } catch (...) {
        close(fd);
        throw;
    }
    close(fd);
    return rc;
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
    return guarded(path, out, [&] { return read_file(path, path, max_bytes, codec, out); });
}

extern "C" int vpt_vdb_read_memory(const char *name, const unsigned char *buf, size_t size, size_t max_bytes,
                                       VptVdbResult *out)
{
    return guarded(name, out, [&] { return read_memory(name, buf, size, max_bytes, out); });
}
