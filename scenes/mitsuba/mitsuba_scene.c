/* Mitsuba scene files <-> VptScene: loading what a VptMitsubaDesc names
 * (the .vol grids, an .obj box mesh) into a scene, and exporting a scene as
 * a Mitsuba 3 XML file with its .vol grids. The conventions are listed in
 * mitsuba_xml.h. */
#include "scenes/mitsuba/mitsuba_xml.h"

#include "base/error.h"
#include "base/file.h"
#include "image/image.h"
#include "scenes/env_map.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PI_D 3.14159265358979323846
/* How closely the grids must fill the box shape, relative to its size. */
#define BOX_TOL 1e-5

/* ------------------------------------------------------------ paths */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The file name without directory and extension. */
static void stem_of(const char *path, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s", base_name(path));
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = '\0';
}

/* A file named in the scene file: absolute, or relative to its directory. */
static int resolve(const char *xml, const char *dir, const char *file, char *out, size_t outsz)
{
    int n = file[0] == '/' ? snprintf(out, outsz, "%s", file) : snprintf(out, outsz, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= outsz) return vpt_fail("%s: the path of '%.60s' is too long", xml, file);
    return 0;
}

/* ------------------------------------------------------------ geometry */

/* The axis-aligned box m maps [lo, hi] onto, when m scales and translates
 * only (positive scales with positive_only). */
static int axis_aligned_box(const char *xml, int line, const char *what, const double m[16], const double lo[3],
                            const double hi[3], int positive_only, double bmin[3], double bmax[3])
{
    double big = 0.0;
    for (int i = 0; i < 3; i++) big = fmax(big, fabs(m[5 * i]));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (i != j && fabs(m[4 * i + j]) > 1e-12 * big)
                return vpt_fail("%s:%d: %s's to_world rotates or shears; vptune's box and grids are axis-aligned", xml,
                                line, what);
    if (m[12] != 0.0 || m[13] != 0.0 || m[14] != 0.0 || m[15] != 1.0)
        return vpt_fail("%s:%d: %s's to_world is projective", xml, line, what);
    for (int i = 0; i < 3; i++) {
        double s = m[5 * i];
        if (s == 0.0 || (positive_only && s < 0.0))
            return vpt_fail("%s:%d: %s's to_world scales axis %c by %g (%s)", xml, line, what, "xyz"[i], s,
                            s == 0.0 ? "a flat box" : "a mirrored grid");
        double a = s * lo[i] + m[4 * i + 3], b = s * hi[i] + m[4 * i + 3];
        bmin[i] = fmin(a, b);
        bmax[i] = fmax(a, b);
    }
    return 0;
}

/* The box of an OBJ mesh (its 'v' lines) under m; every vertex must be a
 * corner of that box and all 8 corners must occur. */
static int obj_box(const char *xml, int line, const char *path, const double m[16], double bmin[3], double bmax[3])
{
    char *text;
    size_t size;
    if (vpt_read_file(path, VPT_MITSUBA_MAX_XML_BYTES, &text, &size)) {
        vpt_error_prefix("%s:%d: the box mesh", xml, line);
        return -1;
    }
    double *v = NULL;
    size_t nv = 0, cap = 0;
    int lineno = 0, rc = -1;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        lineno++;
        while (*p == ' ' || *p == '\t') p++;
        if (p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
            double x[3];
            char *e = p + 1;
            for (int k = 0; k < 3; k++) {
                char *s = e;
                errno = 0;
                x[k] = strtod(s, &e);
                if (e == s || errno == ERANGE || !isfinite(x[k])) {
                    vpt_fail("%s:%d: bad vertex (expected 'v x y z')", path, lineno);
                    goto out;
                }
            }
            if (nv == cap) {
                cap = cap ? 2 * cap : 64;
                if (cap > ((size_t)1 << 24)) {
                    vpt_fail("%s: too many vertices for a box", path);
                    goto out;
                }
                double *t = vpt_realloc(v, cap * 3 * sizeof *t);
                if (!t) goto out;
                v = t;
            }
            vpt_mitsuba_transform_point(m, x, v + 3 * nv);
            nv++;
        }
        p = nl ? nl + 1 : p + strlen(p);
    }
    if (nv < 8) {
        vpt_fail("%s: %zu vertices; a box mesh has 8 corners", path, nv);
        goto out;
    }
    for (int k = 0; k < 3; k++) {
        bmin[k] = bmax[k] = v[k];
        for (size_t i = 1; i < nv; i++) {
            bmin[k] = fmin(bmin[k], v[3 * i + k]);
            bmax[k] = fmax(bmax[k], v[3 * i + k]);
        }
        if (!(bmax[k] > bmin[k])) {
            vpt_fail("%s: the mesh is flat along %c", path, "xyz"[k]);
            goto out;
        }
    }
    unsigned corners = 0;
    for (size_t i = 0; i < nv; i++) {
        unsigned c = 0;
        for (int k = 0; k < 3; k++) {
            double tol = BOX_TOL * (bmax[k] - bmin[k]);
            if (fabs(v[3 * i + k] - bmin[k]) <= tol) continue;
            if (fabs(v[3 * i + k] - bmax[k]) <= tol) {
                c |= 1u << k;
                continue;
            }
            vpt_fail("%s: vertex %zu (%g, %g, %g) is not a corner of the mesh's bounding box: vptune renders a box "
                     "only",
                     path, i + 1, v[3 * i], v[3 * i + 1], v[3 * i + 2]);
            goto out;
        }
        corners |= 1u << c;
    }
    if (corners != 0xffu) {
        vpt_fail("%s: the mesh does not reach all 8 corners of its bounding box: not a box", path);
        goto out;
    }
    rc = 0;
