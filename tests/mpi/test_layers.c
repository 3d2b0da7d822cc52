/* The layer registry (rmc/layer.h): a layer registered before rmc_init is initialized by it, sees
 * every region created and freed, is polled, is offered accesses to unmapped addresses, is
 * finalized by rmc_finalize and stays registered for the next rmc_init; a layer registered while
 * initialized is initialized at once and dropped at rmc_finalize; a failing init or
 * region_created fails the call on every rank; bad input is refused. */
#include "mpitest.h"

typedef struct counts {
    int init, finalize, created, freed, polls, full_polls, unmapped;
    rmc_region_h last_created, last_freed;
    int fail_init;    /* init returns RMC_ERR_NOMEM on this rank (agreed) */
    int fail_created; /* region_created fails on this rank (once) */
} counts_t;

static counts_t c1, c2, c3;
#define me mpitest_rank_ /* this rank and the job size (mpitest.h) */
#define np mpitest_nranks_
static char fake[256]; /* "memory" layer 1 serves to rmc_put / rmc_get on this rank */

static rmc_status_t l_init(void *arg)
{
    counts_t *c = arg;
    c->init++;
    return rmc_agree(c->fail_init ? RMC_ERR_NOMEM : RMC_OK);
}
static void l_finalize(void *arg)
{
    ((counts_t *)arg)->finalize++;
}
static rmc_status_t l_created(rmc_region_h r, void *arg)
{
    counts_t *c = arg;
    if (c->fail_created) {
        c->fail_created = 0;
        return RMC_ERR_NOMEM;
    }
    c->created++;
    c->last_created = r;
    return RMC_OK;
}
static void l_freed(rmc_region_h r, void *arg)
{
    counts_t *c = arg;
    c->freed++;
    c->last_freed = r;
}
static void l_poll(int full, void *arg)
{
    counts_t *c = arg;
    c->polls++;
    c->full_polls += full != 0;
}
static rmc_status_t l_unmapped(int is_put, const void *remote, void *local, size_t bytes, int rank,
                               void *arg)
{
    counts_t *c = arg;
    const char *r = remote;
    if (rank != me || r < fake || r + bytes > fake + sizeof fake)
        return RMC_ERR_NOT_REGION;
    c->unmapped++;
    if (is_put)
        memcpy((char *)r, local, bytes);
    else
        memcpy(local, r, bytes);
    return RMC_OK;
}

static const rmc_layer_t L1 = {.name = "test-persistent",
                               .init = l_init,
                               .finalize = l_finalize,
                               .region_created = l_created,
                               .region_freed = l_freed,
                               .poll = l_poll,
                               .unmapped = l_unmapped,
                               .arg = &c1};
static const rmc_layer_t L2 = {.name = "test-late",
                               .init = l_init,
                               .finalize = l_finalize,
                               .region_created = l_created,
                               .region_freed = l_freed,
                               .arg = &c2};
static const rmc_layer_t L3 = {.name = "test-failing", .init = l_init, .arg = &c3};

