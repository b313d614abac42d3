/* Mitsuba interoperability, the export side (scenes/mitsuba/mitsuba_xml.h): export
 * then import gives back the same scene, field for field, for every built-in
 * scene, loaded volumes and edited scenes; the exported XML says the right
 * things, read back with expat directly (not through the parser under test),
 * and the .vol headers too; a failed export leaves nothing. Reading scene
 * files of other origins, and their errors: test_mitsuba_import.c. */
#include "tests/harness/test.h"
#include "tests/test_mitsuba.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "image/image.h"
#include "scenes/env_map.h"
#include "scenes/mitsuba/mitsuba_xml.h"
#include "scenes/scene.h"
#include "scenes/volume.h"

#include <expat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* A voxel's RGBA8 albedo: its grid's texel, or its table's entry. */
static const uint8_t *voxel_albedo(const VptScene *s, size_t i)
{
    if (s->albedo) return s->albedo + 4 * i;
    return s->albedo_table[vpt_albedo_entry(s->density[i], (float)s->albedo_entries, s->albedo_entries)];
}

/* Every field of two scenes that determines images and workload. */
static void check_same_scene(const VptScene *a, const VptScene *b)
{
    CHECK_EQ_INT(a->nx, b->nx);
    CHECK_EQ_INT(a->ny, b->ny);
    CHECK_EQ_INT(a->nz, b->nz);
    if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz) return;
    size_t n = (size_t)a->nx * a->ny * a->nz;
    CHECK_MSG(memcmp(a->density, b->density, n * sizeof(float)) == 0, "densities differ");
    /* a loaded volume's one-entry table (the identity transfer's white)
     * comes back as a grid of that colour: the same medium (the digests
     * below agree too) */
    size_t albedo_diff = 0;
    for (size_t i = 0; i < n; i++) albedo_diff += memcmp(voxel_albedo(a, i), voxel_albedo(b, i), 4) != 0;
    CHECK_MSG(albedo_diff == 0, "albedos differ at %zu voxels", albedo_diff);
    CHECK(a->density_max == b->density_max);
    CHECK(a->density_scale == b->density_scale);
    for (int k = 0; k < 3; k++) {
        CHECK(a->box_min[k] == b->box_min[k]);
        CHECK(a->box_max[k] == b->box_max[k]);
        CHECK(a->cam_pos[k] == b->cam_pos[k]);
        CHECK(a->cam_target[k] == b->cam_target[k]);
        CHECK(a->cam_up[k] == b->cam_up[k]);
        CHECK(a->env[k] == b->env[k]);
        CHECK(a->sun_dir[k] == b->sun_dir[k]);
        CHECK(a->sun_irradiance[k] == b->sun_irradiance[k]);
    }
    CHECK(a->sun_radius_deg == b->sun_radius_deg);
    CHECK(a->fov_deg == b->fov_deg);
    CHECK_EQ_INT(a->boundary, b->boundary);
    CHECK(a->ior_inside == b->ior_inside);
    CHECK(a->ior_outside == b->ior_outside);
    CHECK(a->ggx_alpha == b->ggx_alpha);
    CHECK(a->hg_g == b->hg_g);
    CHECK_EQ_INT(a->width, b->width);
    CHECK_EQ_INT(a->height, b->height);
    CHECK_EQ_INT(a->spp, b->spp);
    char ha[65], hb[65];
    REQUIRE(vpt_scene_digest(a, ha) == 0 && vpt_scene_digest(b, hb) == 0);
    CHECK_MSG(!strcmp(ha, hb), "digests differ: %s vs %s", ha, hb);
}

/* Exports s to <tmp>/<stem>.xml and imports it again. */
static VptScene *round_trip(const VptScene *s, const char *stem, const VptRenderSettings *r, VptMitsubaIntegrator *in)
{
    char xml[512], name[128];
    snprintf(name, sizeof name, "%s.xml", stem);
    tmp(xml, sizeof xml, name);
    REQUIRE_MSG(vpt_scene_export_mitsuba(s, xml, r) == 0, "export: %s", vpt_errmsg());
    VptScene *t = vpt_scene_from_mitsuba(xml, in);
    REQUIRE_MSG(t, "import: %s", vpt_errmsg());
    return t;
}

