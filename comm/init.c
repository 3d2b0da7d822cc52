/* Initialization, topology (MPI shared-memory split + hwloc, emulated nodes), barrier, finalize. */
#include "config.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>
#include "rmci.h"
#include "rmc/progress.h" /* rmc_progress: attentive barrier */

rmci_state_t rmci;
void (*rmci_poll_hook)(void);
void (*rmci_region_hook)(void);
void (*rmci_region_free_hook)(struct rmc_region *r);
rmc_status_t (*rmci_fallback_hook)(int kind, const void *remote, void *local, size_t bytes,
                                   int rank);

#define RMCI_MAX_HOOKS 8
static rmci_finalize_hook_t hooks[RMCI_MAX_HOOKS];
static int nhooks;

void rmci_at_finalize(rmci_finalize_hook_t fn)
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn)
            return;
    if (nhooks < RMCI_MAX_HOOKS)
        hooks[nhooks++] = fn;
}

static void hw_probe(void)
{
    hwloc_topology_t topo;
    rmci.hw_cores = rmci.hw_pus = rmci.hw_bound_pus = 1;
    rmci.hwloc_topo = NULL;
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
    rmci.hwloc_topo = topo;
}

static rmc_status_t topo_setup(void)
{
    MPI_Comm real_node;
    RMCI_MPI(
        MPI_Comm_split_type(rmci.comm, MPI_COMM_TYPE_SHARED, rmci.rank, MPI_INFO_NULL, &real_node));
    long k = rmci_env_long("RMC_NODE_SIZE");
    rmci.emulated = k > 0 ? (int)k : 0;
    if (k > 0) {
        int rr;
        MPI_Comm_rank(real_node, &rr);
        RMCI_MPI(MPI_Comm_split(real_node, (int)(rr / k), rr, &rmci.node_comm));
        MPI_Comm_free(&real_node);
    } else {
        rmci.node_comm = real_node;
    }
    MPI_Comm_rank(rmci.node_comm, &rmci.node_rank);
    MPI_Comm_size(rmci.node_comm, &rmci.node_size);

    /* node id = smallest world rank of the node, renumbered densely */
    int leader = rmci.node_rank == 0 ? rmci.rank : -1;
    RMCI_MPI(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MAX, rmci.node_comm));
    rmci.node_of = malloc((size_t)rmci.nranks * sizeof(int));
    rmci.local_index = malloc((size_t)rmci.nranks * sizeof(int));
    int *leaders = malloc((size_t)rmci.nranks * sizeof(int));
    if (!rmci.node_of || !rmci.local_index || !leaders) {
        free(leaders);
        return RMC_ERR_NOMEM;
    }
    RMCI_MPI(MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, rmci.comm));
    /* dense numbering: leaders are world ranks; node index = number of distinct leaders below */
    int *is_leader = calloc((size_t)rmci.nranks, sizeof(int));
    if (!is_leader) {
        free(leaders);
        return RMC_ERR_NOMEM;
    }
    for (int r = 0; r < rmci.nranks; r++)
        is_leader[leaders[r]] = 1;
    int *index_of_leader = is_leader; /* reuse: prefix count */
    int cnt = 0;
    for (int r = 0; r < rmci.nranks; r++) {
        int was = is_leader[r];
        index_of_leader[r] = was ? cnt : -1;
        cnt += was;
    }
    rmci.node_count = cnt;
    for (int r = 0; r < rmci.nranks; r++)
        rmci.node_of[r] = index_of_leader[leaders[r]];
    rmci.node_id = rmci.node_of[rmci.rank];
    free(is_leader);
    free(leaders);

    /* world rank -> node rank for peers of this node */
    MPI_Group wg, ng;
    MPI_Comm_group(rmci.comm, &wg);
    MPI_Comm_group(rmci.node_comm, &ng);
    int *wr = malloc((size_t)rmci.node_size * sizeof(int));
    int *nr = malloc((size_t)rmci.node_size * sizeof(int));
    if (!wr || !nr) {
        free(wr);
        free(nr);
        return RMC_ERR_NOMEM;
    }
    for (int i = 0; i < rmci.node_size; i++)
        nr[i] = i;
    MPI_Group_translate_ranks(ng, rmci.node_size, nr, wg, wr);
    for (int r = 0; r < rmci.nranks; r++)
        rmci.local_index[r] = -1;
    for (int i = 0; i < rmci.node_size; i++)
        rmci.local_index[wr[i]] = i;
    free(wr);
    free(nr);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    return RMC_OK;
}

