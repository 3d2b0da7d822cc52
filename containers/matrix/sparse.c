/* Distributed sparse matrices (include/rmc/sparse.h): creation, the replicated tile directory and
 * its renewal, tile access (one get of a tile's block, or the block in place), slicing, and the
 * collective fills (scatter, assemble, gather, Matrix Market, generators). The multiplications
 * are spmul.c's.
 *
 * A tile's block (sparse_impl.h) is one allocation in its owner's segment, written once by the
 * owner and never changed afterwards: a tile_set makes a new block, and the replaced one stays
 * readable until the next renew (the others may still read it through their directory, and views
 * of it are valid until then), whose barrier ends every read of it before it is freed. */
#include "config.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csr_impl.h"
#include "sparse_impl.h"

#define I64   "%lld"
#define LL(x) ((long long)(x))

/* A piece of a tile on the wire (assemble, scatter, gather): this header, then the block of its
 * rows (rmcc_spblock_bytes of nrows, nnz; a multiple of 8 bytes). */
enum { HDR_T, HDR_ROW, HDR_NROWS, HDR_NNZ, HDR_WORDS };

static uint64_t next_id; /* equal on every rank: advanced by each creation */

rmc_status_t rmcc_spmatrix_check(const struct rmc_spmatrix *s, const char *fn)
{
    return rmcc_obj_check(s ? &s->obj : NULL, RMCC_MAGIC_SPMATRIX, "sparse matrix", fn);
}

static void s_release(rmcc_obj_t *o)
{
    struct rmc_spmatrix *s = (struct rmc_spmatrix *)o;
    free(s->towner);
    free(s->dir);
    free(s->pub);
    free(s->stale);
    free(s->zeros);
    rmc_dist_free(s->d);
    s->towner = NULL;
    s->dir = NULL;
    s->pub = NULL;
    s->stale = NULL;
    s->zeros = NULL;
    s->d = NULL;
}

/* ---------------------------------------------------------------------- helpers --- */

static inline size_t idx_w(int idx64)
{
    return idx64 ? 8 : 4;
}

/* This rank's own block at offset off (its load/store address). */
static inline char *own_block(uint64_t off)
{
    return rmcc.lbase[rmcc.rank] + off;
}

/* t in [0, ntiles) (RMC_ERR_BOUNDS otherwise). */
static rmc_status_t tile_check(const struct rmc_spmatrix *s, int64_t t, const char *fn)
{
    if (t < 0 || t >= s->d->ntiles)
        return rmcc_fail(RMC_ERR_BOUNDS, fn, "tile " I64 " (0 .. " I64 ")", LL(t),
                         LL(s->d->ntiles - 1));
    return RMC_OK;
}

/* Writes the valid matrix a (its nnz fitting width w64) as a block of width w64 at p. */
static void block_write(char *p, const rmc_csr_t *a, int w64)
{
    void *rp, *ci;
    double *v;
    rmcc_spblock_arrays(p, a->nrows, a->nnz, w64, &rp, &ci, &v);
    size_t w = idx_w(w64), idx = (size_t)(a->nrows + 1 + a->nnz) * w;
    memset(p + idx, 0, (size_t)((char *)v - (p + idx))); /* the padding */
    if (!a->rowptr) {                                    /* 0 rows, as rmc_csr_init made it */
        memset(rp, 0, w);
    } else if (a->idx64 == w64) {
        memcpy(rp, a->rowptr, (size_t)(a->nrows + 1) * w);
        if (a->nnz)
            memcpy(ci, a->colind, (size_t)a->nnz * w);
    } else {
        for (int64_t i = 0; i <= a->nrows; i++)
            rmcc_idx_set(rp, i, rmc_csr_rowptr(a, i), w64);
        for (int64_t k = 0; k < a->nnz; k++)
            rmcc_idx_set(ci, k, rmc_csr_colind(a, k), w64);
    }
    if (a->nnz)
        memcpy(v, a->val, (size_t)a->nnz * sizeof(double));
}

/* Copies the block at p into out (allocated with the block's shape, nnz and width). */
static void block_read(const char *p, rmc_csr_t *out)
{
    void *rp, *ci;
    double *v;
    rmcc_spblock_arrays((char *)p, out->nrows, out->nnz, out->idx64, &rp, &ci, &v);
    size_t w = idx_w(out->idx64);
    memcpy(out->rowptr, rp, (size_t)(out->nrows + 1) * w);
    if (out->nnz) {
        memcpy(out->colind, ci, (size_t)out->nnz * w);
        memcpy(out->val, v, (size_t)out->nnz * sizeof(double));
    }
}

/* Agrees on st among all ranks (the worst one), and when it is an error every rank learns the
 * reason from the (lowest) rank whose status it is: "rank R: why" in rmc_last_error. Attentive. */
static rmc_status_t agree_why(rmc_status_t st, const char *fn)
{
    int in[2] = {(int)st, rmcc.rank}, out[2] = {RMC_OK, 0};
    MPI_Request rq;
    if (MPI_Iallreduce(in, out, 1, MPI_2INT, MPI_MINLOC, rmcc.comm, &rq) != MPI_SUCCESS)
        return rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallreduce (the outcome) failed");
    rmc_status_t s2 = rmc_wait_mpi(&rq);
    if (s2 != RMC_OK)
        return rmc_error_in(s2, fn);
    if (out[0] == RMC_OK)
        return RMC_OK;
    char msg[512] = "";
    if (rmcc.rank == out[1])
        snprintf(msg, sizeof(msg), "%s", rmc_last_error());
    s2 = rmcc_bcast(msg, sizeof(msg), out[1], fn);
    if (rmcc.rank == out[1])
        return (rmc_status_t)out[0];
    if (s2 != RMC_OK)
        return rmcc_fail((rmc_status_t)out[0], fn, "rank %d failed: %s", out[1],
                         rmc_status_string((rmc_status_t)out[0]));
    msg[sizeof(msg) - 1] = 0;
    const char *why = msg;
    size_t fl = strlen(fn);
    if (strncmp(why, fn, fl) == 0 && why[fl] == ':' && why[fl + 1] == ' ')
        why += fl + 2; /* the same call's name once */
    return rmcc_fail((rmc_status_t)out[0], fn, "rank %d: %s", out[1], why);
}

/* The start of a collective on s: the handle check (a rank that fails it passes other arguments,
 * so every rank fails), the arrival and the arguments' agreement (rmcc_coll_begin; args[0] is
 * s's id, set here), then the local checks' status `st` agreed with its reason (agree_why). */
static rmc_status_t coll_start(struct rmc_spmatrix *s, uint64_t *args, int nargs, rmc_status_t st,
                               const char *fn)
{
    rmc_status_t hst = rmcc_spmatrix_check(s, fn);
    args[0] = hst == RMC_OK ? s->id : ~0ull;
    if ((hst = rmcc_coll_begin(fn, args, nargs, hst)) != RMC_OK)
        return hst;
    return agree_why(st, fn);
}

/* Room for n more stale blocks. */
static rmc_status_t stale_reserve(struct rmc_spmatrix *s, size_t n, const char *fn)
{
    if (s->nstale + n <= s->capstale)
        return RMC_OK;
    size_t cap = s->capstale ? s->capstale : 16;
    while (cap < s->nstale + n)
        cap *= 2;
    uint64_t *p = realloc(s->stale, cap * sizeof(uint64_t));
    if (!p)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "the list of replaced blocks (%zu)", cap);
    s->stale = p;
    s->capstale = cap;
    return RMC_OK;
}

/* Own tile t's current block goes onto the stale list (room reserved), freed at the next renew:
 * the others may read it until then if it was published, and views of it stay valid. */
static void retire(struct rmc_spmatrix *s, int64_t t)
{
    if (s->dir[t].off)
        s->stale[s->nstale++] = s->dir[t].off;
}

/* ---------------------------------------------------------------- create, destroy --- */

