/* bench_containers: per-operation latency of RMC's containers (librmc_containers: queues, arrays,
 * the allocator) beside BCL's measured numbers and the raw MPI RMA sequence each operation stands
 * for.
 *
 * 2 ranks (more are allowed: ranks >= 2 only join the collectives). Rank 0 measures; rank 1 hosts
 * the container (in one row it pops) and otherwise waits in rmc_barrier, where it keeps serving
 * RMC's active messages: thread-mode atomics on a remote word are executed by the target inside
 * its RMC calls when it runs no progress thread, and a rank waiting in MPI_Barrier would not serve
 * them. Phases are separated by rmc_barrier for the same reason. Every cell is the median over
 * --reps repetitions of the mean time per operation of one repetition of --iters operations
 * (default 50000, --quick 12500), after a shorter warm-up repetition. Elements are int64
 * (rmc_type_i64); queues have room for one repetition's pushes (--iters).
 *
 * Rows (queue rows: rank 0 pushes --iters values, rmc_barrier, pops them back; A / W / R = remote
 * atomic / write / read, include/rmc/queue.h):
 *   FastQueue push remote      rmc_queue_push, promise 0, to a FAST queue hosted by rank 1: A + W.
 *                              BCL's FastQueue push, the cheapest remote push.
 *   FastQueue push local       the same to a queue hosted by rank 0 itself, through the protocol
 *                              (atomic and copy on the caller's own segment): BCL's local push.
 *   ... local (LOCAL promise)  RMC_PROMISE_LOCAL on the caller's own queue: plain loads and stores,
 *                              no atomic (RMC's shortcut; BCL has no counterpart).
 *   FastQueue pop              rmc_queue_pop, promise 0, from rank 1's queue after the rmc_barrier
 *                              that ends the push phase (FAST queues are phasal): A + R.
 *   CircularQueue push / pop   fully atomic (promise 0) on rank 1's CIRCULAR queue, pops after the
 *                              pushes: push = 2A + W (reserve, write, fence, mark ready in order),
 *                              pop = 2A + R. BCL's CircularQueue with its fully atomic promise.
 *   CircularQueue push while the other pops   rank 0 pushes to rank 1's CIRCULAR queue while rank
 *                              1 pops from it (both promise 0; rank 0 retries RMC_ERR_FULL, rank 1
 *                              RMC_ERR_EMPTY until it has every value); rank 0's time per push.
 *                              The contended case: pushers and poppers meet on the counters.
 *   ChecksumQueue push / pop   rank 1's CHECKSUM queue, promise 0: push = A + W, pop = 2A + R
 *                              (concurrent pushes and pops without ready marks; no BCL number).
 *   Array get / put (hosted)   rmc_array_get / rmc_array_put of one int64 of a 64-element array
 *                              hosted by rank 1, elements in turn: the container's per-call cost
 *                              over a plain remote get / put.
 *   Array get / put (block)    the same on a block-distributed array, elements owned by rank 1
 *                              (the owner is computed per call).
 *   alloc+free 64 B / 1 KiB    rmc_alloc + rmc_free pairs on rank 0 (local, not collective), per
 *                              pair: what a dynamic container pays per node it allocates.
 *   gptr put, first / grown segment memory   rmc_gptr_put of 8 bytes into a block of rank 1's
 *                              segment allocated at the start, and into one allocated after the
 *                              segment grew past its first commit (RMC_SEGMENT_SIZE): grown
 *                              memory must be reached as fast as the first (their MPI cell: the
 *                              array put's MPI_Put + MPI_Win_flush).
 *
 * Peers:
 *   BCL      constant reference numbers measured for BCL (MPI backend) on this machine with 2
 *            ranks; BCL has no emulated node mode, so they are real-node-mode numbers, shown in
 *            both modes. Not measured in this run.
 *   MPI RMA  measured in this run on a window of the benchmark's own (MPI_Win_allocate, size a
 *            multiple of 64 bytes: docs/benchmarks.md, MPICH 4.0.2 bug; MPI_Win_lock_all). A
 *            queue push is MPI_Fetch_and_op(+1) on the tail + MPI_Win_flush (the position is needed
 *            before the slot can be written), MPI_Put of 8 bytes into the slot + MPI_Win_flush; a
 *            pop the same on the head with MPI_Get (push local: on rank 0's own window part); the
 *            CircularQueue sequence adds the in-order mark, MPI_Compare_and_swap + MPI_Win_flush.
 *            No full / empty checks. ChecksumQueue rows show the sequences of the same shape
 *            (push A + W, pop 2A + R). Array get is MPI_Get of 8 bytes + MPI_Win_flush; array
 *            put MPI_Put of 8 bytes + MPI_Win_flush_local (a blocking put's local completion), all
 *            flushed before a place repeats (every 64 puts) and at the end of the run. No MPI
 * number where no raw sequence says the same (the LOCAL shortcut, the contended row, the
 * allocator). During these phases rank 1 waits in MPI_Barrier, as the MPI peers of the other
 *            benchmarks do (MPICH's progress there serves the RMA aimed at it); during RMC's it
 *            waits in rmc_barrier. On this MPICH a remote target's waiting loop shows in the
 *            latency of every remote operation, so the MPI/RMC ratio includes that difference.
 * Ratios: peer time / RMC time (above 1x RMC is faster).
 * Completion: RMC's puts and pushes return at local completion (a put to a new place, a FAST
 * queue's write, is staged), so every timed run of them ends with rmc_fence / rmc_fence_all inside
 * the timer; the MPI array put is the same guarantee (flush_local, flushes before a place repeats
 * and at the end); the MPI queue sequences flush every operation (a push's slot must be written
 * before the next push's counter). Both sides have every write at its target when the clock stops.
 *
 * Verification (a wrong value aborts the benchmark through bench_fail): every status is checked
 * (rmc_status_string and rmc_last_error on failure); queue pops must return exactly the values
 * pushed, in order (one pusher: FIFO), also in the contended row and for the MPI sequences; an
 * array get must return the value the last put of the phase left there, and rank 1 checks its own
 * elements (rmc_array_local) after the put phase; the allocator's blocks are checked once (owner,
 * alignment, zeroed, no overlap) and the segment's bytes in use must be unchanged after every
 * timed loop. --verbose prints RMC's remote operations per call (rmc_op_counts) of every row.
 */
