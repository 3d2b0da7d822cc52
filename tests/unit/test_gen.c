/* Generators (rmc/csr.h): R-MAT and Erdős–Rényi are deterministic from their seed, their row-range
 * parts stacked are the whole matrix, R-MAT's quadrant probabilities and degree skew hold, G(n,
 * p)'s density and column spread are within statistical bounds, cost follows nnz (a 1 x 3e9
 * matrix), and bad arguments are refused. One process, no MPI. */
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

#define SEED_A 0.6
#define SEED_B (0.4 / 3)

static int64_t row_nnz(const rmc_csr_t *a, int64_t i)
{
    return rmc_csr_rowptr(a, i + 1) - rmc_csr_rowptr(a, i);
}

/* Some entry or the structure differs. */
static int differ(const rmc_csr_t *a, const rmc_csr_t *b)
{
    if (a->nnz != b->nnz)
        return 1;
    for (int64_t k = 0; k < a->nnz; k++)
        if (rmc_csr_colind(a, k) != rmc_csr_colind(b, k) || a->val[k] != b->val[k])
            return 1;
    return 0;
}

/* The parts [cuts[t], cuts[t + 1]) of a generator equal the slices of the whole. */
typedef rmc_status_t (*gen_fn)(rmc_csr_t *out, int64_t r0, int64_t r1, int idx64, void *ctx);

static void check_parts(gen_fn gen, void *ctx, int64_t nrows, const int64_t *cuts, int ncuts)
{
    for (int w = 0; w < 2; w++) {
        rmc_csr_t whole;
        assert_int_equal(gen(&whole, 0, nrows, w, ctx), RMC_OK);
        assert_int_equal(rmc_csr_check(&whole), RMC_OK);
        assert_int_equal(whole.nrows, nrows);
        int64_t total = 0;
        for (int t = 0; t + 1 < ncuts; t++) {
            rmc_csr_t part, sl;
            assert_int_equal(gen(&part, cuts[t], cuts[t + 1], w, ctx), RMC_OK);
            assert_int_equal(rmc_csr_check(&part), RMC_OK);
            assert_int_equal(rmc_csr_slice(&sl, &whole, cuts[t], cuts[t + 1], 0, whole.ncols),
                             RMC_OK);
            tu_assert_same(&part, &sl);
            total += part.nnz;
            rmc_csr_free(&part);
            rmc_csr_free(&sl);
        }
        assert_int_equal(total, whole.nnz);
        rmc_csr_free(&whole);
    }
}

/* ------------------------------------------------------------------------ R-MAT --- */

typedef struct {
    int scale, ef;
    double a, b, c;
    uint64_t seed;
} rmat_t;

static rmc_status_t rmat_gen(rmc_csr_t *out, int64_t r0, int64_t r1, int idx64, void *ctx)
{
    rmat_t *p = ctx;
    return rmc_csr_rmat(out, p->scale, p->ef, p->a, p->b, p->c, p->seed, r0, r1, idx64);
}

static void test_rmat_basic(void **state)
{
    (void)state;
    rmc_csr_t a, b, c, d;
    const int64_t n = 256;
    assert_int_equal(rmc_csr_rmat(&a, 8, 8, SEED_A, SEED_B, SEED_B, 1, 0, n, 0), RMC_OK);
    assert_int_equal(rmc_csr_rmat(&b, 8, 8, SEED_A, SEED_B, SEED_B, 1, 0, n, 0), RMC_OK);
    assert_int_equal(rmc_csr_rmat(&c, 8, 8, SEED_A, SEED_B, SEED_B, 1, 0, n, 1), RMC_OK);
    assert_int_equal(rmc_csr_rmat(&d, 8, 8, SEED_A, SEED_B, SEED_B, 2, 0, n, 0), RMC_OK);
    assert_int_equal(rmc_csr_check(&a), RMC_OK);
    assert_true(a.nrows == n && a.ncols == n && a.idx64 == 0 && c.idx64 == 1);
    assert_true(a.nnz > 0 && a.nnz <= 8 * n); /* duplicates summed */
    double sum = 0;
    for (int64_t k = 0; k < a.nnz; k++) {
        assert_true(a.val[k] > 0);
        sum += a.val[k];
    }
    /* every edge value is in (0, 1], mean 1/2: the sum of the 2048 edges' values */
    assert_true(fabs(sum - 1024) < 80);
    tu_assert_same(&a, &b); /* the same seed, the same matrix */
    tu_assert_same(&a, &c); /* whatever the index width */
    assert_true(differ(&a, &d));
    rmc_csr_free(&a);
    rmc_csr_free(&b);
    rmc_csr_free(&c);
    rmc_csr_free(&d);
    /* scale 0: one cell */
    assert_int_equal(rmc_csr_rmat(&a, 0, 5, SEED_A, SEED_B, SEED_B, 1, 0, 1, 0), RMC_OK);
    assert_true(a.nrows == 1 && a.ncols == 1 && a.nnz == 1 && a.val[0] > 0 && a.val[0] <= 5);
    rmc_csr_free(&a);
}

static void test_rmat_parts(void **state)
{
    (void)state;
    rmat_t p = {9, 8, SEED_A, SEED_B, SEED_B, 77};
    const int64_t cuts[] = {0, 1, 37, 100, 100, 256, 511, 512};
    check_parts(rmat_gen, &p, 512, cuts, 8);
    rmat_t u = {7, 4, 0.25, 0.25, 0.25, 5};
    const int64_t cuts2[] = {0, 64, 128};
    check_parts(rmat_gen, &u, 128, cuts2, 3);
}

/* The quadrant probabilities: at scale 1 each edge lands in one of four cells with probability
 * a, b, c, d; each cell's value sum is half its edge count on average. */
static void test_rmat_quadrants(void **state)
{
    (void)state;
    const double pa = 0.6, pb = 0.1, pc = 0.2, pd = 0.1, e = 100000;
    rmc_csr_t a;
    assert_int_equal(rmc_csr_rmat(&a, 1, 50000, pa, pb, pc, 9, 0, 2, 0), RMC_OK);
    assert_int_equal(a.nnz, 4);
    double d[4], want[4] = {pa, pb, pc, pd};
    for (int k = 0; k < 4; k++)
        d[rmc_csr_colind(&a, k) + 2 * (k >= rmc_csr_rowptr(&a, 1))] = a.val[k];
    for (int q = 0; q < 4; q++)
        if (fabs(d[q] / (0.5 * e) - want[q]) > 0.05 * want[q])
            fail_msg("cell %d: %g of the edges, want %g", q, d[q] / (0.5 * e), want[q]);
    rmc_csr_free(&a);
}

/* Degree skew (seed 001's a = 0.6): row 0 is the heaviest, the top half of the rows holds about
 * a + b = 73% of the edges; with a = b = c = d every half holds about half. */
static void test_rmat_skew(void **state)
{
    (void)state;
    rmc_csr_t a;
    const int64_t n = 1024;
    assert_int_equal(rmc_csr_rmat(&a, 10, 16, SEED_A, SEED_B, SEED_B, 3, 0, n, 0), RMC_OK);
    int64_t top = 0, bottom = 0, maxr = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = row_nnz(&a, i);
        *(i < n / 2 ? &top : &bottom) += r;
        if (r > maxr)
            maxr = r;
    }
    assert_int_equal(row_nnz(&a, 0), maxr);
    assert_true(row_nnz(&a, 0) > 3 * row_nnz(&a, n - 1) + 10);
    assert_true(top > 1.5 * (double)bottom);
    rmc_csr_free(&a);
    assert_int_equal(rmc_csr_rmat(&a, 10, 16, 0.25, 0.25, 0.25, 3, 0, n, 0), RMC_OK);
    top = bottom = 0;
    for (int64_t i = 0; i < n; i++)
        *(i < n / 2 ? &top : &bottom) += row_nnz(&a, i);
    double f = (double)top / (double)(top + bottom);
    assert_true(f > 0.45 && f < 0.55);
    rmc_csr_free(&a);
}

