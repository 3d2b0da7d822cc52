/* Contiguous put / get, blocking and non-blocking.
 *
 * Node-local targets are reached with memcpy through the shared mapping (the hot path: an MRU hit
 * of the translation cache, no MPI); other targets with MPI_Put / MPI_Get on the region's window.
 * A blocking remote put completes locally (MPI_Win_flush_local) and stays outstanding in the
 * conflict tracking (comm/conflict.c, rmci_complete_put); a blocking get completes when its data
 * is here. */
#include "config.h"
#include <limits.h>
#include <string.h>
#include "core.h"

/* MPI counts are int: a transfer beyond 2 GiB goes as 1 MiB blocks of a contiguous datatype plus a
 * byte remainder, i.e. at most two MPI operations. */
#define RMCI_BIG_BLOCK ((size_t)1 << 20)
static MPI_Datatype big_block = MPI_DATATYPE_NULL;

void rmci_rma_finalize(void)
{
    rmci_type_free(&big_block);
}

static rmc_status_t big_block_type(const char *fn)
{
    if (big_block != MPI_DATATYPE_NULL)
        return RMC_OK;
    MPI_Datatype t;
    rmc_status_t st =
        rmci_mpi_status("MPI_Type_contiguous", fn,
                        RMCI_MPI_RC(MPI_Type_contiguous, ((int)RMCI_BIG_BLOCK, MPI_BYTE, &t)));
    if (st != RMC_OK)
        return st;
    rmci_res_count(RMCI_RES_TYPE, 1);
    st = rmci_mpi_status("MPI_Type_commit", fn, RMCI_MPI_RC(MPI_Type_commit, (&t)));
    if (st != RMC_OK) {
        rmci_type_free(&t);
        return st;
    }
    big_block = t;
    return RMC_OK;
}

/* Issues put (kind RMCI_CS_WRITE: local -> target) or get of `bytes` at `disp` on window rank
 * `mr`. With `reqs` request-based operations fill reqs[0..ret-1]. Returns the number of MPI
 * operations (0..2) in *nops. */
static rmc_status_t issue_contig(int kind, void *local, MPI_Aint disp, size_t bytes, int mr,
                                 MPI_Win win, MPI_Request *reqs, int *nops, const char *fn)
{
    size_t nblk = 0, rest = bytes;
    *nops = 0;
    if (RMCI_UNLIKELY(bytes > (size_t)INT_MAX)) {
        nblk = bytes / RMCI_BIG_BLOCK;
        rest = bytes % RMCI_BIG_BLOCK;
        if (nblk > (size_t)INT_MAX)
            return rmci_fail(RMC_ERR_TOO_BIG, fn, "%zu bytes in one transfer", bytes);
        rmc_status_t st = big_block_type(fn);
        if (st != RMC_OK)
            return st;
    }
    for (int part = 0; part < 2; part++) {
        int cnt = part == 0 ? (int)nblk : (int)rest;
        if (cnt == 0)
            continue;
        MPI_Datatype dt = part == 0 ? big_block : MPI_BYTE;
        size_t off = part == 0 ? 0 : nblk * RMCI_BIG_BLOCK;
        char *l = (char *)local + off;
        MPI_Aint d = disp + (MPI_Aint)off;
        MPI_Request *rq = reqs ? &reqs[*nops] : NULL;
        rmc_status_t st;
        if (kind == RMCI_CS_WRITE)
            st = rq ? RMCI_MPI_ST(MPI_Rput, (l, cnt, dt, mr, d, cnt, dt, win, rq))
                    : RMCI_MPI_ST(MPI_Put, (l, cnt, dt, mr, d, cnt, dt, win));
        else
            st = rq ? RMCI_MPI_ST(MPI_Rget, (l, cnt, dt, mr, d, cnt, dt, win, rq))
                    : RMCI_MPI_ST(MPI_Get, (l, cnt, dt, mr, d, cnt, dt, win));
        if (st != RMC_OK)
            return st;
        ++*nops;
    }
    return RMC_OK;
}

