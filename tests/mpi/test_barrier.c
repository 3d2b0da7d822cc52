/* rmc_barrier: node-local ranks meet in shared memory, node leaders in an MPI barrier (sync.c).
 *  - visibility: many back-to-back barriers; before each, every rank writes the round into its own
 *    part (plain store) and into a slot of every peer's part (plain stores to node-local peers,
 *    blocking and implicit non-blocking puts to the others); after it, every rank finds every
 *    peer's value of that round in its part and in every peer's part (plain loads or gets). Slots
 *    alternate by round parity, so one barrier per round suffices; ranks arrive skewed in turns;
 *  - attentiveness: a rank sends blocking active messages to peers that already wait in the barrier
 *    (no progress thread: only their wait serves them), each rank late in turn; it must not hang;
 *  - failure: with every MPI_Ibarrier failing (RMC_FAULT), the barrier of one node (shared memory
 *    only) succeeds, and otherwise every rank reports the failure, the node's non-leaders their
 *    leader's; RMC_SHM_BARRIER=0 makes it an MPI barrier of every rank;
 *  - the knob: an invalid value fails rmc_init everywhere; no /dev/shm name is left behind.
 * Every case at 2-4 ranks in the real node mode and with emulated nodes (RMC_NODE_SIZE). */
#include <dirent.h>
#include <time.h>
#include "mpitest.h"
#include <rmc/progress.h>

#define me mpitest_rank_ /* this rank and the job size (mpitest.h) */
#define np mpitest_nranks_

enum { H_DOUBLE = 7 };

static void init_rmc(const char *fault, const char *shm_barrier)
{
    setenv("RMC_PROGRESS_THREAD", "0", 1); /* only the targets' own waits serve AMs */
    if (fault)
        setenv("RMC_FAULT", fault, 1);
    if (shm_barrier)
        setenv("RMC_SHM_BARRIER", shm_barrier, 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    unsetenv("RMC_FAULT");
    unsetenv("RMC_SHM_BARRIER");
    MPI_CHECK_OK(st);
}

static int resources_zero(void)
{
    rmc_resources_t r;
    rmc_resources(&r);
    return r.comms == 0 && r.wins == 0 && r.groups == 0 && r.infos == 0 && r.types == 0;
}

/* No /dev/shm name of this process is left (RMC unlinks a file once every member mapped it). */
static int no_shm_names(void)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "rmc-%u-", (unsigned)getpid());
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 1;
    int found = 0;
    for (struct dirent *e; (e = readdir(d));)
        found |= strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return !found;
}

