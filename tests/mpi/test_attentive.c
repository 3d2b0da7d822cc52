/* Attentive collectives: a rank waiting in a collective of RMC or of its libarmci keeps serving
 * active messages. Rank 0 sends AM-served traffic to every other rank (put / get / fetch-and-add on
 * memory they registered with rmc_register, and with RMC_AMO=thread remote atomics on region
 * memory, which are active messages when the target is on another node) while those ranks already
 * wait in the collective: rmc_barrier, rmc_agree, rmc_region_alloc, rmc_region_free,
 * rmc_mutex_create, rmc_am_register; armci_msg_barrier, armci_msg_igop, armci_msg_dgop,
 * armci_msg_brdcst, armci_msg_sel, ARMCI_Group_create, armci_msg_group_barrier,
 * armci_msg_group_igop, ARMCI_Malloc and armci_msg_rcv (of a message rank 0 sends after its
 * traffic). Without a progress thread only the targets' own RMC calls serve the requests, so each
 * case completes only if the collective is attentive; otherwise it hangs (the harness' timeout
 * fails it). Every AMO mode, progress thread off and on. */
#include <armci.h>
#include <message.h>
#include "test_amo_util.h"

enum {
    BARRIER,
    AGREE,
    REGION_ALLOC,
    REGION_FREE,
    MUTEX_CREATE,
    AM_REGISTER,
    MSG_BARRIER,
    MSG_IGOP,
    MSG_DGOP,
    MSG_BRDCST,
    MSG_SEL,
    GROUP_CREATE,
    GROUP_BARRIER,
    GROUP_IGOP,
    ARMCI_MALLOC,
    MSG_RCV,
    NCOLL
};
static const char *const coll_names[NCOLL] = {"rmc_barrier",
                                              "rmc_agree",
                                              "rmc_region_alloc",
                                              "rmc_region_free",
                                              "rmc_mutex_create",
                                              "rmc_am_register",
                                              "armci_msg_barrier",
                                              "armci_msg_igop",
                                              "armci_msg_dgop",
                                              "armci_msg_brdcst",
                                              "armci_msg_sel",
                                              "ARMCI_Group_create",
                                              "armci_msg_group_barrier",
                                              "armci_msg_group_igop",
                                              "ARMCI_Malloc",
                                              "armci_msg_rcv"};

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

/* The ARMCI collectives; 0 when the result is right. */
static int armci_collective(int which, ARMCI_Group *grp, void **amem)
{
    int iv = me + 1, all[64];
    double dv = me + 0.5;
    long lv = 7 * me;
    switch (which) {
    case MSG_BARRIER:
        armci_msg_barrier();
        return 0;
    case MSG_IGOP:
        armci_msg_igop(&iv, 1, "+");
        return iv != np * (np + 1) / 2;
    case MSG_DGOP:
        armci_msg_dgop(&dv, 1, "max");
        return dv != np - 0.5;
    case MSG_BRDCST:
        armci_msg_brdcst(&lv, sizeof lv, 0);
        return lv != 0;
    case MSG_SEL:
        armci_msg_sel(&lv, sizeof lv, "max", ARMCI_LONG, 1);
        return lv != 7L * (np - 1);
    case GROUP_CREATE:
        for (int i = 0; i < np; i++)
            all[i] = i;
        ARMCI_Group_create(np, all, grp);
        return 0;
    case GROUP_BARRIER:
        armci_msg_group_barrier(grp);
        return 0;
    case GROUP_IGOP:
        armci_msg_group_igop(&iv, 1, "max", grp);
        ARMCI_Group_free(grp);
        return iv != np;
    case ARMCI_MALLOC:
        return ARMCI_Malloc(amem, 64) != 0;
    default: /* MSG_RCV: rank 0 sends every other rank a message after its traffic */
        if (me == 0) {
            for (int t = 1; t < np; t++)
                armci_msg_snd(77, &t, sizeof t, t);
            return 0;
        }
        armci_msg_rcv(77, &iv, sizeof iv, NULL, 0);
        return iv != me;
    }
}

static rmc_status_t collective(int which, rmc_region_h *reg, rmc_mutex_h *mx, ARMCI_Group *grp,
                               void **amem)
{
    void *bases[64];
    if (which >= MSG_BARRIER)
        return armci_collective(which, grp, amem) ? RMC_ERR_INTERNAL : RMC_OK;
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
    ARMCI_Group grp;
    void *amem[64];
    MPI_CHECK_ALL(ARMCI_Init() == 0); /* on the RMC the test initialized */
    for (int k = 0; k < NCOLL; k++) {
        rmc_status_t st = RMC_OK;
        if (me == 0)
            st = traffic(k); /* the others are in the collective already */
        rmc_status_t s2 = collective(k, &extra, &mx, &grp, amem);
        if (me == 0 && st != RMC_OK)
            fprintf(stderr, "traffic before %s: %s (%s)\n", coll_names[k], rmc_status_string(st),
                    rmc_last_error());
        MPI_CHECK_OK(st);
        MPI_CHECK_OK(s2);
    }
    MPI_CHECK_OK(rmc_mutex_destroy(mx));
    MPI_CHECK_ALL(ARMCI_Free(amem[me]) == 0);
    MPI_CHECK_ALL(ARMCI_Finalize() == 0);
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

MPITEST_MAIN("attentive", NULL, NULL, test_attentive)
