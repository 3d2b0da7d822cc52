/* The containers from several threads per rank at once (RMC thread-safe: MPI_THREAD_MULTIPLE):
 * every thread of every rank pushes to and pops from one queue (each kind; fixed and
 * variable-length elements, blocking and non-blocking), and the multiset popped is exactly the one
 * pushed; threads put / get disjoint ranges of a distributed array and allocate and free global
 * memory. */
#include "cttest.h"
#include "threadtest.h"

enum { PER = 24 }; /* elements each thread pushes (and pops) */

typedef struct {
    rmc_queue_h q;
    int strings;            /* elements are strings ("r.t.i"), else int64 tags */
    int64_t got[NT][PER];   /* what each thread popped, as tags */
} qctx_t;

static int64_t tag(int r, int t, int i)
{
    return ((int64_t)r << 32) | ((int64_t)t << 16) | i;
}

static int push_one(targ_t *a, qctx_t *c, int i)
{
    int64_t v = tag(me, a->tid, i);
    char text[32], *p = text;
    snprintf(text, sizeof(text), "%lld", (long long)v);
    const void *e = c->strings ? (const void *)&p : (const void *)&v;
    rmc_status_t st;
    if (i % 3 == 2) { /* non-blocking */
        rmc_request_h r;
        st = rmc_queue_push_nb(c->q, e, RMC_PROMISE_ANY, &r);
        if (st == RMC_OK)
            st = rmc_wait(&r);
    } else {
        st = rmc_queue_push(c->q, e, RMC_PROMISE_ANY);
    }
    return st == RMC_OK;
}

/* Pops one element into got[n]: 1 done, 0 empty for now, -1 failure. */
static int pop_one(targ_t *a, qctx_t *c, int n)
{
    int64_t v = -1;
    char *p = NULL;
    void *e = c->strings ? (void *)&p : (void *)&v;
    rmc_status_t st;
    if (n % 2) {
        rmc_request_h r;
        st = rmc_queue_pop_nb(c->q, e, RMC_PROMISE_ANY, &r);
        if (st == RMC_OK)
            st = rmc_wait(&r);
    } else {
        st = rmc_queue_pop(c->q, e, RMC_PROMISE_ANY);
    }
    if (st == RMC_ERR_EMPTY)
        return 0;
    if (st != RMC_OK)
        return -1;
    if (c->strings) {
        v = p ? strtoll(p, NULL, 10) : -1;
        static const rmc_type_t str32 = RMC_TYPE_STRING(32);
        rmc_type_release(&str32, &p);
    }
    c->got[a->tid][n] = v;
    return 1;
}

static void *queue_body(void *arg)
{
    targ_t *a = arg;
    qctx_t *c = a->extra;
    int pushed = 0, popped = 0;
    while (a->ok && popped < PER) {
        if (pushed < PER)
            a->ok &= push_one(a, c, pushed++);
        int r = pop_one(a, c, popped);
        if (r < 0)
            a->ok = 0;
        popped += r > 0;
        if (r == 0 && pushed == PER)
            rmc_progress();
    }
    return NULL;
}

static void queue_threads(rmc_queue_kind_t kind, int strings)
{
    static const rmc_type_t str32 = RMC_TYPE_STRING(32);
    qctx_t *c = calloc(1, sizeof(*c));
    c->strings = strings;
    size_t total = (size_t)np * NT * PER;
    MPI_CHECK_OK(rmc_queue_create(kind, np - 1, total, strings ? &str32 : &rmc_type_i64, &c->q));
    targ_t *a = threadtest_run(queue_body, NULL, c);
    int ok = threadtest_ok(a);
    free(a);
    MPI_CHECK_OK(rmc_barrier());
    int64_t *all = malloc(total * sizeof(int64_t));
    MPI_Allgather(c->got, NT * PER, MPI_INT64_T, all, NT * PER, MPI_INT64_T, MPI_COMM_WORLD);
    char *seen = calloc(total, 1);
    for (size_t i = 0; i < total && ok; i++) {
        int64_t r = all[i] >> 32, t = (all[i] >> 16) & 0xffff, k = all[i] & 0xffff;
        ok &= all[i] >= 0 && r < np && t < NT && k < PER;
        if (ok) {
            size_t idx = ((size_t)r * NT + (size_t)t) * PER + (size_t)k;
            ok &= !seen[idx];
            seen[idx] = 1;
        }
    }
    if (!ok)
        fprintf(stderr, "[rank %d] queue kind %d strings %d: wrong multiset\n", me, (int)kind,
                strings);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_queue_destroy(c->q));
    free(seen);
    free(all);
    free(c);
}

static void test_circular(void **s)
{
    (void)s;
    queue_threads(RMC_QUEUE_CIRCULAR, 0);
    queue_threads(RMC_QUEUE_CIRCULAR, 1);
}

static void test_checksum(void **s)
{
    (void)s;
    queue_threads(RMC_QUEUE_CHECKSUM, 0);
    queue_threads(RMC_QUEUE_CHECKSUM, 1);
}

/* Arrays and the allocator: each thread writes its own range of a distributed array on every rank
 * and reads back another thread's, and allocates, uses and frees global memory meanwhile. */
