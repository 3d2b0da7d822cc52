/* ga-compat: bad input aborts the job with "GA ERROR: <call>: <why>", as GA does. Run by
 * tests/ga/ga-abort.sh, one case per run (argv[1]): rank 0 makes the bad call (every rank for
 * collective calls) while the others wait in a barrier. A program that gets past the bad call
 * prints "NOT ABORTED" and exits 0, which the script reports as a failure; case "none" makes no
 * bad call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <ga.h>

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    GA_Initialize();
    int me = GA_Nodeid(), np = GA_Nnodes();
    const char *c = argc > 1 ? argv[1] : "none";
    int dims[2] = {8, 6}, lo[2] = {0, 0}, hi[2] = {3, 3}, ld[1] = {4};
    int g = NGA_Create(C_DBL, 2, dims, "a", NULL);
    int gi = NGA_Create(C_INT, 2, dims, "i", NULL);
    int other[2] = {5, 9};
    int g2 = NGA_Create(C_DBL, 2, other, "b", NULL);
    GA_Create_mutexes(2);
    double buf[64] = {0};
    int collective = !strcmp(c, "dimension_mismatch") || !strcmp(c, "bad_ndim") ||
                     !strcmp(c, "bad_type") || !strcmp(c, "use_after_destroy") ||
                     !strcmp(c, "gemm_groups") || !strcmp(c, "user_type_math") ||
                     !strcmp(c, "overlay_too_big") || !strcmp(c, "dot_groups") ||
                     !strcmp(c, "mutexes_twice") || !strcmp(c, "mutexes_none") ||
                     !strcmp(c, "diag_reuse_group") || !strcmp(c, "overlay_mirror") ||
                     !strcmp(c, "lu_solve_trans") || !strcmp(c, "linalg_serial_mismatch") ||
                     !strcmp(c, "assemble_too_small") || !strcmp(c, "freemem_twice") ||
                     !strcmp(c, "freemem_after_destroy") || !strcmp(c, "assemble_duplicate");
    int gp = 0; /* gemm_groups: an array on a group of every process (not the world group) */
    if (!strcmp(c, "gemm_groups") || !strcmp(c, "dot_groups") || !strcmp(c, "diag_reuse_group")) {
        int all[64];
        for (int i = 0; i < np && i < 64; i++)
            all[i] = i;
        gp = NGA_Create_config(C_DBL, 2, dims, "on_group", NULL, GA_Pgroup_create(all, np));
    }
    if (!strcmp(c, "use_after_destroy"))
        GA_Destroy(g2);
    /* nonmember_*: a group of process 1 alone (created by every process); process 0, outside
     * it, calls one of its collectives */
    int last[1] = {1};
    int gnm = !strncmp(c, "nonmember_", 10) ? GA_Pgroup_create(last, 1) : 0;
    if (me == 0 || collective) {
        if (!strcmp(c, "none"))
            ;
        else if (!strcmp(c, "invalid_handle"))
            NGA_Put(-12345, lo, hi, buf, ld);
        else if (!strcmp(c, "use_after_destroy")) {
            int l[2] = {0, 0}, h[2] = {1, 1}, ld2[1] = {2};
            NGA_Get(g2, l, h, buf, ld2);
        } else if (!strcmp(c, "out_of_range_patch")) {
            int h[2] = {8, 5};
            NGA_Get(g, lo, h, buf, ld); /* row 8 of 0..7 */
        } else if (!strcmp(c, "dimension_mismatch"))
            GA_Copy(g, g2); /* 8 x 6 into 5 x 9 */
        else if (!strcmp(c, "read_inc_type")) {
            int sub[2] = {0, 0};
            NGA_Read_inc(g, sub, 1); /* a double array */
        } else if (!strcmp(c, "null_buffer"))
            NGA_Put(g, lo, hi, NULL, ld);
        else if (!strcmp(c, "ld_too_small")) {
            int small[1] = {2};
            NGA_Get(g, lo, hi, buf, small); /* 4 columns in rows of 2 */
        } else if (!strcmp(c, "bad_ndim")) {
            int d8[8] = {2, 2, 2, 2, 2, 2, 2, 2};
            NGA_Create(C_DBL, 8, d8, "eight", NULL);
        } else if (!strcmp(c, "bad_type"))
            NGA_Create(12345, 2, dims, "typeless", NULL);
        else if (!strcmp(c, "access_nonlocal")) {
            int l[2], h[2];
            NGA_Distribution(gi, np - 1, l, h); /* the last rank's block */
            void *p = NULL;
            int ldp[1];
            NGA_Access(gi, l, h, &p, ldp);
        } else if (!strcmp(c, "gop_bad_op")) {
            double x = 1;
            GA_Dgop(&x, 1, "xor");
        } else if (!strcmp(c, "gemm_groups")) {
            int sq = NGA_Create(C_DBL, 2, (int[2]){6, 6}, "sq", NULL);
            GA_Dgemm('N', 'N', 6, 6, 6, 1.0, gp, sq, 0.0, sq); /* A on a group, B and C not */
        } else if (!strcmp(c, "user_type_math")) {
            int ut = NGA_Register_type(24);
            int gu = NGA_Create(ut, 2, dims, "records", NULL);
            double two = 2;
            GA_Scale(gu, &two); /* arithmetic on opaque records */
        } else if (!strcmp(c, "overlay_too_big")) {
            int small[1] = {4 * np}, big[2] = {20, 20};
            int gs = NGA_Create(C_DBL, 1, small, "small", NULL), gb = GA_Create_handle();
            GA_Set_data(gb, 2, big, C_DBL);
            GA_Overlay(gb, gs); /* 400 doubles into 4 per process */
        } else if (!strcmp(c, "overlay_mirror")) { /* a mirrored array in a world array's memory */
            int gm = GA_Create_handle();
            GA_Set_data(gm, 2, dims, C_DBL);
            GA_Set_pgroup(gm, GA_Pgroup_get_mirror());
            GA_Overlay(gm, g); /* (GA 5.8.2: "must be on same procesor group") */
        } else if (!strcmp(c, "assemble_duplicate")) {
            static double mem[64];
            GA_Assemble_duplicate(g, "dup", mem); /* GA reads its own header before ptr */
        } else if (!strcmp(c, "assemble_too_small")) { /* (GA 5.8.2 writes past the blocks) */
            double *mem = GA_Getmem(C_DBL, 2, -1);
            GA_Assemble_duplicate(g, "dup", mem);
        } else if (!strcmp(c, "freemem_twice")) { /* (GA 5.8.2 frees the memory twice) */
            double *mem = GA_Getmem(C_DBL, 2, -1);
            GA_Freemem(mem);
            GA_Freemem(mem);
        } else if (!strcmp(c, "freemem_after_destroy")) { /* (the blocks went with the array) */
            double *mem = GA_Getmem(C_DBL, 64, -1);
            GA_Destroy(GA_Assemble_duplicate(g, "dup", mem));
            GA_Freemem(mem);
        } else if (!strcmp(c, "fence_not_init")) {
            GA_Init_fence();
            GA_Fence(); /* ends the GA_Init_fence: fine */
            GA_Fence(); /* no GA_Init_fence left (GA 5.8.2: "ga_fence: fence not initialized") */
        } else if (!strcmp(c, "diag_reuse_group")) {
            /* S's factor kept for world arrays, then reused for another group's (GA 5.8.2 keeps
             * no group with it either) */
            int sq[2] = {4, 4}, ga[3], gq[3];
            double one = 1, two = 2, ev[4];
            for (int k = 0; k < 3; k++) {
                ga[k] = NGA_Create(C_DBL, 2, sq, "world", NULL);
                gq[k] = NGA_Create_config(C_DBL, 2, sq, "group", NULL, GA_Get_pgroup(gp));
                GA_Zero(ga[k]);
                GA_Zero(gq[k]);
            }
            GA_Shift_diagonal(ga[0], &one);
            GA_Shift_diagonal(ga[1], &two);
            GA_Shift_diagonal(gq[0], &one);
            GA_Diag_reuse(0, ga[0], ga[1], ga[2], ev);
            GA_Diag_reuse(1, gq[0], gq[1], gq[2], ev);
        } else if (!strcmp(c, "lu_solve_trans")) {
            int sq = NGA_Create(C_DBL, 2, (int[2]){6, 6}, "sq", NULL);
            double one = 1;
            GA_Zero(sq);
            GA_Shift_diagonal(sq, &one);
            GA_Lu_solve('x', sq, g); /* only n / N / t / T (GA 5.8.2 takes it as 'N') */
        } else if (!strcmp(c, "linalg_serial_mismatch")) {
            /* the knob is read at each solve: set on rank 0 only, rank 0 would take ScaLAPACK and
             * the others LAPACK on rank 0 (they waited in different collectives) */
            int sq[2] = {8, 8};
            double one = 1;
            int ga = NGA_Create(C_DBL, 2, sq, "a", NULL), gb = NGA_Create(C_DBL, 2, sq, "b", NULL);
            GA_Zero(ga);
            GA_Shift_diagonal(ga, &one);
            GA_Copy(ga, gb);
            if (me == 0)
                setenv("RMC_GA_LINALG_SERIAL", "0", 1);
            GA_Lu_solve('N', ga, gb);
        } else if (!strcmp(c, "dot_groups"))
            GA_Ddot(g, gp); /* (GA 5.8.2: "Both arrays must be defined on same group") */
        else if (!strcmp(c, "mutexes_twice"))
            GA_Create_mutexes(3); /* 2 exist */
        else if (!strcmp(c, "mutexes_none")) {
            GA_Destroy_mutexes();
            GA_Destroy_mutexes(); /* none left */
        } else if (!strcmp(c, "mutex_out_of_range"))
            GA_Lock(5); /* 2 mutexes */
        else if (!strcmp(c, "nonmember_sync"))
            GA_Pgroup_sync(gnm);
        else if (!strcmp(c, "nonmember_igop")) {
            int x = 1;
            GA_Pgroup_igop(gnm, &x, 1, "+");
        } else if (!strcmp(c, "nonmember_brdcst")) {
            int x = 1;
            GA_Pgroup_brdcst(gnm, &x, sizeof x, 0);
        } else if (!strcmp(c, "nonmember_split"))
            GA_Pgroup_split(gnm, 1);
        else if (!strcmp(c, "nonmember_split_irreg"))
            GA_Pgroup_split_irreg(gnm, 0);
        else if (!strcmp(c, "nonmember_duplicate"))
            GA_Pgroup_duplicate(gnm);
        else if (!strcmp(c, "nonmember_set_default"))
            GA_Pgroup_set_default(gnm);
        else if (!strcmp(c, "property_twice")) {
            GA_Set_property(g, "read_cache");
            GA_Set_property(g, "read_only"); /* GA 5.8.2: "Cannot set property on an array ..." */
        } else {
            fprintf(stderr, "gat_abort: unknown case '%s'\n", c);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        printf("NOT ABORTED (case %s)\n", c);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    GA_Destroy_mutexes();
    GA_Terminate();
    MPI_Finalize();
    return 0;
}
