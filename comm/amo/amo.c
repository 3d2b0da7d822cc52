/* Remote atomics in two mechanisms (include/rmc/amo.h), a layer of the core's registry.
 *
 * mpi:    MPI_Fetch_and_op / MPI_Compare_and_swap / MPI_Accumulate on the region's window (lock_all
 *         held) followed by MPI_Win_flush; non-blocking forms use MPI_Rget_accumulate (CAS: flush
 *         at completion). Every rank, node-local or not, goes through MPI, so MPI's atomicity
 *         covers all.
 * thread: node-local words (self included) are updated with CPU atomics through the shared mapping;
 *         other nodes' words through an active message whose handler performs the same CPU atomic
 *         at the target, on its progress thread or inside its RMC calls.
 * The mode is agreed at rmc_init and never changes while initialized, so one word never sees both.
 * Atomics on memory registered with rmc_register are active messages (CPU atomics at the target)
 * in both modes: such memory is in no MPI window.
 *
 * The AM handler may run on the progress thread, which must not read core state. It finds regions
 * in this layer's own table (region id -> base, size) under a mutex, kept by the layer's
 * region_created / region_freed callbacks: a region is in the table on every member before its
 * allocation returns anywhere, and leaves it only after every member entered its free. */
#include "config.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "rmc/amo.h"
#include "../progress/progress_internal.h"

/* Operation codes (wire format), one per table op. */
enum {
    RMCI_AMO_fetch_add = 1,
    RMCI_AMO_fetch_or,
    RMCI_AMO_fetch_and,
    RMCI_AMO_fetch_xor,
    RMCI_AMO_swap,
    RMCI_AMO_cas,
    RMCI_AMO_add,
    RMCI_AMO_load
};

typedef struct rt_ent {
    uint32_t id;
    char *base;
    size_t size;
} rt_ent_t;

static struct {
    int up;
    rmc_amo_mode_t mode;
    pthread_mutex_t lock; /* guards v/n (the progress thread reads them) */
    rt_ent_t *v;          /* sorted by id */
    size_t n, cap;
    int id_region, id_reg; /* internal AM ids: atomics on region / registered memory */
    unsigned char *nb_to;  /* [nranks] non-blocking atomics on registered memory sent there since
                            * the last fence */
    int nb_count;          /* ranks marked in nb_to */
} amo;

rmc_amo_mode_t rmc_amo_mode(void)
{
    return (RMCI.initialized && amo.up) ? amo.mode : RMC_AMO_MODE_NONE;
}

/* -------------------------------------------------------------------------- CPU atomics --- */

#define RMCI_CPU_AMO_(T, q, op, x, y)                                                              \
    switch (op) {                                                                                  \
    case RMCI_AMO_fetch_add:                                                                       \
    case RMCI_AMO_add:                                                                             \
        return __atomic_fetch_add((T *)q, (T)x, __ATOMIC_SEQ_CST);                                 \
    case RMCI_AMO_fetch_or:                                                                        \
        return __atomic_fetch_or((T *)q, (T)x, __ATOMIC_SEQ_CST);                                  \
    case RMCI_AMO_fetch_and:                                                                       \
        return __atomic_fetch_and((T *)q, (T)x, __ATOMIC_SEQ_CST);                                 \
    case RMCI_AMO_fetch_xor:                                                                       \
        return __atomic_fetch_xor((T *)q, (T)x, __ATOMIC_SEQ_CST);                                 \
    case RMCI_AMO_swap:                                                                            \
        return __atomic_exchange_n((T *)q, (T)x, __ATOMIC_SEQ_CST);                                \
    case RMCI_AMO_cas: {                                                                           \
        T c = (T)y;                                                                                \
        __atomic_compare_exchange_n((T *)q, &c, (T)x, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);      \
        return c;                                                                                  \
    }                                                                                              \
    default:                                                                                       \
        return __atomic_load_n((T *)q, __ATOMIC_SEQ_CST);                                          \
    }

