/* Translation cache: sorted array of (rank, [lo, hi)) entries, binary search, MRU front. */
#include <stdlib.h>
#include <string.h>
#include "xlate.h"

static void mru_clear(rmci_xlate_t *x)
{
    for (int i = 0; i < RMCI_XLATE_MRU; i++) {
        x->mru[i].rank = -1;
        x->mru[i].lo = x->mru[i].hi = 0;
        x->mru[i].owner = NULL;
        x->mru[i].local = NULL;
    }
}

void rmci_xlate_init(rmci_xlate_t *x)
{
    memset(x, 0, sizeof(*x));
    mru_clear(x);
}

void rmci_xlate_destroy(rmci_xlate_t *x)
{
    free(x->ents);
    rmci_xlate_init(x);
}

static int ent_cmp(const void *a, const void *b)
{
    const rmci_xent_t *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return 0;
}

rmc_status_t rmci_xlate_insert(rmci_xlate_t *x, void *owner, int nranks, const uintptr_t *bases,
                               const size_t *sizes, void *const *local)
{
    size_t add = 0;
    for (int r = 0; r < nranks; r++)
        add += sizes[r] > 0;
    if (add == 0)
        return RMC_OK;
    if (x->n + add > x->cap) {
        size_t cap = x->cap ? x->cap : 64;
        while (cap < x->n + add)
            cap *= 2;
        rmci_xent_t *e = realloc(x->ents, cap * sizeof(*e));
        if (!e)
            return RMC_ERR_NOMEM;
        x->ents = e;
        x->cap = cap;
    }
    /* New entries sorted by rank already; merge them in from the back (O(n + add)). */
    rmci_xent_t *fresh = malloc(add * sizeof(*fresh));
    if (!fresh)
        return RMC_ERR_NOMEM;
    size_t k = 0;
    for (int r = 0; r < nranks; r++) {
        if (sizes[r] == 0)
            continue;
        fresh[k].rank = r;
        fresh[k].lo = bases[r];
        fresh[k].hi = bases[r] + sizes[r];
        fresh[k].owner = owner;
        fresh[k].local = local ? local[r] : NULL;
        k++;
    }
    size_t i = x->n, j = add, out = x->n + add;
    while (j > 0) {
        if (i > 0 && ent_cmp(&x->ents[i - 1], &fresh[j - 1]) > 0)
            x->ents[--out] = x->ents[--i];
        else
            x->ents[--out] = fresh[--j];
    }
    x->n += add;
    free(fresh);
    return RMC_OK;
}

void rmci_xlate_remove(rmci_xlate_t *x, void *owner)
{
    size_t o = 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->ents[i].owner != owner)
            x->ents[o++] = x->ents[i];
    x->n = o;
    for (int i = 0; i < RMCI_XLATE_MRU; i++)
        if (x->mru[i].owner == owner) {
            x->mru[i].rank = -1;
            x->mru[i].lo = x->mru[i].hi = 0;
            x->mru[i].owner = NULL;
            x->mru[i].local = NULL;
        }
}

rmc_status_t rmci_xlate_find_slow(rmci_xlate_t *x, int rank, uintptr_t addr, size_t len,
                                  const rmci_xent_t **out)
{
    /* rest of the MRU front */
    for (int i = 1; i < RMCI_XLATE_MRU; i++) {
        rmci_xent_t *m = &x->mru[i];
        if (m->rank == rank && addr >= m->lo && addr < m->hi) {
            rmci_xent_t hit = *m;
            memmove(&x->mru[1], &x->mru[0], (size_t)i * sizeof(hit));
            x->mru[0] = hit;
            x->mru_hits++;
            *out = &x->mru[0];
            return (len <= hit.hi - addr) ? RMC_OK : RMC_ERR_BOUNDS;
        }
    }
    /* binary search: last entry with (rank, lo) <= (rank, addr) */
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const rmci_xent_t *e = &x->ents[mid];
        x->probes++;
        if (e->rank < rank || (e->rank == rank && e->lo <= addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return RMC_ERR_NOT_REGION;
    const rmci_xent_t *e = &x->ents[lo - 1];
    if (e->rank != rank || addr >= e->hi)
        return RMC_ERR_NOT_REGION;
    memmove(&x->mru[1], &x->mru[0], (RMCI_XLATE_MRU - 1) * sizeof(*e));
    x->mru[0] = *e;
    *out = &x->mru[0];
    return (len <= e->hi - addr) ? RMC_OK : RMC_ERR_BOUNDS;
}
