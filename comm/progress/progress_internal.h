/* The progress layer's internal API (active messages, the progress thread, dynamic registration)
 * for the other comm sub-layers (comm/amo uses it: thread-mode atomics are active messages).
 * Never installed. The progress layer itself knows nothing of its clients. */
#ifndef RMCI_PROGRESS_INTERNAL_H
#define RMCI_PROGRESS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "../rmci.h"
#include "rmc/progress.h"

/* ------------------------------------------------------------- internal handlers --- */

/* A handler returning this asks to be run again on the main thread (inside an RMC call): used when
 * the progress thread cannot resolve something only the main thread may look at. Never sent. */
#define RMCI_AM_DEFER ((rmc_status_t)1)

/* Registers an internal handler (above the user id range) and returns its id in *id. Local, made
 * by every rank in the same order at layer init (after the progress layer's), so ids agree.
 * Errors: RMC_ERR_TOO_BIG (no free internal id), RMC_ERR_UNSUPPORTED (progress layer not up). */
rmc_status_t rmci_am_add_internal(rmc_am_handler_t fn, void *arg, int *id);
/* Removes it (layer finalize). */
void rmci_am_remove_internal(int id);

/* 1 when the calling thread is the progress thread. */
int rmci_am_on_thread(void);

/* 1 when every rank runs a progress thread (agreed at init). */
int rmci_progress_thread_everywhere(void);

/* Completion callback of an internal non-blocking AM, run on the main thread once the reply
 * arrived: `st` is the target's status, reply/len its data (len 0 unless st is RMC_OK). Its return
 * value is the status of the request. */
typedef rmc_status_t (*rmci_am_finish_t)(rmc_status_t st, const void *reply, size_t len, void *ptr,
                                         uint64_t data);

/* Blocking AM without argument checks; the payload is p1[0..n1) followed by p2[0..n2) (p2 may be
 * NULL). Serves requests to this rank while waiting. */
rmc_status_t rmci_am_call(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                          void *reply, size_t reply_cap, size_t *reply_len);

/* Non-blocking internal AM completed by rmc_wait/rmc_test: fin(st, reply, len, ptr, data) runs at
 * completion. */
rmc_status_t rmci_am_call_nb(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t reply_cap, rmci_am_finish_t fin, void *ptr, uint64_t data,
                             rmc_request_h *req);

/* Waits until every active message this rank sent to `rank` has its reply (so the target has
 * executed it); their requests stay with their owners. RMC_ERR_MPI when one failed. */
rmc_status_t rmci_am_quiet(int rank);

/* Payload limit in force (0 when the layer is not up). */
size_t rmci_am_max_payload(void);

/* Statistics counters (atomic adds: the thread updates some). */
extern rmc_progress_stats_t rmci_pstats;
#define RMCI_PSTAT_ADD(field, n) __atomic_fetch_add(&rmci_pstats.field, (n), __ATOMIC_RELAXED)

/* ------------------------------------------------------------------- registration --- */

/* Runs fn(address, ctx) on [addr, addr+len) of this rank's registered memory under the
 * registration lock (so rmc_deregister waits for it): RMC_ERR_NOT_REGION when the range starts in
 * no registration, RMC_ERR_BOUNDS when it leaves it. Any thread. */
rmc_status_t rmci_reg_access(uintptr_t addr, size_t len, void (*fn)(void *p, void *ctx), void *ctx);

#endif
