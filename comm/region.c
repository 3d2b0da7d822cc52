/* Collective regions: a shared-memory window for node-local peers + an RMA window for everyone.
 *
 * An allocation goes through phases, each collective over the region's members and ending in an
 * agreement on its outcome; a failure anywhere unwinds what the earlier phases took (region_undo),
 * on every member. Waits are attentive (comm/sync.c): a member keeps serving active messages while
 * others are still on their way. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "core.h"

/* What an allocation has taken so far (region_undo releases it). */
typedef struct alloc {
    struct rmc_region *r;
    int *lidx;     /* [nranks] rank in r->node_comm of each node-local member, else -1 */
    int shm, win;  /* windows created */
    int locked;    /* lock_all held on r->hot.win */
    int live;      /* in the translation cache and the live list */
    int announced; /* layers told (region_created) */
    char *base;    /* this rank's part (after the header), NULL for size 0 */
    size_t pad;    /* bytes between the shared segment and its 64-byte aligned header */
    int reserve;   /* rmc_region_reserve: RMC's own sparse shared memory (shm.c) */
} alloc_t;

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

static struct rmc_region *region_new(void)
{
    int n = rmci_info_.nranks;
    struct rmc_region *r = rmci_calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->comm = r->node_comm = MPI_COMM_NULL;
    r->shm_win = r->hot.win = MPI_WIN_NULL;
    r->sizes = rmci_calloc((size_t)n, sizeof(size_t));
    r->bases = rmci_calloc((size_t)n, sizeof(uintptr_t));
    r->lptr = rmci_calloc((size_t)n, sizeof(char *));
    r->hdr = rmci_calloc((size_t)n, sizeof(char *));
    r->cs = rmci_calloc((size_t)n, 1);
    r->pair = rmci_calloc((size_t)n, sizeof(rmci_pair_t *));
    return r;
}

/* Freed region structs wait here (their members freed) before malloc may reuse them: a handle kept
 * after rmc_region_free is then not the handle of the next region (its address) for the next
 * RMCI_QUARANTINE frees, so using it gives RMC_ERR_HANDLE instead of acting on another region. */
#define RMCI_QUARANTINE 256
static struct rmc_region *dead[RMCI_QUARANTINE];
static unsigned dead_next;

static void quarantine(struct rmc_region *r)
{
    memset(r, 0, sizeof(*r));
    free(dead[dead_next]);
    dead[dead_next] = r;
    dead_next = (dead_next + 1) % RMCI_QUARANTINE;
}

/* 1 when h is a freed region's struct still in quarantine (a stale handle). */
static int quarantined(const void *h)
{
    for (unsigned i = 0; i < RMCI_QUARANTINE; i++)
        if (dead[i] && dead[i] == h)
            return 1;
    return 0;
}

void rmci_region_quarantine_end(void)
{
    for (unsigned i = 0; i < RMCI_QUARANTINE; i++) {
        free(dead[i]);
        dead[i] = NULL;
    }
    dead_next = 0;
}

/* Releases the bookkeeping of a region whose windows are gone (or were never created). */
static void region_release(struct rmc_region *r)
{
    if (!r)
        return;
    if (r->node_comm != rmci.node_comm)
        rmci_comm_free(&r->node_comm);
    if (r->comm != rmci_info_.comm)
        rmci_comm_free(&r->comm);
    if (r->pair)
        for (int i = 0; i < rmci_info_.nranks; i++)
            free(r->pair[i]);
    free(r->pair);
    free(r->sizes);
    free(r->bases);
    free(r->lptr);
    free(r->hdr);
    free(r->cs);
    free(r->hot.mrank);
    if (r->maps)
        for (int i = 0; i < rmci_info_.nranks; i++)
            if (r->maps[i] && !(r->own && r->maps[i] == r->own->map))
                munmap(r->maps[i], r->maplen[i]);
    if (r->own)
        rmci_shm_destroy(r->own);
    free(r->own);
    free(r->maps);
    free(r->maplen);
    quarantine(r);
}

static rmc_status_t win_free(MPI_Win *w)
{
    if (*w == MPI_WIN_NULL)
        return RMC_OK;
    rmc_status_t st = RMCI_MPI_ST(MPI_Win_free, (w));
    *w = MPI_WIN_NULL;
    rmci_res_count(RMCI_RES_WIN, -1);
    return st;
}

