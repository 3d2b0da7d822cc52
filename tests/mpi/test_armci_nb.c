/* ARMCI API: non-blocking operations (NbPut / NbGet / NbAcc, strided and vector forms) with
 * explicit handles (ARMCI_Wait, ARMCI_Test), aggregate handles, implicit (NULL) handles completed
 * by ARMCI_WaitProc / ARMCI_WaitAll / ARMCI_Fence / ARMCI_Barrier. Written against armci.h only. */
#include "armcitest.h"

#define NEXT(r) (((r) + 1) % np_)
#define PREV(r) (((r) + np_ - 1) % np_)
#define SLOT    8192

/* Every rank fills its slot at every target with NbPut (one handle per target, waited with
 * ARMCI_Wait or polled with ARMCI_Test), then reads every slot back with NbGet. */
static void test_nb_contig(void **state)
{
    (void)state;
    void **b = armcitest_malloc((armci_size_t)np_ * SLOT);
    unsigned char *src = malloc((size_t)np_ * SLOT), *dst = malloc((size_t)np_ * SLOT);
    armci_hdl_t *h = malloc((size_t)np_ * sizeof(armci_hdl_t));
    for (int t = 0; t < np_; t++)
        for (int i = 0; i < SLOT; i++)
            src[(size_t)t * SLOT + i] = armcitest_pat(me_, (size_t)i, 100u + (unsigned)t);
    for (int t = 0; t < np_; t++) {
        ARMCI_INIT_HANDLE(&h[t]);
        ARMCI_CHECK_OK(
            ARMCI_NbPut(src + (size_t)t * SLOT, (char *)b[t] + (size_t)me_ * SLOT, SLOT, t, &h[t]));
    }
    for (int t = 0; t < np_; t++) {
        if (t % 2) {
            ARMCI_CHECK_OK(ARMCI_Wait(&h[t]));
        } else {
            double t0 = MPI_Wtime();
            while (ARMCI_Test(&h[t]) != 0 && MPI_Wtime() - t0 < 20.0)
                ;
            ARMCI_CHECK_ALL(ARMCI_Test(&h[t]) == 0);
        }
    }
    ARMCI_Barrier();
    memset(dst, 0, (size_t)np_ * SLOT);
    for (int s = 0; s < np_; s++) {
        ARMCI_INIT_HANDLE(&h[s]);
        ARMCI_CHECK_OK(ARMCI_NbGet((char *)b[NEXT(me_)] + (size_t)s * SLOT, dst + (size_t)s * SLOT,
                                   SLOT, NEXT(me_), &h[s]));
    }
    int ok = 1;
    for (int s = 0; s < np_; s++) {
        ARMCI_CHECK_OK(ARMCI_Wait(&h[s]));
        for (int i = 0; i < SLOT; i++)
            ok &= dst[(size_t)s * SLOT + i] ==
                  armcitest_pat(s, (size_t)i, 100u + (unsigned)NEXT(me_));
    }
    ARMCI_CHECK_ALL(ok);
    /* waiting again on a completed handle is harmless */
    ARMCI_CHECK_OK(ARMCI_Wait(&h[0]));
    ARMCI_Barrier();
    free(h);
    free(src);
    free(dst);
    armcitest_free(b);
}

/* One aggregate handle collects many operations of different kinds to one target; a single
 * ARMCI_Wait completes them all. */
static void test_nb_aggregate(void **state)
{
    (void)state;
    enum { NOPS = 64, W = 16 };
    void **b = armcitest_malloc((armci_size_t)np_ * NOPS * W * sizeof(long));
    long *src = malloc(NOPS * W * sizeof(long));
    long *slot_at_t;
    int t = NEXT(me_);
    for (int i = 0; i < NOPS * W; i++)
        src[i] = 1000L * me_ + i;
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    ARMCI_SET_AGGREGATE_HANDLE(&h);
    slot_at_t = (long *)b[t] + (size_t)me_ * NOPS * W;
    for (int k = 0; k < NOPS; k++)
        ARMCI_CHECK_OK(ARMCI_NbPut(src + k * W, slot_at_t + k * W, W * sizeof(long), t, &h));
    ARMCI_CHECK_OK(ARMCI_Wait(&h));
    /* strided and accumulate on the same handle */
    long one = 1;
    int stride = W * sizeof(long), count[2] = {(int)(4 * sizeof(long)), NOPS};
    ARMCI_CHECK_OK(
        ARMCI_NbAccS(ARMCI_ACC_LNG, &one, src, &stride, slot_at_t, &stride, count, 1, t, &h));
    ARMCI_CHECK_OK(ARMCI_NbAcc(ARMCI_ACC_LNG, &one, src, slot_at_t, W * sizeof(long), t, &h));
    ARMCI_CHECK_OK(ARMCI_Wait(&h));
    ARMCI_UNSET_AGGREGATE_HANDLE(&h);
    ARMCI_Barrier();
    long *got = malloc(NOPS * W * sizeof(long));
    int p = PREV(me_);
    ARMCI_CHECK_OK(
        ARMCI_Get((long *)b[me_] + (size_t)p * NOPS * W, got, NOPS * W * sizeof(long), me_));
    int ok = 1;
    for (int i = 0; i < NOPS * W; i++) {
        long v = 1000L * p + i;
        if (i % W < 4)
            v += 1000L * p + i; /* AccS: first 4 of each block */
        if (i < W)
            v += 1000L * p + i; /* Acc: first block */
        ok &= got[i] == v;
    }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    free(got);
    free(src);
    armcitest_free(b);
}

/* Strided and vector non-blocking forms, each on its own handle. */
static void test_nb_strided_vector(void **state)
{
    (void)state;
    enum { R = 8, C = 12 }; /* R rows of C ints; remote rows padded to C + 3 */
    void **b = armcitest_malloc((armci_size_t)np_ * R * (C + 3) * sizeof(int));
    int t = NEXT(me_), p = PREV(me_);
    int src[R][C], back[R][C];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            src[r][c] = me_ * 10000 + r * 100 + c;
    int *slot = (int *)b[t] + (size_t)me_ * R * (C + 3);
    int sstr = C * sizeof(int), dstr = (C + 3) * sizeof(int), count[2] = {C * sizeof(int), R};
    armci_hdl_t h1, h2, h3;
    ARMCI_INIT_HANDLE(&h1);
    ARMCI_CHECK_OK(ARMCI_NbPutS(src, &sstr, slot, &dstr, count, 1, t, &h1));
    ARMCI_CHECK_OK(ARMCI_Wait(&h1));
    int two = 2;
    ARMCI_INIT_HANDLE(&h2);
    ARMCI_CHECK_OK(ARMCI_NbAccS(ARMCI_ACC_INT, &two, src, &sstr, slot, &dstr, count, 1, t, &h2));
    ARMCI_CHECK_OK(ARMCI_Wait(&h2));
    memset(back, 0, sizeof(back));
    ARMCI_INIT_HANDLE(&h3);
    ARMCI_CHECK_OK(ARMCI_NbGetS(slot, &dstr, back, &sstr, count, 1, t, &h3));
    ARMCI_CHECK_OK(ARMCI_Wait(&h3));
    int ok = 1;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            ok &= back[r][c] == 3 * src[r][c];
    ARMCI_CHECK_ALL(ok);

    /* vector: column 0 and column C-1 of every row, as two descriptors */
    void *vs[2][R], *vd[2][R], *gs[2][R], *gd[2][R];
    int col[2][R], got[2][R];
    for (int r = 0; r < R; r++)
        for (int k = 0; k < 2; k++) {
            col[k][r] = -(me_ * 1000 + r * 10 + k) - 1;
            vs[k][r] = &col[k][r];
            vd[k][r] = slot + r * (C + 3) + (k ? C - 1 : 0);
            gs[k][r] = vd[k][r];
            gd[k][r] = &got[k][r];
        }
    armci_giov_t put[2] = {{vs[0], vd[0], sizeof(int), R}, {vs[1], vd[1], sizeof(int), R}};
    armci_giov_t get[2] = {{gs[0], gd[0], sizeof(int), R}, {gs[1], gd[1], sizeof(int), R}};
    ARMCI_INIT_HANDLE(&h1);
    ARMCI_CHECK_OK(ARMCI_NbPutV(put, 2, t, &h1));
    ARMCI_CHECK_OK(ARMCI_Wait(&h1));
    int three = 3;
    ARMCI_INIT_HANDLE(&h2);
    ARMCI_CHECK_OK(ARMCI_NbAccV(ARMCI_ACC_INT, &three, put, 2, t, &h2));
    ARMCI_CHECK_OK(ARMCI_Wait(&h2));
    ARMCI_INIT_HANDLE(&h3);
    ARMCI_CHECK_OK(ARMCI_NbGetV(get, 2, t, &h3));
    ARMCI_CHECK_OK(ARMCI_Wait(&h3));
    ok = 1;
    for (int r = 0; r < R; r++)
        for (int k = 0; k < 2; k++)
            ok &= got[k][r] == 4 * col[k][r];
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    /* the owner sees the final state of the previous rank's slot */
    int mine[R][C + 3];
    ARMCI_CHECK_OK(ARMCI_Get((int *)b[me_] + (size_t)p * R * (C + 3), mine, sizeof(mine), me_));
    ok = 1;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            int v = 3 * (p * 10000 + r * 100 + c);
            if (c == 0 || c == C - 1)
                v = -4 * (p * 1000 + r * 10 + (c ? 1 : 0)) - 4;
            ok &= mine[r][c] == v;
        }
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    armcitest_free(b);
}

/* Implicit handles (NULL): completed by WaitProc (gets: data arrived), WaitAll, Fence. */
static void test_nb_implicit(void **state)
{
    (void)state;
    enum { N = 1024 };
    void **b = armcitest_malloc((armci_size_t)np_ * N);
    unsigned char *src = malloc((size_t)np_ * N), *dst = malloc((size_t)np_ * N);
    for (int t = 0; t < np_; t++)
        for (int i = 0; i < N; i++)
            src[(size_t)t * N + i] = armcitest_pat(me_, (size_t)i, 300u + (unsigned)t);
    for (int t = 0; t < np_; t++)
        ARMCI_CHECK_OK(
            ARMCI_NbPut(src + (size_t)t * N, (char *)b[t] + (size_t)me_ * N, N, t, NULL));
    for (int t = 0; t < np_; t++)
        ARMCI_Fence(t); /* complete at every target */
    /* tell every target by message only; each reads its own memory */
    int token = 1;
    for (int t = 0; t < np_; t++)
        if (t != me_)
            MPI_Send(&token, 1, MPI_INT, t, 77, MPI_COMM_WORLD);
    for (int s = 0; s < np_; s++)
        if (s != me_)
            MPI_Recv(&token, 1, MPI_INT, s, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int ok = 1;
    ARMCI_Access_begin(b[me_]);
    for (int s = 0; s < np_; s++)
        for (int i = 0; i < N; i++)
            ok &= ((unsigned char *)b[me_])[(size_t)s * N + i] ==
                  armcitest_pat(s, (size_t)i, 300u + (unsigned)me_);
    ARMCI_Access_end(b[me_]);
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    /* gets with implicit handles: WaitProc for one target, WaitAll for the rest */
    memset(dst, 0, (size_t)np_ * N);
    int t = NEXT(me_);
    for (int s = 0; s < np_; s++)
        ARMCI_CHECK_OK(ARMCI_NbGet((char *)b[t] + (size_t)s * N, dst + (size_t)s * N, N, t, NULL));
    ARMCI_CHECK_OK(ARMCI_WaitProc(t));
    ok = 1;
    for (int s = 0; s < np_; s++)
        for (int i = 0; i < N; i++)
            ok &= dst[(size_t)s * N + i] == armcitest_pat(s, (size_t)i, 300u + (unsigned)t);
    ARMCI_CHECK_ALL(ok);
    memset(dst, 0, (size_t)np_ * N);
    for (int s = 0; s < np_; s++)
        ARMCI_CHECK_OK(
            ARMCI_NbGet((char *)b[s] + (size_t)me_ * N, dst + (size_t)s * N, N, s, NULL));
    ARMCI_CHECK_OK(ARMCI_WaitAll());
    ok = 1;
    for (int s = 0; s < np_; s++)
        for (int i = 0; i < N; i++)
            ok &= dst[(size_t)s * N + i] == armcitest_pat(me_, (size_t)i, 300u + (unsigned)s);
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    free(src);
    free(dst);
    armcitest_free(b);
}

/* Explicit handles completed by WaitAll / WaitProc instead of Wait; Barrier completes everything.
 */
static void test_nb_waitall_waitproc(void **state)
{
    (void)state;
    enum { N = 64 };
    void **b = armcitest_malloc((armci_size_t)np_ * N * sizeof(double));
    double *src = malloc((size_t)np_ * N * sizeof(double)),
           *dst = malloc((size_t)np_ * N * sizeof(double));
    armci_hdl_t *h = malloc((size_t)np_ * sizeof(armci_hdl_t));
    for (int i = 0; i < np_ * N; i++)
        src[i] = me_ + i * 0.5;
    for (int t = 0; t < np_; t++) {
        ARMCI_INIT_HANDLE(&h[t]);
        ARMCI_CHECK_OK(ARMCI_NbPut(src + (size_t)t * N, (double *)b[t] + (size_t)me_ * N,
                                   N * sizeof(double), t, &h[t]));
    }
    ARMCI_CHECK_OK(ARMCI_WaitAll());
    ARMCI_Barrier();
    for (int t = 0; t < np_; t++) {
        ARMCI_INIT_HANDLE(&h[t]);
        ARMCI_CHECK_OK(ARMCI_NbGet((double *)b[t] + (size_t)me_ * N, dst + (size_t)t * N,
                                   N * sizeof(double), t, &h[t]));
    }
    for (int t = 0; t < np_; t++)
        ARMCI_CHECK_OK(ARMCI_WaitProc(t));
    int ok = 1;
    for (int i = 0; i < np_ * N; i++)
        ok &= dst[i] == src[i];
    ARMCI_CHECK_ALL(ok);
    /* accumulate with handles, completed by the barrier only */
    double one = 1.0;
    for (int t = 0; t < np_; t++) {
        ARMCI_INIT_HANDLE(&h[t]);
        ARMCI_CHECK_OK(ARMCI_NbAcc(ARMCI_ACC_DBL, &one, src + (size_t)t * N,
                                   (double *)b[t] + (size_t)me_ * N, N * sizeof(double), t, &h[t]));
    }
    ARMCI_Barrier();
    for (int t = 0; t < np_; t++)
        ARMCI_CHECK_OK(ARMCI_Wait(&h[t])); /* completed already: returns at once */
    ARMCI_CHECK_OK(ARMCI_Get(b[me_], dst, np_ * N * sizeof(double), me_));
    ok = 1;
    for (int s = 0; s < np_; s++)
        for (int i = 0; i < N; i++)
            ok &= dst[(size_t)s * N + i] == 2.0 * (s + ((size_t)me_ * N + i) * 0.5);
    ARMCI_CHECK_ALL(ok);
    ARMCI_Barrier();
    free(h);
    free(src);
    free(dst);
    armcitest_free(b);
}

/* 1 when dst[0..n) holds rank t's pattern (1000 t + i); else says how many elements are missing
 * after `what`. */
static int arrived(const long *dst, size_t n, int t, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += dst[i] != 1000L * t + (long)i;
    if (bad)
        fprintf(stderr, "[rank %d] after %s: %zu of %zu elements not arrived\n", me_, what, bad, n);
    return bad == 0;
}

/* A handle is a value: ARMCI_Wait / ARMCI_Test on a copy of it (h2 = h), or on the handle after
 * it moved in memory, complete the operations issued on it; a stale copy of a completed handle is
 * complete (even while another handle's operation is in flight). The get is large so that it is
 * still in flight when the copy is waited. */
static void test_nb_handle_copy(void **state)
{
    (void)state;
    const size_t n = (size_t)1 << 20;
    void **b = armcitest_malloc((armci_size_t)(n * sizeof(long)));
    long *mine = b[me_], *dst = malloc(n * sizeof(long));
    for (size_t i = 0; i < n; i++)
        mine[i] = 1000L * me_ + (long)i;
    ARMCI_Barrier();
    int t = NEXT(me_), ok = 1;

    /* waited through a copy */
    memset(dst, 0, n * sizeof(long));
    armci_hdl_t h, h2;
    ARMCI_INIT_HANDLE(&h);
    ARMCI_CHECK_OK(ARMCI_NbGet(b[t], dst, (int)(n * sizeof(long)), t, &h));
    h2 = h;
    ARMCI_CHECK_OK(ARMCI_Wait(&h2));
    ok &= arrived(dst, n, t, "ARMCI_Wait(copy)");
    ok &= ARMCI_Wait(&h) == 0 && ARMCI_Test(&h) == 0; /* the original: complete */
    ARMCI_CHECK_ALL(ok);

    /* tested through a copy until complete */
    memset(dst, 0, n * sizeof(long));
    ARMCI_INIT_HANDLE(&h);
    ARMCI_CHECK_OK(ARMCI_NbGet(b[t], dst, (int)(n * sizeof(long)), t, &h));
    h2 = h;
    double t0 = MPI_Wtime();
    while (ARMCI_Test(&h2) != 0 && MPI_Wtime() - t0 < 20.0)
        ;
    ok &= arrived(dst, n, t, "ARMCI_Test(copy) == 0");
    ok &= ARMCI_Wait(&h) == 0;
    ARMCI_CHECK_ALL(ok);

    /* waited after the handle moved in memory (the old place overwritten and freed) */
    memset(dst, 0, n * sizeof(long));
    armci_hdl_t *hp = malloc(sizeof(*hp));
    ARMCI_INIT_HANDLE(hp);
    ARMCI_CHECK_OK(ARMCI_NbGet(b[t], dst, (int)(n * sizeof(long)), t, hp));
    armci_hdl_t *moved = malloc(4 * sizeof(*moved));
    memcpy(&moved[3], hp, sizeof(*hp));
    memset(hp, 0x5a, sizeof(*hp));
    free(hp);
    ARMCI_CHECK_OK(ARMCI_Wait(&moved[3]));
    ok &= arrived(dst, n, t, "ARMCI_Wait(moved)");
    ARMCI_CHECK_ALL(ok);

    /* a stale copy of a completed handle is complete while a new handle's get is in flight */
    h2 = moved[3];
    armci_hdl_t h3;
    ARMCI_INIT_HANDLE(&h3);
    ARMCI_CHECK_OK(ARMCI_NbGet(b[t], dst, (int)(n * sizeof(long)), t, &h3));
    ok &= ARMCI_Test(&h2) == 0 && ARMCI_Wait(&h2) == 0;
    ok &= ARMCI_Wait(&h3) == 0;
    ARMCI_CHECK_ALL(ok);
    free(moved);
    ARMCI_Barrier();
    free(dst);
    armcitest_free(b);
}

ARMCITEST_MAIN("armci_nb", test_nb_contig, test_nb_aggregate, test_nb_strided_vector,
               test_nb_implicit, test_nb_waitall_waitproc, test_nb_handle_copy)
