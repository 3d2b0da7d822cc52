/* RMC containers: distributed queues (seed 000 §5.1, seed 001 ch. 5).
 *
 * A queue is hosted by one rank (its ring of slots and counters live in the host's segment) and
 * used by every rank with one-sided operations, in which the host's CPU takes no part, or (the RPC
 * path, below: a host on another node in thread AMO mode) as one active message the host serves.
 * Three protocols:
 *
 *  RMC_QUEUE_CIRCULAR  concurrent pushes and pops from every rank. push = 2A + W (reserve slots,
 *                      write, mark them ready in order), pop = 2A + R. Promises: RMC_PROMISE_PUSH
 *                      for a push (only pushes run concurrently: the ready mark is an unordered
 *                      fetch-and-add, no waiting for earlier pushers), RMC_PROMISE_POP likewise for
 *                      pops, RMC_PROMISE_LOCAL on the host (no remote operation).
 *  RMC_QUEUE_FAST      phases of pushes and phases of pops, separated by rmc_barrier: push = A + W,
 *                      pop = A + R (pushed data becomes visible at the barrier). The phases are
 *                      its promise: RMC_PROMISE_PUSH / _POP change nothing (LOCAL does, on the
 *                      host). A rank may pop its own completed pushes before the barrier when no
 *                      other rank uses the queue meanwhile (its own pushes are visible to it).
 *  RMC_QUEUE_CHECKSUM  concurrent pushes and pops; each slot carries a checksum of its contents
 *                      and position instead of a ready mark, so a pop never takes a torn or stale
 *                      entry and pushers never wait for each other: push = A + W, pop = 2A + R
 *                      (reserve, read until the checksum holds, release the slots in order).
 * (A: remote atomic, W: remote write, R: remote read; counted by rmc_op_counts. A push or pop of n
 * elements costs the same As and one W or R, two when it wraps around the ring.)
 *
 * Order: every kind is FIFO. An element whose push completed before another's push began (one
 * rank's calls in sequence, or an earlier phase) is popped before it, and a vector push's elements
 * are popped in their order (tests/mpi/test_fuzz_queue checks it under concurrency).
 *
 * Full and empty. A push that does not fit returns RMC_ERR_FULL and a pop that finds fewer than n
 * elements RMC_ERR_EMPTY; nothing is written or taken then (a vector push or pop is all or
 * nothing). A slot is reused only after the pop that took it has finished reading it. For
 * RMC_QUEUE_CIRCULAR and _CHECKSUM they say what the queue holds: a one-sided push reserves its
 * slots before it knows whether they fit and takes them back when they do not; a push that fits
 * but meets another rank's reservation that does not waits until that one is taken back (or fits)
 * and tries again, rather than failing for it (the same for pops, and rmc_queue_pop_upto). Its
 * second try, and the first push (pop) of a rank after one that failed, reads the counters and
 * reserves by compare-and-swap only where it fits: a rank retrying a push that does not fit holds
 * no reservation (one more A on the try that succeeds). A push still fails with RMC_ERR_FULL
 * (EMPTY) when other reservations keep coming first 1000 times in a row, or when one that does
 * not fit is held for 0.5 s without room in between (an untested non-blocking operation of a
 * rank busy elsewhere: as if it were elements). RPCs alone on a queue are exact (the host
 * reserves with compare-and-swap); an RPC that meets a one-sided reservation that does not fit
 * is answered "retry" and, after 16, goes one-sided and waits as above. A FAST queue's push is
 * checked against the pops of earlier phases (none run in a push phase).
 *
 * Elements are of the queue's type (include/rmc/types.h): `elem` points to one element as the
 * caller holds it (`type->size` bytes), `elems` to n of them. Pops of a variable type deserialize
 * into the caller's elements (release them with rmc_type_release).
 *
 * Completion: a blocking push returns when its elements are in the queue (a pop that reserves
 * their slots sees them; a FAST queue's are visible after the next rmc_barrier); a blocking pop
 * returns with the elements in `elem(s)`. _nb forms return a request (rmc_wait / rmc_test, whose
 * status is the operation's: RMC_ERR_FULL, RMC_ERR_EMPTY, ...); `elem(s)` of a push is copied
 * before the call returns, a pop's is written when the request completes. An _nb operation that
 * finishes during the call (e.g. every step node-local) sets *req to RMC_REQUEST_NULL and the call
 * returns its status. An outstanding one moves on in rmc_test / rmc_wait and in RMC's other waits
 * (rmc_barrier, rmc_progress, ...): a rank that leaves it untested while it waits in rmc_barrier
 * never holds up a peer whose operation depends on it. On a FAST queue, complete an _nb operation
 * (rmc_wait) before the rmc_barrier that ends its phase: the barrier advances it, but a transfer it
 * issues during the barrier's waits is not part of that barrier's fence.
 *
 * Queue operations from several ranks never hang: in every AMO mode, with or without progress
 * threads, waiting loops keep RMC's progress going.
 *
 * Errors of every operation: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE (not a queue, or destroyed),
 * RMC_ERR_ARG (NULL elements, n == 0, a promise the queue kind does not know, RMC_PROMISE_LOCAL
 * away from the host), RMC_ERR_TOO_BIG (n above the capacity; an element's serialized form above
 * the type's max_bytes), RMC_ERR_FULL, RMC_ERR_EMPTY, and comm's errors (RMC_ERR_MPI ...). A
 * comm error after an operation reserved its slots leaves them unpublished: later operations of
 * every rank on that queue may then wait for them for ever (destroy it, or end the job).
 */