/* CPU atomic on the word at p (width 4 or 8). Returns the old value (zero-extended). */
static uint64_t cpu_amo(void *p, int op, int width, uint64_t a, uint64_t b)
{
    if (width == 4)
        RMCI_CPU_AMO_(uint32_t, p, op, a, b)
    RMCI_CPU_AMO_(uint64_t, p, op, a, b)
}

/* Stores a fetched value of `width` bytes at p (nothing when p is NULL). */
static void store_fetched(void *p, int width, uint64_t v)
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

/* ------------------------------------------------------------------- active messages --- */

/* Wire format of an atomic carried by an active message: on region memory `at` is the
 * displacement in region `rid`; on registered memory `at` is the address (rid 0). */
typedef struct amo_wire {
    uint64_t at, a, b;
    uint32_t rid;
    uint16_t op, width;
} amo_wire_t;

/* Target side, before the lookup: RMC_ERR_ARG for a malformed message or a reply buffer under 8
 * bytes, RMC_ERR_ALIGN for a width other than 4 / 8 or a misaligned word. */
static rmc_status_t wire_decode(const void *payload, size_t len, size_t cap, amo_wire_t *m)
{
    if (len != sizeof(*m) || cap < 8)
        return RMC_ERR_ARG;
    memcpy(m, payload, sizeof(*m));
    if ((m->width != 4 && m->width != 8) || m->at % m->width)
        return RMC_ERR_ALIGN;
    return RMC_OK;
}

typedef struct apply_ctx {
    const amo_wire_t *m;
    void *reply;
} apply_ctx_t;

/* Performs the atomic on the word at p; the old value is the 8-byte reply. */
static void wire_apply(void *p, void *ctx)
{
    apply_ctx_t *c = ctx;
    uint64_t old = cpu_amo(p, c->m->op, c->m->width, c->m->a, c->m->b);
    memcpy(c->reply, &old, 8);
}

/* Origin side: completion of an AM atomic (the finisher of rmci_am_call_nb). */
static rmc_status_t wire_finish(rmc_status_t st, const void *reply, size_t len, void *ptr,
                                uint64_t width)
{
    if (st != RMC_OK)
        return st;
    if (len != 8)
        return RMC_ERR_INTERNAL;
    uint64_t v;
    memcpy(&v, reply, 8);
    store_fetched(ptr, (int)width, v);
    return RMC_OK;
}

/* Sends an atomic to `rank`'s handler `id`; blocking when req is NULL. */
static rmc_status_t wire_call(int id, const amo_wire_t *m, void *fetched, int rank,
                              rmc_request_h *req)
{
    if (req)
        return rmci_am_call_nb(rank, id, m, sizeof(*m), NULL, 0, 8, wire_finish, fetched,
                               (uint64_t)m->width, req);
    uint64_t old = 0;
    size_t rlen = 0;
    rmc_status_t st = rmci_am_call(rank, id, m, sizeof(*m), NULL, 0, &old, 8, &rlen);
    return wire_finish(st, &old, rlen, fetched, (uint64_t)m->width);
}

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

/* Applies an atomic to region memory (thread mode): the word at displacement m->at of region
 * m->rid, under the table's lock. */
static rmc_status_t region_access(const amo_wire_t *m, apply_ctx_t *c)
{
    pthread_mutex_lock(&amo.lock);
    long i = rt_find(m->rid);
    rmc_status_t st = RMC_OK;
    if (i < 0)
        st = RMC_ERR_NOT_REGION;
    else if (!amo.v[i].base || m->at > amo.v[i].size || amo.v[i].size - m->at < m->width)
        st = RMC_ERR_BOUNDS;
    else
        wire_apply(amo.v[i].base + m->at, c);
    pthread_mutex_unlock(&amo.lock);
    return st;
}

/* Target side of an atomic: on region memory (arg NULL, thread mode) or on memory registered with
 * rmc_register (arg non-NULL; `at` is then the address). */
static rmc_status_t h_amo(int origin, const void *payload, size_t len, void *reply, size_t cap,
                          size_t *rlen, void *arg)
{
    (void)origin;
    amo_wire_t m;
    rmc_status_t st = wire_decode(payload, len, cap, &m);
    if (st != RMC_OK)
        return st;
    apply_ctx_t c = {&m, reply};
    if (arg)
        st = rmci_reg_access((uintptr_t)m.at, m.width, wire_apply, &c);
    else
        st = region_access(&m, &c);
    if (st == RMC_OK) {
        *rlen = 8;
        if (arg)
            RMCI_PSTAT_ADD(fallback_ops, 1);
    }
    return st;
}

