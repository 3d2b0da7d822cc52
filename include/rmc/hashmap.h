/* RMC containers: distributed hash map (seed 001 ch. 6, seed 000 §5.3).
 *
 * A map from keys to values, both of a type of include/rmc/types.h (byte-copied or serialized),
 * spread over every rank: a key's hash names the rank that owns it (the owner depends only on the
 * hash and the number of ranks) and its home bucket in that rank's table. Each rank's table is an
 * open-addressing array of buckets in its segment, probed quadratically (home + i(i+1)/2, which
 * visits every bucket of a power-of-two table once): a key lives on one rank, so every probe of an
 * operation goes to the same owner (node-local owners through shared memory).
 *
 * A bucket is a status word (2 state bits: free, reserved, ready, deleted; and a version that
 * every change advances) followed by the key and the value in place (byte-copied types as they
 * are, serialized types as a slot of 4 + max_bytes bytes: one read fetches a whole entry, no
 * pointer to chase) and a checksum of the entry and the status word it was published under. The
 * checksum makes a bucket self-verifying: a read that raced with a writer does not match and is
 * read again, so a find takes no reader count (BCL's status word counts readers instead).
 *
 * Operations and their costs in remote operations (A atomic, W write, R read; rmc_op_counts) for a
 * key found at its home bucket, by promise (include/rmc/promise.h):
 *   insert   RMC_PROMISE_ANY            A + W: take the free bucket as ready (compare-and-swap),
 *                                       write key, value and checksum (BCL: 2A + W). Replacing a
 *                                       key's value costs A + R (see the entry) + 2A + W (lock;
 *                                       write and unlock in one round trip).
 *            RMC_PROMISE_INSERT (with or without _FIND: no erase runs concurrently): the same, and
 *                                       deleted buckets are reused (2A + W into a tombstone).
 *   find     RMC_PROMISE_ANY            R: one read of the bucket per probe, its checksum checked
 *                                       (BCL: 2A + R, reader in, read, reader out).
 *            RMC_PROMISE_FIND           R: the same read, no check (only finds run concurrently).
 *   erase    RMC_PROMISE_ANY            A + R + 2A: see the state, read and check the entry, lock,
 *                                       mark deleted (a tombstone: finds go past it, inserts
 *                                       without erases running reuse it; rmc_hashmap_resize
 *                                       clears them).
 *   update   RMC_PROMISE_ANY            A + R + A + W + A: the value (from the read that checked
 *                                       the entry) is changed by the caller's function and
 *                                       written back under the bucket's lock.
 *   all      RMC_PROMISE_LOCAL          the caller owns the key and nothing else runs on the map:
 *                                       plain loads and stores, no remote operation.
 * Each further probe (a collision) adds the probe's own cost: A + R for an insert or erase (the
 * state, then the entry: a ready bucket's key never changes until it is erased), R for a find. A
 * find of a key that is absent stops at the first free bucket, in every variant. Waiting (a bucket
 * being written, an entry not arrived whole) keeps RMC's progress going. A checksum is 64 bits: a
 * torn read of a 16-byte entry (an 8-byte key and value) never passes; of a larger entry with
 * probability 2^-64. Concurrent inserts of one key from many ranks leave exactly one entry, with
 * one of the values.
 *
 * Completion: a blocking insert, erase or update returns when it is performed at the owner
 * (visible to every rank's later operations); a find returns with the value. _nb forms return a
 * request (rmc_wait / rmc_test, whose status is the operation's: RMC_ERR_NOT_FOUND, ...); the
 * key and value of an insert are copied before the call returns; a find's key must stay valid and
 * unchanged until its request completes, and its value is written then. An _nb operation that
 * finishes during the call sets *req to RMC_REQUEST_NULL and the call returns its status.
 * Outstanding ones move on in every RMC wait, as queue operations do (include/rmc/queue.h), and
 * are performed when their requests complete: rmc_barrier and rmc_fence advance them but do not
 * wait for them (complete them first when other ranks must see them after the barrier). Two
 * operations of one rank on one key outstanding at once are not ordered (the later may be
 * performed first): wait for the first when their order matters.
 *
 * Errors of every operation: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE (not a hash map, or destroyed),
 * RMC_ERR_ARG (NULL key or value, a promise the map does not know (PUSH, POP), both paths,
 * RMC_PROMISE_LOCAL for a key another rank owns), RMC_ERR_UNSUPPORTED (RMC_HASHMAP_RPC where there
 * is no RPC path), RMC_ERR_TOO_BIG (a key's or value's serialized form above its
 * type's max_bytes: nothing changed), RMC_ERR_FULL (insert: the owner's table has no bucket left
 * for the key, neither free nor, under RMC_PROMISE_INSERT, a tombstone: nothing changed; resize),
 * RMC_ERR_NOT_FOUND (find, erase, update of an absent key), and comm's errors (RMC_ERR_MPI ...).
 */
