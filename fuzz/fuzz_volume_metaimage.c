/* libFuzzer target: MetaImage headers with attached or detached data
 * (vpt_volume_parse_metaimage); input layout in fuzz_volume_split.h. */
#include "fuzz/fuzz_volume_split.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_volume_split_run(vpt_volume_parse_metaimage, "fuzz.mha", data, size, "vpt_volume_parse_metaimage");
    return 0;
}
