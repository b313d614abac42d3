/* Mitsuba VOL version 3 grid volumes (Mitsuba 0.5 "gridvolume" format):
 *
 *   'V' 'O' 'L' 3 | int32 encoding | int32 xres, yres, zres | int32 channels |
 *   float32 xmin, ymin, zmin, xmax, ymax, zmax | data, x fastest
 *
 * all little endian. Encodings: 1 float32, 2 float16 (Mitsuba itself does not
 * read it), 3 uint8 meaning v / 255, 4 quantized directions. We read 1 and 3
 * with one channel into a VptVolume, with one or three channels into a
 * VptVolGrid (albedo grids), and write float32 with one or three channels. */
#include "scenes/volume.h"
#include "scenes/formats/volume_format.h"

#include "base/error.h"
#include "base/file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOL_HEADER 48

static int32_t rd_i32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static float rd_f32(const unsigned char *p)
{
    uint32_t u = (uint32_t)rd_i32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void wr_u32(unsigned char *p, uint32_t u)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(u >> (8 * i));
}

static void wr_f32(unsigned char *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    wr_u32(p, u);
}

/* The header up to the resolution: magic, version, size, encoding, channel
 * count and the grid's shape (one channel; callers check the channels). */
static int parse_header(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptScalarType *t,
                        int32_t *chan, VptvShape *sh)
{
    if (size == 0) return vpt_fail("%s: file is empty", name);
    if (size < 4 || memcmp(buf, "VOL", 3) != 0)
        return vpt_fail("%s: bad magic: not a Mitsuba VOL file (it must start with 'VOL')", name);
    if (buf[3] != 3) return vpt_fail("%s: Mitsuba VOL version %d is not supported (only version 3)", name, buf[3]);
    if (size < VOL_HEADER)
        return vpt_fail("%s: truncated header: %zu bytes, a VOL header has %d", name, size, VOL_HEADER);
    int32_t enc = rd_i32(buf + 4);
    *chan = rd_i32(buf + 20);
    if (enc == 1) *t = VPT_SCALAR_F32;
    else if (enc == 3) *t = VPT_SCALAR_U8;
    else if (enc == 2) return vpt_fail("%s: float16 encoding (2) is not supported (use float32, 1)", name);
    else if (enc == 4) return vpt_fail("%s: quantized-direction encoding (4) is not supported", name);
    else return vpt_fail("%s: unknown encoding %d (1 float32, 3 uint8)", name, (int)enc);
    int64_t dims[3] = {rd_i32(buf + 8), rd_i32(buf + 12), rd_i32(buf + 16)};
    return vptv_shape(name, "resolution", dims, 3, *t, max_bytes, sh);
}

/* The bounding box, which must be finite and non-empty, and the voxel size
 * it gives (the box over n cells). */
static int parse_bbox(const char *name, const unsigned char *buf, VptvShape *sh, float bmin[3], float bmax[3])
{
    for (int k = 0; k < 3; k++) {
        bmin[k] = rd_f32(buf + 24 + 4 * k);
        bmax[k] = rd_f32(buf + 36 + 4 * k);
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]))
            return vpt_fail("%s: bounding box has a non-finite coordinate", name);
        if (!(bmax[k] > bmin[k]))
            return vpt_fail("%s: bounding box is empty along %c (%g to %g)", name, "xyz"[k], bmin[k], bmax[k]);
    }
    double sp[3];
    for (int k = 0; k < 3; k++) sp[k] = (bmax[k] - bmin[k]) / (float)sh->dims[k];
    return vptv_check_spacing(name, "bounding box / resolution", sp, sh, 3);
}

