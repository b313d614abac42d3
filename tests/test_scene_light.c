/* The light of a scene (scenes/scene.h VptLightOverride, vpt_scene_set_light;
 * the tools' --sun, --sun-irradiance, --sun-radius, --env): the flags take
 * good values and refuse bad ones naming the flag, in every tool; the name's
 * suffix, given back as flags, names the same scene; a scene without a sun
 * keeps the digest it had before scenes had suns, and every part of a sun
 * changes it; a delta sun is refused behind a dielectric boundary; a .vdb
 * cloud loaded without a light gets the default one. Mitsuba's directional
 * emitter: test_mitsuba.c and test_mitsuba_import.c. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "cli/scene_args.h"
#include "scenes/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_STR_EQ(a, b) CHECK_MSG(!strcmp((a), (b)), "'%s' != '%s'", (a), (b))

/* Digests of scenes without a sun, computed before VptScene had a sun: they
 * must never change (committed caches and results key on them). */
static const struct {
    const char *args, *digest;
} unchanged[] = {
    {"--scene bucky", "ad32b578c776b9dd6bc8c098056c9782ff58ee485597ee04e244fded2b10962b"},
    {"--scene cgg-logo", "e042e99e47019be8db91e0d62adbb9064abffbe140fc8abe2f53ecdd824f3733"},
    {"--scene smoke", "75281a0875c442643ca6bb1b6f40f11a9b30851b5733fbe7f217428bb495f9df"},
    {"--scene manix", "c7e860b6e060d5e53a8f684c9be414869f7396ff2e61d6e77428032bc363e867"},
    {"--scene bucky --albedo 0.5 --g 0.3", "8f6c7ab69d21c640039e0049898119837be71c91564661d1204ca2e4c505f73e"},
};

#define BONSAI "../shared/data/thesis/bonsai_small.vdb"

/* Parses args (words split at spaces) into a; -1 at the first refused one
 * (the message left in vpt_errmsg), or from vpt_scene_args_check. */
static int parse(VptSceneArgs *a, const char *args)
{
    static char buf[2048];
    char *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "x %s", args);
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    vpt_scene_args_init(a);
    for (int i = 1; i < argc; i++)
        if (vpt_scene_args_take(a, argc, argv, &i, 0) != 1) return -1;
    return vpt_scene_args_check(a, 1, 0);
}

/* The scene args name (NULL with the message logged). */
static VptScene *load(const char *args)
{
    VptSceneArgs a;
    if (parse(&a, args)) {
        vpt_test_log("%s: %s", args, vpt_errmsg());
        return NULL;
    }
    VptScene *s = vpt_scene_args_load(&a, NULL, NULL);
    if (!s) vpt_test_log("%s: %s", args, vpt_errmsg());
    return s;
}

static void digest(const VptScene *s, char hex[65]) { REQUIRE(vpt_scene_digest(s, hex) == 0); }