out:
    free(v);
    free(text);
    return rc;
}

static int same_box(const double a0[3], const double a1[3], const double b0[3], const double b1[3])
{
    for (int k = 0; k < 3; k++) {
        double tol = BOX_TOL * (a1[k] - a0[k]);
        if (fabs(a0[k] - b0[k]) > tol || fabs(a1[k] - b1[k]) > tol) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ loading */

/* A grid of the description, loaded, with its world box. */
typedef struct {
    VptVolGrid g;
    double bmin[3], bmax[3];
} LoadedGrid;

static int load_grid(const char *xml, const char *dir, const char *what, const VptMitsubaVolume *mv, LoadedGrid *out)
{
    char path[4096];
    if (resolve(xml, dir, mv->filename, path, sizeof path)) return -1;
    if (vpt_vol_grid_load(path, 0, &out->g)) {
        vpt_error_prefix("%s:%d: %s", xml, mv->line, what);
        return -1;
    }
    double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    if (mv->use_grid_bbox)
        for (int k = 0; k < 3; k++) {
            lo[k] = out->g.bbox_min[k];
            hi[k] = out->g.bbox_max[k];
        }
    if (axis_aligned_box(xml, mv->line, what, mv->to_world, lo, hi, 1, out->bmin, out->bmax)) {
        vpt_vol_grid_free(&out->g);
        return -1;
    }
    return 0;
}

/* The horizontal fov of a perspective sensor given along `axis`. */
static double fov_x_of(const VptMitsubaDesc *d)
{
    double t = tan(0.5 * d->fov_deg * PI_D / 180.0), w = d->width, h = d->height, tx;
    const char *a = d->fov_axis;
    if (!strcmp(a, "smaller")) a = w <= h ? "x" : "y";
    if (!strcmp(a, "larger")) a = w >= h ? "x" : "y";
    if (!strcmp(a, "y")) tx = t * w / h;
    else if (!strcmp(a, "diagonal")) tx = t * w / sqrt(w * w + h * h);
    else tx = t;
    return 2.0 * atan(tx) * 180.0 / PI_D;
}

/* Mitsuba clips camera rays to [near_clip, far_clip] in depth along the
 * view direction; vptune does not clip. Accepted when no depth of the box
 * lies outside (a camera inside the box: the near clip is not checked). */
static int check_clipping(const char *xml, const VptMitsubaDesc *d, const VptScene *s)
{
    double f[3], len = 0.0;
    for (int k = 0; k < 3; k++) {
        f[k] = (double)s->cam_target[k] - s->cam_pos[k];
        len += f[k] * f[k];
    }
    len = sqrt(len);
    double dmin = INFINITY, dmax = -INFINITY;
    for (int c = 0; c < 8; c++) {
        double z = 0.0;
        for (int k = 0; k < 3; k++) z += ((c >> k & 1 ? s->box_max[k] : s->box_min[k]) - (double)s->cam_pos[k]) * f[k];
        dmin = fmin(dmin, z / len);
        dmax = fmax(dmax, z / len);
    }
    if (dmin > 0.0 && d->near_clip > dmin)
        return vpt_fail("%s: near_clip %g cuts the box (its nearest depth is %g); vptune does not clip", xml,
                        d->near_clip, dmin);
    if (d->far_clip < dmax)
        return vpt_fail("%s: far_clip %g cuts the box (its farthest depth is %g); vptune does not clip", xml,
                        d->far_clip, dmax);
    return 0;
}

static int from_desc(const char *xml, const VptMitsubaDesc *d, VptScene *s)
{
    char dir[4096];
    vpt_dirname(xml, dir, sizeof dir);
    /* the box: the shape's */
    double bmin[3], bmax[3];
    if (d->shape == VPT_MTS_SHAPE_CUBE) {
        static const double lo[3] = {-1, -1, -1}, hi[3] = {1, 1, 1};
        if (axis_aligned_box(xml, d->shape_line, "the cube", d->shape_to_world, lo, hi, 0, bmin, bmax)) return -1;
    } else {
        char path[4096];
        if (resolve(xml, dir, d->shape_filename, path, sizeof path) ||
            obj_box(xml, d->shape_line, path, d->shape_to_world, bmin, bmax))
            return -1;
    }
    /* the grids: each must fill the box; one resolution for both */
    LoadedGrid g[2];
    memset(g, 0, sizeof g);
    const VptMitsubaVolume *mv[2] = {&d->sigma_t, &d->albedo};
    static const char *const what[2] = {"the density (sigma_t) grid", "the albedo grid"};
    int rc = -1;
    for (int i = 0; i < 2; i++) {
        if (mv[i]->kind != VPT_MTS_VOLUME_GRID) continue;
        if (load_grid(xml, dir, what[i], mv[i], &g[i])) goto out;
        if (!same_box(bmin, bmax, g[i].bmin, g[i].bmax)) {
            vpt_fail("%s:%d: %s spans (%g, %g, %g)-(%g, %g, %g), the box shape (line %d) (%g, %g, %g)-(%g, %g, %g): "
                     "vptune's medium fills its box exactly",
                     xml, mv[i]->line, what[i], g[i].bmin[0], g[i].bmin[1], g[i].bmin[2], g[i].bmax[0], g[i].bmax[1],
                     g[i].bmax[2], d->shape_line, bmin[0], bmin[1], bmin[2], bmax[0], bmax[1], bmax[2]);
            goto out;
        }
    }
    if (g[0].g.data && g[0].g.channels != 1) {
        vpt_fail("%s:%d: the density grid has %d channels: a coloured extinction is not supported", xml,
                 d->sigma_t.line, g[0].g.channels);
        goto out;
    }
    if (g[0].g.data && g[1].g.data &&
        (g[0].g.nx != g[1].g.nx || g[0].g.ny != g[1].g.ny || g[0].g.nz != g[1].g.nz)) {
        vpt_fail("%s:%d: the albedo grid is %dx%dx%d, the density grid %dx%dx%d: vptune needs one resolution", xml,
                 d->albedo.line, g[1].g.nx, g[1].g.ny, g[1].g.nz, g[0].g.nx, g[0].g.ny, g[0].g.nz);
        goto out;
    }
    /* The box: the grids' (they place the medium; a mesh's vertices may be
     * printed to fewer digits, as smoke_bounds.obj's are), else the shape's. */
    const LoadedGrid *boxg = g[0].g.data ? &g[0] : g[1].g.data ? &g[1] : NULL;
    for (int k = 0; k < 3; k++) {
        s->box_min[k] = (float)(boxg ? boxg->bmin[k] : bmin[k]);
        s->box_max[k] = (float)(boxg ? boxg->bmax[k] : bmax[k]);
        if (!isfinite(s->box_min[k]) || !isfinite(s->box_max[k]) || !(s->box_max[k] > s->box_min[k])) {
            vpt_fail("%s:%d: the box is empty or out of range along %c", xml, d->shape_line, "xyz"[k]);
            goto out;
        }
    }
    const VptVolGrid *shape = g[0].g.data ? &g[0].g : g[1].g.data ? &g[1].g : NULL;
    s->nx = shape ? shape->nx : 1;
    s->ny = shape ? shape->ny : 1;
    s->nz = shape ? shape->nz : 1;
    size_t n = (size_t)s->nx * s->ny * s->nz;
    s->density = vpt_malloc(n * sizeof *s->density);
    s->albedo = vpt_malloc(n * 4);
    if (!s->density || !s->albedo) goto out;

    /* densities: normalized to [0, 1] when the grid exceeds 1 */
    double scale = d->scale, dmax = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = g[0].g.data ? g[0].g.data[i] : d->sigma_t.value[0];
        if (!(v >= 0.0)) {
            vpt_fail("%s:%d: density %g at voxel %zu is negative", xml, d->sigma_t.line, v, i);
            goto out;
        }
        dmax = fmax(dmax, v);
    }
    double norm = dmax > 1.0 ? dmax : 1.0;
    for (size_t i = 0; i < n; i++) {
        float v = g[0].g.data ? g[0].g.data[i] : d->sigma_t.value[0];
        s->density[i] = norm > 1.0 ? (float)(v / norm) : v;
        if (s->density[i] > 1.0f) s->density[i] = 1.0f;
    }
    s->density_scale = (float)(scale * norm);
    if (!isfinite(s->density_scale) || !(s->density_scale > 0.0f)) {
        vpt_fail("%s:%d: scale %g times the largest density %g is not a usable float", xml, d->medium_line, scale,
                 dmax);
        goto out;
    }
    /* albedos: 8 bits, as vptune's albedo texture holds them */
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            float a = !g[1].g.data ? d->albedo.value[k]
                    : g[1].g.channels == 1 ? g[1].g.data[i] : g[1].g.data[3 * i + (size_t)k];
            if (!(a >= 0.0f && a <= 1.0f)) {
                vpt_fail("%s:%d: albedo %g at voxel %zu (channel %d) is outside [0, 1]", xml, d->albedo.line, a, i, k);
                goto out;
            }
            s->albedo[4 * i + (size_t)k] = (uint8_t)lrintf(255.0f * a);
        }
        s->albedo[4 * i + 3] = 255;
    }

    /* a lookat's points as written; else position + forward (mitsuba_xml.c) */
    memcpy(s->cam_pos, d->cam_pos, sizeof s->cam_pos);
    memcpy(s->cam_target, d->cam_target, sizeof s->cam_target);
    memcpy(s->cam_up, d->cam_up, sizeof s->cam_up);
    s->fov_deg = (float)fov_x_of(d);
    s->boundary = d->boundary;
    s->ior_inside = d->ior_inside;
    s->ior_outside = d->ior_outside;
    s->ggx_alpha = d->ggx_alpha;
    s->hg_g = d->hg_g;
    memcpy(s->env, d->env, sizeof s->env);
    if (d->has_sun) { /* Mitsuba's directional: a delta light */
        memcpy(s->sun_dir, d->sun_dir, sizeof s->sun_dir);
        memcpy(s->sun_irradiance, d->sun_irradiance, sizeof s->sun_irradiance);
        s->sun_radius_deg = 0.0f;
    }
    if (d->env_map[0]) { /* Mitsuba's envmap: the same direction convention (physics/vpt_physics.h) */
        char path[4096];
        if (resolve(xml, dir, d->env_map, path, sizeof path)) goto out;
        if (!(s->env_map = vpt_env_map_load(path, d->env_map_scale))) {
            vpt_error_prefix("%s:%d: envmap", xml, d->env_map_line);
            goto out;
        }
    }
    s->width = d->width;
    s->height = d->height;
    s->spp = d->spp;
    if (check_clipping(xml, d, s)) goto out;
    rc = 0;
