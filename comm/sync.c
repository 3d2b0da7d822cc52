/* Attentive waiting, agreement and the barrier: every place where comm waits for other ranks
 * keeps serving active messages (the layers' full polls), with or without a progress thread. */
#define _GNU_SOURCE
#include "config.h"
#include <sched.h>
#include <stdatomic.h>
#include "core.h"

void rmci_wait_round(unsigned *spins)
{
    rmci_poll_full();
    if (++*spins > 64 && rmci.oversubscribed)
        sched_yield(); /* ranks outnumber processors: let the peer we wait for run */
}

void rmci_wait_round_top(unsigned *spins)
{
    rmci_wait_round(spins);
    rmci_custom_poll();
}

void rmc_wait_round(unsigned *spins)
{
    unsigned dummy = 0;
    if (rmci_info_.initialized)
        rmci_wait_round_top(spins ? spins : &dummy);
    else
        sched_yield();
}

/* Waits for an MPI request, a waiting round (`round`) between tests. */
static rmc_status_t wait_loop(MPI_Request *req, const char *where, void (*round)(unsigned *))
{
    unsigned spins = 0;
    for (;;) {
        int done = 0;
        int rc = RMCI_MPI_RC(MPI_Test, (req, &done, MPI_STATUS_IGNORE));
        if (rc != MPI_SUCCESS)
            return rmci_mpi_fail("MPI_Test", where, rc);
        if (done)
            return RMC_OK;
        round(&spins);
    }
}

rmc_status_t rmci_wait(MPI_Request *req, const char *where)
{
    return wait_loop(req, where, rmci_wait_round);
}

rmc_status_t rmci_wait_top(MPI_Request *req, const char *where)
{
    return wait_loop(req, where, rmci_wait_round_top);
}

rmc_status_t rmci_agree_vals(MPI_Comm comm, rmc_status_t st, long long *vals, int n)
{
    enum { MAXV = 7 };
    long long in[MAXV + 1], out[MAXV + 1];
    if (n < 0 || n > MAXV)
        return rmci_fail(RMC_ERR_INTERNAL, __func__, "%d values (at most %d)", n, MAXV);
    in[0] = (long long)st;
    for (int i = 0; i < n; i++)
        in[i + 1] = vals[i];
    MPI_Request rq;
    /* a failure to start the reduction is local; the others would wait: nothing better exists */
    RMCI_MPI(MPI_Iallreduce, (in, out, n + 1, MPI_LONG_LONG, MPI_MIN, comm, &rq));
    rmc_status_t s2 = rmci_wait(&rq, __func__);
    if (s2 != RMC_OK)
        return s2;
    for (int i = 0; i < n; i++)
        vals[i] = out[i + 1];
    return (rmc_status_t)out[0];
}

rmc_status_t rmci_attentive_barrier(MPI_Comm comm, const char *where)
{
    MPI_Request rq;
    rmc_status_t st =
        rmci_mpi_status("MPI_Ibarrier", where, RMCI_MPI_RC(MPI_Ibarrier, (comm, &rq)));
    return st == RMC_OK ? rmci_wait(&rq, where) : st;
}

rmc_status_t rmc_agree(rmc_status_t status)
{
    RMCI_CHECK_INIT(__func__);
    long long in = status, out = status;
    MPI_Request rq;
    RMCI_MPI(MPI_Iallreduce, (&in, &out, 1, MPI_LONG_LONG, MPI_MIN, rmci_info_.comm, &rq));
    rmc_status_t st = rmci_wait_top(&rq, __func__);
    return st != RMC_OK ? st : (rmc_status_t)out;
}

rmc_status_t rmc_progress(void)
{
    RMCI_CHECK_INIT(__func__);
    rmci_poll_full();
    rmci_custom_poll();
    return RMC_OK;
}

rmc_status_t rmc_barrier(void)
{
    RMCI_CHECK_INIT(__func__);
    rmc_status_t st = rmci_fence(-1);
    atomic_thread_fence(memory_order_seq_cst);
    /* the barrier goes on whatever the fence returned: a rank that skipped it would hang the
     * others; the fence's failure is reported afterwards */
    MPI_Request rq;
    rmc_status_t s2 = RMCI_MPI_ST(MPI_Ibarrier, (rmci_info_.comm, &rq));
    if (s2 == RMC_OK)
        s2 = rmci_wait_top(&rq, __func__);
    rmci_keep(&st, s2);
    atomic_thread_fence(memory_order_seq_cst);
    return st;
}
