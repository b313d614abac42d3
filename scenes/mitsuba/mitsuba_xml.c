/* Mitsuba scene files: text -> VptMitsubaDesc (see mitsuba_xml.h), the
 * mapping of the plugins vptune understands onto its scene description.
 *
 * Two passes below this file: mitsuba_tree.c builds the element tree (and
 * substitutes <default>s), mitsuba_props.c reads it as Mitsuba's objects and
 * properties. Here each plugin vptune takes (volpath, volpathmis and
 * volpath_simple; the independent and stratified samplers; hdrfilm with a
 * box filter; perspective; constant and directional; isotropic and hg; heterogeneous and
 * homogeneous media over grid or constant volumes; dielectric,
 * roughdielectric and null boundaries; cube and obj shapes) is interpreted;
 * any other plugin, or a property it does not read, is an error naming it
 * and its line.
 *
 * Nothing here opens a file; mitsuba_scene.c loads what the description
 * names. */
#include "scenes/mitsuba/mitsuba_xml.h"

#include "base/error.h"
#include "scenes/mitsuba/mitsuba_props.h"
#include "scenes/mitsuba/mitsuba_tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vpt_mitsuba_transform_point(const double m[16], const double p[3], double out[3])
{
    for (int i = 0; i < 3; i++) out[i] = m[4 * i] * p[0] + m[4 * i + 1] * p[1] + m[4 * i + 2] * p[2] + m[4 * i + 3];
}

/* ---- the plugins */

static int do_integrator(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    int ok = c->legacy ? vpt_mitsuba_type_is(n, "volpath") || vpt_mitsuba_type_is(n, "volpath_simple")
                       : vpt_mitsuba_type_is(n, "volpath") || vpt_mitsuba_type_is(n, "volpathmis");
    if (!ok) return vpt_mitsuba_unsupported(c, n, c->legacy ? "volpath, volpath_simple" : "volpath, volpathmis");
    long long md = -1, rr = 5;
    if (vpt_mitsuba_get_int(c, n, "max_depth", &md) < 0 || vpt_mitsuba_get_int(c, n, "rr_depth", &rr) < 0) return -1;
    int hide = 0, strict = 0;
    if (vpt_mitsuba_get_bool(c, n, "hide_emitters", &hide) < 0 || vpt_mitsuba_get_bool(c, n, "strict_normals",
                                                                                       &strict) < 0) return -1;
    if (hide)
        return vpt_fail("%s:%d: hide_emitters = true is not supported (vptune shows the environment)", c->file,
                        n->line);
    if (md == 0 || md < -1)
        return vpt_fail("%s:%d: max_depth %lld: vptune renders max_depth -1 (unlimited) or a positive depth", c->file,
                        n->line, md);
    d->max_depth = md == -1 || md >= VPT_MITSUBA_DEPTH_INFINITE ? 0 : (int)md;
    if (rr <= 0) return vpt_fail("%s:%d: rr_depth %lld must be positive", c->file, n->line, rr);
    d->rr_depth = rr >= VPT_MITSUBA_DEPTH_INFINITE ? -1 : (int)rr;
    return vpt_mitsuba_check_used(c, n);
}

static int do_sampler(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    static const char *const types[] = {"independent", "stratified", "multijitter", "ldsampler", NULL};
    int ok = 0;
    for (int i = 0; types[i]; i++) ok |= vpt_mitsuba_type_is(n, types[i]);
    if (!ok) return vpt_mitsuba_unsupported(c, n, "independent, stratified, multijitter, ldsampler");
    long long spp = 4, seed = 0, dim = 0;
    int jitter = 1;
    if (vpt_mitsuba_get_int(c, n, "sample_count", &spp) < 0 || vpt_mitsuba_get_int(c, n, "seed", &seed) < 0 ||
        vpt_mitsuba_get_int(c, n, "dimension", &dim) < 0 || vpt_mitsuba_get_bool(c, n, "jitter", &jitter) < 0)
        return -1;
    if (spp < 1 || spp > (1 << 24)) return vpt_fail("%s:%d: sample_count %lld is outside 1..16777216", c->file,
                                                    n->line, spp);
    d->spp = (int)spp;
    return vpt_mitsuba_check_used(c, n);
}