#ifndef RMC_HASHMAP_H
#define RMC_HASHMAP_H

#include <stddef.h>
#include <rmc/status.h>
#include <rmc/comm.h>
#include <rmc/types.h>
#include <rmc/promise.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmc_hashmap *rmc_hashmap_h;

/* Paths (seed 001 ch. 8): OR one into an operation's `promise` argument to force it, or make it
 * the map's default on this rank (rmc_hashmap_set_path); without either each operation chooses.
 *  RMC_HASHMAP_RDMA  the one-sided protocol above.
 *  RMC_HASHMAP_RPC   one active message to the key's owner, which runs the same protocol on its
 *                    table with CPU atomics and answers: one round trip for the whole insert, find
 *                    or erase (served by the owner's progress thread, or inside its RMC calls). It
 *                    needs RMC_AMO=thread (RMC_ERR_UNSUPPORTED otherwise) and is not there for
 *                    updates (the caller's function runs on the caller). Costs no R, W or A.
 * The choice: RPC for inserts, fully atomic finds and erases whose owner is on another node, in
 * thread AMO mode (there each one-sided atomic is an active message too, a round trip each); RDMA
 * otherwise (node-local owners: CPU atomics on shared memory; find-only finds: one read). */
#define RMC_HASHMAP_RDMA RMC_PATH_RDMA /* rmc/promise.h */
#define RMC_HASHMAP_RPC  RMC_PATH_RPC

/* Collective. A hash map with room for at least `capacity` (>= 1) entries of key type `key` and
 * value type `value`: every rank hosts a table of the next power of two at or above
 * capacity / nranks buckets, rounded up (rmc_hashmap_capacity: the total). Keys spread over the
 * ranks by hash, so one rank's table fills before the whole: give room (a load of 1/2 to 3/4
 * probes little).
 * Every rank passes the same arguments (checked). Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (capacity
 * 0), RMC_ERR_TYPE, RMC_ERR_TOO_BIG (capacity above 2^40, or a rank's table larger than its whole
 * segment: RMC_SEGMENT_RESERVE), RMC_ERR_NOMEM (the segment full), RMC_ERR_STATE (the ranks are in
 * different collectives). On error no map exists on any rank. */
rmc_status_t rmc_hashmap_create(size_t capacity, const rmc_type_t *key, const rmc_type_t *value,
                                rmc_hashmap_h *h);

/* Collective. Completes every rank's operations and frees the map; the handle is dead. */
rmc_status_t rmc_hashmap_destroy(rmc_hashmap_h h);

/* Inserts key -> value, replacing the value when the key is present. */
rmc_status_t rmc_hashmap_insert(rmc_hashmap_h h, const void *key, const void *value,
                                unsigned promise);
/* *value = the key's value (serialized types: deserialized, release with rmc_type_release);
 * RMC_ERR_NOT_FOUND when the key is absent (*value unchanged). */
rmc_status_t rmc_hashmap_find(rmc_hashmap_h h, const void *key, void *value, unsigned promise);
/* Removes the key; RMC_ERR_NOT_FOUND when absent. */
rmc_status_t rmc_hashmap_erase(rmc_hashmap_h h, const void *key, unsigned promise);

/* Changes a present key's value in place: fn gets the value (as the caller holds one: serialized
 * types deserialized) and `arg`, changes it and returns RMC_OK to write it back (any other status:
 * nothing is written and the call returns that status). Runs on the calling rank while the bucket
 * is locked: updates of one key from every rank are atomic with each other and with inserts, finds
 * and erases of it. fn must not call RMC. RMC_ERR_NOT_FOUND when the key is absent (no message);
 * a status of fn's own is returned with the message "the update function returned ..." in
 * rmc_last_error, so an fn that returns RMC_ERR_NOT_FOUND is told from an absent key only there
 * (after rmc_last_error_clear before the call): let fn return another status (e.g.
 * RMC_ERR_RETRY) to leave a value unchanged. */
