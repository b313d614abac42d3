/* libFuzzer target: environment maps (scenes/env_map.h) from PFM bytes,
 * colour or grey (vpt_image_parse_pfm_any), through the texel checks and the
 * sampling tables; on success the map's properties are
 * fuzz/fuzz_env_map_check.h's. */
#include "fuzz/fuzz_env_map_check.h"
#include "image/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vpt_error_clear();
    VptImage *img = vpt_image_parse_pfm_any("fuzz.pfm", data, size);
    if (!img) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_image_parse_pfm_any");
        return 0;
    }
    VptEnvMap *m = vpt_env_map_from_image("fuzz.pfm", img, 1.0);
    vpt_image_destroy(img);
    if (!m) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_env_map_from_image");
        return 0;
    }
    fuzz_env_map_check(m);
    return 0;
}
