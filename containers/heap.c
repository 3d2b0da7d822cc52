/* The segment's allocator (heap.h). Blocks: a 16-byte header {size | flags, tag}, the payload; a
 * free block also holds its free-list links after the header and its size in its last 8 bytes
 * (the footer), so that the block after it can find and merge it. Invariants: no two free blocks
 * are adjacent, and the block before the wilderness (top) is in use. */
#include "config.h"
#include <string.h>
#include "heap.h"

#define HDR       16u
#define MINBLK    48u
#define F_USED    1u
#define F_PREV    2u /* the previous block is in use (or this is the first block) */
#define SZ(w)     ((w) & ~(uint64_t)15)
#define TAG_USED  0x524d43414c4c4f43ull /* "RMCALLOC" */
#define TAG_FREE  0x524d434652454544ull /* "RMCFREED" */
#define GROW_STEP ((size_t)2 << 20)

typedef struct hdr {
    uint64_t sz;  /* block size (multiple of 16, header included) | F_USED | F_PREV */
    uint64_t tag; /* TAG_USED or TAG_FREE, xor the block's offset */
} hdr_t;

static inline hdr_t *H(const rmcc_heap_t *h, size_t b)
{
    return (hdr_t *)(void *)(h->base + b);
}
static inline uint64_t *link_next(const rmcc_heap_t *h, size_t b)
{
    return (uint64_t *)(void *)(h->base + b + HDR);
}
static inline uint64_t *link_prev(const rmcc_heap_t *h, size_t b)
{
    return (uint64_t *)(void *)(h->base + b + HDR + 8);
}
static inline uint64_t *footer(const rmcc_heap_t *h, size_t b, size_t size)
{
    return (uint64_t *)(void *)(h->base + b + size - 8);
}

/* Size class: exact below 1 KiB (16-byte steps), then four classes per power of two. */
static unsigned bin_of(size_t s)
{
    if (s < 1024)
        return (unsigned)(s / 16);
    unsigned lg = 63u - (unsigned)__builtin_clzll((unsigned long long)s);
    unsigned b = 64 + (lg - 10) * 4 + (unsigned)((s >> (lg - 2)) & 3);
    return b < RMCC_HEAP_BINS ? b : RMCC_HEAP_BINS - 1;
}

static void bin_insert(rmcc_heap_t *h, size_t b, size_t size)
{
    unsigned i = bin_of(size);
    *link_prev(h, b) = 0;
    *link_next(h, b) = h->bins[i];
    if (h->bins[i])
        *link_prev(h, h->bins[i]) = b;
    h->bins[i] = b;
    h->nonempty[i / 64] |= 1ull << (i % 64);
}

static void bin_remove(rmcc_heap_t *h, size_t b, size_t size)
{
    unsigned i = bin_of(size);
    uint64_t n = *link_next(h, b), p = *link_prev(h, b);
    if (p)
        *link_next(h, p) = n;
    else
        h->bins[i] = n;
    if (n)
        *link_prev(h, n) = p;
    if (!h->bins[i])
        h->nonempty[i / 64] &= ~(1ull << (i % 64));
}

/* The first non-empty bin at or above i, or RMCC_HEAP_BINS. */
static unsigned next_bin(const rmcc_heap_t *h, unsigned i)
{
    for (unsigned w = i / 64; w < RMCC_HEAP_BINS / 64; w++) {
        uint64_t m = h->nonempty[w];
        if (w == i / 64)
            m &= ~0ull << (i % 64);
        if (m)
            return w * 64 + (unsigned)__builtin_ctzll(m);
    }
    return RMCC_HEAP_BINS;
}

void rmcc_heap_init(rmcc_heap_t *h, char *base, size_t start, size_t committed, size_t limit,
                    rmcc_commit_fn commit, void *ctx)
{
    memset(h, 0, sizeof(*h));
    h->base = base;
    h->start = h->top = h->hwm = (start + 15) & ~(size_t)15;
    if (h->start < 16)
        h->start = h->top = h->hwm = 16; /* offset 0 means "no block" in the free lists */
    h->committed = committed;
    h->limit = limit & ~(size_t)15;
    h->commit = commit;
    h->ctx = ctx;
}

