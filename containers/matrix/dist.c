/* Distributions (include/rmc/matrix.h): a tile grid over an array of 1 to 7 dimensions and the
 * owner of each tile. Local: every rank builds the same description. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "matrix_impl.h"

rmc_status_t rmcc_dist_check(rmc_dist_h d, const char *fn)
{
    RMCC_CHECK_UP(fn);
    if (!d || d->magic != RMCC_MAGIC_DIST)
        return rmcc_fail(RMC_ERR_HANDLE, fn, "not a distribution (NULL, freed or foreign)");
    return RMC_OK;
}

/* Checks ndim, dims and the output pointer. */
static rmc_status_t dims_check(int ndim, const int64_t dims[], rmc_dist_h *d, const char *fn)
{
    RMCC_CHECK_UP(fn);
    if (d)
        *d = NULL;
    if (!d || !dims)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL %s", d ? "dims" : "result pointer");
    if (ndim < 1 || ndim > MD)
        return rmcc_fail(RMC_ERR_ARG, fn, "ndim %d (1 .. %d)", ndim, MD);
    int64_t total = 1;
    for (int k = 0; k < ndim; k++) {
        if (dims[k] < 1)
            return rmcc_fail(RMC_ERR_ARG, fn, "dims[%d] = %lld (>= 1)", k, (long long)dims[k]);
        if (total > INT64_MAX / dims[k])
            return rmcc_fail(RMC_ERR_TOO_BIG, fn, "the dimensions' product overflows 64 bits");
        total *= dims[k];
    }
    return RMC_OK;
}

static struct rmc_dist *dist_new(rmc_dist_kind_t kind, int ndim, const int64_t dims[],
                                 const char *fn)
{
    struct rmc_dist *d = calloc(1, sizeof(*d));
    if (!d) {
        rmcc_fail(RMC_ERR_NOMEM, fn, "a distribution");
        return NULL;
    }
    d->magic = RMCC_MAGIC_DIST;
    d->kind = kind;
    d->ndim = ndim;
    d->nranks = rmcc.nranks;
    memcpy(d->dims, dims, (size_t)ndim * sizeof(int64_t));
    for (int k = ndim; k < MD; k++) {
        d->dims[k] = d->tile[k] = d->nt[k] = 1;
        d->pgrid[k] = 1;
    }
    return d;
}

/* Sets ntiles from nt[] (RMC_ERR_TOO_BIG on overflow). */
static rmc_status_t count_tiles(struct rmc_dist *d, const char *fn)
{
    d->ntiles = 1;
    for (int k = 0; k < d->ndim; k++) {
        if (d->ntiles > INT64_MAX / d->nt[k] || d->ntiles * d->nt[k] > ((int64_t)1 << 40))
            return rmcc_fail(RMC_ERR_TOO_BIG, fn, "more than 2^40 tiles");
        d->ntiles *= d->nt[k];
    }
    return RMC_OK;
}

/* Frees a half-made distribution and returns st. */
static rmc_status_t dist_drop(struct rmc_dist *d, rmc_status_t st)
{
    rmc_dist_free(d);
    return st;
}

rmc_status_t rmc_dist_pgrid(int ndim, const int64_t dims[], int nprocs, int pgrid[])
{
    const char *fn = __func__;
    if (!dims || !pgrid)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL %s", dims ? "pgrid" : "dims");
    if (ndim < 1 || ndim > MD)
        return rmcc_fail(RMC_ERR_ARG, fn, "ndim %d (1 .. %d)", ndim, MD);
    if (nprocs < 1)
        return rmcc_fail(RMC_ERR_ARG, fn, "nprocs %d (>= 1)", nprocs);
    for (int k = 0; k < ndim; k++) {
        if (dims[k] < 1)
            return rmcc_fail(RMC_ERR_ARG, fn, "dims[%d] = %lld (>= 1)", k, (long long)dims[k]);
        pgrid[k] = 1;
    }
    /* prime factors, largest first, each to the dimension whose blocks are longest */
    int f[32], nf = 0, n = nprocs;
    for (int p = 2; (long)p * p <= n; p++)
        while (n % p == 0) {
            f[nf++] = p;
            n /= p;
        }
    if (n > 1)
        f[nf++] = n;
    for (int i = nf - 1; i >= 0; i--) {
        int best = 0;
        double bl = -1;
        for (int k = 0; k < ndim; k++) {
            double len = (double)dims[k] / pgrid[k];
            if (len > bl) {
                bl = len;
                best = k;
            }
        }
        pgrid[best] *= f[i];
    }
    return RMC_OK;
}

