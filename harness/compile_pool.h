/* A pool of threads compiling kernel variants in the background, so the
 * tuner can compile the next candidates while the GPU measures the current
 * one.
 *
 *   VptCompilePool *p = vpt_compile_pool_create(cache, 0);
 *   int t = vpt_compile_pool_submit(p, &req);     // returns at once
 *   ...                                           // GPU work
 *   if (vpt_compile_pool_wait(p, t, &res)) report(vpt_errmsg());
 *
 * Requests run in submission order. Submitting, polling and waiting are safe
 * from any thread, also while compiles run. */
#ifndef VPT_HARNESS_COMPILE_POOL_H
#define VPT_HARNESS_COMPILE_POOL_H

#include "harness/cubin_cache.h"

typedef struct VptCompilePool VptCompilePool;

/* cache may be NULL (no cache); it must outlive the pool. nthreads 0: one
 * per online core. NULL with a message when threads cannot be started. */
VptCompilePool *vpt_compile_pool_create(VptCubinCache *cache, int nthreads);

/* Queues a deep copy of req (the caller's strings may go away at once).
 * Returns a ticket >= 0, or -1 with a message (out of memory, pool shutting
 * down). */
int vpt_compile_pool_submit(VptCompilePool *p, const VptCompileRequest *req);

/* 1 when the ticket's compile has finished, 0 while queued or running, -1
 * for an unknown or already collected ticket. Never blocks. */
int vpt_compile_pool_done(VptCompilePool *p, int ticket);

/* Blocks until the ticket's compile finishes and hands its result to *out
 * (the caller frees it with vpt_compile_result_free). Returns the compile's
 * return value; on failure the compile's message becomes this thread's
 * vpt_errmsg(). Each ticket is collected once; a second wait is an error. */
int vpt_compile_pool_wait(VptCompilePool *p, int ticket, VptCompileResult *out);

/* Threads in the pool. */
int vpt_compile_pool_threads(const VptCompilePool *p);

/* Drops queued compiles that have not started, waits for the running ones,
 * joins the threads and frees every result nobody collected. */
void vpt_compile_pool_destroy(VptCompilePool *p);

#endif
