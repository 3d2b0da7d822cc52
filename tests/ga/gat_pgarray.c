/* Arrays on process groups, compared with GA 5.8.2: the world split into two groups (the
 * processes of each create, fill and read their own group's arrays: NGA_Create_config on a group
 * handle, and NGA_Create under GA_Pgroup_set_default), ghost cells and multiplications on group
 * arrays, group-relative process ids in the
 * distribution queries, GA_Sync / GA_Pgroup_sync on the group, a restricted array (data on some
 * processes only) on the world, and world arrays created after group arrays. */
#include "gatest.h"

static double val(int i, int j)
{
    return i * 100.0 + j;
}

/* group process me puts val() into its block of 2-D array g; its bounds in lo, hi */
static void put_own_block(int g, int me, int lo[2], int hi[2])
{
    NGA_Distribution(g, me, lo, hi);
    if (hi[0] >= lo[0] && hi[1] >= lo[1]) {
        int r = hi[0] - lo[0] + 1, c = hi[1] - lo[1] + 1;
        double *b = malloc(sizeof(double) * (size_t)(r * c));
        for (int i = 0; i < r; i++)
            for (int j = 0; j < c; j++)
                b[i * c + j] = val(lo[0] + i, lo[1] + j);
        NGA_Put(g, lo, hi, b, &c);
        free(b);
    }
}

/* an m x n array on group p: every member puts its block, all read the whole and a patch */
static int fill_and_check(int g, int m, int n, int me, int np)
{
    int lo[2], hi[2];
    put_own_block(g, me, lo, hi);
    GA_Pgroup_sync(GA_Get_pgroup(g));
    double *all = malloc(sizeof(double) * (size_t)(m * n));
    int alo[2] = {0, 0}, ahi[2] = {m - 1, n - 1};
    NGA_Get(g, alo, ahi, all, &n);
    int ok = 1;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            ok &= all[i * n + j] == val(i, j);
    free(all);
    GA_Pgroup_sync(GA_Get_pgroup(g)); /* every member has read before anyone accumulates */
    /* an accumulate by every member into one patch */
    double ones[6] = {1, 1, 1, 1, 1, 1}, one = 1, got[6];
    int plo[2] = {m / 2 - 1, n / 2 - 1}, phi[2] = {m / 2, n / 2 + 1}, ld = 3;
    NGA_Acc(g, plo, phi, ones, &ld, &one);
    GA_Pgroup_sync(GA_Get_pgroup(g));
    NGA_Get(g, plo, phi, got, &ld);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            ok &= got[i * 3 + j] == val(plo[0] + i, plo[1] + j) + np;
    return ok;
}

/* NGA_Access_block_segment(g, id): id is this process's id in g's group (whatever the default
 * group); the segment is its block, as NGA_Access gives it */
static int segment_ok(int g, int id)
{
    int lo[2], hi[2], ld[1], len = -1;
    double *pa = NULL, *ps = NULL;
    NGA_Distribution(g, id, lo, hi);
    NGA_Access(g, lo, hi, &pa, ld);
    NGA_Access_block_segment(g, id, &ps, &len);
    int ok = ps == pa && len == (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1);
    NGA_Release_block_segment(g, id);
    NGA_Release(g, lo, hi);
    return ok;
}

/* Multiplication of arrays on group `grp` (every member calls): C = 2 A^T B + 0.5 C with A k x m,
 * B k x n (GA_Dgemm 'T','N'), then a patch of C = a patch of A x a patch of B^T - that patch of C
 * (NGA_Matmul_patch 'N','T'), then a double complex GA_Zgemm 'C','N'. Every member compares C
 * with a serial product after each: okp[0..2] stay 1 where they agree; *sum = a checksum. */
static double aval(int i, int j)
{
    return (double)((i * 7 + j * 3) % 11) - 5.0;
}

