/* Distributed dense matrices and arrays (include/rmc/matrix.h): creation, the tile directory, and
 * every data movement (patches, tiles, elements) as comm strided transfers, one per tile touched.
 */
#include "config.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "matrix_impl.h"

/* A rank's block starts on a cache line: rmc_alloc gives 16-byte alignment only, and a block 16
 * bytes off a line splits every other 32-byte vector access of an accumulate across two lines
 * (measured: NGA_Acc of 256 KiB 1.5x slower than into a line-aligned block). The segment's base
 * is 64-byte aligned (a region's). Its tiles follow each other without gaps (a GA block-cyclic
 * array's local data is one segment, NGA_Access_block_segment), so a tile whose predecessors' sizes
 * are whole cache lines starts on one too. */
#define TILE_ALIGN 64

static uint64_t next_id; /* equal on every rank: advanced by each creation */
static uint64_t next_sub; /* a subset's creations: above every number its members used before */

size_t rmc_elem_size(rmc_elem_t e)
{
    return e == RMC_ELEM_OPAQUE ? 0 : rmc_acc_type_size((rmc_acc_type_t)e);
}

rmc_status_t rmcc_matrix_check(const struct rmc_matrix *m, const char *fn)
{
    return rmcc_obj_check(m ? &m->obj : NULL, RMCC_MAGIC_MATRIX, "matrix", fn);
}

static void m_release(rmcc_obj_t *o)
{
    struct rmc_matrix *m = (struct rmc_matrix *)o;
    rmcc_parts_free(&m->parts);
    free(m->toff);
    free(m->towner);
    rmc_dist_free(m->d);
    m->toff = NULL;
    m->towner = NULL;
    m->d = NULL;
}

/* The tile directory: every tile's owner and offset in its owner's block (the same computation on
 * every rank), and this rank's block size. RMC_ERR_TOO_BIG when a tile's bytes or a rank's part
 * overflow. */
static rmc_status_t directory(struct rmc_matrix *m, const char *fn)
{
    const struct rmc_dist *d = m->d;
    uint64_t *next = calloc((size_t)d->nranks, sizeof(uint64_t));
    m->toff = malloc((size_t)d->ntiles * sizeof(uint64_t));
    m->towner = malloc((size_t)d->ntiles * sizeof(int));
    if (!next || !m->toff || !m->towner) {
        free(next);
        return rmcc_fail(RMC_ERR_NOMEM, fn, "the directory of %lld tiles", (long long)d->ntiles);
    }
    int64_t tc[MD] = {0};
    for (int64_t t = 0; t < d->ntiles; t++) {
        uint64_t n = m->esz;
        for (int k = 0; k < d->ndim; k++) {
            uint64_t ext = (uint64_t)(rmcc_tile_hi(d, k, tc[k]) - rmcc_tile_lo(d, k, tc[k]));
            if (n > (UINT64_MAX >> 8) / ext) {
                free(next);
                return rmcc_fail(RMC_ERR_TOO_BIG, fn, "tile %lld's bytes overflow", (long long)t);
            }
            n *= ext;
        }
        int o = rmcc_owner(d, tc);
        m->towner[t] = o;
        m->toff[t] = next[o];
        if (n > (UINT64_MAX >> 8) || next[o] > (UINT64_MAX >> 8) - n) {
            free(next);
            return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                             "rank %d's part overflows (its tiles up to tile %lld add up beyond "
                             "2^56 bytes)",
                             o, (long long)t);
        }
        next[o] += n;
        for (int k = d->ndim - 1; k >= 0; k--) { /* the next tile's coordinates */
            if (++tc[k] < d->nt[k])
                break;
            tc[k] = 0;
        }
    }
    m->own_bytes = next[rmcc.rank];
    free(next);
    return RMC_OK;
}

/* Creation over all ranks (comm MPI_COMM_NULL) or over the members of comm only. */
#define NOT_OWNED UINT64_MAX /* alloc_off of an overlay: the memory is its parent's */

/* st: a failure of the caller's own checks (recorded; this rank still takes part, to fail with the
 * others), else RMC_OK. */
