/* ga-compat: arrays with ghost cells. The logical distribution has one block per process
 * (regular or irregular: dimension d split at starts s_0 < s_1 < ... < s_{n-1}, s_n = dims[d]).
 * The data lives in a padded matrix: every block widened by the ghost width w_d on both sides,
 * so dimension d of the storage has dims[d] + 2 n w_d elements, block b starting at
 * s_b + 2 b w_d; logical index i of block b is storage index i + (2 b + 1) w_d. A block and its
 * ghosts are thus one contiguous row-major array in its owner's memory, as in GA, and
 * NGA_Access_ghosts hands it out in place. Patch operations on the array split at the block
 * boundaries and move each piece to its shifted place.
 * Ghost updates: each rank gets the boxes of its ghost region from the owners' blocks one-sidedly
 * straight into its own padded block (periodic: a box is cut where it wraps and at block
 * boundaries, so widths wider than a neighbour's block work too), between two syncs. Also here:
 * access to the padded block, GA_Merge_mirrored (a sync: no per-node copies here),
 * GA_Overlay, NGA_Proc_topology. */
#include <stdlib.h>
#include <string.h>
#include "ga_impl.h"

typedef struct ghost {
    int64_t *start[GA_MAX_DIM]; /* logical block starts per dimension, nblocks + 1 entries */
    int64_t nb[GA_MAX_DIM];
} ghost_t;

/* gai_ghost_setup's local part: the block starts and the padded distribution *pd (NULL on
 * failure). */
static rmc_status_t ghost_prepare(gai_array_t *a, rmc_dist_h *pd_out)
{
    *pd_out = NULL;
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
    if (st != RMC_OK)
        rmc_dist_free(pd);
    else
        *pd_out = pd;
    return st;
}

