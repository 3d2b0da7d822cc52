/* bench_armci: the ARMCI API, RMC's libarmci against ARMCI-MPI, from ONE source compiled twice:
 *
 *   bench/bench_armci       RMC's armci.h + libarmci (-DBENCH_ARMCI_RMC); in this build the same
 *                           operations are also timed through RMC's native API on the same memory
 *                           (ARMCI_Malloc memory is an RMC region), column "native"
 *   bench/bench_armci_ampi  ARMCI-MPI 0.3.1's armci.h + libarmci-mpich, ARMCI_USE_WIN_ALLOCATE=0
 *                           set before ARMCI_Init (its default shared windows return wrong data on
 *                           this MPICH)
 *
 * scripts/bench-armci.sh runs both at 2 ranks in the real node mode and with RMC_NODE_SIZE=1 and
 * merges their CSV files into one table per measurement with the ratios.
 *
 * Rank 0 is the origin, rank 1 the target (it waits in ARMCI_Barrier, which lets RMC serve
 * requests). Every timed loop of blocking operations ends with one ARMCI_Fence(1) (native:
 * rmc_fence(1)), so each is charged for completion at the target. Before an (operation, size) is
 * timed its result is checked once where it lands (put / acc: by the target on its own memory after
 * a barrier; get: by the origin; rmw: the counter's final value): wrong data aborts the benchmark.
 * Medians of --reps repetitions.
 *
 * Tables: "latency" (8-byte contiguous put / get / acc, strided put / get / acc of a 2x2 double
 * patch, fetch-and-add int / long, swap, non-blocking put + wait; us), "bw_put" / "bw_get"
 * (contiguous, GB/s = 1e9 B/s, sizes --sizes), "bw_puts" / "bw_gets" / "bw_accs" (square patches of
 * a row-major double matrix with 1024 columns, n x n doubles, GB/s).
 */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <armci.h>
#ifdef BENCH_ARMCI_RMC
#include <rmc.h>
#define IMPL  "RMC-ARMCI"
#define NIMPL 2 /* ARMCI API, native API */
#else
#define IMPL  "ARMCI-MPI"
#define NIMPL 1
#endif
#include "bench_util.h"

#define LD        1024 /* matrix columns (doubles) */
#define MAXN      512  /* largest square patch */
#define MAT_BYTES ((size_t)LD * (MAXN + 2) * sizeof(double))

enum { A_ARMCI, A_NATIVE };
static const char *api_name[2] = {IMPL, "native"};

enum {
    OP_PUT,
    OP_GET,
    OP_ACC,
    OP_PUTS,
    OP_GETS,
    OP_ACCS,
    OP_FADD,
    OP_FADDL,
    OP_SWAP,
    OP_NBPUT,
    NOPS
};
static const char *op_label[NOPS] = {"put",      "get",       "acc",           "puts",
                                     "gets",     "accs",      "fetch&add int", "fetch&add long",
                                     "swap int", "nbput+wait"};

typedef struct ctx {
    int rank, np;
    size_t cap;      /* bytes of every buffer */
    char *src, *dst; /* local buffers */
    void **base;     /* ARMCI_Malloc bases (cap bytes per rank) */
    unsigned seq;
} ctx_t;

static uint8_t pat(size_t i, unsigned seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + (uint32_t)(i >> 8) * 97u;
    return (uint8_t)(x >> 13) | 1u;
}

/* ------------------------------------------------------------------- operations --- */

/* One operation `op` of `n` bytes (strided: an n x n double patch when n >= 1, `n` = side) through
 * API `api`; returns nonzero on error. */
