/* Without MPI_THREAD_MULTIPLE (the application initialized MPI with MPI_THREAD_SERIALIZED): a
 * progress thread cannot run. RMC_PROGRESS_THREAD=1 fails clearly on every rank; auto runs without
 * it, and atomics and active messages still work (served inside RMC calls). */
#include "test_amo_util.h"

static int hits;

static rmc_status_t h_hit(int origin, const void *payload, size_t len, void *reply, size_t cap,
                          size_t *rlen, void *arg)
{
    (void)origin, (void)payload, (void)len, (void)arg;
    hits++;
    if (cap >= sizeof(int)) {
        memcpy(reply, &hits, sizeof(int));
        *rlen = sizeof(int);
    }
    return RMC_OK;
}

static void test_thread_refused(void **state)
{
    (void)state;
    setenv("RMC_PROGRESS_THREAD", "1", 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    unsetenv("RMC_PROGRESS_THREAD");
    MPI_CHECK_ALL(st == RMC_ERR_UNSUPPORTED && !rmc_initialized());
}

static void test_auto_without_thread(void **state)
{
    (void)state;
    for (int mode = 0; mode < 3; mode++) {
        const char *m = mode == 0 ? "auto" : mode == 1 ? "mpi" : "thread";
        setenv("RMC_AMO", m, 1);
        MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
        unsetenv("RMC_AMO");
        MPI_CHECK_ALL(rmc_progress_thread_active() == 0);
        rmc_amo_mode_t want =
            mode == 1   ? RMC_AMO_MODE_MPI
            : mode == 2 ? RMC_AMO_MODE_THREAD
                        : (rmc_node_count() == 1 ? RMC_AMO_MODE_THREAD : RMC_AMO_MODE_MPI);
        MPI_CHECK_ALL(rmc_amo_mode() == want);
        int n = mpitest_nranks_, me = mpitest_rank_;
        hits = 0;
        MPI_CHECK_OK(rmc_am_register(1, h_hit, NULL));
        void **b = calloc((size_t)n, sizeof(void *));
        rmc_region_h r;
        MPI_CHECK_OK(rmc_region_alloc(8, b, &r));
        rmc_status_t st = RMC_OK;
        int k = 50, ok = 1;
        for (int i = 0; i < k && st == RMC_OK; i++) {
            int64_t f;
            st = rmc_amo_fetch_add_i64(b[0], 1, &f, 0);
            ok &= f >= 0 && f < (int64_t)k * n;
        }
        int got = 0;
        size_t rl = 0;
        if (st == RMC_OK)
            st = rmc_am_send((me + 1) % n, 1, NULL, 0, &got, sizeof(got), &rl);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(st);
        MPI_CHECK_ALL(ok && rl == sizeof(int) && got == 1 && hits == 1);
        MPI_CHECK_ALL(me != 0 || *(int64_t *)b[0] == (int64_t)k * n);
        MPI_CHECK_OK(rmc_region_free(r));
        free(b);
        MPI_CHECK_OK(rmc_finalize());
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpitest_rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &mpitest_nranks_);
    if (mpitest_rank_ != 0) {
        const char *v = getenv("RMC_TEST_VERBOSE");
        if (!(v && *v == '1') && !freopen("/dev/null", "w", stdout))
            perror("freopen");
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thread_refused),
        cmocka_unit_test(test_auto_without_thread),
    };
    int fails = provided == MPI_THREAD_SERIALIZED
                    ? cmocka_run_group_tests_name("progress_serial", tests, NULL, NULL)
                    : 1; /* MPICH always grants what is asked for up to MULTIPLE */
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}
