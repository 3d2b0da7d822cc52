/* Conflict tracking (location consistency): what this origin has outstanding per (region, target)
 * pair, and the flushes that order conflicting operations.
 *
 * Each pair has a status byte (r->cs[target]: RMCI_CS_WRITE / ACC / READ outstanding, LISTED when
 * the pair is in the dirty list) and, once it has been used remotely, a small record (rmci_pair_t)
 * of its outstanding write and accumulate ranges. A later operation flushes the pair only when it
 * conflicts (rmci_conflicts):
 *   - with an outstanding write or accumulate, only when its range overlaps one of their ranges
 *     (MPI orders nothing between different locations: an accumulate still outstanding on one
 *     word and a get, put or fetching atomic of another need no flush between them);
 *   - an accumulate with outstanding accumulates of another element type (rmci_acc_kind), when
 *     the ranges overlap: additions of one type commute, of two types they do not (an int32 add
 *     wraps where an int64 add of the same word carries), and MPI orders neither;
 *   - with an outstanding read or active-message atomic (tracked per pair), always.
 * Ranges beyond RMCI_PAIR_RANGES are merged (the two closest become their hull): tracking stays
 * conservative, never misses a conflict. */
#include "config.h"
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include "core.h"

static int overlaps(rmci_range_t a, rmci_range_t b)
{
    return a.lo < b.hi && b.lo < a.hi;
}

/* The pair's record, allocated at first use (NULL when out of memory). */
static rmci_pair_t *pair_of(struct rmc_region *r, int target)
{
    rmci_pair_t *p = r->pair[target];
    if (RMCI_UNLIKELY(!p)) {
        p = rmci_calloc(1, sizeof(*p));
        r->pair[target] = p;
    }
    return p;
}

static void clear_pending(struct rmc_region *r, int target)
{
    r->cs[target] &= (uint8_t)~RMCI_CS_PENDING;
    rmci_pair_t *p = r->pair[target];
    if (p) {
        p->nw = p->na = 0;
        p->rreq = 0;
        p->rimp = 0;
        p->rgen++; /* the gets' requests marked before are complete: their counts are void */
    }
}

static rmci_quiet_fn am_quiet, am_fence;

void rmci_set_am_quiet(rmci_quiet_fn fn)
{
    am_quiet = fn;
}

void rmci_set_am_fence(rmci_quiet_fn fn)
{
    am_fence = fn;
}

/* Tests reqs[0..n) until all are complete (each becomes MPI_REQUEST_NULL), yielding the processor
 * after a short spin; no active message is served. The MPI code of a failed test, else
 * MPI_SUCCESS. */
static int test_yielding(MPI_Request *reqs, int n)
{
    for (unsigned spins = 0;; spins++) {
        int left = 0;
        for (int i = 0; i < n; i++) {
            if (reqs[i] == MPI_REQUEST_NULL)
                continue;
            int done = 0;
            int rc = RMCI_MPI_RC(MPI_Test, (&reqs[i], &done, MPI_STATUS_IGNORE));
            if (rc != MPI_SUCCESS)
                return rc;
            left += !done;
        }
        if (!left)
            return MPI_SUCCESS;
        if (spins > 16)
            sched_yield();
    }
}

/* Before a flush of (r, target) when ranks outnumber processing units: a one-byte get of the
 * target part's first byte (committed also in a reserved region: rmc_region_reserve commits the
 * first page), issued after the pair's operations and waited with yields. MPICH's flush spins
 * while the target, which may need this processor, serves the operations; the get is served after
 * them in practice (one endpoint), so the flush that follows finds little left. Advice only: the
 * flush still completes everything (this get too, when its test failed). */
static void flush_prewait(struct rmc_region *r, int target)
{
    static char sink; /* (not on the stack: a get whose test failed is completed by the flush) */
    MPI_Request rq = MPI_REQUEST_NULL;
    int mr = rmci_region_mrank(r, target);
    if (r->sizes[target] > 0 &&
        RMCI_MPI_RC(MPI_Rget, (&sink, 1, MPI_BYTE, mr, 0, 1, MPI_BYTE, r->hot.win, &rq)) ==
            MPI_SUCCESS &&
        test_yielding(&rq, 1) != MPI_SUCCESS && rq != MPI_REQUEST_NULL)
        (void)MPI_Request_free(&rq); /* the flush completes the get; its request is not kept */
}