static int do_film(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    if (!vpt_mitsuba_type_is(n, "hdrfilm")) return vpt_mitsuba_unsupported(c, n, "hdrfilm");
    long long w = 768, h = 576;
    if (vpt_mitsuba_get_int(c, n, "width", &w) < 0 || vpt_mitsuba_get_int(c, n, "height", &h) < 0) return -1;
    if (w < 1 || h < 1 || w > 16384 || h > 16384)
        return vpt_fail("%s:%d: film %lldx%lld: width and height must lie in 1..16384", c->file, n->line, w, h);
    d->width = (int)w;
    d->height = (int)h;
    const char *s;
    /* output formats do not change the image's values */
    if (vpt_mitsuba_get_string(c, n, "pixel_format", &s, NULL) < 0 || vpt_mitsuba_get_string(c, n, "component_format",
                                                                                             &s, NULL) < 0 ||
        vpt_mitsuba_get_string(c, n, "file_format", &s, NULL) < 0)
        return -1;
    int b = 0;
    if (vpt_mitsuba_get_bool(c, n, "banner", &b) < 0 || vpt_mitsuba_get_bool(c, n, "attach_log", &b) < 0) return -1;
    b = 0;
    if (vpt_mitsuba_get_bool(c, n, "sample_border", &b) < 0) return -1;
    if (b) return vpt_fail("%s:%d: sample_border = true is not supported", c->file, n->line);
    b = 0;
    if (vpt_mitsuba_get_bool(c, n, "high_quality_edges", &b) < 0) return -1;
    if (b) return vpt_fail("%s:%d: high_quality_edges = true is not supported", c->file, n->line);
    VptMitsubaNode *rf;
    int r = vpt_mitsuba_child(c, n, "rfilter", NULL, &rf);
    if (r < 0) return -1;
    if (r > 0)
        return vpt_fail("%s:%d: the film has no <rfilter>: Mitsuba's default (gaussian) blends neighbouring pixels, "
                        "vptune's pixels are boxes; add <rfilter type=\"box\"/>",
                        c->file, n->line);
    if (!vpt_mitsuba_type_is(rf, "box")) return vpt_mitsuba_unsupported(c, rf, "box (vptune's pixels are boxes)");
    double radius;
    int rr = vpt_mitsuba_get_float(c, rf, "radius", &radius);
    if (rr < 0) return -1;
    if (rr == 0 && radius != 0.5)
        return vpt_fail("%s:%d: a box filter of radius %g: only 0.5 (one pixel) matches vptune", c->file, rf->line,
                        radius);
    if (vpt_mitsuba_check_used(c, rf)) return -1;
    return vpt_mitsuba_check_used(c, n);
}

