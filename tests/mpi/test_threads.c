/* RMC's comm API from several threads per rank at once (RMC_THREAD_SAFE, on with
 * MPI_THREAD_MULTIPLE): atomics of every kind, put / get (node-local fast path and remote,
 * blocking, non-blocking with requests and implicit), strided and vector transfers, accumulates,
 * mutexes held by threads of one rank in turn, and a thread that waits in rmc_wait_round for
 * another thread of its own rank. Every result is exact; each test joins its threads before it
 * checks. Also: the thread-safety switch and per-thread errors. */
#include "mpitest.h"
#include <rmc/amo.h>
#include <rmc/strided.h>
#include "threadtest.h"

#define OK(a, call) ((a)->ok &= (call) == RMC_OK)

static void **alloc(size_t bytes, rmc_region_h *r)
{
    void **b = calloc((size_t)mpitest_nranks_, sizeof(void *));
    MPI_CHECK_OK(rmc_region_alloc(bytes, b, r));
    memset(b[mpitest_rank_], 0, bytes);
    MPI_CHECK_OK(rmc_barrier());
    return b;
}

static void *amo_body(void *p)
{
    targ_t *a = p;
    int me = mpitest_rank_, np = mpitest_nranks_;
    for (int k = 0; k < K; k++)
        for (int d = 0; d < np; d++) {
            int t = (me + d + k + a->tid) % np;
            int64_t *w = a->b[t];
            int64_t f = 0, g = 0;
            int32_t f32 = 0;
            OK(a, rmc_amo_fetch_add_i64(w, 1, &f, t));
            a->fetched[t * K + k] = f;
            OK(a, rmc_amo_add_i64(w + 1, 3, t));
            OK(a, rmc_amo_fetch_add_i32((int32_t *)(w + 2), -1, &f32, t));
            /* a CAS loop: increments by 5 that never collide */
            int64_t cur = 0;
            OK(a, rmc_amo_load_i64(w + 3, &cur, t));
            for (;;) {
                OK(a, rmc_amo_cas_i64(w + 3, cur, cur + 5, &g, t));
                if (g == cur || !a->ok)
                    break;
                cur = g;
            }
            /* non-blocking fetch-add completed by rmc_wait */
            rmc_request_h q;
            int64_t nf = -1;
            OK(a, rmc_amo_fetch_add_i64_nb(w + 4, 1, &nf, t, &q));
            OK(a, rmc_wait(&q));
            a->ok &= nf >= 0;
        }
    return NULL;
}

/* Atomics from every thread of every rank: fetched values are a permutation, sums exact. */
static void test_amo(void **state)
{
    (void)state;
    rmc_region_h r;
    void **b = alloc(8 * sizeof(int64_t), &r);
    targ_t *a = threadtest_run(amo_body, b, NULL);
    MPI_CHECK_OK(rmc_barrier());
    int ok = threadtest_ok(a);
    int64_t *w = b[mpitest_rank_], n = (int64_t)mpitest_nranks_ * NT * K;
    ok &= w[0] == n && w[1] == 3 * n && *(int32_t *)(w + 2) == -(int32_t)n && w[3] == 5 * n &&
          w[4] == n;
    ok &= threadtest_permutation(a, mpitest_nranks_);
    free(a);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(r));
    free(b);
}

#define W 16 /* doubles per slot */
static double pat(int r, int th, int t, int i)
{
    return r * 100000.0 + th * 1000.0 + t * 100.0 + i;
}

static void *put_body(void *p)
{
    targ_t *a = p;
    int me = mpitest_rank_, np = mpitest_nranks_;
    double buf[W];
    for (int rep = 0; rep < 3; rep++)
        for (int t = 0; t < np; t++) {
            double *dst = (double *)a->b[t] + ((size_t)me * NT + a->tid) * W;
            for (int i = 0; i < W; i++)
                buf[i] = pat(me, a->tid, t, i);
            rmc_request_h q;
            switch ((t + a->tid + rep) % 4) {
            case 0: /* small blocking puts (node-local: the fast path) */
                for (int i = 0; i < W; i += 2)
                    OK(a, rmc_put(buf + i, dst + i, 2 * sizeof(double), t));
                break;
            case 1:
                OK(a, rmc_put_nb(buf, dst, sizeof(buf), t, &q));
                OK(a, rmc_wait(&q));
                break;
            case 2: /* strided: 2 rows of W/2 */
                OK(a, rmc_put_2d(buf, W / 2 * sizeof(double), dst, W / 2 * sizeof(double), 2,
                                 W / 2 * sizeof(double), t));
                break;
            default: /* implicit, completed by the fence */
                OK(a, rmc_put_nb(buf, dst, sizeof(buf), t, NULL));
            }
            OK(a, rmc_fence(t));
        }
    return NULL;
}

