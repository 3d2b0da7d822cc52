/* Typed accumulate: every type, scale 1 and a non-trivial scale (complex scales for the complex
 * types), strided (random 1..7-level patches, offsets, strides), 2-D, vector and contiguous forms,
 * blocking / nb with request / nb implicit, every strided method forced in turn, against a local
 * reference (mirror of the target kept by its only writer). A get right after an accumulate (no
 * fence) sees it; after a barrier the target's own memory equals the mirror. Values are small
 * integers, so float results are exact too. */
#include "mpitest.h"
#include "test_strided_util.h"

#define REG (32 * 1024)
#define LB  (32 * 1024)

static const rmc_strided_method_t methods[] = {RMC_STRIDED_AUTO, RMC_STRIDED_DATATYPE,
                                               RMC_STRIDED_LIST, RMC_STRIDED_PACK};
static int me, np;

static int setup(void **state)
{
    me = mpitest_rank_;
    np = mpitest_nranks_;
    return mpitest_setup_rmc(state);
}

static int note(int *ok, const char *what, rmc_acc_type_t t, int which, int m, int it)
{
    if (*ok)
        fprintf(stderr, "[rank %d] acc %s: type %d scale#%d method %s iteration %d\n", me, what,
                (int)t, which, rmc_strided_method_name((rmc_strided_method_t)m), it);
    *ok = 0;
    return 0;
}

/* Completes an op issued in `mode` (0 blocking, 1 request, 2 implicit). */
static rmc_status_t finish(int mode, rmc_request_h *q, int tgt)
{
    if (mode == 1)
        return rmc_wait(q);
    if (mode == 2)
        return rmc_fence(tgt);
    return RMC_OK;
}

static void run_acc(int shift)
{
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(REG, bases, &reg));
    int tgt = (me + shift) % np, from = (me - shift % np + np) % np;
    char *mirror = calloc(1, REG), *src = aligned_alloc(64, LB), *whole = aligned_alloc(64, REG);
    int ok = 1;
    trng_t r;
    trng_seed(&r, 31u + (unsigned)me * 7u + (unsigned)shift);
    int nit = np <= 2 ? 5 : 2;
    for (int ti = 0; ti < TACC_NTYPES; ti++) {
        rmc_acc_type_t t = tacc_types[ti];
        size_t es = rmc_acc_type_size(t), al = tacc_align(t);
        for (int which = 0; which < 2; which++) {
            const void *scale = tscale(t, which);
            for (int mi = 0; mi < 4; mi++) {
                MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
                for (int it = 0; it < nit && ok; it++) {
                    int levels = 1 + (it + mi + ti) % 7;
                    int mode = (it + which) % 3;
                    tdesc_t td;
                    tdesc_random(&r, levels, es, al, REG / 2, &td);
                    tfill_values(t, src, LB, &r);
                    size_t soff = al * (size_t)trng_range(&r, 0, (long)((LB - td.sext) / al));
                    size_t doff = al * (size_t)trng_range(&r, 0, (long)((REG - td.dext) / al));
                    rmc_request_h q = RMC_REQUEST_NULL;
                    rmc_status_t st;
                    char *rd = (char *)bases[tgt] + doff;
                    if (mode == 0)
                        st = rmc_acc_strided(t, which ? scale : NULL, src + soff, td.sstr, rd,
                                             td.dstr, td.count, levels, tgt);
                    else
                        st = rmc_acc_strided_nb(t, scale, src + soff, td.sstr, rd, td.dstr,
                                                td.count, levels, tgt, mode == 1 ? &q : NULL);
                    if (st == RMC_OK)
                        st = finish(mode, &q, tgt);
                    if (st != RMC_OK) {
                        fprintf(stderr, "[rank %d] %s\n", me, rmc_status_string(st));
                        note(&ok, "strided status", t, which, methods[mi], it);
                    }
                    tref_acc(t, scale, mirror + doff, src + soff, &td);
                    memset(src, 0x7f, LB);

                    /* contiguous accumulate of a random range */
                    /* the first one larger than a 16 KiB piece */
                    size_t n = it == 0 ? REG * 3 / 4 / es : (size_t)trng_range(&r, 1, 300);
                    size_t coff = al * (size_t)trng_range(&r, 0, (long)((REG - n * es) / al));
                    tfill_values(t, src, n * es, &r);
                    if (it % 2)
                        st = rmc_acc(t, scale, src, (char *)bases[tgt] + coff, n * es, tgt);
                    else {
                        st = rmc_acc_nb(t, scale, src, (char *)bases[tgt] + coff, n * es, tgt, &q);
                        if (st == RMC_OK)
                            st = rmc_wait(&q);
                    }
                    if (st != RMC_OK)
                        note(&ok, "contiguous status", t, which, methods[mi], it);
                    for (size_t i = 0; i < n; i++)
                        tref_acc_elem(t, scale, mirror + coff + i * es, src + i * es);

                    /* a get right after (no fence) sees both */
                    if (rmc_get(bases[tgt], whole, REG, tgt) != RMC_OK ||
                        !values_equal(t, whole, mirror, REG))
                        note(&ok, "get after acc", t, which, methods[mi], it);
                }
            }
        }
        /* after a barrier the owner sees every update; then the owner clears its memory so the
         * next type starts from zero */
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        MPI_Sendrecv(mirror, REG, MPI_BYTE, tgt, 9, whole, REG, MPI_BYTE, from, 9, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_CHECK_ALL(values_equal(t, whole, bases[me], REG));
        memset(bases[me], 0, REG);
        memset(mirror, 0, REG);
        MPI_CHECK_OK(rmc_barrier());
    }
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_region_free(reg));
    free(mirror);
    free(src);
    free(whole);
}

