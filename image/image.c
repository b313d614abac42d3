/* RGB float images: PNG and PFM files, sRGB encoding, statistics. */
#include "image/image.h"

#include "base/error.h"
#include "base/file.h"
#include "base/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- sizes ---------------------------------------------------------------- */

/* The one size check of this module, so no path can allocate past it. */
static int check_size(const char *what, long long w, long long h)
{
    if (w < 1 || h < 1 || w > VPT_IMAGE_MAX_DIM || h > VPT_IMAGE_MAX_DIM)
        return vpt_fail("%s: image size %lldx%lld is outside 1..%d per side", what, w, h, VPT_IMAGE_MAX_DIM);
    if ((unsigned long long)w * (unsigned long long)h > VPT_IMAGE_MAX_PIXELS)
        return vpt_fail("%s: image size %lldx%lld has more than the %zu pixels allowed", what, w, h,
                        (size_t)VPT_IMAGE_MAX_PIXELS);
    return 0;
}

static size_t pixel_count(const VptImage *img) { return (size_t)img->width * (size_t)img->height; }

VptImage *vpt_image_create(int width, int height)
{
    if (check_size("vpt_image_create", width, height) != 0) return NULL;
    VptImage *img = vpt_calloc(1, sizeof *img);
    if (!img) return NULL;
    img->width = width;
    img->height = height;
    img->rgb = vpt_calloc((size_t)width * (size_t)height * 3, sizeof(float));
    if (!img->rgb) {
        free(img);
        return NULL;
    }
    return img;
}

void vpt_image_destroy(VptImage *img)
{
    if (!img) return;
    free(img->rgb);
    free(img);
}

/* ---- sRGB ------------------------------------------------------------------ */

static double clamp01(double x) { return x > 0.0 ? (x < 1.0 ? x : 1.0) : 0.0; } /* NaN -> 0 */

float vpt_srgb_encode(float linear)
{
    double x = clamp01(linear);
    return (float)(x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1.0 / 2.4) - 0.055);
}

float vpt_srgb_decode(float encoded)
{
    double x = clamp01(encoded);
    return (float)(x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4));
}

uint8_t vpt_srgb_encode8(float linear)
{
    double x = clamp01(linear);
    double e = x <= 0.0031308 ? 12.92 * x : 1.055 * pow(x, 1.0 / 2.4) - 0.055;
    return (uint8_t)floor(e * 255.0 + 0.5);
}

/* ---- writing ----------------------------------------------------------------- */

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot : NULL;
}

int vpt_image_write(const char *path, const VptImage *img)
{
    const char *ext = extension(path);
    if (ext && strcasecmp(ext, ".png") == 0) return vpt_image_write_png(path, img);
    if (ext && strcasecmp(ext, ".pfm") == 0) return vpt_image_write_pfm(path, img);
    if (!ext) return vpt_fail("'%s': no file extension; allowed: .png, .pfm", path);
    return vpt_fail("'%s': unknown image extension '%s'; allowed: .png, .pfm", path, ext);
}

