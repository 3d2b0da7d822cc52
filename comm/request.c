/* Requests of non-blocking operations: a pool of records, rmc_wait / rmc_test / rmc_wait_all.
 * A request holds up to two MPI requests and an optional completion callback (unpack, flush). */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include "core.h"

#define SLAB 256
typedef struct slab {
    struct slab *next;
    struct rmc_request reqs[SLAB];
} slab_t;
static slab_t *slabs;
/* Every slab's address in ascending order (binary search of in_pool: a handle check costs
 * O(log slabs) however many requests were once outstanding). */
static slab_t **sorted;
static size_t nsorted, capsorted;

static int sorted_add(slab_t *s)
{
    if (nsorted == capsorted) {
        size_t cap = capsorted ? 2 * capsorted : 16;
        slab_t **n = realloc(sorted, cap * sizeof *n);
        if (!n)
            return 0;
        sorted = n;
        capsorted = cap;
    }
    size_t i = nsorted;
    while (i > 0 && (uintptr_t)sorted[i - 1] > (uintptr_t)s) {
        sorted[i] = sorted[i - 1];
        i--;
    }
    sorted[i] = s;
    nsorted++;
    return 1;
}
/* Free requests, first in first out: a released request is handed out again only after every
 * other free one, so a copy of its handle kept after rmc_wait / rmc_test gives RMC_ERR_HANDLE
 * (not live) for as long as that takes, rather than completing a later operation's request. */
static struct rmc_request *free_reqs, *free_tail;
static struct rmc_request *customs; /* unfinished custom requests */
static int custom_polling;          /* rmci_custom_poll is running: never re-entered */

static struct rmc_request *poll_next; /* rmci_custom_poll's next request (custom_unlink moves it) */

static void custom_unlink(struct rmc_request *q)
{
    if (q == poll_next) /* (a step finished or released the request the poll would step next) */
        poll_next = q->cnext;
    if (q->cprev)
        q->cprev->cnext = q->cnext;
    else if (customs == q)
        customs = q->cnext;
    if (q->cnext)
        q->cnext->cprev = q->cprev;
    q->cprev = q->cnext = NULL;
}

struct rmc_request *rmci_req_alloc(void)
{
    if (!free_reqs) {
        slab_t *s = rmci_calloc(1, sizeof(*s));
        if (!s)
            return NULL;
        if (!sorted_add(s)) {
            free(s);
            return NULL;
        }
        s->next = slabs;
        slabs = s;
        for (int i = SLAB - 1; i >= 0; i--) {
            s->reqs[i].magic = RMCI_REQ_FREE;
            s->reqs[i].next_free = free_reqs;
            free_reqs = &s->reqs[i];
        }
        free_tail = &s->reqs[SLAB - 1];
    }
    struct rmc_request *q = free_reqs;
    free_reqs = q->next_free;
    if (!free_reqs)
        free_tail = NULL;
    q->magic = RMCI_REQ_MAGIC;
    q->nmpi = 0;
    q->mpi[0] = q->mpi[1] = MPI_REQUEST_NULL;
    q->on_complete = NULL;
    q->win = MPI_WIN_NULL;
    q->early_st = RMC_OK;
    q->cb_data = NULL;
    q->cb_buf = NULL;
    q->custom = NULL;
    q->custom_state = NULL;
    q->custom_done = 0;
    q->custom_running = 0;
    q->custom_status = RMC_OK;
    q->cprev = q->cnext = NULL;
    q->rd_region = NULL;
    q->next_free = NULL;
    return q;
}

void rmci_req_release(struct rmc_request *q)
{
    if (q->magic == RMCI_REQ_FREE) /* released already: never on the free list twice */
        return;
    if (q->custom)
        custom_unlink(q);
    free(q->cb_buf);
    q->cb_buf = NULL;
    q->on_complete = NULL;
    q->magic = RMCI_REQ_FREE;
    q->next_free = NULL;
    if (free_tail)
        free_tail->next_free = q;
    else
        free_reqs = q;
    free_tail = q;
}

void rmci_req_pool_destroy(void)
{
    while (slabs) {
        slab_t *n = slabs->next;
        for (int i = 0; i < SLAB; i++)
            free(slabs->reqs[i].cb_buf);
        free(slabs);
        slabs = n;
    }
    free_reqs = free_tail = NULL;
    customs = NULL;
    free(sorted);
    sorted = NULL;
    nsorted = capsorted = 0;
}

