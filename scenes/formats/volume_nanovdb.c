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
 * (vpt_sparse_grid_check) before PNanoVDB reads it, then against the
 * checksum it carries, with NanoVDB's own code (volume_nanovdb_checksum.h):
 * a grid whose bytes do not match is refused; every size and offset in the
 * segment headers, the grid's size in the file (its metadata's fileSize)
 * included, is checked against the file before it is used.
 *
 * Albedo: a Vec3f grid named "albedo" (the first such) is the per-voxel
 * albedo (VptVolume.albedo), read over the density's box (voxels its tree
 * leaves out read its background); it must share the density's voxel size
 * and translation (one index space), and its values must lie in [0, 1]. */
#include "scenes/volume.h"
#include "scenes/formats/volume_format.h"

#include "base/error.h"
#include "physics/sparse_grid.h"
#include "scenes/formats/volume_nanovdb_checksum.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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
#define TYPE_VEC3F 6u

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
    int codec, named;    /* named: called "density" (for the albedo: "albedo") */
    char name[257];
} Pick;

/* Remembers grid g (its stored bytes at off) in *pick. */
static int pick_grid(const char *name, unsigned g, uint64_t gsize, size_t off, size_t stored, int codec, int named,
                     const char *gname, size_t max_bytes, Pick *pick)
{
    if (gsize > max_bytes)
        return vpt_fail("%s: grid %u holds %llu bytes, more than the %zu allowed", name, g, (unsigned long long)gsize,
                        max_bytes);
    pick->off = off;
    pick->stored = stored;
    pick->size = gsize;
    pick->codec = codec;
    pick->named = named;
    snprintf(pick->name, sizeof pick->name, "%.256s", gname);
    return 0;
}

#define GRID_HEAD 672 /* NanoVDB's GridData: the grid's own size, name and type (PNANOVDB_GRID_*) */
#define GRID_HEAD_SIZE 32
#define GRID_HEAD_NAME 40
#define GRID_HEAD_TYPE 636

/* The first GRID_HEAD bytes of a grid stored at buf[off, off + stored):
 * copied, or inflated from its ZIP block (only that far). */
static int grid_head(const char *name, unsigned g, const unsigned char *buf, size_t off, size_t stored, int codec,
                     unsigned char head[GRID_HEAD])
{
    if (codec == CODEC_NONE) {
        if (stored < GRID_HEAD) return vpt_fail("%s: grid %u of %zu bytes is smaller than a grid's header", name, g, stored);
        memcpy(head, buf + off, GRID_HEAD);
        return 0;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) return vpt_fail("%s: zlib cannot start inflating grid %u", name, g);
    z.next_in = (Bytef *)(buf + off);
    z.avail_in = (uInt)(stored < UINT_MAX ? stored : UINT_MAX);
    z.next_out = head;
    z.avail_out = GRID_HEAD;
    int rc = Z_OK;
    while (z.avail_out && rc == Z_OK) rc = inflate(&z, Z_SYNC_FLUSH);
    inflateEnd(&z);
    if (z.avail_out)
        return vpt_fail("%s: grid %u's ZIP block %s before the grid's header", name, g,
                        rc == Z_STREAM_END || rc == Z_BUF_ERROR ? "ends" : "is corrupt");
    return 0;
}

/* Reads one segment's header and metadata at *pos, and steps over its grid
 * buffers, remembering the density grid in *pick and the albedo grid in
 * *albedo. */
