/* Mitsuba interoperability (scenes/mitsuba_xml.h): export then import gives
 * back the same scene, field for field, for every built-in scene, loaded
 * volumes and edited scenes; the exported XML says the right things, read
 * back with expat directly (not through the parser under test), and the .vol
 * headers too; the Mitsuba 0.5 dialect of the thesis' files loads; malformed
 * files, missing files and unsupported plugins or properties fail with
 * messages naming the element and line. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "scenes/mitsuba_xml.h"
#include "scenes/scene.h"
#include "scenes/volume.h"

#include <expat.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static const char *tmp(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", vpt_test_tmpdir(), name);
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    REQUIRE_MSG(fp, "cannot write %s", path);
    fputs(text, fp);
    fclose(fp);
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* out = in with every `from` replaced by `to` (in may be out). */
static void replace_all(char *out, size_t n, const char *in, const char *from, const char *to)
{
    static char buf[16384];
    size_t o = 0, lf = strlen(from), lt = strlen(to);
    for (const char *p = in; *p;) {
        if (!strncmp(p, from, lf)) {
            REQUIRE(o + lt < sizeof buf);
            memcpy(buf + o, to, lt);
            o += lt;
            p += lf;
        } else {
            REQUIRE(o + 1 < sizeof buf);
            buf[o++] = *p++;
        }
    }
    buf[o] = '\0';
    REQUIRE(o < n);
    memcpy(out, buf, o + 1);
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
    CHECK_MSG(memcmp(a->albedo, b->albedo, n * 4) == 0, "albedos differ");
    CHECK(a->density_max == b->density_max);
    CHECK(a->density_scale == b->density_scale);
    for (int k = 0; k < 3; k++) {
        CHECK(a->box_min[k] == b->box_min[k]);
        CHECK(a->box_max[k] == b->box_max[k]);
        CHECK(a->cam_pos[k] == b->cam_pos[k]);
        CHECK(a->cam_target[k] == b->cam_target[k]);
        CHECK(a->cam_up[k] == b->cam_up[k]);
        CHECK(a->env[k] == b->env[k]);
    }
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

/* ------------------------------------------------------------ reading files of that shape */

/* A minimal scene around the given medium / shape parts. */
static void scene_text(char *out, size_t n, const char *version, const char *sensor_extra, const char *medium,
                       const char *shape_inner, const char *extra)
{
    snprintf(out, n,
             "<?xml version=\"1.0\"?>\n"
             "<scene version=\"%s\">\n"
             "  <integrator type=\"volpath\"/>\n"
             "  <sensor type=\"perspective\">\n"
             "    <float name=\"fov\" value=\"10\"/>\n"
             "    <transform name=\"to_world\"><lookat origin=\"0,0,10\" target=\"0,0,0\" up=\"0,1,0\"/></transform>\n"
             "%s"
             "    <sampler type=\"independent\"><integer name=\"sample_count\" value=\"8\"/></sampler>\n"
             "    <film type=\"hdrfilm\"><integer name=\"width\" value=\"16\"/><integer name=\"height\" value=\"8\"/>"
             "<rfilter type=\"box\"/></film>\n"
             "  </sensor>\n"
             "  <emitter type=\"constant\"><rgb name=\"radiance\" value=\"1, 0.5, 0.25\"/></emitter>\n"
             "  <medium type=\"heterogeneous\" id=\"m\">\n%s  </medium>\n"
             "  <shape type=\"cube\">\n%s    <ref name=\"interior\" id=\"m\"/>\n  </shape>\n"
             "%s"
             "</scene>\n",
             version, sensor_extra, medium, shape_inner, extra);
}

/* Writes text to <tmp>/<name> and loads it; returns the scene or NULL. */
static VptScene *load_text(const char *name, const char *text, VptMitsubaIntegrator *in)
{
    char path[512];
    write_text(tmp(path, sizeof path, name), text);
    VptScene *s = vpt_scene_from_mitsuba(path, in);
    if (!s) vpt_test_log("%s: %s", name, vpt_errmsg());
    return s;
}

/* The error of loading text must contain each of the given pieces. */
static void expect_error(const char *text, const char *const *pieces)
{
    VptScene *s = load_text("bad.xml", text, NULL);
    CHECK_MSG(!s, "a bad scene loaded:\n%s", text);
    vpt_scene_destroy(s);
    for (int i = 0; pieces[i]; i++) CHECK_STR_CONTAINS(vpt_errmsg(), pieces[i]);
}

#define EXPECT_ERROR(text, ...)                                     \
    do {                                                            \
        const char *const pieces_[] = {__VA_ARGS__, NULL};          \
        expect_error(text, pieces_);                                \
    } while (0)

static const char *const NULL_BSDF = "    <bsdf type=\"null\"/>\n";
static const char *const CONST_MEDIUM = "    <float name=\"sigma_t\" value=\"2\"/>\n    <float name=\"scale\" value=\"3\"/>\n"
                                        "    <rgb name=\"albedo\" value=\"0.5, 0.6, 0.7\"/>\n";

TEST(mitsuba_import_constant_medium_and_defaults)
{
    static char text[8192];
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, "    <bsdf type=\"null\"/>\n", "");
    VptMitsubaIntegrator in;
    VptScene *s = load_text("const.xml", text, &in);
    REQUIRE(s);
    CHECK_EQ_INT(s->nx * s->ny * s->nz, 1);
    CHECK(s->density[0] == 1.0f);
    CHECK(s->density_scale == 6.0f); /* sigma_t 2 > 1 is normalized into the scale */
    CHECK_EQ_INT(s->albedo[0], lrintf(255.0f * 0.5f));
    CHECK_EQ_INT(s->albedo[1], lrintf(255.0f * 0.6f));
    CHECK_EQ_INT(s->albedo[2], lrintf(255.0f * 0.7f));
    CHECK(s->box_min[0] == -1.0f && s->box_max[2] == 1.0f);
    CHECK(s->env[1] == 0.5f);
    CHECK_EQ_INT(s->width, 16);
    CHECK_EQ_INT(s->height, 8);
    CHECK_EQ_INT(s->spp, 8);
    CHECK_EQ_INT(s->boundary, VPT_BOUNDARY_NULL);
    CHECK(s->fov_deg == 10.0f);
    CHECK_EQ_INT(in.max_depth, 0);
    CHECK_EQ_INT(in.rr_depth, 5); /* Mitsuba's default */
    vpt_scene_destroy(s);

    /* <default> and $name, fov along y, a camera by matrix */
    snprintf(text, sizeof text,
             "<scene version=\"3.0.0\">\n"
             "  <default name=\"res\" value=\"16\"/><default name=\"resx\" value=\"32\"/>\n"
             "  <integrator type=\"volpath\"><integer name=\"max_depth\" value=\"7\"/>"
             "<integer name=\"rr_depth\" value=\"1000000\"/></integrator>\n"
             "  <sensor type=\"perspective\"><float name=\"fov\" value=\"10\"/><string name=\"fov_axis\" value=\"y\"/>\n"
             "    <transform name=\"to_world\"><matrix value=\"-1 0 0 0  0 1 0 0  0 0 -1 10  0 0 0 1\"/></transform>\n"
             "    <film type=\"hdrfilm\"><integer name=\"width\" value=\"$resx\"/><integer name=\"height\" value=\"$res\"/>"
             "<rfilter type=\"box\"/></film>\n"
             "  </sensor>\n"
             "  <medium type=\"heterogeneous\" id=\"m\">\n%s  </medium>\n"
             "  <shape type=\"cube\"><bsdf type=\"null\"/><ref name=\"interior\" id=\"m\"/></shape>\n"
             "</scene>\n",
             CONST_MEDIUM);
    s = load_text("defaults.xml", text, &in);
    REQUIRE(s);
    CHECK_EQ_INT(s->width, 32);
    CHECK_EQ_INT(s->height, 16);
    CHECK_EQ_INT(s->spp, 4);
    CHECK_EQ_INT(in.max_depth, 7);
    CHECK_EQ_INT(in.rr_depth, -1);
    /* tan(fx/2) = tan(fy/2) * w / h */
    CHECK_NEAR(tan(0.5 * s->fov_deg * M_PI / 180.0), tan(0.5 * 10.0 * M_PI / 180.0) * 2.0, 1e-6);
    CHECK(s->cam_pos[2] == 10.0f && s->cam_target[2] == 9.0f && s->cam_up[1] == 1.0f);
    CHECK(s->env[0] == 0.0f); /* no emitter: black */
    vpt_scene_destroy(s);
}

