/* Active-message engine and asynchronous progress thread.
 *
 * Transport: MPI point-to-point on a private duplicate of rmci.comm. A request is one message with
 * tag AM_TAG_REQ: a 16-byte header (handler id, reply tag, payload length, reply capacity) and the
 * payload. The origin posts the receive of the reply (tag unique per outstanding request) before
 * sending, so a reply never waits for buffer space. The target keeps one receive posted for
 * requests (of the largest size) and serves it:
 *  - on the progress thread, when this rank runs one;
 *  - and on the main thread: from the comm layer's poll hook (every AM_POLL_INTERVAL comm calls or
 *    AM_POLL_US microseconds, whichever comes first), from every waiting loop of this layer,
 *    rmc_barrier and rmc_progress (with a thread: unless the thread is polling at that moment).
 * Non-blocking requests are MPICH generalized requests with a poll function (MPIX_Grequest_start),
 * so rmc_wait / rmc_test on them keep serving AMs: two ranks waiting for each other's requests
 * never deadlock, with or without the thread.
 *
 * A thread without a processing unit of its own keeps polling for AM_SPIN_NS after its last request
 * (a stream of requests is served at once), then sleeps with exponential back-off from 1 us to
 * RMC_PROGRESS_BACKOFF_US; while the main thread keeps calling RMC (and so serves requests itself)
 * the thread makes no MPI call, so it does not compete with the main thread for MPICH's lock.
 *
 * The thread never touches rmci state. A handler that needs main-thread state (a region created
 * after the thread's last snapshot) returns RMCI_AM_DEFER and the request is queued for the main
 * thread.
 */
#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/prctl.h>
#include <hwloc.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#include "progress_internal.h"

#define AM_TAG_REQ         1
#define AM_TAG_FIRST_REPLY 2
#define AM_POLL_INTERVAL   16 /* comm calls between two request polls of the main thread ... */
#define AM_POLL_US         20 /* ... or this much time, whichever comes first */
#define AM_SPIN_NS                                                                                 \
    20000 /* the thread keeps polling this long after its last request (20 us)                     \
           * before it starts sleeping: a stream of requests is served at once */
#define AM_BACKOFF_MIN_NS  1000
#define AM_ATTENTIVE_CALLS 4 /* main-thread polls since the thread last looked: main is attentive  \
                              */

typedef struct am_hdr {
    uint32_t id;
    int32_t rtag;
    uint32_t len;
    uint32_t reply_cap;
} am_hdr_t;

typedef struct am_rep {
    int32_t status;
    uint32_t len;
    uint64_t pad;
} am_rep_t;

/* An outstanding request of this rank (origin side). One allocation: struct, send buffer, reply
 * buffer. */
typedef struct am_op {
    struct am_op *next, *prev;
    MPI_Request req[2]; /* 0: request send, 1: reply receive */
    MPI_Request greq;   /* generalized request (non-blocking form) */
    int done, has_greq;
    char *sbuf, *rbuf;
    size_t rcap;
    /* completion of the public non-blocking form */
    void *reply;
    size_t reply_cap;
    size_t *reply_len;
    /* completion of internal non-blocking forms */
    rmci_am_finish_t fin;
    void *fin_ptr;
    uint64_t fin_data;
} am_op_t;

/* Reply sends in flight of one serving context (thread or main). */
typedef struct am_srv {
    MPI_Request *reqs;
    void **bufs;
    int n, cap;
} am_srv_t;

typedef struct am_deferred {
    struct am_deferred *next;
    int src;
    int cnt;
    char buf[];
} am_deferred_t;

typedef struct am_handler {
    rmc_am_handler_t fn;
    void *arg;
} am_handler_t;

static struct {
    int up;
    MPI_Comm comm;
    int tag_span; /* reply tags are AM_TAG_FIRST_REPLY + [0, tag_span) */
    uint32_t seq;
    size_t max_payload;
    int rbuf_size;
    char *rbuf; /* posted request receive */
    MPI_Request rreq;
    /* thread */
    int thread_on, thread_spin, thread_pu;
    long backoff_max_ns;
    pthread_t thr;
    am_srv_t srv_main, srv_thr;
    /* the posted request receive (rbuf/rreq) is used by whoever holds plock: the thread, or the
     * main thread inside RMC calls (which then serves at once instead of waiting for the thread) */
    pthread_mutex_t plock;
    /* handlers */
    pthread_mutex_t hlock;
    am_handler_t handlers[RMCI_AM_NIDS];
    /* deferred requests (thread -> main) */
    pthread_mutex_t dlock;
    am_deferred_t *dhead, *dtail;
    int ndeferred; /* atomic */
    /* origin side */
    am_op_t *ops; /* outstanding (and non-blocking not yet waited) */
    unsigned poll_count;
    uint64_t last_poll;       /* ticks() of the main thread's last request poll */
    uint64_t poll_ticks;      /* AM_POLL_US in ticks() */
    unsigned long main_calls; /* main-thread polls (written by main only, read by the thread) */
} am;

