/* The medium overrides of any scene (vpt_scene_set_medium, the tools'
 * --density-scale, --albedo, --g): what they set, the name they give, the
 * scene they name (a constant albedo table names the same scene as a grid of
 * that constant), the values they refuse, and that the renderer sees them. */
#include "tests/harness/test.h"

#include "base/error.h"
#include "reference/cpu_render.h"
#include "scenes/scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_STR_EQ(a, b) CHECK_MSG(!strcmp((a), (b)), "'%s' != '%s'", (a), (b))

TEST(scene_medium_sets_names_and_keeps_the_rest)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    char before[65], after[65];
    REQUIRE(vpt_scene_digest(s, before) == 0);
    VptMediumOverride keep = {0};
    REQUIRE(vpt_scene_set_medium(s, &keep) == 0);
    REQUIRE(vpt_scene_digest(s, after) == 0);
    CHECK_STR_EQ(s->name, "bucky");
    CHECK_STR_EQ(after, before);

    VptMediumOverride o = {.density_scale = 250, .has_albedo = 1, .albedo = {0.8, 0.8, 0.8}, .has_g = 1, .g = -0.25};
    REQUIRE_MSG(vpt_scene_set_medium(s, &o) == 0, "%s", vpt_errmsg());
    CHECK_STR_EQ(s->name, "bucky@scale250@albedo0.8@g-0.25");
    CHECK(s->density_scale == 250.0f);
    CHECK(s->hg_g == -0.25f);
    CHECK(s->albedo == NULL && s->albedo_entries == 1);
    CHECK(s->albedo_table[0][0] == 204 && s->albedo_table[0][1] == 204 && s->albedo_table[0][2] == 204);
    REQUIRE(vpt_scene_digest(s, after) == 0);
    CHECK(strcmp(after, before) != 0);

    /* the constant table names the scene a grid of that constant names */
    VptScene *g = vpt_scene_builtin("bucky");
    REQUIRE(g && g->albedo);
    const size_t n = (size_t)g->nx * g->ny * g->nz;
    for (size_t i = 0; i < n; i++) memcpy(g->albedo + 4 * i, (const uint8_t[4]){204, 204, 204, 255}, 4);
    g->density_scale = 250.0f;
    g->hg_g = -0.25f;
    REQUIRE(vpt_scene_finalize(g) == 0);
    char grid[65];
    REQUIRE(vpt_scene_digest(g, grid) == 0);
    CHECK_STR_EQ(grid, after);
    vpt_scene_destroy(g);

    /* colours name each channel; a long name is cut, the values kept */
    VptMediumOverride c = {.has_albedo = 1, .albedo = {1, 0.5, 0.25}};
    REQUIRE(vpt_scene_set_medium(s, &c) == 0);
    CHECK_STR_EQ(s->name, "bucky@scale250@albedo0.8@g-0.25@albedo1,0.5,0.25");
    CHECK(s->albedo_table[0][0] == 255 && s->albedo_table[0][1] == 128 && s->albedo_table[0][2] == 64);
    VptMediumOverride sc = {.density_scale = 1e-3};
    for (int i = 0; i < 4; i++) REQUIRE(vpt_scene_set_medium(s, &sc) == 0);
    CHECK(strlen(s->name) < sizeof s->name);
    CHECK_STR_CONTAINS(s->name, "@scale0.001");
    vpt_scene_destroy(s);
}

