/* Location consistency and conflict tracking.
 *  - put then get (no fence) to the same target returns the new data: blocking put, nb put waited,
 *    nb put with implicit handle, overlapping puts in sequence, get_nb after put;
 *  - puts to one target from all ranks, completed by fence_all + barrier, fence(target) + MPI
 * barrier, or barrier alone, are visible to the target (loads) and to everyone (gets);
 *  - rmc_comm_stats shows the conflict tracking: a get flushes only the (region, target) pair with
 * an outstanding write; other regions and targets are not flushed; fence_all flushes exactly the
 * dirty pairs; node-local targets never flush;
 *  - staged puts (blocking puts completed locally, tracked per byte range): streams of puts to more
 * places than the tracker keeps ranges for, overlapping and adjacent puts, then gets of every place
 * and of the gaps between them, with and without a fence, read exactly what was last put. */
#include "mpitest.h"

#define SLOT 256 /* each origin owns one slot in every target's part */

static int me, n;
static void **ba, **bb; /* bases of regions A and B */
static rmc_region_h ra, rb;

static int setup(void **state)
{
    if (mpitest_setup_rmc(state))
        return -1;
    me = rmc_rank();
    n = rmc_nranks();
    ba = malloc((size_t)n * sizeof(void *));
    bb = malloc((size_t)n * sizeof(void *));
    if (!ba || !bb)
        return -1;
    if (rmc_region_alloc((size_t)n * SLOT, ba, &ra) != RMC_OK ||
        rmc_region_alloc((size_t)n * SLOT, bb, &rb) != RMC_OK)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    int bad = rmc_region_free(ra) != RMC_OK;
    bad |= rmc_region_free(rb) != RMC_OK;
    free(ba);
    free(bb);
    return mpitest_teardown_rmc(state) || bad ? -1 : 0;
}

/* My slot in `rank`'s part of region A / B. */
static char *slot_a(int rank)
{
    return (char *)ba[rank] + (size_t)me * SLOT;
}
static char *slot_b(int rank)
{
    return (char *)bb[rank] + (size_t)me * SLOT;
}

static void fill(unsigned char *p, size_t len, unsigned salt)
{
    for (size_t j = 0; j < len; j++)
        p[j] = mpitest_pat(me, j, salt);
}

/* ------------------------------------------------------------------ put then get --- */

/* Issues one write of kind `mode` of data[0..len) at offset off of my slot on t, updates the shadow
 * (what the slot must hold), then reads the whole slot back in some way and compares. */
static int write_then_read(int t, int mode, size_t off, size_t len, unsigned salt,
                           unsigned char *shadow)
{
    unsigned char data[SLOT], back[SLOT];
    fill(data, len, salt);
    char *dst = slot_a(t) + off;
    int ok = 1;
    rmc_request_h q = (rmc_request_h)&ok;
    switch (mode % 6) {
    case 0: /* blocking put, blocking get */
        ok &= rmc_put(data, dst, len, t) == RMC_OK;
        break;
    case 1: /* nb put waited, blocking get */
        ok &= rmc_put_nb(data, dst, len, t, &q) == RMC_OK;
        ok &= rmc_wait(&q) == RMC_OK && q == RMC_REQUEST_NULL;
        break;
    case 2: /* nb put, implicit handle, blocking get without any fence */
        ok &= rmc_put_nb(data, dst, len, t, NULL) == RMC_OK;
        break;
    case 3: /* three overlapping writes in a row (implicit, blocking, nb waited): last one wins */
        ok &= rmc_put_nb(data, dst, len, t, NULL) == RMC_OK;
        memcpy(shadow + off, data, len);
        fill(data, len, salt + 1000);
        ok &= rmc_put(data, dst + len / 3, len / 2 + 1, t) == RMC_OK;
        memcpy(shadow + off + len / 3, data, len / 2 + 1);
        fill(data, len, salt + 2000);
        ok &= rmc_put_nb(data + 1, dst + 1, 1, t, &q) == RMC_OK;
        ok &= rmc_wait(&q) == RMC_OK;
        memcpy(shadow + off + 1, data + 1, 1);
        len = 0; /* shadow already updated */
        break;
    case 4: /* nb put implicit, then nb get with request */
    case 5: /* nb put implicit, then nb get implicit completed by fence(t) */
        ok &= rmc_put_nb(data, dst, len, t, NULL) == RMC_OK;
        break;
    }
    if (len)
        memcpy(shadow + off, data, len);
    memset(back, 0xEE, sizeof(back));
    if (mode % 6 == 4) {
        ok &= rmc_get_nb(slot_a(t), back, SLOT, t, &q) == RMC_OK;
        ok &= rmc_wait(&q) == RMC_OK;
    } else if (mode % 6 == 5) {
        ok &= rmc_get_nb(slot_a(t), back, SLOT, t, NULL) == RMC_OK;
        ok &= rmc_fence(t) == RMC_OK;
    } else {
        ok &= rmc_get(slot_a(t), back, SLOT, t) == RMC_OK;
    }
    if (memcmp(back, shadow, SLOT) != 0) {
        fprintf(stderr, "[rank %d] mode %d: get after put to %d returned stale data\n", me,
                mode % 6, t);
        ok = 0;
    }
    return ok;
}

