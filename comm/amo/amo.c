/* Remote atomics in two mechanisms (include/rmc/amo.h).
 *
 * mpi:    MPI_Fetch_and_op / MPI_Compare_and_swap / MPI_Accumulate on the region's window (lock_all
 *         held) followed by MPI_Win_flush; non-blocking forms use MPI_Rget_accumulate (CAS: flush
 * at completion). Every rank, node-local or not, goes through MPI, so MPI's atomicity covers all.
 * thread: node-local words (self included) are updated with CPU atomics through the shared mapping;
 *         other nodes' words through an active message (RMCI_AM_ID_AMO) whose handler performs the
 *         same CPU atomic at the target, on its progress thread or inside its RMC calls.
 * The mode is agreed at rmc_init and never changes while initialized, so one word never sees both.
 *
 * The AM handler may run on the progress thread, which must not read rmci (the main thread mutates
 * it). It finds regions in its own table (region id -> base, size) under a mutex: the main thread
 * adds a new region inside rmc_region_alloc, before the allocation's last agreement (the region
 * hook, rmci_amo_sync; the poll hook retries an addition that failed), and an attribute delete
 * callback on the region's window removes a region inside MPI_Win_free, before its memory goes
 * away. A request for a region the table does not know (only after such a failure) is deferred to
 * the main thread.
 */
#include "config.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "../progress/progress_internal.h"

typedef struct rt_ent {
    uint32_t id;
    char *base;
    size_t size;
} rt_ent_t;

static struct {
    int up;
    rmc_amo_mode_t mode;
    pthread_mutex_t lock; /* guards v/n */
    rt_ent_t *v;          /* sorted by id */
    size_t n, cap;
    uint32_t seen; /* rmci.next_region_id at the last sync */
    int keyval;
} amo;

rmc_amo_mode_t rmc_amo_mode(void)
{
    return (rmci.initialized && amo.up) ? amo.mode : RMC_AMO_MODE_NONE;
}

/* -------------------------------------------------------------------------- CPU atomics --- */

