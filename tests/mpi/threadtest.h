/* Helpers of the threaded tests (test_threads.c on RMC's API, test_armci_threads.c on ARMCI's):
 * NT threads per rank run one body each on their own targ_t; the fetched values of atomics are
 * checked to be a permutation across all threads of all ranks. MPI and pthreads only (the ARMCI
 * test is also built against ARMCI-MPI). */
#ifndef RMC_THREADTEST_H
#define RMC_THREADTEST_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#define NT 4  /* threads per rank */
#define K  12 /* operations per thread per target */

typedef struct {
    int tid, ok;
    void **b;    /* the test's memory: every rank's base */
    void *extra; /* anything else the body needs */
    int64_t fetched[K * 64]; /* per target t: fetched[t * K + k] */
} targ_t;

/* Runs fn on NT threads (targ_t tid 0..NT-1, ok = 1) and joins them; returns the array (free it).
 */
static inline targ_t *threadtest_run(void *(*fn)(void *), void **b, void *extra)
{
    targ_t *a = calloc(NT, sizeof(targ_t));
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) {
        a[t].tid = t, a[t].ok = 1, a[t].b = b, a[t].extra = extra;
        pthread_create(&th[t], NULL, fn, &a[t]);
    }
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    return a;
}

static inline int threadtest_ok(const targ_t *a)
{
    int ok = 1;
    for (int t = 0; t < NT; t++)
        ok &= a[t].ok;
    return ok;
}

static inline int threadtest_cmp64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* 1 when, for every target, the values fetched there by all threads of all `np` ranks are exactly
 * 0 .. np*NT*K-1 (collective over MPI_COMM_WORLD). */
static inline int threadtest_permutation(const targ_t *a, int np)
{
    size_t per = (size_t)np * NT * K;
    int64_t *loc = malloc(per * sizeof(int64_t)), *all = malloc(per * np * sizeof(int64_t));
    int64_t *vals = malloc(per * sizeof(int64_t));
    for (int t = 0; t < np; t++)
        for (int th = 0; th < NT; th++)
            memcpy(loc + ((size_t)t * NT + th) * K, a[th].fetched + t * K, K * sizeof(int64_t));
    MPI_Allgather(loc, (int)per, MPI_INT64_T, all, (int)per, MPI_INT64_T, MPI_COMM_WORLD);
    int ok = 1;
    for (int t = 0; t < np; t++) {
        size_t m = 0;
        for (int r = 0; r < np; r++)
            for (size_t i = 0; i < (size_t)NT * K; i++)
                vals[m++] = all[(size_t)r * per + (size_t)t * NT * K + i];
        qsort(vals, m, sizeof(int64_t), threadtest_cmp64);
        for (size_t i = 0; i < m; i++)
            ok &= vals[i] == (int64_t)i;
    }
    free(vals);
    free(all);
    free(loc);
    return ok;
}

#endif