/* The Mitsuba 0.5 dialect of the thesis' scene files: camelCase names, a
 * density volume, method woodcock, an obj box mesh, a BSDF by reference, a
 * shape without BSDF being index-matched, grids placed by their bbox. */
TEST(mitsuba_import_thesis_dialect)
{
    char path[512], xml[600];
    /* a 4x3x2 density grid and a 3-channel albedo grid over one box */
    VptVolGrid g = {4, 3, 2, 1, NULL, {-0.5f, -0.25f, -0.125f}, {0.5f, 0.25f, 0.125f}};
    float dens[24], alb[72];
    for (int i = 0; i < 24; i++) dens[i] = (float)i / 23.0f;
    for (int i = 0; i < 72; i++) alb[i] = (float)(i % 7) / 6.0f;
    g.data = dens;
    REQUIRE(vpt_vol_grid_save(tmp(path, sizeof path, "density.vol"), &g) == 0);
    g.channels = 3;
    g.data = alb;
    REQUIRE(vpt_vol_grid_save(tmp(path, sizeof path, "albedo.vol"), &g) == 0);
    write_text(tmp(path, sizeof path, "bounds.obj"),
               "# box\nv 0.5 0.25 -0.125\nv 0.5 -0.25 -0.125\nv -0.5 -0.25 -0.125\nv -0.5 0.25 -0.125\n"
               "v 0.500000 0.250000 0.125000\nv 0.5 -0.25 0.125\nv -0.5 -0.25 0.125\nv -0.5 0.25 0.125\n"
               "vn 0 0 1\nf 1//1 2//1 3//1\n");
    static const char thesis[] =
        "<?xml version='1.0' encoding='utf-8'?>\n"
        "<scene version=\"0.5.0\">\n"
        "\t<integrator type=\"volpath\">\n"
        "\t\t<integer name=\"maxDepth\" value=\"10000000\"/>\n"
        "\t\t<integer name=\"rrDepth\" value=\"1000000\"/>\n"
        "\t</integrator>\n"
        "\t<sensor type=\"perspective\" id=\"main\">\n"
        "\t\t<float name=\"nearClip\" value=\"1\"/>\n"
        "\t\t<float name=\"farClip\" value=\"1000.0\"/>\n"
        "\t\t<float name=\"fov\" value=\"0.7\"/>\n"
        "\t\t<transform name=\"toWorld\">\n"
        "\t\t\t<lookat target=\"0.0, 0.0, 0.0\" origin=\"0.0, 0.0, 100\" up=\"0, 1, 0\"/>\n"
        "\t\t</transform>\n"
        "\t\t<sampler type=\"independent\"><integer name=\"sampleCount\" value=\"100\"/></sampler>\n"
        "\t\t<film type=\"hdrfilm\">\n"
        "\t\t\t<integer name=\"height\" value=\"400\"/><integer name=\"width\" value=\"400\"/>\n"
        "\t\t\t<rfilter type=\"box\" /><boolean name=\"banner\" value=\"false\"/>\n"
        "\t\t</film>\n"
        "\t</sensor>\n"
        "\t<emitter type=\"constant\" id=\"EnvmapIllumination\"><spectrum name=\"radiance\" value=\"1\"/></emitter>\n"
        "\t<medium type=\"heterogeneous\" id=\"Printout\">\n"
        "\t\t<string name=\"method\" value=\"woodcock\"/>\n"
        "\t\t<volume name=\"density\" type=\"gridvolume\"><string name=\"filename\" value=\"density.vol\"/></volume>\n"
        "\t\t<float name=\"scale\" value=\"100\" />\n"
        "\t\t<volume name=\"albedo\" type=\"gridvolume\"><string name=\"filename\" value=\"albedo.vol\"/></volume>\n"
        "\t\t<phase type=\"hg\"><float name=\"g\" value=\"0.0\" /></phase>\n"
        "\t</medium>\n"
        "\t<bsdf type=\"roughdielectric\" id=\"MaterialCapsuleBSDF\">\n"
        "\t\t<string name=\"distribution\" value=\"ggx\"/>\n"
        "\t\t<float name=\"alpha\" value=\"0.1\"/>\n"
        "\t\t<float name=\"extIOR\" value=\"1.01\"/>\n"
        "\t\t<float name=\"intIOR\" value=\"1.05\"/>\n"
        "\t\t<boolean name=\"sampleVisible\" value=\"true\" />\n"
        "\t</bsdf>\n"
        "\t<shape type=\"obj\">\n"
        "\t\t<string name=\"filename\" value=\"bounds.obj\"/>\n"
        "\t\t<ref id=\"MaterialCapsuleBSDF\"/>\n"
        "\t\t<ref name=\"interior\" id=\"Printout\"/>\n"
        "\t</shape>\n"
        "</scene>\n";
    VptMitsubaIntegrator in;
    VptScene *s = load_text("thesis.xml", thesis, &in);
    REQUIRE(s);
    CHECK_EQ_INT(s->nx, 4);
    CHECK_EQ_INT(s->ny, 3);
    CHECK_EQ_INT(s->nz, 2);
    for (int i = 0; i < 24; i++) CHECK(s->density[i] == dens[i]);
    for (int i = 0; i < 24; i++)
        for (int k = 0; k < 3; k++) CHECK_EQ_INT(s->albedo[4 * i + k], lrintf(255.0f * alb[3 * i + k]));
    CHECK(s->density_scale == 100.0f);
    CHECK(s->box_min[1] == -0.25f && s->box_max[2] == 0.125f);
    CHECK_EQ_INT(s->boundary, VPT_BOUNDARY_GGX);
    CHECK(s->ggx_alpha == 0.1f && s->ior_inside == 1.05f && s->ior_outside == 1.01f);
    CHECK(s->fov_deg == 0.7f);
    CHECK(s->cam_pos[2] == 100.0f);
    CHECK(s->env[0] == 1.0f && s->env[2] == 1.0f);
    CHECK_EQ_INT(s->spp, 100);
    CHECK_EQ_INT(in.max_depth, 0);
    CHECK_EQ_INT(in.rr_depth, -1);
    CHECK_STR_CONTAINS(s->source, "Mitsuba 0.5");
    vpt_scene_destroy(s);

    /* the smoke file's shape: no BSDF, so index-matched in 0.5 */
    static char text[8192];
    const char *p = strstr(thesis, "\t\t<ref id=\"MaterialCapsuleBSDF\"/>\n");
    REQUIRE(p);
    snprintf(text, sizeof text, "%.*s%s", (int)(p - thesis), thesis, p + strlen("\t\t<ref id=\"MaterialCapsuleBSDF\"/>\n"));
    char *b0 = strstr(text, "\t<bsdf"), *b1 = strstr(text, "</bsdf>\n");
    REQUIRE(b0 && b1);
    memmove(b0, b1 + 8, strlen(b1 + 8) + 1);
    s = load_text("smoke_like.xml", text, NULL);
    REQUIRE(s);
    CHECK_EQ_INT(s->boundary, VPT_BOUNDARY_NULL);
    vpt_scene_destroy(s);

    /* relative paths resolve against the XML's directory, whatever the
     * working directory */
    char sub[512];
    tmp(sub, sizeof sub, "sub");
    REQUIRE(mkdir(sub, 0755) == 0);
    snprintf(xml, sizeof xml, "%s/t.xml", sub);
    replace_all(text, sizeof text, thesis, "value=\"density.vol\"", "value=\"../density.vol\"");
    replace_all(text, sizeof text, text, "value=\"albedo.vol\"", "value=\"../albedo.vol\"");
    replace_all(text, sizeof text, text, "value=\"bounds.obj\"", "value=\"../bounds.obj\"");
    write_text(xml, text);
    s = vpt_scene_from_mitsuba(xml, NULL);
    CHECK_MSG(s, "%s", vpt_errmsg());
    vpt_scene_destroy(s);
    write_text(xml, thesis); /* names files that are not in sub/ */
    s = vpt_scene_from_mitsuba(xml, NULL);
    CHECK(!s);
    CHECK_STR_CONTAINS(vpt_errmsg(), "sub/");
    vpt_scene_destroy(s);
}

