/* Helpers of the local sparse tests (test_csr, test_spa, test_mm, test_gen): a seeded random
 * source, random CSR matrices built here without the library's builders, dense references and exact
 * comparisons. Included after cmocka.h. */
#ifndef RMC_TEST_CSR_UTIL_H
#define RMC_TEST_CSR_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rmc/csr.h>

/* A status and a message: `call` returns st and rmc_last_error() contains `text`. */
#define ASSERT_ERR(call, st, text)                                                                 \
    do {                                                                                           \
        rmc_last_error_clear();                                                                    \
        rmc_status_t st_ = (call);                                                                 \
        if (st_ != (st) || !strstr(rmc_last_error(), (text)))                                      \
            fail_msg("%s: status %d (want %d), message \"%s\" (want \"%s\" in it)", #call,         \
                     (int)st_, (int)(st), rmc_last_error(), (text));                               \
    } while (0)

static inline uint64_t tu_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double tu_unit(uint64_t *s)
{
    return (double)(tu_next(s) >> 11) * 0x1p-53;
}

/* A value: an integer in [-4, 4] without 0 (sums exact in any order) or a real in [-1, 1). */
static inline double tu_val(uint64_t *s, int intvals)
{
    if (intvals) {
        int v = (int)(tu_next(s) % 8) - 4;
        return v >= 0 ? v + 1 : v;
    }
    return 2 * tu_unit(s) - 1;
}

/* A random m x n CSR matrix, each entry present with probability p (rows with probability
 * `empty` left empty), built directly (sorted by construction). */
static inline void tu_random(rmc_csr_t *a, int64_t m, int64_t n, double p, double empty,
                             uint64_t seed, int idx64, int intvals)
{
    uint64_t s = seed;
    char *mask = calloc((size_t)(m * n) + 1, 1);
    assert_non_null(mask);
    int64_t nnz = 0;
    for (int64_t i = 0; i < m; i++) {
        if (tu_unit(&s) < empty)
            continue;
        for (int64_t j = 0; j < n; j++)
            if (tu_unit(&s) < p) {
                mask[i * n + j] = 1;
                nnz++;
            }
    }
    assert_int_equal(rmc_csr_alloc(a, m, n, nnz, idx64), RMC_OK);
    int64_t k = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++)
            if (mask[i * n + j]) {
                if (idx64)
                    ((int64_t *)a->colind)[k] = j;
                else
                    ((int32_t *)a->colind)[k] = (int32_t)j;
                a->val[k++] = tu_val(&s, intvals);
            }
        if (idx64)
            ((int64_t *)a->rowptr)[i + 1] = k;
        else
            ((int32_t *)a->rowptr)[i + 1] = (int32_t)k;
    }
    free(mask);
}

/* a as a dense row-major array (read entry by entry, independent of rmc_csr_to_dense). */
static inline double *tu_dense(const rmc_csr_t *a)
{
    double *d = calloc((size_t)(a->nrows * a->ncols) + 1, sizeof(double));
    assert_non_null(d);
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t k = rmc_csr_rowptr(a, i); k < rmc_csr_rowptr(a, i + 1); k++)
            d[i * a->ncols + rmc_csr_colind(a, k)] += a->val[k];
    return d;
}

/* The same shape, structure and values bit for bit (index widths may differ). */
static inline void tu_assert_same(const rmc_csr_t *a, const rmc_csr_t *b)
{
    assert_int_equal(a->nrows, b->nrows);
    assert_int_equal(a->ncols, b->ncols);
    assert_int_equal(a->nnz, b->nnz);
    for (int64_t i = 0; i <= a->nrows && a->rowptr; i++)
        assert_int_equal(rmc_csr_rowptr(a, i), rmc_csr_rowptr(b, i));
    for (int64_t k = 0; k < a->nnz; k++) {
        assert_int_equal(rmc_csr_colind(a, k), rmc_csr_colind(b, k));
        if (memcmp(&a->val[k], &b->val[k], sizeof(double)) != 0)
            fail_msg("entry %lld: %.17g != %.17g", (long long)k, a->val[k], b->val[k]);
    }
}

/* The same structure, values within a relative tolerance of the larger magnitude. */
static inline void tu_assert_close(const rmc_csr_t *a, const rmc_csr_t *b, double tol)
{
    assert_int_equal(a->nrows, b->nrows);
    assert_int_equal(a->ncols, b->ncols);
    assert_int_equal(a->nnz, b->nnz);
    for (int64_t i = 0; i <= a->nrows && a->rowptr; i++)
        assert_int_equal(rmc_csr_rowptr(a, i), rmc_csr_rowptr(b, i));
    for (int64_t k = 0; k < a->nnz; k++) {
        assert_int_equal(rmc_csr_colind(a, k), rmc_csr_colind(b, k));
        double x = a->val[k], y = b->val[k], m = fmax(fabs(x), fabs(y));
        if (fabs(x - y) > tol * (m > 1 ? m : 1))
            fail_msg("entry %lld: %.17g vs %.17g", (long long)k, x, y);
    }
}

/* An empty matrix as rmc_csr_init leaves it. */
static inline void tu_assert_empty(const rmc_csr_t *a)
{
    assert_int_equal(a->nrows, 0);
    assert_int_equal(a->ncols, 0);
    assert_int_equal(a->nnz, 0);
    assert_null(a->rowptr);
    assert_null(a->colind);
    assert_null(a->val);
    assert_int_equal(a->own, 0);
}

#endif
