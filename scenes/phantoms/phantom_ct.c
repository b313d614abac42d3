/* CT stand-ins for the thesis' OsiriX scans (artifix: a torso, manix: a head
 * and neck CT angiography), which are not redistributable.
 *
 * Like a Shepp-Logan phantom, each is a list of simple solids (ellipsoids,
 * cylinders, boxes, tubes) painted in order, each overwriting what lies
 * under it with its Hounsfield value. Edges are anti-aliased over one voxel
 * (partial-volume effect, as in a real scan downsampled by 2), and a little
 * smooth noise is added inside the body, so the transfer function sees a
 * realistic spread of values. Air stays exactly -1024, so after the thesis'
 * normalization and smoothstep it is exactly 0 density. A few voxels of
 * metal (3071, the top of a 12-bit scanner's range) fix the maximum, as
 * dental fillings and implants do in real scans. */
#include "scenes/phantoms/phantom.h"
#include "scenes/phantoms/phantom_shapes.h"

#include <math.h>
#include <stddef.h>

/* Smooth tissue texture inside the body: stronger in the lungs and other
 * air-filled tissue, none in outside air (v == air exactly) or in metal,
 * which saturates the scanner. */
static float texture(const Pen *p, uint32_t seed)
{
    if (p->v <= HU_AIR || p->v >= HU_MAX) return p->v; /* outside air; saturated metal */
    float n = vpt_fbm3(p->x * 45.0f, p->y * 45.0f, p->z * 45.0f, 2, seed) * 2.0f - 1.0f;
    float amp = p->v < -500.0f ? 110.0f : p->v > 300.0f ? 60.0f : 14.0f;
    return p->v + amp * n;
}

/* ---- artifix: a torso section (chest and upper abdomen) ---- */

static float torso(Pen *p)
{
    p->v = HU_AIR;
    float yn = p->y / 0.34f;
    /* body: subcutaneous fat around muscle, slightly waisted */
    float bx = 0.43f - 0.03f * yn * yn, bz = 0.29f - 0.01f * yn * yn;
    cyl_y(p, 0.0f, 0.0f, bx, bz, -1.0f, 1.0f, -95.0f);
    cyl_y(p, 0.0f, 0.0f, bx - 0.035f, bz - 0.03f, -1.0f, 1.0f, 45.0f);
    /* lungs, then the liver and stomach under the diaphragm */
    ellipsoid(p, -0.19f, 0.17f, -0.02f, 0.15f, 0.33f, 0.20f, -840.0f);
    ellipsoid(p, 0.19f, 0.17f, -0.02f, 0.15f, 0.33f, 0.20f, -840.0f);
    ellipsoid(p, -0.15f, -0.24f, 0.02f, 0.23f, 0.17f, 0.20f, 62.0f);
    ellipsoid(p, 0.17f, -0.22f, 0.07f, 0.10f, 0.09f, 0.09f, 32.0f);
    ellipsoid(p, 0.17f, -0.16f, 0.09f, 0.06f, 0.025f, 0.05f, -920.0f);
    /* heart (muscle around contrast-filled chambers) and aorta */
    ellipsoid(p, 0.05f, 0.03f, 0.09f, 0.14f, 0.13f, 0.12f, 95.0f);
    ellipsoid(p, 0.05f, 0.03f, 0.10f, 0.095f, 0.085f, 0.08f, 270.0f);
    cyl_y(p, 0.055f, -0.12f, 0.032f, 0.032f, -1.0f, 0.30f, 290.0f);
    /* kidneys */
    ellipsoid(p, -0.15f, -0.27f, -0.13f, 0.05f, 0.08f, 0.045f, 165.0f);
    ellipsoid(p, 0.15f, -0.27f, -0.13f, 0.05f, 0.08f, 0.045f, 165.0f);
    /* spine: discs, then vertebral bodies (cortical shell, cancellous core),
     * arches, processes and the spinal canal */
    cyl_y(p, 0.0f, -0.15f, 0.05f, 0.045f, -1.0f, 1.0f, 90.0f);
    for (int k = 0; k < 10; k++) {
        float yk = -0.34f + 0.0375f + 0.075f * (float)k;
        if (fabsf(p->y - yk) > 0.09f) continue;
        cyl_y(p, 0.0f, -0.15f, 0.05f, 0.045f, yk - 0.029f, yk + 0.029f, 1500.0f);
        cyl_y(p, 0.0f, -0.15f, 0.039f, 0.034f, yk - 0.022f, yk + 0.022f, 330.0f);
        cyl_y(p, 0.0f, -0.225f, 0.042f, 0.038f, yk - 0.022f, yk + 0.022f, 1200.0f);
        box(p, 0.0f, yk - 0.01f, -0.275f, 0.012f, 0.02f, 0.035f, 1200.0f);
        box(p, 0.0f, yk, -0.21f, 0.085f, 0.014f, 0.014f, 1000.0f);
    }
    cyl_y(p, 0.0f, -0.225f, 0.022f, 0.02f, -1.0f, 1.0f, 15.0f);
    /* ribs (open at the front) and sternum */
    for (int k = 0; k < 6; k++)
        hoop(p, 0.0f, -0.03f, 0.37f, 0.245f, 0.31f - 0.08f * (float)k, 0.06f, -1.0f, 0.55f, 0.014f, 0.018f, 1100.0f);
    box(p, 0.0f, 0.09f, 0.245f, 0.025f, 0.19f, 0.012f, 700.0f);
    /* metal: two spinal fixation rods with pedicle screws */
    for (int side = -1; side <= 1; side += 2) {
        cyl_y(p, 0.035f * (float)side, -0.205f, 0.01f, 0.01f, -0.21f, 0.06f, HU_MAX);
        for (int k = 1; k <= 3; k++) {
            float yk = -0.34f + 0.0375f + 0.075f * (float)k;
            const float a[3] = {0.035f * (float)side, yk, -0.21f}, b[3] = {0.018f * (float)side, yk, -0.14f};
            capsule(p, a, b, 0.006f, HU_MAX);
        }
    }
    return texture(p, 0xA27F1Fu);
}

/* ---- manix: a head and neck, face towards +z ---- */

static float head(Pen *p)
{
    p->v = HU_AIR;
    /* soft tissue: neck, scalp, face, chin, nose, ears */
    cyl_y(p, 0.0f, -0.05f, 0.15f, 0.14f, -1.0f, -0.05f, 40.0f);
    ellipsoid(p, 0.0f, 0.10f, -0.04f, 0.35f, 0.34f, 0.42f, 40.0f);
    ellipsoid(p, 0.0f, -0.13f, 0.09f, 0.26f, 0.25f, 0.31f, 40.0f);
    ellipsoid(p, 0.0f, -0.27f, 0.13f, 0.17f, 0.10f, 0.21f, 40.0f);
    ellipsoid(p, 0.0f, -0.06f, 0.39f, 0.04f, 0.085f, 0.06f, 40.0f);
    ellipsoid(p, -0.355f, 0.03f, -0.03f, 0.03f, 0.075f, 0.05f, 40.0f);
    ellipsoid(p, 0.355f, 0.03f, -0.03f, 0.03f, 0.075f, 0.05f, 40.0f);
    /* skull: outer table, diploe, inner table, then the brain */
    ellipsoid(p, 0.0f, 0.10f, -0.04f, 0.33f, 0.32f, 0.40f, 1600.0f);
    ellipsoid(p, 0.0f, 0.10f, -0.04f, 0.318f, 0.308f, 0.388f, 650.0f);
    ellipsoid(p, 0.0f, 0.10f, -0.04f, 0.306f, 0.296f, 0.376f, 1400.0f);
    ellipsoid(p, 0.0f, 0.10f, -0.04f, 0.296f, 0.286f, 0.366f, 38.0f);
    /* white matter, ventricles and a few Shepp-Logan-like small features */
    ellipsoid(p, 0.0f, 0.12f, -0.05f, 0.24f, 0.21f, 0.30f, 28.0f);
    ellipsoid(p, -0.045f, 0.13f, -0.03f, 0.028f, 0.05f, 0.13f, 8.0f);
    ellipsoid(p, 0.045f, 0.13f, -0.03f, 0.028f, 0.05f, 0.13f, 8.0f);
    ellipsoid(p, 0.08f, 0.22f, 0.10f, 0.03f, 0.03f, 0.03f, 60.0f);
    ellipsoid(p, -0.10f, 0.05f, -0.20f, 0.025f, 0.04f, 0.03f, 55.0f);
    ellipsoid(p, 0.0f, 0.04f, -0.28f, 0.02f, 0.02f, 0.02f, 70.0f);
    ellipsoid(p, -0.03f, -0.02f, -0.30f, 0.01f, 0.01f, 0.01f, 65.0f);
    ellipsoid(p, 0.03f, -0.02f, -0.30f, 0.01f, 0.01f, 0.01f, 65.0f);
    /* brow ridge, cheekbones, upper jaw with its sinuses, nasal cavity */
    ellipsoid(p, 0.0f, 0.085f, 0.31f, 0.20f, 0.03f, 0.06f, 1300.0f);
    ellipsoid(p, -0.20f, -0.06f, 0.18f, 0.05f, 0.025f, 0.11f, 1200.0f);
    ellipsoid(p, 0.20f, -0.06f, 0.18f, 0.05f, 0.025f, 0.11f, 1200.0f);
    ellipsoid(p, 0.0f, -0.12f, 0.22f, 0.17f, 0.07f, 0.12f, 900.0f);
    ellipsoid(p, 0.0f, -0.12f, 0.22f, 0.15f, 0.054f, 0.10f, 40.0f);
    ellipsoid(p, -0.075f, -0.10f, 0.22f, 0.055f, 0.05f, 0.06f, -980.0f);
    ellipsoid(p, 0.075f, -0.10f, 0.22f, 0.055f, 0.05f, 0.06f, -980.0f);
    ellipsoid(p, 0.0f, -0.06f, 0.28f, 0.03f, 0.08f, 0.09f, -1000.0f);
    ellipsoid(p, 0.0f, -0.01f, 0.37f, 0.02f, 0.04f, 0.02f, 900.0f);
    /* eye sockets: the eyeballs cut the skull open towards the face */
    ellipsoid(p, -0.115f, 0.0f, 0.29f, 0.07f, 0.065f, 0.07f, 12.0f);
    ellipsoid(p, 0.115f, 0.0f, 0.29f, 0.07f, 0.065f, 0.07f, 12.0f);
    /* lower jaw: the U of the mandible and its two rami */
    hoop(p, 0.0f, 0.04f, 0.18f, 0.25f, -0.26f, 0.0f, -0.2f, 1.0f, 0.022f, 0.045f, 1300.0f);
    for (int side = -1; side <= 1; side += 2) {
        const float a[3] = {0.18f * (float)side, -0.26f, 0.0f}, b[3] = {0.19f * (float)side, -0.10f, -0.04f};
        capsule(p, a, b, 0.022f, 1300.0f);
    }
    /* teeth: two arcs of enamel, two of them with metal fillings */
    if (p->y > -0.26f && p->y < -0.14f && p->z > 0.0f)
        for (int row = 0; row < 2; row++)
            for (int i = 0; i < 14; i++) {
                float a = (float)M_PI * (float)i / 13.0f; /* molar to molar across the front */
                float tx = 0.135f * cosf(a), tz = 0.07f + 0.20f * sinf(a), ty = row ? -0.225f : -0.175f;
                ellipsoid(p, tx, ty, tz, 0.016f, 0.024f, 0.016f, 2600.0f);
                if ((row == 0 && i == 2) || (row == 1 && i == 11)) /* big enough to fill whole voxels */
                    ellipsoid(p, tx, ty, tz, 0.011f, 0.011f, 0.011f, HU_MAX);
            }
    /* neck: discs, cervical vertebrae, canal, airway and contrast-filled carotids */
    cyl_y(p, 0.0f, -0.10f, 0.035f, 0.035f, -1.0f, -0.19f, 90.0f);
    for (int k = 0; k < 4; k++) {
        float yk = -0.42f + 0.065f * (float)k;
        if (fabsf(p->y - yk) > 0.08f) continue;
        cyl_y(p, 0.0f, -0.10f, 0.035f, 0.035f, yk - 0.025f, yk + 0.025f, 1500.0f);
        cyl_y(p, 0.0f, -0.10f, 0.026f, 0.026f, yk - 0.018f, yk + 0.018f, 350.0f);
        cyl_y(p, 0.0f, -0.155f, 0.03f, 0.026f, yk - 0.018f, yk + 0.018f, 900.0f);
    }
    cyl_y(p, 0.0f, -0.155f, 0.016f, 0.014f, -1.0f, -0.19f, 12.0f);
    cyl_y(p, 0.0f, 0.04f, 0.022f, 0.02f, -1.0f, -0.28f, -1000.0f);
    cyl_y(p, -0.065f, 0.0f, 0.012f, 0.012f, -1.0f, -0.15f, 350.0f);
    cyl_y(p, 0.065f, 0.0f, 0.012f, 0.012f, -1.0f, -0.15f, 350.0f);
    return texture(p, 0x5EED4EADu);
}