#include "config.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#include <rmc/containers.h>
#include "bench_util.h"

#define ARR_N 64 /* array elements rank 0 touches, in turn */

/* Offsets in the MPI reference's window: two blocks of four counters, one per 64-byte line (block 0
 * for the FastQueue sequence, 1 for the CircularQueue one), then the slots. */
enum { W_TAIL = 0, W_READY = 64, W_HEAD = 128, W_FREED = 192, W_BLOCK = 256, W_SLOTS = 512 };

enum {
    R_FPUSH,
    R_FPUSH_LOC,
    R_FPUSH_LP,
    R_FPOP,
    R_CPUSH,
    R_CPOP,
    R_CPUSH_POPS,
    R_KPUSH,
    R_KPOP,
    R_AGET,
    R_APUT,
    R_DGET,
    R_DPUT,
    R_ALLOC64,
    R_ALLOC1K,
    R_GFIRST,
    R_GGROWN,
    NROWS
};
static const struct rowdef {
    const char *label;
    double bcl; /* BCL's reference [us], NAN: none */
} rowdef[NROWS] = {
    {"FastQueue push remote", 0.94},
    {"FastQueue push local", 0.40},
    {"FastQueue push local (LOCAL promise)", NAN},
    {"FastQueue pop", 1.10},
    {"CircularQueue push", 1.87},
    {"CircularQueue pop", 1.76},
    {"CircularQueue push while the other pops", 5.84},
    {"ChecksumQueue push", NAN},
    {"ChecksumQueue pop", NAN},
    {"Array get (hosted)", NAN},
    {"Array put (hosted)", NAN},
    {"Array get (block)", NAN},
    {"Array put (block)", NAN},
    {"alloc+free 64 B", NAN},
    {"alloc+free 1 KiB", NAN},
    {"gptr put (first segment memory)", NAN},
    {"gptr put (grown segment memory)", NAN},
};

typedef struct ctx {
    const bench_opts_t *o;
    int rank;
    long it;     /* operations per repetition (and queue capacity) */
    MPI_Win win; /* the MPI reference's window (MPI_Win_allocate, lock_all) */
    char *wbase;
    bench_table_t *t[2]; /* queues; arrays and allocator (from row R_TABLE2 on) */
    int c_rmc, c_mpi;    /* their columns (the same in both) */
    int c_rdma;          /* queues: RMC forced one-sided, where the RPC path is the choice */
    int rpc_choice;      /* rank 0's operations on rank 1's queues go as RPCs (the same on all) */
} ctx_t;
#define R_TABLE2 R_AGET

static void cell_set(ctx_t *c, int row, int col, double v)
{
    int k = row >= R_TABLE2;
    bench_table_set(c->t[k], row - (k ? R_TABLE2 : 0), col, v);
}
/* Row `to`'s MPI reference is row `from`'s (the same sequence). */
static void same_mpi(ctx_t *c, int to, int from)
{
    int k = from >= R_TABLE2;
    cell_set(c, to, c->c_mpi, bench_table_get(c->t[k], from - (k ? R_TABLE2 : 0), c->c_mpi));
}

/* ------------------------------------------------------------------------- checks --- */

static inline void want(const char *what, int64_t got, int64_t expect)
{
    if (__builtin_expect(got != expect, 0))
        bench_fail("%s returned %lld, expected %lld", what, (long long)got, (long long)expect);
}

/* Between phases. RMC: rmc_barrier, which serves RMC's active messages while it waits. The MPI
 * reference: MPI_Barrier, like the MPI peers of the other benchmarks (MPICH's progress inside it
 * serves RMA to this rank). */
