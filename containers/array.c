/* Arrays: hosted by one rank (BCL's Array) or block-distributed (BCL's DArray). Each owner's part
 * is one allocation in its segment; a range is moved as one transfer per owner it spans. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <rmc/array.h>
#include "ct.h"

struct rmc_array {
    rmcc_obj_t obj;
    uint64_t id; /* equal on every rank: the collectives' argument check */
    size_t n;    /* elements */
    const rmc_type_t *type;
    size_t slot;    /* bytes per element in global memory */
    int direct;     /* byte-copied type whose slot is the element: no packing */
    int host;       /* >= 0: hosted; RMC_ARRAY_BLOCK: block-distributed */
    size_t blk;     /* elements per rank (block) */
    uint64_t *offs; /* [nranks] each owner's part in its segment */
    char *buf;      /* scratch of blocking operations (packed slots) */
    size_t bufcap;
};

static uint64_t next_id;

static void a_release(rmcc_obj_t *o)
{
    struct rmc_array *a = (struct rmc_array *)o;
    free(a->offs);
    free(a->buf);
    a->offs = NULL;
    a->buf = NULL;
}

static rmc_status_t check(const struct rmc_array *a, const char *fn)
{
    return rmcc_obj_check(a ? &a->obj : NULL, RMCC_MAGIC_ARRAY, "array", fn);
}

static inline int owner_of(const struct rmc_array *a, size_t i)
{
    return a->host >= 0 ? a->host : (int)(i / a->blk);
}

/* [first, first+count) of rank r's part. */
static void part(const struct rmc_array *a, int r, size_t *first, size_t *count)
{
    if (a->host >= 0) {
        *first = 0;
        *count = r == a->host ? a->n : 0;
        return;
    }
    size_t f = (size_t)r * a->blk;
    *first = f < a->n ? f : a->n;
    *count = f < a->n ? (a->n - f < a->blk ? a->n - f : a->blk) : 0;
}

static inline char *slot_addr(const struct rmc_array *a, size_t i)
{
    int r = owner_of(a, i);
    size_t first, count;
    part(a, r, &first, &count);
    return (char *)rmcc_addr(r, a->offs[r]) + (i - first) * a->slot;
}

rmc_status_t rmc_array_create(size_t n, const rmc_type_t *type, int host, rmc_array_h *ap)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (ap)
        *ap = NULL;
    RMCC_CHECK_UP(fn);
    rmc_status_t st = RMC_OK;
    if (!ap)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if (n == 0 || n > ((size_t)1 << 48)) /* (above the limit: a size, TOO_BIG) */
        st = rmcc_fail(n ? RMC_ERR_TOO_BIG : RMC_ERR_ARG, fn, "n = %zu elements (1 .. 2^48)", n);
    else if (host != RMC_ARRAY_BLOCK && (host < 0 || host >= rmcc.nranks))
        st = rmcc_fail(RMC_ERR_RANK, fn,
                       "host rank %d outside [0, %d) (RMC_ARRAY_BLOCK: "
                       "distributed)",
                       host, rmcc.nranks);
    else if ((st = rmcc_type_check(type, fn)) == RMC_OK &&
             n > SIZE_MAX / rmc_type_slot_bytes(type)) /* (every range's bytes fit then) */
        st = rmcc_fail(RMC_ERR_TOO_BIG, fn, "%zu elements of %zu bytes overflow a size_t", n,
                       rmc_type_slot_bytes(type));
    uint64_t args[3] = {n, (uint64_t)(int64_t)host, next_id};
    st = rmcc_create_begin(fn, args, 3, type, st);
    if (st != RMC_OK)
        return st;
    struct rmc_array *a = calloc(1, sizeof(*a));
    if (a)
        a->offs = calloc((size_t)rmcc.nranks, sizeof(uint64_t));
    st = (a && a->offs) ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "array handle");
    if (st == RMC_OK) {
        a->id = next_id;
        a->n = n;
        a->type = type;
        a->slot = rmc_type_slot_bytes(type);
        a->direct = !type->max_bytes && a->slot == type->size;
        a->host = host;
        a->blk = host >= 0 ? n : (n + (size_t)rmcc.nranks - 1) / (size_t)rmcc.nranks;
    }
    /* every owner allocates its part; the offsets (and failures) are exchanged */
    rmc_status_t mine = st;
    uint64_t off = 0;
    size_t first = 0, count = 0;
    if (st == RMC_OK) {
        part(a, rmcc.rank, &first, &count);
        if (count)
            mine = rmcc_alloc_off(count * a->slot, &off, fn);
    }
    rmc_status_t s2 = rmcc_exchange_parts(mine, off, a ? a->offs : NULL, fn);
    next_id++;
    if (s2 == RMC_OK) {
        rmcc_obj_add(&a->obj, RMCC_MAGIC_ARRAY, a_release);
        *ap = a;
        return RMC_OK;
    }
    if (mine == RMC_OK && count)
        rmcc_free_off(off, fn);
    if (a)
        free(a->offs);
    free(a);
    return s2;
}