/* Unwinds a failed allocation (every member runs it after the same agreement). */
static void region_undo(alloc_t *a)
{
    struct rmc_region *r = a->r;
    if (r && a->announced)
        rmci_layers_region_freed(r);
    if (r && a->live) {
        region_unlink(r);
        rmci_xlate_remove(&rmci_xlate_, r);
    }
    if (r && a->locked)
        RMCI_MPI_ST(MPI_Win_unlock_all, (r->hot.win));
    if (r && a->win)
        (void)win_free(&r->hot.win); /* recorded (rmc_last_error); the allocation fails anyway */
    if (r && a->shm)
        (void)win_free(&r->shm_win);
    region_release(r);
    free(a->lidx);
}

/* Is every process of `comm` an RMC rank? Local (no communication, no allocation), so every
 * member, and only the members, see the same answer; a process outside RMC is never asked to take
 * part in a collective. */
static rmc_status_t comm_is_subset(MPI_Comm comm)
{
    MPI_Group cg = MPI_GROUP_NULL, wg = MPI_GROUP_NULL, diff = MPI_GROUP_NULL;
    int extra = 0;
    rmc_status_t st = RMCI_MPI_ST(MPI_Comm_group, (comm, &cg));
    if (st == RMC_OK && (st = RMCI_MPI_ST(MPI_Comm_group, (rmci_info_.comm, &wg))) == RMC_OK &&
        (st = RMCI_MPI_ST(MPI_Group_difference, (cg, wg, &diff))) == RMC_OK)
        st = RMCI_MPI_ST(MPI_Group_size, (diff, &extra));
    /* MPI_Group_free counts are for groups we keep; these three are freed at once */
    MPI_Group *g[3] = {&cg, &wg, &diff};
    for (int i = 0; i < 3; i++)
        if (*g[i] != MPI_GROUP_NULL && *g[i] != MPI_GROUP_EMPTY)
            rmci_keep(&st, RMCI_MPI_ST(MPI_Group_free, (g[i])));
    if (st == RMC_OK && extra > 0)
        st = rmci_fail(RMC_ERR_ARG, "rmc_region_alloc_comm",
                       "%d process(es) of the communicator are not RMC ranks", extra);
    return st;
}

/* r->comm (an owned duplicate of comm) and r->hot.mrank (the window rank of every RMC rank, -1 for
 * non-members). Collective over comm; the outcome is agreed. */
static rmc_status_t sub_members(alloc_t *a, MPI_Comm comm, int *me)
{
    struct rmc_region *r = a->r;
    int n = rmci_info_.nranks, csize = 0;
    rmc_status_t st = rmci_comm_dup(comm, &r->comm, "rmc_region_alloc_comm");
    r->hot.mrank = rmci_malloc((size_t)n * sizeof(int));
    if (st == RMC_OK && !r->hot.mrank)
        st = rmci_fail(RMC_ERR_NOMEM, "rmc_region_alloc_comm", "member table");
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Comm_rank, (r->comm, me));
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Comm_size, (r->comm, &csize));
    st = rmci_agree(comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (st != RMC_OK)
        return st;
    /* every member's RMC rank (a->lidx is scratch here: csize <= n) */
    MPI_Request rq;
    st = RMCI_MPI_ST(MPI_Iallgather,
                     (&rmci_info_.rank, 1, MPI_INT, a->lidx, 1, MPI_INT, r->comm, &rq));
    if (st == RMC_OK)
        st = rmci_wait(&rq, "rmc_region_alloc_comm");
    for (int i = 0; i < n; i++)
        r->hot.mrank[i] = -1;
    for (int i = 0; st == RMC_OK && i < csize; i++)
        r->hot.mrank[a->lidx[i]] = i;
    return rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
}

/* r->node_comm (the members of this, possibly emulated, node) and a->lidx. Collective over r->comm;
 * the outcome is agreed. */
