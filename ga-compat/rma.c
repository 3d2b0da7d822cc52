/* ga-compat: one-sided data movement. Patches (NGA_Put / Get / Acc, their non-blocking, strided
 * and periodic forms) go to the matrix as one strided transfer per block touched; element lists
 * (scatter / gather, strided with skips) as one vector transfer per owner; NGA_Read_inc as one
 * remote fetch-and-add; NGA_Access* give the local block in place.
 *
 * Completion, as GA's: a blocking put or accumulate returns when the caller's buffer may be reused
 * (the data is visible to other processes after GA_Sync / GA_Fence); a get when the data has
 * arrived. The caller's own later gets see its earlier puts. Non-blocking forms complete at
 * NGA_NbWait (or when NGA_NbTest returns 1). Accumulates are atomic per element. */
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <rmc/strided.h>
#include <rmc/gptr.h>
#include <rmc/progress.h>
#include "ga_impl.h"

/* ----------------------------------------------------------------------- patches --- */

int64_t *gai_to64(const int *src, size_t n, int64_t *buf, size_t cap, int64_t **heap)
{
    *heap = NULL;
    if (!src)
        return NULL;
    int64_t *d = buf;
    if (n > cap && !(d = *heap = malloc(sizeof(int64_t) * n)))
        gai_error("GA", "out of memory (%zu indices)", n);
    for (size_t i = 0; i < n; i++)
        d[i] = src[i];
    return d;
}

int64_t gai_patch_count(int ndim, const int64_t l[], const int64_t h[])
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= h[d] > l[d] ? h[d] - l[d] : 0;
    return n;
}

int gai_conforming(int na, const int64_t al[], const int64_t ah[], int nb, const int64_t bl[],
                   const int64_t bh[])
{
    int64_t ea[GA_MAX_DIM], eb[GA_MAX_DIM];
    int ka = 0, kb = 0;
    for (int d = 0; d < na; d++)
        if (ah[d] - al[d] != 1)
            ea[ka++] = ah[d] - al[d];
    for (int d = 0; d < nb; d++)
        if (bh[d] - bl[d] != 1)
            eb[kb++] = bh[d] - bl[d];
    if (ka != kb)
        return 0;
    for (int i = 0; i < ka; i++)
        if (ea[i] != eb[i])
            return 0;
    return 1;
}

int gai_patch_i64(const gai_array_t *a, const int64_t lo[], const int64_t hi[], int64_t l[],
                  int64_t h[], const char *fn)
{
    if (!lo || !hi)
        gai_error(fn, "array '%s': NULL lo or hi", a->name);
    int empty = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (hi[d] < lo[d]) {
            empty = 1;
            continue;
        }
        if (lo[d] < 0 || hi[d] >= a->dims[d])
            gai_error(fn, "array '%s': patch [%lld:%lld] in dimension %d is outside [0:%lld]",
                      a->name, (long long)lo[d], (long long)hi[d], d, (long long)a->dims[d] - 1);
        l[d] = lo[d];
        h[d] = hi[d] + 1;
    }
    return !empty;
}

int gai_patch_int(const gai_array_t *a, const int lo[], const int hi[], int64_t l[], int64_t h[],
                  const char *fn)
{
    if (!lo || !hi)
        gai_error(fn, "array '%s': NULL lo or hi", a->name);
    int64_t l64[GA_MAX_DIM], h64[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        l64[d] = lo[d], h64[d] = hi[d];
    return gai_patch_i64(a, l64, h64, l, h, fn);
}

void gai_ld_int(int ndim, const int ld[], int64_t out[])
{
    for (int d = 0; d < ndim - 1; d++)
        out[d] = ld[d];
}

static void check_ld(const gai_array_t *a, const int64_t l[], const int64_t h[],
                     const int64_t ld[], const char *fn)
{
    if (!ld) /* NULL: a dense buffer of the patch's shape (GA 5.8.2 would dereference it) */
        return;
    for (int d = 0; d + 1 < a->ndim; d++)
        if (ld[d] < h[d + 1] - l[d + 1])
            gai_error(fn, "array '%s': ld[%d] = %lld is smaller than the patch's extent %lld in "
                          "dimension %d",
                      a->name, d, (long long)ld[d], (long long)(h[d + 1] - l[d + 1]), d + 1);
}

void gai_xfer(gai_array_t *a, int op, const int64_t l[], const int64_t h[], void *buf,
              const int64_t ld[], const void *alpha, rmc_request_h *req, const char *fn)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    if (!buf)
        gai_error(fn, "array '%s': NULL buffer", a->name);
    if (op == 'a')
        gai_numeric(a, fn);
    check_ld(a, l, h, ld, fn);
    if (a->has_ghosts) {
        gai_ghost_xfer(a, op, l, h, buf, ld, alpha, req, fn);
        return;
    }
    rmc_status_t st;
    const int64_t *ldp = a->ndim > 1 ? ld : NULL;
    switch (op) {
    case 'p':
        st = req ? rmc_matrix_put_nb(a->m, l, h, buf, ldp, req) : rmc_matrix_put(a->m, l, h, buf, ldp);
        break;
    case 'g':
        st = req ? rmc_matrix_get_nb(a->m, l, h, buf, ldp, req) : rmc_matrix_get(a->m, l, h, buf, ldp);
        break;
    default:
        st = req ? rmc_matrix_acc_nb(a->m, l, h, buf, ldp, alpha, req)
                 : rmc_matrix_acc(a->m, l, h, buf, ldp, alpha);
        break;
    }
    gai_check(st, fn, op == 'p' ? "the put" : op == 'g' ? "the get" : "the accumulate");
}

/* One blocking or non-blocking patch operation from GA's int / int64 arguments. */
static void patch_op(int g_a, int op, const int64_t lo[], const int64_t hi[], void *buf,
                     const int64_t ld[], void *alpha, rmc_request_h *req, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    if (op == 'a' && !alpha)
        gai_error(fn, "array '%s': NULL alpha", a->name);
    if (!gai_patch_i64(a, lo, hi, l, h, fn))
        return;
    int64_t bytes = gai_patch_count(a->ndim, l, h) * (int64_t)a->esz;
    if (op == 'p')
        gai.nput++, gai.bput += (double)bytes;
    else if (op == 'g')
        gai.nget++, gai.bget += (double)bytes;
    else
        gai.nacc++, gai.bacc += (double)bytes;
    gai_xfer(a, op, l, h, buf, ld, alpha, req, fn);
}

static void patch_op_int(int g_a, int op, const int lo[], const int hi[], void *buf,
                         const int ld[], void *alpha, rmc_request_h *req, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!lo || !hi)
        gai_error(fn, "array '%s': NULL lo or hi", a->name);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM], d[GA_MAX_DIM];
    for (int i = 0; i < a->ndim; i++)
        l[i] = lo[i], h[i] = hi[i];
    if (ld)
        gai_ld_int(a->ndim, ld, d);
    patch_op(g_a, op, l, h, buf, ld ? d : NULL, alpha, req, fn);
}

void NGA_Put(int g_a, int lo[], int hi[], void *buf, int ld[])
{
    patch_op_int(g_a, 'p', lo, hi, buf, ld, NULL, NULL, "NGA_Put");
}

void NGA_Get(int g_a, int lo[], int hi[], void *buf, int ld[])
{
    patch_op_int(g_a, 'g', lo, hi, buf, ld, NULL, NULL, "NGA_Get");
}

void NGA_Acc(int g_a, int lo[], int hi[], void *buf, int ld[], void *alpha)
{
    patch_op_int(g_a, 'a', lo, hi, buf, ld, alpha, NULL, "NGA_Acc");
}

void NGA_Put64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[])
{
    patch_op(g_a, 'p', lo, hi, buf, ld, NULL, NULL, "NGA_Put64");
}

void NGA_Get64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[])
{
    patch_op(g_a, 'g', lo, hi, buf, ld, NULL, NULL, "NGA_Get64");
}

void NGA_Acc64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[], void *alpha)
{
    patch_op(g_a, 'a', lo, hi, buf, ld, alpha, NULL, "NGA_Acc64");
}

/* ------------------------------------------------------------- non-blocking handles --- */

#define NB_MAX 4096
static struct {
    rmc_request_h req;
    unsigned gen;
    int used;
} nb[NB_MAX];
static int nb_next, nb_out; /* next slot to try; slots in use */

