#include "tests/harness/test.h"

#include "base/error.h"
#include "scenes/phantoms/phantom.h"
#include "scenes/scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t voxels(const VptScene *s) { return (size_t)s->nx * s->ny * s->nz; }
static size_t vidx(const VptScene *s, int x, int y, int z)
{
    return (size_t)x + (size_t)s->nx * ((size_t)y + (size_t)s->ny * (size_t)z);
}
static float dens(const VptScene *s, int x, int y, int z) { return s->density[vidx(s, x, y, z)]; }
static const uint8_t *alb(const VptScene *s, int x, int y, int z) { return s->albedo + 4 * vidx(s, x, y, z); }

/* The voxel containing world point p (clamped to the grid). */
static void world_to_voxel(const VptScene *s, const float p[3], int v[3])
{
    int n[3] = {s->nx, s->ny, s->nz};
    for (int k = 0; k < 3; k++) {
        float u = (p[k] - s->box_min[k]) / (s->box_max[k] - s->box_min[k]);
        int i = (int)floorf(u * (float)n[k]);
        v[k] = i < 0 ? 0 : i >= n[k] ? n[k] - 1 : i;
    }
}

static float dens_at(const VptScene *s, float x, float y, float z)
{
    float p[3] = {x, y, z};
    int v[3];
    world_to_voxel(s, p, v);
    return dens(s, v[0], v[1], v[2]);
}

/* Trilinear density at world p, texel centres at (i + 0.5) / n, clamped. */
static float dens_lerp(const VptScene *s, const float p[3])
{
    int n[3] = {s->nx, s->ny, s->nz}, i0[3];
    float f[3];
    for (int k = 0; k < 3; k++) {
        float u = (p[k] - s->box_min[k]) / (s->box_max[k] - s->box_min[k]) * (float)n[k] - 0.5f;
        float fl = floorf(u);
        i0[k] = (int)fl;
        f[k] = u - fl;
    }
    float sum = 0.0f;
    for (int c = 0; c < 8; c++) {
        int q[3];
        float w = 1.0f;
        for (int k = 0; k < 3; k++) {
            int b = c >> k & 1;
            q[k] = i0[k] + b;
            q[k] = q[k] < 0 ? 0 : q[k] >= n[k] ? n[k] - 1 : q[k];
            w *= b ? f[k] : 1.0f - f[k];
        }
        sum += w * dens(s, q[0], q[1], q[2]);
    }
    return sum;
}

typedef struct {
    const char *name;
    int nx, ny, nz;
    float half[3];
    float fov, scale;
    int boundary, spp;
} Expect;

static const Expect expected[] = {
    {"cgg-logo", 100, 100, 100, {0.5f, 0.5f, 0.5f}, 0.7f, 100.0f, VPT_BOUNDARY_GGX, 100},
    {"ad", 320, 320, 100, {0.5f, 0.5f, 0.15625f}, 2.0f, 100.0f, VPT_BOUNDARY_GGX, 100},
    {"artifix", 128, 87, 128, {0.5f, 0.33984375f, 0.5f}, 0.7f, 100.0f, VPT_BOUNDARY_GGX, 100},
    {"manix", 128, 115, 128, {0.5f, 0.44921875f, 0.5f}, 0.7f, 100.0f, VPT_BOUNDARY_GGX, 100},
    {"smoke", 128, 128, 50, {0.5f, 0.5f, 0.1953125f}, 0.33f, 800.0f, VPT_BOUNDARY_NULL, 100},
    {"bucky", 32, 32, 32, {0.5f, 0.5f, 0.5f}, 0.7f, 40.0f, VPT_BOUNDARY_GGX, 300},
};
#define NEXPECT (int)(sizeof expected / sizeof expected[0])