/* Runs the completion callback (or returns the outcome it had at rmc_region_free), releases q. */
static rmc_status_t req_finish(struct rmc_request *q, const char *fn)
{
    rmc_status_t st = q->early_st;
    if (q->on_complete) {
        unsigned long nerr = rmci_error_count();
        st = q->on_complete(q);
        /* a completion that recorded its failure keeps that message; one that only returns the
         * target's verdict (an active message's answer) gets its own, not an older unrelated one */
        if (st != RMC_OK)
            st = rmci_error_count() != nerr
                     ? rmci_in(st, fn)
                     : rmci_fail(st, fn, "the operation failed at its target: %s",
                                 rmc_status_string(st));
    } else if (st != RMC_OK) /* (its own message was recorded then, by rmc_region_free) */
        st = rmci_fail(st, fn, "the operation failed when rmc_region_free completed it: %s",
                       rmc_status_string(st));
    if (q->rd_region && st == RMC_OK)
        rmci_req_read_done(q); /* the get has arrived: its pair's read mark may go */
    rmci_req_release(q);
    return st;
}

void rmci_req_region_freed(rmci_region_t *r)
{
    MPI_Win w = r->hot.win;
    for (slab_t *s = slabs; s; s = s->next)
        for (int i = 0; i < SLAB; i++) {
            struct rmc_request *q = &s->reqs[i];
            if (q->magic != RMCI_REQ_MAGIC)
                continue;
            if (q->rd_region == r)
                q->rd_region = NULL; /* its pair's records go with the region */
            if (w != MPI_WIN_NULL && q->on_complete && q->win == w) {
                q->early_st = q->on_complete(q);
                q->on_complete = NULL;
                q->win = MPI_WIN_NULL;
            }
        }
}

/* One step of a custom request (or its stored outcome once its function has finished). A request
 * whose function is running is not stepped again from a wait inside it (a function may wait for its
 * own sub-operations, e.g. on a failure path): it would finish twice. */
static rmc_status_t custom_step(struct rmc_request *q, int *done)
{
    if (q->custom_done) {
        *done = 1;
        return q->custom_status;
    }
    *done = 0;
    if (q->custom_running)
        return RMC_OK;
    q->custom_running = 1;
    rmc_status_t st = q->custom(q->custom_state, done);
    q->custom_running = 0;
    if (st != RMC_OK) /* the function is done with its state: never call it again */
        *done = 1;
    if (*done) {
        q->custom_done = 1;
        q->custom_status = st;
        custom_unlink(q);
    }
    return st;
}

void rmci_custom_poll(void)
{
    if (custom_polling || !customs)
        return;
    custom_polling = 1;
    for (struct rmc_request *q = customs; q; q = poll_next) {
        poll_next = q->cnext; /* (moved on by custom_unlink when a step unlinks that one) */
        int done;
        custom_step(q, &done);
    }
    poll_next = NULL;
    custom_polling = 0;
}

/* Tests a request: a custom one's step, else MPI_Testall of its MPI requests: RMC_OK and *done. */
static rmc_status_t req_test(struct rmc_request *q, int *done, const char *fn)
{
    if (q->custom)
        return custom_step(q, done);
    *done = 1;
    if (q->nmpi == 0)
        return RMC_OK;
    MPI_Status sts[2];
    int rc = RMCI_MPI_RC(MPI_Testall, (q->nmpi, q->mpi, done, sts));
    if (rc != MPI_SUCCESS)
        *done = 0; /* a failed test says nothing of completion: the operation may be under way */
    return rmci_mpi_status("MPI_Testall", fn, rc);
}

/* 1 when q is a record of the pool (read before anything of it: a pointer that never was a
 * request, e.g. an uninitialized handle, must not be dereferenced). */
static int in_pool(const struct rmc_request *q)
{
    size_t lo = 0, hi = nsorted; /* the last slab at or below q: sorted[lo - 1] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)sorted[mid] <= (uintptr_t)q)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    uintptr_t off = (uintptr_t)q - (uintptr_t)sorted[lo - 1]->reqs;
    return off < sizeof sorted[lo - 1]->reqs && off % sizeof(struct rmc_request) == 0;
}

static rmc_status_t check_req(rmc_request_h *req, const char *fn)
{
    RMCI_CHECK_INIT(fn);
    if (!req)
        return rmci_fail(RMC_ERR_ARG, fn, "NULL request pointer");
    if (*req && !in_pool(*req))
        return rmci_fail(RMC_ERR_HANDLE, fn,
                         "request %p is not a request of RMC (uninitialized or corrupted handle)",
                         (void *)*req);
    if (*req && (*req)->magic != RMCI_REQ_MAGIC)
        return rmci_fail(RMC_ERR_HANDLE, fn, "request %p is not live (completed or foreign)",
                         (void *)*req);
    return RMC_OK;
}

rmc_status_t rmc_wait(rmc_request_h *req)
{
    RMCI_SERIAL();
    rmc_status_t st = check_req(req, __func__);
    if (st != RMC_OK || !*req)
        return st;
    struct rmc_request *q = *req;
    RMCI_POLL();
    /* attentive: serve active messages while the operation completes */
    unsigned spins = 0;
    int done = 0;
    while ((st = req_test(q, &done, __func__)) == RMC_OK && !done)
        rmci_wait_round_top(&spins);
    if (st != RMC_OK && !done) {
        /* MPI failed while the operation may still use the request's buffers: leak them (the
         * request is gone for the caller) rather than free memory MPI may still write */
        q->magic = RMCI_REQ_LEAKED;
        *req = RMC_REQUEST_NULL;
        return st;
    }
    rmc_status_t s2 = req_finish(q, __func__);
    *req = RMC_REQUEST_NULL;
    return st != RMC_OK ? st : s2;
}

