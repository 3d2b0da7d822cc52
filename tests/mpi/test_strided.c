/* Strided, 2-D and vector put/get: random 1..7-level patches (random shapes, offsets, strides)
 * against a local reference ("mirror" of the target's memory kept by its only writer), blocking and
 * non-blocking, a get right after a put (no fence) sees it, and after a barrier the target's own
 * memory equals the writer's mirror.
 *
 * Built twice: test_strided runs the automatic method (at 2..4 ranks, every node mode);
 * test_strided_methods (-DSTRIDED_ALL_METHODS) forces each method in turn (rmc_strided_method_set),
 * checks with the strided counters that the forced protocol really served remote patches, and
 * checks that RMC_STRIDED_METHOD set before rmc_init selects the method. */
#include <fcntl.h>
#include "mpitest.h"
#include "test_strided_util.h"

#define REG (48 * 1024) /* region bytes per rank */
#define LB  (48 * 1024) /* local buffers */

#ifdef STRIDED_ALL_METHODS
static const rmc_strided_method_t methods[] = {RMC_STRIDED_DATATYPE, RMC_STRIDED_LIST,
                                               RMC_STRIDED_PACK, RMC_STRIDED_AUTO};
#else
static const rmc_strided_method_t methods[] = {RMC_STRIDED_AUTO};
#endif
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

static int me, np;

static int setup(void **state)
{
    me = mpitest_rank_;
    np = mpitest_nranks_;
    return mpitest_setup_rmc(state);
}

static int iters(int base)
{
    int n = np <= 2 ? base : base / 4;
    return n < 8 ? 8 : n;
}

/* A failure is reported once per test with details, then agreed by MPI_CHECK_ALL. */
static int fail_report(int *ok, const char *what, int it, int levels, const char *method)
{
    if (*ok)
        fprintf(stderr, "[rank %d] %s mismatch: iteration %d levels %d method %s\n", me, what, it,
                levels, method);
    *ok = 0;
    return 0;
}

/* Forced method served the remote patches? (only meaningful when the target is not node-local) */
static int method_counted(rmc_strided_method_t m, const rmc_strided_stats_t *a,
                          const rmc_strided_stats_t *b)
{
    switch (m) {
    case RMC_STRIDED_DATATYPE:
        return b->datatype_ops > a->datatype_ops && b->list_ops == a->list_ops &&
               b->pack_ops == a->pack_ops;
    case RMC_STRIDED_LIST:
        return b->list_ops > a->list_ops && b->datatype_ops == a->datatype_ops &&
               b->pack_ops == a->pack_ops;
    case RMC_STRIDED_PACK:
        return b->pack_ops > a->pack_ops && b->list_ops == a->list_ops &&
               b->datatype_ops == a->datatype_ops;
    default:
        return 1;
    }
}

/* Random strided put / get to `tgt`; mode 0 blocking, 1 nb with request, 2 nb implicit (+fence). */
static void run_putget(int tgt_shift, int mode)
{
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(REG, bases, &reg));
    int tgt = (me + tgt_shift) % np, src_rank = (me - tgt_shift + np) % np;
    char *mirror = calloc(1, REG), *lsrc = malloc(LB), *lget = malloc(LB), *ref = malloc(LB);
    char *whole = malloc(REG);
    int ok = 1;
    trng_t r;
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        rmc_strided_method_t m = methods[mi];
        MPI_CHECK_OK(rmc_strided_method_set(m));
        trng_seed(&r, 1000u * (unsigned)me + 17u * mi + (unsigned)mode + 1u);
        rmc_strided_stats_t s0, s1;
        rmc_strided_stats(&s0);
        int nit = iters(48);
        for (int it = 0; it < nit && ok; it++) {
            int levels = 1 + it % 7;
            if (it % 9 == 8)
                levels = 0;
            tdesc_t td;
            if (tdesc_random(&r, levels, 1, 1, REG / 2, &td) != 0) {
                fail_report(&ok, "descriptor generation", it, levels, rmc_strided_method_name(m));
                break;
            }
            for (size_t i = 0; i < LB; i++)
                lsrc[i] = (char)trng_next(&r);
            size_t soff = (size_t)trng_range(&r, 0, (long)(LB - td.sext));
            size_t doff = (size_t)trng_range(&r, 0, (long)(REG - td.dext));
            char *rdst = (char *)bases[tgt] + doff;
            rmc_status_t st;
            rmc_request_h q = RMC_REQUEST_NULL;
            if (mode == 0)
                st = rmc_put_strided(lsrc + soff, td.sstr, rdst, td.dstr, td.count, levels, tgt);
            else
                st = rmc_put_strided_nb(lsrc + soff, td.sstr, rdst, td.dstr, td.count, levels, tgt,
                                        mode == 1 ? &q : NULL);
            if (st == RMC_OK && mode == 1)
                st = rmc_wait(&q);
            if (st == RMC_OK && mode == 2)
                st = rmc_fence(tgt);
            if (st != RMC_OK) {
                fprintf(stderr, "[rank %d] put_strided: %s\n", me, rmc_status_string(st));
                fail_report(&ok, "put status", it, levels, rmc_strided_method_name(m));
                break;
            }
            tref_copy(mirror + doff, lsrc + soff, &td);
            memset(lsrc, 0x5a, LB); /* source reusable after completion */

            /* strided get of a random patch, right after the put (no fence) */
            tdesc_t tg;
            tdesc_random(&r, 1 + (it * 3) % 7, 1, 1, REG / 2, &tg);
            size_t gs = (size_t)trng_range(&r, 0, (long)(REG - tg.sext));
            size_t gd = (size_t)trng_range(&r, 0, (long)(LB - tg.dext));
            for (size_t i = 0; i < LB; i++)
                lget[i] = ref[i] = (char)(i * 13 + it);
            tref_copy(ref + gd, mirror + gs, &tg);
            const char *rsrc = (const char *)bases[tgt] + gs;
            if (mode == 0)
                st = rmc_get_strided(rsrc, tg.sstr, lget + gd, tg.dstr, tg.count, tg.levels, tgt);
            else
                st = rmc_get_strided_nb(rsrc, tg.sstr, lget + gd, tg.dstr, tg.count, tg.levels, tgt,
                                        mode == 1 ? &q : NULL);
            if (st == RMC_OK && mode == 1)
                st = rmc_wait(&q);
            if (st == RMC_OK && mode == 2)
                st = rmc_fence(tgt);
            if (st != RMC_OK || memcmp(lget, ref, LB) != 0)
                fail_report(&ok, "strided get", it, tg.levels, rmc_strided_method_name(m));
            if (it % 8 == 0) {
                if (rmc_get(bases[tgt], whole, REG, tgt) != RMC_OK || memcmp(whole, mirror, REG))
                    fail_report(&ok, "whole-region get", it, levels, rmc_strided_method_name(m));
            }
        }
        rmc_strided_stats(&s1);
        if (rmc_same_node(tgt) == 0 && !method_counted(m, &s0, &s1))
            fail_report(&ok, "forced method not used", -1, -1, rmc_strided_method_name(m));
    }
    MPI_CHECK_ALL(ok);
    /* everyone sees the writes after the barrier: compare own memory with the writer's mirror */
    MPI_CHECK_OK(rmc_barrier());
    MPI_Sendrecv(mirror, REG, MPI_BYTE, tgt, 7, whole, REG, MPI_BYTE, src_rank, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_CHECK_ALL(memcmp(whole, bases[me], REG) == 0);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_region_free(reg));
    free(mirror);
    free(lsrc);
    free(lget);
    free(ref);
    free(whole);
}

