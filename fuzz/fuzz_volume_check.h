/* The properties every volume parser's result must have, shared by the
 * volume fuzz targets (not a public API). */
#ifndef VPT_FUZZ_VOLUME_CHECK_H
#define VPT_FUZZ_VOLUME_CHECK_H

#include "fuzz/fuzz_common.h"
#include "scenes/volume.h"

#include <math.h>

/* The byte cap the volume targets parse with: small enough that a header
 * may ask for more (the size checks are then exercised), large enough for
 * any volume a fuzzer input can hold. The default cap (8 GiB) is exercised
 * as well, by the second parse of each input. */
#define FUZZ_VOLUME_MAX_BYTES ((size_t)64 << 20)

/* After a parse: on success a sane grid (dims in range, finite values,
 * positive finite spacing and extent, finite origin, albedos in [0, 1]), on
 * failure a message
 * and a zeroed *v. Frees the volume. */
static inline void fuzz_volume_check(int rc, VptVolume *v, size_t max_bytes, const char *what)
{
    if (rc != 0) {
        FUZZ_CHECK(rc == -1, "%s returned %d", what, rc);
        FUZZ_CHECK_FAILED_WITH_MESSAGE(what);
        FUZZ_CHECK(v->data == NULL && v->albedo == NULL && v->nx == 0 && v->ny == 0 && v->nz == 0,
                   "%s failed but left a volume", what);
        return;
    }
    int n[3] = {v->nx, v->ny, v->nz};
    FUZZ_CHECK(v->data != NULL, "%s: no data", what);
    size_t count = 1;
    for (int k = 0; k < 3; k++) {
        FUZZ_CHECK(n[k] >= 1 && n[k] <= 65536, "%s: dimension %d is %d", what, k, n[k]);
        count *= (size_t)n[k];
        FUZZ_CHECK(isfinite(v->spacing[k]) && v->spacing[k] > 0.0f, "%s: spacing[%d] = %g", what, k,
                   (double)v->spacing[k]);
        FUZZ_CHECK(isfinite((float)n[k] * v->spacing[k]), "%s: extent along %d = %d * %g is not finite", what, k,
                   n[k], (double)v->spacing[k]);
        FUZZ_CHECK(isfinite(v->origin[k]), "%s: origin[%d] = %g", what, k, (double)v->origin[k]);
        if (v->has_bbox)
            FUZZ_CHECK(isfinite(v->bbox_min[k]) && isfinite(v->bbox_max[k]) && v->bbox_max[k] > v->bbox_min[k],
                       "%s: bbox along %d is %g..%g", what, k, (double)v->bbox_min[k], (double)v->bbox_max[k]);
    }
    FUZZ_CHECK(count * sizeof(float) <= max_bytes, "%s: %zu voxels exceed the %zu-byte cap", what, count, max_bytes);
    for (size_t i = 0; i < count; i++)
        FUZZ_CHECK(isfinite(v->data[i]), "%s: voxel %zu is %g", what, i, (double)v->data[i]);
    for (size_t i = 0; v->albedo && i < 3 * count; i++)
        FUZZ_CHECK(v->albedo[i] >= 0.0f && v->albedo[i] <= 1.0f, "%s: albedo %zu is %g", what, i,
                   (double)v->albedo[i]);
    vpt_volume_free(v);
}

#endif
