/* Dynamic registration: rmc_put / rmc_get / AMOs on memory registered with rmc_register give the
 * same data as on region memory (every size, chunked transfers, self, non-blocking forms); the
 * remote registration cache under eviction (RMC_REGION_CACHE=2) and after deregistration (stale
 * descriptors); bad input changes nothing. With and without the progress thread. */
#include <time.h>
#include "test_amo_util.h"

#define NBUF 5

static int cache_cap; /* RMC_REGION_CACHE of the current run */

typedef struct world {
    size_t size;
    unsigned char *mine[NBUF]; /* this rank's registered buffers (malloc) */
    void **theirs[NBUF];       /* [nranks] every rank's buffer i */
    rmc_region_h region;
    void **rbase; /* region bases (same size as a buffer) */
} world_t;

static void setup_world(world_t *w, size_t size)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    w->size = size;
    int ok = 1;
    for (int i = 0; i < NBUF; i++) {
        w->mine[i] = malloc(size);
        for (size_t b = 0; b < size; b++)
            w->mine[i][b] = mpitest_pat(me, b, (unsigned)i);
        ok &= rmc_register(w->mine[i], size) == RMC_OK;
        w->theirs[i] = malloc((size_t)n * sizeof(void *));
        MPI_Allgather(&w->mine[i], sizeof(void *), MPI_BYTE, w->theirs[i], sizeof(void *), MPI_BYTE,
                      MPI_COMM_WORLD);
    }
    MPI_CHECK_ALL(ok);
    w->rbase = malloc((size_t)n * sizeof(void *));
    MPI_CHECK_OK(rmc_region_alloc(size, w->rbase, &w->region));
    memcpy(w->rbase[me], w->mine[0], size);
    MPI_CHECK_OK(rmc_barrier());
}

static void free_world(world_t *w)
{
    int ok = 1;
    for (int i = 0; i < NBUF; i++) {
        ok &= rmc_deregister(w->mine[i]) == RMC_OK;
        free(w->mine[i]);
        free(w->theirs[i]);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(w->region));
    free(w->rbase);
}

/* Gets from a peer's registered buffer 0 and from its region (same content) at many (offset, len):
 * identical data; puts of a new pattern to both, checked by the owner byte for byte. */
static void same_data(world_t *w)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int peer = (me + 1) % n, left = (me + n - 1) % n;
    size_t S = w->size, max = rmc_am_max_payload();
    size_t lens[] = {1, 8, 100, max - 33, max - 32, max - 31, max, 2 * max + 5, S};
    unsigned char *a = malloc(S), *b = malloc(S);
    rmc_status_t st = RMC_OK;
    int ok = 1;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]) && st == RMC_OK; li++) {
        size_t len = lens[li] > S ? S : lens[li];
        size_t off = (li * 977) % (S - len + 1);
        memset(a, 0, len);
        memset(b, 1, len);
        st = rmc_get((char *)w->theirs[0][peer] + off, a, len, peer);
        if (st == RMC_OK)
            st = rmc_get((char *)w->rbase[peer] + off, b, len, peer);
        ok &= memcmp(a, b, len) == 0;
        for (size_t i = 0; i < len && ok; i++)
            ok &= a[i] == mpitest_pat(peer, off + i, 0);
    }
    /* self: registered memory of this rank through the same API */
    if (st == RMC_OK)
        st = rmc_get(w->mine[1], a, S, me);
    ok &= memcmp(a, w->mine[1], S) == 0;
    /* puts: a new pattern into buffer 2 and the region, in pieces of different sizes */
    for (size_t i = 0; i < S; i++)
        a[i] = mpitest_pat(me, i, 77);
    size_t off = 0;
    for (int piece = 0; off < S && st == RMC_OK; piece++) {
        size_t len = piece % 3 == 0 ? 1 : piece % 3 == 1 ? max - 32 : 3 * max + 1;
        if (len > S - off)
            len = S - off;
        st = rmc_put(a + off, (char *)w->theirs[2][peer] + off, len, peer);
        if (st == RMC_OK)
            st = rmc_put(a + off, (char *)w->rbase[peer] + off, len, peer);
        off += len;
    }
    /* non-blocking forms on registered memory complete at once */
    rmc_request_h q1 = (rmc_request_h)0x1, q2 = (rmc_request_h)0x1;
    if (st == RMC_OK)
        st = rmc_put_nb(a, w->theirs[3][peer], 64, peer, &q1);
    if (st == RMC_OK)
        st = rmc_get_nb(w->theirs[3][peer], b, 64, peer, &q2);
    ok &= q1 == RMC_REQUEST_NULL && q2 == RMC_REQUEST_NULL && memcmp(a, b, 64) == 0;
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    ok = memcmp(w->mine[2], w->rbase[me], S) == 0;
    for (size_t i = 0; i < S && ok; i++)
        ok &= w->mine[2][i] == mpitest_pat(left, i, 77);
    for (size_t i = 0; i < 64; i++)
        ok &= w->mine[3][i] == mpitest_pat(left, i, 77);
    ok &= w->mine[3][64] == mpitest_pat(me, 64, 3);
    MPI_CHECK_ALL(ok);
    free(a);
    free(b);
}

