/* The containers' error reports: which call, which argument, which status. A patch whose leading
 * dimension makes the buffer's strides overflow (they wrapped and moved data to the wrong place),
 * an overlay with a bad parent on one rank (the others waited for it), messages that named an
 * inner function or no argument, and statuses that disagreed with the headers. Every rank agrees on
 * each verdict. RMC_COLL_TIMEOUT bounds a collective a rank fails to meet (a regression fails
 * instead of hanging). */
#define CTTEST_ENV "RMC_COLL_TIMEOUT=30"
#include "cttest.h"
#include <limits.h>
#include <stdarg.h>
#include <string.h>

/* The last error starts with `call` and contains each of the NULL-terminated fragments. */
static int msg_is(const char *call, ...)
{
    const char *m = rmc_last_error();
    int ok = strncmp(m, call, strlen(call)) == 0 && m[strlen(call)] == ':';
    va_list ap;
    va_start(ap, call);
    for (const char *f; (f = va_arg(ap, const char *)) != NULL;)
        ok = ok && strstr(m, f) != NULL;
    va_end(ap);
    if (!ok)
        fprintf(stderr, "[rank %d] message \"%s\" (expected \"%s: ...\")\n", me, m, call);
    return ok;
}

static rmc_matrix_h dense8(void)
{
    rmc_dist_h d;
    int64_t dims[2] = {8, 8};
    rmc_matrix_h m = NULL;
    MPI_CHECK_OK(rmc_dist_regular(2, dims, NULL, NULL, &d));
    MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_F64, &m));
    rmc_dist_free(d);
    double v = 7;
    MPI_CHECK_OK(rmc_matrix_fill(m, &v));
    return m;
}

/* ld = 2^61 + 2 elements of 8 bytes wraps to a stride of 16 bytes: it returned RMC_OK and wrote
 * row 1 at element 2. Every patch call refuses it (RMC_ERR_TOO_BIG naming ld[0]) and moves nothing;
 * INT64_MAX blamed rmc_get_strided with another status. */
static void test_ld_overflow(void **s)
{
    (void)s;
    rmc_matrix_h m = dense8();
    int64_t lo[2] = {0, 0}, hi[2] = {2, 2};
    const int64_t lds[] = {((int64_t)1 << 61) + 2, INT64_MAX, ((int64_t)1 << 62) + 1};
    double one = 1;
    for (size_t i = 0; i < sizeof lds / sizeof lds[0]; i++) {
        int64_t ld[1] = {lds[i]};
        double buf[8];
        for (int j = 0; j < 8; j++)
            buf[j] = -1;
        rmc_status_t st = rmc_matrix_get(m, lo, hi, buf, ld);
        int ok = st == RMC_ERR_TOO_BIG && msg_is("rmc_matrix_get", "ld[0]", "overflows", NULL);
        for (int j = 0; j < 8; j++)
            ok = ok && buf[j] == -1;
        MPI_CHECK_ALL(ok);
        MPI_CHECK_ALL(rmc_matrix_put(m, lo, hi, buf, ld) == RMC_ERR_TOO_BIG &&
                      msg_is("rmc_matrix_put", "ld[0]", NULL));
        MPI_CHECK_ALL(rmc_matrix_acc(m, lo, hi, buf, ld, &one) == RMC_ERR_TOO_BIG &&
                      msg_is("rmc_matrix_acc", "ld[0]", NULL));
        rmc_request_h r = (rmc_request_h)1;
        MPI_CHECK_ALL(rmc_matrix_get_nb(m, lo, hi, buf, ld, &r) == RMC_ERR_TOO_BIG &&
                      r == RMC_REQUEST_NULL && msg_is("rmc_matrix_get_nb", "ld[0]", NULL));
        MPI_CHECK_ALL(rmc_matrix_put_nb(m, lo, hi, buf, ld, &r) == RMC_ERR_TOO_BIG &&
                      msg_is("rmc_matrix_put_nb", "ld[0]", NULL));
        MPI_CHECK_ALL(rmc_matrix_acc_nb(m, lo, hi, buf, ld, &one, &r) == RMC_ERR_TOO_BIG &&
                      msg_is("rmc_matrix_acc_nb", "ld[0]", NULL));
    }
    /* a stride that fits 64 bits but not comm's int: TOO_BIG naming ld[0] too */
    int64_t big[1] = {(int64_t)1 << 28};
    double buf[8];
    MPI_CHECK_ALL(rmc_matrix_get(m, lo, hi, buf, big) == RMC_ERR_TOO_BIG &&
                  msg_is("rmc_matrix_get", "ld[0]", "2 GiB", NULL));
    /* nothing moved: every element still 7 */
    MPI_CHECK_OK(rmc_barrier());
    double all[64];
    int64_t a0[2] = {0, 0}, a1[2] = {8, 8};
    MPI_CHECK_OK(rmc_matrix_get(m, a0, a1, all, NULL));
    int ok = 1;
    for (int j = 0; j < 64; j++)
        ok = ok && all[j] == 7;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_OK(rmc_matrix_destroy(m));
}

/* One rank passes a NULL parent: it returned at once, the others waited in the creation for ever
 * (RMC_COLL_TIMEOUT=0), and after a timeout the container layer refused every later collective.
 * Now every rank fails (the bad one naming the parent), nothing exists, and collectives go on. */
static void test_overlay_bad_parent(void **s)
{
    (void)s;
    rmc_matrix_h p = dense8(), x = (rmc_matrix_h)1;
    rmc_dist_h d;
    int64_t dims[2] = {8, 8};
    MPI_CHECK_OK(rmc_dist_regular(2, dims, NULL, NULL, &d));
    int bad = np - 1;
    rmc_status_t st = rmc_matrix_create_overlay(me == bad ? NULL : p, d, RMC_ELEM_F64, 0, &x);
    MPI_CHECK_ALL(st == RMC_ERR_HANDLE && x == NULL);
    MPI_CHECK_ALL(me == bad ? msg_is("rmc_matrix_create_overlay", "NULL parent matrix handle", NULL)
                            : msg_is("rmc_matrix_create_overlay", "another rank failed", NULL));
    /* every rank with a NULL parent: the same */
    MPI_CHECK_ALL(rmc_matrix_create_overlay(NULL, d, RMC_ELEM_F64, 0, &x) == RMC_ERR_HANDLE &&
                  x == NULL && msg_is("rmc_matrix_create_overlay", "parent", NULL));
    /* the layer still takes collectives: a good overlay, a fill through it */
    MPI_CHECK_OK(rmc_matrix_create_overlay(p, d, RMC_ELEM_F64, 0, &x));
    double v = 3, got = 0;
    MPI_CHECK_OK(rmc_matrix_fill(x, &v));
    int64_t idx[2] = {7, 7};
    MPI_CHECK_OK(rmc_matrix_elem_get(p, idx, &got));
    MPI_CHECK_ALL(got == 3);
    MPI_CHECK_OK(rmc_matrix_destroy(x));
    /* a destroyed parent (of all ranks) on every rank: RMC_ERR_HANDLE everywhere */
    MPI_CHECK_OK(rmc_matrix_destroy(p));
    MPI_CHECK_ALL(rmc_matrix_create_overlay(p, d, RMC_ELEM_F64, 0, &x) == RMC_ERR_HANDLE &&
                  x == NULL && msg_is("rmc_matrix_create_overlay", "destroyed", NULL));
    rmc_dist_free(d);
    MPI_CHECK_OK(rmc_barrier());
}

static int visit(const void *k, const void *v, void *arg)
{
    (void)k;
    (void)v;
    (void)arg;
    return 0;
}

