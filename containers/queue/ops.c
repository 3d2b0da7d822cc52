/* Push and pop: one state machine for every queue kind, run to the end by a blocking call or step
 * by step by rmc_test / rmc_wait (a custom request) for the _nb forms.
 *
 * A push or pop of n elements:
 *   reserve   fetch-and-add n on its counter (TAIL for a push, HEAD for a pop): positions
 *             [pos, pos+n), then check them against the bound (a push: the slots must have been
 *             read, FREED or HEAD + capacity; a pop: they must have been written, READY or TAIL),
 *             first with the last value seen of the bound, then with a fresh atomic read;
 *   rollback  when they do not fit: if this is the last reservation (the counter still reads
 *             pos+n) compare-and-swap it back to pos; if a later one exists, wait: either it rolls
 *             back first (the last one always can) or the bound moves and this reservation fits;
 *   recheck   after a rollback, both counters again: room, reserve again, by compare-and-swap
 *             at the position read (so it never lands behind a reservation that cannot fit); the
 *             last reservation does not fit, wait for it to go (or fit); else the call fails
 *             (FULL / EMPTY) having taken nothing. The operation after one that failed starts
 *             here: a caller retrying a push that cannot fit reads and reserves nothing, instead
 *             of holding a reservation that makes the others' pushes wait or fail;
 *   move      put (push) or get (pop) of the slots, one transfer or two when they wrap around; a
 *             push to a CIRCULAR or CHECKSUM queue is then completed at the host (rmc_fence); a
 *             CHECKSUM pop checks every slot's checksum and reads again (through the bound check:
 *             the pusher may have rolled back) until they hold;
 *   mark      CIRCULAR push: READY from pos to pos+n in order (compare-and-swap, waiting for
 *             earlier pushes), or a fetch-and-add under RMC_PROMISE_PUSH; CIRCULAR and CHECKSUM
 *             pop: FREED likewise (RMC_PROMISE_POP: fetch-and-add). FAST queues mark nothing:
 *             their phases are separated by barriers.
 * Costs: the reserve's atomic, the move's write or read, the mark's atomic; a stale bound adds a
 * read of it, contention adds retries. A blocking operation runs the common case straight (run);
 * the machine (advance) takes over at the first step that does not succeed at once. */
#define _GNU_SOURCE
#include "config.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <rmc/progress.h>
#include "queue_impl.h"

enum {
    S_RESERVE,
    S_RESERVED,
    S_BOUND,
    S_BOUNDED,
    S_ROLLBACK,
    S_ROLLEDBACK,
    S_RECHECK,   /* after a rollback: the reservation counter again, */
    S_RECHECKED, /* then the bound: room now (a reservation before ours was taken back)? */
    S_RECHECKB,
    S_CASRES, /* reserve [pos, pos+n) if the counter still reads pos */
    S_CASRESED,
    S_MOVE,
    S_MOVED,
    S_MARK,
    S_MARKED,
    S_RPC,   /* send the operation to the host (rpc.c) */
    S_RPCED, /* its reply is in */
    S_DONE
};

/* Reservations a push (pop) tries again when, after taking its own back (or after the failure of
 * the caller's previous one), the counters show room (elements): by compare-and-swap, each lost
 * to another operation's reservation. After that many, it reserves by fetch-and-add (which cannot
 * lose), and if that one does not fit either the call fails (FULL / EMPTY). */
#define QAGAIN 1000
/* How long an operation waits for reservations before its own that cannot fit to go, without
 * seeing room meanwhile (seconds): their operations normally take them back at once, but an
 * untested non-blocking one of a rank busy elsewhere (e.g. in a plain MPI collective) may hold one
 * indefinitely; then FULL / EMPTY, as if that reservation were an element. */
#define QWAIT_S 0.5

typedef struct qop {
    struct rmc_queue *q;
    int push, nb, state;
    unsigned promise;
    size_t n;
    const char *src; /* push: n slots (packed, or the caller's elements when direct) */
    char *land;      /* pop: where the n slots arrive (the caller's elements when direct) */
    void *out;       /* pop: the caller's elements */
    int64_t pos, v;
    rmc_request_h r[2];
    unsigned spins;
    const char *fn;
    /* the RPC path: the payload (header, then a push's slots), the reply (a pop's: in `rep`, its
     * slots then at `land`; a push's: in rh) */
    char *pay, *rep;
    size_t plen, rcap, rlen;
    unsigned tries;   /* RPCs told to retry */
    unsigned again;   /* reservations made again after a rollback (S_RECHECK) */
    double wait_end;  /* waiting for reservations that cannot fit: until then (0: not waiting) */
    rmc_status_t rst; /* the last RPC's status */
    char rh[QR_REPLY_HDR];
    char mem[]; /* _nb: the operation's own slots (with the RPC's header and reply before them) */
} qop_t;

