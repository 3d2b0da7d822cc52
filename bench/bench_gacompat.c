/* bench_gacompat: ga-compat against Global Arrays 5.8.2 (issue 14's benchmark). One source, built
 * three ways (bench/Makefile.inc):
 *   bench/bench_gacompat      on ga-compat (RMC's native GA API)
 *   bench/bench_gacompat_ga   on Debian's GA 5.8.2 over ARMCI-MPI (ARMCI_USE_WIN_ALLOCATE=0)
 *   bench/bench_gacompat_rmc  on the same GA over RMC's libarmci
 * scripts/bench-gacompat.sh runs the three at 2 ranks in both node modes and merges their rows into
 * one table with the ratios (ga-compat against each GA).
 *
 * Rows (CSV on stdout: op,size,us = median over --reps repetitions of the time per operation):
 * NGA_Put / NGA_Get / NGA_Acc of 8 B .. 1 MiB contiguous doubles into rank 1's block of a 1-D array
 * and of 128^2 / 512^2 patches of rank 1's block of a 1024^2 array (rank 0 moves the data while
 * rank 1 waits in GA_Sync; puts and accumulates are completed by GA_Fence inside the timed loop),
 * NGA_Read_inc on a counter element owned by rank 1, NGA_Scatter / NGA_Gather of 10^5 random
 * elements of rank 1's block, and the collective GA_Sync, GA_Transpose, GA_Ddot (1024^2),
 * GA_Dgemm (1024^2, 2048^2) and one iteration of the SCF mini-app (apps/scf, n 256, block 32).
 * Every operation's result is checked once before it is timed: wrong data aborts the run. */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <ga.h>
#include <macdecls.h>
#include "bench_util.h"
#include "scf.h"

#if defined(BENCH_ON_GACOMPAT)
#define IMPL "ga-compat"
#define PROG "bench_gacompat"
#elif defined(BENCH_ON_RMC_ARMCI)
#define IMPL "GA 5.8.2 on RMC's libarmci"
#define PROG "bench_gacompat_rmc"
#else
#define IMPL "GA 5.8.2 on ARMCI-MPI"
#define PROG "bench_gacompat_ga"
#endif

#define MAXB (1 << 20) /* largest contiguous transfer */
#define N2   1024      /* side of the 2-D array */
#define NSG  100000    /* scatter / gather elements */

typedef struct ctx {
    int me, np, reps;
    int g1, g2, cnt;    /* 1-D (np x 1 MiB), 2-D N2 x N2 doubles, counter (np longs) */
    int lo1, hi1;       /* rank 1's block of g1 */
    int lo2[2], hi2[2]; /* rank 1's block of g2 */
    double *buf;        /* MAXB bytes / 512^2 doubles */
    int *subs, **subp;  /* NSG subscripts in rank 1's block of g2 */
} ctx_t;

enum { OP_PUT, OP_GET, OP_ACC, OP_PUT2, OP_GET2, OP_ACC2, OP_RINC, OP_SCAT, OP_GATH };

/* One origin-side operation of rank 0; size: elements (1-D) or the patch side (2-D). */
static void one_op(ctx_t *c, int op, int size)
{
    int lo[2], hi[2], ld = 512, sub = 1; /* ld: 2-D patches (1-D transfers ignore it) */
    double one = 1.0;
    switch (op) {
    case OP_PUT:
    case OP_GET:
    case OP_ACC:
        lo[0] = c->lo1, hi[0] = c->lo1 + size - 1;
        if (op == OP_PUT)
            NGA_Put(c->g1, lo, hi, c->buf, &ld);
        else if (op == OP_GET)
            NGA_Get(c->g1, lo, hi, c->buf, &ld);
        else
            NGA_Acc(c->g1, lo, hi, c->buf, &ld, &one);
        break;
    case OP_PUT2:
    case OP_GET2:
    case OP_ACC2:
        lo[0] = c->lo2[0], lo[1] = c->lo2[1], hi[0] = lo[0] + size - 1, hi[1] = lo[1] + size - 1;
        if (op == OP_PUT2)
            NGA_Put(c->g2, lo, hi, c->buf, &ld);
        else if (op == OP_GET2)
            NGA_Get(c->g2, lo, hi, c->buf, &ld);
        else
            NGA_Acc(c->g2, lo, hi, c->buf, &ld, &one);
        break;
    case OP_RINC:
        (void)NGA_Read_inc(c->cnt, &sub, 1);
        break;
    case OP_SCAT:
        NGA_Scatter(c->g2, c->buf, c->subp, NSG);
        break;
    default:
        NGA_Gather(c->g2, c->buf, c->subp, NSG);
    }
}

