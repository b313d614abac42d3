/* Scene lifecycle, validation, the parameter block, and the thesis' CT
 * transfer function, shared by built-in and loaded scenes. */
#include "scenes/scene.h"

#include "base/error.h"
#include "base/parse.h"
#include "base/threads.h"
#include "scenes/env_map.h"

#include <math.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

uint64_t vpt_scene_volume_bytes(const VptScene *s)
{
    VptScalarType t;
    size_t esz = s->volume.format[0] && vpt_scalar_type_parse(s->volume.format, &t) == 0 ? vpt_scalar_type_size(t) : 4;
    return (uint64_t)s->nx * (uint64_t)s->ny * (uint64_t)s->nz * esz;
}

void vpt_scene_destroy(VptScene *s)
{
    if (!s) return;
    free(s->density);
    free(s->albedo);
    vpt_env_map_destroy(s->env_map);
    free(s);
}

/* Appends "@<tag><value>" to the scene's name, cutting the name's end where
 * both would not fit (as scene_volume.c cuts a long file name for its
 * resampling suffix). */
static void append_name(VptScene *s, const char *tag, const char *value)
{
    char add[80];
    snprintf(add, sizeof add, "@%s%s", tag, value);
    const size_t need = strlen(add);
    size_t len = strlen(s->name);
    if (len + need >= sizeof s->name) len = sizeof s->name - 1 - need;
    memcpy(s->name + len, add, need + 1);
}

int vpt_scene_set_medium(VptScene *s, const VptMediumOverride *o)
{
    if (o->density_scale != 0 && !(o->density_scale > 0 && o->density_scale <= 1e9))
        return vpt_fail("density scale %g: give a positive number of at most 1e9 (sigma_t per unit density)",
                        o->density_scale);
    for (int k = 0; o->has_albedo && k < 3; k++)
        if (!(o->albedo[k] >= 0 && o->albedo[k] <= 1))
            return vpt_fail("albedo %g: each channel must lie in [0, 1]", o->albedo[k]);
    if (o->has_g && !(o->g > -1 && o->g < 1))
        return vpt_fail("g %g: the Henyey-Greenstein asymmetry must lie in (-1, 1)", o->g);
    char num[96];
    if (o->density_scale != 0) {
        s->density_scale = (float)o->density_scale;
        vpt_format_double(o->density_scale, num, sizeof num);
        append_name(s, "scale", num);
    }
    if (o->has_albedo) {
        for (int k = 0; k < 3; k++) s->albedo_constant[0][k] = (uint8_t)lrint(o->albedo[k] * 255.0);
        s->albedo_constant[0][3] = 255;
        free(s->albedo);
        s->albedo = NULL;
        s->albedo_table = (const uint8_t(*)[4])s->albedo_constant;
        s->albedo_entries = 1;
        vpt_format_vec3_short(o->albedo, num, sizeof num);
        append_name(s, "albedo", num);
    }
    if (o->has_g) {
        s->hg_g = (float)o->g;
        vpt_format_double(o->g, num, sizeof num);
        append_name(s, "g", num);
    }
    return vpt_scene_finalize(s);
}

int vpt_sun_direction(const double d[3], const char *what, float out[3])
{
    double m = 0.0;
    for (int k = 0; k < 3; k++) {
        if (!isfinite(d[k])) return vpt_fail("%s (%g, %g, %g) is not finite", what, d[0], d[1], d[2]);
        m = fmax(m, fabs(d[k]));
    }
    if (m == 0.0)
        return vpt_fail("%s (%g, %g, %g) has zero length: give a direction toward the sun", what, d[0], d[1], d[2]);
    /* scaled by the largest component first: no overflow or underflow */
    double u[3], len2 = 0.0;
    for (int k = 0; k < 3; k++) {
        u[k] = d[k] / m;
        len2 += u[k] * u[k];
    }
    const double len = sqrt(len2);
    const int keep = fabs(m * len - 1.0) <= 1e-6;
    for (int k = 0; k < 3; k++) {
        out[k] = (float)(keep ? d[k] : u[k] / len);
        if (out[k] == 0.0f) out[k] = 0.0f; /* -0 is 0: one direction, one digest */
    }
    return 0;
}

/* v as vpt_format_double writes each, "x,y,z", all three always (a
 * direction is never one value). */
static void format_vec3(const double v[3], char *buf, size_t size)
{
    char a[32], b[32], c[32];
    vpt_format_double(v[0], a, sizeof a);
    vpt_format_double(v[1], b, sizeof b);
    vpt_format_double(v[2], c, sizeof c);
    snprintf(buf, size, "%s,%s,%s", a, b, c);
}