static int do_sensor(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    if (!vpt_mitsuba_type_is(n, "perspective")) return vpt_mitsuba_unsupported(c, n, "perspective");
    double m[16];
    float la[9];
    int single = 0;
    int r = vpt_mitsuba_get_transform(c, n, "to_world", m, &single, la);
    if (r < 0) return -1;
    if (r > 0) vpt_mitsuba_mat_identity(m);
    if (single) {
        memcpy(d->cam_pos, la, 3 * sizeof(float));
        memcpy(d->cam_target, la + 3, 3 * sizeof(float));
        memcpy(d->cam_up, la + 6, 3 * sizeof(float));
        d->camera_from_lookat = 1;
    } else {
        /* columns: left, up, forward, position; a rigid, right-handed frame */
        double col[4][3];
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 3; i++) col[j][i] = m[4 * i + j];
        for (int j = 0; j < 3; j++) {
            double l = sqrt(col[j][0] * col[j][0] + col[j][1] * col[j][1] + col[j][2] * col[j][2]);
            if (fabs(l - 1.0) > 1e-4)
                return vpt_fail("%s:%d: the camera's to_world scales (column %d has length %g): Mitsuba and vptune "
                                "allow rotation and translation only",
                                c->file, n->line, j, l);
        }
        double cr[3] = {col[1][1] * col[2][2] - col[1][2] * col[2][1], col[1][2] * col[2][0] - col[1][0] * col[2][2],
                        col[1][0] * col[2][1] - col[1][1] * col[2][0]};
        for (int i = 0; i < 3; i++)
            if (fabs(cr[i] - col[0][i]) > 1e-4)
                return vpt_fail("%s:%d: the camera's to_world is not a rotation (a mirrored or sheared frame)", c->file,
                                n->line);
        for (int i = 0; i < 3; i++) {
            d->cam_pos[i] = (float)col[3][i];
            d->cam_target[i] = (float)(col[3][i] + col[2][i]);
            d->cam_up[i] = (float)col[1][i];
            if (!isfinite(d->cam_pos[i]) || !isfinite(d->cam_target[i]))
                return vpt_fail("%s:%d: the camera's position is beyond the float range", c->file, n->line);
        }
    }
    d->fov_deg = 2.0 * atan(18.0 / 50.0) * 180.0 / 3.14159265358979323846; /* Mitsuba's default: 50mm */
    snprintf(d->fov_axis, sizeof d->fov_axis, "x");
    const char *fl;
    int fl_line = 0;
    if (vpt_mitsuba_get_string(c, n, "focal_length", &fl, &fl_line) < 0) return -1;
    if (fl_line) return vpt_fail("%s:%d: focal_length is not supported: give fov", c->file, fl_line);
    if (vpt_mitsuba_get_float(c, n, "fov", &d->fov_deg) < 0) return -1;
    if (!(d->fov_deg > 0.0 && d->fov_deg < 179.0))
        return vpt_fail("%s:%d: fov %g degrees is outside (0, 179)", c->file, n->line, d->fov_deg);
    const char *axis;
    int ar = vpt_mitsuba_get_string(c, n, "fov_axis", &axis, NULL);
    if (ar < 0) return -1;
    if (ar == 0) {
        if (strcmp(axis, "x") && strcmp(axis, "y") && strcmp(axis, "diagonal") && strcmp(axis, "smaller") &&
            strcmp(axis, "larger"))
            return vpt_fail("%s:%d: fov_axis '%.40s' (x, y, diagonal, smaller or larger)", c->file, n->line, axis);
        snprintf(d->fov_axis, sizeof d->fov_axis, "%s", axis);
    }
    d->near_clip = 0.01;
    d->far_clip = 10000.0;
    if (vpt_mitsuba_get_float(c, n, "near_clip", &d->near_clip) < 0 ||
        vpt_mitsuba_get_float(c, n, "far_clip", &d->far_clip) < 0)
        return -1;
    if (!(d->near_clip > 0.0 && d->far_clip > d->near_clip))
        return vpt_fail("%s:%d: near_clip %g and far_clip %g: need 0 < near < far", c->file, n->line, d->near_clip,
                        d->far_clip);
    static const char *const ppo_names[2] = {"principal_point_offset_x", "principal_point_offset_y"};
    for (int i = 0; i < 2; i++) {
        double ppo = 0.0;
        if (vpt_mitsuba_get_float(c, n, ppo_names[i], &ppo) < 0) return -1;
        if (ppo != 0.0) return vpt_fail("%s:%d: a principal point offset is not supported", c->file, n->line);
    }
    d->spp = 4;
    d->width = 768;
    d->height = 576;
    VptMitsubaNode *k;
    r = vpt_mitsuba_child(c, n, "sampler", NULL, &k);
    if (r < 0 || (r == 0 && do_sampler(c, k, d))) return -1;
    r = vpt_mitsuba_child(c, n, "film", NULL, &k);
    if (r < 0) return -1;
    if (r > 0)
        return vpt_fail("%s:%d: the sensor has no <film>: Mitsuba's default filters with a gaussian; add "
                        "<film type=\"hdrfilm\"> with <rfilter type=\"box\"/>",
                        c->file, n->line);
    if (do_film(c, k, d)) return -1;
    return vpt_mitsuba_check_used(c, n);
}

/* A directional emitter: the sun. Mitsuba's direction is the one its light
 * travels (default +z); ours points toward the light. */