static inline int ctr_res(const qop_t *o)
{
    return o->push ? QC_TAIL : QC_HEAD;
}
static inline int ctr_bound(const qop_t *o)
{
    if (o->push)
        return o->q->kind == RMC_QUEUE_FAST ? QC_HEAD : QC_FREED;
    return o->q->kind == RMC_QUEUE_CIRCULAR ? QC_READY : QC_TAIL;
}
/* The counter a finished move advances, or -1. */
static inline int ctr_mark(const qop_t *o)
{
    if (o->q->kind == RMC_QUEUE_FAST)
        return -1;
    if (o->push)
        return o->q->kind == RMC_QUEUE_CIRCULAR ? QC_READY : -1;
    return QC_FREED;
}
static inline void *ctr_addr(const struct rmc_queue *q, int c)
{
    return q->ctl + QC_STRIDE * c;
}
/* Records a value read of counter c. READY and FREED only grow: the largest value seen is a safe
 * bound. TAIL and HEAD go back when a reservation is rolled back, so only the latest read counts
 * (a FAST queue reads them only in phases where they do not move: the pushes' HEAD, the pops'
 * TAIL; a CHECKSUM pop checks what it reads). */
static inline void saw(struct rmc_queue *q, int c, int64_t v)
{
    if (v > q->seen[c] || c == QC_TAIL || c == QC_HEAD)
        q->seen[c] = v;
}
static inline int fits(const qop_t *o)
{
    int64_t b = o->q->seen[ctr_bound(o)], end = o->pos + (int64_t)o->n;
    return o->push ? end - b <= (int64_t)o->q->cap : end <= b;
}

/* After taking its own reservation back, with the reservation counter at o->pos: does the last
 * reservation made not fit (a push: more slots reserved than the ring holds beyond the freed
 * ones; a pop: more reserved than there are elements)? Its operation takes it back or waits for
 * room, so this one waits too instead of failing for it. */
static inline int doomed_ahead(const qop_t *o)
{
    int64_t b = o->q->seen[ctr_bound(o)];
    return o->push ? o->pos - b > (int64_t)o->q->cap : o->pos > b;
}

/* May the operation wait (more) for a reservation before its own that cannot fit? (QWAIT_S from
 * the first such wait since it last saw room.) */
static int may_wait(double *wait_end)
{
    double t = rmcc_now();
    if (*wait_end == 0)
        *wait_end = t + QWAIT_S;
    return t < *wait_end;
}

/* A waiting round of a blocking operation: RMC's progress goes on (rmc_wait_round yields only
 * when the ranks outnumber the processors), and other threads of this rank get RMC's thread lock
 * (the push this pop waits for may be theirs): the operation's state is its own (op_scratch). */
static void pause_round(unsigned *spins)
{
    rmc_wait_round(spins);
    rmc_thread_pause();
}

/* The packed slots of one blocking operation: the queue's scratch buffer, or, when RMC is
 * thread-safe (another thread's operation on this queue may run while this one waits), a buffer of
 * its own in *own (free it afterwards). */
static rmc_status_t op_scratch(struct rmc_queue *q, size_t bytes, char **own, char **buf,
                               const char *fn)
{
    *own = NULL;
    if (!rmc_thread_safe()) {
        rmc_status_t st = rmcc_scratch(&q->buf, &q->bufcap, bytes, fn);
        *buf = q->buf;
        return st;
    }
    if (!(*own = malloc(bytes ? bytes : 1)))
        return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes of scratch", bytes);
    *buf = *own;
    return RMC_OK;
}

/* ------------------------------------------------------------------- remote operations --- */

static rmc_status_t faa(qop_t *o, int c, int64_t add)
{
    void *a = ctr_addr(o->q, c);
    return o->nb ? rmc_amo_fetch_add_i64_nb(a, add, &o->v, o->q->host, &o->r[0])
                 : rmc_amo_fetch_add_i64(a, add, &o->v, o->q->host);
}
static rmc_status_t add(qop_t *o, int c, int64_t v)
{
    void *a = ctr_addr(o->q, c);
    return o->nb ? rmc_amo_add_i64_nb(a, v, o->q->host, &o->r[0])
                 : rmc_amo_add_i64(a, v, o->q->host);
}
static rmc_status_t cas(qop_t *o, int c, int64_t cmp, int64_t val)
{
    void *a = ctr_addr(o->q, c);
    return o->nb ? rmc_amo_cas_i64_nb(a, cmp, val, &o->v, o->q->host, &o->r[0])
                 : rmc_amo_cas_i64(a, cmp, val, &o->v, o->q->host);
}
static rmc_status_t load(qop_t *o, int c)
{
    /* there is no non-blocking atomic read: a fetch-and-add of 0 is one */
    void *a = ctr_addr(o->q, c);
    return o->nb ? rmc_amo_fetch_add_i64_nb(a, 0, &o->v, o->q->host, &o->r[0])
                 : rmc_amo_load_i64(a, &o->v, o->q->host);
}

