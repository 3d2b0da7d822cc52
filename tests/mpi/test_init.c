/* rmc_init / rmc_finalize, topology (real and emulated nodes), calls before init and after
 * finalize, re-initialization, sub-communicators. MPI is initialized by the test harness, so
 * rmc_finalize must leave it running. */
#include "mpitest.h"

/* Every entry point that needs an initialized RMC says so (and changes nothing). */
static int check_not_init(void)
{
    int ok = 1;
#define EXPECT(c) MPITEST_EXPECT(ok, c)
    char buf[16] = "unchanged-bytes";
    EXPECT(rmc_initialized() == 0);
    EXPECT(rmc_rank() == -1);
    EXPECT(rmc_nranks() == -1);
    EXPECT(rmc_node_rank() == -1);
    EXPECT(rmc_node_size() == -1);
    EXPECT(rmc_node_count() == -1);
    EXPECT(rmc_same_node(0) == -1);
    EXPECT(rmc_region_count() == 0);
    rmc_topology_t t;
    EXPECT(rmc_topology(&t) == RMC_ERR_NOT_INIT);
    rmc_comm_stats_t s;
    EXPECT(rmc_comm_stats(&s) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_barrier() == RMC_ERR_NOT_INIT);
    rmc_region_h h = (rmc_region_h)buf;
    void *bases[64];
    EXPECT(rmc_region_alloc(64, bases, &h) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_region_free(h) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_region_base(h, 0, NULL, NULL) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_put(buf, buf, 8, 0) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_get(buf, buf, 8, 0) == RMC_ERR_NOT_INIT);
    rmc_request_h q = (rmc_request_h)buf;
    EXPECT(rmc_put_nb(buf, buf, 8, 0, &q) == RMC_ERR_NOT_INIT);
    EXPECT(q == RMC_REQUEST_NULL);
    q = (rmc_request_h)buf;
    EXPECT(rmc_get_nb(buf, buf, 8, 0, &q) == RMC_ERR_NOT_INIT);
    EXPECT(q == RMC_REQUEST_NULL);
    EXPECT(rmc_put_nb(buf, buf, 8, 0, NULL) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_get_nb(buf, buf, 8, 0, NULL) == RMC_ERR_NOT_INIT);
    q = (rmc_request_h)buf; /* never dereferenced when not initialized */
    EXPECT(rmc_wait(&q) == RMC_ERR_NOT_INIT);
    int done = 7;
    EXPECT(rmc_test(&q, &done) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_wait_all(&q, 1) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_fence(0) == RMC_ERR_NOT_INIT);
    EXPECT(rmc_fence_all() == RMC_ERR_NOT_INIT);
    EXPECT(rmc_finalize() == RMC_ERR_NOT_INIT);
    EXPECT(memcmp(buf, "unchanged-bytes", 16) == 0);
    EXPECT(rmc_initialized() == 0);
#undef EXPECT
    return ok;
}

/* Ring through a fresh region: each rank puts a pattern into the next rank's part, everyone
 * checks what arrived and gets its own data back. */
static void ring_check(unsigned salt)
{
    int me = rmc_rank(), n = rmc_nranks();
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    const size_t len = 300 + salt % 7;
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h r;
    MPI_CHECK_OK(rmc_region_alloc(len, bases, &r));
    unsigned char src[512], back[512];
    for (size_t j = 0; j < len; j++)
        src[j] = mpitest_pat(me, j, salt);
    MPI_CHECK_OK(rmc_put(src, bases[next], len, next));
    MPI_CHECK_OK(rmc_barrier());
    const unsigned char *mine = bases[me];
    int ok = 1;
    for (size_t j = 0; j < len; j++)
        ok &= mine[j] == mpitest_pat(prev, j, salt);
    MPI_CHECK_ALL(ok);
    memset(back, 0, sizeof(back));
    MPI_CHECK_OK(rmc_get(bases[next], back, len, next));
    MPI_CHECK_ALL(memcmp(back, src, len) == 0);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(r));
    free(bases);
}

/* Topology as seen through the API agrees with MPI's shared-memory split of `comm` and the
 * RMC_NODE_SIZE emulation (nodes of k consecutive ranks of a real node). */
