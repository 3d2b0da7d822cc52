/* ga-compat basics, compared with GA 5.8.2: arrays of every type and 1-7 dimensions on GA's
 * default, irregular, block-cyclic and ScaLAPACK-style distributions; distribution queries; put,
 * get and accumulate of patches (blocking and non-blocking); NGA_Read_inc as a task counter;
 * scatter / gather; strided and periodic patches. Every result is checked against a serial
 * reference and printed for the comparison. */
#include "gatest.h"

/* value v as element of type t at p (complex: v + i v/2) */
static void setv(int t, void *p, double v)
{
    gat_setc(t, p, v, v / 2);
}

/* an element as one number (complex: re + 3 im) */
static double getv(int t, const void *p)
{
    double re, im;
    gat_getc(t, p, &re, &im);
    return re + 3 * im;
}

/* put/get/acc on a 2-D array of every type */
static void types_2d(void)
{
    int dims[2] = {13, 11};
    for (int k = 0; k < GAT_NT; k++) {
        int t = gat_types[k];
        int g = NGA_Create(t, 2, dims, "t2", NULL);
        size_t es = gat_tsize(t);
        char *buf = calloc(13 * 11, es), *got = calloc(13 * 11, es);
        for (int i = 0; i < 13 * 11; i++)
            setv(t, buf + i * es, i % 50);
        GA_Zero(g);
        if (gat_me == 0) {
            int lo[2] = {0, 0}, hi[2] = {12, 10}, ld = 11;
            NGA_Put(g, lo, hi, buf, &ld);
        }
        GA_Sync();
        /* every rank adds 2 * buf to the patch [2..9] x [3..8] */
        char alpha[16];
        setv(t, alpha, 2);
        if (t == C_SCPL)
            ((float *)alpha)[1] = 0;
        if (t == C_DCPL)
            ((double *)alpha)[1] = 0;
        int lo[2] = {2, 3}, hi[2] = {9, 8}, ld = 11;
        int peer_cannot = 0;
#ifdef GAT_PEER
        /* GA 5.8.2 on ARMCI-MPI aborts ("ARMCI Error: type not supported") on an accumulate of
         * C_LONGLONG: ARMCI-MPI has no long long accumulate. The reference stands in for it. */
        peer_cannot = t == C_LONGLONG;
#endif
        if (!peer_cannot)
            NGA_Acc(g, lo, hi, buf + (2 * 11 + 3) * es, &ld, alpha);
        GA_Sync();
        int alo[2] = {0, 0}, ahi[2] = {12, 10};
        NGA_Get(g, alo, ahi, got, &ld);
        int ok = 1;
        double sum = 0;
        for (int i = 0; i < 13; i++)
            for (int j = 0; j < 11; j++) {
                double want = getv(t, buf + (i * 11 + j) * es);
                if (i >= 2 && i <= 9 && j >= 3 && j <= 8)
                    want *= 1 + 2 * gat_np;
                double v = peer_cannot ? want : getv(t, got + (i * 11 + j) * es);
                ok &= gat_close(v, want, 1e-6);
                sum += v;
            }
        char name[64];
        snprintf(name, sizeof name, "put-acc-get %s", gat_tname[k]);
        gat_check(ok, name);
        if (peer_cannot)
            gat_out("# GA bug: %s: NGA_Acc of C_LONGLONG aborts in GA 5.8.2 on ARMCI-MPI", name);
        gat_out("sum %s " GAT_G, gat_tname[k], sum);
        free(buf);
        free(got);
        GA_Destroy(g);
    }
}

/* 1-7 dimensions: each rank puts its own block's elements by value, all read everything */
static void dims_1_7(void)
{
    for (int nd = 1; nd <= 7; nd++) {
        int dims[7], chunk[7], n = 1;
        for (int d = 0; d < nd; d++) {
            dims[d] = nd <= 3 ? 9 - d : 3 + (d % 2);
            chunk[d] = -1;
            n *= dims[d];
        }
        int g = NGA_Create(C_DBL, nd, dims, "nd", chunk);
        int lo[7], hi[7], ld[7];
        NGA_Distribution(g, gat_me, lo, hi);
        int mine = 1;
        for (int d = 0; d < nd; d++)
            mine *= hi[d] >= lo[d] ? hi[d] - lo[d] + 1 : 0;
        if (mine > 0) {
            double *b = malloc(sizeof(double) * (size_t)mine);
            int idx[7];
            for (int d = 0; d < nd; d++)
                idx[d] = lo[d];
            for (int i = 0; i < mine; i++) {
                long lin = 0;
                for (int d = 0; d < nd; d++)
                    lin = lin * dims[d] + idx[d];
                b[i] = (double)lin;
                for (int d = nd - 1; d >= 0; d--) {
                    if (++idx[d] <= hi[d])
                        break;
                    idx[d] = lo[d];
                }
            }
            for (int d = 0; d + 1 < nd; d++)
                ld[d] = hi[d + 1] - lo[d + 1] + 1;
            NGA_Put(g, lo, hi, b, ld);
            free(b);
        }
        GA_Sync();
        double *all = malloc(sizeof(double) * (size_t)n);
        int alo[7], ahi[7];
        for (int d = 0; d < nd; d++) {
            alo[d] = 0, ahi[d] = dims[d] - 1;
            if (d + 1 < nd)
                ld[d] = dims[d + 1];
        }
        NGA_Get(g, alo, ahi, all, ld);
        int ok = 1;
        for (int i = 0; i < n; i++)
            ok &= all[i] == i;
        char name[64];
        snprintf(name, sizeof name, "%d-D put by owners, get all", nd);
        gat_check(ok, name);
        free(all);
        GA_Destroy(g);
    }
}

