/* Active messages: many requests in flight from every rank to every rank (self included), replies
 * matched to their requests, handlers run exactly once and in issue order per origin; handler
 * status propagation; bad input (unknown id, oversize payload, ...); RMC's communication functions
 * refused inside handlers; failures decided at the target worded at the origin; a positive handler
 * status. With and without the progress thread. */
#include "test_amo_util.h"

#define MAXR    16 /* ranks supported by the per-origin counters */
#define H_ECHO  1
#define H_FAIL  2
#define H_BIG   3
#define H_NEST  4  /* a handler that tries to send */
#define H_COMM  5  /* a handler that tries RMC's communication functions */
#define H_POS   6  /* a handler that returns a positive status */
#define H_OVER  7  /* a handler that claims a reply longer than its buffer */
#define H_NEVER 77 /* never registered */

static int runs[MAXR];     /* handler runs per origin (atomic: may run on the thread) */
static int last_seq[MAXR]; /* last sequence number seen per origin */
static int out_of_order;

typedef struct msg {
    int32_t origin, seq, len;
    unsigned char data[];
} msg_t;

/* Replies with the payload's bytes complemented, preceded by (origin, seq) as the target saw them.
 */
static rmc_status_t h_echo(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)arg;
    const msg_t *m = payload;
    if (len < sizeof(msg_t) || (size_t)m->len != len - sizeof(msg_t) || origin != m->origin ||
        origin >= MAXR)
        return RMC_ERR_ARG;
    __atomic_fetch_add(&runs[origin], 1, __ATOMIC_SEQ_CST);
    int prev = __atomic_exchange_n(&last_seq[origin], m->seq, __ATOMIC_SEQ_CST);
    if (m->seq <= prev)
        __atomic_store_n(&out_of_order, 1, __ATOMIC_SEQ_CST);
    if (cap < len)
        return RMC_ERR_TOO_BIG;
    msg_t *r = reply;
    r->origin = m->origin;
    r->seq = m->seq;
    r->len = m->len;
    for (int i = 0; i < m->len; i++)
        r->data[i] = (unsigned char)~m->data[i];
    *rlen = len;
    return RMC_OK;
}

static rmc_status_t h_fail(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)origin, (void)payload, (void)len, (void)reply, (void)cap, (void)rlen;
    return *(rmc_status_t *)arg;
}

/* Fills the whole reply capacity with a pattern. */
static rmc_status_t h_big(int origin, const void *payload, size_t len, void *reply, size_t cap,
                          size_t *rlen, void *arg)
{
    (void)payload, (void)len, (void)arg;
    for (size_t i = 0; i < cap; i++)
        ((unsigned char *)reply)[i] = mpitest_pat(origin, i, 9);
    *rlen = cap;
    return RMC_OK;
}

/* Claims a reply one byte longer than its buffer (a handler's bug): the origin gets
 * RMC_ERR_TOO_BIG, no reply (it got RMC_OK and an empty reply). */
static rmc_status_t h_overclaim(int origin, const void *payload, size_t len, void *reply,
                                size_t cap, size_t *rlen, void *arg)
{
    (void)origin, (void)payload, (void)len, (void)reply, (void)arg;
    *rlen = cap + 1;
    return RMC_OK;
}

/* Tries rmc_am_send and rmc_am_send_nb from inside the handler (which would wait for replies the
 * running handler holds up): replies with the two statuses, which must be RMC_ERR_STATE. */
static rmc_status_t h_nest(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)payload, (void)len, (void)arg;
    if (cap < 2 * sizeof(int))
        return RMC_ERR_TOO_BIG;
    char b[4] = {0};
    rmc_request_h q = RMC_REQUEST_NULL;
    size_t r0 = 99, r1 = 99;
    int st[2] = {(int)rmc_am_send(origin, H_BIG, b, 4, NULL, 0, &r0),
                 (int)rmc_am_send_nb(origin, H_BIG, b, 4, NULL, 0, &r1, &q)};
    if (q != RMC_REQUEST_NULL || r0 != 0 || r1 != 0) /* nothing sent, no reply */
        st[1] = -1000;
    memcpy(reply, st, sizeof st);
    *rlen = sizeof st;
    return RMC_OK;
}

static rmc_status_t fail_status = RMC_ERR_STATE;

/* H_COMM: the region the handler would write into, every rank's base */
static void **comm_bases;
#define NCOMM 8