/* Round-robin over NBUF buffers of every peer with a cache of 2 descriptors: evictions happen and
 * every transfer is still right. Then stale descriptors: the owner deregisters buffer 4 and
 * registers it again (new id), and deregisters buffer 1 for good. */
static void cache(world_t *w)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    rmc_progress_stats_t s0, s1;
    MPI_CHECK_OK(rmc_progress_stats(&s0));
    rmc_status_t st = RMC_OK;
    int ok = 1;
    unsigned char v[16];
    for (int round = 0; round < 3 && st == RMC_OK; round++)
        for (int t = 0; t < n && st == RMC_OK; t++) {
            if (t == me)
                continue;
            for (int i = 0; i < NBUF && st == RMC_OK; i++) {
                if (i == 2 || i == 3)
                    continue; /* changed by same_data */
                size_t off = (size_t)(round * 131 + i * 7) % (w->size - 16);
                st = rmc_get((char *)w->theirs[i][t] + off, v, 16, t);
                for (int b = 0; b < 16; b++)
                    ok &= v[b] == mpitest_pat(t, off + (size_t)b, (unsigned)i);
            }
        }
    rmc_progress_stats(&s1); /* no MPI collective before rmc_barrier: peers may still need us */
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    if (cache_cap == 2) /* 3 buffers per peer, cache of 2: every round misses */
        MPI_CHECK_ALL(s1.cache_evictions > s0.cache_evictions && s1.cache_misses > s0.cache_misses);
    else /* everything fits: after the first round only hits */
        MPI_CHECK_ALL(s1.cache_evictions == s0.cache_evictions &&
                      s1.cache_hits >= s0.cache_hits + 2 * 3 * (unsigned)(n - 1));
    /* cache buffer 4's descriptor, then the owner re-registers it (new id) and withdraws buffer 1
     */
    int peer = (me + 1) % n;
    st = rmc_get(w->theirs[4][peer], v, 16, peer);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_OK(rmc_deregister(w->mine[4]));
    MPI_CHECK_OK(rmc_register(w->mine[4], w->size));
    MPI_CHECK_OK(rmc_deregister(w->mine[1]));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_progress_stats(&s0));
    st = rmc_get(w->theirs[4][peer], v, 16, peer); /* stale id: refused, retried by address */
    rmc_progress_stats(&s1);
    for (int b = 0; b < 16; b++)
        ok &= v[b] == mpitest_pat(peer, (size_t)b, 4);
    rmc_status_t s_gone = rmc_get(w->theirs[1][peer], v, 16, peer);
    unsigned char junk[16];
    memset(junk, 0xee, sizeof(junk));
    rmc_status_t s_gone_put = rmc_put(junk, w->theirs[1][peer], 16, peer);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(s_gone == RMC_ERR_NOT_REGION && s_gone_put == RMC_ERR_NOT_REGION);
    MPI_CHECK_ALL(s1.cache_stale == s0.cache_stale + 1);
    /* nothing was written into the withdrawn buffer */
    ok = 1;
    for (size_t i = 0; i < w->size; i++)
        ok &= w->mine[1][i] == mpitest_pat(me, i, 1);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_register(w->mine[1], w->size)); /* for free_world */
    MPI_CHECK_OK(rmc_barrier());
}

/* Memory safety of rmc_deregister: rank 1 keeps putting into rank 0's buffer 4 while rank 0
 * deregisters it and then overwrites it; no put may land after rmc_deregister returned, and rank
 * 1's puts fail with RMC_ERR_NOT_REGION from then on. */
