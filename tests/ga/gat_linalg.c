/* ga-compat linear algebra, compared with GA 5.8.2: GA_Lu_solve, GA_Llt_solve, GA_Solve,
 * GA_Spd_invert, GA_Diag, GA_Diag_reuse, GA_Diag_seq, GA_Diag_std, GA_Diag_std_seq on orders 7,
 * 64 and 150, regular, irregular and block-cyclic distributions; well-conditioned, identity,
 * not positive definite inputs. Each result is checked against the test's own serial LAPACK call
 * on the same data (GA's C arrays are LAPACK's column-major view: right-hand sides and
 * eigenvectors are rows) and printed as checksums rounded to 8 digits (eigenvectors sign-
 * normalized: first entry of magnitude > 1e-6 positive). A second round (orders 64 and 150) runs
 * ga-compat's ScaLAPACK paths (RMC_GA_LINALG_SERIAL=32): the LU and Cholesky solvers,
 * GA_Spd_invert, GA_Diag_std, GA_Diag and GA_Diag_reuse. */
#include "gatest.h"

typedef size_t flen_t;
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b,
            const int *ldb, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, flen_t);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, flen_t);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             double *b, const int *ldb, int *info, flen_t);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info, flen_t);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
            double *work, const int *lwork, int *info, flen_t, flen_t);
void dsygv_(const int *itype, const char *jobz, const char *uplo, const int *n, double *a,
            const int *lda, double *b, const int *ldb, double *w, double *work, const int *lwork,
            int *info, flen_t, flen_t);

#define NRHS 3
enum { REG, IRREG, BCYC, NDIST };
static const char *dname[NDIST] = {"regular", "irregular", "block-cyclic"};

/* deterministic values in [-1, 1) */
static double rnd(int seed, int i, int j)
{
    unsigned x = (unsigned)seed * 2654435761u ^ (unsigned)i * 40503u ^ (unsigned)j * 2246822519u;
    x ^= x >> 15;
    x *= 2654435761u;
    x ^= x >> 13;
    return (double)(x % 20000u) / 10000.0 - 1.0;
}

/* kind: 'g' general (diagonally dominant), 'p' symmetric positive definite, 's' symmetric,
 * 'i' identity, 'n' symmetric not positive definite (a negative pivot at row k = n / 2),
 * 'u' not symmetric, positive definite in its upper triangle */
static double *matrix(int n, int kind, int seed)
{
    double *a = malloc(sizeof(double) * (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int lo = i < j ? i : j, hi = i < j ? j : i;
            double v = kind == 'g' ? rnd(seed, i, j) : rnd(seed, lo, hi);
            if (kind == 'u' && i > j)
                v = rnd(seed + 1, i, j);
            if (i == j)
                v = kind == 's' ? v * n : n + 1 + (kind == 'n' && i == n / 2 ? -3.0 * n : 0);
            a[(size_t)i * n + j] = kind == 'i' ? (i == j) : v;
        }
    return a;
}

/* irregular block starts of len over np blocks: small first blocks */
static void starts(int len, int np, int *map)
{
    for (int k = 0; k < np; k++) {
        int s = k * len / (2 * np);
        map[k] = s > k ? s : k;
    }
}

static int create(int rows, int cols, int dist, const char *name)
{
    int dims[2] = {rows, cols};
    if (dist == REG)
        return NGA_Create(C_DBL, 2, dims, (char *)name, NULL);
    if (dist == IRREG) {
        /* split the longer dimension over every process */
        int nblock[2], map[64];
        if (rows >= cols) {
            nblock[0] = gat_np, nblock[1] = 1;
            starts(rows, gat_np, map);
            map[gat_np] = 0;
        } else {
            nblock[0] = 1, nblock[1] = gat_np;
            map[0] = 0;
            starts(cols, gat_np, map + 1);
        }
        return NGA_Create_irreg(C_DBL, 2, dims, (char *)name, nblock, map);
    }
    int g = GA_Create_handle();
    int block[2] = {5, 4}; /* ragged at order 7 and 64 */
    GA_Set_data(g, 2, dims, C_DBL);
    GA_Set_array_name(g, (char *)name);
    GA_Set_block_cyclic(g, block);
    GA_Allocate(g);
    return g;
}

static void put_all(int g, int rows, int cols, const double *v)
{
    int lo[2] = {0, 0}, hi[2] = {rows - 1, cols - 1}, ld[1] = {cols};
    GA_Sync();
    if (gat_me == 0)
        NGA_Put(g, lo, hi, (void *)v, ld);
    GA_Sync();
}

static double *get_all(int g, int rows, int cols)
{
    double *v = malloc(sizeof(double) * (size_t)rows * cols);
    int lo[2] = {0, 0}, hi[2] = {rows - 1, cols - 1}, ld[1] = {cols};
    NGA_Get(g, lo, hi, v, ld);
    return v;
}

static double maxabs(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

/* every |x - r| <= tol * max|r| */
static int near(const double *x, const double *r, size_t n, double tol)
{
    double s = maxabs(r, n), m = s > 1 ? s : 1;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(x[i] - r[i]) <= tol * m))
            return 0;
    return 1;
}

