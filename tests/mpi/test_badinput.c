/* Bad input gets a clear status and changes nothing: ranks out of range, addresses in no region,
 * ranges crossing a region's end, NULL buffers, use after free, double free, foreign handles,
 * double init, NULL output arguments. After every group each rank checks that its memory is
 * unchanged, that get destinations were not written, and that no operation was issued.
 *
 * An address in no region may be dynamically registered memory: the target itself may be asked
 * (active message). Each group therefore ends with rmc_barrier (inside RMC, so such questions are
 * answered) before the verdict is agreed. */
#include <limits.h>
#include "mpitest.h"

#define SIZE 1024

static int me, n;
static void **bases;
static rmc_region_h region;

static void fill_mine(void)
{
    unsigned char *p = bases[me];
    for (size_t j = 0; j < SIZE; j++)
        p[j] = mpitest_pat(me, j, 0xBA);
}

static int setup(void **state)
{
    if (mpitest_setup_rmc(state))
        return -1;
    me = rmc_rank();
    n = rmc_nranks();
    bases = malloc((size_t)n * sizeof(void *));
    if (!bases || rmc_region_alloc(SIZE, bases, &region) != RMC_OK)
        return -1;
    fill_mine();
    return rmc_barrier() == RMC_OK ? 0 : -1;
}

static int teardown(void **state)
{
    int bad = rmc_region_free(region) != RMC_OK;
    free(bases);
    return mpitest_teardown_rmc(state) || bad ? -1 : 0;
}

static unsigned long long ops(void)
{
    rmc_comm_stats_t s;
    if (rmc_comm_stats(&s) != RMC_OK)
        return ~0ull;
    return s.local_ops + s.remote_ops + s.flushes;
}

#define EXPECT(c) MPITEST_EXPECT(ok, c)

/* Ends a group: stay in RMC until every rank is done, then check my memory and agree. */
static void finish(int ok, const unsigned char *dst, size_t dlen, unsigned long long ops0)
{
    EXPECT(ops() == ops0); /* nothing was issued */
    MPI_CHECK_OK(rmc_barrier());
    const unsigned char *p = bases[me];
    for (size_t j = 0; j < SIZE; j++)
        if (p[j] != mpitest_pat(me, j, 0xBA)) {
            fprintf(stderr, "[rank %d] byte %zu of my part changed\n", me, j);
            ok = 0;
            break;
        }
    for (size_t j = 0; j < dlen; j++)
        if (dst[j] != 0xEE) {
            fprintf(stderr, "[rank %d] get destination written at %zu\n", me, j);
            ok = 0;
            break;
        }
    MPI_CHECK_ALL(ok);
}

/* All four transfer calls with the same arguments must give `want`, issue nothing, and the nb forms
 * must hand back RMC_REQUEST_NULL. */
static int all_forms(const void *remote, size_t bytes, int rank, rmc_status_t want,
                     unsigned char *dst)
{
    int ok = 1;
    unsigned char src[64];
    memset(src, 0x11, sizeof(src));
    const unsigned char *s = bytes <= sizeof(src) ? src : dst; /* dst is large enough for any */
    rmc_request_h q;
    EXPECT(rmc_put(s, (void *)remote, bytes, rank) == want);
    EXPECT(rmc_get(remote, dst, bytes, rank) == want);
    q = (rmc_request_h)&ok;
    EXPECT(rmc_put_nb(s, (void *)remote, bytes, rank, &q) == want);
    EXPECT(q == RMC_REQUEST_NULL);
    q = (rmc_request_h)&ok;
    EXPECT(rmc_get_nb(remote, dst, bytes, rank, &q) == want);
    EXPECT(q == RMC_REQUEST_NULL);
    EXPECT(rmc_put_nb(s, (void *)remote, bytes, rank, NULL) == want);
    EXPECT(rmc_get_nb(remote, dst, bytes, rank, NULL) == want);
    if (!ok)
        fprintf(stderr, "[rank %d]   (remote %p, %zu bytes, rank %d, want %s)\n", me, remote, bytes,
                rank, rmc_status_string(want));
    return ok;
}

static void test_bad_rank(void **state)
{
    (void)state;
    unsigned char dst[SIZE + 64];
    memset(dst, 0xEE, sizeof(dst));
    unsigned long long ops0 = ops();
    int ok = 1;
    const int bad[] = {-1, n, n + 5, INT_MAX, INT_MIN};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        int r = bad[k];
        /* even with an address that is valid on some rank */
        ok &= all_forms(bases[0], 8, r, RMC_ERR_RANK, dst);
        ok &= all_forms(NULL, 8, r, RMC_ERR_RANK, dst);
        EXPECT(rmc_fence(r) == RMC_ERR_RANK);
        void *b = (void *)&ok;
        size_t sz = 77;
        EXPECT(rmc_region_base(region, r, &b, &sz) == RMC_ERR_RANK);
        EXPECT(b == (void *)&ok && sz == 77);
        EXPECT(rmc_same_node(r) == -1);
    }
    /* rank checked before anything else, even for empty transfers */
    EXPECT(rmc_put(NULL, NULL, 0, -1) == RMC_ERR_RANK);
    EXPECT(rmc_get(NULL, NULL, 0, n) == RMC_ERR_RANK);
    /* the good ranks still fence fine */
    for (int r = 0; r < n; r++)
        EXPECT(rmc_fence(r) == RMC_OK);
    finish(ok, dst, sizeof(dst), ops0);
}

