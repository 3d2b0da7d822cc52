/* Runtime internals of comm/strided shared by strided.c and vector.c (uses MPI and the comm core).
 */
#ifndef RMCI_STRIDED_RT_H
#define RMCI_STRIDED_RT_H

#include <sched.h>
#include <stdatomic.h>
#include "../rmci.h"
#include "strided_impl.h"

/* Typed (datatype / pack) transfers are cut into pieces of at most RMCI_DT_PIECE bytes: on this
 * MPICH a non-contiguous transfer moves through active messages whose speed drops several-fold
 * beyond ~64 KiB, while pieces pipeline well. Measured with RMC_NODE_SIZE=1: 16 KiB and 32 KiB
 * pieces are within 4% of each other for get/put and chunks >= 64 B; 16 KiB is 1.3-1.5x faster for
 * accumulates of 8-byte chunks (tall-skinny patches); 8 KiB is 5-10% slower overall. */
#ifndef RMCI_DT_PIECE
#define RMCI_DT_PIECE (16u << 10)
#endif
/* List protocol: local completion after this many operations in flight (beyond ~1000 outstanding
 * operations the transport slows down sharply). */
#define RMCI_LIST_BATCH 512

/* Operation kinds are the conflict-tracking bits of the comm core. */
#define SK_PUT RMCI_CS_WRITE
#define SK_GET RMCI_CS_READ
#define SK_ACC RMCI_CS_ACC

/* Issue modes (as comm/rma.c): blocking, non-blocking with a request, non-blocking implicit. */
enum { SM_BLOCK = 0, SM_REQ = 1, SM_IMPLICIT = 2 };

typedef struct rmci_strided_state {
    int loaded; /* method read from the environment (or set) */
    int hooked; /* reset hook registered with the current rmc_init */
    rmc_strided_method_t method;
    rmc_strided_stats_t stats;
} rmci_strided_state_t;

extern rmci_strided_state_t rmci_strided;

/* Loads RMC_STRIDED_METHOD (once per rmc_init) and returns the method in force. */
rmc_strided_method_t rmci_strided_method(void);

/* MPI datatype of an accumulate type (MPI_DATATYPE_NULL for unknown). */
MPI_Datatype rmci_acc_mpi_type(rmc_acc_type_t t);

/* THE choice of the accumulate mechanism for (region, target), in one place so a later progress-
 * thread mode can change it. Returns 1 when the accumulate must go through MPI_Accumulate on
 * r->win, 0 when it is applied by this process with loads/stores under the target's lock word.
 * Rule: mechanisms are never mixed on one location. With one (possibly emulated) node every rank
 * reaches every other by loads/stores, so every accumulate anywhere uses the lock; with more than
 * one node some accumulates must use MPI, and MPI only guarantees atomicity among MPI accumulates,
 * so then every accumulate (node-local and self included) uses MPI. */
static inline int rmci_acc_use_mpi(const struct rmc_region *r, int target)
{
    return rmci.node_count > 1 || r->hdr[target] == NULL || r->lptr[target] == NULL;
}

/* Lock word of the accumulate lock: the first 4 bytes of the target's shared region header. */
#define RMCI_ACC_LOCK_OFF 0

static inline atomic_uint *rmci_acc_lockword(const struct rmc_region *r, int target)
{
    return (atomic_uint *)(void *)(r->hdr[target] + RMCI_ACC_LOCK_OFF);
}

/* Test-and-test-and-set with bounded spinning, then sched_yield: ranks may outnumber cores, and a
 * preempted holder must get the CPU back rather than watch others spin. */
static inline void rmci_acc_lock(atomic_uint *l)
{
    unsigned spins = 0;
    for (;;) {
        if (atomic_load_explicit(l, memory_order_relaxed) == 0 &&
            atomic_exchange_explicit(l, 1u, memory_order_acquire) == 0)
            return;
        if (++spins < 128) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            sched_yield();
        }
    }
}

static inline void rmci_acc_unlock(atomic_uint *l)
{
    atomic_store_explicit(l, 0u, memory_order_release);
}

/* Context kept in a request's cb_buf (freed with the request): what its on_complete needs. The
 * packed data, when any, follows at RMCI_NBCTX_DATA bytes. */
typedef struct rmci_nbctx {
    MPI_Win win;
    int rank;
    int unpack; /* 0: none, 1: strided (d, dst), 2: vector (segs) */
    rmci_sdesc_t d;
    char *dst;
    char **segs; /* vector unpack: local destination of each segment */
    size_t nsegs;
    size_t *seglen;
} rmci_nbctx_t;
#define RMCI_NBCTX_DATA ((sizeof(rmci_nbctx_t) + 63) & ~(size_t)63)

/* Allocates a context with `data` bytes of payload after it (NULL on failure). */
rmci_nbctx_t *rmci_nbctx_new(size_t data);
static inline char *rmci_nbctx_data(rmci_nbctx_t *c)
{
    return (char *)c + RMCI_NBCTX_DATA;
}

/* on_complete callbacks: flush_local of (win, rank); flush_local then unpack (pack protocol). */
rmc_status_t rmci_nb_flush_local(struct rmc_request *q);
rmc_status_t rmci_nb_unpack(struct rmc_request *q);

/* One MPI RMA call of `kind`; with rq a request-based one. */
static inline int rmci_issue1(int kind, const void *o, int oc, MPI_Datatype ot, int rank,
                              MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Win win, MPI_Request *rq)
{
    switch (kind) {
    case SK_PUT:
        return rq ? MPI_Rput(o, oc, ot, rank, disp, tc, tt, win, rq)
                  : MPI_Put(o, oc, ot, rank, disp, tc, tt, win);
    case SK_GET:
        return rq ? MPI_Rget((void *)o, oc, ot, rank, disp, tc, tt, win, rq)
                  : MPI_Get((void *)o, oc, ot, rank, disp, tc, tt, win);
    default:
        return rq ? MPI_Raccumulate(o, oc, ot, rank, disp, tc, tt, MPI_SUM, win, rq)
                  : MPI_Accumulate(o, oc, ot, rank, disp, tc, tt, MPI_SUM, win);
    }
}

/* Element size for moving untyped data through MPI datatypes: 8 or 4 when the chunk length `len`
 * and every address / stride (OR-ed into `bits`) are multiples of it, else 1 (MPI_BYTE). */
static inline size_t rmci_word_size(size_t len, uintptr_t bits)
{
    bits |= len;
    return (bits & 7) == 0 ? 8 : (bits & 3) == 0 ? 4 : 1;
}

static inline MPI_Datatype rmci_word_type(size_t es)
{
    return es == 8 ? MPI_UINT64_T : es == 4 ? MPI_UINT32_T : MPI_BYTE;
}

/* Automatic protocol of the vector form (vector.c) for nseg segments of seg bytes. */
rmc_strided_method_t rmci_vector_auto(int kind, size_t seg, size_t nseg);

/* Completes an issued remote operation according to mode (see strided.c). */
rmc_status_t rmci_strided_complete(int kind, int mode, struct rmc_region *r, int rank,
                                   int local_target);

#endif
