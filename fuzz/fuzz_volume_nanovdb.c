/* libFuzzer target: NanoVDB .nvdb files (vpt_volume_parse_nanovdb): segment
 * headers, grid metadata, ZIP blocks, and the whole-tree check before
 * PNanoVDB reads a byte of a grid; with the fuzzers' byte cap and with a
 * 1 MiB one. Not with the default cap (8 GiB), unlike the dense formats: a
 * .nvdb is densified over its active box, whose volume a small file may
 * legitimately make huge (two leaves at opposite corners), so the cap is
 * what bounds the work, and at 8 GiB one input takes minutes. */
#include "fuzz/fuzz_volume_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    VptVolume v;
    vpt_error_clear();
    int rc = vpt_volume_parse_nanovdb("fuzz.nvdb", data, size, FUZZ_VOLUME_MAX_BYTES, &v);
    fuzz_volume_check(rc, &v, FUZZ_VOLUME_MAX_BYTES, "vpt_volume_parse_nanovdb");
    vpt_error_clear();
    rc = vpt_volume_parse_nanovdb("fuzz.nvdb", data, size, (size_t)1 << 20, &v);
    fuzz_volume_check(rc, &v, (size_t)1 << 20, "vpt_volume_parse_nanovdb (1 MiB cap)");
    return 0;
}