static void test_acc_neighbor(void **s)
{
    (void)s;
    run_acc(1);
}

static void test_acc_self(void **s)
{
    (void)s;
    run_acc(np);
}

/* 2-D and vector accumulate of doubles and complex floats, every method; then visible to the owner
 * after a barrier. */
static void test_acc_2d_vector(void **s)
{
    (void)s;
    enum { N = 48 };
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(N * N * 16, bases, &reg));
    int tgt = (me + 1) % np, from = (me - 1 + np) % np;
    char *mirror = calloc(N * N, 16), *src = aligned_alloc(64, N * N * 16);
    char *whole = aligned_alloc(64, N * N * 16);
    int ok = 1;
    trng_t r;
    trng_seed(&r, 4242u + (unsigned)me);
    static const rmc_acc_type_t types[2] = {RMC_ACC_DOUBLE, RMC_ACC_COMPLEX_FLOAT};
    for (int ti = 0; ti < 2; ti++) {
        rmc_acc_type_t t = types[ti];
        size_t es = rmc_acc_type_size(t);
        const void *scale = tscale(t, 1);
        for (int mi = 0; mi < 4; mi++) {
            MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
            for (int it = 0; it < (np <= 2 ? 6 : 2); it++) {
                size_t rows = (size_t)trng_range(&r, 1, N), cols = (size_t)trng_range(&r, 1, N);
                size_t r0 = (size_t)trng_range(&r, 0, (long)(N - rows));
                size_t c0 = (size_t)trng_range(&r, 0, (long)(N - cols));
                tfill_values(t, src, rows * cols * es, &r);
                char *rp = (char *)bases[tgt] + (r0 * N + c0) * es;
                rmc_request_h q = RMC_REQUEST_NULL;
                rmc_status_t st;
                if (it % 2)
                    st = rmc_acc_2d(t, scale, src, cols * es, rp, N * es, rows, cols * es, tgt);
                else {
                    st = rmc_acc_2d_nb(t, scale, src, cols * es, rp, N * es, rows, cols * es, tgt,
                                       &q);
                    if (st == RMC_OK)
                        st = rmc_wait(&q);
                }
                if (st != RMC_OK)
                    note(&ok, "2d status", t, 1, methods[mi], it);
                for (size_t i = 0; i < rows; i++)
                    for (size_t j = 0; j < cols; j++)
                        tref_acc_elem(t, scale, mirror + ((r0 + i) * N + c0 + j) * es,
                                      src + (i * cols + j) * es);
                /* vector: every other element of a few rows, as segments of 1..3 elements; the
                 * local side one dense block (sent in place) or, every other iteration, with a gap
                 * of one element after each segment (packed, or an origin datatype) */
                int nseg = (int)trng_range(&r, 1, 40);
                size_t segel = (size_t)trng_range(&r, 1, 3), lgap = (size_t)(it / 2 % 2);
                void *sp[40], *dp[40];
                tfill_values(t, src, (size_t)nseg * (segel + lgap) * es, &r);
                for (int i = 0; i < nseg; i++) {
                    sp[i] = src + (size_t)i * (segel + lgap) * es;
                    dp[i] = (char *)bases[tgt] + (size_t)i * (segel + 1 + (size_t)(it % 3)) * es;
                }
                rmc_iov_t iov = {sp, dp, nseg, segel * es};
                if (it % 3 == 0)
                    st = rmc_acc_vector(t, scale, &iov, 1, tgt);
                else {
                    st = rmc_acc_vector_nb(t, scale, &iov, 1, tgt, it % 3 == 1 ? &q : NULL);
                    if (st == RMC_OK)
                        st = it % 3 == 1 ? rmc_wait(&q) : rmc_fence(tgt);
                }
                if (st != RMC_OK)
                    note(&ok, "vector status", t, 1, methods[mi], it);
                for (int i = 0; i < nseg; i++)
                    for (size_t e = 0; e < segel; e++)
                        tref_acc_elem(t, scale,
                                      mirror + ((char *)dp[i] - (char *)bases[tgt]) + e * es,
                                      (char *)sp[i] + e * es);
                if (rmc_get(bases[tgt], whole, N * N * 16, tgt) != RMC_OK ||
                    !values_equal(t, whole, mirror, N * N * 16))
                    note(&ok, "get after 2d/vector acc", t, 1, methods[mi], it);
            }
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        MPI_Sendrecv(mirror, N * N * 16, MPI_BYTE, tgt, 10, whole, N * N * 16, MPI_BYTE, from, 10,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_CHECK_ALL(values_equal(t, whole, bases[me], N * N * 16));
        MPI_CHECK_OK(rmc_barrier());
        memset(mirror, 0, N * N * 16);
        memset(bases[me], 0, N * N * 16);
        MPI_CHECK_OK(rmc_barrier());
    }
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_region_free(reg));
    free(mirror);
    free(src);
    free(whole);
}