static void test_put_then_get(void **state)
{
    (void)state;
    const int iters = n <= 2 ? 60 : 12;
    /* targets: the next rank, and at 2 ranks also myself */
    int targets[2] = {(me + 1) % n, me};
    int ntargets = n <= 2 ? 2 : 1;
    unsigned char *shadow = calloc((size_t)n, SLOT); /* slot contents per target (zero-filled) */
    int ok = 1;
    for (int it = 0; it < iters; it++)
        for (int k = 0; k < ntargets; k++) {
            int t = targets[k];
            size_t off = (size_t)(it * 37) % (SLOT / 2), len = 1 + (size_t)(it * 53) % (SLOT / 2);
            ok &=
                write_then_read(t, it, off, len, (unsigned)(it * 2 + k), shadow + (size_t)t * SLOT);
        }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
    /* and the owners see the final contents, from every origin that wrote to them */
    unsigned char *all = malloc((size_t)n * (size_t)n * SLOT);
    MPI_Allgather(shadow, n * SLOT, MPI_BYTE, all, n * SLOT, MPI_BYTE, MPI_COMM_WORLD);
    for (int o = 0; o < n; o++) {
        int wrote = (o + 1) % n == me || (n <= 2 && o == me);
        if (wrote && memcmp((char *)ba[me] + (size_t)o * SLOT, all + ((size_t)o * n + me) * SLOT,
                            SLOT) != 0) {
            fprintf(stderr, "[rank %d] slot of origin %d wrong after barrier\n", me, o);
            ok = 0;
        }
    }
    MPI_CHECK_ALL(ok);
    free(all);
    free(shadow);
    MPI_CHECK_OK(rmc_barrier());
}

/* ------------------------------------------------------------------ all to one --- */

/* Every rank puts its slot into `root`'s part, completed as `how` says; then the root (loads) and
 * everyone (gets) see every slot. */
