/* The hash map: insert / find / erase / update with every promise, exact contents after all-rank
 * concurrent inserts, erases, updates and finds of overlapping keys in a small table (long probe
 * sequences, tombstones), costs in remote operations per promise (rmc_op_counts), finds of absent
 * keys stopping at the first free bucket, variable-length keys and values, full tables and resize,
 * non-blocking and batched forms, local iteration, and bad input. Runs in both AMO and node modes,
 * and with the progress thread (tests/mpi/Makefile.inc). */
#include "cttest.h"

static const rmc_type_t *i64 = &rmc_type_i64;

static rmc_status_t add_arg(void *value, void *arg)
{
    *(int64_t *)value += *(const int64_t *)arg;
    return RMC_OK;
}

/* A string value of at most 8 bytes that serializes what fits and returns its whole length. */
static size_t ser8(const void *o, void *buf, size_t cap)
{
    size_t n = strlen(o);
    memcpy(buf, o, n < cap ? n : cap);
    return n;
}
static rmc_status_t des8(const void *buf, size_t len, void *o)
{
    memcpy(o, buf, len);
    ((char *)o)[len] = 0;
    return RMC_OK;
}
static rmc_status_t grow(void *value, void *arg)
{
    (void)arg;
    strcpy(value, "longer than eight");
    return RMC_OK;
}

static rmc_status_t refuse(void *value, void *arg)
{
    (void)value;
    (void)arg;
    return RMC_ERR_RETRY;
}

/* Every rank inserts its keys; everyone finds everyone's (fully atomic and find-only), absent keys
 * are absent; replace, update, erase, tombstone reuse; the count follows. */
static void test_basic(void **s)
{
    (void)s;
    rmc_hashmap_h h;
    const int64_t K = np > 2 ? 15 : 60; /* more ranks than cores: every remote wait costs */
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(4 * K * np), i64, i64, &h));
    MPI_CHECK_ALL(rmc_hashmap_capacity(h) >= (size_t)(4 * K * np));
    int ok = 1;
    for (int64_t i = 0; i < K; i++) {
        int64_t k = me * 1000 + i, v = k * 3;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int r = 0; r < np; r++)
        for (int64_t i = 0; i < K; i++) {
            int64_t k = r * 1000 + i, v = -1, w = -1;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, 0) == RMC_OK && v == k * 3);
            MPITEST_EXPECT(ok,
                           rmc_hashmap_find(h, &k, &w, RMC_PROMISE_FIND) == RMC_OK && w == k * 3);
            k += 500; /* absent */
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, 0) == RMC_ERR_NOT_FOUND &&
                                   v == k * 3 - 1500);
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_ERR_NOT_FOUND);
        }
    size_t n = 0;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)(K * np));
    /* the next rank's keys: replace the even ones, add to the odd ones, erase every third */
    int nx = (me + 1) % np;
    for (int64_t i = 0; i < K; i++) {
        int64_t k = nx * 1000 + i, v = -k, one = 1;
        if (i % 2 == 0)
            MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_OK);
        else
            MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, add_arg, &one, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int64_t i = 0; i < K; i += 3) {
        int64_t k = nx * 1000 + i;
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, 0) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, 0) == RMC_ERR_NOT_FOUND);
        int64_t one = 1;
        MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, add_arg, &one, 0) == RMC_ERR_NOT_FOUND);
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int r = 0; r < np; r++)
        for (int64_t i = 0; i < K; i++) {
            int64_t k = r * 1000 + i, v = 0, want = i % 2 == 0 ? -k : k * 3 + 1;
            rmc_status_t st = rmc_hashmap_find(h, &k, &v, r % 2 ? RMC_PROMISE_FIND : 0);
            if (i % 3 == 0)
                MPITEST_EXPECT(ok, st == RMC_ERR_NOT_FOUND);
            else
                MPITEST_EXPECT(ok, st == RMC_OK && v == want);
        }
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)((K - (K + 2) / 3) * np));
    /* an update whose function refuses changes nothing */
    int64_t k1 = me * 1000 + 1, v1 = 0;
    MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k1, refuse, NULL, 0) == RMC_ERR_RETRY);
    MPI_CHECK_OK(rmc_barrier());
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k1, &v1, 0) == RMC_OK && v1 == k1 * 3 + 1);
    MPI_CHECK_OK(rmc_barrier());
    /* the erased keys come back into tombstones (insert-only phase) */
    for (int64_t i = 0; i < K; i += 3) {
        int64_t k = me * 1000 + i, v = 7;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, RMC_PROMISE_INSERT) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)(K * np));
    for (int64_t i = 0; i < K; i += 3) {
        int64_t k = nx * 1000 + i, v = 0;
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, 0) == RMC_OK && v == 7);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* All ranks at once on one small table (up to 3/4 full: long probe sequences): inserts of the same
 * keys (exactly one entry each), updates summing exactly, then concurrent erases of some keys,
 * inserts of new ones into the tombstones' sequences and finds of untouched ones, with exact final
 * contents. */
