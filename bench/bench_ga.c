/* bench_ga: Global Arrays on RMC against Global Arrays on ARMCI-MPI. One source, Debian's prebuilt
 * GA library (libga-mpich.a, built for ARMCI-MPI) linked twice:
 *   bench/bench_ga       with RMC's libarmci      (column "RMC-ARMCI")
 *   bench/bench_ga_ampi  with ARMCI-MPI 0.3.1     (column "ARMCI-MPI"; ARMCI_USE_WIN_ALLOCATE=0)
 * scripts/bench-armci.sh --ga runs both at 2 ranks in both node modes and merges the tables (as it
 * does for bench_armci).
 *
 * A 1024x1024 double global array (GA's default distribution over 2 ranks); rank 0 moves patches
 * of rank 1's block (NGA_Get / NGA_Put / NGA_Acc with scale 1.0) while rank 1 waits in GA_Sync;
 * NGA_Read_inc on a counter element owned by rank 1. Every timed loop is bracketed by GA_Init_fence
 * and GA_Fence, so completion of the puts and accumulates at the target is charged to the loop.
 * Before each (op, size) is timed its result is checked where it lands: wrong data aborts.
 *
 * Tables: "latency" (1-element get / put / acc and read_inc; us), "bw_get" / "bw_put" / "bw_acc"
 * (n x n patches, GB/s). Medians of --reps repetitions.
 */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <ga.h>
#include <macdecls.h>
#include "bench_util.h"

#ifdef BENCH_GA_RMC
#define IMPL "RMC-ARMCI"
#define PROG "bench_ga"
#else
#define IMPL "ARMCI-MPI"
#define PROG "bench_ga_ampi"
#endif

#define N 1024 /* global array N x N doubles */
enum { OP_GET, OP_PUT, OP_ACC, OP_RINC, NOPS };
static const char *op_label[NOPS] = {"get", "put", "acc", "read_inc"};

typedef struct ctx {
    int rank, g, cnt;
    int lo1[2], hi1[2]; /* rank 1's block */
    double *buf;        /* local patch buffer, ld = MAXSIDE */
} ctx_t;
#define MAXSIDE 512

static void one_op(ctx_t *c, int op, int n)
{
    int lo[2] = {c->lo1[0], c->lo1[1]}, hi[2] = {c->lo1[0] + n - 1, c->lo1[1] + n - 1};
    int ld = MAXSIDE, sub = 1;
    double one = 1.0;
    switch (op) {
    case OP_GET:
        NGA_Get(c->g, lo, hi, c->buf, &ld);
        break;
    case OP_PUT:
        NGA_Put(c->g, lo, hi, c->buf, &ld);
        break;
    case OP_ACC:
        NGA_Acc(c->g, lo, hi, c->buf, &ld, &one);
        break;
    default:
        (void)NGA_Read_inc(c->cnt, &sub, 1);
    }
}

/* Checks one operation on an n x n patch (collective): the target block is filled with a known
 * pattern, rank 0 runs the op once, then the result is read back and compared. */
static void verify(ctx_t *c, int op, int n)
{
    int lo[2] = {c->lo1[0], c->lo1[1]}, hi[2] = {c->lo1[0] + n - 1, c->lo1[1] + n - 1};
    int ld = MAXSIDE, bad = 0, sub = 1;
    static double ref[MAXSIDE * MAXSIDE];
    if (op == OP_RINC) {
        long zero = 0, got = -1;
        if (c->rank == 0)
            NGA_Put(c->cnt, &sub, &sub, &zero, &ld);
        GA_Sync();
        if (c->rank == 0) {
            for (int i = 0; i < 3; i++)
                bad |= NGA_Read_inc(c->cnt, &sub, 1) != i;
            NGA_Get(c->cnt, &sub, &sub, &got, &ld);
            bad |= got != 3;
        }
    } else {
        /* pattern in the patch (by rank 0, then synchronized) */
        if (c->rank == 0) {
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    ref[i * MAXSIDE + j] = (double)((i * 31 + j * 7) % 1000);
            NGA_Put(c->g, lo, hi, ref, &ld);
        }
        GA_Sync();
        if (c->rank == 0) {
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    c->buf[i * MAXSIDE + j] = op == OP_GET ? -1.0 : (double)(i + j + 1);
            GA_Init_fence();
            one_op(c, op, n);
            GA_Fence();
            if (op != OP_GET)
                NGA_Get(c->g, lo, hi, c->buf, &ld);
            for (int i = 0; i < n && !bad; i++)
                for (int j = 0; j < n && !bad; j++) {
                    double r = ref[i * MAXSIDE + j];
                    double e = op == OP_GET   ? r
                               : op == OP_PUT ? (double)(i + j + 1)
                                              : r + (double)(i + j + 1);
                    bad |= c->buf[i * MAXSIDE + j] != e;
                }
        }
    }
    GA_Sync();
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (all)
        bench_fail("GA %s (%dx%d) on %s: wrong data", op_label[op], n, n, IMPL);
}

/* Median seconds per operation (rank 0; NAN elsewhere). Collective. */
static double measure(ctx_t *c, const bench_opts_t *o, int op, int n, long iters)
{
    double s[BENCH_MAX_REPS];
    GA_Sync();
    if (c->rank == 0)
        for (int r = -1; r < o->reps; r++) { /* r = -1: warm-up */
            long it = r < 0 ? iters / 8 + 1 : iters;
            uint64_t t0 = bench_now_ns();
            GA_Init_fence();
            for (long i = 0; i < it; i++)
                one_op(c, op, n);
            GA_Fence();
            if (r >= 0)
                s[r] = (double)(bench_now_ns() - t0) * 1e-9 / (double)it;
        }
    GA_Sync();
    return c->rank == 0 ? bench_median(s, (size_t)o->reps) : NAN;
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, PROG, 8, 8, &o);
    if (prc)
        return prc > 0;
    ctx_t c;
    memset(&c, 0, sizeof(c));
    int np = 0;
    if (bench_mpi_start(&argc, &argv, PROG, &c.rank, &np, NULL))
        return 1;
    GA_Initialize();
    if (!MA_initialized() && !MA_init(C_DBL, 1 << 22, 1 << 22))
        bench_fail("MA_init failed");
    int dims[2] = {N, N}, two = np;
    c.g = NGA_Create(C_DBL, 2, dims, "bench", NULL);
    c.cnt = NGA_Create(C_LONG, 1, &two, "counter", NULL); /* one element per rank */
    if (!c.g || !c.cnt)
        bench_fail("NGA_Create failed");
    GA_Zero(c.g);
    GA_Zero(c.cnt);
    NGA_Distribution(c.g, 1, c.lo1, c.hi1);
    int clo = 0, chi = -1;
    NGA_Distribution(c.cnt, 1, &clo, &chi);
    if (c.hi1[0] - c.lo1[0] + 1 < MAXSIDE || c.hi1[1] - c.lo1[1] + 1 < MAXSIDE || clo > 1 ||
        chi < 1)
        bench_fail("unexpected GA distribution: rank 1 owns [%d:%d, %d:%d], counter %d:%d",
                   c.lo1[0], c.hi1[0], c.lo1[1], c.hi1[1], clo, chi);
    c.buf = malloc(sizeof(double) * MAXSIDE * MAXSIDE);
    if (!c.buf)
        bench_fail("out of memory");

    char peers[512];
    snprintf(peers, sizeof(peers),
             "Global Arrays (Debian libga-mpich.a) on %s%s; rank 1's block [%d:%d, %d:%d]", IMPL,
#ifdef BENCH_GA_RMC
             " (RMC's libarmci on comm)",
#else
             " 0.3.1 (ARMCI_USE_WIN_ALLOCATE=0)",
#endif
             c.lo1[0], c.hi1[0], c.lo1[1], c.hi1[1]);
    bench_header(&o, "Global Arrays: NGA_Get/Put/Acc of rank 1's patches, NGA_Read_inc; origin 0",
                 peers);

    char title[256];
    long lat_it = bench_iters(&o, 5000);
    snprintf(title, sizeof(title),
             "latency [us] (1 double; read_inc: one long), median of %d reps x %ld ops + GA_Fence",
             o.reps, lat_it);
    bench_table_t *lat = bench_table_new("latency", "op", title);
    int lc = bench_table_col(lat, IMPL, "us");
    bench_table_plot(lat, 0, 1, "us (log)");
    for (int op = 0; op < NOPS; op++) {
        int row = bench_table_row(lat, op_label[op], NAN);
        verify(&c, op, 1);
        bench_table_set(lat, row, lc, 1e6 * measure(&c, &o, op, 1, lat_it));
    }

    static const char *bw_name[3] = {"bw_get", "bw_put", "bw_acc"};
    bench_table_t *bw[3];
    int bc[3];
    for (int k = 0; k < 3; k++) {
        snprintf(title, sizeof(title), "NGA_%s of n x n doubles [GB/s], median of %d reps",
                 k == 0   ? "Get"
                 : k == 1 ? "Put"
                          : "Acc",
                 o.reps);
        bw[k] = bench_table_new(bw_name[k], "patch", title);
        bc[k] = bench_table_col(bw[k], IMPL, "GB/s");
        bench_table_plot(bw[k], 1, 1, "GB/s (log)");
    }
    static const int sides[] = {4, 16, 64, 128, 256, MAXSIDE};
    for (size_t si = 0; si < sizeof(sides) / sizeof(sides[0]); si++) {
        int n = sides[si];
        size_t bytes = (size_t)n * (size_t)n * sizeof(double);
        if (o.quick && n > 256)
            continue;
        char lab[BENCH_LABEL_LEN];
        snprintf(lab, sizeof(lab), "%dx%d", n, n);
        long it = bench_iters_for_size(&o, bytes, 24u << 20, 4, 2000);
        for (int k = 0; k < 3; k++) {
            int row = bench_table_row(bw[k], lab, (double)bytes);
            verify(&c, k, n);
            bench_table_set(bw[k], row, bc[k], (double)bytes / measure(&c, &o, k, n, it) * 1e-9);
        }
    }

    bench_table_t *all[] = {lat, bw[0], bw[1], bw[2]};
    bench_finish(&o, all, 4);
    free(c.buf);
    GA_Destroy(c.g);
    GA_Destroy(c.cnt);
    GA_Terminate();
    MPI_Finalize();
    return 0;
}