static void all_to_one(int root, int how, unsigned salt)
{
    unsigned char data[SLOT], got[SLOT];
    fill(data, SLOT, salt);
    int ok = 1;
    rmc_request_h q;
    switch (how) {
    case 0: /* blocking put; fence_all; barrier */
        ok &= rmc_put(data, slot_a(root), SLOT, root) == RMC_OK;
        ok &= rmc_fence_all() == RMC_OK;
        ok &= rmc_barrier() == RMC_OK;
        break;
    case 1: /* implicit nb put; fence_all; barrier */
        ok &= rmc_put_nb(data, slot_a(root), SLOT, root, NULL) == RMC_OK;
        ok &= rmc_fence_all() == RMC_OK;
        ok &= rmc_barrier() == RMC_OK;
        break;
    case 2: /* nb put waited; fence(root); a plain MPI barrier */
        ok &= rmc_put_nb(data, slot_a(root), SLOT, root, &q) == RMC_OK;
        ok &= rmc_wait(&q) == RMC_OK;
        ok &= rmc_fence(root) == RMC_OK;
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case 3: /* implicit nb put; the barrier alone completes it */
        ok &= rmc_put_nb(data, slot_a(root), SLOT, root, NULL) == RMC_OK;
        ok &= rmc_barrier() == RMC_OK;
        break;
    }
    if (me == root) {
        for (int o = 0; o < n; o++)
            for (size_t j = 0; j < SLOT; j++)
                ok &= ((unsigned char *)ba[me])[(size_t)o * SLOT + j] == mpitest_pat(o, j, salt);
    }
    for (int o = 0; o < n; o++) {
        memset(got, 0, SLOT);
        ok &= rmc_get((char *)ba[root] + (size_t)o * SLOT, got, SLOT, root) == RMC_OK;
        for (size_t j = 0; j < SLOT; j++)
            ok &= got[j] == mpitest_pat(o, j, salt);
    }
    if (!ok)
        fprintf(stderr, "[rank %d] all-to-one (root %d, way %d) not visible\n", me, root, how);
    MPI_CHECK_ALL(ok); /* also: everyone has read before the next round overwrites */
}

static void test_all_to_one(void **state)
{
    (void)state;
    int roots[2] = {0, n - 1};
    for (int k = 0; k < 2; k++)
        for (int how = 0; how < 4; how++)
            all_to_one(roots[k], how, (unsigned)(100 + 4 * k + how));
}

/* ----------------------------------------------------------- conflict tracking stats --- */

static rmc_comm_stats_t snap(void)
{
    rmc_comm_stats_t s;
    memset(&s, 0, sizeof(s));
    if (rmc_comm_stats(&s) != RMC_OK)
        s.flushes = ~0ull;
    return s;
}

#define EXPECT(c) MPITEST_EXPECT(ok, c)

/* Remote target t: a get whose request was waited leaves nothing to order (a later put or
 * accumulate to its range needs no flush: its data has arrived); one still outstanding, or an
 * implicit get beside it, still orders them. Contiguous and strided (two rows of 32 bytes). */
static int waited_gets(int t)
{
    int ok = 1;
    unsigned char v[128], w[128], x[64];
    int32_t one = 1;
    int stride[1] = {64}, count[2] = {32, 2};
    rmc_request_h q, q2;
    for (int strided = 0; strided < 2; strided++) {
        char *a = slot_a(t);
#define GET_NB(src, dst, req)                                                                      \
    (strided ? rmc_get_strided_nb(src, stride, dst, stride, count, 1, t, req)                      \
             : rmc_get_nb(src, dst, 64, t, req))
        fill(v, 128, (unsigned)(20 + strided));
        EXPECT(rmc_put(v, a, 128, t) == RMC_OK);
        EXPECT(rmc_fence_all() == RMC_OK);
        /* waited: the put after it does not flush, and the get saw the old data */
        rmc_comm_stats_t s0 = snap();
        memset(w, 0, sizeof w);
        EXPECT(GET_NB(a, w, &q) == RMC_OK && q != RMC_REQUEST_NULL);
        EXPECT(rmc_wait(&q) == RMC_OK);
        fill(x, 64, (unsigned)(30 + strided));
        EXPECT(rmc_put_nb(x, a, 64, t, NULL) == RMC_OK);
        EXPECT(rmc_acc(RMC_ACC_INT32, &one, x, a + 128, 64, t) == RMC_OK);
        EXPECT(snap().conflict_flushes == s0.conflict_flushes);
        EXPECT(strided ? memcmp(v, w, 32) == 0 && memcmp(v + 64, w + 64, 32) == 0
                       : memcmp(v, w, 64) == 0);
        EXPECT(rmc_fence_all() == RMC_OK);
        /* two outstanding, one waited: a put to the other's range still flushes */
        s0 = snap();
        EXPECT(GET_NB(a, w, &q) == RMC_OK && GET_NB(a + 128, v, &q2) == RMC_OK);
        EXPECT(rmc_wait(&q) == RMC_OK);
        EXPECT(rmc_put_nb(x, a + 128, 8, t, NULL) == RMC_OK);
        EXPECT(snap().conflict_flushes == s0.conflict_flushes + 1);
        EXPECT(rmc_wait(&q2) == RMC_OK); /* (completed by that flush) */
        EXPECT(rmc_fence_all() == RMC_OK);
        /* an implicit get beside a waited request still orders a put */
        s0 = snap();
        EXPECT(GET_NB(a + 128, v, NULL) == RMC_OK && GET_NB(a, w, &q) == RMC_OK);
        EXPECT(rmc_wait(&q) == RMC_OK);
        EXPECT(rmc_put_nb(x, a + 128, 8, t, NULL) == RMC_OK);
        EXPECT(snap().conflict_flushes == s0.conflict_flushes + 1);
        EXPECT(rmc_fence_all() == RMC_OK);
#undef GET_NB
    }
    if (!ok)
        fprintf(stderr, "[rank %d] waited gets from rank %d: wrong flushes or data\n", me, t);
    return ok;
}