rmc_status_t gai_ghost_setup(gai_array_t *a, const char *fn)
{
    rmc_dist_h pd;
    rmc_status_t st = ghost_prepare(a, &pd);
    /* the local part agreed over the group before the collective creation: a member failing
     * alone would leave the others in it (a member that did not fail reports memory short, and
     * the caller's agreement says where the failure was) */
    if (gai_allreduce_int(st != RMC_OK, MPI_MAX, gai_group_member(a->pgroup, fn)->comm, fn,
                          "agreeing on the ghost layout")) {
        if (pd)
            rmc_dist_free(pd);
        return st != RMC_OK ? st : RMC_ERR_NOMEM;
    }
    /* on a process group: created by its members only */
    st = gai_matrix_new(a, gai_group_comm(a->pgroup, fn), pd, &a->m);
    rmc_dist_free(pd);
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

/* ------------------------------------------------------------------ ghost updates --- */

/* The corner flag: a->corner_flag is 0 until GA_Set_ghost_corner_flag (GA's default: corners
 * updated), then 1 (corners) or -1 (no corners). */
static int corners(const gai_array_t *a)
{
    return a->corner_flag >= 0;
}

/* This rank's block of a ghost array: logical [lo, hi), the padded block's first element (ghosts
 * included) and its extents pd[]. NULL when this rank owns nothing. */
static char *my_block(gai_array_t *a, int64_t lo[], int64_t hi[], int64_t pd[])
{
    int64_t t, n = 0;
    if (rmc_dist_owned(a->dist, gai.me, &t, 1, &n) != RMC_OK || n == 0)
        return NULL;
    rmc_dist_tile(a->dist, t, lo, hi, NULL);
    void *p = NULL;
    if (rmc_matrix_tile_local(a->m, t, &p) != RMC_OK)
        return NULL;
    for (int d = 0; d < a->ndim; d++)
        pd[d] = hi[d] - lo[d] + 2 * a->width[d];
    return p;
}

/* One piece of a box: [pl, ph) of the padded storage into dst (padded ld). */
static void piece_get(gai_array_t *a, const int64_t pl[], const int64_t ph[], char *dst,
                      const int64_t ld[], gai_reqs_t *q, const char *fn)
{
    gai_check(rmc_matrix_get_nb(a->m, pl, ph, dst, a->ndim > 1 ? ld : NULL, gai_reqs_add(q, fn)),
              fn, "getting ghost cells from a neighbour");
}

/* Box [rl, rh) of this rank's padded block (coordinates of the logical array, each within
 * [lo - w, hi + w)) filled from the array's data, periodic in every dimension: each dimension's
 * range is cut where it wraps and at block boundaries, each piece fetched one-sidedly from its
 * owner's block straight into place. */
static void box_rec(gai_array_t *a, int d, const int64_t rl[], const int64_t rh[],
                    const int64_t lo[], int64_t pl[], int64_t ph[], char *dst, const int64_t pd[],
                    const int64_t ld[], gai_reqs_t *q, const char *fn)
{
    const ghost_t *g = a->ghost;
    if (d == a->ndim) {
        piece_get(a, pl, ph, dst, ld, q, fn);
        return;
    }
    int64_t stride = (int64_t)a->esz;
    for (int e = d + 1; e < a->ndim; e++)
        stride *= pd[e];
    int64_t n = a->dims[d];
    for (int64_t x = rl[d]; x < rh[d];) {
        int64_t wx = ((x % n) + n) % n, b = block_of(g, d, wx);
        int64_t len = g->start[d][b + 1] - wx;
        if (len > rh[d] - x)
            len = rh[d] - x;
        int64_t shift = (2 * b + 1) * a->width[d];
        pl[d] = wx + shift;
        ph[d] = wx + len + shift;
        box_rec(a, d + 1, rl, rh, lo, pl, ph, dst + (x - (lo[d] - a->width[d])) * stride, pd, ld, q,
                fn);
        x += len;
    }
}

static void fill_box(gai_array_t *a, const int64_t rl[], const int64_t rh[], const int64_t lo[],
                     char *base, const int64_t pd[], gai_reqs_t *q, const char *fn)
{
    for (int d = 0; d < a->ndim; d++)
        if (rh[d] <= rl[d])
            return;
    int64_t ld[GA_MAX_DIM], pl[GA_MAX_DIM], ph[GA_MAX_DIM];
    for (int d = 0; d + 1 < a->ndim; d++)
        ld[d] = pd[d + 1];
    box_rec(a, 0, rl, rh, lo, pl, ph, base, pd, ld, q, fn);
}

/* The ghost box of dimension dim on side dir (-1 low, +1 high) of block [lo, hi): in the other
 * dimensions e, the padded extent where wide[e], else the block's. */
static void side_box(const gai_array_t *a, int dim, int dir, const int64_t lo[], const int64_t hi[],
                     const int wide[], int64_t rl[], int64_t rh[])
{
    for (int e = 0; e < a->ndim; e++) {
        int64_t w = a->width[e];
        if (e == dim) {
            rl[e] = dir < 0 ? lo[e] - w : hi[e];
            rh[e] = dir < 0 ? lo[e] : hi[e] + w;
        } else {
            rl[e] = wide[e] ? lo[e] - w : lo[e];
            rh[e] = wide[e] ? hi[e] + w : hi[e];
        }
    }
}

static gai_array_t *ghost_array(int g_a, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!a->has_ghosts)
        gai_error(fn, "array %d ('%s') has no ghost cells", g_a, a->name);
    return a;
}

/* Every ghost cell of this rank's block from the periodic neighbours' data: dimension d's two
 * slabs span the padded extent of dimensions < d (with corners) and the block's of the rest, so
 * the slabs tile the ghost region; each is read from the owners' data directly (no ordering
 * between the dimensions needed). The transfers in flight are added to *q. */
static void update_all(gai_array_t *a, gai_reqs_t *q, const char *fn)
{
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM], pd[GA_MAX_DIM];
    char *base = my_block(a, lo, hi, pd);
    if (!base)
        return;
    for (int d = 0; d < a->ndim; d++) {
        if (!a->width[d])
            continue;
        int wide[GA_MAX_DIM];
        for (int e = 0; e < a->ndim; e++)
            wide[e] = corners(a) && e < d;
        for (int dir = -1; dir <= 1; dir += 2) {
            int64_t rl[GA_MAX_DIM], rh[GA_MAX_DIM];
            side_box(a, d, dir, lo, hi, wide, rl, rh);
            fill_box(a, rl, rh, lo, base, pd, q, fn);
        }
    }
}

