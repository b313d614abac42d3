/* Volume loading dispatch, headerless raw files, scalar types, conversion to
 * float, zlib/gzip inflation, reshaping (downsample2) and range; the shared
 * helpers of volume_internal.h. */
#include "scenes/volume.h"
#include "scenes/volume_dicom.h"
#include "scenes/volume_internal.h"

#include "base/error.h"
#include "base/file.h"
#include "base/progress.h"
#include "base/threads.h"

#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---------- scalar types ---------- */

static const struct {
    const char *name;
    VptScalarType type;
} type_names[] = {
    /* our short names first: vpt_scalar_type_name returns these */
    {"u8", VPT_SCALAR_U8}, {"i8", VPT_SCALAR_I8}, {"u16", VPT_SCALAR_U16}, {"i16", VPT_SCALAR_I16},
    {"u32", VPT_SCALAR_U32}, {"i32", VPT_SCALAR_I32}, {"f32", VPT_SCALAR_F32}, {"f64", VPT_SCALAR_F64},
    /* MetaImage */
    {"MET_UCHAR", VPT_SCALAR_U8}, {"MET_CHAR", VPT_SCALAR_I8}, {"MET_USHORT", VPT_SCALAR_U16},
    {"MET_SHORT", VPT_SCALAR_I16}, {"MET_UINT", VPT_SCALAR_U32}, {"MET_INT", VPT_SCALAR_I32},
    {"MET_FLOAT", VPT_SCALAR_F32}, {"MET_DOUBLE", VPT_SCALAR_F64},
    /* NRRD (teem's spellings) and C names */
    {"uchar", VPT_SCALAR_U8}, {"unsigned char", VPT_SCALAR_U8}, {"uint8", VPT_SCALAR_U8},
    {"uint8_t", VPT_SCALAR_U8}, {"signed char", VPT_SCALAR_I8}, {"int8", VPT_SCALAR_I8},
    {"int8_t", VPT_SCALAR_I8}, {"short", VPT_SCALAR_I16}, {"short int", VPT_SCALAR_I16},
    {"signed short", VPT_SCALAR_I16}, {"signed short int", VPT_SCALAR_I16}, {"int16", VPT_SCALAR_I16},
    {"int16_t", VPT_SCALAR_I16}, {"ushort", VPT_SCALAR_U16}, {"unsigned short", VPT_SCALAR_U16},
    {"unsigned short int", VPT_SCALAR_U16}, {"uint16", VPT_SCALAR_U16}, {"uint16_t", VPT_SCALAR_U16},
    {"int", VPT_SCALAR_I32}, {"signed int", VPT_SCALAR_I32}, {"int32", VPT_SCALAR_I32},
    {"int32_t", VPT_SCALAR_I32}, {"uint", VPT_SCALAR_U32}, {"unsigned int", VPT_SCALAR_U32},
    {"uint32", VPT_SCALAR_U32}, {"uint32_t", VPT_SCALAR_U32}, {"float", VPT_SCALAR_F32},
    {"float32", VPT_SCALAR_F32}, {"double", VPT_SCALAR_F64}, {"float64", VPT_SCALAR_F64},
};

int vpt_scalar_type_parse(const char *s, VptScalarType *out)
{
    if (!s) return vpt_fail("missing scalar type");
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (!strcasecmp(s, type_names[i].name)) {
            *out = type_names[i].type;
            return 0;
        }
    char q[64];
    return vpt_fail("unknown scalar type '%s' (use u8, i8, u16, i16, u32, i32, f32 or f64)", vptv_quote(s, q));
}

const char *vpt_scalar_type_name(VptScalarType t)
{
    if ((int)t >= 0 && (int)t <= (int)VPT_SCALAR_F64) return type_names[t].name;
    return "?";
}

size_t vpt_scalar_type_size(VptScalarType t)
{
    switch (t) {
    case VPT_SCALAR_U8:
    case VPT_SCALAR_I8: return 1;
    case VPT_SCALAR_U16:
    case VPT_SCALAR_I16: return 2;
    case VPT_SCALAR_U32:
    case VPT_SCALAR_I32:
    case VPT_SCALAR_F32: return 4;
    case VPT_SCALAR_F64: return 8;
    }
    return 0;
}

