/* bench_rpc: RDMA against RPC (seed 001 ch. 8) on this machine: the primitives' costs (a Table 8.1
 * analogue) and the attentiveness experiment (Figure 8.x): how an operation's latency grows when
 * its target computes between polls, one-sided against one active message.
 *
 * 2 ranks (more only join the collectives): rank 0 measures, rank 1 is the target. Each cell is
 * the median over --reps repetitions of the mean of --iters operations (default 4000, --quick
 * 1000).
 *
 * Table "primitives" (rank 1 waits in rmc_barrier, serving RMC's active messages at once), us per
 * operation:
 *   put / get 8 B, random       rmc_put / rmc_get of 8 bytes at random 8-byte words of a 1 MiB
 *                               region part of rank 1.
 *   CAS / fetch-add, random     rmc_amo_cas_i64 / rmc_amo_fetch_add_i64 at random words.
 *   CAS / fetch-add, one word   the same on a single word.
 *   CAS increment, contended    both ranks increment one word by compare-and-swap until theirs
 *                               succeeds (rank 1 too: contention), per successful increment.
 *   AM round trip               rmc_am_send of 8 bytes to an empty handler, with an 8-byte reply.
 *   HashMap insert RDMA / RPC   rmc_hashmap_insert of keys rank 1 owns, forced one-sided
 *                               (RMC_HASHMAP_RDMA: 2A + W) or as an RPC (RMC_HASHMAP_RPC: one
 *                               active message); the RPC row only in thread AMO mode.
 *   HashMap find RDMA / RPC     rmc_hashmap_find of those keys (2A + R against one message).
 *   CircularQueue push / pop RDMA / RPC   rmc_queue_push / _pop of one int64 on a CIRCULAR queue
 *                               rank 1 hosts, fully atomic, forced one-sided (2A + W, 2A + R) or
 *                               as an RPC (one active message each).
 * Table "attentiveness": rank 1 alternates x us of busy work (no RMC call) with one rmc_progress,
 * x = 0 .. 1000 us; rank 0's hash-map inserts to keys rank 1 owns, and its pushes to rank 1's
 * CircularQueue, through each path, us per operation, and the ratios RDMA/RPC (above 1x RPC is
 * faster). With a progress thread on rank 1 (RMC_PROGRESS_THREAD=1) its active messages are
 * served while it computes. The crossovers (the x where the faster path changes) are printed under
 * the table.
 *
 * Verification: every status; gets return what the puts left; the fetch-adds and the contended
 * increments sum exactly; the hash map finds every inserted value; the queue's pops return the
 * pushed values in order, and after every attentiveness cell the host finds exactly the values
 * pushed in it.
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
#include "bench_util.h"

#define REGION   (1 << 20)
#define WORDS    (REGION / 8)
#define H_ECHO   17 /* the benchmark's active-message handler id */

enum { P_PUT, P_GET, P_CASR, P_FAAR, P_CAS1, P_FAA1, P_CASINC, P_AM, P_HINS_D, P_HINS_R,
       P_HFIND_D, P_HFIND_R, P_QPUSH_D, P_QPUSH_R, P_QPOP_D, P_QPOP_R, NPRIM };
static const char *const prim_label[NPRIM] = {
    "put 8 B, random",       "get 8 B, random",      "CAS, random",
    "fetch-add, random",     "CAS, one word",        "fetch-add, one word",
    "CAS increment, contended (per success)",        "AM round trip (8 B, 8 B reply)",
    "HashMap insert, RDMA",  "HashMap insert, RPC",  "HashMap find, RDMA",
    "HashMap find, RPC",     "CircularQueue push, RDMA", "CircularQueue push, RPC",
    "CircularQueue pop, RDMA", "CircularQueue pop, RPC"};

/* Rows of the RPC path (measured in thread AMO mode only). */
static int rpc_row(int p)
{
    return p == P_HINS_R || p == P_HFIND_R || p == P_QPUSH_R || p == P_QPOP_R;
}