static rmc_status_t create_on(MPI_Comm comm, rmc_dist_h d, rmc_elem_t e, size_t esize,
                              const struct rmc_matrix *parent, rmc_matrix_h *mp, rmc_status_t st,
                              const char *fn)
{
    if (mp)
        *mp = NULL;
    RMCC_CHECK_UP(fn);
    if (e != RMC_ELEM_OPAQUE)
        esize = rmc_elem_size(e);
    if (st != RMC_OK)
        ;
    else if (!mp)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if ((st = rmcc_dist_check(d, fn)) != RMC_OK)
        ;
    else if (esize == 0 && e != RMC_ELEM_OPAQUE)
        st = rmcc_fail(RMC_ERR_ARG, fn, "element type %d (RMC_ELEM_I32 .. RMC_ELEM_C64)", (int)e);
    else if (esize == 0 || esize > RMC_ELEM_OPAQUE_MAX)
        st = rmcc_fail(RMC_ERR_ARG, fn, "element size esize = %zu (1 .. %d bytes)", esize,
                       RMC_ELEM_OPAQUE_MAX);
    else if (d->nranks != rmcc.nranks)
        st = rmcc_fail(RMC_ERR_ARG, fn, "the distribution was made for %d ranks, not %d", d->nranks,
                       rmcc.nranks);
    MPI_Comm own = MPI_COMM_NULL;
    if (comm != MPI_COMM_NULL) {
        /* every owner must be a member (the others never allocate); every member takes part in
         * the exchange whatever its own checks said (a rank that skipped it would hang the
         * others), and waits through rmc_wait_mpi (serving the others' active messages) */
        int n, *members = calloc((size_t)rmcc.nranks, sizeof(int));
        MPI_Comm_size(comm, &n);
        int me = st == RMC_OK ? rmcc.rank : -1, *all = malloc(sizeof(int) * (size_t)n);
        MPI_Request rq;
        rmc_status_t xs = RMC_ERR_NOMEM;
        if (!all || MPI_Iallgather(&me, 1, MPI_INT, all, 1, MPI_INT, comm, &rq) != MPI_SUCCESS)
            xs = rmcc_fail(RMC_ERR_MPI, fn, "learning the communicator's ranks");
        else
            xs = rmc_wait_mpi(&rq);
        if (st == RMC_OK && xs != RMC_OK)
            st = xs;
        if (st == RMC_OK && !members)
            st = rmcc_fail(RMC_ERR_NOMEM, fn, "the members' table");
        for (int i = 0; st == RMC_OK && i < n; i++)
            if (all[i] >= 0)
                members[all[i]] = 1;
        free(all);
        int64_t tc[MD] = {0};
        for (int64_t t = 0; st == RMC_OK && t < d->ntiles; t++) {
            rmc_dist_tile_coords(d, t, tc);
            int o = rmcc_owner(d, tc);
            if (!members[o])
                st = rmcc_fail(RMC_ERR_ARG, fn,
                               "tile %lld belongs to rank %d, which is not in the communicator "
                               "(place the tiles on its ranks: rmc_dist_set_ranks)",
                               (long long)t, o);
        }
        free(members);
        if (MPI_Comm_idup(comm, &own, &rq) != MPI_SUCCESS) {
            own = MPI_COMM_NULL;
            if (st == RMC_OK)
                st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Comm_idup of the communicator");
        } else if ((xs = rmc_wait_mpi(&rq)) != RMC_OK && st == RMC_OK)
            st = xs;
    }
    /* all ranks: the matrix number is the job's (advanced by every creation). A subset's: the
     * largest next_sub of its members (top bit set: never a job-wide number), after which each of
     * them counts on, so the argument checks of its collectives tell its matrices apart (a rank may
     * belong to several subsets: their numbers only grow) */
    uint64_t id = next_id;
    if (comm != MPI_COMM_NULL) {
        uint64_t mine = next_sub, top = next_sub;
        MPI_Request rq;
        rmc_status_t xs = MPI_Iallreduce(&mine, &top, 1, MPI_UINT64_T, MPI_MAX, comm, &rq) ==
                                  MPI_SUCCESS
                              ? rmc_wait_mpi(&rq)
                              : rmcc_fail(RMC_ERR_MPI, fn, "agreeing on the matrix's number");
        if (xs != RMC_OK && st == RMC_OK)
            st = xs;
        next_sub = top + 1;
        id = (1ull << 63) | top;
    }
    uint64_t args[3] = {id, (uint64_t)e | (uint64_t)esize << 8,
                        st == RMC_OK ? rmcc_dist_digest(d) : 0};
    const char *const names[3] = {
        "matrix numbers (the ranks created different matrices before: every creation is "
        "collective)",
        parent                 ? "element types or sizes (e, esize)"
        : e == RMC_ELEM_OPAQUE ? "element sizes (esize)"
                               : "element types (e)",
        "distributions (d)"};
    st = rmcc_coll_begin_named(comm, fn, args, names, 3, st);
    if (st != RMC_OK) {
        if (own != MPI_COMM_NULL)
            MPI_Comm_free(&own);
        return st;
    }
    struct rmc_matrix *m = calloc(1, sizeof(*m));
    rmc_status_t mine = m ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "matrix handle");
    uint64_t off = 0;
    int allocated = 0;
    if (mine == RMC_OK) {
        m->elem = e;
        m->esz = esize;
        m->id = id;
        m->comm = own;
        mine = rmcc_dist_dup(d, &m->d, fn);
    }
    if (mine == RMC_OK)
        mine = directory(m, fn);
    if (mine == RMC_OK)
        mine = rmcc_parts_init(&m->parts, fn);
    if (mine == RMC_OK && parent) { /* an overlay: the parent's block, as it is */
        m->alloc_off = NOT_OWNED;
        off = parent->parts.offs[rmcc.rank];
        if (m->own_bytes > parent->own_bytes)
            mine = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                             "this rank's part needs %llu bytes, the parent's block has %llu",
                             (unsigned long long)m->own_bytes,
                             (unsigned long long)parent->own_bytes);
    } else if (mine == RMC_OK) { /* zeroed memory (rmc_alloc's promise): every element 0 */
        uint64_t want = (m->own_bytes ? m->own_bytes : TILE_ALIGN) + TILE_ALIGN - 16;
        allocated = (mine = rmcc_alloc_off(want, &m->alloc_off, fn)) == RMC_OK;
        off = (m->alloc_off + TILE_ALIGN - 1) & ~(uint64_t)(TILE_ALIGN - 1);
    }
    st = rmcc_exchange_parts_on(comm, mine, off, m && m->parts.offs ? m->parts.offs : NULL, fn);
    if (comm == MPI_COMM_NULL)
        next_id++;
    if (st == RMC_OK) {
        rmcc_parts_map(&m->parts);
        rmcc_obj_add(&m->obj, RMCC_MAGIC_MATRIX, m_release);
        if (comm != MPI_COMM_NULL)
            m->obj.flags |= RMCC_OBJ_SUBSET;
        *mp = m;
        return RMC_OK;
    }
    if (allocated)
        rmcc_free_off(m->alloc_off, fn);
    if (m)
        m_release(&m->obj);
    free(m);
    if (own != MPI_COMM_NULL)
        MPI_Comm_free(&own);
    return st;
}