static void test_bad_address(void **state)
{
    (void)state;
    unsigned char dst[SIZE + 64];
    memset(dst, 0xEE, sizeof(dst));
    unsigned long long ops0 = ops();
    int ok = 1;
    int on_stack = 42;
    for (int t = 0; t < n; t++) {
        char *b = bases[t];
        /* addresses in no region of t */
        ok &= all_forms(&on_stack, 4, t, RMC_ERR_NOT_REGION, dst);
        ok &= all_forms(NULL, 8, t, RMC_ERR_NOT_REGION, dst);
        ok &= all_forms(b - 1, 1, t, RMC_ERR_NOT_REGION, dst);
        ok &= all_forms(b - 64, 8, t, RMC_ERR_NOT_REGION, dst);   /* RMC's own header below it */
        ok &= all_forms(b + SIZE, 1, t, RMC_ERR_NOT_REGION, dst); /* one past the end */
        ok &= all_forms(b + SIZE + 100, 16, t, RMC_ERR_NOT_REGION, dst);
        ok &= all_forms(b - 8, 16, t, RMC_ERR_NOT_REGION, dst); /* starts before, ends inside */
        /* ranges that start inside and cross the end */
        ok &= all_forms(b + SIZE - 4, 8, t, RMC_ERR_BOUNDS, dst);
        ok &= all_forms(b + SIZE - 1, 2, t, RMC_ERR_BOUNDS, dst);
        ok &= all_forms(b, SIZE + 1, t, RMC_ERR_BOUNDS, dst);
        ok &= all_forms(b + 1, SIZE, t, RMC_ERR_BOUNDS, dst);
        EXPECT(rmc_get(b + 1, dst, SIZE_MAX, t) == RMC_ERR_BOUNDS);
        EXPECT(rmc_put(dst, b + 1, SIZE_MAX / 2, t) == RMC_ERR_BOUNDS);
    }
    finish(ok, dst, sizeof(dst), ops0);
    /* the exact bounds are fine: the whole part, first and last byte */
    unsigned char whole[SIZE];
    int t = (me + 1) % n;
    ok = rmc_get(bases[t], whole, SIZE, t) == RMC_OK;
    for (size_t j = 0; j < SIZE; j++)
        ok &= whole[j] == mpitest_pat(t, j, 0xBA);
    ok &= rmc_get((char *)bases[t] + SIZE - 1, whole, 1, t) == RMC_OK &&
          whole[0] == mpitest_pat(t, SIZE - 1, 0xBA);
    MPI_CHECK_ALL(ok);
}

static void test_null_buffers(void **state)
{
    (void)state;
    unsigned char dst[64];
    memset(dst, 0xEE, sizeof(dst));
    unsigned long long ops0 = ops();
    int ok = 1;
    for (int t = 0; t < n; t++) {
        char *b = bases[t];
        rmc_request_h q = (rmc_request_h)&ok;
        EXPECT(rmc_put(NULL, b, 8, t) == RMC_ERR_ARG);
        EXPECT(rmc_get(b, NULL, 8, t) == RMC_ERR_ARG);
        EXPECT(rmc_put_nb(NULL, b, 8, t, &q) == RMC_ERR_ARG && q == RMC_REQUEST_NULL);
        q = (rmc_request_h)&ok;
        EXPECT(rmc_get_nb(b, NULL, 8, t, &q) == RMC_ERR_ARG && q == RMC_REQUEST_NULL);
        EXPECT(rmc_put_nb(NULL, b, 1, t, NULL) == RMC_ERR_ARG);
        EXPECT(rmc_get_nb(b, NULL, 1, t, NULL) == RMC_ERR_ARG);
        /* bytes == 0: a no-op, pointers unchecked, nothing issued */
        EXPECT(rmc_put(NULL, NULL, 0, t) == RMC_OK);
        EXPECT(rmc_get(NULL, NULL, 0, t) == RMC_OK);
        EXPECT(rmc_put(dst, (void *)(uintptr_t)0x10, 0, t) == RMC_OK);
        EXPECT(rmc_get(b + SIZE + 4096, dst, 0, t) == RMC_OK);
        q = (rmc_request_h)&ok;
        EXPECT(rmc_put_nb(NULL, b - 1, 0, t, &q) == RMC_OK && q == RMC_REQUEST_NULL);
        q = (rmc_request_h)&ok;
        EXPECT(rmc_get_nb(b - 1, NULL, 0, t, &q) == RMC_OK && q == RMC_REQUEST_NULL);
        EXPECT(rmc_put_nb(NULL, NULL, 0, t, NULL) == RMC_OK);
    }
    finish(ok, dst, sizeof(dst), ops0);
}