static const double xs[] = {0, 1, 3, 10, 30, 100, 300, 1000};
#define NX (sizeof(xs) / sizeof(xs[0]))

typedef struct ctx {
    const bench_opts_t *o;
    int rank, nranks, rpc; /* rpc: thread AMO mode (the RPC path exists) */
    long it;
    char **bases;  /* the region's parts */
    int64_t *keys; /* keys rank 1 owns */
    rmc_hashmap_h h;
    rmc_queue_h q; /* CIRCULAR, hosted by rank 1, room for 2 x --iters */
} ctx_t;

static rmc_status_t h_echo(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)origin;
    (void)arg;
    if (len != 8 || cap < 8)
        return RMC_ERR_ARG;
    memcpy(reply, payload, 8);
    *rlen = 8;
    return RMC_OK;
}

static void spin_us(double us)
{
    uint64_t end = bench_now_ns() + (uint64_t)(us * 1e3);
    while (bench_now_ns() < end)
        ;
}

/* The stop flag of rank 1's attentive loop: word 0 of its region part (rank 0 puts 1 there). */
static volatile int64_t *stop_flag(ctx_t *c)
{
    return (volatile int64_t *)(void *)c->bases[c->rank];
}

/* Increments the int64 at w on rank 1 by compare-and-swap, retrying until this rank's wins. */
static void cas_increment(char *w)
{
    int64_t cur = 0, old;
    bench_ck(rmc_amo_load_i64(w, &cur, 1), "rmc_amo_load_i64");
    for (;;) {
        bench_ck(rmc_amo_cas_i64(w, cur, cur + 1, &old, 1), "rmc_amo_cas_i64");
        if (old == cur)
            return;
        cur = old;
    }
}

/* One primitive row: rank 0's us per operation (rank 1's part: only the contended row). */
static double prim(ctx_t *c, int p, uint64_t seed)
{
    long n = c->it;
    char *b1 = c->bases[1];
    uint64_t s = seed;
    int64_t v = 0, old;
    bench_ck(rmc_barrier(), "rmc_barrier");
    if (c->rank == 1 && p == P_CASINC) { /* contention: rank 1 increments too */
        for (long i = 0; i < n; i++)
            cas_increment(b1 + 8);
    }
    if (c->rank != 0) {
        bench_ck(rmc_barrier(), "rmc_barrier");
        return 0;
    }
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
        char *w = b1 + 64 + 8 * (bench_splitmix64(&s) % (WORDS - 8));
        size_t rlen = 0;
        switch (p) {
        case P_PUT:
            v = (int64_t)i;
            bench_ck(rmc_put(&v, w, 8, 1), "rmc_put");
            break;
        case P_GET:
            bench_ck(rmc_get(w, &v, 8, 1), "rmc_get");
            break;
        case P_CASR:
            bench_ck(rmc_amo_cas_i64(w, 0, 0, &old, 1), "rmc_amo_cas_i64");
            break;
        case P_FAAR:
            bench_ck(rmc_amo_fetch_add_i64(w, 0, &old, 1), "rmc_amo_fetch_add_i64");
            break;
        case P_CAS1:
            bench_ck(rmc_amo_cas_i64(b1 + 16, 0, 0, &old, 1), "rmc_amo_cas_i64");
            break;
        case P_FAA1:
            bench_ck(rmc_amo_fetch_add_i64(b1 + 24, 1, &old, 1), "rmc_amo_fetch_add_i64");
            break;
        case P_CASINC:
            cas_increment(b1 + 8);
            break;
        case P_AM:
            v = (int64_t)i;
            bench_ck(rmc_am_send(1, H_ECHO, &v, 8, &old, 8, &rlen), "rmc_am_send");
            if (rlen != 8 || old != v)
                bench_fail("the AM echo returned %lld", (long long)old);
            break;
        case P_HINS_D:
        case P_HINS_R:
            v = c->keys[i] * 2;
            bench_ck(rmc_hashmap_insert(c->h, &c->keys[i], &v,
                                  p == P_HINS_D ? RMC_HASHMAP_RDMA : RMC_HASHMAP_RPC),
               "rmc_hashmap_insert");
            break;
        case P_HFIND_D:
        case P_HFIND_R:
            bench_ck(rmc_hashmap_find(c->h, &c->keys[i], &v,
                                p == P_HFIND_D ? RMC_HASHMAP_RDMA : RMC_HASHMAP_RPC),
               "rmc_hashmap_find");
            if (v != c->keys[i] * 2)
                bench_fail("rmc_hashmap_find returned %lld", (long long)v);
            break;
        case P_QPUSH_D:
        case P_QPUSH_R:
            v = (int64_t)i;
            bench_ck(rmc_queue_push(c->q, &v, p == P_QPUSH_D ? RMC_PATH_RDMA : RMC_PATH_RPC),
                     "rmc_queue_push");
            break;
        default:
            bench_ck(rmc_queue_pop(c->q, &v, p == P_QPOP_D ? RMC_PATH_RDMA : RMC_PATH_RPC),
                     "rmc_queue_pop");
            if (v != (int64_t)i)
                bench_fail("rmc_queue_pop returned %lld, pushed %ld", (long long)v, i);
        }
    }
    if (p == P_PUT) /* puts return at local completion: the run ends with them at the target */
        bench_ck(rmc_fence(1), "rmc_fence");
    double us = (double)(bench_now_ns() - t0) * 1e-3 / (double)n;
    bench_ck(rmc_barrier(), "rmc_barrier");
    return us;
}