static void barrier(int mpi)
{
    if (mpi)
        bench_mck(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    else
        bench_ck(rmc_barrier(), "rmc_barrier");
}

static double us_since(uint64_t t0, long n)
{
    return (double)(bench_now_ns() - t0) * 1e-3 / (double)n;
}

/* ---------------------------------------------------------------- the measurement --- */

/* One timed phase of a repetition, called on every rank between rmc_barriers: n operations with
 * values from `base`; returns rank 0's microseconds per operation (0 elsewhere). */
typedef double (*phase_fn)(ctx_t *c, const void *arg, int phase, int64_t base, long n);

typedef struct meas {
    phase_fn fn;
    const void *arg;
    int nphases;          /* 1 or 2 (queues: push, pop; arrays: put, get) */
    const char *name;     /* --verbose: RMC's operations per call are printed under this name */
    int row[2], col;      /* where the medians go (row -1: nowhere) */
    int mpi;              /* MPI reference: phases separated by MPI_Barrier (see barrier()) */
    rmc_op_counts_t n[2]; /* --verbose: RMC's counts per phase */
} meas_t;

static void count(meas_t *m, int p, const rmc_op_counts_t *before)
{
    rmc_op_counts_t a;
    bench_ck(rmc_op_counts(&a), "rmc_op_counts");
    m->n[p].atomics += a.atomics - before->atomics;
    m->n[p].writes += a.writes - before->writes;
    m->n[p].reads += a.reads - before->reads;
}

static void print_counts(const meas_t *m, long ops)
{
    static const char *pname[2][2] = {{"", ""}, {" push/put", " pop/get"}};
    for (int p = 0; p < m->nphases; p++)
        bench_printf("# %s%s (rank 0): %.2f atomics, %.2f writes, %.2f reads per call\n", m->name,
                     pname[m->nphases - 1][p], (double)m->n[p].atomics / (double)ops,
                     (double)m->n[p].writes / (double)ops, (double)m->n[p].reads / (double)ops);
}

/* Runs the warm-up and --reps repetitions of every phase and stores the medians. Collective. */
static void measure(ctx_t *c, meas_t *m)
{
    double s[2][BENCH_MAX_REPS];
    int verbose = c->o->verbose && m->name;
    long ops = 0;
    memset(m->n, 0, sizeof(m->n));
    if (verbose)
        bench_ck(rmc_op_counts_enable(1), "rmc_op_counts_enable");
    for (int r = -1; r < c->o->reps; r++) { /* r = -1: warm-up */
        long n = r < 0 ? c->it / 8 + 1 : c->it;
        int64_t base = (int64_t)(r + 1) * c->it;
        for (int p = 0; p < m->nphases; p++) {
            rmc_op_counts_t before = {0};
            barrier(m->mpi);
            if (verbose)
                bench_ck(rmc_op_counts(&before), "rmc_op_counts");
            double us = m->fn(c, m->arg, p, base, n);
            if (verbose)
                count(m, p, &before);
            if (r >= 0)
                s[p][r] = us;
        }
        ops += n;
    }
    barrier(m->mpi);
    if (verbose) {
        bench_ck(rmc_op_counts_enable(0), "rmc_op_counts_enable");
        print_counts(m, ops);
    }
    for (int p = 0; p < m->nphases; p++)
        if (m->row[p] >= 0)
            cell_set(c, m->row[p], m->col, bench_median(s[p], (size_t)c->o->reps));
}

/* ------------------------------------------------------------------------- queues --- */

typedef struct qrun {
    rmc_queue_h q;
    unsigned promise[2]; /* push, pop */
} qrun_t;

/* Phase 0: rank 0 pushes base, base+1, ...; phase 1: pops them, checking each. */
static double queue_phase(ctx_t *c, const void *arg, int phase, int64_t base, long n)
{
    const qrun_t *r = arg;
    if (c->rank != 0)
        return 0;
    uint64_t t0 = bench_now_ns();
    if (phase == 0) {
        for (long i = 0; i < n; i++) {
            int64_t v = base + i;
            bench_ck(rmc_queue_push(r->q, &v, r->promise[0]), "rmc_queue_push");
        }
        /* a push returns at local completion (a FAST queue's write is staged): the timed run
         * ends with every push at the queue, as the MPI reference's flushed ones are */
        bench_ck(rmc_fence_all(), "rmc_fence_all");
    } else {
        for (long i = 0; i < n; i++) {
            int64_t v = -1;
            bench_ck(rmc_queue_pop(r->q, &v, r->promise[1]), "rmc_queue_pop");
            want("rmc_queue_pop", v, base + i);
        }
    }
    return us_since(t0, n);
}

/* Rank 0 pushes while rank 1 pops until it has every value (in order: one pusher). */
static double contended_phase(ctx_t *c, const void *arg, int phase, int64_t base, long n)
{
    const qrun_t *r = arg;
    rmc_queue_h q = r->q;
    rmc_status_t st;
    (void)phase;
    if (c->rank == 0) {
        uint64_t t0 = bench_now_ns();
        for (long i = 0; i < n; i++) {
            int64_t v = base + i;
            while ((st = rmc_queue_push(q, &v, r->promise[0])) == RMC_ERR_FULL)
                bench_ck(rmc_progress(), "rmc_progress");
            bench_ck(st, "rmc_queue_push (while rank 1 pops)");
        }
        return us_since(t0, n);
    }
    for (long i = 0; c->rank == 1 && i < n;) {
        int64_t v = -1;
        if ((st = rmc_queue_pop(q, &v, r->promise[1])) == RMC_ERR_EMPTY) {
            bench_ck(rmc_progress(), "rmc_progress");
            continue;
        }
        bench_ck(st, "rmc_queue_pop (while rank 0 pushes)");
        want("rmc_queue_pop (while rank 0 pushes)", v, base + i++);
    }
    return 0;
}

/* A queue row pair: the queue, its promises, and its MPI reference sequence (at mpi_target; a
 * CIRCULAR queue's with the mark). */
typedef struct qspec {
    const char *name; /* --verbose */
    rmc_queue_kind_t kind;
    int host;
    unsigned promise[2]; /* push, pop */
    int row[2];          /* push, pop (-1: not reported) */
    int mpi_target;      /* -1: no MPI reference */
    int contended;       /* rank 1 pops while rank 0 pushes (contended_phase) */
} qspec_t;

#define LOCAL RMC_PROMISE_LOCAL
static const qspec_t qspecs[] = {
    {"FastQueue remote", RMC_QUEUE_FAST, 1, {0, 0}, {R_FPUSH, R_FPOP}, 1, 0},
    {"FastQueue local", RMC_QUEUE_FAST, 0, {0, LOCAL}, {R_FPUSH_LOC, -1}, 0, 0},
    {"FastQueue local, LOCAL promise", RMC_QUEUE_FAST, 0, {LOCAL, LOCAL}, {R_FPUSH_LP, -1}, -1, 0},
    {"CircularQueue", RMC_QUEUE_CIRCULAR, 1, {0, 0}, {R_CPUSH, R_CPOP}, 1, 0},
    {"CircularQueue contended", RMC_QUEUE_CIRCULAR, 1, {0, 0}, {R_CPUSH_POPS, -1}, -1, 1},
    {"ChecksumQueue", RMC_QUEUE_CHECKSUM, 1, {0, 0}, {R_KPUSH, R_KPOP}, -1, 0},
};
#undef LOCAL
#define NQSPECS (sizeof(qspecs) / sizeof(qspecs[0]))

/* The queue of spec s, measured; destroyed after. */
static void queue_rows(ctx_t *c, const qspec_t *s)
{
    qrun_t r = {.promise = {s->promise[0], s->promise[1]}};
    bench_ck(rmc_queue_create(s->kind, s->host, (size_t)c->it, &rmc_type_i64, &r.q),
             "rmc_queue_create");
    meas_t m = {.fn = s->contended ? contended_phase : queue_phase,
                .arg = &r,
                .nphases = s->contended ? 1 : 2,
                .name = s->name,
                .row = {s->row[0], s->row[1]},
                .col = c->c_rmc};
    measure(c, &m);
    /* where the RPC path is the choice (a host on another node, thread AMO mode), the one-sided
     * protocol forced beside it */
    if (c->rpc_choice && s->host == 1) {
        for (int p = 0; p < 2; p++)
            r.promise[p] |= RMC_PATH_RDMA;
        m.col = c->c_rdma;
        m.name = NULL;
        measure(c, &m);
    }
    bench_ck(rmc_queue_destroy(r.q), "rmc_queue_destroy");
}

/* -------------------------------------------------------------------------- arrays --- */

typedef struct arun {
    rmc_array_h a;
    size_t first; /* the first of the ARR_N elements rank 0 touches (owned by rank 1) */
    int mpi;      /* the MPI reference instead: rank 1's slots of the MPI window */
} arun_t;

static int64_t mpi_rma(ctx_t *c, int push, int target, MPI_Aint disp, int64_t v);

/* A put (returns v) or get (returns the value) of place j. */
static inline int64_t array_op(ctx_t *c, const arun_t *r, int get, long j, int64_t v)
{
    if (r->mpi)
        return mpi_rma(c, !get, 1, W_SLOTS + 8 * (MPI_Aint)j, v);
    if (get)
        bench_ck(rmc_array_get(r->a, r->first + (size_t)j, &v), "rmc_array_get");
    else
        bench_ck(rmc_array_put(r->a, r->first + (size_t)j, &v), "rmc_array_put");
    return v;
}

/* Elements a phase of n operations touches (the warm-up may be shorter than ARR_N). */
static long places(long n)
{
    return n < ARR_N ? n : ARR_N;
}
/* The value the put phase (values base, base+1, ... in turn over places(n)) leaves in place j. */
static int64_t last_put(int64_t base, long n, long j)
{
    long m = places(n);
    return base + j + m * ((n - 1 - j) / m);
}

/* Rank 1: its elements hold what rank 0's put phase left (after the barrier). */
static void check_owner_part(const arun_t *r, int64_t base, long n)
{
    size_t first = 0, count = 0;
    void *slots = NULL;
    bench_ck(rmc_array_local(r->a, &first, &count, &slots), "rmc_array_local");
    if (r->first < first || r->first + ARR_N > first + count)
        bench_fail("rank 1 holds elements [%zu, %zu), not the %d measured", first, first + count,
                   ARR_N);
    const int64_t *e = (const int64_t *)slots + (r->first - first);
    for (long j = 0; j < places(n); j++)
        want("rank 1's element after the puts", e[j], last_put(base, n, j));
}

/* The values the put phase leaves in places 0 .. places(n)-1 (no division in the timed loops). */
static void last_puts(int64_t *expect, int64_t base, long n)
{
    for (long j = 0; j < places(n); j++)
        expect[j] = last_put(base, n, j);
}

/* Phase 0: rank 0 puts base+i into place i % places(n); phase 1: gets them back, checking. */
static double array_phase(ctx_t *c, const void *arg, int phase, int64_t base, long n)
{
    const arun_t *r = arg;
    if (phase == 1 && c->rank == 1 && !r->mpi)
        check_owner_part(r, base, n);
    if (c->rank != 0)
        return 0;
    int64_t expect[ARR_N];
    last_puts(expect, base, n);
    long m = places(n), j = 0;
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++, j = j + 1 == m ? 0 : j + 1) {
        if (phase == 0 && r->mpi) { /* the MPI sequence of a blocking put (local completion):
                                     * MPI_Put + flush_local, all flushed before a place repeats */
            int64_t v = base + i;
            bench_mck(
                MPI_Put(&v, 1, MPI_INT64_T, 1, W_SLOTS + 8 * (MPI_Aint)j, 1, MPI_INT64_T, c->win),
                "MPI_Put");
            bench_mck(j + 1 == m ? MPI_Win_flush(1, c->win) : MPI_Win_flush_local(1, c->win),
                      "MPI_Win_flush");
            continue;
        }
        int64_t v = array_op(c, r, phase, j, base + i);
        if (phase == 1)
            want(r->mpi ? "MPI_Get" : "rmc_array_get", v, expect[j]);
    }
    if (phase == 0 && r->mpi) /* puts complete locally: the run ends with all at the owner */
        bench_mck(MPI_Win_flush(1, c->win), "MPI_Win_flush");
    else if (phase == 0)
        bench_ck(rmc_fence_all(), "rmc_fence_all");
    return us_since(t0, n);
}

/* An array hosted by rank 1 (host 1) or block-distributed (RMC_ARRAY_BLOCK, ARR_N per rank);
 * with mpi, the MPI reference's put / get instead. */
static void array_rows(ctx_t *c, int host, int mpi, int row_get, int row_put, int nranks)
{
    arun_t r = {.first = host == RMC_ARRAY_BLOCK ? ARR_N : 0, .mpi = mpi};
    size_t n = host == RMC_ARRAY_BLOCK ? (size_t)ARR_N * (size_t)nranks : ARR_N;
    if (!mpi) {
        bench_ck(rmc_array_create(n, &rmc_type_i64, host, &r.a), "rmc_array_create");
        if (rmc_array_owner(r.a, r.first) != 1 || rmc_array_owner(r.a, r.first + ARR_N - 1) != 1)
            bench_fail("array elements %zu..%zu are not rank 1's", r.first, r.first + ARR_N - 1);
    }
    meas_t m = {.fn = array_phase,
                .arg = &r,
                .nphases = 2,
                .name = mpi                       ? NULL
                        : host == RMC_ARRAY_BLOCK ? "Array (block)"
                                                  : "Array (hosted)",
                .row = {row_put, row_get},
                .col = mpi ? c->c_mpi : c->c_rmc,
                .mpi = mpi};
    measure(c, &m);
    if (!mpi)
        bench_ck(rmc_array_destroy(r.a), "rmc_array_destroy");
}

