/* ga-compat arithmetic, compared with GA 5.8.2: scale, add, copy (any distributions, transposed),
 * fill / zero / scale patches, dot products of every type (patches, transposes), element-wise
 * abs / add_constant / recip / multiply / divide / maximum / minimum, median, norms, select_elem,
 * step_max, step_bound_info, randomize; on regular, irregular and block-cyclic distributions, a
 * ghost array, 1-D and 3-D arrays; operands that are other (or transposed) patches of the
 * result's own array. Every result is checked against a serial reference (complex numbers in
 * double complex, rounded to the array's type) and printed as a checksum. */
#include <complex.h>
#include "gatest.h"

static const int types[GAT_NT] = {C_INT, C_LONG, C_LONGLONG, C_FLOAT, C_DBL, C_SCPL, C_DCPL};
static int cur; /* type index */
#define R 13
#define C 11
#define N (R * C)
typedef double complex dc;

static int iscpl(int t)
{
    return t == C_SCPL || t == C_DCPL;
}
static int isint(int t)
{
    return t == C_INT || t == C_LONG || t == C_LONGLONG;
}

/* z rounded to type t */
static dc conv(int t, dc z)
{
    switch (t) {
    case C_INT:
    case C_LONG:
    case C_LONGLONG:
        return trunc(creal(z));
    case C_FLOAT:
        return (float)creal(z);
    case C_DBL:
        return creal(z);
    case C_SCPL:
        return (float)creal(z) + I * (float)cimag(z);
    default:
        return z;
    }
}

static void put_elem(int t, void *p, dc z)
{
    switch (t) {
    case C_INT:
        *(int *)p = (int)creal(z);
        break;
    case C_LONG: /* GA's infinity of long: LONG_MAX (2^63 - 1 rounds up to 2^63 as a double) */
        *(long *)p = creal(z) >= 0x1p63 ? 0x7fffffffffffffffL : (long)creal(z);
        break;
    case C_LONGLONG:
        *(long long *)p = creal(z) >= 0x1p63 ? 0x7fffffffffffffffLL : (long long)creal(z);
        break;
    case C_FLOAT:
        *(float *)p = (float)creal(z);
        break;
    case C_DBL:
        *(double *)p = creal(z);
        break;
    case C_SCPL:
        ((float *)p)[0] = (float)creal(z), ((float *)p)[1] = (float)cimag(z);
        break;
    default:
        ((double *)p)[0] = creal(z), ((double *)p)[1] = cimag(z);
    }
}

static dc get_elem(int t, const void *p)
{
    switch (t) {
    case C_INT:
        return *(const int *)p;
    case C_LONG:
        return (double)*(const long *)p;
    case C_LONGLONG:
        return (double)*(const long long *)p;
    case C_FLOAT:
        return *(const float *)p;
    case C_DBL:
        return *(const double *)p;
    case C_SCPL:
        return ((const float *)p)[0] + I * ((const float *)p)[1];
    default:
        return ((const double *)p)[0] + I * ((const double *)p)[1];
    }
}

/* element k of data set s: v in [-5, 5] (complex: 3v + 4v i, |z| = 5|v|) */
static dc val(int t, int s, int k)
{
    double v = (double)((k * 7 + s * 3) % 11) - 5;
    return iscpl(t) ? 3 * v + 4 * v * I : v;
}
/* divisors: 1, 2, -4 (complex: times 1 + i): exact quotients */
static dc divisor(int t, int k)
{
    static const double pw[3] = {1, 2, -4};
    double r = pw[k % 3];
    return iscpl(t) ? r + r * I : r;
}