/* The accumulate mechanism in force (lock vs MPI) matches the node layout, and the counters say
 * which served the operations. */
static void test_acc_mechanism(void **s)
{
    (void)s;
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(1024, bases, &reg));
    int tgt = (me + 1) % np;
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = 1.0;
    rmc_strided_stats_t a, b;
    MPI_CHECK_OK(rmc_strided_stats(&a));
    MPI_CHECK_OK(rmc_acc(RMC_ACC_DOUBLE, NULL, v, bases[tgt], sizeof v, tgt));
    MPI_CHECK_OK(rmc_acc(RMC_ACC_DOUBLE, NULL, v, bases[me], sizeof v, me));
    MPI_CHECK_OK(rmc_strided_stats(&b));
    if (rmc_node_count() == 1)
        MPI_CHECK_ALL(b.lock_acc_ops == a.lock_acc_ops + 2 && b.mpi_acc_ops == a.mpi_acc_ops);
    else
        MPI_CHECK_ALL(b.mpi_acc_ops == a.mpi_acc_ops + 2 && b.lock_acc_ops == a.lock_acc_ops);
    MPI_CHECK_OK(rmc_barrier());
    double *mine = bases[me];
    int good = 1;
    for (int i = 0; i < 16; i++)
        good &= mine[i] == 2.0;
    MPI_CHECK_ALL(good);
    MPI_CHECK_ALL(rmc_strided_stats(NULL) == RMC_ERR_ARG);
    MPI_CHECK_OK(rmc_region_free(reg));
}

