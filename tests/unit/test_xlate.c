/* Unit tests of the translation cache (comm/xlate.c): no MPI, one process.
 *
 * Entries are (rank, [lo, hi)) in that rank's address space; owners are opaque pointers. The tests
 * use made-up addresses (the cache never dereferences them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "../cmocka_main.h"
#include "../../comm/xlate.h"

/* Owners are distinct fake pointers. */
static void *owner(uintptr_t i)
{
    return (void *)(0x10000 + 16 * i);
}

/* Inserts one region with the same base and size on each of `nranks` ranks. */
static void insert1(rmci_xlate_t *x, uintptr_t id, int nranks, uintptr_t base, size_t size)
{
    uintptr_t bases[64];
    size_t sizes[64];
    assert_true(nranks <= 64);
    for (int r = 0; r < nranks; r++) {
        bases[r] = base;
        sizes[r] = size;
    }
    assert_int_equal(rmci_xlate_insert(x, owner(id), nranks, bases, sizes, NULL), RMC_OK);
}

static rmc_status_t find(rmci_xlate_t *x, int rank, uintptr_t addr, size_t len, void **own)
{
    const rmci_xent_t *e = NULL;
    rmc_status_t st = rmci_xlate_find(x, rank, addr, len, &e);
    if (own)
        *own = (st == RMC_OK || st == RMC_ERR_BOUNDS) ? e->owner : NULL;
    if (st == RMC_OK || st == RMC_ERR_BOUNDS) {
        assert_non_null(e);
        assert_int_equal(e->rank, rank);
        assert_true(addr >= e->lo && addr < e->hi);
    }
    return st;
}

/* Entries must stay sorted by (rank, lo) and hold only non-empty ranges. */
static void check_sorted(const rmci_xlate_t *x)
{
    for (size_t i = 0; i < x->n; i++) {
        assert_true(x->ents[i].hi > x->ents[i].lo);
        if (i > 0) {
            const rmci_xent_t *a = &x->ents[i - 1], *b = &x->ents[i];
            assert_true(a->rank < b->rank || (a->rank == b->rank && a->lo < b->lo));
        }
    }
}

static void test_empty(void **state)
{
    (void)state;
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    const rmci_xent_t *e = NULL;
    assert_int_equal(rmci_xlate_find(&x, 0, 0, 1, &e), RMC_ERR_NOT_REGION);
    assert_int_equal(rmci_xlate_find(&x, 0, 0x1000, 1, &e), RMC_ERR_NOT_REGION);
    /* MRU slots are empty: rank -1 with an empty range must not match anything, even rank -1 */
    assert_int_equal(rmci_xlate_find(&x, -1, 0, 1, &e), RMC_ERR_NOT_REGION);
    assert_int_equal(x.n, 0);
    rmci_xlate_destroy(&x);
}

