/* ga-compat: process groups, synchronization, fences, broadcasts and reductions (GA_*gop),
 * mutexes and the MPI communicators behind groups (ga-mpi.h). Collectives wait through
 * rmc_wait_mpi, so a rank waiting in one keeps serving the active messages (thread-mode atomics,
 * remote-region lookups) others send it. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ga_impl.h"

/* ------------------------------------------------------------------------ groups --- */

/* handle -> slot: world (-1) is slot 0, handle h >= 0 is slot h + 1 */
static int slot_of(int p)
{
    return p == GAI_WORLD || p == GAI_MIRROR ? 0 : p + 1;
}

gai_group_t *gai_group(int p, const char *fn)
{
    gai_up(fn);
    int s = slot_of(p);
    if (s < 0 || s >= GAI_MAX_GROUPS || !gai.groups[s].live)
        gai_error(fn, "invalid process group handle %d", p);
    return &gai.groups[s];
}

MPI_Comm gai_group_comm(int p, const char *fn)
{
    gai_group_t *g = gai_group_member(p, fn); /* (its MPI_COMM_NULL would mean every process) */
    return g->size != gai.np ? g->comm : MPI_COMM_NULL;
}

gai_group_t *gai_group_member(int p, const char *fn)
{
    gai_group_t *g = gai_group(p, fn);
    if (g->me < 0)
        gai_error(fn, "process %d is not in group %d", gai.me, p);
    return g;
}

int gai_group_rank(int p, int i, const char *fn)
{
    gai_group_t *g = gai_group(p, fn);
    if (i < 0 || i >= g->size)
        gai_error(fn, "process %d outside group %d of %d processes", i, p, g->size);
    return g->ranks[i];
}

static void wait_req(MPI_Request *r, const char *fn)
{
    gai_check(rmc_wait_mpi(r), fn, "waiting for the collective");
}

/* Before a blocking communicator constructor (MPI has no non-blocking MPI_Comm_create / split):
 * every member of parent arrives first, serving the others' active messages meanwhile, so no
 * member waits in the constructor for a rank that waits for its service. */
static void arrive(MPI_Comm parent, const char *fn)
{
    MPI_Request r;
    MPI_Ibarrier(parent, &r);
    wait_req(&r, fn);
}

/* A slot a new group may take here: unused, or a group this process is not in (a non-member
 * keeps the handle, as in GA, but never destroys it: GA_Pgroup_destroy is the members'). */
static int slot_free(int s)
{
    return !gai.groups[s].live || gai.groups[s].me < 0;
}

/* A new group from a communicator this rank belongs to (or MPI_COMM_NULL: not a member, but
 * every rank calling gets the same handle, as in GA). Collective over the parent. */
static int group_from_comm(MPI_Comm c, MPI_Comm parent, const char *fn)
{
    /* agree on a slot free on every rank of the parent: the largest of each one's smallest free,
     * then the next free from there (the same on every rank unless their slots differ) */
    int s = 1;
    while (s < GAI_MAX_GROUPS && !slot_free(s))
        s++;
    int all = s;
    for (;;) {
        MPI_Request r;
        int mine = all;
        MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MAX, parent, &r);
        wait_req(&r, fn);
        int next = all;
        while (next < GAI_MAX_GROUPS && !slot_free(next))
            next++;
        int moved = next != all, any = 0; /* until no rank has to move on */
        MPI_Iallreduce(&moved, &any, 1, MPI_INT, MPI_LOR, parent, &r);
        wait_req(&r, fn);
        all = next;
        if (!any)
            break;
    }
    if (all >= GAI_MAX_GROUPS)
        gai_error(fn, "too many process groups (%d)", GAI_MAX_GROUPS);
    gai_group_t *g = &gai.groups[all];
    /* a free slot is unused (zeroed) or a non-member's (no communicator; its member list goes) */
    free(g->ranks);
    memset(g, 0, sizeof *g);
    g->live = 1;
    g->comm = c;
    g->me = -1;
    if (c != MPI_COMM_NULL) {
        MPI_Comm_size(c, &g->size);
        MPI_Comm_rank(c, &g->me);
        g->ranks = malloc(sizeof(int) * (size_t)g->size);
        if (!g->ranks)
            gai_error(fn, "out of memory");
        MPI_Request q;
        MPI_Iallgather(&gai.me, 1, MPI_INT, g->ranks, 1, MPI_INT, c, &q);
        wait_req(&q, fn);
    }
    return all - 1;
}