TEST(mitsuba_import_thesis_smoke_files)
{
    const char *sd = vpt_test_shared_data();
    if (!sd) SKIP("no shared data directory (../shared/data)");
    char d[4096], vol[4200], obj[4200], text[16384];
    REQUIRE(realpath(sd, d)); /* the scene file lives elsewhere */
    snprintf(vol, sizeof vol, "%s/thesis/smoke.vol", d);
    snprintf(obj, sizeof obj, "%s/thesis/smoke_bounds.obj", d);
    /* the thesis' smoke scene file (hetvol.xml) with absolute paths and the
     * albedo as a value (its albedo.vol is not in the data set) */
    snprintf(text, sizeof text,
             "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<scene version=\"0.5.0\">\n"
             "\t<integrator type=\"volpath\"><integer name=\"maxDepth\" value=\"10000000\"/></integrator>\n"
             "\t<medium type=\"heterogeneous\" id=\"smoke\">\n\t\t<string name=\"method\" value=\"woodcock\"/>\n"
             "\t\t<volume name=\"density\" type=\"gridvolume\"><string name=\"filename\" value=\"%s\"/></volume>\n"
             "\t\t<spectrum name=\"albedo\" value=\"0.8\"/>\n\t\t<float name=\"scale\" value=\"800\"/>\n"
             "\t</medium>\n"
             "\t<shape type=\"obj\"><string name=\"filename\" value=\"%s\"/><ref name=\"interior\" id=\"smoke\"/></shape>\n"
             "\t<sensor type=\"perspective\"><float name=\"fov\" value=\"0.33\"/>\n"
             "\t\t<transform name=\"toWorld\"><lookat target=\"0, 0, 0\" origin=\"0.0, 0.0, 100\" up=\"0, 1, 0\"/></transform>\n"
             "\t\t<sampler type=\"independent\"><integer name=\"sampleCount\" value=\"100\"/></sampler>\n"
             "\t\t<film type=\"hdrfilm\"><integer name=\"height\" value=\"400\"/><integer name=\"width\" value=\"400\"/>"
             "<rfilter type=\"box\" /><boolean name=\"banner\" value=\"false\"/></film>\n"
             "\t</sensor>\n"
             "\t<emitter type=\"constant\" id=\"EnvmapIllumination\"><spectrum name=\"radiance\" value=\"1\"/></emitter>\n"
             "</scene>\n",
             vol, obj);
    VptScene *s = load_text("hetvol.xml", text, NULL);
    REQUIRE(s);
    VptVolumeSceneOptions vo;
    memset(&vo, 0, sizeof vo);
    vo.like = "smoke";
    VptScene *v = vpt_scene_from_volume(vol, &vo);
    REQUIRE(v);
    size_t n = (size_t)v->nx * v->ny * v->nz;
    CHECK_EQ_INT(s->nx, v->nx);
    CHECK_EQ_INT(s->nz, v->nz);
    CHECK(memcmp(s->density, v->density, n * sizeof(float)) == 0);
    for (int k = 0; k < 3; k++) {
        CHECK(s->box_min[k] == v->box_min[k]); /* the grid's box, not the mesh's rounded one */
        CHECK(s->box_max[k] == v->box_max[k]);
    }
    CHECK(s->density_scale == 800.0f);
    CHECK(s->fov_deg == v->fov_deg);
    CHECK_EQ_INT(s->boundary, VPT_BOUNDARY_NULL);
    CHECK_EQ_INT(s->albedo[0], 204);
    vpt_scene_destroy(v);
    vpt_scene_destroy(s);
}