#define AW 8
static void *array_body(void *arg)
{
    targ_t *a = arg;
    rmc_array_h arr = a->extra;
    int64_t v[AW], w[AW];
    for (int rep = 0; rep < 3; rep++) {
        size_t first = ((size_t)me * NT + (size_t)a->tid) * AW;
        for (int i = 0; i < AW; i++)
            v[i] = tag(me, a->tid, rep * AW + i);
        a->ok &= rmc_array_put_range(arr, first, AW, v) == RMC_OK;
        a->ok &= rmc_array_get_range(arr, first, AW, w) == RMC_OK;
        a->ok &= memcmp(v, w, sizeof(v)) == 0;
        rmc_gptr_t g;
        a->ok &= rmc_alloc(64 + 8 * (size_t)a->tid, &g) == RMC_OK;
        int64_t x = tag(me, a->tid, rep), y = 0;
        a->ok &= rmc_gptr_put(g, &x, sizeof(x)) == RMC_OK && rmc_gptr_get(&y, g, sizeof(y)) == RMC_OK;
        a->ok &= x == y && rmc_free(g) == RMC_OK;
    }
    return NULL;
}

static void test_array_alloc(void **s)
{
    (void)s;
    rmc_array_h arr;
    MPI_CHECK_OK(rmc_array_create((size_t)np * NT * AW, &rmc_type_i64, RMC_ARRAY_BLOCK, &arr));
    targ_t *a = threadtest_run(array_body, NULL, arr);
    int ok = threadtest_ok(a);
    free(a);
    MPI_CHECK_OK(rmc_barrier());
    /* every slot holds its writer's last round */
    int64_t w[AW];
    for (int r = 0; r < np && ok; r++)
        for (int t = 0; t < NT && ok; t++) {
            ok &= rmc_array_get_range(arr, ((size_t)r * NT + (size_t)t) * AW, AW, w) == RMC_OK;
            for (int i = 0; i < AW; i++)
                ok &= w[i] == tag(r, t, 2 * AW + i);
        }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_array_destroy(arr));
}

/* The hash map and a Bloom filter: every thread of every rank inserts its own keys (each thread
 * also the same shared keys: one entry each), updates the shared ones, finds the others' keys
 * (blocking and non-blocking), and inserts into a filter. Exact contents afterwards. */
#define HK 16
typedef struct hm_ctx {
    rmc_hashmap_h h;
    rmc_bloom_h f;
} hm_ctx_t;

static rmc_status_t plus_one(void *value, void *arg)
{
    (void)arg;
    (*(int64_t *)value)++;
    return RMC_OK;
}

static void *hashmap_body(void *arg)
{
    targ_t *a = arg;
    hm_ctx_t *c = a->extra;
    int64_t zero = 0;
    for (int i = 0; i < HK; i++) {
        int64_t k = tag(me, a->tid, i), v = k ^ 5, sk = -1 - i;
        a->ok &= rmc_hashmap_insert(c->h, &k, &v, 0) == RMC_OK;
        a->ok &= rmc_hashmap_insert(c->h, &sk, &zero, RMC_PROMISE_INSERT) == RMC_OK ||
                 rmc_hashmap_find(c->h, &sk, &v, 0) == RMC_OK;
        a->ok &= rmc_bloom_insert(c->f, &k, NULL, 0) == RMC_OK;
    }
    return NULL;
}

static void *hashmap_body2(void *arg)
{
    targ_t *a = arg;
    hm_ctx_t *c = a->extra;
    rmc_request_h rq[HK];
    int64_t got[HK], keys[HK];
    int nx = (me + 1) % np;
    for (int i = 0; i < HK; i++) {
        int64_t sk = -1 - i;
        a->ok &= rmc_hashmap_update(c->h, &sk, plus_one, NULL, 0) == RMC_OK;
        keys[i] = tag(nx, (a->tid + 1) % NT, i);
        a->ok &= rmc_hashmap_find_nb(c->h, &keys[i], &got[i], 0, &rq[i]) == RMC_OK;
        int present = 0;
        a->ok &= rmc_bloom_find(c->f, &keys[i], &present, 0) == RMC_OK && present;
    }
    a->ok &= rmc_wait_all(rq, HK) == RMC_OK;
    for (int i = 0; i < HK; i++)
        a->ok &= got[i] == (keys[i] ^ 5);
    return NULL;
}

static void test_hashmap_bloom(void **s)
{
    (void)s;
    hm_ctx_t c;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)np * NT * HK * 4 + 64, &rmc_type_i64, &rmc_type_i64,
                                    &c.h));
    MPI_CHECK_OK(rmc_bloom_create(RMC_BLOOM_BLOCKED, (size_t)np * NT * HK, 0.01, &rmc_type_i64,
                                  &c.f));
    targ_t *a = threadtest_run(hashmap_body, NULL, &c);
    int ok = threadtest_ok(a);
    free(a);
    MPI_CHECK_OK(rmc_barrier());
    a = threadtest_run(hashmap_body2, NULL, &c);
    ok &= threadtest_ok(a);
    free(a);
    MPI_CHECK_OK(rmc_barrier());
    size_t n = 0;
    MPI_CHECK_OK(rmc_hashmap_count(c.h, &n));
    ok &= n == (size_t)(np * NT * HK + HK);
    for (int i = 0; i < HK; i++) {
        int64_t sk = -1 - i, v = -1;
        ok &= rmc_hashmap_find(c.h, &sk, &v, RMC_PROMISE_FIND) == RMC_OK && v == np * NT;
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_bloom_destroy(c.f));
    MPI_CHECK_OK(rmc_hashmap_destroy(c.h));
}

MPITEST_MAIN("ct_threads", cttest_setup, mpitest_teardown_rmc, test_circular, test_checksum,
             test_array_alloc, test_hashmap_bloom)
