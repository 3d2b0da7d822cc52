/* Queues: creation, destruction, resize, migration, and the argument checks of the operations
 * (ops.c runs them). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "queue_impl.h"

#define MAX_CAP ((size_t)1 << 40)

static uint64_t next_id; /* equal on every rank: advanced by each collective creation */

static void q_release(rmcc_obj_t *o)
{
    struct rmc_queue *q = (struct rmc_queue *)o;
    free(q->buf);
    q->buf = NULL;
    q->bufcap = 0;
}

static rmc_status_t check(const struct rmc_queue *q, const char *fn)
{
    return rmcc_obj_check(q ? &q->obj : NULL, RMCC_MAGIC_QUEUE, "queue", fn);
}

/* *bytes = cap slots of `slot` bytes; RMC_ERR_TOO_BIG when the product overflows (it would wrap to
 * a small allocation that the operations then overrun). */
static rmc_status_t slots_bytes(size_t cap, size_t slot, size_t *bytes, const char *fn)
{
    if (__builtin_mul_overflow(cap, slot, bytes))
        return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                         "capacity %zu x %zu-byte slots: the queue's size overflows (%zu x %zu > "
                         "%zu)",
                         cap, slot, cap, slot, SIZE_MAX);
    return RMC_OK;
}

/* Sets the addresses of q's memory on host (offsets known). */
static void place(struct rmc_queue *q)
{
    q->ctl = rmcc_addr(q->host, q->ctl_off);
    q->data = rmcc_addr(q->host, q->data_off);
    char *l = rmcc.lbase[q->host];
    q->lctl = l ? l + q->ctl_off : NULL;
    q->ldata = l ? l + q->data_off : NULL;
    memset(q->seen, 0, sizeof(q->seen));
    q->failed[0] = q->failed[1] = 0;
}

/* The host allocates the control block and `cap` slots; everyone learns the offsets (and the
 * outcome). */
static rmc_status_t host_alloc(struct rmc_queue *q, size_t cap, int host, uint64_t *ctl,
                               uint64_t *data, const char *fn)
{
    uint64_t msg[3] = {(uint64_t)RMC_OK, 0, 0};
    if (rmcc.rank == host) {
        size_t bytes = 0;
        rmc_status_t st = slots_bytes(cap, q->slot, &bytes, fn);
        if (st == RMC_OK)
            st = rmcc_alloc_off(QC_BYTES, &msg[1], fn);
        if (st == RMC_OK && (st = rmcc_alloc_off(bytes, &msg[2], fn)) != RMC_OK)
            rmcc_free_off(msg[1], fn);
        msg[0] = (uint64_t)(int64_t)st;
    }
    rmc_status_t st = rmcc_bcast(msg, sizeof msg, host, fn);
    if (st == RMC_OK)
        st = (rmc_status_t)(int64_t)msg[0];
    if (st != RMC_OK && rmcc.rank != host)
        rmcc_fail(st, fn,
                  "the host (rank %d) could not allocate the queue (%zu slots of %zu "
                  "bytes): %s",
                  host, cap, q->slot, rmc_status_string(st));
    *ctl = msg[1];
    *data = msg[2];
    return st;
}

rmc_status_t rmc_queue_create(rmc_queue_kind_t kind, int host, size_t capacity,
                              const rmc_type_t *type, rmc_queue_h *qp)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (qp)
        *qp = NULL;
    RMCC_CHECK_UP(fn);
    rmc_status_t st = RMC_OK;
    if (!qp)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL handle pointer");
    else if (kind != RMC_QUEUE_CIRCULAR && kind != RMC_QUEUE_FAST && kind != RMC_QUEUE_CHECKSUM)
        st = rmcc_fail(RMC_ERR_ARG, fn, "unknown queue kind %d", (int)kind);
    else if (host < 0 || host >= rmcc.nranks)
        st = rmcc_fail(RMC_ERR_RANK, fn, "host rank %d outside [0, %d)", host, rmcc.nranks);
    else if (capacity == 0 || capacity > MAX_CAP) /* (above the limit: a size, TOO_BIG) */
        st = rmcc_fail(capacity ? RMC_ERR_TOO_BIG : RMC_ERR_ARG, fn, "capacity %zu (1 .. 2^40)",
                       capacity);
    else if ((st = rmcc_type_check(type, fn)) == RMC_OK) {
        size_t bytes;
        st = slots_bytes(capacity,
                         rmc_type_slot_bytes(type) + (kind == RMC_QUEUE_CHECKSUM ? QCK_BYTES : 0),
                         &bytes, fn);
    }
    uint64_t args[4] = {(uint64_t)kind, (uint64_t)host, capacity, next_id};
    st = rmcc_create_begin(fn, args, 4, type, st);
    if (st != RMC_OK)
        return st;
    struct rmc_queue *q = calloc(1, sizeof(*q));
    st = rmcc_agree(q ? RMC_OK : rmcc_fail(RMC_ERR_NOMEM, fn, "queue handle"));
    if (st != RMC_OK) {
        free(q);
        return st;
    }
    q->kind = kind;
    q->host = host;
    q->id = next_id++;
    rmcc_set_cap(q, capacity);
    q->type = type;
    q->esz = rmc_type_slot_bytes(type);
    q->slot = q->esz + (kind == RMC_QUEUE_CHECKSUM ? QCK_BYTES : 0);
    q->direct = !type->max_bytes && q->slot == type->size;
    st = host_alloc(q, capacity, host, &q->ctl_off, &q->data_off, fn);
    if (st != RMC_OK) {
        free(q);
        return st;
    }
    place(q);
    rmcc_obj_add(&q->obj, RMCC_MAGIC_QUEUE, q_release);
    *qp = q;
    return RMC_OK;
}

rmc_status_t rmc_queue_destroy(rmc_queue_h q)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st, b;
    if ((st = rmcc_destroy_begin(q ? &q->obj : NULL, RMCC_MAGIC_QUEUE, "queue", q ? q->id : 0, &b,
                                 fn)) != RMC_OK)
        return st;
    st = b;
    if (rmcc.rank == q->host) {
        rmc_status_t s1 = rmcc_free_off(q->data_off, fn), s2 = rmcc_free_off(q->ctl_off, fn);
        if (st == RMC_OK)
            st = s1 != RMC_OK ? s1 : s2;
    }
    rmcc_obj_kill(&q->obj);
    return st;
}

/* Copies the n elements at positions [head, head+n) of q (on this rank, the host) into `dst` as
 * positions [0, n) of a queue of the same slots: re-stamped checksums for a CHECKSUM queue. */
static void copy_out(const struct rmc_queue *q, int64_t head, size_t n, char *dst)
{
    for (size_t i = 0; i < n; i++) {
        size_t s = rmcc_slot(q, head + (int64_t)i);
        memcpy(dst + i * q->slot, q->ldata + s * q->slot, q->slot);
        if (q->kind == RMC_QUEUE_CHECKSUM) {
            uint64_t ck = rmcc_qck(dst + i * q->slot, q->esz, (int64_t)i);
            memcpy(dst + i * q->slot + q->esz, &ck, QCK_BYTES);
        }
    }
}

/* Sets a control block for n elements at positions [0, n). */
static void fresh_counters(char *ctl, size_t n)
{
    memset(ctl, 0, QC_BYTES);
    int64_t v = (int64_t)n;
    memcpy(ctl + QC_STRIDE * QC_TAIL, &v, 8);
    memcpy(ctl + QC_STRIDE * QC_READY, &v, 8);
}

/* Moves a quiet queue's elements to new memory (of new_cap slots on new_host) and frees the old.
 * Collective; the status is agreed. */
