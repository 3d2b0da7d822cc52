/* Remote atomics: every operation, all ranks on one word and on many words, blocking and
 * non-blocking, in every AMO mode / progress-thread configuration (amotest_cfgs); bad input. */
#include <time.h>
#include "test_amo_util.h"

#define WORDS 8 /* words per rank in the "many locations" tests (4 above 2 ranks) */

typedef struct layout {
    rmc_region_h r;
    void **b; /* per-rank base */
} layout_t;

static void alloc_region(layout_t *l, size_t bytes)
{
    l->b = calloc((size_t)mpitest_nranks_, sizeof(void *));
    MPI_CHECK_OK(rmc_region_alloc(bytes, l->b, &l->r));
}

static void free_region(layout_t *l)
{
    MPI_CHECK_OK(rmc_region_free(l->r));
    free(l->b);
}

static int64_t *w64(layout_t *l, int rank, int i)
{
    return (int64_t *)l->b[rank] + i;
}

/* All ranks fetch-and-add 1 on one word (hosted by each rank in turn): tickets are a permutation
 * and the final value exact; then the same with int32. */
static void hammer_one(void)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int k = amotest_iters(300);
    layout_t l;
    alloc_region(&l, 64);
    int64_t *tickets = malloc((size_t)k * sizeof(int64_t));
    for (int host = 0; host < n; host++) {
        MPI_CHECK_OK(rmc_barrier());
        rmc_status_t st = RMC_OK;
        for (int i = 0; i < k && st == RMC_OK; i++)
            st = rmc_amo_fetch_add_i64(w64(&l, host, 0), 1, &tickets[i], host);
        /* int32 word next to it, counting down */
        int32_t f32 = 0, prev = INT32_MAX;
        int mono = 1;
        for (int i = 0; i < k && st == RMC_OK; i++) {
            st = rmc_amo_fetch_add_i32((int32_t *)l.b[host] + 2, -1, &f32, host);
            if (f32 >= prev) /* this rank's own fetches strictly decrease */
                mono = 0;
            prev = f32;
        }
        /* without a progress thread, peers are served only inside RMC calls: leave the
         * communication phase through rmc_barrier before any plain MPI collective (the checks) */
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(st);
        MPI_CHECK_ALL(mono);
        MPI_CHECK_ALL(amotest_is_permutation(tickets, k));
        int64_t fin = -1;
        int32_t fin32 = 0;
        st = rmc_amo_load_i64(w64(&l, host, 0), &fin, host);
        st = rmc_amo_load_i32((int32_t *)l.b[host] + 2, &fin32, host);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(st);
        MPI_CHECK_ALL(fin == (int64_t)k * n);
        MPI_CHECK_ALL(fin32 == -k * n);
        if (me == host)
            MPI_CHECK_ALL(*w64(&l, host, 0) == (int64_t)k * n);
        else
            MPI_CHECK_ALL(1);
    }
    free(tickets);
    free_region(&l);
}

