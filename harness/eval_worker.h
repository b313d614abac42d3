/* Evaluations in a worker process: fault isolation for the evaluator.
 *
 * A kernel that faults (an illegal address) poisons the whole process that
 * ran it: with current drivers no new CUDA context can be created in it (see
 * vpt_cu_is_sticky). So the process that runs a search never touches CUDA;
 * it forks a worker that opens the GPU, holds a VptEvaluator
 * (harness/evaluator.h) for one scene and serves requests over a socket.
 * When an evaluation breaks the worker, its config is recorded as a result
 * and a fresh worker takes over:
 *
 *   - a sticky CUDA error, or a kernel that would not stop: the worker
 *     itself reports the result (status runtime or timeout, with the CUDA
 *     error) and exits;
 *   - the worker dies (a signal, an exit) in the middle of an evaluation:
 *     status runtime, "worker process died: killed by signal 11
 *     (Segmentation fault) during render; last CUDA error: ...";
 *   - the worker gives no sign of life for longer than its phase allows
 *     (hard_timeout_s while it is on the GPU, compile_timeout_s while it
 *     waits for NVRTC): it is killed (SIGKILL), status timeout.
 *
 * A worker that leaves after a broken context exits at once (_exit): a
 * compile it was running in the background is lost (it is compiled again
 * when needed).
 *
 * In every case the child is reaped (no zombies) and vpt_eval_worker_run
 * returns 0 with that result; the next request starts a fresh worker first
 * (it re-opens the GPU, re-uploads the scene, re-renders the reference and
 * re-queues the configs still waiting to be compiled; the cubin cache makes
 * that cheap). A request that reaches a worker which died while idle (before
 * it accepted the request) is sent again to a fresh one: only the config a
 * worker was evaluating is ever blamed. Requests fail (-1 / NULL) when a
 * fresh worker cannot be started, with its message.
 *
 * The worker's stderr stays the parent's (warnings show); its stdout is sent
 * to stderr, so a program's stdout holds only what the parent prints. The
 * protocol uses only the socket. The parent never changes its own signal
 * dispositions: writes use MSG_NOSIGNAL, so a dead worker means EPIPE, not
 * SIGPIPE. The worker is killed (PR_SET_PDEATHSIG) when the thread that
 * started it exits: use a worker from the thread that started it.
 *
 * Lifecycle: vpt_eval_worker_start, any requests, vpt_eval_worker_stop. The
 * parent must not have loaded the CUDA driver itself (a forked child cannot
 * use a parent's CUDA state): start refuses then. Nor should other threads
 * of the parent be inside NVRTC or hold locks while a worker starts (fork
 * copies only the calling thread). The scene stays owned by
 * the caller and must outlive the worker's use of it (the worker inherits it
 * copy-on-write at each start). */
#ifndef VPT_HARNESS_EVAL_WORKER_H
#define VPT_HARNESS_EVAL_WORKER_H

#include "codegen/config.h"
#include "codegen/kernel_source.h"
#include "harness/cuda_driver.h"
#include "harness/evaluator.h"
#include "harness/measure.h"
#include "harness/provenance.h"
#include "harness/wire.h"
#include "scenes/scene.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct VptEvalWorker VptEvalWorker;

typedef struct {
    /* The worker's evaluator. cache_dir is copied; progress and
     * recover_in_process are the worker's own and ignored here. */
    VptEvaluatorOptions eval;
    const VptScene *scene;       /* NULL: GPU only until vpt_eval_worker_set_scene */
    VptRenderSettings settings;
    /* "" (the default): the child opens GPU eval.device of the parent's
     * view. Otherwise the child sets CUDA_VISIBLE_DEVICES to this value
     * before it loads the driver and opens ordinal 0 of that view (eval.device
     * is ignored): the worker, and every process it starts, sees only that GPU
     * (harness/gpu_list.h: vpt_gpu_visible_value makes the value). */
    char visible_devices[128];
    /* Longest silence while the worker is on the GPU (every phase but
     * compile; each is bounded by the evaluator's own watchdog):
     * 0 means eval.timeout_s (60 s when 0) + 30 s. Opening the GPU at a
     * start is given at least 120 s. */
    double hard_timeout_s;
    /* Longest silence while the worker waits for a compile. 0: 1800 s. */
    double compile_timeout_s;
    /* Test hook: the child opens no GPU and serves a trivial handler (see
     * vpt_eval_worker_test), so tests without a GPU can exercise the
     * process handling. Never set outside tests. */
    int test_mode;
} VptWorkerSpec;

/* Defaults: vpt_evaluator_options_default(), no scene, the scene's workload,
 * hard and compile timeouts 0 (derived as above). */
VptWorkerSpec vpt_worker_spec_default(void);

