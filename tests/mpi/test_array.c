/* Arrays, hosted and block-distributed: element and range puts and gets across owners, the local
 * part, padded and variable-length element types, non-blocking forms, and bad input. */
#include "cttest.h"

/* Every rank writes the elements i with i % np == me (single puts), then everyone reads the
 * whole array back with one range get and with single gets; the local part holds what it should. */
static void fill_check(int host, size_t n)
{
    rmc_array_h a;
    MPI_CHECK_OK(rmc_array_create(n, &rmc_type_i64, host, &a));
    MPI_CHECK_ALL(rmc_array_size(a) == n);
    int ok = 1;
    for (size_t i = (size_t)me; i < n; i += (size_t)np) {
        int64_t v = (int64_t)(i * 7 + 1);
        MPITEST_EXPECT(ok, rmc_array_put(a, i, &v) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    int64_t *all = malloc(n * sizeof(int64_t));
    MPITEST_EXPECT(ok, rmc_array_get_range(a, 0, n, all) == RMC_OK);
    for (size_t i = 0; i < n; i++)
        MPITEST_EXPECT(ok, all[i] == (int64_t)(i * 7 + 1));
    int64_t x;
    MPITEST_EXPECT(ok, rmc_array_get(a, n - 1, &x) == RMC_OK && x == (int64_t)((n - 1) * 7 + 1));
    size_t first, count;
    void *slots;
    MPITEST_EXPECT(ok, rmc_array_local(a, &first, &count, &slots) == RMC_OK);
    for (size_t i = 0; i < count; i++) {
        MPITEST_EXPECT(ok, ((int64_t *)slots)[i] == (int64_t)((first + i) * 7 + 1));
        MPITEST_EXPECT(ok, rmc_array_owner(a, first + i) == me);
    }
    size_t total = 0;
    MPI_Allreduce(&count, &total, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPITEST_EXPECT(ok, total == n);
    MPITEST_EXPECT(ok, host < 0 || count == (me == host ? n : 0));
    /* a range across every owner, written by the last rank, read by the first */
    MPI_CHECK_OK(rmc_barrier());
    if (me == np - 1 && n > 1) {
        for (size_t i = 0; i < n; i++)
            all[i] = -(int64_t)i;
        MPITEST_EXPECT(ok, rmc_array_put_range(a, 1, n - 1, all + 1) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    if (me == 0 && n > 1) {
        memset(all, 0, n * sizeof(int64_t));
        MPITEST_EXPECT(ok, rmc_array_get_range(a, 0, n, all) == RMC_OK);
        MPITEST_EXPECT(ok, all[0] == 1);
        for (size_t i = 1; i < n; i++)
            MPITEST_EXPECT(ok, all[i] == -(int64_t)i);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_array_destroy(a));
    free(all);
}

static void test_hosted(void **s)
{
    (void)s;
    fill_check(np - 1, 37);
    fill_check(0, 1);
}

static void test_block(void **s)
{
    (void)s;
    fill_check(RMC_ARRAY_BLOCK, 37);
    fill_check(RMC_ARRAY_BLOCK, (size_t)np * 5);
    fill_check(RMC_ARRAY_BLOCK, 1); /* fewer elements than ranks: empty parts */
}

/* A 12-byte struct (12-byte slots, back to back) and strings of RMC_TYPE_STRING(20). */
typedef struct {
    int32_t a, b;
    char c[4];
} rec_t;

static void test_types(void **s)
{
    (void)s;
    static const rmc_type_t rec = RMC_TYPE_FIXED("rec", sizeof(rec_t));
    static const rmc_type_t str = RMC_TYPE_STRING(20);
    rmc_array_h a, b;
    MPI_CHECK_OK(rmc_array_create(10, &rec, RMC_ARRAY_BLOCK, &a));
    MPI_CHECK_OK(rmc_array_create(10, &str, RMC_ARRAY_BLOCK, &b));
    int ok = 1;
    if (me == 0) {
        rec_t r[10];
        for (int i = 0; i < 10; i++)
            r[i] = (rec_t){i, -i, {'x', (char)('0' + i), 0, 0}};
        MPITEST_EXPECT(ok, rmc_array_put_range(a, 0, 10, r) == RMC_OK);
        char text[40];
        for (int i = 0; i < 10; i++) {
            snprintf(text, sizeof text, "element-%d", i * 1111);
            char *p = text;
            MPITEST_EXPECT(ok, rmc_array_put(b, (size_t)i, &p) == RMC_OK);
        }
        char *longer = "this string is longer than twenty bytes";
        MPITEST_EXPECT(ok, rmc_array_put(b, 3, &longer) == RMC_ERR_TOO_BIG);
    }
    MPI_CHECK_OK(rmc_barrier());
    rec_t r[10];
    MPITEST_EXPECT(ok, rmc_array_get_range(a, 0, 10, r) == RMC_OK);
    for (int i = 0; i < 10; i++)
        MPITEST_EXPECT(ok, r[i].a == i && r[i].b == -i && r[i].c[1] == '0' + i);
    char *got[10] = {0};
    MPITEST_EXPECT(ok, rmc_array_get_range(b, 0, 10, got) == RMC_OK);
    for (int i = 0; i < 10; i++) {
        char want[40];
        snprintf(want, sizeof want, "element-%d", i * 1111);
        MPITEST_EXPECT(ok, got[i] && strcmp(got[i], want) == 0);
        rmc_type_release(&str, &got[i]);
    }
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_array_destroy(a));
    MPI_CHECK_OK(rmc_array_destroy(b));
}

/* Non-blocking ranges across owners, several outstanding, for byte-copied and serialized types. */
static void test_nb(void **s)
{
    (void)s;
    static const rmc_type_t str = RMC_TYPE_STRING(16);
    enum { N = 29 };
    rmc_array_h a, b;
    MPI_CHECK_OK(rmc_array_create(N, &rmc_type_f64, RMC_ARRAY_BLOCK, &a));
    MPI_CHECK_OK(rmc_array_create(N, &str, 0, &b));
    int ok = 1;
    if (me == np - 1) {
        double v[N];
        char *t[N], text[N][16];
        for (int i = 0; i < N; i++) {
            v[i] = i * 0.5;
            snprintf(text[i], 16, "s%d", i);
            t[i] = text[i];
        }
        rmc_request_h q[3];
        MPITEST_EXPECT(ok, rmc_array_put_range_nb(a, 0, 20, v, &q[0]) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_array_put_range_nb(a, 20, N - 20, v + 20, &q[1]) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_array_put_range_nb(b, 0, N, t, &q[2]) == RMC_OK);
        MPITEST_EXPECT(ok, rmc_wait_all(q, 3) == RMC_OK);
    }
    MPI_CHECK_OK(rmc_barrier());
    double w[N];
    char *t[N];
    rmc_request_h q[3];
    MPITEST_EXPECT(ok, rmc_array_get_range_nb(a, 0, N, w, &q[0]) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_array_get_range_nb(b, 0, N, t, &q[1]) == RMC_OK);
    double one;
    MPITEST_EXPECT(ok, rmc_array_get_nb(a, 7, &one, &q[2]) == RMC_OK);
    MPITEST_EXPECT(ok, rmc_wait_all(q, 3) == RMC_OK);
    for (int i = 0; i < N; i++) {
        char want[16];
        snprintf(want, 16, "s%d", i);
        MPITEST_EXPECT(ok, w[i] == i * 0.5 && t[i] && strcmp(t[i], want) == 0);
        rmc_type_release(&str, &t[i]);
    }
    MPITEST_EXPECT(ok, one == 3.5);
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_array_destroy(a));
    MPI_CHECK_OK(rmc_array_destroy(b));
}

/* Bad input: every call answers with a clear status and changes nothing; a copied handle dies
 * with the array (and freeing through one copy does not free twice). */
/* A serialize function for descriptors that must be refused whatever it does. */
static size_t ser_stub(const void *obj, void *buf, size_t cap)
{
    (void)obj, (void)buf, (void)cap;
    return 0;
}

static void test_bad(void **s)
{
    (void)s;
    static const rmc_type_t bad_var = {
        "var-without-functions", 8, 16, NULL, NULL, NULL, NULL, NULL};
    static const rmc_type_t no_size = RMC_TYPE_FIXED("empty", 0);
    rmc_array_h a, copy;
    int64_t v = 5, x;
    static const rmc_type_t str20 = RMC_TYPE_STRING(20);
    MPI_CHECK_ALL(rmc_type_check(NULL) == RMC_ERR_TYPE &&
                  rmc_type_check(&bad_var) == RMC_ERR_TYPE &&
                  rmc_type_check(&no_size) == RMC_ERR_TYPE && rmc_type_check(&str20) == RMC_OK);
    MPI_CHECK_ALL(rmc_type_slot_bytes(NULL) == 0 && rmc_type_slot_bytes(&bad_var) == 0 &&
                  rmc_type_slot_bytes(&str20) == 24 && rmc_type_slot_bytes(&rmc_type_u32) == 4);
    MPI_CHECK_ALL(rmc_array_create(0, &rmc_type_i64, 0, &a) == RMC_ERR_ARG && a == NULL);
    /* 2^44 + 1 elements of 1 MiB: the bytes overflow (they wrapped to one 1 MiB allocation, and
     * element 1 was written over the next block of the segment) */
    static const rmc_type_t mib = RMC_TYPE_FIXED("mib", 1 << 20);
    MPI_CHECK_ALL(rmc_array_create(((size_t)1 << 44) + 1, &mib, 0, &a) == RMC_ERR_TOO_BIG &&
                  a == NULL);
    MPI_CHECK_ALL(rmc_array_create(((size_t)1 << 44) + 1, &mib, RMC_ARRAY_BLOCK, &a) ==
                      RMC_ERR_TOO_BIG &&
                  a == NULL);
    /* serialize / deserialize without max_bytes: invalid for both (slot_bytes said 8) */
    static const rmc_type_t half_ser = {"half-serialized", 8, 0, ser_stub, NULL, NULL, NULL, NULL};
    MPI_CHECK_ALL(rmc_type_check(&half_ser) == RMC_ERR_TYPE && rmc_type_slot_bytes(&half_ser) == 0);
    MPI_CHECK_ALL(rmc_array_create(4, &rmc_type_i64, np, &a) == RMC_ERR_RANK);
    MPI_CHECK_ALL(rmc_array_create(4, &bad_var, 0, &a) == RMC_ERR_TYPE);
    MPI_CHECK_ALL(rmc_array_create(4, &no_size, 0, &a) == RMC_ERR_TYPE);
    MPI_CHECK_ALL(rmc_array_create(4, NULL, 0, &a) == RMC_ERR_TYPE);
    MPI_CHECK_ALL(rmc_array_create(4, &rmc_type_i64, 0, NULL) == RMC_ERR_ARG);
    /* the ranks disagree: different sizes, different types */
    MPI_CHECK_ALL(rmc_array_create(4 + (size_t)me, &rmc_type_i64, 0, &a) ==
                  (np > 1 ? RMC_ERR_ARG : RMC_OK));
    if (np == 1)
        MPI_CHECK_OK(rmc_array_destroy(a));
    MPI_CHECK_ALL(rmc_array_create(4, me ? &rmc_type_f64 : &rmc_type_i64, 0, &a) ==
                  (np > 1 ? RMC_ERR_TYPE : RMC_OK));
    if (np == 1)
        MPI_CHECK_OK(rmc_array_destroy(a));
    MPI_CHECK_OK(rmc_array_create(4, &rmc_type_i64, RMC_ARRAY_BLOCK, &a));
    copy = a;
    MPI_CHECK_ALL(rmc_array_put(a, 4, &v) == RMC_ERR_BOUNDS);
    MPI_CHECK_ALL(rmc_array_get_range(a, 2, 3, &x) == RMC_ERR_BOUNDS);
    MPI_CHECK_ALL(rmc_array_get_range(a, 1, 0, &x) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_array_put(a, 0, NULL) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_array_get(NULL, 0, &x) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_array_owner(a, 4) == -1);
    rmc_request_h q;
    MPI_CHECK_ALL(rmc_array_get_nb(a, 9, &x, &q) == RMC_ERR_BOUNDS && q == RMC_REQUEST_NULL);
    MPI_CHECK_ALL(rmc_array_get_nb(a, 0, &x, NULL) == RMC_ERR_ARG);
    /* a queue handle is not an array */
    rmc_queue_h qh;
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_FAST, 0, 4, &rmc_type_i64, &qh));
    MPI_CHECK_ALL(rmc_array_get((rmc_array_h)(void *)qh, 0, &x) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_queue_push((rmc_queue_h)(void *)a, &v, 0) == RMC_ERR_HANDLE);
    MPI_CHECK_OK(rmc_queue_destroy(qh));
    MPI_CHECK_ALL(rmc_queue_destroy(qh) == RMC_ERR_HANDLE); /* used after destroy */
    MPI_CHECK_OK(rmc_array_put(copy, 1, &v));               /* a copy is the same array */
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_array_get(a, 1, &x));
    MPI_CHECK_ALL(x == 5);
    MPI_CHECK_OK(rmc_array_destroy(a));
    MPI_CHECK_ALL(rmc_array_get(copy, 0, &x) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(strstr(rmc_last_error(), "destroyed") != NULL);
    MPI_CHECK_ALL(rmc_array_destroy(copy) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_array_size(copy) == 0);
}

/* A handle kept across rmc_finalize and a new rmc_init is dead (RMC_ERR_HANDLE): it was freed at
 * finalize and read after the free (ASan: heap-use-after-free in rmcc_obj_check). */
static void test_handle_across_init(void **s)
{
    (void)s;
    rmc_array_h a, b;
    int64_t v = 0;
    MPI_CHECK_OK(rmc_array_create(8, &rmc_type_i64, RMC_ARRAY_BLOCK, &a));
    MPI_CHECK_OK(rmc_array_create(8, &rmc_type_i64, 0, &b));
    MPI_CHECK_OK(rmc_array_destroy(b)); /* dead before the finalize too */
    MPI_CHECK_OK(rmc_finalize());
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_ALL(rmc_array_get(a, 0, &v) == RMC_ERR_HANDLE &&
                  rmc_array_get(b, 0, &v) == RMC_ERR_HANDLE);
    MPI_CHECK_ALL(rmc_array_destroy(a) == RMC_ERR_HANDLE && rmc_array_size(a) == 0);
}

MPITEST_MAIN("array", cttest_setup, mpitest_teardown_rmc, test_hosted, test_block, test_types,
             test_nb, test_bad, test_handle_across_init)
