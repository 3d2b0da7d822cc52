/* Sparse multiplication (include/rmc/sparse.h): SpMM (sparse x dense) and SpGEMM (sparse x
 * sparse), the entry points of the multiplication engine of gemm.c, whose algorithms (stationary C,
 * A, B, work stealing, SUMMA) serve dense and sparse operands alike: a sparse block is a whole tile
 * (the grids line up), read in place when its owner is on this node and fetched whole otherwise;
 * its local products are rmc_csr_spmm / rmc_csr_spgemm. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "gemm_impl.h"

/* Dimension k1 of d1 and k2 of d2 are cut into the same tiles. */
static int same_split(const struct rmc_dist *d1, int k1, const struct rmc_dist *d2, int k2)
{
    if (d1->dims[k1] != d2->dims[k2] || d1->nt[k1] != d2->nt[k2])
        return 0;
    for (int64_t t = 0; t < d1->nt[k1]; t++)
        if (rmcc_tile_hi(d1, k1, t) != rmcc_tile_hi(d2, k2, t))
            return 0;
    return 1;
}

/* The three grids line up (A's columns as B's rows, A's rows as C's, B's columns as C's), or
 * RMC_ERR_ARG saying which do not. SUMMA cuts its panels at A's columns and B's rows: those two
 * need not line up there. */
static rmc_status_t grids(const struct rmc_dist *a, const struct rmc_dist *b,
                          const struct rmc_dist *c, rmc_gemm_algo_t algo, const char *fn)
{
    if (a->ndim != 2 || b->ndim != 2 || c->ndim != 2)
        return rmcc_fail(RMC_ERR_ARG, fn, "A, B and C must have 2 dimensions");
    if (a->dims[0] != c->dims[0] || a->dims[1] != b->dims[0] || b->dims[1] != c->dims[1])
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "dimensions: A is %lld x %lld, B %lld x %lld, C %lld x %lld",
                         (long long)a->dims[0], (long long)a->dims[1], (long long)b->dims[0],
                         (long long)b->dims[1], (long long)c->dims[0], (long long)c->dims[1]);
    if (algo != RMC_GEMM_SUMMA && !same_split(a, 1, b, 0))
        return rmcc_fail(RMC_ERR_ARG, fn, "A's column tiles are not B's row tiles");
    if (!same_split(a, 0, c, 0))
        return rmcc_fail(RMC_ERR_ARG, fn, "A's row tiles are not C's row tiles");
    if (!same_split(b, 1, c, 1))
        return rmcc_fail(RMC_ERR_ARG, fn, "B's column tiles are not C's column tiles");
    return RMC_OK;
}

/* The operand of a sparse matrix (whole, not transposed). */
static void sp_operand(operand_t *o, struct rmc_spmatrix *s)
{
    memset(o, 0, sizeof(*o));
    o->s = s;
    o->d = s->d;
    o->towner = s->towner;
}
static void dense_operand(operand_t *o, struct rmc_matrix *m)
{
    memset(o, 0, sizeof(*o));
    o->m = m;
    o->d = m->d;
    o->towner = m->towner;
}

/* Bytes of a sparse matrix's tiles as of its directory (the volume model's size of it). */
static double sp_bytes(const struct rmc_spmatrix *s)
{
    double b = 0;
    for (int64_t t = 0; t < s->d->ntiles; t++) {
        int64_t rows, cols;
        rmcc_sptile_shape(s, t, &rows, &cols);
        b += (double)rmcc_spblock_bytes(rows, s->dir[t].nnz, s->idx64);
    }
    return b;
}

/* The common end of both entry points: the shapes from the operands set (when st is RMC_OK), the
 * agreed start (the three matrices' ids, the algorithm and two more arguments every rank must
 * pass alike), then the engine. */
static rmc_status_t run(gemm_t *g, rmc_gemm_algo_t algo, rmc_status_t st, const uint64_t ids[3],
                        uint64_t x0, uint64_t x1, double bytes_c, rmc_gemm_stats_t *stats)
{
    double t0 = rmcc_now();
    uint64_t args[6] = {st == RMC_OK ? ids[0] : ~0ull,
                        st == RMC_OK ? ids[1] : 0,
                        st == RMC_OK ? ids[2] : 0,
                        (uint64_t)algo,
                        x0,
                        x1};
    if ((st = rmcc_coll_begin(g->fn, args, 6, st)) != RMC_OK)
        return st;
    g->st.imbalance += rmcc_now() - t0; /* (collective: waiting for the others) */
    g->m = g->co.d->dims[0];
    g->n = g->co.d->dims[1];
    g->k = g->a.d->dims[1];
    if (algo == RMC_GEMM_AUTO) {
        double ba = g->a.s ? sp_bytes(g->a.s) : (double)g->m * (double)g->k * 8;
        double bb = g->b.s ? sp_bytes(g->b.s) : (double)g->k * (double)g->n * 8;
        double bc = bytes_c >= 0 ? bytes_c : (double)g->m * (double)g->n * 8;
        algo = rmcc_gemm_choose(ba, bb, g->cs ? ba + bb : bc);
    }
    st = rmcc_gemm_run(g, algo);
    g->st.total = rmcc_now() - t0;
    if (stats)
        *stats = g->st;
    return st;
}