/* Remote target t: with more ranks than the machine's processing units a blocking get and a
 * fetch-and-add wait for their requests with yields (no flush); otherwise the get completes
 * locally and the fetch-and-add flushes its pair. Both see the data. */
static int yielding_waits(int t)
{
    int ok = 1;
    rmc_topology_t top;
    EXPECT(rmc_topology(&top) == RMC_OK);
    int over = top.machine_ranks > top.hw_pus;
    unsigned char v[64], w[64];
    fill(v, 64, 40);
    EXPECT(rmc_put(v, slot_b(t), 64, t) == RMC_OK);
    EXPECT(rmc_fence_all() == RMC_OK);
    rmc_comm_stats_t s0 = snap(), s;
    memset(w, 0, sizeof w);
    EXPECT(rmc_get(slot_b(t), w, 64, t) == RMC_OK && memcmp(v, w, 64) == 0);
    s = snap();
    EXPECT(s.yielding_waits == s0.yielding_waits + (unsigned)over && s.flushes == s0.flushes);
    int64_t old = -1, word;
    memcpy(&word, v, sizeof word);
    EXPECT(rmc_amo_fetch_add_i64(slot_b(t), 5, &old, t) == RMC_OK && old == word);
    rmc_comm_stats_t s2 = snap();
    if (rmc_amo_mode() == RMC_AMO_MODE_MPI) /* (thread mode: an active message) */
        EXPECT(s2.yielding_waits == s.yielding_waits + (unsigned)over &&
               s2.flushes == s.flushes + (unsigned)!over);
    EXPECT(rmc_get(slot_b(t), &old, sizeof old, t) == RMC_OK && old == word + 5);
    EXPECT(rmc_fence_all() == RMC_OK);
    if (!ok)
        fprintf(stderr, "[rank %d] yielding waits (oversubscribed %d) to rank %d\n", me, over, t);
    return ok;
}

