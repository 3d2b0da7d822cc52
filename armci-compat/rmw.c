/* ARMCI on RMC: read-modify-write (rmc_amo_*) and mutexes (rmc_mutex_*). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

/* ------------------------------------------------------------- read-modify-write --- */

/* Fetch-and-add and swap on an int or long word, atomic with every other ARMCI_Rmw on that word.
 * Returns when performed at the target; *ploc then holds the previous value. */
int PARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc)
{
    rmc_status_t st;
    if (RMCA_UNLIKELY(!ploc))
        rmca_error("ARMCI_Rmw: NULL local pointer");
    /* *ploc receives the old value directly (RMC writes nothing on error); int is int32_t and
     * long is int64_t here (LP64) */
    switch (op) {
    case ARMCI_FETCH_AND_ADD:
        st = rmc_amo_fetch_add_i32(prem, (int32_t)value, (int32_t *)ploc, proc);
        break;
    case ARMCI_FETCH_AND_ADD_LONG:
        st = rmc_amo_fetch_add_i64(prem, (int64_t)value, (int64_t *)ploc, proc);
        break;
    case ARMCI_SWAP:
        st = rmc_amo_swap_i32(prem, *(int32_t *)ploc, (int32_t *)ploc, proc);
        break;
    case ARMCI_SWAP_LONG:
        st = rmc_amo_swap_i64(prem, *(int64_t *)ploc, (int64_t *)ploc, proc);
        break;
    default:
        rmca_error("ARMCI_Rmw: invalid operation (%d)", op);
    }
    RMCA_CHECK(st, "ARMCI_Rmw(op %d, prem=%p, proc %d)", op, prem, proc);
    return 0;
}

_Static_assert(sizeof(int) == sizeof(int32_t) && sizeof(long) == sizeof(int64_t),
               "ARMCI_Rmw maps int / long onto RMC's 32 / 64-bit atomics");

/* ------------------------------------------------------------------------ mutexes --- */

/* Collective (one thread of a process at a time, as every ARMCI collective). Neither holds RMC's
 * thread lock across the RMC collective: a process may be waiting for a mutex that another
 * thread of this one holds before it joins, and that thread needs the lock to unlock it. */
int PARMCI_Create_mutexes(int count)
{
    RMCA_REQUIRE_INIT("ARMCI_Create_mutexes");
    if (rmca.have_mutexes)
        rmca_error("ARMCI_Create_mutexes: attempted to create ARMCI mutexes multiple times");
    if (count < 0)
        rmca_error("ARMCI_Create_mutexes: negative count (%d)", count);
    RMCA_CHECK(rmc_mutex_create(count, &rmca.mutexes), "ARMCI_Create_mutexes(%d)", count);
    rmca.have_mutexes = 1;
    return 0;
}

int PARMCI_Destroy_mutexes(void)
{
    RMCA_REQUIRE_INIT("ARMCI_Destroy_mutexes");
    if (!rmca.have_mutexes)
        rmca_error("ARMCI_Destroy_mutexes: attempted to free unallocated ARMCI mutexes");
    RMCA_CHECK(rmc_mutex_destroy(rmca.mutexes), "ARMCI_Destroy_mutexes");
    rmca.have_mutexes = 0;
    return 0;
}

/* Acquire: data written by the previous holder before its unlock is visible to the new holder. */
void PARMCI_Lock(int mutex, int proc)
{
    if (!rmca.have_mutexes)
        rmca_error("ARMCI_Lock: attempted to lock on unallocated ARMCI mutexes");
    RMCA_CHECK(rmc_mutex_lock(rmca.mutexes, mutex, proc), "ARMCI_Lock(mutex %d, proc %d)", mutex,
               proc);
}

/* Release: completes every operation of the caller (at its target) before the mutex is passed on.
 */
