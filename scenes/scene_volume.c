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
 * Albedo: a volume file's own albedo grid (VptVolume.albedo: .vdb and .nvdb
 * files with a Vec3f grid "albedo") replaces the transfer's albedo, voxel by
 * voxel (rounded to the scene's 8 bits); the transfer still gives the
 * densities.
 * Box: a Mitsuba file's own bbox; else, with `like`, the built-in scene's
 * box (the thesis puts its CT scans in [-0.5, 0.5]^3 whatever their shape);
 * else the grid's physical extent (dims * spacing) scaled so that its
 * largest side is 1, centred on the origin. */
#include "scenes/scene.h"

#include "base/error.h"

#include <math.h>
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
    VptScene *b = vpt_scene_builtin(like);
    if (!b) return -1;
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
    vpt_scene_destroy(b);
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
    }
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Host memory a resampled volume's scene holds at its peak: the resampled
 * float grid beside the loaded one, then the scene's float density and
 * RGBA8 albedo grids (12 bytes a voxel beside the grid); a file's albedo
 * grid (12 bytes a voxel) is resampled and held likewise. */
static double scene_bytes(const VptVolume *v, int down, int up, size_t *voxels)
{
    double n = 1;
    const int d[3] = {v->nx, v->ny, v->nz};
    for (int k = 0; k < 3; k++) n *= up > 1 && d[k] > 1 ? (double)d[k] * up : down > 1 ? (double)(d[k] / (d[k] >= down ? down : d[k])) : d[k];
    *voxels = (size_t)n;
    const double per_voxel = v->albedo ? 24.0 : 12.0, resampled = v->albedo ? 16.0 : 4.0;
    return n * per_voxel + (up > 1 ? n * resampled : 0.0);
}

/* The memory this process may still take: MemAvailable, lowered to the
 * cgroup's limit when one is set; $VPT_MEM_AVAILABLE (bytes) overrides both
 * (for tests). 0 when unknown. */
static double host_memory_available(void)
{
    const char *env = getenv("VPT_MEM_AVAILABLE");
    if (env && *env) return strtod(env, NULL);
    double avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "MemAvailable:", 13)) avail = strtod(line + 13, NULL) * 1024.0;
        fclose(f);
    }
    f = fopen("/sys/fs/cgroup/memory.max", "r");
    if (f) {
        char line[64];
        if (fgets(line, sizeof line, f) && strncmp(line, "max", 3)) {
            double lim = strtod(line, NULL);
            if (lim > 0 && (avail == 0 || lim < avail)) avail = lim;
        }
        fclose(f);
    }
    return avail;
}

/* Refuses, before allocating, a resampled scene that would not fit in host
 * memory, naming the size, what is available and a factor that would fit
 * (the caller names the file). */
static int host_memory_check(const VptVolume *v, int down, int up)
{
    size_t voxels, nv;
    const double need = scene_bytes(v, down, up, &voxels), avail = host_memory_available();
    if (avail <= 0 || need <= avail) return 0;
    char fit[128] = "";
    for (int u = up - 1; u >= 1 && !fit[0]; u--) {
        double b = scene_bytes(v, 1, u, &nv);
        if (b <= avail)
            snprintf(fit, sizeof fit, "; %s would need %.2f GiB", u > 1 ? "a smaller --upsample" : "no --upsample",
                     b / 1073741824.0);
        if (fit[0] && u > 1) snprintf(fit, sizeof fit, "; --upsample %d would need %.2f GiB", u, b / 1073741824.0);
    }
    for (int f = (down > 1 ? down : 1) + 1; f <= 64 && !fit[0]; f++) {
        double b = scene_bytes(v, f, 1, &nv);
        if (b <= avail) snprintf(fit, sizeof fit, "; --downsample %d would need %.2f GiB", f, b / 1073741824.0);
    }
    return vpt_fail("%dx%dx%d voxels resampled to %zu voxels need about %.2f GiB of host memory, but only %.2f GiB "
                    "are available%s",
                    v->nx, v->ny, v->nz, voxels, need / 1073741824.0, avail / 1073741824.0, fit);
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
    if (vpt_volume_load(path, &opt->load, &v)) goto fail;
    if (host_memory_check(&v, down, up) || vpt_volume_downsample(&v, down) || vpt_volume_upsample(&v, up)) {
        vpt_error_prefix("%s", path);
        goto fail_vol;
    }

    /* The resampling is part of the scene's name: rows, caches and the tuner's
     * resume key on it, and a row of the 2x-upsampled head must never be taken
     * for one of the head itself. */
    char resampled[24] = "";
    if (down > 1) snprintf(resampled, sizeof resampled, "@down%d", down);
    if (up > 1) snprintf(resampled, sizeof resampled, "@up%d", up);
    snprintf(s->name, sizeof s->name, "%.*s%s", (int)(sizeof s->name - 1 - strlen(resampled)), basename_of(path),
             resampled);
    snprintf(s->source, sizeof s->source, "loaded from %s%s", path, resampled);
    s->nx = v.nx;
    s->ny = v.ny;
    s->nz = v.nz;
    size_t n = (size_t)v.nx * v.ny * v.nz;
    s->density = vpt_malloc(n * sizeof *s->density);
    s->albedo = vpt_malloc(n * 4);
    if (!s->density || !s->albedo) goto fail_vol;

    float lo, hi;
    vpt_volume_range(&v, &lo, &hi);
    VptTransfer tf = opt->transfer;
    if (tf == VPT_TF_AUTO) {
        int floats = v.stored == VPT_SCALAR_F32 || v.stored == VPT_SCALAR_F64 || v.has_bbox;
        tf = floats && lo >= 0.0f && hi <= 1.0f ? VPT_TF_IDENTITY : VPT_TF_CT;
    }
    if (tf == VPT_TF_IDENTITY) {
        for (size_t i = 0; i < n; i++) {
            float d = v.data[i];
            if (!(d >= 0.0f && d <= 1.0f)) {
                vpt_fail("%s: value %g at voxel %zu (x %zu, y %zu, z %zu) is outside [0, 1], which the identity "
                         "transfer needs (use the linear or CT transfer)",
                         path, d, i, i % (size_t)v.nx, i / (size_t)v.nx % (size_t)v.ny, i / ((size_t)v.nx * v.ny));
                goto fail_vol;
            }
            s->density[i] = d;
            memset(s->albedo + 4 * i, 255, 4);
        }
    } else {
        double range = (double)hi - (double)lo;
        for (size_t i = 0; i < n; i++) {
            double x = range > 0.0 ? ((double)v.data[i] - lo) / range : 1.0;
            float t = x < 0.0 ? 0.0f : x > 1.0 ? 1.0f : (float)x;
            if (tf == VPT_TF_CT) {
                s->density[i] = vpt_ct_density(t);
                vpt_ct_albedo(s->density[i], s->albedo + 4 * i);
            } else {
                s->density[i] = t;
                memset(s->albedo + 4 * i, 255, 4);
            }
        }
    }

    if (v.albedo)
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) s->albedo[4 * i + (size_t)c] = (uint8_t)lrintf(255.0f * v.albedo[3 * i + (size_t)c]);

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
