/* Volume loading: the table of formats and the dispatch over it,
 * headerless raw files, and reshaping (downsample, upsample) and range. The
 * formats and their shared helpers (volume_format.h) never call back into
 * this file. */
#include "scenes/volume.h"
#include "scenes/volume_format.h"

#include "base/error.h"
#include "base/file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---------- headerless raw files and dispatch ---------- */

static int load_raw(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    if (access(path, F_OK) != 0) return vpt_fail_errno("cannot open '%s'", path); /* before asking for --dims */
    if (!opt || !opt->has_dims || !opt->has_type)
        return vpt_fail("%s: a headerless raw file needs its dimensions and type (--dims X,Y,Z --type "
                        "u8|i8|u16|i16|u32|i32|f32|f64)",
                        path);
    int64_t dims[3] = {opt->dims[0], opt->dims[1], opt->dims[2]};
    VptvShape sh;
    if (vptv_shape(path, "--dims", dims, 3, opt->type, opt->max_bytes, &sh)) return -1;
    int64_t fsize = vpt_file_size(path);
    if (fsize < 0) return -1;
    if ((uint64_t)fsize != (uint64_t)sh.nbytes)
        return vpt_fail("%s: expected %zu bytes (%dx%dx%d %s), file has %lld", path, sh.nbytes, sh.dims[0],
                        sh.dims[1], sh.dims[2], vpt_scalar_type_name(opt->type), (long long)fsize);
    char *data;
    size_t size;
    if (vpt_read_file(path, sh.nbytes, &data, &size)) return -1;
    if (size != sh.nbytes) {
        free(data);
        return vpt_fail("%s: expected %zu bytes, read %zu (file changed while reading?)", path, sh.nbytes, size);
    }
    int rc = vptv_convert(path, (const unsigned char *)data, &sh, opt->type, opt->big_endian, out);
    free(data);
    return rc;
}

/* The formats, in the order they are tried (volume_format.h). Adding a
 * format: its file defines a VptVolumeFormat; declare it and list it here. */
extern const VptVolumeFormat vpt_volume_format_mitsuba, vpt_volume_format_metaimage, vpt_volume_format_nrrd,
    vpt_volume_format_dicom, vpt_volume_format_nanovdb, vpt_volume_format_vdb;

static const VptVolumeFormat vpt_volume_format_raw = {"raw", "raw", NULL, load_raw};

static const VptVolumeFormat *const formats[] = {
    &vpt_volume_format_mitsuba,
    &vpt_volume_format_metaimage,
    &vpt_volume_format_nrrd,
    &vpt_volume_format_dicom,
    &vpt_volume_format_nanovdb,
    &vpt_volume_format_vdb,
    &vpt_volume_format_raw,
};

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

/* Whether ext is one of the blank-separated words of list (any case). */
static int has_extension(const char *list, const char *ext)
{
    const size_t n = strlen(ext);
    if (!n || !list) return 0;
    for (const char *p = list; *p;) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if ((size_t)(e - p) == n && !strncasecmp(p, ext, n)) return 1;
        p = e;
    }
    return 0;
}

int vpt_volume_load(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    const size_t n = sizeof formats / sizeof formats[0];
    const char *ext = extension(path);
    for (size_t i = 0; i < n; i++)
        if (has_extension(formats[i]->extensions, ext)) return formats[i]->load(path, opt, out);
    for (size_t i = 0; i < n; i++)
        if (formats[i]->claims && formats[i]->claims(path, opt)) return formats[i]->load(path, opt, out);
    return load_raw(path, opt, out); /* any other name: headerless raw data */
}

/* ---------- reshaping ---------- */

int vpt_volume_downsample2(VptVolume *v) { return vpt_volume_downsample(v, 2); }

/* factor^3 block averages of ch interleaved channels: n source voxels per
 * axis, f the block per axis, m = n / f the result's; NULL when out of memory. */
static float *down_values(const float *src, int ch, const int n[3], const int f[3], const int m[3])
{
    float *d = vpt_malloc((size_t)m[0] * m[1] * m[2] * (size_t)ch * sizeof(float));
    if (!d) return NULL;
    const double w = 1.0 / ((double)f[0] * f[1] * f[2]);
    const size_t sy = (size_t)n[0], sz = (size_t)n[0] * n[1];
    for (int z = 0; z < m[2]; z++)
        for (int y = 0; y < m[1]; y++)
            for (int x = 0; x < m[0]; x++)
                for (int c = 0; c < ch; c++) {
                    double sum = 0.0;
                    const size_t base = (size_t)x * f[0] + (size_t)y * f[1] * sy + (size_t)z * f[2] * sz;
                    for (int dz = 0; dz < f[2]; dz++)
                        for (int dy = 0; dy < f[1]; dy++)
                            for (int dx = 0; dx < f[0]; dx++)
                                sum += src[(base + dx + dy * sy + dz * sz) * (size_t)ch + (size_t)c];
                    d[((size_t)x + (size_t)m[0] * ((size_t)y + (size_t)m[1] * z)) * (size_t)ch + (size_t)c] =
                        (float)(sum * w);
                }
    return d;
}