/* Makes [.., end) committed. */
static rmc_status_t grow(rmcc_heap_t *h, size_t end)
{
    if (end <= h->committed)
        return RMC_OK;
    if (end > h->limit)
        return RMC_ERR_NOMEM;
    size_t step = h->committed / 4 > GROW_STEP ? h->committed / 4 : GROW_STEP;
    size_t want = end > h->committed + step ? end : h->committed + step;
    want = (want + GROW_STEP - 1) & ~(GROW_STEP - 1);
    if (want > h->limit)
        want = h->limit;
    rmc_status_t st = h->commit ? h->commit(h->ctx, h->committed, want - h->committed) : RMC_OK;
    if (st != RMC_OK && want > end) { /* the generous step failed: exactly what is needed */
        want = end;
        st = h->commit ? h->commit(h->ctx, h->committed, want - h->committed) : RMC_OK;
    }
    if (st != RMC_OK)
        return RMC_ERR_NOMEM;
    __atomic_store_n(&h->committed, want, __ATOMIC_RELEASE); /* read by the queues' RPCs */
    h->grows++;
    return RMC_OK;
}

/* Marks block b (size bytes) in use: header, tag, the next block's F_PREV; zeroes its payload
 * below the high-water mark. */
static size_t take(rmcc_heap_t *h, size_t b, size_t size, uint64_t prev_flag)
{
    hdr_t *x = H(h, b);
    x->sz = size | F_USED | prev_flag;
    x->tag = TAG_USED ^ b;
    if (b + size < h->top)
        H(h, b + size)->sz |= F_PREV;
    size_t lo = b + HDR, hi = b + size < h->hwm ? b + size : h->hwm;
    if (lo < hi)
        memset(h->base + lo, 0, hi - lo);
    if (b + size > h->hwm)
        h->hwm = b + size;
    h->in_use += size;
    if (h->in_use > h->peak)
        h->peak = h->in_use;
    h->allocs++;
    return b + HDR;
}

/* Hands out free block b for a request of `need` bytes: out of its list, the rest split off as a
 * free block when it is large enough to be one. */
static size_t use_free(rmcc_heap_t *h, size_t b, size_t need)
{
    size_t size = SZ(H(h, b)->sz);
    bin_remove(h, b, size);
    if (size - need >= MINBLK) {
        size_t r = b + need, rs = size - need;
        H(h, r)->sz = rs | F_PREV;
        H(h, r)->tag = TAG_FREE ^ r;
        *footer(h, r, rs) = rs;
        bin_insert(h, r, rs);
        size = need;
    }
    return take(h, b, size, H(h, b)->sz & F_PREV);
}

rmc_status_t rmcc_heap_alloc(rmcc_heap_t *h, size_t bytes, size_t *off)
{
    if (bytes == 0)
        return RMC_ERR_ARG;
    if (bytes > h->limit)
        return RMC_ERR_TOO_BIG;
    size_t need = (bytes + HDR + 15) & ~(size_t)15;
    if (need < MINBLK)
        need = MINBLK;
    if (need > h->limit - h->start) /* more than an empty heap holds: never fits */
        return RMC_ERR_TOO_BIG;
    unsigned i = bin_of(need);
    /* a ranged bin (64 and up) holds blocks of several sizes: first fit in it; every block of a
     * higher bin (or of an exact bin at or above i) fits */
    if (i >= 64) {
        for (uint64_t b = h->bins[i]; b; b = *link_next(h, b))
            if (SZ(H(h, b)->sz) >= need) {
                *off = use_free(h, b, need);
                return RMC_OK;
            }
        i++;
    }
    unsigned j = next_bin(h, i);
    if (j < RMCC_HEAP_BINS) {
        *off = use_free(h, h->bins[j], need);
        return RMC_OK;
    }
    /* the wilderness: the block before it is in use (invariant) */
    size_t b = h->top;
    if (need > h->limit - b)
        return RMC_ERR_NOMEM;
    rmc_status_t st = grow(h, b + need);
    if (st != RMC_OK)
        return st;
    h->top = b + need;
    *off = take(h, b, need, F_PREV);
    return RMC_OK;
}