static void round_trip_builtin(const char *name)
{
    VptScene *s = vpt_scene_builtin(name);
    REQUIRE(s);
    VptMitsubaIntegrator in = {-5, -5};
    VptScene *t = round_trip(s, name, NULL, &in);
    check_same_scene(s, t);
    CHECK_EQ_INT(in.max_depth, 0);
    CHECK_EQ_INT(in.rr_depth, -1);
    /* the name: file stem, '-', 8 hex digits of the content digest */
    char hex[65], want[80];
    REQUIRE(vpt_scene_digest(s, hex) == 0);
    snprintf(want, sizeof want, "%s-%.8s", name, hex);
    CHECK_MSG(!strcmp(t->name, want), "name '%s', expected '%s'", t->name, want);
    CHECK_STR_CONTAINS(t->source, "Mitsuba 3 scene file");
    vpt_scene_destroy(t);
    vpt_scene_destroy(s);
}

TEST(mitsuba_roundtrip_cgg_logo) { round_trip_builtin("cgg-logo"); }
TEST(mitsuba_roundtrip_ad) { round_trip_builtin("ad"); }
TEST(mitsuba_roundtrip_artifix) { round_trip_builtin("artifix"); }
TEST(mitsuba_roundtrip_manix) { round_trip_builtin("manix"); }
TEST(mitsuba_roundtrip_smoke) { round_trip_builtin("smoke"); }
TEST(mitsuba_roundtrip_bucky) { round_trip_builtin("bucky"); }

/* Every scene parameter away from the built-ins' values, a workload and
 * depths: they all come back. */
TEST(mitsuba_roundtrip_edited_scene)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    const float pos[3] = {3.25f, -1.5f, 7.0f}, tgt[3] = {0.1f, 0.2f, -0.3f}, up[3] = {0.0f, 0.6f, 0.8f};
    for (int k = 0; k < 3; k++) {
        s->cam_pos[k] = pos[k];
        s->cam_target[k] = tgt[k];
        s->cam_up[k] = up[k];
        s->box_min[k] = -0.3f + 0.1f * (float)k;
        s->box_max[k] = 0.7f / 3.0f + 0.2f * (float)k;
    }
    s->env[0] = 0.25f;
    s->env[1] = 1.0f / 3.0f;
    s->env[2] = 2.0f;
    s->fov_deg = 13.37f;
    s->hg_g = -0.45f;
    s->density_scale = 123.456f;
    s->ior_inside = 1.333f;
    s->ior_outside = 1.0f;
    s->ggx_alpha = 0.37f;
    REQUIRE(vpt_scene_finalize(s) == 0);
    VptRenderSettings r = {64, 48, 7, 0, 12, 3, 0};
    VptMitsubaIntegrator in;
    VptScene *t = round_trip(s, "edited", &r, &in);
    s->width = 64; /* the workload written is the command's */
    s->height = 48;
    s->spp = 7;
    check_same_scene(s, t);
    CHECK_EQ_INT(in.max_depth, 12);
    CHECK_EQ_INT(in.rr_depth, 3);
    vpt_scene_destroy(t);

    s->boundary = VPT_BOUNDARY_SMOOTH; /* a smooth dielectric has no alpha */
    s->ggx_alpha = 0.0f;
    r.rr_depth = 0; /* RR from depth 0 is Mitsuba's rr_depth 1: the same paths */
    t = round_trip(s, "smooth", &r, &in);
    check_same_scene(s, t);
    CHECK_EQ_INT(in.rr_depth, 1);
    vpt_scene_destroy(t);
    vpt_scene_destroy(s);
}

/* A scene from a .vol file (--volume) and its round trip; with the thesis'
 * smoke.vol when ../shared/data is there, and always with a written one. */
