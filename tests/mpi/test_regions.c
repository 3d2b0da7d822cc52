/* Collective regions: every rank's base and size, zero fill and alignment, zero-size parts,
 * many regions alive at once (different sizes per rank, freed in an interleaved order), failed
 * allocations agreed by every rank. */
#include "mpitest.h"

static int me, n;

static int setup(void **state)
{
    if (mpitest_setup_rmc(state))
        return -1;
    me = rmc_rank();
    n = rmc_nranks();
    return 0;
}

static size_t size_a(int r)
{
    return 1000 + 37 * (size_t)r;
}

static void test_base_and_fill(void **state)
{
    (void)state;
    MPI_CHECK_ALL(rmc_region_count() == 0);
    void **bases = malloc((size_t)n * sizeof(void *));
    for (int r = 0; r < n; r++)
        bases[r] = (void *)&bases; /* must be overwritten */
    rmc_region_h a, b;
    MPI_CHECK_OK(rmc_region_alloc(size_a(me), bases, &a));
    MPI_CHECK_OK(rmc_region_alloc(64, NULL, &b)); /* bases not wanted */
    MPI_CHECK_ALL(a != NULL && b != NULL && a != b);
    MPI_CHECK_ALL(rmc_region_count() == 2);

    /* the bases are the owners' own addresses */
    void **seen = malloc((size_t)n * sizeof(void *));
    void *mine = bases[me];
    MPI_Allgather(&mine, sizeof(void *), MPI_BYTE, seen, sizeof(void *), MPI_BYTE, MPI_COMM_WORLD);
    int ok = 1;
    for (int r = 0; r < n; r++) {
        void *p = (void *)&ok;
        size_t s = 0;
        ok &= rmc_region_base(a, r, &p, &s) == RMC_OK;
        ok &= p == bases[r] && s == size_a(r) && seen[r] == bases[r];
        ok &= bases[r] != NULL && ((uintptr_t)bases[r] % 64) == 0;
        ok &= rmc_region_base(a, r, NULL, &s) == RMC_OK && s == size_a(r);
        ok &= rmc_region_base(a, r, &p, NULL) == RMC_OK && p == bases[r];
        ok &= rmc_region_base(b, r, &p, &s) == RMC_OK && s == 64 && p != NULL &&
              ((uintptr_t)p % 64) == 0;
    }
    MPI_CHECK_ALL(ok);
    /* zero-filled, locally and as seen by a get from every rank */
    const unsigned char *own = bases[me];
    ok = 1;
    for (size_t j = 0; j < size_a(me); j++)
        ok &= own[j] == 0;
    MPI_CHECK_ALL(ok);
    unsigned char *buf = malloc(size_a(n));
    for (int r = 0; r < n; r++) {
        memset(buf, 0xEE, size_a(r));
        MPI_CHECK_OK(rmc_get(bases[r], buf, size_a(r), r));
        for (size_t j = 0; j < size_a(r); j++)
            ok &= buf[j] == 0;
    }
    MPI_CHECK_ALL(ok);
    /* the whole part is usable: first and last byte of every rank's part */
    MPI_CHECK_OK(rmc_barrier());
    unsigned char tag = (unsigned char)(0x40 + me);
    int t = (me + 1) % n, p = (me + n - 1) % n;
    MPI_CHECK_OK(rmc_put(&tag, bases[t], 1, t));
    MPI_CHECK_OK(rmc_put(&tag, (char *)bases[t] + size_a(t) - 1, 1, t));
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(own[0] == 0x40 + p && own[size_a(me) - 1] == 0x40 + p);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(b));
    MPI_CHECK_ALL(rmc_region_count() == 1);
    MPI_CHECK_OK(rmc_region_free(a));
    MPI_CHECK_ALL(rmc_region_count() == 0);
    free(buf);
    free(seen);
    free(bases);
}

/* Odd ranks give 0 bytes: their base is NULL, their size 0, and any address on them is no region;
 * the even ranks' parts work as usual. */
