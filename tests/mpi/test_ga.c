/* Global Arrays on RMC: Debian's prebuilt Global Arrays library (libga-mpich.a, built for
 * ARMCI-MPI) linked unchanged against RMC's libarmci (test_ga) and, as a check of the test itself,
 * against ARMCI-MPI (test_ga_ampi). GA reaches ARMCI through its public API only, so every GA call
 * here exercises RMC's ARMCI: ARMCI_Malloc(_group), PutS/GetS/AccS, vector ops (scatter/gather),
 * Rmw (read-and-increment), mutexes, non-blocking handles, armci_msg collectives, groups.
 * Results are verified against local references; checks agree across ranks before asserting. */
#include <complex.h>
#include <ga.h>
#include <macdecls.h>
#include "armcitest.h"

static int ga_setup(void **state)
{
    (void)state;
    armcitest_peer_env();
    GA_Initialize();
    /* MA (GA's local allocator) backs temporaries of some GA operations (dgemm, scatter) */
    if (!MA_initialized() && !MA_init(C_DBL, 1 << 20, 1 << 20))
        return -1;
    return GA_Nnodes() == np_ && GA_Nodeid() == me_ ? 0 : -1;
}

static int ga_teardown(void **state)
{
    (void)state;
    GA_Terminate();
    return 0;
}

#define R 37 /* rows (not a multiple of the rank count: uneven blocks) */
#define C 29

static double val(int i, int j, int salt)
{
    return (double)(i * 1000 + j) + 0.25 * salt;
}

/* Every rank puts its own rows, then every rank gets the whole array and random patches. */
static void test_put_get(void **s)
{
    (void)s;
    int dims[2] = {R, C};
    int g = NGA_Create(C_DBL, 2, dims, "pg", NULL);
    ARMCI_CHECK_ALL(g != 0);
    GA_Zero(g);
    double row[C];
    for (int i = me_; i < R; i += np_) {
        for (int j = 0; j < C; j++)
            row[j] = val(i, j, 1);
        int lo[2] = {i, 0}, hi[2] = {i, C - 1}, ld = C;
        NGA_Put(g, lo, hi, row, &ld);
    }
    GA_Sync();
    double *all = malloc(sizeof(double) * R * C);
    int lo[2] = {0, 0}, hi[2] = {R - 1, C - 1}, ld = C;
    NGA_Get(g, lo, hi, all, &ld);
    int ok = 1;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            ok &= all[i * C + j] == val(i, j, 1);
    /* random sub-patches, as a column-strided local buffer of leading dimension 40 */
    unsigned seed = 7u + (unsigned)me_;
    double patch[R * 40];
    for (int t = 0; t < 20; t++) {
        seed = seed * 1103515245u + 12345u;
        int i0 = (int)(seed >> 8) % R, j0 = (int)(seed >> 16) % C;
        int i1 = i0 + (int)((seed >> 4) % (unsigned)(R - i0)),
            j1 = j0 + (int)((seed >> 20) % (unsigned)(C - j0));
        int plo[2] = {i0, j0}, phi[2] = {i1, j1}, pld = 40;
        NGA_Get(g, plo, phi, patch, &pld);
        for (int i = i0; i <= i1; i++)
            for (int j = j0; j <= j1; j++)
                ok &= patch[(i - i0) * 40 + (j - j0)] == val(i, j, 1);
    }
    ARMCI_CHECK_ALL(ok);
    free(all);
    GA_Destroy(g);
}

/* All ranks accumulate into one overlapping patch (int, double, double complex) with a scale:
 * the sums are exact. */
static void test_acc(void **s)
{
    (void)s;
    int dims[2] = {R, C};
    int gi = NGA_Create(C_INT, 2, dims, "acc_i", NULL);
    int gd = NGA_Create(C_DBL, 2, dims, "acc_d", NULL);
    int gz = NGA_Create(C_DCPL, 2, dims, "acc_z", NULL);
    GA_Zero(gi);
    GA_Zero(gd);
    GA_Zero(gz);
    int lo[2] = {3, 2}, hi[2] = {R - 5, C - 3}, ld = C;
    int rows = hi[0] - lo[0] + 1, cols = hi[1] - lo[1] + 1, reps = 5;
    int *bi = malloc(sizeof(int) * R * C); /* patch (ld C), later the whole array */
    double *bd = malloc(sizeof(double) * R * C);
    double complex *bz = malloc(sizeof(double complex) * R * C);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            bi[i * C + j] = i + j + me_;
            bd[i * C + j] = 0.5 * (i + j + me_);
            bz[i * C + j] = (double)(i + me_) + (double)j * I;
        }
    int ai = 3;
    double ad = 2.0;
    double complex az = 1.0 + 1.0 * I;
    for (int r = 0; r < reps; r++) {
        NGA_Acc(gi, lo, hi, bi, &ld, &ai);
        NGA_Acc(gd, lo, hi, bd, &ld, &ad);
        NGA_Acc(gz, lo, hi, bz, &ld, &az);
    }
    GA_Sync();
    int alo[2] = {0, 0}, ahi[2] = {R - 1, C - 1};
    NGA_Get(gi, alo, ahi, bi, &ld);
    NGA_Get(gd, alo, ahi, bd, &ld);
    int ok = 1;
    double complex *wz = malloc(sizeof(double complex) * R * C);
    NGA_Get(gz, alo, ahi, wz, &ld);
    int sum_me = np_ * (np_ - 1) / 2;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            int in = i >= lo[0] && i <= hi[0] && j >= lo[1] && j <= hi[1];
            int pi = i - lo[0], pj = j - lo[1];
            long ei = in ? (long)reps * ai * ((pi + pj) * np_ + sum_me) : 0;
            double ed = in ? reps * ad * 0.5 * ((pi + pj) * np_ + sum_me) : 0.0;
            double complex ez =
                in ? reps * az * ((double)(pi * np_ + sum_me) + (double)(pj * np_) * I) : 0.0;
            ok &= bi[i * C + j] == ei && bd[i * C + j] == ed && wz[i * C + j] == ez;
        }
    ARMCI_CHECK_ALL(ok);
    free(bi);
    free(bd);
    free(bz);
    free(wz);
    GA_Destroy(gi);
    GA_Destroy(gd);
    GA_Destroy(gz);
}

/* NGA_Read_inc (ARMCI_Rmw fetch-and-add) as a shared task counter: tickets are a permutation. */
static void test_read_inc(void **s)
{
    (void)s;
    int one = 1;
    int g = NGA_Create(C_LONG, 1, &one, "counter", NULL);
    GA_Zero(g);
    GA_Sync();
    int k = np_ <= 2 ? 200 : 50, sub = 0;
    long *mine = malloc(sizeof(long) * (size_t)k), *all = malloc(sizeof(long) * (size_t)k * np_);
    for (int i = 0; i < k; i++)
        mine[i] = NGA_Read_inc(g, &sub, 1);
    GA_Sync();
    MPI_Allgather(mine, k, MPI_LONG, all, k, MPI_LONG, MPI_COMM_WORLD);
    char *seen = calloc((size_t)k * np_, 1);
    int ok = 1;
    for (int i = 0; i < k * np_; i++) {
        ok &= all[i] >= 0 && all[i] < (long)k * np_ && !seen[all[i]];
        if (all[i] >= 0 && all[i] < (long)k * np_)
            seen[all[i]] = 1;
    }
    long fin = -1;
    NGA_Get(g, &sub, &sub, &fin, &one);
    ok &= fin == (long)k * np_;
    ARMCI_CHECK_ALL(ok);
    free(mine);
    free(all);
    free(seen);
    GA_Destroy(g);
}

/* GA's global operations (armci_msg_*: dgop, igop, lgop, brdcst). */
static void test_collectives(void **s)
{
    (void)s;
    double d[3] = {me_ + 1.0, -(me_ + 1.0), 0.5 * me_};
    GA_Dgop(d, 1, "+");
    GA_Dgop(d + 1, 1, "absmax");
    GA_Dgop(d + 2, 1, "max");
    int x[2] = {me_ + 1, me_ + 1};
    GA_Igop(x, 1, "*");
    GA_Igop(x + 1, 1, "min");
    long l = (long)me_ << 33;
    GA_Lgop(&l, 1, "+");
    double fact = 1;
    for (int i = 1; i <= np_; i++)
        fact *= i;
    char msg[32] = "";
    if (me_ == np_ - 1)
        snprintf(msg, sizeof msg, "from %d", me_);
    GA_Brdcst(msg, (int)sizeof msg, np_ - 1);
    char want[32];
    snprintf(want, sizeof want, "from %d", np_ - 1);
    ARMCI_CHECK_ALL(d[0] == np_ * (np_ + 1) / 2.0 && d[1] == np_ && d[2] == 0.5 * (np_ - 1) &&
                    x[0] == (int)fact && x[1] == 1 && l == ((long)np_ * (np_ - 1) / 2) << 33 &&
                    strcmp(msg, want) == 0);
}