static void dereg_race(world_t *w)
{
    int me = mpitest_rank_;
    unsigned char *buf = w->mine[4];
    rmc_status_t st = RMC_OK, sd = RMC_OK;
    int ok = 1, puts_ok = 0;
    MPI_CHECK_OK(rmc_barrier());
    if (me == 0) {
        for (int i = 0; i < 20; i++) /* let some puts land */
            rmc_progress();
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
        sd = rmc_deregister(buf);
        memset(buf, 0xaa, w->size);
        ts.tv_nsec = 30 * 1000 * 1000; /* the thread (if any) keeps serving meanwhile */
        nanosleep(&ts, NULL);
        for (int i = 0; i < 20; i++)
            rmc_progress();
    } else if (me == 1) {
        unsigned char v[256];
        memset(v, 0x11, sizeof(v));
        for (int i = 0; i < 1000000; i++) {
            st = rmc_put(v, w->theirs[4][0], sizeof(v), 0);
            if (st != RMC_OK)
                break;
            puts_ok++;
        }
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(sd);
    MPI_CHECK_ALL(me != 1 || st == RMC_ERR_NOT_REGION);
    if (me == 0)
        for (size_t i = 0; i < w->size; i++)
            ok &= buf[i] == 0xaa;
    MPI_CHECK_ALL(ok);
    /* restore buffer 4 for the rest of the test */
    for (size_t i = 0; me == 0 && i < w->size; i++)
        buf[i] = mpitest_pat(me, i, 4);
    MPI_CHECK_OK(me == 0 ? rmc_register(buf, w->size) : RMC_OK);
    MPI_CHECK_OK(rmc_barrier());
    (void)puts_ok;
}

/* Bad input: clear status, nothing changed. */
static void bad_input(world_t *w)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int peer = (me + 1) % n;
    int ok = 1;
    unsigned char junk[64];
    memset(junk, 0xee, sizeof(junk));
    unsigned char *unreg = malloc(256);
    ok &= rmc_register(NULL, 10) == RMC_ERR_ARG;
    ok &= rmc_register(unreg, 0) == RMC_ERR_ARG;
    ok &= rmc_register(w->mine[0] + 10, 10) == RMC_ERR_STATE; /* inside */
    ok &= rmc_register(w->mine[0] - 5, 10) == RMC_ERR_STATE;  /* straddles the start */
    ok &= rmc_register(w->rbase[me], 8) == RMC_ERR_STATE;     /* a region */
    ok &= rmc_deregister(unreg) == RMC_ERR_NOT_FOUND;
    ok &= rmc_deregister(w->mine[0] + 1) == RMC_ERR_NOT_FOUND; /* not the start */
    ok &= rmc_deregister(NULL) == RMC_ERR_NOT_FOUND;
    /* out of bounds / unregistered, remote and self */
    char *pb = w->theirs[0][peer];
    ok &= rmc_put(junk, pb + w->size - 8, 64, peer) == RMC_ERR_BOUNDS;
    ok &= rmc_get(pb + w->size - 8, junk, 64, peer) == RMC_ERR_BOUNDS;
    ok &= rmc_put(junk, w->mine[0] + w->size - 8, 64, me) == RMC_ERR_BOUNDS;
    ok &= rmc_put(junk, unreg, 16, peer) == RMC_ERR_NOT_REGION; /* peer's address space */
    ok &= rmc_put(junk, unreg, 16, me) == RMC_ERR_NOT_REGION;
    int64_t f = 3;
    ok &= rmc_amo_fetch_add_i64(pb + w->size - 4, 1, &f, peer) == RMC_ERR_ALIGN;
    ok &= rmc_amo_fetch_add_i32((int32_t *)(pb + w->size), 1, (int32_t *)&f, peer) ==
          RMC_ERR_NOT_REGION;
    ok &= f == 3;
    for (int i = 0; i < 64; i++)
        ok &= junk[i] == 0xee;
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
    ok = 1;
    for (size_t i = 0; i < w->size; i++)
        ok &= w->mine[0][i] == mpitest_pat(me, i, 0);
    MPI_CHECK_ALL(ok);
    free(unreg);
}