static rmc_status_t node_members(alloc_t *a, int me)
{
    struct rmc_region *r = a->r;
    int n = rmci_info_.nranks, nl = 0;
    rmc_status_t st = rmci_attentive_barrier(r->comm, "rmc_region_alloc_comm");
    if (st == RMC_OK) {
        st = RMCI_MPI_ST(MPI_Comm_split, (r->comm, rmci.node_id, me, &r->node_comm));
        if (st == RMC_OK)
            rmci_res_count(RMCI_RES_COMM, 1);
        else
            r->node_comm = MPI_COMM_NULL;
    }
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Comm_size, (r->node_comm, &nl));
    st = rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (st != RMC_OK)
        return st;
    int *ranks = rmci_malloc((size_t)nl * sizeof(int));
    st = ranks ? RMC_OK : rmci_fail(RMC_ERR_NOMEM, "rmc_region_alloc_comm", "node member table");
    st = rmci_agree(r->node_comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    MPI_Request rq;
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Iallgather,
                         (&rmci_info_.rank, 1, MPI_INT, ranks, 1, MPI_INT, r->node_comm, &rq));
    if (st == RMC_OK)
        st = rmci_wait(&rq, "rmc_region_alloc_comm");
    for (int i = 0; i < n; i++)
        a->lidx[i] = -1;
    for (int i = 0; st == RMC_OK && i < nl; i++)
        a->lidx[ranks[i]] = i;
    free(ranks);
    return rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
}

/* Membership of a region on `comm`: r->comm (rmci.comm itself, or an owned duplicate), r->hot.mrank
 * (NULL for rmci.comm), r->node_comm and a->lidx. Collective over comm; the outcome is agreed. */
static rmc_status_t region_members(alloc_t *a, MPI_Comm comm)
{
    struct rmc_region *r = a->r;
    if (comm == rmci_info_.comm) {
        r->comm = rmci_info_.comm;
        r->node_comm = rmci.node_comm;
        memcpy(a->lidx, rmci.local_index, (size_t)rmci_info_.nranks * sizeof(int));
        return RMC_OK;
    }
    int me = -1;
    rmc_status_t st = sub_members(a, comm, &me);
    return st == RMC_OK ? node_members(a, me) : st;
}

/* Node-local shared memory: a zeroed header, then the user part. Round up so every rank's part
 * stays 64-byte aligned. MPI only guarantees a small alignment of the segment (a node of one rank
 * gets plain heap memory, 16-byte aligned), so 64 bytes of slack let the header start at the next
 * 64-byte boundary; the padding is published so node-local peers find the header. */
static rmc_status_t region_own_shared(alloc_t *a, size_t size);

static rmc_status_t region_shared(alloc_t *a, size_t size)
{
    struct rmc_region *r = a->r;
    if (a->reserve)
        return region_own_shared(a, size);
    size_t bytes = 64 + RMCI_REGION_HDR + ((size + 63) & ~(size_t)63);
    MPI_Info info = MPI_INFO_NULL;
    char *seg = NULL;
    rmc_status_t st = rmci_attentive_barrier(r->comm, "rmc_region_alloc");
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Info_create, (&info));
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Info_set, (info, "alloc_shared_noncontig", "true"));
    /* the window is collective over the node's members: they agree first (a failure elsewhere
     * must not leave them waiting in it) */
    st = rmci_agree(r->node_comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (st == RMC_OK) {
        st = RMCI_MPI_ST(MPI_Win_allocate_shared,
                         ((MPI_Aint)bytes, 1, info, r->node_comm, &seg, &r->shm_win));
        if (st == RMC_OK) {
            a->shm = 1;
            rmci_res_count(RMCI_RES_WIN, 1);
        } else {
            char why[256];
            snprintf(why, sizeof why, "%s", rmc_last_error());
            st = rmci_fail(RMC_ERR_NOMEM, "rmc_region_alloc", "%zu bytes of shared memory (%s)",
                           bytes, why);
        }
    }
    if (info != MPI_INFO_NULL)
        rmci_keep(&st, RMCI_MPI_ST(MPI_Info_free, (&info)));
    st = rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (st != RMC_OK)
        return st;
    memset(seg, 0, bytes);
    a->pad = (64 - ((uintptr_t)seg & 63)) & 63;
    seg += a->pad;
    r->hdr[rmci_info_.rank] = seg;
    a->base = size ? seg + RMCI_REGION_HDR : NULL;
    return RMC_OK;
}

/* A reserved region's memory: this rank's own sparse file (the header, then the part), page
 * aligned, zero until written; nothing is committed. */