int vptv_read_mitsuba(VptvInput *in, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    const char *name = in->name;
    VptScalarType t;
    int32_t chan;
    VptvShape sh;
    if (parse_header(name, in->buf, in->len, in->max_bytes, &t, &chan, &sh)) return -1;
    if (chan != 1)
        return vpt_fail("%s: %d channels per voxel; only 1-channel (scalar) volumes are supported", name, (int)chan);
    float bmin[3], bmax[3];
    if (parse_bbox(name, in->buf, &sh, bmin, bmax)) return -1;
    const uint64_t have = in->size - VOL_HEADER;
    if (have < sh.nbytes)
        return vpt_fail("%s: truncated: expected %zu data bytes, file has %llu", name, sh.nbytes,
                        (unsigned long long)have);
    if (have > sh.nbytes)
        return vpt_fail("%s: %llu bytes after the expected %zu data bytes (wrong resolution?)", name,
                        (unsigned long long)(have - sh.nbytes), sh.nbytes);
    VptvRange r;
    vptv_input_range(in, VOL_HEADER, &r);
    const VptvEncoding enc = {0, 0, 0, t == VPT_SCALAR_U8 ? 1.0f / 255.0f : 1.0f};
    if (vptv_read_voxels(in, name, &r, &sh, t, &enc, out)) return -1;
    out->has_bbox = 1;
    for (int k = 0; k < 3; k++) {
        out->bbox_min[k] = bmin[k];
        out->bbox_max[k] = bmax[k];
        /* The box holds n cells; origin is the centre of the first. */
        out->spacing[k] = (bmax[k] - bmin[k]) / (float)sh.dims[k];
        out->origin[k] = bmin[k] + 0.5f * out->spacing[k];
    }
    return 0;
}

int vpt_volume_parse_mitsuba(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out)
{
    return vptv_parse_memory(vptv_read_mitsuba, name, NULL, buf, size, max_bytes, out);
}

/* Writes a float32 VOL file of `channels` interleaved channels to fp. */
static int write_vol(FILE *fp, const char *path, const int n[3], int channels, const float bmin[3],
                     const float bmax[3], const float *data)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]) || !(bmax[k] > bmin[k]))
            return vpt_fail("%s: the volume's box is empty or not finite along %c", path, "xyz"[k]);
    size_t count = (size_t)n[0] * n[1] * n[2] * (size_t)channels;
    for (size_t i = 0; i < count; i++)
        if (!isfinite(data[i])) return vpt_fail("%s: non-finite value at voxel %zu", path, i / (size_t)channels);

    unsigned char hdr[VOL_HEADER];
    memcpy(hdr, "VOL", 3);
    hdr[3] = 3;
    wr_u32(hdr + 4, 1);
    for (int k = 0; k < 3; k++) wr_u32(hdr + 8 + 4 * k, (uint32_t)n[k]);
    wr_u32(hdr + 20, (uint32_t)channels);
    for (int k = 0; k < 3; k++) {
        wr_f32(hdr + 24 + 4 * k, bmin[k]);
        wr_f32(hdr + 36 + 4 * k, bmax[k]);
    }
    int ok = fwrite(hdr, 1, sizeof hdr, fp) == sizeof hdr;
    unsigned char chunk[4096];
    for (size_t i = 0; ok && i < count;) {
        size_t m = 0;
        for (; m < sizeof chunk / 4 && i < count; m++, i++) wr_f32(chunk + 4 * m, data[i]);
        ok = fwrite(chunk, 4, m, fp) == m;
    }
    if (!ok) return vpt_fail_errno("error writing '%s'", path);
    return 0;
}

/* The same, atomically to path. */
static int save_vol(const char *path, const int n[3], int channels, const float bmin[3], const float bmax[3],
                    const float *data)
{
    VptOutFile *f = vpt_outfile_open(path);
    if (!f) return -1;
    if (write_vol(vpt_outfile_stream(f), path, n, channels, bmin, bmax, data)) {
        vpt_outfile_abort(f);
        return -1;
    }
    return vpt_outfile_commit(f);
}

/* The .vol loader: the 48-byte header, then the data streamed. */
static int load_mitsuba(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    return vptv_load_streamed(path, opt, vptv_read_mitsuba, VOL_HEADER, out);
}

const VptVolumeFormat vpt_volume_format_mitsuba = {"Mitsuba VOL", "vol", NULL, load_mitsuba};

int vpt_volume_save_mitsuba(const char *path, const VptVolume *v)
{
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0)
        return vpt_fail("%s: cannot save an empty volume", path);
    float bmin[3], bmax[3];
    int n[3] = {v->nx, v->ny, v->nz};
    for (int k = 0; k < 3; k++) {
        bmin[k] = v->has_bbox ? v->bbox_min[k] : 0.0f;
        bmax[k] = v->has_bbox ? v->bbox_max[k] : (float)n[k] * v->spacing[k];
    }
    return save_vol(path, n, 1, bmin, bmax, v->data);
}

