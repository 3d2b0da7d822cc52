/* Collective regions: shared-memory window for node-local peers + RMA window for everyone. */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rmci.h"

/* Releases the bookkeeping of a region whose windows are gone (or were never created). */
static void region_release(struct rmc_region *r)
{
    if (r->node_comm != MPI_COMM_NULL && r->node_comm != rmci.node_comm)
        MPI_Comm_free(&r->node_comm);
    if (r->comm != MPI_COMM_NULL && r->comm != rmci.comm)
        MPI_Comm_free(&r->comm);
    free(r->sizes);
    free(r->bases);
    free(r->lptr);
    free(r->hdr);
    free(r->cs);
    free(r->mrank);
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

/* Makes r live at the front of the live list (its id is set already). */
static void region_link(struct rmc_region *r)
{
    r->magic = RMCI_REGION_MAGIC;
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

/* Agrees on a status across the members: the worst (most negative) wins. */
static rmc_status_t agree(MPI_Comm comm, rmc_status_t st)
{
    int v = (int)st;
    if (MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    return (rmc_status_t)v;
}

/* Agrees on a status (worst wins) and on the new region's id: the largest next id of the members,
 * so ids stay unique on every rank and equal on all members (thread-mode atomics name regions by
 * id) although members of sub-communicator regions create different numbers of regions. */
static rmc_status_t agree_id(MPI_Comm comm, rmc_status_t st, uint32_t *id)
{
    long long v[2] = {(long long)st, -(long long)rmci.next_region_id}, out[2];
    if (MPI_Allreduce(v, out, 2, MPI_LONG_LONG, MPI_MIN, comm) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    *id = (uint32_t)(-out[1]);
    return (rmc_status_t)out[0];
}

/* Membership of a region on `comm`: r->comm (rmci.comm itself, or an owned duplicate), r->mrank
 * (NULL for rmci.comm), r->node_comm and lidx[i] = RMC rank i's rank in r->node_comm (-1: not a
 * node-local member). Collective over comm; the status is agreed. */
static rmc_status_t region_members(struct rmc_region *r, MPI_Comm comm, int *lidx)
{
    int n = rmci.nranks;
    rmc_status_t st = RMC_OK;
    if (comm == rmci.comm) {
        r->comm = rmci.comm;
        r->node_comm = rmci.node_comm;
        for (int i = 0; i < n; i++)
            lidx[i] = rmci.local_index[i];
        return RMC_OK;
    }
    int csize = 0;
    MPI_Comm_size(comm, &csize);
    MPI_Group cg = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    int *cr = malloc((size_t)csize * sizeof(int)), *wr = malloc((size_t)csize * sizeof(int));
    r->mrank = malloc((size_t)n * sizeof(int));
    if (!cr || !wr || !r->mrank)
        st = RMC_ERR_NOMEM;
    if (st == RMC_OK &&
        (MPI_Comm_group(comm, &cg) != MPI_SUCCESS || MPI_Comm_group(rmci.comm, &wg) != MPI_SUCCESS))
        st = RMC_ERR_MPI;
    if (st == RMC_OK) {
        for (int i = 0; i < csize; i++)
            cr[i] = i;
        if (MPI_Group_translate_ranks(cg, csize, cr, wg, wr) != MPI_SUCCESS)
            st = RMC_ERR_MPI;
    }
    if (st == RMC_OK) {
        for (int i = 0; i < n; i++)
            r->mrank[i] = -1;
        for (int i = 0; i < csize && st == RMC_OK; i++) {
            if (wr[i] == MPI_UNDEFINED || wr[i] < 0 || wr[i] >= n)
                st = RMC_ERR_ARG; /* a process of comm that is not an RMC rank */
            else
                r->mrank[wr[i]] = i;
        }
    }
    if (cg != MPI_GROUP_NULL)
        MPI_Group_free(&cg);
    if (wg != MPI_GROUP_NULL)
        MPI_Group_free(&wg);
    free(cr);
    st = agree(comm, st);
    if (st == RMC_OK && MPI_Comm_dup(comm, &r->comm) != MPI_SUCCESS)
        r->comm = MPI_COMM_NULL;
    st = agree(comm, st == RMC_OK && r->comm == MPI_COMM_NULL ? RMC_ERR_MPI : st);
    /* node-local members: the members of this (possibly emulated) node */
    int nl = 0;
    if (st == RMC_OK &&
        MPI_Comm_split(r->comm, rmci.node_id, r->mrank[rmci.rank], &r->node_comm) != MPI_SUCCESS)
        r->node_comm = MPI_COMM_NULL;
    st = agree(comm, st == RMC_OK && r->node_comm == MPI_COMM_NULL ? RMC_ERR_MPI : st);
    if (st == RMC_OK) {
        MPI_Comm_size(r->node_comm, &nl);
        if (MPI_Allgather(&rmci.rank, 1, MPI_INT, wr, 1, MPI_INT, r->node_comm) != MPI_SUCCESS)
            st = RMC_ERR_MPI;
        for (int i = 0; i < n; i++)
            lidx[i] = -1;
        for (int i = 0; i < nl && st == RMC_OK; i++)
            lidx[wr[i]] = i;
    }
    free(wr);
    return agree(comm, st);
}

/* rmc_region_alloc on `comm` (rmci.comm or a sub-communicator). */
static rmc_status_t region_alloc(MPI_Comm comm, size_t size, void **bases, rmc_region_h *region)
{
    int n = rmci.nranks;
    rmc_status_t st = RMC_OK;
    if (!region)
        st = RMC_ERR_ARG;
    else
        *region = NULL;
    if (size > (size_t)PTRDIFF_MAX / 2 || size > phys_bytes())
        st = RMC_ERR_NOMEM;
    struct rmc_region *r = calloc(1, sizeof(*r));
    int *lidx = malloc((size_t)n * sizeof(int));
    if (r) {
        r->comm = r->node_comm = MPI_COMM_NULL;
        r->sizes = calloc((size_t)n, sizeof(size_t));
        r->bases = calloc((size_t)n, sizeof(uintptr_t));
        r->lptr = calloc((size_t)n, sizeof(char *));
        r->hdr = calloc((size_t)n, sizeof(char *));
        r->cs = calloc((size_t)n, 1);
    }
    if (!r || !lidx || !r->sizes || !r->bases || !r->lptr || !r->hdr || !r->cs)
        st = RMC_ERR_NOMEM;
    st = agree(comm, st);
    if (st == RMC_OK)
        st = region_members(r, comm, lidx);
    if (st != RMC_OK) {
        if (r)
            region_release(r);
        free(lidx);
        return st;
    }
    int csize = 0;
    MPI_Comm_size(r->comm, &csize);

    /* Node-local shared memory: a zeroed header, then the user part. Round up so every rank's part
     * stays 64-byte aligned. MPI only guarantees a small alignment of the segment (a node of one
     * rank gets plain heap memory, 16-byte aligned), so 64 bytes of slack let the header start at
     * the next 64-byte boundary; the padding is published so node-local peers find the header. */
    size_t alloc = 64 + RMCI_REGION_HDR + ((size + 63) & ~(size_t)63);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    char *base = NULL;
    int rc = MPI_Win_allocate_shared((MPI_Aint)alloc, 1, info, r->node_comm, &base, &r->shm_win);
    MPI_Info_free(&info);
    st = agree(r->comm, rc == MPI_SUCCESS ? RMC_OK : RMC_ERR_NOMEM);
    if (st != RMC_OK) {
        if (rc == MPI_SUCCESS)
            MPI_Win_free(&r->shm_win);
        region_release(r);
        free(lidx);
        return st;
    }
    memset(base, 0, alloc);
    size_t pad = (64 - ((uintptr_t)base & 63)) & 63;
    base += pad;
    r->hdr[rmci.rank] = base;
    base = size ? base + RMCI_REGION_HDR : NULL;

    /* Every member's RMC rank, base, size and header padding. */
    unsigned long long mine[4] = {(unsigned long long)rmci.rank,
                                  (unsigned long long)(uintptr_t)base, (unsigned long long)size,
                                  (unsigned long long)pad};
    unsigned long long *all = malloc((size_t)csize * 4 * sizeof(unsigned long long));
    unsigned long long *padof = calloc((size_t)n, sizeof(unsigned long long));
    rc = all && padof ? MPI_Allgather(mine, 4, MPI_UNSIGNED_LONG_LONG, all, 4,
                                      MPI_UNSIGNED_LONG_LONG, r->comm)
                      : MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        free(all);
        free(padof);
        free(lidx);
        MPI_Win_free(&r->shm_win);
        region_release(r);
        return RMC_ERR_MPI;
    }
    for (int m = 0; m < csize; m++) {
        int i = (int)all[4 * m];
        r->bases[i] = (uintptr_t)all[4 * m + 1];
        r->sizes[i] = (size_t)all[4 * m + 2];
        padof[i] = all[4 * m + 3];
    }
    free(all);

    /* Local mappings of node-local members. */
    for (int i = 0; i < n; i++) {
        int li = lidx[i];
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
            p += padof[i];
        r->hdr[i] = p;
        r->lptr[i] = (p && r->sizes[i]) ? p + RMCI_REGION_HDR : NULL;
    }
    free(padof);
    free(lidx);

    /* RMA window over the same memory, for members that are not node-local (and MPI atomics). */
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    rc = MPI_Win_create(base, (MPI_Aint)size, 1, info, r->comm, &r->win);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) {
        MPI_Win_set_errhandler(r->win, MPI_ERRORS_RETURN);
        rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, r->win);
    }
    uint32_t id = 0;
    st = agree_id(r->comm, rc == MPI_SUCCESS ? RMC_OK : RMC_ERR_MPI, &id);
    rmc_status_t ins = RMC_ERR_INTERNAL;
    if (st == RMC_OK) {
        ins = rmci_xlate_insert(&rmci.xlate, r, n, r->bases, r->sizes);
        if (ins == RMC_OK) {
            /* live before the last agreement: when any member returns, every member's sub-layers
             * (the progress thread's region table) know the region */
            r->id = id;
            rmci.next_region_id = id + 1;
            region_link(r);
            if (rmci_region_hook)
                rmci_region_hook();
        }
        st = agree(r->comm, ins);
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

rmc_status_t rmc_region_alloc(size_t size, void **bases, rmc_region_h *region)
{
    RMCI_CHECK_INIT();
    return region_alloc(rmci.comm, size, bases, region);
}

rmc_status_t rmc_region_alloc_comm(MPI_Comm comm, size_t size, void **bases, rmc_region_h *region)
{
    RMCI_CHECK_INIT();
    if (comm == MPI_COMM_NULL) {
        if (region)
            *region = NULL;
        return RMC_ERR_ARG;
    }
    /* the same group as RMC's communicator: an ordinary region (identity ranks) */
    int cmp = MPI_UNEQUAL;
    if (MPI_Comm_compare(comm, rmci.comm, &cmp) != MPI_SUCCESS)
        return RMC_ERR_MPI;
    if (cmp == MPI_IDENT || cmp == MPI_CONGRUENT)
        return region_alloc(rmci.comm, size, bases, region);
    return region_alloc(comm, size, bases, region);
}

/* Is `h` a live region? Walks the list and moves a hit to the front, so repeated queries of the
 * same region are O(1); a freed handle is never dereferenced. */
static int region_live(rmc_region_h h)
{
    for (struct rmc_region *r = rmci.regions; r; r = r->next)
        if (r == h) {
            if (r != rmci.regions) {
                region_unlink(r);
                region_link(r);
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
    /* every member's operations on this region are complete before memory goes away */
    MPI_Barrier(r->comm);
    MPI_Win_free(&r->win);
    MPI_Win_free(&r->shm_win);
    rmci_xlate_remove(&rmci.xlate, r);
    region_unlink(r);
    if (r->ext_free)
        r->ext_free(r);
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