/* the distributions GA chooses and reports */
static void distributions(void)
{
    int shapes[][3] = {{100, 1, 1}, {37, 29, 1}, {8, 8, 8}, {5, 200, 1}, {1000, 3, 1}};
    int nds[] = {1, 2, 3, 2, 2};
    for (int s = 0; s < 5; s++) {
        int g = NGA_Create(C_INT, nds[s], shapes[s], "dist", NULL);
        int nb[3];
        GA_Nblock(g, nb);
        gat_out("shape %d: nblock %d %d %d", s, nb[0], nds[s] > 1 ? nb[1] : 0,
                nds[s] > 2 ? nb[2] : 0);
        for (int p = 0; p < gat_np; p++) {
            int lo[3], hi[3];
            NGA_Distribution(g, p, lo, hi);
            gat_out("  proc %d: [%d %d %d] .. [%d %d %d]", p, lo[0], nds[s] > 1 ? lo[1] : 0,
                    nds[s] > 2 ? lo[2] : 0, hi[0], nds[s] > 1 ? hi[1] : 0, nds[s] > 2 ? hi[2] : 0);
        }
        int sub[3] = {shapes[s][0] - 1, shapes[s][1] - 1, shapes[s][2] - 1};
        gat_out("  last element on %d", NGA_Locate(g, sub));
        GA_Destroy(g);
    }
    /* irregular */
    int dims[2] = {10, 12}, nblock[2] = {2, 1}, map[3] = {0, 3, 0};
    if (gat_np >= 2) {
        int g = NGA_Create_irreg(C_DBL, 2, dims, "irr", nblock, map);
        for (int p = 0; p < gat_np; p++) {
            int lo[2], hi[2];
            NGA_Distribution(g, p, lo, hi);
            gat_out("irreg proc %d: [%d %d] .. [%d %d]", p, lo[0], lo[1], hi[0], hi[1]);
        }
        int lo[2] = {2, 1}, hi[2] = {5, 10}, rmap[16], procs[4];
        int nr = NGA_Locate_region(g, lo, hi, rmap, procs);
        gat_out("irreg region: %d blocks", nr);
        for (int i = 0; i < nr; i++)
            gat_out("  [%d %d]..[%d %d] on %d", rmap[4 * i], rmap[4 * i + 1], rmap[4 * i + 2],
                    rmap[4 * i + 3], procs[i]);
        GA_Destroy(g);
    }
}

/* NGA_Read_inc as a shared counter: every value handed out exactly once */
static void counter(void)
{
    int one = 1;
    int g = NGA_Create(C_LONG, 1, &one, "counter", NULL);
    GA_Zero(g);
    int per = 50, sub = 0;
    long *got = calloc((size_t)per * gat_np, sizeof(long));
    int nmine = 0;
    long v;
    while ((v = NGA_Read_inc(g, &sub, 1)) < per * gat_np)
        got[nmine++] = v;
    long *seen = calloc((size_t)per * gat_np, sizeof(long));
    for (int i = 0; i < nmine; i++)
        seen[got[i]]++;
    GA_Lgop(seen, per * gat_np, "+");
    int ok = 1;
    for (int i = 0; i < per * gat_np; i++)
        ok &= seen[i] == 1;
    gat_check(ok, "read_inc hands out every value once");
    GA_Sync();
    long final;
    NGA_Get(g, &sub, &sub, &final, NULL);
    gat_out("counter ends at %ld", final - (per * gat_np));
    free(got);
    free(seen);
    GA_Destroy(g);
}