static int do_directional(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    double dir[3] = {0.0, 0.0, 1.0};
    int line = n->line;
    if (vpt_mitsuba_get_vector(c, n, "direction", dir, &line) < 0) return -1;
    float unit[3];
    if (vpt_sun_direction(dir, "directional emitter: direction", unit)) {
        vpt_error_prefix("%s:%d", c->file, line);
        return -1;
    }
    for (int k = 0; k < 3; k++) d->sun_dir[k] = unit[k] == 0.0f ? 0.0f : -unit[k];
    for (int k = 0; k < 3; k++) d->sun_irradiance[k] = 1.0f; /* Mitsuba's default */
    if (vpt_mitsuba_get_color(c, n, "irradiance", d->sun_irradiance, &line) < 0) return -1;
    for (int k = 0; k < 3; k++)
        if (!(d->sun_irradiance[k] >= 0.0f) || !isfinite(d->sun_irradiance[k]))
            return vpt_fail("%s:%d: irradiance %g must be finite and not negative", c->file, line,
                            d->sun_irradiance[k]);
    d->has_sun = 1;
    return vpt_mitsuba_check_used(c, n);
}

static int get_filename(VptMitsubaReader *c, VptMitsubaNode *n, const char *kind, const char *node, char *buf,
                        size_t size);

/* An environment map (scenes/env_map.h): its file (PFM, or OpenEXR where
 * the build reads it) and scale. Its to_world is not taken: vptune's map
 * has Mitsuba's default orientation only (an unused property is refused). */
static int do_envmap(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    if (get_filename(c, n, "envmap", "the envmap emitter", d->env_map, sizeof d->env_map)) return -1;
    double scale = 1.0; /* Mitsuba's default */
    if (vpt_mitsuba_get_float(c, n, "scale", &scale) < 0) return -1;
    if (!(scale > 0.0 && scale <= 3e38))
        return vpt_fail("%s:%d: envmap scale %g must be a finite number > 0", c->file, n->line, scale);
    d->env_map_scale = scale;
    d->env_map_line = n->line;
    return vpt_mitsuba_check_used(c, n);
}

static int do_emitter(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    if (vpt_mitsuba_type_is(n, "directional")) return do_directional(c, n, d);
    if (vpt_mitsuba_type_is(n, "envmap")) return do_envmap(c, n, d);
    if (!vpt_mitsuba_type_is(n, "constant")) return vpt_mitsuba_unsupported(c, n, "constant, directional, envmap");
    int r = vpt_mitsuba_get_color(c, n, "radiance", d->env, NULL);
    if (r < 0) return -1;
    if (r > 0) return vpt_fail("%s:%d: the constant emitter has no radiance", c->file, n->line);
    for (int k = 0; k < 3; k++)
        if (!(d->env[k] >= 0.0f)) return vpt_fail("%s:%d: radiance must not be negative", c->file, n->line);
    return vpt_mitsuba_check_used(c, n);
}

static int do_phase(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    if (vpt_mitsuba_type_is(n, "isotropic")) {
        d->hg_g = 0.0f;
    } else if (vpt_mitsuba_type_is(n, "hg")) {
        double g = 0.8; /* Mitsuba's default */
        if (vpt_mitsuba_get_float(c, n, "g", &g) < 0) return -1;
        if (!(g > -1.0 && g < 1.0)) return vpt_fail("%s:%d: hg g = %g is outside (-1, 1)", c->file, n->line, g);
        d->hg_g = (float)g;
    } else {
        return vpt_mitsuba_unsupported(c, n, "isotropic, hg");
    }
    return vpt_mitsuba_check_used(c, n);
}

/* A medium volume property `name`: a value, or a <volume> (inline or ref). */
/* n's "filename" property into buf[size]: -1 with a message naming the
 * node (`kind` "gridvolume", `node` "the gridvolume") when it is missing,
 * empty or too long. */
static int get_filename(VptMitsubaReader *c, VptMitsubaNode *n, const char *kind, const char *node, char *buf,
                        size_t size)
{
    const char *fn;
    int r = vpt_mitsuba_get_string(c, n, "filename", &fn, NULL);
    if (r < 0) return -1;
    if (r > 0) return vpt_fail("%s:%d: %s has no filename", c->file, n->line, node);
    if (strlen(fn) >= size || !*fn)
        return vpt_fail("%s:%d: %s filename '%.60s' is empty or too long", c->file, n->line, kind, fn);
    snprintf(buf, size, "%s", fn);
    return 0;
}

