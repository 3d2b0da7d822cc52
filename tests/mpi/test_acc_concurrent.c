/* Concurrent accumulates: every rank accumulates, at the same time, into overlapping patches of
 * every rank (itself included), with strided, contiguous, vector and non-blocking forms mixed. No
 * update may be lost: after a barrier each rank checks its own memory against the exact sum of
 * all contributions (small integer values, so float sums are exact in any order). */
#include "mpitest.h"
#include "test_strided_util.h"

enum { N = 24 }; /* N x N element matrix per rank and type */

static int me, np;

static int setup(void **state)
{
    me = mpitest_rank_;
    np = mpitest_nranks_;
    return mpitest_setup_rmc(state);
}

/* Contribution value of (origin, rep, element index) before scaling: small integer. */
static long contrib(int origin, int rep, size_t i)
{
    return (long)((origin * 7 + rep * 3 + (int)i * 5) % 9) - 4;
}

static void put_value(rmc_acc_type_t t, char *p, long v)
{
    switch (t) {
    case RMC_ACC_INT32: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    case RMC_ACC_INT64: {
        int64_t x = (int64_t)v * 3000000019ll;
        memcpy(p, &x, 8);
        break;
    }
    case RMC_ACC_FLOAT: {
        float x = (float)v;
        memcpy(p, &x, 4);
        break;
    }
    case RMC_ACC_DOUBLE: {
        double x = (double)v;
        memcpy(p, &x, 8);
        break;
    }
    case RMC_ACC_COMPLEX_FLOAT: {
        float x[2] = {(float)v, (float)(-v)};
        memcpy(p, x, 8);
        break;
    }
    case RMC_ACC_COMPLEX_DOUBLE: {
        double x[2] = {(double)v, (double)(2 * v)};
        memcpy(p, x, 16);
        break;
    }
    }
}

/* Patch of origin o on every target: rows/cols/offset depend on o so patches overlap partially. */
static void patch_of(int o, size_t *r0, size_t *c0, size_t *rows, size_t *cols)
{
    *r0 = (size_t)(o % 3);
    *c0 = (size_t)((o * 5) % 4);
    *rows = N - 4 - (size_t)(o % 2);
    *cols = N - 5 + (size_t)(o % 2);
}

/* Applies origin o's contributions of one rep to the expected matrix (local reference). */
static void expect_rep(rmc_acc_type_t t, const void *scale, char *exp, int o, int rep)
{
    size_t es = rmc_acc_type_size(t), r0, c0, rows, cols;
    patch_of(o, &r0, &c0, &rows, &cols);
    char v[16];
    /* op kind rotates with rep: 0 strided, 1 contiguous row by row, 2 vector of rows */
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            put_value(t, v, contrib(o, rep, i * cols + j));
            tref_acc_elem(t, scale, exp + ((r0 + i) * N + c0 + j) * es, v);
        }
}