TEST(mitsuba_roundtrip_loaded_volume)
{
    char vol[512];
    tmp(vol, sizeof vol, "small.vol");
    VptVolGrid g = {5, 4, 3, 1, NULL, {-1.0f, -0.5f, 0.0f}, {1.0f, 0.5f, 0.75f}};
    g.data = malloc(60 * sizeof(float));
    REQUIRE(g.data);
    for (int i = 0; i < 60; i++) g.data[i] = (float)((i * 37) % 61) / 60.0f;
    REQUIRE(vpt_vol_grid_save(vol, &g) == 0);
    free(g.data);
    VptVolumeSceneOptions vo;
    memset(&vo, 0, sizeof vo);
    vo.like = "smoke";
    VptScene *s = vpt_scene_from_volume(vol, &vo);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    VptScene *t = round_trip(s, "small", NULL, NULL);
    check_same_scene(s, t);
    vpt_scene_destroy(t);
    vpt_scene_destroy(s);

    const char *d = vpt_test_shared_data();
    if (!d) SKIP("written volume checked; no shared data directory for the thesis' smoke.vol");
    snprintf(vol, sizeof vol, "%s/thesis/smoke.vol", d);
    s = vpt_scene_from_volume(vol, &vo);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    t = round_trip(s, "thesis_smoke", NULL, NULL);
    check_same_scene(s, t);
    vpt_scene_destroy(t);
    vpt_scene_destroy(s);
}

/* ------------------------------------------------------------ the XML as written, read with expat */

#define MAX_ELEMS 256

typedef struct {
    char path[160];           /* "scene/shape/bsdf/float" */
    char attr[8][2][200];
    int nattr;
} Elem;

typedef struct {
    Elem e[MAX_ELEMS];
    int n;
    char stack[16][32];
    int depth;
} Doc;

static void XMLCALL d_start(void *ud, const XML_Char *tag, const XML_Char **attrs)
{
    Doc *d = ud;
    if (d->depth < 16) snprintf(d->stack[d->depth], sizeof d->stack[0], "%s", tag);
    d->depth++;
    if (d->n == MAX_ELEMS) return;
    Elem *e = &d->e[d->n++];
    e->path[0] = '\0';
    for (int i = 0; i < d->depth && i < 16; i++) {
        if (i) strncat(e->path, "/", sizeof e->path - strlen(e->path) - 1);
        strncat(e->path, d->stack[i], sizeof e->path - strlen(e->path) - 1);
    }
    for (e->nattr = 0; attrs[2 * e->nattr] && e->nattr < 8; e->nattr++) {
        snprintf(e->attr[e->nattr][0], sizeof e->attr[0][0], "%s", attrs[2 * e->nattr]);
        snprintf(e->attr[e->nattr][1], sizeof e->attr[0][1], "%s", attrs[2 * e->nattr + 1]);
    }
}

static void XMLCALL d_end(void *ud, const XML_Char *tag)
{
    (void)tag;
    ((Doc *)ud)->depth--;
}