rmc_status_t rmc_spmatrix_create(rmc_dist_h d, int idx64, rmc_spmatrix_h *sp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (sp)
        *sp = NULL;
    RMCC_CHECK_UP(fn);
    rmc_status_t st = RMC_OK;
    if (!sp)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if ((st = rmcc_dist_check(d, fn)) != RMC_OK)
        ;
    else if (d->ndim != 2)
        st = rmcc_fail(RMC_ERR_ARG, fn, "a %d-D distribution (sparse matrices are 2-D)", d->ndim);
    else if (d->nranks != rmcc.nranks)
        st = rmcc_fail(RMC_ERR_ARG, fn, "the distribution was made for %d ranks, not %d", d->nranks,
                       rmcc.nranks);
    else if (idx64 != 0 && idx64 != 1)
        st = rmcc_fail(RMC_ERR_ARG, fn, "idx64 is %d (0: 32-bit indices, 1: 64-bit)", idx64);
    else if (!idx64 && (d->dims[0] > RMCC_I32MAX || d->dims[1] > RMCC_I32MAX))
        st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                       "a " I64 " x " I64 " matrix does not fit 32-bit indices (at most %d rows "
                       "and columns): use idx64 = 1",
                       LL(d->dims[0]), LL(d->dims[1]), INT32_MAX);
    else if (d->ntiles > INT_MAX / 3)
        st = rmcc_fail(RMC_ERR_TOO_BIG, fn, I64 " tiles (at most %d)", LL(d->ntiles), INT_MAX / 3);
    uint64_t args[3] = {next_id, (uint64_t)idx64, st == RMC_OK ? rmcc_dist_digest(d) : 0};
    if ((st = rmcc_coll_begin(fn, args, 3, st)) != RMC_OK)
        return st;
    next_id++;
    struct rmc_spmatrix *s = calloc(1, sizeof(*s));
    rmc_status_t mine = s ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "sparse matrix handle");
    if (mine == RMC_OK) {
        s->idx64 = idx64;
        s->id = args[0];
        mine = rmcc_dist_dup(d, &s->d, fn);
    }
    if (mine == RMC_OK) {
        size_t nt = (size_t)d->ntiles;
        s->towner = malloc(nt * sizeof(int));
        s->dir = calloc(nt, sizeof(rmcc_sptile_t)); /* every tile empty */
        s->pub = calloc(nt, sizeof(uint64_t));
        if (!s->towner || !s->dir || !s->pub)
            mine = rmcc_fail(RMC_ERR_NOMEM, fn, "the directory of " I64 " tiles", LL(d->ntiles));
    }
    for (int64_t t = 0; mine == RMC_OK && t < d->ntiles; t++) {
        int64_t tc[2] = {t / d->nt[1], t % d->nt[1]};
        s->towner[t] = rmcc_owner(s->d, tc);
    }
    st = agree_why(mine, fn);
    if (st == RMC_OK) {
        rmcc_obj_add(&s->obj, RMCC_MAGIC_SPMATRIX, s_release);
        *sp = s;
        return RMC_OK;
    }
    if (s)
        s_release(&s->obj);
    free(s);
    return st;
}

/* Frees this rank's blocks of s (the current ones and the replaced ones). */
static rmc_status_t free_blocks(struct rmc_spmatrix *s, const char *fn)
{
    rmc_status_t st = RMC_OK, s2;
    for (int64_t t = 0; t < s->d->ntiles; t++)
        if (s->towner[t] == rmcc.rank && s->dir[t].off &&
            (s2 = rmcc_free_off(s->dir[t].off, fn)) != RMC_OK)
            st = s2;
    for (size_t i = 0; i < s->nstale; i++)
        if ((s2 = rmcc_free_off(s->stale[i], fn)) != RMC_OK)
            st = s2;
    s->nstale = 0;
    return st;
}

rmc_status_t rmc_spmatrix_destroy(rmc_spmatrix_h s)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st, bar;
    if ((st = rmcc_destroy_begin(s ? &s->obj : NULL, RMCC_MAGIC_SPMATRIX, "sparse matrix",
                                 s ? s->id : 0, &bar, fn)) != RMC_OK)
        return st;
    st = free_blocks(s, fn);
    rmcc_obj_kill(&s->obj);
    return bar != RMC_OK ? bar : st;
}

/* ------------------------------------------------------------------------ queries --- */

rmc_dist_h rmc_spmatrix_dist(rmc_spmatrix_h s)
{
    return rmcc_spmatrix_check(s, __func__) == RMC_OK ? s->d : NULL;
}

int rmc_spmatrix_idx64(rmc_spmatrix_h s)
{
    return rmcc_spmatrix_check(s, __func__) == RMC_OK ? s->idx64 : -1;
}

int64_t rmc_spmatrix_tile_nnz(rmc_spmatrix_h s, int64_t t)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (rmcc_spmatrix_check(s, fn) != RMC_OK || tile_check(s, t, fn) != RMC_OK)
        return -1;
    return s->dir[t].nnz;
}

rmc_status_t rmc_spmatrix_nnz(rmc_spmatrix_h s, int64_t *nnz)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    uint64_t args[1];
    rmc_status_t st = nnz ? RMC_OK : rmcc_fail(RMC_ERR_ARG, fn, "NULL result pointer");
    if ((st = coll_start(s, args, 1, st, fn)) != RMC_OK)
        return st;
    long long mine = 0, all = 0;
    for (int64_t t = 0; t < s->d->ntiles; t++)
        if (s->towner[t] == rmcc.rank)
            mine += s->dir[t].nnz;
    MPI_Request rq;
    if (MPI_Iallreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, rmcc.comm, &rq) != MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallreduce failed");
    else
        st = rmc_wait_mpi(&rq);
    if ((st = rmcc_agree(st)) == RMC_OK)
        *nnz = all;
    return st;
}

/* ------------------------------------------------------------------ set and renew --- */

rmc_status_t rmc_spmatrix_tile_set(rmc_spmatrix_h s, int64_t t, const rmc_csr_t *tile)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = rmcc_spmatrix_check(s, fn);
    if (st != RMC_OK || (st = tile_check(s, t, fn)) != RMC_OK)
        return st;
    if (s->towner[t] != rmcc.rank)
        return rmcc_fail(RMC_ERR_ARG, fn, "tile " I64 " belongs to rank %d, not to this rank (%d)",
                         LL(t), s->towner[t], rmcc.rank);
    if ((st = rmcc_csr_valid(tile, fn, "tile")) != RMC_OK)
        return st;
    int64_t rows, cols;
    rmcc_sptile_shape(s, t, &rows, &cols);
    if (tile->nrows != rows || tile->ncols != cols)
        return rmcc_fail(RMC_ERR_FORMAT, fn,
                         "tile " I64 " is " I64 " x " I64 ", the matrix given is " I64 " x " I64,
                         LL(t), LL(rows), LL(cols), LL(tile->nrows), LL(tile->ncols));
    if (!rmcc_fits(tile->nnz, s->idx64))
        return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                         "tile " I64 ": " I64 " nonzeros do not fit the matrix's 32-bit indices",
                         LL(t), LL(tile->nnz));
    if ((st = stale_reserve(s, 1, fn)) != RMC_OK)
        return st;
    uint64_t off = 0;
    if (tile->nnz) {
        if ((st = rmcc_alloc_off(rmcc_spblock_bytes(rows, tile->nnz, s->idx64), &off, fn)) !=
            RMC_OK)
            return st;
        block_write(own_block(off), tile, s->idx64);
    }
    retire(s, t);
    s->dir[t].off = off;
    s->dir[t].nnz = tile->nnz;
    return RMC_OK;
}

/* The directory's renewal, the end of renew and of every fill: each rank's changes ch[0 .. 3n-1]
 * (tile, offset, nonzeros of its own tiles) reach every rank (st: the caller's status, agreed
 * first); once every rank has them (agreed),
 * each applies them (its own tiles' replaced blocks retired), a barrier ends every read of the
 * replaced blocks, and they are freed. *applied says whether the changes were applied: before
 * that, an error leaves everything as it was. */
