/* Internals shared by the containers (containers/ and its sub-folders). Built only on comm's public
 * headers: the layering check holds the folder to that. Internal names are rmcc_ / RMCC_. */
#ifndef RMCC_CT_H
#define RMCC_CT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <rmc/status.h>
#include <rmc/comm.h>
#include <rmc/amo.h>
#include <rmc/types.h>
#include <rmc/gptr.h>
#include "heap.h"

#define RMCC_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RMCC_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The start of every rank's segment: a control area, then the heap. */
#define RMCC_CTL_ARRIVE 0    /* rank 0: arrivals at container collectives (int64) */
#define RMCC_HEAP_START 4096 /* first heap block */

typedef struct rmcc_obj rmcc_obj_t;

typedef struct rmcc_state {
    int up;
    int rank, nranks;
    MPI_Comm comm;        /* the layer's own duplicate of RMC's communicator */
    rmc_region_h seg;     /* the segment region (rmc_region_reserve) */
    uintptr_t *bases;     /* [nranks] each rank's segment, in its own address space */
    char **lbase;         /* [nranks] its load/store mapping here (node-local ranks), else NULL */
    size_t *sizes;        /* [nranks] each rank's reservation */
    rmcc_heap_t heap;     /* this rank's segment */
    pthread_mutex_t lock; /* the heap */
    unsigned long long coll_seq; /* container collectives entered */
    int broken;                  /* a collective was abandoned: no more collectives */
    rmcc_obj_t *objs;            /* every handle, live or destroyed (dead at finalize: core.c) */
    int rpc_id;                  /* the containers' active-message handler (rmc_am_register_layer) */
} rmcc_state_t;

extern rmcc_state_t rmcc;

/* RMC_ERR_NOT_INIT unless RMC is initialized and the layer up (fn names the caller). */
rmc_status_t rmcc_not_up(const char *fn);
#define RMCC_CHECK_UP(fn)                                                                          \
    do {                                                                                           \
        if (RMCC_UNLIKELY(!rmcc.up))                                                               \
            return rmcc_not_up(fn);                                                                \
    } while (0)

/* The handles' state (queue counters seen, scratch buffers, the handle list) is used under RMC's
 * thread lock (rmc_thread_lock: nothing when RMC is not thread-safe), from here to the end of the
 * block. Waiting loops step out of it with rmc_thread_pause where their state is consistent. */
#define RMCC_SERIAL() RMC_THREAD_LOCKED()

/* Records a failure for rmc_last_error and returns st: comm's channel, rmc_error_set. */
#define rmcc_fail rmc_error_set

/* Owner-space address of offset `off` in `rank`'s segment. */
static inline void *rmcc_addr(int rank, uint64_t off)
{
    return (void *)(rmcc.bases[rank] + (uintptr_t)off);
}

/* ------------------------------------------------------------------------- handles --- */

/* Every container handle starts with this. Handles stay on one list until rmc_finalize, which
 * frees them (live ones too): a destroyed handle stays readable, so using it is RMC_ERR_HANDLE,
 * not a use after free. */
struct rmcc_obj {
    uint32_t magic; /* RMCC_MAGIC_* while live, RMCC_MAGIC_DEAD after destroy */
    uint32_t flags; /* RMCC_OBJ_*: kept after destroy */
    rmcc_obj_t *next;
    void (*release)(rmcc_obj_t *o); /* frees what the handle holds besides itself (or NULL) */
    size_t pending; /* this rank's outstanding _nb operations that still make steps on it */
};
#define RMCC_MAGIC_QUEUE 0x51554555u /* "QUEU" */
#define RMCC_MAGIC_ARRAY 0x41525241u /* "ARRA" */
#define RMCC_MAGIC_HASHMAP 0x48415348u /* "HASH" */
#define RMCC_MAGIC_BLOOM 0x424c4f4fu /* "BLOO" */
#define RMCC_MAGIC_HMBUF 0x484d4255u /* "HMBU" */
#define RMCC_MAGIC_KV 0x4b565354u /* "KVST" */
#define RMCC_MAGIC_DEAD  0x44454144u /* "DEAD" */
/* The handle is a container of a subset of the ranks (its collectives are theirs): once destroyed,
 * a collective with it can meet nobody, so its members fail alone. */
#define RMCC_OBJ_SUBSET 1u

/* The failure of rmcc_obj_check: the layer down, a NULL, destroyed or foreign handle. */
rmc_status_t rmcc_obj_bad(const rmcc_obj_t *o, uint32_t magic, const char *what, const char *fn);
/* RMC_OK when o is a live handle of `magic`, else RMC_ERR_HANDLE (also checks the layer is up).
 * Inline: every container operation starts with it. */