static void test_putget_neighbor(void **s)
{
    (void)s;
    run_putget(1, 0);
}

static void test_putget_self(void **s)
{
    (void)s;
    run_putget(np, 0); /* target = self */
}

static void test_putget_nb_request(void **s)
{
    (void)s;
    run_putget(1, 1);
}

static void test_putget_nb_implicit(void **s)
{
    (void)s;
    run_putget(np - 1, 2);
}

/* Several outstanding nb ops with requests at once, mixed with implicit ones, completed by
 * wait_all / fence_all. */
static void test_many_outstanding(void **s)
{
    (void)s;
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(REG, bases, &reg));
    int tgt = (me + 1) % np, from = (me - 1 + np) % np;
    enum { NQ = 12, ROWS = 16, COLS = 24 };
    /* a ROWS x COLS byte patch per request, in row blocks of a 64-byte-wide remote matrix */
    char *src = malloc(NQ * ROWS * COLS), *mirror = calloc(1, REG), *got = malloc(REG);
    for (int i = 0; i < NQ * ROWS * COLS; i++)
        src[i] = (char)mpitest_pat(me, (size_t)i, 3);
    int ok = 1;
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
        rmc_request_h q[NQ];
        int count[2] = {COLS, ROWS}, ls[1] = {COLS}, rs[1] = {64};
        for (int i = 0; i < NQ; i++) {
            char *dst = (char *)bases[tgt] + (size_t)i * ROWS * 64 + (mi * 8) % 40;
            rmc_status_t st = rmc_put_strided_nb(src + i * ROWS * COLS, ls, dst, rs, count, 1, tgt,
                                                 (i % 3 == 2) ? NULL : &q[i]);
            if (i % 3 == 2)
                q[i] = RMC_REQUEST_NULL;
            ok &= st == RMC_OK;
            for (int rr = 0; rr < ROWS; rr++)
                memcpy(mirror + (size_t)i * ROWS * 64 + (mi * 8) % 40 + (size_t)rr * 64,
                       src + i * ROWS * COLS + rr * COLS, COLS);
        }
        ok &= rmc_wait_all(q, NQ) == RMC_OK;
        ok &= rmc_fence_all() == RMC_OK;
        /* nb gets of the same patches, all outstanding at once */
        char *back = malloc(NQ * ROWS * COLS);
        memset(back, 0, NQ * ROWS * COLS);
        for (int i = 0; i < NQ; i++) {
            char *rsrc = (char *)bases[tgt] + (size_t)i * ROWS * 64 + (mi * 8) % 40;
            ok &= rmc_get_strided_nb(rsrc, rs, back + i * ROWS * COLS, ls, count, 1, tgt,
                                     (i % 4 == 3) ? NULL : &q[i]) == RMC_OK;
            if (i % 4 == 3)
                q[i] = RMC_REQUEST_NULL;
        }
        ok &= rmc_wait_all(q, NQ) == RMC_OK;
        ok &= rmc_fence_all() == RMC_OK;
        ok &= memcmp(back, src, NQ * ROWS * COLS) == 0;
        free(back);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_Sendrecv(mirror, REG, MPI_BYTE, tgt, 8, got, REG, MPI_BYTE, from, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_CHECK_ALL(memcmp(got, bases[me], REG) == 0);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_region_free(reg));
    free(src);
    free(mirror);
    free(got);
}