/* ------------------------------------------------------------------ region table --- */

static rmc_status_t amo_region_created(rmc_region_h r, void *arg)
{
    (void)arg;
    if (amo.mode != RMC_AMO_MODE_THREAD)
        return RMC_OK;
    uint32_t id = rmci_region_id(r);
    rmc_status_t st = RMC_OK;
    pthread_mutex_lock(&amo.lock);
    if (amo.n == amo.cap) {
        size_t cap = amo.cap ? 2 * amo.cap : 16;
        rt_ent_t *v = rmci_realloc(amo.v, cap * sizeof(*v));
        if (v) {
            amo.v = v;
            amo.cap = cap;
        } else {
            st = rmci_fail(RMC_ERR_NOMEM, "rmc_region_alloc", "atomics' region table");
        }
    }
    if (st == RMC_OK) {
        /* new ids are above every known one on this rank */
        size_t at = amo.n;
        while (at > 0 && amo.v[at - 1].id > id)
            at--;
        memmove(&amo.v[at + 1], &amo.v[at], (amo.n - at) * sizeof(*amo.v));
        amo.v[at] = (rt_ent_t){id, rmci_region_local(r, RMCI.rank), rmci_region_size(r, RMCI.rank)};
        amo.n++;
    }
    pthread_mutex_unlock(&amo.lock);
    return st;
}

static void amo_region_freed(rmc_region_h r, void *arg)
{
    (void)arg;
    pthread_mutex_lock(&amo.lock); /* waits for an atomic in progress on this region */
    long i = rt_find(rmci_region_id(r));
    if (i >= 0) {
        memmove(&amo.v[i], &amo.v[i + 1], (amo.n - (size_t)i - 1) * sizeof(*amo.v));
        amo.n--;
    }
    pthread_mutex_unlock(&amo.lock);
}

/* ------------------------------------------------------------------------------ MPI mode --- */

static MPI_Datatype mpi_type(int op, int width)
{
    int bits = op == RMCI_AMO_fetch_or || op == RMCI_AMO_fetch_and || op == RMCI_AMO_fetch_xor;
    if (width == 4)
        return bits ? MPI_UINT32_T : MPI_INT32_T;
    return bits ? MPI_UINT64_T : MPI_INT64_T;
}

static MPI_Op mpi_op(int op)
{
    static const MPI_Op ops[] = {
        [RMCI_AMO_fetch_add] = MPI_SUM,  [RMCI_AMO_add] = MPI_SUM,
        [RMCI_AMO_fetch_or] = MPI_BOR,   [RMCI_AMO_fetch_and] = MPI_BAND,
        [RMCI_AMO_fetch_xor] = MPI_BXOR, [RMCI_AMO_swap] = MPI_REPLACE,
        [RMCI_AMO_cas] = MPI_NO_OP,      [RMCI_AMO_load] = MPI_NO_OP,
    };
    return ops[op];
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
    RMCI_MPI(MPI_Win_flush, (s->rank, s->win));
    return RMC_OK;
}

/* Issues the MPI atomic; q: non-blocking into q (buffers in s), else blocking into out. */
static rmc_status_t mpi_issue(int op, MPI_Datatype dt, const void *in, const void *cmp, void *out,
                              int mr, MPI_Aint disp, MPI_Win win, MPI_Request *rq)
{
    if (op == RMCI_AMO_cas)
        return RMCI_MPI_ST(MPI_Compare_and_swap, (in, cmp, out, dt, mr, disp, win));
    if (rq)
        return RMCI_MPI_ST(MPI_Rget_accumulate,
                           (in, 1, dt, out, 1, dt, mr, disp, 1, dt, mpi_op(op), win, rq));
    if (op == RMCI_AMO_add)
        return RMCI_MPI_ST(MPI_Accumulate, (in, 1, dt, mr, disp, 1, dt, MPI_SUM, win));
    return RMCI_MPI_ST(MPI_Fetch_and_op, (in, out, dt, mr, disp, mpi_op(op), win));
}

