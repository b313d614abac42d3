/* NRRD (teem) .nrrd/.nhdr files, format versions NRRD0001 to NRRD0005.
 *
 * The header is the magic line, then "field: value" lines, '#' comments and
 * "key:=value" pairs (ignored), up to a blank line (attached data follows
 * it) or the end of the file (a detached header). Fields are matched without
 * regard to case; every field of the NRRD spec is known, and an unknown one
 * is an error, as in teem. Supported: scalar types of 1 to 8 bytes except
 * 64-bit integers, dimension 2 or 3 (plus, at most, a leading axis of size 1
 * such as a one-value "vector" axis), raw and gzip encodings, "data file"
 * relative to the header's directory, line skip and byte skip (-1 for raw:
 * the data is the file's tail; with gzip byte skip counts inflated bytes, as
 * in teem). Spacing comes from "space directions" (vector lengths; the
 * directions themselves are not applied) or "spacings"; the origin from
 * "space origin". */
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
    F_TYPE,
    F_DIMENSION,
    F_SIZES,
    F_ENDIAN,
    F_ENCODING,
    F_DATAFILE,
    F_SPACINGS,
    F_SPACEDIRS,
    F_SPACEORIGIN,
    F_KINDS,
    F_LINESKIP,
    F_BYTESKIP,
    F_IGNORED,
    F_COUNT
};

static const struct {
    const char *name;
    int field;
} fields[] = {
    {"type", F_TYPE}, {"dimension", F_DIMENSION}, {"sizes", F_SIZES}, {"endian", F_ENDIAN},
    {"encoding", F_ENCODING}, {"data file", F_DATAFILE}, {"datafile", F_DATAFILE}, {"spacings", F_SPACINGS},
    {"space directions", F_SPACEDIRS}, {"space origin", F_SPACEORIGIN}, {"kinds", F_KINDS},
    {"line skip", F_LINESKIP}, {"lineskip", F_LINESKIP}, {"byte skip", F_BYTESKIP}, {"byteskip", F_BYTESKIP},
    /* the rest of the NRRD0005 spec: recognized, not needed */
    {"content", F_IGNORED}, {"block size", F_IGNORED}, {"blocksize", F_IGNORED}, {"min", F_IGNORED},
    {"max", F_IGNORED}, {"old min", F_IGNORED}, {"oldmin", F_IGNORED}, {"old max", F_IGNORED},
    {"oldmax", F_IGNORED}, {"number", F_IGNORED}, {"sample units", F_IGNORED}, {"sampleunits", F_IGNORED},
    {"space", F_IGNORED}, {"space dimension", F_IGNORED}, {"space units", F_IGNORED},
    {"measurement frame", F_IGNORED}, {"thicknesses", F_IGNORED}, {"axis mins", F_IGNORED},
    {"axismins", F_IGNORED}, {"axis maxs", F_IGNORED}, {"axismaxs", F_IGNORED}, {"centers", F_IGNORED},
    {"centerings", F_IGNORED}, {"labels", F_IGNORED}, {"units", F_IGNORED},
};

static const char *const field_names[F_COUNT] = {
    "type", "dimension", "sizes", "endian", "encoding", "data file", "spacings", "space directions",
    "space origin", "kinds", "line skip", "byte skip", "",
};

#define MAXAX 8 /* axes we tokenize; more is rejected via dimension */

typedef struct {
    const char *name;
    char *val[F_COUNT];
} Header;

static void header_free(Header *h)
{
    for (int k = 0; k < F_COUNT; k++) free(h->val[k]);
}

