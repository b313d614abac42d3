/* Mitsuba VOL version 3 grid volumes (Mitsuba 0.5 "gridvolume" format):
 *
 *   'V' 'O' 'L' 3 | int32 encoding | int32 xres, yres, zres | int32 channels |
 *   float32 xmin, ymin, zmin, xmax, ymax, zmax | data, x fastest
 *
 * all little endian. Encodings: 1 float32, 2 float16 (Mitsuba itself does not
 * read it), 3 uint8 meaning v / 255, 4 quantized directions. We read 1 and 3
 * with one channel, and write float32 with one channel. */
#include "scenes/volume.h"
#include "scenes/volume_internal.h"

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

int vpt_volume_parse_mitsuba(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (size == 0) return vpt_fail("%s: file is empty", name);
    if (size < 4 || memcmp(buf, "VOL", 3) != 0)
        return vpt_fail("%s: bad magic: not a Mitsuba VOL file (it must start with 'VOL')", name);
    if (buf[3] != 3) return vpt_fail("%s: Mitsuba VOL version %d is not supported (only version 3)", name, buf[3]);
    if (size < VOL_HEADER)
        return vpt_fail("%s: truncated header: %zu bytes, a VOL header has %d", name, size, VOL_HEADER);
    int32_t enc = rd_i32(buf + 4), chan = rd_i32(buf + 20);
    VptScalarType t;
    if (enc == 1) t = VPT_SCALAR_F32;
    else if (enc == 3) t = VPT_SCALAR_U8;
    else if (enc == 2) return vpt_fail("%s: float16 encoding (2) is not supported (use float32, 1)", name);
    else if (enc == 4) return vpt_fail("%s: quantized-direction encoding (4) is not supported", name);
    else return vpt_fail("%s: unknown encoding %d (1 float32, 3 uint8)", name, (int)enc);
    int64_t dims[3] = {rd_i32(buf + 8), rd_i32(buf + 12), rd_i32(buf + 16)};
    VptvShape sh;
    if (vptv_shape(name, "resolution", dims, 3, t, max_bytes, &sh)) return -1;
    if (chan != 1)
        return vpt_fail("%s: %d channels per voxel; only 1-channel (scalar) volumes are supported", name, (int)chan);
    float bmin[3], bmax[3];
    for (int k = 0; k < 3; k++) {
        bmin[k] = rd_f32(buf + 24 + 4 * k);
        bmax[k] = rd_f32(buf + 36 + 4 * k);
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]))
            return vpt_fail("%s: bounding box has a non-finite coordinate", name);
        if (!(bmax[k] > bmin[k]))
            return vpt_fail("%s: bounding box is empty along %c (%g to %g)", name, "xyz"[k], bmin[k], bmax[k]);
    }
    /* The voxel size as the volume will store it: the box over n cells. */
    double sp[3];
    for (int k = 0; k < 3; k++) sp[k] = (bmax[k] - bmin[k]) / (float)sh.dims[k];
    if (vptv_check_spacing(name, "bounding box / resolution", sp, &sh, 3)) return -1;
    size_t have = size - VOL_HEADER;
    if (have < sh.nbytes)
        return vpt_fail("%s: truncated: expected %zu data bytes, file has %zu", name, sh.nbytes, have);
    if (have > sh.nbytes)
        return vpt_fail("%s: %zu bytes after the expected %zu data bytes (wrong resolution?)", name,
                        have - sh.nbytes, sh.nbytes);
    if (vptv_convert(name, buf + VOL_HEADER, &sh, t, 0, out)) return -1;
    if (t == VPT_SCALAR_U8)
        for (size_t i = 0; i < sh.count; i++) out->data[i] *= 1.0f / 255.0f;
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

int vpt_volume_save_mitsuba(const char *path, const VptVolume *v)
{
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0)
        return vpt_fail("%s: cannot save an empty volume", path);
    float bmin[3], bmax[3];
    int n[3] = {v->nx, v->ny, v->nz};
    for (int k = 0; k < 3; k++) {
        bmin[k] = v->has_bbox ? v->bbox_min[k] : 0.0f;
        bmax[k] = v->has_bbox ? v->bbox_max[k] : (float)n[k] * v->spacing[k];
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]) || !(bmax[k] > bmin[k]))
            return vpt_fail("%s: the volume's box is empty or not finite along %c", path, "xyz"[k]);
    }
    size_t count = (size_t)n[0] * n[1] * n[2];
    for (size_t i = 0; i < count; i++)
        if (!isfinite(v->data[i])) return vpt_fail("%s: non-finite value at voxel %zu", path, i);

    unsigned char hdr[VOL_HEADER];
    memcpy(hdr, "VOL", 3);
    hdr[3] = 3;
    wr_u32(hdr + 4, 1);
    for (int k = 0; k < 3; k++) wr_u32(hdr + 8 + 4 * k, (uint32_t)n[k]);
    wr_u32(hdr + 20, 1);
    for (int k = 0; k < 3; k++) {
        wr_f32(hdr + 24 + 4 * k, bmin[k]);
        wr_f32(hdr + 36 + 4 * k, bmax[k]);
    }
    VptOutFile *f = vpt_outfile_open(path);
    if (!f) return -1;
    FILE *fp = vpt_outfile_stream(f);
    int ok = fwrite(hdr, 1, sizeof hdr, fp) == sizeof hdr;
    unsigned char chunk[4096];
    for (size_t i = 0; ok && i < count;) {
        size_t m = 0;
        for (; m < sizeof chunk / 4 && i < count; m++, i++) wr_f32(chunk + 4 * m, v->data[i]);
        ok = fwrite(chunk, 4, m, fp) == m;
    }
    if (!ok) {
        vpt_fail_errno("error writing '%s'", path);
        vpt_outfile_abort(f);
        return -1;
    }
    return vpt_outfile_commit(f);
}
