/* Local CSR matrices (include/rmc/csr.h): creation, the structure checks every function runs on
 * its inputs, building from triplets, copies, dense conversion and slicing. Purely local. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "csr_impl.h"

#define I64   "%lld"
#define LL(x) ((long long)(x))

/* ------------------------------------------------------------------------- helpers --- */

void *rmcc_malloc_n(int64_t n, size_t size)
{
    if (n < 0 || (size && (uint64_t)n > (uint64_t)(PTRDIFF_MAX / size)))
        return NULL;
    return malloc(n ? (size_t)n * size : 1);
}

static void *calloc_n(int64_t n, size_t size)
{
    if (n < 0 || (size && (uint64_t)n > (uint64_t)(PTRDIFF_MAX / size)))
        return NULL;
    return calloc(n ? (size_t)n : 1, size);
}

rmc_status_t rmcc_check_idx64(int idx64, const char *fn, const char *what)
{
    if (idx64 != 0 && idx64 != 1)
        return rmc_error_set(RMC_ERR_ARG, fn, "%s is %d: 0 (32-bit indices) or 1 (64-bit)", what,
                             idx64);
    return RMC_OK;
}

rmc_status_t rmcc_out_begin(rmc_csr_t *out, int idx64, const char *fn)
{
    if (!out)
        return rmc_error_set(RMC_ERR_ARG, fn, "out is NULL");
    rmc_csr_init(out, idx64 == 1);
    return rmcc_check_idx64(idx64, fn, "idx64");
}

/* Insertion sort below this many keys, LSD radix sort (11-bit digits) above. */
#define SORT_SMALL 32

void rmcc_sort_i64(int64_t *a, int64_t n, int64_t *tmp)
{
    if (n <= SORT_SMALL) {
        for (int64_t i = 1; i < n; i++) {
            int64_t x = a[i], j = i;
            for (; j > 0 && a[j - 1] > x; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
        return;
    }
    int64_t mx = 0;
    for (int64_t i = 0; i < n; i++)
        mx |= a[i];
    int64_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 63 && (mx >> shift); shift += 11) {
        int64_t cnt[2048 + 1];
        memset(cnt, 0, sizeof cnt);
        for (int64_t i = 0; i < n; i++)
            cnt[((src[i] >> shift) & 2047) + 1]++;
        for (int d = 0; d < 2048; d++)
            cnt[d + 1] += cnt[d];
        for (int64_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 2047]++] = src[i];
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, (size_t)n * sizeof(*a));
}

/* ---------------------------------------------------------------- create and free --- */

void rmc_csr_init(rmc_csr_t *a, int idx64)
{
    if (!a)
        return;
    memset(a, 0, sizeof(*a));
    a->idx64 = idx64 ? 1 : 0;
}

void rmc_csr_free(rmc_csr_t *a)
{
    if (!a)
        return;
    if (a->own) {
        free(a->rowptr);
        free(a->colind);
        free(a->val);
    }
    rmc_csr_init(a, a->idx64);
}

/* "32-bit indices hold at most ..." for a size that does not fit. */
static rmc_status_t too_big(const char *fn, const char *what, int64_t v)
{
    return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                         "%s = " I64 " does not fit 32-bit indices (at most %d): use idx64 = 1",
                         what, LL(v), INT32_MAX);
}