/* RMC_ELEM_OPAQUE where no element size can be given: a matrix of opaque elements has its own
 * constructor. */
static rmc_status_t opaque_check(rmc_elem_t e, const char *fn)
{
    return e != RMC_ELEM_OPAQUE ? RMC_OK
                                : rmcc_fail(RMC_ERR_ARG, fn,
                                            "e = RMC_ELEM_OPAQUE needs an element size: create a "
                                            "matrix of opaque elements with "
                                            "rmc_matrix_create_opaque");
}

rmc_status_t rmc_matrix_create(rmc_dist_h d, rmc_elem_t e, rmc_matrix_h *mp)
{
    RMCC_SERIAL();
    return create_on(MPI_COMM_NULL, d, e, 0, NULL, mp, opaque_check(e, __func__), __func__);
}

rmc_status_t rmc_matrix_create_opaque(MPI_Comm comm, rmc_dist_h d, size_t esize,
                                      rmc_matrix_h *mp)
{
    RMCC_SERIAL();
    return create_on(comm, d, RMC_ELEM_OPAQUE, esize, NULL, mp, RMC_OK, __func__);
}

rmc_status_t rmc_matrix_create_overlay(rmc_matrix_h parent, rmc_dist_h d, rmc_elem_t e,
                                       size_t esize, rmc_matrix_h *mp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    /* a rank with a bad parent cannot know the parent's ranks: it meets the others in a creation
     * over all ranks, where they are when the parent is a matrix of all ranks, and fails with them
     * there (a destroyed matrix of a subset fails alone, as its other collectives do) */
    MPI_Comm comm;
    rmc_status_t alone = rmcc_matrix_comm(parent, fn, &comm);
    if (alone != RMC_OK) {
        if (mp)
            *mp = NULL;
        return alone;
    }
    rmc_status_t st =
        rmcc_obj_check(parent ? &parent->obj : NULL, RMCC_MAGIC_MATRIX, "parent matrix", fn);
    return create_on(comm, d, e, esize, st == RMC_OK ? parent : NULL, mp, st, fn);
}