/* One repeated patch operation: put (kind 0) or get (1) of shape td between lbuf + loff and the
 * target's region at roff, checked against the mirror of the target's memory. */
static int rep_op(int kind, const tdesc_t *td, char *lbuf, size_t loff, char *rb, size_t roff,
                  char *mirror, int tgt, int salt)
{
    if (kind == 0) {
        for (int i = 0; i < LB; i++)
            lbuf[i] = (char)(i * 7 + salt);
        if (rmc_put_strided(lbuf + loff, td->sstr, rb + roff, td->dstr, td->count, td->levels,
                            tgt) != RMC_OK)
            return 0;
        tref_copy(mirror + roff, lbuf + loff, td);
        return 1;
    }
    /* get: the descriptor's source side is remote */
    char *ref = malloc(LB);
    memset(lbuf, 0x33, LB);
    memset(ref, 0x33, LB);
    tref_copy(ref + loff, mirror + roff, td);
    int ok = rmc_get_strided(rb + roff, td->sstr, lbuf + loff, td->dstr, td->count, td->levels,
                             tgt) == RMC_OK &&
             memcmp(lbuf, ref, LB) == 0;
    free(ref);
    return ok;
}

/* Repeated shapes: comm/strided keeps the last shape of each kind with its derived protocol and
 * datatype (a plan). The same shape again must stay right with other pointers (8-, 4- and 1-byte
 * aligned: another word size), after a method change (the counters show the new protocol), after
 * more than 32 other shapes evicted its datatype, with another scale, with another stride or level
 * count, and a bad descriptor fails every time. */
static void test_repeated_shapes(void **s)
{
    (void)s;
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(REG, bases, &reg));
    int tgt = (me + 1) % np, from = (me - 1 + np) % np, remote = rmc_same_node(tgt) == 0;
    char *rb = bases[tgt], *mirror = calloc(1, REG), *lbuf = malloc(LB), *whole = malloc(REG);
    int ok = 1;
    /* 6 rows of 40 bytes, remote rows 128 bytes apart, local side dense */
    tdesc_t put = {.levels = 1, .count = {40, 6}, .sstr = {40}, .dstr = {128}};
    tdesc_t get = {.levels = 1, .count = {40, 6}, .sstr = {128}, .dstr = {40}};
    static const size_t mis[] = {0, 4, 1, 8, 2, 16}; /* misalignments of both sides */
    for (int it = 0; it < 60 && ok; it++) {
        size_t m = mis[it % 6], roff = 1024 + 8 * (size_t)(it % 5) + m;
        if (it == 24) /* aligned iterations 24 and 30 (it % 6 == 0) take the plan's path */
            MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_LIST));
        rmc_strided_stats_t a, b;
        rmc_strided_stats(&a);
        ok &= rep_op(0, &put, lbuf, m, rb, roff, mirror, tgt, it);
        ok &= rep_op(1, &get, lbuf, m, rb, roff, mirror, tgt, it);
        rmc_strided_stats(&b);
        if (remote && (it == 24 || it == 30)) /* list at 24, auto (datatype) again at 30 */
            ok &= it == 24 ? b.list_ops == a.list_ops + 2 : b.datatype_ops == a.datatype_ops + 2;
        if (it == 25)
            MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
        if (it == 40) /* 40 other shapes: the plan's datatype leaves the cache of 32 */
            for (int k = 2; k < 42 && ok; k++) {
                tdesc_t o = {.levels = 1, .count = {16, k}, .sstr = {64}, .dstr = {16}};
                ok &= rep_op(1, &o, lbuf, 0, rb, 8192, mirror, tgt, k);
            }
        if (!ok)
            fprintf(stderr, "[rank %d] repeated shape wrong at iteration %d\n", me, it);
    }
    /* the same counts with another stride, then with a level of count 1 more */
    tdesc_t wide = {.levels = 1, .count = {40, 6}, .sstr = {40}, .dstr = {136}};
    tdesc_t deep = {.levels = 2, .count = {40, 6, 1}, .sstr = {40, 999}, .dstr = {128, 7}};
    ok &= rep_op(0, &wide, lbuf, 0, rb, 4096, mirror, tgt, 1);
    ok &= rep_op(0, &deep, lbuf, 8, rb, 6144, mirror, tgt, 2);
    ok &= rep_op(0, &put, lbuf, 0, rb, 1024, mirror, tgt, 3);
    /* accumulates of one shape with scales 1, 2, 1 (a scale != 1 takes another path) */
    double v[30], sc[3] = {1.0, 2.0, 1.0};
    for (int i = 0; i < 30; i++)
        v[i] = i + 0.5;
    int acnt[2] = {40, 6}, als[1] = {40}, ars[1] = {128};
    char *abase = rb + 12288;
    for (int k = 0; k < 3; k++) {
        ok &= rmc_acc_strided(RMC_ACC_DOUBLE, &sc[k], v, als, abase, ars, acnt, 1, tgt) == RMC_OK;
        for (int r = 0; r < 6; r++)
            for (int c = 0; c < 5; c++) {
                double *d = (double *)(void *)(mirror + 12288 + 128 * r) + c;
                *d += sc[k] * v[5 * r + c];
            }
    }
    ok &= rmc_fence(tgt) == RMC_OK;
    /* a bad descriptor fails each time, also right after its shape's valid twin */
    int bad[2] = {40, 0}, small[1] = {8};
    for (int k = 0; k < 2; k++) {
        ok &= rmc_put_strided(lbuf, put.sstr, rb, put.dstr, bad, 1, tgt) == RMC_ERR_STRIDE;
        ok &=
            strstr(rmc_last_error(), "rmc_put_strided") && strstr(rmc_last_error(), "count[1] = 0");
        ok &= rmc_put_strided(lbuf, put.sstr, rb, small, put.count, 1, tgt) == RMC_ERR_STRIDE;
        ok &= strstr(rmc_last_error(), "dst_stride_arr[0] = 8 is below") != NULL;
        ok &= rep_op(0, &put, lbuf, 0, rb, 1024, mirror, tgt, 4 + k);
    }
    ok &= rmc_get(rb, whole, REG, tgt) == RMC_OK && memcmp(whole, mirror, REG) == 0;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_Sendrecv(mirror, REG, MPI_BYTE, tgt, 9, whole, REG, MPI_BYTE, from, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_CHECK_ALL(memcmp(whole, bases[me], REG) == 0);
    MPI_CHECK_OK(rmc_region_free(reg));
    free(mirror);
    free(lbuf);
    free(whole);
}

