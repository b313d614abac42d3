/* cloud<N>: a sparse cumulus cloud at any resolution (issue 17), the
 * counterpart of the smoke scene for volumes that leave the GPU's caches:
 * most of the box is empty, as in a production cloud.
 *
 * Three towers of billowing puffs over a flat base: each tower a column of
 * spheres narrowing upwards, each big puff carrying smaller ones on its
 * upper side (cauliflower tops). The shape is the soft union of the
 * spheres (max of 1 - distance / radius), eroded by band-limited fBm
 * (vpt_fbm_band) and turned into density by a smooth step, so puffs have
 * dense cores and wispy edges at every scale the grid holds; a second fBm
 * varies the density inside (up to 1, the cores' densest parts).
 * A voxel no puff reaches (farther than 1.6 radii from every centre) is
 * exactly 0. */
#include "scenes/phantoms/phantom.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How far erosion can push density beyond a sphere: shape + erosion > 0
 * needs 1 - dist / r > -REACH. */
#define REACH 0.8f
#define EROSION 1.6f /* erosion = EROSION * (fbm - 0.5), fbm in [0, 1] */
#define BASE_Y (-0.22f)

typedef struct {
    float c[3], r;
} Puff;

typedef struct {
    Puff *p;
    size_t n, cap;
} Puffs;

static int add(Puffs *P, float x, float y, float z, float r)
{
    if (P->n == P->cap) {
        size_t cap = P->cap ? 2 * P->cap : 128;
        Puff *p = vpt_realloc(P->p, cap * sizeof *p);
        if (!p) return -1;
        P->p = p;
        P->cap = cap;
    }
    P->p[P->n++] = (Puff){{x, y, z}, r};
    return 0;
}

/* A tower at (x, z) of height `height` and base radius r0. */
static int tower(Puffs *P, VptPhantomRng *g, float x, float z, float height, float r0)
{
    int rc = 0;
    /* the base: a ring of flattened puffs */
    for (int i = 0; i < 7 && !rc; i++) {
        const float a = 6.2831853f * ((float)i + vpt_phantom_rnd(g)) / 7.0f;
        const float d = r0 * (0.5f + 0.35f * vpt_phantom_rnd(g));
        rc = add(P, x + d * cosf(a), BASE_Y + 0.6f * r0 * 0.5f, z + d * sinf(a),
                 r0 * (0.55f + 0.2f * vpt_phantom_rnd(g)));
    }
    /* the column, narrowing and leaning as it rises */
    float y = BASE_Y + 0.5f * r0, r = r0, cx = x, cz = z;
    while (y < BASE_Y + height && !rc) {
        rc = add(P, cx, y, cz, r);
        /* cauliflower: smaller puffs on the upper side of each */
        for (int i = 0; i < 4 && !rc; i++) {
            const float a = 6.2831853f * vpt_phantom_rnd(g), el = 0.25f + 0.9f * vpt_phantom_rnd(g);
            const float d = r * (0.75f + 0.15f * vpt_phantom_rnd(g));
            rc = add(P, cx + d * cosf(a) * cosf(el), y + d * sinf(el), cz + d * sinf(a) * cosf(el),
                     r * (0.35f + 0.2f * vpt_phantom_rnd(g)));
        }
        y += r * (0.45f + 0.2f * vpt_phantom_rnd(g));
        r *= 0.82f + 0.08f * vpt_phantom_rnd(g);
        cx += (vpt_phantom_rnd(g) - 0.4f) * 0.3f * r;
        cz += (vpt_phantom_rnd(g) - 0.5f) * 0.3f * r;
    }
    return rc;
}

static float density_at(const Puff *p, const uint32_t *ids, size_t nids, float x, float y, float z, float h)
{
    float shape = -1e30f;
    for (size_t k = 0; k < nids; k++) {
        const Puff *q = &p[ids[k]];
        const float dx = x - q->c[0], dy = y - q->c[1], dz = z - q->c[2];
        const float d2 = dx * dx + dy * dy + dz * dz, reach = q->r * (1.0f + REACH);
        if (d2 >= reach * reach) continue;
        const float s = 1.0f - sqrtf(d2) / q->r;
        shape = s > shape ? s : shape;
    }
    if (shape <= -REACH) return 0.0f;
    /* a flat base: the cloud condenses above it */
    const float base = (y - BASE_Y) / 0.04f;
    if (base <= 0.0f) return 0.0f;
    const float e = EROSION * (vpt_fbm_band(x, y, z, 5.0f, 9, 0.72f, h) - 0.5f);
    float d = (shape + e) / 0.3f * (base < 1.0f ? base : 1.0f);
    if (d <= 0.0f) return 0.0f;
    d = d > 1.0f ? 1.0f : d;
    /* inside, the water content varies at every scale the grid holds */
    const float w = 0.8f + 2.0f * (vpt_fbm_band(x, y, z, 24.0f, 7, 0.85f, h) - 0.5f);
    return d * d * (3.0f - 2.0f * d) * (w < 0.0f ? 0.0f : w > 1.0f ? 1.0f : w);
}

typedef struct {
    VptScene *s;
    const Puffs *P;
    float h;
} Job;

static void voxel(void *arg, const uint32_t *ids, size_t nids, float x, float y, float z, size_t i)
{
    const Job *j = arg;
    j->s->density[i] = nids ? density_at(j->P->p, ids, nids, x, y, z, j->h) : 0.0f;
    /* grey, as smoke (phantom_smoke.c says why) */
    memcpy(j->s->albedo + 4 * i, (const uint8_t[4]){204, 204, 204, 255}, 4);
}

int vpt_phantom_cloud_scaled(VptScene *s, int threads)
{
    Puffs P = {NULL, 0, 0};
    VptPhantomRng g = {0xC10D5EEDu};
    if (tower(&P, &g, -0.20f, 0.06f, 0.32f, 0.12f) || tower(&P, &g, 0.04f, -0.08f, 0.45f, 0.145f) ||
        tower(&P, &g, 0.26f, 0.10f, 0.26f, 0.105f)) {
        free(P.p);
        return -1;
    }
    float(*lo)[3] = vpt_malloc(P.n * sizeof *lo), (*hi)[3] = lo ? vpt_malloc(P.n * sizeof *hi) : NULL;
    if (!hi) {
        free(lo);
        free(P.p);
        return -1;
    }
    for (size_t i = 0; i < P.n; i++)
        for (int k = 0; k < 3; k++) {
            lo[i][k] = P.p[i].c[k] - P.p[i].r * (1.0f + REACH);
            hi[i][k] = P.p[i].c[k] + P.p[i].r * (1.0f + REACH);
        }
    const int n = s->nx;
    VptBins bins;
    int rc = vpt_bins_build(&bins, n, n >= 1024 ? n / 64 : 16, (const float(*)[3])lo, (const float(*)[3])hi, P.n, 0.0f);
    free(lo);
    free(hi);
    if (rc == 0) {
        Job j = {s, &P, 1.0f / (float)n};
        vpt_bins_fill(&bins, threads, voxel, &j);
        vpt_bins_free(&bins);
    }
    free(P.p);
    return rc;
}
