/* ARMCI API: read-modify-write (ARMCI_Rmw, every operation) and mutexes (ARMCI_Create_mutexes /
 * Lock / Unlock / Destroy_mutexes, ARMCIX mutex handles). Counters are exact: fetch-and-add values
 * form a permutation, swaps lose no value, critical sections lose no update. Written against
 * armci.h / armcix.h only. */
#include "armcitest.h"
#include <armcix.h>

#define K 40 /* operations per rank per counter */

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Every rank fetch-and-adds 1 K times to an int and a long counter at every target: the fetched
 * values of all ranks are exactly start .. start + np*K - 1, and the counters end at start + np*K.
 */
static void test_fetch_and_add(void **state)
{
    (void)state;
    void **b = armcitest_malloc(2 * sizeof(long));
    long *base = b[me_];
    const long lstart = (1L << 40) + 17;
    ARMCI_CHECK_OK(ARMCI_PutValueInt(-5, (int *)base, me_));
    ARMCI_CHECK_OK(ARMCI_PutValueLong(lstart, base + 1, me_));
    ARMCI_Barrier();
    long *mine = malloc((size_t)2 * np_ * K * sizeof(long));
    long *all = malloc((size_t)2 * np_ * np_ * K * sizeof(long));
    int rc = 0;
    for (int k = 0; k < K; k++)
        for (int d = 0; d < np_; d++) {
            int t = (me_ + d + k) % np_;
            int iv = 0;
            long lv = 0;
            rc |= ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &iv, b[t], 1, t);
            rc |= ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &lv, (long *)b[t] + 1, 1, t);
            /* record per target: slots [t*K + k] */
            mine[(size_t)t * K + (size_t)k] = iv;
            mine[(size_t)np_ * K + (size_t)t * K + (size_t)k] = lv;
        }
    ARMCI_CHECK_ALL(rc == 0);
    MPI_Allgather(mine, 2 * np_ * K, MPI_LONG, all, 2 * np_ * K, MPI_LONG, MPI_COMM_WORLD);
    int ok = 1;
    long *vals = malloc((size_t)np_ * K * sizeof(long));
    for (int t = 0; t < np_; t++)
        for (int kind = 0; kind < 2; kind++) {
            size_t n = 0;
            for (int r = 0; r < np_; r++)
                for (int k = 0; k < K; k++)
                    vals[n++] =
                        all[(size_t)r * 2 * np_ * K + (size_t)kind * np_ * K + (size_t)t * K + k];
            qsort(vals, n, sizeof(long), cmp_long);
            long start = kind ? lstart : -5;
            for (size_t i = 0; i < n; i++)
                ok &= vals[i] == start + (long)i;
        }
    ARMCI_Barrier();
    ok &= ARMCI_GetValueInt(b[me_], me_) == -5 + np_ * K;
    ok &= ARMCI_GetValueLong((long *)b[me_] + 1, me_) == lstart + (long)np_ * K;
    ARMCI_CHECK_ALL(ok);
    /* negative increments too */
    int iv = 0;
    ARMCI_CHECK_OK(ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &iv, b[0], -3, 0));
    ARMCI_Barrier();
    ARMCI_CHECK_ALL(ARMCI_GetValueInt(b[0], 0) == -5 + np_ * K - 3 * np_);
    ARMCI_Barrier();
    free(vals);
    free(mine);
    free(all);
    armcitest_free(b);
}

/* Swap: every rank swaps distinct values into one word at every target, K times; the fetched
 * values plus the final value are exactly the initial value and every value swapped in. */