static Doc *read_doc(const char *path)
{
    FILE *fp = fopen(path, "rb");
    REQUIRE_MSG(fp, "cannot read %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    Doc *d = calloc(1, sizeof *d);
    XML_Parser p = XML_ParserCreate(NULL);
    XML_SetUserData(p, d);
    XML_SetElementHandler(p, d_start, d_end);
    int ok = XML_Parse(p, buf, (int)n, 1) == XML_STATUS_OK;
    XML_ParserFree(p);
    REQUIRE_MSG(ok, "%s is not well-formed XML", path);
    return d;
}

static const char *eattr(const Elem *e, const char *key)
{
    for (int i = 0; i < e->nattr; i++)
        if (!strcmp(e->attr[i][0], key)) return e->attr[i][1];
    return NULL;
}

/* The attribute `key` of the element at `path` whose attribute `match` is
 * `mval` (match NULL: the first element at path). */
static const char *doc_get(const Doc *d, const char *path, const char *match, const char *mval, const char *key)
{
    for (int i = 0; i < d->n; i++) {
        if (strcmp(d->e[i].path, path)) continue;
        if (match && (!eattr(&d->e[i], match) || strcmp(eattr(&d->e[i], match), mval))) continue;
        return eattr(&d->e[i], key);
    }
    return NULL;
}

#define CHECK_ATTR(d, path, match, mval, key, want)                                                            \
    do {                                                                                                       \
        const char *got_ = doc_get(d, path, match, mval, key);                                                 \
        CHECK_MSG(got_ && !strcmp(got_, want), "%s[%s=%s] %s: '%s', expected '%s'", path, match ? match : "", \
                  mval ? mval : "", key, got_ ? got_ : "(missing)", want);                                     \
    } while (0)

static double doc_num(const Doc *d, const char *path, const char *name)
{
    const char *v = doc_get(d, path, "name", name, "value");
    CHECK_MSG(v, "%s[name=%s] missing", path, name);
    return v ? strtod(v, NULL) : NAN;
}

/* The .vol header: dims, channels, bbox. */
static void check_vol_header(const char *path, int nx, int ny, int nz, int channels, const float *bmin,
                             const float *bmax)
{
    FILE *fp = fopen(path, "rb");
    REQUIRE_MSG(fp, "cannot read %s", path);
    unsigned char h[48];
    REQUIRE(fread(h, 1, 48, fp) == 48);
    fclose(fp);
    CHECK(memcmp(h, "VOL\3", 4) == 0);
    int32_t v[5];
    float b[6];
    memcpy(v, h + 4, sizeof v);
    memcpy(b, h + 24, sizeof b);
    CHECK_EQ_INT(v[0], 1);
    CHECK_EQ_INT(v[1], nx);
    CHECK_EQ_INT(v[2], ny);
    CHECK_EQ_INT(v[3], nz);
    CHECK_EQ_INT(v[4], channels);
    for (int k = 0; k < 3; k++) {
        CHECK(b[k] == bmin[k]);
        CHECK(b[3 + k] == bmax[k]);
    }
}

TEST(mitsuba_export_xml_values)
{
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s);
    char xml[512], vol[512];
    VptRenderSettings r = {200, 100, 33, 0, 0, -1, 0};
    REQUIRE_MSG(vpt_scene_export_mitsuba(s, tmp(xml, sizeof xml, "manix.xml"), &r) == 0, "%s", vpt_errmsg());
    Doc *d = read_doc(xml);
    CHECK_ATTR(d, "scene", NULL, NULL, "version", "3.0.0");
    CHECK_ATTR(d, "scene/default", "name", "spp", "value", "33");
    CHECK_ATTR(d, "scene/default", "name", "resx", "value", "200");
    CHECK_ATTR(d, "scene/default", "name", "resy", "value", "100");
    CHECK_ATTR(d, "scene/integrator", NULL, NULL, "type", "volpath");
    CHECK_ATTR(d, "scene/integrator/integer", "name", "max_depth", "value", "-1");
    CHECK_NEAR(doc_num(d, "scene/integrator/integer", "rr_depth"), VPT_MITSUBA_NO_RR, 0);
    CHECK_ATTR(d, "scene/sensor", NULL, NULL, "type", "perspective");
    CHECK_ATTR(d, "scene/sensor/string", "name", "fov_axis", "value", "x");
    CHECK(strtof(doc_get(d, "scene/sensor/float", "name", "fov", "value"), NULL) == s->fov_deg);
    CHECK_ATTR(d, "scene/sensor/transform/lookat", NULL, NULL, "origin", "0, 0, 100");
    CHECK_ATTR(d, "scene/sensor/transform/lookat", NULL, NULL, "target", "0, 0, 0");
    CHECK_ATTR(d, "scene/sensor/transform/lookat", NULL, NULL, "up", "0, 1, 0");
    CHECK_ATTR(d, "scene/sensor/sampler", NULL, NULL, "type", "independent");
    CHECK_ATTR(d, "scene/sensor/sampler/integer", "name", "sample_count", "value", "$spp");
    CHECK_ATTR(d, "scene/sensor/film", NULL, NULL, "type", "hdrfilm");
    CHECK_ATTR(d, "scene/sensor/film/integer", "name", "width", "value", "$resx");
    CHECK_ATTR(d, "scene/sensor/film/integer", "name", "height", "value", "$resy");
    CHECK_ATTR(d, "scene/sensor/film/string", "name", "pixel_format", "value", "rgb");
    CHECK_ATTR(d, "scene/sensor/film/rfilter", NULL, NULL, "type", "box");
    CHECK_ATTR(d, "scene/emitter", NULL, NULL, "type", "constant");
    CHECK_ATTR(d, "scene/emitter/rgb", "name", "radiance", "value", "1, 1, 1");
    CHECK_ATTR(d, "scene/medium", NULL, NULL, "type", "heterogeneous");
    CHECK_ATTR(d, "scene/medium/float", "name", "scale", "value", "100");
    CHECK_ATTR(d, "scene/medium/volume", "name", "sigma_t", "type", "gridvolume");
    CHECK_ATTR(d, "scene/medium/volume/string", "value", "manix_density.vol", "name", "filename");
    CHECK_ATTR(d, "scene/medium/volume/string", "value", "manix_albedo.vol", "name", "filename");
    CHECK_ATTR(d, "scene/medium/volume/transform/scale", NULL, NULL, "value", "1, 0.8984375, 1");
    CHECK_ATTR(d, "scene/medium/volume/transform/translate", NULL, NULL, "value", "-0.5, -0.44921875, -0.5");
    CHECK_ATTR(d, "scene/medium/phase", NULL, NULL, "type", "isotropic");
    CHECK_ATTR(d, "scene/medium/boolean", "name", "sample_emitters", "value", "false");
    CHECK_ATTR(d, "scene/shape", NULL, NULL, "type", "cube");
    CHECK_ATTR(d, "scene/shape/transform/scale", NULL, NULL, "value", "0.5, 0.44921875, 0.5");
    CHECK_ATTR(d, "scene/shape/transform/translate", NULL, NULL, "value", "0, 0, 0");
    CHECK_ATTR(d, "scene/shape/bsdf", NULL, NULL, "type", "roughdielectric");
    CHECK_ATTR(d, "scene/shape/bsdf/string", "name", "distribution", "value", "ggx");
    CHECK_ATTR(d, "scene/shape/bsdf/float", "name", "alpha", "value", "0.1");
    CHECK_ATTR(d, "scene/shape/bsdf/float", "name", "int_ior", "value", "1.05");
    CHECK_ATTR(d, "scene/shape/bsdf/float", "name", "ext_ior", "value", "1.01");
    CHECK_ATTR(d, "scene/shape/bsdf/boolean", "name", "sample_visible", "value", "true");
    CHECK_ATTR(d, "scene/shape/ref", "name", "interior", "id", "medium");
    free(d);
    check_vol_header(tmp(vol, sizeof vol, "manix_density.vol"), 128, 115, 128, 1, s->box_min, s->box_max);
    check_vol_header(tmp(vol, sizeof vol, "manix_albedo.vol"), 128, 115, 128, 3, s->box_min, s->box_max);
    /* a voxel's values: density as is, albedo / 255 */
    VptVolGrid g;
    REQUIRE(vpt_vol_grid_load(tmp(vol, sizeof vol, "manix_albedo.vol"), 0, &g) == 0);
    size_t i = (size_t)64 + 128 * ((size_t)57 + 115 * 64);
    for (int k = 0; k < 3; k++) CHECK(g.data[3 * i + (size_t)k] == (float)s->albedo[4 * i + (size_t)k] / 255.0f);
    vpt_vol_grid_free(&g);
    vpt_scene_destroy(s);

    /* smoke: index-matched boundary, a constant grey albedo */
    s = vpt_scene_builtin("smoke");
    REQUIRE(s);
    REQUIRE(vpt_scene_export_mitsuba(s, tmp(xml, sizeof xml, "smoke.xml"), NULL) == 0);
    d = read_doc(xml);
    CHECK_ATTR(d, "scene/shape/bsdf", NULL, NULL, "type", "null");
    CHECK_ATTR(d, "scene/medium/float", "name", "scale", "value", "800");
    char want[64];
    snprintf(want, sizeof want, "%.6g, %.6g, %.6g", s->albedo[0] / 255.0f, s->albedo[1] / 255.0f, s->albedo[2] / 255.0f);
    CHECK_ATTR(d, "scene/medium/rgb", "name", "albedo", "value", want);
    CHECK_ATTR(d, "scene/sensor/float", "name", "fov", "value", "0.33");
    CHECK_ATTR(d, "scene/default", "name", "spp", "value", "100");
    CHECK(!exists(tmp(vol, sizeof vol, "smoke_albedo.vol")));
    free(d);
    vpt_scene_destroy(s);

    /* hg with g, a smooth dielectric */
    s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    s->hg_g = 0.5f;
    s->boundary = VPT_BOUNDARY_SMOOTH;
    REQUIRE(vpt_scene_export_mitsuba(s, tmp(xml, sizeof xml, "bucky.xml"), NULL) == 0);
    d = read_doc(xml);
    CHECK_ATTR(d, "scene/medium/phase", NULL, NULL, "type", "hg");
    CHECK_ATTR(d, "scene/medium/phase/float", "name", "g", "value", "0.5");
    CHECK_ATTR(d, "scene/shape/bsdf", NULL, NULL, "type", "dielectric");
    CHECK(doc_get(d, "scene/shape/bsdf/float", "name", "alpha", "value") == NULL);
    free(d);
    vpt_scene_destroy(s);
}

