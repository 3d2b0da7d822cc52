/* ARMCI message API (message.h) on MPI: ARMCI's world communicator (a duplicate of the one given to
 * ARMCI_Init), the SMP-domain communicator for SCOPE_NODE, and group communicators. Every call is
 * attentive (mpi.c): it keeps serving RMC's active messages while it waits. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

static MPI_Comm world(const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    return ARMCI_GROUP_WORLD.comm;
}

static MPI_Comm scope_comm(int scope, const char *fn)
{
    MPI_Comm w = world(fn);
    switch (scope) {
    case SCOPE_ALL:
    case SCOPE_MASTERS:
        return w; /* as ARMCI-MPI: every process takes part */
    case SCOPE_NODE:
        return rmca.node_comm;
    default:
        rmca_error("%s: invalid scope (%d)", fn, scope);
    }
}

/* Rank in `comm` of absolute rank `root` (comm is the world, the node or a group). */
static int root_in(MPI_Comm comm, int root, const ARMCI_Group *g, const char *fn)
{
    if (root < 0 || root >= rmca.nranks)
        rmca_error("%s: root %d out of range [0, %d)", fn, root, rmca.nranks);
    if (g) {
        if (g->abs_to_grp[root] < 0)
            rmca_error("%s: root %d is not in the group", fn, root);
        return g->abs_to_grp[root];
    }
    if (comm == rmca.node_comm) {
        int d = rmca.dom_of[root];
        if (d != rmca.my_domain)
            rmca_error("%s: root %d is not on the caller's node", fn, root);
        for (int i = rmca.dom_start[d]; i < rmca.dom_start[d + 1]; i++)
            if (rmca.dom_ranks[i] == root)
                return i - rmca.dom_start[d];
    }
    return root;
}

/* ------------------------------------------------------------------------ utility --- */

int armci_msg_me(void)
{
    return rmca.init_count > 0 ? rmca.rank : -1;
}

int armci_msg_nproc(void)
{
    return rmca.init_count > 0 ? rmca.nranks : -1;
}

void armci_msg_abort(int code)
{
    MPI_Abort(rmca.init_count > 0 ? ARMCI_GROUP_WORLD.comm : MPI_COMM_WORLD, code ? code : 1);
}

double armci_timer(void)
{
    return MPI_Wtime();
}

/* ---------------------------------------------------------------------- send/recv --- */

void armci_msg_snd(int tag, void *buffer, int len, int to)
{
    rmca_send(buffer, len, to, tag, world("armci_msg_snd"), "armci_msg_snd");
}

void armci_msg_rcv(int tag, void *buffer, int buflen, int *msglen, int from)
{
    rmca_recv(buffer, buflen, from, tag, world("armci_msg_rcv"), msglen, "armci_msg_rcv");
}

int armci_msg_rcvany(int tag, void *buffer, int buflen, int *msglen)
{
    return rmca_recv(buffer, buflen, MPI_ANY_SOURCE, tag, world("armci_msg_rcvany"), msglen,
                     "armci_msg_rcvany");
}

/* -------------------------------------------------------------------- collectives --- */

void parmci_msg_barrier(void)
{
    rmca_barrier(world("armci_msg_barrier"), "armci_msg_barrier");
}

void parmci_msg_group_barrier(ARMCI_Group *group)
{
    RMCA_REQUIRE_INIT("armci_msg_group_barrier");
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("armci_msg_group_barrier: the caller is not a member of the group");
    rmca_barrier(group->comm, "armci_msg_group_barrier");
}

extern __typeof(parmci_msg_barrier) armci_msg_barrier
    __attribute__((weak, alias("parmci_msg_barrier")));
extern __typeof(parmci_msg_group_barrier) armci_msg_group_barrier
    __attribute__((weak, alias("parmci_msg_group_barrier")));

/* Binary tree over the scope's processes in rank order (node scope: the caller's domain), rooted at
 * the first: index i has parent (i-1)/2 and children 2i+1, 2i+2. Absolute ranks, -1 for none. */
