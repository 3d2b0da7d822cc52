/* bench_gemm: distributed dense GEMM, C = A B (double, n x n), RMC's algorithms against ScaLAPACK's
 * pdgemm, Global Arrays' GA_Dgemm and the ceiling, all on the same OpenBLAS with one thread per
 * rank (seed 001 §7.3-7.6; issue 13's benchmark).
 *
 * Sizes: --sizes MIN:MAX[:FACTOR] are matrix orders n (default 1024:4096:2: 1024, 2048, 4096;
 * --quick 256:1024). Every cell is the median of --reps repetitions (default 3) of one
 * multiplication, timed on every rank from a barrier to the end of the call; the slowest rank's
 * time counts. GF/s = 2 n^3 / time.
 *
 * Columns (ms per multiplication and GF/s):
 *   ceiling      2 x the rate of one single-threaded OpenBLAS dgemm of the whole n x n problem in
 *                one process (the other rank waits): what two ranks could do with communication
 *                fully hidden and perfect balance.
 *   RMC <algo>   rmc_matrix_gemm with each algorithm (stationary C, A, B, random and locality-aware
 *                stealing, SUMMA) on RMC_BLOCK_RECT distributions (one tile per rank, a process
 *                grid shaped like the matrix: 2 x 1 at 2 ranks), and "RMC best": the fastest.
 *   pdgemm       ScaLAPACK (libscalapack-mpich) on a 1 x p BLACS grid, block 128, column-major
 *                local arrays, the same values.
 *   GA_Dgemm     Global Arrays 5.8.2 (Debian, on ARMCI-MPI with ARMCI_USE_WIN_ALLOCATE=0) on GA's
 *                default distribution.
 * Also a time-split table (the Table 7.5 analogue: compute, communication wait, accumulate,
 * imbalance, per rank max) for RMC's variants at the largest size, and the roofline of §7.6 with
 * this machine's figures: BLAS rate (the ceiling's per-rank rate), memory bandwidth (a STREAM-like
 * copy), inter-rank bandwidth (rmc_get of 8 MiB from the other rank), printed beside the measured
 * rate.
 *
 * Verification: every multiplication's C is checked at 64 random elements against the serial dot
 * product of the input patterns (relative error 1e-10); pdgemm's and GA's too.
 */
#include "config.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <cblas.h>
#include <rmc.h>
#include <rmc/containers.h>
#include "bench_util.h"
#include "bench_roof.h"
#ifdef HAVE_GA_BENCH
#include <ga.h>
#include <macdecls.h>
#endif

/* The input patterns: A(i, j), B(i, j). Exactly representable, small. */
static double pa(int64_t i, int64_t j)
{
    return (double)((i * 7 + j * 13) % 17 - 8) / 16.0;
}
static double pb(int64_t i, int64_t j)
{
    return (double)((i * 11 + j * 5) % 19 - 9) / 32.0;
}
static double want(int64_t n, int64_t i, int64_t j)
{
    double s = 0;
    for (int64_t k = 0; k < n; k++)
        s += pa(i, k) * pb(k, j);
    return s;
}

typedef struct ctx {
    bench_opts_t *o;
    int rank, np;
} ctx_t;

static double wtime(void)
{
    return (double)bench_now_ns() * 1e-9;
}

