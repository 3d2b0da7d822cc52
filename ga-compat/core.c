/* ga-compat core: start and end, errors, the handle table, element types, memory limits, cluster
 * queries, timers. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ga_impl.h"

gai_state_t gai = {.default_group = GAI_WORLD};

/* ------------------------------------------------------------------------- errors --- */

void gai_error(const char *fn, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int me = gai.up ? gai.me : -1;
    fprintf(stderr, "%d: GA ERROR: %s: %s\n", me, fn, msg);
    fflush(stderr);
    /* the launcher forwards the message before the abort kills the job (seen lost otherwise
     * when every rank aborts at once on a loaded machine) */
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    int flag = 0;
    MPI_Initialized(&flag);
    if (flag)
        MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

void gai_same_group(const char *fn, const gai_array_t *a, const gai_array_t *b)
{
    if (b && a->pgroup != b->pgroup)
        gai_error(fn, "arrays '%s' and '%s' are on different process groups", a->name, b->name);
}

void gai_check(rmc_status_t st, const char *fn, const char *what)
{
    if (st != RMC_OK)
        gai_error(fn, "%s failed: %s (%s)", what, rmc_status_string(st), rmc_last_error());
}

int gai_allreduce_int(int v, MPI_Op op, MPI_Comm comm, const char *fn, const char *what)
{
    int all = v;
    MPI_Request r;
    MPI_Iallreduce(&v, &all, 1, MPI_INT, op, comm, &r);
    gai_check(rmc_wait_mpi(&r), fn, what);
    return all;
}

void gai_up(const char *fn)
{
    if (!gai.up)
        gai_error(fn, "GA is not initialized (GA_Initialize first)");
}

/* GA_Error: GA's own abort with a message and a code, as GA prints it. */
void GA_Error(char *str, int code)
{
    fprintf(stderr, "%d:%s %d (%#x).\n", gai.up ? gai.me : -1, str ? str : "", code, code);
    fflush(stderr);
    int flag = 0;
    MPI_Initialized(&flag);
    if (flag)
        MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
    abort();
}

void NGA_Error(char *str, int code)
{
    GA_Error(str, code);
}

/* ---------------------------------------------------------------- start and end --- */

/* Collective over MPI_COMM_WORLD. Starts RMC unless the program (or ARMCI_Init) already did,
 * initializing MPI if nobody has. Calling it again while GA is up does nothing. */
void GA_Initialize(void)
{
    if (gai.up)
        return;
    const char *fn = "GA_Initialize";
    if (!rmc_initialized()) {
        int flag = 0;
        MPI_Initialized(&flag);
        gai.own_mpi = !flag;
        gai_check(rmc_init(MPI_COMM_WORLD), fn, "rmc_init");
        gai.own_rmc = 1;
    }
    gai.me = rmc_rank();
    gai.np = rmc_nranks();
    gai.default_group = GAI_WORLD;
    gai_group_t *w = &gai.groups[0];
    memset(w, 0, sizeof *w);
    w->live = 1;
    gai_check(rmc_comm(&w->comm), fn, "rmc_comm");
    w->size = gai.np;
    w->me = gai.me;
    w->ranks = malloc(sizeof(int) * (size_t)gai.np);
    if (!w->ranks)
        gai_error(fn, "out of memory for the world group (%d ranks)", gai.np);
    for (int i = 0; i < gai.np; i++)
        w->ranks[i] = i;
    /* every rank's node, once: nodes may differ in size (RMC_NODE_SIZE not dividing the ranks,
     * or real nodes with different rank counts), so no rank can compute another's */
    rmc_topology_t t;
    gai_check(rmc_topology(&t), fn, "rmc_topology");
    gai.node_of = malloc(sizeof(int) * (size_t)gai.np);
    if (!gai.node_of)
        gai_error(fn, "out of memory for the node table (%d ranks)", gai.np);
    MPI_Request r;
    MPI_Iallgather(&t.node_id, 1, MPI_INT, gai.node_of, 1, MPI_INT, w->comm, &r);
    gai_check(rmc_wait_mpi(&r), fn, "gathering the ranks' nodes");
    gai.nnodes = 0;
    for (int i = 0; i < gai.np; i++)
        if (gai.node_of[i] >= gai.nnodes)
            gai.nnodes = gai.node_of[i] + 1;
    gai_rma_init(fn);
    gai.up = 1;
}

void GA_Initialize_args(int *argc, char ***argv)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        int provided;
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        gai.own_mpi = 0; /* the program's MPI from here on: finalized by GA_Terminate below */
        gai.mpi_from_args = 1;
    }
    GA_Initialize();
}

/* GA_Initialize, then the memory limit of GA_Set_memory_limit (also when GA is already up). */
void GA_Initialize_ltd(size_t limit)
{
    GA_Initialize();
    GA_Set_memory_limit(limit);
}

void NGA_Initialize(void)
{
    GA_Initialize();
}

void NGA_Initialize_ltd(size_t limit)
{
    GA_Initialize_ltd(limit);
}

int GA_Initialized(void)
{
    return gai.up;
}

int NGA_Initialized(void)
{
    return gai.up;
}

/* Collective. Destroys every array still alive and the groups, ends RMC if GA started it. */
void GA_Terminate(void)
{
    if (!gai.up)
        return;
    const char *fn = "GA_Terminate";
    gai_sync_group(GAI_WORLD, fn);
    for (int i = 0; i < gai.narrays; i++)
        if (gai.arrays[i] && gai.arrays[i]->live) {
            gai_free(gai.arrays[i]);
            free(gai.arrays[i]);
            gai.arrays[i] = NULL;
        }
    gai.narrays = 0;
    gai_linalg_release();
    if (gai.mutexes) {
        rmc_mutex_destroy(gai.mutexes);
        gai.mutexes = NULL;
        gai.nmutex = 0;
    }
    for (int i = 1; i < GAI_MAX_GROUPS; i++)
        if (gai.groups[i].live) {
            if (gai.groups[i].comm != MPI_COMM_NULL)
                MPI_Comm_free(&gai.groups[i].comm);
            free(gai.groups[i].ranks);
            memset(&gai.groups[i], 0, sizeof gai.groups[i]);
        }
    free(gai.groups[0].ranks);
    memset(&gai.groups[0], 0, sizeof gai.groups[0]);
    free(gai.node_of);
    gai.node_of = NULL;
    gai.nnodes = 0;
    gai.up = 0;
    gai.mem_used = 0;
    gai.fence_set = 0;
    gai_rma_fini();
    if (gai.own_rmc) {
        gai.own_rmc = 0;
        rmc_finalize();
    }
    if (gai.mpi_from_args) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin)
            MPI_Finalize();
        gai.mpi_from_args = 0;
    }
}

void NGA_Terminate(void)
{
    GA_Terminate();
}

/* ---------------------------------------------------------------------- identity --- */

int GA_Nodeid(void)
{
    gai_up("GA_Nodeid");
    return gai_group(gai.default_group, "GA_Nodeid")->me;
}

int GA_Nnodes(void)
{
    gai_up("GA_Nnodes");
    return gai_group(gai.default_group, "GA_Nnodes")->size;
}

int NGA_Nodeid(void)
{
    return GA_Nodeid();
}

int NGA_Nnodes(void)
{
    return GA_Nnodes();
}

/* Nodes are RMC's (real or emulated: RMC_NODE_SIZE), as GA_Initialize gathered them: every
 * query answers from that table (nodes may differ in size). */
static int node_of(int rank)
{
    return gai.node_of[rank];
}

int GA_Cluster_nnodes(void)
{
    gai_up("GA_Cluster_nnodes");
    return gai.nnodes;
}

int GA_Cluster_nodeid(void)
{
    gai_up("GA_Cluster_nodeid");
    return node_of(gai.me);
}

int GA_Cluster_proc_nodeid(int proc)
{
    gai_up("GA_Cluster_proc_nodeid");
    if (proc < 0 || proc >= gai.np)
        gai_error("GA_Cluster_proc_nodeid", "process %d out of range [0, %d)", proc, gai.np);
    return node_of(proc);
}

int GA_Cluster_nprocs(int x)
{
    gai_up("GA_Cluster_nprocs");
    if (x < 0 || x >= gai.nnodes)
        gai_error("GA_Cluster_nprocs", "node %d out of range [0, %d)", x, gai.nnodes);
    int n = 0;
    for (int r = 0; r < gai.np; r++)
        n += node_of(r) == x;
    return n;
}

int GA_Cluster_procid(int x, int y)
{
    gai_up("GA_Cluster_procid");
    int n = 0;
    for (int r = 0; r < gai.np; r++)
        if (node_of(r) == x && n++ == y)
            return r;
    gai_error("GA_Cluster_procid", "no process %d on node %d", y, x);
}

void GA_List_nodeid(int *list, int nprocs)
{
    gai_up("GA_List_nodeid");
    if (!list || nprocs < 0 || nprocs > gai.np)
        gai_error("GA_List_nodeid", "list %p, nprocs %d (0 .. %d)", (void *)list, nprocs, gai.np);
    for (int i = 0; i < nprocs; i++)
        list[i] = i;
}

void NGA_List_nodeid(int *list, int nprocs)
{
    GA_List_nodeid(list, nprocs);
}

double GA_Wtime(void)
{
    return MPI_Wtime();
}

double NGA_Wtime(void)
{
    return MPI_Wtime();
}

/* ----------------------------------------------------------------------- handles --- */

int gai_valid(int g)
{
    int i = g + GAI_OFFSET;
    return gai.up && i >= 0 && i < gai.narrays && gai.arrays[i] && gai.arrays[i]->live;
}

gai_array_t *gai_handle(int g, const char *fn)
{
    gai_up(fn);
    if (!gai_valid(g))
        gai_error(fn, "invalid global array handle %d (never created, or destroyed)", g);
    return gai.arrays[g + GAI_OFFSET];
}

gai_array_t *gai_array(int g, const char *fn)
{
    gai_array_t *a = gai_handle(g, fn);
    if (!a->allocated)
        gai_error(fn, "global array %d ('%s') has no data yet (GA_Allocate it first)", g,
                  a->name);
    return a;
}

void gai_set_group(gai_array_t *a, int p_handle)
{
    a->mirrored = p_handle == GAI_MIRROR;
    a->pgroup = a->mirrored ? GAI_WORLD : p_handle;
}

gai_array_t *gai_memory_of(gai_array_t *a, const char *fn)
{
    while (a->overlay_of)
        a = gai_array(a->overlay_of, fn);
    return a;
}

int gai_new_handle(const char *fn)
{
    gai_up(fn);
    int i = 0; /* (never handle 0, slot GAI_OFFSET: 0 means "none" and "refused" in GA's API) */
    while (i < gai.narrays && (gai.arrays[i] || i == GAI_OFFSET))
        i++;
    if (i == GAI_OFFSET)
        i++;
    if (i >= GAI_MAX_ARRAYS)
        gai_error(fn, "too many global arrays (%d)", GAI_MAX_ARRAYS - 1);
    gai_array_t *a = calloc(1, sizeof *a);
    if (!a)
        gai_error(fn, "out of memory for an array handle");
    a->live = 1;
    a->handle = i - GAI_OFFSET;
    gai_set_group(a, gai.default_group);
    gai.arrays[i] = a;
    if (i >= gai.narrays)
        gai.narrays = i + 1;
    return a->handle;
}

/* 1 for the handle of an array with data (as GA: not before GA_Allocate, not after GA_Destroy),
 * 0 otherwise (no abort). */
int GA_Valid_handle(int g_a)
{
    return gai_valid(g_a) && gai.arrays[g_a + GAI_OFFSET]->allocated;
}

int NGA_Valid_handle(int g_a)
{
    return GA_Valid_handle(g_a);
}

/* GA's verify: as GA_Valid_handle. */
int GA_Verify_handle(int g_a)
{
    return GA_Valid_handle(g_a);
}

int NGA_Verify_handle(int g_a)
{
    return GA_Valid_handle(g_a);
}

void GA_Check_handle(int g_a, char *string)
{
    if (!gai_valid(g_a))
        gai_error(string ? string : "GA_Check_handle", "invalid global array handle %d", g_a);
}

/* -------------------------------------------------------------------------- types --- */

rmc_elem_t gai_elem_of(int type)
{
    switch (type) {
    case C_INT:
        return RMC_ELEM_I32;
    case C_LONG:
    case C_LONGLONG:
        return RMC_ELEM_I64;
    case C_FLOAT:
        return RMC_ELEM_F32;
    case C_DBL:
        return RMC_ELEM_F64;
    case C_SCPL:
        return RMC_ELEM_C32;
    case C_DCPL:
        return RMC_ELEM_C64;
    default: {
        int u = type - GAI_UTYPE0;
        return u >= 0 && u < GAI_NUTYPES && gai.utype_size[u] ? RMC_ELEM_OPAQUE : (rmc_elem_t)0;
    }
    }
}

size_t gai_type_size(int type)
{
    int u = type - GAI_UTYPE0;
    if (u >= 0 && u < GAI_NUTYPES)
        return gai.utype_size[u];
    return rmc_elem_size(gai_elem_of(type));
}

void gai_numeric(const gai_array_t *a, const char *fn)
{
    if (a->elem == RMC_ELEM_OPAQUE)
        gai_error(fn, "array '%s' holds user-defined type %d (%zu-byte elements, "
                      "NGA_Register_type): this operation needs numbers",
                  a->name, a->type, a->esz);
}

const char *gai_type_name(int type)
{
    switch (type) {
    case C_INT:
        return "C_INT";
    case C_LONG:
        return "C_LONG";
    case C_LONGLONG:
        return "C_LONGLONG";
    case C_FLOAT:
        return "C_FLOAT";
    case C_DBL:
        return "C_DBL";
    case C_SCPL:
        return "C_SCPL";
    case C_DCPL:
        return "C_DCPL";
    default:
        return gai_type_size(type) ? "a user-defined type" : "unknown";
    }
}

/* ------------------------------------------------------------------------ memory --- */

/* Whether a limit is set: as in GA, a limit of 0 allows no array; only a limit above SIZE_MAX / 2
 * (GA's negative limits, e.g. (size_t)-1) removes it. */
static int mem_limited;

/* Local. The bytes of array data this process may hold from now on (arrays it holds count). */
void GA_Set_memory_limit(size_t limit)
{
    mem_limited = limit <= SIZE_MAX / 2;
    gai.mem_limit = mem_limited ? limit : 0;
}

void NGA_Set_memory_limit(size_t limit)
{
    GA_Set_memory_limit(limit);
}

int GA_Memory_limited(void)
{
    return mem_limited;
}

int NGA_Memory_limited(void)
{
    return GA_Memory_limited();
}

/* Bytes this rank may still allocate under the limit; without a limit, GA's -1 (SIZE_MAX). */
size_t GA_Memory_avail(void)
{
    if (!mem_limited)
        return SIZE_MAX;
    return gai.mem_limit > gai.mem_used ? gai.mem_limit - gai.mem_used : 0;
}

size_t NGA_Memory_avail(void)
{
    return GA_Memory_avail();
}

/* Bytes of array data (this process's blocks) GA holds on this process. */
size_t GA_Inquire_memory(void)
{
    return gai.mem_used;
}

size_t NGA_Inquire_memory(void)
{
    return gai.mem_used;
}

/* (GA_Getmem / GA_Freemem are in create.c: collective blocks arrays can be assembled on.) */

void GA_Register_stack_memory(void *(*ext_alloc)(size_t, int, char *), void (*ext_free)(void *))
{
    (void)ext_alloc;
    (void)ext_free; /* ga-compat's temporaries come from the heap: nothing to register */
}

int GA_Uses_ma(void)
{
    return 0;
}

int NGA_Uses_ma(void)
{
    return 0;
}

int GA_Uses_fapi(void)
{
    return 0;
}

void GA_Set_debug(int flag)
{
    gai.debug = flag;
}

void NGA_Set_debug(int flag)
{
    gai.debug = flag;
}

int GA_Get_debug(void)
{
    return gai.debug;
}

int NGA_Get_debug(void)
{
    return gai.debug;
}
