/* The containers' foundation: the segment (reserved, committed on demand, growing), the
 * allocator (non-collective, owner frees, bad frees), global pointers (translation, locality,
 * bounds, data movement), operation counters and custom requests of comm. */
#include <pthread.h>
#define CTTEST_ENV "RMC_SEGMENT_SIZE=1M", "RMC_SEGMENT_RESERVE=64M"
#include "cttest.h"

/* Every rank's allocation of `bytes`, exchanged: all[r] is rank r's. */
static void exchange(rmc_gptr_t mine, rmc_gptr_t *all)
{
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
}

static void test_info(void **s)
{
    (void)s;
    rmc_segment_info_t si;
    MPI_CHECK_OK(rmc_segment_info(&si));
    MPI_CHECK_ALL(si.reserved == (size_t)64 << 20);
    MPI_CHECK_ALL(si.committed >= (size_t)1 << 20 && si.committed <= si.reserved);
    MPI_CHECK_ALL(rmc_segment_info(NULL) == RMC_ERR_ARG);
}

/* Allocate, hand the pointer out, every rank writes its piece into its right neighbour's block
 * (puts of gptrs), the owner reads it locally; gets back through gptrs; locality. */
static void test_alloc_remote(void **s)
{
    (void)s;
    enum { N = 4096 };
    rmc_gptr_t g, all[64];
    MPI_CHECK_OK(rmc_alloc(N, &g));
    MPI_CHECK_ALL(g.rank == me && !rmc_gptr_is_null(g));
    char *mine = rmc_gptr_local(g);
    int zero = 1;
    for (int i = 0; i < N; i++)
        zero &= mine[i] == 0;
    MPI_CHECK_ALL(zero);
    exchange(g, all);
    int right = (me + 1) % np, left = (me + np - 1) % np;
    char buf[N];
    for (int i = 0; i < N; i++)
        buf[i] = (char)(i * 3 + me);
    MPI_CHECK_OK(rmc_gptr_put(all[right], buf, N));
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= mine[i] == (char)(i * 3 + left);
    MPI_CHECK_ALL(ok);
    char got[N];
    MPI_CHECK_OK(rmc_gptr_get(got, rmc_gptr_add(all[right], 100), N - 100));
    MPI_CHECK_ALL(memcmp(got, buf + 100, N - 100) == 0);
    /* locality agrees with comm's view of the owner */
    MPI_CHECK_ALL(rmc_gptr_is_local(all[right]) == rmc_same_node(right));
    MPI_CHECK_ALL((rmc_gptr_local(all[right]) != NULL) == (rmc_same_node(right) == 1));
    rmc_gptr_t back;
    MPI_CHECK_OK(rmc_gptr_from_local(mine + 10, &back));
    MPI_CHECK_ALL(rmc_gptr_eq(back, rmc_gptr_add(g, 10)) && rmc_gptr_diff(back, g) == 10);
    /* an atomic on a gptr from every rank */
    int64_t old;
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_gptr_fetch_add_i64(all[0], 1, &old));
    MPI_CHECK_OK(rmc_barrier());
    int64_t v;
    MPI_CHECK_OK(rmc_gptr_load_i64(all[0], &v));
    /* rank 0's first 8 bytes hold its left neighbour's (rank np-1) pattern; np adds landed */
    int64_t base;
    char pat[8];
    for (int i = 0; i < 8; i++)
        pat[i] = (char)(i * 3 + (np - 1));
    memcpy(&base, pat, 8);
    MPI_CHECK_ALL(v == base + np);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_free(g));
}

