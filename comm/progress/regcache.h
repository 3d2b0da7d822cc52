/* Remote registration cache: (rank, address) -> descriptor of a peer's registered range, bounded, with
 * least-frequently-used eviction (LFU with dynamic aging, "LFU-DA": an entry's priority is its hit
 * count plus the priority of the last evicted entry when it was last used, so entries that were popular
 * long ago age out; ties go to the least recently used). Pure data structure, no MPI: unit-tested alone.
 * Lookups are O(log n) (entries sorted by (rank, lo)); insertion and eviction O(n) for the bounded n. */
#ifndef RMCI_REGCACHE_H
#define RMCI_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rmci_rc_ent {
    int rank;
    uintptr_t lo, hi;    /* [lo, hi) in the peer's address space */
    uint64_t id;         /* the peer's registration id */
    uint64_t freq;       /* uses */
    uint64_t prio;       /* LFU-DA priority */
    uint64_t stamp;      /* last use (tie-break) */
} rmci_rc_ent_t;

typedef struct rmci_regcache {
    rmci_rc_ent_t *e;    /* sorted by (rank, lo), non-overlapping per rank */
    size_t n, cap;
    uint64_t age;        /* priority of the last eviction */
    uint64_t tick;
    unsigned long long hits, misses, evictions;
} rmci_regcache_t;

/* cap >= 1. Returns 0, or -1 when out of memory. */
int rmci_rc_init(rmci_regcache_t *c, size_t cap);
void rmci_rc_destroy(rmci_regcache_t *c);

/* Entry of `rank` containing addr (counts a use), or NULL (counts a miss). The pointer is valid until
 * the next insert/remove. */
rmci_rc_ent_t *rmci_rc_find(rmci_regcache_t *c, int rank, uintptr_t addr);

/* Inserts a descriptor, replacing entries of the same rank it overlaps (stale ones); evicts the entry of
 * lowest priority when full. Returns the new entry, or NULL when out of memory / lo >= hi. */
rmci_rc_ent_t *rmci_rc_insert(rmci_regcache_t *c, int rank, uintptr_t lo, uintptr_t hi, uint64_t id);

/* Removes the entry of `rank` containing addr, if any. Returns 1 if removed. */
int rmci_rc_remove(rmci_regcache_t *c, int rank, uintptr_t addr);

#endif