static rmc_status_t renew_core(struct rmc_spmatrix *s, const uint64_t *ch, int n, rmc_status_t st,
                               int *applied, const char *fn)
{
    *applied = 0;
    int nr = rmcc.nranks, mine = 3 * n;
    int *cnt = malloc((size_t)nr * 2 * sizeof(int));
    if (st == RMC_OK && !cnt)
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the directory's exchange");
    if (st == RMC_OK)
        st = stale_reserve(s, (size_t)n, fn);
    if ((st = agree_why(st, fn)) != RMC_OK) {
        free(cnt);
        return st;
    }
    MPI_Request rq;
    if (MPI_Iallgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, rmcc.comm, &rq) != MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallgather (the directory's changes) failed");
    else
        st = rmc_wait_mpi(&rq);
    int *displ = cnt + nr;
    int64_t total = 0;
    for (int r = 0; st == RMC_OK && r < nr; r++) {
        displ[r] = (int)total;
        total += cnt[r]; /* at most 3 ntiles <= INT_MAX (create's limit) */
    }
    uint64_t *all = st == RMC_OK ? malloc(((size_t)total + 1) * sizeof(uint64_t)) : NULL;
    if (st == RMC_OK && !all)
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the directory's changes (" I64 " tiles)", LL(total / 3));
    if ((st = agree_why(st, fn)) == RMC_OK) {
        if (MPI_Iallgatherv(ch, mine, MPI_UINT64_T, all, cnt, displ, MPI_UINT64_T, rmcc.comm,
                            &rq) != MPI_SUCCESS)
            st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallgatherv (the directory's changes) failed");
        else
            st = rmc_wait_mpi(&rq);
        st = rmcc_agree(st);
    }
    if (st != RMC_OK) {
        free(cnt);
        free(all);
        return st;
    }
    for (int64_t i = 0; i < total; i += 3) {
        int64_t t = (int64_t)all[i];
        rmcc_sptile_t e = {all[i + 1], (int64_t)all[i + 2]};
        if (s->towner[t] == rmcc.rank && s->dir[t].off != e.off)
            retire(s, t);
        s->dir[t] = e;
    }
    *applied = 1;
    free(cnt);
    free(all);
    st = rmcc_agree(rmc_barrier()); /* nobody reads a replaced block any more */
    for (size_t i = 0; i < s->nstale; i++)
        rmcc_free_off(s->stale[i], fn);
    s->nstale = 0;
    for (int64_t t = 0; t < s->d->ntiles; t++)
        if (s->towner[t] == rmcc.rank)
            s->pub[t] = s->dir[t].off;
    return st;
}

rmc_status_t rmc_spmatrix_renew(rmc_spmatrix_h s)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    uint64_t args[1];
    rmc_status_t st = coll_start(s, args, 1, RMC_OK, fn);
    if (st != RMC_OK)
        return st;
    int64_t n = 0;
    for (int64_t t = 0; t < s->d->ntiles; t++)
        n += s->towner[t] == rmcc.rank && s->dir[t].off != s->pub[t];
    uint64_t *ch = malloc(((size_t)n * 3 + 1) * sizeof(uint64_t));
    if (!ch)
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the changes of " I64 " tiles", LL(n));
    int64_t k = 0;
    for (int64_t t = 0; ch && t < s->d->ntiles; t++)
        if (s->towner[t] == rmcc.rank && s->dir[t].off != s->pub[t]) {
            ch[k++] = (uint64_t)t;
            ch[k++] = s->dir[t].off;
            ch[k++] = (uint64_t)s->dir[t].nnz;
        }
    int applied;
    st = renew_core(s, ch, (int)n, st, &applied, fn);
    free(ch);
    return st;
}

/* ---------------------------------------------------------------------- tile reads --- */

/* A tile_get_nb in flight: the block arriving in buf, copied into *out when it is there. */
typedef struct fetch {
    rmc_request_h r;
    char *buf;
    rmc_csr_t *out;
} fetch_t;

static rmc_status_t fetch_step(void *state, int *done)
{
    fetch_t *f = state;
    int fin = 0;
    rmc_status_t st = rmc_test(&f->r, &fin);
    *done = st != RMC_OK || fin;
    if (!*done)
        return RMC_OK;
    if (st == RMC_OK)
        block_read(f->buf, f->out);
    else
        rmc_csr_free(f->out);
    if (f->r == RMC_REQUEST_NULL) /* (a failed MPI test leaves the get live: MPI may still write
                                   * into buf, which is then never freed) */
        free(f->buf);
    free(f);
    return st;
}

/* Tile t into *out (allocated here with the tile's shape): a node-local owner's block copied at
 * once, another's by one get of the block into a buffer (req NULL: blocking; else a request that
 * copies it into *out when it arrives, RMC_REQUEST_NULL when it is already there). */
static rmc_status_t tile_fetch(struct rmc_spmatrix *s, int64_t t, rmc_csr_t *out,
                               rmc_request_h *req, const char *fn)
{
    int64_t rows, cols;
    rmcc_sptile_shape(s, t, &rows, &cols);
    rmcc_sptile_t e = s->dir[t];
    int owner = s->towner[t];
    rmc_status_t st = rmcc_csr_alloc(out, rows, cols, e.nnz, s->idx64, fn);
    if (st != RMC_OK || !e.off)
        return st; /* an empty tile: row pointers zero */
    if (rmcc.lbase[owner]) {
        block_read(rmcc.lbase[owner] + e.off, out);
        return RMC_OK;
    }
    size_t bytes = rmcc_spblock_bytes(rows, e.nnz, s->idx64);
    char *buf = malloc(bytes);
    fetch_t *f = req ? malloc(sizeof(*f)) : NULL;
    if (!buf || (req && !f)) {
        free(buf);
        free(f);
        rmc_csr_free(out);
        return rmcc_fail(RMC_ERR_NOMEM, fn, "a buffer for tile " I64 " (%zu bytes)", LL(t), bytes);
    }
    const void *src = rmcc_addr(owner, e.off);
    if (!req) {
        st = rmc_get(src, buf, bytes, owner);
        if (st == RMC_OK)
            block_read(buf, out);
        else
            rmc_csr_free(out);
        free(buf);
        return st == RMC_OK ? st : rmc_error_in(st, fn);
    }
    f->r = RMC_REQUEST_NULL;
    f->buf = buf;
    f->out = out;
    st = rmc_get_nb(src, buf, bytes, owner, &f->r);
    if (st == RMC_OK && f->r != RMC_REQUEST_NULL) {
        if ((st = rmc_request_custom(fetch_step, f, req)) == RMC_OK)
            return RMC_OK;
        rmc_wait(&f->r);
    }
    if (st == RMC_OK)
        block_read(buf, out);
    else
        rmc_csr_free(out);
    free(buf);
    free(f);
    return st == RMC_OK ? st : rmc_error_in(st, fn);
}

/* The checks of a tile read. */
static rmc_status_t read_check(struct rmc_spmatrix *s, int64_t t, const rmc_csr_t *out,
                               const char *fn)
{
    rmc_status_t st = rmcc_spmatrix_check(s, fn);
    if (st == RMC_OK && !out)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL result matrix");
    if (st == RMC_OK)
        st = tile_check(s, t, fn);
    return st;
}

rmc_status_t rmc_spmatrix_tile_get(rmc_spmatrix_h s, int64_t t, rmc_csr_t *out)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (out)
        rmc_csr_init(out, 0);
    rmc_status_t st = read_check(s, t, out, fn);
    return st != RMC_OK ? st : tile_fetch(s, t, out, NULL, fn);
}

rmc_status_t rmc_spmatrix_tile_get_nb(rmc_spmatrix_h s, int64_t t, rmc_csr_t *out,
                                      rmc_request_h *req)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (out)
        rmc_csr_init(out, 0);
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL request pointer");
    *req = RMC_REQUEST_NULL;
    rmc_status_t st = read_check(s, t, out, fn);
    return st != RMC_OK ? st : tile_fetch(s, t, out, req, fn);
}