/* Reads the header; *data_off is just past the blank line, or size. */
static int read_header(Header *h, const unsigned char *buf, size_t size, size_t *data_off)
{
    char line[VPTV_LINE_MAX], q[64];
    if (size == 0) return vpt_fail("%s: file is empty", h->name);
    if (size < 8 || memcmp(buf, "NRRD000", 7) != 0 || buf[7] < '1' || buf[7] > '5')
        return vpt_fail("%s: bad magic: not a NRRD file (it must start with NRRD0001 to NRRD0005)", h->name);
    size_t pos = vptv_next_line(h->name, buf, size, 0, 1, line);
    if (pos == (size_t)-1) return -1;
    if (strlen(line) != 8) return vpt_fail("%s: bad magic line '%s'", h->name, vptv_quote(line, q));
    for (int lineno = 2; pos < size; lineno++) {
        size_t next = vptv_next_line(h->name, buf, size, pos, lineno, line);
        if (next == (size_t)-1) return -1;
        pos = next;
        if (!line[0]) break; /* the blank line: attached data follows */
        if (line[0] == '#') continue;
        char *colon = strchr(line, ':');
        if (!colon || colon == line)
            return vpt_fail("%s: header line %d: expected 'field: value', got '%s'", h->name, lineno,
                            vptv_quote(line, q));
        if (colon[1] == '=') continue; /* key:=value */
        *colon = '\0';
        char *val = colon + 1;
        while (*val == ' ' || *val == '\t') val++;
        int f = -1;
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            if (vptv_ieq(line, fields[i].name)) f = fields[i].field;
        if (f < 0) return vpt_fail("%s: header line %d: unknown field '%s'", h->name, lineno, vptv_quote(line, q));
        if (f == F_IGNORED) continue;
        if (h->val[f]) return vpt_fail("%s: header line %d: field '%s' appears twice", h->name, lineno, field_names[f]);
        if (!(h->val[f] = vpt_strdup(val))) return -1;
    }
    *data_off = pos;
    return 0;
}

/* Splits a copy of field f's value into exactly n tokens. Space-direction
 * vectors may hold blanks inside parentheses. */
static int tokens(const Header *h, int f, int n, char *buf, char **tok)
{
    char q[64];
    snprintf(buf, VPTV_LINE_MAX, "%s", h->val[f]);
    int got = 0, depth = 0;
    char *p = buf;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        if (got == n) {
            got++;
            break;
        }
        tok[got++] = p;
        for (; *p && (depth > 0 || (*p != ' ' && *p != '\t')); p++) {
            if (*p == '(') depth++;
            else if (*p == ')') depth--;
        }
        if (*p) *p++ = '\0';
    }
    if (got != n)
        return vpt_fail("%s: field '%s' = '%s': expected %d values (one per axis)", h->name, field_names[f],
                        vptv_quote(h->val[f], q), n);
    return 0;
}

/* "(a,b,c)" into v; returns the component count or -1. */
static int parse_vector(const Header *h, int f, char *s, double v[3])
{
    char q[64];
    size_t n = strlen(s);
    if (n < 2 || s[0] != '(' || s[n - 1] != ')')
        return vpt_fail("%s: field '%s': '%s' is not a vector '(x,y,z)'", h->name, field_names[f], vptv_quote(s, q));
    s[n - 1] = '\0';
    int c = 0;
    for (char *p = s + 1;; c++) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        while (*p == ' ') p++;
        char *e = p + strlen(p);
        while (e > p && e[-1] == ' ') *--e = '\0';
        if (c == 3)
            return vpt_fail("%s: field '%s': vectors of more than 3 components are not supported", h->name,
                            field_names[f]);
        if (vpt_parse_double(p, -1e30, 1e30, field_names[f], &v[c])) {
            vpt_error_prefix("%s", h->name);
            return -1;
        }
        if (!comma) break;
        p = comma + 1;
    }
    return c + 1;
}

/* A kind that makes an axis a list of values per sample, not a domain. */
static int is_value_kind(const char *k)
{
    return !(vptv_ieq(k, "domain") || vptv_ieq(k, "space") || vptv_ieq(k, "time") || vptv_ieq(k, "???") ||
             vptv_ieq(k, "none"));
}

