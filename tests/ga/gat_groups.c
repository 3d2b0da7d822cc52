/* Process groups, collectives and handle/inquiry calls, compared with GA 5.8.2: group creation
 * (create, split, split_irreg, duplicate, self, destroy) and their ids, the default group
 * (GA_Nodeid / GA_Nnodes / GA_Sync / GA_Brdcst / GA_*gop follow it), every gop type with every op,
 * mutexes around a read-modify-write, the MPI communicators (ga-mpi.h), cluster queries, the
 * memory accounting, array handles (GA_Create_handle .. GA_Allocate, GA_Duplicate, validity after
 * destroy, inquiries) and the block queries and block access of regular, block-cyclic and
 * ScaLAPACK-style arrays. */
#include <complex.h>
#include <ga-mpi.h>
#include "gatest.h"

/* a per-rank value gathered to every rank: out[r] = v of rank r */
static void gather_int(int v, int *out)
{
    for (int r = 0; r < gat_np; r++)
        out[r] = 0;
    out[gat_me] = v;
    MPI_Allreduce(MPI_IN_PLACE, out, gat_np, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* prints "what: v0 v1 .. " of one int per world rank */
static void print_ranks(const char *what, int v)
{
    int *all = malloc(sizeof(int) * (size_t)gat_np);
    gather_int(v, all);
    char line[1024];
    int n = snprintf(line, sizeof line, "%s:", what);
    for (int r = 0; r < gat_np && n < (int)sizeof line - 16; r++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %d", all[r]);
    gat_out("%s", line);
    free(all);
}

/* ---------------------------------------------------------------------- groups --- */

static void groups(void)
{
    int world = GA_Pgroup_get_world();
    gat_out("world %d, default %d", world, GA_Pgroup_get_default());
    gat_check(GA_Pgroup_nnodes(world) == gat_np && GA_Pgroup_nodeid(world) == gat_me,
              "world group: nnodes, nodeid");

    /* a group of the odd ranks (and rank 0) listed in reverse */
    int list[8], cnt = 0;
    for (int r = gat_np - 1; r >= 0; r--)
        if (r % 2 || r == 0)
            list[cnt++] = r;
    int gc = GA_Pgroup_create(list, cnt);
    int in_gc = gat_me % 2 || gat_me == 0;
    print_ranks("create: nodeid", in_gc ? GA_Pgroup_nodeid(gc) : -9);
    print_ranks("create: nnodes (non-members too)", GA_Pgroup_nnodes(gc));
    if (in_gc) {
        int n = GA_Pgroup_nnodes(gc), ok = n == cnt;
        for (int i = 0; i < n; i++) /* GA sorts the list: ids in ascending world order */
            ok &= GA_Pgroup_absolute_id(gc, i) == list[cnt - 1 - i];
        gat_check(ok, "create: nnodes, absolute_id in ascending order");
    } else
        gat_check(1, "create: nnodes, absolute_id in ascending order");

    /* split into 2 and irregularly by color */
    int gs = GA_Pgroup_split(world, 2);
    print_ranks("split 2: nnodes", GA_Pgroup_nnodes(gs));
    print_ranks("split 2: nodeid", GA_Pgroup_nodeid(gs));
    print_ranks("split 2: absolute_id(0)", GA_Pgroup_absolute_id(gs, 0));
    int gi = GA_Pgroup_split_irreg(world, gat_me % 2 ? 0 : 1);
    print_ranks("split_irreg: nnodes", GA_Pgroup_nnodes(gi));
    print_ranks("split_irreg: nodeid", GA_Pgroup_nodeid(gi));
    print_ranks("split_irreg: absolute_id(last)",
                GA_Pgroup_absolute_id(gi, GA_Pgroup_nnodes(gi) - 1));
    int gd = GA_Pgroup_duplicate(gs);
    int okd = GA_Pgroup_nnodes(gd) == GA_Pgroup_nnodes(gs) &&
              GA_Pgroup_nodeid(gd) == GA_Pgroup_nodeid(gs);
#ifdef GAT_PEER
    okd &= GA_Pgroup_absolute_id(gs, 0) == 0; /* else GA's absolute_id aborts on the copy */
#endif
    for (int i = 0; okd && i < GA_Pgroup_nnodes(gd); i++)
        okd &= GA_Pgroup_absolute_id(gd, i) == GA_Pgroup_absolute_id(gs, i);
    gat_check_gabug(okd, "duplicate: same members",
                    "GA 5.8.2's duplicate of a group without process 0 has no process "
                    "GA_Pgroup_absolute_id accepts");
#ifdef GAT_PEER
    gat_out("ok duplicate of the world");
    gat_out("# GA bug: GA 5.8.2's duplicate of the world has 0 processes (or crashes)");
#else
    int gw = GA_Pgroup_duplicate(world),
        okw = GA_Pgroup_nnodes(gw) == gat_np && GA_Pgroup_nodeid(gw) == gat_me;
    for (int i = 0; okw && i < gat_np; i++)
        okw &= GA_Pgroup_absolute_id(gw, i) == i;
    gat_check(okw, "duplicate of the world");
    GA_Pgroup_destroy(gw);
#endif
    int gself = GA_Pgroup_self();
    gat_check(GA_Pgroup_nnodes(gself) == 1 && GA_Pgroup_nodeid(gself) == 0 &&
                  GA_Pgroup_absolute_id(gself, 0) == gat_me,
              "self: this process alone");

    /* the MPI communicators of groups */
    MPI_Comm cw = GA_MPI_Comm(), cs = GA_MPI_Comm_pgroup(gs), ci = GA_MPI_Comm_pgroup(gi);
    int sw, rw, ss, rs, si, ri;
    MPI_Comm_size(cw, &sw), MPI_Comm_rank(cw, &rw);
    MPI_Comm_size(cs, &ss), MPI_Comm_rank(cs, &rs);
    MPI_Comm_size(ci, &si), MPI_Comm_rank(ci, &ri);
    gat_check(sw == gat_np && rw == gat_me && ss == GA_Pgroup_nnodes(gs) &&
                  rs == GA_Pgroup_nodeid(gs) && si == GA_Pgroup_nnodes(gi) &&
                  ri == GA_Pgroup_nodeid(gi),
              "GA_MPI_Comm / GA_MPI_Comm_pgroup: sizes and ranks");
    int wr = -1;
    MPI_Group mg, wg;
    MPI_Comm_group(cs, &mg), MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int zero = 0;
    MPI_Group_translate_ranks(mg, 1, &zero, wg, &wr);
    MPI_Group_free(&mg), MPI_Group_free(&wg);
    gat_check(wr == GA_Pgroup_absolute_id(gs, 0), "GA_MPI_Comm_pgroup: rank 0 is absolute_id(0)");

    /* the split group as the default */
    GA_Pgroup_set_default(gs);
    gat_check(GA_Pgroup_get_default() == gs, "set_default / get_default");
    int nn = GA_Nnodes(), id = GA_Nodeid();
    print_ranks("default split: GA_Nnodes", nn);
    print_ranks("default split: GA_Nodeid", id);
    MPI_Comm cdef = GA_MPI_Comm_pgroup_default();
    int sdef;
    MPI_Comm_size(cdef, &sdef);
    gat_check(sdef == nn, "GA_MPI_Comm_pgroup_default follows the default");
    GA_Sync();
    int x = gat_me + 1;
    GA_Igop(&x, 1, "+");
    print_ranks("default split: GA_Igop sum", x);
    int b[2] = {gat_me, -gat_me};
    GA_Brdcst(b, sizeof b, nn - 1);
    print_ranks("default split: GA_Brdcst from last", b[0]);
    gat_check(b[1] == -b[0], "GA_Brdcst: whole buffer");
    GA_Pgroup_set_default(world);
    gat_check(GA_Nnodes() == gat_np && GA_Nodeid() == gat_me, "set_default(world) restores");

    /* Pgroup_sync and Pgroup_brdcst on the irregular group */
    GA_Pgroup_sync(gi);
    double d[3] = {gat_me * 1.5, 2, 3};
    int root = GA_Pgroup_nnodes(gi) > 1 ? 1 : 0;
    GA_Pgroup_brdcst(gi, d, sizeof d, root);
    print_ranks("Pgroup_brdcst from 1: value*2", (int)(d[0] * 2));
    gat_check(d[1] == 2 && d[2] == 3, "Pgroup_brdcst: whole buffer");
    int y = gat_me;
    GA_Pgroup_igop(gi, &y, 1, "max");
    print_ranks("Pgroup_igop max on split_irreg", y);

    int r1 = GA_Pgroup_destroy(gd), r2 = GA_Pgroup_destroy(gself), r3 = GA_Pgroup_destroy(gi);
    gat_out("destroy returns %d %d %d", r1, r2, r3);
    GA_Pgroup_destroy(gs);
    if (in_gc)
        GA_Pgroup_destroy(gc);
    GA_Sync();

    /* splits that do not divide: groups of ceil(n / num) processes (GA's), more groups than
     * processes, and num_group 0 (the group itself) */
    for (int num = 3; num <= gat_np + 1; num += gat_np - 2 > 0 ? gat_np - 2 : 1) {
        int g3 = GA_Pgroup_split(world, num);
        char what[64];
        snprintf(what, sizeof what, "split %d: nnodes", num);
        print_ranks(what, GA_Pgroup_nnodes(g3));
        snprintf(what, sizeof what, "split %d: absolute_id(0)", num);
        print_ranks(what, GA_Pgroup_absolute_id(g3, 0));
        GA_Pgroup_destroy(g3);
    }
    gat_check(GA_Pgroup_split(world, 0) == world, "split 0: the group itself");

    /* groups of rank 0 alone, created and destroyed (by their member) more times than there are
     * group slots: the others' handles of them do not use the slots up (at 2 processes: each
     * creation is a few collectives) */
    int first = -1, last = -1, zero0[1] = {0};
    for (int i = 0; i < (gat_np == 2 ? 1100 : 1); i++) {
        int g1 = GA_Pgroup_create(zero0, 1);
        if (i == 0) {
            first = g1;
            /* every process knows the members, those outside the group too (GA 5.8.2 aborts
             * there: an ARMCI assertion in ARMCI_Absolute_id) */
#ifdef GAT_PEER
            gat_out("ok absolute_id of a group on a process outside it");
            gat_out("# GA bug: GA 5.8.2's GA_Pgroup_absolute_id aborts on a process outside the "
                    "group (ARMCI assertion): not run");
#else
            gat_check(GA_Pgroup_nnodes(g1) == 1 && GA_Pgroup_absolute_id(g1, 0) == 0 &&
                          GA_Pgroup_nodeid(g1) == (gat_me == 0 ? 0 : -1),
                      "absolute_id of a group on a process outside it");
#endif
        }
        last = g1;
        if (gat_me == 0)
            GA_Pgroup_destroy(g1);
    }
    gat_out("# groups of rank 0: handles %d .. %d", first, last);
    gat_check(1, "groups of rank 0 created and destroyed");
    GA_Sync();
}

/* ------------------------------------------------------------------------- gops --- */

static const char *ops[] = {"+", "*", "max", "min", "absmax", "absmin"};
#define NOPS 6

/* my two inputs of the reduction over p (sign alternates by rank) */
static double in0(int me)
{
    return (me % 2 ? -1 : 1) * (me + 2.5);
}
static double in1(int me)
{
    return -(me + 1);
}

static void gops_on(int p, const char *label)
{
    int me = GA_Pgroup_nodeid(p), world = GA_Pgroup_get_world();
    char name[128];
    for (int k = 0; k < NOPS; k++) {
        char *op = (char *)ops[k];
        int xi[2] = {(int)in0(me) * 2, (int)in1(me)};
        long xl[2] = {(long)in0(me) * 2, (long)in1(me)};
        long long xll[2] = {(long long)in0(me) * 2, (long long)in1(me)};
        float xf[2] = {(float)in0(me), (float)in1(me)};
        double xd[2] = {in0(me), in1(me)};
        SingleComplex xc[2] = {{(float)in0(me), (float)(me + 1)}, {(float)in1(me), 2.f}};
        DoubleComplex xz[2] = {{in0(me), me + 1.0}, {in1(me), 2.0}};
        if (p == world) {
            GA_Igop(xi, 2, op), GA_Lgop(xl, 2, op), GA_Llgop(xll, 2, op);
            GA_Fgop(xf, 2, op), GA_Dgop(xd, 2, op), GA_Cgop(xc, 2, op), GA_Zgop(xz, 2, op);
        } else {
            GA_Pgroup_igop(p, xi, 2, op), GA_Pgroup_lgop(p, xl, 2, op);
            GA_Pgroup_llgop(p, xll, 2, op), GA_Pgroup_fgop(p, xf, 2, op);
            GA_Pgroup_dgop(p, xd, 2, op), GA_Pgroup_cgop(p, xc, 2, op);
            GA_Pgroup_zgop(p, xz, 2, op);
        }
        /* the reference: over the group's ids 0 .. n-1 */
        int n = GA_Pgroup_nnodes(p);
        double ri[2], rd[2];
        double complex rz[2];
        for (int j = 0; j < 2; j++) {
            for (int q = 0; q < n; q++) {
                double vi = j ? in1(q) : (int)in0(q) * 2, vd = j ? in1(q) : in0(q);
                double complex vz = j ? in1(q) + 2.0 * I : in0(q) + (q + 1.0) * I;
                if (!q) {
                    ri[j] = k >= 4 ? fabs(vi) : vi, rd[j] = k >= 4 ? fabs(vd) : vd, rz[j] = vz;
                    if (k >= 4)
                        rz[j] = fabs(creal(vz)) + fabs(cimag(vz)) * I;
                    continue;
                }
                switch (k) {
                case 0:
                    ri[j] += vi, rd[j] += vd, rz[j] += vz;
                    break;
                case 1:
                    ri[j] *= vi, rd[j] *= vd, rz[j] *= vz;
                    break;
                case 2:
                case 3: {
                    int mx = k == 2;
                    ri[j] = (vi > ri[j]) == mx ? vi : ri[j];
                    rd[j] = (vd > rd[j]) == mx ? vd : rd[j];
                    double re = creal(rz[j]), im = cimag(rz[j]);
                    re = (creal(vz) > re) == mx ? creal(vz) : re;
                    im = (cimag(vz) > im) == mx ? cimag(vz) : im;
                    rz[j] = re + im * I;
                    break;
                }
                default: {
                    int mx = k == 4;
                    ri[j] = (fabs(vi) > ri[j]) == mx ? fabs(vi) : ri[j];
                    rd[j] = (fabs(vd) > rd[j]) == mx ? fabs(vd) : rd[j];
                    double re = creal(rz[j]), im = cimag(rz[j]);
                    re = (fabs(creal(vz)) > re) == mx ? fabs(creal(vz)) : re;
                    im = (fabs(cimag(vz)) > im) == mx ? fabs(cimag(vz)) : im;
                    rz[j] = re + im * I;
                }
                }
            }
        }
        int ok = 1;
        for (int j = 0; j < 2; j++)
            ok &= xi[j] == ri[j] && xl[j] == ri[j] && xll[j] == ri[j] && xd[j] == rd[j] &&
                  gat_close(xf[j], rd[j], 1e-6);
        snprintf(name, sizeof name, "%s '%s': I L Ll F D", label, op);
        gat_check(ok, name);
        gat_out("%s '%s': I %d %d D " GAT_G " " GAT_G, label, op, xi[0], xi[1], xd[0], xd[1]);
        int okc = 1;
        for (int j = 0; j < 2; j++)
            okc &= gat_close(xc[j].real, creal(rz[j]), 1e-6) &&
                   gat_close(xc[j].imag, cimag(rz[j]), 1e-6) && xz[j].real == creal(rz[j]) &&
                   xz[j].imag == cimag(rz[j]);
        snprintf(name, sizeof name, "%s '%s': C Z", label, op);
        if (k == 1) /* a complex product */
            gat_check_gabug(okc || n == 1, name,
                            "GA 5.8.2 multiplies complex numbers component by component");
        else
            gat_check(okc, name);
        if (k != 1)
            gat_out("%s '%s': Z " GAT_G " " GAT_G " " GAT_G " " GAT_G, label, op, xz[0].real,
                    xz[0].imag, xz[1].real, xz[1].imag);
    }
}

static void gops(void)
{
    /* the integer bit and logical operations ("or" is bitwise in GA, "||" and "&&" logical) */
    int vi[2] = {1 << (gat_me % 3), gat_me == 1};
    long vl[2] = {1L << (gat_me % 3), gat_me == 1};
    GA_Igop(vi, 2, "or"), GA_Lgop(vl, 2, "or");
    int want = 0;
    for (int q = 0; q < gat_np; q++)
        want |= 1 << (q % 3);
    gat_check(vi[0] == want && vl[0] == want && vi[1] == (gat_np > 1) && vl[1] == vi[1],
              "gop 'or': bitwise");
    gat_out("gop 'or': I %d %d L %ld %ld", vi[0], vi[1], vl[0], vl[1]);
    int li[2] = {gat_me == 1, gat_me != 1};
    GA_Igop(li, 1, "||"), GA_Igop(li + 1, 1, "&&");
    gat_check(li[0] == (gat_np > 1) && li[1] == (gat_np == 1), "gop '||', '&&': logical");
    gat_out("gop '||' %d, '&&' %d", li[0], li[1]);
    gops_on(GA_Pgroup_get_world(), "gop");
    int gs = GA_Pgroup_split(GA_Pgroup_get_world(), 2);
    gops_on(gs, "Pgroup_gop");
    GA_Pgroup_destroy(gs);
}

/* ---------------------------------------------------------------------- mutexes --- */

static void mutexes(void)
{
    int nm = 3, iters = 5;
    /* no mutexes asked for: GA's FALSE, nothing created */
    gat_out("GA_Create_mutexes(0) = %d, (-1) = %d", GA_Create_mutexes(0), GA_Create_mutexes(-1));
    int rc = GA_Create_mutexes(nm);
    gat_out("GA_Create_mutexes(3) = %d", rc);
    int dims[1] = {7};
    int g = NGA_Create(C_LONG, 1, dims, "counter", NULL);
    GA_Zero(g);
    int at[1] = {5};
    for (int i = 0; i < iters; i++) {
        GA_Lock(1);
        long v;
        NGA_Get(g, at, at, &v, NULL);
        v += 1;
        NGA_Put(g, at, at, &v, NULL);
        GA_Unlock(1);
    }
    GA_Sync();
    long v;
    NGA_Get(g, at, at, &v, NULL);
    gat_check(v == (long)gat_np * iters, "mutex-protected get/put: exact count");
    gat_out("counter %ld", v);
    gat_out("GA_Destroy_mutexes = %d", GA_Destroy_mutexes());
    GA_Destroy(g);
}

/* -------------------------------------------------------------- cluster, timers --- */

static void cluster(void)
{
    int nn = GA_Cluster_nnodes(), me = GA_Cluster_nodeid(), tot = 0, ok = nn >= 1;
    gat_out("# cluster: %d nodes", nn);
    for (int k = 0; k < nn; k++) {
        int np = GA_Cluster_nprocs(k);
        tot += np;
        gat_out("# node %d: %d processes, first %d", k, np, GA_Cluster_procid(k, 0));
        for (int i = 0; i < np; i++)
            ok &= GA_Cluster_proc_nodeid(GA_Cluster_procid(k, i)) == k;
    }
    ok &= tot == gat_np && GA_Cluster_proc_nodeid(gat_me) == me && me >= 0 && me < nn;
    int found = 0;
    for (int i = 0; i < GA_Cluster_nprocs(me); i++)
        found |= GA_Cluster_procid(me, i) == gat_me;
    /* every process sees the same nodes (emulated ones of different sizes too: RMC_NODE_SIZE
     * not dividing the processes): each one's node id is what the others say it is */
    int *ids = malloc(sizeof(int) * (size_t)gat_np), mine[2] = {nn, -nn};
    gather_int(me, ids);
    for (int p = 0; p < gat_np; p++)
        ok &= GA_Cluster_proc_nodeid(p) == ids[p];
    MPI_Allreduce(MPI_IN_PLACE, mine, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ok &= mine[0] == nn && -mine[1] == nn; /* the same count everywhere */
    free(ids);
    gat_check(ok && found, "cluster queries consistent");
    double t0 = GA_Wtime(), t1 = GA_Wtime();
    GA_Sync();
    double t2 = GA_Wtime();
    gat_check(t0 <= t1 && t1 <= t2 && t0 > 0, "GA_Wtime monotone");
}

/* ---------------------------------------------------------------------- memory --- */

static void memory(void)
{
    size_t m0 = GA_Inquire_memory();
    gat_out("memory: limited %d, inquire %zu", GA_Memory_limited(), m0);
    gat_out("memory: avail without a limit %zu", GA_Memory_avail());
    int dims[2] = {10, 6};
    int g = NGA_Create(C_DBL, 2, dims, "mem", NULL);
    int lo[2], hi[2];
    NGA_Distribution(g, gat_me, lo, hi);
    size_t mine =
        hi[0] >= lo[0] ? (size_t)(hi[0] - lo[0] + 1) * (size_t)(hi[1] - lo[1] + 1) * 8 : 0;
    size_t m1 = GA_Inquire_memory();
    print_ranks("memory: after a 10x6 double array", (int)(m1 - m0));
    gat_check(m1 - m0 == mine, "GA_Inquire_memory: bytes of this process's block");
    GA_Set_memory_limit(100000);
    gat_out("memory: limited %d after GA_Set_memory_limit", GA_Memory_limited());
    const char *bug = "GA 5.8.2's GA_Set_memory_limit ignores the arrays already allocated (and "
                      "gives their bytes back beyond the limit when they are destroyed)";
    gat_check_gabug(GA_Memory_avail() == 100000 - mine, "avail: the limit less the arrays held",
                    bug);
    /* an array larger than what is left is refused (GA_Allocate returns 0) */
    int big = GA_Create_handle(), bd[1] = {100000 / 4 * gat_np};
    GA_Set_data(big, 1, bd, C_DBL);
    gat_out("memory: GA_Allocate over the limit = %d", GA_Allocate(big));
    /* (GA 5.8.2 cannot destroy a handle whose allocation failed: it stays) */
    GA_Destroy(g);
    gat_check(GA_Inquire_memory() == m0, "memory: GA_Inquire_memory after destroy");
    gat_check_gabug(GA_Memory_avail() == 100000, "avail after destroy: the limit", bug);
    GA_Set_memory_limit(0);
    gat_out("memory: limited %d after a limit of 0", GA_Memory_limited());
    gat_check_gabug(GA_Memory_avail() == 0, "avail under a limit of 0", bug);
    int z = GA_Create_handle(), zd[1] = {1000 * gat_np};
    GA_Set_data(z, 1, zd, C_INT);
    gat_out("memory: GA_Allocate under a limit of 0 = %d", GA_Allocate(z));
    GA_Initialize_ltd(5000); /* GA is up: only the limit changes */
    gat_out("memory: GA_Initialize_ltd(5000) when up: limited %d, avail %zu", GA_Memory_limited(),
            GA_Memory_avail());
    GA_Set_memory_limit((size_t)-1); /* GA's -1: no limit */
    gat_out("memory: limited %d after a limit of (size_t)-1", GA_Memory_limited());
}

/* bytes of process id's block of 2-D array g, each extent widened by 2 * w[] (its ghost cells) */
static size_t padded_bytes(int g, int id, const int w[2], size_t esz)
{
    int lo[2], hi[2];
    NGA_Distribution(g, id, lo, hi);
    if (hi[0] < lo[0] || hi[1] < lo[1])
        return 0;
    return (size_t)(hi[0] - lo[0] + 1 + 2 * w[0]) * (size_t)(hi[1] - lo[1] + 1 + 2 * w[1]) * esz;
}

/* Arrays with ghost cells hold their padded blocks: GA counts those (GA_Inquire_memory) and the
 * memory limit refuses them when the padded block does not fit, though the block would. */
static void memory_ghosts(void)
{
    size_t m0 = GA_Inquire_memory();
    int dims[2] = {10, 9}, w[2] = {1, 2}, w0[2] = {0, 0};
    int g = NGA_Create_ghosts(C_DBL, 2, dims, w, "ghosts", NULL);
    size_t m1 = GA_Inquire_memory();
    print_ranks("memory: after a 10x9 double array with ghost widths 1, 2", (int)(m1 - m0));
    gat_check(m1 - m0 == padded_bytes(g, gat_me, w, 8),
              "GA_Inquire_memory: the padded block of an array with ghost cells");
    GA_Destroy(g);
    gat_check(GA_Inquire_memory() == m0, "memory: ghost array given back at destroy");

    /* a limit the block fits in, the padded block not */
    int bd[2] = {100, 100}, bw[2] = {20, 20};
    int r = NGA_Create(C_DBL, 2, bd, "plain", NULL);
    size_t block = padded_bytes(r, gat_me, w0, 8);
    GA_Destroy(r);
    GA_Set_memory_limit(GA_Inquire_memory() + block + 64);
    int gh = NGA_Create_ghosts(C_DBL, 2, bd, bw, "too_big", NULL);
    gat_out("memory: NGA_Create_ghosts over the limit (block fits, padded block not) = %d",
            gh != 0);
    if (gh)
        GA_Destroy(gh);
    gat_check(GA_Inquire_memory() == m0, "memory: nothing held after the refused ghost array");
    GA_Set_memory_limit((size_t)-1);

    /* storage no process can hold: NGA_Create returns 0 everywhere (no abort) */
#ifdef GAT_PEER
    gat_out("ok memory: 2^20 x 2^20 doubles: NGA_Create returns 0");
    gat_out("# GA 5.8.2 not run there (ARMCI-MPI asks MPI for 8 TiB / processes)");
#else
    int hd[2] = {1 << 20, 1 << 20};
    int hg = NGA_Create(C_DBL, 2, hd, "huge", NULL);
    gat_check(hg == 0 && GA_Inquire_memory() == m0,
              "memory: 2^20 x 2^20 doubles: NGA_Create returns 0");
    if (hg)
        GA_Destroy(hg);
#endif
}

/* --------------------------------------------------------------------- handles --- */

static void handles(void)
{
    int g = GA_Create_handle();
    int dims[3] = {5, 8, 3}, chunk[3] = {-1, 4, 3};
    GA_Set_data(g, 3, dims, C_FLOAT);
    GA_Set_array_name(g, "made");
    GA_Set_chunk(g, chunk);
    gat_out("before GA_Allocate: valid %d, verify %d", GA_Valid_handle(g), GA_Verify_handle(g));
    int rc = GA_Allocate(g);
    gat_out("GA_Allocate = %d, name '%s', ndim %d", rc, GA_Inquire_name(g), GA_Ndim(g));
    int type, nd, d[7];
    NGA_Inquire(g, &type, &nd, d);
    gat_check(type == C_FLOAT && nd == 3 && d[0] == 5 && d[1] == 8 && d[2] == 3, "NGA_Inquire");
    for (int p = 0; p < gat_np; p++) {
        int lo[3], hi[3];
        NGA_Distribution(g, p, lo, hi);
        gat_out("  proc %d: [%d %d %d] .. [%d %d %d]", p, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    }
    GA_Fill(g, &(float){2.5f});
    int h = GA_Duplicate(g, "dup");
    gat_out("GA_Duplicate: name '%s', compare_distr %d", GA_Inquire_name(h),
            GA_Compare_distr(g, h));
    int lo[3] = {0, 0, 0}, hi[3] = {4, 7, 2};
    float buf[120];
    NGA_Get(g, lo, hi, buf, (int[]){8, 3});
    gat_check(buf[0] == 2.5f && buf[119] == 2.5f, "GA_Fill on a GA_Set_chunk array");
    int other = NGA_Create(C_FLOAT, 3, dims, "other", NULL);
    gat_out("GA_Compare_distr with a default distribution %d", GA_Compare_distr(g, other));
    GA_Destroy(h);
    gat_out("after destroy: valid %d verify %d; the other %d %d", GA_Valid_handle(h),
            GA_Verify_handle(h), GA_Valid_handle(g), GA_Verify_handle(g));
    GA_Destroy(other);
    GA_Destroy(g);
    gat_out("after destroying all: valid %d", GA_Valid_handle(g));
}

/* --------------------------------------------------------------- block queries --- */

static double elem(int i, int j)
{
    return i * 100 + j;
}

static void block_info(int g, const char *what)
{
    int nb[2] = {-7, -7}, bd[2] = {-7, -7}, grid[2], nblk[2];
    GA_Get_block_info(g, nb, bd);
    GA_Get_proc_grid(g, grid);
    GA_Nblock(g, nblk);
    gat_out("%s: block_info %d %d / %d %d, total %d, uses_proc_grid %d, nblock %d %d", what, nb[0],
            nb[1], bd[0], bd[1], GA_Total_blocks(g), GA_Uses_proc_grid(g), nblk[0], nblk[1]);
    if (GA_Total_blocks(g) < 0) /* a regular array: its grid is its blocks */
        gat_check_gabug(grid[0] == nblk[0] && grid[1] == nblk[1], "regular: GA_Get_proc_grid",
                        "GA 5.8.2's GA_Get_proc_grid returns the grid in Fortran (reversed) order");
    else if (!GA_Uses_proc_grid(g)) /* round robin: no process grid (GA: its default's) */
        gat_out("# %s: proc grid %d %d", what, grid[0], grid[1]);
    for (int p = 0; p < gat_np; p++) {
        int s[2] = {-1, -1};
        if (GA_Uses_proc_grid(g)) {
            GA_Get_proc_index(g, p, s);
            gat_out("%s: proc_index %d: %d %d", what, p, s[0], s[1]);
        }
    }
    /* fill by rank 0, check where every block is */
    int m, n, t, nd, dims[2];
    NGA_Inquire(g, &t, &nd, dims);
    m = dims[0], n = dims[1];
    if (gat_me == 0) {
        double *a = malloc(sizeof(double) * (size_t)(m * n));
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                a[i * n + j] = elem(i, j);
        NGA_Put(g, (int[]){0, 0}, (int[]){m - 1, n - 1}, a, &n);
        free(a);
    }
    GA_Sync();
    int lo[2] = {3, 5}, hi[2] = {m - 2, n - 1}, map[4 * 64], procs[64];
    int cnt = NGA_Locate_region(g, lo, hi, map, procs);
    int nn = NGA_Locate_nnodes(g, lo, hi);
    gat_out("%s: locate_region [3 5] .. [%d %d]: %d pieces, nnodes %d", what, hi[0], hi[1], cnt,
            nn);
    for (int k = 0; k < cnt && k < 64; k++)
        gat_out("  %s %d: [%d %d] .. [%d %d]", GA_Total_blocks(g) < 0 ? "proc" : "block", procs[k],
                map[4 * k], map[4 * k + 1], map[4 * k + 2], map[4 * k + 3]);
    gat_out("%s: locate_num_blocks %d", what, NGA_Locate_num_blocks(g, lo, hi));
    /* NGA_Distribution and NGA_Locate: by process, on block-cyclic arrays by block (GA's own
     * loops run `for (b = me; b < GA_Total_blocks(g); b += np) NGA_Distribution(g, b, ...)`) */
    int units = GA_Total_blocks(g) < 0 ? gat_np : GA_Total_blocks(g), ok = 1;
    for (int u = 0; u < units; u++) {
        int dl[2], dh[2];
        NGA_Distribution(g, u, dl, dh);
        gat_out("  distribution %d: [%d %d] .. [%d %d]", u, dl[0], dl[1], dh[0], dh[1]);
        if (dh[0] >= dl[0] && dh[1] >= dl[1]) { /* its corners are located in it */
            ok &= NGA_Locate(g, dl) == u && NGA_Locate(g, dh) == u;
        }
    }
    int corner[2] = {m - 1, n - 1};
    gat_out("%s: locate [%d %d] = %d", what, m - 1, n - 1, NGA_Locate(g, corner));
    char name[96];
    snprintf(name, sizeof name, "%s: NGA_Locate of each unit's corners", what);
    gat_check(ok, name);
}

/* every block this process owns: its content by NGA_Access_block (or _grid) and by segment */
static void access_blocks(int g, const char *what, const int pg[2], int segment)
{
    int nb[2], bd[2], t, nd, dims[2];
    GA_Get_block_info(g, nb, bd);
    NGA_Inquire(g, &t, &nd, dims);
    int grid = GA_Uses_proc_grid(g), my[2] = {0, 0};
    if (grid)
        GA_Get_proc_index(g, gat_me, my);
    int ok = 1, nmine = 0;
    double sum = 0;
    for (int b0 = 0; b0 < nb[0]; b0++)
        for (int b1 = 0; b1 < nb[1]; b1++) {
            int idx = b0 * nb[1] + b1; /* GA numbers blocks with the last dimension fastest */
            int owner =
                grid ? (b0 % pg[0] == my[0] && b1 % pg[1] == my[1]) : idx % gat_np == gat_me;
            if (!owner)
                continue;
            double *p = NULL;
            int ld[1];
            if (grid)
                NGA_Access_block_grid(g, (int[]){b0, b1}, &p, ld);
            else
                NGA_Access_block(g, idx, &p, ld);
            int r = b0 * bd[0], c = b1 * bd[1];
            int rn = dims[0] - r < bd[0] ? dims[0] - r : bd[0];
            int cn = dims[1] - c < bd[1] ? dims[1] - c : bd[1];
            for (int i = 0; i < rn; i++)
                for (int j = 0; j < cn; j++) {
                    ok &= p[i * ld[0] + j] == elem(r + i, c + j);
                    sum += elem(r + i, c + j);
                }
            nmine++;
            if (grid)
                NGA_Release_block_grid(g, (int[]){b0, b1});
            else
                NGA_Release_block(g, idx);
        }
    char name[128];
    snprintf(name, sizeof name, "%s: access_block%s content", what, grid ? "_grid" : "");
    gat_check(ok, name);
    print_ranks("  blocks owned", nmine);
    if (!segment) {
        GA_Sync();
        return;
    }
    double *seg = NULL;
    int len = 0;
    NGA_Access_block_segment(g, gat_me, &seg, &len);
    double ssum = 0;
    for (int i = 0; i < len; i++)
        ssum += seg[i];
    NGA_Release_block_segment(g, gat_me);
    snprintf(name, sizeof name, "%s: access_block_segment sums the blocks", what);
    gat_check(ssum == sum, name);
    print_ranks("  segment length", len);
    GA_Sync();
}

/* GA_Set_tiled_irreg_proc_grid: an 11 x 9 array of irregular blocks (rows at 0, 2, 7; columns at
 * 0, 4, 5) dealt over a process grid; the queries, where every element landed (a whole get), the
 * content of each block its owner reaches with NGA_Access_block_grid, and an accumulate across
 * blocks. */
static void tiled_irreg(void)
{
    int dims[2] = {11, 9}, mapc[6] = {0, 2, 7, 0, 4, 5}, nblocks[2] = {3, 3};
    int pg[2] = {gat_np % 2 ? gat_np : gat_np / 2, gat_np % 2 ? 1 : 2};
    int g = GA_Create_handle();
    GA_Set_data(g, 2, dims, C_DBL);
    GA_Set_tiled_irreg_proc_grid(g, mapc, nblocks, pg);
    GA_Allocate(g);
    int grid[2], nblk[2];
    GA_Get_proc_grid(g, grid);
    GA_Nblock(g, nblk);
    gat_out("tiled irregular: total %d, uses_proc_grid %d, nblock %d %d", GA_Total_blocks(g),
            GA_Uses_proc_grid(g), nblk[0], nblk[1]);
    for (int p = 0; p < gat_np; p++) {
        int x[2] = {-1, -1};
        GA_Get_proc_index(g, p, x);
        gat_out("tiled irregular: proc_index %d: %d %d", p, x[0], x[1]);
    }
    if (gat_me == 0) {
        double a[11][9];
        for (int i = 0; i < 11; i++)
            for (int j = 0; j < 9; j++)
                a[i][j] = elem(i, j);
        NGA_Put(g, (int[]){0, 0}, (int[]){10, 8}, a, (int[]){9});
    }
    GA_Sync();
    int rlo[2] = {3, 5}, rhi[2] = {9, 8}, map[4 * 16], procs[16];
    int cnt = NGA_Locate_region(g, rlo, rhi, map, procs);
    gat_out("tiled irregular: locate_region [3 5] .. [9 8]: %d pieces", cnt);
    for (int k = 0; k < cnt && k < 16; k++)
        gat_out("  block %d: [%d %d] .. [%d %d]", procs[k], map[4 * k], map[4 * k + 1],
                map[4 * k + 2], map[4 * k + 3]);
    double all[11][9];
    int lo[2] = {0, 0}, hi[2] = {10, 8}, ld = 9, ok = 1;
    NGA_Get(g, lo, hi, all, &ld);
    for (int i = 0; i < 11; i++)
        for (int j = 0; j < 9; j++)
            ok &= all[i][j] == elem(i, j);
    gat_check(ok, "tiled irregular: every element where it was put");
    int my[2], rs[4] = {0, 2, 7, 11}, cs[4] = {0, 4, 5, 9}, nmine = 0;
    GA_Get_proc_index(g, gat_me, my);
    for (int b0 = 0; b0 < 3; b0++)
        for (int b1 = 0; b1 < 3; b1++) {
            if (b0 % pg[0] != my[0] || b1 % pg[1] != my[1])
                continue;
            double *p = NULL;
            int bl[1];
            NGA_Access_block_grid(g, (int[]){b0, b1}, &p, bl);
            for (int i = rs[b0]; i < rs[b0 + 1]; i++)
                for (int j = cs[b1]; j < cs[b1 + 1]; j++)
                    ok &= p[(i - rs[b0]) * bl[0] + (j - cs[b1])] == elem(i, j);
            NGA_Release_block_grid(g, (int[]){b0, b1});
            nmine++;
        }
    gat_check(ok, "tiled irregular: access_block_grid content");
    print_ranks("  blocks owned", nmine);
    GA_Sync();
    double ones[4 * 6], one = 1;
    for (int i = 0; i < 24; i++)
        ones[i] = 1;
    int plo[2] = {1, 2}, phi[2] = {4, 7}, pld = 6; /* rows 1..4 x columns 2..7: six blocks */
    NGA_Acc(g, plo, phi, ones, &pld, &one);
    GA_Sync();
    NGA_Get(g, lo, hi, all, &ld);
    for (int i = 0; i < 11; i++)
        for (int j = 0; j < 9; j++)
            ok &= all[i][j] == elem(i, j) + (i >= 1 && i <= 4 && j >= 2 && j <= 7 ? gat_np : 0);
    gat_check(ok, "tiled irregular: an accumulate by every process across blocks");
    GA_Destroy(g);
}

static void blocks(void)
{
    int dims[2] = {11, 9};
    int g = NGA_Create(C_DBL, 2, dims, "regular", NULL);
    block_info(g, "regular");
    GA_Destroy(g);

    /* ragged blocks, then blocks of whole multiples of 64 bytes: NGA_Access_block_segment of
     * both (ga-compat's blocks were 64-byte aligned, and it refused the ragged 3 x 4 blocks: not
     * one segment) */
    for (int k = 0; k < 2; k++) {
        int bdims[2] = {11, 9}, blk[2] = {3, 4};
        if (k)
            bdims[0] = 12, bdims[1] = 16, blk[0] = 4, blk[1] = 8;
        int bc = GA_Create_handle();
        GA_Set_data(bc, 2, bdims, C_DBL);
        GA_Set_block_cyclic(bc, blk);
        GA_Allocate(bc);
        block_info(bc, k ? "block-cyclic 12x16" : "block-cyclic");
        access_blocks(bc, k ? "block-cyclic 12x16" : "block-cyclic", NULL, 1);
        GA_Destroy(bc);

        int pg[2] = {gat_np % 2 ? gat_np : gat_np / 2, gat_np % 2 ? 1 : 2};
        int sc = GA_Create_handle();
        GA_Set_data(sc, 2, bdims, C_DBL);
        blk[0] = k ? 4 : 2;
        GA_Set_block_cyclic_proc_grid(sc, blk, pg);
        GA_Allocate(sc);
        block_info(sc, k ? "scalapack 12x16" : "scalapack");
        access_blocks(sc, k ? "scalapack 12x16" : "scalapack", pg, 1);
        int gg[2];
        GA_Get_proc_grid(sc, gg);
        gat_check_gabug(gg[0] == pg[0] && gg[1] == pg[1], "scalapack: GA_Get_proc_grid as set",
                        "GA 5.8.2's GA_Get_proc_grid returns the grid in Fortran (reversed) order");
        GA_Destroy(sc);
    }
}

/* Mirrored arrays (GA_Pgroup_get_mirror): every process accumulates its share, then the copies are
 * merged into a distributed array (NGA_Merge_distr_patch: their sum) and among themselves
 * (GA_Merge_mirrored). GA keeps a copy per node and sums them; ga-compat keeps one copy that
 * every accumulate reaches: the same results. ga-compat refused every merge of a patch (no array
 * was marked mirrored) and said GA_Is_mirrored 0. */
static void mirrored(void)
{
    enum { R = 6, C = 5 };
    int dims[2] = {R, C}, lo[2] = {0, 0}, hi[2] = {R - 1, C - 1}, ld = C;
    int gm = NGA_Create_config(C_DBL, 2, dims, "mirrored", NULL, GA_Pgroup_get_mirror());
    int gd = NGA_Create(C_DBL, 2, dims, "merged", NULL);
    gat_out("mirrored: GA_Is_mirrored %d, of a distributed array %d, its group is the mirror group "
            "%d",
            GA_Is_mirrored(gm), GA_Is_mirrored(gd), GA_Get_pgroup(gm) == GA_Pgroup_get_mirror());
    GA_Zero(gm);
    GA_Zero(gd);
    static double v[R * C], got[R * C];
    for (int k = 0; k < R * C; k++)
        v[k] = k + 1;
    double share = gat_me + 1, all = gat_np * (gat_np + 1) / 2.0;
    NGA_Acc(gm, lo, hi, v, &ld, &share);
    GA_Sync();
    int plo[2] = {1, 1}, phi[2] = {4, 3}; /* a patch, merged into the same place of gd */
    NGA_Merge_distr_patch(gm, plo, phi, gd, plo, phi);
    NGA_Get(gd, lo, hi, got, &ld);
    int ok = 1;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            int in = i >= plo[0] && i <= phi[0] && j >= plo[1] && j <= phi[1];
            ok &= got[i * C + j] == (in ? all * v[i * C + j] : 0);
        }
    gat_check(ok, "mirrored: NGA_Merge_distr_patch gives the sum of every share");
    GA_Merge_mirrored(gm);
    NGA_Get(gm, lo, hi, got, &ld);
    ok = 1;
    for (int k = 0; k < R * C; k++)
        ok &= got[k] == all * v[k];
    gat_check(ok, "mirrored: GA_Merge_mirrored leaves the sum in every copy");
    GA_Destroy(gd);
    GA_Destroy(gm);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    groups();
    gops();
    mutexes();
    cluster();
    memory();
    memory_ghosts();
    handles();
    blocks();
    tiled_irreg();
    mirrored();
    return gat_finish();
}