/* Collective over the default group. A group of the count processes list[] (ids in the default
 * group; as in GA, the group's ids follow their order there, not list's); non-members get the
 * handle too, with its size and members (GA_Pgroup_nnodes, GA_Pgroup_absolute_id), but may not
 * use it for collectives. */
int GA_Pgroup_create(int *list, int count)
{
    const char *fn = "GA_Pgroup_create";
    gai_group_t *d = gai_group(gai.default_group, fn);
    if (!list || count < 1 || count > d->size)
        gai_error(fn, "list %p, count %d (1 .. %d)", (void *)list, count, d->size);
    for (int i = 0; i < count; i++) {
        if (list[i] < 0 || list[i] >= d->size)
            gai_error(fn, "list[%d] = %d outside the default group's [0, %d)", i, list[i],
                      d->size);
        for (int j = 0; j < i; j++)
            if (list[j] == list[i])
                gai_error(fn, "list[%d] and list[%d] are both %d", j, i, list[i]);
    }
    /* GA sorts the list: group ids follow the processes' order in the default group */
    int *sorted = malloc(sizeof(int) * (size_t)count);
    if (!sorted)
        gai_error(fn, "out of memory");
    memcpy(sorted, list, sizeof(int) * (size_t)count);
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            int t = sorted[j];
            sorted[j] = sorted[j - 1], sorted[j - 1] = t;
        }
    MPI_Group pg, ng;
    MPI_Comm_group(d->comm, &pg);
    MPI_Group_incl(pg, count, sorted, &ng);
    MPI_Comm c;
    arrive(d->comm, fn);
    if (MPI_Comm_create(d->comm, ng, &c) != MPI_SUCCESS)
        gai_error(fn, "MPI_Comm_create failed");
    MPI_Group_free(&pg);
    MPI_Group_free(&ng);
    int h = group_from_comm(c, d->comm, fn);
    gai_group_t *g = &gai.groups[h + 1];
    if (g->me < 0) { /* a non-member knows the members too (every caller passed the list) */
        g->size = count;
        g->ranks = malloc(sizeof(int) * (size_t)count);
        if (!g->ranks)
            gai_error(fn, "out of memory");
        for (int i = 0; i < count; i++)
            g->ranks[i] = d->ranks[sorted[i]];
    }
    free(sorted);
    return h;
}

int NGA_Pgroup_create(int *list, int count)
{
    return GA_Pgroup_create(list, count);
}

/* Collective over grp: groups of ceil(size / num_group) consecutive processes, as in GA (the
 * last one smaller, and fewer than num_group groups when that many do not fill: 4 processes in 3
 * groups are {0, 1}, {2, 3}; more groups than processes: one process each); returns the
 * caller's. num_group 0: grp itself (GA's behaviour). */
int GA_Pgroup_split(int grp_id, int num_group)
{
    const char *fn = "GA_Pgroup_split";
    gai_group_t *g = gai_group(grp_id, fn);
    if (num_group < 0)
        gai_error(fn, "num_group %d (>= 0)", num_group);
    if (num_group == 0)
        return grp_id;
    g = gai_group_member(grp_id, fn);
    int per = (g->size + num_group - 1) / num_group, color = g->me / per;
    MPI_Comm c;
    arrive(g->comm, fn);
    if (MPI_Comm_split(g->comm, color, g->me, &c) != MPI_SUCCESS)
        gai_error(fn, "MPI_Comm_split failed");
    return group_from_comm(c, g->comm, fn);
}