static void test_rmat_errors(void **state)
{
    (void)state;
    rmc_csr_t a;
    const double B = SEED_B;
    ASSERT_ERR(rmc_csr_rmat(NULL, 4, 4, 0.6, B, B, 1, 0, 16, 0), RMC_ERR_ARG, "out is NULL");
    ASSERT_ERR(rmc_csr_rmat(&a, 4, 4, NAN, B, B, 1, 0, 16, 0), RMC_ERR_ARG, "a = nan");
    ASSERT_ERR(rmc_csr_rmat(&a, 4, 4, 0.6, -0.1, B, 1, 0, 16, 0), RMC_ERR_ARG, "b = -0.1");
    ASSERT_ERR(rmc_csr_rmat(&a, 4, 4, 0.6, 0.3, 0.3, 1, 0, 16, 0), RMC_ERR_ARG, "a + b + c = 1.2");
    ASSERT_ERR(rmc_csr_rmat(&a, -1, 4, 0.6, B, B, 1, 0, 16, 0), RMC_ERR_ARG, "scale -1");
    ASSERT_ERR(rmc_csr_rmat(&a, 63, 4, 0.6, B, B, 1, 0, 16, 1), RMC_ERR_ARG, "scale 63");
    ASSERT_ERR(rmc_csr_rmat(&a, 4, -4, 0.6, B, B, 1, 0, 16, 0), RMC_ERR_ARG, "edge_factor -4");
    ASSERT_ERR(rmc_csr_rmat(&a, 4, 4, 0.6, B, B, 1, 0, 17, 0), RMC_ERR_ARG,
               "rows [0, 17) not within [0, 16]");
    ASSERT_ERR(rmc_csr_rmat(&a, 4, 4, 0.6, B, B, 1, 5, 4, 0), RMC_ERR_ARG, "rows [5, 4)");
    ASSERT_ERR(rmc_csr_rmat(&a, 4, 4, 0.6, B, B, 1, 0, 16, 2), RMC_ERR_ARG, "idx64 is 2");
    ASSERT_ERR(rmc_csr_rmat(&a, 31, 1, 0.6, B, B, 1, 0, 0, 0), RMC_ERR_TOO_BIG,
               "scale 31: 2^31 rows do not fit 32-bit indices");
    ASSERT_ERR(rmc_csr_rmat(&a, 62, 3, 0.6, B, B, 1, 0, 0, 1), RMC_ERR_TOO_BIG,
               "edge_factor 3 * 2^62 edges overflow");
    tu_assert_empty(&a);
    /* 64-bit: 2^31 columns, no rows asked for, no edges */
    assert_int_equal(rmc_csr_rmat(&a, 31, 0, 0.6, B, B, 1, 0, 0, 1), RMC_OK);
    assert_true(a.nrows == 0 && a.ncols == (int64_t)1 << 31 && a.nnz == 0);
    rmc_csr_free(&a);
}

/* ------------------------------------------------------------------ Erdős–Rényi --- */

typedef struct {
    int64_t m, n;
    double p;
    uint64_t seed;
} er_t;

static rmc_status_t er_gen(rmc_csr_t *out, int64_t r0, int64_t r1, int idx64, void *ctx)
{
    er_t *e = ctx;
    return rmc_csr_erdos_renyi(out, e->m, e->n, e->p, e->seed, r0, r1, idx64);
}

static void test_er(void **state)
{
    (void)state;
    rmc_csr_t a, b, c;
    const int64_t m = 200, n = 300;
    assert_int_equal(rmc_csr_erdos_renyi(&a, m, n, 0.05, 11, 0, m, 0), RMC_OK);
    assert_int_equal(rmc_csr_erdos_renyi(&b, m, n, 0.05, 11, 0, m, 1), RMC_OK);
    assert_int_equal(rmc_csr_erdos_renyi(&c, m, n, 0.05, 12, 0, m, 0), RMC_OK);
    assert_int_equal(rmc_csr_check(&a), RMC_OK);
    tu_assert_same(&a, &b);
    assert_true(differ(&a, &c));
    /* nnz ~ Binomial(60000, 0.05): mean 3000, sd 53; half of them in each half of the columns */
    assert_true(llabs(a.nnz - 3000) < 6 * 53);
    int64_t left = 0, maxrow = 0;
    for (int64_t i = 0; i < m; i++)
        if (row_nnz(&a, i) > maxrow)
            maxrow = row_nnz(&a, i);
    for (int64_t k = 0; k < a.nnz; k++) {
        left += rmc_csr_colind(&a, k) < n / 2;
        assert_true(a.val[k] > 0 && a.val[k] <= 1);
    }
    assert_true(fabs((double)left - (double)a.nnz / 2) < 6 * sqrt((double)a.nnz) / 2);
    assert_true(maxrow < 45); /* a row: Binomial(300, 0.05), mean 15, sd 3.8 */
    rmc_csr_free(&a);
    rmc_csr_free(&b);
    rmc_csr_free(&c);
    /* a dense row: 1 x 100000 at p = 0.3: mean 30000, sd 145 */
    assert_int_equal(rmc_csr_erdos_renyi(&a, 1, 100000, 0.3, 5, 0, 1, 0), RMC_OK);
    assert_true(llabs(a.nnz - 30000) < 6 * 145);
    rmc_csr_free(&a);
    /* p = 0 and p = 1 */
    assert_int_equal(rmc_csr_erdos_renyi(&a, 7, 9, 0.0, 5, 0, 7, 0), RMC_OK);
    assert_true(a.nrows == 7 && a.ncols == 9 && a.nnz == 0);
    rmc_csr_free(&a);
    assert_int_equal(rmc_csr_erdos_renyi(&a, 7, 9, 1.0, 5, 0, 7, 1), RMC_OK);
    assert_int_equal(a.nnz, 63);
    for (int64_t k = 0; k < 63; k++)
        assert_int_equal(rmc_csr_colind(&a, k), k % 9);
    rmc_csr_free(&a);
    /* the parts */
    er_t e = {150, 90, 0.1, 99};
    const int64_t cuts[] = {0, 1, 50, 50, 149, 150};
    check_parts(er_gen, &e, 150, cuts, 6);
}