TEST(light_flags_take_good_values)
{
    VptSceneArgs a;
    REQUIRE_MSG(parse(&a, "--scene smoke --sun 0,2,0") == 0, "%s", vpt_errmsg());
    CHECK(a.light.has_sun && !a.light.has_env);
    CHECK(a.light.sun_dir[0] == 0 && a.light.sun_dir[1] == 2 && a.light.sun_dir[2] == 0);
    for (int k = 0; k < 3; k++) CHECK(a.light.sun_irradiance[k] == 3); /* the default */
    CHECK(a.light.sun_radius_deg == 0);
    REQUIRE_MSG(parse(&a, "--sun-irradiance=1,0.5,0.25 --scene smoke --sun-radius 0.27 --sun=-1,-0,2e-5 --env 0.1")
                    == 0,
                "%s", vpt_errmsg());
    CHECK(a.light.sun_irradiance[0] == 1 && a.light.sun_irradiance[1] == 0.5 && a.light.sun_irradiance[2] == 0.25);
    CHECK(a.light.sun_radius_deg == 0.27);
    CHECK(a.light.sun_dir[0] == -1 && a.light.sun_dir[2] == 2e-5);
    CHECK_MSG(!signbit(a.light.sun_dir[1]), "-0 is kept as 0");
    CHECK(a.light.has_env && a.light.env[0] == 0.1 && a.light.env[1] == 0.1 && a.light.env[2] == 0.1);
    REQUIRE_MSG(parse(&a, "--scene smoke --env=-0 --sun 1,1,1 --sun-irradiance 0") == 0, "%s", vpt_errmsg());
    CHECK(!signbit(a.light.env[0]));

    VptScene *s = load("--scene smoke --sun 0,2,0 --sun-irradiance 1,0.5,0.25 --sun-radius 0.5 --env 0.1,0.2,0.4");
    REQUIRE(s);
    CHECK_STR_EQ(s->name, "smoke@sun0,2,0@irr1,0.5,0.25@radius0.5@env0.1,0.2,0.4");
    CHECK(s->sun_dir[0] == 0.0f && s->sun_dir[1] == 1.0f && s->sun_dir[2] == 0.0f);
    CHECK(s->sun_irradiance[0] == 1.0f && s->sun_irradiance[1] == 0.5f && s->sun_irradiance[2] == 0.25f);
    CHECK(s->sun_radius_deg == 0.5f);
    CHECK(s->env[0] == 0.1f && s->env[1] == 0.2f && s->env[2] == 0.4f);
    CHECK(vpt_scene_has_sun(s));
    vpt_scene_destroy(s);

    /* the options write back as they were taken */
    REQUIRE(parse(&a, "--scene smoke --sun=-0.5,1,1e-7 --sun-radius 2 --env 1,0.5,0") == 0);
    char words[1024];
    REQUIRE(vpt_scene_args_format(&a, words, sizeof words) == 0);
    CHECK_STR_CONTAINS(words, "--sun=-0.5,1,1e-07 --sun-irradiance 3 --sun-radius 2 --env 1,0.5,0");
}

TEST(light_flags_refuse_bad_values_naming_the_flag)
{
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"--scene smoke --sun 0,0,0", "--sun: the direction (0, 0, 0) has zero length"},
        {"--scene smoke --sun 1,2", "--sun: '1,2' has two values; expected X,Y,Z"},
        {"--scene smoke --sun 1", "--sun: '1' has one value; expected X,Y,Z"},
        {"--scene smoke --sun 1,2,3,4", "--sun: '1,2,3,4' has more than three values"},
        {"--scene smoke --sun 1,nan,0", "--sun"},
        {"--scene smoke --sun 1,inf,0", "--sun"},
        {"--scene smoke --sun 0,1,0 --sun 0,1,0", "--sun given twice"},
        {"--scene smoke --sun 0,1,0 --sun-irradiance -1", "--sun-irradiance: -1 is out of range"},
        {"--scene smoke --sun 0,1,0 --sun-irradiance 1,2", "--sun-irradiance: '1,2' has two values"},
        {"--scene smoke --sun 0,1,0 --sun-irradiance 1e39", "--sun-irradiance"},
        {"--scene smoke --sun 0,1,0 --sun-irradiance 1 --sun-irradiance 1", "--sun-irradiance given twice"},
        {"--scene smoke --sun 0,1,0 --sun-radius 46", "--sun-radius: 46 is out of range [0, 45]"},
        {"--scene smoke --sun 0,1,0 --sun-radius -0.1", "--sun-radius: -0.1 is out of range"},
        {"--scene smoke --sun 0,1,0 --sun-radius 1 --sun-radius 1", "--sun-radius given twice"},
        {"--scene smoke --sun-irradiance 2", "--sun-irradiance applies to the sun: give --sun"},
        {"--scene smoke --sun-radius 1", "--sun-radius applies to the sun: give --sun"},
        {"--scene smoke --env -0.5", "--env: -0.5 is out of range"},
        {"--scene smoke --env 0.1,0.2", "--env: '0.1,0.2' has two values"},
        {"--scene smoke --env x", "--env"},
        {"--scene smoke --env 1 --env 1", "--env given twice"},
        {"--scene smoke --sun", "--sun needs a value"},
    };
    const char *tools[] = {"render", "bench", "tune"};
    static char out[1 << 14];
    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char cmd[2048];
            snprintf(cmd, sizeof cmd, "%s %s --print-scene 2>&1", vpt_test_tool(tools[t]), cases[i].args);
            int rc = vpt_test_sh(cmd, out, sizeof out);
            CHECK_MSG(rc == 2, "%s: exit %d, expected 2 (bad usage): %s", cmd, rc, out);
            CHECK_MSG(strstr(out, cases[i].says), "%s: the message should say '%s': %s", cmd, cases[i].says, out);
        }
    /* a delta sun behind manix's rough dielectric: refused when the scene is built */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --scene manix --sun 0,1,0 --print-scene 2>&1", vpt_test_tool("render"));
    int rc = vpt_test_sh(cmd, out, sizeof out);
    CHECK_MSG(rc != 0, "%s: exit 0", cmd);
    CHECK_STR_CONTAINS(out, "delta light");
    CHECK_STR_CONTAINS(out, "dielectric boundary");
}