/* ---------- shared helpers ---------- */

size_t vptv_max_bytes(size_t max_bytes) { return max_bytes ? max_bytes : VPT_VOLUME_DEFAULT_MAX_BYTES; }

size_t vptv_sat_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

int vptv_ieq(const char *a, const char *b) { return strcasecmp(a, b) == 0; }

const char *vptv_quote(const char *s, char out[64])
{
    size_t i = 0;
    for (; s[i] && i < 60; i++) out[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    if (s[i]) {
        out[57] = out[58] = out[59] = '.';
        i = 60;
    }
    out[i] = '\0';
    return out;
}

size_t vptv_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return SIZE_MAX;
    if ((unsigned long)pages > SIZE_MAX / (unsigned long)page) return SIZE_MAX;
    return (size_t)pages * (size_t)page;
}

int vptv_check_spacing(const char *name, const char *what, const double *sp, const VptvShape *shape, int nd)
{
    for (int k = 0; k < nd; k++) {
        float f = (float)sp[k];
        if (!(f > 0.0f) || !isfinite(f) || !isfinite(f * (float)shape->dims[k]))
            return vpt_fail("%s: %s along %c is %g: not a usable voxel size (it must be positive, at least %g, and "
                            "%d voxels of it at most %g)",
                            name, what, "xyz"[k], sp[k], (double)FLT_TRUE_MIN, shape->dims[k],
                            (double)FLT_MAX);
    }
    return 0;
}

int vptv_check_inflatable(const char *name, const char *kind, size_t srclen, size_t expected)
{
    if (srclen < SIZE_MAX / 1032 && expected > srclen * 1032)
        return vpt_fail("%s: %zu bytes of %s data cannot hold the %zu bytes of voxels expected (deflate "
                        "compresses at most 1032:1): wrong sizes in the header or truncated data",
                        name, srclen, kind, expected);
    return 0;
}

int vptv_shape(const char *name, const char *what, const int64_t *dims, int ndims, VptScalarType t,
               size_t max_bytes, VptvShape *shape)
{
    static const char axis[3] = {'x', 'y', 'z'};
    if (ndims != 2 && ndims != 3) return vpt_fail("%s: %d dimensions (only 2D and 3D data)", name, ndims);
    for (int k = 0; k < ndims; k++) {
        if (dims[k] <= 0)
            return vpt_fail("%s: %s: size %lld along %c must be positive", name, what, (long long)dims[k], axis[k]);
        if (dims[k] > VPTV_MAX_DIM)
            return vpt_fail("%s: %s: size %lld along %c exceeds the limit of %d", name, what, (long long)dims[k],
                            axis[k], VPTV_MAX_DIM);
    }
    size_t count = 1;
    for (int k = 0; k < ndims; k++) {
        if (count > SIZE_MAX / (size_t)dims[k])
            return vpt_fail("%s: %s: the voxel count overflows", name, what);
        count *= (size_t)dims[k];
    }
    size_t esz = vpt_scalar_type_size(t), big = esz > sizeof(float) ? esz : sizeof(float);
    if (count > SIZE_MAX / big) return vpt_fail("%s: %s: the byte size overflows", name, what);
    max_bytes = vptv_max_bytes(max_bytes);
    if (count * big > max_bytes)
        return vpt_fail("%s: %lldx%lldx%lld voxels need %zu bytes, more than the %zu allowed", name,
                        (long long)dims[0], (long long)dims[1], (long long)(ndims == 3 ? dims[2] : 1), count * big,
                        max_bytes);
    /* The data streams into the float grid: the grid is what is held. */
    size_t need = count * sizeof(float), phys = vptv_physical_memory();
    if (need > phys)
        return vpt_fail("%s: %lldx%lldx%lld voxels need %zu bytes of memory to load, more than this machine's %zu "
                        "bytes of physical memory",
                        name, (long long)dims[0], (long long)dims[1], (long long)(ndims == 3 ? dims[2] : 1), need,
                        phys);
    shape->dims[0] = (int)dims[0];
    shape->dims[1] = (int)dims[1];
    shape->dims[2] = ndims == 3 ? (int)dims[2] : 1;
    shape->count = count;
    shape->nbytes = count * esz;
    return 0;
}