static void check_topology(MPI_Comm comm)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_CHECK_ALL(rmc_rank() == me);
    MPI_CHECK_ALL(rmc_nranks() == n);

    MPI_Comm real;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &real);
    int rr, rs, real_leader = me;
    MPI_Comm_rank(real, &rr);
    MPI_Comm_size(real, &rs);
    MPI_Allreduce(MPI_IN_PLACE, &real_leader, 1, MPI_INT, MPI_MIN, real);
    MPI_Comm_free(&real);

    const char *env = getenv("RMC_NODE_SIZE");
    int k = (env && *env) ? atoi(env) : 0;
    int kk = k > 0 ? k : rs; /* nodes of kk ranks within the real node */
    int exp_rank = rr % kk;
    int exp_size = (rr / kk + 1) * kk <= rs ? kk : rs - (rr / kk) * kk;

    rmc_topology_t t;
    MPI_CHECK_OK(rmc_topology(&t));
    MPI_CHECK_ALL(t.rank == me && t.nranks == n);
    MPI_CHECK_ALL(t.emulated == (k > 0 ? k : 0));
    MPI_CHECK_ALL(rmc_node_rank() == exp_rank && t.node_rank == exp_rank);
    MPI_CHECK_ALL(rmc_node_size() == exp_size && t.node_size == exp_size);
    MPI_CHECK_ALL(t.node_count == rmc_node_count());
    MPI_CHECK_ALL(t.node_id >= 0 && t.node_id < t.node_count);
    MPI_CHECK_ALL(t.hw_cores >= 1 && t.hw_pus >= t.hw_cores);
    MPI_CHECK_ALL(t.hw_bound_pus >= 1 && t.hw_bound_pus <= t.hw_pus);
    MPI_CHECK_ALL(t.machine_ranks == rs); /* the real node, whatever RMC_NODE_SIZE says */

    /* node count = number of node leaders; node ids dense and equal exactly within a node */
    int leaders = t.node_rank == 0;
    MPI_Allreduce(MPI_IN_PLACE, &leaders, 1, MPI_INT, MPI_SUM, comm);
    MPI_CHECK_ALL(t.node_count == leaders);
    int mine[3] = {t.node_id, real_leader, rr / kk};
    int *all = malloc((size_t)n * 3 * sizeof(int));
    MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm);
    int ok = 1, members = 0, maxid = -1;
    for (int r = 0; r < n; r++) {
        int same = all[3 * r + 1] == real_leader && all[3 * r + 2] == rr / kk;
        ok &= rmc_same_node(r) == same;
        ok &= (all[3 * r] == t.node_id) == same;
        members += same;
        maxid = all[3 * r] > maxid ? all[3 * r] : maxid;
    }
    free(all);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(members == t.node_size);
    MPI_CHECK_ALL(maxid == t.node_count - 1);
    MPI_CHECK_ALL(rmc_same_node(me) == 1);
    MPI_CHECK_ALL(rmc_same_node(-1) == -1 && rmc_same_node(n) == -1);
    /* the cases the emulation exists for, when every rank shares one machine */
    int ok2 = 1;
    if (rs == n) {
        if (k == 1)
            ok2 = t.node_count == n && t.node_size == 1;
        else if (k == 2 && n == 4)
            ok2 = t.node_count == 2 && t.node_size == 2;
        else if (k == 0)
            ok2 = t.node_count == 1 && t.node_size == n;
    }
    MPI_CHECK_ALL(ok2);
}

