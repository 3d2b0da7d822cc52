/* ga-compat internals: the handle table, groups, errors and the patch path every GA call goes
 * through. A GA array is an rmc_matrix (containers) on a distribution made from GA's description
 * (regular, irregular, block-cyclic, ScaLAPACK-style); GA's 0-based inclusive [lo, hi] patches
 * become the matrix's half-open [lo, hi + 1). Arrays with ghost cells keep their data in a padded
 * matrix (each owned block widened by the ghost width on both sides: ghosts.c); the patch path
 * maps GA's indices onto it. Only public headers of comm and containers are used. */
#ifndef RMC_GA_IMPL_H
#define RMC_GA_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <rmc/comm.h>
#include <rmc/amo.h>
#include <rmc/matrix.h>
#include "ga.h"
#include "ga-mpi.h"

#define GAI_OFFSET 1000 /* handle = index - GAI_OFFSET (GA's own numbering) */
#define GAI_MAX_ARRAYS 32768
#define GAI_MAX_GROUPS 1024
#define GAI_NAME 256
#define GAI_WORLD (-1) /* GA's world group handle */
/* GA_Pgroup_get_mirror(): the world's processes (ga-compat keeps one copy of a mirrored array,
 * distributed over all of them); an array created on it is mirrored, its group the world */
#define GAI_MIRROR (-2)

#ifndef GAI_NORETURN
#define GAI_NORETURN __attribute__((noreturn))
#endif
#define GAI_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* How the user asked the array to be distributed (GA_Set_* before GA_Allocate). */
typedef enum gai_dkind {
    GAI_D_DEFAULT = 0,   /* GA's own blocking (chunk: minimum block sizes) */
    GAI_D_IRREG = 1,     /* map/nblock: one block per process */
    GAI_D_BLOCK_CYCLIC = 2, /* GA_Set_block_cyclic: blocks dealt round-robin to the ranks */
    GAI_D_SCALAPACK = 3, /* GA_Set_block_cyclic_proc_grid / tiled: blocks cyclic over a grid */
    GAI_D_TILED_IRREG = 4 /* GA_Set_tiled_irreg_proc_grid (irregular blocks cyclic over a grid) */
} gai_dkind_t;

typedef struct gai_group {
    int live;
    MPI_Comm comm;  /* the group's communicator (MPI_COMM_NULL on non-members) */
    int size, me;   /* members; this rank's id in the group (-1: not a member) */
    int *ranks;     /* ranks[i]: world (RMC) rank of group member i */
} gai_group_t;

typedef struct gai_array {
    int live;      /* handle in use (NGA_Create... or GA_Create_handle) */
    int allocated; /* data exists (after create / GA_Allocate) */
    int handle;
    int type;      /* C_INT, C_LONG, C_LONGLONG, C_FLOAT, C_DBL, C_SCPL, C_DCPL */
    rmc_elem_t elem;
    size_t esz;
    int ndim;
    int64_t dims[GA_MAX_DIM];
    char name[GAI_NAME];
    int pgroup;    /* group handle (GAI_WORLD or a GA_Pgroup_create handle) */
    /* the distribution asked for */
    gai_dkind_t dkind;
    int64_t chunk[GA_MAX_DIM];   /* DEFAULT: minimum block (<= 0: none) */
    int64_t block[GA_MAX_DIM];   /* BLOCK_CYCLIC / SCALAPACK: block sizes */
    int pgrid_req[GA_MAX_DIM];   /* SCALAPACK / TILED_IRREG: process grid */
    int nblock_req[GA_MAX_DIM];  /* IRREG / TILED_IRREG: blocks per dimension */
    int64_t *map_req;            /* IRREG / TILED_IRREG: 0-based block starts, dim 0 first */
    int tiled;                   /* set through GA_Set_tiled_* (same layout here) */
    /* ghosts (ghosts.c) */
    int overlay_of; /* GA_Overlay: the array whose memory this one uses (0: its own) */
    /* GA_Getmem (create.c): 1 for the hidden array holding a GA_Getmem block, 2 once GA_Freemem
     * freed it while arrays assembled on it (GA_Assemble_duplicate) still live; else 0. It goes
     * with the last array assembled on it. */
    int getmem;
    int getmem_type;  /* GA_Getmem's type */
    int getmem_nelem; /* its count on this process */
    void *getmem_ptr; /* this rank's block: what GA_Getmem returned */
    int has_ghosts;
    int64_t width[GA_MAX_DIM];
    int corner_flag;
    /* properties */
    int read_only, read_cache;
    int *restricted;             /* GA_Set_restricted: the ranks that hold data, in order */
    int nrestricted;
    /* the data */
    rmc_dist_h dist;             /* the logical distribution (owned; queries use it) */
    rmc_matrix_h m;              /* storage (padded for ghost arrays) */
    int64_t nblocks;             /* blocks of the logical distribution */
    int64_t block_grid[GA_MAX_DIM]; /* blocks per dimension */
    int pgrid[GA_MAX_DIM];       /* the process grid of the logical distribution */
    void *ghost;                 /* ghosts.c's state */
    void *tcache;                /* rma.c: the blocks' owners and addresses, filled on first use */
    int rdi_ok, rdi_rank;        /* rma.c: NGA_Read_inc's last element: index, owner, address */
    int64_t rdi_idx[GA_MAX_DIM];
    void *rdi_addr;
    int mirrored;
} gai_array_t;