void armci_msg_bintree(int scope, int *Root, int *Up, int *Left, int *Right)
{
    RMCA_REQUIRE_INIT("armci_msg_bintree");
    const int *ranks = NULL; /* NULL: the world, index = rank */
    int n = rmca.nranks, me = rmca.rank;
    if (scope == SCOPE_NODE) {
        ranks = rmca.dom_ranks + rmca.dom_start[rmca.my_domain];
        n = rmca.dom_start[rmca.my_domain + 1] - rmca.dom_start[rmca.my_domain];
        for (me = 0; ranks[me] != rmca.rank; me++)
            ;
    }
    int idx[4] = {0, me == 0 ? -1 : (me - 1) / 2, 2 * me + 1 < n ? 2 * me + 1 : -1,
                  2 * me + 2 < n ? 2 * me + 2 : -1};
    int *out[4] = {Root, Up, Left, Right};
    for (int k = 0; k < 4; k++)
        if (out[k])
            *out[k] = idx[k] < 0 ? -1 : ranks ? ranks[idx[k]] : idx[k];
}

static void bcast(MPI_Comm comm, void *buf, int len, int root, const char *fn)
{
    if (len < 0 || (len > 0 && !buf))
        rmca_error("%s: invalid buffer (%p, %d bytes)", fn, buf, len);
    rmca_bcast(buf, len, MPI_BYTE, root, comm, fn);
}

void armci_msg_bcast_scope(int scope, void *buffer, int len, int root)
{
    MPI_Comm c = scope_comm(scope, "armci_msg_bcast_scope");
    bcast(c, buffer, len, root_in(c, root, NULL, "armci_msg_bcast_scope"), "armci_msg_bcast_scope");
}

void armci_msg_bcast(void *buffer, int len, int root)
{
    armci_msg_bcast_scope(SCOPE_ALL, buffer, len, root);
}

void armci_msg_brdcst(void *buffer, int len, int root)
{
    armci_msg_bcast_scope(SCOPE_ALL, buffer, len, root);
}

/* The communicator of `scope` within `group`: the group's, or (SCOPE_NODE) that of its members in
 * the caller's SMP domain (made with the group, init.c). */
static MPI_Comm group_scope_comm(int scope, ARMCI_Group *group, const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("%s: the caller is not a member of the group", fn);
    switch (scope) {
    case SCOPE_ALL:
    case SCOPE_MASTERS:
        return group->comm;
    case SCOPE_NODE:
        if (group->comm == ARMCI_GROUP_WORLD.comm)
            return rmca.node_comm;
        if (group->noncoll_pgroup_comm == MPI_COMM_NULL)
            rmca_error("%s: SCOPE_NODE on a group libarmci did not make (no SMP-domain "
                       "communicator)",
                       fn);
        return group->noncoll_pgroup_comm;
    default:
        rmca_error("%s: invalid scope (%d)", fn, scope);
    }
}

/* Rank of absolute rank `root` in the group's SCOPE_NODE communicator (group ranks in order). */
static int group_node_root(const ARMCI_Group *g, int root, const char *fn)
{
    int gr = g->abs_to_grp[root];
    if (rmca.dom_of[root] != rmca.my_domain)
        rmca_error("%s: SCOPE_NODE root %d is not in the caller's SMP domain (%d)", fn, root,
                   rmca.my_domain);
    int r = 0;
    for (int j = 0; j < gr; j++)
        r += rmca.dom_of[g->grp_to_abs[j]] == rmca.my_domain;
    return r;
}

/* SCOPE_NODE: among the group's members in the caller's SMP domain (root must be one of them). */
void armci_msg_group_bcast_scope(int scope, void *buf, int len, int root, ARMCI_Group *group)
{
    const char *fn = "armci_msg_group_bcast_scope";
    MPI_Comm c = group_scope_comm(scope, group, fn);
    int r = root_in(group->comm, root, group, fn);
    if (scope == SCOPE_NODE)
        r = group_node_root(group, root, fn);
    bcast(c, buf, len, r, fn);
}

