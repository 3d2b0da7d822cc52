/* bench_spmul: sparse multiplication on R-MAT matrices (seed 001 §7.4-7.8; issue 13's benchmark):
 * SpMM (A sparse times a dense B of N columns) and SpGEMM (A times A), each RMC algorithm beside
 * the bulk-synchronous SUMMA baseline, with the time split (a Table 7.5 analogue), the load
 * imbalance (max / mean flops over the ranks) and the inter-node roofline of §7.6.
 *
 * Input: R-MAT of scale s (2^s rows and columns, edge factor RMC_BENCH_EF, default 8; a = 0.6,
 * b = c = d = 0.4 / 3 as in the seed), scales --scales MIN:MAX (default 14:17, --quick 12:14).
 * Distributions: RMC's variants on square tiles of 2^s / 4 (a 4 x 4 tile grid, block-cyclic over a
 * process grid chosen for the ranks: several tiles per rank, room to balance); SUMMA on one tile
 * per process of the same process grid (its k panels cut where A's columns and B's rows change
 * hands). Each cell: the median of --reps (default 3) multiplications, the slowest rank's time.
 * SpMM for N = 128 and 512 (--cols).
 *
 * Verification: every RMC variant's C is compared with SUMMA's through a checksum of every element
 * weighted by its global position ((3i + j) mod 7 + 1: a value in a wrong place changes it), within
 * 1e-9 relative; SpGEMM also needs the same nonzero count. SUMMA itself is the reference: it is not
 * checked against a serial product here (tests/mpi/test_spmul checks every algorithm, SUMMA
 * included, element by element against serial products).
 */
#include "config.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#include <rmc/containers.h>
#include <rmc/sparse.h>
#include "bench_util.h"
#include "bench_roof.h"

static const rmc_gemm_algo_t algos[] = {RMC_GEMM_STATIONARY_C, RMC_GEMM_STATIONARY_A,
                                        RMC_GEMM_STATIONARY_B, RMC_GEMM_STEAL_RANDOM,
                                        RMC_GEMM_STEAL_LOCAL,  RMC_GEMM_SUMMA};
#define NALGO 6
static const char *const aname[NALGO] = {"stat-C",    "stat-A",    "stat-B",
                                         "steal-rnd", "steal-loc", "SUMMA"};

typedef struct res {
    double sec;             /* median, slowest rank */
    double imb;             /* max / mean flops */
    double flops;           /* sum over ranks */
    rmc_gemm_stats_t split; /* max over ranks, per part */
} res_t;

static double wtime(void)
{
    return (double)bench_now_ns() * 1e-9;
}