static void test_use_after_free(void **state)
{
    (void)state;
    void **b2 = malloc((size_t)n * sizeof(void *));
    rmc_region_h r2;
    MPI_CHECK_OK(rmc_region_alloc(512, b2, &r2));
    MPI_CHECK_ALL(rmc_region_count() == 2);
    MPI_CHECK_OK(rmc_region_free(r2));
    MPI_CHECK_ALL(rmc_region_count() == 1);
    unsigned char dst[512];
    memset(dst, 0xEE, sizeof(dst));
    unsigned long long ops0 = ops();
    int ok = 1;
    for (int t = 0; t < n; t++) {
        ok &= all_forms(b2[t], 8, t, RMC_ERR_NOT_REGION, dst);
        ok &= all_forms((char *)b2[t] + 511, 1, t, RMC_ERR_NOT_REGION, dst);
    }
    /* the handle is dead: free again, query: refused locally (no communication) */
    EXPECT(rmc_region_free(r2) == RMC_ERR_HANDLE);
    void *p = (void *)&ok;
    size_t sz = 5;
    EXPECT(rmc_region_base(r2, 0, &p, &sz) == RMC_ERR_HANDLE && p == (void *)&ok && sz == 5);
    EXPECT(rmc_region_free(NULL) == RMC_ERR_HANDLE);
    EXPECT(rmc_region_base(NULL, 0, &p, &sz) == RMC_ERR_HANDLE);
    /* something that never was a region */
    uint64_t fake[64];
    memset(fake, 0, sizeof(fake));
    EXPECT(rmc_region_free((rmc_region_h)fake) == RMC_ERR_HANDLE);
    EXPECT(rmc_region_base((rmc_region_h)fake, 0, &p, &sz) == RMC_ERR_HANDLE);
    for (int i = 0; i < 64; i++)
        EXPECT(fake[i] == 0);
    EXPECT(rmc_region_count() == 1);
    finish(ok, dst, sizeof(dst), ops0);
    /* the surviving region is still fine */
    int t = (me + 1) % n;
    ok = rmc_get(bases[t], dst, 8, t) == RMC_OK;
    for (size_t j = 0; j < 8; j++)
        ok &= dst[j] == mpitest_pat(t, j, 0xBA);
    MPI_CHECK_ALL(ok);
    free(b2);
}