/* An environment map: an envmap emitter of the map with the constant
 * environment folded in (Mitsuba has one environment emitter), beside the
 * XML, and emitter sampling on; back the same map, with no constant
 * environment left over. */
TEST(mitsuba_roundtrip_env_map)
{
    VptScene *s = vpt_scene_builtin("smoke");
    REQUIRE(s);
    VptImage *img = vpt_image_create(8, 4);
    REQUIRE(img);
    for (int i = 0; i < 96; i++) img->rgb[i] = 0.01f * (float)(i % 13);
    char pfm[512];
    REQUIRE(vpt_image_write_pfm(tmp(pfm, sizeof pfm, "sky_in.pfm"), img) == 0);
    vpt_image_destroy(img);
    VptLightOverride o = {0, {0}, {0}, 0, 1, {0.05, 0.08, 0.15}, pfm, 0};
    REQUIRE_MSG(vpt_scene_set_light(s, &o) == 0, "%s", vpt_errmsg());
    char xml[512];
    REQUIRE(vpt_scene_export_mitsuba(s, tmp(xml, sizeof xml, "envmap.xml"), NULL) == 0);
    Doc *d = read_doc(xml);
    CHECK_ATTR(d, "scene/emitter/string", "name", "filename", "value", "envmap_envmap.pfm");
    CHECK(doc_get(d, "scene/emitter/rgb", "name", "radiance", "value") == NULL); /* no constant emitter */
    CHECK_ATTR(d, "scene/medium/boolean", "name", "sample_emitters", "value", "true");
    free(d);
    VptScene *t = vpt_scene_from_mitsuba(xml, NULL);
    REQUIRE_MSG(t, "%s", vpt_errmsg());
    REQUIRE(t->env_map);
    CHECK(t->env_map->width == 8 && t->env_map->height == 4);
    for (int i = 0; i < 96; i++)
        CHECK_MSG(t->env_map->radiance[i] == s->env_map->radiance[i] + s->env[i % 3], "texel value %d", i);
    CHECK(t->env[0] == 0.0f && t->env[1] == 0.0f && t->env[2] == 0.0f);
    CHECK(!vpt_scene_has_sun(t));
    vpt_scene_destroy(t);
    vpt_scene_destroy(s);
}