/* Starts a worker and waits until it has opened the GPU and, with a scene,
 * uploaded it and rendered the reference. NULL with a message on failure
 * (vpt_errmsg: the worker's own, e.g. "no CUDA driver: cannot load
 * libcuda.so.1 (...)"); *no_gpu (may be NULL) is then 1 when the GPU could
 * not be opened (a CLI exits VPT_EXIT_NO_GPU), else 0. The failed child is
 * reaped before returning. */
VptEvalWorker *vpt_eval_worker_start(const VptWorkerSpec *spec, int *no_gpu);

/* Stops the worker (asks it to exit, kills it if it does not within 60 s),
 * reaps it and frees w. NULL is fine. */
void vpt_eval_worker_stop(VptEvalWorker *w);

/* What the worker reported when it (last) started. The GPU's context handle
 * is the child's: do not use it. params: NULL without a scene. */
const VptProvenance *vpt_eval_worker_provenance(const VptEvalWorker *w);
const VptGpu *vpt_eval_worker_gpu(const VptEvalWorker *w);
const VptParams *vpt_eval_worker_params(const VptEvalWorker *w);
/* The current child's pid (0 when none runs), and how many times a child
 * was started after the first (restarts after failures, scene changes). */
pid_t vpt_eval_worker_pid(const VptEvalWorker *w);
int vpt_eval_worker_restarts(const VptEvalWorker *w);

/* Replaces the worker with one for scene s (a new child: the scene is
 * inherited at fork). The configs queued by prefetch stay queued. -1 with
 * the message when the new worker cannot start (requests then try again). */
int vpt_eval_worker_set_scene(VptEvalWorker *w, const VptScene *s, const VptRenderSettings *r);

/* Queues configs to compile ahead (order kept), as vpt_evaluator_prefetch.
 * The parent remembers the queue until each config is run, and hands what
 * is left to every fresh worker. */
void vpt_eval_worker_prefetch(VptEvalWorker *w, const VptConfig *configs, int n);

/* Evaluates c; the outcome (status ok or why not) is in *res, also when the
 * worker died or hung on it (see the top). -1 only when no worker can be
 * started, or without a scene. */
int vpt_eval_worker_run(VptEvalWorker *w, const VptConfig *c, VptEvalResult *res);
/* The same with a fault injected into this one evaluation (tests of the
 * failure handling; see vpt_codegen_inject_fault). */
int vpt_eval_worker_run_fault(VptEvalWorker *w, const VptConfig *c, VptFault fault, VptEvalResult *res);

/* vpt_evaluator_render in the worker: the mean image (3 floats per pixel,
 * caller frees) and *res; NULL with a message when the config failed (*res
 * says why) or the worker was lost (restarted on the next request). */
float *vpt_eval_worker_render(VptEvalWorker *w, const VptConfig *c, VptEvalResult *res);

/* vpt_evaluator_roofline in the worker. */
int vpt_eval_worker_roofline(VptEvalWorker *w, int coherent, VptDensityFormat density, int majorant,
                             VptTimingStats *ms, double *gsteps_per_s, unsigned long long *steps);

/* A result row (vpt_eval_result_row) with the worker's provenance, params,
 * settings and scene. NULL without a scene or out of memory. */
json_t *vpt_eval_worker_result_json(const VptEvalWorker *w, const VptEvalResult *r);

/* ---- test hook: only for workers started with spec->test_mode ----
 * In test mode the child has no evaluator. RUN with fault
 * VPT_FAULT_ILLEGAL_ADDRESS kills the child with SIGSEGV after it accepted
 * the request (as a driver crash would), VPT_FAULT_HANG makes it report the
 * render phase and then never answer, VPT_WORKER_TEST_QUIT makes it exit
 * (status 3) on receipt, before accepting; any other RUN is answered with
 * status runtime and the reason "test-mode worker <pid>: not evaluated".
 * The requests below exist only in test mode. */
#define VPT_WORKER_TEST_QUIT ((VptFault)100)
typedef enum {
    VPT_WORKER_TEST_ECHO,    /* out: the child's pid and how many configs it was asked to prefetch */
    VPT_WORKER_TEST_GARBAGE, /* the child answers with bytes that are no message */
    VPT_WORKER_TEST_EXIT     /* the child exits with status arg on receipt */
} VptWorkerTestOp;
typedef struct {
    int pid;
    int nprefetched;
} VptWorkerTestEcho;
/* 0 and *out for ECHO; -1 with the message when the worker was lost (it is
 * then restarted by the next request). */
int vpt_eval_worker_test(VptEvalWorker *w, VptWorkerTestOp op, int arg, VptWorkerTestEcho *out);

/* The wire format (vpt_wire_send, vpt_wire_recv) is harness/wire.h. */

#endif