/* Blocking remote accumulates are staged (rmc_acc copies the source and returns before MPI
 * completes the accumulate): the source is reusable at once (it is overwritten right after every
 * call), a get without a fence sees every accumulate, more operations, bytes and (region, target)
 * pairs than the staging area holds recycle it, scaled and unstaged (larger) accumulates mix in,
 * and freeing a region with staged accumulates outstanding is harmless. */
#define ST_NREG 6
#define ST_SLOT 2049 /* int64 elements per origin in every rank's part */
static void test_acc_staged(void **s)
{
    (void)s;
    void *bases[ST_NREG][64];
    rmc_region_h reg[ST_NREG];
    size_t part = (size_t)np * ST_SLOT * sizeof(int64_t);
    for (int r = 0; r < ST_NREG; r++)
        MPI_CHECK_OK(rmc_region_alloc(part, bases[r], &reg[r]));
    int64_t *exp = calloc((size_t)ST_NREG * (size_t)np * ST_SLOT, sizeof(int64_t));
    size_t lbytes = (ST_SLOT * sizeof(int64_t) + 63) & ~(size_t)63; /* aligned_alloc: a multiple */
    int64_t *src = aligned_alloc(64, lbytes);
    int64_t *got = aligned_alloc(64, lbytes);
    int64_t two = 2;
    rmc_strided_stats_t a, b;
    MPI_CHECK_OK(rmc_strided_stats(&a));
    unsigned long long staged = 0;
    int multi = rmc_node_count() > 1;
    rmc_status_t st = RMC_OK;
    int k = np <= 2 ? 600 : 200;
    for (int i = 0; i < k && st == RMC_OK; i++) {
        int r = i % ST_NREG, tgt = (me + 1 + (i / ST_NREG) % (np - 1 ? np - 1 : 1)) % np;
        size_t n = 1 + ((size_t)i * 37u) % 512; /* 8 .. 4096 bytes: staged when remote */
        if (i % 50 == 49)
            n = 2048; /* 16 KiB, the largest staged size */
        if (i % 50 == 24)
            n = 2049; /* just above: not staged */
        const int64_t *scale = i % 3 == 0 ? &two : NULL;
        for (size_t e = 0; e < n; e++)
            src[e] = (int64_t)(i + 1) * 1000 + (int64_t)e;
        int64_t *dst = (int64_t *)bases[r][tgt] + (size_t)me * ST_SLOT;
        st = rmc_acc(RMC_ACC_INT64, scale, src, dst, n * sizeof(int64_t), tgt);
        for (size_t e = 0; e < n; e++) {
            exp[((size_t)r * (size_t)np + (size_t)tgt) * ST_SLOT + e] += (scale ? 2 : 1) * src[e];
            src[e] = -777777; /* the caller may reuse its buffer at once */
        }
        if (multi && !rmc_same_node(tgt) && n <= 2048)
            staged++;
    }
    /* a get without a fence of everything */
    int ok = 1;
    for (int r = 0; r < ST_NREG && st == RMC_OK; r++)
        for (int tgt = 0; tgt < np && st == RMC_OK; tgt++) {
            if (tgt == me)
                continue;
            int64_t *dst = (int64_t *)bases[r][tgt] + (size_t)me * ST_SLOT;
            st = rmc_get(dst, got, ST_SLOT * sizeof(int64_t), tgt);
            const int64_t *e = exp + ((size_t)r * (size_t)np + (size_t)tgt) * ST_SLOT;
            for (size_t x = 0; x < ST_SLOT && st == RMC_OK; x++)
                ok &= got[x] == e[x];
        }
    MPI_CHECK_OK(rmc_strided_stats(&b));
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(b.staged_acc_ops - a.staged_acc_ops == staged);
    /* more than RMCI_STAGE_OPS (256) staged operations recycle the area */
    MPI_CHECK_ALL(staged <= 256 || b.stage_drains > a.stage_drains);

    /* staged accumulates outstanding on a region that is freed, then on another one */
    int tgt = (me + 1) % np;
    for (size_t e = 0; e < 8; e++)
        src[e] = 5;
    MPI_CHECK_OK(rmc_acc(RMC_ACC_INT64, NULL, src, bases[0][tgt], 8 * sizeof(int64_t), tgt));
    MPI_CHECK_OK(rmc_region_free(reg[0]));
    int64_t *dst1 = (int64_t *)bases[1][tgt] + (size_t)me * ST_SLOT;
    int64_t *e1 = exp + ((size_t)1 * (size_t)np + (size_t)tgt) * ST_SLOT;
    MPI_CHECK_OK(rmc_acc(RMC_ACC_INT64, NULL, src, dst1, 8 * sizeof(int64_t), tgt));
    for (size_t e = 0; e < 8; e++)
        e1[e] += 5;
    MPI_CHECK_OK(rmc_get(dst1, got, ST_SLOT * sizeof(int64_t), tgt));
    ok = 1;
    for (size_t x = 0; x < ST_SLOT; x++)
        ok &= got[x] == e1[x];
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    for (int r = 1; r < ST_NREG; r++)
        MPI_CHECK_OK(rmc_region_free(reg[r]));
    free(exp);
    free(src);
    free(got);
}

