/* MetaImage (ITK MetaIO) .mha/.mhd images.
 *
 * The header is "Key = Value" lines; ElementDataFile is the last key, and
 * its value is LOCAL (the data follows the header line in the same file) or
 * a file name relative to the header's directory. Data is raw or, with
 * CompressedData = True, one zlib (or gzip) stream. Keys are matched without
 * regard to case; keys we do not use (CenterOfRotation, AnatomicalOrientation,
 * Comment, ...) are skipped. TransformMatrix/Rotation/Orientation are checked
 * for shape and finiteness but not applied: a rotated image loads axis-aligned.
 * Not supported (clear errors): ASCII data (BinaryData = False), more than
 * one channel, LIST and file-pattern data files, vector element types. */
#include "scenes/volume.h"
#include "scenes/formats/volume_format.h"

#include "base/error.h"
#include "base/file.h"
#include "base/parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
    K_OBJECTTYPE,
    K_NDIMS,
    K_DIMSIZE,
    K_ELEMENTTYPE,
    K_ELEMENTSPACING,
    K_ELEMENTSIZE,
    K_OFFSET,
    K_POSITION,
    K_ORIGIN,
    K_TRANSFORMMATRIX,
    K_ROTATION,
    K_ORIENTATION,
    K_BINARYDATA,
    K_BYTEORDERMSB,
    K_ELEMENTBYTEORDERMSB,
    K_COMPRESSEDDATA,
    K_COMPRESSEDDATASIZE,
    K_HEADERSIZE,
    K_CHANNELS,
    K_ELEMENTDATAFILE,
    K_COUNT
};

static const char *const key_names[K_COUNT] = {
    "ObjectType", "NDims", "DimSize", "ElementType", "ElementSpacing", "ElementSize", "Offset",
    "Position", "Origin", "TransformMatrix", "Rotation", "Orientation", "BinaryData",
    "BinaryDataByteOrderMSB", "ElementByteOrderMSB", "CompressedData", "CompressedDataSize", "HeaderSize",
    "ElementNumberOfChannels", "ElementDataFile",
};

typedef struct {
    const char *name;
    char *val[K_COUNT]; /* NULL when absent; owned */
} Header;

static void header_free(Header *h)
{
    for (int k = 0; k < K_COUNT; k++) free(h->val[k]);
}

static int parse_bool(const Header *h, int key, int dflt, int *out)
{
    const char *s = h->val[key];
    char q[64];
    if (!s) *out = dflt;
    else if (vptv_ieq(s, "true") || !strcmp(s, "1")) *out = 1;
    else if (vptv_ieq(s, "false") || !strcmp(s, "0")) *out = 0;
    else return vpt_fail("%s: %s = '%s' is not True or False", h->name, key_names[key], vptv_quote(s, q));
    return 0;
}

/* Exactly n numbers from key's value (a copy is tokenized): integers into
 * ints when it is given, else numbers in [lo, hi] into reals. */
static int parse_values(const Header *h, int key, int n, double lo, double hi, double *reals, int64_t *ints)
{
    char buf[VPTV_LINE_MAX], *tok[16], q[64];
    snprintf(buf, sizeof buf, "%s", h->val[key]);
    int got = vptv_split(buf, tok, 16);
    if (got != n)
        return vpt_fail("%s: %s = '%s': expected %d %s", h->name, key_names[key], vptv_quote(h->val[key], q), n,
                        ints ? "integers" : "numbers");
    for (int i = 0; i < n; i++) {
        int rc = ints ? vpt_parse_i64(tok[i], -((int64_t)1 << 62), (int64_t)1 << 62, key_names[key], &ints[i])
                      : vpt_parse_double(tok[i], lo, hi, key_names[key], &reals[i]);
        if (rc) {
            vpt_error_prefix("%s", h->name);
            return -1;
        }
    }
    return 0;
}

static int parse_numbers(const Header *h, int key, int n, double lo, double hi, double *out)
{
    return parse_values(h, key, n, lo, hi, out, NULL);
}

static int parse_ints(const Header *h, int key, int n, int64_t *out) { return parse_values(h, key, n, 0, 0, NULL, out); }

/* Reads keys up to and including ElementDataFile; *data_off is the offset
 * just past that line. */
static int read_header(Header *h, const unsigned char *buf, size_t size, size_t *data_off)
{
    char line[VPTV_LINE_MAX], q[64];
    size_t pos = 0;
    for (int lineno = 1; pos < size; lineno++) {
        size_t next = vptv_next_line(h->name, buf, size, pos, lineno, line);
        if (next == (size_t)-1) return -1;
        pos = next;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) continue;
        char *eq = strchr(p, '=');
        if (!eq || eq == p)
            return vpt_fail("%s: header line %d: expected 'Key = Value', got '%s'", h->name, lineno,
                            vptv_quote(p, q));
        char *kend = eq;
        while (kend > p && (kend[-1] == ' ' || kend[-1] == '\t')) kend--;
        *kend = '\0';
        char *val = eq + 1;
        while (*val == ' ' || *val == '\t') val++;
        int key = -1;
        for (int k = 0; k < K_COUNT; k++)
            if (vptv_ieq(p, key_names[k])) key = k;
        if (key < 0) continue; /* a key we do not use */
        if (h->val[key]) return vpt_fail("%s: header line %d: %s appears twice", h->name, lineno, key_names[key]);
        if (!(h->val[key] = vpt_strdup(val))) return -1;
        if (key == K_ELEMENTDATAFILE) {
            *data_off = pos;
            return 0;
        }
    }
    if (size == 0) return vpt_fail("%s: file is empty", h->name);
    return vpt_fail("%s: not a MetaImage header: no ElementDataFile key (it must be the last key)", h->name);
}

