/* RMC strided and vector one-sided operations, and typed accumulate.
 *
 * Strided descriptors follow ARMCI exactly (ARMCI_PutS/GetS/AccS map 1:1 onto these calls):
 *   stride_levels  s in [0, RMC_STRIDE_LEVELS_MAX]
 *   count[0..s]    count[0] = bytes of one contiguous chunk, count[i] (i >= 1) = number of level-i
 *                  blocks; every count must be >= 1
 *   src_stride_arr[0..s-1], dst_stride_arr[0..s-1]
 *                  byte distance between consecutive level-(i+1) blocks on each side
 * Chunk (i1, ..., is) starts at ptr + sum_k ik * stride[k-1] on each side. Where count[i+1] > 1, a
 * stride must be at least the extent of the block below it (blocks of one side never overlap);
 * strides are never negative. The whole patch on the remote side (first to last byte) must lie in
 * ONE region of `proc` (the target). Descriptors are validated before anything moves: on any error
 * nothing was transferred and no request was created.
 *
 * Completion semantics are those of comm.h's contiguous operations:
 *  - blocking put: returns when the source may be reused; visible to this origin's later gets at
 *    once, to other ranks after rmc_fence / rmc_fence_all / rmc_barrier;
 *  - blocking get: returns when the data has arrived; it sees every earlier put / accumulate of
 *    this origin to that target (no fence needed);
 *  - blocking accumulate: returns when the source may be reused; the update is visible to other
 *    ranks after a fence of the origin (or rmc_barrier) and to this origin's later gets at once;
 *  - _nb forms: `*req` receives a request completed by rmc_wait / rmc_test / rmc_wait_all
 *    (RMC_REQUEST_NULL when the operation completed at once); `req` may be NULL (implicit handle,
 *    completed by rmc_fence / rmc_fence_all / rmc_barrier). The source must not be modified and the
 *    destination (get) not read until completion. A completed nb put / accumulate is visible to
 *    other ranks after a fence. rmc_test may complete a strided request by waiting for it
 *    (non-contiguous remote transfers are completed with MPI_Win_flush_local).
 * Order: operations of one origin to overlapping locations of one target are observed in issue
 * order by that origin (conflict tracking, as comm.h). Accumulates (and rmc_amo_add_*) of the same
 * element type commute, so RMC lets one pass another; accumulates of different types or widths on
 * overlapping bytes (an RMC_ACC_INT32 and an RMC_ACC_INT64 of one word, a double and an int64) do
 * not (an int32 add wraps where an int64 add carries), and RMC applies them in issue order (the
 * second waits for the first where MPI would leave them unordered). Between different origins,
 * accumulates of different types on the same bytes are not atomic with respect to each other.
 *
 * Accumulate: dst[i] += scale * src[i] element-wise for the element type (complex types: complex
 * scale and complex product). Each element update is atomic with respect to every other RMC
 * accumulate of its type on the same location from any origin (node-local or remote, every node
 * mode); it is
 * NOT atomic with respect to puts or plain stores. `scale` points to one element of the type
 * (NULL means 1). count[0] (vector: bytes) must be a multiple of the element size; remote and local
 * addresses and strides must be multiples of the element alignment (the element size, or the size
 * of the real component for the complex types). RMC_ERR_ALIGN otherwise.
 *
 * Errors (all forms): RMC_ERR_NOT_INIT, RMC_ERR_RANK, RMC_ERR_ARG (NULL pointer / descriptor
 * array), RMC_ERR_STRIDE (bad levels, counts, strides or vector descriptor), RMC_ERR_NOT_REGION /
 * RMC_ERR_BOUNDS (remote patch not inside one region of `proc`), RMC_ERR_TYPE (unknown accumulate
 * type), RMC_ERR_ALIGN (accumulate alignment), RMC_ERR_TOO_BIG (a patch of more than 2 GiB - 1
 * to a target that is not node-local, except rmc_acc's contiguous one, which any size is; int
 * strides that must each span the level below keep every extent far below size_t's range),
 * RMC_ERR_NOMEM, RMC_ERR_MPI.
 *
 * Protocols for targets that are not node-local (knob RMC_STRIDED_METHOD = auto | datatype | list |
 * pack): one MPI operation with derived datatypes on both sides, a list of zero-copy contiguous
 * operations, or a local pack into a contiguous buffer with a datatype on the target side only.
 * "auto" chooses from the chunk size and the number of chunks. Node-local targets are served by
 * direct strided copies.
 */
