/* libFuzzer target: Mitsuba VOL files (vpt_volume_parse_mitsuba), with the
 * fuzzers' byte cap and with the default one. */
#include "fuzz/fuzz_volume_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    VptVolume v;
    vpt_error_clear();
    int rc = vpt_volume_parse_mitsuba("fuzz.vol", data, size, FUZZ_VOLUME_MAX_BYTES, &v);
    fuzz_volume_check(rc, &v, FUZZ_VOLUME_MAX_BYTES, "vpt_volume_parse_mitsuba");
    vpt_error_clear();
    rc = vpt_volume_parse_mitsuba("fuzz.vol", data, size, 0, &v);
    fuzz_volume_check(rc, &v, VPT_VOLUME_DEFAULT_MAX_BYTES, "vpt_volume_parse_mitsuba (default cap)");
    return 0;
}