static int read_segment(const char *name, const unsigned char *buf, size_t size, size_t *pos, size_t max_bytes,
                        Pick *pick, Pick *albedo)
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
    uint64_t sizes[65536 / 64], fsizes[65536 / 64]; /* grid sizes (in memory, in the file) of this segment, at most 1024 grids read */
    unsigned char named[65536 / 64], is_float[65536 / 64], is_albedo[65536 / 64];
    uint32_t types[65536 / 64];
    char names[8][257];
    if (grids > sizeof sizes / sizeof sizes[0])
        return vpt_fail("%s: a segment of %u grids (at most %zu are read)", name, grids, sizeof sizes / sizeof sizes[0]);
    for (unsigned g = 0; g < grids; g++) {
        if (size - p < GRID_META)
            return vpt_fail("%s: truncated: grid %u's metadata needs %d bytes, %zu are left", name, g, GRID_META, size - p);
        sizes[g] = rd64(buf + p + META_GRID_SIZE);
        fsizes[g] = rd64(buf + p + META_FILE_SIZE);
        types[g] = rd32(buf + p + META_GRID_TYPE);
        is_float[g] = types[g] == TYPE_FLOAT;
        const int vec3 = rd32(buf + p + META_GRID_TYPE) == TYPE_VEC3F;
        const uint32_t nsz = rd32(buf + p + META_NAME_SIZE);
        const unsigned mcodec = (unsigned)(buf[p + META_CODEC] | buf[p + META_CODEC + 1] << 8);
        if (mcodec != codec) return vpt_fail("%s: grid %u's codec %u differs from its segment's %u", name, g, mcodec, codec);
        p += GRID_META;
        if (nsz == 0 || nsz > 256 || size - p < nsz)
            return vpt_fail("%s: grid %u's name of %u bytes is empty, longer than 256 bytes or truncated", name, g, nsz);
        if (buf[p + nsz - 1] != '\0') return vpt_fail("%s: grid %u's name is not NUL-terminated", name, g);
        named[g] = !strcmp((const char *)buf + p, "density");
        is_albedo[g] = vec3 && !strcmp((const char *)buf + p, "albedo");
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
        /* the grid's bytes in the file, as its metadata states them: the
         * grid itself, or the compressed block and its 8-byte count */
        const uint64_t in_file = codec == CODEC_NONE ? (uint64_t)stored : (uint64_t)stored + 8;
        if (fsizes[g] != in_file)
            return vpt_fail("%s: grid %u's metadata says it takes %llu bytes in the file, but it takes %llu", name, g,
                            (unsigned long long)fsizes[g], (unsigned long long)in_file);
        /* what picks the grids (size, type, name) is the file's metadata:
         * it must say what the grid itself says (its checksum covers that) */
        unsigned char head[GRID_HEAD];
        if (grid_head(name, g, buf, p, stored, (int)codec, head)) return -1;
        const uint32_t htype = rd32(head + GRID_HEAD_TYPE);
        const uint64_t hsize = rd64(head + GRID_HEAD_SIZE);
        char hname[257];
        memcpy(hname, head + GRID_HEAD_NAME, 256);
        hname[256] = '\0';
        if (htype != types[g])
            return vpt_fail("%s: grid %u's own header says grid type %u, the file's metadata type %u", name, g, htype,
                            types[g]);
        if (hsize != sizes[g])
            return vpt_fail("%s: grid %u states %llu bytes in its own header, %llu in the file's metadata", name, g,
                            (unsigned long long)hsize, (unsigned long long)sizes[g]);
        if (g < 8 && strncmp(hname, names[g], 255) != 0)
            return vpt_fail("%s: grid %u is named '%.255s' in its own header, '%s' in the file's metadata", name, g,
                            hname, names[g]);
        if (is_float[g] && (!pick->stored || (named[g] && !pick->named)) &&
            pick_grid(name, g, sizes[g], p, stored, (int)codec, named[g], g < 8 ? names[g] : "?", max_bytes, pick))
            return -1;
        if (is_albedo[g] && !albedo->stored &&
            pick_grid(name, g, sizes[g], p, stored, (int)codec, 1, "albedo", max_bytes, albedo))
            return -1;
        p += stored;
    }
    *pos = p;
    return 0;
}

/* The grid's placement in the world, as the floats a VptVolume stores: the
 * map (index to world) must be finite, its translation and the first active
 * voxel's position (translation + voxel size * index, *origin) within
 * +-VPTV_MAX_COORD, the bound the text formats put on an origin. The
 * voxel size is checked apart (vptv_check_spacing); the map's rotation and
 * shear are not applied (the voxel size is). */
