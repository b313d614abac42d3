/* OpenVDB volumes: a .vdb file's float grid ("density", else the first float
 * grid) and, if present, its Vec3f grid "albedo", read through the OpenVDB
 * shim (scenes/formats/volume_vdb_shim.h), converted to NanoVDB by NanoVDB's own
 * converter and loaded by the .nvdb parser: validation, densification,
 * voxel size and origin are the .nvdb path's (scenes/formats/volume_nanovdb.c).
 * vpt_volume_load dispatches here for a path ending in .vdb (any case).
 * OpenVDB runs behind the fault boundary (base/isolate.h): its crashes and
 * allocations beyond VPT_PARSER_MEMORY are errors naming the file
 * (docs/input-safety.md). */
#ifndef VPT_SCENES_VOLUME_VDB_H
#define VPT_SCENES_VOLUME_VDB_H

#include "scenes/volume.h"

/* The shim's path as found (NULL: not loaded yet or not found), for tests. */
const char *vpt_volume_vdb_shim_path(void);

/* One .vdb file held in memory, through the shim (for the fuzzer). */
int vpt_volume_parse_vdb(const char *name, const unsigned char *buf, size_t size, size_t max_bytes, VptVolume *out);

/* Writes the NanoVDB file the shim makes of the .vdb file at vdb (the grids
 * it loads, ZIP-compressed) to nvdb, atomically: on a machine with OpenVDB,
 * this converts a file for machines without it (render --export-nvdb).
 * The bytes are checked by the .nvdb parser before they are written.
 * max_bytes 0: the default cap. */
int vpt_volume_vdb_to_nanovdb(const char *vdb, size_t max_bytes, const char *nvdb);

#endif