/* The slowest rank's value, the sum and the maximum of a figure. */
static double maxall(double v)
{
    double m;
    bench_mck(MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return m;
}
static double sumall(double v)
{
    double m;
    bench_mck(MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return m;
}

static void record(res_t *r, const rmc_gemm_stats_t *st, int np)
{
    double f = st->flops, mx = maxall(f), sum = sumall(f);
    r->imb = sum > 0 ? mx / (sum / np) : 1;
    r->flops = sum;
    r->split = *st;
    r->split.total = maxall(st->total);
    r->split.compute = maxall(st->compute);
    r->split.comm_wait = maxall(st->comm_wait);
    r->split.accumulate = maxall(st->accumulate);
    r->split.imbalance = maxall(st->imbalance);
}

/* A dense k x n matrix on d filled in place with a pattern. */
static void fill_dense(rmc_matrix_h m)
{
    rmc_dist_h d = rmc_matrix_dist(m);
    for (int64_t t = 0; t < rmc_dist_ntiles(d); t++) {
        int64_t lo[2], hi[2];
        int owner;
        bench_ck(rmc_dist_tile(d, t, lo, hi, &owner), "rmc_dist_tile");
        if (owner != rmc_rank())
            continue;
        void *p;
        bench_ck(rmc_matrix_tile_local(m, t, &p), "rmc_matrix_tile_local");
        double *e = p;
        for (int64_t i = lo[0]; i < hi[0]; i++)
            for (int64_t j = lo[1]; j < hi[1]; j++)
                *e++ = (double)((i * 5 + j * 3) % 11 - 5) / 4.0;
    }
    bench_ck(rmc_barrier(), "rmc_barrier");
}

/* The weight of element (i, j) in the checksums: a value in a wrong place changes them. */
static double pos_weight(int64_t i, int64_t j)
{
    return (double)((i * 3 + j) % 7 + 1);
}

/* A checksum of C (every rank's tiles, each element weighted by its position: the same whatever
 * the distribution), compared between the algorithms. */
static double dense_sum(rmc_matrix_h m)
{
    rmc_dist_h d = rmc_matrix_dist(m);
    double s = 0;
    for (int64_t t = 0; t < rmc_dist_ntiles(d); t++) {
        int64_t lo[2], hi[2];
        int owner;
        rmc_dist_tile(d, t, lo, hi, &owner);
        if (owner != rmc_rank())
            continue;
        void *p;
        rmc_matrix_tile_local(m, t, &p);
        const double *e = p;
        for (int64_t i = lo[0]; i < hi[0]; i++) /* weights of the global position */
            for (int64_t j = lo[1]; j < hi[1]; j++)
                s += *e++ * pos_weight(i, j);
    }
    return sumall(s);
}

typedef struct setup {
    int scale, ef, np;
    int64_t n;
    rmc_dist_h dv, ds;     /* the variants' tiles, SUMMA's tiles (n x n) */
    rmc_spmatrix_h av, as; /* A on each */
} setup_t;

static void make_setup(setup_t *s, int scale, int ef, int np)
{
    s->scale = scale;
    s->ef = ef;
    s->np = np;
    s->n = (int64_t)1 << scale;
    int g[2];
    int64_t sq[2] = {1, 1}, dims[2] = {s->n, s->n}, t[2] = {s->n / 4, s->n / 4};
    bench_ck(rmc_dist_pgrid(2, sq, np, g), "rmc_dist_pgrid");
    bench_ck(rmc_dist_regular(2, dims, t, g, &s->dv), "rmc_dist_regular");
    bench_ck(rmc_dist_regular(2, dims, NULL, g, &s->ds), "rmc_dist_regular");
    bench_ck(rmc_spmatrix_rmat(s->dv, scale, ef, 0.6, 0.4 / 3, 0.4 / 3, 42, 0, &s->av),
             "rmc_spmatrix_rmat");
    bench_ck(rmc_spmatrix_rmat(s->ds, scale, ef, 0.6, 0.4 / 3, 0.4 / 3, 42, 0, &s->as),
             "rmc_spmatrix_rmat");
}

static void free_setup(setup_t *s)
{
    bench_ck(rmc_spmatrix_destroy(s->av), "rmc_spmatrix_destroy");
    bench_ck(rmc_spmatrix_destroy(s->as), "rmc_spmatrix_destroy");
    rmc_dist_free(s->dv);
    rmc_dist_free(s->ds);
}

/* SpMM with N columns, algorithm q; *check: the checksum of C (compared by the caller). */
static res_t spmm(const bench_opts_t *o, setup_t *s, int64_t ncol, int q, double *check)
{
    int summa = algos[q] == RMC_GEMM_SUMMA;
    rmc_dist_h d = summa ? s->ds : s->dv, db, dc;
    int64_t dims[2] = {s->n, ncol}, t[2] = {s->n / 4, ncol};
    int g[2];
    rmc_dist_proc_grid(d, g);
    bench_ck(rmc_dist_regular(2, dims, summa ? NULL : t, g, &db), "rmc_dist_regular");
    bench_ck(rmc_dist_regular(2, dims, summa ? NULL : t, g, &dc), "rmc_dist_regular");
    rmc_matrix_h B, C;
    bench_ck(rmc_matrix_create(db, RMC_ELEM_F64, &B), "rmc_matrix_create");
    bench_ck(rmc_matrix_create(dc, RMC_ELEM_F64, &C), "rmc_matrix_create");
    rmc_dist_free(db);
    rmc_dist_free(dc);
    fill_dense(B);
    double sec[BENCH_MAX_REPS];
    res_t r = {0};
    rmc_gemm_stats_t st;
    for (int rep = 0; rep < o->reps; rep++) {
        bench_ck(rmc_barrier(), "rmc_barrier");
        double t0 = wtime();
        bench_ck(rmc_spmatrix_spmm(1.0, summa ? s->as : s->av, B, 0.0, C, algos[q], &st),
                 "rmc_spmatrix_spmm");
        sec[rep] = maxall(wtime() - t0);
    }
    record(&r, &st, s->np);
    r.sec = bench_median(sec, (size_t)o->reps);
    *check = dense_sum(C);
    bench_ck(rmc_matrix_destroy(B), "rmc_matrix_destroy");
    bench_ck(rmc_matrix_destroy(C), "rmc_matrix_destroy");
    return r;
}

/* SpGEMM A A, algorithm q; *nnz, *check: C's nonzeros and value checksum. */
static res_t spgemm(const bench_opts_t *o, setup_t *s, int q, int64_t *nnz, double *check)
{
    int summa = algos[q] == RMC_GEMM_SUMMA;
    rmc_spmatrix_h A = summa ? s->as : s->av, C;
    bench_ck(rmc_spmatrix_create(summa ? s->ds : s->dv, 0, &C), "rmc_spmatrix_create");
    double sec[BENCH_MAX_REPS];
    res_t r = {0};
    rmc_gemm_stats_t st;
    for (int rep = 0; rep < o->reps; rep++) {
        bench_ck(rmc_barrier(), "rmc_barrier");
        double t0 = wtime();
        bench_ck(rmc_spmatrix_spgemm(A, A, C, algos[q], RMC_SPA_AUTO, &st), "rmc_spmatrix_spgemm");
        sec[rep] = maxall(wtime() - t0);
    }
    record(&r, &st, s->np);
    r.sec = bench_median(sec, (size_t)o->reps);
    bench_ck(rmc_spmatrix_nnz(C, nnz), "rmc_spmatrix_nnz");
    /* a checksum of this rank's tiles' values, each weighted by its global position (pos_weight,
     * as in dense_sum) */
    rmc_dist_h d = rmc_spmatrix_dist(C);
    double cs = 0;
    for (int64_t t = 0; t < rmc_dist_ntiles(d); t++) {
        rmc_csr_t v;
        if (rmc_spmatrix_tile_view(C, t, &v) != RMC_OK)
            continue;
        int owner;
        int64_t lo[2], hi[2];
        rmc_dist_tile(d, t, lo, hi, &owner);
        if (owner != rmc_rank())
            continue;
        for (int64_t r = 0; r < v.nrows; r++) {
            int64_t b = v.idx64 ? ((int64_t *)v.rowptr)[r] : ((int32_t *)v.rowptr)[r];
            int64_t e = v.idx64 ? ((int64_t *)v.rowptr)[r + 1] : ((int32_t *)v.rowptr)[r + 1];
            for (int64_t k = b; k < e; k++) {
                int64_t col =
                    lo[1] + (v.idx64 ? ((int64_t *)v.colind)[k] : ((int32_t *)v.colind)[k]);
                cs += v.val[k] * pos_weight(lo[0] + r, col);
            }
        }
    }
    *check = sumall(cs);
    bench_ck(rmc_spmatrix_destroy(C), "rmc_spmatrix_destroy");
    return r;
}

static void want_close(double a, double b, double tol, const char *what, int scale)
{
    if (!(fabs(a - b) <= tol * (1 + fabs(b))))
        bench_fail("%s at scale %d: checksum %.17g, SUMMA's %.17g", what, scale, a, b);
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_spmul", 14, 17, &o);
    if (prc)
        return prc > 0;
    if (o.quick && o.min_size == 14 && o.max_size == 17) {
        o.min_size = 12;
        o.max_size = 14;
    }
    o.size_factor = 0; /* scales go up by one */
    if (o.reps > 5 && !o.quick)
        o.reps = 3;
    int rank, np;
    if (bench_mpi_start(&argc, &argv, "bench_spmul", &rank, &np, NULL))
        return 1;
    bench_ck(rmc_init(MPI_COMM_WORLD), "rmc_init");
    int ef = 8;
    const char *e = getenv("RMC_BENCH_EF");
    if (e && atoi(e) > 0)
        ef = atoi(e);
    char peers[256];
    snprintf(peers, sizeof(peers),
             "RMC %s rmc_spmatrix_spmm / _spgemm; SUMMA: RMC's bulk-synchronous MPI baseline "
             "(row / column broadcasts), same local kernels",
             rmc_version());
    bench_header(&o, "sparse multiplication on R-MAT (a = 0.6, b = c = d = 0.4/3)", peers);
    static const int64_t cols[2] = {128, 512};
    bench_table_t *t[4];
    char title[200];
    for (int k = 0; k < 3; k++) {
        snprintf(title, sizeof(title), "%s: ms (median of %d, slowest rank)",
                 k < 2 ? (k ? "SpMM, N = 512" : "SpMM, N = 128") : "SpGEMM A A", o.reps);
        t[k] = bench_table_new(k < 2 ? (k ? "spmm512" : "spmm128") : "spgemm", "scale", title);
        for (int q = 0; q < NALGO; q++)
            bench_table_col(t[k], aname[q], "ms");
        int best = bench_table_col(t[k], "RMC best", "ms");
        bench_table_ratio(t[k], "SUMMA/best", NALGO - 1, best, BENCH_RATIO_X);
        bench_table_plot(t[k], 0, 1, "ms (log)");
    }
    t[3] = bench_table_new("split", "case",
                           "time split at the largest scale, ms (max over ranks "
                           "per part); imbalance = max/mean flops");
    int cs[7];
    static const char *const sn[7] = {"total",   "compute",        "comm wait", "accumulate",
                                      "barrier", "flop imbalance", "GF/s"};
    for (int k = 0; k < 7; k++)
        cs[k] = bench_table_col(t[3], sn[k], k == 5 ? "x" : k == 6 ? "GF/s" : "ms");
    int last = 0;
    for (size_t sc = o.min_size; sc <= o.max_size; sc++)
        last = (int)sc;
    double bmem = bench_roof_mem_bw(), bnet = bench_roof_net_bw();
    for (size_t sc = o.min_size; sc <= o.max_size; sc++) {
        setup_t s;
        make_setup(&s, (int)sc, ef, np);
        char lab[16];
        snprintf(lab, sizeof(lab), "%zu", sc);
        int rows[3];
        for (int k = 0; k < 3; k++)
            rows[k] = bench_table_row(t[k], lab, (double)sc);
        for (int k = 0; k < 3; k++) {
            res_t r[NALGO];
            double chk[NALGO];
            int64_t nnz[NALGO];
            double best = INFINITY;
            for (int q = NALGO - 1; q >= 0; q--) { /* SUMMA first: the reference */
                r[q] =
                    k < 2 ? spmm(&o, &s, cols[k], q, &chk[q]) : spgemm(&o, &s, q, &nnz[q], &chk[q]);
                if (q < NALGO - 1) {
                    want_close(chk[q], chk[NALGO - 1], 1e-9, aname[q], (int)sc);
                    if (k == 2 && nnz[q] != nnz[NALGO - 1])
                        bench_fail("SpGEMM %s at scale %zu: %lld nonzeros, SUMMA %lld", aname[q],
                                   sc, (long long)nnz[q], (long long)nnz[NALGO - 1]);
                    if (r[q].sec < best)
                        best = r[q].sec;
                }
                bench_table_set(t[k], rows[k], q, r[q].sec * 1e3);
            }
            bench_table_set(t[k], rows[k], NALGO, best * 1e3);
            if ((int)sc == last)
                for (int q = 0; q < NALGO; q++) {
                    char cl[48];
                    snprintf(cl, sizeof(cl), "%s %s",
                             k < 2 ? (k ? "SpMM512" : "SpMM128") : "SpGEMM", aname[q]);
                    int row = bench_table_row(t[3], cl, NAN);
                    rmc_gemm_stats_t *p = &r[q].split;
                    double v[7] = {p->total * 1e3,
                                   p->compute * 1e3,
                                   p->comm_wait * 1e3,
                                   p->accumulate * 1e3,
                                   p->imbalance * 1e3,
                                   r[q].imb,
                                   r[q].flops / r[q].sec * 1e-9};
                    for (int c = 0; c < 7; c++)
                        bench_table_set(t[3], row, cs[c], v[c]);
                }
            int64_t annz;
            bench_ck(rmc_spmatrix_nnz(s.av, &annz), "rmc_spmatrix_nnz");
            if (k == 2)
                bench_table_note(t[2], "scale %zu: nnz(A) %lld, nnz(A A) %lld", sc, (long long)annz,
                                 (long long)nnz[NALGO - 1]);
            if ((int)sc == last) { /* the inter-node roofline of §7.6 */
                double m = (double)s.n, kk = m, p = np, w = 8, sp = sqrt(p);
                double d = (double)annz / (m * kk), flops = r[0].flops, gf = flops / best * 1e-9;
                double ai_loc, ai_net;
                if (k < 2) {
                    double n = (double)cols[k], f = 2 * (d * m * kk / p) * (n / sp);
                    ai_net = f / (w * (2 * d * m * kk / p + m / sp + 1 + kk * n / p));
                    ai_loc = f / (w * (2 * d * m * kk / p + m / sp + 1 + m * n / p + kk * n / p));
                } else {
                    double cf = nnz[NALGO - 1] > 0 ? flops / 2 / (double)nnz[NALGO - 1] : 1;
                    ai_net = flops / p / (w * (2 * (2 * d * m * kk / p) + 2 * (m / sp + 1)));
                    ai_loc = cf / ((3 + 2 * cf) * 12);
                }
                double pk_loc = ai_loc * bmem, pk_net = fmin(pk_loc, ai_net * bnet);
                bench_table_note(t[k],
                                 "roofline (§7.6) at scale %d, p = %d: memory %.1f GB/s, "
                                 "inter-rank %.2f GB/s; local AI %.3f flop/B -> %.2f GF/s, "
                                 "inter-node AI %.3f flop/B -> %.2f GF/s per rank (%.2f all); "
                                 "measured (best RMC): %.2f GF/s",
                                 last, np, bmem, bnet, ai_loc, pk_loc, ai_net, pk_net, pk_net * p,
                                 gf);
            }
        }
        free_setup(&s);
    }
    bench_table_note(t[0], "RMC variants: tiles of n/4 (block-cyclic over the chosen process "
                           "grid); SUMMA: one tile per process");
    bench_finish(&o, t, 4);
    bench_ck(rmc_finalize(), "rmc_finalize");
    MPI_Finalize();
    return 0;
}
