/* Tuning under MPI: one tune over the GPUs of several processes and hosts,
 * launched the way clusters launch programs (`mpirun -np N bin/tune ...`,
 * `srun bin/tune ...`), never through a protocol of vptune's own.
 *
 * Roles. Rank 0 is the tune: it parses, searches, holds the cache (its one
 * writer), prints, re-measures the finalists and saves the winner, exactly
 * as a tune on one GPU does. It also measures: its GPU is lane 0 of the
 * pool (tuner/pool.h), driven by a thread of its own whose evaluations run
 * in a worker process (harness/eval_worker.h), so the search never shares a
 * CPU thread with a measurement and a measurement never waits on the
 * search (GPU time is taken with CUDA events in the worker). Every other
 * rank evaluates: it loads the same scene from the same command line, opens
 * its lanes (tuner/lanes.h: the same code as `tune --gpus` in one process),
 * says hello, and then runs the jobs rank 0 sends and sends back their
 * records until rank 0 says stop. Nothing but rank 0 touches the cache, the
 * results/ tree or stdout.
 *
 * Which GPU a rank takes: its rank among the processes of its node
 * (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED: portable across
 * launchers, where OMPI_COMM_WORLD_LOCAL_RANK is OpenMPI's and SLURM_LOCALID
 * Slurm's), modulo the GPUs it sees, so `mpirun -np 2` on a two-GPU node
 * puts one rank on each. A rank sees only what its CUDA_VISIBLE_DEVICES
 * shows (srun --gpus-per-task sets it to one GPU per rank: each then takes
 * its own GPU 0). `--gpus LIST` instead names the GPUs each rank drives,
 * several per rank if wanted. More ranks than GPUs on a node share GPUs:
 * lanes with one GPU UUID take turns (tuner/pool.h), so two ranks on one GPU
 * measure one after the other, compiling ahead in parallel.
 *
 * Threads: only the thread that initialized MPI calls it (rank 0's search
 * thread, another rank's main loop), so MPI_THREAD_FUNNELED suffices; lane
 * threads never call MPI. The GPU worker processes are forked after
 * MPI_Init; they close every inherited descriptor but their socket and never
 * call MPI.
 *
 * Messages: binary structs, the same binary on every rank (the hello carries
 * the build and the struct sizes, and a rank of another build is refused).
 * Each rank and rank 0 send a heartbeat every second; a rank not heard from
 * for VPT_MPI_SILENCE_S seconds (default 60: messages flow whatever the
 * evaluations do, since evaluations run in lane threads) is lost: rank 0
 * reports it and queues its config again (tuner/pool.h), and a rank that no
 * longer hears rank 0 exits. Most launchers end the whole job when one
 * process dies (OpenMPI's mpirun does, unless given --enable-recovery);
 * then the cache, written as records arrive, keeps every finished
 * evaluation, and the same command resumes.
 *
 * The MPI library itself comes from the shim (tuner/mpi_shim.h), loaded only
 * when a launcher started the program. */
#ifndef VPT_TUNER_MPI_H
#define VPT_TUNER_MPI_H

#include "tuner/lanes.h"

#include <signal.h>

typedef struct VptMpi VptMpi;
typedef struct VptRemote VptRemote;

/* Read from the environment, before anything is initialized: the world
 * size an MPI launcher gave this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE,
 * or, for srun with PMIx, SLURM_STEP_NUM_TASKS), 0 when no launcher started
 * it, -1 when one did but says no size (MPI tells, once initialized). */
int vpt_mpi_launched_size(void);
/* The launcher's rank for this process (OMPI_COMM_WORLD_RANK, PMIX_RANK,
 * PMI_RANK), -1 when none: lets ranks other than 0 stay quiet about usage
 * errors every rank would report. */
int vpt_mpi_env_rank(void);

/* Loads the shim and initializes MPI. NULL with the message: the shim is
 * missing (this build has no MPI: make MPI=1), of another version, or MPI
 * failed. */
VptMpi *vpt_mpi_init(void);
int vpt_mpi_rank(const VptMpi *m);
int vpt_mpi_size(const VptMpi *m);
int vpt_mpi_local_rank(const VptMpi *m);
int vpt_mpi_local_size(const VptMpi *m);
const char *vpt_mpi_host(const VptMpi *m);
/* "Open MPI v4.1.4" */
const char *vpt_mpi_library(const VptMpi *m);
/* MPI_Finalize, then frees m. NULL is fine. `rc` is the process' exit
 * status: should MPI_Finalize not return within VPT_MPI_FINALIZE_S seconds
 * (default 20), the process says so on stderr and exits with rc. Why: after
 * a rank was lost (mpirun --enable-recovery), Open MPI 4.1's finalize can
 * wait on the dead rank for ever under load (seen on the 2-core CI machine);
 * by then every finished evaluation is in the cache and the results are
 * printed, so waiting gains nothing and would hold a cluster job until its
 * time limit. */
void vpt_mpi_finalize(VptMpi *m, int rc);

/* ---- rank 0 ------------------------------------------------------------
 *
 * vpt_mpi_gather waits for every other rank's hello (at most an hour: a
 * rank loads its scene and opens its GPUs first) and checks that each one
 * tunes what rank 0 tunes: `what` is a text that names it (build, scene and
 * its digest, workload, ...), and the ranks' texts must be equal. NULL with
 * a message naming the rank and what differs, or the rank's own failure
 * (*no_gpu 1 when that was a missing GPU or driver). The caller then checks
 * the lanes (vpt_lanes_check_identical over its own and the remote ones)
 * and either refuses or welcomes. */
VptRemote *vpt_mpi_gather(VptMpi *m, const char *what, int *no_gpu);
int vpt_remote_lanes(const VptRemote *r);
const VptLaneInfo *vpt_remote_info(const VptRemote *r, int lane);
/* Tells every other rank to go (they start serving) / to exit with status
 * 1 (rank 0 prints why; the message goes along). Refuse works before
 * gather too, and frees nothing. */
int vpt_mpi_welcome(VptRemote *r);
void vpt_mpi_refuse(VptMpi *m, const char *why);
/* The other ranks' lanes as the pool sees them (valid until stop). */
VptTransport vpt_remote_transport(VptRemote *r);
/* Tells every welcomed rank still heard from to stop (its lanes finish
 * their current job, which nobody waits for: drain the pool first) and
 * frees r. Ranks not welcomed must be refused (vpt_mpi_refuse). NULL is
 * fine. */
void vpt_remote_stop(VptRemote *r);

/* ---- every other rank --------------------------------------------------
 *
 * Says hello to rank 0 with this rank's lanes and `what` (or, when lanes is
 * NULL, with failure: why it could not start, no_gpu as its open said),
 * then serves rank 0's jobs on the lanes until rank 0 says stop (returns
 * 0), refuses (1), goes silent (1, with a message on stderr), or *interrupt
 * becomes non-zero (1). */
int vpt_mpi_serve(VptMpi *m, VptLanes *lanes, const char *what, const char *failure, int no_gpu,
                  const volatile sig_atomic_t *interrupt);

#endif