int NGA_Pgroup_split(int grp_id, int num_group)
{
    return GA_Pgroup_split(grp_id, num_group);
}

/* Collective over grp: the processes with the same color form a group (returned). */
int GA_Pgroup_split_irreg(int grp_id, int color)
{
    const char *fn = "GA_Pgroup_split_irreg";
    gai_group_t *g = gai_group_member(grp_id, fn);
    if (color < 0)
        gai_error(fn, "color %d (>= 0)", color);
    MPI_Comm c;
    arrive(g->comm, fn);
    if (MPI_Comm_split(g->comm, color, g->me, &c) != MPI_SUCCESS)
        gai_error(fn, "MPI_Comm_split failed");
    return group_from_comm(c, g->comm, fn);
}

int NGA_Pgroup_split_irreg(int grp_id, int color)
{
    return GA_Pgroup_split_irreg(grp_id, color);
}

int GA_Pgroup_duplicate(int grp)
{
    const char *fn = "GA_Pgroup_duplicate";
    gai_group_t *g = gai_group_member(grp, fn);
    MPI_Comm c;
    MPI_Request r;
    MPI_Comm_idup(g->comm, &c, &r);
    wait_req(&r, fn);
    return group_from_comm(c, g->comm, fn);
}

int NGA_Pgroup_duplicate(int grp)
{
    return GA_Pgroup_duplicate(grp);
}

/* A group of this process alone (local). */
int GA_Pgroup_self(void)
{
    const char *fn = "GA_Pgroup_self";
    gai_up(fn);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_SELF, &c);
    return group_from_comm(c, MPI_COMM_SELF, fn);
}

int NGA_Pgroup_self(void)
{
    return GA_Pgroup_self();
}

/* Collective over the group's members. Returns 1 (GA's TRUE). */
int GA_Pgroup_destroy(int grp)
{
    const char *fn = "GA_Pgroup_destroy";
    if (grp == GAI_WORLD || grp == GAI_MIRROR)
        gai_error(fn, "the %s group cannot be destroyed", grp == GAI_WORLD ? "world" : "mirror");
    gai_group_t *g = gai_group(grp, fn);
    for (int i = 0; i < gai.narrays; i++)
        if (gai.arrays[i] && gai.arrays[i]->live && gai.arrays[i]->pgroup == grp) {
            if (gai.arrays[i]->getmem)
                gai_error(fn,
                          "group %d still has GA_Getmem memory: GA_Freemem it (and destroy "
                          "the arrays assembled on it) first",
                          grp);
            gai_error(fn, "group %d still has array '%s'", grp, gai.arrays[i]->name);
        }
    if (gai.default_group == grp)
        gai.default_group = GAI_WORLD;
    if (g->comm != MPI_COMM_NULL)
        MPI_Comm_free(&g->comm);
    free(g->ranks);
    memset(g, 0, sizeof *g);
    return 1;
}

int NGA_Pgroup_destroy(int grp)
{
    return GA_Pgroup_destroy(grp);
}

int GA_Pgroup_get_default(void)
{
    gai_up("GA_Pgroup_get_default");
    return gai.default_group;
}

int NGA_Pgroup_get_default(void)
{
    return GA_Pgroup_get_default();
}

void GA_Pgroup_set_default(int p_handle)
{
    gai_group_member(p_handle, "GA_Pgroup_set_default");
    gai.default_group = p_handle;
}

void NGA_Pgroup_set_default(int p_handle)
{
    GA_Pgroup_set_default(p_handle);
}

int GA_Pgroup_get_world(void)
{
    gai_up("GA_Pgroup_get_world");
    return GAI_WORLD;
}

int NGA_Pgroup_get_world(void)
{
    return GA_Pgroup_get_world();
}

