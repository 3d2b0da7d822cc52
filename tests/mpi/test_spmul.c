/* Sparse multiplication (rmc_spmatrix_spmm, rmc_spmatrix_spgemm): every algorithm against a serial
 * reference on rank 0 (SpMM: the dense product within rounding; SpGEMM: the same structure, values
 * within rounding), R-MAT and Erdős–Rényi inputs with empty tiles, several tile grids (square and
 * rectangular, ragged, block-cyclic, irregular, owners differing between A, B and C), both index
 * widths, both update paths; bad input fails on every rank alike. */
#include "cttest.h"
#include <math.h>
#include <rmc/sparse.h>

static const rmc_gemm_algo_t algos[] = {RMC_GEMM_AUTO,         RMC_GEMM_STATIONARY_C,
                                        RMC_GEMM_STATIONARY_A, RMC_GEMM_STATIONARY_B,
                                        RMC_GEMM_STEAL_RANDOM, RMC_GEMM_STEAL_LOCAL};
#define NALGO (int)(sizeof(algos) / sizeof(algos[0]))

/* A regular distribution of rows x cols with square tiles of `tile` and process grid g (NULL:
 * chosen). */
static rmc_dist_h dist(int64_t rows, int64_t cols, int64_t tile, const int *g)
{
    rmc_dist_h d;
    int64_t dims[2] = {rows, cols}, t[2] = {tile, tile};
    assert_int_equal(rmc_dist_regular(2, dims, t, g, &d), RMC_OK);
    return d;
}

/* An irregular rows x cols distribution: rows split in half (two blocks when there are two
 * ranks), columns whole. */
static rmc_dist_h irregular(int64_t rows, int64_t cols)
{
    int nb[2] = {np >= 2 ? 2 : 1, 1};
    int64_t m[3] = {0, rows / 2, 0}, m1[2] = {0, 0};
    int64_t dims[2] = {rows, cols};
    rmc_dist_h d;
    assert_int_equal(rmc_dist_irregular(2, dims, nb, np >= 2 ? m : m1, &d), RMC_OK);
    return d;
}

/* The whole of s on rank 0 (others: an empty CSR). */
static rmc_csr_t whole(rmc_spmatrix_h s)
{
    rmc_csr_t w;
    rmc_csr_init(&w, rmc_spmatrix_idx64(s));
    MPI_CHECK_OK(rmc_spmatrix_gather(s, 0, me == 0 ? &w : NULL));
    return w;
}

/* A sparse matrix of rows x cols on d: Erdős–Rényi with density p (seed), or R-MAT when rows is a
 * power of two and rmat. */
static rmc_spmatrix_h gen(rmc_dist_h d, int rmat, int scale, double p, uint64_t seed, int idx64)
{
    rmc_spmatrix_h s;
    if (rmat)
        MPI_CHECK_OK(rmc_spmatrix_rmat(d, scale, 4, 0.6, 0.4 / 3, 0.4 / 3, seed, idx64, &s));
    else
        MPI_CHECK_OK(rmc_spmatrix_erdos_renyi(d, p, seed, idx64, &s));
    return s;
}

/* SpMM on A (sparse on da), B (k x n dense on db), C (m x n dense on dc): every algorithm (summa
 * 1: and SUMMA; 2: SUMMA only, A's columns and B's rows split differently). */