/* The slowest rank's seconds. */
static double slowest(double t)
{
    double m;
    bench_mck(MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return m;
}

/* 64 random elements of C (got(i, j) from `get`) against the serial products. */
typedef double (*getter_t)(void *arg, int64_t i, int64_t j);
static void verify(int64_t n, getter_t get, void *arg, const char *what)
{
    uint64_t s = 12345;
    for (int t = 0; t < 64; t++) {
        int64_t i = (int64_t)(bench_splitmix64(&s) % (uint64_t)n);
        int64_t j = (int64_t)(bench_splitmix64(&s) % (uint64_t)n);
        double g = get(arg, i, j), w = want(n, i, j);
        if (!(fabs(g - w) <= 1e-10 * (1 + fabs(w))))
            bench_fail("%s, n = %lld: C(%lld, %lld) = %.17g, expected %.17g", what, (long long)n,
                       (long long)i, (long long)j, g, w);
    }
}

/* ------------------------------------------------------------------------- ceiling --- */

/* One process's single-threaded dgemm of the whole problem, seconds (median); the other ranks
 * wait. */
static double ceiling(ctx_t *c, int64_t n)
{
    double s[BENCH_MAX_REPS], t = 0;
    double *a = NULL, *b = NULL, *m = NULL;
    if (c->rank == 0) {
        a = bench_alloc((size_t)(n * n) * 8);
        b = bench_alloc((size_t)(n * n) * 8);
        m = bench_alloc((size_t)(n * n) * 8);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) {
                a[i * n + j] = pa(i, j);
                b[i * n + j] = pb(i, j);
            }
    }
    for (int r = 0; r < c->o->reps; r++) {
        bench_mck(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        if (c->rank == 0) {
            double t0 = wtime();
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0, a,
                        (int)n, b, (int)n, 0.0, m, (int)n);
            t = wtime() - t0;
            if (r == 0 && fabs(m[(n / 3) * n + n / 7] - want(n, n / 3, n / 7)) > 1e-10)
                bench_fail("the ceiling's dgemm is wrong");
        }
        s[r] = t;
    }
    free(a);
    free(b);
    free(m);
    double med = bench_median(s, (size_t)c->o->reps);
    bench_mck(MPI_Bcast(&med, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return med;
}

/* Every rank's share (n / p rows of C) multiplied at once by its own dgemm, no communication: the
 * rate the ranks' BLAS reach together (they share the memory system). Seconds, slowest rank. */
static double concurrent(ctx_t *c, int64_t n)
{
    int64_t rows = (n + c->np - 1) / c->np;
    double *a = bench_alloc((size_t)(rows * n) * 8), *b = bench_alloc((size_t)(n * n) * 8);
    double *m = bench_alloc((size_t)(rows * n) * 8), s[BENCH_MAX_REPS];
    for (int64_t i = 0; i < rows * n; i++)
        a[i] = pa(i / n, i % n);
    for (int64_t i = 0; i < n * n; i++)
        b[i] = pb(i / n, i % n);
    for (int r = 0; r < c->o->reps; r++) {
        bench_mck(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double t0 = wtime();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)n, 1.0, a,
                    (int)n, b, (int)n, 0.0, m, (int)n);
        s[r] = slowest(wtime() - t0);
    }
    free(a);
    free(b);
    free(m);
    return bench_median(s, (size_t)c->o->reps);
}

/* ---------------------------------------------------------------------------- RMC --- */

/* Fills this rank's tiles of m with pattern p (in place). */
static void fill(rmc_matrix_h m, double (*p)(int64_t, int64_t))
{
    rmc_dist_h d = rmc_matrix_dist(m);
    int64_t nt = rmc_dist_ntiles(d);
    for (int64_t t = 0; t < nt; t++) {
        int64_t lo[2], hi[2];
        int owner;
        bench_ck(rmc_dist_tile(d, t, lo, hi, &owner), "rmc_dist_tile");
        if (owner != rmc_rank())
            continue;
        void *v;
        bench_ck(rmc_matrix_tile_local(m, t, &v), "rmc_matrix_tile_local");
        double *e = v;
        for (int64_t i = lo[0]; i < hi[0]; i++)
            for (int64_t j = lo[1]; j < hi[1]; j++)
                *e++ = p(i, j);
    }
    bench_ck(rmc_barrier(), "rmc_barrier");
}

static double rmc_get1(void *arg, int64_t i, int64_t j)
{
    double v;
    int64_t idx[2] = {i, j};
    bench_ck(rmc_matrix_elem_get(arg, idx, &v), "rmc_matrix_elem_get");
    return v;
}

typedef struct rmc_res {
    double sec;           /* median, slowest rank */
    rmc_gemm_stats_t max; /* the slowest rank's split of the last repetition (max per field) */
} rmc_res_t;

static void stats_max(rmc_gemm_stats_t *s)
{
    double v[5] = {s->total, s->compute, s->comm_wait, s->accumulate, s->imbalance}, m[5];
    bench_mck(MPI_Allreduce(v, m, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    s->total = m[0];
    s->compute = m[1];
    s->comm_wait = m[2];
    s->accumulate = m[3];
    s->imbalance = m[4];
}

static rmc_res_t run_rmc(ctx_t *c, int64_t n, rmc_block_t blk, rmc_gemm_algo_t algo)
{
    rmc_dist_h d;
    bench_ck(rmc_dist_2d(blk, n, n, 0, &d), "rmc_dist_2d");
    rmc_matrix_h a, b, m;
    bench_ck(rmc_matrix_create(d, RMC_ELEM_F64, &a), "rmc_matrix_create");
    bench_ck(rmc_matrix_create(d, RMC_ELEM_F64, &b), "rmc_matrix_create");
    bench_ck(rmc_matrix_create(d, RMC_ELEM_F64, &m), "rmc_matrix_create");
    rmc_dist_free(d);
    fill(a, pa);
    fill(b, pb);
    double s[BENCH_MAX_REPS], one = 1, zero = 0;
    rmc_res_t res = {0};
    for (int r = 0; r < c->o->reps; r++) {
        bench_ck(rmc_barrier(), "rmc_barrier");
        double t0 = wtime();
        bench_ck(rmc_matrix_gemm('N', 'N', &one, a, b, &zero, m, algo, &res.max),
                 "rmc_matrix_gemm");
        s[r] = slowest(wtime() - t0);
        if (r == 0)
            verify(n, rmc_get1, m, rmc_gemm_algo_name(algo));
    }
    stats_max(&res.max);
    res.sec = bench_median(s, (size_t)c->o->reps);
    bench_ck(rmc_matrix_destroy(a), "rmc_matrix_destroy");
    bench_ck(rmc_matrix_destroy(b), "rmc_matrix_destroy");
    bench_ck(rmc_matrix_destroy(m), "rmc_matrix_destroy");
    return res;
}

/* -------------------------------------------------------------------------- pdgemm --- */

#ifdef HAVE_SCALAPACK
void Cblacs_pinfo(int *me, int *np);
void Cblacs_get(int ctx, int what, int *val);
void Cblacs_gridinit(int *ctx, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctx, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctx);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ctx, const int *lld, int *info);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);

typedef struct pd {
    double *c;
    int n, nb, mycol, npcol, nloc;
} pd_t;

/* Global column j of a 1 x p block-cyclic layout: its owner and local column. */
static double pd_get(void *arg, int64_t i, int64_t j)
{
    pd_t *p = arg;
    int owner = (int)((j / p->nb) % p->npcol),
        lj = (int)((j / p->nb) / p->npcol * p->nb + j % p->nb);
    double v = 0;
    if (p->mycol == owner)
        v = p->c[(size_t)lj * (size_t)p->n + (size_t)i];
    bench_mck(MPI_Bcast(&v, 1, MPI_DOUBLE, owner, MPI_COMM_WORLD), "MPI_Bcast");
    return v;
}

/* pdgemm on a 1 x p grid, block 128: seconds (median, slowest rank). */
static double run_pdgemm(ctx_t *c, int64_t n64)
{
    int n = (int)n64, nb = 128, zero = 0, one = 1, info = 0, ctx, nprow, npcol, myrow, mycol;
    Cblacs_get(-1, 0, &ctx);
    Cblacs_gridinit(&ctx, "Row", 1, c->np);
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);
    int mloc = numroc_(&n, &nb, &myrow, &zero, &nprow);
    int nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
    int lld = mloc > 1 ? mloc : 1, desc[9];
    descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
    if (info)
        bench_fail("descinit_: info %d", info);
    size_t cnt = (size_t)mloc * (size_t)(nloc > 0 ? nloc : 1);
    double *a = bench_alloc(cnt * 8), *b = bench_alloc(cnt * 8), *m = bench_alloc(cnt * 8);
    for (int lj = 0; lj < nloc; lj++) {
        int64_t j = (int64_t)((lj / nb) * npcol + mycol) * nb + lj % nb;
        for (int i = 0; i < mloc; i++) {
            a[(size_t)lj * (size_t)mloc + (size_t)i] = pa(i, j);
            b[(size_t)lj * (size_t)mloc + (size_t)i] = pb(i, j);
        }
    }
    double s[BENCH_MAX_REPS], alpha = 1, beta = 0;
    for (int r = 0; r < c->o->reps; r++) {
        bench_mck(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double t0 = wtime();
        pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one, &one, desc, &beta, m,
                &one, &one, desc);
        s[r] = slowest(wtime() - t0);
        if (r == 0) {
            pd_t p = {m, n, nb, mycol, npcol, nloc};
            verify(n64, pd_get, &p, "pdgemm");
        }
    }
    free(a);
    free(b);
    free(m);
    Cblacs_gridexit(ctx);
    return bench_median(s, (size_t)c->o->reps);
}
#endif

