/* Strided descriptor validation and normalization (no MPI). */
#include "config.h"
#include "strided_impl.h"

#include <stdarg.h>
#include <stdio.h>

rmc_status_t rmci_why_set(rmc_status_t st, char *why, size_t n, const char *fmt, ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* Extent (first to last byte + 1) of one side of the user's descriptor, with the checks. */
static rmc_status_t side_extent(const int *stride, const int *count, int levels, size_t align,
                                const char *side, size_t *ext, char *why, size_t whylen)
{
    size_t e = (size_t)count[0];
    for (int k = 1; k <= levels; k++) {
        if (count[k] == 1)
            continue; /* stride unused */
        size_t s = (size_t)stride[k - 1];
        if (s < e) /* blocks of this level would overlap */
            return rmci_why_set(
                RMC_ERR_STRIDE, why, whylen,
                "%s_stride_arr[%d] = %zu is below the %zu bytes a block of level %d spans", side,
                k - 1, s, e, k);
        if (s & (align - 1)) /* align is a power of two */
            return rmci_why_set(
                RMC_ERR_ALIGN, why, whylen,
                "%s_stride_arr[%d] = %zu is not a multiple of the element alignment %zu", side,
                k - 1, s, align);
        size_t add;
        if (__builtin_mul_overflow(s, (size_t)(count[k] - 1), &add) ||
            __builtin_add_overflow(e, add, &e))
            return rmci_why_set(
                RMC_ERR_TOO_BIG, why, whylen,
                "%s side's extent overflows size_t at level %d (stride %zu x count %d)", side, k, s,
                count[k]);
    }
    *ext = e;
    return RMC_OK;
}

rmc_status_t rmci_sdesc_check(rmci_sdesc_t *d, const int *src_stride, const int *dst_stride,
                              const int *count, int levels, size_t align, size_t esize, char *why,
                              size_t whylen)
{
    if (levels < 0 || levels > RMCI_SL_MAX)
        return rmci_why_set(RMC_ERR_STRIDE, why, whylen, "stride_levels = %d (0..%d)", levels,
                            RMCI_SL_MAX);
    if (!count)
        return rmci_why_set(RMC_ERR_ARG, why, whylen, "count is NULL");
    if (levels > 0 && (!src_stride || !dst_stride))
        return rmci_why_set(RMC_ERR_ARG, why, whylen, "%s_stride_arr is NULL with %d levels",
                            src_stride ? "dst" : "src", levels);
    for (int k = 0; k <= levels; k++)
        if (count[k] < 1)
            return rmci_why_set(RMC_ERR_STRIDE, why, whylen, "count[%d] = %d (at least 1)", k,
                                count[k]);
    for (int k = 0; k < levels; k++)
        if (src_stride[k] < 0 || dst_stride[k] < 0)
            return rmci_why_set(RMC_ERR_STRIDE, why, whylen, "%s_stride_arr[%d] = %d is negative",
                                src_stride[k] < 0 ? "src" : "dst", k,
                                src_stride[k] < 0 ? src_stride[k] : dst_stride[k]);
    rmc_status_t st = side_extent(src_stride, count, levels, align, "src", &d->sext, why, whylen);
    if (st == RMC_OK)
        st = side_extent(dst_stride, count, levels, align, "dst", &d->dext, why, whylen);
    if (st != RMC_OK)
        return st;
    if ((size_t)count[0] & (esize - 1)) /* element sizes are powers of two */
        return rmci_why_set(RMC_ERR_ALIGN, why, whylen,
                            "count[0] = %d bytes is not a multiple of the element size %zu",
                            count[0], esize);

    /* Normalize: drop count-1 levels, merge levels contiguous on both sides. */
    size_t l0 = (size_t)count[0];
    int n = 0;
    size_t nchunks = 1;
    for (int k = 1; k <= levels; k++) {
        size_t c = (size_t)count[k];
        if (c == 1)
            continue;
        size_t s = (size_t)src_stride[k - 1], t = (size_t)dst_stride[k - 1];
        if (__builtin_mul_overflow(nchunks, c, &nchunks))
            return rmci_why_set(RMC_ERR_TOO_BIG, why, whylen,
                                "the block count overflows size_t at level %d", k);
        if (n == 0 && s == l0 && t == l0) {
            l0 *= c; /* cannot overflow: l0 * c <= extent */
            nchunks = 1;  /* only count-1 levels came before: nothing else was counted */
            continue;
        }
        if (n > 0 && s == d->ss[n - 1] * d->cnt[n] && t == d->ds[n - 1] * d->cnt[n]) {
            d->cnt[n] *= c;
            continue;
        }
        d->ss[n] = s;
        d->ds[n] = t;
        d->cnt[++n] = c;
    }
    d->levels = n;
    d->l0 = l0;
    d->cnt[0] = l0;
    d->nchunks = nchunks;
    if (__builtin_mul_overflow(l0, nchunks, &d->bytes))
        return rmci_why_set(RMC_ERR_TOO_BIG, why, whylen, "the byte count overflows size_t");
    return RMC_OK;
}

rmc_status_t rmci_sdesc_build(rmci_sdesc_t *d, const int *src_stride, const int *dst_stride,
                              const int *count, int levels, size_t align, size_t esize)
{
    return rmci_sdesc_check(d, src_stride, dst_stride, count, levels, align, esize, NULL, 0);
}

void rmci_sdesc_dense(const rmci_sdesc_t *d, size_t dense[RMCI_SL_MAX])
{
    size_t s = d->l0;
    for (int k = 1; k <= d->levels; k++) {
        dense[k - 1] = s;
        s *= d->cnt[k];
    }
}
