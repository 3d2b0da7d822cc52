/* Attentive collectives: a rank waiting in a collective of RMC keeps serving active messages. Rank
 * 0 sends AM-served traffic to every other rank (put / get / fetch-and-add on memory they
 * registered with rmc_register, and with RMC_AMO=thread remote atomics on region memory, which are
 * active messages when the target is on another node) while those ranks already wait in the
 * collective: rmc_barrier, rmc_agree, rmc_region_alloc, rmc_region_free, rmc_mutex_create,
 * rmc_am_register. Without a progress thread only the targets' own RMC calls serve the requests, so
 * each case completes only if the collective is attentive; otherwise it hangs (the harness' timeout
 * fails it). Every AMO mode, progress thread off and on. */
#include "test_amo_util.h"

enum { BARRIER, AGREE, REGION_ALLOC, REGION_FREE, MUTEX_CREATE, AM_REGISTER, NCOLL };
static const char *const coll_names[NCOLL] = {"rmc_barrier",      "rmc_agree",
                                              "rmc_region_alloc", "rmc_region_free",
                                              "rmc_mutex_create", "rmc_am_register"};

#define me mpitest_rank_ /* this rank and the job size (mpitest.h) */
#define np mpitest_nranks_
static int64_t reg_buf[4];  /* registered by every rank */
static int64_t *reg_of[64]; /* every rank's reg_buf */
static void *region_of[64]; /* every rank's part of a region */

static rmc_status_t h_nop(int origin, const void *payload, size_t len, void *reply, size_t cap,
                          size_t *rlen, void *arg)
{
    (void)origin, (void)payload, (void)len, (void)reply, (void)cap, (void)rlen, (void)arg;
    return RMC_OK;
}

/* Rank 0's traffic to every other rank; each operation needs the target to serve it. */
static rmc_status_t traffic(int round)
{
    rmc_status_t st = RMC_OK;
    for (int t = 1; t < np && st == RMC_OK; t++) {
        int64_t v = 1000 * round + t, back = -1, old = -1;
        st = rmc_put(&v, &reg_of[t][0], sizeof v, t);
        if (st == RMC_OK)
            st = rmc_get(&reg_of[t][0], &back, sizeof back, t);
        if (st == RMC_OK && back != v)
            st = RMC_ERR_INTERNAL;
        if (st == RMC_OK)
            st = rmc_amo_fetch_add_i64(&reg_of[t][1], 1, &old, t);
        if (st == RMC_OK && rmc_amo_mode() == RMC_AMO_MODE_THREAD && !rmc_same_node(t))
            st = rmc_amo_fetch_add_i64(region_of[t], 1, &old, t);
    }
    return st;
}

static rmc_status_t collective(int which, rmc_region_h *reg, rmc_mutex_h *mx)
{
    void *bases[64];
    switch (which) {
    case BARRIER:
        return rmc_barrier();
    case AGREE:
        return rmc_agree(RMC_OK);
    case REGION_ALLOC:
        return rmc_region_alloc(256, bases, reg);
    case REGION_FREE:
        return rmc_region_free(*reg);
    case MUTEX_CREATE:
        return rmc_mutex_create(1, mx);
    default:
        return rmc_am_register(9, h_nop, NULL);
    }
}

static void one_config(const amotest_cfg_t *c)
{
    amotest_init(c);
    MPI_CHECK_OK(rmc_register(reg_buf, sizeof reg_buf));
    int64_t *mine = reg_buf;
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, reg_of, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    rmc_region_h counters, extra = NULL;
    MPI_CHECK_OK(rmc_region_alloc(64, region_of, &counters));
    rmc_mutex_h mx = NULL;
    for (int k = 0; k < NCOLL; k++) {
        rmc_status_t st = RMC_OK;
        if (me == 0)
            st = traffic(k); /* the others are in the collective already */
        rmc_status_t s2 = collective(k, &extra, &mx);
        if (me == 0 && st != RMC_OK)
            fprintf(stderr, "traffic before %s: %s (%s)\n", coll_names[k], rmc_status_string(st),
                    rmc_last_error());
        MPI_CHECK_OK(st);
        MPI_CHECK_OK(s2);
    }
    MPI_CHECK_OK(rmc_mutex_destroy(mx));
    MPI_CHECK_OK(rmc_barrier());
    /* every round added 1 to each target's registered counter (and region counter in thread mode
     * across nodes) */
    int remote_amo = rmc_amo_mode() == RMC_AMO_MODE_THREAD && me > 0 && !rmc_same_node(0);
    int ok = me == 0 || (reg_buf[1] == NCOLL && reg_buf[0] == 1000 * (NCOLL - 1) + me &&
                         (!remote_amo || *(int64_t *)region_of[me] == NCOLL));
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(counters));
    MPI_CHECK_OK(rmc_deregister(reg_buf));
    memset(reg_buf, 0, sizeof reg_buf);
    amotest_done();
}

static void test_attentive(void **state)
{
    (void)state;
    for (size_t i = 0; i < AMOTEST_NCFG; i++)
        one_config(&amotest_cfgs[i]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_attentive)};
    return MPITEST_RUN("attentive", tests, NULL, NULL);
}