rmc_status_t rmc_spmatrix_tile_view(rmc_spmatrix_h s, int64_t t, rmc_csr_t *view)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (view)
        rmc_csr_init(view, 0);
    rmc_status_t st = read_check(s, t, view, fn);
    if (st != RMC_OK)
        return st;
    int owner = s->towner[t];
    if (!rmcc.lbase[owner])
        return RMC_ERR_NOT_FOUND; /* an outcome: the owner is on another node */
    int64_t rows, cols;
    rmcc_sptile_shape(s, t, &rows, &cols);
    rmcc_sptile_t e = s->dir[t];
    view->nrows = rows;
    view->ncols = cols;
    view->nnz = e.nnz;
    view->idx64 = s->idx64;
    view->own = 0;
    if (e.off) {
        rmcc_spblock_arrays(rmcc.lbase[owner] + e.off, rows, e.nnz, s->idx64, &view->rowptr,
                            &view->colind, &view->val);
        return RMC_OK;
    }
    if (!s->zeros) { /* empty tiles' row pointers: zeros for the tallest tile */
        int64_t most = 0;
        for (int64_t i = 0; i < s->d->nt[0]; i++) {
            int64_t h = rmcc_tile_hi(s->d, 0, i) - rmcc_tile_lo(s->d, 0, i);
            most = h > most ? h : most;
        }
        if (!(s->zeros = calloc((size_t)most + 1, idx_w(s->idx64)))) {
            rmc_csr_init(view, s->idx64);
            return rmcc_fail(RMC_ERR_NOMEM, fn, "row pointers of an empty tile (" I64 " rows)",
                             LL(most));
        }
    }
    view->rowptr = s->zeros;
    return RMC_OK;
}

/* ------------------------------------------------------------------------- slicing --- */

rmc_status_t rmc_spmatrix_slice(rmc_spmatrix_h s, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                                rmc_csr_t *out)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (out)
        rmc_csr_init(out, 0);
    rmc_status_t st = rmcc_spmatrix_check(s, fn);
    if (st == RMC_OK && !out)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL result matrix");
    if (st != RMC_OK)
        return st;
    const struct rmc_dist *d = s->d;
    int64_t m = d->dims[0], n = d->dims[1];
    if (r0 > r1 || c0 > c1)
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "rows [" I64 ", " I64 ") or columns [" I64 ", " I64 ") reversed", LL(r0),
                         LL(r1), LL(c0), LL(c1));
    if (r0 < 0 || r1 > m || c0 < 0 || c1 > n)
        return rmcc_fail(RMC_ERR_BOUNDS, fn,
                         "rows [" I64 ", " I64 ") x columns [" I64 ", " I64 ") outside the " I64
                         " x " I64 " matrix",
                         LL(r0), LL(r1), LL(c0), LL(c1), LL(m), LL(n));
    if (r0 == r1 || c0 == c1)
        return rmcc_csr_alloc(out, r1 - r0, c1 - c0, 0, s->idx64, fn);
    /* the touched tiles, a band of tile rows at a time: all fetched at once (or viewed), each
     * cut to the slice (rmc_csr_slice); then the output's rows, each the concatenation of its
     * pieces in column order */
    int64_t ti0 = rmcc_tile_of(d, 0, r0), ti1 = rmcc_tile_of(d, 0, r1 - 1);
    int64_t tj0 = rmcc_tile_of(d, 1, c0), tj1 = rmcc_tile_of(d, 1, c1 - 1);
    int64_t nb = ti1 - ti0 + 1, nc = tj1 - tj0 + 1;
    rmc_csr_t *piece = rmcc_malloc_n(nb * nc, sizeof(rmc_csr_t));
    rmc_csr_t *tile = rmcc_malloc_n(nc, sizeof(rmc_csr_t));
    rmc_request_h *req = rmcc_malloc_n(nc, sizeof(rmc_request_h));
    char *viewed = rmcc_malloc_n(nc, 1);
    if (!piece || !tile || !req || !viewed) {
        free(piece);
        free(tile);
        free(req);
        free(viewed);
        return rmcc_fail(RMC_ERR_NOMEM, fn, "the pieces of " I64 " x " I64 " tiles", LL(nb),
                         LL(nc));
    }
    for (int64_t i = 0; i < nb * nc; i++)
        rmc_csr_init(&piece[i], s->idx64);
    int64_t nnz = 0;
    for (int64_t b = 0; st == RMC_OK && b < nb; b++) {
        int64_t ti = ti0 + b, tlo = rmcc_tile_lo(d, 0, ti), thi = rmcc_tile_hi(d, 0, ti);
        for (int64_t j = 0; j < nc; j++) {
            rmc_csr_init(&tile[j], s->idx64);
            req[j] = RMC_REQUEST_NULL;
            viewed[j] = 0;
        }
        for (int64_t j = 0; st == RMC_OK && j < nc; j++) {
            int64_t t = ti * d->nt[1] + tj0 + j;
            if (rmcc.lbase[s->towner[t]] && rmc_spmatrix_tile_view(s, t, &tile[j]) == RMC_OK)
                viewed[j] = 1;
            else
                st = tile_fetch(s, t, &tile[j], &req[j], fn);
        }
        rmc_status_t w = rmc_wait_all(req, (size_t)nc); /* also after an error: none in flight */
        st = st != RMC_OK ? st : w != RMC_OK ? rmc_error_in(w, fn) : RMC_OK;
        int64_t a0 = r0 > tlo ? r0 : tlo, a1 = r1 < thi ? r1 : thi;
        for (int64_t j = 0; st == RMC_OK && j < nc; j++) {
            int64_t tj = tj0 + j, clo = rmcc_tile_lo(d, 1, tj), chi = rmcc_tile_hi(d, 1, tj);
            int64_t b0 = c0 > clo ? c0 : clo, b1 = c1 < chi ? c1 : chi;
            st =
                rmc_csr_slice(&piece[b * nc + j], &tile[j], a0 - tlo, a1 - tlo, b0 - clo, b1 - clo);
            if (st == RMC_OK)
                nnz += piece[b * nc + j].nnz;
            else
                rmc_error_in(st, fn);
        }
        for (int64_t j = 0; j < nc; j++)
            if (!viewed[j])
                rmc_csr_free(&tile[j]);
    }
    if (st == RMC_OK)
        st = rmcc_csr_alloc(out, r1 - r0, c1 - c0, nnz, s->idx64, fn);
    int w64 = s->idx64;
    size_t w = idx_w(w64);
    int64_t k = 0, row = 0;
    for (int64_t b = 0; st == RMC_OK && b < nb; b++) {
        int64_t rows = piece[b * nc].nrows;
        for (int64_t i = 0; i < rows; i++, row++) {
            for (int64_t j = 0; j < nc; j++) {
                const rmc_csr_t *p = &piece[b * nc + j];
                int64_t lo = rmc_csr_rowptr(p, i), hi = rmc_csr_rowptr(p, i + 1);
                int64_t shift = (j ? rmcc_tile_lo(d, 1, tj0 + j) : c0) - c0;
                if (shift == 0) {
                    memcpy(rmcc_idx_at(out->colind, k, w64), rmcc_idx_at(p->colind, lo, w64),
                           (size_t)(hi - lo) * w);
                } else {
                    for (int64_t q = lo; q < hi; q++)
                        rmcc_idx_set(out->colind, k + q - lo, rmc_csr_colind(p, q) + shift, w64);
                }
                if (hi > lo)
                    memcpy(out->val + k, p->val + lo, (size_t)(hi - lo) * sizeof(double));
                k += hi - lo;
            }
            rmcc_idx_set(out->rowptr, row + 1, k, w64);
        }
    }
    for (int64_t i = 0; i < nb * nc; i++)
        rmc_csr_free(&piece[i]);
    free(piece);
    free(tile);
    free(req);
    free(viewed);
    return st;
}

/* --------------------------------------------------------------- filling s: pieces --- */

/* The pieces of part `a` (rows [r0, r0 + a->nrows) of the matrix, every column; valid) cut by
 * tile, in the matrix's index width: with buf NULL their sizes in 8-byte words are added to
 * words[owner]; else each is written at buf + cur[owner] (and cur advanced). Pieces without
 * nonzeros are left out (a tile no piece reaches is empty). cnt: scratch of nt[1] entries. */
