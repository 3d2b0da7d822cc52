/* The queues' RPC path (seed 001 ch. 8): a push or pop as one active message to the host, which
 * runs it on its ring with CPU atomics and answers; one round trip for the whole operation instead
 * of the one-sided protocol's two or three (each of them a round trip of its own in thread AMO
 * mode, where a remote atomic is an active message too).
 *
 * The host's side never waits: where the one-sided protocol would wait for another operation (an
 * earlier push not yet marked ready, an earlier pop not yet released, an entry reserved but not yet
 * written, a one-sided reservation that does not fit and is about to be taken back), it answers
 * RMC_ERR_RETRY having changed nothing, and the origin sends it again (after RMCC_QRPC_TRIES of
 * them it goes one-sided, where it waits for such a reservation). A handler reserves with
 * compare-and-swap, never beyond the bound, so it never leaves a reservation that would have to be
 * taken back: push   TAIL t; (fully atomic CIRCULAR: READY == t, no push in flight); room against
 * FREED (CIRCULAR, CHECKSUM) or HEAD (FAST), else RMC_ERR_FULL; CAS TAIL t -> t+n; copy the slots
 * in (CHECKSUM: stamped); CIRCULAR: READY += n. pop    HEAD h; (fully atomic CIRCULAR / CHECKSUM:
 * FREED == h, no pop in flight); the elements against READY (CIRCULAR) or TAIL, else RMC_ERR_EMPTY;
 * copy them out (CHECKSUM: every checksum must hold, else RETRY: reserved, not written yet); CAS
 * HEAD h -> h+n; CIRCULAR / CHECKSUM: FREED += n. The ready and free marks are fetch-and-adds: with
 * nothing in flight before them they are the one-sided protocol's in-order marks, and under
 * RMC_PROMISE_PUSH / _POP they are what its unordered marks are. Every atomic on the ring is a CPU
 * atomic, which is what every other origin does in thread AMO mode (the only mode with this path),
 * so the two paths mix on one queue. Copying out before the CAS is safe: a slot is rewritten only
 * after FREED passes it, and FREED stays at or below HEAD = h until the CAS. */
#define _GNU_SOURCE
#include "config.h"
#include <string.h>
#include "queue_impl.h"

/* The request: this header, then the packed slots of a push. The reply: an int32 outcome
 * (RMC_OK, RMC_ERR_FULL, RMC_ERR_EMPTY, RMC_ERR_RETRY), a uint32 count of elements, then a pop's
 * slots. The queue travels as its description (the host needs nothing of the origin's handle). */
typedef struct qrpc {
    uint32_t family; /* RMCC_RPC_QUEUE */
    uint8_t op;      /* QR_PUSH, QR_POP, QR_POP_UPTO */
    uint8_t kind;    /* rmc_queue_kind_t */
    uint16_t marks;  /* 1: unordered marks (RMC_PROMISE_PUSH / _POP), no in-flight check */
    uint32_t slot, esz;
    uint64_t ctl_off, data_off, cap, n; /* n: the elements (QR_POP_UPTO: at most) */
} qrpc_t;

size_t rmcc_qrpc_header(void)
{
    return sizeof(qrpc_t);
}

void rmcc_qrpc_fill(const struct rmc_queue *q, int op, size_t n, unsigned promise, void *hdr)
{
    qrpc_t h = {RMCC_RPC_QUEUE,
                (uint8_t)op,
                (uint8_t)q->kind,
                rmcc_unordered(promise, op == QR_PUSH),
                (uint32_t)q->slot,
                (uint32_t)q->esz,
                q->ctl_off,
                q->data_off,
                q->cap,
                n};
    memcpy(hdr, &h, sizeof(h));
}

/* ------------------------------------------------------------------------- the host --- */

static inline int64_t *ctr(char *ctl, int c)
{
    return (int64_t *)(void *)(ctl + QC_STRIDE * c);
}
static inline int64_t ld(char *ctl, int c)
{
    return __atomic_load_n(ctr(ctl, c), __ATOMIC_ACQUIRE);
}

/* The slots of positions [pos, pos+n): one run of the ring and, when it wraps, a second one from
 * its start (*first slots in the first run). */
static char *ring_at(const qrpc_t *h, char *data, int64_t pos, size_t n, size_t *first)
{
    size_t s = (size_t)((uint64_t)pos % h->cap);
    *first = h->cap - s < n ? h->cap - s : n;
    return data + s * h->slot;
}
static void ring_in(const qrpc_t *h, char *data, int64_t pos, const char *src, size_t n)
{
    size_t first;
    char *at = ring_at(h, data, pos, n, &first);
    memcpy(at, src, first * h->slot);
    memcpy(data, src + first * h->slot, (n - first) * h->slot);
}
static void ring_out(const qrpc_t *h, char *data, int64_t pos, char *dst, size_t n)
{
    size_t first;
    const char *at = ring_at(h, data, pos, n, &first);
    memcpy(dst, at, first * h->slot);
    memcpy(dst + first * h->slot, data, (n - first) * h->slot);
}

/* The checksum of the slot at buf for position pos holds. */
static int ck_holds(const qrpc_t *h, const char *buf, int64_t pos)
{
    uint64_t ck;
    memcpy(&ck, buf + h->esz, QCK_BYTES);
    return ck == rmcc_qck(buf, h->esz, pos);
}

static int32_t serve_push(const qrpc_t *h, char *ctl, char *data, const char *slots)
{
    size_t n = (size_t)h->n;
    int bound = h->kind == RMC_QUEUE_FAST ? QC_HEAD : QC_FREED;
    int64_t t = ld(ctl, QC_TAIL);
    if (h->kind == RMC_QUEUE_CIRCULAR && !h->marks && ld(ctl, QC_READY) != t)
        return RMC_ERR_RETRY; /* a push in flight: its mark comes first */
    int64_t b = ld(ctl, bound);
    if (t - b > (int64_t)h->cap) /* the last (one-sided) reservation does not fit: it goes */
        return RMC_ERR_RETRY;
    if (t + (int64_t)n - b > (int64_t)h->cap)
        return RMC_ERR_FULL;
    if (!__atomic_compare_exchange_n(ctr(ctl, QC_TAIL), &t, t + (int64_t)n, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return RMC_ERR_RETRY;
    ring_in(h, data, t, slots, n);
    for (size_t i = 0; h->kind == RMC_QUEUE_CHECKSUM && i < n; i++) { /* stamped in place */
        char *at = data + (size_t)((uint64_t)(t + (int64_t)i) % h->cap) * h->slot;
        uint64_t ck = rmcc_qck(at, h->esz, t + (int64_t)i);
        memcpy(at + h->esz, &ck, QCK_BYTES);
    }
    if (h->kind == RMC_QUEUE_CIRCULAR)
        __atomic_fetch_add(ctr(ctl, QC_READY), (int64_t)n, __ATOMIC_RELEASE);
    else
        __atomic_thread_fence(__ATOMIC_RELEASE);
    return RMC_OK;
}

/* A pop of n elements (QR_POP) or of 1 .. n (QR_POP_UPTO) into `out`; *got: how many. */
static int32_t serve_pop(const qrpc_t *h, char *ctl, char *data, char *out, size_t *got)
{
    size_t n = (size_t)h->n;
    int64_t hd = ld(ctl, QC_HEAD);
    if (h->kind != RMC_QUEUE_FAST && !h->marks && ld(ctl, QC_FREED) != hd)
        return RMC_ERR_RETRY; /* a pop in flight: its release comes first */
    int64_t b = ld(ctl, h->kind == RMC_QUEUE_CIRCULAR ? QC_READY : QC_TAIL);
    int64_t have = b - hd;
    if (have < 0) /* one-sided pops reserved more than there are: the last one goes */
        return RMC_ERR_RETRY;
    if (have == 0 || (h->op == QR_POP && have < (int64_t)n))
        return RMC_ERR_EMPTY;
    if ((int64_t)n > have)
        n = (size_t)have;
    ring_out(h, data, hd, out, n);
    if (h->kind == RMC_QUEUE_CHECKSUM) { /* reserved, perhaps not written yet */
        size_t ok = 0;
        while (ok < n && ck_holds(h, out + ok * h->slot, hd + (int64_t)ok))
            ok++;
        if (ok == 0 || (ok < n && h->op == QR_POP))
            return RMC_ERR_RETRY;
        n = ok;
    }
    if (!__atomic_compare_exchange_n(ctr(ctl, QC_HEAD), &hd, hd + (int64_t)n, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return RMC_ERR_RETRY;
    if (h->kind != RMC_QUEUE_FAST)
        __atomic_fetch_add(ctr(ctl, QC_FREED), (int64_t)n, __ATOMIC_RELEASE);
    *got = n;
    return RMC_OK;
}

/* [off, off + bytes) lies in this rank's committed heap. */
static int in_heap(uint64_t off, uint64_t bytes)
{
    uint64_t end = __atomic_load_n(&rmcc.heap.committed, __ATOMIC_ACQUIRE);
    return off >= RMCC_HEAP_START && off <= end && bytes <= end - off;
}

rmc_status_t rmcc_queue_serve(const void *payload, size_t len, void *reply, size_t reply_cap,
                              size_t *reply_len)
{
    qrpc_t h;
    if (len < sizeof(h) || reply_cap < QR_REPLY_HDR)
        return RMC_ERR_ARG;
    memcpy(&h, payload, sizeof(h));
    uint64_t ck = h.kind == RMC_QUEUE_CHECKSUM ? QCK_BYTES : 0;
    if (h.op < QR_PUSH || h.op > QR_POP_UPTO || h.kind > RMC_QUEUE_CHECKSUM || h.esz == 0 ||
        h.slot != h.esz + ck || h.cap == 0 || h.n == 0 || h.n > h.cap ||
        h.cap > UINT64_MAX / h.slot || h.ctl_off % 8 || !in_heap(h.ctl_off, QC_BYTES) ||
        !in_heap(h.data_off, h.cap * h.slot))
        return RMC_ERR_ARG;
    size_t body = (size_t)(h.n * h.slot);
    if (h.op == QR_PUSH ? len != sizeof(h) + body
                        : (len != sizeof(h) || reply_cap - QR_REPLY_HDR < body))
        return RMC_ERR_ARG;
    char *base = rmcc.lbase[rmcc.rank], *ctl = base + h.ctl_off, *data = base + h.data_off;
    char *r = reply;
    size_t got = 0;
    int32_t out;
    if (h.op == QR_PUSH)
        out = serve_push(&h, ctl, data, (const char *)payload + sizeof(h));
    else
        out = serve_pop(&h, ctl, data, r + QR_REPLY_HDR, &got);
    uint32_t cnt = (uint32_t)got;
    memcpy(r, &out, 4);
    memcpy(r + 4, &cnt, 4);
    *reply_len = QR_REPLY_HDR + (out == RMC_OK ? got * h.slot : 0);
    return RMC_OK;
}