/* ------------------------------------------------------------------------ GA_Dgemm --- */

#ifdef HAVE_GA_BENCH
static double ga_get(void *arg, int64_t i, int64_t j)
{
    int g = *(int *)arg, lo[2] = {(int)i, (int)j}, hi[2] = {(int)i, (int)j}, ld[1] = {1};
    double v;
    NGA_Get(g, lo, hi, &v, ld);
    return v;
}

/* Fills this rank's block of GA g with pattern p. */
static void ga_fill(int g, double (*p)(int64_t, int64_t))
{
    int lo[2], hi[2], ld[1];
    NGA_Distribution(g, GA_Nodeid(), lo, hi);
    if (lo[0] < 0 || hi[0] < lo[0])
        return;
    double *v;
    NGA_Access(g, lo, hi, &v, ld);
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            v[(size_t)(i - lo[0]) * (size_t)ld[0] + (size_t)(j - lo[1])] = p(i, j);
    NGA_Release_update(g, lo, hi);
}

static double run_ga(ctx_t *c, int64_t n)
{
    int dims[2] = {(int)n, (int)n};
    int ga = NGA_Create(C_DBL, 2, dims, "A", NULL), gb = NGA_Create(C_DBL, 2, dims, "B", NULL);
    int gc = NGA_Create(C_DBL, 2, dims, "C", NULL);
    if (!ga || !gb || !gc)
        bench_fail("NGA_Create of %lld x %lld", (long long)n, (long long)n);
    ga_fill(ga, pa);
    ga_fill(gb, pb);
    GA_Sync();
    double s[BENCH_MAX_REPS];
    for (int r = 0; r < c->o->reps; r++) {
        GA_Sync();
        double t0 = wtime();
        GA_Dgemm('N', 'N', (int)n, (int)n, (int)n, 1.0, ga, gb, 0.0, gc);
        s[r] = slowest(wtime() - t0);
        if (r == 0)
            verify(n, ga_get, &gc, "GA_Dgemm");
    }
    GA_Destroy(ga);
    GA_Destroy(gb);
    GA_Destroy(gc);
    return bench_median(s, (size_t)c->o->reps);
}
#endif