/* v rounded to 8 significant digits, 0 below 1e-9 of scale (so noise prints the same) */
static void fmt8(char *out, double v, double scale)
{
    if (fabs(v) < 1e-9 * (scale > 1 ? scale : 1))
        v = 0;
    snprintf(out, 32, "%.8g", v);
}

/* one line: label, weighted checksum and max |x| */
static void print_sum(const char *label, const double *x, size_t n)
{
    double s = 0, sc = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * (1 + (double)(i % 7) / 7), sc += fabs(x[i]);
    char a[32], b[32];
    fmt8(a, s, sc);
    fmt8(b, maxabs(x, n), 1);
    gat_out("%s: sum %s max %s", label, a, b);
}

/* rows of v (eigenvectors) sign-normalized in place */
static void normalize_rows(double *v, int n)
{
    for (int k = 0; k < n; k++) {
        double *r = v + (size_t)k * n;
        int j = 0;
        while (j < n - 1 && fabs(r[j]) <= 1e-6)
            j++;
        if (r[j] < 0)
            for (int i = 0; i < n; i++)
                r[i] = -r[i];
    }
}

/* --------------------------------------------------------------------- solvers --- */

static const int sizes[3] = {7, 64, 150};

/* the cases run (2 cores): order 150 on the regular distribution only and not on more than 2
 * processes, edge inputs (identity, upper-triangle-only) at order 7 only; block-cyclic arrays on
 * 2 processes only (GA 5.8.2's GA_Lu_solve on them at 3 processes dies in ARMCI-MPI: "Transfer is
 * out of range" in gmr_put_typed); on more than 2 processes each order on one distribution,
 * alternating by round: order 7 on the regular and order 64 on the irregular one, then (the
 * ScaLAPACK round: orders above 32) order 64 on the regular one (GA 5.8.2 takes ~0.5 s a case
 * there: oversubscribed cores) */
static int skip(int si, int d, int edge, int round)
{
    return (si == 2 && (d != REG || gat_np > 2)) || (edge && si > 0) || (d == BCYC && gat_np > 2) ||
           (gat_np > 2 && (si + d + round) % 2 != 0);
}

static void lu(int round)
{
    for (int si = 0; si < 3; si++)
        for (int d = 0; d < NDIST; d++)
            for (int kind = 0; kind < 2; kind++) {
                if (skip(si, d, kind, round) || (round && si == 0))
                    continue;
                int n = sizes[si], nrhs = NRHS, info, *ipiv = malloc(sizeof(int) * n);
                double *a = matrix(n, kind ? 'i' : 'g', 11 + n), *b = matrix(n, 'g', 5);
                int ga = create(n, n, d, "A"), gb = create(NRHS, n, d, "B");
                char lab[96];
                for (int t = 0; t < 2; t++) {
                    char tr = t ? 'T' : 'N';
                    put_all(ga, n, n, a);
                    put_all(gb, NRHS, n, b);
                    double *ra = malloc(sizeof(double) * n * n),
                           *rb = malloc(sizeof(double) * n * NRHS);
                    memcpy(ra, a, sizeof(double) * n * n);
                    memcpy(rb, b, sizeof(double) * n * NRHS);
                    dgetrf_(&n, &n, ra, &n, ipiv, &info);
                    dgetrs_(&tr, &n, &nrhs, ra, &n, ipiv, rb, &n, &info, 1);
                    snprintf(lab, sizeof lab, "lu%s '%c' %s n=%d %s", round ? " (scalapack)" : "",
                             t ? 'T' : 'n', kind ? "identity" : "general", n, dname[d]);
                    double *x;
#ifdef GAT_PEER
                    if (t) { /* GA 5.8.2 aborts: pdgetrs rejects its TRANS argument */
                        gat_out("# GA bug: %s: GA_Lu_solve('T') aborts (ScaLAPACK's pdgetrs: "
                                "parameter 1 had an illegal value): printing the reference",
                                lab);
                        x = malloc(sizeof(double) * n * NRHS);
                        memcpy(x, rb, sizeof(double) * n * NRHS);
                    } else
#endif
                    {
                        GA_Lu_solve(t ? 'T' : 'n', ga, gb);
                        x = get_all(gb, NRHS, n);
                    }
                    double *a2 = get_all(ga, n, n);
                    char cl[128];
                    snprintf(cl, sizeof cl, "%s: solution", lab);
                    gat_check(near(x, rb, (size_t)n * NRHS, 1e-9), cl);
                    snprintf(cl, sizeof cl, "%s: A unchanged", lab);
                    gat_check(near(a2, a, (size_t)n * n, 0), cl);
                    print_sum(lab, x, (size_t)n * NRHS);
                    free(x), free(a2), free(ra), free(rb);
                }
                GA_Destroy(ga), GA_Destroy(gb);
                free(a), free(b), free(ipiv);
            }
}