size_t rmc_matrix_elem_size(rmc_matrix_h m)
{
    return rmcc_matrix_check(m, __func__) == RMC_OK ? m->esz : 0;
}

rmc_status_t rmc_matrix_create_comm(MPI_Comm comm, rmc_dist_h d, rmc_elem_t e, rmc_matrix_h *mp)
{
    RMCC_SERIAL();
    if (comm == MPI_COMM_NULL) {
        if (mp)
            *mp = NULL;
        return rmcc_fail(RMC_ERR_ARG, __func__, "MPI_COMM_NULL (use rmc_matrix_create for all ranks)");
    }
    return create_on(comm, d, e, 0, NULL, mp, opaque_check(e, __func__), __func__);
}

/* Frees the matrix's block (not an overlay's: its parent's) and kills the handle. */
static rmc_status_t finish_destroy(struct rmc_matrix *m, rmc_status_t bar, const char *fn)
{
    if (m->alloc_off != NOT_OWNED)
        return rmcc_destroy_finish(&m->obj, bar, m->alloc_off, fn);
    rmcc_obj_kill(&m->obj);
    return bar;
}

rmc_status_t rmc_matrix_destroy(rmc_matrix_h m)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st, bar;
    MPI_Comm c;
    if ((st = rmcc_matrix_comm(m, fn, &c)) != RMC_OK) /* destroyed already, on a subset */
        return st;
    if (c != MPI_COMM_NULL) {
        uint64_t arg = m->id;
        if ((st = rmcc_coll_begin_on(c, fn, &arg, 1, RMC_OK)) != RMC_OK)
            return st;
        bar = rmcc_barrier_on(c);
        st = finish_destroy(m, bar, fn);
        m->comm = MPI_COMM_NULL;
        MPI_Comm_free(&c);
        return st;
    }
    if ((st = rmcc_destroy_begin(m ? &m->obj : NULL, RMCC_MAGIC_MATRIX, "matrix", m ? m->id : 0,
                                 &bar, fn)) != RMC_OK)
        return st;
    return finish_destroy(m, bar, fn);
}

rmc_dist_h rmc_matrix_dist(rmc_matrix_h m)
{
    return rmcc_matrix_check(m, __func__) == RMC_OK ? m->d : NULL;
}

rmc_elem_t rmc_matrix_elem(rmc_matrix_h m)
{
    return rmcc_matrix_check(m, __func__) == RMC_OK ? m->elem : (rmc_elem_t)0;
}

/* ------------------------------------------------------------------- transfers --- */

/* The requests of a non-blocking patch: one custom request over all of them. */
typedef struct multi {
    size_t n, cap;
    rmc_request_h r[];
} multi_t;

static rmc_status_t multi_step(void *state, int *done)
{
    multi_t *mq = state;
    rmc_status_t st = RMC_OK;
    *done = 1;
    for (size_t i = 0; i < mq->n; i++) {
        if (!mq->r[i])
            continue;
        int fin = 0;
        rmc_status_t s = rmc_test(&mq->r[i], &fin);
        if (s != RMC_OK) {
            st = s;
            break;
        }
        if (!fin)
            *done = 0;
    }
    if (st != RMC_OK) { /* nothing may stay outstanding */
        rmc_wait_all(mq->r, mq->n);
        *done = 1;
    }
    if (*done)
        free(mq);
    return st;
}

