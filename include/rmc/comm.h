/* RMC comm core: initialization, topology, collective regions and contiguous one-sided RMA.
 *
 * Memory model (location consistency, as ARMCI):
 *  - Operations from one origin to the same (region, target) location are observed in issue order
 *    by that origin: a get issued after a put to an overlapping range of the same target returns
 *    the put's data, without an explicit fence, whether the put was blocking or non-blocking and
 *    whether or not its request has completed yet (RMC completes the put first when needed).
 *    Accumulates of one element type commute and may pass each other (rmc/strided.h); of
 *    different types on the same bytes they apply in issue order too.
 *  - A put is visible to OTHER ranks only after the origin has called rmc_fence(target),
 *    rmc_fence_all() or rmc_barrier().
 *  - rmc_barrier() completes every outstanding operation of every rank, then synchronizes.
 * Node-local peers are accessed with loads/stores through shared memory; other peers through an
 * MPI-3 RMA window (passive target, locked once). RMC_NODE_SIZE=k emulates nodes of k ranks.
 */
#ifndef RMC_COMM_H
#define RMC_COMM_H

#include <stddef.h>
#include <mpi.h>
#include <rmc/status.h>
#include <rmc/layer.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- lifecycle --- */

/* Collective over `comm`. Initializes MPI (MPI_THREAD_MULTIPLE) if the application has not, in
 * which case rmc_finalize finalizes it. RMC works on a private duplicate of `comm`. Errors:
 * RMC_ERR_ALREADY_INIT, RMC_ERR_ARG (comm is MPI_COMM_NULL), RMC_ERR_NOT_INIT (MPI was already
 * finalized and cannot be initialized again), RMC_ERR_MPI. */
rmc_status_t rmc_init(MPI_Comm comm);

/* Collective. Completes all outstanding operations (a request never waited for is completed as
 * rmc_wait would: a custom request's function is called until it finishes; its handle is dead
 * afterwards), frees every region still alive, frees the duplicated communicator and finalizes MPI
 * if rmc_init initialized it. Errors: RMC_ERR_NOT_INIT; the failure of an operation it completed.
 */
rmc_status_t rmc_finalize(void);

/* 1 between rmc_init and rmc_finalize, else 0. */
int rmc_initialized(void);

/* ----------------------------------------------------------------- threads --- */

/* Thread safety (knob RMC_THREAD_SAFE = auto | 1 | 0, read by rmc_init; auto: on when MPI
 * provides MPI_THREAD_MULTIPLE; 1 needs at least MPI_THREAD_SERIALIZED).
 *  - On: threads of a rank may call RMC at the same time. Calls run one at a time under RMC's
 *    thread lock (recursive, fair); a thread waiting inside RMC (rmc_wait, rmc_wait_all,
 *    rmc_barrier, rmc_agree, rmc_wait_round, rmc_wait_mpi, rmc_mutex_lock) lets the others in
 *    between its waiting rounds, so it may wait for another thread of its own rank (a mutex that
 *    thread holds). Collective calls (rmc_init, rmc_finalize, region and mutex-set creation and
 *    freeing, rmc_barrier, rmc_agree, the layers' collectives) must still be made by one thread at
 *    a time per rank, in the same order on every rank (as MPI requires), and region allocation and
 *    freeing hold the lock until they return. A mutex (rmc_mutex_lock) belongs to the thread that
 *    locked it: the same thread locking it again is RMC_ERR_STATE, another thread of the rank
 *    queues for it. Errors (rmc_last_error) are per thread. Cost: one uncontended lock per call
 *    (an atomic increment, ~5-10 ns); node-local puts and gets then leave their inline fast path
 *    (see docs/threads.md for the measured figures).
 *  - Off: one thread at a time per rank may call RMC (MPI_THREAD_FUNNELED / SERIALIZED use);
 *    each call pays one predictable branch.
 * The progress thread (RMC_PROGRESS_THREAD) is independent of this setting. */

/* 1 when RMC runs thread-safe (above), else 0. Local. */
int rmc_thread_safe(void);

/* For layers built on comm that keep state of their own (containers, compat layers): takes RMC's
 * thread lock (recursive) and returns a token for rmc_thread_unlock; takes nothing (token 0) when
 * RMC is not thread-safe. RMC calls made while holding it nest inside it. Do not hold it across a
 * wait that may depend on another thread of this rank (rmc_mutex_lock of a mutex a thread of this
 * rank holds, rmc_barrier): waits step out of the lock only when no layer above holds it. */
