/* OpenVDB volumes through the OpenVDB shim: see volume_vdb.h.
 *
 * The shim (bin/libvptune-openvdb.so, built from volume_vdb_openvdb.cc) is
 * loaded with dlopen on use, in the fault boundary's child (below), never in
 * the calling process (vpt_plugin_load: $VPT_OPENVDB_SHIM when
 * set, else beside the running program, else ../lib/vptune/ relative to it,
 * where `make install` puts it). Loading it late keeps OpenVDB, TBB, Blosc
 * and Imath out of the programs, which must run on GPU machines without
 * them; there only a .vdb volume fails, saying what to install and how to
 * convert the file to .nvdb on a machine that has them.
 *
 * OpenVDB runs behind the fault boundary (base/isolate.h; read_isolated
 * below): it allocates what a file's length fields say before it reads the
 * bytes, so a file of a few hundred bytes could otherwise exhaust the
 * machine's memory. */
#include "scenes/formats/volume_vdb.h"

#include "base/error.h"
#include "base/file.h"
#include "base/isolate.h"
#include "base/plugin.h"
#include "scenes/formats/volume_format.h"
#include "scenes/formats/volume_vdb_shim.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIM_NAME "libvptune-openvdb.so"

typedef int (*ReadFn)(const char *, size_t, int, VptVdbResult *);
typedef int (*ReadMemFn)(const char *, const unsigned char *, size_t, size_t, VptVdbResult *);

static VptPlugin shim = {.file = SHIM_NAME,
                         .env = "VPT_OPENVDB_SHIM",
                         .abi_symbol = "vpt_vdb_shim_abi",
                         .abi = VPT_VDB_SHIM_ABI,
                         .symbols = {"vpt_vdb_read", "vpt_vdb_read_memory", NULL}};
#define shim_read ((ReadFn)shim.fn[0])
#define shim_read_memory ((ReadMemFn)shim.fn[1])

/* What a .vdb load says when the shim cannot be loaded, into err. */
static void shim_missing(const char *path, char *err, size_t err_size)
{
    snprintf(err, err_size,
             "%s: OpenVDB .vdb files are read through OpenVDB, and its shim could not be loaded (%s). On Debian or "
             "Ubuntu: apt-get install libopenvdb10.0 (to run) or libopenvdb-dev libnanovdb-dev (to build), then "
             "make; or, on a machine that has them, convert the file to NanoVDB, which loads anywhere: render "
             "--volume FILE.vdb --export-nvdb FILE.nvdb",
             path, shim.error);
}

/* The shim is loaded in the fault boundary's child only, never in the
 * calling process: loading OpenVDB runs its dependencies' initializers,
 * which start threads (log4cplus' pool), and a process holding threads it
 * does not control must not fork a parser (a lock one of them holds at the
 * fork stays held in the child forever: under ASan, its allocator's). */
static int shim_path_in_child(void *ctx, VptIsolateReply *reply, char *err, size_t err_size)
{
    (void)ctx;
    if (vpt_plugin_load(&shim)) {
        snprintf(err, err_size, "%s", shim.error);
        return -1;
    }
    reply->body = shim.path;
    reply->body_size = strlen(shim.path) + 1;
    return 0;
}

const char *vpt_volume_vdb_shim_path(void)
{
    static char path[sizeof shim.path];
    static int state; /* 0 not asked, 1 found, -1 not */
    if (!state) {
        VptIsolateLimits lim;
        unsigned char *body = NULL;
        size_t size = 0;
        state = -1;
        if (vpt_isolate_limits(0, &lim) == 0 &&
            vpt_isolate_run(SHIM_NAME, "dlopen", &lim, shim_path_in_child, NULL, NULL, 0, sizeof path, &body, &size) ==
                0 &&
            size > 1 && body[size - 1] == '\0') {
            memcpy(path, body, size);
            state = 1;
        }
        free(body);
        vpt_error_clear();
    }
    return state > 0 ? path : NULL;
}

/* The file's SHA-256 (the volume's provenance, as every file format gives
 * it): OpenVDB reads the file itself, so this is a read of its own. */
static int file_sha256(const char *path, char hex[65])
{
    VptvFile *f;
    if (vptv_file_open(path, path, &f)) return -1;
    const int rc = vptv_file_finish(f, hex);
    vptv_file_close(f);
    return rc;
}