rmc_status_t rmcc_csr_alloc(rmc_csr_t *a, int64_t nrows, int64_t ncols, int64_t nnz, int idx64,
                            const char *fn)
{
    if (!a)
        return rmc_error_set(RMC_ERR_ARG, fn, "the matrix is NULL");
    rmc_csr_init(a, idx64 == 1);
    rmc_status_t st = rmcc_check_idx64(idx64, fn, "idx64");
    if (st)
        return st;
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return rmc_error_set(RMC_ERR_ARG, fn,
                             "negative size: nrows " I64 ", ncols " I64 ", nnz " I64, LL(nrows),
                             LL(ncols), LL(nnz));
    if (!rmcc_fits(nrows, idx64))
        return too_big(fn, "nrows", nrows);
    if (!rmcc_fits(ncols, idx64))
        return too_big(fn, "ncols", ncols);
    if (!rmcc_fits(nnz, idx64))
        return too_big(fn, "nnz", nnz);
    size_t w = idx64 ? sizeof(int64_t) : sizeof(int32_t);
    void *rp = nrows < INT64_MAX ? calloc_n(nrows + 1, w) : NULL;
    void *ci = rmcc_malloc_n(nnz, w);
    double *v = rmcc_malloc_n(nnz, sizeof(double));
    if (!rp || !ci || !v) {
        free(rp);
        free(ci);
        free(v);
        return rmc_error_set(RMC_ERR_NOMEM, fn,
                             "no memory for a " I64 " x " I64 " matrix of " I64 " nonzeros",
                             LL(nrows), LL(ncols), LL(nnz));
    }
    a->nrows = nrows;
    a->ncols = ncols;
    a->nnz = nnz;
    a->rowptr = rp;
    a->colind = ci;
    a->val = v;
    a->own = 1;
    return RMC_OK;
}

rmc_status_t rmc_csr_alloc(rmc_csr_t *a, int64_t nrows, int64_t ncols, int64_t nnz, int idx64)
{
    return rmcc_csr_alloc(a, nrows, ncols, nnz, idx64, __func__);
}

/* -------------------------------------------------------------------------- checks --- */

rmc_status_t rmcc_csr_shape(const rmc_csr_t *a, const char *fn, const char *name)
{
    if (!a)
        return rmc_error_set(RMC_ERR_ARG, fn, "%s is NULL", name);
    if (a->idx64 != 0 && a->idx64 != 1)
        return rmc_error_set(RMC_ERR_ARG, fn, "%s: idx64 is %d (0 or 1)", name, a->idx64);
    if (a->nrows < 0 || a->ncols < 0 || a->nnz < 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "%s: negative size (" I64 " x " I64 ", nnz " I64 ")",
                             name, LL(a->nrows), LL(a->ncols), LL(a->nnz));
    const char *what = !rmcc_fits(a->nrows, a->idx64)   ? "nrows"
                       : !rmcc_fits(a->ncols, a->idx64) ? "ncols"
                       : !rmcc_fits(a->nnz, a->idx64)   ? "nnz"
                                                        : NULL;
    if (what) {
        int64_t v = what[1] == 'r' ? a->nrows : what[1] == 'c' ? a->ncols : a->nnz;
        return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                             "%s: %s = " I64 " does not fit its 32-bit indices (at most %d)", name,
                             what, LL(v), INT32_MAX);
    }
    if (!a->rowptr && (a->nrows > 0 || a->nnz > 0))
        return rmc_error_set(RMC_ERR_ARG, fn, "%s: rowptr is NULL with " I64 " rows, nnz " I64,
                             name, LL(a->nrows), LL(a->nnz));
    if (a->nnz > 0 && (!a->colind || !a->val))
        return rmc_error_set(RMC_ERR_ARG, fn, "%s: %s is NULL with nnz " I64, name,
                             a->colind ? "val" : "colind", LL(a->nnz));
    return RMC_OK;
}

/* rowptr[0] == 0 and rowptr[nrows] == nnz (constant time); the monotonicity of the rows between
 * is rows_valid's. */
static rmc_status_t ends_valid(const rmc_csr_t *a, const char *fn, const char *name)
{
    if (!a->rowptr)
        return RMC_OK; /* 0 x n, nnz 0, as rmc_csr_init made it */
    int64_t p0 = rmc_csr_rowptr(a, 0), pn = rmc_csr_rowptr(a, a->nrows);
    if (p0 != 0)
        return rmc_error_set(RMC_ERR_FORMAT, fn, "%s: rowptr[0] is " I64 ", not 0", name, LL(p0));
    if (pn != a->nnz)
        return rmc_error_set(RMC_ERR_FORMAT, fn,
                             "%s: rowptr[nrows] = rowptr[" I64 "] is " I64 ", not nnz = " I64, name,
                             LL(a->nrows), LL(pn), LL(a->nnz));
    return RMC_OK;
}