void PARMCI_Unlock(int mutex, int proc)
{
    if (!rmca.have_mutexes)
        rmca_error("ARMCI_Unlock: attempted to unlock on unallocated ARMCI mutexes");
    /* requests on handles are completed too, so everything the holder did is visible */
    rmca_nb_wait_proc(-1);
    RMCA_CHECK(rmc_mutex_unlock(rmca.mutexes, mutex, proc), "ARMCI_Unlock(mutex %d, proc %d)",
               mutex, proc);
}

RMCA_ALIAS(Rmw);
RMCA_ALIAS(Create_mutexes);
RMCA_ALIAS(Destroy_mutexes);
RMCA_ALIAS(Lock);
RMCA_ALIAS(Unlock);

/* ------------------------------------------------------------- ARMCIX mutex handles --- */

/* A mutex this process holds through the handle: which thread acquired it. */
typedef struct rmca_held {
    int mutex, proc;
    const void *thread; /* rmca_thread_id() of the acquiring thread */
} rmca_held_t;

typedef struct rmca_mutex_hdl {
    struct armcix_mutex_hdl_s pub; /* first: the handle given out points here */
    rmc_mutex_h m;
    rmca_held_t *held; /* the mutexes held through this handle (under RMCA_SERIAL) */
    int nheld, capheld;
} rmca_mutex_hdl_t;

/* Identifies the calling thread (the address of a thread-local object). */
static _Thread_local char thread_mark;
static inline const void *rmca_thread_id(void)
{
    return &thread_mark;
}

/* Collective over pgroup, which must hold every process of ARMCI's world (RMC mutex sets are
 * collective over all of RMC's ranks). Mutex ranks are absolute ranks (as in ARMCI-MPI). */
armcix_mutex_hdl_t ARMCIX_Create_mutexes_hdl(int count, ARMCI_Group *pgroup)
{
    RMCA_REQUIRE_INIT("ARMCIX_Create_mutexes_hdl");
    if (!pgroup || pgroup->comm == MPI_COMM_NULL)
        rmca_error("ARMCIX_Create_mutexes_hdl: invalid group");
    if (pgroup->size != rmca.nranks)
        rmca_error("ARMCIX_Create_mutexes_hdl: a group of %d of the %d processes is not supported "
                   "(RMC mutexes are created by every process)",
                   pgroup->size, rmca.nranks);
    if (count < 0)
        rmca_error("ARMCIX_Create_mutexes_hdl: negative count (%d)", count);
    rmca_mutex_hdl_t *h = calloc(1, sizeof(*h));
    if (!h)
        rmca_error("ARMCIX_Create_mutexes_hdl: out of memory");
    RMCA_CHECK(rmc_mutex_create(count, &h->m), "ARMCIX_Create_mutexes_hdl(%d)", count);
    ARMCIX_Group_dup(pgroup, &h->pub.grp);
    h->pub.my_count = count;
    rmca_allreduce(&count, &h->pub.max_count, 1, MPI_INT, MPI_MAX, h->pub.grp.comm,
                   "ARMCI_Create_mutexes");
    h->pub.windows = NULL;
    h->pub.bases = NULL;
    return &h->pub;
}

static rmca_mutex_hdl_t *mhdl(armcix_mutex_hdl_t hdl, const char *fn)
{
    if (!hdl)
        rmca_error("%s: NULL mutex handle", fn);
    return (rmca_mutex_hdl_t *)hdl;
}

/* `proc` is an absolute rank (as ARMCI-MPI reads it), which must be in the handle's group; RMC's
 * rank is the absolute rank. */
static int mproc(rmca_mutex_hdl_t *h, int mutex, int proc, const char *fn)
{
    if (proc < 0 || proc >= rmca.nranks || !h->pub.grp.abs_to_grp ||
        h->pub.grp.abs_to_grp[proc] < 0)
        rmca_error("%s(mutex %d, proc %d): process %d is not in the mutex handle's group (%d of "
                   "the %d processes; proc is an absolute rank)",
                   fn, mutex, proc, proc, h->pub.grp.size, rmca.nranks);
    return proc;
}

