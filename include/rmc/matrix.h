/* RMC containers: distributed dense matrices and arrays (seed 001 ch. 7.2, Tables 7.1-7.2) and
 * their multiplication (§7.3-7.6).
 *
 * A distribution (rmc_dist_h) splits an array of 1 to RMC_MATRIX_MAX_DIM dimensions into a grid
 * of tiles (rectangular blocks) and names each tile's owner. It is a replicated description: every
 * rank builds the same one locally (no communication), and a matrix created on it is collective.
 * Tiles are numbered row-major over the tile grid (the last dimension fastest), as elements are.
 * Three kinds:
 *   regular block-cyclic  every tile of dimension d has tile[d] elements (the last one of a
 *                         dimension may be shorter: edge tiles), and tile t goes to the process at
 *                         grid coordinates (t_d mod pgrid[d])_d, the process grid numbered
 *                         row-major (ScaLAPACK's and BCL's layout; one tile per process when
 *                         tile[d] = ceil(dims[d] / pgrid[d]), "div").
 *   irregular             dimension d is split at given points into nblock[d] blocks of any
 *                         sizes (GA's NGA_Create_irreg map); the process grid is the block grid,
 *                         one block per process.
 *   round-robin           regular tiles dealt to ranks 0, 1, ..., nranks-1, 0, ... in tile order
 *                         (GA's simple block-cyclic distribution, GA_Set_block_cyclic).
 * The ranks a process grid does not cover (pgrid product below nranks) own nothing.
 * BCL's block descriptors (Table 7.1) are 2-D constructors of the regular kind: rmc_dist_2d.
 *
 * A matrix (rmc_matrix_h) is a distributed array of one element type on a distribution: each tile
 * is stored contiguously, row-major, in its owner's segment (rmc/gptr.h), and every rank holds the
 * directory of tile pointers. Any rank reads and writes any part with one-sided operations:
 * elements, whole tiles, and patches (sub-arrays) that may span many tiles, moved as comm strided
 * transfers (one per tile touched, never element by element); node-local tiles are also reachable
 * in place (rmc_matrix_tile_local). Patches are half-open, [lo, hi) in each dimension, and the
 * caller's buffer is row-major with leading dimensions ld[0..ndim-2] (ld[d]: the buffer's extent in
 * dimension d + 1, in elements, >= hi[d+1] - lo[d+1]; GA's convention).
 *
 * Completion and ordering are comm's (rmc/comm.h, rmc/strided.h): a blocking put or accumulate
 * returns when the caller's buffer may be reused, a get when the data has arrived; puts and
 * accumulates are visible to the calling rank's later gets at once and to other ranks after
 * rmc_fence_all or rmc_barrier. Accumulates (dst += alpha * src) are element-wise atomic with
 * every other accumulate. _nb forms return a request (rmc_wait / rmc_test) covering every
 * transfer of the patch (RMC_REQUEST_NULL when it completed at once); buffers must stay untouched
 * until it completes.
 *
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE (not a matrix or distribution, or destroyed), RMC_ERR_ARG
 * (NULL pointers, ndim out of range, a non-positive dimension, lo > hi, ld too small, an unknown
 * kind, element type or algorithm), RMC_ERR_BOUNDS (an index or patch outside the array),
 * RMC_ERR_TYPE (an element type an operation does not support, matrices of different types),
 * RMC_ERR_NOMEM, RMC_ERR_TOO_BIG (sizes whose products overflow), RMC_ERR_STATE (ranks in
 * different collectives), comm's errors. Every failure says which call, which argument and why
 * (rmc_last_error). */
#ifndef RMC_MATRIX_H
#define RMC_MATRIX_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/status.h>
#include <rmc/comm.h>
#include <rmc/gptr.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMC_MATRIX_MAX_DIM 7

/* ---------------------------------------------------------------- distributions --- */

typedef struct rmc_dist *rmc_dist_h;

typedef enum rmc_dist_kind {
    RMC_DIST_REGULAR = 0,     /* block-cyclic over a process grid */
    RMC_DIST_IRREGULAR = 1,   /* split points per dimension, blocks cyclic over a process grid
                                 (one block per process unless rmc_dist_irregular_grid) */
    RMC_DIST_ROUND_ROBIN = 2  /* regular tiles dealt to the ranks in tile order */
} rmc_dist_kind_t;

