/* The three queues: order, full and empty, vector operations across the wrap, exact multisets under
 * all-rank contention (with the ring much smaller than the traffic: pushes meet full, pops empty),
 * promise variants and their costs in remote operations (rmc_op_counts), variable-length elements,
 * non-blocking forms, the host's local operations, resize while full and migration; each through
 * the path chosen, the one-sided one forced and, in thread AMO mode, the RPC one forced, and both
 * at once on one queue. Runs in both AMO modes and node modes (MPI_TESTS_AMO). */
#include "cttest.h"
#include <rmc/progress.h>

static const rmc_queue_kind_t kinds[3] = {RMC_QUEUE_CIRCULAR, RMC_QUEUE_FAST, RMC_QUEUE_CHECKSUM};
static const char *kname[3] = {"circular", "fast", "checksum"};

/* The paths to test: chosen per operation, one-sided, and RPC (thread AMO mode only). */
static int npaths(void)
{
    return rmc_amo_mode() == RMC_AMO_MODE_THREAD ? 3 : 2;
}
static const unsigned paths[3] = {0, RMC_PATH_RDMA, RMC_PATH_RPC};
static const char *pname[3] = {"chosen", "rdma", "rpc"};

static int64_t tag(int rank, int64_t i)
{
    return ((int64_t)rank << 32) | i;
}

/* Rounds of a two-rank stress loop: `most` of them, or fewer (but at least 50) once `secs` have
 * passed. Two busy ranks that share a core (more ranks than cores: here, or beside a parallel
 * test) wait a time slice for every round trip: 1000 rounds then took 200 s instead of 0.04. */
static int more_rounds(int i, int most, double t0, double secs)
{
    return i < most && (i < 50 || MPI_Wtime() - t0 < secs);
}

/* One pusher (rank 0), the host the last rank: FIFO order; full and empty leave the queue as it
 * was; a vector push that does not fit takes nothing. */
static void test_order_full_empty(void **s)
{
    (void)s;
    for (int pi = 0; pi < npaths(); pi++)
        for (int k = 0; k < 3; k++) {
            const unsigned P = paths[pi];
            rmc_queue_h q;
            int host = np - 1, ok = 1;
            MPI_CHECK_OK(rmc_queue_create(kinds[k], host, 5, &rmc_type_i64, &q));
            if (me == 0) {
                int64_t v[3] = {7, 8, 9}, x;
                for (int64_t i = 0; i < 5; i++)
                    MPITEST_EXPECT(ok, rmc_queue_push(q, &i, P) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_push(q, &v[0], P) == RMC_ERR_FULL);
                MPITEST_EXPECT(ok, rmc_queue_push_n(q, v, 3, P) == RMC_ERR_FULL);
                if (kinds[k] == RMC_QUEUE_FAST)
                    MPITEST_EXPECT(ok, rmc_barrier() == RMC_OK);
                for (int64_t i = 0; i < 3; i++)
                    MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, P) == RMC_OK && x == i);
                if (kinds[k] == RMC_QUEUE_FAST)
                    MPITEST_EXPECT(ok, rmc_barrier() == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_push_n(q, v, 3, P) == RMC_OK); /* wraps around */
                MPITEST_EXPECT(ok, rmc_queue_push(q, &x, P) == RMC_ERR_FULL);
                if (kinds[k] == RMC_QUEUE_FAST)
                    MPITEST_EXPECT(ok, rmc_barrier() == RMC_OK);
                int64_t out[5];
                MPITEST_EXPECT(ok, rmc_queue_pop_n(q, out, 6 - 1, P) == RMC_OK);
                MPITEST_EXPECT(ok, out[0] == 3 && out[1] == 4 && out[2] == 7 && out[3] == 8 &&
                                       out[4] == 9);
                MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, P) == RMC_ERR_EMPTY);
                MPITEST_EXPECT(ok, rmc_queue_pop_n(q, out, 2, P) == RMC_ERR_EMPTY);
                size_t n = 9;
                MPITEST_EXPECT(ok, rmc_queue_size(q, &n) == RMC_OK && n == 0);
                /* as many as there are, up to max (wrapping around) */
                MPITEST_EXPECT(ok, rmc_queue_push_n(q, v, 3, P) == RMC_OK);
                if (kinds[k] == RMC_QUEUE_FAST)
                    MPITEST_EXPECT(ok, rmc_barrier() == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_pop_upto(q, out, 5, &n, P) == RMC_OK && n == 3 &&
                                       out[0] == 7 && out[1] == 8 && out[2] == 9);
                MPITEST_EXPECT(ok, rmc_queue_pop_upto(q, out, 5, &n, P) == RMC_ERR_EMPTY);
                if (!ok)
                    fprintf(stderr, "[rank %d] %s queue, %s path failed\n", me, kname[k],
                            pname[pi]);
            } else if (kinds[k] == RMC_QUEUE_FAST) {
                for (int b = 0; b < 4; b++)
                    MPITEST_EXPECT(ok, rmc_barrier() == RMC_OK);
            }
            MPI_CHECK_ALL(ok);
            MPI_CHECK_OK(rmc_queue_destroy(q));
        }
}

/* A FAST queue used by one rank alone (rank 0; the host the last rank): its own completed pushes
 * (blocking, vector, _nb waited) pop back in order without a barrier (queue.h), with and without
 * the PUSH / POP promises, through every path; the other ranks only meet it at create and destroy.
 */
static void test_fast_solo(void **s)
{
    (void)s;
    for (int pi = 0; pi < npaths(); pi++)
        for (int pr = 0; pr < 2; pr++) {
            const unsigned P = paths[pi];
            const unsigned push_p = P | (pr ? RMC_PROMISE_PUSH : 0u);
            const unsigned pop_p = P | (pr ? RMC_PROMISE_POP : 0u);
            rmc_queue_h q;
            int ok = 1;
            MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_FAST, np - 1, 6, &rmc_type_i64, &q));
            if (me == 0) {
                for (int64_t round = 0; round < 4; round++) { /* the ring wraps around */
                    int64_t v[2] = {10 * round + 1, 10 * round + 2}, w = 10 * round + 3, x = -1;
                    int64_t out[4] = {-1, -1, -1, -1};
                    rmc_request_h r = RMC_REQUEST_NULL;
                    MPITEST_EXPECT(ok, rmc_queue_push(q, &(int64_t){10 * round}, push_p) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_queue_push_n(q, v, 2, push_p) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_queue_push_nb(q, &w, push_p, &r) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_wait(&r) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, pop_p) == RMC_OK && x == 10 * round);
                    MPITEST_EXPECT(ok, rmc_queue_pop_n(q, out, 3, pop_p) == RMC_OK &&
                                           out[0] == v[0] && out[1] == v[1] && out[2] == w);
                    MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, pop_p) == RMC_ERR_EMPTY);
                }
                if (!ok)
                    fprintf(stderr, "[rank %d] fast solo, %s path, promises %d failed\n", me,
                            pname[pi], pr);
            }
            MPI_CHECK_ALL(ok);
            MPI_CHECK_OK(rmc_queue_destroy(q));
        }
}

