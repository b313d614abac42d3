/* The six thesis scenes as deterministic procedural stand-ins, and the
 * scalable scenes head<N> and cloud<N>.
 *
 * Each row of the table below holds the thesis' parameters for one scene
 * (../shared/data/README.md; thesis fig. 4.3-4.6, 6.1, 6.2) and the
 * generator of its grids (phantom*.c).
 *
 * The scalable scenes are families: head<N> and cloud<N> are the same
 * content on an N^3 grid, for any N from 16 to 2048 (written without
 * leading zeros, so one scene has one name, which rows, caches and best
 * configs key on), so that one content can be measured at 128^3 (in a
 * GPU's L2) and at 1024^3 or 2048^3 (far beyond it). They are not in
 * vpt_scene_names(): loops over "every scene" (bench --thesis, the tests)
 * must not build 8 GB grids; the list and the tools' help name the sizes
 * 128 to 2048. Shared by all: a pinhole camera at
 * (0, 0, 100) looking at the origin with +y up, a 400x400 image, a constant
 * environment of radiance 1, an isotropic phase function, and, except for
 * smoke, a GGX rough dielectric boundary (alpha 0.1, IOR 1.05 inside, 1.01
 * outside). Boxes keep the voxels cubic: the unit cube's x extent is the
 * longest side. */
#include "scenes/scene.h"

#include "base/error.h"
#include "base/memory.h"
#include "base/progress.h"
#include "scenes/phantoms/phantom.h"

#include <stdlib.h>
#include <string.h>

typedef int (*BuildFn)(VptScene *s);

typedef struct {
    const char *name;
    int nx, ny, nz;
    float half[3];      /* box half extents; the box is centred at the origin */
    float fov_deg;
    float density_scale;
    int boundary;
    int spp;
    const char *what;   /* for the list */
    const char *source;
    BuildFn build;
} Builtin;

/* The printed layer is 10 voxels deep in both printing scenes (thesis fig.
 * 4.3, 4.4: "10% of the total resolution depth" of the cube). */
#define PRINT_DEPTH 10

static int build_printed(VptScene *s, int (*draw)(VptPicture *, int, int))
{
    VptPicture pic;
    if (draw(&pic, s->nx, s->ny) != 0) return -1;
    vpt_phantom_print(s, &pic, PRINT_DEPTH);
    vpt_picture_free(&pic);
    return 0;
}

static int build_logo(VptScene *s) { return build_printed(s, vpt_picture_logo); }
static int build_ad(VptScene *s) { return build_printed(s, vpt_picture_ad); }

static int build_ct(VptScene *s, void (*phantom)(const VptScene *, int16_t *))
{
    int16_t *raw = vpt_malloc((size_t)s->nx * s->ny * s->nz * sizeof *raw);
    if (!raw) return -1;
    phantom(s, raw);
    vpt_phantom_ct_transfer(s, raw);
    free(raw);
    return 0;
}

static int build_artifix(VptScene *s) { return build_ct(s, vpt_phantom_torso_hu); }
static int build_manix(VptScene *s) { return build_ct(s, vpt_phantom_head_hu); }

static int build_smoke(VptScene *s)
{
    vpt_phantom_smoke(s);
    return 0;
}

static int build_bucky(VptScene *s)
{
    vpt_phantom_bucky(s);
    return 0;
}

static const Builtin builtins[] = {
    {"cgg-logo", 100, 100, 100, {0.5f, 0.5f, 0.5f}, 0.7f, 100.0f, VPT_BOUNDARY_GGX, 100,
     "solid unit cube, density 100, logo printed 10 voxels deep (3D printing)",
     "procedural stand-in for the thesis' cgg-logo print (logo image not available): \"CGG\" in a ring", build_logo},
    {"ad", 320, 320, 100, {0.5f, 0.5f, 0.15625f}, 2.0f, 100.0f, VPT_BOUNDARY_GGX, 100,
     "slab, density 100, advertisement printed 10 voxels deep (3D printing)",
     "procedural stand-in for the thesis' ad print (advertisement image not available): a drawn poster", build_ad},
    {"artifix", 128, 87, 128, {0.5f, 0.5f * 87.0f / 128.0f, 0.5f}, 0.7f, 100.0f, VPT_BOUNDARY_GGX, 100,
     "CT torso, thesis CT transfer (stand-in for OsiriX ARTIFIX)",
     "procedural stand-in for the OsiriX ARTIFIX CT (not redistributable): torso phantom in HU", build_artifix},
    {"manix", 128, 115, 128, {0.5f, 0.5f * 115.0f / 128.0f, 0.5f}, 0.7f, 100.0f, VPT_BOUNDARY_GGX, 100,
     "CT head and neck, thesis CT transfer (stand-in for OsiriX MANIX)",
     "procedural stand-in for the OsiriX MANIX CT (not redistributable): Shepp-Logan-style head phantom in HU",
     build_manix},
    /* The smoke box is the real file's bbox (z: 50/256, cubic voxels). */
    {"smoke", 128, 128, 50, {0.5f, 0.5f, 0.1953125f}, 0.33f, 800.0f, VPT_BOUNDARY_NULL, 100,
     "smoke plume, density 800, no boundary (stand-in for Mitsuba's smoke.vol)",
     "procedural stand-in for Mitsuba's smoke.vol (load the real file with --volume): fBm plume", build_smoke},
    /* Thesis fig. 6.2: 300 Monte Carlo iterations for bucky. */
    {"bucky", 32, 32, 32, {0.5f, 0.5f, 0.5f}, 0.7f, 40.0f, VPT_BOUNDARY_GGX, 300,
     "C60 buckyball density, density 40, green/red/blue transfer",
     "procedural stand-in for the volvis.org buckyball (load the real file with --volume): C60 atoms and bonds",
     build_bucky},
};