/* Bad pointers and bad frees: clear statuses, nothing changes. */
static void test_bad(void **s)
{
    (void)s;
    rmc_gptr_t g, all[64];
    MPI_CHECK_OK(rmc_alloc(100, &g));
    exchange(g, all);
    int other = (me + 1) % np;
    char b[16];
    void *a;
    MPI_CHECK_ALL(rmc_free(RMC_GPTR_NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(np == 1 || rmc_free(all[other]) == RMC_ERR_ARG); /* foreign: only the owner */
    MPI_CHECK_ALL(strstr(rmc_last_error(), "only the owner") != NULL || np == 1);
    MPI_CHECK_ALL(rmc_free(rmc_gptr_add(g, 16)) == RMC_ERR_ARG); /* not a block's start */
    MPI_CHECK_ALL(rmc_alloc(0, &g) == RMC_ERR_ARG && rmc_gptr_is_null(g));
    MPI_CHECK_ALL(rmc_alloc(16, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_alloc(SIZE_MAX, &g) == RMC_ERR_TOO_BIG && rmc_gptr_is_null(g) &&
                  strstr(rmc_last_error(), "whole segment") != NULL);
    MPI_CHECK_ALL(rmc_gptr_put(RMC_GPTR_NULL, b, 8) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_gptr_get(b, (rmc_gptr_t){np + 3, 0, 0}, 8) == RMC_ERR_RANK);
    MPI_CHECK_ALL(rmc_gptr_get(b, (rmc_gptr_t){0, 0, (uint64_t)1 << 40}, 8) == RMC_ERR_BOUNDS);
    MPI_CHECK_ALL(rmc_gptr_addr(RMC_GPTR_NULL, &a) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_gptr_local(RMC_GPTR_NULL) == NULL);
    MPI_CHECK_ALL(rmc_gptr_is_local(RMC_GPTR_NULL) < 0);
    MPI_CHECK_ALL(rmc_gptr_from_local(b, &g) == RMC_ERR_NOT_REGION);
    /* a zero-initialized pointer is rank 0's offset 0, the layer's control area (its collectives'
     * arrival counter: a put there broke every later container collective): refused */
    rmc_gptr_t zero;
    memset(&zero, 0, sizeof zero);
    int64_t z = 0;
    MPI_CHECK_ALL(rmc_gptr_put(zero, &z, 8) == RMC_ERR_BOUNDS &&
                  strstr(rmc_last_error(), "control area") != NULL);
    MPI_CHECK_ALL(rmc_gptr_get(&z, (rmc_gptr_t){np - 1, 0, 4088}, 8) == RMC_ERR_BOUNDS);
    MPI_CHECK_ALL(rmc_gptr_local(zero) == NULL && rmc_gptr_addr(zero, &a) == RMC_ERR_BOUNDS);
    char *base = (char *)rmc_gptr_local(all[me]) - all[me].off;
    MPI_CHECK_ALL(rmc_gptr_from_local(base + 8, &g) == RMC_ERR_NOT_REGION);
    /* a request beyond the whole reservation can never fit: TOO_BIG, not "full" */
    rmc_segment_info_t si;
    MPI_CHECK_OK(rmc_segment_info(&si));
    MPI_CHECK_ALL(rmc_alloc(si.reserved - 4096, &g) == RMC_ERR_TOO_BIG &&
                  strstr(rmc_last_error(), "whole segment") != NULL);
    MPI_CHECK_OK(rmc_free(all[me]));
    MPI_CHECK_ALL(rmc_free(all[me]) == RMC_ERR_STATE); /* double free */
    MPI_CHECK_ALL(strstr(rmc_last_error(), "double free") != NULL);
    size_t sz;
    MPI_CHECK_ALL(rmc_alloc_size(all[me], &sz) == RMC_ERR_STATE);
    MPI_CHECK_OK(rmc_barrier());
}

/* The segment grows past its first commit (1 MiB here), grown memory is reached by every rank
 * like the first, and the reservation (64 MiB) ends it with RMC_ERR_NOMEM; freeing makes room. */
static void test_grow(void **s)
{
    (void)s;
    enum { CH = 1 << 20, MAXC = 80 };
    rmc_gptr_t ch[MAXC];
    int n = 0;
    rmc_segment_info_t a, b;
    MPI_CHECK_OK(rmc_segment_info(&a));
    rmc_status_t st = RMC_OK;
    while (n < MAXC && (st = rmc_alloc(CH, &ch[n])) == RMC_OK)
        n++;
    MPI_CHECK_ALL(st == RMC_ERR_NOMEM && n >= 55 && n < 64);
    MPI_CHECK_ALL(strstr(rmc_last_error(), "RMC_SEGMENT_RESERVE") != NULL);
    MPI_CHECK_OK(rmc_segment_info(&b));
    MPI_CHECK_ALL(b.grows > a.grows && b.committed > a.committed + (size_t)50 * CH);
    /* the last chunk (deep in grown memory) of every rank, written by its left neighbour */
    rmc_gptr_t all[64];
    exchange(ch[n - 1], all);
    int right = (me + 1) % np;
    uint64_t v = 0xabcdef00u + (unsigned)me;
    MPI_CHECK_OK(rmc_gptr_put(rmc_gptr_add(all[right], CH - 8), &v, 8));
    MPI_CHECK_OK(rmc_barrier());
    uint64_t w;
    memcpy(&w, (char *)rmc_gptr_local(ch[n - 1]) + CH - 8, 8);
    MPI_CHECK_ALL(w == 0xabcdef00u + (unsigned)((me + np - 1) % np));
    MPI_CHECK_OK(rmc_barrier());
    for (int i = 0; i < n; i++)
        MPI_CHECK_OK(rmc_free(ch[i]));
    MPI_CHECK_OK(rmc_alloc(CH * 30, &ch[0])); /* the space is back, in one piece */
    MPI_CHECK_OK(rmc_free(ch[0]));
    MPI_CHECK_OK(rmc_segment_info(&b));
    MPI_CHECK_ALL(b.in_use == a.in_use);
}

/* Allocation from two threads at once (the allocator's lock): no overlap, every block intact. */
typedef struct {
    rmc_gptr_t g[200];
    int ok;
} th_t;
static void *churn(void *arg)
{
    th_t *t = arg;
    t->ok = 1;
    for (int r = 0; r < 20; r++) {
        for (int i = 0; i < 200; i++) {
            if (rmc_alloc(16 + (size_t)(i % 7) * 40, &t->g[i]) != RMC_OK) {
                t->ok = 0;
                return NULL;
            }
            memset(rmc_gptr_local(t->g[i]), (int)(i & 0x7f) + 1, 16);
        }
        for (int i = 0; i < 200; i++) {
            unsigned char *p = rmc_gptr_local(t->g[i]);
            for (int k = 0; k < 16; k++)
                t->ok &= p[k] == (unsigned char)((i & 0x7f) + 1);
            t->ok &= rmc_free(t->g[i]) == RMC_OK;
        }
    }
    return NULL;
}
static void test_threads(void **s)
{
    (void)s;
    rmc_segment_info_t s0;
    MPI_CHECK_OK(rmc_segment_info(&s0));
    unsigned long long si_live_before = s0.allocs - s0.frees;
    th_t a, b;
    pthread_t t;
    pthread_create(&t, NULL, churn, &a);
    churn(&b);
    pthread_join(t, NULL);
    MPI_CHECK_ALL(a.ok && b.ok);
    rmc_segment_info_t si;
    MPI_CHECK_OK(rmc_segment_info(&si));
    MPI_CHECK_ALL(si.allocs - si.frees == si_live_before);
}

/* comm's operation counters: one per call, by kind, bytes. */
static void test_op_counts(void **s)
{
    (void)s;
    rmc_gptr_t g, all[64];
    MPI_CHECK_OK(rmc_alloc(64, &g));
    exchange(g, all);
    int t = (me + 1) % np;
    MPI_CHECK_OK(rmc_op_counts_enable(1));
    char b[64] = {0};
    int64_t old;
    MPI_CHECK_OK(rmc_gptr_put(all[t], b, 40));
    MPI_CHECK_OK(rmc_gptr_get(b, all[t], 24));
    MPI_CHECK_OK(rmc_gptr_get(b, all[t], 8));
    MPI_CHECK_OK(rmc_gptr_fetch_add_i64(rmc_gptr_add(all[t], 48), 1, &old));
    rmc_op_counts_t c;
    MPI_CHECK_OK(rmc_op_counts(&c));
    MPI_CHECK_ALL(c.writes == 1 && c.write_bytes == 40 && c.reads == 2 && c.read_bytes == 32 &&
                  c.atomics == 1 && c.atomic_bytes == 8 && c.accs == 0);
    MPI_CHECK_OK(rmc_op_counts_enable(0));
    MPI_CHECK_OK(rmc_gptr_put(all[t], b, 40));
    MPI_CHECK_OK(rmc_op_counts(&c));
    MPI_CHECK_ALL(c.writes == 0 && c.reads == 0);
    MPI_CHECK_ALL(rmc_op_counts(NULL) == RMC_ERR_ARG);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_free(g));
}

/* comm's custom requests: a three-step operation advanced by rmc_test / rmc_wait; its error is the
 * request's status; its state is released once. */
typedef struct {
    int steps, fail_at, released;
} cst_t;
static rmc_status_t cstep(void *state, int *done)
{
    cst_t *c = state;
    if (++c->steps == c->fail_at) {
        c->released++;
        return RMC_ERR_FULL;
    }
    if (c->steps == 3) {
        c->released++;
        *done = 1;
    }
    return RMC_OK;
}
static void test_custom_request(void **s)
{
    (void)s;
    /* (no agreement between the steps: the harness's waits are RMC waits, which advance it) */
    cst_t a = {0, 0, 0}, b = {0, 2, 0};
    rmc_request_h q;
    int done = 0, ok = 1;
    MPITEST_EXPECT(ok, rmc_request_custom(cstep, &a, &q) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_test(&q, &done) == RMC_OK);
    MPITEST_EXPECT(ok, !done && a.steps == 1 && q != RMC_REQUEST_NULL);
    MPITEST_EXPECT(ok, rmc_wait(&q) == RMC_OK);
    MPITEST_EXPECT(ok, a.steps == 3 && a.released == 1 && q == RMC_REQUEST_NULL);
    MPITEST_EXPECT(ok, rmc_request_custom(cstep, &b, &q) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_test(&q, &done) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_test(&q, &done) == RMC_ERR_FULL && done && q == RMC_REQUEST_NULL);
    MPITEST_EXPECT(ok, b.steps == 2 && b.released == 1);
    MPI_CHECK_ALL(ok);
    /* RMC's waits advance it too: three rmc_progress calls finish it, the test only reports */
    cst_t c = {0, 0, 0};
    MPITEST_EXPECT(ok, rmc_request_custom(cstep, &c, &q) == RMC_OK);
    for (int i = 0; i < 5; i++)
        MPITEST_EXPECT(ok, rmc_progress() == RMC_OK);
    MPITEST_EXPECT(ok, c.steps == 3 && c.released == 1 && q != RMC_REQUEST_NULL);
    done = 0;
    MPITEST_EXPECT(ok, rmc_test(&q, &done) == RMC_OK);
    MPITEST_EXPECT(ok, done && q == RMC_REQUEST_NULL && c.steps == 3);
    MPI_CHECK_ALL(ok);
    cst_t e = {0, 1, 0}; /* fails at its first step, inside rmc_barrier */
    MPI_CHECK_OK(rmc_request_custom(cstep, &e, &q));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(e.steps == 1 && e.released == 1);
    MPI_CHECK_ALL(rmc_wait(&q) == RMC_ERR_FULL && q == RMC_REQUEST_NULL);
    MPI_CHECK_ALL(rmc_request_custom(NULL, &a, &q) == RMC_ERR_ARG && q == RMC_REQUEST_NULL);
    MPI_CHECK_ALL(rmc_request_custom(cstep, &a, NULL) == RMC_ERR_ARG);
}

/* RMC_SEGMENT_SIZE that is negative (strtoull took "-1" as 2^64 - 1, which rounded up to 0 bytes),
 * beyond any memory or not decimal (hex was read) refuses rmc_init with the knob named; a good one
 * works again. */
static void test_bad_size(void **s)
{
    (void)s;
    static const char *const bad[] = {"-1", "-4096", "5000T", "1M-", "0x100000"};
    MPI_CHECK_OK(rmc_finalize());
    for (int i = 0; i < 5; i++) {
        setenv("RMC_SEGMENT_SIZE", bad[i], 1);
        rmc_status_t st = rmc_init(MPI_COMM_WORLD);
        MPI_CHECK_ALL(st == RMC_ERR_ARG && !rmc_initialized() &&
                      strstr(rmc_last_error(), "RMC_SEGMENT_SIZE") != NULL);
    }
    setenv("RMC_SEGMENT_SIZE", "1M", 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
}

MPITEST_MAIN("segment", cttest_setup, mpitest_teardown_rmc, test_info, test_alloc_remote, test_bad,
             test_grow, test_threads, test_op_counts, test_custom_request, test_bad_size)
