/* DICOM volumes through the GDCM shim: see volume_dicom.h.
 *
 * The shim (bin/libvptune-dicom.so, built from volume_dicom_gdcm.cc) is
 * loaded with dlopen on first use (vpt_plugin_load: $VPT_DICOM_SHIM when set,
 * else beside the running program, else ../lib/vptune/ relative to it, where
 * `make install` puts it). Loading it late keeps GDCM's shared libraries out
 * of the programs, which must run on GPU machines without GDCM; there only a
 * DICOM volume fails, saying so. */
#include "scenes/formats/volume_dicom.h"

#include "base/error.h"
#include "base/plugin.h"
#include "scenes/formats/volume_dicom_shim.h"
#include "scenes/formats/volume_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHIM_NAME "libvptune-dicom.so"

typedef int (*ReadFn)(const char *, size_t, VptDicomVolume *);
typedef int (*ReadMemFn)(const char *, const unsigned char *, size_t, size_t, VptDicomVolume *);

static VptPlugin shim = {.file = SHIM_NAME,
                         .env = "VPT_DICOM_SHIM",
                         .abi_symbol = "vpt_dicom_shim_abi",
                         .abi = VPT_DICOM_SHIM_ABI,
                         .symbols = {"vpt_dicom_read", "vpt_dicom_read_memory", NULL}};
#define shim_read ((ReadFn)shim.fn[0])
#define shim_read_memory ((ReadMemFn)shim.fn[1])

static int need_shim(const char *path)
{
    if (vpt_plugin_load(&shim) == 0) return 0;
    return vpt_fail("%s: DICOM volumes are read through GDCM, and its shim could not be loaded (%s). On Debian or "
                    "Ubuntu: apt-get install libgdcm3.0 (to run) or libgdcm-dev (to build), then make; or convert "
                    "the series to a .mha file on a machine that has it",
                    path, shim.error);
}

const char *vpt_volume_dicom_shim_path(void)
{
    return vpt_plugin_load(&shim) == 0 ? shim.path : NULL;
}

/* A folder is a DICOM series unless raw options say otherwise (files named
 * .dcm/.dicom, and folders named like another format, are routed by their
 * extension before this is asked: volume_format.h). */
static int claims_folder(const char *path, const VptVolumeLoadOptions *opt)
{
    if (opt && (opt->has_dims || opt->has_type)) return 0;
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The shim's result as a VptVolume (values already float). */
static int to_volume(const char *path, VptDicomVolume *d, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < 3; k++)
        if (!(d->spacing[k] > 0) || d->spacing[k] > 1e6) {
            free(d->data);
            return vpt_fail("%s: voxel size %g mm along axis %d is not a positive size", path, d->spacing[k], k);
        }
    out->nx = d->nx;
    out->ny = d->ny;
    out->nz = d->nz;
    out->data = d->data;
    out->stored = d->stored_bits <= 8 ? (d->stored_signed ? VPT_SCALAR_I8 : VPT_SCALAR_U8)
                  : d->stored_bits <= 16 ? (d->stored_signed ? VPT_SCALAR_I16 : VPT_SCALAR_U16)
                                         : (d->stored_signed ? VPT_SCALAR_I32 : VPT_SCALAR_U32);
    for (int k = 0; k < 3; k++) {
        out->spacing[k] = (float)d->spacing[k];
        out->origin[k] = (float)d->origin[k];
    }
    return 0;
}

static int load_dicom(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (access(path, R_OK) != 0) return vpt_fail_errno("cannot open '%s'", path);
    if (need_shim(path)) return -1;
    VptDicomVolume d;
    if (shim_read(path, vptv_max_bytes(opt ? opt->max_bytes : 0), &d)) return vpt_fail("%s", d.error);
    return to_volume(path, &d, out);
}

int vpt_volume_parse_dicom(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (need_shim(name)) return -1;
    VptDicomVolume d;
    if (shim_read_memory(name, buf, size, vptv_max_bytes(max_bytes), &d)) return vpt_fail("%s", d.error);
    return to_volume(name, &d, out);
}

const VptVolumeFormat vpt_volume_format_dicom = {"DICOM", "dcm dicom", claims_folder, load_dicom};