/* Local (needs rmc_init: it reads the number of ranks). Regular block-cyclic: dims[d] elements in
 * dimension d, tiles of tile[d] elements (0: ceil(dims[d] / pgrid[d])), dealt cyclically to a
 * process grid pgrid[0..ndim-1] (NULL: chosen, rmc_dist_pgrid; its product must not exceed the
 * number of ranks). tile == NULL: 0 in every dimension (one tile per process). */
rmc_status_t rmc_dist_regular(int ndim, const int64_t dims[], const int64_t tile[],
                              const int pgrid[], rmc_dist_h *d);

/* Local. Irregular: dimension d split into nblock[d] blocks starting at map[off_d + 0 ..
 * nblock[d] - 1] (map holds the starts of dimension 0's blocks, then dimension 1's, ...; each
 * dimension's starts begin at 0 and increase strictly). The process grid is nblock[] (product <=
 * the number of ranks). GA's NGA_Create_irreg with 0-based starts. */
rmc_status_t rmc_dist_irregular(int ndim, const int64_t dims[], const int nblock[],
                                const int64_t map[], rmc_dist_h *d);

/* Local. Irregular tiles dealt cyclically over a process grid: the tiles of rmc_dist_irregular
 * (nblock[d] blocks per dimension at the starts in map, any number of them), tile (t_0, t_1, ..)
 * owned by process (t_0 mod pgrid[0], t_1 mod pgrid[1], ..) of the grid (product of pgrid <= the
 * number of ranks). GA_Set_tiled_irreg_proc_grid. Errors: RMC_ERR_ARG (naming the argument),
 * RMC_ERR_NOT_INIT, RMC_ERR_NOMEM. */
rmc_status_t rmc_dist_irregular_grid(int ndim, const int64_t dims[], const int nblock[],
                                     const int64_t map[], const int pgrid[], rmc_dist_h *d);

/* Local. Round-robin: tiles of block[d] elements, tile number t (row-major) owned by rank
 * t mod nranks (GA_Set_block_cyclic). */
rmc_status_t rmc_dist_round_robin(int ndim, const int64_t dims[], const int64_t block[],
                                  rmc_dist_h *d);

/* BCL's block descriptors (seed 001 Table 7.1) for an m x n matrix, regular kind:
 *   RMC_BLOCK_RECT    tiles as square as possible, one per process: a process grid of the ranks
 *                     shaped like the matrix (param unused)
 *   RMC_BLOCK_ROW     each tile spans whole rows: param rows per tile (0: div over the ranks)
 *   RMC_BLOCK_COLUMN  each tile spans whole columns: param columns per tile (0: div)
 *   RMC_BLOCK_SQUARE  square tiles of side param (0: about the shorter side of a rank's block, so
 *                     every rank gets tiles where the matrix has as many rows and columns as the
 *                     grid), dealt cyclically over a process grid shaped like the matrix
 *                     (square-as-possible for a square matrix)
 *   RMC_BLOCK_OPT     chosen for multiplication: a process grid shaped like the matrix and square
 *                     tiles of at most param (0: 2048) elements a side, each rank's tiles cyclic
 *                     over the grid (more tiles than ranks: room to overlap and balance)
 * BCL's BlockCustom is rmc_dist_regular with explicit tiles and grid. */
typedef enum rmc_block {
    RMC_BLOCK_RECT = 0,
    RMC_BLOCK_ROW = 1,
    RMC_BLOCK_COLUMN = 2,
    RMC_BLOCK_SQUARE = 3,
    RMC_BLOCK_OPT = 4
} rmc_block_t;
rmc_status_t rmc_dist_2d(rmc_block_t kind, int64_t m, int64_t n, int64_t param, rmc_dist_h *d);

/* Local. A process grid for ndim dimensions of the given sizes over nprocs processes: factors of
 * nprocs (their product is nprocs) assigned so that the blocks are as close to cubes as possible
 * (larger dimensions get more processes). */
rmc_status_t rmc_dist_pgrid(int ndim, const int64_t dims[], int nprocs, int pgrid[]);

/* Local. Places the distribution's processes on chosen ranks: process p of the process grid
 * (numbered row-major; round-robin: the p-th rank tiles are dealt to) becomes rank ranks[p], for
 * p < n. n must be at least the grid's process count (round-robin: any n >= 1 deals the tiles to
 * these n ranks only) and at most the number of ranks; the ranks distinct. n == 0 restores the
 * identity. GA's restricted arrays and arrays on process groups. Errors: RMC_ERR_HANDLE,
 * RMC_ERR_ARG, RMC_ERR_RANK, RMC_ERR_NOMEM. */
