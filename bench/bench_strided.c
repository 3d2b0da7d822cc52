/* bench_strided: 2-D strided get / put / accumulate of double-matrix patches, RMC (automatic and
 * each forced protocol) against ARMCI-MPI (ARMCI_GetS/PutS/AccS), plain MPI with a vector datatype,
 * and a local strided memcpy.
 *
 * 2 ranks: rank 0 is the origin, rank 1 owns the matrix and waits in a barrier while rank 0
 * measures. Remote matrix: row-major doubles, 1024 columns (ld 1024) and 4096 rows, so the square
 * patches are patches of a 1024x1024 matrix and the tall-skinny 4096x1 patch is a column; the wide
 * 1x4096 patch is a row of the same memory seen as 1024 rows of 4096 (ld 4096). The local side is a
 * dense rows x cols buffer (as NGA_Get / NGA_Put / NGA_Acc use it). Patches start at row 1, column
 * 1 (wide: column 0).
 *
 * Every blocking operation is timed in a loop followed by one completion at the target of the
 * whole loop (RMC: rmc_fence; ARMCI: ARMCI_Fence; MPI: each op is followed by MPI_Win_flush), so
 * all peers are charged for remote completion. Accumulate: dst += 1.0 * src (ARMCI_ACC_DBL, scale
 * 1.0; MPI_SUM). Before each (shape, peer, op) is timed its result is checked once at the
 * destination (including the cells around the patch): wrong data aborts the benchmark.
 *
 * Medians of --reps repetitions; GB/s = patch bytes / time / 1e9. Ratios: RMC auto / peer. The
 * repetitions of all peers are interleaved in a shuffled order (background load and cache state hit
 * every peer alike); a repetition moves ~48 MB, or lasts at most ~40 ms for very slow protocols.
 *
 * With a remote target (RMC_NODE_SIZE=1) a second set of tables sweeps the chunk size l0 of a
 * 256 KiB patch for each forced protocol: the data behind the automatic choice (comm/strided).
 */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#ifdef HAVE_ARMCI_MPI
#include <armci.h>
#endif
#include "bench_util.h"

#define LD        1024
#define NROWS     4096
#define MAT_BYTES ((size_t)LD * NROWS * sizeof(double))

/* P_MPIC: the MPI reference on the kind of window RMC's regions use (MPI_Win_create over memory
 * from MPI_Win_allocate_shared): MPICH's accumulates are faster on MPI_Win_allocate windows. */
enum { P_AUTO, P_DT, P_LIST, P_PACK, P_ARMCI, P_MPI, P_MPIC, P_MEMCPY, NPEERS };
static const char *peer_name[NPEERS] = {"RMC auto", "RMC datatype", "RMC list",          "RMC pack",
                                        "ARMCI",    "MPI vector",   "MPI vector create", "memcpy"};
enum { OP_GET, OP_PUT, OP_ACC, NOPS };
static const char *op_name[NOPS] = {"get", "put", "acc"};

typedef struct shape {
    const char *label;
    int rows, cols, ld, r0, c0;
} shape_t;

static const shape_t shapes[] = {
    {"16x16", 16, 16, LD, 1, 1},     {"128x128", 128, 128, LD, 1, 1},
    {"512x512", 512, 512, LD, 1, 1}, {"4096x1", 4096, 1, LD, 0, 1}, /* tall-skinny: a column */
    {"1x4096", 1, 4096, 4096, 1, 0},                                /* wide: a row (ld 4096 view) */
};
#define NSHAPES (int)(sizeof(shapes) / sizeof(shapes[0]))

typedef struct ctx {
    int rank, np;
    double *loc;   /* dense local patch buffer */
    double *lmat;  /* local matrix for the memcpy peer */
    void **rbases; /* RMC region bases */
    rmc_region_h reg;
    void **abases; /* ARMCI */
    MPI_Win win;   /* plain MPI: MPI_Win_allocate, lock_all */
    double *wbase;
    MPI_Win cwin; /* plain MPI on RMC's window kind: MPI_Win_create over swin's memory */
    MPI_Win swin; /* MPI_Win_allocate_shared on this rank alone */
    double *cbase;
    int have_armci;
} ctx_t;

static const double ONE = 1.0;

static double pat(size_t i)
{
    return (double)(i % 1000003) * 0.5 + 1.0;
}

