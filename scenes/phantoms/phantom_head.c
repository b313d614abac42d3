/* head<N>: the manix head (phantom_ct.c) at any resolution, with detail down
 * to the voxel at 1024^3 and beyond, for measuring the same content at
 * several sizes (issue 17).
 *
 * The anatomy is manix's list of solids, painted in the same order with the
 * same values, plus what a real head CT angiography shows at full
 * resolution and a 128^3 stand-in cannot:
 *   - an arterial tree: from each carotid's top, the anterior, middle and
 *     posterior cerebral arteries branch eight times, radius x 0.7 a
 *     generation, down to vessels half a voxel wide at 1024^3 (contrast,
 *     350 HU); a fixed seed makes it the same tree every time;
 *   - cancellous (trabecular) bone in the skull's diploe, the vertebral
 *     bodies and the upper jaw;
 *   - CSF-filled sulci folding the cortex;
 *   - manix's tissue texture, continued to finer octaves.
 * Every texture is band-limited to the grid (vpt_fbm_band) and every edge
 * anti-aliased over one voxel: a coarser grid of the same head shows the
 * same anatomy, filtered as a coarser scan would be, never aliased. The
 * values (HU, rounded to integers as a scanner stores them) go through the
 * thesis' CT transfer normalized over the scanner's range, -1024 .. 3071,
 * so no pass over the whole grid is needed to find it. */
#include "scenes/phantoms/phantom.h"
#include "scenes/phantoms/phantom_shapes.h"

#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a solid is made of: picks the texture its voxels get. */
enum { MAT_AIR, MAT_SOFT, MAT_BONE, MAT_CANCELLOUS, MAT_GRAY, MAT_WHITE, MAT_CSF, MAT_VESSEL, MAT_METAL, MAT_AIRWAY };

typedef enum { K_ELLIPSOID, K_CYL_Y, K_BOX, K_CAPSULE, K_HOOP } Kind;

typedef struct {
    Kind kind;
    int mat;
    float hu;
    float a[10];
} Solid;

typedef struct {
    Solid *s;
    float (*lo)[3], (*hi)[3];
    size_t n, cap;
    int oom;
} Solids;

static Solid *push(Solids *L, Kind kind, int mat, float hu, const float lo[3], const float hi[3])
{
    if (L->oom) return NULL;
    if (L->n == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 256;
        Solid *s = vpt_realloc(L->s, cap * sizeof *s);
        if (s) L->s = s;
        float(*a)[3] = s ? vpt_realloc(L->lo, cap * sizeof *a) : NULL;
        if (a) L->lo = a;
        float(*b)[3] = a ? vpt_realloc(L->hi, cap * sizeof *b) : NULL;
        if (b) L->hi = b;
        if (!b) {
            L->oom = 1;
            return NULL;
        }
        L->cap = cap;
    }
    Solid *s = &L->s[L->n];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->mat = mat;
    s->hu = hu;
    memcpy(L->lo[L->n], lo, sizeof L->lo[0]);
    memcpy(L->hi[L->n], hi, sizeof L->hi[0]);
    L->n++;
    return s;
}

static void ell(Solids *L, int mat, float cx, float cy, float cz, float rx, float ry, float rz, float hu)
{
    const float lo[3] = {cx - rx, cy - ry, cz - rz}, hi[3] = {cx + rx, cy + ry, cz + rz};
    Solid *s = push(L, K_ELLIPSOID, mat, hu, lo, hi);
    if (s) memcpy(s->a, (float[]){cx, cy, cz, rx, ry, rz}, 6 * sizeof(float));
}

static void cyl(Solids *L, int mat, float cx, float cz, float rx, float rz, float y0, float y1, float hu)
{
    const float lo[3] = {cx - rx, y0, cz - rz}, hi[3] = {cx + rx, y1, cz + rz};
    Solid *s = push(L, K_CYL_Y, mat, hu, lo, hi);
    if (s) memcpy(s->a, (float[]){cx, cz, rx, rz, y0, y1}, 6 * sizeof(float));
}

static void tube(Solids *L, int mat, const float a[3], const float b[3], float r, float hu)
{
    float lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = minf(a[k], b[k]) - r;
        hi[k] = maxf(a[k], b[k]) + r;
    }
    Solid *s = push(L, K_CAPSULE, mat, hu, lo, hi);
    if (s) memcpy(s->a, (float[]){a[0], a[1], a[2], b[0], b[1], b[2], r}, 7 * sizeof(float));
}

static void arc(Solids *L, int mat, float cx, float cz, float ax, float az, float y0, float drop, float smin, float smax,
                float r, float ry, float hu)
{
    const float lo[3] = {cx - ax - r, y0 - drop - ry, cz - az - r}, hi[3] = {cx + ax + r, y0 + ry, cz + az + r};
    Solid *s = push(L, K_HOOP, mat, hu, lo, hi);
    if (s) memcpy(s->a, (float[]){cx, cz, ax, az, y0, drop, smin, smax, r, ry}, 10 * sizeof(float));
}

static float solid_sd(const Pen *p, const Solid *s)
{
    const float *a = s->a;
    switch (s->kind) {
    case K_ELLIPSOID: return ellipsoid_sd(p, a[0], a[1], a[2], a[3], a[4], a[5]);
    case K_CYL_Y: return cyl_y_sd(p, a[0], a[1], a[2], a[3], a[4], a[5]);
    case K_BOX: return box_sd(p, a[0], a[1], a[2], a[3], a[4], a[5]);
    case K_CAPSULE: return capsule_sd(p, a, a + 3, a[6]);
    case K_HOOP: return hoop_sd(p, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
    }
    return FAR;
}

/* Paints the n solids ids[] over p in order. A solid that covers the voxel
 * whole sets its value outright (v = hu, not v + (hu - v) as manix's paint
 * computes it, which can round), so whatever was painted before it does
 * not matter: the solids are visited from the last back to the last one
 * that covers the voxel whole, and painted forward from there. Inside the
 * head that skips most of the nested shells. */
#define MAX_SOLIDS 512
static void paint_all(Pen *p, const Solid *all, const uint32_t *ids, size_t n)
{
    float sd[MAX_SOLIDS];
    size_t k0 = 0;
    if (n > MAX_SOLIDS) { /* no room to remember the distances: all of them, forward */
        k0 = n;
        for (size_t k = 0; k < n; k++) {
            p->cur = all[ids[k]].mat;
            paint(p, solid_sd(p, &all[ids[k]]), all[ids[k]].hu);
        }
    }
    for (size_t k = n; k-- > 0 && n <= MAX_SOLIDS;) {
        sd[k] = solid_sd(p, &all[ids[k]]);
        if (sd[k] <= -0.5f * p->h) { /* coverage 1 */
            k0 = k;
            break;
        }
    }
    for (size_t k = k0; k < n; k++) {
        const Solid *s = &all[ids[k]];
        if (sd[k] >= 1e29f) continue;
        const float cov = 0.5f - sd[k] / p->h;
        if (cov <= 0.0f) continue;
        p->v = cov >= 1.0f ? s->hu : p->v + (s->hu - p->v) * cov;
        if (cov > 0.5f) p->mat = s->mat;
    }
}

/* ---- the anatomy: manix's solids (phantom_ct.c, head()) in its order ---- */

static void anatomy(Solids *L)
{
    /* soft tissue: neck, scalp, face, chin, nose, ears */
    cyl(L, MAT_SOFT, 0.0f, -0.05f, 0.15f, 0.14f, -1.0f, -0.05f, 40.0f);
    ell(L, MAT_SOFT, 0.0f, 0.10f, -0.04f, 0.35f, 0.34f, 0.42f, 40.0f);
    ell(L, MAT_SOFT, 0.0f, -0.13f, 0.09f, 0.26f, 0.25f, 0.31f, 40.0f);
    ell(L, MAT_SOFT, 0.0f, -0.27f, 0.13f, 0.17f, 0.10f, 0.21f, 40.0f);
    ell(L, MAT_SOFT, 0.0f, -0.06f, 0.39f, 0.04f, 0.085f, 0.06f, 40.0f);
    ell(L, MAT_SOFT, -0.355f, 0.03f, -0.03f, 0.03f, 0.075f, 0.05f, 40.0f);
    ell(L, MAT_SOFT, 0.355f, 0.03f, -0.03f, 0.03f, 0.075f, 0.05f, 40.0f);
    /* skull: outer table, diploe, inner table, then the brain */
    ell(L, MAT_BONE, 0.0f, 0.10f, -0.04f, 0.33f, 0.32f, 0.40f, 1600.0f);
    ell(L, MAT_CANCELLOUS, 0.0f, 0.10f, -0.04f, 0.318f, 0.308f, 0.388f, 650.0f);
    ell(L, MAT_BONE, 0.0f, 0.10f, -0.04f, 0.306f, 0.296f, 0.376f, 1400.0f);
    ell(L, MAT_GRAY, 0.0f, 0.10f, -0.04f, 0.296f, 0.286f, 0.366f, 38.0f);
    /* white matter, ventricles and a few Shepp-Logan-like small features */
    ell(L, MAT_WHITE, 0.0f, 0.12f, -0.05f, 0.24f, 0.21f, 0.30f, 28.0f);
    ell(L, MAT_CSF, -0.045f, 0.13f, -0.03f, 0.028f, 0.05f, 0.13f, 8.0f);
    ell(L, MAT_CSF, 0.045f, 0.13f, -0.03f, 0.028f, 0.05f, 0.13f, 8.0f);
    ell(L, MAT_WHITE, 0.08f, 0.22f, 0.10f, 0.03f, 0.03f, 0.03f, 60.0f);
    ell(L, MAT_WHITE, -0.10f, 0.05f, -0.20f, 0.025f, 0.04f, 0.03f, 55.0f);
    ell(L, MAT_WHITE, 0.0f, 0.04f, -0.28f, 0.02f, 0.02f, 0.02f, 70.0f);
    ell(L, MAT_WHITE, -0.03f, -0.02f, -0.30f, 0.01f, 0.01f, 0.01f, 65.0f);
    ell(L, MAT_WHITE, 0.03f, -0.02f, -0.30f, 0.01f, 0.01f, 0.01f, 65.0f);
    /* brow ridge, cheekbones, upper jaw with its sinuses, nasal cavity */
    ell(L, MAT_BONE, 0.0f, 0.085f, 0.31f, 0.20f, 0.03f, 0.06f, 1300.0f);
    ell(L, MAT_BONE, -0.20f, -0.06f, 0.18f, 0.05f, 0.025f, 0.11f, 1200.0f);
    ell(L, MAT_BONE, 0.20f, -0.06f, 0.18f, 0.05f, 0.025f, 0.11f, 1200.0f);
    ell(L, MAT_CANCELLOUS, 0.0f, -0.12f, 0.22f, 0.17f, 0.07f, 0.12f, 900.0f);
    ell(L, MAT_SOFT, 0.0f, -0.12f, 0.22f, 0.15f, 0.054f, 0.10f, 40.0f);
    ell(L, MAT_AIRWAY, -0.075f, -0.10f, 0.22f, 0.055f, 0.05f, 0.06f, -980.0f);
    ell(L, MAT_AIRWAY, 0.075f, -0.10f, 0.22f, 0.055f, 0.05f, 0.06f, -980.0f);
    ell(L, MAT_AIRWAY, 0.0f, -0.06f, 0.28f, 0.03f, 0.08f, 0.09f, -1000.0f);
    ell(L, MAT_BONE, 0.0f, -0.01f, 0.37f, 0.02f, 0.04f, 0.02f, 900.0f);
    /* eye sockets: the eyeballs cut the skull open towards the face */
    ell(L, MAT_SOFT, -0.115f, 0.0f, 0.29f, 0.07f, 0.065f, 0.07f, 12.0f);
    ell(L, MAT_SOFT, 0.115f, 0.0f, 0.29f, 0.07f, 0.065f, 0.07f, 12.0f);
    /* lower jaw: the U of the mandible and its two rami */
    arc(L, MAT_BONE, 0.0f, 0.04f, 0.18f, 0.25f, -0.26f, 0.0f, -0.2f, 1.0f, 0.022f, 0.045f, 1300.0f);
    for (int side = -1; side <= 1; side += 2) {
        const float a[3] = {0.18f * (float)side, -0.26f, 0.0f}, b[3] = {0.19f * (float)side, -0.10f, -0.04f};
        tube(L, MAT_BONE, a, b, 0.022f, 1300.0f);
    }
    /* teeth: two arcs of enamel, two of them with metal fillings */
    for (int row = 0; row < 2; row++)
        for (int i = 0; i < 14; i++) {
            float a = (float)M_PI * (float)i / 13.0f; /* molar to molar across the front */
            float tx = 0.135f * cosf(a), tz = 0.07f + 0.20f * sinf(a), ty = row ? -0.225f : -0.175f;
            ell(L, MAT_BONE, tx, ty, tz, 0.016f, 0.024f, 0.016f, 2600.0f);
            if ((row == 0 && i == 2) || (row == 1 && i == 11)) ell(L, MAT_METAL, tx, ty, tz, 0.011f, 0.011f, 0.011f, HU_MAX);
        }
    /* neck: discs, cervical vertebrae, canal, airway and contrast-filled carotids */
    cyl(L, MAT_SOFT, 0.0f, -0.10f, 0.035f, 0.035f, -1.0f, -0.19f, 90.0f);
    for (int k = 0; k < 4; k++) {
        float yk = -0.42f + 0.065f * (float)k;
        cyl(L, MAT_BONE, 0.0f, -0.10f, 0.035f, 0.035f, yk - 0.025f, yk + 0.025f, 1500.0f);
        cyl(L, MAT_CANCELLOUS, 0.0f, -0.10f, 0.026f, 0.026f, yk - 0.018f, yk + 0.018f, 350.0f);
        cyl(L, MAT_BONE, 0.0f, -0.155f, 0.03f, 0.026f, yk - 0.018f, yk + 0.018f, 900.0f);
    }
    cyl(L, MAT_SOFT, 0.0f, -0.155f, 0.016f, 0.014f, -1.0f, -0.19f, 12.0f);
    cyl(L, MAT_AIRWAY, 0.0f, 0.04f, 0.022f, 0.02f, -1.0f, -0.28f, -1000.0f);
    cyl(L, MAT_VESSEL, -0.065f, 0.0f, 0.012f, 0.012f, -1.0f, -0.15f, 350.0f);
    cyl(L, MAT_VESSEL, 0.065f, 0.0f, 0.012f, 0.012f, -1.0f, -0.15f, 350.0f);
}

/* ---- the arterial tree ---- */

#define VESSEL_HU 350.0f
#define VESSEL_R_MIN 0.0005f /* half a voxel at 1024^3 */

/* Inside the brain, a little within the inner table of the skull. */
static int in_brain(const float p[3])
{
    const float x = p[0] / 0.285f, y = (p[1] - 0.10f) / 0.275f, z = (p[2] + 0.04f) / 0.355f;
    return x * x + y * y + z * z < 1.0f;
}

static void normalize3(float v[3])
{
    const float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; k++) v[k] /= l;
}