int vptv_read_metaimage(VptvInput *in, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    const char *name = in->name;
    Header h = {.name = name};
    size_t data_off = 0;
    char q[64];
    int rc = -1;
    if (read_header(&h, in->buf, in->len, &data_off) || vptv_input_header_end(in, data_off)) goto done;

    if (h.val[K_OBJECTTYPE] && !vptv_ieq(h.val[K_OBJECTTYPE], "Image")) {
        vpt_fail("%s: ObjectType = '%s' is not Image", name, vptv_quote(h.val[K_OBJECTTYPE], q));
        goto done;
    }
    static const int required[] = {K_NDIMS, K_DIMSIZE, K_ELEMENTTYPE};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!h.val[required[i]]) {
            vpt_fail("%s: missing required key %s", name, key_names[required[i]]);
            goto done;
        }
    int nd;
    if (vpt_parse_int(h.val[K_NDIMS], 1, 1000, "NDims", &nd)) {
        vpt_error_prefix("%s", name);
        goto done;
    }
    if (nd != 2 && nd != 3) {
        vpt_fail("%s: NDims = %d: %s", name, nd,
                 nd > 3 ? "4D and higher data is not supported (2D or 3D images only)" : "only 2D and 3D images");
        goto done;
    }
    const char *et = h.val[K_ELEMENTTYPE];
    VptScalarType t;
    if (strncasecmp(et, "MET_", 4) != 0 || vpt_scalar_type_parse(et, &t)) {
        vpt_fail("%s: unknown or unsupported ElementType '%s' (MET_UCHAR, MET_CHAR, MET_USHORT, MET_SHORT, "
                 "MET_UINT, MET_INT, MET_FLOAT or MET_DOUBLE)",
                 name, vptv_quote(et, q));
        goto done;
    }
    if (h.val[K_CHANNELS]) {
        int ch;
        if (vpt_parse_int(h.val[K_CHANNELS], 1, 1 << 20, "ElementNumberOfChannels", &ch)) {
            vpt_error_prefix("%s", name);
            goto done;
        }
        if (ch != 1) {
            vpt_fail("%s: ElementNumberOfChannels = %d; only 1-channel (scalar) images are supported", name, ch);
            goto done;
        }
    }
    int binary, msb1, msb2, compressed;
    if (parse_bool(&h, K_BINARYDATA, 1, &binary) || parse_bool(&h, K_BYTEORDERMSB, 0, &msb1) ||
        parse_bool(&h, K_ELEMENTBYTEORDERMSB, msb1, &msb2) || parse_bool(&h, K_COMPRESSEDDATA, 0, &compressed))
        goto done;
    if (!binary) {
        vpt_fail("%s: BinaryData = False (ASCII data) is not supported", name);
        goto done;
    }
    if (h.val[K_BYTEORDERMSB] && msb1 != msb2) {
        vpt_fail("%s: BinaryDataByteOrderMSB and ElementByteOrderMSB disagree", name);
        goto done;
    }
    int64_t dims[3];
    if (parse_ints(&h, K_DIMSIZE, nd, dims)) goto done;
    VptvShape sh;
    if (vptv_shape(name, "DimSize", dims, nd, t, in->max_bytes, &sh)) goto done;

    /* geometry */
    double sp[3] = {1, 1, 1}, org[3] = {0, 0, 0}, m[9];
    int spkey = h.val[K_ELEMENTSPACING] ? K_ELEMENTSPACING : h.val[K_ELEMENTSIZE] ? K_ELEMENTSIZE : -1;
    if (spkey >= 0) {
        if (parse_numbers(&h, spkey, nd, -1e30, 1e30, sp)) goto done;
        for (int k = 0; k < nd; k++)
            if (!(sp[k] > 0)) {
                vpt_fail("%s: %s along %c is %g; it must be positive", name, key_names[spkey], "xyz"[k], sp[k]);
                goto done;
            }
    }
    if (vptv_check_spacing(name, spkey >= 0 ? key_names[spkey] : "ElementSpacing", sp, &sh, nd)) goto done;
    int orgkey = h.val[K_OFFSET] ? K_OFFSET : h.val[K_POSITION] ? K_POSITION : h.val[K_ORIGIN] ? K_ORIGIN : -1;
    if (orgkey >= 0 && parse_numbers(&h, orgkey, nd, -1e30, 1e30, org)) goto done;
    static const int rot_keys[] = {K_TRANSFORMMATRIX, K_ROTATION, K_ORIENTATION};
    for (size_t i = 0; i < 3; i++)
        if (h.val[rot_keys[i]] && parse_numbers(&h, rot_keys[i], nd * nd, -1e30, 1e30, m)) goto done;

    /* locate the data */
    int64_t header_size = 0;
    uint64_t csize = 0;
    int has_csize = h.val[K_COMPRESSEDDATASIZE] != NULL;
    if (h.val[K_HEADERSIZE] && vpt_parse_i64(h.val[K_HEADERSIZE], -1, INT64_MAX, "HeaderSize", &header_size)) {
        vpt_error_prefix("%s", name);
        goto done;
    }
    if (has_csize && vpt_parse_u64(h.val[K_COMPRESSEDDATASIZE], UINT64_MAX, "CompressedDataSize", &csize)) {
        vpt_error_prefix("%s", name);
        goto done;
    }
    const char *df = h.val[K_ELEMENTDATAFILE];
    VptvRange r;
    char where[4200];
    if (vptv_ieq(df, "LOCAL")) {
        /* HeaderSize describes separate data files; LOCAL data starts right
         * after the ElementDataFile line. */
        vptv_input_range(in, data_off, &r);
        snprintf(where, sizeof where, "%s", name);
    } else {
        if (vptv_input_named_file(in, "ElementDataFile =", "one file per slice", df, &r, where, sizeof where))
            goto done;
        const uint64_t fs = r.end;
        /* The data is the file after HeaderSize bytes, or with HeaderSize =
         * -1 its last (compressed) data size bytes. */
        uint64_t off = 0, len;
        if (header_size >= 0) {
            if ((uint64_t)header_size > fs) {
                vpt_fail("%s: HeaderSize %lld is beyond the end of the file (%llu bytes)", where,
                         (long long)header_size, (unsigned long long)fs);
                goto done;
            }
            off = (uint64_t)header_size;
            len = fs - off;
        } else {
            if (compressed && !has_csize) {
                vpt_fail("%s: HeaderSize = -1 with compressed data needs CompressedDataSize", name);
                goto done;
            }
            len = compressed ? csize : sh.nbytes;
            if (len > fs) {
                vpt_fail("%s: truncated: expected %llu data bytes, file has %llu", where, (unsigned long long)len,
                         (unsigned long long)fs);
                goto done;
            }
            off = fs - len;
        }
        if (!compressed && len != sh.nbytes) {
            vpt_fail(len < sh.nbytes ? "%s: truncated: expected %zu data bytes, file has %llu"
                                     : "%s: wrong size: expected %zu data bytes, file has %llu",
                     where, sh.nbytes, (unsigned long long)len);
            goto done;
        }
        if (compressed && has_csize && csize != len) {
            vpt_fail("%s: CompressedDataSize = %llu, but the file has %llu data bytes", where,
                     (unsigned long long)csize, (unsigned long long)len);
            goto done;
        }
        if (compressed && len > vptv_sat_add(sh.nbytes, sh.nbytes / 64 + 65536)) {
            vpt_fail("%s: %llu bytes of compressed data for %zu bytes of voxels: not a deflate stream of this image",
                     where, (unsigned long long)len, sh.nbytes);
            goto done;
        }
        if (vptv_range_skip(&r, off)) goto done;
    }

    const uint64_t avail = vptv_range_left(&r);
    VptvEncoding enc = {0, 0, msb2, 1.0f};
    if (!compressed) {
        if (vptv_check_raw_size(where, avail, sh.nbytes)) goto done;
    } else {
        if (has_csize && csize != avail) {
            vpt_fail("%s: CompressedDataSize = %llu, but the data has %llu bytes", where, (unsigned long long)csize,
                     (unsigned long long)avail);
            goto done;
        }
        if (avail == 0) {
            vpt_fail("%s: truncated: no compressed data", where);
            goto done;
        }
        if (vptv_check_inflatable(where, "compressed", avail > SIZE_MAX ? SIZE_MAX : (size_t)avail, sh.nbytes))
            goto done;
        enc.window_bits = 32 + 15;
    }
    rc = vptv_read_voxels_placed(in, where, &r, &sh, t, &enc, sp, org, nd, out);
done:
    header_free(&h);
    return rc;
}

int vpt_volume_parse_metaimage(const char *name, const char *dir, const unsigned char *buf, size_t size,
                               size_t max_bytes, VptVolume *out)
{
    return vptv_parse_memory(vptv_read_metaimage, name, dir, buf, size, max_bytes, out);
}

static int load_metaimage(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    return vptv_load_streamed(path, opt, vptv_read_metaimage, VPTV_HEAD_MAX, out);
}

const VptVolumeFormat vpt_volume_format_metaimage = {"MetaImage", "mha mhd", NULL, load_metaimage};
