/* Environment maps: files, checks and sampling tables (scenes/env_map.h). */
#include "scenes/env_map.h"

#include "base/error.h"
#include "base/plugin.h"
#include "scenes/env_map_exr_shim.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void vpt_env_map_destroy(VptEnvMap *m)
{
    if (!m) return;
    free(m->radiance);
    free(m->row_cdf);
    free(m->col_cdf);
    free(m);
}

/* The file's name without its folder and extension, cut to fit. */
static void stem_of(const char *path, char *out, size_t size)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    if (n >= size) n = size - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

/* The marginal and conditional CDFs of the texels' weights (luminance times
 * the sine of the row's centre: a texel's solid angle), summed in double
 * and normalized so that each table ends at exactly 1. A row of weight 0
 * gets a uniform conditional table (never used: its marginal bin is
 * empty). Returns the total weight. */
static double build_tables(VptEnvMap *m)
{
    const int W = m->width, H = m->height;
    double total = 0.0;
    m->row_cdf[0] = 0.0f;
    double *rows = vpt_malloc((size_t)H * sizeof *rows);
    if (!rows) return -1.0;
    for (int j = 0; j < H; j++) {
        const double st = sin(VPT_PI * ((double)j + 0.5) / (double)H);
        float *cc = m->col_cdf + (size_t)j * (size_t)(W + 1);
        double sum = 0.0;
        for (int i = 0; i < W; i++) sum += vpt_env_texel_weight(m->radiance + 3 * ((size_t)j * (size_t)W + (size_t)i));
        double acc = 0.0;
        cc[0] = 0.0f;
        for (int i = 0; i < W; i++) {
            acc += vpt_env_texel_weight(m->radiance + 3 * ((size_t)j * (size_t)W + (size_t)i));
            cc[i + 1] = sum > 0.0 ? (float)(acc / sum) : (float)((double)(i + 1) / (double)W);
        }
        cc[W] = 1.0f;
        rows[j] = sum * st;
        total += rows[j];
    }
    double acc = 0.0;
    for (int j = 0; j < H; j++) {
        acc += rows[j];
        m->row_cdf[j + 1] = total > 0.0 ? (float)(acc / total) : (float)((double)(j + 1) / (double)H);
    }
    m->row_cdf[H] = 1.0f;
    free(rows);
    return total;
}

VptEnvMap *vpt_env_map_from_image(const char *name, const VptImage *img, double scale)
{
    if (!(scale > 0.0 && scale <= 3e38)) {
        vpt_fail("'%s': environment map scale %g must be a finite number > 0", name, scale);
        return NULL;
    }
    const size_t n = (size_t)img->width * (size_t)img->height;
    for (size_t k = 0; k < 3 * n; k++) {
        const float v = img->rgb[k];
        const double x = (double)v * scale;
        if (!(v >= 0.0f) || !(x <= 3e38)) {
            const size_t t = k / 3;
            vpt_fail("'%s': texel (%zu, %zu) (column, row from the top) channel %zu is %g%s: an environment map's "
                     "radiance must be finite and >= 0",
                     name, t % (size_t)img->width, t / (size_t)img->width, k % 3, (double)v,
                     v >= 0.0f && isfinite(v) ? " times the scale" : "");
            return NULL;
        }
    }
    VptEnvMap *m = vpt_calloc(1, sizeof *m);
    if (!m) return NULL;
    m->width = img->width;
    m->height = img->height;
    m->scale = scale;
    m->radiance = vpt_malloc(3 * n * sizeof *m->radiance);
    m->row_cdf = vpt_malloc(((size_t)img->height + 1) * sizeof *m->row_cdf);
    m->col_cdf = vpt_malloc((size_t)img->height * ((size_t)img->width + 1) * sizeof *m->col_cdf);
    if (!m->radiance || !m->row_cdf || !m->col_cdf) {
        vpt_env_map_destroy(m);
        return NULL;
    }
    for (size_t k = 0; k < 3 * n; k++) m->radiance[k] = (float)((double)img->rgb[k] * scale);
    const double total = build_tables(m);
    if (total < 0.0) {
        vpt_env_map_destroy(m);
        return NULL;
    }
    m->uniform = total > 0.0 ? VPT_ENV_UNIFORM : 1.0f;
    stem_of(name, m->stem, sizeof m->stem);
    snprintf(m->source, sizeof m->source, "%s", name);
    return m;
}

/* The OpenEXR plugin (scenes/env_map_exr_shim.h), loaded on the first .exr
 * map: $VPT_OPENEXR_SHIM when set, else beside the program, else
 * ../lib/vptune/ (base/plugin.h). */
typedef int (*ExrReadFn)(const char *, int, size_t, VptExrResult *);
static VptPlugin exr_shim = {.file = "libvptune-openexr.so",
                             .env = "VPT_OPENEXR_SHIM",
                             .abi_symbol = "vpt_exr_shim_abi",
                             .abi = VPT_EXR_SHIM_ABI,
                             .symbols = {"vpt_exr_read", NULL}};

static VptImage *read_exr(const char *path)
{
    if (vpt_plugin_load(&exr_shim)) {
        vpt_fail("'%s': OpenEXR maps are read through OpenEXR's plugin, which could not be loaded (%s). On Debian "
                 "or Ubuntu: apt-get install libopenexr-3-1-30 (to run) or libopenexr-dev (to build), then make; "
                 "or convert the map to PFM",
                 path, exr_shim.error);
        return NULL;
    }
    VptExrResult *r = vpt_malloc(sizeof *r);
    if (!r) return NULL;
    if (((ExrReadFn)exr_shim.fn[0])(path, VPT_IMAGE_MAX_DIM, VPT_IMAGE_MAX_PIXELS, r)) {
        vpt_fail("%s", r->error);
        free(r);
        return NULL;
    }
    VptImage *img = vpt_calloc(1, sizeof *img);
    if (!img) {
        free(r->rgb);
        free(r);
        return NULL;
    }
    img->width = r->width;
    img->height = r->height;
    img->rgb = r->rgb;
    free(r);
    return img;
}

VptEnvMap *vpt_env_map_load(const char *path, double scale)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot && slash && dot < slash) dot = NULL;
    if (!dot || (strcasecmp(dot, ".pfm") != 0 && strcasecmp(dot, ".exr") != 0)) {
        vpt_fail("'%s': unknown environment map extension '%s'; allowed: .pfm, .exr", path, dot ? dot : "");
        return NULL;
    }
    VptImage *img = strcasecmp(dot, ".exr") == 0 ? read_exr(path) : vpt_image_read_pfm_any(path);
    if (!img) return NULL;
    VptEnvMap *m = vpt_env_map_from_image(path, img, scale);
    vpt_image_destroy(img);
    return m;
}

void vpt_env_map_params(const VptEnvMap *m, VptParams *p)
{
    p->env_map_on = 1;
    p->em_width = m->width;
    p->em_height = m->height;
    p->em_uniform = m->uniform;
    p->em_radiance = (vpt_u64)(uintptr_t)m->radiance;
    p->em_row_cdf = (vpt_u64)(uintptr_t)m->row_cdf;
    p->em_col_cdf = (vpt_u64)(uintptr_t)m->col_cdf;
}