/* Cholesky reference on the column-major view: info, solution in rb */
static int chol_ref(int n, const double *a, const double *b, double *rb)
{
    int info, nr = NRHS;
    double *ra = malloc(sizeof(double) * n * n);
    memcpy(ra, a, sizeof(double) * n * n);
    memcpy(rb, b, sizeof(double) * n * NRHS);
    dpotrf_("L", &n, ra, &n, &info, 1);
    if (info == 0)
        dpotrs_("L", &n, &nr, ra, &n, rb, &n, &info, 1);
    free(ra);
    return info;
}

static void llt_solve(int round)
{
    static const int kinds[4] = {'p', 'i', 'u', 'n'};
    static const char *kname[4] = {"spd", "identity", "spd-upper", "not-spd"};
    for (int si = 0; si < 3; si++)
        for (int d = 0; d < NDIST; d++)
            for (int k = 0; k < 4; k++)
                for (int f = 0; f < 2; f++) { /* f: GA_Llt_solve, GA_Solve */
                    if (skip(si, d, k == 1 || k == 2, round) || (round && si == 0))
                        continue; /* the ScaLAPACK round: orders above 32 */
                    int n = sizes[si];
                    double *a = matrix(n, kinds[k], 23 + n), *b = matrix(n, 'g', 7);
                    double *rb = malloc(sizeof(double) * n * NRHS);
                    int rinfo = chol_ref(n, a, b, rb);
                    if (rinfo > 0 && f) { /* GA_Solve falls back to LU */
                        int nr = NRHS, info, *ipiv = malloc(sizeof(int) * n);
                        double *ra = malloc(sizeof(double) * n * n);
                        memcpy(ra, a, sizeof(double) * n * n);
                        memcpy(rb, b, sizeof(double) * n * NRHS);
                        dgesv_(&n, &nr, ra, &n, ipiv, rb, &n, &info);
                        free(ra), free(ipiv);
                    } else if (rinfo > 0) {
                        memcpy(rb, b, sizeof(double) * n * NRHS); /* B unchanged */
                    }
                    int ga = create(n, n, d, "A"), gb = create(NRHS, n, d, "B");
                    put_all(ga, n, n, a);
                    put_all(gb, NRHS, n, b);
                    int r = f ? GA_Solve(ga, gb) : GA_Llt_solve(ga, gb);
                    double *x = get_all(gb, NRHS, n), *a2 = get_all(ga, n, n);
                    char lab[96], cl[128];
                    snprintf(lab, sizeof lab, "%s%s %s n=%d %s", f ? "solve" : "llt_solve",
                             round ? " (scalapack)" : "", kname[k], n, dname[d]);
                    gat_out("%s: returns %d", lab, r);
                    snprintf(cl, sizeof cl, "%s: return code %d", lab, rinfo);
                    gat_check(r == rinfo, cl);
                    snprintf(cl, sizeof cl, "%s: solution", lab);
                    gat_check(near(x, rb, (size_t)n * NRHS, 1e-9), cl);
                    snprintf(cl, sizeof cl, "%s: A unchanged", lab);
                    gat_check(near(a2, a, (size_t)n * n, 0), cl);
                    print_sum(lab, x, (size_t)n * NRHS);
                    GA_Destroy(ga), GA_Destroy(gb);
                    free(a), free(b), free(rb), free(x), free(a2);
                }
}

