/* Internal interface of the progress layer (active messages, progress thread, registration) shared
 * with comm/amo. Never installed. */
#ifndef RMCI_PROGRESS_INTERNAL_H
#define RMCI_PROGRESS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "../rmci.h"
#include "rmc/amo.h"
#include "rmc/progress.h"

/* Internal AM ids (above the user range). */
enum {
    RMCI_AM_ID_AMO = RMC_AM_ID_MAX + 1, /* atomic on region memory (thread mode) */
    RMCI_AM_ID_REG_GET,                 /* get from registered memory */
    RMCI_AM_ID_REG_PUT,                 /* put to registered memory */
    RMCI_AM_ID_REG_AMO,                 /* atomic on registered memory */
    RMCI_AM_ID_SHUTDOWN,                /* progress thread stop (to self) */
    RMCI_AM_NIDS
};

/* A handler returning this asks to be run again on the main thread (inside an RMC call): used when
 * the progress thread cannot resolve something only the main thread may look at. Never sent. */
#define RMCI_AM_DEFER ((rmc_status_t)1)

/* 1 when the calling thread is the progress thread. */
int rmci_am_on_thread(void);

/* Installs an internal handler (local, at init). */
void rmci_am_set_internal(int id, rmc_am_handler_t fn, void *arg);

/* Completion callback of an internal non-blocking AM, run on the main thread once the reply
 * arrived: `st` is the target's status, reply/len its data (len 0 unless st is RMC_OK). Its return
 * value is the status of the request. */
typedef rmc_status_t (*rmci_am_finish_t)(rmc_status_t st, const void *reply, size_t len, void *ptr,
                                         uint64_t data);

/* Blocking AM without argument checks; the payload is p1[0..n1) followed by p2[0..n2) (p2 may be
 * NULL). Polls (serves requests to this rank) while waiting. */
rmc_status_t rmci_am_call(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                          void *reply, size_t reply_cap, size_t *reply_len);

/* Non-blocking internal AM completed by rmc_wait/rmc_test: fin(st, reply, len, ptr, data) runs at
 * completion. */
rmc_status_t rmci_am_call_nb(int rank, int id, const void *p1, size_t n1, const void *p2, size_t n2,
                             size_t reply_cap, rmci_am_finish_t fin, void *ptr, uint64_t data,
                             rmc_request_h *req);

/* Serves requests (when this rank has no progress thread), deferred requests and reply sends,
 * without waiting. Main thread only. */
void rmci_am_poll(void);

/* Waits for an MPI request while serving AMs (attentive wait). Main thread only. */
int rmci_am_wait_mpi(MPI_Request *req);

/* Agrees on a status over all ranks (the most negative wins) with an attentive collective. */
rmc_status_t rmci_am_agree(rmc_status_t st);

/* Payload limit in force. */
size_t rmci_am_max_payload(void);

/* Statistics counters (atomic adds: the thread updates some). */
extern rmc_progress_stats_t rmci_pstats;
#define RMCI_PSTAT_ADD(field, n) __atomic_fetch_add(&rmci_pstats.field, (n), __ATOMIC_RELAXED)

/* ---- comm/amo interface used by the progress layer ------------------------------------------- */

/* AMO operation codes (wire format). */
enum {
    RMCI_AMO_FADD = 1,
    RMCI_AMO_FOR,
    RMCI_AMO_FAND,
    RMCI_AMO_FXOR,
    RMCI_AMO_SWAP,
    RMCI_AMO_CAS,
    RMCI_AMO_ADD,
    RMCI_AMO_LOAD
};

/* CPU atomic on the word at p (width 4 or 8). Returns the old value (zero-extended). */
uint64_t rmci_cpu_amo(void *p, int op, int width, uint64_t a, uint64_t b);

/* Wire format of an atomic carried by an active message: RMCI_AM_ID_AMO (thread-mode atomics on
 * region memory: `at` is the displacement in region `rid`) and RMCI_AM_ID_REG_AMO (atomics on
 * registered memory: `at` is the address, rid 0). */
typedef struct rmci_amo_wire {
    uint64_t at, a, b;
    uint32_t rid;
    uint16_t op, width;
} rmci_amo_wire_t;

/* Target side, before the lookup: decodes the request into *m; RMC_ERR_ARG for a malformed message
 * or a reply buffer under 8 bytes, RMC_ERR_ALIGN for a width other than 4 / 8 or a misaligned word.
 */
rmc_status_t rmci_amo_wire_decode(const void *payload, size_t len, size_t cap, rmci_amo_wire_t *m);
/* Target side, after the lookup: performs the atomic on the word at p, the old value is the 8-byte
 * reply. */
void rmci_amo_wire_apply(void *p, const rmci_amo_wire_t *m, void *reply, size_t *rlen);
/* Origin side: completion of an AM atomic (rmci_am_call_nb's finisher): stores the 8-byte reply as
 * a `width`-byte fetched value at ptr. */
rmc_status_t rmci_amo_wire_finish(rmc_status_t st, const void *reply, size_t len, void *ptr,
                                  uint64_t width);
/* Stores a fetched value of `width` bytes at p (nothing when p is NULL). */
void rmci_amo_store_fetched(void *p, int width, uint64_t v);

/* Called at init / from the poll hook / at finalize by the progress layer. */
rmc_status_t rmci_amo_init(int thread_active);
void rmci_amo_sync(void);      /* main thread: learns new regions (thread mode) */
int rmci_amo_needs_sync(void); /* cheap test for the poll hook */
void rmci_amo_shutdown(void);
void rmci_mutex_shutdown(void);

/* ---- registration (comm/progress/register.c) ---------------------------------------------------
 */
rmc_status_t rmci_reg_init(void);
void rmci_reg_shutdown(void);
/* AMO on registered memory of `rank` (address not in a region). Blocking when req is NULL. */
rmc_status_t rmci_reg_amo(int op, int width, void *dst, uint64_t a, uint64_t b, void *fetched,
                          int rank, rmc_request_h *req);
/* Fall-back put/get (rmci_fallback_hook). */
rmc_status_t rmci_reg_fallback(int kind, const void *remote, void *local, size_t bytes, int rank);

#endif
