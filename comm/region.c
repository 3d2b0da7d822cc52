/* Collective regions: shared-memory window for node-local peers + RMA window for everyone. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rmci.h"

static void region_release(struct rmc_region *r)
{
    free(r->sizes);
    free(r->bases);
    free(r->lptr);
    free(r->hdr);
    free(r->cs);
    free(r);
}

/* Physical memory of this machine. A part larger than that cannot be backed by shared memory,
 * and MPICH does not fail such an allocation quickly (it maps and probes it page by page). */
static size_t phys_bytes(void)
{
    static size_t cached;
    if (!cached) {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        cached = (pages > 0 && psz > 0) ? (size_t)pages * (size_t)psz : SIZE_MAX;
    }
    return cached;
}

/* Makes r live: a new id, at the front of the live list. */
static void region_link(struct rmc_region *r)
{
    r->magic = RMCI_REGION_MAGIC;
    r->id = rmci.next_region_id++;
    r->prev = NULL;
    r->next = rmci.regions;
    if (rmci.regions)
        rmci.regions->prev = r;
    rmci.regions = r;
    rmci.nregions++;
}

static void region_unlink(struct rmc_region *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        rmci.regions = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->next = r->prev = NULL;
    rmci.nregions--;
    r->magic = 0;
}

/* Agrees on a status across ranks: the worst (most negative) wins. */
static rmc_status_t agree(rmc_status_t st)
{
    int v = (int)st;
    if (MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, rmci.comm) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    return (rmc_status_t)v;
}

rmc_status_t rmc_region_alloc(size_t size, void **bases, rmc_region_h *region)
{
    RMCI_CHECK_INIT();
    int n = rmci.nranks;
    rmc_status_t st = RMC_OK;
    if (!region)
        st = RMC_ERR_ARG;
    else
        *region = NULL;
    if (size > (size_t)PTRDIFF_MAX / 2 || size > phys_bytes())
        st = RMC_ERR_NOMEM;
    struct rmc_region *r = calloc(1, sizeof(*r));
    if (r) {
        r->sizes = malloc((size_t)n * sizeof(size_t));
        r->bases = malloc((size_t)n * sizeof(uintptr_t));
        r->lptr = calloc((size_t)n, sizeof(char *));
        r->hdr = calloc((size_t)n, sizeof(char *));
        r->cs = calloc((size_t)n, 1);
    }
    if (!r || !r->sizes || !r->bases || !r->lptr || !r->hdr || !r->cs)
        st = RMC_ERR_NOMEM;
    st = agree(st);
    if (st != RMC_OK) {
        if (r)
            region_release(r);
        return st;
    }

    /* Node-local shared memory: a zeroed header, then the user part. Round up so every rank's part
     * stays 64-byte aligned. MPI only guarantees a small alignment of the segment (a node of one
     * rank gets plain heap memory, 16-byte aligned), so 64 bytes of slack let the header start at
     * the next 64-byte boundary; the padding is published so node-local peers find the header. */
    size_t alloc = 64 + RMCI_REGION_HDR + ((size + 63) & ~(size_t)63);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    char *base = NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)alloc, 1, info, rmci.node_comm, &base, &r->shm_win);
    MPI_Info_free(&info);
    st = agree(rc == MPI_SUCCESS ? RMC_OK : RMC_ERR_NOMEM);
    if (st != RMC_OK) {
        if (rc == MPI_SUCCESS)
            MPI_Win_free(&r->shm_win);
        region_release(r);
        return st;
    }
    memset(base, 0, alloc);
    size_t pad = (64 - ((uintptr_t)base & 63)) & 63;
    base += pad;
    r->hdr[rmci.rank] = base;
    base = size ? base + RMCI_REGION_HDR : NULL;

    /* Every rank's base, size and header padding. */
    unsigned long long mine[3] = {(unsigned long long)(uintptr_t)base, (unsigned long long)size,
                                  (unsigned long long)pad};
    unsigned long long *all = malloc((size_t)n * 3 * sizeof(unsigned long long));
    rc = all ? MPI_Allgather(mine, 3, MPI_UNSIGNED_LONG_LONG, all, 3, MPI_UNSIGNED_LONG_LONG,
                             rmci.comm)
             : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(all);
        MPI_Win_free(&r->shm_win);
        region_release(r);
        return RMC_ERR_MPI;
    }
    for (int i = 0; i < n; i++) {
        r->bases[i] = (uintptr_t)all[3 * i];
        r->sizes[i] = (size_t)all[3 * i + 1];
    }

    /* Local mappings of node-local peers. */
    for (int i = 0; i < n; i++) {
        int li = rmci.local_index[i];
        if (li < 0)
            continue;
        if (i == rmci.rank) {
            r->lptr[i] = base;
            continue;
        }
        MPI_Aint qs;
        int du;
        char *p = NULL;
        MPI_Win_shared_query(r->shm_win, li, &qs, &du, &p);
        if (p)
            p += all[3 * i + 2];
        r->hdr[i] = p;
        r->lptr[i] = (p && r->sizes[i]) ? p + RMCI_REGION_HDR : NULL;
    }
    free(all);

    /* RMA window over the same memory, for peers that are not node-local (and for MPI atomics). */
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    rc = MPI_Win_create(base, (MPI_Aint)size, 1, info, rmci.comm, &r->win);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) {
        MPI_Win_set_errhandler(r->win, MPI_ERRORS_RETURN);
        rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, r->win);
    }
    st = agree(rc == MPI_SUCCESS ? RMC_OK : RMC_ERR_MPI);
    rmc_status_t ins = RMC_ERR_INTERNAL;
    if (st == RMC_OK) {
        ins = rmci_xlate_insert(&rmci.xlate, r, n, r->bases, r->sizes);
        if (ins == RMC_OK) {
            /* live before the last agreement: when any rank returns, every rank's sub-layers
             * (the progress thread's region table) know the region */
            region_link(r);
            if (rmci_region_hook)
                rmci_region_hook();
        }
        st = agree(ins);
    }
    if (st != RMC_OK) {
        if (ins == RMC_OK)
            region_unlink(r);
        rmci_xlate_remove(&rmci.xlate, r);
        if (rc == MPI_SUCCESS) {
            MPI_Win_unlock_all(r->win);
            MPI_Win_free(&r->win); /* drops it from sub-layer tables (window attributes) */
        }
        MPI_Win_free(&r->shm_win);
        region_release(r);
        return st;
    }
    if (bases)
        for (int i = 0; i < n; i++)
            bases[i] = (void *)r->bases[i];
    *region = r;
    return RMC_OK;
}

