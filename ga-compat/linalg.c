/* ga-compat: linear algebra (GA_Lu_solve, GA_Llt_solve, GA_Solve, GA_Spd_invert, GA_Diag*).
 * GA 5.8.2's C API hands its row-major arrays to Fortran (ScaLAPACK, LAPACK), which reads them
 * column-major: what GA solves is LAPACK's problem on that column-major view of the data, and so
 * is what these functions solve. In C terms, for an n x n array A:
 *  - right-hand sides are the ROWS of an nrhs x n array B, overwritten with the solutions;
 *  - GA_Lu_solve('n') solves x A = b for every row (A^T x^T = b^T), 't'/'T' solves A x^T = b^T;
 *  - the Cholesky functions read A's upper triangle (LAPACK's 'L' on the column-major view);
 *  - GA_Diag_std* reads the upper triangle, GA_Diag* (A x = lambda S x) the lower triangles; the
 *    eigenvalues come out ascending on every process, eigenvector k is ROW k of g_v (generalized:
 *    normalized so that x S x^T = 1).
 * Only C_DBL arrays (GA 5.8.2 computes on other types as if they held doubles). Each call starts
 * and ends with a sync of the arrays' group. Up to RMC_GA_LINALG_SERIAL (default 1000) rows, on
 * one process, and in the _seq forms, the group's first process gathers the arrays, calls LAPACK
 * and writes the results back; above it every solver runs on ScaLAPACK over a 1 x p grid of the
 * group when configured (LU, Cholesky, SPD inverse, standard and generalized eigenproblems). */
#include "config.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <rmc/env.h>
#include "ga_impl.h"

/* LAPACK (OpenBLAS's): Fortran symbols, with gfortran's hidden string lengths. */
typedef size_t la_len_t;
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *tr, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, la_len_t);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, la_len_t);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             double *b, const int *ldb, int *info, la_len_t);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info, la_len_t);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
            double *work, const int *lwork, int *info, la_len_t, la_len_t);
void dsygst_(const int *itype, const char *uplo, const int *n, double *a, const int *lda,
             const double *b, const int *ldb, int *info, la_len_t);
void dtrsm_(const char *side, const char *uplo, const char *transa, const char *diag, const int *m,
            const int *n, const double *alpha, const double *a, const int *lda, double *b,
            const int *ldb, la_len_t, la_len_t, la_len_t, la_len_t);

/* ------------------------------------------------------------------------ helpers --- */

/* A 2-D C_DBL array; rows/cols when not NULL. */
static gai_array_t *la_matrix(int g, const char *fn, const char *what, int *rows, int *cols)
{
    gai_array_t *a = gai_array(g, fn);
    if (a->type != C_DBL)
        gai_error(fn, "%s '%s' is of type %s: only double (C_DBL) arrays are supported", what,
                  a->name, gai_type_name(a->type));
    if (a->ndim != 2)
        gai_error(fn, "%s '%s' has %d dimensions: a matrix (2) is needed", what, a->name, a->ndim);
    if (a->dims[0] > INT_MAX || a->dims[1] > INT_MAX)
        gai_error(fn, "%s '%s' too large for LAPACK (%lld x %lld)", what, a->name,
                  (long long)a->dims[0], (long long)a->dims[1]);
    if (rows)
        *rows = (int)a->dims[0];
    if (cols)
        *cols = (int)a->dims[1];
    return a;
}

/* A square C_DBL matrix: its order. */
static int la_square(gai_array_t **out, int g, const char *fn, const char *what)
{
    int r, c;
    *out = la_matrix(g, fn, what, &r, &c);
    if (r != c)
        gai_error(fn, "%s '%s' must be a square matrix (it is %d x %d)", what, (*out)->name, r, c);
    return r;
}

/* 1 on the group's first member (the one that runs LAPACK). */
static int la_root(const gai_array_t *a, const char *fn)
{
    return gai_group(a->pgroup, fn)->me == 0;
}

static void *la_alloc(size_t n, const char *fn)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        gai_error(fn, "out of memory (%zu bytes)", n);
    return p;
}

/* The whole matrix, row-major (= its transpose column-major, lda = cols). */
static double *la_gather(gai_array_t *a, const char *fn)
{
    int64_t l[2] = {0, 0}, h[2] = {a->dims[0], a->dims[1]}, ld[1] = {a->dims[1]};
    double *buf = la_alloc(sizeof(double) * (size_t)(h[0] * h[1]), fn);
    if (h[0] * h[1] > 0)
        gai_xfer(a, 'g', l, h, buf, ld, NULL, NULL, fn);
    return buf;
}