/* 3 x (i % 1000) at every element i of v[0..n), or a message naming the first that is not. */
static int sums_ok(const double *v, size_t n, const char *tune)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != 3.0 * (double)(i % 1000)) {
            fprintf(stderr, "[rank %d] RMC_MALLOC_TUNE=%s: element %zu of %zu is %g\n", me, tune,
                    i, n, v[i]);
            return 0;
        }
    return 1;
}

/* Large contiguous accumulates (remote ones are one MPI operation per 4 MiB with RMC_MALLOC_TUNE,
 * 16 KiB pieces without it): every rank adds 9 MiB - 8 B and 1 MiB of doubles into its right
 * neighbour, blocking (scale 1) and non-blocking (scale 2), under RMC_MALLOC_TUNE=1 and =0; the
 * target's memory holds exactly the sums. An invalid knob value fails rmc_init on every rank. */
static void test_acc_large(void **s)
{
    (void)s;
    enum { BIG = (9 << 20) - 8, SMALL = 1 << 20 };
    size_t n = BIG / sizeof(double);
    double *src = malloc(BIG), two = 2.0;
    for (size_t i = 0; i < n; i++)
        src[i] = (double)(i % 1000);
    const char *modes[] = {"1", "0"};
    for (int k = 0; k < 2; k++) {
        MPI_CHECK_OK(rmc_finalize());
        setenv("RMC_MALLOC_TUNE", modes[k], 1);
        rmc_status_t st = rmc_init(MPI_COMM_WORLD);
        unsetenv("RMC_MALLOC_TUNE");
        MPI_CHECK_OK(st);
        void *bases[64];
        rmc_region_h reg;
        MPI_CHECK_OK(rmc_region_alloc(BIG + SMALL, bases, &reg));
        int tgt = (me + 1) % np, ok = 1;
        char *dst = bases[tgt];
        rmc_request_h q[2];
        MPITEST_EXPECT(ok, rmc_acc(RMC_ACC_DOUBLE, NULL, src, dst, BIG, tgt) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_acc(RMC_ACC_DOUBLE, NULL, src, dst + BIG, SMALL, tgt) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_acc_nb(RMC_ACC_DOUBLE, &two, src, dst, BIG, tgt, &q[0]) == RMC_OK);
        MPITEST_EXPECT(ok,
                       rmc_acc_nb(RMC_ACC_DOUBLE, &two, src, dst + BIG, SMALL, tgt, &q[1]) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_wait_all(q, 2) == RMC_OK && rmc_fence_all() == RMC_OK);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        const double *mine = bases[me];
        ok = sums_ok(mine, n, modes[k]) && sums_ok(mine + n, SMALL / sizeof(double), modes[k]);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(rmc_region_free(reg));
    }
    free(src);
    MPI_CHECK_OK(rmc_finalize());
    setenv("RMC_MALLOC_TUNE", "sometimes", 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    unsetenv("RMC_MALLOC_TUNE");
    MPI_CHECK_ALL(st == RMC_ERR_ARG && strstr(rmc_last_error(), "RMC_MALLOC_TUNE") != NULL);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD)); /* for the teardown */
}

