/* NanoVDB .nvdb files (NanoVDB's own format, nanovdb::io, version 32.x).
 *
 * A file is one or more segments, each a 16-byte header (magic "NanoVDB0"
 * or "NanoVDB1", version, grid count, codec), the grids' metadata (176
 * bytes each, then the grid's name), then the grids' buffers: raw (codec
 * NONE) or, with codec ZIP, a 64-bit byte count and one zlib stream. BLOSC
 * is refused with a message (Debian's NanoVDB writes it only when asked).
 *
 * The density is the float grid named "density", else the file's first
 * float grid; the active voxels' index box (the root's bbox) becomes the
 * dense volume, with the voxels the tree leaves out read as the background
 * (0). Voxel size: the grid's; origin: the map's translation plus the box's
 * first voxel. Every grid buffer used is checked as a whole
 * (vpt_sparse_grid_check) before PNanoVDB reads it; every size and offset in
 * the segment headers is checked against the file before it is used. An
 * albedo grid (Vec3f, named "albedo") is not read yet: the scene's transfer
 * function gives the albedo. */
#include "scenes/volume.h"
#include "scenes/volume_format.h"

#include "base/error.h"
#include "physics/sparse_grid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVDB_MAGIC0 0x304244566f6e614eULL /* "NanoVDB0" */
#define NVDB_MAGIC1 0x314244566f6e614eULL /* "NanoVDB1" */
#define SEGMENT_HEADER 16
#define GRID_META 176
#define META_GRID_SIZE 0
#define META_FILE_SIZE 8
#define META_GRID_TYPE 32
#define META_NAME_SIZE 136
#define META_CODEC 168
#define CODEC_NONE 0
#define CODEC_ZIP 1
#define CODEC_BLOSC 2
#define TYPE_FLOAT 1u

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The grid chosen so far: its bytes in the file and how they are stored. */
typedef struct {
    size_t off, stored;  /* where the grid's bytes (or its compressed block) start, and how many */
    uint64_t size;       /* the grid's size in memory */
    int codec, named;    /* named: called "density" */
    char name[257];
} Pick;

/* Reads one segment's header and metadata at *pos, and steps over its grid
 * buffers, remembering the density grid in *pick. */
static int read_segment(const char *name, const unsigned char *buf, size_t size, size_t *pos, size_t max_bytes,
                        Pick *pick)
{
    size_t p = *pos;
    if (size - p < SEGMENT_HEADER) return vpt_fail("%s: truncated: a segment header needs %d bytes, %zu are left", name, SEGMENT_HEADER, size - p);
    const uint64_t magic = rd64(buf + p);
    if (magic != NVDB_MAGIC0 && magic != NVDB_MAGIC1)
        return vpt_fail(p ? "%s: bytes after the last segment at offset %zu (no NanoVDB magic number)"
                          : "%s: not a NanoVDB file (no NanoVDB magic number at offset %zu)",
                        name, p);
    const uint32_t version = rd32(buf + p + 8);
    if (version >> 21 != 32)
        return vpt_fail("%s: NanoVDB file version %u.%u; this build reads version 32 files", name, version >> 21,
                        (version >> 10) & 2047u);
    const unsigned grids = (unsigned)(buf[p + 12] | buf[p + 13] << 8), codec = (unsigned)(buf[p + 14] | buf[p + 15] << 8);
    if (grids == 0) return vpt_fail("%s: a segment at offset %zu holds no grids", name, p);
    if (codec == CODEC_BLOSC)
        return vpt_fail("%s: BLOSC-compressed grids are not supported (rewrite the file uncompressed or with ZIP, e.g. "
                        "nanovdb_convert)",
                        name);
    if (codec != CODEC_NONE && codec != CODEC_ZIP) return vpt_fail("%s: unknown codec %u", name, codec);
    p += SEGMENT_HEADER;
    /* the metadata of every grid first, then the buffers in the same order */
    uint64_t sizes[65536 / 64]; /* grid sizes of this segment, at most 1024 grids read */
    unsigned char named[65536 / 64], is_float[65536 / 64];
    char names[8][257];
    if (grids > sizeof sizes / sizeof sizes[0])
        return vpt_fail("%s: a segment of %u grids (at most %zu are read)", name, grids, sizeof sizes / sizeof sizes[0]);
    for (unsigned g = 0; g < grids; g++) {
        if (size - p < GRID_META)
            return vpt_fail("%s: truncated: grid %u's metadata needs %d bytes, %zu are left", name, g, GRID_META, size - p);
        sizes[g] = rd64(buf + p + META_GRID_SIZE);
        is_float[g] = rd32(buf + p + META_GRID_TYPE) == TYPE_FLOAT;
        const uint32_t nsz = rd32(buf + p + META_NAME_SIZE);
        const unsigned mcodec = (unsigned)(buf[p + META_CODEC] | buf[p + META_CODEC + 1] << 8);
        if (mcodec != codec) return vpt_fail("%s: grid %u's codec %u differs from its segment's %u", name, g, mcodec, codec);
        p += GRID_META;
        if (nsz == 0 || nsz > 256 || size - p < nsz)
            return vpt_fail("%s: grid %u's name of %u bytes is empty, longer than 256 bytes or truncated", name, g, nsz);
        if (buf[p + nsz - 1] != '\0') return vpt_fail("%s: grid %u's name is not NUL-terminated", name, g);
        named[g] = !strcmp((const char *)buf + p, "density");
        if (g < 8) snprintf(names[g], sizeof names[g], "%s", (const char *)buf + p);
        p += nsz;
    }
    for (unsigned g = 0; g < grids; g++) {
        size_t stored;
        if (codec == CODEC_NONE) {
            if (sizes[g] > size - p)
                return vpt_fail("%s: truncated: grid %u needs %llu bytes, %zu are left", name, g,
                                (unsigned long long)sizes[g], size - p);
            stored = (size_t)sizes[g];
        } else {
            if (size - p < 8) return vpt_fail("%s: truncated: grid %u's compressed size is missing", name, g);
            const uint64_t n = rd64(buf + p);
            p += 8;
            if (n > size - p)
                return vpt_fail("%s: truncated: grid %u's %llu compressed bytes, %zu are left", name, g,
                                (unsigned long long)n, size - p);
            stored = (size_t)n;
        }
        if (is_float[g] && (!pick->stored || (named[g] && !pick->named))) {
            if (sizes[g] > max_bytes)
                return vpt_fail("%s: grid %u holds %llu bytes, more than the %zu allowed", name, g,
                                (unsigned long long)sizes[g], max_bytes);
            pick->off = p;
            pick->stored = stored;
            pick->size = sizes[g];
            pick->codec = (int)codec;
            pick->named = named[g];
            snprintf(pick->name, sizeof pick->name, "%s", g < 8 ? names[g] : "?");
        }
        p += stored;
    }
    *pos = p;
    return 0;
}