rmc_status_t rmc_dist_regular(int ndim, const int64_t dims[], const int64_t tile[],
                              const int pgrid[], rmc_dist_h *dp)
{
    const char *fn = __func__;
    rmc_status_t st = dims_check(ndim, dims, dp, fn);
    if (st != RMC_OK)
        return st;
    int g[MD];
    if (pgrid) {
        long prod = 1;
        for (int k = 0; k < ndim; k++) {
            if (pgrid[k] < 1 || pgrid[k] > rmcc.nranks)
                return rmcc_fail(RMC_ERR_ARG, fn, "pgrid[%d] = %d (1 .. %d ranks)", k, pgrid[k],
                                 rmcc.nranks);
            prod *= pgrid[k];
            if (prod > rmcc.nranks)
                return rmcc_fail(RMC_ERR_ARG, fn, "a process grid of more than the %d ranks",
                                 rmcc.nranks);
            g[k] = pgrid[k];
        }
    } else if ((st = rmc_dist_pgrid(ndim, dims, rmcc.nranks, g)) != RMC_OK) {
        return rmc_error_in(st, fn);
    }
    for (int k = 0; tile && k < ndim; k++)
        if (tile[k] < 0)
            return rmcc_fail(RMC_ERR_ARG, fn, "tile[%d] = %lld (>= 0; 0: div)", k,
                             (long long)tile[k]);
    struct rmc_dist *d = dist_new(RMC_DIST_REGULAR, ndim, dims, fn);
    if (!d)
        return RMC_ERR_NOMEM;
    for (int k = 0; k < ndim; k++) {
        d->pgrid[k] = g[k];
        int64_t t = tile && tile[k] ? tile[k] : (dims[k] + g[k] - 1) / g[k];
        d->tile[k] = t < dims[k] ? t : dims[k];
        d->nt[k] = (dims[k] + d->tile[k] - 1) / d->tile[k];
    }
    if ((st = count_tiles(d, fn)) != RMC_OK)
        return dist_drop(d, st);
    *dp = d;
    return RMC_OK;
}

/* Irregular blocks, dealt cyclically over pgrid (NULL: one block per process, pgrid = nblock). */
static rmc_status_t irregular(int ndim, const int64_t dims[], const int nblock[],
                             const int64_t map[], const int pgrid[], rmc_dist_h *dp,
                             const char *fn)
{
    rmc_status_t st = dims_check(ndim, dims, dp, fn);
    if (st != RMC_OK)
        return st;
    if (!nblock || !map)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL %s", nblock ? "map" : "nblock");
    long prod = 1;
    for (int k = 0; k < ndim; k++) {
        if (nblock[k] < 1 || nblock[k] > dims[k])
            return rmcc_fail(RMC_ERR_ARG, fn, "nblock[%d] = %d (1 .. dims[%d] = %lld)", k,
                             nblock[k], k, (long long)dims[k]);
        if (pgrid && (pgrid[k] < 1 || pgrid[k] > rmcc.nranks))
            return rmcc_fail(RMC_ERR_ARG, fn, "pgrid[%d] = %d (1 .. %d ranks)", k, pgrid[k],
                             rmcc.nranks);
        prod *= pgrid ? pgrid[k] : nblock[k];
        if (prod > rmcc.nranks)
            return rmcc_fail(RMC_ERR_ARG, fn,
                             pgrid ? "a process grid of %ld processes or more, for %d ranks"
                                   : "%ld blocks or more, for %d ranks (one each)",
                             prod, rmcc.nranks);
    }
    struct rmc_dist *d = dist_new(RMC_DIST_IRREGULAR, ndim, dims, fn);
    if (!d)
        return RMC_ERR_NOMEM;
    size_t off = 0; /* dimension k's starts: map[off ..] */
    for (int k = 0; k < ndim; off += (size_t)nblock[k], k++) {
        const int64_t *m = map + off;
        d->nt[k] = nblock[k];
        d->pgrid[k] = pgrid ? pgrid[k] : nblock[k];
        d->split[k] = malloc(((size_t)nblock[k] + 1) * sizeof(int64_t));
        if (!d->split[k])
            return dist_drop(d, rmcc_fail(RMC_ERR_NOMEM, fn, "split points"));
        for (int b = 0; b < nblock[k]; b++) {
            int64_t prev = b ? m[b - 1] : -1;
            if ((b == 0 && m[0] != 0) || (b > 0 && m[b] <= prev) || m[b] >= dims[k])
                return dist_drop(d, rmcc_fail(RMC_ERR_ARG, fn,
                                              "map: dimension %d, block %d starts at %lld (the "
                                              "first at 0, increasing, below %lld)",
                                              k, b, (long long)m[b], (long long)dims[k]));
            d->split[k][b] = m[b];
        }
        d->split[k][nblock[k]] = dims[k];
        d->tile[k] = 0;
    }
    if ((st = count_tiles(d, fn)) != RMC_OK)
        return dist_drop(d, st);
    *dp = d;
    return RMC_OK;
}