int vptv_data_path(const char *name, const char *dir, const char *file, char *out, size_t outsz)
{
    char q[64];
    if (!*file) return vpt_fail("%s: empty data file name", name);
    if (file[0] == '/') {
        if ((size_t)snprintf(out, outsz, "%s", file) >= outsz)
            return vpt_fail("%s: data file path '%s' is too long", name, vptv_quote(file, q));
        return 0;
    }
    if (!dir)
        return vpt_fail("%s: data is in a separate file '%s', which cannot be read here (no directory)", name,
                        vptv_quote(file, q));
    if ((size_t)snprintf(out, outsz, "%s/%s", dir, file) >= outsz)
        return vpt_fail("%s: data file path '%s' is too long", name, vptv_quote(file, q));
    return 0;
}

size_t vptv_next_line(const char *name, const unsigned char *buf, size_t size, size_t pos, int lineno, char *line)
{
    const unsigned char *nl = memchr(buf + pos, '\n', size - pos);
    size_t end = nl ? (size_t)(nl - buf) : size, n = end - pos;
    if (n >= VPTV_LINE_MAX) {
        vpt_fail("%s: header line %d is longer than %d bytes (binary data or a corrupt header?)", name, lineno,
                 VPTV_LINE_MAX - 1);
        return (size_t)-1;
    }
    if (memchr(buf + pos, '\0', n)) {
        vpt_fail("%s: header line %d holds a NUL byte (binary data or a corrupt header?)", name, lineno);
        return (size_t)-1;
    }
    memcpy(line, buf + pos, n);
    while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
    line[n] = '\0';
    return nl ? end + 1 : size;
}

int vptv_split(char *s, char **tok, int max)
{
    int n = 0;
    char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) return n;
        if (n == max) return -1;
        tok[n++] = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        if (*p) *p++ = '\0';
    }
}

/* ---------- headerless raw files and dispatch ---------- */

/* A headerless raw file: --dims and --type give its shape (in->opt). */
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

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