/* The remote path (MPI RMA on the region's window). */
static rmc_status_t contig_remote(int kind, const rmci_target_t *t, void *local, size_t bytes,
                                  int rank, rmci_mode_t mode, rmc_request_h *req, const char *fn)
{
    struct rmc_region *r = t->region;
    rmci_range_t range = rmci_range(t->disp, bytes);
    RMCI_STAT(remote_ops, 1);
    rmci_poll_charge(bytes);
    rmc_status_t st = rmci_order_(r, rank, (unsigned)kind, range);
    if (RMCI_UNLIKELY(st != RMC_OK))
        return st;
    int mr = rmci_region_mrank(r, rank), nops = 0;
    struct rmc_request *q = NULL;
    if (mode == RMCI_NB_REQUEST && !(q = rmci_req_alloc()))
        return rmci_fail(RMC_ERR_NOMEM, fn, "no memory for a request");
    /* a blocking get on oversubscribed processors: through requests, waited yielding (MPICH's
     * flush spins, and the rank we wait for may need this processor) */
    MPI_Request own[2];
    int yielding = mode == RMCI_BLOCKING && kind == RMCI_CS_READ && rmci.oversubscribed;
    MPI_Request *rq = q ? q->mpi : yielding ? own : NULL;
    st = issue_contig(kind, local, t->disp, bytes, mr, r->hot.win, rq, &nops, fn);
    if (RMCI_UNLIKELY(st != RMC_OK)) {
        /* whatever was issued must not outlive the call: complete it, then report */
        if (nops)
            rmci_flush(r, rank);
        if (rq) {
            MPI_Status sts[2];
            (void)RMCI_MPI_ST(MPI_Waitall, (nops, rq, sts));
        }
        if (q)
            rmci_req_release(q);
        return st;
    }
    if (yielding)
        return rmci_wait_yielding(r, rank, RMCI_CS_READ, range, rq, nops, fn);
    if (mode != RMCI_BLOCKING) {
        st = rmci_mark_req(r, rank, (unsigned)kind, range, q);
        if (q) {
            q->nmpi = nops;
            *req = q; /* handed out (waitable) also when the fall-back flush failed */
        }
        return st;
    }
    if (kind == RMCI_CS_WRITE)
        return rmci_complete_put(r, rank, range);
    int rc = RMCI_MPI_RC(MPI_Win_flush_local, (mr, r->hot.win));
    return rc == MPI_SUCCESS ? RMC_OK : rmci_local_failed(r, rank, RMCI_CS_READ, range, rc, fn);
}

/* Everything but the node-local fast path: checks with messages, the remote path, memory served
 * by a layer. Put (kind RMCI_CS_WRITE: local -> remote) or get (RMCI_CS_READ) of `bytes` at
 * `remote`. */
static rmc_status_t __attribute__((noinline))
contig(int kind, void *remote, void *local, size_t bytes, int rank, rmci_mode_t mode,
       rmc_request_h *req, const char *fn)
{
    RMCI_SERIAL();
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT(fn);
    RMCI_POLL();
    RMCI_CHECK_RANK(fn, rank);
    if (RMCI_UNLIKELY(bytes == 0))
        return RMC_OK;
    RMCI_CHECK_ARG(local, RMC_ERR_ARG, fn, "NULL local buffer for %zu bytes", bytes);
    rmci_target_t t;
    rmc_status_t st = rmci_resolve(rank, remote, bytes, &t);
    if (st == RMC_OK && t.local) {
        RMCI_STAT(local_ops, 1);
        if (kind == RMCI_CS_WRITE) /* (memmove: a rank's put within its own allocation) */
            memmove(t.local, local, bytes);
        else
            memmove(local, t.local, bytes);
        return RMC_OK;
    }
    if (st == RMC_OK) {
        st = contig_remote(kind, &t, local, bytes, rank, mode, req, fn);
        return RMCI_LIKELY(st == RMC_OK) ? st : rmci_in(st, fn);
    }
    if (st == RMC_ERR_NOT_REGION) {
        /* not a region: a layer may serve it (dynamically registered memory, served by an
         * active message and completed before returning: a non-blocking form hands back
         * RMC_REQUEST_NULL) */
        unsigned long nerr = rmci_error_count();
        st = rmci_layers_unmapped(kind == RMCI_CS_WRITE, remote, local, bytes, rank);
        if (st == RMC_ERR_NOT_REGION)
            return rmci_fail(st, fn,
                             "address %p is in no region (nor registered memory) of rank %d",
                             remote, rank);
        if (st != RMC_OK) /* the layer's own message when it recorded one (e.g. the MPI call) */
            return rmci_error_count() != nerr
                       ? rmci_in(st, fn)
                       : rmci_fail(st, fn, "%zu bytes at %p on rank %d (served by a layer): %s",
                                   bytes, remote, rank, rmc_status_string(st));
        return st;
    }
    return rmci_fail(st, fn, "[%p, +%zu) crosses the end of its region on rank %d", remote, bytes,
                     rank);
}

/* Copies of 8 to 64 bytes without a call: fixed-size moves from both ends, overlapping where n is
 * not a multiple (a fixed-size memcpy is one load and one store). All loads precede the stores, so
 * overlapping source and destination behave as memmove (other sizes: memmove). No two stores of one
 * copy go to the same bytes when n is a power of two (at 32 bytes, two pairs of identical 16-byte
 * stores cost 16-21 ns instead of 2-3 on this machine's CPU). */
static inline void small_copy(char *d, const char *s, size_t n)
{
    typedef struct {
        uint64_t w[2];
    } v16;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n > 16 && n <= 32) {
        v16 a, b;
        memcpy(&a, s, 16);
        memcpy(&b, s + n - 16, 16);
        memcpy(d, &a, 16);
        memcpy(d + n - 16, &b, 16);
    } else if (n > 32 && n <= 64) {
        v16 a, b, c, e;
        memcpy(&a, s, 16);
        memcpy(&b, s + 16, 16);
        memcpy(&c, s + n - 32, 16);
        memcpy(&e, s + n - 16, 16);
        memcpy(d, &a, 16);
        memcpy(d + 16, &b, 16);
        memcpy(d + n - 32, &c, 16);
        memcpy(d + n - 16, &e, 16);
    } else {
        memmove(d, s, n); /* (a rank's copy within its own allocation may overlap; glibc's x86
                           * memcpy is its memmove) */
    }
}