static void split_part(const struct rmc_spmatrix *s, const rmc_csr_t *a, int64_t r0, int64_t *cnt,
                       int64_t *words, uint64_t *buf, int64_t *cur)
{
    const struct rmc_dist *d = s->d;
    int64_t nt1 = d->nt[1], r1 = r0 + a->nrows;
    int w64 = s->idx64;
    if (a->nrows == 0)
        return;
    for (int64_t ti = rmcc_tile_of(d, 0, r0); ti < d->nt[0] && rmcc_tile_lo(d, 0, ti) < r1; ti++) {
        int64_t tlo = rmcc_tile_lo(d, 0, ti), thi = rmcc_tile_hi(d, 0, ti);
        int64_t lo = r0 > tlo ? r0 : tlo, hi = r1 < thi ? r1 : thi;
        memset(cnt, 0, (size_t)nt1 * sizeof(int64_t));
        for (int64_t i = lo; i < hi; i++) { /* a row's columns ascend: so do their tiles */
            int64_t p = rmc_csr_rowptr(a, i - r0), q = rmc_csr_rowptr(a, i - r0 + 1), tj = -1,
                    chi = 0;
            for (int64_t k = p; k < q; k++) {
                int64_t c = rmc_csr_colind(a, k);
                if (c >= chi) {
                    tj = rmcc_tile_of(d, 1, c);
                    chi = rmcc_tile_hi(d, 1, tj);
                }
                cnt[tj]++;
            }
        }
        for (int64_t tj = 0; tj < nt1; tj++) {
            if (!cnt[tj])
                continue;
            int64_t t = ti * nt1 + tj;
            int owner = s->towner[t];
            size_t bytes = rmcc_spblock_bytes(hi - lo, cnt[tj], w64);
            if (!buf) {
                words[owner] += HDR_WORDS + (int64_t)(bytes / 8);
                continue;
            }
            uint64_t *h = buf + cur[owner];
            h[HDR_T] = (uint64_t)t;
            h[HDR_ROW] = (uint64_t)(lo - tlo);
            h[HDR_NROWS] = (uint64_t)(hi - lo);
            h[HDR_NNZ] = (uint64_t)cnt[tj];
            cur[owner] += HDR_WORDS + (int64_t)(bytes / 8);
            char *blk = (char *)(h + HDR_WORDS);
            void *rp, *ci;
            double *v;
            rmcc_spblock_arrays(blk, hi - lo, cnt[tj], w64, &rp, &ci, &v);
            memset((char *)v - 4, 0, 4); /* the padding, if any */
            int64_t clo = rmcc_tile_lo(d, 1, tj), chi = rmcc_tile_hi(d, 1, tj), n = 0;
            rmcc_idx_set(rp, 0, 0, w64);
            for (int64_t i = lo; i < hi; i++) {
                int64_t p = rmc_csr_rowptr(a, i - r0), q = rmc_csr_rowptr(a, i - r0 + 1);
                int64_t e = rmcc_csr_lower_bound(a, p, q, chi);
                for (int64_t k = rmcc_csr_lower_bound(a, p, q, clo); k < e; k++, n++) {
                    rmcc_idx_set(ci, n, rmc_csr_colind(a, k) - clo, w64);
                    v[n] = a->val[k];
                }
                rmcc_idx_set(rp, i - lo + 1, n, w64);
            }
        }
    }
}

/* The new blocks of a fill: off[t] / nnz[t] for this rank's tiles (0: none). */
typedef struct fill {
    uint64_t *off;
    int64_t *nnz;
} fill_t;

static void fill_drop(const struct rmc_spmatrix *s, fill_t *f, const char *fn)
{
    for (int64_t t = 0; f->off && t < s->d->ntiles; t++)
        if (f->off[t])
            rmcc_free_off(f->off[t], fn);
    free(f->off);
    free(f->nnz);
    f->off = NULL;
    f->nnz = NULL;
}

/* Walks the pieces in words [0, n) of buf: each one's header checked (a tile of this rank, rows
 * within it, the piece within the buffer); fn(piece) for each. RMC_ERR_STATE for a bad one. */
static rmc_status_t piece_walk(const struct rmc_spmatrix *s, const uint64_t *buf, int64_t n,
                               rmc_status_t (*visit)(const struct rmc_spmatrix *s, fill_t *f,
                                                     const uint64_t *h, int pass),
                               fill_t *f, int pass, const char *fn)
{
    for (int64_t i = 0; i < n;) {
        const uint64_t *h = buf + i;
        if (n - i < HDR_WORDS)
            return rmcc_fail(RMC_ERR_STATE, fn, "a corrupt piece at word " I64, LL(i));
        int64_t t = (int64_t)h[HDR_T], row = (int64_t)h[HDR_ROW], nr = (int64_t)h[HDR_NROWS];
        int64_t nnz = (int64_t)h[HDR_NNZ], rows, cols;
        if (t < 0 || t >= s->d->ntiles || s->towner[t] != rmcc.rank)
            return rmcc_fail(RMC_ERR_STATE, fn, "a corrupt piece at word " I64, LL(i));
        rmcc_sptile_shape(s, t, &rows, &cols);
        if (row < 0 || nr < 0 || row > rows - nr || nnz < 0 || nnz > nr * cols)
            return rmcc_fail(RMC_ERR_STATE, fn, "a corrupt piece of tile " I64, LL(t));
        int64_t len = HDR_WORDS + (int64_t)(rmcc_spblock_bytes(nr, nnz, s->idx64) / 8);
        if (len > n - i)
            return rmcc_fail(RMC_ERR_STATE, fn, "a piece of tile " I64 " cut short", LL(t));
        rmc_status_t st = visit(s, f, h, pass);
        if (st != RMC_OK)
            return st;
        i += len;
    }
    return RMC_OK;
}

/* The passes over the pieces received: 0 counts each tile's nonzeros, 1 writes each piece's row
 * lengths into its tile's block (rowptr[row + 1 + i]), 2 copies its entries to their place. */
static rmc_status_t piece_visit(const struct rmc_spmatrix *s, fill_t *f, const uint64_t *h,
                                int pass)
{
    int64_t t = (int64_t)h[HDR_T], row = (int64_t)h[HDR_ROW], nr = (int64_t)h[HDR_NROWS];
    int64_t nnz = (int64_t)h[HDR_NNZ], rows, cols;
    int w64 = s->idx64;
    if (pass == 0) {
        f->nnz[t] += nnz;
        return RMC_OK;
    }
    if (!nnz) /* (never sent) */
        return RMC_OK;
    rmcc_sptile_shape(s, t, &rows, &cols);
    void *prp, *pci, *rp, *ci;
    double *pv, *v;
    rmcc_spblock_arrays((char *)(h + HDR_WORDS), nr, nnz, w64, &prp, &pci, &pv);
    rmcc_spblock_arrays(own_block(f->off[t]), rows, f->nnz[t], w64, &rp, &ci, &v);
    if (pass == 1) {
        for (int64_t i = 0; i < nr; i++)
            rmcc_idx_set(rp, row + 1 + i, rmcc_idx_get(prp, i + 1, w64) - rmcc_idx_get(prp, i, w64),
                         w64);
        return RMC_OK;
    }
    int64_t at = rmcc_idx_get(rp, row, w64);
    if (rmcc_idx_get(rp, row + nr, w64) - at != nnz) /* pieces overlapping: refused before */
        return rmcc_fail(RMC_ERR_STATE, "rmc_spmatrix_assemble", "pieces of tile " I64 " overlap",
                         LL(t));
    size_t w = idx_w(w64);
    memcpy(rmcc_idx_at(ci, at, w64), pci, (size_t)nnz * w);
    memcpy(v + at, pv, (size_t)nnz * sizeof(double));
    return RMC_OK;
}

/* The fill of every fill: each rank's part (rows [r0, r0 + nrows) of every column; valid, within
 * the matrix, not overlapping another's: checked and agreed by the caller) cut into its tiles'
 * pieces, sent to their owners (MPI_Alltoallv), built into new blocks there, and published
 * (renew_core) in place of every tile's block. All or nothing. */