/* Fills in the checksums of a CHECKSUM push's slots (their positions are known now). */
static void stamp(qop_t *o)
{
    struct rmc_queue *q = o->q;
    char *s = (char *)o->src;
    for (size_t i = 0; i < o->n; i++) {
        uint64_t ck = rmcc_qck(s + i * q->slot, q->esz, o->pos + (int64_t)i);
        memcpy(s + i * q->slot + q->esz, &ck, QCK_BYTES);
    }
}

/* Do every slot's checksum hold? */
static int checked(const qop_t *o)
{
    const struct rmc_queue *q = o->q;
    for (size_t i = 0; i < o->n; i++) {
        uint64_t ck;
        memcpy(&ck, o->land + i * q->slot + q->esz, QCK_BYTES);
        if (ck != rmcc_qck(o->land + i * q->slot, q->esz, o->pos + (int64_t)i))
            return 0;
    }
    return 1;
}

/* One transfer of the move: `bytes` at `remote` from / to offset `at` of the operation's slots
 * (k: which of the two requests of an _nb operation). */
static inline rmc_status_t move_part(qop_t *o, char *remote, size_t at, size_t bytes, int k)
{
    struct rmc_queue *q = o->q;
    if (o->push && q->kind != RMC_QUEUE_FAST) /* completed at the host by the fence next */
        return rmc_put_nb(o->src + at, remote, bytes, q->host, NULL);
    if (o->push)
        return o->nb ? rmc_put_nb(o->src + at, remote, bytes, q->host, &o->r[k])
                     : rmc_put(o->src + at, remote, bytes, q->host);
    return o->nb ? rmc_get_nb(remote, o->land + at, bytes, q->host, &o->r[k])
                 : rmc_get(remote, o->land + at, bytes, q->host);
}

/* The move: one transfer of the slots of [pos, pos+n), two when they wrap around the ring. */
static rmc_status_t move(qop_t *o)
{
    struct rmc_queue *q = o->q;
    size_t s = rmcc_slot(q, o->pos), first = q->cap - s < o->n ? q->cap - s : o->n;
    rmc_status_t st = move_part(o, q->data + s * q->slot, 0, first * q->slot, 0);
    if (st == RMC_OK && first < o->n)
        st = move_part(o, q->data, first * q->slot, (o->n - first) * q->slot, 1);
    return st;
}

/* ------------------------------------------------------------------------ the machine --- */

/* Advances o. Blocking operations run to the end; _nb ones return when a request is outstanding
 * or they must wait (*done = 0). Returns the operation's status once *done. */
