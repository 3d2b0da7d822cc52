/* Private structures of the comm core (the files directly in comm/). Sub-layers never include it:
 * they use comm/rmci.h. */
#ifndef RMCI_CORE_H
#define RMCI_CORE_H

#include "rmci.h"

#define RMCI_REGION_MAGIC 0x524d4352u /* "RMCR" */
#define RMCI_CS_LISTED    0x80u       /* the pair is in the dirty list */
#define RMCI_ATAG_MIXED   0x100u      /* accumulates of several element types outstanding */
#define RMCI_PAIR_RANGES  8           /* outstanding write / accumulate ranges tracked per pair */
#define RMCI_RESERVE_MAX  ((size_t)1 << 46) /* largest reserved part (64 TiB of address space) */

/* Conflict state of one (region, target) pair beyond its status byte: the outstanding write and
 * accumulate ranges and the last blocking put (rmci_complete_put's hint). Allocated at the pair's
 * first remote operation, kept until the region is freed. */
typedef struct rmci_pair {
    int nw;                           /* outstanding write ranges (meaningful with CS_WRITE) */
    rmci_range_t w[RMCI_PAIR_RANGES]; /* disjoint, unsorted */
    int na;                           /* outstanding accumulate ranges (meaningful with CS_ACC) */
    rmci_range_t a[RMCI_PAIR_RANGES]; /* disjoint, unsorted */
    unsigned atag;                    /* their type (rmci_kind_tag), or RMCI_ATAG_MIXED */
    rmci_range_t last_put;            /* the last blocking put ({0,0}: none) */
    int waw;                          /* a write had to flush for an overlapping write */
    /* Reads (RMCI_CS_READ): a request-based get's mark is taken back when its request completes,
     * so a completed get (e.g. a blocking patch's per-tile requests) leaves no flush behind. */
    uint32_t rreq; /* request-based gets marked and not yet completed */
    uint32_t rgen; /* flushes of the pair so far: a request marked before the last one is void */
    int rimp;      /* a get no request completes (implicit) is outstanding: only a flush clears */
} rmci_pair_t;

struct rmc_region {
    rmci_region_hot_t hot; /* first: the window and window ranks (rmci.h's inline accessors) */
    uint32_t magic;
    uint32_t id;        /* creation sequence number, equal on every member */
    size_t *sizes;      /* [nranks] bytes per rank */
    uintptr_t *bases;   /* [nranks] base address in the owner's address space (0 for size 0) */
    char **lptr;        /* [nranks] local mapping of node-local peers, NULL for others */
    char **hdr;         /* [nranks] RMCI_REGION_HDR-byte header of node-local peers, NULL for
                         * others: just below the user part, never reachable by user addresses */
    uint8_t *cs;        /* [nranks] conflict status bits (RMCI_CS_*) */
    rmci_pair_t **pair; /* [nranks] conflict state of remote pairs (lazily allocated) */
    MPI_Comm comm;      /* members: rmci.comm, or (sub-communicator region) an owned duplicate */
    MPI_Comm node_comm; /* node-local members: rmci.node_comm, or owned */
    MPI_Win shm_win;    /* node-local shared window (MPI_WIN_NULL for a reserved region) */
    /* reserved regions (rmc_region_reserve): RMC's own shared memory instead of shm_win */
    struct rmci_shm *own; /* this rank's file (kept open: rmc_region_commit); NULL: not reserved */
    char **maps;          /* [nranks] mappings of node-local members' files (own's included) */
    size_t *maplen;       /* [nranks] their lengths */
    struct rmc_region *next, *prev; /* live list */
};

/* RMC's own node-local shared memory (shm.c): a sparse file per member, mapped by the node-local
 * members, committed on demand. */
typedef struct rmci_shm {
    char *map;
    size_t len;
    int fd;                 /* open while the region lives (commit) */
    int named;              /* the name still exists (unlinked once every member mapped it) */
    unsigned long long key; /* names the file: creator's pid and a sequence number */
} rmci_shm_t;
rmc_status_t rmci_shm_create(size_t len, rmci_shm_t *s, const char *fn);
rmc_status_t rmci_shm_attach(unsigned long long key, size_t len, char **map, const char *fn);
void rmci_shm_unlink(rmci_shm_t *s);
void rmci_shm_destroy(rmci_shm_t *s);
rmc_status_t rmci_shm_commit(rmci_shm_t *s, size_t off, size_t len, const char *fn);

/* rmc_barrier's hierarchy (sync.c), set up by rmci_barrier_setup at rmc_init: the ranks of a node
 * meet on words of a small shared segment, the node leaders (node rank 0) in an MPI barrier among
 * themselves when there are several nodes. Without a segment (every node of one rank, the knob
 * off, or a segment that could not be made) rmc_barrier is an MPI barrier of every rank. */
