/* Bad input to the strided / vector / accumulate API: every case gets its specific status, no
 * request is created, and nothing moves: the target's memory (checked by its owner after a
 * barrier) and the local destination of gets stay byte for byte unchanged. Every method in turn. */
#include "mpitest.h"
#include "test_strided_util.h"

#define REG 4096

static int me, np;
static void *bases[64];
static rmc_region_h reg;

static int setup(void **state)
{
    me = mpitest_rank_;
    np = mpitest_nranks_;
    if (mpitest_setup_rmc(state) != 0)
        return -1;
    return rmc_region_alloc(REG, bases, &reg) == RMC_OK ? 0 : -1;
}

static int teardown(void **state)
{
    rmc_region_free(reg);
    return mpitest_teardown_rmc(state);
}

static void fill_own(void)
{
    for (size_t i = 0; i < REG; i++)
        ((unsigned char *)bases[me])[i] = mpitest_pat(me, i, 77);
}

static int own_intact(void)
{
    for (size_t i = 0; i < REG; i++)
        if (((unsigned char *)bases[me])[i] != mpitest_pat(me, i, 77))
            return 0;
    return 1;
}

typedef struct expect {
    int line;
    rmc_status_t want, got;
} expect_t;

static int nbad;
#define EXPECT(call, status)                                                                       \
    do {                                                                                           \
        rmc_status_t got_ = (call);                                                                \
        if (got_ != (status)) {                                                                    \
            fprintf(stderr, "[rank %d] line %d: %s -> %s, expected %s\n", me, __LINE__, #call,     \
                    rmc_status_string(got_), rmc_status_string(status));                           \
            nbad++;                                                                                \
        }                                                                                          \
    } while (0)

/* ... and rmc_last_error contains text (which call, which argument, its value) */
#define EXPECT_MSG(call, status, text)                                                             \
    do {                                                                                           \
        EXPECT(call, status);                                                                      \
        if (!strstr(rmc_last_error(), (text))) {                                                   \
            fprintf(stderr, "[rank %d] line %d: message \"%s\" lacks \"%s\"\n", me, __LINE__,      \
                    rmc_last_error(), (text));                                                     \
            nbad++;                                                                                \
        }                                                                                          \
    } while (0)

/* nb form must leave *req == RMC_REQUEST_NULL on error */
#define EXPECT_NB(call, status)                                                                    \
    do {                                                                                           \
        q = (rmc_request_h)(uintptr_t)0x1;                                                         \
        EXPECT(call, status);                                                                      \
        if (q != RMC_REQUEST_NULL) {                                                               \
            fprintf(stderr, "[rank %d] line %d: request not cleared\n", me, __LINE__);             \
            nbad++;                                                                                \
        }                                                                                          \
    } while (0)