static rmc_status_t advance(qop_t *o, int *done)
{
    struct rmc_queue *q = o->q;
    rmc_status_t st = RMC_OK;
    *done = 0;
    for (;;) {
        for (int k = 0; o->nb && k < 2; k++) /* outstanding requests first (_nb only) */
            if (o->r[k]) {
                int fin = 0;
                st = rmc_test(&o->r[k], &fin);
                if (o->state == S_RPCED) /* an RPC's status is the handler's */
                    o->rst = st, st = RMC_OK;
                if (st != RMC_OK)
                    return *done = 1, st;
                if (!fin)
                    return RMC_OK;
            }
        switch (o->state) {
        case S_RESERVE:
            st = faa(o, ctr_res(o), (int64_t)o->n);
            o->state = S_RESERVED;
            break;
        case S_RESERVED:
            o->pos = o->v;
            o->state = fits(o) ? S_MOVE : S_BOUND;
            break;
        case S_BOUND:
            st = load(o, ctr_bound(o));
            o->state = S_BOUNDED;
            break;
        case S_BOUNDED:
            saw(q, ctr_bound(o), o->v);
            o->state = fits(o) ? S_MOVE : S_ROLLBACK;
            break;
        case S_ROLLBACK:
            st = cas(o, ctr_res(o), o->pos + (int64_t)o->n, o->pos);
            o->state = S_ROLLEDBACK;
            break;
        case S_ROLLEDBACK:
            if (o->v == o->pos + (int64_t)o->n) { /* taken back: nothing happened */
                if (o->again >= QAGAIN)
                    return *done = 1, o->push ? RMC_ERR_FULL : RMC_ERR_EMPTY;
                o->state = S_RECHECK; /* an earlier reservation may be one taken back too */
            } else {
                o->state = S_BOUND; /* a later reservation exists: wait for it or for room */
            }
            if (o->nb)
                return RMC_OK;
            pause_round(&o->spins);
            break;
        case S_RECHECK:
            st = load(o, ctr_res(o));
            o->state = S_RECHECKED;
            break;
        case S_RECHECKED:
            o->pos = o->v; /* where a reservation would start now */
            st = load(o, ctr_bound(o));
            o->state = S_RECHECKB;
            break;
        case S_RECHECKB:
            saw(q, ctr_bound(o), o->v);
            if (fits(o)) { /* room: reserve there, unless another reservation came first */
                o->wait_end = 0;
                o->state = o->again++ < QAGAIN ? S_CASRES : S_RESERVE;
                break;
            }
            /* every reservation there fits: really full (empty); or waited long enough */
            if (!doomed_ahead(o) || !may_wait(&o->wait_end))
                return *done = 1, o->push ? RMC_ERR_FULL : RMC_ERR_EMPTY;
            /* the last reservation does not fit: it is taken back (the last one always can) or
             * the bound moves; then look again (this operation holds nothing meanwhile) */
            o->state = S_RECHECK;
            if (o->nb)
                return RMC_OK;
            pause_round(&o->spins);
            break;
        case S_CASRES:
            st = cas(o, ctr_res(o), o->pos, o->pos + (int64_t)o->n);
            o->state = S_CASRESED;
            break;
        case S_CASRESED:
            /* reserved where it fits; else o->v is where the counter is now: look again */
            o->state = o->v == o->pos ? S_MOVE : S_RECHECKED;
            break;
        case S_MOVE:
            if (o->push && q->kind == RMC_QUEUE_CHECKSUM)
                stamp(o);
            st = move(o);
            o->state = S_MOVED;
            break;
        case S_MOVED:
            if (o->push && q->kind != RMC_QUEUE_FAST) {
                atomic_thread_fence(memory_order_release);
                st = rmc_fence(q->host); /* the slots are at the host before they are marked */
            } else if (!o->push && q->kind == RMC_QUEUE_CHECKSUM && !checked(o)) {
                o->state = S_BOUND; /* not written yet (or the pusher rolled back) */
                if (o->nb)
                    return RMC_OK;
                pause_round(&o->spins);
                break;
            }
            o->state = ctr_mark(o) < 0 ? S_DONE : S_MARK;
            break;
        case S_MARK:
            if (rmcc_unordered(o->promise, o->push)) {
                st = add(o, ctr_mark(o), (int64_t)o->n); /* no waiting for earlier ones */
                o->state = S_DONE;
            } else {
                st = cas(o, ctr_mark(o), o->pos, o->pos + (int64_t)o->n);
                o->state = S_MARKED;
            }
            break;
        case S_MARKED:
            if (o->v == o->pos) {
                o->state = S_DONE;
                break;
            }
            if (o->v > o->pos) {
                /* an unordered mark (RMC_PROMISE_PUSH, an RPC push) counted past this position:
                 * the ordered one can never match, so this one counts unordered too (it hung) */
                st = add(o, ctr_mark(o), (int64_t)o->n);
                o->state = S_DONE;
                break;
            }
            o->state = S_MARK; /* earlier positions are not marked yet */
            if (o->nb)
                return RMC_OK;
            pause_round(&o->spins);
            break;
        case S_RPC:
            o->state = S_RPCED;
            o->rlen = 0;
            o->rst = o->nb ? rmc_am_send_nb(q->host, rmcc.rpc_id, o->pay, o->plen, o->rep, o->rcap,
                                            &o->rlen, &o->r[0])
                           : rmc_am_send(q->host, rmcc.rpc_id, o->pay, o->plen, o->rep, o->rcap,
                                         &o->rlen);
            break;
        case S_RPCED: {
            int32_t out = RMC_ERR_INTERNAL;
            if (o->rst != RMC_OK)
                return *done = 1, rmcc_fail(o->rst, o->fn, "the RPC to the host (rank %d): %s",
                                            q->host, rmc_status_string(o->rst));
            if (o->rlen >= QR_REPLY_HDR)
                memcpy(&out, o->rep, 4);
            if (out == RMC_ERR_RETRY) { /* another operation in flight at the host */
                if (++o->tries >= RMCC_QRPC_TRIES) {
                    o->state = S_RESERVE; /* one-sided, from the start */
                    break;
                }
                o->state = S_RPC;
                if (o->nb)
                    return RMC_OK;
                pause_round(&o->spins);
                break;
            }
            if (out == RMC_OK && !o->push && o->rlen != QR_REPLY_HDR + o->n * q->slot)
                out = RMC_ERR_INTERNAL;
            if (out != RMC_OK && out != RMC_ERR_FULL && out != RMC_ERR_EMPTY)
                return *done = 1, rmcc_fail(RMC_ERR_INTERNAL, o->fn,
                                            "the host (rank %d) answered an RPC with %d (%zu "
                                            "bytes)",
                                            q->host, (int)out, o->rlen);
            return *done = 1, (rmc_status_t)out; /* a pop's slots are at land */
        }
        case S_DONE:
            *done = 1;
            return RMC_OK;
        }
        if (st != RMC_OK)
            return *done = 1, st;
    }
}

