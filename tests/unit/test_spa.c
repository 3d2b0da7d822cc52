/* Sparse accumulators (rmc/csr.h, seed 001 Table 7.3): every kind against a dense reference summed
 * in add order and against each other, over many rows reusing one accumulator (only touched state
 * is reset), with mixed index widths, appended output, cancellation, AUTO's rule, and every error
 * of the interface. One process, no MPI. */
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
#define NKINDS  5
#define KIND(q) ((q) < NKINDS ? kinds[q] : RMC_SPA_AUTO)
#define MAXK    40
#define NC      300

/* An input row: sorted unique columns of either width. */
typedef struct {
    int64_t n;
    int idx64;
    int64_t c64[NC];
    int32_t c32[NC];
    double v[NC];
    double scale;
} row_t;

static void random_row(row_t *r, uint64_t *s, int64_t ncols, double p, int intvals)
{
    r->n = 0;
    r->idx64 = (int)(tu_next(s) & 1);
    for (int64_t c = 0; c < ncols; c++)
        if (tu_unit(s) < p) {
            r->c64[r->n] = c;
            r->c32[r->n] = (int32_t)c;
            r->v[r->n++] = tu_val(s, intvals);
        }
    r->scale = intvals ? (double)(int)(tu_next(s) % 5) - 2 : tu_val(s, 0);
}

static const void *cols_of(const row_t *r)
{
    return r->idx64 ? (const void *)r->c64 : (const void *)r->c32;
}

/* Many rows through one accumulator of each kind: k input rows each (k from 0 to 40, some of
 * them empty), compared with the dense sum in add order. */
static void run_rows(int intvals)
{
    static row_t in[MAXK];
    /* the five kinds over NC columns, and AUTO over 1000 NC columns (which then hashes) */
    rmc_spa_h s[NKINDS + 1];
    int chose[2][NKINDS] = {{0}};
    for (int q = 0; q <= NKINDS; q++)
        assert_int_equal(rmc_spa_create(KIND(q), q < NKINDS ? NC : 1000 * NC, &s[q]), RMC_OK);
    uint64_t rs = 77 + (uint64_t)intvals;
    for (int row = 0; row < 200; row++) {
        int k = row % 7 == 0 ? (int)(tu_next(&rs) % MAXK) + 1 : (int)(tu_next(&rs) % 9);
        double p = row % 3 == 0 ? 0.5 : 0.03;
        int64_t bound = 0;
        for (int j = 0; j < k; j++) {
            random_row(&in[j], &rs, NC, j % 4 == 3 ? 0 : p, intvals);
            bound += in[j].n;
        }
        bound += (int64_t)(tu_next(&rs) % 3) * 10; /* a bound may be loose */
        /* reference: dense, in add order */
        double ref[NC];
        char set[NC];
        memset(set, 0, sizeof set);
        for (int j = 0; j < k; j++)
            for (int64_t e = 0; e < in[j].n; e++) {
                int64_t c = in[j].c64[e];
                double v = in[j].scale * in[j].v[e];
                ref[c] = set[c] ? ref[c] + v : v;
                set[c] = 1;
            }
        for (int q = 0; q <= NKINDS; q++) {
            int ow = (row + q) & 1;
            /* output appended after 3 entries already there (sentinels) */
            int64_t oc64[NC + 3], n = -1;
            int32_t oc32[NC + 3];
            double ov[NC + 3];
            oc64[2] = oc32[2] = -9;
            ov[2] = -99;
            assert_int_equal(rmc_spa_begin(s[q], bound), RMC_OK);
            for (int j = 0; j < k; j++)
                assert_int_equal(rmc_spa_add_row(s[q], in[j].scale, cols_of(&in[j]), in[j].v,
                                                 in[j].n, in[j].idx64),
                                 RMC_OK);
            assert_int_equal(
                rmc_spa_end(s[q], ow ? (void *)(oc64 + 3) : (void *)(oc32 + 3), ov + 3, &n, ow),
                RMC_OK);
            assert_true(oc64[2] == -9 && oc32[2] == -9 && ov[2] == -99);
            if (q >= NKINDS - 1)
                chose[q - NKINDS + 1][rmc_spa_chosen(s[q])]++;
            int64_t w = 0;
            for (int64_t c = 0; c < NC; c++) {
                if (!set[c])
                    continue;
                assert_true(w < n);
                assert_int_equal(ow ? oc64[3 + w] : oc32[3 + w], c);
                double x = ov[3 + w];
                if (intvals || KIND(q) != RMC_SPA_KWAY)
                    assert_memory_equal(&x, &ref[c], sizeof x); /* same order, same bits */
                else
                    assert_true(fabs(x - ref[c]) <= 1e-13 * (1 + fabs(ref[c])));
                w++;
            }
            assert_int_equal(n, w);
        }
    }
    for (int q = 0; q <= NKINDS; q++)
        rmc_spa_destroy(s[q]);
    /* both AUTOs went every way their shapes allow */
    assert_true(chose[0][RMC_SPA_HEAP] > 10 && chose[0][RMC_SPA_DENSE] > 10);
    assert_true(chose[1][RMC_SPA_HEAP] > 10 && chose[1][RMC_SPA_HASH] > 10);
    assert_true(chose[0][RMC_SPA_AUTO] > 0); /* empty rows */
}