/* The suffix's values are the flags' syntax: "@sun..@irr..@radius..@env.."
 * given back as --sun, --sun-irradiance, --sun-radius, --env name the same
 * scene, byte for byte. */
TEST(light_name_suffix_round_trips_through_the_flags)
{
    static const VptLightOverride lights[] = {
        {1, {0.3, 1, 0.2}, {3, 3, 3}, 0.27, 1, {0.05, 0.08, 0.15}, NULL, 0},
        {1, {-1e-7, 0.1, 123456789}, {0.1, 0.2, 1.0 / 3.0}, 0, 0, {0, 0, 0}, NULL, 0},
        {1, {-0.0, 1, -0.0}, {-0.0, 0, 0}, -0.0, 1, {-0.0, 0, 0}, NULL, 0},
        {0, {0, 0, 0}, {0, 0, 0}, 0, 1, {2.5e-5, 1e-4, 7}, NULL, 0},
        {1, {1, 1, 1}, {1e30, 1e-30, 2}, 44.999999999999, 0, {0, 0, 0}, NULL, 0},
    };
    static const struct {
        const char *tag, *flag;
    } tags[] = {{"sun", "--sun"}, {"irr", "--sun-irradiance"}, {"radius", "--sun-radius"}, {"env", "--env"}};
    for (size_t i = 0; i < sizeof lights / sizeof lights[0]; i++) {
        VptScene *s = vpt_scene_builtin("smoke");
        REQUIRE(s);
        REQUIRE_MSG(vpt_scene_set_light(s, &lights[i]) == 0, "light %zu: %s", i, vpt_errmsg());
        REQUIRE(!strncmp(s->name, "smoke@", 6));
        /* "smoke@sun0.3,1,0.2@irr3" -> "--scene smoke --sun 0.3,1,0.2 --sun-irradiance 3" */
        char args[1024] = "--scene smoke", name[VPT_SCENE_NAME_MAX];
        snprintf(name, sizeof name, "%s", s->name);
        for (char *p = strtok(name + 6, "@"); p; p = strtok(NULL, "@")) {
            size_t t = 0;
            while (t < 4 && strncmp(p, tags[t].tag, strlen(tags[t].tag))) t++;
            REQUIRE_MSG(t < 4, "unknown suffix '%s' in '%s'", p, s->name);
            const size_t len = strlen(args);
            snprintf(args + len, sizeof args - len, " %s=%s", tags[t].flag, p + strlen(tags[t].tag));
        }
        VptScene *b = load(args);
        REQUIRE_MSG(b, "light %zu: '%s' as flags: %s", i, s->name, args);
        CHECK_STR_EQ(b->name, s->name);
        CHECK_MSG(!memcmp(b->sun_dir, s->sun_dir, sizeof s->sun_dir), "light %zu: sun direction", i);
        CHECK_MSG(!memcmp(b->sun_irradiance, s->sun_irradiance, sizeof s->sun_irradiance), "light %zu: irradiance", i);
        CHECK_MSG(!memcmp(&b->sun_radius_deg, &s->sun_radius_deg, sizeof s->sun_radius_deg), "light %zu: radius", i);
        CHECK_MSG(!memcmp(b->env, s->env, sizeof s->env), "light %zu: env", i);
        char ha[65], hb[65];
        digest(s, ha);
        digest(b, hb);
        CHECK_STR_EQ(ha, hb);
        vpt_scene_destroy(b);
        vpt_scene_destroy(s);
    }
}

