/* The segment's allocator: a boundary-tag heap over one contiguous range of address space, with
 * segregated free lists and coalescing, committing memory on demand through a callback. Pure data
 * structure (no MPI, no locking: the caller serializes), unit-tested in tests/unit/test_heap.c.
 *
 * Offsets are relative to the heap's base; a block's payload is 16-byte aligned and preceded by a
 * 16-byte header (size and state, a tag that tells a live block from a freed one and from anything
 * else). Memory above the high-water mark was never handed out and is zero; an allocation zeroes
 * only what lies below it. */
#ifndef RMCC_HEAP_H
#define RMCC_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include <rmc/status.h>

#define RMCC_HEAP_BINS 256

/* Commits [off, off+len) of the heap's range (offsets from base); RMC_OK or RMC_ERR_NOMEM. */
typedef rmc_status_t (*rmcc_commit_fn)(void *ctx, size_t off, size_t len);

typedef struct rmcc_heap {
    char *base;
    size_t start;     /* first block's header */
    size_t top;       /* end of the last block: [top, limit) is the untouched wilderness */
    size_t hwm;       /* high-water mark: nothing at or above it was ever handed out */
    size_t committed; /* [0, committed) is backed by memory */
    size_t limit;     /* end of the reservation */
    rmcc_commit_fn commit;
    void *ctx;
    uint64_t bins[RMCC_HEAP_BINS]; /* first free block of each size class (offset, 0: empty) */
    uint64_t nonempty[RMCC_HEAP_BINS / 64];
    size_t in_use, peak;
    unsigned long long allocs, frees, grows;
} rmcc_heap_t;

/* A heap over [start, limit) of base; [0, committed) is committed already. */
void rmcc_heap_init(rmcc_heap_t *h, char *base, size_t start, size_t committed, size_t limit,
                    rmcc_commit_fn commit, void *ctx);

/* *off = offset of `bytes` (> 0) of zeroed memory. RMC_ERR_NOMEM when neither a free block nor the
 * wilderness (committed on demand) can hold it; RMC_ERR_TOO_BIG for a size beyond the range. */
rmc_status_t rmcc_heap_alloc(rmcc_heap_t *h, size_t bytes, size_t *off);

/* Frees the block whose payload starts at off: RMC_ERR_STATE when it is free already,
 * RMC_ERR_ARG when off is not a block's payload. */
rmc_status_t rmcc_heap_free(rmcc_heap_t *h, size_t off);

/* Usable bytes of the live block at off (RMC_ERR_STATE / RMC_ERR_ARG as free). */
rmc_status_t rmcc_heap_usable(const rmcc_heap_t *h, size_t off, size_t *bytes);

/* Walks every block, checking the invariants (tags, sizes, the prev-used bits, no two adjacent free
 * blocks, free lists consistent with the blocks); returns the number of violations (0: sound). For
 * tests. */
int rmcc_heap_check(const rmcc_heap_t *h);

#endif