int vptv_read_nrrd(VptvInput *in, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    const char *name = in->name;
    const size_t max_bytes = in->max_bytes;
    Header h = {.name = name};
    size_t data_off = 0;
    char q[64], tb[VPTV_LINE_MAX], *tok[MAXAX + 1];
    int rc = -1;
    /* the header must end (a blank line, or the end of a detached header)
     * within what was read of it */
    if (read_header(&h, in->buf, in->len, &data_off) || vptv_input_header_end(in, data_off)) goto done;
    static const int required[] = {F_TYPE, F_DIMENSION, F_SIZES, F_ENCODING};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!h.val[required[i]]) {
            vpt_fail("%s: missing required field '%s'", name, field_names[required[i]]);
            goto done;
        }
    VptScalarType t;
    if (vpt_scalar_type_parse(h.val[F_TYPE], &t) || !strncasecmp(h.val[F_TYPE], "MET_", 4)) {
        vpt_fail("%s: unknown or unsupported type '%s' (8- to 32-bit integers, float or double)", name,
                 vptv_quote(h.val[F_TYPE], q));
        goto done;
    }
    int dim;
    if (vpt_parse_int(h.val[F_DIMENSION], 1, 1000, "dimension", &dim)) {
        vpt_error_prefix("%s", name);
        goto done;
    }
    if (dim < 2 || dim > 4) {
        vpt_fail("%s: dimension %d is not supported (2D or 3D scalar data)", name, dim);
        goto done;
    }
    int64_t sizes[MAXAX];
    if (tokens(&h, F_SIZES, dim, tb, tok)) goto done;
    for (int i = 0; i < dim; i++)
        if (vpt_parse_i64(tok[i], -((int64_t)1 << 62), (int64_t)1 << 62, "sizes", &sizes[i])) {
            vpt_error_prefix("%s", name);
            goto done;
        }
    /* A leading non-domain axis (kinds) or, in 4D, the first axis holds
     * values per sample: allowed only with one value. */
    int first = 0;
    char kind0[64] = "";
    if (h.val[F_KINDS]) {
        if (tokens(&h, F_KINDS, dim, tb, tok)) goto done;
        snprintf(kind0, sizeof kind0, "%s", tok[0]);
        for (int i = 1; i < dim; i++)
            if (is_value_kind(tok[i])) {
                vpt_fail("%s: axis %d has kind '%s': only a leading per-sample axis is supported", name, i,
                         vptv_quote(tok[i], q));
                goto done;
            }
    }
    if (dim == 4 || (kind0[0] && is_value_kind(kind0))) {
        if (sizes[0] != 1) {
            if (dim == 4 && !kind0[0])
                vpt_fail("%s: 4D data is not supported (axis 0 has %lld samples; only a leading axis of size 1 is "
                         "allowed)",
                         name, (long long)sizes[0]);
            else
                vpt_fail("%s: axis 0 holds %lld values per voxel (kind '%s'); only scalar volumes are supported",
                         name, (long long)sizes[0], kind0);
            goto done;
        }
        first = 1;
    }
    int nd = dim - first;
    if (nd != 2 && nd != 3) {
        vpt_fail("%s: %d spatial axes (2D or 3D scalar data only)", name, nd);
        goto done;
    }
    VptvShape sh;
    if (vptv_shape(name, "sizes", sizes + first, nd, t, max_bytes, &sh)) goto done;

    size_t esz = vpt_scalar_type_size(t);
    int big = 0;
    if (h.val[F_ENDIAN]) {
        if (vptv_ieq(h.val[F_ENDIAN], "big")) big = 1;
        else if (!vptv_ieq(h.val[F_ENDIAN], "little")) {
            vpt_fail("%s: endian '%s' is not little or big", name, vptv_quote(h.val[F_ENDIAN], q));
            goto done;
        }
    } else if (esz > 1) {
        vpt_fail("%s: missing field 'endian' (required for the %zu-byte type '%s')", name, esz, h.val[F_TYPE]);
        goto done;
    }
    const char *enc = h.val[F_ENCODING];
    int gz;
    if (vptv_ieq(enc, "raw")) gz = 0;
    else if (vptv_ieq(enc, "gzip") || vptv_ieq(enc, "gz")) gz = 1;
    else {
        vpt_fail("%s: encoding '%s' is not supported (raw or gzip)", name, vptv_quote(enc, q));
        goto done;
    }
    int64_t byte_skip = 0, line_skip = 0;
    if (h.val[F_BYTESKIP] && vpt_parse_i64(h.val[F_BYTESKIP], -1, INT64_MAX, "byte skip", &byte_skip)) {
        vpt_error_prefix("%s", name);
        goto done;
    }
    if (h.val[F_LINESKIP] && vpt_parse_i64(h.val[F_LINESKIP], 0, INT64_MAX, "line skip", &line_skip)) {
        vpt_error_prefix("%s", name);
        goto done;
    }
    if (gz && byte_skip < 0) {
        vpt_fail("%s: byte skip -1 is not possible with gzip encoding", name);
        goto done;
    }
    if (byte_skip > 0 && (uint64_t)byte_skip > vptv_max_bytes(max_bytes)) {
        vpt_fail("%s: byte skip %lld is larger than the %zu bytes allowed", name, (long long)byte_skip,
                 vptv_max_bytes(max_bytes));
        goto done;
    }

    /* geometry */
    double sp[3] = {1, 1, 1}, org[3] = {0, 0, 0}, v[3];
    if (h.val[F_SPACEDIRS]) {
        if (tokens(&h, F_SPACEDIRS, dim, tb, tok)) goto done;
        for (int i = 0; i < dim; i++) {
            if (vptv_ieq(tok[i], "none")) {
                if (i >= first) {
                    vpt_fail("%s: space directions: spatial axis %d has no direction", name, i);
                    goto done;
                }
                continue;
            }
            int c = parse_vector(&h, F_SPACEDIRS, tok[i], v);
            if (c < 0) goto done;
            double len = 0;
            for (int j = 0; j < c; j++) len += v[j] * v[j];
            len = sqrt(len);
            if (i < first) continue;
            if (!(len > 0) || !isfinite(len)) {
                vpt_fail("%s: space directions: axis %d has a zero-length direction", name, i);
                goto done;
            }
            sp[i - first] = len;
        }
    } else if (h.val[F_SPACINGS]) {
        if (tokens(&h, F_SPACINGS, dim, tb, tok)) goto done;
        for (int i = first; i < dim; i++) {
            if (vptv_ieq(tok[i], "nan")) continue; /* NRRD's "unknown" */
            double s;
            if (vpt_parse_double(tok[i], -1e30, 1e30, "spacings", &s)) {
                vpt_error_prefix("%s", name);
                goto done;
            }
            if (s == 0) {
                vpt_fail("%s: spacings: axis %d has spacing 0", name, i);
                goto done;
            }
            sp[i - first] = fabs(s);
        }
    }
    if (vptv_check_spacing(name, h.val[F_SPACEDIRS] ? "space directions" : "spacings", sp, &sh, nd)) goto done;
    if (h.val[F_SPACEORIGIN]) {
        snprintf(tb, sizeof tb, "%s", h.val[F_SPACEORIGIN]);
        if (parse_vector(&h, F_SPACEORIGIN, tb, org) < 0) goto done;
    }

    /* locate the data: after the blank line, or the whole data file */
    VptvRange r;
    char where[4200];
    const char *df = h.val[F_DATAFILE];
    if (df) {
        if (vptv_input_named_file(in, "data file", "multiple data files", df, &r, where, sizeof where)) goto done;
    } else {
        snprintf(where, sizeof where, "%s", name);
        vptv_input_range(in, data_off, &r);
    }
    if (vptv_range_skip_lines(&r, where, line_skip)) goto done;
    uint64_t avail = vptv_range_left(&r);
    VptvEncoding coding = {0, 0, big && esz > 1, 1.0f};
    if (!gz) {
        if (byte_skip < 0) {
            if (avail < sh.nbytes) {
                vpt_fail("%s: truncated: expected %zu data bytes, file has %llu", where, sh.nbytes,
                         (unsigned long long)avail);
                goto done;
            }
            if (vptv_range_skip(&r, avail - sh.nbytes)) goto done;
        } else {
            if ((uint64_t)byte_skip > avail) {
                vpt_fail("%s: byte skip %lld goes past the end of the data (%llu bytes)", where, (long long)byte_skip,
                         (unsigned long long)avail);
                goto done;
            }
            if (vptv_range_skip(&r, (uint64_t)byte_skip)) goto done;
        }
        avail = vptv_range_left(&r);
        if (vptv_check_raw_size(where, avail, sh.nbytes)) goto done;
    } else {
        if (avail == 0) {
            vpt_fail("%s: truncated: no gzip data", where);
            goto done;
        }
        size_t total = vptv_sat_add(sh.nbytes, (size_t)byte_skip);
        if (vptv_check_inflatable(where, "gzip", avail > SIZE_MAX ? SIZE_MAX : (size_t)avail, total)) goto done;
        /* not a gzip stream of this image: more than deflate's stored blocks would take */
        if (avail > vptv_sat_add(total, total / 64 + ((size_t)1 << 20))) {
            vpt_fail("%s: %llu bytes of gzip data for %zu bytes of voxels: not a gzip stream of this image", where,
                     (unsigned long long)avail, total);
            goto done;
        }
        coding.window_bits = 16 + 15;
        coding.skip = (uint64_t)byte_skip;
    }
    rc = vptv_read_voxels_placed(in, where, &r, &sh, t, &coding, sp, org, nd, out);
done:
    header_free(&h);
    return rc;
}

int vpt_volume_parse_nrrd(const char *name, const char *dir, const unsigned char *buf, size_t size, size_t max_bytes,
                          VptVolume *out)
{
    return vptv_parse_memory(vptv_read_nrrd, name, dir, buf, size, max_bytes, out);
}

static int load_nrrd(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    return vptv_load_streamed(path, opt, vptv_read_nrrd, VPTV_HEAD_MAX, out);
}

const VptVolumeFormat vpt_volume_format_nrrd = {"NRRD", "nrrd nhdr", NULL, load_nrrd};
