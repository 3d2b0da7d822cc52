/* Translation cache: (rank, address) -> region entry in O(log n) with an O(1) MRU front.
 * Pure data structure, no MPI: unit-tested on its own. */
#ifndef RMCI_XLATE_H
#define RMCI_XLATE_H

#include <stddef.h>
#include <stdint.h>
#include "rmc/status.h"

typedef struct rmci_xent {
    uintptr_t lo, hi; /* [lo, hi) in the owner's address space, hi > lo */
    int rank;
    void *owner; /* the region */
    void *local; /* load/store address of lo in this process, or NULL */
} rmci_xent_t;

#define RMCI_XLATE_MRU 4

typedef struct rmci_xlate {
    rmci_xent_t *ents; /* sorted by (rank, lo) */
    size_t n, cap;
    rmci_xent_t mru[RMCI_XLATE_MRU];
    unsigned long long probes; /* comparisons made by binary searches (for tests) */
    unsigned long long mru_hits;
} rmci_xlate_t;

void rmci_xlate_init(rmci_xlate_t *x);
void rmci_xlate_destroy(rmci_xlate_t *x);

/* Adds one entry per rank with sizes[r] > 0; local[r] (local may be NULL) is that part's load/store
 * address in this process, or NULL. Returns RMC_ERR_NOMEM or RMC_OK. */
rmc_status_t rmci_xlate_insert(rmci_xlate_t *x, void *owner, int nranks, const uintptr_t *bases,
                               const size_t *sizes, void *const *local);

/* Removes every entry of `owner`. */
void rmci_xlate_remove(rmci_xlate_t *x, void *owner);

/* Finds the entry containing [addr, addr+len) on `rank` (len >= 1).
 * RMC_OK, RMC_ERR_NOT_REGION (addr in no entry) or RMC_ERR_BOUNDS (range leaves the entry). */
rmc_status_t rmci_xlate_find_slow(rmci_xlate_t *x, int rank, uintptr_t addr, size_t len,
                                  const rmci_xent_t **out);

static inline rmc_status_t rmci_xlate_find(rmci_xlate_t *x, int rank, uintptr_t addr, size_t len,
                                           const rmci_xent_t **out)
{
    const rmci_xent_t *m = &x->mru[0];
    if (__builtin_expect(m->rank == rank && addr >= m->lo && addr < m->hi, 1)) {
        x->mru_hits++;
        *out = m;
        return (len <= m->hi - addr) ? RMC_OK : RMC_ERR_BOUNDS;
    }
    return rmci_xlate_find_slow(x, rank, addr, len, out);
}

#endif
