/* Helpers for cmocka programs that run under mpiexec.
 *
 * Every rank runs the same cmocka group. A check that one rank fails must fail on every rank and must
 * not leave the others waiting in a collective: use MPI_CHECK_ALL(cond), which agrees on the verdict
 * with MPI_Allreduce before asserting. Only rank 0's cmocka output is shown unless RMC_TEST_VERBOSE=1.
 * Failed checks are reported on stderr by the failing rank, with file and line. */
#ifndef RMC_MPITEST_H
#define RMC_MPITEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <mpi.h>
#include <rmc.h>

static int mpitest_rank_, mpitest_nranks_;

/* Agrees on `ok` across ranks; on failure the local culprit prints where, then every rank fails. */
static inline int mpitest_all_(int ok, const char *expr, const char *file, int line)
{
    int all = ok;
    if (!ok)
        fprintf(stderr, "[rank %d] check failed: %s (%s:%d)\n", mpitest_rank_, expr, file, line);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

#define MPI_CHECK_ALL(cond) assert_true(mpitest_all_(!!(cond), #cond, __FILE__, __LINE__))

/* Status must be RMC_OK on this rank; verdict agreed across ranks. */
#define MPI_CHECK_OK(call)                                                                        \
    do {                                                                                          \
        rmc_status_t st_ = (call);                                                                \
        if (st_ != RMC_OK)                                                                        \
            fprintf(stderr, "[rank %d] %s -> %s\n", mpitest_rank_, #call, rmc_status_string(st_)); \
        MPI_CHECK_ALL(st_ == RMC_OK);                                                             \
    } while (0)

/* Deterministic pattern byte for (owner rank, offset, salt). */
static inline unsigned char mpitest_pat(int rank, size_t off, unsigned salt)
{
    uint64_t x = ((uint64_t)(unsigned)rank << 40) ^ ((uint64_t)off * 0x9E3779B97F4A7C15ull) ^ salt;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)x;
}

/* Runs a cmocka group on every rank with MPI/RMC set up around it by the group's own setup.
 * Returns the agreed number of failures (0 = pass on every rank). */
static inline int mpitest_main(int argc, char **argv, const char *name, const struct CMUnitTest *tests,
                               size_t ntests, CMFixtureFunction setup, CMFixtureFunction teardown)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpitest_rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &mpitest_nranks_);
    const char *verbose = getenv("RMC_TEST_VERBOSE");
    int saved_stdout = -1;
    if (mpitest_rank_ != 0 && !(verbose && *verbose == '1')) {
        fflush(stdout);
        saved_stdout = dup(1);
        if (!freopen("/dev/null", "w", stdout))
            perror("freopen");
    }
    int fails = _cmocka_run_group_tests(name, tests, ntests, setup, teardown);
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (saved_stdout >= 0)
        close(saved_stdout);
    MPI_Finalize();
    return total ? 1 : 0;
}

#define MPITEST_RUN(name, tests, setup, teardown) \
    mpitest_main(argc, argv, name, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

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