/* ---------- multi-channel grids ---------- */

int vpt_vol_grid_parse(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolGrid *out)
{
    memset(out, 0, sizeof *out);
    VptScalarType t;
    int32_t chan;
    VptvShape sh;
    if (parse_header(name, buf, size, max_bytes, &t, &chan, &sh)) return -1;
    if (chan != 1 && chan != 3)
        return vpt_fail("%s: %d channels per voxel; only 1 (scalar) and 3 (RGB) are supported", name, (int)chan);
    size_t esz = vpt_scalar_type_size(t);
    /* parse_header checked one channel; three need three times that */
    if (sh.count > SIZE_MAX / (3 * sizeof(float)) || sh.count * (size_t)chan * sizeof(float) > vptv_max_bytes(max_bytes))
        return vpt_fail("%s: %dx%dx%d voxels of %d channels need more than the %zu bytes allowed", name, sh.dims[0],
                        sh.dims[1], sh.dims[2], (int)chan, vptv_max_bytes(max_bytes));
    size_t nval = sh.count * (size_t)chan, nbytes = nval * esz;
    float bmin[3], bmax[3];
    if (parse_bbox(name, buf, &sh, bmin, bmax)) return -1;
    size_t have = size - VOL_HEADER;
    if (have < nbytes) return vpt_fail("%s: truncated: expected %zu data bytes, file has %zu", name, nbytes, have);
    if (have > nbytes)
        return vpt_fail("%s: %zu bytes after the expected %zu data bytes (wrong resolution or channels?)", name,
                        have - nbytes, nbytes);
    float *d = vpt_malloc(nval * sizeof *d);
    if (!d) {
        vpt_error_prefix("%s", name);
        return -1;
    }
    const unsigned char *p = buf + VOL_HEADER;
    for (size_t i = 0; i < nval; i++) {
        float f = t == VPT_SCALAR_U8 ? (float)p[i] * (1.0f / 255.0f) : rd_f32(p + 4 * i);
        if (!isfinite(f)) {
            size_t v = i / (size_t)chan, nx = (size_t)sh.dims[0], ny = (size_t)sh.dims[1];
            free(d);
            return vpt_fail("%s: non-finite value at voxel %zu (x %zu, y %zu, z %zu), channel %d", name, v, v % nx,
                            v / nx % ny, v / (nx * ny), (int)(i % (size_t)chan));
        }
        d[i] = f;
    }
    out->nx = sh.dims[0];
    out->ny = sh.dims[1];
    out->nz = sh.dims[2];
    out->channels = (int)chan;
    out->data = d;
    memcpy(out->bbox_min, bmin, sizeof bmin);
    memcpy(out->bbox_max, bmax, sizeof bmax);
    return 0;
}

int vpt_vol_grid_load(const char *path, size_t max_bytes, VptVolGrid *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = vptv_sat_add(vptv_max_bytes(max_bytes), VOL_HEADER);
    char *data;
    size_t size;
    if (vpt_read_file(path, cap, &data, &size)) return -1;
    int rc = vpt_vol_grid_parse(path, (const unsigned char *)data, size, max_bytes, out);
    free(data);
    return rc;
}

static int grid_check(const char *path, const VptVolGrid *g)
{
    if (!g->data || g->nx <= 0 || g->ny <= 0 || g->nz <= 0)
        return vpt_fail("%s: cannot save an empty volume", path);
    if (g->channels != 1 && g->channels != 3)
        return vpt_fail("%s: %d channels; a VOL grid here has 1 or 3", path, g->channels);
    return 0;
}

int vpt_vol_grid_save(const char *path, const VptVolGrid *g)
{
    if (grid_check(path, g)) return -1;
    int n[3] = {g->nx, g->ny, g->nz};
    return save_vol(path, n, g->channels, g->bbox_min, g->bbox_max, g->data);
}

int vpt_vol_grid_write(FILE *fp, const char *path, const VptVolGrid *g)
{
    if (grid_check(path, g)) return -1;
    int n[3] = {g->nx, g->ny, g->nz};
    return write_vol(fp, path, n, g->channels, g->bbox_min, g->bbox_max, g->data);
}

void vpt_vol_grid_free(VptVolGrid *g)
{
    if (!g) return;
    free(g->data);
    memset(g, 0, sizeof *g);
}