/* a distribution: 0 regular, 1 irregular, 2 block-cyclic; 2-D R x C */
static int mk(int t, int dist, const char *name)
{
    int dims[2] = {R, C};
    if (dist == 0)
        return NGA_Create(t, 2, dims, (char *)name, NULL);
    if (dist == 1) {
        int nb[2] = {gat_np >= 2 ? 2 : 1, gat_np >= 4 ? 2 : 1};
        int map[4] = {0, 5, 0, 4};
        if (nb[0] == 1)
            map[1] = 0;
        int m[4], k = 0;
        for (int i = 0; i < nb[0]; i++)
            m[k++] = map[i];
        for (int i = 0; i < nb[1]; i++)
            m[k++] = map[2 + i];
        return NGA_Create_irreg(t, 2, dims, (char *)name, nb, m);
    }
    int g = GA_Create_handle();
    GA_Set_data(g, 2, dims, t);
    int blk[2] = {4, 3};
    GA_Set_block_cyclic(g, blk);
    GA_Set_array_name(g, (char *)name);
    if (!GA_Allocate(g)) {
        fprintf(stderr, "GA_Allocate failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return g;
}

static void load(int g, const dc *ref, int n, int ndim, const int *dims)
{
    int t = types[cur];
    char *buf = malloc((size_t)n * gat_tsize(t));
    for (int k = 0; k < n; k++)
        put_elem(t, buf + k * gat_tsize(t), ref[k]);
    if (gat_me == 0) {
        int lo[7] = {0}, hi[7], ld[7];
        for (int d = 0; d < ndim; d++)
            hi[d] = dims[d] - 1;
        for (int d = 0; d + 1 < ndim; d++)
            ld[d] = dims[d + 1];
        NGA_Put(g, lo, hi, buf, ld);
    }
    free(buf);
    GA_Sync();
}

static double tol(void)
{
    int t = types[cur];
    return t == C_FLOAT || t == C_SCPL ? 1e-5 : 1e-12;
}

/* the whole array against ref: a checksum line and ok / FAIL */
static void expect_nd(int g, const dc *ref, int n, int ndim, const int *dims, const char *what)
{
    int t = types[cur];
    char *buf = malloc((size_t)n * gat_tsize(t));
    int lo[7] = {0}, hi[7], ld[7];
    for (int d = 0; d < ndim; d++)
        hi[d] = dims[d] - 1;
    for (int d = 0; d + 1 < ndim; d++)
        ld[d] = dims[d + 1];
    NGA_Get(g, lo, hi, buf, ld);
    int ok = 1;
    double sum = 0;
    for (int k = 0; k < n; k++) {
        dc v = get_elem(t, buf + k * gat_tsize(t));
        ok &=
            gat_close(creal(v), creal(ref[k]), tol()) && gat_close(cimag(v), cimag(ref[k]), tol());
        sum += (k % 7 + 1) * (creal(v) + 3 * cimag(v));
    }
    free(buf);
    gat_out("%s %s sum " GAT_G, what, gat_tname[cur], sum);
    char name[128];
    snprintf(name, sizeof name, "%s %s", what, gat_tname[cur]);
    gat_check(ok, name);
}

static const int dims2[2] = {R, C};
static void expect(int g, const dc *ref, const char *what)
{
    expect_nd(g, ref, N, 2, dims2, what);
}

static double key(dc z)
{
    return iscpl(types[cur]) ? cabs(z) : creal(z);
}
/* the median; among keys that tie (complex: magnitudes) GA 5.8.2's pick: x when key(x) = key(y),
 * else z when key(z) ties with key(x) or key(y) */
static dc median3(dc x, dc y, dc z)
{
    if (key(x) > key(y))
        return key(y) > key(z) ? y : key(x) < key(z) ? x : z;
    if (key(x) < key(y))
        return key(y) < key(z) ? y : key(x) > key(z) ? x : z;
    return x;
}

/* GA 5.8.2 aborts on some operations of some types ("wrong data type"): the peer build skips
 * them (the reference stands in) and says so. */
static int peer_cannot(int cannot, const char *what)
{
#ifdef GAT_PEER
    if (cannot)
        gat_out("# GA bug: GA 5.8.2 aborts on %s of %s arrays", what, gat_tname[cur]);
    return cannot;
#else
    (void)cannot, (void)what;
    return 0;
#endif
}

/* the call, or in the peer build for long long (GA 5.8.2 aborts: "wrong data type") the
 * reference X loaded into g */
#define RUN_OR_LOAD(call, g, X, what) RUN_OR_LOAD_IF(types[cur] == C_LONGLONG, call, g, X, what)
#define RUN_OR_LOAD_IF(cond, call, g, X, what)                                                     \
    do {                                                                                           \
        if (peer_cannot(cond, what))                                                               \
            load(g, X, N, 2, dims2);                                                               \
        else {                                                                                     \
            call;                                                                                  \
        }                                                                                          \
    } while (0)

/* a scalar of the current type */
static void scal(void *p, dc z)
{
    put_elem(types[cur], p, z);
}

/* whole-array operations on one distribution */
static void whole(int dist)
{
    int t = types[cur];
    static dc A[N], B[N], D[N], E[N], X[N];
    /* E: the median's third operand (complex: no ties in magnitude; "median ties" has them) */
    for (int k = 0; k < N; k++)
        A[k] = val(t, 1, k), B[k] = val(t, 2, k), D[k] = divisor(t, k),
        E[k] = val(t, 5, k) + (iscpl(t) ? 2 * I : 0);
    int ga = mk(t, dist, "a"), gb = mk(t, dist, "b"), gc = mk(t, dist, "c"), gd = mk(t, dist, "d");
    int ge = mk(t, dist, "e");
    load(ga, A, N, 2, dims2);
    load(gb, B, N, 2, dims2);
    load(gd, D, N, 2, dims2);
    load(ge, E, N, 2, dims2);
    char s1[16], s2[16];
    char tag[64];
#define TAG(x) (snprintf(tag, sizeof tag, "d%d %s", dist, x), tag)

    GA_Copy(ga, gc);
    expect(gc, A, TAG("copy"));
    scal(s1, iscpl(t) ? 2 - 1 * I : 3);
    GA_Scale(gc, s1);
    for (int k = 0; k < N; k++)
        X[k] = conv(t, A[k] * (iscpl(t) ? 2 - 1 * I : 3));
    expect(gc, X, TAG("scale"));
    scal(s1, 2);
    scal(s2, iscpl(t) ? -1 + 2 * I : -1);
    GA_Add(s1, ga, s2, gb, gc);
    for (int k = 0; k < N; k++)
        X[k] = conv(t, 2 * A[k] + (iscpl(t) ? -1 + 2 * I : -1) * B[k]);
    expect(gc, X, TAG("add"));
    scal(s1, iscpl(t) ? 1 + 3 * I : 7);
    for (int k = 0; k < N; k++)
        X[k] = conv(t, X[k] + (iscpl(t) ? 1 + 3 * I : 7));
    if (peer_cannot(t == C_LONGLONG, "GA_Add_constant"))
        load(gc, X, N, 2, dims2);
    else
        GA_Add_constant(gc, s1);
    expect(gc, X, TAG("add_constant"));
    GA_Copy(ga, gc);
    for (int k = 0; k < N; k++)
        X[k] = conv(t, cabs(A[k]));
    RUN_OR_LOAD(GA_Abs_value(gc), gc, X, "GA_Abs_value");
    expect(gc, X, TAG("abs"));
    for (int k = 0; k < N; k++)
        X[k] = conv(t, A[k] * B[k]);
    RUN_OR_LOAD(GA_Elem_multiply(ga, gb, gc), gc, X, "GA_Elem_multiply");
    expect(gc, X, TAG("elem_multiply"));
    for (int k = 0; k < N; k++)
        X[k] = conv(t, A[k] / D[k]);
    RUN_OR_LOAD(GA_Elem_divide(ga, gd, gc), gc, X, "GA_Elem_divide");
    expect(gc, X, TAG("elem_divide"));
    for (int k = 0; k < N; k++)
        X[k] = key(A[k]) > key(B[k]) ? A[k] : B[k];
    RUN_OR_LOAD(GA_Elem_maximum(ga, gb, gc), gc, X, "GA_Elem_maximum");
    expect(gc, X, TAG("elem_maximum"));
    for (int k = 0; k < N; k++)
        X[k] = key(A[k]) < key(B[k]) ? A[k] : B[k];
    RUN_OR_LOAD(GA_Elem_minimum(ga, gb, gc), gc, X, "GA_Elem_minimum");
    expect(gc, X, TAG("elem_minimum"));
    for (int k = 0; k < N; k++)
        X[k] = median3(A[k], D[k], E[k]);
    RUN_OR_LOAD(GA_Median(ga, gd, ge, gc), gc, X, "GA_Median");
    expect(gc, X, TAG("median"));
    if (iscpl(t)) { /* ties in magnitude: every pattern of 5, 10, 15 over the three operands */
        static dc P[3][N];
        static const double form[3][2] = {{3, 4}, {4, 3}, {5, 0}}; /* |.| = 5, per operand */
        for (int k = 0; k < N; k++)
            for (int p = 0; p < 3; p++) {
                int m = 1 + (p == 0 ? k / 9 : p == 1 ? k / 3 : k) % 3;
                P[p][k] = m * form[p][0] + m * form[p][1] * I;
            }
        for (int k = 0; k < N; k++)
            X[k] = median3(P[0][k], P[1][k], P[2][k]);
        int gp[3] = {mk(t, dist, "p0"), mk(t, dist, "p1"), mk(t, dist, "p2")};
        for (int p = 0; p < 3; p++)
            load(gp[p], P[p], N, 2, dims2);
        GA_Median(gp[0], gp[1], gp[2], gc);
        expect(gc, X, TAG("median ties"));
        for (int p = 0; p < 3; p++)
            GA_Destroy(gp[p]);
    }
    GA_Copy(gd, gc);
    for (int k = 0; k < N; k++)
        X[k] = conv(t, 1 / D[k]);
    RUN_OR_LOAD(GA_Recip(gc), gc, X, "GA_Recip");
    expect(gc, X, TAG("recip"));

    /* dot of the type */
    dc want = 0;
    for (int k = 0; k < N; k++)
        want += A[k] * B[k];
    dc got;
    switch (t) {
    case C_INT:
        got = GA_Idot(ga, gb);
        break;
    case C_LONG:
        got = (double)GA_Ldot(ga, gb);
        break;
    case C_LONGLONG:
        got = (double)GA_Lldot(ga, gb);
        break;
    case C_FLOAT:
        got = GA_Fdot(ga, gb);
        break;
    case C_DBL:
        got = GA_Ddot(ga, gb);
        break;
    case C_SCPL: {
        SingleComplex z = GA_Cdot(ga, gb);
        got = z.real + I * z.imag;
        break;
    }
    default: {
        DoubleComplex z = GA_Zdot(ga, gb);
        got = z.real + I * z.imag;
    }
    }
    gat_out("%s %s = " GAT_G " " GAT_G, TAG("dot"), gat_tname[cur], creal(got), cimag(got));
    gat_check(got == want, TAG("dot"));

    /* norms: matrix 1-norm (largest column sum) and infinity norm (largest row sum) */
    double n1, ni, w1 = 0, wi = 0;
    for (int j = 0; j < C; j++) {
        double s = 0;
        for (int i = 0; i < R; i++)
            s += cabs(A[i * C + j]);
        w1 = s > w1 ? s : w1;
    }
    for (int i = 0; i < R; i++) {
        double s = 0;
        for (int j = 0; j < C; j++)
            s += cabs(A[i * C + j]);
        wi = s > wi ? s : wi;
    }
    if (peer_cannot(t == C_LONGLONG, "GA_Norm1 / GA_Norm_infinity"))
        n1 = w1, ni = wi;
    else {
        GA_Norm1(ga, &n1);
        GA_Norm_infinity(ga, &ni);
    }
#ifdef GAT_PEER
    gat_out("%s %s = " GAT_G " " GAT_G, TAG("norms"), gat_tname[cur], w1, wi);
#else
    gat_out("%s %s = " GAT_G " " GAT_G, TAG("norms"), gat_tname[cur], n1, ni);
#endif
    gat_check_gabug(gat_close(n1, w1, 1e-12) && gat_close(ni, wi, 1e-12), TAG("norms"),
                    "GA 5.8.2's GA_Norm1 / GA_Norm_infinity of a 2-D array give the sum / the "
                    "largest of all |a_ij|, not the largest column / row sum");

    /* select: the largest / smallest, the lowest index among equals */
    for (int mx = 0; mx < 2; mx++) {
        int bi = 0;
        for (int k = 1; k < N; k++)
            if (mx ? key(A[k]) > key(A[bi]) : key(A[k]) < key(A[bi]))
                bi = k;
        char v[16];
        int idx[2];
        NGA_Select_elem(ga, mx ? "max" : "min", v, idx);
        dc gv = get_elem(t, v);
        gat_out("%s %s = " GAT_G " " GAT_G " at %d %d", TAG(mx ? "select max" : "select min"),
                gat_tname[cur], creal(gv), cimag(gv), idx[0], idx[1]);
        gat_check_gabug(gv == A[bi] && idx[0] == bi / C && idx[1] == bi % C, TAG("select"),
                        "GA 5.8.2's NGA_Select_elem does not give every rank the element and "
                        "index rank 0 gets");
    }

    if (!iscpl(t)) {
        int skip = peer_cannot(t == C_LONGLONG, "GA_Step_max / GA_Step_bound_info");
        /* step_max: a = |A| + (k % 2), b = B; step_bound_info: xx in [ll, uu] */
        for (int k = 0; k < N; k++)
            X[k] = fabs(creal(A[k])) + k % 2;
        load(gc, X, N, 2, dims2);
        char st[16];
        if (!skip)
            GA_Step_max(gc, gb, st);
        double ws = t == C_INT ? 2147483647.0 : t == C_FLOAT ? (double)1e37f : 1e307;
        if (t == C_LONG || t == C_LONGLONG)
            ws = 9223372036854775807.0;
        for (int k = 0; k < N; k++)
            if (creal(B[k]) < 0) {
                double s = creal(conv(t, -creal(X[k]) / creal(B[k])));
                ws = s < ws ? s : ws;
            }
        if (skip)
            put_elem(t, st, ws);
        dc gs = get_elem(t, st);
        gat_out("%s %s = " GAT_G, TAG("step_max"), gat_tname[cur], creal(gs));
        gat_check(gat_close(creal(gs), ws, 1e-6), TAG("step_max"));
        static dc L[N], U[N];
        for (int k = 0; k < N; k++)
            L[k] = creal(X[k]) - 1 - k % 3, U[k] = creal(X[k]) + 2 + k % 4;
        load(gd, L, N, 2, dims2);
        load(ge, U, N, 2, dims2);
        char b0[16], b1[16], b2[16];
        if (!skip)
            GA_Step_bound_info(gc, gb, gd, ge, b0, b1, b2);
        double mn = 1e300, mxx = -1e300;
        for (int k = 0; k < N; k++) {
            double v = creal(B[k]), s;
            if (v == 0)
                continue;
            s = creal(conv(t, v > 0 ? creal(U[k] - X[k]) / v : creal(L[k] - X[k]) / v));
            mn = s < mn ? s : mn;
            mxx = s > mxx ? s : mxx;
        }
        int anyzero = 0;
        for (int k = 0; k < N; k++)
            anyzero |= creal(B[k]) == 0;
        double inf = t == C_INT ? 2147483647.0 : t == C_FLOAT ? (double)1e37f : 1e307;
        if (t == C_LONG || t == C_LONGLONG)
            inf = 9223372036854775807.0;
        if (anyzero)
            mxx = inf;
        if (skip)
            put_elem(t, b0, mn), put_elem(t, b1, mn), put_elem(t, b2, mxx);
        dc r0 = get_elem(t, b0), r1 = get_elem(t, b1), r2 = get_elem(t, b2);
        gat_out("%s %s = " GAT_G " " GAT_G " " GAT_G, TAG("step_bound_info"), gat_tname[cur],
                creal(r0), creal(r1), creal(r2));
        gat_check(gat_close(creal(r0), mn, 1e-6) && gat_close(creal(r1), mn, 1e-6) &&
                      gat_close(creal(r2), mxx, 1e-6),
                  TAG("step_bound_info"));
        /* vv 0 everywhere: no component moves, no bound: all three the type's infinity */
        GA_Zero(ga);
        if (!skip)
            GA_Step_bound_info(gc, ga, gd, ge, b0, b1, b2);
        else
            put_elem(t, b0, inf), put_elem(t, b1, inf), put_elem(t, b2, inf);
        r0 = get_elem(t, b0), r1 = get_elem(t, b1), r2 = get_elem(t, b2);
        gat_out("%s %s = " GAT_G " " GAT_G " " GAT_G, TAG("step_bound_info vv = 0"), gat_tname[cur],
                creal(r0), creal(r1), creal(r2));
        gat_check(gat_close(creal(r0), inf, 1e-6) && gat_close(creal(r1), inf, 1e-6) &&
                      gat_close(creal(r2), inf, 1e-6),
                  TAG("step_bound_info vv = 0"));
        /* no element of b negative: the step is unbounded, the type's infinity */
        if (!skip)
            GA_Step_max(gc, ga, st);
        else
            put_elem(t, st, inf);
        gs = get_elem(t, st);
        gat_out("%s %s = " GAT_G, TAG("step_max b = 0"), gat_tname[cur], creal(gs));
        gat_check(gat_close(creal(gs), inf, 1e-6), TAG("step_max b = 0"));
        scal(s1, 1);
        scal(s2, 2);
        GA_Fill(gd, s1);
        GA_Fill(ga, s2);
        if (!skip)
            GA_Step_max(gd, ga, st);
        else
            put_elem(t, st, inf);
        gs = get_elem(t, st);
        gat_out("# %s %s = " GAT_G, TAG("step_max a = 1, b = 2"), gat_tname[cur], creal(gs));
        gat_check_gabug(gat_close(creal(gs), inf, 1e-6), TAG("step_max a = 1, b = 2"),
                        "GA 5.8.2's GA_Step_max on int and long arrays returns 0 (cannot move) "
                        "for a = 1, b = 2, where the step is unbounded (no element of b is "
                        "negative)");
    }

    /* randomize: value v times [0, 1) */
    {
        char v[16];
        dc rv = iscpl(t) ? 100 + 50 * I : 100;
        scal(v, rv);
        int peer_cannot = 0;
#ifdef GAT_PEER
        /* GA 5.8.2 aborts ("type not supported") on complex arrays */
        peer_cannot = iscpl(t);
#endif
        if (!peer_cannot)
            GA_Randomize(gc, v);
        char *buf = malloc(N * gat_tsize(t));
        int lo[2] = {0, 0}, hi[2] = {R - 1, C - 1}, ld = C;
        NGA_Get(gc, lo, hi, buf, &ld);
        int inrange = 1, distinct = 0;
        double mean = 0;
        for (int k = 0; k < N; k++) {
            dc z = peer_cannot ? 50 + 25 * I : get_elem(t, buf + k * gat_tsize(t));
            double u = creal(z) / creal(rv);
            inrange &= u >= 0 && u < 1 && (!iscpl(t) || gat_close(cimag(z), u * cimag(rv), 1e-5));
            mean += u / N;
            if (k > 0 && !peer_cannot && get_elem(t, buf + k * gat_tsize(t)) != get_elem(t, buf))
                distinct = 1;
        }
        if (peer_cannot)
            gat_out("# GA bug: GA 5.8.2's GA_Randomize aborts on %s arrays", gat_tname[cur]);
        if (peer_cannot)
            distinct = 1, mean = 0.5;
        free(buf);
        if (isint(t))
            gat_check_gabug(inrange && distinct && mean > 0.3 && mean < 0.7, TAG("randomize"),
                            "GA 5.8.2's GA_Randomize sets every element of an integer array "
                            "to 0");
        else
            gat_check(inrange && distinct && mean > 0.3 && mean < 0.7, TAG("randomize"));
    }
    GA_Destroy(ga);
    GA_Destroy(gb);
    GA_Destroy(gc);
    GA_Destroy(gd);
    GA_Destroy(ge);
#undef TAG
}

/* patches across different distributions: operands from dist da, destination on dist dc */
static void patches(int da, int dd)
{
    int t = types[cur];
    static dc A[N], B[N], X[N];
    for (int k = 0; k < N; k++)
        A[k] = val(t, 3, k), B[k] = val(t, 4, k);
    int ga = mk(t, da, "pa"), gb = mk(t, da, "pb"), gc = mk(t, dd, "pc");
    load(ga, A, N, 2, dims2);
    load(gb, B, N, 2, dims2);
    char tag[64];
#define TAG(x) (snprintf(tag, sizeof tag, "p%d%d %s", da, dd, x), tag)
    /* whole copy between distributions */
    GA_Copy(ga, gc);
    expect(gc, A, TAG("copy"));
    /* a 7 x 6 patch of a at (2, 1) -> c at (5, 4) */
    int alo[2] = {2, 1}, ahi[2] = {8, 6}, clo[2] = {5, 4}, chi[2] = {11, 9};
    GA_Zero(gc);
    NGA_Copy_patch('N', ga, alo, ahi, gc, clo, chi);
    for (int k = 0; k < N; k++)
        X[k] = 0;
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++)
            X[(5 + i) * C + 4 + j] = A[(2 + i) * C + 1 + j];
    expect(gc, X, TAG("copy_patch"));
    /* transposed: a [1..9] x [0..4] (9 x 5) -> c [3..7] x [2..10] (5 x 9) */
    int tlo[2] = {1, 0}, thi[2] = {9, 4}, ulo[2] = {3, 2}, uhi[2] = {7, 10};
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 9; j++)
            X[(3 + i) * C + 2 + j] = A[(1 + j) * C + i];
    RUN_OR_LOAD_IF(da == 2 || dd == 2, NGA_Copy_patch('T', ga, tlo, thi, gc, ulo, uhi), gc, X,
                   "a transposed NGA_Copy_patch of block-cyclic data");
    expect(gc, X, TAG("copy_patch T"));
    /* add / elem ops on patches */
    char s1[16], s2[16];
    scal(s1, 3);
    scal(s2, -2);
    int blo[2] = {0, 3}, bhi[2] = {6, 8};
    NGA_Add_patch(s1, ga, alo, ahi, s2, gb, blo, bhi, gc, clo, chi);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++)
            X[(5 + i) * C + 4 + j] = 3 * A[(2 + i) * C + 1 + j] - 2 * B[i * C + 3 + j];
    expect(gc, X, TAG("add_patch"));
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++)
            X[(5 + i) * C + 4 + j] = A[(2 + i) * C + 1 + j] * B[i * C + 3 + j];
    RUN_OR_LOAD(GA_Elem_multiply_patch(ga, alo, ahi, gb, blo, bhi, gc, clo, chi), gc, X,
                "GA_Elem_multiply_patch");
    expect(gc, X, TAG("elem_multiply_patch"));
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++) {
            dc x = A[(2 + i) * C + 1 + j], y = B[i * C + 3 + j];
            X[(5 + i) * C + 4 + j] = key(x) > key(y) ? x : y;
        }
    RUN_OR_LOAD(GA_Elem_maximum_patch(ga, alo, ahi, gb, blo, bhi, gc, clo, chi), gc, X,
                "GA_Elem_maximum_patch");
    expect(gc, X, TAG("elem_maximum_patch"));
    int64_t alo6[2] = {2, 1}, ahi6[2] = {8, 6}, blo6[2] = {0, 3}, bhi6[2] = {6, 8};
    int64_t clo6[2] = {5, 4}, chi6[2] = {11, 9};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++) {
            dc x = A[(2 + i) * C + 1 + j], y = B[i * C + 3 + j];
            X[(5 + i) * C + 4 + j] = key(x) < key(y) ? x : y;
        }
    RUN_OR_LOAD(GA_Elem_minimum_patch64(ga, alo6, ahi6, gb, blo6, bhi6, gc, clo6, chi6), gc, X,
                "GA_Elem_minimum_patch64");
    expect(gc, X, TAG("elem_minimum_patch64"));
    if (!iscpl(t)) { /* complex: ties in magnitude, which GA 5.8.2 breaks its own way */
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 6; j++)
                X[(5 + i) * C + 4 + j] =
                    median3(A[(2 + i) * C + 1 + j], B[i * C + 3 + j], A[i * C + 3 + j]);
        RUN_OR_LOAD_IF(types[cur] == C_LONGLONG || da != dd,
                       GA_Median_patch(ga, alo, ahi, gb, blo, bhi, ga, blo, bhi, gc, clo, chi), gc,
                       X,
                       "GA_Median_patch (long long, or different distributions: wrong results or "
                       "\"patches mismatch\")");
        expect(gc, X, TAG("median_patch"));
    }
    /* unary patches on c */
    int plo[2] = {1, 2}, phi[2] = {10, 9};
    scal(s1, iscpl(t) ? 0 + 2 * I : -3);
    NGA_Scale_patch(gc, plo, phi, s1);
    for (int i = 1; i <= 10; i++)
        for (int j = 2; j <= 9; j++)
            X[i * C + j] = conv(t, X[i * C + j] * (iscpl(t) ? 0 + 2 * I : -3));
    expect(gc, X, TAG("scale_patch"));
    for (int i = 1; i <= 10; i++)
        for (int j = 2; j <= 9; j++)
            X[i * C + j] = conv(t, cabs(X[i * C + j]));
    RUN_OR_LOAD(GA_Abs_value_patch(gc, plo, phi), gc, X, "GA_Abs_value_patch");
    expect(gc, X, TAG("abs_value_patch"));
    scal(s1, 5);
    int64_t qlo[2] = {0, 5}, qhi[2] = {12, 7};
    for (int i = 0; i <= 12; i++)
        for (int j = 5; j <= 7; j++)
            X[i * C + j] = conv(t, X[i * C + j] + 5);
    if (peer_cannot(t == C_LONGLONG, "GA_Add_constant_patch64"))
        load(gc, X, N, 2, dims2);
    else
        GA_Add_constant_patch64(gc, qlo, qhi, s1);
    expect(gc, X, TAG("add_constant_patch64"));
    scal(s1, iscpl(t) ? -2 - 2 * I : -2);
    int flo[2] = {3, 0}, fhi[2] = {9, 10};
    NGA_Fill_patch(gc, flo, fhi, s1);
    for (int i = 3; i <= 9; i++)
        for (int j = 0; j <= 10; j++)
            X[i * C + j] = conv(t, iscpl(t) ? -2 - 2 * I : -2);
    expect(gc, X, TAG("fill_patch"));
    for (int i = 3; i <= 9; i++)
        for (int j = 0; j <= 10; j++)
            X[i * C + j] = conv(t, 1 / X[i * C + j]);
    RUN_OR_LOAD(GA_Recip_patch(gc, flo, fhi), gc, X, "GA_Recip_patch");
    expect(gc, X, TAG("recip_patch"));
    {
        static dc D[N];
        for (int k = 0; k < N; k++)
            D[k] = divisor(t, k);
        int gv = mk(t, da, "pd");
        load(gv, D, N, 2, dims2);
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 6; j++)
                X[(5 + i) * C + 4 + j] = conv(t, A[(2 + i) * C + 1 + j] / D[i * C + 3 + j]);
        RUN_OR_LOAD(GA_Elem_divide_patch(ga, alo, ahi, gv, blo, bhi, gc, clo, chi), gc, X,
                    "GA_Elem_divide_patch");
        GA_Destroy(gv);
    }
    expect(gc, X, TAG("elem_divide_patch"));
    int64_t zlo[2] = {2, 2}, zhi[2] = {4, 8};
    NGA_Zero_patch64(gc, zlo, zhi);
    for (int i = 2; i <= 4; i++)
        for (int j = 2; j <= 8; j++)
            X[i * C + j] = 0;
    expect(gc, X, TAG("zero_patch64"));
    /* dot patches: N.N, N.T (a's 7 x 6 with b's transposed 6 x 7) */
    int dlo[2] = {4, 1}, dhi[2] = {9, 7};
    for (int tr = 0; tr < 2; tr++) {
        dc want = 0;
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 6; j++)
                want += A[(2 + i) * C + 1 + j] * (tr ? B[(4 + j) * C + 1 + i] : B[i * C + 3 + j]);
        int *ql = tr ? dlo : blo, *qh = tr ? dhi : bhi;
        char tb = tr ? 'T' : 'N';
        dc got = want;
        if (!peer_cannot((tr || t == C_DCPL) && da == 2,
                         "a dot of block-cyclic patches with t_a or t_b T"))
            switch (t) {
            case C_INT:
                got = NGA_Idot_patch(ga, 'N', alo, ahi, gb, tb, ql, qh);
                break;
            case C_LONG:
                got = (double)NGA_Ldot_patch(ga, 'N', alo, ahi, gb, tb, ql, qh);
                break;
            case C_LONGLONG:
                got = (double)NGA_Lldot_patch(ga, 'N', alo, ahi, gb, tb, ql, qh);
                break;
            case C_FLOAT:
                got = NGA_Fdot_patch(ga, 'N', alo, ahi, gb, tb, ql, qh);
                break;
            case C_DBL: {
                int64_t l6[2] = {ql[0], ql[1]}, h6[2] = {qh[0], qh[1]};
                got = NGA_Ddot_patch64(ga, 'N', alo6, ahi6, gb, tb, l6, h6);
                break;
            }
            case C_SCPL: {
                SingleComplex z = NGA_Cdot_patch(ga, 'N', alo, ahi, gb, tb, ql, qh);
                got = z.real + I * z.imag;
                break;
            }
            default: {
                DoubleComplex z = NGA_Zdot_patch(ga, 'T', alo, ahi, gb, tr ? 'N' : 'T', ql, qh);
                got = z.real + I * z.imag;
            }
            }
        gat_out("%s %s %c = " GAT_G " " GAT_G, TAG("dot_patch"), gat_tname[cur], tb, creal(got),
                cimag(got));
        gat_check(got == want, TAG("dot_patch"));
    }
    if (!iscpl(t)) {
        /* GA 5.8.2: wrong results (step_max) or "mismatched patchs" when distributions differ */
        int skip = peer_cannot(t == C_LONGLONG || da != dd,
                               "GA_Step_max_patch / GA_Step_bound_info_patch (long long, or "
                               "arrays of different distributions)");
        /* step_max_patch: a = |A| patch, b = B patch */
        static dc P[N];
        for (int k = 0; k < N; k++)
            P[k] = fabs(creal(A[k]));
        load(gc, P, N, 2, dims2);
        char st[16];
        if (!skip)
            GA_Step_max_patch(gc, alo, ahi, gb, alo, ahi, st);
        double ws = 1e300;
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 6; j++) {
                double b = creal(B[(2 + i) * C + 1 + j]), a = creal(P[(2 + i) * C + 1 + j]);
                if (b < 0) {
                    double s = creal(conv(t, -a / b));
                    ws = s < ws ? s : ws;
                }
            }
        if (skip)
            put_elem(t, st, ws);
        dc gs = get_elem(t, st);
        gat_out("%s %s = " GAT_G, TAG("step_max_patch"), gat_tname[cur], creal(gs));
        gat_check(gat_close(creal(gs), ws, 1e-6), TAG("step_max_patch"));
        /* step_bound_info_patch: xx = P, vv = B, ll = P - 1, uu = P + 3, on patches */
        int gl = mk(t, dd, "ll"), gu = mk(t, da, "uu");
        static dc L[N], U[N];
        for (int k = 0; k < N; k++)
            L[k] = P[k] - 1, U[k] = P[k] + 3;
        load(gl, L, N, 2, dims2);
        load(gu, U, N, 2, dims2);
        char b0[16], b1[16], b2[16];
        if (!skip)
            GA_Step_bound_info_patch(gc, alo, ahi, gb, alo, ahi, gl, alo, ahi, gu, alo, ahi, b0, b1,
                                     b2);
        double mn = 1e300, mxx = -1e300;
        int anyzero = 0;
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 6; j++) {
                double v = creal(B[(2 + i) * C + 1 + j]), s;
                if (v == 0) {
                    anyzero = 1;
                    continue;
                }
                s = creal(conv(t, v > 0 ? 3 / v : -1 / v));
                mn = s < mn ? s : mn;
                mxx = s > mxx ? s : mxx;
            }
        if (skip)
            put_elem(t, b0, mn), put_elem(t, b1, mn), put_elem(t, b2, mxx);
        dc r0 = get_elem(t, b0), r1 = get_elem(t, b1), r2 = get_elem(t, b2);
        gat_out("%s %s = " GAT_G " " GAT_G " " GAT_G " (vv has 0: %d)", TAG("step_bound_patch"),
                gat_tname[cur], creal(r0), creal(r1), anyzero ? 0 : creal(r2), anyzero);
        gat_check(gat_close(creal(r0), mn, 1e-6) && gat_close(creal(r1), mn, 1e-6) &&
                      (anyzero || gat_close(creal(r2), mxx, 1e-6)),
                  TAG("step_bound_patch"));
        GA_Destroy(gl);
        GA_Destroy(gu);
    }
    GA_Destroy(ga);
    GA_Destroy(gb);
    GA_Destroy(gc);