/* scatter / gather / scatter_acc of 200 elements on a 2-D array */
static void scatter_gather(void)
{
    int dims[2] = {20, 17};
    int g = NGA_Create(C_DBL, 2, dims, "sg", NULL);
    GA_Zero(g);
    int n = 200;
    int *subs = malloc(sizeof(int) * 2 * n), **sp = malloc(sizeof(int *) * n);
    double *v = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) {
        subs[2 * i] = (i * 7) % 20;
        subs[2 * i + 1] = (i * 13) % 17;
        sp[i] = subs + 2 * i;
        v[i] = i;
    }
    if (gat_me == 0)
        NGA_Scatter(g, v, sp, n); /* element (7i%20, 13i%17): distinct for i < 340 */
    GA_Sync();
    double alpha = 0.5;
    NGA_Scatter_acc_flat(g, v, subs, n, &alpha);
    GA_Sync();
    double *w = calloc(n, sizeof(double));
    NGA_Gather(g, w, sp, n);
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= w[i] == v[i] * (1 + 0.5 * gat_np);
    gat_check(ok, "scatter, scatter_acc, gather");
    /* a duplicate has its own blocks (and element caches): gathers from both, then destroy both */
    int g2 = GA_Duplicate(g, "sg2");
    GA_Copy(g, g2);
    double alpha2 = 1;
    NGA_Scatter_acc(g2, v, sp, n, &alpha2);
    GA_Sync();
    double *w2 = calloc(n, sizeof(double));
    NGA_Gather(g, w, sp, n);
    NGA_Gather(g2, w2, sp, n);
    ok = 1;
    for (int i = 0; i < n; i++)
        ok &= w[i] == v[i] * (1 + 0.5 * gat_np) && w2[i] == w[i] + v[i] * gat_np;
    gat_check(ok, "duplicate: its own data, gathers from both");
    free(w2);
    GA_Destroy(g2);
    /* a list naming every element twice (the same value twice: GA leaves which of two values a
     * scatter keeps undefined), a scatter_acc of such a list adds both, a gather fills both */
    int *sp2 = malloc(sizeof(int) * 4 * n);
    double *v2 = malloc(sizeof(double) * 2 * n), *w3 = calloc(2 * n, sizeof(double));
    for (int i = 0; i < n; i++) {
        memcpy(sp2 + 2 * i, subs + 2 * i, 2 * sizeof(int));
        memcpy(sp2 + 2 * (n + i), subs + 2 * i, 2 * sizeof(int));
        v2[i] = v2[n + i] = i + 0.25;
    }
    GA_Zero(g);
    if (gat_me == 0)
        NGA_Scatter_flat(g, v2, sp2, 2 * n);
    GA_Sync();
    NGA_Scatter_acc_flat(g, v2, sp2, 2 * n, &alpha2); /* + 2 (i + 0.25) from every process */
    GA_Sync();
    NGA_Gather_flat(g, w3, sp2, 2 * n);
    ok = 1;
    for (int i = 0; i < n; i++)
        ok &= w3[i] == (i + 0.25) * (1 + 2 * gat_np) && w3[n + i] == w3[i];
    gat_check(ok, "element lists naming elements twice");
    free(sp2);
    free(v2);
    free(w3);
    free(subs);
    free(sp);
    free(v);
    free(w);
    GA_Destroy(g);
}

/* Long element lists (thousands of elements per owner, the size ga-compat sends to a remote owner
 * as messages) of every type, from every process at once: each process scatters the elements
 * (i, j) with (i + 3j) % np == me in a shuffled order, each named twice with the same value,
 * right after putting other values into some of them (the list's values must win); then every
 * process gathers the whole array in a shuffled order, and scatter_acc adds to each element. */