static void test_kinds_real(void **state)
{
    (void)state;
    run_rows(0);
}

static void test_kinds_int(void **state)
{
    (void)state;
    run_rows(1);
}

/* Contributions that cancel leave an explicit zero; a lone row is copied scaled. */
static void test_cancel(void **state)
{
    (void)state;
    const int32_t c[] = {3, 5};
    const double v[] = {1.5, 2};
    for (int q = 0; q < NKINDS; q++) {
        rmc_spa_h s;
        int64_t oc[4], n;
        double ov[4];
        assert_int_equal(rmc_spa_create(kinds[q], 8, &s), RMC_OK);
        assert_int_equal(rmc_spa_begin(s, 4), RMC_OK);
        assert_int_equal(rmc_spa_add_row(s, 2, c, v, 2, 0), RMC_OK);
        assert_int_equal(rmc_spa_add_row(s, -2, c, v, 1, 0), RMC_OK);
        assert_int_equal(rmc_spa_end(s, oc, ov, &n, 1), RMC_OK);
        assert_int_equal(n, 2);
        assert_true(oc[0] == 3 && ov[0] == 0.0 && oc[1] == 5 && ov[1] == 4.0);
        assert_int_equal(rmc_spa_begin(s, 2), RMC_OK);
        assert_int_equal(rmc_spa_add_row(s, -1, c, v, 2, 0), RMC_OK);
        assert_int_equal(rmc_spa_end(s, oc, ov, &n, 1), RMC_OK);
        assert_true(n == 2 && ov[0] == -1.5 && ov[1] == -2);
        assert_int_equal(rmc_spa_begin(s, 0), RMC_OK); /* an empty row */
        assert_int_equal(rmc_spa_end(s, NULL, NULL, &n, 0), RMC_OK);
        assert_int_equal(n, 0);
        rmc_spa_destroy(s);
    }
}

/* AUTO's rule, observed through rmc_spa_chosen: HEAP for k <= 2 rows, DENSE up to 2^17 columns
 * or when the row's b contributions are at least ncols / 16, HASH otherwise; the others report
 * themselves. */
static void test_auto_rule(void **state)
{
    (void)state;
    static int64_t cols[3000];
    static double vals[3000];
    for (int i = 0; i < 3000; i++) {
        cols[i] = 3 * i;
        vals[i] = 1;
    }
    const struct {
        int64_t ncols;
        int k, len;
        rmc_spa_kind_t want;
    } cs[] = {
        {3000, 1, 10, RMC_SPA_HEAP},     {3000, 2, 100, RMC_SPA_HEAP},
        {3000, 3, 10, RMC_SPA_DENSE},    {131072, 9, 10, RMC_SPA_DENSE},
        {131073, 9, 10, RMC_SPA_HASH},   {200000, 5, 2500, RMC_SPA_DENSE}, /* 16 * 12500 */
        {200016, 5, 2500, RMC_SPA_HASH}, {(int64_t)1 << 25, 9, 1000, RMC_SPA_HASH},
    };
    int64_t *oc = malloc(20000 * sizeof(int64_t));
    double *ov = malloc(20000 * sizeof(double));
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        rmc_spa_h s;
        int64_t n;
        assert_int_equal(rmc_spa_create(RMC_SPA_AUTO, cs[t].ncols, &s), RMC_OK);
        assert_int_equal(rmc_spa_chosen(s), RMC_SPA_AUTO);
        assert_int_equal(rmc_spa_begin(s, (int64_t)cs[t].k * cs[t].len), RMC_OK);
        for (int j = 0; j < cs[t].k; j++)
            assert_int_equal(rmc_spa_add_row(s, 1, cols + j, vals, cs[t].len, 1), RMC_OK);
        assert_int_equal(rmc_spa_end(s, oc, ov, &n, 1), RMC_OK);
        if (rmc_spa_chosen(s) != cs[t].want)
            fail_msg("case %zu: AUTO chose %d, want %d", t, (int)rmc_spa_chosen(s),
                     (int)cs[t].want);
        /* rows shifted by one column each: overlapping, the sums are the overlap counts */
        assert_int_equal(n, cs[t].k == 1 ? cs[t].len : cs[t].len + cs[t].k - 1);
        int64_t total = 0;
        for (int64_t e = 0; e < n; e++) {
            assert_int_equal(oc[e], 3 * e);
            total += (int64_t)ov[e];
        }
        assert_int_equal(total, (int64_t)cs[t].k * cs[t].len);
        assert_int_equal(rmc_spa_begin(s, 0), RMC_OK);
        assert_int_equal(rmc_spa_end(s, oc, ov, &n, 1), RMC_OK);
        assert_int_equal(rmc_spa_chosen(s), RMC_SPA_AUTO); /* an empty row */
        rmc_spa_destroy(s);
    }
    for (int q = 0; q < 4; q++) {
        rmc_spa_h s;
        assert_int_equal(rmc_spa_create(kinds[q], 10, &s), RMC_OK);
        assert_int_equal(rmc_spa_chosen(s), kinds[q]);
        rmc_spa_destroy(s);
    }
    assert_int_equal(rmc_spa_chosen(NULL), RMC_SPA_AUTO);
    free(oc);
    free(ov);
}