rmc_status_t rmc_dist_set_ranks(rmc_dist_h d, const int ranks[], int n);

/* Local. Frees a distribution (the matrices created on it keep their own copy). NULL-safe. */
void rmc_dist_free(rmc_dist_h d);

/* Local queries. Dimensions, tile grid (tiles per dimension), process grid, kind. */
int rmc_dist_ndim(rmc_dist_h d);
rmc_dist_kind_t rmc_dist_kind(rmc_dist_h d);
rmc_status_t rmc_dist_dims(rmc_dist_h d, int64_t dims[]);
rmc_status_t rmc_dist_tile_grid(rmc_dist_h d, int64_t ntiles[]);
rmc_status_t rmc_dist_proc_grid(rmc_dist_h d, int pgrid[]);
/* Total number of tiles (0 for a bad handle). */
int64_t rmc_dist_ntiles(rmc_dist_h d);
/* Tile number t (row-major over the tile grid) <-> tile coordinates. */
int64_t rmc_dist_tile_index(rmc_dist_h d, const int64_t tc[]);
rmc_status_t rmc_dist_tile_coords(rmc_dist_h d, int64_t t, int64_t tc[]);
/* Tile t's elements [lo, hi) and owner. */
rmc_status_t rmc_dist_tile(rmc_dist_h d, int64_t t, int64_t lo[], int64_t hi[], int *owner);
/* The tile holding element idx[] and its owner. */
rmc_status_t rmc_dist_locate(rmc_dist_h d, const int64_t idx[], int64_t *t, int *owner);
/* The tiles rank `rank` owns, in increasing order: *n of them, their numbers in tiles[0..max-1]
 * (tiles may be NULL with max 0 to count). */
rmc_status_t rmc_dist_owned(rmc_dist_h d, int rank, int64_t *tiles, int64_t max, int64_t *n);
/* Two distributions split and place the same dimensions identically (1 yes, 0 no). */
int rmc_dist_same(rmc_dist_h a, rmc_dist_h b);

/* ----------------------------------------------------------------------- matrices --- */

/* Element types (comm's accumulate types, rmc/strided.h). */
typedef enum rmc_elem {
    RMC_ELEM_I32 = 1,  /* int32_t */
    RMC_ELEM_I64 = 2,  /* int64_t */
    RMC_ELEM_F32 = 3,  /* float */
    RMC_ELEM_F64 = 4,  /* double */
    RMC_ELEM_C32 = 5,  /* float _Complex */
    RMC_ELEM_C64 = 6,  /* double _Complex */
    RMC_ELEM_OPAQUE = 7 /* bytes of a size given at creation (rmc_matrix_create_opaque): moved and
                           filled, never computed on (no accumulates, no multiplications) */
} rmc_elem_t;
#define RMC_ELEM_OPAQUE_MAX (1 << 20) /* largest opaque element, bytes */
/* Bytes per element, 0 for an unknown type and for RMC_ELEM_OPAQUE (its size is the matrix's). */
size_t rmc_elem_size(rmc_elem_t e);

typedef struct rmc_matrix *rmc_matrix_h;

/* Collective. A matrix of element type e on (a copy of) distribution d, every element zero. Every
 * rank passes an equal distribution and type (checked: RMC_ERR_ARG everywhere otherwise, naming
 * the argument: d or e). e RMC_ELEM_OPAQUE is RMC_ERR_ARG (its elements need a size:
 * rmc_matrix_create_opaque). On error no matrix exists on any rank. */
rmc_status_t rmc_matrix_create(rmc_dist_h d, rmc_elem_t e, rmc_matrix_h *m);
/* Collective over the ranks of comm only (members of RMC's job, e.g. from MPI_Comm_split of
 * rmc_comm's communicator): the same for a matrix whose tiles all lie on comm's ranks (the
 * distribution placed there with rmc_dist_set_ranks; RMC_ERR_ARG otherwise). Any rank may then
 * read and write it one-sidedly; rmc_matrix_destroy, rmc_matrix_fill and rmc_matrix_gemm /
 * _patch on it are collective over comm; the sparse multiplications refuse it
 * (RMC_ERR_UNSUPPORTED). Once destroyed, those calls fail on its members alone (RMC_ERR_HANDLE,
 * no collective). GA's arrays on process groups. */