void armci_msg_clus_brdcst(void *buf, int len)
{
    RMCA_REQUIRE_INIT("armci_msg_clus_brdcst");
    bcast(rmca.node_comm, buf, len, 0, "armci_msg_clus_brdcst");
}

void armci_exchange_address(void *ptr_ar[], int n)
{
    MPI_Comm w = world("armci_exchange_address");
    if (!ptr_ar || n < rmca.nranks)
        rmca_error("armci_exchange_address: the array must hold %d addresses", rmca.nranks);
    void *mine = ptr_ar[rmca.rank];
    rmca_allgather(&mine, sizeof(void *), MPI_BYTE, ptr_ar, w, "armci_exchange_address");
}

void armci_exchange_address_grp(void *ptr_arr[], int n, ARMCI_Group *group)
{
    RMCA_REQUIRE_INIT("armci_exchange_address_grp");
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("armci_exchange_address_grp: the caller is not a member of the group");
    if (!ptr_arr || n < group->size)
        rmca_error("armci_exchange_address_grp: the array must hold %d addresses", group->size);
    void *mine = ptr_arr[group->rank];
    rmca_allgather(&mine, sizeof(void *), MPI_BYTE, ptr_arr, group->comm,
                   "armci_exchange_address_grp");
}

/* ------------------------------------------------------------------ reductions --- */

/* The message types, one table: X(ARMCI type, C type, MPI datatype, absolute value, the letter(s)
 * of its armci_msg_*gop functions). */
#define RMCA_MSG_TYPES(X)                                                                          \
    X(ARMCI_INT, int, MPI_INT, abs, i)                                                             \
    X(ARMCI_LONG, long, MPI_LONG, labs, l)                                                         \
    X(ARMCI_LONG_LONG, long long, MPI_LONG_LONG, llabs, ll)                                        \
    X(ARMCI_FLOAT, float, MPI_FLOAT, fabsf, f)                                                     \
    X(ARMCI_DOUBLE, double, MPI_DOUBLE, fabs, d)

static MPI_Datatype msg_type(int type, size_t *size, const char *fn)
{
    switch (type) {
#define TYPE_(id, T, mpi, absf, sfx)                                                               \
    case id:                                                                                       \
        *size = sizeof(T);                                                                         \
        return mpi;
        RMCA_MSG_TYPES(TYPE_)
#undef TYPE_
    default:
        rmca_error("%s: unknown type (%d)", fn, type);
    }
}

enum { OP_PLAIN, OP_ABS, OP_LOGICAL };

/* The operation names ARMCI-MPI accepts, matched exactly: "+", "*", "max", "min", "absmax",
 * "absmin" for every type; bitwise "or" / "bor" / "|" and "band" / "&" for the integer types;
 * logical "land" / "&&" and "lor" / "||" for every type (1 or 0 in the caller's type). */
static MPI_Op msg_op(const char *op, int type, int *kind, const char *fn)
{
    static const struct {
        const char *name;
        int kind, ints_only;
    } names[] = {
        {"+", OP_PLAIN, 0},    {"*", OP_PLAIN, 0},     {"max", OP_PLAIN, 0},  {"min", OP_PLAIN, 0},
        {"absmax", OP_ABS, 0}, {"absmin", OP_ABS, 0},  {"or", OP_PLAIN, 1},   {"bor", OP_PLAIN, 1},
        {"|", OP_PLAIN, 1},    {"band", OP_PLAIN, 1},  {"&", OP_PLAIN, 1},    {"land", OP_LOGICAL, 0},
        {"&&", OP_LOGICAL, 0}, {"lor", OP_LOGICAL, 0}, {"||", OP_LOGICAL, 0},
    };
    /* the MPI operation of each name, in the table's order (MPI handles need not be constants) */
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN,  MPI_MAX,  MPI_MIN,  MPI_BOR, MPI_BOR,
                          MPI_BOR, MPI_BAND, MPI_BAND, MPI_LAND, MPI_LAND, MPI_LOR, MPI_LOR};
    if (!op)
        rmca_error("%s: NULL operation", fn);
    int floating = type == ARMCI_FLOAT || type == ARMCI_DOUBLE;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(op, names[i].name))
            continue;
        if (names[i].ints_only && floating)
            break;
        *kind = names[i].kind;
        return ops[i];
    }
    rmca_error("%s: unknown operation '%s' for type %d (%s)", fn, op, type,
               floating ? "+ * max min absmax absmin land && lor ||"
                   : "+ * max min absmax absmin or bor | band & land && lor ||");
}

