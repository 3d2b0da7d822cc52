/* ARMCI message API (message.h) on MPI: ARMCI's world communicator (a duplicate of the one given to
 * ARMCI_Init), the SMP-domain communicator for SCOPE_NODE, and group communicators. */
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
    if (MPI_Send(buffer, len, MPI_BYTE, to, tag, world("armci_msg_snd")) != MPI_SUCCESS)
        rmca_error("armci_msg_snd: MPI_Send failed");
}

void armci_msg_rcv(int tag, void *buffer, int buflen, int *msglen, int from)
{
    MPI_Status s;
    if (MPI_Recv(buffer, buflen, MPI_BYTE, from, tag, world("armci_msg_rcv"), &s) != MPI_SUCCESS)
        rmca_error("armci_msg_rcv: MPI_Recv failed");
    if (msglen)
        MPI_Get_count(&s, MPI_BYTE, msglen);
}

int armci_msg_rcvany(int tag, void *buffer, int buflen, int *msglen)
{
    MPI_Status s;
    if (MPI_Recv(buffer, buflen, MPI_BYTE, MPI_ANY_SOURCE, tag, world("armci_msg_rcvany"), &s) !=
        MPI_SUCCESS)
        rmca_error("armci_msg_rcvany: MPI_Recv failed");
    if (msglen)
        MPI_Get_count(&s, MPI_BYTE, msglen);
    return s.MPI_SOURCE;
}

/* -------------------------------------------------------------------- collectives --- */

void parmci_msg_barrier(void)
{
    MPI_Barrier(world("armci_msg_barrier"));
}