out:
    vpt_vol_grid_free(&g[0].g);
    vpt_vol_grid_free(&g[1].g);
    return rc;
}

VptScene *vpt_scene_from_mitsuba(const char *path, VptMitsubaIntegrator *integrator)
{
    char *text;
    size_t size;
    if (vpt_read_file(path, VPT_MITSUBA_MAX_XML_BYTES, &text, &size)) return NULL;
    VptMitsubaDesc *d = vpt_malloc(sizeof *d);
    VptScene *s = vpt_calloc(1, sizeof *s);
    if (!d || !s || vpt_mitsuba_parse(path, text, size, d) || from_desc(path, d, s)) goto fail;
    char stem[40];
    stem_of(path, stem, sizeof stem);
    snprintf(s->name, sizeof s->name, "%s", stem);
    if (vpt_scene_finalize(s)) {
        vpt_error_prefix("%s", path);
        goto fail;
    }
    char hex[65];
    if (vpt_scene_digest(s, hex)) goto fail;
    snprintf(s->name, sizeof s->name, "%s-%.8s", stem, hex);
    snprintf(s->source, sizeof s->source, "Mitsuba %s scene file %s", d->version_major ? "3" : "0.5", path);
    if (integrator) {
        integrator->max_depth = d->max_depth;
        integrator->rr_depth = d->rr_depth;
    }
    free(d);
    free(text);
    return s;
fail:
    vpt_scene_destroy(s);
    free(d);
    free(text);
    return NULL;
}

