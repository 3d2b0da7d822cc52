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
 * holding thread; another thread of the rank takes a ticket and waits like any other rank.
 *
 * A ticket once taken is always served, even when the lock fails after taking it (its polls of the
 * word fail: an MPI failure): the lock retries the poll a few times, then gives the ticket up
 * (abandoned) and returns the error. Every abandoned ticket stays on this rank's list `gone` (its
 * record allocated before the fetch-add, so recording cannot fail) until the word's served half
 * reaches it; then this rank adds 1 to the served half, exactly as the holder's unlock would, and
 * drops it. The list is served by every mutex call of the rank and by every round of every waiting
 * loop of RMC (the amo layer's full poll: rmci_mutex_serve_gone), so the turn passes on as soon as
 * it comes and the rank is inside RMC, as a holder's unlock would; no other rank's progress depends
 * on anything else. Only a rank that never enters RMC again (or whose every transfer to the host
 * fails) holds the line up, as a holder that never unlocks would. */
#define _GNU_SOURCE
#include "config.h"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
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

/* An abandoned ticket (above): served when the word's served half reaches `ticket`. */
struct gone {
    struct rmc_mutex *m;
    int idx, rank;
    uint32_t ticket;
    struct gone *next;
};
static struct gone *gone;
void rmci_mutex_serve_gone(void); /* (also the amo layer's full poll, amo.c) */
static int gone_busy; /* rmci_mutex_serve_gone is running (its AMOs may poll: not re-entered) */

/* Drops the abandoned tickets of m (NULL: all). */
static void gone_drop(struct rmc_mutex *m)
{
    for (struct gone **pp = &gone; *pp;) {
        struct gone *g = *pp;
        if (!m || g->m == m) {
            *pp = g->next;
            free(g);
        } else {
            pp = &g->next;
        }
    }
}

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
    st = rmci_agree_pausing(RMCI.comm, st, fn); /* (nothing shared has changed yet) */
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
    st = rmci_agree(RMCI.comm, st, fn);
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
    st = rmci_agree_pausing(RMCI.comm, st, __func__); /* (nothing shared has changed yet) */
    if (st != RMC_OK)
        return st;
    rmci_mutex_serve_gone();
    gone_drop(m); /* (no rank holds or waits for one of the set: any turn left has come) */
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

/* Passes on every abandoned ticket whose turn has come (the served half equals it): adds 1 to the
 * served half as unlock does. A failed load or add leaves the record for the next call. It runs
 * inside other calls (polls): the failures it meets are not theirs, so the thread's last error and
 * failure count are left as they were. (Its atomics count in rmc_op_counts; a list exists only
 * after a failed lock.) */
void rmci_mutex_serve_gone(void)
{
    if (!gone || gone_busy)
        return;
    gone_busy = 1;
    char saved[RMCI_ERRMSG];
    unsigned long nerr = rmci_error_save(saved);
    for (struct gone **pp = &gone; *pp;) {
        struct gone *g = *pp;
        void *w = word_of(g->m, g->idx, g->rank);
        int64_t cur;
        if (rmc_amo_load_i64(w, &cur, g->rank) == RMC_OK && (uint32_t)(uint64_t)cur == g->ticket) {
            uint64_t inc = g->ticket == UINT32_MAX ? (uint64_t)1 - TICKET : 1;
            if (rmc_amo_add_i64(w, (int64_t)inc, g->rank) == RMC_OK) {
                *pp = g->next;
                free(g);
                continue;
            }
        }
        pp = &g->next;
    }
    rmci_error_restore(saved, nerr);
    gone_busy = 0;
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

#define LOCK_POLL_TRIES                                                                            \
    4 /* failed polls of the word in a row before a lock gives its ticket up                       \
       */

rmc_status_t rmc_mutex_lock(rmc_mutex_h m, int idx, int rank)
{
    RMCI_SERIAL();
    const char *fn = __func__;
    size_t slot;
    rmc_status_t st = check(m, idx, rank, &slot, fn);
    if (st != RMC_OK)
        return st;
    if (m->holder[slot] == self_id())
        return rmci_fail(RMC_ERR_STATE, fn, "mutex %d of rank %d is held by this thread", idx,
                         rank);
    rmci_mutex_serve_gone();
    /* the record of an abandoned ticket, taken before the ticket: giving it up cannot fail */
    struct gone *g = malloc(sizeof(*g));
    if (!g)
        return rmci_fail(RMC_ERR_NOMEM, fn, "mutex %d of rank %d: a ticket's record", idx, rank);
    void *w = word_of(m, idx, rank);
    int64_t old;
    st = rmc_amo_fetch_add_i64(w, (int64_t)TICKET, &old, rank);
    if (st != RMC_OK) {
        free(g);
        return rmci_in(st, fn); /* no ticket taken (unless MPI applied it and a later step
                                 * failed: a limit the header states) */
    }
    uint32_t mine = (uint32_t)((uint64_t)old >> 32);
    int cheap = rmc_amo_mode() == RMC_AMO_MODE_THREAD && rmc_same_node(rank) == 1;
    unsigned k = 0;
    int failed = 0;
    while ((uint32_t)(uint64_t)old != mine) {
        backoff(&k, cheap);
        st = rmc_amo_load_i64(w, &old, rank);
        if (st == RMC_OK) {
            failed = 0;
            continue;
        }
        if (++failed < LOCK_POLL_TRIES) {
            old = (int64_t)((uint64_t)mine + 1); /* (not our turn: poll again) */
            continue;
        }
        /* the ticket is given up, never left outstanding: this rank passes the turn on when it
         * comes (rmci_mutex_serve_gone, above) */
        *g = (struct gone){m, idx, rank, mine, gone};
        gone = g;
        char why[256];
        snprintf(why, sizeof why, "%s", rmc_last_error());
        return rmci_fail(st, fn,
                         "mutex %d of rank %d: polling its word failed %d times in a row (%s); "
                         "ticket %u given up (this rank passes its turn on when it comes)",
                         idx, rank, LOCK_POLL_TRIES, why, mine);
    }
    free(g);
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
    rmci_mutex_serve_gone();
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
    /* A ticket this rank gave up is passed on when its turn comes (the amo layer's poll, still
     * up here): a rank waiting behind it joins this barrier only once served, so after it every
     * turn left has come. The regions go with rmc_finalize's sweep. */
    (void)rmci_attentive_barrier(rmci_info_.comm, "rmc_finalize");
    gone_drop(NULL);
    while (live) {
        struct rmc_mutex *m = live;
        live = m->next;
        mutex_release(m);
    }
}
