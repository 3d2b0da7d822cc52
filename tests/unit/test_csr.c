/* Local CSR matrices (rmc/csr.h): creation, every rule of rmc_csr_check, building from triplets,
 * copies, dense conversion, slicing, and the kernels (SpMM, SpGEMM with every accumulator, sums)
 * against dense and triplet references, in both index widths, with empty and ragged shapes and
 * 32-bit overflow. One process, no MPI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../cmocka_main.h"
#include "csr_util.h"

static const rmc_spa_kind_t kinds[] = {RMC_SPA_DENSE, RMC_SPA_HASH, RMC_SPA_HEAP, RMC_SPA_KWAY,
                                       RMC_SPA_AUTO};
#define NKINDS 5

/* A matrix over the caller's arrays (own 0) of width idx64, from int64 templates. */
typedef struct {
    rmc_csr_t a;
    int64_t rp64[16], ci64[32];
    int32_t rp32[16], ci32[32];
    double val[32];
} hand_t;

static void hand(hand_t *h, int64_t m, int64_t n, const int64_t *rp, const int64_t *ci, int64_t nnz,
                 int idx64)
{
    memset(h, 0, sizeof(*h));
    for (int64_t i = 0; i <= m; i++) {
        h->rp64[i] = rp[i];
        h->rp32[i] = (int32_t)rp[i];
    }
    for (int64_t k = 0; k < nnz; k++) {
        h->ci64[k] = ci[k];
        h->ci32[k] = (int32_t)ci[k];
        h->val[k] = (double)(k + 1);
    }
    h->a = (rmc_csr_t){m,
                       n,
                       nnz,
                       idx64,
                       idx64 ? (void *)h->rp64 : (void *)h->rp32,
                       idx64 ? (void *)h->ci64 : (void *)h->ci32,
                       h->val,
                       0};
}

/* Sets entry k of a's colind / rowptr whatever its width. */
static void set_ci(rmc_csr_t *a, int64_t k, int64_t v)
{
    if (a->idx64)
        ((int64_t *)a->colind)[k] = v;
    else
        ((int32_t *)a->colind)[k] = (int32_t)v;
}
static void set_rp(rmc_csr_t *a, int64_t i, int64_t v)
{
    if (a->idx64)
        ((int64_t *)a->rowptr)[i] = v;
    else
        ((int32_t *)a->rowptr)[i] = (int32_t)v;
}

/* ------------------------------------------------------------------ create, check --- */

static void test_alloc(void **state)
{
    (void)state;
    rmc_csr_t a;
    rmc_csr_init(&a, 1);
    assert_int_equal(a.idx64, 1);
    assert_null(a.rowptr);
    assert_int_equal(rmc_csr_check(&a), RMC_OK); /* the empty 0 x 0 matrix is valid */
    for (int w = 0; w < 2; w++) {
        assert_int_equal(rmc_csr_alloc(&a, 3, 4, 5, w), RMC_OK);
        assert_int_equal(a.nrows, 3);
        assert_int_equal(a.ncols, 4);
        assert_int_equal(a.nnz, 5);
        assert_int_equal(a.idx64, w);
        assert_int_equal(a.own, 1);
        for (int i = 0; i <= 3; i++)
            assert_int_equal(rmc_csr_rowptr(&a, i), 0);
        rmc_csr_free(&a);
        assert_int_equal(a.idx64, w);
        assert_null(a.rowptr);
        assert_int_equal(a.nrows, 0);
    }
    rmc_csr_free(NULL);
    rmc_csr_init(NULL, 0);
    ASSERT_ERR(rmc_csr_alloc(NULL, 1, 1, 1, 0), RMC_ERR_ARG, "NULL");
    ASSERT_ERR(rmc_csr_alloc(&a, -1, 2, 0, 0), RMC_ERR_ARG, "negative");
    ASSERT_ERR(rmc_csr_alloc(&a, 1, 2, -3, 1), RMC_ERR_ARG, "negative");
    ASSERT_ERR(rmc_csr_alloc(&a, 1, 1, 0, 2), RMC_ERR_ARG, "idx64 is 2");
    /* 32-bit overflow of each size, found before anything is allocated */
    ASSERT_ERR(rmc_csr_alloc(&a, 1, 3000000000LL, 0, 0), RMC_ERR_TOO_BIG, "ncols = 3000000000");
    ASSERT_ERR(rmc_csr_alloc(&a, 3000000000LL, 1, 0, 0), RMC_ERR_TOO_BIG, "nrows = 3000000000");
    ASSERT_ERR(rmc_csr_alloc(&a, 1, 1, 3000000000LL, 0), RMC_ERR_TOO_BIG, "nnz = 3000000000");
    ASSERT_ERR(rmc_csr_alloc(&a, 1, 1, (int64_t)INT32_MAX + 1, 0), RMC_ERR_TOO_BIG, "nnz");
    tu_assert_empty(&a);
    /* 64-bit: a 1 x 3e9 matrix with its last column set */
    assert_int_equal(rmc_csr_alloc(&a, 1, 3000000000LL, 2, 1), RMC_OK);
    set_rp(&a, 1, 2);
    set_ci(&a, 0, 0);
    set_ci(&a, 1, 2999999999LL);
    a.val[0] = a.val[1] = 1;
    assert_int_equal(rmc_csr_check(&a), RMC_OK);
    rmc_csr_free(&a);
    /* a matrix over the caller's arrays: rmc_csr_free does not free them (ASan would tell) */
    hand_t h;
    const int64_t rp[] = {0, 1}, ci[] = {0};
    hand(&h, 1, 1, rp, ci, 1, 0);
    rmc_csr_free(&h.a);
    assert_null(h.a.rowptr);
}

