/* The shared fixture of the container tests (tests/mpi/test_array.c, test_queue.c, ...): RMC up
 * with the containers, `me` and `np` set; a test program may set knobs first (CTTEST_ENV). */
#ifndef RMC_CTTEST_H
#define RMC_CTTEST_H

#include "mpitest.h"
#include <rmc/containers.h>

static int me, np;

/* Group setup: sets each "NAME=VALUE" of env (NULL-terminated, may be NULL), then rmc_init. */
static inline int cttest_setup_env(const char *const *env)
{
    for (int i = 0; env && env[i]; i++)
        putenv((char *)env[i]);
    if (rmc_init(MPI_COMM_WORLD) != RMC_OK)
        return -1;
    me = rmc_rank();
    np = rmc_nranks();
    return 0;
}

#ifdef CTTEST_ENV
static const char *const cttest_env_[] = {CTTEST_ENV, NULL};
#else
static const char *const *const cttest_env_ = NULL;
#endif

static inline int cttest_setup(void **state)
{
    (void)state;
    return cttest_setup_env(cttest_env_);
}

#endif