static int medium_volume(VptMitsubaReader *c, VptMitsubaNode *med, const char *name, VptMitsubaVolume *v)
{
    int err = 0;
    VptMitsubaNode *p = vpt_mitsuba_find_prop(c, med, name, &err);
    if (err) return -1;
    if (!p) return 0;
    v->line = p->line;
    if (strcmp(p->tag, "volume") && strcmp(p->tag, "ref")) {
        v->kind = VPT_MTS_VOLUME_CONST;
        return vpt_mitsuba_color(c, p, name, v->value);
    }
    VptMitsubaNode *vol = p;
    if (!strcmp(p->tag, "ref")) {
        vol = vpt_mitsuba_resolve_ref(c, p);
        if (!vol) return -1;
        if (strcmp(vol->tag, "volume"))
            return vpt_fail("%s:%d: '%s' refers to a <%s>, expected a <volume>", c->file, p->line, name, vol->tag);
    }
    if (vpt_mitsuba_type_is(vol, "constvolume") || vpt_mitsuba_type_is(vol, "const")) {
        v->kind = VPT_MTS_VOLUME_CONST;
        int r = vpt_mitsuba_get_color(c, vol, "value", v->value, NULL);
        if (r < 0) return -1;
        if (r > 0) v->value[0] = v->value[1] = v->value[2] = 1.0f;
        return vpt_mitsuba_check_used(c, vol);
    }
    if (!vpt_mitsuba_type_is(vol, "gridvolume") && !vpt_mitsuba_type_is(vol, "grid"))
        return vpt_mitsuba_unsupported(c, vol, "gridvolume, constvolume");
    v->kind = VPT_MTS_VOLUME_GRID;
    if (get_filename(c, vol, "gridvolume", "the gridvolume", v->filename, sizeof v->filename)) return -1;
    int r = vpt_mitsuba_get_transform(c, vol, "to_world", v->to_world, NULL, NULL);
    if (r < 0) return -1;
    if (r > 0) vpt_mitsuba_mat_identity(v->to_world);
    v->use_grid_bbox = c->legacy;
    if (!c->legacy && vpt_mitsuba_get_bool(c, vol, "use_grid_bbox", &v->use_grid_bbox) < 0) return -1;
    const char *s;
    int sl = 0;
    if (vpt_mitsuba_get_string(c, vol, "filter_type", &s, &sl) < 0) return -1;
    if (sl && strcmp(s, "trilinear"))
        return vpt_fail("%s:%d: filter_type '%.40s': vptune filters trilinearly", c->file, sl, s);
    sl = 0;
    if (vpt_mitsuba_get_string(c, vol, "wrap_mode", &s, &sl) < 0) return -1;
    if (sl && strcmp(s, "clamp")) return vpt_fail("%s:%d: wrap_mode '%.40s': vptune clamps", c->file, sl, s);
    int b;
    /* raw only matters to spectral variants, accel and send_data to speed */
    if (vpt_mitsuba_get_bool(c, vol, "raw", &b) < 0 || vpt_mitsuba_get_bool(c, vol, "accel", &b) < 0 ||
        vpt_mitsuba_get_bool(c, vol, "send_data", &b) < 0)
        return -1;
    return vpt_mitsuba_check_used(c, vol);
}