static void test_check(void **state)
{
    (void)state;
    /* 4 x 5: row 0 {1, 3}, row 1 {}, row 2 {0, 2, 4}, row 3 {4} */
    const int64_t rp[] = {0, 2, 2, 5, 6}, ci[] = {1, 3, 0, 2, 4, 4};
    hand_t h;
    for (int w = 0; w < 2; w++) {
        hand(&h, 4, 5, rp, ci, 6, w);
        assert_int_equal(rmc_csr_check(&h.a), RMC_OK);
        set_rp(&h.a, 0, 1);
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_FORMAT, "rmc_csr_check: a: rowptr[0] is 1, not 0");
        hand(&h, 4, 5, rp, ci, 6, w);
        set_rp(&h.a, 2, 1);
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_FORMAT,
                   "rowptr decreases at row 1: rowptr[1] = 2 > rowptr[2] = 1");
        hand(&h, 4, 5, rp, ci, 6, w);
        set_rp(&h.a, 4, 5);
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_FORMAT,
                   "rowptr[nrows] = rowptr[4] is 5, not nnz = 6");
        hand(&h, 4, 5, rp, ci, 6, w);
        set_ci(&h.a, 3, 5);
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_FORMAT,
                   "row 2, entry 3: column 5 out of range [0, 5)");
        hand(&h, 4, 5, rp, ci, 6, w);
        set_ci(&h.a, 0, -1);
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_FORMAT,
                   "row 0, entry 0: column -1 out of range [0, 5)");
        hand(&h, 4, 5, rp, ci, 6, w);
        set_ci(&h.a, 4, 0);
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_FORMAT,
                   "row 2, entry 4: column 0 after column 2: columns unsorted");
        hand(&h, 4, 5, rp, ci, 6, w);
        set_ci(&h.a, 4, 2);
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_FORMAT,
                   "row 2, entry 4: column 2 repeated: duplicate column");
        /* shapes and pointers */
        hand(&h, 4, 5, rp, ci, 6, w);
        h.a.idx64 = 3;
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_ARG, "idx64 is 3");
        hand(&h, 4, 5, rp, ci, 6, w);
        h.a.nrows = -1;
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_ARG, "negative size");
        hand(&h, 4, 5, rp, ci, 6, w);
        h.a.rowptr = NULL;
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_ARG, "rowptr is NULL with 4 rows");
        hand(&h, 4, 5, rp, ci, 6, w);
        h.a.colind = NULL;
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_ARG, "colind is NULL with nnz 6");
        hand(&h, 4, 5, rp, ci, 6, w);
        h.a.val = NULL;
        ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_ARG, "val is NULL with nnz 6");
    }
    hand(&h, 4, 5, rp, ci, 6, 0);
    h.a.ncols = 3000000000LL;
    ASSERT_ERR(rmc_csr_check(&h.a), RMC_ERR_TOO_BIG, "ncols = 3000000000");
    h.a.idx64 = 1;
    h.a.rowptr = h.rp64;
    h.a.colind = h.ci64;
    assert_int_equal(rmc_csr_check(&h.a), RMC_OK);
    ASSERT_ERR(rmc_csr_check(NULL), RMC_ERR_ARG, "a is NULL");
    /* empty shapes */
    const int64_t z[] = {0, 0, 0};
    hand(&h, 2, 0, z, ci, 0, 0); /* 2 x 0 */
    assert_int_equal(rmc_csr_check(&h.a), RMC_OK);
    hand(&h, 0, 7, z, ci, 0, 1); /* 0 x 7 */
    assert_int_equal(rmc_csr_check(&h.a), RMC_OK);
}

/* --------------------------------------------------------------------- triplets --- */

