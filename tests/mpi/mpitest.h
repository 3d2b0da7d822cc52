/* The shared harness of the MPI test programs (cmocka under mpiexec).
 *
 * Every rank runs the same cmocka group. A check that one rank fails must fail on every rank and
 * must not leave the others waiting in a collective: use MPI_CHECK_ALL(cond), which agrees on the
 * verdict with MPI_Allreduce before asserting. Only rank 0's cmocka output is shown unless
 * RMC_TEST_VERBOSE=1. Failed checks are reported on stderr by the failing rank, with file and line.
 *
 * The MPI-only part below needs no RMC header: ARMCI-level tests (armcitest.h) define
 * MPITEST_NO_RMC and are also built against ARMCI-MPI. The RMC part (status checks, fixtures)
 * follows.
 */
#ifndef RMC_MPITEST_H
#define RMC_MPITEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <cmocka.h>
#include <mpi.h>
#include "../cmocka_main.h"
#ifndef ARMCITEST_ARMCI_MPI /* every build but the one against ARMCI-MPI links librmc */
#include <rmc/comm.h>
#endif

static int mpitest_rank_, mpitest_nranks_;

/* Waits for an MPI request; while RMC is initialized it keeps RMC's progress going, as RMC's own
 * collectives do: a peer may still wait for this rank to serve an active message (a remote atomic
 * in thread mode without a progress thread, registered memory). Between tests it yields (ranks
 * may outnumber cores), or with nap_ns > 0 sleeps that long. */
static inline void mpitest_wait_nap_(MPI_Request *rq, long nap_ns)
{
    int done = 0;
    while (MPI_Test(rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
#ifndef ARMCITEST_ARMCI_MPI
        if (rmc_initialized())
            rmc_progress();
#endif
        if (nap_ns > 0) {
            struct timespec ts = {0, nap_ns};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}
static inline void mpitest_wait_(MPI_Request *rq)
{
    mpitest_wait_nap_(rq, 0);
}

/* Agrees on `ok` across ranks; on failure the local culprit prints where, then every rank fails. */
static inline int mpitest_all_(int ok, const char *expr, const char *file, int line)
{
    int all = ok;
    if (!ok)
        fprintf(stderr, "[rank %d] check failed: %s (%s:%d)\n", mpitest_rank_, expr, file, line);
    MPI_Request rq;
    MPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD, &rq);
    mpitest_wait_(&rq);
    return all;
}

#define MPI_CHECK_ALL(cond) assert_true(mpitest_all_(!!(cond), #cond, __FILE__, __LINE__))

/* A phase where two ranks work and the others only wait for them: the others sleep in 1 ms steps
 * (mpitest_bystander_wait; RMC progress between naps) until the worker `from` lets them go
 * (mpitest_bystanders_release), instead of spinning in the collective that ends the phase. With
 * more ranks than cores the scheduler can leave both workers on one core beside the spinning
 * waiters on the other, and every round trip between the workers then costs a time slice: a 0.25 s
 * test at 4 ranks on 2 cores took 150-230 s in about one run of three. */
enum { MPITEST_TAG_BYSTANDER = 31999 };
static inline void mpitest_bystander_wait(int from)
{
    int done = 0;
    MPI_Request r;
    MPI_Irecv(&done, 1, MPI_INT, from, MPITEST_TAG_BYSTANDER, MPI_COMM_WORLD, &r);
    mpitest_wait_nap_(&r, 1000000);
}
/* Called by the worker `from`: ranks first..nranks-1 stop waiting. */
static inline void mpitest_bystanders_release(int first)
{
    int done = 1;
    for (int r = first; r < mpitest_nranks_; r++)
        MPI_Send(&done, 1, MPI_INT, r, MPITEST_TAG_BYSTANDER, MPI_COMM_WORLD);
}

/* Two deterministic generators for the tests' random sequences (the same on every rank for the
 * same state): splitmix64 (any state, also 0) and xorshift64* (state never 0). Each returns the
 * next 64-bit value and advances *s. mpitest_mix64 is splitmix64's finalizer alone: a hash of x
 * (keys, salts, check words). */
static inline uint64_t mpitest_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline uint64_t mpitest_splitmix(uint64_t *s)
{
    return mpitest_mix64(*s += 0x9E3779B97F4A7C15ull);
}
static inline uint64_t mpitest_xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Deterministic pattern byte for (owner rank, offset, salt). */
static inline unsigned char mpitest_pat(int rank, size_t off, unsigned salt)
{
    uint64_t x = ((uint64_t)(unsigned)rank << 40) ^ ((uint64_t)off * 0x9E3779B97F4A7C15ull) ^ salt;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)x;
}

/* Per-test fixtures of mpitest_main: rank 0 prints each test's wall time after it (the suite's
 * slow spots, read from the logs). */
static double mpitest_t0_;
static inline int mpitest_clock_start_(void **state)
{
    (void)state;
    mpitest_t0_ = MPI_Wtime();
    return 0;
}
static inline int mpitest_clock_stop_(void **state)
{
    (void)state;
    printf("[     TIME ] %.2f s\n", MPI_Wtime() - mpitest_t0_);
    return 0;
}

/* Runs a cmocka group on every rank with MPI initialized (MPI_THREAD_MULTIPLE) around it; the
 * group's own setup / teardown set up RMC or ARMCI; each test is timed (mpitest_clock_*_).
 * Returns 0 when every rank passed. */
static inline int mpitest_main(int argc, char **argv, const char *name,
                               const struct CMUnitTest *tests, size_t ntests,
                               CMFixtureFunction setup, CMFixtureFunction teardown)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpitest_rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &mpitest_nranks_);
    const char *verbose = getenv("RMC_TEST_VERBOSE");
    if (mpitest_rank_ != 0 && !(verbose && *verbose == '1')) {
        fflush(stdout);
        if (!freopen("/dev/null", "w", stdout))
            perror("freopen");
    }
    /* RMC_TEST_ONLY, a cmocka pattern: run only those tests (rank 0's value on every rank, so
     * that all run the same ones whatever the launcher passes on) */
    static char only[256];
    const char *env = getenv("RMC_TEST_ONLY");
    if (mpitest_rank_ == 0 && env)
        snprintf(only, sizeof only, "%s", env);
    MPI_Bcast(only, sizeof only, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (only[0])
        cmocka_set_test_filter(only);
    struct CMUnitTest *timed = malloc(ntests * sizeof *timed);
    if (!timed) {
        perror("mpitest_main");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < ntests; i++) {
        timed[i] = tests[i];
        if (!timed[i].setup_func && !timed[i].teardown_func) {
            timed[i].setup_func = mpitest_clock_start_;
            timed[i].teardown_func = mpitest_clock_stop_;
        }
    }
    int fails = _cmocka_run_group_tests(name, timed, ntests, setup, teardown);
    free(timed);
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}