static void test_contention(void **s)
{
    (void)s;
    const int64_t K = np > 2 ? 24 : 64;
    rmc_hashmap_h h;
    /* K keys, then K/2 more while K/2 are erased: the erased ones' buckets stay tombstones while
     * erases may run (RMC_PROMISE_ANY), so 3K/2 buckets fill */
    MPI_CHECK_OK(rmc_hashmap_create((size_t)((np > 2 ? 3 : 2) * K), i64, i64, &h));
    size_t cap = rmc_hashmap_capacity(h);
    int ok = 1;
    for (int round = 0; round < 2; round++) {
        /* round 0: each operation's own path; round 1 (thread AMO mode): odd ranks force RPC,
         * even ones RDMA, on the same keys at once */
        unsigned P = round && rmc_amo_mode() == RMC_AMO_MODE_THREAD
                         ? (me % 2 ? RMC_HASHMAP_RPC : RMC_HASHMAP_RDMA)
                         : 0;
        for (int64_t j = 0; j < K; j++) {
            int64_t k = (j * 7 + me * 3) % K, zero = 0; /* every rank, every key, its own order */
            MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &zero, P) == RMC_OK);
        }
        MPI_CHECK_OK(rmc_barrier());
        size_t n = 0;
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        MPI_CHECK_ALL(n == (size_t)K);
        for (int64_t j = 0; j < K; j++) {
            int64_t k = (j * 5 + me) % K, add = me + 1;
            MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, add_arg, &add, 0) == RMC_OK);
            int64_t v;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, P) == RMC_OK && v >= 1);
        }
        MPI_CHECK_OK(rmc_barrier());
        int64_t sum = (int64_t)np * (np + 1) / 2;
        for (int64_t k = 0; k < K; k++) {
            int64_t v = -1;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK && v == sum);
        }
        MPI_CHECK_OK(rmc_barrier());
        /* rank r erases the keys k % np == r (k < K/2); every rank inserts keys K + j with
         * j % np == me; finds of the keys >= K/2 see them all along */
        for (int64_t j = 0; j < K / 2; j++) {
            if (j % np == me) {
                MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &j, P) == RMC_OK);
                int64_t k = K + j, v = k;
                MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, P) == RMC_OK);
            }
            int64_t f = K / 2 + (j * 3 + me) % (K / 2), v;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &f, &v, P) == RMC_OK && v == sum);
        }
        MPI_CHECK_OK(rmc_barrier());
        for (int64_t k = 0; k < 3 * K / 2; k++) {
            int64_t v = -1;
            rmc_status_t st = rmc_hashmap_find(h, &k, &v, P);
            if (k < K / 2)
                MPITEST_EXPECT(ok, st == RMC_ERR_NOT_FOUND);
            else if (k < K)
                MPITEST_EXPECT(ok, st == RMC_OK && v == sum);
            else
                MPITEST_EXPECT(ok, st == RMC_OK && v == k);
        }
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        MPI_CHECK_ALL(n == (size_t)K && ok);
        /* clear for the next round: the owner erases its keys alone, then a resize drops the
         * tombstones */
        for (int64_t k = K / 2; k < 3 * K / 2; k++)
            if (rmc_hashmap_owner(h, &k) == me)
                MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, RMC_PROMISE_LOCAL) == RMC_OK);
        MPI_CHECK_OK(rmc_barrier());
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        MPI_CHECK_ALL(n == 0 && ok);
        MPI_CHECK_OK(rmc_hashmap_resize(h, cap));
    }
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* Costs in remote operations, on a fresh table (the first key of a bucket sits at home): the
 * seed's Table 6.1 per promise for replace and erase; with self-verifying buckets an insert of a
 * new key is A + W (BCL's 2A + W: the compare-and-swap makes the bucket READY, the checksum tells
 * when the entry has arrived), a find one read per probe in every variant (BCL's 2A + R), an
 * update takes the value from the read that checked the bucket; a find of an absent key stops at
 * the first free bucket. */
static void test_costs(void **s)
{
    (void)s;
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)np << 12, i64, i64, &h));
    int ok = 1;
    /* a key another rank owns (the last rank's own at np == 1) */
    int64_t k = 0, v = 5, w;
    int target = (me + 1) % np;
    while (rmc_hashmap_owner(h, &k) != target)
        k++;
    k += (int64_t)me << 40; /* ranks' keys differ ... */
    while (rmc_hashmap_owner(h, &k) != target)
        k++; /* ... and stay with the target */
    struct {
        const char *what;
        unsigned long long a, r, w;
    } want[] = {{"insert", 1, 0, 1},
                {"find", 0, 1, 0},
                {"find-only", 0, 1, 0},
                {"replace", 3, 1, 1},
                {"update", 3, 1, 1},
                {"erase", 3, 1, 0},
                {"find erased (tombstone, then free)", 0, 2, 0},
                {"find absent", 0, 1, 0},
                {"find-only absent", 0, 1, 0}};
    int64_t one = 1;
    for (int c = 0; c < 9; c++) {
        rmc_op_counts_t oc;
        rmc_op_counts_enable(1);
        rmc_status_t st = RMC_OK;
        const unsigned R = RMC_HASHMAP_RDMA; /* the one-sided path (RPC: below) */
        switch (c) {
        case 0:
            st = rmc_hashmap_insert(h, &k, &v, R);
            break;
        case 1:
            st = rmc_hashmap_find(h, &k, &w, R);
            break;
        case 2:
            st = rmc_hashmap_find(h, &k, &w, RMC_PROMISE_FIND | R);
            break;
        case 3:
            st = rmc_hashmap_insert(h, &k, &v, R);
            break;
        case 4:
            st = rmc_hashmap_update(h, &k, add_arg, &one, R);
            break;
        case 5:
            st = rmc_hashmap_erase(h, &k, R);
            break;
        case 6:
            st = rmc_hashmap_find(h, &k, &w, R) == RMC_ERR_NOT_FOUND ? RMC_OK : RMC_ERR_STATE;
            k += 1 << 20; /* never inserted: its home is free (a fresh, sparse table) */
            while (rmc_hashmap_owner(h, &k) != target)
                k++;
            break;
        default:
            st = rmc_hashmap_find(h, &k, &w, (c == 8 ? RMC_PROMISE_FIND : 0) | R) ==
                         RMC_ERR_NOT_FOUND
                     ? RMC_OK
                     : RMC_ERR_STATE;
        }
        rmc_op_counts(&oc);
        rmc_op_counts_enable(0);
        if (st != RMC_OK || oc.atomics != want[c].a || oc.reads != want[c].r ||
            oc.writes != want[c].w) {
            fprintf(stderr, "[rank %d] %s: %s, %lluA %lluR %lluW (want %lluA %lluR %lluW)\n", me,
                    want[c].what, rmc_status_string(st), oc.atomics, oc.reads, oc.writes, want[c].a,
                    want[c].r, want[c].w);
            ok = 0;
        }
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    /* RPC: one active message per operation, no one-sided operation; only in thread AMO mode */
    if (rmc_amo_mode() == RMC_AMO_MODE_THREAD) {
        rmc_progress_stats_t p0, p1;
        rmc_op_counts_t oc;
        const unsigned P = RMC_HASHMAP_RPC;
        rmc_progress_stats(&p0);
        rmc_op_counts_enable(1);
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, P) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &w, P) == RMC_OK && w == v);
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, P) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &w, P) == RMC_ERR_NOT_FOUND);
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, P) == RMC_ERR_NOT_FOUND);
        rmc_op_counts(&oc);
        rmc_op_counts_enable(0);
        rmc_progress_stats(&p1);
        MPITEST_EXPECT(ok, oc.atomics + oc.reads + oc.writes == 0);
        MPITEST_EXPECT(ok, p1.am_sent - p0.am_sent == 5);
        MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, add_arg, &one, P) == RMC_ERR_UNSUPPORTED);
        MPITEST_EXPECT(ok, rmc_hashmap_set_path(h, RMC_HASHMAP_RPC) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_OK); /* the map's default */
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &w, RMC_HASHMAP_RDMA) == RMC_OK && w == v);
        /* an update has no RPC: with RPC only the map's default it goes one-sided */
        MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, add_arg, &one, 0) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &w, 0) == RMC_OK && w == v + one);
        MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, add_arg, &one, P) == RMC_ERR_UNSUPPORTED);
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, 0) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_set_path(h, 0) == RMC_OK);
    } else {
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, RMC_HASHMAP_RPC) == RMC_ERR_UNSUPPORTED);
        MPITEST_EXPECT(ok, rmc_hashmap_set_path(h, RMC_HASHMAP_RPC) == RMC_ERR_UNSUPPORTED);
    }
    MPITEST_EXPECT(ok, rmc_hashmap_set_path(h, 7) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, RMC_HASHMAP_RPC | RMC_HASHMAP_RDMA) ==
                           RMC_ERR_ARG);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    /* LOCAL: the owner's own keys cost nothing remote */
    int64_t mk = 1;
    while (rmc_hashmap_owner(h, &mk) != me)
        mk++;
    rmc_op_counts_t oc;
    rmc_op_counts_enable(1);
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &mk, &v, RMC_PROMISE_LOCAL) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &mk, &w, RMC_PROMISE_LOCAL) == RMC_OK && w == v);
    MPITEST_EXPECT(ok, rmc_hashmap_update(h, &mk, add_arg, &one, RMC_PROMISE_LOCAL) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &mk, &w, RMC_PROMISE_LOCAL) == RMC_OK && w == v + 1);
    MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &mk, RMC_PROMISE_LOCAL) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &mk, &w, RMC_PROMISE_LOCAL) == RMC_ERR_NOT_FOUND);
    rmc_op_counts(&oc);
    rmc_op_counts_enable(0);
    MPITEST_EXPECT(ok, oc.atomics + oc.reads + oc.writes == 0);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
    /* 200 finds of absent keys on an empty table: one probe each */
    MPI_CHECK_OK(rmc_hashmap_create((size_t)np << 12, i64, i64, &h));
    rmc_op_counts_enable(1);
    for (int64_t i = 0; i < 200; i++) {
        int64_t x = ((int64_t)me << 50) + i * 7919 + 3;
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &x, &w, RMC_PROMISE_FIND) == RMC_ERR_NOT_FOUND);
    }
    rmc_op_counts(&oc);
    rmc_op_counts_enable(0);
    MPITEST_EXPECT(ok, oc.reads == 200 && oc.atomics == 0);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* Strings as keys and values: serialized in place; too long is refused with nothing changed. */
static void test_strings(void **s)
{
    (void)s;
    static const rmc_type_t str = RMC_TYPE_STRING(24);
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create(256, &str, &str, &h));
    int ok = 1;
    char kb[64], vb[64];
    for (int i = 0; i < 20; i++) {
        snprintf(kb, sizeof(kb), "key-%d-%d", me, i);
        snprintf(vb, sizeof(vb), "value %d of rank %d", i, me);
        char *kp = kb, *vp = vb;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &kp, &vp, 0) == RMC_OK);
    }
    /* too long: the message says key or value, and the limit (it said "an element of type
     * string serializes to 47 bytes") */
    char *longk = "a key that is far longer than twenty-four bytes", *shortv = "v", *got0 = NULL;
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &longk, &shortv, 0) == RMC_ERR_TOO_BIG);
    MPITEST_EXPECT(ok, strstr(rmc_last_error(), "rmc_hashmap_insert: the key serializes to 47 "
                                                "bytes, above the max_bytes 24 of the map's key "
                                                "type string") != NULL);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &longk, &got0, 0) == RMC_ERR_TOO_BIG && !got0);
    MPITEST_EXPECT(ok, strstr(rmc_last_error(), "rmc_hashmap_find: the key serializes to") != NULL);
    char *kp0 = "k", *longv = longk;
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &kp0, &longv, 0) == RMC_ERR_TOO_BIG);
    MPITEST_EXPECT(ok, strstr(rmc_last_error(), "rmc_hashmap_insert: the value serializes to 47 "
                                                "bytes, above the max_bytes 24 of the map's value "
                                                "type string") != NULL);
    if (!ok)
        fprintf(stderr, "[rank %d] last error: %s\n", me, rmc_last_error());
    {
        rmc_hashmap_buffer_h b;
        MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 8, 2, &b));
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &kp0, &longv) == RMC_ERR_TOO_BIG &&
                               strstr(rmc_last_error(), "rmc_hashmap_buffer_insert: the value "
                                                        "serializes to 47 bytes") != NULL);
        MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
        MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int r = 0; r < np; r++)
        for (int i = 0; i < 20; i++) {
            snprintf(kb, sizeof(kb), "key-%d-%d", r, i);
            snprintf(vb, sizeof(vb), "value %d of rank %d", i, r);
            char *kp = kb, *got = NULL, *got2 = NULL;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &kp, &got, 0) == RMC_OK && got &&
                                   strcmp(got, vb) == 0);
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &kp, &got2, RMC_PROMISE_FIND) == RMC_OK &&
                                   got2 && strcmp(got2, vb) == 0);
            rmc_type_release(&str, &got);
            rmc_type_release(&str, &got2);
        }
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &kp0, &longv, 0) == RMC_ERR_NOT_FOUND);
    size_t n;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)(20 * np) && ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* A table too small: inserts meet RMC_ERR_FULL (nothing changed); a resize keeps every entry and
 * makes room; a resize below the entries is refused on every rank with nothing changed. */
static void test_full_resize(void **s)
{
    (void)s;
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(4 * np), i64, i64, &h));
    int ok = 1, full = 0;
    int64_t inserted = 0;
    for (int64_t i = 0; i < 40 && !full; i++) {
        int64_t k = me * 100 + i, v = k + 1;
        rmc_status_t st = rmc_hashmap_insert(h, &k, &v, 0);
        if (st == RMC_ERR_FULL) { /* said why (it set no message) */
            full = 1;
            MPITEST_EXPECT(ok, strstr(rmc_last_error(), "rmc_hashmap_insert: rank ") &&
                                   strstr(rmc_last_error(), "has no bucket left for the key"));
        } else {
            MPITEST_EXPECT(ok, st == RMC_OK);
            inserted++;
        }
    }
    MPITEST_EXPECT(ok, full);
    MPI_CHECK_OK(rmc_barrier());
    size_t n;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    int64_t total = 0;
    MPI_Allreduce(&inserted, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_CHECK_ALL(n == (size_t)total && ok);
    MPI_CHECK_ALL(rmc_hashmap_resize(h, 1) == RMC_ERR_FULL);
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)total);
    MPI_CHECK_OK(rmc_hashmap_resize(h, (size_t)(200 * np)));
    MPI_CHECK_ALL(rmc_hashmap_capacity(h) >= (size_t)(200 * np));
    for (int64_t i = inserted; i < 40; i++) {
        int64_t k = me * 100 + i, v = k + 1;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int r = 0; r < np; r++)
        for (int64_t i = 0; i < 40; i++) {
            int64_t k = r * 100 + i, v = 0;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, 0) == RMC_OK && v == k + 1);
        }
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)(40 * np) && ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* FULL means full: a key is refused only when its owner's table has no free bucket (the probe
 * sequence reaches all of a table's buckets from any home). One rank inserts (RMC_PROMISE_LOCAL:
 * every rank its own keys) and counts the entries per owner: at each owner's first FULL its count
 * is the table's size. */