static void test_bad_input(void **state)
{
    (void)state;
    rmc_layer_t noname = {.name = NULL};
    MPI_CHECK_ALL(rmc_layer_register(NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_layer_register(&noname) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_layer_unregister(&L2) == RMC_ERR_NOT_FOUND);
    MPI_CHECK_ALL(rmc_layer_unregister(NULL) == RMC_ERR_NOT_FOUND);
}

static void test_persistent(void **state)
{
    (void)state;
    memset(&c1, 0, sizeof c1);
    MPI_CHECK_OK(rmc_layer_register(&L1));
    MPI_CHECK_ALL(rmc_layer_register(&L1) == RMC_ERR_STATE); /* twice */
    MPI_CHECK_ALL(c1.init == 0);
    for (int cycle = 1; cycle <= 2; cycle++) {
        MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
        MPI_CHECK_ALL(c1.init == cycle && c1.finalize == cycle - 1);
        /* region events, with the handles the application sees */
        void *bases[64];
        rmc_region_h h;
        MPI_CHECK_OK(rmc_region_alloc(128, bases, &h));
        MPI_CHECK_ALL(c1.created == cycle && c1.last_created == h);
        MPI_CHECK_OK(rmc_region_free(h));
        MPI_CHECK_ALL(c1.freed == cycle && c1.last_freed == h);
        /* polls: cheap ones from ordinary calls, full ones while waiting */
        int p0 = c1.polls, f0 = c1.full_polls;
        long v = me;
        for (int i = 0; i < 1000; i++)
            MPI_CHECK_ALL(rmc_fence(me) == RMC_OK);
        MPI_CHECK_ALL(c1.polls > p0);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_ALL(c1.full_polls > f0 || np == 1);
        /* an address in no region is offered to the layers */
        v = 4242 + me;
        long back = 0;
        MPI_CHECK_OK(rmc_put(&v, fake + 8, sizeof v, me));
        MPI_CHECK_OK(rmc_get(fake + 8, &back, sizeof back, me));
        MPI_CHECK_ALL(back == v && c1.unmapped == 2 * cycle);
        long junk = 0; /* not the layer's: still refused */
        MPI_CHECK_ALL(rmc_put(&v, &junk, sizeof v, me) == RMC_ERR_NOT_REGION);
        MPI_CHECK_OK(rmc_finalize());
        MPI_CHECK_ALL(c1.finalize == cycle);
    }
    MPI_CHECK_OK(rmc_layer_unregister(&L1)); /* local while not initialized */
    MPI_CHECK_ALL(rmc_layer_unregister(&L1) == RMC_ERR_NOT_FOUND);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(c1.init == 2 && c1.finalize == 2);
}

static void test_late_and_failing(void **state)
{
    (void)state;
    memset(&c2, 0, sizeof c2);
    memset(&c3, 0, sizeof c3);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    /* registered while initialized: initialized at once (collective) */
    MPI_CHECK_OK(rmc_layer_register(&L2));
    MPI_CHECK_ALL(c2.init == 1);
    MPI_CHECK_ALL(rmc_layer_register(&L2) == RMC_ERR_STATE);
    /* an init failing on one rank fails the registration on every rank */
    c3.fail_init = me == np - 1;
    MPI_CHECK_ALL(rmc_layer_register(&L3) == RMC_ERR_NOMEM);
    MPI_CHECK_ALL(c3.init == 1 && rmc_layer_unregister(&L3) == RMC_ERR_NOT_FOUND);
    /* region_created failing on one rank fails the allocation everywhere; the layers that had
     * learned the region forget it */
    c2.fail_created = me == np - 1;
    void *bases[64];
    rmc_region_h h = (rmc_region_h)&c2;
    MPI_CHECK_ALL(rmc_region_alloc(64, bases, &h) == RMC_ERR_NOMEM);
    MPI_CHECK_ALL(h == NULL && rmc_region_count() == 0);
    MPI_CHECK_ALL(c2.created == c2.freed);
    MPI_CHECK_OK(rmc_region_alloc(64, bases, &h));
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_ALL(c2.created == c2.freed && c2.created >= 1);
    MPI_CHECK_OK(rmc_finalize());
    /* dropped at finalize, after its finalize ran once */
    MPI_CHECK_ALL(c2.finalize == 1 && rmc_layer_unregister(&L2) == RMC_ERR_NOT_FOUND);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_ALL(c2.init == 1);
    /* unregistered while initialized: finalized at once */
    MPI_CHECK_OK(rmc_layer_register(&L2));
    MPI_CHECK_OK(rmc_layer_unregister(&L2));
    MPI_CHECK_ALL(c2.init == 2 && c2.finalize == 2);
    MPI_CHECK_OK(rmc_finalize());
}

/* A layer registered from another layer's init (during rmc_init) is initialized once and
 * finalized once per cycle (it was initialized again by rmc_init's loop). A failing init's
 * message names the layer, not an older unrelated failure of the thread. */
static counts_t cn;
static const rmc_layer_t LN = {
    .name = "test-nested", .init = l_init, .finalize = l_finalize, .arg = &cn};
static rmc_status_t l_init_registers(void *arg)
{
    counts_t *c = arg;
    c->init++;
    rmc_status_t st = rmc_layer_register(&LN);
    return rmc_agree(st);
}
static counts_t cp;
static const rmc_layer_t LP = {
    .name = "test-parent", .init = l_init_registers, .finalize = l_finalize, .arg = &cp};

static void test_nested_and_message(void **state)
{
    (void)state;
    memset(&cn, 0, sizeof cn);
    memset(&cp, 0, sizeof cp);
    MPI_CHECK_OK(rmc_layer_register(&LP));
    for (int cycle = 1; cycle <= 2; cycle++) {
        MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
        MPI_CHECK_ALL(cp.init == cycle && cn.init == cycle);
        MPI_CHECK_OK(rmc_finalize());
        MPI_CHECK_ALL(cp.finalize == cycle && cn.finalize == cycle);
    }
    MPI_CHECK_OK(rmc_layer_unregister(&LP));
    /* an older failure of this thread, then a layer failing its init */
    memset(&c3, 0, sizeof c3);
    c3.fail_init = me == np - 1;
    MPI_CHECK_OK(rmc_layer_register(&L3));
    long x = 0;
    MPI_CHECK_ALL(rmc_get(&x, &x, 8, 0) == RMC_ERR_NOT_INIT);
    MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_NOMEM);
    int ok = strstr(rmc_last_error(), "rmc_init") == rmc_last_error() &&
             strstr(rmc_last_error(), "test-failing") != NULL &&
             strstr(rmc_last_error(), "rmc_get") == NULL;
    if (!ok)
        fprintf(stderr, "[rank %d] '%s'\n", me, rmc_last_error());
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_layer_unregister(&L3));
}