static rmc_status_t fill_from_parts(struct rmc_spmatrix *s, const rmc_csr_t *part, int64_t r0,
                                    const char *fn)
{
    const struct rmc_dist *d = s->d;
    int nr = rmcc.nranks;
    int64_t nt = d->ntiles;
    int64_t *words = calloc((size_t)nr * 2 + (size_t)d->nt[1], sizeof(int64_t));
    int *ic = malloc((size_t)nr * 4 * sizeof(int));
    fill_t f = {calloc((size_t)nt, sizeof(uint64_t)), calloc((size_t)nt, sizeof(int64_t))};
    uint64_t *sbuf = NULL, *rbuf = NULL, *ch = NULL;
    rmc_status_t st = RMC_OK;
    if (!words || !ic || !f.off || !f.nnz)
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the tables of a fill (" I64 " tiles)", LL(nt));
    int64_t *cur = words ? words + nr : NULL, *cnt = words ? words + 2 * nr : NULL, stotal = 0;
    if (st == RMC_OK && part)
        split_part(s, part, r0, cnt, words, NULL, NULL);
    for (int r = 0; st == RMC_OK && r < nr; r++) {
        cur[r] = stotal;
        stotal += words[r];
    }
    if (st == RMC_OK && stotal > INT_MAX)
        st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                       "this rank's part makes " I64 " bytes of pieces (at most %d words of 8)",
                       LL(stotal * 8), INT_MAX);
    if (st == RMC_OK && !(sbuf = rmcc_malloc_n(stotal, sizeof(uint64_t))))
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the pieces of this rank's part (" I64 " bytes)",
                       LL(stotal * 8));
    if (st == RMC_OK && part)
        split_part(s, part, r0, cnt, NULL, sbuf, cur);
    int *scount = ic, *sdispl = ic ? ic + nr : NULL, *rcount = ic ? ic + 2 * nr : NULL,
        *rdispl = ic ? ic + 3 * nr : NULL;
    for (int r = 0; st == RMC_OK && r < nr; r++) {
        scount[r] = (int)words[r];
        sdispl[r] = (int)(cur[r] - words[r]);
    }
    MPI_Request rq;
    if ((st = agree_why(st, fn)) == RMC_OK) {
        if (MPI_Ialltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, rmcc.comm, &rq) != MPI_SUCCESS)
            st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Ialltoall (the pieces' sizes) failed");
        else
            st = rmc_wait_mpi(&rq);
    }
    int64_t rtotal = 0;
    for (int r = 0; st == RMC_OK && r < nr; r++) {
        rdispl[r] = (int)(rtotal < INT_MAX ? rtotal : INT_MAX);
        rtotal += rcount[r];
    }
    if (st == RMC_OK && rtotal > INT_MAX)
        st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                       "this rank's tiles receive " I64 " bytes of pieces (at most %d words of 8)",
                       LL(rtotal * 8), INT_MAX);
    if (st == RMC_OK && !(rbuf = rmcc_malloc_n(rtotal, sizeof(uint64_t))))
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the pieces of this rank's tiles (" I64 " bytes)",
                       LL(rtotal * 8));
    if ((st = agree_why(st, fn)) == RMC_OK) {
        if (MPI_Ialltoallv(sbuf, scount, sdispl, MPI_UINT64_T, rbuf, rcount, rdispl, MPI_UINT64_T,
                           rmcc.comm, &rq) != MPI_SUCCESS)
            st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Ialltoallv (the pieces) failed");
        else
            st = rmc_wait_mpi(&rq);
    }
    free(sbuf);
    sbuf = NULL;
    /* the new blocks: sized by the pieces, row lengths, row pointers, entries */
    if (st == RMC_OK)
        st = piece_walk(s, rbuf, rtotal, piece_visit, &f, 0, fn);
    int64_t nown = 0;
    for (int64_t t = 0; st == RMC_OK && t < nt; t++) {
        if (s->towner[t] != rmcc.rank)
            continue;
        nown++;
        if (!f.nnz[t])
            continue;
        if (!rmcc_fits(f.nnz[t], s->idx64)) {
            st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                           "tile " I64 ": " I64 " nonzeros do not fit the matrix's 32-bit indices",
                           LL(t), LL(f.nnz[t]));
            break;
        }
        int64_t rows, cols;
        rmcc_sptile_shape(s, t, &rows, &cols);
        size_t bytes = rmcc_spblock_bytes(rows, f.nnz[t], s->idx64);
        if ((st = rmcc_alloc_off(bytes, &f.off[t], fn)) != RMC_OK)
            break;
        memset(own_block(f.off[t]), 0, (size_t)(rows + 1) * idx_w(s->idx64));
    }
    if (st == RMC_OK)
        st = piece_walk(s, rbuf, rtotal, piece_visit, &f, 1, fn);
    for (int64_t t = 0; st == RMC_OK && t < nt; t++) {
        if (!f.off[t])
            continue;
        int64_t rows, cols;
        rmcc_sptile_shape(s, t, &rows, &cols);
        void *rp = own_block(f.off[t]);
        for (int64_t i = 0, sum = 0; i <= rows; i++) {
            sum += rmcc_idx_get(rp, i, s->idx64);
            rmcc_idx_set(rp, i, sum, s->idx64);
        }
        if (rmcc_idx_get(rp, rows, s->idx64) != f.nnz[t])
            st = rmcc_fail(RMC_ERR_STATE, fn, "pieces of tile " I64 " overlap", LL(t));
    }
    if (st == RMC_OK)
        st = piece_walk(s, rbuf, rtotal, piece_visit, &f, 2, fn);
    free(rbuf);
    if (st == RMC_OK && !(ch = rmcc_malloc_n(3 * nown, sizeof(uint64_t))))
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the directory's changes");
    int64_t k = 0;
    for (int64_t t = 0; st == RMC_OK && t < nt; t++) {
        if (s->towner[t] != rmcc.rank)
            continue;
        ch[k++] = (uint64_t)t;
        ch[k++] = f.off[t];
        ch[k++] = (uint64_t)f.nnz[t];
    }
    /* the padding of the new blocks, then the exchange (which agrees) */
    for (int64_t t = 0; st == RMC_OK && t < nt; t++) {
        if (!f.off[t])
            continue;
        int64_t rows, cols;
        rmcc_sptile_shape(s, t, &rows, &cols);
        size_t idx = (size_t)(rows + 1 + f.nnz[t]) * idx_w(s->idx64);
        size_t pad = ((idx + 7) & ~(size_t)7) - idx;
        memset(own_block(f.off[t]) + idx, 0, pad);
    }
    int applied = 0;
    st = renew_core(s, ch, (int)nown, st, &applied, fn);
    if (!applied)
        fill_drop(s, &f, fn);
    free(f.off);
    free(f.nnz);
    free(ch);
    free(words);
    free(ic);
    return st;
}

/* ---------------------------------------------------------------- collective fills --- */

/* part (NULL: no rows) as rows [r0, r0 + nrows) of s: valid, every column, within the matrix. */
static rmc_status_t part_check(const struct rmc_spmatrix *s, const rmc_csr_t *part, int64_t r0,
                               const char *name, const char *fn)
{
    if (!part || part->nrows == 0)
        return RMC_OK;
    rmc_status_t st = rmcc_csr_valid(part, fn, name);
    if (st != RMC_OK)
        return st;
    int64_t m = s->d->dims[0], n = s->d->dims[1];
    if (part->ncols != n)
        return rmcc_fail(RMC_ERR_ARG, fn, "%s has " I64 " columns, the matrix " I64, name,
                         LL(part->ncols), LL(n));
    if (r0 < 0 || r0 > m - part->nrows)
        return rmcc_fail(RMC_ERR_BOUNDS, fn,
                         "%s's rows [" I64 ", " I64 ") outside the matrix's [0, " I64 ")", name,
                         LL(r0), LL(r0 + part->nrows), LL(m));
    return RMC_OK;
}

rmc_status_t rmc_spmatrix_scatter(rmc_spmatrix_h s, int root, const rmc_csr_t *a)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    uint64_t args[2] = {0, (uint64_t)(int64_t)root};
    rmc_status_t st = RMC_OK;
    if (root < 0 || root >= rmcc.nranks)
        st = rmcc_fail(RMC_ERR_RANK, fn, "root %d (0 .. %d)", root, rmcc.nranks - 1);
    else if (rmcc.rank != root || rmcc_spmatrix_check(s, fn) != RMC_OK)
        ; /* (a bad handle: coll_start reports it) */
    else if (!a)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL matrix on the root");
    else if ((st = part_check(s, a, 0, "a", fn)) == RMC_OK &&
             (a->nrows != s->d->dims[0] || a->ncols != s->d->dims[1]))
        st = rmcc_fail(RMC_ERR_ARG, fn, "a is " I64 " x " I64 ", the matrix " I64 " x " I64,
                       LL(a->nrows), LL(a->ncols), LL(s->d->dims[0]), LL(s->d->dims[1]));
    if ((st = coll_start(s, args, 2, st, fn)) != RMC_OK)
        return st;
    return fill_from_parts(s, rmcc.rank == root ? a : NULL, 0, fn);
}

