/* Contiguous blocking put/get: ring and all-to-all for every size class 1 B .. 8 MiB (powers of two
 * and odd sizes), at unaligned local and remote addresses, verified byte for byte, with guard bytes
 * around every destination checked untouched. Small sizes also at every (local, remote) offset
 * pair 0..7 x 0..7. Every size class is moved in one round (its own lane), so the number of
 * collectives stays small. */
#include "mpitest.h"

#define MAXSIZE ((size_t)8 << 20)
#define GUARD   0xA5
#define SHIFT   7919 /* each size class reads the pattern at a different phase */

/* Size classes: all of them at 2 ranks; at 3-4 ranks (oversubscribed: every collective and every
 * remote operation costs milliseconds) a subset that still spans 1 B .. 8 MiB with odd sizes. */
static size_t sizes[64];
static int nsizes;
static int me, n;
/* All size classes are moved in one round: size class i has a lane at lane[i] inside a slot, with
 * room for offsets and guard bytes; a slot holds every lane; each rank's part has n slots. */
static size_t lane[64];
static size_t slot;
static void **bases;
static rmc_region_h region;
static unsigned char **pats; /* pats[r]: rank r's pattern, long enough for every phase */
static unsigned char *src, *dst;

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static int setup(void **state)
{
    if (mpitest_setup_rmc(state))
        return -1;
    me = rmc_rank();
    n = rmc_nranks();
    nsizes = 0;
    if (n <= 2) {
        for (size_t s = 1; s <= MAXSIZE; s *= 2)
            sizes[nsizes++] = s;
        const size_t odd[] = {3, 7, 63, 65, 4097, 65537, ((size_t)1 << 20) + 13};
        for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
            sizes[nsizes++] = odd[i];
    } else {
        const size_t few[] = {1, 3, 8, 63, 65, 4096, 4097, 65537, ((size_t)1 << 20) + 13, MAXSIZE};
        for (size_t i = 0; i < sizeof(few) / sizeof(few[0]); i++)
            sizes[nsizes++] = few[i];
    }
    qsort(sizes, (size_t)nsizes, sizeof(size_t), cmp_size);
    slot = 0;
    for (int i = 0; i < nsizes; i++) {
        lane[i] = slot;
        slot += (sizes[i] + 16 + 63) & ~(size_t)63;
    }
    bases = malloc((size_t)n * sizeof(void *));
    size_t patlen = MAXSIZE + (size_t)nsizes * SHIFT + 64;
    pats = malloc((size_t)n * sizeof(*pats));
    src = malloc(slot + 16);
    dst = malloc(slot + 16);
    if (!bases || !pats || !src || !dst)
        return -1;
    for (int r = 0; r < n; r++) {
        pats[r] = malloc(patlen);
        if (!pats[r])
            return -1;
        for (size_t j = 0; j < patlen; j++)
            pats[r][j] = mpitest_pat(r, j, 0xC0);
    }
    /* n slots per rank: the all-to-all puts every origin's data into its own slot */
    if (rmc_region_alloc((size_t)n * slot, bases, &region) != RMC_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    int bad = rmc_region_free(region) != RMC_OK;
    for (int r = 0; r < n; r++)
        free(pats[r]);
    free(pats);
    free(bases);
    free(src);
    free(dst);
    return mpitest_teardown_rmc(state) || bad ? -1 : 0;
}

/* Data of origin `r` for size class i, and the offsets used: local lo(i), remote ro(i, origin),
 * both in 1..7 and covering all of 1..7 over the size classes. */
static const unsigned char *data(int r, int i)
{
    return pats[r] + (size_t)i * SHIFT;
}
static size_t lo_off(int i)
{
    return 1 + (size_t)i % 7;
}
static size_t ro_off(int i, int origin)
{
    return 1 + ((size_t)i * 3 + 2 + (size_t)origin) % 7;
}

/* Address of size class i's lane (plus the origin's remote offset) in slot k of `rank`'s part. */
static char *at(int rank, int k, int i, int origin)
{
    return (char *)bases[rank] + (size_t)k * slot + lane[i] + ro_off(i, origin);
}

/* [p, p+s) equals want, and the bytes just before and after are still GUARD. */
static int check_range(const unsigned char *p, const unsigned char *want, size_t s)
{
    return p[-1] == GUARD && p[s] == GUARD && memcmp(p, want, s) == 0;
}

/* Local source of size class i: origin me's data at an unaligned offset of its lane in src. */
static unsigned char *src_of(int i)
{
    return src + lane[i] + lo_off(i);
}

static void fill_src(void)
{
    for (int i = 0; i < nsizes; i++)
        memcpy(src_of(i), data(me, i), sizes[i]);
}

/* Local destination of size class i (lane guarded), local offset shifted by `k`. */
static unsigned char *dst_of(int i, int k)
{
    return dst + lane[i] + 1 + ((size_t)i + (size_t)k) % 7;
}

static void test_ring_put(void **state)
{
    (void)state;
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    memset(bases[me], GUARD, slot);
    fill_src();
    MPI_CHECK_OK(rmc_barrier());
    for (int i = 0; i < nsizes; i++)
        MPI_CHECK_OK(rmc_put(src_of(i), at(next, 0, i, me), sizes[i], next));
    /* the source is the caller's again at once: scribbling on it changes nothing remote */
    memset(src, 0, slot);
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1;
    for (int i = 0; i < nsizes; i++)
        if (!check_range((unsigned char *)at(me, 0, i, prev), data(prev, i), sizes[i])) {
            fprintf(stderr, "[rank %d] ring put of %zu bytes from %d wrong\n", me, sizes[i], prev);
            ok = 0;
        }
    MPI_CHECK_ALL(ok);
}

static void test_ring_get(void **state)
{
    (void)state;
    int next = (me + 1) % n;
    /* the owner stores its data with plain stores into slot 1; the neighbour gets it */
    memset((char *)bases[me] + slot, GUARD, slot);
    for (int i = 0; i < nsizes; i++)
        memcpy(at(me, 1, i, me), data(me, i), sizes[i]);
    memset(dst, GUARD, slot + 16);
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1;
    for (int i = 0; i < nsizes; i++) {
        unsigned char *d = dst_of(i, 0);
        MPI_CHECK_OK(rmc_get(at(next, 1, i, next), d, sizes[i], next));
        /* complete on return: checked before anything else happens */
        if (!check_range(d, data(next, i), sizes[i])) {
            fprintf(stderr, "[rank %d] ring get of %zu bytes from %d wrong\n", me, sizes[i], next);
            ok = 0;
        }
    }
    MPI_CHECK_ALL(ok); /* also keeps owners from rewriting before everyone has read */
}

/* Every rank puts into every rank's (itself included) slot [origin], concurrently; then every rank
 * gets slots of every rank back. */
static void test_alltoall(void **state)
{
    (void)state;
    memset(bases[me], GUARD, (size_t)n * slot);
    fill_src();
    MPI_CHECK_OK(rmc_barrier());
    for (int k = 0; k < n; k++) {
        int t = (me + k) % n; /* staggered: not everyone hammers rank 0 first */
        for (int i = 0; i < nsizes; i++)
            MPI_CHECK_OK(rmc_put(src_of(i), at(t, me, i, me), sizes[i], t));
    }
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1;
    for (int o = 0; o < n; o++)
        for (int i = 0; i < nsizes; i++)
            if (!check_range((unsigned char *)at(me, o, i, o), data(o, i), sizes[i])) {
                fprintf(stderr, "[rank %d] all-to-all put of %zu bytes from %d wrong\n", me,
                        sizes[i], o);
                ok = 0;
            }
    MPI_CHECK_ALL(ok);
    /* gets: slot o of rank t holds origin o's data; from every target, a different slot per
     * size class (all slots at 2 ranks) */
    for (int k = 0; k < n; k++) {
        int t = (me + n - k) % n;
        for (int q = 0; q < (n <= 2 ? n : 1); q++) {
            memset(dst, GUARD, slot + 16);
            for (int i = 0; i < nsizes; i++) {
                int o = (q + i + me) % n;
                unsigned char *d = dst_of(i, q + k);
                MPI_CHECK_OK(rmc_get(at(t, o, i, o), d, sizes[i], t));
                if (!check_range(d, data(o, i), sizes[i])) {
                    fprintf(stderr, "[rank %d] all-to-all get of %zu bytes (slot %d of %d) wrong\n",
                            me, sizes[i], o, t);
                    ok = 0;
                }
            }
        }
    }
    MPI_CHECK_ALL(ok);
}

/* Small sizes at every local offset 0..7 and remote offset 0..7 (at 3-4 ranks 8 of the 64
 * pairs, every offset still used on both sides): disjoint puts into the next rank, then gets. */
static void test_all_offsets(void **state)
{
    (void)state;
    const size_t small_all[] = {1,  2,  3,  5,  7,  8,  9,  15, 16,  17,
                                24, 31, 32, 33, 48, 63, 64, 65, 127, 129};
    const size_t small_few[] = {1, 7, 65};
    const size_t *small = n <= 2 ? small_all : small_few;
    size_t nsmall =
        n <= 2 ? sizeof(small_all) / sizeof(size_t) : sizeof(small_few) / sizeof(size_t);
    const size_t chunk = 256;
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    int npairs = 0, plo[64], pro[64];
    for (int lo = 0; lo < 8; lo++)
        for (int ro = 0; ro < 8; ro++)
            if (n <= 2 || ro == (lo * 3 + 1) % 8) {
                plo[npairs] = lo;
                pro[npairs] = ro;
                npairs++;
            }
    /* chunk c = (size index, pair) */
    size_t nchunks = nsmall * (size_t)npairs;
    assert_true(nchunks * chunk <= slot);
    memset(bases[me], GUARD, nchunks * chunk);
    MPI_CHECK_OK(rmc_barrier());
    for (size_t si = 0; si < nsmall; si++)
        for (int p = 0; p < npairs; p++) {
            size_t c = si * (size_t)npairs + (size_t)p;
            unsigned char *sp = src + c * chunk + 8 + (size_t)plo[p];
            memcpy(sp, pats[me] + c * 131, small[si]);
            MPI_CHECK_OK(
                rmc_put(sp, (char *)bases[next] + c * chunk + 8 + pro[p], small[si], next));
        }
    MPI_CHECK_OK(rmc_barrier());
    int ok = 1;
    for (size_t si = 0; si < nsmall; si++)
        for (int p = 0; p < npairs; p++) {
            size_t c = si * (size_t)npairs + (size_t)p;
            const unsigned char *got = (unsigned char *)bases[me] + c * chunk + 8 + pro[p];
            ok &= check_range(got, pats[prev] + c * 131, small[si]);
        }
    memset(dst, GUARD, nchunks * chunk);
    for (size_t si = 0; si < nsmall; si++)
        for (int p = 0; p < npairs; p++) {
            size_t c = si * (size_t)npairs + (size_t)p;
            unsigned char *d = dst + c * chunk + 8 + (7 - (size_t)plo[p]);
            MPI_CHECK_OK(rmc_get((char *)bases[next] + c * chunk + 8 + pro[p], d, small[si], next));
            ok &= check_range(d, pats[me] + c * 131, small[si]);
        }
    MPI_CHECK_ALL(ok);
}

MPITEST_MAIN("contig", setup, teardown, test_ring_put, test_ring_get, test_alltoall,
             test_all_offsets)