rmc_status_t rmc_matrix_create_comm(MPI_Comm comm, rmc_dist_h d, rmc_elem_t e, rmc_matrix_h *m);
/* Collective over comm (MPI_COMM_NULL: all ranks, as rmc_matrix_create; else as
 * rmc_matrix_create_comm). A matrix of opaque elements of esize bytes (1 .. RMC_ELEM_OPAQUE_MAX),
 * every byte zero: patches, tiles, elements and rmc_matrix_fill move them as bytes; accumulates
 * (RMC_ERR_TYPE) and multiplications refuse it. GA's user-defined types (NGA_Register_type). */
rmc_status_t rmc_matrix_create_opaque(MPI_Comm comm, rmc_dist_h d, size_t esize,
                                      rmc_matrix_h *m);
/* Collective over the parent's ranks. A matrix on distribution d (element type e; esize for
 * RMC_ELEM_OPAQUE, else ignored) stored in the parent's memory: each rank's part starts where the
 * parent's does and must fit in it (RMC_ERR_TOO_BIG otherwise, on every rank). Its elements are the
 * parent's bytes as they are (not zeroed); writes through either change both. Destroying it frees
 * nothing; the parent must outlive it. A rank whose parent is not a live matrix (NULL, destroyed,
 * foreign: RMC_ERR_HANDLE naming the parent) cannot know the parent's ranks: it takes part in a
 * creation over all ranks and fails there, so every rank fails together when the parent is a
 * matrix of all ranks (the others: "another rank failed"). When the parent is a matrix of a subset
 * (rmc_matrix_create_comm), a member with a bad parent meets no one: the collective waits for it
 * (RMC_COLL_TIMEOUT), as every collective of such a matrix does with a bad handle; a destroyed
 * subset parent fails alone. GA_Overlay. */
rmc_status_t rmc_matrix_create_overlay(rmc_matrix_h parent, rmc_dist_h d, rmc_elem_t e,
                                       size_t esize, rmc_matrix_h *m);
/* Collective (over comm for a matrix of rmc_matrix_create_comm). Completes every rank's
 * operations on m (a barrier) and frees it. */
rmc_status_t rmc_matrix_destroy(rmc_matrix_h m);

/* Local. The matrix's distribution (owned by the matrix: do not free) and element type. */
rmc_dist_h rmc_matrix_dist(rmc_matrix_h m);
rmc_elem_t rmc_matrix_elem(rmc_matrix_h m);
/* Local. Bytes per element (0 for an invalid handle). */
size_t rmc_matrix_elem_size(rmc_matrix_h m);

/* Patches [lo, hi) between the matrix and a row-major buffer with leading dimensions ld[]
 * (ndim - 1 entries; NULL for a 1-D matrix or a dense buffer of exactly the patch's shape). An
 * empty patch (lo[d] == hi[d] for some d) moves nothing. acc: matrix += alpha * buf, alpha one
 * element of the matrix's type (NULL: 1). RMC_ERR_TOO_BIG (naming ld[k]) when the buffer's strides
 * (products of ld[] and the element size) or its extent overflow 64 bits, or a stride that has to
 * be moved as one is 2 GiB or more (comm's strided descriptors take int; a patch moves one tile at
 * a time, so only strides within one tile's part count). The buffer must span what ld[] describes
 * for the whole patch: element (i0, .., in) of the patch is at buf + sum_k (i_k - lo_k) x stride_k.
 */
rmc_status_t rmc_matrix_get(rmc_matrix_h m, const int64_t lo[], const int64_t hi[], void *buf,
                            const int64_t ld[]);
rmc_status_t rmc_matrix_put(rmc_matrix_h m, const int64_t lo[], const int64_t hi[],
                            const void *buf, const int64_t ld[]);
rmc_status_t rmc_matrix_acc(rmc_matrix_h m, const int64_t lo[], const int64_t hi[],
                            const void *buf, const int64_t ld[], const void *alpha);
rmc_status_t rmc_matrix_get_nb(rmc_matrix_h m, const int64_t lo[], const int64_t hi[], void *buf,
                               const int64_t ld[], rmc_request_h *req);
rmc_status_t rmc_matrix_put_nb(rmc_matrix_h m, const int64_t lo[], const int64_t hi[],
                               const void *buf, const int64_t ld[], rmc_request_h *req);