static void long_lists(void)
{
    int dims[2] = {150, 97}, n = dims[0] * dims[1];
    int *subs = malloc(sizeof(int) * 4 * n), **sp = malloc(sizeof(int *) * 2 * n);
    int *perm = malloc(sizeof(int) * n);
    char *v = malloc(16 * 2 * (size_t)n), *w = malloc(16 * (size_t)n);
    unsigned long long st = 99;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* a fixed shuffle (same in every process and build) */
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((st >> 33) % (unsigned long long)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (int ti = 0; ti < GAT_NT; ti++) {
        int t = gat_types[ti];
        size_t es = gat_tsize(t);
        int g = NGA_Create(t, 2, dims, "lists", NULL);
        GA_Zero(g);
        int m = 0; /* my elements, each twice, the second copy later in the list */
        for (int k = 0; k < n; k++) {
            int e = perm[k], i = e / dims[1], j = e % dims[1];
            if ((i + 3 * j) % gat_np != gat_me)
                continue;
            subs[2 * m] = i, subs[2 * m + 1] = j;
            gat_setc(t, v + es * (size_t)m, e % 1000 + 1, -(e % 7));
            m++;
        }
        for (int k = 0; k < m; k++) { /* the second copies, in the same shuffled order */
            memcpy(subs + 2 * (m + k), subs + 2 * k, 2 * sizeof(int));
            memcpy(v + es * (size_t)(m + k), v + es * (size_t)k, es);
        }
        for (int k = 0; k < 2 * m; k++)
            sp[k] = subs + 2 * k;
        /* other values put into the first 50 of my elements, then the list: the list's win */
        char junk[16];
        gat_setc(t, junk, -7, -7);
        for (int k = 0; k < 50 && k < m; k++)
            NGA_Put(g, subs + 2 * k, subs + 2 * k, junk, (int[1]){1});
        NGA_Scatter(g, v, sp, 2 * m);
        GA_Sync();
        int *all = malloc(sizeof(int) * 2 * n), **ap = malloc(sizeof(int *) * n);
        for (int k = 0; k < n; k++) {
            int e = perm[(k + 17 * gat_me) % n];
            all[2 * k] = e / dims[1], all[2 * k + 1] = e % dims[1];
            ap[k] = all + 2 * k;
        }
        NGA_Gather(g, w, ap, n);
        int ok = 1;
        for (int k = 0; k < n; k++) {
            int e = all[2 * k] * dims[1] + all[2 * k + 1];
            double re, im;
            gat_getc(t, w + es * (size_t)k, &re, &im);
            ok &= re == e % 1000 + 1 && im == (gat_cplx(t) ? -(e % 7) : 0);
        }
        gat_check(ok, "long lists: scatter after a patch put, gather");
        /* a sparse list (every 17th element: too sparse to read the range covering it) */
        int ns = 0;
        for (int e = 0; e < n; e += 17, ns++) {
            all[2 * ns] = e / dims[1], all[2 * ns + 1] = e % dims[1];
            ap[ns] = all + 2 * ns;
        }
        NGA_Gather(g, w, ap, ns);
        ok = 1;
        for (int k = 0; k < ns; k++) {
            double re, im;
            gat_getc(t, w + es * (size_t)k, &re, &im);
            ok &= re == (17 * k) % 1000 + 1 && im == (gat_cplx(t) ? -((17 * k) % 7) : 0);
        }
        gat_check(ok, "long lists: sparse gather");
        for (int k = 0; k < n; k++) { /* the whole array again, for the accumulate below */
            int e = perm[(k + 17 * gat_me) % n];
            all[2 * k] = e / dims[1], all[2 * k + 1] = e % dims[1];
            ap[k] = all + 2 * k;
        }
        GA_Sync();
        char alpha[16];
        gat_setc(t, alpha, 2, 0);
        int peer_cannot = 0; /* GA 5.8.2 on ARMCI-MPI: no C_LONGLONG accumulate (see types_2d) */
#ifdef GAT_PEER
        peer_cannot = t == C_LONGLONG;
#endif
        if (!peer_cannot)
            NGA_Scatter_acc(g, v, sp, 2 * m, alpha); /* my elements: + 2 x 2 values */
        GA_Sync();
        NGA_Gather(g, w, ap, n);
        ok = 1;
        double sum = 0;
        for (int k = 0; k < n; k++) {
            int e = all[2 * k] * dims[1] + all[2 * k + 1];
            double re, im, want = 5 * (e % 1000 + 1);
            gat_getc(t, w + es * (size_t)k, &re, &im);
            if (peer_cannot)
                re = want, im = 0;
            ok &= re == want && im == (gat_cplx(t) ? -5 * (e % 7) : 0);
            sum += re;
        }
        gat_check(ok, "long lists: scatter_acc, gather");
        if (peer_cannot)
            gat_out("# GA bug: long lists: NGA_Scatter_acc of C_LONGLONG aborts in GA 5.8.2 on "
                    "ARMCI-MPI");
        gat_out("long lists %s: sum " GAT_G, gat_tname[ti], sum);
        free(all);
        free(ap);
        GA_Destroy(g);
    }
    free(subs);
    free(sp);
    free(perm);
    free(v);
    free(w);
}

/* strided (skip) and periodic patches */
static void strided_periodic(void)
{
    int dims[2] = {12, 10};
    int g = NGA_Create(C_INT, 2, dims, "sp", NULL);
    GA_Zero(g);
    int all[120];
    if (gat_me == 0) {
        int lo[2] = {1, 0}, hi[2] = {10, 9}, skip[2] = {3, 2}, ld = 5, b[20];
        for (int i = 0; i < 20; i++)
            b[i] = i + 1;
        NGA_Strided_put(g, lo, hi, skip, b, &ld); /* rows 1 4 7 10, cols 0 2 4 6 8 */
    }
    GA_Sync();
    int lo[2] = {0, 0}, hi[2] = {11, 9}, ld = 10;
    NGA_Get(g, lo, hi, all, &ld);
    int ok = 1;
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 10; j++) {
            int want = (i % 3 == 1 && j % 2 == 0) ? (i / 3) * 5 + j / 2 + 1 : 0;
            ok &= all[i * 10 + j] == want;
        }
    gat_check_gabug(ok, "strided put",
                    "GA 5.8.2's NGA_Strided_put misplaces the elements of a patch that spans "
                    "blocks (only the first block's row lands right)");
    int sg[20], slo[2] = {1, 0}, shi[2] = {10, 9}, skip[2] = {3, 2}, sld = 5;
    NGA_Strided_get(g, slo, shi, skip, sg, &sld);
    ok = 1;
    for (int i = 0; i < 20; i++)
        ok &= sg[i] == i + 1;
    gat_check(ok, "strided get");
    GA_Sync();
    /* periodic: a 4 x 4 patch wrapping both corners */
    int p[16];
    int plo[2] = {-2, 8}, phi[2] = {1, 11}, pld = 4;
    NGA_Periodic_get(g, plo, phi, p, &pld);
    ok = 1;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int r = ((-2 + i) % 12 + 12) % 12, c = (8 + j) % 10;
            ok &= p[i * 4 + j] == all[r * 10 + c];
        }
    gat_check(ok, "periodic get");
    /* the same with a NULL ld: a dense 4 x 4 buffer (GA 5.8.2 dereferences ld: its build passes
     * the dense ld explicitly) */
    int q[16];
#ifdef GAT_PEER
    NGA_Periodic_get(g, plo, phi, q, &pld);
#else
    NGA_Periodic_get(g, plo, phi, q, NULL);