rmc_status_t rmc_test(rmc_request_h *req, int *done)
{
    RMCI_SERIAL();
    rmc_status_t st = check_req(req, __func__);
    if (st == RMC_OK && !done)
        st = rmci_fail(RMC_ERR_ARG, __func__, "NULL done pointer");
    if (done)
        *done = 0;
    if (st != RMC_OK)
        return st;
    if (!*req) {
        *done = 1;
        return RMC_OK;
    }
    RMCI_POLL();
    struct rmc_request *q = *req;
    int flag = 0;
    st = req_test(q, &flag, __func__);
    /* a failed MPI test leaves the request live; a custom request is done once it failed */
    if ((st != RMC_OK && !q->custom) || !flag)
        return st;
    *done = 1;
    rmc_status_t s2 = req_finish(q, __func__);
    *req = RMC_REQUEST_NULL;
    return st != RMC_OK ? st : s2;
}

/* rmc_finalize: completes every request still live, as rmc_wait would (a custom request's function
 * is called until it finishes, serving active messages between calls; MPI requests are waited and
 * the completion step, e.g. a strided get's unpack, is run) and releases it. The application's
 * handles of them are dead afterwards. Returns the first failure; *n = how many were live. */
static rmc_status_t complete_one(struct rmc_request *q, size_t *n, unsigned *spins,
                                 rmc_status_t st);

rmc_status_t rmci_req_complete_all(size_t *n)
{
    rmc_status_t st = RMC_OK;
    unsigned spins = 0;
    *n = 0;
    while (customs) /* their steps may start (and test) MPI requests of their own */
        rmci_wait_round_top(&spins);
    /* (a completion step may start requests of its own: in a new slab, at the front) */
    for (slab_t *first = NULL; first != slabs;) {
        first = slabs;
        for (slab_t *s = first; s; s = s->next)
            for (int i = 0; i < SLAB; i++)
                st = complete_one(&s->reqs[i], n, &spins, st);
    }
    return st;
}

/* rmci_req_complete_all's step for one slot: a live request is completed and released. */
static rmc_status_t complete_one(struct rmc_request *q, size_t *n, unsigned *spins, rmc_status_t st)
{
    if (q->magic != RMCI_REQ_MAGIC)
        return st;
    ++*n;
    int done = 0;
    rmc_status_t t;
    while ((t = req_test(q, &done, "rmc_finalize")) == RMC_OK && !done)
        rmci_wait_round_top(spins);
    rmci_keep(&st, t);
    if (t != RMC_OK && !done) { /* as rmc_wait: MPI may still use its buffers */
        q->magic = RMCI_REQ_LEAKED;
        return st;
    }
    rmci_keep(&st, req_finish(q, "rmc_finalize"));
    return st;
}

rmc_status_t rmc_wait_all(rmc_request_h *reqs, size_t n)
{
    /* no RMCI_SERIAL: each rmc_wait takes the lock and steps out of it while it waits */
    RMCI_CHECK_INIT(__func__);
    if (n > 0 && !reqs)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL request array with n = %zu", n);
    rmc_status_t st = RMC_OK;
    for (size_t i = 0; i < n; i++)
        rmci_keep(&st, rmc_wait(&reqs[i]));
    return st;
}

rmc_status_t rmc_request_custom(rmc_request_fn fn, void *state, rmc_request_h *req)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!req)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    *req = RMC_REQUEST_NULL;
    if (!fn)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL function");
    struct rmc_request *q = rmci_req_alloc();
    if (!q)
        return rmci_fail(RMC_ERR_NOMEM, __func__, "no memory for a request");
    q->custom = fn;
    q->custom_state = state;
    q->cnext = customs; /* unfinished: RMC's top-level waits advance it */
    if (customs)
        customs->cprev = q;
    customs = q;
    *req = q;
    return RMC_OK;
}
