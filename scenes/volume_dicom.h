/* DICOM volumes: a folder of one DICOM series, or one .dcm/.dicom file
 * (single- or multi-frame), read through GDCM (see volume_dicom_shim.h for
 * what is checked and how slices are ordered). vpt_volume_load dispatches
 * here for such paths. The voxel values are the rescaled ones (Hounsfield
 * units for CT); spacing in mm; origin: the first slice's position. */
#ifndef VPT_SCENES_VOLUME_DICOM_H
#define VPT_SCENES_VOLUME_DICOM_H

#include "scenes/volume.h"

/* 1 when path ends in .dcm or .dicom (any case), or is a folder whose name
 * has no other volume format's extension, loaded without raw options
 * (--dims, --type). */
int vpt_volume_is_dicom(const char *path, const VptVolumeLoadOptions *opt);

/* Loads a DICOM folder or file. Fails with a message naming the path (and,
 * when the GDCM shim cannot be loaded, what to install). */
int vpt_volume_load_dicom(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out);

/* The shim's path as found (NULL: not loaded yet or not found), for tests. */
const char *vpt_volume_dicom_shim_path(void);

/* One DICOM file held in memory, through the shim (for the fuzzer). */
int vpt_volume_parse_dicom(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out);

#endif