static void spd_invert(int round)
{
    static const int kinds[4] = {'p', 'i', 'u', 'n'};
    static const char *kname[4] = {"spd", "identity", "spd-upper", "not-spd"};
    for (int si = 0; si < 3; si++)
        for (int d = 0; d < NDIST; d++)
            for (int k = 0; k < 4; k++) {
                if (skip(si, d, k == 1 || k == 2, round) || (round && si == 0))
                    continue;
                int n = sizes[si], info;
                double *a = matrix(n, kinds[k], 31 + n), *ra = malloc(sizeof(double) * n * n);
                memcpy(ra, a, sizeof(double) * n * n);
                dpotrf_("L", &n, ra, &n, &info, 1);
                if (info == 0)
                    dpotri_("L", &n, ra, &n, &info, 1);
                if (info == 0) { /* both triangles */
                    for (int j = 0; j < n; j++)
                        for (int i = j + 1; i < n; i++)
                            ra[(size_t)i * n + j] = ra[(size_t)j * n + i];
                } else {
                    memcpy(ra, a, sizeof(double) * n * n); /* A unchanged */
                }
                int ga = create(n, n, d, "A");
                put_all(ga, n, n, a);
                int r = GA_Spd_invert(ga);
                double *x = get_all(ga, n, n);
                char lab[96], cl[128];
                snprintf(lab, sizeof lab, "spd_invert%s %s n=%d %s", round ? " (scalapack)" : "",
                         kname[k], n, dname[d]);
                gat_out("%s: returns %d", lab, r);
                snprintf(cl, sizeof cl, "%s: return code %d", lab, info);
                gat_check(r == info, cl);
                snprintf(cl, sizeof cl, "%s: inverse", lab);
                gat_check(near(x, ra, (size_t)n * n, 1e-9), cl);
                print_sum(lab, x, (size_t)n * n);
                GA_Destroy(ga);
                free(a), free(ra), free(x);
            }
}

/* ----------------------------------------------------------------- eigenvalues --- */

enum { D_STD, D_STD_SEQ, D_GEN, D_GEN_SEQ, D_REUSE };
static const char *diagname[5] = {"diag_std", "diag_std_seq", "diag", "diag_seq", "diag_reuse"};