/* Every rank's rows [r0, r0 + nrows) (nrows 0: none) against the others': RMC_ERR_ARG naming two
 * that overlap (the same verdict on every rank). */
static rmc_status_t overlap_check(int64_t r0, int64_t nrows, const char *fn)
{
    int nr = rmcc.nranks;
    long long mine[2] = {r0, nrows};
    long long *all = malloc((size_t)nr * 2 * sizeof(long long));
    MPI_Request rq;
    rmc_status_t st = all ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "the parts' ranges");
    if ((st = agree_why(st, fn)) != RMC_OK) {
        free(all);
        return st;
    }
    if (MPI_Iallgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, rmcc.comm, &rq) !=
        MPI_SUCCESS)
        st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Iallgather (the parts' ranges) failed");
    else
        st = rmc_wait_mpi(&rq);
    if ((st = rmcc_agree(st)) != RMC_OK) {
        free(all);
        return st;
    }
    /* O(p^2) comparisons: p is the number of ranks */
    for (int a = 0; st == RMC_OK && a < nr; a++)
        for (int b = a + 1; st == RMC_OK && b < nr; b++) {
            long long a0 = all[2 * a], a1 = a0 + all[2 * a + 1];
            long long b0 = all[2 * b], b1 = b0 + all[2 * b + 1];
            if (a1 > a0 && b1 > b0 && a0 < b1 && b0 < a1)
                st = rmcc_fail(RMC_ERR_ARG, fn,
                               "rank %d's rows [%lld, %lld) and rank %d's rows [%lld, %lld) "
                               "overlap",
                               a, a0, a1, b, b0, b1);
        }
    free(all);
    return st;
}

rmc_status_t rmc_spmatrix_assemble(rmc_spmatrix_h s, int64_t r0, const rmc_csr_t *part)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    uint64_t args[1];
    rmc_status_t st =
        rmcc_spmatrix_check(s, fn) == RMC_OK ? part_check(s, part, r0, "part", fn) : RMC_OK;
    if ((st = coll_start(s, args, 1, st, fn)) != RMC_OK)
        return st;
    int64_t nrows = part ? part->nrows : 0;
    if ((st = overlap_check(nrows ? r0 : 0, nrows, fn)) != RMC_OK)
        return st;
    return fill_from_parts(s, part, r0, fn);
}

rmc_status_t rmc_spmatrix_gather(rmc_spmatrix_h s, int root, rmc_csr_t *out)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    uint64_t args[2] = {0, (uint64_t)(int64_t)root};
    rmc_status_t st = RMC_OK;
    if (root < 0 || root >= rmcc.nranks)
        st = rmcc_fail(RMC_ERR_RANK, fn, "root %d (0 .. %d)", root, rmcc.nranks - 1);
    else if (rmcc.rank == root && !out)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL result matrix on the root");
    if (rmcc.rank == root && out)
        rmc_csr_init(out, 0);
    if ((st = coll_start(s, args, 2, st, fn)) != RMC_OK)
        return st;
    const struct rmc_dist *d = s->d;
    int nr = rmcc.nranks, me = rmcc.rank, w64 = s->idx64;
    int64_t nt = d->ntiles, m = d->dims[0], n = d->dims[1];
    /* this rank's tiles with nonzeros, as pieces of all their rows */
    int64_t words = 0, nnz = 0;
    for (int64_t t = 0; t < nt; t++) {
        if (s->towner[t] != me || !s->dir[t].nnz)
            continue;
        int64_t rows, cols;
        rmcc_sptile_shape(s, t, &rows, &cols);
        words += HDR_WORDS + (int64_t)(rmcc_spblock_bytes(rows, s->dir[t].nnz, w64) / 8);
        nnz += s->dir[t].nnz;
    }
    uint64_t *sbuf = NULL, *rbuf = NULL;
    const uint64_t **at = NULL;
    long long mine[2] = {words, nnz}, *all = NULL;
    int *rc = NULL;
    if (words > INT_MAX)
        st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                       "this rank's tiles are " I64 " bytes (at most %d "
                       "words of 8)",
                       LL(words * 8), INT_MAX);
    else if (!(sbuf = rmcc_malloc_n(words, sizeof(uint64_t))))
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "this rank's tiles (" I64 " bytes)", LL(words * 8));
    if (me == root && st == RMC_OK &&
        (!(all = malloc((size_t)nr * 2 * sizeof(long long))) ||
         !(rc = malloc((size_t)nr * 2 * sizeof(int))) || !(at = calloc((size_t)nt, sizeof(*at)))))
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the root's tables");
    for (int64_t t = 0, k = 0; st == RMC_OK && t < nt; t++) {
        if (s->towner[t] != me || !s->dir[t].nnz)
            continue;
        int64_t rows, cols;
        rmcc_sptile_shape(s, t, &rows, &cols);
        size_t bytes = rmcc_spblock_bytes(rows, s->dir[t].nnz, w64);
        uint64_t *h = sbuf + k;
        h[HDR_T] = (uint64_t)t;
        h[HDR_ROW] = 0;
        h[HDR_NROWS] = (uint64_t)rows;
        h[HDR_NNZ] = (uint64_t)s->dir[t].nnz;
        memcpy(h + HDR_WORDS, own_block(s->dir[t].off), bytes);
        k += HDR_WORDS + (int64_t)(bytes / 8);
    }
    MPI_Request rq;
    if ((st = agree_why(st, fn)) == RMC_OK) {
        if (MPI_Igather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, root, rmcc.comm, &rq) !=
            MPI_SUCCESS)
            st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Igather (the tiles' sizes) failed");
        else
            st = rmc_wait_mpi(&rq);
    }
    int64_t rtotal = 0, total = 0;
    for (int r = 0; me == root && st == RMC_OK && r < nr; r++) {
        rc[r] = (int)all[2 * r];
        rc[nr + r] = (int)(rtotal < INT_MAX ? rtotal : INT_MAX);
        rtotal += all[2 * r];
        total += all[2 * r + 1];
    }
    if (me == root && st == RMC_OK) {
        if (rtotal > INT_MAX)
            st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                           "the matrix's tiles are " I64 " bytes (at most "
                           "%d words of 8)",
                           LL(rtotal * 8), INT_MAX);
        else if (!(rbuf = rmcc_malloc_n(rtotal, sizeof(uint64_t))))
            st = rmcc_fail(RMC_ERR_NOMEM, fn, "the matrix's tiles (" I64 " bytes)", LL(rtotal * 8));
        else
            st = rmcc_csr_alloc(out, m, n, total, w64, fn);
    }
    if ((st = agree_why(st, fn)) == RMC_OK) {
        if (MPI_Igatherv(sbuf, (int)words, MPI_UINT64_T, rbuf, rc, rc ? rc + nr : NULL,
                         MPI_UINT64_T, root, rmcc.comm, &rq) != MPI_SUCCESS)
            st = rmcc_fail(RMC_ERR_MPI, fn, "MPI_Igatherv (the tiles) failed");
        else
            st = rmc_wait_mpi(&rq);
        st = rmcc_agree(st);
    }
    free(sbuf);
    if (me == root && st == RMC_OK) { /* the root: each row, the tiles' pieces in column order */
        for (int64_t i = 0; i < rtotal;) {
            const uint64_t *h = rbuf + i;
            int64_t t = (int64_t)h[HDR_T], rows, cols;
            rmcc_sptile_shape(s, t, &rows, &cols);
            at[t] = h;
            i += HDR_WORDS + (int64_t)(rmcc_spblock_bytes(rows, (int64_t)h[HDR_NNZ], w64) / 8);
        }
        int64_t k = 0, nt1 = d->nt[1];
        for (int64_t ti = 0; ti < d->nt[0]; ti++) {
            int64_t tlo = rmcc_tile_lo(d, 0, ti), thi = rmcc_tile_hi(d, 0, ti);
            for (int64_t i = tlo; i < thi; i++) {
                for (int64_t tj = 0; tj < nt1; tj++) {
                    const uint64_t *h = at[ti * nt1 + tj];
                    if (!h)
                        continue;
                    void *rp, *ci;
                    double *v;
                    int64_t tn = (int64_t)h[HDR_NNZ], clo = rmcc_tile_lo(d, 1, tj);
                    rmcc_spblock_arrays((char *)(h + HDR_WORDS), thi - tlo, tn, w64, &rp, &ci, &v);
                    int64_t p = rmcc_idx_get(rp, i - tlo, w64),
                            q = rmcc_idx_get(rp, i - tlo + 1, w64);
                    for (int64_t e = p; e < q; e++, k++) {
                        rmcc_idx_set(out->colind, k, rmcc_idx_get(ci, e, w64) + clo, w64);
                        out->val[k] = v[e];
                    }
                }
                rmcc_idx_set(out->rowptr, i + 1, k, w64);
            }
        }
    } else if (me == root && out) {
        rmc_csr_free(out);
    }
    free(rbuf);
    free(all);
    free(rc);
    free(at);
    return st;
}

