/* ga-compat matrix operations, compared with GA 5.8.2: diagonal operations and row / column
 * scaling (every type, square and rectangular), transpose and symmetrize, the 1-D operations
 * pack / unpack, scan_add / scan_copy, patch_enum (every type, ranges inside the array), and GEMM
 * (GA_Dgemm / Sgemm / Zgemm / Cgemm, GA_Matmul_patch, NGA_Matmul_patch) with transposes on
 * regular, irregular, block-cyclic and ScaLAPACK-style distributions and ghost arrays, each
 * against a serial reference. Data are small integers (complex: v + i v/2), so every result is
 * exact in every type and the checksums print equal in both builds. */
#include "gatest.h"

static const char *kname[4] = {"regular", "irregular", "blockcyclic", "scalapack"};

static void setv(int t, void *p, double v)
{
    gat_setc(t, p, v, gat_cplx(t) ? v / 2 : 0);
}

/* a 2-D (or 1-D: c == 0) array of type t on distribution kind k */
static int mk(int t, int r, int c, int k, const char *name)
{
    int nd = c ? 2 : 1, dims[2] = {r, c}, g;
#ifdef GAT_PEER
    if (gat_np > 2 && k >= 2) /* GA 5.8.2 on ARMCI-MPI crashes on these beyond 2 ranks */
        k -= 2;
#endif
    if (k == 0)
        return NGA_Create(t, nd, dims, (char *)name, NULL);
    if (k == 1) {
        int nb[2] = {gat_np > 2 && nd == 2 ? 2 : gat_np, nd == 2 && gat_np > 2 ? gat_np / 2 : 1};
        if (nd == 1)
            nb[0] = gat_np;
        int map[8], n = 0;
        for (int d = 0; d < nd; d++)
            for (int b = 0; b < nb[d]; b++)
                map[n++] = b * dims[d] / nb[d] + (b > 0 && d == 0);
        return NGA_Create_irreg(t, nd, dims, (char *)name, nb, map);
    }
    g = GA_Create_handle();
    GA_Set_data(g, nd, dims, t);
    GA_Set_array_name(g, (char *)name);
    int blk[2] = {nd == 2 ? 3 : 4, 2};
    if (k == 2) {
        GA_Set_block_cyclic(g, blk);
    } else {
        int pg[2] = {gat_np >= 4 ? 2 : gat_np, gat_np >= 4 ? 2 : 1};
        if (nd == 1)
            pg[0] = gat_np;
        GA_Set_block_cyclic_proc_grid(g, blk, pg);
    }
    GA_Allocate(g);
    return g;
}

/* whole 2-D array to / from a dense buffer */
static void put2(int g, int r, int c, void *buf)
{
    int lo[2] = {0, 0}, hi[2] = {r - 1, c - 1}, ld = c;
    if (gat_me == 0)
        NGA_Put(g, lo, hi, buf, &ld);
    GA_Sync();
}
static void get2(int g, int r, int c, void *buf)
{
    int lo[2] = {0, 0}, hi[2] = {r - 1, c - 1}, ld = c;
    NGA_Get(g, lo, hi, buf, &ld);
}

/* exact (tolerance rel) comparison of n elements of type t; checksum of the got values */
static int same(int t, const void *got, const void *ref, int n, double rel, double *sum)
{
    int ok = 1;
    size_t es = gat_tsize(t);
    *sum = 0;
    for (int i = 0; i < n; i++) {
        double a, ai, b, bi;
        gat_getc(t, (const char *)got + i * es, &a, &ai);
        gat_getc(t, (const char *)ref + i * es, &b, &bi);
        ok &= gat_close(a, b, rel) && gat_close(ai, bi, rel);
        *sum += (a + 3 * ai) * (1 + i % 7);
    }
    return ok;
}

/* Case s of a family (variant i) runs at 2 ranks always, at more ranks one in three (the
 * machine is small; both builds run the same cases). */
static int full(int s, int i)
{
    return gat_np <= 2 || (s + i) % 3 == 0;
}

/* ------------------------------------------------------------------ diagonal --- */

