/* ga-compat: creating, describing and destroying arrays (NGA_Create family, the GA_Create_handle /
 * GA_Set_* / GA_Allocate style, duplicates) and the distribution queries (NGA_Distribution,
 * NGA_Locate*, block and process-grid queries). Collective calls are collective over the array's
 * process group, as in GA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ga_impl.h"

/* ------------------------------------------------------------------- description --- */

static void set_name(gai_array_t *a, const char *name)
{
    snprintf(a->name, sizeof a->name, "%s", name ? name : "");
}

static void need_unallocated(gai_array_t *a, const char *fn)
{
    if (a->allocated)
        gai_error(fn, "array %d ('%s') is already allocated: set its properties before "
                      "GA_Allocate",
                  a->handle, a->name);
}

static void set_data(gai_array_t *a, int ndim, const int64_t dims[], int type, const char *fn)
{
    need_unallocated(a, fn);
    if (ndim < 1 || ndim > GA_MAX_DIM)
        gai_error(fn, "ndim %d (1 .. %d)", ndim, GA_MAX_DIM);
    if (!dims)
        gai_error(fn, "NULL dims");
    if (!gai_elem_of(type))
        gai_error(fn, "type %d is not a GA array type (C_INT, C_LONG, C_LONGLONG, C_FLOAT, C_DBL, "
                      "C_SCPL, C_DCPL or an id of NGA_Register_type)",
                  type);
    for (int d = 0; d < ndim; d++)
        if (dims[d] < 1)
            gai_error(fn, "dims[%d] = %lld (must be >= 1)", d, (long long)dims[d]);
    a->ndim = ndim;
    a->type = type;
    a->elem = gai_elem_of(type);
    a->esz = gai_type_size(type);
    memcpy(a->dims, dims, sizeof(int64_t) * (size_t)ndim);
}

static void set_chunk(gai_array_t *a, const int64_t chunk[])
{
    for (int d = 0; d < GA_MAX_DIM; d++)
        a->chunk[d] = chunk && d < a->ndim ? chunk[d] : 0;
}

/* The irregular block starts (0-based, dimension 0's first) and counts; tiled: more blocks than
 * processes allowed (they are dealt over the process grid). */
static void set_irreg_blocks(gai_array_t *a, const int64_t map[], const int64_t nblock[],
                             int tiled, const char *fn);

static void set_irreg(gai_array_t *a, const int64_t map[], const int64_t nblock[], const char *fn)
{
    set_irreg_blocks(a, map, nblock, 0, fn);
}

static void set_irreg_blocks(gai_array_t *a, const int64_t map[], const int64_t nblock[],
                             int tiled, const char *fn)
{
    if (!a->ndim)
        gai_error(fn, "array %d: GA_Set_data first", a->handle);
    if (!map || !nblock)
        gai_error(fn, "NULL map or nblock");
    int64_t total = 0, procs = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (nblock[d] < 1 || nblock[d] > a->dims[d])
            gai_error(fn, "nblock[%d] = %lld (1 .. dims[%d] = %lld)", d, (long long)nblock[d], d,
                      (long long)a->dims[d]);
        total += nblock[d];
        procs *= nblock[d];
    }
    int np = gai_group(a->pgroup, fn)->size;
    if (procs > np && !tiled)
        gai_error(fn, "%lld blocks but only %d processes", (long long)procs, np);
    int64_t *m = malloc(sizeof(int64_t) * (size_t)total);
    if (!m)
        gai_error(fn, "out of memory for the map");
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++) {
        for (int64_t i = 0; i < nblock[d]; i++) {
            int64_t v = map[off + i];
            if (v < 0 || v >= a->dims[d] || (i == 0 && v != 0) ||
                (i > 0 && v <= map[off + i - 1])) {
                free(m);
                gai_error(fn, "map for dimension %d: entry %lld is %lld (starts at 0, increasing, "
                              "below %lld)",
                          d, (long long)i, (long long)v, (long long)a->dims[d]);
            }
            m[off + i] = v;
        }
        a->nblock_req[d] = (int)nblock[d];
        off += nblock[d];
    }
    free(a->map_req);
    a->map_req = m;
    a->dkind = GAI_D_IRREG;
}

/* -------------------------------------------------------------------- allocation --- */

/* This rank's bytes of the array's blocks: of the padded blocks (extent + 2 * width in every
 * dimension) for arrays with ghost cells, as their storage holds them (and GA counts them). */
static size_t my_bytes(gai_array_t *a, rmc_dist_h d, const char *fn)
{
    size_t mine = 0;
    if (a->overlay_of) /* the memory is the other array's (counted there) */
        return 0;
    int64_t n = 0;
    gai_check(rmc_dist_owned(d, gai.me, NULL, 0, &n), fn, "rmc_dist_owned");
    if (n <= 0)
        return 0;
    int64_t *t = malloc(sizeof(int64_t) * (size_t)n);
    if (!t)
        gai_error(fn, "out of memory");
    gai_check(rmc_dist_owned(d, gai.me, t, n, &n), fn, "rmc_dist_owned");
    for (int64_t i = 0; i < n; i++) {
        int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
        gai_check(rmc_dist_tile(d, t[i], l, h, NULL), fn, "rmc_dist_tile");
        if (a->has_ghosts)
            for (int k = 0; k < a->ndim; k++)
                h[k] += 2 * a->width[k];
        mine += (size_t)gai_patch_count(a->ndim, l, h) * a->esz;
    }
    free(t);
    return mine;
}

/* Frees the data (collective) and gives its bytes back to the memory limit's account. */
static void free_storage(gai_array_t *a)
{
    gai_nb_wait_all("GA_Destroy"); /* no transfer into or out of the storage stays in flight */
    if (a->allocated) {
        gai_ndestroy++;
        size_t mine = my_bytes(a, a->dist, "GA_Destroy");
        gai.mem_used = gai.mem_used > mine ? gai.mem_used - mine : 0;
    }
    if (a->has_ghosts)
        gai_ghost_release(a);
    gai_rma_release(a); /* the blocks' addresses were the storage's */
    if (a->m)
        gai_check(rmc_matrix_destroy(a->m), "GA_Destroy", "rmc_matrix_destroy");
    a->m = NULL;
    rmc_dist_free(a->dist);
    a->dist = NULL;
    a->allocated = 0;
}

void gai_free(gai_array_t *a)
{
    if (a->allocated)
        free_storage(a);
    free(a->map_req);
    a->map_req = NULL;
    free(a->restricted);
    a->restricted = NULL;
    a->live = 0;
}

/* Frees array a and its handle. */
static void drop(gai_array_t *a)
{
    int g_a = a->handle;
    gai_free(a);
    free(a);
    gai.arrays[g_a + GAI_OFFSET] = NULL;
}

/* Allocates the new (described, unallocated) handle g; on failure releases it and returns 0. */
static int allocate_new(int g, const char *fn)
{
    gai_array_t *b = gai.arrays[g + GAI_OFFSET];
    if (!gai_allocate(b, fn)) {
        drop(b);
        return 0;
    }
    return g;
}