static rmc_status_t relocate(struct rmc_queue *q, int new_host, size_t new_cap, const char *fn)
{
    int64_t head = 0, tail = 0;
    uint64_t count = 0;
    if (rmcc.rank == q->host) {
        rmcc_queued(q, &head, &tail); /* quiet: READY is TAIL */
        count = (uint64_t)(tail - head);
    }
    rmc_status_t st = rmcc_bcast(&count, sizeof count, q->host, fn);
    if (st == RMC_OK && count > new_cap)
        st = rmcc_fail(RMC_ERR_FULL, fn, "%llu elements queued, more than the new capacity %zu",
                       (unsigned long long)count, new_cap);
    if (st != RMC_OK)
        return rmcc_agree(st);
    uint64_t ctl, data;
    struct rmc_queue nq = *q;
    nq.host = new_host;
    rmcc_set_cap(&nq, new_cap);
    st = host_alloc(&nq, new_cap, new_host, &ctl, &data, fn);
    if (st != RMC_OK)
        return st; /* agreed by host_alloc's broadcast */
    nq.ctl_off = ctl;
    nq.data_off = data;
    place(&nq);
    if (rmcc.rank == q->host) {
        /* the old host builds the new contents and control block, then puts them in place */
        size_t bytes = count * q->slot;
        char *tmp = malloc(bytes ? bytes : 1), cb[QC_BYTES];
        if (!tmp) {
            st = rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes to move the elements", bytes);
        } else {
            copy_out(q, head, count, tmp);
            fresh_counters(cb, count);
            if (bytes)
                st = rmc_put(tmp, nq.data, bytes, new_host);
            if (st == RMC_OK)
                st = rmc_put(cb, nq.ctl, QC_BYTES, new_host);
            free(tmp);
        }
    }
    rmc_status_t b = rmc_barrier(); /* the new memory is complete everywhere */
    if (st == RMC_OK)
        st = b;
    st = rmcc_agree(st);
    /* free what is not used any more: the new memory on failure, else the old */
    if (rmcc.rank == (st == RMC_OK ? q->host : new_host)) {
        rmcc_free_off(st == RMC_OK ? q->data_off : data, fn);
        rmcc_free_off(st == RMC_OK ? q->ctl_off : ctl, fn);
    }
    if (st == RMC_OK) {
        q->host = new_host;
        rmcc_set_cap(q, new_cap);
        q->ctl_off = ctl;
        q->data_off = data;
        place(q);
    }
    return st;
}

rmc_status_t rmc_queue_resize(rmc_queue_h q, size_t new_capacity)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = check(q, fn);
    if (st == RMC_OK && (new_capacity == 0 || new_capacity > MAX_CAP))
        st = rmcc_fail(new_capacity ? RMC_ERR_TOO_BIG : RMC_ERR_ARG, fn,
                       "new_capacity %zu (1 .. 2^40)", new_capacity);
    size_t bytes;
    if (st == RMC_OK)
        st = slots_bytes(new_capacity, q->slot, &bytes, fn);
    uint64_t args[2] = {st == RMC_OK ? q->id : ~0ull, new_capacity};
    st = rmcc_coll_begin(fn, args, 2, st);
    if (st != RMC_OK)
        return st;
    rmcc_quiesce(&q->obj); /* this rank's _nb operations have made their last step */
    if ((st = rmcc_agree(rmc_barrier())) != RMC_OK) /* every operation on it is complete */
        return st;
    return relocate(q, q->host, new_capacity, fn);
}

rmc_status_t rmc_queue_migrate(rmc_queue_h q, int new_host)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = check(q, fn);
    if (st == RMC_OK && (new_host < 0 || new_host >= rmcc.nranks))
        st = rmcc_fail(RMC_ERR_RANK, fn, "new host %d outside [0, %d)", new_host, rmcc.nranks);
    uint64_t args[2] = {st == RMC_OK ? q->id : ~0ull, (uint64_t)new_host};
    st = rmcc_coll_begin(fn, args, 2, st);
    if (st != RMC_OK)
        return st;
    rmcc_quiesce(&q->obj);
    if ((st = rmcc_agree(rmc_barrier())) != RMC_OK)
        return st;
    return relocate(q, new_host, q->cap, fn);
}

int rmc_queue_host(rmc_queue_h q)
{
    return check(q, __func__) == RMC_OK ? q->host : -1;
}

size_t rmc_queue_capacity(rmc_queue_h q)
{
    return check(q, __func__) == RMC_OK ? q->cap : 0;
}

rmc_status_t rmc_queue_size(rmc_queue_h q, size_t *n)
{
    RMCC_SERIAL();
    rmc_status_t st = check(q, __func__);
    if (st == RMC_OK && !n)
        st = rmcc_fail(RMC_ERR_ARG, __func__, "NULL result pointer");
    if (st != RMC_OK)
        return st;
    int64_t h, t;
    st = rmc_amo_load_i64(q->ctl + QC_STRIDE * QC_HEAD, &h, q->host);
    if (st == RMC_OK)
        st = rmc_amo_load_i64(q->ctl + QC_STRIDE * QC_TAIL, &t, q->host);
    if (st == RMC_OK)
        *n = t > h ? (size_t)(t - h) : 0;
    return st;
}

/* ------------------------------------------------------------------------- operations --- */

#define PATHS (RMC_PATH_RDMA | RMC_PATH_RPC)

/* A path forced by an operation's promise (or made a default: promise 0) is possible. */
static rmc_status_t path_check(unsigned path, unsigned promise, const char *fn)
{
    if (path == PATHS)
        return rmcc_fail(RMC_ERR_ARG, fn, "both RMC_PATH_RDMA and RMC_PATH_RPC");
    if (path == RMC_PATH_RPC && (promise & RMC_PROMISE_LOCAL))
        return rmcc_fail(RMC_ERR_ARG, fn, "RMC_PATH_RPC with RMC_PROMISE_LOCAL (the host's loads "
                                          "and stores)");
    if (path == RMC_PATH_RPC && rmc_amo_mode() != RMC_AMO_MODE_THREAD)
        return rmcc_fail(RMC_ERR_UNSUPPORTED, fn,
                         "the RPC path needs RMC_AMO=thread (with MPI atomics the host's CPU "
                         "atomics are not atomic with other ranks' one-sided ones)");
    return RMC_OK;
}

rmc_status_t rmc_queue_set_path(rmc_queue_h q, unsigned path)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = check(q, fn);
    if (st == RMC_OK && path != 0 && path != RMC_PATH_RDMA && path != RMC_PATH_RPC)
        st = rmcc_fail(RMC_ERR_ARG, fn, "path 0x%x (0: chosen per operation, RMC_PATH_RDMA, "
                                        "RMC_PATH_RPC)",
                       path);
    if (st == RMC_OK && path)
        st = path_check(path, 0, fn);
    if (st == RMC_OK)
        q->path = path;
    return st;
}

/* Checks shared by every push and pop. */
static rmc_status_t op_check(const struct rmc_queue *q, const void *elems, size_t n,
                             unsigned promise, int push, const char *fn)
{
    rmc_status_t st = check(q, fn);
    if (RMCC_UNLIKELY(st != RMC_OK))
        return st;
    if (RMCC_UNLIKELY(!elems))
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL element pointer");
    if (RMCC_UNLIKELY(n == 0))
        return rmcc_fail(RMC_ERR_ARG, fn, "0 elements");
    if (RMCC_UNLIKELY(n > q->cap))
        return rmcc_fail(RMC_ERR_TOO_BIG, fn, "%zu elements, more than the capacity %zu", n,
                         q->cap);
    unsigned known = RMC_PROMISE_PUSH | RMC_PROMISE_POP | RMC_PROMISE_LOCAL | PATHS;
    if (RMCC_UNLIKELY(promise & ~known))
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "promise 0x%x: a queue knows PUSH, POP and LOCAL (and the paths "
                         "RMC_PATH_RDMA / _RPC)",
                         promise);
    if (RMCC_UNLIKELY((promise & RMC_PROMISE_LOCAL) && q->host != rmcc.rank))
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "RMC_PROMISE_LOCAL on rank %d: the queue is hosted by rank %d", rmcc.rank,
                         q->host);
    if (RMCC_UNLIKELY(promise & PATHS))
        return path_check(promise & PATHS, promise, fn);
    (void)push;
    return RMC_OK;
}

rmc_status_t rmc_queue_push_n(rmc_queue_h q, const void *elems, size_t n, unsigned promise)
{
    RMCC_SERIAL();
    rmc_status_t st = op_check(q, elems, n, promise, 1, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 1, elems, NULL, n, promise, NULL, __func__);
}

rmc_status_t rmc_queue_push(rmc_queue_h q, const void *elem, unsigned promise)
{
    RMCC_SERIAL();
    rmc_status_t st = op_check(q, elem, 1, promise, 1, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 1, elem, NULL, 1, promise, NULL, __func__);
}

rmc_status_t rmc_queue_pop_n(rmc_queue_h q, void *elems, size_t n, unsigned promise)
{
    RMCC_SERIAL();
    rmc_status_t st = op_check(q, elems, n, promise, 0, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 0, NULL, elems, n, promise, NULL, __func__);
}

rmc_status_t rmc_queue_pop(rmc_queue_h q, void *elem, unsigned promise)
{
    RMCC_SERIAL();
    rmc_status_t st = op_check(q, elem, 1, promise, 0, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 0, NULL, elem, 1, promise, NULL, __func__);
}

rmc_status_t rmc_queue_pop_upto(rmc_queue_h q, void *elems, size_t max, size_t *got,
                                unsigned promise)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    if (got)
        *got = 0;
    rmc_status_t st = op_check(q, elems, max ? 1 : 0, promise, 0, fn);
    if (st == RMC_OK && !got)
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL count pointer");
    if (st != RMC_OK)
        return st;
    return rmcc_queue_pop_upto(q, elems, max < q->cap ? max : q->cap, got, promise, fn);
}