static void test_fill_every_bucket(void **s)
{
    (void)s;
    const int promises[] = {0, RMC_PROMISE_INSERT, RMC_PROMISE_LOCAL};
    for (int pi = 0; pi < 3; pi++) {
        int local = promises[pi] == RMC_PROMISE_LOCAL;
        rmc_hashmap_h h;
        MPI_CHECK_OK(rmc_hashmap_create((size_t)(16 * np), i64, i64, &h));
        size_t per = rmc_hashmap_capacity(h) / (size_t)np;
        int ok = 1;
        size_t cnt[64] = {0};
        int fullat[64] = {0};
        if (local || me == 0)
            for (int64_t i = 0; i < 100 * 16 * np; i++) {
                int64_t k = me * 10000000 + i, v = k;
                int o = rmc_hashmap_owner(h, &k);
                if ((local && o != me) || fullat[o])
                    continue;
                rmc_status_t st = rmc_hashmap_insert(h, &k, &v, promises[pi]);
                MPITEST_EXPECT(ok, st == RMC_OK || st == RMC_ERR_FULL);
                if (st == RMC_OK)
                    cnt[o]++;
                else if (st == RMC_ERR_FULL) {
                    fullat[o] = 1;
                    if (cnt[o] != per) {
                        fprintf(stderr, "[rank %d] promise %d: FULL on rank %d at %zu of %zu\n", me,
                                promises[pi], o, cnt[o], per);
                        ok = 0;
                    }
                }
            }
        MPI_CHECK_OK(rmc_barrier());
        size_t n = 0;
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        MPI_CHECK_ALL(ok && n == rmc_hashmap_capacity(h));
        MPI_CHECK_OK(rmc_hashmap_destroy(h));
    }
}

static int visit_sum(const void *key, const void *value, void *arg)
{
    int64_t *acc = arg, k, v;
    memcpy(&k, key, 8);
    memcpy(&v, value, 8);
    acc[0]++;
    acc[1] += v - 2 * k;
    return 0;
}

/* Non-blocking inserts and finds, the batched find (some keys absent), and local iteration over
 * what each rank owns. */
static void test_nb_batch_local(void **s)
{
    (void)s;
    enum { N = 64 };
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(4 * N * np), i64, i64, &h));
    int ok = 1;
    rmc_request_h rq[N];
    int64_t keys[N], vals[N];
    for (int i = 0; i < N; i++) {
        keys[i] = ((int64_t)me << 20) + i;
        vals[i] = 2 * keys[i];
        MPITEST_EXPECT(ok, rmc_hashmap_insert_nb(h, &keys[i], &vals[i], 0, &rq[i]) == RMC_OK);
        vals[i] = -1; /* copied by the call */
    }
    MPITEST_EXPECT(ok, rmc_wait_all(rq, N) == RMC_OK);
    MPI_CHECK_OK(rmc_barrier());
    int nx = (me + 1) % np;
    int64_t got[N];
    for (int i = 0; i < N; i++) {
        keys[i] = ((int64_t)nx << 20) + i;
        got[i] = 0;
        MPITEST_EXPECT(ok, rmc_hashmap_find_nb(h, &keys[i], &got[i], i % 2 ? RMC_PROMISE_FIND : 0,
                                               &rq[i]) == RMC_OK);
    }
    MPITEST_EXPECT(ok, rmc_wait_all(rq, N) == RMC_OK);
    for (int i = 0; i < N; i++)
        MPITEST_EXPECT(ok, got[i] == 2 * keys[i]);
    /* a find_nb of an absent key completes with RMC_ERR_NOT_FOUND */
    int64_t absent = ((int64_t)np << 20) + 5, x = 0;
    rmc_request_h r1;
    rmc_status_t st = rmc_hashmap_find_nb(h, &absent, &x, 0, &r1);
    if (st == RMC_OK)
        st = rmc_wait(&r1);
    MPITEST_EXPECT(ok, st == RMC_ERR_NOT_FOUND);
    /* batched: 3 * N keys, every third absent */
    int64_t bk[3 * N], bv[3 * N];
    rmc_status_t bs[3 * N];
    for (int i = 0; i < 3 * N; i++) {
        int r = i % np;
        bk[i] = i % 3 == 2 ? ((int64_t)(np + r) << 20) + i : ((int64_t)r << 20) + (i % N);
        bv[i] = 0;
    }
    for (int pass = 0; pass < 2; pass++) {
        MPITEST_EXPECT(ok, rmc_hashmap_find_n(h, 3 * N, bk, bv, bs, pass ? RMC_PROMISE_FIND : 0) ==
                               RMC_OK);
        for (int i = 0; i < 3 * N; i++) {
            if (i % 3 == 2)
                MPITEST_EXPECT(ok, bs[i] == RMC_ERR_NOT_FOUND);
            else
                MPITEST_EXPECT(ok, bs[i] == RMC_OK && bv[i] == 2 * bk[i]);
        }
    }
    /* every rank's entries, seen where they live */
    int64_t acc[2] = {0, 0}, all[2];
    int stopped = -1;
    MPI_CHECK_OK(rmc_barrier()); /* every rank's finds are served before MPI_Allreduce */
    MPITEST_EXPECT(ok, rmc_hashmap_local_foreach(h, visit_sum, acc, &stopped) == RMC_OK &&
                           stopped == 0);
    MPI_Allreduce(acc, all, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPITEST_EXPECT(ok, all[0] == N * np && all[1] == 0);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* A batched find whose probes meet a bucket this rank's own outstanding insert_nb holds (a
 * tombstone it reserved to reuse) waits in RMC's rounds, where that insert moves on: with 8 probes
 * of the key out of step with each other every pass "moved" (each re-read the bucket), no round
 * ran, and find_n hung (found by tests/mpi/test_fuzz_hashmap; with RMC_NODE_SIZE=1, MPI atomics).
 * One-sided path forced: the RPC path never leaves a bucket reserved between calls. */
static void test_find_n_behind_own_insert(void **s)
{
    (void)s;
    enum { NF = 8 };
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(16 * np), i64, i64, &h));
    int ok = 1, nx = (me + 1) % np;
    MPITEST_EXPECT(ok, rmc_hashmap_set_path(h, RMC_HASHMAP_RDMA) == RMC_OK);
    int64_t k = (int64_t)me << 20, v = 1, got[NF], ks[NF];
    while (rmc_hashmap_owner(h, &k) != nx)
        k++;
    /* a tombstone where the key lives */
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, 0) == RMC_OK);
    unsigned pr = RMC_PROMISE_INSERT | RMC_PROMISE_FIND; /* inserts reuse tombstones */
    v = 42;
    rmc_request_h rq = RMC_REQUEST_NULL;
    MPITEST_EXPECT(ok, rmc_hashmap_insert_nb(h, &k, &v, pr, &rq) == RMC_OK);
    rmc_status_t st[NF];
    for (int i = 0; i < NF; i++)
        ks[i] = k, got[i] = -1;
    MPITEST_EXPECT(ok, rmc_hashmap_find_n(h, NF, ks, got, st, pr) == RMC_OK);
    for (int i = 0; i < NF; i++) /* (not found: read before the insert took the tombstone) */
        MPITEST_EXPECT(ok, (st[i] == RMC_OK && got[i] == 42) || st[i] == RMC_ERR_NOT_FOUND);
    MPITEST_EXPECT(ok, rmc_wait(&rq) == RMC_OK);
    int64_t x = 0;
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &x, 0) == RMC_OK && x == 42);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* Non-blocking inserts and finds left untested are finished by rmc_hashmap_resize and
 * rmc_hashmap_destroy (which used to return with them still going: their later steps landed in the
 * old, freed tables): each request is complete at its first test afterwards, and the entries
 * inserted are in the resized map. One-sided path forced (multi-step operations). */
static void test_nb_across_collectives(void **s)
{
    (void)s;
    enum { N = 64 };
    for (int coll = 0; coll < 2; coll++) {
        rmc_hashmap_h h;
        MPI_CHECK_OK(rmc_hashmap_create((size_t)(8 * N * np), i64, i64, &h));
        int64_t k0 = ((int64_t)me << 20) + 1000, v0 = 5;
        MPI_CHECK_OK(rmc_hashmap_insert(h, &k0, &v0, 0));
        MPI_CHECK_OK(rmc_barrier());
        rmc_request_h rq[2 * N];
        int64_t keys[N], vals[N], got[N];
        for (int i = 0; i < 2 * N; i++)
            rq[i] = RMC_REQUEST_NULL, got[i % N] = 0;
        rmc_status_t st = RMC_OK;
        int64_t other = ((int64_t)((me + 1) % np) << 20) + 1000; /* a find's key stays valid */
        for (int i = 0; i < N && st == RMC_OK; i++) {
            keys[i] = ((int64_t)me << 20) + i, vals[i] = 3 * keys[i];
            st = rmc_hashmap_insert_nb(h, &keys[i], &vals[i], RMC_HASHMAP_RDMA, &rq[i]);
            if (st == RMC_OK)
                st = rmc_hashmap_find_nb(h, &other, &got[i], RMC_HASHMAP_RDMA, &rq[N + i]);
        }
        rmc_status_t c =
            coll ? rmc_hashmap_destroy(h) : rmc_hashmap_resize(h, (size_t)(16 * N * np));
        int ok = st == RMC_OK && c == RMC_OK;
        for (int i = 0; i < 2 * N; i++) {
            int done = 1;
            if (rq[i] && rmc_test(&rq[i], &done) != RMC_OK)
                ok = 0;
            ok &= done;
            if (!done)
                rmc_wait(&rq[i]);
        }
        for (int i = 0; i < N; i++)
            ok &= got[i] == 5;
        if (!coll) { /* the resized map holds every insert */
            size_t n = 0;
            ok &= rmc_hashmap_count(h, &n) == RMC_OK && n == (size_t)((N + 1) * np);
            for (int i = 0; i < N; i++) {
                int64_t v = 0;
                ok &= rmc_hashmap_find(h, &keys[i], &v, 0) == RMC_OK && v == 3 * keys[i];
            }
        }
        MPI_CHECK_ALL(ok);
        if (!coll)
            MPI_CHECK_OK(rmc_hashmap_destroy(h));
    }
}