/* Every rank pushes and pops the same queue at once (CIRCULAR, CHECKSUM), capacity 8 for 4*60*np
 * elements: pushers meet FULL and retry, poppers meet EMPTY and retry, until the count of popped
 * elements (an atomic counter) reaches the total. Vector pushes of 1..3 elements. Every element is
 * popped exactly once and each pusher's elements come out in its push order. */
static void contention(rmc_queue_kind_t kind, unsigned push_promise, unsigned pop_promise)
{
    enum { PER = 60 };
    rmc_queue_h q;
    int host = np > 1 ? 1 : 0;
    MPI_CHECK_OK(rmc_queue_create(kind, host, 8, &rmc_type_i64, &q));
    rmc_gptr_t cnt = RMC_GPTR_NULL;
    if (me == 0)
        MPI_CHECK_OK(rmc_alloc(8, &cnt));
    else
        MPI_CHECK_ALL(1);
    MPI_Bcast(&cnt, sizeof cnt, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_CHECK_OK(rmc_barrier());
    int64_t total = (int64_t)PER * np, pushed = 0, npop = 0, done_count = 0;
    int64_t *got = malloc(sizeof(int64_t) * (size_t)total);
    int64_t *last = calloc((size_t)np, sizeof(int64_t)); /* per pusher: the last index + 1 seen */
    int ok = 1;
    unsigned spins = 0, attempt = 0;
    while (pushed < PER || done_count < total) {
        if (pushed < PER) {
            int64_t v[3];
            size_t n = 1 + (size_t)(pushed % 3);
            if (pushed + (int64_t)n > PER)
                n = (size_t)(PER - pushed);
            for (size_t i = 0; i < n; i++)
                v[i] = tag(me, pushed + (int64_t)i);
            rmc_status_t st = rmc_queue_push_n(q, v, n, push_promise);
            MPITEST_EXPECT(ok, st == RMC_OK || st == RMC_ERR_FULL);
            if (st == RMC_OK)
                pushed += (int64_t)n;
        }
        int64_t x[2];
        size_t m = 1 + (size_t)(++attempt & 1); /* pops of 1 and 2 in turn: the last one fits */
        rmc_status_t st = rmc_queue_pop_n(q, x, m, pop_promise);
        MPITEST_EXPECT(ok, st == RMC_OK || st == RMC_ERR_EMPTY);
        if (st == RMC_OK) {
            for (size_t i = 0; i < m; i++) {
                int r = (int)(x[i] >> 32);
                int64_t idx = x[i] & 0xffffffff;
                if (r < 0 || r >= np || idx >= PER || npop >= total) {
                    ok = 0;
                    break;
                }
                /* one pusher's elements leave in its order (pops by one rank see a subsequence) */
                MPITEST_EXPECT(ok, idx >= last[r]);
                last[r] = idx + 1;
                got[npop++] = x[i];
            }
            int64_t old;
            MPITEST_EXPECT(ok, rmc_gptr_fetch_add_i64(cnt, (int64_t)m, &old) == RMC_OK);
            done_count = old + (int64_t)m;
        } else if (++spins % 8 == 0) {
            MPITEST_EXPECT(ok, rmc_gptr_load_i64(cnt, &done_count) == RMC_OK);
        }
        if (!ok)
            break;
    }
    /* leave the phase attentively: a peer's last pop may still need this rank (thread-mode
     * atomics without a progress thread are served inside RMC calls) */
    MPI_CHECK_OK(rmc_barrier());
    /* gather everything popped: every element exactly once */
    int mine = (int)npop, *counts = malloc(sizeof(int) * (size_t)np),
        *displs = malloc(sizeof(int) * (size_t)np);
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    int sum = 0;
    for (int r = 0; r < np; r++) {
        displs[r] = sum;
        sum += counts[r];
    }
    int64_t *all = malloc(sizeof(int64_t) * (size_t)(sum ? sum : 1));
    MPI_Allgatherv(got, mine, MPI_INT64_T, all, counts, displs, MPI_INT64_T, MPI_COMM_WORLD);
    char *seen = calloc((size_t)total, 1);
    int dup = 0;
    for (int i = 0; i < sum; i++) {
        int64_t r = all[i] >> 32, idx = all[i] & 0xffffffff;
        if (r >= 0 && r < np && idx < PER)
            dup += seen[r * PER + idx]++ != 0;
    }
    int missing = 0;
    for (int64_t i = 0; i < total; i++)
        missing += !seen[i];
    if (dup || missing || sum != total)
        fprintf(stderr, "[rank %d] kind %d: %d popped of %lld, %d twice, %d missing\n", me,
                (int)kind, sum, (long long)total, dup, missing);
    MPI_CHECK_ALL(ok && sum == total && !dup && !missing);
    MPI_CHECK_OK(rmc_barrier());
    if (me == 0)
        MPI_CHECK_OK(rmc_free(cnt));
    else
        MPI_CHECK_ALL(1);
    MPI_CHECK_OK(rmc_queue_destroy(q));
    free(got);
    free(last);
    free(counts);
    free(displs);
    free(all);
    free(seen);
}

static void test_contention_circular(void **s)
{
    (void)s;
    contention(RMC_QUEUE_CIRCULAR, RMC_PROMISE_ANY, RMC_PROMISE_ANY);
}

static void test_contention_checksum(void **s)
{
    (void)s;
    contention(RMC_QUEUE_CHECKSUM, RMC_PROMISE_ANY, RMC_PROMISE_ANY);
}

/* PUSH | POP promises that pushes and pops both run: the marks must stay ordered (only PUSH alone
 * or POP alone lets them go unordered). */
static void test_contention_push_pop_promise(void **s)
{
    (void)s;
    const unsigned pp = RMC_PROMISE_PUSH | RMC_PROMISE_POP;
    contention(RMC_QUEUE_CIRCULAR, pp, pp);
}

/* The same with both paths on one queue at once (thread AMO mode): odd ranks send every operation
 * to the host (RPC), even ranks run the one-sided protocol (the host, when even, on its own ring
 * with CPU atomics). With MPI atomics every rank is forced one-sided. */
static void contention_paths(rmc_queue_kind_t kind)
{
    unsigned p = rmc_amo_mode() != RMC_AMO_MODE_THREAD ? RMC_PATH_RDMA
                 : me % 2                              ? RMC_PATH_RPC
                                                       : RMC_PATH_RDMA;
    contention(kind, p, p);
}

static void test_contention_paths_circular(void **s)
{
    (void)s;
    contention_paths(RMC_QUEUE_CIRCULAR);
}

static void test_contention_paths_checksum(void **s)
{
    (void)s;
    contention_paths(RMC_QUEUE_CHECKSUM);
}

/* Phases: every rank pushes with the push-only promise (FAST: its only mode) to every rank's queue,
 * barrier, every host drains its own queue (pops with the pop-only promise, then the host's local
 * pops): each host receives exactly what was sent to it. */
static void phases(rmc_queue_kind_t kind)
{
    enum { PER = 40 };
    rmc_queue_h *qs = malloc(sizeof(*qs) * (size_t)np);
    for (int h = 0; h < np; h++)
        MPI_CHECK_OK(rmc_queue_create(kind, h, (size_t)PER * (size_t)np, &rmc_type_i64, &qs[h]));
    int ok = 1;
    for (int i = 0; i < PER; i++)
        for (int h = 0; h < np; h++) {
            int64_t v = tag(me, i);
            MPITEST_EXPECT(ok, rmc_queue_push(qs[h], &v, RMC_PROMISE_PUSH) == RMC_OK);
        }
    MPI_CHECK_OK(rmc_barrier());
    int64_t *got = calloc((size_t)PER * (size_t)np, sizeof(int64_t));
    size_t n = 0, k;
    /* half through pops with the pop-only promise, the rest through the host's local pops */
    while (n < (size_t)PER * (size_t)np / 2) {
        rmc_status_t st = rmc_queue_pop(qs[me], &got[n], RMC_PROMISE_POP);
        MPITEST_EXPECT(ok, st == RMC_OK);
        if (st != RMC_OK)
            break;
        n++;
    }
    while (rmc_queue_pop_upto(qs[me], &got[n], 7, &k, RMC_PROMISE_LOCAL) == RMC_OK)
        n += k;
    MPITEST_EXPECT(ok, n == (size_t)PER * (size_t)np);
    char *seen = calloc((size_t)PER * (size_t)np, 1);
    for (size_t i = 0; i < n; i++) {
        int64_t r = got[i] >> 32, idx = got[i] & 0xffffffff;
        MPITEST_EXPECT(ok, r >= 0 && r < np && idx < PER && !seen[r * PER + idx]);
        if (r >= 0 && r < np && idx < PER)
            seen[r * PER + idx] = 1;
    }
    MPI_CHECK_ALL(ok);
    for (int h = 0; h < np; h++)
        MPI_CHECK_OK(rmc_queue_destroy(qs[h]));
    free(qs);
    free(got);
    free(seen);
}

static void test_phases(void **s)
{
    (void)s;
    for (int k = 0; k < 3; k++)
        phases(kinds[k]);
}

/* What each operation costs in remote operations (rmc_op_counts), on an uncontended queue hosted by
 * another rank, after one operation of each kind warmed the cached counters: */
static void test_costs(void **s)
{
    (void)s;
    int host = np - 1;
    /* {push atomics, push writes, pop atomics, pop reads}: fully atomic, and with promises */
    static const int cost[3][2][4] = {
        {{2, 1, 2, 1}, {2, 1, 2, 1}}, /* circular: 2A+W, 2A+R; promises: unordered marks */
        {{1, 1, 1, 1}, {1, 1, 1, 1}}, /* fast: A+W, A+R */
        {{1, 1, 2, 1}, {1, 1, 2, 1}}, /* checksum: A+W(1+c), 2A+R(1+c) */
    };
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < 2; p++) {
            rmc_queue_h q;
            MPI_CHECK_OK(rmc_queue_create(kinds[k], host, 64, &rmc_type_i64, &q));
            int ok = 1;
            if (me == 0) {
                unsigned pp = (p ? RMC_PROMISE_PUSH : 0) | RMC_PATH_RDMA,
                         op = (p ? RMC_PROMISE_POP : 0) | RMC_PATH_RDMA;
                int64_t v = 1, x;
                rmc_op_counts_t c;
                /* warm: the first push and pop read the bound once */
                MPITEST_EXPECT(ok, rmc_queue_push(q, &v, pp) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_push(q, &v, pp) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, op) == RMC_OK);
                rmc_op_counts_enable(1);
                MPITEST_EXPECT(ok, rmc_queue_push(q, &v, pp) == RMC_OK);
                rmc_op_counts(&c);
                MPITEST_EXPECT(ok, (int)c.atomics == cost[k][p][0] &&
                                       (int)c.writes == cost[k][p][1] && c.reads == 0);
                rmc_op_counts_enable(1);
                MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, op) == RMC_OK);
                rmc_op_counts(&c);
                MPITEST_EXPECT(ok, (int)c.atomics == cost[k][p][2] &&
                                       (int)c.reads == cost[k][p][3] && c.writes == 0);
                /* a vector of 5 costs the same operations */
                int64_t w[5] = {1, 2, 3, 4, 5};
                rmc_op_counts_enable(1);
                MPITEST_EXPECT(ok, rmc_queue_push_n(q, w, 5, pp) == RMC_OK);
                rmc_op_counts(&c);
                MPITEST_EXPECT(ok, (int)c.atomics == cost[k][p][0] &&
                                       (int)c.writes == cost[k][p][1] && c.write_bytes >= 40);
                rmc_op_counts_enable(0);
                if (!ok)
                    fprintf(stderr, "[rank 0] %s queue, promise %d: %llu A %llu W %llu R\n",
                            kname[k], p, c.atomics, c.writes, c.reads);
                /* the RPC path: one active message per operation, nothing one-sided */
                if (rmc_amo_mode() == RMC_AMO_MODE_THREAD) {
                    rmc_progress_stats_t p0, p1;
                    unsigned rp = (pp & ~RMC_PATH_RDMA) | RMC_PATH_RPC,
                             ro = (op & ~RMC_PATH_RDMA) | RMC_PATH_RPC;
                    size_t got = 0;
                    rmc_progress_stats(&p0);
                    rmc_op_counts_enable(1);
                    MPITEST_EXPECT(ok, rmc_queue_push(q, &v, rp) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_queue_push_n(q, w, 5, rp) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, ro) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_queue_pop_n(q, w, 2, ro) == RMC_OK);
                    MPITEST_EXPECT(ok, rmc_queue_pop_upto(q, w, 5, &got, ro) == RMC_OK && got == 5);
                    rmc_op_counts(&c);
                    rmc_op_counts_enable(0);
                    rmc_progress_stats(&p1);
                    MPITEST_EXPECT(ok, c.atomics + c.reads + c.writes == 0);
                    MPITEST_EXPECT(ok, p1.am_sent - p0.am_sent == 5);
                    if (!ok)
                        fprintf(stderr,
                                "[rank 0] %s queue, promise %d, RPC: %llu A %llu W %llu R, %llu "
                                "AMs, got %zu\n",
                                kname[k], p, c.atomics, c.writes, c.reads,
                                (unsigned long long)(p1.am_sent - p0.am_sent), got);
                }
            }
            MPI_CHECK_ALL(ok);
            MPI_CHECK_OK(rmc_queue_destroy(q));
        }
}

/* Strings of 0..40 bytes through a queue of RMC_TYPE_STRING(32): longer ones are refused
 * (RMC_ERR_TOO_BIG) and take no slot; the others arrive intact. */
static void test_strings(void **s)
{
    (void)s;
    static const rmc_type_t str32 = RMC_TYPE_STRING(32);
    for (int pi = 0; pi < npaths(); pi++)
        for (int k = 0; k < 3; k++) {
            const unsigned P = paths[pi];
            rmc_queue_h q;
            MPI_CHECK_OK(rmc_queue_create(kinds[k], 0, 16, &str32, &q));
            int ok = 1, sent = 0;
            char text[64];
            if (me == np - 1) {
                for (int i = 0; i <= 40; i += 4) {
                    memset(text, 'a' + i % 26, (size_t)i);
                    text[i] = 0;
                    char *p = text;
                    rmc_status_t st = rmc_queue_push(q, &p, P);
                    MPITEST_EXPECT(ok, i <= 32 ? st == RMC_OK : st == RMC_ERR_TOO_BIG);
                    sent += st == RMC_OK;
                }
            }
            MPI_CHECK_OK(rmc_barrier());
            if (me == np - 1) {
                for (int i = 0; i < sent; i++) {
                    char *p = NULL;
                    MPITEST_EXPECT(ok, rmc_queue_pop(q, &p, P) == RMC_OK);
                    MPITEST_EXPECT(ok, p && strlen(p) == (size_t)(4 * i));
                    for (int c = 0; p && c < 4 * i; c++)
                        MPITEST_EXPECT(ok, p[c] == 'a' + (4 * i) % 26);
                    rmc_type_release(&str32, &p);
                    MPITEST_EXPECT(ok, p == NULL);
                }
                char *p = NULL;
                MPITEST_EXPECT(ok, rmc_queue_pop(q, &p, P) == RMC_ERR_EMPTY);
            }
            MPI_CHECK_ALL(ok);
            MPI_CHECK_OK(rmc_queue_destroy(q));
        }
}

/* Non-blocking pushes and pops, many outstanding at once, completed by rmc_wait_all; their status
 * is the operation's (FULL / EMPTY through the request). */
static void test_nb(void **s)
{
    (void)s;
    enum { N = 12 };
    for (int pi = 0; pi < npaths(); pi++)
        for (int k = 0; k < 3; k++) {
            const unsigned P = paths[pi];
            if (kinds[k] == RMC_QUEUE_FAST)
                continue; /* a pop must not run with the pushes */
            rmc_queue_h q;
            MPI_CHECK_OK(rmc_queue_create(kinds[k], np - 1, N, &rmc_type_i64, &q));
            int ok = 1;
            if (me == 0) {
                /* outstanding at once, the reservations may reach the host in any order: 12 of the
                 * 13 pushes fit and one is refused, and the 12 values come out */
                rmc_request_h rq[N + 1];
                int64_t v[N + 1], out[N];
                rmc_status_t st[N + 1];
                int full = 0, okc = 0;
                for (int i = 0; i <= N; i++) {
                    v[i] = 100 + i;
                    st[i] = rmc_queue_push_nb(q, &v[i], P, &rq[i]);
                    v[i] = -1; /* the value was copied */
                }
                for (int i = 0; i <= N; i++) {
                    if (st[i] == RMC_OK && rq[i])
                        st[i] = rmc_wait(&rq[i]);
                    full += st[i] == RMC_ERR_FULL;
                    okc += st[i] == RMC_OK;
                }
                MPITEST_EXPECT(ok, full == 1 && okc == N);
                for (int i = 0; i < N; i++)
                    MPITEST_EXPECT(ok, rmc_queue_pop_nb(q, &out[i], P, &rq[i]) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_wait_all(rq, N) == RMC_OK);
                int64_t sum = 0;
                for (int i = 0; i < N; i++)
                    sum += out[i] - 100;
                int64_t all = N * (N + 1) / 2; /* 0..N, one missing */
                MPITEST_EXPECT(ok, all - sum >= 0 && all - sum <= N);
                int64_t x;
                rmc_status_t s1 = rmc_queue_pop_nb(q, &x, P, &rq[0]);
                if (s1 == RMC_OK && rq[0])
                    s1 = rmc_wait(&rq[0]);
                MPITEST_EXPECT(ok, s1 == RMC_ERR_EMPTY);
                int64_t w[3] = {1, 2, 3};
                MPITEST_EXPECT(ok, rmc_queue_push_n_nb(q, w, 3, P, &rq[0]) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_wait(&rq[0]) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_pop_n_nb(q, out, 3, P, &rq[0]) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_wait(&rq[0]) == RMC_OK && out[0] == 1 && out[2] == 3);
            }
            MPI_CHECK_ALL(ok);
            MPI_CHECK_OK(rmc_queue_destroy(q));
        }
}

/* Resize while full (grow: every element stays, in order; shrink below the count: RMC_ERR_FULL,
 * nothing changes), then migrate to another host, then resize again. */
static void test_resize_migrate(void **s)
{
    (void)s;
    for (int k = 0; k < 3; k++) {
        rmc_queue_h q;
        MPI_CHECK_OK(rmc_queue_create(kinds[k], 0, 6, &rmc_type_i64, &q));
        int ok = 1;
        int64_t x;
        if (me == np - 1) {
            for (int64_t i = 0; i < 6; i++)
                MPITEST_EXPECT(ok, rmc_queue_push(q, &i, 0) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_queue_push(q, &x, 0) == RMC_ERR_FULL);
        }
        MPI_CHECK_OK(rmc_barrier());
        if (me == np - 1 && kinds[k] != RMC_QUEUE_FAST) { /* move the ring's start */
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, 0) == RMC_OK && x == 0);
            int64_t v = 6;
            MPITEST_EXPECT(ok, rmc_queue_push(q, &v, 0) == RMC_OK);
        }
        MPI_CHECK_ALL(ok);
        int64_t first = kinds[k] == RMC_QUEUE_FAST ? 0 : 1;
        MPI_CHECK_ALL(rmc_queue_resize(q, 3) == RMC_ERR_FULL);
        MPI_CHECK_OK(rmc_queue_resize(q, 10));
        MPI_CHECK_ALL(rmc_queue_capacity(q) == 10);
        MPI_CHECK_OK(rmc_queue_migrate(q, np - 1));
        MPI_CHECK_ALL(rmc_queue_host(q) == np - 1);
        if (me == 0) {
            for (int64_t i = 100; i < 104; i++)
                MPITEST_EXPECT(ok, rmc_queue_push(q, &i, 0) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_queue_push(q, &x, 0) == RMC_ERR_FULL);
        }
        MPI_CHECK_OK(rmc_barrier());
        if (me == 0) {
            for (int64_t i = 0; i < 6; i++)
                MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, 0) == RMC_OK && x == first + i);
            for (int64_t i = 100; i < 104; i++)
                MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, 0) == RMC_OK && x == i);
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, 0) == RMC_ERR_EMPTY);
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_queue_destroy(q));
    }
}

/* The host's view of its queue (rmc_queue_local_peek / _discard): after a push phase the host
 * sees every element in place, in push order per pusher, as one run or two when the ring wraps;
 * discarding takes the first ones out and makes room; other kinds, types and ranks are refused. */