static void agree_ok(int bad, const char *what)
{
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (all)
        bench_fail("%s on %s: wrong result", what, IMPL);
}

/* The pattern every element of g1 / g2 holds before a check: a value of its global index (exact in
 * a double), so data read from or written to a wrong place shows. */
static double pat1(long e)
{
    return 3.0 + 0.5 * (double)e;
}
static double pat2(long i, long j)
{
    return 0.25 + (double)(i * N2 + j);
}
/* What rank 0 puts / accumulates at buffer index k; a scatter's value is its element's own, so a
 * subscript listed twice holds one value whichever write lands last. */
static double put_val(size_t k)
{
    return 1e4 + (double)(k % 1000);
}
static double scat_val(const int *sub)
{
    return 1e7 + pat2(sub[0], sub[1]);
}

static double pat1_at(long e, long unused)
{
    (void)unused;
    return pat1(e);
}

/* Every rank writes f(i, j) into each element of its own block of g (NGA_Access: no
 * communication; a 1-D array's element e gets f(e, 0)). Collective. */
static void fill_fn(ctx_t *c, int g, double (*f)(long, long))
{
    int lo[2] = {0, 0}, hi[2] = {0, 0}, ld[1] = {1}; /* (1-D: one column) */
    NGA_Distribution(g, c->me, lo, hi);
    if (lo[0] <= hi[0] && lo[1] <= hi[1]) {
        double *p = NULL;
        NGA_Access(g, lo, hi, &p, ld);
        for (int i = lo[0]; i <= hi[0]; i++)
            for (int j = lo[1]; j <= hi[1]; j++)
                p[(long)(i - lo[0]) * ld[0] + (j - lo[1])] = f(i, j);
        NGA_Release_update(g, lo, hi);
    }
    GA_Sync();
}

/* Checks one origin-side operation once (collective): every block is set to the pattern, rank 0
 * runs the operation; a get's or gather's values are compared with the pattern at the elements it
 * read, and after a put, accumulate or scatter the owner (rank 1) compares every element of its
 * block, reached through NGA_Access (not through the library's get), with what it must hold. */
static void verify(ctx_t *c, int op, int size)
{
    int bad = 0, twod = op == OP_PUT2 || op == OP_GET2 || op == OP_ACC2;
    int g = op <= OP_ACC ? c->g1 : c->g2;
    size_t n = op <= OP_ACC ? (size_t)size : twod ? (size_t)size * 512 : NSG;
    if (op == OP_RINC) {
        int sub = 1;
        GA_Zero(c->cnt);
        if (c->me == 0)
            for (long i = 0; i < 3; i++)
                bad |= NGA_Read_inc(c->cnt, &sub, 1) != i;
        GA_Sync();
        agree_ok(bad, "NGA_Read_inc");
        return;
    }
    fill_fn(c, g, op > OP_ACC ? pat2 : pat1_at);
    int get = op == OP_GET || op == OP_GET2 || op == OP_GATH, acc = op == OP_ACC || op == OP_ACC2;
    if (c->me == 0) {
        for (size_t i = 0; i < n; i++)
            c->buf[i] = get ? -1.0 : op == OP_SCAT ? scat_val(c->subp[i]) : put_val(i);
        GA_Init_fence();
        one_op(c, op, size);
        GA_Fence();
        for (size_t i = 0; get && i < n; i++) {
            if (twod && (int)(i % 512) >= size)
                continue;
            double want = op == OP_GET ? pat1(c->lo1 + (long)i)
                          : op == OP_GET2
                              ? pat2(c->lo2[0] + (long)(i / 512), c->lo2[1] + (long)(i % 512))
                              : pat2(c->subp[i][0], c->subp[i][1]);
            bad |= c->buf[i] != want;
        }
    }
    GA_Sync();
    if (!get && c->me == 1) {
        int lo[2], hi[2], ld[1] = {0};
        double *p = NULL;
        NGA_Distribution(g, 1, lo, hi);
        NGA_Access(g, lo, hi, &p, ld);
        if (op == OP_SCAT) {
            long rows = hi[0] - lo[0] + 1, cols = hi[1] - lo[1] + 1;
            char *hit = calloc((size_t)(rows * cols), 1);
            if (!hit)
                bench_fail("out of memory");
            for (size_t k = 0; k < NSG; k++)
                hit[(long)(c->subp[k][0] - lo[0]) * cols + (c->subp[k][1] - lo[1])] = 1;
            for (long i = 0; i < rows; i++)
                for (long j = 0; j < cols; j++) {
                    int sub[2] = {lo[0] + (int)i, lo[1] + (int)j};
                    double want = hit[i * cols + j] ? scat_val(sub) : pat2(sub[0], sub[1]);
                    bad |= p[i * ld[0] + j] != want;
                }
            free(hit);
        } else if (twod) {
            for (int i = lo[0]; i <= hi[0]; i++)
                for (int j = lo[1]; j <= hi[1]; j++) {
                    int r = i - c->lo2[0], q = j - c->lo2[1];
                    int in = r >= 0 && r < size && q >= 0 && q < size;
                    double v = in ? put_val((size_t)r * 512 + (size_t)q) : 0.0;
                    double want = !in ? pat2(i, j) : acc ? pat2(i, j) + v : v;
                    bad |= p[(long)(i - lo[0]) * ld[0] + (j - lo[1])] != want;
                }
        } else {
            for (int e = lo[0]; e <= hi[0]; e++) {
                long k = e - c->lo1;
                int in = k >= 0 && k < size;
                double want = !in   ? pat1(e)
                              : acc ? pat1(e) + put_val((size_t)k)
                                    : put_val((size_t)k);
                bad |= p[e - lo[0]] != want;
            }
        }
        NGA_Release(g, lo, hi);
    }
    GA_Sync();
    agree_ok(bad, "NGA_Put/Get/Acc/Scatter/Gather");
}