rmc_status_t rmc_init(MPI_Comm comm)
{
    if (rmci.initialized)
        return RMC_ERR_ALREADY_INIT;
    if (comm == MPI_COMM_NULL)
        return RMC_ERR_ARG;
    int flag = 0, fin = 0;
    MPI_Finalized(&fin);
    if (fin)
        return RMC_ERR_NOT_INIT; /* MPI cannot be initialized again */
    MPI_Initialized(&flag);
    int owned = 0;
    if (!flag) {
        int provided;
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
            return RMC_ERR_MPI;
        owned = 1;
    }
    memset(&rmci, 0, sizeof(rmci));
    rmci.mpi_owned = owned;
    if (MPI_Comm_dup(comm, &rmci.comm) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    MPI_Comm_set_errhandler(rmci.comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(rmci.comm, &rmci.rank);
    MPI_Comm_size(rmci.comm, &rmci.nranks);
    rmc_status_t st = topo_setup();
    if (st != RMC_OK)
        return st;
    hw_probe();
    rmci_xlate_init(&rmci.xlate);
    rmci.initialized = 1;
    /* amo/progress layer (collective; on failure it has cleaned up after itself) */
    st = rmci_progress_init();
    if (st != RMC_OK) {
        rmc_finalize();
        return st;
    }
    return RMC_OK;
}

int rmc_initialized(void)
{
    return rmci.initialized;
}

rmc_status_t rmc_finalize(void)
{
    RMCI_CHECK_INIT();
    rmc_status_t st = rmci_fence(-1);
    for (int i = nhooks - 1; i >= 0; i--)
        hooks[i]();
    nhooks = 0;
    /* Leftover regions, newest first: freeing is collective over each region's members, so every
     * rank must go in one order, and creation order is the one all members share (the live list
     * is in most-recently-used order). */
    while (rmci.regions) {
        struct rmc_region *newest = rmci.regions;
        for (struct rmc_region *r = rmci.regions; r; r = r->next)
            if (r->id > newest->id)
                newest = r;
        rmc_status_t s2 = rmc_region_free(newest);
        if (s2 != RMC_OK) {
            st = s2;
            break;
        }
    }
    rmci_req_pool_destroy();
    rmci_xlate_destroy(&rmci.xlate);
    free(rmci.dirty);
    free(rmci.node_of);
    free(rmci.local_index);
    if (rmci.hwloc_topo)
        hwloc_topology_destroy((hwloc_topology_t)rmci.hwloc_topo);
    MPI_Comm_free(&rmci.node_comm);
    MPI_Comm_free(&rmci.comm);
    int owned = rmci.mpi_owned;
    memset(&rmci, 0, sizeof(rmci));
    if (owned)
        MPI_Finalize();
    return st;
}

int rmc_rank(void)
{
    return rmci.initialized ? rmci.rank : -1;
}
int rmc_nranks(void)
{
    return rmci.initialized ? rmci.nranks : -1;
}
int rmc_node_rank(void)
{
    return rmci.initialized ? rmci.node_rank : -1;
}
int rmc_node_size(void)
{
    return rmci.initialized ? rmci.node_size : -1;
}
int rmc_node_count(void)
{
    return rmci.initialized ? rmci.node_count : -1;
}

int rmc_same_node(int rank)
{
    if (!rmci.initialized || rank < 0 || rank >= rmci.nranks)
        return -1;
    return rmci.local_index[rank] >= 0;
}

rmc_status_t rmc_topology(rmc_topology_t *t)
{
    RMCI_CHECK_INIT();
    if (!t)
        return RMC_ERR_ARG;
    t->rank = rmci.rank;
    t->nranks = rmci.nranks;
    t->node_rank = rmci.node_rank;
    t->node_size = rmci.node_size;
    t->node_id = rmci.node_id;
    t->node_count = rmci.node_count;
    t->emulated = rmci.emulated;
    t->hw_cores = rmci.hw_cores;
    t->hw_pus = rmci.hw_pus;
    t->hw_bound_pus = rmci.hw_bound_pus;
    return RMC_OK;
}

rmc_status_t rmc_barrier(void)
{
    RMCI_CHECK_INIT();
    RMCI_POLL();
    rmc_status_t st = rmci_fence(-1);
    if (st != RMC_OK)
        return st;
    atomic_thread_fence(memory_order_seq_cst);
    if (rmci_poll_hook) {
        /* attentive barrier: keep serving active messages (a peer may wait for one before it
         * enters) */
        MPI_Request rq;
        RMCI_MPI(MPI_Ibarrier(rmci.comm, &rq));
        for (int done = 0;;) {
            RMCI_MPI(MPI_Test(&rq, &done, MPI_STATUS_IGNORE));
            if (done)
                break;
            rmc_progress(); /* full poll (the hook polls the network only every few calls) */
        }
    } else {
        RMCI_MPI(MPI_Barrier(rmci.comm));
    }
    atomic_thread_fence(memory_order_seq_cst);
    return RMC_OK;
}

rmc_status_t rmc_comm_stats(rmc_comm_stats_t *s)
{
    RMCI_CHECK_INIT();
    if (!s)
        return RMC_ERR_ARG;
    *s = rmci.stats;
    s->xlate_mru_hits = rmci.xlate.mru_hits;
    return RMC_OK;
}