static void test_before_init(void **state)
{
    (void)state;
    MPI_CHECK_ALL(check_not_init());
    /* MPI_COMM_NULL is refused and leaves RMC uninitialized */
    MPI_CHECK_ALL(rmc_init(MPI_COMM_NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(check_not_init());
}

static void test_init_world(void **state)
{
    (void)state;
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_ALL(rmc_initialized() == 1);
    MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ALREADY_INIT);
    MPI_CHECK_ALL(rmc_init(MPI_COMM_NULL) == RMC_ERR_ALREADY_INIT);
    MPI_CHECK_ALL(rmc_initialized() == 1);
    check_topology(MPI_COMM_WORLD);
    rmc_comm_stats_t s;
    MPI_CHECK_OK(rmc_comm_stats(&s));
    MPI_CHECK_ALL(s.flushes == 0 && s.conflict_flushes == 0 && s.local_ops == 0 &&
                  s.remote_ops == 0 && s.xlate_lookups == 0 && s.xlate_mru_hits == 0);
    MPI_CHECK_ALL(rmc_region_count() == 0);
    MPI_CHECK_OK(rmc_barrier());
    ring_check(1);
    MPI_CHECK_OK(rmc_finalize());
    int fin = 1, init = 0;
    MPI_Finalized(&fin);
    MPI_Initialized(&init);
    MPI_CHECK_ALL(fin == 0 && init == 1); /* RMC did not initialize MPI, so it leaves it running */
    MPI_CHECK_ALL(check_not_init());
}

/* rmc_finalize frees regions still alive and completes outstanding implicit operations; RMC can
 * be initialized again afterwards, starting from a clean state. */
static void test_finalize_cleans_up(void **state)
{
    (void)state;
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    int me = rmc_rank(), n = rmc_nranks(), next = (me + 1) % n;
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h a, b, c;
    MPI_CHECK_OK(rmc_region_alloc(4096, bases, &a));
    MPI_CHECK_OK(rmc_region_alloc(me % 2 ? 0 : 128, NULL, &b));
    MPI_CHECK_OK(rmc_region_alloc(77, NULL, &c));
    MPI_CHECK_ALL(rmc_region_count() == 3);
    static unsigned char src[4096];
    memset(src, 0x5a, sizeof(src));
    MPI_CHECK_OK(rmc_put_nb(src, bases[next], sizeof(src), next, NULL)); /* left to finalize */
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(rmc_region_count() == 0);
    MPI_CHECK_ALL(check_not_init());

    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_ALL(rmc_region_count() == 0);
    rmc_comm_stats_t s;
    MPI_CHECK_OK(rmc_comm_stats(&s));
    MPI_CHECK_ALL(s.flushes == 0 && s.local_ops == 0 && s.remote_ops == 0 && s.xlate_lookups == 0);
    /* an address of a region freed by finalize is no region in the new instance (nothing new is
     * allocated yet, so it cannot be reused) */
    rmc_status_t st = rmc_put(src, bases[next], 8, next);
    MPI_CHECK_OK(rmc_barrier()); /* the target may answer it (registration fallback): stay in RMC */
    MPI_CHECK_ALL(st == RMC_ERR_NOT_REGION);
    check_topology(MPI_COMM_WORLD);
    ring_check(2);
    if (rmc_nranks() <= 2)
        ring_check(3); /* a second region after the first was freed */
    MPI_CHECK_OK(rmc_finalize());
    free(bases);
}

/* A custom request of three steps: counts its calls, marks *finished and frees its state. */
typedef struct {
    int left;
    int *finished;
    const int *gate; /* not NULL: no step counts until *gate is set */
} steps_t;
static rmc_status_t three_steps(void *state, int *done)
{
    steps_t *t = state;
    if (t->gate && !*t->gate)
        return RMC_OK;
    if (--t->left == 0) {
        *t->finished = 1;
        free(t);
        *done = 1;
    }
    return RMC_OK;
}

/* A custom request whose function waits (rmc_wait) for another custom request inside it: the waits
 * inside step the other request to its end but never the waiting function again (it would run
 * inside itself and finish twice); a round of steps goes past a request another step finished. */
typedef struct nest {
    rmc_request_h inner;
    int depth, max_depth, calls, *finished;
} nest_t;
static rmc_status_t waits_inside(void *state, int *done)
{
    nest_t *n = state;
    n->calls++;
    if (++n->depth > n->max_depth)
        n->max_depth = n->depth;
    rmc_status_t st = rmc_wait(&n->inner);
    n->depth--;
    *n->finished = 1;
    *done = 1;
    return st;
}
typedef struct counted { /* counts its steps; finishes once told to */
    int calls, finish;
} counted_t;
static rmc_status_t counts_steps(void *state, int *done)
{
    counted_t *c = state;
    c->calls++;
    *done = c->finish;
    return RMC_OK;
}
typedef struct ender { /* finishes request *victim (a three_steps one) by waiting for it */
    rmc_request_h *victim;
    int *finished;
} ender_t;
static rmc_status_t ends_other(void *state, int *done)
{
    ender_t *e = state;
    rmc_status_t st = rmc_wait(e->victim); /* (released: *victim = RMC_REQUEST_NULL) */
    *e->finished = 1;
    *done = 1;
    return st;
}

static void test_custom_waits_inside(void **state)
{
    (void)state;
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    int fin_inner = 0, fin_outer = 0;
    steps_t *t = malloc(sizeof(*t));
    *t = (steps_t){3, &fin_inner, NULL};
    nest_t n = {.finished = &fin_outer};
    rmc_request_h outer;
    MPI_CHECK_OK(rmc_request_custom(three_steps, t, &n.inner));
    MPI_CHECK_OK(rmc_request_custom(waits_inside, &n, &outer));
    MPI_CHECK_OK(rmc_wait(&outer));
    int ok = fin_inner && fin_outer && n.calls == 1 && n.max_depth == 1 &&
             n.inner == RMC_REQUEST_NULL && outer == RMC_REQUEST_NULL;
    if (!ok)
        fprintf(stderr, "[rank %d] calls %d, depth %d, finished %d %d\n", rmc_rank(), n.calls,
                n.max_depth, fin_inner, fin_outer);
    MPI_CHECK_ALL(ok);
    /* new requests go first: a round of steps takes ender, victim, third; ender's wait finishes
     * and releases victim, and the round goes on with third (it stopped at the released victim) */
    int fin_v = 0, fin_e = 0;
    steps_t *tv = malloc(sizeof(*tv));
    *tv = (steps_t){2, &fin_v, NULL};
    counted_t tc = {0, 0};
    rmc_request_h victim, ender, third;
    ender_t e = {&victim, &fin_e};
    /* (no check agreed between these calls: the harness's waits would step the requests) */
    ok = rmc_request_custom(counts_steps, &tc, &third) == RMC_OK &&
         rmc_request_custom(three_steps, tv, &victim) == RMC_OK &&
         rmc_request_custom(ends_other, &e, &ender) == RMC_OK;
    ok &= rmc_progress() == RMC_OK; /* one round: ender's step (inside it victim's), third's */
    ok &= fin_v && fin_e && tc.calls == 1 && victim == RMC_REQUEST_NULL;
    if (!ok)
        fprintf(stderr, "[rank %d] round: finished %d %d, third's steps %d\n", rmc_rank(), fin_v,
                fin_e, tc.calls);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_wait(&ender));
    tc.finish = 1;
    MPI_CHECK_OK(rmc_wait(&third));
    MPI_CHECK_ALL(ender == RMC_REQUEST_NULL && third == RMC_REQUEST_NULL);
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(check_not_init());
}