/* Every rank applies every operation to every word of every rank. */
static void many_locations(void)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    layout_t l;
    /* per rank: WORDS blocks of 8 int64: [0] add, [1] or, [2] and, [3] xor, [4] swap, [5] cas
     * counter, [6] cas claim, [7] int32 pair (add_i32 in low, xor_u32 in high) */
    alloc_region(&l, WORDS * 64);
    for (int w = 0; w < WORDS; w++) {
        *w64(&l, me, w * 8 + 2) = -1; /* and: all ones */
        *w64(&l, me, w * 8 + 6) = -1; /* cas claim: free */
    }
    MPI_CHECK_OK(rmc_barrier());
    int kc = amotest_iters(12);
    int64_t *swapped = calloc((size_t)n * WORDS, sizeof(int64_t));
    int64_t *claims = calloc((size_t)n * WORDS, sizeof(int64_t));
    rmc_status_t st = RMC_OK;
    int ok = 1;
    int words = n <= 2 ? WORDS : WORDS / 2;
    for (int t0 = 0; t0 < n && st == RMC_OK; t0++) {
        int t = (t0 + me) % n; /* spread the load */
        for (int w = 0; w < words && st == RMC_OK; w++) {
            int64_t *blk = w64(&l, t, w * 8);
            int64_t f;
            uint64_t fu;
            uint32_t fu32;
            int32_t f32;
            if ((st = rmc_amo_add_i64(&blk[0], me + 1, t)) != RMC_OK)
                break;
            if ((st = rmc_amo_fetch_or_u64(&blk[1], 1ull << (me + 32), &fu, t)) != RMC_OK)
                break;
            ok &= !(fu & (1ull << (me + 32)));
            if ((st = rmc_amo_fetch_and_u64(&blk[2], ~(1ull << me), &fu, t)) != RMC_OK)
                break;
            ok &= (fu & (1ull << me)) != 0;
            if ((st = rmc_amo_fetch_xor_u64(&blk[3], 3ull << (2 * me), &fu, t)) != RMC_OK)
                break;
            ok &= !(fu & (3ull << (2 * me))); /* its own bits were clear */
            /* a shared mask, twice: it cancels (an OR would leave it; disjoint bits alone cannot
             * tell XOR from OR) */
            for (int k = 0; k < 2 && st == RMC_OK; k++)
                st = rmc_amo_fetch_xor_u64(&blk[3], 0xA5A5A5A5A5A50000ull, &fu, t);
            if (st != RMC_OK)
                break;
            if ((st = rmc_amo_swap_i64(&blk[4], me + 1, &swapped[t * WORDS + w], t)) != RMC_OK)
                break;
            for (int i = 0; i < kc && st == RMC_OK; i++) { /* increment by CAS loop */
                int64_t cur;
                st = rmc_amo_load_i64(&blk[5], &cur, t);
                while (st == RMC_OK) {
                    st = rmc_amo_cas_i64(&blk[5], cur, cur + 1, &f, t);
                    if (f == cur)
                        break;
                    cur = f;
                }
            }
            if (st != RMC_OK)
                break;
            if ((st = rmc_amo_cas_i64(&blk[6], -1, me, &claims[t * WORDS + w], t)) != RMC_OK)
                break;
            int32_t *p32 = (int32_t *)&blk[7];
            if ((st = rmc_amo_add_i32(&p32[0], 2 * (me + 1), t)) != RMC_OK)
                break;
            if ((st = rmc_amo_fetch_xor_u32((uint32_t *)&p32[1], 1u << me, &fu32, t)) != RMC_OK)
                break;
            ok &= !(fu32 & (1u << me));
            if ((st = rmc_amo_fetch_add_i32(&p32[0], 0, &f32, t)) != RMC_OK)
                break;
            ok &= f32 >= 2 * (me + 1);
        }
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    /* the host checks its words */
    int64_t sum = (int64_t)n * (n + 1) / 2;
    uint64_t ormask = 0, andmask = ~0ull, xormask = 0;
    uint32_t xor32 = 0;
    for (int r = 0; r < n; r++) {
        ormask |= 1ull << (r + 32);
        andmask &= ~(1ull << r);
        xormask ^= 3ull << (2 * r);
        xor32 ^= 1u << r;
    }
    ok = 1;
    for (int w = 0; w < words; w++) {
        int64_t *blk = w64(&l, me, w * 8);
        ok &= blk[0] == sum;
        ok &= (uint64_t)blk[1] == ormask;
        ok &= (uint64_t)blk[2] == andmask;
        ok &= (uint64_t)blk[3] == xormask;
        ok &= blk[5] == (int64_t)kc * n;
        ok &= blk[6] >= 0 && blk[6] < n;
        int32_t *p32 = (int32_t *)&blk[7];
        ok &= p32[0] == 2 * (int32_t)sum;
        ok &= (uint32_t)p32[1] == xor32;
    }
    MPI_CHECK_ALL(ok);
    /* swap chains: per word, the fetched values of all ranks plus the final value are {0, 1..n};
     * cas claims: exactly one rank saw -1, and it is the recorded winner */
    int64_t *allsw = malloc((size_t)n * n * WORDS * sizeof(int64_t));
    int64_t *allcl = malloc((size_t)n * n * WORDS * sizeof(int64_t));
    MPI_Allgather(swapped, n * WORDS, MPI_INT64_T, allsw, n * WORDS, MPI_INT64_T, MPI_COMM_WORLD);
    MPI_Allgather(claims, n * WORDS, MPI_INT64_T, allcl, n * WORDS, MPI_INT64_T, MPI_COMM_WORLD);
    ok = 1;
    for (int w = 0; w < words; w++) {
        int64_t *blk = w64(&l, me, w * 8);
        int cnt[64] = {0};
        cnt[blk[4]]++;
        int winners = 0, winner = -1;
        for (int r = 0; r < n; r++) {
            int64_t v = allsw[(size_t)r * n * WORDS + me * WORDS + w];
            if (v < 0 || v > n)
                ok = 0;
            else
                cnt[v]++;
            if (allcl[(size_t)r * n * WORDS + me * WORDS + w] == -1) {
                winners++;
                winner = r;
            }
        }
        for (int v = 0; v <= n; v++)
            ok &= cnt[v] == 1;
        ok &= winners == 1 && blk[6] == winner;
    }
    MPI_CHECK_ALL(ok);
    free(allsw);
    free(allcl);
    free(swapped);
    free(claims);
    free_region(&l);
}

/* Non-blocking: many fetch-adds in flight from every rank to every rank, tickets per host form a
 * permutation; non-blocking cas / swap / add complete with the right results. */