/* The node-local fast path: the target range lies in one of the translation cache's most recently
 * used entries (all RMCI_XLATE_MRU of them are looked at, front first, none moved: a program
 * alternating between the peers of a node, as a hash map's random keys do, stays on this path),
 * of a node-local peer (this implies RMC is initialized and the rank valid), no poll is due and
 * RMC is not thread-safe (then the translation cache is read under the lock, in contig()).
 * Everything else (a poll included, so this path makes no call and needs no stack frame) takes
 * contig(). One node-local operation counts 1/RMCI_POLL_CALL of a communicating call. */
static inline char *local_hit_any(int rank, const void *remote, size_t bytes, const void *buf)
{
    uintptr_t a = (uintptr_t)remote;
    if (RMCI_UNLIKELY(bytes == 0 || (RMCI_CHECKS && !buf) || rmci_poll_countdown_ <= 1))
        return NULL;
    for (int i = 0; i < RMCI_XLATE_MRU; i++) {
        const rmci_xent_t *m = &rmci_xlate_.mru[i];
        if (m->rank != rank || a - m->lo >= m->hi - m->lo)
            continue;
        if (RMCI_UNLIKELY(bytes > m->hi - a || !m->local))
            return NULL;
        rmci_poll_countdown_--;
        rmci_xlate_.mru_hits++;
        RMCI_STAT(xlate_lookups, 1);
        RMCI_STAT(local_ops, 1);
        return (char *)m->local + (a - m->lo);
    }
    return NULL;
}

static inline char *local_hit(int rank, const void *remote, size_t bytes, const void *buf)
{
    return RMCI_UNLIKELY(rmci_mt_on_) ? NULL : local_hit_any(rank, remote, bytes, buf);
}

/* rmc_put / rmc_get when RMC is thread-safe: the same fast path, under the thread lock. */
static rmc_status_t __attribute__((noinline))
contig_serial(int kind, void *remote, void *local, size_t bytes, int rank, const char *fn)
{
    RMCI_SERIAL();
    char *p = local_hit_any(rank, remote, bytes, local);
    if (RMCI_LIKELY(p)) {
        if (kind == RMCI_CS_WRITE)
            small_copy(p, local, bytes);
        else
            small_copy(local, p, bytes);
        return RMC_OK;
    }
    return contig(kind, remote, local, bytes, rank, RMCI_BLOCKING, NULL, fn);
}

/* The operation counts (rmc_op_counts) take a call that succeeded. */
#define COUNTED(kind, bytes, call)                                                                 \
    do {                                                                                           \
        rmc_status_t st_ = (call);                                                                 \
        if (st_ == RMC_OK)                                                                         \
            RMCI_OPC(kind, bytes);                                                                 \
        return st_;                                                                                \
    } while (0)

rmc_status_t rmc_put(const void *src, void *dst, size_t bytes, int rank)
{
    char *p = local_hit(rank, dst, bytes, src);
    if (RMCI_LIKELY(p)) {
        RMCI_OPC(write, bytes);
        small_copy(p, src, bytes);
        return RMC_OK;
    }
    if (RMCI_UNLIKELY(rmci_mt_on_))
        COUNTED(write, bytes,
                contig_serial(RMCI_CS_WRITE, dst, (void *)src, bytes, rank, __func__));
    COUNTED(write, bytes,
            contig(RMCI_CS_WRITE, dst, (void *)src, bytes, rank, RMCI_BLOCKING, NULL, __func__));
}

rmc_status_t rmc_get(const void *src, void *dst, size_t bytes, int rank)
{
    char *p = local_hit(rank, src, bytes, dst);
    if (RMCI_LIKELY(p)) {
        RMCI_OPC(read, bytes);
        small_copy(dst, p, bytes);
        return RMC_OK;
    }
    if (RMCI_UNLIKELY(rmci_mt_on_))
        COUNTED(read, bytes, contig_serial(RMCI_CS_READ, (void *)src, dst, bytes, rank, __func__));
    COUNTED(read, bytes,
            contig(RMCI_CS_READ, (void *)src, dst, bytes, rank, RMCI_BLOCKING, NULL, __func__));
}

rmc_status_t rmc_put_nb(const void *src, void *dst, size_t bytes, int rank, rmc_request_h *req)
{
    COUNTED(write, bytes,
            contig(RMCI_CS_WRITE, dst, (void *)src, bytes, rank, RMCI_NB_MODE(req), req, __func__));
}

rmc_status_t rmc_get_nb(const void *src, void *dst, size_t bytes, int rank, rmc_request_h *req)
{
    COUNTED(read, bytes,
            contig(RMCI_CS_READ, (void *)src, dst, bytes, rank, RMCI_NB_MODE(req), req, __func__));
}
