/* A scene from a volume file (--volume): load, optionally downsample, map
 * values to densities and albedos through a transfer function, and place the
 * grid in a box with a built-in scene's or the CT scans' parameters.
 *
 * Transfers (VptTransfer):
 *   CT, LINEAR  normalize n = (v - min) / (max - min) over the whole volume.
 *               A constant volume (max == min) has no range to normalize
 *               over; it becomes a homogeneous medium, n = 1 everywhere.
 *   IDENTITY    density = v; every value must lie in [0, 1].
 *   AUTO        IDENTITY when all values lie in [0, 1] and the file stores
 *               floats or is a Mitsuba volume (whose 8-bit encoding means
 *               v / 255), else CT: the thesis treats scalar scans as CT.
 * Albedo: the transfer's table, classified from the filtered density where
 * the medium is sampled (post-classification: the scene's albedo_table, CT's
 * 100 entries, one white entry for LINEAR and IDENTITY), so no albedo is
 * stored per voxel. A volume file's own albedo grid (VptVolume.albedo: .vdb
 * and .nvdb files with a Vec3f grid "albedo") replaces it as the scene's
 * RGBA8 grid (rounded to 8 bits); the transfer still gives the densities.
 * Box: a Mitsuba file's own bbox; else, with `like`, the built-in scene's
 * box (the thesis puts its CT scans in [-0.5, 0.5]^3 whatever their shape);
 * else the grid's physical extent (dims * spacing) scaled so that its
 * largest side is 1, centred on the origin. */
#include "scenes/scene.h"

#include "base/error.h"
#include "base/memory.h"
#include "base/threads.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *transfer_name(VptTransfer t)
{
    switch (t) {
    case VPT_TF_AUTO: return "auto";
    case VPT_TF_CT: return "ct";
    case VPT_TF_LINEAR: return "linear";
    case VPT_TF_IDENTITY: return "identity";
    }
    return "?";
}

/* The CT scans' parameters (../shared/data/README.md). */
static void ct_defaults(VptScene *s)
{
    static const float pos[3] = {0, 0, 100}, up[3] = {0, 1, 0};
    for (int k = 0; k < 3; k++) {
        s->cam_pos[k] = pos[k];
        s->cam_target[k] = 0.0f;
        s->cam_up[k] = up[k];
        s->box_min[k] = -0.5f;
        s->box_max[k] = 0.5f;
        s->env[k] = 1.0f;
    }
    s->fov_deg = 0.7f;
    s->boundary = VPT_BOUNDARY_GGX;
    s->ggx_alpha = 0.1f;
    s->ior_inside = 1.05f;
    s->ior_outside = 1.01f;
    s->hg_g = 0.0f;
    s->density_scale = 100.0f;
    s->width = 400;
    s->height = 400;
    s->spp = 100;
}

static int copy_like(VptScene *s, const char *like)
{
    /* the parameters only: --like head1024 must not build a 1024^3 grid */
    VptScene params, *b = &params;
    if (vpt_scene_builtin_params(like, b)) return -1;
    memcpy(s->cam_pos, b->cam_pos, sizeof s->cam_pos);
    memcpy(s->cam_target, b->cam_target, sizeof s->cam_target);
    memcpy(s->cam_up, b->cam_up, sizeof s->cam_up);
    memcpy(s->box_min, b->box_min, sizeof s->box_min);
    memcpy(s->box_max, b->box_max, sizeof s->box_max);
    memcpy(s->env, b->env, sizeof s->env);
    s->fov_deg = b->fov_deg;
    s->boundary = b->boundary;
    s->ggx_alpha = b->ggx_alpha;
    s->ior_inside = b->ior_inside;
    s->ior_outside = b->ior_outside;
    s->hg_g = b->hg_g;
    s->density_scale = b->density_scale;
    s->width = b->width;
    s->height = b->height;
    s->spp = b->spp;
    return 0;
}