static int do_medium(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    d->medium_line = n->line;
    int homogeneous = vpt_mitsuba_type_is(n, "homogeneous");
    if (!vpt_mitsuba_type_is(n, "heterogeneous") && !homogeneous)
        return vpt_mitsuba_unsupported(c, n, "heterogeneous, homogeneous");
    if (medium_volume(c, n, c->legacy ? "density" : "sigma_t", &d->sigma_t) ||
        medium_volume(c, n, "albedo", &d->albedo))
        return -1;
    if (homogeneous && (d->sigma_t.kind == VPT_MTS_VOLUME_GRID || d->albedo.kind == VPT_MTS_VOLUME_GRID))
        return vpt_fail("%s:%d: a homogeneous medium takes constant sigma_t and albedo", c->file, n->line);
    if (d->sigma_t.kind == VPT_MTS_VOLUME_NONE) { /* Mitsuba's default: 1 */
        d->sigma_t.kind = VPT_MTS_VOLUME_CONST;
        d->sigma_t.value[0] = d->sigma_t.value[1] = d->sigma_t.value[2] = 1.0f;
        d->sigma_t.line = n->line;
    }
    if (d->albedo.kind == VPT_MTS_VOLUME_NONE) { /* Mitsuba's default: 0.75 */
        d->albedo.kind = VPT_MTS_VOLUME_CONST;
        d->albedo.value[0] = d->albedo.value[1] = d->albedo.value[2] = 0.75f;
        d->albedo.line = n->line;
    }
    if (d->sigma_t.kind == VPT_MTS_VOLUME_CONST &&
        (d->sigma_t.value[0] != d->sigma_t.value[1] || d->sigma_t.value[0] != d->sigma_t.value[2]))
        return vpt_fail("%s:%d: a coloured extinction (spectrally varying sigma_t) is not supported", c->file,
                        d->sigma_t.line);
    d->scale = 1.0;
    if (vpt_mitsuba_get_float(c, n, "scale", &d->scale) < 0) return -1;
    if (!(d->scale > 0.0)) return vpt_fail("%s:%d: scale %g must be positive", c->file, n->line, d->scale);
    int b;
    if (vpt_mitsuba_get_bool(c, n, "sample_emitters", &b) < 0 || vpt_mitsuba_get_bool(c, n, "has_spectral_extinction",
                                                                                      &b) < 0) return -1;
    if (c->legacy) {
        const char *m;
        int ml = 0;
        if (vpt_mitsuba_get_string(c, n, "method", &m, &ml) < 0) return -1;
        if (ml && strcmp(m, "woodcock"))
            return vpt_fail("%s:%d: method '%.40s': vptune tracks with Woodcock (delta) tracking only", c->file, ml, m);
    }
    VptMitsubaNode *ph;
    int r = vpt_mitsuba_child(c, n, "phase", NULL, &ph);
    if (r < 0) return -1;
    d->hg_g = 0.0f;
    if (r == 0 && do_phase(c, ph, d)) return -1;
    return vpt_mitsuba_check_used(c, n);
}

static int do_bsdf(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    if (vpt_mitsuba_type_is(n, "null") && !c->legacy) {
        d->boundary = VPT_BOUNDARY_NULL;
        d->ior_inside = d->ior_outside = 1.0f;
        d->ggx_alpha = 0.0f;
        return vpt_mitsuba_check_used(c, n);
    }
    int rough = vpt_mitsuba_type_is(n, "roughdielectric");
    if (!rough && !vpt_mitsuba_type_is(n, "dielectric"))
        return vpt_mitsuba_unsupported(c, n,
                                       c->legacy ? "dielectric, roughdielectric" : "null, dielectric, roughdielectric");
    if (vpt_mitsuba_ior(c, n, "int_ior", 1.5046, &d->ior_inside) || vpt_mitsuba_ior(c, n, "ext_ior", 1.00028,
                                                                                    &d->ior_outside)) return -1;
    static const char *const unit[] = {"specular_reflectance", "specular_transmittance"};
    for (int i = 0; i < 2; i++) {
        float v[3];
        int line = 0;
        int r = vpt_mitsuba_get_color(c, n, unit[i], v, &line);
        if (r < 0) return -1;
        if (r == 0 && (v[0] != 1.0f || v[1] != 1.0f || v[2] != 1.0f))
            return vpt_fail("%s:%d: %s must be 1 (vptune's dielectric does not tint)", c->file, line, unit[i]);
    }
    d->boundary = VPT_BOUNDARY_SMOOTH;
    d->ggx_alpha = 0.0f;
    if (rough) {
        const char *dist = "beckmann";
        int dl = 0;
        if (vpt_mitsuba_get_string(c, n, "distribution", &dist, &dl) < 0) return -1;
        if (strcmp(dist, "ggx"))
            return vpt_fail("%s:%d: distribution '%.40s'%s: vptune's rough dielectric is GGX; add <string "
                            "name=\"distribution\" value=\"ggx\"/>",
                            c->file, dl ? dl : n->line, dist, dl ? "" : " (Mitsuba's default)");
        double a = 0.1, au = -1, av = -1;
        if (vpt_mitsuba_get_float(c, n, "alpha", &a) < 0 || vpt_mitsuba_get_float(c, n, "alpha_u", &au) < 0 ||
            vpt_mitsuba_get_float(c, n, "alpha_v", &av) < 0)
            return -1;
        if (au >= 0 || av >= 0) {
            if (au != av) return vpt_fail("%s:%d: anisotropic roughness (alpha_u != alpha_v) is not supported",
                                          c->file, n->line);
            a = au;
        }
        if (!(a > 0.0 && a <= 1.0)) return vpt_fail("%s:%d: alpha %g is outside (0, 1]", c->file, n->line, a);
        int sv;
        if (vpt_mitsuba_get_bool(c, n, "sample_visible", &sv) < 0) return -1; /* sampling only */
        d->boundary = VPT_BOUNDARY_GGX;
        d->ggx_alpha = (float)a;
    }
    return vpt_mitsuba_check_used(c, n);
}

