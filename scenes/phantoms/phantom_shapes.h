/* The solids the CT phantoms are painted with (phantom_ct.c, phantom_head.c;
 * internal to scenes/): signed distances of simple shapes, painted in
 * order over a voxel's value with one voxel of anti-aliasing (the
 * partial-volume effect of a scan). Values are Hounsfield units. */
#ifndef VPT_SCENES_PHANTOM_SHAPES_H
#define VPT_SCENES_PHANTOM_SHAPES_H

#include <math.h>

#define HU_AIR (-1024.0f)
#define HU_MAX 3071.0f

typedef struct {
    float x, y, z;  /* the voxel centre, world units */
    float h;        /* the voxel size: the anti-aliasing width */
    float v;        /* the value painted so far */
    int mat, cur;   /* the material of the solid that last covered most of
                       the voxel, and of the solid being painted (tags the
                       scalable head textures by; manix ignores them) */
} Pen;

/* Paints value hu where the signed distance sd (negative inside) says so,
 * blending linearly across one voxel. */
static inline void paint(Pen *p, float sd, float hu)
{
    if (sd >= 1e29f) return; /* FAR: beyond the solid's box */
    float cov = 0.5f - sd / p->h;
    if (cov <= 0.0f) return;
    if (cov > 1.0f) cov = 1.0f;
    p->v += (hu - p->v) * cov;
    if (cov > 0.5f) p->mat = p->cur;
}

static inline float maxf(float a, float b) { return a > b ? a : b; }
static inline float minf(float a, float b) { return a < b ? a : b; }

/* Each solid as a signed distance (negative inside; FAR when the point is
 * beyond the solid's box by more than a voxel, where it paints nothing),
 * and as a painter of that distance. */
#define FAR 1e30f

/* Axis-aligned ellipsoid, centre c, semi-axes r. The distance is iq's bound
 * k0 (k0 - 1) / k1: exact on spheres, close enough for anti-aliasing. */
static inline float ellipsoid_sd(const Pen *p, float cx, float cy, float cz, float rx, float ry, float rz)
{
    float dx = p->x - cx, dy = p->y - cy, dz = p->z - cz;
    if (fabsf(dx) > rx + p->h || fabsf(dy) > ry + p->h || fabsf(dz) > rz + p->h) return FAR;
    float ax = dx / rx, ay = dy / ry, az = dz / rz;
    float bx = ax / rx, by = ay / ry, bz = az / rz;
    float k0 = sqrtf(ax * ax + ay * ay + az * az), k1 = sqrtf(bx * bx + by * by + bz * bz);
    return k1 > 0.0f ? k0 * (k0 - 1.0f) / k1 : -minf(rx, minf(ry, rz));
}

/* Elliptic cylinder along y over [y0, y1], axis at (cx, cz), semi-axes rx, rz. */
static inline float cyl_y_sd(const Pen *p, float cx, float cz, float rx, float rz, float y0, float y1)
{
    float dx = p->x - cx, dz = p->z - cz;
    if (fabsf(dx) > rx + p->h || fabsf(dz) > rz + p->h || p->y < y0 - p->h || p->y > y1 + p->h) return FAR;
    float ax = dx / rx, az = dz / rz, bx = ax / rx, bz = az / rz;
    float k0 = sqrtf(ax * ax + az * az), k1 = sqrtf(bx * bx + bz * bz);
    float sd = k1 > 0.0f ? k0 * (k0 - 1.0f) / k1 : -minf(rx, rz);
    return maxf(sd, maxf(y0 - p->y, p->y - y1));
}

static inline float box_sd(const Pen *p, float cx, float cy, float cz, float hx, float hy, float hz)
{
    float qx = fabsf(p->x - cx) - hx, qy = fabsf(p->y - cy) - hy, qz = fabsf(p->z - cz) - hz;
    if (qx > p->h || qy > p->h || qz > p->h) return FAR;
    float ox = maxf(qx, 0.0f), oy = maxf(qy, 0.0f), oz = maxf(qz, 0.0f);
    return sqrtf(ox * ox + oy * oy + oz * oz) + minf(maxf(qx, maxf(qy, qz)), 0.0f);
}

/* Segment a-b of radius r. */
static inline float capsule_sd(const Pen *p, const float a[3], const float b[3], float r)
{
    float ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p->x - a[0], p->y - a[1], p->z - a[2]};
    float len2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    float t = len2 > 0.0f ? (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / len2 : 0.0f;
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    float d[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - r;
}

/* A tube along an arc of the ellipse (cx + ax cos t, cz + az sin t) in the
 * xz plane, for smin <= sin t <= smax (t measured so that sin t = 1 points to +z,
 * the front). Its centre line sits at height y(t) = y0 - drop (1 + sin t) / 2
 * (ribs slope down towards the front) and its cross-section has radius r in
 * the xz plane and ry along y. The nearest arc point is taken at the angle of
 * the point itself: exact for circles, fine for these nearly round hoops. */
static inline float hoop_sd(const Pen *p, float cx, float cz, float ax, float az, float y0, float drop, float smin,
                            float smax, float r, float ry)
{
    if (p->y > y0 + ry + p->h || p->y < y0 - drop - ry - p->h) return FAR;
    float ux = (p->x - cx) / ax, uz = (p->z - cz) / az;
    float len = sqrtf(ux * ux + uz * uz);
    if (len < 1e-6f) return FAR;
    float c = ux / len, s = uz / len;
    if (s < smin || s > smax) return FAR;
    float ex = cx + ax * c, ez = cz + az * s, yc = y0 - drop * 0.5f * (1.0f + s);
    float dx = p->x - ex, dz = p->z - ez, dy = (p->y - yc) * (r / ry);
    return sqrtf(dx * dx + dy * dy + dz * dz) - r;
}

static inline void ellipsoid(Pen *p, float cx, float cy, float cz, float rx, float ry, float rz, float hu)
{
    paint(p, ellipsoid_sd(p, cx, cy, cz, rx, ry, rz), hu);
}

static inline void cyl_y(Pen *p, float cx, float cz, float rx, float rz, float y0, float y1, float hu)
{
    paint(p, cyl_y_sd(p, cx, cz, rx, rz, y0, y1), hu);
}

static inline void box(Pen *p, float cx, float cy, float cz, float hx, float hy, float hz, float hu)
{
    paint(p, box_sd(p, cx, cy, cz, hx, hy, hz), hu);
}

static inline void capsule(Pen *p, const float a[3], const float b[3], float r, float hu)
{
    paint(p, capsule_sd(p, a, b, r), hu);
}

static inline void hoop(Pen *p, float cx, float cz, float ax, float az, float y0, float drop, float smin, float smax,
                        float r, float ry, float hu)
{
    paint(p, hoop_sd(p, cx, cz, ax, az, y0, drop, smin, smax, r, ry), hu);
}

#endif