static void test_local_view(void **s)
{
    (void)s;
    enum { CAP = 10 };
    static const rmc_type_t str = RMC_TYPE_STRING(8);
    int host = np - 1, ok = 1;
    for (int k = 0; k < 2; k++) { /* FAST, CIRCULAR */
        rmc_queue_h q;
        MPI_CHECK_OK(rmc_queue_create(k ? RMC_QUEUE_CIRCULAR : RMC_QUEUE_FAST, host, CAP,
                                      &rmc_type_i64, &q));
        for (int round = 0; round < 2; round++) { /* the second round wraps around the ring */
            if (me == 0)
                for (int64_t i = 0; i < 7; i++) {
                    int64_t v = 100 * round + i;
                    MPITEST_EXPECT(ok, rmc_queue_push(q, &v, RMC_PROMISE_PUSH) == RMC_OK);
                }
            MPI_CHECK_OK(rmc_barrier());
            if (me == host) {
                const void *r1, *r2;
                size_t n1, n2;
                MPITEST_EXPECT(ok, rmc_queue_local_peek(q, &r1, &n1, &r2, &n2) == RMC_OK);
                MPITEST_EXPECT(ok, n1 + n2 == 7 && (round == 0 ? n2 == 0 : n2 == 4));
                for (size_t i = 0; i < n1 + n2 && ok; i++) {
                    int64_t v = i < n1 ? ((const int64_t *)r1)[i] : ((const int64_t *)r2)[i - n1];
                    MPITEST_EXPECT(ok, v == 100 * round + (int64_t)i);
                }
                MPITEST_EXPECT(ok, rmc_queue_local_discard(q, 8) == RMC_ERR_ARG);
                MPITEST_EXPECT(ok, rmc_queue_local_discard(q, SIZE_MAX) == RMC_ERR_ARG);
                MPITEST_EXPECT(ok, rmc_queue_local_discard(q, 2) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_local_peek(q, &r1, &n1, &r2, &n2) == RMC_OK);
                MPITEST_EXPECT(ok, n1 + n2 == 5 && ((const int64_t *)r1)[0] == 100 * round + 2);
                MPITEST_EXPECT(ok, rmc_queue_local_discard(q, 5) == RMC_OK);
                MPITEST_EXPECT(ok, rmc_queue_local_peek(q, &r1, &n1, &r2, &n2) == RMC_OK);
                MPITEST_EXPECT(ok, n1 + n2 == 0);
            } else {
                const void *r1, *r2;
                size_t n1, n2;
                MPITEST_EXPECT(ok, rmc_queue_local_peek(q, &r1, &n1, &r2, &n2) == RMC_ERR_ARG);
            }
            MPI_CHECK_OK(rmc_barrier());
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_queue_destroy(q));
    }
    rmc_queue_h c, t;
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_CHECKSUM, host, CAP, &rmc_type_i64, &c));
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_FAST, host, CAP, &str, &t));
    if (me == host) {
        const void *r1, *r2;
        size_t n1, n2;
        MPITEST_EXPECT(ok, rmc_queue_local_peek(c, &r1, &n1, &r2, &n2) == RMC_ERR_TYPE);
        MPITEST_EXPECT(ok, rmc_queue_local_peek(t, &r1, &n1, &r2, &n2) == RMC_ERR_TYPE);
        MPITEST_EXPECT(ok, rmc_queue_local_discard(t, 0) == RMC_ERR_TYPE);
        MPITEST_EXPECT(ok, rmc_queue_local_peek(c, NULL, &n1, &r2, &n2) != RMC_OK);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_queue_destroy(c));
    MPI_CHECK_OK(rmc_queue_destroy(t));
}

/* A non-blocking pop its rank does not wait for must still move. Rank 1 reserves on an empty queue
 * hosted by rank 0 first (its pop_nb), rank 2 reserves after it and goes straight into rmc_barrier
 * without testing its request; rank 1 waits for its own pop, which can only give up after the
 * later reservation (rank 2's) has been taken back. RMC's waits (rmc_barrier here) advance the
 * rank's outstanding custom requests, so both pops end with RMC_ERR_EMPTY instead of waiting for
 * each other. Needs 3 ranks and remote operations (np3.node1 runs: with node-local ones a pop
 * finishes inside its call). */
static void test_nb_untested(void **s)
{
    (void)s;
    if (np < 3) {
        MPI_CHECK_ALL(1);
        return;
    }
    rmc_queue_h q;
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_CIRCULAR, 0, 4, &rmc_type_i64, &q));
    int64_t x = 0;
    rmc_request_h r = RMC_REQUEST_NULL;
    rmc_status_t st = RMC_OK;
    if (me == 1)
        st = rmc_queue_pop_nb(q, &x, 0, &r); /* reserves first */
    MPI_Barrier(MPI_COMM_WORLD);             /* plain: rank 1's pop must not move on here */
    if (me == 2)
        st = rmc_queue_pop_nb(q, &x, 0, &r); /* reserves after rank 1 */
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1 && st == RMC_OK && r)
        st = rmc_wait(&r);
    rmc_status_t b = rmc_barrier(); /* rank 2 waits here without testing its pop */
    if (me == 2 && st == RMC_OK && r)
        st = rmc_wait(&r);
    MPI_CHECK_ALL(b == RMC_OK && (me == 0 || me > 2 || st == RMC_ERR_EMPTY));
    MPI_CHECK_OK(rmc_queue_destroy(q));
}

/* An _nb push and pop left untested are finished by the collectives that free or move the queue:
 * rmc_queue_destroy, resize and migrate wait for the rank's outstanding operations before their
 * barrier (they used to return with the operations still going, whose later steps landed in the
 * freed memory), so each request is complete at its first test afterwards; after a resize or a
 * migration the queue holds what they left. One-sided path forced (multi-step operations). */
static void test_nb_across_collectives(void **s)
{
    (void)s;
    for (int kind = 0; kind <= 2; kind += 2)
        for (int coll = 0; coll < 3; coll++) {
            rmc_queue_h q;
            MPI_CHECK_OK(rmc_queue_create(kind, 0, 4, &rmc_type_i64, &q));
            int64_t x = 10 + me, y = -1, z = 7;
            if (me == 0)
                MPI_CHECK_OK(rmc_queue_push(q, &z, 0));
            else
                MPI_CHECK_OK(RMC_OK);
            MPI_CHECK_OK(rmc_barrier());
            rmc_request_h rp = RMC_REQUEST_NULL, rq = RMC_REQUEST_NULL;
            rmc_status_t sp = RMC_OK, sq = RMC_OK;
            if (me == np - 1) {
                sp = rmc_queue_push_nb(q, &x, RMC_PATH_RDMA, &rp);
                sq = rmc_queue_pop_nb(q, &y, RMC_PATH_RDMA, &rq);
            }
            rmc_status_t c = coll == 0   ? rmc_queue_destroy(q)
                             : coll == 1 ? rmc_queue_resize(q, 8)
                                         : rmc_queue_migrate(q, np - 1);
            int dp = 1, dq = 1;
            if (sp == RMC_OK && rp)
                sp = rmc_test(&rp, &dp);
            if (sq == RMC_OK && rq)
                sq = rmc_test(&rq, &dq);
            int ok = c == RMC_OK && dp && dq && sp == RMC_OK &&
                     (me != np - 1 || (sq == RMC_OK ? y == 7 || y == x : sq == RMC_ERR_EMPTY));
            if (!dp)
                rmc_wait(&rp);
            if (!dq)
                rmc_wait(&rq);
            if (coll && me == np - 1) { /* what is left: both elements but the one popped */
                int64_t e;
                int left = 0;
                while (left < 4 && rmc_queue_pop(q, &e, 0) == RMC_OK)
                    left++;
                ok &= left + (sq == RMC_OK) == 2;
            }
            MPI_CHECK_ALL(ok);
            if (coll)
                MPI_CHECK_OK(rmc_queue_destroy(q));
        }
}

/* rmc_queue_pop_upto never says EMPTY while elements are queued, though pushes that do not fit
 * reserve slots and take them back meanwhile: rank 0 keeps trying a push of 4 into a queue of 4
 * that never has room; rank 1 pushes 2 of its own and pops up to 4, one-sided (a CHECKSUM queue's
 * pop counted the other push's reservation, failed its checksum, and took its own back with
 * EMPTY: 300-450 of 3000 rounds, RMC_NODE_SIZE=1). 500 rounds per kind, or at least 50 in 1 s. */