static int gemm_on_group(int grp, double *sum, int okp[3])
{
    enum { M = 13, N = 11, K = 9 };
    int da[2] = {K, M}, db[2] = {K, N}, dc[2] = {M, N};
    int ga = NGA_Create_config(C_DBL, 2, da, "A", NULL, grp);
    int gb = NGA_Create_config(C_DBL, 2, db, "B", NULL, grp);
    int gc = NGA_Create_config(C_DBL, 2, dc, "C", NULL, grp);
    double a[K][M], b[K][N], c[M][N], ref[M][N];
    for (int i = 0; i < K; i++) {
        for (int j = 0; j < M; j++)
            a[i][j] = aval(i, j);
        for (int j = 0; j < N; j++)
            b[i][j] = aval(j + 1, i);
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            ref[i][j] = c[i][j] = (double)(i - j);
    if (GA_Pgroup_nodeid(grp) == 0) {
        int lo[2] = {0, 0}, ha[2] = {K - 1, M - 1}, hb[2] = {K - 1, N - 1}, hc[2] = {M - 1, N - 1};
        int la = M, lb = N, lc = N;
        NGA_Put(ga, lo, ha, a, &la);
        NGA_Put(gb, lo, hb, b, &lb);
        NGA_Put(gc, lo, hc, c, &lc);
    }
    GA_Pgroup_sync(grp);
    GA_Dgemm('T', 'N', M, N, K, 2.0, ga, gb, 0.5, gc);
    double got[M][N];
    int lo[2] = {0, 0}, hc[2] = {M - 1, N - 1}, lc = N;
    NGA_Get(gc, lo, hc, got, &lc);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double x = 0;
            for (int l = 0; l < K; l++)
                x += a[l][i] * b[l][j];
            ref[i][j] = 2.0 * x + 0.5 * ref[i][j];
            okp[0] &= got[i][j] == ref[i][j];
        }
    GA_Pgroup_sync(grp); /* every member has read C before it changes */
    /* (inclusive bounds, the B patch in op(B)'s indices as GA has them) C[1:6, 2:7] =
     * A[2:7, 0:3] (6 x 4) x B^T[0:3, 3:8] (4 x 6) - C[1:6, 2:7] */
    int alo[2] = {2, 0}, ahi[2] = {7, 3}, blo[2] = {0, 3}, bhi[2] = {3, 8}, clo[2] = {1, 2},
        chi[2] = {6, 7};
    double one = 1.0, mone = -1.0;
    NGA_Matmul_patch('N', 'T', &one, &mone, ga, alo, ahi, gb, blo, bhi, gc, clo, chi);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double x = 0;
            for (int l = 0; l < 4; l++)
                x += a[alo[0] + i][alo[1] + l] * b[blo[1] + j][blo[0] + l];
            ref[clo[0] + i][clo[1] + j] = x - ref[clo[0] + i][clo[1] + j];
        }
    NGA_Get(gc, lo, hc, got, &lc);
    *sum = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            okp[1] &= got[i][j] == ref[i][j];
            *sum += got[i][j];
        }
    GA_Pgroup_sync(grp);
    GA_Destroy(ga);
    GA_Destroy(gb);
    GA_Destroy(gc);

    /* double complex: Z = A^H B with A k x m, B k x n of (i + j i) values */
    int za = NGA_Create_config(C_DCPL, 2, da, "ZA", NULL, grp);
    int zb = NGA_Create_config(C_DCPL, 2, db, "ZB", NULL, grp);
    int zc = NGA_Create_config(C_DCPL, 2, dc, "ZC", NULL, grp);
    DoubleComplex zaa[K][M], zbb[K][N], zcc[M][N];
    for (int i = 0; i < K; i++) {
        for (int j = 0; j < M; j++)
            zaa[i][j].real = aval(i, j), zaa[i][j].imag = aval(j, i + 2);
        for (int j = 0; j < N; j++)
            zbb[i][j].real = aval(j, i), zbb[i][j].imag = -aval(i + 1, j);
    }
    if (GA_Pgroup_nodeid(grp) == 0) {
        int ha[2] = {K - 1, M - 1}, hb[2] = {K - 1, N - 1}, la = M, lb = N;
        NGA_Put(za, lo, ha, zaa, &la);
        NGA_Put(zb, lo, hb, zbb, &lb);
    }
    GA_Zero(zc);
    GA_Pgroup_sync(grp);
    DoubleComplex zone = {1.0, 0.0}, zzero = {0.0, 0.0};
    GA_Zgemm('C', 'N', M, N, K, zone, za, zb, zzero, zc);
    NGA_Get(zc, lo, hc, zcc, &lc);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double re = 0, im = 0;
            for (int l = 0; l < K; l++) { /* conj(a[l][i]) * b[l][j] */
                double ar = zaa[l][i].real, ai = -zaa[l][i].imag;
                re += ar * zbb[l][j].real - ai * zbb[l][j].imag;
                im += ar * zbb[l][j].imag + ai * zbb[l][j].real;
            }
            okp[2] &= zcc[i][j].real == re && zcc[i][j].imag == im;
            *sum += zcc[i][j].real + 2 * zcc[i][j].imag;
        }
    GA_Pgroup_sync(grp);
    GA_Destroy(za);
    GA_Destroy(zb);
    GA_Destroy(zc);
    return okp[0] && okp[1] && okp[2];
}