/* A handle for req: index + NB_MAX * generation (never 0). Completed requests need no slot. */
ga_nbhdl_t gai_nb_new(rmc_request_h req, const char *fn)
{
    if (req == RMC_REQUEST_NULL)
        return 0;
    for (int k = 0; k < NB_MAX; k++) {
        int i = (nb_next + k) % NB_MAX;
        if (!nb[i].used) {
            nb[i].used = 1;
            nb_out++;
            nb[i].req = req;
            nb[i].gen++;
            nb_next = i + 1;
            return (ga_nbhdl_t)i + 1 + (ga_nbhdl_t)NB_MAX * nb[i].gen;
        }
    }
    /* every slot busy: complete this one now (a non-blocking call may complete early) */
    gai_check(rmc_wait(&req), fn, "completing a non-blocking operation");
    return 0;
}

static int nb_slot(ga_nbhdl_t h)
{
    if (h <= 0)
        return -1;
    long i = (long)((h - 1) % NB_MAX);
    unsigned gen = (unsigned)((h - 1 - i) / NB_MAX);
    return nb[i].used && nb[i].gen == gen ? (int)i : -1;
}

rmc_request_h *gai_reqs_add(gai_reqs_t *q, const char *fn)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        rmc_request_h *r = realloc(q->r, sizeof *r * cap);
        if (!r)
            gai_error(fn, "out of memory for the requests of %zu transfers", cap);
        q->r = r;
        q->cap = cap;
    }
    q->r[q->n] = RMC_REQUEST_NULL;
    return &q->r[q->n++];
}

void gai_reqs_wait(gai_reqs_t *q, const char *fn)
{
    if (q->n)
        gai_check(rmc_wait_all(q->r, q->n), fn, "completing the transfers");
    free(q->r);
    *q = (gai_reqs_t){0};
}

/* The step of gai_reqs_handle's request: tests every request of the list it owns, releases it at
 * the end. */
static rmc_status_t reqs_step(void *state, int *done)
{
    gai_reqs_t *q = state;
    rmc_status_t st = RMC_OK;
    *done = 1;
    for (size_t i = 0; i < q->n && st == RMC_OK; i++) {
        int fin = 1;
        if (q->r[i] != RMC_REQUEST_NULL)
            st = rmc_test(&q->r[i], &fin); /* (a failed MPI test leaves it live: waited below) */
        *done &= fin;
    }
    if (st != RMC_OK) {
        rmc_wait_all(q->r, q->n);
        *done = 1;
    }
    if (*done) {
        free(q->r);
        free(q);
    }
    return st;
}

ga_nbhdl_t gai_reqs_handle(gai_reqs_t *q, const char *fn)
{
    size_t n = 0;
    for (size_t i = 0; i < q->n; i++) /* node-local transfers completed at once */
        if (q->r[i] != RMC_REQUEST_NULL)
            q->r[n++] = q->r[i];
    q->n = n;
    gai_reqs_t *own = n ? malloc(sizeof *own) : NULL;
    rmc_request_h r = RMC_REQUEST_NULL;
    if (own) {
        *own = *q;
        if (rmc_request_custom(reqs_step, own, &r) == RMC_OK) {
            *q = (gai_reqs_t){0};
            return gai_nb_new(r, fn);
        }
        free(own);
    }
    gai_reqs_wait(q, fn); /* nothing in flight, or no room for the list: complete now */
    return 0;
}

/* Completes the operation of *nbhandle (a completed or unknown handle: nothing to do). */
void NGA_NbWait(ga_nbhdl_t *nbhandle)
{
    if (!nbhandle)
        gai_error("NGA_NbWait", "NULL handle");
    int i = nb_slot(*nbhandle);
    if (i < 0)
        return;
    gai_check(rmc_wait(&nb[i].req), "NGA_NbWait", "completing the operation");
    nb[i].used = 0;
    nb_out--;
}

/* 1 when the operation of *nbhandle has completed (its buffer may be used), else 0. */
int NGA_NbTest(ga_nbhdl_t *nbhandle)
{
    if (!nbhandle)
        gai_error("NGA_NbTest", "NULL handle");
    int i = nb_slot(*nbhandle);
    if (i < 0)
        return 1;
    int done = 0;
    gai_check(rmc_test(&nb[i].req, &done), "NGA_NbTest", "testing the operation");
    if (done) {
        nb[i].used = 0;
        nb_out--;
    }
    return done;
}

/* Completes every outstanding non-blocking operation (GA_Sync / GA_Fence use it). */
void gai_nb_wait_all(const char *fn)
{
    for (int i = 0; nb_out > 0 && i < NB_MAX; i++)
        if (nb[i].used) {
            gai_check(rmc_wait(&nb[i].req), fn, "completing a non-blocking operation");
            nb[i].used = 0;
            nb_out--;
        }
}

static void nb_op_int(int g_a, int op, int lo[], int hi[], void *buf, int ld[], void *alpha,
                      ga_nbhdl_t *h, const char *fn)
{
    if (!h)
        gai_error(fn, "NULL nbhandle");
    rmc_request_h r = RMC_REQUEST_NULL;
    patch_op_int(g_a, op, lo, hi, buf, ld, alpha, &r, fn);
    *h = gai_nb_new(r, fn);
}

static void nb_op(int g_a, int op, int64_t lo[], int64_t hi[], void *buf, int64_t ld[],
                  void *alpha, ga_nbhdl_t *h, const char *fn)
{
    if (!h)
        gai_error(fn, "NULL nbhandle");
    rmc_request_h r = RMC_REQUEST_NULL;
    patch_op(g_a, op, lo, hi, buf, ld, alpha, &r, fn);
    *h = gai_nb_new(r, fn);
}

void NGA_NbPut(int g_a, int lo[], int hi[], void *buf, int ld[], ga_nbhdl_t *nbhandle)
{
    nb_op_int(g_a, 'p', lo, hi, buf, ld, NULL, nbhandle, "NGA_NbPut");
}

void NGA_NbGet(int g_a, int lo[], int hi[], void *buf, int ld[], ga_nbhdl_t *nbhandle)
{
    nb_op_int(g_a, 'g', lo, hi, buf, ld, NULL, nbhandle, "NGA_NbGet");
}

void NGA_NbAcc(int g_a, int lo[], int hi[], void *buf, int ld[], void *alpha,
               ga_nbhdl_t *nbhandle)
{
    nb_op_int(g_a, 'a', lo, hi, buf, ld, alpha, nbhandle, "NGA_NbAcc");
}

void NGA_NbPut64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[],
                 ga_nbhdl_t *nbhandle)
{
    nb_op(g_a, 'p', lo, hi, buf, ld, NULL, nbhandle, "NGA_NbPut64");
}

void NGA_NbGet64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[],
                 ga_nbhdl_t *nbhandle)
{
    nb_op(g_a, 'g', lo, hi, buf, ld, NULL, nbhandle, "NGA_NbGet64");
}

void NGA_NbAcc64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[], void *alpha,
                 ga_nbhdl_t *nbhandle)
{
    nb_op(g_a, 'a', lo, hi, buf, ld, alpha, nbhandle, "NGA_NbAcc64");
}

/* ------------------------------------------------------------------ element lists --- */

/* The blocks' owners and owner-space base addresses, filled on first use (arrays of at most
 * TCACHE_MAX blocks; larger ones compute every time). */
#define TCACHE_MAX 65536
typedef struct tile_info {
    char *addr;  /* the block's first element in its owner's address space (NULL: not yet) */
    char *local; /* its load/store address here when the owner is on this node */
    int rank;
    int64_t lo[GA_MAX_DIM], ext[GA_MAX_DIM]; /* the storage block's start and extents */
    int64_t llo[GA_MAX_DIM], lhi[GA_MAX_DIM]; /* the logical block [llo, lhi) */
} tile_info_t;
typedef struct tile_cache {
    int64_t last; /* the block of the previous lookup (-1: none) */
    tile_info_t t[];
} tile_cache_t;

void gai_rma_release(gai_array_t *a)
{
    free(a->tcache);
    a->tcache = NULL;
    a->rdi_ok = 0;
}