static int do_shape(VptMitsubaReader *c, VptMitsubaNode *n, VptMitsubaDesc *d)
{
    d->shape_line = n->line;
    if (vpt_mitsuba_type_is(n, "cube") && !c->legacy) {
        d->shape = VPT_MTS_SHAPE_CUBE;
    } else if (vpt_mitsuba_type_is(n, "obj")) {
        d->shape = VPT_MTS_SHAPE_OBJ;
        if (get_filename(c, n, "obj", "the obj shape", d->shape_filename, sizeof d->shape_filename)) return -1;
        int b;
        if (vpt_mitsuba_get_bool(c, n, "face_normals", &b) < 0 || vpt_mitsuba_get_bool(c, n, "flip_tex_coords",
                                                                                       &b) < 0) return -1;
    } else {
        return vpt_mitsuba_unsupported(c, n, c->legacy ? "obj (a box mesh)" : "cube, obj (a box mesh)");
    }
    int r = vpt_mitsuba_get_transform(c, n, "to_world", d->shape_to_world, NULL, NULL);
    if (r < 0) return -1;
    if (r > 0) vpt_mitsuba_mat_identity(d->shape_to_world);
    int flip = 0;
    if (vpt_mitsuba_get_bool(c, n, "flip_normals", &flip) < 0) return -1;
    if (flip) return vpt_fail("%s:%d: flip_normals = true is not supported (it swaps inside and outside)", c->file,
                              n->line);
    VptMitsubaNode *k;
    r = vpt_mitsuba_child(c, n, "medium", "interior", &k);
    if (r < 0) return -1;
    if (r > 0)
        return vpt_fail("%s:%d: the shape has no interior medium (<ref name=\"interior\" id=...>): vptune renders a "
                        "medium in a box",
                        c->file, n->line);
    if (do_medium(c, k, d)) return -1;
    r = vpt_mitsuba_child(c, n, "medium", "exterior", &k);
    if (r < 0) return -1;
    if (r == 0) return vpt_fail("%s:%d: an exterior medium is not supported (vptune's box sits in vacuum)", c->file,
                                k->line);
    r = vpt_mitsuba_child(c, n, "bsdf", NULL, &k);
    if (r < 0) return -1;
    if (r > 0) {
        if (!c->legacy)
            return vpt_fail("%s:%d: the shape has no BSDF: Mitsuba 3 gives it a diffuse one, which vptune does not "
                            "render; add <bsdf type=\"null\"/> for an index-matched boundary",
                            c->file, n->line);
        d->boundary = VPT_BOUNDARY_NULL; /* Mitsuba 0.5: index-matched */
        d->ior_inside = d->ior_outside = 1.0f;
        d->ggx_alpha = 0.0f;
    } else if (do_bsdf(c, k, d)) {
        return -1;
    }
    return vpt_mitsuba_check_used(c, n);
}