/* Mirrored arrays share one copy per node in GA; ga-compat keeps one copy distributed over every
 * process, so the mirror group has the world's processes. Its own handle: an array created on it
 * is mirrored (GA_Is_mirrored, NGA_Merge_distr_patch), with the world as its group. */
int GA_Pgroup_get_mirror(void)
{
    gai_up("GA_Pgroup_get_mirror");
    return GAI_MIRROR;
}

int NGA_Pgroup_get_mirror(void)
{
    return GA_Pgroup_get_mirror();
}

int GA_Pgroup_nnodes(int grp_id)
{
    return gai_group(grp_id, "GA_Pgroup_nnodes")->size;
}

int NGA_Pgroup_nnodes(int grp_id)
{
    return GA_Pgroup_nnodes(grp_id);
}

int GA_Pgroup_nodeid(int grp_id)
{
    return gai_group(grp_id, "GA_Pgroup_nodeid")->me;
}

int NGA_Pgroup_nodeid(int grp_id)
{
    return GA_Pgroup_nodeid(grp_id);
}

/* The world id of process pid of the group. */
int GA_Pgroup_absolute_id(int pgroup, int pid)
{
    return gai_group_rank(pgroup, pid, "GA_Pgroup_absolute_id");
}

int NGA_Pgroup_absolute_id(int pgroup, int pid)
{
    return GA_Pgroup_absolute_id(pgroup, pid);
}

MPI_Comm GA_MPI_Comm(void)
{
    return gai_group(GAI_WORLD, "GA_MPI_Comm")->comm;
}

MPI_Comm GA_MPI_Comm_pgroup(int pgroup)
{
    return gai_group(pgroup, "GA_MPI_Comm_pgroup")->comm;
}

MPI_Comm GA_MPI_Comm_pgroup_default(void)
{
    return gai_group(gai.default_group, "GA_MPI_Comm_pgroup_default")->comm;
}

/* ------------------------------------------------------------------------- syncs --- */

void gai_sync_group(int p, const char *fn)
{
    gai_group_t *g = gai_group_member(p, fn);
    gai_nb_wait_all(fn);
    if (g->size == gai.np) { /* rmc_barrier fences every target first */
        gai_check(rmc_barrier(), fn, "rmc_barrier");
        return;
    }
    gai_check(rmc_fence_all(), fn, "rmc_fence_all");
    MPI_Request r;
    MPI_Ibarrier(g->comm, &r);
    wait_req(&r, fn);
}

/* Collective over the default group: every operation any member issued before is complete and
 * visible (a fence of all targets, then a barrier). */
void GA_Sync(void)
{
    gai_up("GA_Sync");
    gai_sync_group(gai.default_group, "GA_Sync");
}

void NGA_Sync(void)
{
    GA_Sync();
}

void GA_Pgroup_sync(int grp_id)
{
    gai_sync_group(grp_id, "GA_Pgroup_sync");
}

void NGA_Pgroup_sync(int grp_id)
{
    GA_Pgroup_sync(grp_id);
}

/* GA_Mask_sync(first, last): GA's hint to skip the first or last barrier of a sync pair; one
 * barrier with the fence is always correct. */
void GA_Mask_sync(int first, int last)
{
    (void)first;
    (void)last;
    GA_Sync();
}

void NGA_Mask_sync(int first, int last)
{
    GA_Mask_sync(first, last);
}

/* GA_Init_fence / GA_Fence: the puts and accumulates this process issued since GA_Init_fence
 * are complete at their targets when GA_Fence returns. As in GA, each GA_Fence ends one
 * GA_Init_fence, and a GA_Fence without one is an error. */
void GA_Init_fence(void)
{
    gai_up("GA_Init_fence");
    gai.fence_set++;
}

