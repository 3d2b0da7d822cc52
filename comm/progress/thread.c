/* The asynchronous progress thread: serves active messages while the application computes.
 *
 * Pinned with hwloc to a processing unit that no rank of the machine is bound to, when one exists,
 * and then polls continuously. Otherwise it shares the rank's CPUs: it keeps polling for AM_SPIN_NS
 * after its last request (a stream of requests is served at once), then sleeps with exponential
 * back-off from 1 us to RMC_PROGRESS_BACKOFF_US. While the main thread keeps calling RMC (and so
 * serves requests itself) the thread makes no MPI call, so it does not compete with the main
 * thread for MPICH's lock. */
#define _GNU_SOURCE
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <hwloc.h>
#include "am_impl.h"

#define AM_SPIN_NS 20000 /* polling after the last request before sleeping (20 us) */
/* main-thread polls since the thread last looked from which main counts as attentive */
#define AM_ATTENTIVE_POLLS 4
#define AM_BACKOFF_MIN_NS  1000

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void pin(void)
{
    hwloc_topology_t topo = RMCI.hwloc_topo;
    if (am.thread_pu < 0 || !topo)
        return;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return;
    hwloc_bitmap_only(set, (unsigned)am.thread_pu);
    hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
}

/* One sleep of the back-off (k-th idle round). */
static void back_off(unsigned k)
{
    long ns = k >= 20 ? am.backoff_max_ns : (long)AM_BACKOFF_MIN_NS << k;
    if (ns > am.backoff_max_ns)
        ns = am.backoff_max_ns;
    struct timespec ts = {.tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L};
    nanosleep(&ts, NULL);
    RMCI_PSTAT_ADD(thread_sleeps, 1);
}

static void *thread_main(void *unused)
{
    (void)unused;
    am_is_thread = 1;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* precise short sleeps (default slack: 50 us) */
    pin();
    unsigned idle = 0;
    uint64_t last_active = now_ns();
    unsigned long seen = __atomic_load_n(&am.main_polls, __ATOMIC_RELAXED);
    for (;;) {
        /* A main thread that keeps calling RMC serves requests itself (its polls): the thread then
         * leaves the network alone, so that its MPI calls (and MPICH's lock) do not slow the main
         * thread down; it looks again after its next sleep. */
        unsigned long mp = __atomic_load_n(&am.main_polls, __ATOMIC_RELAXED);
        int attentive = !am.thread_spin && mp - seen >= AM_ATTENTIVE_POLLS;
        seen = mp;
        int n = 0;
        if (!attentive && pthread_mutex_trylock(&am.plock) == 0) {
            n = am_poll_incoming(&am.srv_thr);
            pthread_mutex_unlock(&am.plock);
        } else if (am.srv_thr.n) {
            am_srv_reap(&am.srv_thr);
        }
        if (n < 0)
            break;
        if (n > 0) {
            idle = 0;
            last_active = now_ns();
            continue;
        }
        if (am.thread_spin)
            continue; /* a processing unit of its own: poll continuously */
        if (idle == 0 && now_ns() - last_active < AM_SPIN_NS)
            continue;
        back_off(idle++);
    }
    am_srv_drain(&am.srv_thr);
    return NULL;
}

/* This rank's CPU binding as text ("all" when unknown). */
static void binding(char *out, size_t len)
{
    hwloc_topology_t topo = RMCI.hwloc_topo;
    hwloc_bitmap_t set = topo ? hwloc_bitmap_alloc() : NULL;
    if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
        hwloc_bitmap_list_snprintf(out, len, set);
    else
        snprintf(out, len, "all");
    hwloc_bitmap_free(set);
}