int rmc_thread_lock(void);
/* Releases what rmc_thread_lock(token) took. */
void rmc_thread_unlock(int token);

/* For a layer's waiting loop that holds rmc_thread_lock: when other threads queue for RMC's thread
 * lock, lets them in (whatever the nesting) and takes it back, at the same nesting, behind them.
 * The caller vouches that the state of every layer holding the lock is consistent at this point.
 * Returns 1 when it stepped out, 0 otherwise (nobody waiting, not held, not thread-safe). */
int rmc_thread_pause(void);

/* Holds RMC's thread lock (rmc_thread_lock) from this declaration to the end of the enclosing
 * block, whichever way it is left (GNU C's cleanup attribute: GCC and Clang). For layers. */
static inline void rmc_thread_unlock_at_(int *token)
{
    rmc_thread_unlock(*token);
}
#define RMC_THREAD_LOCKED()                                                                        \
    int rmc_thread_token_ __attribute__((cleanup(rmc_thread_unlock_at_))) = rmc_thread_lock()

/* Rank / size in RMC's communicator; -1 when not initialized. */
int rmc_rank(void);
int rmc_nranks(void);
/* Rank within this rank's (possibly emulated) node and that node's size; -1 when not initialized.
 */
int rmc_node_rank(void);
int rmc_node_size(void);
/* Number of (possibly emulated) nodes; -1 when not initialized. */
int rmc_node_count(void);
/* 1 when `rank` is on this rank's node (reached by loads/stores), 0 if not, -1 on bad rank / not
 * init (a query: nothing is recorded in rmc_last_error). */
int rmc_same_node(int rank);

/* Topology as RMC sees it (local, no communication). */
typedef struct rmc_topology {
    int rank, nranks;         /* in RMC's communicator */
    int node_rank, node_size; /* within this rank's (possibly emulated) node */
    int node_id, node_count;  /* this node's index in [0, node_count) and the number of nodes */
    int emulated;             /* RMC_NODE_SIZE value in force (0 = real nodes) */
    int hw_cores, hw_pus;     /* cores / processing units of this machine (hwloc) */
    int hw_bound_pus;         /* PUs in this rank's CPU binding (hwloc); hw_pus when unbound */
    int machine_ranks;        /* ranks on this machine (the real node, whatever RMC_NODE_SIZE) */
} rmc_topology_t;

/* Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (t NULL). */
rmc_status_t rmc_topology(rmc_topology_t *t);

/* Drives every layer's progress once: serves the active messages addressed to this rank that have
 * arrived (when it runs no progress thread, only RMC calls serve them) and advances this rank's
 * outstanding requests. Never blocks. Errors: RMC_ERR_NOT_INIT. */
rmc_status_t rmc_progress(void);

/* Local. *comm = RMC's communicator (a duplicate of the one given to rmc_init; its ranks are RMC's
 * ranks). Read-only: never free it. Code built on RMC duplicates it for collectives of its own, and
 * waits for them with rmc_wait_mpi. Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (NULL). */
rmc_status_t rmc_comm(MPI_Comm *comm);

/* Waits for an MPI request (e.g. of MPI_Ibcast) while serving RMC's active messages, as RMC's own
 * collectives do: a rank waiting here never holds up a peer whose RMC operation needs it. Before
 * rmc_init (or after rmc_finalize) it is MPI_Wait. *req is MPI_REQUEST_NULL afterwards.
 * Errors: RMC_ERR_ARG (NULL), RMC_ERR_MPI (MPI_Test failed; rmc_last_error names it). */
rmc_status_t rmc_wait_mpi(MPI_Request *req);

/* One round of a waiting loop of code built on RMC (retrying an operation, polling a flag):
 * serves active messages as rmc_progress does and, when the ranks on this machine outnumber its
 * processing units, yields the processor after a few rounds (*spins counts them: start at 0). RMC's
 * own waits do the same: a rank that has a processor to itself keeps polling, which completes the
 * operations peers aim at it sooner. Never blocks. */
void rmc_wait_round(unsigned *spins);

/* Collective. Every rank learns the worst (most negative) of the statuses the ranks pass: the way
 * a collective operation built on RMC agrees on its outcome, so that a failure on one rank never
 * leaves another waiting. Serves active messages while it waits. Errors: RMC_ERR_NOT_INIT,
 * RMC_ERR_MPI; otherwise the agreed status (a positive `status`, which is no RMC status, counts as
 * RMC_ERR_ARG). */
rmc_status_t rmc_agree(rmc_status_t status);