static void test_from_coo(void **state)
{
    (void)state;
    enum { M = 50, N = 40, T = 3000 };
    int64_t *row = malloc(T * sizeof(int64_t)), *col = malloc(T * sizeof(int64_t));
    double *val = malloc(T * sizeof(double));
    assert_true(row && col && val);
    for (int intvals = 0; intvals < 2; intvals++)
        for (int w = 0; w < 2; w++) {
            uint64_t s = 42 + (uint64_t)(2 * intvals + w);
            double ref[M * N];
            char seen[M * N];
            memset(seen, 0, sizeof seen);
            int64_t distinct = 0;
            for (int k = 0; k < T; k++) {
                row[k] = (int64_t)(tu_next(&s) % M);
                col[k] = (int64_t)(tu_next(&s) % (N / 2)) * 2; /* even columns: duplicates */
                val[k] = tu_val(&s, intvals);
                int64_t x = row[k] * N + col[k];
                /* the reference sums in input order, as rmc_csr_from_coo promises */
                ref[x] = seen[x] ? ref[x] + val[k] : val[k];
                distinct += !seen[x];
                seen[x] = 1;
            }
            rmc_csr_t a;
            assert_int_equal(rmc_csr_from_coo(&a, M, N, T, row, col, val, 1, w), RMC_OK);
            assert_int_equal(rmc_csr_check(&a), RMC_OK);
            assert_int_equal(a.idx64, w);
            assert_int_equal(a.own, 1);
            assert_int_equal(a.nnz, distinct);
            for (int64_t i = 0; i < M; i++)
                for (int64_t k = rmc_csr_rowptr(&a, i); k < rmc_csr_rowptr(&a, i + 1); k++) {
                    int64_t x = i * N + rmc_csr_colind(&a, k);
                    assert_true(seen[x]);
                    assert_memory_equal(&a.val[k], &ref[x], sizeof(double));
                }
            rmc_csr_t b;
            ASSERT_ERR(rmc_csr_from_coo(&b, M, N, T, row, col, val, 0, w), RMC_ERR_FORMAT,
                       "duplicates refused");
            tu_assert_empty(&b);
            /* every triplet once, with the sums: dup_sum 0 accepts, the same matrix */
            int64_t k2 = 0;
            memset(seen, 0, sizeof seen);
            for (int k = 0; k < T; k++)
                if (!seen[row[k] * N + col[k]]++) {
                    row[k2] = row[k];
                    col[k2] = col[k];
                    val[k2++] = ref[row[k] * N + col[k]];
                }
            assert_int_equal(rmc_csr_from_coo(&b, M, N, k2, row, col, val, 0, w), RMC_OK);
            tu_assert_same(&a, &b);
            rmc_csr_free(&a);
            rmc_csr_free(&b);
        }
    free(row);
    free(col);
    free(val);
    /* the message names both duplicates */
    const int64_t r[] = {0, 1, 2, 0, 1, 2, 0, 2}, c[] = {0, 0, 5, 1, 1, 1, 2, 5};
    const double v[] = {1, 2, 3, 4, 5, 6, 7, 8};
    rmc_csr_t a;
    ASSERT_ERR(rmc_csr_from_coo(&a, 3, 6, 8, r, c, v, 0, 0), RMC_ERR_FORMAT,
               "triplets 2 and 7 are both at (2, 5)");
    assert_int_equal(rmc_csr_from_coo(&a, 3, 6, 8, r, c, v, 1, 0), RMC_OK);
    assert_int_equal(a.nnz, 7);
    assert_true(a.val[6] == 11.0); /* (2, 5): 3 + 8 */
    rmc_csr_free(&a);
    /* indices out of range, NULL arrays, bad modes */
    const int64_t rbad[] = {0, 1, 2, 0, -1}, cbad[] = {0, 9};
    ASSERT_ERR(rmc_csr_from_coo(&a, 3, 6, 5, rbad, c, v, 1, 0), RMC_ERR_ARG,
               "triplet 4: row -1 out of range [0, 3)");
    ASSERT_ERR(rmc_csr_from_coo(&a, 3, 6, 2, r, cbad, v, 1, 1), RMC_ERR_ARG,
               "triplet 1: column 9 out of range [0, 6)");
    tu_assert_empty(&a);
    ASSERT_ERR(rmc_csr_from_coo(&a, 3, 6, 2, r, NULL, v, 1, 0), RMC_ERR_ARG, "col is NULL");
    ASSERT_ERR(rmc_csr_from_coo(&a, 3, 6, 2, r, c, v, 2, 0), RMC_ERR_ARG, "dup_sum is 2");
    ASSERT_ERR(rmc_csr_from_coo(&a, 3, 6, 2, r, c, v, 1, -1), RMC_ERR_ARG, "idx64");
    ASSERT_ERR(rmc_csr_from_coo(&a, 3, -6, 0, r, c, v, 1, 0), RMC_ERR_ARG, "negative");
    ASSERT_ERR(rmc_csr_from_coo(NULL, 3, 6, 0, r, c, v, 1, 0), RMC_ERR_ARG, "out is NULL");
    /* empty: no triplets (NULL arrays allowed), 0 x n, n x 0 */
    const int64_t shapes[][2] = {{3, 6}, {0, 5}, {5, 0}, {0, 0}};
    for (int t = 0; t < 4; t++) {
        assert_int_equal(
            rmc_csr_from_coo(&a, shapes[t][0], shapes[t][1], 0, NULL, NULL, NULL, 0, t & 1),
            RMC_OK);
        assert_int_equal(a.nrows, shapes[t][0]);
        assert_int_equal(a.ncols, shapes[t][1]);
        assert_int_equal(a.nnz, 0);
        assert_int_equal(rmc_csr_check(&a), RMC_OK);
        for (int64_t i = 0; i <= a.nrows; i++)
            assert_int_equal(rmc_csr_rowptr(&a, i), 0);
        rmc_csr_free(&a);
    }
    /* a 1 x 3e9 matrix: 64-bit only */
    const int64_t r0[] = {0}, cbig[] = {2999999999LL};
    const double one[] = {1.0};
    ASSERT_ERR(rmc_csr_from_coo(&a, 1, 3000000000LL, 1, r0, cbig, one, 1, 0), RMC_ERR_TOO_BIG,
               "ncols = 3000000000");
    assert_int_equal(rmc_csr_from_coo(&a, 1, 3000000000LL, 1, r0, cbig, one, 1, 1), RMC_OK);
    assert_int_equal(rmc_csr_colind(&a, 0), 2999999999LL);
    rmc_csr_free(&a);
}

/* ------------------------------------------------------------ copy, dense, slice --- */