static void test_init_twice_and_null_args(void **state)
{
    (void)state;
    int ok = 1;
    EXPECT(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ALREADY_INIT);
    EXPECT(rmc_init(MPI_COMM_SELF) == RMC_ERR_ALREADY_INIT);
    EXPECT(rmc_init(MPI_COMM_NULL) == RMC_ERR_ALREADY_INIT);
    EXPECT(rmc_initialized() == 1 && rmc_rank() == me && rmc_nranks() == n);
    EXPECT(rmc_topology(NULL) == RMC_ERR_ARG);
    EXPECT(rmc_comm_stats(NULL) == RMC_ERR_ARG);
    EXPECT(rmc_wait(NULL) == RMC_ERR_ARG);
    int done;
    rmc_request_h q = RMC_REQUEST_NULL;
    EXPECT(rmc_test(NULL, &done) == RMC_ERR_ARG);
    EXPECT(rmc_test(&q, NULL) == RMC_ERR_ARG);
    EXPECT(rmc_wait_all(NULL, 1) == RMC_ERR_ARG);
    MPI_CHECK_ALL(ok);
    /* collective with no handle to fill: every rank refuses, nothing is created */
    MPI_CHECK_ALL(rmc_region_alloc(64, NULL, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_region_count() == 1);
    /* one rank without a handle: all refuse */
    rmc_region_h h = (rmc_region_h)&ok;
    rmc_status_t st = rmc_region_alloc(64, NULL, me == n - 1 ? NULL : &h);
    MPI_CHECK_ALL(st == RMC_ERR_ARG && (me == n - 1 || h == NULL));
    MPI_CHECK_ALL(rmc_region_count() == 1);
    /* and RMC is still in business */
    int t = (me + 1) % n;
    unsigned char v[8];
    MPI_CHECK_OK(rmc_get(bases[t], v, 8, t));
    MPI_CHECK_ALL(v[7] == mpitest_pat(t, 7, 0xBA));
    MPI_CHECK_OK(rmc_barrier());
}

/* The entry points for code built on comm: reserved regions, local mappings, knobs, the error
 * channel, RMC's communicator and the attentive MPI wait refuse bad input and change nothing. */
static void test_layer_entry_points(void **state)
{
    (void)state;
    int ok = 1;
    void *p = &ok, *rb[64];
    rmc_region_h r = NULL;
    /* collective: every rank refuses, nothing is created */
    MPI_CHECK_ALL(rmc_region_reserve((size_t)1 << 47, rb, &r) == RMC_ERR_TOO_BIG && r == NULL);
    MPI_CHECK_ALL(rmc_region_reserve(4096, rb, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_region_count() == 1);
    MPI_CHECK_OK(rmc_region_reserve((size_t)1 << 30, rb, &r));
    char *mine = rb[me];
    EXPECT(rmc_region_commit(NULL, mine, 8) == RMC_ERR_HANDLE);
    EXPECT(rmc_region_commit(r, (char *)bases[me], 8) == RMC_ERR_NOT_REGION); /* another region */
    EXPECT(rmc_region_commit(r, mine + ((size_t)1 << 30) - 8, 16) == RMC_ERR_BOUNDS);
    EXPECT(rmc_region_commit(r, NULL, 8) == RMC_ERR_NOT_REGION);
    EXPECT(rmc_region_commit(r, mine, 0) == RMC_OK);
    EXPECT(rmc_region_commit(r, mine + 4096, 1 << 20) == RMC_OK);
    EXPECT(rmc_region_commit(region, bases[me], 64) == RMC_OK); /* not reserved: a no-op */
    EXPECT(rmc_region_local(r, me, NULL) == RMC_ERR_ARG);
    EXPECT(rmc_region_local(r, n, &p) == RMC_ERR_RANK && p == NULL);
    EXPECT(rmc_region_local(NULL, me, &p) == RMC_ERR_HANDLE && p == NULL);
    EXPECT(rmc_region_local(r, me, &p) == RMC_OK && p == (void *)mine);
    /* knobs */
    static const rmc_knob_t good = {"RMC_TEST_BADINPUT_KNOB", "7", "a test knob"};
    static const rmc_knob_t noprefix = {"TEST_KNOB", "1", "no RMC_ prefix"};
    static const rmc_knob_t clash = {"RMC_NODE_SIZE", "3", "the name of comm's own"};
    static const rmc_knob_t nohelp = {"RMC_TEST_NOHELP", "1", NULL};
    size_t nk = rmc_knob_count();
    EXPECT(rmc_knob_register(NULL) == RMC_ERR_ARG);
    EXPECT(rmc_knob_register(&noprefix) == RMC_ERR_ARG);
    EXPECT(rmc_knob_register(&nohelp) == RMC_ERR_ARG);
    EXPECT(rmc_knob_register(&clash) == RMC_ERR_STATE);
    EXPECT(rmc_knob_count() == nk);
    EXPECT(rmc_knob_register(&good) == RMC_OK && rmc_knob_register(&good) == RMC_OK);
    EXPECT(rmc_knob_count() == nk + 1 && rmc_knob_get(nk) == &good);
    EXPECT(rmc_knob_value("RMC_TEST_BADINPUT_KNOB") &&
           !strcmp(rmc_knob_value("RMC_TEST_BADINPUT_KNOB"), "7"));
    /* the error channel for layers above comm */
    rmc_last_error_clear();
    EXPECT(rmc_error_set(RMC_ERR_FULL, "mylayer_op", "slot %d", 3) == RMC_ERR_FULL);
    EXPECT(strcmp(rmc_last_error(), "mylayer_op: slot 3") == 0);
    EXPECT(rmc_error_in(RMC_ERR_FULL, "outer") == RMC_ERR_FULL);
    EXPECT(strcmp(rmc_last_error(), "outer: mylayer_op: slot 3") == 0);
    /* RMC's communicator and the attentive wait */
    MPI_Comm c = MPI_COMM_WORLD;
    EXPECT(rmc_comm(NULL) == RMC_ERR_ARG);
    EXPECT(rmc_comm(&c) == RMC_OK && c != MPI_COMM_NULL && c != MPI_COMM_WORLD);
    EXPECT(rmc_wait_mpi(NULL) == RMC_ERR_ARG);
    MPI_Request rq;
    MPI_Ibarrier(c, &rq);
    EXPECT(rmc_wait_mpi(&rq) == RMC_OK && rq == MPI_REQUEST_NULL);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(r));
    MPI_CHECK_ALL(rmc_region_count() == 1);
}

MPITEST_MAIN("badinput", setup, teardown, test_bad_rank, test_bad_address, test_null_buffers,
             test_use_after_free, test_init_twice_and_null_args, test_layer_entry_points)