/* ------------------------------------------------------------------------ roofline --- */

/* ---------------------------------------------------------------------------- main --- */

enum { C_CEIL, C_CONC, C_SC, C_SA, C_SB, C_STR, C_STL, C_SUMMA, C_BEST, C_PD, C_GA, NCOL };
static const char *const cname[NCOL] = {
    "ceiling",       "BLAS together", "RMC stat-C", "RMC stat-A", "RMC stat-B", "RMC steal-rnd",
    "RMC steal-loc", "RMC SUMMA",     "RMC best",   "pdgemm",     "GA_Dgemm"};
static const rmc_gemm_algo_t calgo[NCOL] = {0,
                                            0,
                                            RMC_GEMM_STATIONARY_C,
                                            RMC_GEMM_STATIONARY_A,
                                            RMC_GEMM_STATIONARY_B,
                                            RMC_GEMM_STEAL_RANDOM,
                                            RMC_GEMM_STEAL_LOCAL,
                                            RMC_GEMM_SUMMA,
                                            0,
                                            0,
                                            0};

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_gemm", 1024, 4096, &o);
    if (prc)
        return prc > 0;
    if (o.quick && o.max_size == 4096 && o.min_size == 1024) {
        o.min_size = 256;
        o.max_size = 1024;
    }
    if (!o.reps_given && !o.quick)
        o.reps = 3; /* a multiplication of 4096^2 takes seconds (an explicit --reps is kept) */
    ctx_t c = {.o = &o};
    if (bench_mpi_start(&argc, &argv, "bench_gemm", &c.rank, &c.np, NULL))
        return 1;
    openblas_set_num_threads(1); /* every peer: one BLAS thread per rank */
    bench_ck(rmc_init(MPI_COMM_WORLD), "rmc_init");
