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
    size_t idx[RMCI_SL_MAX + 1] = {0};
    size_t so = 0, dof = 0;
    for (;;) {
        copy2(dst + dof, ds, src + so, ss, l0, d->cnt[1], d->cnt[2]);
        int k = 3;
        for (; k <= d->levels; k++) {
            if (++idx[k] < d->cnt[k]) {
                so += ss[k - 1];
                dof += ds[k - 1];
                break;
            }
            so -= ss[k - 1] * (d->cnt[k] - 1);
            dof -= ds[k - 1] * (d->cnt[k] - 1);
            idx[k] = 0;
        }
        if (k > d->levels)
            return;
    }
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
    switch (t) {
    case RMC_ACC_INT32:
    case RMC_ACC_FLOAT:
        return 4;
    case RMC_ACC_INT64:
    case RMC_ACC_DOUBLE:
    case RMC_ACC_COMPLEX_FLOAT:
        return 8;
    case RMC_ACC_COMPLEX_DOUBLE:
        return 16;
    }
    return 0;
}

size_t rmci_acc_align(rmc_acc_type_t t)
{
    switch (t) {
    case RMC_ACC_COMPLEX_FLOAT:
        return 4;
    case RMC_ACC_COMPLEX_DOUBLE:
        return 8;
    default:
        return rmci_acc_esize(t);
    }
}

size_t rmc_acc_type_size(rmc_acc_type_t type)
{
    return rmci_acc_esize(type);
}

int rmci_acc_scale_is_one(rmc_acc_type_t t, const void *scale)
{
    if (!scale)
        return 1;
    switch (t) {
    case RMC_ACC_INT32: {
        int32_t v;
        memcpy(&v, scale, sizeof v);
        return v == 1;
    }
    case RMC_ACC_INT64: {
        int64_t v;
        memcpy(&v, scale, sizeof v);
        return v == 1;
    }
    case RMC_ACC_FLOAT: {
        float v;
        memcpy(&v, scale, sizeof v);
        return v == 1.0f;
    }
    case RMC_ACC_DOUBLE: {
        double v;
        memcpy(&v, scale, sizeof v);
        return v == 1.0;
    }
    case RMC_ACC_COMPLEX_FLOAT: {
        float v[2];
        memcpy(v, scale, sizeof v);
        return v[0] == 1.0f && v[1] == 0.0f;
    }
    case RMC_ACC_COMPLEX_DOUBLE: {
        double v[2];
        memcpy(v, scale, sizeof v);
        return v[0] == 1.0 && v[1] == 0.0;
    }
    }
    return 0;
}

/* Integer kernels use unsigned arithmetic: wrap-around instead of undefined overflow. */
#define DEF_REAL(name, T, U)                                                                       \
    static void name##_add(void *dst, const void *src, size_t n, const void *scale)                \
    {                                                                                              \
        (void)scale;                                                                               \
        U *restrict d = dst;                                                                       \
        const U *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = (U)(d[i] + s[i]);                                                               \
    }                                                                                              \
    static void name##_axpy(void *dst, const void *src, size_t n, const void *scale)               \
    {                                                                                              \
        T a;                                                                                       \
        memcpy(&a, scale, sizeof a);                                                               \
        const U ua = (U)a;                                                                         \
        U *restrict d = dst;                                                                       \
        const U *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = (U)(d[i] + ua * s[i]);                                                          \
    }                                                                                              \
    static void name##_scale(void *dst, const void *src, size_t n, const void *scale)              \
    {                                                                                              \
        T a;                                                                                       \
        memcpy(&a, scale, sizeof a);                                                               \
        const U ua = (U)a;                                                                         \
        U *restrict d = dst;                                                                       \
        const U *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = (U)(ua * s[i]);                                                                 \
    }

DEF_REAL(i32, int32_t, uint32_t)
DEF_REAL(i64, int64_t, uint64_t)
DEF_REAL(f32, float, float)
DEF_REAL(f64, double, double)