/* Index of (mutex, proc) in h->held, or -1. Under RMCA_SERIAL. */
static int held_at(const rmca_mutex_hdl_t *h, int mutex, int proc)
{
    for (int i = 0; i < h->nheld; i++)
        if (h->held[i].mutex == mutex && h->held[i].proc == proc)
            return i;
    return -1;
}

/* Records that the calling thread acquired (mutex, proc). */
static void held_add(rmca_mutex_hdl_t *h, int mutex, int proc, const char *fn)
{
    RMCA_SERIAL();
    if (h->nheld == h->capheld) {
        int cap = h->capheld ? 2 * h->capheld : 4;
        rmca_held_t *n = realloc(h->held, (size_t)cap * sizeof(*n));
        if (!n)
            rmca_error("%s(mutex %d, proc %d): out of memory", fn, mutex, proc);
        h->held = n;
        h->capheld = cap;
    }
    h->held[h->nheld++] = (rmca_held_t){mutex, proc, rmca_thread_id()};
}

int ARMCIX_Destroy_mutexes_hdl(armcix_mutex_hdl_t hdl)
{
    rmca_mutex_hdl_t *h = mhdl(hdl, "ARMCIX_Destroy_mutexes_hdl");
    RMCA_CHECK(rmc_mutex_destroy(h->m), "ARMCIX_Destroy_mutexes_hdl");
    ARMCI_Group_free(&h->pub.grp);
    free(h->held);
    free(h);
    return 0;
}

void ARMCIX_Lock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc)
{
    rmca_mutex_hdl_t *h = mhdl(hdl, "ARMCIX_Lock_hdl");
    RMCA_CHECK(rmc_mutex_lock(h->m, mutex, mproc(h, mutex, proc, "ARMCIX_Lock_hdl")),
               "ARMCIX_Lock_hdl(mutex %d, proc %d)", mutex, proc);
    held_add(h, mutex, proc, "ARMCIX_Lock_hdl");
}

/* Busy (1) when the mutex is held: by another process or thread, or by the calling thread (as
 * pthread_mutex_trylock's EBUSY; RMC refuses that case with RMC_ERR_STATE, so it is answered
 * here from the handle's record of held mutexes). Every RMC error, RMC_ERR_STATE for a call
 * without RMC or from an active-message handler included, is an ARMCI error. */
int ARMCIX_Trylock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc)
{
    rmca_mutex_hdl_t *h = mhdl(hdl, "ARMCIX_Trylock_hdl");
    int r = mproc(h, mutex, proc, "ARMCIX_Trylock_hdl");
    {
        RMCA_SERIAL();
        int i = held_at(h, mutex, proc);
        if (i >= 0 && h->held[i].thread == rmca_thread_id())
            return 1;
    }
    int got = 0;
    RMCA_CHECK(rmc_mutex_trylock(h->m, mutex, r, &got), "ARMCIX_Trylock_hdl(mutex %d, proc %d)",
               mutex, proc);
    if (!got)
        return 1;
    held_add(h, mutex, proc, "ARMCIX_Trylock_hdl");
    return 0;
}

void ARMCIX_Unlock_hdl(armcix_mutex_hdl_t hdl, int mutex, int proc)
{
    rmca_mutex_hdl_t *h = mhdl(hdl, "ARMCIX_Unlock_hdl");
    int r = mproc(h, mutex, proc, "ARMCIX_Unlock_hdl");
    rmca_nb_wait_proc(-1);
    RMCA_CHECK(rmc_mutex_unlock(h->m, mutex, r), "ARMCIX_Unlock_hdl(mutex %d, proc %d)", mutex,
               proc);
    RMCA_SERIAL();
    int i = held_at(h, mutex, proc);
    if (i >= 0)
        h->held[i] = h->held[--h->nheld];
}
