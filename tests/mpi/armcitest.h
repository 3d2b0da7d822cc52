/* Helpers for cmocka programs written against the ARMCI API only (armci.h, message.h, MPI).
 *
 * The same test sources are built against RMC's libarmci and against ARMCI-MPI (with
 * -DARMCITEST_ARMCI_MPI), so they encode ARMCI semantics, not an implementation's. Like mpitest.h
 * (which includes rmc.h, so is not used here): every rank runs the same cmocka group, a check that
 * fails on one rank fails on every rank (ARMCI_CHECK_ALL agrees on the verdict with MPI_Allreduce
 * before asserting), only rank 0's cmocka output is shown unless RMC_TEST_VERBOSE=1. The group's
 * setup / teardown are ARMCI_Init / ARMCI_Finalize.
 */
#ifndef RMC_ARMCITEST_H
#define RMC_ARMCITEST_H

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
#include <armci.h>
#include <message.h>

static int me_, np_;

static inline int armcitest_all_(int ok, const char *expr, const char *file, int line)
{
    int all = ok;
    if (!ok)
        fprintf(stderr, "[rank %d] check failed: %s (%s:%d)\n", me_, expr, file, line);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* cond must hold on every rank; the verdict is agreed across ranks. */
#define ARMCI_CHECK_ALL(cond) assert_true(armcitest_all_(!!(cond), #cond, __FILE__, __LINE__))
/* An ARMCI call returning int: 0 is success. */
#define ARMCI_CHECK_OK(call)                                                                       \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != 0)                                                                              \
            fprintf(stderr, "[rank %d] %s -> %d\n", me_, #call, rc_);                              \
        ARMCI_CHECK_ALL(rc_ == 0);                                                                 \
    } while (0)

/* Non-collective form for code that only some ranks run (group members, critical sections): the
 * call must return 0; clears `ok` (checked later with ARMCI_CHECK_ALL) otherwise. */
#define ARMCI_LOCAL_OK(ok, call)                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != 0) {                                                                            \
            fprintf(stderr, "[rank %d] %s -> %d (%s:%d)\n", me_, #call, rc_, __FILE__, __LINE__);  \
            (ok) = 0;                                                                              \
        }                                                                                          \
    } while (0)

/* Deterministic pattern byte for (owner rank, offset, salt). */
static inline unsigned char armcitest_pat(int rank, size_t off, unsigned salt)
{
    uint64_t x = ((uint64_t)(unsigned)rank << 40) ^ ((uint64_t)off * 0x9E3779B97F4A7C15ull) ^ salt;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned char)x;
}

/* Allocates with ARMCI_Malloc; returns the base pointer array (malloc'd, np_ entries). */
static inline void **armcitest_malloc(armci_size_t bytes)
{
    void **b = calloc((size_t)np_, sizeof(void *));
    if (!b || ARMCI_Malloc(b, bytes) != 0) {
        fprintf(stderr, "[rank %d] ARMCI_Malloc(%ld) failed\n", me_, (long)bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return b;
}

static inline void armcitest_free(void **b)
{
    ARMCI_Free(b[me_]);
    free(b);
}

static inline int armcitest_setup(void **state)
{
    (void)state;
    return ARMCI_Init() == 0 ? 0 : -1;
}

static inline int armcitest_teardown(void **state)
{
    (void)state;
    return ARMCI_Finalize() == 0 ? 0 : -1;
}

static inline int armcitest_main(int argc, char **argv, const char *name,
                                 const struct CMUnitTest *tests, size_t ntests,
                                 CMFixtureFunction setup, CMFixtureFunction teardown)
{
#ifdef ARMCITEST_ARMCI_MPI
    /* ARMCI-MPI 0.3.1's default shared windows return wrong data on this MPICH; its documented
     * workaround (must be set before ARMCI_Init). Its default strided method (subarray datatypes)
     * is only right when every stride is a multiple of the one below, which ARMCI does not require;
     * its IOV method handles every valid descriptor. */
    setenv("ARMCI_USE_WIN_ALLOCATE", "0", 1);
    setenv("ARMCI_STRIDED_METHOD", "IOV", 1);
#endif
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me_);
    MPI_Comm_size(MPI_COMM_WORLD, &np_);
    const char *verbose = getenv("RMC_TEST_VERBOSE");
    if (me_ != 0 && !(verbose && *verbose == '1')) {
        fflush(stdout);
        if (!freopen("/dev/null", "w", stdout))
            perror("freopen");
    }
    int fails = _cmocka_run_group_tests(name, tests, ntests, setup, teardown);
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return total ? 1 : 0;
}

#define ARMCITEST_RUN(name, tests)                                                                 \
    armcitest_main(argc, argv, name, tests, sizeof(tests) / sizeof((tests)[0]), armcitest_setup,   \
                   armcitest_teardown)

#endif