/* One transfer between tile box [a, b) of tile t and the buffer; op 0 get, 1 put, 2 acc. */
static rmc_status_t move_box(struct rmc_matrix *m, int op, int64_t t, const int64_t tlo[],
                             const int64_t thi[], const int64_t a[], const int64_t b[], char *bufp,
                             const int64_t bst[], const void *alpha, rmc_request_h *req,
                             const char *fn)
{
    const struct rmc_dist *d = m->d;
    int n = d->ndim;
    int64_t tst[MD];
    tst[n - 1] = 1;
    for (int k = n - 2; k >= 0; k--)
        tst[k] = tst[k + 1] * (thi[k + 1] - tlo[k + 1]);
    int64_t toff = 0;
    for (int k = 0; k < n; k++)
        toff += (a[k] - tlo[k]) * tst[k];
    char *remote = rmcc_tile_addr(m, t) + (size_t)toff * m->esz;
    /* the descriptor: the innermost run, then each outer dimension of more than one index, runs
     * merged where they are contiguous on both sides */
    int64_t chunk = (b[n - 1] - a[n - 1]) * (int64_t)m->esz;
    int count[MD + 1], rs[MD], ls[MD], lv = 0;
    for (int k = n - 2; k >= 0; k--) {
        int64_t c = b[k] - a[k], rstr = tst[k] * (int64_t)m->esz, lstr = bst[k] * (int64_t)m->esz;
        if (c == 1)
            continue;
        if (lv == 0 && chunk == rstr && chunk == lstr && chunk <= INT_MAX / c) {
            chunk *= c;
            continue;
        }
        if (c > INT_MAX || rstr > INT_MAX || lstr > INT_MAX)
            return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                             "dimension %d: a stride beyond 2 GiB (tile %lld's %lld bytes, the "
                             "buffer's %lld (ld[%d]), %lld rows)",
                             k, (long long)t, (long long)rstr, (long long)lstr, k, (long long)c);
        count[++lv] = (int)c;
        rs[lv - 1] = (int)rstr;
        ls[lv - 1] = (int)lstr;
    }
    if (chunk > INT_MAX)
        return rmcc_fail(RMC_ERR_TOO_BIG, fn, "a contiguous run beyond 2 GiB");
    count[0] = (int)chunk;
    int owner = m->towner[t];
    rmc_acc_type_t at = (rmc_acc_type_t)m->elem;
    rmc_status_t st;
    if (!req)
        st = op == 0   ? rmc_get_strided(remote, rs, bufp, ls, count, lv, owner)
             : op == 1 ? rmc_put_strided(bufp, ls, remote, rs, count, lv, owner)
                       : rmc_acc_strided(at, alpha, bufp, ls, remote, rs, count, lv, owner);
    else
        st = op == 0   ? rmc_get_strided_nb(remote, rs, bufp, ls, count, lv, owner, req)
             : op == 1 ? rmc_put_strided_nb(bufp, ls, remote, rs, count, lv, owner, req)
                       : rmc_acc_strided_nb(at, alpha, bufp, ls, remote, rs, count, lv, owner, req);
    /* comm's message names its own call: the public one first */
    return RMCC_LIKELY(st == RMC_OK) ? st : rmc_error_in(st, fn);
}

/* Checks a patch and its buffer; *empty when it holds no element. */
static rmc_status_t patch_check(const struct rmc_matrix *m, const int64_t lo[], const int64_t hi[],
                                const void *buf, const int64_t ld[], int *empty, const char *fn)
{
    const struct rmc_dist *d = m->d;
    if (!lo || !hi || !buf)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL %s", !lo ? "lo" : !hi ? "hi" : "buffer");
    *empty = 0;
    for (int k = 0; k < d->ndim; k++) {
        if (lo[k] < 0 || hi[k] > d->dims[k] || lo[k] > hi[k])
            return rmcc_fail(lo[k] > hi[k] ? RMC_ERR_ARG : RMC_ERR_BOUNDS, fn,
                             "dimension %d: [%lld, %lld) outside [0, %lld) or reversed", k,
                             (long long)lo[k], (long long)hi[k], (long long)d->dims[k]);
        if (lo[k] == hi[k])
            *empty = 1;
        if (k > 0 && ld && ld[k - 1] < hi[k] - lo[k])
            return rmcc_fail(RMC_ERR_ARG, fn, "ld[%d] = %lld below the patch's extent %lld", k - 1,
                             (long long)ld[k - 1], (long long)(hi[k] - lo[k]));
    }
    return RMC_OK;
}