static void tile_fill(gai_array_t *a, int64_t t, tile_info_t *ti, const char *fn)
{
    int64_t hi[GA_MAX_DIM];
    gai_check(rmc_dist_tile(rmc_matrix_dist(a->m), t, ti->lo, hi, &ti->rank), fn, "rmc_dist_tile");
    for (int d = 0; d < a->ndim; d++)
        ti->ext[d] = hi[d] - ti->lo[d];
    void *addr;
    gai_check(rmc_gptr_addr(rmc_matrix_tile_gptr(a->m, t), &addr), fn, "rmc_gptr_addr");
    void *l = NULL;
    if (rmc_matrix_tile_local(a->m, t, &l) != RMC_OK)
        l = NULL;
    ti->local = l;
    gai_check(rmc_dist_tile(a->dist, t, ti->llo, ti->lhi, NULL), fn, "rmc_dist_tile");
    ti->addr = addr;
}

/* Element idx[]'s owner, owner-space address and (node-local owners) load/store address: the
 * general path (elem_at tries the previous block inline first). */
static __attribute__((noinline)) void elem_at_slow(gai_array_t *a, const int64_t idx[], int *rank,
                                                   char **addr, char **local, const char *fn)
{
    int64_t t, p[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        if (idx[d] < 0 || idx[d] >= a->dims[d])
            gai_error(fn, "array '%s': subscript[%d] = %lld outside [0, %lld)", a->name, d,
                      (long long)idx[d], (long long)a->dims[d]);
    tile_info_t one, *ti = &one;
    tile_cache_t *tc = a->tcache;
    if (!tc && a->nblocks <= TCACHE_MAX) {
        tc = a->tcache = calloc(1, sizeof(tile_cache_t) + (size_t)a->nblocks * sizeof(tile_info_t));
        if (!tc)
            gai_error(fn, "out of memory");
        tc->last = -1;
    }
    int hit = 0;
    if (tc && tc->last >= 0) { /* most lists stay in one block for a while */
        ti = &tc->t[tc->last];
        hit = 1;
        for (int d = 0; d < a->ndim; d++)
            hit &= idx[d] >= ti->llo[d] && idx[d] < ti->lhi[d];
    }
    if (!hit) {
        gai_check(rmc_dist_locate(a->dist, idx, &t, NULL), fn, "rmc_dist_locate");
        if (tc) {
            ti = &tc->t[t];
            if (!ti->addr)
                tile_fill(a, t, ti, fn);
            tc->last = t;
        } else {
            ti = &one;
            tile_fill(a, t, ti, fn);
        }
    }
    memcpy(p, idx, sizeof(int64_t) * (size_t)a->ndim);
    if (a->has_ghosts)
        gai_ghost_index(a, idx, p);
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++)
        off = off * ti->ext[d] + (p[d] - ti->lo[d]);
    off *= (int64_t)a->esz;
    *rank = ti->rank;
    *addr = ti->addr + off;
    if (local)
        *local = ti->local ? ti->local + off : NULL;
}

/* elem_at_slow, with the common case inline: the element lies in the previous lookup's block of
 * an array without ghosts (a block lies inside the array: no bounds check needed). */
static inline __attribute__((always_inline)) void elem_at(gai_array_t *a, const int64_t idx[],
                                                          int *rank, char **addr, char **local,
                                                          const char *fn)
{
    tile_cache_t *tc = a->tcache;
    if (tc && tc->last >= 0 && !a->has_ghosts) {
        const tile_info_t *ti = &tc->t[tc->last];
        int64_t off = 0;
        int in = 1;
        for (int d = 0; d < a->ndim; d++) {
            int64_t x = idx[d];
            in &= (x >= ti->llo[d]) & (x < ti->lhi[d]);
            off = off * ti->ext[d] + (x - ti->lo[d]);
        }
        if (in) {
            off *= (int64_t)a->esz;
            *rank = ti->rank;
            *addr = ti->addr + off;
            if (local)
                *local = ti->local ? ti->local + off : NULL;
            return;
        }
    }
    elem_at_slow(a, idx, rank, addr, local, fn);
}

void gai_elem_addr(gai_array_t *a, const int64_t idx[], int *rank, void **addr, const char *fn)
{
    char *p;
    elem_at(a, idx, rank, &p, NULL, fn);
    *addr = p;
}

/* Scratch arrays of the element-list calls, kept between calls (a list of 10^5 elements needs
 * several MiB: fresh ones cost a page fault per 4 KiB every call); one grown above SC_KEEP is
 * given back after its call. Main thread only, as the calls that use them. */
enum {
    SC_FLAT, SC_CNT, SC_REFS, SC_OWNER, SC_BY, SC_POS, SC_REM, SC_LOC, SC_TMP, SC_GOT, SC_PAY,
    SC_OTILE, SC_SIEVE, SC_N
};
#define SC_KEEP (32u << 20)
static struct {
    void *p;
    size_t cap;
} sc[SC_N];

static void *scratch(int slot, size_t bytes, const char *fn)
{
    if (bytes > sc[slot].cap) {
        free(sc[slot].p);
        sc[slot].cap = 0;
        sc[slot].p = malloc(bytes ? bytes : 1);
        if (!sc[slot].p)
            gai_error(fn, "out of memory for %zu bytes of element-list state", bytes);
        sc[slot].cap = bytes;
    }
    return sc[slot].p;
}

/* Gives back the scratch arrays above SC_KEEP (all == 1: every one). */
static void scratch_trim(int all)
{
    for (int i = 0; i < SC_N; i++)
        if (all || sc[i].cap > SC_KEEP) {
            free(sc[i].p);
            sc[i].p = NULL;
            sc[i].cap = 0;
        }
}

/* One element of a list: its owner-space address and its place in the caller's values. */
typedef struct elem_ref {
    char *remote;
    int64_t i;
} elem_ref_t;

/* The lowest and highest address of refs[0, n) (n >= 1). */
static void refs_range(const elem_ref_t *refs, int64_t n, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t l = (uintptr_t)refs[0].remote, h = l;
    for (int64_t j = 1; j < n; j++) {
        uintptr_t x = (uintptr_t)refs[j].remote;
        l = x < l ? x : l;
        h = x > h ? x : h;
    }
    *lo = l;
    *hi = h;
}

/* Sorts refs[0, n) by address, stably (equal addresses stay in the caller's order): a radix sort
 * over the bits in which the addresses differ, 11 at a time (a list within one block differs in
 * ~20 bits: two passes), the digit counts of up to three passes from one read. tmp: room for n
 * refs. */