static void diag(int round)
{
    for (int si = 0; si < 3; si++)
        for (int d = 0; d < NDIST; d++)
            for (int f = 0; f < 5; f++)
                for (int ident = 0; ident < 2; ident++) {
                    if (skip(si, d, ident, round) ||
                        (round && (si == 0 || f == D_STD_SEQ || f == D_GEN_SEQ)))
                        continue; /* the ScaLAPACK round: orders above 32, not the _seq forms */
                    int n = sizes[si], info, lw = -1, one = 1;
                    double *a = matrix(n, ident ? 'i' : 's', 41 + n), *s = matrix(n, 'p', 43);
                    int gen = f >= D_GEN;
                    for (int i = 0; i < n && !ident; i++) /* the other triangle: ignored */
                        for (int j = 0; j < i; j++)
                            a[gen ? (size_t)j * n + i : (size_t)i * n + j] = 7;
                    double *rv = malloc(sizeof(double) * n * n),
                           *rs = malloc(sizeof(double) * n * n);
                    double *rw = malloc(sizeof(double) * n), q;
                    memcpy(rv, a, sizeof(double) * n * n);
                    memcpy(rs, s, sizeof(double) * n * n);
                    if (gen)
                        dsygv_(&one, "V", "U", &n, rv, &n, rs, &n, rw, &q, &lw, &info, 1, 1);
                    else
                        dsyev_("V", "L", &n, rv, &n, rw, &q, &lw, &info, 1, 1);
                    lw = (int)q;
                    double *work = malloc(sizeof(double) * lw);
                    if (gen)
                        dsygv_(&one, "V", "U", &n, rv, &n, rs, &n, rw, work, &lw, &info, 1, 1);
                    else
                        dsyev_("V", "L", &n, rv, &n, rw, work, &lw, &info, 1, 1);
                    normalize_rows(rv, n);
                    int ga = create(n, n, d, "A"), gs = create(n, n, d, "S"),
                        gv = create(n, n, d, "V");
                    put_all(ga, n, n, a);
                    put_all(gs, n, n, s);
                    GA_Zero(gv);
                    double *ev = malloc(sizeof(double) * n), *v;
                    char lab[96], cl[128];
                    snprintf(lab, sizeof lab, "%s%s %s n=%d %s", diagname[f],
                             round ? " (scalapack)" : "", ident ? "identity" : "symmetric", n,
                             dname[d]);
#ifdef GAT_PEER
                    if (f == D_STD || f == D_GEN || f == D_REUSE) {
                        gat_out("# GA bug: %s: GA 5.8.2 aborts (ga_diag: peigs not interfaced): "
                                "printing the reference",
                                lab);
                        memcpy(ev, rw, sizeof(double) * n);
                        v = malloc(sizeof(double) * n * n);
                        memcpy(v, rv, sizeof(double) * n * n);
                    } else
#endif
                    {
                        switch (f) {
                        case D_STD:
                            GA_Diag_std(ga, gv, ev);
                            break;
                        case D_STD_SEQ:
                            GA_Diag_std_seq(ga, gv, ev);
                            break;
                        case D_GEN:
                            GA_Diag(ga, gs, gv, ev);
                            break;
                        case D_GEN_SEQ:
                            GA_Diag_seq(ga, gs, gv, ev);
                            break;
                        default: /* keep S's factor, reuse it with S zeroed, free it */
                            GA_Diag_reuse(0, ga, gs, gv, ev);
                            GA_Zero(gs);
                            GA_Zero(gv);
                            GA_Diag_reuse(1, ga, gs, gv, ev);
                            GA_Diag_reuse(-1, ga, gs, gv, ev);
                        }
                        v = get_all(gv, n, n);
                        normalize_rows(v, n);
                    }
                    snprintf(cl, sizeof cl, "%s: eigenvalues", lab);
                    gat_check(near(ev, rw, (size_t)n, 1e-10), cl);
                    print_sum(lab, ev, (size_t)n);
                    char lo[32], hi[32];
                    fmt8(lo, ev[0], 1), fmt8(hi, ev[n - 1], 1);
                    gat_out("%s: lowest %s highest %s", lab, lo, hi);
                    if (!ident) { /* distinct eigenvalues: the vectors are unique up to sign */
                        snprintf(cl, sizeof cl, "%s: eigenvectors", lab);
                        gat_check(near(v, rv, (size_t)n * n, 1e-7), cl);
                        print_sum(lab, v, (size_t)n * n);
                    } else { /* any orthonormal basis: V V^T = I (V S V^T = I) */
                        double *w = malloc(sizeof(double) * n * n); /* w = V S */
                        for (int i = 0; i < n; i++)
                            for (int j = 0; j < n; j++) {
                                double x = 0;
                                for (int k = 0; k < n; k++)
                                    x += v[(size_t)i * n + k] *
                                         (gen ? s[(size_t)k * n + j] : k == j);
                                w[(size_t)i * n + j] = x;
                            }
                        int ok = 1;
                        for (int i = 0; i < n; i++)
                            for (int j = 0; j < n; j++) {
                                double dot = 0;
                                for (int k = 0; k < n; k++)
                                    dot += w[(size_t)i * n + k] * v[(size_t)j * n + k];
                                ok &= fabs(dot - (i == j)) < 1e-9;
                            }
                        free(w);
                        snprintf(cl, sizeof cl, "%s: eigenvectors orthonormal", lab);
                        gat_check(ok, cl);
                    }
                    GA_Destroy(ga), GA_Destroy(gs), GA_Destroy(gv);
                    free(a), free(s), free(rv), free(rs), free(rw), free(work), free(ev), free(v);
                }
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    lu(0);
    gat_section("lu");
    llt_solve(0);
    gat_section("llt_solve, solve");
    spd_invert(0);
    gat_section("spd_invert");
    diag(0);
    gat_section("diag");
#ifndef GAT_PEER
    setenv("RMC_GA_LINALG_SERIAL", "32", 1); /* the same solves through ScaLAPACK */
#endif
    lu(1);
    llt_solve(1);
    spd_invert(1);
    diag(1);
    gat_section("scalapack round");
    return gat_finish();
}