rmc_status_t rmc_dist_irregular(int ndim, const int64_t dims[], const int nblock[],
                                const int64_t map[], rmc_dist_h *dp)
{
    return irregular(ndim, dims, nblock, map, NULL, dp, __func__);
}

rmc_status_t rmc_dist_irregular_grid(int ndim, const int64_t dims[], const int nblock[],
                                     const int64_t map[], const int pgrid[], rmc_dist_h *dp)
{
    if (!pgrid)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL pgrid");
    return irregular(ndim, dims, nblock, map, pgrid, dp, __func__);
}

rmc_status_t rmc_dist_round_robin(int ndim, const int64_t dims[], const int64_t block[],
                                  rmc_dist_h *dp)
{
    const char *fn = __func__;
    rmc_status_t st = dims_check(ndim, dims, dp, fn);
    if (st != RMC_OK)
        return st;
    if (!block)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL block");
    for (int k = 0; k < ndim; k++)
        if (block[k] < 1)
            return rmcc_fail(RMC_ERR_ARG, fn, "block[%d] = %lld (>= 1)", k, (long long)block[k]);
    struct rmc_dist *d = dist_new(RMC_DIST_ROUND_ROBIN, ndim, dims, fn);
    if (!d)
        return RMC_ERR_NOMEM;
    for (int k = 0; k < ndim; k++) {
        d->tile[k] = block[k] < dims[k] ? block[k] : dims[k];
        d->nt[k] = (dims[k] + d->tile[k] - 1) / d->tile[k];
        d->pgrid[k] = 1;
    }
    if ((st = count_tiles(d, fn)) != RMC_OK)
        return dist_drop(d, st);
    *dp = d;
    return RMC_OK;
}

rmc_status_t rmc_dist_2d(rmc_block_t kind, int64_t m, int64_t n, int64_t param, rmc_dist_h *d)
{
    const char *fn = __func__;
    int64_t dims[2] = {m, n}, tile[2] = {0, 0};
    int g[2], p = rmcc.nranks;
    if (d)
        *d = NULL;
    RMCC_CHECK_UP(fn);
    if (param < 0)
        return rmcc_fail(RMC_ERR_ARG, fn, "param %lld (>= 0)", (long long)param);
    rmc_status_t st;
    switch (kind) {
    case RMC_BLOCK_RECT:
        break; /* the chosen grid, one tile per process */
    case RMC_BLOCK_ROW:
        g[0] = p, g[1] = 1;
        tile[0] = param;
        return rmc_error_in(rmc_dist_regular(2, dims, tile, g, d), fn);
    case RMC_BLOCK_COLUMN:
        g[0] = 1, g[1] = p;
        tile[1] = param;
        return rmc_error_in(rmc_dist_regular(2, dims, tile, g, d), fn);
    case RMC_BLOCK_SQUARE:
    case RMC_BLOCK_OPT: {
        /* square tiles on a grid of the ranks shaped like the matrix (square-as-possible for a
         * square one): a square grid on a long thin matrix left half the ranks without tiles */
        if (m < 1 || n < 1)
            break; /* reported below */
        if ((st = rmc_dist_pgrid(2, dims, p, g)) != RMC_OK)
            return rmc_error_in(st, fn);
        /* the shorter side of a rank's block (the longer one left a 1024^2 matrix at 2 ranks in
         * one tile), small enough for at least g[k] tiles in each dimension k that has g[k]
         * elements, so every rank of the grid gets tiles (4 x 4 at 3 ranks: 2 x 2 tiles on a
         * 3 x 1 grid left one rank without) */
        int64_t shorter = INT64_MAX;
        for (int k = 0; k < 2; k++) {
            int64_t s = (dims[k] + g[k] - 1) / g[k];
            if (dims[k] >= g[k] && (dims[k] + s - 1) / s < g[k])
                s = dims[k] / g[k];
            shorter = s < shorter ? s : shorter;
        }
        int64_t side = param;
        if (kind == RMC_BLOCK_OPT) {
            int64_t cap = param ? param : 2048;
            side = shorter;
            while (side > cap) /* halve until it fits: several tiles per rank, cyclic */
                side = (side + 1) / 2;
        } else if (!side) {
            side = shorter;
        }
        tile[0] = tile[1] = side;
        return rmc_error_in(rmc_dist_regular(2, dims, tile, g, d), fn);
    }
    default:
        return rmcc_fail(RMC_ERR_ARG, fn, "unknown block kind %d", (int)kind);
    }
    return rmc_error_in(rmc_dist_regular(2, dims, NULL, NULL, d), fn);
}

