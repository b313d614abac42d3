/* The results cache: every evaluation of a tune, in JSON lines, appended and
 * made durable as each one completes, so that an interrupted tune (Ctrl-C,
 * kill -9, a job's time limit) resumes with no measurement lost or repeated.
 *
 * File format (schema vptune.tune/1, rows described in tuner/rows.h): the
 * first line is a header with the provenance (GPU name and UUID, driver,
 * NVRTC version, commit, scene, workload), then one "eval" row per
 * evaluation in completion order. Each row is written with one write, then
 * fflush and fsync, before the evaluation counts as done.
 *
 * Opening an existing file:
 *   - the header must match the current provenance (vpt_tune_provenance_match:
 *     GPU UUID, commit, NVRTC version, scene, workload); otherwise the open
 *     fails with a message naming the field that differs. Rows of another
 *     GPU or commit are never mixed in; the caller may instead start a new
 *     file (VPT_CACHE_FRESH, which keeps the old one as <path>.prev<N>);
 *   - a last line without its newline is the trace of a crash mid-write: if
 *     it is a whole valid row it is kept (and the newline added), otherwise
 *     it is dropped and the file truncated back to the last complete line;
 *     a file that holds no complete header line is started anew;
 *   - any other line that is not a valid row (garbage in the middle, a
 *     second header, a row with an unknown status or a malformed config) is
 *     an error naming the line number: the file is not ours to repair.
 * A config evaluated twice at one fidelity (possible only in a hand-edited
 * file) is looked up as its first row; all rows stay in the file and in
 * vpt_cache_record order.
 *
 * One process at a time: the file is locked (flock) while open. */
#ifndef VPT_TUNER_CACHE_H
#define VPT_TUNER_CACHE_H

#include "tuner/eval.h"

#include <stddef.h>

typedef struct VptCache VptCache;

enum {
    /* fflush without fsync: for simulations and tests, where durability
     * against power loss does not matter (a killed process loses nothing
     * either way: the data is in the kernel). */
    VPT_CACHE_NOSYNC = 1u << 0,
    /* Start a new file; an existing one is renamed to <path>.prev<N> (the
     * first free N from 1), never deleted. */
    VPT_CACHE_FRESH = 1u << 1,
    /* Only read: the file must exist; prov may be NULL (then any header is
     * accepted and vpt_cache_provenance tells which); nothing is written or
     * truncated, appends fail. */
    VPT_CACHE_READONLY = 1u << 2,
};

/* Opens or creates the cache at path for a run of provenance prov. NULL with
 * a message on mismatch, garbage, I/O errors, or a lock held elsewhere. */
VptCache *vpt_cache_open(const char *path, const VptTuneProvenance *prov, unsigned flags);
void vpt_cache_close(VptCache *c);

const VptTuneProvenance *vpt_cache_provenance(const VptCache *c);

/* Rows in file order; pointers stay valid until the next append or close. */
size_t vpt_cache_count(const VptCache *c);
const VptEvalRecord *vpt_cache_record(const VptCache *c, size_t i);
/* The row of (config, fidelity), or NULL. */
const VptEvalRecord *vpt_cache_find(const VptCache *c, const VptConfig *cfg, int fidelity);

/* Appends r (its "time" filled in with now when empty), durably. */
int vpt_cache_append(VptCache *c, const VptEvalRecord *r);

/* What opening did to the file: bytes of an incomplete last line dropped
 * (0 when none), and where VPT_CACHE_FRESH moved an old file ("" if none). */
size_t vpt_cache_dropped_bytes(const VptCache *c);
const char *vpt_cache_moved_to(const VptCache *c);

#endif
