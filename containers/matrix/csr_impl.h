/* Internals of the local sparse layer (include/rmc/csr.h): index access of either width, checked
 * allocation, the matrix checks every function runs on its inputs, the triplet builder shared by
 * rmc_csr_from_coo, the Matrix Market reader and the generators, and the accumulators' unchecked
 * entry points used by the kernels. Local only: no MPI, no container state. */
#ifndef RMCC_CSR_IMPL_H
#define RMCC_CSR_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/csr.h>
#include <rmc/status.h>

#define RMCC_I32MAX ((int64_t)INT32_MAX)

/* Does v (>= 0) fit an index of width idx64? */
static inline int rmcc_fits(int64_t v, int idx64)
{
    return idx64 || v <= RMCC_I32MAX;
}

static inline int64_t rmcc_idx_get(const void *p, int64_t k, int idx64)
{
    return idx64 ? ((const int64_t *)p)[k] : ((const int32_t *)p)[k];
}

static inline void rmcc_idx_set(void *p, int64_t k, int64_t v, int idx64)
{
    if (idx64)
        ((int64_t *)p)[k] = v;
    else
        ((int32_t *)p)[k] = (int32_t)v;
}

/* Address of entry k of an index array of width idx64. */
static inline void *rmcc_idx_at(void *p, int64_t k, int idx64)
{
    return (char *)p + (size_t)k * (idx64 ? sizeof(int64_t) : sizeof(int32_t));
}

/* malloc of n elements of `size` bytes; NULL when n * size overflows or memory is short (n == 0
 * allocates one byte so that NULL always means failure). */
void *rmcc_malloc_n(int64_t n, size_t size);

/* RMC_ERR_ARG unless idx64 is 0 or 1 (`what` names the argument in fn's message). */
rmc_status_t rmcc_check_idx64(int idx64, const char *fn, const char *what);

/* The start of every function with an output matrix: RMC_ERR_ARG when out is NULL ("out is
 * NULL"), else *out made empty (of width idx64 == 1) and idx64 checked to be 0 or 1. */
rmc_status_t rmcc_out_begin(rmc_csr_t *out, int idx64, const char *fn);

/* The first entry in [p, q) of a's row whose column is >= c (rows are sorted). */
static inline int64_t rmcc_csr_lower_bound(const rmc_csr_t *a, int64_t p, int64_t q, int64_t c)
{
    while (p < q) {
        int64_t m = p + (q - p) / 2;
        if (rmc_csr_colind(a, m) < c)
            p = m + 1;
        else
            q = m;
    }
    return p;
}

/* The shape checks of a matrix argument `name` of fn: not NULL, idx64 0 or 1, sizes >= 0 and
 * fitting the index width (RMC_ERR_TOO_BIG), arrays present where entries are (RMC_ERR_ARG).
 * Constant time: the content is rmcc_csr_valid's. */
rmc_status_t rmcc_csr_shape(const rmc_csr_t *a, const char *fn, const char *name);
/* rmcc_csr_shape and every content rule of rmc_csr_check (RMC_ERR_FORMAT naming row and entry):
 * after it, a can be read without bounds checks. O(nrows + nnz). */
rmc_status_t rmcc_csr_valid(const rmc_csr_t *a, const char *fn, const char *name);

/* rmc_csr_alloc with fn's name in the messages; *a is made empty first. */
rmc_status_t rmcc_csr_alloc(rmc_csr_t *a, int64_t nrows, int64_t ncols, int64_t nnz, int idx64,
                            const char *fn);

/* rmc_csr_from_coo's work with fn's name in the messages (every argument is checked as
 * rmc_csr_from_coo documents); *out is empty on error. */
rmc_status_t rmcc_csr_build(rmc_csr_t *out, int64_t nrows, int64_t ncols, int64_t n,
                            const int64_t *row, const int64_t *col, const double *val, int dup_sum,
                            int idx64, const char *fn);

/* Sorts n nonnegative keys ascending; tmp has room for n. */
void rmcc_sort_i64(int64_t *a, int64_t n, int64_t *tmp);

/* The accumulator without argument checks, for the kernels (inputs already validated: cols
 * sorted, unique, in range; the bound respected). */
rmc_status_t rmcc_spa_begin(rmc_spa_h s, int64_t bound);
rmc_status_t rmcc_spa_add(rmc_spa_h s, double scale, const void *cols, const double *vals,
                          int64_t n, int idx64);
rmc_status_t rmcc_spa_end(rmc_spa_h s, void *cols, double *vals, int64_t *n, int idx64);

#endif
