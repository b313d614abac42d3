/* Post-classified albedo (docs/albedo.md): a volume loaded through a
 * transfer function keeps one density grid, and the medium classifies the
 * filtered density through the transfer's table where it scatters. The CPU
 * reference against a direct evaluation of that definition, for every way
 * the medium filters the density (f32, a compact format, the sparse tree);
 * a constant table renders exactly as a grid of its colour; and the host
 * memory of a large load stays near its float grid. */
#include "reference/cpu_render.h" /* first: the CPU medium */

#include "tests/harness/test.h"
#include "tests/test_tools.h"

#include "base/error.h"
#include "physics/density_format.h"
#include "scenes/scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* An nx x ny x nz int16 NRRD (values -1024 .. 3071, smooth, as a CT) at
 * path, written slice by slice. */
static void write_ct(const char *path, int nx, int ny, int nz)
{
    FILE *fp = fopen(path, "wb");
    REQUIRE_MSG(fp, "cannot write %s", path);
    fprintf(fp, "NRRD0004\ntype: short\ndimension: 3\nsizes: %d %d %d\nendian: little\nencoding: raw\n\n", nx, ny, nz);
    int16_t *slice = malloc((size_t)nx * ny * sizeof *slice);
    REQUIRE(slice);
    for (int z = 0; z < nz; z++) {
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const double r = 0.5 + 0.3 * sin(x * 0.37 + z * 0.11) + 0.2 * cos(y * 0.29 - z * 0.05);
                slice[(size_t)y * nx + x] = (int16_t)(r * 4095.0 - 1024.0);
            }
        REQUIRE_MSG(fwrite(slice, sizeof *slice, (size_t)nx * ny, fp) == (size_t)nx * ny, "cannot write %s", path);
    }
    free(slice);
    REQUIRE_MSG(fclose(fp) == 0, "cannot write %s", path);
}

static VptScene *load_ct(const char *name, int nx, int ny, int nz, VptTransfer tf)
{
    char p[600];
    write_ct(vpt_test_tmp_path(p, sizeof p, name), nx, ny, nz);
    VptVolumeSceneOptions o = {.transfer = tf, .like = "manix"};
    VptScene *s = vpt_scene_from_volume(p, &o);
    REQUIRE_MSG(s, "%s", vpt_errmsg());
    return s;
}

/* The trilinear filter of the medium's contract (physics/vpt_medium.h),
 * written out: the eight texels' weighted sum over vpt_filter_axis. */
static float filter_direct(const float *t, int nx, int ny, int nz, vpt_vec3 uvw)
{
    int i[2], j[2], k[2];
    float a, b, c;
    vpt_filter_axis(uvw.x, nx, &i[0], &i[1], &a);
    vpt_filter_axis(uvw.y, ny, &j[0], &j[1], &b);
    vpt_filter_axis(uvw.z, nz, &k[0], &k[1], &c);
    const float wx[2] = {1.0f - a, a}, wy[2] = {1.0f - b, b}, wz[2] = {1.0f - c, c};
    float v = 0.0f;
    for (int l = 0; l < 2; l++)
        for (int m = 0; m < 2; m++)
            for (int q = 0; q < 2; q++)
                v += wx[q] * wy[m] * wz[l] * t[(size_t)i[q] + (size_t)nx * ((size_t)j[m] + (size_t)ny * k[l])];
    return v;
}

/* A deterministic point of [-0.1, 1.1]^3 (clamping included). */
static vpt_vec3 point(uint32_t i)
{
    vpt_u4 r = vpt_rng(17u, i, 0u);
    return vpt_v3(1.2f * vpt_u01(r.x) - 0.1f, 1.2f * vpt_u01(r.y) - 0.1f, 1.2f * vpt_u01(r.z) - 0.1f);
}

/* The CPU reference's albedo at 20,000 points equals the thesis' CT transfer
 * (vpt_ct_albedo) of the density filtered there, in scene units, for the f32
 * density, the u8 format (whose texture units fold the scene's maximum in)
 * and the sparse tree; at texel centres it is the voxel's own CT colour (the
 * pre-classified grid's texel). For u8 a point whose density lies within
 * 1e-4 of an entry's boundary may round either way between the two forms of
 * the product and is not counted (a handful of 20,000). */