/* Collective: every block's ghost cells filled from its neighbours' data, periodic in every
 * dimension, corners included unless GA_Set_ghost_corner_flag(g_a, 0). Syncs before and after. */
void GA_Update_ghosts(int g_a)
{
    const char *fn = "GA_Update_ghosts";
    gai_array_t *a = gai_array(g_a, fn);
    gai_sync_group(a->pgroup, fn);
    if (a->has_ghosts) {
        gai_reqs_t q = {0};
        update_all(a, &q, fn);
        gai_reqs_wait(&q, fn);
    }
    gai_sync_group(a->pgroup, fn);
}

void NGA_Update_ghosts(int g_a)
{
    GA_Update_ghosts(g_a);
}

/* Local (one-sided, as in GA: no sync; the neighbours' data must be in place, e.g. after a
 * GA_Sync, and stay so until completion): this rank's ghost cells as GA_Update_ghosts fills them.
 * Non-blocking: the cells are there once NGA_NbWait(nbhandle) returns or NGA_NbTest(nbhandle)
 * returns 1 (or at the next GA_Sync / GA_Fence); pieces held on this node are copied at once, the
 * others' gets are in flight. An array without ghost cells: nothing to do (a completed handle). */
void NGA_Update_ghosts_nb(int g_a, ga_nbhdl_t *nbhandle)
{
    const char *fn = "NGA_Update_ghosts_nb";
    gai_array_t *a = gai_array(g_a, fn);
    if (!nbhandle)
        gai_error(fn, "array '%s': NULL handle", a->name);
    gai_reqs_t q = {0};
    if (a->has_ghosts)
        update_all(a, &q, fn);
    *nbhandle = gai_reqs_handle(&q, fn);
}

/* Collective: the ghost cells of dimension `dimension` (C order, 0-based) on side idir (+1 high,
 * -1 low) from the neighbours' data, periodic; flag: across the padded extent of the other
 * dimensions (corners) or the block's. Returns 1. */
int NGA_Update_ghost_dir(int g_a, int dimension, int idir, int flag)
{
    const char *fn = "NGA_Update_ghost_dir";
    gai_array_t *a = ghost_array(g_a, fn);
    if (dimension < 0 || dimension >= a->ndim)
        gai_error(fn, "array '%s': dimension %d (0 .. %d)", a->name, dimension, a->ndim - 1);
    if (idir != 1 && idir != -1)
        gai_error(fn, "array '%s': idir %d (+1 or -1)", a->name, idir);
    gai_sync_group(a->pgroup, fn);
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM], pd[GA_MAX_DIM];
    char *base = my_block(a, lo, hi, pd);
    if (base && a->width[dimension]) {
        int wide[GA_MAX_DIM];
        for (int e = 0; e < a->ndim; e++)
            wide[e] = flag != 0;
        int64_t rl[GA_MAX_DIM], rh[GA_MAX_DIM];
        gai_reqs_t q = {0};
        side_box(a, dimension, idir, lo, hi, wide, rl, rh);
        fill_box(a, rl, rh, lo, base, pd, &q, fn);
        gai_reqs_wait(&q, fn);
    }
    gai_sync_group(a->pgroup, fn);
    return 1;
}

static void nbget_dir(int g_a, const int64_t mask[], ga_nbhdl_t *handle, const char *fn)
{
    gai_array_t *a = ghost_array(g_a, fn);
    if (!mask || !handle)
        gai_error(fn, "array '%s': NULL mask or handle", a->name);
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM], pd[GA_MAX_DIM], rl[GA_MAX_DIM], rh[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        if (mask[d] < -1 || mask[d] > 1)
            gai_error(fn, "array '%s': mask[%d] = %lld (-1, 0 or 1)", a->name, d,
                      (long long)mask[d]);
    *handle = 0;
    char *base = my_block(a, lo, hi, pd);
    if (!base)
        return;
    for (int d = 0; d < a->ndim; d++) {
        int64_t w = a->width[d];
        rl[d] = mask[d] < 0 ? lo[d] - w : mask[d] > 0 ? hi[d] : lo[d];
        rh[d] = mask[d] < 0 ? lo[d] : mask[d] > 0 ? hi[d] + w : hi[d];
    }
    gai_reqs_t q = {0};
    fill_box(a, rl, rh, lo, base, pd, &q, fn);
    *handle = gai_reqs_handle(&q, fn);
}

