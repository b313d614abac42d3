/* The scene options are one parser (cli/scene_args.h) shared by render,
 * bench, tune and experiments/run: every tool accepts every scene option and
 * names the same scene (the same SHA-256 digest, printed by --print-scene,
 * which opens no GPU) for the same options; and that digest is the one the
 * library computes in-process. Different options must give different
 * digests, so a tool that ignored an option would fail here. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "cli/config_best.h"
#include "cli/scene_args.h"
#include "scenes/mitsuba/mitsuba_xml.h"
#include "scenes/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out[1 << 16];

/* Runs "cmd 2>&1" into out; returns the exit status (-1: no normal exit). */
static int run_cmd(const char *cmd)
{
    int st = vpt_test_sh(cmd, out, sizeof out);
    REQUIRE(st != -2);
    return st;
}

/* A 6x5x4 u8 grid as a headerless .raw and as a MetaImage with LOCAL data. */
static void write_volumes(char *raw, char *mhd, size_t n)
{
    const char *dir = vpt_test_tmpdir();
    snprintf(raw, n, "%s/grid.raw", dir);
    snprintf(mhd, n, "%s/grid.mhd", dir);
    unsigned char v[6 * 5 * 4];
    for (size_t i = 0; i < sizeof v; i++) v[i] = (unsigned char)((i * 37u) % 251u);
    FILE *f = fopen(raw, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(v, 1, sizeof v, f) == sizeof v);
    fclose(f);
    f = fopen(mhd, "wb");
    REQUIRE(f);
    fprintf(f, "ObjectType = Image\nNDims = 3\nDimSize = 6 5 4\nElementSpacing = 1 1 2\n"
               "ElementType = MET_UCHAR\nElementDataFile = LOCAL\n");
    REQUIRE(fwrite(v, 1, sizeof v, f) == sizeof v);
    fclose(f);
}

/* The digest a tool prints for args ("" when it printed none). */
static void digest_of(const char *tool_cmd, const char *args, char hex[65])
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%.600s %.1023s --print-scene", tool_cmd, args);
    int rc = run_cmd(cmd);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", cmd, rc, out);
    const char *d = strstr(out, "sha256 ");
    hex[0] = '\0';
    if (d && strlen(d) >= 7 + 64) {
        memcpy(hex, d + 7, 64);
        hex[64] = '\0';
    }
    CHECK_MSG(hex[0], "%s printed no digest: %s", cmd, out);
}

/* The digest the library gives the same options, parsed in-process. */
static void library_digest(const char *args, char hex[65])
{
    char buf[2048], *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "x %.1023s", args);
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    VptSceneArgs a;
    vpt_scene_args_init(&a);
    for (int i = 1; i < argc; i++) REQUIRE_MSG(vpt_scene_args_take(&a, argc, argv, &i, 0) == 1, "%s", argv[i]);
    REQUIRE_MSG(vpt_scene_args_check(&a, 1, 0) == 0, "%s", vpt_errmsg());
    VptScene *s = vpt_scene_args_load(&a, NULL, NULL);
    REQUIRE_MSG(s, "%s: %s", args, vpt_errmsg());
    REQUIRE(vpt_scene_digest(s, hex) == 0);
    vpt_scene_destroy(s);
}

