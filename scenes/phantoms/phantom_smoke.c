/* A stand-in for Mitsuba's smoke volume (thesis fig. 6.1): a plume that rises
 * from a small source in the lower part of the box and drifts to +x as it
 * widens, made of fBm puffs cut by a threshold, so most of the box is empty
 * and the edges break into thin wisps (what makes its paths so unequal in
 * length, the point of the scene in the thesis). Domain warping bends the
 * column so it does not look like a cone. */
#include "scenes/phantoms/phantom.h"

#include <math.h>

#define SMOKE_Y0 (-0.27f)  /* the source height, as in the real volume (row 30 of 128) */
#define SEED_WARP 0x51A7E5u
#define SEED_PUFF 0x0B5C0DEu

typedef struct {
    float cx, cz, rx, rz;
} Section;

/* The plume's axis and radii at height y. */
static Section section(float y)
{
    float t = (y - SMOKE_Y0) / (0.5f - SMOKE_Y0);
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    Section s;
    s.cx = -0.10f + 0.40f * powf(t, 1.7f) + 0.05f * t * sinf(7.0f * t + 0.6f);
    s.cz = 0.025f * sinf(5.0f * t);
    /* billows: the radius swells and narrows along the height */
    float swell = 0.65f + 0.7f * vpt_value_noise3(0.0f, y * 7.0f, 0.0f, 0xB111Au);
    s.rx = (0.05f + 0.17f * t) * swell;
    s.rz = (0.04f + 0.06f * t) * (0.5f + 0.5f * swell);
    return s;
}

static float plume(float x, float y, float z)
{
    if (y < SMOKE_Y0 - 0.1f) return 0.0f;
    Section s0 = section(y);
    if (fabsf(x - s0.cx) > 1.4f * s0.rx + 0.12f || fabsf(z - s0.cz) > 1.4f * s0.rz + 0.08f) return 0.0f;
    /* warp the domain, then measure against the plume's section */
    float wx = vpt_fbm3(x * 3.5f, y * 3.5f, z * 3.5f, 3, SEED_WARP) - 0.5f;
    float wy = vpt_fbm3(x * 3.5f + 31.7f, y * 3.5f, z * 3.5f, 3, SEED_WARP) - 0.5f;
    float wz = vpt_fbm3(x * 3.5f, y * 3.5f + 47.3f, z * 3.5f, 3, SEED_WARP) - 0.5f;
    float qx = x + 0.20f * wx, qy = y + 0.14f * wy, qz = z + 0.10f * wz;
    Section s = section(qy);
    float dx = (qx - s.cx) / s.rx, dz = (qz - s.cz) / s.rz;
    float shape = 1.0f - sqrtf(dx * dx + dz * dz);
    if (qy < SMOKE_Y0) shape -= (SMOKE_Y0 - qy) / 0.05f; /* a rounded source */
    if (shape < -0.8f) return 0.0f;
    float t = (qy - SMOKE_Y0) / (0.5f - SMOKE_Y0);
    float n = vpt_fbm3(qx * 9.0f, qy * 9.0f - 4.0f * t, qz * 9.0f, 5, SEED_PUFF);
    float d = 0.9f * shape + 2.8f * (n - 0.5f) - 0.25f;
    if (d > 0.0f) return d * sqrtf(d);
    /* a faint veil around the puffs: most of the real volume's non-zero
     * voxels are such tiny values */
    float veil = shape + 0.6f + 2.0f * (n - 0.5f);
    return veil > 0.0f ? 0.004f * veil * veil : 0.0f;
}

void vpt_phantom_smoke(VptScene *s)
{
    size_t n = (size_t)s->nx * s->ny * s->nz, i = 0;
    float ext[3] = {(s->box_max[0] - s->box_min[0]) / (float)s->nx, (s->box_max[1] - s->box_min[1]) / (float)s->ny,
                    (s->box_max[2] - s->box_min[2]) / (float)s->nz};
    float mx = 0.0f;
    for (int z = 0; z < s->nz; z++)
        for (int y = 0; y < s->ny; y++)
            for (int x = 0; x < s->nx; x++, i++) {
                float d = plume(s->box_min[0] + ((float)x + 0.5f) * ext[0], s->box_min[1] + ((float)y + 0.5f) * ext[1],
                                s->box_min[2] + ((float)z + 0.5f) * ext[2]);
                s->density[i] = d;
                mx = d > mx ? d : mx;
            }
    for (i = 0; i < n; i++) {
        float d = mx > 0.0f ? s->density[i] / mx : 0.0f; /* the maximum becomes exactly 1 */
        s->density[i] = d > 1.0f ? 1.0f : d;
        /* Grey smoke, as in the thesis' figure 6.1 (its albedo is not
         * stated). White albedo under the white environment would be a
         * furnace: the plume would not show. Without Russian roulette the
         * albedo changes the image only, not the paths' lengths. */
        s->albedo[4 * i + 0] = s->albedo[4 * i + 1] = s->albedo[4 * i + 2] = 204;
        s->albedo[4 * i + 3] = 255;
    }
}
