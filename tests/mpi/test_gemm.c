/* Distributed multiplication (rmc_matrix_gemm, _patch): every algorithm against a serial reference
 * on square, rectangular and ragged shapes, tile-divisible or not, with A, B and C on different
 * distributions (the sliced multiply), transposes and complex conjugates, patches, beta 0 over a C
 * holding NaNs, both update paths of the stationary-A/B variants and work stealing, matrices of a
 * subset of the ranks (owner computes, two subsets at once); the statistics' time split and bytes,
 * AUTO's choice; bad input
 * fails on every rank alike and changes nothing. Relative error bound: 1e-12 (double), 1e-4
 * (float). */
#include "cttest.h"
#include <complex.h>
#include <math.h>
#include <rmc/matrix.h>

static const rmc_gemm_algo_t algos[] = {RMC_GEMM_AUTO,         RMC_GEMM_STATIONARY_C,
                                        RMC_GEMM_STATIONARY_A, RMC_GEMM_STATIONARY_B,
                                        RMC_GEMM_STEAL_RANDOM, RMC_GEMM_STEAL_LOCAL};
#define NALGO (int)(sizeof(algos) / sizeof(algos[0]))

/* Element (i, j) of test matrix `which` (complex: the imaginary part too). */
static double ev(int which, int64_t i, int64_t j)
{
    return (double)(((i * 31 + j * 17 + which * 7) % 23) - 11) / 8.0;
}
static double evi(int which, int64_t i, int64_t j)
{
    return (double)(((i * 13 + j * 29 + which * 5) % 19) - 9) / 16.0;
}

/* Pattern `which` as a rows x cols row-major buffer of type e (malloc'd). */
static char *pattern(rmc_elem_t e, int64_t rows, int64_t cols, int which)
{
    char *buf = malloc((size_t)(rows * cols) * rmc_elem_size(e) + 1);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            size_t at = (size_t)(i * cols + j);
            double re = ev(which, i, j), im = evi(which, i, j);
            if (e == RMC_ELEM_F64)
                ((double *)(void *)buf)[at] = re;
            else if (e == RMC_ELEM_F32)
                ((float *)(void *)buf)[at] = (float)re;
            else if (e == RMC_ELEM_C64)
                ((double complex *)(void *)buf)[at] = re + I * im;
            else
                ((float complex *)(void *)buf)[at] = (float)re + I * (float)im;
        }
    return buf;
}

/* A rows x cols matrix of type e on distribution kind `dk`, filled with pattern `which` (each
 * rank writes its own tiles through a whole-matrix put on rank 0 only: simple). */
static rmc_matrix_h make(rmc_elem_t e, int dk, int64_t rows, int64_t cols, int which)
{
    rmc_dist_h d = NULL;
    switch (dk) {
    case 0:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_RECT, rows, cols, 0, &d), RMC_OK);
        break;
    case 1:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_OPT, rows, cols, 9, &d), RMC_OK);
        break;
    case 2:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_ROW, rows, cols, 5, &d), RMC_OK);
        break;
    case 3:
        assert_int_equal(rmc_dist_2d(RMC_BLOCK_COLUMN, rows, cols, 0, &d), RMC_OK);
        break;
    default: {
        int64_t dims[2] = {rows, cols}, b[2] = {4, 6};
        assert_int_equal(rmc_dist_round_robin(2, dims, b, &d), RMC_OK);
    }
    }
    rmc_matrix_h m;
    assert_int_equal(rmc_matrix_create(d, e, &m), RMC_OK);
    rmc_dist_free(d);
    int ok = 1;
    if (me == 0) {
        char *buf = pattern(e, rows, cols, which);
        int64_t lo[2] = {0, 0}, hi[2] = {rows, cols};
        ok = rmc_matrix_put(m, lo, hi, buf, NULL) == RMC_OK;
        free(buf);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    return m;
}

/* op(X)(i, j) of the pattern (complex double arithmetic for every type). */
static double complex opv(int which, char t, int cplx, int64_t i, int64_t j)
{
    int64_t r = t == 'N' ? i : j, c = t == 'N' ? j : i;
    double complex v = ev(which, r, c) + (cplx ? I * evi(which, r, c) : 0);
    return t == 'C' ? conj(v) : v;
}

/* Checks C[clo, chi) against alpha op(A) op(B) + beta C0 computed serially from the patterns
 * (A: pattern 1 at alo, B: pattern 2 at blo, C0: pattern 3), every rank reading all of C. */
static int check(rmc_matrix_h c, rmc_elem_t e, char ta, char tb, double complex alpha,
                 double complex beta, const int64_t alo[2], const int64_t blo[2],
                 const int64_t clo[2], const int64_t chi[2], int64_t k, int c0_nan)
{
    int cplx = e == RMC_ELEM_C32 || e == RMC_ELEM_C64;
    double tol = e == RMC_ELEM_F32 || e == RMC_ELEM_C32 ? 1e-4 : 1e-12;
    int64_t m = chi[0] - clo[0], n = chi[1] - clo[1];
    size_t es = rmc_elem_size(e);
    char *got = malloc((size_t)(m * n) * es + 1);
    if (rmc_matrix_get(c, clo, chi, got, NULL) != RMC_OK) {
        free(got);
        return 0;
    }
    int ok = 1;
    for (int64_t i = 0; i < m && ok; i++)
        for (int64_t j = 0; j < n && ok; j++) {
            double complex s = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double complex x = opv(1, ta, cplx, alo[ta == 'N' ? 0 : 1] + i,
                                       alo[ta == 'N' ? 1 : 0] + p),
                               y = opv(2, tb, cplx, blo[tb == 'N' ? 0 : 1] + p,
                                       blo[tb == 'N' ? 1 : 0] + j);
                s += x * y;
                mag += cabs(x * y);
            }
            double complex c0 =
                ev(3, clo[0] + i, clo[1] + j) + (cplx ? I * evi(3, clo[0] + i, clo[1] + j) : 0);
            double complex want = alpha * s + (beta != 0 || c0_nan ? beta * c0 : 0);
            if (c0_nan && beta == 0)
                want = alpha * s;
            size_t at = (size_t)(i * n + j);
            double complex v = e == RMC_ELEM_F64   ? ((double *)(void *)got)[at]
                               : e == RMC_ELEM_F32 ? ((float *)(void *)got)[at]
                               : e == RMC_ELEM_C64 ? ((double complex *)(void *)got)[at]
                                                   : ((float complex *)(void *)got)[at];
            double scale = cabs(alpha) * cabs(mag) + cabs(beta) * cabs(c0) + 1;
            if (!(cabs(v - want) <= tol * scale)) {
                fprintf(stderr, "[rank %d] C(%lld, %lld) = %g%+gi, want %g%+gi\n", me, (long long)i,
                        (long long)j, creal(v), cimag(v), creal(want), cimag(want));
                ok = 0;
            }
        }
    free(got);
    return ok;
}