TEST(light_digest_unchanged_without_a_sun_and_changed_by_each_part_of_one)
{
    for (size_t i = 0; i < sizeof unchanged / sizeof unchanged[0]; i++) {
        VptScene *s = load(unchanged[i].args);
        REQUIRE(s);
        char hex[65];
        digest(s, hex);
        CHECK_MSG(!strcmp(hex, unchanged[i].digest), "%s: digest %s, was %s", unchanged[i].args, hex,
                  unchanged[i].digest);
        /* a sun that is off (no irradiance) and the scene's own environment
         * name other scenes but the same images: the same digest */
        VptLightOverride off = {1, {0, 1, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, NULL, 0};
        memcpy(off.env, (double[3]){s->env[0], s->env[1], s->env[2]}, sizeof off.env);
        REQUIRE_MSG(vpt_scene_set_light(s, &off) == 0, "%s", vpt_errmsg());
        digest(s, hex);
        CHECK_MSG(!strcmp(hex, unchanged[i].digest), "%s with a sun that is off: %s", unchanged[i].args, hex);
        vpt_scene_destroy(s);
    }

    /* each part of a sun changes the digest */
    VptLightOverride base = {1, {0.3, 1, 0.2}, {3, 3, 3}, 0.5, 0, {0, 0, 0}, NULL, 0};
    VptLightOverride parts[5];
    for (int i = 0; i < 5; i++) parts[i] = base;
    parts[1].sun_dir[0] = 0.31;
    parts[2].sun_irradiance[2] = 2.999;
    parts[3].sun_radius_deg = 0.0; /* a delta light: on manix (dielectric) refused, see below; smoke is null */
    parts[4].sun_irradiance[0] = parts[4].sun_irradiance[1] = parts[4].sun_irradiance[2] = 0; /* off */
    char hex[5][65], plain[65];
    for (int i = 0; i < 5; i++) {
        VptScene *s = vpt_scene_builtin("smoke");
        REQUIRE(s);
        if (i == 0) digest(s, plain);
        REQUIRE_MSG(vpt_scene_set_light(s, &parts[i]) == 0, "%s", vpt_errmsg());
        digest(s, hex[i]);
        vpt_scene_destroy(s);
    }
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) CHECK_MSG(strcmp(hex[i], hex[j]), "suns %d and %d: the same digest", i, j);
    CHECK_MSG(strcmp(hex[0], plain), "a sun did not change the digest");
    CHECK_STR_EQ(hex[4], plain);
    /* the environment too */
    VptScene *s = vpt_scene_builtin("smoke");
    REQUIRE(s);
    VptLightOverride env = {.has_env = 1, .env = {0.05, 0.08, 0.15}};
    REQUIRE(vpt_scene_set_light(s, &env) == 0);
    char e[65];
    digest(s, e);
    CHECK(strcmp(e, plain) != 0);
    CHECK_STR_EQ(s->name, "smoke@env0.05,0.08,0.15");
    vpt_scene_destroy(s);
}

