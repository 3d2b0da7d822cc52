/* RMC containers: local sparse matrices in CSR form and their kernels (seed 001 ch. 7.3-7.5): the
 * tiles of the distributed sparse matrix (rmc/sparse.h) and everything a rank does with them
 * locally: building from triplets, checking, Matrix Market input and output, R-MAT and
 * Erdős–Rényi generators, sparse accumulators, CSR x dense (SpMM) and Gustavson CSR x CSR (SpGEMM)
 * multiplication, and sums of CSR matrices.
 *
 * Local: none of these talks to another rank, none needs rmc_init (errors are reported through
 * rmc_last_error all the same). Values are doubles. Indices are 32- or 64-bit (idx64): rowptr has
 * nrows + 1 entries and colind nnz entries of that width (int32_t or int64_t). A valid matrix has
 * rowptr[0] == 0, rowptr nondecreasing, rowptr[nrows] == nnz, and in each row column indices
 * strictly increasing (sorted, no duplicates) in [0, ncols); rmc_csr_check says which rule fails
 * where. With 32-bit indices nrows, ncols and nnz must fit in int32_t (RMC_ERR_TOO_BIG otherwise).
 *
 * Every function returns RMC_OK or an error (RMC_ERR_ARG: a NULL or inconsistent argument;
 * RMC_ERR_NOMEM; RMC_ERR_TOO_BIG: an index overflows its width; RMC_ERR_FORMAT: malformed input
 * or a matrix breaking a rule above; RMC_ERR_IO: a file that cannot be read or written), with the
 * call, the argument and the reason (for files: the path and the line) in rmc_last_error. On error
 * an output matrix is left empty (as rmc_csr_init made it) and nothing else is changed.
 *
 * An output matrix (*out; a of rmc_csr_alloc) is overwritten, not freed: pass one that is empty
 * (rmc_csr_init, rmc_csr_free) or free it first. It may not be one of the inputs (RMC_ERR_ARG).
 * Every function checks its input matrices completely (rmc_csr_check's rules, O(nrows + nnz))
 * before it reads them, so a malformed matrix is an error, never a wild access; rmc_csr_slice
 * checks only the rows it slices (and the row pointers' two ends). An accumulator handle, like a matrix, is used by one thread at
 * a time. */
#ifndef RMC_CSR_H
#define RMC_CSR_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_csr {
    int64_t nrows, ncols, nnz;
    int idx64;    /* 1: int64_t rowptr and colind, 0: int32_t */
    void *rowptr; /* nrows + 1 entries */
    void *colind; /* nnz entries */
    double *val;  /* nnz values */
    int own;      /* the arrays were allocated by RMC (rmc_csr_free frees them) */
} rmc_csr_t;

/* An empty 0 x 0 matrix of the given index width, owning nothing (safe to rmc_csr_free). */
void rmc_csr_init(rmc_csr_t *a, int idx64);
/* Frees what a owns and makes it empty (rmc_csr_init with its index width). NULL-safe. */
void rmc_csr_free(rmc_csr_t *a);

/* An nrows x ncols matrix with room for nnz nonzeros: rowptr zeroed, colind and val
 * uninitialized, a->nnz = nnz. RMC_ERR_TOO_BIG when a dimension or nnz does not fit idx64's width.
 */
rmc_status_t rmc_csr_alloc(rmc_csr_t *a, int64_t nrows, int64_t ncols, int64_t nnz, int idx64);

/* Row pointer and column index i of a, whatever its width. */
static inline int64_t rmc_csr_rowptr(const rmc_csr_t *a, int64_t i)
{
    return a->idx64 ? ((const int64_t *)a->rowptr)[i] : ((const int32_t *)a->rowptr)[i];
}
static inline int64_t rmc_csr_colind(const rmc_csr_t *a, int64_t k)
{
    return a->idx64 ? ((const int64_t *)a->colind)[k] : ((const int32_t *)a->colind)[k];
}

/* Checks every rule of the header comment; RMC_ERR_FORMAT naming the first broken one (which row,
 * which entry, which value). */
rmc_status_t rmc_csr_check(const rmc_csr_t *a);

/* Builds *out (nrows x ncols, index width idx64) from n triplets (row[k], col[k], val[k]) in any
 * order: sorted by row then column, duplicates summed (dup_sum 1) or refused (0: RMC_ERR_FORMAT
 * naming the duplicate). An index out of range is RMC_ERR_ARG (naming the triplet). */
rmc_status_t rmc_csr_from_coo(rmc_csr_t *out, int64_t nrows, int64_t ncols, int64_t n,
                              const int64_t *row, const int64_t *col, const double *val,
                              int dup_sum, int idx64);