uint64_t rmci_cpu_amo(void *p, int op, int width, uint64_t a, uint64_t b)
{
    if (width == 4) {
        uint32_t *q = p, x = (uint32_t)a, y = (uint32_t)b;
        switch (op) {
        case RMCI_AMO_FADD:
        case RMCI_AMO_ADD:
            return __atomic_fetch_add(q, x, __ATOMIC_SEQ_CST);
        case RMCI_AMO_FOR:
            return __atomic_fetch_or(q, x, __ATOMIC_SEQ_CST);
        case RMCI_AMO_FAND:
            return __atomic_fetch_and(q, x, __ATOMIC_SEQ_CST);
        case RMCI_AMO_FXOR:
            return __atomic_fetch_xor(q, x, __ATOMIC_SEQ_CST);
        case RMCI_AMO_SWAP:
            return __atomic_exchange_n(q, x, __ATOMIC_SEQ_CST);
        case RMCI_AMO_CAS:
            __atomic_compare_exchange_n(q, &y, x, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
            return y;
        default:
            return __atomic_load_n(q, __ATOMIC_SEQ_CST);
        }
    }
    uint64_t *q = p;
    switch (op) {
    case RMCI_AMO_FADD:
    case RMCI_AMO_ADD:
        return __atomic_fetch_add(q, a, __ATOMIC_SEQ_CST);
    case RMCI_AMO_FOR:
        return __atomic_fetch_or(q, a, __ATOMIC_SEQ_CST);
    case RMCI_AMO_FAND:
        return __atomic_fetch_and(q, a, __ATOMIC_SEQ_CST);
    case RMCI_AMO_FXOR:
        return __atomic_fetch_xor(q, a, __ATOMIC_SEQ_CST);
    case RMCI_AMO_SWAP:
        return __atomic_exchange_n(q, a, __ATOMIC_SEQ_CST);
    case RMCI_AMO_CAS:
        __atomic_compare_exchange_n(q, &b, a, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return b;
    default:
        return __atomic_load_n(q, __ATOMIC_SEQ_CST);
    }
}

void rmci_amo_store_fetched(void *p, int width, uint64_t v)
{
    if (!p)
        return;
    if (width == 4) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

rmc_status_t rmci_amo_wire_decode(const void *payload, size_t len, size_t cap, rmci_amo_wire_t *m)
{
    if (len != sizeof(*m) || cap < 8)
        return RMC_ERR_ARG;
    memcpy(m, payload, sizeof(*m));
    if ((m->width != 4 && m->width != 8) || m->at % m->width)
        return RMC_ERR_ALIGN;
    return RMC_OK;
}

rmc_status_t rmci_amo_wire_finish(rmc_status_t st, const void *reply, size_t len, void *ptr,
                                  uint64_t width)
{
    if (st == RMC_OK) {
        if (len != 8)
            return RMC_ERR_INTERNAL;
        uint64_t v;
        memcpy(&v, reply, 8);
        rmci_amo_store_fetched(ptr, (int)width, v);
    }
    return st;
}

void rmci_amo_wire_apply(void *p, const rmci_amo_wire_t *m, void *reply, size_t *rlen)
{
    uint64_t old = rmci_cpu_amo(p, m->op, m->width, m->a, m->b);
    memcpy(reply, &old, 8);
    *rlen = 8;
}

/* ------------------------------------------------------------------ region table (thread) --- */

static long rt_find(uint32_t id)
{
    size_t lo = 0, hi = amo.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (amo.v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < amo.n && amo.v[lo].id == id) ? (long)lo : -1;
}

static int win_delete(MPI_Win win, int keyval, void *attr, void *extra)
{
    (void)win;
    (void)keyval;
    (void)extra;
    if (!amo.up)
        return MPI_SUCCESS;
    uint32_t id = (uint32_t)(uintptr_t)attr;
    pthread_mutex_lock(&amo.lock); /* waits for an atomic in progress on this region */
    long i = rt_find(id);
    if (i >= 0) {
        memmove(&amo.v[i], &amo.v[i + 1], (amo.n - (size_t)i - 1) * sizeof(*amo.v));
        amo.n--;
    }
    pthread_mutex_unlock(&amo.lock);
    return MPI_SUCCESS;
}

int rmci_amo_needs_sync(void)
{
    return amo.up && amo.mode == RMC_AMO_MODE_THREAD && rmci.next_region_id != amo.seen;
}

void rmci_amo_sync(void)
{
    if (!rmci_amo_needs_sync())
        return;
    uint32_t lo = amo.seen;
    size_t add = 0;
    for (struct rmc_region *r = rmci.regions; r; r = r->next)
        if (r->id >= lo)
            add++;
    pthread_mutex_lock(&amo.lock);
    if (amo.n + add > amo.cap) {
        size_t cap = amo.cap ? amo.cap : 16;
        while (cap < amo.n + add)
            cap *= 2;
        rt_ent_t *v = realloc(amo.v, cap * sizeof(*v));
        if (!v) {
            pthread_mutex_unlock(&amo.lock);
            return; /* retried at the next poll */
        }
        amo.v = v;
        amo.cap = cap;
    }
    for (struct rmc_region *r = rmci.regions; r; r = r->next) {
        if (r->id < lo)
            continue;
        if (MPI_Win_set_attr(r->win, amo.keyval, (void *)(uintptr_t)r->id) != MPI_SUCCESS)
            continue; /* without the delete callback the thread must not see it: main thread serves
                       */
        /* insertion keeping ids sorted (new ids are above all known ones; the list is newest first)
         */
        size_t at = amo.n;
        while (at > 0 && amo.v[at - 1].id > r->id)
            at--;
        memmove(&amo.v[at + 1], &amo.v[at], (amo.n - at) * sizeof(*amo.v));
        amo.v[at].id = r->id;
        amo.v[at].base = r->lptr[rmci.rank];
        amo.v[at].size = r->sizes[rmci.rank];
        amo.n++;
    }
    amo.seen = rmci.next_region_id;
    pthread_mutex_unlock(&amo.lock);
}

/* Target side of a thread-mode remote atomic. */
static rmc_status_t h_amo(int origin, const void *payload, size_t len, void *reply, size_t cap,
                          size_t *rlen, void *arg)
{
    (void)origin;
    (void)arg;
    rmci_amo_wire_t m;
    rmc_status_t st = rmci_amo_wire_decode(payload, len, cap, &m);
    if (st != RMC_OK)
        return st;
    if (!rmci_am_on_thread() && rmci_amo_needs_sync())
        rmci_amo_sync();
    pthread_mutex_lock(&amo.lock);
    long i = rt_find(m.rid);
    if (i < 0)
        st = rmci_am_on_thread() ? RMCI_AM_DEFER : RMC_ERR_NOT_REGION;
    else if (!amo.v[i].base || m.at > amo.v[i].size || amo.v[i].size - m.at < m.width)
        st = RMC_ERR_BOUNDS;
    else
        rmci_amo_wire_apply(amo.v[i].base + m.at, &m, reply, rlen);
    pthread_mutex_unlock(&amo.lock);
    return st;
}

/* ------------------------------------------------------------------------------ MPI mode --- */

static MPI_Datatype mpi_type(int op, int width)
{
    int bits = op == RMCI_AMO_FOR || op == RMCI_AMO_FAND || op == RMCI_AMO_FXOR;
    if (width == 4)
        return bits ? MPI_UINT32_T : MPI_INT32_T;
    return bits ? MPI_UINT64_T : MPI_INT64_T;
}

static MPI_Op mpi_op(int op)
{
    switch (op) {
    case RMCI_AMO_FADD:
    case RMCI_AMO_ADD:
        return MPI_SUM;
    case RMCI_AMO_FOR:
        return MPI_BOR;
    case RMCI_AMO_FAND:
        return MPI_BAND;
    case RMCI_AMO_FXOR:
        return MPI_BXOR;
    case RMCI_AMO_SWAP:
        return MPI_REPLACE;
    default:
        return MPI_NO_OP;
    }
}

/* Origin buffers of a non-blocking MPI atomic: must live until completion. */
typedef struct mpi_nb {
    uint64_t a, b, res;
    int rank;
    MPI_Win win;
} mpi_nb_t;

static rmc_status_t cas_complete(struct rmc_request *q)
{
    mpi_nb_t *s = q->cb_buf;
    return MPI_Win_flush(s->rank, s->win) == MPI_SUCCESS ? RMC_OK : RMC_ERR_MPI;
}

static rmc_status_t mpi_amo(int op, int width, const rmci_target_t *t, uint64_t a, uint64_t b,
                            void *fetched, int rank, rmc_request_h *req)
{
    struct rmc_region *r = t->region;
    /* Additions commute with accumulates and each other (ordered as accumulates: only after puts
     * and gets); swap, CAS and the bitwise ops do not, and the window has accumulate_ordering none,
     * so they are ordered as puts: after every outstanding operation, and everything after them. */
    unsigned kind = (op == RMCI_AMO_FADD || op == RMCI_AMO_ADD) ? RMCI_CS_ACC : RMCI_CS_WRITE;
    rmc_status_t st = rmci_order(r, rank, kind);
    if (st != RMC_OK)
        return st;
    rmci.stats.remote_ops++;
    int mr = rmci_mrank(r, rank); /* rank in the region's window */
    MPI_Datatype dt = mpi_type(op, width);
    if (!req) {
        uint64_t in = 0, cmp = 0, out = 0;
        rmci_amo_store_fetched(&in, width, a);
        rmci_amo_store_fetched(&cmp, width, b);
        int rc;
        if (op == RMCI_AMO_CAS)
            rc = MPI_Compare_and_swap(&in, &cmp, &out, dt, mr, t->disp, r->win);
        else if (op == RMCI_AMO_ADD)
            rc = MPI_Accumulate(&in, 1, dt, mr, t->disp, 1, dt, MPI_SUM, r->win);
        else
            rc = MPI_Fetch_and_op(&in, &out, dt, mr, t->disp, mpi_op(op), r->win);
        if (rc != MPI_SUCCESS)
            return RMC_ERR_MPI;
        RMCI_MPI(MPI_Win_flush(mr, r->win));
        rmci.stats.flushes++;
        r->cs[rank] &= (uint8_t)~RMCI_CS_PENDING;
        if (op != RMCI_AMO_ADD)
            memcpy(fetched, &out, (size_t)width);
        return RMC_OK;
    }
    struct rmc_request *q = rmci_req_alloc();
    mpi_nb_t *s = q ? calloc(1, sizeof(*s)) : NULL;
    if (!s) {
        if (q)
            rmci_req_release(q);
        return RMC_ERR_NOMEM;
    }
    q->cb_buf = s;
    rmci_amo_store_fetched(&s->a, width, a);
    rmci_amo_store_fetched(&s->b, width, b);
    s->rank = mr;
    s->win = r->win;
    int rc;
    if (op == RMCI_AMO_CAS) {
        rc = MPI_Compare_and_swap(&s->a, &s->b, fetched, dt, mr, t->disp, r->win);
        q->on_complete = cas_complete;
    } else {
        void *res = op == RMCI_AMO_ADD ? (void *)&s->res : fetched;
        rc = MPI_Rget_accumulate(&s->a, 1, dt, res, 1, dt, mr, t->disp, 1, dt,
                                 op == RMCI_AMO_ADD ? MPI_SUM : mpi_op(op), r->win, &q->mpi[0]);
        q->nmpi = 1;
    }
    if (rc != MPI_SUCCESS) {
        rmci_req_release(q);
        return RMC_ERR_MPI;
    }
    rmci_mark(r, rank, kind);
    *req = q;
    return RMC_OK;
}

/* ------------------------------------------------------------------------------ front end --- */

static rmc_status_t amo_op(int op, int width, const void *dst, uint64_t a, uint64_t b,
                           void *fetched, int rank, rmc_request_h *req, int nb)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT();
    if (RMCI_UNLIKELY(!amo.up))
        return RMC_ERR_UNSUPPORTED;
    RMCI_POLL();
    RMCI_CHECK_RANK(rank);
    if (RMCI_UNLIKELY((op != RMCI_AMO_ADD && !fetched) || (nb && !req)))
        return RMC_ERR_ARG;
    if (RMCI_UNLIKELY((uintptr_t)dst & (uintptr_t)(width - 1)))
        return RMC_ERR_ALIGN;
    rmci_target_t t;
    rmc_status_t st = rmci_resolve(rank, dst, (size_t)width, &t);
    if (st == RMC_ERR_NOT_REGION)
        return rmci_reg_amo(op, width, (void *)dst, a, b, fetched, rank, nb ? req : NULL);
    if (RMCI_UNLIKELY(st != RMC_OK))
        return st;
    if (amo.mode == RMC_AMO_MODE_MPI)
        return mpi_amo(op, width, &t, a, b, fetched, rank, nb ? req : NULL);
    if (t.local) {
        rmci.stats.local_ops++;
        uint64_t old = rmci_cpu_amo(t.local, op, width, a, b);
        if (op != RMCI_AMO_ADD)
            rmci_amo_store_fetched(fetched, width, old);
        return RMC_OK;
    }
    /* another node: the target executes it. Keep location consistency with outstanding RMA. */
    struct rmc_region *r = t.region;
    if (r->cs[rank] & RMCI_CS_PENDING) {
        st = rmci_flush_pair(r, rank, 1);
        if (st != RMC_OK)
            return st;
    }
    rmci.stats.remote_ops++;
    rmci_amo_wire_t m = {(uint64_t)t.disp, a, b, r->id, (uint16_t)op, (uint16_t)width};
    void *out = op == RMCI_AMO_ADD ? NULL : fetched;
    if (nb)
        return rmci_am_call_nb(rank, RMCI_AM_ID_AMO, &m, sizeof(m), NULL, 0, 8,
                               rmci_amo_wire_finish, out, (uint64_t)width, req);
    uint64_t old = 0;
    size_t rlen = 0;
    st = rmci_am_call(rank, RMCI_AM_ID_AMO, &m, sizeof(m), NULL, 0, &old, 8, &rlen);
    if (st == RMC_OK && rlen != 8)
        st = RMC_ERR_INTERNAL;
    if (st == RMC_OK)
        rmci_amo_store_fetched(out, width, old);
    return st;
}

#define U(x) ((uint64_t)(x))

/* blocking */
rmc_status_t rmc_amo_fetch_add_i32(void *d, int32_t v, int32_t *f, int rank)
{
    return amo_op(RMCI_AMO_FADD, 4, d, U((uint32_t)v), 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_fetch_add_i64(void *d, int64_t v, int64_t *f, int rank)
{
    return amo_op(RMCI_AMO_FADD, 8, d, U(v), 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_fetch_or_u32(void *d, uint32_t v, uint32_t *f, int rank)
{
    return amo_op(RMCI_AMO_FOR, 4, d, U(v), 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_fetch_or_u64(void *d, uint64_t v, uint64_t *f, int rank)
{
    return amo_op(RMCI_AMO_FOR, 8, d, v, 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_fetch_and_u32(void *d, uint32_t v, uint32_t *f, int rank)
{
    return amo_op(RMCI_AMO_FAND, 4, d, U(v), 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_fetch_and_u64(void *d, uint64_t v, uint64_t *f, int rank)
{
    return amo_op(RMCI_AMO_FAND, 8, d, v, 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_fetch_xor_u32(void *d, uint32_t v, uint32_t *f, int rank)
{
    return amo_op(RMCI_AMO_FXOR, 4, d, U(v), 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_fetch_xor_u64(void *d, uint64_t v, uint64_t *f, int rank)
{
    return amo_op(RMCI_AMO_FXOR, 8, d, v, 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_swap_i32(void *d, int32_t v, int32_t *f, int rank)
{
    return amo_op(RMCI_AMO_SWAP, 4, d, U((uint32_t)v), 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_swap_i64(void *d, int64_t v, int64_t *f, int rank)
{
    return amo_op(RMCI_AMO_SWAP, 8, d, U(v), 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_cas_i32(void *d, int32_t c, int32_t v, int32_t *f, int rank)
{
    return amo_op(RMCI_AMO_CAS, 4, d, U((uint32_t)v), U((uint32_t)c), f, rank, NULL, 0);
}
rmc_status_t rmc_amo_cas_i64(void *d, int64_t c, int64_t v, int64_t *f, int rank)
{
    return amo_op(RMCI_AMO_CAS, 8, d, U(v), U(c), f, rank, NULL, 0);
}
rmc_status_t rmc_amo_add_i32(void *d, int32_t v, int rank)
{
    return amo_op(RMCI_AMO_ADD, 4, d, U((uint32_t)v), 0, NULL, rank, NULL, 0);
}
rmc_status_t rmc_amo_add_i64(void *d, int64_t v, int rank)
{
    return amo_op(RMCI_AMO_ADD, 8, d, U(v), 0, NULL, rank, NULL, 0);
}
rmc_status_t rmc_amo_load_i32(const void *s, int32_t *f, int rank)
{
    return amo_op(RMCI_AMO_LOAD, 4, s, 0, 0, f, rank, NULL, 0);
}
rmc_status_t rmc_amo_load_i64(const void *s, int64_t *f, int rank)
{
    return amo_op(RMCI_AMO_LOAD, 8, s, 0, 0, f, rank, NULL, 0);
}

/* non-blocking */
rmc_status_t rmc_amo_fetch_add_i32_nb(void *d, int32_t v, int32_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FADD, 4, d, U((uint32_t)v), 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_fetch_add_i64_nb(void *d, int64_t v, int64_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FADD, 8, d, U(v), 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_fetch_or_u32_nb(void *d, uint32_t v, uint32_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FOR, 4, d, U(v), 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_fetch_or_u64_nb(void *d, uint64_t v, uint64_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FOR, 8, d, v, 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_fetch_and_u32_nb(void *d, uint32_t v, uint32_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FAND, 4, d, U(v), 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_fetch_and_u64_nb(void *d, uint64_t v, uint64_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FAND, 8, d, v, 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_fetch_xor_u32_nb(void *d, uint32_t v, uint32_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FXOR, 4, d, U(v), 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_fetch_xor_u64_nb(void *d, uint64_t v, uint64_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_FXOR, 8, d, v, 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_swap_i32_nb(void *d, int32_t v, int32_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_SWAP, 4, d, U((uint32_t)v), 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_swap_i64_nb(void *d, int64_t v, int64_t *f, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_SWAP, 8, d, U(v), 0, f, rank, q, 1);
}
rmc_status_t rmc_amo_cas_i32_nb(void *d, int32_t c, int32_t v, int32_t *f, int rank,
                                rmc_request_h *q)
{
    return amo_op(RMCI_AMO_CAS, 4, d, U((uint32_t)v), U((uint32_t)c), f, rank, q, 1);
}
rmc_status_t rmc_amo_cas_i64_nb(void *d, int64_t c, int64_t v, int64_t *f, int rank,
                                rmc_request_h *q)
{
    return amo_op(RMCI_AMO_CAS, 8, d, U(v), U(c), f, rank, q, 1);
}
rmc_status_t rmc_amo_add_i32_nb(void *d, int32_t v, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_ADD, 4, d, U((uint32_t)v), 0, NULL, rank, q, 1);
}
rmc_status_t rmc_amo_add_i64_nb(void *d, int64_t v, int rank, rmc_request_h *q)
{
    return amo_op(RMCI_AMO_ADD, 8, d, U(v), 0, NULL, rank, q, 1);
}

/* ------------------------------------------------------------------------- init / shutdown --- */

/* "mpi" -> 1, "thread" -> 2, "auto" -> 0, else -1 */
static int parse_mode(const char *v)
{
    if (!v || !strcasecmp(v, "auto"))
        return 0;
    if (!strcasecmp(v, "mpi"))
        return RMC_AMO_MODE_MPI;
    if (!strcasecmp(v, "thread"))
        return RMC_AMO_MODE_THREAD;
    return -1;
}

rmc_status_t rmci_amo_init(int thread_all)
{
    memset(&amo, 0, sizeof(amo));
    amo.keyval = MPI_KEYVAL_INVALID;
    int req = parse_mode(rmc_knob_value("RMC_AMO"));
    /* all ranks must ask for the same mode: agree on min and max */
    int v[2] = {req, -req}, out[2];
    if (MPI_Allreduce(v, out, 2, MPI_INT, MPI_MIN, rmci.comm) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    int lo = out[0], hi = -out[1];
    if (lo < 0 || lo != hi)
        return RMC_ERR_ARG;
    /* auto (measured, see bench/bench_amo.c): CPU atomics when every word is node-local (one node)
     * or when every rank runs a progress thread that serves remote ones; MPI atomics otherwise */
    if (lo == 0)
        lo = (rmci.node_count == 1 || thread_all) ? RMC_AMO_MODE_THREAD : RMC_AMO_MODE_MPI;
    amo.mode = (rmc_amo_mode_t)lo;
    pthread_mutex_init(&amo.lock, NULL);
    int rc = MPI_SUCCESS;
    if (amo.mode == RMC_AMO_MODE_THREAD)
        rc = MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, &amo.keyval, NULL);
    int ok = rc == MPI_SUCCESS, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, rmci.comm);
    if (!all) {
        if (amo.keyval != MPI_KEYVAL_INVALID)
            MPI_Win_free_keyval(&amo.keyval);
        pthread_mutex_destroy(&amo.lock);
        memset(&amo, 0, sizeof(amo));
        return RMC_ERR_MPI;
    }
    amo.seen = rmci.next_region_id;
    amo.up = 1;
    rmci_am_set_internal(RMCI_AM_ID_AMO, h_amo, NULL);
    amo.seen = 0; /* regions alive now (none at rmc_init) are learned by the first sync */
    rmci_amo_sync();
    return RMC_OK;
}

void rmci_amo_shutdown(void)
{
    if (!amo.up)
        return;
    if (amo.keyval != MPI_KEYVAL_INVALID)
        MPI_Win_free_keyval(&amo.keyval); /* attributes still set are deleted (callback: no-op) */
    pthread_mutex_destroy(&amo.lock);
    free(amo.v);
    memset(&amo, 0, sizeof(amo));
}
