/* Helpers of the strided / accumulate tests: deterministic random descriptors, a naive reference
 * implementation straight from the ARMCI-style descriptor (no normalization), typed values. */
#ifndef RMC_TEST_STRIDED_UTIL_H
#define RMC_TEST_STRIDED_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rmc.h>
#include "mpitest.h" /* mpitest_xorshift */

/* xorshift64*: deterministic, identical on every rank for the same seed. */
typedef struct trng {
    uint64_t s;
} trng_t;

static inline void trng_seed(trng_t *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x1234567ull;
    if (!r->s)
        r->s = 1;
}

static inline uint64_t trng_next(trng_t *r)
{
    return mpitest_xorshift(&r->s);
}

/* Uniform in [lo, hi]. */
static inline long trng_range(trng_t *r, long lo, long hi)
{
    return lo + (long)(trng_next(r) % (uint64_t)(hi - lo + 1));
}

typedef struct tdesc {
    int levels;
    int count[RMC_STRIDE_LEVELS_MAX + 1];
    int sstr[RMC_STRIDE_LEVELS_MAX];
    int dstr[RMC_STRIDE_LEVELS_MAX];
    size_t sext, dext; /* extents (first to last byte + 1) */
    size_t bytes;      /* payload */
} tdesc_t;

static inline size_t tdesc_extent(const int *str, const int *count, int levels)
{
    size_t e = (size_t)count[0];
    for (int k = 1; k <= levels; k++)
        if (count[k] > 1)
            e += (size_t)str[k - 1] * (size_t)(count[k] - 1);
    return e;
}

/* Random descriptor of `levels` levels whose extents stay below `budget` bytes on both sides.
 * count[0] is a multiple of esize, strides multiples of align, with random gaps; levels of count 1
 * get a random (possibly too small, unused) stride. Returns 0 on success. */
static inline int tdesc_random(trng_t *r, int levels, size_t esize, size_t align, size_t budget,
                               tdesc_t *d)
{
    for (int attempt = 0; attempt < 1000; attempt++) {
        d->levels = levels;
        long maxel = levels <= 1 ? 64 : levels <= 3 ? 12 : 4;
        d->count[0] = (int)(esize * (size_t)trng_range(r, 1, maxel));
        if (esize == 1 && trng_range(r, 0, 3) == 0)
            d->count[0] = (int)trng_range(r, 1, 7); /* odd tiny chunks */
        size_t se = (size_t)d->count[0], de = se;
        for (int k = 1; k <= levels; k++) {
            long maxc = levels <= 2 ? 12 : levels <= 4 ? 4 : 3;
            d->count[k] = (int)trng_range(r, 1, maxc);
            if (d->count[k] == 1 && trng_range(r, 0, 1)) {
                d->sstr[k - 1] = (int)(align * (size_t)trng_range(r, 0, 3));
                d->dstr[k - 1] = (int)(align * (size_t)trng_range(r, 0, 3));
                continue;
            }
            /* stride = extent below rounded up to align, plus 0..3 gaps; sometimes exactly dense */
            size_t sb = (se + align - 1) / align * align, db = (de + align - 1) / align * align;
            d->sstr[k - 1] =
                (int)(sb + align * (size_t)trng_range(r, 0, 3) * (trng_range(r, 0, 2) != 0));
            d->dstr[k - 1] =
                (int)(db + align * (size_t)trng_range(r, 0, 3) * (trng_range(r, 0, 2) != 0));
            se += (size_t)d->sstr[k - 1] * (size_t)(d->count[k] - 1);
            de += (size_t)d->dstr[k - 1] * (size_t)(d->count[k] - 1);
        }
        d->sext = tdesc_extent(d->sstr, d->count, levels);
        d->dext = tdesc_extent(d->dstr, d->count, levels);
        d->bytes = (size_t)d->count[0];
        for (int k = 1; k <= levels; k++)
            d->bytes *= (size_t)d->count[k];
        if (d->sext <= budget && d->dext <= budget)
            return 0;
    }
    return -1;
}