typedef struct rmci_bar {
    struct rmci_bar_words *w; /* this node's words (NULL: no node-local part) */
    rmci_shm_t shm;           /* their mapping (the leader's file, named until all mapped it) */
    MPI_Comm comm;            /* the MPI part: leaders' (several nodes), RMC's (no segment) or
                               * MPI_COMM_NULL (none: one node, or not a leader) */
    int owned;                /* comm is the leaders' communicator, freed at finalize */
    uint64_t epoch;           /* rmc_barrier calls so far */
} rmci_bar_t;
rmc_status_t rmci_barrier_setup(void); /* collective; agreed (only an MPI failure is fatal) */
void rmci_barrier_release(void);

typedef struct rmci_dirty {
    struct rmc_region *region;
    int target;
} rmci_dirty_t;

typedef struct rmci_state {
    int mpi_owned;      /* rmc_init called MPI_Init_thread */
    MPI_Comm node_comm; /* (emulated) node */
    int node_rank, node_id, emulated;
    int *node_of;     /* [nranks] node index of each rank */
    int *local_index; /* [nranks] node rank of each rank, -1 when not node-local */
    int hw_cores, hw_pus, hw_bound_pus;
    int machine_ranks; /* ranks on this machine (the real node, whatever RMC_NODE_SIZE says) */
    int oversubscribed; /* more ranks on this machine than processing units: waits yield */
    rmci_bar_t bar;     /* rmc_barrier's hierarchy */

    struct rmc_region *regions; /* live list head, most recently used first */
    size_t nregions;
    uint32_t next_region_id;

    rmci_dirty_t *dirty; /* (region, target) pairs with the LISTED bit */
    size_t ndirty, dirty_cap;
} rmci_state_t;

extern rmci_state_t rmci;

/* Conflicting outstanding kinds of an operation (index: its RMCI_CS_* kind). Accumulates need not
 * wait for accumulates of their element type: the windows have accumulate_ordering none, but every
 * operation marked RMCI_CS_ACC is an addition (accumulates, fetch-and-add), and additions of one
 * type commute (rmci_order_slow orders those of different types, rmci_acc_kind). Atomics that do
 * not commute with them (swap, CAS, bitwise) are marked and ordered as RMCI_CS_WRITE. */
static const unsigned char rmci_conflicts[RMCI_CS_PENDING + 1] = {
    [RMCI_CS_WRITE] = RMCI_CS_WRITE | RMCI_CS_ACC | RMCI_CS_READ | RMCI_CS_AM, /* after anything */
    [RMCI_CS_ACC] = RMCI_CS_WRITE | RMCI_CS_READ | RMCI_CS_AM, /* acc after put / get / AM */
    [RMCI_CS_READ] = RMCI_CS_WRITE | RMCI_CS_ACC | RMCI_CS_AM, /* get after put / acc / AM */
    [RMCI_CS_AM] = RMCI_CS_WRITE | RMCI_CS_ACC | RMCI_CS_READ, /* an AM atomic after MPI ops */
};

/* Conflict tracking (rma.c / conflict.c). */
rmc_status_t rmci_order_slow(struct rmc_region *r, int target, unsigned kind, rmci_range_t range);
static inline rmc_status_t rmci_order_(struct rmc_region *r, int target, unsigned kind,
                                       rmci_range_t range)
{
    if (RMCI_LIKELY((r->cs[target] & RMCI_CS_PENDING) == 0))
        return RMC_OK;
    return rmci_order_slow(r, target, kind, range);
}
void rmci_dirty_forget(struct rmc_region *r);
/* Completes the unanswered active-message atomics of every pair of r marked RMCI_CS_AM (before a
 * region free forgets its pairs). */
rmc_status_t rmci_quiet_region(struct rmc_region *r);

/* Layer registry (layer.c). */
rmc_status_t rmci_layers_init(void);
void rmci_layers_finalize(void);
void rmci_layers_end(void); /* drops registrations made while initialized */
rmc_status_t rmci_layers_region_created(struct rmc_region *r);
void rmci_layers_region_freed(struct rmc_region *r);
rmc_status_t rmci_layers_unmapped(int is_put, const void *remote, void *local, size_t bytes,
                                  int rank);

/* Requests (rma.c). */
void rmci_req_pool_destroy(void);
void rmci_rma_finalize(void);

/* Faults (fault.c): parses RMC_FAULT for rank `rank` of the communicator given to rmc_init. */
rmc_status_t rmci_fault_setup(int rank, int nranks);

#endif