static void test_upto_phantom(void **s)
{
    (void)s;
    for (int kind = 0; kind <= 2; kind += 2) {
        rmc_queue_h q;
        MPI_CHECK_OK(rmc_queue_create(kind, 0, 4, &rmc_type_i64, &q));
        MPI_CHECK_OK(rmc_barrier());
        long wrong = 0;
        if (me == 0 && np > 1) {
            int stop = 0, flag = 0;
            int64_t v[4] = {-1, -1, -1, -1};
            MPI_Request rq;
            MPI_Irecv(&stop, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &rq);
            while (!flag) {
                rmc_status_t st = rmc_queue_push_n(q, v, 4, RMC_PATH_RDMA);
                wrong += st != RMC_ERR_FULL && st != RMC_OK;
                MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            }
        } else if (me == 1) {
            long mine = 0;
            double t0 = MPI_Wtime();
            for (int i = 0; more_rounds(i, 500, t0, 1.0); i++) {
                int64_t v[2] = {i, i}, out[4];
                size_t got = 0;
                if (rmc_queue_push_n(q, v, 2, RMC_PATH_RDMA) == RMC_OK)
                    mine += 2;
                rmc_status_t st = rmc_queue_pop_upto(q, out, 4, &got, RMC_PATH_RDMA);
                if (st == RMC_OK)
                    for (size_t j = 0; j < got; j++)
                        mine -= out[j] >= 0;
                wrong += st == RMC_ERR_EMPTY ? mine > 0 : st != RMC_OK;
            }
            int stop = 1;
            MPI_Send(&stop, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
            mpitest_bystanders_release(2);
        } else if (me > 1) {
            mpitest_bystander_wait(1);
        }
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_ALL(wrong == 0);
        MPI_CHECK_OK(rmc_queue_destroy(q));
    }
}

/* A push (pop) after one that failed reads both counters and reserves by compare-and-swap only
 * where it fits: a caller retrying on a full (empty) queue holds no reservation that would make
 * the others wait or fail. Costs one-sided, on a queue of 2 at the last rank: a failed retry 2 A
 * (the reads) and nothing else; the success after it 3 A (reads and compare-and-swap) + the
 * move + the mark; the operation after a success reserves by fetch-and-add again. Before, every
 * retry cost 5 A (fetch-and-add, bound, rollback, two reads), and the success after it 2 A
 * (fetch-and-add, bound) + the move + the mark: one atomic fewer than now. */
static void test_costs_after_failure(void **s)
{
    (void)s;
    for (int k = 0; k < 3; k++) {
        rmc_queue_h q;
        MPI_CHECK_OK(rmc_queue_create(kinds[k], np - 1, 2, &rmc_type_i64, &q));
        int ok = 1;
        if (me == 0) {
            const unsigned R = RMC_PATH_RDMA;
            int mark_push = kinds[k] == RMC_QUEUE_CIRCULAR, mark_pop = kinds[k] != RMC_QUEUE_FAST;
            int64_t v[2] = {5, 6}, x = 0;
            rmc_op_counts_t c[8];
            rmc_op_counts_enable(1);
            /* pushes: room for 2; then a failure, a retry, a pop, the success after, one more */
            MPITEST_EXPECT(ok, rmc_queue_push_n(q, v, 2, R) == RMC_OK);
            MPITEST_EXPECT(ok, rmc_queue_push(q, v, R) == RMC_ERR_FULL);
            rmc_op_counts_enable(1);
            MPITEST_EXPECT(ok, rmc_queue_push(q, v, R) == RMC_ERR_FULL);
            rmc_op_counts(&c[0]);
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, R) == RMC_OK && x == 5);
            rmc_op_counts_enable(1);
            MPITEST_EXPECT(ok, rmc_queue_push(q, &v[0], R) == RMC_OK);
            rmc_op_counts(&c[1]);
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, R) == RMC_OK && x == 6);
            rmc_op_counts_enable(1);
            MPITEST_EXPECT(ok, rmc_queue_push(q, &v[1], R) == RMC_OK);
            rmc_op_counts(&c[2]);
            /* pops: 2 queued; take them, then a failure, a retry, a push, the success after */
            MPITEST_EXPECT(ok, rmc_queue_pop_n(q, v, 2, R) == RMC_OK && v[0] == 5 && v[1] == 6);
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, R) == RMC_ERR_EMPTY);
            rmc_op_counts_enable(1);
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, R) == RMC_ERR_EMPTY);
            rmc_op_counts(&c[3]);
            MPITEST_EXPECT(ok, rmc_queue_push(q, &v[0], R) == RMC_OK);
            rmc_op_counts_enable(1);
            MPITEST_EXPECT(ok, rmc_queue_pop(q, &x, R) == RMC_OK && x == 5);
            rmc_op_counts(&c[4]);
            rmc_op_counts_enable(0);
            MPITEST_EXPECT(ok, c[0].atomics == 2 && c[0].writes == 0 && c[0].reads == 0);
            MPITEST_EXPECT(ok, (int)c[1].atomics == 3 + mark_push && c[1].writes == 1 &&
                                   c[1].reads == 0);
            /* the fetch-and-add, the bound (the pop moved it since) and the mark */
            MPITEST_EXPECT(ok, (int)c[2].atomics == 2 + mark_push && c[2].writes == 1);
            MPITEST_EXPECT(ok, c[3].atomics == 2 && c[3].writes == 0 && c[3].reads == 0);
            MPITEST_EXPECT(ok, (int)c[4].atomics == 3 + mark_pop && c[4].reads == 1 &&
                                   c[4].writes == 0);
            if (!ok)
                for (int i = 0; i < 5; i++)
                    fprintf(stderr, "[rank 0] %s queue, count %d: %llu A %llu W %llu R\n", kname[k],
                            i, c[i].atomics, c[i].writes, c[i].reads);
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_queue_destroy(q));
    }
}

/* An RPC push (pop) that fits does not fail for a one-sided reservation before it that cannot fit
 * (thread AMO mode: the RPC path): rank 0 starts a non-blocking push of 4 into rank 1's queue of 4
 * that holds one (then a pop of 4 from a queue holding 1), and computes 100 ms before it tests the
 * request; rank 1 pushes (pops) one by RPC meanwhile. The host answers "retry" while the last
 * reservation does not fit; the origin's one-sided attempt then waits for it to be taken back.
 * Before, the host answered FULL (EMPTY) at once for every queue kind whose RPC does not wait for
 * the marks (FAST; CIRCULAR and CHECKSUM under the unordered-mark promises; CHECKSUM pushes). */
static void test_rpc_behind_doomed(void **s)
{
    (void)s;
    if (rmc_amo_mode() != RMC_AMO_MODE_THREAD || np < 2)
        return;
    int bad = 0;
    for (int c = 0; c < 6; c++) {
        int k = c % 3, pops = c >= 3;
        unsigned promise = pops ? RMC_PROMISE_POP : RMC_PROMISE_PUSH;
        rmc_queue_h q;
        MPI_CHECK_OK(rmc_queue_create(kinds[k], 1, 4, &rmc_type_i64, &q));
        int64_t v[4] = {1, 2, 3, 4}, one = 9;
        long wrong = 0;
        if (me == 1)
            wrong += rmc_queue_push(q, &one, RMC_PATH_RDMA | promise) != RMC_OK;
        MPI_CHECK_OK(rmc_barrier());
        if (me == 0) {
            rmc_request_h r = RMC_REQUEST_NULL;
            rmc_status_t st = pops ? rmc_queue_pop_n_nb(q, v, 4, RMC_PATH_RDMA | promise, &r)
                                   : rmc_queue_push_n_nb(q, v, 4, RMC_PATH_RDMA | promise, &r);
            wrong += st != RMC_OK;
            int go = 1;
            MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
            for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.1;) /* no RMC call: held */
                ;
            wrong += rmc_wait(&r) != (pops ? RMC_ERR_EMPTY : RMC_ERR_FULL);
        } else if (me == 1) {
            int go = 0;
            size_t n = 0;
            MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* until rank 0's reservation is in (a push's: 5 slots taken; a pop's cannot be
             * seen, HEAD beyond TAIL reads as size 0: 50 ms, served meanwhile). On one node
             * rank 0's atomics are its own CPU's: its reservation was made, found not to fit and
             * taken back before it sent `go`; nothing is in flight to wait for. */
            double limit = rmc_same_node(0) ? 0 : pops ? 0.05 : 5;
            for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < limit;) {
                rmc_progress();
                if (!pops && rmc_queue_size(q, &n) == RMC_OK && n == 5)
                    break;
            }
            rmc_status_t st = pops ? rmc_queue_pop(q, &one, RMC_PATH_RPC | promise)
                                   : rmc_queue_push(q, &one, RMC_PATH_RPC | promise);
            wrong += st != RMC_OK;
            if (st != RMC_OK)
                fprintf(stderr,
                        "[rank 1] %s queue, RPC %s behind a reservation that does not "
                        "fit: %s\n",
                        kname[k], pops ? "pop" : "push", rmc_status_string(st));
        }
        MPI_CHECK_OK(rmc_barrier());
        bad += wrong != 0;
        MPI_CHECK_OK(rmc_queue_destroy(q));
    }
    MPI_CHECK_ALL(bad == 0);
}

/* A push (pop) that fits succeeds though a bigger one that can never fit keeps being tried: rank
 * 0 retries a push of 4 into a queue of 4 that always holds an element (then a pop of 4 from it)
 * without any pause; rank 1 pushes one and pops one, one-sided, and is never told FULL or EMPTY.
 * After its first failure, rank 0's attempts read the counters and reserve nothing (a
 * compare-and-swap only where it fits); its first one makes rank 1 wait, not fail. Before, every
 * attempt reserved and took its reservation back: 122-851 of 1000 rounds failed per case; then,
 * with rank 1 waiting behind such reservations, 0-8 with rank 0 pausing 20 us between attempts and
 * 8-48 without. (1000 rounds, or at least 50 and as many as fit in 1 s: more_rounds.) */