static void nonblocking(void)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int k = amotest_iters(96);
    layout_t l;
    alloc_region(&l, 64);
    int64_t *t = malloc((size_t)k * n * sizeof(int64_t));
    rmc_request_h *rq = calloc((size_t)k * n, sizeof(rmc_request_h));
    rmc_status_t st = RMC_OK;
    for (int i = 0; i < k && st == RMC_OK; i++)
        for (int h = 0; h < n && st == RMC_OK; h++)
            st = rmc_amo_fetch_add_i64_nb(w64(&l, h, 0), 1, &t[h * k + i], h, &rq[h * k + i]);
    rmc_status_t sw = rmc_wait_all(rq, (size_t)k * n);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_OK(sw);
    for (int h = 0; h < n; h++)
        MPI_CHECK_ALL(amotest_is_permutation(&t[h * k], k));
    MPI_CHECK_ALL(*w64(&l, me, 0) == (int64_t)k * n);
    /* other non-blocking forms to the right neighbour */
    int right = (me + 1) % n;
    int64_t f1 = 7, f2 = 7;
    int32_t f3 = 7;
    uint32_t f4 = 7;
    rmc_request_h q[5];
    rmc_status_t s5[5];
    s5[0] = rmc_amo_swap_i64_nb(w64(&l, right, 1), 100 + me, &f1, right, &q[0]);
    s5[1] = rmc_amo_cas_i64_nb(w64(&l, right, 2), 0, 200 + me, &f2, right, &q[1]);
    s5[2] = rmc_amo_cas_i32_nb((int32_t *)w64(&l, right, 3), 5, 9, &f3, right, &q[2]);
    s5[3] = rmc_amo_fetch_or_u32_nb((uint32_t *)w64(&l, right, 4), 0x10, &f4, right, &q[3]);
    s5[4] = rmc_amo_add_i64_nb(w64(&l, right, 5), 42, right, &q[4]);
    int done = 0;
    rmc_status_t stt = RMC_OK;
    for (int spins = 0; !done && stt == RMC_OK && spins < 10000000; spins++)
        stt = rmc_test(&q[0], &done); /* rmc_test keeps serving peers */
    sw = rmc_wait_all(&q[1], 4);
    MPI_CHECK_OK(rmc_barrier());
    for (int i = 0; i < 5; i++)
        MPI_CHECK_OK(s5[i]);
    MPI_CHECK_OK(stt);
    MPI_CHECK_OK(sw);
    MPI_CHECK_ALL(done && q[0] == RMC_REQUEST_NULL);
    MPI_CHECK_ALL(f1 == 0 && f2 == 0 && f3 == 0 && f4 == 0);
    int left = (me + n - 1) % n;
    MPI_CHECK_ALL(*w64(&l, me, 1) == 100 + left && *w64(&l, me, 2) == 200 + left);
    MPI_CHECK_ALL(*(int32_t *)w64(&l, me, 3) == 0 && *(uint32_t *)w64(&l, me, 4) == 0x10);
    MPI_CHECK_ALL(*w64(&l, me, 5) == 42);
    free(t);
    free(rq);
    free_region(&l);
}

/* One configuration: all ranks on one word, on many words, non-blocking. */
static void run_cfg(int i)
{
    double t0 = MPI_Wtime();
    amotest_init(&amotest_cfgs[i]);
    double t1 = MPI_Wtime();
    hammer_one();
    double t2 = MPI_Wtime();
    many_locations();
    double t3 = MPI_Wtime();
    nonblocking();
    double t4 = MPI_Wtime();
    amotest_done();
    if (getenv("RMC_TEST_TIMING") && mpitest_rank_ == 0)
        fprintf(stderr, "cfg %s/%s: init %.2f hammer %.2f many %.2f nb %.2f fin %.2f s\n",
                amotest_cfgs[i].amo, amotest_cfgs[i].thread, t1 - t0, t2 - t1, t3 - t2, t4 - t3,
                MPI_Wtime() - t4);
}

static void test_mpi_nothread(void **state)
{
    (void)state;
    run_cfg(0);
}

static void test_thread_nothread(void **state)
{
    (void)state;
    run_cfg(1);
}

static void test_thread_thread(void **state)
{
    (void)state;
    run_cfg(2);
}

static void test_mpi_thread(void **state)
{
    (void)state;
    if (mpitest_nranks_ <= 2) /* MPI atomics + thread: 2-rank runs only (both node modes) */
        run_cfg(3);
}

/* A region is known to the target's progress thread as soon as rmc_region_alloc returns anywhere:
 * rank 0 stays out of RMC for 100 ms after the allocation, and the other ranks' atomics on its part
 * are served by its thread meanwhile, none deferred to its main thread. */
static void test_fresh_region(void **state)
{
    (void)state;
    amotest_init(&amotest_cfgs[2]); /* thread mode, progress thread */
    int n = mpitest_nranks_, me = mpitest_rank_;
    rmc_progress_stats_t s0, s1;
    MPI_CHECK_OK(rmc_progress_stats(&s0));
    layout_t l;
    l.b = calloc((size_t)n, sizeof(void *));
    rmc_status_t sa = rmc_region_alloc(64, l.b, &l.r); /* no MPI check here: rank 0 must not poll */
    rmc_status_t st = RMC_OK;
    int64_t f = -1;
    double took = 0;
    if (me == 0) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    } else if (sa == RMC_OK) {
        double t0 = MPI_Wtime();
        st = rmc_amo_fetch_add_i64(l.b[0], 1, &f, 0);
        took = MPI_Wtime() - t0;
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(sa);
    MPI_CHECK_OK(st);
    MPI_CHECK_OK(rmc_progress_stats(&s1));
    MPI_CHECK_ALL(me != 0 || *w64(&l, 0, 0) == n - 1);
    MPI_CHECK_ALL(me != 0 || s1.am_deferred == s0.am_deferred);
    /* each atomic took far less than rank 0's sleep (served by its thread, not at its next call) */
    MPI_CHECK_ALL(took < 0.05);
    free_region(&l);
    amotest_done();
}