/* HashMapBuffer: every rank inserts keys of every owner (some twice: the later value stays; some
 * from every rank: one value) through small queues (pushers meet full queues); after the flush
 * every key is in the map. A table too small: the flush reports RMC_ERR_FULL on every rank, with
 * the number of entries that did not fit. */
static void test_buffer(void **s)
{
    (void)s;
    const int64_t N = np > 2 ? 120 : 600;
    for (int small = 0; small < 2; small++) {
        rmc_hashmap_h h;
        rmc_hashmap_buffer_h b;
        int ok = 1;
        MPI_CHECK_OK(rmc_hashmap_create((size_t)(4 * (N + 50) * np), i64, i64, &h));
        MPI_CHECK_OK(rmc_hashmap_buffer_create(h, small ? 4 : 256, small ? 4 : 32, &b));
        for (int64_t i = 0; i < N; i++) {
            int64_t k = ((int64_t)me << 32) + i, v = i % 7 == 0 ? -1 : k + 5;
            MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &v) == RMC_OK);
            if (i % 7 == 0) { /* again, later: this value stays */
                int64_t k2 = ((int64_t)me << 32) + i / 2 * 2, v2 = k2 + 5;
                if (k2 == k)
                    MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k2, &v2) == RMC_OK);
            }
        }
        for (int64_t i = 0; i < 50; i++) { /* every rank inserts these */
            int64_t k = -1 - i, v = me;
            MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &v) == RMC_OK);
        }
        MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
        size_t n = 0;
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        MPI_CHECK_ALL(n == (size_t)(N * np + 50));
        for (int r = 0; r < np; r++)
            for (int64_t i = 0; i<N; i += np> 2 ? 7 : 1) {
                int64_t k = ((int64_t)r << 32) + i, v = 0, want = i % 7 == 0 && i % 2 ? -1 : k + 5;
                MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK &&
                                       v == want);
            }
        for (int64_t i = 0; i < 50; i++) {
            int64_t k = -1 - i, v = -1;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK && v >= 0 &&
                                   v < np);
        }
        /* a second phase through the same buffer */
        MPI_CHECK_OK(rmc_barrier());
        int64_t k = ((int64_t)me << 32) + N, v = 1;
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &v) == RMC_OK);
        MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        MPI_CHECK_ALL(ok && n == (size_t)(N * np + 50 + np));
        MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
        MPI_CHECK_ALL(rmc_hashmap_buffer_insert(b, &k, &v) == RMC_ERR_HANDLE);
        MPI_CHECK_OK(rmc_hashmap_destroy(h));
    }
    /* too small */
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(2 * np), i64, i64, &h));
    MPI_CHECK_ALL(rmc_hashmap_buffer_create(h, 2, 3, &b) == RMC_ERR_ARG);
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 8, 2, &b));
    int ok = 1;
    for (int64_t i = 0; i < 40; i++) {
        int64_t k = ((int64_t)me << 32) + i;
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &i) == RMC_OK);
    }
    MPI_CHECK_ALL(ok && rmc_hashmap_buffer_flush(b) == RMC_ERR_FULL);
    /* every rank is told how many did not fit (it used to be the owners only) */
    const char *m = strstr(rmc_last_error(), "no room for ");
    unsigned long long dropped = 0;
    size_t n = 0;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(m && sscanf(m + 12, "%llu", &dropped) == 1 && dropped + n == (size_t)(40 * np));
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* The buffer with other key and value layouts than int64: a 12-byte key with a 4-byte value
 * (bytes hashed and compared; the owners' inserts reuse the tombstones of erased keys) and strings
 * (the type's own hash and equality, serialized entries). Every key inserted is found with its
 * last value, and the count is exact. */
typedef struct {
    int32_t a, b, c;
} key12_t;
static void test_buffer_types(void **s)
{
    (void)s;
    static const rmc_type_t k12 = RMC_TYPE_FIXED("key12", sizeof(key12_t));
    static const rmc_type_t i32 = RMC_TYPE_FIXED("int32", sizeof(int32_t));
    static const rmc_type_t str = RMC_TYPE_STRING(24);
    const int N = 40;
    int ok = 1;
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(4 * N * np), &k12, &i32, &h));
    for (int i = 0; i < N; i += 2) { /* every other key first, then erased: tombstones */
        key12_t k = {me, i, -i};
        int32_t v = -7;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int i = 0; i < N; i += 2) {
        key12_t k = {me, i, -i};
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 64, 8, &b));
    for (int i = 0; i < N; i++) {
        key12_t k = {me, i, -i};
        int32_t v = 100 * me + i, w = v + 1;
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &v) == RMC_OK);
        if (i % 5 == 0) /* again: the later value stays */
            MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &w) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
    size_t n = 0;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPITEST_EXPECT(ok, n == (size_t)(N * np));
    for (int r = 0; r < np; r++)
        for (int i = 0; i < N; i++) {
            key12_t k = {r, i, -i};
            int32_t v = 0, want = 100 * r + i + (i % 5 == 0);
            MPITEST_EXPECT(ok,
                           rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK && v == want);
        }
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(4 * N * np), &str, &str, &h));
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 64, 8, &b));
    char kb[32], vb[32];
    for (int i = 0; i < N; i++) {
        snprintf(kb, sizeof(kb), "k%d.%d", me, i);
        snprintf(vb, sizeof(vb), "v%d", 100 * me + i);
        char *kp = kb, *vp = vb;
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &kp, &vp) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPITEST_EXPECT(ok, n == (size_t)(N * np));
    for (int r = 0; r < np; r++)
        for (int i = 0; i < N; i += 3) {
            snprintf(kb, sizeof(kb), "k%d.%d", r, i);
            snprintf(vb, sizeof(vb), "v%d", 100 * r + i);
            char *kp = kb, *got = NULL;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h, &kp, &got, 0) == RMC_OK && got &&
                                   strcmp(got, vb) == 0);
            rmc_type_release(&str, &got);
        }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* An int64 key with its own hash function: byte-copied, but not a plain map (the owners insert
 * buffered entries through the general path, not the plain fast one). */
static uint64_t hash_i64(const void *key)
{
    uint64_t k;
    memcpy(&k, key, 8);
    return (k + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
}
static const rmc_type_t i64h = {"int64 hashed", 8, 0, NULL, NULL, hash_i64, NULL, NULL};
/* Runs a buffer test on a plain int64 key and on i64h (the owners' two insert paths). */
static void both_keys(void (*test)(const rmc_type_t *kt))
{
    test(i64);
    test(&i64h);
}

/* A combining function that refuses stored odd values (the key's parity here) and adds otherwise.
 */
static rmc_status_t odd_refused(void *value, void *arg)
{
    int64_t v, in;
    memcpy(&v, value, 8);
    memcpy(&in, arg, 8);
    if (v % 2)
        return RMC_ERR_ARG;
    v += in;
    memcpy(value, &v, 8);
    return RMC_OK;
}

/* An owner's inserts fail (the combining function refuses odd keys) while the other ranks wait for
 * room in its small queue: it keeps taking their batches in (it stopped at the first failure and
 * the flush hung), every other entry is still combined, and the flush fails on every rank. Plain
 * and hashed keys (the owners' two insert paths). */
static void buffer_fail(const rmc_type_t *kt)
{
    const int64_t K = 400;
    int ok = 1;
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(4 * K), kt, i64, &h));
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 4, 4, &b));
    for (int64_t k = me; k < K; k += np)
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &k) == RMC_OK);
    MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
    MPI_CHECK_OK(rmc_hashmap_buffer_combine(b, odd_refused, 0));
    int64_t two = 2;
    if (me != 0) /* rank 0 goes straight into the flush */
        for (int64_t k = 0; k < K; k++)
            if (rmc_hashmap_owner(h, &k) == 0)
                MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &two) == RMC_OK);
    rmc_status_t st = rmc_hashmap_buffer_flush(b);
    MPITEST_EXPECT(ok, (st != RMC_OK) == (np > 1)); /* alone, rank 0 inserts nothing more */
    if (me == 0 && np > 1)
        MPITEST_EXPECT(ok, st == RMC_ERR_ARG &&
                               strstr(rmc_last_error(), "rmc_hashmap_buffer_flush") != NULL);
    MPI_CHECK_OK(rmc_barrier());
    for (int64_t k = 0; k < K; k++) {
        int64_t v = -1, want = k + (rmc_hashmap_owner(h, &k) == 0 && k % 2 == 0 ? 2 * (np - 1) : 0);
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK && v == want);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

static void test_buffer_fail(void **s)
{
    (void)s;
    both_keys(buffer_fail);
}

/* Find-only finds of plain maps (read bucket by bucket without an operation): 8- and 12-byte keys
 * past tombstones, absent keys (the output untouched), a bucket too large for that path (80 bytes:
 * the state machine), the RPC path forced in thread AMO mode, and its argument checks. */