/* A complex accumulate with a scale rounds as dst + (scale * src), the product first (as MPI's
 * path does): dst (1, 0) += (1 + i) (x + i x) with x = 1e8 (float) or 1e17 (double) is (1, 2x).
 * The node-local kernel added in the order dst + ar xr - ai xi, which lost the 1 to x + 1 - x.
 * Every form (contiguous, strided, vector), to this rank and to the next. */
static void test_acc_complex_rounding(void **s)
{
    (void)s;
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(3 * 64, bases, &reg));
    int ok = 1;
    for (int dbl = 0; dbl < 2; dbl++)
        for (int tk = 0; tk < 2; tk++) {
            int tgt = tk ? (me + 1) % np : me, from = tk ? (me + np - 1) % np : me;
            char *dst = bases[tgt], *mine = bases[me];
            MPI_CHECK_OK(rmc_barrier());
            for (int f = 0; f < 3; f++) { /* this rank's slots of 16 bytes at f * 64 */
                if (dbl) {
                    double one[2] = {1, 0};
                    memcpy(mine + f * 64, one, 16);
                } else {
                    float one[2] = {1, 0};
                    memcpy(mine + f * 64, one, 8);
                }
            }
            MPI_CHECK_OK(rmc_barrier());
            float fs[2] = {1, 1}, fx[2] = {1e8f, 1e8f};
            double ds[2] = {1, 1}, dx[2] = {1e17, 1e17};
            rmc_acc_type_t t = dbl ? RMC_ACC_COMPLEX_DOUBLE : RMC_ACC_COMPLEX_FLOAT;
            const void *sc = dbl ? (const void *)ds : (const void *)fs;
            void *x = dbl ? (void *)dx : (void *)fx;
            size_t es = dbl ? 16 : 8;
            int cnt[1] = {(int)es};
            void *srcs[1] = {x}, *dsts[1] = {dst + 128};
            rmc_iov_t iov = {srcs, dsts, 1, es};
            MPITEST_EXPECT(ok, rmc_acc(t, sc, x, dst, es, tgt) == RMC_OK);
            MPITEST_EXPECT(ok,
                           rmc_acc_strided(t, sc, x, NULL, dst + 64, NULL, cnt, 0, tgt) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_acc_vector(t, sc, &iov, 1, tgt) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_fence_all() == RMC_OK);
            MPI_CHECK_OK(rmc_barrier());
            for (int f = 0; f < 3; f++) {
                double re, im, want = dbl ? 2e17 : 2e8;
                if (dbl) {
                    double v[2];
                    memcpy(v, mine + f * 64, 16);
                    re = v[0], im = v[1];
                } else {
                    float v[2];
                    memcpy(v, mine + f * 64, 8);
                    re = v[0], im = v[1];
                }
                if (re != 1 || im != want) {
                    fprintf(stderr, "[rank %d] %s complex acc from rank %d, form %d: (%g, %g)\n",
                            me, dbl ? "double" : "float", from, f, re, im);
                    ok = 0;
                }
            }
        }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(reg));
}