/* Failures of the comm call under a container call were reported under the comm call's name. */
static void test_inner_names(void **s)
{
    (void)s;
    rmc_gptr_t g;
    MPI_CHECK_OK(rmc_alloc(64, &g));
    int64_t v;
    MPI_CHECK_ALL(rmc_gptr_put(g, NULL, 8) == RMC_ERR_ARG &&
                  msg_is("rmc_gptr_put", "rmc_put", "NULL", NULL));
    MPI_CHECK_ALL(rmc_gptr_get(NULL, g, 8) == RMC_ERR_ARG &&
                  msg_is("rmc_gptr_get", "rmc_get", "NULL", NULL));
    MPI_CHECK_ALL(rmc_gptr_fetch_add_i64(g, 1, NULL) != RMC_OK &&
                  msg_is("rmc_gptr_fetch_add_i64", "rmc_amo_fetch_add_i64", NULL));
    MPI_CHECK_ALL(rmc_gptr_load_i64(g, NULL) != RMC_OK &&
                  msg_is("rmc_gptr_load_i64", "rmc_amo_load_i64", "NULL", NULL));
    MPI_CHECK_OK(rmc_gptr_load_i64(g, &v));
    MPI_CHECK_OK(rmc_free(g));

    rmc_kv_h kv = (rmc_kv_h)1;
    MPI_CHECK_ALL(rmc_kv_create(0, &rmc_type_i64, &rmc_type_i64, 0, &kv) == RMC_ERR_ARG &&
                  kv == NULL && msg_is("rmc_kv_create", "capacity 0", NULL));
    MPI_CHECK_OK(rmc_kv_create(16, &rmc_type_i64, &rmc_type_i64, 0, &kv));
    int stopped = 0;
    MPI_CHECK_ALL(rmc_kv_local_foreach(kv, NULL, NULL, &stopped) == RMC_ERR_ARG &&
                  msg_is("rmc_kv_local_foreach", NULL));
    MPI_CHECK_OK(rmc_kv_local_foreach(kv, visit, NULL, &stopped));
    MPI_CHECK_OK(rmc_kv_destroy(kv));
}

/* Calls with several handles or patches named none; a disagreement on a creation's distribution
 * named "argument 3" (an index into an internal array); RMC_ELEM_OPAQUE without a size said
 * "element size 0". */