#ifndef RMC_QUEUE_H
#define RMC_QUEUE_H

#include <stddef.h>
#include <rmc/status.h>
#include <rmc/comm.h>
#include <rmc/types.h>
#include <rmc/promise.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rmc_queue_kind {
    RMC_QUEUE_CIRCULAR = 0,
    RMC_QUEUE_FAST = 1,
    RMC_QUEUE_CHECKSUM = 2
} rmc_queue_kind_t;

typedef struct rmc_queue *rmc_queue_h;

/* Collective. A queue of `kind` hosted by `host` with room for `capacity` (>= 1) elements of
 * `type`. Every rank must pass the same arguments (checked: RMC_ERR_ARG / RMC_ERR_TYPE on every
 * rank otherwise). Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (q NULL, bad kind, capacity 0),
 * RMC_ERR_RANK, RMC_ERR_TYPE, RMC_ERR_TOO_BIG (capacity above 2^40, or capacity x slot bytes
 * overflows a size_t), RMC_ERR_NOMEM (the
 * host's segment is full), RMC_ERR_STATE (the ranks are not all in this call: see
 * docs/containers.md, "Collectives"). On error no queue exists on any rank. */
rmc_status_t rmc_queue_create(rmc_queue_kind_t kind, int host, size_t capacity,
                              const rmc_type_t *type, rmc_queue_h *q);

/* Collective. Completes every rank's operations, frees the queue's memory; the handle is dead
 * (RMC_ERR_HANDLE afterwards, also through copies of it). */
rmc_status_t rmc_queue_destroy(rmc_queue_h q);

rmc_status_t rmc_queue_push(rmc_queue_h q, const void *elem, unsigned promise);
rmc_status_t rmc_queue_push_n(rmc_queue_h q, const void *elems, size_t n, unsigned promise);
rmc_status_t rmc_queue_pop(rmc_queue_h q, void *elem, unsigned promise);
rmc_status_t rmc_queue_pop_n(rmc_queue_h q, void *elems, size_t n, unsigned promise);

/* Pops between 1 and max elements (as many as are there, up to max): *got of them. RMC_ERR_EMPTY
 * when there is none. A max above the capacity is the capacity (no queue holds more; unlike
 * rmc_queue_pop_n's n, which must fit). */