static int interpret(VptMitsubaReader *c, VptMitsubaDesc *d)
{
    VptMitsubaNode *root = c->root;
    if (strcmp(root->tag, "scene"))
        return vpt_fail("%s:%d: the root element is <%s>; a Mitsuba scene file starts with <scene>", c->file,
                        root->line, root->tag);
    const char *ver = vpt_mitsuba_attr(root, "version");
    if (!ver) return vpt_fail("%s:%d: <scene> has no version attribute", c->file, root->line);
    int major = -1, minor = 0, patch = 0;
    char rest;
    int nv = sscanf(ver, "%d.%d.%d%c", &major, &minor, &patch, &rest);
    if (nv < 1 || nv > 3 || major < 0 || !(major == 0 || major == 2 || major == 3))
        return vpt_fail("%s:%d: scene version '%.40s': vptune reads versions 0.x (Mitsuba 0.5/0.6) and 2.x/3.x",
                        c->file, root->line, ver);
    c->legacy = major == 0;
    d->version_major = c->legacy ? 0 : 3;
    if (vpt_mitsuba_attrs_used(c->file, root)) return -1;
    VptMitsubaNode *sensor = NULL, *shape = NULL, *integ = NULL, *emitter = NULL, *sun = NULL, *map = NULL;
    for (int i = 0; i < root->nkid; i++) {
        VptMitsubaNode *k = root->kid[i];
        /* emitters: one constant (or other), one directional and one envmap */
        VptMitsubaNode **slot = !strcmp(k->tag, "sensor") ? &sensor : !strcmp(k->tag, "shape") ? &shape
                    : !strcmp(k->tag, "integrator") ? &integ
                    : !strcmp(k->tag, "emitter") ? (vpt_mitsuba_type_is(k, "directional") ? &sun
                                                    : vpt_mitsuba_type_is(k, "envmap")    ? &map
                                                                                          : &emitter)
                                                 : NULL;
        if (slot == &emitter && !vpt_mitsuba_type_is(k, "constant"))
            return vpt_mitsuba_unsupported(c, k, "constant, directional, envmap");
        if (slot) {
            if (*slot)
                return vpt_fail("%s:%d: a second <%s%s> (the first at line %d): vptune renders one %s", c->file,
                                k->line, k->tag,
                                slot == &sun   ? " type=\"directional\""
                                : slot == &map ? " type=\"envmap\""
                                               : "",
                                (*slot)->line,
                                slot == &sun   ? "directional emitter (the sun)"
                                : slot == &map ? "environment map"
                                : slot == &emitter ? "environment emitter" : k->tag);
            *slot = k;
            k->used = 1;
        } else if (!strcmp(k->tag, "default")) {
            k->used = 1;
        } else if (strcmp(k->tag, "bsdf") && strcmp(k->tag, "medium") && strcmp(k->tag, "volume") &&
                   strcmp(k->tag, "phase")) {
            char w[160];
            return vpt_fail("%s:%d: %s is not supported in a vptune scene", c->file, k->line,
                            vpt_mitsuba_where(k, w, sizeof w));
        }
    }
    if (!integ)
        return vpt_fail("%s:%d: no <integrator>: Mitsuba's default (path) ignores media; add <integrator "
                        "type=\"volpath\">",
                        c->file, root->line);
    if (do_integrator(c, integ, d)) return -1;
    if (!sensor) return vpt_fail("%s:%d: no <sensor>", c->file, root->line);
    if (do_sensor(c, sensor, d)) return -1;
    if (!shape) return vpt_fail("%s:%d: no <shape>: vptune renders a medium in a box shape", c->file, root->line);
    if (do_shape(c, shape, d)) return -1;
    if (emitter && do_emitter(c, emitter, d)) return -1;
    if (sun && do_emitter(c, sun, d)) return -1;
    if (map && do_emitter(c, map, d)) return -1;
    /* top-level objects no one referred to */
    for (int i = 0; i < root->nkid; i++)
        if (!root->kid[i]->used) {
            char w[160];
            return vpt_fail("%s:%d: %s is not used by the shape", c->file, root->kid[i]->line,
                            vpt_mitsuba_where(root->kid[i], w, sizeof w));
        }
    return 0;
}


int vpt_mitsuba_parse(const char *name, const char *text, size_t size, VptMitsubaDesc *out)
{
    memset(out, 0, sizeof *out);
    VptMitsubaNode *root = vpt_mitsuba_tree_build(name, text, size);
    if (!root) return -1;
    VptMitsubaReader c;
    memset(&c, 0, sizeof c);
    c.file = name;
    c.root = root;
    int rc = -1;
    if (vpt_mitsuba_tree_defaults(name, root) == 0) rc = interpret(&c, out);
    vpt_mitsuba_tree_free(root);
    if (rc) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}