/* Tries one-sided transfers (to the origin's region: node-local in the real mode, so rmc_put and
 * rmc_get are plain copies there), an atomic, a fence, the barrier, waits: each is refused inside a
 * handler (RMC_ERR_STATE; a handler that waits hangs when the origin's thread holds RMC's lock or
 * waits for it) with a message naming the function and the handler. Replies with the statuses and
 * whether every message said so. */
static rmc_status_t h_comm(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)payload, (void)len, (void)arg;
    int st[NCOMM + 1];
    if (cap < sizeof st)
        return RMC_ERR_TOO_BIG;
    int64_t v = 42, g = 0;
    int64_t *at = (int64_t *)comm_bases[origin];
    rmc_request_h q = RMC_REQUEST_NULL;
    int msg_ok = 1;
#define TRY(i, call)                                                                               \
    do {                                                                                           \
        st[i] = (int)(call);                                                                       \
        msg_ok &= strstr(rmc_last_error(), "inside an active-message handler") != NULL;            \
    } while (0)
    TRY(0, rmc_put(&v, at, sizeof v, origin));
    TRY(1, rmc_get(&g, at, sizeof g, origin));
    TRY(2, rmc_put_nb(&v, at, sizeof v, origin, &q));
    TRY(3, rmc_amo_fetch_add_i64(at + 1, 1, &g, origin));
    TRY(4, rmc_fence_all());
    TRY(5, rmc_barrier());
    TRY(6, rmc_wait(&q));
    TRY(7, rmc_progress());
#undef TRY
    st[NCOMM] = msg_ok && q == RMC_REQUEST_NULL && g == 0;
    memcpy(reply, st, sizeof st);
    *rlen = sizeof st;
    return RMC_OK;
}

static int pos_runs; /* H_POS runs (atomic: may run on the thread) */
static rmc_status_t h_pos(int origin, const void *payload, size_t len, void *reply, size_t cap,
                          size_t *rlen, void *arg)
{
    (void)origin, (void)payload, (void)len, (void)reply, (void)cap, (void)rlen, (void)arg;
    __atomic_fetch_add(&pos_runs, 1, __ATOMIC_SEQ_CST);
    return (rmc_status_t)1;
}

static void reset_counters(void)
{
    for (int i = 0; i < MAXR; i++) {
        runs[i] = 0;
        last_seq[i] = -1;
    }
    out_of_order = 0;
}

static void register_all(void)
{
    reset_counters();
    MPI_CHECK_OK(rmc_am_register(H_ECHO, h_echo, NULL));
    MPI_CHECK_OK(rmc_am_register(H_FAIL, h_fail, &fail_status));
    MPI_CHECK_OK(rmc_am_register(H_BIG, h_big, NULL));
    MPI_CHECK_OK(rmc_am_register(H_NEST, h_nest, NULL));
}

static size_t len_of(int seq)
{
    static const size_t lens[] = {0, 1, 7, 64, 333, 1024, 4000};
    return lens[seq % 7];
}