/* ----------------------------------------------------------------------- allocator --- */

static size_t seg_in_use(void)
{
    rmc_segment_info_t s;
    bench_ck(rmc_segment_info(&s), "rmc_segment_info");
    return s.in_use;
}

/* Rank 0: 16 blocks of `bytes`: mine, 16-byte aligned, zeroed, as large as asked, disjoint (each
 * filled with its own byte, all checked after); freeing them gives every byte back. */
static void alloc_check(size_t bytes)
{
    enum { K = 16 };
    rmc_gptr_t g[K];
    unsigned char *p[K];
    size_t used = seg_in_use(), got = 0;
    for (int k = 0; k < K; k++) {
        bench_ck(rmc_alloc(bytes, &g[k]), "rmc_alloc");
        bench_ck(rmc_alloc_size(g[k], &got), "rmc_alloc_size");
        p[k] = rmc_gptr_local(g[k]);
        if (g[k].rank != 0 || !p[k] || (uintptr_t)p[k] % 16 || got < bytes)
            bench_fail("rmc_alloc(%zu): rank %d, address %p, %zu bytes usable", bytes,
                       (int)g[k].rank, (void *)p[k], got);
        for (size_t i = 0; i < bytes; i++)
            want("a fresh rmc_alloc block's byte", p[k][i], 0);
        memset(p[k], k + 1, bytes);
    }
    for (int k = 0; k < K; k++) {
        for (size_t i = 0; i < bytes; i++)
            want("rmc_alloc blocks overlap: a byte", p[k][i], k + 1);
        bench_ck(rmc_free(g[k]), "rmc_free");
    }
    want("segment bytes in use after freeing every block", (int64_t)seg_in_use(), (int64_t)used);
}

static double alloc_phase(ctx_t *c, const void *arg, int phase, int64_t base, long n)
{
    size_t bytes = *(const size_t *)arg;
    (void)phase, (void)base;
    if (c->rank != 0)
        return 0;
    size_t used = seg_in_use();
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
        rmc_gptr_t g;
        bench_ck(rmc_alloc(bytes, &g), "rmc_alloc");
        bench_ck(rmc_free(g), "rmc_free");
    }
    double us = us_since(t0, n);
    want("segment bytes in use after the alloc+free pairs", (int64_t)seg_in_use(), (int64_t)used);
    return us;
}

static void alloc_row(ctx_t *c, size_t bytes, int row)
{
    if (c->rank == 0)
        alloc_check(bytes);
    meas_t m = {.fn = alloc_phase,
                .arg = &bytes,
                .nphases = 1,
                .name = rowdef[row].label,
                .row = {row, -1},
                .col = c->c_rmc};
    measure(c, &m);
}

/* ------------------------------------------------------------------ segment growth --- */

/* Rank 0 puts 8 bytes, ARR_N places in turn, into a block of rank 1's segment (rmc_gptr_put),
 * then reads the last value back. */
static double gptr_phase(ctx_t *c, const void *arg, int phase, int64_t base, long n)
{
    rmc_gptr_t g = *(const rmc_gptr_t *)arg;
    (void)phase;
    if (c->rank != 0)
        return 0;
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
        int64_t v = base + i;
        bench_ck(rmc_gptr_put(rmc_gptr_add(g, 8 * (i % ARR_N)), &v, 8), "rmc_gptr_put");
    }
    bench_ck(rmc_fence(g.rank), "rmc_fence"); /* every put at the owner, as MPI's flushed ones */
    double us = us_since(t0, n);
    int64_t back = -1;
    bench_ck(rmc_gptr_get(&back, rmc_gptr_add(g, 8 * ((n - 1) % ARR_N)), 8), "rmc_gptr_get");
    want("the last value put", back, base + n - 1);
    return us;
}

/* Memory the segment grew into is reached like its first memory (one window, one mapping): rank 1
 * allocates a block, then more than the rest of its committed segment (the segment grows), then a
 * second block; rank 0 puts into each. */
static void growth_rows(ctx_t *c)
{
    rmc_gptr_t g[2] = {RMC_GPTR_NULL, RMC_GPTR_NULL}, big = RMC_GPTR_NULL;
    if (c->rank == 1) {
        rmc_segment_info_t a, b;
        bench_ck(rmc_alloc(8 * ARR_N, &g[0]), "rmc_alloc");
        bench_ck(rmc_segment_info(&a), "rmc_segment_info");
        bench_ck(rmc_alloc(a.committed - a.in_use + ((size_t)1 << 20), &big), "rmc_alloc");
        bench_ck(rmc_alloc(8 * ARR_N, &g[1]), "rmc_alloc");
        bench_ck(rmc_segment_info(&b), "rmc_segment_info");
        if (b.grows <= a.grows || g[1].off < a.committed)
            bench_fail("the segment did not grow (%llu -> %llu growth steps)", a.grows, b.grows);
    }
    bench_ck(rmc_barrier(), "rmc_barrier");
    bench_mck(MPI_Bcast(g, sizeof g, MPI_BYTE, 1, MPI_COMM_WORLD), "MPI_Bcast");
    for (int k = 0; k < 2; k++) {
        meas_t m = {.fn = gptr_phase,
                    .arg = &g[k],
                    .nphases = 1,
                    .name = rowdef[R_GFIRST + k].label,
                    .row = {R_GFIRST + k, -1},
                    .col = c->c_rmc};
        measure(c, &m);
    }
    if (c->rank == 1) {
        bench_ck(rmc_free(g[0]), "rmc_free");
        bench_ck(rmc_free(g[1]), "rmc_free");
        bench_ck(rmc_free(big), "rmc_free");
    }
}

/* ------------------------------------------------------------------ MPI reference --- */

typedef struct mrun {
    int target;
    int circular; /* CircularQueue sequence: + the in-order mark */
} mrun_t;

static int64_t mpi_fetch_inc(ctx_t *c, int target, MPI_Aint disp)
{
    int64_t one = 1, old = -1;
    bench_mck(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, disp, MPI_SUM, c->win),
        "MPI_Fetch_and_op");
    bench_mck(MPI_Win_flush(target, c->win), "MPI_Win_flush");
    return old;
}

/* The mark of a CircularQueue operation: pos -> pos + 1 (always wins: one origin). */
static void mpi_mark(ctx_t *c, int target, MPI_Aint disp, int64_t pos)
{
    int64_t cmp = pos, next = pos + 1, old = -1;
    bench_mck(MPI_Compare_and_swap(&next, &cmp, &old, MPI_INT64_T, target, disp, c->win),
        "MPI_Compare_and_swap");
    bench_mck(MPI_Win_flush(target, c->win), "MPI_Win_flush");
    want("MPI_Compare_and_swap", old, pos);
}

/* Put (push) or get (pop) of 8 bytes at `disp` of target + MPI_Win_flush; returns the value. */
static int64_t mpi_rma(ctx_t *c, int push, int target, MPI_Aint disp, int64_t v)
{
    if (push)
        bench_mck(MPI_Put(&v, 1, MPI_INT64_T, target, disp, 1, MPI_INT64_T, c->win), "MPI_Put");
    else
        bench_mck(MPI_Get(&v, 1, MPI_INT64_T, target, disp, 1, MPI_INT64_T, c->win), "MPI_Get");
    bench_mck(MPI_Win_flush(target, c->win), "MPI_Win_flush");
    return v;
}

/* One push (returns v) or pop (returns the value taken) of the MPI reference queue. */
static int64_t mpi_queue_op(ctx_t *c, const mrun_t *q, int push, int64_t v)
{
    MPI_Aint ctl = q->circular ? W_BLOCK : 0;
    int64_t pos = mpi_fetch_inc(c, q->target, ctl + (push ? W_TAIL : W_HEAD));
    v = mpi_rma(c, push, q->target, W_SLOTS + 8 * (MPI_Aint)(pos % c->it), v);
    if (q->circular)
        mpi_mark(c, q->target, ctl + (push ? W_READY : W_FREED), pos);
    return v;
}

static double mpi_queue_phase(ctx_t *c, const void *arg, int phase, int64_t base, long n)
{
    if (c->rank != 0)
        return 0;
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++)
        want("MPI reference pop", mpi_queue_op(c, arg, phase == 0, base + i), base + i);
    return us_since(t0, n);
}

/* The MPI reference of a queue row pair (push / pop). */
static void mpi_queue_rows(ctx_t *c, int target, int circular, int row_push, int row_pop)
{
    mrun_t q = {target, circular};
    meas_t m = {.fn = mpi_queue_phase,
                .arg = &q,
                .nphases = 2,
                .row = {row_push, row_pop},
                .col = c->c_mpi,
                .mpi = 1};
    measure(c, &m);
}