/* Calls fn(soff, doff, ctx) for every chunk of the user's descriptor (naive odometer). */
static inline void tdesc_chunks(const tdesc_t *d, void (*fn)(size_t, size_t, void *), void *ctx)
{
    int idx[RMC_STRIDE_LEVELS_MAX + 1] = {0};
    for (;;) {
        size_t so = 0, dof = 0;
        for (int k = 1; k <= d->levels; k++) {
            so += (size_t)idx[k] * (size_t)d->sstr[k - 1];
            dof += (size_t)idx[k] * (size_t)d->dstr[k - 1];
        }
        fn(so, dof, ctx);
        int k = 1;
        for (; k <= d->levels; k++) {
            if (++idx[k] < d->count[k])
                break;
            idx[k] = 0;
        }
        if (k > d->levels)
            return;
    }
}

typedef struct tref_ctx {
    char *dst;
    const char *src;
    size_t l0;
    rmc_acc_type_t type;
    const void *scale;
} tref_ctx_t;

static inline void tref_copy_fn(size_t so, size_t dof, void *c)
{
    tref_ctx_t *x = c;
    memmove(x->dst + dof, x->src + so, x->l0);
}

/* Reference strided copy dst-side <- src-side. */
static inline void tref_copy(char *dst, const char *src, const tdesc_t *d)
{
    tref_ctx_t c = {dst, src, (size_t)d->count[0], 0, NULL};
    tdesc_chunks(d, tref_copy_fn, &c);
}

/* Reference element update d += scale * s for one element (exact for small integer values). */
static inline void tref_acc_elem(rmc_acc_type_t t, const void *scale, char *d, const char *s)
{
    switch (t) {
    case RMC_ACC_INT32: {
        int32_t a = scale ? *(const int32_t *)scale : 1, x, y;
        memcpy(&x, s, 4);
        memcpy(&y, d, 4);
        y = (int32_t)((uint32_t)y + (uint32_t)a * (uint32_t)x);
        memcpy(d, &y, 4);
        break;
    }
    case RMC_ACC_INT64: {
        int64_t a = scale ? *(const int64_t *)scale : 1, x, y;
        memcpy(&x, s, 8);
        memcpy(&y, d, 8);
        y = (int64_t)((uint64_t)y + (uint64_t)a * (uint64_t)x);
        memcpy(d, &y, 8);
        break;
    }
    case RMC_ACC_FLOAT: {
        float a = scale ? *(const float *)scale : 1.0f, x, y;
        memcpy(&x, s, 4);
        memcpy(&y, d, 4);
        y += a * x;
        memcpy(d, &y, 4);
        break;
    }
    case RMC_ACC_DOUBLE: {
        double a = scale ? *(const double *)scale : 1.0, x, y;
        memcpy(&x, s, 8);
        memcpy(&y, d, 8);
        y += a * x;
        memcpy(d, &y, 8);
        break;
    }
    case RMC_ACC_COMPLEX_FLOAT: {
        float a[2] = {1.0f, 0.0f}, x[2], y[2];
        if (scale)
            memcpy(a, scale, 8);
        memcpy(x, s, 8);
        memcpy(y, d, 8);
        y[0] += a[0] * x[0] - a[1] * x[1];
        y[1] += a[0] * x[1] + a[1] * x[0];
        memcpy(d, y, 8);
        break;
    }
    case RMC_ACC_COMPLEX_DOUBLE: {
        double a[2] = {1.0, 0.0}, x[2], y[2];
        if (scale)
            memcpy(a, scale, 16);
        memcpy(x, s, 16);
        memcpy(y, d, 16);
        y[0] += a[0] * x[0] - a[1] * x[1];
        y[1] += a[0] * x[1] + a[1] * x[0];
        memcpy(d, y, 16);
        break;
    }
    }
}

static inline void tref_acc_fn(size_t so, size_t dof, void *c)
{
    tref_ctx_t *x = c;
    size_t es = rmc_acc_type_size(x->type);
    for (size_t i = 0; i < x->l0; i += es)
        tref_acc_elem(x->type, x->scale, x->dst + dof + i, x->src + so + i);
}