rmc_status_t rmc_array_destroy(rmc_array_h a)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st, b;
    if ((st = rmcc_destroy_begin(a ? &a->obj : NULL, RMCC_MAGIC_ARRAY, "array", a ? a->id : 0, &b,
                                 fn)) != RMC_OK)
        return st;
    st = b;
    size_t first, count;
    part(a, rmcc.rank, &first, &count);
    if (count) {
        rmc_status_t s = rmcc_free_off(a->offs[rmcc.rank], fn);
        if (st == RMC_OK)
            st = s;
    }
    rmcc_obj_kill(&a->obj);
    return st;
}

size_t rmc_array_size(rmc_array_h a)
{
    return check(a, __func__) == RMC_OK ? a->n : 0;
}

int rmc_array_owner(rmc_array_h a, size_t i)
{
    if (check(a, __func__) != RMC_OK)
        return -1;
    if (i >= a->n) {
        rmcc_fail(RMC_ERR_BOUNDS, __func__, "index %zu of an array of %zu", i, a->n);
        return -1;
    }
    return owner_of(a, i);
}

rmc_status_t rmc_array_local(rmc_array_h a, size_t *first, size_t *count, void **slots)
{
    rmc_status_t st = check(a, __func__);
    if (st != RMC_OK)
        return st;
    if (!first || !count || !slots)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL result pointer");
    part(a, rmcc.rank, first, count);
    *slots = *count ? rmcc.lbase[rmcc.rank] + a->offs[rmcc.rank] : NULL;
    return RMC_OK;
}

/* ------------------------------------------------------------------------- transfers --- */

/* A transfer of elements [first, first+n): the requests of its per-owner pieces, and what to do
 * when they complete (a get of a serialized type unpacks). */
typedef struct xfer {
    const struct rmc_array *a;
    int get;
    size_t n, nreq;
    char *slots; /* packed slots (owned) or NULL */
    void *out;   /* get: the caller's elements */
    const char *fn;
    rmc_request_h req[];
} xfer_t;

static rmc_status_t range_check(const struct rmc_array *a, const void *elems, size_t first,
                                size_t n, const char *fn)
{
    rmc_status_t st = check(a, fn);
    if (RMCC_UNLIKELY(st != RMC_OK))
        return st;
    if (RMCC_UNLIKELY(!elems))
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL element pointer");
    if (RMCC_UNLIKELY(n == 0))
        return rmcc_fail(RMC_ERR_ARG, fn, "0 elements");
    if (RMCC_UNLIKELY(first >= a->n || n > a->n - first))
        return rmcc_fail(RMC_ERR_BOUNDS, fn, "elements [%zu, +%zu) of an array of %zu", first, n,
                         a->n);
    return RMC_OK;
}

/* Issues the per-owner pieces of [first, first+n) from / to `local` (n slots). With reqs, each
 * piece's request goes to reqs[k] (*nreq of them); else the pieces are blocking. */
static rmc_status_t pieces(const struct rmc_array *a, int get, size_t first, size_t n, char *local,
                           rmc_request_h *reqs, size_t *nreq)
{
    size_t done = 0;
    rmc_status_t st = RMC_OK;
    if (nreq)
        *nreq = 0;
    while (done < n && st == RMC_OK) {
        size_t i = first + done;
        int r = owner_of(a, i);
        size_t pf, pc;
        part(a, r, &pf, &pc);
        size_t k = pf + pc - i < n - done ? pf + pc - i : n - done;
        char *remote = slot_addr(a, i), *l = local + done * a->slot;
        size_t bytes = k * a->slot;
        if (reqs) {
            rmc_request_h *q = &reqs[(*nreq)++];
            st = get ? rmc_get_nb(remote, l, bytes, r, q) : rmc_put_nb(l, remote, bytes, r, q);
        } else {
            st = get ? rmc_get(remote, l, bytes, r) : rmc_put(l, remote, bytes, r);
        }
        done += k;
    }
    return st;
}

/* Blocking put / get of [first, first+n). */
static rmc_status_t blocking(struct rmc_array *a, int get, size_t first, size_t n, void *elems,
                             const char *fn)
{
    rmc_status_t st = range_check(a, elems, first, n, fn);
    if (st != RMC_OK)
        return st;
    if (a->direct) {
        st = pieces(a, get, first, n, elems, NULL, NULL);
        return RMCC_LIKELY(st == RMC_OK) ? st : rmc_error_in(st, fn);
    }
    if ((st = rmcc_scratch(&a->buf, &a->bufcap, n * a->slot, fn)) != RMC_OK)
        return st;
    if (!get && (st = rmcc_pack_n(a->type, elems, n, a->buf, a->slot, fn)) != RMC_OK)
        return st;
    st = pieces(a, get, first, n, a->buf, NULL, NULL);
    if (st == RMC_OK && get)
        st = rmcc_unpack_n(a->type, a->buf, a->slot, elems, n, fn);
    return st == RMC_OK ? st : rmc_error_in(st, fn);
}