/* Remote target t (u: a second remote target, or -1). */
static int conflicts_remote(int t, int u)
{
    int ok = 1;
    unsigned char v[64], w[64];
    fill(v, 64, 7);
    EXPECT(rmc_fence_all() == RMC_OK);
    rmc_comm_stats_t s0 = snap(), s;

    /* an outstanding put to (A, t) ... */
    EXPECT(rmc_put_nb(v, slot_a(t), 64, t, NULL) == RMC_OK);
    s = snap();
    EXPECT(s.remote_ops == s0.remote_ops + 1 && s.local_ops == s0.local_ops);
    EXPECT(s.flushes == s0.flushes);
    /* ... does not flush a get from another region of the same target */
    EXPECT(rmc_get(slot_b(t), w, 64, t) == RMC_OK);
    s = snap();
    EXPECT(s.conflict_flushes == s0.conflict_flushes && s.flushes == s0.flushes);
    /* ... nor a get from the same region on another target */
    if (u >= 0) {
        EXPECT(rmc_get(slot_a(u), w, 64, u) == RMC_OK);
        s = snap();
        EXPECT(s.conflict_flushes == s0.conflict_flushes && s.flushes == s0.flushes);
    }
    /* a get from (A, t) flushes that pair once and sees the put */
    memset(w, 0, sizeof(w));
    EXPECT(rmc_get(slot_a(t), w, 64, t) == RMC_OK);
    EXPECT(memcmp(v, w, 64) == 0);
    s = snap();
    EXPECT(s.conflict_flushes == s0.conflict_flushes + 1 && s.flushes == s0.flushes + 1);
    /* the pair is clean now: another get does not flush */
    EXPECT(rmc_get(slot_a(t), w, 64, t) == RMC_OK);
    EXPECT(snap().flushes == s.flushes);
    /* and fence_all has nothing left to flush */
    EXPECT(rmc_fence_all() == RMC_OK);
    EXPECT(snap().flushes == s.flushes);

    /* fence_all flushes exactly the dirty pairs: (A,t), (B,t) and (A,u) */
    s0 = snap();
    fill(v, 64, 8);
    EXPECT(rmc_put_nb(v, slot_a(t), 64, t, NULL) == RMC_OK);
    EXPECT(rmc_put_nb(v, slot_b(t), 64, t, NULL) == RMC_OK);
    unsigned long long dirty = 2;
    if (u >= 0) {
        EXPECT(rmc_put_nb(v, slot_a(u), 64, u, NULL) == RMC_OK);
        dirty++;
    }
    EXPECT(snap().flushes == s0.flushes);
    EXPECT(rmc_fence_all() == RMC_OK);
    s = snap();
    EXPECT(s.flushes == s0.flushes + dirty && s.conflict_flushes == s0.conflict_flushes);
    EXPECT(rmc_fence_all() == RMC_OK);
    EXPECT(snap().flushes == s.flushes);

    /* fence(t) flushes only t's pairs */
    s0 = snap();
    fill(v, 64, 9);
    EXPECT(rmc_put_nb(v, slot_a(t), 64, t, NULL) == RMC_OK);
    EXPECT(rmc_put_nb(v, slot_b(t), 64, t, NULL) == RMC_OK);
    if (u >= 0)
        EXPECT(rmc_put_nb(v, slot_a(u), 64, u, NULL) == RMC_OK);
    EXPECT(rmc_fence(t) == RMC_OK);
    s = snap();
    EXPECT(s.flushes == s0.flushes + 2);
    EXPECT(rmc_fence_all() == RMC_OK);
    EXPECT(snap().flushes == s.flushes + (u >= 0 ? 1 : 0));

    /* a blocking put completes locally and stays outstanding for its range only (staged puts):
     * a get of a neighbouring range does not flush, a get of the same range flushes once and
     * sees the put (the put goes to a fresh range: a put repeating the last one's range is
     * completed at the target at once, see below) */
    EXPECT(rmc_put(v, slot_a(t), 64, t) == RMC_OK); /* the last put is now [0, 64) */
    EXPECT(rmc_fence_all() == RMC_OK);
    s0 = snap();
    fill(v, 64, 10);
    EXPECT(rmc_put(v, slot_a(t) + 128, 64, t) == RMC_OK);
    EXPECT(rmc_get(slot_a(t) + 192, w, 64, t) == RMC_OK);
    EXPECT(snap().conflict_flushes == s0.conflict_flushes);
    memset(w, 0, sizeof(w));
    EXPECT(rmc_get(slot_a(t) + 128, w, 64, t) == RMC_OK);
    EXPECT(memcmp(v, w, 64) == 0);
    s = snap();
    EXPECT(s.conflict_flushes == s0.conflict_flushes + 1);
    /* a put repeating the last put's range is completed at the target: the get after it needs
     * no conflict flush */
    s0 = snap();
    fill(v, 64, 13);
    EXPECT(rmc_put(v, slot_a(t) + 128, 64, t) == RMC_OK);
    memset(w, 0, sizeof(w));
    EXPECT(rmc_get(slot_a(t) + 128, w, 64, t) == RMC_OK);
    EXPECT(memcmp(v, w, 64) == 0);
    EXPECT(snap().conflict_flushes == s0.conflict_flushes);

    /* reads do not conflict with reads */
    s0 = snap();
    EXPECT(rmc_get_nb(slot_a(t), w, 64, t, NULL) == RMC_OK);
    EXPECT(rmc_get(slot_a(t), v, 64, t) == RMC_OK);
    EXPECT(snap().conflict_flushes == s0.conflict_flushes);
    EXPECT(rmc_fence_all() == RMC_OK);
    EXPECT(memcmp(v, w, 64) == 0);

    /* a waited nb put is complete locally only: the next get still orders behind it */
    s0 = snap();
    fill(v, 64, 11);
    rmc_request_h q;
    EXPECT(rmc_put_nb(v, slot_a(t), 64, t, &q) == RMC_OK);
    EXPECT(q != RMC_REQUEST_NULL);
    EXPECT(rmc_wait(&q) == RMC_OK);
    memset(w, 0, sizeof(w));
    EXPECT(rmc_get(slot_a(t), w, 64, t) == RMC_OK);
    EXPECT(memcmp(v, w, 64) == 0);
    EXPECT(snap().conflict_flushes == s0.conflict_flushes + 1);
    ok &= waited_gets(t);
    ok &= yielding_waits(t);
    return ok;
}