static void aspect_box(VptScene *s, const VptVolume *v)
{
    int n[3] = {v->nx, v->ny, v->nz};
    float e[3], mx = 0.0f;
    for (int k = 0; k < 3; k++) {
        e[k] = (float)n[k] * v->spacing[k];
        if (e[k] > mx) mx = e[k];
    }
    for (int k = 0; k < 3; k++) {
        s->box_max[k] = 0.5f * e[k] / mx;
        s->box_min[k] = -s->box_max[k];
        /* origin is voxel 0's centre */
        s->volume.world_min[k] = (double)v->origin[k] - 0.5 * v->spacing[k];
        s->volume.world_max[k] = s->volume.world_min[k] + (double)n[k] * v->spacing[k];
    }
    s->volume.has_world = 1;
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The grid a resampling factor makes of n voxels along one axis (as
 * vpt_volume_downsample and vpt_volume_upsample do). */
static double resampled(int n, int down, int up)
{
    if (up > 1) return n > 1 ? (double)n * up : n;
    if (down > 1) return n >= down ? (double)(n / down) : 1;
    return n;
}

/* Host memory the scene of a dims[] volume holds at its peak: the loaded
 * float grid (the data streams into it), beside it the resampled grid when
 * there is one, and at the end the scene's float density (the grid itself,
 * transformed in place; the transfer's albedo is a table). A file's albedo
 * grid (albedo non-zero: 3 floats a voxel) is loaded and resampled beside
 * the values, and held until the scene's RGBA8 albedo grid is made of it.
 * *voxels: the scene's. */
static double scene_bytes(const int dims[3], int down, int up, int albedo, size_t *voxels)
{
    double src = 1, dst = 1;
    for (int k = 0; k < 3; k++) {
        src *= dims[k];
        dst *= resampled(dims[k], down, up);
    }
    *voxels = (size_t)dst;
    const double grid = albedo ? 16.0 : 4.0; /* bytes a voxel of the loaded grids */
    const double loading = grid * src + (down > 1 || up > 1 ? grid * dst : 0.0);
    const double scene = (albedo ? 20.0 : 4.0) * dst;
    return loading > scene ? loading : scene;
}

/* Refuses, before allocating, a scene that would not fit in host memory,
 * naming the size, what is available and a factor that would fit (the
 * caller names the file). */
static int host_memory_check(const int dims[3], int down, int up, int albedo)
{
    size_t voxels, nv;
    const double need = scene_bytes(dims, down, up, albedo, &voxels), avail = vpt_memory_available();
    if (avail <= 0 || need <= avail) return 0;
    char fit[128] = "", a[32], b[32], c[32];
    for (int u = up - 1; u >= 1 && !fit[0]; u--) {
        double bytes = scene_bytes(dims, 1, u, albedo, &nv);
        if (bytes > avail) continue;
        if (u > 1) snprintf(fit, sizeof fit, "; --upsample %d would need %s", u, vpt_memory_text(bytes, c));
        else snprintf(fit, sizeof fit, "; no --upsample would need %s", vpt_memory_text(bytes, c));
    }
    for (int f = (down > 1 ? down : 1) + 1; f <= 64 && !fit[0]; f++) {
        double bytes = scene_bytes(dims, f, 1, albedo, &nv);
        if (bytes <= avail) snprintf(fit, sizeof fit, "; --downsample %d would need %s", f, vpt_memory_text(bytes, c));
    }
    const char *what = up > 1 || down > 1 ? "resampled to" : "as a scene of";
    return vpt_fail("%dx%dx%d voxels %s %zu voxels need about %s of host memory (4 bytes a voxel: the float "
                    "density%s), but only %s are available%s",
                    dims[0], dims[1], dims[2], what, voxels, vpt_memory_text(need, a),
                    albedo ? "; 16 more for the file's albedo grid and the scene's RGBA8 one made of it" : "",
                    vpt_memory_text(avail, b), fit);
}

/* The loader's admit hook: the host check, then the caller's hook with the
 * scene's grid. */
typedef struct {
    const VptVolumeSceneOptions *opt;
    int down, up;
    int asked;
} Admit;

static int admit_volume(void *ctx, const char *name, const int dims[3], VptScalarType stored, int albedo)
{
    (void)stored;
    Admit *a = ctx;
    a->asked = 1;
    if (host_memory_check(dims, a->down, a->up, albedo)) {
        vpt_error_prefix("%s", name);
        return -1;
    }
    if (!a->opt->admit) return 0;
    int grid[3];
    for (int k = 0; k < 3; k++) grid[k] = (int)resampled(dims[k], a->down, a->up);
    return a->opt->admit(a->opt->admit_ctx, name, grid);
}

/* ---- the transfer, in place and on every core ---- */

/* A scanner's integer values (up to 16 bits, not resampled) take few
 * distinct values: the transfer then maps each through a table made with
 * the very same arithmetic, a lookup instead of a division per voxel. */
#define LUT_MAX 65536

typedef struct {
    float *v;            /* values in, densities out */
    VptTransfer tf;
    double lo, range;
    pthread_mutex_t lock;
    float min, max;      /* the range pass */
    int integral;        /* ... and whether every value is an integer */
    int bad;             /* the identity check: a value outside [0, 1] */
    float *lut;          /* NULL, or density per value lo + j */
} Transfer;

static void range_part(void *arg, size_t lo, size_t hi)
{
    Transfer *t = arg;
    float a = t->v[lo], b = a;
    int integral = 1;
    for (size_t i = lo; i < hi; i++) {
        const float x = t->v[i];
        a = x < a ? x : a;
        b = x > b ? x : b;
        integral &= x == (float)(int32_t)x; /* values beyond int32 fail it too: fine */
    }
    pthread_mutex_lock(&t->lock);
    t->min = a < t->min ? a : t->min;
    t->max = b > t->max ? b : t->max;
    t->integral &= integral;
    pthread_mutex_unlock(&t->lock);
}

/* The transfer of one value x (not IDENTITY): its density. */
static float transfer_one(const Transfer *t, float x)
{
    double r = t->range > 0.0 ? ((double)x - t->lo) / t->range : 1.0;
    float n = r < 0.0 ? 0.0f : r > 1.0 ? 1.0f : (float)r;
    return t->tf == VPT_TF_CT ? vpt_ct_density(n) : n;
}

static void transfer_part(void *arg, size_t lo, size_t hi)
{
    Transfer *t = arg;
    int bad = 0;
    if (t->tf == VPT_TF_IDENTITY) {
        for (size_t i = lo; i < hi; i++) bad |= !(t->v[i] >= 0.0f && t->v[i] <= 1.0f);
    } else if (t->lut) {
        const int32_t base = (int32_t)t->min;
        for (size_t i = lo; i < hi; i++) t->v[i] = t->lut[(int32_t)t->v[i] - base];
    } else {
        for (size_t i = lo; i < hi; i++) t->v[i] = transfer_one(t, t->v[i]);
    }
    if (bad) {
        pthread_mutex_lock(&t->lock);
        t->bad = 1;
        pthread_mutex_unlock(&t->lock);
    }
}

/* A file's albedo grid (3 floats in [0, 1] a voxel) into the scene's RGBA8
 * albedo grid, rounded (alpha 255). */
typedef struct {
    const float *src;
    uint8_t *rgba;
} FileAlbedo;

static void file_albedo_part(void *arg, size_t lo, size_t hi)
{
    const FileAlbedo *a = arg;
    for (size_t i = lo; i < hi; i++) {
        for (size_t c = 0; c < 3; c++) a->rgba[4 * i + c] = (uint8_t)lrintf(255.0f * a->src[3 * i + c]);
        a->rgba[4 * i + 3] = 255;
    }
}

VptScene *vpt_scene_from_volume(const char *path, const VptVolumeSceneOptions *opt)
{
    static const VptVolumeSceneOptions defaults;
    if (!opt) opt = &defaults;
    const int down = opt->downsample > 0 ? opt->downsample : 1, up = opt->upsample > 0 ? opt->upsample : 1;
    if (opt->downsample < 0 || opt->upsample < 0) {
        vpt_fail("%s: resampling factors must be positive integers (downsample %d, upsample %d)", path,
                 opt->downsample, opt->upsample);
        return NULL;
    }
    if (down > 1 && up > 1) {
        vpt_fail("%s: --downsample %d and --upsample %d together: give one of them", path, down, up);
        return NULL;
    }
    if (opt->density_scale < 0.0f || !isfinite(opt->density_scale)) {
        vpt_fail("%s: density scale %g must be positive", path, opt->density_scale);
        return NULL;
    }
    if ((int)opt->transfer < (int)VPT_TF_AUTO || (int)opt->transfer > (int)VPT_TF_IDENTITY) {
        vpt_fail("%s: unknown transfer function %d", path, (int)opt->transfer);
        return NULL;
    }
    VptScene *s = vpt_calloc(1, sizeof *s);
    if (!s) return NULL;
    VptVolume v;
    /* parameters first: a bad --like fails before a long load */
    if (opt->like) {
        if (copy_like(s, opt->like)) {
            vpt_error_prefix("%s: --like", path);
            goto fail;
        }
    } else {
        ct_defaults(s);
    }
    Admit admit = {opt, down, up, 0};
    VptVolumeLoadOptions lo = opt->load;
    lo.admit = admit_volume;
    lo.admit_ctx = &admit;
    if (vpt_volume_load(path, &lo, &v)) goto fail;
    const int dims[3] = {v.nx, v.ny, v.nz};
    /* DICOM series are read whole by GDCM, before anyone could be asked */
    if (!admit.asked && admit_volume(&admit, path, dims, v.stored, v.albedo != NULL)) goto fail_vol;
    if (vpt_volume_downsample(&v, down) || vpt_volume_upsample(&v, up)) {
        vpt_error_prefix("%s", path);
        goto fail_vol;
    }

    /* The resampling is part of the scene's name: rows, caches and the tuner's
     * resume key on it, and a row of the 2x-upsampled head must never be taken
     * for one of the head itself. */
    char resampled_as[24] = "";
    if (down > 1) snprintf(resampled_as, sizeof resampled_as, "@down%d", down);
    if (up > 1) snprintf(resampled_as, sizeof resampled_as, "@up%d", up);
    snprintf(s->name, sizeof s->name, "%.*s%s", (int)(sizeof s->name - 1 - strlen(resampled_as)), basename_of(path),
             resampled_as);
    snprintf(s->source, sizeof s->source, "loaded from %s%s", path, resampled_as);
    VptSceneVolume *sv = &s->volume;
    snprintf(sv->format, sizeof sv->format, "%s", vpt_scalar_type_name(v.stored));
    snprintf(sv->source, sizeof sv->source, "%s", path);
    memcpy(sv->sha256, v.sha256, sizeof sv->sha256);
    memcpy(sv->data_sha256, v.data_sha256, sizeof sv->data_sha256);
    if (resampled_as[0]) snprintf(sv->resample, sizeof sv->resample, "%s", resampled_as + 1);
    s->nx = v.nx;
    s->ny = v.ny;
    s->nz = v.nz;
    const size_t n = (size_t)v.nx * v.ny * v.nz;

    Transfer t;
    memset(&t, 0, sizeof t);
    pthread_mutex_init(&t.lock, NULL);
    t.v = v.data;
    /* the loader found the range while converting (integer types of the
     * file, not resampled, are integral by construction): no pass here */
    if (v.has_range) {
        t.min = v.range_min;
        t.max = v.range_max;
        t.integral = v.stored != VPT_SCALAR_F32 && v.stored != VPT_SCALAR_F64 && !v.has_bbox;
    } else {
        t.min = t.max = v.data[0];
        t.integral = 1;
        vpt_parallel_for(n, 0, range_part, &t);
    }
    VptTransfer tf = opt->transfer;
    if (tf == VPT_TF_AUTO) {
        int floats = v.stored == VPT_SCALAR_F32 || v.stored == VPT_SCALAR_F64 || v.has_bbox;
        tf = floats && t.min >= 0.0f && t.max <= 1.0f ? VPT_TF_IDENTITY : VPT_TF_CT;
    }
    t.tf = tf;
    t.lo = t.min;
    t.range = (double)t.max - (double)t.min;
    if (tf != VPT_TF_IDENTITY && t.integral && t.range < LUT_MAX && n > LUT_MAX) {
        const size_t m = (size_t)t.range + 1;
        t.lut = vpt_malloc(m * sizeof *t.lut); /* NULL: no table, the slow way */
        for (size_t j = 0; t.lut && j < m; j++) t.lut[j] = transfer_one(&t, t.min + (float)j);
    }
    vpt_parallel_for(n, 0, transfer_part, &t);
    free(t.lut);
    pthread_mutex_destroy(&t.lock);
    if (t.bad) {
        for (size_t i = 0; i < n; i++) {
            const float d = v.data[i];
            if (d >= 0.0f && d <= 1.0f) continue;
            vpt_fail("%s: value %g at voxel %zu (x %zu, y %zu, z %zu) is outside [0, 1], which the identity "
                     "transfer needs (use the linear or CT transfer)",
                     path, d, i, i % (size_t)v.nx, i / (size_t)v.nx % (size_t)v.ny, i / ((size_t)v.nx * v.ny));
            break;
        }
        goto fail_vol;
    }
    /* the grid is the densities now: the scene takes it over */
    s->density = v.data;
    v.data = NULL;

    if (v.albedo) {
        /* the file's grid is the density's index space: pre-classified */
        s->albedo = vpt_malloc(n * 4);
        if (!s->albedo) goto fail_vol;
        FileAlbedo fa = {v.albedo, s->albedo};
        vpt_parallel_for(n, 0, file_albedo_part, &fa);
    } else {
        s->albedo_table = tf == VPT_TF_CT ? vpt_ct_albedo_table() : vpt_white_albedo_table();
        s->albedo_entries = tf == VPT_TF_CT ? VPT_CT_ALBEDO_ENTRIES : 1;
    }

    if (!opt->like && !v.has_bbox) aspect_box(s, &v);
    if (v.has_bbox) {
        memcpy(s->box_min, v.bbox_min, sizeof s->box_min);
        memcpy(s->box_max, v.bbox_max, sizeof s->box_max);
    }
    if (opt->density_scale > 0.0f) s->density_scale = opt->density_scale;
    vpt_volume_free(&v);
    if (vpt_scene_finalize(s)) {
        vpt_error_prefix("%s (%s transfer)", path, transfer_name(tf));
        goto fail;
    }
    return s;

fail_vol:
    vpt_volume_free(&v);
fail:
    vpt_scene_destroy(s);
    return NULL;
}