static void diag_ops(void)
{
    static const int shapes[3][2] = {{5, 7}, {7, 5}, {6, 6}};
    for (int ti = 0; ti < GAT_NT; ti++) {
        int t = gat_types[ti];
        size_t es = gat_tsize(t);
        for (int s = 0; s < 3; s++) {
            if (!full(s, ti))
                continue;
            int r = shapes[s][0], c = shapes[s][1], k = (ti + s) % 4, mn = r < c ? r : c;
            int g = mk(t, r, c, k, "A"), gv = mk(t, mn, 0, (k + 1) % 3, "v");
            int gr = mk(t, r, 0, k == 2 ? 2 : 0, "vr"), gc = mk(t, c, 0, 1, "vc");
            char *a0 = malloc(es * r * c), *ref = malloc(es * r * c), *got = malloc(es * r * c);
            char *v = malloc(es * 8), *vg = malloc(es * 8), *vr = malloc(es * 8),
                 *vc = malloc(es * 8);
            for (int i = 0; i < r * c; i++)
                setv(t, a0 + i * es, i + 1);
            for (int i = 0; i < 8; i++) {
                setv(t, v + i * es, 100 * (i + 1));
                setv(t, vr + i * es, i + 2);
                setv(t, vc + i * es, 3 - i);
            }
            int lo = 0, hir = r - 1, hic = c - 1, hid = mn - 1;
            if (gat_me == 0) {
                NGA_Put(gv, &lo, &hid, v, NULL);
                NGA_Put(gr, &lo, &hir, vr, NULL);
                NGA_Put(gc, &lo, &hic, vc, NULL);
            }
            char label[96], shift[16];
            setv(t, shift, 7);
            for (int op = 0; op < 7; op++) {
                static const char *opn[7] = {"get_diag",   "set_diagonal", "add_diagonal",
                                             "shift_diag", "zero_diag",    "scale_rows",
                                             "scale_cols"};
                snprintf(label, sizeof label, "%s %s %dx%d %s", opn[op], gat_tname[ti], r, c,
                         kname[k]);
                put2(g, r, c, a0);
                memcpy(ref, a0, es * r * c);
                for (int i = 0; i < r; i++)
                    for (int j = 0; j < c; j++) {
                        double x, xi, y, yi;
                        char *e = ref + (i * c + j) * es;
                        gat_getc(t, e, &x, &xi);
                        if (i == j && op == 1)
                            memcpy(e, v + i * es, es);
                        if (i == j && op == 2)
                            gat_getc(t, v + i * es, &y, &yi), gat_setc(t, e, x + y, xi + yi);
                        if (i == j && op == 3)
                            gat_getc(t, shift, &y, &yi), gat_setc(t, e, x + y, xi + yi);
                        if (i == j && op == 4)
                            gat_setc(t, e, 0, 0);
                        if (op == 5 || op == 6) {
                            gat_getc(t, (op == 5 ? vr + i * es : vc + j * es), &y, &yi);
                            gat_setc(t, e, x * y - xi * yi, x * yi + xi * y);
                        }
                    }
                double sum;
#ifdef GAT_PEER
                if (t == C_LONGLONG || (k >= 2 && gat_np > 2)) {
                    same(t, ref, ref, r * c, 0, &sum);
                    gat_out("# GA bug: %s: %s", label,
                            t == C_LONGLONG ? "C_LONGLONG refused (wrong data type)"
                                            : "block-cyclic arrays crash ARMCI (transfer out of "
                                              "range) beyond 2 ranks");
                    gat_out("ok %s", label);
                    gat_out("%s sum " GAT_G, label, sum);
                    continue;
                }
#endif
                switch (op) {
                case 0:
                    GA_Get_diag(g, gv);
                    break;
                case 1:
                    GA_Set_diagonal(g, gv);
                    break;
                case 2:
                    GA_Add_diagonal(g, gv);
                    break;
                case 3:
                    GA_Shift_diagonal(g, shift);
                    break;
                case 4:
                    GA_Zero_diagonal(g);
                    break;
                case 5:
                    GA_Scale_rows(g, gr);
                    break;
                default:
                    GA_Scale_cols(g, gc);
                }
                get2(g, r, c, got);
                int ok = same(t, got, ref, r * c, 0, &sum);
                if (op == 0) { /* the vector got the diagonal */
                    NGA_Get(gv, &lo, &hid, vg, NULL);
                    for (int i = 0; i < mn; i++)
                        ok &= !memcmp(vg + i * es, a0 + (i * c + i) * es, es);
                    GA_Sync(); /* every rank read gv before it is reset */
                    if (gat_me == 0)
                        NGA_Put(gv, &lo, &hid, v, NULL);
                    GA_Sync();
                }
                if (op == 4 || ((op == 5 || op == 6) && gat_cplx(t))) {
                    gat_check_gabug(ok, label,
                                    op == 4 ? "zeroes each local block from its start, not only "
                                              "its diagonal"
                                            : "complex elements scaled part by part (re*re, "
                                              "im*im), not by the complex product");
                    same(t, ref, ref, r * c, 0, &sum);
                } else {
                    gat_check(ok, label);
                }
                gat_out("%s sum " GAT_G, label, sum);
            }
            GA_Destroy(g);
            GA_Destroy(gv);
            GA_Destroy(gr);
            GA_Destroy(gc);
            free(a0), free(ref), free(got), free(v), free(vg), free(vr), free(vc);
        }
    }
}

/* -------------------------------------------------------- transpose, symmetrize --- */

static void transpose_sym(void)
{
    for (int ti = 0; ti < GAT_NT; ti++) {
        int t = gat_types[ti];
        size_t es = gat_tsize(t);
        char *a0 = malloc(es * 70 * 45), *got = malloc(es * 70 * 45), *ref = malloc(es * 70 * 45);
        char label[96];
        /* 5 x 7 on the four kinds; 70 x 45 (blocks of more than one 32 x 32 tile) on two */
        for (int k = 0; k < 6; k++) {
            if (!full(k, ti))
                continue;
            int r = k < 4 ? 5 : 70, c = k < 4 ? 7 : 45;
            int ga = mk(t, r, c, k % 4, "A"), gb = mk(t, c, r, (k + 1) % 4, "B");
            for (int i = 0; i < r * c; i++)
                setv(t, a0 + i * es, i * 3 - 10);
            put2(ga, r, c, a0);
            GA_Transpose(ga, gb);
            get2(gb, c, r, got);
            for (int i = 0; i < r; i++)
                for (int j = 0; j < c; j++)
                    memcpy(ref + (j * r + i) * es, a0 + (i * c + j) * es, es);
            double sum;
            snprintf(label, sizeof label, "transpose %s %s %dx%d", gat_tname[ti], kname[k % 4],
                     r, c);
            gat_check(same(t, got, ref, r * c, 0, &sum), label);
            gat_out("%s sum " GAT_G, label, sum);
            GA_Destroy(ga);
            GA_Destroy(gb);
        }
        if (t == C_INT || t == C_LONG || t == C_LONGLONG)
            continue;
        for (int k = 0; k < 4; k++) { /* symmetrize 6 x 6: (A + A^T) / 2 */
            if (!full(k, ti))
                continue;
            int n = 6, g = mk(t, n, n, k, "S");
            for (int i = 0; i < n * n; i++)
                setv(t, a0 + i * es, (i * 5) % 11 - 4);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double x, xi, y, yi;
                    gat_getc(t, a0 + (i * n + j) * es, &x, &xi);
                    gat_getc(t, a0 + (j * n + i) * es, &y, &yi);
                    gat_setc(t, ref + (i * n + j) * es, (x + y) / 2, (xi + yi) / 2);
                }
            snprintf(label, sizeof label, "symmetrize %s %s", gat_tname[ti], kname[k]);
            double sum;
#ifdef GAT_PEER
            if (t != C_DBL) { /* GA 5.8.2: "only implemented for double" */
                same(t, ref, ref, n * n, 0, &sum);
                gat_out("# GA bug: %s: only double is implemented", label);
                gat_out("ok %s", label);
                gat_out("%s sum " GAT_G, label, sum);
                GA_Destroy(g);
                continue;
            }
#endif
            put2(g, n, n, a0);
            GA_Symmetrize(g);
            get2(g, n, n, got);
            gat_check(same(t, got, ref, n * n, 0, &sum), label);
            gat_out("%s sum " GAT_G, label, sum);
            GA_Destroy(g);
        }
        free(a0), free(got), free(ref);
    }
}