static int check_placement(const char *name, const char *grid, const VptSparseGridInfo *info, const int lo[3],
                           double origin[3])
{
    for (int k = 0; k < 9; k++)
        if (!isfinite(info->map_matrix[k]))
            return vpt_fail("%s: grid '%s': the map's matrix entry (%d, %d) is %g: not a usable transform (every "
                            "entry must be finite)",
                            name, grid, k / 3, k % 3, info->map_matrix[k]);
    for (int k = 0; k < 3; k++) {
        const double t = info->map_translation[k];
        if (!(fabs(t) <= VPTV_MAX_COORD))
            return vpt_fail("%s: grid '%s': the map's translation along %c is %g: not a usable position (it must be "
                            "finite and within +-%g)",
                            name, grid, "xyz"[k], t, VPTV_MAX_COORD);
        origin[k] = t + info->voxel_size[k] * lo[k];
        if (!(fabs(origin[k]) <= VPTV_MAX_COORD))
            return vpt_fail("%s: grid '%s': the first active voxel's position along %c (translation %g + voxel size "
                            "%g * index %d) is %g, beyond +-%g",
                            name, grid, "xyz"[k], t, info->voxel_size[k], lo[k], origin[k], VPTV_MAX_COORD);
    }
    return 0;
}

/* The picked grid in memory of its own (*grid, 32-byte aligned as NanoVDB
 * lays it out; the caller frees it), inflated if need be and checked whole
 * (vpt_sparse_grid_check), of value type `type`. */
static int load_grid(const char *name, const unsigned char *buf, const Pick *pick, uint32_t type, unsigned char **grid,
                     VptSparseGridInfo *info)
{
    *grid = NULL;
    if (pick->size < 8 || pick->size > SIZE_MAX - 32)
        return vpt_fail("%s: grid '%s' has a size of %llu bytes", name, pick->name, (unsigned long long)pick->size);
    if (pick->codec == CODEC_ZIP && vptv_check_inflatable(name, "ZIP", pick->stored, (size_t)pick->size)) return -1;
    const size_t gsize = (size_t)pick->size;
    unsigned char *g = aligned_alloc(32, (gsize + 31) / 32 * 32);
    if (!g) return vpt_fail("%s: out of memory for a grid of %zu bytes", name, gsize);
    if (pick->codec == CODEC_ZIP) {
        if (vptv_inflate(name, buf + pick->off, pick->stored, 15, g, gsize)) goto fail;
    } else {
        memcpy(g, buf + pick->off, gsize);
    }
    if (vpt_sparse_grid_check(name, g, gsize, info)) goto fail;
    if (info->grid_type != type) {
        vpt_fail("%s: grid '%s' is not a %s grid (type %u) although its metadata says so", name, pick->name,
                 type == TYPE_FLOAT ? "float" : "Vec3f", info->grid_type);
        goto fail;
    }
    uint64_t stored, computed;
    switch (vptv_nanovdb_checksum_verify(g, type, &stored, &computed)) {
    case VPTV_CHECKSUM_NONE:
    case VPTV_CHECKSUM_MATCH: break;
    case VPTV_CHECKSUM_MISMATCH:
        vpt_fail("%s: grid '%s' does not match its checksum (it carries %016llx, its bytes give %016llx): the file is "
                 "corrupt",
                 name, pick->name, (unsigned long long)stored, (unsigned long long)computed);
        goto fail;
    default:
        vpt_fail("%s: out of memory verifying grid '%s''s checksum", name, pick->name);
        goto fail;
    }
    *grid = g;
    return 0;
fail:
    free(g);
    return -1;
}

/* The albedo grid over the density's voxels [lo, lo + sh->dims): in the
 * density's index space (the same voxel size and translation), values in
 * [0, 1]. 3 floats a voxel into *out (the caller frees it). */
