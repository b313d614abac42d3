/* Mitsuba interoperability, the import side (scenes/mitsuba/mitsuba_xml.h): scene
 * files not written by vptune -- constant media, <default>s, the Mitsuba 0.5
 * dialect of the thesis' own files -- load; malformed files, missing files and
 * unsupported plugins or properties fail with messages naming the element and
 * line; the camera's forms agree; experiments/mitsuba's Python side, and
 * tune and bench taking scene files. Export and round trips:
 * test_mitsuba.c. */
#include "tests/harness/test.h"
#include "tests/test_mitsuba.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "image/image.h"
#include "scenes/env_map.h"
#include "scenes/mitsuba/mitsuba_xml.h"
#include "scenes/scene.h"
#include "scenes/volume.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Mitsuba's directional emitter is the sun: its direction is the one the
 * light travels (default +z), its irradiance 1 unless given. */
TEST(mitsuba_import_directional_emitter)
{
    static char text[8192];
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"directional\"><vector name=\"direction\" value=\"0, -2, 0\"/>"
               "<rgb name=\"irradiance\" value=\"3, 2, 1\"/></emitter>\n");
    VptScene *s = load_text("sun.xml", text, NULL);
    REQUIRE(s);
    CHECK(vpt_scene_has_sun(s));
    CHECK(s->sun_dir[0] == 0.0f && s->sun_dir[1] == 1.0f && s->sun_dir[2] == 0.0f);
    CHECK(s->sun_irradiance[0] == 3.0f && s->sun_irradiance[1] == 2.0f && s->sun_irradiance[2] == 1.0f);
    CHECK(s->sun_radius_deg == 0.0f);
    CHECK(s->env[0] == 1.0f && s->env[1] == 0.5f && s->env[2] == 0.25f); /* the constant one beside it */
    vpt_scene_destroy(s);
    /* x/y/z attributes (0 when left out), a float irradiance */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"directional\"><vector name=\"direction\" x=\"3\" z=\"-4\"/>"
               "<float name=\"irradiance\" value=\"5\"/></emitter>\n");
    s = load_text("sun.xml", text, NULL);
    REQUIRE(s);
    CHECK_NEAR(s->sun_dir[0], -0.6, 1e-7);
    CHECK(s->sun_dir[1] == 0.0f);
    CHECK_NEAR(s->sun_dir[2], 0.8, 1e-7);
    CHECK(s->sun_irradiance[0] == 5.0f && s->sun_irradiance[2] == 5.0f);
    vpt_scene_destroy(s);
    /* Mitsuba's defaults: toward +z, irradiance 1 */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF, "  <emitter type=\"directional\"/>\n");
    s = load_text("sun.xml", text, NULL);
    REQUIRE(s);
    CHECK(s->sun_dir[0] == 0.0f && s->sun_dir[1] == 0.0f && s->sun_dir[2] == -1.0f);
    CHECK(s->sun_irradiance[0] == 1.0f && s->sun_irradiance[1] == 1.0f && s->sun_irradiance[2] == 1.0f);
    vpt_scene_destroy(s);
    /* the errors */
    static const char sun[] = "  <emitter type=\"directional\"/>\n";
    char two[256];
    snprintf(two, sizeof two, "%s%s", sun, sun);
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF, two);
    EXPECT_ERROR(text, "bad.xml:21", "a second <emitter type=\"directional\">", "one directional emitter");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"directional\"><vector name=\"direction\" value=\"0, 0, 0\"/></emitter>\n");
    EXPECT_ERROR(text, "bad.xml:20", "direction (0, 0, 0)", "zero length");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"directional\"><rgb name=\"irradiance\" value=\"1, -1, 1\"/></emitter>\n");
    EXPECT_ERROR(text, "bad.xml:20", "irradiance -1");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"directional\"><float name=\"direction\" value=\"1\"/></emitter>\n");
    EXPECT_ERROR(text, "property 'direction' is a <float>; expected <vector>");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"directional\"><transform name=\"to_world\"><rotate x=\"1\" angle=\"90\"/>"
               "</transform></emitter>\n");
    EXPECT_ERROR(text, "to_world");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF, "  <emitter type=\"point\"/>\n");
    EXPECT_ERROR(text, "<emitter type=\"point\">", "constant, directional");
    /* a delta light behind a dielectric: no path of either renderer reaches it */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, "    <bsdf type=\"dielectric\"/>\n", sun);
    EXPECT_ERROR(text, "delta light", "dielectric boundary");
}