/* A deep copy (*out owns its arrays), optionally to another index width. */
rmc_status_t rmc_csr_copy(rmc_csr_t *out, const rmc_csr_t *a, int idx64);

/* Writes a as a dense row-major nrows x ncols array (leading dimension ld >= ncols), zeros
 * elsewhere. */
rmc_status_t rmc_csr_to_dense(const rmc_csr_t *a, double *d, int64_t ld);

/* The submatrix rows [r0, r1), columns [c0, c1) of a, re-indexed from 0 (the slicing of a sparse
 * tile). */
rmc_status_t rmc_csr_slice(rmc_csr_t *out, const rmc_csr_t *a, int64_t r0, int64_t r1, int64_t c0,
                           int64_t c1);

/* ----------------------------------------------------------------- Matrix Market --- */

/* Reads a Matrix Market file: "%%MatrixMarket matrix coordinate real|integer|pattern
 * general|symmetric|skew-symmetric" (pattern entries are 1.0; symmetric ones are mirrored) and
 * "array real|integer general" (dense, column-major; zeros dropped). Comments (%) and blank lines
 * are skipped. Errors: RMC_ERR_IO (cannot open or read: path and errno's text), RMC_ERR_FORMAT
 * (bad banner, unsupported field or symmetry, a malformed size line or entry, an index out of
 * range, fewer or more entries than the size line says: path and line number), RMC_ERR_TOO_BIG
 * (idx64 == 0 and an index overflows). Duplicates are summed. Numbers are read as strtoll /
 * strtod read them: a real value may be nan, inf or a hex float, one below the smallest double
 * is stored as an explicit zero, one above the largest is RMC_ERR_FORMAT; fields are separated by
 * blanks (a \r, \v or \f before a field counts as one, after the last field of a line it is an
 * error). */
rmc_status_t rmc_csr_read_mm(rmc_csr_t *out, const char *path, int idx64);
/* Writes a as "coordinate real general", 1-based, values with 17 significant digits (reading it
 * back gives the same matrix). */
rmc_status_t rmc_csr_write_mm(const rmc_csr_t *a, const char *path);

/* -------------------------------------------------------------------- generators --- */

/* R-MAT (Chakrabarti et al.; seed 001 §7.4): 2^scale x 2^scale, edge_factor * 2^scale edges, each
 * placed by recursive quadrant choice with probabilities a, b, c, d = 1 - a - b - c (seed 001:
 * a = 0.6, b = c = d = 0.4 / 3); duplicate edges summed, values uniform in (0, 1]. Deterministic
 * for a given seed. Only the rows [r0, r1) are kept (a rank's part; 0 and 2^scale for all): the
 * same edges are generated whatever the range, so the parts of several ranks form the whole.
 * *out is (r1 - r0) x 2^scale: its row i is row r0 + i of the whole matrix, so the parts of
 * consecutive ranges, stacked, are the whole. Edge e is drawn from a counter-based stream of
 * (seed, e) (splitmix64), its row bits first, so a rank drops an edge of another rank's rows after
 * a few draws. scale in [0, 62] (at most 30 with 32-bit indices: RMC_ERR_TOO_BIG). */
rmc_status_t rmc_csr_rmat(rmc_csr_t *out, int scale, int edge_factor, double a, double b, double c,
                          uint64_t seed, int64_t r0, int64_t r1, int idx64);
/* Erdős–Rényi G(n, p) as a nrows x ncols matrix: each entry nonzero with probability p
 * independently (values uniform in (0, 1]), deterministic for a given seed, rows [r0, r1) kept
 * (as above: the same matrix whatever the range; *out is (r1 - r0) x ncols). Row i comes from a
 * stream of (seed, i) by geometric skips between its nonzeros: O(1 + nnz) per row. */
rmc_status_t rmc_csr_erdos_renyi(rmc_csr_t *out, int64_t nrows, int64_t ncols, double p,
                                 uint64_t seed, int64_t r0, int64_t r1, int idx64);

/* ------------------------------------------------------------------ accumulators --- */

/* Sparse accumulators (seed 001 Table 7.3): one row of a product is built by adding scaled rows
 * into an accumulator, then extracted sorted. Kinds: (AUTO keeps the rows by reference, as the
 * merging kinds do, and chooses when the row ends, knowing its k rows and b contributions: HEAP
 * when k <= 2; DENSE when ncols <= 2^17, or when ncols <= 2^24 and ncols <= 16 b; HASH otherwise;
 * HEAP, which needs no more memory, when the chosen one cannot be allocated.) A column's
 * contributions are summed in the order the rows were added (KWAY: in its tournament's order;
 * equal up to rounding). */
