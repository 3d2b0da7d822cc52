/* ISx: the integer bucket-sort mini-application (Hanebutte & Hemstad, PGAS 2015) on RMC's
 * distributed queues, beside the MPI_Alltoallv reference (seed 000 §8.1, seed 001 §5.1 Fig. 5.2).
 *
 * Every rank generates N uniformly random 32-bit keys in [0, KEY_MAX) (deterministic, seeded per
 * rank). The key range is split into equal slices, one per rank; the distribution stage sends
 * every key to the owner of its slice, then every rank sorts what it received (LSD radix sort).
 * Three exchange variants run in the same program, on the same keys, with the same local sort:
 *
 *   RMC FastQueue      one RMC_QUEUE_FAST per rank, hosted by that rank. Each rank buckets its
 *                      keys into a local buffer of B keys per destination (--batch) and pushes a
 *                      full buffer with one rmc_queue_push_n (RMC_PROMISE_PUSH: one remote
 *                      fetch-and-add and one put), or with rmc_queue_push_n_nb keeping up to
 *                      --inflight pushes outstanding so that they overlap the bucketing (BCL's
 *                      point); then rmc_barrier, and each rank sorts the keys where they arrived,
 *                      in its own queue's ring (rmc_queue_local_peek: the host's view, no copy),
 *                      and takes them out afterwards (rmc_queue_local_discard).
 *   RMC CircularQueue  the same with RMC_QUEUE_CIRCULAR (a push also marks its slots ready).
 *   MPI_Alltoallv      ISx's MPI reference: count keys per destination, pack them by destination,
 *                      MPI_Alltoall of the counts, MPI_Alltoallv of the keys.
 *
 * Timing, per variant and repetition, as the maximum over ranks in ns per key (time / N):
 * "exchange" from the first key bucketed until every rank holds its keys in local memory (queues:
 * after the barrier: in the ring; MPI: in the receive buffer), "total" the exchange plus the local
 * sort (whose first pass reads the keys where they are). Every repetition is
 * verified, untimed: each rank's keys are sorted and inside its slice, rank r's largest key is <=
 * the next non-empty rank's smallest, and the multiset of keys is unchanged (global count, sum and
 * sum of a 64-bit mix of every key, before and after).
 *
 * One source, two programs (apps/Makefile.inc): bench/bench_isx prints the table (bench_util.h;
 * options --keys N, --batch B, --inflight D and the common ones), and with -DISX_TEST
 * tests/mpi/test_isx runs small verified exchanges (several batch sizes, blocking and non-blocking
 * pushes, every key to one rank) and exits 0 only if every rank verified everything.
 */
#include "config.h"
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#include <rmc/containers.h>
#include "bench_util.h"

/* ISx's keys: 32-bit integers below 2^28 (its default key range); -DISX_KEY_BITS=64 makes them
 * 64-bit. Either moves through the queues without packing (a byte-copied type's slot is the
 * element itself). */
#ifndef ISX_KEY_BITS
#define ISX_KEY_BITS 32
#endif
#if ISX_KEY_BITS == 64
typedef uint64_t isx_key_t;
#define KEY_MPI MPI_UINT64_T
#define KEY_RMC rmc_type_u64
#else
typedef uint32_t isx_key_t;
#define KEY_MPI MPI_UINT32_T
#define KEY_RMC rmc_type_u32
#endif
#define KEY_BITS     28
#define KEY_MAX      ((uint64_t)1 << KEY_BITS)
#define MAX_INFLIGHT 16 /* non-blocking pushes a rank keeps outstanding at most */

enum { V_FAST, V_CIRC, V_MPI, NVAR };
static const char *const var_name[NVAR] = {"RMC FastQueue", "RMC CircularQueue", "MPI_Alltoallv"};
static const rmc_queue_kind_t var_kind[2] = {RMC_QUEUE_FAST, RMC_QUEUE_CIRCULAR};

typedef struct sums {
    uint64_t count, sum, hash;
} sums_t;

typedef struct isx {
    int me, np;
    size_t n;               /* keys per rank */
    size_t batch;           /* keys per queue push */
    int inflight;           /* non-blocking pushes kept outstanding; 0: blocking pushes */
    isx_key_t *keys;        /* this rank's generated keys: read, never changed, by every variant */
    sums_t before;          /* global checksums of the generated keys */
    size_t expect;          /* keys this rank receives */
    isx_key_t *recv;        /* received keys; room for expect + 1 (one more shows an extra key) */
    isx_key_t *tmp;         /* radix sort scratch, as large */
    isx_key_t *sorted;      /* recv or tmp: where the sort left the keys */
    size_t got;             /* keys received by the last exchange */
    const isx_key_t *in[2]; /* where they are: recv (MPI), or the runs of this rank's queue */
    size_t nin[2];
    rmc_queue_h *q[2];               /* [FAST, CIRCULAR][host]: one queue of each kind per rank */
    isx_key_t *bufs;                 /* np aggregation buffers of `batch` keys */
    size_t *fill;                    /* keys in each */
    rmc_request_h req[MAX_INFLIGHT]; /* outstanding non-blocking pushes, oldest first */
    int nreq;
    isx_key_t *send; /* MPI variant: keys packed by destination */
    int *scount, *sdispl, *rcount, *rdispl;
    int err; /* this rank saw a failure in the current step */
} isx_t;

/* ------------------------------------------------------------------------ failures --- */

/* Reports a failure of this rank (any rank may print) and remembers it: the rank carries on with
 * the collective steps, so that the others never wait for it, and the verdict is agreed later. */
static void fail(isx_t *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(isx_t *x, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "isx rank %d: %s\n", x->me, msg); /* one write: ranks' lines stay whole */
    fflush(stderr);
    x->err = 1;
}

/* Checks an RMC status; on failure reports the call, the status and RMC's details (cleared, so
 * that a later report never shows stale ones). */
static int rmc_ok(isx_t *x, rmc_status_t st, const char *call)
{
    if (st == RMC_OK)
        return 1;
    const char *why = rmc_last_error();
    fail(x, "%s: %s%s%s%s", call, rmc_status_string(st), *why ? " (" : "", why, *why ? ")" : "");
    rmc_last_error_clear();
    return 0;
}

/* ------------------------------------------------------------------- keys and sums --- */

/* splitmix64's finalizer: a bijective 64-bit mix (the key checksum and the generator). */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The owner of key k: rank r owns the keys k with floor(k * np / KEY_MAX) == r, equal slices of
 * [0, KEY_MAX) found by a multiply and a shift (no division per key). */
static inline int owner(const isx_t *x, isx_key_t k)
{
    return (int)(((uint64_t)k * (uint64_t)x->np) >> KEY_BITS);
}

/* The smallest key of rank r's slice. */
static uint64_t slice_lo(int np, int r)
{
    return ((uint64_t)r * KEY_MAX + (uint64_t)np - 1) / (uint64_t)np;
}

/* This rank's keys: uniform over [0, KEY_MAX), or with `skew` uniform over the last rank's slice
 * (every key goes to one rank, whose queue then takes N * np keys). Deterministic per rank. */
static void gen_keys(isx_t *x, int skew)
{
    uint64_t s = mix64(0x15a15a15ull + (uint64_t)x->me), lo = skew ? slice_lo(x->np, x->np - 1) : 0;
    uint64_t span = KEY_MAX - lo;
    for (size_t i = 0; i < x->n; i++) {
        uint64_t r = mix64(s += 0x9e3779b97f4a7c15ull) >> 32; /* splitmix64, top 32 bits */
        x->keys[i] = (isx_key_t)(lo + ((r * span) >> 32));
    }
}

/* Global count, sum and mixed-hash sum of the keys (collective): equal before and after the
 * exchange iff, with overwhelming probability, no key was lost, duplicated or changed. */