/* k requests to every rank, all in flight at once, then k blocking ones; replies checked. */
static void many_in_flight(void)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int k = amotest_iters(48);
    size_t total = (size_t)k * n;
    msg_t **req = calloc(total, sizeof(msg_t *));
    msg_t **rep = calloc(total, sizeof(msg_t *));
    size_t *rlen = calloc(total, sizeof(size_t));
    rmc_request_h *h = calloc(total, sizeof(rmc_request_h));
    rmc_status_t st = RMC_OK;
    /* issue in seq order per target: seq i to every target, for i = 0..k-1 */
    for (int i = 0; i < k && st == RMC_OK; i++)
        for (int t = 0; t < n && st == RMC_OK; t++) {
            size_t j = (size_t)t * k + i, len = len_of(i);
            req[j] = malloc(sizeof(msg_t) + len);
            rep[j] = malloc(sizeof(msg_t) + len);
            req[j]->origin = me;
            req[j]->seq = i;
            req[j]->len = (int32_t)len;
            for (size_t b = 0; b < len; b++)
                req[j]->data[b] = mpitest_pat(me, b + (size_t)i, (unsigned)t);
            st = rmc_am_send_nb(t, H_ECHO, req[j], sizeof(msg_t) + len, rep[j], sizeof(msg_t) + len,
                                &rlen[j], &h[j]);
            /* the payload was copied: scribbling on it must not change what the target sees */
            if (st == RMC_OK && len)
                req[j]->data[0] ^= 0xff;
        }
    rmc_status_t sw = rmc_wait_all(h, total);
    /* blocking ones, continuing the sequence */
    int ok = 1;
    for (int i = k; i < k + 8 && st == RMC_OK; i++)
        for (int t = 0; t < n && st == RMC_OK; t++) {
            unsigned char buf[sizeof(msg_t) + 64], out[sizeof(msg_t) + 64];
            msg_t *m = (msg_t *)buf;
            m->origin = me;
            m->seq = i;
            m->len = 64;
            memset(m->data, i, 64);
            size_t got = 0;
            st = rmc_am_send(t, H_ECHO, m, sizeof(buf), out, sizeof(out), &got);
            ok &= got == sizeof(out) && ((msg_t *)out)->seq == i &&
                  ((msg_t *)out)->data[63] == (unsigned char)~i;
        }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    MPI_CHECK_OK(sw);
    MPI_CHECK_ALL(ok);
    for (size_t j = 0; j < total; j++) {
        int t = (int)(j / (size_t)k), i = (int)(j % (size_t)k);
        size_t len = len_of(i);
        if (len)
            req[j]->data[0] ^= 0xff; /* undo the scribble */
        ok &= h[j] == RMC_REQUEST_NULL && rlen[j] == sizeof(msg_t) + len;
        ok &= rep[j]->origin == me && rep[j]->seq == i && rep[j]->len == (int32_t)len;
        for (size_t b = 0; b < len && ok; b++)
            ok &= rep[j]->data[b] == (unsigned char)~mpitest_pat(me, b + (size_t)i, (unsigned)t);
        free(req[j]);
        free(rep[j]);
    }
    MPI_CHECK_ALL(ok);
    /* exactly once, in order */
    ok = !out_of_order;
    for (int o = 0; o < n; o++)
        ok &= __atomic_load_n(&runs[o], __ATOMIC_SEQ_CST) == k + 8 &&
              __atomic_load_n(&last_seq[o], __ATOMIC_SEQ_CST) == k + 7;
    MPI_CHECK_ALL(ok);
    free(req);
    free(rep);
    free(rlen);
    free(h);
}

/* Handler status, reply capacity, bad input. Nothing is run for refused sends. */
static void statuses(void)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int peer = (me + 1) % n;
    size_t max = rmc_am_max_payload();
    int ok = max >= 256;
    reset_counters();
    MPI_CHECK_OK(rmc_barrier());
    unsigned char small[16] = {0};
    size_t rl = 99;
    ok &= rmc_am_send(peer, H_FAIL, small, 4, NULL, 0, NULL) == RMC_ERR_STATE;
    ok &= rmc_am_send(peer, H_NEVER, small, 4, NULL, 0, &rl) == RMC_ERR_NOT_FOUND && rl == 0;
    ok &= rmc_am_send(me, H_NEVER, small, 4, NULL, 0, NULL) == RMC_ERR_NOT_FOUND;
    rmc_request_h q = RMC_REQUEST_NULL;
    ok &= rmc_am_send_nb(peer, H_NEVER, NULL, 0, NULL, 0, NULL, &q) == RMC_OK;
    ok &= rmc_wait(&q) == RMC_ERR_NOT_FOUND && q == RMC_REQUEST_NULL;
    /* reply capacity: the handler fills what the origin offers, up to the maximum */
    unsigned char *big = malloc(max + 1);
    rl = 0;
    ok &= rmc_am_send(peer, H_BIG, NULL, 0, big, max, &rl) == RMC_OK && rl == max;
    for (size_t i = 0; i < max && ok; i++)
        ok &= big[i] == mpitest_pat(me, i, 9);
    ok &= rmc_am_send(peer, H_BIG, NULL, 0, big, 0, &rl) == RMC_OK && rl == 0;
    /* a handler's own sends are refused (they could only hang) */
    for (int k = 0; k < 2; k++) {
        int nst[2] = {0, 0};
        ok &= rmc_am_send(k ? me : peer, H_NEST, NULL, 0, nst, sizeof nst, &rl) == RMC_OK &&
              rl == sizeof nst && nst[0] == RMC_ERR_STATE && nst[1] == RMC_ERR_STATE;
    }
    /* a payload of exactly the maximum goes through (echo needs header room: use H_FAIL) */
    ok &= rmc_am_send(peer, H_FAIL, big, max, NULL, 0, NULL) == RMC_ERR_STATE;
    /* bad input: refused at the origin, nothing sent */
    ok &= rmc_am_send(peer, H_ECHO, big, max + 1, NULL, 0, NULL) == RMC_ERR_TOO_BIG;
    ok &= rmc_am_send(peer, H_BIG, NULL, 0, big, max + 1, &rl) == RMC_ERR_TOO_BIG;
    ok &= rmc_am_send_nb(peer, H_ECHO, big, max + 1, NULL, 0, NULL, &q) == RMC_ERR_TOO_BIG &&
          q == RMC_REQUEST_NULL;
    ok &= rmc_am_send(peer, RMC_AM_ID_MAX + 1, small, 4, NULL, 0, NULL) == RMC_ERR_ARG;
    ok &= rmc_am_send(peer, -1, small, 4, NULL, 0, NULL) == RMC_ERR_ARG;
    ok &= rmc_am_send(peer, H_ECHO, NULL, 4, NULL, 0, NULL) == RMC_ERR_ARG;
    ok &= rmc_am_send(peer, H_ECHO, small, 4, NULL, 8, NULL) == RMC_ERR_ARG;
    ok &= rmc_am_send(n, H_ECHO, small, 4, NULL, 0, NULL) == RMC_ERR_RANK;
    ok &= rmc_am_send(-1, H_ECHO, small, 4, NULL, 0, NULL) == RMC_ERR_RANK;
    ok &= rmc_am_send_nb(peer, H_ECHO, small, 4, NULL, 0, NULL, NULL) == RMC_ERR_ARG;
    free(big);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
    for (int o = 0; o < n; o++) /* the echo handler never ran */
        MPI_CHECK_ALL(__atomic_load_n(&runs[o], __ATOMIC_SEQ_CST) == 0);
    MPI_CHECK_ALL(rmc_am_register(RMC_AM_ID_MAX + 1, h_echo, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_am_register(-1, h_echo, NULL) == RMC_ERR_ARG);
    /* unregister: afterwards the id is unknown */
    MPI_CHECK_OK(rmc_am_register(H_FAIL, NULL, NULL));
    rmc_status_t s = rmc_am_send(peer, H_FAIL, small, 4, NULL, 0, NULL);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(s == RMC_ERR_NOT_FOUND);
}

