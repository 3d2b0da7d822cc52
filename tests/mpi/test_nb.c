/* Non-blocking put/get: many outstanding requests mixing puts and gets to several targets,
 * completed in random and reverse order, by rmc_wait_all and by rmc_test loops; source buffers of
 * puts are untouched by RMC and may be reused after completion; RMC_REQUEST_NULL handling; released
 * requests are refused. */
#include "mpitest.h"

#define NREQ  256
#define CHUNK 200 /* bytes per operation (odd offsets inside) */

static int me, n;
static void **bases;
static rmc_region_h region;
/* my part: [0, n*NREQ*CHUNK) receives puts (slot per origin and op), then a source area read by
 * gets: [PUTS, PUTS + NREQ*CHUNK) holding my pattern */
static size_t PUTS;

static int setup(void **state)
{
    if (mpitest_setup_rmc(state))
        return -1;
    me = rmc_rank();
    n = rmc_nranks();
    PUTS = (size_t)n * NREQ * CHUNK;
    bases = malloc((size_t)n * sizeof(void *));
    if (!bases || rmc_region_alloc(PUTS + NREQ * CHUNK, bases, &region) != RMC_OK)
        return -1;
    /* the get source area: my pattern, stored locally before anyone reads it */
    unsigned char *src = (unsigned char *)bases[me] + PUTS;
    for (size_t j = 0; j < NREQ * CHUNK; j++)
        src[j] = mpitest_pat(me, j, 0x77);
    return rmc_barrier() == RMC_OK ? 0 : -1;
}

static int teardown(void **state)
{
    int bad = rmc_region_free(region) != RMC_OK;
    free(bases);
    return mpitest_teardown_rmc(state) || bad ? -1 : 0;
}