void GA_Fence(void)
{
    gai_up("GA_Fence");
    if (gai.fence_set < 1)
        gai_error("GA_Fence", "fence not initialized (call GA_Init_fence before the operations "
                              "GA_Fence is to complete)");
    gai.fence_set--;
    gai_nb_wait_all("GA_Fence");
    gai_check(rmc_fence_all(), "GA_Fence", "rmc_fence_all");
}

void NGA_Init_fence(void)
{
    GA_Init_fence();
}

void NGA_Fence(void)
{
    GA_Fence();
}

/* -------------------------------------------------------------------- broadcasts --- */

static void brdcst(int grp, void *buf, int lenbuf, int root, const char *fn)
{
    gai_group_t *g = gai_group_member(grp, fn);
    if (lenbuf < 0 || (lenbuf > 0 && !buf))
        gai_error(fn, "buffer %p of %d bytes", buf, lenbuf);
    if (root < 0 || root >= g->size)
        gai_error(fn, "root %d outside the group's [0, %d)", root, g->size);
    MPI_Request r;
    MPI_Ibcast(buf, lenbuf, MPI_BYTE, root, g->comm, &r);
    wait_req(&r, fn);
}

/* Collective over group grp: lenbuf bytes of buf from its process root to every member. */
void GA_Pgroup_brdcst(int grp, void *buf, int lenbuf, int root)
{
    brdcst(grp, buf, lenbuf, root, "GA_Pgroup_brdcst");
}

/* Collective over the default group: lenbuf bytes of buf from process root to every member. */
void GA_Brdcst(void *buf, int lenbuf, int root)
{
    gai_up("GA_Brdcst");
    brdcst(gai.default_group, buf, lenbuf, root, "GA_Brdcst");
}

/* ---------------------------------------------------------------------- reductions --- */

#define ABSOP(name, T, ABS, CMP)                                                                  \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                           \
    {                                                                                             \
        (void)dt;                                                                                 \
        T *a = in, *b = inout;                                                                    \
        for (int i = 0; i < *len; i++) {                                                          \
            T x = ABS(a[i]), y = ABS(b[i]);                                                       \
            b[i] = x CMP y ? x : y;                                                               \
        }                                                                                         \
    }
#define IABS(x) ((x) < 0 ? -(x) : (x))
ABSOP(absmax_i, int, IABS, >)
ABSOP(absmin_i, int, IABS, <)
ABSOP(absmax_l, long, IABS, >)
ABSOP(absmin_l, long, IABS, <)
ABSOP(absmax_ll, long long, IABS, >)
ABSOP(absmin_ll, long long, IABS, <)
ABSOP(absmax_f, float, fabsf, >)
ABSOP(absmin_f, float, fabsf, <)
ABSOP(absmax_d, double, fabs, >)
ABSOP(absmin_d, double, fabs, <)