/* Local: the ghost cells of this rank's block in direction mask[] (per dimension -1 low side, +1
 * high side, 0 the block's extent; several non-zero entries: a corner or edge) from the
 * neighbours' data, periodic. Non-blocking: the cells are there once NGA_NbWait(handle) returns
 * or NGA_NbTest(handle) returns 1 (or at the next GA_Sync / GA_Fence); pieces held on this node are
 * copied at once, the others' gets are in flight. */
void NGA_NbGet_ghost_dir(int g_a, int mask[], ga_nbhdl_t *handle)
{
    const char *fn = "NGA_NbGet_ghost_dir";
    int64_t m[GA_MAX_DIM];
    gai_array_t *a = ghost_array(g_a, fn);
    if (!mask)
        gai_error(fn, "NULL mask");
    for (int d = 0; d < a->ndim; d++)
        m[d] = mask[d];
    nbget_dir(g_a, m, handle, fn);
}

void NGA_NbGet_ghost_dir64(int g_a, int64_t mask[], ga_nbhdl_t *handle)
{
    nbget_dir(g_a, mask, handle, "NGA_NbGet_ghost_dir64");
}

/* Local: GA_Update_ghosts' corners setting (flag 0: the ghost updates leave corners alone). */
void GA_Set_ghost_corner_flag(int g_a, int flag)
{
    gai_handle(g_a, "GA_Set_ghost_corner_flag")->corner_flag = flag ? 1 : -1;
}

/* ------------------------------------------------------------------ access, local --- */

/* Local: this rank's block with its ghost cells in place: dims[] of the padded block, *ptr its
 * first element, ld[] its extents (ptr NULL, dims 0 when this rank owns nothing). */
void NGA_Access_ghosts64(int g_a, int64_t dims[], void *ptr, int64_t ld[])
{
    const char *fn = "NGA_Access_ghosts";
    gai_array_t *a = gai_array(g_a, fn);
    if (!dims || !ptr || (a->ndim > 1 && !ld))
        gai_error(fn, "array '%s': NULL dims, ptr or ld", a->name);
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM], pd[GA_MAX_DIM];
    char *base = NULL;
    if (a->has_ghosts)
        base = my_block(a, lo, hi, pd);
    else if (gai_owned_block(a, gai.me, lo, hi)) {
        int64_t t, n = 0;
        rmc_dist_owned(a->dist, gai.me, &t, 1, &n);
        base = gai_block_ptr(a, t, NULL);
        for (int d = 0; d < a->ndim; d++)
            pd[d] = hi[d] - lo[d];
    }
    *(void **)ptr = base;
    for (int d = 0; d < a->ndim; d++)
        dims[d] = base ? pd[d] : 0;
    for (int d = 0; d + 1 < a->ndim; d++)
        ld[d] = base ? pd[d + 1] : 0;
}

void NGA_Access_ghosts(int g_a, int dims[], void *ptr, int ld[])
{
    int64_t d64[GA_MAX_DIM], l64[GA_MAX_DIM];
    int nd = gai_array(g_a, "NGA_Access_ghosts")->ndim;
    NGA_Access_ghosts64(g_a, d64, ptr, l64);
    for (int d = 0; d < nd; d++)
        dims[d] = (int)d64[d];
    for (int d = 0; d + 1 < nd; d++)
        ld[d] = (int)l64[d];
}

/* Local: *ptr = element subscript[] of this rank's padded block (0-based, ghosts included: the
 * block's first element is subscript width[]), ld[] the padded extents. */