static void *get_body(void *p)
{
    targ_t *a = p;
    int me = mpitest_rank_, np = mpitest_nranks_;
    for (int t = 0; t < np; t++) {
        int r = (me + 1) % np, th = (a->tid + 1) % NT;
        double buf[W] = {0};
        const double *src = (double *)a->b[t] + ((size_t)r * NT + th) * W;
        if (t % 2 == a->tid % 2) {
            for (int i = 0; i < W; i++)
                OK(a, rmc_get(src + i, buf + i, sizeof(double), t));
        } else {
            rmc_request_h q;
            OK(a, rmc_get_nb(src, buf, sizeof(buf), t, &q));
            OK(a, rmc_wait(&q));
        }
        for (int i = 0; i < W; i++)
            a->ok &= buf[i] == pat(r, th, t, i);
    }
    return NULL;
}

/* Puts of every kind from every thread into its own slots, then gets of others' slots. */
static void test_put_get(void **state)
{
    (void)state;
    rmc_region_h r;
    int np = mpitest_nranks_;
    void **b = alloc((size_t)np * NT * W * sizeof(double), &r);
    targ_t *a = threadtest_run(put_body, b, NULL);
    MPI_CHECK_OK(rmc_barrier());
    int ok = threadtest_ok(a);
    const double *mine = b[mpitest_rank_];
    for (int rr = 0; rr < np; rr++)
        for (int th = 0; th < NT; th++)
            for (int i = 0; i < W; i++)
                ok &= mine[((size_t)rr * NT + th) * W + i] == pat(rr, th, mpitest_rank_, i);
    free(a);
    a = threadtest_run(get_body, b, NULL);
    ok &= threadtest_ok(a);
    free(a);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(r));
    free(b);
}

static void *acc_body(void *p)
{
    targ_t *a = p;
    int me = mpitest_rank_, np = mpitest_nranks_;
    double x[W], s = 2.0;
    for (int i = 0; i < W; i++)
        x[i] = i + a->tid;
    for (int k = 0; k < K / 2; k++)
        for (int d = 0; d < np; d++) {
            int t = (me + d + a->tid) % np;
            rmc_request_h q;
            if (k % 2) {
                OK(a, rmc_acc(RMC_ACC_DOUBLE, &s, x, a->b[t], sizeof(x), t));
            } else {
                OK(a, rmc_acc_nb(RMC_ACC_DOUBLE, &s, x, a->b[t], sizeof(x), t, &q));
                OK(a, rmc_wait(&q));
            }
        }
    return NULL;
}

/* Accumulates from every thread into the same elements: exact sums. */
static void test_acc(void **state)
{
    (void)state;
    rmc_region_h r;
    void **b = alloc(W * sizeof(double), &r);
    targ_t *a = threadtest_run(acc_body, b, NULL);
    MPI_CHECK_OK(rmc_barrier());
    int ok = threadtest_ok(a);
    const double *d = b[mpitest_rank_];
    for (int i = 0; i < W; i++) {
        double e = 0;
        for (int th = 0; th < NT; th++)
            e += 2.0 * (i + th) * mpitest_nranks_ * (K / 2);
        ok &= d[i] == e;
    }
    free(a);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(r));
    free(b);
}

static void *mutex_body(void *p)
{
    targ_t *a = p;
    int me = mpitest_rank_, np = mpitest_nranks_;
    for (int k = 0; k < K; k++) {
        int t = (me + k + a->tid) % np;
        int64_t v = 0;
        OK(a, rmc_mutex_lock((rmc_mutex_h)a->extra, 0, t));
        /* the same thread locking it again is refused; the lock stays held */
        a->ok &= rmc_mutex_lock((rmc_mutex_h)a->extra, 0, t) == RMC_ERR_STATE;
        OK(a, rmc_get(a->b[t], &v, sizeof(v), t));
        v++;
        OK(a, rmc_put(&v, a->b[t], sizeof(v), t));
        OK(a, rmc_mutex_unlock((rmc_mutex_h)a->extra, 0, t));
    }
    return NULL;
}

