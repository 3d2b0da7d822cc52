/* A seeded randomized differential test of ga-compat against GA 5.8.2: every round creates two
 * arrays of one random type (regular with random chunks, irregular, block-cyclic, ghosts; 1-4
 * dimensions, now and then up to 7 tiny ones), fills them and runs random valid operations on
 * random patches (put / get / acc, strided, periodic, scatter / gather, copy / add / scale / fill /
 * zero patches, dots, whole-array copy / add / scale / zero, select_elem, norms, read_inc,
 * element-wise patches, transpose). After each operation rank 0 prints a checksum of the array it
 * changed (or the scalar it returned); every value is a small integer (complex: small integer
 * parts), so sums are exact whatever the order. A serial shadow of each array (the reference) is
 * kept by every rank: a difference from it is printed as a comment "# REF ..." and the array is
 * reset to the reference, so one wrong operation does not spoil the rest of the round. A difference
 * from the reference fails the run (either build). The compared lines are the values the library
 * returned, so the run also differs from GA 5.8.2's where the two libraries disagree. Usage:
 * gat_fuzz [SEED [ROUNDS]] (or GAT_FUZZ_SEED, GAT_FUZZ_ROUNDS); GAT_FUZZ_TRACE=1 announces every
 * operation (a comment). The cases GA 5.8.2 aborts on or gets wrong are not generated (each skip
 * says why), unless GAT_FUZZ_ALL is set: then ga-compat runs them against the reference alone
 * (tests/ga/gat-fuzz-all.sh). Written 28 Nov 2026 after the hand-written tests; over ~80 seeds and
 * rank counts it found no ga-compat difference, and the GA 5.8.2 bugs skipped here. */
#include "gatest.h"

static unsigned long long rs; /* the random state: the same sequence on every rank */
static unsigned rnd(unsigned n)
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return n ? (unsigned)((rs >> 11) % n) : 0;
}
static int rin(int a, int b) /* a..b */
{
    return a + (int)rnd((unsigned)(b - a + 1));
}

enum { MAXN = 2400, MAXD = 7 };

typedef struct {
    int g, t, nd, dims[MAXD], n, kind; /* kind: 0 regular, 1 irregular, 2 block-cyclic, 3 ghosts */
    double *re, *im;                   /* the reference */
} arr_t;

static int ti;    /* the round's type index */
static int trace; /* GAT_FUZZ_TRACE set: each operation announced (a comment) before it runs */
/* GAT_FUZZ_ALL set (ga-compat against its reference alone: the output is not GA 5.8.2's): the
 * cases GA 5.8.2 fails on are generated too */
static int all;
static int round_no, op_no, nref, nops;
static char what[256];

/* Is either array one with ghosts? (GA 5.8.2's arithmetic on them is wrong now and then.) */
static int ghosty(const arr_t *a, const arr_t *b)
{
    return a->kind == 3 || b->kind == 3;
}

static int isint(int t)
{
    return t == C_INT || t == C_LONG || t == C_LONGLONG;
}

/* (re, im) rounded to type t */
static void conv(int t, double *re, double *im)
{
    if (isint(t))
        *re = (double)(long long)*re, *im = 0;
    else if (t == C_FLOAT)
        *re = (float)*re, *im = 0;
    else if (t == C_DBL)
        *im = 0;
    else if (t == C_SCPL)
        *re = (float)*re, *im = (float)*im;
}

static long lin(const arr_t *a, const int *sub)
{
    long k = 0;
    for (int d = 0; d < a->nd; d++)
        k = k * a->dims[d] + sub[d];
    return k;
}

/* iterate the multi-index i over the box of extents ext (nd dims): returns 0 at the end */
static int next(int nd, int *i, const int *ext)
{
    for (int d = nd - 1; d >= 0; d--) {
        if (++i[d] < ext[d])
            return 1;
        i[d] = 0;
    }
    return 0;
}

static void *ebuf(const arr_t *a, long n)
{
    return calloc((size_t)(n > 0 ? n : 1), gat_tsize(a->t));
}

/* a random small value of the array's type */
static void rval(int t, double *re, double *im)
{
    *re = rin(-9, 9);
    *im = gat_cplx(t) ? rin(-9, 9) : 0;
}
/* a random scalar (alpha) as element of type t; (re, im) its value */
static void ralpha(int t, void *p, double *re, double *im)
{
    *re = rin(-2, 3);
    *im = gat_cplx(t) ? rin(-2, 2) : 0;
    gat_setc(t, p, *re, *im);
}

static void cmul(double ar, double ai, double br, double bi, double *cr, double *ci)
{
    *cr = ar * br - ai * bi;
    *ci = ar * bi + ai * br;
}

/* rank 0 reads the whole array and prints its checksum; every element against the reference (a
 * difference is a comment, and the array is reset to the reference) */
static void check(arr_t *a)
{
    size_t es = gat_tsize(a->t);
    GA_Sync();
    if (gat_me == 0) {
        char *b = ebuf(a, a->n);
        int lo[MAXD], hi[MAXD], ld[MAXD];
        for (int d = 0; d < a->nd; d++) {
            lo[d] = 0, hi[d] = a->dims[d] - 1;
            if (d + 1 < a->nd)
                ld[d] = a->dims[d + 1];
        }
        NGA_Get(a->g, lo, hi, b, ld);
        double s = 0, w = 0, si = 0, wi = 0;
        int bad = -1, nbad = 0;
        for (long k = 0; k < a->n; k++) {
            double re, im;
            gat_getc(a->t, b + es * (size_t)k, &re, &im);
            s += re, si += im, w += re * (double)(k % 97 + 1), wi += im * (double)(k % 89 + 1);
            if (re != a->re[k] || im != a->im[k]) {
                if (bad < 0)
                    bad = (int)k;
                nbad++;
            }
        }
        gat_out("r%d.%d %s: sum %.15g %.15g wsum %.15g %.15g", round_no, op_no, what, s, si, w, wi);
        if (nbad) {
            double re, im;
            gat_getc(a->t, b + es * (size_t)bad, &re, &im);
            gat_out("# REF r%d.%d %s: %d elements differ from the reference, first at %d: "
                    "%.15g %.15g, want %.15g %.15g",
                    round_no, op_no, what, nbad, bad, re, im, a->re[bad], a->im[bad]);
            nref++;
            for (long k = 0; k < a->n; k++)
                gat_setc(a->t, b + es * (size_t)k, a->re[k], a->im[k]);
            NGA_Put(a->g, lo, hi, b, ld);
        }
        free(b);
    }
    GA_Sync();
}

/* a scalar result: printed; against the reference (a comment when it differs) */
static void scalar(const char *name, double re, double im, double wre, double wim)
{
    gat_out("r%d.%d %s: %s = %.15g %.15g", round_no, op_no, what, name, re, im);
    if (re != wre || im != wim) {
        gat_out("# REF r%d.%d %s: %s = %.15g %.15g, want %.15g %.15g", round_no, op_no, what, name,
                re, im, wre, wim);
        nref++;
    }
}

