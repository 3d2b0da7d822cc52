/* Local sparse kernels (include/rmc/csr.h): CSR x dense (SpMM), Gustavson CSR x CSR (SpGEMM) and
 * sums of CSR matrices. SpGEMM and sums are one row-wise engine: output row i is the sum of scaled
 * input rows (the rows of B picked by row i of A, scaled by its values; or row i of every summand),
 * built in two phases: a symbolic count of each row's distinct columns sizes the result exactly
 * (and finds a 32-bit overflow before anything is allocated for it), then each row is accumulated
 * by the chosen accumulator straight into its place. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "csr_impl.h"

#define I64   "%lld"
#define LL(x) ((long long)(x))

/* ------------------------------------------------------------------------ SpMM --- */

typedef double v4d_t __attribute__((vector_size(32)));

/* c[0..n) += s * b[0..n), four at a time (GCC/Clang vector extensions: SSE2 pairs, or AVX). */
static inline void axpy(int64_t n, double s, const double *restrict b, double *restrict c)
{
    int64_t j = 0;
    v4d_t sv = {s, s, s, s};
    for (; j + 4 <= n; j += 4) {
        v4d_t x, y;
        memcpy(&x, b + j, sizeof x);
        memcpy(&y, c + j, sizeof y);
        y += sv * x;
        memcpy(c + j, &y, sizeof y);
    }
    for (; j < n; j++)
        c[j] += s * b[j];
}

/* Does a rows x n dense matrix of leading dimension ld fit the address space? */
static int dense_fits(int64_t rows, int64_t n, int64_t ld)
{
    if (rows == 0 || n == 0)
        return 1;
    int64_t lim = PTRDIFF_MAX / (int64_t)sizeof(double);
    return (rows - 1) <= (lim - n) / ld;
}

rmc_status_t rmc_csr_spmm(double alpha, const rmc_csr_t *a, const double *b, int64_t ldb, int64_t n,
                          double *c, int64_t ldc)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_csr_valid(a, fn, "A");
    if (st)
        return st;
    if (n < 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "n = " I64 " < 0", LL(n));
    if (ldb < n || ldc < n)
        return rmc_error_set(RMC_ERR_ARG, fn, "%s = " I64 " < n = " I64, ldb < n ? "ldb" : "ldc",
                             LL(ldb < n ? ldb : ldc), LL(n));
    if (!b && alpha != 0.0 && a->ncols > 0 && n > 0) /* alpha 0: B is not read */
        return rmc_error_set(RMC_ERR_ARG, fn, "B is NULL (" I64 " x " I64 ")", LL(a->ncols), LL(n));
    if (!c && a->nrows > 0 && n > 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "C is NULL (" I64 " x " I64 ")", LL(a->nrows), LL(n));
    if (!dense_fits(a->ncols, n, ldb) || !dense_fits(a->nrows, n, ldc))
        return rmc_error_set(RMC_ERR_TOO_BIG, fn, "B or C overflows the address space");
    if (n == 0 || alpha == 0.0)
        return RMC_OK;
    /* The rows of B a sparse A picks are scattered over a B far larger than the caches: the row of
     * the nonzero PF_AHEAD ahead is prefetched (its first PF_LINES lines; the hardware streams the
     * rest), so that its misses overlap this one's axpy (2x at n = 128 on R-MAT tiles). */
    enum { PF_AHEAD = 4, PF_LINES = 16 };
    int64_t nnz = a->nnz, lines = (n * (int64_t)sizeof(double) + 63) / 64;
    if (lines > PF_LINES)
        lines = PF_LINES;
    for (int64_t i = 0; i < a->nrows; i++) {
        double *ci = c + i * ldc;
        int64_t q = rmc_csr_rowptr(a, i + 1);
        for (int64_t p = rmc_csr_rowptr(a, i); p < q; p++) {
            if (p + PF_AHEAD < nnz) {
                const char *next = (const char *)(b + rmc_csr_colind(a, p + PF_AHEAD) * ldb);
                for (int64_t l = 0; l < lines; l++)
                    __builtin_prefetch(next + 64 * l);
            }
            axpy(n, alpha * a->val[p], b + rmc_csr_colind(a, p) * ldb, ci);
        }
    }
    return RMC_OK;
}

/* --------------------------------------------------------------- the engine --- */

