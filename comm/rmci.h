/* Internal state and helpers of the comm core. Never installed; other comm sub-layers
 * (strided, amo, progress) include it, containers and compat layers never do. */
#ifndef RMCI_H
#define RMCI_H

#include <stdint.h>
#include <stddef.h>
#include <mpi.h>
#include "rmc/comm.h"
#include "rmc/env.h"
#include "xlate.h"

#ifdef RMC_ENABLE_CHECKS
#define RMCI_CHECKS 1
#else
#define RMCI_CHECKS 0
#endif

#define RMCI_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RMCI_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Conflict status bits per (region, target): what is outstanding from this origin. */
enum {
    RMCI_CS_WRITE = 1u, /* put not yet complete at target */
    RMCI_CS_ACC = 2u,   /* accumulate not yet complete at target */
    RMCI_CS_READ = 4u,  /* get not yet complete at origin (implicit handle) */
    RMCI_CS_PENDING = 7u,
    RMCI_CS_LISTED = 0x80u /* pair is in the dirty list */
};

#define RMCI_REGION_MAGIC 0x524d4352u /* "RMCR" */
#define RMCI_REGION_HDR   64          /* bytes of zeroed per-rank header in shared memory */

struct rmc_region {
    uint32_t magic;
    uint32_t id;      /* creation sequence number */
    size_t *sizes;    /* [nranks] bytes per rank */
    uintptr_t *bases; /* [nranks] base address in the owner's address space (0 for size 0) */
    char **lptr;      /* [nranks] local mapping of node-local peers, NULL for others */
    char **hdr;       /* [nranks] local mapping of node-local peers' RMCI_REGION_HDR-byte header
                       * (lock words for sub-layers), NULL for others. The header lies just
                       * below the user part and is never reachable by user addresses. Layout:
                       * bytes 0-3 the accumulate lock word (comm/strided, RMCI_ACC_LOCK_OFF);
                       * the rest is free for other sub-layers (zeroed at allocation). */
    uint8_t *cs;      /* [nranks] conflict status */
    MPI_Comm comm;    /* members: rmci.comm, or (sub-communicator region) an owned duplicate */
    MPI_Comm node_comm; /* node-local members: rmci.node_comm, or owned */
    int *mrank; /* [nranks] rank of each RMC rank in `comm` (the windows' rank), -1 for non-members;
                 * NULL when `comm` is rmci.comm (identity) */
    MPI_Win shm_win;  /* node-local shared window */
    MPI_Win win;      /* RMA window over the same memory, lock_all held */
    struct rmc_region *next, *prev; /* live list */
    void *ext; /* per-region state of a sub-layer (e.g. accumulate locks), may be NULL */
    void (*ext_free)(struct rmc_region *r); /* releases ext at region free */
};

/* Rank of RMC rank `rank` in the region's windows (MPI calls on r->win take this one; conflict
 * status, dirty list and translation stay indexed by RMC rank). */
static inline int rmci_mrank(const struct rmc_region *r, int rank)
{
    return r->mrank ? r->mrank[rank] : rank;
}

typedef struct rmci_dirty {
    struct rmc_region *region;
    int target;
} rmci_dirty_t;

typedef struct rmci_state {
    int initialized;
    int mpi_owned;      /* rmc_init called MPI_Init_thread */
    MPI_Comm comm;      /* duplicate of the user's communicator */
    MPI_Comm node_comm; /* (emulated) node */
    int rank, nranks;
    int node_rank, node_size, node_id, node_count, emulated;
    int *node_of;     /* [nranks] node index of each rank */
    int *local_index; /* [nranks] node rank of each rank, -1 when not node-local */
    int hw_cores, hw_pus, hw_bound_pus;
    void *hwloc_topo; /* hwloc_topology_t, kept for the progress layer */

    struct rmc_region *regions; /* live list head */
    size_t nregions;
    uint32_t next_region_id;
    rmci_xlate_t xlate;

    rmci_dirty_t *dirty; /* (region, target) pairs with pending bits */
    size_t ndirty, dirty_cap;

    rmc_comm_stats_t stats;
} rmci_state_t;

extern rmci_state_t rmci;

/* Progress hook: the progress layer installs a poll function that every comm entry point calls
 * (RMCI_POLL) so active messages advance inside comm calls. NULL when there is nothing to poll. */
extern void (*rmci_poll_hook)(void);
#define RMCI_POLL()                                                                                \
    do {                                                                                           \
        if (RMCI_UNLIKELY(rmci_poll_hook))                                                         \
            rmci_poll_hook();                                                                      \
    } while (0)

/* Fall-back of rmc_put/rmc_get when the remote address lies in no region of `rank` (rmci_resolve
 * returned RMC_ERR_NOT_REGION): the progress layer serves dynamically registered memory through
 * active messages. kind: RMCI_CS_WRITE (put: local -> remote) or RMCI_CS_READ (get: remote ->
 * local). Completes the transfer (at the target) before returning. NULL: no fall-back
 * (RMC_ERR_NOT_REGION). */
/* Region hook: run by rmc_region_alloc on every rank once the new region is live and before the
 * allocation's last agreement (so no rank returns before every rank ran it). The progress layer
 * uses it to publish the region to its progress thread. */
extern void (*rmci_region_hook)(void);

/* Region free hook: run by rmc_region_free on every rank before the region's windows are unlocked
 * and freed (a sub-layer forgets what it holds about the region). */
extern void (*rmci_region_free_hook)(struct rmc_region *r);