static rmc_status_t mpi_amo(int op, int width, const rmci_target_t *t, uint64_t a, uint64_t b,
                            void *fetched, int rank, rmc_request_h *req)
{
    rmci_region_t *r = t->region;
    /* A non-fetching addition commutes with accumulates and other additions (ordered as an
     * accumulate: only after puts and gets). Every fetching atomic returns a value that must
     * include this rank's earlier accumulates and exclude its later ones, and the window has
     * accumulate_ordering none: fetch-add, swap, CAS and the bitwise ops are ordered as puts
     * (after every outstanding operation on the word, and everything after them). */
    unsigned kind = op != RMCI_AMO_add
                        ? RMCI_CS_WRITE
                        : rmci_acc_kind(width == 4 ? RMCI_ACC_TAG_INT32 : RMCI_ACC_TAG_INT64);
    rmci_range_t range = rmci_range(t->disp, (size_t)width);
    rmc_status_t st = rmci_order(r, rank, kind, range);
    if (st != RMC_OK)
        return st;
    RMCI_STAT(remote_ops, 1);
    int mr = rmci_region_mrank(r, rank);
    MPI_Win win = rmci_region_win(r);
    MPI_Datatype dt = mpi_type(op, width);
    if (!req) {
        uint64_t in = 0, cmp = 0, out = 0;
        store_fetched(&in, width, a);
        store_fetched(&cmp, width, b);
        /* On oversubscribed processors a fetching atomic (but CAS) is waited yielding (MPICH's
         * flush spins, and the target may need this processor), and the pair's other operations
         * stay as they were. MPI promises only that the result has arrived when the request
         * completes; MPICH sends it after applying the operation at the target (UCX atomics and
         * its active-message path alike), so the atomic is then performed, as the blocking
         * atomics promise, and needs no mark. */
        MPI_Request rq = MPI_REQUEST_NULL;
        int yielding = rmci_oversubscribed() && op != RMCI_AMO_add && op != RMCI_AMO_cas;
        st = mpi_issue(op, dt, &in, &cmp, &out, mr, t->disp, win, yielding ? &rq : NULL);
        if (st == RMC_OK) /* (a failed wait flushes: in, cmp and out must not outlive the call) */
            st = yielding ? rmci_wait_yielding(r, rank, kind, range, &rq, 1, "rmc_amo")
                          : rmci_flush(r, rank);
        if (st == RMC_OK && op != RMCI_AMO_add)
            memcpy(fetched, &out, (size_t)width);
        return st;
    }
    struct rmc_request *q = rmci_req_alloc();
    mpi_nb_t *s = q ? rmci_calloc(1, sizeof(*s)) : NULL;
    if (!s) {
        if (q)
            rmci_req_release(q);
        return rmci_fail(RMC_ERR_NOMEM, "rmc_amo", "no memory for a request");
    }
    q->cb_buf = s;
    store_fetched(&s->a, width, a);
    store_fetched(&s->b, width, b);
    s->rank = mr;
    s->win = win;
    void *res = op == RMCI_AMO_add ? (void *)&s->res : fetched;
    st = mpi_issue(op, dt, &s->a, &s->b, res, mr, t->disp, win,
                   op == RMCI_AMO_cas ? NULL : &q->mpi[0]);
    if (st != RMC_OK) {
        rmci_req_release(q);
        return st;
    }
    if (op == RMCI_AMO_cas) {
        q->on_complete = cas_complete;
        q->win = win;
    } else
        q->nmpi = 1;
    *req = q; /* handed out (waitable) also when the fall-back flush fails */
    /* a node-local word: this origin's later puts and gets of it are loads and stores, which
     * consult no conflict state, so the atomic completes now (as node-local accumulates do) */
    if (t->local)
        return rmci_flush(r, rank);
    return rmci_mark(r, rank, kind, range);
}

/* ------------------------------------------------------------------------------ front end --- */