TEST(mitsuba_import_errors)
{
    static char text[8192];
    /* malformed XML: the line */
    EXPECT_ERROR("<scene version=\"3.0.0\">\n<integrator type=\"volpath\">\n</scene>\n", "bad.xml:3", "malformed XML");
    EXPECT_ERROR("", "malformed XML");
    EXPECT_ERROR("<!DOCTYPE scene [<!ENTITY a \"b\">]>\n<scene version=\"3.0.0\"/>\n", "DOCTYPE");
    EXPECT_ERROR("<scene version=\"1.0.0\"/>", "version '1.0.0'");
    EXPECT_ERROR("<scene/>", "no version");
    EXPECT_ERROR("<mitsuba version=\"3.0.0\"/>", "<mitsuba>");
    EXPECT_ERROR("<scene version=\"3.0.0\">hello</scene>", "unexpected text");
    /* unsupported plugin: element, type and line */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, "    <bsdf type=\"diffuse\"/>\n", "");
    EXPECT_ERROR(text, "bad.xml:17", "<bsdf type=\"diffuse\">", "not supported", "null, dielectric, roughdielectric");
    /* unsupported property */
    scene_text(text, sizeof text, "3.0.0", "    <float name=\"aperture_radius\" value=\"0.1\"/>\n", CONST_MEDIUM,
               NULL_BSDF, "");
    EXPECT_ERROR(text, "bad.xml:7", "aperture_radius", "<sensor type=\"perspective\">");
    /* unsupported attribute */
    scene_text(text, sizeof text, "3.0.0", "    <float name=\"near_clip\" value=\"0.1\" unit=\"m\"/>\n",
               CONST_MEDIUM, NULL_BSDF, "");
    EXPECT_ERROR(text, "bad.xml:7", "unit");
    /* a property given twice */
    scene_text(text, sizeof text, "3.0.0", "    <float name=\"fov\" value=\"12\"/>\n", CONST_MEDIUM, NULL_BSDF, "");
    EXPECT_ERROR(text, "fov", "twice");
    /* a shape without BSDF is diffuse in Mitsuba 3 */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, "", "");
    EXPECT_ERROR(text, "bad.xml:16", "no BSDF", "null");
    /* Beckmann, anisotropy, tinted dielectrics */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, "    <bsdf type=\"roughdielectric\"/>\n", "");
    EXPECT_ERROR(text, "beckmann", "ggx");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM,
               "    <bsdf type=\"dielectric\"><rgb name=\"specular_transmittance\" value=\"1, 0.5, 1\"/></bsdf>\n", "");
    EXPECT_ERROR(text, "specular_transmittance");
    /* a gaussian pixel filter, no film */
    snprintf(text, sizeof text,
             "<scene version=\"3.0.0\"><integrator type=\"volpath\"/><sensor type=\"perspective\">\n"
             "<film type=\"hdrfilm\"><rfilter type=\"gaussian\"/></film></sensor>\n"
             "<medium type=\"heterogeneous\" id=\"m\">%s</medium><shape type=\"cube\"><bsdf type=\"null\"/>"
             "<ref name=\"interior\" id=\"m\"/></shape></scene>\n",
             CONST_MEDIUM);
    EXPECT_ERROR(text, "bad.xml:2", "gaussian");
    /* no integrator, two shapes, an envmap, an unused object */
    EXPECT_ERROR("<scene version=\"3.0.0\"><sensor type=\"perspective\"/></scene>", "no <integrator>", "path");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF, "  <shape type=\"sphere\"/>\n");
    EXPECT_ERROR(text, "a second <shape>", "bad.xml:20");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF, "  <bsdf type=\"null\" id=\"unused\"/>\n");
    EXPECT_ERROR(text, "not used", "bad.xml:20");
    /* undefined $parameter */
    scene_text(text, sizeof text, "3.0.0", "    <float name=\"near_clip\" value=\"$near\"/>\n", CONST_MEDIUM,
               NULL_BSDF, "");
    EXPECT_ERROR(text, "bad.xml:7", "$near");
    /* a missing .vol, named with the line that names it */
    scene_text(text, sizeof text, "3.0.0", "",
               "    <volume name=\"sigma_t\" type=\"gridvolume\"><string name=\"filename\" value=\"nope.vol\"/></volume>\n",
               NULL_BSDF, "");
    EXPECT_ERROR(text, "bad.xml:12", "nope.vol");
    /* a grid that does not fill the box */
    char vol[512];
    VptVolGrid g = {2, 2, 2, 1, NULL, {0, 0, 0}, {1, 1, 1}};
    float v8[24] = {0, 0.5f, 1, 0.25f, 0, 0, 0, 0.75f};
    g.data = v8;
    REQUIRE(vpt_vol_grid_save(tmp(vol, sizeof vol, "g.vol"), &g) == 0);
    scene_text(text, sizeof text, "3.0.0", "",
               "    <volume name=\"sigma_t\" type=\"gridvolume\"><string name=\"filename\" value=\"g.vol\"/></volume>\n",
               NULL_BSDF, "");
    EXPECT_ERROR(text, "bad.xml:12", "box shape", "fills its box");
    /* ... and one that does, with an albedo grid of another resolution */
    g.nx = 3;
    g.channels = 1;
    float v12[12] = {0};
    g.data = v12;
    REQUIRE(vpt_vol_grid_save(tmp(vol, sizeof vol, "a.vol"), &g) == 0);
    static const char *const two_grids =
        "    <volume name=\"sigma_t\" type=\"gridvolume\"><string name=\"filename\" value=\"g.vol\"/>\n"
        "      <transform name=\"to_world\"><scale value=\"2\"/><translate value=\"-1, -1, -1\"/></transform></volume>\n"
        "    <volume name=\"albedo\" type=\"gridvolume\"><string name=\"filename\" value=\"a.vol\"/>\n"
        "      <transform name=\"to_world\"><scale value=\"2\"/><translate value=\"-1, -1, -1\"/></transform></volume>\n";
    scene_text(text, sizeof text, "3.0.0", "", two_grids, NULL_BSDF, "");
    EXPECT_ERROR(text, "bad.xml:14", "3x2x2", "2x2x2");
    /* a rotated grid */
    scene_text(text, sizeof text, "3.0.0", "",
               "    <volume name=\"sigma_t\" type=\"gridvolume\"><string name=\"filename\" value=\"g.vol\"/>\n"
               "      <transform name=\"to_world\"><rotate y=\"1\" angle=\"30\"/></transform></volume>\n",
               NULL_BSDF, "");
    EXPECT_ERROR(text, "rotates");
    /* clipping planes that cut the box */
    scene_text(text, sizeof text, "3.0.0", "    <float name=\"near_clip\" value=\"9.5\"/>\n", CONST_MEDIUM, NULL_BSDF,
               "");
    EXPECT_ERROR(text, "near_clip 9.5");
    /* negative densities, albedos above 1 */
    scene_text(text, sizeof text, "3.0.0", "",
               "    <float name=\"sigma_t\" value=\"1\"/><float name=\"albedo\" value=\"1.5\"/>\n", NULL_BSDF, "");
    EXPECT_ERROR(text, "albedo 1.5");
    /* nesting deeper than allowed */
    char *deep = text;
    size_t left = sizeof text;
    int w = snprintf(deep, left, "<scene version=\"3.0.0\">");
    for (int i = 0; i < 40; i++) w += snprintf(deep + w, left - (size_t)w, "<a>");
    for (int i = 0; i < 40; i++) w += snprintf(deep + w, left - (size_t)w, "</a>");
    snprintf(deep + w, left - (size_t)w, "</scene>");
    EXPECT_ERROR(text, "deeper");
    /* a file that is not there */
    char missing[512];
    VptScene *s = vpt_scene_from_mitsuba(tmp(missing, sizeof missing, "missing.xml"), NULL);
    CHECK(!s);
    CHECK_STR_CONTAINS(vpt_errmsg(), "missing.xml");
}