/* A 7 x 6 array with ghost widths 1 and 2 on group `grp`: the members fill it, GA_Update_ghosts,
 * and each checks every cell of its padded block (NGA_Access_ghosts) against the periodic
 * neighbour's value; *sum = the sum of the member's padded block. */
static __attribute__((unused)) int ghosts_on_group(int grp, int gme, double *sum)
{
    enum { R = 7, C = 6 };
    int dims[2] = {R, C}, w[2] = {1, 2}, ok = 1;
    int g = NGA_Create_ghosts_config(C_DBL, 2, dims, w, "ghosts", NULL, grp);
    if (!g)
        return 0;
    int lo[2], hi[2];
    *sum = 0;
    put_own_block(g, gme, lo, hi);
    GA_Pgroup_sync(grp);
    GA_Update_ghosts(g);
    if (hi[0] >= lo[0] && hi[1] >= lo[1]) {
        int pd[2], ld[1];
        double *p = NULL;
        NGA_Access_ghosts(g, pd, &p, ld);
        for (int i = 0; i < pd[0]; i++)
            for (int j = 0; j < pd[1]; j++) {
                int x = ((lo[0] - w[0] + i) % R + R) % R, y = ((lo[1] - w[1] + j) % C + C) % C;
                ok &= p[i * ld[0] + j] == val(x, y);
                *sum += p[i * ld[0] + j];
            }
        NGA_Release_ghosts(g);
    }
    /* multiplications with ghost arrays of the group: P = G G^T (7 x 7), then G2 = P G into a
     * second ghost array; every member checks all of both against the serial products */
    int pdims[2] = {R, R};
    int gp = NGA_Create_config(C_DBL, 2, pdims, "P", NULL, grp);
    int g2 = NGA_Create_ghosts_config(C_DBL, 2, dims, w, "G2", NULL, grp);
    ok &= gp != 0 && g2 != 0;
    if (ok) {
        GA_Dgemm('N', 'T', R, R, C, 1.0, g, g, 0.0, gp);
        GA_Dgemm('N', 'N', R, C, R, 1.0, gp, g, 0.0, g2);
        double pv[R][R], gv[R][C];
        int z[2] = {0, 0}, ph[2] = {R - 1, R - 1}, gh[2] = {R - 1, C - 1}, lp = R, lg = C;
        NGA_Get(gp, z, ph, pv, &lp);
        NGA_Get(g2, z, gh, gv, &lg);
        for (int i = 0; i < R; i++) {
            for (int j = 0; j < R; j++) {
                double want = 0;
                for (int k = 0; k < C; k++)
                    want += val(i, k) * val(j, k);
                ok &= fabs(pv[i][j] - want) <= 1e-12 * (1 + fabs(want));
            }
            for (int j = 0; j < C; j++) {
                double want = 0;
                for (int k = 0; k < R; k++)
                    want += pv[i][k] * val(k, j);
                ok &= fabs(gv[i][j] - want) <= 1e-12 * (1 + fabs(want));
            }
        }
    }
    GA_Pgroup_sync(grp);
    if (gp)
        GA_Destroy(gp);
    if (g2)
        GA_Destroy(g2);
    GA_Destroy(g);
    return ok;
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    int world = GA_Pgroup_get_world();
    if (gat_np < 2) {
        gat_out("# needs 2 processes");
        return gat_finish();
    }
    /* two groups: the first half and the rest */
    int half = gat_np / 2, in_first = gat_me < half;
    int *l1 = malloc(sizeof(int) * gat_np), *l2 = malloc(sizeof(int) * gat_np);
    for (int i = 0; i < half; i++)
        l1[i] = i;
    for (int i = half; i < gat_np; i++)
        l2[i - half] = i;
    int g1 = GA_Pgroup_create(l1, half), g2 = GA_Pgroup_create(l2, gat_np - half);
    int mine = in_first ? g1 : g2, gsz = GA_Pgroup_nnodes(mine), gme = GA_Pgroup_nodeid(mine);
    gat_out("groups of %d and %d", half, gat_np - half);

    /* an array on my group by handle */
    int dims[2] = {9, 7};
    int ga = NGA_Create_config(C_DBL, 2, dims, "grp", NULL, mine);
    int ok = ga != 0 && fill_and_check(ga, 9, 7, gme, gsz);
    gat_check(ok, "array on a group (NGA_Create_config): put, get, acc");
    /* the distribution in group-relative ids: print the first group's (rank 0 is in it) */
    for (int p = 0; p < gsz && gat_me == 0; p++) {
        int lo[2], hi[2];
        NGA_Distribution(ga, p, lo, hi);
        gat_out("  group proc %d: [%d %d] .. [%d %d]", p, lo[0], lo[1], hi[0], hi[1]);
    }
    int last[2] = {8, 6};
    int owner = NGA_Locate(ga, last);
    int owners[2] = {in_first ? owner : 0, in_first ? 0 : owner};
    GA_Igop(owners, 2, "max");
    gat_out("last element on group process %d / %d", owners[0], owners[1]);
    gat_check(segment_ok(ga, gme), "NGA_Access_block_segment on a group array: its group's id");
    GA_Pgroup_sync(mine);
    GA_Destroy(ga);

    /* GA_Getmem on my group (collective over it only) and an array of the group assembled on the
     * blocks: its elements are what each member wrote into its block (GA 5.8.2 cannot: ga-compat
     * alone runs it, its lines comments) */
#ifdef GAT_PEER
    gat_out("# GA 5.8.2 cannot: GA_Getmem on a process group gives a member whose world rank is "
            "not its group rank an unusable pointer (it crashes writing its block; GA takes its "
            "block from a table of world ranks the group allocation fills by group rank): "
            "ga-compat alone runs that case");
#else
    int gt = NGA_Create_config(C_DBL, 2, dims, "grp template", NULL, mine), blo[2], bhi[2];
    NGA_Distribution(gt, gme, blo, bhi);
    int bn = bhi[0] >= blo[0] ? (bhi[0] - blo[0] + 1) * (bhi[1] - blo[1] + 1) : 0;
    double *mem = GA_Getmem(C_DBL, bn + 1, mine);
    for (int i = 0; i <= bn; i++)
        mem[i] = 100 * gme + i;
    int gd = GA_Assemble_duplicate(gt, "grp assembled", mem);
    double all[63], asum = 0;
    int alo[2] = {0, 0}, ahi[2] = {8, 6}, ald = 7, aok = 1;
    NGA_Get(gd, alo, ahi, all, &ald);
    for (int p = 0; p < gsz; p++) {
        int plo[2], phi[2];
        NGA_Distribution(gt, p, plo, phi);
        for (int i = plo[0], k = 0; i <= phi[0]; i++)
            for (int j = plo[1]; j <= phi[1]; j++, k++)
                aok &= all[i * 7 + j] == 100 * p + k;
    }
    for (int i = 0; i < 63; i++)
        asum += all[i] * (i + 1);
    gat_check_own(aok, "GA_Getmem on a group, GA_Assemble_duplicate of a group array");
    double sums[2] = {in_first ? asum : 0, in_first ? 0 : asum};
    GA_Dgop(sums, 2, "max");
    gat_out("# group assembled sums %.1f / %.1f", sums[0], sums[1]);
    GA_Destroy(gd); /* (the blocks go with it) */
    GA_Destroy(gt);
#endif

    /* ghost cells on each group (GA 5.8.2 aborts: ga-compat alone runs it, its lines comments) */
#ifdef GAT_PEER
    gat_out("# GA 5.8.2 cannot: ghost arrays on a process group abort at NGA_Create_ghosts_config "
            "(\"Could not allocate update information for ghost cells\") at 2-4 processes: "
            "ga-compat alone runs that case");
#else
    double ghsum = 0;
    int gok = ghosts_on_group(mine, gme, &ghsum), gall = 0;
    MPI_Allreduce(&gok, &gall, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!gall)
        gat_failed = 1;
    gat_out("# %s ghost cells on group arrays: GA_Update_ghosts, GA_Dgemm", gall ? "ok" : "FAIL");
    if (!gall && gat_me == 0)
        printf("FAIL ghost cells on group arrays\n");
    if (gme != 0)
        ghsum = 0;
    double ghs[2] = {in_first ? ghsum : 0, in_first ? 0 : ghsum};
    GA_Dgop(ghs, 2, "+");
    gat_out("# ghost blocks of the groups' first members: sums %.6g / %.6g", ghs[0], ghs[1]);
#endif

    /* multiplications of arrays on each group */
    double gsum = 0;
    int okp[3] = {1, 1, 1};
    gemm_on_group(mine, &gsum, okp);
    gat_check(okp[0], "GA_Dgemm on group arrays");
    gat_check_gabug(okp[1], "NGA_Matmul_patch on group arrays",
                    "on the group without world process 0 the patch of C is not the product "
                    "(its checksum 427.5 instead of 398.5 at 2-4 processes)");
    gat_check(okp[2], "GA_Zgemm on group arrays");
    gat_out("group products: checksum %.6g (the group of process 0)", gsum);

    /* the default group: NGA_Create, GA_Nodeid, GA_Nnodes, GA_Sync follow it */
    GA_Pgroup_set_default(mine);
    int ids_ok = GA_Nodeid() == gme && GA_Nnodes() == gsz;
    int gb = NGA_Create(C_INT, 2, dims, "dflt", NULL);
    int v = in_first ? 3 : 5;
    GA_Fill(gb, &v);
    GA_Sync();
    int e = 0, sub[2] = {4, 4}, one_ld = 1; /* (GA 5.8.2 reads ld even for one element) */
    NGA_Get(gb, sub, sub, &e, &one_ld);
    GA_Sync(); /* every member has read before the increments */
    int rd = 0;
    long inc = NGA_Read_inc(gb, sub, 1);
    (void)inc;
    GA_Sync();
    NGA_Get(gb, sub, sub, &rd, &one_ld);
    GA_Destroy(gb);
    /* a world array while the default group is a smaller one: its ids are the world's */
    int gwd = NGA_Create_config(C_DBL, 2, dims, "world_dflt", NULL, world);
    int seg = segment_ok(gwd, gat_me), segall = 0;
    MPI_Allreduce(&seg, &segall, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    GA_Destroy(gwd);
    GA_Pgroup_set_default(world);
    gat_check(segall, "NGA_Access_block_segment on a world array under a smaller default group");
    ids_ok &= GA_Nodeid() == gat_me && GA_Nnodes() == gat_np;
    gat_check(ids_ok, "GA_Nodeid / GA_Nnodes follow the default group");
    gat_check(e == v && rd == v + gsz, "array on the default group: fill, read_inc");

    /* a world array after the group arrays, and a restricted one */
    int gw = NGA_Create(C_DBL, 2, dims, "world", NULL);
    gat_check(fill_and_check(gw, 9, 7, gat_me, gat_np), "world array after group arrays");
    GA_Destroy(gw);
    int gr = GA_Create_handle();
    GA_Set_data(gr, 2, dims, C_DBL);
    int list[2] = {gat_np - 1, 0};
    GA_Set_restricted(gr, list, 2);
    GA_Allocate(gr);
    for (int p = 0; p < gat_np; p++) {
        int lo[2], hi[2];
        NGA_Distribution(gr, p, lo, hi);
        gat_out("restricted proc %d: [%d %d] .. [%d %d]", p, lo[0], lo[1], hi[0], hi[1]);
    }
    gat_check(fill_and_check(gr, 9, 7, gat_me, gat_np), "restricted array");
    GA_Destroy(gr);
    GA_Pgroup_destroy(g1);
    GA_Pgroup_destroy(g2);
    free(l1);
    free(l2);
    return gat_finish();
}
