/* A stand-in for the volvis.org buckyball (thesis fig. 6.2): the electron
 * density of C60 on a 32^3 grid, built from the true atom positions as
 * gaussian blobs plus weaker density along the 90 bonds and a faint halo
 * around the cage, so the box is full of density holes as in the original. */
#include "scenes/phantoms/phantom.h"

#include "base/error.h"

#include <math.h>

#define PHI 1.6180339887498949

void vpt_c60_atoms(float atoms[VPT_C60_ATOMS][3])
{
    const double base[3][3] = {{0.0, 1.0, 3.0 * PHI}, {1.0, 2.0 + PHI, 2.0 * PHI}, {PHI, 2.0, 2.0 * PHI + 1.0}};
    int n = 0;
    for (int b = 0; b < 3; b++)
        for (int signs = 0; signs < 8; signs++) {
            double v[3];
            int dup = 0;
            for (int k = 0; k < 3; k++) {
                v[k] = (signs >> k & 1) ? -base[b][k] : base[b][k];
                if (base[b][k] == 0.0 && (signs >> k & 1)) dup = 1; /* -0 is +0 */
            }
            if (dup) continue;
            for (int r = 0; r < 3; r++, n++) /* the even (cyclic) permutations */
                for (int k = 0; k < 3; k++) atoms[n][k] = (float)v[(k + r) % 3];
        }
}

int vpt_c60_bonds(const float atoms[VPT_C60_ATOMS][3], int bonds[][2], int cap)
{
    int n = 0;
    for (int i = 0; i < VPT_C60_ATOMS; i++)
        for (int j = i + 1; j < VPT_C60_ATOMS; j++) {
            float d2 = 0.0f;
            for (int k = 0; k < 3; k++) d2 += (atoms[i][k] - atoms[j][k]) * (atoms[i][k] - atoms[j][k]);
            if (fabsf(d2 - 4.0f) < 0.01f) { /* edge length 2 */
                if (n < cap) bonds[n][0] = i, bonds[n][1] = j;
                n++;
            }
        }
    return n;
}

void vpt_bucky_atom_positions(float pos[VPT_C60_ATOMS][3])
{
    vpt_c60_atoms(pos);
    float scale = VPT_BUCKY_RADIUS / (float)sqrt(9.0 * PHI + 10.0);
    for (int i = 0; i < VPT_C60_ATOMS; i++)
        for (int k = 0; k < 3; k++) pos[i][k] *= scale;
}

void vpt_bucky_albedo(float density, uint8_t rgba[4])
{
    /* green (low) -> red (medium) -> blue (high), linear RGB */
    static const float stops[3][3] = {{0.10f, 0.75f, 0.15f}, {0.85f, 0.10f, 0.08f}, {0.10f, 0.15f, 0.85f}};
    float t = density < 0.0f ? 0.0f : density > 1.0f ? 1.0f : density;
    int i = t < 0.5f ? 0 : 1;
    float f = (t - 0.5f * (float)i) * 2.0f;
    for (int k = 0; k < 3; k++) rgba[k] = (uint8_t)lrintf(255.0f * (stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f));
    rgba[3] = 255;
}

void vpt_phantom_bucky(VptScene *s)
{
    float atoms[VPT_C60_ATOMS][3];
    int bonds[VPT_C60_BONDS][2];
    vpt_c60_atoms(atoms);
    VPT_ASSERT(vpt_c60_bonds(atoms, bonds, VPT_C60_BONDS) == VPT_C60_BONDS);
    vpt_bucky_atom_positions(atoms);
    float ext[3], h = 0.0f;
    int dims[3] = {s->nx, s->ny, s->nz};
    for (int k = 0; k < 3; k++) {
        ext[k] = (s->box_max[k] - s->box_min[k]) / (float)dims[k];
        h = ext[k] > h ? ext[k] : h;
    }
    /* widths in voxels of the real volume: atoms ~1.2, bonds ~0.9 */
    const float sa = 1.2f * h, sb = 0.9f * h, halo_w = 0.12f, cut2a = 16.0f * sa * sa, cut2b = 16.0f * sb * sb;
    size_t i = 0;
    float mx = 0.0f;
    for (int z = 0; z < s->nz; z++)
        for (int y = 0; y < s->ny; y++)
            for (int x = 0; x < s->nx; x++, i++) {
                float p[3] = {s->box_min[0] + ((float)x + 0.5f) * ext[0], s->box_min[1] + ((float)y + 0.5f) * ext[1],
                              s->box_min[2] + ((float)z + 0.5f) * ext[2]};
                double d = 0.0;
                for (int a = 0; a < VPT_C60_ATOMS; a++) {
                    float r2 = 0.0f;
                    for (int k = 0; k < 3; k++) r2 += (p[k] - atoms[a][k]) * (p[k] - atoms[a][k]);
                    if (r2 < cut2a) d += exp(-0.5 * r2 / (sa * sa));
                }
                for (int b = 0; b < VPT_C60_BONDS; b++) {
                    const float *A = atoms[bonds[b][0]], *B = atoms[bonds[b][1]];
                    float ab[3], ap[3], len2 = 0.0f, dot = 0.0f;
                    for (int k = 0; k < 3; k++) {
                        ab[k] = B[k] - A[k];
                        ap[k] = p[k] - A[k];
                        len2 += ab[k] * ab[k];
                        dot += ap[k] * ab[k];
                    }
                    float t = dot / len2;
                    if (t <= 0.0f || t >= 1.0f) continue;
                    float r2 = 0.0f;
                    for (int k = 0; k < 3; k++) r2 += (ap[k] - t * ab[k]) * (ap[k] - t * ab[k]);
                    /* fades to 0 at the atoms so their peaks stay the maxima */
                    if (r2 < cut2b) d += 0.35 * sin(M_PI * t) * exp(-0.5 * r2 / (sb * sb));
                }
                float r = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
                d += 0.03 * exp(-((r - VPT_BUCKY_RADIUS) / halo_w) * ((r - VPT_BUCKY_RADIUS) / halo_w));
                s->density[i] = (float)d;
                mx = (float)d > mx ? (float)d : mx;
            }
    size_t n = (size_t)s->nx * s->ny * s->nz;
    for (i = 0; i < n; i++) {
        float d = s->density[i] / mx;
        s->density[i] = d > 1.0f ? 1.0f : d;
        vpt_bucky_albedo(s->density[i], s->albedo + 4 * i);
    }
}