/* One vessel from a along d, as two capsules bent at a jittered middle,
 * then its two children; stops where it would leave the brain. */
static void branch(Solids *L, VptPhantomRng *g, const float a[3], const float d[3], float len, float r, int depth)
{
    float m[3], b[3];
    for (int k = 0; k < 3; k++) {
        m[k] = a[k] + 0.5f * len * d[k] + (vpt_phantom_rnd(g) - 0.5f) * 0.25f * len;
        b[k] = a[k] + len * d[k] + (vpt_phantom_rnd(g) - 0.5f) * 0.2f * len;
    }
    if (!in_brain(b)) return;
    tube(L, MAT_VESSEL, a, m, r, VESSEL_HU);
    tube(L, MAT_VESSEL, m, b, 0.93f * r, VESSEL_HU);
    if (depth == 0 || 0.7f * r < VESSEL_R_MIN) return;
    /* a direction across d, then the two children at either side of it */
    float t[3] = {vpt_phantom_rnd(g) - 0.5f, vpt_phantom_rnd(g) - 0.5f, vpt_phantom_rnd(g) - 0.5f}, u[3], nd[3];
    u[0] = d[1] * t[2] - d[2] * t[1];
    u[1] = d[2] * t[0] - d[0] * t[2];
    u[2] = d[0] * t[1] - d[1] * t[0];
    normalize3(u);
    for (int side = -1; side <= 1; side += 2) {
        const float ang = (0.35f + 0.35f * vpt_phantom_rnd(g)) * (float)side, c = cosf(ang), s = sinf(ang);
        for (int k = 0; k < 3; k++) nd[k] = c * d[k] + s * u[k];
        normalize3(nd);
        branch(L, g, b, nd, len * (0.78f + 0.1f * vpt_phantom_rnd(g)), r * (side > 0 ? 0.74f : 0.66f), depth - 1);
    }
}