void rmc_dist_free(rmc_dist_h d)
{
    if (!d || d->magic != RMCC_MAGIC_DIST)
        return;
    for (int k = 0; k < MD; k++)
        free(d->split[k]);
    free(d->ranks);
    d->magic = 0;
    free(d);
}

rmc_status_t rmcc_dist_dup(rmc_dist_h d, rmc_dist_h *out, const char *fn)
{
    struct rmc_dist *c = malloc(sizeof(*c));
    if (!c)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "a copy of the distribution");
    *c = *d;
    c->ranks = NULL;
    if (d->nmap) {
        if (!(c->ranks = malloc(sizeof(int) * (size_t)d->nmap))) {
            free(c);
            return rmcc_fail(RMC_ERR_NOMEM, fn, "a copy of the distribution");
        }
        memcpy(c->ranks, d->ranks, sizeof(int) * (size_t)d->nmap);
    }
    for (int k = 0; k < MD; k++) {
        c->split[k] = NULL;
        if (!d->split[k])
            continue;
        size_t bytes = ((size_t)d->nt[k] + 1) * sizeof(int64_t);
        if (!(c->split[k] = malloc(bytes))) {
            rmc_dist_free(c);
            return rmcc_fail(RMC_ERR_NOMEM, fn, "a copy of the distribution");
        }
        memcpy(c->split[k], d->split[k], bytes);
    }
    *out = c;
    return RMC_OK;
}

uint64_t rmcc_dist_digest(rmc_dist_h d)
{
    uint64_t h = rmcc_mix64((uint64_t)d->kind * 131 + (uint64_t)d->ndim);
    for (int k = 0; k < d->ndim; k++) {
        uint64_t v[4] = {(uint64_t)d->dims[k], (uint64_t)d->tile[k], (uint64_t)d->nt[k],
                         (uint64_t)d->pgrid[k]};
        h = rmcc_hash_bytes(v, sizeof(v), h);
        if (d->split[k])
            h = rmcc_hash_bytes(d->split[k], ((size_t)d->nt[k] + 1) * sizeof(int64_t), h);
    }
    if (d->nmap)
        h = rmcc_hash_bytes(d->ranks, sizeof(int) * (size_t)d->nmap, h);
    return h;
}