typedef struct {
    int64_t w[8];
} val64_t;
static void test_find_only(void **s)
{
    (void)s;
    static const rmc_type_t k12 = RMC_TYPE_FIXED("key12", sizeof(key12_t));
    static const rmc_type_t v64 = RMC_TYPE_FIXED("val64", sizeof(val64_t));
    const int N = 64;
    int ok = 1;
    rmc_hashmap_h h8, h12, hbig;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(2 * N * np), i64, i64, &h8));
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(2 * N * np), &k12, i64, &h12));
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(2 * N * np), i64, &v64, &hbig));
    for (int i = 0; i < N; i++) { /* half of them erased again: tombstones on the sequences */
        int64_t k = (int64_t)me * 1000 + i, v = 3 * k + 1;
        key12_t k2 = {me, i, 7 * i};
        val64_t big;
        for (int j = 0; j < 8; j++)
            big.w[j] = k * 10 + j;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h8, &k, &v, 0) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h12, &k2, &v, 0) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_insert(hbig, &k, &big, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int i = 1; i < N; i += 2) {
        int64_t k = (int64_t)me * 1000 + i;
        key12_t k2 = {me, i, 7 * i};
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h8, &k, 0) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h12, &k2, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    const unsigned F = RMC_PROMISE_FIND;
    for (int r = 0; r < np; r++)
        for (int i = 0; i < N + 8; i++) { /* i >= N: never inserted */
            int64_t k = (int64_t)r * 1000 + i, v = -1, want = i % 2 || i >= N ? -1 : 3 * k + 1;
            key12_t k2 = {r, i, 7 * i};
            rmc_status_t wst = want == -1 ? RMC_ERR_NOT_FOUND : RMC_OK;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h8, &k, &v, F) == wst && v == want);
            v = -1;
            MPITEST_EXPECT(ok, rmc_hashmap_find(h12, &k2, &v, F) == wst && v == want);
            val64_t big = {{0}};
            rmc_status_t bst = rmc_hashmap_find(hbig, &k, &big, F);
            MPITEST_EXPECT(ok, i < N ? bst == RMC_OK && big.w[0] == k * 10 && big.w[7] == k * 10 + 7
                                     : bst == RMC_ERR_NOT_FOUND && big.w[0] == 0);
        }
    int64_t k = 5, v = 0;
    if (rmc_amo_mode() == RMC_AMO_MODE_THREAD) { /* forced RPC: the owner finds it */
        MPITEST_EXPECT(ok, rmc_hashmap_find(h8, &k, &v, F | RMC_HASHMAP_RPC) == RMC_ERR_NOT_FOUND);
        k = 1000 * (np - 1) + 2;
        MPITEST_EXPECT(ok, rmc_hashmap_find(h8, &k, &v, F | RMC_HASHMAP_RPC) == RMC_OK &&
                               v == 3 * k + 1);
    }
    MPITEST_EXPECT(ok, rmc_hashmap_find(h8, NULL, &v, F) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h8, &k, NULL, F) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, strstr(rmc_last_error(), "rmc_hashmap_find: NULL value") != NULL);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h8, &k, &v, F | 0x4000) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h8, &k, &v, F | RMC_HASHMAP_RDMA | RMC_HASHMAP_RPC) ==
                           RMC_ERR_ARG);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(hbig));
    MPI_CHECK_OK(rmc_hashmap_destroy(h12));
    MPI_CHECK_OK(rmc_hashmap_destroy(h8));
    MPITEST_EXPECT(ok, rmc_hashmap_find(h8, &k, &v, F) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(ok);
}

/* A combining buffer: owners add incoming values to stored ones; absent keys dropped
 * (only_present) or inserted (and then combined with the later ones). Plain and hashed keys. */
static void buffer_combine(const rmc_type_t *kt)
{
    const int64_t K = 100;
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    int ok = 1;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(8 * K), kt, i64, &h));
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 64, 8, &b));
    for (int64_t k = me; k < K; k += np) {
        int64_t zero = 0;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &zero, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    int64_t sum = (int64_t)np * (np + 1) / 2;
    for (int only = 1; only >= 0; only--) {
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_combine(b, add_arg, only) == RMC_OK);
        for (int64_t k = 0; k < 2 * K; k++) {
            int64_t v = me + 1;
            MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &v) == RMC_OK);
        }
        MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
        size_t n = 0;
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        MPI_CHECK_ALL(n == (size_t)(only ? K : 2 * K));
        for (int64_t k = 0; k < 2 * K; k += 3) {
            int64_t v = -1;
            rmc_status_t st = rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND);
            if (k < K)
                MPITEST_EXPECT(ok, st == RMC_OK && v == (only ? 1 : 2) * sum);
            else if (only)
                MPITEST_EXPECT(ok, st == RMC_ERR_NOT_FOUND);
            else
                MPITEST_EXPECT(ok, st == RMC_OK && v == sum);
        }
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
    }
    MPI_CHECK_ALL(rmc_hashmap_buffer_combine(NULL, add_arg, 0) == RMC_ERR_HANDLE);
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

static void test_buffer_combine(void **s)
{
    (void)s;
    both_keys(buffer_combine);
}

/* An owner-side filter (rmc_hashmap_buffer_admit): each owner lets an absent key in the second
 * time it arrives (its own table of keys seen), keys the map holds are replaced without asking it;
 * with a combining function the admitted key's later arrivals add up; with only_present the
 * filter is not asked. Keys [0, K) are in the map first, [K, 3K) are sent by every rank, [3K, 4K)
 * by rank 0 only (so dropped). Plain and hashed keys (the owners' two insert paths). */
typedef struct seen {
    unsigned char *bit; /* [6K] keys this owner has seen */
    long calls;
} seen_t;
static int admit_second(const void *key, void *value, void *arg)
{
    seen_t *f = arg;
    int64_t k, ten = 10;
    memcpy(&k, key, 8);
    f->calls++;
    int was = f->bit[k];
    f->bit[k] = 1;
    if (was) /* the value let in: rewritten */
        memcpy(value, &ten, 8);
    return was;
}
/* An insert phase of test_buffer_admit: keys [lo, hi) with value 1 from every rank, the owners
 * combining by add_arg (only_present as given); the filter's calls counted afresh. */
static void insert_ones(rmc_hashmap_buffer_h b, seen_t *f, int only, int64_t lo, int64_t hi,
                        int *ok)
{
    MPI_CHECK_OK(rmc_barrier());
    f->calls = 0;
    MPITEST_EXPECT(*ok, rmc_hashmap_buffer_combine(b, add_arg, only) == RMC_OK);
    for (int64_t k = lo; k < hi; k++) {
        int64_t one = 1;
        MPITEST_EXPECT(*ok, rmc_hashmap_buffer_insert(b, &k, &one) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
}

static void buffer_admit(const rmc_type_t *kt)
{
    const int64_t K = np > 2 ? 20 : 60;
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    int ok = 1;
    seen_t f = {calloc((size_t)(6 * K), 1), 0};
    MPI_CHECK_ALL(f.bit != NULL);
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(12 * K), kt, i64, &h));
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 64, 8, &b));
    for (int64_t k = me; k < K; k += np) {
        int64_t minus = -1;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &minus, 0) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_admit(b, admit_second, &f) == RMC_OK);
    for (int64_t k = 0; k < (me == 0 ? 4 : 3) * K; k++) {
        int64_t v = me + 1;
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &v) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
    size_t n = 0;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)(3 * K));
    for (int64_t k = 0; k < 4 * K; k++) {
        int64_t v = -7;
        rmc_status_t st = rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND);
        /* [K, 3K): let in as 10, then replaced by the later arrivals (if any) */
        int let_in = v == 10 || (v >= 1 && v <= np && np > 2);
        MPITEST_EXPECT(ok, k < K       ? st == RMC_OK && v >= 1 && v <= np
                           : k < 3 * K ? st == RMC_OK && let_in
                                       : st == RMC_ERR_NOT_FOUND);
    }
    /* asked twice for each key of [K, 3K) (dropped, then let in; later arrivals replace), once
     * for each of [3K, 4K), never for [0, K) */
    long calls = 0;
    MPI_Allreduce(&f.calls, &calls, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_CHECK_ALL(calls == 5 * K);
    MPI_CHECK_ALL(ok);
    /* with a combining function: keys [4K, 5K) from every rank, value 1: the second arrival is
     * let in, its value rewritten to 10, the later ones add theirs: 10 + np - 2 */
    insert_ones(b, &f, 0, 4 * K, 5 * K, &ok);
    for (int64_t k = 4 * K; k < 5 * K; k++) {
        int64_t v = -7;
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK && v == 8 + np);
    }
    calls = 0; /* asked twice per key again, never once it was in (the later ones combined) */
    MPI_Allreduce(&f.calls, &calls, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_CHECK_ALL(calls == 2 * K);
    /* only_present: the filter is not asked, absent keys [5K, 6K) are dropped */
    insert_ones(b, &f, 1, 5 * K, 6 * K, &ok);
    MPITEST_EXPECT(ok, f.calls == 0);
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPITEST_EXPECT(ok, n == (size_t)(4 * K));
    /* bad input: a NULL handle; a map with a variable-size value type */
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_admit(NULL, admit_second, &f) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
    static const rmc_type_t vt = {"str8", 64, 8, ser8, des8, NULL, NULL, NULL};
    MPI_CHECK_OK(rmc_hashmap_create(64 * (size_t)np, i64, &vt, &h));
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 8, 2, &b));
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_admit(b, admit_second, &f) == RMC_ERR_TYPE);
    MPITEST_EXPECT(ok, strstr(rmc_last_error(), "rmc_hashmap_buffer_admit: the map's value type "
                                                "str8 is variable-size") != NULL);
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_admit(b, NULL, NULL) == RMC_OK);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
    free(f.bit);
}

static void test_buffer_admit(void **s)
{
    (void)s;
    both_keys(buffer_admit);
}

/* The owners' insert paths past tombstones, into full tables, and with a combining function that
 * returns the map's own statuses (plain and hashed keys). Rank 0 inserts [0, N) one-sided and
 * erases the even keys (tombstones on the probe sequences of a half-full map); then it sends [0, N)
 * with value 1 through a combining buffer whose filter lets everything in: odd keys add to their
 * value, even ones are asked about and take a tombstone or a free bucket. A combining function that
 * returns RMC_ERR_NOT_FOUND or RMC_ERR_FULL is an error of the flush, not an absent key (nothing
 * inserted, no filter asked) nor a full table (nothing counted as dropped). Last, every rank sends
 * 4x the map's capacity of new keys: the flush fails with RMC_ERR_FULL, every table is full, and
 * the filter was asked for each key. */
