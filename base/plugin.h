/* vptune's own shared libraries that a program loads only when a feature
 * asks for them: the DICOM reader's GDCM shim (scenes/volume_dicom.c) and
 * the MPI shim (tuner/mpi.c). Loading them late keeps their dependencies
 * (GDCM, OpenMPI) out of the programs, which must run on GPU machines that
 * have neither: there, only the feature fails, saying what to install. */
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

#endif