/* 0 when each of v[0..3) is finite and in [0, 3e38] (a float); -1 naming
 * `what` otherwise. */
static int check_radiometric(const double v[3], const char *what)
{
    for (int k = 0; k < 3; k++)
        if (!(v[k] >= 0.0 && v[k] <= 3e38))
            return vpt_fail("%s %g: each channel must be a finite number >= 0", what, v[k]);
    return 0;
}

int vpt_scene_set_light(VptScene *s, const VptLightOverride *given)
{
    VptLightOverride o = *given;
    /* -0 is 0: a name's values parse back to the scene's bytes */
    for (int k = 0; k < 3; k++) {
        if (o.sun_dir[k] == 0) o.sun_dir[k] = 0;
        if (o.sun_irradiance[k] == 0) o.sun_irradiance[k] = 0;
        if (o.env[k] == 0) o.env[k] = 0;
    }
    if (o.sun_radius_deg == 0) o.sun_radius_deg = 0;
    float dir[3] = {0, 0, 0};
    if (o.has_sun) {
        if (vpt_sun_direction(o.sun_dir, "sun direction", dir) || check_radiometric(o.sun_irradiance, "sun irradiance"))
            return -1;
        if (!(o.sun_radius_deg >= 0 && o.sun_radius_deg <= 45))
            return vpt_fail("sun radius %g degrees: the angular radius must lie in [0, 45] (0: a delta light)",
                            o.sun_radius_deg);
    }
    if (o.has_env && check_radiometric(o.env, "environment radiance")) return -1;
    if (o.env_map_scale == 0) o.env_map_scale = 1;
    VptEnvMap *map = NULL;
    if (o.env_map && !(map = vpt_env_map_load(o.env_map, o.env_map_scale))) return -1;
    /* the whole suffix first: a name is extended completely or not at all */
    char suffix[512] = "", num[3 * 32];
    size_t len = 0;
    if (o.has_sun) {
        char irr[3 * 32];
        format_vec3(o.sun_dir, num, sizeof num);
        vpt_format_vec3_short(o.sun_irradiance, irr, sizeof irr);
        len += (size_t)snprintf(suffix + len, sizeof suffix - len, "@sun%s@irr%s", num, irr);
        if (o.sun_radius_deg != 0) {
            vpt_format_double(o.sun_radius_deg, num, sizeof num);
            len += (size_t)snprintf(suffix + len, sizeof suffix - len, "@radius%s", num);
        }
    }
    if (o.has_env) {
        vpt_format_vec3_short(o.env, num, sizeof num);
        len += (size_t)snprintf(suffix + len, sizeof suffix - len, "@env%s", num);
    }
    if (map) {
        len += (size_t)snprintf(suffix + len, sizeof suffix - len, "@envmap%s", map->stem);
        if (o.env_map_scale != 1) {
            vpt_format_double(o.env_map_scale, num, sizeof num);
            len += (size_t)snprintf(suffix + len, sizeof suffix - len, "@emscale%s", num);
        }
    }
    const size_t base = strlen(s->name);
    if (base + len >= sizeof s->name) {
        vpt_env_map_destroy(map);
        return vpt_fail("scene '%s': with its light the name '%s%s' would be %zu bytes, more than the %zu a scene "
                        "name holds (a name is never cut: give a shorter file name or shorter values)",
                        s->name, s->name, suffix, base + len, sizeof s->name - 1);
    }
    memcpy(s->name + base, suffix, len + 1);
    if (map) {
        vpt_env_map_destroy(s->env_map);
        s->env_map = map;
    }
    if (o.has_sun) {
        for (int k = 0; k < 3; k++) {
            s->sun_dir[k] = dir[k];
            s->sun_irradiance[k] = (float)o.sun_irradiance[k];
        }
        s->sun_radius_deg = (float)o.sun_radius_deg;
    }
    if (o.has_env)
        for (int k = 0; k < 3; k++) s->env[k] = (float)o.env[k];
    return vpt_scene_finalize(s);
}

