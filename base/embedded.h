/* Source files compiled into the programs (scripts/embed.sh): the kernel
 * template and the physics header, so NVRTC needs no source tree at run time. */
#ifndef VPT_BASE_EMBEDDED_H
#define VPT_BASE_EMBEDDED_H

#include <stddef.h>

typedef struct {
    const char *path;   /* repository-relative, e.g. "kernels.cu.in" */
    const char *data;   /* NUL-terminated */
    size_t size;        /* bytes, without the NUL */
} VptEmbeddedFile;

/* Terminated by an entry whose path is NULL. */
extern const VptEmbeddedFile vpt_embedded_files[];

/* The git commit the programs were built from ("<sha>[-dirty]"), generated
 * by the Makefile; results carry it as provenance. */
extern const char vpt_git_commit[];

/* The embedded file with this path, or NULL. */
const VptEmbeddedFile *vpt_embedded_find(const char *path);

#endif