/* A poll that communicates: while it waits for its active message's reply, the layers registered
 * before it (comm's progress layer, which serves this rank's active messages) keep polling, so
 * every rank's poll waiting for its neighbour's reply at once completes; its own poll is not
 * re-entered. Without a progress thread this hung: a poll's waits ran no poll at all. */
static struct {
    int armed, depth, max_depth, sent, replies, id;
    long got;
} cw;
static rmc_status_t echo_handler(int origin, const void *payload, size_t len, void *reply,
                                 size_t reply_cap, size_t *reply_len, void *arg)
{
    (void)origin;
    (void)arg;
    if (len != sizeof(long) || reply_cap < sizeof(long))
        return RMC_ERR_ARG;
    long v;
    memcpy(&v, payload, sizeof v);
    v += 1000;
    memcpy(reply, &v, sizeof v);
    *reply_len = sizeof v;
    return RMC_OK;
}
static void l_poll_sends(int full, void *arg)
{
    (void)arg;
    if (++cw.depth > cw.max_depth)
        cw.max_depth = cw.depth;
    if (full && cw.armed) {
        cw.armed = 0;
        long v = me, back = -1;
        size_t rlen = 0;
        cw.sent++;
        rmc_status_t st =
            rmc_am_send((me + 1) % np, cw.id, &v, sizeof v, &back, sizeof back, &rlen);
        if (st == RMC_OK && rlen == sizeof back)
            cw.replies++, cw.got = back;
        else
            fprintf(stderr, "[rank %d] the poll's rmc_am_send: %s (reply %zu bytes)\n", me,
                    rmc_last_error(), rlen);
    }
    cw.depth--;
}
static const rmc_layer_t LW = {.name = "test-poll-sends", .poll = l_poll_sends};

static void test_poll_waits_serve(void **state)
{
    (void)state;
    memset(&cw, 0, sizeof cw);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    cw.id = 7;
    MPI_CHECK_OK(rmc_am_register(cw.id, echo_handler, NULL));
    MPI_CHECK_OK(rmc_layer_register(&LW));
    MPI_CHECK_OK(rmc_barrier());
    /* every rank's poll sends to its neighbour inside the next waiting round: all wait at once */
    cw.armed = 1;
    MPI_CHECK_OK(rmc_barrier());
    while (cw.sent == 0) /* (a barrier of one rank may not wait) */
        rmc_progress();
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(cw.sent == 1 && cw.replies == 1 &&
                  cw.got == me + 1000); /* (its own rank back, +1000) */
    MPI_CHECK_ALL(cw.max_depth == 1);   /* never re-entered */
    MPI_CHECK_OK(rmc_layer_unregister(&LW));
    MPI_CHECK_OK(rmc_am_register(cw.id, NULL, NULL));
    MPI_CHECK_OK(rmc_finalize());
}

MPITEST_MAIN("layers", NULL, NULL, test_bad_input, test_persistent, test_late_and_failing,
             test_nested_and_message, test_poll_waits_serve)