/* Matrix memory of peer p on the calling rank. */
static double *mat_of(ctx_t *c, int p)
{
    if (p <= P_PACK)
        return c->rbases[c->rank];
    if (p == P_ARMCI)
        return c->abases ? c->abases[c->rank] : NULL;
    if (p == P_MPI)
        return c->wbase;
    if (p == P_MPIC)
        return c->cbase;
    return c->lmat;
}

static size_t patch_off(const shape_t *s)
{
    return (size_t)s->r0 * (size_t)s->ld + (size_t)s->c0;
}

/* ---------------------------------------------------------------------- timed loop --- */

static void memcpy_patch(int op, double *m, double *buf, const shape_t *s)
{
    size_t rb = (size_t)s->cols * sizeof(double);
    for (int r = 0; r < s->rows; r++) {
        double *row = m + (size_t)r * (size_t)s->ld;
        double *b = buf + (size_t)r * (size_t)s->cols;
        if (op == OP_GET)
            memcpy(b, row, rb);
        else if (op == OP_PUT)
            memcpy(row, b, rb);
        else
            for (int j = 0; j < s->cols; j++)
                row[j] += b[j];
    }
}

/* `iters` operations of peer p; completion of all at the target included. Rank 0 only. */
static int run(ctx_t *c, int p, int op, const shape_t *s, MPI_Datatype vt, long iters)
{
    int bad = 0;
    int count[2] = {s->cols * (int)sizeof(double), s->rows};
    int ls[1] = {s->cols * (int)sizeof(double)}, rs[1] = {s->ld * (int)sizeof(double)};
    size_t off = patch_off(s);
    if (p <= P_PACK) {
        bad |= rmc_strided_method_set(p == P_AUTO   ? RMC_STRIDED_AUTO
                                      : p == P_DT   ? RMC_STRIDED_DATATYPE
                                      : p == P_LIST ? RMC_STRIDED_LIST
                                                    : RMC_STRIDED_PACK);
        double *rm = (double *)c->rbases[1] + off;
        for (long i = 0; i < iters; i++) {
            if (op == OP_GET)
                bad |= rmc_get_strided(rm, rs, c->loc, ls, count, 1, 1);
            else if (op == OP_PUT)
                bad |= rmc_put_strided(c->loc, ls, rm, rs, count, 1, 1);
            else
                bad |= rmc_acc_strided(RMC_ACC_DOUBLE, &ONE, c->loc, ls, rm, rs, count, 1, 1);
        }
        bad |= rmc_fence(1);
    }
#ifdef HAVE_ARMCI_MPI
    else if (p == P_ARMCI) {
        double *rm = (double *)c->abases[1] + off;
        for (long i = 0; i < iters; i++) {
            if (op == OP_GET)
                bad |= ARMCI_GetS(rm, rs, c->loc, ls, count, 1, 1);
            else if (op == OP_PUT)
                bad |= ARMCI_PutS(c->loc, ls, rm, rs, count, 1, 1);
            else
                bad |= ARMCI_AccS(ARMCI_ACC_DBL, (void *)&ONE, c->loc, ls, rm, rs, count, 1, 1);
        }
        ARMCI_Fence(1);
    }
#endif
    else if (p == P_MPI || p == P_MPIC) {
        MPI_Win w = p == P_MPI ? c->win : c->cwin;
        int n = s->rows * s->cols;
        MPI_Aint disp = (MPI_Aint)(off * sizeof(double));
        for (long i = 0; i < iters; i++) {
            if (op == OP_GET)
                bad |= MPI_Get(c->loc, n, MPI_DOUBLE, 1, disp, 1, vt, w);
            else if (op == OP_PUT)
                bad |= MPI_Put(c->loc, n, MPI_DOUBLE, 1, disp, 1, vt, w);
            else
                bad |= MPI_Accumulate(c->loc, n, MPI_DOUBLE, 1, disp, 1, vt, MPI_SUM, w);
            bad |= MPI_Win_flush(1, w);
        }
    } else if (p == P_MEMCPY) {
        for (long i = 0; i < iters; i++)
            memcpy_patch(op, c->lmat + off, c->loc, s);
        __asm__ __volatile__("" ::: "memory");
    } else {
        bad = 1;
    }
    return bad;
}

static int peer_on(const ctx_t *c, unsigned mask, int p)
{
    return (mask >> p & 1u) && (p != P_ARMCI || c->have_armci);
}