/* Rows [r0, r1) of a (whose ends are valid): row pointers nondecreasing and within [0, nnz],
 * then every column in range and strictly increasing in its row. */
static rmc_status_t rows_valid(const rmc_csr_t *a, int64_t r0, int64_t r1, const char *fn,
                               const char *name)
{
    if (r0 >= r1)
        return RMC_OK;
    for (int64_t i = r0; i < r1; i++) {
        int64_t p = rmc_csr_rowptr(a, i), q = rmc_csr_rowptr(a, i + 1);
        if (p > q)
            return rmc_error_set(RMC_ERR_FORMAT, fn,
                                 "%s: rowptr decreases at row " I64 ": rowptr[" I64 "] = " I64
                                 " > rowptr[" I64 "] = " I64,
                                 name, LL(i), LL(i), LL(p), LL(i + 1), LL(q));
    }
    int64_t lo = rmc_csr_rowptr(a, r0), hi = rmc_csr_rowptr(a, r1);
    if (lo < 0 || hi > a->nnz) /* only a slice's range can get here: the ends are checked */
        return rmc_error_set(RMC_ERR_FORMAT, fn,
                             "%s: rowptr of rows [" I64 ", " I64 "] leaves [0, nnz = " I64 "]",
                             name, LL(r0), LL(r1), LL(a->nnz));
    for (int64_t i = r0; i < r1; i++) {
        int64_t p = rmc_csr_rowptr(a, i), q = rmc_csr_rowptr(a, i + 1), prev = -1;
        for (int64_t k = p; k < q; k++) {
            int64_t c = rmc_csr_colind(a, k);
            if (c < 0 || c >= a->ncols)
                return rmc_error_set(RMC_ERR_FORMAT, fn,
                                     "%s: row " I64 ", entry " I64 ": column " I64
                                     " out of range [0, " I64 ")",
                                     name, LL(i), LL(k), LL(c), LL(a->ncols));
            if (c == prev)
                return rmc_error_set(RMC_ERR_FORMAT, fn,
                                     "%s: row " I64 ", entry " I64 ": column " I64
                                     " repeated: duplicate column",
                                     name, LL(i), LL(k), LL(c));
            if (c < prev)
                return rmc_error_set(RMC_ERR_FORMAT, fn,
                                     "%s: row " I64 ", entry " I64 ": column " I64
                                     " after column " I64 ": columns unsorted",
                                     name, LL(i), LL(k), LL(c), LL(prev));
            prev = c;
        }
    }
    return RMC_OK;
}

rmc_status_t rmcc_csr_valid(const rmc_csr_t *a, const char *fn, const char *name)
{
    rmc_status_t st = rmcc_csr_shape(a, fn, name);
    if (st || !a->rowptr)
        return st;
    /* in the order a reader meets them: rowptr[0], rowptr's order, rowptr[nrows], columns */
    if (rmc_csr_rowptr(a, 0) != 0)
        return ends_valid(a, fn, name);
    for (int64_t i = 0; i < a->nrows; i++)
        if (rmc_csr_rowptr(a, i) > rmc_csr_rowptr(a, i + 1))
            return rows_valid(a, i, i + 1, fn, name);
    if ((st = ends_valid(a, fn, name)))
        return st;
    return rows_valid(a, 0, a->nrows, fn, name);
}

rmc_status_t rmc_csr_check(const rmc_csr_t *a)
{
    return rmcc_csr_valid(a, __func__, "a");
}

/* ----------------------------------------------------------------------- triplets --- */