rmc_progress_stats_t rmci_pstats;
static __thread int am_is_thread;

/* A cheap clock for the poll hook (every comm call): the TSC where there is one. */
static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

/* ticks() per AM_POLL_US, measured over ~100 us. */
static uint64_t calibrate_poll_ticks(void)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t t0 = ticks(), ns;
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
        ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)b.tv_nsec -
             (uint64_t)a.tv_nsec;
    } while (ns < 100000);
    uint64_t per_us = (ticks() - t0) / (ns / 1000);
    return (per_us ? per_us : 1) * AM_POLL_US;
}

int rmci_am_on_thread(void)
{
    return am_is_thread;
}

size_t rmci_am_max_payload(void)
{
    return am.up ? am.max_payload : 0;
}

size_t rmc_am_max_payload(void)
{
    return rmci_am_max_payload();
}

int rmc_progress_thread_active(void)
{
    if (!rmci.initialized || !am.up)
        return -1;
    return am.thread_on;
}

void rmci_am_set_internal(int id, rmc_am_handler_t fn, void *arg)
{
    pthread_mutex_lock(&am.hlock);
    am.handlers[id].fn = fn;
    am.handlers[id].arg = arg;
    pthread_mutex_unlock(&am.hlock);
}

/* ------------------------------------------------------------------------- serving --- */

static void srv_reap(am_srv_t *s)
{
    int o = 0;
    for (int i = 0; i < s->n; i++) {
        int flag = 0;
        MPI_Test(&s->reqs[i], &flag, MPI_STATUS_IGNORE);
        if (flag) {
            free(s->bufs[i]);
            continue;
        }
        s->reqs[o] = s->reqs[i];
        s->bufs[o] = s->bufs[i];
        o++;
    }
    s->n = o;
}

static void srv_drain(am_srv_t *s)
{
    for (int i = 0; i < s->n; i++) {
        MPI_Wait(&s->reqs[i], MPI_STATUS_IGNORE);
        free(s->bufs[i]);
    }
    s->n = 0;
    free(s->reqs);
    free(s->bufs);
    s->reqs = NULL;
    s->bufs = NULL;
    s->cap = 0;
}

/* Sends a reply (takes ownership of buf). A reply that cannot be tracked is sent synchronously. */
static void srv_send(am_srv_t *s, void *buf, int bytes, int dst, int tag)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        MPI_Request *r = realloc(s->reqs, (size_t)cap * sizeof(*r));
        if (r)
            s->reqs = r;
        void **b = r ? realloc(s->bufs, (size_t)cap * sizeof(*b)) : NULL;
        if (b)
            s->bufs = b;
        if (!r || !b) {
            MPI_Send(buf, bytes, MPI_BYTE, dst, tag, am.comm);
            free(buf);
            return;
        }
        s->cap = cap;
    }
    if (MPI_Isend(buf, bytes, MPI_BYTE, dst, tag, am.comm, &s->reqs[s->n]) != MPI_SUCCESS) {
        free(buf);
        return;
    }
    s->bufs[s->n++] = buf;
}

static void defer(int src, const char *buf, int cnt)
{
    am_deferred_t *d = malloc(sizeof(*d) + (size_t)cnt);
    if (!d)
        return; /* the origin would wait forever: cannot happen short of OOM, then nothing helps */
    d->next = NULL;
    d->src = src;
    d->cnt = cnt;
    memcpy(d->buf, buf, (size_t)cnt);
    pthread_mutex_lock(&am.dlock);
    if (am.dtail)
        am.dtail->next = d;
    else
        am.dhead = d;
    am.dtail = d;
    __atomic_fetch_add(&am.ndeferred, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&am.dlock);
    RMCI_PSTAT_ADD(am_deferred, 1);
}

/* Replies with a bare status. */
static int handle_error_reply(am_srv_t *s, int src, const am_hdr_t *h, rmc_status_t st)
{
    am_rep_t *rep = malloc(sizeof(*rep));
    if (!rep)
        return 0;
    rep->status = (int32_t)st;
    rep->len = 0;
    rep->pad = 0;
    srv_send(s, rep, (int)sizeof(*rep), src, h->rtag);
    return 0;
}