static int read_albedo(const char *name, const unsigned char *buf, const Pick *pick, const VptSparseGridInfo *density,
                       const int lo[3], const VptvShape *sh, size_t max_bytes, float **out)
{
    *out = NULL;
    if (sh->count > max_bytes / (3 * sizeof(float)))
        return vpt_fail("%s: the albedo grid densified over the density's %dx%dx%d voxels needs %zu x 12 bytes, more "
                        "than the %zu allowed",
                        name, sh->dims[0], sh->dims[1], sh->dims[2], sh->count, max_bytes);
    unsigned char *grid;
    VptSparseGridInfo info;
    if (load_grid(name, buf, pick, TYPE_VEC3F, &grid, &info)) return -1;
    for (int k = 0; k < 3; k++)
        if (info.voxel_size[k] != density->voxel_size[k] || info.map_translation[k] != density->map_translation[k]) {
            free(grid);
            return vpt_fail("%s: the albedo grid's voxel size and translation along %c (%g, %g) differ from the "
                            "density's (%g, %g): the two grids must share one index space",
                            name, "xyz"[k], info.voxel_size[k], info.map_translation[k], density->voxel_size[k],
                            density->map_translation[k]);
        }
    float *a = vpt_malloc(sh->count * 3 * sizeof(float));
    int rc = a ? vpt_sparse_grid_densify_vec3(name, grid, lo, sh->dims, a) : -1;
    free(grid);
    for (size_t i = 0; rc == 0 && i < 3 * sh->count; i++)
        if (!(a[i] >= 0.0f && a[i] <= 1.0f)) {
            const size_t v = i / 3;
            rc = vpt_fail("%s: albedo %g (channel %zu) at voxel (%zu, %zu, %zu) of the density's box lies outside [0, 1]",
                          name, (double)a[i], i % 3, v % (size_t)sh->dims[0], v / (size_t)sh->dims[0] % (size_t)sh->dims[1],
                          v / ((size_t)sh->dims[0] * sh->dims[1]));
        }
    if (rc) {
        free(a);
        return -1;
    }
    *out = a;
    return 0;
}

int vptv_parse_nanovdb(const char *name, const unsigned char *buf, size_t size, const VptVolumeLoadOptions *opt,
                       VptVolume *out)
{
    memset(out, 0, sizeof *out);
    const size_t max_bytes = vptv_max_bytes(opt ? opt->max_bytes : 0);
    if (size == 0) return vpt_fail("%s: file is empty", name);
    Pick pick, albedo;
    memset(&pick, 0, sizeof pick);
    memset(&albedo, 0, sizeof albedo);
    for (size_t pos = 0; pos < size;)
        if (read_segment(name, buf, size, &pos, max_bytes, &pick, &albedo)) return -1;
    if (!pick.stored) return vpt_fail("%s: no float grid (a density) in the file", name);
    unsigned char *grid;
    VptSparseGridInfo info;
    if (load_grid(name, buf, &pick, TYPE_FLOAT, &grid, &info)) return -1;
    int rc = -1;
    float *data = NULL, *alb = NULL;
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
    double origin[3];
    if (vptv_shape(name, "the active voxels' box", dims, 3, VPT_SCALAR_F32, max_bytes, &sh) ||
        vptv_check_spacing(name, "the voxel size", info.voxel_size, &sh, 3) ||
        check_placement(name, pick.name, &info, lo, origin))
        goto done;
    /* the box is known: the caller may refuse it before it is densified */
    if (opt && opt->admit && opt->admit(opt->admit_ctx, name, sh.dims, VPT_SCALAR_F32, albedo.stored != 0)) goto done;
    if (!(data = vpt_malloc(sh.count * sizeof(float)))) goto done;
    if (vpt_sparse_grid_densify(name, grid, lo, sh.dims, data)) goto done;
    if (albedo.stored && read_albedo(name, buf, &albedo, &info, lo, &sh, max_bytes, &alb)) goto done;
    out->nx = sh.dims[0];
    out->ny = sh.dims[1];
    out->nz = sh.dims[2];
    out->data = data;
    out->albedo = alb;
    out->stored = VPT_SCALAR_F32;
    for (int k = 0; k < 3; k++) {
        out->spacing[k] = (float)info.voxel_size[k];
        out->origin[k] = (float)origin[k];
    }
    data = alb = NULL;
    rc = 0;
done:
    free(data);
    free(alb);
    free(grid);
    return rc;
}

int vpt_volume_parse_nanovdb(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out)
{
    VptVolumeLoadOptions opt;
    memset(&opt, 0, sizeof opt);
    opt.max_bytes = max_bytes;
    return vptv_parse_nanovdb(name, buf, size, &opt, out);
}

static int parse_in_dir(const char *name, const char *dir, const unsigned char *buf, size_t size,
                        const VptVolumeLoadOptions *opt, VptVolume *out)
{
    (void)dir;
    return vptv_parse_nanovdb(name, buf, size, opt, out);
}

static int load_nanovdb(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    return vptv_load_whole(path, opt, parse_in_dir, out);
}

const VptVolumeFormat vpt_volume_format_nanovdb = {"NanoVDB", "nvdb", NULL, load_nanovdb};
