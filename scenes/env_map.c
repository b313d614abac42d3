/* Environment maps: files, checks and sampling tables (scenes/env_map.h). */
#include "scenes/env_map.h"

#include "base/error.h"
#include "base/file.h"
#include "base/isolate.h"
#include "base/plugin.h"
#include "scenes/env_map_exr_shim.h"

#include <math.h>
#include <pthread.h>
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

/* The OpenEXR plugin (scenes/env_map_exr_shim.h), loaded in the calling
 * process on the first .exr map ($VPT_OPENEXR_SHIM when set, else beside the
 * program, else ../lib/vptune/: base/plugin.h) and called only in the fault
 * boundary's worker, which inherits it (OpenEXR is not ours: a crash or a
 * runaway allocation inside it must not take the program down;
 * docs/decisions/parser-fault-boundary.md). */
typedef int (*ExrReadFn)(const char *, const unsigned char *, size_t, int, size_t, VptExrResult *);
static VptPlugin exr_shim = {.file = "libvptune-openexr.so",
                             .env = "VPT_OPENEXR_SHIM",
                             .abi_symbol = "vpt_exr_shim_abi",
                             .abi = VPT_EXR_SHIM_ABI,
                             .symbols = {"vpt_exr_read_memory", NULL}};

static int need_exr_shim(const char *name)
{
    if (vpt_plugin_load(&exr_shim) == 0) return 0;
    return vpt_fail("'%s': OpenEXR maps are read through OpenEXR's plugin, which could not be loaded (%s). On Debian "
                    "or Ubuntu: apt-get install libopenexr-3-1-30 (to run) or libopenexr-dev (to build), then make; "
                    "or convert the map to PFM",
                    name, exr_shim.error);
}

const char *vpt_env_map_exr_shim_path(void) { return vpt_plugin_load(&exr_shim) == 0 ? exr_shim.path : NULL; }

/* What crosses the boundary ahead of the texels (3 floats each, top row
 * first). */
typedef struct {
    int32_t width, height;
    int32_t lossy; /* VptExrResult.lossy */
} ExrHead;

/* The worker's side. The request: the name's length (8 bytes), the name, the
 * file's bytes. */
static int serve_exr(const void *req, size_t n, VptIsolateReply *reply, char *err, size_t err_size)
{
    static VptExrResult r; /* sent after this returns; the worker is single-threaded */
    static ExrHead head;
    const unsigned char *p = req;
    uint64_t name_len;
    if (n < 8) return snprintf(err, err_size, "an OpenEXR request of %zu bytes", n), -1;
    memcpy(&name_len, p, 8);
    if (name_len > n - 8 || name_len > 4096) return snprintf(err, err_size, "an OpenEXR request's name is cut"), -1;
    char name[4097];
    memcpy(name, p + 8, name_len);
    name[name_len] = '\0';
    if (((ExrReadFn)exr_shim.fn[0])(name, p + 8 + name_len, n - 8 - name_len, VPT_IMAGE_MAX_DIM, VPT_IMAGE_MAX_PIXELS,
                                    &r)) {
        snprintf(err, err_size, "%s", r.error);
        return -1;
    }
    head.width = r.width;
    head.height = r.height;
    head.lossy = r.lossy;
    reply->head = &head;
    reply->head_size = sizeof head;
    reply->body = r.rgb;
    reply->owned = r.rgb;
    reply->body_size = r.width > 0 && r.height > 0 ? 3 * (size_t)r.width * (size_t)r.height * sizeof(float) : 0;
    return 0;
}

/* One worker for every .exr parse of the process: a fork per map would
 * cost more than the parse of a small one (the fuzz target parses
 * thousands); it dies with the process. */
static pthread_mutex_t exr_lock = PTHREAD_MUTEX_INITIALIZER;
static VptIsolateWorker *exr_worker;

VptEnvMap *vpt_env_map_parse_exr(const char *name, const unsigned char *buf, size_t size, double scale)
{
    if (need_exr_shim(name)) return NULL;
    VptIsolateLimits lim;
    if (vpt_isolate_limits(size, &lim)) return NULL;
    const size_t name_len = strnlen(name, 4096);
    if (size > SIZE_MAX - 8 - name_len) {
        vpt_fail("'%s': an OpenEXR file of %zu bytes", name, size);
        return NULL;
    }
    unsigned char *req = vpt_malloc(8 + name_len + size);
    if (!req) return NULL;
    const uint64_t len = name_len;
    memcpy(req, &len, 8);
    memcpy(req + 8, name, name_len);
    if (size) memcpy(req + 8 + name_len, buf, size);
    ExrHead h;
    unsigned char *body;
    size_t bytes;
    pthread_mutex_lock(&exr_lock);
    const int rc = vpt_isolate_worker_call(&exr_worker, name, "OpenEXR", &lim, serve_exr, req, 8 + name_len + size, &h,
                                           sizeof h, 3 * VPT_IMAGE_MAX_PIXELS * sizeof(float), &body, &bytes);
    pthread_mutex_unlock(&exr_lock);
    free(req);
    if (rc) return NULL;
    /* the worker's reply is checked as a file is: its sizes, then every texel */
    if (h.width < 1 || h.width > VPT_IMAGE_MAX_DIM || h.height < 1 || h.height > VPT_IMAGE_MAX_DIM ||
        (size_t)h.width * (size_t)h.height > VPT_IMAGE_MAX_PIXELS ||
        bytes != 3 * (size_t)h.width * (size_t)h.height * sizeof(float)) {
        vpt_fail("'%s': OpenEXR's plugin sent a %dx%d map of %zu bytes (each side 1..%d, at most %zu texels of 12 "
                 "bytes)",
                 name, (int)h.width, (int)h.height, bytes, VPT_IMAGE_MAX_DIM, VPT_IMAGE_MAX_PIXELS);
        free(body);
        return NULL;
    }
    /* A lossy codec decodes a texel of 0 a little below it (B44: about
     * -7.6e-6): in such a file a finite negative value is the codec's error,
     * read as 0; in a lossless one it is the file's, and refused below. */
    if (h.lossy)
        for (size_t k = 0; k < 3 * (size_t)h.width * (size_t)h.height; k++) {
            float v;
            memcpy(&v, body + k * sizeof v, sizeof v);
            if (v < 0.0f && isfinite(v)) memset(body + k * sizeof v, 0, sizeof v);
        }
    const VptImage img = {.width = h.width, .height = h.height, .rgb = (float *)body};
    VptEnvMap *m = vpt_env_map_from_image(name, &img, scale);
    free(body);
    return m;
}

/* A file's bytes, then the in-memory parse. */
static VptEnvMap *load_exr(const char *path, double scale)
{
    char *data;
    size_t size;
    if (vpt_read_file(path, VPT_ENV_MAP_EXR_MAX_FILE, &data, &size)) return NULL;
    VptEnvMap *m = vpt_env_map_parse_exr(path, (const unsigned char *)data, size, scale);
    free(data);
    return m;
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
    if (strcasecmp(dot, ".exr") == 0) return load_exr(path, scale);
    VptImage *img = vpt_image_read_pfm_any(path);
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
