/* The segment allocator (containers/heap.c) as a pure data structure: allocation, zeroing,
 * coalescing, bad frees, commit on demand, exhaustion, and a long random run against a model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../../containers/heap.h"
#include "../cmocka_main.h"

#define RANGE ((size_t)64 << 20)
static char *mem;
static size_t commit_calls, committed_to;
static size_t commit_limit; /* commits beyond this fail (0: none fail) */

static rmc_status_t commit_cb(void *ctx, size_t off, size_t len)
{
    (void)ctx;
    commit_calls++;
    if (commit_limit && off + len > commit_limit)
        return RMC_ERR_NOMEM;
    committed_to = off + len;
    return RMC_OK;
}

static void fresh(rmcc_heap_t *h, size_t first, size_t limit)
{
    if (!mem)
        mem = calloc(1, RANGE);
    memset(mem, 0, RANGE);
    commit_calls = committed_to = commit_limit = 0;
    rmcc_heap_init(h, mem, 4096, first, limit, commit_cb, NULL);
}

static int zeroed(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void test_basic(void **s)
{
    (void)s;
    rmcc_heap_t h;
    fresh(&h, 1 << 20, RANGE);
    size_t a, b, c, u;
    assert_int_equal(rmcc_heap_alloc(&h, 1, &a), RMC_OK);
    assert_int_equal(rmcc_heap_alloc(&h, 100, &b), RMC_OK);
    assert_int_equal(rmcc_heap_alloc(&h, 5000, &c), RMC_OK);
    assert_true(a % 16 == 0 && b % 16 == 0 && c % 16 == 0);
    assert_true(a >= 4096 && b >= a + 32 && c >= b + 100);
    assert_int_equal(rmcc_heap_usable(&h, b, &u), RMC_OK);
    assert_true(u >= 100);
    memset(mem + b, 0x5a, u);
    assert_int_equal(rmcc_heap_check(&h), 0);
    assert_int_equal(rmcc_heap_free(&h, b), RMC_OK);
    /* reuse of b's block: zeroed again */
    size_t d;
    assert_int_equal(rmcc_heap_alloc(&h, 64, &d), RMC_OK);
    assert_int_equal(d, b);
    assert_true(zeroed(mem + d, 64));
    assert_int_equal(rmcc_heap_check(&h), 0);
    assert_int_equal(rmcc_heap_alloc(&h, 0, &d), RMC_ERR_ARG);
    assert_int_equal(rmcc_heap_alloc(&h, RANGE * 2, &d), RMC_ERR_TOO_BIG);
}

static void test_bad_free(void **s)
{
    (void)s;
    rmcc_heap_t h;
    fresh(&h, 1 << 20, RANGE);
    size_t a, b;
    assert_int_equal(rmcc_heap_alloc(&h, 48, &a), RMC_OK);
    assert_int_equal(rmcc_heap_alloc(&h, 48, &b), RMC_OK);
    assert_int_equal(rmcc_heap_free(&h, a + 16), RMC_ERR_ARG); /* inside a block */
    assert_int_equal(rmcc_heap_free(&h, a + 3), RMC_ERR_ARG);  /* misaligned */
    assert_int_equal(rmcc_heap_free(&h, 0), RMC_ERR_ARG);
    assert_int_equal(rmcc_heap_free(&h, RANGE - 16), RMC_ERR_ARG); /* beyond the top */
    assert_int_equal(rmcc_heap_free(&h, a), RMC_OK);
    assert_int_equal(rmcc_heap_free(&h, a), RMC_ERR_STATE); /* double free */
    /* b's neighbour a is free: freeing b merges both, then a double free of b is still seen */
    assert_int_equal(rmcc_heap_free(&h, b), RMC_OK);
    assert_int_equal(rmcc_heap_free(&h, b), RMC_ERR_STATE);
    assert_int_equal(rmcc_heap_check(&h), 0);
    assert_int_equal(h.in_use, 0);
    assert_int_equal(h.top, h.start); /* everything went back to the wilderness */
}

/* Freed neighbours merge: after freeing three adjacent blocks one allocation of their total size
 * fits where they were. */
static void test_coalesce(void **s)
{
    (void)s;
    rmcc_heap_t h;
    fresh(&h, 1 << 20, RANGE);
    size_t x[5];
    for (int i = 0; i < 5; i++)
        assert_int_equal(rmcc_heap_alloc(&h, 1000, &x[i]), RMC_OK);
    assert_int_equal(rmcc_heap_free(&h, x[1]), RMC_OK);
    assert_int_equal(rmcc_heap_free(&h, x[3]), RMC_OK);
    assert_int_equal(rmcc_heap_check(&h), 0);
    assert_int_equal(rmcc_heap_free(&h, x[2]), RMC_OK); /* merges with both */
    assert_int_equal(rmcc_heap_check(&h), 0);
    size_t big;
    assert_int_equal(rmcc_heap_alloc(&h, 3000, &big), RMC_OK);
    assert_int_equal(big, x[1]);
    assert_int_equal(rmcc_heap_check(&h), 0);
}

/* Commit on demand: the heap grows through the callback, in steps, up to the limit; then NOMEM and
 * nothing changes. A failed commit is an error, not a crash. */
static void test_grow(void **s)
{
    (void)s;
    rmcc_heap_t h;
    fresh(&h, 8192, (size_t)16 << 20);
    size_t a, used = 0;
    int n = 0;
    while (rmcc_heap_alloc(&h, 100000, &a) == RMC_OK) {
        used += 100000;
        n++;
        assert_true(h.committed >= a + 100000);
        assert_true(committed_to == 0 || committed_to == h.committed);
    }
    assert_true(used > ((size_t)15 << 20) && used <= ((size_t)16 << 20));
    assert_true(commit_calls >= 2 && commit_calls < 20); /* steps, not one per allocation */
    assert_true(h.grows == commit_calls);
    size_t before = h.in_use;
    assert_int_equal(rmcc_heap_alloc(&h, 100000, &a), RMC_ERR_NOMEM);
    assert_int_equal(h.in_use, before);
    assert_int_equal(rmcc_heap_check(&h), 0);
    /* a commit that fails: NOMEM with the heap unchanged */
    fresh(&h, 8192, (size_t)16 << 20);
    commit_limit = (size_t)4 << 20;
    while (rmcc_heap_alloc(&h, 100000, &a) == RMC_OK)
        ;
    assert_true(h.top <= commit_limit);
    assert_int_equal(rmcc_heap_check(&h), 0);
    (void)n;
}

/* A random mix of allocations and frees of sizes 1 B .. 64 KiB against a model: blocks never
 * overlap, contents survive other operations, new blocks are zero, the invariants hold. */
static void test_random(void **s)
{
    (void)s;
    rmcc_heap_t h;
    fresh(&h, 1 << 20, RANGE);
    enum { SLOTS = 512 };
    size_t off[SLOTS] = {0}, len[SLOTS] = {0};
    unsigned char fill[SLOTS];
    unsigned seed = 12345;
    for (int it = 0; it < 40000; it++) {
        seed = seed * 1103515245u + 12345u;
        int i = (int)((seed >> 8) % SLOTS);
        if (len[i]) {
            for (size_t k = 0; k < len[i]; k++)
                assert_int_equal((unsigned char)mem[off[i] + k], fill[i]);
            assert_int_equal(rmcc_heap_free(&h, off[i]), RMC_OK);
            len[i] = 0;
        } else {
            seed = seed * 1103515245u + 12345u;
            size_t n = (seed >> 4) % 4 == 0 ? 1 + (seed >> 10) % 65536 : 1 + (seed >> 10) % 300;
            assert_int_equal(rmcc_heap_alloc(&h, n, &off[i]), RMC_OK);
            assert_true(zeroed(mem + off[i], n));
            len[i] = n;
            fill[i] = (unsigned char)(it | 1);
            memset(mem + off[i], fill[i], n);
            for (int j = 0; j < SLOTS; j++) /* no overlap with any live block */
                if (j != i && len[j])
                    assert_true(off[i] + n <= off[j] || off[j] + len[j] <= off[i]);
        }
        if (it % 2000 == 0)
            assert_int_equal(rmcc_heap_check(&h), 0);
    }
    for (int i = 0; i < SLOTS; i++)
        if (len[i])
            assert_int_equal(rmcc_heap_free(&h, off[i]), RMC_OK);
    assert_int_equal(rmcc_heap_check(&h), 0);
    assert_int_equal(h.in_use, 0);
    assert_int_equal(h.top, h.start);
    assert_true(h.peak > 0 && h.allocs == h.frees);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMOCKA_TESTS(test_basic, test_bad_free, test_coalesce, test_grow, test_random)};
    int rc = cmocka_run_group_tests_name("heap", tests, NULL, NULL);
    free(mem);
    return rc;
}