static void test_copy(void **state)
{
    (void)state;
    rmc_csr_t a, b, c, d;
    tu_random(&a, 30, 20, 0.2, 0.2, 7, 0, 0);
    assert_int_equal(rmc_csr_copy(&b, &a, 1), RMC_OK);
    assert_int_equal(b.idx64, 1);
    assert_int_equal(b.own, 1);
    assert_int_equal(rmc_csr_copy(&c, &b, 0), RMC_OK);
    assert_int_equal(rmc_csr_copy(&d, &c, 0), RMC_OK);
    assert_int_equal(c.idx64, 0);
    tu_assert_same(&a, &b);
    tu_assert_same(&a, &c);
    tu_assert_same(&a, &d);
    assert_ptr_not_equal(d.val, c.val);
    rmc_csr_free(&d); /* an output is overwritten, not freed: errors below would leak it */
    ASSERT_ERR(rmc_csr_copy(&a, &a, 0), RMC_ERR_ARG, "same matrix");
    ASSERT_ERR(rmc_csr_copy(NULL, &a, 0), RMC_ERR_ARG, "out is NULL");
    ASSERT_ERR(rmc_csr_copy(&d, NULL, 0), RMC_ERR_ARG, "a is NULL");
    ASSERT_ERR(rmc_csr_copy(&d, &c, 7), RMC_ERR_ARG, "idx64 is 7");
    tu_assert_empty(&d);
    rmc_csr_free(&b);
    rmc_csr_free(&c);
    rmc_csr_free(&a);
    /* a malformed input is refused and the output left empty */
    const int64_t rp[] = {0, 2}, ci[] = {3, 1};
    hand_t h;
    hand(&h, 1, 4, rp, ci, 2, 1);
    ASSERT_ERR(rmc_csr_copy(&b, &h.a, 1), RMC_ERR_FORMAT, "columns unsorted");
    tu_assert_empty(&b);
    /* 64 -> 32 bits of a matrix too wide */
    const int64_t r0[] = {0}, cbig[] = {2999999999LL};
    const double one[] = {1.0};
    assert_int_equal(rmc_csr_from_coo(&a, 1, 3000000000LL, 1, r0, cbig, one, 1, 1), RMC_OK);
    ASSERT_ERR(rmc_csr_copy(&b, &a, 0), RMC_ERR_TOO_BIG, "ncols = 3000000000");
    tu_assert_empty(&b);
    rmc_csr_free(&a);
    /* the empty matrix of rmc_csr_init */
    rmc_csr_init(&a, 0);
    assert_int_equal(rmc_csr_copy(&b, &a, 1), RMC_OK);
    assert_int_equal(b.nrows, 0);
    assert_int_equal(rmc_csr_rowptr(&b, 0), 0);
    rmc_csr_free(&b);
}

static void test_to_dense(void **state)
{
    (void)state;
    for (int w = 0; w < 2; w++) {
        rmc_csr_t a;
        tu_random(&a, 13, 17, 0.3, 0.2, 11 + (uint64_t)w, w, 0);
        double d[13 * 20], *ref = tu_dense(&a);
        for (int i = 0; i < 13 * 20; i++)
            d[i] = 777;
        assert_int_equal(rmc_csr_to_dense(&a, d, 20), RMC_OK);
        for (int i = 0; i < 13; i++)
            for (int j = 0; j < 20; j++)
                assert_true(d[i * 20 + j] == (j < 17 ? ref[i * 17 + j] : 777));
        ASSERT_ERR(rmc_csr_to_dense(&a, d, 16), RMC_ERR_ARG, "ld = 16 < ncols = 17");
        ASSERT_ERR(rmc_csr_to_dense(&a, NULL, 17), RMC_ERR_ARG, "d is NULL");
        free(ref);
        rmc_csr_free(&a);
    }
    rmc_csr_t e;
    assert_int_equal(rmc_csr_from_coo(&e, 0, 5, 0, NULL, NULL, NULL, 1, 0), RMC_OK);
    assert_int_equal(rmc_csr_to_dense(&e, NULL, 5), RMC_OK);
    rmc_csr_free(&e);
    ASSERT_ERR(rmc_csr_to_dense(NULL, NULL, 5), RMC_ERR_ARG, "a is NULL");
}

static void test_slice(void **state)
{
    (void)state;
    const int64_t cuts[][4] = {{0, 40, 0, 30}, {0, 0, 0, 30},  {5, 5, 3, 3},
                               {3, 17, 4, 29}, {39, 40, 0, 1}, {0, 40, 29, 30},
                               {10, 30, 0, 0}, {1, 2, 0, 30},  {20, 40, 15, 30}};
    for (int w = 0; w < 2; w++) {
        rmc_csr_t a, s;
        tu_random(&a, 40, 30, 0.25, 0.25, 21 + (uint64_t)w, w, 0);
        double *ref = tu_dense(&a);
        for (size_t t = 0; t < sizeof cuts / sizeof cuts[0]; t++) {
            int64_t r0 = cuts[t][0], r1 = cuts[t][1], c0 = cuts[t][2], c1 = cuts[t][3];
            assert_int_equal(rmc_csr_slice(&s, &a, r0, r1, c0, c1), RMC_OK);
            assert_int_equal(rmc_csr_check(&s), RMC_OK);
            assert_int_equal(s.nrows, r1 - r0);
            assert_int_equal(s.ncols, c1 - c0);
            assert_int_equal(s.idx64, w);
            double *d = tu_dense(&s);
            int64_t nz = 0;
            for (int64_t i = r0; i < r1; i++)
                for (int64_t j = c0; j < c1; j++) {
                    assert_true(d[(i - r0) * (c1 - c0) + (j - c0)] == ref[i * 30 + j]);
                    nz += ref[i * 30 + j] != 0;
                }
            assert_int_equal(s.nnz, nz);
            free(d);
            rmc_csr_free(&s);
        }
        ASSERT_ERR(rmc_csr_slice(&s, &a, 0, 41, 0, 30), RMC_ERR_ARG, "rows [0, 41) not within");
        ASSERT_ERR(rmc_csr_slice(&s, &a, 5, 4, 0, 30), RMC_ERR_ARG, "rows [5, 4)");
        ASSERT_ERR(rmc_csr_slice(&s, &a, 0, 4, 3, 2), RMC_ERR_ARG, "columns [3, 2)");
        ASSERT_ERR(rmc_csr_slice(&s, &a, 0, 4, -1, 2), RMC_ERR_ARG, "columns [-1, 2)");
        ASSERT_ERR(rmc_csr_slice(&a, &a, 0, 4, 0, 2), RMC_ERR_ARG, "same matrix");
        tu_assert_empty(&s);
        free(ref);
        rmc_csr_free(&a);
    }
    /* only the sliced rows are checked: a bad row elsewhere does not matter, inside it does */
    const int64_t rp[] = {0, 2, 4, 6}, ci[] = {0, 1, 3, 2, 1, 2};
    hand_t h;
    rmc_csr_t s;
    hand(&h, 3, 4, rp, ci, 6, 0);
    assert_int_equal(rmc_csr_slice(&s, &h.a, 2, 3, 0, 4), RMC_OK);
    assert_int_equal(s.nnz, 2);
    rmc_csr_free(&s);
    ASSERT_ERR(rmc_csr_slice(&s, &h.a, 1, 3, 0, 4), RMC_ERR_FORMAT,
               "row 1, entry 3: column 2 after column 3");
    h.a.nnz = 5; /* rowptr[nrows] != nnz is found whatever the rows */
    ASSERT_ERR(rmc_csr_slice(&s, &h.a, 0, 1, 0, 4), RMC_ERR_FORMAT, "not nnz = 5");
}