/* The MPI reference's window: counters and max(iters, ARR_N) slots, zeroed. Collective. */
static void mpi_window(ctx_t *c)
{
    size_t slots = c->it > ARR_N ? (size_t)c->it : ARR_N;
    size_t bytes = (W_SLOTS + 8 * slots + 63) & ~(size_t)63; /* MPICH 4.0.2: a multiple of 64 */
    bench_mck(
        MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->wbase, &c->win),
        "MPI_Win_allocate");
    memset(c->wbase, 0, bytes);
    bench_mck(MPI_Win_lock_all(MPI_MODE_NOCHECK, c->win), "MPI_Win_lock_all");
    bench_mck(MPI_Win_sync(c->win), "MPI_Win_sync");
    bench_mck(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

/* ---------------------------------------------------------------------------- main --- */

static void run_rows(ctx_t *c, int nranks)
{
    for (size_t k = 0; k < NQSPECS; k++) { /* each RMC row next to its MPI reference */
        const qspec_t *s = &qspecs[k];
        queue_rows(c, s);
        if (s->mpi_target >= 0)
            mpi_queue_rows(c, s->mpi_target, s->kind == RMC_QUEUE_CIRCULAR, s->row[0], s->row[1]);
    }
    /* the MPI sequences of the same shape: push A + W (FastQueue's), pop 2A + R (Circular's) */
    same_mpi(c, R_KPUSH, R_FPUSH);
    same_mpi(c, R_KPOP, R_CPOP);
    array_rows(c, 1, 0, R_AGET, R_APUT, nranks);
    array_rows(c, 1, 1, R_AGET, R_APUT, nranks);
    array_rows(c, RMC_ARRAY_BLOCK, 0, R_DGET, R_DPUT, nranks);
    same_mpi(c, R_DGET, R_AGET);
    same_mpi(c, R_DPUT, R_APUT);
    alloc_row(c, 64, R_ALLOC64);
    alloc_row(c, 1024, R_ALLOC1K);
    growth_rows(c);
    same_mpi(c, R_GFIRST, R_APUT);
    same_mpi(c, R_GGROWN, R_APUT);
}

/* Table k (0: queues, rows [0, R_TABLE2); 1: arrays and allocator, the rest). */
static bench_table_t *make_table(ctx_t *c, int k)
{
    char title[160];
    snprintf(title, sizeof(title), "%s: us per operation, median of %d reps x %ld ops",
             k ? "arrays, allocator" : "queues", c->o->reps, c->it);
    bench_table_t *t = bench_table_new(k ? "arrays_alloc" : "queues", "operation", title);
    c->c_rmc = bench_table_col(t, "RMC", "us");
    int c_bcl = bench_table_col(t, "BCL", "us");
    c->c_mpi = bench_table_col(t, "MPI RMA", "us");
    if (!k)
        c->c_rdma = bench_table_col(t, "RMC one-sided", "us");
    bench_table_ratio(t, "BCL/RMC", c_bcl, c->c_rmc, BENCH_RATIO_X);
    bench_table_ratio(t, "MPI/RMC", c->c_mpi, c->c_rmc, BENCH_RATIO_X);
    bench_table_plot(t, 0, 1, "us (log)");
    for (int r = k ? R_TABLE2 : 0; r < (k ? NROWS : R_TABLE2); r++)
        bench_table_set(t, bench_table_row(t, rowdef[r].label, NAN), c_bcl, rowdef[r].bcl);
    bench_table_note(t, "rank 0 measures, rank 1 hosts; ratios: peer time / RMC time (above 1x "
                        "RMC is faster)");
    if (!k)
        bench_table_note(t, "RMC: the path each operation chooses (RPC to a host on another node "
                            "in thread AMO mode, else one-sided); RMC one-sided: RMC_PATH_RDMA "
                            "forced, measured only where RPC is the choice");
    bench_table_note(t, "BCL: constant reference numbers measured for BCL (MPI backend) on this "
                        "machine, 2 ranks, real node mode (BCL has no emulated mode); NOT "
                        "measured in this run, the same in every node mode");
    const char *seq =
        k ? "array get / put = MPI_Get / MPI_Put of 8 B + flush (the block rows: the same sequence)"
          : "push = Fetch_and_op(+1) + flush, Put 8 B + flush (pop: Get), CircularQueue + "
            "Compare_and_swap + flush; ChecksumQueue rows = the FastQueue push / CircularQueue pop "
            "sequences";
    bench_table_note(t,
                     "MPI RMA: MPI_Win_allocate + lock_all; %s; rank 1 waits in MPI_Barrier (in "
                     "RMC's phases: rmc_barrier)",
                     seq);
    return t;
}

static void header(bench_opts_t *o)
{
    char peers[1024];
    snprintf(peers, sizeof(peers),
             "RMC %s containers: AMO mode %s, %s, rank 1 %s | BCL: constant reference, MPI "
             "backend, real node mode, measured beforehand on this machine (not in this run) | "
             "MPI RMA: MPI_Win_allocate window of the benchmark's own + MPI_Win_lock_all, the raw "
             "sequence of each operation (see the notes under the tables)",
             rmc_version(), rmc_amo_mode() == RMC_AMO_MODE_THREAD ? "thread" : "mpi",
             rmc_progress_thread_active() ? "progress thread running" : "no progress thread",
             rmc_same_node(1) == 1 ? "node-local (shared memory)" : "remote (MPI RMA)");
    bench_header(o, "containers: queues, arrays, allocator; origin rank 0, host rank 1", peers);
}

int main(int argc, char **argv)
{
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_containers", 8, 8, &o);
    if (prc)
        return prc > 0;
    ctx_t c = {.o = &o};
    int nranks = 0;
    if (bench_mpi_start(&argc, &argv, "bench_containers", &c.rank, &nranks, NULL))
        return 1;
    bench_ck(rmc_init(MPI_COMM_WORLD), "rmc_init");
    c.it = bench_iters(&o, 50000);
    c.rpc_choice = rmc_amo_mode() == RMC_AMO_MODE_THREAD && rmc_same_node(1) != 1;
    bench_mck(MPI_Bcast(&c.rpc_choice, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    mpi_window(&c);
    header(&o);
    c.t[0] = make_table(&c, 0);
    c.t[1] = make_table(&c, 1);
    run_rows(&c, nranks);
    bench_finish(&o, c.t, 2);
    bench_mck(MPI_Win_unlock_all(c.win), "MPI_Win_unlock_all");
    bench_mck(MPI_Win_free(&c.win), "MPI_Win_free");
    bench_ck(rmc_finalize(), "rmc_finalize");
    MPI_Finalize();
    return 0;
}