static void la_scatter(gai_array_t *a, double *buf, const char *fn)
{
    int64_t l[2] = {0, 0}, h[2] = {a->dims[0], a->dims[1]}, ld[1] = {a->dims[1]};
    if (h[0] * h[1] > 0)
        gai_xfer(a, 'p', l, h, buf, ld, NULL, NULL, fn);
}

/* x[0..n-1] (int or double) from the group's first member to every member. */
static void la_bcast(gai_array_t *a, void *x, int n, MPI_Datatype t, const char *fn)
{
    gai_group_t *g = gai_group(a->pgroup, fn);
    if (g->size == 1)
        return;
    MPI_Request r;
    MPI_Ibcast(x, n, t, 0, g->comm, &r);
    gai_check(rmc_wait_mpi(&r), fn, "broadcasting the result");
}

/* Rows up to which the group's first process solves alone with LAPACK (a registered knob:
 * rmc_info lists it). */
static const rmc_knob_t knob_serial = {
    "RMC_GA_LINALG_SERIAL", "1000",
    "ga-compat: matrices of up to this many rows are solved by the group's first process with "
    "LAPACK; larger ones on ScaLAPACK over the group"};

__attribute__((constructor)) static void la_knob_register(void)
{
    rmc_knob_register(&knob_serial);
}

/* The knob's value, the same on every member of a's group (collective over it): each rank reads
 * its own environment, and members choosing between LAPACK on the first member and ScaLAPACK over
 * the group differently would wait in different collectives. */
static int64_t la_serial_max(gai_array_t *a, const char *fn)
{
    const char *s = rmc_knob_value("RMC_GA_LINALG_SERIAL");
    char *end;
    long long v = s ? strtoll(s, &end, 10) : 1000;
    if (!s || *end != '\0' || v < 0)
        gai_error(fn, "RMC_GA_LINALG_SERIAL='%s': a number of rows >= 0", s ? s : "");
    gai_group_t *g = gai_group(a->pgroup, fn);
    if (g->size == 1)
        return v;
    long long mm[2] = {v, -v};
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, mm, 2, MPI_LONG_LONG, MPI_MIN, g->comm, &r);
    gai_check(rmc_wait_mpi(&r), fn, "agreeing on RMC_GA_LINALG_SERIAL");
    if (mm[0] != -mm[1])
        gai_error(fn,
                  "RMC_GA_LINALG_SERIAL is not the same on every process of the group (%lld to "
                  "%lld rows)",
                  mm[0], -mm[1]);
    return v;
}

/* Fill the upper triangle (column-major view: above the diagonal) from the lower one. */
static void la_symmetrize_lower(double *a, int n)
{
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++)
            a[(size_t)i * n + j] = a[(size_t)j * n + i];
}

/* --------------------------------------------------------------- serial kernels --- */
/* Column-major views: a (n x n, lda n), b (n x nrhs, ldb n). Each returns LAPACK's info. */

static int la_lu(char tr, int n, int nrhs, double *a, double *b, const char *fn)
{
    int *ipiv = la_alloc(sizeof(int) * (size_t)n, fn), info = 0, ld = n > 1 ? n : 1;
    dgetrf_(&n, &n, a, &ld, ipiv, &info);
    if (info == 0 && nrhs > 0)
        dgetrs_(&tr, &n, &nrhs, a, &ld, ipiv, b, &ld, &info, 1);
    free(ipiv);
    return info;
}

static int la_chol(int n, int nrhs, double *a, double *b)
{
    int info = 0, ld = n > 1 ? n : 1;
    dpotrf_("L", &n, a, &ld, &info, 1);
    if (info == 0 && nrhs > 0)
        dpotrs_("L", &n, &nrhs, a, &ld, b, &ld, &info, 1);
    return info;
}

/* GA_Diag_reuse's kept factor of S (LAPACK's: on the group's first member) and its order. */
static double *la_reuse_u;
static int la_reuse_n = -1;
/* The group whose arrays the kept factor came from (set on every member; INT_MIN: none): a factor
 * kept on one group is no factor for another of the same order (other members, another grid). */
static int la_reuse_group = INT_MIN;

/* ------------------------------------------------------------------- ScaLAPACK --- */
#ifdef HAVE_SCALAPACK
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridexit(int ctxt);
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int h);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *np);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ctxt, const int *lld, int *info);
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              int *ipiv, int *info);
void pdgetrs_(const char *tr, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, const int *ipiv, double *b, const int *ib,
              const int *jb, const int *descb, int *info, la_len_t);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info, la_len_t);
void pdpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, double *b, const int *ib, const int *jb,
              const int *descb, int *info, la_len_t);
void pdpotri_(const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, int *info, la_len_t);
void pdsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *ia,
             const int *ja, const int *desca, double *w, double *z, const int *iz, const int *jz,
             const int *descz, double *work, const int *lwork, int *info, la_len_t, la_len_t);