/* GA's linear algebra: dgemm (BLAS on gathered blocks), ddot, scale, add, copy, transpose. */
static void test_linalg(void **s)
{
    (void)s;
    enum { M = 17, K = 13, N = 11 };
    int da[2] = {M, K}, db[2] = {K, N}, dc[2] = {M, N}, dt[2] = {N, M};
    int ga = NGA_Create(C_DBL, 2, da, "A", NULL), gb = NGA_Create(C_DBL, 2, db, "B", NULL);
    int gc = NGA_Create(C_DBL, 2, dc, "Cm", NULL), gt = NGA_Create(C_DBL, 2, dt, "T", NULL);
    int gc2 = GA_Duplicate(gc, "C2");
    static double a[M * K], b[K * N], c[M * N], ref[M * N], t[N * M];
    for (int i = 0; i < M * K; i++)
        a[i] = (double)((i * 7) % 11) - 5;
    for (int i = 0; i < K * N; i++)
        b[i] = (double)((i * 5) % 9) - 4;
    if (me_ == 0) {
        int lo[2] = {0, 0}, ha[2] = {M - 1, K - 1}, hb[2] = {K - 1, N - 1}, lda = K, ldb = N;
        NGA_Put(ga, lo, ha, a, &lda);
        NGA_Put(gb, lo, hb, b, &ldb);
    }
    GA_Sync();
    GA_Dgemm('N', 'N', M, N, K, 1.0, ga, gb, 0.0, gc);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double v = 0;
            for (int k = 0; k < K; k++)
                v += a[i * K + k] * b[k * N + j];
            ref[i * N + j] = v;
        }
    int lo[2] = {0, 0}, hc[2] = {M - 1, N - 1}, ldc = N;
    NGA_Get(gc, lo, hc, c, &ldc);
    int ok = 1;
    double dot = 0;
    for (int i = 0; i < M * N; i++) {
        ok &= c[i] == ref[i];
        dot += ref[i] * ref[i];
    }
    ok &= GA_Ddot(gc, gc) == dot;
    GA_Copy(gc, gc2);
    double two = 2.0, one = 1.0, mthree = -3.0;
    GA_Scale(gc2, &two);
    GA_Add(&one, gc, &one, gc2, gc2);    /* gc2 = 3 * gc */
    GA_Add(&mthree, gc, &one, gc2, gc2); /* gc2 = 0 */
    NGA_Get(gc2, lo, hc, c, &ldc);
    for (int i = 0; i < M * N; i++)
        ok &= c[i] == 0.0;
    GA_Transpose(gc, gt);
    int ht[2] = {N - 1, M - 1}, ldt = M;
    NGA_Get(gt, lo, ht, t, &ldt);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            ok &= t[j * M + i] == ref[i * N + j];
    ARMCI_CHECK_ALL(ok);
    GA_Destroy(ga);
    GA_Destroy(gb);
    GA_Destroy(gc);
    GA_Destroy(gc2);
    GA_Destroy(gt);
}

/* Scatter / gather / scatter-accumulate of single elements (ARMCI vector operations). */
static void test_scatter_gather(void **s)
{
    (void)s;
    int dims[2] = {R, C};
    int g = NGA_Create(C_DBL, 2, dims, "sg", NULL);
    GA_Zero(g);
    /* rank r owns the elements (i, j) with (i * C + j) % np == r: disjoint scatters */
    int n = 0;
    for (int e = me_; e < R * C; e += np_)
        n++;
    int *subs = malloc(sizeof(int) * 2 * (size_t)n), **sp = malloc(sizeof(int *) * (size_t)n);
    double *v = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
    int x = 0;
    for (int e = me_; e < R * C; e += np_, x++) {
        subs[2 * x] = e / C;
        subs[2 * x + 1] = e % C;
        sp[x] = &subs[2 * x];
        v[x] = val(e / C, e % C, 3);
    }
    NGA_Scatter(g, v, sp, n);
    GA_Sync();
    double alpha = 2.0;
    NGA_Scatter_acc(g, v, sp, n, &alpha); /* every element becomes 3x its value */
    GA_Sync();
    /* gather the elements of the next rank */
    int nxt = (me_ + 1) % np_, m = 0;
    for (int e = nxt; e < R * C; e += np_) {
        subs[2 * m] = e / C;
        subs[2 * m + 1] = e % C;
        sp[m] = &subs[2 * m];
        m++;
        if (m == n)
            break;
    }
    NGA_Gather(g, w, sp, m);
    int ok = 1;
    for (int i = 0; i < m; i++)
        ok &= w[i] == 3.0 * val(subs[2 * i], subs[2 * i + 1], 3);
    ARMCI_CHECK_ALL(ok);
    free(subs);
    free(sp);
    free(v);
    free(w);
    GA_Destroy(g);
}