extern rmc_status_t (*rmci_fallback_hook)(int kind, const void *remote, void *local, size_t bytes,
                                          int rank);

/* Collective initialization of the amo/progress layer (comm/progress/am.c), run at the end of
 * rmc_init; its shutdown is an rmci_at_finalize hook. */
rmc_status_t rmci_progress_init(void);

/* Error / argument helpers ------------------------------------------------------------------- */
#define RMCI_CHECK_INIT()                                                                          \
    do {                                                                                           \
        if (RMCI_UNLIKELY(!rmci.initialized))                                                      \
            return RMC_ERR_NOT_INIT;                                                               \
    } while (0)

#define RMCI_CHECK_RANK(r)                                                                         \
    do {                                                                                           \
        if (RMCI_UNLIKELY((r) < 0 || (r) >= rmci.nranks))                                          \
            return RMC_ERR_RANK;                                                                   \
    } while (0)

#define RMCI_MPI(call)                                                                             \
    do {                                                                                           \
        if (RMCI_UNLIKELY((call) != MPI_SUCCESS))                                                  \
            return RMC_ERR_MPI;                                                                    \
    } while (0)

/* A resolved remote range: where it lives and how to reach it. */
typedef struct rmci_target {
    struct rmc_region *region;
    MPI_Aint disp; /* displacement in the target's part (bytes) */
    char *local;   /* load/store address when node-local, else NULL */
} rmci_target_t;

/* Resolves [addr, addr+len) on `rank` (len > 0). RMC_ERR_NOT_REGION / RMC_ERR_BOUNDS on failure. */
static inline rmc_status_t rmci_resolve(int rank, const void *addr, size_t len, rmci_target_t *t)
{
    const rmci_xent_t *e;
    rmc_status_t st = rmci_xlate_find(&rmci.xlate, rank, (uintptr_t)addr, len, &e);
    rmci.stats.xlate_lookups++;
    if (RMCI_UNLIKELY(st != RMC_OK))
        return st;
    struct rmc_region *r = (struct rmc_region *)e->owner;
    t->region = r;
    t->disp = (MPI_Aint)((uintptr_t)addr - e->lo);
    t->local = r->lptr[rank] ? r->lptr[rank] + t->disp : NULL;
    return RMC_OK;
}

/* Conflict tracking ---------------------------------------------------------------------------- */

/* Flushes (region, target) and clears its pending bits (stays listed). */
rmc_status_t rmci_flush_pair(struct rmc_region *r, int target, int conflict);

/* Records that an operation of kind `bits` is outstanding on (region, target). */
void rmci_mark(struct rmc_region *r, int target, unsigned bits);

/* Outstanding kinds an operation of a kind must wait for (index: its RMCI_CS_* kind). Accumulates
 * need not wait for accumulates: the windows have accumulate_ordering none, but every operation
 * marked RMCI_CS_ACC is an addition (accumulates, fetch-and-add), and additions commute. Atomics
 * that do not commute with them (swap, CAS, bitwise) are marked and ordered as RMCI_CS_WRITE. */
static const unsigned char rmci_conflicts[RMCI_CS_PENDING + 1] = {
    [RMCI_CS_WRITE] = RMCI_CS_WRITE | RMCI_CS_ACC | RMCI_CS_READ, /* put after anything */
    [RMCI_CS_ACC] = RMCI_CS_WRITE | RMCI_CS_READ,                 /* acc after put / get */
    [RMCI_CS_READ] = RMCI_CS_WRITE | RMCI_CS_ACC,                 /* get after put / acc */
};

/* Before issuing an operation of kind `kind` (RMCI_CS_READ for gets, RMCI_CS_WRITE for puts,
 * RMCI_CS_ACC for accumulates) to a remote (region, target): flushes it if an outstanding operation
 * conflicts (rmci_conflicts). */
static inline rmc_status_t rmci_order(struct rmc_region *r, int target, unsigned kind)
{
    unsigned pend = r->cs[target] & RMCI_CS_PENDING;
    if (RMCI_LIKELY(pend == 0))
        return RMC_OK;
    if (pend & rmci_conflicts[kind & RMCI_CS_PENDING])
        return rmci_flush_pair(r, target, 1);
    return RMC_OK;
}

/* Flushes every dirty pair of `target` (target < 0: all). */
rmc_status_t rmci_fence(int target);
/* Drops dirty entries of a region that is being freed. */
void rmci_dirty_forget(struct rmc_region *r);

/* Requests ---------------------------------------------------------------------------------------
 */
#define RMCI_REQ_MAGIC 0x52455155u /* live */
#define RMCI_REQ_FREE  0x46524545u

struct rmc_request {
    uint32_t magic;
    int nmpi; /* MPI requests in use */
    MPI_Request mpi[2];
    struct rmc_request *next_free;
    /* completion callback run once when complete (e.g. unpack), may be NULL */
    rmc_status_t (*on_complete)(struct rmc_request *req);
    void *cb_data;
    void *cb_buf; /* freed after on_complete */
};

struct rmc_request *rmci_req_alloc(void);
void rmci_req_release(struct rmc_request *req);
void rmci_req_pool_destroy(void);

/* Sub-layer hooks run at finalize (before MPI is torn down), registered at most a few. */
typedef void (*rmci_finalize_hook_t)(void);
void rmci_at_finalize(rmci_finalize_hook_t fn);

/* Environment ------------------------------------------------------------------------------------
 */
long rmci_env_long(const char *name);

#endif