/* Thread mode names regions by id in its active messages: ids must agree on all members although
 * only some ranks create a sub-communicator region. The odd ranks create one (twice), then every
 * rank creates a world region and fetch-adds on its right neighbour's part of it, and the odd ranks
 * on their group region. */
static void test_subgroup_ids(void **state)
{
    (void)state;
    amotest_init(&amotest_cfgs[2]); /* thread mode, progress thread */
    int n = mpitest_nranks_, me = mpitest_rank_;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    void **sb = calloc((size_t)n, sizeof(void *));
    rmc_region_h s1 = NULL, s2 = NULL;
    rmc_status_t sg = RMC_OK; /* group calls: checked by everybody below */
    if (me % 2) {
        sg = rmc_region_alloc_comm(half, 64, sb, &s1);
        if (sg == RMC_OK)
            sg = rmc_region_free(s1);
        if (sg == RMC_OK)
            sg = rmc_region_alloc_comm(half, 64, sb, &s2);
    }
    MPI_CHECK_OK(sg);
    layout_t l;
    alloc_region(&l, 64);
    int right = (me + 1) % n, k = amotest_iters(50);
    int64_t f = -1;
    rmc_status_t st = RMC_OK;
    for (int i = 0; i < k && st == RMC_OK; i++)
        st = rmc_amo_fetch_add_i64(w64(&l, right, 0), 1, &f, right);
    int odd_right = -1;
    for (int r = me + 1; me % 2 && r <= me + n && odd_right < 0; r++) /* next odd rank, cyclic */
        if (r % n % 2 == 1)
            odd_right = r % n;
    if (me % 2 && st == RMC_OK && odd_right >= 0)
        st = rmc_amo_fetch_add_i64(sb[odd_right], 1, &f, odd_right);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(*w64(&l, me, 0) == k);
    MPI_CHECK_ALL(me % 2 == 0 || *(int64_t *)sb[me] == 1);
    free_region(&l);
    sg = s2 ? rmc_region_free(s2) : RMC_OK;
    MPI_CHECK_OK(sg);
    MPI_Comm_free(&half);
    free(sb);
    amotest_done();
}

/* Flushes between two snapshots, plus the fetching atomics completed by a yielding wait instead of
 * their own flush (ranks outnumber processing units). */
static unsigned long long completions(const rmc_comm_stats_t *a, const rmc_comm_stats_t *b)
{
    return b->flushes - a->flushes + b->yielding_waits - a->yielding_waits;
}

/* MPI mode, remote word: windows have accumulate_ordering none, so an atomic that does not commute
 * with additions (swap, CAS, bitwise) must wait for outstanding accumulates, and everything must
 * wait for it; additions need not wait for each other. Checked by the values and the flush count.
 */
static void test_mpi_ordering(void **state)
{
    (void)state;
    amotest_init(&amotest_cfgs[0]); /* MPI atomics, no thread */
    int n = mpitest_nranks_, me = mpitest_rank_;
    int peer = (me + 1) % n;
    layout_t l;
    alloc_region(&l, 64);
    int64_t *w = w64(&l, peer, me % 4); /* my word on my right neighbour (distinct per origin) */
    rmc_status_t st = RMC_OK;
    unsigned long long f_acc_add = 0, f_acc_swap = 0, f_swap_add = 0;
    int64_t old = -1, one = 1, dscale = 1;
    rmc_comm_stats_t a, b;
    int ok = 1;
    for (int rep = 0; rep < 20 && st == RMC_OK; rep++) {
        /* acc (implicit, outstanding) then fetch-and-add: the final values commute, but the value
         * fetched must include the earlier accumulate (accumulate_ordering none): one flush */
        rmc_comm_stats(&a);
        st = rmc_acc_nb(RMC_ACC_INT64, &dscale, &one, w, sizeof(one), peer, NULL);
        if (st == RMC_OK)
            st = rmc_amo_fetch_add_i64(w, 1, &old, peer);
        rmc_comm_stats(&b);
        f_acc_add += completions(&a, &b);
        ok &= old == (rep == 0 ? 0 : 5) + 1; /* the word: 0, or 5 after the last round */
        /* acc then swap: the swap waits for the accumulate, so it fetches its result */
        int64_t before = old + 1; /* value after the fetch-and-add */
        rmc_comm_stats(&a);
        if (st == RMC_OK)
            st = rmc_acc_nb(RMC_ACC_INT64, &dscale, &one, w, sizeof(one), peer, NULL);
        if (st == RMC_OK)
            st = rmc_amo_swap_i64(w, 1000 * rep, &old, peer);
        rmc_comm_stats(&b);
        f_acc_swap += completions(&a, &b);
        ok &= old == before + 1;
        /* swap (non-blocking, outstanding) then add: the add waits for the swap */
        rmc_request_h q = RMC_REQUEST_NULL;
        int64_t got = -1;
        rmc_comm_stats(&a);
        if (st == RMC_OK)
            st = rmc_amo_swap_i64_nb(w, 0, &got, peer, &q);
        if (st == RMC_OK)
            st = rmc_amo_fetch_add_i64(w, 5, &old, peer);
        rmc_comm_stats(&b);
        f_swap_add += completions(&a, &b);
        if (st == RMC_OK)
            st = rmc_wait(&q);
        ok &= got == 1000 * rep && old == 0;
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    int remote = !rmc_same_node(peer);
    /* remote: every pair flushes twice (the conflict, then the atomic's own flush, or its yielding
     * wait on oversubscribed processors): acc+fetch-add, acc+swap, swap+fetch-add. Node-local
     * accumulates are direct copies that leave nothing outstanding. */
    MPI_CHECK_ALL(!remote || f_acc_add == 40);
    MPI_CHECK_ALL(!remote || f_acc_swap == 40);
    MPI_CHECK_ALL(!remote || f_swap_add == 40);
    free_region(&l);
    amotest_done();
}

/* Accumulates are tracked per byte range (comm/conflict.c), every mode: an implicit accumulate
 * (rmc_acc_nb with no request) left outstanding on one word is in the value a later atomic or get
 * of that word by the same origin sees, and at the target after rmc_fence. With MPI atomics on a
 * remote word a fetch-and-add of the next word costs its own completion only (a flush, or a
 * yielding wait when oversubscribed; no conflict flush: MPI orders nothing between different
 * locations); one of the same word flushes first. */
static void test_acc_ranges(void **state)
{
    (void)state;
    for (size_t c = 0; c < 2; c++) {
        amotest_init(&amotest_cfgs[c]);
        int n = mpitest_nranks_, me = mpitest_rank_;
        int peer = (me + 1) % n;
        layout_t l;
        alloc_region(&l, 16 * sizeof(int64_t));
        int64_t *a = w64(&l, peer, 2 * me), *b = a + 1; /* this origin's two words on its peer */
        int remote_mpi = rmc_amo_mode() == RMC_AMO_MODE_MPI && rmc_same_node(peer) != 1;
        rmc_status_t st = RMC_OK;
        int ok = 1;
        unsigned long long own = 0, conflicts = 0, same = 0;
        int64_t old = -1, got = -1, one = 1, two = 2, minus = -1, scale = 1;
        rmc_comm_stats_t s0, s1;
        for (int rep = 0; rep < 20 && st == RMC_OK; rep++) {
            rmc_comm_stats(&s0);
            st = rmc_acc_nb(RMC_ACC_INT64, &scale, &one, a, 8, peer, NULL);
            if (st == RMC_OK)
                st = rmc_amo_fetch_add_i64(b, 1, &old, peer); /* the other word */
            rmc_comm_stats(&s1);
            own += completions(&s0, &s1);
            conflicts += s1.conflict_flushes - s0.conflict_flushes;
            ok &= old == rep;
            if (st == RMC_OK)
                st = rmc_acc_nb(RMC_ACC_INT64, &scale, &two, a, 8, peer, NULL);
            rmc_comm_stats(&s0);
            if (st == RMC_OK) /* the same word: sees both accumulates */
                st = rmc_amo_fetch_add_i64(a, 0, &old, peer);
            rmc_comm_stats(&s1);
            same += s1.conflict_flushes - s0.conflict_flushes;
            ok &= old == 3 * (rep + 1);
            if (st == RMC_OK)
                st = rmc_acc_nb(RMC_ACC_INT64, &scale, &one, a, 8, peer, NULL);
            if (st == RMC_OK) /* a get of the word waits for it too */
                st = rmc_get(a, &got, sizeof(got), peer);
            ok &= got == 3 * (rep + 1) + 1;
            if (st == RMC_OK)
                st = rmc_acc_nb(RMC_ACC_INT64, &scale, &minus, a, 8, peer, NULL);
        }
        for (int i = 0; i < 10 && st == RMC_OK; i++)
            st = rmc_acc_nb(RMC_ACC_INT64, &scale, &one, a, 8, peer, NULL);
        if (st == RMC_OK)
            st = rmc_fence(peer);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(st);
        MPI_CHECK_ALL(ok);
        int from = (me + n - 1) % n; /* the origin whose words this rank holds */
        int64_t *mine = w64(&l, me, 2 * from);
        MPI_CHECK_ALL(mine[0] == 60 + 10 && mine[1] == 20);
        /* MPI atomics on a remote word: the fetch-and-add of the other word flushed once (its own,
         * completing the accumulate too) or, on oversubscribed processors, waited yielding for its
         * result (the accumulate stays outstanding), and never for a conflict; the one of the same
         * word flushed for the conflict every time */
        MPI_CHECK_ALL(!remote_mpi || (own == 20 && conflicts == 0 && same == 20));
        free_region(&l);
        amotest_done();
    }
}

/* A non-blocking atomic is ordered before the same origin's later put and get of the word, and is
 * performed before the region's free lets its target forget the region (in every mode: MPI atomics
 * to node-local words used to complete after a later node-local store; thread-mode atomics to
 * remote words, active messages, after a later MPI put, and one still unanswered at
 * rmc_region_free was refused by the target with RMC_ERR_NOT_REGION). Rank 0 operates on rank 1's
 * words while rank 1 stays out of RMC for a while (its active messages wait). */
static void test_nb_then_rma(void **state)
{
    (void)state;
    int me = mpitest_rank_, n = mpitest_nranks_;
    for (int c = 0; c < 3; c++) {
        amotest_init(&amotest_cfgs[c]);
        layout_t l;
        alloc_region(&l, 4096);
        int ok = 1;
        rmc_status_t st = RMC_OK;
        for (int rep = 0; rep < 4; rep++) {
            MPI_CHECK_OK(rmc_barrier());
            if (me == 0) {
                int64_t *w = w64(&l, 1, 8 * rep), f = -1, g = -1, seven = 7;
                rmc_request_h q = RMC_REQUEST_NULL;
                if (st == RMC_OK)
                    st = rmc_amo_swap_i64_nb(w, 5, &f, 1, &q);
                if (st == RMC_OK)
                    st = rmc_put(&seven, w, 8, 1); /* issued after the swap: it wins */
                if (st == RMC_OK)
                    st = rmc_wait(&q);
                if (st == RMC_OK)
                    st = rmc_get(w, &g, 8, 1);
                ok &= g == 7 && f == 0;
                if (st == RMC_OK)
                    st = rmc_amo_add_i64_nb(w + 1, 3, 1, &q);
                if (st == RMC_OK)
                    st = rmc_get(w + 1, &g, 8, 1); /* sees the add */
                if (st == RMC_OK)
                    st = rmc_wait(&q);
                ok &= g == 3;
            } else if (me == 1) {
                double t0 = MPI_Wtime();
                while (MPI_Wtime() - t0 < 0.02)
                    ;
            }
        }
        MPI_CHECK_OK(rmc_barrier());
        free_region(&l);
        /* issued, then the region freed, then waited: performed, fetched */
        int peer = (me + 1) % n, lost = 0;
        for (int rd = 0; rd < 10 && st == RMC_OK; rd++) {
            alloc_region(&l, 64);
            int64_t *w = w64(&l, peer, 0), f[3] = {-1, -1, -1};
            rmc_request_h q[4];
            st = rmc_amo_cas_i64_nb(w, 0, 5, &f[0], peer, &q[0]);
            if (st == RMC_OK)
                st = rmc_amo_fetch_add_i64_nb(w + 1, 2, &f[1], peer, &q[1]);
            if (st == RMC_OK)
                st = rmc_amo_swap_i64_nb(w + 2, 3, &f[2], peer, &q[2]);
            if (st == RMC_OK)
                st = rmc_amo_add_i64_nb(w + 3, 3, peer, &q[3]);
            MPI_CHECK_OK(rmc_region_free(l.r));
            free(l.b);
            for (int i = 0; i < 4 && st == RMC_OK; i++)
                st = rmc_wait(&q[i]);
            lost += f[0] != 0 || f[1] != 0 || f[2] != 0;
        }
        /* registered memory (an active message in every mode): a barrier after the non-blocking
         * add returns once it is performed (it returned before, in 6-42 of 3000 rounds) */
        int64_t *word = aligned_alloc(64, 64), **all = calloc((size_t)n, sizeof *all);
        word[0] = 0;
        MPI_CHECK_OK(rmc_register(word, 64));
        MPI_Allgather(&word, sizeof word, MPI_BYTE, all, sizeof word, MPI_BYTE, MPI_COMM_WORLD);
        enum { ADDS = 8 }; /* per round: several in flight */
        int missed = 0, R = amotest_iters(500);
        rmc_request_h *rq = calloc((size_t)R * ADDS, sizeof *rq);
        for (int i = 0; i < R && st == RMC_OK; i++) {
            for (int j = 0; me == 0 && j < ADDS && st == RMC_OK; j++)
                st = rmc_amo_add_i64_nb(all[1], 1, 1, &rq[i * ADDS + j]);
            MPI_CHECK_OK(rmc_barrier());
            missed += me == 1 && __atomic_load_n(word, __ATOMIC_SEQ_CST) != (i + 1) * ADDS;
            MPI_CHECK_OK(rmc_barrier());
        }
        if (me == 0 && st == RMC_OK)
            st = rmc_wait_all(rq, R * ADDS);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(rmc_deregister(word));
        free(word), free(rq), free(all);
        MPI_CHECK_OK(st);
        MPI_CHECK_ALL(ok && lost == 0 && missed == 0);
        amotest_done();
    }
}

/* Bad input: clear status, nothing changed. */
static void test_bad_input(void **state)
{
    (void)state;
    for (size_t ci = 0; ci < 2; ci++) {
        amotest_init(&amotest_cfgs[ci]);
        int n = mpitest_nranks_, me = mpitest_rank_;
        int peer = (me + 1) % n;
        layout_t l;
        alloc_region(&l, 12); /* 12 bytes: an int64 at +8 crosses the end */
        *(int32_t *)l.b[me] = 11;
        *((int32_t *)l.b[me] + 1) = 22;
        *((int32_t *)l.b[me] + 2) = 33;
        MPI_CHECK_OK(rmc_barrier());
        char *pb = l.b[peer];
        int64_t f = 5;
        int32_t f32 = 5;
        int64_t stackword = 0;
        rmc_request_h rq = (rmc_request_h)0x1;
        /* collect, then leave the phase through rmc_barrier before the (MPI) checks */
        int ok = 1;
        ok &= rmc_amo_fetch_add_i64(pb + 4, 1, &f, peer) == RMC_ERR_ALIGN;
        ok &= rmc_amo_fetch_add_i32(pb + 2, 1, &f32, peer) == RMC_ERR_ALIGN;
        ok &= rmc_amo_cas_i64(pb + 1, 0, 1, &f, peer) == RMC_ERR_ALIGN;
        ok &= rmc_amo_add_i64_nb(pb + 4, 1, peer, &rq) == RMC_ERR_ALIGN;
        ok &= rq == RMC_REQUEST_NULL;
        ok &= rmc_amo_fetch_add_i64(pb + 8, 1, &f, peer) == RMC_ERR_BOUNDS;
        ok &= rmc_amo_fetch_add_i64(pb, 1, NULL, peer) == RMC_ERR_ARG;
        ok &= rmc_amo_fetch_add_i64_nb(pb, 1, &f, peer, NULL) == RMC_ERR_ARG;
        ok &= rmc_amo_cas_i64_nb(pb, 0, 1, &f, peer, NULL) == RMC_ERR_ARG;
        ok &= rmc_amo_add_i64_nb(pb, 1, peer, NULL) == RMC_ERR_ARG;
        ok &= rmc_amo_fetch_add_i64(pb, 1, &f, n) == RMC_ERR_RANK;
        ok &= rmc_amo_swap_i32(pb, 1, &f32, -1) == RMC_ERR_RANK;
        int bad1 = rmc_amo_fetch_add_i64(&stackword, 1, &f, peer) == RMC_ERR_NOT_REGION;
        int bad2 = rmc_amo_fetch_add_i64(&stackword, 1, &f, me) == RMC_ERR_NOT_REGION;
        int bad3 = rmc_amo_add_i32(NULL, 1, peer) == RMC_ERR_NOT_REGION;
        rmc_request_h rq2 = (rmc_request_h)0x1;
        int bad4 = rmc_amo_fetch_add_i64_nb(&stackword, 1, &f, peer, &rq2) == RMC_OK;
        int bad5 = rmc_wait(&rq2) == RMC_ERR_NOT_REGION && rq2 == RMC_REQUEST_NULL;
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_ALL(ok);
        MPI_CHECK_ALL(bad1 && bad2 && bad3 && bad4 && bad5);
        MPI_CHECK_ALL(f == 5 && f32 == 5 && stackword == 0);
        MPI_CHECK_ALL(*(int32_t *)l.b[me] == 11 && *((int32_t *)l.b[me] + 1) == 22 &&
                      *((int32_t *)l.b[me] + 2) == 33);
        free_region(&l);
        amotest_done();
    }
    /* not initialized */
    int64_t f;
    MPI_CHECK_ALL(rmc_amo_fetch_add_i64(&f, 1, &f, 0) == RMC_ERR_NOT_INIT);
    MPI_CHECK_ALL(rmc_amo_mode() == RMC_AMO_MODE_NONE);
}

/* Modes must agree; auto follows its rule; a bad value is refused. */
static void test_mode_selection(void **state)
{
    (void)state;
    amotest_fresh();
    setenv("RMC_AMO", mpitest_rank_ == 0 ? "mpi" : "thread", 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized());
    setenv("RMC_AMO", "bogus", 1);
    st = rmc_init(MPI_COMM_WORLD);
    MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized());
    setenv("RMC_AMO", "auto", 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    int thread = rmc_progress_thread_active(), all = 0;
    MPI_Allreduce(&thread, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    rmc_amo_mode_t want = (rmc_node_count() == 1 || all) ? RMC_AMO_MODE_THREAD : RMC_AMO_MODE_MPI;
    MPI_CHECK_ALL(rmc_amo_mode() == want);
    MPI_CHECK_OK(rmc_finalize());
    unsetenv("RMC_AMO");
}

/* Accumulates of different element types on the same bytes do not commute (an int32 add of the
 * low half of a word wraps without carrying into the high half; an int64 add carries): one origin's
 * accumulates of different types on overlapping bytes are applied in issue order, like ARMCI's
 * location consistency (ARMCI-MPI completes each operation before returning), where MPI leaves
 * them unordered (accumulate_ordering none; an MPI may carry one type by network atomics and the
 * other in software). Same-type additions, and different types on different bytes, still pass each
 * other: with MPI atomics on a remote word, a flush for each mixed overlap and none else. */
static void test_acc_mixed_types(void **state)
{
    (void)state;
    for (size_t c = 0; c < 2; c++) {
        amotest_init(&amotest_cfgs[c]);
        int n = mpitest_nranks_, me = mpitest_rank_;
        int peer = (me + 1) % n, from = (me + n - 1) % n;
        layout_t l;
        alloc_region(&l, 16 * sizeof(int64_t));
        const int64_t w0 =
            0xffffffffll; /* low half all ones: +1 as int32 wraps, as int64 carries */
        *w64(&l, me, 2 * from) = w0;
        *w64(&l, me, 2 * from + 1) = w0;
        MPI_CHECK_OK(rmc_barrier());
        int64_t *a = w64(&l, peer, 2 * me), *b = a + 1; /* this origin's two words on its peer */
        int remote_mpi = rmc_amo_mode() == RMC_AMO_MODE_MPI && rmc_same_node(peer) != 1;
        rmc_status_t st = RMC_OK;
        int64_t one64 = 1, sc64 = 1, model_a = w0, model_b = w0;
        int32_t one32 = 1, sc32 = 1;
        unsigned long long mixed = 0, other = 0;
        enum { REPS = 8 };
        for (int rep = 0; rep < REPS && st == RMC_OK; rep++) {
            rmc_comm_stats_t s0, s1;
            rmc_request_h rq[2] = {RMC_REQUEST_NULL, RMC_REQUEST_NULL};
            int32_t lo;
            /* int64 then int32 on the same word: the second waits for the first */
            st = rmc_acc_nb(RMC_ACC_INT64, &sc64, &one64, a, 8, peer, NULL);
            model_a += 1;
            rmc_comm_stats(&s0);
            if (st == RMC_OK)
                st = rmc_acc_nb(RMC_ACC_INT32, &sc32, &one32, a, 4, peer, NULL);
            rmc_comm_stats(&s1);
            mixed += s1.conflict_flushes - s0.conflict_flushes;
            memcpy(&lo, &model_a, 4);
            lo = (int32_t)((uint32_t)lo + 1u);
            memcpy(&model_a, &lo, 4);
            /* the other word: an int32 accumulate of its low half (after int32 and int64 ones of
             * other bytes: no wait), an int32 atomic add of the same half (the same type: no wait),
             * then an int64 atomic add of the word (after int32 ones: waits) */
            rmc_comm_stats(&s0);
            if (st == RMC_OK)
                st = rmc_acc_nb(RMC_ACC_INT32, &sc32, &one32, b, 4, peer, NULL);
            if (st == RMC_OK)
                st = rmc_amo_add_i32_nb(b, 1, peer, &rq[0]);
            rmc_comm_stats(&s1);
            other += s1.conflict_flushes - s0.conflict_flushes;
            for (int k = 0; k < 2; k++) {
                memcpy(&lo, &model_b, 4);
                lo = (int32_t)((uint32_t)lo + 1u);
                memcpy(&model_b, &lo, 4);
            }
            rmc_comm_stats(&s0);
            if (st == RMC_OK)
                st = rmc_amo_add_i64_nb(b, 1, peer, &rq[1]);
            rmc_comm_stats(&s1);
            mixed += s1.conflict_flushes - s0.conflict_flushes;
            model_b += 1;
            rmc_status_t w = rmc_wait_all(rq, 2);
            st = st != RMC_OK ? st : w;
        }
        if (st == RMC_OK)
            st = rmc_fence(peer);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(st);
        /* the owner checks what this rank's origin wrote (the same model on every rank) */
        int64_t *mine = w64(&l, me, 2 * from);
        int good = mine[0] == model_a && mine[1] == model_b;
        if (!good)
            fprintf(stderr, "[rank %d] words %#llx %#llx, in issue order %#llx %#llx\n", me,
                    (unsigned long long)mine[0], (unsigned long long)mine[1],
                    (unsigned long long)model_a, (unsigned long long)model_b);
        MPI_CHECK_ALL(good);
        int counts = !remote_mpi || (mixed == 2 * REPS && other == 0);
        if (!counts)
            fprintf(stderr,
                    "[rank %d] conflict flushes: %llu for mixed overlaps (want %d), %llu "
                    "else (want 0)\n",
                    me, mixed, 2 * REPS, other);
        MPI_CHECK_ALL(counts);
        free_region(&l);
        amotest_done();
    }
}

MPITEST_MAIN("amo", NULL, NULL, test_mpi_nothread, test_thread_nothread, test_thread_thread,
             test_mpi_thread, test_fresh_region, test_mpi_ordering, test_nb_then_rma,
             test_subgroup_ids, test_acc_ranges, test_acc_mixed_types, test_bad_input,
             test_mode_selection)
