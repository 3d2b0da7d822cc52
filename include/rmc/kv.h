/* RMC containers: a distributed key/value store (seed 003, PDHT).
 *
 * PDHT's operations on the hash map of include/rmc/hashmap.h (the same buckets, protocols, costs
 * and promises): insert of a new key, read, update of a present key's value, atomic update (an add
 * to a 64-bit integer value) and iteration over the entries this rank owns; and statistics
 * (rmc_kv_counters, a collective reduction). PDHT's global atomic counters (one-sided, for dynamic
 * load balancing) are not here: they are RMC's atomics, rmc_amo_fetch_add_i64 on a shared 8-byte
 * word (include/rmc/amo.h). Each operation that talks to the key's owner goes one-sided (RDMA) or
 * as one active message executed by the owner (RPC: by its progress thread when it runs one),
 * chosen per store at creation or forced per call with RMC_HASHMAP_RDMA / RMC_HASHMAP_RPC in
 * `flags`; 0 lets each operation choose as the hash map does (RPC for a remote owner in thread
 * AMO mode). `flags` also carries the operation's promise (include/rmc/promise.h, as the hash
 * map's operations take it: e.g. RMC_PROMISE_INSERT | RMC_PROMISE_FIND for an insert phase,
 * RMC_PROMISE_LOCAL for the owner's plain-memory path), ORed with the path. The RPC path needs RMC_AMO=thread (RMC_ERR_UNSUPPORTED otherwise). With RPC as the
 * store's path, an entry larger than an active message goes one-sided; forced per call it fails
 * RMC_ERR_UNSUPPORTED.
 *
 * Concurrent inserts of one key from many ranks: exactly one creates the entry and gets RMC_OK,
 * every other gets RMC_ERR_EXISTS and changes nothing (its value is not stored). Atomic updates
 * of one key from many ranks all count: the value ends at the sum.
 *
 * Completion: every call returns when its operation is performed at the owner. Errors: as the
 * hash map's (RMC_ERR_NOT_INIT, RMC_ERR_HANDLE, RMC_ERR_ARG, RMC_ERR_TOO_BIG, RMC_ERR_FULL,
 * RMC_ERR_NOT_FOUND, RMC_ERR_UNSUPPORTED, comm's), and RMC_ERR_EXISTS (insert of a present key),
 * RMC_ERR_TYPE (rmc_kv_add on a store whose value type is not rmc_type_i64 or rmc_type_u64).
 * RMC_ERR_EXISTS and RMC_ERR_NOT_FOUND are outcomes: they do not set rmc_last_error.
 */
#ifndef RMC_KV_H
#define RMC_KV_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/status.h>
#include <rmc/types.h>
#include <rmc/hashmap.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_kv *rmc_kv_h;

/* Collective. A store with room for `capacity` entries (as rmc_hashmap_create) whose operations
 * take `path` (0, RMC_HASHMAP_RDMA or RMC_HASHMAP_RPC) unless a call forces one. Errors: as
 * rmc_hashmap_create; RMC_ERR_UNSUPPORTED (RMC_HASHMAP_RPC without RMC_AMO=thread). */
rmc_status_t rmc_kv_create(size_t capacity, const rmc_type_t *key, const rmc_type_t *value,
                           unsigned path, rmc_kv_h *kv);
/* Collective. Completes every rank's operations and frees the store. */
rmc_status_t rmc_kv_destroy(rmc_kv_h kv);

/* key -> value when the key is absent (RMC_OK); RMC_ERR_EXISTS when it is present (nothing
 * changed). */
rmc_status_t rmc_kv_insert(rmc_kv_h kv, const void *key, const void *value, unsigned flags);
/* *value = the key's value; RMC_ERR_NOT_FOUND when absent. */
rmc_status_t rmc_kv_read(rmc_kv_h kv, const void *key, void *value, unsigned flags);
/* Replaces a present key's value; RMC_ERR_NOT_FOUND when absent (nothing inserted). */
rmc_status_t rmc_kv_update(rmc_kv_h kv, const void *key, const void *value, unsigned flags);
/* Atomic update: adds delta to the key's int64 value (wrapping; a uint64 value as its two's
 * complement) and sets *old (may be NULL) to the value before; RMC_ERR_NOT_FOUND when absent,
 * RMC_ERR_TYPE (nothing changed) when the store's value type is not rmc_type_i64 or rmc_type_u64
 * (or a descriptor equal to one of them: fixed, 8 bytes, named "int64" / "uint64"). */
rmc_status_t rmc_kv_add(rmc_kv_h kv, const void *key, int64_t delta, int64_t *old,
                        unsigned flags);

/* Local: fn(key, value, arg) for every entry this rank owns, as rmc_hashmap_local_foreach (no
 * operation on the store may run meanwhile). */
rmc_status_t rmc_kv_local_foreach(rmc_kv_h kv, rmc_hashmap_visit_fn fn, void *arg, int *stopped);

typedef struct rmc_kv_counters {
    unsigned long long entries;    /* entries in the store */
    unsigned long long inserts;    /* inserts that created an entry, since creation */
    unsigned long long exists;     /* inserts refused because the key was present */
    unsigned long long collisions; /* buckets probed beyond the first by inserts */
} rmc_kv_counters_t;

/* Collective: the store's statistics, each the sum over the ranks of what the rank counted (an
 * MPI reduction; no operation may run meanwhile). Not PDHT's one-sided global counters: for those
 * use rmc_amo_fetch_add_i64 on a shared word. */
rmc_status_t rmc_kv_counters(rmc_kv_h kv, rmc_kv_counters_t *c);

/* Local: the store's hash map (for the map's other operations: resize, find_n, ...). NULL for a
 * bad handle. */
rmc_hashmap_h rmc_kv_map(rmc_kv_h kv);

#ifdef __cplusplus
}
#endif
#endif