void NGA_Access_ghost_element64(int g_a, void *ptr, int64_t subscript[], int64_t ld[])
{
    const char *fn = "NGA_Access_ghost_element";
    gai_array_t *a = ghost_array(g_a, fn);
    if (!ptr || !subscript || (a->ndim > 1 && !ld))
        gai_error(fn, "array '%s': NULL ptr, subscript or ld", a->name);
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM], pd[GA_MAX_DIM], off = 0;
    char *base = my_block(a, lo, hi, pd);
    if (!base)
        gai_error(fn, "array '%s': process %d owns no block", a->name, gai.me);
    for (int d = 0; d < a->ndim; d++) {
        if (subscript[d] < 0 || subscript[d] >= pd[d])
            gai_error(fn, "array '%s': subscript[%d] = %lld outside the padded block [0, %lld)",
                      a->name, d, (long long)subscript[d], (long long)pd[d]);
        off = off * pd[d] + subscript[d];
    }
    *(void **)ptr = base + off * (int64_t)a->esz;
    for (int d = 0; d + 1 < a->ndim; d++)
        ld[d] = pd[d + 1];
}

void NGA_Access_ghost_element(int g_a, void *ptr, int subscript[], int ld[])
{
    const char *fn = "NGA_Access_ghost_element";
    gai_array_t *a = ghost_array(g_a, fn);
    int64_t s[GA_MAX_DIM], l[GA_MAX_DIM];
    if (!subscript)
        gai_error(fn, "NULL subscript");
    for (int d = 0; d < a->ndim; d++)
        s[d] = subscript[d];
    NGA_Access_ghost_element64(g_a, ptr, s, l);
    for (int d = 0; d + 1 < a->ndim; d++)
        ld[d] = (int)l[d];
}

/* Local: end of an access (the data is in place: nothing to copy back). The _update forms mark
 * the block as written, which in-place storage needs no action for. */
void NGA_Release_ghosts(int g_a)
{
    gai_array(g_a, "NGA_Release_ghosts");
}

void NGA_Release_update_ghosts(int g_a)
{
    gai_array(g_a, "NGA_Release_update_ghosts");
}

void NGA_Release_ghost_element64(int g_a, int64_t index[])
{
    (void)index;
    ghost_array(g_a, "NGA_Release_ghost_element");
}

void NGA_Release_ghost_element(int g_a, int index[])
{
    (void)index;
    ghost_array(g_a, "NGA_Release_ghost_element");
}

void NGA_Release_update_ghost_element64(int g_a, int64_t index[])
{
    (void)index;
    ghost_array(g_a, "NGA_Release_update_ghost_element");
}

void NGA_Release_update_ghost_element(int g_a, int index[])
{
    (void)index;
    ghost_array(g_a, "NGA_Release_update_ghost_element");
}

/* Local: patch [lo, hi] (inclusive) into buf (ld): from this rank's padded block as it stands
 * (ghost cells included, indices may reach width[] outside the block and the array) when the
 * patch lies inside it, else an NGA_Get of the array's data. */
void NGA_Get_ghost_block64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[])
{
    const char *fn = "NGA_Get_ghost_block";
    gai_array_t *a = gai_array(g_a, fn);
    if (!lo || !hi || !buf || (a->ndim > 1 && !ld))
        gai_error(fn, "array '%s': NULL lo, hi, buf or ld", a->name);
    int64_t bl[GA_MAX_DIM], bh[GA_MAX_DIM], pd[GA_MAX_DIM];
    char *base = a->has_ghosts ? my_block(a, bl, bh, pd) : NULL;
    int inside = base != NULL;
    for (int d = 0; inside && d < a->ndim; d++)
        inside = lo[d] >= bl[d] - a->width[d] && hi[d] < bh[d] + a->width[d] && lo[d] <= hi[d];
    if (!inside) {
        int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
        if (gai_patch_i64(a, lo, hi, l, h, fn))
            gai_xfer(a, 'g', l, h, buf, ld, NULL, NULL, fn);
        return;
    }
    /* copy rows of the last dimension */
    int nd = a->ndim;
    int64_t ext[GA_MAX_DIM], c[GA_MAX_DIM] = {0};
    for (int d = 0; d < nd; d++)
        ext[d] = hi[d] - lo[d] + 1;
    size_t row = (size_t)ext[nd - 1] * a->esz;
    for (;;) {
        int64_t so = 0, bo = 0;
        for (int d = 0; d < nd; d++) {
            so = so * pd[d] + (lo[d] + c[d] - (bl[d] - a->width[d]));
            bo = d == 0 ? c[0] : bo * ld[d - 1] + c[d];
        }
        memcpy((char *)buf + bo * (int64_t)a->esz, base + so * (int64_t)a->esz, row);
        int d = nd - 2;
        while (d >= 0 && ++c[d] == ext[d])
            c[d] = 0, d--;
        if (d < 0)
            break;
    }
}