void gai_gop(int p, int type, void *x, int n, const char *op, const char *fn)
{
    gai_group_t *g = gai_group_member(p, fn);
    if (n < 0 || (n > 0 && !x))
        gai_error(fn, "buffer %p of %d elements", x, n);
    if (!op)
        gai_error(fn, "NULL op");
    if (n == 0)
        return;
    MPI_Datatype dt;
    int cpl = 0;
    MPI_User_function *amax = NULL, *amin = NULL;
    switch (type) {
    case C_INT:
        dt = MPI_INT, amax = absmax_i, amin = absmin_i;
        break;
    case C_LONG:
        dt = MPI_LONG, amax = absmax_l, amin = absmin_l;
        break;
    case C_LONGLONG:
        dt = MPI_LONG_LONG, amax = absmax_ll, amin = absmin_ll;
        break;
    case C_FLOAT:
        dt = MPI_FLOAT, amax = absmax_f, amin = absmin_f;
        break;
    case C_DBL:
        dt = MPI_DOUBLE, amax = absmax_d, amin = absmin_d;
        break;
    case C_SCPL:
        dt = MPI_C_FLOAT_COMPLEX, cpl = 1, amax = absmax_f, amin = absmin_f;
        break;
    case C_DCPL:
        dt = MPI_C_DOUBLE_COMPLEX, cpl = 1, amax = absmax_d, amin = absmin_d;
        break;
    default:
        gai_error(fn, "type %d is not a GA type", type);
    }
    MPI_Op mop = MPI_OP_NULL, own = MPI_OP_NULL;
    int sum = !strcmp(op, "+") || !strcmp(op, "sum"), prod = !strcmp(op, "*") || !strcmp(op, "prod");
    if (cpl && !sum && !prod) {
        /* GA compares complex numbers part by part: the real and imaginary parts reduced apart */
        dt = type == C_SCPL ? MPI_FLOAT : MPI_DOUBLE;
        n *= 2;
    }
    if (sum)
        mop = MPI_SUM;
    else if (prod)
        mop = MPI_PROD; /* complex: the complex product (GA 5.8.2 multiplies part by part) */
    else if (!strcmp(op, "max"))
        mop = MPI_MAX;
    else if (!strcmp(op, "min"))
        mop = MPI_MIN;
    else if (!strcmp(op, "absmax"))
        MPI_Op_create(amax, 1, &own), mop = own;
    else if (!strcmp(op, "absmin"))
        MPI_Op_create(amin, 1, &own), mop = own;
    else if ((type == C_INT || type == C_LONG || type == C_LONGLONG) && !strcmp(op, "or"))
        mop = MPI_BOR; /* bitwise, as in GA ("||" is the logical or) */
    else if ((type == C_INT || type == C_LONG || type == C_LONGLONG) && !strcmp(op, "||"))
        mop = MPI_LOR;
    else if ((type == C_INT || type == C_LONG || type == C_LONGLONG) &&
             (!strcmp(op, "and") || !strcmp(op, "&&")))
        mop = MPI_LAND;
    else
        gai_error(fn, "operation '%s' for %s (+, *, max, min, absmax, absmin)", op,
                  gai_type_name(type));
    if (own != MPI_OP_NULL) /* absolute values also where the op never runs (one process) */
        for (int i = 0; i < n; i++)
            switch (type) {
            case C_INT:
                ((int *)x)[i] = IABS(((int *)x)[i]);
                break;
            case C_LONG:
                ((long *)x)[i] = IABS(((long *)x)[i]);
                break;
            case C_LONGLONG:
                ((long long *)x)[i] = IABS(((long long *)x)[i]);
                break;
            case C_FLOAT:
            case C_SCPL:
                ((float *)x)[i] = fabsf(((float *)x)[i]);
                break;
            default:
                ((double *)x)[i] = fabs(((double *)x)[i]);
            }
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, x, n, dt, mop, g->comm, &r);
    wait_req(&r, fn);
    if (own != MPI_OP_NULL)
        MPI_Op_free(&own);
}

/* Collective over the default group (Pgroup forms: over grp): x[0..n-1] combined element-wise
 * with op ("+", "*", "max", "min", "absmax", "absmin": absolute values; for complex numbers the
 * last four work on the real and imaginary parts apart, as GA's); every member gets the result. */
void GA_Gop(int type, void *x, int n, char *op)
{
    gai_up("GA_Gop");
    gai_gop(gai.default_group, type, x, n, op, "GA_Gop");
}

