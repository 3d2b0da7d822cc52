/* Mutexes (include/rmc/amo.h): a ticket lock per mutex, one 64-bit word in a region (one cache line
 * per mutex): high 32 bits = next ticket, low 32 bits = ticket now served. lock:    t =
 * fetch_add(word, 1 << 32); wait until low32(word) == high32(t)   (FIFO: fair) unlock:  add 1 to
 * the low half without carrying into the high half: the holder knows the served value (its ticket),
 * so at the wrap (0xffffffff) it adds 1 - 2^32 instead of 1. trylock: compare-and-swap from a free
 * state (low == high) to high + 1. Waiters poll the word with the AMOs of the mode in force,
 * backing off exponentially (spinning briefly for node-local words) and serving active messages
 * between polls, so a waiter never blocks the progress of others. Which mutexes this rank holds
 * (by which of its threads, with which ticket) is tracked locally: unlock of a mutex the rank does
 * not hold is refused (RMC_ERR_STATE) without touching the word, and so is a second lock by the
 * holding thread; another thread of the rank takes a ticket and waits like any other rank. */
#define _GNU_SOURCE
#include "config.h"
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../rmci.h"
#include "rmc/amo.h"

#define MUTEX_MAGIC  0x4d555458u
#define MUTEX_STRIDE 64
#define TICKET       ((uint64_t)1 << 32)

struct rmc_mutex {
    uint32_t magic;
    rmc_region_h region;
    int *count;       /* [nranks] mutexes hosted by each rank */
    char **base;      /* [nranks] their words' base address */
    size_t *first;    /* [nranks] index of rank's first mutex in held/ticket */
    unsigned long *holder; /* the holding thread of this rank (pthread_self), 0: not held */
    uint32_t *ticket; /* this rank's ticket of a held mutex */
    struct rmc_mutex *next;
};

static struct rmc_mutex *live;

static void mutex_release(struct rmc_mutex *m)
{
    free(m->count);
    free(m->base);
    free(m->first);
    free(m->holder);
    free(m->ticket);
    m->magic = 0;
    free(m);
}

/* Is m a live set? Compares pointers only: a destroyed handle is never dereferenced. */
static int mutex_live(rmc_mutex_h m)
{
    for (struct rmc_mutex *p = live; p; p = p->next)
        if (p == m)
            return 1;
    return 0;
}

/* Every rank's count, base and first slot from the set's region. */
static void mutex_layout(struct rmc_mutex *m, void **bases)
{
    int n = RMCI.nranks;
    for (int r = 0; r < n; r++) {
        size_t sz = 0;
        rmc_region_base(m->region, r, NULL, &sz);
        m->count[r] = (int)(sz / MUTEX_STRIDE);
        m->base[r] = bases[r];
        m->first[r + 1] = m->first[r] + (size_t)m->count[r];
    }
}

rmc_status_t rmc_mutex_create(int count, rmc_mutex_h *out)
{
    RMCI_SERIAL();
    const char *fn = __func__;
    RMCI_CHECK_INIT(fn);
    if (out)
        *out = NULL;
    int n = RMCI.nranks;
    rmc_status_t st = RMC_OK;
    if (count < 0)
        st = rmci_fail(RMC_ERR_ARG, fn, "count %d < 0", count);
    else if (!out)
        st = rmci_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    struct rmc_mutex *m = rmci_calloc(1, sizeof(*m));
    void **bases = rmci_malloc((size_t)n * sizeof(void *));
    if (m) {
        m->count = rmci_calloc((size_t)n, sizeof(int));
        m->base = rmci_calloc((size_t)n, sizeof(char *));
        m->first = rmci_calloc((size_t)n + 1, sizeof(size_t));
    }
    if (st == RMC_OK && (!m || !m->count || !m->base || !m->first || !bases))
        st = rmci_fail(RMC_ERR_NOMEM, fn, "mutex tables for %d ranks", n);
    st = rmci_agree_pausing(RMCI.comm, st); /* (nothing shared has changed yet) */
    if (st == RMC_OK)
        st = rmc_region_alloc((size_t)count * MUTEX_STRIDE, bases, &m->region); /* agreed */
    if (st != RMC_OK)
        goto fail;
    mutex_layout(m, bases);
    size_t total = m->first[n];
    m->holder = rmci_calloc(total ? total : 1, sizeof(unsigned long));
    m->ticket = rmci_calloc(total ? total : 1, sizeof(uint32_t));
    if (!m->holder || !m->ticket)
        st = rmci_fail(RMC_ERR_NOMEM, fn, "state of %zu mutexes", total);
    st = rmci_agree(RMCI.comm, st);
    if (st != RMC_OK) {
        rmc_region_free(m->region);
        goto fail;
    }
    free(bases);
    m->magic = MUTEX_MAGIC;
    m->next = live;
    live = m;
    *out = m;
    return RMC_OK;
fail:
    free(bases);
    if (m)
        mutex_release(m);
    return st;
}

rmc_status_t rmc_mutex_destroy(rmc_mutex_h m)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    rmc_status_t st = RMC_OK;
    if (!m || !mutex_live(m))
        st = rmci_fail(RMC_ERR_HANDLE, __func__, "mutex set %p is not live", (void *)m);
    else
        for (size_t i = 0; i < m->first[RMCI.nranks] && st == RMC_OK; i++)
            if (m->holder[i])
                st = rmci_fail(RMC_ERR_STATE, __func__, "this rank holds a mutex of the set");
    st = rmci_agree_pausing(RMCI.comm, st); /* (nothing shared has changed yet) */
    if (st != RMC_OK)
        return st;
    for (struct rmc_mutex **pp = &live; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    st = rmc_region_free(m->region);
    mutex_release(m);
    return st;
}