/* Median seconds per operation of every peer (rank 0; NAN elsewhere) in sec[]. Repetitions are
 * interleaved across peers (rep r of every peer in a shuffled order, then rep r+1), so a burst of
 * background load hits all peers alike. Collective over MPI_COMM_WORLD. */
static void measure_all(ctx_t *c, const bench_opts_t *o, int op, const shape_t *s, MPI_Datatype vt,
                        long iters, unsigned mask, double sec[NPEERS])
{
    static double t[NPEERS][BENCH_MAX_REPS];
    long it[NPEERS];
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (c->rank == 0) {
        /* warm-up, which also caps each peer's iterations at ~40 ms per repetition (10 ms with
         * --quick): a protocol 100x slower than the others must not stretch the run 100x */
        double cap = o->quick ? 0.01 : 0.04;
        for (int p = 0; p < NPEERS; p++) {
            if (!peer_on(c, mask, p))
                continue;
            long w = iters / 8 + 1;
            uint64_t t0 = bench_now_ns();
            bad |= run(c, p, op, s, vt, w);
            double per = (double)(bench_now_ns() - t0) * 1e-9 / (double)w;
            it[p] = iters;
            if (per * (double)iters > cap)
                it[p] = (long)(cap / per) > 3 ? (long)(cap / per) : 3;
        }
        /* the order of the peers is shuffled for every repetition: no peer always runs right
         * after the memcpy peer has flushed the caches, or right after one that warmed them */
        unsigned seed = 12345u;
        for (int r = 0; r < o->reps; r++) {
            int order[NPEERS];
            for (int i = 0; i < NPEERS; i++)
                order[i] = i;
            for (int i = NPEERS - 1; i > 0; i--) {
                seed = seed * 1103515245u + 12345u;
                int j = (int)((seed >> 16) % (unsigned)(i + 1)), x = order[i];
                order[i] = order[j];
                order[j] = x;
            }
            for (int pi = 0; pi < NPEERS; pi++) {
                int p = order[pi];
                if (!peer_on(c, mask, p))
                    continue;
                uint64_t t0 = bench_now_ns();
                bad |= run(c, p, op, s, vt, it[p]);
                t[p][r] = (double)(bench_now_ns() - t0) * 1e-9 / (double)it[p];
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any)
        bench_fail("%s %s returned an error", op_name[op], s->label);
    for (int p = 0; p < NPEERS; p++)
        sec[p] = c->rank == 0 && peer_on(c, mask, p) ? bench_median(t[p], (size_t)o->reps) : NAN;
}

/* ------------------------------------------------------------------ verification --- */

static void peer_sync(ctx_t *c, int p)
{
    if (p <= P_PACK) {
        if (rmc_barrier() != RMC_OK)
            bench_fail("rmc_barrier failed");
    }
#ifdef HAVE_ARMCI_MPI
    else if (p == P_ARMCI)
        ARMCI_Barrier();
#endif
    else if (p == P_MPI || p == P_MPIC) {
        MPI_Win w = p == P_MPI ? c->win : c->cwin;
        MPI_Win_sync(w);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(w);
    } else
        MPI_Barrier(MPI_COMM_WORLD);
}

static void mat_access(ctx_t *c, int p, int begin)
{
#ifdef HAVE_ARMCI_MPI
    if (p == P_ARMCI) {
        if (begin)
            ARMCI_Access_begin(c->abases[c->rank]);
        else
            ARMCI_Access_end(c->abases[c->rank]);
    }
#endif
    (void)c, (void)p, (void)begin;
}

/* The owner (rank 1; memcpy: rank 0) rewrites its whole matrix with the pattern. Collective. */
static void reset(ctx_t *c, int p)
{
    int owner = p == P_MEMCPY ? 0 : 1;
    if (c->rank == owner) {
        double *m = mat_of(c, p);
        mat_access(c, p, 1);
        for (size_t i = 0; i < (size_t)LD * NROWS; i++)
            m[i] = pat(i);
        mat_access(c, p, 0);
    }
    peer_sync(c, p);
}

/* Expected value of matrix element i after one operation of `op` (put writes -pat, acc adds 2*pat
 * of the local buffer holding 2*pat(patch index)). */
static int check_matrix(const double *m, int op, const shape_t *s)
{
    size_t off = patch_off(s);
    /* the patch and a frame of one element around it */
    for (long r = (long)s->r0 - 1; r <= (long)(s->r0 + s->rows); r++)
        for (long j = (long)s->c0 - 1; j <= (long)(s->c0 + s->cols); j++) {
            if (r < 0 || j < 0 || j >= s->ld ||
                (size_t)r * (size_t)s->ld + (size_t)j >= (size_t)LD * NROWS)
                continue;
            size_t i = (size_t)r * (size_t)s->ld + (size_t)j;
            int inside = r >= s->r0 && r < s->r0 + s->rows && j >= s->c0 && j < s->c0 + s->cols;
            double want = pat(i);
            if (inside) {
                size_t k = (size_t)(r - s->r0) * (size_t)s->cols + (size_t)(j - s->c0);
                want = op == OP_PUT ? -pat(k) : pat(i) + 2.0 * pat(k);
            }
            if (m[i] != want)
                return 0;
        }
    (void)off;
    return 1;
}

static void verify(ctx_t *c, int p, int op, const shape_t *s, MPI_Datatype vt)
{
    reset(c, p);
    size_t n = (size_t)s->rows * (size_t)s->cols;
    int ok = 1, err = 0;
    int owner = p == P_MEMCPY ? 0 : 1;
    if (c->rank == 0) {
        for (size_t k = 0; k < n; k++)
            c->loc[k] = op == OP_GET ? -7.0 : op == OP_PUT ? -pat(k) : 2.0 * pat(k);
        err = run(c, p, op, s, vt, 1);
        if (op == OP_GET) {
            size_t off = patch_off(s);
            for (int r = 0; r < s->rows && ok; r++)
                for (int j = 0; j < s->cols; j++)
                    if (c->loc[(size_t)r * (size_t)s->cols + (size_t)j] !=
                        pat(off + (size_t)r * (size_t)s->ld + (size_t)j)) {
                        ok = 0;
                        break;
                    }
        }
    }
    peer_sync(c, p);
    if (op != OP_GET && c->rank == owner) {
        mat_access(c, p, 1);
        ok = check_matrix(mat_of(c, p), op, s);
        mat_access(c, p, 0);
    }
    int mine[2] = {err != 0, !ok}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all[0] || all[1])
        bench_fail("%s %s %s: %s", peer_name[p], op_name[op], s->label,
                   all[0] ? "operation failed" : "wrong data at the destination");
}

/* ----------------------------------------------------------------------------- main --- */

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_strided", 2048, 2u << 20, &o);
    if (prc)
        return prc > 0;
    ctx_t c;
    memset(&c, 0, sizeof(c));
    if (bench_mpi_start(&argc, &argv, "bench_strided", &c.rank, &c.np, NULL))
        return 1;
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    if (st != RMC_OK)
        bench_fail("rmc_init: %s", rmc_status_string(st));
#ifdef HAVE_ARMCI_MPI
    if (ARMCI_Init() != 0)
        bench_fail("ARMCI_Init failed");
    c.have_armci = 1;
#endif
    c.loc = bench_alloc((size_t)512 * 512 * sizeof(double)); /* the largest patch */
    c.lmat = bench_alloc(MAT_BYTES);
    c.rbases = calloc((size_t)c.np, sizeof(void *));
    if (!c.rbases || (st = rmc_region_alloc(MAT_BYTES, c.rbases, &c.reg)) != RMC_OK)
        bench_fail("rmc_region_alloc: %s", rmc_status_string(st));
#ifdef HAVE_ARMCI_MPI
    c.abases = calloc((size_t)c.np, sizeof(void *));
    if (!c.abases || ARMCI_Malloc(c.abases, (armci_size_t)MAT_BYTES) != 0)
        bench_fail("ARMCI_Malloc failed");
#endif
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    if (MPI_Win_allocate((MPI_Aint)MAT_BYTES, 1, info, MPI_COMM_WORLD, &c.wbase, &c.win) !=
        MPI_SUCCESS)
        bench_fail("MPI_Win_allocate failed");
    MPI_Comm self;
    MPI_Comm_split(MPI_COMM_WORLD, c.rank, 0, &self);
    if (MPI_Win_allocate_shared((MPI_Aint)MAT_BYTES, 1, MPI_INFO_NULL, self, &c.cbase, &c.swin) !=
            MPI_SUCCESS ||
        MPI_Win_create(c.cbase, (MPI_Aint)MAT_BYTES, 1, info, MPI_COMM_WORLD, &c.cwin) !=
            MPI_SUCCESS)
        bench_fail("MPI_Win_allocate_shared / MPI_Win_create failed");
    MPI_Comm_free(&self);
    MPI_Info_free(&info);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, c.win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, c.cwin);

    int real = rmc_node_count() == 1;
    char peers[1024];
    snprintf(peers, sizeof(peers),
             "RMC %s (rank 1 %s): rmc_get/put/acc_strided blocking, auto and each protocol "
             "forced | ARMCI-MPI 0.3.1%s | MPI: MPI_Win_allocate + lock_all, MPI_Get/Put/"
             "Accumulate with an MPI_Type_vector target + MPI_Win_flush each; MPI create: the "
             "same on MPI_Win_create over MPI_Win_allocate_shared memory (RMC's window kind) | "
             "memcpy: local "
             "strided copy / += loop",
             rmc_version(),
             real ? "node-local: direct copies, accumulate under a lock word" : "remote: MPI RMA",
#ifdef HAVE_ARMCI_MPI
             " ARMCI_GetS/PutS/AccS(ARMCI_ACC_DBL) with ARMCI_USE_WIN_ALLOCATE=0 (its default "
             "shared windows return wrong data on this MPICH)"
#else
             ": not found at configure time, column empty"
#endif
    );
    bench_header(&o,
                 "2-D strided patches of a row-major double matrix, origin rank 0, target "
                 "rank 1",
                 peers);

    bench_table_t *tb[NOPS];
    int col[NOPS][NPEERS], best[NOPS];
    for (int op = 0; op < NOPS; op++) {
        char name[32], title[256];
        snprintf(name, sizeof(name), "strided_%s", op_name[op]);
        snprintf(title, sizeof(title),
                 "strided %s bandwidth [GB/s], median of %d reps (ratios: RMC auto / peer)",
                 op_name[op], o.reps);
        tb[op] = bench_table_new(name, "patch", title);
        for (int p = 0; p < NPEERS; p++)
            col[op][p] = bench_table_col(tb[op], peer_name[p], "GB/s");
        best[op] = bench_table_col(tb[op], "best forced", "GB/s");
        int ra = bench_table_ratio(tb[op], "auto/ARMCI", col[op][P_AUTO], col[op][P_ARMCI],
                                   BENCH_RATIO_X);
        bench_table_ratio(tb[op], "auto/MPI", col[op][P_AUTO], col[op][P_MPI], BENCH_RATIO_X);
        bench_table_ratio(tb[op], "auto/MPI create", col[op][P_AUTO], col[op][P_MPIC],
                          BENCH_RATIO_X);
        int rb = bench_table_ratio(tb[op], "auto/best", col[op][P_AUTO], best[op], BENCH_RATIO_PCT);
        bench_table_ratio(tb[op], "auto/memcpy", col[op][P_AUTO], col[op][P_MEMCPY],
                          BENCH_RATIO_PCT);
        bench_table_plot(tb[op], 0, 1, "GB/s (log)");
        if (real) {
            bench_table_target(tb[op], ra, op == OP_ACC ? 3.0 : 5.0, 2, 3,
                               op == OP_ACC
                                   ? "real node mode, 128x128 and 512x512: RMC >= 3x ARMCI"
                                   : "real node mode, 128x128 and 512x512: RMC >= 5x ARMCI");
        } else {
            bench_table_target(tb[op], ra, 1.0, NAN, NAN,
                               "RMC_NODE_SIZE=1: RMC >= ARMCI at every shape");
            bench_table_target(tb[op], rb, 90.0, NAN, NAN,
                               "RMC_NODE_SIZE=1: auto within 10% of the best forced protocol");
        }
    }

    const size_t budget = 48u << 20; /* bytes per repetition: long enough to average out noise */
    for (int si = 0; si < NSHAPES; si++) {
        const shape_t *s = &shapes[si];
        size_t bytes = (size_t)s->rows * (size_t)s->cols * sizeof(double);
        long it = bench_iters_for_size(&o, bytes, budget, 4, 3000);
        MPI_Datatype vt;
        MPI_Type_vector(s->rows, s->cols, s->ld, MPI_DOUBLE, &vt);
        MPI_Type_commit(&vt);
        for (int op = 0; op < NOPS; op++) {
            int row = bench_table_row(tb[op], s->label, (double)(si + 1));
            double bf = 0, sec[NPEERS];
            for (int p = 0; p < NPEERS; p++)
                if (p != P_ARMCI || c.have_armci)
                    verify(&c, p, op, s, vt);
            measure_all(&c, &o, op, s, vt, it, ~0u, sec);
            for (int p = 0; p < NPEERS; p++) {
                double gbs = (double)bytes / sec[p] * 1e-9;
                bench_table_set(tb[op], row, col[op][p], gbs);
                if (p >= P_DT && p <= P_PACK && gbs > bf)
                    bf = gbs;
            }
            bench_table_set(tb[op], row, best[op], bf);
        }
        MPI_Type_free(&vt);
    }
    for (int op = 0; op < NOPS; op++)
        bench_table_note(tb[op], "rows: 1=16x16 2=128x128 3=512x512 4=4096x1 (column) 5=1x4096 "
                                 "(row); local side dense");

    /* ---- protocol sweep (remote targets only): a 256 KiB patch cut into chunks of l0 bytes
     * (remote stride 2*l0, local side dense), seed 004 eq. 9: the list costs o per chunk ---- */
    bench_table_t *sw[NOPS];
    int nt = NOPS;
    if (!real) {
        const size_t m = 256u << 10;
        int scol[NOPS][4];
        for (int op = 0; op < NOPS; op++) {
            char name[32], title[256];
            snprintf(name, sizeof(name), "sweep_%s", op_name[op]);
            snprintf(title, sizeof(title),
                     "protocol sweep, %s of 256 KiB in chunks of l0 bytes [GB/s], median of %d",
                     op_name[op], o.reps);
            sw[op] = bench_table_new(name, "l0", title);
            for (int p = P_AUTO; p <= P_PACK; p++)
                scol[op][p] = bench_table_col(sw[op], peer_name[p], "GB/s");
            int bcol = bench_table_col(sw[op], "best forced", "GB/s");
            bench_table_ratio(sw[op], "auto/best", scol[op][P_AUTO], bcol, BENCH_RATIO_PCT);
            bench_table_plot(sw[op], 1, 1, "GB/s (log)");
            for (size_t l0 = 8; l0 <= (64u << 10); l0 *= 2) {
                shape_t s = {NULL, (int)(m / l0), (int)(l0 / 8), (int)(2 * l0 / 8), 0, 0};
                char lab[32];
                s.label = bench_size_label(l0, lab);
                long it = bench_iters_for_size(&o, m, budget / 2, 3, 2000);
                int row = bench_table_row(sw[op], lab, (double)l0);
                double sec[NPEERS], bf = 0;
                for (int p = P_AUTO; p <= P_PACK; p++)
                    verify(&c, p, op, &s, MPI_DATATYPE_NULL);
                measure_all(&c, &o, op, &s, MPI_DATATYPE_NULL, it, 0xFu, sec);
                for (int p = P_AUTO; p <= P_PACK; p++) {
                    double g = (double)m / sec[p] * 1e-9;
                    bench_table_set(sw[op], row, scol[op][p], g);
                    if (p != P_AUTO && g > bf)
                        bf = g;
                }
                bench_table_set(sw[op], row, bcol, bf);
            }
        }
        nt = 2 * NOPS;
    }
    rmc_strided_method_set(RMC_STRIDED_AUTO);

    bench_table_t *all[2 * NOPS];
    for (int op = 0; op < NOPS; op++) {
        all[op] = tb[op];
        all[NOPS + op] = real ? NULL : sw[op];
    }
    int misses = bench_finish(&o, all, nt);
    if (c.rank == 0)
        printf("# targets: %s\n", misses ? "some MISSED (cells marked !)" : "all met");

    MPI_Win_unlock_all(c.win);
    MPI_Win_free(&c.win);
    MPI_Win_unlock_all(c.cwin);
    MPI_Win_free(&c.cwin);
    MPI_Win_free(&c.swin);
#ifdef HAVE_ARMCI_MPI
    ARMCI_Free(c.abases[c.rank]);
    ARMCI_Finalize();
#endif
    rmc_region_free(c.reg);
    rmc_finalize();
    free(c.rbases);
    free(c.abases);
    free(c.loc);
    free(c.lmat);
    MPI_Finalize();
    return 0;
}
