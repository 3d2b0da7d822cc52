/* RMC's thread lock: with RMC_THREAD_SAFE on (auto: when MPI provides MPI_THREAD_MULTIPLE), every
 * entry point of comm that touches shared state runs under one recursive lock, so threads of a
 * rank may call RMC at the same time. A fair (ticket) lock: a thread that waits in RMC (rmc_wait,
 * rmc_barrier, rmc_mutex_lock, ...) steps out of the line between its waiting rounds when another
 * thread queues, and queues again behind it; so a thread that waits for another thread of its own
 * rank (a mutex it holds, a barrier it must reach) lets that thread in. Off, each entry point pays
 * one predictable branch. */
#define _GNU_SOURCE
#include "config.h"
#include <sched.h>
#include <stdatomic.h>
#include "core.h"

int rmci_mt_on_;

static struct {
    atomic_uint next;    /* next ticket to hand out */
    atomic_uint serving; /* ticket allowed in */
} lk;

/* This thread's nesting of the lock (0: not held), rmci.h's inline guard reads it. */
__thread unsigned rmci_mt_depth_ __attribute__((tls_model("initial-exec")));

/* Waits for `ticket` to be served: short spins, then yields (threads may outnumber cores). */
static void take(unsigned ticket)
{
    unsigned spins = 0;
    while (RMCI_UNLIKELY(atomic_load_explicit(&lk.serving, memory_order_acquire) != ticket)) {
        if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else
            sched_yield();
    }
}

void rmci_mt_acquire(void)
{
    take(atomic_fetch_add_explicit(&lk.next, 1, memory_order_relaxed));
}

/* Hands the lock to the next ticket (only the holder writes `serving`). */
void rmci_mt_give(void)
{
    unsigned s = atomic_load_explicit(&lk.serving, memory_order_relaxed);
    atomic_store_explicit(&lk.serving, s + 1, memory_order_release);
}

/* Does another thread wait for the lock (the caller holds it)? */
static inline int contended(void)
{
    return atomic_load_explicit(&lk.next, memory_order_relaxed) -
               atomic_load_explicit(&lk.serving, memory_order_relaxed) >
           1;
}

/* Steps out of the line for the threads queued behind, when the caller holds the lock once (its
 * own entry point: a layer above that holds it too keeps it, its state may be mid-change). */
void rmci_mt_pause(void)
{
    if (rmci_mt_depth_ == 1)
        (void)rmc_thread_pause();
}

int rmc_thread_pause(void)
{
    if (!rmci_mt_on_ || rmci_mt_depth_ == 0 || !contended())
        return 0;
    rmci_mt_give(); /* the nesting stays recorded in `rmci_mt_depth_`: nobody else reads it */
    rmci_mt_acquire();
    return 1;
}

int rmci_mt_release(void)
{
    if (!rmci_mt_on_ || rmci_mt_depth_ != 1)
        return 0;
    rmci_mt_depth_ = 0;
    rmci_mt_give();
    return 1;
}

void rmci_mt_reacquire(int released)
{
    if (released) {
        rmci_mt_acquire();
        rmci_mt_depth_ = 1;
    }
}

rmc_status_t rmci_mt_setup(void)
{
    int want = rmci_env_tri("RMC_THREAD_SAFE");
    if (want < 0)
        return rmci_fail(RMC_ERR_ARG, "rmc_init", "RMC_THREAD_SAFE=%s (1, 0 or auto)",
                         rmc_knob_value("RMC_THREAD_SAFE"));
    int provided = MPI_THREAD_SINGLE;
    RMCI_MPI(MPI_Query_thread, (&provided));
    int on = want == 2 ? provided == MPI_THREAD_MULTIPLE : want;
    if (on && provided < MPI_THREAD_SERIALIZED)
        return rmci_fail(RMC_ERR_UNSUPPORTED, "rmc_init",
                         "RMC_THREAD_SAFE=1 needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE "
                         "(MPI provides level %d)",
                         provided);
    rmci_mt_on_ = on;
    return RMC_OK;
}

int rmc_thread_safe(void)
{
    return rmci_mt_on_;
}

int rmc_thread_lock(void)
{
    return rmci_serial_enter_();
}

void rmc_thread_unlock(int token)
{
    rmci_serial_leave_(&token);
}
