/* The comm core's interface for its sub-layers (comm/strided, comm/amo, comm/progress). Never
 * installed; containers and the compat layers never include it (they use include/rmc/ headers).
 *
 * Sub-layers see the core through this header only: a read-only view of the core's state, the
 * resolution of remote addresses, region accessors, conflict tracking, requests, errors,
 * agreement and attentive waiting. The core's own structures are in comm/core.h, which no
 * sub-layer includes (the layering check in `make check` holds the code to that). Sub-layers hook
 * into the core's life cycle through the layer registry (include/rmc/layer.h). */
#ifndef RMCI_H
#define RMCI_H

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <mpi.h>
#include "rmc/comm.h"
#include "rmc/env.h"
#include "rmc/layer.h"
#include "xlate.h"

/* Hot-path argument checks (rank range, NULL buffers, alignment) are compiled in unless configure
 * was given --disable-checks. Checks that protect memory or collectives are never compiled out. */
#ifdef RMC_ENABLE_CHECKS
#define RMCI_CHECKS 1
#else
#define RMCI_CHECKS 0
#endif

#define RMCI_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RMCI_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RMCI_COLD        __attribute__((cold, noinline))

/* ------------------------------------------------------------ view of the core state --- */

typedef struct rmci_info {
    int initialized;
    int rank, nranks; /* in RMC's communicator */
    int node_size, node_count;
    MPI_Comm comm;          /* RMC's communicator (a private duplicate) */
    const int *local_index; /* [nranks] node rank of each rank, -1 when not node-local */
    void *hwloc_topo;       /* hwloc_topology_t of this machine, or NULL */
    int malloc_tuned;       /* RMC_MALLOC_TUNE set glibc's thresholds: MPI's large temporaries
                               are heap blocks, not fresh pages (init.c) */
} rmci_info_t;

/* Written by the core only; sub-layers read it through RMCI (const). */
extern rmci_info_t rmci_info_;
#define RMCI (*(const rmci_info_t *)&rmci_info_)

/* Operation counters of rmc_comm_stats; every layer adds to them through RMCI_STAT. */
extern rmc_comm_stats_t rmci_stats_;
#define RMCI_STAT(field, n) (rmci_stats_.field += (n))

/* Operation counters of rmc_op_counts (knob RMC_STATS): one per public data-movement call, by kind.
 * Off by default; a call then pays one predictable branch. Counted atomically (calls from several
 * threads may count outside the thread lock). */