/* Deterministic shuffle (xorshift), same on every rank. */
static void shuffle(int *a, int len, unsigned seed)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ seed;
    for (int i = len - 1; i > 0; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int j = (int)(x % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Operation i: even = put, odd = get; target cycles through all ranks; sizes vary 1..CHUNK-8 and
 * addresses are unaligned. */
static int op_target(int i)
{
    return (me + 1 + i) % n;
}
static size_t op_len(int i)
{
    return 1 + (size_t)(i * 73) % (CHUNK - 8);
}
static size_t op_off(int i)
{
    return (size_t)i * CHUNK + 1 + (size_t)i % 7;
}

enum { BY_ORDER, BY_REVERSE, BY_RANDOM, BY_WAIT_ALL, BY_TEST };

/* Issues NREQ operations with requests, completes them as `how` says, checks everything. */
static void run_batch(int how, unsigned salt)
{
    unsigned char *srcs = malloc((size_t)NREQ * CHUNK), *orig = malloc((size_t)NREQ * CHUNK);
    unsigned char *dsts = malloc((size_t)NREQ * CHUNK);
    rmc_request_h *reqs = malloc(NREQ * sizeof(rmc_request_h));
    int *order = malloc(NREQ * sizeof(int));
    memset(dsts, 0xEE, (size_t)NREQ * CHUNK);
    for (size_t j = 0; j < (size_t)NREQ * CHUNK; j++)
        srcs[j] = mpitest_pat(me, j, salt);
    memcpy(orig, srcs, (size_t)NREQ * CHUNK);
    /* clear my receive area: every rank's puts into it come after the barrier */
    memset(bases[me], 0, PUTS);
    MPI_CHECK_OK(rmc_barrier());

    int ok = 1, nlive = 0;
    for (int i = 0; i < NREQ; i++) {
        int t = op_target(i);
        size_t len = op_len(i), off = op_off(i);
        reqs[i] = (rmc_request_h)&ok; /* must be overwritten */
        if (i % 2 == 0) {
            char *dst = (char *)bases[t] + (size_t)me * NREQ * CHUNK + off;
            ok &= rmc_put_nb(srcs + off, dst, len, t, &reqs[i]) == RMC_OK;
        } else {
            const char *src = (const char *)bases[t] + PUTS + off;
            ok &= rmc_get_nb(src, dsts + off, len, t, &reqs[i]) == RMC_OK;
        }
        ok &= reqs[i] != (rmc_request_h)&ok;
        /* node-local targets complete at once (no request) */
        if (rmc_same_node(t) == 1)
            ok &= reqs[i] == RMC_REQUEST_NULL;
        nlive += reqs[i] != RMC_REQUEST_NULL;
    }
    /* put sources are never written by RMC */
    ok &= memcmp(srcs, orig, (size_t)NREQ * CHUNK) == 0;

    for (int i = 0; i < NREQ; i++)
        order[i] = i;
    if (how == BY_REVERSE)
        for (int i = 0; i < NREQ; i++)
            order[i] = NREQ - 1 - i;
    if (how == BY_RANDOM)
        shuffle(order, NREQ, salt);
    switch (how) {
    case BY_ORDER:
    case BY_REVERSE:
    case BY_RANDOM:
        for (int k = 0; k < NREQ; k++) {
            int i = order[k];
            ok &= rmc_wait(&reqs[i]) == RMC_OK;
            ok &= reqs[i] == RMC_REQUEST_NULL;
            if (i % 2 == 0) /* completed put: its source still holds what was sent */
                ok &= memcmp(srcs + op_off(i), orig + op_off(i), op_len(i)) == 0;
            else /* completed get: the data is here now */
                for (size_t j = 0; j < op_len(i); j++)
                    ok &= dsts[op_off(i) + j] == mpitest_pat(op_target(i), op_off(i) + j, 0x77);
        }
        break;
    case BY_WAIT_ALL:
        ok &= rmc_wait_all(reqs, NREQ) == RMC_OK;
        for (int i = 0; i < NREQ; i++)
            ok &= reqs[i] == RMC_REQUEST_NULL;
        break;
    case BY_TEST: {
        /* test loop in a shuffled order until all are done; bounded by time, never a hang */
        shuffle(order, NREQ, salt + 1);
        char fin[NREQ];
        memset(fin, 0, sizeof(fin));
        int left = NREQ;
        for (double t0 = MPI_Wtime(); left > 0 && MPI_Wtime() - t0 < 60;)
            for (int k = 0; k < NREQ; k++) {
                int i = order[k], done = -1;
                if (fin[i])
                    continue;
                rmc_request_h before = reqs[i];
                ok &= rmc_test(&reqs[i], &done) == RMC_OK;
                if (done == 1) {
                    ok &= reqs[i] == RMC_REQUEST_NULL;
                    fin[i] = 1;
                    left--;
                } else {
                    /* not yet: the request stays as it was (RMC_REQUEST_NULL is always done) */
                    ok &= done == 0 && reqs[i] == before && before != RMC_REQUEST_NULL;
                }
            }
        ok &= left == 0;
        break;
    }
    }
    /* every get landed, and nothing outside the gets' ranges was written */
    for (int i = 1; i < NREQ; i += 2) {
        size_t off = op_off(i), len = op_len(i);
        ok &= dsts[off - 1] == 0xEE && dsts[off + len] == 0xEE;
        for (size_t j = 0; j < len; j++)
            ok &= dsts[off + j] == mpitest_pat(op_target(i), off + j, 0x77);
    }
    /* completed puts: the buffers are the caller's again; overwriting them changes nothing remote
     */
    memset(srcs, 0, (size_t)NREQ * CHUNK);
    MPI_CHECK_OK(rmc_barrier());
    /* every put arrived: check my receive area, origin by origin */
    const unsigned char *mine = bases[me];
    for (int o = 0; o < n; o++)
        for (int i = 0; i < NREQ; i += 2) {
            if ((o + 1 + i) % n != me)
                continue;
            size_t off = op_off(i), len = op_len(i);
            const unsigned char *p = mine + (size_t)o * NREQ * CHUNK + off;
            ok &= p[-1] == 0 && p[len] == 0;
            for (size_t j = 0; j < len; j++)
                ok &= p[j] == mpitest_pat(o, off + j, salt);
        }
    if (!ok)
        fprintf(stderr, "[rank %d] batch completed by way %d wrong (%d live requests)\n", me, how,
                nlive);
    MPI_CHECK_ALL(ok);
    free(srcs);
    free(orig);
    free(dsts);
    free(reqs);
    free(order);
}

static void test_wait_in_order(void **state)
{
    (void)state;
    run_batch(BY_ORDER, 1);
}
static void test_wait_reverse(void **state)
{
    (void)state;
    run_batch(BY_REVERSE, 2);
}
static void test_wait_random(void **state)
{
    (void)state;
    run_batch(BY_RANDOM, 3);
    run_batch(BY_RANDOM, 4);
}
static void test_wait_all(void **state)
{
    (void)state;
    run_batch(BY_WAIT_ALL, 5);
}
static void test_test_loop(void **state)
{
    (void)state;
    run_batch(BY_TEST, 6);
}

/* Implicit-handle operations (req NULL) mixed with requests and blocking ones, to several targets,
 * completed by fence(target) one target at a time. */
static void test_implicit_fence(void **state)
{
    (void)state;
    const int nops = 64;
    unsigned char *srcs = malloc((size_t)nops * CHUNK), *dsts = malloc((size_t)nops * CHUNK);
    for (size_t j = 0; j < (size_t)nops * CHUNK; j++)
        srcs[j] = mpitest_pat(me, j, 9);
    memset(dsts, 0xEE, (size_t)nops * CHUNK);
    memset(bases[me], 0, PUTS);
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1;
    rmc_request_h q[64];
    for (int i = 0; i < nops; i++) {
        int t = op_target(i);
        size_t len = op_len(i), off = op_off(i);
        q[i] = RMC_REQUEST_NULL;
        if (i % 2 == 0)
            ok &= rmc_put_nb(srcs + off, (char *)bases[t] + (size_t)me * NREQ * CHUNK + off, len, t,
                             i % 4 == 0 ? NULL : &q[i]) == RMC_OK;
        else if (i % 3 == 0)
            ok &= rmc_get((char *)bases[t] + PUTS + off, dsts + off, len, t) == RMC_OK;
        else
            ok &= rmc_get_nb((char *)bases[t] + PUTS + off, dsts + off, len, t, NULL) == RMC_OK;
    }
    for (int i = 0; i < nops; i++)
        ok &= rmc_wait(&q[i]) == RMC_OK;
    for (int k = 0; k < n; k++)
        ok &= rmc_fence((me + k) % n) == RMC_OK;
    for (int i = 1; i < nops; i += 2)
        for (size_t j = 0; j < op_len(i); j++)
            ok &= dsts[op_off(i) + j] == mpitest_pat(op_target(i), op_off(i) + j, 0x77);
    /* fenced puts are visible to their targets after a plain synchronization */
    MPI_Barrier(MPI_COMM_WORLD);
    const unsigned char *mine = bases[me];
    for (int o = 0; o < n; o++)
        for (int i = 0; i < nops; i += 2) {
            if ((o + 1 + i) % n != me)
                continue;
            for (size_t j = 0; j < op_len(i); j++)
                ok &= mine[(size_t)o * NREQ * CHUNK + op_off(i) + j] ==
                      mpitest_pat(o, op_off(i) + j, 9);
        }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    free(srcs);
    free(dsts);
}

/* RMC_REQUEST_NULL, NULL arguments, released and foreign requests. */
static void test_request_handles(void **state)
{
    (void)state;
    int ok = 1;
    rmc_request_h q = RMC_REQUEST_NULL;
    ok &= rmc_wait(&q) == RMC_OK && q == RMC_REQUEST_NULL;
    int done = 0;
    ok &= rmc_test(&q, &done) == RMC_OK && done == 1 && q == RMC_REQUEST_NULL;
    rmc_request_h several[3] = {RMC_REQUEST_NULL, RMC_REQUEST_NULL, RMC_REQUEST_NULL};
    ok &= rmc_wait_all(several, 3) == RMC_OK;
    ok &= rmc_wait_all(NULL, 0) == RMC_OK;
    ok &= rmc_wait_all(several, 0) == RMC_OK;
    ok &= rmc_wait_all(NULL, 2) == RMC_ERR_ARG;
    ok &= rmc_wait(NULL) == RMC_ERR_ARG;
    ok &= rmc_test(NULL, &done) == RMC_ERR_ARG;
    ok &= rmc_test(&q, NULL) == RMC_ERR_ARG;
    /* something that was never a request (zeroed memory): refused, not touched */
    uint64_t fake[32];
    memset(fake, 0, sizeof(fake));
    q = (rmc_request_h)fake;
    ok &= rmc_wait(&q) == RMC_ERR_HANDLE && q == (rmc_request_h)fake;
    ok &= rmc_test(&q, &done) == RMC_ERR_HANDLE && q == (rmc_request_h)fake;
    ok &= rmc_wait_all(&q, 1) == RMC_ERR_HANDLE && q == (rmc_request_h)fake;
    for (int i = 0; i < 32; i++)
        ok &= fake[i] == 0;

    /* a live request (needs a target that is not node-local) waited twice through a copy */
    int t = -1;
    for (int k = 1; k < n && t < 0; k++)
        if (rmc_same_node((me + k) % n) == 0)
            t = (me + k) % n;
    unsigned char v[16] = "released-request", w[16];
    if (t >= 0) {
        ok &= rmc_put_nb(v, (char *)bases[t] + (size_t)me * NREQ * CHUNK, 16, t, &q) == RMC_OK;
        ok &= q != RMC_REQUEST_NULL;
        rmc_request_h copy = q;
        ok &= rmc_wait(&q) == RMC_OK && q == RMC_REQUEST_NULL;
        ok &= rmc_wait(&copy) == RMC_ERR_HANDLE;
        ok &= rmc_test(&copy, &done) == RMC_ERR_HANDLE;
        rmc_request_h arr[2] = {copy, RMC_REQUEST_NULL};
        ok &= rmc_wait_all(arr, 2) == RMC_ERR_HANDLE;
        /* same with a get completed by rmc_test */
        ok &= rmc_get_nb((char *)bases[t] + (size_t)me * NREQ * CHUNK, w, 16, t, &q) == RMC_OK;
        copy = q;
        done = 0;
        for (double t0 = MPI_Wtime(); !done && MPI_Wtime() - t0 < 30;)
            ok &= rmc_test(&q, &done) == RMC_OK;
        ok &= done == 1 && q == RMC_REQUEST_NULL && memcmp(v, w, 16) == 0;
        ok &= rmc_wait(&copy) == RMC_ERR_HANDLE;
        /* the next operations' requests are not the released one: the stale copy neither
         * completes them nor takes their handles from their owner */
        rmc_request_h next[4];
        for (int k = 0; k < 4; k++)
            ok &= rmc_get_nb((char *)bases[t] + (size_t)me * NREQ * CHUNK, w, 16, t, &next[k]) ==
                  RMC_OK;
        ok &= rmc_wait(&copy) == RMC_ERR_HANDLE;
        for (int k = 0; k < 4; k++)
            ok &= next[k] != copy && rmc_wait(&next[k]) == RMC_OK;
    } else {
        /* every peer is node-local: operations complete at once and hand back no request */
        t = (me + 1) % n;
        q = (rmc_request_h)fake;
        ok &= rmc_put_nb(v, (char *)bases[t] + (size_t)me * NREQ * CHUNK, 16, t, &q) == RMC_OK;
        ok &= q == RMC_REQUEST_NULL;
        q = (rmc_request_h)fake;
        ok &= rmc_get_nb((char *)bases[t] + (size_t)me * NREQ * CHUNK, w, 16, t, &q) == RMC_OK;
        ok &= q == RMC_REQUEST_NULL && memcmp(v, w, 16) == 0;
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
}

/* Requests of non-blocking strided, vector and CAS operations on a region freed before they are
 * waited (each strided method: the pack protocol's gets unpack at completion): the free completes
 * the region's operations, so a later rmc_wait returns RMC_OK and the gets' data is there. */
static void test_wait_after_free(void **state)
{
    (void)state;
    static const rmc_strided_method_t ms[] = {RMC_STRIDED_DATATYPE, RMC_STRIDED_PACK,
                                              RMC_STRIDED_LIST};
    enum { RB = 4096 };
    int t = (me + 1) % n, ok = 1;
    void **b = malloc((size_t)n * sizeof(void *));
    MPI_CHECK_ALL(b != NULL);
    for (size_t mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++) {
        MPI_CHECK_OK(rmc_strided_method_set(ms[mi]));
        rmc_region_h r;
        MPI_CHECK_OK(rmc_region_alloc(RB, b, &r));
        unsigned char *mine = b[me], *tb = b[t];
        for (int i = 0; i < RB; i++)
            mine[i] = (unsigned char)mpitest_pat(me, (size_t)i, (unsigned)mi);
        MPI_CHECK_OK(rmc_barrier());
        unsigned char src[1024], sget[1024] = {0}, vget[64] = {0};
        memset(src, 0x5a, sizeof(src));
        int str[1] = {64}, cnt[2] = {16, 4};
        rmc_request_h q[5] = {RMC_REQUEST_NULL, RMC_REQUEST_NULL, RMC_REQUEST_NULL,
                              RMC_REQUEST_NULL, RMC_REQUEST_NULL};
        ok &= rmc_put_strided_nb(src, str, tb + 2048, str, cnt, 1, t, &q[0]) == RMC_OK;
        ok &= rmc_get_strided_nb(tb, str, sget, str, cnt, 1, t, &q[1]) == RMC_OK;
        void *vs[4] = {src, src + 64, src + 128, src + 192};
        void *vd[4] = {tb + 2560, tb + 2640, tb + 2720, tb + 2800};
        rmc_iov_t pv = {.src = vs, .dst = vd, .bytes = 16, .count = 4};
        ok &= rmc_put_vector_nb(&pv, 1, t, &q[2]) == RMC_OK;
        void *gs[4] = {tb + 1000, tb + 1100, tb + 1200, tb + 1300};
        void *gd[4] = {vget, vget + 16, vget + 32, vget + 48};
        rmc_iov_t gv = {.src = gs, .dst = gd, .bytes = 16, .count = 4};
        ok &= rmc_get_vector_nb(&gv, 1, t, &q[3]) == RMC_OK;
        int64_t old = -1;
        ok &= rmc_amo_cas_i64_nb(tb + 3072, 0, 42, &old, t, &q[4]) == RMC_OK;
        MPI_CHECK_OK(rmc_region_free(r));
        for (int i = 0; i < 5; i++) {
            rmc_status_t st = rmc_wait(&q[i]);
            if (st != RMC_OK || q[i] != RMC_REQUEST_NULL) {
                fprintf(stderr, "[rank %d] method %s: wait of request %d after the free: %s\n", me,
                        rmc_strided_method_name(ms[mi]), i, rmc_status_string(st));
                ok = 0;
            }
        }
        for (int r = 0; r < 4; r++)
            for (int j = 0; j < 16; j++) {
                ok &= sget[64 * r + j] ==
                      (unsigned char)mpitest_pat(t, (size_t)(64 * r + j), (unsigned)mi);
                ok &= vget[16 * r + j] ==
                      (unsigned char)mpitest_pat(t, (size_t)(1000 + 100 * r + j), (unsigned)mi);
            }
        int64_t pat;
        unsigned char pb[8];
        for (int j = 0; j < 8; j++)
            pb[j] = (unsigned char)mpitest_pat(t, (size_t)(3072 + j), (unsigned)mi);
        memcpy(&pat, pb, 8);
        ok &= old == pat;
    }
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    free(b);
    MPI_CHECK_ALL(ok);
}

MPITEST_MAIN("nb", setup, teardown, test_wait_in_order, test_wait_reverse, test_wait_random,
             test_wait_all, test_test_loop, test_implicit_fence, test_request_handles,
             test_wait_after_free)
