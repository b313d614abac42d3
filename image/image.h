/* RGB float images and their files: PNG (8-bit sRGB, for looking at) and PFM
 * (exact 32-bit floats, for comparing renders).
 *
 * A VptImage holds linear radiance, three floats per pixel, row 0 at the TOP
 * and x fastest: pixel (x, y) is rgb[3 * (x + width * y)]. It owns rgb;
 * create with vpt_image_create (or a reader), release with vpt_image_destroy.
 *
 * Writers go through base/file.h's VptOutFile: on any error no file is left
 * under the final name (an older file there stays untouched). Readers
 * validate headers and sizes before allocating and fail with a message
 * naming the file and what is wrong. */
#ifndef VPT_IMAGE_IMAGE_H
#define VPT_IMAGE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Size limits applied everywhere (create, PNG, PFM): each dimension in
 * [1, VPT_IMAGE_MAX_DIM] and at most VPT_IMAGE_MAX_PIXELS pixels (768 MiB of
 * floats), so a malformed header cannot ask for an absurd allocation and
 * width * height * 3 * sizeof(float) never overflows. */
#define VPT_IMAGE_MAX_DIM 65536
#define VPT_IMAGE_MAX_PIXELS ((size_t)1 << 26)

typedef struct {
    int width, height;
    float *rgb;              /* owned; width * height * 3 floats, top row first */
} VptImage;

/* A zero-filled image; NULL with a message for sizes beyond the limits
 * above or when out of memory. */
VptImage *vpt_image_create(int width, int height);
void vpt_image_destroy(VptImage *img);   /* NULL is fine */

static inline float *vpt_image_at(const VptImage *img, int x, int y)
{
    return img->rgb + 3 * ((size_t)x + (size_t)img->width * (size_t)y);
}

/* Writes by the extension of path (case-insensitive): ".png" or ".pfm".
 * Anything else fails with a message naming the extension and the allowed
 * ones. */
int vpt_image_write(const char *path, const VptImage *img);

/* 8-bit RGB PNG with an sRGB chunk: each linear value is clamped to [0, 1]
 * (NaN counts as 0), encoded with the exact sRGB transfer function
 * (vpt_srgb_encode) and rounded to the nearest of 0..255. */
int vpt_image_write_png(const char *path, const VptImage *img);

/* Color PFM: "PF\n<w> <h>\n-1.0\n", then little-endian float32 RGB rows from
 * the BOTTOM row up, as the format requires. Values are written bit-exactly
 * (negative, infinite and NaN values included). */
int vpt_image_write_pfm(const char *path, const VptImage *img);

/* Reads a color PFM ("PF"; grayscale "Pf" is refused). The header must be
 * "PF", whitespace, width, whitespace, height, whitespace, a finite non-zero
 * scale (negative: little-endian data, positive: big-endian) and exactly one
 * whitespace byte; the data must be exactly width * height * 12 bytes, and
 * the size within the limits above. Returns NULL with a message
 * naming the file on any violation. */
VptImage *vpt_image_read_pfm(const char *path);
/* The same over an in-memory file; `name` is used in messages. */
VptImage *vpt_image_parse_pfm(const char *name, const unsigned char *buf, size_t size);

/* The same for a colour ("PF") or grey ("Pf": one float a pixel, each
 * copied to the three channels) PFM, under the same rules: environment
 * maps (scenes/env_map.h) come in either. */
VptImage *vpt_image_read_pfm_any(const char *path);
VptImage *vpt_image_parse_pfm_any(const char *name, const unsigned char *buf, size_t size);

/* What vpt_image_read_png returns. */
typedef enum {
    VPT_PNG_ENCODED, /* byte / 255: the sRGB-encoded values as stored */
    VPT_PNG_LINEAR   /* vpt_srgb_decode(byte / 255): linear radiance */
} VptPngValues;

/* Reads an 8-bit RGB or RGBA PNG (alpha is dropped, not composited); other
 * bit depths and color types are refused. Meant for tests and comparisons. */
VptImage *vpt_image_read_png(const char *path, VptPngValues values);

/* The exact sRGB transfer functions on [0, 1] (inputs are clamped; NaN
 * counts as 0), and the 8-bit encoding the PNG writer uses. */
float vpt_srgb_encode(float linear);
float vpt_srgb_decode(float encoded);
uint8_t vpt_srgb_encode8(float linear);

/* Summary of an image, for tests and sanity checks. Means, min and max are
 * over the finite values only; `nonfinite` counts NaN and infinite values
 * (0 for a healthy render). */
typedef struct {
    double mean[3];          /* per channel */
    double mean_all;         /* over all channels */
    float min, max;          /* over all channels; 0 when no value is finite */
    size_t nonfinite;
} VptImageStats;

void vpt_image_stats(const VptImage *img, VptImageStats *st);

#endif