#ifndef RMC_STRIDED_H
#define RMC_STRIDED_H

#include <stddef.h>
#include <rmc/status.h>
#include <rmc/comm.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMC_STRIDE_LEVELS_MAX 7

/* Accumulate element types. */
typedef enum rmc_acc_type {
    RMC_ACC_INT32 = 1,         /* int32_t */
    RMC_ACC_INT64 = 2,         /* int64_t */
    RMC_ACC_FLOAT = 3,         /* float */
    RMC_ACC_DOUBLE = 4,        /* double */
    RMC_ACC_COMPLEX_FLOAT = 5, /* float _Complex (two floats: re, im) */
    RMC_ACC_COMPLEX_DOUBLE = 6 /* double _Complex (two doubles: re, im) */
} rmc_acc_type_t;

/* Size in bytes of one element of `type`, 0 for an unknown type (local, no init needed). Any other
 * value of rmc_acc_type_t given to an accumulate gives RMC_ERR_TYPE. */
size_t rmc_acc_type_size(rmc_acc_type_t type);

/* Strided protocol for non-node-local targets (see above). */
typedef enum rmc_strided_method {
    RMC_STRIDED_AUTO = 0,
    RMC_STRIDED_DATATYPE = 1, /* one MPI op, derived datatypes on origin and target */
    RMC_STRIDED_LIST = 2,     /* one contiguous MPI op per chunk, zero-copy, one flush */
    RMC_STRIDED_PACK = 3      /* local pack/unpack, one MPI op with a target datatype */
} rmc_strided_method_t;

/* Method in force for this process (from RMC_STRIDED_METHOD at every rmc_init; default auto).
 * rmc_strided_method_set changes it for later operations until rmc_finalize (tests, tuning).
 * Local, no communication. Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (unknown value). */
rmc_status_t rmc_strided_method_set(rmc_strided_method_t method);
rmc_strided_method_t rmc_strided_method_get(void);
/* The earlier names (renamed during 0.1's development: object before verb is the rule,
 * docs/CodeStyle.md). */
#define rmc_strided_set_method rmc_strided_method_set
#define rmc_strided_get_method rmc_strided_method_get
/* Name of a method ("auto", "datatype", "list", "pack"), "?" when unknown. */
const char *rmc_strided_method_name(rmc_strided_method_t method);

/* ------------------------------------------------------------------- strided --- */

/* Put the strided patch at local src_ptr into `proc`'s patch at dst_ptr. */
rmc_status_t rmc_put_strided(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                             const int dst_stride_arr[], const int count[], int stride_levels,
                             int proc);
/* Get `proc`'s patch at src_ptr into the local patch at dst_ptr. */
rmc_status_t rmc_get_strided(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                             const int dst_stride_arr[], const int count[], int stride_levels,
                             int proc);
/* Accumulate the local patch at src_ptr, scaled by *scale, into `proc`'s patch at dst_ptr. */
rmc_status_t rmc_acc_strided(rmc_acc_type_t type, const void *scale, const void *src_ptr,
                             const int src_stride_arr[], void *dst_ptr, const int dst_stride_arr[],
                             const int count[], int stride_levels, int proc);

rmc_status_t rmc_put_strided_nb(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req);
rmc_status_t rmc_get_strided_nb(const void *src_ptr, const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req);
rmc_status_t rmc_acc_strided_nb(rmc_acc_type_t type, const void *scale, const void *src_ptr,
                                const int src_stride_arr[], void *dst_ptr,
                                const int dst_stride_arr[], const int count[], int stride_levels,
                                int proc, rmc_request_h *req);

/* ----------------------------------------------------------- 2-D convenience --- */
/* A row-major matrix patch of `rows` rows of `row_bytes` bytes; row i starts at src + i * src_ld on
 * the source and dst + i * dst_ld on the destination (leading dimensions in BYTES). Same semantics
 * and errors as the strided forms with stride_levels = 1, count = {row_bytes, rows}: rows and
 * row_bytes must be >= 1 and, when rows > 1, each ld >= row_bytes (RMC_ERR_STRIDE); values above
 * INT_MAX give RMC_ERR_TOO_BIG. */
