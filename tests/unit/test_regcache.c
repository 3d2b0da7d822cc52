/* Unit tests of the remote registration cache (comm/progress/regcache.c): lookups, LFU eviction
 * with dynamic aging, overlap replacement, removal, bounded size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "../cmocka_main.h"
#include "../../comm/progress/regcache.h"

static void test_find_bounds(void **state)
{
    (void)state;
    rmci_regcache_t c;
    assert_int_equal(rmci_rc_init(&c, 8), 0);
    assert_non_null(rmci_rc_insert(&c, 1, 1000, 2000, 11));
    assert_non_null(rmci_rc_insert(&c, 1, 3000, 3100, 12));
    assert_non_null(rmci_rc_insert(&c, 0, 1000, 2000, 13)); /* same range, other rank */
    assert_non_null(rmci_rc_insert(&c, 2, 0, 10, 14));
    rmci_rc_ent_t *e = rmci_rc_find(&c, 1, 1000);
    assert_non_null(e);
    assert_int_equal(e->id, 11);
    e = rmci_rc_find(&c, 1, 1999);
    assert_non_null(e);
    assert_int_equal(e->id, 11);
    assert_null(rmci_rc_find(&c, 1, 2000)); /* hi is exclusive */
    assert_null(rmci_rc_find(&c, 1, 999));
    assert_null(rmci_rc_find(&c, 1, 2500)); /* gap */
    assert_int_equal(rmci_rc_find(&c, 1, 3050)->id, 12);
    assert_int_equal(rmci_rc_find(&c, 0, 1500)->id, 13);
    assert_int_equal(rmci_rc_find(&c, 2, 0)->id, 14);
    assert_null(rmci_rc_find(&c, 3, 5));
    assert_null(rmci_rc_find(&c, 0, 3050));
    assert_int_equal(c.hits, 5);
    assert_int_equal(c.misses, 5);
    /* sorted by (rank, lo) */
    for (size_t i = 1; i < c.n; i++)
        assert_true(c.e[i - 1].rank < c.e[i].rank ||
                    (c.e[i - 1].rank == c.e[i].rank && c.e[i - 1].hi <= c.e[i].lo));
    assert_null(rmci_rc_insert(&c, 1, 50, 50, 1)); /* empty range refused */
    assert_int_equal(c.n, 4);
    rmci_rc_destroy(&c);
}

static void test_lfu_eviction(void **state)
{
    (void)state;
    rmci_regcache_t c;
    assert_int_equal(rmci_rc_init(&c, 3), 0);
    rmci_rc_insert(&c, 0, 0, 100, 1);   /* A */
    rmci_rc_insert(&c, 0, 100, 200, 2); /* B */
    rmci_rc_insert(&c, 0, 200, 300, 3); /* C */
    for (int i = 0; i < 5; i++)
        assert_non_null(rmci_rc_find(&c, 0, 50)); /* A used often */
    assert_non_null(rmci_rc_find(&c, 0, 250));    /* C once more */
    /* B is least frequently used */
    rmci_rc_insert(&c, 0, 300, 400, 4);
    assert_int_equal(c.n, 3);
    assert_int_equal(c.evictions, 1);
    assert_null(rmci_rc_find(&c, 0, 150));
    assert_non_null(rmci_rc_find(&c, 0, 50));
    assert_non_null(rmci_rc_find(&c, 0, 250));
    assert_non_null(rmci_rc_find(&c, 0, 350));
    rmci_rc_destroy(&c);
}

static void test_lfu_tie_lru(void **state)
{
    (void)state;
    rmci_regcache_t c;
    assert_int_equal(rmci_rc_init(&c, 2), 0);
    rmci_rc_insert(&c, 5, 0, 10, 1);
    rmci_rc_insert(&c, 5, 10, 20, 2);
    /* same frequency: the least recently used goes */
    rmci_rc_insert(&c, 5, 20, 30, 3);
    assert_null(rmci_rc_find(&c, 5, 5));
    assert_non_null(rmci_rc_find(&c, 5, 15));
    assert_non_null(rmci_rc_find(&c, 5, 25));
    rmci_rc_destroy(&c);
}