/* A lookat camera and the same camera as a matrix render the same. */
TEST(mitsuba_import_camera_forms_agree)
{
    static char a[8192], b[8192];
    scene_text(a, sizeof a, "3.0.0", "", CONST_MEDIUM, NULL_BSDF, "");
    /* lookat((0,0,10), 0, +y): left = -x... columns left, up, dir, origin */
    snprintf(b, sizeof b, "%s", a);
    char *p = strstr(b, "<lookat origin=\"0,0,10\" target=\"0,0,0\" up=\"0,1,0\"/>");
    REQUIRE(p);
    const char *m = "<matrix value=\"-1 0 0 0 0 1 0 0 0 0 -1 10 0 0 0 1\"/>";
    char rest[4096];
    snprintf(rest, sizeof rest, "%s", p + strlen("<lookat origin=\"0,0,10\" target=\"0,0,0\" up=\"0,1,0\"/>"));
    snprintf(p, sizeof b - (size_t)(p - b), "%s%s", m, rest);
    VptScene *sa = load_text("a.xml", a, NULL), *sb = load_text("b.xml", b, NULL);
    REQUIRE(sa && sb);
    VptRenderSettings r = {0, 0, 0, 1, 0, -1, 0};
    VptParams pa, pb;
    vpt_params_init(&pa, sa, &r);
    vpt_params_init(&pb, sb, &r);
    CHECK_NEAR(pa.cam_fwd.z, pb.cam_fwd.z, 1e-7);
    CHECK_NEAR(pa.cam_right.x, pb.cam_right.x, 1e-7);
    CHECK_NEAR(pa.cam_up.y, pb.cam_up.y, 1e-7);
    CHECK_NEAR(pa.cam_pos.z, pb.cam_pos.z, 0);
    vpt_scene_destroy(sa);
    vpt_scene_destroy(sb);
}

/* The parser on its own: any text, no files touched. */
TEST(mitsuba_parse_description)
{
    static const char text[] =
        "<scene version=\"3.0.0\"><integrator type=\"volpathmis\"><integer name=\"max_depth\" value=\"-1\"/></integrator>"
        "<sensor type=\"perspective\"><float name=\"fov\" value=\"30\"/><string name=\"fov_axis\" value=\"diagonal\"/>"
        "<film type=\"hdrfilm\"><rfilter type=\"box\"/></film></sensor>"
        "<shape type=\"obj\"><string name=\"filename\" value=\"b.obj\"/><bsdf type=\"dielectric\">"
        "<string name=\"int_ior\" value=\"water\"/><string name=\"ext_ior\" value=\"air\"/></bsdf>"
        "<medium name=\"interior\" type=\"heterogeneous\"><volume name=\"sigma_t\" type=\"gridvolume\">"
        "<string name=\"filename\" value=\"d.vol\"/><boolean name=\"use_grid_bbox\" value=\"true\"/></volume>"
        "<phase type=\"hg\"><float name=\"g\" value=\"-0.3\"/></phase></medium></shape></scene>";
    VptMitsubaDesc d;
    REQUIRE_MSG(vpt_mitsuba_parse("t.xml", text, strlen(text), &d) == 0, "%s", vpt_errmsg());
    CHECK_EQ_INT(d.version_major, 3);
    CHECK(!strcmp(d.fov_axis, "diagonal"));
    CHECK_EQ_INT(d.shape, VPT_MTS_SHAPE_OBJ);
    CHECK(!strcmp(d.shape_filename, "b.obj"));
    CHECK_EQ_INT(d.boundary, VPT_BOUNDARY_SMOOTH);
    CHECK(d.ior_inside == 1.333f && d.ior_outside == 1.00028f);
    CHECK_EQ_INT(d.sigma_t.kind, VPT_MTS_VOLUME_GRID);
    CHECK_EQ_INT(d.sigma_t.use_grid_bbox, 1);
    CHECK(!strcmp(d.sigma_t.filename, "d.vol"));
    CHECK_EQ_INT(d.albedo.kind, VPT_MTS_VOLUME_CONST);
    CHECK(d.albedo.value[0] == 0.75f);
    CHECK(d.hg_g == -0.3f);
    CHECK_EQ_INT(d.width, 768);
    CHECK_EQ_INT(d.spp, 4);
    CHECK(d.env[0] == 0.0f);
}