typedef rmc_status_t (*rmc_hashmap_update_fn)(void *value, void *arg);
rmc_status_t rmc_hashmap_update(rmc_hashmap_h h, const void *key, rmc_hashmap_update_fn fn,
                                void *arg, unsigned promise);

rmc_status_t rmc_hashmap_insert_nb(rmc_hashmap_h h, const void *key, const void *value,
                                   unsigned promise, rmc_request_h *req);
rmc_status_t rmc_hashmap_find_nb(rmc_hashmap_h h, const void *key, void *value, unsigned promise,
                                 rmc_request_h *req);

/* Finds n keys at once (keys: n elements of the key type, values: n of the value type), their
 * probes overlapped: status[i] is RMC_OK (values[i] set) or RMC_ERR_NOT_FOUND. Returns RMC_OK
 * when every key was looked up (found or not), else the first error. n = 0: nothing is read (the
 * arrays may be NULL). Completes before it returns. */
rmc_status_t rmc_hashmap_find_n(rmc_hashmap_h h, size_t n, const void *keys, void *values,
                                rmc_status_t *status, unsigned promise);

/* Collective. Every rank rebuilds its table with room for `capacity` entries in all (as create),
 * keeping every entry and dropping the tombstones; no other operation on the map may run
 * meanwhile. Errors: as create; RMC_ERR_FULL (some rank's entries do not fit: nothing changed). */
rmc_status_t rmc_hashmap_resize(rmc_hashmap_h h, size_t capacity);

/* Collective. *count = the entries of the map (no operation may run meanwhile). */
rmc_status_t rmc_hashmap_count(rmc_hashmap_h h, size_t *count);

/* Local. Calls fn(key, value, arg) for every entry this rank owns (as the caller holds them: for
 * serialized types deserialized for the call and released after it), in table order, until fn
 * returns nonzero (then that value is *stopped, else 0; stopped may be NULL). Nothing may change
 * the map meanwhile (RMC_PROMISE_LOCAL). */
typedef int (*rmc_hashmap_visit_fn)(const void *key, const void *value, void *arg);
rmc_status_t rmc_hashmap_local_foreach(rmc_hashmap_h h, rmc_hashmap_visit_fn fn, void *arg,
                                       int *stopped);

/* Local. This rank's default path for h's operations: 0 (chosen per operation), RMC_HASHMAP_RDMA
 * or RMC_HASHMAP_RPC. With RPC as the default, an operation that has no RPC (an update, an entry
 * larger than an active message) goes one-sided; forced per call it fails RMC_ERR_UNSUPPORTED.
 * Errors: RMC_ERR_HANDLE, RMC_ERR_ARG, RMC_ERR_UNSUPPORTED (RPC without RMC_AMO=thread). */
rmc_status_t rmc_hashmap_set_path(rmc_hashmap_h h, unsigned path);

/* Local. The total number of buckets (0 for a bad handle), and the rank owning `key` (-1 and
 * rmc_last_error for a bad handle or key). */
size_t rmc_hashmap_capacity(rmc_hashmap_h h);
int rmc_hashmap_owner(rmc_hashmap_h h, const void *key);

/* ------------------------------------------------------------------ insert buffer --- */

/* HashMapBuffer (seed 001 §6.1): inserts of an insert phase, batched. An insert is copied into a
 * per-owner batch on the calling rank; a full batch is pushed in one operation to a queue hosted by
 * the key's owner (a CIRCULAR queue: two atomics and one write per batch), or, for the caller's own
 * keys, inserted into its table; owners take the batches from their queue and insert them into
 * their own table with plain memory operations (while they insert through the buffer, wait for
 * room in a peer's queue, and at the flush), a group of entries at a time with their buckets
 * prefetched. After rmc_hashmap_buffer_flush every inserted key is in
 * the map (a later insert of a key through the same buffer replaces an earlier one's value;
 * between ranks, one of the values wins), except the absent keys the owners were told to drop
 * (rmc_hashmap_buffer_combine's only_present, rmc_hashmap_buffer_admit's filter).
 *
 * While a buffer is in use (from its first insert to the end of the flush) no other operation may
 * run on its map (an insert phase: RMC_PROMISE_LOCAL rules for the owners). Errors: as the map's
 * operations; RMC_ERR_FULL when an owner's table had no room for some entries (reported by the
 * flush on every rank, with the number of entries dropped in all and in this rank's table in
 * rmc_last_error; which ones is not known: resize the map and insert again, a key inserted again
 * replaces its value). An owner's insert that fails otherwise (a combining function's error, a type
 * function's) is reported by the call in which the owner inserted it (its flush, or a buffered
 * insert of its own that waited for room in a peer's queue) and by every rank's flush; the other
 * entries are inserted all the same. */