/* Node-local target: loads and stores, no request, no flush. */
static int conflicts_local(int t)
{
    int ok = 1;
    unsigned char v[64], w[64];
    fill(v, 64, 12);
    rmc_comm_stats_t s0 = snap(), s;
    rmc_request_h q = (rmc_request_h)&ok;
    EXPECT(rmc_put_nb(v, slot_a(t), 64, t, &q) == RMC_OK);
    EXPECT(q == RMC_REQUEST_NULL); /* completed at once */
    EXPECT(rmc_put_nb(v, slot_b(t), 64, t, NULL) == RMC_OK);
    memset(w, 0, sizeof(w));
    EXPECT(rmc_get(slot_a(t), w, 64, t) == RMC_OK);
    EXPECT(memcmp(v, w, 64) == 0);
    EXPECT(rmc_fence_all() == RMC_OK);
    s = snap();
    EXPECT(s.local_ops == s0.local_ops + 3 && s.remote_ops == s0.remote_ops);
    EXPECT(s.flushes == s0.flushes && s.conflict_flushes == s0.conflict_flushes);
    return ok;
}

static void test_conflict_stats(void **state)
{
    (void)state;
    /* first and second rank after me that are not on my node */
    int t = -1, u = -1;
    for (int k = 1; k < n; k++) {
        int r = (me + k) % n;
        if (rmc_same_node(r) == 0) {
            if (t < 0)
                t = r;
            else if (u < 0)
                u = r;
        }
    }
    int ok = t >= 0 ? conflicts_remote(t, u) : conflicts_local((me + 1) % n);
    /* node-local peers are always handled with loads/stores, whatever else exists */
    for (int k = 1; k < n; k++)
        if (rmc_same_node((me + k) % n) == 1)
            ok &= conflicts_local((me + k) % n);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
}

/* ------------------------------------------------------------------- staged puts --- */

/* Every target (remote and node-local alike), in my slot: 16 places of 8 bytes, 8 apart (more
 * places than write ranges are tracked per pair: they merge), put in changing orders, overlapping
 * and adjacent puts across places and gaps, then gets of each place and of every gap, and of the
 * whole slot; a shadow says what must be there. */