/* VOL grids of 1 or 3 channels: float32 and uint8 read back, channels
 * interleaved; 2 channels, wrong sizes and NaN are refused. */
TEST(mitsuba_vol_grid_channels)
{
    unsigned char buf[48 + 2 * 1 * 1 * 3 * 4];
    memcpy(buf, "VOL\3", 4);
    int32_t h[5] = {1, 2, 1, 1, 3};
    float box[6] = {0, 0, 0, 2, 1, 1}, v[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
    memcpy(buf + 4, h, sizeof h);
    memcpy(buf + 24, box, sizeof box);
    memcpy(buf + 48, v, sizeof v);
    VptVolGrid g;
    REQUIRE_MSG(vpt_vol_grid_parse("t.vol", buf, sizeof buf, 0, &g) == 0, "%s", vpt_errmsg());
    CHECK(g.nx == 2 && g.ny == 1 && g.nz == 1 && g.channels == 3);
    CHECK(g.data[4] == 0.5f);
    CHECK(g.bbox_max[0] == 2.0f);
    vpt_vol_grid_free(&g);
    /* uint8, 3 channels: v / 255 */
    unsigned char u8[48 + 6];
    memcpy(u8, buf, 48);
    int32_t enc = 3;
    memcpy(u8 + 4, &enc, 4);
    for (int i = 0; i < 6; i++) u8[48 + i] = (unsigned char)(51 * i);
    REQUIRE(vpt_vol_grid_parse("u.vol", u8, sizeof u8, 0, &g) == 0);
    CHECK(g.data[5] == 255.0f * (1.0f / 255.0f) && g.data[1] == 51.0f * (1.0f / 255.0f)); /* as the scalar reader */
    vpt_vol_grid_free(&g);
    /* errors */
    int32_t two = 2;
    memcpy(buf + 20, &two, 4);
    CHECK(vpt_vol_grid_parse("t.vol", buf, sizeof buf, 0, &g) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "2 channels");
    CHECK(g.data == NULL);
    memcpy(buf + 20, &h[4], 4);
    CHECK(vpt_vol_grid_parse("t.vol", buf, sizeof buf - 4, 0, &g) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "truncated");
    float nan = NAN;
    memcpy(buf + 48 + 16, &nan, 4);
    CHECK(vpt_vol_grid_parse("t.vol", buf, sizeof buf, 0, &g) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "voxel 1");
    CHECK_STR_CONTAINS(vpt_errmsg(), "channel 1");
    CHECK(vpt_vol_grid_parse("t.vol", buf, sizeof buf, 16, &g) == -1); /* the byte cap */
}

/* ------------------------------------------------------------ the Python side */

/* Runs experiments/test_mitsuba.py's given test classes, with bin/render
 * from beside this test binary; fails with the output's tail. */
static void run_python_tests(const char *classes)
{
    if (system("python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)' >/dev/null 2>&1") != 0)
        SKIP("python3 (3.8 or newer) is not available");
    if (access("experiments/test_mitsuba.py", R_OK) != 0)
        SKIP("experiments/test_mitsuba.py not found: run the tests from the repository root");
    char bin[512], log[512], cmd[2048];
    snprintf(bin, sizeof bin, "%s", vpt_test_tool("render"));
    char *slash = strrchr(bin, '/');
    if (slash) *slash = '\0';
    snprintf(log, sizeof log, "%s/py.log", vpt_test_tmpdir());
    snprintf(cmd, sizeof cmd, "VPT_BIN_DIR='%s' python3 experiments/test_mitsuba.py %s > '%s' 2>&1", bin, classes, log);
    int rc = system(cmd);
    FILE *f = fopen(log, "r");
    char buf[8192];
    size_t len = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0, SEEK_SET);
        len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[len] = '\0';
    vpt_test_log("%s", buf);
    CHECK_MSG(rc == 0, "experiments/test_mitsuba.py %s failed (status %d):\n%s", classes, rc, buf);
}