/* 2-D convenience forms on a row-major matrix of doubles. */
static void test_2d(void **s)
{
    (void)s;
    enum { N = 64 }; /* N x N doubles per rank */
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(N * N * sizeof(double), bases, &reg));
    int tgt = (me + 1) % np;
    double *a = malloc(N * N * sizeof(double)), *mirror = calloc(N * N, sizeof(double));
    double *b = malloc(N * N * sizeof(double));
    int ok = 1;
    trng_t r;
    trng_seed(&r, 99 + (unsigned)me);
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
        for (int it = 0; it < iters(24); it++) {
            size_t rows = (size_t)trng_range(&r, 1, N), cols = (size_t)trng_range(&r, 1, N);
            if (it % 5 == 0)
                rows = 1;
            if (it % 7 == 0)
                cols = 1;
            size_t r0 = (size_t)trng_range(&r, 0, (long)(N - rows));
            size_t c0 = (size_t)trng_range(&r, 0, (long)(N - cols));
            for (size_t i = 0; i < rows * cols; i++)
                a[i] = (double)trng_range(&r, -1000, 1000);
            double *rp = (double *)bases[tgt] + r0 * N + c0;
            rmc_status_t st;
            if (it % 2)
                st = rmc_put_2d(a, cols * 8, rp, N * 8, rows, cols * 8, tgt);
            else {
                rmc_request_h q;
                st = rmc_put_2d_nb(a, cols * 8, rp, N * 8, rows, cols * 8, tgt, &q);
                if (st == RMC_OK)
                    st = rmc_wait(&q);
            }
            ok &= st == RMC_OK;
            for (size_t i = 0; i < rows; i++)
                memcpy(mirror + (r0 + i) * N + c0, a + i * cols, cols * 8);
            memset(b, 0, N * N * sizeof(double));
            if (it % 3)
                st = rmc_get_2d(rp, N * 8, b, cols * 8, rows, cols * 8, tgt);
            else {
                rmc_request_h q;
                st = rmc_get_2d_nb(rp, N * 8, b, cols * 8, rows, cols * 8, tgt, &q);
                if (st == RMC_OK)
                    st = rmc_wait(&q);
            }
            ok &= st == RMC_OK;
            for (size_t i = 0; i < rows; i++)
                ok &= memcmp(b + i * cols, mirror + (r0 + i) * N + c0, cols * 8) == 0;
        }
    }
    if (!ok)
        fprintf(stderr, "[rank %d] 2-D put/get mismatch\n", me);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_get(bases[tgt], b, N * N * sizeof(double), tgt));
    MPI_CHECK_ALL(memcmp(b, mirror, N * N * sizeof(double)) == 0);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(reg));
    free(a);
    free(b);
    free(mirror);
}

/* Vector put/get: random equal-size segments at distinct remote slots, several descriptors per
 * call, segments spread over two regions in some calls. Every other iteration the local side is
 * one dense block (sent from / received into place); one in five lists each descriptor's
 * segments in descending remote order (the overlap check sorts a copy). */
