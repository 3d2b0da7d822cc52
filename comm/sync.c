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
    rmci_mt_pause(); /* the thread we wait for may be one of this rank's */
}

void rmc_wait_round(unsigned *spins)
{
    RMCI_SERIAL();
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

typedef rmc_status_t (*wait_fn)(MPI_Request *req, const char *where);

/* rmci_agree_vals, waiting with `wait` (rmci_wait inside comm, rmci_wait_top for rmc_agree). */
static rmc_status_t agree(MPI_Comm comm, rmc_status_t st, long long *vals, int n, wait_fn wait,
                          const char *where)
{
    enum { MAXV = 7 };
    long long in[MAXV + 1], out[MAXV + 1];
    if (n < 0 || n > MAXV)
        return rmci_fail(RMC_ERR_INTERNAL, where, "%d values (at most %d)", n, MAXV);
    in[0] = (long long)st;
    for (int i = 0; i < n; i++)
        in[i + 1] = vals[i];
    MPI_Request rq;
    /* a failure to start the reduction is local; the others would wait: nothing better exists */
    rmc_status_t s2 = rmci_mpi_status(
        "MPI_Iallreduce", where,
        RMCI_MPI_RC(MPI_Iallreduce, (in, out, n + 1, MPI_LONG_LONG, MPI_MIN, comm, &rq)));
    if (s2 == RMC_OK)
        s2 = wait(&rq, where);
    if (s2 != RMC_OK)
        return s2;
    for (int i = 0; i < n; i++)
        vals[i] = out[i + 1];
    return (rmc_status_t)out[0];
}

rmc_status_t rmci_agree_vals(MPI_Comm comm, rmc_status_t st, long long *vals, int n)
{
    return agree(comm, st, vals, n, rmci_wait, __func__);
}

/* An MPI_Ibarrier on comm waited with `wait`. */
static rmc_status_t barrier(MPI_Comm comm, wait_fn wait, const char *where)
{
    MPI_Request rq;
    rmc_status_t st =
        rmci_mpi_status("MPI_Ibarrier", where, RMCI_MPI_RC(MPI_Ibarrier, (comm, &rq)));
    return st == RMC_OK ? wait(&rq, where) : st;
}

rmc_status_t rmci_attentive_barrier(MPI_Comm comm, const char *where)
{
    return barrier(comm, rmci_wait, where);
}

rmc_status_t rmc_agree(rmc_status_t status)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    return agree(rmci_info_.comm, status, NULL, 0, rmci_wait_top, __func__);
}

rmc_status_t rmc_progress(void)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    rmci_poll_full();
    rmci_custom_poll();
    return RMC_OK;
}

rmc_status_t rmc_barrier(void)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    rmc_status_t st = rmci_fence(-1);
    atomic_thread_fence(memory_order_seq_cst);
    /* the barrier goes on whatever the fence returned: a rank that skipped it would hang the
     * others; the fence's failure is reported afterwards */
    rmci_keep(&st, barrier(rmci_info_.comm, rmci_wait_top, __func__));
    atomic_thread_fence(memory_order_seq_cst);
    return st;
}