TEST(scene_medium_refuses_what_no_medium_has)
{
    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    char before[65], after[65];
    REQUIRE(vpt_scene_digest(s, before) == 0);
    const struct {
        VptMediumOverride o;
        const char *says;
    } bad[] = {
        {{.density_scale = -1}, "density scale -1"},
        {{.density_scale = INFINITY}, "density scale inf"},
        {{.density_scale = NAN}, "density scale nan"},
        {{.has_albedo = 1, .albedo = {0.5, 1.5, 0}}, "albedo 1.5"},
        {{.has_albedo = 1, .albedo = {0.5, 0.5, -0.1}}, "albedo -0.1"},
        {{.has_g = 1, .g = 1}, "g 1: the Henyey-Greenstein asymmetry"},
        {{.has_g = 1, .g = -1}, "g -1"},
        {{.has_g = 1, .g = NAN}, "g nan"},
        /* checked before anything is set: the good scale is not applied either */
        {{.density_scale = 3, .has_g = 1, .g = 2}, "g 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(vpt_scene_set_medium(s, &bad[i].o) == -1);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i].says);
    }
    REQUIRE(vpt_scene_digest(s, after) == 0);
    CHECK_STR_EQ(after, before);
    CHECK_STR_EQ(s->name, "bucky");
    vpt_scene_destroy(s);
}

/* Mean radiance of a small CPU render of s. */
static double mean_radiance(const VptScene *s, float *img, int w, int h, int spp)
{
    VptRenderSettings r = {.width = w, .height = h, .spp = spp, .seed = 7, .max_depth = 0, .rr_depth = -1};
    VptParams p;
    vpt_params_init(&p, s, &r);
    REQUIRE_MSG(vpt_cpu_render(s, &p, NULL, img, NULL, NULL) == 0, "%s", vpt_errmsg());
    double sum = 0;
    for (int i = 0; i < 3 * w * h; i++) sum += img[i];
    return sum / (3.0 * w * h);
}

/* The renderer sees the overrides. Deterministic, not statistical: with the
 * same seed a path draws the same flights up to its first scattering; at
 * albedo 0 it ends there carrying nothing, at albedo 1 it goes on and can
 * only add. So every pixel of the albedo-0 image is at most the albedo-1
 * pixel, and the means differ where anything scatters. */
TEST(scene_medium_reaches_the_renderer)
{
    enum { W = 24, H = 24, SPP = 4 };
    float *a = malloc(sizeof(float) * 3 * W * H), *b = malloc(sizeof(float) * 3 * W * H);
    REQUIRE(a && b);
    VptScene *s0 = vpt_scene_builtin("smoke"), *s1 = vpt_scene_builtin("smoke");
    REQUIRE(s0 && s1);
    VptMediumOverride dark = {.has_albedo = 1, .albedo = {0, 0, 0}}, white = {.has_albedo = 1, .albedo = {1, 1, 1}};
    REQUIRE(vpt_scene_set_medium(s0, &dark) == 0 && vpt_scene_set_medium(s1, &white) == 0);
    const double m0 = mean_radiance(s0, a, W, H, SPP), m1 = mean_radiance(s1, b, W, H, SPP);
    int above = 0;
    for (int i = 0; i < 3 * W * H; i++) above += a[i] > b[i] * (1 + 1e-6f) + 1e-7f;
    CHECK_EQ_INT(above, 0);
    CHECK_MSG(m0 < 0.95 * m1, "albedo 0: %g, albedo 1: %g", m0, m1);
    /* a denser medium hides more of the environment at albedo 0 */
    VptMediumOverride denser = {.density_scale = 4.0 * s0->density_scale};
    REQUIRE(vpt_scene_set_medium(s0, &denser) == 0);
    const double m0d = mean_radiance(s0, a, W, H, SPP);
    CHECK_MSG(m0d < m0, "albedo 0 at 4x density: %g, at 1x: %g", m0d, m0);
    /* g changes where light goes: the image differs (at an albedo below 1:
     * at 1, under a constant environment, every path carries it whole) */
    VptMediumOverride half = {.has_albedo = 1, .albedo = {0.5, 0.5, 0.5}}, fwd = {.has_g = 1, .g = 0.9};
    REQUIRE(vpt_scene_set_medium(s1, &half) == 0);
    const double mh = mean_radiance(s1, a, W, H, SPP);
    REQUIRE(vpt_scene_set_medium(s1, &fwd) == 0);
    const double mhg = mean_radiance(s1, a, W, H, SPP);
    CHECK_MSG(fabs(mhg - mh) > 1e-4 * mh, "g 0.9: %g, the scene's g: %g", mhg, mh);
    CHECK_MSG(mh < m1, "albedo 0.5: %g, albedo 1: %g", mh, m1);
    vpt_scene_destroy(s0);
    vpt_scene_destroy(s1);
    free(a);
    free(b);
}