TEST(scene_builtin_names_and_list)
{
    const char *const *names = vpt_scene_names();
    int n = 0;
    while (names[n]) n++;
    CHECK_EQ_INT(n, NEXPECT);
    for (int i = 0; i < NEXPECT && i < n; i++) {
        CHECK(strcmp(names[i], expected[i].name) == 0);
        VptScene *s = vpt_scene_builtin(names[i]); /* every listed name builds */
        CHECK_MSG(s && strcmp(s->name, names[i]) == 0, "%s: %s", names[i], vpt_errmsg());
        vpt_scene_destroy(s);
    }

    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    REQUIRE(fp);
    vpt_scene_print_list(fp);
    fclose(fp);
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += buf[i] == '\n';
    /* the six, then the scalable scenes at five sizes each (built by none
     * of this: test_scene_scalable.c) */
    CHECK_EQ_INT(lines, NEXPECT + 2 * 5);
    for (int i = 0; i < NEXPECT; i++) {
        char grid[64];
        snprintf(grid, sizeof grid, "%dx%dx%d", expected[i].nx, expected[i].ny, expected[i].nz);
        CHECK_STR_CONTAINS(buf, expected[i].name);
        CHECK_STR_CONTAINS(buf, grid);
    }
    CHECK_STR_CONTAINS(buf, "MANIX");
    CHECK_STR_CONTAINS(buf, "ARTIFIX");
    free(buf);
}

TEST(scene_builtin_unknown_name)
{
    CHECK(vpt_scene_builtin("nope") == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "'nope'");
    for (int i = 0; i < NEXPECT; i++) CHECK_STR_CONTAINS(vpt_errmsg(), expected[i].name);
    CHECK(vpt_scene_builtin("") == NULL);
    CHECK(vpt_scene_builtin("Manix") == NULL); /* names are exact */
    CHECK(vpt_scene_builtin(NULL) == NULL);
    CHECK_STR_CONTAINS(vpt_errmsg(), "bucky");
}

TEST_TIMEOUT(scene_builtin_parameters, 60)
{
    for (int i = 0; i < NEXPECT; i++) {
        const Expect *e = &expected[i];
        VptScene *s = vpt_scene_builtin(e->name);
        REQUIRE_MSG(s, "%s: %s", e->name, vpt_errmsg());
        CHECK(strcmp(s->name, e->name) == 0);
        CHECK_STR_CONTAINS(s->source, "stand-in");
        CHECK_EQ_INT(s->nx, e->nx);
        CHECK_EQ_INT(s->ny, e->ny);
        CHECK_EQ_INT(s->nz, e->nz);
        for (int k = 0; k < 3; k++) {
            CHECK_NEAR(s->box_min[k], -e->half[k], 1e-7);
            CHECK_NEAR(s->box_max[k], e->half[k], 1e-7);
        }
        /* cubic voxels, as the thesis' data has */
        float vx = (s->box_max[0] - s->box_min[0]) / (float)s->nx;
        CHECK_NEAR((s->box_max[1] - s->box_min[1]) / (float)s->ny, vx, 1e-6);
        CHECK_NEAR((s->box_max[2] - s->box_min[2]) / (float)s->nz, vx, 1e-6);
        CHECK_NEAR(s->fov_deg, e->fov, 1e-7);
        CHECK_NEAR(s->density_scale, e->scale, 0.0);
        CHECK_EQ_INT(s->boundary, e->boundary);
        if (e->boundary == VPT_BOUNDARY_GGX) {
            CHECK_NEAR(s->ggx_alpha, 0.1f, 0.0);
            CHECK_NEAR(s->ior_inside, 1.05f, 0.0);
            CHECK_NEAR(s->ior_outside, 1.01f, 0.0);
        }
        CHECK(s->cam_pos[0] == 0.0f && s->cam_pos[1] == 0.0f && s->cam_pos[2] == 100.0f);
        CHECK(s->cam_target[0] == 0.0f && s->cam_target[1] == 0.0f && s->cam_target[2] == 0.0f);
        CHECK(s->cam_up[0] == 0.0f && s->cam_up[1] == 1.0f && s->cam_up[2] == 0.0f);
        CHECK(s->env[0] == 1.0f && s->env[1] == 1.0f && s->env[2] == 1.0f);
        CHECK(s->hg_g == 0.0f);
        CHECK_EQ_INT(s->width, 400);
        CHECK_EQ_INT(s->height, 400);
        CHECK_EQ_INT(s->spp, e->spp);
        size_t n = voxels(s);
        float mx = 0.0f;
        int bad = 0, alpha_bad = 0;
        for (size_t v = 0; v < n; v++) {
            float d = s->density[v];
            if (!(d >= 0.0f && d <= 1.0f)) bad++;
            if (d > mx) mx = d;
            if (s->albedo[4 * v + 3] != 255) alpha_bad++;
        }
        CHECK_MSG(bad == 0, "%s: %d densities outside [0, 1]", e->name, bad);
        CHECK_EQ_INT(alpha_bad, 0);
        CHECK(s->density_max > 0.0f);
        CHECK(s->density_max == mx);
        CHECK(vpt_scene_finalize(s) == 0);
        vpt_scene_destroy(s);
    }
}