TEST(scene_options_name_the_same_scene_in_every_tool)
{
    char raw[512], mhd[512], xml[512];
    write_volumes(raw, mhd, sizeof raw);
    snprintf(xml, sizeof xml, "%s/bucky.xml", vpt_test_tmpdir());
    VptScene *b = vpt_scene_builtin("bucky");
    REQUIRE(b);
    REQUIRE(vpt_scene_export_mitsuba(b, xml, NULL) == 0);
    vpt_scene_destroy(b);

    char rows[13][1024];
    int nrows = 0;
#define ROW(...) snprintf(rows[nrows++], sizeof rows[0], __VA_ARGS__)
    ROW("--scene smoke");
    ROW("--scene=bucky");
    ROW("--volume %s", mhd);
    ROW("--volume %s --like manix", mhd);
    ROW("--volume %s --like smoke --transfer linear", mhd);
    ROW("--volume=%s --downsample 2", mhd);
    ROW("--volume %s --dims 6,5,4 --type u8", raw);
    ROW("--volume %s --dims=6,5,4 --type=u8 --transfer ct --like artifix", raw);
    ROW("--scene-file %s", xml);
    ROW("--scene smoke --g 0.877");
    ROW("--scene smoke --albedo 0.8 --density-scale 50");
    ROW("--volume %s --like smoke --albedo 1,0.5,0.25", mhd);
    ROW("--scene-file=%s --density-scale=7", xml);
#undef ROW
    /* every tool, as a user types it; experiments/run passes the options to bench */
    char tools[4][600];
    int ntools = 0;
    snprintf(tools[ntools++], sizeof tools[0], "%s", vpt_test_tool("render"));
    snprintf(tools[ntools++], sizeof tools[0], "%s", vpt_test_tool("bench"));
    snprintf(tools[ntools++], sizeof tools[0], "%s", vpt_test_tool("tune"));
    REQUIRE_MSG(access(vpt_test_tool("bench"), X_OK) == 0, "bin/bench is missing: run make first");
    if (access("experiments/run", X_OK) == 0 && system("python3 -c '' >/dev/null 2>&1") == 0) {
        char bin[512];
        snprintf(bin, sizeof bin, "%s", vpt_test_tool("bench"));
        *strrchr(bin, '/') = '\0';
        snprintf(tools[ntools++], sizeof tools[0], "python3 experiments/run --bin %s", bin);
    } else {
        vpt_test_log("experiments/run not checked: run the tests from the repository root with python3");
    }

    char digests[13][65];
    for (int r = 0; r < nrows; r++) {
        library_digest(rows[r], digests[r]);
        for (int t = 0; t < ntools; t++) {
            char hex[65];
            digest_of(tools[t], rows[r], hex);
            CHECK_MSG(!strcmp(hex, digests[r]), "%s %s: digest %s, the library's %s", tools[t], rows[r], hex,
                      digests[r]);
        }
    }
    /* the options matter: each row names a scene of its own (the .raw and
     * .mhd hold the same grid, but the .mhd's z spacing is 2) */
    for (int r = 0; r < nrows; r++)
        for (int q = r + 1; q < nrows; q++) {
            /* bucky exported as a Mitsuba file is bucky: the export is exact */
            int same = r == 1 && q == 8;
            CHECK_MSG((strcmp(digests[r], digests[q]) == 0) == same, "'%s' and '%s' %s", rows[r], rows[q],
                      same ? "should name the same scene (the export is exact)" : "name the same scene");
        }
}

TEST(scene_options_are_checked_alike_in_every_tool)
{
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"--like manix", "--like applies to --volume only"},
        {"--scene manix --downsample 2", "--downsample applies to --volume only"},
        {"--scene nosuch", "unknown scene 'nosuch'"},
        {"--volume x.raw --like nosuch", "--like: unknown scene 'nosuch'"},
        {"--volume x.raw --downsample 0", "--downsample"},
        {"--volume x.raw --upsample -1", "--upsample"},
        {"--volume x.raw --transfer sepia", "unknown transfer function 'sepia'"},
        {"--volume x.raw --type u7", "--type"},
        {"--volume x.raw --dims 1,2", "--dims"},
        {"--volume", "--volume needs a value"},
        {"--scene manix --volume x.raw", "exclude each other"},
        {"--scene smoke --g 1", "--g: 1 is not inside (-1, 1)"},
        {"--scene smoke --g 0.5 --g 0.5", "--g given twice"},
        {"--scene smoke --albedo 0.5,2,0", "--albedo: 2 is out of range [0, 1]"},
        {"--scene smoke --albedo 0.5,0.5", "has two values"},
        {"--scene smoke --density-scale 0", "--density-scale: 0 is not positive"},
        {"--scene smoke --density-scale inf", "--density-scale"},
    };
    const char *tools[] = {"render", "tune"};
    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char cmd[2048];
            snprintf(cmd, sizeof cmd, "%s %s --print-scene", vpt_test_tool(tools[t]), cases[i].args);
            int rc = run_cmd(cmd);
            CHECK_MSG(rc == 2, "%s: exit %d, expected 2 (bad usage): %s", cmd, rc, out);
            CHECK_MSG(strstr(out, cases[i].says), "%s: the message should say '%s': %s", cmd, cases[i].says, out);
        }
    /* bench takes several --scene, and a --volume beside them; the rest alike */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strstr(cases[i].says, "exclude")) continue;
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s %s --print-scene", vpt_test_tool("bench"), cases[i].args);
        int rc = run_cmd(cmd);
        CHECK_MSG(rc == 2, "%s: exit %d, expected 2 (bad usage): %s", cmd, rc, out);
        CHECK_MSG(strstr(out, cases[i].says), "%s: the message should say '%s': %s", cmd, cases[i].says, out);
    }
}

