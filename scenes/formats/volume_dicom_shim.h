/* The C interface of the GDCM shim (scenes/formats/volume_dicom_gdcm.cc), a shared
 * library of its own (bin/libvptune-dicom.so) that scenes/formats/volume_dicom.c
 * loads with dlopen the first time a DICOM volume is asked for. Why a
 * separate library: Debian ships GDCM as shared libraries only, and the
 * programs must keep running on GPU machines that have no GDCM (and no
 * package registry to get it): there, only DICOM loading fails, with a
 * message saying what to install.
 *
 * Both entries fill *out with the voxel values in Hounsfield units (or
 * whatever the modality's rescale gives: stored value * RescaleSlope +
 * RescaleIntercept), x fastest, slices ordered along the slice normal
 * (the cross product of ImageOrientationPatient's row and column cosines) by
 * ImagePositionPatient, and the voxel size: PixelSpacing in x and y, the
 * distance between consecutive slices in z. Each file's geometry tags, when
 * present, must hold finite numbers (PixelSpacing two positive ones,
 * ImagePositionPatient three, ImageOrientationPatient six), and native pixel
 * data exactly rows x columns x frames x bits allocated / 8 bytes (padded to
 * even), its stated length within the file before GDCM reads it. The
 * caller runs these in a child process (base/isolate.h): GDCM asserts on
 * some malformed files. On failure they return -1 and
 * write a message that names the file into out->error; out->data is then
 * NULL. out->data is malloc'd: the caller frees it with free(). */
#ifndef VPT_SCENES_VOLUME_DICOM_SHIM_H
#define VPT_SCENES_VOLUME_DICOM_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the functions or the struct change; the loader refuses a shim
 * of another version (a stale install). */
#define VPT_DICOM_SHIM_ABI 1

typedef struct {
    int nx, ny, nz;
    double spacing[3];       /* mm */
    double origin[3];        /* ImagePositionPatient of the first slice */
    float *data;             /* malloc'd, nx * ny * nz values */
    int stored_bits;         /* bits per stored value, for provenance */
    int stored_signed;
    char error[1024];
} VptDicomVolume;

int vpt_dicom_shim_abi(void);

/* path: a folder holding one DICOM series (one slice per file; a DICOMDIR
 * and hidden files are skipped), or one DICOM file (single- or multi-frame).
 * max_bytes bounds the float grid. */
int vpt_dicom_read(const char *path, size_t max_bytes, VptDicomVolume *out);

/* One DICOM file held in memory (for the fuzzer); name starts messages. */
int vpt_dicom_read_memory(const char *name, const unsigned char *buf, size_t size, size_t max_bytes,
                          VptDicomVolume *out);

#ifdef __cplusplus
}
#endif

#endif