/* The comparison's statistics and the exported XML read with Python's own
 * XML parser (xml.etree). */
TEST_TIMEOUT(mitsuba_python_stats_and_xml, 300) { run_python_tests("StatsTest ExportXmlTest"); }

/* The exported XML loaded by the mitsuba package (scalar_rgb): its
 * parameters inside Mitsuba, and a render. Skipped where mitsuba is not
 * installed. */
TEST_TIMEOUT(mitsuba_python_load, 300)
{
    FILE *p = popen("python3 -c 'import mitsuba; print(mitsuba.__version__)' 2>&1", "r");
    char out[4096] = "";
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    int st = p ? pclose(p) : -1;
    if (st != 0) {
        char *nl = strrchr(out, '\n');
        if (nl && nl[1] == '\0') *nl = '\0';
        nl = strrchr(out, '\n');
        SKIP("the mitsuba Python package is not importable (%s); pip install mitsuba to run it",
             nl ? nl + 1 : out[0] ? out : "python3 failed");
    }
    run_python_tests("MitsubaLoadTest");
}

/* tune and bench take --scene-file: a bad file is refused before any GPU
 * is touched (bench: exit 2, tune: 1), naming the file and line; a good one
 * gets as far as the GPU (exit 3 here without one, or 0 with one). */
static int run_tool(const char *tool, const char *args, char *out, size_t outsz)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", vpt_test_tool(tool), args);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(mitsuba_tune_and_bench_take_scene_files)
{
    REQUIRE_MSG(access(vpt_test_tool("bench"), X_OK) == 0, "bin/bench is missing");
    char bad[512], good[512], args[2048];
    static char out[1 << 15];
    write_text(tmp(bad, sizeof bad, "bad.xml"), "<scene version=\"3.0.0\">\n  <integrator type=\"path\"/>\n</scene>\n");
    snprintf(args, sizeof args, "--scene-file %s --config naiveSK -o %s/b.jsonl", bad, vpt_test_tmpdir());
    /* a bad scene file is a runtime failure (1) in every tool, as in render and tune */
    CHECK_EQ_INT(run_tool("bench", args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "bad.xml:2");
    CHECK_STR_CONTAINS(out, "<integrator type=\"path\">");
    snprintf(args, sizeof args, "--scene-file %s --budget 1evals --cache %s/t.jsonl", bad, vpt_test_tmpdir());
    CHECK_EQ_INT(run_tool("tune", args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "bad.xml:2");
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    REQUIRE(vpt_scene_export_mitsuba(s, tmp(good, sizeof good, "good.xml"), NULL) == 0);
    vpt_scene_destroy(s);
    snprintf(args, sizeof args, "--scene-file %s --scene bucky --config naiveSK --width 8 --height 8 --spp 1 -o %s/g.jsonl",
             good, vpt_test_tmpdir());
    int rc = run_tool("bench", args, out, sizeof out);
    CHECK_MSG(rc == 3 || rc == 0, "bench exit %d: %s", rc, out);
    snprintf(args, sizeof args, "--scene-file %s --scene bucky", good);
    CHECK_EQ_INT(run_tool("tune", args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "exclude each other");
    snprintf(args, sizeof args, "--scene-file %s --budget 1evals --no-save --cache %s/t.jsonl --width 8 --height 8 --spp 1",
             good, vpt_test_tmpdir());
    rc = run_tool("tune", args, out, sizeof out);
    CHECK_MSG(rc == 3 || rc == 0, "tune exit %d: %s", rc, out);
    if (rc == 3) CHECK_STR_CONTAINS(out, "--scene-file");
}
