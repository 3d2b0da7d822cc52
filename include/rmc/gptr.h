/* RMC containers: global pointers, the segment and its allocator (seed 000 §3, seed 001 §3.1).
 *
 * The segment. Every rank has one, created by rmc_init when librmc_containers is linked (the
 * containers register as a layer of comm): a region of reserved address space
 * (RMC_SEGMENT_RESERVE bytes per rank, default this machine's memory divided by the ranks on it),
 * of which RMC_SEGMENT_SIZE bytes are committed at once and the rest as the allocator needs it. So
 * the segment grows while the machine has memory instead of failing when its first size is used
 * up, and grown memory is reached exactly as fast as the first (one window, one mapping).
 *
 * Global pointers. {rank, offset} into rank's segment: plain values that can be copied, sent in
 * messages and stored in global memory. Arithmetic, comparison, null; the owner's address and, when
 * the owner is on this node, a local address for loads and stores.
 *
 * Allocation. rmc_alloc / rmc_free are local to the calling rank and not collective: a rank
 * allocates in its own segment, the memory is usable by every rank at once (hand the pointer out),
 * and only the owner frees it. Thread-safe (with the progress thread and with application threads).
 *
 * Data movement through global pointers is comm's (include/rmc/comm.h, amo.h): the same
 * completion and ordering rules; the functions below are thin forms of rmc_put / rmc_get /
 * rmc_amo_* on rmc_gptr_addr(g).
 */
#ifndef RMC_GPTR_H
#define RMC_GPTR_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/status.h>
#include <rmc/comm.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_gptr {
    int32_t rank;   /* owner; -1 for the null pointer */
    uint32_t zero_; /* 0 (reserved) */
    uint64_t off;   /* bytes from the start of the owner's segment */
} rmc_gptr_t;

#define RMC_GPTR_NULL ((rmc_gptr_t){-1, 0, 0})

static inline int rmc_gptr_is_null(rmc_gptr_t g)
{
    return g.rank < 0;
}
static inline int rmc_gptr_eq(rmc_gptr_t a, rmc_gptr_t b)
{
    return a.rank == b.rank && a.off == b.off;
}
/* g + bytes (bytes may be negative). */
static inline rmc_gptr_t rmc_gptr_add(rmc_gptr_t g, ptrdiff_t bytes)
{
    g.off += (uint64_t)bytes;
    return g;
}
/* a - b in bytes; both on one rank. */
static inline ptrdiff_t rmc_gptr_diff(rmc_gptr_t a, rmc_gptr_t b)
{
    return (ptrdiff_t)(a.off - b.off);
}

/* Local. *addr = g's address in its owner's address space: what rmc_put / rmc_get / rmc_amo_* take
 * (with rank g.rank). Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (null pointer, addr NULL, or a reserved
 * field zero_ that is not 0: not a pointer RMC made; every call taking a global pointer refuses
 * it), RMC_ERR_RANK, RMC_ERR_BOUNDS (offset beyond the owner's segment, or in the layer's control
 * area before its first allocation: a zero-initialized rmc_gptr_t is rank 0's offset 0, refused
 * so). */
rmc_status_t rmc_gptr_addr(rmc_gptr_t g, void **addr);

/* Local. The load/store address of g on this rank when its owner is on this node (self included),
 * else NULL (also for null / invalid pointers, and the control area): the fast way to touch
 * node-local global memory (plain data; atomics go through rmc_amo_* or rmc_gptr_fetch_add_i64
 * ...). */
void *rmc_gptr_local(rmc_gptr_t g);

/* 1 when g's owner is on this node, 0 when not, negative status for a null / invalid pointer. */
int rmc_gptr_is_local(rmc_gptr_t g);

/* Local. The global pointer of `ptr`, an address in this rank's segment. Errors: RMC_ERR_NOT_INIT,
 * RMC_ERR_ARG (g NULL), RMC_ERR_NOT_REGION (ptr is not in this rank's segment). */
rmc_status_t rmc_gptr_from_local(const void *ptr, rmc_gptr_t *g);

/* Data movement: rmc_put / rmc_get / their _nb forms at g (same completion semantics and errors,
 * and RMC_ERR_ARG for a null or invalid pointer, as rmc_gptr_addr). A failure's message starts
 * with the rmc_gptr_ call (then comm's, e.g. "rmc_gptr_put: rmc_put: NULL local buffer ..."). */
rmc_status_t rmc_gptr_put(rmc_gptr_t dst, const void *src, size_t bytes);
rmc_status_t rmc_gptr_get(void *dst, rmc_gptr_t src, size_t bytes);
rmc_status_t rmc_gptr_put_nb(rmc_gptr_t dst, const void *src, size_t bytes, rmc_request_h *req);
rmc_status_t rmc_gptr_get_nb(void *dst, rmc_gptr_t src, size_t bytes, rmc_request_h *req);
/* Atomics on the 8-byte word at g (rmc_amo_fetch_add_i64, _cas_i64, _load_i64, _fetch_or_u64). */
rmc_status_t rmc_gptr_fetch_add_i64(rmc_gptr_t g, int64_t value, int64_t *old);
rmc_status_t rmc_gptr_cas_i64(rmc_gptr_t g, int64_t compare, int64_t value, int64_t *old);
rmc_status_t rmc_gptr_load_i64(rmc_gptr_t g, int64_t *value);
rmc_status_t rmc_gptr_fetch_or_u64(rmc_gptr_t g, uint64_t value, uint64_t *old);

/* ---------------------------------------------------------------------- allocation --- */

/* Local, not collective. Allocates `bytes` (> 0) of zeroed memory in this rank's segment, 16-byte
 * aligned, and returns its global pointer: usable by every rank at once. When the committed part
 * of the segment is used up, more is committed (up to RMC_SEGMENT_RESERVE). Errors:
 * RMC_ERR_NOT_INIT, RMC_ERR_ARG (bytes 0, g NULL), RMC_ERR_NOMEM (the reservation or the machine's
 * shared memory is exhausted), RMC_ERR_TOO_BIG (more than the whole reservation): *g is null,
 * nothing changed. */
rmc_status_t rmc_alloc(size_t bytes, rmc_gptr_t *g);

/* Local. Frees memory rmc_alloc returned on this rank; afterwards no rank may use it.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (null pointer; a pointer owned by another rank: only the
 * owner frees; a pointer that is not the start of an allocation; a reserved field not 0),
 * RMC_ERR_STATE (already freed, while its memory is not allocated again: once a later allocation
 * reuses it, a stale pointer is RMC_ERR_ARG or, where a new block starts at the same place, frees
 * that block). On error nothing changed. */
rmc_status_t rmc_free(rmc_gptr_t g);

/* Bytes usable at g (at least what was asked). Local; g must be this rank's allocation. Errors as
 * rmc_free. */
rmc_status_t rmc_alloc_size(rmc_gptr_t g, size_t *bytes);

typedef struct rmc_segment_info {
    size_t reserved;                         /* address space of this rank's segment */
    size_t committed;                        /* of which backed by memory */
    size_t in_use;                           /* bytes of live allocations (headers included) */
    size_t peak;                             /* largest in_use so far */
    unsigned long long allocs, frees, grows; /* calls that succeeded; commits beyond the first */
} rmc_segment_info_t;

/* Local. This rank's segment. Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG. */
rmc_status_t rmc_segment_info(rmc_segment_info_t *info);

#ifdef __cplusplus
}
#endif
#endif