static void setup(gemm_t *g, const double *alpha, const double *beta, const char *fn)
{
    memset(g, 0, sizeof(*g));
    g->fn = fn;
    g->e = RMC_ELEM_F64;
    g->es = 8;
    g->alpha = alpha;
    g->beta = beta;
    double one = 1;
    memcpy(g->one, &one, 8);
}

rmc_status_t rmc_spmatrix_spmm(double alpha, rmc_spmatrix_h a, rmc_matrix_h b, double beta,
                               rmc_matrix_h c, rmc_gemm_algo_t algo, rmc_gemm_stats_t *stats)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    RMCC_CHECK_UP(fn);
    gemm_t g;
    setup(&g, &alpha, &beta, fn);
    rmc_status_t st;
    if ((st = rmcc_spmatrix_check_arg(a, "A", fn)) != RMC_OK ||
        (st = rmcc_matrix_check_arg(b, "B", fn)) != RMC_OK ||
        (st = rmcc_matrix_check_arg(c, "C", fn)) != RMC_OK)
        ;
    else if (b->elem != RMC_ELEM_F64 || c->elem != RMC_ELEM_F64)
        st = rmcc_fail(RMC_ERR_TYPE, fn, "B and C must be double matrices (RMC_ELEM_F64)");
    else if (b->comm != MPI_COMM_NULL || c->comm != MPI_COMM_NULL)
        st = rmcc_fail(RMC_ERR_UNSUPPORTED, fn,
                       "B or C was created on a subset of the ranks (rmc_matrix_create_comm)");
    else if (b == c || rmcc_matrix_shares_memory(b, c))
        st = rmcc_fail(RMC_ERR_ARG, fn, "C %s B (it would change while it is read)",
                       b == c ? "is also" : "shares this rank's memory with (an overlay)");
    else if ((unsigned)algo > RMC_GEMM_SUMMA)
        st = rmcc_fail(RMC_ERR_ARG, fn, "algorithm %d", (int)algo);
    else
        st = grids(a->d, b->d, c->d, algo, fn);
    if (st == RMC_OK) {
        sp_operand(&g.a, a);
        dense_operand(&g.b, b);
        dense_operand(&g.co, c);
        g.c = c;
    }
    uint64_t ids[3] = {st == RMC_OK ? a->id : 0, st == RMC_OK ? b->id : 0,
                       st == RMC_OK ? c->id : 0},
             ab[2];
    memcpy(&ab[0], &alpha, 8);
    memcpy(&ab[1], &beta, 8);
    return run(&g, algo, st, ids, ab[0], ab[1], -1, stats);
}

rmc_status_t rmc_spmatrix_spgemm(rmc_spmatrix_h a, rmc_spmatrix_h b, rmc_spmatrix_h c,
                                 rmc_gemm_algo_t algo, rmc_spa_kind_t spa, rmc_gemm_stats_t *stats)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    RMCC_CHECK_UP(fn);
    static const double one = 1, zero = 0;
    gemm_t g;
    setup(&g, &one, &zero, fn);
    rmc_status_t st;
    if ((st = rmcc_spmatrix_check_arg(a, "A", fn)) != RMC_OK ||
        (st = rmcc_spmatrix_check_arg(b, "B", fn)) != RMC_OK ||
        (st = rmcc_spmatrix_check_arg(c, "C", fn)) != RMC_OK)
        ;
    else if (a->idx64 != c->idx64 || b->idx64 != c->idx64)
        st = rmcc_fail(RMC_ERR_ARG, fn, "A, B and C of different index widths (%d, %d, %d bits)",
                       a->idx64 ? 64 : 32, b->idx64 ? 64 : 32, c->idx64 ? 64 : 32);
    else if (c == a || c == b)
        st = rmcc_fail(RMC_ERR_ARG, fn, "C is also %s (it would change while it is read)",
                       c == a ? "A" : "B");
    else if ((unsigned)algo > RMC_GEMM_SUMMA)
        st = rmcc_fail(RMC_ERR_ARG, fn, "algorithm %d", (int)algo);
    else if ((unsigned)spa > RMC_SPA_AUTO)
        st = rmcc_fail(RMC_ERR_ARG, fn, "accumulator %d", (int)spa);
    else
        st = grids(a->d, b->d, c->d, algo, fn);
    if (st == RMC_OK) {
        sp_operand(&g.a, a);
        sp_operand(&g.b, b);
        sp_operand(&g.co, c);
        g.cs = c;
        g.spa = spa;
    }
    uint64_t ids[3] = {st == RMC_OK ? a->id : 0, st == RMC_OK ? b->id : 0,
                       st == RMC_OK ? c->id : 0};
    return run(&g, algo, st, ids, (uint64_t)spa, 1, -1, stats);
}