/* Mitsuba's envmap emitter is the environment map: its file (relative to
 * the scene file) and scale, beside the constant emitter; a bad one is an
 * error naming the line. */
TEST(mitsuba_import_envmap_emitter)
{
    VptImage *img = vpt_image_create(4, 2);
    REQUIRE(img);
    for (int i = 0; i < 24; i++) img->rgb[i] = 0.125f * (float)i;
    char pfm[512];
    REQUIRE(vpt_image_write_pfm(tmp(pfm, sizeof pfm, "sky.pfm"), img) == 0);
    vpt_image_destroy(img);
    static char text[8192];
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"envmap\"><string name=\"filename\" value=\"sky.pfm\"/>"
               "<float name=\"scale\" value=\"2\"/></emitter>\n");
    VptScene *s = load_text("envmap.xml", text, NULL);
    REQUIRE(s);
    REQUIRE(vpt_scene_has_env_map(s));
    CHECK(s->env_map->width == 4 && s->env_map->height == 2);
    for (int i = 0; i < 24; i++) CHECK(s->env_map->radiance[i] == 0.25f * (float)i);
    CHECK(s->env[0] == 1.0f && s->env[1] == 0.5f && s->env[2] == 0.25f); /* the constant one beside it */
    VptParams P;
    const VptRenderSettings rs = {0};
    vpt_params_init(&P, s, &rs);
    CHECK(P.env_map_on == 1 && P.em_width == 4);
    vpt_scene_destroy(s);
    /* the scale's default, Mitsuba's: 1 */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"envmap\"><string name=\"filename\" value=\"sky.pfm\"/></emitter>\n");
    s = load_text("envmap1.xml", text, NULL);
    REQUIRE(s && s->env_map);
    CHECK(s->env_map->radiance[5] == 0.625f);
    vpt_scene_destroy(s);
    /* errors */
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF, "  <emitter type=\"envmap\"/>\n");
    EXPECT_ERROR(text, "bad.xml", "no filename");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"envmap\"><string name=\"filename\" value=\"sky.pfm\"/>"
               "<float name=\"scale\" value=\"0\"/></emitter>\n");
    EXPECT_ERROR(text, "bad.xml", "scale 0");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"envmap\"><string name=\"filename\" value=\"none.pfm\"/></emitter>\n");
    EXPECT_ERROR(text, "bad.xml", "envmap", "none.pfm");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"envmap\"><string name=\"filename\" value=\"sky.pfm\"/>"
               "<transform name=\"to_world\"><rotate y=\"1\" angle=\"90\"/></transform></emitter>\n");
    EXPECT_ERROR(text, "bad.xml", "to_world");
    scene_text(text, sizeof text, "3.0.0", "", CONST_MEDIUM, NULL_BSDF,
               "  <emitter type=\"envmap\"><string name=\"filename\" value=\"sky.pfm\"/></emitter>\n"
               "  <emitter type=\"envmap\"><string name=\"filename\" value=\"sky.pfm\"/></emitter>\n");
    EXPECT_ERROR(text, "bad.xml", "a second <emitter type=\"envmap\">");
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
    char buf[8192];
    vpt_test_read_tail(log, buf, sizeof buf);
    vpt_test_log("%s", buf);
    CHECK_MSG(rc == 0, "experiments/test_mitsuba.py %s failed (status %d):\n%s", classes, rc, buf);
}

/* The comparison's statistics, the exported XML read with Python's own
 * XML parser (xml.etree), and pbrt-v4's disney-cloud scene made of a volume
 * (scripts/disney_cloud_scene.py). */
TEST_TIMEOUT(mitsuba_python_stats_and_xml, 300) { run_python_tests("StatsTest ExportXmlTest DisneyCloudSceneTest"); }

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
    snprintf(cmd, sizeof cmd, "%s %s", vpt_test_tool(tool), args);
    int rc = vpt_test_sh(cmd, out, outsz);
    REQUIRE(rc != -2);
    return rc;
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