rmc_status_t rmc_queue_pop_upto(rmc_queue_h q, void *elems, size_t max, size_t *got,
                                unsigned promise);

rmc_status_t rmc_queue_push_nb(rmc_queue_h q, const void *elem, unsigned promise,
                               rmc_request_h *req);
rmc_status_t rmc_queue_push_n_nb(rmc_queue_h q, const void *elems, size_t n, unsigned promise,
                                 rmc_request_h *req);
rmc_status_t rmc_queue_pop_nb(rmc_queue_h q, void *elem, unsigned promise, rmc_request_h *req);
rmc_status_t rmc_queue_pop_n_nb(rmc_queue_h q, void *elems, size_t n, unsigned promise,
                                rmc_request_h *req);

/* Collective. New capacity (>= the number of elements queued): every element is kept, in order.
 * Errors: as create; RMC_ERR_FULL (more elements queued than new_capacity: nothing changed). */
rmc_status_t rmc_queue_resize(rmc_queue_h q, size_t new_capacity);

/* Collective. Moves the queue, every element in order, to `new_host`. */
rmc_status_t rmc_queue_migrate(rmc_queue_h q, int new_host);

/* The host's view of its own queue, without copying (RMC_PROMISE_LOCAL: the caller hosts the
 * queue and no operation on it runs anywhere meanwhile, e.g. after the rmc_barrier that ends a push
 * phase): the queued elements, in order, as at most two runs of elements in the host's memory,
 * *run1 (*n1 elements) then *run2 (*n2; 0 unless the ring wraps). They stay valid until the next
 * operation on the queue; rmc_queue_local_discard then takes the first n of them out (pops without
 * copying). Byte-copied element types of CIRCULAR and FAST queues only (other slots are not the
 * elements themselves). Errors: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE, RMC_ERR_ARG (a NULL pointer;
 * not the host; n above what is queued), RMC_ERR_TYPE (a serialized type, a CHECKSUM queue). */
rmc_status_t rmc_queue_local_peek(rmc_queue_h q, const void **run1, size_t *n1, const void **run2,
                                  size_t *n2);
rmc_status_t rmc_queue_local_discard(rmc_queue_h q, size_t n);

/* Paths (rmc/promise.h): RMC_PATH_RDMA / RMC_PATH_RPC ORed into a push's or pop's `promise`
 * force one; rmc_queue_set_path makes one (or 0: chosen per operation) this rank's default for q.
 * The RPC path sends the operation to the host in one active message: the host reserves with
 * compare-and-swap against the bound, copies the elements in or out and marks them, with CPU
 * atomics, and answers (a pop's elements come back in the reply): one round trip, no R, W or A;
 * where the one-sided protocol would wait for another operation the host answers "retry" and the
 * origin asks again (after 16, one-sided). Chosen for hosts on other nodes in thread AMO mode
 * when the elements fit in an active message (rmc_am_max_payload); one-sided otherwise. Both
 * paths mix on one queue and keep every promise and status above. Errors: RMC_ERR_HANDLE,
 * RMC_ERR_ARG (both paths, or an unknown value), RMC_ERR_UNSUPPORTED (RPC without RMC_AMO=thread),
 * and, for an operation forced to RPC, RMC_ERR_TOO_BIG (its elements do not fit in an active
 * message) and RMC_ERR_ARG (with RMC_PROMISE_LOCAL). */
rmc_status_t rmc_queue_set_path(rmc_queue_h q, unsigned path);

/* Local: the host and the capacity. */
int rmc_queue_host(rmc_queue_h q);
size_t rmc_queue_capacity(rmc_queue_h q);

/* Elements in the queue now (pushed and not popped; pushes and pops in progress may make it
 * stale at once). Two remote atomic reads (the counters). */
rmc_status_t rmc_queue_size(rmc_queue_h q, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