static void test_boundaries(void **state)
{
    (void)state;
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    const uintptr_t lo = 0x100000;
    const size_t sz = 4096;
    insert1(&x, 1, 2, lo, sz);
    assert_int_equal(x.n, 2);
    void *o;
    /* first byte, last byte, the whole range */
    assert_int_equal(find(&x, 0, lo, 1, &o), RMC_OK);
    assert_ptr_equal(o, owner(1));
    assert_int_equal(find(&x, 1, lo + sz - 1, 1, &o), RMC_OK);
    assert_ptr_equal(o, owner(1));
    assert_int_equal(find(&x, 0, lo, sz, &o), RMC_OK);
    assert_int_equal(find(&x, 1, lo + 100, sz - 100, &o), RMC_OK);
    /* one past the end and one before the start: not a region */
    assert_int_equal(find(&x, 0, lo + sz, 1, &o), RMC_ERR_NOT_REGION);
    assert_int_equal(find(&x, 1, lo - 1, 1, &o), RMC_ERR_NOT_REGION);
    assert_int_equal(find(&x, 0, lo - 1, 2, &o), RMC_ERR_NOT_REGION);
    /* ranges crossing the end: bounds, both through the MRU front and through the search */
    assert_int_equal(find(&x, 0, lo, sz + 1, &o), RMC_ERR_BOUNDS);
    assert_int_equal(find(&x, 0, lo + sz - 2, 3, &o), RMC_ERR_BOUNDS);
    assert_int_equal(find(&x, 1, lo + sz - 1, 2, &o), RMC_ERR_BOUNDS);
    assert_int_equal(find(&x, 1, lo + sz - 1, SIZE_MAX, &o), RMC_ERR_BOUNDS);
    for (int i = 0; i < RMCI_XLATE_MRU; i++) /* empty the front: force the search */
        x.mru[i] = (rmci_xent_t){.rank = -1, .lo = 0, .hi = 0, .owner = NULL};
    assert_int_equal(find(&x, 0, lo + 1, sz, &o), RMC_ERR_BOUNDS);
    /* a rank with no entry at all */
    assert_int_equal(find(&x, 2, lo, 1, &o), RMC_ERR_NOT_REGION);
    assert_int_equal(find(&x, -1, lo, 1, &o), RMC_ERR_NOT_REGION);
    rmci_xlate_destroy(&x);
}

/* Adjacent regions: the last byte of one and the first of the next resolve to different owners; a
 * range spanning both is a bounds error (it leaves the first region). */
static void test_adjacent(void **state)
{
    (void)state;
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    insert1(&x, 1, 1, 0x2000, 0x1000);
    insert1(&x, 2, 1, 0x3000, 0x1000);
    insert1(&x, 3, 1, 0x1000, 0x1000);
    check_sorted(&x);
    void *o;
    assert_int_equal(find(&x, 0, 0x2fff, 1, &o), RMC_OK);
    assert_ptr_equal(o, owner(1));
    assert_int_equal(find(&x, 0, 0x3000, 1, &o), RMC_OK);
    assert_ptr_equal(o, owner(2));
    assert_int_equal(find(&x, 0, 0x1fff, 1, &o), RMC_OK);
    assert_ptr_equal(o, owner(3));
    assert_int_equal(find(&x, 0, 0x2ff0, 0x20, &o), RMC_ERR_BOUNDS);
    assert_ptr_equal(o, owner(1));
    assert_int_equal(find(&x, 0, 0x4000, 1, &o), RMC_ERR_NOT_REGION);
    assert_int_equal(find(&x, 0, 0xfff, 1, &o), RMC_ERR_NOT_REGION);
    rmci_xlate_destroy(&x);
}

/* Many ranks with different bases and sizes, zero sizes skipped, equal addresses on different ranks
 * kept apart. */
