/* ARMCI_Init_mpi_comm (ARMCI-MPI's API after 0.3.1; GA 5.9's GA_Initialize_comm calls it): the
 * communicator given becomes ARMCI's world. Absolute ranks, ARMCI_Malloc, one-sided operations,
 * read-modify-write, groups, SMP domains and armci_msg_* are all relative to it, and processes
 * outside it do not call ARMCI at all. Each test initialises and finalises ARMCI itself; the
 * verdict is agreed over MPI_COMM_WORLD, members and non-members alike. Written against armci.h /
 * message.h only. */
#include "armcitest.h"

static int init_mpi_comm(MPI_Comm comm)
{
    armcitest_peer_env();
#ifdef ARMCITEST_ARMCI_MPI
    /* ARMCI-MPI 0.3.1 has no ARMCI_Init_mpi_comm; its ARMCI_Init_thread_comm does the same work */
    int provided;
    MPI_Query_thread(&provided);
    return ARMCI_Init_thread_comm(provided, comm);
#else
    return ARMCI_Init_mpi_comm(comm);
#endif
}

/* Everything a member checks, with `me` and `np` its rank and size in comm. 1 when all hold. */
static int member_checks(MPI_Comm comm, int me, int np)
{
    int ok = armci_msg_me() == me && armci_msg_nproc() == np;
    ARMCI_Group w;
    int gs = -1, gr = -1;
    ARMCI_Group_get_world(&w);
    ARMCI_Group_size(&w, &gs);
    ARMCI_Group_rank(&w, &gr);
    ok &= gs == np && gr == me;
    /* memory and one-sided operations by ARMCI (comm) rank: a ring */
    void **b = calloc((size_t)np, sizeof(void *));
    ok &= b && ARMCI_Malloc(b, 4 * sizeof(long)) == 0;
    long *mine = b[me];
    mine[0] = mine[1] = mine[2] = mine[3] = 0;
    ARMCI_Barrier();
    int right = (me + 1) % np;
    long v[2] = {1000L * me + 1, -(long)me};
    ok &= ARMCI_Put(v, b[right], sizeof(v), right) == 0;
    ARMCI_Fence(right);
    int one = 1;
    for (int t = 0; t < np; t++) {
        int old = 0;
        ok &= ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &old, (char *)b[t] + 2 * sizeof(long), one, t) == 0;
    }
    ARMCI_Barrier();
    int left = (me + np - 1) % np;
    ok &= mine[0] == 1000L * left + 1 && mine[1] == -(long)left;
    ok &= *(int *)&mine[2] == np; /* every member added one */
    long got[2] = {0, 0};
    ok &= ARMCI_Get(b[left], got, sizeof(got), left) == 0;
    int ll = (left + np - 1) % np;
    ok &= got[0] == 1000L * ll + 1 && got[1] == -(long)ll;
    ARMCI_Barrier();
    ARMCI_Free(b[me]);
    free(b);
    /* messages over the communicator */
    int x[2] = {me, 1};
    armci_msg_igop(x, 2, "+");
    ok &= x[0] == np * (np - 1) / 2 && x[1] == np;
    int flag = me != 0;
    armci_msg_igop(&flag, 1, "lor");
    ok &= flag == (np > 1);
    long bc = me == np - 1 ? 4242 : 0;
    armci_msg_bcast(&bc, sizeof(bc), np - 1);
    ok &= bc == 4242;
    /* SMP domains partition the communicator's processes */
    int nd = armci_domain_count(ARMCI_DOMAIN_SMP), total = 0;
    for (int d = 0; d < nd; d++)
        total += armci_domain_nprocs(ARMCI_DOMAIN_SMP, d);
    ok &= total == np && armci_domain_id(ARMCI_DOMAIN_SMP, me) ==
                             armci_domain_my_id(ARMCI_DOMAIN_SMP);
    /* ARMCI's world is comm: a barrier over it must not wait for anyone else */
    armci_msg_barrier();
    int csize;
    MPI_Comm_size(comm, &csize);
    ok &= csize == np;
    return ok;
}

/* Every process, in reverse order: ARMCI rank r is world rank np-1-r. */
static void test_reversed_world(void **state)
{
    (void)state;
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -me_, &c);
    int ok = init_mpi_comm(c) == 0;
    ok &= ARMCI_Initialized() != 0;
    ok &= member_checks(c, np_ - 1 - me_, np_);
    ok &= ARMCI_Finalize() == 0;
    ok &= !ARMCI_Initialized();
    MPI_Comm_free(&c);
    ARMCI_CHECK_ALL(ok);
}

/* World rank 0 stays out: it never calls ARMCI while the others use it (at 2 ranks a world of one). */
static void test_subset(void **state)
{
    (void)state;
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, me_ == 0 ? MPI_UNDEFINED : 1, me_, &c);
    int ok = 1;
    if (me_ != 0) {
        ok &= init_mpi_comm(c) == 0;
        ok &= member_checks(c, me_ - 1, np_ - 1);
        ok &= ARMCI_Finalize() == 0;
        MPI_Comm_free(&c);
    } else {
        ok &= c == MPI_COMM_NULL && !ARMCI_Initialized();
    }
    ARMCI_CHECK_ALL(ok);
}

/* Two disjoint worlds side by side are not possible in one process, but two halves each running
 * their own ARMCI one after the other, then the whole world again, are. */
static void test_halves_then_world(void **state)
{
    (void)state;
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, me_ % 2, me_, &c);
    int n = (np_ - me_ % 2 + 1) / 2;
    int ok = init_mpi_comm(c) == 0;
    ok &= member_checks(c, me_ / 2, n);
    ok &= ARMCI_Finalize() == 0;
    MPI_Comm_free(&c);
    ok &= init_mpi_comm(MPI_COMM_WORLD) == 0;
    ok &= member_checks(MPI_COMM_WORLD, me_, np_);
    ok &= ARMCI_Finalize() == 0;
    ARMCI_CHECK_ALL(ok);
}

MPITEST_MAIN("armci_comm", NULL, NULL, test_reversed_world, test_subset, test_halves_then_world)