/* The PU for rank `rr` of the machine among those no rank is bound to (-1: none). */
static int free_pu(const char *all, int nloc, size_t len, int rr, int *spin)
{
    hwloc_topology_t topo = RMCI.hwloc_topo;
    if (!topo)
        return -1;
    hwloc_bitmap_t used = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
    hwloc_bitmap_t avail = hwloc_bitmap_dup(hwloc_topology_get_complete_cpuset(topo));
    int unknown = !used || !one || !avail, pu = -1;
    for (int i = 0; !unknown && i < nloc; i++) {
        const char *s = all + (size_t)i * len;
        if (strcmp(s, "all") == 0 || hwloc_bitmap_list_sscanf(one, s) != 0)
            unknown = 1;
        else
            hwloc_bitmap_or(used, used, one);
    }
    if (!unknown) {
        hwloc_bitmap_andnot(avail, avail, used);
        int w = hwloc_bitmap_weight(avail);
        if (w > 0) {
            int want = rr % w, id = -1;
            for (int i = 0; i <= want; i++)
                id = hwloc_bitmap_next(avail, id);
            pu = id;
            *spin = nloc <= w;
        }
    }
    hwloc_bitmap_free(used);
    hwloc_bitmap_free(one);
    hwloc_bitmap_free(avail);
    return pu;
}

/* Chooses a processing unit for the thread that no rank of this (real) node is bound to.
 * Collective over RMC's communicator; *st receives the agreed status. Returns the PU's OS index or
 * -1; *spin = 1 when the PU is not shared with another rank's thread. */
int am_choose_pu(int *spin, rmc_status_t *st)
{
    enum { LEN = 512 };
    *spin = 0;
    MPI_Comm real = MPI_COMM_NULL;
    int nloc = 0, rr = 0, pu = -1;
    char mine[LEN] = "";
    char *all = NULL;
    *st = RMCI_MPI_ST(MPI_Comm_split_type,
                      (RMCI.comm, MPI_COMM_TYPE_SHARED, RMCI.rank, MPI_INFO_NULL, &real));
    if (*st == RMC_OK) {
        rmci_res_count(RMCI_RES_COMM, 1);
        rmci_keep(st, RMCI_MPI_ST(MPI_Comm_size, (real, &nloc)));
        rmci_keep(st, RMCI_MPI_ST(MPI_Comm_rank, (real, &rr)));
        all = rmci_malloc((size_t)(nloc > 0 ? nloc : 1) * LEN);
        if (*st == RMC_OK && !all)
            *st = rmci_fail(RMC_ERR_NOMEM, "rmc_init", "progress thread placement table");
    }
    *st = rmci_agree(RMCI.comm, *st, "rmc_init"); /* nobody enters the gather unless everyone can */
    if (*st == RMC_OK) {
        binding(mine, LEN);
        MPI_Request rq;
        *st = RMCI_MPI_ST(MPI_Iallgather, (mine, LEN, MPI_CHAR, all, LEN, MPI_CHAR, real, &rq));
        if (*st == RMC_OK)
            *st = rmci_wait(&rq, "rmc_init");
        for (int i = 0; *st == RMC_OK && i < nloc; i++)
            all[(size_t)i * LEN + LEN - 1] = 0;
        if (*st == RMC_OK)
            pu = free_pu(all, nloc, LEN, rr, spin);
        *st = rmci_agree(RMCI.comm, *st, "rmc_init");
    }
    free(all);
    rmci_comm_free(&real);
    return pu;
}

rmc_status_t am_thread_start(int pu, int spin)
{
    am.thread_pu = pu;
    am.thread_spin = spin;
    am.thread_on = 1;
    int rc = pthread_create(&am.thr, NULL, thread_main, NULL);
    if (rc != 0) {
        am.thread_on = 0;
        return rmci_fail(RMC_ERR_NOMEM, "rmc_init", "cannot start the progress thread: %s",
                         strerror(rc));
    }
    return RMC_OK;
}

/* Stops the thread: a shutdown message to self, which the thread serves last. */
void am_thread_stop(void)
{
    if (!am.thread_on)
        return;
    am_hdr_t h = {.id = AM_ID_SHUTDOWN, .rtag = 0, .len = 0, .reply_cap = 0};
    MPI_Request sr;
    int rc = RMCI_MPI_RC(MPI_Isend, (&h, sizeof(h), MPI_BYTE, RMCI.rank, AM_TAG_REQ, am.comm, &sr));
    if (rc != MPI_SUCCESS) {
        /* the thread would never see the message: nothing safe is left but to report it */
        rmci_async_fail("rmc_finalize", "cannot stop the progress thread (MPI error %d)", rc);
        return;
    }
    pthread_join(am.thr, NULL);
    (void)RMCI_MPI_ST(MPI_Wait, (&sr, MPI_STATUS_IGNORE));
    am.thread_on = 0;
}