#ifdef HAVE_GA_BENCH
    GA_Initialize();
    if (!MA_initialized() && !MA_init(C_DBL, 1 << 22, 1 << 22))
        bench_fail("MA_init");
#endif
    char peers[512];
    snprintf(peers, sizeof(peers),
             "RMC %s rmc_matrix_gemm (OpenBLAS, 1 thread per rank) | ScaLAPACK pdgemm %s | "
             "Global Arrays GA_Dgemm %s | ceiling: 2 x one process's single-threaded dgemm",
             rmc_version(),
#ifdef HAVE_SCALAPACK
             "(libscalapack-mpich, 1 x p grid, block 128)",
#else
             "(not built)",
#endif
#ifdef HAVE_GA_BENCH
             "(GA 5.8.2 on ARMCI-MPI, ARMCI_USE_WIN_ALLOCATE=0)"
#else
             "(not built)"
#endif
    );
    bench_header(&o, "dense GEMM C = A B, double, n x n", peers);
    bench_table_t *tt =
        bench_table_new("gemm_ms", "n", "ms per multiplication (median, slowest rank)");
    bench_table_t *tg = bench_table_new("gemm_gflops", "n", "GF/s (2 n^3 / time)");
    int ct[NCOL], cg[NCOL];
    for (int k = 0; k < NCOL; k++) {
        ct[k] = bench_table_col(tt, cname[k], "ms");
        cg[k] = bench_table_col(tg, cname[k], "GF/s");
    }
    bench_table_ratio(tg, "best/pdgemm", cg[C_BEST], cg[C_PD], BENCH_RATIO_X);
    bench_table_ratio(tg, "best/GA", cg[C_BEST], cg[C_GA], BENCH_RATIO_X);
    int c_of_ceil = bench_table_ratio(tg, "best/ceiling", cg[C_BEST], cg[C_CEIL], BENCH_RATIO_PCT);
    bench_table_ratio(tg, "pdgemm/ceiling", cg[C_PD], cg[C_CEIL], BENCH_RATIO_PCT);
    bench_table_ratio(tg, "best/together", cg[C_BEST], cg[C_CONC], BENCH_RATIO_PCT);
    bench_table_plot(tt, 1, 1, "ms (log)");
    bench_table_plot(tg, 1, 0, "GF/s");
    bench_table_target(tg, c_of_ceil, 95, 4096, 4096, "RMC best >= 95% of the ceiling at 4096");
    bench_table_t *tsplit = bench_table_new(
        "gemm_split", "algorithm", "time split at the largest n, ms (slowest rank per part)");
    int cs_tot = bench_table_col(tsplit, "total", "ms"),
        cs_comp = bench_table_col(tsplit, "compute", "ms");
    int cs_wait = bench_table_col(tsplit, "comm wait", "ms");
    int cs_acc = bench_table_col(tsplit, "accumulate", "ms");
    int cs_imb = bench_table_col(tsplit, "imbalance", "ms");
    int cs_gb = bench_table_col(tsplit, "MB moved (rank 0)", "MB");
    int srow[NCOL];
    for (int k = C_SC; k <= C_SUMMA; k++)
        srow[k] = bench_table_row(tsplit, cname[k], NAN);
    size_t last = 0;
    for (size_t n = o.min_size; n; n = bench_next_size(&o, n))
        last = n;
    double ceil_rate = 0;
    for (size_t nz = o.min_size; nz; nz = bench_next_size(&o, nz)) {
        int64_t n = (int64_t)nz;
        char lab[32];
        snprintf(lab, sizeof(lab), "%lld", (long long)n);
        int rt = bench_table_row(tt, lab, (double)n), rg = bench_table_row(tg, lab, (double)n);
        double flop = 2.0 * (double)n * (double)n * (double)n, sec[NCOL];
        for (int k = 0; k < NCOL; k++)
            sec[k] = NAN;
        sec[C_CEIL] = ceiling(&c, n) / c.np;
        sec[C_CONC] = concurrent(&c, n);
        ceil_rate = flop / (sec[C_CEIL] * c.np) * 1e-9; /* one rank's */
        double best = INFINITY;
        for (int k = C_SC; k <= C_SUMMA; k++) {
            rmc_res_t r = run_rmc(&c, n, RMC_BLOCK_RECT, calgo[k]);
            sec[k] = r.sec;
            if (r.sec < best)
                best = r.sec;
            if ((size_t)n == last) {
                rmc_gemm_stats_t *s = &r.max;
                bench_table_set(tsplit, srow[k], cs_tot, s->total * 1e3);
                bench_table_set(tsplit, srow[k], cs_comp, s->compute * 1e3);
                bench_table_set(tsplit, srow[k], cs_wait, s->comm_wait * 1e3);
                bench_table_set(tsplit, srow[k], cs_acc, s->accumulate * 1e3);
                bench_table_set(tsplit, srow[k], cs_imb, s->imbalance * 1e3);
                bench_table_set(tsplit, srow[k], cs_gb, s->bytes * 1e-6);
            }
        }
        sec[C_BEST] = best;
#ifdef HAVE_SCALAPACK
        sec[C_PD] = run_pdgemm(&c, n);
#endif
#ifdef HAVE_GA_BENCH
        sec[C_GA] = run_ga(&c, n);
#endif
        for (int k = 0; k < NCOL; k++) {
            bench_table_set(tt, rt, ct[k], sec[k] * 1e3);
            bench_table_set(tg, rg, cg[k], flop / sec[k] * 1e-9);
        }
    }
    /* the roofline of §7.6 with this machine's figures, at the largest n (stationary C, 2-D grid
     * of p tiles): local AI = (2mkn/p^1.5 + mn/p) / (w (mk + kn + mn) / p), inter-node AI the
     * same over w (mk + kn) / p; each peak the minimum of the roof and AI x bandwidth */
    double bm = bench_roof_mem_bw(), bi = bench_roof_net_bw(), n = (double)last, p = c.np, w = 8;
    double flops = 2 * n * n * n / pow(p, 1.5) + n * n / p;
    double ai_loc = flops / (w * 3 * n * n / p), ai_net = flops / (w * 2 * n * n / p);
    double peak_loc = fmin(ceil_rate, ai_loc * bm), peak_net = fmin(peak_loc, ai_net * bi);
    bench_table_note(tg,
                     "roofline (seed 001 §7.6, n = %g, p = %g): BLAS %.1f GF/s per rank, memory "
                     "%.1f GB/s, inter-rank %.2f GB/s; local AI %.0f flop/B -> %.1f GF/s, "
                     "inter-node AI %.0f flop/B -> %.1f GF/s per rank (%.1f for all ranks)",
                     n, p, ceil_rate, bm, bi, ai_loc, peak_loc, ai_net, peak_net, peak_net * p);
    bench_table_note(tg, "RMC: RMC_BLOCK_RECT distributions (one tile per rank); ceiling: 2 x one "
                         "rank's single-threaded dgemm rate on the whole problem (the other rank "
                         "idle); BLAS together: every rank's dgemm of its n/p rows at once, no "
                         "communication (what the ranks' BLAS reach side by side)");
    bench_table_note(tsplit,
                     "RMC_BLOCK_RECT, n = %zu; compute: BLAS, comm wait: issuing and "
                     "waiting for block transfers and reservations, accumulate: pulling and "
                     "adding partial blocks, imbalance: waiting for the other ranks (barriers, "
                     "collective steps, the final barrier); MB: node-local blocks 0",
                     last);
    bench_table_t *tabs[3] = {tt, tg, tsplit};
    int miss = bench_finish(&o, tabs, 3);
#ifdef HAVE_GA_BENCH
    GA_Terminate();
#endif
    bench_ck(rmc_finalize(), "rmc_finalize");
    MPI_Finalize();
    (void)miss; /* a missed target is shown in the table, not an error */
    return 0;
}