/* Handles one request. Returns 1 for the shutdown message, else 0. */
static int handle_msg(am_srv_t *s, int src, const char *buf, int cnt)
{
    am_hdr_t h;
    if (cnt < (int)sizeof(h))
        return 0; /* not ours: nothing to reply to */
    memcpy(&h, buf, sizeof(h));
    if (h.id == RMCI_AM_ID_SHUTDOWN && src == rmci.rank)
        return 1;
    size_t cap = h.reply_cap;
    rmc_status_t st = RMC_OK;
    if ((size_t)cnt - sizeof(h) != h.len || cap > am.max_payload || h.id >= RMCI_AM_NIDS) {
        st = RMC_ERR_ARG;
        cap = 0;
    }
    char *rep = malloc(sizeof(am_rep_t) + cap);
    if (!rep) {
        st = RMC_ERR_NOMEM;
        cap = 0;
        rep = malloc(sizeof(am_rep_t));
        if (!rep)
            return 0;
    }
    size_t rlen = 0;
    if (st == RMC_OK) {
        /* the lock is held while the handler runs: handlers of one rank never run concurrently
         * (thread and main thread serving deferred requests), and rmc_am_register returns only when
         * a handler it replaces has finished */
        pthread_mutex_lock(&am.hlock);
        am_handler_t hd = am.handlers[h.id];
        if (!hd.fn) {
            st = RMC_ERR_NOT_FOUND;
        } else {
            st = hd.fn(src, buf + sizeof(h), h.len, rep + sizeof(am_rep_t), cap, &rlen, hd.arg);
            if (st != RMCI_AM_DEFER) {
                RMCI_PSTAT_ADD(am_served, 1);
                if (am_is_thread)
                    RMCI_PSTAT_ADD(am_served_thread, 1);
            }
        }
        pthread_mutex_unlock(&am.hlock);
        if (st == RMCI_AM_DEFER) {
            free(rep);
            if (am_is_thread) {
                defer(src, buf, cnt);
                return 0;
            }
            return handle_error_reply(s, src, &h, RMC_ERR_INTERNAL); /* only the thread defers */
        }
    }
    if (st != RMC_OK || rlen > cap)
        rlen = 0;
    am_rep_t rh = {.status = (int32_t)st, .len = (uint32_t)rlen, .pad = 0};
    memcpy(rep, &rh, sizeof(rh));
    srv_send(s, rep, (int)(sizeof(am_rep_t) + rlen), src, h.rtag);
    return 0;
}

/* Serves the requests that have arrived (at most a batch). Returns the number served, -1 when the
 * shutdown message was received (the receive is then not re-posted). Only the poller calls it. */
static int poll_incoming(am_srv_t *s)
{
    int served = 0;
    for (int k = 0; k < 64; k++) {
        int flag = 0;
        MPI_Status status;
        if (MPI_Test(&am.rreq, &flag, &status) != MPI_SUCCESS || !flag)
            break;
        int cnt = 0;
        MPI_Get_count(&status, MPI_BYTE, &cnt);
        if (handle_msg(s, status.MPI_SOURCE, am.rbuf, cnt)) {
            am.rreq = MPI_REQUEST_NULL;
            return -1;
        }
        MPI_Irecv(am.rbuf, am.rbuf_size, MPI_BYTE, MPI_ANY_SOURCE, AM_TAG_REQ, am.comm, &am.rreq);
        served++;
    }
    if (s->n)
        srv_reap(s);
    return served;
}

static void serve_deferred(void)
{
    for (;;) {
        pthread_mutex_lock(&am.dlock);
        am_deferred_t *d = am.dhead;
        if (d) {
            am.dhead = d->next;
            if (!am.dhead)
                am.dtail = NULL;
            __atomic_fetch_sub(&am.ndeferred, 1, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&am.dlock);
        if (!d)
            return;
        handle_msg(&am.srv_main, d->src, d->buf, d->cnt);
        free(d);
    }
}

/* Main thread: serves the posted receive unless the progress thread is doing so right now. */
static void main_incoming(void)
{
    am.poll_count = 0;
    am.last_poll = ticks();
    if (!am.thread_on) {
        poll_incoming(&am.srv_main);
        return;
    }
    if (pthread_mutex_trylock(&am.plock) == 0) {
        poll_incoming(&am.srv_main);
        pthread_mutex_unlock(&am.plock);
    } else if (am.srv_main.n) {
        srv_reap(&am.srv_main);
    }
}

/* Called by waiting loops after each unsuccessful round: after a short spin, gives the CPU away so
 * that a peer sharing it (oversubscribed runs) can serve the request being waited for. */
static inline void wait_pause(unsigned *spins)
{
    if (++*spins > 64)
        sched_yield();
}

static inline void count_main_call(void)
{
    __atomic_store_n(&am.main_calls, am.main_calls + 1, __ATOMIC_RELAXED);
}

/* Full poll of the main thread: everything this rank must serve, no interval. */
static void poll_main(void)
{
    count_main_call();
    if (rmci_amo_needs_sync())
        rmci_amo_sync();
    if (__atomic_load_n(&am.ndeferred, __ATOMIC_ACQUIRE))
        serve_deferred();
    main_incoming();
}

void rmci_am_poll(void)
{
    if (am.up && !am_is_thread)
        poll_main();
}

/* The comm layer's hook: cheap unless something is pending. */
static void poll_hook(void)
{
    count_main_call();
    if (RMCI_UNLIKELY(rmci_amo_needs_sync()))
        rmci_amo_sync();
    if (RMCI_UNLIKELY(__atomic_load_n(&am.ndeferred, __ATOMIC_ACQUIRE)))
        serve_deferred();
    if (++am.poll_count >= AM_POLL_INTERVAL || ticks() - am.last_poll > am.poll_ticks)
        main_incoming();
}

static int op_progress(am_op_t *op);

rmc_status_t rmc_progress(void)
{
    RMCI_CHECK_INIT();
    if (!am.up)
        return RMC_OK;
    poll_main();
    for (am_op_t *op = am.ops, *next; op; op = next) {
        next = op->next;
        op_progress(op);
    }
    return RMC_OK;
}

int rmci_am_wait_mpi(MPI_Request *req)
{
    unsigned spins = 0;
    for (;;) {
        int flag = 0;
        int rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        if (flag)
            return MPI_SUCCESS;
        if (am.up)
            poll_main();
        wait_pause(&spins);
    }
}

rmc_status_t rmci_am_agree(rmc_status_t st)
{
    int v = (int)st, out = 0;
    MPI_Request r;
    MPI_Comm c = am.up ? am.comm : rmci.comm;
    if (MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_MIN, c, &r) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    if (rmci_am_wait_mpi(&r) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    return (rmc_status_t)out;
}

/* ----------------------------------------------------------------------- origin side --- */

static void op_unlink(am_op_t *op)
{
    if (op->prev)
        op->prev->next = op->next;
    else if (am.ops == op)
        am.ops = op->next;
    if (op->next)
        op->next->prev = op->prev;
    op->next = op->prev = NULL;
}

static int op_progress(am_op_t *op)
{
    if (op->done)
        return 1;
    int flag = 0;
    MPI_Status sts[2];
    if (MPI_Testall(2, op->req, &flag, sts) != MPI_SUCCESS) {
        /* unrecoverable transport error: report it as the reply */
        am_rep_t rh = {.status = RMC_ERR_MPI, .len = 0, .pad = 0};
        memcpy(op->rbuf, &rh, sizeof(rh));
        flag = 1;
    }
    if (!flag)
        return 0;
    op->done = 1;
    if (op->has_greq)
        MPI_Grequest_complete(op->greq);
    return 1;
}

static rmc_status_t op_start(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t rcap, am_op_t **out)
{
    size_t head = (sizeof(am_op_t) + 15) & ~(size_t)15;
    size_t slen = sizeof(am_hdr_t) + n1 + n2;
    size_t sroom = (slen + 15) & ~(size_t)15;
    am_op_t *op = malloc(head + sroom + sizeof(am_rep_t) + rcap);
    if (!op)
        return RMC_ERR_NOMEM;
    memset(op, 0, sizeof(*op));
    op->sbuf = (char *)op + head;
    op->rbuf = op->sbuf + sroom;
    op->rcap = rcap;
    am.seq = (am.seq + 1) % (uint32_t)am.tag_span;
    int tag = AM_TAG_FIRST_REPLY + (int)am.seq;
    am_hdr_t h = {
        .id = (uint32_t)id, .rtag = tag, .len = (uint32_t)(n1 + n2), .reply_cap = (uint32_t)rcap};
    memcpy(op->sbuf, &h, sizeof(h));
    if (n1)
        memcpy(op->sbuf + sizeof(h), p1, n1);
    if (n2)
        memcpy(op->sbuf + sizeof(h) + n1, p2, n2);
    if (MPI_Irecv(op->rbuf, (int)(sizeof(am_rep_t) + rcap), MPI_BYTE, rank, tag, am.comm,
                  &op->req[1]) != MPI_SUCCESS) {
        free(op);
        return RMC_ERR_MPI;
    }
    if (MPI_Isend(op->sbuf, (int)slen, MPI_BYTE, rank, AM_TAG_REQ, am.comm, &op->req[0]) !=
        MPI_SUCCESS) {
        MPI_Cancel(&op->req[1]);
        MPI_Wait(&op->req[1], MPI_STATUS_IGNORE);
        free(op);
        return RMC_ERR_MPI;
    }
    op->next = am.ops;
    if (am.ops)
        am.ops->prev = op;
    am.ops = op;
    RMCI_PSTAT_ADD(am_sent, 1);
    *out = op;
    return RMC_OK;
}

/* Status and data of a completed op. */
static rmc_status_t op_result(am_op_t *op, const char **data, size_t *len)
{
    am_rep_t rh;
    memcpy(&rh, op->rbuf, sizeof(rh));
    *data = op->rbuf + sizeof(am_rep_t);
    *len = rh.status == RMC_OK && rh.len <= op->rcap ? rh.len : 0;
    return (rmc_status_t)rh.status;
}

rmc_status_t rmci_am_call(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                          void *reply, size_t reply_cap, size_t *reply_len)
{
    am_op_t *op;
    rmc_status_t st = op_start(rank, id, p1, n1, p2, n2, reply_cap, &op);
    if (st != RMC_OK)
        return st;
    unsigned spins = 0;
    while (!op_progress(op)) {
        poll_main();
        wait_pause(&spins);
    }
    op_unlink(op);
    const char *data;
    size_t len;
    st = op_result(op, &data, &len);
    if (len > reply_cap)
        len = reply_cap;
    if (len)
        memcpy(reply, data, len);
    if (reply_len)
        *reply_len = len;
    free(op);
    return st;
}

/* Generalized-request callbacks: the poll function keeps the engine going inside MPI_Wait/Test. */
static int greq_query(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static int greq_poll(void *extra, MPI_Status *status)
{
    (void)status;
    am_op_t *op = extra;
    if (!op_progress(op))
        poll_main();
    return MPI_SUCCESS;
}

static int greq_wait(int count, void **extra, double timeout, MPI_Status *status)
{
    (void)timeout;
    (void)status;
    unsigned spins = 0;
    for (;;) {
        int all = 1;
        for (int i = 0; i < count; i++)
            all &= op_progress((am_op_t *)extra[i]);
        if (all)
            return MPI_SUCCESS;
        poll_main();
        wait_pause(&spins);
    }
}

static rmc_status_t req_complete(struct rmc_request *q)
{
    am_op_t *op = q->cb_buf;
    op_unlink(op);
    const char *data;
    size_t len;
    rmc_status_t st = op_result(op, &data, &len);
    if (op->fin)
        return op->fin(st, data, len, op->fin_ptr, op->fin_data);
    if (len > op->reply_cap)
        len = op->reply_cap;
    if (len)
        memcpy(op->reply, data, len);
    if (op->reply_len)
        *op->reply_len = len;
    return st;
}

static rmc_status_t start_nb(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t rcap, am_op_t **opp, rmc_request_h *req)
{
    struct rmc_request *q = rmci_req_alloc();
    if (!q)
        return RMC_ERR_NOMEM;
    am_op_t *op;
    rmc_status_t st = op_start(rank, id, p1, n1, p2, n2, rcap, &op);
    if (st != RMC_OK) {
        rmci_req_release(q);
        return st;
    }
    if (MPIX_Grequest_start(greq_query, greq_free, greq_cancel, greq_poll, greq_wait, op,
                            &op->greq) != MPI_SUCCESS) {
        /* cannot hand out a request: complete it now (still correct) */
        while (!op_progress(op))
            poll_main();
        q->nmpi = 0;
    } else {
        op->has_greq = 1;
        q->nmpi = 1;
        q->mpi[0] = op->greq;
        op_progress(op);
    }
    q->cb_buf = op; /* freed with the request */
    q->on_complete = req_complete;
    *opp = op;
    *req = q;
    return RMC_OK;
}

rmc_status_t rmci_am_call_nb(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t reply_cap, rmci_am_finish_t fin, void *ptr, uint64_t data,
                             rmc_request_h *req)
{
    am_op_t *op;
    rmc_status_t st = start_nb(rank, id, p1, n1, p2, n2, reply_cap, &op, req);
    if (st != RMC_OK)
        return st;
    op->fin = fin;
    op->fin_ptr = ptr;
    op->fin_data = data;
    return RMC_OK;
}

/* --------------------------------------------------------------------------- public --- */

static rmc_status_t send_checks(int rank, int id, const void *payload, size_t len, void *reply,
                                size_t reply_cap)
{
    RMCI_CHECK_INIT();
    if (!am.up)
        return RMC_ERR_UNSUPPORTED;
    RMCI_POLL();
    RMCI_CHECK_RANK(rank);
    if (id < 0 || id > RMC_AM_ID_MAX || (!payload && len) || (!reply && reply_cap))
        return RMC_ERR_ARG;
    if (len > am.max_payload || reply_cap > am.max_payload)
        return RMC_ERR_TOO_BIG;
    return RMC_OK;
}

rmc_status_t rmc_am_send(int rank, int id, const void *payload, size_t len, void *reply,
                         size_t reply_cap, size_t *reply_len)
{
    if (reply_len)
        *reply_len = 0;
    rmc_status_t st = send_checks(rank, id, payload, len, reply, reply_cap);
    if (st != RMC_OK)
        return st;
    return rmci_am_call(rank, id, payload, len, NULL, 0, reply, reply_cap, reply_len);
}

rmc_status_t rmc_am_send_nb(int rank, int id, const void *payload, size_t len, void *reply,
                            size_t reply_cap, size_t *reply_len, rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    if (!req)
        return rmci.initialized ? RMC_ERR_ARG : RMC_ERR_NOT_INIT;
    if (reply_len)
        *reply_len = 0;
    rmc_status_t st = send_checks(rank, id, payload, len, reply, reply_cap);
    if (st != RMC_OK)
        return st;
    am_op_t *op;
    st = start_nb(rank, id, payload, len, NULL, 0, reply_cap, &op, req);
    if (st != RMC_OK)
        return st;
    op->reply = reply;
    op->reply_cap = reply_cap;
    op->reply_len = reply_len;
    return RMC_OK;
}

rmc_status_t rmc_am_register(int id, rmc_am_handler_t handler, void *arg)
{
    RMCI_CHECK_INIT();
    if (!am.up)
        return RMC_ERR_UNSUPPORTED;
    RMCI_POLL();
    rmc_status_t st = (id < 0 || id > RMC_AM_ID_MAX) ? RMC_ERR_ARG : RMC_OK;
    st = rmci_am_agree(st);
    if (st != RMC_OK)
        return st;
    rmci_am_set_internal(id, handler, arg);
    /* every rank has registered before any returns */
    return rmci_am_agree(RMC_OK);
}

rmc_status_t rmc_progress_stats(rmc_progress_stats_t *s)
{
    RMCI_CHECK_INIT();
    if (!s)
        return RMC_ERR_ARG;
    *s = rmci_pstats;
    return RMC_OK;
}

/* -------------------------------------------------------------------- progress thread --- */

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *thread_main(void *unused)
{
    (void)unused;
    am_is_thread = 1;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* precise short sleeps (default slack: 50 us) */

    if (am.thread_pu >= 0 && rmci.hwloc_topo) {
        hwloc_topology_t topo = rmci.hwloc_topo;
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (set) {
            hwloc_bitmap_only(set, (unsigned)am.thread_pu);
            hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
            hwloc_bitmap_free(set);
        }
    }
    unsigned idle = 0;
    uint64_t last_active = now_ns();
    unsigned long seen_calls = __atomic_load_n(&am.main_calls, __ATOMIC_RELAXED);
    for (;;) {
        /* A main thread that keeps calling RMC serves requests itself (poll hook, waiting loops):
         * the thread then leaves the network alone, so that its MPI calls (and MPICH's lock) do not
         * slow the main thread down; it looks again after its next sleep. */
        unsigned long mc = __atomic_load_n(&am.main_calls, __ATOMIC_RELAXED);
        int attentive = !am.thread_spin && mc - seen_calls >= AM_ATTENTIVE_CALLS;
        seen_calls = mc;
        int n = 0;
        if (!attentive && pthread_mutex_trylock(&am.plock) == 0) {
            n = poll_incoming(&am.srv_thr);
            pthread_mutex_unlock(&am.plock);
        } else if (am.srv_thr.n) {
            srv_reap(&am.srv_thr);
        }
        if (n < 0)
            break;
        if (n > 0) {
            idle = 0;
            last_active = now_ns();
            continue;
        }
        if (am.thread_spin)
            continue; /* a processing unit of its own: poll continuously */
        if (idle == 0 && now_ns() - last_active < AM_SPIN_NS)
            continue;
        unsigned k = idle++;
        long ns = k >= 20 ? am.backoff_max_ns : (long)AM_BACKOFF_MIN_NS << k;
        if (ns > am.backoff_max_ns)
            ns = am.backoff_max_ns;
        struct timespec ts = {.tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L};
        nanosleep(&ts, NULL);
        RMCI_PSTAT_ADD(thread_sleeps, 1);
    }
    srv_drain(&am.srv_thr);
    return NULL;
}

/* Chooses a processing unit for the thread that no rank of this (real) node is bound to.
 * Collective. Returns the PU's OS index or -1; *spin = 1 when the PU is not shared with another
 * rank's thread. */
static int choose_pu(int *spin)
{
    *spin = 0;
    MPI_Comm real;
    if (MPI_Comm_split_type(rmci.comm, MPI_COMM_TYPE_SHARED, rmci.rank, MPI_INFO_NULL, &real) !=
        MPI_SUCCESS)
        return -1;
    int nloc, rr;
    MPI_Comm_size(real, &nloc);
    MPI_Comm_rank(real, &rr);
    enum { LEN = 512 };
    char mine[LEN] = "";
    hwloc_topology_t topo = rmci.hwloc_topo;
    hwloc_bitmap_t set = topo ? hwloc_bitmap_alloc() : NULL;
    if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
        hwloc_bitmap_list_snprintf(mine, LEN, set);
    else
        snprintf(mine, LEN, "all");
    char *all = malloc((size_t)nloc * LEN);
    int pu = -1;
    if (all && MPI_Allgather(mine, LEN, MPI_CHAR, all, LEN, MPI_CHAR, real) == MPI_SUCCESS && set) {
        hwloc_bitmap_t used = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
        hwloc_bitmap_t avail = hwloc_bitmap_dup(hwloc_topology_get_complete_cpuset(topo));
        int unknown = 0;
        for (int i = 0; used && one && i < nloc; i++) {
            char *s = all + (size_t)i * LEN;
            s[LEN - 1] = 0;
            if (strcmp(s, "all") == 0 || hwloc_bitmap_list_sscanf(one, s) != 0) {
                unknown = 1;
                break;
            }
            hwloc_bitmap_or(used, used, one);
        }
        if (used && one && avail && !unknown) {
            hwloc_bitmap_andnot(avail, avail, used);
            int w = hwloc_bitmap_weight(avail);
            if (w > 0) {
                int want = rr % w, id = -1;
                for (int i = 0; i <= want; i++)
                    id = hwloc_bitmap_next(avail, id);
                pu = id;
                *spin = nloc <= w;
            }
        }
        hwloc_bitmap_free(used);
        hwloc_bitmap_free(one);
        hwloc_bitmap_free(avail);
    } else if (!all) {
        /* allgather skipped: keep collectives matched */
    }
    free(all);
    hwloc_bitmap_free(set);
    MPI_Comm_free(&real);
    return pu;
}

/* ------------------------------------------------------------------- init / shutdown --- */

static void am_shutdown(void)
{
    if (!am.up)
        return;
    /* 1. complete this rank's outstanding requests (non-blocking ones never waited included) */
    for (am_op_t *op = am.ops; op; op = op->next)
        while (!op_progress(op))
            poll_main();
    while (am.ops) {
        am_op_t *op = am.ops;
        op_unlink(op);
        if (op->has_greq)
            MPI_Request_free(&op->greq); /* completed; the rmc request is dropped with the pool */
    }
    /* 2. every rank is done sending: serve until all are */
    MPI_Request r;
    if (MPI_Ibarrier(am.comm, &r) == MPI_SUCCESS)
        rmci_am_wait_mpi(&r);
    /* 3. stop the poller */
    if (am.thread_on) {
        am_hdr_t h = {.id = RMCI_AM_ID_SHUTDOWN, .rtag = 0, .len = 0, .reply_cap = 0};
        MPI_Request sr;
        MPI_Isend(&h, sizeof(h), MPI_BYTE, rmci.rank, AM_TAG_REQ, am.comm, &sr);
        pthread_join(am.thr, NULL);
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
        am.thread_on = 0;
    } else if (am.rreq != MPI_REQUEST_NULL) {
        MPI_Cancel(&am.rreq);
        MPI_Wait(&am.rreq, MPI_STATUS_IGNORE);
    }
    serve_deferred();
    srv_drain(&am.srv_main);
    rmci_reg_shutdown();
    rmci_mutex_shutdown();
    rmci_amo_shutdown();
    rmci_poll_hook = NULL;
    rmci_region_hook = NULL;
    rmci_fallback_hook = NULL;
    MPI_Comm_free(&am.comm);
    free(am.rbuf);
    pthread_mutex_destroy(&am.hlock);
    pthread_mutex_destroy(&am.dlock);
    pthread_mutex_destroy(&am.plock);
    memset(&am, 0, sizeof(am));
}

/* "1"/"on"/"yes" -> 1, "0"/"off"/"no" -> 0, "auto" -> 2, else -1. */
static int parse_tri(const char *v)
{
    if (!v)
        return 2;
    if (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes"))
        return 1;
    if (!strcasecmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no"))
        return 0;
    if (!strcasecmp(v, "auto"))
        return 2;
    return -1;
}

static void init_teardown(void)
{
    if (am.thread_on) {
        am_hdr_t h = {.id = RMCI_AM_ID_SHUTDOWN, .rtag = 0, .len = 0, .reply_cap = 0};
        MPI_Send(&h, sizeof(h), MPI_BYTE, rmci.rank, AM_TAG_REQ, am.comm);
        pthread_join(am.thr, NULL);
        srv_drain(&am.srv_thr);
    } else if (am.rreq != MPI_REQUEST_NULL) {
        MPI_Cancel(&am.rreq);
        MPI_Wait(&am.rreq, MPI_STATUS_IGNORE);
    }
    rmci_reg_shutdown();
    rmci_amo_shutdown();
    if (am.comm != MPI_COMM_NULL)
        MPI_Comm_free(&am.comm);
    free(am.rbuf);
    pthread_mutex_destroy(&am.hlock);
    pthread_mutex_destroy(&am.dlock);
    pthread_mutex_destroy(&am.plock);
    memset(&am, 0, sizeof(am));
}

rmc_status_t rmci_progress_init(void)
{
    memset(&am, 0, sizeof(am));
    memset(&rmci_pstats, 0, sizeof(rmci_pstats));
    pthread_mutex_init(&am.hlock, NULL);
    pthread_mutex_init(&am.dlock, NULL);
    pthread_mutex_init(&am.plock, NULL);
    am.rreq = MPI_REQUEST_NULL;
    am.comm = MPI_COMM_NULL;
    rmc_status_t st = RMC_OK;

    /* knobs (validated here, before the first collective, so every rank agrees on failure) */
    int want = parse_tri(rmc_knob_value("RMC_PROGRESS_THREAD"));
    long maxp = rmci_env_long("RMC_AM_MAX_PAYLOAD");
    long boff = rmci_env_long("RMC_PROGRESS_BACKOFF_US");
    long cache = rmci_env_long("RMC_REGION_CACHE");
    if (want < 0 || maxp < 256 || maxp > (64L << 20) || boff < 1 || boff > 1000000 || cache < 1 ||
        cache > (1L << 20))
        st = RMC_ERR_ARG;
    am.max_payload = maxp >= 256 && maxp <= (64L << 20) ? (size_t)maxp : 256;
    am.backoff_max_ns = boff * 1000;
    am.poll_ticks = calibrate_poll_ticks();
    am.last_poll = ticks();
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    int multiple = provided == MPI_THREAD_MULTIPLE;
    if (want == 1 && !multiple)
        st = RMC_ERR_UNSUPPORTED;
    int spin = 0;
    int pu = choose_pu(&spin); /* collective */
    int on = 0;
    if (st == RMC_OK && multiple)
        /* auto: only with a processing unit of its own. Sharing the rank's core, the thread takes
         * MPICH's global lock on every poll and measured 2x slower RMA for everyone
         * (docs/benchmarks.md). */
        on = want == 1 || (want == 2 && pu >= 0);

    if (MPI_Comm_dup(rmci.comm, &am.comm) != MPI_SUCCESS) {
        am.comm = MPI_COMM_NULL;
        init_teardown();
        return RMC_ERR_MPI;
    }
    MPI_Comm_set_errhandler(am.comm, MPI_ERRORS_RETURN);
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(am.comm, MPI_TAG_UB, &ub, &flag);
    am.tag_span = (flag && ub && *ub > 1000) ? *ub - AM_TAG_FIRST_REPLY : 30000;
    am.rbuf_size = (int)(sizeof(am_hdr_t) + am.max_payload);
    am.rbuf = malloc((size_t)am.rbuf_size);
    if (!am.rbuf && st == RMC_OK)
        st = RMC_ERR_NOMEM;
    if (st == RMC_OK && MPI_Irecv(am.rbuf, am.rbuf_size, MPI_BYTE, MPI_ANY_SOURCE, AM_TAG_REQ,
                                  am.comm, &am.rreq) != MPI_SUCCESS)
        st = RMC_ERR_MPI;
    /* the thread decision feeds the AMO mode, which must agree everywhere */
    int v[2] = {(int)st, on}, out[2] = {RMC_ERR_MPI, 0};
    if (MPI_Allreduce(v, out, 2, MPI_INT, MPI_MIN, rmci.comm) != MPI_SUCCESS)
        out[0] = RMC_ERR_MPI;
    st = (rmc_status_t)out[0];
    if (st != RMC_OK) {
        init_teardown();
        return st;
    }
    am.up = 1;
    st = rmci_amo_init(out[1]); /* collective, agreed */
    if (st == RMC_OK)
        st = rmci_reg_init();
    if (st == RMC_OK && on) {
        am.thread_pu = pu;
        am.thread_spin = spin;
        am.thread_on = 1;
        if (pthread_create(&am.thr, NULL, thread_main, NULL) != 0) {
            am.thread_on = 0;
            st = RMC_ERR_NOMEM;
        }
    }
    int sv = (int)st, so = RMC_ERR_MPI;
    if (MPI_Allreduce(&sv, &so, 1, MPI_INT, MPI_MIN, rmci.comm) != MPI_SUCCESS)
        so = RMC_ERR_MPI;
    st = (rmc_status_t)so;
    if (st != RMC_OK) {
        init_teardown();
        return st;
    }
    rmci_poll_hook = poll_hook;
    rmci_region_hook = rmci_amo_sync; /* a new region is known to the progress thread at once */
    rmci_fallback_hook = rmci_reg_fallback;
    rmci_at_finalize(am_shutdown);
    return RMC_OK;
}