static void test_vector(void **s)
{
    (void)s;
    void *b1[64], *b2[64];
    rmc_region_h r1, r2;
    MPI_CHECK_OK(rmc_region_alloc(REG, b1, &r1));
    MPI_CHECK_OK(rmc_region_alloc(REG, b2, &r2));
    int tgt = (me + 1) % np;
    char *m1 = calloc(1, REG), *m2 = calloc(1, REG), *src = malloc(LB), *dst = malloc(LB);
    char *ref = malloc(LB), *whole = malloc(REG);
    int ok = 1;
    trng_t r;
    trng_seed(&r, 555 + (unsigned)me);
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
        for (int it = 0; it < iters(24) && ok; it++) {
            int two = it % 3 == 2;
            int nd = (int)trng_range(&r, 1, 3);
            rmc_iov_t iov[3];
            void *sp[3][64], *dp[3][64];
            size_t slot = 0; /* distinct slots: remote and local offsets advance monotonically */
            size_t loff = 0;
            int ldense = it % 4 >= 2, desc = it % 5 == 4;
            for (int j = 0; j < nd; j++) {
                size_t bytes = (size_t)trng_range(&r, 1, 200);
                if (it % 4 == 1)
                    bytes = 8;
                int cnt = (int)trng_range(&r, 1, 40);
                iov[j].count = cnt;
                iov[j].bytes = bytes;
                iov[j].src = sp[j];
                iov[j].dst = dp[j];
                for (int i = 0; i < cnt; i++) {
                    slot += (size_t)trng_range(&r, 0, 2) * 8;
                    loff += ldense ? 0 : (size_t)trng_range(&r, 0, 3);
                    char *rb = (two && (i % 2)) ? (char *)b2[tgt] : (char *)b1[tgt];
                    sp[j][i] = src + loff;
                    dp[j][i] = rb + slot;
                    slot += bytes;
                    loff += bytes;
                }
                for (int i = 0; desc && i < cnt / 2; i++) { /* reverse the (src, dst) pairs */
                    void *ts = sp[j][i], *td = dp[j][i];
                    sp[j][i] = sp[j][cnt - 1 - i], dp[j][i] = dp[j][cnt - 1 - i];
                    sp[j][cnt - 1 - i] = ts, dp[j][cnt - 1 - i] = td;
                }
            }
            if (slot > REG || loff > LB) {
                fail_report(&ok, "vector generator", it, 0, "-");
                break;
            }
            for (size_t i = 0; i < LB; i++)
                src[i] = (char)trng_next(&r);
            rmc_status_t st;
            rmc_request_h q = RMC_REQUEST_NULL;
            if (it % 2)
                st = rmc_put_vector(iov, nd, tgt);
            else
                st = rmc_put_vector_nb(iov, nd, tgt, &q);
            if (st == RMC_OK)
                st = rmc_wait(&q);
            if (st != RMC_OK)
                fail_report(&ok, "put_vector status", it, 0, rmc_strided_method_name(methods[mi]));
            for (int j = 0; j < nd; j++)
                for (int i = 0; i < iov[j].count; i++) {
                    char *rb = (char *)dp[j][i];
                    int in2 = rb >= (char *)b2[tgt] && rb < (char *)b2[tgt] + REG;
                    char *mm = in2 ? m2 + (rb - (char *)b2[tgt]) : m1 + (rb - (char *)b1[tgt]);
                    memcpy(mm, sp[j][i], iov[j].bytes);
                }
            /* get the same segments back into a scratch buffer: swap roles */
            for (size_t i = 0; i < LB; i++)
                dst[i] = ref[i] = (char)(i + it);
            for (int j = 0; j < nd; j++)
                for (int i = 0; i < iov[j].count; i++) {
                    char *t = dp[j][i];
                    dp[j][i] = dst + ((char *)sp[j][i] - src);
                    sp[j][i] = t;
                    memcpy(ref + ((char *)dp[j][i] - dst), src + ((char *)dp[j][i] - dst),
                           iov[j].bytes);
                }
            if (it % 3)
                st = rmc_get_vector(iov, nd, tgt);
            else
                st = rmc_get_vector_nb(iov, nd, tgt, it % 2 ? &q : NULL);
            if (st == RMC_OK)
                st = rmc_wait(&q);
            if (st == RMC_OK)
                st = rmc_fence_all();
            if (st != RMC_OK || memcmp(dst, ref, LB) != 0)
                fail_report(&ok, "get_vector", it, 0, rmc_strided_method_name(methods[mi]));
        }
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_get(b1[tgt], whole, REG, tgt));
    MPI_CHECK_ALL(memcmp(whole, m1, REG) == 0);
    MPI_CHECK_OK(rmc_get(b2[tgt], whole, REG, tgt));
    MPI_CHECK_ALL(memcmp(whole, m2, REG) == 0);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(r2));
    MPI_CHECK_OK(rmc_region_free(r1));
    free(m1);
    free(m2);
    free(src);
    free(dst);
    free(ref);
    free(whole);
}

/* Zeroes the REG bytes at rank tgt's dst (through zero, REG bytes of scratch) and completes it:
 * RMC_OK or the failing call's status. No collective check: callers are inside loops a rank may
 * leave early. */
static rmc_status_t clear_remote(void *zero, void *dst, int tgt)
{
    memset(zero, 0, REG);
    rmc_status_t st = rmc_put(zero, dst, REG, tgt);
    return st == RMC_OK ? rmc_fence(tgt) : st;
}

/* Vector puts whose destinations repeat (a GA scatter's repeated subscripts through ARMCI_PutV):
 * 8-byte segments in random order over two descriptors, a third of them to addresses listed
 * before. Each address must end up holding one of the values written to it: the last in list
 * order except with the list protocol, where MPI does not order puts to one location. One call
 * in four also has a 16-byte segment half over an 8-byte one (a partial overlap: the list
 * protocol); every written address is checked, and the rest of the region stays untouched. */