TEST_TIMEOUT(scene_builtin_deterministic, 60)
{
    for (int i = 0; i < NEXPECT; i++) {
        VptScene *a = vpt_scene_builtin(expected[i].name), *b = vpt_scene_builtin(expected[i].name);
        REQUIRE(a && b);
        size_t n = voxels(a);
        CHECK_MSG(memcmp(a->density, b->density, n * sizeof(float)) == 0, "%s: density differs", expected[i].name);
        CHECK_MSG(memcmp(a->albedo, b->albedo, n * 4) == 0, "%s: albedo differs", expected[i].name);
        CHECK(a->density_max == b->density_max);
        vpt_scene_destroy(a);
        vpt_scene_destroy(b);
    }
}

static int is_white(const uint8_t *a) { return a[0] == 255 && a[1] == 255 && a[2] == 255; }

/* Density 1 everywhere; the picture fills exactly the 10 voxels under the +z
 * face (the same in every layer), white below. Returns the number of
 * distinct colours in the picture. */
static int check_print(const VptScene *s)
{
    int bad_density = 0, bad_layer = 0, colored_below = 0;
    for (size_t v = 0; v < voxels(s); v++) bad_density += s->density[v] != 1.0f;
    CHECK_EQ_INT(bad_density, 0);
    uint32_t colors[64];
    int ncolors = 0;
    for (int y = 0; y < s->ny; y++)
        for (int x = 0; x < s->nx; x++) {
            const uint8_t *top = alb(s, x, y, s->nz - 1);
            for (int z = s->nz - 10; z < s->nz - 1; z++) bad_layer += memcmp(alb(s, x, y, z), top, 4) != 0;
            for (int z = 0; z < s->nz - 10; z++) colored_below += !is_white(alb(s, x, y, z));
            uint32_t c = (uint32_t)top[0] << 16 | (uint32_t)top[1] << 8 | top[2];
            int seen = 0;
            for (int k = 0; k < ncolors; k++) seen |= colors[k] == c;
            if (!seen && ncolors < 64) colors[ncolors++] = c;
        }
    CHECK_EQ_INT(bad_layer, 0);
    CHECK_EQ_INT(colored_below, 0);
    return ncolors;
}

TEST(scene_printed_logo_and_ad)
{
    VptScene *s = vpt_scene_builtin("cgg-logo");
    REQUIRE(s);
    int nc = check_print(s);
    CHECK_MSG(nc >= 3, "logo has %d colours", nc);
    /* a graphic, not a flat fill: a good share of the face is printed */
    int printed = 0;
    for (int y = 0; y < s->ny; y++)
        for (int x = 0; x < s->nx; x++) printed += !is_white(alb(s, x, y, s->nz - 1));
    CHECK(printed > s->nx * s->ny / 20 && printed < s->nx * s->ny / 2);
    vpt_scene_destroy(s);

    s = vpt_scene_builtin("ad");
    REQUIRE(s);
    nc = check_print(s);
    CHECK_MSG(nc >= 5, "ad has %d colours", nc);
    /* orientation as the camera sees it (+y up, +x right): the red title band
     * at the top, the colour bars at the bottom running red (left) to
     * purple (right) */
    const uint8_t *top = alb(s, 2, s->ny - 2, s->nz - 1), *bl = alb(s, 2, 1, s->nz - 1),
                  *br = alb(s, s->nx - 3, 1, s->nz - 1);
    CHECK(top[0] > 150 && top[1] < 50 && top[2] < 50);
    CHECK(bl[0] > 150 && bl[1] < 50 && bl[2] < 50);
    CHECK(br[2] > 100 && br[1] < 50);
    vpt_scene_destroy(s);
}

/* Every voxel within `margin` voxels of the box faces (except faces listed in
 * `skip`, e.g. where the neck leaves the box) must be exactly 0. */
