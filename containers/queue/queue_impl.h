/* The queues' internals (containers/queue/). */
#ifndef RMCC_QUEUE_IMPL_H
#define RMCC_QUEUE_IMPL_H

#include <rmc/queue.h>
#include "../ct.h"

/* The control block in the host's segment: one 8-byte counter per 64-byte line (no false sharing
 * between pushers and poppers). Counters count positions since creation; slot = position % cap.
 *   TAIL   positions reserved by pushes          (every kind)
 *   READY  positions written, in order           (CIRCULAR)
 *   HEAD   positions reserved by pops            (every kind)
 *   FREED  positions read, in order: reusable    (CIRCULAR, CHECKSUM) */
enum { QC_TAIL = 0, QC_READY = 1, QC_HEAD = 2, QC_FREED = 3, QC_N = 4 };
#define QC_STRIDE 64
#define QC_BYTES  (QC_N * QC_STRIDE)
#define QCK_BYTES 8 /* a CHECKSUM slot's checksum, after the element */

struct rmc_queue {
    rmcc_obj_t obj;
    rmc_queue_kind_t kind;
    int host;
    uint64_t id;      /* equal on every rank: the collectives' argument check */
    size_t cap;       /* slots */
    uint64_t cap_inv; /* UINT64_MAX / cap: slots of positions without a division (rmcc_slot) */
    const rmc_type_t *type;
    size_t esz;  /* a packed element (rmc_type_slot_bytes) */
    size_t slot; /* bytes per slot: esz, + QCK_BYTES for CHECKSUM */
    int direct;  /* elements are their own slots: no packing (fixed type, size == slot) */
    uint64_t ctl_off, data_off; /* in the host's segment */
    char *ctl, *data;           /* host-space addresses (what comm's calls take) */
    char *lctl, *ldata;         /* load/store mappings when the host is on this node, else NULL */
    int64_t seen[QC_N];         /* the latest value seen of each counter (they only grow) */
    unsigned char failed[2];    /* this rank's last pop [0] / push [1] answered EMPTY / FULL
                                 * (either path): its next one-sided one reserves by
                                 * compare-and-swap where it fits */
    char *buf;                  /* scratch for packed slots of blocking operations */
    size_t bufcap;
    unsigned path;              /* this rank's default: 0 (chosen), RMC_PATH_RDMA or RMC_PATH_RPC */
};

/* The slot of position pos: pos % cap with a multiplication (a 64-bit division costs tens of
 * cycles, a good part of a node-local push). The estimate of the quotient is at most 2 short. */
static inline size_t rmcc_slot(const struct rmc_queue *q, int64_t pos)
{
    uint64_t p = (uint64_t)pos, quot = (uint64_t)(((unsigned __int128)p * q->cap_inv) >> 64);
    uint64_t r = p - quot * q->cap;
    while (r >= q->cap)
        r -= q->cap;
    return (size_t)r;
}

static inline void rmcc_set_cap(struct rmc_queue *q, size_t cap)
{
    q->cap = cap;
    q->cap_inv = UINT64_MAX / cap;
}

/* The host's view of its counters: the elements queued are positions [*head, *end), end = READY
 * for a circular queue (written elements), TAIL for the others. */
static inline void rmcc_queued(const struct rmc_queue *q, int64_t *head, int64_t *end)
{
    const char *c = q->lctl;
    int e = q->kind == RMC_QUEUE_CIRCULAR ? QC_READY : QC_TAIL;
    *head =
        __atomic_load_n((const int64_t *)(const void *)(c + QC_STRIDE * QC_HEAD), __ATOMIC_ACQUIRE);
    *end = __atomic_load_n((const int64_t *)(const void *)(c + QC_STRIDE * e), __ATOMIC_ACQUIRE);
}

/* One push or pop, blocking or not (ops.c). */
rmc_status_t rmcc_queue_op(struct rmc_queue *q, int push, const void *in, void *out, size_t n,
                           unsigned promise, rmc_request_h *req, const char *fn);
rmc_status_t rmcc_queue_pop_upto(struct rmc_queue *q, void *out, size_t max, size_t *got,
                                 unsigned promise, const char *fn);

/* A push's (pop's) marks may go unordered when the promise says only pushes (pops) run
 * concurrently: RMC_PROMISE_PUSH without _POP (seed 001 Table 5.2b). PUSH | POP means both run,
 * and the marks must stay in order. */
static inline int rmcc_unordered(unsigned promise, int push)
{
    unsigned pp = promise & (RMC_PROMISE_PUSH | RMC_PROMISE_POP);
    return pp == (push ? RMC_PROMISE_PUSH : RMC_PROMISE_POP);
}

/* The RPC path (rpc.c): operations, the reply's header (outcome, count), the RPCs told to retry
 * before an operation goes one-sided. */
enum { QR_PUSH = 1, QR_POP = 2, QR_POP_UPTO = 3 };
#define QR_REPLY_HDR   8
#define RMCC_QRPC_TRIES 16
/* The bytes of an RPC's header, and the header of operation `op` of n elements on q. */
size_t rmcc_qrpc_header(void);
void rmcc_qrpc_fill(const struct rmc_queue *q, int op, size_t n, unsigned promise, void *hdr);

/* The checksum of a CHECKSUM slot: its element bytes and its position (so an entry of an earlier
 * round, or a torn one, never checks); never 0 (zeroed memory never checks). */
static inline uint64_t rmcc_qck(const void *elem, size_t esz, int64_t pos)
{
    return rmcc_hash_bytes(elem, esz, (uint64_t)pos * 0x9e3779b97f4a7c15ull) | 1;
}

#endif