/* ------------------------------------------------------------ export */

/* XML text of arbitrary bytes: escaped for an attribute, non-printable
 * bytes as '?'. */
static void xml_attr(FILE *fp, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&') fputs("&amp;", fp);
        else if (c == '<') fputs("&lt;", fp);
        else if (c == '>') fputs("&gt;", fp);
        else if (c == '"') fputs("&quot;", fp);
        else fputc(isprint(c) ? c : '?', fp);
    }
}

/* Arbitrary bytes inside an XML comment (which must not hold "--"). */
static void xml_comment(FILE *fp, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '-' && s[1] == '-') fputs("- ", fp);
        else fputc(isprint(c) ? c : '?', fp);
    }
}

/* The shortest decimal text that reads back as the same float (0.7, not
 * 0.699999988). */
static const char *fstr(float f, char buf[32])
{
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, 32, "%.*g", prec, f);
        if (strtof(buf, NULL) == f) break;
    }
    return buf;
}

static void f3(FILE *fp, const float v[3])
{
    char a[32], b[32], c[32];
    fprintf(fp, "%s, %s, %s", fstr(v[0], a), fstr(v[1], b), fstr(v[2], c));
}

/* <float name="name" value="v"/> at the given indentation. */
static void float_prop(FILE *fp, int indent, const char *name, float v)
{
    char b[32];
    fprintf(fp, "%*s<float name=\"%s\" value=\"%s\"/>\n", indent, "", name, fstr(v, b));
}