typedef struct {
    int64_t col;
    double val;
} ent_t;

/* Stable sort of a row's entries by column: insertion sort for short rows, merge sort (tmp) for
 * long ones. Stability keeps duplicates in input order, so they are summed in that order. */
static void sort_row(ent_t *e, int64_t n, ent_t *tmp)
{
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            ent_t x = e[i];
            int64_t j = i;
            for (; j > 0 && e[j - 1].col > x.col; j--)
                e[j] = e[j - 1];
            e[j] = x;
        }
        return;
    }
    int64_t h = n / 2;
    sort_row(e, h, tmp);
    sort_row(e + h, n - h, tmp);
    if (e[h - 1].col <= e[h].col)
        return;
    memcpy(tmp, e, (size_t)h * sizeof(*e));
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        e[k++] = e[j].col < tmp[i].col ? e[j++] : tmp[i++];
    while (i < h)
        e[k++] = tmp[i++];
}

rmc_status_t rmcc_csr_build(rmc_csr_t *out, int64_t nrows, int64_t ncols, int64_t n,
                            const int64_t *row, const int64_t *col, const double *val, int dup_sum,
                            int idx64, const char *fn)
{
    rmc_status_t st = rmcc_out_begin(out, idx64, fn);
    if (st)
        return st;
    if (nrows < 0 || ncols < 0 || n < 0)
        return rmc_error_set(RMC_ERR_ARG, fn, "negative size: nrows " I64 ", ncols " I64 ", n " I64,
                             LL(nrows), LL(ncols), LL(n));
    if (dup_sum != 0 && dup_sum != 1)
        return rmc_error_set(RMC_ERR_ARG, fn, "dup_sum is %d (1: sum duplicates, 0: refuse them)",
                             dup_sum);
    if (n > 0 && (!row || !col || !val))
        return rmc_error_set(RMC_ERR_ARG, fn, "%s is NULL with n = " I64,
                             !row   ? "row"
                             : !col ? "col"
                                    : "val",
                             LL(n));
    if (!rmcc_fits(nrows, idx64))
        return too_big(fn, "nrows", nrows);
    if (!rmcc_fits(ncols, idx64))
        return too_big(fn, "ncols", ncols);
    for (int64_t k = 0; k < n; k++) {
        if (row[k] < 0 || row[k] >= nrows)
            return rmc_error_set(RMC_ERR_ARG, fn,
                                 "triplet " I64 ": row " I64 " out of range [0, " I64 ")", LL(k),
                                 LL(row[k]), LL(nrows));
        if (col[k] < 0 || col[k] >= ncols)
            return rmc_error_set(RMC_ERR_ARG, fn,
                                 "triplet " I64 ": column " I64 " out of range [0, " I64 ")", LL(k),
                                 LL(col[k]), LL(ncols));
    }
    /* counting sort by row (stable), then each row by column */
    int64_t *cnt = nrows < INT64_MAX ? calloc_n(nrows + 1, sizeof(int64_t)) : NULL;
    ent_t *e = rmcc_malloc_n(n, sizeof(ent_t));
    ent_t *tmp = NULL;
    if (!cnt || !e)
        goto nomem;
    for (int64_t k = 0; k < n; k++)
        cnt[row[k] + 1]++;
    int64_t maxrow = 0;
    for (int64_t i = 0; i < nrows; i++) {
        if (cnt[i + 1] > maxrow)
            maxrow = cnt[i + 1];
        cnt[i + 1] += cnt[i];
    }
    for (int64_t k = 0; k < n; k++)
        e[cnt[row[k]]++] = (ent_t){col[k], val[k]};
    /* cnt[i] is now the end of row i: shift back to starts */
    for (int64_t i = nrows; i > 0; i--)
        cnt[i] = cnt[i - 1];
    cnt[0] = 0;
    if (!(tmp = rmcc_malloc_n(maxrow / 2 + 1, sizeof(ent_t))))
        goto nomem;
    /* sort and merge duplicates in place: row i's unique entries at e[w0 ..] */
    int64_t w = 0;
    for (int64_t i = 0; i < nrows; i++) {
        int64_t p = cnt[i], q = cnt[i + 1], w0 = w;
        sort_row(e + p, q - p, tmp);
        for (int64_t k = p; k < q; k++) {
            if (w > w0 && e[w - 1].col == e[k].col) {
                if (!dup_sum) {
                    int64_t c = e[k].col, first = -1, second = -1;
                    for (int64_t t = 0; t < n && second < 0; t++)
                        if (row[t] == i && col[t] == c)
                            *(first < 0 ? &first : &second) = t;
                    st = rmc_error_set(RMC_ERR_FORMAT, fn,
                                       "triplets " I64 " and " I64 " are both at (" I64 ", " I64
                                       "): duplicates refused (dup_sum 0)",
                                       LL(first), LL(second), LL(i), LL(c));
                    goto out;
                }
                e[w - 1].val += e[k].val;
            } else {
                e[w++] = e[k];
            }
        }
        cnt[i] = w0;
    }
    cnt[nrows] = w;
    if (!rmcc_fits(w, idx64)) {
        st = too_big(fn, "nnz", w);
        goto out;
    }
    if ((st = rmcc_csr_alloc(out, nrows, ncols, w, idx64, fn)))
        goto out;
    for (int64_t i = 0; i <= nrows; i++)
        rmcc_idx_set(out->rowptr, i, cnt[i], idx64);
    for (int64_t k = 0; k < w; k++) {
        rmcc_idx_set(out->colind, k, e[k].col, idx64);
        out->val[k] = e[k].val;
    }
    goto out;
nomem:
    st = rmc_error_set(RMC_ERR_NOMEM, fn, "no memory to sort " I64 " triplets of " I64 " rows",
                       LL(n), LL(nrows));
out:
    free(cnt);
    free(e);
    free(tmp);
    return st;
}