rmc_status_t rmc_matrix_acc_nb(rmc_matrix_h m, const int64_t lo[], const int64_t hi[],
                               const void *buf, const int64_t ld[], const void *alpha,
                               rmc_request_h *req);

/* One element at idx[]. */
rmc_status_t rmc_matrix_elem_get(rmc_matrix_h m, const int64_t idx[], void *v);
rmc_status_t rmc_matrix_elem_put(rmc_matrix_h m, const int64_t idx[], const void *v);

/* Whole tile t (row-major, its own extents: hi - lo of rmc_dist_tile) to / from buf. */
rmc_status_t rmc_matrix_tile_get(rmc_matrix_h m, int64_t t, void *buf);
rmc_status_t rmc_matrix_tile_put(rmc_matrix_h m, int64_t t, const void *buf);
rmc_status_t rmc_matrix_tile_get_nb(rmc_matrix_h m, int64_t t, void *buf, rmc_request_h *req);
rmc_status_t rmc_matrix_tile_put_nb(rmc_matrix_h m, int64_t t, const void *buf,
                                    rmc_request_h *req);
/* Local. Tile t in place: its first element's load/store address (when its owner is this rank or
 * on this node; RMC_ERR_NOT_FOUND otherwise, *p NULL) and its global pointer (any tile). */
rmc_status_t rmc_matrix_tile_local(rmc_matrix_h m, int64_t t, void **p);
rmc_gptr_t rmc_matrix_tile_gptr(rmc_matrix_h m, int64_t t);

/* Collective (over comm for a matrix of rmc_matrix_create_comm). Every element set to *v (one
 * element of the matrix's type), each rank on its own tiles, then a barrier. */
rmc_status_t rmc_matrix_fill(rmc_matrix_h m, const void *v);

/* ------------------------------------------------------------------ multiplication --- */

/* Algorithms (seed 001 §7.3-7.5, Algs 3-8, with the errata the issue lists corrected):
 *   RMC_GEMM_STATIONARY_C  each rank computes its own tiles of C, fetching A's and B's blocks
 *                          with one-sided gets (prefetching the next while it multiplies; the k
 *                          loop starts at an offset i + j so ranks spread their requests; node-
 *                          local blocks are used in place)
 *   RMC_GEMM_STATIONARY_A  each rank multiplies its own blocks of A by the B blocks they meet and
 *                          sends every partial C block to C's owner: an atomic remote accumulate
 *                          into C (RMC_GEMM_UPDATE=acc, the default), a descriptor pushed to the
 *                          owner's update queue (=queue, a CHECKSUM queue; the owner pulls the
 *                          block and adds it: seed 001 Alg 5), or a put into one of K copies of C
 *                          that the owners add up at the end (=copies: Alg 7)
 *   RMC_GEMM_STATIONARY_B  the same with B's blocks stationary
 *   RMC_GEMM_STEAL_RANDOM  stationary A, then work stealing: each (i, k) block's column products
 *                          are reserved one at a time by fetch-and-add on a reservation grid, a
 *                          rank that finished its own steals from random others
 *   RMC_GEMM_STEAL_LOCAL   the same, stealing first where it holds a block of A, B or C
 *   RMC_GEMM_SUMMA         the bulk-synchronous reference: MPI row and column communicators and
 *                          broadcasts (whole matrices, 'N' 'N', regular distributions with one
 *                          tile per process on one grid; else RMC_ERR_UNSUPPORTED on every rank,
 *                          C unchanged)
 *   RMC_GEMM_AUTO          the stationary variant that moves the least data between nodes:
 *                          each one's bytes (the statistics' count: A / B blocks fetched, C
 *                          blocks sent, node-local ones 0) summed exactly over the work grid and
 *                          the ranks, ties to C, then A, then B (not §7.5's mk/p + kn/p, ...,
 *                          which assume a sqrt(p) x sqrt(p) grid and every block remote); on
 *                          small tiles (under 48 rows or columns on average, more tiles than
 *                          ranks) owner
 *                          computes with panels shared by the tiles of a row or column, as for
 *                          matrices of a subset of the ranks (reported as stationary C)
 */