#undef TAG
}

/* other shapes: 1-D norms and a 1-D patch against a row of a 2-D array; 3-D add; a ghost array */
static void shapes(void)
{
    cur = 4; /* double */
    int n1 = 29;
    int g1 = NGA_Create(C_DBL, 1, &n1, "v", NULL);
    static dc V[29], A[N], X[N];
    for (int k = 0; k < n1; k++)
        V[k] = val(C_DBL, 7, k);
    int d1[1] = {29};
    load(g1, V, n1, 1, d1);
    double nm1, nmi, w1 = 0, wi = 0;
    for (int k = 0; k < n1; k++)
        w1 += fabs(creal(V[k])), wi = fabs(creal(V[k])) > wi ? fabs(creal(V[k])) : wi;
    GA_Norm1(g1, &nm1);
    GA_Norm_infinity(g1, &nmi);
    gat_out("1-D norms = " GAT_G " " GAT_G, nm1, nmi);
    gat_check(nm1 == w1 && nmi == wi, "1-D norms");
    /* dot of a 1-D patch [3..13] with row 4 [0..10] of a 2-D irregular array (GA 5.8.2: "change
     * in shape not supported for block-cyclic data") */
    int g2 = mk(C_DBL, 1, "row");
    for (int k = 0; k < N; k++)
        A[k] = val(C_DBL, 8, k);
    load(g2, A, N, 2, dims2);
    int vlo = 3, vhi = 13, rlo[2] = {4, 0}, rhi[2] = {4, 10};
    double want = 0;
    for (int j = 0; j < 11; j++)
        want += creal(V[3 + j]) * creal(A[4 * C + j]);
    double got = NGA_Ddot_patch(g1, 'N', &vlo, &vhi, g2, 'N', rlo, rhi);
    gat_out("1-D . row = " GAT_G, got);
    gat_check(got == want, "1-D . row");
    /* the same row written from the vector, column 7 from the vector too */
    NGA_Copy_patch('N', g1, &vlo, &vhi, g2, rlo, rhi);
    int clo2[2] = {0, 7}, chi2[2] = {10, 7};
    NGA_Copy_patch('N', g1, &vlo, &vhi, g2, clo2, chi2);
    memcpy(X, A, sizeof X);
    for (int j = 0; j < 11; j++)
        X[4 * C + j] = V[3 + j];
    for (int i = 0; i < 11; i++)
        X[i * C + 7] = V[3 + i];
    expect(g2, X, "row and column from a vector");

    /* 3-D: c = a - 2 b on a patch, a regular and b irregular */
    int d3[3] = {5, 6, 7}, n3 = 5 * 6 * 7;
    int g3a = NGA_Create(C_DBL, 3, d3, "a3", NULL);
    int nb[3] = {gat_np >= 2 ? 2 : 1, 1, 1}, mm[4] = {0, 3, 0, 0};
    if (nb[0] == 1)
        mm[1] = 0;
    int g3b = NGA_Create_irreg(C_DBL, 3, d3, "b3", nb, mm);
    int g3c = NGA_Create(C_DBL, 3, d3, "c3", NULL);
    static dc A3[210], B3[210], X3[210];
    for (int i = 0; i < n3; i++)
        A3[i] = val(C_DBL, 9, i), B3[i] = val(C_DBL, 10, i), X3[i] = 0;
    load(g3a, A3, n3, 3, d3);
    load(g3b, B3, n3, 3, d3);
    GA_Zero(g3c);
    int lo3[3] = {1, 0, 2}, hi3[3] = {4, 5, 6};
    double one = 1, m2 = -2;
    NGA_Add_patch(&one, g3a, lo3, hi3, &m2, g3b, lo3, hi3, g3c, lo3, hi3);
    for (int i = 1; i <= 4; i++)
        for (int j = 0; j <= 5; j++)
            for (int l = 2; l <= 6; l++) {
                int e = (i * 6 + j) * 7 + l;
                X3[e] = A3[e] - 2 * B3[e];
            }
    expect_nd(g3c, X3, n3, 3, d3, "3-D add_patch");
    double w3 = 0;
    for (int i = 0; i < n3; i++)
        w3 += creal(A3[i]) * creal(B3[i]);
    double g3d = GA_Ddot(g3a, g3b);
    gat_out("3-D ddot = " GAT_G, g3d);
    gat_check(g3d == w3, "3-D ddot");

    /* a ghost array (width 1): add, scale, dot with a plain one, copy out */
    int width[2] = {1, 1};
    int gg = NGA_Create_ghosts(C_DBL, 2, (int *)dims2, width, "ghost", NULL);
    int gp = mk(C_DBL, 1, "plain");
    for (int k2 = 0; k2 < N; k2++)
        A[k2] = val(C_DBL, 11, k2), X[k2] = val(C_DBL, 12, k2);
    load(gg, A, N, 2, dims2);
    load(gp, X, N, 2, dims2);
    double wd = 0;
    for (int k2 = 0; k2 < N; k2++)
        wd += creal(A[k2]) * creal(X[k2]);
    double gd = GA_Ddot(gg, gp);
    gat_out("ghost ddot = " GAT_G, gd);
    gat_check(gd == wd, "ghost ddot");
    double two = 2;
    GA_Scale(gg, &two);
    GA_Add(&one, gg, &one, gp, gg);
    for (int k2 = 0; k2 < N; k2++)
        A[k2] = 2 * A[k2] + X[k2];
    expect(gg, A, "ghost scale add");
    GA_Copy(gg, gp);
    expect(gp, A, "ghost copy out");
    GA_Destroy(g1);
    GA_Destroy(g2);
    GA_Destroy(g3a);
    GA_Destroy(g3b);
    GA_Destroy(g3c);
    GA_Destroy(gg);
    GA_Destroy(gp);
}