static void test_many_ranks(void **state)
{
    (void)state;
    enum { NR = 48 };
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    uintptr_t b1[NR], b2[NR];
    size_t s1[NR], s2[NR];
    size_t nonzero = 0;
    for (int r = 0; r < NR; r++) {
        b1[r] = 0x7f0000000000ull + (uintptr_t)(NR - r) * 0x100000; /* descending bases */
        s1[r] = (r % 5 == 3) ? 0 : 64 * (size_t)(r + 1);
        b2[r] = 0x10000000; /* same address on every rank */
        s2[r] = (r % 7 == 0) ? 0 : 100 + (size_t)r;
        nonzero += (s1[r] > 0) + (s2[r] > 0);
    }
    assert_int_equal(rmci_xlate_insert(&x, owner(1), NR, b1, s1, NULL), RMC_OK);
    assert_int_equal(rmci_xlate_insert(&x, owner(2), NR, b2, s2, NULL), RMC_OK);
    assert_int_equal(x.n, nonzero);
    check_sorted(&x);
    for (int r = 0; r < NR; r++) {
        void *o;
        if (s1[r]) {
            assert_int_equal(find(&x, r, b1[r], s1[r], &o), RMC_OK);
            assert_ptr_equal(o, owner(1));
            assert_int_equal(find(&x, r, b1[r] + s1[r] - 1, 1, &o), RMC_OK);
            assert_int_equal(find(&x, r, b1[r] + 1, s1[r], &o), RMC_ERR_BOUNDS);
        } else {
            assert_int_equal(find(&x, r, b1[r], 1, &o), RMC_ERR_NOT_REGION);
        }
        assert_int_equal(find(&x, r, b1[r] + s1[r], 1, &o), RMC_ERR_NOT_REGION);
        if (s2[r]) {
            assert_int_equal(find(&x, r, b2[r] + s2[r] - 1, 1, &o), RMC_OK);
            assert_ptr_equal(o, owner(2));
            assert_int_equal(find(&x, r, b2[r] + s2[r], 1, &o), RMC_ERR_NOT_REGION);
        } else {
            assert_int_equal(find(&x, r, b2[r], 1, &o), RMC_ERR_NOT_REGION);
        }
    }
    /* an address of rank r's entry looked up on a rank where nothing is there */
    assert_int_equal(find(&x, NR, b2[1], 1, NULL), RMC_ERR_NOT_REGION);
    /* a region with every size zero adds nothing */
    size_t z[NR] = {0};
    assert_int_equal(rmci_xlate_insert(&x, owner(3), NR, b1, z, NULL), RMC_OK);
    assert_int_equal(x.n, nonzero);
    rmci_xlate_destroy(&x);
}

static void test_remove(void **state)
{
    (void)state;
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    for (uintptr_t i = 0; i < 10; i++)
        insert1(&x, i, 3, 0x100000 + i * 0x1000, 0x800);
    assert_int_equal(x.n, 30);
    rmci_xlate_remove(&x, owner(4));
    rmci_xlate_remove(&x, owner(0));
    rmci_xlate_remove(&x, owner(9));
    rmci_xlate_remove(&x, owner(77)); /* unknown owner: nothing happens */
    assert_int_equal(x.n, 21);
    check_sorted(&x);
    for (uintptr_t i = 0; i < 10; i++)
        for (int r = 0; r < 3; r++) {
            void *o;
            rmc_status_t st = find(&x, r, 0x100000 + i * 0x1000 + 0x7ff, 1, &o);
            if (i == 0 || i == 4 || i == 9) {
                assert_int_equal(st, RMC_ERR_NOT_REGION);
            } else {
                assert_int_equal(st, RMC_OK);
                assert_ptr_equal(o, owner(i));
            }
        }
    /* re-insert at the same place: found again */
    insert1(&x, 4, 3, 0x104000, 0x800);
    check_sorted(&x);
    void *o;
    assert_int_equal(find(&x, 2, 0x104000, 0x800, &o), RMC_OK);
    assert_ptr_equal(o, owner(4));
    rmci_xlate_destroy(&x);
    assert_int_equal(x.n, 0);
    assert_null(x.ents);
}

/* The MRU front answers repeated lookups without a search, keeps the 4 most recent entries, and a
 * removal never leaves a stale MRU entry behind. */