/* |x[i]| in place (absmax / absmin reduce the absolute values, as ARMCI). */
static void absolute(void *x, int n, int type)
{
    switch (type) {
#define ABS_(id, T, mpi, absf, sfx)                                                                \
    case id:                                                                                       \
        for (int i = 0; i < n; i++)                                                                \
            ((T *)x)[i] = absf(((T *)x)[i]);                                                       \
        break;
        RMCA_MSG_TYPES(ABS_)
#undef ABS_
    }
}

/* Logical reduction: x[i] becomes 1 or 0 in the caller's type, the reduction of x[i] != 0 as ints
 * (MPI has no logical reduction of floating types, and one process's MPI_LAND returns its input
 * unchanged: -2 "&&" alone must give 1). */
static void logical(MPI_Comm comm, void *x, int n, int type, MPI_Op o, const char *fn)
{
    int *t = malloc((size_t)n * sizeof(int));
    if (!t)
        rmca_error("%s: out of memory (%d elements)", fn, n);
    switch (type) {
#define LOGICAL_IN_(id, T, mpi, absf, sfx)                                                         \
    case id:                                                                                       \
        for (int i = 0; i < n; i++)                                                                \
            t[i] = ((T *)x)[i] != 0;                                                               \
        break;
        RMCA_MSG_TYPES(LOGICAL_IN_)
#undef LOGICAL_IN_
    }
    rmca_allreduce(MPI_IN_PLACE, t, n, MPI_INT, o, comm, fn);
    switch (type) {
#define LOGICAL_OUT_(id, T, mpi, absf, sfx)                                                        \
    case id:                                                                                       \
        for (int i = 0; i < n; i++)                                                                \
            ((T *)x)[i] = (T)t[i];                                                                 \
        break;
        RMCA_MSG_TYPES(LOGICAL_OUT_)
#undef LOGICAL_OUT_
    }
    free(t);
}

static void gop(MPI_Comm comm, void *x, int n, char *op, int type, const char *fn)
{
    size_t sz;
    int kind;
    MPI_Datatype t = msg_type(type, &sz, fn);
    MPI_Op o = msg_op(op, type, &kind, fn);
    if (n < 0 || (n > 0 && !x))
        rmca_error("%s: invalid buffer (%p, %d elements)", fn, x, n);
    if (n == 0)
        return;
    if (kind == OP_ABS)
        absolute(x, n, type);
    if (kind == OP_LOGICAL) {
        logical(comm, x, n, type, o, fn);
        return;
    }
    rmca_allreduce(MPI_IN_PLACE, x, n, t, o, comm, fn);
}

void armci_msg_gop_scope(int scope, void *x, int n, char *op, int type)
{
    gop(scope_comm(scope, "armci_msg_gop_scope"), x, n, op, type, "armci_msg_gop_scope");
}

void armci_msg_reduce(void *x, int n, char *op, int type)
{
    gop(world("armci_msg_reduce"), x, n, op, type, "armci_msg_reduce");
}

void armci_msg_reduce_scope(int scope, void *x, int n, char *op, int type)
{
    gop(scope_comm(scope, "armci_msg_reduce_scope"), x, n, op, type, "armci_msg_reduce_scope");
}

static MPI_Comm node(const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    return rmca.node_comm;
}

static MPI_Comm gcomm(ARMCI_Group *group, const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("%s: the caller is not a member of the group", fn);
    return group->comm;
}