extern int rmci_opc_on_;
extern rmc_op_counts_t rmci_opc_;
#define RMCI_OPC(kind, bytes)                                                                      \
    do {                                                                                           \
        if (RMCI_UNLIKELY(rmci_opc_on_)) {                                                         \
            __atomic_fetch_add(&rmci_opc_.kind##s, 1, __ATOMIC_RELAXED);                           \
            __atomic_fetch_add(&rmci_opc_.kind##_bytes, (bytes), __ATOMIC_RELAXED);                \
        }                                                                                          \
    } while (0)

/* ---------------------------------------------------------------------- errors --- */

/* Records a failure for rmc_last_error ("<where>: <message>") and returns st. */
RMCI_COLD rmc_status_t rmci_fail(rmc_status_t st, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records a failed MPI call (its name and MPI_Error_string of rc) and returns RMC_ERR_MPI. */
RMCI_COLD rmc_status_t rmci_mpi_fail(const char *call, const char *where, int rc);
/* Prefixes the recorded message with "<fn>: " (the public function a nested failure happened in)
 * unless it starts with it already; returns st. For the error paths of entry points. */
RMCI_COLD rmc_status_t rmci_in(rmc_status_t st, const char *fn);
/* RMC_VERBOSE is read again at the next failure (rmc_init calls it: knobs are read at every
 * rmc_init, docs/environment.md). */
void rmci_error_reset(void);
/* This thread's last error and count of failures (rmci_error_count), saved to buf[RMCI_ERRMSG]
 * (returns the count) and restored: code that runs inside another call, as a handler served while
 * the thread waits, leaves the caller's message and count as they were. */
#define RMCI_ERRMSG 512
unsigned long rmci_error_save(char *buf);
void rmci_error_restore(const char *buf, unsigned long count);
/* Counts the failures this thread recorded: a caller compares it before and after a callee to
 * know whether the callee recorded its failure (then rmci_in, else rmci_fail). */
unsigned long rmci_error_count(void);
/* A failure that no call can return (found by the progress thread, a poll): always on stderr. */
/* A note that is no failure, on stderr only with RMC_VERBOSE (as the failures' messages). */
RMCI_COLD void rmci_verbose_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
RMCI_COLD void rmci_async_fail(const char *where, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Fault injection for tests (knob RMC_FAULT, comm/fault.c): when armed, a named MPI call or an
 * allocation fails on a chosen rank at a chosen count. Costs one predictable branch when not. */
extern int rmci_fault_armed_;
int rmci_fault_mpi(const char *call);
int rmci_fault_alloc(void);

/* Every MPI call of comm goes through these: the return code is checked, a failure is recorded
 * with the call's name. RMCI_MPI_RC gives the MPI code, RMCI_MPI_ST the rmc status, RMCI_MPI
 * returns from the calling function on failure. */
#define RMCI_MPI_RC(fn, args)                                                                      \
    ((RMCI_UNLIKELY(rmci_fault_armed_) && rmci_fault_mpi(#fn)) ? MPI_ERR_OTHER : fn args)
#define RMCI_MPI_ST(fn, args) rmci_mpi_status(#fn, __func__, RMCI_MPI_RC(fn, args))
#define RMCI_MPI(fn, args)                                                                         \
    do {                                                                                           \
        rmc_status_t rmci_s_ = RMCI_MPI_ST(fn, args);                                              \
        if (RMCI_UNLIKELY(rmci_s_ != RMC_OK))                                                      \
            return rmci_s_;                                                                        \
    } while (0)

static inline rmc_status_t rmci_mpi_status(const char *call, const char *where, int rc)
{
    return RMCI_LIKELY(rc == MPI_SUCCESS) ? RMC_OK : rmci_mpi_fail(call, where, rc);
}

/* Keeps the first failure of a sequence: *st = s2 when *st is RMC_OK. */
static inline void rmci_keep(rmc_status_t *st, rmc_status_t s2)
{
    if (*st == RMC_OK)
        *st = s2;
}

/* Allocations of comm (fault-injectable: RMC_FAULT=malloc...). Released with free(). */
static inline void *rmci_malloc(size_t n)
{
    return (RMCI_UNLIKELY(rmci_fault_armed_) && rmci_fault_alloc()) ? NULL : malloc(n);
}
static inline void *rmci_calloc(size_t n, size_t size)
{
    return (RMCI_UNLIKELY(rmci_fault_armed_) && rmci_fault_alloc()) ? NULL : calloc(n, size);
}
static inline void *rmci_realloc(void *p, size_t n)
{
    return (RMCI_UNLIKELY(rmci_fault_armed_) && rmci_fault_alloc()) ? NULL : realloc(p, n);
}

/* MPI objects created and freed by comm, counted for rmc_resources (leak checks). */
typedef enum rmci_res {
    RMCI_RES_COMM,
    RMCI_RES_WIN,
    RMCI_RES_GROUP,
    RMCI_RES_INFO,
    RMCI_RES_TYPE
} rmci_res_t;
void rmci_res_count(rmci_res_t kind, int delta);
rmc_status_t rmci_comm_dup(MPI_Comm comm, MPI_Comm *out, const char *where);
void rmci_comm_free(MPI_Comm *comm);
void rmci_group_free(MPI_Group *g);
void rmci_type_free(MPI_Datatype *t);

/* Argument checks shared by the entry points. `fn` names the public function for the message. */
RMCI_COLD rmc_status_t rmci_not_init(const char *fn);
RMCI_COLD rmc_status_t rmci_bad_rank(const char *fn, int rank);
/* This thread runs an active-message handler (set by comm/progress while one runs). A handler
 * never waits for RMC's thread lock (RMCI_SERIAL takes it not on a thread that does not hold it
 * already: the holder may be waiting for this handler's reply) and every entry point that checks
 * RMCI_CHECK_INIT refuses it (RMC_ERR_STATE): a handler may not call RMC's communication functions
 * (their waits need the handler to return). Initial-exec TLS as rmci_mt_depth_. */
extern __thread int rmci_in_handler_ __attribute__((tls_model("initial-exec")));
RMCI_COLD rmc_status_t rmci_not_init_or_handler(const char *fn);
#define RMCI_CHECK_INIT(fn)                                                                        \
    do {                                                                                           \
        if (RMCI_UNLIKELY(!rmci_info_.initialized || rmci_in_handler_))                            \
            return rmci_not_init_or_handler(fn);                                                   \
    } while (0)
/* RMCI_CHECK_INIT of a query that touches no other rank (rmc_region_base, rmc_topology, ...):
 * allowed inside handlers. */
#define RMCI_CHECK_INIT_QUERY(fn)                                                                  \
    do {                                                                                           \
        if (RMCI_UNLIKELY(!rmci_info_.initialized))                                                \
            return rmci_not_init(fn);                                                              \
    } while (0)
#if RMCI_CHECKS
#define RMCI_CHECK_RANK(fn, r)                                                                     \
    do {                                                                                           \
        if (RMCI_UNLIKELY((unsigned)(r) >= (unsigned)rmci_info_.nranks))                           \
            return rmci_bad_rank(fn, r);                                                           \
    } while (0)
/* A hot-path argument check: `cond` must hold, else st with a message. */
#define RMCI_CHECK_ARG(cond, st, fn, ...)                                                          \
    do {                                                                                           \
        if (RMCI_UNLIKELY(!(cond)))                                                                \
            return rmci_fail(st, fn, __VA_ARGS__);                                                 \
    } while (0)
#else
#define RMCI_CHECK_RANK(fn, r)            ((void)0)
#define RMCI_CHECK_ARG(cond, st, fn, ...) ((void)0)
#endif

/* ---------------------------------------------------------------- thread safety --- */

/* RMC's thread lock (comm/thread.c): on when RMC runs thread-safe (RMC_THREAD_SAFE; auto: MPI
 * provides MPI_THREAD_MULTIPLE). Every entry point that touches shared state starts with
 * RMCI_SERIAL(): it holds the (recursive) lock until it returns; off, it costs one predictable
 * branch. Waiting loops of top-level entry points call rmci_mt_pause() each round (other threads
 * of the rank get in: the one this thread waits for may be among them); a wait that sleeps steps
 * out with rmci_mt_release / rmci_mt_reacquire. Both do nothing when a layer above holds the lock
 * too (nested): its state may be mid-change. */
extern int rmci_mt_on_;
/* This thread's nesting of the lock (0: not held). Initial-exec TLS: one fs-relative access, no
 * __tls_get_addr call (librmc is linked at start-up, never dlopen'ed late). */
extern __thread unsigned rmci_mt_depth_ __attribute__((tls_model("initial-exec")));
void rmci_mt_acquire(void); /* takes a ticket and waits for it */
void rmci_mt_give(void);    /* hands the lock to the next ticket */
void rmci_mt_pause(void);
int rmci_mt_release(void);
void rmci_mt_reacquire(int released);
/* Reads RMC_THREAD_SAFE and MPI's thread level at rmc_init. */
rmc_status_t rmci_mt_setup(void);
static inline int rmci_serial_enter_(void)
{
    if (RMCI_LIKELY(!rmci_mt_on_))
        return 0;
    if (RMCI_UNLIKELY(rmci_in_handler_) && rmci_mt_depth_ == 0)
        return 0; /* a handler on a thread without the lock (progress thread): never waits for it */
    if (rmci_mt_depth_++ == 0)
        rmci_mt_acquire();
    return 1;
}
static inline void rmci_serial_leave_(int *held)
{
    if (*held && --rmci_mt_depth_ == 0)
        rmci_mt_give();
}
#define RMCI_SERIAL()                                                                              \
    int rmci_serial_held_ __attribute__((cleanup(rmci_serial_leave_))) = rmci_serial_enter_()

/* ---------------------------------------------------------------- environment --- */

/* The knob's integer value (decimal, 0x hex or 0 octal, as strtol reads them); 0 when unset;
 * LONG_MIN when it is not an integer from its first character to its last ("64K", "10ms", "abc") or
 * does not fit a long, which every caller's range check refuses: report rmc_knob_value(name), the
 * text the user set. */
long rmci_env_long(const char *name);
/* A switch knob: "1"/"on"/"yes" -> 1, "0"/"off"/"no" -> 0, "auto" (or unset) -> 2, else -1. */
int rmci_env_tri(const char *name);
/* An on/off knob without auto (RMC_VERBOSE, RMC_STATS): an integer (> 0 on) or on/off/yes/no;
 * 1 on, 0 off (also unset), -1 for any other text. */
int rmci_env_switch(const char *name);

/* ------------------------------------------------------------------- progress --- */

/* Every entry point of comm calls RMCI_POLL(): the layers' cheap polls run (active messages advance
 * inside RMC calls) once every RMCI_POLL_INTERVAL calls that may communicate. A node-local
 * load/store operation counts for 1/RMCI_POLL_CALL of such a call (a poll costs a few hundred
 * instructions: every 16 ten-nanosecond copies would triple their cost), bytes moved count too
 * (rmci_poll_charge), so AM service keeps its pace in every loop. */
#define RMCI_POLL_INTERVAL 16
#define RMCI_POLL_CALL     16 /* budget units of one call that may communicate */
extern __thread int rmci_poll_countdown_
    __attribute__((tls_model("initial-exec"))); /* per thread:
                                                 * a handler sets its own to 0, so no fast path
                                                 * bypasses the entry points' checks */
void rmci_poll_now(void);
#define RMCI_POLL_UNITS(n)                                                                         \
    do {                                                                                           \
        if (RMCI_UNLIKELY((rmci_poll_countdown_ -= (n)) <= 0))                                     \
            rmci_poll_now();                                                                       \
    } while (0)
#define RMCI_POLL() RMCI_POLL_UNITS(RMCI_POLL_CALL)
static inline void rmci_poll_charge(size_t bytes)
{
    rmci_poll_countdown_ -= (int)(bytes >> 12); /* one call's worth per 64 KiB moved */
}

/* Every layer's full poll (serve everything pending): waiting loops call it each round. */
void rmci_poll_full(void);

/* Waits for an MPI request while serving active messages (rmci_poll_full each round, yielding
 * the CPU after a short spin: ranks may outnumber cores). Every waiting loop of comm uses it, so
 * no rank waits inattentively while a peer needs it to serve a request. */
rmc_status_t rmci_wait(MPI_Request *req, const char *where);

/* 1 when this machine runs more ranks than it has processing units (waits yield). */
int rmci_oversubscribed(void);

/* One waiting round of a hand-written waiting loop: full poll, then spin or yield. */
void rmci_wait_round(unsigned *spins);

/* Agreement: every member of `comm` learns the worst (most negative) status, and vals[0..n) are
 * replaced by their minimum over the members (n may be 0; negate a value to get its maximum).
 * Attentive (an MPI_Iallreduce waited with rmci_wait). Every collective of comm agrees on its
 * outcome with it before going on, so a failure on one rank never leaves another hanging. `fn`
 * names the public function: a rank whose own status was RMC_OK records "<fn>: failed on another
 * rank: <status text>" when the agreed one is not. */
rmc_status_t rmci_agree_vals(MPI_Comm comm, rmc_status_t st, long long *vals, int n,
                             const char *fn);
static inline rmc_status_t rmci_agree(MPI_Comm comm, rmc_status_t st, const char *fn)
{
    return rmci_agree_vals(comm, st, NULL, 0, fn);
}
/* An attentive barrier on comm (MPI_Ibarrier + rmci_wait). Entered before an MPI collective that
 * has no nonblocking form (window creation, communicator creation), so that no member sits in a
 * blocking collective while another still needs it to serve an active message. */
rmc_status_t rmci_attentive_barrier(MPI_Comm comm, const char *where);
/* rmci_agree and rmci_attentive_barrier whose waits also let this rank's other threads in
 * (rmci_mt_pause: when the caller holds RMC's lock once). For a collective's waits while nothing
 * shared is mid-change (its first agreement): a member may be waiting for a thread of this rank
 * (a mutex it holds) before it joins, and that thread needs the lock to let go. */
rmc_status_t rmci_agree_pausing(MPI_Comm comm, rmc_status_t st, const char *fn);
rmc_status_t rmci_agree_vals_pausing(MPI_Comm comm, rmc_status_t st, long long *vals, int n,
                                     const char *fn);
rmc_status_t rmci_barrier_pausing(MPI_Comm comm, const char *where);

/* ---------------------------------------------------------------------- regions --- */

typedef struct rmc_region rmci_region_t;

/* A resolved remote range: where it lives and how to reach it. */
typedef struct rmci_target {
    rmci_region_t *region;
    MPI_Aint disp; /* displacement in the target's part (bytes) */
    char *local;   /* load/store address when node-local, else NULL */
} rmci_target_t;

extern rmci_xlate_t rmci_xlate_;

/* Resolves [addr, addr+len) on `rank` (len > 0). RMC_ERR_NOT_REGION / RMC_ERR_BOUNDS on failure
 * (no message recorded: the caller knows what it was doing). */
static inline rmc_status_t rmci_resolve(int rank, const void *addr, size_t len, rmci_target_t *t)
{
    const rmci_xent_t *e;
    rmc_status_t st = rmci_xlate_find(&rmci_xlate_, rank, (uintptr_t)addr, len, &e);
    rmci_stats_.xlate_lookups++;
    if (RMCI_UNLIKELY(st != RMC_OK))
        return st;
    t->region = (rmci_region_t *)e->owner;
    t->disp = (MPI_Aint)((uintptr_t)addr - e->lo);
    t->local = e->local ? (char *)e->local + t->disp : NULL;
    return RMC_OK;
}

/* Accessors (sub-layers never read region fields). The two every remote operation needs are
 * inline: a region begins with these (comm/core.h). */
typedef struct rmci_region_hot {
    MPI_Win win; /* RMA window over the region's memory, lock_all held */
    int *mrank;  /* [nranks] each RMC rank's rank in the window (-1: not a member); NULL when the
                  * region's communicator is RMC's (identity) */
} rmci_region_hot_t;
static inline MPI_Win rmci_region_win(const rmci_region_t *r) /* the RMA window */
{
    return ((const rmci_region_hot_t *)(const void *)r)->win;
}
static inline int rmci_region_mrank(const rmci_region_t *r, int rank) /* rank in that window */
{
    const rmci_region_hot_t *h = (const rmci_region_hot_t *)(const void *)r;
    return h->mrank ? h->mrank[rank] : rank;
}
uint32_t rmci_region_id(const rmci_region_t *r);           /* equal on every member */
char *rmci_region_local(const rmci_region_t *r, int rank); /* load/store mapping or NULL */
size_t rmci_region_size(const rmci_region_t *r, int rank);
/* The RMCI_REGION_HDR zeroed bytes before node-local peer `rank`'s part (lock words of the
 * sub-layers; never reachable by user addresses), or NULL when `rank` is not node-local. Bytes 0-3:
 * comm/strided's accumulate lock (RMCI_ACC_LOCK_OFF); the rest is free. */
#define RMCI_REGION_HDR 64
char *rmci_region_hdr(const rmci_region_t *r, int rank);
/* rmc_finalize: frees the region structs kept back from reuse (region.c). */
void rmci_region_quarantine_end(void);
/* rmc_finalize's free of a leftover live region: rmc_region_free without its agreement (every
 * member frees its leftover regions in the same order). */
rmc_status_t rmci_region_free_final(rmc_region_h r);

/* 1 when the byte ranges [a, a+alen) and [b, b+blen) overlap. */
static inline int rmci_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + blen && y < x + alen;
}

/* 1 when [lo, lo+len) of this rank's memory overlaps a part of a live region. */
int rmci_local_overlaps_region(uintptr_t lo, size_t len);

/* ---------------------------------------------------------- conflict tracking --- */

/* Kinds of outstanding operations per (region, target) from this origin. */
enum {
    RMCI_CS_WRITE = 1u, /* put (or swap/CAS/bitwise atomic) not yet complete at the target */
    RMCI_CS_ACC = 2u,   /* accumulate / fetch-and-add not yet complete at the target */
    RMCI_CS_READ = 4u,  /* get not yet complete at the origin (implicit until a flush; with a
                         * request until it completes: rmci_mark_req) */
    RMCI_CS_AM = 8u,    /* an atomic the target executes (an active message) not yet answered, per
                         * pair (no ranges); completed by the quiet function (rmci_set_am_quiet).
                         * MPI operations wait for it; such atomics need not wait for each other
                         * (a target serves one origin's messages in order) */
    RMCI_CS_PENDING = 15u
};
/* An accumulate's kind for conflict tracking carries its element type in bits 8-15 (an RMC_ACC_*
 * of rmc/strided.h; 0: not known): additions of one type commute and pass each other, accumulates
 * of different types (or widths) on overlapping bytes do not, and are ordered (rmci_order). */
#define RMCI_ACC_TAG_INT32 1u /* RMC_ACC_INT32 (checked in strided.c): rmc_amo_add_i32's */
#define RMCI_ACC_TAG_INT64 2u /* RMC_ACC_INT64: rmc_amo_add_i64's */
static inline unsigned rmci_acc_kind(unsigned type)
{
    return RMCI_CS_ACC | (type & 0xffu) << 8;
}
static inline unsigned rmci_kind_tag(unsigned kind)
{
    return kind >> 8 & 0xffu;
}

/* Byte range [lo, hi) of displacements in the target's part; RMCI_ALL covers all of it. */
typedef struct rmci_range {
    MPI_Aint lo, hi;
} rmci_range_t;
#define RMCI_ALL ((rmci_range_t){0, (MPI_Aint)(~(size_t)0 >> 1)})
static inline rmci_range_t rmci_range(MPI_Aint disp, size_t len)
{
    return (rmci_range_t){disp, disp + (MPI_Aint)len};
}

/* Before issuing an operation of `kind` on `range` of a remote (region, target): flushes the pair
 * when an outstanding operation conflicts with it (location consistency). Writes and accumulates
 * are tracked per range (a get, put or fetching atomic flushes only when it overlaps one), reads
 * and active-message atomics per pair. Accumulates do not conflict with accumulates of their
 * element type (additions commute; an accumulate's kind carries its type: rmci_acc_kind). */
rmc_status_t rmci_order(rmci_region_t *r, int target, unsigned kind, rmci_range_t range);
/* Records that an operation of `kind` on `range` is outstanding on (region, target). */
rmc_status_t rmci_mark(rmci_region_t *r, int target, unsigned kind, rmci_range_t range);
/* rmci_mark for an operation that request q completes: a get's mark is taken back when q completes
 * (rmci_req_read_done), when no other get to the pair is outstanding; other kinds as rmci_mark. */
struct rmc_request;
rmc_status_t rmci_mark_req(rmci_region_t *r, int target, unsigned kind, rmci_range_t range,
                           struct rmc_request *q);
/* A request's get has completed at the origin: its pair's read mark goes when it was the last. */
void rmci_req_read_done(struct rmc_request *q);
/* Makes (region, target) clean: MPI_Win_flush (and the quiet function when RMCI_CS_AM is set),
 * nothing outstanding afterwards. */
rmc_status_t rmci_flush(rmci_region_t *r, int target);
/* Completes reqs[0..n) of a blocking operation on (r, target) still half done (no active message is
 * served meanwhile), yielding the processor after a short spin: a blocking get or fetching atomic
 * on oversubscribed processors, where MPICH's own completion calls spin while the target may need
 * this processor. Counted in yielding_waits; when a test fails, the operation (of `kind` on
 * `range`) is marked and the pair flushed (it must not outlive the call; a failed flush leaves it
 * to the next fence), the requests are freed and the test's failure reported. */
rmc_status_t rmci_wait_yielding(rmci_region_t *r, int target, unsigned kind, rmci_range_t range,
                                MPI_Request *reqs, int n, const char *where);
/* The function that completes this rank's unanswered active-message atomics to `target` (thread
 * AMO mode sets it; NULL: none). rmci_flush, and so every fence, barrier and region free, calls it
 * for pairs marked RMCI_CS_AM. */
typedef rmc_status_t (*rmci_quiet_fn)(int target);
void rmci_set_am_quiet(rmci_quiet_fn fn);
/* The function every fence (rmci_fence: rmc_fence, rmc_barrier, mutex unlocks) calls first with its
 * target (-1: all), to complete the atomics on registered memory it sent as active messages (no
 * pair records them; those on regions are their pairs' flushes); NULL: none. */
void rmci_set_am_fence(rmci_quiet_fn fn);
/* Completion of a blocking put (or strided put) of `range`, issued after rmci_order: the source is
 * reusable when it returns. The write completes locally and stays outstanding (ordered by later
 * conflicting operations, visible to other ranks after a fence), unless the pair just saw a put to
 * an overlapping range: repeated puts to one place are completed at the target at once, so they
 * do not pay a conflict flush each. */
rmc_status_t rmci_complete_put(rmci_region_t *r, int target, rmci_range_t range);
/* MPI_Win_flush_local failed (rc) for a blocking operation of `kind` on `range` issued after
 * rmci_order: the operation must not outlive the call, so the pair is marked and flushed (a failed
 * flush leaves it for the next fence). Returns the failure, named for `where`. */
rmc_status_t rmci_local_failed(rmci_region_t *r, int target, unsigned kind, rmci_range_t range,
                               int rc, const char *where);
/* Flushes every dirty pair of `target` (target < 0: all). */
rmc_status_t rmci_fence(int target);

/* Issue modes of an operation. */
typedef enum rmci_mode {
    RMCI_BLOCKING = 0,   /* complete (as the call documents) on return */
    RMCI_NB_REQUEST = 1, /* non-blocking, completed by rmc_wait/rmc_test on the request */
    RMCI_NB_IMPLICIT = 2 /* non-blocking, completed by a fence or barrier */
} rmci_mode_t;
#define RMCI_NB_MODE(req) ((req) ? RMCI_NB_REQUEST : RMCI_NB_IMPLICIT)

/* ---------------------------------------------------------------------- requests --- */

#define RMCI_REQ_MAGIC  0x52455155u /* live */
#define RMCI_REQ_FREE   0x46524545u
#define RMCI_REQ_LEAKED 0x4c45414bu /* MPI failed under it: its buffers are never freed early */

struct rmc_request {
    uint32_t magic;
    int nmpi; /* MPI requests in use */
    MPI_Request mpi[2];
    struct rmc_request *next_free;
    /* completion callback run once when complete (e.g. unpack), may be NULL */
    rmc_status_t (*on_complete)(struct rmc_request *req);
    MPI_Win win;           /* the window on_complete flushes (MPI_WIN_NULL: none) */
    rmc_status_t early_st; /* on_complete already run (rmci_req_region_freed): its status */
    void *cb_data;
    void *cb_buf;          /* freed after on_complete */
    rmc_request_fn custom; /* rmc_request_custom: advanced by its function, no MPI requests */
    void *custom_state;
    int custom_done;    /* its function has finished (with custom_status) */
    int custom_running; /* its function is running: a wait inside it must not step it */
    rmc_status_t custom_status;
    struct rmc_request *cprev, *cnext; /* unfinished custom requests (request.c) */
    rmci_region_t *rd_region; /* a get's pair whose read mark this request holds (NULL: none) */
    int rd_target;
    uint32_t rd_gen; /* the pair's flush count when marked */
};

/* Advances every unfinished custom request once (their functions never block). Called by the waits
 * of RMC's top-level entry points (rmc_barrier, rmc_wait, rmc_progress, rmc_wait_round,
 * rmc_wait_mpi, rmc_agree), where no other operation of this thread is half done: an operation of
 * several steps its owner does not test (e.g. a container's non-blocking pop) still moves, so a
 * peer whose operation depends on it never waits for it forever. */
void rmci_custom_poll(void);
/* rmci_wait / rmci_wait_round of those top-level waits: they also advance custom requests. */
rmc_status_t rmci_wait_top(MPI_Request *req, const char *where);
void rmci_wait_round_top(unsigned *spins);

struct rmc_request *rmci_req_alloc(void);
/* Region r is being freed, which completes its operations (its window still locked): runs now the
 * on_complete of every live request that flushes r's window (a later rmc_wait / rmc_test of such a
 * request returns that outcome instead of flushing a freed window) and drops the requests' read
 * marks on r. */
void rmci_req_region_freed(rmci_region_t *r);
void rmci_req_release(struct rmc_request *req);
/* rmc_finalize: completes and releases every live request (custom ones run to their end); the
 * first failure, *n = how many there were. */
rmc_status_t rmci_req_complete_all(size_t *n);

#endif