#endif
    ok = !memcmp(p, q, sizeof p);
    gat_check(ok, "periodic get, dense buffer");
    /* wider than the array (17 x 3 of 12 x 10): every index wraps, rows recur */
    int w[51], wlo[2] = {-3, 5}, whi[2] = {13, 7}, wld = 3;
    NGA_Periodic_get(g, wlo, whi, w, &wld);
    ok = 1;
    for (int i = 0; i < 17; i++)
        for (int j = 0; j < 3; j++)
            ok &= w[i * 3 + j] == all[((-3 + i) % 12 + 12) % 12 * 10 + (5 + j) % 10];
    gat_check(ok, "periodic get wider than the array");
    GA_Sync();
    /* an accumulate of 25 ones along row 0 (10 columns) from column -5: each occurrence adds */
    if (gat_me == 0) {
        int ones[25], alo[2] = {0, -5}, ahi[2] = {0, 19}, ald = 25, one = 1;
        for (int j = 0; j < 25; j++)
            ones[j] = 1;
#ifdef GAT_PEER
        /* GA bug: GA 5.8.2 aborts ("g_a indices are invalid") on a periodic accumulate wider
         * than the array: its three pieces as plain accumulates instead */
        int p0[2] = {0, 5}, p1[2] = {0, 9}, q0[2] = {0, 0};
        NGA_Acc(g, p0, p1, ones, &ald, &one);
        NGA_Acc(g, q0, p1, ones, &ald, &one);
        NGA_Acc(g, q0, p1, ones, &ald, &one);
        (void)alo, (void)ahi;
        gat_out("# GA bug: NGA_Periodic_acc wider than the array aborts in GA 5.8.2 (\"g_a "
                "indices are invalid\"): plain accumulates instead");
#else
        NGA_Periodic_acc(g, alo, ahi, ones, &ald, &one);
#endif
    }
    GA_Sync();
    int row[10], rlo[2] = {0, 0}, rhi[2] = {0, 9}, rld = 10;
    NGA_Get(g, rlo, rhi, row, &rld);
    ok = 1;
    for (int j = 0; j < 10; j++)
        ok &= row[j] == all[j] + (j < 5 ? 2 : 3);
    gat_check(ok, "periodic acc wider than the array");
    GA_Sync();
    GA_Destroy(g);
}

/* non-blocking put / get / acc */
static void nonblocking(void)
{
    int dims[1] = {1000};
    int g = NGA_Create(C_DBL, 1, dims, "nb", NULL);
    GA_Zero(g);
    double b[1000], c[1000];
    for (int i = 0; i < 1000; i++)
        b[i] = i;
    ga_nbhdl_t h1, h2;
    int lo = gat_me * 10, hi = lo + 9;
    NGA_NbPut(g, &lo, &hi, b + lo, NULL, &h1);
    NGA_NbWait(&h1);
    GA_Sync();
    int alo = 0, ahi = 999;
    double one = 1;
    NGA_NbAcc(g, &alo, &ahi, b, NULL, &one, &h2);
    NGA_NbWait(&h2);
    GA_Sync();
    NGA_NbGet(g, &alo, &ahi, c, NULL, &h1);
    while (!NGA_NbTest(&h1))
        ;
    int ok = 1;
    for (int i = 0; i < 1000; i++)
        ok &= c[i] == b[i] * gat_np + (i < 10 * gat_np ? b[i] : 0);
    gat_check(ok, "nbput, nbacc, nbget");
    GA_Destroy(g);
}

/* A user-defined element type (NGA_Register_type): 48-byte records in a 9 x 7 array; rank 0 puts
 * them all, every rank gets a patch, gathers a list and checks its own block in place; GA_Copy and
 * GA_Fill with a record (ga-compat alone: GA 5.8.2 aborts), GA_Zero; the type deregistered. */
typedef struct rec {
    int id;
    double x[3];
    char tag[12];
} rec_t;

static rec_t rec_of(int i, int j)
{
    rec_t r;
    memset(&r, 0, sizeof r);
    r.id = i * 100 + j;
    r.x[0] = i, r.x[1] = -j, r.x[2] = 0.5 * (i + j);
    snprintf(r.tag, sizeof r.tag, "r%d.%d", i, j);
    return r;
}

