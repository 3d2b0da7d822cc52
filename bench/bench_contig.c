/* bench_contig: contiguous blocking put/get, RMC against ARMCI-MPI, plain MPI RMA and memcpy.
 *
 * 2 ranks (more are allowed; ranks >= 2 only join the barriers): rank 0 is the origin, rank 1 the
 * target and waits in a barrier while rank 0 measures. Every measurement is repeated --reps times
 * (default 7) and the median is reported. Before a size is timed for a peer, the data is checked
 * once at the destination (put: by the target on its own memory after a barrier; get: by the
 * origin), including a guard zone just past the message that must stay untouched: a wrong result
 * aborts the benchmark instead of reporting a speed.
 *
 * Peers (all in this one process):
 *   RMC       rmc_put / rmc_get (blocking) to rank 1's part of a region
 *   ARMCI     ARMCI_Put / ARMCI_Get on ARMCI_Malloc memory, ARMCI_USE_WIN_ALLOCATE=0 set before
 *             ARMCI_Init (ARMCI-MPI 0.3.1's default shared windows return wrong data here)
 *   MPI       MPI_Win_allocate + MPI_Win_lock_all; MPI_Put + MPI_Win_flush, MPI_Get + MPI_Win_flush
 *             (puts to 64 places: MPI_Put + MPI_Win_flush_local, the guarantee of a blocking put)
 * Every timed run of puts ends with its puts at the target (RMC: rmc_fence, ARMCI: ARMCI_Fence,
 * MPI: MPI_Win_flush), so a put that returns at local completion (RMC stages puts to new places)
 * is compared at the same completion as the others.
 *   memcpy    local buffer to local buffer of the same size (the speed of light for node-local)
 * Ratios are RMC speed / peer speed (latency: peer time / RMC time; bandwidth: RMC GB/s / peer
 * GB/s): above 1x RMC is faster.
 *
 * A third table compares MPI_Win_flush with MPI_Win_flush_local after 8-byte MPI_Put / MPI_Get on
 * an MPI_Win_allocate window and on an MPI_Win_create window over RMC's region memory (the kind of
 * window RMC uses for remote peers), to show what each completion costs on this MPICH.
 */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#ifdef HAVE_ARMCI_MPI
#include <armci.h>
#endif
#include "bench_util.h"
#if defined(__has_include)
#if __has_include(<rmc/progress.h>)
#include <rmc/progress.h>
#define HAVE_RMC_PROGRESS 1
#endif
#endif

#define GUARD 64 /* bytes past each message that must stay untouched */

enum { P_RMC, P_ARMCI, P_MPI, P_MEMCPY, NPEERS };
enum { OP_PUT, OP_GET, NOPS };
static const char *peer_name[NPEERS] = {"RMC", "ARMCI", "MPI", "memcpy"};
static const char *op_name[NOPS] = {"put", "get"};

/* memcpy through a volatile pointer so the compiler cannot drop or merge repeated copies */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

typedef struct ctx {
    int rank, np;
    size_t cap; /* max message + GUARD */
    char *src, *dst,
        *mbuf; /* local buffers (cap bytes): put source, get destination, memcpy peer */
    rmc_region_h reg;
    void **rbases; /* region bases per rank */
    int have_armci;
    void **abases; /* ARMCI_Malloc bases per rank */
    MPI_Win win;   /* MPI_Win_allocate, lock_all */
    char *wbase;
    MPI_Win cwin; /* MPI_Win_create over this rank's region part (flush diagnostics) */
    unsigned seq; /* verification counter (fresh patterns every check) */
    int spread;   /* latency "64 places": operation i goes to offset (i mod 64) * 64 */
} ctx_t;

#define SPREAD_PLACES 64
#define SPREAD_STEP   64
/* Offset of operation i: 0, or one of 64 places 64 bytes apart (distinct cache lines). */
static inline size_t place(const ctx_t *c, long i)
{
    return c->spread ? (size_t)(i % SPREAD_PLACES) * SPREAD_STEP : 0;
}

static uint8_t pat(size_t i, unsigned seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + (uint32_t)(i >> 8) * 97u;
    return (uint8_t)(x >> 13) | 1u; /* never 0 (fresh memory / a zero fill cannot pass) */
}

/* ------------------------------------------------------------------ the timed loops --- */

/* Runs `iters` operations of `n` bytes; returns nonzero if any failed. Only rank 0 calls it. */
static int run(ctx_t *c, int peer, int op, size_t n, long iters)
{
    int bad = 0;
    switch (peer * NOPS + op) {
    case P_RMC *NOPS + OP_PUT: {
        char *t = c->rbases[1];
        for (long i = 0; i < iters; i++)
            bad |= rmc_put(c->src, t + place(c, i), n, 1);
        bad |= rmc_fence(1); /* every put at the target, as on the other sides */
        break;
    }
    case P_RMC *NOPS + OP_GET: {
        void *t = c->rbases[1];
        for (long i = 0; i < iters; i++)
            bad |= rmc_get(t, c->dst, n, 1);
        break;
    }
#ifdef HAVE_ARMCI_MPI
    case P_ARMCI *NOPS + OP_PUT: {
        char *t = c->abases[1];
        for (long i = 0; i < iters; i++)
            bad |= ARMCI_Put(c->src, t + place(c, i), (int)n, 1);
        ARMCI_Fence(1);
        break;
    }
    case P_ARMCI *NOPS + OP_GET: {
        void *t = c->abases[1];
        for (long i = 0; i < iters; i++)
            bad |= ARMCI_Get(t, c->dst, (int)n, 1);
        break;
    }
#endif
    case P_MPI *NOPS + OP_PUT:
        for (long i = 0; i < iters; i++) {
            bad |= MPI_Put(c->src, (int)n, MPI_BYTE, 1, (MPI_Aint)place(c, i), (int)n, MPI_BYTE,
                           c->win);
            /* a blocking put's guarantee (src reusable); puts to one address are ordered */
            bad |= c->spread ? MPI_Win_flush_local(1, c->win) : MPI_Win_flush(1, c->win);
        }
        bad |= MPI_Win_flush(1, c->win); /* every put at the target */
        break;
    case P_MPI *NOPS + OP_GET:
        for (long i = 0; i < iters; i++) {
            bad |= MPI_Get(c->dst, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, c->win);
            bad |= MPI_Win_flush(1, c->win);
        }
        break;
    case P_MEMCPY *NOPS + OP_PUT:
        for (long i = 0; i < iters; i++)
            copy_fn(c->mbuf + place(c, i), c->src, n);
        break;
    case P_MEMCPY *NOPS + OP_GET:
        for (long i = 0; i < iters; i++)
            copy_fn(c->dst, c->mbuf, n);
        break;
    default:
        bad = 1;
    }
    return bad;
}