/* The block of payload offset `off`, checked: RMC_OK (live), RMC_ERR_STATE (freed), RMC_ERR_ARG. */
static rmc_status_t block_of(const rmcc_heap_t *h, size_t off, size_t *b)
{
    /* a freed block may have gone back to the wilderness: its header still says so (below the
     * committed end, where memory can be read) */
    if (off % 16 || off < h->start + HDR || off > h->committed - (MINBLK - HDR))
        return RMC_ERR_ARG;
    *b = off - HDR;
    const hdr_t *x = H(h, *b);
    if (x->tag == (TAG_FREE ^ *b))
        return RMC_ERR_STATE;
    size_t size = SZ(x->sz);
    if (off > h->top - (MINBLK - HDR) || x->tag != (TAG_USED ^ *b) || !(x->sz & F_USED) ||
        size < MINBLK || size > h->top - *b)
        return RMC_ERR_ARG;
    return RMC_OK;
}

rmc_status_t rmcc_heap_usable(const rmcc_heap_t *h, size_t off, size_t *bytes)
{
    size_t b;
    rmc_status_t st = block_of(h, off, &b);
    if (st == RMC_OK)
        *bytes = SZ(H(h, b)->sz) - HDR;
    return st;
}

rmc_status_t rmcc_heap_free(rmcc_heap_t *h, size_t off)
{
    size_t b;
    rmc_status_t st = block_of(h, off, &b);
    if (st != RMC_OK)
        return st;
    hdr_t *x = H(h, b);
    size_t size = SZ(x->sz);
    uint64_t prev_used = x->sz & F_PREV;
    /* this header says "freed" before anything merges it: a second free of it is seen */
    x->sz = size | prev_used;
    x->tag = TAG_FREE ^ b;
    h->in_use -= size;
    h->frees++;
    size_t n = b + size;
    if (n < h->top && !(H(h, n)->sz & F_USED)) {
        size_t ns = SZ(H(h, n)->sz);
        bin_remove(h, n, ns);
        size += ns;
    }
    if (!prev_used) {
        size_t ps = *(uint64_t *)(void *)(h->base + b - 8);
        b -= ps;
        bin_remove(h, b, ps);
        size += ps;
        prev_used = H(h, b)->sz & F_PREV; /* set: free blocks are never adjacent */
    }
    if (b + size == h->top) { /* back to the wilderness */
        h->top = b;
        return RMC_OK;
    }
    H(h, b)->sz = size | prev_used;
    H(h, b)->tag = TAG_FREE ^ b;
    *footer(h, b, size) = size;
    bin_insert(h, b, size);
    H(h, b + size)->sz &= ~(uint64_t)F_PREV;
    return RMC_OK;
}

int rmcc_heap_check(const rmcc_heap_t *h)
{
    int bad = 0;
    size_t nfree_walk = 0, nfree_bins = 0, used = 0;
    uint64_t prev_used = F_PREV;
    for (size_t b = h->start; b < h->top;) {
        const hdr_t *x = H(h, b);
        size_t size = SZ(x->sz);
        if (size < MINBLK || size > h->top - b)
            return bad + 1; /* cannot walk on */
        int u = (x->sz & F_USED) != 0;
        bad += (x->sz & F_PREV) != prev_used;
        bad += x->tag != ((u ? TAG_USED : TAG_FREE) ^ b);
        if (u) {
            used += size;
        } else {
            nfree_walk++;
            bad += !prev_used; /* two adjacent free blocks */
            bad += *footer(h, b, size) != size;
            bad += b + size == h->top; /* a free block before the wilderness */
        }
        prev_used = u ? F_PREV : 0;
        b += size;
    }
    bad += used != h->in_use;
    for (unsigned i = 0; i < RMCC_HEAP_BINS; i++) {
        bad += (h->bins[i] != 0) != ((h->nonempty[i / 64] >> (i % 64)) & 1);
        uint64_t prev = 0;
        for (uint64_t b = h->bins[i]; b; b = *link_next(h, b)) {
            const hdr_t *x = H(h, b);
            bad += (x->sz & F_USED) != 0 || bin_of(SZ(x->sz)) != i || *link_prev(h, b) != prev;
            prev = b;
            if (++nfree_bins > nfree_walk + 1)
                return bad + 1; /* a cycle */
        }
    }
    bad += nfree_bins != nfree_walk;
    bad += h->hwm < h->top || h->committed < h->top;
    return bad;
}
