/* Volume loading: the table of formats and the dispatch over it,
 * headerless raw files, and reshaping (downsample, upsample) and range. The
 * formats and their shared helpers (volume_format.h) never call back into
 * this file. */
#include "scenes/volume.h"
#include "scenes/formats/volume_format.h"

#include "base/error.h"
#include "base/file.h"
#include "base/progress.h"
#include "base/threads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---------- headerless raw files and dispatch ---------- */

/* A headerless raw file: --dims and --type give its shape (in->opt); the
 * data streams in as every format's does (volume_stream.c). */
static int read_raw(VptvInput *in, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    const char *path = in->name;
    const VptVolumeLoadOptions *opt = in->opt;
    if (!opt || !opt->has_dims || !opt->has_type)
        return vpt_fail("%s: a headerless raw file needs its dimensions and type (--dims X,Y,Z --type "
                        "u8|i8|u16|i16|u32|i32|f32|f64)",
                        path);
    int64_t dims[3] = {opt->dims[0], opt->dims[1], opt->dims[2]};
    VptvShape sh;
    if (vptv_shape(path, "--dims", dims, 3, opt->type, opt->max_bytes, &sh)) return -1;
    if (in->size != (uint64_t)sh.nbytes)
        return vpt_fail("%s: expected %zu bytes (%dx%dx%d %s), file has %llu", path, sh.nbytes, sh.dims[0],
                        sh.dims[1], sh.dims[2], vpt_scalar_type_name(opt->type), (unsigned long long)in->size);
    VptvRange r;
    vptv_input_range(in, 0, &r);
    const VptvEncoding enc = {0, 0, opt->big_endian, 1.0f};
    return vptv_read_voxels(in, path, &r, &sh, opt->type, &enc, out);
}

