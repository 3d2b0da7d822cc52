/* Containers in an ARMCI application. Built twice from this source:
 *   test_ct_armci       RMC's libarmci: ARMCI_Init initializes RMC, and with it the containers
 *                       (their layer registers with comm), so the program never calls rmc_init;
 *   test_ct_armci_ampi  ARMCI-MPI beside librmc (-DCT_ARMCI_MPI): ARMCI_Init is ARMCI-MPI's, the
 *                       program calls rmc_init(MPI_COMM_WORLD) after it.
 * ARMCI memory and operations and container operations interleave and must all be exact. */
#include <armci.h>
#include "mpitest.h"
#include <rmc/containers.h>

static int me, np;

static int setup(void **s)
{
    (void)s;
    if (ARMCI_Init() != 0)
        return -1;
#ifdef CT_ARMCI_MPI
    if (rmc_init(MPI_COMM_WORLD) != RMC_OK)
        return -1;
#endif
    me = rmc_rank();
    np = rmc_nranks();
    return 0;
}

static int teardown(void **s)
{
    (void)s;
    int bad = 0;
#ifdef CT_ARMCI_MPI
    bad |= rmc_finalize() != RMC_OK;
#endif
    bad |= ARMCI_Finalize() != 0;
    return bad ? -1 : 0;
}

/* The containers are up inside the ARMCI program: a segment on every rank. */
static void test_up(void **s)
{
    (void)s;
    MPI_CHECK_ALL(rmc_initialized() == 1);
    rmc_segment_info_t si;
    MPI_CHECK_OK(rmc_segment_info(&si));
    MPI_CHECK_ALL(si.reserved >= si.committed && si.committed > 0);
}

/* ARMCI_Malloc memory written with ARMCI_Put, its values pushed through a queue and an array,
 * read back through ARMCI_Get: every value arrives where it should. */
static void test_interleaved(void **s)
{
    (void)s;
    void **bases = malloc(sizeof(void *) * (size_t)np);
    /* a multiple of 64 bytes: ARMCI-MPI's default windows (MPI_Win_allocate) place data wrongly on
     * MPICH 4.0.2 for sizes that are not multiples of 16 (docs/benchmarks.md) */
    MPI_CHECK_ALL(ARMCI_Malloc(bases, 64 * (((size_t)np + 7) / 8)) == 0);
    int right = (me + 1) % np, ok = 1;
    int64_t v = 1000 + me;
    MPITEST_EXPECT(ok, ARMCI_Put(&v, (int64_t *)bases[right] + me, 8, right) == 0);
    ARMCI_Barrier();
    int64_t *mine = bases[me], left = (me + np - 1) % np;
    MPITEST_EXPECT(ok, mine[left] == 1000 + left);
    /* every rank pushes what it received to rank 0's queue, and into the array at its index */
    rmc_queue_h q;
    rmc_array_h a;
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_FAST, 0, (size_t)np, &rmc_type_i64, &q));
    MPI_CHECK_OK(rmc_array_create((size_t)np, &rmc_type_i64, RMC_ARRAY_BLOCK, &a));
    MPITEST_EXPECT(ok, rmc_queue_push(q, &mine[left], RMC_PROMISE_PUSH) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_array_put(a, (size_t)me, &mine[left]) == RMC_OK);
    MPI_CHECK_OK(rmc_barrier());
    if (me == 0) {
        int64_t sum = 0, x;
        for (int i = 0; i < np; i++) {
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, RMC_PROMISE_LOCAL) == RMC_OK);
            sum += x;
        }
        MPITEST_EXPECT(ok, sum == 1000LL * np + (int64_t)np * (np - 1) / 2);
    }
    int64_t got;
    MPITEST_EXPECT(ok, rmc_array_get(a, (size_t)right, &got) == RMC_OK && got == 1000 + me);
    /* and back into ARMCI memory, read with ARMCI_Get */
    MPITEST_EXPECT(ok, ARMCI_Put(&got, (int64_t *)bases[right] + right, 8, right) == 0);
    MPI_CHECK_OK(rmc_barrier());
    ARMCI_Barrier();
    int64_t back;
    MPITEST_EXPECT(ok,
                   ARMCI_Get((int64_t *)bases[me] + me, &back, 8, me) == 0 && back == 1000 + left);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_queue_destroy(q));
    MPI_CHECK_OK(rmc_array_destroy(a));
    MPI_CHECK_ALL(ARMCI_Free(bases[me]) == 0);
    free(bases);
}

MPITEST_MAIN(
#ifdef CT_ARMCI_MPI
    "containers beside ARMCI-MPI",
#else
    "containers in RMC's libarmci",
#endif
    setup, teardown, test_up, test_interleaved)
