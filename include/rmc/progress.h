/* RMC progress: active messages, the asynchronous progress thread and dynamic registration.
 *
 * Active messages (AMs). A handler is registered collectively under an id; any rank then sends a
 * request (payload up to rmc_am_max_payload() bytes, knob RMC_AM_MAX_PAYLOAD) to a rank, whose
 * handler runs once and may return a reply. Requests are served
 *  - inside the target's RMC calls: comm calls poll now and then (every 16th call that may
 *    communicate; a node-local copy counts 1/16 of one, every 64 KiB moved one),
 * waiting calls (blocking AMs and atomics, rmc_wait/rmc_test on their requests, rmc_barrier,
 * collective calls of this layer) and rmc_progress() poll continuously;
 *  - and, when the target runs one (RMC_PROGRESS_THREAD, below), by its progress thread at any
 * time, also while the application computes without calling RMC. Without a progress thread a rank
 * that computes for a long time without calling RMC delays the requests sent to it (seed 004,
 * Figure 9); it must not enter a blocking MPI call or a collective other than rmc_barrier (e.g.
 * rmc_region_alloc, MPI_Allreduce) while a peer still waits for it to serve a request: leave
 * communication phases through rmc_barrier.
 *
 * Handlers run on the progress thread (if any) or on the thread calling RMC, one at a time per
 * rank. With a progress thread they run concurrently with the application's main thread: the data
 * they touch must be synchronized by the application (e.g. atomics). A handler must not call RMC
 * communication functions: inside a handler they return RMC_ERR_STATE without doing anything
 * (rmc_put / rmc_get and their strided, vector and non-blocking forms, accumulates, atomics,
 * fences, rmc_wait, rmc_barrier, collectives, rmc_am_send / rmc_am_send_nb, rmc_progress): a wait
 * there could only hang (the origin's thread, or this rank's, may wait for the handler's reply
 * while holding RMC's lock). Handlers read and write their own rank's memory directly and answer
 * through their reply buffer; queries (rmc_region_base, rmc_region_local, rmc_topology, rmc_comm,
 * rmc_rank, ...) are allowed, without RMC's thread lock: on the progress thread they must not race
 * with another thread of the rank allocating or freeing regions.
 *
 * Progress thread: RMC_PROGRESS_THREAD=1|0|auto (auto: on when MPI_THREAD_MULTIPLE is provided and
 * a processing unit no rank is bound to is free for it). It needs
 * MPI_THREAD_MULTIPLE (1 without it: rmc_init fails with RMC_ERR_UNSUPPORTED; auto: off). It is
 * pinned with hwloc to a processing unit that no rank of the machine is bound to, when one exists,
 * and then polls continuously; otherwise it shares the rank's CPUs and polls with bounded
 * exponential back-off (sleeping, not spinning; at most RMC_PROGRESS_BACKOFF_US). While the main
 * thread keeps calling RMC it serves requests itself and the thread leaves the network alone (no
 * MPI calls competing with it).
 *
 * Dynamic registration. rmc_register exposes memory that was not allocated collectively: peers can
 * then rmc_put / rmc_get (and AMOs) to its addresses with the usual API. Such accesses are served
 * by the target through active messages (seed 004 eq. 8 fall-back protocol): the origin looks the
 * range up once, caches its descriptor (bounded, least-frequently-used eviction, RMC_REGION_CACHE
 * entries) and the target checks every access against its registrations: an address that is not (or
 * no longer) registered yields RMC_ERR_NOT_REGION at the origin, and never touches memory. Such a
 * transfer is complete at the target when the call returns (non-blocking forms hand back
 * RMC_REQUEST_NULL), so it is visible to every rank at once. Transfers above the AM payload limit
 * are split into several messages. Atomics on registered memory are CPU atomics performed by the
 * target (in both AMO modes: registered memory is never in an MPI window), so they are atomic with
 * each other.
 */
#ifndef RMC_PROGRESS_H
#define RMC_PROGRESS_H

#include <stddef.h>
#include <rmc/status.h>
#include <rmc/comm.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ active messages --- */

/* Largest user id for rmc_am_register (ids 0..RMC_AM_ID_MAX). */
#define RMC_AM_ID_MAX 255

/* A handler: `payload`/`len` is the request, `origin` the sender. It may write up to `reply_cap`
 * bytes into `reply` and set *reply_len (initially 0). Its return status is delivered to the origin
 * as the status of the send (RMC_OK: success; a *reply_len above reply_cap is delivered as
 * RMC_ERR_TOO_BIG with no reply; a positive status, which is no rmc_status_t, as RMC_ERR_INTERNAL).
 * `arg` is the pointer given at registration. The origin's rmc_last_error names the target rank
 * and the handler id of a failure decided at the target. */
typedef rmc_status_t (*rmc_am_handler_t)(int origin, const void *payload, size_t len, void *reply,
                                         size_t reply_cap, size_t *reply_len, void *arg);

