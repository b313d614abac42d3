#include "harness/gate.h"

#include "base/error.h"

#include <math.h>
#include <string.h>

int vpt_gate_same_paths(const float *img, const float *ref, size_t npix, double tol, VptGateReport *rep)
{
    memset(rep, 0, sizeof *rep);
    double sa = 0, sb = 0;
    for (size_t i = 0; i < npix * 3; i++) {
        double a = img[i], b = ref[i];
        if (!isfinite(a)) {
            rep->nonfinite++;
            continue;
        }
        double d = fabs(a - b) / (fabs(b) + 1e-3);
        if (d > rep->max_rel_diff) rep->max_rel_diff = d;
        sa += a;
        sb += b;
    }
    rep->mean_rel_diff = sb != 0 ? fabs(sa - sb) / fabs(sb) : fabs(sa);
    if (rep->nonfinite) return vpt_fail("invalid output: %d non-finite pixel values", rep->nonfinite);
    if (rep->max_rel_diff > tol)
        return vpt_fail("invalid output: image differs from the reference variant by up to %.3g (relative; tolerance %.1g)",
                        rep->max_rel_diff, tol);
    return 0;
}

int vpt_gate_statistical(const float *img, const float *img_var, const float *ref, const float *ref_var, int w, int h,
                         int b, double zmax, VptGateReport *rep)
{
    memset(rep, 0, sizeof *rep);
    if (!img_var && !ref_var) return vpt_fail("internal error: statistical gate needs a variance image");
    int nb = 0;
    double z2sum = 0, ta = 0, tr = 0;
    for (int by = 0; by + b <= h; by += b)
        for (int bx = 0; bx + b <= w; bx += b)
            for (int c = 0; c < 3; c++) {
                double sa = 0, sr = 0, va = 0, vr = 0;
                for (int y = by; y < by + b; y++)
                    for (int x = bx; x < bx + b; x++) {
                        size_t i = ((size_t)y * w + x) * 3 + c;
                        if (!isfinite(img[i])) rep->nonfinite++;
                        sa += img[i];
                        sr += ref[i];
                        double vi = img_var ? img_var[i] : ref_var[i];
                        double vrr = ref_var ? ref_var[i] : img_var[i];
                        va += vi;
                        vr += vrr;
                    }
                ta += sa;
                tr += sr;
                /* Both means are float sums: a block with (near) zero
                 * variance, e.g. a background seen straight through, still
                 * differs by its rounding, so that error is a floor under
                 * the Monte Carlo variance. */
                const double round = VPT_GATE_FLOAT_SUM_TOL * fabs(sr);
                double var = va + vr + round * round;
                double diff = sa - sr;
                double z = var > 0 ? diff / sqrt(var) : (diff == 0 ? 0.0 : INFINITY);
                if (fabs(z) > rep->max_block_z) rep->max_block_z = fabs(z);
                z2sum += z * z;
                nb++;
            }
    if (rep->nonfinite) return vpt_fail("invalid output: %d non-finite pixel values", rep->nonfinite);
    if (nb == 0) return vpt_fail("statistical gate: image %dx%d is smaller than one %dx%d block", w, h, b, b);
    rep->mean_block_z2 = z2sum / nb;
    rep->mean_rel_diff = tr != 0 ? fabs(ta - tr) / fabs(tr) : fabs(ta);
    double bound = 1.0 + 5.0 * sqrt(2.0 / nb);
    if (rep->max_block_z > zmax || rep->mean_block_z2 > bound)
        return vpt_fail("invalid output: image disagrees with the reference statistically "
                        "(max |z| %.2f over %d blocks, limit %.1f; mean z^2 %.2f, limit %.2f)",
                        rep->max_block_z, nb, zmax, rep->mean_block_z2, bound);
    return 0;
}