/* Is `h` a live region? Walks the list and moves a hit to the front, so repeated queries of the
 * same region are O(1); a freed handle is never dereferenced. */
static int region_live(rmc_region_h h)
{
    for (struct rmc_region *r = rmci.regions; r; r = r->next)
        if (r == h) {
            if (r != rmci.regions) {
                r->prev->next = r->next;
                if (r->next)
                    r->next->prev = r->prev;
                r->prev = NULL;
                r->next = rmci.regions;
                rmci.regions->prev = r;
                rmci.regions = r;
            }
            return 1;
        }
    return 0;
}

rmc_status_t rmc_region_free(rmc_region_h r)
{
    RMCI_CHECK_INIT();
    if (!r || !region_live(r))
        return RMC_ERR_HANDLE;
    if (rmci_region_free_hook)
        rmci_region_free_hook(r);
    rmci_dirty_forget(r);
    rmc_status_t st = RMC_OK;
    if (MPI_Win_unlock_all(r->win) != MPI_SUCCESS)
        st = RMC_ERR_MPI;
    /* everyone's operations on this region are complete before memory goes away */
    MPI_Barrier(rmci.comm);
    MPI_Win_free(&r->win);
    MPI_Win_free(&r->shm_win);
    rmci_xlate_remove(&rmci.xlate, r);
    region_unlink(r);
    if (r->ext_free)
        r->ext_free(r);
    r->magic = 0;
    region_release(r);
    return st;
}

rmc_status_t rmc_region_base(rmc_region_h r, int rank, void **base, size_t *size)
{
    RMCI_CHECK_INIT();
    RMCI_CHECK_RANK(rank);
    if (!r || !region_live(r))
        return RMC_ERR_HANDLE;
    if (base)
        *base = (void *)r->bases[rank];
    if (size)
        *size = r->sizes[rank];
    return RMC_OK;
}

size_t rmc_region_count(void)
{
    return rmci.initialized ? rmci.nregions : 0;
}