static void test_mru(void **state)
{
    (void)state;
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    for (uintptr_t i = 0; i < 8; i++)
        insert1(&x, i, 2, 0x400000 + i * 0x10000, 0x1000);
    const uintptr_t A = 0x400000, B = 0x410000, C = 0x420000, D = 0x430000, E = 0x440000;

    unsigned long long p0 = x.probes, h0 = x.mru_hits;
    assert_int_equal(find(&x, 1, A + 5, 8, NULL), RMC_OK); /* miss: binary search */
    assert_true(x.probes > p0);
    assert_int_equal(x.mru_hits, h0);
    p0 = x.probes;
    for (int i = 0; i < 10; i++)
        assert_int_equal(find(&x, 1, A + 100 + (uintptr_t)i, 8, NULL), RMC_OK); /* MRU[0] hits */
    assert_int_equal(x.probes, p0);
    assert_int_equal(x.mru_hits, h0 + 10);
    /* same address on another rank is another entry: not an MRU hit */
    assert_int_equal(find(&x, 0, A + 100, 8, NULL), RMC_OK);
    assert_true(x.probes > p0);
    assert_int_equal(x.mru_hits, h0 + 10);
    /* bounds error answered from the MRU front too */
    assert_int_equal(find(&x, 0, A + 0xfff, 2, NULL), RMC_ERR_BOUNDS);

    /* fill the front with B, C, D (most recent first: D C B (0,A)) */
    assert_int_equal(find(&x, 0, B, 1, NULL), RMC_OK);
    assert_int_equal(find(&x, 0, C, 1, NULL), RMC_OK);
    assert_int_equal(find(&x, 0, D, 1, NULL), RMC_OK);
    assert_true(x.mru[0].lo == D && x.mru[1].lo == C && x.mru[2].lo == B && x.mru[3].lo == A);
    p0 = x.probes;
    h0 = x.mru_hits;
    /* older front entries hit without a search and move to the front */
    assert_int_equal(find(&x, 0, B + 3, 1, NULL), RMC_OK);
    assert_int_equal(find(&x, 0, A + 3, 1, NULL), RMC_OK);
    assert_int_equal(x.probes, p0);
    assert_int_equal(x.mru_hits, h0 + 2);
    assert_true(x.mru[0].lo == A && x.mru[1].lo == B && x.mru[2].lo == D && x.mru[3].lo == C);
    /* a fifth entry evicts the least recent (C): C then needs a search again */
    assert_int_equal(find(&x, 0, E, 1, NULL), RMC_OK);
    p0 = x.probes;
    assert_int_equal(find(&x, 0, C, 1, NULL), RMC_OK);
    assert_true(x.probes > p0);

    /* removal clears every MRU slot of that owner (rank 0 and rank 1 entries of A) */
    assert_int_equal(find(&x, 1, A, 1, NULL), RMC_OK);
    assert_int_equal(find(&x, 0, A, 1, NULL), RMC_OK);
    assert_true(x.mru[0].owner == owner(0) && x.mru[1].owner == owner(0));
    rmci_xlate_remove(&x, owner(0));
    for (int i = 0; i < RMCI_XLATE_MRU; i++)
        assert_true(x.mru[i].owner != owner(0));
    assert_int_equal(find(&x, 0, A, 1, NULL), RMC_ERR_NOT_REGION);
    assert_int_equal(find(&x, 1, A + 0xfff, 1, NULL), RMC_ERR_NOT_REGION);
    /* entries of other owners that were in the front are still found */
    void *o;
    assert_int_equal(find(&x, 0, C + 1, 1, &o), RMC_OK);
    assert_ptr_equal(o, owner(2));

    /* a lookup that misses must not pollute the front */
    unsigned long long n_before = x.mru_hits;
    rmci_xent_t front[RMCI_XLATE_MRU];
    memcpy(front, x.mru, sizeof(front));
    assert_int_equal(find(&x, 0, 0x900000, 1, NULL), RMC_ERR_NOT_REGION);
    for (int i = 0; i < RMCI_XLATE_MRU; i++) /* field by field: the struct has padding */
        assert_true(front[i].lo == x.mru[i].lo && front[i].hi == x.mru[i].hi &&
                    front[i].rank == x.mru[i].rank && front[i].owner == x.mru[i].owner);
    assert_int_equal(x.mru_hits, n_before);
    rmci_xlate_destroy(&x);
}

static unsigned ceil_log2(size_t n)
{
    unsigned k = 0;
    while (((size_t)1 << k) < n)
        k++;
    return k;
}

/* n regions on `nranks` ranks, inserted in a scrambled order; every lookup that misses the MRU
 * front (alternating far-apart entries) makes at most ceil(log2(entries)) + 2 probes. Returns the
 * average probes per lookup. */