/* Patches of different shapes with as many elements match in row-major order (GA's "may be of
 * different shapes but must have the same number of elements"): a 4 x 6 patch of a regular array
 * and a 3 x 8 patch of an irregular one (offset), into a 2 x 12 patch and a 1-D vector: copy, add,
 * element-wise multiply, dot; a 3-D 3 x 2 x 4 patch copied into a 2-D 3 x 8 one. */
static void reshapes(void)
{
    cur = 4; /* double */
    int ad[2] = {5, 7}, bd[2] = {4, 9}, cd[2] = {3, 13}, vd = 30, d3[3] = {3, 3, 4}, e2[2] = {4, 8};
    int nb[2] = {gat_np >= 2 ? 2 : 1, 1}, map[3] = {0, 1, 0}; /* rows split unevenly */
    if (nb[0] == 1)
        map[1] = 0;
    int ga = NGA_Create(C_DBL, 2, ad, "ra", NULL);
    int gb = NGA_Create_irreg(C_DBL, 2, bd, "rb", nb, map);
    int gc = NGA_Create(C_DBL, 2, cd, "rc", NULL), gv = NGA_Create(C_DBL, 1, &vd, "rv", NULL);
    int g3 = NGA_Create(C_DBL, 3, d3, "r3", NULL), ge = NGA_Create(C_DBL, 2, e2, "re", NULL);
    static dc A[35], B[36], Cm[39], V[30], T3[36], E[32], X[39];
    for (int k = 0; k < 35; k++)
        A[k] = val(C_DBL, 21, k);
    for (int k = 0; k < 36; k++)
        B[k] = val(C_DBL, 22, k), T3[k] = val(C_DBL, 23, k);
    for (int k = 0; k < 39; k++)
        Cm[k] = val(C_DBL, 24, k);
    for (int k = 0; k < 30; k++)
        V[k] = val(C_DBL, 25, k);
    for (int k = 0; k < 32; k++)
        E[k] = val(C_DBL, 26, k);
    load(ga, A, 35, 2, ad);
    load(gb, B, 36, 2, bd);
    load(gc, Cm, 39, 2, cd);
    load(gv, V, 30, 1, &vd);
    load(g3, T3, 36, 3, d3);
    load(ge, E, 32, 2, e2);
    /* the patches: A[1..4][1..6] (4 x 6), B[1..3][1..8] (3 x 8), C[0..1][1..12] (2 x 12),
     * V[3..26] (24); element q of each (row-major) */
    int alo[2] = {1, 1}, ahi[2] = {4, 6}, blo[2] = {1, 1}, bhi[2] = {3, 8}, clo[2] = {0, 1},
        chi[2] = {1, 12}, vlo = 3, vhi = 26;
#define PA(q) A[(1 + (q) / 6) * 7 + 1 + (q) % 6]
#define PB(q) B[(1 + (q) / 8) * 9 + 1 + (q) % 8]
#define PC(q) X[((q) / 12) * 13 + 1 + (q) % 12]
    /* copy A's patch into B's */
    NGA_Copy_patch('N', ga, alo, ahi, gb, blo, bhi);
    for (int q = 0; q < 24; q++)
        PB(q) = PA(q);
    expect_nd(gb, B, 36, 2, bd, "reshaped copy_patch");
    /* C's patch = A's + 2 B's */
    double one = 1, two = 2;
    memcpy(X, Cm, sizeof X);
    NGA_Add_patch(&one, ga, alo, ahi, &two, gb, blo, bhi, gc, clo, chi);
    for (int q = 0; q < 24; q++)
        PC(q) = PA(q) + 2 * PB(q);
    expect_nd(gc, X, 39, 2, cd, "reshaped add_patch");
    /* C's patch = A's .* the vector's */
    GA_Elem_multiply_patch(ga, alo, ahi, gv, &vlo, &vhi, gc, clo, chi);
    for (int q = 0; q < 24; q++)
        PC(q) = PA(q) * V[3 + q];
    expect_nd(gc, X, 39, 2, cd, "reshaped elem_multiply_patch");
    /* dots */
    double want = 0, want2 = 0;
    for (int q = 0; q < 24; q++)
        want += creal(PA(q) * PB(q)), want2 += creal(V[3 + q] * PC(q));
    double got = NGA_Ddot_patch(ga, 'N', alo, ahi, gb, 'N', blo, bhi);
    double got2 = NGA_Ddot_patch(gv, 'N', &vlo, &vhi, gc, 'N', clo, chi);
    gat_out("reshaped ddot_patch = " GAT_G " " GAT_G, got, got2);
    gat_check(gat_close(got, want, 1e-12) && gat_close(got2, want2, 1e-12),
              "reshaped ddot_patch");
    /* 3-D [0..2][1..2][0..3] (3 x 2 x 4) into E[0..2][0..7] (3 x 8) */
    int lo3[3] = {0, 1, 0}, hi3[3] = {2, 2, 3}, elo[2] = {0, 0}, ehi[2] = {2, 7};
    NGA_Copy_patch('N', g3, lo3, hi3, ge, elo, ehi);
    for (int q = 0; q < 24; q++)
        E[q] = T3[(q / 8) * 12 + 4 + q % 8];
    expect_nd(ge, E, 32, 2, e2, "reshaped 3-D copy_patch");
#undef PA
#undef PB
#undef PC
    GA_Destroy(ga);
    GA_Destroy(gb);
    GA_Destroy(gc);
    GA_Destroy(gv);
    GA_Destroy(g3);
    GA_Destroy(ge);
}

