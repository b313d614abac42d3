/* libFuzzer target: one DICOM file in memory through the GDCM shim
 * (vpt_volume_parse_dicom -> vpt_dicom_read_memory in
 * bin/libvptune-dicom.so; build it first with `make`). GDCM itself is the
 * Debian build, not instrumented: this target has no coverage feedback inside
 * GDCM and checks the shim's glue (its checks, the ordering, the copy out)
 * and the result's properties on what GDCM accepts. Known: GDCM 3.0.21
 * asserts (aborts) on some malformed files within seconds of fuzzing
 * (gdcm::FileMetaInformation::ReadCompat), so `make fuzz` leaves this target
 * out unless FUZZ_TARGETS names it (fuzz/fuzz.mk). $VPT_DICOM_SHIM names
 * the shim; default bin/libvptune-dicom.so (run from the repository root). */
#include "fuzz/fuzz_volume_check.h"
#include "scenes/volume_dicom.h"

#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("VPT_DICOM_SHIM", "bin/libvptune-dicom.so", 0);
    setenv("VPT_PARSER_MEMORY", "1G", 0);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    VptVolume v;
    vpt_error_clear();
    int rc = vpt_volume_parse_dicom("fuzz.dcm", data, size, FUZZ_VOLUME_MAX_BYTES, &v);
    fuzz_volume_check(rc, &v, FUZZ_VOLUME_MAX_BYTES, "vpt_volume_parse_dicom");
    return 0;
}