/* Dynamic aging: an entry that was popular long ago does not stay forever. */
static void test_lfu_aging(void **state)
{
    (void)state;
    rmci_regcache_t c;
    assert_int_equal(rmci_rc_init(&c, 2), 0);
    rmci_rc_insert(&c, 0, 0, 10, 1); /* old star */
    for (int i = 0; i < 4; i++)
        rmci_rc_find(&c, 0, 5);
    /* a stream of new ranges, each used a few times (fewer than the star): with plain LFU the star
     * would stay forever; with aging it goes after a couple of insertions */
    uintptr_t lo = 100;
    int star_evicted = 0, k;
    for (k = 0; k < 20 && !star_evicted; k++, lo += 10) {
        rmci_rc_insert(&c, 0, lo, lo + 10, 100 + (uint64_t)k);
        for (int i = 0; i < 3; i++)
            rmci_rc_find(&c, 0, lo);
        star_evicted = 1; /* look without touching */
        for (size_t i = 0; i < c.n; i++)
            if (c.e[i].id == 1)
                star_evicted = 0;
    }
    assert_true(k <= 3);
    assert_true(star_evicted);
    rmci_rc_destroy(&c);
}

static void test_overlap_and_remove(void **state)
{
    (void)state;
    rmci_regcache_t c;
    assert_int_equal(rmci_rc_init(&c, 4), 0);
    rmci_rc_insert(&c, 0, 0, 100, 1);
    rmci_rc_insert(&c, 0, 200, 300, 2);
    rmci_rc_insert(&c, 1, 50, 250, 3);
    /* a new registration of rank 0 overlapping both: they were stale, both replaced */
    rmci_rc_insert(&c, 0, 50, 250, 4);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.evictions, 0);
    assert_int_equal(rmci_rc_find(&c, 0, 100)->id, 4);
    assert_null(rmci_rc_find(&c, 0, 10));
    assert_null(rmci_rc_find(&c, 0, 260));
    assert_int_equal(rmci_rc_find(&c, 1, 100)->id, 3); /* other rank untouched */
    assert_int_equal(rmci_rc_remove(&c, 0, 249), 1);
    assert_int_equal(rmci_rc_remove(&c, 0, 249), 0);
    assert_null(rmci_rc_find(&c, 0, 100));
    assert_int_equal(c.n, 1);
    rmci_rc_destroy(&c);
}

/* Random workload against a reference: never more than cap entries, every hit is right. */
static void test_random_reference(void **state)
{
    (void)state;
    enum { CAP = 4, RANKS = 3, SLOTS = 6 };
    rmci_regcache_t c;
    assert_int_equal(rmci_rc_init(&c, CAP), 0);
    uint64_t truth[RANKS][SLOTS] = {{0}};
    uint64_t next = 1;
    srand(12345);
    for (int it = 0; it < 20000; it++) {
        int r = rand() % RANKS, s = rand() % SLOTS;
        uintptr_t lo = (uintptr_t)s * 4096, a = lo + (uintptr_t)(rand() % 4096);
        if (rand() % 5 == 0) { /* the peer re-registers the slot: new id */
            truth[r][s] = next++;
            rmci_rc_insert(&c, r, lo, lo + 4096, truth[r][s]);
        } else {
            rmci_rc_ent_t *e = rmci_rc_find(&c, r, a);
            if (e) {
                assert_true(e->lo <= a && a < e->hi && e->rank == r);
                /* an id may be stale only if the cache never saw the new one: here it always did */
                assert_int_equal(e->id, truth[r][s]);
            } else if (truth[r][s]) {
                rmci_rc_insert(&c, r, lo, lo + 4096, truth[r][s]);
            }
        }
        assert_true(c.n <= CAP);
    }
    assert_true(c.evictions > 0 && c.hits > 0);
    rmci_rc_destroy(&c);
}

static void test_capacity_one(void **state)
{
    (void)state;
    rmci_regcache_t c;
    assert_int_equal(rmci_rc_init(&c, 0), 0); /* clamped to 1 */
    assert_int_equal(c.cap, 1);
    rmci_rc_insert(&c, 0, 0, 8, 1);
    rmci_rc_insert(&c, 0, 8, 16, 2);
    assert_int_equal(c.n, 1);
    assert_null(rmci_rc_find(&c, 0, 0));
    assert_int_equal(rmci_rc_find(&c, 0, 8)->id, 2);
    rmci_rc_destroy(&c);
}

UNITTEST_MAIN("regcache", test_find_bounds, test_lfu_eviction, test_lfu_tie_lru, test_lfu_aging,
              test_overlap_and_remove, test_random_reference, test_capacity_one)