/* Operations whose operand is another (or a transposed) patch of the result's own array: every
 * element as if all were read before any is written. Each rank writes its blocks while another may
 * still read them: ga-compat used to give run-dependent results (NGA_Copy_patch wrong in 18 of 20
 * runs, NGA_Add_patch in 8 of 20; every run with RMC_NODE_SIZE=1). GA 5.8.2 computes the add so,
 * refuses the overlapping copy and element-wise product, and leaves a square patch transposed onto
 * itself unchanged: the peer build loads the reference there and says so. */
static void aliased(int dist)
{
    int t = types[cur];
    static dc A[N], X[N];
    for (int k = 0; k < N; k++)
        A[k] = val(t, 3, k);
    int ga = mk(t, dist, "alias");
    char tag[64], one[16];
    scal(one, 1);
#define ATAG(x) (snprintf(tag, sizeof tag, "alias%d %s", dist, x), tag)
    /* a 7 x 6 patch at (2, 1) and one at (5, 4): rows 5..8, columns 4..6 in both */
    int alo[2] = {2, 1}, ahi[2] = {8, 6}, clo[2] = {5, 4}, chi[2] = {11, 9};
    load(ga, A, N, 2, dims2);
    memcpy(X, A, sizeof X);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++)
            X[(5 + i) * C + 4 + j] = A[(2 + i) * C + 1 + j] + A[(5 + i) * C + 4 + j];
    NGA_Add_patch(one, ga, alo, ahi, one, ga, clo, chi, ga, clo, chi);
    expect(ga, X, ATAG("add_patch overlapping"));
    load(ga, A, N, 2, dims2);
    memcpy(X, A, sizeof X);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++)
            X[(5 + i) * C + 4 + j] = A[(2 + i) * C + 1 + j];
    RUN_OR_LOAD_IF(1, NGA_Copy_patch('N', ga, alo, ahi, ga, clo, chi), ga, X,
                   "NGA_Copy_patch between overlapping patches of one array");
    expect(ga, X, ATAG("copy_patch overlapping"));
    /* the reverse direction: the copy reads what it is about to overwrite further on */
    load(ga, A, N, 2, dims2);
    memcpy(X, A, sizeof X);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++)
            X[(2 + i) * C + 1 + j] = A[(5 + i) * C + 4 + j];
    RUN_OR_LOAD_IF(1, NGA_Copy_patch('N', ga, clo, chi, ga, alo, ahi), ga, X,
                   "NGA_Copy_patch between overlapping patches of one array");
    expect(ga, X, ATAG("copy_patch overlapping back"));
    /* a square patch transposed onto itself */
    int slo[2] = {1, 2}, shi[2] = {8, 9};
    load(ga, A, N, 2, dims2);
    memcpy(X, A, sizeof X);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            X[(1 + i) * C + 2 + j] = A[(1 + j) * C + 2 + i];
