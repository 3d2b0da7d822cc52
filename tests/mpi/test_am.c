/* Active messages: many requests in flight from every rank to every rank (self included), replies
 * matched to their requests, handlers run exactly once and in issue order per origin; handler
 * status propagation; bad input (unknown id, oversize payload, ...). With and without the progress
 * thread. */
#include "test_amo_util.h"

#define MAXR    16 /* ranks supported by the per-origin counters */
#define H_ECHO  1
#define H_FAIL  2
#define H_BIG   3
#define H_NEST  4  /* a handler that tries to send */
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

static void run(const char *thread)
{
    amotest_cfg_t c = {"mpi", thread};
    amotest_init(&c);
    register_all();
    many_in_flight();
    statuses();
    amotest_done();
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

MPITEST_MAIN("am", NULL, NULL, test_am_nothread, test_am_thread, test_layer_ids,
             test_payload_knob)