static int load_raw(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    return vptv_load_streamed(path, opt, read_raw, 0, out);
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

/* A resampling job: the density (1 channel) and, when the volume has one,
 * the albedo (3 interleaved channels) of n source voxels per axis into m
 * output voxels per axis, f the block (downsampling) or factor (upsampling)
 * per axis. One output z-slice per item, on every core: each item writes its
 * own slice of both grids, so the bytes do not depend on the thread count,
 * and the density's are those of a 1-channel pass. */
typedef struct {
    const float *src, *asrc; /* asrc NULL: no albedo */
    float *dst, *adst;
    int n[3], m[3], f[3];
} Resample;

/* factor^3 block averages of output slice z of ch interleaved channels. */
static void down_slice(const Resample *j, const float *src, float *dst, int ch, size_t z)
{
    const double w = 1.0 / ((double)j->f[0] * j->f[1] * j->f[2]);
    const size_t sy = (size_t)j->n[0], sz = (size_t)j->n[0] * j->n[1];
    for (int y = 0; y < j->m[1]; y++)
        for (int x = 0; x < j->m[0]; x++)
            for (int c = 0; c < ch; c++) {
                double sum = 0.0;
                const size_t base = (size_t)x * j->f[0] + (size_t)y * j->f[1] * sy + z * j->f[2] * sz;
                for (int dz = 0; dz < j->f[2]; dz++)
                    for (int dy = 0; dy < j->f[1]; dy++)
                        for (int dx = 0; dx < j->f[0]; dx++)
                            sum += src[(base + dx + dy * sy + dz * sz) * (size_t)ch + (size_t)c];
                dst[((size_t)x + (size_t)j->m[0] * ((size_t)y + (size_t)j->m[1] * z)) * (size_t)ch + (size_t)c] =
                    (float)(sum * w);
            }
}

static void down_slices(void *arg, size_t lo, size_t hi)
{
    const Resample *j = arg;
    for (size_t z = lo; z < hi; z++) {
        down_slice(j, j->src, j->dst, 1, z);
        if (j->asrc) down_slice(j, j->asrc, j->adst, 3, z);
    }
    vpt_progress_update((double)hi / (double)j->m[2]);
}

/* Allocates the job's outputs (m voxels: the density's and, with an albedo,
 * the albedo's), runs fn over the output slices with a progress line `what`,
 * and replaces v's grids and shape. v is unchanged when out of memory. */
static int resample_run(VptVolume *v, Resample *j, VptRangeFn fn, const char *what)
{
    const size_t count = (size_t)j->m[0] * j->m[1] * j->m[2];
    j->dst = vpt_malloc(count * sizeof(float));
    j->adst = j->asrc && j->dst ? vpt_malloc(count * 3 * sizeof(float)) : NULL;
    if (!j->dst || (j->asrc && !j->adst)) {
        free(j->dst);
        free(j->adst);
        return -1;
    }
    vpt_progress_begin(what);
    vpt_parallel_items((size_t)j->m[2], 0, fn, j);
    vpt_progress_end();
    free(v->data);
    v->data = j->dst;
    if (j->adst) {
        free(v->albedo);
        v->albedo = j->adst;
    }
    v->has_range = 0;
    v->nx = j->m[0];
    v->ny = j->m[1];
    v->nz = j->m[2];
    return 0;
}

int vpt_volume_downsample(VptVolume *v, int factor)
{
    if (factor < 1) return vpt_fail("downsample: factor %d is not a positive integer", factor);
    if (factor == 1) return 0;
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0) return vpt_fail("downsample: empty volume");
    Resample j = {v->data, v->albedo, NULL, NULL, {v->nx, v->ny, v->nz}, {0, 0, 0}, {0, 0, 0}};
    const int *n = j.n, *m = j.m, *f = j.f;
    for (int k = 0; k < 3; k++) {
        j.f[k] = n[k] >= factor ? factor : n[k];
        j.m[k] = n[k] / j.f[k];
    }
    if (resample_run(v, &j, down_slices, "downsampling")) return -1;
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

/* Trilinear upsampling of output slice z of ch interleaved channels. */
static void up_slice(const Resample *j, const float *src, float *dst, int ch, size_t z)
{
    const size_t sy = (size_t)j->n[0], sz = (size_t)j->n[0] * j->n[1];
    int z0, z1;
    float az;
    up_axis((int)z, j->f[2], j->n[2], &z0, &z1, &az);
    for (int y = 0; y < j->m[1]; y++) {
        int y0, y1;
        float ay;
        up_axis(y, j->f[1], j->n[1], &y0, &y1, &ay);
        for (int x = 0; x < j->m[0]; x++) {
            int x0, x1;
            float ax;
            up_axis(x, j->f[0], j->n[0], &x0, &x1, &ax);
            for (int c = 0; c < ch; c++) {
                const float *s = src + c;
#define V(X, Y, Z) s[((size_t)(X) + (size_t)(Y)*sy + (size_t)(Z)*sz) * (size_t)ch]
                const float c00 = V(x0, y0, z0) + ax * (V(x1, y0, z0) - V(x0, y0, z0));
                const float c10 = V(x0, y1, z0) + ax * (V(x1, y1, z0) - V(x0, y1, z0));
                const float c01 = V(x0, y0, z1) + ax * (V(x1, y0, z1) - V(x0, y0, z1));
                const float c11 = V(x0, y1, z1) + ax * (V(x1, y1, z1) - V(x0, y1, z1));
#undef V
                const float c0 = c00 + ay * (c10 - c00), c1 = c01 + ay * (c11 - c01);
                dst[((size_t)x + (size_t)j->m[0] * ((size_t)y + (size_t)j->m[1] * z)) * (size_t)ch + (size_t)c] =
                    c0 + az * (c1 - c0);
            }
        }
    }
}

static void up_slices(void *arg, size_t lo, size_t hi)
{
    const Resample *j = arg;
    for (size_t z = lo; z < hi; z++) {
        up_slice(j, j->src, j->dst, 1, z);
        if (j->asrc) up_slice(j, j->asrc, j->adst, 3, z);
    }
    vpt_progress_update((double)hi / (double)j->m[2]);
}

int vpt_volume_upsample(VptVolume *v, int factor)
{
    if (factor < 1) return vpt_fail("upsample: factor %d is not a positive integer", factor);
    if (factor == 1) return 0;
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0) return vpt_fail("upsample: empty volume");
    Resample j = {v->data, v->albedo, NULL, NULL, {v->nx, v->ny, v->nz}, {0, 0, 0}, {0, 0, 0}};
    const int *n = j.n, *f = j.f;
    for (int k = 0; k < 3; k++) {
        j.f[k] = n[k] > 1 ? factor : 1; /* an axis of one voxel stays one */
        if (n[k] > 65536 / j.f[k]) return vpt_fail("upsample: %d x %d voxels exceed 65536 on an axis", n[k], j.f[k]);
        j.m[k] = n[k] * j.f[k];
    }
    if (resample_run(v, &j, up_slices, "upsampling")) return -1;
    for (int k = 0; k < 3; k++) {
        if (f[k] == 1) continue;
        /* the new voxel 0's centre: half a new voxel inside the old voxel 0's face */
        v->origin[k] += (0.5f / (float)f[k] - 0.5f) * v->spacing[k];
        v->spacing[k] /= (float)f[k];
    }
    return 0;
}

void vpt_volume_range(const VptVolume *v, float *vmin, float *vmax)
{
    if (v->has_range) {
        *vmin = v->range_min;
        *vmax = v->range_max;
        return;
    }
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