static rmc_status_t check(rmc_mutex_h m, int idx, int rank, size_t *slot, const char *fn)
{
    RMCI_CHECK_INIT(fn);
    if (!m || !mutex_live(m))
        return rmci_fail(RMC_ERR_HANDLE, fn, "mutex set %p is not live", (void *)m);
    if (rank < 0 || rank >= RMCI.nranks)
        return rmci_bad_rank(fn, rank);
    if (idx < 0 || idx >= m->count[rank])
        return rmci_fail(RMC_ERR_ARG, fn, "mutex %d outside [0, %d) of rank %d", idx,
                         m->count[rank], rank);
    *slot = m->first[rank] + (size_t)idx;
    return RMC_OK;
}

static inline unsigned long self_id(void)
{
    return (unsigned long)pthread_self();
}

static inline void *word_of(rmc_mutex_h m, int idx, int rank)
{
    return m->base[rank] + (size_t)idx * MUTEX_STRIDE;
}

/* One back-off step of a waiter: short spins for node-local words in thread mode, then sleeps
 * growing to 64 us; active messages are served in between. */
static void backoff(unsigned *k, int cheap)
{
    unsigned s = (*k)++;
    rmci_poll_full();
    if (cheap && s < 6) {
        for (int i = 0; i < (1 << s); i++)
            __builtin_ia32_pause();
        rmci_mt_pause(); /* the holder may be a thread of this rank */
        return;
    }
    /* yields and sleeps outside RMC's thread lock: the holder may be a thread of this rank */
    int out = rmci_mt_release();
    if (cheap && s < 10) {
        sched_yield();
    } else {
        unsigned e = cheap ? s - 10 : s;
        long ns = e >= 6 ? 64000 : 1000L << e;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
    }
    rmci_mt_reacquire(out);
}

rmc_status_t rmc_mutex_lock(rmc_mutex_h m, int idx, int rank)
{
    RMCI_SERIAL();
    size_t slot;
    rmc_status_t st = check(m, idx, rank, &slot, __func__);
    if (st != RMC_OK)
        return st;
    if (m->holder[slot] == self_id())
        return rmci_fail(RMC_ERR_STATE, __func__, "mutex %d of rank %d is held by this thread", idx,
                         rank);
    void *w = word_of(m, idx, rank);
    int64_t old;
    st = rmc_amo_fetch_add_i64(w, (int64_t)TICKET, &old, rank);
    if (st != RMC_OK)
        return st;
    uint32_t mine = (uint32_t)((uint64_t)old >> 32);
    int cheap = rmc_amo_mode() == RMC_AMO_MODE_THREAD && rmc_same_node(rank) == 1;
    unsigned k = 0;
    while ((uint32_t)(uint64_t)old != mine) {
        backoff(&k, cheap);
        st = rmc_amo_load_i64(w, &old, rank);
        if (st != RMC_OK)
            return st; /* cannot happen once the fetch-add succeeded, short of an MPI failure */
    }
    m->holder[slot] = self_id();
    m->ticket[slot] = mine;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return RMC_OK;
}

rmc_status_t rmc_mutex_trylock(rmc_mutex_h m, int idx, int rank, int *acquired)
{
    RMCI_SERIAL();
    if (acquired)
        *acquired = 0;
    size_t slot;
    rmc_status_t st = check(m, idx, rank, &slot, __func__);
    if (st != RMC_OK)
        return st;
    if (!acquired)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL acquired pointer");
    if (m->holder[slot] == self_id())
        return rmci_fail(RMC_ERR_STATE, __func__, "mutex %d of rank %d is held by this thread", idx,
                         rank);
    void *w = word_of(m, idx, rank);
    int64_t cur, old;
    st = rmc_amo_load_i64(w, &cur, rank);
    if (st != RMC_OK)
        return st;
    uint64_t u = (uint64_t)cur;
    if ((uint32_t)u != (uint32_t)(u >> 32))
        return RMC_OK; /* held or queued */
    st = rmc_amo_cas_i64(w, cur, (int64_t)(u + TICKET), &old, rank);
    if (st != RMC_OK)
        return st;
    if (old == cur) {
        m->holder[slot] = self_id();
        m->ticket[slot] = (uint32_t)(u >> 32);
        *acquired = 1;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
    return RMC_OK;
}

rmc_status_t rmc_mutex_unlock(rmc_mutex_h m, int idx, int rank)
{
    RMCI_SERIAL();
    size_t slot;
    rmc_status_t st = check(m, idx, rank, &slot, __func__);
    if (st != RMC_OK)
        return st;
    if (!m->holder[slot])
        return rmci_fail(RMC_ERR_STATE, __func__, "mutex %d of rank %d is not held by this rank",
                         idx, rank);
    /* release: everything done in the critical section is complete before the next holder enters */
    st = rmc_fence_all();
    if (st != RMC_OK)
        return st;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint64_t inc = m->ticket[slot] == UINT32_MAX ? (uint64_t)1 - TICKET : 1;
    st = rmc_amo_add_i64(word_of(m, idx, rank), (int64_t)inc, rank);
    if (st != RMC_OK)
        return st;
    m->holder[slot] = 0;
    return RMC_OK;
}

void rmci_mutex_shutdown(void)
{
    /* the regions go with rmc_finalize's sweep */
    while (live) {
        struct rmc_mutex *m = live;
        live = m->next;
        mutex_release(m);
    }
}