TEST(albedo_post_classification_equals_direct_evaluation)
{
    VptScene *s = load_ct("ct.nrrd", 24, 20, 16, VPT_TF_CT);
    REQUIRE(s->albedo == NULL && s->albedo_table && s->albedo_entries == 100);
    const VptRenderSettings rs = {8, 8, 1, 1, 0, -1, 1};
    static const struct {
        VptDensityFormat f;
        int sparse;
    } cases[] = {{VPT_DENSITY_F32, 0}, {VPT_DENSITY_U8, 0}, {VPT_DENSITY_F32, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        VptParams P;
        vpt_params_init(&P, s, &rs);
        VptCpuEstimator e;
        REQUIRE_MSG(vpt_cpu_estimator_init(&e, s, cases[c].f, 0, cases[c].sparse, &P) == 0, "%s", vpt_errmsg());
        VptMedium M;
        vpt_cpu_medium_init(&M, s);
        if (e.density) M.density = e.density;
        M.sparse = cases[c].sparse ? e.tree.data : NULL;
        M.albedo_index = P.albedo_index;
        const float unit = vpt_density_format_unit(cases[c].f, s->density_max);
        CHECK(cases[c].f != VPT_DENSITY_F32 || P.albedo_index == 100.0f);
        const float *tex = e.density ? e.density : s->density;
        int wrong = 0, boundary = 0, distinct = 0, seen[100] = {0};
        for (uint32_t i = 0; i < 20000; i++) {
            const vpt_vec3 uvw = point(i);
            const float t = filter_direct(tex, s->nx, s->ny, s->nz, uvw);
            const float d = t * unit; /* scene units */
            uint8_t want[4];
            vpt_ct_albedo(d, want);
            const vpt_vec3 got = vpt_medium_albedo(&M, uvw);
            const int same = got.x == (float)want[0] / 255.0f && got.y == (float)want[1] / 255.0f &&
                             got.z == (float)want[2] / 255.0f;
            const float x = d * 100.0f;
            if (!same && cases[c].f != VPT_DENSITY_F32 && fabsf(x - roundf(x)) < 1e-4f) {
                boundary++;
                continue;
            }
            if (!same && wrong++ < 3)
                vpt_test_log("format %s sparse %d: (%g, %g, %g) density %.9g: got (%g, %g, %g), want (%d, %d, %d) / 255",
                             vpt_density_format_name(cases[c].f), cases[c].sparse, (double)uvw.x, (double)uvw.y,
                             (double)uvw.z, (double)d, (double)got.x, (double)got.y, (double)got.z, want[0], want[1],
                             want[2]);
            const int entry = vpt_albedo_entry(d, 100.0f, 100);
            distinct += !seen[entry];
            seen[entry] = 1;
        }
        CHECK_MSG(wrong == 0, "format %s sparse %d: %d of 20000 points differ", vpt_density_format_name(cases[c].f),
                  cases[c].sparse, wrong);
        CHECK_MSG(boundary <= 20, "%d points on entry boundaries", boundary);
        CHECK_MSG(distinct >= 30, "only %d table entries reached: the volume does not test the table", distinct);
        vpt_cpu_estimator_free(&e);
    }
    /* texel centres: the filtered density is the voxel's, so the albedo is
     * the colour a pre-classified grid would hold there */
    VptMedium M;
    vpt_cpu_medium_init(&M, s);
    int wrong = 0;
    for (int z = 0; z < s->nz; z++)
        for (int y = 0; y < s->ny; y++)
            for (int x = 0; x < s->nx; x++) {
                const vpt_vec3 uvw = vpt_v3((x + 0.5f) / s->nx, (y + 0.5f) / s->ny, (z + 0.5f) / s->nz);
                uint8_t want[4];
                vpt_ct_albedo(s->density[(size_t)x + (size_t)s->nx * ((size_t)y + (size_t)s->ny * z)], want);
                const vpt_vec3 got = vpt_medium_albedo(&M, uvw);
                wrong += got.x != want[0] / 255.0f || got.y != want[1] / 255.0f || got.z != want[2] / 255.0f;
            }
    CHECK_EQ_INT(wrong, 0);
    vpt_scene_destroy(s);
}

/* The scene with its table replaced by the per-voxel grid the table gives
 * each voxel (pre-classification). */
static VptScene *preclassified(const VptScene *s)
{
    VptScene *g = malloc(sizeof *g);
    REQUIRE(g);
    *g = *s;
    const size_t n = (size_t)s->nx * s->ny * s->nz;
    g->density = malloc(n * sizeof *g->density);
    g->albedo = malloc(4 * n);
    REQUIRE(g->density && g->albedo);
    memcpy(g->density, s->density, n * sizeof *g->density);
    for (size_t i = 0; i < n; i++)
        memcpy(g->albedo + 4 * i, s->albedo_table[vpt_albedo_entry(s->density[i], (float)s->albedo_entries,
                                                                    s->albedo_entries)],
               4);
    g->albedo_table = NULL;
    g->albedo_entries = 0;
    REQUIRE_MSG(vpt_scene_finalize(g) == 0, "%s", vpt_errmsg());
    return g;
}

static float *render(const VptScene *s)
{
    const VptRenderSettings rs = {24, 16, 8, 3, 0, -1, 1};
    VptParams P;
    vpt_params_init(&P, s, &rs);
    float *img = malloc((size_t)P.width * P.height * 3 * sizeof *img);
    REQUIRE(img);
    VptCpuRenderOptions co = {0, VPT_PROGRESS_OFF, NULL};
    REQUIRE_MSG(vpt_cpu_render(s, &P, &co, img, NULL, NULL) == 0, "%s", vpt_errmsg());
    return img;
}

/* A constant table (the linear and identity transfers: white) is the medium
 * of a grid of its colour: filtering a constant grid returns it exactly
 * (cpu_medium.h), so the image and the scene digest are those of the grid,
 * bit for bit. The CT table is another medium than its pre-classified grid:
 * its digest and its image differ. */
TEST(albedo_constant_table_is_its_grid_and_ct_table_is_not)
{
    const size_t bytes = (size_t)24 * 16 * 3 * sizeof(float);
    char a[65], b[65];
    VptScene *s = load_ct("linear.nrrd", 20, 18, 14, VPT_TF_LINEAR);
    REQUIRE(s->albedo == NULL && s->albedo_entries == 1);
    VptScene *g = preclassified(s);
    REQUIRE(vpt_scene_digest(s, a) == 0 && vpt_scene_digest(g, b) == 0);
    CHECK_MSG(!strcmp(a, b), "digests %s and %s", a, b);
    float *is = render(s), *ig = render(g);
    CHECK_MSG(!memcmp(is, ig, bytes), "the white table's image is not the white grid's");
    free(is);
    free(ig);
    vpt_scene_destroy(s);
    vpt_scene_destroy(g);

    s = load_ct("ct2.nrrd", 20, 18, 14, VPT_TF_CT);
    g = preclassified(s);
    REQUIRE(vpt_scene_digest(s, a) == 0 && vpt_scene_digest(g, b) == 0);
    CHECK_MSG(strcmp(a, b) != 0, "the CT table and its grid have one digest");
    is = render(s);
    ig = render(g);
    CHECK_MSG(memcmp(is, ig, bytes) != 0, "the CT table renders as its pre-classified grid");
    free(is);
    free(ig);
    vpt_scene_destroy(s);
    vpt_scene_destroy(g);
}

/* kB of the line "key:   N kB" of /proc/self/status; -1 when absent. */
static long status_kb(const char *key)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (!fp) return -1;
    char line[256];
    long kb = -1;
    const size_t n = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, key, n) && line[n] == ':') kb = strtol(line + n + 1, NULL, 10);
    fclose(fp);
    return kb;
}

