/* The distributed sparse matrices' internals (containers/matrix/sparse.c, spmul.c). */
#ifndef RMCC_SPARSE_IMPL_H
#define RMCC_SPARSE_IMPL_H

#include <rmc/sparse.h>
#include "matrix_impl.h"

#define RMCC_MAGIC_SPMATRIX 0x5350524du /* "SPRM" */

/* A tile's entry in the directory: its block in the owner's segment (0: none, the tile is empty)
 * and its nonzeros. The block: rowptr[nrows + 1], colind[nnz] (index width w = 4 or 8), padding to
 * 8 bytes, val[nnz]. */
typedef struct rmcc_sptile {
    uint64_t off;
    int64_t nnz;
} rmcc_sptile_t;

struct rmc_spmatrix {
    rmcc_obj_t obj;
    struct rmc_dist *d; /* its own copy (2-D) */
    int idx64;
    uint64_t id;        /* equal on every rank (the collectives' argument check) */
    int *towner;        /* [ntiles] */
    rmcc_sptile_t *dir; /* [ntiles] as of the last renew (this rank's own tiles: current) */
    uint64_t *stale;    /* this rank's replaced blocks, freed at the next renew */
    size_t nstale, capstale;
    uint64_t *pub;      /* [ntiles] this rank's own tiles: the block the others know (their dir
                           entry as of the last renew; renew sends the entries that differ) */
    void *zeros;        /* row pointers of zeros (the tallest tile's), for views of empty tiles */
};

/* Bytes of a block of nrows rows and nnz nonzeros, and where its arrays start. */
static inline size_t rmcc_spblock_bytes(int64_t nrows, int64_t nnz, int idx64)
{
    size_t w = idx64 ? 8 : 4, idx = ((size_t)(nrows + 1 + nnz) * w + 7) & ~(size_t)7;
    return idx + (size_t)nnz * 8;
}
static inline void rmcc_spblock_arrays(char *block, int64_t nrows, int64_t nnz, int idx64,
                                       void **rowptr, void **colind, double **val)
{
    size_t w = idx64 ? 8 : 4, idx = ((size_t)(nrows + 1 + nnz) * w + 7) & ~(size_t)7;
    *rowptr = block;
    *colind = block + (size_t)(nrows + 1) * w;
    *val = (double *)(void *)(block + idx);
}

rmc_status_t rmcc_spmatrix_check(const struct rmc_spmatrix *s, const char *fn);
/* The same naming the argument (arg, e.g. "A") of a call with several matrices. */
static inline rmc_status_t rmcc_spmatrix_check_arg(const struct rmc_spmatrix *s, const char *arg,
                                                   const char *fn)
{
    return rmcc_obj_check_arg(s ? &s->obj : NULL, RMCC_MAGIC_SPMATRIX, "sparse matrix", arg, fn);
}

/* Tile t's rows and columns. */
static inline void rmcc_sptile_shape(const struct rmc_spmatrix *s, int64_t t, int64_t *rows,
                                     int64_t *cols)
{
    const struct rmc_dist *d = s->d;
    int64_t t0 = t / d->nt[1], t1 = t % d->nt[1];
    *rows = rmcc_tile_hi(d, 0, t0) - rmcc_tile_lo(d, 0, t0);
    *cols = rmcc_tile_hi(d, 1, t1) - rmcc_tile_lo(d, 1, t1);
}

#endif