static inline void tref_acc(rmc_acc_type_t t, const void *scale, char *dst, const char *src,
                            const tdesc_t *d)
{
    tref_ctx_t c = {dst, src, (size_t)d->count[0], t, scale};
    tdesc_chunks(d, tref_acc_fn, &c);
}

/* Fills n bytes with small integer values of type t (exactly representable, sums stay exact). */
static inline void tfill_values(rmc_acc_type_t t, void *buf, size_t bytes, trng_t *r)
{
    char *p = buf;
    size_t es = rmc_acc_type_size(t);
    for (size_t i = 0; i + es <= bytes; i += es) {
        long v = trng_range(r, -8, 8), w = trng_range(r, -8, 8);
        switch (t) {
        case RMC_ACC_INT32: {
            int32_t x = (int32_t)v;
            memcpy(p + i, &x, 4);
            break;
        }
        case RMC_ACC_INT64: {
            int64_t x = (int64_t)v * 1000000007ll; /* exercise the upper half */
            memcpy(p + i, &x, 8);
            break;
        }
        case RMC_ACC_FLOAT: {
            float x = (float)v;
            memcpy(p + i, &x, 4);
            break;
        }
        case RMC_ACC_DOUBLE: {
            double x = (double)v;
            memcpy(p + i, &x, 8);
            break;
        }
        case RMC_ACC_COMPLEX_FLOAT: {
            float x[2] = {(float)v, (float)w};
            memcpy(p + i, x, 8);
            break;
        }
        case RMC_ACC_COMPLEX_DOUBLE: {
            double x[2] = {(double)v, (double)w};
            memcpy(p + i, x, 16);
            break;
        }
        }
    }
}

/* A scale value of type t: which = 0 -> one, 1 -> a non-trivial value (2, -3, 0.5, (1,2), ...). */
static inline const void *tscale(rmc_acc_type_t t, int which)
{
    static const int32_t i32[2] = {1, -3};
    static const int64_t i64[2] = {1, 5};
    static const float f32[2] = {1.0f, 0.5f};
    static const double f64[2] = {1.0, -2.0};
    static const float c32[2][2] = {{1.0f, 0.0f}, {1.0f, 2.0f}};
    static const double c64[2][2] = {{1.0, 0.0}, {-2.0, 0.5}};
    switch (t) {
    case RMC_ACC_INT32:
        return &i32[which];
    case RMC_ACC_INT64:
        return &i64[which];
    case RMC_ACC_FLOAT:
        return &f32[which];
    case RMC_ACC_DOUBLE:
        return &f64[which];
    case RMC_ACC_COMPLEX_FLOAT:
        return c32[which];
    case RMC_ACC_COMPLEX_DOUBLE:
        return c64[which];
    }
    return NULL;
}

static const rmc_acc_type_t tacc_types[] = {RMC_ACC_INT32,         RMC_ACC_INT64,
                                            RMC_ACC_FLOAT,         RMC_ACC_DOUBLE,
                                            RMC_ACC_COMPLEX_FLOAT, RMC_ACC_COMPLEX_DOUBLE};
#define TACC_NTYPES 6

static inline size_t tacc_align(rmc_acc_type_t t)
{
    return t == RMC_ACC_COMPLEX_FLOAT ? 4 : t == RMC_ACC_COMPLEX_DOUBLE ? 8 : rmc_acc_type_size(t);
}

/* Numeric element-wise equality (+0.0 == -0.0: a scaled zero may carry either sign). */
static inline int values_equal(rmc_acc_type_t t, const void *va, const void *vb, size_t bytes)
{
    const char *a = va, *b = vb;
    for (size_t i = 0; i < bytes;) {
        switch (t) {
        case RMC_ACC_FLOAT:
        case RMC_ACC_COMPLEX_FLOAT: {
            float x, y;
            memcpy(&x, a + i, 4);
            memcpy(&y, b + i, 4);
            if (x != y)
                return 0;
            i += 4;
            break;
        }
        case RMC_ACC_DOUBLE:
        case RMC_ACC_COMPLEX_DOUBLE: {
            double x, y;
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
            i += 8;
            break;
        }
        default:
            if (a[i] != b[i])
                return 0;
            i++;
        }
    }
    return 1;
}

#endif