/* ------------------------------------------------------------------------- SpMM --- */

static void test_spmm(void **state)
{
    (void)state;
    const int64_t ns[] = {1, 3, 4, 7, 64};
    for (int w = 0; w < 2; w++)
        for (int intvals = 0; intvals < 2; intvals++)
            for (int t = 0; t < 5; t++) {
                int64_t m = 37, k = 23, n = ns[t], ldb = n + 3, ldc = n + 5;
                uint64_t s = 100 + (uint64_t)(10 * w + 2 * t + intvals);
                rmc_csr_t a;
                tu_random(&a, m, k, 0.2, 0.2, s, w, intvals);
                double *ad = tu_dense(&a);
                double *b = malloc((size_t)(k * ldb) * sizeof(double));
                double *c = malloc((size_t)(m * ldc) * sizeof(double));
                double *ref = malloc((size_t)(m * ldc) * sizeof(double));
                assert_true(b && c && ref);
                for (int64_t x = 0; x < k * ldb; x++)
                    b[x] = x % ldb < n ? tu_val(&s, intvals) : NAN; /* padding never read */
                for (int64_t x = 0; x < m * ldc; x++)
                    c[x] = tu_val(&s, intvals);
                memcpy(ref, c, (size_t)(m * ldc) * sizeof(double));
                double alpha = intvals ? 2.0 : 1.5;
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        double sum = 0;
                        for (int64_t l = 0; l < k; l++)
                            sum += ad[i * k + l] * b[l * ldb + j];
                        ref[i * ldc + j] += alpha * sum;
                    }
                assert_int_equal(rmc_csr_spmm(alpha, &a, b, ldb, n, c, ldc), RMC_OK);
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < ldc; j++) {
                        double x = c[i * ldc + j], y = ref[i * ldc + j];
                        if (intvals || j >= n)
                            assert_memory_equal(&x, &y, sizeof x); /* padding untouched */
                        else
                            assert_true(fabs(x - y) <= 1e-12 * (1 + fabs(y)));
                    }
                /* alpha 0: C unchanged, B not read (NaN B) */
                for (int64_t x = 0; x < k * ldb; x++)
                    b[x] = NAN;
                memcpy(ref, c, (size_t)(m * ldc) * sizeof(double));
                assert_int_equal(rmc_csr_spmm(0.0, &a, b, ldb, n, c, ldc), RMC_OK);
                assert_int_equal(rmc_csr_spmm(0.0, &a, NULL, ldb, n, c, ldc), RMC_OK);
                assert_memory_equal(c, ref, (size_t)(m * ldc) * sizeof(double));
                ASSERT_ERR(rmc_csr_spmm(1, &a, b, n - 1, n, c, ldc), RMC_ERR_ARG, "ldb");
                ASSERT_ERR(rmc_csr_spmm(1, &a, b, ldb, n, c, n - 1), RMC_ERR_ARG, "ldc");
                ASSERT_ERR(rmc_csr_spmm(1, &a, NULL, ldb, n, c, ldc), RMC_ERR_ARG, "B is NULL");
                ASSERT_ERR(rmc_csr_spmm(1, &a, b, ldb, n, NULL, ldc), RMC_ERR_ARG, "C is NULL");
                ASSERT_ERR(rmc_csr_spmm(1, &a, b, ldb, -1, c, ldc), RMC_ERR_ARG, "n = -1");
                free(ad);
                free(b);
                free(c);
                free(ref);
                rmc_csr_free(&a);
            }
    /* empty: m = 0 (no C), k = 0 (no B), n = 0 */
    rmc_csr_t e;
    double c1[6] = {1, 2, 3, 4, 5, 6}, b1[6] = {1, 1, 1, 1, 1, 1};
    assert_int_equal(rmc_csr_from_coo(&e, 0, 3, 0, NULL, NULL, NULL, 1, 0), RMC_OK);
    assert_int_equal(rmc_csr_spmm(1, &e, b1, 2, 2, NULL, 2), RMC_OK);
    rmc_csr_free(&e);
    assert_int_equal(rmc_csr_from_coo(&e, 3, 0, 0, NULL, NULL, NULL, 1, 0), RMC_OK);
    assert_int_equal(rmc_csr_spmm(1, &e, NULL, 2, 2, c1, 2), RMC_OK);
    assert_int_equal(rmc_csr_spmm(1, &e, NULL, 0, 0, c1, 0), RMC_OK);
    assert_true(c1[0] == 1 && c1[5] == 6);
    rmc_csr_free(&e);
    rmc_csr_init(&e, 0); /* 0 x 0 with no arrays at all (rowptr NULL) */
    assert_int_equal(rmc_csr_spmm(1, &e, NULL, 2, 2, NULL, 2), RMC_OK);
    rmc_csr_free(&e);
    /* a malformed A */
    const int64_t rp[] = {0, 2}, ci[] = {1, 7};
    hand_t h;
    hand(&h, 1, 4, rp, ci, 2, 0);
    ASSERT_ERR(rmc_csr_spmm(1, &h.a, b1, 1, 1, c1, 1), RMC_ERR_FORMAT,
               "rmc_csr_spmm: A: row 0, entry 1: column 7 out of range");
}

