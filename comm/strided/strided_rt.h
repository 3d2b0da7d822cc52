/* Runtime internals of comm/strided (MPI and the comm core), shared by its files:
 *   method.c   the layer, the protocol knob and its automatic choice, counters
 *   dtcache.c  committed derived datatypes, cached
 *   typed.c    the datatype / pack protocols (typed transfers cut into pieces)
 *   stage.c    staged blocking accumulates
 *   strided.c  strided / 2-D / contiguous-accumulate front ends and the remote path
 *   vector.c   the vector (I/O vector) forms */
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
/* Contiguous remote accumulates are cut into pieces of RMCI_DT_PIECE bytes, or of this many when
 * rmc_init tuned malloc (RMC_MALLOC_TUNE; strided.c). */
#define RMCI_ACC_PIECE_BIG (4u << 20)
/* List protocol: local completion after this many operations in flight (beyond ~1000 outstanding
 * operations the transport slows down sharply). */
#define RMCI_LIST_BATCH 512

/* Operation kinds are the conflict-tracking bits of the comm core. */
#define SK_PUT RMCI_CS_WRITE
#define SK_GET RMCI_CS_READ
#define SK_ACC RMCI_CS_ACC

/* The conflict-tracking kind ("ck") of an operation of `kind`: an accumulate's carries its element
 * type (accumulates of different types on the same bytes are ordered: rmci_acc_kind). */
static inline unsigned rmci_skind(int kind, rmc_acc_type_t type)
{
    return kind == SK_ACC ? rmci_acc_kind((unsigned)type) : (unsigned)kind;
}

/* -------------------------------------------------------------------- method.c --- */

extern rmc_strided_stats_t rmci_sstats;
#define RMCI_SSTAT(field) (rmci_sstats.field++)
/* Changes whenever a derived fact a shape plan holds may be stale (strided.c): the protocol knob
 * changed, or a cached datatype was freed (dtcache.c). */
extern unsigned long rmci_strided_epoch;

/* Counts one call of kind (SK_PUT, SK_GET, SK_ACC) moving `bytes` (rmc_op_counts). */
static inline void rmci_strided_count(int kind, size_t bytes)
{
    if (RMCI_UNLIKELY(rmci_opc_on_)) {
        if (kind == SK_PUT)
            RMCI_OPC(write, bytes);
        else if (kind == SK_GET)
            RMCI_OPC(read, bytes);
        else
            RMCI_OPC(acc, bytes);
    }
}

/* The method in force (RMC_STRIDED_METHOD, or rmc_strided_method_set). */
rmc_strided_method_t rmci_strided_method(void);
/* Protocol of a remote strided patch of nchunks chunks of l0 bytes whose local side is dense. */
rmc_strided_method_t rmci_strided_choose(int kind, size_t l0, size_t nchunks, int ldense);
/* Automatic protocol of the vector form for nseg segments of seg bytes. */
rmc_strided_method_t rmci_vector_auto(int kind, size_t seg, size_t nseg);

/* MPI datatype of an accumulate type (MPI_DATATYPE_NULL for unknown). */
MPI_Datatype rmci_acc_mpi_type(rmc_acc_type_t t);

/* ------------------------------------------------------------- accumulate lock --- */

/* THE choice of the accumulate mechanism for (region, target), in one place. Returns 1 when the
 * accumulate must go through MPI_Accumulate on the region's window, 0 when it is applied by this
 * process with loads/stores under the target's lock word. Rule: mechanisms are never mixed on one
 * location. With one (possibly emulated) node every rank reaches every other by loads/stores, so
 * every accumulate anywhere uses the lock; with more than one node some accumulates must use MPI,
 * and MPI only guarantees atomicity among MPI accumulates, so then every accumulate (node-local and
 * self included) uses MPI. */
static inline int rmci_acc_use_mpi(const rmci_region_t *r, int target)
{
    return RMCI.node_count > 1 || !rmci_region_hdr(r, target) || !rmci_region_local(r, target);
}

/* Lock word of the accumulate lock: the first 4 bytes of the target's shared region header. */
#define RMCI_ACC_LOCK_OFF 0