/* Mutexes between the threads of a rank and between ranks: no update lost. */
static void test_mutex(void **state)
{
    (void)state;
    rmc_region_h r;
    void **b = alloc(sizeof(int64_t), &r);
    rmc_mutex_h mx;
    MPI_CHECK_OK(rmc_mutex_create(1, &mx));
    targ_t *a = threadtest_run(mutex_body, b, mx);
    MPI_CHECK_OK(rmc_barrier());
    int ok = threadtest_ok(a);
    long total = 0, mine = (long)*(int64_t *)b[mpitest_rank_];
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    ok &= total == (long)mpitest_nranks_ * NT * K;
    free(a);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_mutex_destroy(mx));
    MPI_CHECK_OK(rmc_region_free(r));
    free(b);
}

/* A thread waiting inside RMC lets another thread of its rank in: thread 0 locks mutex 0 of this
 * rank and holds it until thread 1, queued behind it in rmc_mutex_lock, has shown it is waiting; a
 * third thread spins in rmc_wait_round until a flag the holder sets. */
static volatile int stage;

static void *hold_body(void *p)
{
    targ_t *a = p;
    int me = mpitest_rank_;
    if (a->tid == 0) {
        OK(a, rmc_mutex_lock((rmc_mutex_h)a->extra, 0, me));
        __atomic_store_n(&stage, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&stage, __ATOMIC_SEQ_CST) < 2)
            OK(a, rmc_progress()); /* the waiter is inside rmc_mutex_lock now (or about to be) */
        int64_t v = 41;
        OK(a, rmc_put(&v, a->b[me], sizeof(v), me));
        OK(a, rmc_mutex_unlock((rmc_mutex_h)a->extra, 0, me));
        __atomic_store_n(&stage, 3, __ATOMIC_SEQ_CST);
    } else if (a->tid == 1) {
        while (__atomic_load_n(&stage, __ATOMIC_SEQ_CST) < 1)
            ;
        __atomic_store_n(&stage, 2, __ATOMIC_SEQ_CST);
        OK(a, rmc_mutex_lock((rmc_mutex_h)a->extra, 0, me)); /* waits for thread 0 of this rank */
        int64_t v = 0;
        OK(a, rmc_get(a->b[me], &v, sizeof(v), me));
        a->ok &= v == 41;
        OK(a, rmc_mutex_unlock((rmc_mutex_h)a->extra, 0, me));
    } else if (a->tid == 2) {
        unsigned spins = 0;
        while (__atomic_load_n(&stage, __ATOMIC_SEQ_CST) < 3)
            rmc_wait_round(&spins);
    }
    return NULL;
}

static void test_wait_for_own_thread(void **state)
{
    (void)state;
    rmc_region_h r;
    void **b = alloc(sizeof(int64_t), &r);
    rmc_mutex_h mx;
    MPI_CHECK_OK(rmc_mutex_create(1, &mx));
    stage = 0;
    targ_t *a = threadtest_run(hold_body, b, mx);
    int ok = threadtest_ok(a) && *(int64_t *)b[mpitest_rank_] == 41;
    free(a);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_mutex_destroy(mx));
    MPI_CHECK_OK(rmc_region_free(r));
    free(b);
}

static volatile int held; /* the holder thread has the mutex */
static void *holder_body(void *p)
{
    rmc_mutex_h m = p;
    int ok = rmc_mutex_lock(m, 0, 0) == RMC_OK;
    __atomic_store_n(&held, 1, __ATOMIC_SEQ_CST);
    usleep(100000);
    ok &= rmc_mutex_unlock(m, 0, 0) == RMC_OK;
    return ok ? p : NULL;
}

/* A collective of RMC's (region alloc, region free, mutex create) on rank 0 while a thread of rank
 * 0 holds a mutex the other ranks lock before they join: the collective must let that thread in
 * to unlock (it waited with RMC's lock held, and every rank hung). */