/* Where output rows come from: A * B (a set) or the sum of in[0..nin-1]. */
typedef struct {
    const rmc_csr_t *a, *b;
    const rmc_csr_t *const *in;
    int nin;
} terms_t;

/* One term of an output row: scale * (a sorted sparse row). */
typedef struct {
    const void *cols;
    const double *vals;
    int64_t n;
    double scale;
    int idx64;
} term_t;

static inline int64_t row_len(const rmc_csr_t *m, int64_t i)
{
    return rmc_csr_rowptr(m, i + 1) - rmc_csr_rowptr(m, i);
}

static inline int64_t nterms(const terms_t *t, int64_t i)
{
    return t->a ? row_len(t->a, i) : t->nin;
}

static inline void term_of(const rmc_csr_t *m, int64_t r, double scale, term_t *x)
{
    int64_t p = rmc_csr_rowptr(m, r);
    x->n = rmc_csr_rowptr(m, r + 1) - p;
    x->cols = x->n ? rmcc_idx_at(m->colind, p, m->idx64) : NULL;
    x->vals = x->n ? m->val + p : NULL;
    x->scale = scale;
    x->idx64 = m->idx64;
}

/* Term j of output row i. */
static inline void get_term(const terms_t *t, int64_t i, int64_t j, term_t *x)
{
    if (t->a) {
        int64_t p = rmc_csr_rowptr(t->a, i) + j;
        term_of(t->b, rmc_csr_colind(t->a, p), t->a->val[p], x);
    } else {
        term_of(t->in[j], i, 1.0, x);
    }
}

/* The symbolic phase's set of columns: stamps over all columns when that is cheap, else a hash
 * set with a list of its used slots. */
typedef struct {
    int64_t ncols;
    uint32_t *stamp, gen;
    int64_t *hkey, hcap, *used;
} symset_t;

#define SYM_STAMP_COLS ((int64_t)1 << 24)

static int sym_init(symset_t *s, int64_t ncols, int64_t total)
{
    memset(s, 0, sizeof(*s));
    s->ncols = ncols;
    if (ncols <= SYM_STAMP_COLS && ncols / 16 <= total + 4096) {
        if (!(s->stamp = calloc((size_t)ncols + 1, sizeof(uint32_t))))
            return -1;
    }
    return 0;
}

static void sym_free(symset_t *s)
{
    free(s->stamp);
    free(s->hkey);
    free(s->used);
}

/* Stamps the columns of term x with g; returns how many were not stamped with g before. The loop
 * once per index width, branch-free (the count adds a comparison). */
static inline int64_t stamp(uint32_t *st, uint32_t g, const term_t *x)
{
    int64_t c = 0;
    if (x->idx64) {
        const int64_t *cs = x->cols;
        for (int64_t e = 0; e < x->n; e++) {
            c += st[cs[e]] != g;
            st[cs[e]] = g;
        }
    } else {
        const int32_t *cs = x->cols;
        for (int64_t e = 0; e < x->n; e++) {
            c += st[cs[e]] != g;
            st[cs[e]] = g;
        }
    }
    return c;
}

/* The number of distinct columns of output row i (bound: its contributions). */
static int sym_count(symset_t *s, const terms_t *t, int64_t i, int64_t bound, int64_t *cnt)
{
    int64_t k = nterms(t, i), c = 0;
    term_t x;
    if (k == 1) {
        get_term(t, i, 0, &x);
        *cnt = x.n;
        return 0;
    }
    if (k == 0 || bound == 0) {
        *cnt = 0;
        return 0;
    }
    if (s->stamp) {
        if (++s->gen == 0) { /* wrapped: forget every stamp */
            memset(s->stamp, 0, (size_t)s->ncols * sizeof(uint32_t));
            s->gen = 1;
        }
        for (int64_t j = 0; j < k; j++) {
            get_term(t, i, j, &x);
            c += stamp(s->stamp, s->gen, &x);
        }
        *cnt = c;
        return 0;
    }
    int64_t m = bound < s->ncols ? bound : s->ncols;
    int lg = 3;
    while (lg < 62 && ((int64_t)1 << lg) < 2 * m)
        lg++;
    int64_t cap = (int64_t)1 << lg, mask = cap - 1;
    if (cap > s->hcap) {
        int64_t *hk = rmcc_malloc_n(cap, sizeof(int64_t)), *u = rmcc_malloc_n(cap, sizeof(int64_t));
        if (!hk || !u) {
            free(hk);
            free(u);
            return -1;
        }
        memset(hk, 0xff, (size_t)cap * sizeof(int64_t));
        free(s->hkey);
        free(s->used);
        s->hkey = hk;
        s->used = u;
        s->hcap = cap;
    }
    int64_t *hk = s->hkey;
    for (int64_t j = 0; j < k; j++) {
        get_term(t, i, j, &x);
        for (int64_t e = 0; e < x.n; e++) {
            int64_t col = rmcc_idx_get(x.cols, e, x.idx64);
            int64_t h = (int64_t)(((uint64_t)col * 0x9e3779b97f4a7c15ull) >> (64 - lg));
            while (hk[h] != col && hk[h] != -1)
                h = (h + 1) & mask;
            if (hk[h] == -1) {
                hk[h] = col;
                s->used[c++] = h;
            }
        }
    }
    for (int64_t u = 0; u < c; u++)
        hk[s->used[u]] = -1;
    *cnt = c;
    return 0;
}

