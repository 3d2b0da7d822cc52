/* Contiguous put/get (blocking and non-blocking), requests, fences and conflict tracking. */
#include "config.h"
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "rmci.h"

/* ------------------------------------------------------------------ conflict tracking --- */

void rmci_mark(struct rmc_region *r, int target, unsigned bits)
{
    uint8_t cs = r->cs[target];
    if (!(cs & RMCI_CS_LISTED)) {
        if (rmci.ndirty == rmci.dirty_cap) {
            size_t cap = rmci.dirty_cap ? 2 * rmci.dirty_cap : 64;
            rmci_dirty_t *d = realloc(rmci.dirty, cap * sizeof(*d));
            if (!d) {
                /* cannot track: complete it now instead (correct, just slower) */
                MPI_Win_flush(rmci_mrank(r, target), r->win);
                rmci.stats.flushes++;
                return;
            }
            rmci.dirty = d;
            rmci.dirty_cap = cap;
        }
        rmci.dirty[rmci.ndirty].region = r;
        rmci.dirty[rmci.ndirty].target = target;
        rmci.ndirty++;
        cs |= RMCI_CS_LISTED;
    }
    r->cs[target] = (uint8_t)(cs | bits);
}

rmc_status_t rmci_flush_pair(struct rmc_region *r, int target, int conflict)
{
    rmci.stats.flushes++;
    if (conflict)
        rmci.stats.conflict_flushes++;
    r->cs[target] &= (uint8_t)~RMCI_CS_PENDING;
    RMCI_MPI(MPI_Win_flush(rmci_mrank(r, target), r->win));
    return RMC_OK;
}

rmc_status_t rmci_fence(int target)
{
    rmc_status_t st = RMC_OK;
    size_t o = 0;
    for (size_t i = 0; i < rmci.ndirty; i++) {
        rmci_dirty_t d = rmci.dirty[i];
        if (target >= 0 && d.target != target) {
            rmci.dirty[o++] = d;
            continue;
        }
        if (d.region->cs[d.target] & RMCI_CS_PENDING) {
            rmc_status_t s2 = rmci_flush_pair(d.region, d.target, 0);
            if (s2 != RMC_OK)
                st = s2;
        }
        d.region->cs[d.target] = 0;
    }
    rmci.ndirty = o;
    atomic_thread_fence(memory_order_seq_cst); /* node-local stores ordered before what follows */
    return st;
}

void rmci_dirty_forget(struct rmc_region *r)
{
    size_t o = 0;
    for (size_t i = 0; i < rmci.ndirty; i++)
        if (rmci.dirty[i].region != r)
            rmci.dirty[o++] = rmci.dirty[i];
    rmci.ndirty = o;
    memset(r->cs, 0, (size_t)rmci.nranks);
}

rmc_status_t rmc_fence(int rank)
{
    RMCI_CHECK_INIT();
    RMCI_POLL();
    RMCI_CHECK_RANK(rank);
    return rmci_fence(rank);
}

rmc_status_t rmc_fence_all(void)
{
    RMCI_CHECK_INIT();
    RMCI_POLL();
    return rmci_fence(-1);
}

/* ---------------------------------------------------------------------- requests --- */

#define SLAB 256
typedef struct slab {
    struct slab *next;
    struct rmc_request reqs[SLAB];
} slab_t;
static slab_t *slabs;
static struct rmc_request *free_reqs;

struct rmc_request *rmci_req_alloc(void)
{
    if (!free_reqs) {
        slab_t *s = calloc(1, sizeof(*s));
        if (!s)
            return NULL;
        s->next = slabs;
        slabs = s;
        for (int i = SLAB - 1; i >= 0; i--) {
            s->reqs[i].magic = RMCI_REQ_FREE;
            s->reqs[i].next_free = free_reqs;
            free_reqs = &s->reqs[i];
        }
    }
    struct rmc_request *q = free_reqs;
    free_reqs = q->next_free;
    q->magic = RMCI_REQ_MAGIC;
    q->nmpi = 0;
    q->mpi[0] = q->mpi[1] = MPI_REQUEST_NULL;
    q->on_complete = NULL;
    q->cb_data = NULL;
    q->cb_buf = NULL;
    q->next_free = NULL;
    return q;
}

void rmci_req_release(struct rmc_request *q)
{
    free(q->cb_buf);
    q->cb_buf = NULL;
    q->magic = RMCI_REQ_FREE;
    q->next_free = free_reqs;
    free_reqs = q;
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
    free_reqs = NULL;
}