typedef enum rmc_gemm_algo {
    RMC_GEMM_AUTO = 0,
    RMC_GEMM_STATIONARY_C = 1,
    RMC_GEMM_STATIONARY_A = 2,
    RMC_GEMM_STATIONARY_B = 3,
    RMC_GEMM_STEAL_RANDOM = 4,
    RMC_GEMM_STEAL_LOCAL = 5,
    RMC_GEMM_SUMMA = 6
} rmc_gemm_algo_t;
/* Name of an algorithm ("stationary-c", ...), "?" when unknown. */
const char *rmc_gemm_algo_name(rmc_gemm_algo_t a);

/* Where one rank's time in a multiplication went (seconds; a Table 7.5 analogue), and what it
 * did. The four parts are disjoint stretches of total and come to nearly all of it:
 *   compute     local multiplies (BLAS, the sparse kernels) and scaling C by beta
 *   comm_wait   issuing fetches, accumulates, puts and queue descriptors, waiting for them to
 *               complete, and stealing's reservations (fetch-and-add)
 *   accumulate  pulling partial C blocks from the update queue and adding them, adding the copies
 *               (RMC_GEMM_UPDATE=copies), summing sparse partial products
 *   imbalance   waiting for the other ranks: the barriers and collective steps (the start's
 *               argument check, setting up and ending the update paths, stealing's reservation
 *               grid, SUMMA's and stationary C's per-step agreements) and the final barrier; a
 *               rank with no work spends its time here */
typedef struct rmc_gemm_stats {
    double total, compute, comm_wait, accumulate, imbalance;
    double flops; /* floating-point operations of this rank's local multiplies */
    /* bytes this rank fetched or sent: blocks of A and B fetched, partial C blocks accumulated
     * or put into (copies of) C, the update queue's blocks counted once, by the owner that pulls
     * them; blocks whose tile is on this rank's node (used in place, or reached by load and store)
     * count 0; SUMMA: the panels this rank receives by broadcast */
    double bytes;
    long tiles_stolen;  /* work-stealing variants: block products taken from others */
    rmc_gemm_algo_t algo; /* the algorithm that ran (AUTO resolved) */
} rmc_gemm_stats_t;

/* Collective. C = alpha * op(A) * op(B) + beta * C, op(X) = X ('N'), its transpose ('T') or its
 * conjugate transpose ('C'; on real types the transpose); lower case is accepted too; A, B, C 2-D matrices of one floating-point type
 * (F32, F64, C32, C64: RMC_ERR_TYPE otherwise) and any distributions (blocks are sliced where
 * the tile grids do not line up). alpha, beta point to one element of the type. Returns when C is
 * complete on every rank. stats (may be NULL) receives this rank's figures. Local multiplies are
 * BLAS (one thread per rank unless RMC_BLAS_THREADS says otherwise). Matrices of a subset of the
 * ranks (rmc_matrix_create_comm; all three on congruent communicators, RMC_ERR_ARG otherwise): a
 * collective of that communicator in which each member computes the part of C it owns, fetching
 * the panels of op(A) and op(B) it needs (algo is then ignored; stats say stationary-C). C is
 * written while A and B are read, so it must be neither of them nor share memory with them (an
 * overlay, rmc_matrix_create_overlay): RMC_ERR_ARG. Errors: as above; RMC_ERR_HANDLE naming the
 * bad one of A, B and C; RMC_ERR_ARG for mismatched dimensions (naming them), a bad trans
 * character, a NULL pointer (naming it: alpha, beta, alo .. chi) or C aliasing A or B. */
rmc_status_t rmc_matrix_gemm(char transa, char transb, const void *alpha, rmc_matrix_h a,
                             rmc_matrix_h b, const void *beta, rmc_matrix_h c,
                             rmc_gemm_algo_t algo, rmc_gemm_stats_t *stats);

/* Collective. The same on patches: C[clo, chi) = alpha * op(A[alo, ahi)) * op(B[blo, bhi)) +
 * beta * C[clo, chi) (GA's matmul_patch); the patches' shapes must agree after op. C must not be
 * A or B (nor share memory with them) even when the patches are disjoint: copy such an operand's
 * patch into a matrix of its own first (ga-compat's *Matmul_patch do). */
rmc_status_t rmc_matrix_gemm_patch(char transa, char transb, const void *alpha, rmc_matrix_h a,
                                   const int64_t alo[2], const int64_t ahi[2], rmc_matrix_h b,
                                   const int64_t blo[2], const int64_t bhi[2], const void *beta,
                                   rmc_matrix_h c, const int64_t clo[2], const int64_t chi[2],
                                   rmc_gemm_algo_t algo, rmc_gemm_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif
