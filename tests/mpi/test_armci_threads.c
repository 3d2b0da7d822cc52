/* ARMCI from several threads per process at once (MPI_THREAD_MULTIPLE; GA 5.9's threaded tests):
 * fetch-and-add and swap, put / get / accumulate (contiguous, strided, non-blocking with handles
 * and implicit), ARMCI mutexes guarding a read-modify-write: every result exact. Each test starts
 * NT threads on every process and joins them before it checks. Written against armci.h /
 * message.h only; also built against ARMCI-MPI. */
#include "armcitest.h"
#include "threadtest.h"

static void *rmw_body(void *p)
{
    targ_t *a = p;
    for (int k = 0; k < K; k++)
        for (int d = 0; d < np_; d++) {
            int t = (me_ + d + k + a->tid) % np_, iv = 0;
            long lv = 0;
            a->ok &= ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &iv, a->b[t], 1, t) == 0;
            a->ok &= ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &lv, (long *)a->b[t] + 1, 2, t) == 0;
            a->fetched[t * K + k] = iv;
            a->ok &= lv % 2 == 0;
            int sw = me_ * 1000 + a->tid;
            a->ok &= ARMCI_Rmw(ARMCI_SWAP, &sw, (int *)a->b[t] + 4, 0, t) == 0;
        }
    return NULL;
}

/* Fetch-and-add from every thread of every process: the values fetched at each target are exactly
 * 0 .. np*NT*K-1, the counters end at np*NT*K (int) and 2*np*NT*K (long); swaps leave a value some
 * thread wrote. */
static void test_rmw(void **state)
{
    (void)state;
    void **b = armcitest_malloc(8 * sizeof(long));
    memset(b[me_], 0, 8 * sizeof(long));
    ARMCI_Barrier();
    targ_t *a = threadtest_run(rmw_body, b, NULL);
    ARMCI_Barrier();
    int ok = threadtest_ok(a);
    int *mine = b[me_];
    long total = (long)np_ * NT * K;
    ok &= mine[0] == total && ((long *)b[me_])[1] == 2 * total;
    int sw = mine[4];
    ok &= sw / 1000 >= 0 && sw / 1000 < np_ && sw % 1000 < NT;
    ok &= threadtest_permutation(a, np_);
    free(a);
    ARMCI_CHECK_ALL(ok);
    armcitest_free(b);
}

/* Each thread owns slot (process, thread) of every target's buffer: W doubles. */
#define W 24
static double pat(int r, int th, int t, int i)
{
    return r * 100000.0 + th * 1000.0 + t * 100.0 + i;
}

static void *put_body(void *p)
{
    targ_t *a = p;
    double buf[W];
    armci_hdl_t h;
    for (int t = 0; t < np_; t++) {
        double *dst = (double *)a->b[t] + ((size_t)me_ * NT + a->tid) * W;
        for (int i = 0; i < W; i++)
            buf[i] = pat(me_, a->tid, t, i);
        switch ((t + a->tid) % 3) {
        case 0: /* blocking contiguous put */
            a->ok &= ARMCI_Put(buf, dst, W * sizeof(double), t) == 0;
            break;
        case 1: { /* strided: two rows of W/2 */
            int stride = W / 2 * sizeof(double), count[2] = {W / 2 * sizeof(double), 2};
            a->ok &= ARMCI_PutS(buf, &stride, dst, &stride, count, 1, t) == 0;
            break;
        }
        default: /* non-blocking on a handle */
            ARMCI_INIT_HANDLE(&h);
            a->ok &= ARMCI_NbPut(buf, dst, W * sizeof(double), t, &h) == 0;
            a->ok &= ARMCI_Wait(&h) == 0;
        }
        ARMCI_Fence(t);
    }
    return NULL;
}

static void *get_body(void *p)
{
    targ_t *a = p;
    double buf[W];
    for (int t = 0; t < np_; t++) {
        /* read the slot another process's thread wrote at t */
        int r = (me_ + 1) % np_, th = (a->tid + 1) % NT;
        double *src = (double *)a->b[t] + ((size_t)r * NT + th) * W;
        memset(buf, 0, sizeof(buf));
        if ((t + a->tid) % 2) {
            a->ok &= ARMCI_Get(src, buf, W * sizeof(double), t) == 0;
        } else {
            armci_hdl_t h;
            ARMCI_INIT_HANDLE(&h);
            a->ok &= ARMCI_NbGet(src, buf, W * sizeof(double), t, &h) == 0;
            a->ok &= ARMCI_Wait(&h) == 0;
        }
        for (int i = 0; i < W; i++)
            a->ok &= buf[i] == pat(r, th, t, i);
    }
    return NULL;
}

/* Puts of every kind from every thread into disjoint slots, then gets of every slot. */
static void test_put_get(void **state)
{
    (void)state;
    void **b = armcitest_malloc((armci_size_t)np_ * NT * W * sizeof(double));
    ARMCI_Barrier();
    targ_t *a = threadtest_run(put_body, b, NULL);
    ARMCI_Barrier();
    int ok = threadtest_ok(a);
    const double *mine = b[me_];
    for (int r = 0; r < np_; r++)
        for (int th = 0; th < NT; th++)
            for (int i = 0; i < W; i++)
                ok &= mine[((size_t)r * NT + th) * W + i] == pat(r, th, me_, i);
    free(a);
    a = threadtest_run(get_body, b, NULL);
    ok &= threadtest_ok(a);
    free(a);
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    armcitest_free(b);
}