int64_t rmcc_tile_of(const struct rmc_dist *d, int k, int64_t i)
{
    if (!d->split[k])
        return i / d->tile[k];
    int64_t lo = 0, hi = d->nt[k] - 1; /* the last block whose start <= i */
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (d->split[k][mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int rmcc_owner(const struct rmc_dist *d, const int64_t tc[])
{
    if (d->kind == RMC_DIST_ROUND_ROBIN) {
        int64_t t = 0;
        for (int k = 0; k < d->ndim; k++)
            t = t * d->nt[k] + tc[k];
        return d->nmap ? d->ranks[t % d->nmap] : (int)(t % d->nranks);
    }
    int64_t r = 0;
    for (int k = 0; k < d->ndim; k++)
        r = r * d->pgrid[k] + tc[k] % d->pgrid[k];
    return d->nmap ? d->ranks[r] : (int)r;
}

rmc_status_t rmc_dist_set_ranks(rmc_dist_h d, const int ranks[], int n)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_dist_check(d, fn);
    if (st != RMC_OK)
        return st;
    int64_t need = 1;
    if (d->kind != RMC_DIST_ROUND_ROBIN)
        for (int k = 0; k < d->ndim; k++)
            need *= d->pgrid[k];
    if (n < 0)
        return rmcc_fail(RMC_ERR_ARG, fn, "n = %d is negative (0 restores the identity)", n);
    if (!ranks && n != 0)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL ranks with n = %d", n);
    if (n != 0 && (n < need || n > d->nranks))
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "n = %d: the process grid has %lld processes, there are %d ranks", n,
                         (long long)need, d->nranks);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= d->nranks)
            return rmcc_fail(RMC_ERR_RANK, fn, "ranks[%d] = %d (0 .. %d)", i, ranks[i],
                             d->nranks - 1);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return rmcc_fail(RMC_ERR_ARG, fn, "ranks[%d] and ranks[%d] are both %d", j, i,
                                 ranks[i]);
    }
    int *copy = NULL;
    if (n && !(copy = malloc(sizeof(int) * (size_t)n)))
        return rmcc_fail(RMC_ERR_NOMEM, fn, "%d ranks", n);
    if (n)
        memcpy(copy, ranks, sizeof(int) * (size_t)n);
    free(d->ranks);
    d->ranks = copy;
    d->nmap = n;
    return RMC_OK;
}

/* ------------------------------------------------------------------------- queries --- */

int rmc_dist_ndim(rmc_dist_h d)
{
    return rmcc_dist_check(d, __func__) == RMC_OK ? d->ndim : 0;
}

rmc_dist_kind_t rmc_dist_kind(rmc_dist_h d)
{
    return rmcc_dist_check(d, __func__) == RMC_OK ? d->kind : (rmc_dist_kind_t)-1;
}

/* Copies n int64s (the dims or tile grid) after the handle check. */
static rmc_status_t copy_out(rmc_dist_h d, int64_t *dst, const int64_t *src, const char *fn)
{
    rmc_status_t st = rmcc_dist_check(d, fn);
    if (st == RMC_OK && !dst)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL result array");
    if (st == RMC_OK)
        memcpy(dst, src, (size_t)d->ndim * sizeof(int64_t));
    return st;
}

rmc_status_t rmc_dist_dims(rmc_dist_h d, int64_t dims[])
{
    return copy_out(d, dims, d && d->magic == RMCC_MAGIC_DIST ? d->dims : NULL, __func__);
}

rmc_status_t rmc_dist_tile_grid(rmc_dist_h d, int64_t ntiles[])
{
    return copy_out(d, ntiles, d && d->magic == RMCC_MAGIC_DIST ? d->nt : NULL, __func__);
}

rmc_status_t rmc_dist_proc_grid(rmc_dist_h d, int pgrid[])
{
    rmc_status_t st = rmcc_dist_check(d, __func__);
    if (st == RMC_OK && !pgrid)
        st = rmcc_fail(RMC_ERR_ARG, __func__, "NULL pgrid");
    if (st == RMC_OK)
        memcpy(pgrid, d->pgrid, (size_t)d->ndim * sizeof(int));
    return st;
}

int64_t rmc_dist_ntiles(rmc_dist_h d)
{
    return rmcc_dist_check(d, __func__) == RMC_OK ? d->ntiles : 0;
}

int64_t rmc_dist_tile_index(rmc_dist_h d, const int64_t tc[])
{
    const char *fn = __func__;
    if (rmcc_dist_check(d, fn) != RMC_OK)
        return -1;
    if (!tc) {
        rmcc_fail(RMC_ERR_ARG, fn, "NULL coordinates");
        return -1;
    }
    int64_t t = 0;
    for (int k = 0; k < d->ndim; k++) {
        if (tc[k] < 0 || tc[k] >= d->nt[k]) {
            rmcc_fail(RMC_ERR_BOUNDS, fn, "tile coordinate %d = %lld (0 .. %lld)", k,
                      (long long)tc[k], (long long)d->nt[k] - 1);
            return -1;
        }
        t = t * d->nt[k] + tc[k];
    }
    return t;
}

/* Tile t's coordinates (t in range). */
static void coords(const struct rmc_dist *d, int64_t t, int64_t tc[])
{
    for (int k = d->ndim - 1; k >= 0; k--) {
        tc[k] = t % d->nt[k];
        t /= d->nt[k];
    }
}