/* User-defined element types (NGA_Register_type): ids GAI_UTYPE0 .. + GAI_NUTYPES - 1 (GA's). */
#define GAI_UTYPE0  1017
#define GAI_NUTYPES 32

typedef struct gai_state {
    int up;             /* between GA_Initialize and GA_Terminate */
    int own_rmc;        /* GA_Initialize started RMC (so GA_Terminate ends it) */
    int own_mpi;
    int mpi_from_args; /* GA_Initialize_args started MPI */
    int me, np;         /* world rank and size */
    int *node_of; /* node_of[r]: the (real or emulated) node of world rank r (GA_Initialize) */
    int nnodes;   /* nodes: node ids are [0, nnodes) */
    int default_group;  /* GA_Pgroup_set_default */
    size_t mem_limit;   /* GA_Initialize_ltd / GA_Set_memory_limit (core.c) */
    size_t mem_used;    /* bytes of arrays this rank holds */
    size_t utype_size[GAI_NUTYPES]; /* type GAI_UTYPE0 + i: elements of this size (0: free) */
    int debug;
    long nput, nget, nacc, nrdi, nscatter, ngather; /* GA_Print_stats */
    double bput, bget, bacc;
    gai_array_t *arrays[GAI_MAX_ARRAYS];
    int narrays;        /* arrays[0 .. narrays-1] have been used */
    gai_group_t groups[GAI_MAX_GROUPS];
    rmc_mutex_h mutexes; /* GA_Create_mutexes */
    int nmutex;
    int fence_set; /* GA_Init_fence calls not yet ended by a GA_Fence (GA's GA_fence_set) */
} gai_state_t;

extern gai_state_t gai;

/* Frees GA_Diag_reuse's kept factor of S (its ScaLAPACK grid too): GA_Diag_reuse(-1) and
 * GA_Terminate (linalg.c). Local; MPI must still be up. */
void gai_linalg_release(void);

/* ------------------------------------------------------------------------ errors --- */
/* GA's behaviour for bad input: print "GA ERROR: <call>: <why>" on stderr and abort the job
 * (MPI_Abort). Never returns. */
GAI_NORETURN void gai_error(const char *fn, const char *fmt, ...) GAI_PRINTF(2, 3);
/* An RMC status: abort with the call, the status and rmc_last_error when it is not RMC_OK. */
void gai_check(rmc_status_t st, const char *fn, const char *what);
/* Collective over comm: v combined by op (MPI_INT), waited for with rmc_wait_mpi (this rank keeps
 * serving active messages); a failure aborts as gai_check, naming `what`. */
int gai_allreduce_int(int v, MPI_Op op, MPI_Comm comm, const char *fn, const char *what);
/* GA must be up (GA_Initialize called, GA_Terminate not yet). */
void gai_up(const char *fn);

/* Operations on several arrays combine over one process group: aborts as GA 5.8.2 does ("on
 * different process groups") when b (if not NULL) lives on another group than a. */
void gai_same_group(const char *fn, const gai_array_t *a, const gai_array_t *b);