rmc_status_t rmc_put_2d(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                        size_t row_bytes, int proc);
rmc_status_t rmc_get_2d(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                        size_t row_bytes, int proc);
rmc_status_t rmc_acc_2d(rmc_acc_type_t type, const void *scale, const void *src, size_t src_ld,
                        void *dst, size_t dst_ld, size_t rows, size_t row_bytes, int proc);
rmc_status_t rmc_put_2d_nb(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                           size_t row_bytes, int proc, rmc_request_h *req);
rmc_status_t rmc_get_2d_nb(const void *src, size_t src_ld, void *dst, size_t dst_ld, size_t rows,
                           size_t row_bytes, int proc, rmc_request_h *req);
rmc_status_t rmc_acc_2d_nb(rmc_acc_type_t type, const void *scale, const void *src, size_t src_ld,
                           void *dst, size_t dst_ld, size_t rows, size_t row_bytes, int proc,
                           rmc_request_h *req);

/* -------------------------------------------------------- contiguous accumulate --- */
/* dst[i] += scale * src[i] over `bytes` bytes (a multiple of the element size; any size: beyond
 * 2 GiB in several MPI operations); bytes == 0 is a no-op (pointers unchecked). Semantics as
 * rmc_acc_strided. */
rmc_status_t rmc_acc(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                     size_t bytes, int proc);
rmc_status_t rmc_acc_nb(rmc_acc_type_t type, const void *scale, const void *src, void *dst,
                        size_t bytes, int proc, rmc_request_h *req);

/* ------------------------------------------------------------------- vector --- */
/* A set of `count` segments of `bytes` bytes each: segment i goes from src[i] to dst[i] (like
 * ARMCI's armci_giov_t). For a put / accumulate the dst[] addresses are on `proc` and src[] local;
 * for a get src[] is on `proc` and dst[] local. Every remote segment must lie in a region of `proc`
 * (different segments may lie in different regions). If destination segments of a put / get
 * overlap, which write lands last is undefined (overlapping accumulates all apply). count >= 1 and
 * bytes >= 1 per descriptor, len >= 1 descriptors (RMC_ERR_STRIDE otherwise). All segments are
 * validated before anything moves. */
typedef struct rmc_iov {
    void **src;   /* [count] source addresses */
    void **dst;   /* [count] destination addresses */
    int count;    /* number of segments */
    size_t bytes; /* bytes per segment */
} rmc_iov_t;

rmc_status_t rmc_put_vector(const rmc_iov_t *iov, int len, int proc);
rmc_status_t rmc_get_vector(const rmc_iov_t *iov, int len, int proc);
rmc_status_t rmc_acc_vector(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov, int len,
                            int proc);
rmc_status_t rmc_put_vector_nb(const rmc_iov_t *iov, int len, int proc, rmc_request_h *req);
rmc_status_t rmc_get_vector_nb(const rmc_iov_t *iov, int len, int proc, rmc_request_h *req);
rmc_status_t rmc_acc_vector_nb(rmc_acc_type_t type, const void *scale, const rmc_iov_t *iov,
                               int len, int proc, rmc_request_h *req);

/* --------------------------------------------------------------- introspection --- */
/* Counters (per rank, since rmc_init) of how strided / vector operations were served (one count per
 * call). Errors: RMC_ERR_NOT_INIT, RMC_ERR_ARG (stats NULL). */
typedef struct rmc_strided_stats {
    unsigned long long local_ops;    /* node-local direct copies / locked accumulates */
    unsigned long long datatype_ops; /* remote, derived datatypes both sides */
    unsigned long long list_ops;     /* remote, list of contiguous operations */
    unsigned long long pack_ops;     /* remote, pack/unpack + target datatype */
    unsigned long long contig_ops;   /* remote, patch collapsed to one contiguous operation */
    unsigned long long mpi_acc_ops;  /* accumulates through MPI_Accumulate */
    unsigned long long lock_acc_ops; /* accumulates under the node-local lock */
    unsigned long long
        staged_acc_ops;              /* blocking remote accumulates issued from the staging area */
    unsigned long long stage_drains; /* local completions that recycled the staging area */
} rmc_strided_stats_t;

rmc_status_t rmc_strided_stats(rmc_strided_stats_t *stats);

#ifdef __cplusplus
}
#endif
#endif