#ifdef GAT_PEER
    gat_out("# GA bug: GA 5.8.2 leaves a square patch transposed onto itself unchanged");
    (void)slo, (void)shi;
    load(ga, X, N, 2, dims2);
#else
    NGA_Copy_patch('T', ga, slo, shi, ga, slo, shi);
#endif
    expect(ga, X, ATAG("copy_patch T onto itself"));
    /* c = a .* b with c overlapping a */
    load(ga, A, N, 2, dims2);
    memcpy(X, A, sizeof X);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 6; j++)
            X[(5 + i) * C + 4 + j] = A[(2 + i) * C + 1 + j] * A[(5 + i) * C + 4 + j];
    RUN_OR_LOAD_IF(1, GA_Elem_multiply_patch(ga, alo, ahi, ga, clo, chi, ga, clo, chi), ga, X,
                   "element-wise operations on overlapping patches");
    expect(ga, X, ATAG("elem_multiply_patch overlapping"));
#undef ATAG
    GA_Destroy(ga);
}

/* Operations whose operand is overlaid (GA_Overlay) on the result's memory. ga: laid out in other
 * blocks (2-row blocks dealt round robin for the result, 2-column ones for ga), so an operand
 * element lives where another result element is, most often on another rank; gs: laid out as the
 * result (element for element, read in place: it used to be copied, and a memory limit refused
 * the copy), transposed onto the result. Every element as if all were read before any is
 * written: a differently laid out operand is read from a snapshot (ga-compat read elements
 * already overwritten: GA_Copy and GA_Add wrong in 6 of 6 runs; GA 5.8.2's GA_Copy too). */
