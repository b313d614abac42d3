/* libFuzzer target: NanoVDB .nvdb files (vpt_volume_parse_nanovdb): segment
 * headers, grid metadata, ZIP blocks, and the whole-tree check before
 * PNanoVDB reads a byte of a grid; with the fuzzers' byte cap and with the
 * default one. */
#include "fuzz/fuzz_volume_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    VptVolume v;
    vpt_error_clear();
    int rc = vpt_volume_parse_nanovdb("fuzz.nvdb", data, size, FUZZ_VOLUME_MAX_BYTES, &v);
    fuzz_volume_check(rc, &v, FUZZ_VOLUME_MAX_BYTES, "vpt_volume_parse_nanovdb");
    vpt_error_clear();
    rc = vpt_volume_parse_nanovdb("fuzz.nvdb", data, size, 0, &v);
    fuzz_volume_check(rc, &v, VPT_VOLUME_DEFAULT_MAX_BYTES, "vpt_volume_parse_nanovdb (default cap)");
    return 0;
}
