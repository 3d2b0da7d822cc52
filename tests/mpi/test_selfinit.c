/* RMC initializes and finalizes MPI itself: this program never calls MPI_Init or MPI_Finalize.
 * Also: every call before rmc_init (MPI not even initialized) and after rmc_finalize (MPI gone)
 * says RMC_ERR_NOT_INIT, and RMC cannot be initialized again once MPI is finalized.
 *
 * Between rmc_init and rmc_finalize the checks agree across ranks (MPI_CHECK_ALL); outside that
 * window there is no MPI, so each rank checks on its own and its exit status carries the verdict
 * (mpiexec fails if any rank fails). */
#include "mpitest.h"

static int check_not_init(void)
{
    int ok = 1;
#define EXPECT(c)                                                                                  \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "not-init check failed: %s\n", #c);                                    \
            ok = 0;                                                                                \
        }                                                                                          \
    } while (0)
    char buf[16] = "unchanged-bytes";
    EXPECT(rmc_initialized() == 0);
    EXPECT(rmc_rank() == -1 && rmc_nranks() == -1);
    EXPECT(rmc_node_rank() == -1 && rmc_node_size() == -1 && rmc_node_count() == -1);
    EXPECT(rmc_same_node(0) == -1);
    EXPECT(rmc_region_count() == 0);
    rmc_topology_t t;
    EXPECT(rmc_topology(&t) == RMC_ERR_NOT_INIT);
    rmc_comm_stats_t s;
    EXPECT(rmc_comm_stats(&s) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_barrier() == RMC_ERR_NOT_INIT);
    rmc_region_h h = NULL;
    EXPECT(rmc_region_alloc(64, NULL, &h) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_region_free(h) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_region_base(h, 0, NULL, NULL) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_put(buf, buf, 8, 0) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_get(buf, buf, 8, 0) == RMC_ERR_NOT_INIT);
    rmc_request_h q = (rmc_request_h)buf;
    EXPECT(rmc_put_nb(buf, buf, 8, 0, &q) == RMC_ERR_NOT_INIT && q == RMC_REQUEST_NULL);
    q = (rmc_request_h)buf;
    EXPECT(rmc_get_nb(buf, buf, 8, 0, &q) == RMC_ERR_NOT_INIT && q == RMC_REQUEST_NULL);
    EXPECT(rmc_wait(&q) == RMC_ERR_NOT_INIT);
    int done;
    EXPECT(rmc_test(&q, &done) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_wait_all(&q, 1) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_fence(0) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_fence_all() == RMC_ERR_NOT_INIT);
    EXPECT(rmc_finalize() == RMC_ERR_NOT_INIT);
    EXPECT(memcmp(buf, "unchanged-bytes", 16) == 0);
#undef EXPECT
    return ok;
}

static void test_before_mpi(void **state)
{
    (void)state;
    int init = 1, fin = 1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    assert_int_equal(init, 0);
    assert_int_equal(fin, 0);
    assert_true(check_not_init());
    /* refused before touching MPI */
    assert_int_equal(rmc_init(MPI_COMM_NULL), RMC_ERR_ARG);
    MPI_Initialized(&init);
    assert_int_equal(init, 0);
    assert_true(check_not_init());
}

static void test_self_init(void **state)
{
    (void)state;
    int init = 0;
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    assert_int_equal(st, RMC_OK);
    MPI_Initialized(&init);
    assert_int_equal(init, 1);
    int level = -1;
    MPI_Query_thread(&level);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpitest_rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &mpitest_nranks_);
    MPI_CHECK_ALL(level == MPI_THREAD_MULTIPLE);
    MPI_CHECK_ALL(rmc_rank() == mpitest_rank_ && rmc_nranks() == mpitest_nranks_);
    MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ALREADY_INIT);
}

/* Real work between the self-managed init and finalize: ring put/get, blocking and non-blocking. */
static void test_work(void **state)
{
    (void)state;
    int me = rmc_rank(), n = rmc_nranks(), next = (me + 1) % n, prev = (me + n - 1) % n;
    enum { LEN = 1000 };
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h r;
    MPI_CHECK_OK(rmc_region_alloc(2 * LEN, bases, &r));
    unsigned char src[LEN], back[LEN];
    for (size_t j = 0; j < LEN; j++)
        src[j] = mpitest_pat(me, j, 11);
    MPI_CHECK_OK(rmc_put(src, bases[next], LEN, next));
    rmc_request_h q;
    MPI_CHECK_OK(rmc_put_nb(src, (char *)bases[next] + LEN, LEN, next, &q));
    MPI_CHECK_OK(rmc_wait(&q));
    MPI_CHECK_OK(rmc_barrier());
    const unsigned char *mine = bases[me];
    int ok = 1;
    for (size_t j = 0; j < 2 * LEN; j++)
        ok &= mine[j] == mpitest_pat(prev, j % LEN, 11);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_get_nb(bases[next], back, LEN, next, &q));
    MPI_CHECK_OK(rmc_wait(&q));
    MPI_CHECK_ALL(memcmp(back, src, LEN) == 0);
    MPI_CHECK_OK(rmc_barrier());
    /* left alive on purpose: rmc_finalize frees it */
    MPI_CHECK_ALL(rmc_region_count() == 1);
    free(bases);
}

static void test_self_finalize(void **state)
{
    (void)state;
    assert_int_equal(rmc_finalize(), RMC_OK);
    int fin = 0;
    MPI_Finalized(&fin);
    assert_int_equal(fin, 1); /* RMC initialized MPI, so RMC finalized it */
}

static void test_after_finalize(void **state)
{
    (void)state;
    assert_true(check_not_init());
    /* MPI cannot be initialized twice: rmc_init refuses and stays uninitialized */
    assert_int_equal(rmc_init(MPI_COMM_WORLD), RMC_ERR_NOT_INIT);
    assert_int_equal(rmc_init(MPI_COMM_NULL), RMC_ERR_ARG);
    assert_true(check_not_init());
}

int main(void)
{
    /* rank from the launcher (MPI is not initialized yet): only rank 0 prints unless verbose */
    const char *pr = getenv("PMI_RANK");
    const char *verbose = getenv("RMC_TEST_VERBOSE");
    if (pr && atoi(pr) != 0 && !(verbose && *verbose == '1'))
        if (!freopen("/dev/null", "w", stdout))
            perror("freopen");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_mpi),     cmocka_unit_test(test_self_init),
        cmocka_unit_test(test_work),           cmocka_unit_test(test_self_finalize),
        cmocka_unit_test(test_after_finalize),
    };
    return cmocka_run_group_tests_name("selfinit", tests, NULL, NULL);
}