/* A sun: a directional emitter toward -sun_dir, sample_emitters on the
 * medium, and back the same; a sun with a radius goes out as a delta light,
 * said in a comment. */
TEST(mitsuba_roundtrip_sun)
{
    VptScene *s = vpt_scene_builtin("smoke"); /* the null boundary */
    REQUIRE(s);
    VptLightOverride o = {1, {0.3, 1, 0.2}, {1, 0.9, 0.8}, 0, 1, {0.05, 0.08, 0.15}, NULL, 0};
    REQUIRE_MSG(vpt_scene_set_light(s, &o) == 0, "%s", vpt_errmsg());
    char xml[512];
    REQUIRE(vpt_scene_export_mitsuba(s, tmp(xml, sizeof xml, "sun.xml"), NULL) == 0);
    Doc *d = read_doc(xml);
    CHECK_ATTR(d, "scene/emitter/rgb", "name", "radiance", "value", "0.05, 0.08, 0.15");
    CHECK_ATTR(d, "scene/emitter/rgb", "name", "irradiance", "value", "1, 0.9, 0.8");
    const char *dir = doc_get(d, "scene/emitter/vector", "name", "direction", "value");
    REQUIRE(dir);
    float v[3];
    REQUIRE(sscanf(dir, "%f, %f, %f", &v[0], &v[1], &v[2]) == 3);
    for (int k = 0; k < 3; k++) CHECK_MSG(v[k] == -s->sun_dir[k], "direction %s: component %d", dir, k);
    CHECK_ATTR(d, "scene/medium/boolean", "name", "sample_emitters", "value", "true");
    free(d);
    VptScene *t = vpt_scene_from_mitsuba(xml, NULL);
    REQUIRE_MSG(t, "%s", vpt_errmsg());
    check_same_scene(s, t);
    CHECK(vpt_scene_has_sun(t));
    vpt_scene_destroy(t);

    /* a sun with a disc: exported as Mitsuba's delta light, and said so */
    s->sun_radius_deg = 0.27f;
    REQUIRE(vpt_scene_finalize(s) == 0);
    REQUIRE(vpt_scene_export_mitsuba(s, tmp(xml, sizeof xml, "disc.xml"), NULL) == 0);
    static char text[1 << 16];
    vpt_test_read_tail(xml, text, sizeof text);
    CHECK_STR_CONTAINS(text, "angular radius of 0.27 degrees");
    CHECK_STR_CONTAINS(text, "delta light");
    t = vpt_scene_from_mitsuba(xml, NULL);
    REQUIRE_MSG(t, "%s", vpt_errmsg());
    CHECK(t->sun_radius_deg == 0.0f);
    t->sun_radius_deg = s->sun_radius_deg;
    for (int k = 0; k < 3; k++) CHECK(t->sun_dir[k] == s->sun_dir[k] && t->sun_irradiance[k] == s->sun_irradiance[k]);
    vpt_scene_destroy(t);

    /* ... which a dielectric boundary cannot take: the import says why */
    s->boundary = VPT_BOUNDARY_SMOOTH;
    s->ior_inside = 1.33f;
    s->ior_outside = 1.0f;
    REQUIRE_MSG(vpt_scene_finalize(s) == 0, "%s", vpt_errmsg());
    REQUIRE(vpt_scene_export_mitsuba(s, tmp(xml, sizeof xml, "glass.xml"), NULL) == 0);
    t = vpt_scene_from_mitsuba(xml, NULL);
    CHECK(!t);
    CHECK_STR_CONTAINS(vpt_errmsg(), "delta light");
    vpt_scene_destroy(t);
    vpt_scene_destroy(s);
}