static void test_zero_size_parts(void **state)
{
    (void)state;
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h h;
    size_t mysize = me % 2 ? 0 : 64 * (size_t)n;
    MPI_CHECK_OK(rmc_region_alloc(mysize, bases, &h));
    int ok = 1;
    for (int r = 0; r < n; r++) {
        void *p = (void *)&ok;
        size_t s = 7;
        ok &= rmc_region_base(h, r, &p, &s) == RMC_OK;
        if (r % 2)
            ok &= bases[r] == NULL && p == NULL && s == 0;
        else
            ok &= bases[r] != NULL && p == bases[r] && s == 64 * (size_t)n;
    }
    MPI_CHECK_ALL(ok);
    /* every rank writes 64 bytes into its slot of every even rank's part */
    unsigned char src[64], got[64];
    for (int j = 0; j < 64; j++)
        src[j] = mpitest_pat(me, (size_t)j, 0x20);
    for (int r = 0; r < n; r += 2)
        MPI_CHECK_OK(rmc_put(src, (char *)bases[r] + 64 * me, 64, r));
    /* and nothing at all into odd ranks: NULL, the even ranks' bases, any address */
    unsigned char probe[64];
    memset(probe, 0x77, sizeof(probe));
    for (int r = 1; r < n; r += 2) {
        void *addrs[3] = {NULL, bases[0], (void *)(uintptr_t)0x1000};
        for (int k = 0; k < 3; k++) {
            ok &= rmc_put(src, addrs[k], 1, r) == RMC_ERR_NOT_REGION;
            ok &= rmc_get(addrs[k], probe, 64, r) == RMC_ERR_NOT_REGION;
            rmc_request_h q = (rmc_request_h)&ok;
            ok &= rmc_put_nb(src, addrs[k], 8, r, &q) == RMC_ERR_NOT_REGION && q == NULL;
            q = (rmc_request_h)&ok;
            ok &= rmc_get_nb(addrs[k], probe, 8, r, &q) == RMC_ERR_NOT_REGION && q == NULL;
            ok &= rmc_get_nb(addrs[k], probe, 8, r, NULL) == RMC_ERR_NOT_REGION;
        }
    }
    for (int j = 0; j < 64; j++)
        ok &= probe[j] == 0x77;
    /* an address in no region may be dynamically registered memory, which the target itself
     * checks (active message): keep every rank inside RMC until all such checks are answered */
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
    if (me % 2 == 0) {
        const unsigned char *part = bases[me];
        for (int o = 0; o < n; o++)
            for (int j = 0; j < 64; j++)
                ok &= part[64 * o + j] == mpitest_pat(o, (size_t)j, 0x20);
    }
    for (int r = 0; r < n; r += 2) {
        MPI_CHECK_OK(rmc_get((char *)bases[r] + 64 * me, got, 64, r));
        ok &= memcmp(got, src, 64) == 0;
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(h));

    /* every part empty; then only the last rank has memory */
    MPI_CHECK_OK(rmc_region_alloc(0, bases, &h));
    ok = 1;
    for (int r = 0; r < n; r++) {
        ok &= bases[r] == NULL;
        ok &= rmc_put(src, (void *)(uintptr_t)0x1000, 1, r) == RMC_ERR_NOT_REGION;
    }
    MPI_CHECK_OK(rmc_barrier()); /* targets answer while in RMC (see above) */
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(rmc_region_count() == 1);
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_OK(rmc_region_alloc(me == n - 1 ? 100 : 0, bases, &h));
    for (int r = 0; r < n; r++)
        ok &= (bases[r] == NULL) == (r != n - 1);
    MPI_CHECK_ALL(ok);
    if (me == 0)
        MPI_CHECK_OK(rmc_put(src, (char *)bases[n - 1] + 36, 64, n - 1));
    else
        MPI_CHECK_OK(rmc_put(src, bases[n - 1], 0, n - 1)); /* keep the checks in step */
    MPI_CHECK_OK(rmc_barrier());
    if (me == n - 1)
        ok = ((unsigned char *)bases[me])[36] == mpitest_pat(0, 0, 0x20) &&
             ((unsigned char *)bases[me])[99] == mpitest_pat(0, 63, 0x20) &&
             ((unsigned char *)bases[me])[35] == 0;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_ALL(rmc_region_count() == 0);
    free(bases);
}