/* The statuses that H_COMM replied: every call refused with RMC_ERR_STATE, every message said
 * why, nothing written. */
static int comm_refused(const int *st)
{
    int ok = st[NCOMM] == 1;
    for (int i = 0; i < NCOMM; i++)
        ok &= st[i] == RMC_ERR_STATE;
    if (!ok) {
        fprintf(stderr, "[rank %d] H_COMM replied", mpitest_rank_);
        for (int i = 0; i <= NCOMM; i++)
            fprintf(stderr, " %d", st[i]);
        fprintf(stderr, "\n");
    }
    return ok;
}

/* What a handler may not do, and failures decided at the target: each is reported at the origin
 * with a message naming the rank and the handler; this rank's last error is its own. */
static void handler_rules(void)
{
    int n = mpitest_nranks_, me = mpitest_rank_;
    int peer = (me + 1) % n;
    rmc_region_h r;
    comm_bases = malloc((size_t)n * sizeof(void *));
    MPI_CHECK_OK(rmc_region_alloc(64, comm_bases, &r));
    memset(comm_bases[me], 0, 64);
    pos_runs = 0;
    MPI_CHECK_OK(rmc_am_register(H_COMM, h_comm, NULL));
    MPI_CHECK_OK(rmc_am_register(H_POS, h_pos, NULL));
    MPI_CHECK_OK(rmc_am_register(H_OVER, h_overclaim, NULL));
    MPI_CHECK_OK(rmc_am_register(H_FAIL, h_fail, &fail_status)); /* (statuses() removed it) */
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1;
    /* communication inside a handler is refused: to the peer and to self, and every rank sending
     * to its peer at once, many times (each rank's thread waits in rmc_am_send while its handler
     * runs: with the handler's rmc_put waiting for RMC's lock this hung) */
    int st[NCOMM + 1];
    size_t rl = 0;
    for (int i = 0; i < 200 && ok; i++) {
        memset(st, 0, sizeof st);
        ok &= rmc_am_send(i % 2 ? me : peer, H_COMM, NULL, 0, st, sizeof st, &rl) == RMC_OK &&
              rl == sizeof st && comm_refused(st);
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
    int64_t mine[2];
    memcpy(mine, comm_bases[me], sizeof mine);
    MPI_CHECK_ALL(mine[0] == 0 && mine[1] == 0); /* nothing was written */
    /* failures decided at the target, worded at the origin */
    char want[64];
    rmc_status_t s1 = rmc_am_send(peer, H_NEVER, NULL, 0, NULL, 0, NULL);
    snprintf(want, sizeof want, "rmc_am_send: rank %d, handler %d: no handler", peer, H_NEVER);
    ok &= s1 == RMC_ERR_NOT_FOUND && strstr(rmc_last_error(), want);
    s1 = rmc_am_send(peer, H_FAIL, NULL, 0, NULL, 0, NULL);
    snprintf(want, sizeof want, "rmc_am_send: rank %d, handler %d: the handler failed", peer,
             H_FAIL);
    ok &= s1 == RMC_ERR_STATE && strstr(rmc_last_error(), want);
    unsigned char rep[16];
    s1 = rmc_am_send(peer, H_OVER, NULL, 0, rep, sizeof rep, &rl);
    snprintf(want, sizeof want, "rank %d, handler %d: the handler's reply of 17 bytes", peer,
             H_OVER);
    ok &= s1 == RMC_ERR_TOO_BIG && rl == 0 && strstr(rmc_last_error(), want) &&
          strstr(rmc_last_error(), "reply_cap 16");
    rmc_request_h q = RMC_REQUEST_NULL;
    ok &= rmc_am_send_nb(peer, H_NEVER, NULL, 0, NULL, 0, NULL, &q) == RMC_OK;
    ok &= rmc_wait(&q) == RMC_ERR_NOT_FOUND && strstr(rmc_last_error(), "rmc_am_send_nb: rank");
    /* a positive status from a handler: a failure at the origin, the handler ran once (1 was the
     * progress thread's "defer": the request ran again on the main thread) */
    s1 = rmc_am_send(peer, H_POS, NULL, 0, NULL, 0, NULL);
    snprintf(want, sizeof want, "rank %d, handler %d: the handler returned 1", peer, H_POS);
    ok &= s1 == RMC_ERR_INTERNAL && strstr(rmc_last_error(), want);
    if (!ok)
        fprintf(stderr, "[rank %d] last error '%s'\n", me, rmc_last_error());
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(__atomic_load_n(&pos_runs, __ATOMIC_SEQ_CST) == 1);
    /* handlers this thread serves while it waits leave its last error alone: its own failure,
     * then a send served by the peer while the peer's sends to this rank run H_COMM here (whose
     * refusals record messages on the serving thread) */
    rmc_status_t own = rmc_am_send(n, H_ECHO, NULL, 0, NULL, 0, NULL);
    char mine_msg[256];
    snprintf(mine_msg, sizeof mine_msg, "%s", rmc_last_error());
    for (int i = 0; i < 20 && ok; i++)
        ok &= rmc_am_send(peer, H_COMM, NULL, 0, st, sizeof st, &rl) == RMC_OK && comm_refused(st);
    MPI_CHECK_OK(rmc_barrier());
    ok &= own == RMC_ERR_RANK && strcmp(rmc_last_error(), mine_msg) == 0;
    if (!ok)
        fprintf(stderr, "[rank %d] last error '%s', was '%s'\n", me, rmc_last_error(), mine_msg);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(r));
    free(comm_bases);
    comm_bases = NULL;
}

