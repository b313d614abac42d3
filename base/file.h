/* Reading whole files with a size cap, and writing outputs atomically.
 *
 * Outputs (images, results, caches) are written through VptOutFile: data goes
 * to "<path>.tmp.<pid>.<n>" in the same directory, and only vpt_outfile_commit
 * (flush, fsync, rename) makes it appear under its name. A failure or a crash
 * before commit never leaves a partial file posing as a whole one. */
#ifndef VPT_BASE_FILE_H
#define VPT_BASE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Reads the whole file into a NUL-terminated buffer (caller frees). Refuses
 * files larger than max_bytes with a message naming the file. */
int vpt_read_file(const char *path, size_t max_bytes, char **data, size_t *size);

/* Size of a regular file, or -1 with a message. */
int64_t vpt_file_size(const char *path);

typedef struct VptOutFile VptOutFile;

/* Opens a temporary sibling of `path` for writing ("wb"). */
VptOutFile *vpt_outfile_open(const char *path);
FILE *vpt_outfile_stream(VptOutFile *f);
/* Flushes, fsyncs and renames onto the final path; frees f either way.
 * Reports write errors (a full disk among them) with the path. */
int vpt_outfile_commit(VptOutFile *f);
/* Removes the temporary file and frees f. Safe with NULL. */
void vpt_outfile_abort(VptOutFile *f);

/* Writes size bytes to path atomically (open, write, commit). */
int vpt_write_file_atomic(const char *path, const void *data, size_t size);

/* mkdir -p; existing directories are fine. */
int vpt_mkdirs(const char *path);

/* Directory part of path ("." when none) into out. */
void vpt_dirname(const char *path, char *out, size_t outsz);

#endif