/* Collective: every rank registers `handler` (may differ per rank) under `id`; handler NULL removes
 * it. Returns after every rank has registered, so requests sent afterwards find it.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (id outside [0, RMC_AM_ID_MAX]), RMC_ERR_MPI. */
rmc_status_t rmc_am_register(int id, rmc_am_handler_t handler, void *arg);

/* For libraries built on RMC (its containers, ...): collective, like rmc_am_register, but the id
 * is a fresh one outside the application's range [0, RMC_AM_ID_MAX], so a layer's handler never
 * collides with the application's; *id (the same on every rank, checked) is what rmc_am_send and
 * rmc_am_send_nb take. Call it from a layer's init (rmc/layer.h). rmc_am_unregister_layer(id)
 * removes it (local; from the layer's finalize). Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (NULL),
 * RMC_ERR_TOO_BIG (no id left: 16 are shared by RMC's sub-layers and the layers), RMC_ERR_STATE
 * (the ranks registered in different orders), RMC_ERR_UNSUPPORTED; unregister: RMC_ERR_NOT_FOUND.
 */
rmc_status_t rmc_am_register_layer(rmc_am_handler_t handler, void *arg, int *id);
rmc_status_t rmc_am_unregister_layer(int id);

/* Largest payload (and reply) of an AM in bytes (knob RMC_AM_MAX_PAYLOAD). 0 when not initialized.
 */
size_t rmc_am_max_payload(void);

/* Blocking AM to `rank` (self included). Returns after the handler ran at the target and its reply
 * arrived: up to reply_cap bytes are in `reply` and *reply_len is the reply's size (reply_len may
 * be NULL; reply may be NULL when reply_cap is 0). The payload buffer may be reused on return.
 * Requests of one origin to one target are handled in issue order.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_RANK, RMC_ERR_ARG (id out of range, NULL payload with len > 0,
 * NULL reply with reply_cap > 0), RMC_ERR_TOO_BIG (len or reply_cap above rmc_am_max_payload();
 * nothing sent), RMC_ERR_STATE (called inside a handler), RMC_ERR_NOT_FOUND (no handler under `id`
 * at the target), RMC_ERR_MPI, RMC_ERR_INTERNAL (the handler returned a positive status), or the
 * handler's status. */
rmc_status_t rmc_am_send(int rank, int id, const void *payload, size_t len, void *reply,
                         size_t reply_cap, size_t *reply_len);

/* Non-blocking rmc_am_send: the payload is copied, so it may be reused on return; `reply` and
 * `reply_len` are written when the request completes (rmc_wait / rmc_test), which returns the
 * status rmc_am_send would have returned. `req` must not be NULL. */
rmc_status_t rmc_am_send_nb(int rank, int id, const void *payload, size_t len, void *reply,
                            size_t reply_cap, size_t *reply_len, rmc_request_h *req);

/* rmc_progress() (declared in rmc/comm.h) serves pending requests addressed to this rank and
 * advances this rank's outstanding ones. */

/* 1 when this rank runs an asynchronous progress thread, 0 if not, -1 when not initialized. */
int rmc_progress_thread_active(void);

/* ---------------------------------------------------------------- dynamic registration --- */

/* Local (not collective). Exposes [ptr, ptr+len) to remote rmc_put / rmc_get / AMOs until
 * rmc_deregister. The range must not overlap an existing registration or a region of this rank.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (ptr NULL or len 0), RMC_ERR_STATE (overlap),
 * RMC_ERR_NOMEM. */
rmc_status_t rmc_register(void *ptr, size_t len);

/* Local. Withdraws the registration that starts at `ptr`. On return no remote access touches the
 * range any more (an access in progress has finished); later ones get RMC_ERR_NOT_REGION.
 * Errors: RMC_ERR_NOT_INIT, RMC_ERR_NOT_FOUND (no registration starts at ptr): nothing changed. */
rmc_status_t rmc_deregister(void *ptr);

/* ----------------------------------------------------------------------- statistics --- */

typedef struct rmc_progress_stats {
    unsigned long long am_sent;   /* AM requests sent by this rank (internal ones included) */
    unsigned long long am_served; /* requests whose handler ran on this rank */
    unsigned long long am_served_thread; /* of which by the progress thread */
    unsigned long long am_deferred;      /* requests the thread handed to the main thread */
    unsigned long long fallback_ops;     /* put/get/AMO served through AMs on registered memory */
    unsigned long long cache_hits;       /* remote registration cache hits */
    unsigned long long cache_misses;     /* lookups sent because the descriptor was not cached */
    unsigned long long cache_evictions;  /* LFU evictions */
    unsigned long long cache_stale;      /* cached descriptors found stale at the target */
    unsigned long long thread_sleeps;    /* back-off sleeps of the progress thread */
} rmc_progress_stats_t;

/* Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG. */
rmc_status_t rmc_progress_stats(rmc_progress_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif
