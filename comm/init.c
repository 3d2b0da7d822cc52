/* Initialization (topology: MPI shared-memory split + hwloc, emulated nodes), finalize and the
 * topology queries. Every collective step agrees on its outcome before the next collective, so a
 * failure on one rank (an allocation, an MPI call) makes every rank's rmc_init fail, frees what it
 * took and never leaves a rank waiting. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "core.h"

rmci_state_t rmci;
rmci_info_t rmci_info_;
rmc_comm_stats_t rmci_stats_;
rmci_xlate_t rmci_xlate_;
static int mpi_owned; /* RMC called MPI_Init_thread: rmc_finalize finalizes MPI */

/* RMC_MALLOC_TUNE: large blocks from the heap, not from a fresh mmap each time. glibc serves a
 * malloc of 128 KiB or more with mmap until a free of such a block raises its threshold; a process
 * that never freed one (most MPI programs early on) gets fresh pages for every large temporary,
 * and MPICH allocates one per large active-message RMA operation at the target: a 1 MiB
 * MPI_Accumulate between two processes of this machine took 1.3-2.4 ms with the default and
 * 0.2-0.35 ms with the thresholds below, the values glibc's own adjustment reaches after a free of
 * a 32 MiB block. Variables the user gave glibc (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_,
 * GLIBC_TUNABLES) win. Returns 0, or -1 for an invalid knob value. */
static int malloc_tune(void)
{
    int on = rmci_env_tri("RMC_MALLOC_TUNE");
    if (on < 0)
        return -1;
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    const char *t = getenv("GLIBC_TUNABLES");
    int user = getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TRIM_THRESHOLD_") ||
               (t && (strstr(t, "mmap_threshold") || strstr(t, "trim_threshold")));
    if (on && !user) {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        rmci_info_.malloc_tuned = 1;
    }
#endif
    return 0;
}

static void hw_probe(void)
{
    hwloc_topology_t topo;
    rmci.hw_cores = rmci.hw_pus = rmci.hw_bound_pus = 1;
    rmci_info_.hwloc_topo = NULL;
    if (hwloc_topology_init(&topo) != 0)
        return;
    hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return;
    }
    int c = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int p = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    rmci.hw_cores = c > 0 ? c : 1;
    rmci.hw_pus = p > 0 ? p : rmci.hw_cores;
    rmci.hw_bound_pus = rmci.hw_pus;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
        int w = hwloc_bitmap_weight(set);
        if (w > 0)
            rmci.hw_bound_pus = w;
    }
    hwloc_bitmap_free(set);
    rmci_info_.hwloc_topo = topo;
}

/* The (possibly emulated) node communicator: ranks sharing memory, cut into groups of k
 * consecutive ranks when RMC_NODE_SIZE=k. Collective; the outcome is agreed. */
static rmc_status_t node_split(long k)
{
    MPI_Comm real = MPI_COMM_NULL;
    rmc_status_t st = RMCI_MPI_ST(MPI_Comm_split_type, (rmci_info_.comm, MPI_COMM_TYPE_SHARED,
                                                        rmci_info_.rank, MPI_INFO_NULL, &real));
    if (st == RMC_OK)
        rmci_res_count(RMCI_RES_COMM, 1);
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Comm_size, (real, &rmci.machine_ranks));
    st = rmci_agree(rmci_info_.comm, st, "rmc_init");
    if (st != RMC_OK || k <= 0) {
        rmci.node_comm = real;
        return st;
    }
    int rr = 0;
    st = RMCI_MPI_ST(MPI_Comm_rank, (real, &rr));
    st = rmci_agree(real, st, "rmc_init");
    if (st == RMC_OK) {
        st = RMCI_MPI_ST(MPI_Comm_split, (real, (int)(rr / k), rr, &rmci.node_comm));
        if (st == RMC_OK)
            rmci_res_count(RMCI_RES_COMM, 1);
        else
            rmci.node_comm = MPI_COMM_NULL;
    }
    rmci_comm_free(&real);
    return rmci_agree(rmci_info_.comm, st, "rmc_init");
}

/* node_of[] (dense node index of every rank, numbered by their smallest rank) from every rank's
 * node leader. */
static void number_nodes(const int *leaders)
{
    int n = rmci_info_.nranks, cnt = 0;
    int *index = rmci.local_index; /* scratch: filled for real below */
    for (int r = 0; r < n; r++)
        index[r] = -1;
    for (int r = 0; r < n; r++)
        index[leaders[r]] = 0;
    for (int r = 0; r < n; r++)
        if (index[r] == 0)
            index[r] = cnt++ + 1; /* +1: 0 means "is a leader, not numbered yet" above */
    for (int r = 0; r < n; r++)
        rmci.node_of[r] = index[leaders[r]] - 1;
    rmci_info_.node_count = cnt;
    rmci.node_id = rmci.node_of[rmci_info_.rank];
}

/* local_index[] (node rank of every rank of this node, -1 for the others). Local. */
static rmc_status_t map_node_ranks(void)
{
    int n = rmci_info_.nranks, ns = rmci_info_.node_size;
    MPI_Group wg = MPI_GROUP_NULL, ng = MPI_GROUP_NULL;
    int *nr = rmci_malloc((size_t)ns * sizeof(int)), *wr = rmci_malloc((size_t)ns * sizeof(int));
    rmc_status_t st = nr && wr ? RMC_OK : rmci_fail(RMC_ERR_NOMEM, "rmc_init", "node rank tables");
    if (st == RMC_OK && (st = RMCI_MPI_ST(MPI_Comm_group, (rmci_info_.comm, &wg))) == RMC_OK)
        rmci_res_count(RMCI_RES_GROUP, 1);
    if (st == RMC_OK && (st = RMCI_MPI_ST(MPI_Comm_group, (rmci.node_comm, &ng))) == RMC_OK)
        rmci_res_count(RMCI_RES_GROUP, 1);
    if (st == RMC_OK) {
        for (int i = 0; i < ns; i++)
            nr[i] = i;
        st = RMCI_MPI_ST(MPI_Group_translate_ranks, (ng, ns, nr, wg, wr));
    }
    if (st == RMC_OK) {
        for (int r = 0; r < n; r++)
            rmci.local_index[r] = -1;
        for (int i = 0; i < ns; i++)
            rmci.local_index[wr[i]] = i;
    }
    rmci_group_free(&wg);
    rmci_group_free(&ng);
    free(nr);
    free(wr);
    return st;
}

static rmc_status_t topo_setup(void)
{
    int n = rmci_info_.nranks;
    long k = rmci_env_long("RMC_NODE_SIZE");
    rmc_status_t st = RMC_OK;
    if (k < 0 || k > n)
        st = rmci_fail(RMC_ERR_ARG, "rmc_init", "RMC_NODE_SIZE=%s: not an integer in [0, %d]",
                       rmc_knob_value("RMC_NODE_SIZE"), n);
    rmci.emulated = k > 0 ? (int)k : 0;
    rmci.node_of = rmci_malloc((size_t)n * sizeof(int));
    rmci.local_index = rmci_malloc((size_t)n * sizeof(int));
    int *leaders = rmci_malloc((size_t)n * sizeof(int));
    if (st == RMC_OK && (!rmci.node_of || !rmci.local_index || !leaders))
        st = rmci_fail(RMC_ERR_NOMEM, "rmc_init", "topology tables for %d ranks", n);
    /* one agreement on the status and on the knob: node_split takes another path for k > 0, so
     * ranks with different values would wait in different collectives. Every rank sees the same
     * minimum and maximum, so every rank fails alike when they differ. */
    long long kv[2] = {rmci.emulated, -(long long)rmci.emulated};
    st = rmci_agree_vals(rmci_info_.comm, st, kv, 2, "rmc_init");
    if (st == RMC_OK && kv[0] != -kv[1])
        st = rmci_fail(RMC_ERR_ARG, "rmc_init",
                       "RMC_NODE_SIZE is not the same on every rank (%lld to %lld)", kv[0], -kv[1]);
    if (st == RMC_OK)
        st = node_split(k); /* collective, agreed */
    if (st != RMC_OK)
        goto out;
    int leader = -1;
    st = RMCI_MPI_ST(MPI_Comm_rank, (rmci.node_comm, &rmci.node_rank));
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Comm_size, (rmci.node_comm, &rmci_info_.node_size));
    if (st == RMC_OK)
        leader = rmci.node_rank == 0 ? rmci_info_.rank : -1;
    /* node id = smallest rank of the node (the leader's), renumbered densely */
    long long v = -(long long)leader; /* agreement takes minima: negate for the maximum */
    st = rmci_agree_vals(rmci.node_comm, st, &v, 1, "rmc_init");
    st = rmci_agree(rmci_info_.comm, st, "rmc_init");
    if (st != RMC_OK)
        goto out;
    leader = (int)-v;
    MPI_Request rq;
    st = RMCI_MPI_ST(MPI_Iallgather,
                     (&leader, 1, MPI_INT, leaders, 1, MPI_INT, rmci_info_.comm, &rq));
    if (st == RMC_OK)
        st = rmci_wait(&rq, "rmc_init");
    if (st == RMC_OK) {
        number_nodes(leaders);
        st = map_node_ranks();
    }
    st = rmci_agree(rmci_info_.comm, st, "rmc_init");
out:
    free(leaders);
    return st;
}

static void topo_release(void)
{
    rmci_barrier_release();
    rmci_comm_free(&rmci.node_comm);
    free(rmci.node_of);
    free(rmci.local_index);
    rmci.node_of = rmci.local_index = NULL;
    if (rmci_info_.hwloc_topo)
        hwloc_topology_destroy((hwloc_topology_t)rmci_info_.hwloc_topo);
    rmci_info_.hwloc_topo = NULL;
}

/* Resets every piece of core state (the memory it points to is gone already). */
static void state_reset(void)
{
    memset(&rmci, 0, sizeof(rmci));
    memset(&rmci_info_, 0, sizeof(rmci_info_));
    memset(&rmci_stats_, 0, sizeof(rmci_stats_));
    rmci_mt_on_ = 0; /* the lock itself stays as it is: a finalizing caller still holds it */
    rmci.node_comm = MPI_COMM_NULL;
    rmci.bar.comm = MPI_COMM_NULL;
    rmci.bar.shm.fd = -1;
    rmci_info_.comm = MPI_COMM_NULL;
}

/* MPI initialized (by the application, or now by RMC with MPI_THREAD_MULTIPLE). */
static rmc_status_t mpi_ready(void)
{
    int flag = 0, fin = 0;
    RMCI_MPI(MPI_Finalized, (&fin));
    if (fin)
        return rmci_fail(RMC_ERR_NOT_INIT, "rmc_init", "MPI is finalized and cannot start again");
    RMCI_MPI(MPI_Initialized, (&flag));
    if (flag)
        return RMC_OK;
    int provided;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS)
        return rmci_mpi_fail("MPI_Init_thread", "rmc_init", rc);
    mpi_owned = 1;
    return RMC_OK;
}

rmc_status_t rmc_init(MPI_Comm comm)
{
    RMCI_SERIAL();
    if (rmci_info_.initialized)
        return rmci_fail(RMC_ERR_ALREADY_INIT, __func__, "RMC is already initialized");
    rmci_error_reset(); /* RMC_VERBOSE is read anew for this run */
    if (comm == MPI_COMM_NULL)
        return rmci_fail(RMC_ERR_ARG, __func__, "comm is MPI_COMM_NULL");
    rmc_status_t st = mpi_ready();
    if (st != RMC_OK)
        return st;
    state_reset();
    int rank = 0, size = 1;
    st = RMCI_MPI_ST(MPI_Comm_rank, (comm, &rank));
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Comm_size, (comm, &size));
    if (st == RMC_OK && malloc_tune() < 0)
        st = rmci_fail(RMC_ERR_ARG, __func__, "RMC_MALLOC_TUNE=%s (1, 0 or auto)",
                       rmc_knob_value("RMC_MALLOC_TUNE"));
    /* the switches read later (RMC_VERBOSE at the first failure, RMC_STATS below) are integers or
     * on / off / yes / no: a typo must not leave them silently off */
    static const char *const switches[] = {"RMC_VERBOSE", "RMC_STATS"};
    for (size_t i = 0; st == RMC_OK && i < sizeof(switches) / sizeof(switches[0]); i++)
        if (rmci_env_switch(switches[i]) < 0)
            st = rmci_fail(RMC_ERR_ARG, __func__, "%s=%s: not an integer or on / off", switches[i],
                           rmc_knob_value(switches[i]));
    if (st == RMC_OK)
        st = rmci_fault_setup(rank, size);
    if (st == RMC_OK)
        st = rmci_mt_setup();
    st = rmci_agree(comm, st, __func__); /* on the caller's communicator: ours does not exist yet */
    if (st == RMC_OK)
        st = rmci_comm_dup(comm, &rmci_info_.comm, __func__);
    if (st == RMC_OK) {
        st = RMCI_MPI_ST(MPI_Comm_rank, (rmci_info_.comm, &rmci_info_.rank));
        if (st == RMC_OK)
            st = RMCI_MPI_ST(MPI_Comm_size, (rmci_info_.comm, &rmci_info_.nranks));
        st = rmci_agree(rmci_info_.comm, st, __func__);
    }
    if (st == RMC_OK)
        st = topo_setup();
    if (st == RMC_OK)
        st = rmci_barrier_setup(); /* collective, agreed */
    if (st != RMC_OK)
        goto fail;
    hw_probe();
    /* waiting loops spin while every rank of the machine has a processing unit, and yield when
     * they outnumber them (a rank that yields polls MPI less often: with MPICH's shared-memory
     * RMA a target's progress completes the operations aimed at it) */
    rmci.oversubscribed = rmci.machine_ranks > rmci.hw_pus;
    rmci_info_.local_index = rmci.local_index;
    rmci_xlate_init(&rmci_xlate_);
    memset(&rmci_opc_, 0, sizeof(rmci_opc_));
    rmci_opc_on_ = rmci_env_switch("RMC_STATS") > 0;
    rmci_info_.initialized = 1;
    st = rmci_layers_init(); /* collective, agreed; on failure the layers are finalized */
    if (st == RMC_OK)
        return RMC_OK;
    rmci_info_.initialized = 0;
    rmci_layers_end();
    rmci_req_pool_destroy();
    rmci_xlate_destroy(&rmci_xlate_);