static void overlaid(void)
{
    enum { M = 64 };
    int dims[2] = {M, M}, rows[2] = {2, M}, cols[2] = {M, 2};
    int h[3];
    for (int k = 0; k < 3; k++) {
        h[k] = GA_Create_handle();
        GA_Set_data(h[k], 2, dims, C_DBL);
        GA_Set_array_name(h[k], k == 0 ? "overlay base" : "overlaid operand");
        GA_Set_block_cyclic(h[k], k == 1 ? cols : rows);
        if (k == 0)
            GA_Allocate(h[k]);
        else
            GA_Overlay(h[k], h[0]);
    }
    int gc = h[0], ga = h[1], gs = h[2], gv = GA_Create_handle(), vd[1] = {M};
    GA_Set_data(gv, 1, vd, C_DBL); /* a vector in the first elements of each rank's part */
    GA_Set_array_name(gv, "overlaid vector");
    GA_Overlay(gv, gc);
    static double a0[M * M], s0[M * M], v0[M], x[M * M], got[M * M];
    int vlo[1] = {0}, vhi[1] = {M - 1};
    int lo[2] = {0, 0}, hi[2] = {M - 1, M - 1}, ld = M;
    double one = 1;
    for (int round = 0; round < 5; round++) {
        GA_Sync();
        if (gat_me == 0) {
            for (int k = 0; k < M * M; k++)
                x[k] = 1000 + k;
            NGA_Put(gc, lo, hi, x, &ld);
        }
        GA_Sync();
        NGA_Get(ga, lo, hi, a0, &ld); /* the operands as they were */
        NGA_Get(gs, lo, hi, s0, &ld);
        NGA_Get(gv, vlo, vhi, v0, NULL);
        GA_Sync();
        NGA_Get(gc, lo, hi, x, &ld);
        GA_Sync();
        const char *what;
        if (round == 0) {
            GA_Copy(ga, gc);
            memcpy(x, a0, sizeof x);
            what = "GA_Copy from an overlay of the result";
        } else if (round == 1) {
            GA_Add(&one, ga, &one, gc, gc);
            for (int k = 0; k < M * M; k++)
                x[k] += a0[k];
            what = "GA_Add with an overlay of the result";
        } else if (round == 2) {
            GA_Add(&one, gs, &one, gc, gc);
            for (int k = 0; k < M * M; k++)
                x[k] += s0[k];
            what = "GA_Add with an overlay laid out as the result";
        } else if (round == 4) {
            GA_Scale_rows(gc, gv); /* row r scaled by v[r], which some row holds */
            for (int i = 0; i < M; i++)
                for (int j = 0; j < M; j++)
                    x[i * M + j] *= v0[i];
            what = "GA_Scale_rows by an overlay of the result";
        } else {
            GA_Transpose(gs, gc);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < M; j++)
                    x[i * M + j] = s0[j * M + i];
            what = "GA_Transpose of an overlay laid out as the result";
        }
        NGA_Get(gc, lo, hi, got, &ld);
        int ok = 1;
        for (int k = 0; k < M * M; k++)
            ok &= got[k] == x[k];
        gat_check_gabug(ok, what, "reads operand elements another rank already overwrote");
    }
    GA_Destroy(gv);
    GA_Destroy(gs);
    GA_Destroy(ga);
    GA_Destroy(gc);
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    for (cur = 0; cur < GAT_NT; cur++)
        for (int d = 0; d < 3; d++)
            whole(d);
    for (cur = 0; cur < GAT_NT; cur++) {
        patches(0, 2);
        patches(2, 1);
        if (cur == 4)
            patches(1, 0);
    }
    for (cur = 0; cur < GAT_NT; cur++) {
        aliased(0);
        if (cur == 4 || cur == 6)
            aliased(2);
    }
    shapes();
    reshapes();
    overlaid();
    return gat_finish();
}
