/* Tests of bin/render, run as a program from the repository root (the
 * render beside the test binary, or in $VPT_BIN_DIR: see test_tools.h):
 * usage errors, exit codes, no output file on any failure, and a small
 * successful render. */
#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "image/image.h"
#include "scenes/scene.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RENDER vpt_test_tool("render")

/* Runs bin/render with `args` (shell words), stdout and stderr together into
 * out; returns the exit status (-1 when it did not exit normally). */
static int run(const char *args, char *out, size_t outsz)
{
    REQUIRE_MSG(access(RENDER, X_OK) == 0, "%s is missing: run the tests from the repository root after make", RENDER);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", RENDER, args);
    FILE *p = popen(cmd, "r");
    REQUIRE(p);
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Number of directory entries besides . and .. */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static char out[1 << 16];

TEST(render_cli_help_lists_scenes)
{
    CHECK_EQ_INT(run("--help", out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "--spp");
    CHECK_STR_CONTAINS(out, "--volume");
    int n = 0;
    for (const char *const *s = vpt_scene_names(); *s; s++, n++) CHECK_STR_CONTAINS(out, *s);
    CHECK_EQ_INT(n, 6);
}

TEST(render_cli_usage_errors)
{
    const char *dir = vpt_test_tmpdir();
    char args[1024];
    snprintf(args, sizeof args, "--cpu --scene bucky --spp 0 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--spp");
    snprintf(args, sizeof args, "--cpu --scene bucky --spp 2x -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--spp");
    snprintf(args, sizeof args, "--cpu --scene no-such-scene --spp 1 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "no-such-scene");
    for (const char *const *s = vpt_scene_names(); *s; s++) CHECK_STR_CONTAINS(out, *s);
    snprintf(args, sizeof args, "--cpu --volume %s/v.raw --like nope -o %s/x.pfm", dir, dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--like");
    CHECK_STR_CONTAINS(out, "manix");
    snprintf(args, sizeof args, "--cpu --scene bucky --spp 1 -o %s/x.jpg", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, ".jpg");
    CHECK_STR_CONTAINS(out, ".png");
    snprintf(args, sizeof args, "--cpu --scene bucky --spp 1 -o %s/noextension", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    snprintf(args, sizeof args, "--cpu --scene bucky --frobnicate -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--frobnicate");
    snprintf(args, sizeof args, "--cpu --scene bucky --threads 0 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--threads");
    snprintf(args, sizeof args, "--cpu --scene bucky --dims 2,2,2 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--dims");
    snprintf(args, sizeof args, "--cpu --scene bucky --spp");
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--spp needs a value");
    CHECK_EQ_INT(run("--cpu --scene bucky", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "-o");
    snprintf(args, sizeof args, "--cpu -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--scene");
    snprintf(args, sizeof args, "--cpu --config best --scene bucky --spp 1 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--config best is a GPU's tuned kernel");
    snprintf(args, sizeof args, "--cpu --config volume=hollow --scene bucky --spp 1 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "volume");
    snprintf(args, sizeof args, "--config streamingSK,block=100 --scene bucky --spp 1 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "block");
    snprintf(args, sizeof args, "--config regen=warp,reorder=compact --scene bucky --spp 1 -o %s/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "reorder=compact needs regen=block");
    CHECK_EQ_INT(count_files(dir), 0); /* no file, not even a temporary one */
}

TEST(render_cli_gpu_without_gpu_says_so)
{
    const char *dir = vpt_test_tmpdir();
    char args[1024], out[8192];
    snprintf(args, sizeof args, "--scene bucky --spp 1 --width 8 --height 8 -o %s/x.pfm", dir);
    int rc = run(args, out, sizeof out);
    if (rc == 0) SKIP("a GPU is present: the GPU path rendered");
    CHECK_EQ_INT(rc, 3);
    CHECK_STR_CONTAINS(out, "no CUDA");
    CHECK_STR_CONTAINS(out, "--cpu");
    CHECK_EQ_INT(count_files(dir), 0);
}

TEST(render_cli_runtime_errors_leave_no_file)
{
    const char *dir = vpt_test_tmpdir();
    char args[1024];
    snprintf(args, sizeof args, "--cpu --volume %s/missing.vol --spp 1 -o %s/x.pfm", dir, dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "missing.vol");
    snprintf(args, sizeof args, "--cpu --scene bucky --spp 1 --width 8 --height 8 -o %s/no/such/dir/x.pfm", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "no/such/dir");
    CHECK_EQ_INT(count_files(dir), 0);
}

TEST(render_cli_renders_bucky)
{
    const char *dir = vpt_test_tmpdir();
    char args[1024], path[600];
    snprintf(path, sizeof path, "%s/x.pfm", dir);
    snprintf(args, sizeof args, "--cpu --scene bucky --spp 1 --width 32 --height 32 -o %s", path);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "bucky");
    CHECK_STR_CONTAINS(out, "32x32");
    CHECK_STR_CONTAINS(out, "paths/s");
    CHECK_STR_CONTAINS(out, "Mrays/s");
    CHECK_STR_CONTAINS(out, "Gsteps/s");
    VptImage *img = vpt_image_read_pfm(path);
    REQUIRE(img);
    CHECK_EQ_INT(img->width, 32);
    CHECK_EQ_INT(img->height, 32);
    VptImageStats st;
    vpt_image_stats(img, &st);
    CHECK_EQ_INT(st.nonfinite, 0);
    CHECK(st.min >= 0.0f && st.mean_all > 0.0);
    /* The same render with --threads 1 and "--flag=value" spelling gives the
     * same bytes; PNG output works; --quiet prints nothing. */
    char path2[600];
    snprintf(path2, sizeof path2, "%s/y.pfm", dir);
    snprintf(args, sizeof args, "--cpu --scene=bucky --spp=1 --width=32 --height=32 --threads=1 --quiet -o %s", path2);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    CHECK_EQ_INT(strlen(out), 0);
    VptImage *img2 = vpt_image_read_pfm(path2);
    REQUIRE(img2);
    CHECK(memcmp(img->rgb, img2->rgb, 32 * 32 * 3 * sizeof(float)) == 0);
    snprintf(path2, sizeof path2, "%s/z.png", dir);
    snprintf(args, sizeof args, "--cpu --scene bucky --spp 1 --width 16 --height 8 --seed 3 --rr 2 --max-depth 50 -o %s",
             path2);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    VptImage *png = vpt_image_read_png(path2, VPT_PNG_ENCODED);
    REQUIRE(png);
    CHECK(png->width == 16 && png->height == 8);
    CHECK_EQ_INT(count_files(dir), 3);
    vpt_image_destroy(img);
    vpt_image_destroy(img2);
    vpt_image_destroy(png);
}

/* render --cpu --config: the CPU reference takes the config's estimator
 * keys. volume=sparse gives the dense image bit for bit (the sparse sampler
 * computes the dense filter exactly) and says which estimator ran; a
 * majorant grid and an 8-bit density texture trace other paths (other
 * bytes); the schedule keys change nothing on the CPU. */
TEST(render_cli_cpu_takes_the_configs_estimator)
{
    const char *dir = vpt_test_tmpdir();
    const char *configs[] = {NULL, "volume=sparse", "streamingSK,block=128,volume=sparse", "majorant=grid8",
                             "density=u8"};
    enum { N = sizeof configs / sizeof configs[0] };
    VptImage *img[N];
    for (int i = 0; i < N; i++) {
        char args[1024];
        snprintf(args, sizeof args, "--cpu --scene smoke --spp 2 --width 24 --height 24 %s%s -o %s/c%d.pfm",
                 configs[i] ? "--config " : "", configs[i] ? configs[i] : "", dir, i);
        CHECK_MSG(run(args, out, sizeof out) == 0, "%s: %s", args, out);
        if (i == 1) CHECK_STR_CONTAINS(out, "cpu estimator majorant=global, density=f32, volume=sparse");
        if (i == 3) CHECK_STR_CONTAINS(out, "cpu estimator majorant=grid8, density=f32, volume=dense");
        if (i == 4) CHECK_STR_CONTAINS(out, "cpu estimator majorant=global, density=u8, volume=dense");
        if (i == 0) CHECK(strstr(out, "cpu estimator") == NULL);
        char path[600];
        snprintf(path, sizeof path, "%s/c%d.pfm", dir, i);
        img[i] = vpt_image_read_pfm(path);
        REQUIRE(img[i]);
        VptImageStats st;
        vpt_image_stats(img[i], &st);
        CHECK_EQ_INT(st.nonfinite, 0);
    }
    const size_t bytes = 24 * 24 * 3 * sizeof(float);
    CHECK_MSG(memcmp(img[0]->rgb, img[1]->rgb, bytes) == 0, "volume=sparse differs from the dense image");
    CHECK_MSG(memcmp(img[0]->rgb, img[2]->rgb, bytes) == 0, "the schedule keys changed the CPU image");
    CHECK_MSG(memcmp(img[0]->rgb, img[3]->rgb, bytes) != 0, "majorant=grid8 traced the global majorant's paths");
    CHECK_MSG(memcmp(img[0]->rgb, img[4]->rgb, bytes) != 0, "density=u8 sampled the f32 densities");
    for (int i = 0; i < N; i++) vpt_image_destroy(img[i]);
}

/* --export-mitsuba and --scene-file (scenes/mitsuba/mitsuba_xml.h): an exported
 * scene renders on the CPU to the very bytes of the built-in one (the same
 * grids and parameters trace the same paths); the depths of the file apply;
 * bad uses are usage errors, bad files runtime errors, and neither leaves a
 * file. */
TEST(render_cli_mitsuba_export_and_scene_file)
{
    const char *dir = vpt_test_tmpdir();
    char args[2048], xml[600], a[600], b[600];
    snprintf(xml, sizeof xml, "%s/b.xml", dir);
    snprintf(args, sizeof args, "--scene bucky --export-mitsuba %s --width 24 --height 16 --spp 3", xml);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "wrote");
    CHECK_STR_CONTAINS(out, "b.xml");
    CHECK_EQ_INT(count_files(dir), 3); /* b.xml, b_density.vol, b_albedo.vol */
    snprintf(a, sizeof a, "%s/a.pfm", dir);
    snprintf(args, sizeof args, "--cpu --scene-file %s --seed 5 -o %s", xml, a);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "24x16 at 3 spp");
    CHECK_STR_CONTAINS(out, "scene b-");
    snprintf(b, sizeof b, "%s/b.pfm", dir);
    snprintf(args, sizeof args, "--cpu --scene bucky --width 24 --height 16 --spp 3 --seed 5 -o %s", b);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    VptImage *ia = vpt_image_read_pfm(a), *ib = vpt_image_read_pfm(b);
    REQUIRE(ia && ib);
    CHECK_MSG(memcmp(ia->rgb, ib->rgb, 24 * 16 * 3 * sizeof(float)) == 0,
              "the exported scene renders differently from the built-in one");
    vpt_image_destroy(ia);
    vpt_image_destroy(ib);
    /* export and render in one command, the scene file's depths applying */
    snprintf(xml, sizeof xml, "%s/c.xml", dir);
    snprintf(args, sizeof args, "--cpu --scene bucky --export-mitsuba %s --max-depth 2 --width 8 --height 8 --spp 1 -o %s",
             xml, a);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "--cpu --scene-file %s --quiet -o %s", xml, b);
    CHECK_EQ_INT(run(args, out, sizeof out), 0);
    ia = vpt_image_read_pfm(a);
    ib = vpt_image_read_pfm(b);
    REQUIRE(ia && ib);
    CHECK_MSG(memcmp(ia->rgb, ib->rgb, 8 * 8 * 3 * sizeof(float)) == 0, "max_depth 2 did not come back");
    vpt_image_destroy(ia);
    vpt_image_destroy(ib);
    int files = count_files(dir);

    /* usage errors */
    snprintf(args, sizeof args, "--scene bucky --export-mitsuba %s/x.txt", dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--export-mitsuba");
    snprintf(args, sizeof args, "--cpu --scene bucky --scene-file %s -o %s/x.pfm", xml, dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--scene-file");
    snprintf(args, sizeof args, "--cpu --scene-file %s --like manix -o %s/x.pfm", xml, dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--like");
    snprintf(args, sizeof args, "--cpu --scene-file %s", xml);
    CHECK_EQ_INT(run(args, out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--export-mitsuba");
    /* runtime errors: a missing file, an unsupported plugin with its line */
    snprintf(args, sizeof args, "--cpu --scene-file %s/none.xml -o %s/x.pfm", dir, dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "none.xml");
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.xml", dir);
    FILE *fp = fopen(bad, "w");
    REQUIRE(fp);
    fputs("<scene version=\"3.0.0\">\n  <integrator type=\"path\"/>\n</scene>\n", fp);
    fclose(fp);
    files++;
    snprintf(args, sizeof args, "--cpu --scene-file %s -o %s/x.pfm", bad, dir);
    CHECK_EQ_INT(run(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "bad.xml:2");
    CHECK_STR_CONTAINS(out, "<integrator type=\"path\">");
    CHECK_EQ_INT(count_files(dir), files);
}
