/* Global pointers: translation to owner addresses and local mappings, and the thin data-movement
 * forms over comm. */
#include "config.h"
#include "ct.h"

/* g resolved for `bytes` bytes: its owner-space address, or a recorded error. */
static rmc_status_t resolve(rmc_gptr_t g, size_t bytes, void **addr, const char *fn)
{
    RMCC_CHECK_UP(fn);
    if (RMCC_UNLIKELY(rmc_gptr_is_null(g)))
        return rmcc_fail(RMC_ERR_ARG, fn, "null global pointer");
    if (RMCC_UNLIKELY(g.zero_ != 0))
        return rmcc_fail(RMC_ERR_ARG, fn,
                         "invalid global pointer: its reserved field zero_ is %u, not 0 (not a "
                         "pointer RMC made, or one overwritten)",
                         (unsigned)g.zero_);
    if (RMCC_UNLIKELY(g.rank >= rmcc.nranks))
        return rmcc_fail(RMC_ERR_RANK, fn, "global pointer of rank %d (there are %d)", (int)g.rank,
                         rmcc.nranks);
    size_t sz = rmcc.sizes[g.rank];
    if (RMCC_UNLIKELY(g.off > sz || bytes > sz - g.off))
        return rmcc_fail(RMC_ERR_BOUNDS, fn, "[%llu, +%zu) is beyond rank %d's segment (%zu bytes)",
                         (unsigned long long)g.off, bytes, (int)g.rank, sz);
    if (RMCC_UNLIKELY(g.off < RMCC_HEAP_START)) /* no allocation is there */
        return rmcc_fail(RMC_ERR_BOUNDS, fn,
                         "offset %llu of rank %d is in the layer's control area (the first %d "
                         "bytes, which hold no allocation): a zero-initialized rmc_gptr_t?",
                         (unsigned long long)g.off, (int)g.rank, RMCC_HEAP_START);
    *addr = rmcc_addr(g.rank, g.off);
    return RMC_OK;
}

rmc_status_t rmc_gptr_addr(rmc_gptr_t g, void **addr)
{
    if (!addr)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL result pointer");
    *addr = NULL;
    return resolve(g, 0, addr, __func__);
}

void *rmc_gptr_local(rmc_gptr_t g)
{
    if (!rmcc.up || g.rank < 0 || g.zero_ || g.rank >= rmcc.nranks || g.off >= rmcc.sizes[g.rank] ||
        g.off < RMCC_HEAP_START || !rmcc.lbase[g.rank])
        return NULL;
    return rmcc.lbase[g.rank] + g.off;
}

int rmc_gptr_is_local(rmc_gptr_t g)
{
    void *a;
    rmc_status_t st = resolve(g, 0, &a, __func__);
    return st != RMC_OK ? (int)st : rmcc.lbase[g.rank] != NULL;
}

rmc_status_t rmc_gptr_from_local(const void *ptr, rmc_gptr_t *g)
{
    RMCC_CHECK_UP(__func__);
    if (!g)
        return rmcc_fail(RMC_ERR_ARG, __func__, "NULL result pointer");
    *g = RMC_GPTR_NULL;
    const char *b = rmcc.lbase[rmcc.rank], *p = ptr;
    if (!p || p < b + RMCC_HEAP_START || (size_t)(p - b) >= rmcc.sizes[rmcc.rank])
        return rmcc_fail(RMC_ERR_NOT_REGION, __func__, "%p is not in this rank's segment%s", ptr,
                         p >= b && p < b + RMCC_HEAP_START ? " (in its control area)" : "");
    *g = (rmc_gptr_t){rmcc.rank, 0, (uint64_t)(p - b)};
    return RMC_OK;
}

/* The comm call's status; a failure's message (which names the comm call) under the public call's
 * name first. */
#define INNER(call)                                                                                \
    do {                                                                                           \
        rmc_status_t in_ = (call);                                                                 \
        return RMCC_LIKELY(in_ == RMC_OK) ? in_ : rmc_error_in(in_, __func__);                     \
    } while (0)

#define RESOLVE(g, n)                                                                              \
    void *a_;                                                                                      \
    rmc_status_t st_ = resolve((g), (n), &a_, __func__);                                           \
    if (st_ != RMC_OK)                                                                             \
    return st_

rmc_status_t rmc_gptr_put(rmc_gptr_t dst, const void *src, size_t bytes)
{
    RESOLVE(dst, bytes);
    INNER(rmc_put(src, a_, bytes, dst.rank));
}

rmc_status_t rmc_gptr_get(void *dst, rmc_gptr_t src, size_t bytes)
{
    RESOLVE(src, bytes);
    INNER(rmc_get(a_, dst, bytes, src.rank));
}

rmc_status_t rmc_gptr_put_nb(rmc_gptr_t dst, const void *src, size_t bytes, rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RESOLVE(dst, bytes);
    INNER(rmc_put_nb(src, a_, bytes, dst.rank, req));
}

rmc_status_t rmc_gptr_get_nb(void *dst, rmc_gptr_t src, size_t bytes, rmc_request_h *req)
{
    if (req)
        *req = RMC_REQUEST_NULL;
    RESOLVE(src, bytes);
    INNER(rmc_get_nb(a_, dst, bytes, src.rank, req));
}

rmc_status_t rmc_gptr_fetch_add_i64(rmc_gptr_t g, int64_t value, int64_t *old)
{
    RESOLVE(g, 8);
    INNER(rmc_amo_fetch_add_i64(a_, value, old, g.rank));
}

rmc_status_t rmc_gptr_cas_i64(rmc_gptr_t g, int64_t compare, int64_t value, int64_t *old)
{
    RESOLVE(g, 8);
    INNER(rmc_amo_cas_i64(a_, compare, value, old, g.rank));
}

rmc_status_t rmc_gptr_load_i64(rmc_gptr_t g, int64_t *value)
{
    RESOLVE(g, 8);
    INNER(rmc_amo_load_i64(a_, value, g.rank));
}

rmc_status_t rmc_gptr_fetch_or_u64(rmc_gptr_t g, uint64_t value, uint64_t *old)
{
    RESOLVE(g, 8);
    INNER(rmc_amo_fetch_or_u64(a_, value, old, g.rank));
}
