/* OpenVDB volumes through the OpenVDB shim: see volume_vdb.h.
 *
 * The shim (bin/libvptune-openvdb.so, built from volume_vdb_openvdb.cc) is
 * loaded with dlopen on first use (vpt_plugin_load: $VPT_OPENVDB_SHIM when
 * set, else beside the running program, else ../lib/vptune/ relative to it,
 * where `make install` puts it). Loading it late keeps OpenVDB, TBB, Blosc
 * and Imath out of the programs, which must run on GPU machines without
 * them; there only a .vdb volume fails, saying what to install and how to
 * convert the file to .nvdb on a machine that has them. */
#include "scenes/formats/volume_vdb.h"

#include "base/error.h"
#include "base/file.h"
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

static int need_shim(const char *path)
{
    if (vpt_plugin_load(&shim) == 0) return 0;
    return vpt_fail("%s: OpenVDB .vdb files are read through OpenVDB, and its shim could not be loaded (%s). On "
                    "Debian or Ubuntu: apt-get install libopenvdb10.0 (to run) or libopenvdb-dev libnanovdb-dev (to "
                    "build), then make; or, on a machine that has them, convert the file to NanoVDB, which loads "
                    "anywhere: render --volume FILE.vdb --export-nvdb FILE.nvdb",
                    path, shim.error);
}

const char *vpt_volume_vdb_shim_path(void)
{
    return vpt_plugin_load(&shim) == 0 ? shim.path : NULL;
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

static int load_vdb(const char *path, const VptVolumeLoadOptions *opt, VptVolume *out)
{
    memset(out, 0, sizeof *out);
    if (access(path, R_OK) != 0) return vpt_fail_errno("cannot open '%s'", path);
    if (need_shim(path)) return -1;
    VptVdbResult r;
    if (shim_read(path, vptv_max_bytes(opt ? opt->max_bytes : 0), 0, &r)) return vpt_fail("%s", r.error);
    int rc = vptv_parse_nanovdb(path, r.nvdb, r.size, opt, out);
    free(r.nvdb);
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
    if (need_shim(name)) return -1;
    max_bytes = vptv_max_bytes(max_bytes);
    VptVdbResult r;
    if (shim_read_memory(name, buf, size, max_bytes, &r)) return vpt_fail("%s", r.error);
    const int rc = vpt_volume_parse_nanovdb(name, r.nvdb, r.size, max_bytes, out);
    free(r.nvdb);
    return rc;
}

int vpt_volume_vdb_to_nanovdb(const char *vdb, size_t max_bytes, const char *nvdb)
{
    if (access(vdb, R_OK) != 0) return vpt_fail_errno("cannot open '%s'", vdb);
    if (need_shim(vdb)) return -1;
    max_bytes = vptv_max_bytes(max_bytes);
    VptVdbResult r;
    if (shim_read(vdb, max_bytes, 1, &r)) return vpt_fail("%s", r.error);
    VptVolume check;
    int rc = vpt_volume_parse_nanovdb(vdb, r.nvdb, r.size, max_bytes, &check);
    free(check.data); /* not vpt_volume_free: formats never call volume.c */
    free(check.albedo);
    if (rc == 0) rc = vpt_write_file_atomic(nvdb, r.nvdb, r.size);
    free(r.nvdb);
    return rc;
}

const VptVolumeFormat vpt_volume_format_vdb = {"OpenVDB", "vdb", NULL, load_vdb};