static inline rmc_status_t rmcc_obj_check(const rmcc_obj_t *o, uint32_t magic, const char *what,
                                          const char *fn)
{
    if (RMCC_LIKELY(rmcc.up && o && o->magic == magic))
        return RMC_OK;
    return rmcc_obj_bad(o, magic, what, fn);
}
/* The same for a call with several handles: the message names the argument ("C: NULL matrix
 * handle"). Only the failure path differs. */
rmc_status_t rmcc_obj_bad_arg(const rmcc_obj_t *o, uint32_t magic, const char *what,
                              const char *arg, const char *fn);
static inline rmc_status_t rmcc_obj_check_arg(const rmcc_obj_t *o, uint32_t magic, const char *what,
                                              const char *arg, const char *fn)
{
    if (RMCC_LIKELY(rmcc.up && o && o->magic == magic))
        return RMC_OK;
    return rmcc_obj_bad_arg(o, magic, what, arg, fn);
}
/* Makes o a live handle of `magic` (on the list). */
void rmcc_obj_add(rmcc_obj_t *o, uint32_t magic, void (*release)(rmcc_obj_t *o));
/* Marks o destroyed (released; its memory is kept until finalize). */
void rmcc_obj_kill(rmcc_obj_t *o);
/* Frees every handle (finalize). */
void rmcc_obj_free_all(void);

/* ------------------------------------------------------------------------ collectives --- */

/* Starts a container collective `fn` (every rank must call one with the same fn and args):
 * waits until every rank has entered a container collective (RMC_COLL_TIMEOUT: after that many
 * seconds RMC_ERR_STATE, and the layer refuses further collectives), then agrees: ranks in
 * different collectives get RMC_ERR_STATE; when a rank's `st` is a failure, that rank gets its own
 * (its message kept) and the others the worst one ("another rank failed"), whatever the args (a
 * failing rank may not have them); else the same collective with different args RMC_ERR_ARG.
 * Attentive. */
rmc_status_t rmcc_coll_begin(const char *fn, const uint64_t *args, int nargs, rmc_status_t st);

/* rmcc_coll_begin of a creation: the element type must be the same on every rank too
 * (RMC_ERR_TYPE otherwise); st != RMC_OK when the arguments were refused locally. */
rmc_status_t rmcc_create_begin(const char *fn, const uint64_t *args, int nargs,
                               const rmc_type_t *type, rmc_status_t st);
/* The same for a container of several element types (a map's key and value types). */
rmc_status_t rmcc_create_begin_types(const char *fn, const uint64_t *args, int nargs,
                                     const rmc_type_t *const *types, int ntypes, rmc_status_t st);

/* Grows a scratch buffer to `bytes`. */
rmc_status_t rmcc_scratch(char **buf, size_t *cap, size_t bytes, const char *fn);

/* Agrees on st (the worst one) among all ranks; attentive (comm's rmc_agree). */
#define rmcc_agree rmc_agree
/* Broadcasts `bytes` from root; attentive. */
rmc_status_t rmcc_bcast(void *buf, size_t bytes, int root, const char *fn);

/* rmc_type_check with the caller's name in the message. */
rmc_status_t rmcc_type_check(const rmc_type_t *t, const char *fn);
/* A digest of a type descriptor (name, size, max_bytes, kind) for the creation check. */
uint64_t rmcc_type_digest(const rmc_type_t *t);
uint64_t rmcc_hash_bytes(const void *p, size_t n, uint64_t seed);
/* Seconds of a monotonic clock (CLOCK_MONOTONIC). */
double rmcc_now(void);
/* A 64-bit finalizer (splitmix64's). */
static inline uint64_t rmcc_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
/* A key's hash for hashing containers: the type's hash function of the key as the caller holds it,
 * else its bytes (byte-copied types: the element; serialized ones: the serialized bytes of the
 * packed slot pk), mixed with seed. */
uint64_t rmcc_key_hash(const rmc_type_t *t, const void *key, const char *pk, uint64_t seed);

/* ----------------------------------------------------------------- element slots --- */

/* Writes element obj of type t into `slot` (rmc_type_slot_bytes(t) bytes). RMC_ERR_TOO_BIG when
 * its serialized form exceeds max_bytes (the slot is then unspecified). */
rmc_status_t rmcc_pack(const rmc_type_t *t, const void *obj, void *slot, const char *fn);
/* Reads element *obj from `slot`. */
rmc_status_t rmcc_unpack(const rmc_type_t *t, const void *slot, void *obj, const char *fn);

/* n elements at `in` (the caller's, t->size apart) into slots `stride` apart at dst, and back
 * (all or nothing: on failure the elements unpacked so far are released). */
rmc_status_t rmcc_pack_n(const rmc_type_t *t, const void *in, size_t n, char *dst, size_t stride,
                         const char *fn);
rmc_status_t rmcc_unpack_n(const rmc_type_t *t, const char *src, size_t stride, void *out, size_t n,
                           const char *fn);