rmc_status_t rmcc_matrix_patch(struct rmc_matrix *m, int op, const int64_t lo[], const int64_t hi[],
                               void *buf, const int64_t ld[], const void *alpha, rmc_request_h *req,
                               const char *fn)
{
    const struct rmc_dist *d = m->d;
    int n = d->ndim, empty = 0;
    if (req)
        *req = RMC_REQUEST_NULL;
    if (op == 2 && m->elem == RMC_ELEM_OPAQUE)
        return rmcc_fail(RMC_ERR_TYPE, fn, "an accumulate into a matrix of opaque elements");
    rmc_status_t st = patch_check(m, lo, hi, buf, ld, &empty, fn);
    if (st != RMC_OK || empty)
        return st;
    int64_t bst[MD], t0[MD], t1[MD], tc[MD], ntouch = 1, span;
    bst[n - 1] = 1;
    /* the buffer's strides in elements, and their bytes (and the buffer's extent) within int64: a
     * product that wrapped would move data to the wrong place (a wrapped stride may look small) */
    for (int k = n - 2; k >= 0; k--) {
        int64_t l = ld ? ld[k] : hi[k + 1] - lo[k + 1], bytes;
        if (__builtin_mul_overflow(bst[k + 1], l, &bst[k]) ||
            __builtin_mul_overflow(bst[k], (int64_t)m->esz, &bytes))
            return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                             "%s%d] = %lld: the buffer's stride of dimension %d (ld[%d..%d] times "
                             "%zu-byte elements) overflows 64 bits",
                             ld ? "ld[" : "the patch's extent [", ld ? k : k + 1, (long long)l, k,
                             k, n - 2, m->esz);
    }
    if (__builtin_mul_overflow(bst[0], hi[0] - lo[0], &span) ||
        __builtin_mul_overflow(span, (int64_t)m->esz, &span))
        return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                         "the buffer's extent (%lld rows of %lld elements of %zu bytes) overflows "
                         "64 bits%s",
                         (long long)(hi[0] - lo[0]), (long long)bst[0], m->esz,
                         ld ? " (ld too large)" : "");
    for (int k = 0; k < n; k++) {
        t0[k] = tc[k] = rmcc_tile_of(d, k, lo[k]);
        t1[k] = rmcc_tile_of(d, k, hi[k] - 1);
        ntouch *= t1[k] - t0[k] + 1;
    }
    /* A patch over several tiles: every tile's transfer is started, then all are waited for at
     * once, blocking calls too (one round trip's wait, not one per tile). A blocking call waits
     * for every MULTI_BATCH tiles (bounded resources in flight), and without memory for the
     * requests (or for a tile's request) it moves the rest of the tiles one by one. */
    enum { MULTI_BATCH = 256 };
    multi_t *mq = NULL;
    if (ntouch > 1) {
        size_t cap = (size_t)(req || ntouch < MULTI_BATCH ? ntouch : MULTI_BATCH);
        mq = malloc(sizeof(*mq) + cap * sizeof(rmc_request_h));
        if (!mq && req)
            return rmcc_fail(RMC_ERR_NOMEM, fn, "requests for %lld tiles", (long long)ntouch);
        if (mq) {
            mq->n = 0;
            mq->cap = cap;
        }
    }
    for (;;) {
        int64_t a[MD], b[MD], tlo[MD], thi[MD], t = 0, boff = 0;
        for (int k = 0; k < n; k++) {
            tlo[k] = rmcc_tile_lo(d, k, tc[k]);
            thi[k] = rmcc_tile_hi(d, k, tc[k]);
            a[k] = lo[k] > tlo[k] ? lo[k] : tlo[k];
            b[k] = hi[k] < thi[k] ? hi[k] : thi[k];
            t = t * d->nt[k] + tc[k];
            boff += (a[k] - lo[k]) * bst[k];
        }
        rmc_request_h *r = mq ? &mq->r[mq->n] : req;
        char *bp = (char *)buf + (size_t)boff * m->esz;
        st = move_box(m, op, t, tlo, thi, a, b, bp, bst, alpha, r, fn);
        /* blocking, no memory for this tile's request: finish what started, go on one by one */
        if (st == RMC_ERR_NOMEM && mq && !req) {
            st = rmc_wait_all(mq->r, mq->n);
            free(mq);
            mq = NULL;
            st = st == RMC_OK ? move_box(m, op, t, tlo, thi, a, b, bp, bst, alpha, NULL, fn)
                              : rmc_error_in(st, fn);
        }
        if (st != RMC_OK)
            break;
        if (mq && ++mq->n == MULTI_BATCH && !req) {
            st = rmc_wait_all(mq->r, mq->n);
            mq->n = 0;
            if (st != RMC_OK) {
                st = rmc_error_in(st, fn);
                break;
            }
        }
        int k = n - 1; /* the next tile of the box */
        for (; k >= 0; k--) {
            if (++tc[k] <= t1[k])
                break;
            tc[k] = t0[k];
        }
        if (k < 0)
            break;
    }
    if (!mq)
        return st;
    if (st != RMC_OK) { /* the transfers started complete before the error returns */
        rmc_wait_all(mq->r, mq->n);
        free(mq);
        return st;
    }
    if (!req) { /* blocking */
        st = rmc_wait_all(mq->r, mq->n);
        free(mq);
        return RMCC_LIKELY(st == RMC_OK) ? st : rmc_error_in(st, fn);
    }
    st = rmc_request_custom(multi_step, mq, req);
    if (st != RMC_OK) {
        rmc_wait_all(mq->r, mq->n);
        free(mq);
    }
    return st;
}