/* Nothing new is left behind when an export fails. */
TEST(mitsuba_export_failure_leaves_nothing)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    char dir[512], xml[600], vol[600];
    /* a directory that is not there */
    snprintf(xml, sizeof xml, "%s/no/such/dir/b.xml", vpt_test_tmpdir());
    CHECK(vpt_scene_export_mitsuba(s, xml, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "no/such/dir");
    /* the XML's name taken by a directory: its grids were written first and
     * are removed again */
    tmp(xml, sizeof xml, "d.xml");
    REQUIRE(mkdir(xml, 0755) == 0);
    CHECK(vpt_scene_export_mitsuba(s, xml, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "d.xml");
    CHECK(!exists(tmp(vol, sizeof vol, "d_density.vol")));
    CHECK(!exists(tmp(vol, sizeof vol, "d_albedo.vol")));
    /* a read-only directory (not for root, who writes anyway) */
    tmp(dir, sizeof dir, "ro");
    REQUIRE(mkdir(dir, 0555) == 0);
    snprintf(xml, sizeof xml, "%s/b.xml", dir);
    if (access(dir, W_OK) == 0) {
        vpt_scene_destroy(s);
        SKIP("checked a missing directory and a taken name; running as a user who can write a read-only directory");
    }
    CHECK(vpt_scene_export_mitsuba(s, xml, NULL) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), dir);
    vpt_scene_destroy(s);
}
