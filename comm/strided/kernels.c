/* Strided copy, pack/unpack and typed accumulate kernels (no MPI). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3") /* let the accumulate loops vectorize whatever the build's -O level */
#endif
#include "config.h"
#include <string.h>
#include "strided_impl.h"

/* ---------------------------------------------------------------------- copy --- */

/* n chunks of l0 bytes, strides dstr / sstr. Small multiples of 8 bytes use 8-byte moves (a
 * fixed-size memcpy is one load/store, no alignment needed on the targets we support). */
static inline void copy1(char *dst, size_t dstr, const char *src, size_t sstr, size_t l0, size_t n)
{
    if (l0 == 8) {
        for (size_t i = 0; i < n; i++)
            memcpy(dst + i * dstr, src + i * sstr, 8);
    } else if (l0 == 16) {
        for (size_t i = 0; i < n; i++)
            memcpy(dst + i * dstr, src + i * sstr, 16);
    } else if (l0 == 4) {
        for (size_t i = 0; i < n; i++)
            memcpy(dst + i * dstr, src + i * sstr, 4);
    } else if ((l0 & 7) == 0 && l0 <= 128) {
        size_t w = l0 >> 3;
        for (size_t i = 0; i < n; i++) {
            char *d = dst + i * dstr;
            const char *s = src + i * sstr;
            for (size_t j = 0; j < w; j++)
                memcpy(d + 8 * j, s + 8 * j, 8);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            memcpy(dst + i * dstr, src + i * sstr, l0);
    }
}

static inline void copy2(char *dst, const size_t *ds, const char *src, const size_t *ss, size_t l0,
                         size_t n1, size_t n2)
{
    for (size_t j = 0; j < n2; j++)
        copy1(dst + j * ds[1], ds[0], src + j * ss[1], ss[0], l0, n1);
}

void rmci_scopy(char *dst, const size_t *ds, const char *src, const size_t *ss,
                const rmci_sdesc_t *d)
{
    size_t l0 = d->l0;
    switch (d->levels) {
    case 0:
        memcpy(dst, src, l0);
        return;
    case 1:
        copy1(dst, ds[0], src, ss[0], l0, d->cnt[1]);
        return;
    case 2:
        copy2(dst, ds, src, ss, l0, d->cnt[1], d->cnt[2]);
        return;
    default:
        break;
    }
    /* odometer over levels 3..L, two-level copies inside */
    rmci_odo_t o;
    rmci_odo_init(&o);
    do
        copy2(dst + o.b, ds, src + o.a, ss, l0, d->cnt[1], d->cnt[2]);
    while (rmci_odo_next(&o, d, 3, ss, ds));
}

void rmci_spack(char *buf, const char *src, const rmci_sdesc_t *d)
{
    size_t dense[RMCI_SL_MAX];
    rmci_sdesc_dense(d, dense);
    rmci_scopy(buf, dense, src, d->ss, d);
}

void rmci_sunpack(char *dst, const char *buf, const rmci_sdesc_t *d)
{
    size_t dense[RMCI_SL_MAX];
    rmci_sdesc_dense(d, dense);
    rmci_scopy(dst, d->ds, buf, dense, d);
}

/* ---------------------------------------------------------------- accumulate --- */

size_t rmci_acc_esize(rmc_acc_type_t t)
{
#define ESIZE_(code, T, U, lanes, mpi)                                                             \
    case code:                                                                                     \
        return lanes * sizeof(T);
    switch (t) {
        RMCI_ACC_TYPES(ESIZE_)
    }
#undef ESIZE_
    return 0;
}

size_t rmci_acc_align(rmc_acc_type_t t)
{
#define ALIGN_(code, T, U, lanes, mpi)                                                             \
    case code:                                                                                     \
        return sizeof(T);
    switch (t) {
        RMCI_ACC_TYPES(ALIGN_)
    }
#undef ALIGN_
    return 0;
}

size_t rmc_acc_type_size(rmc_acc_type_t type)
{
    return rmci_acc_esize(type);
}

int rmci_acc_scale_is_one(rmc_acc_type_t t, const void *scale)
{
    if (!scale)
        return 1;
#define ONE_(code, T, U, lanes, mpi)                                                               \
    case code: {                                                                                   \
        T v[2] = {0, 0};                                                                           \
        memcpy(v, scale, lanes * sizeof(T));                                                       \
        return v[0] == (T)1 && v[1] == (T)0;                                                       \
    }
    switch (t) {
        RMCI_ACC_TYPES(ONE_)
    }
#undef ONE_
    return 0;
}

/* Kernels per type: add (dst += src over n elements), axpy (dst += a * src) and scale (dst = a *
 * src), the last two from one body (ACC 1 / 0); a complex product for two lanes. lanes and ACC are
 * constants: each function is one simple loop. */
#define LINEAR_(name, T, U, lanes, ACC)                                                            \
    static void name(void *dst, const void *src, size_t n, const void *scale)                      \
    {                                                                                              \
        T a[2] = {0, 0};                                                                           \
        memcpy(a, scale, lanes * sizeof(T));                                                       \
        const U ar = (U)a[0], ai = (U)a[1];                                                        \
        U *restrict d = dst;                                                                       \
        const U *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (lanes == 1) {                                                                      \
                U p = (U)(ar * s[i]);                                                              \
                d[i] = ACC ? (U)(d[i] + p) : p;                                                    \
            } else { /* the product first, then the sum (as MPI's scale-then-add path) */          \
                U xr = s[lanes * i], xi = s[lanes * i + 1];                                        \
                U pr = ar * xr - ai * xi, pi = ar * xi + ai * xr;                                  \
                d[lanes * i] = ACC ? d[lanes * i] + pr : pr;                                       \
                d[lanes * i + 1] = ACC ? d[lanes * i + 1] + pi : pi;                               \
            }                                                                                      \
        }                                                                                          \
    }