/* Reads, finishes (hashes) and tidies up after one reader over in. */
static int run_reader(VptvReader read, VptvInput *in, VptVolume *out)
{
    int rc = read(in, out);
    if (vptv_input_finish(in, rc == 0, out)) rc = -1;
    if (rc) {
        vpt_volume_free(out);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int vptv_parse_memory(VptvReader read, const char *name, const char *dir, const unsigned char *buf, size_t size,
                      size_t max_bytes, VptVolume *out)
{
    VptvInput in;
    vptv_input_memory(&in, name, dir, buf, size, max_bytes);
    return run_reader(read, &in, out);
}

int vpt_volume_load(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (vpt_volume_is_dicom(path, opt)) return vpt_volume_load_dicom(path, opt, out); /* GDCM: volume_dicom.c */
    const char *ext = extension(path);
    VptvReader read = read_raw;
    if (vptv_ieq(ext, "vol")) read = vptv_read_mitsuba;
    else if (vptv_ieq(ext, "mha") || vptv_ieq(ext, "mhd")) read = vptv_read_metaimage;
    else if (vptv_ieq(ext, "nrrd") || vptv_ieq(ext, "nhdr")) read = vptv_read_nrrd;

    /* The header comes from the file's first bytes; the data streams from
     * the file (or the data file the header names) into the grid. */
    VptvInput in;
    memset(&in, 0, sizeof in);
    in.name = path;
    in.max_bytes = vptv_max_bytes(opt ? opt->max_bytes : 0);
    in.opt = opt;
    if (vptv_file_open(path, path, &in.file)) return -1;
    in.size = vptv_file_size(in.file);
    unsigned char *head = NULL;
    char dir[4096];
    vpt_dirname(path, dir, sizeof dir);
    in.dir = dir;
    int rc = 0;
    if (read != read_raw) {
        /* the first bytes, read ahead of (and again by) the hashed stream */
        in.len = in.size < VPTV_HEAD_MAX ? (size_t)in.size : VPTV_HEAD_MAX;
        head = vpt_malloc(in.len + 1);
        rc = head ? vptv_file_head(in.file, head, in.len) : -1;
        in.buf = head;
    }
    if (rc == 0) rc = run_reader(read, &in, out);
    free(head);
    vptv_file_close(in.file);
    return rc;
}

/* ---------- reshaping ---------- */

int vpt_volume_downsample2(VptVolume *v)
{
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0)
        return vpt_fail("downsample: empty volume");
    int n[3] = {v->nx, v->ny, v->nz}, m[3], f[3];
    for (int k = 0; k < 3; k++) {
        f[k] = n[k] > 1 ? 2 : 1;
        m[k] = n[k] > 1 ? n[k] / 2 : 1;
    }
    size_t count = (size_t)m[0] * m[1] * m[2];
    float *d = vpt_malloc(count * sizeof(float));
    if (!d) return -1;
    double w = 1.0 / (f[0] * f[1] * f[2]);
    size_t sx = 1, sy = (size_t)n[0], sz = (size_t)n[0] * n[1];
    for (int z = 0; z < m[2]; z++)
        for (int y = 0; y < m[1]; y++)
            for (int x = 0; x < m[0]; x++) {
                double sum = 0.0;
                size_t base = (size_t)x * f[0] * sx + (size_t)y * f[1] * sy + (size_t)z * f[2] * sz;
                for (int dz = 0; dz < f[2]; dz++)
                    for (int dy = 0; dy < f[1]; dy++)
                        for (int dx = 0; dx < f[0]; dx++) sum += v->data[base + dx * sx + dy * sy + dz * sz];
                d[(size_t)x + (size_t)m[0] * ((size_t)y + (size_t)m[1] * z)] = (float)(sum * w);
            }
    free(v->data);
    v->data = d;
    v->has_range = 0;
    for (int k = 0; k < 3; k++) {
        if (f[k] == 2) {
            /* origin is voxel 0's centre: the new voxel 0 covers old 0 and 1 */
            v->origin[k] += 0.5f * v->spacing[k];
            v->spacing[k] *= 2.0f;
            /* an odd size drops its last slice, which leaves the box too */
            if (v->has_bbox && n[k] % 2) {
                float cell = (v->bbox_max[k] - v->bbox_min[k]) / (float)n[k];
                v->bbox_max[k] = v->bbox_min[k] + cell * (float)(2 * m[k]);
            }
        }
    }
    v->nx = m[0];
    v->ny = m[1];
    v->nz = m[2];
    return 0;
}

/* One output z-slice of vpt_volume_downsample per item, on every core. */
typedef struct {
    const float *src;
    float *dst;
    int n[3], m[3], f[3];
} Down;

static void down_slices(void *arg, size_t lo, size_t hi)
{
    const Down *j = arg;
    const double w = 1.0 / ((double)j->f[0] * j->f[1] * j->f[2]);
    const size_t sy = (size_t)j->n[0], sz = (size_t)j->n[0] * j->n[1];
    for (size_t z = lo; z < hi; z++)
        for (int y = 0; y < j->m[1]; y++)
            for (int x = 0; x < j->m[0]; x++) {
                double sum = 0.0;
                const size_t base = (size_t)x * j->f[0] + (size_t)y * j->f[1] * sy + z * j->f[2] * sz;
                for (int dz = 0; dz < j->f[2]; dz++)
                    for (int dy = 0; dy < j->f[1]; dy++)
                        for (int dx = 0; dx < j->f[0]; dx++) sum += j->src[base + dx + dy * sy + dz * sz];
                j->dst[(size_t)x + (size_t)j->m[0] * ((size_t)y + (size_t)j->m[1] * z)] = (float)(sum * w);
            }
    vpt_progress_update((double)hi / (double)j->m[2]);
}

int vpt_volume_downsample(VptVolume *v, int factor)
{
    if (factor < 1) return vpt_fail("downsample: factor %d is not a positive integer", factor);
    if (factor == 1) return 0;
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0) return vpt_fail("downsample: empty volume");
    Down j = {v->data, NULL, {v->nx, v->ny, v->nz}, {0, 0, 0}, {0, 0, 0}};
    const int *n = j.n;
    for (int k = 0; k < 3; k++) {
        j.f[k] = n[k] >= factor ? factor : n[k];
        j.m[k] = n[k] / j.f[k];
    }
    const int *m = j.m, *f = j.f;
    size_t count = (size_t)m[0] * m[1] * m[2];
    float *d = vpt_malloc(count * sizeof(float));
    if (!d) return -1;
    j.dst = d;
    vpt_progress_begin("downsampling");
    vpt_parallel_items((size_t)m[2], 0, down_slices, &j);
    vpt_progress_end();
    free(v->data);
    v->data = d;
    v->has_range = 0;
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

/* One output z-slice of vpt_volume_upsample per item, on every core. */
typedef struct {
    const float *src;
    float *dst;
    int n[3], m[3], f[3];
} Up;

static void up_slices(void *arg, size_t lo, size_t hi)
{
    const Up *j = arg;
    const size_t sy = (size_t)j->n[0], sz = (size_t)j->n[0] * j->n[1];
    const float *s = j->src;
    for (size_t z = lo; z < hi; z++) {
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
#define V(X, Y, Z) s[(size_t)(X) + (size_t)(Y)*sy + (size_t)(Z)*sz]
                const float c00 = V(x0, y0, z0) + ax * (V(x1, y0, z0) - V(x0, y0, z0));
                const float c10 = V(x0, y1, z0) + ax * (V(x1, y1, z0) - V(x0, y1, z0));
                const float c01 = V(x0, y0, z1) + ax * (V(x1, y0, z1) - V(x0, y0, z1));
                const float c11 = V(x0, y1, z1) + ax * (V(x1, y1, z1) - V(x0, y1, z1));
#undef V
                const float c0 = c00 + ay * (c10 - c00), c1 = c01 + ay * (c11 - c01);
                j->dst[(size_t)x + (size_t)j->m[0] * ((size_t)y + (size_t)j->m[1] * z)] = c0 + az * (c1 - c0);
            }
        }
    }
    vpt_progress_update((double)hi / (double)j->m[2]);
}