static void test_vector_repeats(void **s)
{
    (void)s;
    enum { NS = 1500, SLOTS = REG / 8 };
    void *b[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(REG, b, &reg));
    int tgt = (me + 1) % np;
    uint64_t *val = malloc(sizeof(uint64_t) * (NS + 1)), *whole = malloc(REG);
    int *slot = malloc(sizeof(int) * (NS + 1)), *last = malloc(sizeof(int) * SLOTS);
    void **sp = malloc(sizeof(void *) * (NS + 1)), **dp = malloc(sizeof(void *) * (NS + 1));
    int ok = 1;
    trng_t r;
    trng_seed(&r, 777 + (unsigned)me);
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
        int list = methods[mi] == RMC_STRIDED_LIST;
        for (int it = 0; it < iters(8) && ok; it++) {
            int partial = it % 4 == 3, n = NS;
            if (clear_remote(whole, b[tgt], tgt) != RMC_OK) {
                fail_report(&ok, "clearing put", it, 0, rmc_strided_method_name(methods[mi]));
                break;
            }
            for (int i = 0; i < n; i++) {
                slot[i] = i > 0 && trng_range(&r, 0, 2) == 0 ? slot[trng_range(&r, 0, i - 1)]
                                                             : (int)trng_range(&r, 0, SLOTS - 3);
                val[i] = ((uint64_t)(it + 1) << 32) | (uint64_t)i;
                sp[i] = &val[i];
                dp[i] = (char *)b[tgt] + (size_t)slot[i] * 8;
            }
            rmc_iov_t iov[3] = {{sp, dp, n / 2, 8}, {sp + n / 2, dp + n / 2, n - n / 2, 8}};
            int nd = 2;
            uint64_t wide[2] = {0, 0};
            int wslot = slot[0] + 1;
            void *wsp = wide, *wdp = (char *)b[tgt] + (size_t)wslot * 8;
            if (partial) { /* 16 bytes over slot[0] + 1 .. + 2: half over slot[0]'s neighbour */
                wide[0] = ((uint64_t)(it + 1) << 32) | 0xffff0;
                wide[1] = ((uint64_t)(it + 1) << 32) | 0xffff1;
                iov[2] = (rmc_iov_t){&wsp, &wdp, 1, 16};
                nd = 3;
            }
            rmc_request_h q = RMC_REQUEST_NULL;
            rmc_status_t st =
                it % 2 ? rmc_put_vector(iov, nd, tgt) : rmc_put_vector_nb(iov, nd, tgt, &q);
            if (st == RMC_OK)
                st = rmc_wait(&q);
            if (st == RMC_OK)
                st = rmc_fence(tgt);
            if (st == RMC_OK)
                st = rmc_get(b[tgt], whole, REG, tgt);
            if (st != RMC_OK) {
                fail_report(&ok, "repeated-destination put status", it, 0,
                            rmc_strided_method_name(methods[mi]));
                break;
            }
            for (int k = 0; k < SLOTS; k++)
                last[k] = -1;
            for (int i = 0; i < n; i++)
                last[slot[i]] = i;
            for (int k = 0; k < SLOTS && ok; k++) {
                uint64_t got = whole[k];
                int wide_here = partial && (k == wslot || k == wslot + 1);
                int good;
                if (last[k] < 0 && !wide_here) {
                    good = got == 0;
                } else if (list || partial) { /* any value written to slot k */
                    good = wide_here && got == wide[k - wslot];
                    for (int i = 0; i < n && !good; i++)
                        good = slot[i] == k && got == val[i];
                } else {
                    good = got == val[last[k]];
                }
                if (!good) {
                    fprintf(stderr, "[rank %d] slot %d holds %#llx (last writer %d)\n", me, k,
                            (unsigned long long)got, last[k]);
                    fail_report(&ok, "repeated-destination put", it, 0,
                                rmc_strided_method_name(methods[mi]));
                }
            }
        }
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(reg));
    free(val);
    free(whole);
    free(slot);
    free(last);
    free(sp);
    free(dp);
}

/* Vector accumulates whose destinations repeat (NGA_Scatter_acc through ARMCI_AccV): int64 sums,
 * exact whatever the protocol. 8-byte segments in random order, a third of them to addresses
 * listed before (at most 4 on one: the typed path's rounds); every other iteration one address
 * takes 12 of them (more rounds than the typed path takes: the list protocol). Blocking,
 * implicit and request forms. */