int vpt_volume_downsample(VptVolume *v, int factor)
{
    if (factor < 1) return vpt_fail("downsample: factor %d is not a positive integer", factor);
    if (factor == 1) return 0;
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0) return vpt_fail("downsample: empty volume");
    int n[3] = {v->nx, v->ny, v->nz}, m[3], f[3];
    for (int k = 0; k < 3; k++) {
        f[k] = n[k] >= factor ? factor : n[k];
        m[k] = n[k] / f[k];
    }
    float *d = down_values(v->data, 1, n, f, m), *a = v->albedo ? down_values(v->albedo, 3, n, f, m) : NULL;
    if (!d || (v->albedo && !a)) {
        free(d);
        free(a);
        return -1;
    }
    free(v->data);
    v->data = d;
    if (a) {
        free(v->albedo);
        v->albedo = a;
    }
    for (int k = 0; k < 3; k++) {
        if (f[k] == 1) continue;
        /* origin is voxel 0's centre: the new voxel 0 covers old 0 .. f - 1 */
        v->origin[k] += 0.5f * (float)(f[k] - 1) * v->spacing[k];
        v->spacing[k] *= (float)f[k];
        /* a partial last block is dropped, and leaves the box too */
        if (v->has_bbox && n[k] % f[k]) {
            float cell = (v->bbox_max[k] - v->bbox_min[k]) / (float)n[k];
            v->bbox_max[k] = v->bbox_min[k] + cell * (float)(f[k] * m[k]);
        }
    }
    v->nx = m[0];
    v->ny = m[1];
    v->nz = m[2];
    return 0;
}

/* One axis of the upsampling filter: the two source indices and the weight of
 * the upper one for output index j (texel centres, clamped). */
static void up_axis(int j, int factor, int n, int *i0, int *i1, float *a)
{
    const double x = ((double)j + 0.5) / factor - 0.5;
    const double xc = x < 0 ? 0 : x > n - 1 ? n - 1 : x;
    const int i = (int)xc;
    *i0 = i;
    *i1 = i + 1 < n ? i + 1 : n - 1;
    *a = (float)(xc - i);
}

/* Trilinear upsampling of ch interleaved channels (vpt_volume_upsample):
 * n source voxels per axis, f the factor per axis, m = n f; NULL when out of
 * memory. */
static float *up_values(const float *src, int ch, const int n[3], const int f[3], const int m[3])
{
    float *d = vpt_malloc((size_t)m[0] * m[1] * m[2] * (size_t)ch * sizeof(float));
    if (!d) return NULL;
    const size_t sy = (size_t)n[0], sz = (size_t)n[0] * n[1];
    for (int z = 0; z < m[2]; z++) {
        int z0, z1;
        float az;
        up_axis(z, f[2], n[2], &z0, &z1, &az);
        for (int y = 0; y < m[1]; y++) {
            int y0, y1;
            float ay;
            up_axis(y, f[1], n[1], &y0, &y1, &ay);
            for (int x = 0; x < m[0]; x++) {
                int x0, x1;
                float ax;
                up_axis(x, f[0], n[0], &x0, &x1, &ax);
                for (int c = 0; c < ch; c++) {
                    const float *s = src + c;
#define V(X, Y, Z) s[((size_t)(X) + (size_t)(Y)*sy + (size_t)(Z)*sz) * (size_t)ch]
                    const float c00 = V(x0, y0, z0) + ax * (V(x1, y0, z0) - V(x0, y0, z0));
                    const float c10 = V(x0, y1, z0) + ax * (V(x1, y1, z0) - V(x0, y1, z0));
                    const float c01 = V(x0, y0, z1) + ax * (V(x1, y0, z1) - V(x0, y0, z1));
                    const float c11 = V(x0, y1, z1) + ax * (V(x1, y1, z1) - V(x0, y1, z1));
#undef V
                    const float c0 = c00 + ay * (c10 - c00), c1 = c01 + ay * (c11 - c01);
                    d[((size_t)x + (size_t)m[0] * ((size_t)y + (size_t)m[1] * z)) * (size_t)ch + (size_t)c] =
                        c0 + az * (c1 - c0);
                }
            }
        }
    }
    return d;
}

int vpt_volume_upsample(VptVolume *v, int factor)
{
    if (factor < 1) return vpt_fail("upsample: factor %d is not a positive integer", factor);
    if (factor == 1) return 0;
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0) return vpt_fail("upsample: empty volume");
    const int n[3] = {v->nx, v->ny, v->nz};
    int m[3], f[3];
    for (int k = 0; k < 3; k++) {
        f[k] = n[k] > 1 ? factor : 1; /* an axis of one voxel stays one */
        if (n[k] > 65536 / f[k]) return vpt_fail("upsample: %d x %d voxels exceed 65536 on an axis", n[k], f[k]);
        m[k] = n[k] * f[k];
    }
    float *d = up_values(v->data, 1, n, f, m), *a = v->albedo ? up_values(v->albedo, 3, n, f, m) : NULL;
    if (!d || (v->albedo && !a)) {
        free(d);
        free(a);
        return -1;
    }
    free(v->data);
    v->data = d;
    if (a) {
        free(v->albedo);
        v->albedo = a;
    }
    for (int k = 0; k < 3; k++) {
        if (f[k] == 1) continue;
        /* the new voxel 0's centre: half a new voxel inside the old voxel 0's face */
        v->origin[k] += (0.5f / (float)f[k] - 0.5f) * v->spacing[k];
        v->spacing[k] /= (float)f[k];
    }
    v->nx = m[0];
    v->ny = m[1];
    v->nz = m[2];
    return 0;
}

void vpt_volume_range(const VptVolume *v, float *vmin, float *vmax)
{
    size_t n = v->data && v->nx > 0 && v->ny > 0 && v->nz > 0 ? (size_t)v->nx * v->ny * v->nz : 0;
    float lo = n ? v->data[0] : 0.0f, hi = lo;
    for (size_t i = 1; i < n; i++) {
        float x = v->data[i];
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    *vmin = lo;
    *vmax = hi;
}

void vpt_volume_free(VptVolume *v)
{
    if (!v) return;
    free(v->data);
    free(v->albedo);
    memset(v, 0, sizeof *v);
}
