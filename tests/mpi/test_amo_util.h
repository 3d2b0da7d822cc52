/* Helpers of the amo/progress MPI tests: (re)initialize RMC in a given AMO mode / progress-thread
 * setting, gather-and-check helpers. Tests call rmc_init / rmc_finalize themselves (several
 * configurations per program), so a failed check that left RMC initialized is cleaned up first. */
#ifndef RMC_TEST_AMO_UTIL_H
#define RMC_TEST_AMO_UTIL_H

#include "mpitest.h"

typedef struct amotest_cfg {
    const char *amo;    /* RMC_AMO */
    const char *thread; /* RMC_PROGRESS_THREAD */
} amotest_cfg_t;

/* mpi atomics without a thread, CPU atomics + AMs served inside RMC calls, CPU atomics + AMs served
 * by the progress thread, MPI atomics with a progress thread. */
static const amotest_cfg_t amotest_cfgs[] = {
    {"mpi", "0"}, {"thread", "0"}, {"thread", "1"}, {"mpi", "1"}};
#define AMOTEST_NCFG (sizeof(amotest_cfgs) / sizeof(amotest_cfgs[0]))

static inline void amotest_fresh(void)
{
    if (rmc_initialized())
        rmc_finalize();
}

static inline void amotest_init(const amotest_cfg_t *c)
{
    amotest_fresh();
    setenv("RMC_AMO", c->amo, 1);
    setenv("RMC_PROGRESS_THREAD", c->thread, 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    rmc_amo_mode_t want = strcmp(c->amo, "mpi") == 0 ? RMC_AMO_MODE_MPI : RMC_AMO_MODE_THREAD;
    MPI_CHECK_ALL(rmc_amo_mode() == want);
    MPI_CHECK_ALL(rmc_progress_thread_active() == (c->thread[0] == '1'));
}

static inline void amotest_done(void)
{
    MPI_CHECK_OK(rmc_finalize());
    unsetenv("RMC_AMO");
    unsetenv("RMC_PROGRESS_THREAD");
}

/* Scales an iteration count down for 3-4 ranks on 2 cores (oversubscribed: every operation that
 * needs the target's attention may wait for a scheduler time slice). */
static inline int amotest_iters(int at2)
{
    int n = mpitest_nranks_;
    int k = n <= 2 ? at2 : (n == 3 ? at2 / 4 : at2 / 10);
    return k > 2 ? k : 2;
}

/* Rank 0 collects `k` int64 per rank and checks that together they are a permutation of
 * [0, k*nranks). Agreed verdict. */
static inline int amotest_is_permutation(const int64_t *mine, int k)
{
    int n = mpitest_nranks_, ok = 1;
    int64_t *all = mpitest_rank_ == 0 ? malloc((size_t)k * n * sizeof(int64_t)) : NULL;
    MPI_Gather(mine, k, MPI_INT64_T, all, k, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (mpitest_rank_ == 0) {
        char *seen = calloc((size_t)k * n, 1);
        for (int i = 0; i < k * n && ok; i++) {
            if (all[i] < 0 || all[i] >= (int64_t)k * n || seen[all[i]])
                ok = 0;
            else
                seen[all[i]] = 1;
        }
        free(seen);
        free(all);
    }
    return ok;
}

#endif
