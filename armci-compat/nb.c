/* ARMCI on RMC: non-blocking handles.
 *
 * armci_hdl_t is ARMCI-MPI's two-int structure, too small to hold RMC requests, so the requests of
 * a handle live in a table entry: every operation issued on a handle adds its RMC request (if it
 * did not complete at once) to the handle's entry; ARMCI_Wait completes them (rmc_wait), ARMCI_Test
 * tests them (rmc_test). The handle's ints name its entry: `target` the entry's index, `aggregate`
 * the entry's generation (shifted left by one, bit 0 ARMCI_SET_AGGREGATE_HANDLE's flag). The first
 * operation on a handle that names no live entry (ARMCI_INIT_HANDLE's -1, a completed entry, or a
 * handle never initialised) creates one and writes its index and generation into the handle, so a
 * copy of the handle, or the handle moved in memory, finds the entry. Completing an entry frees it
 * and advances its generation: a stale copy then names no live entry and is complete (it never
 * names the entry's next user). Any handle aggregates (the flag is only recorded).
 */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

typedef struct nbent {
    unsigned gen; /* advanced when the entry is freed (RMCA_NB_GEN_MASK bits kept) */
    int live;     /* in use by a handle */
    int next_free;
    int n, cap;
    rmc_request_h *reqs;
    int *procs;
} nbent_t;

#define RMCA_NB_GEN_MASK 0x3fffffffu /* the generation fits aggregate's bits 1..30 */

static nbent_t *ents;
static int nents, ents_cap;
static int free_head = -1;
static size_t live_ents; /* entries in use */

static inline unsigned hdl_gen(const armci_hdl_t *h)
{
    return ((unsigned)h->aggregate >> 1) & RMCA_NB_GEN_MASK;
}

/* The live entry the handle names, or NULL. */
static nbent_t *find(const armci_hdl_t *h)
{
    int i = h->target;
    if (i < 0 || i >= nents || !ents[i].live || ents[i].gen != hdl_gen(h))
        return NULL;
    return &ents[i];
}

/* A new entry, named by the handle; NULL when out of memory. */
static nbent_t *create(armci_hdl_t *h)
{
    int i = free_head;
    if (i >= 0) {
        free_head = ents[i].next_free;
    } else {
        if (nents == ents_cap) {
            int cap = ents_cap ? 2 * ents_cap : 64;
            nbent_t *e = realloc(ents, (size_t)cap * sizeof(*e));
            if (!e)
                return NULL;
            ents = e;
            ents_cap = cap;
        }
        i = nents++;
        memset(&ents[i], 0, sizeof(ents[i]));
        ents[i].gen = 1; /* generation 0 is never live: a zeroed handle names no entry */
    }
    nbent_t *e = &ents[i];
    e->live = 1;
    e->n = 0;
    live_ents++;
    h->target = i;
    h->aggregate = (int)((e->gen << 1) | ((unsigned)h->aggregate & 1u));
    return e;
}

void rmca_nb_add(armci_hdl_t *h, rmc_request_h req, int proc)
{
    RMCA_SERIAL();
    nbent_t *e = find(h);
    if (!e && !(e = create(h)))
        goto nomem;
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 4;
        rmc_request_h *r = realloc(e->reqs, (size_t)cap * sizeof(*r));
        if (r)
            e->reqs = r;
        int *p = r ? realloc(e->procs, (size_t)cap * sizeof(*p)) : NULL;
        if (p)
            e->procs = p;
        if (!r || !p)
            goto nomem;
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

static void drop(nbent_t *e)
{
    e->n = 0;
    e->live = 0;
    e->gen = (e->gen + 1) & RMCA_NB_GEN_MASK;
    if (e->gen == 0)
        e->gen = 1;
    e->next_free = free_head;
    free_head = (int)(e - ents);
    live_ents--;
}

int rmca_nb_wait(armci_hdl_t *h)
{
    RMCA_SERIAL();
    nbent_t *e = find(h);
    if (!e)
        return 0;
    for (int i = 0; i < e->n; i++)
        RMCA_CHECK(rmc_wait(&e->reqs[i]), "ARMCI_Wait");
    drop(e);
    return 0;
}

int rmca_nb_test(armci_hdl_t *h)
{
    RMCA_SERIAL();
    nbent_t *e = find(h);
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
    drop(e);
    return 0;
}

void rmca_nb_wait_proc(int proc)
{
    RMCA_SERIAL();
    if (!live_ents)
        return;
    for (int k = 0; k < nents; k++) {
        nbent_t *e = &ents[k];
        if (!e->live)
            continue;
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
            drop(e);
    }
}

void rmca_nb_clear(void)
{
    RMCA_SERIAL();
    for (int k = 0; k < nents; k++) {
        free(ents[k].reqs);
        free(ents[k].procs);
    }
    free(ents);
    ents = NULL;
    nents = ents_cap = 0;
    free_head = -1;
    live_ents = 0;
}
