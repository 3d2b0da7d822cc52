/* Active-message engine: serving requests (target side) and issuing them (origin side).
 *
 * Transport: MPI point-to-point on a private duplicate of RMC's communicator. A request is one
 * message with tag AM_TAG_REQ: a 16-byte header (handler id, reply tag, payload length, reply
 * capacity) and the payload. The origin posts the receive of the reply (tag unique per outstanding
 * request) before sending, so a reply never waits for buffer space. The target keeps one receive
 * posted for requests (of the largest size) and serves it on the progress thread when this rank
 * runs one (thread.c), and on the main thread from the layer's polls (progress.c): every few comm
 * calls, and continuously in every waiting loop of RMC. Non-blocking requests are MPICH
 * generalized requests with a poll function (MPIX_Grequest_start), so rmc_wait / rmc_test on them
 * keep serving AMs: two ranks waiting for each other's requests never deadlock.
 *
 * The thread never touches core state. A handler that needs main-thread state returns
 * RMCI_AM_DEFER and the request is queued for the main thread. */
#define _GNU_SOURCE
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "am_impl.h"

am_state_t am;
__thread int am_is_thread;
#define am_in_handler rmci_in_handler_ /* this thread runs a handler (rmci.h): it must not send */

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

static void set_handler(int id, rmc_am_handler_t fn, void *arg)
{
    pthread_mutex_lock(&am.hlock);
    am.handlers[id].fn = fn;
    am.handlers[id].arg = arg;
    pthread_mutex_unlock(&am.hlock);
}

rmc_status_t rmci_am_add_internal(rmc_am_handler_t fn, void *arg, int *id)
{
    if (!am.up)
        return rmci_fail(RMC_ERR_UNSUPPORTED, __func__, "the progress layer is not up");
    for (int i = RMC_AM_ID_MAX + 1; i < AM_ID_SHUTDOWN; i++)
        if (!am.handlers[i].fn) {
            set_handler(i, fn, arg);
            *id = i;
            return RMC_OK;
        }
    return rmci_fail(RMC_ERR_TOO_BIG, __func__, "more than %d internal handlers", AM_INTERNAL_IDS);
}

void rmci_am_remove_internal(int id)
{
    if (am.up && id > RMC_AM_ID_MAX && id < AM_ID_SHUTDOWN) {
        set_handler(id, NULL, NULL);
        am.handlers[id].layer = 0;
    }
}

/* An id rmc_am_send may name: the application's, or one handed to a layer. */
static int sendable_id(int id)
{
    return (id >= 0 && id <= RMC_AM_ID_MAX) ||
           (id > RMC_AM_ID_MAX && id < AM_ID_SHUTDOWN && am.handlers[id].layer);
}

/* ------------------------------------------------------------------------- serving --- */

void am_srv_reap(am_srv_t *s)
{
    int o = 0;
    for (int i = 0; i < s->n; i++) {
        int flag = 0;
        int rc = RMCI_MPI_RC(MPI_Test, (&s->reqs[i], &flag, MPI_STATUS_IGNORE));
        if (rc != MPI_SUCCESS) {
            rmci_async_fail("active messages", "a reply send failed (MPI error %d)", rc);
            flag = 1; /* the origin gets no reply for it; nothing else can be done */
        }
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

void am_srv_drain(am_srv_t *s)
{
    for (int i = 0; i < s->n; i++) {
        int rc = RMCI_MPI_RC(MPI_Wait, (&s->reqs[i], MPI_STATUS_IGNORE));
        if (rc != MPI_SUCCESS)
            rmci_async_fail("active messages", "a reply send failed (MPI error %d)", rc);
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
            int rc = RMCI_MPI_RC(MPI_Send, (buf, bytes, MPI_BYTE, dst, tag, am.comm));
            if (rc != MPI_SUCCESS)
                rmci_async_fail("active messages", "reply to rank %d failed (MPI error %d)", dst,
                                rc);
            free(buf);
            return;
        }
        s->cap = cap;
    }
    int rc = RMCI_MPI_RC(MPI_Isend, (buf, bytes, MPI_BYTE, dst, tag, am.comm, &s->reqs[s->n]));
    if (rc != MPI_SUCCESS) {
        rmci_async_fail("active messages", "reply to rank %d failed (MPI error %d)", dst, rc);
        free(buf);
        return;
    }
    s->bufs[s->n++] = buf;
}

static void defer(int src, const char *buf, int cnt)
{
    am_deferred_t *d = malloc(sizeof(*d) + (size_t)cnt);
    if (!d) {
        rmci_async_fail("active messages", "no memory to defer a request of rank %d", src);
        return;
    }
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

/* Runs the handler of request h (payload p) into rep (cap bytes after the reply header). A failure
 * decided here sets *why (and *val) for the origin's message. The handler runs with this thread's
 * last error saved and restored (a handler served while this thread waits inside a call must not
 * replace that call's message) and with this thread's poll budget at 0 (every RMC entry point it
 * calls goes through its checks, which refuse it: RMCI_CHECK_INIT). Only comm's internal handlers
 * may defer (RMCI_AM_DEFER): any other positive status is a failure (AM_WHY_POSITIVE). */
static rmc_status_t run_handler(int src, const am_hdr_t *h, const char *p, char *rep, size_t cap,
                                size_t *rlen, am_why_t *why, uint32_t *val)
{
    /* the lock is held while the handler runs: handlers of one rank never run concurrently
     * (thread and main thread serving deferred requests), and rmc_am_register returns only when
     * a handler it replaces has finished */
    pthread_mutex_lock(&am.hlock);
    am_handler_t hd = am.handlers[h->id];
    rmc_status_t st = RMC_ERR_NOT_FOUND;
    *why = AM_WHY_NONE;
    if (hd.fn) {
        int internal = h->id > RMC_AM_ID_MAX && !hd.layer;
        char saved[RMCI_ERRMSG];
        unsigned long nerr = rmci_error_save(saved);
        int outer = am_in_handler, budget = rmci_poll_countdown_;
        am_in_handler = 1;
        rmci_poll_countdown_ = 0;
        st = hd.fn(src, p, h->len, rep + sizeof(am_rep_t), cap, rlen, hd.arg);
        am_in_handler = outer;
        rmci_poll_countdown_ = budget;
        rmci_error_restore(saved, nerr);
        *why = AM_WHY_HANDLER;
        if (st > 0 && !(internal && st == RMCI_AM_DEFER)) {
            *why = AM_WHY_POSITIVE;
            *val = (uint32_t)st;
            st = RMC_ERR_INTERNAL;
        }
        if (st != RMCI_AM_DEFER) {
            RMCI_PSTAT_ADD(am_served, 1);
            if (am_is_thread)
                RMCI_PSTAT_ADD(am_served_thread, 1);
        }
    }
    pthread_mutex_unlock(&am.hlock);
    return st;
}

/* Handles one request. Returns 1 for the shutdown message, else 0. */
static int handle_msg(am_srv_t *s, int src, const char *buf, int cnt)
{
    am_hdr_t h;
    if (cnt < (int)sizeof(h))
        return 0; /* not ours: nothing to reply to */
    memcpy(&h, buf, sizeof(h));
    if (h.id == AM_ID_SHUTDOWN && src == RMCI.rank)
        return 1;
    size_t cap = h.reply_cap;
    rmc_status_t st = RMC_OK;
    am_why_t why = AM_WHY_HANDLER;
    uint32_t val = 0;
    if ((size_t)cnt - sizeof(h) != h.len || cap > am.max_payload || h.id >= AM_ID_SHUTDOWN) {
        st = RMC_ERR_ARG;
        why = AM_WHY_MALFORMED;
        cap = 0;
    }
    char *rep = malloc(sizeof(am_rep_t) + cap);
    if (!rep) {
        st = RMC_ERR_NOMEM;
        why = AM_WHY_NOMEM;
        cap = 0;
        rep = malloc(sizeof(am_rep_t));
        if (!rep) {
            rmci_async_fail("active messages", "no memory to reply to rank %d", src);
            return 0;
        }
    }
    size_t rlen = 0;
    if (st == RMC_OK)
        st = run_handler(src, &h, buf + sizeof(h), rep, cap, &rlen, &why, &val);
    if (st == RMCI_AM_DEFER) {
        if (am_is_thread) {
            free(rep);
            defer(src, buf, cnt);
            return 0;
        }
        st = RMC_ERR_INTERNAL; /* only the thread defers */
        why = AM_WHY_POSITIVE;
        val = (uint32_t)RMCI_AM_DEFER;
    }
    if (st == RMC_OK && rlen > cap) {
        st = RMC_ERR_TOO_BIG; /* the handler said it wrote past the reply buffer */
        why = AM_WHY_BIG;
        val = rlen > UINT32_MAX ? UINT32_MAX : (uint32_t)rlen;
    }
    if (st != RMC_OK)
        rlen = 0;
    am_rep_t rh = {.status = (int32_t)st,
                   .len = (uint32_t)rlen,
                   .pad = st == RMC_OK ? 0 : (uint64_t)why | (uint64_t)val << 32};
    memcpy(rep, &rh, sizeof(rh));
    srv_send(s, rep, (int)(sizeof(am_rep_t) + rlen), src, h.rtag);
    return 0;
}

/* (Re-)posts the receive of requests. A failure is reported (it cannot be returned: no call is
 * waiting for it) and retried at the next poll, so AM service never stops silently. */
static void post_receive(void)
{
    int rc = RMCI_MPI_RC(MPI_Irecv, (am.rbuf, am.rbuf_size, MPI_BYTE, MPI_ANY_SOURCE, AM_TAG_REQ,
                                     am.comm, &am.rreq));
    if (rc == MPI_SUCCESS) {
        if (am.repost_failures)
            rmci_async_fail("active messages", "request receive re-posted after %d failure(s)",
                            am.repost_failures);
        am.repost_failures = 0;
        return;
    }
    am.rreq = MPI_REQUEST_NULL;
    if (am.repost_failures++ == 0)
        rmci_async_fail("active messages",
                        "posting the request receive failed (MPI error %d); retrying at every poll",
                        rc);
}

/* Serves the requests that have arrived (at most a batch). Returns the number served, -1 when the
 * shutdown message was received (the receive is then not re-posted). Only the poller calls it. */
int am_poll_incoming(am_srv_t *s)
{
    int served = 0;
    if (am.rreq == MPI_REQUEST_NULL)
        post_receive();
    for (int k = 0; k < 64 && am.rreq != MPI_REQUEST_NULL; k++) {
        int flag = 0;
        MPI_Status status;
        int rc = RMCI_MPI_RC(MPI_Test, (&am.rreq, &flag, &status));
        if (rc != MPI_SUCCESS) {
            rmci_async_fail("active messages", "testing the request receive failed (MPI error %d)",
                            rc);
            break;
        }
        if (!flag)
            break;
        int cnt = 0;
        if (RMCI_MPI_RC(MPI_Get_count, (&status, MPI_BYTE, &cnt)) != MPI_SUCCESS)
            cnt = 0; /* cannot happen for a completed receive; handled as malformed */
        am.rreq = MPI_REQUEST_NULL;
        if (handle_msg(s, status.MPI_SOURCE, am.rbuf, cnt))
            return -1;
        post_receive();
        served++;
    }
    if (s->n)
        am_srv_reap(s);
    return served;
}

void am_serve_deferred(void)
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
void am_main_incoming(void)
{
    if (!am.thread_on) {
        am_poll_incoming(&am.srv_main);
        return;
    }
    if (pthread_mutex_trylock(&am.plock) == 0) {
        am_poll_incoming(&am.srv_main);
        pthread_mutex_unlock(&am.plock);
    } else if (am.srv_main.n) {
        am_srv_reap(&am.srv_main);
    }
}

/* Full poll of the main thread: everything this rank must serve. */
void am_poll_main(void)
{
    __atomic_store_n(&am.main_polls, am.main_polls + 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(&am.ndeferred, __ATOMIC_ACQUIRE))
        am_serve_deferred();
    am_main_incoming();
}

/* ----------------------------------------------------------------------- origin side --- */

void am_op_unlink(am_op_t *op)
{
    if (op->prev)
        op->prev->next = op->next;
    else if (am.ops == op)
        am.ops = op->next;
    if (op->next)
        op->next->prev = op->prev;
    op->next = op->prev = NULL;
}

static void open_unlink(am_op_t *op)
{
    if (op->oprev)
        op->oprev->onext = op->onext;
    else if (am.open == op)
        am.open = op->onext;
    if (op->onext)
        op->onext->oprev = op->oprev;
    op->onext = op->oprev = NULL;
}

int am_op_progress(am_op_t *op)
{
    if (op->done)
        return 1;
    int flag = 0;
    MPI_Status sts[2];
    int rc = RMCI_MPI_RC(MPI_Testall, (2, op->req, &flag, sts));
    if (rc != MPI_SUCCESS) {
        /* unrecoverable transport error: report it as the reply */
        rmci_mpi_fail("MPI_Testall", "active message", rc);
        op->mpi_failed = 1; /* not written into rbuf: the receive may still be active */
        flag = 1;
    }
    if (!flag)
        return 0;
    op->done = 1;
    open_unlink(op);
    if (op->has_greq)
        (void)RMCI_MPI_ST(MPI_Grequest_complete, (op->greq));
    return 1;
}

void am_complete_all(void)
{
    unsigned spins = 0;
    for (am_op_t *op = am.ops; op; op = op->next)
        while (!am_op_progress(op))
            rmci_wait_round(&spins);
    while (am.ops) {
        am_op_t *op = am.ops;
        am_op_unlink(op);
        if (op->has_greq)
            (void)RMCI_MPI_ST(MPI_Request_free,
                              (&op->greq)); /* the rmc request goes with the pool */
    }
}

rmc_status_t rmci_am_quiet(int rank)
{
    rmc_status_t st = RMC_OK;
    unsigned spins = 0;
    for (;;) {
        int open = 0;
        for (am_op_t *op = am.open, *next; op; op = next) {
            next = op->onext; /* a completed op leaves the list */
            if (op->rank != rank)
                continue;
            if (!am_op_progress(op))
                open = 1;
            else if (op->mpi_failed)
                st = RMC_ERR_MPI; /* recorded where it happened; reported here once */
        }
        if (!open)
            return st;
        rmci_wait_round(&spins);
    }
}

static rmc_status_t op_start(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t rcap, am_op_t **out)
{
    size_t head = (sizeof(am_op_t) + 15) & ~(size_t)15;
    size_t slen = sizeof(am_hdr_t) + n1 + n2;
    size_t sroom = (slen + 15) & ~(size_t)15;
    am_op_t *op = rmci_malloc(head + sroom + sizeof(am_rep_t) + rcap);
    if (!op)
        return rmci_fail(RMC_ERR_NOMEM, "active message", "%zu bytes for a request",
                         head + sroom + rcap);
    memset(op, 0, sizeof(*op));
    op->sbuf = (char *)op + head;
    op->rbuf = op->sbuf + sroom;
    op->rcap = rcap;
    op->rank = rank;
    op->id = id;
    am.seq = (am.seq + 1) % (uint32_t)am.tag_span;
    int tag = AM_TAG_FIRST_REPLY + (int)am.seq;
    am_hdr_t h = {
        .id = (uint32_t)id, .rtag = tag, .len = (uint32_t)(n1 + n2), .reply_cap = (uint32_t)rcap};
    memcpy(op->sbuf, &h, sizeof(h));
    if (n1)
        memcpy(op->sbuf + sizeof(h), p1, n1);
    if (n2)
        memcpy(op->sbuf + sizeof(h) + n1, p2, n2);
    rmc_status_t st = RMCI_MPI_ST(MPI_Irecv, (op->rbuf, (int)(sizeof(am_rep_t) + rcap), MPI_BYTE,
                                              rank, tag, am.comm, &op->req[1]));
    if (st == RMC_OK) {
        st = RMCI_MPI_ST(MPI_Isend,
                         (op->sbuf, (int)slen, MPI_BYTE, rank, AM_TAG_REQ, am.comm, &op->req[0]));
        if (st != RMC_OK) {
            (void)RMCI_MPI_ST(MPI_Cancel, (&op->req[1]));
            (void)RMCI_MPI_ST(MPI_Wait, (&op->req[1], MPI_STATUS_IGNORE));
        }
    }
    if (st != RMC_OK) {
        free(op);
        return st;
    }
    op->next = am.ops;
    if (am.ops)
        am.ops->prev = op;
    am.ops = op;
    op->onext = am.open;
    if (am.open)
        am.open->oprev = op;
    am.open = op;
    RMCI_PSTAT_ADD(am_sent, 1);
    *out = op;
    return RMC_OK;
}

/* Status and data of a completed op. */
static rmc_status_t op_result(am_op_t *op, const char **data, size_t *len)
{
    if (op->mpi_failed) {
        *data = NULL;
        *len = 0;
        return RMC_ERR_MPI;
    }
    am_rep_t rh;
    memcpy(&rh, op->rbuf, sizeof(rh));
    *data = op->rbuf + sizeof(am_rep_t);
    *len = rh.status == RMC_OK && rh.len <= op->rcap ? rh.len : 0;
    return (rmc_status_t)rh.status;
}

/* Records why the target refused or failed a request (its reply's reason, am_why_t). */
static rmc_status_t op_fail(const am_op_t *op, rmc_status_t st)
{
    am_rep_t rh;
    memcpy(&rh, op->rbuf, sizeof(rh));
    const char *fn = op->fn;
    uint32_t val = (uint32_t)(rh.pad >> 32);
    switch ((am_why_t)(uint32_t)rh.pad) {
    case AM_WHY_NONE:
        return rmci_fail(st, fn,
                         "rank %d, handler %d: no handler is registered under this id there",
                         op->rank, op->id);
    case AM_WHY_BIG:
        return rmci_fail(st, fn,
                         "rank %d, handler %d: the handler's reply of %u bytes exceeds reply_cap "
                         "%zu",
                         op->rank, op->id, val, op->rcap);
    case AM_WHY_POSITIVE:
        return rmci_fail(
            st, fn,
            "rank %d, handler %d: the handler returned %d (a positive status: handlers "
            "return RMC_OK or a negative rmc_status_t)",
            op->rank, op->id, (int)val);
    case AM_WHY_MALFORMED:
        return rmci_fail(st, fn, "rank %d, handler %d: the target found the request malformed",
                         op->rank, op->id);
    case AM_WHY_NOMEM:
        return rmci_fail(st, fn, "rank %d, handler %d: no memory for the reply at the target",
                         op->rank, op->id);
    case AM_WHY_HANDLER:
        break;
    }
    return rmci_fail(st, fn, "rank %d, handler %d: the handler failed: %s", op->rank, op->id,
                     rmc_status_string(st));
}

/* Copies a completed op's reply to the caller's buffer. */
static rmc_status_t op_deliver(am_op_t *op, void *reply, size_t reply_cap, size_t *reply_len)
{
    const char *data;
    size_t len;
    rmc_status_t st = op_result(op, &data, &len);
    if (st != RMC_OK && !op->mpi_failed && op->fn)
        op_fail(op, st); /* (comm's own requests word their failures themselves) */
    if (op->fin)
        return op->fin(st, data, len, op->fin_ptr, op->fin_data);
    if (len > reply_cap)
        len = reply_cap;
    if (len)
        memcpy(reply, data, len);
    if (reply_len)
        *reply_len = len;
    return st;
}

/* comm's own active messages (a transfer to registered memory, an atomic in thread AMO mode)
 * asked for inside a handler: refused, as rmc_am_send is there. Two ranks whose handlers wait for
 * each other's replies hung: neither can serve while its handler runs. */
static rmc_status_t internal_in_handler(void)
{
    return rmci_fail(RMC_ERR_STATE, "rmc (inside an active-message handler)",
                     "a transfer to registered memory or an atomic in thread AMO mode is an "
                     "active message, which a handler may not send (it could hang): handlers may "
                     "not call RMC's communication functions; they read and write their own "
                     "rank's memory directly and answer through their reply buffer");
}

/* A blocking request: started, then waited for with `pausing` rounds (rmci_mt_pause: other
 * threads of this rank get RMC's lock while this one waits, as rmc_wait's do) or plain ones
 * (internal callers, whose state may be mid-change). */
static rmc_status_t am_call(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                            void *reply, size_t reply_cap, size_t *reply_len, const char *fn,
                            int pausing)
{
    if (am_in_handler)
        return internal_in_handler();
    am_op_t *op;
    rmc_status_t st = op_start(rank, id, p1, n1, p2, n2, reply_cap, &op);
    if (st != RMC_OK)
        return st;
    op->fn = fn;
    unsigned spins = 0;
    while (!am_op_progress(op)) {
        rmci_wait_round(&spins);
        if (pausing)
            rmci_mt_pause();
    }
    am_op_unlink(op);
    st = op_deliver(op, reply, reply_cap, reply_len);
    if (!op->mpi_failed) /* else leaked: MPI may still use its buffers */
        free(op);
    return st;
}

rmc_status_t rmci_am_call(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                          void *reply, size_t reply_cap, size_t *reply_len)
{
    return am_call(rank, id, p1, n1, p2, n2, reply, reply_cap, reply_len, NULL, 0);
}

/* Generalized-request callbacks: the poll function keeps the engine going inside MPI_Wait/Test. */
static int greq_query(void *extra, MPI_Status *status)
{
    (void)extra;
    int rc = MPI_Status_set_elements(status, MPI_BYTE, 0);
    if (rc == MPI_SUCCESS)
        rc = MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return rc; /* MPI reports it to the waiter */
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
    if (!am_op_progress(op))
        am_poll_main();
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
            all &= am_op_progress((am_op_t *)extra[i]);
        if (all)
            return MPI_SUCCESS;
        rmci_wait_round(&spins);
    }
}

static rmc_status_t req_complete(struct rmc_request *q)
{
    am_op_t *op = q->cb_buf;
    am_op_unlink(op);
    rmc_status_t st = op_deliver(op, op->reply, op->reply_cap, op->reply_len);
    if (op->mpi_failed)
        q->cb_buf = NULL; /* leaked, not freed with the request: MPI may still use its buffers */
    return st;
}

/* How a non-blocking op delivers its reply at completion: a finisher (internal forms) or the
 * caller's buffer (rmc_am_send_nb). */
typedef struct am_delivery {
    rmci_am_finish_t fin;
    void *fin_ptr;
    uint64_t fin_data;
    void *reply;
    size_t reply_cap;
    size_t *reply_len;
} am_delivery_t;

static rmc_status_t start_nb(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t rcap, const am_delivery_t *dl, rmc_request_h *req,
                             const char *fn)
{
    struct rmc_request *q = rmci_req_alloc();
    if (!q)
        return rmci_fail(RMC_ERR_NOMEM, "active message", "no memory for a request");
    am_op_t *op;
    rmc_status_t st = op_start(rank, id, p1, n1, p2, n2, rcap, &op);
    if (st != RMC_OK) {
        rmci_req_release(q);
        return st;
    }
    op->fn = fn;
    op->fin = dl->fin;
    op->fin_ptr = dl->fin_ptr;
    op->fin_data = dl->fin_data;
    op->reply = dl->reply;
    op->reply_cap = dl->reply_cap;
    op->reply_len = dl->reply_len;
    if (RMCI_MPI_RC(MPIX_Grequest_start, (greq_query, greq_free, greq_cancel, greq_poll, greq_wait,
                                          op, &op->greq)) != MPI_SUCCESS) {
        /* cannot hand out a request: complete it now (still correct) */
        unsigned spins = 0;
        while (!am_op_progress(op))
            rmci_wait_round(&spins);
        q->nmpi = 0;
    } else {
        op->has_greq = 1;
        q->nmpi = 1;
        q->mpi[0] = op->greq;
        am_op_progress(op);
    }
    q->cb_buf = op; /* freed with the request */
    q->on_complete = req_complete;
    *req = q;
    return RMC_OK;
}

rmc_status_t rmci_am_call_nb(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t reply_cap, rmci_am_finish_t fin, void *ptr, uint64_t data,
                             rmc_request_h *req)
{
    if (am_in_handler) {
        if (req)
            *req = RMC_REQUEST_NULL;
        return internal_in_handler();
    }
    am_delivery_t dl = {.fin = fin, .fin_ptr = ptr, .fin_data = data};
    return start_nb(rank, id, p1, n1, p2, n2, reply_cap, &dl, req, NULL);
}

/* --------------------------------------------------------------------------- public --- */

/* A send inside a handler: refused before anything else (before RMCI_SERIAL: with a progress thread
 * the application's thread may hold the lock while it waits for this handler's reply). */
static rmc_status_t in_handler(const char *fn)
{
    return rmci_fail(RMC_ERR_STATE, fn,
                     "called inside an active-message handler, where it could only hang (the "
                     "reply it waits for needs the running handler to return): answer through the "
                     "handler's reply buffer");
}

static rmc_status_t send_checks(int rank, int id, const void *payload, size_t len, void *reply,
                                size_t reply_cap, const char *fn)
{
    RMCI_CHECK_INIT(fn);
    if (!am.up)
        return rmci_fail(RMC_ERR_UNSUPPORTED, fn, "the progress layer is not up");
    RMCI_POLL();
    RMCI_CHECK_RANK(fn, rank);
    if (!sendable_id(id))
        return rmci_fail(RMC_ERR_ARG, fn,
                         "handler id %d outside [0, %d] and not a layer's (rmc_am_register_layer)",
                         id, RMC_AM_ID_MAX);
    if ((!payload && len) || (!reply && reply_cap))
        return rmci_fail(RMC_ERR_ARG, fn, "NULL %s with a size",
                         !payload && len ? "payload" : "reply");
    if (len > am.max_payload || reply_cap > am.max_payload)
        return rmci_fail(RMC_ERR_TOO_BIG, fn,
                         "%zu bytes above the limit of %zu (RMC_AM_MAX_PAYLOAD)",
                         len > reply_cap ? len : reply_cap, am.max_payload);
    return RMC_OK;
}

rmc_status_t rmc_am_send(int rank, int id, const void *payload, size_t len, void *reply,
                         size_t reply_cap, size_t *reply_len)
{
    if (reply_len)
        *reply_len = 0;
    if (am_in_handler)
        return in_handler(__func__);
    RMCI_SERIAL();
    rmc_status_t st = send_checks(rank, id, payload, len, reply, reply_cap, __func__);
    if (st != RMC_OK)
        return st;
    return am_call(rank, id, payload, len, NULL, 0, reply, reply_cap, reply_len, __func__, 1);
}

rmc_status_t rmc_am_send_nb(int rank, int id, const void *payload, size_t len, void *reply,
                            size_t reply_cap, size_t *reply_len, rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    if (reply_len)
        *reply_len = 0;
    if (am_in_handler)
        return in_handler(__func__);
    RMCI_SERIAL();
    if (!req)
        return RMCI.initialized ? rmci_fail(RMC_ERR_ARG, __func__, "NULL request pointer")
                                : rmci_not_init(__func__);
    rmc_status_t st = send_checks(rank, id, payload, len, reply, reply_cap, __func__);
    if (st != RMC_OK)
        return st;
    am_delivery_t dl = {.reply = reply, .reply_cap = reply_cap, .reply_len = reply_len};
    return start_nb(rank, id, payload, len, NULL, 0, reply_cap, &dl, req, __func__);
}

rmc_status_t rmc_am_register(int id, rmc_am_handler_t handler, void *arg)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!am.up)
        return rmci_fail(RMC_ERR_UNSUPPORTED, __func__, "the progress layer is not up");
    RMCI_POLL();
    rmc_status_t st = RMC_OK;
    if (id < 0 || id > RMC_AM_ID_MAX)
        st = rmci_fail(RMC_ERR_ARG, __func__, "handler id %d outside [0, %d]", id, RMC_AM_ID_MAX);
    st = rmci_agree(RMCI.comm, st, __func__);
    if (st != RMC_OK)
        return st;
    set_handler(id, handler, arg);
    /* every rank has registered before any returns */
    return rmci_agree(RMCI.comm, RMC_OK, __func__);
}

