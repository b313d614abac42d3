/* The C interface of the MPI shim (mpi/shim.c), a shared library of its own
 * (bin/libvptune-mpi.so, built with mpicc when the build has MPI) that
 * tuner/mpi.c loads with dlopen only when an MPI launcher started the
 * program. Why a separate library: `bin/tune` must keep running, linked as
 * it always was, on machines without MPI (most GPU machines, where it runs
 * as one process); only a tune launched by mpirun or srun needs libmpi, and
 * it finds it where the launcher's environment says (a cluster's MPI, or
 * Debian's OpenMPI carried by scripts/openmpi_carry.sh with LD_LIBRARY_PATH).
 *
 * The shim is a thin layer over MPI-3 point-to-point calls on
 * MPI_COMM_WORLD, with MPI_ERRORS_RETURN so that a failure is a message, not
 * an abort. Functions that can fail return -1 and write the reason (the MPI
 * call and MPI_Error_string's words) into err[0..n). Only the thread that
 * called init calls the others (MPI_THREAD_FUNNELED). */
#ifndef VPT_TUNER_MPI_SHIM_H
#define VPT_TUNER_MPI_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when the table changes; the loader refuses a shim of another
 * version (a stale build or install). */
#define VPT_MPI_SHIM_ABI 1

typedef struct {
    int abi;
    /* MPI_Init_thread (FUNNELED is enough: tuner/mpi.h), then this
     * process's rank and the world size, and its rank and count among the
     * processes of its node (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED). */
    int (*init)(int *rank, int *size, int *local_rank, int *local_size, char *err, size_t n);
    /* Blocking standard-mode send of len bytes with tag to dest. */
    int (*send)(int dest, int tag, const void *buf, size_t len, char *err, size_t n);
    /* Whether a message waits (MPI_Iprobe, any source and tag): 1 with its
     * source, tag and length, 0 when none, -1 on error. */
    int (*probe)(int *source, int *tag, size_t *len, char *err, size_t n);
    /* Receives the message probe found (len bytes exactly). */
    int (*recv)(int source, int tag, void *buf, size_t len, char *err, size_t n);
    /* MPI_Abort(MPI_COMM_WORLD, code). */
    void (*abort)(int code);
    int (*finalize)(void);
    /* MPI_Get_library_version's first line. */
    void (*library)(char *buf, size_t n);
} VptMpiShim;

/* The shim's one exported symbol. */
const VptMpiShim *vpt_mpi_shim_table(void);

#ifdef __cplusplus
}
#endif

#endif