/* The logical distribution from the request. */
static rmc_status_t make_dist(gai_array_t *a, gai_group_t *g, rmc_dist_h *d, const char *fn)
{
    int np = a->nrestricted ? a->nrestricted : g->size;
    rmc_status_t st;
    switch (a->dkind) {
    case GAI_D_DEFAULT: {
        int nblock[GA_MAX_DIM];
        int64_t map[GA_MAX_DIM * 1024];
        int64_t *mp = map;
        size_t need = 0;
        for (int d = 0; d < a->ndim; d++)
            need += (size_t)(np < a->dims[d] ? np : a->dims[d]) + 1;
        if (need > sizeof map / sizeof map[0] &&
            !(mp = malloc(sizeof(int64_t) * (need + (size_t)a->ndim * (size_t)np))))
            return RMC_ERR_NOMEM;
        gai_ddb(a->ndim, a->dims, a->chunk, np, nblock, mp);
        st = rmc_dist_irregular(a->ndim, a->dims, nblock, mp, d);
        if (mp != map)
            free(mp);
        break;
    }
    case GAI_D_IRREG: {
        int nb[GA_MAX_DIM];
        for (int i = 0; i < a->ndim; i++)
            nb[i] = a->nblock_req[i];
        st = rmc_dist_irregular(a->ndim, a->dims, nb, a->map_req, d);
        break;
    }
    case GAI_D_BLOCK_CYCLIC:
        st = rmc_dist_round_robin(a->ndim, a->dims, a->block, d);
        break;
    case GAI_D_SCALAPACK:
        st = rmc_dist_regular(a->ndim, a->dims, a->block, a->pgrid_req, d);
        break;
    default: { /* GAI_D_TILED_IRREG */
        int nb[GA_MAX_DIM];
        for (int i = 0; i < a->ndim; i++)
            nb[i] = a->nblock_req[i];
        st = rmc_dist_irregular_grid(a->ndim, a->dims, nb, a->map_req, a->pgrid_req, d);
        break;
    }
    }
    if (st != RMC_OK)
        return st;
    /* processes of the distribution -> world ranks: the group's members, or the restricted list */
    int identity = !a->nrestricted && g->size == gai.np;
    if (!identity) {
        int *map = malloc(sizeof(int) * (size_t)np);
        if (!map) {
            rmc_dist_free(*d);
            return RMC_ERR_NOMEM;
        }
        for (int i = 0; i < np; i++) {
            if (a->nrestricted && a->restricted[i] >= g->size) {
                free(map);
                rmc_dist_free(*d);
                gai_error(fn, "array '%s': restricted to process %d, but its group has %d", a->name,
                          a->restricted[i], g->size);
            }
            map[i] = a->nrestricted ? g->ranks[a->restricted[i]] : g->ranks[i];
        }
        int n = np;
        if (rmc_dist_kind(*d) != RMC_DIST_ROUND_ROBIN) {
            int pg[GA_MAX_DIM];
            rmc_dist_proc_grid(*d, pg);
            n = 1;
            for (int i = 0; i < a->ndim; i++)
                n *= pg[i];
        }
        if (n > np) {
            free(map);
            rmc_dist_free(*d);
            gai_error(fn, "array '%s': its process grid has %d processes, but only %d hold data "
                          "(%s)",
                      a->name, n, np, a->nrestricted ? "GA_Set_restricted" : "the group's size");
        }
        st = rmc_dist_set_ranks(*d, map, n);
        free(map);
        if (st != RMC_OK)
            rmc_dist_free(*d);
    }
    return st;
}

rmc_status_t gai_matrix_new(const gai_array_t *a, MPI_Comm comm, rmc_dist_h d, rmc_matrix_h *m)
{
    if (a->overlay_of) /* GA_Overlay: in the other array's memory (over its ranks) */
        return rmc_matrix_create_overlay(gai_array(a->overlay_of, "GA_Overlay")->m, d, a->elem,
                                         a->esz, m);
    if (a->elem == RMC_ELEM_OPAQUE) /* a user-defined type */
        return rmc_matrix_create_opaque(comm, d, a->esz, m);
    return comm != MPI_COMM_NULL ? rmc_matrix_create_comm(comm, d, a->elem, m)
                                 : rmc_matrix_create(d, a->elem, m);
}

int gai_allocate(gai_array_t *a, const char *fn)
{
    if (a->allocated)
        gai_error(fn, "array %d ('%s') is already allocated", a->handle, a->name);
    if (!a->ndim)
        gai_error(fn, "array %d: GA_Set_data was not called", a->handle);
    gai_group_t *g = gai_group(a->pgroup, fn);
    if (g->me < 0)
        gai_error(fn, "array '%s': this process is not in the array's process group %d", a->name,
                  a->pgroup);
    if (a->has_ghosts && a->dkind != GAI_D_DEFAULT && a->dkind != GAI_D_IRREG)
        gai_error(fn, "array '%s': ghost cells need a regular or irregular distribution",
                  a->name);
    rmc_dist_h d = NULL;
    rmc_status_t st = make_dist(a, g, &d, fn);
    if (st != RMC_OK)
        gai_error(fn, "array '%s': its distribution: %s (%s)", a->name, rmc_status_string(st),
                  rmc_last_error());
    a->dist = d;
    rmc_dist_tile_grid(d, a->block_grid);
    rmc_dist_proc_grid(d, a->pgrid);
    a->nblocks = rmc_dist_ntiles(d);
    /* this rank's share, against the memory limit (agreed: GA_Allocate returns 0 everywhere) */
    size_t mine = my_bytes(a, d, fn);
    int ok = !GA_Memory_limited() || mine <= GA_Memory_avail();
    if (!gai_allreduce_int(ok, MPI_LAND, g->comm, fn, "agreeing on the memory limit")) {
        rmc_dist_free(d);
        a->dist = NULL;
        return 0;
    }
    if (a->has_ghosts)
        st = gai_ghost_setup(a, fn);
    else /* on a group: its members only */
        st = gai_matrix_new(a, gai_group_comm(a->pgroup, fn), d, &a->m);
    /* memory short (RMC_ERR_NOMEM, or RMC_ERR_TOO_BIG: beyond what a region can hold) makes
     * the call return 0, as GA does; agreed over the group, so that no member returns 0 while
     * another aborts or goes on with the array (the worst status wins: 2 any other failure) */
    int mine_st = st == RMC_OK ? 0 : st == RMC_ERR_NOMEM || st == RMC_ERR_TOO_BIG ? 1 : 2;
    int all_st =
        gai_allreduce_int(mine_st, MPI_MAX, g->comm, fn, "agreeing on the storage's creation");
    if (all_st == 2) {
        if (mine_st == 2)
            gai_check(st, fn, "creating the array's storage");
        gai_error(fn, "array '%s': creating the storage failed on another process (here: %s)",
                  a->name, rmc_status_string(st));
    }
    if (all_st == 1) {
        if (st == RMC_OK) /* (rmc_matrix_create fails everywhere or nowhere) */
            gai_error(fn, "array '%s': storage created here but short on another process", a->name);
        if (a->has_ghosts)
            gai_ghost_release(a);
        rmc_dist_free(d);
        a->dist = NULL;
        return 0;
    }
    gai.mem_used += mine;
    a->allocated = 1;
    gai_ncreate++;
    return 1;
}

/* ---------------------------------------------------------- creation, 64-bit core --- */

static int create64(int type, int ndim, const int64_t dims[], const char *name,
                    const int64_t chunk[], int p_handle, const int64_t width[],
                    const int64_t nblock[], const int64_t map[], const char *fn)
{
    gai_up(fn);
    int g = gai_new_handle(fn);
    gai_array_t *a = gai.arrays[g + GAI_OFFSET];
    if (p_handle != GAI_WORLD || gai.default_group != GAI_WORLD)
        gai_group(p_handle, fn);
    gai_set_group(a, p_handle);
    set_data(a, ndim, dims, type, fn);
    set_name(a, name);
    set_chunk(a, chunk);
    if (map)
        set_irreg(a, map, nblock, fn);
    if (width) {
        int any = 0;
        for (int d = 0; d < ndim; d++) {
            if (width[d] < 0 || width[d] > dims[d])
                gai_error(fn, "ghost width[%d] = %lld (0 .. %lld)", d, (long long)width[d],
                          (long long)dims[d]);
            a->width[d] = width[d];
            any |= width[d] > 0;
        }
        a->has_ghosts = any;
    }
    return allocate_new(g, fn);
}

/* int arrays to int64 (n entries; NULL stays NULL); dst##_heap to free when large */
#define I64(dst, src, n)                                                                          \
    int64_t dst##_v[GA_MAX_DIM * 64], *dst##_heap = NULL;                                         \
    int64_t *dst = gai_to64((src), (size_t)(n), dst##_v, sizeof dst##_v / sizeof dst##_v[0],      \
                            &dst##_heap)

static int ndim_ok(int ndim, const char *fn)
{
    if (ndim < 1 || ndim > GA_MAX_DIM)
        gai_error(fn, "ndim %d (1 .. %d)", ndim, GA_MAX_DIM);
    return ndim;
}

static int64_t map_len(int ndim, const int nblock[])
{
    int64_t n = 0;
    for (int d = 0; d < ndim; d++)
        n += nblock ? nblock[d] : 0;
    return n;
}

static int64_t map_len64(int ndim, const int64_t nblock[])
{
    int64_t n = 0;
    for (int d = 0; d < ndim; d++)
        n += nblock ? nblock[d] : 0;
    return n;
}

/* Collective. An array of ndim dims[] of a GA type, zero-filled, GA's default distribution
 * (chunk: minimum block sizes, NULL or <= 0 entries: no constraint). Returns the handle, or 0 when
 * the memory limit refuses it. */
int NGA_Create(int type, int ndim, int dims[], char *name, int chunk[])
{
    const char *fn = "NGA_Create";
    ndim_ok(ndim, fn);
    I64(d, dims, ndim);
    I64(c, chunk, ndim);
    return create64(type, ndim, d, name, c, gai.default_group, NULL, NULL, NULL, fn);
}

int NGA_Create64(int type, int ndim, int64_t dims[], char *name, int64_t chunk[])
{
    return create64(type, ndim_ok(ndim, "NGA_Create64"), dims, name, chunk, gai.default_group,
                    NULL, NULL, NULL, "NGA_Create64");
}

int NGA_Create_config(int type, int ndim, int dims[], char *name, int chunk[], int p_handle)
{
    const char *fn = "NGA_Create_config";
    ndim_ok(ndim, fn);
    I64(d, dims, ndim);
    I64(c, chunk, ndim);
    return create64(type, ndim, d, name, c, p_handle, NULL, NULL, NULL, fn);
}

int NGA_Create_config64(int type, int ndim, int64_t dims[], char *name, int64_t chunk[],
                        int p_handle)
{
    return create64(type, ndim_ok(ndim, "NGA_Create_config64"), dims, name, chunk, p_handle,
                    NULL, NULL, NULL, "NGA_Create_config64");
}

/* Irregular: dimension d in nblock[d] blocks starting at map[] (0-based, dimension 0's first). */
int NGA_Create_irreg_config(int type, int ndim, int dims[], char *name, int nblock[], int map[],
                            int p_handle)
{
    const char *fn = "NGA_Create_irreg";
    ndim_ok(ndim, fn);
    if (!nblock || !map)
        gai_error(fn, "NULL nblock or map");
    I64(d, dims, ndim);
    I64(nb, nblock, ndim);
    I64(m, map, map_len(ndim, nblock));
    int g = create64(type, ndim, d, name, NULL, p_handle, NULL, nb, m, fn);
    free(m_heap);
    return g;
}

int NGA_Create_irreg(int type, int ndim, int dims[], char *name, int nblock[], int map[])
{
    return NGA_Create_irreg_config(type, ndim, dims, name, nblock, map, gai.default_group);
}

int NGA_Create_irreg_config64(int type, int ndim, int64_t dims[], char *name, int64_t nblock[],
                              int64_t map[], int p_handle)
{
    const char *fn = "NGA_Create_irreg64";
    ndim_ok(ndim, fn);
    if (!nblock || !map)
        gai_error(fn, "NULL nblock or map");
    return create64(type, ndim, dims, name, NULL, p_handle, NULL, nblock, map, fn);
}

int NGA_Create_irreg64(int type, int ndim, int64_t dims[], char *name, int64_t nblock[],
                       int64_t map[])
{
    return NGA_Create_irreg_config64(type, ndim, dims, name, nblock, map, gai.default_group);
}

/* With ghost cells of width[d] on each side of every block in dimension d. */
int NGA_Create_ghosts_config(int type, int ndim, int dims[], int width[], char *name,
                             int chunk[], int p_handle)
{
    const char *fn = "NGA_Create_ghosts";
    ndim_ok(ndim, fn);
    if (!width)
        gai_error(fn, "NULL width");
    I64(d, dims, ndim);
    I64(c, chunk, ndim);
    I64(w, width, ndim);
    return create64(type, ndim, d, name, c, p_handle, w, NULL, NULL, fn);
}

int NGA_Create_ghosts(int type, int ndim, int dims[], int width[], char *name, int chunk[])
{
    return NGA_Create_ghosts_config(type, ndim, dims, width, name, chunk, gai.default_group);
}

int NGA_Create_ghosts_config64(int type, int ndim, int64_t dims[], int64_t width[], char *name,
                               int64_t chunk[], int p_handle)
{
    const char *fn = "NGA_Create_ghosts64";
    if (!width)
        gai_error(fn, "NULL width");
    return create64(type, ndim_ok(ndim, fn), dims, name, chunk, p_handle, width, NULL, NULL, fn);
}

int NGA_Create_ghosts64(int type, int ndim, int64_t dims[], int64_t width[], char *name,
                        int64_t chunk[])
{
    return NGA_Create_ghosts_config64(type, ndim, dims, width, name, chunk, gai.default_group);
}

int NGA_Create_ghosts_irreg_config(int type, int ndim, int dims[], int width[], char *name,
                                   int nblock[], int map[], int p_handle)
{
    const char *fn = "NGA_Create_ghosts_irreg";
    ndim_ok(ndim, fn);
    if (!width || !nblock || !map)
        gai_error(fn, "NULL width, nblock or map");
    I64(d, dims, ndim);
    I64(w, width, ndim);
    I64(nb, nblock, ndim);
    I64(m, map, map_len(ndim, nblock));
    int g = create64(type, ndim, d, name, NULL, p_handle, w, nb, m, fn);
    free(m_heap);
    return g;
}

int NGA_Create_ghosts_irreg(int type, int ndim, int dims[], int width[], char *name, int nblock[],
                            int map[])
{
    return NGA_Create_ghosts_irreg_config(type, ndim, dims, width, name, nblock, map,
                                          gai.default_group);
}

int NGA_Create_ghosts_irreg_config64(int type, int ndim, int64_t dims[], int64_t width[],
                                     char *name, int64_t nblock[], int64_t map[], int p_handle)
{
    const char *fn = "NGA_Create_ghosts_irreg64";
    ndim_ok(ndim, fn);
    if (!width || !nblock || !map)
        gai_error(fn, "NULL width, nblock or map");
    (void)map_len64;
    return create64(type, ndim, dims, name, NULL, p_handle, width, nblock, map, fn);
}

int NGA_Create_ghosts_irreg64(int type, int ndim, int64_t dims[], int64_t width[], char *name,
                              int64_t nblock[], int64_t map[])
{
    return NGA_Create_ghosts_irreg_config64(type, ndim, dims, width, name, nblock, map,
                                            gai.default_group);
}

/* --------------------------------------------------- GA_Create_handle / Set_* style --- */

int GA_Create_handle(void)
{
    return gai_new_handle("GA_Create_handle");
}

int NGA_Create_handle(void)
{
    return gai_new_handle("NGA_Create_handle");
}

void GA_Set_data(int g_a, int ndim, int dims[], int type)
{
    const char *fn = "GA_Set_data";
    gai_array_t *a = gai_handle(g_a, fn);
    ndim_ok(ndim, fn);
    I64(d, dims, ndim);
    set_data(a, ndim, d, type, fn);
}

void GA_Set_data64(int g_a, int ndim, int64_t dims[], int type)
{
    set_data(gai_handle(g_a, "GA_Set_data64"), ndim, dims, type, "GA_Set_data64");
}

void NGA_Set_data(int g_a, int ndim, int dims[], int type)
{
    GA_Set_data(g_a, ndim, dims, type);
}

void NGA_Set_data64(int g_a, int ndim, int64_t dims[], int type)
{
    GA_Set_data64(g_a, ndim, dims, type);
}

void GA_Set_array_name(int g_a, char *name)
{
    set_name(gai_handle(g_a, "GA_Set_array_name"), name);
}

void NGA_Set_array_name(int g_a, char *name)
{
    GA_Set_array_name(g_a, name);
}

void GA_Set_chunk(int g_a, int chunk[])
{
    gai_array_t *a = gai_handle(g_a, "GA_Set_chunk");
    need_unallocated(a, "GA_Set_chunk");
    if (!a->ndim)
        gai_error("GA_Set_chunk", "array %d: GA_Set_data first", g_a);
    I64(c, chunk, a->ndim);
    set_chunk(a, c);
}

void GA_Set_chunk64(int g_a, int64_t chunk[])
{
    gai_array_t *a = gai_handle(g_a, "GA_Set_chunk64");
    need_unallocated(a, "GA_Set_chunk64");
    if (!a->ndim)
        gai_error("GA_Set_chunk64", "array %d: GA_Set_data first", g_a);
    set_chunk(a, chunk);
}

void NGA_Set_chunk(int g_a, int chunk[])
{
    GA_Set_chunk(g_a, chunk);
}

void GA_Set_irreg_distr(int g_a, int map[], int block[])
{
    const char *fn = "GA_Set_irreg_distr";
    gai_array_t *a = gai_handle(g_a, fn);
    need_unallocated(a, fn);
    if (!a->ndim)
        gai_error(fn, "array %d: GA_Set_data first", g_a);
    if (!block || !map)
        gai_error(fn, "NULL map or block");
    I64(nb, block, a->ndim);
    I64(m, map, map_len(a->ndim, block));
    set_irreg(a, m, nb, fn);
    free(m_heap);
}

void GA_Set_irreg_distr64(int g_a, int64_t map[], int64_t block[])
{
    const char *fn = "GA_Set_irreg_distr64";
    gai_array_t *a = gai_handle(g_a, fn);
    need_unallocated(a, fn);
    set_irreg(a, map, block, fn);
}

void NGA_Set_irreg_distr(int g_a, int map[], int block[])
{
    GA_Set_irreg_distr(g_a, map, block);
}

void NGA_Set_irreg_distr64(int g_a, int64_t map[], int64_t block[])
{
    GA_Set_irreg_distr64(g_a, map, block);
}

void GA_Set_irreg_flag(int g_a, int flag)
{
    (void)gai_handle(g_a, "GA_Set_irreg_flag");
    (void)flag; /* GA's hint that a distribution is irregular: the map already says so */
}

void NGA_Set_irreg_flag(int g_a, int flag)
{
    GA_Set_irreg_flag(g_a, flag);
}

/* The process grid of a ScaLAPACK-style or tiled array: every entry >= 1, their product the
 * size of the array's group; kept in a->pgrid_req. */
static void set_pgrid(gai_array_t *a, const int64_t grid[], const char *fn)
{
    if (!grid)
        gai_error(fn, "NULL proc_grid");
    int64_t procs = 1;
    for (int d = 0; d < a->ndim; d++) {
        if (grid[d] < 1)
            gai_error(fn, "proc_grid[%d] = %lld (>= 1)", d, (long long)grid[d]);
        procs *= grid[d];
    }
    if (procs != gai_group(a->pgroup, fn)->size)
        gai_error(fn, "the process grid has %lld processes, the group %d", (long long)procs,
                  gai_group(a->pgroup, fn)->size);
    for (int d = 0; d < a->ndim; d++)
        a->pgrid_req[d] = (int)grid[d];
}

static void set_block_cyclic(gai_array_t *a, const int64_t block[], const int64_t grid[],
                             int tiled, const char *fn)
{
    need_unallocated(a, fn);
    if (!a->ndim)
        gai_error(fn, "array %d: GA_Set_data first", a->handle);
    if (a->has_ghosts)
        gai_error(fn, "array '%s': block-cyclic arrays cannot have ghost cells", a->name);
    if (!block)
        gai_error(fn, "NULL block dimensions");
    for (int d = 0; d < a->ndim; d++) {
        if (block[d] < 1)
            gai_error(fn, "block[%d] = %lld (>= 1)", d, (long long)block[d]);
        a->block[d] = block[d];
    }
    if (grid)
        set_pgrid(a, grid, fn);
    a->dkind = grid ? GAI_D_SCALAPACK : GAI_D_BLOCK_CYCLIC;
    a->tiled = tiled;
}

/* GA_Set_block_cyclic_proc_grid / GA_Set_tiled_proc_grid (+64): blocks over a process grid. */
static void grid_int(int g_a, const int block[], const int proc_grid[], int tiled, const char *fn)
{
    gai_array_t *a = gai_handle(g_a, fn);
    if (!proc_grid)
        gai_error(fn, "NULL proc_grid");
    I64(b, block, a->ndim);
    I64(p, proc_grid, a->ndim);
    set_block_cyclic(a, b, p, tiled, fn);
}

static void grid64(int g_a, const int64_t block[], const int64_t proc_grid[], int tiled,
                   const char *fn)
{
    if (!proc_grid)
        gai_error(fn, "NULL proc_grid");
    set_block_cyclic(gai_handle(g_a, fn), block, proc_grid, tiled, fn);
}

void GA_Set_block_cyclic(int g_a, int dims[])
{
    gai_array_t *a = gai_handle(g_a, "GA_Set_block_cyclic");
    I64(b, dims, a->ndim);
    set_block_cyclic(a, b, NULL, 0, "GA_Set_block_cyclic");
}

void GA_Set_block_cyclic64(int g_a, int64_t dims[])
{
    set_block_cyclic(gai_handle(g_a, "GA_Set_block_cyclic64"), dims, NULL, 0,
                     "GA_Set_block_cyclic64");
}

void NGA_Set_block_cyclic(int g_a, int dims[])
{
    GA_Set_block_cyclic(g_a, dims);
}

void NGA_Set_block_cyclic64(int g_a, int64_t dims[])
{
    GA_Set_block_cyclic64(g_a, dims);
}

void GA_Set_block_cyclic_proc_grid(int g_a, int block[], int proc_grid[])
{
    grid_int(g_a, block, proc_grid, 0, "GA_Set_block_cyclic_proc_grid");
}

void GA_Set_block_cyclic_proc_grid64(int g_a, int64_t block[], int64_t proc_grid[])
{
    grid64(g_a, block, proc_grid, 0, "GA_Set_block_cyclic_proc_grid64");
}

void NGA_Set_block_cyclic_proc_grid(int g_a, int block[], int proc_grid[])
{
    GA_Set_block_cyclic_proc_grid(g_a, block, proc_grid);
}

void NGA_Set_block_cyclic_proc_grid64(int g_a, int64_t block[], int64_t proc_grid[])
{
    GA_Set_block_cyclic_proc_grid64(g_a, block, proc_grid);
}

/* GA's tiled layout distributes like the ScaLAPACK-style one; blocks are stored whole here in
 * both, so the two differ only in the flag GA_Uses_proc_grid reports alike. */
void GA_Set_tiled_proc_grid(int g_a, int block[], int proc_grid[])
{
    grid_int(g_a, block, proc_grid, 1, "GA_Set_tiled_proc_grid");
}

void GA_Set_tiled_proc_grid64(int g_a, int64_t block[], int64_t proc_grid[])
{
    grid64(g_a, block, proc_grid, 1, "GA_Set_tiled_proc_grid64");
}

void NGA_Set_tiled_proc_grid(int g_a, int block[], int proc_grid[])
{
    GA_Set_tiled_proc_grid(g_a, block, proc_grid);
}

void NGA_Set_tiled_proc_grid64(int g_a, int64_t block[], int64_t proc_grid[])
{
    GA_Set_tiled_proc_grid64(g_a, block, proc_grid);
}

/* GA_Set_tiled_irreg_proc_grid (+64): irregular blocks (starts mapc, nblocks per dimension, as
 * GA_Set_irreg_distr) dealt cyclically over proc_grid (its product: the group's size). */
static void set_tiled_irreg(gai_array_t *a, const int64_t mapc[], const int64_t nblocks[],
                            const int64_t proc_grid[], const char *fn)
{
    need_unallocated(a, fn);
    if (!a->ndim)
        gai_error(fn, "array %d: GA_Set_data first", a->handle);
    if (a->has_ghosts)
        gai_error(fn, "array '%s': tiled arrays cannot have ghost cells", a->name);
    set_pgrid(a, proc_grid, fn);
    set_irreg_blocks(a, mapc, nblocks, 1, fn);
    a->dkind = GAI_D_TILED_IRREG;
    a->tiled = 1;
}

void GA_Set_tiled_irreg_proc_grid(int g_a, int mapc[], int nblocks[], int proc_grid[])
{
    const char *fn = "GA_Set_tiled_irreg_proc_grid";
    gai_array_t *a = gai_handle(g_a, fn);
    if (!mapc || !nblocks || !proc_grid)
        gai_error(fn, "NULL mapc, nblocks or proc_grid");
    if (!a->ndim)
        gai_error(fn, "array %d: GA_Set_data first", a->handle);
    int64_t total = 0;
    for (int d = 0; d < a->ndim; d++)
        total += nblocks[d] > 0 ? nblocks[d] : 0;
    int64_t *m = malloc(sizeof(int64_t) * (size_t)(total ? total : 1));
    if (!m)
        gai_error(fn, "out of memory for the map");
    for (int64_t i = 0; i < total; i++)
        m[i] = mapc[i];
    I64(nb, nblocks, a->ndim);
    I64(pg, proc_grid, a->ndim);
    set_tiled_irreg(a, m, nb, pg, fn);
    free(m);
}

void GA_Set_tiled_irreg_proc_grid64(int g_a, int64_t mapc[], int64_t nblocks[],
                                    int64_t proc_grid[])
{
    set_tiled_irreg(gai_handle(g_a, "GA_Set_tiled_irreg_proc_grid64"), mapc, nblocks, proc_grid,
                    "GA_Set_tiled_irreg_proc_grid64");
}

void NGA_Set_tiled_irreg_proc_grid(int g_a, int mapc[], int nblocks[], int proc_grid[])
{
    GA_Set_tiled_irreg_proc_grid(g_a, mapc, nblocks, proc_grid);
}

void NGA_Set_tiled_irreg_proc_grid64(int g_a, int64_t mapc[], int64_t nblocks[],
                                     int64_t proc_grid[])
{
    GA_Set_tiled_irreg_proc_grid64(g_a, mapc, nblocks, proc_grid);
}

void GA_Set_ghosts(int g_a, int width[])
{
    const char *fn = "GA_Set_ghosts";
    gai_array_t *a = gai_handle(g_a, fn);
    I64(w, width, a->ndim);
    GA_Set_ghosts64(g_a, w);
}

void GA_Set_ghosts64(int g_a, int64_t width[])
{
    const char *fn = "GA_Set_ghosts";
    gai_array_t *a = gai_handle(g_a, fn);
    need_unallocated(a, fn);
    if (!a->ndim)
        gai_error(fn, "array %d: GA_Set_data first", g_a);
    if (!width)
        gai_error(fn, "NULL width");
    int any = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (width[d] < 0 || width[d] > a->dims[d])
            gai_error(fn, "width[%d] = %lld (0 .. %lld)", d, (long long)width[d],
                      (long long)a->dims[d]);
        a->width[d] = width[d];
        any |= width[d] > 0;
    }
    a->has_ghosts = any;
}

void NGA_Set_ghosts(int g_a, int width[])
{
    GA_Set_ghosts(g_a, width);
}

void NGA_Set_ghosts64(int g_a, int64_t width[])
{
    GA_Set_ghosts64(g_a, width);
}

void GA_Set_pgroup(int g_a, int p_handle)
{
    gai_array_t *a = gai_handle(g_a, "GA_Set_pgroup");
    need_unallocated(a, "GA_Set_pgroup");
    gai_group(p_handle, "GA_Set_pgroup");
    gai_set_group(a, p_handle);
}

void NGA_Set_pgroup(int g_a, int p_handle)
{
    GA_Set_pgroup(g_a, p_handle);
}

/* Data only on the listed processes (ids in the array's group), block k on list[k]. */
void GA_Set_restricted(int g_a, int list[], int size)
{
    const char *fn = "GA_Set_restricted";
    gai_array_t *a = gai_handle(g_a, fn);
    need_unallocated(a, fn);
    int np = gai_group(a->pgroup, fn)->size;
    if (!list || size < 1 || size > np)
        gai_error(fn, "list %p, size %d (1 .. %d)", (void *)list, size, np);
    for (int i = 0; i < size; i++) {
        if (list[i] < 0 || list[i] >= np)
            gai_error(fn, "list[%d] = %d (0 .. %d)", i, list[i], np - 1);
        for (int j = 0; j < i; j++)
            if (list[j] == list[i])
                gai_error(fn, "list[%d] and list[%d] are both %d", j, i, list[i]);
    }
    int *l = malloc(sizeof(int) * (size_t)size);
    if (!l)
        gai_error(fn, "out of memory");
    memcpy(l, list, sizeof(int) * (size_t)size);
    free(a->restricted);
    a->restricted = l;
    a->nrestricted = size;
}

void GA_Set_restricted_range(int g_a, int lo_proc, int hi_proc)
{
    const char *fn = "GA_Set_restricted_range";
    if (hi_proc < lo_proc || lo_proc < 0)
        gai_error(fn, "range %d .. %d", lo_proc, hi_proc);
    int n = hi_proc - lo_proc + 1;
    int *l = malloc(sizeof(int) * (size_t)n);
    if (!l)
        gai_error(fn, "out of memory");
    for (int i = 0; i < n; i++)
        l[i] = lo_proc + i;
    GA_Set_restricted(g_a, l, n);
    free(l);
}

void NGA_Set_restricted(int g_a, int list[], int size)
{
    GA_Set_restricted(g_a, list, size);
}

void NGA_Set_restricted_range(int g_a, int lo_proc, int hi_proc)
{
    GA_Set_restricted_range(g_a, lo_proc, hi_proc);
}

/* Properties: "read_only" (GA: the array may be cached read-only; here every get is already
 * one-sided, so it only marks the array) and "read_cache". Unknown names are an error, as in
 * GA, and so is a second property before GA_Unset_property (GA's message). */
void GA_Set_property(int g_a, char *property)
{
    const char *fn = "GA_Set_property";
    gai_array_t *a = gai_handle(g_a, fn);
    if (!property)
        gai_error(fn, "NULL property");
    if (a->read_only || a->read_cache)
        gai_error(fn,
                  "Cannot set property on an array that already has property set (array "
                  "'%s' is %s; GA_Unset_property first)",
                  a->name, a->read_only ? "read_only" : "read_cache");
    if (!strcmp(property, "read_only"))
        a->read_only = 1;
    else if (!strcmp(property, "read_cache"))
        a->read_cache = 1;
    else
        gai_error(fn, "unknown property '%s' (read_only, read_cache)", property);
}

void GA_Unset_property(int g_a)
{
    gai_array_t *a = gai_handle(g_a, "GA_Unset_property");
    a->read_only = a->read_cache = 0;
}

void NGA_Set_property(int g_a, char *property)
{
    GA_Set_property(g_a, property);
}

void NGA_Unset_property(int g_a)
{
    GA_Unset_property(g_a);
}

void GA_Set_memory_dev(int g_a, char *device)
{
    (void)gai_handle(g_a, "GA_Set_memory_dev");
    (void)device; /* host memory only */
}

void NGA_Set_memory_dev(int g_a, char *device)
{
    GA_Set_memory_dev(g_a, device);
}

/* Collective over the array's group. 1 on success, 0 when the memory limit refuses it. */
int GA_Allocate(int g_a)
{
    return gai_allocate(gai_handle(g_a, "GA_Allocate"), "GA_Allocate");
}

int NGA_Allocate(int g_a)
{
    return GA_Allocate(g_a);
}

/* A new handle described as g_a (type, shape, distribution, ghosts, group), named `name`, not
 * allocated. */
static int describe_like(int g_a, const char *array_name, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    int g = gai_new_handle(fn);
    gai_array_t *b = gai.arrays[g + GAI_OFFSET];
    a = gai.arrays[g_a + GAI_OFFSET];
    int handle = b->handle;
    *b = *a;
    b->handle = handle;
    b->allocated = 0;
    b->overlay_of = 0; /* a duplicate has memory of its own */
    b->getmem = 0;
    b->getmem_ptr = NULL;
    b->m = NULL;
    b->dist = NULL;
    b->ghost = NULL;
    b->tcache = NULL; /* rma.c's caches are the storage's: b's own come with its storage */
    b->rdi_ok = 0;
    b->map_req = NULL;
    b->restricted = NULL;
    set_name(b, array_name);
    if (a->map_req) {
        int64_t n = 0;
        for (int d = 0; d < a->ndim; d++)
            n += a->nblock_req[d];
        if (!(b->map_req = malloc(sizeof(int64_t) * (size_t)n)))
            gai_error(fn, "out of memory");
        memcpy(b->map_req, a->map_req, sizeof(int64_t) * (size_t)n);
    }
    if (a->restricted) {
        if (!(b->restricted = malloc(sizeof(int) * (size_t)a->nrestricted)))
            gai_error(fn, "out of memory");
        memcpy(b->restricted, a->restricted, sizeof(int) * (size_t)a->nrestricted);
    }
    return g;
}

/* Collective. A new array like g_a (type, shape, distribution, ghosts, group), zero-filled (GA
 * leaves its contents undefined). Returns its handle, 0 when the memory limit refuses it. */
int GA_Duplicate(int g_a, char *array_name)
{
    const char *fn = "GA_Duplicate";
    return allocate_new(describe_like(g_a, array_name, fn), fn);
}

int NGA_Duplicate(int g_a, char *array_name)
{
    return GA_Duplicate(g_a, array_name);
}

/* An allocated array in g_a's memory (GA_Overlay, GA_Assemble_duplicate), or NULL. */
static const gai_array_t *overlay_on(int g_a)
{
    for (int i = 0; i < gai.narrays; i++)
        if (gai.arrays[i] && gai.arrays[i]->live && gai.arrays[i]->allocated &&
            gai.arrays[i]->overlay_of == g_a)
            return gai.arrays[i];
    return NULL;
}

/* Array g_a's memory must outlive the arrays overlaid on it (GA_Overlay). */
static void no_overlays(const gai_array_t *a, int g_a, const char *fn)
{
    const gai_array_t *o = overlay_on(g_a);
    if (o)
        gai_error(fn, "array '%s' holds array '%s' (GA_Overlay): destroy that first", a->name,
                  o->name);
}

/* An array in the memory of array g_mem lost its storage: when that is a GA_Getmem block and no
 * other array lives in it, the block goes now, as GA 5.8.2 frees it with the assembled array
 * (collective: the array's group is the block's). */
static void getmem_release(int g_mem)
{
    gai_array_t *m = g_mem ? gai.arrays[g_mem + GAI_OFFSET] : NULL;
    if (m && m->live && m->getmem && !overlay_on(g_mem))
        drop(m);
}

/* Collective. Completes every operation on the array and frees it; the handle becomes invalid. */
void GA_Destroy(int g_a)
{
    gai_array_t *a = gai_handle(g_a, "GA_Destroy");
    no_overlays(a, g_a, "GA_Destroy");
    int mem = a->overlay_of;
    drop(a);
    getmem_release(mem);
}

void NGA_Destroy(int g_a)
{
    GA_Destroy(g_a);
}

/* Collective. Frees the data but keeps the handle's description (GA_Allocate may follow). */
int GA_Deallocate(int g_a)
{
    gai_array_t *a = gai_array(g_a, "GA_Deallocate");
    no_overlays(a, g_a, "GA_Deallocate");
    free_storage(a);
    int mem = a->overlay_of;
    a->overlay_of = 0; /* a later GA_Allocate gives it memory of its own */
    getmem_release(mem);
    return 1;
}

int NGA_Deallocate(int g_a)
{
    return GA_Deallocate(g_a);
}

/* ---------------------------------------------------------------- GA_Getmem blocks --- */

/* Collective over group grp_id (a GA_Pgroup_create / split handle; the world's, the mirror's or
 * another negative one: the world, as GA 5.8.2 takes handles <= 0, its world and mirror). Every
 * member's block of nelem elements of `type` (members may ask for different counts), 64-byte
 * aligned, its contents undefined; returns this process's. The blocks are the memory of a hidden
 * 1-D array (named "GA_Getmem", counted against GA's memory limit), so an array assembled on them
 * (GA_Assemble_duplicate) reaches every member's block one-sidedly. Freed by GA_Freemem, with the
 * last array assembled on them, or by GA_Terminate. */
void *GA_Getmem(int type, int nelem, int grp_id)
{
    const char *fn = "GA_Getmem";
    gai_up(fn);
    size_t sz = type == C_CHAR ? 1 : gai_type_size(type);
    if (!sz || nelem < 0)
        gai_error(fn, "type %d, %d elements", type, nelem);
    int grp = grp_id >= 0 ? grp_id : GAI_WORLD; /* (ga-compat's groups count from 0) */
    gai_group_t *g = gai_group_member(grp, fn);
    int64_t mine = ((int64_t)nelem * (int64_t)sz + 7) / 8; /* in doubles, at least one */
    if (mine == 0)
        mine = 1;
    int64_t *cnt = malloc(sizeof(int64_t) * 2 * (size_t)g->size);
    if (!cnt)
        gai_error(fn, "out of memory");
    MPI_Request rq;
    if (MPI_Iallgather(&mine, 1, MPI_INT64_T, cnt, 1, MPI_INT64_T, g->comm, &rq) != MPI_SUCCESS)
        gai_error(fn, "MPI_Iallgather failed");
    gai_check(rmc_wait_mpi(&rq), fn, "gathering the blocks' sizes");
    int64_t *map = cnt + g->size, total = 0, nb = g->size;
    for (int i = 0; i < g->size; i++) {
        map[i] = total;
        total += cnt[i];
    }
    int h = create64(C_DBL, 1, &total, "GA_Getmem", NULL, grp, NULL, &nb, map, fn);
    free(cnt);
    if (!h)
        gai_error(fn, "%d elements of type %d: the memory limit refuses them", nelem, type);
    gai_array_t *m = gai.arrays[h + GAI_OFFSET];
    m->getmem = 1;
    m->getmem_type = type;
    m->getmem_nelem = nelem;
    m->getmem_ptr = gai_block_ptr(m, g->me, NULL); /* (block i is member i's) */
    if (!m->getmem_ptr)
        gai_error(fn, "process %d holds no block of its GA_Getmem memory", gai.me);
    return m->getmem_ptr;
}

/* The hidden array of this process's GA_Getmem block ptr (live, not freed); aborts otherwise. */
static gai_array_t *getmem_of(const void *ptr, const char *fn)
{
    if (!ptr)
        gai_error(fn, "NULL memory (expected a block returned by GA_Getmem)");
    for (int i = 0; i < gai.narrays; i++) {
        gai_array_t *m = gai.arrays[i];
        if (m && m->live && m->getmem && m->getmem_ptr == ptr) {
            if (m->getmem == 2)
                gai_error(fn, "memory %p was freed already (GA_Freemem)", ptr);
            return m;
        }
    }
    gai_error(fn, "memory %p is not a live GA_Getmem block (not returned by it, or freed)", ptr);
}

/* Collective (as GA_Getmem was). Frees the blocks; while arrays assembled on them live
 * (GA_Assemble_duplicate) they stay until the last of those is destroyed (GA 5.8.2 frees them
 * under such an array). Blocks freed with their last array already are refused (GA 5.8.2 frees
 * them twice). */
void GA_Freemem(void *ptr)
{
    const char *fn = "GA_Freemem";
    gai_up(fn);
    gai_array_t *m = getmem_of(ptr, fn);
    if (overlay_on(m->handle)) {
        m->getmem = 2;
        gai_sync_group(m->pgroup, fn);
    } else
        drop(m);
}

/* Collective over g_a's group. A new array described as g_a (shape, distribution, ghosts, group)
 * but of GA_Getmem's type, whose memory is the GA_Getmem blocks of which ptr is this process's
 * (allocated on g_a's group): each process's part starts at its block and must fit in it (else
 * GA_Error). Its elements are the blocks' contents as they are. Returns the handle. GA 5.8.2 reads
 * the type and the blocks from a header GA_Getmem wrote before ptr, so there too ptr must come
 * from GA_Getmem. Destroying the last array on the blocks frees them, as in GA 5.8.2. Syncs the
 * group first and last, as GA does. */
int GA_Assemble_duplicate(int g_a, char *array_name, void *ptr)
{
    const char *fn = "GA_Assemble_duplicate";
    gai_array_t *a = gai_array(g_a, fn);
    gai_sync_group(a->pgroup, fn);
    gai_array_t *m = getmem_of(ptr, fn);
    if (a->pgroup != m->pgroup || a->mirrored)
        gai_error(fn, "array '%s' is on process group %d, the GA_Getmem memory on group %d",
                  a->name, GA_Get_pgroup(g_a), m->pgroup);
    if (!gai_elem_of(m->getmem_type))
        gai_error(fn, "the GA_Getmem memory's type %d is not a GA array type", m->getmem_type);
    int g = describe_like(g_a, array_name, fn);
    gai_array_t *b = gai.arrays[g + GAI_OFFSET];
    b->type = m->getmem_type;
    b->elem = gai_elem_of(b->type);
    b->esz = gai_type_size(b->type);
    b->overlay_of = m->handle;
    if (!gai_allocate(b, fn))
        gai_error(fn,
                  "array '%s' (%s) does not fit in the GA_Getmem blocks (this process's: %d "
                  "elements): %s",
                  b->name, gai_type_name(b->type), m->getmem_nelem, rmc_last_error());
    gai_sync_group(b->pgroup, fn);
    return g;
}

/* ------------------------------------------------------------------------ inquiry --- */

void NGA_Inquire64(int g_a, int *type, int *ndim, int64_t dims[])
{
    gai_array_t *a = gai_handle(g_a, "NGA_Inquire");
    if (type)
        *type = a->type;
    if (ndim)
        *ndim = a->ndim;
    if (dims)
        for (int d = 0; d < a->ndim; d++)
            dims[d] = a->dims[d];
}

void NGA_Inquire(int g_a, int *type, int *ndim, int dims[])
{
    gai_array_t *a = gai_handle(g_a, "NGA_Inquire");
    if (type)
        *type = a->type;
    if (ndim)
        *ndim = a->ndim;
    if (dims)
        for (int d = 0; d < a->ndim; d++)
            dims[d] = (int)a->dims[d];
}

char *GA_Inquire_name(int g_a)
{
    return gai_handle(g_a, "GA_Inquire_name")->name;
}

char *NGA_Inquire_name(int g_a)
{
    return GA_Inquire_name(g_a);
}

int GA_Ndim(int g_a)
{
    return gai_handle(g_a, "GA_Ndim")->ndim;
}

int NGA_Ndim(int g_a)
{
    return GA_Ndim(g_a);
}

int GA_Get_dimension(int g_a)
{
    return GA_Ndim(g_a);
}

int NGA_Get_dimension(int g_a)
{
    return GA_Ndim(g_a);
}

int GA_Get_pgroup(int g_a)
{
    gai_array_t *a = gai_handle(g_a, "GA_Get_pgroup");
    return a->mirrored ? GAI_MIRROR : a->pgroup;
}

int NGA_Get_pgroup(int g_a)
{
    return GA_Get_pgroup(g_a);
}

int GA_Get_pgroup_size(int grp_id)
{
    return gai_group(grp_id, "GA_Get_pgroup_size")->size;
}

int NGA_Get_pgroup_size(int grp_id)
{
    return GA_Get_pgroup_size(grp_id);
}

int GA_Is_mirrored(int g_a)
{
    return gai_handle(g_a, "GA_Is_mirrored")->mirrored;
}

int NGA_Is_mirrored(int g_a)
{
    return GA_Is_mirrored(g_a);
}

int GA_Has_ghosts(int g_a)
{
    return gai_handle(g_a, "GA_Has_ghosts")->has_ghosts;
}

int NGA_Has_ghosts(int g_a)
{
    return GA_Has_ghosts(g_a);
}

/* ----------------------------------------------------------------- distribution --- */

/* Group member id of a world rank (-1 when not a member). */
static int member_of(gai_array_t *a, int rank)
{
    gai_group_t *g = gai_group(a->pgroup, "GA");
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == rank)
            return i;
    return -1;
}

int gai_owned_block(gai_array_t *a, int rank, int64_t lo[], int64_t hi[])
{
    int64_t t, n = 0;
    if (rmc_dist_owned(a->dist, rank, &t, 1, &n) != RMC_OK || n == 0)
        return 0;
    rmc_dist_tile(a->dist, t, lo, hi, NULL);
    return 1;
}

static int cyclic(const gai_array_t *a);

/* Process iproc's block (inclusive); on block-cyclic arrays, as in GA, iproc is a block index
 * (0 .. GA_Total_blocks - 1) and the block is that one. */
static void distribution64(gai_array_t *a, int iproc, int64_t lo[], int64_t hi[], const char *fn)
{
    gai_group_t *g = gai_group(a->pgroup, fn);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    if (cyclic(a)) {
        if (iproc < 0)
            gai_error(fn, "block %d of '%s' out of range [0, %lld)", iproc, a->name,
                      (long long)a->nblocks);
        int in = iproc < a->nblocks;
        if (in)
            rmc_dist_tile(a->dist, iproc, l, h, NULL);
        for (int d = 0; d < a->ndim; d++)
            lo[d] = in ? l[d] : -1, hi[d] = in ? h[d] - 1 : -2;
        return;
    }
    if (iproc < 0 || iproc >= g->size)
        gai_error(fn, "process %d out of range [0, %d)", iproc, g->size);
    if (!gai_owned_block(a, g->ranks[iproc], l, h))
        for (int d = 0; d < a->ndim; d++)
            lo[d] = -1, hi[d] = -2; /* GA's C API: its Fortran 0 / -1, less one */
    else
        for (int d = 0; d < a->ndim; d++)
            lo[d] = l[d], hi[d] = h[d] - 1;
}

/* Local. The block process iproc owns, inclusive (lo -1, hi -2 when it owns nothing); on block-
 * cyclic arrays, as in GA, block iproc (lo -1, hi -2 past the last block). */
void NGA_Distribution(int g_a, int iproc, int lo[], int hi[])
{
    gai_array_t *a = gai_array(g_a, "NGA_Distribution");
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    distribution64(a, iproc, l, h, "NGA_Distribution");
    for (int d = 0; d < a->ndim; d++)
        lo[d] = (int)l[d], hi[d] = (int)h[d];
}

void NGA_Distribution64(int g_a, int iproc, int64_t lo[], int64_t hi[])
{
    distribution64(gai_array(g_a, "NGA_Distribution64"), iproc, lo, hi, "NGA_Distribution64");
}

static int locate64(gai_array_t *a, const int64_t sub[], const char *fn)
{
    for (int d = 0; d < a->ndim; d++)
        if (sub[d] < 0 || sub[d] >= a->dims[d])
            gai_error(fn, "subscript[%d] = %lld outside [0, %lld)", d, (long long)sub[d],
                      (long long)a->dims[d]);
    int owner;
    int64_t t;
    gai_check(rmc_dist_locate(a->dist, sub, &t, &owner), fn, "rmc_dist_locate");
    return cyclic(a) ? (int)t : member_of(a, owner);
}

/* Local. The process owning element subscript[] (block-cyclic arrays, as in GA: the index of the
 * block holding it, as NGA_Locate_region and NGA_Distribution count them). */
int NGA_Locate(int g_a, int subscript[])
{
    gai_array_t *a = gai_array(g_a, "NGA_Locate");
    int64_t s[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        s[d] = subscript[d];
    return locate64(a, s, "NGA_Locate");
}

int NGA_Locate64(int g_a, int64_t subscript[])
{
    return locate64(gai_array(g_a, "NGA_Locate64"), subscript, "NGA_Locate64");
}

/* The blocks a patch touches: calls fn(block, its intersection [l, h), owner) for each, in block
 * order; returns their number. */
static int64_t for_blocks(gai_array_t *a, const int64_t l[], const int64_t h[],
                          void (*cb)(void *, int64_t, const int64_t *, const int64_t *, int),
                          void *st)
{
    int nd = a->ndim;
    int64_t tl[GA_MAX_DIM], th[GA_MAX_DIM], tc[GA_MAX_DIM];
    for (int d = 0; d < nd; d++) {
        int64_t idx[GA_MAX_DIM] = {0}, t;
        idx[d] = l[d];
        /* the tile coordinate of l[d] and h[d]-1 in dimension d */
        for (int e = 0; e < nd; e++)
            if (e != d)
                idx[e] = 0;
        rmc_dist_locate(a->dist, idx, &t, NULL);
        int64_t c[GA_MAX_DIM];
        rmc_dist_tile_coords(a->dist, t, c);
        tl[d] = c[d];
        idx[d] = h[d] - 1;
        rmc_dist_locate(a->dist, idx, &t, NULL);
        rmc_dist_tile_coords(a->dist, t, c);
        th[d] = c[d];
        tc[d] = tl[d];
    }
    int64_t n = 0;
    for (;;) {
        int64_t t = rmc_dist_tile_index(a->dist, tc), lo[GA_MAX_DIM], hi[GA_MAX_DIM];
        int owner;
        rmc_dist_tile(a->dist, t, lo, hi, &owner);
        for (int d = 0; d < nd; d++) {
            if (lo[d] < l[d])
                lo[d] = l[d];
            if (hi[d] > h[d])
                hi[d] = h[d];
        }
        if (cb)
            cb(st, t, lo, hi, member_of(a, owner));
        n++;
        int d = nd - 1;
        while (d >= 0 && ++tc[d] > th[d])
            tc[d] = tl[d], d--;
        if (d < 0)
            break;
    }
    return n;
}

typedef struct region_state {
    int ndim;
    int *map32, *procs;
    int64_t *map64;
    int64_t k;
    int blocks; /* block-cyclic: procs[] gets block indices (GA's) */
} region_state_t;

static int cyclic(const gai_array_t *a)
{
    return a->dkind == GAI_D_BLOCK_CYCLIC || a->dkind == GAI_D_SCALAPACK ||
           a->dkind == GAI_D_TILED_IRREG;
}

static void region_cb(void *p, int64_t t, const int64_t *lo, const int64_t *hi, int owner)
{
    region_state_t *s = p;
    for (int d = 0; d < s->ndim; d++) {
        int64_t l = lo[d], h = hi[d] - 1;
        if (s->map32) {
            s->map32[s->k * 2 * s->ndim + d] = (int)l;
            s->map32[s->k * 2 * s->ndim + s->ndim + d] = (int)h;
        } else {
            s->map64[s->k * 2 * s->ndim + d] = l;
            s->map64[s->k * 2 * s->ndim + s->ndim + d] = h;
        }
    }
    s->procs[s->k++] = s->blocks ? (int)t : owner;
}

/* Local. The blocks patch [lo, hi] touches: their number; for each, map[] holds its intersection
 * with the patch (ndim lows, then ndim highs, inclusive) and procs[] its owner (block-cyclic
 * arrays: as in GA, its block index, the last dimension fastest). Returns 0 for a patch outside
 * the array (GA's convention). */
int NGA_Locate_region(int g_a, int lo[], int hi[], int map[], int procs[])
{
    const char *fn = "NGA_Locate_region";
    gai_array_t *a = gai_array(g_a, fn);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++) {
        if (lo[d] < 0 || hi[d] >= a->dims[d] || lo[d] > hi[d])
            return 0;
        l[d] = lo[d];
        h[d] = (int64_t)hi[d] + 1;
    }
    if (!map || !procs)
        gai_error(fn, "NULL map or procs");
    region_state_t s = {a->ndim, map, procs, NULL, 0, cyclic(a)};
    return (int)for_blocks(a, l, h, region_cb, &s);
}

int NGA_Locate_region64(int g_a, int64_t lo[], int64_t hi[], int64_t map[], int procs[])
{
    const char *fn = "NGA_Locate_region64";
    gai_array_t *a = gai_array(g_a, fn);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++) {
        if (lo[d] < 0 || hi[d] >= a->dims[d] || lo[d] > hi[d])
            return 0;
        l[d] = lo[d];
        h[d] = hi[d] + 1;
    }
    if (!map || !procs)
        gai_error(fn, "NULL map or procs");
    region_state_t s = {a->ndim, NULL, procs, map, 0, cyclic(a)};
    return (int)for_blocks(a, l, h, region_cb, &s);
}

static int nnodes64(gai_array_t *a, const int64_t lo[], const int64_t hi[])
{
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++) {
        if (lo[d] < 0 || hi[d] >= a->dims[d] || lo[d] > hi[d])
            return 0;
        l[d] = lo[d];
        h[d] = hi[d] + 1;
    }
    return (int)for_blocks(a, l, h, NULL, NULL);
}

/* Local. The number of blocks patch [lo, hi] touches (0 outside the array). */
int NGA_Locate_nnodes(int g_a, int lo[], int hi[])
{
    gai_array_t *a = gai_array(g_a, "NGA_Locate_nnodes");
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        l[d] = lo[d], h[d] = hi[d];
    return nnodes64(a, l, h);
}

int NGA_Locate_nnodes64(int g_a, int64_t lo[], int64_t hi[])
{
    return nnodes64(gai_array(g_a, "NGA_Locate_nnodes64"), lo, hi);
}

/* Local. Block-cyclic arrays: the number of blocks patch [lo, hi] touches; -1 for the others (as
 * GA 5.8.2). */
int NGA_Locate_num_blocks(int g_a, int lo[], int hi[])
{
    if (!cyclic(gai_array(g_a, "NGA_Locate_num_blocks")))
        return -1;
    return NGA_Locate_nnodes(g_a, lo, hi);
}

/* Blocks per dimension. */
void GA_Nblock(int g_a, int *nblock)
{
    gai_array_t *a = gai_array(g_a, "GA_Nblock");
    for (int d = 0; d < a->ndim; d++)
        nblock[d] = (int)a->block_grid[d];
}

void NGA_Nblock(int g_a, int *nblock)
{
    GA_Nblock(g_a, nblock);
}

/* The process grid (regular arrays: blocks per dimension). */
void GA_Get_proc_grid(int g_a, int dims[])
{
    gai_array_t *a = gai_array(g_a, "GA_Get_proc_grid");
    for (int d = 0; d < a->ndim; d++)
        dims[d] = a->dkind == GAI_D_BLOCK_CYCLIC ? 0 : a->pgrid[d];
}

void NGA_Get_proc_grid(int g_a, int dims[])
{
    GA_Get_proc_grid(g_a, dims);
}

/* The grid coordinates of process iproc. */
void GA_Get_proc_index(int g_a, int iproc, int subscript[])
{
    const char *fn = "GA_Get_proc_index";
    gai_array_t *a = gai_array(g_a, fn);
    int np = gai_group(a->pgroup, fn)->size;
    if (iproc < 0 || iproc >= np)
        gai_error(fn, "process %d out of range [0, %d)", iproc, np);
    int r = iproc;
    for (int d = a->ndim - 1; d >= 0; d--) {
        int g = a->pgrid[d] > 0 ? a->pgrid[d] : 1;
        subscript[d] = r % g;
        r /= g;
    }
    if (r > 0)
        for (int d = 0; d < a->ndim; d++)
            subscript[d] = -1; /* outside the grid */
}

void NGA_Get_proc_index(int g_a, int iproc, int subscript[])
{
    GA_Get_proc_index(g_a, iproc, subscript);
}

/* Local. Blocks per dimension and the block size of a block-cyclic array; zeros for the others
 * (as GA). */
void GA_Get_block_info(int g_a, int num_blocks[], int block_dims[])
{
    gai_array_t *a = gai_array(g_a, "GA_Get_block_info");
    for (int d = 0; d < a->ndim; d++) {
        num_blocks[d] = cyclic(a) ? (int)a->block_grid[d] : 0;
        block_dims[d] = cyclic(a) ? (int)a->block[d] : 0;
    }
}

void NGA_Get_block_info(int g_a, int num_blocks[], int block_dims[])
{
    GA_Get_block_info(g_a, num_blocks, block_dims);
}

/* Total blocks of a block-cyclic array; -1 for the others (as GA). */
int GA_Total_blocks(int g_a)
{
    gai_array_t *a = gai_array(g_a, "GA_Total_blocks");
    return cyclic(a) ? (int)a->nblocks : -1;
}

int NGA_Total_blocks(int g_a)
{
    return GA_Total_blocks(g_a);
}

int GA_Uses_proc_grid(int g_a)
{
    int k = gai_array(g_a, "GA_Uses_proc_grid")->dkind;
    return k == GAI_D_SCALAPACK || k == GAI_D_TILED_IRREG;
}

int NGA_Uses_proc_grid(int g_a)
{
    return GA_Uses_proc_grid(g_a);
}

/* 0 when g_a and g_b are distributed identically (same shape, blocks and owners), 1 otherwise. */
int GA_Compare_distr(int g_a, int g_b)
{
    gai_array_t *a = gai_array(g_a, "GA_Compare_distr"), *b = gai_array(g_b, "GA_Compare_distr");
    return rmc_dist_same(a->dist, b->dist) ? 0 : 1;
}

int NGA_Compare_distr(int g_a, int g_b)
{
    return GA_Compare_distr(g_a, g_b);
}