void vpt_scene_cloud_light(const VptScene *s, VptLightOverride *o)
{
    /* the camera's frame, as vpt_params_init builds it, in doubles */
    double pos[3], fwd[3], up[3], right[3], upv[3], len = 0.0;
    for (int k = 0; k < 3; k++) {
        pos[k] = s->cam_pos[k];
        fwd[k] = (double)s->cam_target[k] - pos[k];
        up[k] = s->cam_up[k];
        len += fwd[k] * fwd[k];
    }
    for (int k = 0; k < 3; k++) fwd[k] /= sqrt(len);
    right[0] = fwd[1] * up[2] - fwd[2] * up[1];
    right[1] = fwd[2] * up[0] - fwd[0] * up[2];
    right[2] = fwd[0] * up[1] - fwd[1] * up[0];
    len = sqrt(right[0] * right[0] + right[1] * right[1] + right[2] * right[2]);
    for (int k = 0; k < 3; k++) right[k] = len > 0.0 ? right[k] / len : 0.0;
    upv[0] = right[1] * fwd[2] - right[2] * fwd[1];
    upv[1] = right[2] * fwd[0] - right[0] * fwd[2];
    upv[2] = right[0] * fwd[1] - right[1] * fwd[0];
    memset(o, 0, sizeof *o);
    o->has_sun = 1;
    for (int k = 0; k < 3; k++) {
        /* (0.3, 1, 0.2) in (right, up, back toward the camera) */
        o->sun_dir[k] = 0.3 * right[k] + 1.0 * upv[k] - 0.2 * fwd[k];
        o->sun_irradiance[k] = 3.0;
    }
    o->sun_radius_deg = 0.0;
    o->has_env = 1;
    o->env[0] = 0.05;
    o->env[1] = 0.08;
    o->env[2] = 0.15;
}

int vpt_scene_light_cloud(VptScene *s)
{
    VptLightOverride o;
    vpt_scene_cloud_light(s, &o);
    s->boundary = VPT_BOUNDARY_NULL;
    return vpt_scene_set_light(s, &o);
}

/* The density pass of vpt_scene_finalize, on every core. */
typedef struct {
    const float *d;
    pthread_mutex_t lock;
    float max;
    uint64_t sum; /* of the densities in units of 2^-24: exact, so the mean does not depend on the threads */
    int bad;
} Check;

static void check_part(void *arg, size_t lo, size_t hi)
{
    Check *c = arg;
    float mx = 0.0f;
    uint64_t sum = 0;
    int bad = 0;
    for (size_t i = lo; i < hi; i++) {
        const float d = c->d[i];
        bad |= !(d >= 0.0f && d <= 1.0f);
        mx = d > mx ? d : mx;
        sum += d >= 0.0f && d <= 1.0f ? (uint64_t)(d * 16777216.0f) : 0u;
    }
    pthread_mutex_lock(&c->lock);
    c->max = mx > c->max ? mx : c->max;
    c->sum += sum;
    c->bad |= bad;
    pthread_mutex_unlock(&c->lock);
}

int vpt_scene_finalize(VptScene *s)
{
    if (s->nx <= 0 || s->ny <= 0 || s->nz <= 0)
        return vpt_fail("scene '%s': grid %dx%dx%d has a non-positive dimension", s->name, s->nx, s->ny, s->nz);
    if (!s->density) return vpt_fail("scene '%s': missing density grid", s->name);
    if (!s->albedo == !s->albedo_table)
        return vpt_fail("scene '%s': %s", s->name,
                        s->albedo ? "both an albedo grid and an albedo table: give one"
                                  : "missing albedo (neither a grid nor a transfer function's table)");
    if (s->albedo_table ? s->albedo_entries < 1 : s->albedo_entries != 0)
        return vpt_fail("scene '%s': albedo table of %d entries", s->name, s->albedo_entries);
    size_t n = (size_t)s->nx * s->ny * s->nz;
    Check c = {s->density, PTHREAD_MUTEX_INITIALIZER, 0.0f, 0, 0};
    vpt_parallel_for(n, 0, check_part, &c);
    if (c.bad)
        for (size_t i = 0; i < n; i++) {
            float d = s->density[i];
            if (!(d >= 0.0f && d <= 1.0f))
                return vpt_fail("scene '%s': density %g at voxel %zu is outside [0, 1]", s->name, d, i);
        }
    s->density_max = c.max;
    s->density_mean = (float)((double)c.sum / 16777216.0 / (double)n);
    if (!(s->density_scale > 0.0f) || !isfinite(s->density_scale))
        return vpt_fail("scene '%s': density scale %g must be positive", s->name, s->density_scale);
    for (int k = 0; k < 3; k++)
        if (!(s->box_max[k] > s->box_min[k]))
            return vpt_fail("scene '%s': box is empty along axis %d", s->name, k);
    if (!(s->fov_deg > 0.0f && s->fov_deg < 179.0f))
        return vpt_fail("scene '%s': fov %g degrees is outside (0, 179)", s->name, s->fov_deg);
    if (!(s->hg_g > -1.0f && s->hg_g < 1.0f))
        return vpt_fail("scene '%s': HG g %g is outside (-1, 1)", s->name, s->hg_g);
    if (s->boundary < VPT_BOUNDARY_NULL || s->boundary > VPT_BOUNDARY_GGX)
        return vpt_fail("scene '%s': unknown boundary %d", s->name, s->boundary);
    if (s->boundary != VPT_BOUNDARY_NULL && !(s->ior_inside > 0.0f && s->ior_outside > 0.0f))
        return vpt_fail("scene '%s': indices of refraction must be positive", s->name);
    if (s->boundary == VPT_BOUNDARY_GGX && !(s->ggx_alpha > 0.0f && s->ggx_alpha <= 1.0f))
        return vpt_fail("scene '%s': GGX alpha %g is outside (0, 1]", s->name, s->ggx_alpha);
    for (int k = 0; k < 3; k++) {
        if (!(s->env[k] >= 0.0f) || !isfinite(s->env[k]))
            return vpt_fail("scene '%s': environment radiance %g (channel %d) must be finite and >= 0", s->name,
                            s->env[k], k);
        if (!(s->sun_irradiance[k] >= 0.0f) || !isfinite(s->sun_irradiance[k]))
            return vpt_fail("scene '%s': sun irradiance %g (channel %d) must be finite and >= 0", s->name,
                            s->sun_irradiance[k], k);
    }
    if (!(s->sun_radius_deg >= 0.0f && s->sun_radius_deg <= 45.0f))
        return vpt_fail("scene '%s': sun radius %g degrees is outside [0, 45]", s->name, s->sun_radius_deg);
    if (vpt_scene_has_sun(s)) {
        const float *d = s->sun_dir;
        const double len2 = (double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2];
        if (!isfinite(len2) || !(fabs(len2 - 1.0) <= 2e-5))
            return vpt_fail("scene '%s': sun direction (%g, %g, %g) is not a unit vector", s->name, d[0], d[1], d[2]);
        /* A delta light is reached only by next-event estimation, whose
         * shadow rays cannot cross a refracting boundary; a sun with a disc
         * is also reached by paths that escape toward it. */
        if (s->sun_radius_deg == 0.0f && s->boundary != VPT_BOUNDARY_NULL)
            return vpt_fail("scene '%s': a sun of angular radius 0 (a delta light) with a dielectric boundary: "
                            "next-event estimation, the only way to reach a delta light, cannot cross a dielectric "
                            "boundary; give the sun a radius > 0 (--sun-radius) or use a scene with the null "
                            "boundary",
                            s->name);
    }
    float dv[3];
    for (int k = 0; k < 3; k++) dv[k] = s->cam_target[k] - s->cam_pos[k];
    if (dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2] <= 0.0f)
        return vpt_fail("scene '%s': camera position equals its target", s->name);
    return 0;
}

/* Digest input, fed in little-endian order whatever the host's. */
typedef struct {
    EVP_MD_CTX *md;
    unsigned char buf[4096];
    size_t n;
} Digest;

static void dg_bytes(Digest *d, const void *p, size_t len)
{
    const unsigned char *b = p;
    while (len) {
        size_t k = sizeof d->buf - d->n < len ? sizeof d->buf - d->n : len;
        memcpy(d->buf + d->n, b, k);
        d->n += k;
        b += k;
        len -= k;
        if (d->n == sizeof d->buf) {
            EVP_DigestUpdate(d->md, d->buf, d->n);
            d->n = 0;
        }
    }
}

static void dg_u32(Digest *d, uint32_t u)
{
    unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16), (unsigned char)(u >> 24)};
    dg_bytes(d, b, 4);
}

static void dg_f32(Digest *d, float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    dg_u32(d, u);
}

static void dg_f32s(Digest *d, const float *f, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* the floats' bytes are already in the order the digest wants: hash
     * them in place (a grid of a billion voxels is hashed at SHA-256's own
     * speed, not one call per value) */
    if (d->n) {
        EVP_DigestUpdate(d->md, d->buf, d->n);
        d->n = 0;
    }
    EVP_DigestUpdate(d->md, f, n * sizeof *f);
#else
    for (size_t i = 0; i < n; i++) dg_f32(d, f[i]);
#endif
}