static void test_which_argument(void **s)
{
    (void)s;
    rmc_matrix_h a = dense8(), b = dense8(), c = dense8();
    double one = 1, zero = 0;
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, a, NULL, &zero, c, RMC_GEMM_AUTO, NULL) ==
                      RMC_ERR_HANDLE &&
                  msg_is("rmc_matrix_gemm", "B: NULL matrix handle", NULL));
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, a, b, &zero, NULL, RMC_GEMM_AUTO, NULL) ==
                      RMC_ERR_HANDLE &&
                  msg_is("rmc_matrix_gemm", "C: NULL matrix handle", NULL));
    MPI_CHECK_ALL(rmc_matrix_gemm('N', 'N', &one, NULL, b, &zero, c, RMC_GEMM_AUTO, NULL) ==
                      RMC_ERR_HANDLE &&
                  msg_is("rmc_matrix_gemm", "A: NULL matrix handle", NULL));
    int64_t lo[2] = {0, 0}, hi[2] = {8, 8};
    MPI_CHECK_ALL(rmc_matrix_gemm_patch('N', 'N', &one, a, lo, hi, b, lo, hi, &zero, c, lo, NULL,
                                        RMC_GEMM_AUTO, NULL) == RMC_ERR_ARG &&
                  msg_is("rmc_matrix_gemm_patch", "NULL chi", NULL));
    MPI_CHECK_ALL(rmc_matrix_gemm_patch('N', 'N', &one, a, lo, hi, NULL, lo, hi, &zero, c, lo, hi,
                                        RMC_GEMM_AUTO, NULL) == RMC_ERR_HANDLE &&
                  msg_is("rmc_matrix_gemm_patch", "B: NULL matrix handle", NULL));
    MPI_CHECK_OK(rmc_matrix_gemm('N', 'N', &one, a, b, &zero, c, RMC_GEMM_AUTO, NULL));

    rmc_dist_h d, d2;
    int64_t dims[2] = {8, 8}, dims2[2] = {8, 16};
    MPI_CHECK_OK(rmc_dist_regular(2, dims, NULL, NULL, &d));
    MPI_CHECK_OK(rmc_dist_regular(2, dims2, NULL, NULL, &d2));
    rmc_spmatrix_h sa;
    MPI_CHECK_OK(rmc_spmatrix_create(d, 0, &sa));
    MPI_CHECK_ALL(rmc_spmatrix_spmm(1, sa, NULL, 0, c, RMC_GEMM_AUTO, NULL) == RMC_ERR_HANDLE &&
                  msg_is("rmc_spmatrix_spmm", "B: NULL matrix handle", NULL));
    MPI_CHECK_ALL(rmc_spmatrix_spmm(1, NULL, b, 0, c, RMC_GEMM_AUTO, NULL) == RMC_ERR_HANDLE &&
                  msg_is("rmc_spmatrix_spmm", "A: NULL sparse matrix handle", NULL));
    MPI_CHECK_ALL(rmc_spmatrix_spgemm(sa, sa, NULL, RMC_GEMM_AUTO, RMC_SPA_AUTO, NULL) ==
                      RMC_ERR_HANDLE &&
                  msg_is("rmc_spmatrix_spgemm", "C: NULL sparse matrix handle", NULL));

    /* the ranks disagree on the distribution (np >= 2): named */
    rmc_matrix_h x = (rmc_matrix_h)1;
    if (np > 1) {
        MPI_CHECK_ALL(rmc_matrix_create(me == 0 ? d : d2, RMC_ELEM_F64, &x) == RMC_ERR_ARG &&
                      x == NULL &&
                      msg_is("rmc_matrix_create", "different distributions (d)", NULL));
        MPI_CHECK_ALL(
            rmc_matrix_create(d, me == 0 ? RMC_ELEM_F64 : RMC_ELEM_F32, &x) == RMC_ERR_ARG &&
            x == NULL && msg_is("rmc_matrix_create", "different element types (e)", NULL));
    }
    MPI_CHECK_ALL(rmc_matrix_create(d, RMC_ELEM_OPAQUE, &x) == RMC_ERR_ARG && x == NULL &&
                  msg_is("rmc_matrix_create", "RMC_ELEM_OPAQUE", "rmc_matrix_create_opaque", NULL));
    MPI_CHECK_OK(rmc_matrix_create(d, RMC_ELEM_F64, &x)); /* collectives go on */
    MPI_CHECK_OK(rmc_matrix_destroy(x));
    MPI_CHECK_OK(rmc_spmatrix_destroy(sa));
    rmc_dist_free(d);
    rmc_dist_free(d2);
    MPI_CHECK_OK(rmc_matrix_destroy(a));
    MPI_CHECK_OK(rmc_matrix_destroy(b));
    MPI_CHECK_OK(rmc_matrix_destroy(c));
}