/* A blocking operation, its common case in a straight line: the reservation fits the bound seen
 * last, the move succeeds, a CHECKSUM pop finds its entries written, the mark wins at once. At the
 * first step that does not, the state machine carries on from there (a bound to read, a rollback,
 * entries to read again, earlier marks to wait for, an error). About two thirds of the
 * instructions of walking the machine, for a node-local push. */
static rmc_status_t run(qop_t *o)
{
    struct rmc_queue *q = o->q;
    int done, mark = ctr_mark(o);
    rmc_status_t st = faa(o, ctr_res(o), (int64_t)o->n);
    if (RMCC_UNLIKELY(st != RMC_OK))
        return st;
    o->pos = o->v;
    o->state = S_BOUND;
    if (RMCC_UNLIKELY(!fits(o)))
        return advance(o, &done);
    if (o->push && q->kind == RMC_QUEUE_CHECKSUM)
        stamp(o);
    o->state = S_MOVED;
    if (RMCC_UNLIKELY((st = move(o)) != RMC_OK))
        return st;
    if (o->push && q->kind != RMC_QUEUE_FAST) {
        atomic_thread_fence(memory_order_release);
        if (RMCC_UNLIKELY((st = rmc_fence(q->host)) != RMC_OK))
            return st;
    } else if (!o->push && q->kind == RMC_QUEUE_CHECKSUM && !checked(o)) {
        return advance(o, &done); /* S_MOVED: reads again through the bound check */
    }
    if (mark < 0)
        return RMC_OK;
    if (rmcc_unordered(o->promise, o->push))
        return add(o, mark, (int64_t)o->n);
    if (RMCC_UNLIKELY((st = cas(o, mark, o->pos, o->pos + (int64_t)o->n)) != RMC_OK))
        return st;
    if (RMCC_LIKELY(o->v == o->pos))
        return RMC_OK;
    o->state = S_MARK; /* earlier positions are not marked yet */
    pause_round(&o->spins);
    return advance(o, &done);
}

/* Records how a push (pop) of this rank ended: after FULL (EMPTY) the next one starts at the
 * recheck (read the counters, reserve by compare-and-swap where it fits); after success, at the
 * fetch-and-add. */
static inline void outcome(struct rmc_queue *q, int push, rmc_status_t st)
{
    if (st == RMC_OK)
        q->failed[push] = 0;
    else if (st == (push ? RMC_ERR_FULL : RMC_ERR_EMPTY))
        q->failed[push] = 1;
}

/* Unpacks a finished pop's slots into the caller's elements. */
static rmc_status_t unpack(qop_t *o, void *out)
{
    const struct rmc_queue *q = o->q;
    return q->direct ? RMC_OK : rmcc_unpack_n(q->type, o->land, q->slot, out, o->n, o->fn);
}

/* The custom request of an _nb operation. */
static rmc_status_t nb_step(void *state, int *done)
{
    qop_t *o = state;
    rmc_status_t st = advance(o, done);
    if (*done) {
        o->q->obj.pending--; /* (rmcc_quiesce) */
        outcome(o->q, o->push, st);
        if (st == RMC_OK && !o->push && o->q->direct)
            memcpy(o->out, o->land, o->n * o->q->slot);
        else if (st == RMC_OK && !o->push)
            st = unpack(o, o->out);
        for (int k = 0; k < 2; k++) /* after a failure: nothing may stay outstanding */
            if (o->r[k])
                rmc_wait(&o->r[k]);
        free(o);
    }
    return st;
}

/* ------------------------------------------------------------------------- the host --- */