static void refs_sort(elem_ref_t *refs, elem_ref_t *tmp, int64_t n)
{
    enum { BITS = 11, NB = 1 << BITS, NP = 3 }; /* NP passes in one histogram read: 33 bits */
    if (n < 2)
        return;
    uintptr_t lo, hi;
    refs_range(refs, n, &lo, &hi);
    uintptr_t span = hi - lo;
    static int64_t hist[NP][NB];
    int64_t *cnt = NULL;
    elem_ref_t *from = refs, *to = tmp;
    for (int shift = 0; shift < (int)(8 * sizeof(uintptr_t)) && (span >> shift); shift += BITS) {
        int pass = shift / BITS;
        if (pass % NP == 0) { /* the histograms of this and the next NP - 1 digits at once */
            memset(hist, 0, sizeof hist);
            for (int64_t j = 0; j < n; j++) {
                uintptr_t x = ((uintptr_t)from[j].remote - lo) >> shift;
                hist[0][x & (NB - 1)]++;
                hist[1][(x >> BITS) & (NB - 1)]++;
                hist[2][(x >> (2 * BITS)) & (NB - 1)]++;
            }
        }
        cnt = hist[pass % NP]; /* (a pass moves elements, not the digit counts) */
        int64_t sum = 0;
        for (int b = 0; b < NB; b++) {
            int64_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (int64_t j = 0; j < n; j++)
            to[cnt[(((uintptr_t)from[j].remote - lo) >> shift) & (NB - 1)]++] = from[j];
        elem_ref_t *t = from;
        from = to;
        to = t;
    }
    if (from != refs)
        memcpy(refs, from, sizeof(elem_ref_t) * (size_t)n);
}

/* One element of es bytes (the element sizes GA has get fixed-size moves). */
static inline void elem_copy(char *d, const char *s, size_t es)
{
    switch (es) {
    case 4:
        memcpy(d, s, 4);
        break;
    case 8:
        memcpy(d, s, 8);
        break;
    case 16:
        memcpy(d, s, 16);
        break;
    default:
        memcpy(d, s, es);
    }
}

/* ------------------------------------------- element lists through active messages --- */

/* Long lists of puts or gets to an owner that is not node-local travel as active messages when
 * ranks run RMC's progress thread, the owner applying them (GA's own runtime does the same): a
 * message carries (address, value) pairs or the addresses whose values come back in the reply. MPI
 * moves such lists as indexed datatypes at ~100-300 ns per element on this MPICH; as messages they
 * cost a copy on each side. Without the thread an owner serves messages only inside RMC calls, and
 * GA programs wait in MPI's own collectives too (MPI_Allreduce on GA_MPI_Comm: a gather to such an
 * owner would hang), so lists then stay RMA. Accumulates stay RMA (their atomicity is MPI's or
 * comm's). */
#define AM_MIN_ELEMS 256 /* fewer elements to one owner: one vector transfer */
#define AM_WINDOW    8   /* messages in flight per list */
enum { AM_PUT = 1, AM_GET = 2 };
typedef struct am_hdr {
    uint32_t op, es;
    uint64_t n; /* then n 8-byte addresses; a put: then n values of es bytes */
} am_hdr_t;

static int am_id = -1;
static int am_ok; /* every rank runs RMC's progress thread (agreed at GA_Initialize) */

/* The owner's side: applies a put list or reads a get list (its addresses are in this rank's
 * blocks: they come from the same block directory RMA uses). */
static rmc_status_t am_serve(int origin, const void *pay, size_t len, void *reply, size_t cap,
                             size_t *rlen, void *arg)
{
    (void)origin, (void)arg;
    am_hdr_t h;
    if (len < sizeof h)
        return RMC_ERR_ARG;
    memcpy(&h, pay, sizeof h);
    size_t es = h.es, n = (size_t)h.n;
    const char *addrs = (const char *)pay + sizeof h, *vals = addrs + 8 * n;
    if (es == 0 || n > len || len != sizeof h + n * (8 + (h.op == AM_PUT ? es : 0)) ||
        (h.op != AM_PUT && (h.op != AM_GET || n * es > cap)))
        return RMC_ERR_ARG;
    enum { AHEAD = 16 }; /* lines prefetched ahead: the list is random */
    for (size_t j = 0; j < n; j++) {
        uint64_t a;
        if (j + AHEAD < n) {
            memcpy(&a, addrs + 8 * (j + AHEAD), 8);
            if (h.op == AM_PUT)
                __builtin_prefetch((const char *)(uintptr_t)a, 1);
            else
                __builtin_prefetch((const char *)(uintptr_t)a, 0);
        }
        memcpy(&a, addrs + 8 * j, 8);
        if (h.op == AM_PUT)
            elem_copy((char *)(uintptr_t)a, vals + j * es, es);
        else
            elem_copy((char *)reply + j * es, (const char *)(uintptr_t)a, es);
    }
    *rlen = h.op == AM_GET ? n * es : 0;
    return RMC_OK;
}

void gai_rma_init(const char *fn)
{
    gai_check(rmc_am_register_layer(am_serve, NULL, &am_id), fn, "rmc_am_register_layer");
    int on = rmc_progress_thread_active() == 1, all = 0;
    MPI_Comm w;
    gai_check(rmc_comm(&w), fn, "rmc_comm");
    if (MPI_Allreduce(&on, &all, 1, MPI_INT, MPI_MIN, w) != MPI_SUCCESS)
        gai_error(fn, "MPI_Allreduce (progress threads) failed");
    am_ok = all;
}

void gai_rma_fini(void)
{
    scratch_trim(1);
    am_ok = 0;
    if (am_id >= 0)
        (void)rmc_am_unregister_layer(am_id);
    am_id = -1;
}

/* Elements of es bytes one message carries for op 'p' or 'g' (0: not even one, e.g. a user type's
 * records of more than a payload). */
static size_t am_per(int op, size_t es)
{
    size_t maxp = rmc_am_max_payload();
    size_t per = (maxp - sizeof(am_hdr_t)) / (8 + (op == 'p' ? es : 0));
    if (op == 'g' && per > maxp / es) /* the reply holds the values */
        per = maxp / es;
    return per;
}

/* by[0, k): one owner's elements in the caller's order; op 'p' or 'g'. Messages in order (an owner
 * handles one origin's messages in issue order: a put's later value for an element wins), at most
 * AM_WINDOW in flight; every one complete at the owner on return. am_per(op, es) >= 1. */
static void am_elems(gai_array_t *a, int op, const elem_ref_t *by, int64_t k, int r, char *v,
                     const char *fn)
{
    size_t es = a->esz, maxp = rmc_am_max_payload(), per = am_per(op, es);
    /* earlier RMA from here to r lands first (this path bypasses comm's ordering) */
    gai_check(rmc_fence(r), fn, "rmc_fence");
    char *pay = scratch(SC_PAY, maxp, fn);
    char *got = op == 'g' ? scratch(SC_GOT, es * (size_t)k, fn) : NULL;
    rmc_request_h rq[AM_WINDOW];
    size_t rl[AM_WINDOW];
    int nq = 0;
    for (int64_t b = 0, m = 0; b < k; b += (int64_t)per, m++) {
        int64_t e = b + (int64_t)per < k ? b + (int64_t)per : k;
        int slot = (int)(m % AM_WINDOW);
        if (nq == AM_WINDOW) { /* the oldest message's slot */
            gai_check(rmc_wait(&rq[slot]), fn, "an element-list message");
            nq--;
        }
        am_hdr_t h = {
            .op = op == 'p' ? AM_PUT : AM_GET, .es = (uint32_t)es, .n = (uint64_t)(e - b)};
        memcpy(pay, &h, sizeof h);
        char *ad = pay + sizeof h, *vl = ad + 8 * (size_t)(e - b);
        for (int64_t j = b; j < e; j++) {
            uint64_t x = (uint64_t)(uintptr_t)by[j].remote;
            memcpy(ad + 8 * (j - b), &x, 8);
            if (op == 'p')
                elem_copy(vl + (size_t)(j - b) * es, v + by[j].i * (int64_t)es, es);
        }
        size_t len = sizeof h + (size_t)(e - b) * (8 + (op == 'p' ? es : 0));
        gai_check(rmc_am_send_nb(r, am_id, pay, len, op == 'g' ? got + (size_t)b * es : NULL,
                                 op == 'g' ? (size_t)(e - b) * es : 0, &rl[slot], &rq[slot]),
                  fn, "rmc_am_send_nb");
        nq++;
    }
    /* the rest, oldest first */
    int64_t nmsg = (k + (int64_t)per - 1) / (int64_t)per;
    for (int64_t m = nmsg - nq; m < nmsg; m++)
        gai_check(rmc_wait(&rq[m % AM_WINDOW]), fn, "an element-list message");
    if (op == 'g')
        for (int64_t j = 0; j < k; j++)
            elem_copy(v + by[j].i * (int64_t)es, got + (size_t)j * es, es);
}

/* A long gather from one block of a remote owner whose elements are dense enough in it (the range
 * from the first to the last at most SIEVE_RATIO times their bytes, and at most SIEVE_MAX bytes)
 * reads that range with one get and picks the elements out of it ("data sieving", as ROMIO does
 * for non-contiguous reads): one contiguous transfer moves GiB/s, an indexed datatype of single
 * elements ~100-300 ns per element on this MPICH. Only reads: a put or accumulate of the range
 * would overwrite or race with the elements the list does not name. Returns 0 (nothing done) when
 * the list is too sparse. */
#define SIEVE_MIN   256
#define SIEVE_RATIO 16
#define SIEVE_MAX   ((size_t)64 << 20)
static int sieve(gai_array_t *a, const elem_ref_t *by, int64_t k, int r, char *v, const char *fn)
{
    size_t es = a->esz;
    uintptr_t lo, hi;
    refs_range(by, k, &lo, &hi);
    size_t span = (size_t)(hi - lo) + es;
    if (span > SIEVE_MAX || span / SIEVE_RATIO > (size_t)k * es)
        return 0;
    char *buf = scratch(SC_SIEVE, span, fn);
    gai_check(rmc_get((const void *)lo, buf, span, r), fn, "rmc_get (a gather's covering range)");
    for (int64_t j = 0; j < k; j++) {
        if (j + 16 < k)
            __builtin_prefetch(buf + ((uintptr_t)by[j + 16].remote - lo), 0);
        elem_copy(v + by[j].i * (int64_t)es, buf + ((uintptr_t)by[j].remote - lo), es);
    }
    return 1;
}

/* k segments of one element, src[i] -> dst[i], to (op 'p', 'a') or from ('g') rank r: one vector
 * transfer per INT_MAX segments (an rmc_iov_t counts in int). */
static void vector_xfer(gai_array_t *a, int op, void **src, void **dst, int64_t k, void *alpha,
                        int r, const char *fn)
{
    for (int64_t o = 0; o < k; o += INT_MAX) {
        rmc_iov_t iov = {.src = src + o,
                         .dst = dst + o,
                         .count = (int)(k - o < INT_MAX ? k - o : INT_MAX),
                         .bytes = a->esz};
        rmc_status_t st = op == 'g'   ? rmc_get_vector(&iov, 1, r)
                          : op == 'p' ? rmc_put_vector(&iov, 1, r)
                                      : rmc_acc_vector((rmc_acc_type_t)a->elem, alpha, &iov, 1, r);
        gai_check(st, fn, "the vector transfer");
    }
}

/* n elements at subs (n x ndim, row i = element i's subscript), to/from v[i]: op 'p', 'g', 'a'.
 * Elements on this node are copied in place (puts and gets); long put and get lists to other owners
 * go as messages (am_elems); the others as one vector transfer per owner: a get as the list is, a
 * put or accumulate with each address once (sorted: a put's last value for an element wins, as if
 * the list were applied in order; an accumulate adds the values for one element first), so no two
 * segments overlap. */
static void elems(gai_array_t *a, int op, const int64_t *subs, int64_t n, void *v, void *alpha,
                  const char *fn)
{
    if (n <= 0)
        return;
    if (!v || !subs)
        gai_error(fn, "array '%s': NULL values or subscripts", a->name);
    if (op == 'a')
        gai_numeric(a, fn);
    if (op == 'a' && !alpha)
        gai_error(fn, "array '%s': NULL alpha", a->name);
    size_t es = a->esz;
    int np = gai.np;
    int64_t *cnt = scratch(SC_CNT, sizeof(int64_t) * ((size_t)np + 1), fn);
    memset(cnt, 0, sizeof(int64_t) * ((size_t)np + 1));
    elem_ref_t *refs = scratch(SC_REFS, sizeof(elem_ref_t) * (size_t)n, fn);
    int *owner = scratch(SC_OWNER, sizeof(int) * (size_t)n, fn);
    /* gathers: the one block each owner's elements lie in (-1: none yet, -2: several or unknown) */
    int64_t *otile = scratch(SC_OTILE, sizeof(int64_t) * (size_t)np, fn);
    for (int r = 0; r < np; r++)
        otile[r] = -1;
    /* locate; node-local puts and gets right away */
    int64_t nremote = 0;
    char *vc = v;
    enum { BATCH = 32 }; /* elements located (and their lines prefetched) before they are copied */
    char *lp[BATCH];
    for (int64_t i0 = 0; i0 < n; i0 += BATCH) {
        int64_t i1 = i0 + BATCH < n ? i0 + BATCH : n;
        for (int64_t i = i0; i < i1; i++) {
            int r;
            char *addr, *local;
            elem_at(a, subs + i * a->ndim, &r, &addr, &local, fn);
            lp[i - i0] = NULL;
            if (local && op != 'a') {
                if (op == 'p')
                    __builtin_prefetch(local, 1);
                else
                    __builtin_prefetch(local, 0);
                lp[i - i0] = local;
                owner[i] = -1;
                continue;
            }
            owner[i] = r;
            if (op == 'g') {
                int64_t tl = a->tcache ? ((tile_cache_t *)a->tcache)->last : -2;
                otile[r] = otile[r] == -1 || otile[r] == tl ? tl : -2;
            }
            refs[i].remote = addr;
            refs[i].i = i;
            cnt[r + 1]++;
            nremote++;
        }
        for (int64_t i = i0; i < i1; i++)
            if (lp[i - i0]) {
                if (op == 'p')
                    elem_copy(lp[i - i0], vc + i * (int64_t)es, es);
                else
                    elem_copy(vc + i * (int64_t)es, lp[i - i0], es);
            }
    }
    if (nremote) {
        /* group by owner (counting sort: each owner's elements stay in the caller's order); a list
         * whose every element one remote owner holds is grouped already */
        int only = -1;
        for (int r = 0; r < np; r++)
            if (cnt[r + 1])
                only = only == -1 ? r : -2;
        for (int r = 0; r < np; r++)
            cnt[r + 1] += cnt[r];
        elem_ref_t *by = scratch(SC_BY, sizeof(elem_ref_t) * (size_t)nremote, fn), *spare = refs;
        if (only >= 0 && nremote == n) {
            spare = by;
            by = refs;
        } else {
            int64_t *pos = scratch(SC_POS, sizeof(int64_t) * (size_t)np, fn);
            memcpy(pos, cnt, sizeof(int64_t) * (size_t)np);
            for (int64_t i = 0; i < n; i++)
                if (owner[i] >= 0)
                    by[pos[owner[i]]++] = refs[i];
        }
        void **rem = scratch(SC_REM, sizeof(void *) * (size_t)nremote, fn);
        void **loc = scratch(SC_LOC, sizeof(void *) * (size_t)nremote, fn);
        char *tmp = scratch(SC_TMP, es * (size_t)nremote, fn);
        for (int r = 0; r < np; r++) {
            int64_t b = cnt[r], e = cnt[r + 1], k = 0;
            if (b == e)
                continue;
            if (op == 'g' && e - b >= SIEVE_MIN && otile[r] >= 0 &&
                sieve(a, by + b, e - b, r, vc, fn))
                continue;
            if (op != 'a' && e - b >= AM_MIN_ELEMS && am_ok && am_per(op, es) > 0) {
                am_elems(a, op, by + b, e - b, r, vc, fn);
                continue;
            }
            if (op == 'g') { /* reading an element twice is harmless: straight into v */
                for (int64_t j = b; j < e; j++) {
                    rem[k] = by[j].remote;
                    loc[k++] = vc + by[j].i * (int64_t)es;
                }
                vector_xfer(a, op, rem, loc, k, alpha, r, fn);
                continue;
            }
            refs_sort(by + b, spare + b, e - b); /* spare: free for use as scratch now */
            /* one entry per distinct address: tmp[k] holds its value */
            for (int64_t j = b; j < e; j++) {
                char *src = vc + by[j].i * (int64_t)es;
                if (j + 16 < e) /* sorted by address, the values are read in random order */
                    __builtin_prefetch(vc + by[j + 16].i * (int64_t)es, 0);
                if (k > 0 && rem[k - 1] == by[j].remote) {
                    if (op == 'p')
                        elem_copy(tmp + (k - 1) * (int64_t)es, src, es); /* the later one wins */
                    else if (op == 'a')
                        gai_elem_add(a->type, tmp + (k - 1) * (int64_t)es, src);
                    continue;
                }
                rem[k] = by[j].remote;
                loc[k] = tmp + k * (int64_t)es;
                elem_copy(loc[k], src, es);
                k++;
            }
            vector_xfer(a, op, loc, rem, k, alpha, r, fn);
        }
    }
    scratch_trim(0);
}

static void elems_ptrs(int g_a, int op, void *v, int *subs[], int64_t *subs64[], int64_t n,
                       void *alpha, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (n <= 0)
        return;
    if (!subs && !subs64)
        gai_error(fn, "array '%s': NULL subscripts", a->name);
    int64_t *flat = scratch(SC_FLAT, sizeof(int64_t) * (size_t)n * (size_t)a->ndim, fn);
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < a->ndim; d++)
            flat[i * a->ndim + d] = subs ? subs[i][d] : subs64[i][d];
    if (op == 'g')
        gai.ngather++;
    else
        gai.nscatter++;
    elems(a, op, flat, n, v, alpha, fn);
}