rmc_status_t rmc_csr_from_coo(rmc_csr_t *out, int64_t nrows, int64_t ncols, int64_t n,
                              const int64_t *row, const int64_t *col, const double *val,
                              int dup_sum, int idx64)
{
    return rmcc_csr_build(out, nrows, ncols, n, row, col, val, dup_sum, idx64, __func__);
}

/* ---------------------------------------------------------- copy, dense, slice --- */

rmc_status_t rmc_csr_copy(rmc_csr_t *out, const rmc_csr_t *a, int idx64)
{
    const char *fn = __func__;
    if (out && out == a)
        return rmc_error_set(RMC_ERR_ARG, fn, "out and a are the same matrix");
    rmc_status_t st = rmcc_out_begin(out, idx64, fn);
    if (!st)
        st = rmcc_csr_valid(a, fn, "a");
    if (!st)
        st = rmcc_csr_alloc(out, a->nrows, a->ncols, a->nnz, idx64, fn);
    if (st)
        return st;
    if (!a->rowptr) {
        /* 0 x n as rmc_csr_init made it: out's rowptr is already {0} */
    } else if (a->idx64 == idx64) {
        size_t w = idx64 ? sizeof(int64_t) : sizeof(int32_t);
        memcpy(out->rowptr, a->rowptr, (size_t)(a->nrows + 1) * w);
        if (a->nnz)
            memcpy(out->colind, a->colind, (size_t)a->nnz * w);
    } else {
        for (int64_t i = 0; i <= a->nrows; i++)
            rmcc_idx_set(out->rowptr, i, rmc_csr_rowptr(a, i), idx64);
        for (int64_t k = 0; k < a->nnz; k++)
            rmcc_idx_set(out->colind, k, rmc_csr_colind(a, k), idx64);
    }
    if (a->nnz)
        memcpy(out->val, a->val, (size_t)a->nnz * sizeof(double));
    return RMC_OK;
}