/* Median seconds per operation (rank 0; NAN elsewhere). Collective over MPI_COMM_WORLD. */
static double measure(ctx_t *c, const bench_opts_t *o, int peer, int op, size_t n, long iters)
{
    double s[BENCH_MAX_REPS];
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        bad |= run(c, peer, op, n, iters / 8 + 1); /* warm-up */
        for (int r = 0; r < o->reps; r++) {
            uint64_t t0 = bench_now_ns();
            bad |= run(c, peer, op, n, iters);
            uint64_t t1 = bench_now_ns();
            s[r] = (double)(t1 - t0) * 1e-9 / (double)iters;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (bad)
        bench_fail("%s %s of %zu bytes returned an error", peer_name[peer], op_name[op], n);
    return c->rank == 0 ? bench_median(s, (size_t)o->reps) : NAN;
}

/* ------------------------------------------------------------------ correctness check --- */

/* Target memory of `peer` on the calling rank (rank 1's own part; memcpy: rank 0's mbuf). */
static char *target_mem(ctx_t *c, int peer)
{
    switch (peer) {
    case P_RMC:
        return c->rbases[c->rank];
    case P_ARMCI:
        return c->abases ? c->abases[c->rank] : NULL;
    case P_MPI:
        return c->wbase;
    default:
        return c->mbuf;
    }
}

/* Synchronization making the target's local stores / the origin's completed operations visible
 * across ranks, in each peer's own model. */
static void peer_sync(ctx_t *c, int peer)
{
    switch (peer) {
    case P_RMC:
        if (rmc_barrier() != RMC_OK)
            bench_fail("rmc_barrier failed");
        break;
#ifdef HAVE_ARMCI_MPI
    case P_ARMCI:
        ARMCI_Barrier();
        break;
#endif
    case P_MPI:
        MPI_Win_sync(c->win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(c->win);
        break;
    default:
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void local_access(ctx_t *c, int peer, int begin)
{
#ifdef HAVE_ARMCI_MPI
    if (peer == P_ARMCI) {
        if (begin)
            ARMCI_Access_begin(c->abases[c->rank]);
        else
            ARMCI_Access_end(c->abases[c->rank]);
    }
#endif
    (void)c, (void)peer, (void)begin;
}

/* Returns the index of the first wrong byte of buf[0..n+GUARD) (pattern seed, then guard byte g),
 * or -1 when all are right. */
static long check_buf(const char *buf, size_t n, unsigned seed, uint8_t g)
{
    for (size_t i = 0; i < n + GUARD; i++) {
        uint8_t want = i < n ? pat(i, seed) : g;
        if ((uint8_t)buf[i] != want) {
            fprintf(stderr, "bench_contig: byte %zu of %zu (+%d guard): 0x%02x, expected 0x%02x\n",
                    i, n, GUARD, (uint8_t)buf[i], want);
            return (long)i;
        }
    }
    return -1;
}

/* One put or get of n bytes with the data checked where it lands. Collective. */
static void verify(ctx_t *c, int peer, int op, size_t n)
{
    unsigned seed = ++c->seq;
    long bad_at = -1;
    int err = 0;
    if (peer == P_MEMCPY) {
        if (c->rank == 0) {
            char *from = op == OP_PUT ? c->src : c->mbuf, *to = op == OP_PUT ? c->mbuf : c->dst;
            for (size_t i = 0; i < n; i++)
                from[i] = (char)pat(i, seed);
            memset(to, 0x5a, n + GUARD);
            err = run(c, peer, op, n, 1);
            bad_at = check_buf(to, n, seed, 0x5a);
        }
    } else if (op == OP_PUT) {
        char *tm = target_mem(c, peer);
        if (c->rank == 1) {
            local_access(c, peer, 1);
            memset(tm, 0xee, n + GUARD);
            local_access(c, peer, 0);
        }
        peer_sync(c, peer);
        if (c->rank == 0) {
            for (size_t i = 0; i < n; i++)
                c->src[i] = (char)pat(i, seed);
            err = run(c, peer, op, n, 1);
#ifdef HAVE_ARMCI_MPI
            if (peer == P_ARMCI)
                ARMCI_Fence(1);
#endif
            if (peer == P_RMC)
                err |= rmc_fence(1);
        }
        peer_sync(c, peer);
        if (c->rank == 1) {
            local_access(c, peer, 1);
            bad_at = check_buf(tm, n, seed, 0xee);
            local_access(c, peer, 0);
        }
    } else {
        char *tm = target_mem(c, peer);
        if (c->rank == 1) {
            local_access(c, peer, 1);
            for (size_t i = 0; i < n; i++)
                tm[i] = (char)pat(i, seed);
            local_access(c, peer, 0);
        }
        peer_sync(c, peer);
        if (c->rank == 0) {
            memset(c->dst, 0x11, n + GUARD);
            err = run(c, peer, op, n, 1);
            bad_at = check_buf(c->dst, n, seed, 0x11);
        }
        peer_sync(c, peer);
    }
    int mine[2] = {err != 0, bad_at >= 0}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] || all[1])
        bench_fail("%s %s of %zu bytes: %s%s (first wrong byte at %ld on this rank)",
                   peer_name[peer], op_name[op], n, all[0] ? "operation failed " : "",
                   all[1] ? "data wrong at the destination" : "", bad_at);
}

/* ------------------------------------------------------------ flush / flush_local --- */

typedef enum {
    F_PUT_FLUSH,
    F_PUT_FLUSH_LOCAL,
    F_GET_FLUSH,
    F_GET_FLUSH_LOCAL,
    F_IDLE_FLUSH,
    F_IDLE_FLUSH_LOCAL,
    NF
} fkind_t;
static const char *fname[NF] = {"put+flush",       "put+flush_local", "get+flush",
                                "get+flush_local", "flush (idle)",    "flush_local (idle)"};

static double measure_flush(ctx_t *c, const bench_opts_t *o, MPI_Win w, fkind_t k, long iters)
{
    double s[BENCH_MAX_REPS];
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        for (int r = -1; r < o->reps; r++) { /* r = -1: warm-up */
            long it = r < 0 ? iters / 8 + 1 : iters;
            uint64_t t0 = bench_now_ns();
            for (long i = 0; i < it; i++) {
                switch (k) {
                case F_PUT_FLUSH:
                    bad |= MPI_Put(c->src, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, w);
                    bad |= MPI_Win_flush(1, w);
                    break;
                case F_PUT_FLUSH_LOCAL:
                    bad |= MPI_Put(c->src, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, w);
                    bad |= MPI_Win_flush_local(1, w);
                    break;
                case F_GET_FLUSH:
                    bad |= MPI_Get(c->dst, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, w);
                    bad |= MPI_Win_flush(1, w);
                    break;
                case F_GET_FLUSH_LOCAL:
                    bad |= MPI_Get(c->dst, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, w);
                    bad |= MPI_Win_flush_local(1, w);
                    break;
                case F_IDLE_FLUSH:
                    bad |= MPI_Win_flush(1, w);
                    break;
                default:
                    bad |= MPI_Win_flush_local(1, w);
                    break;
                }
            }
            uint64_t t1 = bench_now_ns();
            if (r >= 0)
                s[r] = (double)(t1 - t0) * 1e-9 / (double)it;
        }
        bad |= MPI_Win_flush(1, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (bad)
        bench_fail("flush diagnostics (%s): MPI error", fname[k]);
    return c->rank == 0 ? bench_median(s, (size_t)o->reps) : NAN;
}

/* ----------------------------------------------------------------------------- main --- */

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_contig", 8, 4u << 20, &o);
    if (prc)
        return prc > 0;

    ctx_t c;
    memset(&c, 0, sizeof(c));
    if (bench_mpi_start(&argc, &argv, "bench_contig", &c.rank, &c.np, NULL))
        return 1;
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    if (st != RMC_OK)
        bench_fail("rmc_init: %s", rmc_status_string(st));
#ifdef HAVE_ARMCI_MPI
    if (ARMCI_Init() != 0)
        bench_fail("ARMCI_Init failed");
    c.have_armci = 1;
#endif

    size_t maxn = o.max_size < 8 ? 8 : o.max_size; /* the latency test moves 8 bytes */
    c.cap = maxn + GUARD;
    if (c.cap < SPREAD_PLACES * SPREAD_STEP + GUARD) /* the latency test's 64 places */
        c.cap = SPREAD_PLACES * SPREAD_STEP + GUARD;
    c.src = bench_alloc(c.cap);
    c.dst = bench_alloc(c.cap);
    c.mbuf = bench_alloc(c.cap);
    c.rbases = calloc((size_t)c.np, sizeof(void *));
    if (!c.rbases)
        bench_fail("out of memory");
    st = rmc_region_alloc(c.cap, c.rbases, &c.reg);
    if (st != RMC_OK)
        bench_fail("rmc_region_alloc(%zu): %s", c.cap, rmc_status_string(st));
#ifdef HAVE_ARMCI_MPI
    c.abases = calloc((size_t)c.np, sizeof(void *));
    if (!c.abases || ARMCI_Malloc(c.abases, (armci_size_t)c.cap) != 0)
        bench_fail("ARMCI_Malloc(%zu) failed", c.cap);
#endif
    /* MPICH 4.0.2 (ch4:ucx) bug: an MPI_Win_allocate window whose per-rank size is not a multiple
     * of 16 gets a misaligned shared-memory segment on the target and puts from other ranks land 8
     * bytes before the target's base (in the previous rank's part). Keep the size a multiple of 64.
     */
    size_t wsize = (c.cap + 63) & ~(size_t)63;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    if (MPI_Win_allocate((MPI_Aint)wsize, 1, info, MPI_COMM_WORLD, &c.wbase, &c.win) !=
            MPI_SUCCESS ||
        MPI_Win_create(c.rbases[c.rank], (MPI_Aint)c.cap, 1, info, MPI_COMM_WORLD, &c.cwin) !=
            MPI_SUCCESS)
        bench_fail("MPI window creation failed");
    MPI_Info_free(&info);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, c.win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, c.cwin);

    int local = rmc_same_node(1) == 1;
    const char *thr = "";
#ifdef HAVE_RMC_PROGRESS
    thr =
        rmc_progress_thread_active() ? ", RMC progress thread running" : ", no RMC progress thread";
#endif
    char peers[1024];
    snprintf(peers, sizeof(peers),
             "RMC %s: rmc_put/rmc_get blocking, rank 1 %s%s | ARMCI-MPI 0.3.1%s | MPI: "
             "MPI_Win_allocate + lock_all, MPI_Put/MPI_Get + MPI_Win_flush each | memcpy: local "
             "buffer to local buffer",
             rmc_version(),
             local ? "node-local (loads/stores through shared memory)" : "remote (MPI RMA)", thr,
#ifdef HAVE_ARMCI_MPI
             " with ARMCI_USE_WIN_ALLOCATE=0 (its default MPI_Win_allocate windows return wrong "
             "data on this MPICH for sizes not a multiple of 16), ARMCI_Put/ARMCI_Get on "
             "ARMCI_Malloc memory"
#else
             ": not found at configure time, column empty"
#endif
    );
    bench_header(&o, "contiguous blocking put/get, origin rank 0, target rank 1", peers);

    /* targets: node-local target -> the real-node-mode targets, remote -> RMC_NODE_SIZE=1 ones */
    int real = local;
    /* ---- latency ---- */
    long lat_it = bench_iters(&o, 10000);
    char title[256];
    snprintf(title, sizeof(title),
             "8-byte latency [us], median of %d reps x %ld ops (ratios: RMC speed / peer speed)",
             o.reps, lat_it);
    bench_table_t *lat = bench_table_new("latency", "op", title);
    int lc[NPEERS];
    for (int p = 0; p < NPEERS; p++)
        lc[p] = bench_table_col(lat, peer_name[p], "us");
    int l_ar = bench_table_ratio(lat, "RMC/ARMCI", lc[P_ARMCI], lc[P_RMC], BENCH_RATIO_X);
    int l_mr = bench_table_ratio(lat, "RMC/MPI", lc[P_MPI], lc[P_RMC], BENCH_RATIO_X);
    bench_table_ratio(lat, "RMC/memcpy", lc[P_MEMCPY], lc[P_RMC], BENCH_RATIO_PCT);
    bench_table_plot(lat, 0, 1, "us (log)");
    /* put, get, and put to 64 places in turn (a blocking put that does not repeat the last
     * one's place need not wait for the target: staged puts, docs/api.md) */
    for (int k = 0; k <= NOPS; k++) {
        int op = k < NOPS ? k : OP_PUT;
        int row = bench_table_row(lat, k < NOPS ? op_name[op] : "put to 64 places", NAN);
        for (int p = 0; p < NPEERS; p++) {
            if (p == P_ARMCI && !c.have_armci)
                continue;
            verify(&c, p, op, 8);
            c.spread = k == NOPS;
            bench_table_set(lat, row, lc[p], 1e6 * measure(&c, &o, p, op, 8, lat_it));
            c.spread = 0;
        }
    }
    if (real) {
        if (c.have_armci)
            bench_table_target(lat, l_ar, 5.0, NAN, NAN, "real node mode: RMC/ARMCI >= 5x (8 B)");
    } else {
        if (c.have_armci)
            bench_table_target(lat, l_ar, 1.0, NAN, NAN,
                               "RMC_NODE_SIZE=1: RMC no slower than ARMCI");
        bench_table_target(lat, l_mr, 1.0 / 1.3, NAN, NAN,
                           "RMC_NODE_SIZE=1: RMC within 1.3x of MPI (RMC/MPI >= 0.77x)");
    }

    /* ---- bandwidth ---- */
    bench_table_t *bw[NOPS];
    int bc[NOPS][NPEERS];
    const size_t budget = 48u << 20; /* bytes per repetition */
    for (int op = 0; op < NOPS; op++) {
        char name[32];
        snprintf(name, sizeof(name), "bw_%s", op_name[op]);
        snprintf(title, sizeof(title),
                 "%s bandwidth [GB/s = 1e9 B/s], median of %d reps (ratios: RMC / peer)",
                 op_name[op], o.reps);
        bw[op] = bench_table_new(name, "size", title);
        for (int p = 0; p < NPEERS; p++)
            bc[op][p] = bench_table_col(bw[op], peer_name[p], "GB/s");
        int ar =
            bench_table_ratio(bw[op], "RMC/ARMCI", bc[op][P_RMC], bc[op][P_ARMCI], BENCH_RATIO_X);
        int mr = bench_table_ratio(bw[op], "RMC/MPI", bc[op][P_RMC], bc[op][P_MPI], BENCH_RATIO_X);
        int cr = bench_table_ratio(bw[op], "RMC/memcpy", bc[op][P_RMC], bc[op][P_MEMCPY],
                                   BENCH_RATIO_PCT);
        bench_table_plot(bw[op], 1, 1, "GB/s (log)");
        if (real) {
            if (c.have_armci)
                bench_table_target(bw[op], ar, 2.0, 65536, 4u << 20,
                                   "real node mode, 64K..4M: RMC/ARMCI >= 2x");
            bench_table_target(bw[op], cr, 70.0, 65536, 4u << 20,
                               "real node mode, 64K..4M: RMC >= 70% of memcpy");
        } else {
            if (c.have_armci)
                bench_table_target(bw[op], ar, 1.0, NAN, NAN,
                                   "RMC_NODE_SIZE=1: RMC no slower than ARMCI at any size");
            bench_table_target(bw[op], mr, 1.0 / 1.3, NAN, NAN,
                               "RMC_NODE_SIZE=1: RMC within 1.3x of MPI (RMC/MPI >= 0.77x)");
        }
    }
    for (size_t n = o.min_size; n; n = bench_next_size(&o, n)) {
        char lab[BENCH_LABEL_LEN];
        bench_size_label(n, lab);
        long it = bench_iters_for_size(&o, n, budget, 8, 4000);
        for (int op = 0; op < NOPS; op++) {
            int row = bench_table_row(bw[op], lab, (double)n);
            for (int p = 0; p < NPEERS; p++) {
                if (p == P_ARMCI && !c.have_armci)
                    continue;
                verify(&c, p, op, n);
                double s = measure(&c, &o, p, op, n, it);
                bench_table_set(bw[op], row, bc[op][p], (double)n / s * 1e-9);
            }
        }
    }

    /* ---- MPI_Win_flush vs MPI_Win_flush_local ---- */
    snprintf(title, sizeof(title), "MPI: 8-byte op + completion [us], median of %d reps x %ld",
             o.reps, lat_it);
    bench_table_t *fl = bench_table_new("flush", "sequence", title);
    int fa = bench_table_col(fl, "Win_allocate", "us");
    int fc = bench_table_col(fl, "Win_create(RMC mem)", "us");
    bench_table_plot(fl, 0, 0, "us");
    for (int k = 0; k < NF; k++) {
        int row = bench_table_row(fl, fname[k], NAN);
        bench_table_set(fl, row, fa, 1e6 * measure_flush(&c, &o, c.win, (fkind_t)k, lat_it));
        bench_table_set(fl, row, fc, 1e6 * measure_flush(&c, &o, c.cwin, (fkind_t)k, lat_it));
    }
    bench_table_note(fl, "Win_allocate: the MPI peer's window; Win_create(RMC mem): an "
                         "MPI_Win_create window over this rank's part of the RMC region, the kind "
                         "of window RMC uses for remote peers; both lock_all held");

    bench_table_t *all[] = {lat, bw[OP_PUT], bw[OP_GET], fl};
    int misses = bench_finish(&o, all, 4);
    if (c.rank == 0)
        printf("# targets: %s\n", misses ? "some MISSED (cells marked !)" : "all met");

    MPI_Win_unlock_all(c.cwin);
    MPI_Win_unlock_all(c.win);
    MPI_Win_free(&c.cwin);
    MPI_Win_free(&c.win);
#ifdef HAVE_ARMCI_MPI
    ARMCI_Free(c.abases[c.rank]);
    ARMCI_Finalize();
    free(c.abases);
#endif
    rmc_region_free(c.reg);
    free(c.rbases);
    free(c.src);
    free(c.dst);
    free(c.mbuf);
    rmc_finalize();
    MPI_Finalize();
    return 0;
}