#define DEF_CPLX(name, R)                                                                          \
    static void name##_axpy(void *dst, const void *src, size_t n, const void *scale)               \
    {                                                                                              \
        R a[2];                                                                                    \
        memcpy(a, scale, sizeof a);                                                                \
        const R ar = a[0], ai = a[1];                                                              \
        R *restrict d = dst;                                                                       \
        const R *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            R xr = s[2 * i], xi = s[2 * i + 1];                                                    \
            d[2 * i] += ar * xr - ai * xi;                                                         \
            d[2 * i + 1] += ar * xi + ai * xr;                                                     \
        }                                                                                          \
    }                                                                                              \
    static void name##_scale(void *dst, const void *src, size_t n, const void *scale)              \
    {                                                                                              \
        R a[2];                                                                                    \
        memcpy(a, scale, sizeof a);                                                                \
        const R ar = a[0], ai = a[1];                                                              \
        R *restrict d = dst;                                                                       \
        const R *restrict s = src;                                                                 \
        for (size_t i = 0; i < n; i++) {                                                           \
            R xr = s[2 * i], xi = s[2 * i + 1];                                                    \
            d[2 * i] = ar * xr - ai * xi;                                                          \
            d[2 * i + 1] = ar * xi + ai * xr;                                                      \
        }                                                                                          \
    }

DEF_CPLX(c32, float)
DEF_CPLX(c64, double)

typedef void (*acc_fn)(void *dst, const void *src, size_t n, const void *scale);

/* Kernel and element count factor for dst += scale * src (complex unscaled sums are real sums over
 * twice the elements). */
static acc_fn acc_select(rmc_acc_type_t t, const void *scale, size_t *mult)
{
    int one = rmci_acc_scale_is_one(t, scale);
    *mult = 1;
    switch (t) {
    case RMC_ACC_INT32:
        return one ? i32_add : i32_axpy;
    case RMC_ACC_INT64:
        return one ? i64_add : i64_axpy;
    case RMC_ACC_FLOAT:
        return one ? f32_add : f32_axpy;
    case RMC_ACC_DOUBLE:
        return one ? f64_add : f64_axpy;
    case RMC_ACC_COMPLEX_FLOAT:
        if (one) {
            *mult = 2;
            return f32_add;
        }
        return c32_axpy;
    case RMC_ACC_COMPLEX_DOUBLE:
        if (one) {
            *mult = 2;
            return f64_add;
        }
        return c64_axpy;
    }
    return NULL;
}

static acc_fn scale_select(rmc_acc_type_t t)
{
    switch (t) {
    case RMC_ACC_INT32:
        return i32_scale;
    case RMC_ACC_INT64:
        return i64_scale;
    case RMC_ACC_FLOAT:
        return f32_scale;
    case RMC_ACC_DOUBLE:
        return f64_scale;
    case RMC_ACC_COMPLEX_FLOAT:
        return c32_scale;
    case RMC_ACC_COMPLEX_DOUBLE:
        return c64_scale;
    }
    return NULL;
}

void rmci_acc_kernel(rmc_acc_type_t t, const void *scale, void *dst, const void *src, size_t n)
{
    size_t mult;
    acc_fn f = acc_select(t, scale, &mult);
    if (f)
        f(dst, src, n * mult, scale);
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
    size_t mult, es = rmci_acc_esize(t);
    acc_fn f = acc_select(t, scale, &mult);
    if (!f || !es)
        return;
    size_t n = d->l0 / es * mult;
    if (d->levels == 0) {
        f(dst, src, n, scale);
        return;
    }
    size_t n1 = d->cnt[1], s0 = d->ss[0], d0 = d->ds[0];
    rmci_siter_t it;
    rmci_siter_init(&it);
    for (size_t c = 0; c < d->nchunks; c += n1) {
        /* level 1 inline, outer levels by the iterator (advance n1 chunks at a time) */
        for (size_t i = 0; i < n1; i++)
            f(dst + it.dof + i * d0, src + it.so + i * s0, n, scale);
        it.idx[1] = n1 - 1;
        it.so += s0 * (n1 - 1);
        it.dof += d0 * (n1 - 1);
        rmci_siter_next(&it, d);
    }
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
    rmci_siter_t it;
    rmci_siter_init(&it);
    for (size_t c = 0; c < d->nchunks; c++) {
        f(buf + c * d->l0, src + it.so, n, scale);
        rmci_siter_next(&it, d);
    }
}
