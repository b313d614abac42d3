#include "base/embedded.h"

#include <string.h>

const VptEmbeddedFile *vpt_embedded_find(const char *path)
{
    for (const VptEmbeddedFile *f = vpt_embedded_files; f->path; f++)
        if (strcmp(f->path, path) == 0) return f;
    return NULL;
}
