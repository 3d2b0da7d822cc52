/* Committed derived datatypes of strided patches (nested hvectors), cached: creating and
 * committing them costs several microseconds, as much as moving a small patch. */
#include "config.h"
#include "strided_rt.h"

/* Nested hvectors: level 1 is an hvector of cnt[1] blocks of `nbase` elements of `base` (one type,
 * not a contiguous type inside an hvector: MPICH's datatype engine moves it ~5% faster for small
 * patches), each level above an hvector of the one below; strides `str`. */
static int make_type(const rmci_sdesc_t *d, const size_t *str, MPI_Datatype base, int nbase,
                     MPI_Datatype *out)
{
    MPI_Datatype prev, t;
    int rc = d->levels >= 1 ? RMCI_MPI_RC(MPI_Type_create_hvector,
                                          ((int)d->cnt[1], nbase, (MPI_Aint)str[0], base, &prev))
                            : RMCI_MPI_RC(MPI_Type_contiguous, (nbase, base, &prev));
    if (rc == MPI_SUCCESS)
        rmci_res_count(RMCI_RES_TYPE, 1);
    for (int k = 2; rc == MPI_SUCCESS && k <= d->levels; k++) {
        rc = RMCI_MPI_RC(MPI_Type_create_hvector,
                         ((int)d->cnt[k], 1, (MPI_Aint)str[k - 1], prev, &t));
        rmci_type_free(&prev);
        if (rc == MPI_SUCCESS) {
            rmci_res_count(RMCI_RES_TYPE, 1);
            prev = t;
        }
    }
    if (rc == MPI_SUCCESS) {
        rc = RMCI_MPI_RC(MPI_Type_commit, (&prev));
        if (rc == MPI_SUCCESS)
            *out = prev;
        else
            rmci_type_free(&prev);
    }
    if (rc != MPI_SUCCESS)
        rmci_mpi_fail("MPI_Type_create_hvector/MPI_Type_commit", "strided datatype", rc);
    return rc;
}

/* Cache of committed strided datatypes (creating and committing nested hvectors costs several
 * microseconds, as much as moving a small patch). Keyed by base type, chunk elements, counts and
 * strides; least recently used entry evicted. A type freed while an operation still uses it stays
 * valid for that operation (MPI_Type_free semantics). */
#define TC_SIZE 32
typedef struct tc_ent {
    MPI_Datatype type; /* MPI_DATATYPE_NULL: empty */
    MPI_Datatype base;
    int nbase, levels;
    size_t cnt[RMCI_SL_MAX + 1];
    size_t str[RMCI_SL_MAX];
    unsigned long long used;
} tc_ent_t;
static tc_ent_t tcache[TC_SIZE];
static unsigned long long tc_clock;
static int tc_ready;

void rmci_dt_clear(void)
{
    for (int i = 0; i < TC_SIZE; i++)
        if (tc_ready && tcache[i].type != MPI_DATATYPE_NULL)
            rmci_type_free(&tcache[i].type);
    for (int i = 0; i < TC_SIZE; i++)
        tcache[i].type = MPI_DATATYPE_NULL;
    tc_ready = 1;
    tc_clock = 0;
    rmci_strided_epoch++;
}

static int matches(const tc_ent_t *e, const rmci_sdesc_t *d, const size_t *str, MPI_Datatype base,
                   int nbase)
{
    if (e->type == MPI_DATATYPE_NULL || e->levels != d->levels || e->nbase != nbase ||
        e->base != base)
        return 0;
    for (int k = 1; k <= d->levels; k++)
        if (e->cnt[k] != d->cnt[k] || e->str[k - 1] != str[k - 1])
            return 0;
    return 1;
}

int rmci_dt_cached(const rmci_sdesc_t *d, const size_t *str, MPI_Datatype base, int nbase,
                   MPI_Datatype *out)
{
    static int last; /* the entry of the last hit or creation: a shape repeats (most calls) */
    if (!tc_ready)
        rmci_dt_clear();
    if (matches(&tcache[last], d, str, base, nbase)) {
        tcache[last].used = ++tc_clock;
        *out = tcache[last].type;
        return MPI_SUCCESS;
    }
    int victim = 0;
    for (int i = 0; i < TC_SIZE; i++) {
        tc_ent_t *e = &tcache[i];
        if (e->type == MPI_DATATYPE_NULL) {
            victim = i;
            continue;
        }
        if (e->used < tcache[victim].used && tcache[victim].type != MPI_DATATYPE_NULL)
            victim = i;
        if (matches(e, d, str, base, nbase)) {
            e->used = ++tc_clock;
            *out = e->type;
            last = i;
            return MPI_SUCCESS;
        }
    }
    MPI_Datatype t;
    int rc = make_type(d, str, base, nbase, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    tc_ent_t *e = &tcache[victim];
    if (e->type != MPI_DATATYPE_NULL) {
        rmci_type_free(&e->type);
        rmci_strided_epoch++; /* a plan may hold it */
    }
    e->type = t;
    e->base = base;
    e->nbase = nbase;
    e->levels = d->levels;
    for (int k = 1; k <= d->levels; k++) {
        e->cnt[k] = d->cnt[k];
        e->str[k - 1] = str[k - 1];
    }
    e->used = ++tc_clock;
    *out = t;
    last = victim;
    return MPI_SUCCESS;
}
