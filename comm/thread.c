/* RMC's thread lock: with RMC_THREAD_SAFE on (auto: when MPI provides MPI_THREAD_MULTIPLE), every
 * entry point of comm that touches shared state runs under one recursive lock, so threads of a
 * rank may call RMC at the same time. A fair (ticket) lock: a thread that waits in RMC (rmc_wait,
 * rmc_barrier, rmc_mutex_lock, ...) steps out of the line between its waiting rounds when another
 * thread queues, and queues again behind it; so a thread that waits for another thread of its own
 * rank (a mutex it holds, a barrier it must reach) lets that thread in. Off, each entry point pays
 * one predictable branch. */
#define _GNU_SOURCE
#include "config.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include "core.h"

int rmci_mt_on_;

static struct {
    atomic_uint next;     /* next ticket to hand out */
    atomic_uint serving;  /* ticket allowed in */
    atomic_ulong owner;   /* pthread_self of the holder, 0 when free */
    unsigned depth;       /* nesting of the holder (written by the holder only) */
} lk;

static inline unsigned long self_id(void)
{
    return (unsigned long)pthread_self();
}

/* Waits for `ticket` to be served: short spins, then yields (threads may outnumber cores). */
static void take(unsigned ticket, unsigned long me)
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
    atomic_store_explicit(&lk.owner, me, memory_order_relaxed);
}

void rmci_mt_lock(void)
{
    unsigned long me = self_id();
    if (atomic_load_explicit(&lk.owner, memory_order_relaxed) == me) {
        lk.depth++;
        return;
    }
    take(atomic_fetch_add_explicit(&lk.next, 1, memory_order_relaxed), me);
    lk.depth = 1;
}

/* Hands the lock to the next ticket. */
static void give(void)
{
    atomic_store_explicit(&lk.owner, 0, memory_order_relaxed);
    unsigned s = atomic_load_explicit(&lk.serving, memory_order_relaxed);
    atomic_store_explicit(&lk.serving, s + 1, memory_order_release);
}

void rmci_mt_unlock(void)
{
    if (--lk.depth == 0)
        give();
}

/* Steps out of the line for the threads queued behind, when the caller holds the lock once (its
 * own entry point: a layer above that holds it too keeps it, its state may be mid-change). */
void rmci_mt_pause(void)
{
    if (rmci_mt_on_ && atomic_load_explicit(&lk.owner, memory_order_relaxed) == self_id() &&
        lk.depth == 1)
        (void)rmc_thread_pause();
}

int rmc_thread_pause(void)
{
    if (!rmci_mt_on_ || atomic_load_explicit(&lk.owner, memory_order_relaxed) != self_id())
        return 0;
    unsigned next = atomic_load_explicit(&lk.next, memory_order_relaxed);
    if (next - atomic_load_explicit(&lk.serving, memory_order_relaxed) <= 1)
        return 0;
    unsigned d = lk.depth;
    give();
    take(atomic_fetch_add_explicit(&lk.next, 1, memory_order_relaxed), self_id());
    lk.depth = d;
    return 1;
}

int rmci_mt_release(void)
{
    if (!rmci_mt_on_ || atomic_load_explicit(&lk.owner, memory_order_relaxed) != self_id() ||
        lk.depth != 1)
        return 0;
    give();
    return 1;
}

void rmci_mt_reacquire(int released)
{
    if (released) {
        take(atomic_fetch_add_explicit(&lk.next, 1, memory_order_relaxed), self_id());
        lk.depth = 1;
    }
}

rmc_status_t rmci_mt_setup(void)
{
    const char *v = rmc_knob_value("RMC_THREAD_SAFE");
    int provided = MPI_THREAD_SINGLE;
    RMCI_MPI(MPI_Query_thread, (&provided));
    int on;
    if (!v || !*v || !strcmp(v, "auto"))
        on = provided == MPI_THREAD_MULTIPLE;
    else if (!strcmp(v, "1"))
        on = 1;
    else if (!strcmp(v, "0"))
        on = 0;
    else
        return rmci_fail(RMC_ERR_ARG, "rmc_init", "RMC_THREAD_SAFE=%s (auto, 1 or 0)", v);
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
