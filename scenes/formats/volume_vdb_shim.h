/* The C interface of the OpenVDB shim (scenes/formats/volume_vdb_openvdb.cc), a shared
 * library of its own (bin/libvptune-openvdb.so) that scenes/formats/volume_vdb.c
 * loads with dlopen the first time a .vdb file is asked for. Why a separate
 * library: Debian ships OpenVDB as a shared library only (with TBB, Blosc
 * and Imath), and the programs must keep running on GPU machines that have
 * none of them: there, only .vdb loading fails, with a message saying what
 * to install and how to convert the file to .nvdb elsewhere.
 *
 * The shim does no validation of its own beyond OpenVDB's reading and the
 * size checks below: it converts the grids with NanoVDB's own converter
 * (nanovdb::openToNanoVDB) and writes them as a NanoVDB file in memory
 * (nanovdb::io::writeGrids), which the .nvdb parser
 * (vpt_volume_parse_nanovdb) then checks and reads like any .nvdb file: one
 * path from the NanoVDB bytes on.
 *
 * Which grids: the float grid named "density", else the file's first float
 * grid; and, when the file has one, the Vec3f grid named "albedo" (the
 * per-voxel albedo, README "Sparse volumes"). Other grids are not read.
 *
 * Both entries return 0 and fill out->nvdb (malloc'd; the caller frees it
 * with free()) and out->size, or -1 with a message naming the file in
 * out->error (out->nvdb NULL). max_bytes bounds the work before any tree is
 * read: the densified box of the chosen grid (4 bytes a voxel, from the
 * file's metadata) and each chosen tree's size in memory must fit in it. */
#ifndef VPT_SCENES_VOLUME_VDB_SHIM_H
#define VPT_SCENES_VOLUME_VDB_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the functions or the struct change; the loader refuses a shim
 * of another version (a stale install). */
#define VPT_VDB_SHIM_ABI 1

typedef struct {
    unsigned char *nvdb;     /* a NanoVDB file's bytes (nanovdb::io) */
    size_t size;
    char error[1024];
} VptVdbResult;

int vpt_vdb_shim_abi(void);

/* A .vdb file at path; zip: the NanoVDB file's grids ZIP-compressed (codec
 * ZIP, for files written to disk), else uncompressed (to be parsed at once). */
int vpt_vdb_read(const char *path, size_t max_bytes, int zip, VptVdbResult *out);

/* A .vdb file held in memory (for the fuzzer); name starts messages. */
int vpt_vdb_read_memory(const char *name, const unsigned char *buf, size_t size, size_t max_bytes,
                            VptVdbResult *out);

#ifdef __cplusplus
}
#endif

#endif