/* Targets this rank sent non-blocking atomics on registered memory to (active messages; no pair
 * records them, unlike those on regions) since its last fence of them: a fence waits for their
 * replies (rmci_fence calls amo_fence first). */
static void nb_sent(int rank)
{
    if (amo.nb_to && !amo.nb_to[rank]) {
        amo.nb_to[rank] = 1;
        amo.nb_count++;
    }
}

static rmc_status_t amo_fence(int target)
{
    rmc_status_t st = RMC_OK;
    int end = target < 0 ? RMCI.nranks : target + 1;
    for (int t = target < 0 ? 0 : target; amo.nb_count && t < end; t++)
        if (amo.nb_to[t]) {
            rmc_status_t q = rmci_am_quiet(t);
            if (q == RMC_OK) {
                amo.nb_to[t] = 0;
                amo.nb_count--;
            }
            rmci_keep(&st, q);
        }
    return st;
}

/* Atomic on registered memory of `rank` (address in no region). */
static rmc_status_t registered_amo(int op, int width, void *dst, uint64_t a, uint64_t b,
                                   void *fetched, int rank, rmc_request_h *req)
{
    amo_wire_t m = {(uint64_t)(uintptr_t)dst, a, b, 0, (uint16_t)op, (uint16_t)width};
    if (rank != RMCI.rank) {
        rmc_status_t st = wire_call(amo.id_reg, &m, fetched, rank, req);
        if (st == RMC_OK && req)
            nb_sent(rank); /* no pair records it: fences wait for it (amo_fence) */
        return st;
    }
    uint64_t old = 0;
    apply_ctx_t c = {&m, &old};
    rmc_status_t st = rmci_reg_access((uintptr_t)dst, (size_t)width, wire_apply, &c);
    if (st == RMC_OK)
        store_fetched(fetched, width, old);
    return st;
}

/* Thread mode, target on another node: the target executes it. */
static rmc_status_t thread_remote_amo(int op, int width, const rmci_target_t *t, uint64_t a,
                                      uint64_t b, void *fetched, int rank, rmc_request_h *req)
{
    /* location consistency with outstanding RMA to the word (not with this origin's other
     * atomics: the target serves its messages in order) */
    rmci_range_t range = rmci_range(t->disp, (size_t)width);
    rmc_status_t st = rmci_order(t->region, rank, RMCI_CS_AM, range);
    if (st != RMC_OK)
        return st;
    RMCI_STAT(remote_ops, 1);
    amo_wire_t m = {(uint64_t)t->disp, a, b, rmci_region_id(t->region), (uint16_t)op,
                    (uint16_t)width};
    st = wire_call(amo.id_region, &m, fetched, rank, req);
    /* a non-blocking one is outstanding until its reply: this origin's later MPI operations on the
     * pair, fences (the pair is in the dirty list) and the region's free wait for it
     * (rmci_am_quiet) */
    if (st == RMC_OK && req)
        st = rmci_mark(t->region, rank, RMCI_CS_AM, range);
    return st;
}

