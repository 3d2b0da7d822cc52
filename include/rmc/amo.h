/* RMC remote atomic memory operations (AMOs) and mutexes.
 *
 * Atomics work on 4- or 8-byte words of region memory (rmc_region_alloc) and of memory registered
 * with rmc_register (include/rmc/progress.h). The address must be aligned to the word size.
 *
 * Two mechanisms, fixed at rmc_init for the whole job (RMC_AMO=mpi|thread|auto, all ranks agree):
 *  - mpi:    every atomic, node-local and self included, is an MPI atomic (MPI_Fetch_and_op,
 *            MPI_Compare_and_swap, MPI_Accumulate) on the region's window.
 *  - thread: an atomic on a node-local word (self included) is a CPU atomic on the shared memory;
 * an atomic on another node's word is an active message executed by the target's progress thread
 * (or by the target inside its RMC calls when it runs no thread) with CPU atomics. The two are
 * never mixed on one location, so atomics of all ranks on one word are atomic with each other.
 * Atomics are NOT atomic with plain rmc_put / rmc_get / loads / stores to the same word.
 * rmc_amo_mode() tells which mechanism is in force.
 *
 * Completion (blocking forms): the call returns when the operation has been performed at the
 * target, atomically, and (fetching forms) the previous value is in *fetched. Its effect is then
 * visible to every later atomic of any rank on that word. A blocking atomic is performed before the
 * origin's next operation is issued; outstanding non-blocking atomics are not ordered with each
 * other. An atomic is ordered after the origin's earlier puts/gets to the same (region, target), as
 * for rmc_put/rmc_get (location consistency), and a non-blocking one before the origin's later
 * puts/gets of its word: they wait for it where it may still be outstanding (so does a fence, a
 * barrier, a mutex unlock and rmc_region_free, which waits before the region goes).
 *
 * Non-blocking forms (_nb): `*req` receives a request completed by rmc_wait / rmc_test /
 * rmc_wait_all (RMC_REQUEST_NULL when the operation already completed, e.g. node-local in thread
 * mode). *fetched is valid only after completion; `fetched` must stay valid until then. `req` must
 * not be NULL.
 *
 * Errors of every AMO: RMC_ERR_NOT_INIT, RMC_ERR_RANK, RMC_ERR_ARG (NULL fetched / req),
 * RMC_ERR_ALIGN (address not aligned to the word size), RMC_ERR_NOT_REGION (address in no region
 * and no registration of that rank), RMC_ERR_BOUNDS (word crosses the end of a region /
 * registration), RMC_ERR_MPI. On error nothing was performed, except RMC_ERR_MPI from a flush
 * after the atomic was issued: a blocking atomic may then have been performed (MPI reported its
 * completion as failed), and a non-blocking one's *req is its request, to be waited for as usual.
 */
#ifndef RMC_AMO_H
#define RMC_AMO_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/status.h>
#include <rmc/comm.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rmc_amo_mode {
    RMC_AMO_MODE_NONE = 0, /* RMC not initialized */
    RMC_AMO_MODE_MPI = 1,  /* MPI atomics everywhere */
    RMC_AMO_MODE_THREAD =
        2 /* CPU atomics: directly when node-local, else by the target's AM engine */
} rmc_amo_mode_t;

/* Mechanism in force (the same on every rank). Local, no communication. */
rmc_amo_mode_t rmc_amo_mode(void);

/* ------------------------------------------------------------------------- AMOs --- */

/* The atomics, one table: X(op, suffix, C type) per shape. From it come, for every entry,
 *   rmc_amo_<op>_<suffix>     blocking
 *   rmc_amo_<op>_<suffix>_nb  non-blocking (every shape but LOAD)
 * that is:
 *   FETCH  *fetched = old value of the word at `dst` on `rank`; word = old OP value:
 *     rmc_amo_fetch_add_i32/i64  (old + value, wrapping)   rmc_amo_fetch_or_u32/u64  (old | value)
 *     rmc_amo_fetch_and_u32/u64  (old & value)             rmc_amo_fetch_xor_u32/u64 (old ^ value)
 *     rmc_amo_swap_i32/i64       (value)
 *       rmc_status_t rmc_amo_fetch_add_i64(void *dst, int64_t value, int64_t *fetched, int rank);
 *       rmc_status_t rmc_amo_fetch_add_i64_nb(void *dst, int64_t value, int64_t *fetched,
 *                                             int rank, rmc_request_h *req);
 *   CAS    compare-and-swap: *fetched = old; if old == compare the word becomes value (the swap
 *          happened iff *fetched == compare):
 *       rmc_status_t rmc_amo_cas_i64(void *dst, int64_t compare, int64_t value, int64_t *fetched,
 *                                    int rank);                              (also _i32, _nb)
 *   ADD    non-fetching add, word += value; complete when performed at the target:
 *       rmc_status_t rmc_amo_add_i64(void *dst, int64_t value, int rank);     (also _i32, _nb)
 *   LOAD   atomic read of the word (atomic with the AMOs above; e.g. polling a flag):
 *       rmc_status_t rmc_amo_load_i64(const void *src, int64_t *fetched, int rank); (also _i32)
 */
