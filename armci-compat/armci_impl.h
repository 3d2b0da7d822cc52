/* Internal state of the ARMCI API on RMC (armci-compat). Uses RMC's public API only. */
#ifndef RMCA_IMPL_H
#define RMCA_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <rmc.h>
#include "armci.h"
#include "armcix.h"

extern ARMCI_Group ARMCI_GROUP_WORLD; /* exported, as in ARMCI-MPI */
extern ARMCI_Group ARMCI_GROUP_DEFAULT;

/* Everything below is internal to libarmci: hidden, so it is reached without the GOT / PLT. */
#pragma GCC visibility push(hidden)

#define RMCA_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RMCA_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ARMCI_X is a weak alias of PARMCI_X (profiling interface, as in ARMCI-MPI). */
#define RMCA_ALIAS(name)                                                                           \
    extern __typeof(PARMCI_##name) ARMCI_##name __attribute__((weak, alias("PARMCI_" #name)))

/* An allocation made by ARMCI_Malloc(_group): an RMC region, on the group's communicator when the
 * group is a proper subgroup (rmc_region_alloc_comm). */
typedef struct rmca_alloc {
    struct rmca_alloc *next, *prev;
    rmc_region_h region;
    void *mine;        /* the calling rank's part (NULL when it gave 0 bytes) */
    size_t size;       /* the calling rank's size */
    void **abs_bases;  /* [world] base of every absolute rank (NULL: size 0 or not a member) */
    size_t *abs_sizes; /* [world] size of every absolute rank's part */
} rmca_alloc_t;

typedef struct rmca_state {
    int init_count;     /* ARMCI_Init calls minus ARMCI_Finalize calls */
    int own_rmc;        /* ARMCI_Init called rmc_init (so ARMCI_Finalize calls rmc_finalize) */
    int rank, nranks;   /* in ARMCI's world group (= RMC's ranks) */
    MPI_Comm node_comm; /* the caller's SMP domain (RMC node) */
    int ndomains, my_domain;
    int *dom_of;          /* [nranks] domain of each rank */
    int *dom_start;       /* [ndomains + 1] first index of each domain in dom_ranks */
    int *dom_ranks;       /* [nranks] ranks sorted by domain, then rank */
    rmca_alloc_t *allocs; /* live allocations, newest first */
    int have_mutexes;
    rmc_mutex_h mutexes;   /* ARMCI_Create_mutexes */
    uint8_t *impl_pending; /* [nranks] implicit-handle operations issued to the rank, not fenced */
    int any_impl;
} rmca_state_t;

extern rmca_state_t rmca;

/* ------------------------------------------------------------------------ errors --- */

/* "[rank] ARMCI Error: <formatted>" on stderr, then MPI_Abort on ARMCI's world (exit without MPI).
 */
void rmca_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* rmca_error with ": <rmc status string>" appended. */
void rmca_fail(rmc_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#define RMCA_CHECK(st, ...)                                                                        \
    do {                                                                                           \
        rmc_status_t st__ = (st);                                                                  \
        if (RMCA_UNLIKELY(st__ != RMC_OK))                                                         \
            rmca_fail(st__, __VA_ARGS__);                                                          \
    } while (0)

/* libarmci's own state (handle table, implicit-operation flags, allocation list) is changed under
 * RMC's thread lock (rmc_thread_lock: nothing when RMC is not thread-safe), held from here to the
 * end of the enclosing block. Not held across waits that may depend on another thread of this rank
 * (ARMCI_Lock, the barrier of ARMCI_Barrier): those call RMC directly. */
#define RMCA_SERIAL() RMC_THREAD_LOCKED()

#define RMCA_REQUIRE_INIT(fn)                                                                      \
    do {                                                                                           \
        if (RMCA_UNLIKELY(rmca.init_count <= 0))                                                   \
            rmca_error("%s: ARMCI is not initialized", fn);                                        \
    } while (0)

/* ------------------------------------------------------------------- MPI (mpi.c) --- */

/* Every MPI call of libarmci: checked; a failure aborts with fn, the MPI call and its error text.
 */
void rmca_mpi_failed(const char *fn, const char *call, int rc) __attribute__((noreturn));
#define RMCA_MPI(fn, call, args)                                                                   \
    do {                                                                                           \
        int rc__ = call args;                                                                      \
        if (RMCA_UNLIKELY(rc__ != MPI_SUCCESS))                                                    \
            rmca_mpi_failed(fn, #call, rc__);                                                      \
    } while (0)

/* Attentive waits and collectives (RMC keeps serving active messages while they wait). */
void rmca_wait(MPI_Request *rq, const char *fn);
void rmca_barrier(MPI_Comm comm, const char *fn);
void rmca_allreduce(void *in, void *out, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                    const char *fn);
void rmca_allgather(const void *in, int n, MPI_Datatype t, void *out, MPI_Comm comm,
                    const char *fn);
void rmca_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm, const char *fn);
void rmca_send(const void *buf, int n, int to, int tag, MPI_Comm comm, const char *fn);
/* Returns the source; *len (may be NULL) the bytes received. */
int rmca_recv(void *buf, int n, int from, int tag, MPI_Comm comm, int *len, const char *fn);
/* A communicator libarmci created: errors return (and are checked) instead of aborting in MPI. */
void rmca_comm_ready(MPI_Comm c, const char *fn);

/* Element type of an ARMCI accumulate type; ARMCI error for an unknown one. */
rmc_acc_type_t rmca_acc_type(int datatype, const char *fn);

/* --------------------------------------------------------- allocations (malloc.c) --- */

/* Frees every live allocation (ARMCI_Finalize). */
void rmca_free_all(void);
/* Is ptr inside the calling rank's part of a live allocation? */
rmca_alloc_t *rmca_alloc_of_local(const void *ptr);

/* ------------------------------------------------------ non-blocking handles (nb.c) --- */

/* Records request `req` (not RMC_REQUEST_NULL) to `proc` on handle `h`. */
void rmca_nb_add(armci_hdl_t *h, rmc_request_h req, int proc);
/* Completes every request of `h`; returns 0. */
int rmca_nb_wait(armci_hdl_t *h);
/* 0 when every request of `h` is complete (released), 1 otherwise. */
int rmca_nb_test(armci_hdl_t *h);
/* Completes every explicit request to `proc` (proc < 0: all). */
void rmca_nb_wait_proc(int proc);
/* Releases the table (ARMCI_Finalize, after rmca_nb_wait_proc(-1)). */
void rmca_nb_clear(void);

/* ------------------------------------------------------------------- groups --- */

/* Fills *g from `comm` (owned by g afterwards; MPI_COMM_NULL for a non-member). */
void rmca_group_from_comm(MPI_Comm comm, ARMCI_Group *g);

#pragma GCC visibility pop
#endif