/* ----------------------------------------------------------------------- SpGEMM --- */

/* The product through triplets: every a_ik * b_kj in the order (i, k ascending, j), summed by
 * rmc_csr_from_coo in that order: the order the accumulators sum in. *nprod: the products. */
static void ref_product(rmc_csr_t *c, const rmc_csr_t *a, const rmc_csr_t *b, int64_t *nprod)
{
    int64_t n = 0, cap = 1024;
    int64_t *r = malloc((size_t)cap * sizeof(int64_t)), *cc = malloc((size_t)cap * sizeof(int64_t));
    double *v = malloc((size_t)cap * sizeof(double));
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = rmc_csr_rowptr(a, i); p < rmc_csr_rowptr(a, i + 1); p++) {
            int64_t k = rmc_csr_colind(a, p);
            for (int64_t q = rmc_csr_rowptr(b, k); q < rmc_csr_rowptr(b, k + 1); q++) {
                if (n == cap) {
                    cap *= 2;
                    r = realloc(r, (size_t)cap * sizeof(int64_t));
                    cc = realloc(cc, (size_t)cap * sizeof(int64_t));
                    v = realloc(v, (size_t)cap * sizeof(double));
                    assert_true(r && cc && v);
                }
                r[n] = i;
                cc[n] = rmc_csr_colind(b, q);
                v[n++] = a->val[p] * b->val[q];
            }
        }
    assert_int_equal(rmc_csr_from_coo(c, a->nrows, b->ncols, n, r, cc, v, 1, a->idx64), RMC_OK);
    *nprod = n;
    free(r);
    free(cc);
    free(v);
}

/* C against the dense product of A and B (naive triple loop): every entry within rounding, and
 * every nonzero of the dense product present in C. */
static void check_dense_product(const rmc_csr_t *c, const rmc_csr_t *a, const rmc_csr_t *b)
{
    int64_t m = a->nrows, k = a->ncols, n = b->ncols;
    double *ad = tu_dense(a), *bd = tu_dense(b), *cd = tu_dense(c);
    char *in = calloc((size_t)(m * n) + 1, 1);
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = rmc_csr_rowptr(c, i); p < rmc_csr_rowptr(c, i + 1); p++)
            in[i * n + rmc_csr_colind(c, p)] = 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, mag = 0;
            for (int64_t l = 0; l < k; l++) {
                s += ad[i * k + l] * bd[l * n + j];
                mag += fabs(ad[i * k + l] * bd[l * n + j]);
            }
            assert_true(fabs(cd[i * n + j] - s) <= 1e-12 * (1 + mag));
            if (s != 0)
                assert_true(in[i * n + j]);
        }
    free(ad);
    free(bd);
    free(cd);
    free(in);
}

static void test_spgemm(void **state)
{
    (void)state;
    /* m, k, n, density of A, of B */
    const struct {
        int64_t m, k, n;
        double pa, pb;
    } sh[] = {{30, 20, 25, 0.2, 0.2}, {1, 1, 1, 1, 1},        {17, 1, 40, 0.5, 0.5},
              {40, 33, 1, 0.3, 0.5},  {0, 5, 7, 0.5, 0.5},    {6, 0, 7, 0.5, 0.5},
              {6, 5, 0, 0.5, 0.5},    {25, 25, 25, 0.9, 0.9}, {50, 40, 60, 0.05, 0.1},
              {12, 30, 200, 0.4, 0.6}};
    int cases = 0;
    for (size_t t = 0; t < sizeof sh / sizeof sh[0]; t++)
        for (int wa = 0; wa < 2; wa++)
            for (int wb = 0; wb < 2; wb++)
                for (int intvals = 0; intvals < 2; intvals++) {
                    uint64_t seed = 1000 + t * 16 + (uint64_t)(wa * 4 + wb * 2 + intvals);
                    rmc_csr_t a, b, ref;
                    tu_random(&a, sh[t].m, sh[t].k, sh[t].pa, 0.15, seed, wa, intvals);
                    tu_random(&b, sh[t].k, sh[t].n, sh[t].pb, 0.15, seed + 7777, wb, intvals);
                    int64_t nprod;
                    ref_product(&ref, &a, &b, &nprod);
                    for (int q = 0; q < NKINDS; q++) {
                        rmc_csr_t c;
                        double fl = 5;
                        assert_int_equal(rmc_csr_spgemm(&c, &a, &b, kinds[q], &fl), RMC_OK);
                        assert_int_equal(rmc_csr_check(&c), RMC_OK);
                        assert_int_equal(c.idx64, wa);
                        assert_int_equal(c.own, 1);
                        assert_true(fl == 5 + 2.0 * (double)nprod);
                        /* integers sum exactly in any order; reals: KWAY sums in another order */
                        if (intvals)
                            tu_assert_same(&c, &ref);
                        else
                            tu_assert_close(&c, &ref, 1e-13);
                        check_dense_product(&c, &a, &b);
                        rmc_csr_free(&c);
                        cases++;
                    }
                    rmc_csr_free(&a);
                    rmc_csr_free(&b);
                    rmc_csr_free(&ref);
                }
    assert_int_equal(cases, 10 * 8 * NKINDS);
}

/* Cancellation keeps an explicit zero; columns beyond the stamp limit use the symbolic hash set;
 * the errors. */
