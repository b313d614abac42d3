/* libFuzzer target: one .vdb file in memory through the OpenVDB shim
 * (vpt_volume_parse_vdb -> vpt_vdb_read_memory in bin/libvptune-openvdb.so;
 * build it first with `make`), then the .nvdb parser on NanoVDB's
 * conversion. OpenVDB and NanoVDB are Debian's builds, not instrumented: no
 * coverage feedback inside them; the target checks the shim's glue and the
 * result's properties on what OpenVDB accepts. `make fuzz` leaves it out
 * unless FUZZ_TARGETS names it (fuzz/fuzz.mk says why). $VPT_OPENVDB_SHIM
 * names the shim; default bin/libvptune-openvdb.so (run from the repository
 * root). */
#include "fuzz/fuzz_volume_check.h"
#include "scenes/formats/volume_vdb.h"

#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("VPT_OPENVDB_SHIM", "bin/libvptune-openvdb.so", 0);
    return 0;
}

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