/* Small-integer matrices for the collectives' checks (exact sums; fill_fn writes them). */
static double mat_a(long i, long j)
{
    return (double)((i + 2 * j) % 7 - 3);
}
static double mat_b(long i, long j)
{
    return (double)((2 * i + j) % 5 - 2);
}

/* C = A B of mat_a and mat_b (n x n) checked at 32 random elements by rank 0 (collective). */
static void check_gemm(ctx_t *c, int gc, int n, const char *what)
{
    int bad = 0;
    if (c->me == 0) {
        uint64_t st = 99;
        for (int t = 0; t < 32; t++) {
            int e[2] = {(int)(bench_splitmix64(&st) % (uint64_t)n),
                        (int)(bench_splitmix64(&st) % (uint64_t)n)},
                ld = 1;
            double want = 0, got = 0;
            for (long k = 0; k < n; k++)
                want += mat_a(e[0], k) * mat_b(k, e[1]);
            NGA_Get(gc, e, e, &got, &ld);
            bad |= got != want;
        }
    }
    agree_ok(bad, what);
}

/* Median microseconds per operation of rank 0 (collective). */
static double measure(ctx_t *c, int op, int size, long iters)
{
    double s[BENCH_MAX_REPS];
    GA_Sync();
    if (c->me == 0)
        for (int r = -1; r < c->reps; r++) { /* r = -1: warm-up */
            long it = r < 0 ? iters / 8 + 1 : iters;
            uint64_t t0 = bench_now_ns();
            GA_Init_fence();
            for (long i = 0; i < it; i++)
                one_op(c, op, size);
            GA_Fence();
            if (r >= 0)
                s[r] = (double)(bench_now_ns() - t0) * 1e-3 / (double)it;
        }
    GA_Sync();
    return c->me == 0 ? bench_median(s, (size_t)c->reps) : 0.0;
}

static void row(ctx_t *c, const char *op, const char *size, double us)
{
    if (c->me == 0)
        printf("%s,%s,%.4g\n", op, size, us);
    fflush(stdout);
}

enum { C_SYNC, C_TRANSPOSE, C_DDOT, C_DGEMM };

/* Median microseconds of a collective operation (every rank runs it; rank 0's times). */
static double measure_coll(ctx_t *c, int what, int ga, int gb, int gc, int n, long iters)
{
    double s[BENCH_MAX_REPS], sink = 0.0;
    for (int r = -1; r < c->reps; r++) {
        long it = r < 0 ? 1 : iters;
        GA_Sync();
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < it; i++)
            switch (what) {
            case C_SYNC:
                GA_Sync();
                break;
            case C_TRANSPOSE:
                GA_Transpose(ga, gb);
                break;
            case C_DDOT:
                sink += GA_Ddot(ga, gb);
                break;
            default:
                GA_Dgemm('N', 'N', n, n, n, 1.0, ga, gb, 0.0, gc);
            }
        if (r >= 0)
            s[r] = (double)(bench_now_ns() - t0) * 1e-3 / (double)it;
    }
    if (sink != sink)
        bench_fail("GA_Ddot returned NaN");
    return bench_median(s, (size_t)c->reps);
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, PROG, 8, MAXB, &o);
    if (prc)
        return prc > 0;
    ctx_t c;
    memset(&c, 0, sizeof(c));
    if (bench_mpi_start(&argc, &argv, PROG, &c.me, &c.np, NULL))
        return 1;
    GA_Initialize();
    if (!MA_initialized() && !MA_init(C_DBL, 1 << 22, 1 << 22))
        bench_fail("MA_init failed");
    double rtt = bench_core_round_trip_ns(); /* (a comment line: bench-gacompat.sh lists them) */
    double rma = bench_mpi_rma_passive_us();
    if (c.me == 0 && rtt > 0)
        printf("# machine state: one cache line's round trip between two cores %.0f ns\n", rtt);
    if (c.me == 0 && rma >= 0)
        printf("# MPI RMA: a get from a rank computing outside MPI for 5 ms took %.0f us\n", rma);
    c.reps = o.reps;
    int d1 = c.np * (MAXB / 8), d2[2] = {N2, N2};
    c.g1 = NGA_Create(C_DBL, 1, &d1, "contiguous", NULL);
    c.g2 = NGA_Create(C_DBL, 2, d2, "patches", NULL);
    c.cnt = NGA_Create(C_LONG, 1, &c.np, "counter", NULL);
    if (!c.g1 || !c.g2 || !c.cnt)
        bench_fail("NGA_Create failed");
    NGA_Distribution(c.g1, 1, &c.lo1, &c.hi1);
    NGA_Distribution(c.g2, 1, c.lo2, c.hi2);
    int clo = 0, chi = -1;
    NGA_Distribution(c.cnt, 1, &clo, &chi);
    if (c.hi1 - c.lo1 + 1 < MAXB / 8 || c.hi2[0] - c.lo2[0] + 1 < 512 ||
        c.hi2[1] - c.lo2[1] + 1 < 512 || clo > 1 || chi < 1)
        bench_fail("unexpected distribution: rank 1 owns [%d:%d], [%d:%d, %d:%d], counter %d:%d",
                   c.lo1, c.hi1, c.lo2[0], c.hi2[0], c.lo2[1], c.hi2[1], clo, chi);
    c.buf = bench_alloc(sizeof(double) * 512 * 512); /* >= MAXB, NSG doubles */
    c.subs = bench_alloc(sizeof(int) * 2 * NSG);
    c.subp = bench_alloc(sizeof(int *) * NSG);
    uint64_t st = 14;
    for (int i = 0; i < NSG; i++) {
        c.subs[2 * i] =
            c.lo2[0] + (int)(bench_splitmix64(&st) % (uint64_t)(c.hi2[0] - c.lo2[0] + 1));
        c.subs[2 * i + 1] =
            c.lo2[1] + (int)(bench_splitmix64(&st) % (uint64_t)(c.hi2[1] - c.lo2[1] + 1));
        c.subp[i] = &c.subs[2 * i];
    }
    if (c.me == 0) {
        printf("# %s on %s: %d ranks, node mode %s, median of %d repetitions; rank 1's blocks "
               "[%d:%d] and [%d:%d, %d:%d]\n",
               PROG, IMPL, c.np, bench_node_mode(), c.reps, c.lo1, c.hi1, c.lo2[0], c.hi2[0],
               c.lo2[1], c.hi2[1]);
        printf("op,size,us\n");
    }

    char lab[BENCH_LABEL_LEN];
    static const char *name1[3] = {"put", "get", "acc"};
    static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, MAXB};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t b = sizes[si];
        long it = bench_iters_for_size(&o, b, 8u << 20, 8, 2000);
        for (int op = OP_PUT; op <= OP_ACC; op++) {
            verify(&c, op, (int)(b / 8));
            row(&c, name1[op], bench_size_label(b, lab), measure(&c, op, (int)(b / 8), it));
        }
    }
    static const char *name2[3] = {"put2d", "get2d", "acc2d"};
    for (int side = 128; side <= 512; side *= 4) {
        size_t b = (size_t)side * (size_t)side * 8;
        long it = bench_iters_for_size(&o, b, 16u << 20, 4, 500);
        snprintf(lab, sizeof(lab), "%dx%d", side, side);
        for (int op = OP_PUT2; op <= OP_ACC2; op++) {
            verify(&c, op, side);
            row(&c, name2[op - OP_PUT2], lab, measure(&c, op, side, it));
        }
    }
    verify(&c, OP_RINC, 1);
    row(&c, "read_inc", "8", measure(&c, OP_RINC, 1, bench_iters(&o, 2000)));
    verify(&c, OP_SCAT, 0);
    row(&c, "scatter", "100000", measure(&c, OP_SCAT, 0, bench_iters(&o, 20)));
    verify(&c, OP_GATH, 0);
    row(&c, "gather", "100000", measure(&c, OP_GATH, 0, bench_iters(&o, 20)));
    row(&c, "sync", "-", measure_coll(&c, C_SYNC, 0, 0, 0, 0, bench_iters(&o, 2000)));

    /* collectives on N2 x N2 arrays */
    int ga = c.g2, gb = GA_Duplicate(c.g2, "B"), gc = GA_Duplicate(c.g2, "C");
    if (!gb || !gc)
        bench_fail("GA_Duplicate failed");
    fill_fn(&c, ga, mat_a);
    fill_fn(&c, gb, mat_b);
    GA_Zero(gc);
    GA_Transpose(ga, gc); /* gc(i, j) = a(j, i), at 32 random elements */
    int bad = 0;
    if (c.me == 0) {
        uint64_t st = 7;
        for (int t = 0; t < 32; t++) {
            int e[2] = {(int)(bench_splitmix64(&st) % N2), (int)(bench_splitmix64(&st) % N2)},
                ldx = 1;
            double x = 0;
            NGA_Get(gc, e, e, &x, &ldx);
            bad |= x != mat_a(e[1], e[0]);
        }
    }
    agree_ok(bad, "GA_Transpose");
    snprintf(lab, sizeof(lab), "%dx%d", N2, N2);
    row(&c, "transpose", lab, measure_coll(&c, C_TRANSPOSE, ga, gc, 0, N2, bench_iters(&o, 8)));
    double dot = 0; /* every rank's sum of a .* b, exact in integers */
    for (long i = 0; i < N2; i++)
        for (long j = 0; j < N2; j++)
            dot += mat_a(i, j) * mat_b(i, j);
    agree_ok(GA_Ddot(ga, gb) != dot, "GA_Ddot");
    row(&c, "ddot", lab, measure_coll(&c, C_DDOT, ga, gb, 0, N2, bench_iters(&o, 40)));
    GA_Dgemm('N', 'N', N2, N2, N2, 1.0, ga, gb, 0.0, gc);
    check_gemm(&c, gc, N2, "GA_Dgemm");
    row(&c, "dgemm", lab, measure_coll(&c, C_DGEMM, ga, gb, gc, N2, 1));
    GA_Destroy(gb);
    GA_Destroy(gc);
    if (!o.quick) {
        int d4[2] = {2 * N2, 2 * N2};
        int a4 = NGA_Create(C_DBL, 2, d4, "A4", NULL), b4 = GA_Duplicate(a4, "B4"),
            c4 = GA_Duplicate(a4, "C4");
        fill_fn(&c, a4, mat_a);
        fill_fn(&c, b4, mat_b);
        GA_Dgemm('N', 'N', 2 * N2, 2 * N2, 2 * N2, 1.0, a4, b4, 0.0, c4);
        check_gemm(&c, c4, 2 * N2, "GA_Dgemm (2048)");
        snprintf(lab, sizeof(lab), "%dx%d", 2 * N2, 2 * N2);
        row(&c, "dgemm", lab, measure_coll(&c, C_DGEMM, a4, b4, c4, 2 * N2, 1));
        GA_Destroy(c4);
        GA_Destroy(b4);
        GA_Destroy(a4);
    }

    /* SCF: median iteration time of one run (the first, checked run is the warm-up) */
    scf_params_t p = {.n = 256, .b = 32, .iters = 3, .check = 1, .lambda = 0.5};
    scf_result_t r;
    if (scf_run(&p, &r))
        bench_fail("SCF on %s: the check against the serial reference failed", IMPL);
    p.check = 0;
    p.iters = c.reps < 3 ? 3 : c.reps;
    scf_run(&p, &r);
    row(&c, "scf_iter", "n256b32", 1e6 * bench_median(r.seconds, (size_t)p.iters));

    GA_Destroy(c.cnt);
    GA_Destroy(c.g2);
    GA_Destroy(c.g1);
    free(c.buf);
    free(c.subs);
    free(c.subp);
    GA_Terminate();
    MPI_Finalize();
    return 0;
}