/* Resets mine[0, n) to its index. */
static void iota64(int64_t *mine, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mine[i] = (int64_t)i;
}

/* 1 when mine[i] = 2i - 1 for i in [lo, hi) (old[i] + old[i - 1]) and mine[i] = i elsewhere. */
static int shifted_sum_ok(const int64_t *mine, size_t n, size_t lo, size_t hi, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        int64_t want = i >= lo && i < hi ? 2 * (int64_t)i - 1 : (int64_t)i;
        if (mine[i] != want) {
            fprintf(stderr, "[rank %d] %s: element %zu is %lld, not %lld\n", me, what, i,
                    (long long)mine[i], (long long)want);
            return 0;
        }
    }
    return 1;
}

/* An accumulate by a rank into its own memory from a source overlapping the destination (one
 * element behind it) adds what the source held before the call, in every form: contiguous beyond
 * the 4 MiB and 16 KiB pieces, strided by the list protocol (one MPI operation per 64-byte row),
 * vector. With RMC_NODE_SIZE=1 these go through MPI, one operation after another, and each part
 * read the source after the earlier parts had changed it. */
static void test_acc_self_overlap(void **s)
{
    (void)s;
    enum { N = (5 << 20) / 8 + 16 };
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(N * sizeof(int64_t), bases, &reg));
    int64_t *mine = bases[me];
    int ok = 1;
    iota64(mine, N);
    MPITEST_EXPECT(ok, rmc_acc(RMC_ACC_INT64, NULL, mine, mine + 1, (N - 1) * 8, me) == RMC_OK);
    ok = ok && shifted_sum_ok(mine, N, 1, N, "contiguous");
    for (int mi = 0; mi < 4 && ok; mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
        iota64(mine, N);
        int st[1] = {64}, count[2] = {64, 512}; /* 512 rows of 8 elements */
        MPITEST_EXPECT(ok, rmc_acc_strided(RMC_ACC_INT64, NULL, mine, st, mine + 1, st, count, 1,
                                           me) == RMC_OK);
        ok = ok && shifted_sum_ok(mine, N, 1, 1 + 512 * 8, rmc_strided_method_name(methods[mi]));
        iota64(mine, N);
        void *src[4], *dst[4];
        for (int k = 0; k < 4; k++) {
            src[k] = mine + k * 4096;
            dst[k] = mine + k * 4096 + 1;
        }
        rmc_iov_t v = {src, dst, 4, 4096 * sizeof(int64_t)}; /* written segments do not overlap */
        MPITEST_EXPECT(ok, rmc_acc_vector(RMC_ACC_INT64, NULL, &v, 1, me) == RMC_OK);
        /* segment k writes [4096k + 1, 4096k + 4097) from [4096k, 4096k + 4096): [1, 16385) in all,
         * element 4096k read by segment k after segment k - 1 wrote it */
        for (size_t i = 0; i < N && ok; i++) {
            int64_t want = i >= 1 && i <= 4 * 4096 ? 2 * (int64_t)i - 1 : (int64_t)i;
            if (mine[i] != want) {
                fprintf(stderr, "[rank %d] vector (%s): element %zu is %lld, not %lld\n", me,
                        rmc_strided_method_name(methods[mi]), i, (long long)mine[i],
                        (long long)want);
                ok = 0;
            }
        }
    }
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(reg));
}

MPITEST_MAIN("typed accumulate", setup, mpitest_teardown_rmc, test_acc_neighbor, test_acc_self,
             test_acc_2d_vector, test_acc_mechanism, test_acc_staged, test_acc_large,
             test_acc_complex_rounding, test_acc_self_overlap)
