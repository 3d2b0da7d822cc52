/* MPI on behalf of libarmci: every call checked (a failure aborts, as ARMCI does, naming the ARMCI
 * function, the MPI call and MPI_Error_string's text), and every collective and blocking message
 * attentive: issued in its nonblocking form and waited for while RMC's progress keeps serving
 * active messages (rmc_progress), so a rank waiting in armci_msg_barrier / _gop / _brdcst / ...
 * never leaves a peer waiting for it to serve a remote atomic or a registered-memory access.
 * Collectives without a nonblocking form (communicator creation) are entered after an attentive
 * barrier, so no member sits in them while another still needs it. */
#define _GNU_SOURCE
#include "config.h"
#include <sched.h>
#include <stdio.h>
#include "armci_impl.h"

void rmca_mpi_failed(const char *fn, const char *call, int rc)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    rmca_error("%s: %s failed: %s", fn, call, text);
}

void rmca_wait(MPI_Request *rq, const char *fn)
{
    for (unsigned spins = 0;; spins++) {
        int done = 0;
        RMCA_MPI(fn, MPI_Test, (rq, &done, MPI_STATUS_IGNORE));
        if (done)
            return;
        rmc_progress(); /* RMC_ERR_NOT_INIT outside ARMCI_Init / ARMCI_Finalize: nothing to serve */
        /* a collective holding RMC's lock (ARMCI_Malloc, ARMCI_Free: their waits come before
         * any shared state changes) lets this rank's other threads in: a member may be waiting
         * for one of them (an ARMCI mutex it holds) before it joins */
        rmc_thread_pause();
        if (spins > 64)
            sched_yield(); /* ranks may outnumber cores: let the peer we wait for run */
    }
}

void rmca_barrier(MPI_Comm comm, const char *fn)
{
    MPI_Request rq;
    RMCA_MPI(fn, MPI_Ibarrier, (comm, &rq));
    rmca_wait(&rq, fn);
}

void rmca_allreduce(void *in, void *out, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                    const char *fn)
{
    MPI_Request rq;
    RMCA_MPI(fn, MPI_Iallreduce, (in, out, n, t, op, comm, &rq));
    rmca_wait(&rq, fn);
}

void rmca_allgather(const void *in, int n, MPI_Datatype t, void *out, MPI_Comm comm, const char *fn)
{
    MPI_Request rq;
    RMCA_MPI(fn, MPI_Iallgather, (in, n, t, out, n, t, comm, &rq));
    rmca_wait(&rq, fn);
}

void rmca_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, const char *fn)
{
    MPI_Request rq;
    RMCA_MPI(fn, MPI_Ibcast, (buf, n, t, root, comm, &rq));
    rmca_wait(&rq, fn);
}

void rmca_send(const void *buf, int n, int to, int tag, MPI_Comm comm, const char *fn)
{
    MPI_Request rq;
    RMCA_MPI(fn, MPI_Isend, (buf, n, MPI_BYTE, to, tag, comm, &rq));
    rmca_wait(&rq, fn);
}

int rmca_recv(void *buf, int n, int from, int tag, MPI_Comm comm, int *len, const char *fn)
{
    MPI_Request rq;
    MPI_Status st;
    RMCA_MPI(fn, MPI_Irecv, (buf, n, MPI_BYTE, from, tag, comm, &rq));
    for (unsigned spins = 0;; spins++) { /* rmca_wait, keeping the status */
        int done = 0;
        RMCA_MPI(fn, MPI_Test, (&rq, &done, &st));
        if (done)
            break;
        rmc_progress();
        if (spins > 64)
            sched_yield();
    }
    if (len)
        RMCA_MPI(fn, MPI_Get_count, (&st, MPI_BYTE, len));
    return st.MPI_SOURCE;
}

void rmca_comm_ready(MPI_Comm c, const char *fn)
{
    if (c != MPI_COMM_NULL)
        RMCA_MPI(fn, MPI_Comm_set_errhandler, (c, MPI_ERRORS_RETURN));
}
