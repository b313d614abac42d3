/* libFuzzer target: one .vdb file in memory through the OpenVDB shim
 * (vpt_volume_parse_vdb -> vpt_vdb_read_memory in bin/libvptune-openvdb.so;
 * build it first with `make`), then the .nvdb parser on NanoVDB's
 * conversion. OpenVDB and NanoVDB are Debian's builds, not instrumented, and
 * run behind the fault boundary (base/isolate.h) in a child process per
 * input, under a 1 GiB memory limit (below libFuzzer's 2 GiB malloc limit,
 * so a large allocation fails in the child before libFuzzer's malloc hook
 * would count it against the input): OpenVDB's allocations of the lengths a
 * file states, and what it leaks when a read fails part way, end with the
 * child. The target checks the boundary, the .nvdb parser on what crosses
 * it, and the result's properties. $VPT_OPENVDB_SHIM
 * names the shim; default bin/libvptune-openvdb.so (run from the repository
 * root). */
#include "fuzz/fuzz_volume_check.h"
#include "scenes/formats/volume_vdb.h"

FUZZ_PLUGIN_INITIALIZE("VPT_OPENVDB_SHIM", "bin/libvptune-openvdb.so", "1G")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the .nvdb target's cap, for the same reason: the densified box */
    const size_t cap = (size_t)1 << 20;
    VptVolume v;
    vpt_error_clear();
    int rc = vpt_volume_parse_vdb("fuzz.vdb", data, size, cap, &v);
    fuzz_volume_check(rc, &v, cap, "vpt_volume_parse_vdb");
    return 0;
}