static int nonzero_near_faces(const VptScene *s, int margin, const char *skip)
{
    int bad = 0;
    for (int z = 0; z < s->nz; z++)
        for (int y = 0; y < s->ny; y++)
            for (int x = 0; x < s->nx; x++) {
                int near = x < margin || x >= s->nx - margin || z < margin || z >= s->nz - margin ||
                           (!strchr(skip, 'y') && (y < margin || y >= s->ny - margin));
                if (near && dens(s, x, y, z) != 0.0f) bad++;
            }
    return bad;
}

TEST(scene_manix_head)
{
    VptScene *s = vpt_scene_builtin("manix");
    REQUIRE(s);
    /* air around the head is exactly 0 (the neck leaves through -y, the
     * crown nearly touches +y) */
    CHECK_EQ_INT(nonzero_near_faces(s, 4, "y"), 0);
    CHECK(dens(s, 0, 0, 0) == 0.0f && dens(s, s->nx - 1, s->ny - 1, s->nz - 1) == 0.0f);
    CHECK(s->density_max == 1.0f); /* metal fillings: the top of the range */

    /* From the brain's centre outwards in five directions: low-density
     * brain, then a dense skull shell only a few voxels thick, then scalp,
     * then air (0). */
    const float c[3] = {0.0f, 0.10f, -0.04f};
    const float dirs[5][3] = {{0, 1, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 0, -1}, {0.7071f, 0.7071f, 0}};
    for (int d = 0; d < 5; d++) {
        float peak = 0.0f, brain_max = 0.0f, last = 1.0f;
        int dense_run = 0;
        for (float t = 0.0f; t < 0.7f; t += 0.002f) {
            float p[3] = {c[0] + t * dirs[d][0], c[1] + t * dirs[d][1], c[2] + t * dirs[d][2]};
            if (p[1] > s->box_max[1] || fabsf(p[0]) > 0.5f || fabsf(p[2]) > 0.5f) break;
            float v = dens_at(s, p[0], p[1], p[2]);
            if (t < 0.2f && v > brain_max) brain_max = v;
            if (v > peak) peak = v;
            dense_run += v > 0.8f;
            last = v;
        }
        CHECK_MSG(brain_max < 0.3f, "direction %d: brain density %g", d, brain_max);
        CHECK_MSG(peak > 0.9f, "direction %d: skull peak %g", d, peak);
        /* 0.002 steps: a shell of ~3-4 voxels (1/128 each) is ~15 steps */
        CHECK_MSG(dense_run > 2 && dense_run < 30, "direction %d: dense run %d steps", d, dense_run);
        CHECK_MSG(last == 0.0f, "direction %d: ends in density %g, not air", d, last);
    }
    /* a face: the eye sockets are holes in the skull (soft tissue, not
     * bone) while the forehead above them is bone */
    CHECK(dens_at(s, 0.115f, 0.0f, 0.33f) < 0.3f);
    CHECK(dens_at(s, -0.115f, 0.0f, 0.33f) < 0.3f);
    float brow = 0.0f;
    for (float z = 0.25f; z < 0.40f; z += 0.004f) brow = fmaxf(brow, dens_at(s, 0.0f, 0.085f, z));
    CHECK(brow > 0.9f);
    vpt_scene_destroy(s);
}

TEST(scene_artifix_torso)
{
    VptScene *s = vpt_scene_builtin("artifix");
    REQUIRE(s);
    /* air in front of and behind the body (and beside it) is exactly 0; the
     * torso section runs through the whole box along y */
    CHECK_EQ_INT(nonzero_near_faces(s, 8, "y"), 0);
    CHECK(s->density_max == 1.0f); /* metal implant */
    /* lungs (near 0), soft tissue (low), spine (dense), in the right places */
    CHECK(dens_at(s, -0.19f, 0.17f, -0.02f) < 0.02f);
    CHECK(dens_at(s, 0.19f, 0.17f, -0.02f) < 0.02f);
    float liver = dens_at(s, -0.15f, -0.24f, 0.02f);
    CHECK(liver > 0.02f && liver < 0.4f);
    float spine = 0.0f;
    for (float z = -0.22f; z < -0.08f; z += 0.004f) spine = fmaxf(spine, dens_at(s, 0.0f, 0.0f, z));
    CHECK(spine > 0.9f);
    /* the body's outline: soft tissue under the skin at the front */
    CHECK(dens_at(s, 0.0f, 0.0f, 0.24f) > 0.0f);
    vpt_scene_destroy(s);
}

/* The CT grids must be exactly the thesis' transfer over the phantom's raw
 * values: normalize by min/max, smoothstep(0.2, 0.6), table albedo. Air and
 * metal span a 12-bit scanner's range. */
static void check_ct_transfer(const char *name, void (*phantom)(const VptScene *, int16_t *))
{
    VptScene *s = vpt_scene_builtin(name);
    REQUIRE(s);
    size_t n = voxels(s);
    int16_t *raw = malloc(n * sizeof *raw);
    REQUIRE(raw);
    phantom(s, raw);
    int lo = raw[0], hi = raw[0];
    for (size_t i = 0; i < n; i++) {
        lo = raw[i] < lo ? raw[i] : lo;
        hi = raw[i] > hi ? raw[i] : hi;
    }
    CHECK_EQ_INT(lo, -1024);
    CHECK_EQ_INT(hi, 3071);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        float d = vpt_ct_density((float)(raw[i] - lo) / (float)(hi - lo));
        uint8_t a[4];
        vpt_ct_albedo(d, a);
        bad += d != s->density[i] || memcmp(a, s->albedo + 4 * i, 4) != 0;
    }
    CHECK_MSG(bad == 0, "%s: %d voxels differ from the thesis transfer", name, bad);
    free(raw);
    vpt_scene_destroy(s);
}

TEST(scene_ct_transfer_matches_thesis)
{
    check_ct_transfer("manix", vpt_phantom_head_hu);
    check_ct_transfer("artifix", vpt_phantom_torso_hu);
}

TEST(scene_smoke_plume)
{
    VptScene *s = vpt_scene_builtin("smoke");
    REQUIRE(s);
    CHECK_EQ_INT(s->boundary, VPT_BOUNDARY_NULL);
    CHECK(s->density_max == 1.0f);
    size_t n = voxels(s), nonzero = 0;
    double sum = 0.0;
    int not_grey = 0;
    for (size_t i = 0; i < n; i++) {
        nonzero += s->density[i] > 0.0f;
        sum += s->density[i];
        const uint8_t *a = s->albedo + 4 * i;
        not_grey += !(a[0] == 204 && a[1] == 204 && a[2] == 204); /* albedo 0.8, see phantom_smoke.c */
    }
    CHECK_EQ_INT(not_grey, 0);
    /* mostly empty with a low mean, like the real volume (38% non-zero,
     * mean 0.012) */
    CHECK(nonzero > n / 50 && nonzero < n / 2);
    CHECK(sum / (double)n > 0.002 && sum / (double)n < 0.05);
    /* nothing below the source; the plume rises and drifts to +x: its
     * density-weighted x is larger in the top quarter than near the source */
    double mass_bottom = 0.0, wx[2] = {0, 0}, w[2] = {0, 0};
    for (int z = 0; z < s->nz; z++)
        for (int y = 0; y < s->ny; y++)
            for (int x = 0; x < s->nx; x++) {
                float d = dens(s, x, y, z);
                if (y < 20) mass_bottom += d;
                int band = y >= 96 ? 1 : (y >= 30 && y < 60) ? 0 : -1;
                if (band >= 0) {
                    wx[band] += d * x;
                    w[band] += d;
                }
            }
    CHECK(mass_bottom == 0.0);
    REQUIRE(w[0] > 0.0 && w[1] > 0.0);
    CHECK(wx[1] / w[1] > wx[0] / w[0] + 10.0);
    vpt_scene_destroy(s);
}