/* Collective. Completes at their targets all operations the caller issued before it through comm's
 * calls (contiguous, strided, vector, accumulates, atomics; blocking or not, their requests waited
 * or not), waits for every rank to do the same, then returns: afterwards every rank sees every put
 * issued by any rank before the barrier. Requests still need rmc_wait / rmc_test: a non-blocking
 * get's destination (an atomic's fetched value) is written when its request completes, which the
 * barrier does not do. Operations of several steps (rmc_request_custom: container _nb operations)
 * are advanced by the barrier's waits but not waited for: complete them (rmc_wait) before the
 * barrier when other ranks must see their effect after it. */
rmc_status_t rmc_barrier(void);

/* ------------------------------------------------------------------------ regions --- */

typedef struct rmc_region *rmc_region_h;

/* Collective. Allocates `size` bytes on the calling rank (sizes may differ per rank, 0 included)
 * and fills bases[0..nranks-1] with every rank's base address (in that rank's address space; NULL
 * where that rank gave 0). `bases` may be NULL if the caller does not need them (rmc_region_base).
 * Memory is zero-filled and 64-byte aligned. On error no region is created on any rank.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_NOMEM, RMC_ERR_MPI. */
rmc_status_t rmc_region_alloc(size_t size, void **bases, rmc_region_h *region);

/* Collective over `comm`, whose processes must all be RMC ranks (a sub-communicator of the one
 * given to rmc_init, e.g. from MPI_Comm_split): a region of those ranks only. Like
 * rmc_region_alloc, and `bases` is indexed by RMC rank too (NULL for ranks outside `comm`). Members
 * reach each other's parts with every operation (node-local ones through shared memory); an address
 * of a non-member is in no region. rmc_region_free is then collective over the members;
 * rmc_finalize frees leftover regions in reverse creation order. With comm spanning every RMC rank
 * this is rmc_region_alloc. Errors: as rmc_region_alloc; RMC_ERR_ARG (comm MPI_COMM_NULL, or a
 * process of comm is not an RMC rank: reported by every member). */
rmc_status_t rmc_region_alloc_comm(MPI_Comm comm, size_t size, void **bases, rmc_region_h *region);

/* Collective (over the region's members). Completes outstanding operations on the region, then
 * frees it. Addresses inside it become invalid (RMC_ERR_NOT_REGION). Requests of this rank's
 * non-blocking operations on it stay valid: rmc_wait / rmc_test of them after the free return
 * their outcome (a get's data is in place). Errors: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE (unknown or
 * freed: a freed handle is no other region's until 256 more regions have been freed, so a stale
 * copy is refused by every call that takes a region), RMC_ERR_ARG (the members passed different
 * regions). The outcome is agreed before anything is freed: every member fails alike and the
 * regions stay live. A handle freed already (a stale copy) fails at once on the calling rank (every
 * member freed it). A NULL or never-valid handle: the rank cannot know the members of the region
 * meant; it agrees with every rank when all its live regions were created on RMC's communicator
 * (a rank calling alone then waits), and otherwise returns alone (the members then wait). */
rmc_status_t rmc_region_free(rmc_region_h region);

/* Base address and size of `rank`'s part of a region (local, no communication). */
rmc_status_t rmc_region_base(rmc_region_h region, int rank, void **base, size_t *size);

/* Number of live regions (local). */
size_t rmc_region_count(void);

/* Collective. A region whose parts are reserved address space: each rank reserves `size` bytes
 * (sizes may differ, 0 included), reachable by every operation at once like rmc_region_alloc's,
 * zero-filled, but taking memory only as pages are first written (or committed; RMC commits the
 * first page of each part, which holds its own header, at once). For memory that
 * is filled over time (an allocator's heap, a growing container): reserving costs almost nothing
 * (a sparse file in /dev/shm per rank, mapped by node-local peers; rmc_region_alloc's shared
 * memory costs ~0.8 s per GiB to set up with MPICH). Commit a range (rmc_region_commit) before
 * handing it out: a store into an uncommitted page when the node's shared memory is exhausted
 * kills the process (SIGBUS), where a commit returns RMC_ERR_NOMEM. On networks that register
 * (pin) window memory, the whole reservation is registered: reserve what the job may use. Freed
 * with rmc_region_free. Errors: as rmc_region_alloc; RMC_ERR_TOO_BIG (more than 64 TiB). */
rmc_status_t rmc_region_reserve(size_t size, void **bases, rmc_region_h *region);