/* One multiplication of the whole matrices: shapes (m, n, k), distributions (da, db, dc), every
 * algorithm. */
static void whole(rmc_elem_t e, int64_t m, int64_t n, int64_t k, int da, int db, int dc, char ta,
                  char tb)
{
    rmc_matrix_h A = make(e, da, ta == 'N' ? m : k, ta == 'N' ? k : m, 1);
    rmc_matrix_h B = make(e, db, tb == 'N' ? k : n, tb == 'N' ? n : k, 2);
    int64_t z[2] = {0, 0}, full[2] = {m, n};
    for (int a = 0; a < NALGO; a++) {
        rmc_matrix_h C = make(e, dc, m, n, 3);
        double complex alpha = 1.5 - (e >= RMC_ELEM_C32 ? 0.5 * I : 0), beta = -0.75;
        char al[16], be[16];
        if (e == RMC_ELEM_F64) {
            double x = creal(alpha), y = creal(beta);
            memcpy(al, &x, 8);
            memcpy(be, &y, 8);
        } else if (e == RMC_ELEM_F32) {
            float x = (float)creal(alpha), y = (float)creal(beta);
            memcpy(al, &x, 4);
            memcpy(be, &y, 4);
        } else if (e == RMC_ELEM_C64) {
            memcpy(al, &alpha, 16);
            memcpy(be, &beta, 16);
        } else {
            float complex x = (float complex)alpha, y = (float complex)beta;
            memcpy(al, &x, 8);
            memcpy(be, &y, 8);
        }
        rmc_gemm_stats_t st;
        rmc_status_t s = rmc_matrix_gemm(ta, tb, al, A, B, be, C, algos[a], &st);
        int ok = s == RMC_OK;
        if (!ok)
            fprintf(stderr, "[rank %d] gemm %s: %s (%s)\n", me, rmc_gemm_algo_name(algos[a]),
                    rmc_status_string(s), rmc_last_error());
        if (e == RMC_ELEM_F32 || e == RMC_ELEM_F64)
            alpha = creal(alpha), beta = creal(beta);
        ok = ok && check(C, e, ta, tb, alpha, beta, z, z, z, full, k, 0);
        if (!ok)
            fprintf(stderr, "[rank %d] %s, %lldx%lldx%lld, dists %d %d %d, %c%c, type %d\n", me,
                    rmc_gemm_algo_name(algos[a]), (long long)m, (long long)n, (long long)k, da, db,
                    dc, ta, tb, (int)e);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_ALL(algos[a] == RMC_GEMM_AUTO || st.algo == algos[a]);
        MPI_CHECK_OK(rmc_matrix_destroy(C));
    }
    MPI_CHECK_OK(rmc_matrix_destroy(A));
    MPI_CHECK_OK(rmc_matrix_destroy(B));
}

/* With 4 ranks on 2 cores every collective costs milliseconds: the first case of each group only.
 */
static int few(void)
{
    return np >= 4;
}

static void test_square(void **s)
{
    (void)s;
    whole(RMC_ELEM_F64, 24, 24, 24, 1, 1, 1, 'N', 'N'); /* several tiles per rank */
    if (!few())
        whole(RMC_ELEM_F64, 24, 24, 24, 0, 0, 0, 'N', 'N');
}

static void test_ragged_mixed(void **s)
{
    (void)s;
    whole(RMC_ELEM_F64, 29, 17, 23, 1, 2, 3, 'N', 'N'); /* three distributions, ragged */
    if (few())
        return;
    whole(RMC_ELEM_F64, 13, 31, 7, 4, 0, 1, 'N', 'N'); /* round-robin A */
    whole(RMC_ELEM_F64, 1, 9, 30, 0, 1, 2, 'N', 'N');  /* a single row */
    whole(RMC_ELEM_F64, 21, 1, 1, 2, 3, 0, 'N', 'N');  /* k = 1, one column */
}

static void test_transposes(void **s)
{
    (void)s;
    whole(RMC_ELEM_F64, 19, 22, 15, 1, 2, 0, 'T', 'N');
    if (few()) {
        whole(RMC_ELEM_C64, 14, 11, 9, 1, 0, 2, 'C', 'T');
        return;
    }
    whole(RMC_ELEM_F64, 19, 22, 15, 3, 1, 2, 'N', 'T');
    whole(RMC_ELEM_F32, 20, 16, 18, 1, 1, 1, 'T', 'T');
    whole(RMC_ELEM_C64, 14, 11, 9, 1, 0, 2, 'C', 'N');
    whole(RMC_ELEM_C32, 10, 12, 8, 2, 1, 1, 'N', 'C');
}

/* The other update paths for the variants that send partial blocks: the owners' queues
 * (RMC_GEMM_UPDATE=queue) and K partial copies of C (=copies). */
static void test_update_queue(void **s)
{
    (void)s;
    setenv("RMC_GEMM_UPDATE", "queue", 1);
    whole(RMC_ELEM_F64, 26, 19, 21, 1, 1, 2, 'N', 'N');
    if (!few())
        whole(RMC_ELEM_C64, 12, 12, 12, 1, 2, 1, 'N', 'T');
    setenv("RMC_GEMM_UPDATE", "copies", 1);
    whole(RMC_ELEM_F64, 23, 17, 20, 1, 2, 1, 'N', 'N');
    if (!few())
        whole(RMC_ELEM_F32, 14, 15, 16, 4, 1, 2, 'T', 'N');
    unsetenv("RMC_GEMM_UPDATE");
}

