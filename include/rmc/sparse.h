/* RMC containers: distributed sparse matrices (seed 001 §7.3, Table 7.2) and sparse multiplication:
 * SpMM (sparse x dense) and SpGEMM (sparse x sparse) with RDMA algorithms and a SUMMA baseline
 * (§7.4-7.6, Algs 2-8 with the errata corrected).
 *
 * A sparse matrix is an m x n matrix on a 2-D distribution (rmc/matrix.h, any kind) whose tiles are
 * CSR matrices (rmc/csr.h; doubles, 32- or 64-bit indices, the same width for every tile): tile t
 * holds the entries of its rows and columns, indices relative to the tile's first row and column.
 * Each tile lives in its owner's segment as one block (row pointers, column indices, values), and
 * every rank holds a directory (each tile's block and nonzero count). Any rank reads any tile
 * one-sidedly (rmc_spmatrix_tile_get: one transfer of the block after the directory lookup, or the
 * tile in place when its owner is on this node); only the owner changes a tile
 * (rmc_spmatrix_tile_set, a new block), and the change is seen by the others after the collective
 * rmc_spmatrix_renew (the directory rebroadcast), as in the seed (replace_tile / renew_tiles).
 *
 * Errors: as rmc/matrix.h, and RMC_ERR_FORMAT (a tile breaking the CSR rules, rmc_csr_check, or
 * of the wrong shape), RMC_ERR_TOO_BIG (32-bit indices overflowing), RMC_ERR_IO (files). Every
 * collective agrees on its outcome: on error nothing changed on any rank. */
#ifndef RMC_SPARSE_H
#define RMC_SPARSE_H

#include <stdint.h>
#include <rmc/status.h>
#include <rmc/comm.h>
#include <rmc/csr.h>
#include <rmc/matrix.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_spmatrix *rmc_spmatrix_h;

/* Collective. An empty (all-zero) sparse matrix on (a copy of) the 2-D distribution d, indices of
 * width idx64 (1: 64-bit; with 32-bit indices the dimensions must fit int32_t: RMC_ERR_TOO_BIG
 * otherwise). Every rank passes equal arguments (checked). */
rmc_status_t rmc_spmatrix_create(rmc_dist_h d, int idx64, rmc_spmatrix_h *s);
/* Collective. Completes every rank's operations on s (a barrier) and frees it. */
rmc_status_t rmc_spmatrix_destroy(rmc_spmatrix_h s);

/* Local queries: the distribution (owned by the matrix), the index width (-1 for a bad handle),
 * tile t's nonzeros as of the last renew (or this rank's own set_tile; -1 for a bad handle or
 * tile), and (collective) the total nonzero count (every rank's own tiles as they are now). */
rmc_dist_h rmc_spmatrix_dist(rmc_spmatrix_h s);
int rmc_spmatrix_idx64(rmc_spmatrix_h s);
int64_t rmc_spmatrix_tile_nnz(rmc_spmatrix_h s, int64_t t);
rmc_status_t rmc_spmatrix_nnz(rmc_spmatrix_h s, int64_t *nnz);

/* Local (owner only). Replaces tile t (owned by the caller) by a copy of `tile` (its shape must be
 * the tile's; rmc_csr_check must hold; converted to the matrix's index width). The caller sees it
 * at once, the other ranks after the next rmc_spmatrix_renew; the old block stays readable until
 * then. Errors: RMC_ERR_ARG (not the owner, tile NULL), RMC_ERR_BOUNDS (t not a tile),
 * RMC_ERR_FORMAT, RMC_ERR_TOO_BIG, RMC_ERR_NOMEM. */
rmc_status_t rmc_spmatrix_tile_set(rmc_spmatrix_h s, int64_t t, const rmc_csr_t *tile);
/* Collective. Makes every rank's tile_set visible everywhere (the directory is rebroadcast) and
 * frees the replaced blocks. */
rmc_status_t rmc_spmatrix_renew(rmc_spmatrix_h s);

/* Tile t into *out (a CSR it owns; release with rmc_csr_free): one get of the tile's block (a copy
 * of it when its owner is on this node). _nb: completes with the request (out is filled then;
 * RMC_REQUEST_NULL when it is already). */
rmc_status_t rmc_spmatrix_tile_get(rmc_spmatrix_h s, int64_t t, rmc_csr_t *out);
rmc_status_t rmc_spmatrix_tile_get_nb(rmc_spmatrix_h s, int64_t t, rmc_csr_t *out,
                                      rmc_request_h *req);
/* Local. Tile t in place when its owner is on this node (*view borrows the owner's memory: do not
 * free or change it; valid until the next renew), RMC_ERR_NOT_FOUND otherwise. */
rmc_status_t rmc_spmatrix_tile_view(rmc_spmatrix_h s, int64_t t, rmc_csr_t *view);

/* The submatrix rows [r0, r1), columns [c0, c1) into *out (re-indexed from 0, the matrix's index
 * width), whatever tiles it spans: each tile touched is read (a band of tile rows at a time, the
 * gets in flight together; node-local ones in place) and cut, and each row of the result is its
 * pieces from the tiles of its band in column order (tiles do not overlap: a concatenation is the
 * sum). Errors: RMC_ERR_BOUNDS (outside the matrix), RMC_ERR_ARG (reversed, NULL). */
rmc_status_t rmc_spmatrix_slice(rmc_spmatrix_h s, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                                rmc_csr_t *out);