/* Many regions alive at once: different sizes per rank and per region, some zero; each rank fills
 * its successor's part of every region; then regions are freed in an interleaved order and the
 * survivors checked after each phase (the translation cache must keep finding them, and must stop
 * finding freed ones). */
static size_t many_size(int i, int r)
{
    if ((i + r) % 11 == 0)
        return 0;
    return 1 + ((size_t)i * 131 + (size_t)r * 57) % 3000;
}

static int check_alive(void ***bases, const int *alive, int nreg, size_t maxsz, unsigned char *buf)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int ok = 1;
    for (int i = 0; i < nreg; i++) {
        size_t sn = many_size(i, next), sm = many_size(i, me);
        if (!alive[i]) {
            /* freed: its former addresses are no region any more (nothing was allocated since) */
            if (sn)
                ok &= rmc_get(bases[i][next], buf, 1, next) == RMC_ERR_NOT_REGION;
            continue;
        }
        /* my part holds what my predecessor wrote */
        const unsigned char *own = bases[i][me];
        for (size_t j = 0; j < sm; j++)
            ok &= own[j] == mpitest_pat(prev, j, (unsigned)i);
        if (sn) {
            memset(buf, 0, maxsz);
            ok &= rmc_get(bases[i][next], buf, sn, next) == RMC_OK;
            for (size_t j = 0; j < sn; j++)
                ok &= buf[j] == mpitest_pat(me, j, (unsigned)i);
            ok &= rmc_get(bases[i][next], buf, sn + 1, next) == RMC_ERR_BOUNDS;
        } else {
            ok &= bases[i][next] == NULL;
            ok &= rmc_get(bases[i][next], buf, 1, next) == RMC_ERR_NOT_REGION;
        }
    }
    if (!ok)
        fprintf(stderr, "[rank %d] region contents or lookups wrong\n", me);
    return ok;
}

/* Lookups of freed addresses on peers may be answered by the peer (dynamic registration fallback):
 * everyone stays inside RMC (rmc_barrier) until all are answered, then the verdict is agreed. */
#define ALIVE_OK(call)                                                                             \
    do {                                                                                           \
        int ok_ = (call);                                                                          \
        MPI_CHECK_OK(rmc_barrier());                                                               \
        MPI_CHECK_ALL(ok_);                                                                        \
    } while (0)