#define NBUILTIN (sizeof builtins / sizeof builtins[0])

/* The same order as the table (the tests compare the two). */
static const char *const scene_names[] = {"cgg-logo", "ad", "artifix", "manix", "smoke", "bucky", NULL};
_Static_assert(sizeof scene_names / sizeof scene_names[0] == NBUILTIN + 1, "scene_names must match builtins");

const char *const *vpt_scene_names(void) { return scene_names; }

/* ---- the scalable families ---- */

typedef struct {
    const char *prefix;
    float fov_deg;
    float density_scale;
    int boundary;
    const char *what;   /* for the list */
    const char *source;
    int (*build)(VptScene *s, int threads);
} Family;

static const Family families[] = {
    /* manix's parameters: the thesis' CT scene */
    {"head", 0.7f, 100.0f, VPT_BOUNDARY_GGX,
     "CT head, manix's anatomy with full-resolution detail (trabecular bone, sulci, arterial tree)",
     "procedural CT head after manix at any resolution: band-limited detail down to the voxel",
     vpt_phantom_head_scaled},
    /* smoke's boundary and albedo; the whole box in view, as the CT scenes */
    {"cloud", 0.7f, 100.0f, VPT_BOUNDARY_NULL,
     "sparse cumulus cloud, density 100, no boundary (most of the box empty)",
     "procedural cumulus cloud at any resolution: eroded puffs, most of the box empty", vpt_phantom_cloud_scaled},
};
#define NFAMILY (sizeof families / sizeof families[0])
#define FAMILY_MIN 16
#define FAMILY_MAX 2048

/* The sizes the list names (any N in [16, 2048] works). */
static const int listed_sizes[] = {128, 256, 512, 1024, 2048};

/* "head1024" -> the family and 1024; NULL when name is no family's. */
static const Family *family_of(const char *name, int *n)
{
    for (size_t i = 0; name && i < NFAMILY; i++) {
        size_t len = strlen(families[i].prefix);
        if (strncmp(name, families[i].prefix, len) != 0) continue;
        const char *d = name + len;
        if (*d < '1' || *d > '9' || strlen(d) > 4) return NULL; /* no leading zero, no sign */
        int v = 0;
        for (; *d; d++) {
            if (*d < '0' || *d > '9') return NULL;
            v = 10 * v + (*d - '0');
        }
        if (v < FAMILY_MIN || v > FAMILY_MAX) return NULL;
        *n = v;
        return &families[i];
    }
    return NULL;
}

void vpt_scene_print_list(FILE *fp)
{
    for (size_t i = 0; i < NBUILTIN; i++) {
        const Builtin *b = &builtins[i];
        char grid[32];
        snprintf(grid, sizeof grid, "%dx%dx%d", b->nx, b->ny, b->nz);
        fprintf(fp, "%-9s %-14s %s\n", b->name, grid, b->what);
    }
    for (size_t i = 0; i < NFAMILY; i++)
        for (size_t k = 0; k < sizeof listed_sizes / sizeof listed_sizes[0]; k++) {
            const int n = listed_sizes[k];
            char name[32], grid[32];
            snprintf(name, sizeof name, "%s%d", families[i].prefix, n);
            snprintf(grid, sizeof grid, "%dx%dx%d", n, n, n);
            fprintf(fp, "%-9s %-14s %s; %.3g GiB (%s<N>: any N of %d..%d)\n", name, grid, families[i].what,
                    8.0 * n * n * n / 1073741824.0, families[i].prefix, FAMILY_MIN, FAMILY_MAX);
        }
}

