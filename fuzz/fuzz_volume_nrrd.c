/* libFuzzer target: NRRD headers with attached or detached data
 * (vpt_volume_parse_nrrd); input layout in fuzz_volume_split.h. */
#include "fuzz/fuzz_volume_split.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_volume_split_run(vpt_volume_parse_nrrd, "fuzz.nrrd", data, size, "vpt_volume_parse_nrrd");
    return 0;
}