void parmci_msg_group_barrier(ARMCI_Group *group)
{
    RMCA_REQUIRE_INIT("armci_msg_group_barrier");
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("armci_msg_group_barrier: the caller is not a member of the group");
    MPI_Barrier(group->comm);
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
    if (MPI_Bcast(buf, len, MPI_BYTE, root, comm) != MPI_SUCCESS)
        rmca_error("%s: MPI_Bcast failed", fn);
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

void armci_msg_group_bcast_scope(int scope, void *buf, int len, int root, ARMCI_Group *group)
{
    RMCA_REQUIRE_INIT("armci_msg_group_bcast_scope");
    (void)scope;
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("armci_msg_group_bcast_scope: the caller is not a member of the group");
    bcast(group->comm, buf, len, root_in(group->comm, root, group, "armci_msg_group_bcast_scope"),
          "armci_msg_group_bcast_scope");
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
    MPI_Allgather(&mine, sizeof(void *), MPI_BYTE, ptr_ar, sizeof(void *), MPI_BYTE, w);
}

void armci_exchange_address_grp(void *ptr_arr[], int n, ARMCI_Group *group)
{
    RMCA_REQUIRE_INIT("armci_exchange_address_grp");
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("armci_exchange_address_grp: the caller is not a member of the group");
    if (!ptr_arr || n < group->size)
        rmca_error("armci_exchange_address_grp: the array must hold %d addresses", group->size);
    void *mine = ptr_arr[group->rank];
    MPI_Allgather(&mine, sizeof(void *), MPI_BYTE, ptr_arr, sizeof(void *), MPI_BYTE, group->comm);
}

/* ------------------------------------------------------------------ reductions --- */

static MPI_Datatype msg_type(int type, size_t *size, const char *fn)
{
    switch (type) {
    case ARMCI_INT:
        *size = sizeof(int);
        return MPI_INT;
    case ARMCI_LONG:
        *size = sizeof(long);
        return MPI_LONG;
    case ARMCI_LONG_LONG:
        *size = sizeof(long long);
        return MPI_LONG_LONG;
    case ARMCI_FLOAT:
        *size = sizeof(float);
        return MPI_FLOAT;
    case ARMCI_DOUBLE:
        *size = sizeof(double);
        return MPI_DOUBLE;
    default:
        rmca_error("%s: unknown type (%d)", fn, type);
    }
}

enum { OP_PLAIN, OP_ABS };

static MPI_Op msg_op(const char *op, int type, int *kind, const char *fn)
{
    *kind = OP_PLAIN;
    if (!op)
        rmca_error("%s: NULL operation", fn);
    if (!strcmp(op, "+"))
        return MPI_SUM;
    if (!strcmp(op, "*"))
        return MPI_PROD;
    if (!strcmp(op, "max"))
        return MPI_MAX;
    if (!strcmp(op, "min"))
        return MPI_MIN;
    if (!strcmp(op, "absmax")) {
        *kind = OP_ABS;
        return MPI_MAX;
    }
    if (!strcmp(op, "absmin")) {
        *kind = OP_ABS;
        return MPI_MIN;
    }
    if (!strcmp(op, "or") && type != ARMCI_FLOAT && type != ARMCI_DOUBLE)
        return MPI_BOR;
    rmca_error("%s: unknown operation '%s' for type %d", fn, op, type);
}

/* |x[i]| in place (absmax / absmin reduce the absolute values, as ARMCI). */
static void absolute(void *x, int n, int type)
{
    for (int i = 0; i < n; i++)
        switch (type) {
        case ARMCI_INT:
            ((int *)x)[i] = abs(((int *)x)[i]);
            break;
        case ARMCI_LONG:
            ((long *)x)[i] = labs(((long *)x)[i]);
            break;
        case ARMCI_LONG_LONG:
            ((long long *)x)[i] = llabs(((long long *)x)[i]);
            break;
        case ARMCI_FLOAT:
            ((float *)x)[i] = fabsf(((float *)x)[i]);
            break;
        default:
            ((double *)x)[i] = fabs(((double *)x)[i]);
            break;
        }
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
    if (MPI_Allreduce(MPI_IN_PLACE, x, n, t, o, comm) != MPI_SUCCESS)
        rmca_error("%s: MPI_Allreduce failed", fn);
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

void armci_msg_igop(int *x, int n, char *op)
{
    gop(world("armci_msg_igop"), x, n, op, ARMCI_INT, "armci_msg_igop");
}
void armci_msg_lgop(long *x, int n, char *op)
{
    gop(world("armci_msg_lgop"), x, n, op, ARMCI_LONG, "armci_msg_lgop");
}
void armci_msg_llgop(long long *x, int n, char *op)
{
    gop(world("armci_msg_llgop"), x, n, op, ARMCI_LONG_LONG, "armci_msg_llgop");
}
void armci_msg_fgop(float *x, int n, char *op)
{
    gop(world("armci_msg_fgop"), x, n, op, ARMCI_FLOAT, "armci_msg_fgop");
}
void armci_msg_dgop(double *x, int n, char *op)
{
    gop(world("armci_msg_dgop"), x, n, op, ARMCI_DOUBLE, "armci_msg_dgop");
}

static MPI_Comm node(const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    return rmca.node_comm;
}
void armci_msg_clus_igop(int *x, int n, char *op)
{
    gop(node("armci_msg_clus_igop"), x, n, op, ARMCI_INT, "armci_msg_clus_igop");
}
void armci_msg_clus_fgop(float *x, int n, char *op)
{
    gop(node("armci_msg_clus_fgop"), x, n, op, ARMCI_FLOAT, "armci_msg_clus_fgop");
}
void armci_msg_clus_lgop(long *x, int n, char *op)
{
    gop(node("armci_msg_clus_lgop"), x, n, op, ARMCI_LONG, "armci_msg_clus_lgop");
}
void armci_msg_clus_llgop(long long *x, int n, char *op)
{
    gop(node("armci_msg_clus_llgop"), x, n, op, ARMCI_LONG_LONG, "armci_msg_clus_llgop");
}
void armci_msg_clus_dgop(double *x, int n, char *op)
{
    gop(node("armci_msg_clus_dgop"), x, n, op, ARMCI_DOUBLE, "armci_msg_clus_dgop");
}

static MPI_Comm gcomm(ARMCI_Group *group, const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    if (!group || group->comm == MPI_COMM_NULL)
        rmca_error("%s: the caller is not a member of the group", fn);
    return group->comm;
}

void armci_msg_group_gop_scope(int scope, void *x, int n, char *op, int type, ARMCI_Group *group)
{
    (void)scope;
    gop(gcomm(group, "armci_msg_group_gop_scope"), x, n, op, type, "armci_msg_group_gop_scope");
}
void armci_msg_group_igop(int *x, int n, char *op, ARMCI_Group *group)
{
    gop(gcomm(group, "armci_msg_group_igop"), x, n, op, ARMCI_INT, "armci_msg_group_igop");
}
void armci_msg_group_lgop(long *x, int n, char *op, ARMCI_Group *group)
{
    gop(gcomm(group, "armci_msg_group_lgop"), x, n, op, ARMCI_LONG, "armci_msg_group_lgop");
}
void armci_msg_group_llgop(long long *x, int n, char *op, ARMCI_Group *group)
{
    gop(gcomm(group, "armci_msg_group_llgop"), x, n, op, ARMCI_LONG_LONG, "armci_msg_group_llgop");
}
void armci_msg_group_fgop(float *x, int n, char *op, ARMCI_Group *group)
{
    gop(gcomm(group, "armci_msg_group_fgop"), x, n, op, ARMCI_FLOAT, "armci_msg_group_fgop");
}
void armci_msg_group_dgop(double *x, int n, char *op, ARMCI_Group *group)
{
    gop(gcomm(group, "armci_msg_group_dgop"), x, n, op, ARMCI_DOUBLE, "armci_msg_group_dgop");
}

/* ------------------------------------------------------------------------ select --- */

/* Compares the leading elements: >0 when a is better than b for "max" (a > b) / "min" (a < b). */
static int better(const void *a, const void *b, int type, int want_max)
{
    double da, db;
    long long la, lb;
    int c;
    switch (type) {
    case ARMCI_INT:
        la = *(const int *)a;
        lb = *(const int *)b;
        c = (la > lb) - (la < lb);
        break;
    case ARMCI_LONG:
        la = *(const long *)a;
        lb = *(const long *)b;
        c = (la > lb) - (la < lb);
        break;
    case ARMCI_LONG_LONG:
        la = *(const long long *)a;
        lb = *(const long long *)b;
        c = (la > lb) - (la < lb);
        break;
    case ARMCI_FLOAT:
        da = *(const float *)a;
        db = *(const float *)b;
        c = (da > db) - (da < db);
        break;
    default:
        da = *(const double *)a;
        db = *(const double *)b;
        c = (da > db) - (da < db);
        break;
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
    MPI_Comm_size(comm, &np);
    size_t rec = sizeof(long long) + (((size_t)n + 7) & ~(size_t)7);
    char *mine = calloc(1, rec), *all = malloc(rec * (size_t)np);
    if (!mine || !all)
        rmca_error("%s: out of memory", fn);
    *(long long *)mine = contribute != 0;
    memcpy(mine + sizeof(long long), x, (size_t)n);
    MPI_Allgather(mine, (int)rec, MPI_BYTE, all, (int)rec, MPI_BYTE, comm);
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
