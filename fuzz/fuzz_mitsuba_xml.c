/* libFuzzer target: Mitsuba scene files (vpt_mitsuba_parse: text ->
 * description, no file touched). A rejected input must leave a message; an
 * accepted one must describe a scene vptune can build (sizes, angles,
 * coefficients in range, a volume for sigma_t and albedo, a directional
 * emitter's unit direction and irradiance), and parsing must
 * be deterministic. */
#include "fuzz/fuzz_common.h"
#include "scenes/mitsuba/mitsuba_xml.h"

#include <math.h>

static void check_volume(const VptMitsubaVolume *v, const char *what)
{
    FUZZ_CHECK(v->kind == VPT_MTS_VOLUME_CONST || v->kind == VPT_MTS_VOLUME_GRID, "%s: kind %d", what, v->kind);
    if (v->kind == VPT_MTS_VOLUME_GRID) {
        FUZZ_CHECK(v->filename[0] && memchr(v->filename, '\0', sizeof v->filename), "%s: filename", what);
        for (int i = 0; i < 16; i++) FUZZ_CHECK(isfinite(v->to_world[i]), "%s: to_world[%d]", what, i);
    } else {
        for (int k = 0; k < 3; k++) FUZZ_CHECK(isfinite(v->value[k]), "%s: value %g", what, v->value[k]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static VptMitsubaDesc a, b;
    vpt_error_clear();
    int rc = vpt_mitsuba_parse("fuzz.xml", (const char *)data, size, &a);
    if (rc != 0) {
        FUZZ_CHECK(rc == -1, "returned %d", rc);
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_mitsuba_parse");
        return 0;
    }
    FUZZ_CHECK(a.version_major == 0 || a.version_major == 3, "version %d", a.version_major);
    FUZZ_CHECK(a.width >= 1 && a.width <= 16384 && a.height >= 1 && a.height <= 16384, "film %dx%d", a.width,
               a.height);
    FUZZ_CHECK(a.spp >= 1 && a.spp <= (1 << 24), "spp %d", a.spp);
    FUZZ_CHECK(a.fov_deg > 0.0 && a.fov_deg < 179.0, "fov %g", a.fov_deg);
    FUZZ_CHECK(a.near_clip > 0.0 && a.far_clip > a.near_clip, "clip %g %g", a.near_clip, a.far_clip);
    FUZZ_CHECK(a.max_depth >= 0 && a.max_depth < VPT_MITSUBA_DEPTH_INFINITE, "max_depth %d", a.max_depth);
    FUZZ_CHECK(a.rr_depth == -1 || (a.rr_depth >= 1 && a.rr_depth < VPT_MITSUBA_DEPTH_INFINITE), "rr_depth %d",
               a.rr_depth);
    for (int k = 0; k < 3; k++) {
        FUZZ_CHECK(a.env[k] >= 0.0f && isfinite(a.env[k]), "env %g", a.env[k]);
        FUZZ_CHECK(isfinite(a.cam_pos[k]) && isfinite(a.cam_target[k]) && isfinite(a.cam_up[k]), "camera");
    }
    if (a.has_sun) {
        const double len2 = (double)a.sun_dir[0] * a.sun_dir[0] + (double)a.sun_dir[1] * a.sun_dir[1] +
                            (double)a.sun_dir[2] * a.sun_dir[2];
        FUZZ_CHECK(isfinite(len2) && fabs(len2 - 1.0) <= 2e-5, "sun direction %g %g %g", a.sun_dir[0], a.sun_dir[1],
                   a.sun_dir[2]);
        for (int k = 0; k < 3; k++)
            FUZZ_CHECK(a.sun_irradiance[k] >= 0.0f && isfinite(a.sun_irradiance[k]), "sun irradiance %g",
                       a.sun_irradiance[k]);
    }
    check_volume(&a.sigma_t, "sigma_t");
    check_volume(&a.albedo, "albedo");
    FUZZ_CHECK(a.scale > 0.0 && isfinite(a.scale), "scale %g", a.scale);
    FUZZ_CHECK(a.hg_g > -1.0f && a.hg_g < 1.0f, "g %g", a.hg_g);
    FUZZ_CHECK(a.boundary >= VPT_BOUNDARY_NULL && a.boundary <= VPT_BOUNDARY_GGX, "boundary %d", a.boundary);
    if (a.boundary == VPT_BOUNDARY_GGX) FUZZ_CHECK(a.ggx_alpha > 0.0f && a.ggx_alpha <= 1.0f, "alpha %g", a.ggx_alpha);
    if (a.boundary != VPT_BOUNDARY_NULL)
        FUZZ_CHECK(a.ior_inside > 0.0f && a.ior_outside > 0.0f, "ior %g %g", a.ior_inside, a.ior_outside);
    FUZZ_CHECK(a.shape == VPT_MTS_SHAPE_CUBE || a.shape == VPT_MTS_SHAPE_OBJ, "shape %d", a.shape);
    if (a.shape == VPT_MTS_SHAPE_OBJ) FUZZ_CHECK(a.shape_filename[0], "obj without a file name");
    FUZZ_CHECK(vpt_mitsuba_parse("fuzz.xml", (const char *)data, size, &b) == 0, "second parse failed");
    FUZZ_CHECK(memcmp(&a, &b, sizeof a) == 0, "two parses differ");
    return 0;
}
