/* Measurement results as JSON lines: one JSON object per line, appended.
 *
 * A results file only ever grows by whole lines: each row is written with one
 * write() under an exclusive flock(), then fsync()ed, so concurrent writers
 * (threads or processes) never interleave, and a crash mid-write leaves at
 * most one truncated last line. That line has no final newline; it is cut
 * off (with a note on stderr) before the next append and skipped by the
 * reader, so the file stays resumable. */
#ifndef VPT_HARNESS_RESULTS_H
#define VPT_HARNESS_RESULTS_H

#include "scenes/scene.h"

#include <jansson.h>
#include <stddef.h>

/* Outcome of one measured variant (Kernel Tuner / KTT style). */
typedef enum {
    VPT_STATUS_OK,             /* measured, and the image passed the error gate */
    VPT_STATUS_COMPILE,        /* NVRTC rejected it */
    VPT_STATUS_LAUNCH_LIMITS,  /* compiled, but cannot launch (registers x block, shared memory) */
    VPT_STATUS_RUNTIME,        /* a CUDA error while running */
    VPT_STATUS_INVALID_OUTPUT, /* ran, but the image failed the error gate */
    VPT_STATUS_TIMEOUT         /* exceeded its time limit */
} VptStatus;
#define VPT_STATUS_COUNT 6

/* "ok", "compile", "launch_limits", "runtime", "invalid_output", "timeout";
 * "unknown" for a value outside the enum. */
const char *vpt_status_name(VptStatus s);
/* The inverse; -1 with a message listing the names for anything else. */
int vpt_status_parse(const char *name, VptStatus *out);

typedef struct VptResultsFile VptResultsFile;

/* Opens path for appending, creating it and its parent directories. A
 * truncated last line is cut off here and before every append. NULL with a
 * message naming the path on failure. */
VptResultsFile *vpt_results_open(const char *path);
/* Appends row as one compact line, then fsyncs. Does not take the caller's
 * reference. -1 with a message (row not an object, disk full, ...). */
int vpt_results_append(VptResultsFile *f, json_t *row);
void vpt_results_close(VptResultsFile *f);
const char *vpt_results_path(const VptResultsFile *f);

/* Reads every complete line of a results file in order and calls
 * fn(row, line_number, ctx) with a borrowed object; fn returns 0 to go on, or
 * non-zero to stop (vpt_results_load then returns that value). A missing file
 * has no rows (returns 0). A final line without a newline (an interrupted
 * append) is skipped; a complete line that is not a JSON object is an error
 * naming path:line. Blank lines are skipped. */
typedef int (*VptResultsRowFn)(json_t *row, size_t line, void *ctx);
int vpt_results_load(const char *path, VptResultsRowFn fn, void *ctx);

/* A row's "volume": {"dims": [x, y, z], "format": the source data's voxel
 * type, "bytes": the grid in that type, "source": the built-in scene's name
 * or the file as given, and for files "sha256" (plus "data_sha256" for a
 * separate data file, "resample" for a resampled grid)}, so that rows of
 * grids of different sizes or content can never be taken for each other.
 * Readers accept rows without it (older rows). NULL only when out of
 * memory. */
json_t *vpt_scene_volume_json(const VptScene *s);

#endif