/* Local. Backs [ptr, ptr+len) of this rank's part of `region` with memory now, so that storing into
 * it cannot fail later. A no-op for regions of rmc_region_alloc (committed when allocated).
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_HANDLE, RMC_ERR_NOT_REGION (ptr not in this rank's part),
 * RMC_ERR_BOUNDS, RMC_ERR_NOMEM (the node's shared memory is exhausted: nothing committed beyond
 * what the system could give). */
rmc_status_t rmc_region_commit(rmc_region_h region, void *ptr, size_t len);

/* Local. *ptr = this rank's load/store address of `rank`'s part of the region when `rank` is on
 * this node (itself included), else NULL: memory RMC reaches with plain copies, which code built on
 * RMC may read and write directly (plain data only: atomics must go through rmc_amo_*). Errors:
 * RMC_ERR_NOT_INIT, RMC_ERR_ARG (ptr NULL), RMC_ERR_RANK, RMC_ERR_HANDLE. */
rmc_status_t rmc_region_local(rmc_region_h region, int rank, void **ptr);

/* ------------------------------------------------------------- contiguous RMA --- */

/* Blocking put of `bytes` from local `src` to address `dst` in `rank`'s part of a region.
 * Returns when `src` may be reused. Visible to the origin's later gets at once; to other ranks
 * after rmc_fence(rank) / rmc_fence_all() / rmc_barrier(). bytes == 0 is a no-op (pointers
 * unchecked). Any size is accepted (transfers beyond 2 GiB are split into at most two MPI
 * operations). A remote address outside every region of `rank` may be memory `rank` registered with
 * rmc_register (rmc/progress.h): it is then served by an active message at the target, which also
 * answers RMC_ERR_NOT_REGION for unregistered memory — so that error arrives once the target makes
 * progress (inside any RMC call, or at once when its progress thread runs).
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_RANK, RMC_ERR_ARG (NULL src), RMC_ERR_NOT_REGION,
 * RMC_ERR_BOUNDS. */
rmc_status_t rmc_put(const void *src, void *dst, size_t bytes, int rank);

/* Blocking get of `bytes` from address `src` in `rank`'s part of a region into local `dst`.
 * Returns when the data has arrived in `dst`. Sees every earlier put of this origin to that range.
 * Errors as rmc_put. */
rmc_status_t rmc_get(const void *src, void *dst, size_t bytes, int rank);

/* ----------------------------------------------------------------- non-blocking --- */

typedef struct rmc_request *rmc_request_h;
#define RMC_REQUEST_NULL ((rmc_request_h)0)

/* Non-blocking forms. `*req` receives a request (RMC_REQUEST_NULL when the operation completed
 * immediately, e.g. node-local). `req` may be NULL: the operation is then completed implicitly by
 * rmc_fence / rmc_fence_all / rmc_barrier ("implicit handle").
 * put_nb: `src` must not be modified until the request completes; get_nb: `dst` holds the data only
 * after the request completes. A completed put is visible at the target after a fence.
 * Errors as the blocking forms; on error nothing was issued and *req is RMC_REQUEST_NULL, except
 * RMC_ERR_MPI from a flush the call made after issuing the operation (of the pair's earlier
 * operations, or of this one when the pair's records have no room): *req is then the operation's
 * request, to be waited for as usual (the next fence flushes the pair again). */
rmc_status_t rmc_put_nb(const void *src, void *dst, size_t bytes, int rank, rmc_request_h *req);
rmc_status_t rmc_get_nb(const void *src, void *dst, size_t bytes, int rank, rmc_request_h *req);

/* Waits for *req to complete locally (put: buffer reusable; get: data arrived), releases it and
 * sets *req = RMC_REQUEST_NULL. Waiting on RMC_REQUEST_NULL returns RMC_OK at once. Errors:
 * RMC_ERR_ARG (req NULL), RMC_ERR_HANDLE (not a live request: a released request is handed out
 * again only after every other free one, at least 255 later operations, so a stale copy of a
 * handle is refused rather than completing another operation), RMC_ERR_NOT_INIT, RMC_ERR_MPI and
 * the operation's own errors (*req = RMC_REQUEST_NULL in every case of a live request: after an
 * MPI failure the operation's buffers are never freed early, as MPI may still use them). */
rmc_status_t rmc_wait(rmc_request_h *req);

/* Tests *req: *done = 1 and the request is released (*req = RMC_REQUEST_NULL) when complete,
 * else *done = 0. Errors as rmc_wait; when MPI's test of the request failed (RMC_ERR_MPI, *done
 * = 0) the request stays live, its buffers possibly still in use by MPI: test or wait again
 * (rmc_wait then gives up on it, its buffers never freed early). A custom request's failure is
 * final (*done = 1, released). */