/* a buffer read by every rank (get, gather ...) against the values want (n elements): agreed */
static void check_buf(const arr_t *a, const char *buf, const double *wr, const double *wi, long n)
{
    size_t es = gat_tsize(a->t);
    double s = 0, w = 0, si = 0, ws = 0;
    int bad = 0;
    for (long k = 0; k < n; k++) {
        double re, im;
        gat_getc(a->t, buf + es * (size_t)k, &re, &im);
        s += re + 3 * im, w += (re + 5 * im) * (double)(k % 31 + 1);
        si += wr[k] + 3 * wi[k], ws += (wr[k] + 5 * wi[k]) * (double)(k % 31 + 1);
        bad |= re != wr[k] || im != wi[k];
    }
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    gat_out("r%d.%d %s: read %ld sum %.15g wsum %.15g", round_no, op_no, what, n, s, w);
    if (allbad) {
        gat_out("# REF r%d.%d %s: a rank read values other than the reference (rank 0: sum %.15g "
                "wsum %.15g, want %.15g %.15g)",
                round_no, op_no, what, s, w, si, ws);
        nref++;
    }
}

static const char *kname[4] = {"regular", "irregular", "block-cyclic", "ghosts"};

/* a new array of type t: dims given, distribution random */
static void create(arr_t *a, int t, int nd, const int *dims, int allow_bc)
{
    memset(a, 0, sizeof *a);
    a->t = t, a->nd = nd, a->n = 1;
    for (int d = 0; d < nd; d++)
        a->dims[d] = dims[d], a->n *= dims[d];
    a->re = calloc((size_t)a->n, sizeof(double));
    a->im = calloc((size_t)a->n, sizeof(double));
    int k = (int)rnd(4);
    int unit = 0;
    for (int d = 0; d < nd; d++)
        unit |= dims[d] == 1;
    if (k == 2 && (!allow_bc || (!all && (a->n < gat_np || unit || nd > 2)))) /* (GA fails) */
        k = 0;
    char desc[200];
    int p = snprintf(desc, sizeof desc, "%s %dd [", gat_tname[ti], nd);
    for (int d = 0; d < nd; d++)
        p += snprintf(desc + p, sizeof desc - (size_t)p, "%s%d", d ? " " : "", dims[d]);
    p += snprintf(desc + p, sizeof desc - (size_t)p, "] ");
    if (k == 0) {
        int chunk[MAXD], nochunk = rnd(4) == 0;
        for (int d = 0; d < nd; d++) {
            int c = rin(-1, 3);
            chunk[d] = c <= 0 ? c : c == 1 ? rin(1, dims[d]) : c == 2 ? dims[d] : -1;
        }
        a->g = NGA_Create(t, nd, (int *)dims, "fuzz", nochunk ? NULL : chunk);
        p += snprintf(desc + p, sizeof desc - (size_t)p, "regular chunk");
        for (int d = 0; d < nd; d++)
            p += snprintf(desc + p, sizeof desc - (size_t)p, " %d", nochunk ? -9 : chunk[d]);
    } else if (k == 1) {
        int nb[MAXD], map[MAXD * 8], nm = 0, tot = 1;
        for (int d = 0; d < nd; d++) {
            int m = rin(1, gat_np);
            if (m > dims[d])
                m = dims[d];
            if (tot * m > gat_np)
                m = gat_np / tot;
            if (m < 1)
                m = 1;
            nb[d] = m, tot *= m;
            /* m distinct starts in [0, dims), the first 0 */
            int st[8];
            st[0] = 0;
            int c = 1;
            while (c < m) {
                int v = rin(1, dims[d] - 1), dup = 0;
                for (int q = 0; q < c; q++)
                    dup |= st[q] == v;
                if (!dup)
                    st[c++] = v;
            }
            for (int x = 1; x < m; x++) /* sort */
                for (int y = x; y > 0 && st[y - 1] > st[y]; y--) {
                    int tmp = st[y];
                    st[y] = st[y - 1], st[y - 1] = tmp;
                }
            for (int q = 0; q < m; q++)
                map[nm++] = st[q];
        }
        a->g = NGA_Create_irreg(t, nd, (int *)dims, "fuzz", nb, map);
        p += snprintf(desc + p, sizeof desc - (size_t)p, "irregular map");
        for (int q = 0; q < nm; q++)
            p += snprintf(desc + p, sizeof desc - (size_t)p, " %d", map[q]);
    } else if (k == 2) {
        int blk[MAXD], pg[MAXD], grid = rnd(2);
        long nblk = 1;
        for (int d = 0; d < nd; d++) {
            blk[d] = rin(d == nd - 1 && !all ? 2 : 1, dims[d] < 6 ? dims[d] : 6);
            nblk *= (dims[d] + blk[d] - 1) / blk[d];
        }
        if (nblk < gat_np && !all) /* (GA 5.8.2 fails on ranks without a block) */
            for (int d = 0; d < nd; d++)
                blk[d] = 1;
        a->g = GA_Create_handle();
        GA_Set_data(a->g, nd, (int *)dims, t);
        GA_Set_array_name(a->g, "fuzz");
        p += snprintf(desc + p, sizeof desc - (size_t)p, "block-cyclic%s blk",
                      grid ? " proc grid" : "");
        for (int d = 0; d < nd; d++)
            p += snprintf(desc + p, sizeof desc - (size_t)p, " %d", blk[d]);
        if (grid) {
            int rest = gat_np, gd = (int)rnd((unsigned)nd);
            for (int d = 0; d < nd; d++)
                pg[d] = 1;
            pg[gd] = rest;
            p += snprintf(desc + p, sizeof desc - (size_t)p, " grid");
            for (int d = 0; d < nd; d++)
                p += snprintf(desc + p, sizeof desc - (size_t)p, " %d", pg[d]);
            GA_Set_block_cyclic_proc_grid(a->g, blk, pg);
        } else
            GA_Set_block_cyclic(a->g, blk);
        GA_Allocate(a->g);
    } else {
        /* widths no wider than any block (GA 5.8.2 aborts otherwise, and when a rank owns no
         * block): the distribution of a plain array of the dims tells */
        int probe = NGA_Create(t, nd, (int *)dims, "probe", NULL);
        int minext[MAXD], empty = 0;
        for (int d = 0; d < nd; d++)
            minext[d] = 1 << 30;
        for (int q = 0; q < gat_np; q++) {
            int lo[MAXD], hi[MAXD];
            NGA_Distribution(probe, q, lo, hi);
            for (int d = 0; d < nd; d++) {
                int e = hi[d] - lo[d] + 1;
                if (e <= 0)
                    empty = 1;
                if (e < minext[d])
                    minext[d] = e;
            }
        }
        GA_Destroy(probe);
        if (empty) {
            a->g = NGA_Create(t, nd, (int *)dims, "fuzz", NULL);
            p += snprintf(desc + p, sizeof desc - (size_t)p, "regular (no ghosts)");
            k = 0;
        } else {
            int w[MAXD];
            for (int d = 0; d < nd; d++) {
                w[d] = rin(0, 2);
                if (w[d] > minext[d])
                    w[d] = minext[d];
                if (w[d] >= dims[d] && !all) /* (GA 5.8.2 aborts: a ghost region all around) */
                    w[d] = dims[d] - 1;
            }
            a->g = NGA_Create_ghosts(t, nd, (int *)dims, w, "fuzz", NULL);
            p += snprintf(desc + p, sizeof desc - (size_t)p, "ghosts width");
            for (int d = 0; d < nd; d++)
                p += snprintf(desc + p, sizeof desc - (size_t)p, " %d", w[d]);
        }
    }
    a->kind = k;
    gat_out("r%d create %s", round_no, desc);
    /* fill: GA_Fill of a value, or rank 0's put of random values */
    if (rnd(4) == 0) {
        double re, im;
        char v[16];
        rval(t, &re, &im);
        gat_setc(t, v, re, im);
        GA_Fill(a->g, v);
        for (long q = 0; q < a->n; q++)
            a->re[q] = re, a->im[q] = im;
    } else {
        char *b = ebuf(a, a->n);
        for (long q = 0; q < a->n; q++) {
            rval(t, &a->re[q], &a->im[q]);
            gat_setc(t, b + gat_tsize(t) * (size_t)q, a->re[q], a->im[q]);
        }
        GA_Zero(a->g);
        GA_Sync();
        if (gat_me == 0) {
            int lo[MAXD], hi[MAXD], ld[MAXD];
            for (int d = 0; d < nd; d++) {
                lo[d] = 0, hi[d] = dims[d] - 1;
                if (d + 1 < nd)
                    ld[d] = dims[d + 1];
            }
            NGA_Put(a->g, lo, hi, b, ld);
        }
        free(b);
    }
    snprintf(what, sizeof what, "fill");
    check(a);
}