void NGA_Get_ghost_block(int g_a, int lo[], int hi[], void *buf, int ld[])
{
    const char *fn = "NGA_Get_ghost_block";
    gai_array_t *a = gai_array(g_a, fn);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM], d64[GA_MAX_DIM];
    if (!lo || !hi)
        gai_error(fn, "NULL lo or hi");
    for (int d = 0; d < a->ndim; d++)
        l[d] = lo[d], h[d] = hi[d];
    if (ld)
        gai_ld_int(a->ndim, ld, d64);
    NGA_Get_ghost_block64(g_a, l, h, buf, ld ? d64 : NULL);
}

/* --------------------------------------------------------------- mirrored, overlay --- */

/* Collective. ga-compat keeps no per-node copies: an array created on GA_Pgroup_get_mirror() is
 * an ordinary distributed array, one copy of the data, so merging the copies is a sync. */
void GA_Merge_mirrored(int g_a)
{
    gai_array_t *a = gai_array(g_a, "GA_Merge_mirrored");
    gai_sync_group(a->pgroup, "GA_Merge_mirrored");
}

void NGA_Merge_mirrored(int g_a)
{
    GA_Merge_mirrored(g_a);
}

/* Collective. GA_Overlay: allocates array g_a (a handle with its data set, not allocated) in the
 * memory of array g_p (allocated, on the same process group): each process's part of g_a starts
 * where its part of g_p does and must fit in it (else GA_Error). g_a's elements are g_p's bytes as
 * they are; writes through either array change both. g_p must be destroyed after g_a. Returns 1.
 * (GA_Assemble_duplicate, an array in GA_Getmem memory, is in create.c.) */
int GA_Overlay(int g_a, int g_p)
{
    const char *fn = "GA_Overlay";
    gai_array_t *a = gai_handle(g_a, fn), *p = gai_array(g_p, fn);
    if (a->allocated)
        gai_error(fn, "array %d ('%s') is already allocated", g_a, a->name);
    if (g_a == g_p)
        gai_error(fn, "array %d overlaid on itself", g_a);
    if (a->pgroup != p->pgroup || a->mirrored != p->mirrored)
        gai_error(fn, "arrays '%s' and '%s' are on different process groups (%d, %d)", a->name,
                  p->name, GA_Get_pgroup(g_a), GA_Get_pgroup(g_p));
    a->overlay_of = g_p;
    if (!gai_allocate(a, fn)) {
        a->overlay_of = 0;
        gai_error(fn, "array '%s' could not be placed in '%s'", a->name, p->name);
    }
    return 1;
}

int NGA_Overlay(int g_a, int g_p)
{
    return GA_Overlay(g_a, g_p);
}

/* ------------------------------------------------------------------- topology --- */

/* Local: the coordinates of process proc (of the array's group) in the array's process grid (C
 * order); -1 in every dimension when proc owns no block, is outside the group, or the array is
 * block-cyclic without a process grid (GA_Set_block_cyclic). */
void NGA_Proc_topology(int g_a, int proc, int coord[])
{
    const char *fn = "NGA_Proc_topology";
    gai_array_t *a = gai_array(g_a, fn);
    if (!coord)
        gai_error(fn, "array '%s': NULL coord", a->name);
    for (int d = 0; d < a->ndim; d++)
        coord[d] = -1;
    gai_group_t *g = gai_group(a->pgroup, fn);
    if (proc < 0 || proc >= g->size || rmc_dist_kind(a->dist) == RMC_DIST_ROUND_ROBIN)
        return;
    int64_t t, n = 0, tc[GA_MAX_DIM];
    if (rmc_dist_owned(a->dist, g->ranks[proc], &t, 1, &n) != RMC_OK || n == 0)
        return;
    rmc_dist_tile_coords(a->dist, t, tc);
    for (int d = 0; d < a->ndim; d++)
        coord[d] = (int)(tc[d] % a->pgrid[d]);
}
