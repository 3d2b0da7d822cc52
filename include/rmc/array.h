/* RMC containers: distributed arrays (seed 000 Table 1: BCL's Array and DArray).
 *
 * An array of n elements of one type (include/rmc/types.h), either hosted by one rank (BCL's
 * Array: every element in that rank's segment) or block-distributed over all ranks (BCL's DArray:
 * rank r holds elements [r*b, min(n, (r+1)*b)) with b = ceil(n / nranks)). Elements are read and
 * written one-sidedly by every rank; ranges may span several owners. Each rank can reach its own
 * part directly (rmc_array_local) to fill or iterate over it.
 *
 * Completion and ordering are comm's: a put is visible to the putting rank's later gets at once and
 * to other ranks after rmc_fence / rmc_fence_all / rmc_barrier; a get returns the data. _nb forms
 * return a request (rmc_wait / rmc_test): as with rmc_put_nb, a put's elements must not change
 * until it completes (serialized types are serialized during the call), a get's are written when
 * it completes. Concurrent puts of one element by two
 * ranks leave one of them (byte-copied types: possibly a mix of both for elements above 8 bytes:
 * synchronize, e.g. with rmc_barrier or a mutex).
 *
 * Errors of every operation: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE (not an array, or destroyed),
 * RMC_ERR_ARG (NULL element pointer, n == 0), RMC_ERR_BOUNDS (index or range beyond the array),
 * RMC_ERR_TOO_BIG (an element's serialized form above the type's max_bytes), and comm's.
 */
#ifndef RMC_ARRAY_H
#define RMC_ARRAY_H

#include <stddef.h>
#include <rmc/status.h>
#include <rmc/comm.h>
#include <rmc/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_array *rmc_array_h;

/* `host` for a block-distributed array. */
#define RMC_ARRAY_BLOCK (-1)

/* Collective. An array of n (>= 1) zeroed elements of `type` (zero bytes deserialize as the
 * empty string for RMC_TYPE_STRING), hosted by `host`, or block-distributed (RMC_ARRAY_BLOCK).
 * Every rank passes the same arguments (checked). Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (n 0, a
 * NULL pointer), RMC_ERR_RANK, RMC_ERR_TYPE, RMC_ERR_TOO_BIG (n above 2^48, or n elements' bytes
 * overflow a size_t),
 * RMC_ERR_NOMEM, RMC_ERR_STATE (ranks in different collectives). On error no array exists on any
 * rank. */
rmc_status_t rmc_array_create(size_t n, const rmc_type_t *type, int host, rmc_array_h *a);

/* Collective. Completes every rank's operations and frees the array; the handle is dead. */
rmc_status_t rmc_array_destroy(rmc_array_h a);

rmc_status_t rmc_array_put(rmc_array_h a, size_t i, const void *elem);
rmc_status_t rmc_array_get(rmc_array_h a, size_t i, void *elem);
rmc_status_t rmc_array_put_range(rmc_array_h a, size_t first, size_t n, const void *elems);
rmc_status_t rmc_array_get_range(rmc_array_h a, size_t first, size_t n, void *elems);

rmc_status_t rmc_array_put_nb(rmc_array_h a, size_t i, const void *elem, rmc_request_h *req);
rmc_status_t rmc_array_get_nb(rmc_array_h a, size_t i, void *elem, rmc_request_h *req);
rmc_status_t rmc_array_put_range_nb(rmc_array_h a, size_t first, size_t n, const void *elems,
                                    rmc_request_h *req);
rmc_status_t rmc_array_get_range_nb(rmc_array_h a, size_t first, size_t n, void *elems,
                                    rmc_request_h *req);

/* Local. Number of elements (0 for a bad handle); the rank holding element i (-1 for a bad
 * handle or index). */
size_t rmc_array_size(rmc_array_h a);
int rmc_array_owner(rmc_array_h a, size_t i);

/* Local. This rank's part: elements [*first, *first + *count) (count 0 when it holds none) and a
 * pointer to their slots (for byte-copied types the elements themselves, an array of count
 * elements; for variable types slots of rmc_type_slot_bytes, to be read with rmc_array_get). */
rmc_status_t rmc_array_local(rmc_array_h a, size_t *first, size_t *count, void **slots);

#ifdef __cplusplus
}
#endif
#endif