/* ------------------------------------------------------------------------ handles --- */
/* The array of handle g (any live handle; allocated or not). Aborts on an invalid handle. */
gai_array_t *gai_handle(int g, const char *fn);
/* The array of handle g, which must hold data (created, or GA_Allocate'd). */
gai_array_t *gai_array(int g, const char *fn);
/* Puts a on process group p_handle (the mirror handle: mirrored, on the world's processes). */
void gai_set_group(gai_array_t *a, int p_handle);
/* The array whose memory a lives in (GA_Overlay's chain followed to its end; a itself when it
 * has memory of its own). */
gai_array_t *gai_memory_of(gai_array_t *a, const char *fn);
/* 1 when g is a live handle. */
int gai_valid(int g);
/* A new handle (not allocated). */
int gai_new_handle(const char *fn);
/* Element type of a GA type, its size (0 / RMC_ELEM 0 for a type GA arrays do not hold). */
rmc_elem_t gai_elem_of(int type);
size_t gai_type_size(int type);
/* Collective over comm (MPI_COMM_NULL: every rank). The matrix of array a's element type on d. */
rmc_status_t gai_matrix_new(const gai_array_t *a, MPI_Comm comm, rmc_dist_h d, rmc_matrix_h *m);
/* Aborts naming fn when array a holds a user-defined type (no arithmetic on those). */
void gai_numeric(const gai_array_t *a, const char *fn);
const char *gai_type_name(int type);

/* --------------------------------------------------------------------- allocation --- */
/* Collective over the array's group: builds the distribution from the request and creates the
 * storage (create.c). Returns 1 on success, 0 when memory is short (GA_Allocate's contract). */
int gai_allocate(gai_array_t *a, const char *fn);
/* Collective: frees the storage and the handle's description. */
void gai_free(gai_array_t *a);

/* ----------------------------------------------------------------- patches (rma.c) --- */
/* GA patch [lo, hi] inclusive, 0-based, to half-open int64; checks the bounds (aborts naming the
 * call, the dimension and the values). An empty patch (hi < lo somewhere) returns 0. */
int gai_patch_int(const gai_array_t *a, const int lo[], const int hi[], int64_t l[], int64_t h[],
                  const char *fn);
int gai_patch_i64(const gai_array_t *a, const int64_t lo[], const int64_t hi[], int64_t l[],
                  int64_t h[], const char *fn);
/* ld[ndim - 1] to int64 (NULL stays NULL). */
void gai_ld_int(int ndim, const int ld[], int64_t out[]);
/* The patch path of every put / get / acc: [l, h) half-open, buf row-major with leading
 * dimensions ld (ndim - 1, NULL: dense). op: 'p' put, 'g' get, 'a' acc (alpha: one element, NULL:
 * 1). req NULL: blocking. Ghost arrays map onto their padded storage. */
void gai_xfer(gai_array_t *a, int op, const int64_t l[], const int64_t h[], void *buf,
              const int64_t ld[], const void *alpha, rmc_request_h *req, const char *fn);

/* Element idx[]'s owner (world rank) and address in the owner's address space (rma.c). */
void gai_elem_addr(gai_array_t *a, const int64_t idx[], int *rank, void **addr, const char *fn);
/* rma.c's active-message handler for element lists: registered by GA_Initialize (collective),
 * removed by GA_Terminate (local). */
void gai_rma_init(const char *fn);
void gai_rma_fini(void);
/* Frees rma.c's per-array caches (gai_free calls it). */
void gai_rma_release(gai_array_t *a);
/* Completes every outstanding non-blocking operation (rma.c). */
void gai_nb_wait_all(const char *fn);
/* The NGA_NbWait / NGA_NbTest handle of a request (0 for RMC_REQUEST_NULL: complete; when every
 * handle slot is taken the request is completed at once and 0 returned). rma.c. */
ga_nbhdl_t gai_nb_new(rmc_request_h req, const char *fn);
/* A list of requests in flight (start it as {0}), for calls that issue several transfers. rma.c. */
typedef struct gai_reqs {
    rmc_request_h *r;
    size_t n, cap;
} gai_reqs_t;
/* A new entry (RMC_REQUEST_NULL) for the next transfer's request; aborts when out of memory. */
rmc_request_h *gai_reqs_add(gai_reqs_t *q, const char *fn);
/* Completes every request of *q and empties it (GA_Error on a failure). */
void gai_reqs_wait(gai_reqs_t *q, const char *fn);
/* One NGA_NbWait / NGA_NbTest handle completing every request of *q (0 when none is in flight),
 * which then owns them; *q is emptied. */