/* t in [0, ntiles) (RMC_ERR_BOUNDS otherwise). */
static rmc_status_t tile_check(rmc_dist_h d, int64_t t, const char *fn)
{
    rmc_status_t st = rmcc_dist_check(d, fn);
    if (st == RMC_OK && (t < 0 || t >= d->ntiles))
        st = rmcc_fail(RMC_ERR_BOUNDS, fn, "tile %lld (0 .. %lld)", (long long)t,
                       (long long)d->ntiles - 1);
    return st;
}

rmc_status_t rmc_dist_tile_coords(rmc_dist_h d, int64_t t, int64_t tc[])
{
    rmc_status_t st = tile_check(d, t, __func__);
    if (st == RMC_OK && !tc)
        st = rmcc_fail(RMC_ERR_ARG, __func__, "NULL coordinates");
    if (st == RMC_OK)
        coords(d, t, tc);
    return st;
}

rmc_status_t rmc_dist_tile(rmc_dist_h d, int64_t t, int64_t lo[], int64_t hi[], int *owner)
{
    rmc_status_t st = tile_check(d, t, __func__);
    if (st != RMC_OK)
        return st;
    int64_t tc[MD];
    coords(d, t, tc);
    for (int k = 0; k < d->ndim; k++) {
        if (lo)
            lo[k] = rmcc_tile_lo(d, k, tc[k]);
        if (hi)
            hi[k] = rmcc_tile_hi(d, k, tc[k]);
    }
    if (owner)
        *owner = rmcc_owner(d, tc);
    return RMC_OK;
}

rmc_status_t rmc_dist_locate(rmc_dist_h d, const int64_t idx[], int64_t *t, int *owner)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_dist_check(d, fn);
    if (st == RMC_OK && !idx)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL index");
    if (st != RMC_OK)
        return st;
    int64_t tc[MD], lin = 0;
    for (int k = 0; k < d->ndim; k++) {
        if (idx[k] < 0 || idx[k] >= d->dims[k])
            return rmcc_fail(RMC_ERR_BOUNDS, fn, "index %d = %lld (0 .. %lld)", k,
                             (long long)idx[k], (long long)d->dims[k] - 1);
        tc[k] = rmcc_tile_of(d, k, idx[k]);
        lin = lin * d->nt[k] + tc[k];
    }
    if (t)
        *t = lin;
    if (owner)
        *owner = rmcc_owner(d, tc);
    return RMC_OK;
}

rmc_status_t rmc_dist_owned(rmc_dist_h d, int rank, int64_t *tiles, int64_t max, int64_t *n)
{
    const char *fn = __func__;
    rmc_status_t st = rmcc_dist_check(d, fn);
    if (st == RMC_OK && !n)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL count pointer");
    else if (st == RMC_OK && (max < 0 || (max > 0 && !tiles)))
        st = rmcc_fail(RMC_ERR_ARG, fn, "tiles %p with max %lld", (void *)tiles, (long long)max);
    else if (st == RMC_OK && (rank < 0 || rank >= d->nranks))
        st = rmcc_fail(RMC_ERR_RANK, fn, "rank %d outside [0, %d)", rank, d->nranks);
    if (st != RMC_OK)
        return st;
    int64_t c = 0, tc[MD];
    for (int64_t t = 0; t < d->ntiles; t++) {
        coords(d, t, tc);
        if (rmcc_owner(d, tc) != rank)
            continue;
        if (c < max)
            tiles[c] = t;
        c++;
    }
    *n = c;
    return RMC_OK;
}

int rmc_dist_same(rmc_dist_h a, rmc_dist_h b)
{
    if (rmcc_dist_check(a, __func__) != RMC_OK || rmcc_dist_check(b, __func__) != RMC_OK)
        return 0;
    if (a->kind != b->kind || a->ndim != b->ndim || a->nranks != b->nranks)
        return 0;
    for (int k = 0; k < a->ndim; k++) {
        if (a->dims[k] != b->dims[k] || a->nt[k] != b->nt[k] || a->tile[k] != b->tile[k] ||
            a->pgrid[k] != b->pgrid[k])
            return 0;
        if (a->split[k] &&
            memcmp(a->split[k], b->split[k], ((size_t)a->nt[k] + 1) * sizeof(int64_t)))
            return 0;
    }
    if (a->nmap != b->nmap || (a->nmap && memcmp(a->ranks, b->ranks, sizeof(int) * (size_t)a->nmap)))
        return 0;
    return 1;
}
