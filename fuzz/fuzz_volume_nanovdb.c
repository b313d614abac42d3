/* libFuzzer target: NanoVDB .nvdb files (vpt_volume_parse_nanovdb): segment
 * headers, grid metadata, ZIP blocks, the whole-tree check before PNanoVDB
 * reads a byte of a grid, the grid's placement, and the densified volume's
 * properties; parsed with a 1 MiB cap and a 16 KiB one (which refuses most
 * seeds' inflated trees: the size refusals are exercised too).
 *
 * Not with the fuzzers' common cap (64 MiB) nor the default one (8 GiB),
 * unlike the dense formats: a .nvdb is densified over its active box, whose
 * volume a few hundred bytes may legitimately make huge (two root tiles at
 * opposite corners), so the cap is what bounds the work, linearly: at 64 MiB
 * the target fell from 28,000 to under 3,000 executions a second within
 * seconds, once libFuzzer had found such boxes, and at 8 GiB one input took
 * minutes. */
#include "fuzz/fuzz_volume_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t caps[] = {(size_t)1 << 20, (size_t)16 << 10};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        VptVolume v;
        vpt_error_clear();
        const int rc = vpt_volume_parse_nanovdb("fuzz.nvdb", data, size, caps[i], &v);
        fuzz_volume_check(rc, &v, caps[i], i ? "vpt_volume_parse_nanovdb (16 KiB cap)" : "vpt_volume_parse_nanovdb (1 MiB cap)");
    }
    return 0;
}