/* The host takes the n values 0 .. n-1 just pushed out of its queue, in place, checking them. */
static void drain(ctx_t *c, long n)
{
    const void *r1, *r2;
    size_t n1, n2;
    bench_ck(rmc_queue_local_peek(c->q, &r1, &n1, &r2, &n2), "rmc_queue_local_peek");
    if ((long)(n1 + n2) != n)
        bench_fail("the queue holds %zu values after %ld pushes", n1 + n2, n);
    for (size_t i = 0; i < n1 + n2; i++) {
        int64_t v = i < n1 ? ((const int64_t *)r1)[i] : ((const int64_t *)r2)[i - n1];
        if (v != (int64_t)i)
            bench_fail("the queue's value %zu is %lld", i, (long long)v);
    }
    bench_ck(rmc_queue_local_discard(c->q, n1 + n2), "rmc_queue_local_discard");
}

/* One attentiveness cell: rank 1 computes x us between polls while rank 0 inserts (op 0) or pushes
 * to rank 1's queue (op 1) through `path`; rank 0's us per operation. */
static double attentive(ctx_t *c, double x, int op, unsigned path, long n)
{
    bench_ck(rmc_barrier(), "rmc_barrier");
    double us = 0;
    if (c->rank == 1) {
        volatile int64_t *f = stop_flag(c);
        while (!__atomic_load_n(f, __ATOMIC_ACQUIRE)) {
            spin_us(x);
            bench_ck(rmc_progress(), "rmc_progress");
        }
        *f = 0;
    } else if (c->rank == 0) {
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < n; i++) {
            int64_t v = op ? (int64_t)i : c->keys[i] * 2;
            if (op)
                bench_ck(rmc_queue_push(c->q, &v, path), "rmc_queue_push");
            else
                bench_ck(rmc_hashmap_insert(c->h, &c->keys[i], &v, path), "rmc_hashmap_insert");
        }
        us = (double)(bench_now_ns() - t0) * 1e-3 / (double)n;
        int64_t one = 1;
        bench_ck(rmc_put(&one, c->bases[1], 8, 1), "rmc_put");
        bench_ck(rmc_fence(1), "rmc_fence");
    }
    bench_ck(rmc_barrier(), "rmc_barrier");
    if (op && c->rank == 1)
        drain(c, n);
    return us;
}