static inline atomic_uint *rmci_acc_lockword(const rmci_region_t *r, int target)
{
    return (atomic_uint *)(void *)(rmci_region_hdr(r, target) + RMCI_ACC_LOCK_OFF);
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

/* ------------------------------------------------------------ non-blocking context --- */

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

/* Allocates a context with `data` bytes of payload after it, for (r, rank) (NULL on failure). */
rmci_nbctx_t *rmci_nbctx_new(size_t data, const rmci_region_t *r, int rank);
static inline char *rmci_nbctx_data(rmci_nbctx_t *c)
{
    return (char *)c + RMCI_NBCTX_DATA;
}

/* on_complete callbacks: flush_local of (win, rank); flush_local then unpack (pack protocol). */
rmc_status_t rmci_nb_flush_local(struct rmc_request *q);
rmc_status_t rmci_nb_unpack(struct rmc_request *q);

/* Completes an issued remote operation of conflict kind `ck` (rmci_skind) on `range` of (r, rank)
 * according to mode: blocking put: rmci_complete_put; blocking get / accumulate: local completion
 * (an accumulate stays outstanding); non-blocking: recorded as outstanding. `local_target`: an MPI
 * accumulate to a node-local target, completed at once (the node-local paths do not consult the
 * conflict status). */
static inline rmc_status_t rmci_strided_complete(unsigned ck, rmci_mode_t mode, rmci_region_t *r,
                                                 int rank, rmci_range_t range, int local_target)
{
    int acc = (ck & RMCI_CS_PENDING) == SK_ACC;
    if (acc && local_target)
        return rmci_flush(r, rank);
    if (mode != RMCI_BLOCKING)
        return rmci_mark(r, rank, ck, range);
    if (ck == SK_PUT)
        return rmci_complete_put(r, rank, range);
    int rc = RMCI_MPI_RC(MPI_Win_flush_local, (rmci_region_mrank(r, rank), rmci_region_win(r)));
    if (rc != MPI_SUCCESS) /* (must not outlive the call: its buffer may be a temporary) */
        return rmci_local_failed(r, rank, ck, range, rc, __func__);
    return acc ? rmci_mark(r, rank, ck, range) : RMC_OK;
}
/* An implicit non-blocking operation of conflict kind `ck` issued from a temporary (packed or
 * scaled copy) that cannot outlive the call: completes locally now; a get is then done, a put or
 * accumulate stays outstanding (recorded). */
rmc_status_t rmci_strided_complete_temp(unsigned ck, rmci_region_t *r, int rank,
                                        rmci_range_t range);

/* ----------------------------------------------------------------------- MPI calls --- */

/* One MPI RMA call of `kind`; with rq a request-based one. */
static inline int rmci_issue1(int kind, const void *o, int oc, MPI_Datatype ot, int rank,
                              MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Win win, MPI_Request *rq)
{
    switch (kind) {
    case SK_PUT:
        return rq ? RMCI_MPI_RC(MPI_Rput, (o, oc, ot, rank, disp, tc, tt, win, rq))
                  : RMCI_MPI_RC(MPI_Put, (o, oc, ot, rank, disp, tc, tt, win));
    case SK_GET:
        return rq ? RMCI_MPI_RC(MPI_Rget, ((void *)o, oc, ot, rank, disp, tc, tt, win, rq))
                  : RMCI_MPI_RC(MPI_Get, ((void *)o, oc, ot, rank, disp, tc, tt, win));
    default:
        return rq ? RMCI_MPI_RC(MPI_Raccumulate, (o, oc, ot, rank, disp, tc, tt, MPI_SUM, win, rq))
                  : RMCI_MPI_RC(MPI_Accumulate, (o, oc, ot, rank, disp, tc, tt, MPI_SUM, win));
    }
}

/* Name of the MPI call rmci_issue1 makes, for messages. */
static inline const char *rmci_issue1_name(int kind)
{
    return kind == SK_PUT ? "MPI_Put" : kind == SK_GET ? "MPI_Get" : "MPI_Accumulate";
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

/* ------------------------------------------------------------- dtcache.c / typed.c --- */

/* A committed nested-hvector datatype of shape d (strides str, chunks of nbase base elements)
 * from the cache (valid until the next call or rmc_finalize). */
int rmci_dt_cached(const rmci_sdesc_t *d, const size_t *str, MPI_Datatype base, int nbase,
                   MPI_Datatype *out);
void rmci_dt_clear(void);

/* 1 when strides `str` are the packed (dense) layout of d: that side is one contiguous block. */
int rmci_side_dense(const rmci_sdesc_t *d, const size_t *str);

/* Datatype / pack protocols: issues the patch of d as typed pieces (typed.c). */
int rmci_issue_typed(int kind, const rmci_sdesc_t *d, const size_t *lstr, const size_t *rstr,
                     char *local, int packed, MPI_Datatype base, size_t es, int proc, MPI_Aint disp,
                     MPI_Win win);

/* ------------------------------------------------------------------------ stage.c --- */

#define RMCI_STAGE_MAX      (16u << 10)       /* largest staged accumulate, bytes */
#define RMCI_STAGE_DECLINED ((rmc_status_t)1) /* rmci_stage_acc could not stage */

/* The staged form of a blocking contiguous accumulate to a target that is not node-local (the
 * caller ordered it already). */
rmc_status_t rmci_stage_acc(rmc_acc_type_t type, const void *scale, int scaled, const char *src,
                            const rmci_sdesc_t *d, const rmci_target_t *t, int proc,
                            MPI_Datatype base, size_t es);
void rmci_stage_release(void);            /* finalize */
void rmci_stage_forget(rmci_region_t *r); /* region freed */

#endif