int vpt_volume_upsample(VptVolume *v, int factor)
{
    if (factor < 1) return vpt_fail("upsample: factor %d is not a positive integer", factor);
    if (factor == 1) return 0;
    if (!v->data || v->nx <= 0 || v->ny <= 0 || v->nz <= 0) return vpt_fail("upsample: empty volume");
    Up j = {v->data, NULL, {v->nx, v->ny, v->nz}, {0, 0, 0}, {0, 0, 0}};
    const int *n = j.n;
    for (int k = 0; k < 3; k++) {
        j.f[k] = n[k] > 1 ? factor : 1; /* an axis of one voxel stays one */
        if (n[k] > 65536 / j.f[k]) return vpt_fail("upsample: %d x %d voxels exceed 65536 on an axis", n[k], j.f[k]);
        j.m[k] = n[k] * j.f[k];
    }
    const int *m = j.m, *f = j.f;
    const size_t count = (size_t)m[0] * m[1] * m[2];
    float *d = vpt_malloc(count * sizeof(float));
    if (!d) return -1;
    j.dst = d;
    vpt_progress_begin("upsampling");
    vpt_parallel_items((size_t)m[2], 0, up_slices, &j);
    vpt_progress_end();
    free(v->data);
    v->data = d;
    v->has_range = 0;
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
    memset(v, 0, sizeof *v);
}
