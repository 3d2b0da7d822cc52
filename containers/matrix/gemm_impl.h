/* The multiplication engine's internals (containers/matrix/gemm.c), shared with the sparse entry
 * points (spmul.c): one set of algorithms for dense GEMM, SpMM and SpGEMM. */
#ifndef RMCC_GEMM_IMPL_H
#define RMCC_GEMM_IMPL_H

#include "sparse_impl.h"

/* The breakpoints of one dimension of the work grid: the patch cut at the boundaries of up to two
 * tilings, each given as (distribution, dimension, offset of the patch in it). */
typedef struct cuts {
    int64_t n;   /* blocks */
    int64_t *at; /* n + 1 points, relative to the patch start */
} cuts_t;

typedef struct tiling {
    const struct rmc_dist *d;
    int dim;
    int64_t off; /* the patch's start in that dimension of d */
} tiling_t;

rmc_status_t rmcc_make_cuts(cuts_t *c, int64_t len, const tiling_t *t, int nt, const char *fn);

/* An operand: op(X) of a patch of X, dense (m) or sparse (s; whole tiles, no transpose). */
typedef struct operand {
    struct rmc_matrix *m;     /* dense, or NULL */
    struct rmc_spmatrix *s;   /* sparse, or NULL */
    const struct rmc_dist *d; /* X's distribution */
    const int *towner;        /* X's tile owners */
    int trans;                /* 0: op(X) = X; else X^T (conjugated when conj) */
    int conj;
    int64_t r0, c0; /* op(X)'s patch start in X's coordinates of op(X)'s row / column */
} operand_t;

/* A block ready for a local multiply: dense (p, ld: X's layout) or a sparse tile (csr, in place or
 * fetched: own_csr), and its fetch in flight. */
typedef struct blk {
    const char *p;
    int64_t ld;
    rmc_csr_t csr;
    int sp, own_csr;
    rmc_request_h r;
} blk_t;

/* One multiplication. C is dense (c) or sparse (cs; then the partial products of each of this
 * rank's C tiles are collected in part[t] and summed at the end). */
typedef struct gemm {
    rmc_elem_t e;
    size_t es;
    const void *alpha, *beta;
    char one[16], zero[16]; /* 1 and 0 of the type */
    operand_t a, b, co;     /* co: C as an operand (its distribution, owners, patch start) */
    struct rmc_matrix *c;
    struct rmc_spmatrix *cs;
    rmc_spa_kind_t spa; /* sparse C: the accumulator of products and sums */
    rmc_csr_t **part;   /* [C's ntiles] sparse C: partial products of this rank's tiles */
    int *npart, *cappart;
    int64_t c0[2]; /* C's patch start */
    int64_t m, n, k;
    cuts_t ci, cj, ck; /* the work grid */
    rmc_gemm_stats_t st;
    size_t bufA, bufB; /* bytes of the largest dense A / B block */
    int poll;          /* some rank is remote: keep MPI's progress going during multiplies */
    const char *fn;
} gemm_t;

/* Runs algorithm `algo` (AUTO only for dense C: the stationary variant moving the least data
 * between nodes, counted on the work grid) on a set-up multiplication, collectively, to the end:
 * every rank's C complete (dense: in place; sparse: every C tile summed and set, the matrix
 * renewed). Frees the cuts. Returns the agreed status. */
rmc_status_t rmcc_gemm_run(gemm_t *g, rmc_gemm_algo_t algo);

/* The volume-based choice (seed 001 §7.5) among stationary C, A and B, from the bytes of A, B
 * and C. */
rmc_gemm_algo_t rmcc_gemm_choose(double bytes_a, double bytes_b, double bytes_c);

/* Sets OpenBLAS's threads from RMC_BLAS_THREADS. */
void rmcc_blas_threads(void);

/* SpGEMM of one C tile (rows x cols) from n block pairs: *out = alpha sum_q a[q] b[q], row by row
 * through one accumulator of `kind` (spmul.c). Its arrays are RMC's (rmc_csr_free). Flops (2 per
 * multiply-add) added to *flops. */
rmc_status_t rmcc_spgemm_fused(const rmc_csr_t *const *a, const rmc_csr_t *const *b, int n,
                               double alpha, rmc_spa_kind_t kind, int idx64, int64_t rows,
                               int64_t cols, rmc_csr_t *out, double *flops, const char *fn);

#endif
