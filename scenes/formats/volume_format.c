/* The helpers every volume format shares (volume_format.h): scalar types,
 * shape and size checks, conversion to float, zlib/gzip inflation, data
 * files and header text. The formats call these, never volume.c. */
#include "scenes/volume.h"
#include "scenes/formats/volume_format.h"

#include "base/error.h"
#include "base/file.h"

#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <openssl/evp.h>
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

int vptv_inflate(const char *name, const unsigned char *src, size_t srclen, int window_bits, unsigned char *dst,
                 size_t expected)
{
    const char *kind = window_bits > 31 ? "compressed" : window_bits > 15 ? "gzip" : "zlib";
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, window_bits) != Z_OK) return vpt_fail("%s: cannot initialize zlib", name);
    size_t in_left = srclen, out_left = expected;
    const unsigned char *in = src;
    unsigned char *out = dst;
    unsigned char spare[64];
    int rc = 0;
    for (;;) {
        if (zs.avail_in == 0 && in_left) {
            zs.avail_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
            zs.next_in = (Bytef *)in;
            in += zs.avail_in;
            in_left -= zs.avail_in;
        }
        /* Once the output is full, inflate into a scratch buffer: any byte
         * landing there means the stream holds more than expected. */
        int full = out_left == 0 && zs.avail_out == 0;
        if (full) {
            zs.next_out = spare;
            zs.avail_out = sizeof spare;
        } else if (zs.avail_out == 0) {
            zs.avail_out = out_left > (1u << 30) ? (1u << 30) : (uInt)out_left;
            zs.next_out = out;
            out += zs.avail_out;
            out_left -= zs.avail_out;
        }
        uInt before_out = zs.avail_out;
        int z = inflate(&zs, Z_NO_FLUSH);
        if (full && zs.avail_out != before_out) {
            rc = vpt_fail("%s: %s data inflates to more than the expected %zu bytes", name, kind, expected);
            break;
        }
        if (full) zs.avail_out = 0;
        if (z == Z_STREAM_END) {
            size_t got = expected - out_left - zs.avail_out;
            if (got != expected) {
                rc = vpt_fail("%s: %s data inflates to %zu bytes, expected %zu", name, kind, got, expected);
                break;
            }
            size_t rest = zs.avail_in + in_left;
            if (rest == 0) break;
            /* gzip allows concatenated members; anything else is junk. */
            if (window_bits > 15 && (zs.avail_in ? zs.next_in[0] : in[0]) == 0x1f) {
                if (inflateReset(&zs) != Z_OK) {
                    rc = vpt_fail("%s: cannot reset zlib", name);
                    break;
                }
                continue;
            }
            rc = vpt_fail("%s: %zu bytes of junk after the end of the %s stream", name, rest, kind);
            break;
        }
        if (z == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) {
            size_t got = expected - out_left - zs.avail_out;
            if (got == expected)
                rc = vpt_fail("%s: %s data is truncated: the stream's end and checksum are missing", name, kind);
            else
                rc = vpt_fail("%s: %s data is truncated: the stream stops after %zu of the expected %zu bytes", name,
                              kind, got, expected);
            break;
        }
        if (z == Z_NEED_DICT || z == Z_DATA_ERROR || z == Z_MEM_ERROR || z == Z_STREAM_ERROR) {
            rc = vpt_fail("%s: corrupt %s data (%s) after %zu of the expected %zu bytes", name, kind,
                          zs.msg ? zs.msg : z == Z_NEED_DICT ? "needs a dictionary" : "zlib error",
                          expected - out_left - zs.avail_out, expected);
            break;
        }
    }
    inflateEnd(&zs);
    return rc;
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

int vptv_check_raw_size(const char *where, uint64_t avail, size_t nbytes)
{
    if (avail == nbytes) return 0;
    return vpt_fail(avail < nbytes ? "%s: truncated: expected %zu data bytes, file has %llu"
                                   : "%s: wrong size: expected %zu data bytes, file has %llu",
                    where, nbytes, (unsigned long long)avail);
}

int vptv_read_voxels_placed(VptvInput *in, const char *where, VptvRange *r, const VptvShape *shape, VptScalarType t,
                            const VptvEncoding *enc, const double *sp, const double *org, int nd, VptVolume *out)
{
    if (vptv_read_voxels(in, where, r, shape, t, enc, out)) return -1;
    for (int k = 0; k < nd; k++) {
        out->spacing[k] = (float)sp[k];
        out->origin[k] = (float)org[k];
    }
    return 0;
}

int vptv_input_named_file(VptvInput *in, const char *field, const char *list_what, const char *file, VptvRange *r,
                          char *where, size_t wsize)
{
    char q[64], path[4096];
    if (!strncasecmp(file, "LIST", 4) && (file[4] == '\0' || file[4] == ' ' || file[4] == '\t'))
        return vpt_fail("%s: %s LIST (%s) is not supported", in->name, field, list_what);
    if (strchr(file, '%'))
        return vpt_fail("%s: %s '%s': file-name patterns are not supported", in->name, field, vptv_quote(file, q));
    if (vptv_data_path(in->name, in->dir, file, path, sizeof path) || vptv_input_data_file(in, path, r)) return -1;
    snprintf(where, wsize, "%s: data file %s", in->name, path);
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

int vptv_load_whole(const char *path, const VptVolumeLoadOptions *opt, VptvParseFn parse, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    size_t max_bytes = vptv_max_bytes(opt ? opt->max_bytes : 0);
    /* A header plus at most the data (for formats with attached data),
     * compressed no worse than deflate's stored blocks allow. Exact size
     * checks follow in the parsers. */
    size_t cap = vptv_sat_add(vptv_sat_add(max_bytes, max_bytes / 64), (size_t)1 << 20);
    char *data;
    size_t size;
    if (vpt_read_file(path, cap, &data, &size)) return -1;
    char dir[4096];
    vpt_dirname(path, dir, sizeof dir);
    int rc = parse(path, dir, (const unsigned char *)data, size, opt, out);
    /* the file's SHA-256, as the streamed formats give theirs */
    unsigned char sum[32];
    unsigned int len = 0;
    if (rc == 0 && EVP_Digest(data, size, sum, &len, EVP_sha256(), NULL) == 1 && len == 32)
        for (int i = 0; i < 32; i++) snprintf(out->sha256 + 2 * i, 3, "%02x", sum[i]);
    free(data);
    return rc;
}