/* SUMMA: one tile per process on one grid; patches; beta 0 over NaNs. */
static void test_summa_patch_beta0(void **s)
{
    (void)s;
    int64_t ma[2] = {30, 20}, mb[2] = {20, 25}, mc[2] = {30, 25};
    int g[2];
    int64_t sq[2] = {1, 1};
    assert_int_equal(rmc_dist_pgrid(2, sq, np, g), RMC_OK);
    rmc_dist_h da, db, dc;
    MPI_CHECK_OK(rmc_dist_regular(2, ma, NULL, g, &da));
    MPI_CHECK_OK(rmc_dist_regular(2, mb, NULL, g, &db));
    MPI_CHECK_OK(rmc_dist_regular(2, mc, NULL, g, &dc));
    rmc_matrix_h A, B, C;
    MPI_CHECK_OK(rmc_matrix_create(da, RMC_ELEM_F64, &A));
    MPI_CHECK_OK(rmc_matrix_create(db, RMC_ELEM_F64, &B));
    MPI_CHECK_OK(rmc_matrix_create(dc, RMC_ELEM_F64, &C));
    rmc_dist_free(da);
    rmc_dist_free(db);
    rmc_dist_free(dc);
    int ok = 1;
    if (me == 0) { /* the patterns; C holds NaN where the patch goes */
        double *a = malloc(30 * 25 * sizeof(double));
        int64_t z[2] = {0, 0};
        for (int w = 1; w <= 3; w++) {
            int64_t *dims = w == 1 ? ma : w == 2 ? mb : mc;
            for (int64_t i = 0; i < dims[0]; i++)
                for (int64_t j = 0; j < dims[1]; j++)
                    a[i * dims[1] + j] = w == 3 ? NAN : ev(w, i, j);
            ok &= rmc_matrix_put(w == 1 ? A : w == 2 ? B : C, z, dims, a, NULL) == RMC_OK;
        }
        free(a);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    double one = 1, zero = 0;
    rmc_gemm_stats_t st;
    MPI_CHECK_OK(rmc_matrix_gemm('N', 'N', &one, A, B, &zero, C, RMC_GEMM_SUMMA, &st));
    int64_t z[2] = {0, 0};
    MPI_CHECK_ALL(check(C, RMC_ELEM_F64, 'N', 'N', 1, 0, z, z, z, mc, 20, 1));
    MPI_CHECK_ALL(st.algo == RMC_GEMM_SUMMA && st.flops >= 0);
    /* every algorithm and every way of sending partial blocks: beta = 0 ignores C (NaN stays out;
     * C * 0 would keep it) */
    const char *updates[] = {"acc", "queue", "copies"};
    for (int u = 0; u < 3; u++)
        for (int a = 0; a < NALGO; a++) {
            if (me == 0) {
                double *c = malloc(30 * 25 * sizeof(double));
                for (int i = 0; i < 30 * 25; i++)
                    c[i] = NAN;
                int64_t z0[2] = {0, 0};
                ok = rmc_matrix_put(C, z0, mc, c, NULL) == RMC_OK;
                free(c);
            }
            MPI_CHECK_ALL(ok);
            MPI_CHECK_OK(rmc_barrier());
            setenv("RMC_GEMM_UPDATE", updates[u], 1);
            rmc_status_t gs = rmc_matrix_gemm('N', 'N', &one, A, B, &zero, C, algos[a], NULL);
            unsetenv("RMC_GEMM_UPDATE");
            MPI_CHECK_OK(gs);
            int64_t z1[2] = {0, 0};
            ok = check(C, RMC_ELEM_F64, 'N', 'N', 1, 0, z1, z1, z1, mc, 20, 1);
            if (!ok)
                fprintf(stderr, "[rank %d] beta 0 over NaN, %s, update %s\n", me,
                        rmc_gemm_algo_name(algos[a]), updates[u]);
            MPI_CHECK_ALL(ok);
        }
    /* a patch product: C[3:13, 5:20] = 2 A[2:12, 4:11] B[6:13, 1:16] + 0.5 C */
    int64_t alo[2] = {2, 4}, ahi[2] = {12, 11}, blo[2] = {6, 1}, bhi[2] = {13, 16};
    int64_t clo[2] = {3, 5}, chi[2] = {13, 20};
    double two = 2, half = 0.5;
    for (int a = 0; a < NALGO; a++) { /* each algorithm on C's pattern 3 */
        if (me == 0) {
            double *c = malloc(30 * 25 * sizeof(double));
            for (int64_t i = 0; i < 30; i++)
                for (int64_t j = 0; j < 25; j++)
                    c[i * 25 + j] = ev(3, i, j);
            ok = rmc_matrix_put(C, z, mc, c, NULL) == RMC_OK;
            free(c);
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(rmc_matrix_gemm_patch('N', 'N', &two, A, alo, ahi, B, blo, bhi, &half, C, clo,
                                           chi, algos[a], NULL));
        ok = check(C, RMC_ELEM_F64, 'N', 'N', 2, 0.5, alo, blo, clo, chi, 7, 0);
        if (!ok)
            fprintf(stderr, "[rank %d] patch product, %s\n", me, rmc_gemm_algo_name(algos[a]));
        MPI_CHECK_ALL(ok);
    }
    /* the patch form never touches C outside the patch */
    double cval = 0;
    int64_t outside[2] = {0, 0};
    MPI_CHECK_ALL(rmc_matrix_elem_get(C, outside, &cval) == RMC_OK && cval == ev(3, 0, 0));
    MPI_CHECK_OK(rmc_matrix_destroy(A));
    MPI_CHECK_OK(rmc_matrix_destroy(B));
    MPI_CHECK_OK(rmc_matrix_destroy(C));
}

/* A rows x cols F64 matrix filled with x: RMC_BLOCK_SQUARE tiles of `tile`, RMC_BLOCK_RECT
 * (tile 0) or all on rank 0 (tile < 0). */
static rmc_matrix_h make_fill(int64_t rows, int64_t cols, int64_t tile, double x)
{
    rmc_dist_h d = NULL;
    int64_t dims[2] = {rows, cols};
    int pg[2] = {1, 1};
    if (tile < 0)
        assert_int_equal(rmc_dist_regular(2, dims, NULL, pg, &d), RMC_OK);
    else
        assert_int_equal(
            rmc_dist_2d(tile ? RMC_BLOCK_SQUARE : RMC_BLOCK_RECT, rows, cols, tile, &d), RMC_OK);
    rmc_matrix_h m;
    assert_int_equal(rmc_matrix_create(d, RMC_ELEM_F64, &m), RMC_OK);
    rmc_dist_free(d);
    MPI_CHECK_OK(rmc_matrix_fill(m, &x));
    return m;
}

/* The time split: compute + comm wait + accumulate + imbalance are disjoint parts of the total, so
 * they come to it on every rank for every algorithm and both update methods (acc, queue; they
 * used to leave the waits of stationary A / B and stealing out: 0% on a rank without work, and
 * to count the queue's draining twice: 145%); a rank with no work spends most of its total as
 * imbalance; the bytes moved (summed over the ranks) are the same for both methods (the queue's
 * were counted at both ends). Percentages, not times: no sum can exceed the total whatever the
 * load (checked on every run), while a rank descheduled outside the timed parts can fall short
 * (each configuration is retried a few times: one run must come to 80%). */
static void test_stats_split(void **s)
{
    (void)s;
    static const rmc_gemm_algo_t al[] = {RMC_GEMM_STATIONARY_C, RMC_GEMM_STATIONARY_A,
                                         RMC_GEMM_STATIONARY_B, RMC_GEMM_STEAL_RANDOM,
                                         RMC_GEMM_STEAL_LOCAL,  RMC_GEMM_SUMMA};
    static const char *const method[] = {"acc", "queue"};
    const int64_t N = 256;
    double one = 1, zero = 0;
    /* square tiles of 64 (several per rank), one tile per rank (SUMMA), all on rank 0 */
    rmc_matrix_h A = make_fill(N, N, 64, 1), B = make_fill(N, N, 64, 2), C = make_fill(N, N, 64, 0);
    rmc_matrix_h Ar = make_fill(N, N, 0, 1), Br = make_fill(N, N, 0, 2), Cr = make_fill(N, N, 0, 0);
    rmc_matrix_h A0 = make_fill(N, N, -1, 1), B0 = make_fill(N, N, -1, 2);
    rmc_matrix_h C0 = make_fill(N, N, -1, 0);
    double bytes[2][3] = {{0}}; /* [method][stationary A, B] summed over the ranks */
    for (int idle = 0; idle < 2; idle++)
        for (int q = 0; q < (int)(sizeof(al) / sizeof(al[0])); q++) {
            if (idle && (al[q] == RMC_GEMM_STEAL_RANDOM || al[q] == RMC_GEMM_STEAL_LOCAL))
                continue; /* (the others steal rank 0's work) */
            for (int mth = 0; mth < 2; mth++) {
                setenv("RMC_GEMM_UPDATE", method[mth], 1);
                rmc_matrix_h a = idle ? A0 : al[q] == RMC_GEMM_SUMMA ? Ar : A;
                rmc_matrix_h b = idle ? B0 : al[q] == RMC_GEMM_SUMMA ? Br : B;
                rmc_matrix_h c = idle ? C0 : al[q] == RMC_GEMM_SUMMA ? Cr : C;
                int good = 0;
                for (int tries = 0; !good && tries < 6; tries++) {
                    rmc_gemm_stats_t st;
                    MPI_CHECK_OK(rmc_matrix_gemm('N', 'N', &one, a, b, &zero, c, al[q], &st));
                    double parts = st.compute + st.comm_wait + st.accumulate + st.imbalance;
                    /* never more than the total (disjoint parts; 1 us for rounding) */
                    int over = parts > 1.05 * st.total + 1e-6;
                    /* a whole: at least 80%; an idle rank (not 0): mostly imbalance */
                    int mine = parts >= 0.8 * st.total &&
                               (!idle || me == 0 || st.imbalance >= 0.5 * st.total);
                    if (over || !mine)
                        fprintf(stderr,
                                "[rank %d] %s %s%s: total %.6f compute %.6f wait %.6f acc %.6f "
                                "imbalance %.6f: parts %.0f%%\n",
                                me, rmc_gemm_algo_name(al[q]), method[mth], idle ? " idle" : "",
                                st.total, st.compute, st.comm_wait, st.accumulate, st.imbalance,
                                100 * parts / st.total);
                    MPI_CHECK_ALL(!over);
                    MPI_Allreduce(&mine, &good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                    int ab = al[q] == RMC_GEMM_STATIONARY_A   ? 0
                             : al[q] == RMC_GEMM_STATIONARY_B ? 1
                                                              : -1;
                    if (!idle && ab >= 0 && tries == 0)
                        MPI_Allreduce(&st.bytes, &bytes[mth][ab], 1, MPI_DOUBLE, MPI_SUM,
                                      MPI_COMM_WORLD);
                }
                MPI_CHECK_ALL(good);
            }
        }
    unsetenv("RMC_GEMM_UPDATE");
    for (int ab = 0; ab < 2; ab++) {
        if (bytes[0][ab] != bytes[1][ab])
            fprintf(stderr, "[rank %d] stationary %c: bytes %.0f (acc) against %.0f (queue)\n", me,
                    "AB"[ab], bytes[0][ab], bytes[1][ab]);
        MPI_CHECK_ALL(bytes[0][ab] == bytes[1][ab]);
    }
    rmc_matrix_h ms[] = {A, B, C, Ar, Br, Cr, A0, B0, C0};
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
        MPI_CHECK_OK(rmc_matrix_destroy(ms[i]));
}

/* RMC_GEMM_AUTO runs the stationary variant that moves the least data (the bytes of the
 * statistics, summed over the ranks; ties: C, A, B), on a tall-skinny shape (it used to pick
 * stationary A from the whole matrices' sizes: 3 times stationary C's bytes with
 * RMC_NODE_SIZE=1, and with every rank on one node, where nothing moves, A over C) and a square
 * one. */
static void test_auto_least(void **s)
{
    (void)s;
    static const int64_t shape[][3] = {{256, 8, 256}, {96, 96, 96}, {8, 256, 256}};
    static const rmc_gemm_algo_t al[] = {RMC_GEMM_STATIONARY_C, RMC_GEMM_STATIONARY_A,
                                         RMC_GEMM_STATIONARY_B};
    double one = 1, zero = 0;
    for (int q = 0; q < 3; q++) {
        int64_t m = shape[q][0], n = shape[q][1], k = shape[q][2];
        rmc_matrix_h A = make_fill(m, k, 0, 1), B = make_fill(k, n, 0, 2),
                     C = make_fill(m, n, 0, 0);
        double v[3], vauto, mine;
        rmc_gemm_stats_t st;
        for (int x = 0; x < 3; x++) {
            MPI_CHECK_OK(rmc_matrix_gemm('N', 'N', &one, A, B, &zero, C, al[x], &st));
            mine = st.bytes;
            MPI_Allreduce(&mine, &v[x], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        MPI_CHECK_OK(rmc_matrix_gemm('N', 'N', &one, A, B, &zero, C, RMC_GEMM_AUTO, &st));
        mine = st.bytes;
        MPI_Allreduce(&mine, &vauto, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        int best = v[0] <= v[1] && v[0] <= v[2] ? 0 : v[1] <= v[2] ? 1 : 2;
        if (st.algo != al[best] || vauto != v[best])
            fprintf(stderr,
                    "[rank %d] %lldx%lldx%lld: AUTO ran %s (%.0f bytes); C %.0f, A %.0f, B %.0f\n",
                    me, (long long)m, (long long)n, (long long)k, rmc_gemm_algo_name(st.algo),
                    vauto, v[0], v[1], v[2]);
        MPI_CHECK_ALL(st.algo == al[best] && vauto == v[best]);
        MPI_CHECK_OK(rmc_matrix_destroy(A));
        MPI_CHECK_OK(rmc_matrix_destroy(B));
        MPI_CHECK_OK(rmc_matrix_destroy(C));
    }
}

static void test_bad_input(void **s)
{
    (void)s;
    rmc_matrix_h A = make(RMC_ELEM_F64, 1, 10, 8, 1), B = make(RMC_ELEM_F64, 1, 7, 6, 2);
    rmc_matrix_h C = make(RMC_ELEM_F64, 0, 10, 6, 3), F = make(RMC_ELEM_F32, 0, 8, 6, 2);
    double one = 1;
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, A, B, &one, C, 0, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_matrix_gemm('X', 'N', &one, A, B, &one, C, 0, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, A, F, &one, C, 0, NULL) == RMC_ERR_TYPE);
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', NULL, A, B, &one, C, 0, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, A, B, &one, C, (rmc_gemm_algo_t)42, NULL) ==
                  RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, A, B, &one, NULL, 0, NULL) == RMC_ERR_HANDLE);
    rmc_matrix_h S = make(RMC_ELEM_F64, 1, 10, 10, 1);
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, S, S, &one, S, 0, NULL) == RMC_ERR_ARG);
    /* ranks that disagree on the update path: refused on every rank, C unchanged */
    if (np > 1) {
        setenv("RMC_GEMM_UPDATE", me ? "acc" : "queue", 1);
        MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, C, F, &one, B, RMC_GEMM_STATIONARY_A, NULL) ==
                      RMC_ERR_TYPE); /* (types checked first) */
        rmc_matrix_h B2 = make(RMC_ELEM_F64, 1, 6, 6, 2);
        MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, C, B2, &one, C, RMC_GEMM_STATIONARY_A,
                                      NULL) == RMC_ERR_ARG); /* (C is A) */
        rmc_matrix_h C2 = make(RMC_ELEM_F64, 0, 10, 6, 3);
        MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, C, B2, &one, C2, RMC_GEMM_STATIONARY_A,
                                      NULL) == RMC_ERR_ARG);
        unsetenv("RMC_GEMM_UPDATE");
        MPI_CHECK_OK(rmc_matrix_destroy(B2));
        MPI_CHECK_OK(rmc_matrix_destroy(C2));
    }
    /* SUMMA on tiles that are not one per process */
    rmc_matrix_h A2 = make(RMC_ELEM_F64, 1, 10, 7, 1);
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, A2, B, &one, C, RMC_GEMM_SUMMA, NULL) ==
                  RMC_ERR_UNSUPPORTED);
    MPI_CHECK_ALL(strstr(rmc_last_error(), "tiles on") != NULL &&
                  strstr(rmc_last_error(), "than one tile per process") != NULL);
    /* fewer tiles than processes (1 x 1 on a grid of np): said so, with the operand and the
     * dimension (it was called "more than one tile per process") */
    if (np > 1) {
        rmc_matrix_h T1 = make(RMC_ELEM_F64, 0, 1, 1, 1), T2 = make(RMC_ELEM_F64, 0, 1, 1, 2);
        rmc_matrix_h T3 = make(RMC_ELEM_F64, 0, 1, 1, 3);
        MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, T1, T2, &one, T3, RMC_GEMM_SUMMA, NULL) ==
                      RMC_ERR_UNSUPPORTED);
        if (!strstr(rmc_last_error(), "A's dimension 0 in 1 tiles on") ||
            !strstr(rmc_last_error(), "fewer than one tile per process"))
            fprintf(stderr, "[rank %d] %s\n", me, rmc_last_error());
        MPI_CHECK_ALL(strstr(rmc_last_error(), "A's dimension 0 in 1 tiles on") != NULL &&
                      strstr(rmc_last_error(), "fewer than one tile per process") != NULL);
        MPI_CHECK_OK(rmc_matrix_destroy(T1));
        MPI_CHECK_OK(rmc_matrix_destroy(T2));
        MPI_CHECK_OK(rmc_matrix_destroy(T3));
    }
    /* a patch outside the matrix */
    int64_t lo[2] = {0, 0}, hi[2] = {11, 7}, bhi[2] = {7, 6}, chi[2] = {11, 6};
    MPI_CHECK_ALL(rmc_matrix_gemm_patch('N', 'N', &one, A2, lo, hi, B, lo, bhi, &one, C, lo, chi, 0,
                                        NULL) == RMC_ERR_BOUNDS);
    /* a reversed patch is a bad argument (as in rmc_matrix_get) */
    int64_t rlo[2] = {5, 0}, rhi[2] = {4, 7}, b76[2] = {7, 6};
    MPI_CHECK_ALL(rmc_matrix_gemm_patch('N', 'N', &one, A2, rlo, rhi, B, lo, b76, &one, C, lo, chi,
                                        0, NULL) == RMC_ERR_ARG);
    /* ranks that pass different patches of the same shapes (each rank's own checks pass), or a
     * different alpha: refused on every rank (they hung, waiting for tiles never sent) */
    if (np > 1) {
        int x = me == 0;
        int64_t p0[2] = {0, 0}, a0[2] = {x, 0}, a1[2] = {6 + x, 7}, a6[2] = {6, 7};
        int64_t b6[2] = {7, 6}, b5[2] = {7, 5}, c6[2] = {6, 6}, c0[2] = {0, x}, c1[2] = {6, 5 + x};
        double al = x ? 2 : 1;
        /* A rows [x, 6 + x) */
        MPI_CHECK_ALL(rmc_matrix_gemm_patch('N', 'N', &one, A2, a0, a1, B, p0, b6, &one, C, p0, c6,
                                            RMC_GEMM_STATIONARY_C, NULL) == RMC_ERR_ARG);
        MPI_CHECK_ALL(strstr(rmc_last_error(), "different arguments") != NULL);
        /* C columns [x, 5 + x) */
        MPI_CHECK_ALL(rmc_matrix_gemm_patch('N', 'N', &one, A2, p0, a6, B, p0, b5, &one, C, c0, c1,
                                            RMC_GEMM_STATIONARY_A, NULL) == RMC_ERR_ARG);
        /* alpha */
        MPI_CHECK_ALL(rmc_matrix_gemm_patch('N', 'N', &al, A2, p0, a6, B, p0, b6, &one, C, p0, c6,
                                            RMC_GEMM_STATIONARY_B, NULL) == RMC_ERR_ARG);
    }
    /* an update path the ranks disagree on, or that does not exist, with beta != 1: refused
     * before C is scaled (C unchanged: checked below) */
    double half = 0.5;
    for (int k = 0; k < 2; k++) {
        if (k == 0 && np < 2)
            continue;
        setenv("RMC_GEMM_UPDATE", k ? "acc " : me ? "acc" : "copies", 1);
        MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, A2, B, &half, C, RMC_GEMM_STATIONARY_A,
                                      NULL) == RMC_ERR_ARG);
        MPI_CHECK_ALL(strstr(rmc_last_error(), "RMC_GEMM_UPDATE") != NULL);
        unsetenv("RMC_GEMM_UPDATE");
    }
    /* integer matrices do not multiply */
    rmc_dist_h d;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_RECT, 4, 4, 0, &d));
    rmc_matrix_h X;
    MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_I32, &X));
    rmc_dist_free(d);
    rmc_matrix_h Y;
    MPI_CHECK_OK(rmc_dist_2d(RMC_BLOCK_RECT, 4, 4, 0, &d));
    MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_I32, &Y));
    rmc_dist_free(d);
    int32_t ione = 1;
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &ione, X, X, &ione, Y, 0, NULL) == RMC_ERR_TYPE);
    /* C unchanged by every refused call */
    int64_t z[2] = {0, 0}, full[2] = {10, 6};
    MPI_CHECK_ALL(check(C, RMC_ELEM_F64, 'N', 'N', 0, 1, z, z, z, full, 0, 0));
    rmc_matrix_h ms[] = {A, B, C, F, S, A2, X, Y};
    for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
        MPI_CHECK_OK(rmc_matrix_destroy(ms[i]));
}