/* Non-blocking put / get with GA handles. */
static void test_nonblocking(void **s)
{
    (void)s;
    int dims[2] = {R, C};
    int g = NGA_Create(C_DBL, 2, dims, "nb", NULL);
    GA_Zero(g);
    double rows[4][C];
    ga_nbhdl_t h[4];
    int k = 0;
    for (int i = me_; i < R && k < 4; i += np_, k++) {
        for (int j = 0; j < C; j++)
            rows[k][j] = val(i, j, 5);
        int lo[2] = {i, 0}, hi[2] = {i, C - 1}, ld = C;
        NGA_NbPut(g, lo, hi, rows[k], &ld, &h[k]);
    }
    for (int i = 0; i < k; i++)
        NGA_NbWait(&h[i]);
    GA_Sync();
    double got[4][C];
    int ok = 1, nk = 0;
    int nxt = (me_ + 1) % np_;
    for (int i = nxt; i < R && nk < 4; i += np_, nk++) {
        int lo[2] = {i, 0}, hi[2] = {i, C - 1}, ld = C;
        NGA_NbGet(g, lo, hi, got[nk], &ld, &h[nk]);
    }
    for (int q = 0; q < nk; q++) {
        NGA_NbWait(&h[q]);
        int i = nxt + q * np_;
        for (int j = 0; j < C; j++)
            ok &= got[q][j] == val(i, j, 5);
    }
    ARMCI_CHECK_ALL(ok);
    GA_Destroy(g);
}

/* GA mutexes (ARMCI mutexes): a read-modify-write counter under a lock is exact. */
static void test_locks(void **s)
{
    (void)s;
    int one = 1, sub = 0;
    int g = NGA_Create(C_INT, 1, &one, "locked", NULL);
    GA_Zero(g);
    ARMCI_CHECK_ALL(GA_Create_mutexes(1));
    int k = np_ <= 2 ? 50 : 10;
    for (int i = 0; i < k; i++) {
        GA_Lock(0);
        int v = 0;
        NGA_Get(g, &sub, &sub, &v, &one);
        v++;
        NGA_Put(g, &sub, &sub, &v, &one);
        GA_Unlock(0);
    }
    GA_Sync();
    int fin = -1;
    NGA_Get(g, &sub, &sub, &fin, &one);
    ARMCI_CHECK_ALL(fin == k * np_);
    ARMCI_CHECK_ALL(GA_Destroy_mutexes());
    GA_Destroy(g);
}

/* A processor group of the even ranks (ARMCI_Malloc_group on a proper subgroup when np > 1): an
 * array on the group, put / get / acc by its members only. */
static void test_pgroup(void **s)
{
    (void)s;
    int n = (np_ + 1) / 2, list[64];
    for (int i = 0; i < n; i++)
        list[i] = 2 * i;
    int grp = GA_Pgroup_create(list, n);
    int ok = 1;
    if (me_ % 2 == 0) {
        int gme = GA_Pgroup_nodeid(grp), gn = GA_Pgroup_nnodes(grp);
        ok &= gn == n && gme == me_ / 2;
        int dims[2] = {R, C};
        int g = NGA_Create_config(C_DBL, 2, dims, "grp", NULL, grp);
        GA_Zero(g);
        double row[C];
        for (int i = gme; i < R; i += gn) {
            for (int j = 0; j < C; j++)
                row[j] = val(i, j, 9);
            int lo[2] = {i, 0}, hi[2] = {i, C - 1}, ld = C;
            NGA_Put(g, lo, hi, row, &ld);
        }
        double one = 1.0;
        int lo[2] = {0, 0}, hi[2] = {0, C - 1}, ld = C;
        for (int j = 0; j < C; j++)
            row[j] = 1.0;
        NGA_Acc(g, lo, hi, row, &ld, &one);
        GA_Pgroup_sync(grp);
        double *all = malloc(sizeof(double) * R * C);
        int alo[2] = {0, 0}, ahi[2] = {R - 1, C - 1};
        NGA_Get(g, alo, ahi, all, &ld);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++)
                ok &= all[i * C + j] == val(i, j, 9) + (i == 0 ? (double)gn : 0.0);
        free(all);
        GA_Pgroup_sync(grp);
        GA_Destroy(g);
    }
    GA_Sync();
    ARMCI_CHECK_ALL(ok);
}

MPITEST_MAIN("Global Arrays on ARMCI", ga_setup, ga_teardown, test_put_get, test_acc, test_read_inc,
             test_collectives, test_linalg, test_scatter_gather, test_nonblocking, test_locks,
             test_pgroup)
