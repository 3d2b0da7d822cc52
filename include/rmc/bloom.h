/* RMC containers: distributed Bloom filters (seed 000 §5.4, seed 001 §6.2).
 *
 * A set of keys (a type of include/rmc/types.h) that answers "maybe present" or "surely absent":
 * no false negatives, false positives at a rate set at creation. Two kinds, both spread over every
 * rank (block-distributed 64-bit words in the ranks' segments):
 *
 *  RMC_BLOOM_BLOCKED   BCL's blocked filter: a key's hash picks one 64-bit block and k bits in it.
 *                      insert = 1 remote fetch-or (A), which also tells atomically whether the key
 *                      was (probably) present already: of two concurrent inserts of one key exactly
 *                      one is told "absent". find = 1 remote read (R).
 *  RMC_BLOOM_STANDARD  the classic filter over m bits (k positions by independent hashes, anywhere
 * in the distributed bit array): insert = k fetch-ors (A, overlapped), find = k reads (R,
 * overlapped). Smaller for the same rate, but an insert's "was present" is not atomic (two
 * concurrent inserts of one key may both be told "absent"). The baseline.
 *
 * Sizing: from n (the keys expected) and the target false-positive rate, the filter takes the
 * smallest size (and its best k) whose expected false-positive rate after n distinct inserts is at
 * most the target. For the blocked kind the expectation is computed exactly for uniform hashing (a
 * binomial number of keys per block, the occupancy of 64 bits by k of their bits each), so the
 * blocked filter needs more bits than the standard one (seed 001: about ln(1/p) times); the
 * standard kind uses the exact occupancy of m bits by kn throws while kn m <= 2 * 10^7 (the usual
 * (1 - e^{-kn/m})^k underestimates small filters, up to 2.7x at one key) and that formula beyond.
 * rmc_bloom_info reports both.
 *
 * Promises: RMC_PROMISE_LOCAL (the caller owns the key's block, nothing runs concurrently) makes an
 * operation plain loads and stores; others change nothing (the operations are already one atomic
 * or one read each).
 *
 * Completion: a blocking insert returns when its bits are set at the owner (visible to every rank's
 * later finds); a find returns with the answer. _nb forms return a request (rmc_wait / rmc_test);
 * *was_present / *present are written when it completes (RMC_REQUEST_NULL and written at once when
 * the operation finished during the call).
 *
 * Errors of every operation: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE (not a Bloom filter, or destroyed),
 * RMC_ERR_ARG (NULL key or result, an unknown promise, RMC_PROMISE_LOCAL for a key another rank
 * owns), RMC_ERR_TOO_BIG (the key's serialized form above max_bytes), and comm's.
 */
#ifndef RMC_BLOOM_H
#define RMC_BLOOM_H

#include <stddef.h>
#include <rmc/status.h>
#include <rmc/comm.h>
#include <rmc/types.h>
#include <rmc/promise.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_bloom *rmc_bloom_h;

typedef enum rmc_bloom_kind { RMC_BLOOM_BLOCKED = 0, RMC_BLOOM_STANDARD = 1 } rmc_bloom_kind_t;

/* Collective. A filter of `kind` for n (>= 1) keys of type `key` with a false-positive rate of at
 * most fp_rate (1e-9 <= fp_rate <= 0.5, else RMC_ERR_ARG) after n distinct inserts. Every rank
 * passes the same arguments (checked). Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG, RMC_ERR_TYPE,
 * RMC_ERR_TOO_BIG (more than 2^40 words), RMC_ERR_NOMEM, RMC_ERR_STATE. On error no filter exists
 * on any rank. */
rmc_status_t rmc_bloom_create(rmc_bloom_kind_t kind, size_t n, double fp_rate,
                              const rmc_type_t *key, rmc_bloom_h *b);

/* Collective. Completes every rank's operations and frees the filter; the handle is dead. */
rmc_status_t rmc_bloom_destroy(rmc_bloom_h b);

/* Inserts key. *was_present (may be NULL) = 1 when every bit of the key was set already (the key,
 * or a false positive), 0 when this insert set one. */
rmc_status_t rmc_bloom_insert(rmc_bloom_h b, const void *key, int *was_present, unsigned promise);
/* *present = 1 when the key may be in the set (every bit set), 0 when it surely is not. */
rmc_status_t rmc_bloom_find(rmc_bloom_h b, const void *key, int *present, unsigned promise);

rmc_status_t rmc_bloom_insert_nb(rmc_bloom_h b, const void *key, int *was_present,
                                 unsigned promise, rmc_request_h *req);
rmc_status_t rmc_bloom_find_nb(rmc_bloom_h b, const void *key, int *present, unsigned promise,
                               rmc_request_h *req);

typedef struct rmc_bloom_info {
    rmc_bloom_kind_t kind;
    size_t n;           /* keys it was sized for */
    double fp_target;   /* the rate asked for */
    double fp_expected; /* the theory's rate after n distinct inserts (<= fp_target) */
    size_t bits;        /* total bits (all ranks) */
    unsigned k;         /* bits per key */
} rmc_bloom_info_t;

/* Local. The filter's sizing. Errors: RMC_ERR_HANDLE, RMC_ERR_ARG (info NULL). */
rmc_status_t rmc_bloom_info(rmc_bloom_h b, rmc_bloom_info_t *info);

/* Local. The theory's expected false-positive rate of a filter of `kind` with `bits` bits and k
 * bits per key after n distinct inserts (what rmc_bloom_info's fp_expected is); a negative value
 * for bad arguments. */
double rmc_bloom_fp_theory(rmc_bloom_kind_t kind, size_t n, size_t bits, unsigned k);

#ifdef __cplusplus
}
#endif
#endif
