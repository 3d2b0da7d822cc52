/* Attentive waiting, agreement and the barrier: every place where comm waits for other ranks
 * keeps serving active messages (the layers' full polls), with or without a progress thread. */
#define _GNU_SOURCE
#include "config.h"
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
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
    if (rmci_info_.initialized && !rmci_in_handler_) /* (a handler's waits serve nothing) */
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

int rmci_oversubscribed(void)
{
    return rmci.oversubscribed;
}

rmc_status_t rmci_wait(MPI_Request *req, const char *where)
{
    return wait_loop(req, where, rmci_wait_round);
}

rmc_status_t rmci_wait_top(MPI_Request *req, const char *where)
{
    return wait_loop(req, where, rmci_wait_round_top);
}

/* rmci_wait whose rounds let this rank's other threads in (rmci_agree_pausing). */
static void wait_round_pausing(unsigned *spins)
{
    rmci_wait_round(spins);
    rmci_mt_pause();
}
static rmc_status_t wait_pausing(MPI_Request *req, const char *where)
{
    return wait_loop(req, where, wait_round_pausing);
}

typedef rmc_status_t (*wait_fn)(MPI_Request *req, const char *where);

__thread int rmci_in_handler_ __attribute__((tls_model("initial-exec")));

/* rmci_agree_vals, waiting with `wait` (rmci_wait inside comm, rmci_wait_top for rmc_agree). `fn`
 * names the caller for the message of a failure elsewhere (NULL: none, the caller words it). */
static rmc_status_t agree(MPI_Comm comm, rmc_status_t st, long long *vals, int n, wait_fn wait,
                          const char *where, const char *fn)
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
    if (s2 == RMC_OK && (s2 = wait(&rq, where)) != RMC_OK) {
        /* the test failed, not the reduction, which the other members complete: in and out must
         * outlive it (tests made directly, not faulted; a failing one gives up), and once it has
         * completed its outcome is this rank's too, so every member takes the same branch (the
         * test's message stays in rmc_last_error) */
        unsigned spins = 0;
        int done = 0;
        while (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
            rmci_wait_round(&spins);
        if (done)
            s2 = RMC_OK;
    }
    if (s2 != RMC_OK)
        return s2;
    for (int i = 0; i < n; i++)
        vals[i] = out[i + 1];
    rmc_status_t all = (rmc_status_t)out[0];
    if (st == RMC_OK && all != RMC_OK && fn) /* this rank's own failure keeps its message */
        rmci_fail(all, fn, "failed on another rank: %s", rmc_status_string(all));
    return all;
}

rmc_status_t rmci_agree_vals(MPI_Comm comm, rmc_status_t st, long long *vals, int n, const char *fn)
{
    return agree(comm, st, vals, n, rmci_wait, __func__, fn);
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

rmc_status_t rmci_agree_pausing(MPI_Comm comm, rmc_status_t st, const char *fn)
{
    return agree(comm, st, NULL, 0, wait_pausing, __func__, fn);
}

rmc_status_t rmci_agree_vals_pausing(MPI_Comm comm, rmc_status_t st, long long *vals, int n,
                                     const char *fn)
{
    return agree(comm, st, vals, n, wait_pausing, __func__, fn);
}

rmc_status_t rmci_barrier_pausing(MPI_Comm comm, const char *where)
{
    return barrier(comm, wait_pausing, where);
}

rmc_status_t rmc_agree(rmc_status_t status)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (status > 0) /* not a status: still agree (the others are waiting), as a failure */
        status = rmci_fail(RMC_ERR_ARG, __func__, "%d is not an RMC status (RMC_OK or negative)",
                           (int)status);
    return agree(rmci_info_.comm, status, NULL, 0, rmci_wait_top, __func__,
                 NULL); /* (the
                         * application words its own failures) */
}

rmc_status_t rmc_progress(void)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    rmci_poll_full();
    rmci_custom_poll();
    return RMC_OK;
}

/* ------------------------------------------------------------------ rmc_barrier --- */

