/* libFuzzer target: environment maps (scenes/env_map.h) from OpenEXR bytes,
 * through vpt_env_map_parse_exr, the parse every .exr map goes through
 * (vpt_env_map_load reads the file, then calls it). OpenEXR (Debian's
 * OpenEXRCore, not instrumented: no coverage feedback inside it) runs in the
 * plugin bin/libvptune-openexr.so (build it first with `make`) behind the
 * fault boundary (base/isolate.h), in one worker process serving many
 * inputs: a crash or an abort inside OpenEXR ends the worker and comes back
 * as a refusal, which the target accepts like any other. What it checks is
 * ours: the plugin's checks of what OpenEXR decodes, the boundary, the
 * checks of what crosses it and of every texel, the sampling tables. A
 * refusal must say what is wrong and name the input; a map must have
 * fuzz/fuzz_env_map_check.h's properties. The parser's memory limit is
 * 256 MiB here, below libFuzzer's 2 GiB malloc limit, so that a large
 * allocation fails in the worker before libFuzzer's malloc hook would count
 * it against the input (docs/decisions/fuzz-third-party-parsers.md).
 * $VPT_OPENEXR_SHIM names the plugin; default bin/libvptune-openexr.so (run
 * from the repository root). */
#include "fuzz/fuzz_env_map_check.h"

FUZZ_ALLOCATOR_MAY_RETURN_NULL
FUZZ_PLUGIN_INITIALIZE("VPT_OPENEXR_SHIM", "bin/libvptune-openexr.so", "256M")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vpt_error_clear();
    VptEnvMap *m = vpt_env_map_parse_exr("fuzz.exr", data, size, 1.0);
    if (!m) {
        FUZZ_CHECK_FAILED_WITH_MESSAGE("vpt_env_map_parse_exr");
        FUZZ_CHECK(strstr(vpt_errmsg(), "fuzz.exr") != NULL, "a refusal that does not name the file: %s",
                   vpt_errmsg());
        return 0;
    }
    FUZZ_CHECK(!strcmp(m->stem, "fuzz") && !strcmp(m->source, "fuzz.exr"), "the map is named '%s' from '%s'", m->stem,
               m->source);
    fuzz_env_map_check(m);
    return 0;
}