/* The completion (`call`, MPI code rc) of a blocking operation of `kind` on `range`, issued after
 * rmci_order, failed: the operation must not outlive the call, so it is marked (a failed flush
 * leaves it to the next fence) and the pair flushed. Returns the failure, reported after the flush
 * so that its message stays the last. */
static rmc_status_t completion_failed(struct rmc_region *r, int target, unsigned kind,
                                      rmci_range_t range, const char *call, int rc,
                                      const char *where)
{
    (void)rmci_mark(r, target, kind, range);
    (void)rmci_flush(r, target);
    return rmci_mpi_fail(call, where, rc);
}

rmc_status_t rmci_wait_yielding(struct rmc_region *r, int target, unsigned kind, rmci_range_t range,
                                MPI_Request *reqs, int n, const char *where)
{
    RMCI_STAT(yielding_waits, 1);
    int rc = test_yielding(reqs, n);
    if (rc == MPI_SUCCESS)
        return RMC_OK;
    rmc_status_t st = completion_failed(r, target, kind, range, "MPI_Test", rc, where);
    for (int i = 0; i < n; i++) /* (the flush completed them: their requests are not kept) */
        if (reqs[i] != MPI_REQUEST_NULL)
            (void)MPI_Request_free(&reqs[i]);
    return st;
}

rmc_status_t rmci_flush(struct rmc_region *r, int target)
{
    RMCI_STAT(flushes, 1);
    if ((r->cs[target] & RMCI_CS_AM) && am_quiet) {
        rmc_status_t st = am_quiet(target);
        if (st != RMC_OK)
            return st; /* still pending: the next fence retries */
    }
    if (rmci.oversubscribed)
        flush_prewait(r, target);
    /* a failed flush leaves the pair pending: the next fence retries and reports it */
    RMCI_MPI(MPI_Win_flush, (rmci_region_mrank(r, target), r->hot.win));
    clear_pending(r, target);
    return RMC_OK;
}

static rmc_status_t conflict_flush(struct rmc_region *r, int target)
{
    RMCI_STAT(conflict_flushes, 1);
    return rmci_flush(r, target);
}

/* Does range overlap one of v[0..n-1]? n == 0 (ranges not recorded) counts as yes. */
static int hits(const rmci_range_t *v, int n, rmci_range_t range)
{
    for (int i = 0; i < n; i++)
        if (overlaps(v[i], range))
            return 1;
    return n == 0;
}

rmc_status_t rmci_order_slow(struct rmc_region *r, int target, unsigned kind, rmci_range_t range)
{
    rmci_pair_t *p = r->pair[target];
    if ((kind & r->cs[target] & RMCI_CS_ACC) &&
        (!p || (p->atag != rmci_kind_tag(kind) && hits(p->a, p->na, range))))
        return conflict_flush(r, target); /* an accumulate of another type on those bytes */
    unsigned c = r->cs[target] & rmci_conflicts[kind & RMCI_CS_PENDING];
    if (!c)
        return RMC_OK;
    if (c & (RMCI_CS_READ | RMCI_CS_AM))
        return conflict_flush(r, target);
    /* only outstanding writes and accumulates conflict: flush when the ranges overlap */
    if (!p || ((c & RMCI_CS_ACC) && hits(p->a, p->na, range)))
        return conflict_flush(r, target); /* (no record: assume the worst) */
    if ((c & RMCI_CS_WRITE) && hits(p->w, p->nw, range)) {
        p->waw |= (kind & RMCI_CS_WRITE) != 0;
        return conflict_flush(r, target);
    }
    return RMC_OK;
}

rmc_status_t rmci_order(struct rmc_region *r, int target, unsigned kind, rmci_range_t range)
{
    return rmci_order_(r, target, kind, range);
}

/* Adds a range to v[0..*n-1] (a pair's write or accumulate ranges), merging what it touches;
 * beyond RMCI_PAIR_RANGES the two closest ranges become one (their hull). */
static void add_range(rmci_range_t *v, int *n, rmci_range_t w)
{
    int o = 0;
    for (int i = 0; i < *n; i++) {
        rmci_range_t x = v[i];
        if (x.lo <= w.hi && w.lo <= x.hi) { /* overlapping or adjacent: absorb */
            w.lo = x.lo < w.lo ? x.lo : w.lo;
            w.hi = x.hi > w.hi ? x.hi : w.hi;
        } else {
            v[o++] = x;
        }
    }
    *n = o;
    if (*n == RMCI_PAIR_RANGES) {
        /* merge w into the range nearest to it */
        int best = 0;
        MPI_Aint gap = -1;
        for (int i = 0; i < *n; i++) {
            MPI_Aint g = v[i].lo > w.hi ? v[i].lo - w.hi : w.lo - v[i].hi;
            if (gap < 0 || g < gap) {
                gap = g;
                best = i;
            }
        }
        rmci_range_t x = v[best];
        v[best] = v[--*n];
        w.lo = x.lo < w.lo ? x.lo : w.lo;
        w.hi = x.hi > w.hi ? x.hi : w.hi;
    }
    v[(*n)++] = w;
}

static rmc_status_t list(struct rmc_region *r, int target)
{
    if (rmci.ndirty == rmci.dirty_cap) {
        size_t cap = rmci.dirty_cap ? 2 * rmci.dirty_cap : 64;
        rmci_dirty_t *d = rmci_realloc(rmci.dirty, cap * sizeof(*d));
        if (!d)
            return RMC_ERR_NOMEM;
        rmci.dirty = d;
        rmci.dirty_cap = cap;
    }
    rmci.dirty[rmci.ndirty].region = r;
    rmci.dirty[rmci.ndirty].target = target;
    rmci.ndirty++;
    r->cs[target] |= RMCI_CS_LISTED;
    return RMC_OK;
}

rmc_status_t rmci_mark(struct rmc_region *r, int target, unsigned kind, rmci_range_t range)
{
    uint8_t cs = r->cs[target];
    int ranged = (kind & (RMCI_CS_WRITE | RMCI_CS_ACC)) != 0;
    rmci_pair_t *p = ranged ? pair_of(r, target) : NULL;
    if ((!(cs & RMCI_CS_LISTED) && list(r, target) != RMC_OK) || (ranged && !p)) {
        /* cannot track it: complete it now instead (correct, just slower; the AM bit tells the
         * flush to wait for the atomic's reply too) */
        r->cs[target] |= (uint8_t)(kind & RMCI_CS_AM);
        return rmci_flush(r, target);
    }
    if (kind & RMCI_CS_WRITE) {
        if (!(cs & RMCI_CS_WRITE))
            p->nw = 0;
        add_range(p->w, &p->nw, range);
    }
    if (kind & RMCI_CS_ACC) {
        if (!(cs & RMCI_CS_ACC)) {
            p->na = 0;
            p->atag = rmci_kind_tag(kind);
        } else if (p->atag != rmci_kind_tag(kind)) {
            p->atag = RMCI_ATAG_MIXED; /* the next accumulate on their bytes waits, any type */
        }
        add_range(p->a, &p->na, range);
    }
    if ((kind & RMCI_CS_READ) && r->pair[target])
        r->pair[target]->rimp = 1; /* (rmci_mark_req takes it back for its own gets) */
    r->cs[target] |= (uint8_t)(kind & RMCI_CS_PENDING);
    return RMC_OK;
}