/* Notes under the attentiveness table: which path is faster at x = 0 for operation `what`
 * (columns j, j+1 of as: RDMA, RPC), and every x where that changes. */
static void crossovers(bench_table_t *t, const char *what, double as[][4][BENCH_MAX_REPS], int j,
                       int reps)
{
    int prev = -1;
    char changes[256] = "";
    size_t cl = 0;
    for (size_t k = 0; k < NX; k++) {
        double d = bench_median(as[k][j], (size_t)reps), rp = bench_median(as[k][j + 1], (size_t)reps);
        int rpc_faster = rp < d;
        if (prev < 0)
            bench_table_note(t, "%s: faster at x = 0: %s", what, rpc_faster ? "RPC" : "RDMA");
        else if (rpc_faster != prev && cl < sizeof(changes))
            cl += (size_t)snprintf(changes + cl, sizeof(changes) - cl, "%sx = %g us (to %s)",
                                   cl ? ", " : "", xs[k], rpc_faster ? "RPC" : "RDMA");
        prev = rpc_faster;
    }
    bench_table_note(t, "%s: crossovers (the faster path changes): %s", what,
                     cl ? changes : "none in 0 .. 1000 us");
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_rpc", 8, 8, &o);
    if (prc)
        return prc > 0;
    ctx_t c = {.o = &o};
    if (bench_mpi_start(&argc, &argv, "bench_rpc", &c.rank, &c.nranks, NULL))
        return 1;
    if (c.nranks < 2)
        bench_fail("bench_rpc needs 2 ranks");
    bench_ck(rmc_init(MPI_COMM_WORLD), "rmc_init");
    c.it = bench_iters(&o, 4000);
    c.rpc = rmc_amo_mode() == RMC_AMO_MODE_THREAD;
    c.bases = calloc((size_t)c.nranks, sizeof(char *));
    rmc_region_h reg;
    bench_ck(rmc_region_alloc(REGION, (void **)c.bases, &reg), "rmc_region_alloc");
    bench_ck(rmc_am_register(H_ECHO, h_echo, NULL), "rmc_am_register");
    bench_ck(
        rmc_hashmap_create((size_t)c.nranks * 8 * (size_t)c.it, &rmc_type_i64, &rmc_type_i64, &c.h),
        "rmc_hashmap_create");
    bench_ck(rmc_queue_create(RMC_QUEUE_CIRCULAR, 1, 2 * (size_t)c.it, &rmc_type_i64, &c.q),
             "rmc_queue_create");
    c.keys = bench_alloc((size_t)c.it * sizeof(int64_t));
    for (long i = 0, k = 1; i < c.it; k++) /* keys rank 1 owns */
        if (rmc_hashmap_owner(c.h, &k) == 1)
            c.keys[i++] = k;
    char peers[512];
    snprintf(peers, sizeof(peers),
             "RMC %s: AMO mode %s (%s), rank 1 %s, %s on rank 1", rmc_version(),
             c.rpc ? "thread" : "mpi", c.rpc ? "RPC rows measured" : "no RPC path: RPC rows empty",
             rmc_same_node(1) == 1 ? "node-local (shared memory)" : "remote",
             rmc_progress_thread_active() ? "progress thread" : "no progress thread");
    bench_header(&o, "RDMA against RPC: primitives and attentiveness (origin rank 0, target 1)",
                 peers);
    double ps[NPRIM][BENCH_MAX_REPS];
    for (int r = -1; r < o.reps; r++)
        for (int p = 0; p < NPRIM; p++) {
            double us = rpc_row(p) && !c.rpc ? NAN : prim(&c, p, 0x1234u + (uint64_t)r);
            if (r >= 0)
                ps[p][r] = us;
        }
    /* checks: the contended increments and one-word fetch-adds summed exactly */
    int64_t w8 = 0, w24 = 0;
    bench_ck(rmc_amo_load_i64(c.bases[1] + 8, &w8, 1), "rmc_amo_load_i64");
    bench_ck(rmc_amo_load_i64(c.bases[1] + 24, &w24, 1), "rmc_amo_load_i64");
    if (c.rank == 0 && (w8 != 2 * c.it * (o.reps + 1) || w24 != c.it * (o.reps + 1)))
        bench_fail("contended increments %lld (want %lld), fetch-adds %lld (want %lld)",
                   (long long)w8, (long long)(2 * c.it * (o.reps + 1)), (long long)w24,
                   (long long)(c.it * (o.reps + 1)));
    /* attentiveness: fewer inserts at large x (each waits up to x) */
    double as[NX][4][BENCH_MAX_REPS]; /* insert RDMA, RPC; push RDMA, RPC */
    for (int r = -1; r < o.reps; r++)
        for (size_t k = 0; k < NX; k++) {
            long n = xs[k] >= 100 ? c.it / 20 + 1 : xs[k] >= 10 ? c.it / 4 + 1 : c.it;
            for (int j = 0; j < 4; j++) {
                int pth = j & 1;
                double us = pth && !c.rpc
                                ? NAN
                                : attentive(&c, xs[k], j >> 1, pth ? RMC_PATH_RPC : RMC_PATH_RDMA,
                                            n);
                if (r >= 0)
                    as[k][j][r] = us;
            }
        }
    bench_table_t *t[2];
    char title[200];
    snprintf(title, sizeof(title), "primitives: us per operation, median of %d reps x %ld ops",
             o.reps, c.it);
    t[0] = bench_table_new("primitives", "operation", title);
    int c0 = bench_table_col(t[0], "RMC", "us");
    bench_table_plot(t[0], 0, 1, "us (log)");
    for (int p = 0; p < NPRIM; p++)
        bench_table_set(t[0], bench_table_row(t[0], prim_label[p], NAN), c0,
                        bench_median(ps[p], (size_t)o.reps));
    bench_table_note(t[0], "rank 1 waits in rmc_barrier (serving RMC's active messages); HashMap "
                           "rows: keys rank 1 owns, forced path");
    snprintf(title, sizeof(title),
             "attentiveness: rank 1 computes x us between polls; us per operation of rank 0");
    t[1] = bench_table_new("attentiveness", "x [us]", title);
    static const char *const acol[4] = {"insert RDMA", "insert RPC", "push RDMA", "push RPC"};
    int ac[4];
    for (int j = 0; j < 4; j++)
        ac[j] = bench_table_col(t[1], acol[j], "us");
    bench_table_ratio(t[1], "insert RDMA/RPC", ac[0], ac[1], BENCH_RATIO_X);
    bench_table_ratio(t[1], "push RDMA/RPC", ac[2], ac[3], BENCH_RATIO_X);
    bench_table_plot(t[1], 1, 1, "us per operation (log)");
    for (size_t k = 0; k < NX; k++) {
        char lab[32];
        snprintf(lab, sizeof(lab), "%g", xs[k]);
        int row = bench_table_row(t[1], lab, xs[k] > 0 ? xs[k] : 0.3);
        for (int j = 0; j < 4; j++)
            bench_table_set(t[1], row, ac[j], bench_median(as[k][j], (size_t)o.reps));
    }
    if (!c.rpc)
        bench_table_note(t[1], "no RPC path in mpi AMO mode (RMC_AMO=thread for it)");
    for (int op = 0; c.rpc && op < 2; op++)
        crossovers(t[1], op ? "push" : "insert", as, op * 2, o.reps);
    bench_table_note(t[1], "x = 0 plotted at 0.3 (log axis)");
    bench_finish(&o, t, 2);
    bench_ck(rmc_hashmap_destroy(c.h), "rmc_hashmap_destroy");
    bench_ck(rmc_queue_destroy(c.q), "rmc_queue_destroy");
    bench_ck(rmc_region_free(reg), "rmc_region_free");
    bench_ck(rmc_finalize(), "rmc_finalize");
    free(c.keys);
    free(c.bases);
    MPI_Finalize();
    return 0;
}