static double probe_run(size_t nreg, int nranks)
{
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    uintptr_t *bases = malloc((size_t)nranks * sizeof(*bases));
    size_t *sizes = malloc((size_t)nranks * sizeof(*sizes));
    assert_non_null(bases);
    assert_non_null(sizes);
    const size_t stride = 0x10000;
    /* ascending bases: each insert appends (the merge order itself is tested elsewhere) */
    for (size_t slot = 0; slot < nreg; slot++) {
        for (int r = 0; r < nranks; r++) {
            bases[r] = 0x10000000 + slot * stride + (uintptr_t)r * 64;
            sizes[r] = 0x100 + (size_t)((slot + (size_t)r) % 7) * 64;
        }
        assert_int_equal(rmci_xlate_insert(&x, owner(slot), nranks, bases, sizes, NULL), RMC_OK);
    }
    size_t nent = nreg * (size_t)nranks;
    assert_int_equal(x.n, nent);
    check_sorted(&x);
    const unsigned bound = ceil_log2(nent) + 2;
    unsigned long long total = 0, lookups = 0;
    for (size_t i = 0; i < nreg; i++) {
        /* alternate between the two halves so consecutive lookups never hit the front */
        size_t slot = (i % 2) ? i / 2 : nreg - 1 - i / 2;
        int r = (int)(i % (size_t)nranks);
        uintptr_t a = 0x10000000 + slot * stride + (uintptr_t)r * 64 + 0xff;
        unsigned long long p0 = x.probes, h0 = x.mru_hits;
        void *o;
        assert_int_equal(find(&x, r, a, 1, &o), RMC_OK);
        assert_ptr_equal(o, owner(slot));
        assert_int_equal(x.mru_hits, h0); /* a miss of the front */
        unsigned long long p = x.probes - p0;
        if (p > bound)
            fail_msg("%zu entries: %llu probes > ceil(log2 n)+2 = %u", nent, p, bound);
        total += p;
        lookups++;
        /* a gap between regions: NOT_REGION, also within the bound */
        p0 = x.probes;
        assert_int_equal(find(&x, r, a + 0x8000, 1, NULL), RMC_ERR_NOT_REGION);
        if (x.probes - p0 > bound)
            fail_msg("%zu entries: miss took %llu probes", nent, x.probes - p0);
    }
    free(bases);
    free(sizes);
    rmci_xlate_destroy(&x);
    return (double)total / (double)lookups;
}

static void test_log_lookups(void **state)
{
    (void)state;
    double small = probe_run(1000, 1);
    double big = probe_run(16000, 1);
    /* 16x the entries: a linear search would cost ~16x, a binary search ~4 more probes */
    assert_true(big < small + 6.0);
    assert_true(big < 2.0 * small);
    /* several ranks per region: 16000 regions x 4 ranks = 64000 entries */
    double wide = probe_run(16000, 4);
    assert_true(wide < small + 8.0);
}

/* Inserts in descending, ascending and interleaved orders all give one sorted table. */
static void test_insert_orders(void **state)
{
    (void)state;
    rmci_xlate_t x;
    rmci_xlate_init(&x);
    for (uintptr_t i = 0; i < 300; i++) {
        uintptr_t slot = (i % 3 == 0) ? 1000 - i : (i % 3 == 1) ? i : 500 + i / 3;
        uintptr_t b[3] = {slot * 0x1000, slot * 0x1000 + 0x10, slot * 0x1000 + 0x20};
        size_t s[3] = {0x100, (i % 2) ? 0 : 0x200, 0x300};
        assert_int_equal(rmci_xlate_insert(&x, owner(i), 3, b, s, NULL), RMC_OK);
    }
    check_sorted(&x);
    assert_int_equal(x.n, 300 * 2 + 150);
    rmci_xlate_destroy(&x);
}

UNITTEST_MAIN("xlate", test_empty, test_boundaries, test_adjacent, test_many_ranks, test_remove,
              test_mru, test_log_lookups, test_insert_orders)