static void elems_flat(int g_a, int op, void *v, const int *subs, const int64_t *subs64,
                       int64_t n, void *alpha, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (n <= 0)
        return;
    if (subs64) {
        elems(a, op, subs64, n, v, alpha, fn);
        return;
    }
    if (!subs)
        gai_error(fn, "array '%s': NULL subscripts", a->name);
    int64_t *flat = scratch(SC_FLAT, sizeof(int64_t) * (size_t)n * (size_t)a->ndim, fn);
    for (int64_t i = 0; i < n * a->ndim; i++)
        flat[i] = subs[i];
    elems(a, op, flat, n, v, alpha, fn);
}

/* Scatter: v[i] to element subsArray[i]; gather: the reverse; scatter_acc: element += alpha *
 * v[i]. Blocking; atomic per element for the accumulate. */
void NGA_Scatter(int g_a, void *v, int *subsArray[], int n)
{
    elems_ptrs(g_a, 'p', v, subsArray, NULL, n, NULL, "NGA_Scatter");
}

void NGA_Gather(int g_a, void *v, int *subsArray[], int n)
{
    elems_ptrs(g_a, 'g', v, subsArray, NULL, n, NULL, "NGA_Gather");
}

void NGA_Scatter_acc(int g_a, void *v, int *subsArray[], int n, void *alpha)
{
    elems_ptrs(g_a, 'a', v, subsArray, NULL, n, alpha, "NGA_Scatter_acc");
}

void NGA_Scatter64(int g_a, void *v, int64_t *subsArray[], int64_t n)
{
    elems_ptrs(g_a, 'p', v, NULL, subsArray, n, NULL, "NGA_Scatter64");
}

void NGA_Gather64(int g_a, void *v, int64_t *subsArray[], int64_t n)
{
    elems_ptrs(g_a, 'g', v, NULL, subsArray, n, NULL, "NGA_Gather64");
}

void NGA_Scatter_acc64(int g_a, void *v, int64_t *subsArray[], int64_t n, void *alpha)
{
    elems_ptrs(g_a, 'a', v, NULL, subsArray, n, alpha, "NGA_Scatter_acc64");
}

void NGA_Scatter_flat(int g_a, void *v, int subsArray[], int n)
{
    elems_flat(g_a, 'p', v, subsArray, NULL, n, NULL, "NGA_Scatter_flat");
}

void NGA_Gather_flat(int g_a, void *v, int subsArray[], int n)
{
    elems_flat(g_a, 'g', v, subsArray, NULL, n, NULL, "NGA_Gather_flat");
}

void NGA_Scatter_acc_flat(int g_a, void *v, int subsArray[], int n, void *alpha)
{
    elems_flat(g_a, 'a', v, subsArray, NULL, n, alpha, "NGA_Scatter_acc_flat");
}

void NGA_Scatter_flat64(int g_a, void *v, int64_t subsArray[], int64_t n)
{
    elems_flat(g_a, 'p', v, NULL, subsArray, n, NULL, "NGA_Scatter_flat64");
}

void NGA_Gather_flat64(int g_a, void *v, int64_t subsArray[], int64_t n)
{
    elems_flat(g_a, 'g', v, NULL, subsArray, n, NULL, "NGA_Gather_flat64");
}

void NGA_Scatter_acc_flat64(int g_a, void *v, int64_t subsArray[], int64_t n, void *alpha)
{
    elems_flat(g_a, 'a', v, NULL, subsArray, n, alpha, "NGA_Scatter_acc_flat64");
}

/* GA's gather/scatter buffer hints: nothing to preallocate here. */
void NGA_Alloc_gatscat_buf(int nelems)
{
    (void)nelems;
}

void NGA_Free_gatscat_buf(void) {}

/* ---------------------------------------------------------------- strided (skips) --- */

/* Elements lo, lo + skip, ... <= hi in each dimension, packed in buf with leading dimensions ld
 * (in units of the selected elements). All skips 1: the plain patch path. */
static void strided(int g_a, int op, const int64_t lo[], const int64_t hi[], const int64_t skip[],
                    void *buf, const int64_t ld[], void *alpha, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!skip)
        gai_error(fn, "array '%s': NULL skip", a->name);
    if (op == 'a')
        gai_numeric(a, fn);
    int plain = 1;
    int64_t cnt[GA_MAX_DIM], l[GA_MAX_DIM], h[GA_MAX_DIM];
    if (!gai_patch_i64(a, lo, hi, l, h, fn))
        return;
    for (int d = 0; d < a->ndim; d++) {
        if (skip[d] < 1)
            gai_error(fn, "array '%s': skip[%d] = %lld (>= 1)", a->name, d, (long long)skip[d]);
        plain &= skip[d] == 1;
        cnt[d] = (h[d] - l[d] - 1) / skip[d] + 1; /* (the patch is not empty; no overflow) */
    }
    if (a->ndim > 1 && !ld)
        gai_error(fn, "array '%s': NULL ld", a->name);
    for (int d = 0; d + 1 < a->ndim; d++)
        if (ld[d] < cnt[d + 1])
            gai_error(fn, "array '%s': ld[%d] = %lld below the %lld selected elements", a->name,
                      d, (long long)ld[d], (long long)cnt[d + 1]);
    if (plain) {
        gai_xfer(a, op, l, h, buf, ld, alpha, NULL, fn);
        return;
    }
    int64_t n = gai_patch_count(a->ndim, (int64_t[GA_MAX_DIM]){0}, cnt);
    int64_t *subs = malloc(sizeof(int64_t) * (size_t)(n * a->ndim));
    char *vals = malloc((size_t)n * a->esz);
    if (!subs || !vals)
        gai_error(fn, "out of memory");
    int64_t c[GA_MAX_DIM] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int d = 0; d < a->ndim; d++) {
            subs[i * a->ndim + d] = l[d] + c[d] * skip[d];
            off = d == 0 ? c[0] : off * ld[d - 1] + c[d];
        }
        if (op != 'g')
            memcpy(vals + i * (int64_t)a->esz, (char *)buf + off * (int64_t)a->esz, a->esz);
        for (int d = a->ndim - 1; d >= 0 && ++c[d] == cnt[d]; d--)
            c[d] = 0;
    }
    elems(a, op, subs, n, vals, alpha, fn);
    if (op == 'g') {
        memset(c, 0, sizeof c);
        for (int64_t i = 0; i < n; i++) {
            int64_t off = 0;
            for (int d = 0; d < a->ndim; d++)
                off = d == 0 ? c[0] : off * ld[d - 1] + c[d];
            memcpy((char *)buf + off * (int64_t)a->esz, vals + i * (int64_t)a->esz, a->esz);
            for (int d = a->ndim - 1; d >= 0 && ++c[d] == cnt[d]; d--)
                c[d] = 0;
        }
    }
    free(subs);
    free(vals);
}

static void strided_int(int g_a, int op, int lo[], int hi[], int skip[], void *buf, int ld[],
                        void *alpha, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!lo || !hi || !skip)
        gai_error(fn, "array '%s': NULL lo, hi or skip", a->name);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM], s[GA_MAX_DIM], d[GA_MAX_DIM];
    for (int i = 0; i < a->ndim; i++)
        l[i] = lo[i], h[i] = hi[i], s[i] = skip[i];
    if (ld)
        gai_ld_int(a->ndim, ld, d);
    strided(g_a, op, l, h, s, buf, ld ? d : NULL, alpha, fn);
}

void NGA_Strided_put(int g_a, int lo[], int hi[], int skip[], void *buf, int ld[])
{
    strided_int(g_a, 'p', lo, hi, skip, buf, ld, NULL, "NGA_Strided_put");
}

void NGA_Strided_get(int g_a, int lo[], int hi[], int skip[], void *buf, int ld[])
{
    strided_int(g_a, 'g', lo, hi, skip, buf, ld, NULL, "NGA_Strided_get");
}

void NGA_Strided_acc(int g_a, int lo[], int hi[], int skip[], void *buf, int ld[], void *alpha)
{
    if (!alpha)
        gai_error("NGA_Strided_acc", "NULL alpha");
    strided_int(g_a, 'a', lo, hi, skip, buf, ld, alpha, "NGA_Strided_acc");
}

void NGA_Strided_put64(int g_a, int64_t lo[], int64_t hi[], int64_t skip[], void *buf,
                       int64_t ld[])
{
    strided(g_a, 'p', lo, hi, skip, buf, ld, NULL, "NGA_Strided_put64");
}

void NGA_Strided_get64(int g_a, int64_t lo[], int64_t hi[], int64_t skip[], void *buf,
                       int64_t ld[])
{
    strided(g_a, 'g', lo, hi, skip, buf, ld, NULL, "NGA_Strided_get64");
}

void NGA_Strided_acc64(int g_a, int64_t lo[], int64_t hi[], int64_t skip[], void *buf,
                       int64_t ld[], void *alpha)
{
    if (!alpha)
        gai_error("NGA_Strided_acc64", "NULL alpha");
    strided(g_a, 'a', lo, hi, skip, buf, ld, alpha, "NGA_Strided_acc64");
}

/* ---------------------------------------------------------------------- periodic --- */

/* Patch [lo, hi] with indices taken modulo the dimensions (lo may be negative, hi beyond the
 * end; each extent at most the dimension): split into the pieces that do not wrap. */
static void periodic_rec(gai_array_t *a, int op, int d, int64_t l[], int64_t h[], char *buf,
                         const int64_t ld[], void *alpha, const int64_t lo0[], const char *fn)
{
    if (d == a->ndim) {
        /* the piece's place in the buffer: its start relative to the patch's start */
        int64_t ml[GA_MAX_DIM], mh[GA_MAX_DIM], boff = 0;
        for (int e = 0; e < a->ndim; e++) {
            int64_t s = l[e] - lo0[e];
            boff = e == 0 ? s : boff * ld[e - 1] + s;
            int64_t shift = ((l[e] % a->dims[e]) + a->dims[e]) % a->dims[e] - l[e];
            ml[e] = l[e] + shift;
            mh[e] = h[e] + shift;
        }
        gai_xfer(a, op, ml, mh, buf + boff * (int64_t)a->esz, ld, alpha, NULL, fn);
        return;
    }
    int64_t L = l[d], H = h[d];
    int64_t n = a->dims[d];
    /* pieces between multiples of n */
    int64_t s = L;
    while (s < H) {
        int64_t k = s >= 0 ? s / n : -((-s + n - 1) / n); /* floor(s / n) */
        int64_t e = (k + 1) * n < H ? (k + 1) * n : H;
        l[d] = s;
        h[d] = e;
        periodic_rec(a, op, d + 1, l, h, buf, ld, alpha, lo0, fn);
        s = e;
    }
    l[d] = L;
    h[d] = H;
}

static void periodic(int g_a, int op, const int64_t lo[], const int64_t hi[], void *buf,
                     const int64_t ld[], void *alpha, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!lo || !hi || !buf)
        gai_error(fn, "array '%s': NULL lo, hi or buffer", a->name);
    if (op == 'a' && !alpha)
        gai_error(fn, "array '%s': NULL alpha", a->name);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++) {
        if (hi[d] < lo[d])
            return;
        l[d] = lo[d]; /* (wider than the array: elements recur, as in GA) */
        h[d] = hi[d] + 1;
    }
    check_ld(a, l, h, ld, fn);
    int64_t dense[GA_MAX_DIM]; /* NULL ld: the whole patch's shape (each piece is a part of it) */
    if (!ld) {
        for (int d = 0; d + 1 < a->ndim; d++)
            dense[d] = h[d + 1] - l[d + 1];
        ld = dense;
    }
    periodic_rec(a, op, 0, l, h, buf, ld, alpha, lo, fn);
}

static void periodic_int(int g_a, int op, int lo[], int hi[], void *buf, int ld[], void *alpha,
                         const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!lo || !hi)
        gai_error(fn, "array '%s': NULL lo or hi", a->name);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM], d[GA_MAX_DIM];
    for (int i = 0; i < a->ndim; i++)
        l[i] = lo[i], h[i] = hi[i];
    if (ld)
        gai_ld_int(a->ndim, ld, d);
    periodic(g_a, op, l, h, buf, ld ? d : NULL, alpha, fn);
}

void NGA_Periodic_put(int g_a, int lo[], int hi[], void *buf, int ld[])
{
    periodic_int(g_a, 'p', lo, hi, buf, ld, NULL, "NGA_Periodic_put");
}

void NGA_Periodic_get(int g_a, int lo[], int hi[], void *buf, int ld[])
{
    periodic_int(g_a, 'g', lo, hi, buf, ld, NULL, "NGA_Periodic_get");
}

void NGA_Periodic_acc(int g_a, int lo[], int hi[], void *buf, int ld[], void *alpha)
{
    periodic_int(g_a, 'a', lo, hi, buf, ld, alpha, "NGA_Periodic_acc");
}

void NGA_Periodic_put64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[])
{
    periodic(g_a, 'p', lo, hi, buf, ld, NULL, "NGA_Periodic_put64");
}

void NGA_Periodic_get64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[])
{
    periodic(g_a, 'g', lo, hi, buf, ld, NULL, "NGA_Periodic_get64");
}

void NGA_Periodic_acc64(int g_a, int64_t lo[], int64_t hi[], void *buf, int64_t ld[],
                        void *alpha)
{
    periodic(g_a, 'a', lo, hi, buf, ld, alpha, "NGA_Periodic_acc64");
}

/* --------------------------------------------------------------------- read_inc --- */

static long read_inc(int g_a, const int64_t sub[], long inc, const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!sub)
        gai_error(fn, "array '%s': NULL subscript", a->name);
    if (a->type != C_INT && a->type != C_LONG && a->type != C_LONGLONG)
        gai_error(fn, "array '%s' is of type %s: NGA_Read_inc needs C_INT, C_LONG or C_LONGLONG",
                  a->name, gai_type_name(a->type));
    int r;
    void *addr;
    if (a->rdi_ok && !memcmp(a->rdi_idx, sub, sizeof(int64_t) * (size_t)a->ndim)) {
        r = a->rdi_rank; /* the task counter's element again */
        addr = a->rdi_addr;
    } else {
        gai_elem_addr(a, sub, &r, &addr, fn);
        memcpy(a->rdi_idx, sub, sizeof(int64_t) * (size_t)a->ndim);
        a->rdi_rank = r;
        a->rdi_addr = addr;
        a->rdi_ok = 1;
    }
    gai.nrdi++;
    if (a->elem == RMC_ELEM_I32) {
        int32_t old;
        gai_check(rmc_amo_fetch_add_i32(addr, (int32_t)inc, &old, r), fn, "the fetch-and-add");
        return old;
    }
    int64_t old;
    gai_check(rmc_amo_fetch_add_i64(addr, (int64_t)inc, &old, r), fn, "the fetch-and-add");
    return (long)old;
}

/* Atomically adds inc to an integer element and returns its previous value (GA's task counter).
 * Atomic with every other NGA_Read_inc on the element (not with puts or accumulates). */
long NGA_Read_inc(int g_a, int subscript[], long inc)
{
    gai_array_t *a = gai_array(g_a, "NGA_Read_inc");
    if (!subscript)
        gai_error("NGA_Read_inc", "NULL subscript");
    int64_t s[GA_MAX_DIM];
    for (int d = 0; d < a->ndim; d++)
        s[d] = subscript[d];
    return read_inc(g_a, s, inc, "NGA_Read_inc");
}

long NGA_Read_inc64(int g_a, int64_t subscript[], long inc)
{
    return read_inc(g_a, subscript, inc, "NGA_Read_inc64");
}

/* ----------------------------------------------------------------------- access --- */

void *gai_block_ptr(gai_array_t *a, int64_t t, int64_t ld[])
{
    void *p = NULL;
    if (rmc_matrix_tile_local(a->m, t, &p) != RMC_OK || !p)
        return NULL;
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
    rmc_dist_tile(rmc_matrix_dist(a->m), t, lo, hi, NULL);
    if (ld)
        for (int d = 0; d + 1 < a->ndim; d++)
            ld[d] = hi[d + 1] - lo[d + 1];
    if (a->has_ghosts) {
        int64_t off = 0;
        for (int d = 0; d < a->ndim; d++)
            off = off * (hi[d] - lo[d]) + a->width[d];
        p = (char *)p + off * (int64_t)a->esz;
    }
    return p;
}

/* Pointer to element lo of a patch inside one block this rank owns, and the block's leading
 * dimensions. */
static void access64(int g_a, const int64_t lo[], const int64_t hi[], void *ptr, int64_t ld[],
                     const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM];
    if (!ptr)
        gai_error(fn, "array '%s': NULL ptr", a->name);
    if (!gai_patch_i64(a, lo, hi, l, h, fn)) {
        *(void **)ptr = NULL;
        return;
    }
    int64_t t, bl[GA_MAX_DIM], bh[GA_MAX_DIM];
    int owner;
    gai_check(rmc_dist_locate(a->dist, l, &t, &owner), fn, "rmc_dist_locate");
    rmc_dist_tile(a->dist, t, bl, bh, NULL);
    for (int d = 0; d < a->ndim; d++)
        if (h[d] > bh[d])
            gai_error(fn, "array '%s': the patch spans more than one block (dimension %d: "
                          "[%lld, %lld] beyond the block's end %lld)",
                      a->name, d, (long long)l[d], (long long)h[d] - 1, (long long)bh[d] - 1);
    if (owner != gai.me)
        gai_error(fn, "array '%s': the patch is owned by process %d, not by this process %d",
                  a->name, owner, gai.me);
    int64_t bld[GA_MAX_DIM];
    char *p = gai_block_ptr(a, t, bld);
    if (!p)
        gai_error(fn, "array '%s': the block is not addressable here", a->name);
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++)
        off = d == 0 ? l[0] - bl[0] : off * bld[d - 1] + (l[d] - bl[d]);
    *(void **)ptr = p + off * (int64_t)a->esz;
    for (int d = 0; d + 1 < a->ndim; d++)
        ld[d] = bld[d];
}

