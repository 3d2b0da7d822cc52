/* The hash map's tombstone reuse under concurrent inserts (RMC_PROMISE_INSERT): rank 0's table is
 * filled and emptied again (only tombstones, no free bucket left), then every rank inserts keys
 * rank 0 owns at once, at most half the buckets live. No insert may answer RMC_ERR_FULL (the table
 * has room: its tombstones), and concurrent inserts of one key leave one entry. Before, an insert
 * holding a tombstone that met another's gave it back and started over, and after two restarts
 * went past every tombstone and answered RMC_ERR_FULL: 65 of 320 inserts at 2 ranks
 * (RMC_AMO=mpi), in both node modes, and with RMC_AMO=thread on shared memory. Runs at 2 and 3
 * ranks, both node and AMO modes (tests/mpi/Makefile.inc), by each operation's own path and by
 * the one-sided one forced. */
#include "cttest.h"
#include <time.h>

static uint64_t rnd_state;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* Up to `us` microseconds of spinning (none a third of the time): the ranks' inserts interleave
 * differently each time. */
static void jitter(int us)
{
    if (rnd() % 3 == 0)
        return;
    long wait = (long)(rnd() % (unsigned)(us + 1)) * 1000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < wait);
}

#define PER    8  /* at most the keys a rank inserts in a round (16 / np) */
#define ROUNDS 20 /* per path */

static uint64_t seen_keys[PER];
static int seen_count[PER];
static int count_seen(const void *k, const void *v, void *arg)
{
    (void)v;
    (void)arg;
    for (int j = 0; j < PER; j++)
        seen_count[j] += *(const uint64_t *)k == seen_keys[j];
    return 0;
}

static void test_reuse_full(void **s)
{
    (void)s;
    rnd_state = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1);
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create(32 * (size_t)np, &rmc_type_u64, &rmc_type_u64, &h));
    /* rank 0's table: filled until RMC_ERR_FULL, then every entry erased (tombstones only) */
    int ok = 1, buckets = 0;
    if (me == 0) {
        uint64_t k = 900000000, v = 0;
        for (;; k++) {
            if (rmc_hashmap_owner(h, &k) != 0)
                continue;
            rmc_status_t st = rmc_hashmap_insert(h, &k, &v, RMC_PROMISE_LOCAL);
            if (st == RMC_ERR_FULL)
                break;
            MPITEST_EXPECT(ok, st == RMC_OK);
            if (st != RMC_OK)
                break;
            buckets++;
        }
        for (uint64_t e = 900000000; e < k; e++)
            if (rmc_hashmap_owner(h, &e) == 0)
                MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &e, RMC_PROMISE_LOCAL) == RMC_OK);
    }
    MPI_Bcast(&buckets, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int per = np > 2 ? 16 / np : PER; /* in all at most half of rank 0's 32 buckets */
    MPI_CHECK_ALL(ok && buckets >= 2 * per * np);
    long full = 0, tries = 0, lost = 0, dups = 0;
    for (int path = 0; path < 2; path++) {
        unsigned promise = RMC_PROMISE_INSERT | (path ? RMC_HASHMAP_RDMA : 0);
        for (int r = 0; r < ROUNDS; r++) {
            /* distinct keys (odd rounds: every rank the same keys, at once) owned by rank 0 */
            uint64_t keys[PER] = {0};
            int n = 0, same = r % 2;
            for (uint64_t k = (uint64_t)(path * ROUNDS + r) * 1000000 + (same ? 0 : me * 100000u);
                 n < per; k++)
                if (rmc_hashmap_owner(h, &k) == 0)
                    keys[n++] = k;
            MPI_CHECK_OK(rmc_barrier());
            for (int i = 0; i < n; i++) {
                uint64_t v = keys[i] + (same ? (uint64_t)me : 0);
                rmc_status_t st = rmc_hashmap_insert(h, &keys[i], &v, promise);
                tries++;
                if (st == RMC_ERR_FULL && ++full <= 3)
                    fprintf(stderr, "[rank %d] path %d round %d: insert of key %llu: %s (%s)\n", me,
                            path, r, (unsigned long long)keys[i], rmc_status_string(st),
                            rmc_last_error());
                else if (st != RMC_ERR_FULL)
                    MPITEST_EXPECT(ok, st == RMC_OK);
                jitter(20);
            }
            MPI_CHECK_OK(rmc_barrier());
            for (int i = 0; i < n; i++) { /* every key there, with one of its values */
                uint64_t w = 0;
                rmc_status_t st = rmc_hashmap_find(h, &keys[i], &w, RMC_PROMISE_FIND);
                if (st != RMC_OK || w < keys[i] || w >= keys[i] + (same ? (uint64_t)np : 1))
                    lost++;
            }
            if (same && me == 0) { /* one entry per key */
                memcpy(seen_keys, keys, sizeof keys);
                memset(seen_count, 0, sizeof seen_count);
                MPITEST_EXPECT(ok, rmc_hashmap_local_foreach(h, count_seen, NULL, NULL) == RMC_OK);
                for (int j = 0; j < per; j++)
                    dups += seen_count[j] > 1;
            }
            MPI_CHECK_OK(rmc_barrier());
            for (int i = 0; i < n; i++) { /* tombstones again */
                rmc_status_t st = rmc_hashmap_erase(h, &keys[i], 0);
                MPITEST_EXPECT(ok, st == RMC_OK || (same && st == RMC_ERR_NOT_FOUND));
            }
        }
    }
    if (full || lost || dups)
        fprintf(stderr,
                "[rank %d] of %ld inserts (at most %d live keys in %d buckets) %ld answered "
                "RMC_ERR_FULL; %ld keys missing after them, %ld twice in the map\n",
                me, tries, per * np, buckets, full, lost, dups);
    MPI_CHECK_ALL(ok && full == 0 && lost == 0 && dups == 0);
    MPI_CHECK_OK(rmc_barrier());
    size_t cnt = 1;
    MPI_CHECK_OK(rmc_hashmap_count(h, &cnt));
    MPI_CHECK_ALL(cnt == 0);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

MPITEST_MAIN("hashmap_reuse", cttest_setup, mpitest_teardown_rmc, test_reuse_full)