static rmc_status_t nb_check(rmc_request_h *req, const char *fn)
{
    if (!req)
        return rmcc_fail(RMC_ERR_ARG, fn, "NULL request pointer");
    *req = RMC_REQUEST_NULL;
    return RMC_OK;
}

rmc_status_t rmc_queue_push_n_nb(rmc_queue_h q, const void *elems, size_t n, unsigned promise,
                                 rmc_request_h *req)
{
    RMCC_SERIAL();
    rmc_status_t st = nb_check(req, __func__);
    if (st == RMC_OK)
        st = op_check(q, elems, n, promise, 1, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 1, elems, NULL, n, promise, req, __func__);
}

rmc_status_t rmc_queue_push_nb(rmc_queue_h q, const void *elem, unsigned promise,
                               rmc_request_h *req)
{
    RMCC_SERIAL();
    rmc_status_t st = nb_check(req, __func__);
    if (st == RMC_OK)
        st = op_check(q, elem, 1, promise, 1, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 1, elem, NULL, 1, promise, req, __func__);
}

rmc_status_t rmc_queue_pop_n_nb(rmc_queue_h q, void *elems, size_t n, unsigned promise,
                                rmc_request_h *req)
{
    RMCC_SERIAL();
    rmc_status_t st = nb_check(req, __func__);
    if (st == RMC_OK)
        st = op_check(q, elems, n, promise, 0, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 0, NULL, elems, n, promise, req, __func__);
}

rmc_status_t rmc_queue_pop_nb(rmc_queue_h q, void *elem, unsigned promise, rmc_request_h *req)
{
    RMCC_SERIAL();
    rmc_status_t st = nb_check(req, __func__);
    if (st == RMC_OK)
        st = op_check(q, elem, 1, promise, 0, __func__);
    return st != RMC_OK ? st : rmcc_queue_op(q, 0, NULL, elem, 1, promise, req, __func__);
}

/* ------------------------------------------------------------------ the host's view --- */

/* q may be viewed in place by this rank: its host, with element slots. */
static rmc_status_t view_check(const struct rmc_queue *q, const char *fn)
{
    rmc_status_t st = check(q, fn);
    if (st != RMC_OK)
        return st;
    if (q->host != rmcc.rank)
        return rmcc_fail(RMC_ERR_ARG, fn, "rank %d does not host the queue (rank %d does)",
                         rmcc.rank, q->host);
    if (!q->direct)
        return rmcc_fail(RMC_ERR_TYPE, fn,
                         "a %s queue's slots are not its elements (a byte-copied type of a "
                         "circular or fast queue is)",
                         q->kind == RMC_QUEUE_CHECKSUM ? "checksum" : "serialized-type");
    return RMC_OK;
}

rmc_status_t rmc_queue_local_peek(rmc_queue_h q, const void **run1, size_t *n1, const void **run2,
                                  size_t *n2)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = view_check(q, fn);
    if (st == RMC_OK && (!run1 || !n1 || !run2 || !n2))
        st = rmcc_fail(RMC_ERR_ARG, fn, "NULL result pointer");
    if (st != RMC_OK)
        return st;
    int64_t head, end;
    rmcc_queued(q, &head, &end);
    size_t n = end > head ? (size_t)(end - head) : 0, s = n ? rmcc_slot(q, head) : 0;
    size_t first = q->cap - s < n ? q->cap - s : n;
    *run1 = q->ldata + s * q->slot;
    *n1 = first;
    *run2 = q->ldata;
    *n2 = n - first;
    return RMC_OK;
}

rmc_status_t rmc_queue_local_discard(rmc_queue_h q, size_t n)
{
    RMCC_SERIAL();
    const char *fn = __func__;
    rmc_status_t st = view_check(q, fn);
    if (st != RMC_OK)
        return st;
    int64_t head, end;
    rmcc_queued(q, &head, &end);
    if (n > (size_t)(end - head)) /* (unsigned: an n above INT64_MAX is refused too) */
        return rmcc_fail(RMC_ERR_ARG, fn, "%zu elements to discard, %lld queued", n,
                         (long long)(end - head));
    int64_t h = head + (int64_t)n;
    __atomic_store_n((int64_t *)(void *)(q->lctl + QC_STRIDE * QC_HEAD), h, __ATOMIC_RELEASE);
    __atomic_store_n((int64_t *)(void *)(q->lctl + QC_STRIDE * QC_FREED), h, __ATOMIC_RELEASE);
    return RMC_OK;
}
