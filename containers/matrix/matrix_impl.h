/* The matrices' internals (containers/matrix/). */
#ifndef RMCC_MATRIX_IMPL_H
#define RMCC_MATRIX_IMPL_H

#include <rmc/matrix.h>
#include <rmc/strided.h>
#include "../ct.h"

#define MD RMC_MATRIX_MAX_DIM

/* A distribution. Dimension d's tiles: regular / round-robin: tile[d] elements each (the last one
 * shorter); irregular: starts split[d][0 .. nt[d]-1] (split[d][nt[d]] = dims[d]). */
struct rmc_dist {
    uint32_t magic; /* RMCC_MAGIC_DIST while live */
    rmc_dist_kind_t kind;
    int ndim;
    int nranks; /* when it was made: the owner map's modulus */
    int64_t dims[MD];
    int64_t tile[MD];   /* regular, round-robin */
    int64_t nt[MD];     /* tiles per dimension */
    int pgrid[MD];      /* regular, irregular: the process grid (round-robin: nt, unused) */
    int64_t *split[MD]; /* irregular: nt[d] + 1 boundaries; else NULL */
    int64_t ntiles;
    int *ranks;  /* rmc_dist_set_ranks: process p of the grid (round-robin: deal p) is ranks[p] */
    int nmap;    /* entries of ranks (0: identity) */
};
#define RMCC_MAGIC_DIST   0x44495354u /* "DIST" */
#define RMCC_MAGIC_MATRIX 0x4d415452u /* "MATR" */

/* Validity (RMC_ERR_HANDLE naming fn). */
rmc_status_t rmcc_dist_check(rmc_dist_h d, const char *fn);
/* A deep copy (for a matrix to keep). */
rmc_status_t rmcc_dist_dup(rmc_dist_h d, rmc_dist_h *out, const char *fn);
/* A digest of everything a distribution says (the creation check). */
uint64_t rmcc_dist_digest(rmc_dist_h d);

/* Tile tc's start and end in dimension k (no checks). */
static inline int64_t rmcc_tile_lo(const struct rmc_dist *d, int k, int64_t tc)
{
    return d->split[k] ? d->split[k][tc] : tc * d->tile[k];
}
static inline int64_t rmcc_tile_hi(const struct rmc_dist *d, int k, int64_t tc)
{
    if (d->split[k])
        return d->split[k][tc + 1];
    int64_t h = (tc + 1) * d->tile[k];
    return h < d->dims[k] ? h : d->dims[k];
}
/* The tile coordinate holding index i of dimension k (no checks). */
int64_t rmcc_tile_of(const struct rmc_dist *d, int k, int64_t i);
/* Owner of the tile at coordinates tc (no checks). */
int rmcc_owner(const struct rmc_dist *d, const int64_t tc[]);

struct rmc_matrix {
    rmcc_obj_t obj;
    struct rmc_dist *d; /* its own copy */
    rmc_elem_t elem;
    size_t esz;
    uint64_t id;        /* equal on every rank (the collectives' argument check) */
    rmcc_parts_t parts; /* each rank's block of tiles (offsets in its segment) */
    uint64_t *toff;     /* [ntiles] tile t's offset within its owner's block */
    int *towner;        /* [ntiles] tile t's owner */
    uint64_t own_bytes; /* this rank's block */
    uint64_t alloc_off; /* the segment allocation holding it (the block starts aligned in it) */
    MPI_Comm comm;      /* rmc_matrix_create_comm: its ranks' own communicator; else MPI_COMM_NULL */
};

/* Tile t's owner-space address (what comm's calls take), and its load/store address here (NULL
 * when the owner is not on this node). */
static inline char *rmcc_tile_addr(const struct rmc_matrix *m, int64_t t)
{
    return m->parts.tab[m->towner[t]] + m->toff[t];
}
static inline char *rmcc_tile_laddr(const struct rmc_matrix *m, int64_t t)
{
    char *l = m->parts.ltab[m->towner[t]];
    return l ? l + m->toff[t] : NULL;
}

rmc_status_t rmcc_matrix_check(const struct rmc_matrix *m, const char *fn);
/* The same naming the argument (arg, e.g. "C") of a call with several matrices. */
static inline rmc_status_t rmcc_matrix_check_arg(const struct rmc_matrix *m, const char *arg,
                                                 const char *fn)
{
    return rmcc_obj_check_arg(m ? &m->obj : NULL, RMCC_MAGIC_MATRIX, "matrix", arg, fn);
}
/* The communicator a collective on m runs over (*comm): m's own (rmc_matrix_create_comm) when m is
 * a good handle, else MPI_COMM_NULL (every rank). A rank with a bad handle thus meets its fellow
 * members only when the handle is bad everywhere: the convention of every collective on a matrix.
 * A destroyed matrix of a subset of the ranks is such a handle on all of its members (destruction
 * was a collective of theirs), but the other ranks would never join: RMC_ERR_HANDLE (recorded by
 * the check under fn), and the caller fails alone, with no collective. Else RMC_OK (nothing
 * recorded). */
static inline rmc_status_t rmcc_matrix_comm(const struct rmc_matrix *m, const char *fn,
                                            MPI_Comm *comm)
{
    *comm = MPI_COMM_NULL;
    if (RMCC_LIKELY(rmcc.up && m && m->obj.magic == RMCC_MAGIC_MATRIX)) {
        *comm = m->comm;
        return RMC_OK;
    }
    /* (a bad handle that goes on to the collective records nothing here: the caller's own check
     * said which argument is bad) */
    return m && m->obj.magic == RMCC_MAGIC_DEAD && (m->obj.flags & RMCC_OBJ_SUBSET)
               ? rmcc_matrix_check(m, fn)
               : RMC_OK;
}

/* One patch transfer (matrix.c): op 0 get, 1 put, 2 acc; req NULL: blocking. */
rmc_status_t rmcc_matrix_patch(struct rmc_matrix *m, int op, const int64_t lo[], const int64_t hi[],
                               void *buf, const int64_t ld[], const void *alpha, rmc_request_h *req,
                               const char *fn);

/* Do x's and y's parts on this rank overlap (one an overlay of the other, or of one parent)? A
 * multiplication's C must share no memory with its operands. */
static inline int rmcc_matrix_shares_memory(const struct rmc_matrix *x, const struct rmc_matrix *y)
{
    uint64_t a = x->parts.offs[rmcc.rank], b = y->parts.offs[rmcc.rank];
    return x->own_bytes && y->own_bytes && a < b + y->own_bytes && b < a + x->own_bytes;
}

#endif