static void destroy(arr_t *a)
{
    GA_Destroy(a->g);
    free(a->re);
    free(a->im);
}

/* a random patch of a: lo, hi; ext its extents, returns the element count */
static long rpatch(const arr_t *a, int *lo, int *hi, int *ext)
{
    long n = 1;
    for (int d = 0; d < a->nd; d++) {
        int x = rin(0, a->dims[d] - 1), y = rin(0, a->dims[d] - 1);
        if (rnd(5) == 0)
            x = 0, y = a->dims[d] - 1;
        lo[d] = x < y ? x : y, hi[d] = x < y ? y : x;
        ext[d] = hi[d] - lo[d] + 1;
        n *= ext[d];
    }
    return n;
}
/* a random patch of a with the extents ext (1 if it fits) */
static int fitpatch(const arr_t *a, const int *ext, int *lo, int *hi)
{
    for (int d = 0; d < a->nd; d++) {
        if (ext[d] > a->dims[d])
            return 0;
        lo[d] = rin(0, a->dims[d] - ext[d]);
        hi[d] = lo[d] + ext[d] - 1;
    }
    return 1;
}

static int pdesc(char *s, size_t sz, int nd, const int *lo, const int *hi)
{
    int p = 0;
    for (int d = 0; d < nd; d++)
        p += snprintf(s + p, sz - (size_t)p, "%s%d:%d", d ? "," : "[", lo[d], hi[d]);
    p += snprintf(s + p, sz - (size_t)p, "]");
    return p;
}

/* the dense lds of a buffer of extents ext */
static void dense_ld(int nd, const int *ext, int *ld)
{
    for (int d = 0; d + 1 < nd; d++)
        ld[d] = ext[d + 1];
}

static void apply_acc(int t, double *re, double *im, double vr, double vi, double ar, double ai)
{
    double pr, pi;
    cmul(vr, vi, ar, ai, &pr, &pi);
    *re += pr, *im += pi;
    conv(t, re, im);
}

/* Element k of the buffer of a put (which 0), get (1) or accumulate (2, by every rank) at the
 * array's element q: for a put or accumulate a random value into buf and the reference updated, for
 * a get the expected value into wr / wi. */
static void model_elem(arr_t *a, int which, char *buf, long k, long q, double *wr, double *wi,
                       double ar, double ai)
{
    double re, im;
    rval(a->t, &re, &im);
    size_t es = gat_tsize(a->t);
    if (which == 1) {
        wr[k] = a->re[q], wi[k] = a->im[q];
        return;
    }
    gat_setc(a->t, buf + es * (size_t)k, re, im);
    if (which == 0)
        a->re[q] = re, a->im[q] = im;
    else
        apply_acc(a->t, &a->re[q], &a->im[q], re * gat_np, im * gat_np, ar, ai);
}

static int has_longlong_acc_bug(int t)
{
#ifdef GAT_PEER
    return t == C_LONGLONG; /* GA 5.8.2 on ARMCI-MPI aborts on long long accumulates */
#else
    return t == C_LONGLONG && !all;
#endif
}