rmc_status_t rmc_am_register_layer(rmc_am_handler_t handler, void *arg, int *id)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!am.up)
        return rmci_fail(RMC_ERR_UNSUPPORTED, __func__, "the progress layer is not up");
    RMCI_POLL();
    int mine = -1;
    rmc_status_t st = RMC_OK;
    if (!handler || !id)
        st = rmci_fail(RMC_ERR_ARG, __func__, "NULL %s", handler ? "id pointer" : "handler");
    else if ((st = rmci_am_add_internal(handler, arg, &mine)) == RMC_OK)
        am.handlers[mine].layer = 1;
    /* every rank hands out ids in the same order: check that they agree (minimum and maximum) */
    long long v[2] = {mine, -(long long)mine};
    rmc_status_t all = rmci_agree_vals(RMCI.comm, st, v, 2, __func__);
    if (all == RMC_OK && v[0] != -v[1])
        all = rmci_fail(RMC_ERR_STATE, __func__,
                        "the ranks registered layer handlers in different orders");
    st = all;
    if (st != RMC_OK) {
        if (mine >= 0)
            rmci_am_remove_internal(mine);
        return st;
    }
    *id = mine;
    return RMC_OK;
}

rmc_status_t rmc_am_unregister_layer(int id)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!am.up || id <= RMC_AM_ID_MAX || id >= AM_ID_SHUTDOWN || !am.handlers[id].layer)
        return rmci_fail(RMC_ERR_NOT_FOUND, __func__, "no layer handler under id %d", id);
    rmci_am_remove_internal(id);
    return RMC_OK;
}

/* The progress thread counts concurrently (relaxed atomic adds): each counter is read
 * atomically. */
rmc_status_t rmc_progress_stats(rmc_progress_stats_t *s)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!s)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL stats pointer");
#define LOAD(f) s->f = __atomic_load_n(&rmci_pstats.f, __ATOMIC_RELAXED)
    LOAD(am_sent);
    LOAD(am_served);
    LOAD(am_served_thread);
    LOAD(am_deferred);
    LOAD(fallback_ops);
    LOAD(cache_hits);
    LOAD(cache_misses);
    LOAD(cache_evictions);
    LOAD(cache_stale);
    LOAD(thread_sleeps);
#undef LOAD
    _Static_assert(sizeof(*s) == 10 * sizeof(unsigned long long), "a counter is not read above");
    return RMC_OK;
}