rmc_status_t rmc_matrix_get(rmc_matrix_h m, const int64_t lo[], const int64_t hi[], void *buf,
                            const int64_t ld[])
{
    RMCC_SERIAL();
    rmc_status_t st = rmcc_matrix_check(m, __func__);
    return st != RMC_OK ? st : rmcc_matrix_patch(m, 0, lo, hi, buf, ld, NULL, NULL, __func__);
}

rmc_status_t rmc_matrix_put(rmc_matrix_h m, const int64_t lo[], const int64_t hi[], const void *buf,
                            const int64_t ld[])
{
    RMCC_SERIAL();
    rmc_status_t st = rmcc_matrix_check(m, __func__);
    return st != RMC_OK ? st
                        : rmcc_matrix_patch(m, 1, lo, hi, (void *)buf, ld, NULL, NULL, __func__);
}

rmc_status_t rmc_matrix_acc(rmc_matrix_h m, const int64_t lo[], const int64_t hi[], const void *buf,
                            const int64_t ld[], const void *alpha)
{
    RMCC_SERIAL();
    rmc_status_t st = rmcc_matrix_check(m, __func__);
    return st != RMC_OK ? st
                        : rmcc_matrix_patch(m, 2, lo, hi, (void *)buf, ld, alpha, NULL, __func__);
}

/* The _nb forms: req must not be NULL. */
static rmc_status_t nb_patch(rmc_matrix_h m, int op, const int64_t lo[], const int64_t hi[],
                             const void *buf, const int64_t ld[], const void *alpha,
                             rmc_request_h *req, const char *fn)
{
    RMCC_SERIAL();
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL request pointer");
    *req = RMC_REQUEST_NULL;
    rmc_status_t st = rmcc_matrix_check(m, fn);
    return st != RMC_OK ? st : rmcc_matrix_patch(m, op, lo, hi, (void *)buf, ld, alpha, req, fn);
}

rmc_status_t rmc_matrix_get_nb(rmc_matrix_h m, const int64_t lo[], const int64_t hi[], void *buf,
                               const int64_t ld[], rmc_request_h *req)
{
    return nb_patch(m, 0, lo, hi, buf, ld, NULL, req, __func__);
}
rmc_status_t rmc_matrix_put_nb(rmc_matrix_h m, const int64_t lo[], const int64_t hi[],
                               const void *buf, const int64_t ld[], rmc_request_h *req)
{
    return nb_patch(m, 1, lo, hi, buf, ld, NULL, req, __func__);
}
rmc_status_t rmc_matrix_acc_nb(rmc_matrix_h m, const int64_t lo[], const int64_t hi[],
                               const void *buf, const int64_t ld[], const void *alpha,
                               rmc_request_h *req)
{
    return nb_patch(m, 2, lo, hi, buf, ld, alpha, req, __func__);
}

/* One element: the patch [idx, idx + 1). */
static rmc_status_t elem_op(rmc_matrix_h m, int op, const int64_t idx[], void *v, const char *fn)
{
    RMCC_SERIAL();
    rmc_status_t st = rmcc_matrix_check(m, fn);
    if (st == RMC_OK && !idx)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL index");
    if (st != RMC_OK)
        return st;
    int64_t hi[MD];
    for (int k = 0; k < m->d->ndim; k++) {
        if (idx[k] < 0 || idx[k] >= m->d->dims[k]) /* (checked first: idx + 1 may overflow) */
            return rmcc_fail(RMC_ERR_BOUNDS, fn, "index %lld of dimension %d outside [0, %lld)",
                             (long long)idx[k], k, (long long)m->d->dims[k]);
        hi[k] = idx[k] + 1;
    }
    return rmcc_matrix_patch(m, op, idx, hi, v, NULL, NULL, NULL, fn);
}

rmc_status_t rmc_matrix_elem_get(rmc_matrix_h m, const int64_t idx[], void *v)
{
    return elem_op(m, 0, idx, v, __func__);
}
rmc_status_t rmc_matrix_elem_put(rmc_matrix_h m, const int64_t idx[], const void *v)
{
    return elem_op(m, 1, idx, (void *)v, __func__);
}