TEST(scene_args_format_round_trips_through_the_shell)
{
    /* a path with a space and a quote comes back as one word */
    VptSceneArgs a;
    vpt_scene_args_init(&a);
    char *argv[] = {"x", "--volume", "my head's.mhd", "--like", "manix", "--downsample", "3", "--transfer", "linear",
                    "--g=-0.3", "--albedo", "0.1,0.2,0.3", "--density-scale", "0.1", NULL};
    for (int i = 1; i < 14; i++) REQUIRE(vpt_scene_args_take(&a, 14, argv, &i, 0) == 1);
    char words[1024];
    REQUIRE(vpt_scene_args_format(&a, words, sizeof words) == 0);
    CHECK_STR_CONTAINS(words, "--volume 'my head'\\''s.mhd' --like manix --downsample 3 --transfer linear");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "printf '%%s|' %s", words);
    REQUIRE(run_cmd(cmd) == 0);
    CHECK_STR_CONTAINS(out, "--volume|my head's.mhd|--like|manix|--downsample|3|--transfer|linear|");
    /* the medium's values come back exactly: formatted, taken again, equal */
    char *back[32], buf[1024];
    int nb = 0;
    snprintf(buf, sizeof buf, "%s", strstr(words, "--density-scale"));
    back[nb++] = "x";
    for (char *t = strtok(buf, " "); t && nb < 31; t = strtok(NULL, " ")) back[nb++] = t;
    VptSceneArgs b;
    vpt_scene_args_init(&b);
    for (int i = 1; i < nb; i++) REQUIRE_MSG(vpt_scene_args_take(&b, nb, back, &i, 0) == 1, "%s", back[i]);
    CHECK(b.medium.density_scale == a.medium.density_scale && b.medium.g == a.medium.g && b.medium.has_g);
    CHECK(b.medium.has_albedo && !memcmp(b.medium.albedo, a.medium.albedo, sizeof a.medium.albedo));
    char tiny[16] = "";
    CHECK(vpt_scene_args_format(&a, tiny, sizeof tiny) == -1);
}

/* --config best: the committed winner loads; a missing one is named with the
 * tune command that makes it, for the scene options given (--like kept). */