static sums_t global_sums(const isx_key_t *k, size_t n)
{
    uint64_t v[3] = {n, 0, 0};
    for (size_t i = 0; i < n; i++) {
        v[1] += k[i];
        v[2] += mix64(k[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return (sums_t){v[0], v[1], v[2]};
}

/* -------------------------------------------------------------------- local sort --- */

#define RADIX_BITS   11
#define RADIX        (1u << RADIX_BITS)
#define RADIX_PASSES ((KEY_BITS + RADIX_BITS - 1) / RADIX_BITS)

/* LSD radix sort of the keys in[0][0..nin[0]) then in[1][0..nin[1]) (keys below KEY_MAX: a larger
 * one is left out of order, and the verification reports it) into a or b (two buffers of the
 * total; the input is only read, and may be a itself when there is one run); returns where the
 * sorted keys are. One read builds every pass's histogram; a pass whose digit is equal in every
 * key moves nothing and is skipped (the high digits of a rank's slice). The first pass reads the
 * input where it lies: the queue variants sort straight from their queue's ring. */
static isx_key_t *radix_sort(const isx_key_t *const in[2], const size_t nin[2], isx_key_t *a,
                             isx_key_t *b)
{
    static size_t cnt[RADIX_PASSES][RADIX];
    size_t n = nin[0] + nin[1];
    memset(cnt, 0, sizeof cnt);
    for (int r = 0; r < 2; r++)
        for (size_t i = 0; i < nin[r]; i++)
            for (int p = 0; p < RADIX_PASSES; p++)
                cnt[p][(in[r][i] >> (p * RADIX_BITS)) & (RADIX - 1)]++;
    const isx_key_t *src[2] = {in[0], in[1]};
    size_t ns[2] = {nin[0], nin[1]};
    isx_key_t *dst = in[0] == a ? b : a;
    isx_key_t k0 = nin[0] ? in[0][0] : nin[1] ? in[1][0] : 0;
    for (int p = 0; p < RADIX_PASSES && n; p++) {
        int shift = p * RADIX_BITS;
        size_t *c = cnt[p], at = 0;
        if (c[(k0 >> shift) & (RADIX - 1)] == n)
            continue;
        for (unsigned d = 0; d < RADIX; d++) {
            size_t k = c[d];
            c[d] = at;
            at += k;
        }
        for (int r = 0; r < 2; r++)
            for (size_t i = 0; i < ns[r]; i++)
                dst[c[(src[r][i] >> shift) & (RADIX - 1)]++] = src[r][i];
        src[0] = dst;
        ns[0] = n;
        ns[1] = 0;
        dst = dst == a ? b : a;
    }
    if (src[0] == in[0] && in[0] != a) { /* no pass moved anything: the keys are sorted */
        memcpy(a, in[0], nin[0] * sizeof(isx_key_t));
        memcpy(a + nin[0], in[1], nin[1] * sizeof(isx_key_t));
        return a;
    }
    return (isx_key_t *)(uintptr_t)src[0];
}

/* ---------------------------------------------------------------- setup, teardown --- */

/* Generates a key set, counts what every rank will receive (untimed: it sizes the receive buffers
 * and the queues, as BCL's queue_size) and creates one queue of each kind per rank. With `exact`
 * a queue holds exactly what its host receives, else 1/8 more, so that later repetitions start
 * mid-ring and wrap around. Collective; returns 1 when the queues exist (agreed: creation is). */
static int setup(isx_t *x, int skew, int exact)
{
    x->keys = bench_alloc(x->n * sizeof(isx_key_t));
    x->send = bench_alloc(x->n * sizeof(isx_key_t));
    gen_keys(x, skew);
    x->before = global_sums(x->keys, x->n);
    uint64_t *cnt = calloc((size_t)x->np, sizeof(*cnt));
    x->fill = calloc((size_t)x->np, sizeof(*x->fill));
    int *ints = calloc(4 * (size_t)x->np, sizeof(int));
    if (!cnt || !x->fill || !ints)
        bench_fail("out of memory");
    x->scount = ints;
    x->sdispl = ints + x->np;
    x->rcount = ints + 2 * x->np;
    x->rdispl = ints + 3 * x->np;
    for (size_t i = 0; i < x->n; i++)
        cnt[owner(x, x->keys[i])]++;
    MPI_Allreduce(MPI_IN_PLACE, cnt, x->np, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    x->expect = cnt[x->me];
    x->recv = bench_alloc((x->expect + 1) * sizeof(isx_key_t));
    x->tmp = bench_alloc((x->expect + 1) * sizeof(isx_key_t));
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        x->q[k] = calloc((size_t)x->np, sizeof(rmc_queue_h));
        if (!x->q[k])
            bench_fail("out of memory");
        for (int h = 0; h < x->np && ok; h++) {
            size_t cap = cnt[h] + (exact ? 0 : cnt[h] / 8);
            ok = rmc_ok(x, rmc_queue_create(var_kind[k], h, cap ? cap : 1, &KEY_RMC, &x->q[k][h]),
                        "rmc_queue_create");
        }
    }
    free(cnt);
    return ok;
}

/* Destroys the queues (collective) and frees everything of the key set. Returns 1 when fine. */
static int teardown(isx_t *x)
{
    x->err = 0;
    for (int k = 0; k < 2; k++) {
        for (int h = 0; x->q[k] && h < x->np; h++)
            if (x->q[k][h])
                rmc_ok(x, rmc_queue_destroy(x->q[k][h]), "rmc_queue_destroy");
        free(x->q[k]);
        x->q[k] = NULL;
    }
    void *mem[] = {x->keys, x->send, x->recv, x->tmp, x->bufs, x->fill, x->scount};
    for (size_t i = 0; i < sizeof mem / sizeof *mem; i++)
        free(mem[i]);
    x->keys = x->send = x->recv = x->tmp = x->bufs = NULL;
    x->fill = NULL;
    x->scount = NULL;
    return !x->err;
}

/* Aggregation buffers of `batch` keys per destination, and the pushes' mode. */
static void set_batch(isx_t *x, size_t batch, int inflight)
{
    free(x->bufs);
    x->bufs = bench_alloc((size_t)x->np * batch * sizeof(isx_key_t));
    x->batch = batch;
    x->inflight = inflight;
}

/* ------------------------------------------------------------------ queue exchange --- */

/* Advances every outstanding push (an rmc_test moves a push's state machine on: reserve, put)
 * and drops the finished ones; with `wait_oldest`, first completes the oldest. */
static void push_progress(isx_t *x, int wait_oldest)
{
    int kept = 0;
    for (int i = 0; i < x->nreq; i++) {
        int done = i == 0 && wait_oldest;
        rmc_status_t st = done ? rmc_wait(&x->req[i]) : rmc_test(&x->req[i], &done);
        if (!rmc_ok(x, st, "rmc_queue_push_n_nb (completion)"))
            done = 1; /* a failed request is released */
        if (!done)
            x->req[kept++] = x->req[i];
    }
    x->nreq = kept;
}

/* Pushes n keys to q. Blocking: returns when `k` may be reused. Non-blocking: the push owns a
 * copy of the keys, so `k` is free at once while the push completes in the background. */
static void push(isx_t *x, rmc_queue_h q, const isx_key_t *k, size_t n)
{
    if (x->err)
        return; /* after a failure: send nothing more, but still join the barrier */
    if (!x->inflight) {
        rmc_ok(x, rmc_queue_push_n(q, k, n, RMC_PROMISE_PUSH), "rmc_queue_push_n");
        return;
    }
    push_progress(x, x->nreq == x->inflight);
    rmc_request_h r = RMC_REQUEST_NULL;
    if (rmc_ok(x, rmc_queue_push_n_nb(q, k, n, RMC_PROMISE_PUSH, &r), "rmc_queue_push_n_nb") && r)
        x->req[x->nreq++] = r;
}

/* Buckets this rank's keys and pushes every full bucket to its owner's queue, then the partial
 * ones (starting after this rank, so that the ranks do not all hit rank 0's queue at once). */
static void queue_send(isx_t *x, rmc_queue_h *q)
{
    size_t b = x->batch;
    memset(x->fill, 0, (size_t)x->np * sizeof(*x->fill));
    for (size_t i = 0; i < x->n; i++) {
        int d = owner(x, x->keys[i]);
        isx_key_t *buf = x->bufs + (size_t)d * b;
        buf[x->fill[d]++] = x->keys[i];
        if (x->fill[d] == b) {
            push(x, q[d], buf, b);
            x->fill[d] = 0;
        }
    }
    for (int i = 1; i <= x->np; i++) {
        int d = (x->me + i) % x->np;
        if (x->fill[d])
            push(x, q[d], x->bufs + (size_t)d * b, x->fill[d]);
    }
    while (x->nreq)
        push_progress(x, 1);
}

/* This rank's keys where they arrived, its own queue's ring: the host's view, no copy (they are
 * taken out after the sort, rmc_queue_local_discard). */
static void queue_view(isx_t *x, rmc_queue_h q)
{
    const void *r[2];
    x->got = 0;
    if (!rmc_ok(x, rmc_queue_local_peek(q, &r[0], &x->nin[0], &r[1], &x->nin[1]),
                "rmc_queue_local_peek"))
        x->nin[0] = x->nin[1] = 0;
    x->in[0] = r[0];
    x->in[1] = r[1];
    x->got = x->nin[0] + x->nin[1];
    if (x->got > x->expect) { /* sort no more than there is room for; the check reports it */
        fail(x, "the queue holds %zu keys, this rank should receive %zu", x->got, x->expect);
        x->nin[1] = 0;
        x->nin[0] = x->nin[0] < x->expect ? x->nin[0] : x->expect;
    }
}

/* The push phase, the barrier that completes it (every rank's pushes visible), the view. */
static void exchange_queue(isx_t *x, int kind)
{
    queue_send(x, x->q[kind]);
    rmc_ok(x, rmc_barrier(), "rmc_barrier");
    queue_view(x, x->q[kind][x->me]);
}

/* -------------------------------------------------------------------- MPI exchange --- */

/* ISx's MPI reference: counts, packing by destination, MPI_Alltoall, MPI_Alltoallv. */
static void exchange_mpi(isx_t *x)
{
    int np = x->np;
    memset(x->scount, 0, (size_t)np * sizeof(int));
    for (size_t i = 0; i < x->n; i++)
        x->scount[owner(x, x->keys[i])]++;
    for (int d = 0, at = 0; d < np; d++) {
        x->sdispl[d] = at;
        x->fill[d] = (size_t)at; /* the next free place of destination d */
        at += x->scount[d];
    }
    for (size_t i = 0; i < x->n; i++) {
        isx_key_t k = x->keys[i];
        x->send[x->fill[owner(x, k)]++] = k;
    }
    MPI_Alltoall(x->scount, 1, MPI_INT, x->rcount, 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int s = 0; s < np; s++) {
        x->rdispl[s] = (int)total;
        total += (size_t)x->rcount[s];
    }
    if (total > x->expect + 1) /* cannot happen with the keys counted at setup */
        bench_fail("rank %d would receive %zu keys, room for %zu", x->me, total, x->expect + 1);
    MPI_Alltoallv(x->send, x->scount, x->sdispl, KEY_MPI, x->recv, x->rcount, x->rdispl, KEY_MPI,
                  MPI_COMM_WORLD);
    x->got = total;
    x->in[0] = x->recv;
    x->nin[0] = total;
    x->in[1] = NULL;
    x->nin[1] = 0;
}

/* -------------------------------------------------------------------- verification --- */

/* Rank 0: every non-empty rank's smallest key is >= the largest of the previous non-empty one.
 * all[3r..3r+2] = rank r's count, smallest and largest key. */
static void check_boundaries(isx_t *x, const uint64_t *all, const char *what)
{
    int prev = -1;
    for (int r = 0; r < x->np; r++) {
        if (!all[3 * r])
            continue;
        if (prev >= 0 && all[3 * r + 1] < all[3 * prev + 2])
            fail(x, "%s: rank %d's largest key %" PRIu64 " > rank %d's smallest %" PRIu64, what,
                 prev, all[3 * prev + 2], r, all[3 * r + 1]);
        prev = r;
    }
}

/* Checks the last exchange and sort (collective, untimed). Returns 1, on every rank, when the
 * result is right everywhere. */
static int verify(isx_t *x, const char *what)
{
    const isx_key_t *k = x->sorted;
    size_t n = x->got;
    if (n != x->expect)
        fail(x, "%s: received %zu keys, expected %zu", what, n, x->expect);
    for (size_t i = 0; i < n; i++) {
        if (owner(x, k[i]) != x->me) {
            fail(x, "%s: key %" PRIu64 " (at %zu) is outside this rank's slice", what,
                 (uint64_t)k[i], i);
            break;
        }
        if (i && k[i - 1] > k[i]) {
            fail(x, "%s: keys not sorted at %zu (%" PRIu64 " > %" PRIu64 ")", what, i,
                 (uint64_t)k[i - 1], (uint64_t)k[i]);
            break;
        }
    }
    uint64_t mine[3] = {n, n ? k[0] : 0, n ? k[n - 1] : 0}, *all = malloc(24 * (size_t)x->np);
    if (!all)
        bench_fail("out of memory");
    MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, MPI_COMM_WORLD);
    if (x->me == 0)
        check_boundaries(x, all, what);
    free(all);
    sums_t s = global_sums(k, n), b = x->before;
    if (x->me == 0 && (s.count != b.count || s.sum != b.sum || s.hash != b.hash))
        fail(x,
             "%s: the multiset of keys changed: count %" PRIu64 " -> %" PRIu64 ", sum %" PRIu64
             " -> %" PRIu64 ", hash sum %016" PRIx64 " -> %016" PRIx64,
             what, b.count, s.count, b.sum, s.sum, b.hash, s.hash);
    int bad = x->err;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return !bad;
}

/* ------------------------------------------------------------------ one repetition --- */

/* Variant v once: exchange, local sort, verification (collective). t[0], t[1] = exchange and
 * total ns per key, the maximum over ranks. Returns 1 when verified on every rank. */
static int run_variant(isx_t *x, int v, double t[2])
{
    x->err = 0;
    MPI_Barrier(MPI_COMM_WORLD); /* fair start; no RMC operation is in flight here */
    uint64_t t0 = bench_now_ns();
    if (v == V_MPI)
        exchange_mpi(x);
    else
        exchange_queue(x, v);
    uint64_t t1 = bench_now_ns();
    x->sorted = radix_sort(x->in, x->nin, x->recv, x->tmp);
    uint64_t t2 = bench_now_ns();
    double mine[2] = {(double)(t1 - t0) / (double)x->n, (double)(t2 - t0) / (double)x->n};
    MPI_Allreduce(mine, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int ok = verify(x, var_name[v]);
    if (v != V_MPI) /* the sorted keys are out of the ring: empty the queue for the next round */
        rmc_ok(x, rmc_queue_local_discard(x->q[v][x->me], x->nin[0] + x->nin[1]),
               "rmc_queue_local_discard");
    return ok && !x->err;
}

#ifdef ISX_TEST
/* ----------------------------------------------------------------------------- test --- */

typedef struct tcfg {
    size_t batch;
    int inflight, reps;
} tcfg_t;

/* A key set and the push configurations run on it. */
typedef struct tset {
    const char *name;
    size_t n;
    int skew; /* every key to the last rank, into queues of exactly the right capacity */
    tcfg_t cfg[2];
} tset_t;

/* Batches dividing N and not, blocking and non-blocking pushes. Tiny pushes are many operations:
 * fewer keys there, since oversubscribed runs (4 ranks on 2 cores) pay milliseconds for an
 * operation that needs its target's CPU (MPI atomics, or RMC_AMO=thread without progress thread).
 */
static const tset_t sets[] = {
    {"uniform", 1 << 14, 0, {{1024, 0, 2}, {1000, 3, 2}}},
    {"uniform, tiny pushes", 500, 0, {{7, 0, 1}, {7, 4, 1}}},
    {"all keys to one rank", 1 << 14, 1, {{1000, 0, 2}, {333, 2, 1}}},
};

/* One configuration: every variant, reps times; one line per variant. */
static int test_cfg(isx_t *x, const tset_t *s, const tcfg_t *c)
{
    int ok = 1;
    set_batch(x, c->batch, c->inflight);
    for (int v = 0; v < NVAR; v++) {
        int vok = 1;
        double t[2];
        uint64_t t0 = bench_now_ns();
        for (int r = 0; r < c->reps; r++)
            vok &= run_variant(x, v, t);
        if (x->me == 0)
            printf("test_isx: %-20s %5zu keys/rank, batch %4zu, inflight %d, %d reps: %-17s %s "
                   "(%.2f s)\n",
                   s->name, x->n, x->batch, x->inflight, c->reps, var_name[v],
                   vok ? "ok" : "FAILED", (double)(bench_now_ns() - t0) * 1e-9);
        fflush(stdout);
        ok &= vok;
    }
    return ok;
}

/* One key set: its queues, its configurations. */
static int test_set(isx_t *x, const tset_t *s)
{
    x->n = s->n;
    int ok = setup(x, s->skew, s->skew);
    if (!ok && x->me == 0)
        printf("test_isx: %s: queue creation FAILED\n", s->name);
    for (size_t c = 0; c < sizeof s->cfg / sizeof *s->cfg && ok; c++)
        ok &= test_cfg(x, s, &s->cfg[c]);
    return teardown(x) && ok;
}

int main(void)
{
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    isx_t x = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &x.me);
    MPI_Comm_size(MPI_COMM_WORLD, &x.np);
    if (!rmc_ok(&x, rmc_init(MPI_COMM_WORLD), "rmc_init"))
        MPI_Abort(MPI_COMM_WORLD, 1); /* a failed init leaves no way to agree through RMC */
    int ok = 1;
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        ok &= test_set(&x, &sets[i]);
    x.err = 0;
    rmc_ok(&x, rmc_finalize(), "rmc_finalize");
    ok &= !x.err;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (x.me == 0)
        printf("test_isx: %d ranks: %s\n", x.np, ok ? "PASS" : "FAIL");
    MPI_Finalize();
    return ok ? 0 : 1;
}

#else
/* ------------------------------------------------------------------------ benchmark --- */

#define DEFAULT_INFLIGHT 4
/* keys per push: 4096 was the best of 1024 .. 16384 with RMC_NODE_SIZE=1 on this machine (each
 * put goes through MPICH's shared-memory RMA, completed by the target's progress: fewer, larger
 * ones); BCL used 1024 at scale */
#define DEFAULT_BATCH    4096

/* Takes --keys N, --batch B and --inflight D out of argv (bench_parse refuses options it does not
 * know). Returns 0, or 1 after a usage error. */
static int parse_own(int *argc, char **argv, size_t *keys, size_t *batch, size_t *inflight)
{
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        size_t *dst = !strcmp(a, "--keys")       ? keys
                      : !strcmp(a, "--batch")    ? batch
                      : !strcmp(a, "--inflight") ? inflight
                                                 : NULL;
        if (!dst) {
            argv[kept++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc || bench_parse_size(argv[i + 1], dst)) {
            fprintf(stderr, "bench_isx: bad value for %s\n", a);
            return 1;
        }
        i++;
    }
    *argc = kept;
    argv[kept] = NULL;
    return 0;
}

/* The measured repetitions (after one verified warm-up per variant, which also faults in the
 * queues' memory); aborts on any wrong result. ex/tot[v][r]: ns per key. */
static void measure(isx_t *x, const bench_opts_t *o, double ex[NVAR][BENCH_MAX_REPS],
                    double tot[NVAR][BENCH_MAX_REPS])
{
    double t[2];
    for (int r = -1; r < o->reps; r++)
        for (int v = 0; v < NVAR; v++) { /* variants interleaved: same conditions for each */
            if (!run_variant(x, v, t))
                bench_fail("%s: wrong result in repetition %d (see the messages above)",
                           var_name[v], r);
            if (r < 0)
                continue;
            ex[v][r] = t[0];
            tot[v][r] = t[1];
            if (o->verbose)
                bench_printf("# rep %d %-17s exchange %.2f total %.2f ns/key\n", r, var_name[v],
                             t[0], t[1]);
        }
}

static void report(isx_t *x, bench_opts_t *o, double ex[NVAR][BENCH_MAX_REPS],
                   double tot[NVAR][BENCH_MAX_REPS])
{
    char title[256];
    snprintf(title, sizeof title,
             "ISx, ns per key (%zu %d-bit keys per rank, batch %zu, %s; max over ranks, median "
             "of %d)",
             x->n, ISX_KEY_BITS, x->batch, x->inflight ? "non-blocking pushes" : "blocking pushes",
             o->reps);
    bench_table_t *t = bench_table_new("isx", "phase", title);
    int col[NVAR];
    for (int v = 0; v < NVAR; v++)
        col[v] = bench_table_col(t, var_name[v], "ns/key");
    bench_table_ratio(t, "MPI / RMC FastQueue", col[V_MPI], col[V_FAST], BENCH_RATIO_X);
    bench_table_ratio(t, "MPI / RMC CircularQueue", col[V_MPI], col[V_CIRC], BENCH_RATIO_X);
    int row[2] = {bench_table_row(t, "exchange", NAN), bench_table_row(t, "total", NAN)};
    for (int v = 0; v < NVAR; v++) {
        bench_table_set(t, row[0], col[v], bench_median(ex[v], (size_t)o->reps));
        bench_table_set(t, row[1], col[v], bench_median(tot[v], (size_t)o->reps));
    }
    bench_table_note(t, "exchange: bucketing + sending until every rank holds its keys (queues: "
                        "pushes, rmc_barrier; the keys stay in the host's ring); total: + local "
                        "radix sort (the queues' from their ring)");
    bench_table_note(t, "ratios above 1x: RMC faster; every repetition verified (sorted, "
                        "boundaries, key multiset)");
    bench_finish(o, (bench_table_t *[]){t}, 1);
}

int main(int argc, char **argv)
{
    size_t keys = 0, batch = DEFAULT_BATCH, inflight = DEFAULT_INFLIGHT;
    if (parse_own(&argc, argv, &keys, &batch, &inflight))
        return 1;
    bench_opts_t o;
    int prc = bench_parse(argc, argv, "bench_isx", 0, 0, &o);
    if (prc < 0)
        printf("  --keys N        keys per rank (default 4M; --quick 1M)\n"
               "  --batch B       keys per queue push (default %d)\n"
               "  --inflight D    non-blocking pushes kept outstanding, 0 = blocking (default %d, "
               "max %d)\n",
               DEFAULT_BATCH, DEFAULT_INFLIGHT, MAX_INFLIGHT);
    if (prc)
        return prc > 0;
    isx_t x = {0};
    if (bench_mpi_start(&argc, &argv, "bench_isx", &x.me, &x.np, NULL))
        return 1;
    x.n = keys ? keys : o.quick ? (size_t)1 << 20 : (size_t)1 << 22;
    if (batch == 0 || inflight > MAX_INFLIGHT || x.n == 0 || x.n > (size_t)INT_MAX / x.np)
        bench_fail("bad --keys / --batch / --inflight (MPI counts are int: keys * ranks < 2^31)");
    if (!rmc_ok(&x, rmc_init(MPI_COMM_WORLD), "rmc_init"))
        bench_fail("rmc_init failed");
    if (!setup(&x, 0, 0))
        bench_fail("queue creation failed");
    set_batch(&x, batch, (int)inflight);
    char peers[512];
    snprintf(peers, sizeof peers,
             "reference: MPI_Alltoallv (MPICH) in the same run, same keys, same local radix sort "
             "| RMC %s: one queue per rank, pushes of %zu keys with RMC_PROMISE_PUSH (%s), "
             "rmc_barrier, the host sorts from its ring (rmc_queue_local_peek)",
             rmc_version(), batch,
             inflight ? "rmc_queue_push_n_nb, overlapped with the bucketing" : "rmc_queue_push_n");
    bench_header(&o, "ISx bucket sort (seed 000 §8.1): distribution + local sort", peers);
    static double ex[NVAR][BENCH_MAX_REPS], tot[NVAR][BENCH_MAX_REPS];
    measure(&x, &o, ex, tot);
    report(&x, &o, ex, tot);
    if (!teardown(&x))
        bench_fail("queue destruction failed");
    if (!rmc_ok(&x, rmc_finalize(), "rmc_finalize"))
        bench_fail("rmc_finalize failed");
    MPI_Finalize();
    return 0;
}
#endif