/* Geometric skipping: the cost follows the nonzeros, not the size. */
static void test_er_big(void **state)
{
    (void)state;
    rmc_csr_t a;
    ASSERT_ERR(rmc_csr_erdos_renyi(&a, 1, 3000000000LL, 1e-9, 1, 0, 1, 0), RMC_ERR_TOO_BIG,
               "a 1 x 3000000000 matrix does not fit 32-bit indices");
    tu_assert_empty(&a);
    assert_int_equal(rmc_csr_erdos_renyi(&a, 1, 3000000000LL, 1e-8, 1, 0, 1, 1), RMC_OK);
    assert_true(a.nnz > 5 && a.nnz < 80); /* mean 30 */
    assert_true(rmc_csr_colind(&a, a.nnz - 1) < 3000000000LL);
    assert_int_equal(rmc_csr_check(&a), RMC_OK);
    rmc_csr_free(&a);
    /* five rows of a 10^12 x 10^12 matrix */
    const int64_t t = 1000000000000LL;
    assert_int_equal(rmc_csr_erdos_renyi(&a, t, t, 1e-11, 1, 5, 10, 1), RMC_OK);
    assert_true(a.nrows == 5 && a.ncols == t && a.nnz < 200);
    rmc_csr_free(&a);
}

static void test_er_errors(void **state)
{
    (void)state;
    rmc_csr_t a;
    ASSERT_ERR(rmc_csr_erdos_renyi(&a, 5, 5, NAN, 1, 0, 5, 0), RMC_ERR_ARG, "p = nan");
    ASSERT_ERR(rmc_csr_erdos_renyi(&a, 5, 5, 1.5, 1, 0, 5, 0), RMC_ERR_ARG, "p = 1.5");
    ASSERT_ERR(rmc_csr_erdos_renyi(&a, 5, 5, -0.5, 1, 0, 5, 0), RMC_ERR_ARG, "p = -0.5");
    ASSERT_ERR(rmc_csr_erdos_renyi(&a, -5, 5, 0.5, 1, 0, 0, 0), RMC_ERR_ARG, "negative size");
    ASSERT_ERR(rmc_csr_erdos_renyi(&a, 5, 5, 0.5, 1, 0, 6, 0), RMC_ERR_ARG,
               "rows [0, 6) not within [0, 5]");
    ASSERT_ERR(rmc_csr_erdos_renyi(&a, 5, 5, 0.5, 1, 0, 5, 9), RMC_ERR_ARG, "idx64 is 9");
    ASSERT_ERR(rmc_csr_erdos_renyi(NULL, 5, 5, 0.5, 1, 0, 5, 0), RMC_ERR_ARG, "out is NULL");
    tu_assert_empty(&a);
}

UNITTEST_MAIN("gen", test_rmat_basic, test_rmat_parts, test_rmat_quadrants, test_rmat_skew,
              test_rmat_errors, test_er, test_er_big, test_er_errors)
