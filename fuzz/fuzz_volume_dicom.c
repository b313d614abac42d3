/* libFuzzer target: one DICOM file in memory through the GDCM shim
 * (vpt_volume_parse_dicom -> vpt_dicom_read_memory in
 * bin/libvptune-dicom.so; build it first with `make`). GDCM itself is the
 * Debian build, not instrumented (no coverage feedback inside it), and runs
 * behind the fault boundary (base/isolate.h) in a worker process, as every
 * in-memory DICOM parse does: its assertions (it aborts on some malformed
 * files) end the worker and come back as an error. The target checks the
 * boundary, the checks of what crosses it (scenes/formats/volume_dicom.c) and the
 * result's properties. The parser's memory limit is 256 MiB here: four
 * times the target's 64 MiB grid cap (GDCM holds the stored values, the
 * floats and their copy), and below libFuzzer's malloc limit (2 GiB), so
 * that a large allocation fails in the worker before libFuzzer's malloc
 * hook would count it against the input; and a length field GDCM believes
 * then costs an allocation of at most that, not of gigabytes.
 * $VPT_DICOM_SHIM names the shim; default bin/libvptune-dicom.so (run from
 * the repository root). */
#include "fuzz/fuzz_volume_check.h"
#include "scenes/formats/volume_dicom.h"

FUZZ_ALLOCATOR_MAY_RETURN_NULL
FUZZ_PLUGIN_INITIALIZE("VPT_DICOM_SHIM", "bin/libvptune-dicom.so", "256M")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    VptVolume v;
    vpt_error_clear();
    int rc = vpt_volume_parse_dicom("fuzz.dcm", data, size, FUZZ_VOLUME_MAX_BYTES, &v);
    fuzz_volume_check(rc, &v, FUZZ_VOLUME_MAX_BYTES, "vpt_volume_parse_dicom");
    return 0;
}