static void bad_strided(int tgt)
{
    char src[1024], dst[1024], dst0[1024];
    for (int i = 0; i < 1024; i++)
        src[i] = dst[i] = dst0[i] = (char)(i * 3 + 1);
    char *rb = bases[tgt];
    rmc_request_h q;
    int c2[3] = {8, 4, 2}, ls[2] = {8, 32}, rs[2] = {16, 64};

    /* levels */
    EXPECT(rmc_put_strided(src, ls, rb, rs, c2, -1, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_strided(src, ls, rb, rs, c2, 8, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_get_strided(rb, rs, dst, ls, c2, 8, tgt), RMC_ERR_STRIDE);
    EXPECT_NB(rmc_put_strided_nb(src, ls, rb, rs, c2, 9, tgt, &q), RMC_ERR_STRIDE);
    /* NULL descriptor arrays / pointers */
    EXPECT(rmc_put_strided(src, ls, rb, rs, NULL, 2, tgt), RMC_ERR_ARG);
    EXPECT(rmc_put_strided(src, NULL, rb, rs, c2, 2, tgt), RMC_ERR_ARG);
    EXPECT(rmc_get_strided(rb, NULL, dst, ls, c2, 2, tgt), RMC_ERR_ARG);
    EXPECT(rmc_get_strided(rb, rs, dst, NULL, c2, 2, tgt), RMC_ERR_ARG);
    EXPECT(rmc_put_strided(NULL, ls, rb, rs, c2, 2, tgt), RMC_ERR_ARG);
    EXPECT(rmc_get_strided(rb, rs, NULL, ls, c2, 2, tgt), RMC_ERR_ARG);
    EXPECT_NB(rmc_get_strided_nb(rb, rs, NULL, ls, c2, 2, tgt, &q), RMC_ERR_ARG);
    /* zero / negative counts at every level */
    for (int k = 0; k < 3; k++) {
        int c[3] = {8, 4, 2};
        c[k] = 0;
        EXPECT(rmc_put_strided(src, ls, rb, rs, c, 2, tgt), RMC_ERR_STRIDE);
        EXPECT(rmc_get_strided(rb, rs, dst, ls, c, 2, tgt), RMC_ERR_STRIDE);
        c[k] = -1;
        EXPECT(rmc_put_strided(src, ls, rb, rs, c, 2, tgt), RMC_ERR_STRIDE);
        EXPECT_NB(rmc_acc_strided_nb(RMC_ACC_DOUBLE, NULL, src, ls, rb, rs, c, 2, tgt, &q),
                  RMC_ERR_STRIDE);
    }
    /* strides: negative, smaller than the chunk, smaller than the block below */
    int neg[2] = {16, -64}, small0[2] = {4, 64}, small1[2] = {16, 56}; /* block: 3*16+8 = 56 ok */
    int small1b[2] = {16, 55};
    EXPECT(rmc_put_strided(src, ls, rb, neg, c2, 2, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_strided(src, neg, rb, rs, c2, 2, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_strided(src, ls, rb, small0, c2, 2, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_get_strided(rb, small0, dst, ls, c2, 2, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_strided(src, ls, rb, small1b, c2, 2, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_get_strided(rb, rs, dst, small1b, c2, 2, tgt), RMC_ERR_STRIDE);
    (void)small1;
    /* rank */
    EXPECT(rmc_put_strided(src, ls, rb, rs, c2, 2, -1), RMC_ERR_RANK);
    EXPECT(rmc_get_strided(rb, rs, dst, ls, c2, 2, np), RMC_ERR_RANK);
    EXPECT_NB(rmc_put_strided_nb(src, ls, rb, rs, c2, 2, np, &q), RMC_ERR_RANK);
    /* patch leaving the region: starts inside, ends past the end */
    int cl[3] = {8, 4, 17};
    EXPECT(rmc_put_strided(src, ls, rb + REG - 1000, rs, cl, 2, tgt), RMC_ERR_BOUNDS);
    EXPECT(rmc_get_strided(rb + REG - 1000, rs, dst, ls, cl, 2, tgt), RMC_ERR_BOUNDS);
    EXPECT(rmc_put_strided(src, ls, rb + REG - 8, rs, c2, 2, tgt), RMC_ERR_BOUNDS);
    EXPECT_NB(rmc_get_strided_nb(rb + REG - 8, rs, dst, ls, c2, 2, tgt, &q), RMC_ERR_BOUNDS);
    /* remote address in no region */
    EXPECT(rmc_put_strided(src, ls, dst0, rs, c2, 2, tgt), RMC_ERR_NOT_REGION);
    EXPECT(rmc_get_strided(dst0, rs, dst, ls, c2, 2, tgt), RMC_ERR_NOT_REGION);
    /* 2-D: zero rows / row bytes, ld smaller than a row */
    EXPECT(rmc_put_2d(src, 8, rb, 64, 0, 8, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_2d(src, 8, rb, 64, 4, 0, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_2d(src, 8, rb, 4, 4, 8, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_get_2d(rb, 64, dst, 4, 4, 8, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_get_2d(rb + REG - 64, 64, dst, 8, 4, 8, tgt), RMC_ERR_BOUNDS);
    EXPECT_NB(rmc_put_2d_nb(src, 8, rb, 64, 4, 8, np + 3, &q), RMC_ERR_RANK);

    /* accumulate: type, alignment of addresses / sizes / strides */
    int ca[2] = {16, 4}, sa[1] = {16}, ra[1] = {64};
    double dsrc[64];
    for (int i = 0; i < 64; i++)
        dsrc[i] = 1.0;
    EXPECT(rmc_acc_strided((rmc_acc_type_t)0, NULL, dsrc, sa, rb, ra, ca, 1, tgt), RMC_ERR_TYPE);
    EXPECT(rmc_acc_strided((rmc_acc_type_t)77, NULL, dsrc, sa, rb, ra, ca, 1, tgt), RMC_ERR_TYPE);
    EXPECT(rmc_acc_strided(RMC_ACC_DOUBLE, NULL, dsrc, sa, rb + 4, ra, ca, 1, tgt), RMC_ERR_ALIGN);
    EXPECT(rmc_acc_strided(RMC_ACC_DOUBLE, NULL, (char *)dsrc + 1, sa, rb, ra, ca, 1, tgt),
           RMC_ERR_ALIGN);
    int c12[2] = {12, 4};
    EXPECT(rmc_acc_strided(RMC_ACC_DOUBLE, NULL, dsrc, sa, rb, ra, c12, 1, tgt), RMC_ERR_ALIGN);
    int ra20[1] = {20};
    EXPECT(rmc_acc_strided(RMC_ACC_DOUBLE, NULL, dsrc, sa, rb, ra20, ca, 1, tgt), RMC_ERR_ALIGN);
    int c24[2] = {24, 2}, s24[1] = {24};
    EXPECT(rmc_acc_strided(RMC_ACC_COMPLEX_DOUBLE, NULL, dsrc, s24, rb, s24, c24, 1, tgt),
           RMC_ERR_ALIGN);
    EXPECT(rmc_acc_strided(RMC_ACC_INT32, NULL, dsrc, sa, rb + 2, ra, ca, 1, tgt), RMC_ERR_ALIGN);
    EXPECT_NB(rmc_acc_strided_nb(RMC_ACC_FLOAT, NULL, dsrc, sa, rb + 1, ra, ca, 1, tgt, &q),
              RMC_ERR_ALIGN);
    EXPECT(rmc_acc_strided(RMC_ACC_DOUBLE, NULL, dsrc, sa, rb + REG - 64, ra, ca, 1, tgt),
           RMC_ERR_BOUNDS);
    EXPECT(rmc_acc_2d(RMC_ACC_DOUBLE, NULL, dsrc, 16, rb, 8, 4, 16, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_acc(RMC_ACC_DOUBLE, NULL, dsrc, rb, 12, tgt), RMC_ERR_ALIGN);
    EXPECT(rmc_acc(RMC_ACC_DOUBLE, NULL, dsrc, rb + 8, 8, -2), RMC_ERR_RANK);
    EXPECT(rmc_acc(RMC_ACC_DOUBLE, NULL, dsrc, rb + 4, 8, tgt), RMC_ERR_ALIGN);
    EXPECT(rmc_acc(RMC_ACC_INT64, NULL, NULL, rb, 8, tgt), RMC_ERR_ARG);
    EXPECT(rmc_acc((rmc_acc_type_t)-5, NULL, dsrc, rb, 8, tgt), RMC_ERR_TYPE);
    EXPECT(rmc_acc(RMC_ACC_DOUBLE, NULL, dsrc, rb + REG - 8, 16, tgt), RMC_ERR_BOUNDS);
    EXPECT(rmc_acc(RMC_ACC_DOUBLE, NULL, dsrc, dsrc, 16, tgt), RMC_ERR_NOT_REGION);
    EXPECT_NB(rmc_acc_nb(RMC_ACC_COMPLEX_FLOAT, NULL, dsrc, rb, 4, tgt, &q), RMC_ERR_ALIGN);
    /* bytes == 0 is a no-op */
    EXPECT(rmc_acc(RMC_ACC_DOUBLE, NULL, NULL, NULL, 0, tgt), RMC_OK);

    /* vector */
    void *sp[4] = {src, src + 16, src + 32, src + 48};
    void *dp[4] = {rb, rb + 64, rb + 128, rb + REG - 8}; /* last segment crosses the end */
    rmc_iov_t v = {sp, dp, 4, 16};
    EXPECT_MSG(rmc_put_vector(&v, 1, tgt), RMC_ERR_BOUNDS,
               "rmc_put_vector: bad vector descriptor for rank");
    EXPECT_MSG(rmc_put_vector(&v, 1, tgt), RMC_ERR_BOUNDS, "iov[0].dst[3] = ");
    EXPECT_MSG(rmc_put_vector(&v, 1, tgt), RMC_ERR_BOUNDS, "runs past the end of its region");
    EXPECT(rmc_acc_vector(RMC_ACC_DOUBLE, NULL, &v, 1, tgt), RMC_ERR_BOUNDS);
    EXPECT_NB(rmc_put_vector_nb(&v, 1, tgt, &q), RMC_ERR_BOUNDS);
    void *gsrc[4] = {rb, rb + 64, rb + 128, dst0}; /* last remote address in no region */
    void *gdst[4] = {dst, dst + 16, dst + 32, dst + 48};
    rmc_iov_t g = {gsrc, gdst, 4, 16};
    EXPECT_MSG(rmc_get_vector(&g, 1, tgt), RMC_ERR_NOT_REGION, "iov[0].src[3] = ");
    EXPECT_NB(rmc_get_vector_nb(&g, 1, tgt, &q), RMC_ERR_NOT_REGION);
    v.count = 3; /* valid now */
    rmc_iov_t two[2] = {v, v};
    two[1].count = 0;
    EXPECT(rmc_put_vector(two, 2, tgt), RMC_ERR_STRIDE);
    two[1].count = -4;
    EXPECT_MSG(rmc_put_vector(two, 2, tgt), RMC_ERR_STRIDE, "iov[1] has count -4, bytes 16");
    two[1].count = 3;
    two[1].bytes = 0;
    EXPECT(rmc_put_vector(two, 2, tgt), RMC_ERR_STRIDE);
    two[1].bytes = 16;
    two[1].dst = NULL;
    EXPECT_MSG(rmc_put_vector(two, 2, tgt), RMC_ERR_ARG, "iov[1].dst is NULL");
    void *dnull[3] = {rb, NULL, rb + 64};
    two[1].dst = dnull;
    EXPECT_MSG(rmc_put_vector(two, 2, tgt), RMC_ERR_ARG, "iov[1].dst[1] is NULL");
    two[1].dst = dp;
    EXPECT(rmc_put_vector(NULL, 1, tgt), RMC_ERR_ARG);
    EXPECT(rmc_put_vector(two, 0, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_vector(two, -1, tgt), RMC_ERR_STRIDE);
    EXPECT(rmc_put_vector(two, 2, np), RMC_ERR_RANK);
    rmc_iov_t odd = {sp, dp, 3, 12};
    EXPECT_MSG(rmc_acc_vector(RMC_ACC_DOUBLE, NULL, &odd, 1, tgt), RMC_ERR_ALIGN,
               "iov[0].bytes = 12 is not a multiple of the element size 8");
    EXPECT(rmc_acc_vector((rmc_acc_type_t)0, NULL, &v, 1, tgt), RMC_ERR_TYPE);
    void *dmis[3] = {rb, rb + 66, rb + 128};
    rmc_iov_t mis = {sp, dmis, 3, 16};
    EXPECT_NB(rmc_acc_vector_nb(RMC_ACC_INT64, NULL, &mis, 1, tgt, &q), RMC_ERR_ALIGN);
    EXPECT_MSG(rmc_acc_vector(RMC_ACC_INT64, NULL, &mis, 1, tgt), RMC_ERR_ALIGN,
               "iov[0].dst[1] = ");

    /* nothing arrived in the local destination of the failed gets */
    if (memcmp(dst, dst0, sizeof dst) != 0) {
        fprintf(stderr, "[rank %d] failed get changed the local buffer\n", me);
        nbad++;
    }
}

static void test_bad_everything(void **s)
{
    (void)s;
    static const rmc_strided_method_t m[4] = {RMC_STRIDED_AUTO, RMC_STRIDED_DATATYPE,
                                              RMC_STRIDED_LIST, RMC_STRIDED_PACK};
    fill_own();
    MPI_CHECK_OK(rmc_barrier());
    nbad = 0;
    for (int i = 0; i < 4; i++) {
        MPI_CHECK_OK(rmc_strided_method_set(m[i]));
        bad_strided((me + 1) % np);
        bad_strided(me);
    }
    MPI_CHECK_OK(rmc_fence_all());
    MPI_CHECK_ALL(nbad == 0);
    MPI_CHECK_OK(rmc_barrier());
    MPI_CHECK_ALL(own_intact());
    MPI_CHECK_OK(rmc_strided_method_set(RMC_STRIDED_AUTO));
    MPI_CHECK_OK(rmc_barrier());
}

/* After all that, good operations still work (no state was left half-done). */
static void test_good_after_bad(void **s)
{
    (void)s;
    int tgt = (me + 1) % np;
    char src[256], back[256];
    for (int i = 0; i < 256; i++)
        src[i] = (char)(i ^ me);
    int c[2] = {16, 16}, ls[1] = {16}, rs[1] = {64};
    MPI_CHECK_OK(rmc_put_strided(src, ls, (char *)bases[tgt] + 1024, rs, c, 1, tgt));
    MPI_CHECK_OK(rmc_get_strided((char *)bases[tgt] + 1024, rs, back, ls, c, 1, tgt));
    MPI_CHECK_ALL(memcmp(src, back, sizeof src) == 0);
    MPI_CHECK_OK(rmc_barrier());
}

/* Before rmc_init / after rmc_finalize: RMC_ERR_NOT_INIT. */
static void test_not_init(void **s)
{
    (void)s;
    MPI_CHECK_OK(rmc_region_free(reg));
    MPI_CHECK_OK(rmc_finalize());
    char b[64];
    int c[2] = {8, 2}, st[1] = {8};
    rmc_request_h q;
    rmc_iov_t v = {NULL, NULL, 1, 8};
    int ok = rmc_put_strided(b, st, b, st, c, 1, 0) == RMC_ERR_NOT_INIT &&
             rmc_get_strided_nb(b, st, b, st, c, 1, 0, &q) == RMC_ERR_NOT_INIT &&
             q == RMC_REQUEST_NULL &&
             rmc_acc(RMC_ACC_DOUBLE, NULL, b, b, 8, 0) == RMC_ERR_NOT_INIT &&
             rmc_put_2d(b, 8, b, 8, 1, 8, 0) == RMC_ERR_NOT_INIT &&
             rmc_get_vector(&v, 1, 0) == RMC_ERR_NOT_INIT;
    MPI_CHECK_ALL(ok);
    MPI_CHECK_OK(rmc_init(MPI_COMM_WORLD));
    MPI_CHECK_OK(rmc_region_alloc(REG, bases, &reg));
}

MPITEST_MAIN("strided bad input", setup, teardown, test_bad_everything, test_good_after_bad,
             test_not_init)