static void arteries(Solids *L)
{
    VptPhantomRng g = {0xA27E21E5u};
    for (int side = -1; side <= 1; side += 2) {
        const float sd = (float)side;
        /* the internal carotid's last stretch, from the neck into the skull base */
        const float a[3] = {0.065f * sd, -0.15f, 0.0f}, b[3] = {0.03f * sd, -0.06f, 0.02f};
        tube(L, MAT_VESSEL, a, b, 0.009f, VESSEL_HU);
        /* anterior, middle and posterior cerebral arteries */
        float dirs[3][3] = {{-0.15f * sd, 0.55f, 0.85f}, {0.9f * sd, 0.4f, 0.1f}, {0.3f * sd, 0.45f, -0.85f}};
        for (int i = 0; i < 3; i++) {
            normalize3(dirs[i]);
            branch(L, &g, b, dirs[i], 0.09f, 0.0065f, 9);
        }
    }
}

/* ---- textures, by material ---- */

/* Sulci: CSF-filled grooves where a noise crosses 0.5, within the outer
 * 0.04 of the cortex; painted with one voxel of anti-aliasing like a solid
 * (the noise's distance to 0.5 over its gradient is a distance). */
static void sulci(Pen *p)
{
    const float x = p->x / 0.296f, y = (p->y - 0.10f) / 0.286f, z = (p->z + 0.04f) / 0.366f;
    const float depth = (1.0f - sqrtf(x * x + y * y + z * z)) * 0.3f; /* about the distance below the surface */
    if (depth > 0.04f || depth < 0.0f) return;
    const float n = vpt_fbm_band(p->x, p->y, p->z, 9.0f, 4, 0.5f, p->h);
    const float width = 0.0045f * (1.0f - depth / 0.04f), gradient = 14.0f; /* noise per world unit, about */
    paint(p, fabsf(n - 0.5f) / gradient - width, 8.0f);
}