/* AMOs on registered memory from every rank: exact. */
static void atomics(world_t *w)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int64_t *ctr = (int64_t *)w->mine[3] + 16; /* 8-aligned: malloc'd */
    *ctr = 0;
    MPI_CHECK_OK(rmc_barrier());
    int k = amotest_iters(100);
    int64_t *t = malloc((size_t)k * sizeof(int64_t));
    rmc_status_t st = RMC_OK;
    int host = n - 1;
    int64_t *hc = (int64_t *)w->theirs[3][host] + 16;
    for (int i = 0; i < k && st == RMC_OK; i++)
        st = rmc_amo_fetch_add_i64(hc, 1, &t[i], host);
    rmc_request_h q = RMC_REQUEST_NULL;
    int64_t last = -1;
    if (st == RMC_OK)
        st = rmc_amo_fetch_add_i64_nb(hc, 0, &last, host, &q);
    if (st == RMC_OK)
        st = rmc_wait(&q);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(last >= k - 1);
    MPI_CHECK_ALL(amotest_is_permutation(t, k));
    MPI_CHECK_ALL(me != host || *ctr == (int64_t)k * n);
    free(t);
}

/* A handler that reads the origin's registered buffer 0 (an active message of comm's own) and its
 * region: both are refused (RMC_ERR_STATE: two ranks' handlers waiting for each other hung, and
 * a one-sided transfer waits for RMC's thread lock, which the origin's thread may hold while it
 * waits for this handler's reply). Replies with both statuses. */
static rmc_status_t h_read_back(int origin, const void *payload, size_t len, void *reply,
                                size_t cap, size_t *rlen, void *arg)
{
    (void)payload, (void)len;
    world_t *w = arg;
    if (cap < 2 * sizeof(int))
        return RMC_ERR_TOO_BIG;
    unsigned char b[8];
    int st[2] = {(int)rmc_get(w->theirs[0][origin], b, sizeof b, origin),
                 (int)rmc_get(w->rbase[origin], b, sizeof b, origin)};
    memcpy(reply, st, sizeof st);
    *rlen = sizeof st;
    return RMC_OK;
}

static void in_handler(world_t *w)
{
    int n = mpitest_nranks_, me = mpitest_rank_, peer = (me + 1) % n;
    MPI_CHECK_OK(rmc_am_register(7, h_read_back, w));
    int st[2] = {0, 0};
    size_t rl = 0;
    int ok = n == 1 || (rmc_am_send(peer, 7, NULL, 0, st, sizeof st, &rl) == RMC_OK &&
                        rl == sizeof st && st[0] == RMC_ERR_STATE && st[1] == RMC_ERR_STATE);
    if (!ok)
        fprintf(stderr, "[rank %d] handler's gets: %d %d\n", me, st[0], st[1]);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_am_register(7, NULL, NULL));
}

static void run(const char *thread, const char *cache_size, const char *payload)
{
    amotest_fresh();
    setenv("RMC_REGION_CACHE", cache_size, 1);
    cache_cap = atoi(cache_size);
    setenv("RMC_AM_MAX_PAYLOAD", payload, 1);
    amotest_cfg_t c = {"mpi", thread};
    amotest_init(&c);
    world_t w;
    setup_world(&w, 3 * rmc_am_max_payload() + 1000);
    same_data(&w);
    cache(&w);
    dereg_race(&w);
    bad_input(&w);
    atomics(&w);
    in_handler(&w);
    free_world(&w);
    amotest_done();
    unsetenv("RMC_REGION_CACHE");
    unsetenv("RMC_AM_MAX_PAYLOAD");
}

static void test_register_nothread(void **state)
{
    (void)state;
    run("0", "2", "4096");
}

static void test_register_thread(void **state)
{
    (void)state;
    run("1", "2", "65536");
}

static void test_register_bigcache(void **state)
{
    (void)state;
    if (mpitest_nranks_ <= 2)
        run("1", "64", "4096");
}

static void test_not_init(void **state)
{
    (void)state;
    char x[8];
    MPI_CHECK_ALL(rmc_register(x, 8) == RMC_ERR_NOT_INIT);
    MPI_CHECK_ALL(rmc_deregister(x) == RMC_ERR_NOT_INIT);
}

MPITEST_MAIN("register", NULL, NULL, test_register_nothread, test_register_thread,
             test_register_bigcache, test_not_init)