static void test_spgemm_edges(void **state)
{
    (void)state;
    const int64_t ar[] = {0, 0}, ac[] = {0, 1}, br[] = {0, 1}, bc[] = {0, 0};
    const double av[] = {1, 1}, bv[] = {1, -1};
    rmc_csr_t a, b, c;
    assert_int_equal(rmc_csr_from_coo(&a, 1, 2, 2, ar, ac, av, 1, 0), RMC_OK);
    assert_int_equal(rmc_csr_from_coo(&b, 2, 1, 2, br, bc, bv, 1, 1), RMC_OK);
    for (int q = 0; q < NKINDS; q++) {
        assert_int_equal(rmc_csr_spgemm(&c, &a, &b, kinds[q], NULL), RMC_OK);
        assert_int_equal(c.nnz, 1);
        assert_true(c.val[0] == 0.0);
        rmc_csr_free(&c);
    }
    /* errors */
    ASSERT_ERR(rmc_csr_spgemm(&c, &a, &a, RMC_SPA_HASH, NULL), RMC_ERR_ARG,
               "A is 1 x 2 but B is 1 x 2: inner dimensions differ");
    ASSERT_ERR(rmc_csr_spgemm(&a, &a, &b, RMC_SPA_HASH, NULL), RMC_ERR_ARG, "out is also");
    ASSERT_ERR(rmc_csr_spgemm(&c, &a, &b, (rmc_spa_kind_t)9, NULL), RMC_ERR_ARG, "kind 9");
    ASSERT_ERR(rmc_csr_spgemm(&c, &a, NULL, RMC_SPA_HASH, NULL), RMC_ERR_ARG, "B is NULL");
    ASSERT_ERR(rmc_csr_spgemm(NULL, &a, &b, RMC_SPA_HASH, NULL), RMC_ERR_ARG, "out is NULL");
    set_ci(&b, 1, 5);
    ASSERT_ERR(rmc_csr_spgemm(&c, &a, &b, RMC_SPA_HASH, NULL), RMC_ERR_FORMAT,
               "rmc_csr_spgemm: B: row 1, entry 1: column 5 out of range [0, 1)");
    tu_assert_empty(&c);
    rmc_csr_free(&a);
    rmc_csr_free(&b);

    /* wide B (2^20 and 2^25 columns): the symbolic phase uses its hash set; a few nonzeros */
    const int64_t widths[] = {(int64_t)1 << 20, (int64_t)1 << 25};
    for (int wi = 0; wi < 2; wi++) {
        int64_t n = widths[wi], k = 30, m = 20;
        uint64_t s = 555 + (uint64_t)wi;
        int64_t br2[150], bc2[150];
        double bv2[150];
        for (int e = 0; e < 150; e++) {
            br2[e] = e % k;
            bc2[e] = (int64_t)(tu_next(&s) % 64) * (n / 64) + (e % 3); /* collisions likely */
            bv2[e] = tu_val(&s, 1);
        }
        assert_int_equal(rmc_csr_from_coo(&b, k, n, 150, br2, bc2, bv2, 1, 1), RMC_OK);
        tu_random(&a, m, k, 0.3, 0.1, s, 0, 1);
        rmc_csr_t ref;
        int64_t nprod;
        ref_product(&ref, &a, &b, &nprod);
        for (int q = 0; q < NKINDS; q++) {
            if (kinds[q] == RMC_SPA_DENSE && wi == 1)
                continue; /* 2^25 dense columns: 300 MB for nothing */
            double fl = 0;
            assert_int_equal(rmc_csr_spgemm(&c, &a, &b, kinds[q], &fl), RMC_OK);
            assert_true(fl == 2.0 * (double)nprod);
            tu_assert_same(&c, &ref);
            rmc_csr_free(&c);
        }
        rmc_csr_free(&ref);
        rmc_csr_free(&a);
        rmc_csr_free(&b);
    }
}

/* A 46341 x 1 column of ones times a 1 x 46341 row: 46341^2 = 2147488281 > INT32_MAX nonzeros.
 * With 32-bit indices the symbolic phase says so before anything is allocated for them. */
/* The accumulator is made when a row first needs one: a dense one too wide for memory (2^61
 * columns: its allocation is refused before malloc) fails only a product with such a row, and
 * leaves the output empty (it used to stay allocated); rmc_csr_sum the same. */
static void test_spgemm_wide_dense(void **state)
{
    (void)state;
    const int64_t wide = (int64_t)1 << 61;
    const int64_t ar[] = {0, 0, 1}, ac[] = {0, 1, 1}, br[] = {0, 1}, bc[] = {5, wide - 1};
    const double av[] = {2, 3, 4}, bv[] = {1, 1};
    rmc_csr_t a, b, c, d;
    assert_int_equal(rmc_csr_from_coo(&a, 2, 2, 3, ar, ac, av, 1, 1), RMC_OK);
    assert_int_equal(rmc_csr_from_coo(&b, 2, wide, 2, br, bc, bv, 1, 1), RMC_OK);
    /* row 0 sums two rows of B: DENSE needs 2^61 values */
    ASSERT_ERR(rmc_csr_spgemm(&c, &a, &b, RMC_SPA_DENSE, NULL), RMC_ERR_NOMEM,
               "dense accumulator");
    tu_assert_empty(&c);
    const rmc_csr_t *two[] = {&b, &b};
    ASSERT_ERR(rmc_csr_sum(&c, two, 2, RMC_SPA_DENSE), RMC_ERR_NOMEM, "dense accumulator");
    tu_assert_empty(&c);
    /* without row 0 (one term per row) no accumulator is needed */
    assert_int_equal(rmc_csr_slice(&d, &a, 1, 2, 0, 2), RMC_OK);
    assert_int_equal(rmc_csr_spgemm(&c, &d, &b, RMC_SPA_DENSE, NULL), RMC_OK);
    assert_int_equal(c.nrows, 1);
    assert_true(c.ncols == wide && c.nnz == 1 && c.val[0] == 4.0);
    assert_true(((int64_t *)c.colind)[0] == wide - 1);
    rmc_csr_free(&c);
    rmc_csr_free(&d);
    /* the other kinds grow with the row: the product works */
    assert_int_equal(rmc_csr_spgemm(&c, &a, &b, RMC_SPA_HASH, NULL), RMC_OK);
    assert_true(c.nnz == 3 && c.val[0] == 2.0 && c.val[1] == 3.0 && c.val[2] == 4.0);
    rmc_csr_free(&c);
    rmc_csr_free(&a);
    rmc_csr_free(&b);
}

static void test_spgemm_overflow(void **state)
{
    (void)state;
    const int64_t n = 46341;
    rmc_csr_t a, b, c;
    assert_int_equal(rmc_csr_alloc(&a, n, 1, n, 0), RMC_OK);
    assert_int_equal(rmc_csr_alloc(&b, 1, n, n, 0), RMC_OK);
    for (int64_t i = 0; i < n; i++) {
        ((int32_t *)a.rowptr)[i + 1] = (int32_t)(i + 1);
        ((int32_t *)a.colind)[i] = 0;
        ((int32_t *)b.colind)[i] = (int32_t)i;
        a.val[i] = b.val[i] = 1;
    }
    ((int32_t *)b.rowptr)[1] = (int32_t)n;
    double fl = 3;
    ASSERT_ERR(rmc_csr_spgemm(&c, &a, &b, RMC_SPA_AUTO, &fl), RMC_ERR_TOO_BIG,
               "the result has 2147488281 nonzeros");
    tu_assert_empty(&c);
    assert_true(fl == 3); /* untouched on error */
    /* the transposed product is 1 x 1 */
    assert_int_equal(rmc_csr_spgemm(&c, &b, &a, RMC_SPA_HEAP, &fl), RMC_OK);
    assert_int_equal(c.nnz, 1);
    assert_true(c.val[0] == (double)n);
    assert_true(fl == 3 + 2.0 * (double)n);
    rmc_csr_free(&c);
    rmc_csr_free(&a);
    rmc_csr_free(&b);
}

/* ------------------------------------------------------------------------- sums --- */

static void test_sum(void **state)
{
    (void)state;
    enum { M = 20, N = 15 };
    rmc_csr_t in[4];
    const rmc_csr_t *pin[4];
    for (int intvals = 0; intvals < 2; intvals++) {
        for (int j = 0; j < 4; j++) {
            tu_random(&in[j], M, N, 0.1 + 0.15 * j, 0.2, 300 + (uint64_t)(j + 4 * intvals),
                      (j + intvals) & 1, intvals);
            pin[j] = &in[j];
        }
        for (int n = 1; n <= 4; n++) {
            /* reference: triplets of in[0], then in[1], ...: summed in that order */
            int64_t r[4 * M * N], cc[4 * M * N], t = 0;
            double v[4 * M * N];
            for (int j = 0; j < n; j++)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t p = rmc_csr_rowptr(&in[j], i); p < rmc_csr_rowptr(&in[j], i + 1);
                         p++) {
                        r[t] = i;
                        cc[t] = rmc_csr_colind(&in[j], p);
                        v[t++] = in[j].val[p];
                    }
            rmc_csr_t ref, c;
            assert_int_equal(rmc_csr_from_coo(&ref, M, N, t, r, cc, v, 1, 1), RMC_OK);
            for (int q = 0; q < NKINDS; q++) {
                assert_int_equal(rmc_csr_sum(&c, pin, n, kinds[q]), RMC_OK);
                assert_int_equal(c.idx64, in[0].idx64);
                assert_int_equal(rmc_csr_check(&c), RMC_OK);
                if (intvals)
                    tu_assert_same(&c, &ref);
                else
                    tu_assert_close(&c, &ref, 1e-14);
                rmc_csr_free(&c);
            }
            rmc_csr_free(&ref);
        }
        if (intvals)
            break;
        for (int j = 0; j < 4; j++)
            rmc_csr_free(&in[j]);
    }
    rmc_csr_t c, other;
    ASSERT_ERR(rmc_csr_sum(&c, pin, 0, RMC_SPA_HASH), RMC_ERR_ARG, "no summands");
    ASSERT_ERR(rmc_csr_sum(&c, NULL, 2, RMC_SPA_HASH), RMC_ERR_ARG, "no summands");
    ASSERT_ERR(rmc_csr_sum(&in[1], pin, 3, RMC_SPA_HASH), RMC_ERR_ARG, "out is also summand 1");
    ASSERT_ERR(rmc_csr_sum(&c, pin, 3, (rmc_spa_kind_t)-1), RMC_ERR_ARG, "kind -1");
    tu_random(&other, M + 1, N, 0.1, 0, 5, 0, 0);
    const rmc_csr_t *mixed[] = {&in[0], &in[1], &other};
    ASSERT_ERR(rmc_csr_sum(&c, mixed, 3, RMC_SPA_HASH), RMC_ERR_ARG,
               "in[2] is 21 x 15 but in[0] is 20 x 15");
    set_rp(&in[1], 0, 1);
    ASSERT_ERR(rmc_csr_sum(&c, pin, 3, RMC_SPA_HASH), RMC_ERR_FORMAT, "in[1]: rowptr[0] is 1");
    set_rp(&in[1], 0, 0);
    tu_assert_empty(&c);
    rmc_csr_free(&other);
    for (int j = 0; j < 4; j++)
        rmc_csr_free(&in[j]);
}

UNITTEST_MAIN("csr", test_alloc, test_check, test_from_coo, test_copy, test_to_dense, test_slice,
              test_spmm, test_spgemm, test_spgemm_edges, test_spgemm_wide_dense,
              test_spgemm_overflow, test_sum)
