/* Container collectives called wrongly: ranks in different collectives, the same collective with
 * different arguments, and a collective called by a subset of the ranks (RMC_COLL_TIMEOUT): every
 * rank gets a clear status, nothing is created or freed, nothing hangs. The subset case leaves the
 * container layer refusing collectives (it cannot know what the others will call), so it runs last.
 */
#define CTTEST_ENV "RMC_COLL_TIMEOUT=1"
#include "cttest.h"

/* Rank 0 destroys a queue while the others destroy an array: RMC_ERR_STATE everywhere, both still
 * live; then the right calls succeed. The same collective with other arguments: RMC_ERR_ARG. */
static void test_mismatch(void **s)
{
    (void)s;
    rmc_queue_h q;
    rmc_array_h a, b;
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_CIRCULAR, 0, 4, &rmc_type_i64, &q));
    MPI_CHECK_OK(rmc_array_create(4, &rmc_type_i64, 0, &a));
    MPI_CHECK_OK(rmc_array_create(4, &rmc_type_i64, 0, &b));
    rmc_status_t st = me == 0 ? rmc_queue_destroy(q) : rmc_array_destroy(a);
    MPI_CHECK_ALL(st == RMC_ERR_STATE);
    MPI_CHECK_ALL(strstr(rmc_last_error(), "different container collectives") != NULL);
    int64_t v = 1;
    MPI_CHECK_OK(rmc_queue_push(q, &v, 0)); /* both still live */
    MPI_CHECK_OK(rmc_array_put(a, 0, &v));
    /* one collective, other handles: rank 0 destroys a, the others b */
    st = rmc_array_destroy(me == 0 ? a : b);
    MPI_CHECK_ALL(st == RMC_ERR_ARG);
    MPI_CHECK_OK(rmc_array_put(b, 0, &v));
    MPI_CHECK_ALL(rmc_queue_resize(q, me == 0 ? 8 : 16) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_queue_capacity(q) == 4);
    MPI_CHECK_OK(rmc_queue_destroy(q));
    MPI_CHECK_OK(rmc_array_destroy(a));
    MPI_CHECK_OK(rmc_array_destroy(b));
}

/* Rank 0 creates a queue alone (the others are elsewhere, here in rmc_barrier): after
 * RMC_COLL_TIMEOUT it gets RMC_ERR_STATE naming the cause and nothing exists. A rank that enters
 * the abandoned collective later fails at once. Afterwards every container collective is refused
 * on every rank; one-sided use of what exists goes on, and rmc_finalize works. */
static void test_subset(void **s)
{
    (void)s;
    rmc_array_h keep;
    MPI_CHECK_OK(rmc_array_create(4, &rmc_type_i64, RMC_ARRAY_BLOCK, &keep));
    rmc_queue_h q = NULL;
    if (me == 0) {
        rmc_status_t st = rmc_queue_create(RMC_QUEUE_FAST, 0, 4, &rmc_type_i64, &q);
        int ok = st == RMC_ERR_STATE && q == NULL &&
                 strstr(rmc_last_error(), "subset of the ranks") != NULL;
        if (!ok)
            fprintf(stderr, "[rank 0] got %s: %s\n", rmc_status_string(st), rmc_last_error());
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_ALL(ok);
    } else {
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_ALL(1);
    }
    /* the others arrive late */
    if (me != 0) {
        rmc_status_t st = rmc_queue_create(RMC_QUEUE_FAST, 0, 4, &rmc_type_i64, &q);
        MPI_CHECK_ALL(st == RMC_ERR_STATE && q == NULL);
    } else {
        MPI_CHECK_ALL(1);
    }
    MPI_CHECK_OK(rmc_barrier());
    rmc_array_h a = NULL;
    MPI_CHECK_ALL(rmc_array_create(4, &rmc_type_i64, 0, &a) == RMC_ERR_STATE && a == NULL);
    int64_t v = 7 + me, x = 0;
    MPI_CHECK_OK(rmc_array_put(keep, (size_t)me % 4, &v));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_array_get(keep, (size_t)me % 4, &x));
    MPI_CHECK_ALL(np > 4 || x == v);
}

MPITEST_MAIN("container collectives", cttest_setup, mpitest_teardown_rmc, test_mismatch,
             test_subset)