/* Statuses that disagreed with the headers, and a message about a negative n. */
static void test_statuses(void **s)
{
    (void)s;
    rmc_dist_h d;
    int64_t dims[2] = {8, 8};
    MPI_CHECK_OK(rmc_dist_regular(2, dims, NULL, NULL, &d));
    rmc_spmatrix_h sa;
    MPI_CHECK_OK(rmc_spmatrix_create(d, 0, &sa));
    rmc_csr_t out;
    rmc_csr_init(&out, 0);
    /* a root outside the ranks: RMC_ERR_RANK, as every other rank argument */
    MPI_CHECK_ALL(rmc_spmatrix_scatter(sa, np, NULL) == RMC_ERR_RANK &&
                  msg_is("rmc_spmatrix_scatter", "root", NULL));
    MPI_CHECK_ALL(rmc_spmatrix_scatter(sa, -1, NULL) == RMC_ERR_RANK);
    MPI_CHECK_ALL(rmc_spmatrix_gather(sa, np, &out) == RMC_ERR_RANK &&
                  msg_is("rmc_spmatrix_gather", "root", NULL));
    MPI_CHECK_ALL(rmc_spmatrix_gather(sa, -1, &out) == RMC_ERR_RANK);
    MPI_CHECK_OK(rmc_spmatrix_gather(sa, 0, me == 0 ? &out : NULL));
    rmc_csr_free(&out);
    MPI_CHECK_OK(rmc_spmatrix_destroy(sa));

    /* rmc_dist_set_ranks with a negative n */
    MPI_CHECK_ALL(rmc_dist_set_ranks(d, NULL, -1) == RMC_ERR_ARG &&
                  msg_is("rmc_dist_set_ranks", "n = -1 is negative", NULL));
    rmc_dist_free(d);

    /* a global pointer whose reserved field is not 0: refused by every call taking one */
    rmc_gptr_t g;
    MPI_CHECK_OK(rmc_alloc(64, &g));
    rmc_gptr_t bad = g;
    bad.zero_ = 1;
    void *addr = (void *)1;
    int64_t v = 0;
    MPI_CHECK_ALL(rmc_gptr_addr(bad, &addr) == RMC_ERR_ARG && addr == NULL &&
                  msg_is("rmc_gptr_addr", "zero_", NULL));
    MPI_CHECK_ALL(rmc_gptr_put(bad, &v, 8) == RMC_ERR_ARG && msg_is("rmc_gptr_put", "zero_", NULL));
    MPI_CHECK_ALL(rmc_gptr_fetch_add_i64(bad, 1, &v) == RMC_ERR_ARG &&
                  msg_is("rmc_gptr_fetch_add_i64", "zero_", NULL));
    MPI_CHECK_ALL(rmc_gptr_is_local(bad) == RMC_ERR_ARG);
    MPI_CHECK_ALL(rmc_gptr_local(bad) == NULL);
    MPI_CHECK_OK(rmc_gptr_addr(g, &addr));
    MPI_CHECK_OK(rmc_free(g));

    /* sizes that overflow: RMC_ERR_TOO_BIG, as array.h and queue.h say */
    rmc_array_h a = (rmc_array_h)1;
    MPI_CHECK_ALL(rmc_array_create(SIZE_MAX / 4, &rmc_type_i64, 0, &a) == RMC_ERR_TOO_BIG &&
                  a == NULL && msg_is("rmc_array_create", "n = ", NULL));
    MPI_CHECK_ALL(rmc_array_create(((size_t)1 << 48) + 1, &rmc_type_i64, 0, &a) == RMC_ERR_TOO_BIG);
    MPI_CHECK_ALL(rmc_array_create(SIZE_MAX, &rmc_type_i64, RMC_ARRAY_BLOCK, &a) ==
                  RMC_ERR_TOO_BIG);
    MPI_CHECK_ALL(rmc_array_create(0, &rmc_type_i64, 0, &a) == RMC_ERR_ARG);
    rmc_queue_h q = (rmc_queue_h)1;
    MPI_CHECK_ALL(rmc_queue_create(RMC_QUEUE_FAST, 0, SIZE_MAX / 4, &rmc_type_i64, &q) ==
                      RMC_ERR_TOO_BIG &&
                  q == NULL && msg_is("rmc_queue_create", "capacity", NULL));
    MPI_CHECK_ALL(rmc_queue_create(RMC_QUEUE_FAST, 0, ((size_t)1 << 40) + 1, &rmc_type_i64, &q) ==
                  RMC_ERR_TOO_BIG);
    MPI_CHECK_ALL(rmc_queue_create(RMC_QUEUE_FAST, 0, 0, &rmc_type_i64, &q) == RMC_ERR_ARG);
    MPI_CHECK_OK(rmc_queue_create(RMC_QUEUE_FAST, 0, 4, &rmc_type_i64, &q));
    MPI_CHECK_ALL(rmc_queue_resize(q, SIZE_MAX / 4) == RMC_ERR_TOO_BIG &&
                  msg_is("rmc_queue_resize", "new_capacity", NULL));
    MPI_CHECK_ALL(rmc_queue_resize(q, 0) == RMC_ERR_ARG && rmc_queue_capacity(q) == 4);
    MPI_CHECK_OK(rmc_queue_destroy(q));
}

MPITEST_MAIN("container errors", cttest_setup, mpitest_teardown_rmc, test_ld_overflow,
             test_overlay_bad_parent, test_inner_names, test_which_argument, test_statuses)
