/* DICOM volumes through the GDCM shim: see volume_dicom.h.
 *
 * The shim (bin/libvptune-dicom.so, built from volume_dicom_gdcm.cc) is
 * loaded with dlopen on first use (vpt_plugin_load: $VPT_DICOM_SHIM when set,
 * else beside the running program, else ../lib/vptune/ relative to it, where
 * `make install` puts it). Loading it late keeps GDCM's shared libraries out
 * of the programs, which must run on GPU machines without GDCM; there only a
 * DICOM volume fails, saying so.
 *
 * GDCM runs behind the fault boundary (base/isolate.h): in a child process
 * under a memory and a time limit, so that its assertions (it aborts on
 * some malformed files) and its allocations (a length field it believes)
 * cost an error message, never the caller's process. What the child sends
 * back is checked here, field by field, before a voxel is used. */
#include "scenes/formats/volume_dicom.h"

#include "base/error.h"
#include "base/isolate.h"
#include "base/plugin.h"
#include "scenes/formats/volume_dicom_shim.h"
#include "scenes/formats/volume_format.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
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

/* One read through the shim, in the child of the fault boundary: a file or
 * folder at path. */
typedef struct {
    const char *path;
    size_t max_bytes;
    VptDicomVolume d;
} Read;

static int read_in_child(void *ctx, VptIsolateReply *reply, char *err, size_t err_size)
{
    Read *r = ctx;
    if (shim_read(r->path, r->max_bytes, &r->d)) {
        snprintf(err, err_size, "%s", r->d.error);
        return -1;
    }
    reply->head = &r->d;
    reply->head_size = sizeof r->d;
    reply->body = r->d.data;
    reply->body_size = r->d.nx > 0 && r->d.ny > 0 && r->d.nz > 0
                           ? (size_t)r->d.nx * (size_t)r->d.ny * (size_t)r->d.nz * sizeof(float)
                           : 0;
    return 0;
}

/* What the shim sent back, checked field by field before a voxel is
 * accepted: the dimensions, that the values are exactly the grid's and fit
 * the cap, the stored type, voxel sizes positive with a finite extent, the
 * origin finite, every value finite. */
static int to_volume(const char *path, const VptDicomVolume *d, float *data, size_t bytes, size_t max_bytes,
                     VptVolume *out)
{
    const int64_t dims[3] = {d->nx, d->ny, d->nz};
    VptvShape sh;
    if (vptv_shape(path, "the DICOM grid", dims, 3, VPT_SCALAR_F32, max_bytes, &sh)) return -1;
    if (bytes != sh.count * sizeof(float))
        return vpt_fail("%s: GDCM's shim sent %zu bytes of values for a %dx%dx%d grid (%zu expected)", path, bytes,
                        d->nx, d->ny, d->nz, sh.count * sizeof(float));
    if (d->stored_bits < 1 || d->stored_bits > 64)
        return vpt_fail("%s: %d bits allocated per stored value (1 to 64 expected)", path, d->stored_bits);
    static const char *axis[3] = {"x (PixelSpacing, between columns)", "y (PixelSpacing, between rows)",
                                  "z (the distance between slices)"};
    for (int k = 0; k < 3; k++)
        if (!(d->spacing[k] > 0) || !(d->spacing[k] <= 1e6))
            return vpt_fail("%s: voxel size %g mm along %s is not a positive finite size (at most 1e6 mm)", path,
                            d->spacing[k], axis[k]);
    if (vptv_check_spacing(path, "the voxel size", d->spacing, &sh, 3)) return -1;
    for (int k = 0; k < 3; k++)
        if (!(fabs(d->origin[k]) <= VPTV_MAX_COORD))
            return vpt_fail("%s: ImagePositionPatient's %c of the first slice is %g: not a finite position within "
                            "+-%g mm",
                            path, "xyz"[k], d->origin[k], VPTV_MAX_COORD);
    for (size_t i = 0; i < sh.count; i++)
        if (!isfinite(data[i]))
            return vpt_fail("%s: voxel %zu is %g after the rescale: not a finite value", path, i, (double)data[i]);
    memset(out, 0, sizeof *out);
    out->nx = d->nx;
    out->ny = d->ny;
    out->nz = d->nz;
    out->data = data;
    out->stored = d->stored_bits <= 8 ? (d->stored_signed ? VPT_SCALAR_I8 : VPT_SCALAR_U8)
                  : d->stored_bits <= 16 ? (d->stored_signed ? VPT_SCALAR_I16 : VPT_SCALAR_U16)
                                         : (d->stored_signed ? VPT_SCALAR_I32 : VPT_SCALAR_U32);
    for (int k = 0; k < 3; k++) {
        out->spacing[k] = (float)d->spacing[k];
        out->origin[k] = (float)d->origin[k];
    }
    return 0;
}