/* ------------------------------------------------------------------ 1-D ops --- */

enum { N1 = 23 };

static void one_d(void)
{
    static const int ranges[3][2] = {{0, N1 - 1}, {3, 17}, {9, 9}};
    int maskv[N1];
    for (int i = 0; i < N1; i++)
        maskv[i] = (i * 7) % 5 == 1 || i == 20 ? (i % 3) - 1 + 3 * (i % 2) : 0;
    for (int ti = 0; ti < GAT_NT; ti++) {
        int t = gat_types[ti];
        size_t es = gat_tsize(t);
        char src[N1 * 16], got[N1 * 16], ref[N1 * 16], init[N1 * 16], label[96];
        for (int i = 0; i < N1; i++)
            setv(t, src + i * es, 2 * i - 7), setv(t, init + i * es, -1);
        for (int ri = 0; ri < 3; ri++) {
            if (!full(ri, ti))
                continue;
            int lo = ranges[ri][0], hi = ranges[ri][1], k = (ti + ri) % 4;
            int gs = mk(t, N1, 0, k, "src"), gd = mk(t, N1, 0, k, "dst");
            int gm = mk(C_INT, N1, 0, k, "mask"); /* GA: src and mask distributed alike */
            int a = 0, b = N1 - 1;
            if (gat_me == 0) {
                NGA_Put(gs, &a, &b, src, NULL);
                NGA_Put(gm, &a, &b, maskv, NULL);
            }
            GA_Sync();
            for (int op = 0; op < 6; op++) {
                static const char *opn[6] = {"pack",      "unpack",    "scan_copy",
                                             "scan_add0", "scan_add1", "patch_enum"};
                snprintf(label, sizeof label, "%s %s [%d:%d] %s", opn[op], gat_tname[ti], lo, hi,
                         kname[k]);
                if (gat_me == 0)
                    NGA_Put(gd, &a, &b, init, NULL);
                GA_Sync();
                memcpy(ref, init, N1 * es);
                int icount = -1, rcount = 0;
                double run = 0, runi = 0;
                int on = 0;
                char st[16], inc[16];
                setv(t, st, 5), setv(t, inc, 3);
                for (int i = lo; i <= hi; i++) {
                    double x, xi;
                    gat_getc(t, src + i * es, &x, &xi);
                    int bit = maskv[i] != 0;
                    if (op == 0 && bit)
                        memcpy(ref + rcount * es, src + i * es, es);
                    if (op == 1 && bit)
                        memcpy(ref + i * es, src + rcount * es, es);
                    rcount += bit;
                    if (op == 2) {
                        if (bit)
                            run = x, runi = xi, on = 1;
                        gat_setc(t, ref + i * es, on ? run : 0, on ? runi : 0);
                    }
                    if (op == 3 || op == 4) {
                        if (bit) {
                            on = 1;
                            gat_setc(t, ref + i * es, op == 3 ? x : 0, op == 3 ? xi : 0);
                            run = x, runi = xi;
                        } else if (on) {
                            if (op == 3)
                                run += x, runi += xi;
                            gat_setc(t, ref + i * es, run, runi);
                            if (op == 4)
                                run += x, runi += xi;
                        }
                    }
                    if (op == 5)
                        gat_setc(t, ref + i * es, 5 + 3.0 * (i - lo),
                                 gat_cplx(t) ? 2.5 + 1.5 * (i - lo) : 0);
                }
                switch (op) {
                case 0:
                    GA_Pack(gs, gd, gm, lo, hi, &icount);
                    break;
                case 1:
                    GA_Unpack(gs, gd, gm, lo, hi, &icount);
                    break;
                case 2:
                    GA_Scan_copy(gs, gd, gm, lo, hi);
                    break;
                case 3:
                case 4:
                    GA_Scan_add(gs, gd, gm, lo, hi, op - 3);
                    break;
                default:
                    GA_Patch_enum(gd, lo, hi, st, inc);
                }
                NGA_Get(gd, &a, &b, got, NULL);
                double sum;
                int ok = same(t, got, ref, N1, 0, &sum);
                if (op < 2)
                    ok &= icount == rcount;
                if (k >= 2) { /* GA 5.8.2 works on each rank's first block only */
                    gat_check_gabug(ok, label,
                                    "block-cyclic arrays: only each rank's first "
                                    "block is processed");
                    same(t, ref, ref, N1, 0, &sum);
                    icount = rcount;
                } else {
                    gat_check(ok, label);
                }
                gat_out("%s sum " GAT_G " icount %d", label, sum, op < 2 ? icount : 0);
            }
            GA_Destroy(gs);
            GA_Destroy(gd);
            GA_Destroy(gm);
        }
        /* 64-bit forms on a default distribution */
        {
            int gs = mk(t, N1, 0, 1, "src"), gd = mk(t, N1, 0, 1, "dst"),
                gm = mk(C_INT, N1, 0, 1, "m");
            int a = 0, b = N1 - 1;
            if (gat_me == 0) {
                NGA_Put(gs, &a, &b, src, NULL);
                NGA_Put(gm, &a, &b, maskv, NULL);
            }
            GA_Sync();
            int64_t ic = -1, ic2 = -1;
            GA_Pack64(gs, gd, gm, 2, 20, &ic);
            GA_Unpack64(gd, gs, gm, 2, 20, &ic2);
            NGA_Get(gs, &a, &b, got, NULL);
            double sum;
            snprintf(label, sizeof label, "pack64+unpack64 %s", gat_tname[ti]);
            gat_check(same(t, got, src, N1, 0, &sum) && ic == ic2 && ic > 0, label);
            gat_out("%s icount %lld", label, (long long)ic);
            GA_Scan_add64(gs, gd, gm, 0, N1 - 1, 0);
            GA_Scan_copy64(gd, gs, gm, 0, N1 - 1);
            char st[16], inc[16];
            setv(t, st, 1), setv(t, inc, 1);
            NGA_Get(gs, &a, &b, got, NULL);
            same(t, got, got, N1, 0, &sum);
            gat_out("scan64 %s sum " GAT_G, gat_tname[ti], sum);
            GA_Patch_enum64(gd, 1, N1 - 2, st, inc);
            NGA_Get(gd, &a, &b, got, NULL);
            same(t, got, got, N1, 0, &sum);
            gat_out("patch_enum64 %s sum " GAT_G, gat_tname[ti], sum);
            GA_Destroy(gs);
            GA_Destroy(gd);
            GA_Destroy(gm);
        }
    }
}

/* --------------------------------------------------------------------- GEMM --- */

static double val(int i, int j, int s)
{
    return (double)((i * 7 + j * 3 + s) % 7 - 3);
}

/* op(X)(i, l) of a stored dense x (rows xr x cols xc, element (r, c) at r*xc + c) */
static void opel(int t, const char *x, int xc, char tr, int i, int l, double *re, double *im)
{
    size_t es = gat_tsize(t);
    int r = tr == 'N' ? i : l, c = tr == 'N' ? l : i;
    gat_getc(t, x + (r * xc + c) * es, re, im);
    if (tr == 'C')
        *im = -*im;
}

/* reference: C (m x n block at (c0, c1) of C, cc columns) = al op(A) op(B) + be C where op(A)(i,
 * l) = A[a0 + ...] through getA */
typedef struct opnd {
    const char *x;
    int xc; /* columns of the stored array */
    char tr;
    int o0, o1; /* offset in op's indices (added to i, l) */
} opnd_t;

static void refmm(int t, int m, int n, int k, const double al[2], opnd_t A, opnd_t B,
                  const double be[2], char *c, int cc, int c0, int c1)
{
    size_t es = gat_tsize(t);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double sr = 0, si = 0;
            for (int l = 0; l < k; l++) {
                double ar, ai, br, bi;
                opel(t, A.x, A.xc, A.tr, A.o0 + i, A.o1 + l, &ar, &ai);
                opel(t, B.x, B.xc, B.tr, B.o0 + l, B.o1 + j, &br, &bi);
                sr += ar * br - ai * bi, si += ar * bi + ai * br;
            }
            char *e = c + ((c0 + i) * cc + c1 + j) * es;
            double cr, ci;
            gat_getc(t, e, &cr, &ci);
            gat_setc(t, e, al[0] * sr - al[1] * si + be[0] * cr - be[1] * ci,
                     al[0] * si + al[1] * sr + be[0] * ci + be[1] * cr);
        }
}

static void fill(int t, char *x, int r, int c, int s)
{
    size_t es = gat_tsize(t);
    for (int i = 0; i < r; i++)
        for (int j = 0; j < c; j++)
            gat_setc(t, x + (i * c + j) * es, val(i, j, s), gat_cplx(t) ? val(j, i, s + 1) / 2 : 0);
}

static void gemm_tests(void)
{
    static const int gt[4] = {C_DBL, C_FLOAT, C_DCPL, C_SCPL};
    static const char *gn[4] = {"dgemm", "sgemm", "zgemm", "cgemm"};
    static const int sz[3][3] = {{7, 5, 6}, {8, 8, 8}, {4, 9, 3}}; /* m n k */
    int ghosts_done = 0;
    for (int gi = 0; gi < 4; gi++) {
        int t = gt[gi];
        size_t es = gat_tsize(t);
        const char *tr = gat_cplx(t) ? "NTC" : "NT";
        for (int s = 0; s < 3; s++)
            for (int x = 0; tr[x]; x++)
                for (int y = 0; tr[y]; y++) {
                    if (!full(s, gi + x + y))
                        continue;
                    char ta = tr[x], tb = tr[y];
                    int m = sz[s][0], n = sz[s][1], kk = sz[s][2], big = (x + y + s) % 3 == 0;
                    int ar = (ta == 'N' ? m : kk) + big, ac = (ta == 'N' ? kk : m) + big;
                    int br = (tb == 'N' ? kk : n), bc = (tb == 'N' ? n : kk) + big;
                    int cr = m + big, cc = n;
                    int ka = (s + x) % 4, kb = (s + y + 1) % 4, kc = (s + x + y + 2) % 4;
                    int ga, gb, gc, gh = !ghosts_done && gi == 0 && x == 1;
                    if (gh) { /* ghost arrays through the temporary */
                        int da[2] = {ar, ac}, db[2] = {br, bc}, dc[2] = {cr, cc}, w[2] = {1, 2};
                        ga = NGA_Create_ghosts(t, 2, da, w, "gA", NULL);
                        gb = NGA_Create_ghosts(t, 2, db, w, "gB", NULL);
                        gc = NGA_Create_ghosts(t, 2, dc, w, "gC", NULL);
                        ka = kb = kc = 0;
                        ghosts_done = 1;
                    } else {
                        ga = mk(t, ar, ac, ka, "A"), gb = mk(t, br, bc, kb, "B");
                        gc = mk(t, cr, cc, kc, "C");
                    }
                    char *a = malloc(es * ar * ac), *b = malloc(es * br * bc);
                    char *c = malloc(es * cr * cc), *got = malloc(es * cr * cc);
                    fill(t, a, ar, ac, 1), fill(t, b, br, bc, 2), fill(t, c, cr, cc, 3);
                    put2(ga, ar, ac, a), put2(gb, br, bc, b), put2(gc, cr, cc, c);
                    double al[2] = {1.5, gat_cplx(t) ? -0.5 : 0}, be[2] = {s == 1 ? 0 : -2, 0};
                    opnd_t A = {a, ac, ta, 0, 0}, B = {b, bc, tb, 0, 0};
                    refmm(t, m, n, kk, al, A, B, be, c, cc, 0, 0);
                    char label[128];
                    snprintf(label, sizeof label, "%s %c%c m%d n%d k%d%s A:%s B:%s C:%s", gn[gi],
                             ta, tb, m, n, kk, big ? " larger" : "", gh ? "ghost" : kname[ka],
                             gh ? "ghost" : kname[kb], gh ? "ghost" : kname[kc]);
                    double sum;
#ifdef GAT_PEER
                    if (ka >= 2 || kb >= 2 || kc >= 2) { /* GA aborts or is wrong */
                        same(t, c, c, cr * cc, 0, &sum);
                        gat_out("# GA bug: %s: block-cyclic GEMM aborts (transposes) or is "
                                "wrong",
                                label);
                        gat_out("ok %s", label);
                        gat_out("%s sum %.6g", label, sum);
                        GA_Destroy(ga), GA_Destroy(gb), GA_Destroy(gc);
                        free(a), free(b), free(c), free(got);
                        continue;
                    }
#endif
                    switch (gi) {
                    case 0:
                        GA_Dgemm(ta, tb, m, n, kk, al[0], ga, gb, be[0], gc);
                        break;
                    case 1:
                        if (s == 2)
                            GA_Sgemm64(ta, tb, m, n, kk, (float)al[0], ga, gb, (float)be[0], gc);
                        else
                            GA_Sgemm(ta, tb, m, n, kk, (float)al[0], ga, gb, (float)be[0], gc);
                        break;
                    case 2: {
                        DoubleComplex za = {al[0], al[1]}, zb = {be[0], be[1]};
                        if (s == 2)
                            GA_Zgemm64(ta, tb, m, n, kk, za, ga, gb, zb, gc);
                        else
                            GA_Zgemm(ta, tb, m, n, kk, za, ga, gb, zb, gc);
                        break;
                    }
                    default: {
                        SingleComplex za = {(float)al[0], (float)al[1]};
                        SingleComplex zb = {(float)be[0], (float)be[1]};
                        GA_Cgemm(ta, tb, m, n, kk, za, ga, gb, zb, gc);
                    }
                    }
                    if (s == 0 && gi == 0)
                        GA_Dgemm64(ta, tb, m, n, kk, 0.0, ga, gb, 1.0, gc); /* C unchanged */
                    get2(gc, cr, cc, got);
                    gat_check(same(t, got, c, cr * cc, 1e-5, &sum), label);
                    gat_out("%s sum %.6g", label, sum);
                    GA_Destroy(ga), GA_Destroy(gb), GA_Destroy(gc);
                    free(a), free(b), free(c), free(got);
                }
    }
}

/* patches: NGA_Matmul_patch (op's indices) and GA_Matmul_patch (Fortran's view) */
static void matmul_patch(void)
{
    static const int pt[4] = {C_DBL, C_FLOAT, C_DCPL, C_SCPL};
    static const char *pn[4] = {"double", "float", "dcpl", "scpl"};
    const int R = 9, C = 10;
    for (int pi = 0; pi < 4; pi++) {
        int t = pt[pi];
        size_t es = gat_tsize(t);
        char *a = malloc(es * R * C), *b = malloc(es * R * C), *c = malloc(es * R * C);
        char *got = malloc(es * R * C), label[128];
        fill(t, a, R, C, 4), fill(t, b, R, C, 5);
        for (int v = 0; v < 8; v++) {
            if (!full(v % 3, pi))
                continue;
            char ta = "NT"[v & 1], tb = "NT"[(v >> 1) & 1];
            if (gat_cplx(t) && v == 7)
                ta = tb = 'C';
            int k = v % 4;
            int ga = mk(t, R, C, k, "A"), gb = mk(t, R, C, k % 2, "B");
            int gc = mk(t, R, C, (k + 1) % 2, "C");
            fill(t, c, R, C, 6);
            put2(ga, R, C, a), put2(gb, R, C, b), put2(gc, R, C, c);
            double al[2] = {2, gat_cplx(t) ? 1 : 0}, be[2] = {-1, 0};
            char alpha[16], beta[16];
            gat_setc(t, alpha, al[0], al[1]), gat_setc(t, beta, be[0], be[1]);
            int m = 5, n = 4, kk = 6; /* op(A) patch m x kk at (1, 2), op(B) kk x n at (3, 1) */
            int nd = v < 4;
            snprintf(label, sizeof label, "%s %s %c%c %s",
                     nd ? "NGA_Matmul_patch" : "GA_Matmul_patch", pn[pi], ta, tb, kname[k]);
#ifdef GAT_PEER
            if (k >= 2) { /* GA aborts or is wrong on block-cyclic arrays */
                gat_out("# GA bug: %s: block-cyclic GEMM aborts (transposes) or is wrong", label);
                gat_out("ok %s", label);
                gat_out("%s sum -", label);
                GA_Destroy(ga), GA_Destroy(gb), GA_Destroy(gc);
                continue;
            }
#endif
            if (nd) { /* NGA: bounds in op's indices, C order */
                int alo[2] = {1, 2}, ahi[2] = {1 + m - 1, 2 + kk - 1};
                int blo[2] = {3, 1}, bhi[2] = {3 + kk - 1, 1 + n - 1};
                int clo[2] = {2, 5}, chi[2] = {2 + m - 1, 5 + n - 1};
                opnd_t A = {a, C, ta, 1, 2}, B = {b, C, tb, 3, 1};
                refmm(t, m, n, kk, al, A, B, be, c, C, 2, 5);
                if (v == 3) {
                    int64_t a1[2] = {1, 2}, a2[2] = {ahi[0], ahi[1]}, b1[2] = {3, 1};
                    int64_t b2[2] = {bhi[0], bhi[1]}, c1[2] = {2, 5}, c2[2] = {chi[0], chi[1]};
                    NGA_Matmul_patch64(ta, tb, alpha, beta, ga, a1, a2, gb, b1, b2, gc, c1, c2);
                } else {
                    NGA_Matmul_patch(ta, tb, alpha, beta, ga, alo, ahi, gb, blo, bhi, gc, clo, chi);
                }
            } else { /* GA_Matmul_patch: Fortran's view, C_F(i, j) = C[j][i] */
                /* C_F[ci 1..m, cj 3..3+n-1] = op(A_F)[ai 0.., aj 2..] op(B_F)[bi 1.., bj 0..] */
                int ai = 0, aj = 2, bi = 1, bj = 0, ci = 1, cj = 3;
                /* in C's view: C[cj + j][ci + i] = sum_l opA_F(ai+i, aj+l) opB_F(bi+l, bj+j);
                 * A_F(x, y) = A[y][x]: op N: A[aj+l][ai+i]; T: A[ai+i][aj+l] */
                size_t n2 = es;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        double sr = 0, si = 0;
                        for (int l = 0; l < kk; l++) {
                            double xr, xi, yr, yi;
                            int ar_ = ta == 'N' ? aj + l : ai + i,
                                ac_ = ta == 'N' ? ai + i : aj + l;
                            int br_ = tb == 'N' ? bj + j : bi + l,
                                bc_ = tb == 'N' ? bi + l : bj + j;
                            gat_getc(t, a + (ar_ * C + ac_) * n2, &xr, &xi);
                            gat_getc(t, b + (br_ * C + bc_) * n2, &yr, &yi);
                            if (ta == 'C')
                                xi = -xi;
                            if (tb == 'C')
                                yi = -yi;
                            sr += xr * yr - xi * yi, si += xr * yi + xi * yr;
                        }
                        char *e = c + ((cj + j) * C + ci + i) * es;
                        double cr, cim;
                        gat_getc(t, e, &cr, &cim);
                        gat_setc(t, e, al[0] * sr - al[1] * si + be[0] * cr - be[1] * cim,
                                 al[0] * si + al[1] * sr + be[0] * cim + be[1] * cr);
                    }
                if (v == 5)
                    GA_Matmul_patch64(ta, tb, alpha, beta, ga, ai, ai + m - 1, aj, aj + kk - 1, gb,
                                      bi, bi + kk - 1, bj, bj + n - 1, gc, ci, ci + m - 1, cj,
                                      cj + n - 1);
                else
                    GA_Matmul_patch(ta, tb, alpha, beta, ga, ai, ai + m - 1, aj, aj + kk - 1, gb,
                                    bi, bi + kk - 1, bj, bj + n - 1, gc, ci, ci + m - 1, cj,
                                    cj + n - 1);
            }
            get2(gc, R, C, got);
            double sum;
            gat_check(same(t, got, c, R * C, 1e-5, &sum), label);
            if (k >= 2)
                gat_out("%s sum -", label); /* the peer has no value to compare */
            else
                gat_out("%s sum %.6g", label, sum);
            GA_Destroy(ga), GA_Destroy(gb), GA_Destroy(gc);
        }
        free(a), free(b), free(c), free(got);
    }
}

/* An operand that is a patch of C's own array is read as it was before the call (ga-compat aborted
 * with "C is also A"). Disjoint patches: GA 5.8.2 computes them so. Overlapping patches and
 * GA_Dgemm with C = A: GA 5.8.2 reads elements it has already written (named as its bug). */
static void matmul_alias(void)
{
    enum { N = 12 };
    const int t = C_DBL;
    double x[N * N], y[N * N], old[N * N], ref[N * N], got[N * N], sum;
    fill(t, (char *)x, N, N, 7), fill(t, (char *)y, N, N, 8);
    const double al[2] = {2, 0}, be[2] = {-1, 0};
    double alpha = 2, beta = -1;
    static const char *what[6] = {
        "A", "B", "A and B", "GA_Matmul_patch A", "overlapping A", "GA_Dgemm C = A"};
    for (int v = 0; v < 6; v++) {
        int gx = mk(t, N, N, v % 2, "X"), gy = mk(t, N, N, (v + 1) % 2, "Y");
        put2(gx, N, N, x), put2(gy, N, N, y);
        memcpy(old, x, sizeof x), memcpy(ref, x, sizeof x);
        opnd_t ox = {(const char *)old, N, 'N', 0, 0}, oy = {(const char *)y, N, 'N', 0, 0};
        int l0[2] = {0, 0}, h5[2] = {5, 5};
        switch (v) {
        case 0: /* X[6:11, 6:11] = X[0:5, 0:5] Y[0:5, 0:5] */
            refmm(t, 6, 6, 6, al, ox, oy, be, (char *)ref, N, 6, 6);
            NGA_Matmul_patch('N', 'N', &alpha, &beta, gx, l0, h5, gy, l0, h5, gx, (int[2]){6, 6},
                             (int[2]){11, 11});
            break;
        case 1: { /* X[6:11, 0:5] = Y[0:5, 0:5]^T X[0:5, 6:11] */
            opnd_t ot = {(const char *)y, N, 'T', 0, 0}, ob = {(const char *)old, N, 'N', 0, 6};
            refmm(t, 6, 6, 6, al, ot, ob, be, (char *)ref, N, 6, 0);
            NGA_Matmul_patch('T', 'N', &alpha, &beta, gy, l0, h5, gx, (int[2]){0, 6},
                             (int[2]){5, 11}, gx, (int[2]){6, 0}, (int[2]){11, 5});
            break;
        }
        case 2: { /* X[0:5, 6:11] = X[0:5, 0:5] X[6:11, 0:5]^T (bounds of op(B)) */
            opnd_t ob = {(const char *)old, N, 'T', 0, 6};
            refmm(t, 6, 6, 6, al, ox, ob, be, (char *)ref, N, 0, 6);
            NGA_Matmul_patch('N', 'T', &alpha, &beta, gx, l0, h5, gx, (int[2]){0, 6},
                             (int[2]){5, 11}, gx, (int[2]){0, 6}, (int[2]){5, 11});
            break;
        }
        case 3: /* Fortran view: C_F(6:11, 6:11) = A_F(0:5, 0:5) B_F(0:5, 0:5), A and C in X;
                 * in C's view X[6:11][6:11] = Y[0:5][0:5] X[0:5][0:5] */
            refmm(t, 6, 6, 6, al, oy, ox, be, (char *)ref, N, 6, 6);
            GA_Matmul_patch('N', 'N', &alpha, &beta, gx, 0, 5, 0, 5, gy, 0, 5, 0, 5, gx, 6, 11, 6,
                            11);
            break;
        case 4: /* X[3:8, 3:8] = X[0:5, 0:5] Y[0:5, 0:5] */
            refmm(t, 6, 6, 6, al, ox, oy, be, (char *)ref, N, 3, 3);
            NGA_Matmul_patch('N', 'N', &alpha, &beta, gx, l0, h5, gy, l0, h5, gx, (int[2]){3, 3},
                             (int[2]){8, 8});
            break;
        default: /* X = X Y, whole arrays */
            refmm(t, N, N, N, al, ox, oy, be, (char *)ref, N, 0, 0);
            GA_Dgemm('N', 'N', N, N, N, alpha, gx, gy, beta, gx);
        }
        get2(gx, N, N, got);
        char label[96];
        snprintf(label, sizeof label, "matmul alias %s %s", what[v], kname[v % 2]);
        int ok = same(t, got, ref, N * N, 1e-12, &sum);
        if (v < 4) {
            gat_check(ok, label);
            gat_out("%s sum %.6g", label, sum);
        } else {
            gat_check_gabug(ok, label, "an operand in C's own array is read after C is written");
        }
        GA_Destroy(gx), GA_Destroy(gy);
    }
    /* C overlaid on A (GA_Overlay: the same memory): C = A Y reads A as it was */
    int gx = mk(t, N, N, 0, "X"), gy = mk(t, N, N, 1, "Y"), gc = GA_Create_handle();
    GA_Set_data(gc, 2, (int[2]){N, N}, C_DBL);
    GA_Set_array_name(gc, "C on X");
    GA_Overlay(gc, gx);
    put2(gx, N, N, x), put2(gy, N, N, y);
    memcpy(old, x, sizeof x), memcpy(ref, x, sizeof x);
    refmm(t, N, N, N, al, (opnd_t){(const char *)old, N, 'N', 0, 0},
          (opnd_t){(const char *)y, N, 'N', 0, 0}, be, (char *)ref, N, 0, 0);
    GA_Dgemm('N', 'N', N, N, N, alpha, gx, gy, beta, gc);
    get2(gc, N, N, got);
    gat_check_gabug(same(t, got, ref, N * N, 1e-12, &sum), "matmul alias C overlaid on A",
                    "an operand in C's own memory is read after C is written");
    GA_Destroy(gc), GA_Destroy(gx), GA_Destroy(gy);
}

/* NGA_Matmul_patch on 3-D arrays: patches with two dimensions longer than 1 are matrices (as in
 * GA 5.8.2; ga-compat used to refuse arrays of other than 2 dimensions). A and B are planes of 3-D
 * arrays, C a 2-D array or a plane of a 3-D one; transposed operands' bounds in op's indices. */