/* A rows x cols matrix of pattern `which` on the ranks of `sub` (ranks[0 .. nsub - 1] in RMC's
 * numbering), tiles of a regular grid `pg` (a nsub x 1 or 1 x nsub grid); sub's rank 0 writes
 * it. */
static rmc_matrix_h make_sub_bc(rmc_elem_t e, MPI_Comm sub, const int *ranks, int nsub,
                                const int pg[2], const int64_t *block, int64_t rows, int64_t cols,
                                int which)
{
    int64_t dims[2] = {rows, cols};
    rmc_dist_h d;
    rmc_matrix_h m = NULL;
    int ok = (block ? rmc_dist_round_robin(2, dims, block, &d)
                    : rmc_dist_regular(2, dims, NULL, pg, &d)) == RMC_OK &&
             rmc_dist_set_ranks(d, ranks, nsub) == RMC_OK &&
             rmc_matrix_create_comm(sub, d, e, &m) == RMC_OK;
    rmc_dist_free(d);
    int sr;
    MPI_Comm_rank(sub, &sr);
    if (ok && sr == 0) {
        char *buf = pattern(e, rows, cols, which);
        int64_t lo[2] = {0, 0};
        ok = rmc_matrix_put(m, lo, dims, buf, NULL) == RMC_OK && rmc_fence_all() == RMC_OK;
        free(buf);
    }
    MPI_Barrier(sub);
    return ok ? m : NULL;
}
static rmc_matrix_h make_sub(rmc_elem_t e, MPI_Comm sub, const int *ranks, int nsub,
                             const int pg[2], int64_t rows, int64_t cols, int which)
{
    return make_sub_bc(e, sub, ranks, nsub, pg, NULL, rows, cols, which);
}