void pdsygst_(const int *ibtype, const char *uplo, const int *n, double *a, const int *ia,
              const int *ja, const int *desca, const double *b, const int *ib, const int *jb,
              const int *descb, double *scale, int *info, la_len_t);
void pdtrsm_(const char *side, const char *uplo, const char *transa, const char *diag,
             const int *m, const int *n, const double *alpha, const double *a, const int *ia,
             const int *ja, const int *desca, double *b, const int *ib, const int *jb,
             const int *descb, la_len_t, la_len_t, la_len_t, la_len_t);

/* A matrix of the column-major view (m x n: the GA array's cols x rows) on a 1 x np BLACS grid,
 * square nb x nb blocks (pdgetrf's condition): every process holds all m rows of its columns,
 * which are dealt in blocks of nb, so each local column block is nb rows of the GA array, fetched
 * or stored with one transfer. */
typedef struct la_bc {
    int m, n, nb, nloc, desc[9];
    double *loc;
} la_bc_t;

static void la_bc_init(la_bc_t *x, gai_array_t *a, int ctxt, int me, int np, int nb, const char *fn)
{
    int zero = 0, info = 0;
    x->m = (int)a->dims[1];
    x->n = (int)a->dims[0];
    x->nb = nb;
    x->nloc = numroc_(&x->n, &nb, &me, &zero, &np);
    int lld = x->m > 1 ? x->m : 1;
    descinit_(x->desc, &x->m, &x->n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    if (info != 0)
        gai_error(fn, "ScaLAPACK's descinit refused array '%s' (info %d)", a->name, info);
    x->loc = la_alloc(sizeof(double) * (size_t)lld * (size_t)(x->nloc > 0 ? x->nloc : 1), fn);
}

/* op 'g': the GA array into the local blocks; 'p': back. */
static void la_bc_xfer(la_bc_t *x, gai_array_t *a, int op, int me, int np, const char *fn)
{
    int64_t ld[1] = {a->dims[1]};
    size_t lld = (size_t)(x->m > 1 ? x->m : 1);
    for (int k = 0, j0 = me * x->nb; j0 < x->n; j0 += np * x->nb) {
        int w = x->n - j0 < x->nb ? x->n - j0 : x->nb;
        int64_t l[2] = {j0, 0}, h[2] = {j0 + w, a->dims[1]};
        if (x->m > 0)
            gai_xfer(a, op, l, h, x->loc + (size_t)k * lld, ld, NULL, NULL, fn);
        k += w;
    }
}

/* A 1 x np BLACS grid over the group of array a (square blocks of LA_NB). */
#define LA_NB 64
typedef struct la_grid {
    int sys, ctxt, me, np, pgroup;
    MPI_Comm comm;
} la_grid_t;

static void la_grid_open(la_grid_t *x, const gai_array_t *a, const char *fn)
{
    gai_group_t *g = gai_group(a->pgroup, fn);
    x->sys = Csys2blacs_handle(g->comm);
    x->ctxt = x->sys;
    Cblacs_gridinit(&x->ctxt, "R", 1, g->size);
    x->me = g->me;
    x->np = g->size;
    x->pgroup = a->pgroup;
    x->comm = g->comm;
}

static void la_grid_close(la_grid_t *x)
{
    Cblacs_gridexit(x->ctxt);
    Cfree_blacs_system_handle(x->sys);
}

/* The view of array a on grid x, fetched (every member's fetches are done when the group syncs
 * before the ScaLAPACK calls). */
static void la_bc_fetch(la_bc_t *v, gai_array_t *a, const la_grid_t *x, const char *fn)
{
    la_bc_init(v, a, x->ctxt, x->me, x->np, LA_NB, fn);
    la_bc_xfer(v, a, 'g', x->me, x->np, fn);
}

/* The largest info over the group (ScaLAPACK's info is known first where it arose). */
static int la_agree(const la_grid_t *x, int info, const char *what, const char *fn)
{
    return gai_allreduce_int(info, MPI_MAX, x->comm, fn, what);
}

/* A solver's start on ScaLAPACK: the grid over a's group, the views of a (and b, when given)
 * fetched, then a sync of the group (every fetch done before ranks block in ScaLAPACK's MPI). */
static void la_start(la_grid_t *x, la_bc_t *xa, gai_array_t *a, la_bc_t *xb, gai_array_t *b,
                     const char *fn)
{
    la_grid_open(x, a, fn);
    la_bc_fetch(xa, a, x, fn);
    if (b)
        la_bc_fetch(xb, b, x, fn);
    gai_sync_group(a->pgroup, fn);
}

/* Its end: the views freed (xb may be NULL), the grid closed. */
static void la_end(la_grid_t *x, la_bc_t *xa, la_bc_t *xb)
{
    free(xa->loc);
    if (xb)
        free(xb->loc);
    la_grid_close(x);
}

/* LU solve of the column-major view on ScaLAPACK over the arrays' group, collective. Returns
 * pdgetrf's info (> 0: singular, b untouched), the same on every member. */
static int la_lu_scalapack(char tr, gai_array_t *a, gai_array_t *b, const char *fn)
{
    la_grid_t x;
    int one = 1, info = 0;
    la_bc_t xa, xb;
    la_start(&x, &xa, a, &xb, b, fn);
    int *ipiv = la_alloc(sizeof(int) * (size_t)(xa.m + LA_NB), fn);
    pdgetrf_(&xa.m, &xa.n, xa.loc, &one, &one, xa.desc, ipiv, &info);
    info = la_agree(&x, info, "agreeing on pdgetrf's outcome", fn);
    if (info == 0 && xb.n > 0)
        pdgetrs_(&tr, &xa.n, &xb.n, xa.loc, &one, &one, xa.desc, ipiv, xb.loc, &one, &one, xb.desc,
                 &info, 1);
    if (info == 0)
        la_bc_xfer(&xb, b, 'p', x.me, x.np, fn);
    free(ipiv);
    la_end(&x, &xa, &xb);
    return info;
}

/* Cholesky solve ('L' of the view: A's upper triangle) on ScaLAPACK; info as la_llt. */
static int la_chol_scalapack(gai_array_t *a, gai_array_t *b, const char *fn)
{
    la_grid_t x;
    int one = 1, info = 0;
    la_bc_t xa, xb;
    la_start(&x, &xa, a, &xb, b, fn);
    pdpotrf_("L", &xa.n, xa.loc, &one, &one, xa.desc, &info, 1);
    info = la_agree(&x, info, "agreeing on pdpotrf's outcome", fn);
    if (info == 0 && xb.n > 0)
        pdpotrs_("L", &xa.n, &xb.n, xa.loc, &one, &one, xa.desc, xb.loc, &one, &one, xb.desc,
                 &info, 1);
    if (info == 0)
        la_bc_xfer(&xb, b, 'p', x.me, x.np, fn);
    la_end(&x, &xa, &xb);
    return info;
}

/* The inverse of SPD A on ScaLAPACK (pdpotrf, pdpotri on 'L' of the view), written back as
 * 2 x its strictly lower triangle plus its diagonal (view), which GA_Symmetrize then turns into
 * the whole inverse. Returns info (A untouched when > 0). */
static int la_spd_invert_scalapack(gai_array_t *a, const char *fn)
{
    la_grid_t x;
    int one = 1, info = 0;
    la_bc_t xa;
    la_start(&x, &xa, a, NULL, NULL, fn);
    pdpotrf_("L", &xa.n, xa.loc, &one, &one, xa.desc, &info, 1);
    info = la_agree(&x, info, "agreeing on pdpotrf's outcome", fn);
    if (info == 0) {
        pdpotri_("L", &xa.n, xa.loc, &one, &one, xa.desc, &info, 1);
        info = la_agree(&x, info, "agreeing on pdpotri's outcome", fn);
    }
    if (info == 0) {
        size_t lld = (size_t)(xa.m > 1 ? xa.m : 1);
        for (int k = 0, j0 = x.me * LA_NB; j0 < xa.n; j0 += x.np * LA_NB) /* my columns */
            for (int j = j0; j < xa.n && j < j0 + LA_NB; j++, k++)
                for (int i = 0; i < xa.m; i++) {
                    double *e = xa.loc + (size_t)k * lld + (size_t)i;
                    *e = i < j ? 0.0 : i > j ? 2.0 * *e : *e;
                }
        la_bc_xfer(&xa, a, 'p', x.me, x.np, fn);
    }
    la_end(&x, &xa, NULL);
    return info;
}

/* GA_Diag_reuse's kept factor of S when ScaLAPACK computed it: the view on its grid (kept open). */
static la_grid_t la_reuse_grid;
static la_bc_t la_reuse_bc;
static int la_reuse_dist; /* 1 while la_reuse_grid / la_reuse_bc hold a factor */

static void la_reuse_dist_free(void)
{
    if (!la_reuse_dist)
        return;
    free(la_reuse_bc.loc);
    la_grid_close(&la_reuse_grid);
    la_reuse_dist = 0;
}

/* The eigenproblem on ScaLAPACK: standard (s NULL: pdsyev on 'L' of A's view) or generalized
 * (pdpotrf of S's view 'U', pdsygst, pdsyev 'U', pdtrsm: dsygv's steps); reuse as la_diag. Writes
 * the eigenvectors into v and the eigenvalues into w (every member); returns info and the stage
 * that failed (1: S's factorization, 2: the eigensolver) in *stage. */
static int la_diag_scalapack(gai_array_t *a, gai_array_t *s, gai_array_t *v, double *w, int reuse,
                             int *stage, const char *fn)
{
    la_grid_t x, *gx = &x;
    int one = 1, info = 0, n = (int)a->dims[0];
    la_bc_t xa, xz, xs, *fs = &xs;
    if (s && reuse > 0) { /* the kept factor and its grid */
        gx = &la_reuse_grid;
        fs = &la_reuse_bc;
    } else {
        la_grid_open(&x, a, fn);
    }
    la_bc_fetch(&xa, a, gx, fn);
    la_bc_init(&xz, v, gx->ctxt, gx->me, gx->np, LA_NB, fn);
    if (s && reuse <= 0)
        la_bc_fetch(&xs, s, gx, fn);
    gai_sync_group(a->pgroup, fn);
    *stage = 2;
    if (s && reuse <= 0) {
        pdpotrf_("U", &n, xs.loc, &one, &one, xs.desc, &info, 1);
        info = la_agree(gx, info, "agreeing on pdpotrf's outcome", fn);
        *stage = info ? 1 : 2;
    }
    if (s && info == 0) {
        double scale = 1;
        pdsygst_(&one, "U", &n, xa.loc, &one, &one, xa.desc, fs->loc, &one, &one, fs->desc, &scale,
                 &info, 1);
        info = la_agree(gx, info, "agreeing on pdsygst's outcome", fn);
    }
    if (info == 0) {
        const char *uplo = s ? "U" : "L";
        int lwork = -1;
        double q = 0;
        pdsyev_("V", uplo, &n, xa.loc, &one, &one, xa.desc, w, xz.loc, &one, &one, xz.desc, &q,
                &lwork, &info, 1, 1);
        lwork = (int)q > 1 ? (int)q : 1;
        double *work = la_alloc(sizeof(double) * (size_t)lwork, fn);
        pdsyev_("V", uplo, &n, xa.loc, &one, &one, xa.desc, w, xz.loc, &one, &one, xz.desc, work,
                &lwork, &info, 1, 1);
        free(work);
        info = la_agree(gx, info, "agreeing on pdsyev's outcome", fn);
    }
    if (s && info == 0) {
        double alpha = 1;
        pdtrsm_("L", "U", "N", "N", &n, &n, &alpha, fs->loc, &one, &one, fs->desc, xz.loc, &one,
                &one, xz.desc, 1, 1, 1, 1);
    }
    if (info == 0)
        la_bc_xfer(&xz, v, 'p', gx->me, gx->np, fn);
    free(xa.loc);
    free(xz.loc);
    if (s && reuse == 0 && *stage == 2) { /* keep the factor with its grid */
        la_reuse_dist_free();
        free(la_reuse_u); /* (a serial one it replaces) */
        la_reuse_u = NULL;
        la_reuse_grid = x;
        la_reuse_bc = xs;
        la_reuse_dist = 1;
        la_reuse_n = n;
        return info;
    }
    if (s && reuse <= 0)
        free(xs.loc);
    if (gx == &x)
        la_grid_close(&x);
    return info;
}
#endif

/* LU solve of the column-major view of a into b (GA_Lu_solve and GA_Solve's fallback), collective:
 * returns dgetrf's info on every member (> 0: singular, b untouched). */
static int la_lu_solve(char tr, gai_array_t *a, gai_array_t *b, int n, int nrhs, const char *fn)
{
    int info = 0;
#ifdef HAVE_SCALAPACK
    if (n > la_serial_max(a, fn) && gai_group(a->pgroup, fn)->size > 1)
        return la_lu_scalapack(tr, a, b, fn);
#endif
    if (la_root(a, fn)) {
        double *ab = la_gather(a, fn), *bb = la_gather(b, fn);
        info = la_lu(tr, n, nrhs, ab, bb, fn);
        if (info == 0)
            la_scatter(b, bb, fn);
        free(ab);
        free(bb);
    }
    la_bcast(a, &info, 1, MPI_INT, fn);
    return info;
}

/* A and B of a solve: A square n x n, B nrhs x n (its rows are the right-hand sides). */
static int la_system(int g_a, int g_b, gai_array_t **a, gai_array_t **b, int *nrhs, const char *fn)
{
    int n = la_square(a, g_a, fn, "matrix A");
    int r, c;
    *b = la_matrix(g_b, fn, "right-hand sides B", &r, &c);
    gai_same_group(fn, *a, *b);
    if (c != n)
        gai_error(fn,
                  "B '%s' is %d x %d: its rows are the right-hand sides, %d long (A is %d x %d)",
                  (*b)->name, r, c, n, n, n);
    *nrhs = r;
    return n;
}

/* ---------------------------------------------------------------------- solvers --- */

/* Collective. Solves with the LU factors of A (unchanged): every row x of B becomes the solution
 * of x A = b ('n' / 'N', as GA's column-major view), or of A x^T = b^T ('t' / 'T'). Any other
 * tran aborts (GA 5.8.2 takes it as 'N'), and so does a singular A. */
void GA_Lu_solve(char tran, int g_a, int g_b)
{
    const char *fn = "GA_Lu_solve";
    gai_array_t *a, *b;
    int nrhs, n = la_system(g_a, g_b, &a, &b, &nrhs, fn);
    if (tran != 'n' && tran != 'N' && tran != 't' && tran != 'T')
        gai_error(fn, "tran %d ('%c'): 'n' / 'N' (no transpose) or 't' / 'T' (transpose) wanted",
                  (int)(unsigned char)tran, tran >= ' ' && tran <= '~' ? tran : '?');
    char tr = (tran == 't' || tran == 'T') ? 'T' : 'N';
    gai_sync_group(a->pgroup, fn);
    int info = la_lu_solve(tr, a, b, n, nrhs, fn);
    if (info > 0)
        gai_error(fn, "matrix '%s' is singular (U(%d,%d) is zero)", a->name, info, info);
    gai_sync_group(a->pgroup, fn);
}

/* Cholesky solve of the view on the group's first member; info on every member. */
static int la_llt(gai_array_t *a, gai_array_t *b, int n, int nrhs, const char *fn)
{
    int info = 0;
#ifdef HAVE_SCALAPACK
    if (n > la_serial_max(a, fn) && gai_group(a->pgroup, fn)->size > 1)
        return la_chol_scalapack(a, b, fn);
#endif
    if (la_root(a, fn)) {
        double *ab = la_gather(a, fn), *bb = la_gather(b, fn);
        info = la_chol(n, nrhs, ab, bb);
        if (info == 0)
            la_scatter(b, bb, fn);
        free(ab);
        free(bb);
    }
    la_bcast(a, &info, 1, MPI_INT, fn);
    return info;
}

/* Collective. Cholesky solve with symmetric positive definite A (its upper triangle; unchanged):
 * every row of B becomes its solution. Returns 0, or k > 0 when A's leading minor of order k is
 * not positive definite (B unchanged). */
int GA_Llt_solve(int g_a, int g_b)
{
    const char *fn = "GA_Llt_solve";
    gai_array_t *a, *b;
    int nrhs, n = la_system(g_a, g_b, &a, &b, &nrhs, fn);
    gai_sync_group(a->pgroup, fn);
    int info = la_llt(a, b, n, nrhs, fn);
    gai_sync_group(a->pgroup, fn);
    return info;
}

/* Collective. Solves A x = b for the rows of B (as GA_Llt_solve) by Cholesky; when A is not
 * positive definite, by LU (as GA_Lu_solve 'n'). Returns 0 (Cholesky) or the order of the first
 * leading minor that is not positive definite (LU was used). Singular A aborts. */
int GA_Solve(int g_a, int g_b)
{
    const char *fn = "GA_Solve";
    gai_array_t *a, *b;
    int nrhs, n = la_system(g_a, g_b, &a, &b, &nrhs, fn);
    gai_sync_group(a->pgroup, fn);
    int info = la_llt(a, b, n, nrhs, fn);
    if (info > 0) {
        int lu = la_lu_solve('N', a, b, n, nrhs, fn);
        if (lu > 0)
            gai_error(fn, "matrix '%s' is not positive definite and singular (U(%d,%d) is zero)",
                      a->name, lu, lu);
    }
    gai_sync_group(a->pgroup, fn);
    return info;
}

/* Collective. Replaces symmetric positive definite A (its upper triangle is read) by its inverse
 * (both triangles). Returns 0, or k > 0 when the leading minor of order k is not positive
 * definite (A unchanged). */
int GA_Spd_invert(int g_a)
{
    const char *fn = "GA_Spd_invert";
    gai_array_t *a;
    int n = la_square(&a, g_a, fn, "matrix A");
    gai_sync_group(a->pgroup, fn);
    int info = 0;
#ifdef HAVE_SCALAPACK
    if (n > la_serial_max(a, fn) && gai_group(a->pgroup, fn)->size > 1) {
        info = la_spd_invert_scalapack(a, fn);
        if (info == 0)
            GA_Symmetrize(g_a); /* (collective on the group, syncs) */
        gai_sync_group(a->pgroup, fn);
        return info;
    }
#endif
    if (la_root(a, fn)) {
        double *ab = la_gather(a, fn);
        int ld = n > 1 ? n : 1;
        dpotrf_("L", &n, ab, &ld, &info, 1);
        if (info == 0)
            dpotri_("L", &n, ab, &ld, &info, 1);
        if (info == 0) {
            la_symmetrize_lower(ab, n);
            la_scatter(a, ab, fn);
        }
        free(ab);
    }
    la_bcast(a, &info, 1, MPI_INT, fn);
    gai_sync_group(a->pgroup, fn);
    return info;
}

/* ------------------------------------------------------------------ eigenvalues --- */

/* dsyev ('V') of the column-major a (n x n) on its uplo triangle: w ascending, a's columns the
 * eigenvectors. Returns info. */
static int la_syev(const char *uplo, int n, double *a, double *w, const char *fn)
{
    int info = 0, ld = n > 1 ? n : 1, lwork = -1;
    double q = 0;
    dsyev_("V", uplo, &n, a, &ld, w, &q, &lwork, &info, 1, 1);
    lwork = (int)q > 1 ? (int)q : 1;
    double *work = la_alloc(sizeof(double) * (size_t)lwork, fn);
    dsyev_("V", uplo, &n, a, &ld, w, work, &lwork, &info, 1, 1);
    free(work);
    return info;
}

/* The generalized problem with s already factored (U^T U, 'U'): dsygv's steps after dpotrf. */
static int la_sygv_factored(int n, double *a, const double *u, double *w, const char *fn)
{
    int info = 0, ld = n > 1 ? n : 1, one = 1;
    dsygst_(&one, "U", &n, a, &ld, u, &ld, &info, 1);
    if (info != 0)
        return info;
    info = la_syev("U", n, a, w, fn);
    if (info != 0)
        return info;
    double alpha = 1;
    dtrsm_("L", "U", "N", "N", &n, &n, &alpha, u, &ld, a, &ld, 1, 1, 1, 1);
    return 0;
}


/* The eigenproblem on the group's first member: A's view (std: 'L' = A's upper triangle), or
 * A x = lambda S x (A's and S's lower triangles: the view's 'U'); reuse > 0 uses the kept factor
 * of S, reuse == 0 keeps it. Eigenvalues to every member, eigenvectors into v. Aborts on failure
 * as GA does. */
static void la_diag(gai_array_t *a, gai_array_t *s, gai_array_t *v, int n, double *eval, int reuse,
                    int seq, const char *fn)
{
    int info = 0, stage = 0; /* stage: 1 S's factorization, 2 the eigensolver */
#ifdef HAVE_SCALAPACK
    /* above RMC_GA_LINALG_SERIAL rows (the _seq forms never), or with a factor ScaLAPACK kept */
    if (!seq && gai_group(a->pgroup, fn)->size > 1 &&
        (s && reuse > 0 ? la_reuse_dist : n > la_serial_max(a, fn))) {
        info = la_diag_scalapack(a, s, v, eval, reuse, &stage, fn); /* agreed, eval everywhere */
        if (info != 0 && stage == 1)
            gai_error(fn, "S '%s' is not positive definite (leading minor of order %d)", s->name,
                      info);
        if (info != 0)
            gai_error(fn, "the eigensolver did not converge (ScaLAPACK info %d)", info);
        return;
    }
    if (reuse == 0 && s)
        la_reuse_dist_free(); /* a LAPACK factor replaces it */
#endif
    if (la_root(a, fn)) {
        double *ab = la_gather(a, fn);
        if (!s) {
            info = la_syev("L", n, ab, eval, fn);
            stage = 2;
        } else {
            double *u = NULL;
            int ld = n > 1 ? n : 1;
            if (reuse > 0) {
                u = la_reuse_u;
            } else {
                u = la_gather(s, fn);
                dpotrf_("U", &n, u, &ld, &info, 1);
                stage = 1;
            }
            if (info == 0) {
                info = la_sygv_factored(n, ab, u, eval, fn);
                stage = 2;
            }
            if (reuse == 0 && stage == 2) {
                free(la_reuse_u);
                la_reuse_u = u;
                la_reuse_n = n;
            } else if (reuse < 0 || (reuse == 0 && stage == 1)) {
                free(u);
            }
        }
        if (info == 0)
            la_scatter(v, ab, fn);
        free(ab);
    }
    int st[2] = {info, stage};
    la_bcast(a, st, 2, MPI_INT, fn);
    if (st[0] != 0 && st[1] == 1)
        gai_error(fn, "S '%s' is not positive definite (leading minor of order %d)", s->name,
                  st[0]);
    if (st[0] != 0)
        gai_error(fn, "the eigensolver did not converge (LAPACK info %d)", st[0]);
    la_bcast(a, eval, n, MPI_DOUBLE, fn);
}

/* Checks of the GA_Diag family: A square, S and V conforming, eval given. */
static int la_diag_args(int g_a, int g_s, int g_v, void *eval, gai_array_t **a, gai_array_t **s,
                        gai_array_t **v, const char *fn)
{
    int n = la_square(a, g_a, fn, "matrix A");
    if (s) {
        if (la_square(s, g_s, fn, "metric S") != n)
            gai_error(fn, "S '%s' is not %d x %d like A", (*s)->name, n, n);
        gai_same_group(fn, *a, *s);
    }
    if (la_square(v, g_v, fn, "eigenvectors V") != n)
        gai_error(fn, "V '%s' is not %d x %d like A", (*v)->name, n, n);
    gai_same_group(fn, *a, *v);
    if (!eval && n > 0)
        gai_error(fn, "NULL eval");
    return n;
}

static void la_diag_call(int reuse, int seq, int g_a, int g_s, int g_v, void *eval,
                         const char *fn)
{
    gai_array_t *a, *s = NULL, *v;
    int n = la_diag_args(g_a, g_s, g_v, eval, &a, &s, &v, fn);
    gai_sync_group(a->pgroup, fn);
    int kept = !la_root(a, fn) || (la_reuse_u && la_reuse_n == n); /* LAPACK's: on the root */
#ifdef HAVE_SCALAPACK
    if (la_reuse_dist) /* ScaLAPACK's: on every member */
        kept = la_reuse_n == n;
#endif
    if (reuse > 0 && (!kept || la_reuse_group != a->pgroup))
        gai_error(fn,
                  "reuse > 0 without a kept factor of S of order %d on process group %d (call "
                  "with reuse 0 first%s)",
                  n, a->pgroup,
                  la_reuse_group != INT_MIN && la_reuse_group != a->pgroup
                      ? "; the kept one is of another group's arrays"
                      : "");
    la_diag(a, s, v, n, eval, reuse, seq, fn);
    if (reuse == 0) /* (a failure aborted in la_diag) */
        la_reuse_group = a->pgroup;
    gai_sync_group(a->pgroup, fn);
}

/* Collective. The generalized symmetric eigenproblem A x = lambda S x (S positive definite):
 * eigenvalues ascending into eval[n] on every process, eigenvector k (x S x^T = 1) into row k of
 * g_v. A and S unchanged. */
void GA_Diag(int g_a, int g_s, int g_v, void *eval)
{
    la_diag_call(-1, 0, g_a, g_s, g_v, eval, "GA_Diag");
}

/* Collective. GA_Diag on one process. */
void GA_Diag_seq(int g_a, int g_s, int g_v, void *eval)
{
    la_diag_call(-1, 1, g_a, g_s, g_v, eval, "GA_Diag_seq");
}

/* Collective. GA_Diag, keeping S's factorization: reuse 0 computes and keeps it, > 0 uses the
 * kept one (S is not read), < 0 frees it and computes nothing. */
void GA_Diag_reuse(int reuse, int g_a, int g_s, int g_v, void *eval)
{
    const char *fn = "GA_Diag_reuse";
    if (reuse < 0) {
        gai_array_t *a, *s, *v;
        la_diag_args(g_a, g_s, g_v, eval, &a, &s, &v, fn);
        gai_sync_group(a->pgroup, fn);
        gai_linalg_release();
        gai_sync_group(a->pgroup, fn);
        return;
    }
    la_diag_call(reuse, 0, g_a, g_s, g_v, eval, fn);
}

void gai_linalg_release(void)
{
    free(la_reuse_u);
    la_reuse_u = NULL;
    la_reuse_n = -1;
    la_reuse_group = INT_MIN;
#ifdef HAVE_SCALAPACK
    la_reuse_dist_free(); /* (its BLACS grid too) */
#endif
}

/* Collective. The standard symmetric eigenproblem A x = lambda x (A's upper triangle): eigenvalues
 * ascending into eval[n] on every process, orthonormal eigenvector k into row k of g_v. */
void GA_Diag_std(int g_a, int g_v, void *eval)
{
    const char *fn = "GA_Diag_std";
    gai_array_t *a, *v;
    int n = la_diag_args(g_a, 0, g_v, eval, &a, NULL, &v, fn);
    gai_sync_group(a->pgroup, fn);
    la_diag(a, NULL, v, n, eval, -1, 0, fn);
    gai_sync_group(a->pgroup, fn);
}

/* Collective. GA_Diag_std on one process. */
void GA_Diag_std_seq(int g_a, int g_v, void *eval)
{
    const char *fn = "GA_Diag_std_seq";
    gai_array_t *a, *v;
    int n = la_diag_args(g_a, 0, g_v, eval, &a, NULL, &v, fn);
    gai_sync_group(a->pgroup, fn);
    la_diag(a, NULL, v, n, eval, -1, 1, fn);
    gai_sync_group(a->pgroup, fn);
}
