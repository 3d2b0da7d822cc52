/* Collective regions: every rank's base and size, zero fill and alignment, zero-size parts,
 * many regions alive at once (different sizes per rank, freed in an interleaved order), failed
 * allocations agreed by every rank, regions on sub-communicators. */
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

/* A freed region's handle stays dead while new regions are made (malloc would hand its memory to
 * the next one): every call taking it gives RMC_ERR_HANDLE and the live regions are untouched. */
static void test_stale_handle(void **state)
{
    (void)state;
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h old, fresh[8];
    size_t before = rmc_region_count();
    MPI_CHECK_OK(rmc_region_alloc(64, bases, &old));
    MPI_CHECK_OK(rmc_region_free(old));
    for (int i = 0; i < 8; i++)
        MPI_CHECK_OK(rmc_region_alloc(64, bases, &fresh[i]));
    int ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= fresh[i] != old;
    void *b = NULL;
    size_t sz = 0;
    ok &= rmc_region_base(old, me, &b, &sz) == RMC_ERR_HANDLE;
    ok &= rmc_region_free(old) == RMC_ERR_HANDLE; /* on every rank: nothing collective starts */
    ok &= rmc_region_count() == before + 8;
    MPI_CHECK_ALL(ok);
    for (int i = 0; i < 8; i++)
        MPI_CHECK_OK(rmc_region_free(fresh[i]));
    MPI_CHECK_ALL(rmc_region_count() == before);
    free(bases);
}

/* rmc_region_free agrees before it frees: one rank's bad handle, or ranks naming different
 * regions, fail on every rank (they hung in the barrier or MPI_Win_free) and free nothing. */
static void test_free_disagree(void **state)
{
    (void)state;
    void **bases = malloc((size_t)n * sizeof(void *));
    rmc_region_h a, b;
    size_t before = rmc_region_count();
    MPI_CHECK_OK(rmc_region_alloc(64, bases, &a));
    MPI_CHECK_OK(rmc_region_alloc(64, bases, &b));
    int ok = 1;
    /* the last rank passes NULL */
    rmc_status_t st = rmc_region_free(me == n - 1 ? NULL : a);
    ok &= st == RMC_ERR_HANDLE;
    ok &= strstr(rmc_last_error(), "rmc_region_free") != NULL;
    ok &= strstr(rmc_last_error(), me == n - 1 ? "is not live" : "failed on another rank") != NULL;
    /* rank 0 names b, the others a */
    st = rmc_region_free(me == 0 ? b : a);
    ok &= st == RMC_ERR_ARG && strstr(rmc_last_error(), "different regions") != NULL;
    ok &= rmc_region_count() == before + 2;
    /* both still work */
    int t = (me + 1) % n;
    long v = 1000 + me, got = 0;
    ok &= rmc_put(&v, (char *)bases[t] + 8 * 0, sizeof v, t) == RMC_OK;
    ok &= rmc_fence(t) == RMC_OK;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    int from = (me + n - 1) % n;
    ok &= rmc_get((char *)bases[me], &got, sizeof got, me) == RMC_OK && got == 1000 + from;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_region_free(a));
    MPI_CHECK_OK(rmc_region_free(b));
    MPI_CHECK_ALL(rmc_region_count() == before);
    /* a stale handle freed again by one rank alone fails there at once (no collective) */
    MPI_CHECK_ALL(me != 0 || (rmc_region_free(a) == RMC_ERR_HANDLE &&
                              strstr(rmc_last_error(), "was freed already") != NULL));
    free(bases);
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

/* Regions on sub-communicators (rmc_region_alloc_comm): the odd and the even ranks each allocate
 * one (interleaved with world regions), bases are indexed by RMC rank (NULL outside the group),
 * members put / get / accumulate / fetch-and-add around a ring of the group (window ranks differ
 * from RMC ranks: RMC rank 3 is rank 1 of the odd group), freeing is collective over the members
 * only, and bad input is refused. */