static void test_push_behind_doomed(void **s)
{
    (void)s;
    int bad = 0;
    /* CIRCULAR, CHECKSUM; rank 0 pushes 4, then pops 4 (rank 1: pop, then pop_upto) */
    for (int c = 0; c < 6; c++) {
        rmc_queue_kind_t kind = c % 2 ? RMC_QUEUE_CHECKSUM : RMC_QUEUE_CIRCULAR;
        int pops = c >= 2, upto = c >= 4;
        rmc_queue_h q;
        MPI_CHECK_OK(rmc_queue_create(kind, 0, 4, &rmc_type_i64, &q));
        int64_t one = -7;
        long wrong = 0, failed = 0;
        if (me == 0)
            wrong += rmc_queue_push(q, &one, RMC_PATH_RDMA) != RMC_OK;
        MPI_CHECK_OK(rmc_barrier());
        if (me == 0 && np > 1) {
            int stop = 0, flag = 0;
            int64_t v[4] = {-1, -1, -1, -1};
            MPI_Request rq;
            MPI_Irecv(&stop, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &rq);
            while (!flag) { /* never fits: 1 or 2 elements are queued */
                rmc_status_t st = pops ? rmc_queue_pop_n(q, v, 4, RMC_PATH_RDMA)
                                       : rmc_queue_push_n(q, v, 4, RMC_PATH_RDMA);
                wrong += st != (pops ? RMC_ERR_EMPTY : RMC_ERR_FULL);
                MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
            }
        } else if (me == 1) {
            int64_t prev = -7; /* the queue always holds one element: the last one pushed */
            double t0 = MPI_Wtime();
            int i;
            for (i = 0; more_rounds(i, 1000, t0, 1.0); i++) {
                int64_t v = i, out = -1;
                rmc_status_t st = rmc_queue_push(q, &v, RMC_PATH_RDMA);
                failed += st != RMC_OK;
                if (st == RMC_OK) {
                    /* a pop that failed is made again: one element stays queued */
                    size_t got = 0;
                    for (int t = 0; t < 100 && (st != RMC_OK || got != 1); t++) {
                        got = 1;
                        st = upto ? rmc_queue_pop_upto(q, &out, 1, &got, RMC_PATH_RDMA)
                                  : rmc_queue_pop(q, &out, RMC_PATH_RDMA);
                        failed += st != RMC_OK || got != 1;
                    }
                    wrong += st != RMC_OK || got != 1 || out != prev;
                    prev = v;
                }
            }
            int stop = 1;
            MPI_Send(&stop, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
            mpitest_bystanders_release(2);
            if (failed)
                fprintf(stderr, "[rank 1] kind %d, rank 0 %s%s: %ld of %d rounds failed\n",
                        (int)kind, pops ? "pops" : "pushes", upto ? " (pop_upto)" : "", failed, i);
        } else if (me > 1) {
            mpitest_bystander_wait(1);
        }
        MPI_CHECK_OK(rmc_barrier());
        bad += wrong != 0 || failed != 0;
        MPI_CHECK_OK(rmc_queue_destroy(q));
    }
    MPI_CHECK_ALL(bad == 0);
}

/* Bad input to every queue call: a clear status, the queue unchanged (still empty, still usable);
 * a collective with a bad argument fails on every rank and creates or changes nothing. */
static void test_bad_input(void **s)
{
    (void)s;
    static const rmc_type_t bad = {"no-size", 0, 0, NULL, NULL, NULL, NULL, NULL};
    rmc_queue_h q = NULL, x;
    MPI_CHECK_ALL(rmc_queue_create(RMC_QUEUE_FAST, 0, 0, &rmc_type_i64, &x) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_queue_create((rmc_queue_kind_t)7, 0, 4, &rmc_type_i64, &x) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_queue_create(RMC_QUEUE_FAST, np, 4, &rmc_type_i64, &x) == RMC_ERR_RANK);
    MPI_CHECK_ALL(rmc_queue_create(RMC_QUEUE_FAST, 0, 4, &bad, &x) == RMC_ERR_TYPE && x == NULL);
    MPI_CHECK_ALL(rmc_queue_create(RMC_QUEUE_FAST, 0, 4, &rmc_type_i64, NULL) == RMC_ERR_ARG);
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_CIRCULAR, np - 1, 4, &rmc_type_i64, &q));
    int ok = 1;
    int64_t v[5] = {1, 2, 3, 4, 5};
    size_t got = 9, n = 9;
    rmc_request_h r = (rmc_request_h)&ok;
    MPITEST_EXPECT(ok, rmc_queue_push(q, NULL, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_push_n(q, v, 0, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_push_n(q, v, 5, 0) == RMC_ERR_TOO_BIG);
    MPITEST_EXPECT(ok, rmc_queue_push(q, v, RMC_PROMISE_FIND) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, me == np - 1 || rmc_queue_push(q, v, RMC_PROMISE_LOCAL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_pop(q, NULL, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_pop_upto(q, v, 4, NULL, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_pop_upto(q, v, 0, &got, 0) == RMC_ERR_ARG && got == 0);
    MPITEST_EXPECT(ok, rmc_queue_push_nb(q, v, 0, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_pop_n_nb(q, v, 5, 0, &r) == RMC_ERR_TOO_BIG && r == NULL);
    MPITEST_EXPECT(ok, rmc_queue_size(q, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_push(NULL, v, 0) == RMC_ERR_HANDLE);
    MPITEST_EXPECT(ok, rmc_queue_host(NULL) == -1 && rmc_queue_capacity(NULL) == 0);
    /* paths: both at once, RPC with the host's loads and stores, RPC without thread AMO mode,
     * defaults */
    const unsigned RR = RMC_PATH_RDMA | RMC_PATH_RPC;
    int thr = rmc_amo_mode() == RMC_AMO_MODE_THREAD;
    MPITEST_EXPECT(ok, rmc_queue_push(q, v, RR) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_pop_upto(q, v, 2, &got, RR) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, me != np - 1 ||
                           rmc_queue_push(q, v, RMC_PROMISE_LOCAL | RMC_PATH_RPC) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_set_path(q, RR) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_set_path(q, 5) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_queue_set_path(NULL, 0) == RMC_ERR_HANDLE);
    MPITEST_EXPECT(ok, rmc_queue_set_path(q, RMC_PATH_RPC) == (thr ? RMC_OK : RMC_ERR_UNSUPPORTED));
    MPITEST_EXPECT(ok, thr || rmc_queue_pop(q, v, RMC_PATH_RPC) == RMC_ERR_UNSUPPORTED);
    MPITEST_EXPECT(ok, rmc_queue_set_path(q, RMC_PATH_RDMA) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_queue_set_path(q, 0) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_queue_size(q, &n) == RMC_OK && n == 0); /* nothing was taken */
    MPI_CHECK_ALL(ok);
    if (thr) { /* an operation forced to RPC whose elements do not fit in an active message */
        size_t big = rmc_am_max_payload() / 8 + 1;
        rmc_queue_h b;
        int64_t *e = calloc(big, 8);
        MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_CIRCULAR, np - 1, big, &rmc_type_i64, &b));
        MPITEST_EXPECT(ok, e && rmc_queue_push_n(b, e, big, RMC_PATH_RPC) == RMC_ERR_TOO_BIG);
        MPITEST_EXPECT(ok,
                       e && rmc_queue_pop_upto(b, e, big, &got, RMC_PATH_RPC) == RMC_ERR_TOO_BIG);
        /* chosen: such an operation goes one-sided */
        MPITEST_EXPECT(ok, me != 0 || rmc_queue_push_n(b, e, big, 0) == RMC_OK);
        MPITEST_EXPECT(ok, me != 0 || rmc_queue_pop_n(b, e, big, 0) == RMC_OK);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_queue_destroy(b));
        free(e);
    }
    { /* capacities whose slots overflow size_t (RMC_ERR_TOO_BIG naming capacity and slot, no
       * queue, nothing changed): 1099511103490 slots of 2^24 + 8 bytes wrapped to a 29 MB ring
       * the operations overran, 2^40 of 2^24 to 0 ("the segment is full"); a CHECKSUM queue's
       * slot has its checksum too; a resize is checked the same way */
        static const rmc_type_t s8 = RMC_TYPE_STRING(((size_t)1 << 24) + 4),
                                s0 = RMC_TYPE_STRING(((size_t)1 << 24) - 4);
        const size_t wrap = 1099511103490ull, p40 = (size_t)1 << 40;
        struct {
            rmc_queue_kind_t kind;
            size_t cap;
            const rmc_type_t *t;
            size_t slot;
        } c[3] = {{RMC_QUEUE_FAST, wrap, &s8, ((size_t)1 << 24) + 8},
                  {RMC_QUEUE_CIRCULAR, p40, &s0, (size_t)1 << 24},
                  {RMC_QUEUE_CHECKSUM, wrap, &s0, ((size_t)1 << 24) + 8}};
        for (int i = 0; i < 4; i++) {
            rmc_queue_h big = NULL;
            rmc_status_t st;
            size_t cap = 1;
            int j = i < 3 ? i : 0;
            char msg[512], want[80];
            if (i < 3) {
                st = rmc_queue_create(c[i].kind, np - 1, c[i].cap, c[i].t, &big);
                snprintf(msg, sizeof msg, "%s", rmc_last_error());
            } else { /* a 1-slot queue of 2^24 + 8-byte slots resized */
                MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_FAST, np - 1, 1, &s8, &big));
                st = rmc_queue_resize(big, wrap);
                snprintf(msg, sizeof msg, "%s", rmc_last_error());
                cap = rmc_queue_capacity(big);
                MPI_CHECK_OK(rmc_queue_destroy(big));
                big = NULL;
            }
            snprintf(want, sizeof want, "capacity %zu x %zu-byte slots", c[j].cap, c[j].slot);
            int good = st == RMC_ERR_TOO_BIG && big == NULL && cap == 1 && strstr(msg, want) &&
                       strstr(msg, "overflows");
            if (!good)
                fprintf(stderr, "[rank %d] case %d: %s (%s)\n", me, i, rmc_status_string(st), msg);
            if (big) /* the old code made it: do not overrun it */
                rmc_queue_destroy(big);
            MPI_CHECK_ALL(good);
        }
    }
    MPI_CHECK_ALL(rmc_queue_resize(q, 0) == RMC_ERR_ARG && rmc_queue_capacity(q) == 4);
    MPI_CHECK_ALL(rmc_queue_migrate(q, np) == RMC_ERR_RANK && rmc_queue_host(q) == np - 1);
    if (me == 0) {
        int64_t w;
        MPITEST_EXPECT(ok, rmc_queue_push(q, &v[2], 0) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_queue_pop(q, &w, 0) == RMC_OK && w == 3);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_queue_destroy(q));
}

MPITEST_MAIN("queue", cttest_setup, mpitest_teardown_rmc, test_order_full_empty, test_fast_solo,
             test_contention_circular, test_contention_checksum, test_contention_push_pop_promise,
             test_contention_paths_circular, test_contention_paths_checksum, test_phases,
             test_costs, test_strings, test_nb, test_resize_migrate, test_local_view,
             test_nb_untested, test_nb_across_collectives, test_upto_phantom,
             test_costs_after_failure, test_rpc_behind_doomed, test_push_behind_doomed,
             test_bad_input)
