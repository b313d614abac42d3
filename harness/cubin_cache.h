/* A content-addressed on-disk cache of compiled CUBINs (as CuPy's kernel
 * cache), so a search over thousands of variants compiles each one once.
 *
 * Key: SHA-256 over the cache format version, NVRTC's version and build
 * (vpt_nvrtc_build: "... release 13.0, V13.0.88"), the CCCL include
 * directory and its CCCL_VERSION, and everything in the request: program
 * name, source, every in-memory header (name and content), every option and
 * the architecture. Headers NVRTC reads from disk through -I (CCCL, the
 * toolkit) are covered by those versions. The directory's path is part of
 * the key because -lineinfo writes the CCCL headers' paths into the cubin.
 * So a cache filled on one machine (bench --precompile, no GPU needed) is
 * valid on another, and hit there, exactly when both run the same NVRTC
 * build with the same CCCL at the same path ($VPT_CUDA_HOME, $CUDA_HOME or
 * the built-in /usr/local/cuda) for the same sm_XY: the cubins it holds are
 * then the bytes a local compile would produce.
 *
 * Entries live at <dir>/<first 2 hex digits>/<64 hex digits>.cubin and hold
 *   "VPTCUBIN", format version (u32), key (32 bytes), original compile time
 *   (f64), log length (u64) + log, cubin length (u64) + cubin,
 *   SHA-256 of all the preceding bytes
 * (integers little-endian). They are written atomically (VptOutFile), so
 * concurrent threads and processes never see a partial entry; two writers of
 * one key write the same bytes. An entry that fails any check (magic,
 * version, key, lengths, checksum) is reported once on stderr as
 *   "cubin cache: corrupt entry <file> (<reason>), rebuilding",
 * deleted, and rebuilt. Failed compiles are not cached. */
#ifndef VPT_HARNESS_CUBIN_CACHE_H
#define VPT_HARNESS_CUBIN_CACHE_H

#include "harness/nvrtc_compile.h"

#include <stdint.h>

typedef struct VptCubinCache VptCubinCache;

/* Opens (creating it if missing) the cache directory: `dir`, or when NULL
 * $VPT_CACHE_DIR, else $XDG_CACHE_HOME/vptune/cubin, else
 * $HOME/.cache/vptune/cubin. Fails with a message naming the directory when
 * it cannot be created or written. Safe to share between threads. */
VptCubinCache *vpt_cubin_cache_open(const char *dir);
void vpt_cubin_cache_close(VptCubinCache *c);
const char *vpt_cubin_cache_dir(const VptCubinCache *c);

/* Like vpt_nvrtc_compile, through the cache: a hit returns the stored CUBIN
 * and log with from_cache = 1 and seconds = the original compile's time; a
 * miss compiles and stores. c may be NULL (no cache). A cache that cannot be
 * written is reported on stderr once and does not fail the compile. */
int vpt_compile_cached(VptCubinCache *c, const VptCompileRequest *req, VptCompileResult *out);

/* vpt_compile_cached in two halves, for callers that compile elsewhere (the
 * compile pool's worker processes). lookup: 1 with *out filled on a hit
 * (from_cache = 1), 0 on a miss (counted; a corrupt entry is reported,
 * deleted and counted as above), -1 with a message when the key cannot be
 * computed. store: writes the entry of a successful compile; a failure is
 * counted and reported on stderr once, never returned, and leaves the
 * caller's message alone. c must not be NULL. */
int vpt_cubin_cache_lookup(VptCubinCache *c, const VptCompileRequest *req, VptCompileResult *out);
void vpt_cubin_cache_store(VptCubinCache *c, const VptCompileRequest *req, const VptCompileResult *r);

typedef struct {
    uint64_t hits;
    uint64_t misses;        /* compiles run (corrupt entries included) */
    uint64_t corrupt;       /* entries found damaged and rebuilt */
    uint64_t write_errors;  /* entries that could not be stored */
} VptCubinCacheStats;
void vpt_cubin_cache_stats(const VptCubinCache *c, VptCubinCacheStats *s);

/* The key of req as 64 hex digits + NUL. -1 if the CCCL headers are missing. */
int vpt_cubin_cache_key(const VptCompileRequest *req, char hex[65]);
/* Where the entry for that key lives (or would live). */
void vpt_cubin_cache_entry_path(const VptCubinCache *c, const char *hex, char *out, size_t n);

#endif