/* libpng reports errors through these; the error handler must not return. */
static void png_error_fn(png_structp png, png_const_charp msg)
{
    int err = errno; /* libpng's "Write Error" follows a failed fwrite: say why */
    const char *path = png_get_error_ptr(png);
    if (err && strcmp(msg, "Write Error") == 0) vpt_fail("error writing '%s': %s", path ? path : "(png)", strerror(err));
    else vpt_fail("'%s': libpng: %s", path ? path : "(png)", msg);
    png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* Encodes img as PNG onto fp; all allocations happen before setjmp so a
 * longjmp leaks nothing. */
static int png_encode(FILE *fp, const char *path, const VptImage *img, png_bytep row)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, (png_voidp)path, png_error_fn, png_warning_fn);
    if (!png) return vpt_fail("'%s': cannot create a libpng writer", path);
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return vpt_fail("'%s': cannot create a libpng info struct", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1; /* png_error_fn set the message */
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_sRGB_gAMA_and_cHRM(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
    png_write_info(png, info);
    size_t n = (size_t)img->width * 3;
    for (int y = 0; y < img->height; y++) {
        const float *src = vpt_image_at(img, 0, y);
        for (size_t i = 0; i < n; i++) row[i] = vpt_srgb_encode8(src[i]);
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

int vpt_image_write_png(const char *path, const VptImage *img)
{
    if (check_size(path, img->width, img->height) != 0) return -1;
    png_bytep row = vpt_malloc((size_t)img->width * 3);
    if (!row) return -1;
    VptOutFile *f = vpt_outfile_open(path);
    if (!f) {
        free(row);
        return -1;
    }
    int rc = png_encode(vpt_outfile_stream(f), path, img, row);
    free(row);
    if (rc != 0) {
        vpt_outfile_abort(f);
        return -1;
    }
    return vpt_outfile_commit(f);
}

static void put_le32(unsigned char *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    p[0] = (unsigned char)u;
    p[1] = (unsigned char)(u >> 8);
    p[2] = (unsigned char)(u >> 16);
    p[3] = (unsigned char)(u >> 24);
}

int vpt_image_write_pfm(const char *path, const VptImage *img)
{
    if (check_size(path, img->width, img->height) != 0) return -1;
    size_t row_bytes = (size_t)img->width * 12;
    unsigned char *row = vpt_malloc(row_bytes);
    if (!row) return -1;
    VptOutFile *f = vpt_outfile_open(path);
    if (!f) {
        free(row);
        return -1;
    }
    FILE *fp = vpt_outfile_stream(f);
    int ok = fprintf(fp, "PF\n%d %d\n-1.0\n", img->width, img->height) > 0;
    for (int y = img->height - 1; ok && y >= 0; y--) {
        const float *src = vpt_image_at(img, 0, y);
        for (size_t i = 0; i < (size_t)img->width * 3; i++) put_le32(row + 4 * i, src[i]);
        ok = fwrite(row, 1, row_bytes, fp) == row_bytes;
    }
    free(row);
    if (!ok) {
        vpt_fail_errno("error writing '%s'", path);
        vpt_outfile_abort(f);
        return -1;
    }
    return vpt_outfile_commit(f);
}

/* ---- reading PFM --------------------------------------------------------------- */

/* Skips one or more whitespace bytes; fails if there is none. */
static int skip_space(const unsigned char *buf, size_t size, size_t *pos)
{
    size_t p = *pos;
    while (p < size && isspace(buf[p])) p++;
    if (p == *pos) return -1;
    *pos = p;
    return 0;
}

/* Copies the next run of non-whitespace bytes (at most cap - 1) into tok. A
 * NUL byte fails: it would end the token early and hide what follows. */
static int next_token(const unsigned char *buf, size_t size, size_t *pos, char *tok, size_t cap)
{
    size_t n = 0;
    while (*pos < size && !isspace(buf[*pos])) {
        if (n + 1 >= cap || buf[*pos] == '\0') return -1;
        tok[n++] = (char)buf[(*pos)++];
    }
    tok[n] = '\0';
    return n ? 0 : -1;
}

/* Reads whitespace then one header field; messages name the file and field. */
static int header_field(const char *name, const unsigned char *buf, size_t size, size_t *pos, const char *what,
                        char *tok, size_t cap)
{
    if (skip_space(buf, size, pos) != 0 || next_token(buf, size, pos, tok, cap) != 0)
        return vpt_fail("'%s': bad PFM header: missing, overlong or binary %s (expected \"PF <width> <height> <scale>\")",
                        name, what);
    return 0;
}

/* A field that is present but not a valid number: vpt_parse_* said why. */
static VptImage *bad_header_value(const char *name)
{
    vpt_error_prefix("'%s': bad header", name);
    return NULL;
}

/* The parser of both entry points; grey 1 also takes "Pf" (one float a
 * pixel, copied to the three channels). */
static VptImage *parse_pfm(const char *name, const unsigned char *buf, size_t size, int grey)
{
    size_t pos = 2;
    char tok[40];
    int64_t w, h;
    double scale;
    if (size < 2 || buf[0] != 'P' || (buf[1] != 'F' && buf[1] != 'f')) {
        vpt_fail("'%s': not a PFM file (it does not start with \"PF\")", name);
        return NULL;
    }
    const int channels = buf[1] == 'f' ? 1 : 3;
    if (channels == 1 && !grey) {
        vpt_fail("'%s': grayscale PFM (\"Pf\") is not supported; expected color (\"PF\")", name);
        return NULL;
    }
    if (header_field(name, buf, size, &pos, "width", tok, sizeof tok) != 0) return NULL;
    if (vpt_parse_i64(tok, 1, VPT_IMAGE_MAX_DIM, "PFM width", &w) != 0) return bad_header_value(name);
    if (header_field(name, buf, size, &pos, "height", tok, sizeof tok) != 0) return NULL;
    if (vpt_parse_i64(tok, 1, VPT_IMAGE_MAX_DIM, "PFM height", &h) != 0) return bad_header_value(name);
    if (header_field(name, buf, size, &pos, "scale", tok, sizeof tok) != 0) return NULL;
    if (vpt_parse_double(tok, -1e30, 1e30, "PFM scale", &scale) != 0) return bad_header_value(name);
    if (scale == 0.0) {
        vpt_fail("'%s': PFM scale is 0 (its sign gives the byte order)", name);
        return NULL;
    }
    if (pos >= size || !isspace(buf[pos])) {
        vpt_fail("'%s': PFM header must end with one whitespace byte after the scale", name);
        return NULL;
    }
    pos++;
    if (check_size(name, w, h) != 0) return NULL;
    size_t expect = (size_t)w * (size_t)h * 4 * (size_t)channels;
    if (size - pos != expect) {
        vpt_fail("'%s': PFM data is %zu bytes, expected %zu for %lldx%lld %s floats%s", name, size - pos, expect,
                 (long long)w, (long long)h, channels == 3 ? "RGB" : "grey",
                 size - pos < expect ? " (truncated)" : "");
        return NULL;
    }
    VptImage *img = vpt_image_create((int)w, (int)h);
    if (!img) return NULL;
    int big = scale > 0.0;
    const unsigned char *p = buf + pos;
    for (int y = img->height - 1; y >= 0; y--) {
        float *dst = vpt_image_at(img, 0, y);
        for (size_t i = 0; i < (size_t)img->width * (size_t)channels; i++, p += 4) {
            uint32_t u = big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                             : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
            if (channels == 3) {
                memcpy(&dst[i], &u, 4);
            } else {
                for (int k = 0; k < 3; k++) memcpy(&dst[3 * i + (size_t)k], &u, 4);
            }
        }
    }
    return img;
}

VptImage *vpt_image_parse_pfm(const char *name, const unsigned char *buf, size_t size)
{
    return parse_pfm(name, buf, size, 0);
}

VptImage *vpt_image_parse_pfm_any(const char *name, const unsigned char *buf, size_t size)
{
    return parse_pfm(name, buf, size, 1);
}

static VptImage *read_pfm(const char *path, int any)
{
    char *data;
    size_t size;
    if (vpt_read_file(path, 256 + VPT_IMAGE_MAX_PIXELS * 12, &data, &size) != 0) return NULL;
    VptImage *img = parse_pfm(path, (const unsigned char *)data, size, any);
    free(data);
    return img;
}

VptImage *vpt_image_read_pfm(const char *path) { return read_pfm(path, 0); }

VptImage *vpt_image_read_pfm_any(const char *path) { return read_pfm(path, 1); }

/* ---- reading PNG --------------------------------------------------------------- */

VptImage *vpt_image_read_png(const char *path, VptPngValues values)
{
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&pi, path)) {
        vpt_fail("cannot read PNG '%s': %s", path, pi.message);
        png_image_free(&pi);
        return NULL;
    }
    /* The simplified API would convert anything; the contract is 8-bit RGB(A). */
    if (!(pi.format & PNG_FORMAT_FLAG_COLOR) || (pi.format & (PNG_FORMAT_FLAG_LINEAR | PNG_FORMAT_FLAG_COLORMAP))) {
        vpt_fail("'%s': only 8-bit RGB or RGBA PNGs are supported (this one is %s)", path,
                 !(pi.format & PNG_FORMAT_FLAG_COLOR) ? "grayscale"
                 : (pi.format & PNG_FORMAT_FLAG_LINEAR) ? "16-bit" : "palette-based");
        png_image_free(&pi);
        return NULL;
    }
    if (check_size(path, pi.width, pi.height) != 0) {
        png_image_free(&pi);
        return NULL;
    }
    pi.format = PNG_FORMAT_RGBA;
    size_t n = (size_t)pi.width * pi.height;
    unsigned char *buf = vpt_malloc(n * 4);
    VptImage *img = buf ? vpt_image_create((int)pi.width, (int)pi.height) : NULL;
    if (!img) {
        free(buf);
        png_image_free(&pi);
        return NULL;
    }
    if (!png_image_finish_read(&pi, NULL, buf, 0, NULL)) {
        vpt_fail("cannot read PNG '%s': %s", path, pi.message);
        png_image_free(&pi);
        free(buf);
        vpt_image_destroy(img);
        return NULL;
    }
    float lut[256];
    for (int i = 0; i < 256; i++)
        lut[i] = values == VPT_PNG_LINEAR ? vpt_srgb_decode((float)i / 255.0f) : (float)i / 255.0f;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) img->rgb[3 * i + c] = lut[buf[4 * i + c]];
    free(buf);
    return img;
}

/* ---- statistics ------------------------------------------------------------------- */

void vpt_image_stats(const VptImage *img, VptImageStats *st)
{
    memset(st, 0, sizeof *st);
    double sum[3] = {0, 0, 0};
    size_t cnt[3] = {0, 0, 0};
    float mn = INFINITY, mx = -INFINITY;
    size_t n = pixel_count(img);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            float v = img->rgb[3 * i + c];
            if (!isfinite(v)) {
                st->nonfinite++;
                continue;
            }
            sum[c] += v;
            cnt[c]++;
            if (v < mn) mn = v;
            if (v > mx) mx = v;
        }
    for (int c = 0; c < 3; c++) st->mean[c] = cnt[c] ? sum[c] / (double)cnt[c] : 0.0;
    size_t all = cnt[0] + cnt[1] + cnt[2];
    st->mean_all = all ? (sum[0] + sum[1] + sum[2]) / (double)all : 0.0;
    st->min = all ? mn : 0.0f;
    st->max = all ? mx : 0.0f;
}