/* When ranks share a node, rmc_barrier meets them on these words of a segment of RMC's own shared
 * memory (shm.c, made at rmc_init), each word on a cache-line pair of its own (the adjacent-line
 * prefetcher moves lines in pairs). In barrier e (1, 2, ...) of a node of ns ranks every rank adds
 * 1 to `arrived`. On one node each then waits until `arrived` reaches e * ns. On several, the
 * leader (node rank 0) waits for that, meets the other leaders in an MPI barrier, writes its
 * outcome to `status` and e to `released`, which the node's other ranks wait for. The counters
 * never wrap (64 bits), so nothing is reset and no sense reverses: a rank that leaves barrier e
 * first may add its arrival for e + 1 while a slower one still reads `arrived`, whose test (>= e *
 * ns) stays true.
 *
 * Ordering: the arrival is a seq_cst read-modify-write, so it releases everything the rank did
 * before (plain stores to node-local memory included), and every later arrival of the node
 * continues its release sequence; the waits' loads acquire. On one node, a rank that sees e * ns
 * arrivals has synchronized with every rank's arrival. On several, the leader's acquire of
 * `arrived` and release of `released` carry its node's writes to its node's ranks, and the
 * leaders' MPI barrier orders the nodes (whose writes to each other were completed by the fence
 * before the barrier, as with one MPI barrier of every rank). */
#define RMCI_BAR_LINE 128

typedef struct rmci_bar_words {
    _Alignas(RMCI_BAR_LINE) _Atomic uint64_t arrived;
    _Alignas(RMCI_BAR_LINE) _Atomic uint64_t released;
    _Atomic int status; /* rmc_status_t of the leaders' barrier of `released` */
} rmci_bar_words_t;

/* A waiting round of rmc_barrier: rmci_wait_round_top (active messages, custom requests, this
 * rank's other threads), and a yield at every round when ranks outnumber processors, not only after
 * 64: in a barrier some rank is still to come, and it may need this rank's processor. */
static void bar_round(unsigned *spins)
{
    int early = *spins < 64; /* rmci_wait_round yields from its 65th round on */
    rmci_wait_round_top(spins);
    if (early && rmci.oversubscribed)
        sched_yield();
}

static rmc_status_t bar_mpi_wait(MPI_Request *req, const char *where)
{
    return wait_loop(req, where, bar_round);
}

/* Waits until *word >= v, a waiting round between two looks. A look is a load, where the MPI
 * barrier's rounds had an MPI_Test (~55 ns here): active messages are served as often. More looks
 * per round (with or without a pause, ~38 ns here) measured no faster. */
static void bar_wait(_Atomic uint64_t *word, uint64_t v)
{
    unsigned spins = 0;
    while (atomic_load_explicit(word, memory_order_acquire) < v)
        bar_round(&spins);
}

/* rmc_barrier of a rank whose node has several ranks (the words). */
static rmc_status_t node_barrier(const char *where)
{
    rmci_bar_t *b = &rmci.bar;
    rmci_bar_words_t *w = b->w;
    uint64_t e = ++b->epoch;
    atomic_fetch_add_explicit(&w->arrived, 1, memory_order_seq_cst);
    if (rmci_info_.node_count == 1) {
        bar_wait(&w->arrived, e * (uint64_t)rmci_info_.node_size);
        return RMC_OK;
    }
    if (rmci.node_rank == 0) {
        bar_wait(&w->arrived, e * (uint64_t)rmci_info_.node_size);
        /* the node is in: the leaders meet; the node is released whatever the outcome (its ranks
         * would wait forever), and learns it */
        rmc_status_t st = barrier(b->comm, bar_mpi_wait, where);
        atomic_store_explicit(&w->status, (int)st, memory_order_relaxed);
        atomic_store_explicit(&w->released, e, memory_order_release);
        return st;
    }
    bar_wait(&w->released, e);
    /* written before `released`; the leader writes it again only after this rank's next arrival */
    rmc_status_t st = (rmc_status_t)atomic_load_explicit(&w->status, memory_order_relaxed);
    return st == RMC_OK ? RMC_OK
                        : rmci_fail(st, where,
                                    "the MPI barrier among node leaders failed on this "
                                    "node's leader (node rank 0)");
}

rmc_status_t rmc_barrier(void)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    rmc_status_t st = rmci_fence(-1);
    rmci_custom_poll(); /* once in any case: a barrier of one rank has no waiting round */
    atomic_thread_fence(memory_order_seq_cst);
    /* the barrier goes on whatever the fence returned: a rank that skipped it would hang the
     * others; the fence's failure is reported afterwards */
    rmci_keep(&st,
              rmci.bar.w ? node_barrier(__func__) : barrier(rmci.bar.comm, bar_mpi_wait, __func__));
    atomic_thread_fence(memory_order_seq_cst);
    return rmci_in(st, __func__);
}

/* Sets up rmc_barrier's hierarchy: the node words and the leaders' communicator. A segment that
 * cannot be made or mapped anywhere (nor a leaders' communicator) is no failure: every rank then
 * uses the MPI barrier of all ranks (RMC_VERBOSE prints why). Only a failed agreement is fatal. */
rmc_status_t rmci_barrier_setup(void)
{
    rmci_bar_t *b = &rmci.bar;
    MPI_Comm all = rmci_info_.comm;
    int ns = rmci_info_.node_size, leader = rmci.node_rank == 0;
    int knob = rmci_env_tri("RMC_SHM_BARRIER");
    b->w = NULL;
    b->comm = all;
    b->owned = 0;
    b->epoch = 0;
    rmc_status_t st = RMC_OK;
    if (knob < 0)
        st = rmci_fail(RMC_ERR_ARG, "rmc_init", "RMC_SHM_BARRIER=%s (1, 0 or auto)",
                       rmc_knob_value("RMC_SHM_BARRIER"));
    /* 1. a node of several ranks exists (node_count is the same everywhere), the knob allows */
    long long use = knob != 0 && rmci_info_.node_count < rmci_info_.nranks;
    st = rmci_agree_vals(all, st, &use, 1, "rmc_init");
    if (st != RMC_OK || !use)
        return st;
    /* 2. the leader of a node of several ranks makes the segment, the others map it */
    size_t len = sizeof(rmci_bar_words_t);
    if (ns > 1) {
        long long key = LLONG_MAX; /* agreement takes the minimum: the leader's key, -1 failed */
        if (leader) {
            key = -1;
            if (rmci_shm_create(len, &b->shm, "rmc_init") == RMC_OK) {
                key = (long long)b->shm.key; /* pid << 32 | sequence: positive */
                close(b->shm.fd);            /* no commits: the mapping is enough */
                b->shm.fd = -1;
            }
        }
        st = rmci_agree_vals(rmci.node_comm, st, &key, 1, "rmc_init");
        char *p = NULL;
        if (st == RMC_OK && !leader && key >= 0 &&
            rmci_shm_attach((unsigned long long)key, len, &p, "rmc_init") == RMC_OK) {
            b->shm.map = p;
            b->shm.len = len;
        }
    }
    /* 3. used only if every node of several ranks has its words on every rank */
    long long ok = ns == 1 || b->shm.map != NULL;
    st = rmci_agree_vals(all, st, &ok, 1, "rmc_init");
    rmci_shm_unlink(&b->shm); /* every member has tried to map it: the name goes (leader's) */
    /* 4. the leaders' communicator, when there are several nodes */
    if (st == RMC_OK && ok && rmci_info_.node_count > 1) {
        MPI_Comm lc = MPI_COMM_NULL;
        rmc_status_t s2 =
            RMCI_MPI_ST(MPI_Comm_split, (all, leader ? 0 : MPI_UNDEFINED, rmci_info_.rank, &lc));
        if (s2 == RMC_OK && lc != MPI_COMM_NULL)
            rmci_res_count(RMCI_RES_COMM, 1);
        b->comm = s2 == RMC_OK ? lc : MPI_COMM_NULL;
        b->owned = 1;
        ok = s2 == RMC_OK;
        st = rmci_agree_vals(all, st, &ok, 1, "rmc_init");
    } else if (st == RMC_OK && ok) {
        b->comm = MPI_COMM_NULL; /* one node: no MPI part */
    }
    if (st == RMC_OK && ok) {
        b->w = ns > 1 ? (rmci_bar_words_t *)(void *)b->shm.map : NULL;
        return RMC_OK;
    }
    rmci_barrier_release(); /* fall back to the MPI barrier of every rank */
    b->comm = all;
    return st;
}

void rmci_barrier_release(void)
{
    rmci_bar_t *b = &rmci.bar;
    if (b->owned)
        rmci_comm_free(&b->comm);
    if (b->shm.map || b->shm.named)
        rmci_shm_destroy(&b->shm);
    b->w = NULL;
    b->comm = MPI_COMM_NULL;
    b->owned = 0;
    b->shm.map = NULL;
    b->shm.fd = -1;
    b->shm.named = 0;
}