#define GOPS(sfx, lsfx, T, TYPE)                                                                   \
    void GA_##sfx##gop(T x[], int n, char *op)                                                     \
    {                                                                                              \
        gai_up("GA_" #sfx "gop");                                                                  \
        gai_gop(gai.default_group, TYPE, x, n, op, "GA_" #sfx "gop");                              \
    }                                                                                              \
    void GA_Pgroup_##lsfx##gop(int grp, T x[], int n, char *op)                                    \
    {                                                                                              \
        gai_gop(grp, TYPE, x, n, op, "GA_Pgroup_" #lsfx "gop");                                    \
    }
GOPS(I, i, int, C_INT)
GOPS(L, l, long, C_LONG)
GOPS(Ll, ll, long long, C_LONGLONG)
GOPS(F, f, float, C_FLOAT)
GOPS(D, d, double, C_DBL)
GOPS(C, c, SingleComplex, C_SCPL)
GOPS(Z, z, DoubleComplex, C_DCPL)

#define NGOPS(lsfx, T)                                                                             \
    void NGA_Pgroup_##lsfx##gop(int grp, T x[], int n, char *op)                                   \
    {                                                                                              \
        GA_Pgroup_##lsfx##gop(grp, x, n, op);                                                      \
    }
NGOPS(i, int)
NGOPS(l, long)
NGOPS(ll, long long)
NGOPS(f, float)
NGOPS(d, double)

void NGA_Pgroup_zgop(int grp, DoubleComplex x[], int n, char *op)
{
    GA_Pgroup_zgop(grp, x, n, op);
}

void NGA_Igop(int x[], int n, char *op)
{
    GA_Igop(x, n, op);
}

void NGA_Dgop(double x[], int n, char *op)
{
    GA_Dgop(x, n, op);
}

/* ------------------------------------------------------------------------ mutexes --- */

/* Collective. number mutexes; mutex i lives on process i mod nprocs. Returns 1 (GA's TRUE) on
 * success, 0 for number <= 0 (nothing created), as GA; GA_Error when mutexes exist already. */
int GA_Create_mutexes(int number)
{
    const char *fn = "GA_Create_mutexes";
    gai_up(fn);
    if (number <= 0)
        return 0; /* GA's FALSE: nothing created */
    if (gai.nmutex)
        gai_error(fn, "%d mutexes exist already (GA_Destroy_mutexes first)", gai.nmutex);
    gai.nmutex = number;
    int per = (number + gai.np - 1) / gai.np;
    gai_check(rmc_mutex_create(per, &gai.mutexes), fn, "rmc_mutex_create");
    return 1;
}

/* Collective. Frees the mutexes of GA_Create_mutexes (GA_Error when there are none, as GA).
 * Returns 1. */
int GA_Destroy_mutexes(void)
{
    const char *fn = "GA_Destroy_mutexes";
    gai_up(fn);
    if (!gai.nmutex)
        gai_error(fn, "no mutexes to destroy (GA_Create_mutexes first)");
    if (gai.mutexes)
        gai_check(rmc_mutex_destroy(gai.mutexes), fn, "rmc_mutex_destroy");
    gai.mutexes = NULL;
    gai.nmutex = 0;
    return 1;
}

int NGA_Destroy_mutexes(void)
{
    return GA_Destroy_mutexes();
}

static void mutex_at(int mutex, int *idx, int *rank, const char *fn)
{
    gai_up(fn);
    if (mutex < 0 || mutex >= gai.nmutex)
        gai_error(fn, "mutex %d outside [0, %d) (GA_Create_mutexes)", mutex, gai.nmutex);
    *rank = mutex % gai.np;
    *idx = mutex / gai.np;
}

/* Blocks until this process holds the mutex. */
void GA_Lock(int mutex)
{
    int i, r;
    mutex_at(mutex, &i, &r, "GA_Lock");
    gai_check(rmc_mutex_lock(gai.mutexes, i, r), "GA_Lock", "rmc_mutex_lock");
}

/* Releases the mutex; this process's puts and accumulates before it are complete first. */
void GA_Unlock(int mutex)
{
    int i, r;
    mutex_at(mutex, &i, &r, "GA_Unlock");
    gai_check(rmc_fence_all(), "GA_Unlock", "rmc_fence_all");
    gai_check(rmc_mutex_unlock(gai.mutexes, i, r), "GA_Unlock", "rmc_mutex_unlock");
}

void NGA_Lock(int mutex)
{
    GA_Lock(mutex);
}

void NGA_Unlock(int mutex)
{
    GA_Unlock(mutex);
}
