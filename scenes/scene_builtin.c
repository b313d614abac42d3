/* The six thesis scenes as deterministic procedural stand-ins.
 *
 * Each row of the table below holds the thesis' parameters for one scene
 * (../shared/data/README.md; thesis fig. 4.3-4.6, 6.1, 6.2) and the
 * generator of its grids (phantom*.c). Shared by all: a pinhole camera at
 * (0, 0, 100) looking at the origin with +y up, a 400x400 image, a constant
 * environment of radiance 1, an isotropic phase function, and, except for
 * smoke, a GGX rough dielectric boundary (alpha 0.1, IOR 1.05 inside, 1.01
 * outside). Boxes keep the voxels cubic: the unit cube's x extent is the
 * longest side. */
#include "scenes/scene.h"

#include "base/error.h"
#include "scenes/phantom.h"

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

void vpt_scene_print_list(FILE *fp)
{
    for (size_t i = 0; i < NBUILTIN; i++) {
        const Builtin *b = &builtins[i];
        char grid[32];
        snprintf(grid, sizeof grid, "%dx%dx%d", b->nx, b->ny, b->nz);
        fprintf(fp, "%-9s %-12s %s\n", b->name, grid, b->what);
    }
}

static const Builtin *lookup(const char *name)
{
    for (size_t i = 0; name && i < NBUILTIN; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    char known[256] = "";
    for (size_t i = 0; i < NBUILTIN; i++) {
        if (i) strcat(known, ", ");
        strcat(known, builtins[i].name);
    }
    vpt_fail("unknown scene '%s' (known scenes: %s)", name ? name : "(null)", known);
    return NULL;
}

VptScene *vpt_scene_builtin(const char *name)
{
    const Builtin *b = lookup(name);
    if (!b) return NULL;
    VptScene *s = vpt_calloc(1, sizeof *s);
    if (!s) return NULL;
    snprintf(s->name, sizeof s->name, "%s", b->name);
    snprintf(s->source, sizeof s->source, "%s", b->source);
    s->nx = b->nx;
    s->ny = b->ny;
    s->nz = b->nz;
    for (int k = 0; k < 3; k++) {
        s->box_min[k] = -b->half[k];
        s->box_max[k] = b->half[k];
    }
    s->cam_pos[2] = 100.0f;
    s->cam_up[1] = 1.0f;
    s->fov_deg = b->fov_deg;
    s->density_scale = b->density_scale;
    s->boundary = b->boundary;
    if (b->boundary != VPT_BOUNDARY_NULL) {
        s->ior_inside = 1.05f;
        s->ior_outside = 1.01f;
        s->ggx_alpha = 0.1f;
    } else {
        s->ior_inside = s->ior_outside = 1.0f; /* index-matched */
    }
    s->hg_g = 0.0f;
    s->env[0] = s->env[1] = s->env[2] = 1.0f;
    s->width = s->height = 400;
    s->spp = b->spp;

    size_t n = (size_t)s->nx * s->ny * s->nz; /* small constants: no overflow */
    s->density = vpt_malloc(n * sizeof *s->density);
    s->albedo = vpt_malloc(n * 4);
    if (!s->density || !s->albedo || b->build(s) != 0 || vpt_scene_finalize(s) != 0) {
        vpt_error_prefix("building scene '%s'", b->name);
        vpt_scene_destroy(s);
        return NULL;
    }
    return s;
}