static void test_many_regions(void **state)
{
    (void)state;
    const int nreg = n <= 2 ? 200 : 16; /* 3-4 ranks oversubscribe the cores: collectives cost ms */
    int next = (me + 1) % n;
    void ***bases = malloc((size_t)nreg * sizeof(void **));
    rmc_region_h *h = malloc((size_t)nreg * sizeof(rmc_region_h));
    int *alive = malloc((size_t)nreg * sizeof(int));
    size_t maxsz = 3001;
    unsigned char *src = malloc(maxsz), *buf = malloc(maxsz + 1);
    for (int i = 0; i < nreg; i++) {
        bases[i] = malloc((size_t)n * sizeof(void *));
        MPI_CHECK_OK(rmc_region_alloc(many_size(i, me), bases[i], &h[i]));
        alive[i] = 1;
    }
    MPI_CHECK_ALL(rmc_region_count() == (size_t)nreg);
    int ok = 1;
    for (int i = 0; i < nreg; i++) {
        size_t sn = many_size(i, next);
        for (size_t j = 0; j < sn; j++)
            src[j] = mpitest_pat(me, j, (unsigned)i);
        if (sn)
            ok &= rmc_put(src, bases[i][next], sn, next) == RMC_OK;
        else
            ok &= bases[i][next] == NULL;
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    ALIVE_OK(check_alive(bases, alive, nreg, maxsz, buf));

    /* phase 1: every third region, from the middle outwards */
    for (int d = 0; d < nreg; d++) {
        int i = (d % 2) ? nreg / 2 + d / 2 + 1 : nreg / 2 - d / 2;
        if (i < 0 || i >= nreg || i % 3 != 0)
            continue;
        MPI_CHECK_OK(rmc_region_free(h[i]));
        alive[i] = 0;
    }
    int left = 0;
    for (int i = 0; i < nreg; i++)
        left += alive[i];
    MPI_CHECK_ALL(rmc_region_count() == (size_t)left);
    ALIVE_OK(check_alive(bases, alive, nreg, maxsz, buf));
    /* phase 2: the even survivors ascending, then the odd ones descending */
    for (int i = 0; i < nreg; i++)
        if (alive[i] && i % 2 == 0) {
            MPI_CHECK_OK(rmc_region_free(h[i]));
            alive[i] = 0;
        }
    ALIVE_OK(check_alive(bases, alive, nreg, maxsz, buf));
    for (int i = nreg - 1; i >= 0; i--)
        if (alive[i]) {
            MPI_CHECK_OK(rmc_region_free(h[i]));
            alive[i] = 0;
        }
    MPI_CHECK_ALL(rmc_region_count() == 0);
    ALIVE_OK(check_alive(bases, alive, nreg, maxsz, buf));
    for (int i = 0; i < nreg; i++)
        free(bases[i]);
    free(bases);
    free(h);
    free(alive);
    free(src);
    free(buf);
}

/* An allocation that fails on one rank fails on every rank and creates nothing anywhere. */
static void test_failed_alloc(void **state)
{
    (void)state;
    rmc_region_h keep;
    MPI_CHECK_OK(rmc_region_alloc(128, NULL, &keep));
    rmc_region_h h = (rmc_region_h)&h;
    size_t huge = SIZE_MAX - 4096; /* beyond any address space */
    rmc_status_t st = rmc_region_alloc(me == n - 1 ? huge : 64, NULL, &h);
    MPI_CHECK_ALL(st == RMC_ERR_NOMEM);
    MPI_CHECK_ALL(h == NULL);
    MPI_CHECK_ALL(rmc_region_count() == 1);
    /* more than this machine's memory, yet a plausible size: refused at once (not a hang) */
    size_t phys = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    h = (rmc_region_h)&h;
    st = rmc_region_alloc(me == 0 ? 2 * phys : 0, NULL, &h);
    MPI_CHECK_ALL(st == RMC_ERR_NOMEM);
    MPI_CHECK_ALL(h == NULL);
    MPI_CHECK_ALL(rmc_region_count() == 1);
    /* no handle to return it in: every rank refuses */
    MPI_CHECK_ALL(rmc_region_alloc(64, NULL, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_region_count() == 1);
    /* everything still works */
    void **bases = malloc((size_t)n * sizeof(void *));
    MPI_CHECK_OK(rmc_region_alloc(16, bases, &h));
    int t = (me + 1) % n;
    unsigned long long v = 0x1122334455667788ull + (unsigned long long)me, w = 0;
    MPI_CHECK_OK(rmc_put(&v, bases[t], 8, t));
    MPI_CHECK_OK(rmc_get(bases[t], &w, 8, t));
    MPI_CHECK_ALL(w == v);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(h));
    MPI_CHECK_OK(rmc_region_free(keep));
    MPI_CHECK_ALL(rmc_region_count() == 0);
    free(bases);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_and_fill),
        cmocka_unit_test(test_zero_size_parts),
        cmocka_unit_test(test_many_regions),
        cmocka_unit_test(test_failed_alloc),
    };
    return MPITEST_RUN("regions", tests, setup, mpitest_teardown_rmc);
}
