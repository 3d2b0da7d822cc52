/* ARMCI on RMC: collective allocations (ARMCI_Malloc / ARMCI_Free, + _group) and local memory.
 *
 * Every allocation is an RMC region on the group's communicator (rmc_region_alloc_comm: an
 * ordinary region when the group is ARMCI's world, a region of the members for a proper subgroup).
 * Either way node-local peers are reached by loads/stores, others by MPI RMA: all of comm's
 * mechanisms.
 */
#include "config.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

static void link_alloc(rmca_alloc_t *a)
{
    a->prev = NULL;
    a->next = rmca.allocs;
    if (rmca.allocs)
        rmca.allocs->prev = a;
    rmca.allocs = a;
}

static void unlink_alloc(rmca_alloc_t *a)
{
    if (a->prev)
        a->prev->next = a->next;
    else
        rmca.allocs = a->next;
    if (a->next)
        a->next->prev = a->prev;
}

static void release(rmca_alloc_t *a)
{
    free(a->abs_bases);
    free(a->abs_sizes);
    free(a);
}

rmca_alloc_t *rmca_alloc_of_local(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    for (rmca_alloc_t *a = rmca.allocs; a; a = a->next) {
        uintptr_t lo = (uintptr_t)a->mine;
        if (a->mine && p >= lo && p < lo + a->size)
            return a;
    }
    return NULL;
}

int ARMCI_Malloc_group(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group)
{
    RMCA_SERIAL();
    RMCA_REQUIRE_INIT("ARMCI_Malloc_group");
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("ARMCI_Malloc_group: the caller is not a member of the group");
    if (!ptr_arr)
        rmca_error("ARMCI_Malloc_group: NULL base pointer array");
    if (bytes < 0)
        rmca_error("ARMCI_Malloc_group: negative size (%ld bytes)", (long)bytes);

    /* Nothing to allocate anywhere: every pointer is NULL and no allocation exists
     * (ARMCI_Free(NULL) on every member is then a no-op). */
    long long mine = bytes, total = 0;
    rmca_allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, group->comm, "ARMCI_Malloc_group");
    if (total == 0) {
        for (int i = 0; i < group->size; i++)
            ptr_arr[i] = NULL;
        return 0;
    }

    int n = rmca.nranks;
    rmca_alloc_t *a = calloc(1, sizeof(*a));
    if (a) {
        a->abs_bases = calloc((size_t)n, sizeof(void *));
        a->abs_sizes = calloc((size_t)n, sizeof(size_t));
    }
    int ok = a && a->abs_bases && a->abs_sizes, all = 0;
    rmca_allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, group->comm, "ARMCI_Malloc_group");
    if (!all)
        rmca_error("ARMCI_Malloc_group: out of memory");
    a->size = (size_t)bytes;
    /* a region of the group's members; comm makes it an ordinary region when the group's
     * communicator spans every RMC rank (ARMCI_Malloc) */
    RMCA_CHECK(rmc_region_alloc_comm(group->comm, (size_t)bytes, a->abs_bases, &a->region),
               "ARMCI_Malloc_group: allocation of %ld bytes failed", (long)bytes);
    a->mine = a->abs_bases[rmca.rank];
    for (int i = 0; i < n; i++)
        RMCA_CHECK(rmc_region_base(a->region, i, NULL, &a->abs_sizes[i]), "ARMCI_Malloc");
    for (int i = 0; i < group->size; i++)
        ptr_arr[i] = a->abs_bases[group->grp_to_abs[i]];
    link_alloc(a);
    return 0;
}

static void destroy(rmca_alloc_t *a, const char *fn)
{
    unlink_alloc(a);
    RMCA_CHECK(rmc_region_free(a->region), "%s", fn);
    release(a);
}

static int holds(const rmca_alloc_t *a, int rank, const void *p)
{
    uintptr_t lo = (uintptr_t)a->abs_bases[rank];
    return lo && (uintptr_t)p >= lo && (uintptr_t)p < lo + a->abs_sizes[rank];
}