static rmc_status_t amo_op(int op, int width, const void *dst, uint64_t a, uint64_t b,
                           void *fetched, int rank, rmc_request_h *req, int nb, const char *fn)
{
    RMCI_SERIAL();
    if (req)
        *req = RMC_REQUEST_NULL;
    RMCI_CHECK_INIT(fn);
    if (RMCI_UNLIKELY(!amo.up))
        return rmci_fail(RMC_ERR_UNSUPPORTED, fn, "the atomics layer is not up");
    /* a node-local CPU atomic counts as a load/store operation for the polls (as rmc_put's
     * node-local copy does); the rest of a communicating call's share is charged below */
    RMCI_POLL_UNITS(1);
    RMCI_CHECK_RANK(fn, rank);
    RMCI_CHECK_ARG(op == RMCI_AMO_add || fetched, RMC_ERR_ARG, fn, "NULL fetched pointer");
    RMCI_CHECK_ARG(!nb || req, RMC_ERR_ARG, fn, "NULL request pointer");
    if (RMCI_UNLIKELY((uintptr_t)dst & (uintptr_t)(width - 1)))
        return rmci_fail(RMC_ERR_ALIGN, fn, "address %p is not %d-byte aligned", dst, width);
    void *out = op == RMCI_AMO_add ? NULL : fetched;
    rmc_request_h *r = nb ? req : NULL;
    rmci_target_t t;
    rmc_status_t st = rmci_resolve(rank, dst, (size_t)width, &t);
    if (RMCI_LIKELY(st == RMC_OK && t.local && amo.mode == RMC_AMO_MODE_THREAD)) {
        RMCI_STAT(local_ops, 1);
        store_fetched(out, width, cpu_amo(t.local, op, width, a, b));
        RMCI_OPC(atomic, (size_t)width);
        return RMC_OK;
    }
    RMCI_POLL_UNITS(RMCI_POLL_CALL - 1);
    unsigned long nerr = rmci_error_count(); /* did the callee below record its failure? */
    if (st == RMC_OK)
        st = amo.mode == RMC_AMO_MODE_MPI ? mpi_amo(op, width, &t, a, b, fetched, rank, r)
                                          : thread_remote_amo(op, width, &t, a, b, out, rank, r);
    else if (st == RMC_ERR_NOT_REGION)
        st = registered_amo(op, width, (void *)dst, a, b, out, rank, r);
    if (RMCI_UNLIKELY(st != RMC_OK && rmci_error_count() != nerr)) /* recorded where it happened */
        return rmci_in(st, fn);
    if (RMCI_UNLIKELY(st != RMC_OK))
        return rmci_fail(st, fn, "%d-byte atomic at %p on rank %d: %s", width, dst, rank,
                         rmc_status_string(st));
    RMCI_OPC(atomic, (size_t)width); /* (the calls that succeeded, as every operation's) */
    return st;
}