typedef enum rmc_spa_kind {
    RMC_SPA_DENSE = 0, /* dense array of ncols values + flags + list of touched columns */
    RMC_SPA_HASH = 1,  /* open-addressing hash table sized to the row's flop bound */
    RMC_SPA_HEAP = 2,  /* heap merge of the k sorted input rows (no random access) */
    RMC_SPA_KWAY = 3,  /* k-way merge of the input rows, pairwise (a tournament of merges) */
    RMC_SPA_AUTO = 4   /* chosen per row from its rows, flop count and column count */
} rmc_spa_kind_t;

typedef struct rmc_spa *rmc_spa_h;

/* An accumulator of `kind` for rows of ncols columns (DENSE allocates its ncols values and flags
 * here, the others grow with the bounds they are given: HASH 2 to 4 slots per bound, KWAY two
 * buffers of the bound). */
rmc_status_t rmc_spa_create(rmc_spa_kind_t kind, int64_t ncols, rmc_spa_h *s);
/* Frees the accumulator (NULL: nothing); the handle must not be used afterwards. */
void rmc_spa_destroy(rmc_spa_h s);
/* Starts a row that will receive at most `bound` contributions (the flop bound). RMC_ERR_STATE
 * when a row is open. */
rmc_status_t rmc_spa_begin(rmc_spa_h s, int64_t bound);
/* Adds scale * (the sorted sparse row of n entries cols[] / vals[]) to the row; cols of index width
 * idx64. A merging kind keeps the inputs by reference until rmc_spa_end: they must stay valid.
 * Errors: no row open (RMC_ERR_STATE); more contributions than the bound, a column out of
 * [0, ncols) (RMC_ERR_ARG); columns not strictly increasing (RMC_ERR_FORMAT). The row is
 * unchanged then. */
rmc_status_t rmc_spa_add_row(rmc_spa_h s, double scale, const void *cols, const double *vals,
                             int64_t n, int idx64);
/* Ends the row: its nonzeros, column-sorted, summed, appended to cols / vals (of index width idx64;
 * room for the bound), their number in *n. Explicit zeros from cancellation are kept. cols[0] and
 * vals[0] receive the first: pass the end of what is already there. 32-bit output columns for an
 * accumulator of more than INT32_MAX columns are RMC_ERR_TOO_BIG (the row stays open). */
rmc_status_t rmc_spa_end(rmc_spa_h s, void *cols, double *vals, int64_t *n, int idx64);
/* The kind that built the last row ended: AUTO's choice, the kind itself for the others (AUTO:
 * before any row, for an empty row, for a NULL handle). */
rmc_spa_kind_t rmc_spa_chosen(rmc_spa_h s);

/* -------------------------------------------------------------------------- kernels --- */

/* SpMM: C[m x n] += alpha * A[m x k] * B[k x n]; B and C dense row-major with leading dimensions
 * ldb >= n, ldc >= n. Row by row: each nonzero a_ik adds alpha a_ik times row k of B to row i of
 * C. alpha == 0 leaves C unchanged (as BLAS: B is not read, and may be NULL). B and C must not
 * overlap. */
rmc_status_t rmc_csr_spmm(double alpha, const rmc_csr_t *a, const double *b, int64_t ldb, int64_t n,
                          double *c, int64_t ldc);

/* Gustavson SpGEMM: *out = A * B (A: m x k, B: k x n) with accumulator `kind`; *out gets A's index
 * width unless the result needs 64 bits (then RMC_ERR_TOO_BIG with 32). Flops (2 per multiply-add)
 * are added to *flops when it is not NULL. Two phases: a symbolic pass counts each row's distinct
 * columns (so the result is allocated exactly, and a 32-bit overflow is found before anything is
 * allocated for it), then each row is accumulated into its place (a row of A with one nonzero is
 * a scaled copy of a row of B, whatever the kind). Explicit zeros from cancellation are kept. */
rmc_status_t rmc_csr_spgemm(rmc_csr_t *out, const rmc_csr_t *a, const rmc_csr_t *b,
                            rmc_spa_kind_t kind, double *flops);

/* *out = sum of the n matrices in[0..n-1] (all of one shape, n >= 1), through accumulator `kind` (a
 * C tile summed from partial products), with in[0]'s index width (RMC_ERR_TOO_BIG with 32 bits
 * when the sum's nnz does not fit). The same two phases as rmc_csr_spgemm. */
rmc_status_t rmc_csr_sum(rmc_csr_t *out, const rmc_csr_t *const *in, int n, rmc_spa_kind_t kind);

#ifdef __cplusplus
}
#endif
#endif