void NGA_Access64(int g_a, int64_t lo[], int64_t hi[], void *ptr, int64_t ld[])
{
    access64(g_a, lo, hi, ptr, ld, "NGA_Access64");
}

void NGA_Access(int g_a, int lo[], int hi[], void *ptr, int ld[])
{
    const char *fn = "NGA_Access";
    gai_array_t *a = gai_array(g_a, fn);
    if (!lo || !hi)
        gai_error(fn, "array '%s': NULL lo or hi", a->name);
    int64_t l[GA_MAX_DIM], h[GA_MAX_DIM], d[GA_MAX_DIM];
    for (int i = 0; i < a->ndim; i++)
        l[i] = lo[i], h[i] = hi[i];
    access64(g_a, l, h, ptr, d, fn);
    for (int i = 0; i + 1 < a->ndim; i++)
        ld[i] = (int)d[i];
}

/* Block idx (block-cyclic numbering: row-major over the block grid) owned by this rank. */
static void access_block64(int g_a, int64_t idx, void *ptr, int64_t ld[], const char *fn)
{
    gai_array_t *a = gai_array(g_a, fn);
    if (!ptr)
        gai_error(fn, "array '%s': NULL ptr", a->name);
    if (idx < 0 || idx >= a->nblocks)
        gai_error(fn, "array '%s': block %lld outside [0, %lld)", a->name, (long long)idx,
                  (long long)a->nblocks);
    int owner;
    int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
    rmc_dist_tile(a->dist, idx, lo, hi, &owner);
    if (owner != gai.me)
        gai_error(fn, "array '%s': block %lld belongs to process %d", a->name, (long long)idx,
                  owner);
    *(void **)ptr = gai_block_ptr(a, idx, ld);
}

void NGA_Access_block64(int g_a, int64_t idx, void *ptr, int64_t ld[])
{
    access_block64(g_a, idx, ptr, ld, "NGA_Access_block64");
}

void NGA_Access_block(int g_a, int idx, void *ptr, int ld[])
{
    int64_t d[GA_MAX_DIM];
    access_block64(g_a, idx, ptr, d, "NGA_Access_block");
    gai_array_t *a = gai_array(g_a, "NGA_Access_block");
    for (int i = 0; i + 1 < a->ndim; i++)
        ld[i] = (int)d[i];
}

void NGA_Access_block_grid64(int g_a, int64_t index[], void *ptr, int64_t ld[])
{
    const char *fn = "NGA_Access_block_grid";
    gai_array_t *a = gai_array(g_a, fn);
    if (!index)
        gai_error(fn, "NULL index");
    for (int d = 0; d < a->ndim; d++)
        if (index[d] < 0 || index[d] >= a->block_grid[d])
            gai_error(fn, "array '%s': index[%d] = %lld outside the block grid [0, %lld)",
                      a->name, d, (long long)index[d], (long long)a->block_grid[d]);
    access_block64(g_a, rmc_dist_tile_index(a->dist, index), ptr, ld, fn);
}

void NGA_Access_block_grid(int g_a, int index[], void *ptr, int ld[])
{
    gai_array_t *a = gai_array(g_a, "NGA_Access_block_grid");
    if (!index)
        gai_error("NGA_Access_block_grid", "NULL index");
    int64_t ix[GA_MAX_DIM], d[GA_MAX_DIM];
    for (int i = 0; i < a->ndim; i++)
        ix[i] = index[i];
    NGA_Access_block_grid64(g_a, ix, ptr, d);
    for (int i = 0; i + 1 < a->ndim; i++)
        ld[i] = (int)d[i];
}

/* All of process proc's data as one segment: its first block's address and the number of
 * elements it holds (this rank's own only: proc is its id in the array's group; with ghost cells
 * the padded block). A block-cyclic
 * array's blocks follow each other in the order of their block index (GA 5.8.2 keeps a
 * ScaLAPACK-style array as one local matrix, rows of the local blocks side by side). */
void NGA_Access_block_segment64(int g_a, int proc, void *ptr, int64_t *len)
{
    const char *fn = "NGA_Access_block_segment";
    gai_array_t *a = gai_array(g_a, fn);
    if (!ptr || !len)
        gai_error(fn, "NULL ptr or len");
    /* proc is an id in the array's group (as NGA_Distribution's), whatever the default group */
    gai_group_t *g = gai_group(a->pgroup, fn);
    if (proc < 0 || proc >= g->size)
        gai_error(fn, "array '%s': process %d outside its group's [0, %d)", a->name, proc, g->size);
    if (g->ranks[proc] != gai.me)
        gai_error(fn,
                  "array '%s': process %d's segment is not this process's (%d in the array's "
                  "group)",
                  a->name, proc, g->me);
    if (a->has_ghosts) { /* the block with its ghost cells, as GA gives it */
        int64_t pd[GA_MAX_DIM], ld[GA_MAX_DIM];
        NGA_Access_ghosts64(g_a, pd, ptr, ld);
        *len = *(void **)ptr ? gai_patch_count(a->ndim, (int64_t[GA_MAX_DIM]){0}, pd) : 0;
        return;
    }
    int64_t n = 0, t;
    rmc_dist_owned(a->dist, gai.me, &t, 1, &n);
    *(void **)ptr = NULL;
    *len = 0;
    if (!n)
        return;
    int64_t *ts = malloc(sizeof(int64_t) * (size_t)n);
    if (!ts)
        gai_error(fn, "out of memory");
    rmc_dist_owned(a->dist, gai.me, ts, n, &n);
    *(void **)ptr = gai_block_ptr(a, ts[0], NULL);
    char *expect = *(char **)ptr;
    for (int64_t i = 0; i < n; i++) {
        int64_t lo[GA_MAX_DIM], hi[GA_MAX_DIM];
        rmc_dist_tile(a->dist, ts[i], lo, hi, NULL);
        if (gai_block_ptr(a, ts[i], NULL) != expect)
            gai_error(fn, "array '%s': this process's blocks are not one contiguous segment",
                      a->name);
        int64_t c = gai_patch_count(a->ndim, lo, hi);
        *len += c;
        expect += c * (int64_t)a->esz;
    }
    free(ts);
}

void NGA_Access_block_segment(int g_a, int proc, void *ptr, int *len)
{
    int64_t l = 0;
    NGA_Access_block_segment64(g_a, proc, ptr, &l);
    *len = (int)l;
}

/* Releases end an access; the data was changed in place, so there is nothing to write back. */
void NGA_Release(int g_a, int lo[], int hi[])
{
    (void)gai_array(g_a, "NGA_Release");
    (void)lo;
    (void)hi;
}

void NGA_Release64(int g_a, int64_t lo[], int64_t hi[])
{
    NGA_Release(g_a, NULL, NULL);
    (void)lo;
    (void)hi;
}

void NGA_Release_update(int g_a, int lo[], int hi[])
{
    NGA_Release(g_a, lo, hi);
}

void NGA_Release_update64(int g_a, int64_t lo[], int64_t hi[])
{
    NGA_Release64(g_a, lo, hi);
}

void NGA_Release_block(int g_a, int idx)
{
    (void)gai_array(g_a, "NGA_Release_block");
    (void)idx;
}

void NGA_Release_update_block(int g_a, int idx)
{
    NGA_Release_block(g_a, idx);
}

void NGA_Release_block_grid(int g_a, int index[])
{
    (void)gai_array(g_a, "NGA_Release_block_grid");
    (void)index;
}

void NGA_Release_update_block_grid(int g_a, int index[])
{
    NGA_Release_block_grid(g_a, index);
}

void NGA_Release_block_segment(int g_a, int idx)
{
    (void)gai_array(g_a, "NGA_Release_block_segment");
    (void)idx;
}

void NGA_Release_update_block_segment(int g_a, int idx)
{
    NGA_Release_block_segment(g_a, idx);
}