/* rmc_finalize completes requests never waited for, as rmc_wait would: a strided get (whose data
 * may need unpacking) delivers its data, a custom request's function runs to its end (freeing its
 * state: the ASan pass finds a leak otherwise). */
static void test_finalize_completes_requests(void **state)
{
    (void)state;
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    int me = rmc_rank(), n = rmc_nranks(), next = (me + 1) % n;
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h r;
    MPI_CHECK_OK(rmc_region_alloc(16 * 64, bases, &r));
    long long *mine = bases[me];
    for (int i = 0; i < 16 * 8; i++)
        mine[i] = 1000 * me + i;
    MPI_CHECK_OK(rmc_barrier());
    static long long got[16];
    memset(got, 0, sizeof(got));
    int sst[1] = {64}, dst[1] = {8}, count[2] = {8, 16}; /* column 0 of a 16 x 8 matrix */
    rmc_request_h g, c1, c2;
    MPI_CHECK_OK(rmc_get_strided_nb(bases[next], sst, got, dst, count, 1, next, &g));
    int finished = 0, finished2 = 0;
    static int gate; /* c2 moves only in rmc_finalize (the checks below wait, which steps it) */
    gate = 0;
    steps_t *t1 = malloc(sizeof(*t1)), *t2 = malloc(sizeof(*t2));
    *t1 = (steps_t){3, &finished, NULL};
    *t2 = (steps_t){3, &finished2, &gate};
    MPI_CHECK_OK(rmc_request_custom(three_steps, t1, &c1));
    MPI_CHECK_OK(rmc_request_custom(three_steps, t2, &c2));
    int done = 0;
    MPI_CHECK_OK(rmc_test(&c2, &done)); /* a step, not its last: still live */
    MPI_CHECK_ALL(!done && c2 != RMC_REQUEST_NULL && !finished2);
    gate = 1;
    MPI_CHECK_OK(rmc_finalize()); /* g, c1, c2 never waited; the region never freed */
    int ok = finished && finished2;
    for (int i = 0; i < 16; i++)
        ok = ok && got[i] == 1000 * next + 8 * i;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(check_not_init());
    free(bases);
}