TEST(light_values_no_scene_has_are_refused)
{
    VptScene *s = vpt_scene_builtin("manix"); /* a rough dielectric boundary */
    REQUIRE(s);
    REQUIRE(s->boundary != VPT_BOUNDARY_NULL);
    char before[65], after[65], name[VPT_SCENE_NAME_MAX];
    digest(s, before);
    snprintf(name, sizeof name, "%s", s->name);
    const struct {
        VptLightOverride o;
        const char *says;
    } bad[] = {
        {{1, {0, 1, 0}, {3, 3, 3}, 0, 0, {0}, NULL, 0}, "a sun of angular radius 0 (a delta light) with a dielectric boundary"},
        {{1, {0, 0, 0}, {3, 3, 3}, 1, 0, {0}, NULL, 0}, "sun direction (0, 0, 0) has zero length"},
        {{1, {0, NAN, 0}, {3, 3, 3}, 1, 0, {0}, NULL, 0}, "sun direction (0, nan, 0) is not finite"},
        {{1, {0, 1, 0}, {3, -1, 3}, 1, 0, {0}, NULL, 0}, "sun irradiance -1"},
        {{1, {0, 1, 0}, {3, INFINITY, 3}, 1, 0, {0}, NULL, 0}, "sun irradiance inf"},
        {{1, {0, 1, 0}, {3, 3, 3}, 45.5, 0, {0}, NULL, 0}, "sun radius 45.5 degrees"},
        {{1, {0, 1, 0}, {3, 3, 3}, NAN, 0, {0}, NULL, 0}, "sun radius nan"},
        {{0, {0}, {0}, 0, 1, {1, -0.5, 1}, NULL, 0}, "environment radiance -0.5"},
        {{0, {0}, {0}, 0, 1, {1, NAN, 1}, NULL, 0}, "environment radiance nan"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vpt_error_clear();
        CHECK_MSG(vpt_scene_set_light(s, &bad[i].o) == -1, "case %zu accepted", i);
        CHECK_STR_CONTAINS(vpt_errmsg(), bad[i].says);
        if (i == 0) { /* refused by finalize, after the scene was edited: start again */
            vpt_scene_destroy(s);
            s = vpt_scene_builtin("manix");
            REQUIRE(s);
        }
    }
    digest(s, after);
    CHECK_STR_EQ(after, before);
    CHECK_STR_EQ(s->name, name);
    /* a sun with a disc is reached by escaping paths: allowed behind glass */
    VptLightOverride disc = {1, {0, 1, 0}, {3, 3, 3}, 0.27, 0, {0}, NULL, 0};
    CHECK_MSG(vpt_scene_set_light(s, &disc) == 0, "%s", vpt_errmsg());
    /* vpt_scene_finalize checks what a hand-edited scene holds */
    s->sun_dir[1] = 0.5f;
    CHECK(vpt_scene_finalize(s) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "not a unit vector");
    s->sun_dir[1] = 1.0f;
    s->sun_radius_deg = 0.0f;
    CHECK(vpt_scene_finalize(s) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "delta light");
    s->sun_radius_deg = 50.0f;
    CHECK(vpt_scene_finalize(s) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "sun radius 50 degrees is outside [0, 45]");
    s->sun_radius_deg = 1.0f;
    s->env[2] = -1.0f;
    CHECK(vpt_scene_finalize(s) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "environment radiance -1 (channel 2)");
    s->env[2] = 1.0f;
    s->sun_irradiance[0] = NAN;
    CHECK(vpt_scene_finalize(s) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "sun irradiance nan (channel 0)");
    vpt_scene_destroy(s);
}

/* A name that cannot hold the light fails whole: never cut. */
TEST(light_name_never_cut)
{
    VptScene *s = vpt_scene_builtin("smoke");
    REQUIRE(s);
    VptLightOverride o = {1, {0.123456789, 1, 0.2}, {1, 2, 3}, 0.27, 1, {0.05, 0.08, 0.15}, NULL, 0};
    /* a file's stem and a whole sun and sky fit */
    snprintf(s->name, sizeof s->name, "wdas_cloud_sixteenth");
    REQUIRE_MSG(vpt_scene_set_light(s, &o) == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(s->name, "wdas_cloud_sixteenth@sun");
    CHECK_STR_CONTAINS(s->name, "@env0.05,0.08,0.15");
    vpt_scene_destroy(s);
    s = vpt_scene_builtin("smoke");
    REQUIRE(s);
    memset(s->name, 'n', 150);
    s->name[150] = '\0';
    char before[VPT_SCENE_NAME_MAX];
    snprintf(before, sizeof before, "%s", s->name);
    CHECK(vpt_scene_set_light(s, &o) == -1);
    CHECK_STR_CONTAINS(vpt_errmsg(), "more than the 191 a scene name holds");
    CHECK_STR_CONTAINS(vpt_errmsg(), "never cut");
    CHECK_STR_EQ(s->name, before);
    CHECK(!vpt_scene_has_sun(s));
    VptLightOverride short_env = {.has_env = 1, .env = {0.5, 0.5, 0.5}};
    CHECK(vpt_scene_set_light(s, &short_env) == 0);
    CHECK_STR_CONTAINS(s->name, "nnnn@env0.5");
    vpt_scene_destroy(s);
}

TEST(light_cloud_default_for_vdb_volumes)
{
    CHECK(vpt_scene_args_cloud_file("a/b.vdb") && vpt_scene_args_cloud_file("C.NVDB") &&
          vpt_scene_args_cloud_file("x.y/c.nvdb"));
    CHECK(!vpt_scene_args_cloud_file("a.mhd") && !vpt_scene_args_cloud_file("vdb") &&
          !vpt_scene_args_cloud_file("a.vdb/x") && !vpt_scene_args_cloud_file("a.vdb.gz"));

    /* the default light in the camera's frame: (0.3, 1, 0.2) in (right, up,
     * toward the camera); the CT scans' camera looks down -z with y up */
    VptScene frame = {0};
    const float pos[3] = {0, 0, 100}, up[3] = {0, 1, 0};
    memcpy(frame.cam_pos, pos, sizeof pos);
    memcpy(frame.cam_up, up, sizeof up);
    VptLightOverride o;
    vpt_scene_cloud_light(&frame, &o);
    CHECK(o.has_sun && o.has_env && o.sun_radius_deg == 0);
    CHECK(o.sun_dir[0] == 0.3 && o.sun_dir[1] == 1 && o.sun_dir[2] == 0.2);
    /* a camera looking along +x from below with z up: up is +z, right -y */
    const float pos2[3] = {-5, 0, 0}, up2[3] = {0, 0, 2};
    memcpy(frame.cam_pos, pos2, sizeof pos2);
    memcpy(frame.cam_up, up2, sizeof up2);
    vpt_scene_cloud_light(&frame, &o);
    CHECK_NEAR(o.sun_dir[0], -0.2, 1e-12);
    CHECK_NEAR(o.sun_dir[1], -0.3, 1e-12);
    CHECK_NEAR(o.sun_dir[2], 1.0, 1e-12);

    if (access(BONSAI, R_OK) != 0) SKIP("%s is not there (../shared/data)", BONSAI);
    VptScene *s = load("--volume " BONSAI);
    REQUIRE(s);
    CHECK_STR_EQ(s->name, "bonsai_small.vdb@sun0.3,1,0.2@irr3@env0.05,0.08,0.15");
    CHECK_EQ_INT(s->boundary, VPT_BOUNDARY_NULL);
    CHECK(vpt_scene_has_sun(s) && s->sun_radius_deg == 0.0f);
    const double n = sqrt(0.3 * 0.3 + 1.0 + 0.2 * 0.2);
    CHECK(s->sun_dir[0] == (float)(0.3 / n) && s->sun_dir[1] == (float)(1.0 / n) && s->sun_dir[2] == (float)(0.2 / n));
    CHECK(s->sun_irradiance[0] == 3.0f && s->sun_irradiance[1] == 3.0f && s->sun_irradiance[2] == 3.0f);
    CHECK(s->env[0] == 0.05f && s->env[1] == 0.08f && s->env[2] == 0.15f);
    char lit[65];
    digest(s, lit);
    vpt_scene_destroy(s);
    /* the same light given as flags is the same scene: a cloud file has
     * the null boundary whatever its light */
    s = load("--volume " BONSAI " --sun 0.3,1,0.2 --env 0.05,0.08,0.15");
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    CHECK_STR_EQ(s->name, "bonsai_small.vdb@sun0.3,1,0.2@irr3@env0.05,0.08,0.15");
    char flags[65];
    digest(s, flags);
    CHECK_STR_EQ(flags, lit);
    vpt_scene_destroy(s);
    /* any light of the user's replaces the default whole */
    s = load("--volume " BONSAI " --env 1");
    REQUIRE(s);
    CHECK_STR_EQ(s->name, "bonsai_small.vdb@env1");
    CHECK(!vpt_scene_has_sun(s));
    CHECK_EQ_INT(s->boundary, VPT_BOUNDARY_NULL);
    vpt_scene_destroy(s);
    /* a volume of another format keeps the CT defaults' rough dielectric,
     * which refuses a delta sun */
    s = load("--volume ../shared/data/formats/engine_small.mhd --sun 0,1,0");
    CHECK(!s);
    CHECK_STR_CONTAINS(vpt_errmsg(), "delta light");
    vpt_scene_destroy(s);
    s = load("--volume " BONSAI " --sun 0,1,0 --sun-radius 0.5");
    REQUIRE(s);
    CHECK_STR_EQ(s->name, "bonsai_small.vdb@sun0,1,0@irr3@radius0.5");
    CHECK(s->env[0] == 1.0f); /* the CT defaults' white environment */
    vpt_scene_destroy(s);
    /* --like takes the built-in scene's light and boundary: no default */
    s = load("--volume " BONSAI " --like smoke");
    REQUIRE(s);
    CHECK_STR_EQ(s->name, "bonsai_small.vdb");
    CHECK(!vpt_scene_has_sun(s));
    vpt_scene_destroy(s);
    /* the tools print the lit scene */
    static char out[1 << 14];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s --volume %s --print-scene 2>&1", vpt_test_tool("bench"), BONSAI);
    REQUIRE(vpt_test_sh(cmd, out, sizeof out) == 0);
    CHECK_STR_CONTAINS(out, "scene bonsai_small.vdb@sun0.3,1,0.2@irr3@env0.05,0.08,0.15\n");
    CHECK_STR_CONTAINS(out, lit);
}