/* The public functions, from the table in rmc/amo.h. */
#define U_(T, x) ((uint64_t)(T)(x))
#define AMO_DEF_FETCH_(op, sfx, T)                                                                 \
    rmc_status_t rmc_amo_##op##_##sfx(void *d, T v, T *f, int rank)                                \
    {                                                                                              \
        return amo_op(RMCI_AMO_##op, sizeof(T), d, U_(T, v), 0, f, rank, NULL, 0, __func__);       \
    }                                                                                              \
    rmc_status_t rmc_amo_##op##_##sfx##_nb(void *d, T v, T *f, int rank, rmc_request_h *q)         \
    {                                                                                              \
        return amo_op(RMCI_AMO_##op, sizeof(T), d, U_(T, v), 0, f, rank, q, 1, __func__);          \
    }
#define AMO_DEF_CAS_(op, sfx, T)                                                                   \
    rmc_status_t rmc_amo_##op##_##sfx(void *d, T c, T v, T *f, int rank)                           \
    {                                                                                              \
        return amo_op(RMCI_AMO_##op, sizeof(T), d, U_(T, v), U_(T, c), f, rank, NULL, 0,           \
                      __func__);                                                                   \
    }                                                                                              \
    rmc_status_t rmc_amo_##op##_##sfx##_nb(void *d, T c, T v, T *f, int rank, rmc_request_h *q)    \
    {                                                                                              \
        return amo_op(RMCI_AMO_##op, sizeof(T), d, U_(T, v), U_(T, c), f, rank, q, 1, __func__);   \
    }
#define AMO_DEF_ADD_(op, sfx, T)                                                                   \
    rmc_status_t rmc_amo_##op##_##sfx(void *d, T v, int rank)                                      \
    {                                                                                              \
        return amo_op(RMCI_AMO_##op, sizeof(T), d, U_(T, v), 0, NULL, rank, NULL, 0, __func__);    \
    }                                                                                              \
    rmc_status_t rmc_amo_##op##_##sfx##_nb(void *d, T v, int rank, rmc_request_h *q)               \
    {                                                                                              \
        return amo_op(RMCI_AMO_##op, sizeof(T), d, U_(T, v), 0, NULL, rank, q, 1, __func__);       \
    }
#define AMO_DEF_LOAD_(op, sfx, T)                                                                  \
    rmc_status_t rmc_amo_##op##_##sfx(const void *s, T *f, int rank)                               \
    {                                                                                              \
        return amo_op(RMCI_AMO_##op, sizeof(T), s, 0, 0, f, rank, NULL, 0, __func__);              \
    }

RMC_AMO_TABLE(AMO_DEF_FETCH_, AMO_DEF_CAS_, AMO_DEF_ADD_, AMO_DEF_LOAD_)

/* ------------------------------------------------------------------------- init / finalize --- */

/* "mpi" -> RMC_AMO_MODE_MPI, "thread" -> RMC_AMO_MODE_THREAD, "auto" -> 0, else -1 */
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

void rmci_mutex_shutdown(void);   /* mutex.c: drops the sets (their regions go with rmc_finalize) */
void rmci_mutex_serve_gone(void); /* mutex.c: passes on the abandoned tickets whose turn came */

/* Every waiting round passes on this rank's abandoned mutex tickets (mutex.c) when their turn comes
 */
static void amo_poll(int full, void *arg)
{
    (void)arg;
    if (full)
        rmci_mutex_serve_gone();
}

static void amo_finalize(void *arg)
{
    (void)arg;
    if (!amo.up)
        return;
    rmci_mutex_shutdown();
    rmci_set_am_quiet(NULL);
    rmci_set_am_fence(NULL);
    free(amo.nb_to);
    rmci_am_remove_internal(amo.id_region);
    rmci_am_remove_internal(amo.id_reg);
    pthread_mutex_destroy(&amo.lock);
    free(amo.v);
    memset(&amo, 0, sizeof(amo));
}

static rmc_status_t amo_init(void *arg)
{
    (void)arg;
    memset(&amo, 0, sizeof(amo));
    int req = parse_mode(rmc_knob_value("RMC_AMO"));
    /* all ranks must ask for the same mode: agree on min and max */
    long long v[2] = {req, -req};
    rmc_status_t st = rmci_agree_vals(RMCI.comm, RMC_OK, v, 2, "rmc_init");
    if (st != RMC_OK)
        return st;
    int lo = (int)v[0], hi = (int)-v[1];
    if (lo < 0 || lo != hi)
        return rmci_fail(RMC_ERR_ARG, "rmc_init",
                         "RMC_AMO=%s: unknown, or not the same on every rank (mpi|thread|auto)",
                         rmc_knob_value("RMC_AMO"));
    /* auto (measured, see bench/bench_amo.c): CPU atomics when every word is node-local (one node)
     * or when every rank runs a progress thread that serves remote ones; MPI atomics otherwise */
    if (lo == 0)
        lo = (RMCI.node_count == 1 || rmci_progress_thread_everywhere()) ? RMC_AMO_MODE_THREAD
                                                                         : RMC_AMO_MODE_MPI;
    amo.mode = (rmc_amo_mode_t)lo;
    if (amo.mode == RMC_AMO_MODE_THREAD)
        rmci_set_am_quiet(rmci_am_quiet);
    /* atomics on registered memory are active messages in either mode */
    amo.nb_to = calloc((size_t)RMCI.nranks, 1);
    rmci_set_am_fence(amo_fence);
    pthread_mutex_init(&amo.lock, NULL);
    amo.up = 1;
    static int registered_tag; /* any non-NULL argument marks registered memory */
    st = amo.nb_to
             ? rmci_am_add_internal(h_amo, NULL, &amo.id_region)
             : rmci_fail(RMC_ERR_NOMEM, "rmc_init", "the atomics' table of %d ranks", RMCI.nranks);
    if (st == RMC_OK)
        st = rmci_am_add_internal(h_amo, &registered_tag, &amo.id_reg);
    st = rmci_agree(RMCI.comm, st, "rmc_init");
    if (st != RMC_OK)
        amo_finalize(NULL);
    return st;
}

static const rmc_layer_t amo_layer = {
    .name = "amo",
    .init = amo_init,
    .finalize = amo_finalize,
    .region_created = amo_region_created,
    .region_freed = amo_region_freed,
    .poll = amo_poll,
};

/* Registered before main(), after the progress layer (its active messages carry atomics). */
__attribute__((constructor(202))) static void amo_register(void)
{
    rmc_layer_register(&amo_layer);
}
