/* Remote registration cache with LFU-DA eviction (see regcache.h). */
#include <stdlib.h>
#include <string.h>
#include "regcache.h"

int rmci_rc_init(rmci_regcache_t *c, size_t cap)
{
    memset(c, 0, sizeof(*c));
    if (cap < 1)
        cap = 1;
    c->e = calloc(cap, sizeof(*c->e));
    if (!c->e)
        return -1;
    c->cap = cap;
    return 0;
}

void rmci_rc_destroy(rmci_regcache_t *c)
{
    free(c->e);
    memset(c, 0, sizeof(*c));
}

static int key_less(int r1, uintptr_t a1, int r2, uintptr_t a2)
{
    return r1 < r2 || (r1 == r2 && a1 < a2);
}

/* Index of the first entry with (rank, lo) > (rank, addr). */
static size_t upper(const rmci_regcache_t *c, int rank, uintptr_t addr)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (key_less(rank, addr, c->e[mid].rank, c->e[mid].lo))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static rmci_rc_ent_t *lookup(rmci_regcache_t *c, int rank, uintptr_t addr)
{
    size_t i = upper(c, rank, addr);
    if (i == 0)
        return NULL;
    rmci_rc_ent_t *e = &c->e[i - 1];
    return (e->rank == rank && addr >= e->lo && addr < e->hi) ? e : NULL;
}

static void touch(rmci_regcache_t *c, rmci_rc_ent_t *e)
{
    e->freq++;
    e->prio = c->age + e->freq;
    e->stamp = ++c->tick;
}

rmci_rc_ent_t *rmci_rc_find(rmci_regcache_t *c, int rank, uintptr_t addr)
{
    rmci_rc_ent_t *e = lookup(c, rank, addr);
    if (!e) {
        c->misses++;
        return NULL;
    }
    c->hits++;
    touch(c, e);
    return e;
}

static void remove_at(rmci_regcache_t *c, size_t i)
{
    memmove(&c->e[i], &c->e[i + 1], (c->n - i - 1) * sizeof(*c->e));
    c->n--;
}

int rmci_rc_remove(rmci_regcache_t *c, int rank, uintptr_t addr)
{
    rmci_rc_ent_t *e = lookup(c, rank, addr);
    if (!e)
        return 0;
    remove_at(c, (size_t)(e - c->e));
    return 1;
}

rmci_rc_ent_t *rmci_rc_insert(rmci_regcache_t *c, int rank, uintptr_t lo, uintptr_t hi, uint64_t id)
{
    if (lo >= hi || !c->e)
        return NULL;
    /* drop entries of this rank overlapping [lo, hi): they describe ranges that no longer exist */
    for (size_t i = 0; i < c->n;) {
        rmci_rc_ent_t *e = &c->e[i];
        if (e->rank == rank && e->lo < hi && lo < e->hi)
            remove_at(c, i);
        else
            i++;
    }
    if (c->n == c->cap) {
        size_t v = 0;
        for (size_t i = 1; i < c->n; i++)
            if (c->e[i].prio < c->e[v].prio ||
                (c->e[i].prio == c->e[v].prio && c->e[i].stamp < c->e[v].stamp))
                v = i;
        c->age = c->e[v].prio;
        remove_at(c, v);
        c->evictions++;
    }
    size_t at = upper(c, rank, lo);
    memmove(&c->e[at + 1], &c->e[at], (c->n - at) * sizeof(*c->e));
    c->n++;
    rmci_rc_ent_t *e = &c->e[at];
    e->rank = rank;
    e->lo = lo;
    e->hi = hi;
    e->id = id;
    e->freq = 0;
    touch(c, e);
    return e;
}