TEST(config_best_names_the_tune_command_that_makes_it)
{
    if (access("results/h100/best/manix.json", R_OK) != 0) SKIP("run the tests from the repository root");
    VptSceneArgs a;
    vpt_scene_args_init(&a);
    char *argv1[] = {"x", "--scene", "manix", NULL};
    for (int i = 1; i < 3; i++) REQUIRE(vpt_scene_args_take(&a, 3, argv1, &i, 0) == 1);
    VptScene *s = vpt_scene_args_load(&a, NULL, NULL);
    REQUIRE(s);
    VptConfig c;
    char path[1024];
    CHECK_MSG(vpt_config_best_load(&a, "NVIDIA H100 80GB HBM3", s, &c, path, sizeof path) == 0, "%s", vpt_errmsg());
    CHECK_STR_CONTAINS(path, "results/h100/best/manix.json");
    vpt_scene_destroy(s);

    char raw[512], mhd[512];
    write_volumes(raw, mhd, sizeof raw);
    vpt_scene_args_init(&a);
    char *argv2[] = {"x", "--volume", mhd, "--like", "manix", NULL};
    for (int i = 1; i < 5; i++) REQUIRE(vpt_scene_args_take(&a, 5, argv2, &i, 0) == 1);
    s = vpt_scene_args_load(&a, NULL, NULL);
    REQUIRE(s);
    CHECK(vpt_config_best_load(&a, "NVIDIA H100 80GB HBM3", s, &c, path, sizeof path) == -1);
    char want[1024];
    snprintf(want, sizeof want, "run 'tune --volume %s --like manix' on this GPU first", mhd);
    CHECK_STR_CONTAINS(vpt_errmsg(), want);
    CHECK_STR_CONTAINS(vpt_errmsg(), "results/h100/best/grid.mhd.json");
    vpt_scene_destroy(s);
}

/* --print-scene names the volume as result rows do (grid, the source data's
 * type and size, the file and its SHA-256) and the load time, in every
 * tool; a load that short prints no "loaded" line (only loads of a second
 * or more report themselves, so logs of quick runs stay clean). */
TEST(print_scene_names_the_volume_and_the_load_time)
{
    char raw[600], mhd[600], cmd[2048];
    write_volumes(raw, mhd, sizeof raw);
    const char *tools[] = {"render", "bench", "tune"};
    for (int t = 0; t < 3; t++) {
        snprintf(cmd, sizeof cmd, "%s --volume %s --upsample 2 --print-scene", vpt_test_tool(tools[t]), mhd);
        REQUIRE_MSG(run_cmd(cmd) == 0, "%s", out);
        CHECK_STR_CONTAINS(out, "\nvolume {\"dims\":[12,10,8],\"format\":\"u8\",\"bytes\":960,\"source\":");
        CHECK_STR_CONTAINS(out, "\"resample\":\"up2\"");
        CHECK_STR_CONTAINS(out, "\nload_s ");
        CHECK_MSG(!strstr(out, "loaded grid"), "%s: a short load reported itself: %s", tools[t], out);
        /* the file's frame (voxel 0's centre at 0, spacing 1,1,2: the upsampled grid covers the same box) and
         * the scene's box it maps to (largest side 1, centred) */
        CHECK_STR_CONTAINS(out, "\nworld_box -0.5,-0.5,-1 5.5,4.5,7\nbox -0.375,-0.3125,-0.5 0.375,0.3125,0.5\n");
    }
    /* --like takes the built-in scene's box: no frame to map */
    snprintf(cmd, sizeof cmd, "%s --volume %s --like manix --print-scene", vpt_test_tool("render"), mhd);
    REQUIRE_MSG(run_cmd(cmd) == 0, "%s", out);
    CHECK_MSG(!strstr(out, "world_box"), "%s", out);
    /* the file's hash is its bytes' */
    snprintf(cmd, sizeof cmd, "sha256sum %s", mhd);
    REQUIRE(run_cmd(cmd) == 0);
    char want[65];
    snprintf(want, sizeof want, "%.64s", out);
    snprintf(cmd, sizeof cmd, "%s --volume %s --print-scene", vpt_test_tool("render"), mhd);
    REQUIRE(run_cmd(cmd) == 0);
    char needle[100];
    snprintf(needle, sizeof needle, "\"sha256\":\"%s\"", want);
    CHECK_STR_CONTAINS(out, needle);
    /* a built-in scene: its name, f32, no hash */
    snprintf(cmd, sizeof cmd, "%s --scene bucky --print-scene", vpt_test_tool("render"));
    REQUIRE(run_cmd(cmd) == 0);
    CHECK_STR_CONTAINS(out, "volume {\"dims\":[32,32,32],\"format\":\"f32\",\"bytes\":131072,\"source\":\"bucky\"}");
    CHECK_MSG(!strstr(out, "world_box"), "a built-in scene has no file frame: %s", out);
}