int ARMCI_Free_group(void *ptr, ARMCI_Group *group)
{
    RMCA_SERIAL();
    RMCA_REQUIRE_INIT("ARMCI_Free_group");
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("ARMCI_Free_group: the caller is not a member of the group");
    rmca_alloc_t *a = NULL;
    if (ptr) {
        a = rmca_alloc_of_local(ptr);
        if (!a)
            rmca_error("ARMCI_Free: invalid shared pointer %p (in no allocation of the caller)",
                       ptr);
    }
    /* Ranks that gave 0 bytes pass NULL: identify the allocation by the first member that has a
     * base address (as ARMCI-MPI does). */
    unsigned long long p = (unsigned long long)(uintptr_t)ptr;
    unsigned long long *all = malloc((size_t)group->size * sizeof(*all));
    if (!all)
        rmca_error("ARMCI_Free: out of memory");
    rmca_allgather(&p, 1, MPI_UNSIGNED_LONG_LONG, all, group->comm, "ARMCI_Free_group");
    int first = -1;
    for (int i = 0; i < group->size && first < 0; i++)
        if (all[i])
            first = i;
    if (first < 0) {
        free(all);
        return 0; /* a zero-size allocation on every member: nothing exists */
    }
    int owner = group->grp_to_abs[first];
    void *key = (void *)(uintptr_t)all[first];
    free(all);
    if (!a)
        for (a = rmca.allocs; a; a = a->next)
            if (holds(a, owner, key))
                break;
    if (!a || !holds(a, owner, key))
        rmca_error("ARMCI_Free: the members do not free the same allocation");
    /* Every operation on it completes first. */
    rmca_nb_wait_proc(-1);
    destroy(a, "ARMCI_Free");
    return 0;
}

int PARMCI_Malloc(void **base_ptrs, armci_size_t size)
{
    return ARMCI_Malloc_group(base_ptrs, size, &ARMCI_GROUP_WORLD);
}

int PARMCI_Free(void *ptr)
{
    return ARMCI_Free_group(ptr, &ARMCI_GROUP_WORLD);
}

void rmca_free_all(void)
{
    /* In creation order, so members of the same groups free collectively in the same order. */
    rmca_alloc_t *last = rmca.allocs;
    while (last && last->next)
        last = last->next;
    while (last) {
        rmca_alloc_t *prev = last->prev;
        destroy(last, "ARMCI_Finalize");
        last = prev;
    }
}

int PARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes, const char *device)
{
    (void)device;
    return PARMCI_Malloc(ptr_arr, bytes);
}

int PARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                               const char *device)
{
    (void)device;
    return ARMCI_Malloc_group(ptr_arr, bytes, group);
}

int PARMCI_Free_memdev(void *ptr)
{
    return PARMCI_Free(ptr);
}

/* ------------------------------------------------------------------- local memory --- */

void *PARMCI_Malloc_local(armci_size_t size)
{
    if (size < 0)
        rmca_error("ARMCI_Malloc_local: negative size (%ld bytes)", (long)size);
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return NULL;
    memset(p, 0, size ? (size_t)size : 1);
    return p;
}

int PARMCI_Free_local(void *ptr)
{
    free(ptr);
    return 0;
}

/* ------------------------------------------------------------------- local access --- */

/* Direct loads and stores to the caller's own part: RMC needs no epoch for them; the barrier makes
 * the caller's view of its memory current (stores of node-local peers, data of MPI RMA). */
void PARMCI_Access_begin(void *ptr)
{
    RMCA_SERIAL();
    RMCA_REQUIRE_INIT("ARMCI_Access_begin");
    rmca_alloc_t *a = rmca_alloc_of_local(ptr);
    if (!a)
        rmca_error("ARMCI_Access_begin: invalid base pointer %p (not in the caller's part of an "
                   "allocation)",
                   ptr);
    atomic_thread_fence(memory_order_seq_cst);
}

void PARMCI_Access_end(void *ptr)
{
    RMCA_SERIAL();
    RMCA_REQUIRE_INIT("ARMCI_Access_end");
    rmca_alloc_t *a = rmca_alloc_of_local(ptr);
    if (!a)
        rmca_error("ARMCI_Access_end: invalid base pointer %p (not in the caller's part of an "
                   "allocation)",
                   ptr);
    atomic_thread_fence(memory_order_seq_cst);
}

RMCA_ALIAS(Malloc);
RMCA_ALIAS(Free);
RMCA_ALIAS(Malloc_memdev);
RMCA_ALIAS(Malloc_group_memdev);
RMCA_ALIAS(Free_memdev);
RMCA_ALIAS(Malloc_local);
RMCA_ALIAS(Free_local);
RMCA_ALIAS(Access_begin);
RMCA_ALIAS(Access_end);
