/* DICOM volumes: a folder of one DICOM series, or one .dcm/.dicom file
 * (single- or multi-frame), read through GDCM (see volume_dicom_shim.h for
 * what is checked and how slices are ordered). vpt_volume_load dispatches
 * here (volume.c's table of formats) for a path ending in .dcm or .dicom
 * (any case), or a folder loaded without raw options (--dims, --type). The voxel values are the rescaled ones (Hounsfield
 * units for CT); spacing in mm; origin: the first slice's position.
 * GDCM runs behind the fault boundary (base/isolate.h): its crashes and
 * allocations beyond VPT_PARSER_MEMORY are errors naming the file, and what
 * it returns is checked field by field (docs/input-safety.md). */
#ifndef VPT_SCENES_VOLUME_DICOM_H
#define VPT_SCENES_VOLUME_DICOM_H

#include "scenes/volume.h"

/* The shim's path as found (NULL: not loaded yet or not found), for tests. */
const char *vpt_volume_dicom_shim_path(void);

/* One DICOM file held in memory, through the shim (for the fuzzer), in one
 * worker process reused across calls (thread-safe: calls are serialized). */
int vpt_volume_parse_dicom(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out);

#endif