/* How the albedo grid is exported. */
typedef enum { ALBEDO_CONST, ALBEDO_GREY, ALBEDO_RGB } AlbedoForm;

static AlbedoForm albedo_form(const VptScene *s)
{
    if (!s->albedo) return ALBEDO_CONST; /* a one-entry table (the export refuses longer ones) */
    size_t n = (size_t)s->nx * s->ny * s->nz;
    int uniform = 1, grey = 1;
    for (size_t i = 0; i < n && (uniform || grey); i++) {
        const uint8_t *a = s->albedo + 4 * i;
        if (memcmp(a, s->albedo, 3)) uniform = 0;
        if (a[0] != a[1] || a[0] != a[2]) grey = 0;
    }
    return uniform ? ALBEDO_CONST : grey ? ALBEDO_GREY : ALBEDO_RGB;
}

static void write_xml(FILE *fp, const VptScene *s, const VptRenderSettings *r, const char *density_vol,
                      const char *albedo_vol, AlbedoForm af, const char *env_map_file)
{
    int w = r && r->width > 0 ? r->width : s->width, h = r && r->height > 0 ? r->height : s->height;
    int spp = r && r->spp > 0 ? r->spp : s->spp;
    int max_depth = r && r->max_depth > 0 ? r->max_depth : -1;
    int rr = r && r->rr_depth >= 0 ? (r->rr_depth > 0 ? r->rr_depth : 1) : VPT_MITSUBA_NO_RR;
    /* the box's depth range along the view, for the clipping planes */
    double f[3], len = 0.0, dmin = INFINITY, dmax = 0.0;
    for (int k = 0; k < 3; k++) {
        f[k] = (double)s->cam_target[k] - s->cam_pos[k];
        len += f[k] * f[k];
    }
    len = sqrt(len);
    for (int c = 0; c < 8; c++) {
        double z = 0.0;
        for (int k = 0; k < 3; k++) z += ((c >> k & 1 ? s->box_max[k] : s->box_min[k]) - (double)s->cam_pos[k]) * f[k];
        dmin = fmin(dmin, z / len);
        dmax = fmax(dmax, z / len);
    }
    double near_clip = dmin > 0.0 ? fmin(1e-2, 0.5 * dmin) : 1e-4, far_clip = fmax(1e4, 2.0 * dmax);

    fputs("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- vptune scene '", fp);
    xml_comment(fp, s->name);
    fputs("' (", fp);
    xml_comment(fp, s->source);
    fputs("), exported for Mitsuba 3 (scenes/mitsuba/mitsuba_xml.h lists the conventions).\n"
          "     Render: mitsuba.load_file(this file, spp=..., resx=..., resy=...) with a *_rgb variant. -->\n",
          fp);
    fprintf(fp, "<scene version=\"3.0.0\">\n");
    fprintf(fp, "    <default name=\"spp\" value=\"%d\"/>\n", spp);
    fprintf(fp, "    <default name=\"resx\" value=\"%d\"/>\n", w);
    fprintf(fp, "    <default name=\"resy\" value=\"%d\"/>\n\n", h);
    fprintf(fp, "    <!-- no Russian roulette (rr_depth beyond any path), unlimited depth unless set -->\n");
    fprintf(fp, "    <integrator type=\"volpath\">\n");
    fprintf(fp, "        <integer name=\"max_depth\" value=\"%d\"/>\n", max_depth);
    fprintf(fp, "        <integer name=\"rr_depth\" value=\"%d\"/>\n", rr);
    fprintf(fp, "    </integrator>\n\n");
    fprintf(fp, "    <sensor type=\"perspective\">\n");
    fprintf(fp, "        <string name=\"fov_axis\" value=\"x\"/>\n");
    float_prop(fp, 8, "fov", s->fov_deg);
    fprintf(fp, "        <float name=\"near_clip\" value=\"%.9g\"/>\n", near_clip);
    fprintf(fp, "        <float name=\"far_clip\" value=\"%.9g\"/>\n", far_clip);
    fprintf(fp, "        <transform name=\"to_world\">\n            <lookat origin=\"");
    f3(fp, s->cam_pos);
    fputs("\" target=\"", fp);
    f3(fp, s->cam_target);
    fputs("\" up=\"", fp);
    f3(fp, s->cam_up);
    fputs("\"/>\n        </transform>\n", fp);
    fprintf(fp, "        <sampler type=\"independent\">\n");
    fprintf(fp, "            <integer name=\"sample_count\" value=\"$spp\"/>\n");
    fprintf(fp, "        </sampler>\n");
    fprintf(fp, "        <film type=\"hdrfilm\">\n");
    fprintf(fp, "            <integer name=\"width\" value=\"$resx\"/>\n");
    fprintf(fp, "            <integer name=\"height\" value=\"$resy\"/>\n");
    fprintf(fp, "            <string name=\"pixel_format\" value=\"rgb\"/>\n");
    fprintf(fp, "            <string name=\"component_format\" value=\"float32\"/>\n");
    fprintf(fp, "            <!-- one pixel per sample, as vptune's jittered pixel samples -->\n");
    fprintf(fp, "            <rfilter type=\"box\"/>\n");
    fprintf(fp, "        </film>\n");
    fprintf(fp, "    </sensor>\n\n");
    if (s->env_map) {
        /* Mitsuba takes one environment emitter: the constant environment
         * is folded into the map's texels (export_env_map), whose direction
         * convention is Mitsuba's envmap's (physics/vpt_physics.h) */
        fprintf(fp, "    <!-- the environment map; Mitsuba filters it bilinearly, vptune per texel: the images "
                    "differ at texel edges by the filtering -->\n");
        fprintf(fp, "    <emitter type=\"envmap\">\n        <string name=\"filename\" value=\"");
        xml_attr(fp, env_map_file);
        fputs("\"/>\n    </emitter>\n\n", fp);
    } else {
        fprintf(fp, "    <emitter type=\"constant\">\n        <rgb name=\"radiance\" value=\"");
        f3(fp, s->env);
        fputs("\"/>\n    </emitter>\n\n", fp);
    }
    const int sun = vpt_scene_has_sun(s);
    if (sun) {
        /* Mitsuba's direction is the one the light travels: away from the sun */
        const float travel[3] = {-s->sun_dir[0], -s->sun_dir[1], -s->sun_dir[2]};
        fprintf(fp, "    <!-- the sun: a distant light toward (");
        f3(fp, s->sun_dir);
        fputs(") -->\n", fp);
        if (s->sun_radius_deg > 0.0f) {
            char r[32];
            fprintf(fp, "    <!-- vptune's sun has an angular radius of %s degrees; Mitsuba's directional emitter is "
                        "a delta light, so this scene's sun is exported as one: the images differ (a sun with a "
                        "disc is seen by paths that escape toward it, and lights more softly) -->\n",
                    fstr(s->sun_radius_deg, r));
        }
        fprintf(fp, "    <emitter type=\"directional\">\n        <vector name=\"direction\" value=\"");
        f3(fp, travel);
        fputs("\"/>\n        <rgb name=\"irradiance\" value=\"", fp);
        f3(fp, s->sun_irradiance);
        fputs("\"/>\n    </emitter>\n\n", fp);
    }

    /* the grids map [0, 1]^3 onto the box: scale by its extent, then
     * translate to its corner (doubles, so that corner + extent gives the
     * far corner back exactly) */
    double lo[3], ext[3], ctr[3], half[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = s->box_min[k];
        ext[k] = (double)s->box_max[k] - (double)s->box_min[k];
        ctr[k] = 0.5 * ((double)s->box_min[k] + (double)s->box_max[k]);
        half[k] = 0.5 * ext[k];
    }
    char grid_tf[512];
    snprintf(grid_tf, sizeof grid_tf,
             "            <transform name=\"to_world\">\n"
             "                <scale value=\"%.17g, %.17g, %.17g\"/>\n"
             "                <translate value=\"%.17g, %.17g, %.17g\"/>\n"
             "            </transform>\n",
             ext[0], ext[1], ext[2], lo[0], lo[1], lo[2]);
    fprintf(fp, "    <medium type=\"heterogeneous\" id=\"medium\">\n");
    fprintf(fp, "        <!-- sigma_t = scale * density, densities in [0, 1] -->\n");
    fprintf(fp, "        <volume name=\"sigma_t\" type=\"gridvolume\">\n");
    fprintf(fp, "            <string name=\"filename\" value=\"");
    xml_attr(fp, density_vol);
    fprintf(fp, "\"/>\n%s        </volume>\n", grid_tf);
    float_prop(fp, 8, "scale", s->density_scale);
    if (af == ALBEDO_CONST) {
        float a[3];
        const uint8_t *c = s->albedo ? s->albedo : s->albedo_table[0];
        for (int k = 0; k < 3; k++) a[k] = (float)c[k] / 255.0f;
        fprintf(fp, "        <rgb name=\"albedo\" value=\"");
        f3(fp, a);
        fputs("\"/>\n", fp);
    } else {
        fprintf(fp, "        <volume name=\"albedo\" type=\"gridvolume\">\n");
        fprintf(fp, "            <string name=\"filename\" value=\"");
        xml_attr(fp, albedo_vol);
        fprintf(fp, "\"/>\n%s        </volume>\n", grid_tf);
    }
    if (s->hg_g == 0.0f) {
        fprintf(fp, "        <phase type=\"isotropic\"/>\n");
    } else {
        fprintf(fp, "        <phase type=\"hg\">\n");
        float_prop(fp, 12, "g", s->hg_g);
        fprintf(fp, "        </phase>\n");
    }
    if (sun || s->env_map) {
        fprintf(fp, "        <!-- shadow rays from inside the medium: next-event estimation, as vptune's toward "
                    "the sun and the environment map -->\n");
        fprintf(fp, "        <boolean name=\"sample_emitters\" value=\"true\"/>\n");
    } else {
        fprintf(fp, "        <!-- no shadow rays from inside the medium (vptune traces none) -->\n");
        fprintf(fp, "        <boolean name=\"sample_emitters\" value=\"false\"/>\n");
    }
    fprintf(fp, "    </medium>\n\n");
    fprintf(fp, "    <shape type=\"cube\">\n");
    fprintf(fp, "        <transform name=\"to_world\">\n");
    fprintf(fp, "            <scale value=\"%.17g, %.17g, %.17g\"/>\n", half[0], half[1], half[2]);
    fprintf(fp, "            <translate value=\"%.17g, %.17g, %.17g\"/>\n", ctr[0], ctr[1], ctr[2]);
    fprintf(fp, "        </transform>\n");
    if (s->boundary == VPT_BOUNDARY_NULL) {
        fprintf(fp, "        <bsdf type=\"null\"/>\n");
    } else if (s->boundary == VPT_BOUNDARY_SMOOTH) {
        fprintf(fp, "        <bsdf type=\"dielectric\">\n");
        float_prop(fp, 12, "int_ior", s->ior_inside);
        float_prop(fp, 12, "ext_ior", s->ior_outside);
        fprintf(fp, "        </bsdf>\n");
    } else {
        fprintf(fp, "        <bsdf type=\"roughdielectric\">\n");
        fprintf(fp, "            <string name=\"distribution\" value=\"ggx\"/>\n");
        float_prop(fp, 12, "alpha", s->ggx_alpha);
        float_prop(fp, 12, "int_ior", s->ior_inside);
        float_prop(fp, 12, "ext_ior", s->ior_outside);
        fprintf(fp, "            <boolean name=\"sample_visible\" value=\"true\"/>\n");
        fprintf(fp, "        </bsdf>\n");
    }
    fprintf(fp, "        <ref name=\"interior\" id=\"medium\"/>\n");
    fprintf(fp, "    </shape>\n</scene>\n");
}