typedef struct rmc_hashmap_buffer *rmc_hashmap_buffer_h;

/* Collective. A buffer for h: batches of `batch` entries (>= 1), queues of `queue_capacity`
 * entries (>= batch) on every rank. Errors: as rmc_hashmap_create; RMC_ERR_HANDLE (h),
 * RMC_ERR_ARG (batch 0 or above queue_capacity), RMC_ERR_TOO_BIG (queue_capacity above 2^40, or
 * queue_capacity x an entry's bytes overflows a size_t). */
rmc_status_t rmc_hashmap_buffer_create(rmc_hashmap_h h, size_t queue_capacity, size_t batch,
                                       rmc_hashmap_buffer_h *b);
/* Local (pushes a batch to its owner's queue when it is full): key -> value, as
 * rmc_hashmap_insert, visible after the flush. */
rmc_status_t rmc_hashmap_buffer_insert(rmc_hashmap_buffer_h b, const void *key, const void *value);
/* Local; every rank sets the same outside an insert phase (before its first insert, or between a
 * flush and the next insert: the owners apply it). With fn,
 * a buffered insert of a key the map holds combines instead of replacing: the owner calls
 * fn(stored value, incoming value as `arg`), both as the caller holds values, and stores what fn
 * leaves in the first (e.g. adds counts: the order in which ranks' inserts meet is unspecified, so
 * fn should be commutative); an absent key is inserted, or dropped when only_present is nonzero
 * (counts of keys the map does not track). fn NULL: replacing again. fn runs on the owner while
 * nothing else runs on the map; it must not call RMC. Errors: RMC_ERR_HANDLE, RMC_ERR_NOMEM. */
rmc_status_t rmc_hashmap_buffer_combine(rmc_hashmap_buffer_h b, rmc_hashmap_update_fn fn,
                                        int only_present);
/* An owner-side filter of a buffer (rmc_hashmap_buffer_admit): nonzero lets the key in; it may
 * rewrite the value (its bytes, in place) that is then inserted. */
typedef int (*rmc_hashmap_admit_fn)(const void *key, void *value, void *arg);
/* Local; every rank sets its own outside an insert phase (before its first insert, or between a
 * flush and the next insert: the owners apply it, each with its own arg). With fn, a buffered
 * insert of a key the map does not hold is inserted only when the owner's fn(key, value, arg)
 * returns nonzero, else dropped (not an error); keys the map holds are replaced or combined as
 * before, without asking fn. key and value point to the entry's bytes (8-byte aligned), which is
 * why the map's key and value types must be byte-copied (max_bytes 0); fn may rewrite the value
 * before it is inserted (e.g. a count the sender attached for the filter's sake, reset to the map's
 * starting value). An owner-side filter: e.g. each owner's own Bloom filter of the keys it has
 * seen, so that a key gets in the second time any rank sends it (k-mer counting, apps/kmer) with
 * one buffered insert per key instead of a remote filter operation. With
 * rmc_hashmap_buffer_combine's only_present, absent keys are dropped without asking fn. fn runs on
 * the owner while nothing else runs on the map; it must not call RMC. fn NULL: every absent key is
 * inserted again. Errors: RMC_ERR_HANDLE, RMC_ERR_TYPE (a variable-size key or value type). */
rmc_status_t rmc_hashmap_buffer_admit(rmc_hashmap_buffer_h b, rmc_hashmap_admit_fn fn, void *arg);
/* Collective. Pushes every batch, and returns when every rank's inserts are in the map. */
rmc_status_t rmc_hashmap_buffer_flush(rmc_hashmap_buffer_h b);
/* Collective. Frees the buffer (entries not flushed are dropped); the map stays. A buffer whose
 * map was destroyed first can still (only) be destroyed. */
rmc_status_t rmc_hashmap_buffer_destroy(rmc_hashmap_buffer_h b);

#ifdef __cplusplus
}
#endif
#endif