fail:
    topo_release();
    rmci_comm_free(&rmci_info_.comm);
    state_reset();
    return st;
}

int rmc_initialized(void)
{
    return rmci_info_.initialized;
}

/* Frees the leftover regions, newest first: freeing is collective over each region's members, so
 * every rank must go in one order, and creation order is the one all members share (the live list
 * is in most-recently-used order). */
static rmc_status_t free_leftover_regions(void)
{
    rmc_status_t st = RMC_OK;
    /* every one, also after a failure: the other members are entering the next region's
     * collective free (which releases the region even when it reports an error; no agreement
     * first: the members free their leftover regions in the same order) */
    while (rmci.regions) {
        struct rmc_region *newest = rmci.regions;
        for (struct rmc_region *r = rmci.regions; r; r = r->next)
            if (r->id > newest->id)
                newest = r;
        rmci_keep(&st, rmci_region_free_final(newest));
    }
    return st;
}

rmc_status_t rmc_finalize(void)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    /* first the requests never waited for (their custom steps may still use the layers) */
    size_t live = 0;
    rmc_status_t st = rmci_req_complete_all(&live);
    if (live)
        rmci_verbose_note("rmc_finalize completed %zu request(s) never waited for", live);
    rmci_keep(&st, rmci_fence(-1));
    rmci_layers_finalize();
    rmci_keep(&st, free_leftover_regions());
    rmci_region_quarantine_end();
    rmci_layers_end();
    rmci_rma_finalize();
    rmci_req_pool_destroy();
    rmci_xlate_destroy(&rmci_xlate_);
    free(rmci.dirty);
    topo_release();
    rmci_comm_free(&rmci_info_.comm);
    state_reset();
    rmci_opc_on_ = 0;
    rmci_fault_armed_ = 0;
    if (mpi_owned) {
        mpi_owned = 0;
        rmci_keep(&st, RMCI_MPI_ST(MPI_Finalize, ()));
    }
    return st;
}

int rmc_rank(void)
{
    return rmci_info_.initialized ? rmci_info_.rank : -1;
}
int rmc_nranks(void)
{
    return rmci_info_.initialized ? rmci_info_.nranks : -1;
}
int rmc_node_rank(void)
{
    return rmci_info_.initialized ? rmci.node_rank : -1;
}
int rmc_node_size(void)
{
    return rmci_info_.initialized ? rmci_info_.node_size : -1;
}
int rmc_node_count(void)
{
    return rmci_info_.initialized ? rmci_info_.node_count : -1;
}

int rmc_same_node(int rank)
{
    if (!rmci_info_.initialized || rank < 0 || rank >= rmci_info_.nranks)
        return -1;
    return rmci.local_index[rank] >= 0;
}

rmc_status_t rmc_topology(rmc_topology_t *t)
{
    RMCI_CHECK_INIT_QUERY(__func__);
    if (!t)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL topology pointer");
    t->rank = rmci_info_.rank;
    t->nranks = rmci_info_.nranks;
    t->node_rank = rmci.node_rank;
    t->node_size = rmci_info_.node_size;
    t->node_id = rmci.node_id;
    t->node_count = rmci_info_.node_count;
    t->emulated = rmci.emulated;
    t->hw_cores = rmci.hw_cores;
    t->hw_pus = rmci.hw_pus;
    t->hw_bound_pus = rmci.hw_bound_pus;
    t->machine_ranks = rmci.machine_ranks;
    return RMC_OK;
}

rmc_status_t rmc_comm_stats(rmc_comm_stats_t *s)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!s)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL stats pointer");
    *s = rmci_stats_;
    s->xlate_mru_hits = rmci_xlate_.mru_hits;
    return RMC_OK;
}