/* The scene's environment map with its constant environment added to every
 * texel (Mitsuba's one environment emitter), as a colour PFM at path. */
static int export_env_map(const VptScene *s, const char *path)
{
    const VptEnvMap *m = s->env_map;
    VptImage *img = vpt_image_create(m->width, m->height);
    if (!img) return -1;
    for (size_t i = 0; i < (size_t)m->width * (size_t)m->height; i++)
        for (int k = 0; k < 3; k++) img->rgb[3 * i + (size_t)k] = m->radiance[3 * i + (size_t)k] + s->env[k];
    int rc = vpt_image_write_pfm(path, img);
    vpt_image_destroy(img);
    return rc;
}

int vpt_scene_export_mitsuba(const VptScene *s, const char *xml_path, const VptRenderSettings *r)
{
    if (!s->density || !(s->albedo || s->albedo_table) || s->nx <= 0 || s->ny <= 0 || s->nz <= 0)
        return vpt_fail("%s: scene '%s' has no grids to export", xml_path, s->name);
    if (!s->albedo && s->albedo_entries > 1)
        return vpt_fail("%s: scene '%s' classifies its albedo from the filtered density (a transfer function's "
                        "table of %d entries, docs/albedo.md), which a Mitsuba albedo volume (filtered itself) "
                        "cannot express: not exported",
                        xml_path, s->name, s->albedo_entries);
    char dir[4096], stem[256], vol_name[2][300], vol_path[2][4096];
    vpt_dirname(xml_path, dir, sizeof dir);
    stem_of(xml_path, stem, sizeof stem);
    if (!*stem) return vpt_fail("%s: no file name to export to", xml_path);
    static const char *const suffix[2] = {"_density.vol", "_albedo.vol"};
    for (int i = 0; i < 2; i++) {
        snprintf(vol_name[i], sizeof vol_name[i], "%s%s", stem, suffix[i]);
        if (resolve(xml_path, dir, vol_name[i], vol_path[i], sizeof vol_path[i])) return -1;
        if (!strcmp(vol_path[i], xml_path)) return vpt_fail("%s: the XML would overwrite its own grid", xml_path);
    }
    size_t n = (size_t)s->nx * s->ny * s->nz;
    AlbedoForm af = albedo_form(s);
    VptVolGrid dens = {s->nx, s->ny, s->nz, 1, s->density, {0}, {0}};
    VptVolGrid alb = {s->nx, s->ny, s->nz, af == ALBEDO_RGB ? 3 : 1, NULL, {0}, {0}};
    for (int k = 0; k < 3; k++) {
        dens.bbox_min[k] = alb.bbox_min[k] = s->box_min[k];
        dens.bbox_max[k] = alb.bbox_max[k] = s->box_max[k];
    }
    if (af != ALBEDO_CONST) {
        alb.data = vpt_malloc(n * (size_t)alb.channels * sizeof(float));
        if (!alb.data) return -1;
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < alb.channels; k++)
                alb.data[i * (size_t)alb.channels + (size_t)k] = (float)s->albedo[4 * i + (size_t)k] / 255.0f;
    }
    /* the environment map first, beside the grids (written whole or not at
     * all by vpt_image_write_pfm; removed again if the rest fails) */
    char env_name[300] = "", env_path[4096] = "";
    if (s->env_map) {
        snprintf(env_name, sizeof env_name, "%s_envmap.pfm", stem);
        if (resolve(xml_path, dir, env_name, env_path, sizeof env_path)) {
            free(alb.data);
            return -1;
        }
        if (export_env_map(s, env_path)) {
            free(alb.data);
            return -1;
        }
    }
    /* all files to temporaries first, then renamed in order */
    VptOutFile *f[3] = {NULL, NULL, NULL};
    const char *paths[3] = {vol_path[0], vol_path[1], xml_path};
    int nfiles = af == ALBEDO_CONST ? 2 : 3, rc = -1, committed = 0;
    if (af == ALBEDO_CONST) paths[1] = xml_path;
    for (int i = 0; i < nfiles; i++)
        if (!(f[i] = vpt_outfile_open(paths[i]))) goto out;
    if (vpt_vol_grid_write(vpt_outfile_stream(f[0]), vol_path[0], &dens)) goto out;
    if (af != ALBEDO_CONST && vpt_vol_grid_write(vpt_outfile_stream(f[1]), vol_path[1], &alb)) goto out;
    FILE *xf = vpt_outfile_stream(f[nfiles - 1]);
    write_xml(xf, s, r, vol_name[0], vol_name[1], af, env_name);
    if (ferror(xf)) {
        vpt_fail_errno("error writing '%s'", xml_path);
        goto out;
    }
    for (; committed < nfiles; committed++) {
        VptOutFile *c = f[committed];
        f[committed] = NULL;
        if (vpt_outfile_commit(c)) {
            for (int j = 0; j < committed; j++) unlink(paths[j]);
            committed++;
            goto out;
        }
    }
    rc = 0;
out:
    for (int i = committed; i < nfiles; i++) vpt_outfile_abort(f[i]);
    if (rc && env_path[0]) unlink(env_path);
    free(alb.data);
    return rc;
}
