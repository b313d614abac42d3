/* vptune's own shared libraries that a program loads only when a feature
 * asks for them: the DICOM reader's GDCM shim (scenes/formats/volume_dicom.c), the
 * OpenVDB reader's shim (scenes/formats/volume_vdb.c) and the MPI shim
 * (tuner/mpi.c). Loading them late keeps their dependencies (GDCM, OpenVDB,
 * OpenMPI) out of the programs, which must run on GPU machines that have
 * none of them: there, only the feature fails, saying what to install. */
#ifndef VPT_BASE_PLUGIN_H
#define VPT_BASE_PLUGIN_H

#include <stddef.h>

/* Opens the library `name` with dlopen(flags): from $env_var when that is
 * set and not empty, else beside the running program (/proc/self/exe),
 * else from ../lib/vptune/ relative to it (where `make install` puts it).
 * Returns the handle, with the path it opened in path[0..path_size); or
 * NULL with every reason (each path tried and dlerror's words, or "<name>
 * is not beside the program nor in ../lib/vptune") in err[0..err_size). */
void *vpt_plugin_open(const char *name, const char *env_var, int flags, char *path, size_t path_size, char *err,
                      size_t err_size);

/* A plugin whose version is one function and whose interface is a few
 * functions (the volume readers' shims). Its user defines one VptPlugin
 * (static, the first five fields set, the rest zero) and calls
 * vpt_plugin_load before each use: the first call opens `file` as
 * vpt_plugin_open does (RTLD_NOW | RTLD_LOCAL; $env first), checks its
 * version (abi_symbol, int (void), must return abi: a stale install is
 * refused) and looks up `symbols` into fn[]; later calls return the first
 * one's answer. 0 when every function is there, else -1 with the reasons
 * (dlerror's words included) in error. Thread-safe. */
#define VPT_PLUGIN_MAX_FNS 4
typedef struct {
    const char *file, *env, *abi_symbol;
    int abi;
    const char *symbols[VPT_PLUGIN_MAX_FNS + 1]; /* NULL-terminated */
    void (*fn[VPT_PLUGIN_MAX_FNS])(void);        /* cast to their types by the user */
    int state;                                   /* 0 not tried, 1 loaded, -1 failed */
    char path[4096];                             /* where it was opened */
    char error[8192];                            /* why not */
} VptPlugin;

int vpt_plugin_load(VptPlugin *p);

#endif