static void test_vector_acc_repeats(void **s)
{
    (void)s;
    enum { NS = 1200, SLOTS = REG / 8 };
    void *b[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(REG, b, &reg));
    int tgt = (me + 1) % np;
    int64_t *val = malloc(sizeof(int64_t) * NS), *want = malloc(REG), *whole = malloc(REG);
    int *slot = malloc(sizeof(int) * NS), *mult = malloc(sizeof(int) * SLOTS),
        *first = malloc(sizeof(int) * NS);
    void **sp = malloc(sizeof(void *) * NS), **dp = malloc(sizeof(void *) * NS);
    int ok = 1;
    const int64_t three = 3;
    trng_t r;
    trng_seed(&r, 999 + (unsigned)me);
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
        for (int it = 0; it < iters(8) && ok; it++) {
            if (clear_remote(want, b[tgt], tgt) != RMC_OK) {
                fail_report(&ok, "clearing put", it, 0, rmc_strided_method_name(methods[mi]));
                break;
            }
            int nfirst = 0; /* first[0, nfirst): the slots listed once so far */
            memset(mult, 0, sizeof(int) * SLOTS);
            for (int i = 0; i < NS; i++) {
                if (it % 2 && i % 100 == 7) {
                    slot[i] = 5; /* 12 segments on one address */
                } else if (nfirst > 0 && trng_range(&r, 0, 2) == 0) { /* a repeat, at most 4 */
                    int k = (int)trng_range(&r, 0, nfirst - 1);
                    slot[i] = first[k];
                    if (mult[first[k]] + 1 == 4)
                        first[k] = first[--nfirst];
                } else {
                    do
                        slot[i] = 6 + (int)trng_range(&r, 0, SLOTS - 7);
                    while (mult[slot[i]]);
                    first[nfirst++] = slot[i];
                }
                mult[slot[i]]++;
                val[i] = (int64_t)trng_range(&r, -1000000, 1000000);
                sp[i] = &val[i];
                dp[i] = (char *)b[tgt] + (size_t)slot[i] * 8;
                want[slot[i]] += 3 * val[i];
            }
            rmc_iov_t iov[2] = {{sp, dp, NS / 3, 8}, {sp + NS / 3, dp + NS / 3, NS - NS / 3, 8}};
            rmc_request_h q = RMC_REQUEST_NULL;
            rmc_status_t st = it % 3 == 0 ? rmc_acc_vector(RMC_ACC_INT64, &three, iov, 2, tgt)
                              : it % 3 == 1
                                  ? rmc_acc_vector_nb(RMC_ACC_INT64, &three, iov, 2, tgt, &q)
                                  : rmc_acc_vector_nb(RMC_ACC_INT64, &three, iov, 2, tgt, NULL);
            if (st == RMC_OK)
                st = rmc_wait(&q);
            if (st == RMC_OK)
                st = rmc_fence(tgt);
            if (st == RMC_OK)
                st = rmc_get(b[tgt], whole, REG, tgt);
            if (st != RMC_OK || memcmp(whole, want, REG) != 0) {
                for (int k = 0; k < SLOTS && st == RMC_OK; k++)
                    if (whole[k] != want[k]) {
                        fprintf(stderr, "[rank %d] slot %d holds %lld, want %lld\n", me, k,
                                (long long)whole[k], (long long)want[k]);
                        break;
                    }
                fail_report(&ok, "repeated-destination accumulate", it, 0,
                            rmc_strided_method_name(methods[mi]));
            }
        }
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(reg));
    free(val);
    free(want);
    free(whole);
    free(slot);
    free(mult);
    free(first);
    free(sp);
    free(dp);
}

/* Large patches (beyond the 32 KiB pieces of the typed protocols, and more than 512 chunks for
 * the list protocol), put / get / accumulate of doubles, against the mirror. */
static void test_large(void **s)
{
    (void)s;
    enum { BIG = 1 << 20 };
    void *bases[64];
    rmc_region_h reg;
    MPI_CHECK_OK(rmc_region_alloc(BIG, bases, &reg));
    int tgt = (me + 1) % np, from = (me - 1 + np) % np;
    char *mirror = calloc(1, BIG), *src = aligned_alloc(64, BIG), *got = aligned_alloc(64, BIG);
    char *ref = aligned_alloc(64, BIG);
    int ok = 1;
    trng_t r;
    trng_seed(&r, 777u + (unsigned)me);
    /* shapes: {levels, l0, counts..., local dense?} chosen to cross the piece size at various
     * levels */
    static const int shapes[][6] = {
        {1, 8, 6000, 0, 0, 1},  /* tall-skinny: 48 KB in 8-byte chunks */
        {1, 64, 2000, 0, 0, 0}, /* 128 KB, local side strided */
        {2, 24, 40, 100, 0, 1}, /* 96 KB, pieces split along level 2 */
        {3, 16, 8, 30, 20, 0},  /* 77 KB, 3 levels */
        {1, 40000, 3, 0, 0, 1}, /* chunks larger than a piece */
        {2, 4096, 3, 9, 0, 1},  /* level-1 blocks of 12 KB */
        {1, 12, 3000, 0, 0, 1}, /* 4-byte words (12-byte chunks, strides 4 mod 8) */
        {2, 5, 7, 900, 0, 0},   /* bytes (odd chunks) */
    };
    int nshapes = (int)(sizeof(shapes) / sizeof(shapes[0]));
    for (size_t mi = 0; mi < NMETHODS; mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(methods[mi]));
        for (int si = 0; si < nshapes && ok; si++) {
            tdesc_t td;
            memset(&td, 0, sizeof td);
            td.levels = shapes[si][0];
            td.count[0] = shapes[si][1];
            for (int k = 1; k <= td.levels; k++)
                td.count[k] = shapes[si][1 + k];
            size_t se = (size_t)td.count[0], de = se;
            for (int k = 1; k <= td.levels; k++) {
                /* remote: gaps of 8..24 bytes; local: dense or with 8-byte gaps */
                td.dstr[k - 1] = (int)(de + 8 * (size_t)trng_range(&r, 1, 3));
                td.sstr[k - 1] = (int)(shapes[si][5] ? se : se + 8);
                se += (size_t)td.sstr[k - 1] * (size_t)(td.count[k] - 1);
                de += (size_t)td.dstr[k - 1] * (size_t)(td.count[k] - 1);
            }
            td.sext = se;
            td.dext = de;
            if (se > BIG || de > BIG) {
                fail_report(&ok, "large shape too big", si, td.levels, "-");
                break;
            }
            /* put */
            double *sv = (double *)(void *)src;
            for (size_t i = 0; i < BIG / 8; i++)
                sv[i] = (double)trng_range(&r, -50, 50);
            size_t doff = 8 * (size_t)trng_range(&r, 0, (long)((BIG - de) / 8));
            if (rmc_put_strided(src, td.sstr, (char *)bases[tgt] + doff, td.dstr, td.count,
                                td.levels, tgt) != RMC_OK)
                fail_report(&ok, "large put status", si, td.levels,
                            rmc_strided_method_name(methods[mi]));
            tref_copy(mirror + doff, src, &td);
            /* accumulate (doubles, scale 2) on the same patch, when it is made of doubles */
            int dbl = td.count[0] % 8 == 0;
            for (int k = 0; k < td.levels; k++)
                dbl &= td.sstr[k] % 8 == 0 && td.dstr[k] % 8 == 0;
            if (dbl) {
                for (size_t i = 0; i < BIG / 8; i++)
                    sv[i] = (double)trng_range(&r, -50, 50);
                double two = 2.0;
                rmc_request_h q = RMC_REQUEST_NULL;
                rmc_status_t st = rmc_acc_strided_nb(RMC_ACC_DOUBLE, &two, src, td.sstr,
                                                     (char *)bases[tgt] + doff, td.dstr, td.count,
                                                     td.levels, tgt, &q);
                if (st == RMC_OK)
                    st = rmc_wait(&q);
                if (st != RMC_OK)
                    fail_report(&ok, "large acc status", si, td.levels,
                                rmc_strided_method_name(methods[mi]));
                tref_acc(RMC_ACC_DOUBLE, &two, mirror + doff, src, &td);
            }
            /* get back with the roles of the strides swapped */
            tdesc_t tg = td;
            memcpy(tg.sstr, td.dstr, sizeof tg.sstr);
            memcpy(tg.dstr, td.sstr, sizeof tg.dstr);
            memset(got, 0x3c, BIG);
            memset(ref, 0x3c, BIG);
            tref_copy(ref, mirror + doff, &tg);
            if (rmc_get_strided((char *)bases[tgt] + doff, tg.sstr, got, tg.dstr, tg.count,
                                tg.levels, tgt) != RMC_OK ||
                memcmp(got, ref, BIG) != 0)
                fail_report(&ok, "large get", si, td.levels, rmc_strided_method_name(methods[mi]));
        }
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_Sendrecv(mirror, BIG, MPI_BYTE, tgt, 11, got, BIG, MPI_BYTE, from, 11, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_CHECK_ALL(memcmp(got, bases[me], BIG) == 0);
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_region_free(reg));
    free(mirror);
    free(src);
    free(got);
    free(ref);
}

