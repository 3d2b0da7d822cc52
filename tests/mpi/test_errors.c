/* Error paths, with failures injected through RMC_FAULT (docs/environment.md):
 *  - rmc_init with each allocation in turn failing on one rank: every rank returns an error, RMC
 *    holds no MPI object afterwards, nothing hangs; the same for rmc_region_alloc;
 *  - collective MPI calls failing (on every rank) in rmc_init and rmc_region_alloc, local MPI
 *    calls failing on one rank: RMC_ERR_MPI everywhere, and rmc_last_error names the MPI call;
 *  - a failing MPI call in a one-sided operation names the public function and the MPI call;
 *  - a failed re-post of the active-message receive does not stop AM service on that rank;
 *  - rmc_region_alloc_comm on a communicator with a process outside RMC: the members refuse it
 *    without a collective (the outsider gets RMC_ERR_NOT_INIT), nobody hangs;
 *  - a collective failing because of one rank: the others' rmc_last_error says so;
 *  - RMC_VERBOSE is read again at rmc_init.
 * Tests initialize RMC themselves (several configurations per program). */
#include "test_amo_util.h"

#define me mpitest_rank_ /* this rank and the job size (mpitest.h) */
#define np mpitest_nranks_

/* Same status on every rank? Returns it (or a sentinel when the ranks disagree). */
static rmc_status_t agreed(rmc_status_t st)
{
    int v[2] = {(int)st, -(int)st}, out[2];
    MPI_Allreduce(v, out, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return out[0] == -out[1] ? (rmc_status_t)out[0] : (rmc_status_t)-999;
}

static int resources_zero(void)
{
    rmc_resources_t r;
    rmc_resources(&r);
    int ok = r.comms == 0 && r.wins == 0 && r.groups == 0 && r.infos == 0 && r.types == 0;
    if (!ok)
        fprintf(stderr,
                "[rank %d] RMC holds %ld comms, %ld wins, %ld groups, %ld infos, %ld types\n", me,
                r.comms, r.wins, r.groups, r.infos, r.types);
    return ok;
}

static void set_fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void set_fault(const char *fmt, ...)
{
    char spec[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(spec, sizeof spec, fmt, ap);
    va_end(ap);
    setenv("RMC_FAULT", spec, 1);
}

/* Each allocation of rmc_init in turn fails on rank f. Returns how many allocations init made
 * there (the first N that succeeds, minus one). */
static int sweep_init(int f)
{
    int n;
    for (n = 1; n < 400; n++) {
        set_fault("malloc@%d#%d", f, n);
        rmc_last_error_clear();
        rmc_status_t st = agreed(rmc_init(MPI_COMM_WORLD));
        if (st == RMC_OK) {
            unsetenv("RMC_FAULT");
            MPI_CHECK_OK(rmc_finalize());
            break;
        }
        MPI_CHECK_ALL(st == RMC_ERR_NOMEM);
        MPI_CHECK_ALL(!rmc_initialized());
        MPI_CHECK_ALL(resources_zero());
        MPI_CHECK_ALL(me != f || rmc_last_error()[0] != 0);
    }
    unsetenv("RMC_FAULT");
    MPI_CHECK_ALL(n < 400);
    return n - 1;
}

/* What sweep_init found on ranks 0 and np - 1 (-1: not swept yet in this run). */
static int init_allocs[2] = {-1, -1};

static void test_init_allocation_fails(void **state)
{
    (void)state;
    amotest_fresh();
    int a0 = init_allocs[0] = sweep_init(0);
    int a1 = init_allocs[1] = sweep_init(np - 1);
    /* the sweep covered something: topology tables, the AM engine, ... */
    if (me == 0)
        printf("init allocations: rank 0 %d, rank %d %d\n", a0, np - 1, a1);
    MPI_CHECK_ALL(a0 >= 5 && a1 >= 5);
    /* and RMC works afterwards */
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(resources_zero());
}

/* Each allocation of rmc_region_alloc in turn fails on rank f (after the `skip` of rmc_init). */
static void sweep_region(int f, int skip)
{
    int done = 0;
    for (int n = 1; n < 200 && !done; n++) {
        set_fault("malloc@%d#%d", f, skip + n);
        MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
        rmc_resources_t base;
        rmc_resources(&base);
        void *bases[64];
        rmc_region_h h = (rmc_region_h)&done;
        rmc_status_t st = agreed(rmc_region_alloc(4096, bases, &h));
        if (st == RMC_OK) {
            MPI_CHECK_OK(rmc_region_free(h));
            done = 1;
        } else {
            MPI_CHECK_ALL(st == RMC_ERR_NOMEM);
            MPI_CHECK_ALL(h == NULL && rmc_region_count() == 0);
            rmc_resources_t now;
            rmc_resources(&now);
            MPI_CHECK_ALL(now.comms == base.comms && now.wins == base.wins &&
                          now.groups == base.groups && now.infos == base.infos);
            /* the job goes on: a region without faults, used */
            unsetenv("RMC_FAULT");
            MPI_CHECK_OK(rmc_region_alloc(64, bases, &h));
            long v = 100 + me, got = 0;
            MPI_CHECK_OK(rmc_put(&v, bases[(me + 1) % np], sizeof v, (me + 1) % np));
            MPI_CHECK_OK(rmc_barrier());
            MPI_CHECK_OK(rmc_get(bases[me], &got, sizeof got, me));
            MPI_CHECK_ALL(got == 100 + (me + np - 1) % np);
            MPI_CHECK_OK(rmc_region_free(h));
        }
        unsetenv("RMC_FAULT");
        MPI_CHECK_OK(rmc_finalize());
        MPI_CHECK_ALL(resources_zero());
    }
    MPI_CHECK_ALL(done);
}

static void test_region_allocation_fails(void **state)
{
    (void)state;
    amotest_fresh();
    /* allocations rmc_init makes on each rank: the first fault count that lets it succeed (the
     * sweep of test_init_allocation_fails, unless this test runs alone) */
    int skip[2] = {init_allocs[0] >= 0 ? init_allocs[0] : sweep_init(0),
                   init_allocs[1] >= 0 ? init_allocs[1] : sweep_init(np - 1)};
    sweep_region(0, skip[0]);
    sweep_region(np - 1, skip[1]);
}

/* A collective MPI call failing on every rank: the call fails everywhere with RMC_ERR_MPI, and
 * the message names the MPI function. */
static void expect_mpi_failure(rmc_status_t st, const char *call)
{
    MPI_CHECK_ALL(agreed(st) == RMC_ERR_MPI);
    MPI_CHECK_ALL(strstr(rmc_last_error(), call) != NULL);
}

static void test_mpi_failures_init(void **state)
{
    (void)state;
    amotest_fresh();
    static const char *const collective[] = {"MPI_Comm_dup", "MPI_Comm_split_type",
                                             "MPI_Iallgather", "MPI_Iallreduce"};
    for (size_t i = 0; i < sizeof collective / sizeof *collective; i++) {
        set_fault("%s@all", collective[i]);
        rmc_status_t st = rmc_init(MPI_COMM_WORLD);
        unsetenv("RMC_FAULT");
        expect_mpi_failure(st, collective[i]);
        MPI_CHECK_ALL(!rmc_initialized() && resources_zero());
    }
    /* a local call failing on one rank only */
    set_fault("MPI_Comm_group@%d#1", np - 1);
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    unsetenv("RMC_FAULT");
    MPI_CHECK_ALL(agreed(st) == RMC_ERR_MPI);
    MPI_CHECK_ALL(me != np - 1 || strstr(rmc_last_error(), "MPI_Comm_group") != NULL);
    MPI_CHECK_ALL(!rmc_initialized() && resources_zero());
}

static void test_mpi_failures_region(void **state)
{
    (void)state;
    amotest_fresh();
    static const char *const collective[] = {"MPI_Win_allocate_shared", "MPI_Win_create"};
    for (size_t i = 0; i < 2; i++) {
        set_fault("%s@all", collective[i]);
        MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
        unsetenv("RMC_FAULT");
        void *bases[64];
        rmc_region_h h;
        rmc_status_t st = rmc_region_alloc(256, bases, &h);
        MPI_CHECK_ALL(agreed(st) == (i == 0 ? RMC_ERR_NOMEM : RMC_ERR_MPI));
        MPI_CHECK_ALL(strstr(rmc_last_error(), collective[i]) != NULL);
        MPI_CHECK_ALL(rmc_region_count() == 0);
        MPI_CHECK_OK(rmc_finalize());
        MPI_CHECK_ALL(resources_zero());
    }
    /* local: a shared-memory query failing on one rank (only ranks with a node-local peer ask) */
    set_fault("MPI_Win_shared_query@%d", np - 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    unsetenv("RMC_FAULT");
    void *bases[64];
    rmc_region_h h;
    rmc_status_t st = agreed(rmc_region_alloc(256, bases, &h));
    int local_peer = rmc_node_size() > 1;
    MPI_Allreduce(MPI_IN_PLACE, &local_peer, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_CHECK_ALL(st == (local_peer ? RMC_ERR_MPI : RMC_OK));
    if (st == RMC_OK)
        MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_ALL(rmc_region_count() == 0);
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(resources_zero());
}

/* A one-sided operation whose MPI call fails: the public function and the MPI call are named. */
static void test_mpi_failure_operation(void **state)
{
    (void)state;
    amotest_fresh();
    setenv("RMC_AMO", "mpi", 1); /* every atomic is an MPI call, node-local ones too */
    /* (on oversubscribed processors a blocking fetch-and-add is an MPI_Rget_accumulate) */
    set_fault("MPI_Fetch_and_op@%d,MPI_Rget_accumulate@%d", np - 1, np - 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    unsetenv("RMC_FAULT");
    unsetenv("RMC_AMO");
    void *bases[64];
    rmc_region_h h;
    MPI_CHECK_OK(rmc_region_alloc(64, bases, &h));
    int64_t old = -1;
    rmc_status_t st = rmc_amo_fetch_add_i64(bases[0], 1, &old, 0);
    int ok = me == np - 1 ? st == RMC_ERR_MPI && old == -1 &&
                                strstr(rmc_last_error(), "rmc_amo_fetch_add_i64") &&
                                (strstr(rmc_last_error(), "MPI_Fetch_and_op") ||
                                 strstr(rmc_last_error(), "MPI_Rget_accumulate"))
                          : st == RMC_OK;
    if (!ok)
        fprintf(stderr, "[rank %d] st %d, message '%s'\n", me, (int)st, rmc_last_error());
    MPI_CHECK_ALL(ok);
    /* the next one works, and the failed one changed nothing */
    MPI_CHECK_OK(rmc_amo_fetch_add_i64(bases[0], 1, &old, 0));
    MPI_CHECK_OK(rmc_barrier());
    int64_t v = 0;
    MPI_CHECK_OK(rmc_amo_load_i64(bases[0], &v, 0));
    MPI_CHECK_ALL(v == 2 * np - 1);
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_OK(rmc_finalize());
}

/* A vector put to a remote rank whose datatype cannot be built (the typed protocol: 16 segments of
 * one size, an hindexed_block type): the public function and the MPI call that failed are named,
 * and the next vector put works. A node-local target is served by copies: no MPI call to fail. */
static void test_vector_type_failure(void **state)
{
    (void)state;
    set_fault("MPI_Type_create_hindexed_block@%d", np - 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    unsetenv("RMC_FAULT");
    void *bases[64];
    rmc_region_h h;
    MPI_CHECK_OK(rmc_region_alloc(256, bases, &h));
    double x[16];
    void *sp[16], *dp[16];
    for (int i = 0; i < 16; i++) {
        x[i] = 1.0 + i;
        sp[i] = &x[i];
        dp[i] = (char *)bases[0] + 16 * i; /* every other double of rank 0's part */
    }
    rmc_iov_t iov = {sp, dp, 16, 8};
    int ok = 1;
    if (me == np - 1) {
        int remote = !rmc_same_node(0);
        rmc_status_t st = rmc_put_vector(&iov, 1, 0);
        ok = remote ? st == RMC_ERR_MPI && strstr(rmc_last_error(), "rmc_put_vector") &&
                          strstr(rmc_last_error(), "MPI_Type_create_hindexed_block")
                    : st == RMC_OK;
        if (!ok)
            fprintf(stderr, "[rank %d] remote %d: st %d, message '%s'\n", me, remote, (int)st,
                    rmc_last_error());
        ok &= rmc_put_vector(&iov, 1, 0) == RMC_OK; /* the next one works */
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    if (me == 0)
        for (int i = 0; i < 16; i++)
            ok &= ((double *)bases[0])[2 * i] == 1.0 + i && ((double *)bases[0])[2 * i + 1] == 0;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_ALL(resources_zero());
}

#define H_ECHO 7
static rmc_status_t h_echo(int origin, const void *payload, size_t len, void *reply, size_t cap,
                           size_t *rlen, void *arg)
{
    (void)origin, (void)arg;
    if (len > cap)
        return RMC_ERR_TOO_BIG;
    memcpy(reply, payload, len);
    *rlen = len;
    return RMC_OK;
}

/* The target's first re-post of its request receive fails: the next poll posts it again and every
 * request is served (progress thread off: only the target's RMC calls serve). */
static void test_am_repost_failure(void **state)
{
    (void)state;
    amotest_fresh();
    setenv("RMC_PROGRESS_THREAD", "0", 1);
    set_fault("MPI_Irecv@%d#2", np - 1); /* #1 is the receive posted at init */
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    unsetenv("RMC_FAULT");
    unsetenv("RMC_PROGRESS_THREAD");
    MPI_CHECK_OK(rmc_am_register(H_ECHO, h_echo, NULL));
    rmc_status_t st = RMC_OK;
    int ok = 1;
    if (me == 0)
        for (int i = 0; i < 6 && st == RMC_OK; i++) {
            int v = 1000 + i, back = 0;
            size_t rlen = 0;
            st = rmc_am_send(np - 1, H_ECHO, &v, sizeof v, &back, sizeof back, &rlen);
            ok &= rlen == sizeof back && back == v;
        }
    MPI_CHECK_OK(rmc_barrier()); /* the target serves while it waits here */
    MPI_CHECK_OK(st);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_finalize());
}

/* RMC on a sub-communicator without the last rank; every process calls rmc_region_alloc_comm on a
 * communicator that contains the outsider. */
static void test_outsider(void **state)
{
    (void)state;
    amotest_fresh();
    MPI_Comm sub, all;
    MPI_Comm_split(MPI_COMM_WORLD, me == np - 1 ? MPI_UNDEFINED : 0, me, &sub);
    MPI_Comm_dup(MPI_COMM_WORLD, &all);
    rmc_status_t st = RMC_OK;
    if (sub != MPI_COMM_NULL)
        st = rmc_init(sub);
    MPI_CHECK_ALL(st == RMC_OK);
    void *bases[64];
    rmc_region_h h = (rmc_region_h)&st;
    rmc_status_t a = rmc_region_alloc_comm(all, 64, bases, &h);
    if (me == np - 1)
        MPI_CHECK_ALL(a == RMC_ERR_NOT_INIT);
    else
        MPI_CHECK_ALL(a == RMC_ERR_ARG && h == NULL && rmc_region_count() == 0 &&
                      strstr(rmc_last_error(), "not RMC ranks") != NULL);
    /* the members go on */
    if (sub != MPI_COMM_NULL) {
        st = rmc_region_alloc(64, bases, &h);
        if (st == RMC_OK)
            st = rmc_region_free(h);
        rmc_status_t f = rmc_finalize();
        if (st == RMC_OK)
            st = f;
        MPI_Comm_free(&sub);
    }
    MPI_CHECK_ALL(st == RMC_OK);
    MPI_Comm_free(&all);
}

/* Messages of argument errors name the function and the argument. */
static void test_messages(void **state)
{
    (void)state;
    amotest_fresh();
    long x = 0;
    MPI_CHECK_ALL(rmc_put(&x, &x, 8, 0) == RMC_ERR_NOT_INIT);
    MPI_CHECK_ALL(strcmp(rmc_last_error(), "rmc_put: RMC is not initialized") == 0);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_ALL(rmc_get(&x, &x, 8, np + 3) == RMC_ERR_RANK);
    char want[64];
    snprintf(want, sizeof want, "rmc_get: rank %d outside [0, %d)", np + 3, np);
    MPI_CHECK_ALL(strcmp(rmc_last_error(), want) == 0);
    MPI_CHECK_ALL(rmc_put(&x, &x, 8, me) == RMC_ERR_NOT_REGION); /* self: no AM to wait for */
    MPI_CHECK_ALL(strstr(rmc_last_error(), "rmc_put: address") == rmc_last_error());
    rmc_last_error_clear();
    MPI_CHECK_ALL(rmc_last_error()[0] == 0);
    MPI_CHECK_OK(rmc_finalize());
}

/* Failures reported late or found by a check get their own message, never an older unrelated
 * one of the thread: a non-blocking atomic refused by its target (an address in no region nor
 * registered memory there: the target's verdict comes back through rmc_wait), a handle that
 * never was a request (refused, not dereferenced), and malformed RMC_FAULT entries. */
static void test_late_messages(void **state)
{
    (void)state;
    amotest_fresh();
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    int t = (me + 1) % np;
    int64_t *mine = aligned_alloc(64, 64), *theirs = NULL;
    MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, (me + np - 1) % np, 5, &theirs, sizeof theirs,
                 MPI_BYTE, t, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    long x = 0;
    rmc_request_h q = RMC_REQUEST_NULL;
    MPI_CHECK_ALL(rmc_get(&x, &x, 8, 99) == RMC_ERR_RANK); /* the unrelated older failure */
    rmc_status_t st = rmc_amo_add_i64_nb(theirs, 1, t, &q);
    if (st == RMC_OK) /* (refused at once where the origin can tell; else by its target) */
        st = rmc_wait(&q);
    int ok = st != RMC_OK && strstr(rmc_last_error(), "rank 99") == NULL &&
             strstr(rmc_last_error(), "rmc_") == rmc_last_error();
    if (!ok)
        fprintf(stderr, "[rank %d] nb atomic: %d '%s'\n", me, st, rmc_last_error());
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    /* handles that never were requests */
    rmc_request_h bad[] = {(rmc_request_h)(uintptr_t)0xdeadbeef0, (rmc_request_h)(uintptr_t)7,
                           (rmc_request_h)(void *)&x};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rmc_request_h h = bad[i];
        int done = 0;
        ok &= rmc_wait(&h) == RMC_ERR_HANDLE && strstr(rmc_last_error(), "rmc_wait: request");
        ok &= rmc_test(&h, &done) == RMC_ERR_HANDLE && done == 0;
        ok &= rmc_wait_all(&h, 1) == RMC_ERR_HANDLE;
    }
    MPI_CHECK_ALL(ok);
    /* rmc_error_set of RMC_OK records no failure; rmc_agree of a positive value (no status) is
     * agreed as RMC_ERR_ARG, also by the ranks that passed RMC_OK */
    rmc_last_error_clear();
    ok &= rmc_error_set(RMC_OK, "x", "y") == RMC_OK && rmc_last_error()[0] == 0;
    ok &= rmc_agree(me == 0 ? (rmc_status_t)5 : RMC_OK) == RMC_ERR_ARG;
    ok &= me != 0 || strstr(rmc_last_error(), "rmc_agree: 5 is not an RMC status") != NULL;
    MPI_CHECK_ALL(ok);
    free(mine);
    MPI_CHECK_OK(rmc_finalize());
    /* RMC_FAULT entries: an empty or out-of-range rank, a bad count, a site comm never calls
     * (it could never fire), and the message quotes the entry only */
    const char *specs[] = {"malloc@",       "malloc@99",         "malloc#x,MPI_Win_flush",
                           "malloc#",       "MPI_Win_flsh@0#2",  "Malloc",
                           "MPI_Bogus@all", "MPI_Win_flush,MPI_"};
    const char *want[] = {"bad rank in 'malloc@'",
                          "bad rank in 'malloc@99'",
                          "bad count in 'malloc#x'",
                          "bad count in 'malloc#'",
                          "unknown site 'MPI_Win_flsh' in 'MPI_Win_flsh@0#2'",
                          "unknown site 'Malloc'",
                          "unknown site 'MPI_Bogus' in 'MPI_Bogus@all'",
                          "unknown site 'MPI_' in 'MPI_'"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        setenv("RMC_FAULT", specs[i], 1);
        st = rmc_init(MPI_COMM_WORLD);
        unsetenv("RMC_FAULT");
        ok = st == RMC_ERR_ARG && strstr(rmc_last_error(), want[i]) != NULL &&
             strstr(rmc_last_error(), "MPI_Win_flush") == NULL;
        if (!ok)
            fprintf(stderr, "[rank %d] RMC_FAULT=%s: %d '%s'\n", me, specs[i], st,
                    rmc_last_error());
        MPI_CHECK_ALL(ok);
        MPI_CHECK_ALL(!rmc_initialized());
    }
}

/* rmc_init with every peer reached through MPI (RMC_NODE_SIZE=1) and the faults `spec`; the
 * environment is restored afterwards. */
static void init_remote_faults(const char *spec)
{
    char *ns = getenv("RMC_NODE_SIZE") ? strdup(getenv("RMC_NODE_SIZE")) : NULL;
    setenv("RMC_NODE_SIZE", "1", 1);
    set_fault("%s", spec);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    unsetenv("RMC_FAULT");
    if (ns)
        setenv("RMC_NODE_SIZE", ns, 1);
    else
        unsetenv("RMC_NODE_SIZE");
    free(ns);
}

/* A fence whose flush fails reports it (naming rmc_fence and MPI_Win_flush) and leaves the writes
 * outstanding: the next fence flushes them again. The same for rmc_barrier's fence. */
static void test_fence_failure(void **state)
{
    (void)state;
    amotest_fresh();
    init_remote_faults("MPI_Win_flush@0#1,MPI_Win_flush@0#3");
    void *bases[64];
    rmc_region_h h;
    MPI_CHECK_OK(rmc_region_alloc(64, bases, &h));
    int t = (me + 1) % np, ok = 1;
    long v = 7 + me, got = 0;
    rmc_comm_stats_t a, b, c;
    MPI_CHECK_OK(rmc_put(&v, bases[t], sizeof v, t));
    rmc_comm_stats(&a);
    rmc_status_t st = rmc_fence(t);
    rmc_comm_stats(&b);
    const char *e = rmc_last_error();
    if (me == 0)
        ok &= st == RMC_ERR_MPI && strstr(e, "rmc_fence: ") == e && strstr(e, "MPI_Win_flush");
    else
        ok &= st == RMC_OK;
    ok &= b.flushes == a.flushes + 1;
    st = rmc_fence(t); /* the failed flush is made again (on rank 0: its 2nd, which works) */
    rmc_comm_stats(&c);
    ok &= st == RMC_OK && c.flushes == b.flushes + (me == 0);
    if (!ok)
        fprintf(stderr, "[rank %d] fence: st %d, flushes %llu %llu %llu, message '%s'\n", me,
                (int)st, a.flushes, b.flushes, c.flushes, rmc_last_error());
    /* rank 0's 3rd flush, in rmc_barrier's fence, fails: the barrier still synchronizes */
    v += 100; /* to another place: a put repeating the last one's range would flush at once */
    MPI_CHECK_OK(rmc_put(&v, (long *)bases[t] + 1, sizeof v, t));
    st = rmc_barrier();
    e = rmc_last_error();
    ok &= me == 0 ? st == RMC_ERR_MPI && strstr(e, "rmc_barrier: ") == e : st == RMC_OK;
    rmc_comm_stats(&a);
    MPI_CHECK_OK(rmc_fence_all());
    rmc_comm_stats(&b);
    ok &= b.flushes == a.flushes + (me == 0);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_get((long *)bases[me] + 1, &got, sizeof got, me));
    ok &= got == 107 + (me + np - 1) % np;
    if (!ok)
        fprintf(stderr, "[rank %d] barrier: st %d, got %ld, message '%s'\n", me, (int)st, got,
                rmc_last_error());
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_OK(rmc_finalize());
}

/* A blocking get or put whose local completion (MPI_Win_flush_local) fails reports it and does not
 * outlive the call: its pair is flushed, so the get's data is in place when the call returns and
 * the put has reached its target (visible after the next barrier, whose fence works). The
 * neighbour is reached through MPI; rank 0's first three local completions fail (at more ranks than
 * processors a blocking get waits through a request instead: then only the puts meet them). */
static void test_local_completion_failure(void **state)
{
    (void)state;
    amotest_fresh();
    init_remote_faults("MPI_Win_flush_local@0#1,MPI_Win_flush_local@0#2,MPI_Win_flush_local@0#3");
    void *bases[64];
    rmc_region_h h;
    MPI_CHECK_OK(rmc_region_alloc(64 * sizeof(long), bases, &h));
    long *mine = bases[me];
    for (int i = 0; i < 64; i++)
        mine[i] = 1000 * me + i;
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1, failed = 0;
    if (me == 0) {
        long got[8], v1[4] = {-1, -2, -3, -4}, v2[4] = {-5, -6, -7, -8};
        memset(got, 0xff, sizeof got);
        rmc_status_t st[3];
        st[0] = rmc_get((long *)bases[1] + 8, got, sizeof got, 1);
        for (int i = 0; i < 8; i++) /* in place when the call returns, failed or not */
            ok &= got[i] == 1008 + i;
        st[1] = rmc_put(v1, (long *)bases[1] + 16, sizeof v1, 1);
        st[2] = rmc_put(v2, (long *)bases[1] + 32, sizeof v2, 1);
        for (int k = 0; k < 3; k++) {
            int f = st[k] == RMC_ERR_MPI;
            ok &= st[k] == RMC_OK || (f && strstr(rmc_last_error(), "MPI_Win_flush_local"));
            failed += f;
        }
        ok &= failed >= 1 && strstr(rmc_last_error(), "MPI_Win_flush_local") != NULL;
        if (!ok)
            fprintf(stderr, "[rank 0] local completion: %d %d %d, got[0] %ld, message '%s'\n",
                    (int)st[0], (int)st[1], (int)st[2], got[0], rmc_last_error());
    }
    MPI_CHECK_OK(rmc_barrier());
    if (me == 1)
        for (int i = 0; i < 4; i++)
            ok &= mine[16 + i] == -1 - i && mine[32 + i] == -5 - i;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_OK(rmc_finalize());
}

/* A collective that fails because of one rank: every other rank gets the status and a message
 * saying so (it had an empty rmc_last_error), the failing rank its own message. */
static int elsewhere(rmc_status_t st, rmc_status_t want, const char *fn, const char *own)
{
    char w[128];
    snprintf(w, sizeof w, "%s: failed on another rank: %s", fn, rmc_status_string(want));
    int ok = st == want &&
             (me == 0 ? strstr(rmc_last_error(), own) != NULL : strcmp(rmc_last_error(), w) == 0);
    if (!ok)
        fprintf(stderr, "[rank %d] %s -> %d '%s'\n", me, fn, st, rmc_last_error());
    return ok;
}

static void test_failed_elsewhere(void **state)
{
    (void)state;
    amotest_fresh();
    /* rmc_init with a bad knob on rank 0 */
    if (me == 0)
        setenv("RMC_SHM_BARRIER", "bogus", 1);
    rmc_last_error_clear();
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    unsetenv("RMC_SHM_BARRIER");
    MPI_CHECK_ALL(elsewhere(st, RMC_ERR_ARG, "rmc_init", "RMC_SHM_BARRIER=bogus"));
    MPI_CHECK_ALL(!rmc_initialized());
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    rmc_mutex_h m = NULL;
    rmc_last_error_clear();
    st = rmc_mutex_create(me == 0 ? -1 : 1, &m);
    MPI_CHECK_ALL(elsewhere(st, RMC_ERR_ARG, "rmc_mutex_create", "count -1 < 0"));
    MPI_CHECK_OK(rmc_mutex_create(1, &m));
    rmc_status_t sl = me == 0 ? rmc_mutex_lock(m, 0, 0) : RMC_OK;
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(sl);
    rmc_last_error_clear();
    st = rmc_mutex_destroy(m);
    MPI_CHECK_ALL(elsewhere(st, RMC_ERR_STATE, "rmc_mutex_destroy", "holds a mutex"));
    MPI_CHECK_OK(me == 0 ? rmc_mutex_unlock(m, 0, 0) : RMC_OK);
    MPI_CHECK_OK(rmc_mutex_destroy(m));
    rmc_last_error_clear();
    st = rmc_am_register(me == 0 ? 999 : 1, NULL, NULL);
    MPI_CHECK_ALL(elsewhere(st, RMC_ERR_ARG, "rmc_am_register", "handler id 999"));
    void **bases = malloc((size_t)np * sizeof(void *));
    rmc_region_h r = NULL;
    rmc_last_error_clear();
    st = rmc_region_alloc(me == 0 ? (size_t)1 << 62 : 64, bases, &r);
    MPI_CHECK_ALL(elsewhere(st, RMC_ERR_NOMEM, "rmc_region_alloc", "more than this machine"));
    free(bases);
    MPI_CHECK_OK(rmc_finalize());
}

/* RMC_VERBOSE is read at every rmc_init (docs/environment.md), even when a failure before the first
 * rmc_init has read it already (it stayed as read then). */
static void test_verbose_reread(void **state)
{
    (void)state;
    amotest_fresh();
    unsetenv("RMC_VERBOSE");
    MPI_CHECK_ALL(rmc_finalize() == RMC_ERR_NOT_INIT); /* a failure: reads RMC_VERBOSE (unset) */
    setenv("RMC_VERBOSE", "1", 1);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    /* the failure below goes to stderr: catch it in a file */
    char path[64];
    snprintf(path, sizeof path, "/tmp/rmc-test-verbose-%d-%d", (int)getpid(), me);
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    int ok = saved >= 0 && f && dup2(fileno(f), 2) >= 0;
    rmc_status_t st = rmc_amo_fetch_add_i64(NULL, 1, NULL, np + 5);
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    char line[512] = "";
    if (f) {
        rewind(f);
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    unlink(path);
    unsetenv("RMC_VERBOSE");
    char want[64];
    snprintf(want, sizeof want, "rmc[%d]: rmc_amo_fetch_add_i64: rank %d", me, np + 5);
    ok &= st == RMC_ERR_RANK && strstr(line, want) == line;
    if (!ok)
        fprintf(stderr, "[rank %d] stderr had '%s'\n", me, line);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_finalize());
}

MPITEST_MAIN("errors", NULL, NULL, test_messages, test_init_allocation_fails,
             test_region_allocation_fails, test_mpi_failures_init, test_mpi_failures_region,
             test_mpi_failure_operation, test_vector_type_failure, test_am_repost_failure,
             test_outsider, test_fence_failure, test_local_completion_failure,
             test_failed_elsewhere, test_verbose_reread, test_late_messages)
