/* The MPI shim: the few MPI calls vptune's distributed tune makes, in a
 * library of their own (contract and why in tuner/mpi_shim.h). Built by the
 * Makefile with mpicc when the build has MPI; not part of libvptune. */
#include "tuner/mpi_shim.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failed(const char *call, int code, char *err, size_t n)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", code);
    snprintf(err, n, "%s failed: %s", call, text);
    return -1;
}

static int shim_init(int *rank, int *size, int *local_rank, int *local_size, char *err, size_t n)
{
    int provided = 0, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return failed("MPI_Init_thread", rc, err, n);
    if (provided < MPI_THREAD_FUNNELED) {
        snprintf(err, n, "MPI_Init_thread: the MPI library provides thread level %d, below MPI_THREAD_FUNNELED "
                         "(the tune's evaluation threads never call MPI, but the library must allow them)", provided);
        return -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS) return failed("MPI_Comm_rank", rc, err, n);
    if ((rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS) return failed("MPI_Comm_size", rc, err, n);
    MPI_Comm node;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS) return failed("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)", rc, err, n);
    if ((rc = MPI_Comm_rank(node, local_rank)) != MPI_SUCCESS || (rc = MPI_Comm_size(node, local_size)) != MPI_SUCCESS)
        return failed("MPI_Comm_rank/size (node)", rc, err, n);
    MPI_Comm_free(&node);
    return 0;
}

static int shim_send(int dest, int tag, const void *buf, size_t len, char *err, size_t n)
{
    if (len > INT_MAX) {
        snprintf(err, n, "MPI message of %zu bytes is too large", len);
        return -1;
    }
    int rc = MPI_Send(buf, (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : failed("MPI_Send", rc, err, n);
}

static int shim_probe(int *source, int *tag, size_t *len, char *err, size_t n)
{
    int flag = 0, count = 0;
    MPI_Status st;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (rc != MPI_SUCCESS) return failed("MPI_Iprobe", rc, err, n);
    if (!flag) return 0;
    if ((rc = MPI_Get_count(&st, MPI_BYTE, &count)) != MPI_SUCCESS) return failed("MPI_Get_count", rc, err, n);
    *source = st.MPI_SOURCE;
    *tag = st.MPI_TAG;
    *len = (size_t)count;
    return 1;
}

static int shim_recv(int source, int tag, void *buf, size_t len, char *err, size_t n)
{
    if (len > INT_MAX) {
        snprintf(err, n, "MPI message of %zu bytes is too large", len);
        return -1;
    }
    int rc = MPI_Recv(buf, (int)len, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? 0 : failed("MPI_Recv", rc, err, n);
}

static void shim_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

static int shim_finalize(void) { return MPI_Finalize() == MPI_SUCCESS ? 0 : -1; }

static void shim_library(char *buf, size_t n)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) {
        snprintf(buf, n, "unknown MPI library");
        return;
    }
    v[strcspn(v, "\n,")] = '\0';
    snprintf(buf, n, "%s", v);
}

static const VptMpiShim table = {
    VPT_MPI_SHIM_ABI, shim_init, shim_send, shim_probe, shim_recv, shim_abort, shim_finalize, shim_library,
};

const VptMpiShim *vpt_mpi_shim_table(void) { return &table; }