static int one_op(ctx_t *c, int api, int op, size_t n, armci_hdl_t *h)
{
    char *t = c->base[1];
    int str_l[1], str_r[1] = {LD * (int)sizeof(double)}, cnt[2];
    static double one = 1.0;
    static long lv;
    static int iv;
    if (op == OP_PUTS || op == OP_GETS || op == OP_ACCS) {
        str_l[0] = (int)(n * sizeof(double));
        cnt[0] = (int)(n * sizeof(double));
        cnt[1] = (int)n;
        t += (LD + 1) * sizeof(double); /* row 1, column 1 */
    }
#ifdef BENCH_ARMCI_RMC
    if (api == A_NATIVE) {
        int32_t f32;
        int64_t f64;
        rmc_request_h r;
        switch (op) {
        case OP_PUT:
            return rmc_put(c->src, t, n, 1);
        case OP_GET:
            return rmc_get(t, c->dst, n, 1);
        case OP_ACC:
            return rmc_acc(RMC_ACC_DOUBLE, &one, c->src, t, n, 1);
        case OP_PUTS:
            return rmc_put_strided(c->src, str_l, t, str_r, cnt, 1, 1);
        case OP_GETS:
            return rmc_get_strided(t, str_r, c->dst, str_l, cnt, 1, 1);
        case OP_ACCS:
            return rmc_acc_strided(RMC_ACC_DOUBLE, &one, c->src, str_l, t, str_r, cnt, 1, 1);
        case OP_FADD:
            return rmc_amo_fetch_add_i32(t, 1, &f32, 1);
        case OP_FADDL:
            return rmc_amo_fetch_add_i64(t + 8, 1, &f64, 1);
        case OP_SWAP:
            return rmc_amo_swap_i32(t + 16, 7, &f32, 1);
        case OP_NBPUT: {
            int st = rmc_put_nb(c->src, t, n, 1, &r);
            return st | rmc_wait(&r);
        }
        }
        return 1;
    }
#endif
    (void)api;
    switch (op) {
    case OP_PUT:
        return ARMCI_Put(c->src, t, (int)n, 1);
    case OP_GET:
        return ARMCI_Get(t, c->dst, (int)n, 1);
    case OP_ACC:
        return ARMCI_Acc(ARMCI_ACC_DBL, &one, c->src, t, (int)n, 1);
    case OP_PUTS:
        return ARMCI_PutS(c->src, str_l, t, str_r, cnt, 1, 1);
    case OP_GETS:
        return ARMCI_GetS(t, str_r, c->dst, str_l, cnt, 1, 1);
    case OP_ACCS:
        return ARMCI_AccS(ARMCI_ACC_DBL, &one, c->src, str_l, t, str_r, cnt, 1, 1);
    case OP_FADD:
        return ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &iv, t, 1, 1);
    case OP_FADDL:
        return ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &lv, t + 8, 1, 1);
    case OP_SWAP:
        iv = 7;
        return ARMCI_Rmw(ARMCI_SWAP, &iv, t + 16, 0, 1);
    case OP_NBPUT: {
        ARMCI_INIT_HANDLE(h);
        int st = ARMCI_NbPut(c->src, t, (int)n, 1, h);
        return st | ARMCI_Wait(h);
    }
    }
    return 1;
}

static int fence(int api)
{
#ifdef BENCH_ARMCI_RMC
    if (api == A_NATIVE)
        return rmc_fence(1);
#endif
    (void)api;
    ARMCI_Fence(1);
    return 0;
}

/* Median seconds per operation of every API (out[a], rank 0; NAN elsewhere). The APIs' repetitions
 * alternate (ARMCI, native, ARMCI, ...), so a change of machine load hits both alike. Collective.
 */
static void measure(ctx_t *c, const bench_opts_t *o, int op, size_t n, long iters,
                    double out[NIMPL])
{
    double s[NIMPL][BENCH_MAX_REPS];
    int bad = 0;
    armci_hdl_t h;
    ARMCI_Barrier();
    if (c->rank == 0) {
        for (int r = -1; r < o->reps; r++) /* r = -1: warm-up */
            for (int a = 0; a < NIMPL; a++) {
                long it = r < 0 ? iters / 8 + 1 : iters;
                uint64_t t0 = bench_now_ns();
                for (long i = 0; i < it; i++)
                    bad |= one_op(c, a, op, n, &h);
                bad |= fence(a);
                uint64_t t1 = bench_now_ns();
                if (r >= 0)
                    s[a][r] = (double)(t1 - t0) * 1e-9 / (double)it;
            }
    }
    ARMCI_Barrier();
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (all)
        bench_fail("%s (%zu) returned an error", op_label[op], n);
    for (int a = 0; a < NIMPL; a++)
        out[a] = c->rank == 0 ? bench_median(s[a], (size_t)o->reps) : NAN;
}

/* ------------------------------------------------------------------ verification --- */

static int is_strided(int op)
{
    return op == OP_PUTS || op == OP_GETS || op == OP_ACCS;
}

/* Fills the target's memory (rank 1, by itself) with pattern `seed` (doubles: small integers). */
static void target_fill(ctx_t *c, unsigned seed, int doubles)
{
    if (c->rank == 1) {
        ARMCI_Access_begin(c->base[1]);
        if (doubles)
            for (size_t i = 0; i < c->cap / sizeof(double); i++)
                ((double *)c->base[1])[i] = (double)((i * 7 + seed) % 1000);
        else
            for (size_t i = 0; i < c->cap; i++)
                ((uint8_t *)c->base[1])[i] = pat(i, seed);
        ARMCI_Access_end(c->base[1]);
    }
    ARMCI_Barrier();
}

/* Checks one operation of size n (see the header). Collective. */
static void verify(ctx_t *c, int api, int op, size_t n)
{
    unsigned seed = ++c->seq;
    int dbl = op == OP_ACC || op == OP_ACCS || is_strided(op);
    long bad_at = -1;
    int err = 0;
    armci_hdl_t h;
    if (op == OP_FADD || op == OP_FADDL || op == OP_SWAP) {
        if (c->rank == 1) {
            ARMCI_Access_begin(c->base[1]);
            memset(c->base[1], 0, 32);
            ARMCI_Access_end(c->base[1]);
        }
        ARMCI_Barrier();
        if (c->rank == 0)
            for (int i = 0; i < 5; i++)
                err |= one_op(c, api, op, 8, &h);
        ARMCI_Barrier();
        if (c->rank == 1) {
            ARMCI_Access_begin(c->base[1]);
            char *b = c->base[1];
            if (op == OP_FADD)
                bad_at = *(int *)b == 5 ? -1 : 0;
            else if (op == OP_FADDL)
                bad_at = *(long *)(b + 8) == 5 ? -1 : 8;
            else
                bad_at = *(int *)(b + 16) == 7 ? -1 : 16;
            ARMCI_Access_end(c->base[1]);
        }
    } else {
        target_fill(c, seed, dbl);
        /* local source: doubles 1..; bytes: pattern */
        size_t sn = is_strided(op) ? n * n * sizeof(double) : n;
        if (c->rank == 0) {
            if (dbl)
                for (size_t i = 0; i < sn / sizeof(double); i++)
                    ((double *)c->src)[i] = (double)(i % 4096 + 1);
            else
                for (size_t i = 0; i < sn; i++)
                    c->src[i] = (char)pat(i, seed + 1000);
            memset(c->dst, 0x5a, sn + 64);
            err |= one_op(c, api, op, n, &h);
            err |= fence(api);
        }
        ARMCI_Barrier();
        /* expected value of target double i, and of local destination element i */
        if (op == OP_GET || op == OP_GETS) {
            if (c->rank == 0) {
                for (size_t i = 0; i < sn && bad_at < 0; i++) {
                    if (op == OP_GET) {
                        if ((uint8_t)c->dst[i] != pat(i, seed))
                            bad_at = (long)i;
                    } else if (i % sizeof(double) == 0) {
                        size_t e = i / sizeof(double), row = e / n, col = e % n;
                        size_t ti = (row + 1) * LD + col + 1;
                        if (((double *)c->dst)[e] != (double)((ti * 7 + seed) % 1000))
                            bad_at = (long)i;
                    }
                }
                for (size_t i = sn; i < sn + 64 && bad_at < 0; i++)
                    if ((uint8_t)c->dst[i] != 0x5a)
                        bad_at = (long)i;
            }
        } else if (c->rank == 1) {
            ARMCI_Access_begin(c->base[1]);
            if (!dbl) { /* contiguous put (and nbput): bytes */
                const uint8_t *m = c->base[1];
                for (size_t i = 0; i < n + 64 && bad_at < 0; i++) {
                    uint8_t e = i < n ? pat(i, seed + 1000) : pat(i, seed);
                    if (m[i] != e)
                        bad_at = (long)i;
                }
            } else {
                const double *m = c->base[1];
                size_t nd = is_strided(op) ? LD * (n + 2) : n / sizeof(double) + 8;
                for (size_t i = 0; i < nd && bad_at < 0; i++) {
                    double old = (double)((i * 7 + seed) % 1000), e = old;
                    if (is_strided(op)) {
                        size_t row = i / LD, col = i % LD;
                        if (row >= 1 && row <= n && col >= 1 && col <= n) {
                            double s = (double)(((row - 1) * n + col - 1) % 4096 + 1);
                            e = op == OP_PUTS ? s : old + s;
                        }
                    } else if (i < n / sizeof(double)) {
                        e = old + (double)(i % 4096 + 1); /* acc */
                    }
                    if (m[i] != e)
                        bad_at = (long)(i * sizeof(double));
                }
            }
            ARMCI_Access_end(c->base[1]);
        }
    }
    int mine[2] = {err != 0, bad_at >= 0}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] || all[1])
        bench_fail("%s %s (%zu): %s%s (first wrong byte at %ld on this rank)", api_name[api],
                   op_label[op], n, all[0] ? "operation failed " : "",
                   all[1] ? "wrong data at the destination" : "", bad_at);
}

/* ---------------------------------------------------------------------------- main --- */

int main(int argc, char **argv)
{
    bench_opts_t o;
#ifdef BENCH_ARMCI_RMC
    const char *prog = "bench_armci";
#else
    const char *prog = "bench_armci_ampi";
#endif
    int prc = bench_parse(argc, argv, prog, 8, 4u << 20, &o);
    if (prc)
        return prc > 0;
    ctx_t c;
    memset(&c, 0, sizeof(c));
    if (bench_mpi_start(&argc, &argv, prog, &c.rank, &c.np, NULL))
        return 1;
    if (ARMCI_Init() != 0)
        bench_fail("ARMCI_Init failed");
    size_t contig = o.max_size + 64;
    c.cap = contig > MAT_BYTES ? contig : MAT_BYTES;
    c.base = calloc((size_t)c.np, sizeof(void *));
    if (!c.base || ARMCI_Malloc(c.base, (armci_size_t)c.cap) != 0)
        bench_fail("ARMCI_Malloc(%zu) failed", c.cap);
    c.src = ARMCI_Malloc_local((armci_size_t)c.cap);
    c.dst = ARMCI_Malloc_local((armci_size_t)c.cap + 64);
    if (!c.src || !c.dst)
        bench_fail("ARMCI_Malloc_local failed");

    char peers[512];
#ifdef BENCH_ARMCI_RMC
    snprintf(peers, sizeof(peers),
             "%s: RMC %s's libarmci (ARMCI API on comm); native: the same operations through "
             "rmc_put/rmc_get/rmc_acc/rmc_*_strided/rmc_amo_*/rmc_put_nb on the same memory; "
             "rank 1 %s",
             IMPL, rmc_version(),
             ARMCI_Same_node(1) ? "node-local (loads/stores)" : "remote (MPI RMA)");
#else
    snprintf(peers, sizeof(peers),
             "%s 0.3.1 (libarmci-mpich) with ARMCI_USE_WIN_ALLOCATE=0 (its default shared windows "
             "return wrong data on this MPICH)",
             IMPL);
#endif
    bench_header(&o, "ARMCI API: contiguous, strided, read-modify-write; origin 0, target 1",
                 peers);

    /* ---- latency ---- */
    long lat_it = bench_iters(&o, 10000);
    char title[256];
    snprintf(title, sizeof(title),
             "latency [us] (8 B, acc: 1 double; strided: 2x2 doubles), median "
             "of %d reps x %ld ops + one fence",
             o.reps, lat_it);
    bench_table_t *lat = bench_table_new("latency", "op", title);
    int lc[2];
    for (int a = 0; a < NIMPL; a++)
        lc[a] = bench_table_col(lat, api_name[a], "us");
#ifdef BENCH_ARMCI_RMC
    int lr = bench_table_ratio(lat, "ARMCI/native", lc[A_NATIVE], lc[A_ARMCI], BENCH_RATIO_PCT);
    bench_table_target(lat, lr, 90.0, NAN, NAN, "RMC's ARMCI within 10% of the native API");
#endif
    bench_table_plot(lat, 0, 1, "us (log)");
    for (int op = 0; op < NOPS; op++) {
        int row = bench_table_row(lat, op_label[op], NAN);
        size_t n = is_strided(op) ? 2 : 8; /* strided: a 2x2 patch of doubles (2 chunks of 16 B) */
        double t[NIMPL];
        for (int a = 0; a < NIMPL; a++)
            verify(&c, a, op, n);
        measure(&c, &o, op, n, lat_it, t);
        for (int a = 0; a < NIMPL; a++)
            bench_table_set(lat, row, lc[a], 1e6 * t[a]);
    }

    /* ---- contiguous bandwidth ---- */
    static const int bw_ops[2] = {OP_PUT, OP_GET};
    bench_table_t *bw[5];
    int bc[5][2];
    const size_t budget = 48u << 20;
    for (int k = 0; k < 2; k++) {
        char name[32];
        snprintf(name, sizeof(name), "bw_%s", op_label[bw_ops[k]]);
        snprintf(title, sizeof(title), "contiguous %s bandwidth [GB/s], median of %d reps",
                 op_label[bw_ops[k]], o.reps);
        bw[k] = bench_table_new(name, "size", title);
        for (int a = 0; a < NIMPL; a++)
            bc[k][a] = bench_table_col(bw[k], api_name[a], "GB/s");
#ifdef BENCH_ARMCI_RMC
        int r = bench_table_ratio(bw[k], "ARMCI/native", bc[k][A_ARMCI], bc[k][A_NATIVE],
                                  BENCH_RATIO_PCT);
        bench_table_target(bw[k], r, 90.0, NAN, NAN, "RMC's ARMCI within 10% of the native API");
#endif
        bench_table_plot(bw[k], 1, 1, "GB/s (log)");
    }
    for (size_t n = o.min_size; n; n = bench_next_size(&o, n)) {
        char lab[BENCH_LABEL_LEN];
        bench_size_label(n, lab);
        long it = bench_iters_for_size(&o, n, budget, 8, 4000);
        for (int k = 0; k < 2; k++) {
            int row = bench_table_row(bw[k], lab, (double)n);
            double t[NIMPL];
            for (int a = 0; a < NIMPL; a++)
                verify(&c, a, bw_ops[k], n);
            measure(&c, &o, bw_ops[k], n, it, t);
            for (int a = 0; a < NIMPL; a++)
                bench_table_set(bw[k], row, bc[k][a], (double)n / t[a] * 1e-9);
        }
    }

    /* ---- strided bandwidth: n x n double patches ---- */
    static const int st_ops[3] = {OP_PUTS, OP_GETS, OP_ACCS};
    static const char *st_name[3] = {"bw_puts", "bw_gets", "bw_accs"};
    for (int k = 0; k < 3; k++) {
        snprintf(title, sizeof(title),
                 "strided %s bandwidth [GB/s], n x n doubles of a %d-column matrix, median of %d "
                 "reps",
                 op_label[st_ops[k]], LD, o.reps);
        bw[2 + k] = bench_table_new(st_name[k], "patch", title);
        for (int a = 0; a < NIMPL; a++)
            bc[2 + k][a] = bench_table_col(bw[2 + k], api_name[a], "GB/s");
#ifdef BENCH_ARMCI_RMC
        int r = bench_table_ratio(bw[2 + k], "ARMCI/native", bc[2 + k][A_ARMCI],
                                  bc[2 + k][A_NATIVE], BENCH_RATIO_PCT);
        bench_table_target(bw[2 + k], r, 90.0, NAN, NAN,
                           "RMC's ARMCI within 10% of the native API");
#endif
        bench_table_plot(bw[2 + k], 1, 1, "GB/s (log)");
    }
    static const size_t sides[] = {4, 16, 64, 256, MAXN};
    for (size_t si = 0; si < sizeof(sides) / sizeof(sides[0]); si++) {
        size_t n = sides[si], bytes = n * n * sizeof(double);
        if (o.quick && n > 256)
            continue;
        char lab[BENCH_LABEL_LEN];
        snprintf(lab, sizeof(lab), "%zux%zu", n, n);
        long it = bench_iters_for_size(&o, bytes, budget / 2, 4, 2000);
        for (int k = 0; k < 3; k++) {
            int row = bench_table_row(bw[2 + k], lab, (double)bytes);
            double t[NIMPL];
            for (int a = 0; a < NIMPL; a++)
                verify(&c, a, st_ops[k], n);
            measure(&c, &o, st_ops[k], n, it, t);
            for (int a = 0; a < NIMPL; a++)
                bench_table_set(bw[2 + k], row, bc[2 + k][a], (double)bytes / t[a] * 1e-9);
        }
    }

    bench_table_t *all[] = {lat, bw[0], bw[1], bw[2], bw[3], bw[4]};
    int misses = bench_finish(&o, all, 6);
    if (c.rank == 0)
        printf("# targets: %s\n", misses ? "some MISSED (cells marked !)" : "all met");
    ARMCI_Free_local(c.src);
    ARMCI_Free_local(c.dst);
    ARMCI_Free(c.base[c.rank]);
    free(c.base);
    ARMCI_Finalize();
    MPI_Finalize();
    return 0;
}
