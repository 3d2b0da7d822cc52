/* Strided descriptor validation and normalization (no MPI). */
#include "config.h"
#include "strided_impl.h"

/* Extent (first to last byte + 1) of one side of the user's descriptor, with the checks. */
static rmc_status_t side_extent(const int *stride, const int *count, int levels, size_t align,
                                size_t *ext)
{
    size_t e = (size_t)count[0];
    for (int k = 1; k <= levels; k++) {
        if (count[k] == 1)
            continue; /* stride unused */
        size_t s = (size_t)stride[k - 1];
        if (s < e)
            return RMC_ERR_STRIDE; /* blocks of this level would overlap */
        if (s & (align - 1)) /* align is a power of two */
            return RMC_ERR_ALIGN;
        size_t add;
        if (__builtin_mul_overflow(s, (size_t)(count[k] - 1), &add) ||
            __builtin_add_overflow(e, add, &e))
            return RMC_ERR_TOO_BIG;
    }
    *ext = e;
    return RMC_OK;
}

rmc_status_t rmci_sdesc_build(rmci_sdesc_t *d, const int *src_stride, const int *dst_stride,
                              const int *count, int levels, size_t align, size_t esize)
{
    if (levels < 0 || levels > RMCI_SL_MAX)
        return RMC_ERR_STRIDE;
    if (!count || (levels > 0 && (!src_stride || !dst_stride)))
        return RMC_ERR_ARG;
    for (int k = 0; k <= levels; k++)
        if (count[k] < 1)
            return RMC_ERR_STRIDE;
    for (int k = 0; k < levels; k++)
        if (src_stride[k] < 0 || dst_stride[k] < 0)
            return RMC_ERR_STRIDE;
    rmc_status_t st = side_extent(src_stride, count, levels, align, &d->sext);
    if (st == RMC_OK)
        st = side_extent(dst_stride, count, levels, align, &d->dext);
    if (st != RMC_OK)
        return st;
    if ((size_t)count[0] & (esize - 1)) /* element sizes are powers of two */
        return RMC_ERR_ALIGN;

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
            return RMC_ERR_TOO_BIG;
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
        return RMC_ERR_TOO_BIG;
    return RMC_OK;
}

void rmci_sdesc_dense(const rmci_sdesc_t *d, size_t dense[RMCI_SL_MAX])
{
    size_t s = d->l0;
    for (int k = 1; k <= d->levels; k++) {
        dense[k - 1] = s;
        s *= d->cnt[k];
    }
}
