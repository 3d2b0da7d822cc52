/* RMC containers: concurrency promises (seed 000 §7, seed 001 §3.6).
 *
 * Every container operation that other ranks may run at the same time takes a `promise`: the set
 * of operations that may run concurrently with this call (on any rank, on the same container).
 * RMC_PROMISE_ANY (0) promises nothing and gets the fully atomic protocol; a narrower promise lets
 * the container pick a cheaper one (fewer or cheaper remote operations: the cost tables in
 * docs/containers.md). A promise is the caller's word: breaking it (e.g. popping while another
 * rank pushes with RMC_PROMISE_PUSH) gives wrong results, as in BCL. Phases of different promises
 * are separated by rmc_barrier. */
#ifndef RMC_PROMISE_H
#define RMC_PROMISE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rmc_promise {
    RMC_PROMISE_ANY = 0,          /* anything may run concurrently: fully atomic */
    RMC_PROMISE_PUSH = 1u << 0,   /* only pushes (queues) */
    RMC_PROMISE_POP = 1u << 1,    /* only pops (queues) */
    RMC_PROMISE_INSERT = 1u << 2, /* only inserts (hash maps, Bloom filters) */
    RMC_PROMISE_FIND = 1u << 3,   /* only finds (hash maps, Bloom filters) */
    RMC_PROMISE_ERASE = 1u << 5,  /* erases and updates (hash maps): with INSERT | FIND, all three */
    /* nothing runs concurrently and the caller hosts (owns) the data it touches: local loads and
     * stores, no remote operation at all */
    RMC_PROMISE_LOCAL = 1u << 4
} rmc_promise_t;

#ifdef __cplusplus
}
#endif
#endif