/* Host memory of a transfer-function load (issue 36): a 512x512x320 int16
 * CT (160 MiB of data, a 320 MiB float grid) loads in a child process
 * whose peak resident set (VmHWM, reset through /proc/self/clear_refs first)
 * grows by at most 120% of the float grid: the scene is that grid, the albedo a
 * table; what the load holds beside it (the reader's chunks, threads) does
 * not grow with the grid. With a per-voxel RGBA8 albedo it would grow by
 * twice the float grid. */
TEST_TIMEOUT(albedo_transfer_load_peak_memory_is_its_float_grid, 300)
{
    const int nx = 512, ny = 512, nz = 320;
    char p[600];
    write_ct(vpt_test_tmp_path(p, sizeof p, "large.nrrd"), nx, ny, nz);
    const double grid_kb = 4.0 * nx * ny * nz / 1024.0;
    int fd[2];
    REQUIRE(pipe(fd) == 0);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        long r[3] = {-1, -1, -1}; /* status: 0 measured, 1 no VmHWM reset, 2 load failed */
        FILE *cr = fopen("/proc/self/clear_refs", "w");
        int reset = 0;
        if (cr) {
            reset = fputs("5", cr) >= 0;
            reset &= fclose(cr) == 0;
        }
        r[0] = reset ? 0 : 1;
        r[1] = status_kb("VmRSS");
        VptVolumeSceneOptions o = {.transfer = VPT_TF_CT, .like = "manix"};
        VptScene *s = reset ? vpt_scene_from_volume(p, &o) : NULL;
        if (reset && !s) r[0] = 2;
        r[2] = status_kb("VmHWM");
        vpt_scene_destroy(s);
        if (write(fd[1], r, sizeof r) != (ssize_t)sizeof r) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    long r[3] = {-1, -1, -1};
    const ssize_t got = read(fd[0], r, sizeof r);
    close(fd[0]);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    unlink(p);
    REQUIRE_MSG(got == (ssize_t)sizeof r && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed");
    if (r[0] == 1) SKIP("/proc/self/clear_refs cannot reset the peak resident set here");
    REQUIRE_MSG(r[0] == 0, "the load failed in the child");
    REQUIRE(r[1] > 0 && r[2] >= r[1]);
    const double grown = (double)(r[2] - r[1]);
    vpt_test_log("peak grew by %.0f MiB for a %.0f MiB float grid: %.3fx", grown / 1024.0, grid_kb / 1024.0,
                 grown / grid_kb);
    CHECK_MSG(grown <= 1.2 * grid_kb, "peak grew by %.0f kB, %.2fx the float grid's %.0f kB", grown, grown / grid_kb,
              grid_kb);
}