/* one random operation on a (and b, the round's other array, of the same type) */
static void op(arr_t *a, arr_t *b)
{
    int t = a->t;
    size_t es = gat_tsize(t);
    int lo[MAXD], hi[MAXD], ext[MAXD], ld[MAXD], sub[MAXD], i[MAXD];
    char pd[128];
    op_no++;
    nops++;
    int same = a->nd == b->nd;
    for (int d = 0; same && d < a->nd; d++)
        same = a->dims[d] == b->dims[d];
    int kind = (int)rnd(27);
    if (trace)
        gat_out("# r%d.%d: operation %d on %s array %d", round_no, op_no, kind, kname[a->kind],
                a->g);
    GA_Sync();
    double big = 0;
    for (long q = 0; q < a->n; q++)
        big = fmax(big, fabs(a->re[q]) + fabs(a->im[q]));
    if (big > 3000) { /* values kept small: a's elements put anew */
        snprintf(what, sizeof what, "refill");
        char *buf = ebuf(a, a->n);
        for (long q = 0; q < a->n; q++) {
            rval(t, &a->re[q], &a->im[q]);
            gat_setc(t, buf + es * (size_t)q, a->re[q], a->im[q]);
        }
        for (int d = 0; d < a->nd; d++)
            lo[d] = 0, hi[d] = a->dims[d] - 1, ext[d] = a->dims[d];
        dense_ld(a->nd, ext, ld);
        if (gat_me == 0)
            NGA_Put(a->g, lo, hi, buf, ld);
        free(buf);
        check(a);
        return;
    }
    switch (kind) {
    case 0:
    case 1: { /* put by one rank */
        long n = rpatch(a, lo, hi, ext);
        int who = (int)rnd((unsigned)gat_np);
        char *buf = ebuf(a, n);
        memset(i, 0, sizeof i);
        long k = 0;
        do {
            double re, im;
            rval(t, &re, &im);
            gat_setc(t, buf + es * (size_t)k, re, im);
            for (int d = 0; d < a->nd; d++)
                sub[d] = lo[d] + i[d];
            a->re[lin(a, sub)] = re, a->im[lin(a, sub)] = im;
            k++;
        } while (next(a->nd, i, ext));
        dense_ld(a->nd, ext, ld);
        if (gat_me == who)
            NGA_Put(a->g, lo, hi, buf, ld);
        pdesc(pd, sizeof pd, a->nd, lo, hi);
        snprintf(what, sizeof what, "put %s by %d", pd, who);
        free(buf);
        check(a);
        break;
    }
    case 2: { /* get by every rank, into a buffer with a wider ld */
        long n = rpatch(a, lo, hi, ext);
        int pad = rin(0, 2);
        long big = n;
        if (a->nd > 1)
            big = n / ext[a->nd - 1] * (ext[a->nd - 1] + pad);
        char *buf = ebuf(a, big), *dense = ebuf(a, n);
        double *wr = malloc(sizeof(double) * (size_t)n), *wi = malloc(sizeof(double) * (size_t)n);
        dense_ld(a->nd, ext, ld);
        if (a->nd > 1)
            ld[a->nd - 2] += pad;
        NGA_Get(a->g, lo, hi, buf, ld);
        memset(i, 0, sizeof i);
        long k = 0;
        do {
            for (int d = 0; d < a->nd; d++)
                sub[d] = lo[d] + i[d];
            wr[k] = a->re[lin(a, sub)], wi[k] = a->im[lin(a, sub)];
            long off = 0;
            for (int d = 0; d < a->nd; d++)
                off = off * (d == a->nd - 1 && a->nd > 1 ? ext[d] + pad : ext[d]) + i[d];
            memcpy(dense + es * (size_t)k, buf + es * (size_t)off, es);
            k++;
        } while (next(a->nd, i, ext));
        pdesc(pd, sizeof pd, a->nd, lo, hi);
        snprintf(what, sizeof what, "get %s pad %d", pd, pad);
        check_buf(a, dense, wr, wi, n);
        free(buf), free(dense), free(wr), free(wi);
        break;
    }
    case 3:
    case 4: { /* acc by every rank, (rank + 1) x the buffer */
        if (has_longlong_acc_bug(t))
            goto scale;
        long n = rpatch(a, lo, hi, ext);
        char al[16], *buf = ebuf(a, n);
        double ar, ai;
        ralpha(t, al, &ar, &ai);
        double f = gat_np * (gat_np + 1) / 2;
        memset(i, 0, sizeof i);
        long k = 0;
        do {
            double re, im;
            rval(t, &re, &im);
            gat_setc(t, buf + es * (size_t)k, re * (gat_me + 1), im * (gat_me + 1));
            for (int d = 0; d < a->nd; d++)
                sub[d] = lo[d] + i[d];
            long q = lin(a, sub);
            apply_acc(t, &a->re[q], &a->im[q], re * f, im * f, ar, ai);
            k++;
        } while (next(a->nd, i, ext));
        dense_ld(a->nd, ext, ld);
        NGA_Acc(a->g, lo, hi, buf, ld, al);
        pdesc(pd, sizeof pd, a->nd, lo, hi);
        snprintf(what, sizeof what, "acc %s alpha %g %g", pd, ar, ai);
        free(buf);
        check(a);
        break;
    }
    case 5:
    case 6: {     /* strided put / get / acc */
        if (!all) /* (GA 5.8.2 on ARMCI-MPI asserts on strided access of block-cyclic arrays, and
                   * its strided puts, gets and accumulates of other arrays are wrong now and then:
                   * e.g. 8 elements of a put [2:2,1:3,3:3,6:11] skip 1 1 1 2 of a 4-D array) */
            goto scale;
        int skip[MAXD], cnt[MAXD];
        long n = 1;
        for (int d = 0; d < a->nd; d++) {
            lo[d] = rin(0, a->dims[d] - 1);
            hi[d] = rin(lo[d], a->dims[d] - 1);
            skip[d] = rin(1, 4);
            cnt[d] = (hi[d] - lo[d]) / skip[d] + 1;
            if (cnt[d] == 1 && !all) /* (ARMCI-MPI asserts on a skip beyond one element) */
                skip[d] = 1, hi[d] = lo[d];
            n *= cnt[d];
        }
        int which = (int)rnd(3);
        if (which == 2 && has_longlong_acc_bug(t))
            which = 0;
        if (cnt[a->nd - 1] == 1 && a->nd > 1 && !all) {
            goto scale; /* (ARMCI-MPI asserts on a single element in the last dimension) */
        }
        char al[16], *buf = ebuf(a, n);
        double ar = 1, ai = 0;
        if (which == 2)
            ralpha(t, al, &ar, &ai);
        double *wr = malloc(sizeof(double) * (size_t)n), *wi = malloc(sizeof(double) * (size_t)n);
        int who = (int)rnd((unsigned)gat_np);
        memset(i, 0, sizeof i);
        long k = 0;
        do {
            for (int d = 0; d < a->nd; d++)
                sub[d] = lo[d] + i[d] * skip[d];
            model_elem(a, which, buf, k++, lin(a, sub), wr, wi, ar, ai);
        } while (next(a->nd, i, cnt));
        dense_ld(a->nd, cnt, ld);
        int p = pdesc(pd, sizeof pd, a->nd, lo, hi);
        p += snprintf(pd + p, sizeof pd - (size_t)p, " skip");
        for (int d = 0; d < a->nd; d++)
            p += snprintf(pd + p, sizeof pd - (size_t)p, " %d", skip[d]);
        if (trace)
            gat_out("# strided %d %s", which, pd);
        if (which == 0) {
            if (gat_me == who)
                NGA_Strided_put(a->g, lo, hi, skip, buf, ld);
            snprintf(what, sizeof what, "strided put %s by %d", pd, who);
            check(a);
        } else if (which == 1) {
            NGA_Strided_get(a->g, lo, hi, skip, buf, ld);
            snprintf(what, sizeof what, "strided get %s", pd);
            check_buf(a, buf, wr, wi, n);
        } else {
            NGA_Strided_acc(a->g, lo, hi, skip, buf, ld, al);
            snprintf(what, sizeof what, "strided acc %s alpha %g %g", pd, ar, ai);
            check(a);
        }
        free(buf), free(wr), free(wi);
        break;
    }
    case 7:
    case 8: { /* periodic put / get / acc: indices out of range, wrapping */
        int which = (int)rnd(3);
        if (which == 2 && has_longlong_acc_bug(t))
            which = 1;
        long n = 1;
        for (int d = 0; d < a->nd; d++) {
            /* at most the extent, starting at most one extent out of range */
            int e = rin(1, all && which == 1 ? 3 * a->dims[d] : a->dims[d]);
            lo[d] =
                all ? rin(-3 * a->dims[d], 3 * a->dims[d]) : rin(-a->dims[d], 2 * a->dims[d] - e);
            hi[d] = lo[d] + e - 1;
            ext[d] = e;
            n *= e;
        }
        char al[16], *buf = ebuf(a, n);
        double ar = 1, ai = 0;
        if (which == 2)
            ralpha(t, al, &ar, &ai);
        double *wr = malloc(sizeof(double) * (size_t)n), *wi = malloc(sizeof(double) * (size_t)n);
        int who = (int)rnd((unsigned)gat_np);
        memset(i, 0, sizeof i);
        long k = 0;
        do {
            for (int d = 0; d < a->nd; d++)
                sub[d] = ((lo[d] + i[d]) % a->dims[d] + a->dims[d]) % a->dims[d];
            model_elem(a, which, buf, k++, lin(a, sub), wr, wi, ar, ai);
        } while (next(a->nd, i, ext));
        dense_ld(a->nd, ext, ld);
        pdesc(pd, sizeof pd, a->nd, lo, hi);
        if (which == 0) {
            if (gat_me == who)
                NGA_Periodic_put(a->g, lo, hi, buf, ld);
            snprintf(what, sizeof what, "periodic put %s by %d", pd, who);
            check(a);
        } else if (which == 1) {
            NGA_Periodic_get(a->g, lo, hi, buf, ld);
            snprintf(what, sizeof what, "periodic get %s", pd);
            check_buf(a, buf, wr, wi, n);
        } else {
            NGA_Periodic_acc(a->g, lo, hi, buf, ld, al);
            snprintf(what, sizeof what, "periodic acc %s alpha %g %g", pd, ar, ai);
            check(a);
        }
        free(buf), free(wr), free(wi);
        break;
    }
    case 9:
    case 10: { /* scatter (distinct elements) / gather (duplicates) / scatter_acc (duplicates) */
        int which = (int)rnd(3);
        if (which == 2 && has_longlong_acc_bug(t))
            which = 1;
        int n = rin(1, a->n < 60 ? a->n : 60);
        int *subs = malloc(sizeof(int) * (size_t)(n * a->nd)), **sp = malloc(sizeof(int *) * n);
        long *used = malloc(sizeof(long) * (size_t)n);
        char al[16], *buf = ebuf(a, n);
        double ar = 1, ai = 0;
        if (which == 2)
            ralpha(t, al, &ar, &ai);
        double *wr = malloc(sizeof(double) * (size_t)n), *wi = malloc(sizeof(double) * (size_t)n);
        for (int k = 0; k < n; k++) {
            long q;
            for (;;) {
                q = (long)rnd((unsigned)a->n);
                if (which != 0)
                    break;
                int dup = 0;
                for (int x = 0; x < k; x++)
                    dup |= used[x] == q;
                if (!dup)
                    break;
            }
            if (which != 0 && k > 0 && rnd(4) == 0)
                q = used[rnd((unsigned)k)]; /* a duplicate */
            used[k] = q;
            long r = q;
            for (int d = a->nd - 1; d >= 0; d--)
                subs[k * a->nd + d] = (int)(r % a->dims[d]), r /= a->dims[d];
            sp[k] = subs + k * a->nd;
            double re, im;
            rval(t, &re, &im);
            if (which == 0) {
                gat_setc(t, buf + es * (size_t)k, re, im);
                a->re[q] = re, a->im[q] = im;
            } else if (which == 1) {
                wr[k] = a->re[q], wi[k] = a->im[q];
            } else {
                gat_setc(t, buf + es * (size_t)k, re, im);
                apply_acc(t, &a->re[q], &a->im[q], re * gat_np, im * gat_np, ar, ai);
            }
        }
        int who = (int)rnd((unsigned)gat_np);
        if (which == 0) {
            if (gat_me == who)
                NGA_Scatter(a->g, buf, sp, n);
            snprintf(what, sizeof what, "scatter %d by %d", n, who);
            check(a);
        } else if (which == 1) {
            NGA_Gather(a->g, buf, sp, n);
            snprintf(what, sizeof what, "gather %d", n);
            check_buf(a, buf, wr, wi, n);
        } else {
            NGA_Scatter_acc(a->g, buf, sp, n, al);
            snprintf(what, sizeof what, "scatter_acc %d alpha %g %g", n, ar, ai);
            check(a);
        }
        free(subs), free(sp), free(used), free(buf), free(wr), free(wi);
        break;
    }
    case 11:
    case 12: { /* copy_patch a -> b: same shape, reshaped (same count), or transposed (2-D) */
        int blo[MAXD], bhi[MAXD], bext[MAXD];
        int mode = (int)rnd(3); /* 0 same shape, 1 reshape, 2 transpose */
        if (mode == 2 && !(a->nd == 2 && b->nd == 2 && ((a->kind != 2 && b->kind != 2) || all)))
            mode = 0; /* (GA 5.8.2: transposes of block-cyclic data wrong) */
        long n = 0;
        if (mode == 0) {
            if (!same && a->nd != b->nd)
                mode = 1;
            else {
                rpatch(a, lo, hi, ext);
                if (!fitpatch(b, ext, blo, bhi))
                    mode = 1;
            }
        }
        if (mode == 1 && (a->kind == 2 || b->kind == 2) && !all) {
            snprintf(what, sizeof what, "copy_patch (no reshape of block-cyclic)");
            gat_out("r%d.%d %s", round_no, op_no, what);
            break; /* (GA 5.8.2: "Change in shape not supported for block-cyclic data") */
        }
        if (mode == 1) {
            /* a patch of b, then a patch of a with the same count: a run of a's last dim */
            n = rpatch(b, blo, bhi, bext);
            if (n > a->dims[a->nd - 1] || rnd(2)) {
                /* b's patch: a run along its last dim that a has room for */
                for (int d = 0; d < b->nd; d++)
                    if (d < b->nd - 1)
                        bhi[d] = blo[d], bext[d] = 1;
                n = bext[b->nd - 1];
                int room = a->n < 40 ? a->n : 40;
                if (n > room)
                    bhi[b->nd - 1] = blo[b->nd - 1] + room - 1, n = room, bext[b->nd - 1] = room;
            }
            /* a's patch of n elements: factor n over a's dims from the last one */
            long r = n;
            for (int d = a->nd - 1; d >= 0; d--) {
                int e = 1;
                if (d == 0)
                    e = (int)r;
                else
                    for (int c = a->dims[d] < r ? a->dims[d] : (int)r; c >= 1; c--)
                        if (r % c == 0) {
                            e = c;
                            break;
                        }
                ext[d] = e, r /= e;
            }
            if (ext[0] > a->dims[0]) { /* no fit: copy b's patch shape */
                mode = 3;
            } else {
                for (int d = 0; d < a->nd; d++)
                    lo[d] = rin(0, a->dims[d] - ext[d]), hi[d] = lo[d] + ext[d] - 1;
            }
        }
        if (mode == 3) {
            snprintf(what, sizeof what, "copy_patch (none)");
            gat_out("r%d.%d %s", round_no, op_no, what);
            break;
        }
        if (mode == 2) {
            rpatch(a, lo, hi, ext);
            int te[2] = {ext[1], ext[0]};
            if (!fitpatch(b, te, blo, bhi)) {
                te[0] = ext[1] < b->dims[0] ? ext[1] : b->dims[0];
                te[1] = ext[0] < b->dims[1] ? ext[0] : b->dims[1];
                hi[0] = lo[0] + te[1] - 1, hi[1] = lo[1] + te[0] - 1;
                ext[0] = te[1], ext[1] = te[0];
                fitpatch(b, te, blo, bhi);
            }
        }
        /* the reference: a's patch elements in order into b's patch in order (transposed: b's
         * (j, i) from a's (i, j)) */
        long na = 1, nb = 1;
        for (int d = 0; d < a->nd; d++)
            ext[d] = hi[d] - lo[d] + 1, na *= ext[d];
        for (int d = 0; d < b->nd; d++)
            bext[d] = bhi[d] - blo[d] + 1, nb *= bext[d];
        if (na != nb) {
            gat_out("# internal: copy_patch counts %ld %ld", na, nb);
            break;
        }
        double *vr = malloc(sizeof(double) * (size_t)na), *vi = malloc(sizeof(double) * (size_t)na);
        memset(i, 0, sizeof i);
        long k = 0;
        do {
            for (int d = 0; d < a->nd; d++)
                sub[d] = lo[d] + i[d];
            vr[k] = a->re[lin(a, sub)], vi[k] = a->im[lin(a, sub)];
            k++;
        } while (next(a->nd, i, ext));
        memset(i, 0, sizeof i);
        k = 0;
        do {
            for (int d = 0; d < b->nd; d++)
                sub[d] = blo[d] + i[d];
            long src = mode == 2 ? (long)i[1] * ext[1] + i[0] : k;
            b->re[lin(b, sub)] = vr[src], b->im[lin(b, sub)] = vi[src];
            k++;
        } while (next(b->nd, i, bext));
        free(vr), free(vi);
        NGA_Copy_patch(mode == 2 ? 'T' : 'N', a->g, lo, hi, b->g, blo, bhi);
        int p = pdesc(pd, sizeof pd, a->nd, lo, hi);
        p += snprintf(pd + p, sizeof pd - (size_t)p, " -> ");
        pdesc(pd + p, sizeof pd - (size_t)p, b->nd, blo, bhi);
        snprintf(what, sizeof what, "copy_patch %c %s", mode == 2 ? 'T' : 'N', pd);
        check(b);
        break;
    }
    case 13: { /* add_patch: b's patch = alpha a's patch + beta (a's other patch or b's patch) */
        if (!(a->nd == b->nd) || (ghosty(a, b) && !all)) /* (GA 5.8.2: wrong with ghosts) */
            goto scale;
        int mext[MAXD], alo[MAXD], ahi[MAXD], clo[MAXD], chi[MAXD], olo[MAXD], ohi[MAXD];
        for (int d = 0; d < a->nd; d++) {
            int m = a->dims[d] < b->dims[d] ? a->dims[d] : b->dims[d];
            mext[d] = rin(1, m);
        }
        fitpatch(a, mext, alo, ahi);
        fitpatch(b, mext, clo, chi);
        int other_b = (int)rnd(2); /* the second operand: b's own patch (in place) or a's */
        if (!other_b)
            fitpatch(a, mext, olo, ohi);
        char al[16], be[16];
        double ar, ai, br, bi;
        ralpha(t, al, &ar, &ai);
        ralpha(t, be, &br, &bi);
        memset(i, 0, sizeof i);
        do {
            int sa[MAXD], sc[MAXD], so[MAXD];
            for (int d = 0; d < a->nd; d++)
                sa[d] = alo[d] + i[d], sc[d] = clo[d] + i[d], so[d] = olo[d] + i[d];
            long qa = lin(a, sa), qc = lin(b, sc);
            double xr = a->re[qa], xi = a->im[qa];
            double yr = other_b ? b->re[qc] : a->re[lin(a, so)];
            double yi = other_b ? b->im[qc] : a->im[lin(a, so)];
            double p1r, p1i, p2r, p2i;
            cmul(ar, ai, xr, xi, &p1r, &p1i);
            cmul(br, bi, yr, yi, &p2r, &p2i);
            b->re[qc] = p1r + p2r, b->im[qc] = p1i + p2i;
            conv(t, &b->re[qc], &b->im[qc]);
        } while (next(a->nd, i, mext));
        if (other_b)
            NGA_Add_patch(al, a->g, alo, ahi, be, b->g, clo, chi, b->g, clo, chi);
        else
            NGA_Add_patch(al, a->g, alo, ahi, be, a->g, olo, ohi, b->g, clo, chi);
        int p = pdesc(pd, sizeof pd, a->nd, alo, ahi);
        p += snprintf(pd + p, sizeof pd - (size_t)p, " + %s ", other_b ? "c" : "a");
        p += pdesc(pd + p, sizeof pd - (size_t)p, a->nd, other_b ? clo : olo, other_b ? chi : ohi);
        p += snprintf(pd + p, sizeof pd - (size_t)p, " -> ");
        pdesc(pd + p, sizeof pd - (size_t)p, b->nd, clo, chi);
        snprintf(what, sizeof what, "add_patch %g %g, %g %g: %s", ar, ai, br, bi, pd);
        check(b);
        break;
    }
    case 14:
    scale : { /* scale / fill / zero patch */
        rpatch(a, lo, hi, ext);
        int which = (int)rnd(3);
        char v[16];
        double vr = 0, vi = 0;
        if (which == 0)
            ralpha(t, v, &vr, &vi);
        else if (which == 1) {
            rval(t, &vr, &vi);
            gat_setc(t, v, vr, vi);
        }
        memset(i, 0, sizeof i);
        do {
            for (int d = 0; d < a->nd; d++)
                sub[d] = lo[d] + i[d];
            long q = lin(a, sub);
            if (which == 0) {
                double r, m;
                cmul(a->re[q], a->im[q], vr, vi, &r, &m);
                a->re[q] = r, a->im[q] = m;
                conv(t, &a->re[q], &a->im[q]);
            } else
                a->re[q] = vr, a->im[q] = vi;
        } while (next(a->nd, i, ext));
        pdesc(pd, sizeof pd, a->nd, lo, hi);
        if (which == 0)
            NGA_Scale_patch(a->g, lo, hi, v);
        else if (which == 1)
            NGA_Fill_patch(a->g, lo, hi, v);
        else
            NGA_Zero_patch(a->g, lo, hi);
        snprintf(what, sizeof what, "%s_patch %s %g %g",
                 which == 0   ? "scale"
                 : which == 1 ? "fill"
                              : "zero",
                 pd, vr, vi);
        check(a);
        break;
    }
    case 15:
    case 16: { /* dot of patches of a and b (b's transposed when both are 2-D) */
        if (a->nd != b->nd || (ghosty(a, b) && !all)) /* (GA 5.8.2: wrong with ghosts) */
            goto scale;
        int mext[MAXD] = {0}, alo[MAXD], ahi[MAXD], blo[MAXD], bhi[MAXD];
        int tr = a->nd == 2 && rnd(3) == 0 && ((a->kind != 2 && b->kind != 2) || all);
        if (t == C_DCPL && (a->kind == 2 || b->kind == 2) && !all)
            goto scale; /* (GA 5.8.2: wrong on block-cyclic) */
        for (int d = 0; d < a->nd; d++) {
            int m = a->dims[d] < b->dims[tr ? 1 - d : d] ? a->dims[d] : b->dims[tr ? 1 - d : d];
            mext[d] = rin(1, m);
        }
        fitpatch(a, mext, alo, ahi);
        int bext[MAXD];
        for (int d = 0; d < a->nd; d++)
            bext[d] = mext[tr ? 1 - d : d];
        fitpatch(b, bext, blo, bhi);
        double wr = 0, wi = 0;
        memset(i, 0, sizeof i);
        do {
            int sa[MAXD], sb[MAXD];
            for (int d = 0; d < a->nd; d++)
                sa[d] = alo[d] + i[d], sb[d] = blo[d] + i[tr ? 1 - d : d];
            double pr, pi;
            cmul(a->re[lin(a, sa)], a->im[lin(a, sa)], b->re[lin(b, sb)], b->im[lin(b, sb)], &pr,
                 &pi);
            wr += pr, wi += pi;
        } while (next(a->nd, i, mext));
        double gr = 0, gi = 0;
        char tb = tr ? 'T' : 'N';
        switch (t) {
        case C_INT:
            gr = NGA_Idot_patch(a->g, 'N', alo, ahi, b->g, tb, blo, bhi);
            break;
        case C_LONG:
            gr = (double)NGA_Ldot_patch(a->g, 'N', alo, ahi, b->g, tb, blo, bhi);
            break;
        case C_LONGLONG:
            gr = (double)NGA_Lldot_patch(a->g, 'N', alo, ahi, b->g, tb, blo, bhi);
            break;
        case C_FLOAT:
            gr = NGA_Fdot_patch(a->g, 'N', alo, ahi, b->g, tb, blo, bhi);
            break;
        case C_DBL:
            gr = NGA_Ddot_patch(a->g, 'N', alo, ahi, b->g, tb, blo, bhi);
            break;
        case C_SCPL: {
            SingleComplex z = NGA_Cdot_patch(a->g, 'N', alo, ahi, b->g, tb, blo, bhi);
            gr = z.real, gi = z.imag;
            break;
        }
        default: {
            DoubleComplex z = NGA_Zdot_patch(a->g, 'N', alo, ahi, b->g, tb, blo, bhi);
            gr = z.real, gi = z.imag;
        }
        }
        int p = pdesc(pd, sizeof pd, a->nd, alo, ahi);
        p += snprintf(pd + p, sizeof pd - (size_t)p, " . %c ", tb);
        pdesc(pd + p, sizeof pd - (size_t)p, b->nd, blo, bhi);
        snprintf(what, sizeof what, "dot_patch %s", pd);
        if (fabs(wr) < 0x1p24 && fabs(wi) < 0x1p24)
            scalar("dot", gr, gi, wr, wi);
        else /* (too large to be exact in float / int: its rounding is the order's) */
            gat_out("# r%d.%d %s: dot = %.15g %.15g (reference %.15g %.15g)", round_no, op_no, what,
                    gr, gi, wr, wi);
        break;
    }
    case 17: { /* whole arrays: copy, add (same dims), scale, zero, fill */
        int which = (int)rnd(5);
        if (!same && which < 2)
            which = 2 + (int)rnd(3);
        if (which == 1 && ghosty(a, b) && !all) /* (GA 5.8.2's GA_Add: wrong with ghosts) */
            which = 2;
        char al[16], be[16];
        double ar = 0, ai = 0, br = 0, bi = 0;
        if (which == 0) {
            GA_Copy(a->g, b->g);
            memcpy(b->re, a->re, sizeof(double) * (size_t)a->n);
            memcpy(b->im, a->im, sizeof(double) * (size_t)a->n);
            snprintf(what, sizeof what, "GA_Copy");
        } else if (which == 1) {
            ralpha(t, al, &ar, &ai);
            ralpha(t, be, &br, &bi);
            GA_Add(al, a->g, be, b->g, b->g);
            for (long q = 0; q < a->n; q++) {
                double p1r, p1i, p2r, p2i;
                cmul(ar, ai, a->re[q], a->im[q], &p1r, &p1i);
                cmul(br, bi, b->re[q], b->im[q], &p2r, &p2i);
                b->re[q] = p1r + p2r, b->im[q] = p1i + p2i;
                conv(t, &b->re[q], &b->im[q]);
            }
            snprintf(what, sizeof what, "GA_Add %g %g, %g %g", ar, ai, br, bi);
        } else if (which == 2) {
            ralpha(t, al, &ar, &ai);
            GA_Scale(b->g, al);
            for (long q = 0; q < b->n; q++) {
                double r, m;
                cmul(b->re[q], b->im[q], ar, ai, &r, &m);
                b->re[q] = r, b->im[q] = m;
                conv(t, &b->re[q], &b->im[q]);
            }
            snprintf(what, sizeof what, "GA_Scale %g %g", ar, ai);
        } else if (which == 3) {
            GA_Zero(b->g);
            for (long q = 0; q < b->n; q++)
                b->re[q] = b->im[q] = 0;
            snprintf(what, sizeof what, "GA_Zero");
        } else {
            rval(t, &ar, &ai);
            gat_setc(t, al, ar, ai);
            GA_Fill(b->g, al);
            for (long q = 0; q < b->n; q++)
                b->re[q] = ar, b->im[q] = ai;
            snprintf(what, sizeof what, "GA_Fill %g %g", ar, ai);
        }
        check(b);
        break;
    }
    case 18:
    case 19: { /* select_elem min / max */
        if ((a->kind == 3 || a->kind == 2) && !all)
            goto scale; /* (GA 5.8.2: "layout problem" on ghost arrays; an index of -1 or -10 on
                         * block-cyclic ones) */
        int mx = (int)rnd(2);
        char v[16];
        int idx[MAXD];
        memset(idx, 0, sizeof idx);
        NGA_Select_elem(a->g, mx ? "max" : "min", v, idx);
        double re, im;
        gat_getc(t, v, &re, &im);
        /* the reference: the first (lowest index) among equal keys (complex: |z|^2) */
        long bi = 0;
        for (long q = 1; q < a->n; q++) {
            double k1 = gat_cplx(t) ? a->re[q] * a->re[q] + a->im[q] * a->im[q] : a->re[q];
            double k0 = gat_cplx(t) ? a->re[bi] * a->re[bi] + a->im[bi] * a->im[bi] : a->re[bi];
            if (mx ? k1 > k0 : k1 < k0)
                bi = q;
        }
        snprintf(what, sizeof what, "select_elem %s", mx ? "max" : "min");
        long got = lin(a, idx);
        int p = 0;
        for (int d = 0; d < a->nd; d++)
            p += snprintf(pd + p, sizeof pd - (size_t)p, " %d", idx[d]);
#define SEL_KEY(q) (gat_cplx(t) ? a->re[q] * a->re[q] + a->im[q] * a->im[q] : a->re[q])
        int ties = 0;
        for (long q = 0; q < a->n; q++)
            ties += SEL_KEY(q) == SEL_KEY(bi);
        if (ties == 1) { /* one extreme element: value and index compared */
            scalar("value", re, im, a->re[bi], a->im[bi]);
            gat_out("r%d.%d %s: index%s", round_no, op_no, what, pd);
        } else { /* GA leaves which of equal extremes undefined: comments, and any of them will do
                  */
            gat_out("# r%d.%d %s: value %.15g %.15g index%s (%d equal extremes)", round_no, op_no,
                    what, re, im, pd, ties);
            gat_out("r%d.%d %s: %d equal extremes", round_no, op_no, what, ties);
        }
        int good = got >= 0 && got < a->n && SEL_KEY(got) == SEL_KEY(bi) && a->re[got] == re &&
                   a->im[got] == im;
#ifndef GAT_PEER
        good &= got == bi; /* ga-compat's rule: the lowest index among equal extremes */
#endif
#undef SEL_KEY
        if (!good) {
            gat_out("# REF r%d.%d %s: index %ld (value %.15g %.15g), the first extreme element "
                    "is %ld (value %.15g %.15g)",
                    round_no, op_no, what, got, re, im, bi, a->re[bi], a->im[bi]);
            nref++;
        }
        break;
    }
    case 20: { /* norms */
        if ((t != C_DBL && t != C_FLOAT && t != C_INT && t != C_LONG) || a->nd > 2)
            goto scale; /* (ga-compat: vectors and matrices only) */
        if (a->kind == 2 && !all)
            goto scale; /* (GA 5.8.2: "block index outside allowed values") */
        double n1 = 0, ni = 0;
        GA_Norm1(a->g, &n1);
        GA_Norm_infinity(a->g, &ni);
        double s = 0, m = 0;
        for (long q = 0; q < a->n; q++)
            s += fabs(a->re[q]), m = fabs(a->re[q]) > m ? fabs(a->re[q]) : m;
        snprintf(what, sizeof what, "norms");
        if (a->nd == 1)
            scalar("norm1 norm_inf", n1, ni, s, m);
        else /* (2-D and more: GA 5.8.2's are not the matrix norms; known) */
            gat_out("# r%d.%d norms %dd: %.15g %.15g (sum / max |a|: %.15g %.15g)", round_no, op_no,
                    a->nd, n1, ni, s, m);
        break;
    }
    case 21: { /* read_inc */
        if (t != C_INT && t != C_LONG)
            goto scale;
        long q = (long)rnd((unsigned)a->n), r = q;
        for (int d = a->nd - 1; d >= 0; d--)
            sub[d] = (int)(r % a->dims[d]), r /= a->dims[d];
        long inc = rin(-3, 5);
        long got = 0;
        if (gat_me == 0)
            got = NGA_Read_inc(a->g, sub, inc);
        snprintf(what, sizeof what, "read_inc %ld by %ld", q, inc);
        scalar("old", (double)got, 0, a->re[q], 0);
        a->re[q] += inc;
        GA_Sync();
        NGA_Read_inc(a->g, sub, inc);
        a->re[q] += inc * gat_np;
        check(a);
        break;
    }
    case 22:
    case 23: { /* element-wise patches: b's patch = op(a's patch, a's other patch) */
        if (a->nd != b->nd || (t == C_LONGLONG && !all)) /* (GA 5.8.2 aborts on long long) */
            goto scale;
        if ((a->kind == 2 || b->kind == 2) &&
            !all) /* (GA 5.8.2: "block index outside allowed values") */
            goto scale;
        if (ghosty(a, b) && !all) /* (GA 5.8.2: wrong with ghosts) */
            goto scale;
        int mext[MAXD], alo[MAXD], ahi[MAXD], olo[MAXD], ohi[MAXD], clo[MAXD], chi[MAXD];
        for (int d = 0; d < a->nd; d++) {
            int m = a->dims[d] < b->dims[d] ? a->dims[d] : b->dims[d];
            mext[d] = rin(1, m);
        }
        fitpatch(a, mext, alo, ahi);
        fitpatch(a, mext, olo, ohi);
        fitpatch(b, mext, clo, chi);
        int which = (int)rnd(5); /* multiply, maximum, minimum, abs (on c), add_constant (on c) */
        if (which == 3 && gat_cplx(t))
            which = 0;
        /* (GA 5.8.2: a complex multiply of patches that do not line up computes the imaginary part
         * from the new real part; complex maximum / minimum break ties of |z| the other way) */
        if (gat_cplx(t) && !all)
            which = 4;
        char v[16];
        double vr = 0, vi = 0;
        if (which == 4) {
            rval(t, &vr, &vi);
            gat_setc(t, v, vr, vi);
        }
        memset(i, 0, sizeof i);
        do {
            int sa[MAXD], so[MAXD], sc[MAXD];
            for (int d = 0; d < a->nd; d++)
                sa[d] = alo[d] + i[d], so[d] = olo[d] + i[d], sc[d] = clo[d] + i[d];
            long qa = lin(a, sa), qo = lin(a, so), qc = lin(b, sc);
            double xr = a->re[qa], xi = a->im[qa], yr = a->re[qo], yi = a->im[qo];
            double *cr = &b->re[qc], *ci = &b->im[qc];
            if (which == 0)
                cmul(xr, xi, yr, yi, cr, ci);
            else if (which == 1 || which == 2) {
                double kx = gat_cplx(t) ? xr * xr + xi * xi : xr;
                double ky = gat_cplx(t) ? yr * yr + yi * yi : yr;
                int takex = which == 1 ? kx > ky : kx < ky;
                *cr = takex ? xr : yr, *ci = takex ? xi : yi;
            } else if (which == 3)
                *cr = fabs(*cr);
            else
                *cr += vr, *ci += vi;
            conv(t, cr, ci);
        } while (next(a->nd, i, mext));
        const char *nm[5] = {"multiply", "maximum", "minimum", "abs_value", "add_constant"};
        if (which == 0)
            GA_Elem_multiply_patch(a->g, alo, ahi, a->g, olo, ohi, b->g, clo, chi);
        else if (which == 1)
            GA_Elem_maximum_patch(a->g, alo, ahi, a->g, olo, ohi, b->g, clo, chi);
        else if (which == 2)
            GA_Elem_minimum_patch(a->g, alo, ahi, a->g, olo, ohi, b->g, clo, chi);
        else if (which == 3)
            GA_Abs_value_patch(b->g, clo, chi);
        else
            GA_Add_constant_patch(b->g, clo, chi, v);
        int p = 0;
        if (which < 3) {
            p += pdesc(pd + p, sizeof pd - (size_t)p, a->nd, alo, ahi);
            p += snprintf(pd + p, sizeof pd - (size_t)p, ", ");
            p += pdesc(pd + p, sizeof pd - (size_t)p, a->nd, olo, ohi);
            p += snprintf(pd + p, sizeof pd - (size_t)p, " -> ");
        }
        pdesc(pd + p, sizeof pd - (size_t)p, b->nd, clo, chi);
        snprintf(what, sizeof what, "elem_%s_patch %s %g %g", nm[which], pd, vr, vi);
        check(b);
        break;
    }
    case 24: { /* transpose (2-D a into a 2-D b of the transposed dims) */
        if (!(a->nd == 2 && b->nd == 2 && b->dims[0] == a->dims[1] && b->dims[1] == a->dims[0]))
            goto scale;
        GA_Transpose(a->g, b->g);
        for (int r = 0; r < a->dims[0]; r++)
            for (int c = 0; c < a->dims[1]; c++) {
                b->re[(long)c * a->dims[0] + r] = a->re[(long)r * a->dims[1] + c];
                b->im[(long)c * a->dims[0] + r] = a->im[(long)r * a->dims[1] + c];
            }
        snprintf(what, sizeof what, "GA_Transpose");
        check(b);
        break;
    }
    default: { /* the roles swapped: the same operations on b */
        op_no--;
        nops--;
        op(b, a);
        break;
    }
    }
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    unsigned long long seed = 20240601;
    int rounds = 20;
    const char *e = getenv("GAT_FUZZ_SEED");
    if (e && *e)
        seed = strtoull(e, NULL, 0);
    if (argc > 1)
        seed = strtoull(argv[1], NULL, 0);
    e = getenv("GAT_FUZZ_ROUNDS");
    if (e && *e)
        rounds = atoi(e);
    if (argc > 2)
        rounds = atoi(argv[2]);
    rs = seed * 2654435761ULL + 0x9E3779B97F4A7C15ULL;
    if (!rs)
        rs = 1;
    trace = getenv("GAT_FUZZ_TRACE") != NULL;
    all = getenv("GAT_FUZZ_ALL") != NULL;
    gat_out("# fuzz: seed %llu, %d rounds, %d processes", seed, rounds, gat_np);
    gat_out("seed %llu rounds %d", seed, rounds);
    for (round_no = 0; round_no < rounds; round_no++) {
        ti = (int)rnd(GAT_NT);
        int t = gat_types[ti];
        int nd = rnd(12) == 0 ? rin(5, 7) : rin(1, 4), dims[MAXD];
        long n;
        do {
            n = 1;
            for (int d = 0; d < nd; d++) {
                int c = (int)rnd(8);
                dims[d] = nd > 4 ? rin(1, 3) : c == 0 ? 1 : c < 4 ? rin(1, 8) : rin(1, 40);
                n *= dims[d];
            }
        } while (n > MAXN);
        int bdims[MAXD], bnd = nd, sel = (int)rnd(4);
        if (sel <= 1) /* the same dims */
            memcpy(bdims, dims, sizeof dims);
        else if (sel == 2 && nd == 2) /* transposed */
            bdims[0] = dims[1], bdims[1] = dims[0];
        else {
            bnd = rnd(3) == 0 ? rin(1, 4) : nd;
            long m;
            do {
                m = 1;
                for (int d = 0; d < bnd; d++) {
                    bdims[d] = rin(1, bnd > 4 ? 3 : 25);
                    m *= bdims[d];
                }
            } while (m > MAXN);
        }
        arr_t a, b;
        op_no = 0;
        create(&a, t, nd, dims, 1);
        create(&b, t, bnd, bdims, 1);
        int nop = rin(4, 10);
        for (int k = 0; k < nop; k++)
            op(&a, &b);
        destroy(&a);
        destroy(&b);
        GA_Sync();
    }
    gat_out("# fuzz: %d operations, %d differences from the reference", nops, nref);
    /* rank 0's count: it makes every comparison (the others' scalars, e.g. read_inc's old value
     * fetched on rank 0 alone, are not theirs to judge) */
    MPI_Bcast(&nref, 1, MPI_INT, 0, MPI_COMM_WORLD);
    gat_check(nref == 0, "every result equals the serial reference");
    return gat_finish();
}