static const Builtin *lookup(const char *name)
{
    for (size_t i = 0; name && i < NBUILTIN; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}

int vpt_scene_builtin_check(const char *name)
{
    int n;
    if (lookup(name) || family_of(name, &n)) return 0;
    char known[256] = "";
    for (size_t i = 0; i < NBUILTIN; i++) {
        if (i) strcat(known, ", ");
        strcat(known, builtins[i].name);
    }
    for (size_t i = 0; i < NFAMILY; i++) {
        strcat(known, ", ");
        strcat(known, families[i].prefix);
        strcat(known, "<N>");
    }
    return vpt_fail("unknown scene '%s' (known scenes: %s; N from %d to %d, e.g. %s1024)", name ? name : "(null)",
                    known, FAMILY_MIN, FAMILY_MAX, families[0].prefix);
}

/* The parameters every built-in scene shares (scene_builtin.c's top). */
static void common(VptScene *s, const float half[3], float fov, float scale, int boundary, int spp)
{
    for (int k = 0; k < 3; k++) {
        s->box_min[k] = -half[k];
        s->box_max[k] = half[k];
    }
    s->cam_pos[2] = 100.0f;
    s->cam_up[1] = 1.0f;
    s->fov_deg = fov;
    s->density_scale = scale;
    s->boundary = boundary;
    if (boundary != VPT_BOUNDARY_NULL) {
        s->ior_inside = 1.05f;
        s->ior_outside = 1.01f;
        s->ggx_alpha = 0.1f;
    } else {
        s->ior_inside = s->ior_outside = 1.0f; /* index-matched */
    }
    s->hg_g = 0.0f;
    s->env[0] = s->env[1] = s->env[2] = 1.0f;
    s->width = s->height = 400;
    s->spp = spp;
}

int vpt_scene_builtin_params(const char *name, VptScene *s)
{
    memset(s, 0, sizeof *s);
    if (vpt_scene_builtin_check(name)) return -1;
    const Builtin *b = lookup(name);
    int n = 0;
    const Family *f = b ? NULL : family_of(name, &n);
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->volume.format, sizeof s->volume.format, "f32");
    snprintf(s->volume.source, sizeof s->volume.source, "%s", name);
    if (b) {
        snprintf(s->source, sizeof s->source, "%s", b->source);
        s->nx = b->nx;
        s->ny = b->ny;
        s->nz = b->nz;
        common(s, b->half, b->fov_deg, b->density_scale, b->boundary, b->spp);
    } else {
        static const float half[3] = {0.5f, 0.5f, 0.5f};
        snprintf(s->source, sizeof s->source, "%s (%d^3)", f->source, n);
        s->nx = s->ny = s->nz = n;
        common(s, half, f->fov_deg, f->density_scale, f->boundary, 100);
    }
    return 0;
}

VptScene *vpt_scene_builtin_threads(const char *name, int threads)
{
    VptScene *s = vpt_calloc(1, sizeof *s);
    if (!s) return NULL;
    if (vpt_scene_builtin_params(name, s)) {
        free(s);
        return NULL;
    }
    const Builtin *b = lookup(name);
    int n = 0;
    const Family *f = b ? NULL : family_of(name, &n);
    size_t count = (size_t)s->nx * s->ny * s->nz; /* at most 2048^3: no overflow */
    /* a large scene that cannot fit is refused before it is allocated */
    const double need = 8.0 * (double)count, avail = vpt_memory_available();
    if (avail > 0 && need > avail) {
        char a[32], c[32], fit[96] = "";
        for (int m = n / 2; f && m >= FAMILY_MIN && !fit[0]; m /= 2)
            if (8.0 * m * m * m <= avail)
                snprintf(fit, sizeof fit, "; %s%d would need %s", f->prefix, m, vpt_memory_text(8.0 * m * m * m, c));
        vpt_fail("scene '%s' needs %s of host memory (8 bytes a voxel: float density, RGBA8 albedo), but only %s are "
                 "available%s",
                 name, vpt_memory_text(need, a), vpt_memory_text(avail, c), fit);
        free(s);
        return NULL;
    }
    s->density = vpt_malloc(count * sizeof *s->density);
    s->albedo = s->density ? vpt_malloc(count * 4) : NULL;
    int rc = !s->albedo;
    if (!rc && b) rc = b->build(s) != 0;
    if (!rc && f) {
        char what[64];
        snprintf(what, sizeof what, "building %s", name);
        vpt_progress_begin(what);
        rc = f->build(s, threads) != 0;
        vpt_progress_end();
    }
    if (rc || vpt_scene_finalize(s) != 0) {
        vpt_error_prefix("building scene '%s'", name);
        vpt_scene_destroy(s);
        return NULL;
    }
    return s;
}

VptScene *vpt_scene_builtin(const char *name) { return vpt_scene_builtin_threads(name, 0); }
