/* ARMCI on RMC: non-blocking handles.
 *
 * armci_hdl_t is ARMCI-MPI's two-int structure, too small to hold RMC requests, so the requests of
 * a handle live in a table keyed by the handle's address: every operation issued on a handle adds
 * its RMC request (if it did not complete at once) to the handle's entry; ARMCI_Wait completes them
 * (rmc_wait), ARMCI_Test tests them (rmc_test). Keying by address needs nothing from the handle's
 * contents, so a handle that was never passed to ARMCI_INIT_HANDLE works as well, and any handle
 * aggregates (ARMCI_SET_AGGREGATE_HANDLE only records the flag).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

typedef struct nbent {
    struct nbent *next;
    const armci_hdl_t *key;
    int n, cap;
    rmc_request_h *reqs;
    int *procs;
} nbent_t;

#define NB_BUCKETS 256
static nbent_t *buckets[NB_BUCKETS];
static nbent_t *free_ents;
static size_t live_ents; /* handles with requests in the table */

static inline unsigned hash(const armci_hdl_t *h)
{
    uint64_t x = (uint64_t)(uintptr_t)h;
    x = (x >> 3) * 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 56);
}

static nbent_t **find_slot(const armci_hdl_t *h)
{
    nbent_t **pp = &buckets[hash(h)];
    while (*pp && (*pp)->key != h)
        pp = &(*pp)->next;
    return pp;
}

void rmca_nb_add(armci_hdl_t *h, rmc_request_h req, int proc)
{
    RMCA_SERIAL();
    nbent_t **pp = find_slot(h);
    nbent_t *e = *pp;
    if (!e) {
        e = free_ents;
        if (e)
            free_ents = e->next;
        else if (!(e = calloc(1, sizeof(*e))))
            goto nomem;
        e->key = h;
        e->n = 0;
        e->next = NULL;
        *pp = e;
        live_ents++;
    }
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 4;
        rmc_request_h *r = realloc(e->reqs, (size_t)cap * sizeof(*r));
        if (r)
            e->reqs = r;
        int *p = r ? realloc(e->procs, (size_t)cap * sizeof(*p)) : NULL;
        if (!r || !p)
            goto nomem;
        e->procs = p;
        e->cap = cap;
    }
    e->reqs[e->n] = req;
    e->procs[e->n] = proc;
    e->n++;
    return;
nomem:
    /* cannot track it: complete it now (correct, only not overlapped) */
    RMCA_CHECK(rmc_wait(&req), "ARMCI non-blocking operation");
}

static void drop(nbent_t **pp)
{
    nbent_t *e = *pp;
    *pp = e->next;
    e->next = free_ents;
    free_ents = e;
    live_ents--;
}

int rmca_nb_wait(armci_hdl_t *h)
{
    RMCA_SERIAL();
    nbent_t **pp = find_slot(h);
    nbent_t *e = *pp;
    if (!e)
        return 0;
    for (int i = 0; i < e->n; i++)
        RMCA_CHECK(rmc_wait(&e->reqs[i]), "ARMCI_Wait");
    e->n = 0;
    drop(pp);
    return 0;
}

int rmca_nb_test(armci_hdl_t *h)
{
    RMCA_SERIAL();
    nbent_t **pp = find_slot(h);
    nbent_t *e = *pp;
    if (!e)
        return 0;
    int o = 0;
    for (int i = 0; i < e->n; i++) {
        int done = 0;
        RMCA_CHECK(rmc_test(&e->reqs[i], &done), "ARMCI_Test");
        if (!done) {
            e->reqs[o] = e->reqs[i];
            e->procs[o] = e->procs[i];
            o++;
        }
    }
    e->n = o;
    if (o)
        return 1;
    drop(pp);
    return 0;
}

void rmca_nb_wait_proc(int proc)
{
    RMCA_SERIAL();
    if (!live_ents)
        return;
    for (int b = 0; b < NB_BUCKETS; b++) {
        nbent_t **pp = &buckets[b];
        while (*pp) {
            nbent_t *e = *pp;
            int o = 0;
            for (int i = 0; i < e->n; i++) {
                if (proc < 0 || e->procs[i] == proc) {
                    RMCA_CHECK(rmc_wait(&e->reqs[i]), "ARMCI_WaitProc / ARMCI_WaitAll / fence");
                } else {
                    e->reqs[o] = e->reqs[i];
                    e->procs[o] = e->procs[i];
                    o++;
                }
            }
            e->n = o;
            if (o == 0)
                drop(pp);
            else
                pp = &e->next;
        }
    }
}

void rmca_nb_clear(void)
{
    RMCA_SERIAL();
    for (int b = 0; b < NB_BUCKETS; b++)
        while (buckets[b])
            drop(&buckets[b]);
    while (free_ents) {
        nbent_t *e = free_ents;
        free_ents = e->next;
        free(e->reqs);
        free(e->procs);
        free(e);
    }
    live_ents = 0;
}