/* *out (m x ncols, index width idx64) row by row from the terms, with accumulator `kind`. *fl
 * gets the contributions (multiply-adds) in all. */
static rmc_status_t rowwise(rmc_csr_t *out, const terms_t *t, int64_t m, int64_t ncols, int idx64,
                            rmc_spa_kind_t kind, double *fl, const char *fn)
{
    if (!rmcc_fits(m, idx64) || !rmcc_fits(ncols, idx64))
        return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                             "the " I64 " x " I64 " result does not fit 32-bit indices", LL(m),
                             LL(ncols));
    rmc_status_t st = RMC_OK;
    rmc_spa_h spa = NULL;
    symset_t sym;
    int64_t *rp = m < INT64_MAX ? rmcc_malloc_n(m + 1, sizeof(int64_t)) : NULL;
    memset(&sym, 0, sizeof sym);
    if (!rp)
        goto nomem;
    /* bounds: each row's contributions */
    int64_t total = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t k = nterms(t, i), t0 = total;
        term_t x;
        for (int64_t j = 0; j < k; j++) {
            get_term(t, i, j, &x);
            if (x.n > INT64_MAX - total) {
                st = rmc_error_set(RMC_ERR_TOO_BIG, fn, "the flop count overflows 64 bits");
                goto out;
            }
            total += x.n;
        }
        rp[i] = total - t0;
    }
    /* symbolic: exact row counts, then the row pointers */
    if (sym_init(&sym, ncols, total))
        goto nomem;
    int64_t nnz = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t cnt;
        if (sym_count(&sym, t, i, rp[i], &cnt))
            goto nomem;
        rp[i] = nnz;
        nnz += cnt;
    }
    rp[m] = nnz;
    if (!rmcc_fits(nnz, idx64)) {
        st = rmc_error_set(RMC_ERR_TOO_BIG, fn,
                           "the result has " I64 " nonzeros: more than 32-bit indices hold (%d)",
                           LL(nnz), INT32_MAX);
        goto out;
    }
    sym_free(&sym);
    memset(&sym, 0, sizeof sym);
    if ((st = rmcc_csr_alloc(out, m, ncols, nnz, idx64, fn)))
        goto out;
    /* numeric: each row straight into its place */
    for (int64_t i = 0; i < m; i++) {
        rmcc_idx_set(out->rowptr, i, rp[i], idx64);
        int64_t k = nterms(t, i), want = rp[i + 1] - rp[i], got = 0, bi = 0;
        void *oc = rmcc_idx_at(out->colind, rp[i], idx64);
        double *ov = out->val + rp[i];
        term_t x;
        if (k == 1) { /* one term: its row, scaled */
            get_term(t, i, 0, &x);
            for (int64_t e = 0; e < x.n; e++) {
                rmcc_idx_set(oc, e, rmcc_idx_get(x.cols, e, x.idx64), idx64);
                ov[e] = x.scale * x.vals[e];
            }
            got = x.n;
            *fl += (double)x.n;
        } else if (k > 1) {
            for (int64_t j = 0; j < k; j++) {
                get_term(t, i, j, &x);
                bi += x.n;
            }
            /* the accumulator when a row first needs one (DENSE allocates ncols values at once) */
            if ((!spa && (st = rmc_spa_create(kind, ncols, &spa))) ||
                (st = rmcc_spa_begin(spa, bi)))
                goto fail; /* (out is freed: on error it is left empty) */
            for (int64_t j = 0; j < k; j++) {
                get_term(t, i, j, &x);
                if ((st = rmcc_spa_add(spa, x.scale, x.cols, x.vals, x.n, x.idx64)))
                    goto fail;
            }
            if ((st = rmcc_spa_end(spa, oc, ov, &got, idx64)))
                goto fail;
            *fl += (double)bi;
        }
        if (got != want) {
            st = rmc_error_set(RMC_ERR_INTERNAL, fn,
                               "row " I64 ": " I64 " nonzeros accumulated, " I64 " counted", LL(i),
                               LL(got), LL(want));
            goto fail;
        }
    }
    rmcc_idx_set(out->rowptr, m, nnz, idx64);
    goto out;