/* SCOPE_NODE: among the group's members in the caller's SMP domain. */
void armci_msg_group_gop_scope(int scope, void *x, int n, char *op, int type, ARMCI_Group *group)
{
    gop(group_scope_comm(scope, group, "armci_msg_group_gop_scope"), x, n, op, type,
        "armci_msg_group_gop_scope");
}
/* armci_msg_<t>gop, armci_msg_clus_<t>gop, armci_msg_group_<t>gop for every type of the table. */
#define GOPS_(id, T, mpi, absf, sfx)                                                               \
    void armci_msg_##sfx##gop(T *x, int n, char *op)                                               \
    {                                                                                              \
        gop(world("armci_msg_" #sfx "gop"), x, n, op, id, "armci_msg_" #sfx "gop");                \
    }                                                                                              \
    void armci_msg_clus_##sfx##gop(T *x, int n, char *op)                                          \
    {                                                                                              \
        gop(node("armci_msg_clus_" #sfx "gop"), x, n, op, id, "armci_msg_clus_" #sfx "gop");       \
    }                                                                                              \
    void armci_msg_group_##sfx##gop(T *x, int n, char *op, ARMCI_Group *group)                     \
    {                                                                                              \
        gop(gcomm(group, "armci_msg_group_" #sfx "gop"), x, n, op, id,                             \
            "armci_msg_group_" #sfx "gop");                                                        \
    }
RMCA_MSG_TYPES(GOPS_)
#undef GOPS_

/* ------------------------------------------------------------------------ select --- */

/* Compares the leading elements: 1 when a is better than b for "max" (a > b) / "min" (a < b). */
static int better(const void *a, const void *b, int type, int want_max)
{
    int c = 0;
    switch (type) {
#define CMP_(id, T, mpi, absf, sfx)                                                                \
    case id: {                                                                                     \
        T x, y;                                                                                    \
        memcpy(&x, a, sizeof x);                                                                   \
        memcpy(&y, b, sizeof y);                                                                   \
        c = (x > y) - (x < y);                                                                     \
        break;                                                                                     \
    }
        RMCA_MSG_TYPES(CMP_)
#undef CMP_
    }
    return want_max ? c > 0 : c < 0;
}

static void sel(MPI_Comm comm, void *x, int n, char *op, int type, int contribute, const char *fn)
{
    size_t esz;
    msg_type(type, &esz, fn);
    int want_max;
    if (op && !strcmp(op, "max"))
        want_max = 1;
    else if (op && !strcmp(op, "min"))
        want_max = 0;
    else
        rmca_error("%s: unknown operation '%s' (max or min)", fn, op ? op : "(null)");
    if (n < (int)esz || !x)
        rmca_error("%s: the buffer (%d bytes) must hold at least one element", fn, n);
    int np;
    RMCA_MPI(fn, MPI_Comm_size, (comm, &np));
    size_t rec = sizeof(long long) + (((size_t)n + 7) & ~(size_t)7);
    char *mine = calloc(1, rec), *all = malloc(rec * (size_t)np);
    if (!mine || !all)
        rmca_error("%s: out of memory", fn);
    *(long long *)mine = contribute != 0;
    memcpy(mine + sizeof(long long), x, (size_t)n);
    rmca_allgather(mine, (int)rec, MPI_BYTE, all, comm, fn);
    int best = -1;
    for (int i = 0; i < np; i++) {
        char *r = all + (size_t)i * rec;
        if (!*(long long *)r)
            continue;
        if (best < 0 || better(r + sizeof(long long), all + (size_t)best * rec + sizeof(long long),
                               type, want_max))
            best = i;
    }
    if (best >= 0)
        memcpy(x, all + (size_t)best * rec + sizeof(long long), (size_t)n);
    free(mine);
    free(all);
}

void armci_msg_sel_scope(int scope, void *x, int n, char *op, int type, int contribute)
{
    sel(scope_comm(scope, "armci_msg_sel_scope"), x, n, op, type, contribute,
        "armci_msg_sel_scope");
}

void armci_msg_sel(void *x, int n, char *op, int type, int contribute)
{
    sel(world("armci_msg_sel"), x, n, op, type, contribute, "armci_msg_sel");
}