static void test_swap(void **state)
{
    (void)state;
    void **b = armcitest_malloc(2 * sizeof(long));
    const long lbase = 3L << 33;
    ARMCI_CHECK_OK(ARMCI_PutValueInt(-1, b[me_], me_));
    ARMCI_CHECK_OK(ARMCI_PutValueLong(-1, (long *)b[me_] + 1, me_));
    ARMCI_Barrier();
    long *got = malloc((size_t)2 * np_ * K * sizeof(long));
    int rc = 0;
    for (int k = 0; k < K; k++)
        for (int t = 0; t < np_; t++) {
            int iv = me_ * K + k;
            long lv = lbase + me_ * K + k;
            rc |= ARMCI_Rmw(ARMCI_SWAP, &iv, b[t], 0, t);
            rc |= ARMCI_Rmw(ARMCI_SWAP_LONG, &lv, (long *)b[t] + 1, 0, t);
            got[(size_t)t * K + k] = iv;
            got[(size_t)np_ * K + (size_t)t * K + k] = lv;
        }
    ARMCI_CHECK_ALL(rc == 0);
    ARMCI_Barrier();
    long *all = malloc((size_t)2 * np_ * np_ * K * sizeof(long));
    MPI_Allgather(got, 2 * np_ * K, MPI_LONG, all, 2 * np_ * K, MPI_LONG, MPI_COMM_WORLD);
    /* final values at every target */
    long *fin = malloc((size_t)2 * np_ * sizeof(long));
    for (int t = 0; t < np_; t++) {
        fin[2 * t] = ARMCI_GetValueInt(b[t], t);
        fin[2 * t + 1] = ARMCI_GetValueLong((long *)b[t] + 1, t);
    }
    int ok = 1;
    long *vals = malloc(((size_t)np_ * K + 1) * sizeof(long));
    for (int t = 0; t < np_; t++)
        for (int kind = 0; kind < 2; kind++) {
            size_t n = 0;
            for (int r = 0; r < np_; r++)
                for (int k = 0; k < K; k++)
                    vals[n++] =
                        all[(size_t)r * 2 * np_ * K + (size_t)kind * np_ * K + (size_t)t * K + k];
            vals[n++] = fin[2 * t + kind];
            qsort(vals, n, sizeof(long), cmp_long);
            ok &= vals[0] == -1;
            for (size_t i = 1; i < n; i++)
                ok &= vals[i] == (kind ? lbase : 0) + (long)(i - 1);
        }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    free(vals);
    free(fin);
    free(all);
    free(got);
    armcitest_free(b);
}

/* Critical sections: a plain get / increment / put of counters hosted by every rank, under the
 * mutex of that counter, by every rank: no update is lost. Mutex counts differ per rank. */
static void test_mutex_counters(void **state)
{
    (void)state;
    int nm = 2 + me_ % 2; /* 2 or 3 mutexes here */
    ARMCI_CHECK_OK(ARMCI_Create_mutexes(nm));
    void **b = armcitest_malloc(3 * sizeof(long));
    for (int m = 0; m < 3; m++)
        ARMCI_CHECK_OK(ARMCI_PutValueLong(0, (long *)b[me_] + m, me_));
    ARMCI_Barrier();
    int rc = 0; /* no collective check inside a critical section: others wait for the mutex */
    for (int k = 0; k < K / 2; k++)
        for (int d = 0; d < np_; d++) {
            int t = (me_ + d) % np_;
            int tm = 2 + t % 2;
            for (int m = 0; m < tm; m++) {
                ARMCI_Lock(m, t);
                long v = ARMCI_GetValueLong((long *)b[t] + m, t);
                rc |= ARMCI_PutValueLong(v + 1, (long *)b[t] + m, t);
                ARMCI_Fence(t);
                ARMCI_Unlock(m, t);
            }
        }
    ARMCI_Barrier();
    int ok = rc == 0;
    for (int m = 0; m < nm; m++)
        ok &= ARMCI_GetValueLong((long *)b[me_] + m, me_) == (long)np_ * (K / 2);
    ARMCI_CHECK_ALL(ok);
    ARMCI_CHECK_OK(ARMCI_Destroy_mutexes());
    /* a new set can be created after the old one is destroyed */
    ARMCI_CHECK_OK(ARMCI_Create_mutexes(1));
    ARMCI_Lock(0, 0);
    long v = ARMCI_GetValueLong(b[0], 0);
    rc = ARMCI_PutValueLong(v + 1, b[0], 0);
    ARMCI_Fence(0);
    ARMCI_Unlock(0, 0);
    ARMCI_Barrier();
    ARMCI_CHECK_ALL(rc == 0 && ARMCI_GetValueLong(b[0], 0) == (long)np_ * (K / 2) + np_);
    ARMCI_CHECK_OK(ARMCI_Destroy_mutexes());
    ARMCI_Barrier();
    armcitest_free(b);
}

/* ARMCIX mutex handles on the world group: counters, and trylock of a held mutex fails. */
static void test_mutex_handles(void **state)
{
    (void)state;
    ARMCI_Group world;
    ARMCI_Group_get_world(&world);
    armcix_mutex_hdl_t h = ARMCIX_Create_mutexes_hdl(1, &world);
    ARMCI_CHECK_ALL(h != NULL);
    void **b = armcitest_malloc(sizeof(long));
    ARMCI_CHECK_OK(ARMCI_PutValueLong(0, b[me_], me_));
    ARMCI_Barrier();
    int rc = 0;
    for (int k = 0; k < K / 2; k++) {
        int t = (me_ + k) % np_;
        ARMCIX_Lock_hdl(h, 0, t);
        long v = ARMCI_GetValueLong(b[t], t);
        rc |= ARMCI_PutValueLong(v + 1, b[t], t);
        ARMCI_Fence(t);
        ARMCIX_Unlock_hdl(h, 0, t);
    }
    ARMCI_Barrier();
    long total = 0;
    for (int t = 0; t < np_; t++)
        total += ARMCI_GetValueLong(b[t], t);
    ARMCI_CHECK_ALL(rc == 0 && total == (long)np_ * (K / 2));
#ifndef ARMCITEST_ARMCI_MPI
    /* rank 0 holds mutex 0 of rank 0: everybody's trylock fails, rank 0's own too. (Not in the
     * ARMCI-MPI build: ARMCI-MPI 0.3's ARMCIX_Trylock_hdl is a blocking lock.) */
    if (me_ == 0)
        ARMCIX_Lock_hdl(h, 0, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    int busy = ARMCIX_Trylock_hdl(h, 0, 0); /* the holder's too (busy, as pthread_mutex_trylock) */
    ARMCI_CHECK_ALL(busy != 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_ == 0)
        ARMCIX_Unlock_hdl(h, 0, 0);
    MPI_Barrier(MPI_COMM_WORLD);
#endif
    /* a free mutex: trylock succeeds */
    int got = 1;
    if (me_ == np_ - 1) {
        double t0 = MPI_Wtime();
        while ((got = ARMCIX_Trylock_hdl(h, 0, 0)) != 0 && MPI_Wtime() - t0 < 20.0)
            ;
        if (got == 0)
            ARMCIX_Unlock_hdl(h, 0, 0);
    } else {
        got = 0;
    }
    ARMCI_CHECK_ALL(got == 0);
    ARMCI_Barrier();
    ARMCI_CHECK_OK(ARMCIX_Destroy_mutexes_hdl(h));
    armcitest_free(b);
}

/* ARMCIX mutex handles on a reordered group (the world reversed with ARMCIX_Group_split's key): the
 * `proc` of Lock / Unlock is an absolute rank. Rank r hosts 1 + 2r mutexes; every rank takes the
 * highest mutex of every rank t (2t, which only absolute rank t has) to add 1 to a counter at t. */
static void test_mutex_handles_reordered(void **state)
{
    (void)state;
    ARMCI_Group world, rev;
    ARMCI_Group_get_world(&world);
    ARMCI_CHECK_OK(ARMCIX_Group_split(&world, 0, np_ - me_, &rev));
    int grank = -1;
    ARMCI_Group_rank(&rev, &grank);
    ARMCI_CHECK_ALL(grank == np_ - 1 - me_);
    armcix_mutex_hdl_t h = ARMCIX_Create_mutexes_hdl(1 + 2 * me_, &rev);
    ARMCI_CHECK_ALL(h != NULL);
    void **b = armcitest_malloc(sizeof(long));
    ARMCI_CHECK_OK(ARMCI_PutValueLong(0, b[me_], me_));
    ARMCI_Barrier();
    int rc = 0;
    for (int k = 0; k < np_; k++) {
        int t = (me_ + k) % np_;
        ARMCIX_Lock_hdl(h, 2 * t, t);
        long v = ARMCI_GetValueLong(b[t], t);
        rc |= ARMCI_PutValueLong(v + 1, b[t], t);
        ARMCI_Fence(t);
        ARMCIX_Unlock_hdl(h, 2 * t, t);
    }
    ARMCI_Barrier();
    int ok = rc == 0;
    for (int t = 0; t < np_; t++)
        ok &= ARMCI_GetValueLong(b[t], t) == np_;
    ARMCI_CHECK_ALL(ok);
#ifndef ARMCITEST_ARMCI_MPI
    /* the last rank holds its highest mutex: trylock of it by absolute rank is busy everywhere
     * (ARMCI-MPI 0.3's trylock is a blocking lock: not in its build) */
    int last = np_ - 1;
    if (me_ == last)
        ARMCIX_Lock_hdl(h, 2 * last, last);
    MPI_Barrier(MPI_COMM_WORLD);
    int busy = ARMCIX_Trylock_hdl(h, 2 * last, last);
    ARMCI_CHECK_ALL(busy != 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me_ == last)
        ARMCIX_Unlock_hdl(h, 2 * last, last);
    MPI_Barrier(MPI_COMM_WORLD);
#endif
    ARMCI_Barrier();
    ARMCI_CHECK_OK(ARMCIX_Destroy_mutexes_hdl(h));
    ARMCI_Group_free(&rev);
    armcitest_free(b);
}

ARMCITEST_MAIN("armci_rmw", test_fetch_and_add, test_swap, test_mutex_counters, test_mutex_handles,
               test_mutex_handles_reordered)