/* Matrices of a subset of the ranks (rmc_matrix_create_comm): the even and the odd ranks each
 * multiply their own matrices at the same time (owner computes over the subset), A, B and C on
 * different grids with ragged tiles, whole and patch forms, transposes and conjugates, and an empty
 * inner dimension (C = beta C); a subset A with C of all ranks is refused on every rank. */
static void test_subset(void **s)
{
    (void)s;
    MPI_Comm world, sub;
    MPI_CHECK_OK(rmc_comm(&world));
    int color = np > 1 ? me % 2 : 0, nsub = 0, ok = 1;
    MPI_Comm_split(world, color, me, &sub);
    int *ranks = malloc(sizeof(int) * (size_t)np);
    for (int r = 0; r < np; r++)
        if ((np > 1 ? r % 2 : 0) == color)
            ranks[nsub++] = r;
    int col[2] = {nsub, 1}, row[2] = {1, nsub};
    struct {
        rmc_elem_t e;
        char ta, tb;
        int64_t m, n, k;
        int patch;
    } cs[] = {{RMC_ELEM_F64, 'N', 'N', 13, 11, 9, 0},  {RMC_ELEM_F64, 'T', 'N', 10, 7, 12, 1},
              {RMC_ELEM_C64, 'C', 'T', 9, 8, 11, 0},   {RMC_ELEM_C64, 'N', 'C', 7, 9, 5, 1},
              {RMC_ELEM_F64, 'N', 'N', 6, 5, 0, 1}};
    for (size_t c = 0; c < sizeof(cs) / sizeof(cs[0]) && ok; c++) {
        rmc_elem_t e = cs[c].e;
        char ta = cs[c].ta, tb = cs[c].tb;
        int64_t m = cs[c].m, n = cs[c].n, k = cs[c].k, off = cs[c].patch; /* patches at (1, 2) */
        int64_t alo[2] = {off, 2 * off}, blo[2] = {2 * off, off}, clo[2] = {off, off};
        int64_t ar = (ta == 'N' ? m : k) + alo[0] + off, ac = (ta == 'N' ? k : m) + alo[1] + off;
        int64_t br = (tb == 'N' ? k : n) + blo[0] + off, bc = (tb == 'N' ? n : k) + blo[1] + off;
        int64_t ahi[2] = {ar - off, ac - off}, bhi[2] = {br - off, bc - off};
        int64_t chi[2] = {clo[0] + m, clo[1] + n};
        rmc_matrix_h A = make_sub(e, sub, ranks, nsub, col, ar, ac, 1);
        rmc_matrix_h B = make_sub(e, sub, ranks, nsub, row, br, bc, 2);
        rmc_matrix_h C = make_sub(e, sub, ranks, nsub, col, m + 2 * off, n + 2 * off, 3);
        MPITEST_EXPECT(ok, A && B && C);
        double complex alpha = 1.5 - (e == RMC_ELEM_C64 ? 0.5 * I : 0), beta = -0.75;
        rmc_gemm_stats_t st;
        if (A && B && C) {
            rmc_status_t r =
                off ? rmc_matrix_gemm_patch(ta, tb, &alpha, A, alo, ahi, B, blo, bhi, &beta, C,
                                            clo, chi, RMC_GEMM_STATIONARY_A, &st)
                    : rmc_matrix_gemm(ta, tb, &alpha, A, B, &beta, C, RMC_GEMM_AUTO, &st);
            MPITEST_EXPECT(ok, r == RMC_OK && st.algo == RMC_GEMM_STATIONARY_C);
            MPITEST_EXPECT(ok, check(C, e, ta, tb, alpha, beta, alo, blo, clo, chi, k, 0));
            if (off) { /* C outside the patch is as it was */
                double complex c00 = 0;
                int64_t z[2] = {0, 0}, o[2] = {1, 1};
                MPITEST_EXPECT(ok, rmc_matrix_get(C, z, o, &c00, NULL) == RMC_OK);
                MPITEST_EXPECT(ok, (e == RMC_ELEM_F64 ? *(double *)(void *)&c00 : creal(c00)) ==
                                       ev(3, 0, 0));
            }
        }
        MPI_Barrier(sub);
        if (c == 0 && color == 0 && A && C) { /* a 1-D A: refused by one subset alone */
            int64_t len = 10;
            int p1[1] = {nsub};
            rmc_dist_h d1;
            rmc_matrix_h V = NULL;
            MPITEST_EXPECT(ok, rmc_dist_regular(1, &len, NULL, p1, &d1) == RMC_OK &&
                                   rmc_dist_set_ranks(d1, ranks, nsub) == RMC_OK &&
                                   rmc_matrix_create_comm(sub, d1, e, &V) == RMC_OK);
            rmc_dist_free(d1);
            MPITEST_EXPECT(ok, V && rmc_matrix_gemm(ta, tb, &alpha, V, B, &beta, C, 0, NULL) ==
                                        RMC_ERR_ARG);
            MPITEST_EXPECT(ok, V && rmc_matrix_destroy(V) == RMC_OK);
        }
        MPITEST_EXPECT(ok, (!A || rmc_matrix_destroy(A) == RMC_OK) &&
                               (!B || rmc_matrix_destroy(B) == RMC_OK) &&
                               (!C || rmc_matrix_destroy(C) == RMC_OK));
    }
    MPI_CHECK_ALL(ok);
    /* Round-robin tiles of a few elements, a different block on each operand (GA's block-cyclic
     * arrays on a group): each member's tiles share panels, fetched once per chunk of the inner
     * dimension for every run of rows and columns its tiles cover, and used in place */
    for (int c = 0; c < 2; c++) {
        rmc_elem_t e = c ? RMC_ELEM_C64 : RMC_ELEM_F64;
        char ta = c ? 'N' : 'T', tb = c ? 'C' : 'N';
        int64_t m = 23, n = 19, k = 17, off = c; /* c = 1: patches at (1, 2) */
        int64_t alo[2] = {off, 2 * off}, blo[2] = {2 * off, off}, clo[2] = {off, off};
        int64_t ar = (ta == 'N' ? m : k) + alo[0] + off, ac = (ta == 'N' ? k : m) + alo[1] + off;
        int64_t br = (tb == 'N' ? k : n) + blo[0] + off, bc = (tb == 'N' ? n : k) + blo[1] + off;
        int64_t ahi[2] = {ar - off, ac - off}, bhi[2] = {br - off, bc - off};
        int64_t chi[2] = {clo[0] + m, clo[1] + n};
        int64_t ba[2] = {3, 2}, bb[2] = {2, 5}, bcb[2] = {4, 3};
        rmc_matrix_h A = make_sub_bc(e, sub, ranks, nsub, NULL, ba, ar, ac, 1);
        rmc_matrix_h B = make_sub_bc(e, sub, ranks, nsub, NULL, bb, br, bc, 2);
        rmc_matrix_h C = make_sub_bc(e, sub, ranks, nsub, NULL, bcb, m + 2 * off, n + 2 * off, 3);
        MPITEST_EXPECT(ok, A && B && C);
        double complex alpha = 0.5 + (c ? 0.25 * I : 0), beta = 2;
        if (A && B && C) {
            rmc_status_t r = rmc_matrix_gemm_patch(ta, tb, &alpha, A, alo, ahi, B, blo, bhi, &beta,
                                                   C, clo, chi, RMC_GEMM_AUTO, NULL);
            MPITEST_EXPECT(ok, r == RMC_OK);
            MPITEST_EXPECT(ok, check(C, e, ta, tb, alpha, beta, alo, blo, clo, chi, k, 0));
        }
        MPITEST_EXPECT(ok, (!A || rmc_matrix_destroy(A) == RMC_OK) &&
                               (!B || rmc_matrix_destroy(B) == RMC_OK) &&
                               (!C || rmc_matrix_destroy(C) == RMC_OK));
    }
    MPI_CHECK_ALL(ok);
    /* Errors on a subset: a destroyed C fails on its members alone (no collective could meet the
     * other ranks: it hung in one of every rank), and so does its second destruction and a fill;
     * a patch out of range on one member alone: that member's own error, the worst on the others
     * (was "different arguments" everywhere). Then the layer's collectives still work. */
    {
        rmc_matrix_h A = make_sub(RMC_ELEM_F64, sub, ranks, nsub, col, 6, 6, 1);
        rmc_matrix_h B = make_sub(RMC_ELEM_F64, sub, ranks, nsub, row, 6, 6, 2);
        rmc_matrix_h C = make_sub(RMC_ELEM_F64, sub, ranks, nsub, col, 6, 6, 3);
        double one = 1;
        int64_t lo[2] = {0, 0}, hi[2] = {6, 6}, bad[2] = {6, 7};
        int sr;
        MPI_Comm_rank(sub, &sr);
        MPITEST_EXPECT(ok, A && B && C);
        if (A && B && C) {
            rmc_status_t r = rmc_matrix_gemm_patch('N', 'N', &one, A, lo, hi, B, lo, hi, &one, C,
                                                   lo, sr == 0 ? bad : hi, 0, NULL);
            MPITEST_EXPECT(ok, r == RMC_ERR_BOUNDS);
            MPITEST_EXPECT(ok, strstr(rmc_last_error(), sr == 0 ? "rmc_matrix_gemm_patch"
                                                                : "another rank failed") != NULL);
            /* the members name different As of their subset (the collective runs over C's
             * communicator): refused on every member (the subset's matrices used to share one
             * number, and each member multiplied with its own A). (Different Cs cannot be told:
             * each matrix has a communicator of its own, so their collectives never meet.) */
            rmc_matrix_h A2 = make_sub(RMC_ELEM_F64, sub, ranks, nsub, col, 6, 6, 1);
            MPITEST_EXPECT(ok, A2 != NULL);
            if (A2 && nsub > 1) {
                r = rmc_matrix_gemm('N', 'N', &one, sr == 0 ? A : A2, B, &one, C, 0, NULL);
                MPITEST_EXPECT(ok, r == RMC_ERR_ARG &&
                                       strstr(rmc_last_error(), "different arguments") != NULL);
            }
            MPITEST_EXPECT(ok, !A2 || rmc_matrix_destroy(A2) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_matrix_destroy(C) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_matrix_gemm('N', 'N', &one, A, B, &one, C, 0, NULL) ==
                                       RMC_ERR_HANDLE &&
                                   strstr(rmc_last_error(), "destroyed") != NULL);
            MPITEST_EXPECT(ok, rmc_matrix_gemm_patch('N', 'N', &one, A, lo, hi, B, lo, hi, &one,
                                                     C, lo, hi, 0, NULL) == RMC_ERR_HANDLE);
            MPITEST_EXPECT(ok, rmc_matrix_fill(C, &one) == RMC_ERR_HANDLE);
            MPITEST_EXPECT(ok, rmc_matrix_destroy(C) == RMC_ERR_HANDLE);
        }
        MPITEST_EXPECT(ok, (!A || rmc_matrix_destroy(A) == RMC_OK) &&
                               (!B || rmc_matrix_destroy(B) == RMC_OK));
        rmc_matrix_h W = make(RMC_ELEM_F64, 0, 4, 4, 1);
        MPITEST_EXPECT(ok, W && rmc_matrix_destroy(W) == RMC_OK);
    }
    MPI_CHECK_ALL(ok);
    /* A on (a communicator congruent to) every rank but not of all ranks, B and C of all ranks */
    int all[64];
    for (int r = 0; r < np && r < 64; r++)
        all[r] = r;
    int pg[2] = {np, 1};
    rmc_matrix_h A = make_sub(RMC_ELEM_F64, world, all, np, pg, 6, 6, 1);
    rmc_matrix_h B = make(RMC_ELEM_F64, 0, 6, 6, 2), C = make(RMC_ELEM_F64, 0, 6, 6, 3);
    double one = 1;
    MPI_CHECK_ALL(A && rmc_matrix_gemm('N', 'N', &one, A, B, &one, C, 0, NULL) == RMC_ERR_ARG &&
                  strstr(rmc_last_error(), "different ranks") != NULL);
    int64_t z[2] = {0, 0}, six[2] = {6, 6};
    MPI_CHECK_ALL(check(C, RMC_ELEM_F64, 'N', 'N', 0, 1, z, z, z, six, 0, 0));
    MPI_CHECK_OK(rmc_matrix_destroy(A));
    MPI_CHECK_OK(rmc_matrix_destroy(B));
    MPI_CHECK_OK(rmc_matrix_destroy(C));
    MPI_Comm_free(&sub);
    free(ranks);
}

MPITEST_MAIN("gemm", cttest_setup, mpitest_teardown_rmc, test_square, test_ragged_mixed,
             test_transposes, test_update_queue, test_summa_patch_beta0, test_subset,
             test_stats_split, test_auto_least, test_bad_input)