/* One read through the shim, in the child of the fault boundary: the file
 * at path, or (buf not NULL) a file held in memory. */
typedef struct {
    const char *path;
    const unsigned char *buf;
    size_t size, max_bytes;
    int zip;
    VptVdbResult r;
} Read;

static int read_in_child(void *ctx, VptIsolateReply *reply, char *err, size_t err_size)
{
    Read *r = ctx;
    if (vpt_plugin_load(&shim)) {
        shim_missing(r->path, err, err_size);
        return -1;
    }
    const int rc = r->buf ? shim_read_memory(r->path, r->buf, r->size, r->max_bytes, &r->r)
                          : shim_read(r->path, r->max_bytes, r->zip, &r->r);
    if (rc) {
        snprintf(err, err_size, "%s", r->r.error);
        return -1;
    }
    reply->body = r->r.nvdb;
    reply->body_size = r->r.size;
    return 0;
}

/* The NanoVDB bytes of the .vdb file (or buffer) in r, made by OpenVDB
 * behind the fault boundary (base/isolate.h): its aborts and its
 * allocations of lengths the file states cost an error message naming the
 * file and the limit, never the caller's process. The bytes are not trusted:
 * the .nvdb parser checks them as it checks any file. */
static int read_isolated(Read *r, uint64_t input, unsigned char **nvdb, size_t *size)
{
    VptIsolateLimits lim;
    if (vpt_isolate_limits(input, &lim)) return -1;
    /* a density and an albedo grid, each within the cap, and the file's headers */
    const size_t max_body = vptv_sat_add(vptv_sat_add(r->max_bytes, r->max_bytes), (size_t)1 << 20);
    return vpt_isolate_run(r->path, "OpenVDB", &lim, read_in_child, r, NULL, 0, max_body, nvdb, size);
}

static int load_vdb(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (access(path, R_OK) != 0) return vpt_fail_errno("cannot open '%s'", path);
    const int64_t fsize = vpt_file_size(path);
    if (fsize < 0) return -1;
    Read rd = {.path = path, .max_bytes = vptv_max_bytes(opt ? opt->max_bytes : 0)};
    unsigned char *nvdb;
    size_t nsize;
    if (read_isolated(&rd, (uint64_t)fsize, &nvdb, &nsize)) return -1;
    int rc = vptv_parse_nanovdb(path, nvdb, nsize, opt, out);
    free(nvdb);
    char hex[65];
    if (rc == 0 && (rc = file_sha256(path, hex)) == 0) memcpy(out->sha256, hex, sizeof hex);
    if (rc) {
        free(out->data); /* not vpt_volume_free: formats never call volume.c */
        free(out->albedo);
        memset(out, 0, sizeof *out);
    }
    return rc;
}

int vpt_volume_parse_vdb(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    Read rd = {.path = name, .buf = buf, .size = size, .max_bytes = vptv_max_bytes(max_bytes)};
    unsigned char *nvdb;
    size_t nsize;
    if (read_isolated(&rd, size, &nvdb, &nsize)) return -1;
    const int rc = vpt_volume_parse_nanovdb(name, nvdb, nsize, rd.max_bytes, out);
    free(nvdb);
    return rc;
}

int vpt_volume_vdb_to_nanovdb(const char *vdb, size_t max_bytes, const char *nvdb)
{
    if (access(vdb, R_OK) != 0) return vpt_fail_errno("cannot open '%s'", vdb);
    const int64_t fsize = vpt_file_size(vdb);
    if (fsize < 0) return -1;
    Read rd = {.path = vdb, .max_bytes = vptv_max_bytes(max_bytes), .zip = 1};
    unsigned char *bytes;
    size_t size;
    if (read_isolated(&rd, (uint64_t)fsize, &bytes, &size)) return -1;
    VptVolume check;
    int rc = vpt_volume_parse_nanovdb(vdb, bytes, size, rd.max_bytes, &check);
    free(check.data); /* not vpt_volume_free: formats never call volume.c */
    free(check.albedo);
    if (rc == 0) rc = vpt_write_file_atomic(nvdb, bytes, size);
    free(bytes);
    return rc;
}

const VptVolumeFormat vpt_volume_format_vdb = {"OpenVDB", "vdb", NULL, load_vdb};