/* ----------------------------------------------------------------- Matrix Market --- */

rmc_status_t rmc_spmatrix_read_mm(const char *path, rmc_block_t kind, int idx64, rmc_spmatrix_h *sp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (sp)
        *sp = NULL;
    RMCC_CHECK_UP(fn);
    rmc_status_t st = RMC_OK;
    if (!sp || !path)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL %s", sp ? "path" : "handle pointer");
    else if (idx64 != 0 && idx64 != 1)
        st = rmcc_fail(RMC_ERR_ARG, fn, "idx64 is %d (0: 32-bit indices, 1: 64-bit)", idx64);
    uint64_t args[3] = {path ? rmcc_hash_bytes(path, strlen(path), 0) : 0, (uint64_t)kind,
                        (uint64_t)idx64};
    if ((st = rmcc_coll_begin(fn, args, 3, st)) != RMC_OK)
        return st;
    rmc_csr_t a;
    rmc_csr_init(&a, idx64);
    long long dims[2] = {0, 0};
    if (rmcc.rank == 0) {
        if ((st = rmc_csr_read_mm(&a, path, idx64)) != RMC_OK)
            rmc_error_in(st, fn);
        dims[0] = a.nrows;
        dims[1] = a.ncols;
    }
    if ((st = agree_why(st, fn)) == RMC_OK)
        st = rmcc_agree(rmcc_bcast(dims, sizeof(dims), 0, fn));
    rmc_dist_h d = NULL;
    if (st == RMC_OK && (dims[0] == 0 || dims[1] == 0)) /* the same on every rank */
        st = rmcc_fail(RMC_ERR_UNSUPPORTED, fn,
                       "%s: a %lld x %lld matrix: a distributed sparse matrix needs at least one "
                       "row and one column (rmc_csr_read_mm reads it on one rank)",
                       path, dims[0], dims[1]);
    if (st == RMC_OK)
        st = rmc_error_in(rmc_dist_2d(kind, dims[0], dims[1], 0, &d), fn);
    rmc_spmatrix_h s = NULL;
    if (st == RMC_OK)
        st = rmc_spmatrix_create(d, idx64, &s);
    rmc_dist_free(d);
    if (st == RMC_OK && (st = rmc_spmatrix_scatter(s, 0, &a)) != RMC_OK) {
        rmc_spmatrix_destroy(s);
        s = NULL;
    }
    rmc_csr_free(&a);
    *sp = s;
    return st;
}

rmc_status_t rmc_spmatrix_write_mm(rmc_spmatrix_h s, const char *path)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    uint64_t args[2] = {0, path ? rmcc_hash_bytes(path, strlen(path), 0) : 0};
    rmc_status_t st = path ? RMC_OK : rmcc_fail(RMC_ERR_ARG, fn, "NULL path");
    if ((st = coll_start(s, args, 2, st, fn)) != RMC_OK)
        return st;
    rmc_csr_t a;
    rmc_csr_init(&a, s->idx64);
    st = rmc_spmatrix_gather(s, 0, rmcc.rank == 0 ? &a : NULL);
    if (st != RMC_OK)
        return st;
    if (rmcc.rank == 0 && (st = rmc_csr_write_mm(&a, path)) != RMC_OK)
        rmc_error_in(st, fn);
    rmc_csr_free(&a);
    return agree_why(st, fn);
}

/* --------------------------------------------------------------------- generators --- */

/* This rank's rows [*r0, *r1) of an even partition of m rows. */
static void my_rows(int64_t m, int64_t *r0, int64_t *r1)
{
    int64_t p = rmcc.nranks, r = rmcc.rank, q = m / p, e = m % p;
    *r0 = q * r + (r < e ? r : e);
    *r1 = *r0 + q + (r < e);
}

/* A generator's end: the matrix on d (created here) from every rank's part, all or nothing. */
static rmc_status_t gen_finish(rmc_dist_h d, int idx64, int64_t r0, rmc_csr_t *part,
                               rmc_status_t st, rmc_spmatrix_h *sp, const char *fn)
{
    rmc_spmatrix_h s = NULL;
    if ((st = agree_why(st, fn)) == RMC_OK)
        st = rmc_spmatrix_create(d, idx64, &s);
    if (st == RMC_OK && (st = rmc_spmatrix_assemble(s, r0, part)) != RMC_OK) {
        rmc_spmatrix_destroy(s);
        s = NULL;
    }
    rmc_csr_free(part);
    *sp = s;
    return st;
}

/* A generator's argument checks: the handle pointer and a 2-D distribution (m x n). */
static rmc_status_t gen_check(rmc_dist_h d, rmc_spmatrix_h *sp, const char *fn)
{
    if (sp)
        *sp = NULL;
    RMCC_CHECK_UP(fn);
    if (!sp)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    rmc_status_t st = rmcc_dist_check(d, fn);
    if (st == RMC_OK && d->ndim != 2)
        st = rmcc_fail(RMC_ERR_ARG, fn, "a %d-D distribution (sparse matrices are 2-D)", d->ndim);
    return st;
}

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof(u));
    return u;
}

rmc_status_t rmc_spmatrix_rmat(rmc_dist_h d, int scale, int edge_factor, double a, double b,
                               double c, uint64_t seed, int idx64, rmc_spmatrix_h *sp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = gen_check(d, sp, fn);
    if (st == RMC_OK && (scale < 0 || scale > 62))
        st = rmcc_fail(RMC_ERR_ARG, fn, "scale %d (0 .. 62)", scale);
    else if (st == RMC_OK &&
             (d->dims[0] != (int64_t)1 << scale || d->dims[1] != (int64_t)1 << scale))
        st = rmcc_fail(RMC_ERR_ARG, fn,
                       "the distribution is " I64 " x " I64 ", R-MAT of scale %d is " I64 " square",
                       LL(d->dims[0]), LL(d->dims[1]), scale, LL((int64_t)1 << scale));
    uint64_t args[8] = {st == RMC_OK ? rmcc_dist_digest(d) : 0,
                        (uint64_t)scale,
                        (uint64_t)edge_factor,
                        dbits(a),
                        dbits(b),
                        dbits(c),
                        seed,
                        (uint64_t)idx64};
    if ((st = rmcc_coll_begin(fn, args, 8, st)) != RMC_OK)
        return st;
    int64_t r0, r1;
    my_rows(d->dims[0], &r0, &r1);
    rmc_csr_t part;
    rmc_csr_init(&part, idx64);
    st = rmc_csr_rmat(&part, scale, edge_factor, a, b, c, seed, r0, r1, idx64);
    if (st != RMC_OK)
        rmc_error_in(st, fn);
    return gen_finish(d, idx64, r0, &part, st, sp, fn);
}

rmc_status_t rmc_spmatrix_erdos_renyi(rmc_dist_h d, double p, uint64_t seed, int idx64,
                                      rmc_spmatrix_h *sp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = gen_check(d, sp, fn);
    uint64_t args[4] = {st == RMC_OK ? rmcc_dist_digest(d) : 0, dbits(p), seed, (uint64_t)idx64};
    if ((st = rmcc_coll_begin(fn, args, 4, st)) != RMC_OK)
        return st;
    int64_t r0, r1;
    my_rows(d->dims[0], &r0, &r1);
    rmc_csr_t part;
    rmc_csr_init(&part, idx64);
    st = rmc_csr_erdos_renyi(&part, d->dims[0], d->dims[1], p, seed, r0, r1, idx64);
    if (st != RMC_OK)
        rmc_error_in(st, fn);
    return gen_finish(d, idx64, r0, &part, st, sp, fn);
}