static int admit_all(const void *key, void *value, void *arg)
{
    (void)key;
    (void)value;
    (*(long *)arg)++;
    return 1;
}
static rmc_status_t refuse_as(void *value, void *arg)
{
    (void)value;
    return *(const int64_t *)arg == 1 ? RMC_ERR_NOT_FOUND : RMC_ERR_FULL;
}
static void buffer_edges(const rmc_type_t *kt)
{
    const int64_t N = 8 * np;
    int ok = 1;
    long calls = 0, all = 0;
    rmc_hashmap_h h;
    rmc_hashmap_buffer_h b;
    MPI_CHECK_OK(rmc_hashmap_create((size_t)(16 * np), kt, i64, &h));
    const size_t cap = rmc_hashmap_capacity(h);
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 64, 4, &b));
    for (int64_t k = 0; me == 0 && k < N; k++) {
        int64_t v = 100 + k;
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_OK);
    }
    for (int64_t k = 0; me == 0 && k < N; k += 2)
        MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &k, 0) == RMC_OK);
    MPI_CHECK_OK(rmc_barrier());
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_combine(b, add_arg, 0) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_admit(b, admit_all, &calls) == RMC_OK);
    for (int64_t k = 0; me == 0 && k < N; k++) {
        int64_t one = 1;
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &one) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_hashmap_buffer_flush(b));
    MPI_Allreduce(&calls, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_CHECK_ALL(all == N / 2);
    size_t n = 0;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == (size_t)N);
    for (int64_t k = 0; k < N; k++) {
        int64_t v = -1;
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK &&
                               v == (k % 2 ? 101 + k : 1));
    }
    MPI_CHECK_ALL(ok);
    /* a combining function returning NOT_FOUND (odd keys, value 1) or FULL (value 2) */
    MPI_CHECK_OK(rmc_barrier());
    calls = 0;
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_combine(b, refuse_as, 0) == RMC_OK);
    for (int64_t k = 1; me == 0 && k < N; k += 2) { /* (its own full batch fails at once) */
        int64_t v = k % 4 == 1 ? 1 : 2;
        rmc_status_t is = rmc_hashmap_buffer_insert(b, &k, &v);
        MPITEST_EXPECT(ok, is == RMC_OK || is == RMC_ERR_NOT_FOUND || is == RMC_ERR_FULL);
    }
    rmc_status_t st = rmc_hashmap_buffer_flush(b);
    MPITEST_EXPECT(ok, st == RMC_ERR_NOT_FOUND || st == RMC_ERR_FULL);
    MPITEST_EXPECT(ok, calls == 0);
    MPITEST_EXPECT(ok, strstr(rmc_last_error(), "no room") == NULL);
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPITEST_EXPECT(ok, n == (size_t)N);
    for (int64_t k = 1; k < N; k += 2) {
        int64_t v = -1;
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_OK && v == 101 + k);
    }
    MPI_CHECK_ALL(ok);
    /* full tables: every rank sends 4 cap new keys */
    MPI_CHECK_OK(rmc_barrier());
    calls = 0;
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_combine(b, add_arg, 0) == RMC_OK);
    const int64_t M = 4 * (int64_t)cap;
    for (int64_t i = 0; i < M; i++) {
        int64_t k = 1000000 + me * M + i, one = 1;
        MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &k, &one) == RMC_OK);
    }
    st = rmc_hashmap_buffer_flush(b);
    MPITEST_EXPECT(ok, st == RMC_ERR_FULL && strstr(rmc_last_error(), "no room") != NULL);
    MPI_Allreduce(&calls, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPITEST_EXPECT(ok, all == M * np);
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPITEST_EXPECT(ok, n == cap);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_buffer_destroy(b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

static void test_buffer_edges(void **s)
{
    (void)s;
    both_keys(buffer_edges);
}

/* Bad input: a clear status, nothing changed, nothing hangs. */
static void test_bad_input(void **s)
{
    (void)s;
    rmc_hashmap_h h = NULL, bad = NULL;
    static const rmc_type_t zero = RMC_TYPE_FIXED("zero", 0);
    int ok = 1;
    MPI_CHECK_ALL(rmc_hashmap_create(0, i64, i64, &bad) == RMC_ERR_ARG && bad == NULL);
    /* above the 2^40 limit: a size (RMC_ERR_TOO_BIG, as arrays' and Bloom filters'), named */
    MPI_CHECK_ALL(rmc_hashmap_create(((size_t)1 << 40) + 1, i64, i64, &bad) == RMC_ERR_TOO_BIG &&
                  bad == NULL && strstr(rmc_last_error(), "capacity 1099511627777 (1 .. 2^40)"));
    MPI_CHECK_ALL(rmc_hashmap_create(16, &zero, i64, &bad) == RMC_ERR_TYPE && bad == NULL);
    MPI_CHECK_ALL(rmc_hashmap_create(16, i64, NULL, &bad) == RMC_ERR_TYPE && bad == NULL);
    { /* 2^40 buckets of 1 GiB values: the table's size overflows (it wrapped to a small request
       * refused as "the segment is full") */
        static const rmc_type_t huge = RMC_TYPE_STRING((size_t)1 << 30);
        MPI_CHECK_ALL(rmc_hashmap_create((size_t)1 << 40, i64, &huge, &bad) == RMC_ERR_TOO_BIG &&
                      bad == NULL && strstr(rmc_last_error(), "overflows"));
    }
    { /* a buffer whose batches and queues overflow size_t: an 8-byte key and a 2^24 + 4-byte
       * value slot make 2^24 + 8-byte entries; 1099511103490 of them wrapped to a 29 MB batch that
       * buffered inserts overran (double free), 2^40 of 2^24 bytes wrapped to 0 ("0 bytes: this
       * rank's segment is full"). RMC_ERR_TOO_BIG naming both, no buffer, no queue left. */
        static const rmc_type_t big = RMC_TYPE_STRING(((size_t)1 << 24) - 4),
                                big2 = RMC_TYPE_STRING(((size_t)1 << 24) - 12);
        size_t n[2] = {1099511103490ull, (size_t)1 << 40};
        for (int c = 0; c < 2; c++) {
            rmc_hashmap_buffer_h bb = NULL;
            MPI_CHECK_OK(rmc_hashmap_create(4, i64, c ? &big2 : &big, &h));
            rmc_status_t st = rmc_hashmap_buffer_create(h, n[c], n[c], &bb);
            char want[64];
            snprintf(want, sizeof want, "capacity %zu x %zu-byte entries", n[c],
                     c ? (size_t)1 << 24 : ((size_t)1 << 24) + 8);
            if (st != RMC_ERR_TOO_BIG || bb || !strstr(rmc_last_error(), want) ||
                !strstr(rmc_last_error(), "overflows"))
                fprintf(stderr, "[rank %d] rmc_hashmap_buffer_create(%zu): %s (%s)\n", me, n[c],
                        rmc_status_string(st), rmc_last_error());
            MPI_CHECK_ALL(st == RMC_ERR_TOO_BIG && bb == NULL && strstr(rmc_last_error(), want) &&
                          strstr(rmc_last_error(), "overflows"));
            if (st == RMC_OK) /* the old code made it: do not overrun it */
                rmc_hashmap_buffer_destroy(bb);
            MPI_CHECK_OK(rmc_hashmap_destroy(h));
        }
        h = NULL;
    }
    /* ranks disagreeing on the key type, or the value type */
    MPI_CHECK_ALL(rmc_hashmap_create(16, me ? &rmc_type_u64 : i64, i64, &bad) ==
                  (np > 1 ? RMC_ERR_TYPE : RMC_OK));
    if (np == 1)
        rmc_hashmap_destroy(bad);
    bad = NULL;
    MPI_CHECK_ALL(rmc_hashmap_create(16, i64, me ? &rmc_type_f64 : i64, &bad) ==
                  (np > 1 ? RMC_ERR_TYPE : RMC_OK));
    if (np == 1)
        rmc_hashmap_destroy(bad);
    MPI_CHECK_OK(rmc_hashmap_create(16, i64, i64, &h));
    int64_t k = 1, v = 2;
    rmc_status_t st1;
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, NULL, &v, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, NULL, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, NULL, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, NULL, NULL, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, RMC_PROMISE_PUSH) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_insert_nb(h, &k, &v, 0, NULL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_find_n(h, 1, &k, &v, NULL, 0) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_find_n(h, 1, NULL, &v, &st1, 0) == RMC_ERR_ARG);
    /* n = 0: nothing is read (NULL arrays are fine, as MPI's with count 0); the handle is checked
     */
    MPITEST_EXPECT(ok, rmc_hashmap_find_n(h, 0, NULL, NULL, NULL, 0) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_hashmap_find_n(NULL, 0, NULL, NULL, NULL, 0) == RMC_ERR_HANDLE);
    int64_t fk = 0;
    while (rmc_hashmap_owner(h, &fk) == me && np > 1)
        fk++;
    MPITEST_EXPECT(ok, np == 1 || rmc_hashmap_insert(h, &fk, &v, RMC_PROMISE_LOCAL) == RMC_ERR_ARG);
    MPITEST_EXPECT(ok, rmc_hashmap_insert(NULL, &k, &v, 0) == RMC_ERR_HANDLE);
    MPITEST_EXPECT(ok, rmc_hashmap_find(NULL, &k, &v, 0) == RMC_ERR_HANDLE);
    MPITEST_EXPECT(ok, rmc_hashmap_capacity(NULL) == 0 && rmc_hashmap_owner(NULL, &k) == -1);
    MPITEST_EXPECT(ok, rmc_hashmap_owner(h, NULL) == -1);
    MPI_CHECK_ALL(ok);
    size_t n;
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(n == 0);
    MPI_CHECK_ALL(rmc_hashmap_resize(h, 0) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_hashmap_resize(h, ((size_t)1 << 40) + 1) == RMC_ERR_TOO_BIG &&
                  rmc_hashmap_capacity(h) >= 16);
    rmc_hashmap_buffer_h bb = NULL;
    MPI_CHECK_ALL(rmc_hashmap_buffer_create(h, 4, 0, &bb) == RMC_ERR_ARG && bb == NULL);
    MPI_CHECK_ALL(rmc_hashmap_buffer_create(h, 4, 5, &bb) == RMC_ERR_ARG && bb == NULL);
    MPI_CHECK_ALL(rmc_hashmap_buffer_create(h, ((size_t)1 << 40) + 1, 1, &bb) == RMC_ERR_TOO_BIG &&
                  bb == NULL && strstr(rmc_last_error(), "queue capacity 1099511627777"));
    MPI_CHECK_OK(rmc_hashmap_insert(h, &k, &v, 0)); /* the map works after the refusals */
    int64_t got = 0;
    MPI_CHECK_OK(rmc_hashmap_find(h, &k, &got, 0));
    MPI_CHECK_ALL(got == v);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
    /* use after destroy */
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, &v, 0) == RMC_ERR_HANDLE);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, &v, RMC_PROMISE_FIND) == RMC_ERR_HANDLE);
    MPITEST_EXPECT(ok, strstr(rmc_last_error(), "rmc_hashmap_find: ") != NULL &&
                           strstr(rmc_last_error(), "destroyed") != NULL);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(rmc_hashmap_destroy(h) == RMC_ERR_HANDLE);
}