rmc_status_t rmc_array_put(rmc_array_h a, size_t i, const void *elem)
{
    RMCC_SERIAL();
    return blocking(a, 0, i, 1, (void *)elem, __func__);
}

rmc_status_t rmc_array_get(rmc_array_h a, size_t i, void *elem)
{
    RMCC_SERIAL();
    return blocking(a, 1, i, 1, elem, __func__);
}

rmc_status_t rmc_array_put_range(rmc_array_h a, size_t first, size_t n, const void *elems)
{
    RMCC_SERIAL();
    return blocking(a, 0, first, n, (void *)elems, __func__);
}

rmc_status_t rmc_array_get_range(rmc_array_h a, size_t first, size_t n, void *elems)
{
    RMCC_SERIAL();
    return blocking(a, 1, first, n, elems, __func__);
}

/* The custom request of an _nb transfer: tests its pieces; at the end unpacks and frees. */
static rmc_status_t xfer_step(void *state, int *done)
{
    xfer_t *x = state;
    rmc_status_t st = RMC_OK;
    *done = 1;
    for (size_t k = 0; k < x->nreq && st == RMC_OK; k++) {
        int fin = 1;
        if (x->req[k])
            st = rmc_test(&x->req[k], &fin);
        if (!fin)
            *done = 0;
    }
    if (st != RMC_OK) { /* nothing may stay outstanding */
        for (size_t k = 0; k < x->nreq; k++)
            if (x->req[k])
                rmc_wait(&x->req[k]);
    } else if (!*done) {
        return RMC_OK;
    } else if (x->get && x->slots) {
        st = rmcc_unpack_n(x->a->type, x->slots, x->a->slot, x->out, x->n, x->fn);
    }
    *done = 1;
    free(x->slots);
    free(x);
    return st;
}

static rmc_status_t nonblocking(struct rmc_array *a, int get, size_t first, size_t n, void *elems,
                                rmc_request_h *req, const char *fn)
{
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL request pointer");
    *req = RMC_REQUEST_NULL;
    rmc_status_t st = range_check(a, elems, first, n, fn);
    if (st != RMC_OK)
        return st;
    size_t owners = a->host >= 0 ? 1 : (size_t)rmcc.nranks;
    xfer_t *x = calloc(1, sizeof(*x) + owners * sizeof(rmc_request_h));
    if (!x)
        return rmcc_fail(RMC_ERR_NOMEM, fn, "a request");
    *x = (xfer_t){.a = a, .get = get, .n = n, .out = elems, .fn = fn};
    if (!a->direct) {
        x->slots = malloc(n * a->slot);
        st = x->slots ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes", n * a->slot);
        if (st == RMC_OK && !get)
            st = rmcc_pack_n(a->type, elems, n, x->slots, a->slot, fn);
    }
    if (st == RMC_OK)
        st = pieces(a, get, first, n, x->slots ? x->slots : elems, x->req, &x->nreq);
    if (st == RMC_OK)
        st = rmc_request_custom(xfer_step, x, req);
    if (st != RMC_OK) {
        for (size_t k = 0; k < x->nreq; k++)
            if (x->req[k])
                rmc_wait(&x->req[k]);
        free(x->slots);
        free(x);
        return rmc_error_in(st, fn);
    }
    return RMC_OK;
}

rmc_status_t rmc_array_put_nb(rmc_array_h a, size_t i, const void *elem, rmc_request_h *req)
{
    RMCC_SERIAL();
    return nonblocking(a, 0, i, 1, (void *)elem, req, __func__);
}

rmc_status_t rmc_array_get_nb(rmc_array_h a, size_t i, void *elem, rmc_request_h *req)
{
    RMCC_SERIAL();
    return nonblocking(a, 1, i, 1, elem, req, __func__);
}

rmc_status_t rmc_array_put_range_nb(rmc_array_h a, size_t first, size_t n, const void *elems,
                                    rmc_request_h *req)
{
    RMCC_SERIAL();
    return nonblocking(a, 0, first, n, (void *)elems, req, __func__);
}

rmc_status_t rmc_array_get_range_nb(rmc_array_h a, size_t first, size_t n, void *elems,
                                    rmc_request_h *req)
{
    RMCC_SERIAL();
    return nonblocking(a, 1, first, n, elems, req, __func__);
}