rmc_status_t rmci_mark_req(struct rmc_region *r, int target, unsigned kind, rmci_range_t range,
                           struct rmc_request *q)
{
    if (kind != RMCI_CS_READ || !q)
        return rmci_mark(r, target, kind, range);
    rmci_pair_t *p = pair_of(r, target);
    if (!p) /* no record: the mark stays until a flush (correct, as an implicit get's) */
        return rmci_mark(r, target, kind, range);
    uint8_t cs = r->cs[target];
    /* a read mark with no request get counted is an implicit get's (or one marked before the pair
     * had a record): it stays */
    int implicit = (cs & RMCI_CS_READ) && (p->rimp || p->rreq == 0);
    rmc_status_t st = rmci_mark(r, target, kind, range);
    if (st != RMC_OK || !(r->cs[target] & RMCI_CS_READ)) /* (flushed instead: nothing to count) */
        return st;
    p->rimp = implicit;
    p->rreq++;
    q->rd_region = r;
    q->rd_target = target;
    q->rd_gen = p->rgen;
    return RMC_OK;
}

void rmci_req_read_done(struct rmc_request *q)
{
    struct rmc_region *r = q->rd_region;
    q->rd_region = NULL;
    rmci_pair_t *p = r ? r->pair[q->rd_target] : NULL;
    if (!p || p->rgen != q->rd_gen || p->rreq == 0)
        return; /* flushed since (or the region freed): nothing of it is counted any more */
    if (--p->rreq == 0 && !p->rimp)
        r->cs[q->rd_target] &= (uint8_t)~RMCI_CS_READ;
}

rmc_status_t rmci_complete_put(struct rmc_region *r, int target, rmci_range_t range)
{
    rmci_pair_t *p = pair_of(r, target);
    /* hot: this put repeats the last one's range or had to wait for an overlapping write */
    int hot = !p || p->waw || overlaps(p->last_put, range);
    if (p) {
        p->last_put = range;
        p->waw = 0;
    }
    if (hot)
        return rmci_flush(r, target); /* completes every outstanding operation: clean pair */
    int rc = RMCI_MPI_RC(MPI_Win_flush_local, (rmci_region_mrank(r, target), r->hot.win));
    if (rc != MPI_SUCCESS)
        return rmci_local_failed(r, target, RMCI_CS_WRITE, range, rc, __func__);
    return rmci_mark(r, target, RMCI_CS_WRITE, range);
}

rmc_status_t rmci_local_failed(struct rmc_region *r, int target, unsigned kind, rmci_range_t range,
                               int rc, const char *where)
{
    return completion_failed(r, target, kind, range, "MPI_Win_flush_local", rc, where);
}

rmc_status_t rmci_fence(int target)
{
    rmc_status_t st = am_fence ? am_fence(target) : RMC_OK;
    size_t o = 0;
    for (size_t i = 0; i < rmci.ndirty; i++) {
        rmci_dirty_t d = rmci.dirty[i];
        if (target >= 0 && d.target != target) {
            rmci.dirty[o++] = d;
            continue;
        }
        if (d.region->cs[d.target] & RMCI_CS_PENDING) {
            rmc_status_t f = rmci_flush(d.region, d.target);
            if (f != RMC_OK) { /* still outstanding: the next fence flushes it again */
                rmci_keep(&st, f);
                rmci.dirty[o++] = d;
                continue;
            }
        }
        d.region->cs[d.target] = 0;
    }
    rmci.ndirty = o;
    atomic_thread_fence(memory_order_seq_cst); /* node-local stores ordered before what follows */
    return st;
}

rmc_status_t rmci_quiet_region(struct rmc_region *r)
{
    rmc_status_t st = RMC_OK;
    for (int t = 0; am_quiet && t < rmci_info_.nranks; t++)
        if (r->cs[t] & RMCI_CS_AM)
            rmci_keep(&st, am_quiet(t));
    return st;
}

void rmci_dirty_forget(struct rmc_region *r)
{
    size_t o = 0;
    for (size_t i = 0; i < rmci.ndirty; i++)
        if (rmci.dirty[i].region != r)
            rmci.dirty[o++] = rmci.dirty[i];
    rmci.ndirty = o;
    memset(r->cs, 0, (size_t)rmci_info_.nranks);
}

rmc_status_t rmc_fence(int rank)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    RMCI_POLL();
    RMCI_CHECK_RANK(__func__, rank);
    return rmci_in(rmci_fence(rank), __func__);
}

rmc_status_t rmc_fence_all(void)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    RMCI_POLL();
    return rmci_in(rmci_fence(-1), __func__);
}