#define MPITEST_RUN(name, tests, setup, teardown)                                                  \
    mpitest_main(argc, argv, name, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

/* main() of an MPI test program: the group `name` of the listed tests, with group fixtures. */
#define MPITEST_MAIN(name, setup, teardown, ...)                                                   \
    int main(int argc, char **argv)                                                                \
    {                                                                                              \
        const struct CMUnitTest tests_[] = {CMOCKA_TESTS(__VA_ARGS__)};                            \
        return MPITEST_RUN(name, tests_, setup, teardown);                                         \
    }

/* A check that records into `ok` (agreed later with MPI_CHECK_ALL), naming file and line. */
#define MPITEST_EXPECT(ok, c)                                                                      \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "[rank %d] %s:%d: expected %s\n", mpitest_rank_, __FILE__, __LINE__,   \
                    #c);                                                                           \
            (ok) = 0;                                                                              \
        }                                                                                          \
    } while (0)

#ifndef MPITEST_NO_RMC
#include <rmc.h>

/* Status must be RMC_OK on this rank; verdict agreed across ranks. */
#define MPI_CHECK_OK(call)                                                                         \
    do {                                                                                           \
        rmc_status_t st_ = (call);                                                                 \
        if (st_ != RMC_OK)                                                                         \
            fprintf(stderr, "[rank %d] %s -> %s (%s)\n", mpitest_rank_, #call,                     \
                    rmc_status_string(st_), rmc_last_error());                                     \
        MPI_CHECK_ALL(st_ == RMC_OK);                                                              \
    } while (0)

/* Standard group fixtures: rmc_init on MPI_COMM_WORLD / rmc_finalize. */
static inline int mpitest_setup_rmc(void **state)
{
    (void)state;
    return rmc_init(MPI_COMM_WORLD) == RMC_OK ? 0 : -1;
}
static inline int mpitest_teardown_rmc(void **state)
{
    (void)state;
    return rmc_finalize() == RMC_OK ? 0 : -1;
}
#endif

#endif