rmc_status_t rmc_test(rmc_request_h *req, int *done);

/* A request completed by code built on RMC (an operation of several steps, e.g. a container's
 * push: an atomic, then a put, then another atomic). rmc_test calls fn(state, &done) once,
 * rmc_wait calls it until it sets *done = 1 (serving active messages between calls); fn advances
 * the operation without blocking (it may start and test RMC requests of its own) and returns the
 * operation's status. RMC's top-level waits (rmc_barrier, rmc_wait of any request, rmc_progress,
 * rmc_wait_round, rmc_wait_mpi, rmc_agree) call it too, once per round, so the operation moves
 * also while its owner waits for something else (a peer's operation may depend on it); a wait
 * inside fn (fn should not block, but may wait for a request of its own, e.g. on a failure path)
 * advances the other requests but never calls fn itself again (so a wait, inside fn, for this very
 * request or one whose function is running further up would never end). After fn
 * has set *done = 1 or returned an error it is never called again: that call must release
 * `state`. The request is complete when that happens, and the status fn returned is rmc_wait's /
 * rmc_test's (at once, if it finished inside another wait). Errors: RMC_ERR_NOT_INIT,
 * RMC_ERR_ARG (fn or req NULL), RMC_ERR_NOMEM; on error fn is never called. */
typedef rmc_status_t (*rmc_request_fn)(void *state, int *done);
rmc_status_t rmc_request_custom(rmc_request_fn fn, void *state, rmc_request_h *req);

/* Waits for every request in reqs[0..n-1] (RMC_REQUEST_NULL entries are skipped). */
rmc_status_t rmc_wait_all(rmc_request_h *reqs, size_t n);

/* Completes, at the target, every operation this rank issued to `rank` (including implicit-handle
 * non-blocking ones): afterwards their data is visible to every rank. Flushes only the regions
 * with outstanding writes to that target. Like rmc_barrier it completes no request (a get's
 * destination is written, a put's request released, by rmc_wait / rmc_test) and does not wait for
 * operations of several steps (custom requests). Errors: RMC_ERR_NOT_INIT, RMC_ERR_RANK. */
rmc_status_t rmc_fence(int rank);

/* rmc_fence for every target; only (region, target) pairs with outstanding operations are flushed.
 */
rmc_status_t rmc_fence_all(void);

/* ---------------------------------------------------------------- introspection --- */

/* Counters for tests and tuning (per rank, since rmc_init). */
typedef struct rmc_comm_stats {
    unsigned long long flushes;          /* MPI_Win_flush calls issued (conflicts + fences) */
    unsigned long long conflict_flushes; /* flushes forced by a get after an outstanding write */
    unsigned long long local_ops;        /* operations served by loads/stores */
    unsigned long long remote_ops;       /* operations issued through MPI RMA */
    unsigned long long xlate_lookups;    /* translation-cache lookups */
    unsigned long long xlate_mru_hits;   /* of which hit the MRU front */
    unsigned long long yielding_waits;   /* blocking contiguous gets and MPI fetching atomics (not
                                          * CAS) completed through a request waited with yields
                                          * instead of MPICH's flush_local / flush (ranks outnumber
                                          * this machine's processing units) */
} rmc_comm_stats_t;

rmc_status_t rmc_comm_stats(rmc_comm_stats_t *stats);

/* What this rank asked of RMC, per kind of operation: one count per call of a public get, put,
 * accumulate or atomic function that succeeded (blocking or not, contiguous, strided, 2-D or
 * vector: one call is one operation, whatever its size or target, self included, 0 bytes too), and
 * the bytes it moved. The unit of
 * the cost tables of the containers (R, W, A): tests assert them with these. Counted only while
 * enabled (knob RMC_STATS=1 at rmc_init, or rmc_op_counts_enable); off, a call pays one predictable
 * branch. Per rank, not thread-safe. */
typedef struct rmc_op_counts {
    unsigned long long reads, writes, accs, atomics;                     /* calls */
    unsigned long long read_bytes, write_bytes, acc_bytes, atomic_bytes; /* bytes moved */
} rmc_op_counts_t;

/* Local. Copies the counters. Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (NULL). */
rmc_status_t rmc_op_counts(rmc_op_counts_t *counts);
/* Local. Zeroes the counters and turns counting on (on != 0) or off. Errors: RMC_ERR_NOT_INIT. */
rmc_status_t rmc_op_counts_enable(int on);

/* RMC version string "MAJOR.MINOR.PATCH". */
const char *rmc_version(void);

#ifdef __cplusplus
}
#endif
#endif