rmc_status_t rmc_csr_to_dense(const rmc_csr_t *a, double *d, int64_t ld)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_csr_valid(a, fn, "a");
    if (st)
        return st;
    if (ld < a->ncols)
        return rmc_error_set(RMC_ERR_ARG, fn, "ld = " I64 " < ncols = " I64, LL(ld), LL(a->ncols));
    if (a->nrows == 0 || a->ncols == 0)
        return RMC_OK;
    if (!d)
        return rmc_error_set(RMC_ERR_ARG, fn, "d is NULL for a " I64 " x " I64 " matrix",
                             LL(a->nrows), LL(a->ncols));
    if ((uint64_t)(a->nrows - 1) > (uint64_t)((PTRDIFF_MAX / (int64_t)sizeof(double)) / ld))
        return rmc_error_set(RMC_ERR_TOO_BIG, fn,
                             I64 " rows of leading dimension " I64 " overflow the address space",
                             LL(a->nrows), LL(ld));
    for (int64_t i = 0; i < a->nrows; i++) {
        double *r = d + i * ld;
        memset(r, 0, (size_t)a->ncols * sizeof(double));
        for (int64_t k = rmc_csr_rowptr(a, i); k < rmc_csr_rowptr(a, i + 1); k++)
            r[rmc_csr_colind(a, k)] = a->val[k];
    }
    return RMC_OK;
}

rmc_status_t rmc_csr_slice(rmc_csr_t *out, const rmc_csr_t *a, int64_t r0, int64_t r1, int64_t c0,
                           int64_t c1)
{
    const char *fn = __func__;
    if (!out)
        return rmc_error_set(RMC_ERR_ARG, fn, "out is NULL");
    if (out == a)
        return rmc_error_set(RMC_ERR_ARG, fn, "out and a are the same matrix");
    rmc_csr_init(out, a && a->idx64 == 1);
    /* only the sliced rows are read, so only they are checked (and the row pointers' ends) */
    rmc_status_t st = rmcc_csr_shape(a, fn, "a");
    if (st)
        return st;
    if (r0 < 0 || r1 < r0 || r1 > a->nrows)
        return rmc_error_set(RMC_ERR_ARG, fn, "rows [" I64 ", " I64 ") not within [0, " I64 "]",
                             LL(r0), LL(r1), LL(a->nrows));
    if (c0 < 0 || c1 < c0 || c1 > a->ncols)
        return rmc_error_set(RMC_ERR_ARG, fn, "columns [" I64 ", " I64 ") not within [0, " I64 "]",
                             LL(c0), LL(c1), LL(a->ncols));
    if ((st = ends_valid(a, fn, "a")) || (st = rows_valid(a, r0, r1, fn, "a")))
        return st;
    int64_t nnz = 0;
    for (int64_t i = r0; i < r1; i++) {
        int64_t p = rmc_csr_rowptr(a, i), q = rmc_csr_rowptr(a, i + 1);
        nnz += rmcc_csr_lower_bound(a, p, q, c1) - rmcc_csr_lower_bound(a, p, q, c0);
    }
    if ((st = rmcc_csr_alloc(out, r1 - r0, c1 - c0, nnz, a->idx64, fn)))
        return st;
    int64_t w = 0;
    for (int64_t i = r0; i < r1; i++) {
        int64_t p = rmc_csr_rowptr(a, i), q = rmc_csr_rowptr(a, i + 1);
        int64_t e = rmcc_csr_lower_bound(a, p, q, c1);
        for (int64_t k = rmcc_csr_lower_bound(a, p, q, c0); k < e; k++, w++) {
            rmcc_idx_set(out->colind, w, rmc_csr_colind(a, k) - c0, a->idx64);
            out->val[w] = a->val[k];
        }
        rmcc_idx_set(out->rowptr, i - r0 + 1, w, a->idx64);
    }
    return RMC_OK;
}