ga_nbhdl_t gai_reqs_handle(gai_reqs_t *q, const char *fn);

/* Local block of rank `rank` (its first block for block-cyclic arrays): [lo, hi) half-open, 0
 * when the rank owns nothing. */
int gai_owned_block(gai_array_t *a, int rank, int64_t lo[], int64_t hi[]);
/* In-place pointer and leading dimensions of logical block t owned by this rank (or on its node):
 * NULL when not reachable. For ghost arrays: the first owned element inside the padding, ld of the
 * padded block. */
void *gai_block_ptr(gai_array_t *a, int64_t t, int64_t ld[]);

/* -------------------------------------------------------------------- groups (coll.c) --- */
/* The group of handle p (GAI_WORLD included); aborts on an invalid handle. */
gai_group_t *gai_group(int p, const char *fn);
/* The communicator the matrices of group p's arrays are created on: MPI_COMM_NULL when the group
 * holds every process (rmc_matrix_create), else the group's own (rmc_matrix_create_comm). Aborts
 * on a process outside the group. */
MPI_Comm gai_group_comm(int p, const char *fn);
/* The group of handle p, which this process must be in: aborts on fn's behalf otherwise ("process
 * R is not in group p"), as it does on an invalid handle. */
gai_group_t *gai_group_member(int p, const char *fn);
/* The world rank of member i of group p (also on a process outside it); aborts on fn's behalf
 * when i is outside the group. */
int gai_group_rank(int p, int i, const char *fn);
/* Barrier of the default group / of a group; completes outstanding RMA first (GA_Sync). */
void gai_sync_group(int p, const char *fn);
/* x[0..n-1] reduced over group p: op "+", "*", "max", "min", "absmax", "absmin", "or", "and". */
void gai_gop(int p, int type, void *x, int n, const char *op, const char *fn);

/* --------------------------------------------------------------------- ghosts.c --- */
/* Hooks for arrays with ghost cells (ghosts.c); a no-op/absent for the rest. */
rmc_status_t gai_ghost_setup(gai_array_t *a, const char *fn);
void gai_ghost_release(gai_array_t *a);
/* Logical index idx[] of a ghost array -> its index in the padded storage matrix. */
void gai_ghost_index(const gai_array_t *a, const int64_t idx[], int64_t p[]);
void gai_ghost_xfer(gai_array_t *a, int op, const int64_t l[], const int64_t h[], void *buf,
                    const int64_t ld[], const void *alpha, rmc_request_h *req, const char *fn);

/* ------------------------------------------------------------------------ ddb.c --- */
/* GA's default blocking (what GA 5.8.2 chooses for NGA_Create with or without chunk): for an
 * array of dims[0..ndim-1] over nproc processes with minimum block sizes chunk[] (NULL or <= 0:
 * none), the number of blocks per dimension nblock[] (their product <= nproc) and their 0-based
 * starts map[] (dimension 0's nblock[0] starts, then dimension 1's, ...; map has room for the sum
 * of nblock, at most nproc per dimension). */
void gai_ddb(int ndim, const int64_t dims[], const int64_t chunk[], int nproc, int nblock[],
             int64_t map[]);

/* ---------------------------------------------------------------------- helpers --- */
/* 1 when the patches have the same number of elements in the same shape, ignoring dimensions of
 * extent 1 (GA's "conforming" patches). */
int gai_conforming(int na, const int64_t al[], const int64_t ah[], int nb, const int64_t bl[],
                   const int64_t bh[]);
/* src[0..n-1] as int64 in buf (cap entries) or, when larger, in a malloc'd array stored in
 * *heap too (the caller frees *heap). NULL src gives NULL. */
int64_t *gai_to64(const int *src, size_t n, int64_t *buf, size_t cap, int64_t **heap);
/* *d += *s for one element of GA type t (complex: both parts) (matops.c). */
void gai_elem_add(int t, void *d, const void *s);
/* Elements in [l, h). */
int64_t gai_patch_count(int ndim, const int64_t l[], const int64_t h[]);

/* --------------------------------------------------------------------- print.c --- */
/* GA_Print_stats' create / destroy counts (defined in print.c; counted by create.c). */
extern long gai_ncreate, gai_ndestroy;

#endif