static void spmm_case(rmc_spmatrix_h A, rmc_dist_h db, rmc_dist_h dc, int summa)
{
    rmc_dist_h da = rmc_spmatrix_dist(A);
    int64_t dims[2], m, k, n;
    rmc_dist_dims(da, dims);
    m = dims[0], k = dims[1];
    rmc_dist_dims(db, dims);
    n = dims[1];
    rmc_matrix_h B, C;
    MPI_CHECK_OK(rmc_matrix_create(db, RMC_ELEM_F64, &B));
    MPI_CHECK_OK(rmc_matrix_create(dc, RMC_ELEM_F64, &C));
    double *bw = malloc(sizeof(double) * (size_t)(k * n)),
           *c0 = malloc(sizeof(double) * (size_t)(m * n));
    double *got = malloc(sizeof(double) * (size_t)(m * n)),
           *ref = malloc(sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < k * n; i++)
        bw[i] = (double)((i * 37) % 23 - 11) / 7.0;
    for (int64_t i = 0; i < m * n; i++)
        c0[i] = (double)((i * 13) % 17 - 8) / 5.0;
    int64_t z[2] = {0, 0}, bh[2] = {k, n}, ch[2] = {m, n};
    int ok = 1;
    if (me == 0)
        ok = rmc_matrix_put(B, z, bh, bw, NULL) == RMC_OK;
    MPI_CHECK_ALL(ok);
    rmc_csr_t aw = whole(A);
    const double alpha = 1.25, beta = -0.5;
    if (me == 0) { /* the reference: alpha A B + beta C0 */
        for (int64_t i = 0; i < m * n; i++)
            ref[i] = beta * c0[i];
        ok = rmc_csr_spmm(alpha, &aw, bw, n, n, ref, n) == RMC_OK;
    }
    MPI_CHECK_ALL(ok);
    for (int q = summa == 2 ? NALGO : 0; q < NALGO + (summa != 0); q++) {
        rmc_gemm_algo_t al = q < NALGO ? algos[q] : RMC_GEMM_SUMMA;
        if (me == 0)
            ok = rmc_matrix_put(C, z, ch, c0, NULL) == RMC_OK;
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        rmc_gemm_stats_t st;
        rmc_status_t s = rmc_spmatrix_spmm(alpha, A, B, beta, C, al, &st);
        if (s != RMC_OK)
            fprintf(stderr, "[rank %d] spmm %s: %s (%s)\n", me, rmc_gemm_algo_name(al),
                    rmc_status_string(s), rmc_last_error());
        MPI_CHECK_ALL(s == RMC_OK);
        if (me == 0) {
            ok = rmc_matrix_get(C, z, ch, got, NULL) == RMC_OK;
            for (int64_t i = 0; ok && i < m * n; i++)
                if (!(fabs(got[i] - ref[i]) <= 1e-12 * (1 + fabs(ref[i])))) {
                    fprintf(stderr, "[rank 0] spmm %s: C[%lld] = %.17g, want %.17g\n",
                            rmc_gemm_algo_name(al), (long long)i, got[i], ref[i]);
                    ok = 0;
                }
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_ALL(al == RMC_GEMM_AUTO || st.algo == al);
    }
    rmc_csr_free(&aw);
    free(bw);
    free(c0);
    free(got);
    free(ref);
    MPI_CHECK_OK(rmc_matrix_destroy(B));
    MPI_CHECK_OK(rmc_matrix_destroy(C));
}

/* SpGEMM C = A B on C's distribution dc: every algorithm and two accumulators (summa as
 * spmm_case). */
static void spgemm_case(rmc_spmatrix_h A, rmc_spmatrix_h B, rmc_dist_h dc, int summa)
{
    rmc_spmatrix_h C;
    int idx64 = rmc_spmatrix_idx64(A);
    MPI_CHECK_OK(rmc_spmatrix_create(dc, idx64, &C));
    rmc_csr_t aw = whole(A), bw = whole(B), ref;
    rmc_csr_init(&ref, idx64);
    int ok = 1;
    if (me == 0)
        ok = rmc_csr_spgemm(&ref, &aw, &bw, RMC_SPA_DENSE, NULL) == RMC_OK;
    MPI_CHECK_ALL(ok);
    for (int q = summa == 2 ? NALGO : 0; q < NALGO + (summa != 0); q++) {
        rmc_gemm_algo_t al = q < NALGO ? algos[q] : RMC_GEMM_SUMMA;
        rmc_spa_kind_t spa = q % 2 ? RMC_SPA_HASH : RMC_SPA_AUTO;
        rmc_gemm_stats_t st;
        rmc_status_t s = rmc_spmatrix_spgemm(A, B, C, al, spa, &st);
        if (s != RMC_OK)
            fprintf(stderr, "[rank %d] spgemm %s: %s (%s)\n", me, rmc_gemm_algo_name(al),
                    rmc_status_string(s), rmc_last_error());
        MPI_CHECK_ALL(s == RMC_OK);
        rmc_csr_t cw = whole(C);
        if (me == 0) {
            ok = cw.nnz == ref.nnz && cw.nrows == ref.nrows && cw.ncols == ref.ncols;
            for (int64_t i = 0; ok && i <= ref.nrows; i++)
                ok = rmc_csr_rowptr(&cw, i) == rmc_csr_rowptr(&ref, i);
            for (int64_t e = 0; ok && e < ref.nnz; e++)
                ok = rmc_csr_colind(&cw, e) == rmc_csr_colind(&ref, e) &&
                     fabs(cw.val[e] - ref.val[e]) <= 1e-12 * (1 + fabs(ref.val[e]));
            if (!ok)
                fprintf(stderr, "[rank 0] spgemm %s: %lld nonzeros, want %lld (or values differ)\n",
                        rmc_gemm_algo_name(al), (long long)cw.nnz, (long long)ref.nnz);
        }
        rmc_csr_free(&cw);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_ALL(al == RMC_GEMM_AUTO || st.algo == al);
    }
    rmc_csr_free(&aw);
    rmc_csr_free(&bw);
    rmc_csr_free(&ref);
    MPI_CHECK_OK(rmc_spmatrix_destroy(C));
}

static int few(void)
{
    return np >= 4; /* 4 ranks on 2 cores: collectives cost milliseconds */
}

static void test_spmm(void **s)
{
    (void)s;
    /* R-MAT 2^7 square, tiles 32 (block-cyclic over the chosen grid), B 128 x 24 */
    rmc_dist_h da = dist(128, 128, 32, NULL), db = dist(128, 24, 32, NULL), dc;
    rmc_spmatrix_h A = gen(da, 1, 7, 0, 11, 0);
    dc = dist(128, 24, 32, NULL);
    spmm_case(A, db, dc, 0);
    MPI_CHECK_OK(rmc_spmatrix_destroy(A));
    rmc_dist_free(da);
    rmc_dist_free(db);
    rmc_dist_free(dc);
    if (few())
        return;
    /* ER, rectangular and ragged (tiles of 7), 64-bit indices, sparse enough for empty tiles */
    da = dist(45, 38, 7, NULL);
    db = dist(38, 11, 7, NULL);
    dc = dist(45, 11, 7, NULL);
    A = gen(da, 0, 0, 0.02, 5, 1);
    spmm_case(A, db, dc, 0);
    MPI_CHECK_OK(rmc_spmatrix_destroy(A));
    rmc_dist_free(da);
    rmc_dist_free(db);
    rmc_dist_free(dc);
}

/* SUMMA: one tile per process on one grid for A, B and C; irregular distributions. */
static void test_summa_irregular(void **s)
{
    (void)s;
    int g[2];
    int64_t sq[2] = {1, 1};
    assert_int_equal(rmc_dist_pgrid(2, sq, np, g), RMC_OK);
    rmc_dist_h da = dist(64, 64, 0, g), db = dist(64, 20, 0, g), dc = dist(64, 20, 0, g);
    rmc_spmatrix_h A = gen(da, 1, 6, 0, 3, 0);
    spmm_case(A, db, dc, 2);
    rmc_dist_h dd = dist(64, 64, 0, g);
    spgemm_case(A, A, dd, 2);
    MPI_CHECK_OK(rmc_spmatrix_destroy(A));
    rmc_dist_free(da);
    rmc_dist_free(db);
    rmc_dist_free(dc);
    rmc_dist_free(dd);
    if (few())
        return;
    /* A irregular (rows split in half, columns whole), B and C regular tiles that line up */
    rmc_dist_h ia = irregular(50, 40), ib = dist(40, 30, 13, NULL), ic;
    int64_t cd[2] = {50, 30}, ct[2] = {np >= 2 ? 25 : 50, 13};
    MPI_CHECK_OK(rmc_dist_regular(2, cd, ct, NULL, &ic));
    /* (B's rows: one tile of 40, as A's columns) */
    int64_t bd[2] = {40, 30}, bt[2] = {40, 13};
    rmc_dist_free(ib);
    MPI_CHECK_OK(rmc_dist_regular(2, bd, bt, NULL, &ib));
    A = gen(ia, 0, 0, 0.1, 9, 1);
    rmc_spmatrix_h Bs = gen(ib, 0, 0, 0.1, 10, 1);
    spmm_case(A, ib, ic, 0);
    spgemm_case(A, Bs, ic, 0);
    MPI_CHECK_OK(rmc_spmatrix_destroy(A));
    MPI_CHECK_OK(rmc_spmatrix_destroy(Bs));
    rmc_dist_free(ia);
    rmc_dist_free(ib);
    rmc_dist_free(ic);
}

static void test_spgemm(void **s)
{
    (void)s;
    /* A . A for R-MAT 2^7 (the seed's square), tiles 32 */
    rmc_dist_h da = dist(128, 128, 32, NULL);
    rmc_spmatrix_h A = gen(da, 1, 7, 0, 21, 0);
    spgemm_case(A, A, da, 0);
    MPI_CHECK_OK(rmc_spmatrix_destroy(A));
    rmc_dist_free(da);
    if (few())
        return;
    /* rectangular ER A (40 x 30) times B (30 x 25), tiles 9, a different grid for each */
    int g1[2] = {np, 1}, g2[2] = {1, np};
    rmc_dist_h d1 = dist(40, 30, 9, g1), d2 = dist(30, 25, 9, g2), d3 = dist(40, 25, 9, NULL);
    rmc_spmatrix_h X = gen(d1, 0, 0, 0.15, 7, 1), Y = gen(d2, 0, 0, 0.15, 8, 1);
    spgemm_case(X, Y, d3, 0);
    setenv("RMC_GEMM_UPDATE", "queue", 1); /* (SpGEMM always queues; SpMM's other path) */
    spmm_case(X, d2, d3, 0);
    unsetenv("RMC_GEMM_UPDATE");
    MPI_CHECK_OK(rmc_spmatrix_destroy(X));
    MPI_CHECK_OK(rmc_spmatrix_destroy(Y));
    rmc_dist_free(d1);
    rmc_dist_free(d2);
    rmc_dist_free(d3);
}

static void test_bad_input(void **s)
{
    (void)s;
    rmc_dist_h da = dist(20, 20, 5, NULL), db = dist(20, 8, 4, NULL), dc = dist(20, 8, 5, NULL);
    rmc_spmatrix_h A = gen(da, 0, 0, 0.2, 1, 0), A64 = gen(da, 0, 0, 0.2, 1, 1);
    rmc_matrix_h B, C, F;
    MPI_CHECK_OK(rmc_matrix_create(db, RMC_ELEM_F64, &B)); /* rows in tiles of 4: do not line up */
    MPI_CHECK_OK(rmc_matrix_create(dc, RMC_ELEM_F64, &C));
    MPI_CHECK_OK(rmc_matrix_create(dc, RMC_ELEM_F32, &F));
    MPI_CHECK_ALL(rmc_spmatrix_spmm(1, A, B, 0, C, 0, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_spmatrix_spmm(1, A, F, 0, C, 0, NULL) == RMC_ERR_TYPE);
    MPI_CHECK_ALL(rmc_spmatrix_spmm(1, NULL, B, 0, C, 0, NULL) == RMC_ERR_HANDLE);
    /* C aliasing B (the same matrix, or an overlay of it) is refused: beta would change B */
    rmc_matrix_h O;
    MPI_CHECK_OK(rmc_matrix_create_overlay(C, dc, RMC_ELEM_F64, 0, &O));
    for (int al = 0; al <= (int)RMC_GEMM_STEAL_LOCAL; al++) {
        MPI_CHECK_ALL(rmc_spmatrix_spmm(1, A, C, 0, C, (rmc_gemm_algo_t)al, NULL) == RMC_ERR_ARG);
        MPI_CHECK_ALL(rmc_spmatrix_spmm(1, A, O, 0, C, (rmc_gemm_algo_t)al, NULL) == RMC_ERR_ARG);
    }
    MPI_CHECK_OK(rmc_matrix_destroy(O));
    MPI_CHECK_ALL(rmc_spmatrix_spgemm(A, A, A, 0, RMC_SPA_AUTO, NULL) == RMC_ERR_ARG);
    rmc_spmatrix_h D;
    MPI_CHECK_OK(rmc_spmatrix_create(da, 0, &D));
    MPI_CHECK_ALL(rmc_spmatrix_spgemm(A, A64, D, 0, RMC_SPA_AUTO, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_spmatrix_spgemm(A, A, D, (rmc_gemm_algo_t)9, RMC_SPA_AUTO, NULL) ==
                  RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_spmatrix_spgemm(A, A, D, 0, (rmc_spa_kind_t)9, NULL) == RMC_ERR_ARG);
    int64_t nnz = -1;
    MPI_CHECK_ALL(rmc_spmatrix_nnz(D, &nnz) == RMC_OK && nnz == 0); /* D unchanged */
    /* SUMMA where tiles are not one per process; refused, it leaves C (and a tile set on it but
     * not yet renewed) as it was */
    int64_t t_mine = -1, t_next = -1; /* a tile of this rank's, one of the next rank's */
    for (int64_t t = 0; t < rmc_dist_ntiles(da); t++) {
        int64_t lo[2], hi[2];
        int owner;
        MPI_CHECK_OK(rmc_dist_tile(da, t, lo, hi, &owner));
        if (owner == me && t_mine < 0)
            t_mine = t;
        if (owner == (me + 1) % np && t_next < 0)
            t_next = t;
    }
    rmc_csr_t one; /* a 5 x 5 tile with one nonzero at (0, 0) */
    rmc_csr_init(&one, 0);
    MPI_CHECK_ALL(t_mine >= 0 && t_next >= 0 && rmc_csr_alloc(&one, 5, 5, 1, 0) == RMC_OK);
    for (int r = 1; r <= 5; r++)
        ((int32_t *)one.rowptr)[r] = 1;
    ((int32_t *)one.colind)[0] = 0;
    one.val[0] = 1;
    MPI_CHECK_OK(rmc_spmatrix_tile_set(D, t_mine, &one));
    rmc_csr_free(&one);
    MPI_CHECK_ALL(rmc_spmatrix_spgemm(A, A, D, RMC_GEMM_SUMMA, RMC_SPA_AUTO, NULL) ==
                  RMC_ERR_UNSUPPORTED);
    /* the next rank's tile_set is not seen here until the renew */
    MPI_CHECK_ALL(np == 1 || rmc_spmatrix_tile_nnz(D, t_next) == 0);
    MPI_CHECK_OK(rmc_spmatrix_renew(D));
    MPI_CHECK_ALL(rmc_spmatrix_tile_nnz(D, t_next) == 1);
    MPI_CHECK_OK(rmc_spmatrix_destroy(D));
    MPI_CHECK_OK(rmc_spmatrix_destroy(A));
    MPI_CHECK_OK(rmc_spmatrix_destroy(A64));
    MPI_CHECK_OK(rmc_matrix_destroy(B));
    MPI_CHECK_OK(rmc_matrix_destroy(C));
    MPI_CHECK_OK(rmc_matrix_destroy(F));
    rmc_dist_free(da);
    rmc_dist_free(db);
    rmc_dist_free(dc);
}

MPITEST_MAIN("spmul", cttest_setup, mpitest_teardown_rmc, test_spmm, test_summa_irregular,
             test_spgemm, test_bad_input)
