/* Helpers for cmocka programs written against the ARMCI API only (armci.h, message.h, MPI).
 *
 * The same test sources are built against RMC's libarmci and against ARMCI-MPI (with
 * -DARMCITEST_ARMCI_MPI), so they encode ARMCI semantics, not an implementation's. A thin layer on
 * the MPI-only part of mpitest.h (the shared harness): every rank runs the same cmocka group, a
 * check that fails on one rank fails on every rank (ARMCI_CHECK_ALL agrees on the verdict before
 * asserting), only rank 0's cmocka output is shown unless RMC_TEST_VERBOSE=1. The group's setup /
 * teardown are ARMCI_Init / ARMCI_Finalize.
 */
#ifndef RMC_ARMCITEST_H
#define RMC_ARMCITEST_H

#define MPITEST_NO_RMC
#include "mpitest.h"
#include <armci.h>
#include <message.h>

#define me_           mpitest_rank_
#define np_           mpitest_nranks_
#define armcitest_pat mpitest_pat
/* cond must hold on every rank; the verdict is agreed across ranks. */
#define ARMCI_CHECK_ALL(c) MPI_CHECK_ALL(c)

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

/* Settings the peer needs before ARMCI_Init (nothing for RMC's libarmci). */
static inline void armcitest_peer_env(void)
{
#ifdef ARMCITEST_ARMCI_MPI
    /* ARMCI-MPI 0.3.1's default shared windows return wrong data on this MPICH; its documented
     * workaround (must be set before ARMCI_Init). Its default strided method (subarray datatypes)
     * is only right when every stride is a multiple of the one below, which ARMCI does not require;
     * its IOV method handles every valid descriptor. */
    setenv("ARMCI_USE_WIN_ALLOCATE", "0", 1);
    setenv("ARMCI_STRIDED_METHOD", "IOV", 1);
#endif
}

static inline int armcitest_setup(void **state)
{
    (void)state;
    armcitest_peer_env();
    return ARMCI_Init() == 0 ? 0 : -1;
}

static inline int armcitest_teardown(void **state)
{
    (void)state;
    return ARMCI_Finalize() == 0 ? 0 : -1;
}

#define ARMCITEST_RUN(name, tests) MPITEST_RUN(name, tests, armcitest_setup, armcitest_teardown)
#define ARMCITEST_MAIN(name, ...)                                                                  \
    MPITEST_MAIN(name, armcitest_setup, armcitest_teardown, __VA_ARGS__)

#endif
