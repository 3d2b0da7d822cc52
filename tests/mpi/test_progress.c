/* Progress: requests are served while the target computes without calling RMC only when it runs the
 * progress thread; the thread backs off instead of spinning; finalize with requests in flight loses
 * none and does not hang; repeated init/finalize; knob validation. */
#include <time.h>
#include "test_amo_util.h"

#define H_FLAG  5
#define H_COUNT 6

static int flag_seen;
static int counted;

static rmc_status_t h_flag(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)origin, (void)payload, (void)len, (void)reply, (void)cap, (void)rlen, (void)arg;
    __atomic_store_n(&flag_seen, 1, __ATOMIC_SEQ_CST);
    return RMC_OK;
}

static rmc_status_t h_count(int origin, const void *payload, size_t len, void *reply, size_t cap,
                            size_t *rlen, void *arg)
{
    (void)origin, (void)payload, (void)len, (void)reply, (void)cap, (void)rlen, (void)arg;
    __atomic_fetch_add(&counted, 1, __ATOMIC_SEQ_CST);
    return RMC_OK;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank 0 computes (no RMC call) while rank 1 sends it a request. */
static void busy_target(const char *thread)
{
    amotest_cfg_t c = {"mpi", thread};
    amotest_init(&c);
    int me = mpitest_rank_, on = thread[0] == '1';
    __atomic_store_n(&flag_seen, 0, __ATOMIC_SEQ_CST);
    MPI_CHECK_OK(rmc_am_register(H_FLAG, h_flag, NULL));
    /* rmc_am_register's agreement serves active messages while it waits (attentive): rank 1 sends
     * only after rank 0 has left every RMC call, so the request meets rank 0 computing */
    MPI_Barrier(MPI_COMM_WORLD);
    int served_while_busy = 0;
    rmc_status_t st = RMC_OK;
    if (me == 0) {
        /* thread: wait (busily, no RMC call) until the handler ran, at most 10 s; none: 150 ms */
        double t0 = now_s(), limit = on ? 10.0 : 0.15;
        volatile double x = 1.0;
        while (!__atomic_load_n(&flag_seen, __ATOMIC_SEQ_CST) && now_s() - t0 < limit)
            for (int i = 0; i < 1000; i++)
                x = x * 1.0000001 + 1e-9;
        served_while_busy = __atomic_load_n(&flag_seen, __ATOMIC_SEQ_CST);
    } else if (me == 1) {
        rmc_request_h q;
        st = rmc_am_send_nb(0, H_FLAG, NULL, 0, NULL, 0, NULL, &q);
        if (st == RMC_OK)
            st = rmc_wait(&q);
    }
    MPI_CHECK_OK(rmc_barrier()); /* rank 0 serves here when it has no thread */
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(me != 0 || served_while_busy == on);
    MPI_CHECK_ALL(me != 0 || __atomic_load_n(&flag_seen, __ATOMIC_SEQ_CST) == 1);
    rmc_progress_stats_t s;
    MPI_CHECK_OK(rmc_progress_stats(&s));
    /* busy rank 0 could only have been served by its thread (the main thread also serves while it
     * waits inside RMC calls, so other requests may have been served either way) */
    MPI_CHECK_ALL(me != 0 || (on ? s.am_served_thread >= 1 : s.am_served_thread == 0));
    amotest_done();
}

static void test_busy_target_thread(void **state)
{
    (void)state;
    busy_target("1");
}

static void test_busy_target_nothread(void **state)
{
    (void)state;
    busy_target("0");
}

/* While the main thread sleeps, an unbound rank's progress thread (no PU of its own) sleeps too:
 * it uses well under half a CPU. */
static void test_thread_backs_off(void **state)
{
    (void)state;
    amotest_cfg_t c = {"mpi", "1"};
    amotest_init(&c);
    rmc_topology_t t;
    MPI_CHECK_OK(rmc_topology(&t));
    rmc_progress_stats_t s0, s1;
    MPI_CHECK_OK(rmc_progress_stats(&s0));
    double c0 = cpu_s(), w0 = now_s();
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double cpu = cpu_s() - c0, wall = now_s() - w0;
    MPI_CHECK_OK(rmc_progress_stats(&s1));
    if (t.hw_bound_pus == t.hw_pus) { /* unbound: no PU for the thread alone -> back-off */
        MPI_CHECK_ALL(cpu < 0.5 * wall);
        MPI_CHECK_ALL(s1.thread_sleeps > s0.thread_sleeps);
    } else {
        MPI_CHECK_ALL(cpu <= 1.2 * wall); /* at most the thread's own PU */
    }
    amotest_done();
}

/* Requests issued and never waited for are completed by rmc_finalize: every handler ran. */
static void test_finalize_inflight(void **state)
{
    (void)state;
    for (int on = 0; on < 2; on++) {
        amotest_cfg_t c = {"mpi", on ? "1" : "0"};
        amotest_init(&c);
        int n = mpitest_nranks_, me = mpitest_rank_;
        __atomic_store_n(&counted, 0, __ATOMIC_SEQ_CST);
        MPI_CHECK_OK(rmc_am_register(H_COUNT, h_count, NULL));
        int k = amotest_iters(60), issued = 0;
        rmc_status_t st = RMC_OK;
        char payload[100] = {0};
        for (int i = 0; i < k && st == RMC_OK; i++) {
            rmc_request_h q; /* dropped on purpose */
            st = rmc_am_send_nb((me + i) % n, H_COUNT, payload, sizeof(payload), NULL, 0, NULL, &q);
            issued += st == RMC_OK;
        }
        rmc_status_t sf = rmc_finalize(); /* must not hang, must not lose one */
        unsetenv("RMC_AMO");
        unsetenv("RMC_PROGRESS_THREAD");
        MPI_CHECK_ALL(st == RMC_OK && sf == RMC_OK);
        int tot_issued = 0, tot_counted = 0, mine = __atomic_load_n(&counted, __ATOMIC_SEQ_CST);
        MPI_Allreduce(&issued, &tot_issued, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&mine, &tot_counted, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_CHECK_ALL(tot_issued == k * n && tot_counted == tot_issued);
    }
}

/* Repeated init/finalize with the thread running and traffic in between. */
static void test_cycles(void **state)
{
    (void)state;
    for (int cyc = 0; cyc < 4; cyc++) {
        amotest_cfg_t c = {cyc % 2 ? "thread" : "mpi", "1"};
        amotest_init(&c);
        __atomic_store_n(&counted, 0, __ATOMIC_SEQ_CST);
        MPI_CHECK_OK(rmc_am_register(H_COUNT, h_count, NULL));
        int n = mpitest_nranks_, me = mpitest_rank_;
        rmc_status_t st = RMC_OK;
        for (int t = 0; t < n && st == RMC_OK; t++)
            st = rmc_am_send(t, H_COUNT, NULL, 0, NULL, 0, NULL);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(st);
        MPI_CHECK_ALL(__atomic_load_n(&counted, __ATOMIC_SEQ_CST) == n);
        (void)me;
        amotest_done();
    }
}

/* Knobs are validated (agreed failure, nothing initialized); auto follows its rule. */
static void test_knobs(void **state)
{
    (void)state;
    amotest_fresh();
    static const char *bad[][2] = {{"RMC_PROGRESS_THREAD", "maybe"},
                                   {"RMC_PROGRESS_BACKOFF_US", "0"},
                                   {"RMC_REGION_CACHE", "0"},
                                   {"RMC_AM_MAX_PAYLOAD", "abc"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        setenv(bad[i][0], bad[i][1], 1);
        rmc_status_t st = rmc_init(MPI_COMM_WORLD);
        unsetenv(bad[i][0]);
        MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized());
    }
    /* a bad value on one rank only: every rank fails */
    if (mpitest_rank_ == mpitest_nranks_ - 1)
        setenv("RMC_REGION_CACHE", "-5", 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    unsetenv("RMC_REGION_CACHE");
    MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized());
    setenv("RMC_PROGRESS_THREAD", "auto", 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    int on = rmc_progress_thread_active();
    MPI_CHECK_ALL(on == 0 || on == 1);
    /* auto never takes a core the ranks compute on: with no PU left over (all ranks of this test
     * run on one machine) the thread stays off */
    rmc_topology_t topo;
    MPI_CHECK_OK(rmc_topology(&topo));
    MPI_CHECK_ALL(topo.hw_pus > topo.nranks || on == 0);
    MPI_CHECK_OK(rmc_finalize());
    unsetenv("RMC_PROGRESS_THREAD");
    MPI_CHECK_ALL(rmc_progress_thread_active() == -1);
    MPI_CHECK_ALL(rmc_progress() == RMC_ERR_NOT_INIT);
    rmc_progress_stats_t s;
    MPI_CHECK_ALL(rmc_progress_stats(&s) == RMC_ERR_NOT_INIT);
}

MPITEST_MAIN("progress", NULL, NULL, test_busy_target_thread, test_busy_target_nothread,
             test_thread_backs_off, test_finalize_inflight, test_cycles, test_knobs)
