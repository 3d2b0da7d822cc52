/* ga-compat: arrays with ghost cells. The logical distribution has one block per process
 * (regular or irregular: dimension d split at starts s_0 < s_1 < ... < s_{n-1}, s_n = dims[d]).
 * The data lives in a padded matrix: every block widened by the ghost width w_d on both sides,
 * so dimension d of the storage has dims[d] + 2 n w_d elements, block b starting at
 * s_b + 2 b w_d; logical index i of block b is storage index i + (2 b + 1) w_d. A block and its
 * ghosts are thus one contiguous row-major array in its owner's memory, as in GA, and
 * NGA_Access_ghosts hands it out in place. Patch operations on the array split at the block
 * boundaries and move each piece to its shifted place. */
#include <stdlib.h>
#include <string.h>
#include "ga_impl.h"

typedef struct ghost {
    int64_t *start[GA_MAX_DIM]; /* logical block starts per dimension, nblocks + 1 entries */
    int64_t nb[GA_MAX_DIM];
} ghost_t;

rmc_status_t gai_ghost_setup(gai_array_t *a, const char *fn)
{
    ghost_t *g = calloc(1, sizeof *g);
    if (!g)
        return RMC_ERR_NOMEM;
    int nb[GA_MAX_DIM];
    int64_t pdims[GA_MAX_DIM], total = 0;
    for (int d = 0; d < a->ndim; d++) {
        g->nb[d] = a->block_grid[d];
        nb[d] = (int)g->nb[d];
        total += g->nb[d];
        if (!(g->start[d] = malloc(sizeof(int64_t) * (size_t)(g->nb[d] + 1)))) {
            a->ghost = g;
            gai_ghost_release(a);
            return RMC_ERR_NOMEM;
        }
        g->start[d][g->nb[d]] = a->dims[d];
        pdims[d] = a->dims[d] + 2 * g->nb[d] * a->width[d];
    }
    /* the block starts from the logical distribution: tile (0.., b, ..0)'s lo */
    int64_t tc[GA_MAX_DIM] = {0};
    for (int d = 0; d < a->ndim; d++)
        for (int64_t b = 0; b < g->nb[d]; b++) {
            int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
            memset(tc, 0, sizeof tc);
            tc[d] = b;
            rmc_dist_tile(a->dist, rmc_dist_tile_index(a->dist, tc), lo, hi, NULL);
            g->start[d][b] = lo[d];
        }
    a->ghost = g;
    int64_t *pmap = malloc(sizeof(int64_t) * (size_t)total);
    if (!pmap)
        return RMC_ERR_NOMEM;
    int64_t k = 0;
    for (int d = 0; d < a->ndim; d++)
        for (int64_t b = 0; b < g->nb[d]; b++)
            pmap[k++] = g->start[d][b] + 2 * b * a->width[d];
    rmc_dist_h pd;
    rmc_status_t st = rmc_dist_irregular(a->ndim, pdims, nb, pmap, &pd);
    free(pmap);
    if (st != RMC_OK)
        return st;
    /* the same owners as the logical distribution */
    int np = 1;
    for (int d = 0; d < a->ndim; d++)
        np *= nb[d];
    int *ranks = malloc(sizeof(int) * (size_t)np);
    if (!ranks) {
        rmc_dist_free(pd);
        return RMC_ERR_NOMEM;
    }
    for (int p = 0; p < np; p++) {
        int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
        rmc_dist_tile(a->dist, p, lo, hi, &ranks[p]); /* one tile per process: tile p, process p */
    }
    st = rmc_dist_set_ranks(pd, ranks, np);
    free(ranks);
    if (st == RMC_OK)
        st = rmc_matrix_create(pd, a->elem, &a->m);
    rmc_dist_free(pd);
    (void)fn;
    return st;
}

void gai_ghost_release(gai_array_t *a)
{
    ghost_t *g = a->ghost;
    if (!g)
        return;
    for (int d = 0; d < GA_MAX_DIM; d++)
        free(g->start[d]);
    free(g);
    a->ghost = NULL;
}

/* The block of logical index i in dimension d. */
static int64_t block_of(const ghost_t *g, int d, int64_t i)
{
    int64_t lo = 0, hi = g->nb[d] - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (g->start[d][mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void gai_ghost_index(const gai_array_t *a, const int64_t idx[], int64_t p[])
{
    const ghost_t *g = a->ghost;
    for (int d = 0; d < a->ndim; d++)
        p[d] = idx[d] + (2 * block_of(g, d, idx[d]) + 1) * a->width[d];
}

void gai_ghost_xfer(gai_array_t *a, int op, const int64_t l[], const int64_t h[], void *buf,
                    const int64_t ld[], const void *alpha, rmc_request_h *req, const char *fn)
{
    const ghost_t *g = a->ghost;
    int nd = a->ndim;
    /* iterate over the blocks the patch touches; each piece is one matrix operation */
    int64_t bl[GA_MAX_DIM], bh[GA_MAX_DIM], bc[GA_MAX_DIM];
    for (int d = 0; d < nd; d++) {
        bl[d] = block_of(g, d, l[d]);
        bh[d] = block_of(g, d, h[d] - 1);
        bc[d] = bl[d];
    }
    int64_t dense_ld[GA_MAX_DIM];
    if (!ld)
        for (int d = 0; d + 1 < nd; d++)
            dense_ld[d] = h[d + 1] - l[d + 1];
    const int64_t *bld = ld ? ld : dense_ld;
    for (;;) {
        int64_t pl[GA_MAX_DIM], ph[GA_MAX_DIM], off = 0;
        for (int d = 0; d < nd; d++) {
            int64_t s = g->start[d][bc[d]], e = g->start[d][bc[d] + 1];
            int64_t lo = l[d] > s ? l[d] : s, hi = h[d] < e ? h[d] : e;
            off = d == 0 ? lo - l[0] : off * bld[d - 1] + (lo - l[d]);
            int64_t shift = (2 * bc[d] + 1) * a->width[d];
            pl[d] = lo + shift;
            ph[d] = hi + shift;
        }
        char *p = (char *)buf + off * (int64_t)a->esz;
        rmc_status_t st;
        const int64_t *ldp = nd > 1 ? bld : NULL;
        if (op == 'p')
            st = rmc_matrix_put(a->m, pl, ph, p, ldp);
        else if (op == 'g')
            st = rmc_matrix_get(a->m, pl, ph, p, ldp);
        else
            st = rmc_matrix_acc(a->m, pl, ph, p, ldp, alpha);
        gai_check(st, fn, "a piece of the patch");
        int d = nd - 1;
        while (d >= 0 && ++bc[d] > bh[d])
            bc[d] = bl[d], d--;
        if (d < 0)
            break;
    }
    if (req)
        *req = RMC_REQUEST_NULL; /* completed: a non-blocking call may complete at once */
}