/* RMC on a sub-communicator: ranks and topology are relative to it, the world is not involved
 * (each half works on its own), and RMC keeps working after the application frees its handle of
 * the communicator (RMC works on a private duplicate). */
static void run_on_split(int color, int key)
{
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &sub);
    int srank, ssize;
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &ssize);
    MPI_CHECK_OK(rmc_init(sub));
    check_topology(sub);
    MPI_Comm_free(&sub);
    MPI_CHECK_ALL(rmc_rank() == srank && rmc_nranks() == ssize);

    /* which world rank is each RMC rank: a put carries the world rank of the origin */
    int me = rmc_rank(), n = rmc_nranks(), next = (me + 1) % n, prev = (me + n - 1) % n;
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h r;
    MPI_CHECK_OK(rmc_region_alloc(2 * sizeof(int), bases, &r));
    int mine[2] = {mpitest_rank_, me};
    MPI_CHECK_OK(rmc_put(mine, bases[next], sizeof(mine), next));
    MPI_CHECK_OK(rmc_barrier());
    int *got = bases[me];
    /* my predecessor in RMC's numbering, as world rank, from MPI directly */
    int *world_of = malloc((size_t)mpitest_nranks_ * sizeof(int));
    int pair[2] = {color, key};
    int *pairs = malloc((size_t)mpitest_nranks_ * 2 * sizeof(int));
    MPI_Allgather(pair, 2, MPI_INT, pairs, 2, MPI_INT, MPI_COMM_WORLD);
    /* sub rank order = order of (key, world rank) among the same color */
    int cnt = 0;
    for (int w = 0; w < mpitest_nranks_; w++) {
        if (pairs[2 * w] != color)
            continue;
        int pos = 0;
        for (int v = 0; v < mpitest_nranks_; v++)
            if (pairs[2 * v] == color && (pairs[2 * v + 1] < pairs[2 * w + 1] ||
                                          (pairs[2 * v + 1] == pairs[2 * w + 1] && v < w)))
                pos++;
        world_of[pos] = w;
        cnt++;
    }
    MPI_CHECK_ALL(cnt == n);
    MPI_CHECK_ALL(world_of[me] == mpitest_rank_);
    MPI_CHECK_ALL(got[0] == world_of[prev] && got[1] == prev);
    free(pairs);
    free(world_of);
    /* ranks outside the sub-communicator do not exist for RMC */
    MPI_CHECK_ALL(rmc_put(mine, bases[me], sizeof(int), n) == RMC_ERR_RANK);
    MPI_CHECK_ALL(rmc_same_node(n) == -1);
    MPI_CHECK_OK(rmc_region_free(r));
    free(bases);
    ring_check(4);
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(check_not_init());
}

static void test_subcomm_halves(void **state)
{
    (void)state;
    int half = mpitest_rank_ < mpitest_nranks_ / 2;
    run_on_split(half, mpitest_rank_);
}

static void test_subcomm_reversed(void **state)
{
    (void)state;
    /* every rank, numbered backwards: RMC rank = nranks - 1 - world rank */
    run_on_split(0, mpitest_nranks_ - mpitest_rank_);
    /* even and odd ranks, backwards (at 2 ranks: two single-rank instances) */
    if (mpitest_nranks_ <= 2 || mpitest_nranks_ % 2 == 0)
        run_on_split(mpitest_rank_ % 2, -mpitest_rank_);
}

/* Init on a duplicate the application frees at once, while the application keeps using its own
 * communicator in between RMC calls. */
static void test_init_on_dup(void **state)
{
    (void)state;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_CHECK_OK(rmc_init(dup));
    MPI_Comm_free(&dup);
    check_topology(MPI_COMM_WORLD);
    ring_check(5);
    MPI_CHECK_OK(rmc_finalize());
}

/* RMC_VERBOSE and RMC_STATS are integers or on / off / yes / no: any other text refuses rmc_init
 * on every rank, naming the knob and its value (they were silently off); RMC_STATS=on counts from
 * rmc_init. */