TEST(scene_bucky_c60)
{
    /* the molecule: 60 distinct atoms on a sphere, 90 bonds, 3 per atom */
    float atoms[VPT_C60_ATOMS][3];
    vpt_c60_atoms(atoms);
    int bonds[VPT_C60_BONDS][2];
    CHECK_EQ_INT(vpt_c60_bonds(atoms, bonds, VPT_C60_BONDS), VPT_C60_BONDS);
    int degree[VPT_C60_ATOMS] = {0};
    for (int b = 0; b < VPT_C60_BONDS; b++) degree[bonds[b][0]]++, degree[bonds[b][1]]++;
    float min_d2 = 1e9f;
    for (int i = 0; i < VPT_C60_ATOMS; i++) {
        CHECK_EQ_INT(degree[i], 3);
        float r2 = atoms[i][0] * atoms[i][0] + atoms[i][1] * atoms[i][1] + atoms[i][2] * atoms[i][2];
        CHECK_NEAR(sqrtf(r2), sqrt(9.0 * 1.6180339887 + 10.0), 1e-4);
        for (int j = i + 1; j < VPT_C60_ATOMS; j++) {
            float d2 = 0.0f;
            for (int k = 0; k < 3; k++) d2 += (atoms[i][k] - atoms[j][k]) * (atoms[i][k] - atoms[j][k]);
            min_d2 = fminf(min_d2, d2);
        }
    }
    CHECK_NEAR(min_d2, 4.0f, 1e-4);

    VptScene *s = vpt_scene_builtin("bucky");
    REQUIRE(s);
    /* dense at every atom, empty at the cage's centre */
    float pos[VPT_C60_ATOMS][3];
    vpt_bucky_atom_positions(pos);
    for (int i = 0; i < VPT_C60_ATOMS; i++) {
        float d = dens_lerp(s, pos[i]);
        CHECK_MSG(d > 0.6f, "atom %d at (%g, %g, %g): density %g", i, pos[i][0], pos[i][1], pos[i][2], d);
    }
    const float centre[3] = {0, 0, 0};
    CHECK(dens_lerp(s, centre) < 0.01f);
    /* exactly 60 local maxima: voxels >= their 26 neighbours, adjacent
     * ties merged (atoms on a symmetry plane fall between two voxels) */
    int n = s->nx, label[32 * 32 * 32];
    REQUIRE(s->nx == 32 && s->ny == 32 && s->nz == 32);
    for (int i = 0; i < n * n * n; i++) label[i] = -1;
    int peaks = 0;
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                float v = dens(s, x, y, z);
                if (v < 0.3f) continue;
                int is_max = 1, merged = -1;
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int qx = x + dx, qy = y + dy, qz = z + dz;
                            if ((!dx && !dy && !dz) || qx < 0 || qy < 0 || qz < 0 || qx >= n || qy >= n || qz >= n)
                                continue;
                            if (dens(s, qx, qy, qz) > v) is_max = 0;
                            int l = label[qx + n * (qy + n * qz)];
                            if (l >= 0) merged = l;
                        }
                if (!is_max) continue;
                label[x + n * (y + n * z)] = merged >= 0 ? merged : peaks++;
            }
    CHECK_EQ_INT(peaks, 60);
    /* albedo: green at low density, red at medium, blue at the atoms */
    uint8_t a[4];
    vpt_bucky_albedo(0.0f, a);
    CHECK(a[1] > a[0] && a[1] > a[2]);
    vpt_bucky_albedo(0.5f, a);
    CHECK(a[0] > a[1] && a[0] > a[2]);
    vpt_bucky_albedo(1.0f, a);
    CHECK(a[2] > a[0] && a[2] > a[1]);
    int vx[3];
    world_to_voxel(s, pos[0], vx);
    const uint8_t *al = alb(s, vx[0], vx[1], vx[2]);
    CHECK(al[2] > al[1]);
    vpt_scene_destroy(s);
}

TEST(scene_noise_deterministic_and_bounded)
{
    float lo = 1.0f, hi = 0.0f;
    for (int i = 0; i < 2000; i++) {
        float x = (float)i * 0.173f - 50.0f, y = (float)i * 0.071f, z = -(float)i * 0.029f;
        float v = vpt_fbm3(x, y, z, 4, 1234u);
        CHECK(v == vpt_fbm3(x, y, z, 4, 1234u));
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
        float w = vpt_value_noise3(x, y, z, 99u);
        CHECK(w >= 0.0f && w <= 1.0f);
    }
    CHECK(lo >= 0.0f && hi <= 1.0f && hi - lo > 0.3f); /* bounded, not constant */
    /* lattice points take the hash value; the seed matters */
    CHECK(vpt_value_noise3(3.0f, -2.0f, 5.0f, 7u) == vpt_hash01(3, -2, 5, 7u));
    CHECK(vpt_hash01(3, -2, 5, 7u) != vpt_hash01(3, -2, 5, 8u));
}