/* RMC_PROMISE_LOCAL: the host, nothing concurrent: plain loads and stores. */
static rmc_status_t local_op(struct rmc_queue *q, int push, const char *src, char *land, size_t n)
{
    int64_t *c = (int64_t *)(void *)q->lctl;
#define CTR(i) (*(int64_t *)(void *)((char *)c + QC_STRIDE * (i)))
    qop_t o; /* the fields the helpers read; nothing zero-filled (the host's fast path) */
    o.q = q;
    o.push = push;
    o.n = n;
    o.src = src;
    o.land = land;
    int bound = ctr_bound(&o), res = ctr_res(&o);
    o.pos = __atomic_load_n(&CTR(res), __ATOMIC_ACQUIRE);
    q->seen[bound] = __atomic_load_n(&CTR(bound), __ATOMIC_ACQUIRE);
    if (!fits(&o))
        return push ? RMC_ERR_FULL : RMC_ERR_EMPTY;
    size_t s = rmcc_slot(q, o.pos), first = q->cap - s < n ? q->cap - s : n;
    if (push && q->kind == RMC_QUEUE_CHECKSUM)
        stamp(&o);
    if (push) {
        memcpy(q->ldata + s * q->slot, src, first * q->slot);
        if (first < n)
            memcpy(q->ldata, src + first * q->slot, (n - first) * q->slot);
    } else {
        memcpy(land, q->ldata + s * q->slot, first * q->slot);
        if (first < n)
            memcpy(land + first * q->slot, q->ldata, (n - first) * q->slot);
        if (q->kind == RMC_QUEUE_CHECKSUM && !checked(&o))
            return RMC_ERR_EMPTY; /* reserved by a push that has not written: nothing taken */
    }
    __atomic_store_n(&CTR(res), o.pos + (int64_t)n, __ATOMIC_RELEASE);
    int mark = ctr_mark(&o);
    if (mark >= 0)
        __atomic_store_n(&CTR(mark), o.pos + (int64_t)n, __ATOMIC_RELEASE);
#undef CTR
    return RMC_OK;
}

/* ------------------------------------------------------------------------ entry points --- */

/* Which path an operation of n elements takes (*rpc: 1 for RPC): forced by the promise's path
 * flag or q's default (op_check refused what cannot be), else RPC for a host on another node in
 * thread AMO mode when the elements fit in one active message. */
static rmc_status_t choose_path(const struct rmc_queue *q, int push, size_t n, unsigned promise,
                                int *rpc, const char *fn)
{
    unsigned force = promise & (RMC_PATH_RDMA | RMC_PATH_RPC)
                         ? promise & (RMC_PATH_RDMA | RMC_PATH_RPC)
                         : q->path;
    size_t bytes = n * q->slot, max = rmc_am_max_payload();
    int fits = push ? rmcc_qrpc_header() + bytes <= max : QR_REPLY_HDR + bytes <= max;
    *rpc = 0;
    if (force == RMC_PATH_RDMA || (promise & RMC_PROMISE_LOCAL))
        return RMC_OK;
    if (force == RMC_PATH_RPC) {
        if (!fits)
            return rmcc_fail(RMC_ERR_TOO_BIG, fn,
                             "%zu elements (%zu bytes) do not fit in an active message "
                             "(RMC_AM_MAX_PAYLOAD %zu): no RPC path for them",
                             n, bytes, max);
        *rpc = 1;
        return RMC_OK;
    }
    *rpc = fits && rmc_amo_mode() == RMC_AMO_MODE_THREAD && rmc_same_node(q->host) != 1;
    return RMC_OK;
}

/* Sets up o (its slots at buf, of hdr + QR_REPLY_HDR + n slots) for the RPC path: the header
 * and the slots after it form a push's payload; a pop's reply lands after the header, its slots
 * then at `land`. A push's slots are packed at o->src already (or are copied there next). */
static void rpc_setup(qop_t *o, char *buf, int op)
{
    size_t hdr = rmcc_qrpc_header(), bytes = o->n * o->q->slot;
    rmcc_qrpc_fill(o->q, op, o->n, o->promise, buf);
    o->pay = buf;
    o->plen = hdr + (o->push ? bytes : 0);
    o->rep = o->push ? o->rh : buf + hdr;
    o->rcap = QR_REPLY_HDR + (o->push ? 0 : bytes);
    o->src = buf + hdr;
    o->land = buf + hdr + QR_REPLY_HDR;
    o->state = S_RPC;
}

/* Bytes before an operation's slots in a buffer that may carry its RPC. */
static size_t rpc_room(int rpc)
{
    return rpc ? rmcc_qrpc_header() + QR_REPLY_HDR : 0;
}

rmc_status_t rmcc_queue_op(struct rmc_queue *q, int push, const void *in, void *out, size_t n,
                           unsigned promise, rmc_request_h *req, const char *fn)
{
    size_t bytes = n * q->slot;
    rmc_status_t st;
    if (promise & RMC_PROMISE_LOCAL) {
        const char *src = push ? in : NULL;
        char *land = push ? NULL : out;
        if (!q->direct) {
            if ((st = rmcc_scratch(&q->buf, &q->bufcap, bytes, fn)) != RMC_OK)
                return st;
            if (push && (st = rmcc_pack_n(q->type, in, n, q->buf, q->slot, fn)) != RMC_OK)
                return st;
            src = push ? q->buf : NULL;
            land = push ? NULL : q->buf;
        }
        st = local_op(q, push, src, land, n);
        if (st == RMC_OK && !push && land != out) {
            qop_t o = {.q = q, .n = n, .land = land, .fn = fn};
            st = unpack(&o, out);
        }
        return st;
    }
    int rpc;
    if ((st = choose_path(q, push, n, promise, &rpc, fn)) != RMC_OK)
        return st;
    size_t room = rpc_room(rpc);
    if (req) { /* _nb: the operation owns a copy of its slots */
        qop_t *o = malloc(sizeof(*o) + room + bytes);
        if (!o)
            return rmcc_fail(RMC_ERR_NOMEM, fn, "%zu bytes for a non-blocking operation", bytes);
        *o = (qop_t){.q = q,
                     .push = push,
                     .nb = 1,
                     .promise = promise,
                     .n = n,
                     .fn = fn,
                     .out = out,
                     .src = o->mem,
                     .land = o->mem};
        if (rpc)
            rpc_setup(o, o->mem, push ? QR_PUSH : QR_POP);
        else if (q->failed[push])
            o->state = S_RECHECK;
        if (push && q->direct)
            memcpy((char *)o->src, in, bytes);
        else if (push &&
                 (st = rmcc_pack_n(q->type, in, n, (char *)o->src, q->slot, fn)) != RMC_OK) {
            free(o);
            return st;
        }
        int done = 0;
        q->obj.pending++; /* until nb_step's end: destroy, resize and migrate wait for it */
        st = rmc_request_custom(nb_step, o, req);
        if (st != RMC_OK) {
            q->obj.pending--;
            free(o);
            return st;
        }
        /* start it: the reserve (or the RPC) is issued now */
        st = rmc_test(req, &done);
        return st;
    }
    qop_t o; /* every field set, none zero-filled: this is the hot path */
    o.q = q;
    o.push = push;
    o.nb = 0;
    o.state = S_RESERVE;
    o.promise = promise;
    o.n = n;
    o.out = out;
    o.pos = o.v = 0;
    o.r[0] = o.r[1] = RMC_REQUEST_NULL;
    o.spins = 0;
    o.fn = fn;
    o.tries = 0;
    o.again = 0;
    o.wait_end = 0;
    int direct = q->direct && !rpc;
    char *own = NULL, *buf;
    if (direct) {
        o.src = in;
        o.land = out;
    } else {
        if ((st = op_scratch(q, room + bytes, &own, &buf, fn)) != RMC_OK)
            return st;
        o.src = o.land = buf;
        if (rpc)
            rpc_setup(&o, buf, push ? QR_PUSH : QR_POP);
        if (push && q->direct)
            memcpy((char *)o.src, in, bytes);
        else if (push && (st = rmcc_pack_n(q->type, in, n, (char *)o.src, q->slot, fn)) != RMC_OK) {
            free(own);
            return st;
        }
    }
    int done;
    if (rpc || q->failed[push]) {
        if (!rpc)
            o.state = S_RECHECK;
        st = advance(&o, &done);
    } else {
        st = run(&o);
    }
    outcome(q, push, st);
    if (st == RMC_OK && !push && !direct) {
        if (q->direct)
            memcpy(out, o.land, bytes);
        else
            st = unpack(&o, out);
    }
    free(own);
    return st;
}

/* pop_upto through an RPC: RMC_ERR_RETRY when the host kept answering retry (the caller goes
 * one-sided). `buf` has room for the header, the reply header and max slots. */
static rmc_status_t pop_upto_rpc(qop_t *o, char *buf, size_t max)
{
    o->n = max;
    rpc_setup(o, buf, QR_POP_UPTO);
    for (;;) {
        o->rlen = 0;
        rmc_status_t st =
            rmc_am_send(o->q->host, rmcc.rpc_id, o->pay, o->plen, o->rep, o->rcap, &o->rlen);
        if (st != RMC_OK)
            return rmcc_fail(st, o->fn, "the RPC to the host (rank %d): %s", o->q->host,
                             rmc_status_string(st));
        int32_t out = RMC_ERR_INTERNAL;
        uint32_t cnt = 0;
        if (o->rlen >= QR_REPLY_HDR) {
            memcpy(&out, o->rep, 4);
            memcpy(&cnt, o->rep + 4, 4);
        }
        if (out == RMC_OK &&
            (cnt == 0 || cnt > max || o->rlen != QR_REPLY_HDR + (size_t)cnt * o->q->slot))
            out = RMC_ERR_INTERNAL;
        if (out == RMC_OK) {
            o->n = cnt;
            return RMC_OK;
        }
        if (out == RMC_ERR_EMPTY)
            return out;
        if (out != RMC_ERR_RETRY)
            return rmcc_fail(RMC_ERR_INTERNAL, o->fn,
                             "the host (rank %d) answered an RPC with %d (%zu bytes)", o->q->host,
                             (int)out, o->rlen);
        if (++o->tries >= RMCC_QRPC_TRIES)
            return RMC_ERR_RETRY;
        pause_round(&o->spins);
    }
}

rmc_status_t rmcc_queue_pop_upto(struct rmc_queue *q, void *out, size_t max, size_t *got,
                                 unsigned promise, const char *fn)
{
    *got = 0;
    qop_t o = {.q = q, .promise = promise, .fn = fn, .out = out};
    int bound = ctr_bound(&o);
    int64_t b, h;
    rmc_status_t st;
    if (promise & RMC_PROMISE_LOCAL) {
        rmcc_queued(q, &h, &b); /* b: the pops' bound */
        if (b <= h)
            return RMC_ERR_EMPTY;
        size_t k = b - h < (int64_t)max ? (size_t)(b - h) : max;
        st = rmcc_queue_op(q, 0, NULL, out, k, promise, NULL, fn);
        if (st == RMC_OK)
            *got = k;
        return st;
    }
    int rpc;
    if ((st = choose_path(q, 0, max, promise, &rpc, fn)) != RMC_OK)
        return st;
    char *own = NULL, *buf = NULL;
    if ((rpc || !q->direct) &&
        (st = op_scratch(q, rpc_room(rpc) + max * q->slot, &own, &buf, fn)) != RMC_OK)
        return st;
    if (rpc) {
        st = pop_upto_rpc(&o, buf, max);
        if (st != RMC_ERR_RETRY) {
            if (st == RMC_OK && q->direct)
                memcpy(out, o.land, o.n * q->slot);
            else if (st == RMC_OK)
                st = unpack(&o, out);
            if (st == RMC_OK)
                *got = o.n;
            free(own);
            return st;
        }
        o.n = 0; /* one-sided from here, into the same buffer */
    }
    int direct = q->direct && !rpc, done;
    char *land = direct ? out : rpc ? o.land : buf;
    /* reserve with compare-and-swap: the count depends on what is there. A reservation that
     * counted slots a push had reserved but then took back (a CHECKSUM queue's bound is the
     * pushes' reservations) is taken back in turn, with RMC_ERR_EMPTY from the machine: then
     * again, from the counters as they are now (EMPTY only when nothing is there) */
    for (;;) {
        if ((st = rmc_amo_load_i64(ctr_addr(q, QC_HEAD), &h, q->host)) != RMC_OK)
            break;
        for (;;) {
            if ((st = rmc_amo_load_i64(ctr_addr(q, bound), &b, q->host)) != RMC_OK)
                break;
            saw(q, bound, b);
            if (b < h && may_wait(&o.wait_end)) {
                /* pops reserved beyond the elements: the last one is taken back (or fits) */
                pause_round(&o.spins);
                if ((st = rmc_amo_load_i64(ctr_addr(q, QC_HEAD), &h, q->host)) != RMC_OK)
                    break;
                continue;
            }
            if (b <= h) {
                st = RMC_ERR_EMPTY;
                break;
            }
            o.wait_end = 0; /* room seen */
            int64_t k = b - h < (int64_t)max ? b - h : (int64_t)max, v;
            if ((st = rmc_amo_cas_i64(ctr_addr(q, QC_HEAD), h, h + k, &v, q->host)) != RMC_OK)
                break;
            if (v == h) {
                o.pos = h;
                o.n = (size_t)k;
                break;
            }
            h = v;
        }
        if (st != RMC_OK)
            break;
        o.land = land;
        o.state = S_MOVE;
        o.spins = 0;
        if ((st = advance(&o, &done)) != RMC_ERR_EMPTY)
            break;
    }
    if (st == RMC_OK && !direct && q->direct)
        memcpy(out, o.land, o.n * q->slot);
    else if (st == RMC_OK && !direct)
        st = unpack(&o, out);
    if (st == RMC_OK)
        *got = o.n;
    free(own);
    return st;
}