static void user_types(void)
{
    int t = NGA_Register_type(sizeof(rec_t));
    gat_out("registered type %d (%zu bytes)", t, sizeof(rec_t));
    int dims[2] = {9, 7}, ok = 1;
    int g = NGA_Create(t, 2, dims, "records", NULL), g2 = GA_Duplicate(g, "copy");
    int type = 0, nd = 0, dd[2];
    NGA_Inquire(g, &type, &nd, dd);
    ok &= type == t && nd == 2 && dd[0] == 9 && dd[1] == 7;
    GA_Zero(g);
    if (gat_me == 0) {
        rec_t all[9][7];
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 7; j++)
                all[i][j] = rec_of(i, j);
        int lo[2] = {0, 0}, hi[2] = {8, 6}, ld = 7;
        NGA_Put(g, lo, hi, all, &ld);
    }
    GA_Sync();
    rec_t p[3][4];
    int lo[2] = {2, 1}, hi[2] = {4, 4}, ld = 4;
    NGA_Get(g, lo, hi, p, &ld);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            rec_t r = rec_of(2 + i, 1 + j);
            ok &= !memcmp(&p[i][j], &r, sizeof r);
        }
    gat_check(ok, "user type: inquire, put, get of a patch");
    /* a gathered list, every element twice */
    int subs[10][2], *sp[10];
    rec_t got[10];
    for (int k = 0; k < 10; k++)
        subs[k][0] = (k * 5 + gat_me) % 9, subs[k][1] = (k * 3) % 7, sp[k] = subs[k];
    NGA_Gather(g, got, sp, 10);
    for (int k = 0; k < 10; k++) {
        rec_t r = rec_of(subs[k][0], subs[k][1]);
        ok &= !memcmp(&got[k], &r, sizeof r);
    }
    gat_check(ok, "user type: gather");
    /* long lists to one owner (the next process's block): with progress threads a list of 256 or
     * more elements to a remote owner travels as active messages, records of any size (1 KiB
     * records here: 64 to a gather's message, the last message of the list shorter than a record;
     * every 25th element of the block, too sparse for a gather to read the range whole) */
    enum { KREC = 1024, NL = 300 };
    int tk = NGA_Register_type(KREC);
    int n1[1] = {8000 * gat_np}, nlo[1], nhi[1];
    int g1 = NGA_Create(tk, 1, n1, "records 1-D", NULL);
    NGA_Distribution(g1, (gat_me + 1) % gat_np, nlo, nhi);
    int *ls = malloc(sizeof(int) * NL), **lp = malloc(sizeof(int *) * NL);
    unsigned char *lv = malloc((size_t)KREC * NL), *lg = malloc((size_t)KREC * NL);
    for (int k = 0; k < NL; k++) {
        ls[k] = nlo[0] + 25 * ((k * 7) % NL); /* (a permutation of the 300: 7 and 300 coprime) */
        lp[k] = &ls[k];
        for (int b = 0; b < KREC; b++)
            lv[(size_t)k * KREC + b] = (unsigned char)(gat_me * 31 + k * 7 + b);
    }
    NGA_Scatter(g1, lv, lp, NL);
    GA_Sync();
    NGA_Gather(g1, lg, lp, NL);
    ok &= !memcmp(lv, lg, (size_t)KREC * NL);
    gat_check(ok, "user type: scatter and gather of 300 1 KiB records to one owner");
    free(ls), free(lp), free(lv), free(lg);
    GA_Destroy(g1);
    gat_out("deregistered: %d", NGA_Deregister_type(tk));
    /* the own block in place */
    int blo[2], bhi[2];
    NGA_Distribution(g, gat_me, blo, bhi);
    if (bhi[0] >= blo[0] && bhi[1] >= blo[1]) {
        rec_t *b;
        int bld[1];
        NGA_Access(g, blo, bhi, &b, bld);
        for (int i = blo[0]; i <= bhi[0]; i++)
            for (int j = blo[1]; j <= bhi[1]; j++) {
                rec_t r = rec_of(i, j);
                ok &= !memcmp(&b[(i - blo[0]) * bld[0] + (j - blo[1])], &r, sizeof r);
            }
        NGA_Release(g, blo, bhi);
    }
    gat_check(ok, "user type: access of the own block");
    rec_t one, z;
    int e[2] = {8, 6}, eld = 1;
    memset(&z, 0, sizeof z);
#ifdef GAT_PEER
    gat_out("# GA 5.8.2 cannot: GA_Copy / GA_Fill of a user-defined type abort (\"type not "
            "supported\"): ga-compat alone runs them");
#else
    GA_Copy(g, g2);
    NGA_Get(g2, e, e, &one, &eld);
    rec_t r86 = rec_of(8, 6);
    int cok = !memcmp(&one, &r86, sizeof one);
    rec_t f = rec_of(42, 43);
    GA_Fill(g, &f);
    NGA_Get(g, lo, lo, &one, &eld);
    cok &= !memcmp(&one, &f, sizeof one);
    gat_check_own(cok, "user type: GA_Copy, GA_Fill");
#endif
    GA_Sync();
    GA_Zero(g2);
    NGA_Get(g2, e, e, &one, &eld);
    ok &= !memcmp(&one, &z, sizeof one);
    gat_check(ok, "user type: GA_Zero");
    GA_Destroy(g);
    GA_Destroy(g2);
    gat_out("deregistered: %d", NGA_Deregister_type(t));
}

/* GA_Overlay: a 6 x 10 C_INT array placed in the memory of a 200-double array; filled through the
 * child, read through both (the parent's doubles the child's ints overwrote). */