static void run(const char *thread)
{
    amotest_cfg_t c = {"mpi", thread};
    amotest_init(&c);
    register_all();
    many_in_flight();
    statuses();
    handler_rules();
    amotest_done();
}

/* The same in thread AMO mode (atomics inside the handler are active messages there). */
static void test_handler_rules_thread_amo(void **state)
{
    (void)state;
    for (int t = 0; t < 2; t++) {
        amotest_init(&amotest_cfgs[t ? 2 : 1]);
        register_all();
        handler_rules();
        amotest_done();
    }
}

static void test_am_nothread(void **state)
{
    (void)state;
    run("0");
}

static void test_am_thread(void **state)
{
    (void)state;
    run("1");
}

/* A layer's handler: an id outside the application's range, the same on every rank, usable by
 * rmc_am_send; the application cannot register that id; after unregistering, sends are refused. */
static rmc_status_t h_layer(int origin, const void *payload, size_t len, void *reply, size_t cap,
                            size_t *rlen, void *arg)
{
    (void)payload;
    (void)len;
    if (cap < sizeof(int))
        return RMC_ERR_TOO_BIG;
    int v = origin * 10 + *(int *)arg;
    memcpy(reply, &v, sizeof(v));
    *rlen = sizeof(v);
    return RMC_OK;
}