static void test_staged_puts(void **state)
{
    (void)state;
    enum { W = 8, GAP = 8, PLACES = SLOT / (W + GAP) };
    int ok = 1;
    for (int d = 1; d <= n; d++) {
        int t = (me + d) % n;
        char *dst = slot_a(t);
        unsigned char shadow[SLOT], got[SLOT], v[2 * W];
        memset(shadow, 0, sizeof shadow);
        ok &= rmc_put(shadow, dst, SLOT, t) == RMC_OK; /* a known start */
        for (int round = 0; round < 3; round++) {
            for (int k = 0; k < PLACES; k++) {
                int place = round == 1 ? PLACES - 1 - k : (k * 7) % PLACES;
                size_t off = (size_t)place * (W + GAP);
                for (int j = 0; j < W; j++)
                    v[j] = (unsigned char)(round * 50 + place + j + 1);
                ok &= rmc_put(v, dst + off, W, t) == RMC_OK;
                memcpy(shadow + off, v, W);
            }
            /* an overlapping put across two places and the gap between them, then adjacent ones */
            for (int j = 0; j < 2 * W; j++)
                v[j] = (unsigned char)(200 + round + j);
            ok &= rmc_put(v, dst + W + GAP - 4, 2 * W, t) == RMC_OK;
            memcpy(shadow + W + GAP - 4, v, 2 * W);
            ok &= rmc_put(v, dst + 5 * (W + GAP), W, t) == RMC_OK;
            ok &= rmc_put(v + W, dst + 5 * (W + GAP) + W, W, t) == RMC_OK;
            memcpy(shadow + 5 * (W + GAP), v, 2 * W);
            if (round == 2)
                ok &= rmc_fence(t) == RMC_OK;
            /* every place and every gap, one by one, then the whole slot */
            for (size_t off = 0; off < SLOT; off += W) {
                memset(got, 0xee, W);
                ok &= rmc_get(dst + off, got, W, t) == RMC_OK;
                ok &= memcmp(got, shadow + off, W) == 0;
            }
            memset(got, 0xee, sizeof got);
            ok &= rmc_get(dst, got, SLOT, t) == RMC_OK;
            ok &= memcmp(got, shadow, SLOT) == 0;
        }
        if (!ok)
            fprintf(stderr, "[rank %d] staged puts to rank %d read back wrong data\n", me, t);
        /* remote: with every place written and outstanding (more places than tracked ranges), a
         * get of any one place must flush the pair; a get from another region must not */
        for (int k = 0; rmc_same_node(t) == 0 && k < PLACES; k++) {
            ok &= rmc_fence_all() == RMC_OK;
            for (int j = 0; j < PLACES; j++) {
                size_t off = (size_t)((j * 5) % PLACES) * (W + GAP);
                ok &= rmc_put(shadow + off, dst + off, W, t) == RMC_OK;
            }
            rmc_comm_stats_t a, b;
            ok &= rmc_comm_stats(&a) == RMC_OK;
            ok &= rmc_get(slot_b(t), got, W, t) == RMC_OK;
            ok &= rmc_comm_stats(&b) == RMC_OK && b.conflict_flushes == a.conflict_flushes;
            ok &= rmc_get(dst + (size_t)k * (W + GAP), got, W, t) == RMC_OK;
            ok &= rmc_comm_stats(&b) == RMC_OK && b.conflict_flushes == a.conflict_flushes + 1;
            ok &= memcmp(got, shadow + (size_t)k * (W + GAP), W) == 0;
            if (!ok) {
                fprintf(stderr, "[rank %d] place %d of rank %d: no conflict flush\n", me, k, t);
                break;
            }
        }
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(ok);
}

MPITEST_MAIN("consistency", setup, teardown, test_put_then_get, test_all_to_one,
             test_conflict_stats, test_staged_puts)