/* A whole tile: the patch of its bounds, the buffer of its shape. */
static rmc_status_t tile_op(rmc_matrix_h m, int op, int64_t t, void *buf, rmc_request_h *req,
                            const char *fn)
{
    RMCC_SERIAL();
    if (req)
        *req = RMC_REQUEST_NULL;
    rmc_status_t st = rmcc_matrix_check(m, fn);
    if (st != RMC_OK)
        return st;
    int64_t lo[MD], hi[MD];
    if ((st = rmc_dist_tile(m->d, t, lo, hi, NULL)) != RMC_OK)
        return rmc_error_in(st, fn);
    return rmcc_matrix_patch(m, op, lo, hi, buf, NULL, NULL, req, fn);
}

rmc_status_t rmc_matrix_tile_get(rmc_matrix_h m, int64_t t, void *buf)
{
    return tile_op(m, 0, t, buf, NULL, __func__);
}
rmc_status_t rmc_matrix_tile_put(rmc_matrix_h m, int64_t t, const void *buf)
{
    return tile_op(m, 1, t, (void *)buf, NULL, __func__);
}
rmc_status_t rmc_matrix_tile_get_nb(rmc_matrix_h m, int64_t t, void *buf, rmc_request_h *req)
{
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    return tile_op(m, 0, t, buf, req, __func__);
}
rmc_status_t rmc_matrix_tile_put_nb(rmc_matrix_h m, int64_t t, const void *buf, rmc_request_h *req)
{
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    return tile_op(m, 1, t, (void *)buf, req, __func__);
}

rmc_status_t rmc_matrix_tile_local(rmc_matrix_h m, int64_t t, void **p)
{
    const char *fn = __func__;
    if (p)
        *p = NULL;
    rmc_status_t st = rmcc_matrix_check(m, fn);
    if (st == RMC_OK && !p)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL result pointer");
    if (st == RMC_OK && (t < 0 || t >= m->d->ntiles))
        st = rmcc_fail(RMC_ERR_BOUNDS, fn, "tile %lld (0 .. %lld)", (long long)t,
                       (long long)m->d->ntiles - 1);
    if (st != RMC_OK)
        return st;
    if (!(*p = rmcc_tile_laddr(m, t)))
        return RMC_ERR_NOT_FOUND; /* an outcome: the owner is on another node */
    return RMC_OK;
}

rmc_gptr_t rmc_matrix_tile_gptr(rmc_matrix_h m, int64_t t)
{
    if (rmcc_matrix_check(m, __func__) != RMC_OK)
        return RMC_GPTR_NULL;
    if (t < 0 || t >= m->d->ntiles) {
        rmcc_fail(RMC_ERR_ARG, __func__, "tile %lld (0 .. %lld)", (long long)t,
                  (long long)m->d->ntiles - 1);
        return RMC_GPTR_NULL;
    }
    rmc_gptr_t g = RMC_GPTR_NULL;
    g.rank = m->towner[t];
    g.off = m->parts.offs[m->towner[t]] + m->toff[t];
    return g;
}

rmc_status_t rmc_matrix_fill(rmc_matrix_h m, const void *v)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = rmcc_matrix_check(m, fn);
    if (st == RMC_OK && !v)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL value");
    uint64_t args[1] = {st == RMC_OK ? m->id : ~0ull};
    /* the handle's communicator whenever the handle is good (a rank with a bad value must still
     * meet the others in their collective, to fail there with them) */
    MPI_Comm comm;
    rmc_status_t alone = rmcc_matrix_comm(m, fn, &comm);
    if (alone != RMC_OK)
        return alone;
    if ((st = rmcc_coll_begin_on(comm, fn, args, 1, st)) != RMC_OK)
        return st;
    const struct rmc_dist *d = m->d;
    char *base = m->parts.ltab[rmcc.rank];
    for (int64_t t = 0; t < d->ntiles; t++) {
        if (m->towner[t] != rmcc.rank)
            continue;
        int64_t lo[MD], hi[MD], n = 1;
        rmc_dist_tile(m->d, t, lo, hi, NULL);
        for (int k = 0; k < d->ndim; k++)
            n *= hi[k] - lo[k];
        char *p = base + m->toff[t];
        for (int64_t i = 0; i < n; i++)
            memcpy(p + (size_t)i * m->esz, v, m->esz);
    }
    return rmcc_agree_on(comm, rmcc_barrier_on(comm));
}