static rmc_status_t region_own_shared(alloc_t *a, size_t size)
{
    struct rmc_region *r = a->r;
    int n = rmci_info_.nranks;
    r->own = rmci_calloc(1, sizeof(*r->own));
    r->maps = rmci_calloc((size_t)n, sizeof(char *));
    r->maplen = rmci_calloc((size_t)n, sizeof(size_t));
    rmc_status_t st = RMC_OK;
    if (!r->own || !r->maps || !r->maplen)
        st = rmci_fail(RMC_ERR_NOMEM, "rmc_region_reserve", "region tables");
    else
        r->own->fd = -1;
    if (st == RMC_OK)
        st = rmci_shm_create(RMCI_REGION_HDR + size, r->own, "rmc_region_reserve");
    /* the first page (RMC's header and the part's first bytes) is committed now: RMC itself
     * touches it (the accumulate lock, reads of the part's first byte before a flush on
     * oversubscribed processors), so it must not be what exhausts the node's memory later */
    if (st == RMC_OK)
        st = rmci_shm_commit(r->own, 0, RMCI_REGION_HDR + (size ? 1 : 0), "rmc_region_reserve");
    st = rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (st != RMC_OK)
        return st;
    char *seg = r->own->map;
    r->maps[rmci_info_.rank] = seg;
    r->maplen[rmci_info_.rank] = r->own->len;
    a->pad = 0;
    r->hdr[rmci_info_.rank] = seg;
    a->base = size ? seg + RMCI_REGION_HDR : NULL;
    return RMC_OK;
}

/* The local mapping of node-local member i's part: from the shared window, or (reserved region)
 * by mapping its file. */
static rmc_status_t map_member(alloc_t *a, int i, int li, const unsigned long long *info)
{
    struct rmc_region *r = a->r;
    char *p = NULL;
    rmc_status_t st;
    if (a->reserve) {
        size_t len = RMCI_REGION_HDR + (size_t)info[2];
        st = rmci_shm_attach(info[4], len, &p, "rmc_region_reserve");
        if (p) {
            r->maps[i] = p;
            r->maplen[i] = len;
        }
    } else {
        MPI_Aint qs;
        int du;
        st = RMCI_MPI_ST(MPI_Win_shared_query, (r->shm_win, li, &qs, &du, &p));
        if (p)
            p += info[3];
    }
    r->hdr[i] = p;
    r->lptr[i] = (p && r->sizes[i]) ? p + RMCI_REGION_HDR : NULL;
    return st;
}

/* Every member's RMC rank, base, size and header padding; local mappings of node-local members. */
static rmc_status_t region_publish(alloc_t *a, size_t size)
{
    struct rmc_region *r = a->r;
    int csize = 0;
    enum { NI = 5 }; /* rank, base, size, header padding, file key (reserved regions) */
    unsigned long long mine[NI] = {(unsigned long long)rmci_info_.rank,
                                   (unsigned long long)(uintptr_t)a->base, (unsigned long long)size,
                                   (unsigned long long)a->pad, r->own ? r->own->key : 0};
    rmc_status_t st = RMCI_MPI_ST(MPI_Comm_size, (r->comm, &csize));
    unsigned long long *all = rmci_malloc((size_t)(csize > 0 ? csize : 1) * NI * sizeof(*all));
    if (st == RMC_OK && !all)
        st = rmci_fail(RMC_ERR_NOMEM, "rmc_region_alloc", "table of %d members", csize);
    st = rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    MPI_Request rq;
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Iallgather, (mine, NI, MPI_UNSIGNED_LONG_LONG, all, NI,
                                          MPI_UNSIGNED_LONG_LONG, r->comm, &rq));
    if (st == RMC_OK)
        st = rmci_wait(&rq, "rmc_region_alloc");
    for (int m = 0; st == RMC_OK && m < csize; m++) {
        const unsigned long long *info = all + NI * m;
        int i = (int)info[0];
        r->bases[i] = (uintptr_t)info[1];
        r->sizes[i] = (size_t)info[2];
        int li = a->lidx[i];
        if (li < 0)
            continue;
        if (i == rmci_info_.rank) {
            r->lptr[i] = a->base;
            continue;
        }
        st = map_member(a, i, li, info);
    }
    free(all);
    st = rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (r->own) /* every node-local member has mapped it (or the allocation fails): no name left */
        rmci_shm_unlink(r->own);
    return st;
}

/* RMA window over the same memory, for members that are not node-local (and MPI atomics), locked
 * once for the region's life. */
static rmc_status_t region_window(alloc_t *a, size_t size)
{
    struct rmc_region *r = a->r;
    MPI_Info info = MPI_INFO_NULL;
    rmc_status_t st = RMCI_MPI_ST(MPI_Info_create, (&info));
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Info_set, (info, "same_disp_unit", "true"));
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Info_set, (info, "accumulate_ordering", "none"));
    st = rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (st == RMC_OK)
        st = rmci_attentive_barrier(r->comm, "rmc_region_alloc");
    if (st == RMC_OK) {
        st = RMCI_MPI_ST(MPI_Win_create, (a->base, (MPI_Aint)size, 1, info, r->comm, &r->hot.win));
        if (st == RMC_OK) {
            a->win = 1;
            rmci_res_count(RMCI_RES_WIN, 1);
        }
    }
    if (info != MPI_INFO_NULL)
        rmci_keep(&st, RMCI_MPI_ST(MPI_Info_free, (&info)));
    if (st == RMC_OK)
        st = RMCI_MPI_ST(MPI_Win_set_errhandler, (r->hot.win, MPI_ERRORS_RETURN));
    if (st == RMC_OK &&
        (st = RMCI_MPI_ST(MPI_Win_lock_all, (MPI_MODE_NOCHECK, r->hot.win))) == RMC_OK)
        a->locked = 1;
    return rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
}

/* Makes the region live: an id agreed by the members (the largest next id among them, so ids stay
 * unique on every rank and equal on all members although members of sub-communicator regions
 * create different numbers of regions), translation cache, live list, layers. Live before the
 * last agreement: when any member returns, every member's layers know the region. */
static rmc_status_t region_go_live(alloc_t *a)
{
    struct rmc_region *r = a->r;
    long long id = -(long long)rmci.next_region_id;
    rmc_status_t st = rmci_agree_vals(r->comm, RMC_OK, &id, 1,
                                      a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
    if (st != RMC_OK)
        return st;
    r->id = (uint32_t)-id;
    st = rmci_xlate_insert(&rmci_xlate_, r, rmci_info_.nranks, r->bases, r->sizes,
                           (void *const *)r->lptr);
    if (st == RMC_OK) {
        rmci.next_region_id = r->id + 1;
        region_link(r);
        a->live = 1;
        st = rmci_layers_region_created(r);
        a->announced = st == RMC_OK;
    } else {
        st = rmci_fail(st, "rmc_region_alloc", "translation cache is out of memory");
    }
    return rmci_agree(r->comm, st, a->reserve ? "rmc_region_reserve" : "rmc_region_alloc");
}

/* rmc_region_alloc on `comm` (rmci.comm or a sub-communicator whose processes are RMC ranks). */
static rmc_status_t region_alloc(MPI_Comm comm, size_t size, void **bases, rmc_region_h *region,
                                 int reserve, const char *fn)
{
    alloc_t a = {.reserve = reserve};
    rmc_status_t st = RMC_OK;
    if (!region)
        st = rmci_fail(RMC_ERR_ARG, fn, "NULL region handle pointer");
    else
        *region = NULL;
    if (st == RMC_OK && !reserve && (size > (size_t)PTRDIFF_MAX / 2 || size > phys_bytes()))
        st = rmci_fail(RMC_ERR_NOMEM, fn, "%zu bytes is more than this machine's memory", size);
    if (st == RMC_OK && reserve && size > RMCI_RESERVE_MAX)
        st = rmci_fail(RMC_ERR_TOO_BIG, fn, "%zu bytes of address space (at most %zu)", size,
                       (size_t)RMCI_RESERVE_MAX);
    a.r = region_new();
    a.lidx = rmci_malloc((size_t)rmci_info_.nranks * sizeof(int));
    if (st == RMC_OK && (!a.r || !a.r->sizes || !a.r->bases || !a.r->lptr || !a.r->hdr ||
                         !a.r->cs || !a.r->pair || !a.lidx))
        st = rmci_fail(RMC_ERR_NOMEM, fn, "region tables");
    st = rmci_agree_pausing(comm, st, fn); /* (nothing shared has changed yet) */
    if (st == RMC_OK)
        st = region_members(&a, comm);
    if (st == RMC_OK)
        st = region_shared(&a, size);
    if (st == RMC_OK)
        st = region_publish(&a, size);
    if (st == RMC_OK)
        st = region_window(&a, size);
    if (st == RMC_OK)
        st = region_go_live(&a);
    if (st != RMC_OK) {
        region_undo(&a);
        return st;
    }
    free(a.lidx);
    if (bases)
        for (int i = 0; i < rmci_info_.nranks; i++)
            bases[i] = (void *)a.r->bases[i];
    *region = a.r;
    return RMC_OK;
}

rmc_status_t rmc_region_alloc(size_t size, void **bases, rmc_region_h *region)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    return region_alloc(rmci_info_.comm, size, bases, region, 0, __func__);
}

rmc_status_t rmc_region_alloc_comm(MPI_Comm comm, size_t size, void **bases, rmc_region_h *region)
{
    RMCI_SERIAL();
    const char *fn = __func__;
    if (region)
        *region = NULL;
    RMCI_CHECK_INIT(fn);
    if (comm == MPI_COMM_NULL)
        return rmci_fail(RMC_ERR_ARG, fn, "comm is MPI_COMM_NULL");
    /* the same group as RMC's communicator: an ordinary region (identity ranks) */
    int cmp = MPI_UNEQUAL;
    RMCI_MPI(MPI_Comm_compare, (comm, rmci_info_.comm, &cmp));
    if (cmp == MPI_IDENT || cmp == MPI_CONGRUENT)
        return region_alloc(rmci_info_.comm, size, bases, region, 0, fn);
    /* a communicator with processes outside RMC: refused by every member without a collective
     * (the outsiders cannot join one: they get RMC_ERR_NOT_INIT, or are not RMC ranks) */
    rmc_status_t st = comm_is_subset(comm);
    if (st != RMC_OK)
        return st;
    return region_alloc(comm, size, bases, region, 0, fn);
}

rmc_status_t rmc_region_reserve(size_t size, void **bases, rmc_region_h *region)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    return region_alloc(rmci_info_.comm, size, bases, region, 1, __func__);
}

/* Is `h` a live region? Walks the list and moves a hit to the front, so repeated queries of the
 * same region are O(1); a freed handle is never dereferenced. A handler (which may run on the
 * progress thread without RMC's lock) only reads the list. */
static int region_live(rmc_region_h h)
{
    for (struct rmc_region *r = rmci.regions; r; r = r->next)
        if (r == h) {
            if (r != rmci.regions && !rmci_in_handler_) {
                region_unlink(r);
                region_link(r);
            }
            return 1;
        }
    return 0;
}

/* RMC_OK when h is a live region, else RMC_ERR_HANDLE recorded for fn. */
static rmc_status_t region_check(rmc_region_h h, const char *fn)
{
    if (!h || !region_live(h))
        return rmci_fail(RMC_ERR_HANDLE, fn, "region %p is not live", (void *)h);
    return RMC_OK;
}

/* 1 when every live region of this rank was created on RMC's communicator: a rank given a bad
 * handle by rmc_region_free then knows the members of the region meant (all ranks) and can tell
 * them. */
static int regions_all_world(void)
{
    for (struct rmc_region *r = rmci.regions; r; r = r->next)
        if (r->comm != rmci_info_.comm)
            return 0;
    return 1;
}

/* Frees live region r: collective over its members, who agreed to (rmc_region_free) or free their
 * leftover regions in the same order (rmc_finalize's sweep). */
static rmc_status_t region_free_agreed(struct rmc_region *r, const char *fn)
{
    /* atomics the targets execute (thread AMO mode) are answered before the targets forget the
     * region (in the barrier below) */
    rmc_status_t st = rmci_quiet_region(r);
    rmci_dirty_forget(r);
    rmci_req_region_freed(r); /* its nb requests that would flush the window later */
    /* completes this rank's operations on the region; then every member's are complete before
     * the layers forget it and its memory goes away */
    rmci_keep(&st, RMCI_MPI_ST(MPI_Win_unlock_all, (r->hot.win)));
    /* (pausing: a member may wait for a thread of this rank before it joins; the region is
     * still whole, and using it in another thread meanwhile is the caller's error) */
    rmci_keep(&st, rmci_barrier_pausing(r->comm, fn));
    rmci_layers_region_freed(r);
    rmci_keep(&st, win_free(&r->hot.win));
    rmci_keep(&st, win_free(&r->shm_win));
    rmci_xlate_remove(&rmci_xlate_, r);
    region_unlink(r);
    region_release(r);
    return st;
}

