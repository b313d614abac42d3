/* Evaluation lanes: several evaluations side by side in one process.
 *
 * A lane is one evaluator (one GPU's worker processes, harness/eval_worker.h,
 * or one replay of a recorded run, tuner/eval.h) driven by a thread of its
 * own. The lane's thread opens the evaluator itself and is the only thread
 * that uses it: an evaluation worker is killed when the thread that forked
 * it exits (PR_SET_PDEATHSIG), and it is restarted, after a kernel killed
 * it, from the thread that notices. The caller's thread never waits on one
 * lane: it hands lanes jobs and collects events (a job done, a lane lost, a
 * call returned) from one queue, so that it can keep deciding what runs next
 * (tuner/pool.h) while every GPU measures.
 *
 * A lane takes one job at a time (the caller tracks which lanes are idle);
 * prefetch lists and calls wait in its mailbox and run before its next job.
 * A lane whose evaluator fails (returns -1: no worker can be started, the
 * GPU was lost, a replay lacks the config) is lost: it reports LOST with the
 * message and its job, closes its evaluator and ends; it takes no more work.
 *
 * The same lanes serve an MPI rank that evaluates for rank 0 (tuner/mpi.h),
 * and VptTransport is the shape in which the pool sees lanes of either kind:
 * the ones of this process, and those of the other ranks. */
#ifndef VPT_TUNER_LANES_H
#define VPT_TUNER_LANES_H

#include "tuner/eval.h"

#include <stddef.h>
#include <stdint.h>

/* What a lane measures on, for the rows it writes and for the checks that
 * only identical GPUs are mixed in one tune (tuner/pool.h). */
typedef struct {
    char gpu_name[128];
    char gpu_uuid[80];  /* a GPU's UUID; a replay's simulated GPU: "<recorded UUID>#<k>" */
    char driver[64];
    char nvrtc[32];
    char commit[64];
    char host[64];
    int rank;           /* MPI rank; -1 without MPI */
    int device;         /* the GPU's index on its host (what --gpus names) */
} VptLaneInfo;

typedef struct {
    /* Opens lane `lane`'s evaluator, in the lane's own thread, and describes
     * it in *info (rank and host are filled in by the caller). NULL with a
     * message on failure; *no_gpu 1 when the GPU or driver is missing. */
    void *(*open)(void *user, int lane, VptLaneInfo *info, int *no_gpu);
    VptEvaluateFn evaluate;
    /* Compile hints (may be NULL). */
    void (*prefetch)(void *ctx, const VptConfig *configs, size_t n, int fidelity);
    void (*close)(void *ctx);
    void *user;
} VptLaneOps;

typedef enum {
    VPT_LANE_DONE,   /* job finished: rec (as the evaluator filled it) */
    VPT_LANE_LOST,   /* the lane is gone (why); job is the one it was running, or VPT_LANE_NO_JOB */
    VPT_LANE_CALLED  /* vpt_lanes_call returned call_rc (why: its message when -1) */
} VptLaneEventKind;

#define VPT_LANE_NO_JOB UINT64_MAX

typedef struct {
    VptLaneEventKind kind;
    int lane;
    uint64_t job;
    VptEvalRecord rec;
    int call_rc;
    char why[768];
} VptLaneEvent;

typedef struct VptLanes VptLanes;

/* Starts n lanes (threads) and waits until each has opened its evaluator.
 * NULL with the first failure's message, prefixed with the lane ("GPU 1:
 * ..."), when any cannot open (the others are stopped); *no_gpu (may be
 * NULL) as the failing open said. infos_base: rank and host to stamp. */
VptLanes *vpt_lanes_start(const VptLaneOps *ops, int n, int rank, const char *host, int *no_gpu);

int vpt_lanes_count(const VptLanes *l);
const VptLaneInfo *vpt_lanes_info(const VptLanes *l, int lane);

/* Hands an idle lane a job: evaluate c at fidelity. -1 when the lane is lost
 * (or busy: a caller's bug). */
int vpt_lanes_submit(VptLanes *l, int lane, uint64_t job, const VptConfig *c, int fidelity);

/* Queues compile hints for the lane (copied). */
void vpt_lanes_prefetch(VptLanes *l, int lane, const VptConfig *configs, size_t n, int fidelity);

/* Runs fn(evaluator, arg) in the lane's thread, after what its mailbox
 * holds; the CALLED event carries its return value. -1 when the lane is lost
 * or already has a call waiting. */
int vpt_lanes_call(VptLanes *l, int lane, int (*fn)(void *evaluator, void *arg), void *arg);

/* The next event, waiting at most timeout_s (< 0: until one comes): 1 with
 * *ev, 0 when none came. */
int vpt_lanes_poll(VptLanes *l, double timeout_s, VptLaneEvent *ev);

/* Stops every lane after its current job (its event is dropped), closes the
 * evaluators, joins the threads, frees l. NULL is fine. */
void vpt_lanes_stop(VptLanes *l);

/* Lanes as the pool sees them, whichever process runs them. */
typedef struct {
    int (*count)(void *self);
    const VptLaneInfo *(*info)(void *self, int lane);
    int (*submit)(void *self, int lane, uint64_t job, const VptConfig *c, int fidelity);
    void (*prefetch)(void *self, int lane, const VptConfig *configs, size_t n, int fidelity);
    /* the next event within timeout_s (0: do not wait); 1, 0, or -1 with a
     * message when the transport itself failed */
    int (*poll)(void *self, double timeout_s, VptLaneEvent *ev);
    void *self;
} VptTransport;

VptTransport vpt_lanes_transport(VptLanes *l);

#endif
