/* Internals of comm/strided that need no MPI: normalized strided descriptors, their validation,
 * and the copy / pack / accumulate kernels. Unit-tested without MPI (tests/unit/test_strided.c). */
#ifndef RMCI_STRIDED_IMPL_H
#define RMCI_STRIDED_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "rmc/strided.h"

#define RMCI_SL_MAX RMC_STRIDE_LEVELS_MAX

/* A validated, normalized strided descriptor. Levels whose count is 1 are dropped and levels that
 * are contiguous on both sides are merged into the level below, so `levels` may be smaller than the
 * user's stride_levels (0 = one contiguous chunk). cnt[k] (k = 1..levels) >= 2; ss/ds[k-1] are the
 * source/destination strides of level k. */
typedef struct rmci_sdesc {
    int levels;
    size_t l0;                   /* bytes of one contiguous chunk */
    size_t cnt[RMCI_SL_MAX + 1]; /* cnt[0] = l0 */
    size_t ss[RMCI_SL_MAX];
    size_t ds[RMCI_SL_MAX];
    size_t nchunks;    /* product of cnt[1..levels] */
    size_t bytes;      /* l0 * nchunks */
    size_t sext, dext; /* extent first..last byte + 1 on each side */
} rmci_sdesc_t;

/* Validates an ARMCI-style descriptor and normalizes it into *d. `align` (>= 1) is the alignment
 * every stride must respect and `esize` (>= 1) the size count[0] must be a multiple of, both powers
 * of two (1, 1 for
 * put/get). Returns RMC_ERR_ARG (count NULL, or strides NULL with levels > 0), RMC_ERR_STRIDE
 * (levels outside 0..7, a count < 1, a negative stride, a stride smaller than the extent below it
 * where the level above has count > 1), RMC_ERR_ALIGN (count[0] % esize or a used stride % align),
 * RMC_ERR_TOO_BIG (size_t overflow of the extent). */
rmc_status_t rmci_sdesc_build(rmci_sdesc_t *d, const int *src_stride, const int *dst_stride,
                              const int *count, int levels, size_t align, size_t esize);
/* Returns st after writing the reason into why[n] (when why is not NULL and n > 0). */
rmc_status_t rmci_why_set(rmc_status_t st, char *why, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* rmci_sdesc_build that also writes, on failure, which level / side / value is wrong into
 * why[whylen] (e.g. "dst_stride_arr[1] = 8 is below the 16 bytes a block of level 2 spans"). */
rmc_status_t rmci_sdesc_check(rmci_sdesc_t *d, const int *src_stride, const int *dst_stride,
                              const int *count, int levels, size_t align, size_t esize, char *why,
                              size_t whylen);

/* Dense (packed) strides of a descriptor: dense[k-1] = l0 * cnt[1] * ... * cnt[k-1]. */
void rmci_sdesc_dense(const rmci_sdesc_t *d, size_t dense[RMCI_SL_MAX]);

/* Odometer over the levels [first, d->levels] of a descriptor (level 1 fastest): `a` and `b` are
 * the offsets of the current block on two sides whose level-k strides are sa[k-1] / sb[k-1].
 * rmci_odo_next returns 0 once every block was visited (the offsets are then back at 0). With
 * first = 1 it visits the chunks in the order of the packed layout. */
typedef struct rmci_odo {
    size_t idx[RMCI_SL_MAX + 1];
    size_t a, b;
} rmci_odo_t;

static inline void rmci_odo_init(rmci_odo_t *o)
{
    for (int k = 0; k <= RMCI_SL_MAX; k++)
        o->idx[k] = 0;
    o->a = o->b = 0;
}

static inline int rmci_odo_next(rmci_odo_t *o, const rmci_sdesc_t *d, int first, const size_t *sa,
                                const size_t *sb)
{
    for (int k = first; k <= d->levels; k++) {
        if (++o->idx[k] < d->cnt[k]) {
            o->a += sa[k - 1];
            o->b += sb[k - 1];
            return 1;
        }
        o->a -= sa[k - 1] * (d->cnt[k] - 1);
        o->b -= sb[k - 1] * (d->cnt[k] - 1);
        o->idx[k] = 0;
    }
    return 0;
}

/* Strided copy of the patch: dst (strides ds) <- src (strides ss). Levels 0, 1, 2 specialized. */
void rmci_scopy(char *dst, const size_t *ds, const char *src, const size_t *ss,
                const rmci_sdesc_t *d);
/* Pack the source side of d into a contiguous buffer / unpack a contiguous buffer into the
 * destination side. */
void rmci_spack(char *buf, const char *src, const rmci_sdesc_t *d);
void rmci_sunpack(char *dst, const char *buf, const rmci_sdesc_t *d);

/* The accumulate element types, one table: X(code, T, U, lanes, mpi) with T the (real component)
 * C type, U the type its arithmetic is done in (unsigned for integers: wrap-around, never undefined
 * overflow), lanes 1 for real and 2 for complex types (re, im), mpi the MPI datatype (only MPI code
 * uses that column). Element size = lanes * sizeof(T), alignment = sizeof(T). */
#define RMCI_ACC_TYPES(X)                                                                          \
    X(RMC_ACC_INT32, int32_t, uint32_t, 1, MPI_INT32_T)                                            \
    X(RMC_ACC_INT64, int64_t, uint64_t, 1, MPI_INT64_T)                                            \
    X(RMC_ACC_FLOAT, float, float, 1, MPI_FLOAT)                                                   \
    X(RMC_ACC_DOUBLE, double, double, 1, MPI_DOUBLE)                                               \
    X(RMC_ACC_COMPLEX_FLOAT, float, float, 2, MPI_C_FLOAT_COMPLEX)                                 \
    X(RMC_ACC_COMPLEX_DOUBLE, double, double, 2, MPI_C_DOUBLE_COMPLEX)

/* Element size / alignment of an accumulate type (0 for unknown). */
size_t rmci_acc_esize(rmc_acc_type_t t);
size_t rmci_acc_align(rmc_acc_type_t t);
/* 1 when *scale is the multiplicative identity of the type (or scale is NULL). */
int rmci_acc_scale_is_one(rmc_acc_type_t t, const void *scale);

/* dst[i] += scale * src[i] for n elements (scale NULL or one: plain sum). */
void rmci_acc_kernel(rmc_acc_type_t t, const void *scale, void *dst, const void *src, size_t n);
/* dst[i] = scale * src[i] for n elements. */
void rmci_scale_kernel(rmc_acc_type_t t, const void *scale, void *dst, const void *src, size_t n);

/* Strided accumulate dst-side(d) += scale * src-side(d). */
void rmci_sacc(rmc_acc_type_t t, const void *scale, char *dst, const char *src,
               const rmci_sdesc_t *d);
/* Pack the source side scaled into a contiguous buffer: buf = scale * src-side(d). */
void rmci_spack_scaled(rmc_acc_type_t t, const void *scale, char *buf, const char *src,
                       const rmci_sdesc_t *d);

#endif