/* Collective. Fills s (replacing everything, tile_sets not yet renewed included; the end is a
 * renew) from the whole matrix `a` given on rank `root` (the others pass NULL): each tile is cut
 * out and sent to its owner. a may have either index width. RMC_ERR_RANK (on every rank) for a
 * root outside 0 .. nranks - 1. */
rmc_status_t rmc_spmatrix_scatter(rmc_spmatrix_h s, int root, const rmc_csr_t *a);
/* Collective. Fills s as scatter does from every rank's part: rows [r0, r0 + part->nrows) of the
 * matrix, all its columns (a rank may give 0 rows or NULL; parts may come in any order and must
 * not overlap; rows no part gives are empty). */
rmc_status_t rmc_spmatrix_assemble(rmc_spmatrix_h s, int64_t r0, const rmc_csr_t *part);
/* Collective. The whole matrix on rank `root` (*out there, of the matrix's index width; others
 * pass NULL): every rank's own tiles as they are now (its tile_sets included). RMC_ERR_RANK as
 * scatter's. */
rmc_status_t rmc_spmatrix_gather(rmc_spmatrix_h s, int root, rmc_csr_t *out);

/* Collective. Matrix Market input (rank 0 reads the file, the matrix is scattered on a distribution
 * made by rmc_dist_2d(kind, m, n, 0)) and output (gathered to rank 0, written there). A file that
 * cannot be read fails on every rank, with the reason (path, line) in rmc_last_error; a file of 0
 * rows or columns is RMC_ERR_UNSUPPORTED (no distribution has no tiles; rmc_csr_read_mm reads it).
 * RMC_BLOCK_SQUARE and RMC_BLOCK_OPT give a very skinny matrix one tile per row or column (tiles of
 * its shorter side): beyond INT_MAX / 3 tiles that is RMC_ERR_TOO_BIG (use RMC_BLOCK_RECT or _ROW).
 * Every rank passes the same path. */
rmc_status_t rmc_spmatrix_read_mm(const char *path, rmc_block_t kind, int idx64, rmc_spmatrix_h *s);
rmc_status_t rmc_spmatrix_write_mm(rmc_spmatrix_h s, const char *path);

/* Collective. Generators on distribution d: R-MAT of 2^scale rows (d must be 2^scale square; seed
 * 001 §7.4: a = 0.6, b = c = 0.4 / 3) and Erdős–Rényi with density p; every rank generates its rows
 * of a row partition (the same matrix whatever the number of ranks) and the parts are assembled. */
rmc_status_t rmc_spmatrix_rmat(rmc_dist_h d, int scale, int edge_factor, double a, double b,
                               double c, uint64_t seed, int idx64, rmc_spmatrix_h *s);
rmc_status_t rmc_spmatrix_erdos_renyi(rmc_dist_h d, double p, uint64_t seed, int idx64,
                                      rmc_spmatrix_h *s);

/* ------------------------------------------------------------------ multiplication --- */

/* Algorithms: as rmc_gemm_algo_t (rmc/matrix.h), for A sparse. The tile grids must line up: A's
 * column tiles as B's row tiles, A's rows as C's, B's columns as C's (RMC_ERR_ARG naming the
 * mismatch otherwise); SUMMA also needs one tile per process on one grid. The stationary-A/B and
 * stealing variants send partial C blocks: SpMM (C dense) as rmc_matrix_gemm does
 * (RMC_GEMM_UPDATE), SpGEMM (C sparse) always through the owners' update queues (a CHECKSUM queue
 * of descriptors of partial CSR blocks left in the producer's segment; the owner pulls them and
 * sums them with the accumulator). RMC_GEMM_AUTO here picks by seed 001 §7.5's volumes (C: A + B,
 * A: B + C, B: A + C, a sparse operand's size its tiles' bytes, sparse C's A + B), not by the exact
 * count of the dense multiplication. */

/* Collective. SpMM: C = alpha A B + beta C, A sparse (m x k), B (k x n) and C (m x n) dense double
 * matrices. stats as rmc_matrix_gemm. C may not be B nor share its memory (an overlay):
 * RMC_ERR_ARG. A bad handle is RMC_ERR_HANDLE naming it (A, B or C; rmc_spmatrix_spgemm too). */
rmc_status_t rmc_spmatrix_spmm(double alpha, rmc_spmatrix_h a, rmc_matrix_h b, double beta,
                               rmc_matrix_h c, rmc_gemm_algo_t algo, rmc_gemm_stats_t *stats);

/* Collective. SpGEMM: C = A B, A (m x k), B (k x n), C (m x n) sparse of one index width (else
 * RMC_ERR_ARG; C may not be A or B either); C's previous contents are replaced (renewed at the
 * end). Local products by Gustavson's algorithm with accumulator `spa` (rmc/csr.h), partial blocks
 * summed with it too. Errors found before any work (arguments, grids) leave C unchanged (its
 * tile_sets not yet renewed stay so); a failure during the multiplication (memory, transfers)
 * leaves C undefined on every rank (some tiles may be new). */
rmc_status_t rmc_spmatrix_spgemm(rmc_spmatrix_h a, rmc_spmatrix_h b, rmc_spmatrix_h c,
                                 rmc_gemm_algo_t algo, rmc_spa_kind_t spa,
                                 rmc_gemm_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif
