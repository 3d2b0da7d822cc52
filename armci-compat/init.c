/* ARMCI on RMC: initialization, errors, groups, topology and odds and ends. */
#include "config.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "armci_impl.h"

rmca_state_t rmca;
/* As in ARMCI-MPI these two are global (not declared in armci.h). */
ARMCI_Group ARMCI_GROUP_WORLD = {MPI_COMM_NULL, MPI_COMM_NULL, NULL, NULL, -1, 0};
ARMCI_Group ARMCI_GROUP_DEFAULT = {MPI_COMM_NULL, MPI_COMM_NULL, NULL, NULL, -1, 0};

/* ------------------------------------------------------------------------ errors --- */

/* The error path: its MPI queries are not checked (a failing one leaves its result 0, the safe
 * choice: no rank printed, exit() instead of MPI_Abort). */
static void vreport(const char *fmt, va_list ap, const char *tail)
{
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    int rank = -1, mpi_up = 0, mpi_down = 0;
    MPI_Initialized(&mpi_up);
    MPI_Finalized(&mpi_down);
    if (mpi_up && !mpi_down) /* ARMCI's rank once it runs (its world may be a sub-communicator) */
        rank = ARMCI_GROUP_WORLD.comm != MPI_COMM_NULL && ARMCI_GROUP_WORLD.rank >= 0
                   ? ARMCI_GROUP_WORLD.rank
                   : (MPI_Comm_rank(MPI_COMM_WORLD, &rank), rank);
    fprintf(stderr, "[%d] ARMCI Error: %s%s%s\n", rank, msg, tail ? ": " : "", tail ? tail : "");
    fflush(stderr);
}

__attribute__((noreturn)) static void die(int code)
{
    int mpi_up = 0, mpi_down = 0;
    MPI_Initialized(&mpi_up);
    MPI_Finalized(&mpi_down);
    if (mpi_up && !mpi_down)
        MPI_Abort(ARMCI_GROUP_WORLD.comm != MPI_COMM_NULL ? ARMCI_GROUP_WORLD.comm : MPI_COMM_WORLD,
                  code ? code : 1); /* a program that failed never exits with 0 */
    exit(code ? code : 1);
}

void rmca_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap, NULL);
    va_end(ap);
    die(100);
}

void rmca_fail(rmc_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap, rmc_status_string(st));
    va_end(ap);
    die(100);
}

static void report(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap, NULL);
    va_end(ap);
}

/* As ARMCI-MPI: the message, then MPI_Abort with `code`. */
void ARMCI_Error(const char *msg, int code)
{
    report("%s", msg ? msg : "(null)");
    die(code);
}

rmc_acc_type_t rmca_acc_type(int datatype, const char *fn)
{
    switch (datatype) {
    case ARMCI_ACC_INT:
        return sizeof(int) == 8 ? RMC_ACC_INT64 : RMC_ACC_INT32;
    case ARMCI_ACC_LNG:
        return sizeof(long) == 8 ? RMC_ACC_INT64 : RMC_ACC_INT32;
    case ARMCI_ACC_FLT:
        return RMC_ACC_FLOAT;
    case ARMCI_ACC_DBL:
        return RMC_ACC_DOUBLE;
    case ARMCI_ACC_CPL:
        return RMC_ACC_COMPLEX_FLOAT;
    case ARMCI_ACC_DCP:
        return RMC_ACC_COMPLEX_DOUBLE;
    default:
        rmca_error("%s: unknown accumulate data type (%d)", fn, datatype);
    }
}

/* ------------------------------------------------------------------------ groups --- */

/* The group's members in the caller's SMP domain, in group-rank order, for SCOPE_NODE group
 * collectives (message.c): kept in noncoll_pgroup_comm (unused otherwise). Collective over the
 * group, made when the group is (so a node-scope collective that only one domain's members call
 * needs nothing from the others). Every member sees the group's domains alike, so all take the
 * same branch: no two members share a domain, MPI_COMM_SELF; all in one domain, the group's own
 * communicator (no new one); otherwise a split. Not for the world group (rmca.node_comm). */
static void group_node_comm(ARMCI_Group *g)
{
    int *seen = calloc((size_t)rmca.ndomains, sizeof *seen);
    if (!seen)
        rmca_error("ARMCI group: no memory for %d domain marks", rmca.ndomains);
    int shared = 0, domains = 0;
    for (int i = 0; i < g->size; i++) {
        int d = rmca.dom_of[g->grp_to_abs[i]];
        if (seen[d]++)
            shared = 1;
        else
            domains++;
    }
    free(seen);
    if (!shared) {
        g->noncoll_pgroup_comm = MPI_COMM_SELF;
        return;
    }
    if (domains == 1) {
        g->noncoll_pgroup_comm = g->comm; /* (ARMCI_Group_free frees it once) */
        return;
    }
    rmca_barrier(g->comm, "ARMCI group"); /* no nonblocking MPI_Comm_split */
    RMCA_MPI("ARMCI group", MPI_Comm_split,
             (g->comm, rmca.my_domain, g->rank, &g->noncoll_pgroup_comm));
    rmca_comm_ready(g->noncoll_pgroup_comm, "ARMCI group");
}

void rmca_group_from_comm(MPI_Comm comm, ARMCI_Group *g)
{
    g->comm = comm;
    g->noncoll_pgroup_comm = MPI_COMM_NULL;
    g->grp_to_abs = NULL;
    g->abs_to_grp = NULL;
    g->rank = -1;
    g->size = 0;
    if (comm == MPI_COMM_NULL)
        return;
    rmca_comm_ready(comm, "ARMCI group");
    RMCA_MPI("ARMCI group", MPI_Comm_rank, (comm, &g->rank));
    RMCA_MPI("ARMCI group", MPI_Comm_size, (comm, &g->size));
    int world = ARMCI_GROUP_WORLD.comm == MPI_COMM_NULL ? g->size : ARMCI_GROUP_WORLD.size;
    g->grp_to_abs = malloc((size_t)g->size * sizeof(int));
    g->abs_to_grp = malloc((size_t)world * sizeof(int));
    int *ranks = malloc((size_t)g->size * sizeof(int));
    if (!g->grp_to_abs || !g->abs_to_grp || !ranks)
        rmca_error("ARMCI group: out of memory");
    for (int i = 0; i < g->size; i++)
        ranks[i] = i;
    if (ARMCI_GROUP_WORLD.comm == MPI_COMM_NULL) { /* the world group itself */
        memcpy(g->grp_to_abs, ranks, (size_t)g->size * sizeof(int));
    } else {
        MPI_Group gg, wg;
        RMCA_MPI("ARMCI group", MPI_Comm_group, (comm, &gg));
        RMCA_MPI("ARMCI group", MPI_Comm_group, (ARMCI_GROUP_WORLD.comm, &wg));
        RMCA_MPI("ARMCI group", MPI_Group_translate_ranks, (gg, g->size, ranks, wg, g->grp_to_abs));
        RMCA_MPI("ARMCI group", MPI_Group_free, (&gg));
        RMCA_MPI("ARMCI group", MPI_Group_free, (&wg));
    }
    free(ranks);
    for (int i = 0; i < world; i++)
        g->abs_to_grp[i] = -1;
    for (int i = 0; i < g->size; i++) {
        if (g->grp_to_abs[i] == MPI_UNDEFINED || g->grp_to_abs[i] < 0)
            rmca_error("ARMCI group: process outside ARMCI's world group");
        g->abs_to_grp[g->grp_to_abs[i]] = i;
    }
    if (g != &ARMCI_GROUP_WORLD && rmca.dom_of) /* the world's is rmca.node_comm */
        group_node_comm(g);
}

void ARMCI_Group_create_child(int grp_size, int *pid_list, ARMCI_Group *group_out,
                              ARMCI_Group *group_parent)
{
    RMCA_REQUIRE_INIT("ARMCI_Group_create_child");
    if (!group_out || !group_parent || group_parent->comm == MPI_COMM_NULL)
        rmca_error("ARMCI_Group_create_child: invalid group (NULL, or the caller is not a member "
                   "of the parent)");
    if (grp_size < 0 || (grp_size > 0 && !pid_list) || grp_size > group_parent->size)
        rmca_error("ARMCI_Group_create_child: invalid process list (%d processes)", grp_size);
    for (int i = 0; i < grp_size; i++)
        if (pid_list[i] < 0 || pid_list[i] >= group_parent->size)
            rmca_error("ARMCI_Group_create_child: rank %d is not in the parent group (size %d)",
                       pid_list[i], group_parent->size);
    const char *fn = "ARMCI_Group_create_child";
    MPI_Group pg, ng;
    MPI_Comm nc = MPI_COMM_NULL;
    RMCA_MPI(fn, MPI_Comm_group, (group_parent->comm, &pg));
    RMCA_MPI(fn, MPI_Group_incl, (pg, grp_size, pid_list, &ng));
    rmca_barrier(group_parent->comm, fn); /* MPI_Comm_create has no nonblocking form */
    RMCA_MPI(fn, MPI_Comm_create, (group_parent->comm, ng, &nc));
    RMCA_MPI(fn, MPI_Group_free, (&pg));
    RMCA_MPI(fn, MPI_Group_free, (&ng));
    rmca_group_from_comm(nc, group_out);
}

void ARMCI_Group_create(int grp_size, int *pid_list, ARMCI_Group *group_out)
{
    ARMCI_Group_create_child(grp_size, pid_list, group_out, &ARMCI_GROUP_DEFAULT);
}

void ARMCI_Group_free(ARMCI_Group *group)
{
    if (!group)
        return;
    if (group->noncoll_pgroup_comm != MPI_COMM_NULL &&
        group->noncoll_pgroup_comm != MPI_COMM_SELF && group->noncoll_pgroup_comm != group->comm)
        RMCA_MPI("ARMCI_Group_free", MPI_Comm_free, (&group->noncoll_pgroup_comm));
    group->noncoll_pgroup_comm = MPI_COMM_NULL;
    if (group->comm != MPI_COMM_NULL)
        RMCA_MPI("ARMCI_Group_free", MPI_Comm_free, (&group->comm));
    free(group->grp_to_abs);
    free(group->abs_to_grp);
    group->comm = MPI_COMM_NULL;
    group->grp_to_abs = group->abs_to_grp = NULL;
    group->rank = -1;
    group->size = 0;
}

int ARMCI_Group_rank(ARMCI_Group *group, int *rank)
{
    if (!group || !rank)
        rmca_error("ARMCI_Group_rank: NULL argument");
    *rank = group->rank;
    return 0;
}

void ARMCI_Group_size(ARMCI_Group *group, int *size)
{
    if (!group || !size)
        rmca_error("ARMCI_Group_size: NULL argument");
    *size = group->size;
}

void ARMCI_Group_set_default(ARMCI_Group *group)
{
    if (!group)
        rmca_error("ARMCI_Group_set_default: NULL group");
    ARMCI_GROUP_DEFAULT = *group;
}

void ARMCI_Group_get_default(ARMCI_Group *group_out)
{
    if (!group_out)
        rmca_error("ARMCI_Group_get_default: NULL argument");
    *group_out = ARMCI_GROUP_DEFAULT;
}

void ARMCI_Group_get_world(ARMCI_Group *group_out)
{
    if (!group_out)
        rmca_error("ARMCI_Group_get_world: NULL argument");
    *group_out = ARMCI_GROUP_WORLD;
}

int ARMCI_Absolute_id(ARMCI_Group *group, int group_rank)
{
    if (!group || group_rank < 0 || group_rank >= group->size || !group->grp_to_abs)
        rmca_error("ARMCI_Absolute_id: group rank %d is not in the group (size %d)", group_rank,
                   group ? group->size : -1);
    return group->grp_to_abs[group_rank];
}

int ARMCIX_Group_split(ARMCI_Group *parent, int color, int key, ARMCI_Group *new_group)
{
    RMCA_REQUIRE_INIT("ARMCIX_Group_split");
    if (!parent || !new_group || parent->comm == MPI_COMM_NULL)
        rmca_error("ARMCIX_Group_split: invalid group");
    MPI_Comm nc;
    rmca_barrier(parent->comm, "ARMCIX_Group_split"); /* no nonblocking MPI_Comm_split */
    RMCA_MPI("ARMCIX_Group_split", MPI_Comm_split, (parent->comm, color, key, &nc));
    rmca_group_from_comm(nc, new_group);
    return 0;
}

int ARMCIX_Group_dup(ARMCI_Group *parent, ARMCI_Group *new_group)
{
    RMCA_REQUIRE_INIT("ARMCIX_Group_dup");
    if (!parent || !new_group || parent->comm == MPI_COMM_NULL)
        rmca_error("ARMCIX_Group_dup: invalid group");
    MPI_Comm nc;
    MPI_Request rq;
    RMCA_MPI("ARMCIX_Group_dup", MPI_Comm_idup, (parent->comm, &nc, &rq));
    rmca_wait(&rq, "ARMCIX_Group_dup");
    rmca_group_from_comm(nc, new_group);
    return 0;
}

/* ------------------------------------------------------------------- lifecycle --- */

/* SMP domains = RMC nodes: every rank's node id, grouped. */
static void topology_init(void)
{
    rmc_topology_t t;
    RMCA_CHECK(rmc_topology(&t), "ARMCI_Init: rmc_topology");
    int n = rmca.nranks;
    rmca.dom_of = malloc((size_t)n * sizeof(int));
    rmca.dom_ranks = malloc((size_t)n * sizeof(int));
    rmca.dom_start = calloc((size_t)t.node_count + 1, sizeof(int));
    if (!rmca.dom_of || !rmca.dom_ranks || !rmca.dom_start)
        rmca_error("ARMCI_Init: out of memory");
    rmca_allgather(&t.node_id, 1, MPI_INT, rmca.dom_of, ARMCI_GROUP_WORLD.comm, "ARMCI_Init");
    rmca.ndomains = t.node_count;
    rmca.my_domain = t.node_id;
    for (int i = 0; i < n; i++) {
        if (rmca.dom_of[i] < 0 || rmca.dom_of[i] >= t.node_count)
            rmca_error("ARMCI_Init: inconsistent node ids");
        rmca.dom_start[rmca.dom_of[i] + 1]++;
    }
    for (int d = 0; d < t.node_count; d++)
        rmca.dom_start[d + 1] += rmca.dom_start[d];
    int *fill = calloc((size_t)t.node_count, sizeof(int));
    if (!fill)
        rmca_error("ARMCI_Init: out of memory");
    for (int i = 0; i < n; i++) {
        int d = rmca.dom_of[i];
        rmca.dom_ranks[rmca.dom_start[d] + fill[d]++] = i;
    }
    free(fill);
    rmca_barrier(ARMCI_GROUP_WORLD.comm, "ARMCI_Init"); /* no nonblocking MPI_Comm_split */
    RMCA_MPI("ARMCI_Init", MPI_Comm_split,
             (ARMCI_GROUP_WORLD.comm, t.node_id, rmca.rank, &rmca.node_comm));
    rmca_comm_ready(rmca.node_comm, "ARMCI_Init");
}

/* An explicit request for MPI_THREAD_MULTIPLE (ARMCI_Init_thread*) also needs RMC's thread safety
 * (off with RMC_THREAD_SAFE=0, or in an RMC the application initialized so): threads would race
 * in RMC unseen. ARMCI_Init at the level MPI provides does not ask for it. */
static void check_threads(int armci_requested)
{
    if (armci_requested >= MPI_THREAD_MULTIPLE && !rmc_thread_safe())
        rmca_error("ARMCI_Init_thread(MPI_THREAD_MULTIPLE): RMC runs without thread safety "
                   "(RMC_THREAD_SAFE=%s): calls from several threads would race",
                   rmc_knob_value("RMC_THREAD_SAFE"));
}

static int init_thread_comm(int armci_requested, MPI_Comm comm, int explicit_level);

int PARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm)
{
    return init_thread_comm(armci_requested, comm, 1);
}

static int init_thread_comm(int armci_requested, MPI_Comm comm, int explicit_level)
{
    if (rmca.init_count > 0) {
        if (explicit_level)
            check_threads(armci_requested);
        rmca.init_count++;
        return 0;
    }
    const char *fn = "ARMCI_Init";
    int up = 0, provided = MPI_THREAD_SINGLE;
    RMCA_MPI(fn, MPI_Initialized, (&up));
    if (!up)
        rmca_error("MPI must be initialized before calling ARMCI_Init");
    if (comm == MPI_COMM_NULL)
        rmca_error("ARMCI_Init_thread_comm: MPI_COMM_NULL");
    RMCA_MPI(fn, MPI_Query_thread, (&provided));
    if (provided < armci_requested)
        rmca_error("MPI thread level below ARMCI thread level!");

    int me, np;
    RMCA_MPI(fn, MPI_Comm_rank, (comm, &me));
    RMCA_MPI(fn, MPI_Comm_size, (comm, &np));
    if (rmc_initialized()) {
        /* The application runs RMC itself: ARMCI's absolute ranks must be RMC's ranks. */
        int same = rmc_rank() == me && rmc_nranks() == np, all = 0;
        rmca_allreduce(&same, &all, 1, MPI_INT, MPI_LAND, comm, fn);
        if (!all)
            rmca_error("ARMCI_Init: RMC is already initialized on a communicator whose ranks "
                       "differ from ARMCI's");
        rmca.own_rmc = 0;
    } else {
        RMCA_CHECK(rmc_init(comm), "ARMCI_Init: rmc_init");
        rmca.own_rmc = 1;
    }
    rmca.rank = me;
    rmca.nranks = np;
    MPI_Comm wc;
    MPI_Request rq;
    RMCA_MPI(fn, MPI_Comm_idup, (comm, &wc, &rq));
    rmca_wait(&rq, fn);
    rmca_group_from_comm(wc, &ARMCI_GROUP_WORLD);
    ARMCI_GROUP_DEFAULT = ARMCI_GROUP_WORLD;
    topology_init();
    rmca.impl_pending = calloc((size_t)np, 1);
    if (!rmca.impl_pending)
        rmca_error("ARMCI_Init: out of memory");
    rmca.any_impl = 0;
    rmca.allocs = NULL;
    rmca.have_mutexes = 0;
    rmca.init_count = 1;
    if (explicit_level)
        check_threads(armci_requested);
    return 0;
}

int PARMCI_Init_thread(int armci_requested)
{
    return PARMCI_Init_thread_comm(armci_requested, MPI_COMM_WORLD);
}

/* ARMCI at the thread level MPI provides, over `comm` (MPI_COMM_WORLD for ARMCI_Init). */
static int init_provided(MPI_Comm comm, const char *fn)
{
    int provided = MPI_THREAD_SINGLE, up = 0;
    RMCA_MPI(fn, MPI_Initialized, (&up));
    if (up)
        RMCA_MPI(fn, MPI_Query_thread, (&provided));
    return init_thread_comm(provided, comm, 0);
}

int PARMCI_Init(void)
{
    return init_provided(MPI_COMM_WORLD, "ARMCI_Init");
}

int PARMCI_Init_mpi_comm(MPI_Comm comm)
{
    return init_provided(comm, "ARMCI_Init_mpi_comm");
}

int PARMCI_Init_args(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return PARMCI_Init();
}

int PARMCI_Initialized(void)
{
    return rmca.init_count > 0;
}

int PARMCI_Finalize(void)
{
    if (rmca.init_count <= 0)
        return 0;
    if (--rmca.init_count > 0)
        return 0;
    rmca_nb_wait_proc(-1);
    rmca_nb_clear();
    if (rmca.any_impl)
        rmc_fence_all();
    rmca_free_all();
    if (rmca.have_mutexes) {
        rmc_mutex_destroy(rmca.mutexes);
        rmca.have_mutexes = 0;
    }
    rmc_barrier();
    RMCA_MPI("ARMCI_Finalize", MPI_Comm_free, (&rmca.node_comm));
    free(rmca.dom_of);
    free(rmca.dom_start);
    free(rmca.dom_ranks);
    free(rmca.impl_pending);
    rmca.dom_of = rmca.dom_start = rmca.dom_ranks = NULL;
    rmca.impl_pending = NULL;
    ARMCI_Group w = ARMCI_GROUP_WORLD;
    ARMCI_GROUP_WORLD.comm = MPI_COMM_NULL; /* errors from here on abort on MPI_COMM_WORLD */
    ARMCI_Group_free(&w);
    ARMCI_GROUP_WORLD = w;
    ARMCI_GROUP_DEFAULT = w;
    if (rmca.own_rmc)
        rmc_finalize();
    rmca.own_rmc = 0;
    return 0;
}

void ARMCI_Cleanup(void) {}

RMCA_ALIAS(Init_thread_comm);
RMCA_ALIAS(Init_thread);
RMCA_ALIAS(Init);
RMCA_ALIAS(Init_mpi_comm);
RMCA_ALIAS(Init_args);
RMCA_ALIAS(Initialized);
RMCA_ALIAS(Finalize);

/* ---------------------------------------------------------------------- topology --- */

/* A domain id; a negative one is the caller's own domain (as GA's ARMCI: ga_cluster_nprocs(-1)). */
static int check_domain(int id, const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    if (id < 0)
        return rmca.my_domain;
    if (id >= rmca.ndomains)
        rmca_error("%s: domain %d out of range [0, %d)", fn, id, rmca.ndomains);
    return id;
}

/* A process id; a negative one is the caller (as a negative domain id is the caller's domain). */
static int check_proc(int proc, const char *fn)
{
    RMCA_REQUIRE_INIT(fn);
    if (proc < 0)
        return rmca.rank;
    if (proc >= rmca.nranks)
        rmca_error("%s: process %d out of range [0, %d)", fn, proc, rmca.nranks);
    return proc;
}

int armci_domain_nprocs(armci_domain_t domain, int id)
{
    (void)domain;
    id = check_domain(id, "armci_domain_nprocs");
    return rmca.dom_start[id + 1] - rmca.dom_start[id];
}

int armci_domain_id(armci_domain_t domain, int glob_proc_id)
{
    (void)domain;
    return rmca.dom_of[check_proc(glob_proc_id, "armci_domain_id")];
}

int armci_domain_glob_proc_id(armci_domain_t domain, int id, int loc_proc_id)
{
    (void)domain;
    id = check_domain(id, "armci_domain_glob_proc_id");
    int n = rmca.dom_start[id + 1] - rmca.dom_start[id];
    if (loc_proc_id < 0 || loc_proc_id >= n)
        rmca_error("armci_domain_glob_proc_id: local process %d out of range [0, %d)", loc_proc_id,
                   n);
    return rmca.dom_ranks[rmca.dom_start[id] + loc_proc_id];
}

int armci_domain_my_id(armci_domain_t domain)
{
    (void)domain;
    RMCA_REQUIRE_INIT("armci_domain_my_id");
    return rmca.my_domain;
}

int armci_domain_count(armci_domain_t domain)
{
    (void)domain;
    RMCA_REQUIRE_INIT("armci_domain_count");
    return rmca.ndomains;
}

int armci_domain_same_id(armci_domain_t domain, int proc)
{
    (void)domain;
    return rmca.dom_of[check_proc(proc, "armci_domain_same_id")] == rmca.my_domain;
}

int ARMCI_Same_node(int proc)
{
    return armci_domain_same_id(ARMCI_DOMAIN_SMP, proc);
}

int ARMCI_Uses_shm(void)
{
    return rmca.init_count > 0 && rmc_node_size() > 1;
}

void ARMCI_Set_shm_limit(unsigned long shmemlimit)
{
    (void)shmemlimit; /* RMC sizes its shared memory per region */
}

int ARMCI_Uses_shm_grp(ARMCI_Group *group)
{
    (void)group;
    return ARMCI_Uses_shm();
}

void ARMCI_Copy(void *src, void *dst, int size)
{
    if (size > 0)
        memmove(dst, src, (size_t)size);
}

void ARMCIX_Progress(void)
{
    if (rmc_initialized())
        rmc_progress();
}