rmc_status_t rmc_region_free(rmc_region_h r)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (r && quarantined(r)) /* every member freed it already: nobody else is in this call */
        return rmci_fail(RMC_ERR_HANDLE, __func__, "region %p was freed already", (void *)r);
    rmc_status_t hst = region_check(r, __func__);
    /* Agree before anything changes: a member with a bad handle (NULL, or never a region), or
     * members naming different regions, fail everywhere instead of leaving the others in the
     * barrier or MPI_Win_free. The members of a bad handle's region are unknown; when this rank's
     * live regions were all created on RMC's communicator, they are every rank. */
    if (hst != RMC_OK && !regions_all_world())
        return hst;
    long long ids[2] = {0, 0};
    if (hst == RMC_OK) {
        ids[0] = (long long)r->id;
        ids[1] = -(long long)r->id;
    }
    /* (pausing: a member may wait for a thread of this rank before it joins; nothing has
     * changed yet) */
    hst = rmci_agree_vals_pausing(hst == RMC_OK ? r->comm : rmci_info_.comm, hst, ids, 2, __func__);
    if (hst == RMC_OK && ids[0] != -ids[1])
        hst = rmci_fail(RMC_ERR_ARG, __func__,
                        "the members passed different regions (ids %lld to %lld; this rank's %u)",
                        ids[0], -ids[1], r->id);
    if (hst != RMC_OK)
        return hst;
    return region_free_agreed(r, __func__);
}

rmc_status_t rmci_region_free_final(rmc_region_h r)
{
    return region_free_agreed(r, "rmc_finalize");
}

rmc_status_t rmc_region_base(rmc_region_h r, int rank, void **base, size_t *size)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT_QUERY(__func__);
    if (rank < 0 || rank >= rmci_info_.nranks)
        return rmci_bad_rank(__func__, rank);
    rmc_status_t hst = region_check(r, __func__);
    if (hst != RMC_OK)
        return hst;
    if (base)
        *base = (void *)r->bases[rank];
    if (size)
        *size = r->sizes[rank];
    return RMC_OK;
}

rmc_status_t rmc_region_local(rmc_region_h r, int rank, void **ptr)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT_QUERY(__func__);
    if (!ptr)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL result pointer");
    *ptr = NULL;
    if (rank < 0 || rank >= rmci_info_.nranks)
        return rmci_bad_rank(__func__, rank);
    rmc_status_t hst = region_check(r, __func__);
    if (hst != RMC_OK)
        return hst;
    *ptr = r->lptr[rank];
    return RMC_OK;
}

rmc_status_t rmc_region_commit(rmc_region_h r, void *ptr, size_t len)
{
    RMCI_SERIAL();
    const char *fn = __func__;
    RMCI_CHECK_INIT(fn);
    rmc_status_t hst = region_check(r, fn);
    if (hst != RMC_OK)
        return hst;
    if (len == 0)
        return RMC_OK;
    uintptr_t b = r->bases[rmci_info_.rank], p = (uintptr_t)ptr;
    size_t sz = r->sizes[rmci_info_.rank];
    if (!ptr || p < b || p - b >= sz)
        return rmci_fail(RMC_ERR_NOT_REGION, fn, "%p is not in this rank's part of the region",
                         ptr);
    if (len > sz - (p - b))
        return rmci_fail(RMC_ERR_BOUNDS, fn, "[%p, +%zu) crosses the end of this rank's part", ptr,
                         len);
    if (!r->own)
        return RMC_OK; /* not reserved: committed when allocated */
    return rmci_shm_commit(r->own, RMCI_REGION_HDR + (p - b), len, fn);
}

size_t rmc_region_count(void)
{
    RMCI_SERIAL();
    return rmci_info_.initialized ? rmci.nregions : 0;
}

/* ------------------------------------------------------------------ accessors --- */

uint32_t rmci_region_id(const struct rmc_region *r)
{
    return r->id;
}

char *rmci_region_local(const struct rmc_region *r, int rank)
{
    return r->lptr[rank];
}

size_t rmci_region_size(const struct rmc_region *r, int rank)
{
    return r->sizes[rank];
}

char *rmci_region_hdr(const struct rmc_region *r, int rank)
{
    return r->hdr[rank];
}

int rmci_local_overlaps_region(uintptr_t lo, size_t len)
{
    uintptr_t hi = lo + len;
    for (struct rmc_region *r = rmci.regions; r; r = r->next) {
        uintptr_t b = r->bases[rmci_info_.rank];
        size_t s = r->sizes[rmci_info_.rank];
        if (s && lo < b + s && b < hi)
            return 1;
    }
    return 0;
}