/* ------------------------------------------------------------------- fused SpGEMM --- */

/* Grows the output arrays (capacity *cap entries) to hold `need` entries. */
static rmc_status_t grow(void **cols, double **vals, int64_t *cap, int64_t need, size_t w,
                         const char *fn)
{
    if (need <= *cap)
        return RMC_OK;
    int64_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *nc = realloc(*cols, (size_t)c * w);
    if (nc)
        *cols = nc;
    double *nv = nc ? realloc(*vals, (size_t)c * 8) : NULL;
    if (nv)
        *vals = nv;
    if (!nc || !nv)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "%lld nonzeros of a C tile", (long long)c);
    *cap = c;
    return RMC_OK;
}

rmc_status_t rmcc_spgemm_fused(const rmc_csr_t *const *a, const rmc_csr_t *const *b, int n,
                               double alpha, rmc_spa_kind_t kind, int idx64, int64_t rows,
                               int64_t cols, rmc_csr_t *out, double *flops, const char *fn)
{
    size_t w = idx64 ? 8 : 4;
    rmc_spa_h spa = NULL;
    rmc_status_t st = rmc_spa_create(kind, cols, &spa);
    void *ci = NULL, *rp = calloc((size_t)rows + 1, w);
    double *cv = NULL;
    int64_t cap = 0, used = 0;
    if (st == RMC_OK && !rp)
        st = rmcc_fail(RMC_ERR_NOMEM, fn, "the row pointers of a C tile");
    for (int64_t r = 0; st == RMC_OK && r < rows; r++) {
        int64_t bound = 0;
        for (int q = 0; q < n; q++) /* the row's flop bound: every B row its A row meets */
            for (int64_t e = rmc_csr_rowptr(a[q], r); e < rmc_csr_rowptr(a[q], r + 1); e++) {
                int64_t c = rmc_csr_colind(a[q], e);
                bound += rmc_csr_rowptr(b[q], c + 1) - rmc_csr_rowptr(b[q], c);
            }
        if ((st = rmc_spa_begin(spa, bound)) != RMC_OK)
            break;
        for (int q = 0; st == RMC_OK && q < n; q++)
            for (int64_t e = rmc_csr_rowptr(a[q], r);
                 st == RMC_OK && e < rmc_csr_rowptr(a[q], r + 1); e++) {
                int64_t c = rmc_csr_colind(a[q], e), b0 = rmc_csr_rowptr(b[q], c);
                int64_t len = rmc_csr_rowptr(b[q], c + 1) - b0;
                if (len)
                    st = rmc_spa_add_row(spa, alpha * a[q]->val[e],
                                         (const char *)b[q]->colind + (size_t)b0 * w,
                                         b[q]->val + b0, len, b[q]->idx64);
            }
        *flops += 2.0 * (double)bound;
        int64_t got = 0;
        if (st == RMC_OK)
            st = grow(&ci, &cv, &cap, used + bound, w, fn);
        if (st == RMC_OK)
            st = rmc_spa_end(spa, (char *)ci + (size_t)used * w, cv + used, &got, idx64);
        used += got;
        if (idx64)
            ((int64_t *)rp)[r + 1] = used;
        else
            ((int32_t *)rp)[r + 1] = (int32_t)used;
        if (st == RMC_OK && !idx64 && used > INT32_MAX)
            st = rmcc_fail(RMC_ERR_TOO_BIG, fn,
                           "a C tile of more than 2^31 nonzeros with 32-bit "
                           "indices");
    }
    rmc_spa_destroy(spa);
    if (st == RMC_OK) /* into a matrix of RMC's own, of the exact size */
        st = rmc_csr_alloc(out, rows, cols, used, idx64);
    if (st == RMC_OK) {
        memcpy(out->rowptr, rp, ((size_t)rows + 1) * w);
        memcpy(out->colind, ci, (size_t)used * w);
        memcpy(out->val, cv, (size_t)used * 8);
    }
    free(rp);
    free(ci);
    free(cv);
    return rmc_error_in(st, fn);
}
