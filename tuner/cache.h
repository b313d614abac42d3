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
 *   - two rows of one config and fidelity (one key, vpt_cache_key) that are
 *     different measurements (vpt_rows_same_measurement: status, reason,
 *     cost or a metric differ) are refused, the message naming both as
 *     file:line: which one is right cannot be told from the file, and the
 *     tune's winner would depend on which came first. A row repeated
 *     identically is accepted and looked up as its first; all rows stay in
 *     the file and in vpt_cache_record order. An append that would write
 *     such a conflict fails the same way, writing nothing.
 *
 * Resuming retraces the interrupted run (docs/tuner-record.md): the rows a
 * writable open found are those of an earlier run on this cache, in the
 * order that run took them. While the run now on the cache asks for them
 * in that same order (vpt_cache_lookup), it is that run resumed, and each
 * row becomes visible to vpt_cache_find only when reached, as it was when
 * the interrupted run was at that point: so a search filtering its hints
 * through vpt_cache_find announces what it announced then, and a replay
 * re-simulates its clock exactly (vpt_replay_retrace). The first lookup out
 * of that order (a row further on, or a config with no row while rows are
 * still ahead) ends the retrace: every row is visible from then on, as in a
 * cache of another run. A read-only open has no retrace.
 *
 * One process at a time: the file is locked (flock) while open. */
#ifndef VPT_TUNER_CACHE_H
#define VPT_TUNER_CACHE_H

#include "tuner/eval.h"

#include <stddef.h>
#include <stdint.h>

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

/* The key of (config, fidelity): the config's fields packed (60 bits: the
 * paths order the highest, so keys of configs from before it are
 * unchanged), then the fidelity; unique per (config, fidelity). The pool's
 * jobs and the replay's index use it too. */
uint64_t vpt_cache_key(const VptConfig *cfg, int fidelity);

/* Rows in file order; pointers stay valid until the next append or close. */
size_t vpt_cache_count(const VptCache *c);
const VptEvalRecord *vpt_cache_record(const VptCache *c, size_t i);
/* The row of (config, fidelity) visible to this run (see the retrace
 * above), or NULL. */
const VptEvalRecord *vpt_cache_find(const VptCache *c, const VptConfig *cfg, int fidelity);
/* 1 when the file holds a row of (config, fidelity), reached or not. */
int vpt_cache_has(const VptCache *c, const VptConfig *cfg, int fidelity);

/* The evaluation pool's lookup (tuner/pool.h): the row of (config,
 * fidelity) into *out, whether reached or not, and the retrace moved on:
 *   VPT_CACHE_MISS       no row (*out untouched);
 *   VPT_CACHE_RETRACED   the interrupted run's next row: this run's own
 *                        evaluation, made before the interruption;
 *   VPT_CACHE_HIT        a row this run had seen, or one of another run. */
typedef enum { VPT_CACHE_MISS, VPT_CACHE_HIT, VPT_CACHE_RETRACED } VptCacheHit;
VptCacheHit vpt_cache_lookup(VptCache *c, const VptConfig *cfg, int fidelity, VptEvalRecord *out);

/* Appends record r, whose row is `line` (vpt_rows_record_line(r): the
 * caller encodes, the cache only writes and indexes), durably. Fails,
 * writing nothing, on a conflict with a row of the file (above). */
int vpt_cache_append(VptCache *c, const VptEvalRecord *r, const char *line);

/* What opening did to the file: bytes of an incomplete last line dropped
 * (0 when none), and where VPT_CACHE_FRESH moved an old file ("" if none). */
size_t vpt_cache_dropped_bytes(const VptCache *c);
const char *vpt_cache_moved_to(const VptCache *c);

#endif