/* The bytes a parse reads: a file's size, a folder's files' total. */
static uint64_t input_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) return (uint64_t)st.st_size;
    uint64_t total = 0;
    DIR *dir = opendir(path);
    if (!dir) return 0;
    char p[4096];
    for (struct dirent *e; (e = readdir(dir));) {
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
    }
    closedir(dir);
    return total;
}

/* The shim's read behind the fault boundary (base/isolate.h), then the
 * checks of to_volume. */
static int read_isolated(Read *r, uint64_t input, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    VptIsolateLimits lim;
    if (vpt_isolate_limits(input, &lim)) return -1;
    VptDicomVolume d;
    unsigned char *body;
    size_t bytes;
    if (vpt_isolate_run(r->path, "GDCM", &lim, read_in_child, r, &d, sizeof d, r->max_bytes, &body, &bytes))
        return -1;
    if (to_volume(r->path, &d, (float *)body, bytes, r->max_bytes, out)) {
        free(body);
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}

static int load_dicom(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (access(path, R_OK) != 0) return vpt_fail_errno("cannot open '%s'", path);
    if (need_shim(path)) return -1;
    Read r = {.path = path, .max_bytes = vptv_max_bytes(opt ? opt->max_bytes : 0)};
    return read_isolated(&r, input_bytes(path), out);
}

/* The in-memory parse, for callers of many small files (the fuzz target):
 * in one worker process (base/isolate.h) rather than a fork per file. The
 * request: max_bytes (8 bytes), the name's length (8), the name, the file. */
static int serve_memory(const void *req, size_t n, VptIsolateReply *reply, char *err, size_t err_size)
{
    static VptDicomVolume d; /* sent after this returns; the worker is single-threaded */
    uint64_t max_bytes, name_len;
    const unsigned char *p = req;
    if (n < 16) return snprintf(err, err_size, "a DICOM request of %zu bytes", n), -1;
    memcpy(&max_bytes, p, 8);
    memcpy(&name_len, p + 8, 8);
    if (name_len > n - 16 || name_len > 4096) return snprintf(err, err_size, "a DICOM request's name is cut"), -1;
    char name[4097];
    memcpy(name, p + 16, name_len);
    name[name_len] = '\0';
    if (shim_read_memory(name, p + 16 + name_len, n - 16 - name_len, (size_t)max_bytes, &d)) {
        snprintf(err, err_size, "%s", d.error);
        return -1;
    }
    reply->head = &d;
    reply->head_size = sizeof d;
    reply->body = d.data;
    reply->owned = d.data;
    reply->body_size = d.nx > 0 && d.ny > 0 && d.nz > 0 ? (size_t)d.nx * (size_t)d.ny * (size_t)d.nz * sizeof(float) : 0;
    return 0;
}

static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;
static VptIsolateWorker *worker;

int vpt_volume_parse_dicom(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (need_shim(name)) return -1;
    max_bytes = vptv_max_bytes(max_bytes);
    VptIsolateLimits lim;
    if (vpt_isolate_limits(size, &lim)) return -1;
    const size_t name_len = strnlen(name, 4096);
    if (size > SIZE_MAX - 16 - name_len) return vpt_fail("%s: a file of %zu bytes", name, size);
    unsigned char *req = vpt_malloc(16 + name_len + size);
    if (!req) return -1;
    const uint64_t head[2] = {max_bytes, name_len};
    memcpy(req, head, 16);
    memcpy(req + 16, name, name_len);
    if (size) memcpy(req + 16 + name_len, buf, size);
    VptDicomVolume d;
    unsigned char *body;
    size_t bytes;
    pthread_mutex_lock(&worker_lock);
    int rc = vpt_isolate_worker_call(&worker, name, "GDCM", &lim, serve_memory, req, 16 + name_len + size, &d,
                                     sizeof d, max_bytes, &body, &bytes);
    pthread_mutex_unlock(&worker_lock);
    free(req);
    if (rc) return -1;
    if (to_volume(name, &d, (float *)body, bytes, max_bytes, out)) {
        free(body);
        memset(out, 0, sizeof *out);
        return -1;
    }
    return 0;
}

const VptVolumeFormat vpt_volume_format_dicom = {"DICOM", "dcm dicom", claims_folder, load_dicom};