#define RMC_AMO_TABLE(FETCH, CAS, ADD, LOAD)                                                       \
    FETCH(fetch_add, i32, int32_t)                                                                 \
    FETCH(fetch_add, i64, int64_t)                                                                 \
    FETCH(fetch_or, u32, uint32_t)                                                                 \
    FETCH(fetch_or, u64, uint64_t)                                                                 \
    FETCH(fetch_and, u32, uint32_t)                                                                \
    FETCH(fetch_and, u64, uint64_t)                                                                \
    FETCH(fetch_xor, u32, uint32_t)                                                                \
    FETCH(fetch_xor, u64, uint64_t)                                                                \
    FETCH(swap, i32, int32_t)                                                                      \
    FETCH(swap, i64, int64_t)                                                                      \
    CAS(cas, i32, int32_t)                                                                         \
    CAS(cas, i64, int64_t)                                                                         \
    ADD(add, i32, int32_t)                                                                         \
    ADD(add, i64, int64_t)                                                                         \
    LOAD(load, i32, int32_t)                                                                       \
    LOAD(load, i64, int64_t)

#define RMC_AMO_DECL_FETCH_(op, sfx, T)                                                            \
    rmc_status_t rmc_amo_##op##_##sfx(void *dst, T value, T *fetched, int rank);                   \
    rmc_status_t rmc_amo_##op##_##sfx##_nb(void *dst, T value, T *fetched, int rank,               \
                                           rmc_request_h *req);
#define RMC_AMO_DECL_CAS_(op, sfx, T)                                                              \
    rmc_status_t rmc_amo_##op##_##sfx(void *dst, T compare, T value, T *fetched, int rank);        \
    rmc_status_t rmc_amo_##op##_##sfx##_nb(void *dst, T compare, T value, T *fetched, int rank,    \
                                           rmc_request_h *req);
#define RMC_AMO_DECL_ADD_(op, sfx, T)                                                              \
    rmc_status_t rmc_amo_##op##_##sfx(void *dst, T value, int rank);                               \
    rmc_status_t rmc_amo_##op##_##sfx##_nb(void *dst, T value, int rank, rmc_request_h *req);
#define RMC_AMO_DECL_LOAD_(op, sfx, T)                                                             \
    rmc_status_t rmc_amo_##op##_##sfx(const void *src, T *fetched, int rank);

RMC_AMO_TABLE(RMC_AMO_DECL_FETCH_, RMC_AMO_DECL_CAS_, RMC_AMO_DECL_ADD_, RMC_AMO_DECL_LOAD_)

/* ------------------------------------------------------------------------ mutexes --- */

/* A set of mutexes hosted by every rank (like ARMCI_Create_mutexes). Fair: a ticket lock (FIFO
 * order of lock calls, no starvation) built on the AMOs above; waiters poll with bounded back-off
 * and keep the progress engine going. */
typedef struct rmc_mutex *rmc_mutex_h;

/* Collective. Every rank hosts `count` mutexes (count >= 0, may differ per rank), all unlocked.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (count < 0 or m NULL), RMC_ERR_NOMEM, RMC_ERR_MPI.
 * On error no set is created on any rank. */
rmc_status_t rmc_mutex_create(int count, rmc_mutex_h *m);

/* Collective. Frees the set; every mutex must be unlocked. Errors: RMC_ERR_NOT_INIT,
 * RMC_ERR_HANDLE (unknown or destroyed set), RMC_ERR_STATE (some rank still holds a mutex of the
 * set: nothing is freed on any rank). */
rmc_status_t rmc_mutex_destroy(rmc_mutex_h m);

/* Acquires mutex `idx` hosted by `rank`; returns when held. Acquire semantics: data written by the
 * previous holder before its unlock is visible to the new holder's gets and loads.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE (unknown or destroyed set), RMC_ERR_RANK,
 * RMC_ERR_ARG (idx outside [0, count of rank)), RMC_ERR_STATE (the calling thread already holds
 * it), RMC_ERR_NOMEM, RMC_ERR_MPI (a transfer to the mutex's host failed: when the lock had taken
 * its place in the queue, that place is given up and this rank passes the turn on when it comes,
 * during its later RMC calls and at the latest in rmc_finalize, so the mutex stays usable by
 * everyone; not held. Limits: a ticket whose fetch-and-add failed after MPI applied it, or whose
 * host stays unreachable from this rank, cannot be passed on). With threads
 * (rmc_thread_safe), another thread of the rank that holds it makes the caller wait like any other
 * rank's thread. */
rmc_status_t rmc_mutex_lock(rmc_mutex_h m, int idx, int rank);

/* As rmc_mutex_lock but never waits: *acquired = 1 when the mutex was free and is now held, else 0.
 */
rmc_status_t rmc_mutex_trylock(rmc_mutex_h m, int idx, int rank, int *acquired);

/* Releases a mutex held by the caller's rank (any of its threads may release it). Release
 * semantics: completes every operation the rank issued (as rmc_fence_all) before the mutex is
 * handed to the next waiter. Errors: as lock; RMC_ERR_STATE when the rank does not hold it (double
 * unlock included): nothing changed. */
rmc_status_t rmc_mutex_unlock(rmc_mutex_h m, int idx, int rank);

#ifdef __cplusplus
}
#endif
#endif