fail:
    st = rmc_error_in(st, fn);
    rmc_csr_free(out);
    goto out;
nomem:
    st = rmc_error_set(RMC_ERR_NOMEM, fn, "no memory for the work arrays of " I64 " rows", LL(m));
out:
    rmc_spa_destroy(spa);
    sym_free(&sym);
    free(rp);
    return st;
}

static rmc_status_t check_kind(rmc_spa_kind_t kind, const char *fn)
{
    if ((unsigned)kind > RMC_SPA_AUTO)
        return rmc_error_set(RMC_ERR_ARG, fn, "kind %d is not an accumulator kind (0 to %d)",
                             (int)kind, (int)RMC_SPA_AUTO);
    return RMC_OK;
}

rmc_status_t rmc_csr_spgemm(rmc_csr_t *out, const rmc_csr_t *a, const rmc_csr_t *b,
                            rmc_spa_kind_t kind, double *flops)
{
    const char *fn = __func__;
    if (!out)
        return rmc_error_set(RMC_ERR_ARG, fn, "out is NULL");
    if (out == a || out == b)
        return rmc_error_set(RMC_ERR_ARG, fn, "out is also an input (%s)", out == a ? "A" : "B");
    rmc_csr_init(out, a && a->idx64 == 1);
    rmc_status_t st = check_kind(kind, fn);
    if (!st)
        st = rmcc_csr_valid(a, fn, "A");
    if (!st)
        st = rmcc_csr_valid(b, fn, "B");
    if (st)
        return st;
    if (a->ncols != b->nrows)
        return rmc_error_set(RMC_ERR_ARG, fn,
                             "A is " I64 " x " I64 " but B is " I64 " x " I64
                             ": inner dimensions differ",
                             LL(a->nrows), LL(a->ncols), LL(b->nrows), LL(b->ncols));
    terms_t t = {a, b, NULL, 0};
    double fl = 0;
    if ((st = rowwise(out, &t, a->nrows, b->ncols, a->idx64, kind, &fl, fn)))
        return st;
    if (flops)
        *flops += 2 * fl;
    return RMC_OK;
}

rmc_status_t rmc_csr_sum(rmc_csr_t *out, const rmc_csr_t *const *in, int n, rmc_spa_kind_t kind)
{
    const char *fn = __func__;
    if (!out)
        return rmc_error_set(RMC_ERR_ARG, fn, "out is NULL");
    if (!in || n < 1)
        return rmc_error_set(RMC_ERR_ARG, fn, "no summands (in %s, n = %d)", in ? "given" : "NULL",
                             n);
    for (int j = 0; j < n; j++)
        if (in[j] == out)
            return rmc_error_set(RMC_ERR_ARG, fn, "out is also summand %d", j);
    rmc_csr_init(out, in[0] && in[0]->idx64 == 1);
    rmc_status_t st = check_kind(kind, fn);
    for (int j = 0; j < n && !st; j++) {
        char name[32];
        snprintf(name, sizeof name, "in[%d]", j);
        if (!(st = rmcc_csr_valid(in[j], fn, name)) &&
            (in[j]->nrows != in[0]->nrows || in[j]->ncols != in[0]->ncols))
            st = rmc_error_set(
                RMC_ERR_ARG, fn, "in[%d] is " I64 " x " I64 " but in[0] is " I64 " x " I64, j,
                LL(in[j]->nrows), LL(in[j]->ncols), LL(in[0]->nrows), LL(in[0]->ncols));
    }
    if (st)
        return st;
    terms_t t = {NULL, NULL, in, n};
    double fl = 0;
    return rowwise(out, &t, in[0]->nrows, in[0]->ncols, in[0]->idx64, kind, &fl, fn);
}