static void spin_us(long us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

/* ------------------------------------------------------------------ visibility --- */

/* A rank's part: in[2][np] (slot [parity][writer], written by the peers), then own[2] (written by
 * the owner). */
static size_t in_off(int par, int writer)
{
    return ((size_t)par * (size_t)np + (size_t)writer) * sizeof(int64_t);
}
static size_t own_off(int par)
{
    return (2 * (size_t)np + (size_t)par) * sizeof(int64_t);
}
static int64_t val(int rank, long round)
{
    return ((int64_t)round << 8) | rank; /* np < 256 */
}

static void hammer(long rounds)
{
    void *bases[256];
    char *local[256];
    rmc_region_h h;
    MPI_CHECK_OK(rmc_region_alloc(own_off(2), bases, &h));
    for (int p = 0; p < np; p++) {
        void *lp = NULL;
        MPI_CHECK_OK(rmc_region_local(h, p, &lp));
        local[p] = lp;
    }
    MPI_CHECK_ALL(local[me] == bases[me]);
    long bad = 0;
    rmc_status_t st = RMC_OK;
    for (long r = 0; r < rounds && st == RMC_OK; r++) {
        int par = (int)(r & 1);
        int64_t v = val(me, r);
        *(volatile int64_t *)(local[me] + own_off(par)) = v;
        for (int p = 0; p < np && st == RMC_OK; p++) {
            if (p == me)
                continue;
            if (local[p]) /* node-local peer: a plain store */
                *(volatile int64_t *)(local[p] + in_off(par, me)) = v;
            else if (r % 2) /* completed by the barrier */
                st = rmc_put_nb(&v, (char *)bases[p] + in_off(par, me), sizeof v, p, NULL);
            else
                st = rmc_put(&v, (char *)bases[p] + in_off(par, me), sizeof v, p);
        }
        if ((r / 8) % np == me && r % 8 == 0)
            spin_us(20); /* arrive late now and then, each rank in turn */
        if (st == RMC_OK)
            st = rmc_barrier();
        for (int q = 0; q < np && st == RMC_OK; q++) {
            if (q == me)
                continue;
            int64_t mine = *(volatile int64_t *)(local[me] + in_off(par, q)), theirs = -1;
            if (local[q])
                theirs = *(volatile int64_t *)(local[q] + own_off(par));
            else
                st = rmc_get((char *)bases[q] + own_off(par), &theirs, sizeof theirs, q);
            if (mine != val(q, r) || theirs != val(q, r)) {
                if (bad++ == 0)
                    fprintf(stderr,
                            "[rank %d] round %ld: from rank %d slot %lld own %lld (want %lld)\n",
                            me, r, q, (long long)mine, (long long)theirs, (long long)val(q, r));
            }
        }
    }
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(bad == 0);
    MPI_CHECK_OK(rmc_region_free(h));
}

/* Rounds at 3-4 ranks on this 2-core machine: a wait may take a scheduler slice, and a remote
 * get needs the target's progress. */
static long rounds_for(long at2)
{
    long n = np <= 2 ? at2 : rmc_node_count() == 1 ? at2 / 50 : at2 / 500;
    return n < 20 ? 20 : n;
}

static void test_visibility(void **state)
{
    (void)state;
    init_rmc(NULL, NULL);
    MPI_CHECK_ALL(no_shm_names());
    hammer(rounds_for(20000));
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(resources_zero());
}

/* The same through the MPI barrier of every rank (the fall-back). */
static void test_visibility_mpi(void **state)
{
    (void)state;
    init_rmc(NULL, "0");
    hammer(rounds_for(2000));
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(resources_zero());
}

/* -------------------------------------------------------------- attentiveness --- */

static long served;

static rmc_status_t h_double(int origin, const void *payload, size_t len, void *reply, size_t cap,
                             size_t *rlen, void *arg)
{
    (void)origin, (void)arg;
    int64_t v;
    if (len != sizeof v || cap < sizeof v)
        return RMC_ERR_ARG;
    memcpy(&v, payload, sizeof v);
    v = 2 * v + 1;
    memcpy(reply, &v, sizeof v);
    *rlen = sizeof v;
    served++;
    return RMC_OK;
}

static void test_am_to_waiting_ranks(void **state)
{
    (void)state;
    init_rmc(NULL, NULL);
    served = 0;
    MPI_CHECK_OK(rmc_am_register(H_DOUBLE, h_double, NULL));
    enum { ROUNDS = 3 };
    rmc_status_t st = RMC_OK;
    int ok = 1;
    for (int late = 0; late < np; late++)
        for (int k = 0; k < ROUNDS; k++) {
            if (me == late) {
                /* the others are in the barrier by now (non-leaders and a one-node's ranks on the
                 * node words, leaders on the node words or in the leaders' MPI barrier) */
                usleep(2000);
                for (int t = 0; t < np && st == RMC_OK; t++) {
                    if (t == me)
                        continue;
                    int64_t v = 1000 * late + 10 * k + t, back = -1;
                    size_t blen = 0;
                    st = rmc_am_send(t, H_DOUBLE, &v, sizeof v, &back, sizeof back, &blen);
                    MPITEST_EXPECT(ok, st != RMC_OK || (blen == sizeof back && back == 2 * v + 1));
                }
            }
            rmc_status_t s2 = rmc_barrier();
            if (st == RMC_OK)
                st = s2;
        }
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(served == (long)(np - 1) * ROUNDS);
    MPI_CHECK_OK(rmc_finalize());
}

/* ------------------------------------------------------------------- failures --- */

/* Same status on every rank? Returns it (or a sentinel when the ranks disagree). */
static rmc_status_t agreed(rmc_status_t st)
{
    int v[2] = {(int)st, -(int)st}, out[2];
    MPI_Allreduce(v, out, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return out[0] == -out[1] ? (rmc_status_t)out[0] : (rmc_status_t)-999;
}

static void failing_ibarrier(const char *shm_barrier)
{
    /* every MPI_Ibarrier fails from rmc_init on (librmc alone makes none in rmc_init; the one of
     * rmc_finalize, before which no active message is in flight here, fails harmlessly) */
    init_rmc("MPI_Ibarrier@all#1+", shm_barrier);
    rmc_last_error_clear();
    rmc_status_t st = rmc_barrier();
    int shm_only = rmc_node_count() == 1 && np > 1 && !(shm_barrier && *shm_barrier == '0');
    if (shm_only) {
        MPI_CHECK_ALL(agreed(st) == RMC_OK);
    } else {
        MPI_CHECK_ALL(agreed(st) == RMC_ERR_MPI);
        /* a non-leader of a node of several ranks hears of its leader's failure */
        int hier = rmc_node_size() > 1 && rmc_node_rank() != 0 && !shm_barrier;
        const char *want = hier ? "node leader" : "MPI_Ibarrier";
        if (!strstr(rmc_last_error(), want))
            fprintf(stderr, "[rank %d] message %s (want %s)\n", me, rmc_last_error(), want);
        MPI_CHECK_ALL(strstr(rmc_last_error(), want) != NULL);
    }
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(resources_zero());
}

static void test_failure_reported(void **state)
{
    (void)state;
    failing_ibarrier(NULL);
    failing_ibarrier("0");
}

static void test_knob(void **state)
{
    (void)state;
    setenv("RMC_SHM_BARRIER", "sometimes", 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    unsetenv("RMC_SHM_BARRIER");
    MPI_CHECK_ALL(agreed(st) == RMC_ERR_ARG);
    MPI_CHECK_ALL(strstr(rmc_last_error(), "RMC_SHM_BARRIER") != NULL);
    MPI_CHECK_ALL(!rmc_initialized() && resources_zero() && no_shm_names());
    init_rmc(NULL, "1");
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(resources_zero() && no_shm_names());
}

MPITEST_MAIN("barrier", NULL, NULL, test_visibility, test_visibility_mpi, test_am_to_waiting_ranks,
             test_failure_reported, test_knob)