static void sample(const VptScene *s, float (*fn)(Pen *), int16_t *hu)
{
    float ext[3], h = 0.0f;
    int n[3] = {s->nx, s->ny, s->nz};
    for (int k = 0; k < 3; k++) {
        ext[k] = (s->box_max[k] - s->box_min[k]) / (float)n[k];
        h = maxf(h, ext[k]);
    }
    size_t i = 0;
    for (int z = 0; z < s->nz; z++)
        for (int y = 0; y < s->ny; y++)
            for (int x = 0; x < s->nx; x++, i++) {
                Pen p = {s->box_min[0] + ((float)x + 0.5f) * ext[0], s->box_min[1] + ((float)y + 0.5f) * ext[1],
                         s->box_min[2] + ((float)z + 0.5f) * ext[2], h, HU_AIR, 0, 0};
                float v = fn(&p);
                v = v < HU_AIR ? HU_AIR : v > HU_MAX ? HU_MAX : v;
                hu[i] = (int16_t)lrintf(v);
            }
}

void vpt_phantom_torso_hu(const VptScene *s, int16_t *hu) { sample(s, torso, hu); }
void vpt_phantom_head_hu(const VptScene *s, int16_t *hu) { sample(s, head, hu); }

void vpt_phantom_ct_transfer(VptScene *s, const int16_t *raw)
{
    size_t n = (size_t)s->nx * s->ny * s->nz;
    int lo = raw[0], hi = raw[0];
    for (size_t i = 1; i < n; i++) {
        lo = raw[i] < lo ? raw[i] : lo;
        hi = raw[i] > hi ? raw[i] : hi;
    }
    /* exactly (v - min) / (max - min), as the volume loader computes it */
    float range = hi > lo ? (float)(hi - lo) : 1.0f;
    for (size_t i = 0; i < n; i++) {
        float d = vpt_ct_density((float)(raw[i] - lo) / range);
        s->density[i] = d;
        vpt_ct_albedo(d, s->albedo + 4 * i);
    }
}