int vpt_volume_parse_nanovdb(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    max_bytes = vptv_max_bytes(max_bytes);
    if (size == 0) return vpt_fail("%s: file is empty", name);
    Pick pick;
    memset(&pick, 0, sizeof pick);
    for (size_t pos = 0; pos < size;)
        if (read_segment(name, buf, size, &pos, max_bytes, &pick)) return -1;
    if (!pick.stored) return vpt_fail("%s: no float grid (a density) in the file", name);
    /* the grid in memory of its own, 32-byte aligned as NanoVDB lays it out */
    if (pick.size < 8 || pick.size > SIZE_MAX - 32) return vpt_fail("%s: grid '%s' has a size of %llu bytes", name, pick.name, (unsigned long long)pick.size);
    if (pick.codec == CODEC_ZIP && vptv_check_inflatable(name, "ZIP", pick.stored, (size_t)pick.size)) return -1;
    const size_t gsize = (size_t)pick.size;
    unsigned char *grid = aligned_alloc(32, (gsize + 31) / 32 * 32);
    if (!grid) return vpt_fail("%s: out of memory for a grid of %zu bytes", name, gsize);
    int rc = -1;
    float *data = NULL;
    if (pick.codec == CODEC_ZIP) {
        if (vptv_inflate(name, buf + pick.off, pick.stored, 15, grid, gsize)) goto done;
    } else {
        memcpy(grid, buf + pick.off, gsize);
    }
    VptSparseGridInfo info;
    if (vpt_sparse_grid_check(name, grid, gsize, &info)) goto done;
    if (info.grid_type != TYPE_FLOAT) {
        vpt_fail("%s: grid '%s' is not a float grid (type %u) although its metadata says so", name, pick.name, info.grid_type);
        goto done;
    }
    int64_t dims[3];
    int lo[3];
    for (int k = 0; k < 3; k++) {
        dims[k] = (int64_t)info.bbox_max[k] - info.bbox_min[k] + 1;
        lo[k] = info.bbox_min[k];
    }
    if (dims[0] <= 0 || dims[1] <= 0 || dims[2] <= 0) {
        vpt_fail("%s: grid '%s' has no active voxels (its box is empty)", name, pick.name);
        goto done;
    }
    VptvShape sh;
    if (vptv_shape(name, "the active voxels' box", dims, 3, VPT_SCALAR_F32, max_bytes, &sh) ||
        vptv_check_spacing(name, "the voxel size", info.voxel_size, &sh, 3))
        goto done;
    if (!(data = vpt_malloc(sh.count * sizeof(float)))) goto done;
    if (vpt_sparse_grid_densify(name, grid, lo, sh.dims, data)) goto done;
    out->nx = sh.dims[0];
    out->ny = sh.dims[1];
    out->nz = sh.dims[2];
    out->data = data;
    out->stored = VPT_SCALAR_F32;
    for (int k = 0; k < 3; k++) {
        out->spacing[k] = (float)info.voxel_size[k];
        out->origin[k] = (float)(info.map_translation[k] + info.voxel_size[k] * lo[k]);
    }
    data = NULL;
    rc = 0;
done:
    free(data);
    free(grid);
    return rc;
}

static int parse_in_dir(const char *name, const char *dir, const unsigned char *buf, size_t size, size_t max_bytes,
                        VptVolume *out)
{
    (void)dir;
    return vpt_volume_parse_nanovdb(name, buf, size, max_bytes, out);
}

static int load_nanovdb(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    return vptv_load_whole(path, opt, parse_in_dir, out);
}

const VptVolumeFormat vpt_volume_format_nanovdb = {"NanoVDB", "nvdb", NULL, load_nanovdb};