static void test_layer_ids(void **state)
{
    (void)state;
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    int me = rmc_rank(), np = rmc_nranks(), seven = 7, id = -1, id2 = -1, ok = 1;
    MPI_CHECK_OK(rmc_am_register_layer(h_layer, &seven, &id));
    MPI_CHECK_OK(rmc_am_register_layer(h_layer, &seven, &id2));
    MPI_CHECK_ALL(id > RMC_AM_ID_MAX && id2 > RMC_AM_ID_MAX && id != id2);
    int got = -1;
    size_t n = 0;
    MPITEST_EXPECT(ok, rmc_am_send((me + 1) % np, id, NULL, 0, &got, sizeof(got), &n) == RMC_OK &&
                           n == sizeof(got) && got == me * 10 + 7);
    MPITEST_EXPECT(ok, rmc_am_register(id, h_layer, &seven) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_am_register_layer(NULL, NULL, &id2) == RMC_ERR_ARG);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_am_unregister_layer(id));
    MPI_CHECK_OK(rmc_am_unregister_layer(id2));
    MPITEST_EXPECT(ok, rmc_am_unregister_layer(id) == RMC_ERR_NOT_FOUND);
    MPITEST_EXPECT(ok, rmc_am_unregister_layer(3) == RMC_ERR_NOT_FOUND);
    MPITEST_EXPECT(ok, rmc_am_send(me, id, NULL, 0, NULL, 0, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_finalize());
}

/* A small payload limit is honoured exactly. */
static void test_payload_knob(void **state)
{
    (void)state;
    amotest_fresh();
    setenv("RMC_AM_MAX_PAYLOAD", "300", 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_ALL(rmc_am_max_payload() == 300);
    MPI_CHECK_OK(rmc_am_register(H_FAIL, h_fail, &fail_status));
    unsigned char buf[301] = {0};
    int peer = (mpitest_rank_ + 1) % mpitest_nranks_;
    rmc_status_t a = rmc_am_send(peer, H_FAIL, buf, 300, NULL, 0, NULL);
    rmc_status_t b = rmc_am_send(peer, H_FAIL, buf, 301, NULL, 0, NULL);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(a == RMC_ERR_STATE && b == RMC_ERR_TOO_BIG);
    MPI_CHECK_OK(rmc_finalize());
    setenv("RMC_AM_MAX_PAYLOAD", "100", 1); /* below the minimum: refused */
    MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ARG && !rmc_initialized());
    /* not an integer to its end: refused, the message quotes the text (was read as 64) */
    setenv("RMC_AM_MAX_PAYLOAD", "64K", 1);
    MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ARG && !rmc_initialized() &&
                  strstr(rmc_last_error(), "RMC_AM_MAX_PAYLOAD=64K"));
    setenv("RMC_AM_MAX_PAYLOAD", "4096junk", 1); /* was read as 4096 */
    MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ARG && !rmc_initialized());
    /* a different limit on one rank: every rank fails (a larger request would be truncated at
     * the target: MPI aborted the job) */
    setenv("RMC_AM_MAX_PAYLOAD", mpitest_rank_ == 0 ? "65536" : "256", 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    MPI_CHECK_ALL(mpitest_nranks_ == 1 ||
                  (st == RMC_ERR_ARG && !rmc_initialized() &&
                   (mpitest_rank_ != 0 || strstr(rmc_last_error(), "not the same on every rank"))));
    if (st == RMC_OK)
        MPI_CHECK_OK(rmc_finalize());
    unsetenv("RMC_AM_MAX_PAYLOAD");
    /* a handler's reply longer than the buffer it was given */
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_OK(rmc_am_register(H_BIG, h_overclaim, NULL));
    unsigned char rep[16];
    size_t rlen = 99;
    st = rmc_am_send(peer, H_BIG, NULL, 0, rep, sizeof rep, &rlen);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(st == RMC_ERR_TOO_BIG && rlen == 0);
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(rmc_am_send(0, H_FAIL, buf, 1, NULL, 0, NULL) == RMC_ERR_NOT_INIT);
    MPI_CHECK_ALL(rmc_am_max_payload() == 0);
}

MPITEST_MAIN("am", NULL, NULL, test_am_nothread, test_am_thread, test_layer_ids, test_payload_knob,
             test_handler_rules_thread_amo)