/* A container with one part per rank (a hash map's tables, a filter's words): where each part is. */
typedef struct rmcc_parts {
    uint64_t *offs; /* [nranks] offset in its owner's segment */
    char **tab;     /* [nranks] owner-space address (what comm's calls take) */
    char **ltab;    /* [nranks] load/store mapping here (node-local owners), else NULL */
} rmcc_parts_t;
/* Allocates the three arrays (RMC_ERR_NOMEM naming fn); frees them (NULL-safe, idempotent). */
rmc_status_t rmcc_parts_init(rmcc_parts_t *p, const char *fn);
void rmcc_parts_free(rmcc_parts_t *p);
/* Fills tab and ltab from offs. */
void rmcc_parts_map(rmcc_parts_t *p);

/* The end of a destruction of a container with one part per rank (own_off: this rank's): frees
 * it and marks the handle destroyed; returns the barrier's status (rmcc_destroy_begin) or the
 * free's. */
rmc_status_t rmcc_destroy_finish(rmcc_obj_t *o, rmc_status_t barrier, uint64_t own_off,
                                 const char *fn);

/* The start of a destruction: the handle's check and the collective (its id as argument): when
 * they succeed (RMC_OK), rmcc_quiesce and a barrier that completes every rank's operations on it,
 * whose status is *barrier (the destruction goes on either way). */
rmc_status_t rmcc_destroy_begin(const rmcc_obj_t *o, uint32_t magic, const char *what, uint64_t id,
                                rmc_status_t *barrier, const char *fn);
/* Waits, keeping RMC's progress going (which moves outstanding custom requests), until this rank's
 * _nb operations on o that still make steps of their own (o->pending: a queue's or a hash map's
 * state machines) have finished: a collective that frees or moves o's memory calls it before its
 * barrier, so that no step lands there afterwards. Every rank is in that collective, polling, so
 * the operations they wait for move too. */
void rmcc_quiesce(const rmcc_obj_t *o);

/* ---------------------------------------------------------------------------- RPC --- */

/* The containers' active-message handler (registered by the layer's init under rmcc.rpc_id): the
 * payload starts with a uint32 naming the container family, the rest is that family's. */
enum { RMCC_RPC_HASHMAP = 1, RMCC_RPC_QUEUE = 2 };
rmc_status_t rmcc_rpc_serve(int origin, const void *payload, size_t len, void *reply,
                            size_t reply_cap, size_t *reply_len, void *arg);
/* The hash map's part (hashmap.c). */
rmc_status_t rmcc_hashmap_serve(const void *payload, size_t len, void *reply, size_t reply_cap,
                                size_t *reply_len);

/* The queues' part (queue/rpc.c). */
rmc_status_t rmcc_queue_serve(const void *payload, size_t len, void *reply, size_t reply_cap,
                              size_t *reply_len);

/* The matrices' multiplication buffers, freed at finalize (matrix/gemm.c). */
void rmcc_gemm_release(void);

/* ----------------------------------------------------------------------- allocation --- */

/* The end of a collective allocation of per-rank parts: every rank passes the status of its own
 * part and (when RMC_OK) its offset; afterwards offs[r] (nranks entries) is rank r's. Returns the
 * agreed (worst) status and records which rank failed; the caller then frees its own part.
 * Attentive. */
rmc_status_t rmcc_exchange_parts(rmc_status_t st, uint64_t off, uint64_t *offs, const char *fn);
/* The same over the ranks of comm only (MPI_COMM_NULL: all ranks): offs[r] is set for comm's
 * members r (world ranks) and left alone for the others. */
rmc_status_t rmcc_exchange_parts_on(MPI_Comm comm, rmc_status_t st, uint64_t off, uint64_t *offs,
                                    const char *fn);
/* Collectives over the ranks of comm only (MPI_COMM_NULL or RMC's communicator: all ranks, as
 * rmcc_coll_begin / rmcc_agree / rmc_barrier): the argument check, the agreement on a status,
 * a fence of every target followed by a barrier. */
rmc_status_t rmcc_coll_begin_on(MPI_Comm comm, const char *fn, const uint64_t *args, int nargs,
                                rmc_status_t st);
/* rmcc_coll_begin_on whose message names the argument the ranks disagree on: names[i] describes
 * args[i] ("d (the distribution)"; NULL: "argument i + 1" as rmcc_coll_begin_on). */
rmc_status_t rmcc_coll_begin_named(MPI_Comm comm, const char *fn, const uint64_t *args,
                                   const char *const *names, int nargs, rmc_status_t st);
rmc_status_t rmcc_agree_on(MPI_Comm comm, rmc_status_t st);
rmc_status_t rmcc_barrier_on(MPI_Comm comm);

/* rmc_alloc / rmc_free of this rank's segment as offsets (the lock taken inside). */
rmc_status_t rmcc_alloc_off(size_t bytes, uint64_t *off, const char *fn);
rmc_status_t rmcc_free_off(uint64_t off, const char *fn);

#endif