static void test_errors(void **state)
{
    (void)state;
    rmc_spa_h s = (rmc_spa_h)&s;
    ASSERT_ERR(rmc_spa_create(RMC_SPA_HASH, 10, NULL), RMC_ERR_ARG, "s is NULL");
    ASSERT_ERR(rmc_spa_create((rmc_spa_kind_t)7, 10, &s), RMC_ERR_ARG, "kind 7");
    assert_null(s);
    ASSERT_ERR(rmc_spa_create(RMC_SPA_HEAP, -1, &s), RMC_ERR_ARG, "ncols = -1");
    ASSERT_ERR(rmc_spa_create(RMC_SPA_DENSE, INT64_MAX, &s), RMC_ERR_NOMEM,
               "dense accumulator of 9223372036854775807 columns");
    rmc_spa_destroy(NULL);
    for (int q = 0; q < NKINDS; q++) {
        const int32_t c[] = {1, 4, 6}, unsorted[] = {6, 4}, dup[] = {4, 4}, out[] = {1, 10};
        const int64_t neg[] = {-1};
        const double v[] = {1, 2, 3};
        int64_t oc[8], n = -5;
        double ov[8];
        assert_int_equal(rmc_spa_create(kinds[q], 10, &s), RMC_OK);
        ASSERT_ERR(rmc_spa_add_row(s, 1, c, v, 3, 0), RMC_ERR_STATE, "no row begun");
        ASSERT_ERR(rmc_spa_end(s, oc, ov, &n, 1), RMC_ERR_STATE, "no row begun");
        ASSERT_ERR(rmc_spa_begin(NULL, 3), RMC_ERR_ARG, "s is NULL");
        ASSERT_ERR(rmc_spa_begin(s, -3), RMC_ERR_ARG, "bound = -3");
        assert_int_equal(rmc_spa_begin(s, 5), RMC_OK);
        ASSERT_ERR(rmc_spa_begin(s, 5), RMC_ERR_STATE, "a row is open");
        assert_int_equal(rmc_spa_add_row(s, 1, c, v, 3, 0), RMC_OK);
        /* refused rows change nothing */
        ASSERT_ERR(rmc_spa_add_row(s, 1, c, v, 3, 0), RMC_ERR_ARG,
                   "3 more entries exceed the row's bound 5 (3 added already)");
        ASSERT_ERR(rmc_spa_add_row(s, 1, unsorted, v, 2, 0), RMC_ERR_FORMAT,
                   "entry 1: column 4 after column 6");
        ASSERT_ERR(rmc_spa_add_row(s, 1, dup, v, 2, 0), RMC_ERR_FORMAT,
                   "entry 1: column 4 after column 4");
        ASSERT_ERR(rmc_spa_add_row(s, 1, out, v, 2, 0), RMC_ERR_ARG,
                   "entry 1: column 10 out of range [0, 10)");
        ASSERT_ERR(rmc_spa_add_row(s, 1, neg, v, 1, 1), RMC_ERR_ARG, "column -1 out of range");
        ASSERT_ERR(rmc_spa_add_row(s, 1, NULL, v, 1, 1), RMC_ERR_ARG, "cols is NULL");
        ASSERT_ERR(rmc_spa_add_row(s, 1, c, v, -1, 1), RMC_ERR_ARG, "n = -1");
        ASSERT_ERR(rmc_spa_add_row(s, 1, c, v, 1, 2), RMC_ERR_ARG, "idx64 is 2");
        ASSERT_ERR(rmc_spa_end(s, oc, ov, NULL, 1), RMC_ERR_ARG, "n is NULL");
        ASSERT_ERR(rmc_spa_end(s, NULL, ov, &n, 1), RMC_ERR_ARG, "cols is NULL");
        assert_int_equal(rmc_spa_add_row(s, 1, c, v, 2, 0), RMC_OK); /* the bound, exactly */
        /* the row holds c + c[0..1] = {1: 2, 4: 4, 6: 3} */
        assert_int_equal(rmc_spa_end(s, oc, ov, &n, 1), RMC_OK);
        assert_int_equal(n, 3);
        assert_true(oc[0] == 1 && ov[0] == 2 && oc[1] == 4 && ov[1] == 4 && oc[2] == 6 &&
                    ov[2] == 3);
        rmc_spa_destroy(s);
    }
    /* 32-bit output of an accumulator wider than INT32_MAX: refused, the row stays open */
    const int64_t big[] = {2999999999LL};
    const double one[] = {1};
    int64_t oc[1], n;
    double ov[1];
    int32_t oc32[1];
    assert_int_equal(rmc_spa_create(RMC_SPA_HASH, 3000000000LL, &s), RMC_OK);
    assert_int_equal(rmc_spa_begin(s, 1), RMC_OK);
    assert_int_equal(rmc_spa_add_row(s, 1, big, one, 1, 1), RMC_OK);
    ASSERT_ERR(rmc_spa_end(s, oc32, ov, &n, 0), RMC_ERR_TOO_BIG, "32-bit output columns");
    assert_int_equal(rmc_spa_end(s, oc, ov, &n, 1), RMC_OK);
    assert_true(n == 1 && oc[0] == 2999999999LL);
    rmc_spa_destroy(s);
}

UNITTEST_MAIN("spa", test_kinds_real, test_kinds_int, test_cancel, test_auto_rule, test_errors)