static void overlay(void)
{
    int pd[1] = {200};
    int gp = NGA_Create(C_DBL, 1, pd, "parent", NULL);
    GA_Zero(gp);
    int ga = GA_Create_handle(), dims[2] = {6, 10};
    GA_Set_data(ga, 2, dims, C_INT);
    GA_Set_array_name(ga, "child");
    int r = GA_Overlay(ga, gp);
    gat_out("overlay returns %d", r);
    for (int p = 0; p < gat_np; p++) {
        int lo[2], hi[2];
        NGA_Distribution(ga, p, lo, hi);
        gat_out("  child block of %d: [%d %d] .. [%d %d]", p, lo[0], lo[1], hi[0], hi[1]);
    }
    int v = 7;
    GA_Fill(ga, &v);
    GA_Sync();
    int x[60], alo[2] = {0, 0}, ahi[2] = {5, 9}, ld = 10, ok = 1;
    NGA_Get(ga, alo, ahi, x, &ld);
    for (int i = 0; i < 60; i++)
        ok &= x[i] == 7;
    gat_check(ok, "GA_Overlay: the child's elements");
    double pv[200];
    int plo = 0, phi = 199, nz = 0;
    NGA_Get(gp, &plo, &phi, pv, &ld);
    for (int i = 0; i < 200; i++)
        nz += pv[i] != 0;
    gat_out("overlay: %d of the parent's doubles changed", nz);
    GA_Sync();
    GA_Destroy(ga);
    GA_Destroy(gp);
}

/* GA_Getmem blocks (each process asks for a different count) and GA_Assemble_duplicate: an array
 * described as a template (8 x 12 doubles, GA's default blocking) whose memory is the blocks, so
 * its elements are what each process wrote into its own block (row-major over its part), and writes
 * through the array land in the blocks; GA_Access of the array's part is the block. Then blocks
 * freed with GA_Freemem alone (GA 5.8.2 frees the assembled array's blocks in GA_Destroy, so
 * GA_Freemem is not called for those). */
static void getmem_assemble(void)
{
    int dims[2] = {8, 12};
    int gt = NGA_Create(C_DBL, 2, dims, "template", NULL);
    int lo[2], hi[2];
    NGA_Distribution(gt, gat_me, lo, hi);
    int rows = hi[0] >= lo[0] ? hi[0] - lo[0] + 1 : 0,
        cols = hi[1] >= lo[1] ? hi[1] - lo[1] + 1 : 0;
    int nelem = rows * cols + gat_me; /* room to spare, different on every process */
    double *mem = GA_Getmem(C_DBL, nelem, GA_Pgroup_get_default());
    for (int i = 0; i < nelem; i++)
        mem[i] = 1000 * gat_me + i;
    int g = GA_Assemble_duplicate(gt, "assembled", mem);
    int type, ndim, d2[2];
    NGA_Inquire(g, &type, &ndim, d2);
    gat_out("assembled: type %d, ndim %d, dims %d x %d, name %s", type, ndim, d2[0], d2[1],
            GA_Inquire_name(g));
    double all[96], want[96];
    int alo[2] = {0, 0}, ahi[2] = {7, 11}, ld = 12;
    NGA_Get(g, alo, ahi, all, &ld);
    for (int p = 0; p < gat_np; p++) { /* the serial reference: process p's block, row-major */
        int pl[2], ph[2];
        NGA_Distribution(gt, p, pl, ph);
        for (int i = pl[0], k = 0; i <= ph[0]; i++)
            for (int j = pl[1]; j <= ph[1]; j++, k++)
                want[i * 12 + j] = 1000 * p + k;
    }
    gat_check(!memcmp(all, want, sizeof all), "GA_Assemble_duplicate: the blocks' contents");
    double sum = 0;
    for (int i = 0; i < 96; i++)
        sum += all[i] * (i + 1);
    gat_out("assembled: weighted sum %.1f", sum);
    int ok = 1;
    if (rows > 0) {
        double *p;
        int ald[1];
        NGA_Access(g, lo, hi, &p, ald);
        ok = p == mem && ald[0] == cols;
        NGA_Release(g, lo, hi);
    }
    gat_check(ok, "GA_Assemble_duplicate: NGA_Access is the GA_Getmem block");
    GA_Sync();
    /* row 3 through the array: every process's block sees its part of it */
    double row[12];
    for (int j = 0; j < 12; j++)
        row[j] = -1 - j;
    int rlo[2] = {3, 0}, rhi[2] = {3, 11};
    if (gat_me == gat_np - 1)
        NGA_Put(g, rlo, rhi, row, &ld);
    GA_Sync();
    ok = 1;
    for (int i = lo[0]; rows > 0 && i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++) {
            double w = i == 3 ? -1 - j : 1000 * gat_me + (i - lo[0]) * cols + (j - lo[1]);
            ok &= mem[(i - lo[0]) * cols + (j - lo[1])] == w;
        }
    for (int i = rows * cols; i < nelem; i++) /* the spare elements are untouched */
        ok &= mem[i] == 1000 * gat_me + i;
    gat_check(ok, "GA_Assemble_duplicate: a put through the array lands in the blocks");
    double two = 2;
    GA_Scale(g, &two);
    gat_out("assembled: dot after scaling %.1f", GA_Ddot(g, g));
    GA_Destroy(g);
    GA_Destroy(gt);
    /* blocks of ints, one element on some processes, freed alone */
    int *im = GA_Getmem(C_INT, 1 + 5 * gat_me, GA_Pgroup_get_default());
    for (int i = 0; i < 1 + 5 * gat_me; i++)
        im[i] = i;
    long isum = 0;
    for (int i = 0; i < 1 + 5 * gat_me; i++)
        isum += im[i];
    GA_Freemem(im);
    gat_check(isum == 5L * gat_me * (5 * gat_me + 1) / 2, "GA_Getmem / GA_Freemem: int blocks");
#ifndef GAT_PEER
    /* the blocks go with the last array assembled on them (as in GA 5.8.2); GA_Freemem while an
     * array lives on them frees them when it is destroyed (GA 5.8.2 frees them under the array,
     * and again in GA_Destroy) */
    size_t before = GA_Inquire_memory();
    int gt2 = NGA_Create(C_DBL, 2, dims, "template", NULL);
    size_t with_template = GA_Inquire_memory();
    double *m2 = GA_Getmem(C_DBL, 96, -1);
    int g2 = GA_Assemble_duplicate(gt2, "assembled", m2), g3 = GA_Duplicate(g2, "copy");
    GA_Destroy(g2);
    int lok = GA_Inquire_memory() > with_template; /* g3's own memory */
    GA_Destroy(g3);
    lok &= GA_Inquire_memory() == with_template; /* the blocks went with g2 */
    m2 = GA_Getmem(C_DBL, 96, -2);               /* (the mirror's handle: the world) */
    g2 = GA_Assemble_duplicate(gt2, "assembled", m2);
    GA_Freemem(m2);
    double v = 5, got = 0;
    int e[2] = {7, 11}, one = 1;
    if (gat_me == 0)
        NGA_Put(g2, e, e, &v, &one);
    GA_Sync();
    NGA_Get(g2, e, e, &got, &one);
    GA_Destroy(g2);
    GA_Destroy(gt2);
    lok &= got == 5 && GA_Inquire_memory() == before;
    gat_check_own(lok, "GA_Getmem blocks go with their last array, or GA_Freemem's, later");
    /* more than 1000 handles: none is 0 (GA's "none", and "refused" of GA_Duplicate; an overlay
     * on array 0 was an array of its own memory) */
    enum { NH = 1100 };
    int *hs = malloc(sizeof(int) * NH), zero = 0;
    for (int i = 0; i < NH; i++)
        zero |= (hs[i] = GA_Create_handle()) == 0;
    for (int i = 0; i < NH; i++)
        GA_Destroy(hs[i]);
    free(hs);
    gat_check_own(!zero, "no array handle is 0");
#endif
}