static int64_t dup_keys[30];
static int dup_count[30];
static int count_dups(const void *k, const void *v, void *arg)
{
    (void)v;
    (void)arg;
    for (int j = 0; j < 30; j++)
        dup_count[j] += *(const int64_t *)k == dup_keys[j];
    return 0;
}

/* Concurrent inserts of one key where only one of them may reuse a tombstone (promises are per
 * call): rank 0 inserts with no promise, rank 1 (the keys' owner) with RMC_PROMISE_INSERT (only
 * inserts run: true), into probe sequences that start with a tombstone and run through 170 other
 * entries. Exactly one entry per key, in the map and in a key/value store (where exactly one of
 * the two inserts creates it). Before, the reusing insert wrote the key into the tombstone while
 * the other, which had passed it, took the free bucket ending the sequence: 19-26 of 30 keys
 * twice with RMC_NODE_SIZE=1 (0-3 in the real mode). */
static void test_mixed_promises(void **s)
{
    (void)s;
    if (np < 2)
        return;
    for (int kvs = 0; kvs < 2; kvs++) {
        rmc_hashmap_h h;
        rmc_kv_h kv = NULL;
        size_t cap = 256 * (size_t)np; /* 256 buckets a rank */
        if (kvs) {
            MPI_CHECK_OK(rmc_kv_create(cap, i64, i64, RMC_HASHMAP_RDMA, &kv));
            h = rmc_kv_map(kv);
        } else
            MPI_CHECK_OK(rmc_hashmap_create(cap, i64, i64, &h));
        int64_t fill[170], k = 1, v;
        int nt = 0, nf = 0, ok = 1, both = 0;
        for (; nt < 30; k++)
            if (rmc_hashmap_owner(h, &k) == 1)
                dup_keys[nt++] = k;
        for (; nf < 170; k++)
            if (rmc_hashmap_owner(h, &k) == 1)
                fill[nf++] = k;
        if (me == 1) { /* the keys, the others after them, then the keys' tombstones */
            v = 1;
            for (int j = 0; j < nt; j++)
                MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &dup_keys[j], &v, RMC_PROMISE_LOCAL) ==
                                       RMC_OK);
            for (int j = 0; j < nf; j++)
                MPITEST_EXPECT(ok,
                               rmc_hashmap_insert(h, &fill[j], &v, RMC_PROMISE_LOCAL) == RMC_OK);
            for (int j = 0; j < nt; j++)
                MPITEST_EXPECT(ok, rmc_hashmap_erase(h, &dup_keys[j], RMC_PROMISE_LOCAL) == RMC_OK);
        }
        MPI_CHECK_ALL(ok);
        for (int j = 0; j < nt; j++) {
            MPI_CHECK_OK(rmc_barrier());
            rmc_status_t st = RMC_ERR_NOT_FOUND;
            v = 100 + me;
            if (me == 1) /* a varying head start for the other */
                for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < (j % 20) * 1e-6;)
                    ;
            unsigned promise = me == 1 ? RMC_PROMISE_INSERT : 0;
            if (me <= 1)
                st = kvs ? rmc_kv_insert(kv, &dup_keys[j], &v, promise)
                         : rmc_hashmap_insert(h, &dup_keys[j], &v, promise);
            MPITEST_EXPECT(ok, me > 1 || st == RMC_OK || (kvs && st == RMC_ERR_EXISTS));
            MPI_CHECK_OK(rmc_barrier()); /* (a plain collective would leave the owner unserved) */
            int mine = st == RMC_OK, created = 0;
            MPI_Allreduce(&mine, &created, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            both += created != 1;
        }
        size_t n = 0;
        MPI_CHECK_OK(rmc_hashmap_count(h, &n));
        memset(dup_count, 0, sizeof(dup_count));
        int twice = 0;
        if (me == 1) {
            MPITEST_EXPECT(ok, rmc_hashmap_local_foreach(h, count_dups, NULL, NULL) == RMC_OK);
            for (int j = 0; j < nt; j++)
                twice += dup_count[j] != 1;
        }
        if (twice || both || n != (size_t)(nt + nf))
            fprintf(stderr, "[rank %d] %s: %d keys not once, %d not created once, %zu entries\n",
                    me, kvs ? "store" : "map", twice, kvs ? both : 0, n);
        MPI_CHECK_ALL(ok && twice == 0 && (!kvs || both == 0) && n == (size_t)(nt + nf));
        if (kvs)
            MPI_CHECK_OK(rmc_kv_destroy(kv));
        else
            MPI_CHECK_OK(rmc_hashmap_destroy(h));
    }
}

/* rmc_hashmap_insert_nb copies its key: with a key type that has an equal function, changing the
 * caller's key after the call does not change what the insert looks for (it used to compare
 * against the caller's key until it completed: a second entry with RMC_NODE_SIZE=1). A LOCAL
 * update whose value does not fit leaves the stored value as it was (it was packed into the
 * bucket directly). A buffer whose map was destroyed first can still be destroyed. */
static void test_owned_args(void **s)
{
    (void)s;
    static const rmc_type_t str = RMC_TYPE_STRING(32);
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create(64 * (size_t)np, &str, i64, &h));
    char buf[32] = "alpha";
    char *p = buf;
    int64_t v = 1;
    int ok = 1, owner = rmc_hashmap_owner(h, &p);
    if (me == owner)
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &p, &v, 0) == RMC_OK);
    MPI_CHECK_OK(rmc_barrier());
    if (me == (owner + 1) % np) {
        rmc_request_h r;
        v = 2;
        MPITEST_EXPECT(ok, rmc_hashmap_insert_nb(h, &p, &v, 0, &r) == RMC_OK);
        strcpy(buf, "zzzzz"); /* the caller's key changes after the call */
        MPITEST_EXPECT(ok, rmc_wait(&r) == RMC_OK);
        strcpy(buf, "alpha");
    }
    MPI_CHECK_OK(rmc_barrier());
    int64_t got = 0;
    size_t n = 0;
    /* (alone, rank 0 makes both inserts) */
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &p, &got, 0) == RMC_OK && got == 2);
    MPI_CHECK_OK(rmc_hashmap_count(h, &n));
    MPI_CHECK_ALL(ok && n == 1);
    rmc_hashmap_buffer_h b;
    MPI_CHECK_OK(rmc_hashmap_buffer_create(h, 8, 2, &b));
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
    /* the buffer's map destroyed: the buffer named (it named the map's address as "a destroyed
     * container") */
    char want[96];
    snprintf(want, sizeof want, "the map of hash map buffer %p was destroyed", (void *)b);
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_insert(b, &p, &v) == RMC_ERR_HANDLE &&
                           strstr(rmc_last_error(), "rmc_hashmap_buffer_insert: ") &&
                           strstr(rmc_last_error(), want));
    MPITEST_EXPECT(ok, rmc_hashmap_buffer_flush(b) == RMC_ERR_HANDLE &&
                           strstr(rmc_last_error(), "rmc_hashmap_buffer_flush: ") &&
                           strstr(rmc_last_error(), want));
    if (!ok)
        fprintf(stderr, "[rank %d] last error: %s\n", me, rmc_last_error());
    MPI_CHECK_ALL(ok);
    MPI_CHECK_ALL(rmc_hashmap_buffer_destroy(b) == RMC_OK);
    MPI_CHECK_ALL(rmc_hashmap_buffer_destroy(b) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_hashmap_buffer_flush(NULL) == RMC_ERR_HANDLE); /* (it read b->dropped) */
    /* a value type whose serializer writes what fits and returns the whole length */
    static const rmc_type_t vt = {"str8", 64, 8, ser8, des8, NULL, NULL, NULL};
    MPI_CHECK_OK(rmc_hashmap_create(64 * (size_t)np, i64, &vt, &h));
    int64_t k = 0;
    while (rmc_hashmap_owner(h, &k) != me)
        k++;
    char good[64] = "good", w[64] = "";
    MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &k, good, 0) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, grow, NULL, RMC_PROMISE_LOCAL) == RMC_ERR_TOO_BIG);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, w, 0) == RMC_OK && strcmp(w, "good") == 0);
    MPITEST_EXPECT(ok, rmc_hashmap_update(h, &k, grow, NULL, 0) == RMC_ERR_TOO_BIG);
    MPITEST_EXPECT(ok, rmc_hashmap_find(h, &k, w, 0) == RMC_OK && strcmp(w, "good") == 0);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* A value of four words that must agree: a find or update that saw words of two writes (a torn
 * read a bucket's checksum let through) would break the relation. */
typedef struct {
    uint64_t w[4];
} quadv_t;
static void quad_set(quadv_t *q, uint64_t x)
{
    q->w[0] = x;
    q->w[1] = ~x;
    q->w[2] = x * 0x9e3779b97f4a7c15ull;
    q->w[3] = x ^ 0x5555555555555555ull;
}
static int quad_ok(const quadv_t *q)
{
    quadv_t r;
    quad_set(&r, q->w[0]);
    return memcmp(&r, q, sizeof r) == 0;
}
static rmc_status_t quad_bump(void *value, void *arg)
{
    quadv_t *q = value;
    if (!quad_ok(q))
        ++*(int *)arg;
    quad_set(q, q->w[0] + 1);
    return RMC_OK;
}

/* Every rank at once replaces, updates and finds (blocking and _nb) the same few keys, whose
 * 32-byte values (a 40-byte entry: the checksum's general path) are always written whole: every
 * value any find or update sees must be one a writer wrote, never a mix (finds take no lock and
 * rely on the bucket's checksum), and a key erased and inserted again lands in a new bucket that
 * its insert's compare-and-swap makes ready before the entry arrives. Then every value is still
 * whole. (A stress test: whether a race meets a torn bucket is up to the timing, and it passed with
 * the checksum check removed; test_torn_bucket below plants one deterministically.) */
static void test_no_torn_reads(void **s)
{
    (void)s;
    static const rmc_type_t qt = RMC_TYPE_FIXED("quad", sizeof(quadv_t));
    rmc_hashmap_h h;
    MPI_CHECK_OK(rmc_hashmap_create(4096 * (size_t)np, i64, &qt, &h)); /* room for tombstones */
    enum { KEYS = 4, ROUNDS = 200 };
    int64_t keys[KEYS];
    for (int k = 0; k < KEYS; k++) { /* owned round-robin, so that every rank owns some */
        keys[k] = 1000 + k;
        while (rmc_hashmap_owner(h, &keys[k]) != k % np)
            keys[k] += KEYS;
    }
    quadv_t q;
    int ok = 1, torn = 0, finds = 0;
    for (int k = 0; k < KEYS && me == 0; k++) {
        quad_set(&q, (uint64_t)k << 40);
        MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &keys[k], &q, 0) == RMC_OK);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    uint64_t seed = 0x1234567ull + (uint64_t)me;
    for (int r = 0; r < ROUNDS && ok; r++) {
        seed = mpitest_mix64(seed);
        int k = (int)(seed % KEYS), what = (int)((seed >> 8) % 5);
        rmc_status_t st;
        if (what == 0) { /* replace with a value of this rank's */
            quad_set(&q, ((uint64_t)me << 32) | (uint64_t)r);
            st = rmc_hashmap_insert(h, &keys[k], &q, 0);
        } else if (what == 1) {
            st = rmc_hashmap_update(h, &keys[k], quad_bump, &torn, 0);
        } else if (what == 2) {
            memset(&q, 0xa5, sizeof q);
            st = rmc_hashmap_find(h, &keys[k], &q, 0);
            torn += st == RMC_OK && !quad_ok(&q);
            finds++;
        } else if (what == 4) { /* erase and insert again: a new bucket, written after its
                                  * compare-and-swap made it ready (finds must wait for it) */
            st = rmc_hashmap_erase(h, &keys[k], 0);
            quad_set(&q, ((uint64_t)me << 32) | (uint64_t)r);
            if (st == RMC_OK || st == RMC_ERR_NOT_FOUND)
                st = rmc_hashmap_insert(h, &keys[k], &q, 0);
        } else {
            rmc_request_h rq;
            memset(&q, 0x5a, sizeof q);
            st = rmc_hashmap_find_nb(h, &keys[k], &q, 0, &rq);
            if (st == RMC_OK && rq != RMC_REQUEST_NULL)
                st = rmc_wait(&rq);
            torn += st == RMC_OK && !quad_ok(&q);
            finds++;
        }
        if (st != RMC_OK && st != RMC_ERR_NOT_FOUND) { /* (erased by another rank meanwhile) */
            fprintf(stderr, "[rank %d] round %d op %d key %d: %s (%s)\n", me, r, what, k,
                    rmc_status_string(st), rmc_last_error());
            ok = 0;
        }
    }
    MPI_CHECK_OK(rmc_barrier());
    for (int k = 0; k < KEYS; k++) { /* absent (erased last) or whole */
        rmc_status_t st = rmc_hashmap_find(h, &keys[k], &q, 0);
        MPITEST_EXPECT(ok, st == RMC_ERR_NOT_FOUND || (st == RMC_OK && quad_ok(&q)));
        st = rmc_hashmap_find(h, &keys[k], &q, RMC_PROMISE_FIND);
        MPITEST_EXPECT(ok, st == RMC_ERR_NOT_FOUND || (st == RMC_OK && quad_ok(&q)));
    }
    if (torn)
        fprintf(stderr, "[rank %d] %d torn values (%d finds)\n", me, torn, finds);
    MPI_CHECK_ALL(ok && torn == 0);
    MPI_CHECK_OK(rmc_hashmap_destroy(h));
}

/* The value pointer of `key` in this rank's table (rmc_hashmap_local_foreach hands a fixed-size
 * value over in place, in its bucket). */
typedef struct {
    int64_t key;
    unsigned char *value;
} spot_t;
static int find_spot(const void *key, const void *value, void *arg)
{
    spot_t *sp = arg;
    if (memcmp(key, &sp->key, 8))
        return 0;
    sp->value = (unsigned char *)(uintptr_t)value; /* white box: written below on purpose */
    return 1;
}

/* Tests a request for at least 20 ms and 50 calls, serving nothing else: 1 if it completed
 * (its status in *st). */
static int completes_soon(rmc_request_h *rq, rmc_status_t *st)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < 50 || MPI_Wtime() - t0 < 0.02; i++) {
        int done = 0;
        *st = rmc_test(rq, &done);
        if (*st != RMC_OK || done)
            return 1;
        usleep(100);
    }
    return 0;
}

/* The owner serves (rmc_progress) until the tester's message, then gives the value its byte
 * back. */
static void serve_then_restore(unsigned char *byte, unsigned char was, int tester)
{
    int flag = 0, token;
    while (!flag) {
        rmc_progress();
        MPI_Iprobe(tester, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    MPI_Recv(&token, 1, MPI_INT, tester, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    __atomic_store_n(byte, was, __ATOMIC_RELEASE);
}

/* A bucket whose entry does not match its checksum (a writer's entry not yet arrived whole, or
 * bytes of two versions) is never believed: a find of its key, the owner's own or a remote one,
 * and a remote writer of it (a replace: it must not lock a bucket it has not read whole) wait
 * until it matches, then see the entry as it is. Planted deterministically: the owner flips one
 * bit of the value in place, through the pointer rmc_hashmap_local_foreach hands over (white box:
 * a fixed-size value lives in its bucket). With the check disabled the finds would return the
 * flipped value at once. For an 8-byte value (a 16-byte entry, the checksum's chain of bijections)
 * and a 32-byte one (the general path). */
static void test_torn_bucket(void **s)
{
    (void)s;
    static const rmc_type_t qt = RMC_TYPE_FIXED("quad", sizeof(quadv_t));
    const int owner = np - 1, tester = 0;
    for (int vk = 0; vk < 2; vk++) {
        const rmc_type_t *vt = vk ? &qt : i64;
        size_t vs = vk ? sizeof(quadv_t) : 8;
        rmc_hashmap_h h;
        MPI_CHECK_OK(rmc_hashmap_create(64 * (size_t)np, i64, vt, &h));
        spot_t sp = {7, NULL};
        while (rmc_hashmap_owner(h, &sp.key) != owner)
            sp.key++;
        quadv_t v1, v2, got; /* (an int64 value uses the first word) */
        quad_set(&v1, 1000);
        quad_set(&v2, 2000);
        int ok = 1;
        if (me == tester)
            MPITEST_EXPECT(ok, rmc_hashmap_insert(h, &sp.key, &v1, 0) == RMC_OK);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_barrier());
        unsigned char was = 0;
        if (me == owner) {
            MPITEST_EXPECT(ok, rmc_hashmap_local_foreach(h, find_spot, &sp, NULL) == RMC_OK &&
                                   sp.value);
            was = sp.value ? sp.value[0] : 0;
        }
        MPI_CHECK_ALL(ok);
        rmc_request_h rq;
        rmc_status_t st = RMC_OK;
        /* 1. the owner's own find */
        if (me == owner) {
            __atomic_store_n(sp.value, (unsigned char)(was ^ 0x40), __ATOMIC_RELEASE);
            memset(&got, 0, sizeof got);
            MPITEST_EXPECT(ok, rmc_hashmap_find_nb(h, &sp.key, &got, 0, &rq) == RMC_OK);
            MPITEST_EXPECT(ok, !completes_soon(&rq, &st));
            __atomic_store_n(sp.value, was, __ATOMIC_RELEASE);
            MPITEST_EXPECT(ok, rmc_wait(&rq) == RMC_OK && memcmp(&got, &v1, vs) == 0);
        }
        MPI_CHECK_ALL(ok);
        /* 2. a remote find, 3. a remote replace (with np 1 both are the owner's own) */
        for (int phase = 2; phase <= 3; phase++) {
            if (me == owner)
                __atomic_store_n(sp.value, (unsigned char)(was ^ 0x40), __ATOMIC_RELEASE);
            MPI_CHECK_OK(rmc_barrier());
            if (me == tester) {
                memset(&got, 0, sizeof got);
                MPITEST_EXPECT(ok, (phase == 2 ? rmc_hashmap_find_nb(h, &sp.key, &got, 0, &rq)
                                               : rmc_hashmap_insert_nb(h, &sp.key, &v2, 0, &rq)) ==
                                       RMC_OK);
                if (!ok)
                    rq = RMC_REQUEST_NULL;
                MPITEST_EXPECT(ok, !completes_soon(&rq, &st));
                int token = phase;
                if (owner != tester)
                    MPI_Send(&token, 1, MPI_INT, owner, 77, MPI_COMM_WORLD);
                else
                    __atomic_store_n(sp.value, was, __ATOMIC_RELEASE);
                MPITEST_EXPECT(ok, rmc_wait(&rq) == RMC_OK);
                if (phase == 2)
                    MPITEST_EXPECT(ok, memcmp(&got, &v1, vs) == 0);
            } else if (me == owner) {
                serve_then_restore(sp.value, was, tester);
            }
            MPI_CHECK_OK(rmc_barrier());
            MPI_CHECK_ALL(ok);
        }
        /* everyone sees the replaced value, whole */
        memset(&got, 0, sizeof got);
        MPITEST_EXPECT(ok, rmc_hashmap_find(h, &sp.key, &got, 0) == RMC_OK &&
                               memcmp(&got, &v2, vs) == 0);
        MPI_CHECK_ALL(ok);
        MPI_CHECK_OK(rmc_hashmap_destroy(h));
    }
}

MPITEST_MAIN("hashmap", cttest_setup, mpitest_teardown_rmc, test_basic, test_contention, test_costs,
             test_strings, test_full_resize, test_fill_every_bucket, test_nb_batch_local,
             test_find_n_behind_own_insert, test_buffer, test_buffer_types, test_find_only,
             test_buffer_combine, test_buffer_admit, test_buffer_edges, test_buffer_fail,
             test_nb_across_collectives, test_mixed_promises, test_owned_args, test_no_torn_reads,
             test_torn_bucket, test_bad_input)
