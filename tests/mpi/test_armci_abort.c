/* ARMCI API: bad input aborts with a message, as in ARMCI-MPI. Run by
 * tests/mpi/armci-abort.sh, one case per run (argv[1]): rank 0 makes one bad call while the
 * other ranks wait in a barrier. The whole job must end with a nonzero status and "ARMCI Error" on
 * stderr; a program that gets past the bad call prints "NOT ABORTED" and exits 0, which the script
 * reports as a failure. Case "none" makes no bad call (checks that the script tells the two apart).
 * Written against armci.h only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <armci.h>
#include <message.h>

int main(int argc, char **argv)
{
#ifdef ARMCITEST_ARMCI_MPI
    setenv("ARMCI_USE_WIN_ALLOCATE", "0", 1);
#endif
    const char *c = argc > 1 ? argv[1] : "none";
    if (!strcmp(c, "init_thread_unsafe")) { /* MPI_THREAD_MULTIPLE asked of an RMC without thread
                                             * safety: every rank aborts */
        setenv("RMC_THREAD_SAFE", "0", 1);
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        ARMCI_Init_thread(MPI_THREAD_MULTIPLE);
        printf("NOT ABORTED (case %s)\n", c);
        ARMCI_Finalize();
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(c, "error_rank_subcomm")) { /* ARMCI's world is MPI's reversed: the message
                                             * names ARMCI's rank 0, world rank np - 1 */
        MPI_Init(&argc, &argv);
        int wme, wnp;
        MPI_Comm rev;
        MPI_Comm_rank(MPI_COMM_WORLD, &wme);
        MPI_Comm_size(MPI_COMM_WORLD, &wnp);
        MPI_Comm_split(MPI_COMM_WORLD, 0, wnp - wme, &rev);
        ARMCI_Init_thread_comm(MPI_THREAD_SINGLE, rev);
        if (wme == wnp - 1)
            ARMCI_Error("error rank check", 3);
        ARMCI_Barrier();
        printf("NOT ABORTED (case %s)\n", c);
        ARMCI_Finalize();
        MPI_Finalize();
        return 0;
    }
    MPI_Init(&argc, &argv);
    ARMCI_Init();
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    void **b = calloc((size_t)np, sizeof(void *)), **z = calloc((size_t)np, sizeof(void *));
    ARMCI_Malloc(b, 64);
    ARMCI_Malloc(z, me == np - 1 ? 0 : 64); /* the last rank gives 0 bytes */
    long buf[16] = {0};
    int t = np - 1, known = 1;
    if (me == 0) {
        if (!strcmp(c, "none"))
            ;
        else if (!strcmp(c, "put_not_allocated"))
            ARMCI_Put(buf, buf + 8, 8, t); /* a local stack address is in no allocation */
        else if (!strcmp(c, "put_null_zero_size"))
            ARMCI_Put(buf, z[t], 8, t); /* NULL: that rank allocated 0 bytes */
        else if (!strcmp(c, "put_out_of_bounds"))
            ARMCI_Put(buf, (char *)b[t] + 60, 8, t); /* crosses the end */
        else if (!strcmp(c, "get_bad_rank"))
            ARMCI_Get(b[0], buf, 8, np); /* no such process */
        else if (!strcmp(c, "acc_bad_type"))
            ARMCI_Acc(99, buf, buf, b[t], 8, t);
        else if (!strcmp(c, "acc_partial_element"))
            ARMCI_Acc(ARMCI_ACC_DBL, buf, buf, b[t], 12, t); /* not a multiple of 8 bytes */
        else if (!strcmp(c, "puts_bad_levels")) {
            int str[1] = {8}, cnt[2] = {8, 2};
            ARMCI_PutS(buf, str, b[t], str, cnt, -1, t);
        } else if (!strcmp(c, "puts_out_of_bounds")) {
            int str[1] = {32}, cnt[2] = {8, 3}; /* 3 rows of 32 bytes: past 64 */
            ARMCI_PutS(buf, str, b[t], str, cnt, 1, t);
        } else if (!strcmp(c, "rmw_bad_op"))
            ARMCI_Rmw(42, buf, b[t], 1, t);
        else if (!strcmp(c, "lock_no_mutexes"))
            ARMCI_Lock(0, t);
        else if (!strcmp(c, "free_not_allocated"))
            ARMCI_Free(buf);
        else if (!strcmp(c, "gop_bad_op")) {
            int x = 1;
            armci_msg_igop(&x, 1, "xor"); /* checked before any communication */
        } else if (!strcmp(c, "gop_bitwise_float")) {
            double x = 1;
            armci_msg_dgop(&x, 1, "band"); /* bitwise operations take integer types only */
        } else if (!strcmp(c, "domain_past_end"))
            armci_domain_nprocs(ARMCI_DOMAIN_SMP, armci_domain_count(ARMCI_DOMAIN_SMP));
        else if (!strcmp(c, "armci_error"))
            ARMCI_Error("application says stop", 3);
        else
            known = 0;
        if (known)
            printf("NOT ABORTED (case %s)\n", c);
        else
            fprintf(stderr, "unknown case %s\n", c);
        fflush(stdout);
    }
    ARMCI_Barrier();
    ARMCI_Free(z[me]);
    ARMCI_Free(b[me]);
    free(b);
    free(z);
    ARMCI_Finalize();
    MPI_Finalize();
    return known ? 0 : 2;
}