static rmc_status_t req_finish(struct rmc_request *q)
{
    rmc_status_t st = RMC_OK;
    if (q->on_complete)
        st = q->on_complete(q);
    rmci_req_release(q);
    return st;
}

rmc_status_t rmc_wait(rmc_request_h *req)
{
    RMCI_CHECK_INIT();
    if (!req)
        return RMC_ERR_ARG;
    struct rmc_request *q = *req;
    if (!q)
        return RMC_OK;
    if (q->magic != RMCI_REQ_MAGIC)
        return RMC_ERR_HANDLE;
    RMCI_POLL();
    rmc_status_t st = RMC_OK;
    MPI_Status sts[2];
    if (q->nmpi > 0 && MPI_Waitall(q->nmpi, q->mpi, sts) != MPI_SUCCESS)
        st = RMC_ERR_MPI;
    rmc_status_t s2 = req_finish(q);
    *req = RMC_REQUEST_NULL;
    return st != RMC_OK ? st : s2;
}

rmc_status_t rmc_test(rmc_request_h *req, int *done)
{
    RMCI_CHECK_INIT();
    if (!req || !done)
        return RMC_ERR_ARG;
    struct rmc_request *q = *req;
    *done = 0;
    if (!q) {
        *done = 1;
        return RMC_OK;
    }
    if (q->magic != RMCI_REQ_MAGIC)
        return RMC_ERR_HANDLE;
    RMCI_POLL();
    int flag = 1;
    MPI_Status sts[2];
    if (q->nmpi > 0 && MPI_Testall(q->nmpi, q->mpi, &flag, sts) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    if (!flag)
        return RMC_OK;
    *done = 1;
    rmc_status_t st = req_finish(q);
    *req = RMC_REQUEST_NULL;
    return st;
}

rmc_status_t rmc_wait_all(rmc_request_h *reqs, size_t n)
{
    RMCI_CHECK_INIT();
    if (n > 0 && !reqs)
        return RMC_ERR_ARG;
    rmc_status_t st = RMC_OK;
    for (size_t i = 0; i < n; i++) {
        rmc_status_t s2 = rmc_wait(&reqs[i]);
        if (s2 != RMC_OK && st == RMC_OK)
            st = s2;
    }
    return st;
}

/* ------------------------------------------------------------------- put / get --- */

/* MPI counts are int: a transfer beyond 2 GiB goes as 1 MiB blocks of a contiguous datatype plus a
 * byte remainder, i.e. at most two MPI operations. */
#define RMCI_BIG_BLOCK ((size_t)1 << 20)
static MPI_Datatype big_block = MPI_DATATYPE_NULL;

static void big_block_free(void)
{
    if (big_block != MPI_DATATYPE_NULL)
        MPI_Type_free(&big_block);
}

/* Issues put (kind RMCI_CS_WRITE: local -> target) or get of `bytes` at `disp` on `rank`. With
 * `reqs` request-based operations fill reqs[0..ret-1]. Returns the number of MPI operations (0..2)
 * or a negative rmc_status_t. */
static int issue_contig(int kind, void *local, MPI_Aint disp, size_t bytes, int rank, MPI_Win win,
                        MPI_Request *reqs)
{
    size_t nblk = 0, rest = bytes;
    if (RMCI_UNLIKELY(bytes > (size_t)INT_MAX)) {
        nblk = bytes / RMCI_BIG_BLOCK;
        rest = bytes % RMCI_BIG_BLOCK;
        if (nblk > (size_t)INT_MAX)
            return RMC_ERR_TOO_BIG;
        if (big_block == MPI_DATATYPE_NULL) {
            if (MPI_Type_contiguous((int)RMCI_BIG_BLOCK, MPI_BYTE, &big_block) != MPI_SUCCESS ||
                MPI_Type_commit(&big_block) != MPI_SUCCESS)
                return RMC_ERR_MPI;
            rmci_at_finalize(big_block_free);
        }
    }
    int nops = 0;
    for (int part = 0; part < 2; part++) {
        int cnt = part == 0 ? (int)nblk : (int)rest;
        if (cnt == 0)
            continue;
        MPI_Datatype dt = part == 0 ? big_block : MPI_BYTE;
        size_t off = part == 0 ? 0 : nblk * RMCI_BIG_BLOCK;
        char *l = (char *)local + off;
        MPI_Aint d = disp + (MPI_Aint)off;
        int rc;
        if (reqs)
            rc = kind == RMCI_CS_WRITE ? MPI_Rput(l, cnt, dt, rank, d, cnt, dt, win, &reqs[nops])
                                       : MPI_Rget(l, cnt, dt, rank, d, cnt, dt, win, &reqs[nops]);
        else
            rc = kind == RMCI_CS_WRITE ? MPI_Put(l, cnt, dt, rank, d, cnt, dt, win)
                                       : MPI_Get(l, cnt, dt, rank, d, cnt, dt, win);
        if (rc != MPI_SUCCESS)
            return RMC_ERR_MPI;
        nops++;
    }
    return nops;
}

static inline rmc_status_t check_args(const void *local, size_t bytes, int rank)
{
    RMCI_CHECK_INIT();
    RMCI_POLL();
    RMCI_CHECK_RANK(rank);
    if (RMCI_UNLIKELY(!local && bytes))
        return RMC_ERR_ARG;
    return RMC_OK;
}

/* Common path. kind: RMCI_CS_WRITE (put) or RMCI_CS_READ (get). mode: 0 blocking, 1 nb with
 * request, 2 nb implicit. */
static inline rmc_status_t contig(int kind, const void *remote, void *local_rw,
                                  const void *local_ro, size_t bytes, int rank, int mode,
                                  rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    rmc_status_t st = check_args(local_ro ? local_ro : local_rw, bytes, rank);
    if (RMCI_UNLIKELY(st != RMC_OK) || bytes == 0)
        return st;
    rmci_target_t t;
    st = rmci_resolve(rank, remote, bytes, &t);
    if (RMCI_UNLIKELY(st != RMC_OK)) {
        /* not a region: dynamically registered memory is served by the progress layer (completed
         * before returning, so a non-blocking form hands back RMC_REQUEST_NULL) */
        if (st == RMC_ERR_NOT_REGION && rmci_fallback_hook)
            return rmci_fallback_hook(
                kind, remote, kind == RMCI_CS_WRITE ? (void *)local_ro : local_rw, bytes, rank);
        return st;
    }
    if (t.local) {
        rmci.stats.local_ops++;
        if (kind == RMCI_CS_WRITE)
            memcpy(t.local, local_ro, bytes);
        else
            memcpy(local_rw, t.local, bytes);
        return RMC_OK;
    }
    rmci.stats.remote_ops++;
    struct rmc_region *r = t.region;
    st = rmci_order(r, rank, (unsigned)kind);
    if (RMCI_UNLIKELY(st != RMC_OK))
        return st;
    if (mode == 1) {
        struct rmc_request *q = rmci_req_alloc();
        if (!q)
            return RMC_ERR_NOMEM;
        int nops = issue_contig(kind, local_ro ? (void *)local_ro : local_rw, t.disp, bytes,
                                rmci_mrank(r, rank), r->win, q->mpi);
        if (nops < 0) {
            rmci_req_release(q);
            return (rmc_status_t)nops;
        }
        q->nmpi = nops;
        rmci_mark(r, rank, (unsigned)kind);
        *req = q;
        return RMC_OK;
    }
    int nops = issue_contig(kind, local_ro ? (void *)local_ro : local_rw, t.disp, bytes,
                            rmci_mrank(r, rank), r->win, NULL);
    if (nops < 0)
        return (rmc_status_t)nops;
    if (mode == 2) {
        rmci_mark(r, rank, (unsigned)kind);
        return RMC_OK;
    }
    /* Blocking: a put is completed at the target (as cheap as local completion on MPICH and it
     * keeps the pair clean); a get is complete when the data is here. */
    if (kind == RMCI_CS_WRITE) {
        RMCI_MPI(MPI_Win_flush(rmci_mrank(r, rank), r->win));
        rmci.stats.flushes++;
        r->cs[rank] &= (uint8_t)~RMCI_CS_PENDING; /* the flush completed everything to rank */
    } else {
        RMCI_MPI(MPI_Win_flush_local(rmci_mrank(r, rank), r->win));
    }
    return RMC_OK;
}

rmc_status_t rmc_put(const void *src, void *dst, size_t bytes, int rank)
{
    return contig(RMCI_CS_WRITE, dst, NULL, src, bytes, rank, 0, NULL);
}

rmc_status_t rmc_get(const void *src, void *dst, size_t bytes, int rank)
{
    return contig(RMCI_CS_READ, src, dst, NULL, bytes, rank, 0, NULL);
}

rmc_status_t rmc_put_nb(const void *src, void *dst, size_t bytes, int rank, rmc_request_h *req)
{
    return contig(RMCI_CS_WRITE, dst, NULL, src, bytes, rank, req ? 1 : 2, req);
}

rmc_status_t rmc_get_nb(const void *src, void *dst, size_t bytes, int rank, rmc_request_h *req)
{
    return contig(RMCI_CS_READ, src, dst, NULL, bytes, rank, req ? 1 : 2, req);
}