static void test_collective_while_held(void **state)
{
    (void)state;
    int me = mpitest_rank_, np = mpitest_nranks_;
    rmc_mutex_h mx, other = NULL;
    MPI_CHECK_OK(rmc_mutex_create(1, &mx));
    for (int c = 0; c < 3; c++) {
        rmc_region_h r = NULL;
        void **b = malloc((size_t)np * sizeof(void *));
        MPI_CHECK_ALL(b != NULL);
        if (c == 1)
            MPI_CHECK_OK(rmc_region_alloc(64, b, &r));
        pthread_t t;
        held = 0;
        if (me == 0) {
            MPI_CHECK_ALL(pthread_create(&t, NULL, holder_body, mx) == 0);
            while (!__atomic_load_n(&held, __ATOMIC_SEQ_CST))
                usleep(1000);
        } else {
            MPI_CHECK_ALL(1);
        }
        MPI_CHECK_OK(rmc_barrier()); /* rank 0's thread holds the mutex */
        int ok = 1;
        if (me != 0) { /* waits for rank 0's thread, then joins */
            ok &= rmc_mutex_lock(mx, 0, 0) == RMC_OK;
            ok &= rmc_mutex_unlock(mx, 0, 0) == RMC_OK;
        }
        if (c == 0)
            ok &= rmc_region_alloc(64, b, &r) == RMC_OK;
        else if (c == 1)
            ok &= rmc_region_free(r) == RMC_OK, r = NULL;
        else
            ok &= rmc_mutex_create(2, &other) == RMC_OK;
        if (me == 0) {
            void *res = NULL;
            ok &= pthread_join(t, &res) == 0 && res == mx;
        }
        MPI_CHECK_ALL(ok);
        if (r)
            MPI_CHECK_OK(rmc_region_free(r));
        if (other)
            MPI_CHECK_OK(rmc_mutex_destroy(other));
        other = NULL;
        free(b);
    }
    MPI_CHECK_OK(rmc_mutex_destroy(mx));
}

static void *error_body(void *p)
{
    targ_t *a = p;
    /* each thread's failure is its own: a bad rank named with this thread's own number */
    rmc_status_t st = rmc_put(&a->tid, NULL, sizeof(int), 1000 + a->tid);
    a->ok &= st == RMC_ERR_RANK;
    char want[16];
    snprintf(want, sizeof(want), "%d", 1000 + a->tid);
    for (int i = 0; i < 200; i++)
        OK(a, rmc_progress());
    a->ok &= strstr(rmc_last_error(), want) != NULL;
    return NULL;
}

/* The switch follows MPI's thread level (this program initialises MPI_THREAD_MULTIPLE), and
 * errors stay with the thread that made them. */
static void test_switch_and_errors(void **state)
{
    (void)state;
    int provided;
    MPI_Query_thread(&provided);
    const char *v = getenv("RMC_THREAD_SAFE");
    int want = v && !strcmp(v, "0") ? 0 : v && !strcmp(v, "1") ? 1 : provided == MPI_THREAD_MULTIPLE;
    MPI_CHECK_ALL(rmc_thread_safe() == want);
    int tok = rmc_thread_lock();
    MPI_CHECK_ALL(tok == want);
    int tok2 = rmc_thread_lock(); /* recursive */
    rmc_thread_unlock(tok2);
    rmc_thread_unlock(tok);
    targ_t *a = threadtest_run(error_body, NULL, NULL);
    int ok = threadtest_ok(a);
    free(a);
    MPI_CHECK_ALL(ok);
}

/* The knob: a bad value refuses rmc_init on every rank; 0 / off turn thread safety off (the lock
 * functions then take nothing), 1 / on turn it on. Leaves RMC initialized at its default. */
static void test_knob(void **state)
{
    (void)state;
    MPI_CHECK_OK(rmc_finalize());
    setenv("RMC_THREAD_SAFE", "sometimes", 1);
    MPI_CHECK_ALL(rmc_init(MPI_COMM_WORLD) == RMC_ERR_ARG && !rmc_initialized());
    MPI_CHECK_ALL(strstr(rmc_last_error(), "RMC_THREAD_SAFE=sometimes") != NULL);
    static const char *const vals[] = {"0", "off", "1", "ON"};
    for (int i = 0; i < 4; i++) {
        setenv("RMC_THREAD_SAFE", vals[i], 1);
        MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
        int on = i >= 2, tok = rmc_thread_lock();
        MPI_CHECK_ALL(rmc_thread_safe() == on && tok == on);
        rmc_thread_unlock(tok);
        MPI_CHECK_OK(rmc_finalize());
    }
    unsetenv("RMC_THREAD_SAFE");
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
}

MPITEST_MAIN("threads", mpitest_setup_rmc, mpitest_teardown_rmc, test_switch_and_errors, test_amo,
             test_put_get, test_acc, test_mutex, test_wait_for_own_thread,
             test_collective_while_held, test_knob)