static void test_subgroups(void **state)
{
    (void)state;
    MPI_CHECK_ALL(rmc_region_alloc_comm(MPI_COMM_NULL, 64, NULL, &(rmc_region_h){0}) ==
                  RMC_ERR_ARG);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    int hn, hme;
    MPI_Comm_size(half, &hn);
    MPI_Comm_rank(half, &hme);
    void **wb = malloc((size_t)n * sizeof(void *)), **sb = malloc((size_t)n * sizeof(void *));
    for (int r = 0; r < n; r++)
        sb[r] = (void *)&sb; /* must be overwritten */
    rmc_region_h w1, s, w2;
    MPI_CHECK_OK(rmc_region_alloc(64, wb, &w1));
    size_t mysize = 256 + 64 * (size_t)me;
    MPI_CHECK_OK(rmc_region_alloc_comm(half, mysize, sb, &s));
    MPI_CHECK_OK(rmc_region_alloc(64, NULL, &w2));
    MPI_CHECK_ALL(rmc_region_count() == 3);
    /* bad input on a group: refused by every member, nothing created */
    MPI_CHECK_ALL(rmc_region_alloc_comm(half, 64, NULL, NULL) == RMC_ERR_ARG);
    rmc_region_h bad = (rmc_region_h)&bad;
    rmc_status_t sbad =
        rmc_region_alloc_comm(half, hme == hn - 1 ? SIZE_MAX - 4096 : 64, NULL, &bad);
    MPI_CHECK_ALL(sbad == RMC_ERR_NOMEM && bad == NULL);
    MPI_CHECK_ALL(rmc_region_count() == 3);
    int ok = 1;
    for (int r = 0; r < n; r++) {
        void *b;
        size_t sz = 1;
        ok &= rmc_region_base(s, r, &b, &sz) == RMC_OK && b == sb[r];
        if (r % 2 == me % 2)
            ok &= sb[r] != NULL && sz == 256 + 64 * (size_t)r && ((uintptr_t)sb[r] & 63) == 0;
        else
            ok &= sb[r] == NULL && sz == 0;
    }
    MPI_CHECK_ALL(ok);
    /* ring inside the group: next member in RMC ranks */
    int right = me + 2 < n ? me + 2 : me % 2, left = me - 2 >= 0 ? me - 2 : me % 2 + 2 * (hn - 1);
    uint64_t v[8], got[8];
    for (int i = 0; i < 8; i++)
        v[i] = ((uint64_t)me << 32) | (uint64_t)i;
    rmc_status_t st = rmc_put(v, sb[right], sizeof v, right);
    if (st == RMC_OK)
        st = rmc_get(sb[right], got, sizeof got, right);
    ok = st == RMC_OK && memcmp(v, got, sizeof v) == 0;
    int64_t one = 1, f = -1;
    if (st == RMC_OK)
        st = rmc_acc(RMC_ACC_INT64, NULL, &one, (int64_t *)sb[right] + 8, sizeof one, right);
    if (st == RMC_OK)
        st = rmc_amo_fetch_add_i64((int64_t *)sb[right] + 9, 1, &f, right);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(st);
    uint64_t *mine = sb[me];
    for (int i = 0; i < 8; i++)
        ok &= mine[i] == (((uint64_t)left << 32) | (uint64_t)i);
    /* one accumulate and one fetch-and-add from the left member (or from myself when alone) */
    ok &= mine[8] == 1 && mine[9] == 1 && f == 0;
    MPI_CHECK_ALL(ok);
    /* my group's part is in no region of a rank of the other group (the put asks that rank by an
     * active message whether the address is registered memory: rmc_barrier serves such requests
     * while it waits, a plain MPI collective would not) */
    uint64_t x = 0;
    int other = me % 2 ? me - 1 : (me + 1 < n ? me + 1 : me - 1); /* of the other parity */
    rmc_status_t sx = n > 1 ? rmc_put(&x, sb[me], sizeof x, other) : RMC_ERR_NOT_REGION;
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(sx == RMC_ERR_NOT_REGION);
    /* free the world regions around it, then the group's, in a different order */
    MPI_CHECK_OK(rmc_region_free(w1));
    MPI_CHECK_OK(rmc_region_free(s)); /* collective over the half only */
    MPI_CHECK_OK(rmc_region_free(w2));
    MPI_CHECK_ALL(rmc_region_count() == 0);
    /* a group spanning every rank is an ordinary region */
    MPI_CHECK_OK(rmc_region_alloc_comm(MPI_COMM_WORLD, 64, wb, &w1));
    int t = (me + 1) % n;
    uint64_t y = 42 + (uint64_t)me, z = 0;
    MPI_CHECK_OK(rmc_put(&y, wb[t], sizeof y, t));
    MPI_CHECK_OK(rmc_get(wb[t], &z, sizeof z, t));
    MPI_CHECK_ALL(z == y);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_region_free(w1));
    /* left for rmc_finalize: a group region and a world region created after it */
    MPI_CHECK_OK(rmc_region_alloc_comm(half, 128, NULL, &s));
    MPI_CHECK_OK(rmc_region_alloc(128, NULL, &w2));
    MPI_Comm_free(&half);
    free(wb);
    free(sb);
}

/* test_subgroups last: it leaves regions to rmc_finalize */
MPITEST_MAIN("regions", setup, mpitest_teardown_rmc, test_base_and_fill, test_zero_size_parts,
             test_stale_handle, test_free_disagree, test_many_regions, test_failed_alloc,
             test_subgroups)