/* A list one remote owner holds whole (every element in the next process's block, none local:
 * grouped without a counting sort), shuffled, each element named twice with one value: scatter,
 * gather, then scatter_acc of the same list (each element gains 2 x 2 x its value). */
static void one_owner_list(void)
{
    int dims[2] = {120, 90}, lo[2], hi[2];
    int g = NGA_Create(C_DBL, 2, dims, "one owner", NULL);
    GA_Zero(g);
    NGA_Distribution(g, (gat_me + 1) % gat_np, lo, hi);
    int c = hi[1] - lo[1] + 1, m = hi[0] >= lo[0] && c > 0 ? (hi[0] - lo[0] + 1) * c : 0;
    int *subs = malloc(sizeof(int) * 4 * (size_t)(m + 1)), *perm = malloc(sizeof(int) * (m + 1));
    int **sp = malloc(sizeof(int *) * 2 * (size_t)(m + 1));
    double *v = malloc(sizeof(double) * 2 * (size_t)(m + 1)), *w = malloc(sizeof(double) * (m + 1));
    unsigned long long st = 7;
    for (int k = 0; k < m; k++)
        perm[k] = k;
    for (int k = m - 1; k > 0; k--) {
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((st >> 33) % (unsigned long long)(k + 1)), t = perm[k];
        perm[k] = perm[j], perm[j] = t;
    }
    for (int k = 0; k < 2 * m; k++) {
        int e = perm[k % m], i = lo[0] + e / c, j = lo[1] + e % c;
        subs[2 * k] = i, subs[2 * k + 1] = j;
        sp[k] = subs + 2 * k;
        v[k] = 1 + (i * dims[1] + j) % 1000;
    }
    NGA_Scatter(g, v, sp, 2 * m);
    GA_Sync();
    NGA_Gather(g, w, sp, m);
    int ok = 1;
    for (int k = 0; k < m; k++)
        ok &= w[k] == v[k];
    gat_check(ok, "one remote owner: scatter of a shuffled list naming each element twice");
    GA_Sync();
    double two = 2;
    NGA_Scatter_acc(g, v, sp, 2 * m, &two);
    GA_Sync();
    NGA_Gather(g, w, sp, m);
    ok = 1;
    for (int k = 0; k < m; k++)
        ok &= w[k] == 5 * v[k];
    gat_check(ok, "one remote owner: scatter_acc of the same list");
    GA_Destroy(g);
    free(subs), free(perm), free(sp), free(v), free(w);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    gat_out("# %d processes", gat_np);
    types_2d();
    dims_1_7();
    distributions();
    counter();
    scatter_gather();
    long_lists();
    one_owner_list();
    strided_periodic();
    nonblocking();
    user_types();
    overlay();
    getmem_assemble();
    return gat_finish();
}