static float textured(Pen *p)
{
    if (p->mat == MAT_CANCELLOUS && p->v > 200.0f) {
        /* trabeculae and marrow: a porous sponge resolved at 1024^3 and finer */
        const float n = vpt_fbm_band(p->x, p->y, p->z, 70.0f, 6, 0.5f, p->h);
        p->v += 1100.0f * (n - 0.5f);
    } else if (p->mat == MAT_GRAY) {
        sulci(p);
    }
    if (p->v <= HU_AIR || p->v >= HU_MAX) return p->v; /* outside air; saturated metal */
    /* manix's tissue texture (2 octaves of fBm at 45 per unit), continued */
    const float n = vpt_fbm_band(p->x, p->y, p->z, 45.0f, 6, 0.5f, p->h) * 2.0f - 1.0f;
    const float amp = p->v < -500.0f ? 110.0f : p->v > 300.0f ? 60.0f : 14.0f;
    return p->v + amp * n;
}

/* ---- the grid ---- */

typedef struct {
    VptScene *s;
    const Solids *L;
    float h;
    float *lut;              /* density per HU + 1024 */
    uint8_t (*rgba)[4];
} Job;

#define NHU 4096 /* -1024 .. 3071 */

static void voxel(void *arg, const uint32_t *ids, size_t nids, float x, float y, float z, size_t i)
{
    const Job *j = arg;
    int hu = 0; /* air: HU_AIR + 1024 */
    if (nids) {
        Pen p = {x, y, z, j->h, HU_AIR, MAT_AIR, MAT_AIR};
        paint_all(&p, j->L->s, ids, nids);
        float v = p.mat == MAT_AIR && p.v <= HU_AIR ? HU_AIR : textured(&p);
        v = v < HU_AIR ? HU_AIR : v > HU_MAX ? HU_MAX : v;
        hu = (int)lrintf(v) + 1024;
    }
    j->s->density[i] = j->lut[hu];
    memcpy(j->s->albedo + 4 * i, j->rgba[hu], 4);
}

int vpt_phantom_head_scaled(VptScene *s, int threads)
{
    Solids L;
    memset(&L, 0, sizeof L);
    anatomy(&L);
    arteries(&L);
    if (L.oom) goto oom;
    const int n = s->nx;
    const float h = 1.0f / (float)n;
    VptBins bins;
    /* a solid paints up to half a voxel beyond its surface (paint's
     * coverage), and its box check allows one voxel: two voxels of margin */
    if (vpt_bins_build(&bins, n, n >= 1024 ? n / 64 : 16, (const float(*)[3])L.lo, (const float(*)[3])L.hi, L.n,
                       2.0f * h))
        goto oom;
    Job j = {s, &L, h, NULL, NULL};
    j.lut = vpt_malloc(NHU * sizeof *j.lut);
    j.rgba = vpt_malloc(NHU * sizeof *j.rgba);
    if (!j.lut || !j.rgba) {
        free(j.lut);
        free(j.rgba);
        vpt_bins_free(&bins);
        goto oom;
    }
    /* exactly (v - min) / (max - min) over the scanner's range, as
     * vpt_phantom_ct_transfer computes it over a volume's own */
    const uint8_t(*ct)[4] = vpt_ct_albedo_table();
    for (int i = 0; i < NHU; i++) {
        j.lut[i] = vpt_ct_density((float)i / (float)(NHU - 1));
        vpt_ct_albedo_from(ct, j.lut[i], j.rgba[i]);
    }
    vpt_bins_fill(&bins, threads, voxel, &j);
    free(j.lut);
    free(j.rgba);
    vpt_bins_free(&bins);
    free(L.s);
    free(L.lo);
    free(L.hi);
    return 0;
oom:
    free(L.s);
    free(L.lo);
    free(L.hi);
    return -1;
}