#define KERNELS_(code, T, U, lanes, mpi)                                                           \
    static void code##_add(void *dst, const void *src, size_t n, const void *scale)                \
    {                                                                                              \
        (void)scale;                                                                               \
        U *restrict d = dst;                                                                       \
        const U *restrict s = src;                                                                 \
        for (size_t i = 0; i < n * lanes; i++)                                                     \
            d[i] = (U)(d[i] + s[i]);                                                               \
    }                                                                                              \
    LINEAR_(code##_axpy, T, U, lanes, 1)                                                           \
    LINEAR_(code##_scale, T, U, lanes, 0)
RMCI_ACC_TYPES(KERNELS_)
#undef KERNELS_
#undef LINEAR_

typedef void (*acc_fn)(void *dst, const void *src, size_t n, const void *scale);

/* Kernel for dst += scale * src. */
static acc_fn acc_select(rmc_acc_type_t t, const void *scale)
{
    int one = rmci_acc_scale_is_one(t, scale);
#define SELECT_(code, T, U, lanes, mpi)                                                            \
    case code:                                                                                     \
        return one ? code##_add : code##_axpy;
    switch (t) {
        RMCI_ACC_TYPES(SELECT_)
    }
#undef SELECT_
    return NULL;
}

static acc_fn scale_select(rmc_acc_type_t t)
{
#define SELECT_(code, T, U, lanes, mpi)                                                            \
    case code:                                                                                     \
        return code##_scale;
    switch (t) {
        RMCI_ACC_TYPES(SELECT_)
    }
#undef SELECT_
    return NULL;
}

void rmci_acc_kernel(rmc_acc_type_t t, const void *scale, void *dst, const void *src, size_t n)
{
    acc_fn f = acc_select(t, scale);
    if (f)
        f(dst, src, n, scale);
}

void rmci_scale_kernel(rmc_acc_type_t t, const void *scale, void *dst, const void *src, size_t n)
{
    if (rmci_acc_scale_is_one(t, scale)) {
        memcpy(dst, src, n * rmci_acc_esize(t));
        return;
    }
    acc_fn f = scale_select(t);
    if (f)
        f(dst, src, n, scale);
}

void rmci_sacc(rmc_acc_type_t t, const void *scale, char *dst, const char *src,
               const rmci_sdesc_t *d)
{
    size_t es = rmci_acc_esize(t);
    acc_fn f = acc_select(t, scale);
    if (!f || !es)
        return;
    size_t n = d->l0 / es;
    if (d->levels == 0) {
        f(dst, src, n, scale);
        return;
    }
    /* level 1 inline, the outer levels by the odometer */
    size_t n1 = d->cnt[1], s0 = d->ss[0], d0 = d->ds[0];
    rmci_odo_t o;
    rmci_odo_init(&o);
    do
        for (size_t i = 0; i < n1; i++)
            f(dst + o.b + i * d0, src + o.a + i * s0, n, scale);
    while (rmci_odo_next(&o, d, 2, d->ss, d->ds));
}

void rmci_spack_scaled(rmc_acc_type_t t, const void *scale, char *buf, const char *src,
                       const rmci_sdesc_t *d)
{
    if (rmci_acc_scale_is_one(t, scale)) {
        rmci_spack(buf, src, d);
        return;
    }
    size_t es = rmci_acc_esize(t);
    acc_fn f = scale_select(t);
    if (!f || !es)
        return;
    size_t n = d->l0 / es;
    rmci_odo_t o;
    rmci_odo_init(&o);
    for (size_t c = 0; c < d->nchunks; c++) {
        f(buf + c * d->l0, src + o.a, n, scale);
        rmci_odo_next(&o, d, 1, d->ss, d->ds);
    }
}