static void test_switch_knobs(void **state)
{
    (void)state;
    static const char *const names[] = {"RMC_VERBOSE", "RMC_STATS"};
    for (int i = 0; i < 2; i++) {
        setenv(names[i], "yes please", 1);
        MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ARG && !rmc_initialized());
        MPI_CHECK_ALL(strstr(rmc_last_error(), names[i]) != NULL &&
                      strstr(rmc_last_error(), "yes please") != NULL);
        unsetenv(names[i]);
    }
    setenv("RMC_STATS", "on", 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    unsetenv("RMC_STATS");
    long long x = 0;
    void **bases = calloc((size_t)rmc_nranks(), sizeof(void *));
    rmc_region_h r;
    rmc_op_counts_t c;
    MPI_CHECK_OK(rmc_region_alloc(sizeof(x), bases, &r));
    MPI_CHECK_OK(rmc_put(&x, bases[rmc_rank()], sizeof(x), rmc_rank()));
    MPI_CHECK_OK(rmc_op_counts(&c));
    MPI_CHECK_ALL(c.writes == 1 && c.write_bytes == sizeof(x));
    MPI_CHECK_OK(rmc_region_free(r));
    free(bases);
    MPI_CHECK_OK(rmc_finalize());
}

/* Sets (v != NULL) or unsets a knob, returning its previous value (malloc'd, NULL when unset). */
static char *knob_swap(const char *name, const char *v)
{
    const char *old = getenv(name);
    char *keep = old ? strdup(old) : NULL;
    if (v)
        setenv(name, v, 1);
    else
        unsetenv(name);
    return keep;
}

static void knob_restore(const char *name, char *keep)
{
    if (keep)
        setenv(name, keep, 1);
    else
        unsetenv(name);
    free(keep);
}

/* RMC_NODE_SIZE set differently on the ranks (1 on rank 0, 0 on the others): ranks with k > 0
 * split the node communicator while the others did not, and every rank waited in a different
 * collective. rmc_init now fails with RMC_ERR_ARG on every rank, naming the knob. */
static void test_node_size_mismatch(void **state)
{
    (void)state;
    if (mpitest_nranks_ < 2)
        skip();
    char *keep = knob_swap("RMC_NODE_SIZE", mpitest_rank_ == 0 ? "1" : "0");
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized());
    MPI_CHECK_ALL(strstr(rmc_last_error(), "RMC_NODE_SIZE") != NULL &&
                  strstr(rmc_last_error(), "not the same on every rank") != NULL);
    if (st == RMC_OK)
        rmc_finalize();
    knob_restore("RMC_NODE_SIZE", keep);
}

/* Numeric knobs are decimal integers (docs/environment.md): "0x1" is refused (it was read as hex
 * 1), and "0100000" is 100000 (it was octal 32768, so RMC_AM_MAX_PAYLOAD given as "0100000" on
 * rank 0 and "100000" on the others differed and refused rmc_init). */
static void test_knobs_decimal(void **state)
{
    (void)state;
    char *keep = knob_swap("RMC_NODE_SIZE", "0x1");
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized());
    MPI_CHECK_ALL(strstr(rmc_last_error(), "RMC_NODE_SIZE=0x1") != NULL);
    if (st == RMC_OK)
        rmc_finalize();
    knob_restore("RMC_NODE_SIZE", keep);

    keep = knob_swap("RMC_AM_MAX_PAYLOAD", "0x400");
    st = rmc_init(MPI_COMM_WORLD);
    MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized());
    MPI_CHECK_ALL(strstr(rmc_last_error(), "RMC_AM_MAX_PAYLOAD=0x400") != NULL);
    if (st == RMC_OK)
        rmc_finalize();
    knob_restore("RMC_AM_MAX_PAYLOAD", keep);

    keep = knob_swap("RMC_AM_MAX_PAYLOAD", mpitest_rank_ == 0 ? "0100000" : "100000");
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    knob_restore("RMC_AM_MAX_PAYLOAD", keep);
    ring_check(7);
    MPI_CHECK_OK(rmc_finalize());
}

MPITEST_MAIN("init", NULL, NULL, test_before_init, test_init_world, test_finalize_cleans_up,
             test_finalize_completes_requests, test_custom_waits_inside, test_subcomm_halves,
             test_subcomm_reversed, test_init_on_dup, test_switch_knobs, test_node_size_mismatch,
             test_knobs_decimal)