static void run_concurrent(int reps)
{
    char *buf = aligned_alloc(64, N * N * 16), *exp = aligned_alloc(64, N * N * 16);
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(N * N * 16, bases, &reg));
    int ok = 1;
    for (int ti = 0; ti < TACC_NTYPES; ti++) {
        rmc_acc_type_t t = tacc_types[ti];
        size_t es = rmc_acc_type_size(t);
        const void *scale = tscale(t, ti % 2);
        MPI_CHECK_OK(rmc_barrier());
        for (int rep = 0; rep < reps; rep++) {
            size_t r0, c0, rows, cols;
            patch_of(me, &r0, &c0, &rows, &cols);
            for (size_t i = 0; i < rows * cols; i++)
                put_value(t, buf + i * es, contrib(me, rep, i));
            rmc_request_h q[64];
            int nq = 0;
            for (int k = 0; k < np; k++) {
                int tgt = (me + k) % np; /* everyone starts at a different target */
                char *rp = (char *)bases[tgt] + (r0 * N + c0) * es;
                rmc_status_t st = RMC_OK;
                int kind = (rep + k) % 4;
                if (kind == 0) {
                    int count[2] = {(int)(cols * es), (int)rows};
                    int ss[1] = {(int)(cols * es)}, ds[1] = {(int)(N * es)};
                    st = rmc_acc_strided(t, scale, buf, ss, rp, ds, count, 1, tgt);
                } else if (kind == 1) {
                    for (size_t i = 0; i < rows && st == RMC_OK; i++)
                        st =
                            rmc_acc(t, scale, buf + i * cols * es, rp + i * N * es, cols * es, tgt);
                } else if (kind == 2) {
                    void *sp[N], *dp[N];
                    for (size_t i = 0; i < rows; i++) {
                        sp[i] = buf + i * cols * es;
                        dp[i] = rp + i * N * es;
                    }
                    rmc_iov_t iov = {sp, dp, (int)rows, cols * es};
                    st = rmc_acc_vector(t, scale, &iov, 1, tgt);
                } else {
                    st = rmc_acc_2d_nb(t, scale, buf, cols * es, rp, N * es, rows, cols * es, tgt,
                                       (k % 2) ? &q[nq++] : NULL);
                    if (st != RMC_OK && (k % 2))
                        nq--;
                }
                if (st != RMC_OK) {
                    if (ok)
                        fprintf(stderr, "[rank %d] acc type %d kind %d: %s\n", me, (int)t, kind,
                                rmc_status_string(st));
                    ok = 0;
                }
            }
            /* the buffer is reused next rep: requests first */
            if (rmc_wait_all(q, (size_t)nq) != RMC_OK || rmc_fence_all() != RMC_OK)
                ok = 0;
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        memset(exp, 0, N * N * 16);
        for (int o = 0; o < np; o++)
            for (int rep = 0; rep < reps; rep++)
                expect_rep(t, scale, exp, o, rep);
        int good = values_equal(t, bases[me], exp, N * N * es);
        if (!good)
            fprintf(stderr, "[rank %d] lost or wrong update, type %d\n", me, (int)t);
        MPI_CHECK_ALL(good);
        MPI_CHECK_OK(rmc_barrier());
        memset(bases[me], 0, N * N * 16);
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(reg));
    free(buf);
    free(exp);
}

static void test_concurrent_auto(void **s)
{
    (void)s;
    run_concurrent(np <= 2 ? 24 : 6);
}

/* Same with every remote protocol forced: accumulates of different protocols stay atomic with
 * respect to each other (all are MPI accumulates on one window, or all use the lock). */
static void test_concurrent_methods(void **s)
{
    (void)s;
    static const rmc_strided_method_t m[3] = {RMC_STRIDED_DATATYPE, RMC_STRIDED_LIST,
                                              RMC_STRIDED_PACK};
    /* each rank its own method: protocols mixed in one run */
    MPI_CHECK_OK(rmc_strided_method_set(m[me % 3]));
    run_concurrent(np <= 2 ? 8 : 3);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
}

/* Many ranks hammering one element: a counter incremented by every rank must end exact. */
static void test_hot_spot(void **s)
{
    (void)s;
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(64, bases, &reg));
    int iters = np <= 2 ? 2000 : 150;
    int64_t one = 1;
    int ok = 1;
    for (int i = 0; i < iters && ok; i++)
        ok = rmc_acc(RMC_ACC_INT64, NULL, &one, bases[0], 8, 0) == RMC_OK;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    if (me == 0) {
        int64_t v;
        memcpy(&v, bases[0], 8);
        ok = v == (int64_t)iters * np;
        if (!ok)
            fprintf(stderr, "hot spot: %lld != %lld\n", (long long)v, (long long)iters * np);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(reg));
}

MPITEST_MAIN("concurrent accumulate", setup, mpitest_teardown_rmc, test_concurrent_auto,
             test_concurrent_methods, test_hot_spot)