#ifdef STRIDED_ALL_METHODS
/* RMC_STRIDED_METHOD set before rmc_init selects the method; unknown values fall back to auto. */
static void test_env_knob(void **s)
{
    (void)s;
    static const char *const names[] = {"datatype", "list", "pack", "auto"};
    for (int i = 0; i < 4; i++) {
        MPI_CHECK_OK(rmc_finalize());
        setenv("RMC_STRIDED_METHOD", names[i], 1);
        MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
        MPI_CHECK_ALL(strcmp(rmc_strided_method_name(rmc_strided_method_get()), names[i]) == 0);
        MPI_CHECK_ALL(strcmp(rmc_knob_value("RMC_STRIDED_METHOD"), names[i]) == 0);
        /* a transfer with the knob's method */
        void *bases[64];
        rmc_region_h reg;
        MPI_CHECK_OK(rmc_region_alloc(4096, bases, &reg));
        int tgt = (me + 1) % np;
        char src[16 * 16], back[16 * 16];
        for (int k = 0; k < 256; k++)
            src[k] = (char)(k + i);
        rmc_strided_stats_t a, b;
        rmc_strided_stats(&a);
        MPI_CHECK_OK(rmc_put_2d(src, 16, bases[tgt], 64, 16, 16, tgt));
        MPI_CHECK_OK(rmc_get_2d(bases[tgt], 64, back, 16, 16, 16, tgt));
        rmc_strided_stats(&b);
        MPI_CHECK_ALL(memcmp(src, back, sizeof src) == 0);
        int used = 1;
        if (rmc_same_node(tgt) == 0) {
            if (i == 0)
                used = b.datatype_ops == a.datatype_ops + 2;
            else if (i == 1)
                used = b.list_ops == a.list_ops + 2;
            else if (i == 2)
                used = b.pack_ops == a.pack_ops + 2;
        }
        MPI_CHECK_ALL(used);
        MPI_CHECK_OK(rmc_region_free(reg));
    }
    MPI_CHECK_OK(rmc_finalize());
    setenv("RMC_STRIDED_METHOD", "bogus", 1);
    fflush(stderr);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2); /* the warning is expected */
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    rmc_strided_method_t m = rmc_strided_method_get();
    dup2(saved, 2);
    close(saved);
    close(devnull);
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(m == RMC_STRIDED_AUTO);
    MPI_CHECK_ALL(rmc_strided_method_get() == RMC_STRIDED_AUTO);
    unsetenv("RMC_STRIDED_METHOD");
    MPI_CHECK_ALL(rmc_strided_method_set((rmc_strided_method_t)9) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_strided_method_get() == RMC_STRIDED_AUTO);
}
#endif

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_putget_neighbor),
        cmocka_unit_test(test_putget_self),
        cmocka_unit_test(test_putget_nb_request),
        cmocka_unit_test(test_putget_nb_implicit),
        cmocka_unit_test(test_many_outstanding),
        cmocka_unit_test(test_repeated_shapes),
        cmocka_unit_test(test_2d),
        cmocka_unit_test(test_vector),
        cmocka_unit_test(test_vector_repeats),
        cmocka_unit_test(test_vector_acc_repeats),
        cmocka_unit_test(test_large),
#ifdef STRIDED_ALL_METHODS
        cmocka_unit_test(test_env_knob),
#endif
    };
    return MPITEST_RUN("strided put/get", tests, setup, mpitest_teardown_rmc);
}
