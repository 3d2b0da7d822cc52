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
    /* the caller hosts (owns) the data it touches and no other operation touches that rank's part
     * meanwhile (other ranks may run RMC_PROMISE_LOCAL operations on their own parts at the same
     * time): local loads and stores, no remote operation at all */
    RMC_PROMISE_LOCAL = 1u << 4
} rmc_promise_t;

/* Paths (seed 001 ch. 8), ORed into an operation's `promise` to force one (containers that have
 * both: queues, hash maps, key/value stores; each also takes a per-handle default):
 *  RMC_PATH_RDMA  the one-sided protocol: the data's owner takes no part.
 *  RMC_PATH_RPC   one active message to the owner, which runs the operation on its memory with
 *                 CPU atomics and answers: one round trip for the whole operation, served by the
 *                 owner's progress thread or inside its RMC calls. Needs RMC_AMO=thread (with MPI
 *                 atomics the owner's CPU atomics would not be atomic with other ranks' one-sided
 *                 ones): RMC_ERR_UNSUPPORTED otherwise.
 * Without either, each operation chooses: RPC for owners on other nodes in thread AMO mode (where
 * every one-sided atomic is an active message too, a round trip each), RDMA otherwise. */
#define RMC_PATH_RDMA (1u << 16)
#define RMC_PATH_RPC  (1u << 17)

#ifdef __cplusplus
}
#endif
#endif