static void *acc_body(void *p)
{
    targ_t *a = p;
    double x[W], scale = 2.0;
    int ix[W], iscale = 3;
    for (int i = 0; i < W; i++)
        x[i] = i + a->tid, ix[i] = i - a->tid;
    for (int k = 0; k < K / 2; k++)
        for (int d = 0; d < np_; d++) {
            int t = (me_ + d + a->tid) % np_;
            double *dd = a->b[t];
            int *di = (int *)(dd + W);
            if (k % 2) {
                a->ok &= ARMCI_Acc(ARMCI_ACC_DBL, &scale, x, dd, W * sizeof(double), t) == 0;
                a->ok &= ARMCI_Acc(ARMCI_ACC_INT, &iscale, ix, di, W * sizeof(int), t) == 0;
            } else { /* implicit non-blocking, completed by ARMCI_WaitAll below */
                a->ok &= ARMCI_NbAcc(ARMCI_ACC_DBL, &scale, x, dd, W * sizeof(double), t, NULL) == 0;
                a->ok &= ARMCI_NbAcc(ARMCI_ACC_INT, &iscale, ix, di, W * sizeof(int), t, NULL) == 0;
            }
        }
    ARMCI_WaitAll();
    return NULL;
}

/* Accumulates of doubles and ints from every thread into the same elements: exact sums. */
static void test_acc(void **state)
{
    (void)state;
    void **b = armcitest_malloc(W * (sizeof(double) + sizeof(int)));
    memset(b[me_], 0, W * (sizeof(double) + sizeof(int)));
    ARMCI_Barrier();
    targ_t *a = threadtest_run(acc_body, b, NULL);
    ARMCI_Barrier();
    int ok = threadtest_ok(a);
    const double *d = b[me_];
    const int *di = (const int *)(d + W);
    long reps = (long)np_ * (K / 2);
    for (int i = 0; i < W; i++) {
        double ed = 0;
        long ei = 0;
        for (int th = 0; th < NT; th++)
            ed += 2.0 * (i + th) * reps, ei += 3L * (i - th) * reps;
        ok &= d[i] == ed && di[i] == ei;
    }
    free(a);
    ARMCI_CHECK_ALL(ok);
    armcitest_free(b);
}

#ifdef ARMCITEST_ARMCI_MPI
/* ARMCI-MPI 0.3.1's mutexes take MPI_Win_lock on one window per mutex set: two threads of a process
 * locking at once trip MPICH's assertion (slock->locked == 0) and abort. */
ARMCITEST_MAIN("armci_threads", test_rmw, test_put_get, test_acc)
#else
static void *mutex_body(void *p)
{
    targ_t *a = p;
    for (int k = 0; k < K; k++) {
        int t = (me_ + k + a->tid) % np_;
        long v = 0;
        ARMCI_Lock(0, t);
        a->ok &= ARMCI_Get(a->b[t], &v, sizeof(v), t) == 0;
        v += 1;
        a->ok &= ARMCI_Put(&v, a->b[t], sizeof(v), t) == 0;
        ARMCI_Unlock(0, t);
    }
    return NULL;
}

/* ARMCI mutexes between the threads of one process as well as between processes: a get, increment,
 * put under the lock loses no update. */
static void test_mutex(void **state)
{
    (void)state;
    void **b = armcitest_malloc(sizeof(long));
    *(long *)b[me_] = 0;
    ARMCI_CHECK_OK(ARMCI_Create_mutexes(1));
    ARMCI_Barrier();
    targ_t *a = threadtest_run(mutex_body, b, NULL);
    ARMCI_Barrier();
    int ok = threadtest_ok(a);
    long total = 0, mine = *(long *)b[me_];
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    ok &= total == (long)np_ * NT * K;
    free(a);
    ARMCI_CHECK_ALL(ok);
    ARMCI_CHECK_OK(ARMCI_Destroy_mutexes());
    armcitest_free(b);
}

static volatile int held; /* the holder thread has the mutex */
static void *holder_body(void *p)
{
    ARMCI_Lock(0, 0);
    __atomic_store_n(&held, 1, __ATOMIC_SEQ_CST);
    usleep(100000);
    ARMCI_Unlock(0, 0);
    return p;
}

/* ARMCI_Malloc and ARMCI_Free on process 0 while a thread of process 0 holds an ARMCI mutex that
 * the other processes lock before they join: the collective lets that thread in to unlock (it
 * waited holding RMC's lock, and every process hung). */
static void test_collective_while_held(void **state)
{
    (void)state;
    ARMCI_CHECK_OK(ARMCI_Create_mutexes(1));
    void **pre = armcitest_malloc(64), **b = NULL;
    for (int c = 0; c < 2; c++) {
        pthread_t t;
        held = 0;
        if (me_ == 0) {
            ARMCI_CHECK_ALL(pthread_create(&t, NULL, holder_body, NULL) == 0);
            while (!__atomic_load_n(&held, __ATOMIC_SEQ_CST))
                usleep(1000);
        } else {
            ARMCI_CHECK_ALL(1);
        }
        ARMCI_Barrier(); /* process 0's thread holds the mutex */
        if (me_ != 0) {  /* waits for process 0's thread, then joins */
            ARMCI_Lock(0, 0);
            ARMCI_Unlock(0, 0);
        }
        if (c == 0)
            b = armcitest_malloc(64);
        else
            armcitest_free(pre);
        if (me_ == 0)
            ARMCI_CHECK_ALL(pthread_join(t, NULL) == 0);
        else
            ARMCI_CHECK_ALL(1);
    }
    armcitest_free(b);
    ARMCI_CHECK_OK(ARMCI_Destroy_mutexes());
}

ARMCITEST_MAIN("armci_threads", test_rmw, test_put_get, test_acc, test_mutex,
               test_collective_while_held)
#endif