int vpt_scene_digest(const VptScene *s, char hex[65])
{
    Digest d;
    d.n = 0;
    d.md = EVP_MD_CTX_new();
    if (!d.md || EVP_DigestInit_ex(d.md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(d.md);
        return vpt_fail("scene '%s': SHA-256 unavailable (OpenSSL)", s->name);
    }
    size_t n = (size_t)s->nx * s->ny * s->nz;
    dg_u32(&d, (uint32_t)s->nx);
    dg_u32(&d, (uint32_t)s->ny);
    dg_u32(&d, (uint32_t)s->nz);
    dg_f32s(&d, s->density, n);
    if (d.n) {
        EVP_DigestUpdate(d.md, d.buf, d.n);
        d.n = 0;
    }
    if (s->albedo) {
        EVP_DigestUpdate(d.md, s->albedo, 4 * n); /* bytes: no byte order */
    } else if (s->albedo_entries == 1) {
        /* a constant albedo filters to itself: the medium of a grid of that
         * colour, hashed as that grid */
        unsigned char run[4096];
        for (size_t i = 0; i < sizeof run; i++) run[i] = s->albedo_table[0][i % 4];
        for (size_t left = 4 * n; left;) {
            const size_t k = left < sizeof run ? left : sizeof run;
            EVP_DigestUpdate(d.md, run, k);
            left -= k;
        }
    } else {
        static const char tag[] = "post-classified albedo table";
        dg_bytes(&d, tag, sizeof tag);
        dg_u32(&d, (uint32_t)s->albedo_entries);
        dg_bytes(&d, s->albedo_table, 4 * (size_t)s->albedo_entries);
    }
    dg_f32(&d, s->density_scale);
    dg_f32s(&d, s->box_min, 3);
    dg_f32s(&d, s->box_max, 3);
    dg_f32s(&d, s->cam_pos, 3);
    dg_f32s(&d, s->cam_target, 3);
    dg_f32s(&d, s->cam_up, 3);
    dg_f32(&d, s->fov_deg);
    dg_u32(&d, (uint32_t)s->boundary);
    dg_f32(&d, s->ior_inside);
    dg_f32(&d, s->ior_outside);
    dg_f32(&d, s->ggx_alpha);
    dg_f32(&d, s->hg_g);
    dg_f32s(&d, s->env, 3);
    if (vpt_scene_has_sun(s)) {
        /* only then: the digests of scenes without a sun are those they had
         * before scenes had one (caches and results key on them) */
        static const char tag[] = "sun";
        dg_bytes(&d, tag, sizeof tag);
        dg_f32s(&d, s->sun_dir, 3);
        dg_f32s(&d, s->sun_irradiance, 3);
        dg_f32(&d, s->sun_radius_deg);
    }
    if (s->env_map) {
        /* only then, as the sun */
        static const char tag[] = "envmap";
        dg_bytes(&d, tag, sizeof tag);
        dg_u32(&d, (uint32_t)s->env_map->width);
        dg_u32(&d, (uint32_t)s->env_map->height);
        dg_f32s(&d, s->env_map->radiance, 3 * (size_t)s->env_map->width * (size_t)s->env_map->height);
    }
    if (d.n) EVP_DigestUpdate(d.md, d.buf, d.n);
    unsigned char sum[32];
    unsigned int len = 0;
    int ok = EVP_DigestFinal_ex(d.md, sum, &len) == 1 && len == 32;
    EVP_MD_CTX_free(d.md);
    if (!ok) return vpt_fail("scene '%s': SHA-256 failed (OpenSSL)", s->name);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", sum[i]);
    return 0;
}

static vpt_vec3 v3a(const float a[3]) { return vpt_v3(a[0], a[1], a[2]); }

void vpt_params_init(VptParams *p, const VptScene *s, const VptRenderSettings *r)
{
    memset(p, 0, sizeof *p);
    p->box_min = v3a(s->box_min);
    p->box_max = v3a(s->box_max);
    p->inv_extent = vpt_v3(1.0f / (s->box_max[0] - s->box_min[0]), 1.0f / (s->box_max[1] - s->box_min[1]),
                           1.0f / (s->box_max[2] - s->box_min[2]));
    p->density_max = s->density_max;
    p->density_scale = s->density_scale;
    /* An empty medium has no collisions: an infinite mean free path. The
     * product is the one the kernels formed per step before it moved here. */
    p->free_path_unit = (s->density_max > 0.0f ? 1.0f / (s->density_scale * s->density_max) : 3.0e38f) * VPT_LN2;
    /* the global majorant (mg_cells zero); physics/majorant_grid.h sets a grid */
    p->tau_per_density = s->density_scale / VPT_LN2;
    p->hg_g = s->hg_g;
    p->boundary = s->boundary;
    p->ior_inside = s->ior_inside;
    p->ior_outside = s->ior_outside;
    p->ggx_alpha = s->ggx_alpha;
    p->env = v3a(s->env);
    if (vpt_scene_has_sun(s)) {
        p->sun_on = 1;
        p->sun_dir = vpt_normalize(v3a(s->sun_dir));
        const vpt_vec3 E = v3a(s->sun_irradiance);
        const double r = (double)s->sun_radius_deg * VPT_PI / 180.0;
        p->sun_cos_max = r > 0.0 ? (float)cos(r) : 1.0f;
        if (r > 0.0) {
            /* a disk of uniform radiance Ls gives E = Ls pi sin^2 r facing it;
             * a cone sample's weight is Ls x its solid angle 2 pi (1 - cos r) */
            const double sn = sin(r);
            p->sun_radiance = vpt_scale(E, (float)(1.0 / (VPT_PI * sn * sn)));
            p->sun_weight = vpt_scale(E, (float)(2.0 * (1.0 - cos(r)) / (sn * sn)));
        } else {
            p->sun_weight = E;
        }
    }
    if (s->env_map) vpt_env_map_params(s->env_map, p);
    p->transmittance = VPT_TR_RATIO;
    p->control_density = s->density_mean;
    p->width = (vpt_u32)(r->width > 0 ? r->width : s->width);
    p->height = (vpt_u32)(r->height > 0 ? r->height : s->height);
    p->spp = (vpt_u32)(r->spp > 0 ? r->spp : s->spp);
    p->seed = r->seed;
    p->npaths = (vpt_u64)p->width * p->height * p->spp;
    p->max_depth = r->max_depth;
    p->rr_depth = r->rr_depth;
    p->albedo_entries = s->albedo_table ? s->albedo_entries : 0;
    p->albedo_index = (float)p->albedo_entries; /* per unit of f32 density; formats fold their unit in */

    vpt_vec3 pos = v3a(s->cam_pos), fwd = vpt_normalize(vpt_sub(v3a(s->cam_target), pos));
    vpt_vec3 right = vpt_normalize(vpt_cross(fwd, v3a(s->cam_up)));
    vpt_vec3 up = vpt_cross(right, fwd);
    float tx = tanf(0.5f * s->fov_deg * VPT_PI / 180.0f);
    p->cam_pos = pos;
    p->cam_fwd = fwd;
    p->cam_right = vpt_scale(right, tx);
    p->cam_up = vpt_scale(up, tx * (float)p->height / (float)p->width);
}

/* The thesis' transfer function: a 100-entry table from gray (low density)
 * through red to blue (high density), indexed by the density. Entries
 * 0..49 blend gray -> red, 50..99 red -> blue. */
static uint8_t ct_table[VPT_CT_ALBEDO_ENTRIES][4];
static pthread_once_t ct_once = PTHREAD_ONCE_INIT;

static void make_ct_table(void)
{
    static const float gray[3] = {0.80f, 0.80f, 0.80f}, red[3] = {0.90f, 0.15f, 0.10f},
                       blue[3] = {0.10f, 0.20f, 0.90f};
    for (int i = 0; i < VPT_CT_ALBEDO_ENTRIES; i++) {
        const float *a = i < 50 ? gray : red, *b = i < 50 ? red : blue;
        float t = (float)(i < 50 ? i : i - 50) / 49.0f;
        for (int k = 0; k < 3; k++) ct_table[i][k] = (uint8_t)lrintf(255.0f * (a[k] + (b[k] - a[k]) * t));
        ct_table[i][3] = 255;
    }
}

const uint8_t (*vpt_ct_albedo_table(void))[4]
{
    pthread_once(&ct_once, make_ct_table);
    return (const uint8_t(*)[4])ct_table;
}

void vpt_ct_albedo(float density, uint8_t rgba[4]) { vpt_ct_albedo_from(vpt_ct_albedo_table(), density, rgba); }

const uint8_t (*vpt_white_albedo_table(void))[4]
{
    static const uint8_t white[1][4] = {{255, 255, 255, 255}};
    return white;
}

size_t vpt_scene_albedo_bytes(const VptScene *s)
{
    return s->albedo ? 4 * (size_t)s->nx * (size_t)s->ny * (size_t)s->nz : 0;
}
