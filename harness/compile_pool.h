/* A pool compiling kernel variants in the background, so the tuner can
 * compile the next candidates while the GPU measures the current one.
 *
 *   VptCompilePool *p = vpt_compile_pool_create(cache, 0);
 *   int t = vpt_compile_pool_submit(p, &req);     // returns at once
 *   ...                                           // GPU work
 *   if (vpt_compile_pool_wait(p, t, &res)) report(vpt_errmsg());
 *
 * Compiles run in worker processes. NVRTC serializes most of a compile
 * within one process, so threads of one process compile one after another
 * while processes compile side by side (docs/decisions/
 * compile-worker-processes.md). So the pool has
 * `jobs` threads that take requests in submission order; each looks its
 * request up in the cubin cache itself (a hit never leaves this process)
 * and on a miss hands it to its own worker process, which runs NVRTC and
 * answers with the status, the NVRTC time it measured, the log and the
 * cubin. The thread stores the cache entry (atomically: the same bytes
 * vpt_compile_cached would write) and hands the result over. A thread starts
 * its worker when it first meets a miss, so there are never more workers
 * than compiles that were waiting at once, and the worker serves it until
 * the pool is destroyed. With jobs == 1 the one thread compiles in this
 * process, through vpt_compile_cached, as the pool always did: for
 * debugging (gdb and valgrind then see NVRTC).
 *
 * The worker processes' contract:
 *   - A worker is a fresh process: posix_spawn and exec of this very program
 *     (/proc/self/exe), which a constructor in compile_pool.c diverts, before
 *     main, into the compile loop (VPT_COMPILE_WORKER in its environment;
 *     never set it yourself). It runs NVRTC only: no CUDA driver call, no
 *     code of the parent, no inherited state. So the pool may be created
 *     and used in a process that has initialized CUDA (the evaluator does,
 *     inside the eval_worker.h worker), and by any thread: nothing ever runs
 *     in a forked copy of a CUDA process.
 *   - It gets this process's environment as it was at
 *     vpt_compile_pool_create ($VPT_CUDA_HOME, $CUDA_HOME: the CCCL the
 *     cache key names) and holds only stdin (/dev/null), stdout (sent to
 *     stderr: its warnings show, the parent's stdout stays clean), stderr
 *     and its socket. It runs in a process group of its own: a terminal's
 *     Ctrl-C reaches the parent, which decides, and never turns a compile
 *     into a false failure. It is killed when the thread that started it
 *     exits (PR_SET_PDEATHSIG): a parent that dies, even by SIGKILL, leaves
 *     no compiler running.
 *   - A worker that dies during a compile (an NVRTC crash, the OOM killer, a
 *     signal) fails that compile, with a message such as
 *       "NVRTC compile of vptune_streamingSK.cu failed: compile worker
 *        process 4242 died: killed by signal 11 (Segmentation fault)"
 *     and an empty log; the evaluator records it as status compile. One
 *     that gives no answer within the time limit (vpt_compile_pool_set_
 *     timeout) is killed (SIGKILL), the same. Either way it is reaped (no
 *     zombie), and the next compile starts a fresh one. Only the compile a
 *     worker had been handed is blamed: a worker found dead while idle is
 *     replaced and the request sent again.
 *   - When no worker can be started (no /proc, exec refused, the program's
 *     file replaced by an incompatible build), the pool says so once on
 *     stderr and compiles in this process, as with jobs == 1.
 *
 * Test hook: VPT_COMPILE_INJECT=<fault>[@<text>] in the environment at
 * vpt_compile_pool_create makes the pool's workers misbehave on each
 * request whose source contains <text> (every request without @): abort
 * (SIGABRT), segv (SIGSEGV), kill (SIGKILL, as the OOM killer), exit
 * (status 3, no answer), hang (no answer, ever), garbage (bytes that are no
 * message). Only worker processes read it; it never affects a jobs == 1
 * pool. E.g. VPT_COMPILE_INJECT=segv@regen=warp, bench ... records every
 * regen=warp config as a compile failure (a kernel's source begins with
 * "// vptune kernel: <config>").
 *
 * Requests run in submission order. Submitting, polling and waiting are safe
 * from any thread, also while compiles run. */
#ifndef VPT_HARNESS_COMPILE_POOL_H
#define VPT_HARNESS_COMPILE_POOL_H

#include "harness/cubin_cache.h"

#include <sys/types.h>

typedef struct VptCompilePool VptCompilePool;

/* The pool size that jobs == 0 means: $VPT_COMPILE_JOBS when set (1..256;
 * 1 = compile in this process), else the online cores minus one (the
 * process that drives the GPU keeps one), at least 1. A bad
 * VPT_COMPILE_JOBS is reported on stderr once and ignored. */
int vpt_compile_pool_default_jobs(void);

/* cache may be NULL (no cache); it must outlive the pool. jobs: compiles in
 * flight at once; 0 for vpt_compile_pool_default_jobs(); 1 compiles in this
 * process; more than 1 in that many worker processes (at most 256). NULL
 * with a message when the threads cannot be started. */
VptCompilePool *vpt_compile_pool_create(VptCubinCache *cache, int jobs);

/* The longest a worker process may take over one compile before it is
 * killed and the compile fails; 0 for no limit. Default
 * VPT_COMPILE_POOL_TIMEOUT_S (under eval_worker.h's 1800 s compile
 * watchdog, so the compile, not the whole evaluation worker, is blamed).
 * Applies to compiles handed over afterwards; a jobs == 1 pool cannot stop
 * a compile. */
#define VPT_COMPILE_POOL_TIMEOUT_S 1500.0
void vpt_compile_pool_set_timeout(VptCompilePool *p, double seconds);

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

/* Compiles in flight at once (the pool's threads). */
int vpt_compile_pool_threads(const VptCompilePool *p);
/* 1 when compiles run in worker processes, 0 in this process (jobs == 1,
 * or workers could not be started). */
int vpt_compile_pool_uses_processes(const VptCompilePool *p);
/* Worker processes started so far (replacements included), and the pids
 * of those running now (up to max into pids; returns how many run). */
int vpt_compile_pool_workers_started(const VptCompilePool *p);
int vpt_compile_pool_worker_pids(VptCompilePool *p, pid_t *pids, int max);

/* Tests only: the program the workers run instead of this one (a path to
 * exec), before the first compile. */
void vpt_compile_pool_set_program(VptCompilePool *p, const char *path);

/* Drops queued compiles that have not started; stops the running ones (a
 * worker process is killed; a jobs == 1 pool waits for its compile); stops
 * and reaps every worker, joins the threads, closes every descriptor and
 * frees every result nobody collected. */
void vpt_compile_pool_destroy(VptCompilePool *p);

#endif