static void put_plane(int g, int p, int r, int c, void *buf)
{
    int lo[3] = {p, 0, 0}, hi[3] = {p, r - 1, c - 1}, ld[2] = {r, c};
    NGA_Put(g, lo, hi, buf, ld);
}
static void get_plane(int g, int p, int r, int c, void *buf)
{
    int lo[3] = {p, 0, 0}, hi[3] = {p, r - 1, c - 1}, ld[2] = {r, c};
    NGA_Get(g, lo, hi, buf, ld);
}
static void matmul_nd(void)
{
    static const int pt[2] = {C_DBL, C_DCPL};
    static const char *pn[2] = {"double", "dcpl"};
    const int R = 9, C = 10;
    for (int pi = 0; pi < 2; pi++) {
        int t = pt[pi];
        size_t es = gat_tsize(t);
        char *a = malloc(es * R * C), *b = malloc(es * R * C), *c = malloc(es * R * C);
        char *got = malloc(es * R * C), label[128];
        fill(t, a, R, C, 4), fill(t, b, R, C, 5);
        for (int v = 0; v < 3; v++) {
            char ta = v == 1 ? 'T' : 'N', tb = v == 2 ? 'T' : 'N';
            int d3[3] = {3, R, C};
            int ga = NGA_Create(t, 3, d3, "A3", NULL), gb = NGA_Create(t, 3, d3, "B3", NULL);
            int gc = v == 2 ? NGA_Create(t, 3, d3, "C3", NULL) : mk(t, R, C, 0, "C");
            fill(t, c, R, C, 6);
            GA_Zero(ga), GA_Zero(gb), GA_Zero(gc);
            if (gat_me == 0) {
                put_plane(ga, 1, R, C, a), put_plane(gb, 2, R, C, b);
                if (v == 2)
                    put_plane(gc, 1, R, C, c);
            }
            if (v != 2)
                put2(gc, R, C, c); /* (collective) */
            GA_Sync();
            double al[2] = {2, gat_cplx(t) ? 1 : 0}, be[2] = {-1, 0};
            char alpha[16], beta[16];
            gat_setc(t, alpha, al[0], al[1]), gat_setc(t, beta, be[0], be[1]);
            int m = 5, n = 4, kk = 6; /* op(A) m x kk at (1, 2), op(B) kk x n at (3, 1) */
            int alo[3] = {1, 1, 2}, ahi[3] = {1, 1 + m - 1, 2 + kk - 1};
            int blo[3] = {2, 3, 1}, bhi[3] = {2, 3 + kk - 1, 1 + n - 1};
            int clo[3] = {1, 2, 5}, chi[3] = {1, 2 + m - 1, 5 + n - 1};
            opnd_t A = {a, C, ta, 1, 2}, B = {b, C, tb, 3, 1};
            refmm(t, m, n, kk, al, A, B, be, c, C, 2, 5);
            snprintf(label, sizeof label, "NGA_Matmul_patch 3-D %s %c%c %s", pn[pi], ta, tb,
                     v == 2 ? "into 3-D" : "into 2-D");
            if (v == 2)
                NGA_Matmul_patch(ta, tb, alpha, beta, ga, alo, ahi, gb, blo, bhi, gc, clo, chi);
            else
                NGA_Matmul_patch(ta, tb, alpha, beta, ga, alo, ahi, gb, blo, bhi, gc, clo + 1,
                                 chi + 1);
            if (v == 2)
                get_plane(gc, 1, R, C, got);
            else
                get2(gc, R, C, got);
            double sum;
            gat_check(same(t, got, c, R * C, 1e-5, &sum), label);
            gat_out("%s sum %.6g", label, sum);
            GA_Destroy(ga), GA_Destroy(gb), GA_Destroy(gc);
        }
        free(a), free(b), free(c), free(got);
    }
}

/* NGA_Matmul_patch with a 3-D operand whose patch is a vector (one dimension longer than 1): its
 * matrix's other dimension is the next one, and a transposed operand's bounds swap between the two,
 * as GA 5.8.2 reads them (op(A) 4 x 1 times B 1 x 3: C's rows are the elements of A used). */
static void matmul_vec(void)
{
    int d3[3] = {3, 6, 5}, db[2] = {1, 3}, dc[2] = {4, 3};
    int a = NGA_Create(C_DBL, 3, d3, "Av", NULL), b = NGA_Create(C_DBL, 2, db, "Bv", NULL);
    int c = NGA_Create(C_DBL, 2, dc, "Cv", NULL);
    if (gat_me == 0) {
        double buf[90], one[3] = {1, 1, 1};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 6; j++)
                for (int k = 0; k < 5; k++)
                    buf[(i * 6 + j) * 5 + k] = 100 * i + 10 * j + k;
        int lo[3] = {0, 0, 0}, hi[3] = {2, 5, 4}, ld[2] = {6, 5};
        int l2[2] = {0, 0}, h2[2] = {0, 2}, ld2 = 3;
        NGA_Put(a, lo, hi, buf, ld);
        NGA_Put(b, l2, h2, one, &ld2);
    }
    GA_Sync();
    for (int tr = 0; tr < 2; tr++) {
        double al = 1, be = 0, out[12];
        int alo[3] = {1, 1, 2}, ahi[3] = {1, 4, 2}, blo[2] = {0, 0}, bhi[2] = {0, 2};
        int clo[2] = {0, 0}, chi[2] = {3, 2}, ld = 3, ok = 1;
        NGA_Matmul_patch(tr ? 'T' : 'N', 'N', &al, &be, a, alo, ahi, b, blo, bhi, c, clo, chi);
        NGA_Get(c, clo, chi, out, &ld);
        for (int i = 0; i < 4; i++) /* N: A[1][1 + i][2]; T: A[1][2][1 + i] */
            ok &= out[i * 3] == (tr ? 121 + i : 112 + 10 * i) && out[i * 3 + 2] == out[i * 3];
        gat_check(ok, tr ? "NGA_Matmul_patch 3-D vector T" : "NGA_Matmul_patch 3-D vector N");
        gat_out("NGA_Matmul_patch 3-D vector %c: %g %g %g %g", tr ? 'T' : 'N', out[0], out[3],
                out[6], out[9]);
    }
    GA_Destroy(a), GA_Destroy(b), GA_Destroy(c);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    gat_out("# matops on %d ranks", gat_np);
    diag_ops();
    gat_section("diagonal operations");
    transpose_sym();
    gat_section("transpose, symmetrize");
    one_d();
    gat_section("1-d");
    gemm_tests();
    gat_section("gemm");
    matmul_patch();
    gat_section("matmul_patch");
    matmul_nd();
    matmul_vec();
    gat_section("matmul n-d, vector");
    matmul_alias();
    gat_section("matmul aliases");
    return gat_finish();
}
