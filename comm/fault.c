/* Fault injection for tests: RMC_FAULT=SPEC[,SPEC...], read at every rmc_init. A SPEC is
 *   SITE[@RANK][#N[+]]
 * SITE   the name of an MPI function comm calls (e.g. MPI_Win_flush): the call is not made and
 *        fails with MPI_ERR_OTHER; or "malloc": an allocation of comm returns NULL.
 * RANK   the rank (in the communicator given to rmc_init) where it happens; omitted or "all": every
 *        rank. A collective MPI call must fail on every rank (one rank skipping it would leave the
 *        others waiting, which is not a failure MPI can produce).
 * N      the N-th such call since rmc_init fails (default 1); "N+": that one and every later one.
 * SITE must be one of sites[] below, else rmc_init fails with RMC_ERR_ARG.
 * Unarmed (the knob unset), every site costs one predictable branch. Main thread only. */
#include "config.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"

#define RMCI_MAX_FAULTS 8

typedef struct fault {
    char site[48];
    long nth;    /* 1-based */
    int forever; /* N+ */
    long seen;   /* calls of the site so far */
} fault_t;

int rmci_fault_armed_;
static fault_t faults[RMCI_MAX_FAULTS];
static int nfaults;

static pthread_t setup_thread; /* the thread of rmc_init: only its calls count */

static int hit(const char *site)
{
    /* the progress thread's MPI calls neither count nor fail: which call of a site fails stays
     * deterministic, and the counters are not shared between threads */
    if (!pthread_equal(pthread_self(), setup_thread))
        return 0;
    int fire = 0; /* every entry of the site counts the call (several entries may name it) */
    for (int i = 0; i < nfaults; i++) {
        fault_t *f = &faults[i];
        if (strcmp(f->site, site) != 0)
            continue;
        long k = ++f->seen;
        if (k == f->nth || (f->forever && k > f->nth))
            fire = 1;
    }
    return fire;
}

int rmci_fault_mpi(const char *call)
{
    return hit(call);
}

int rmci_fault_alloc(void)
{
    return hit("malloc");
}

/* Every site RMC_FAULT accepts, in strcmp order (bsearch): each MPI function comm calls through
 * RMCI_MPI, RMCI_MPI_RC or RMCI_MPI_ST, and malloc. make check compares the list with the sources
 * (tests/unit/check-fault-sites.sh), so a site the code no longer calls is refused, not silently
 * never fired. */
static const char *const sites[] = {
    /* fault sites: begin */
    "MPI_Accumulate",
    "MPI_Cancel",
    "MPI_Comm_compare",
    "MPI_Comm_dup",
    "MPI_Comm_free",
    "MPI_Comm_get_attr",
    "MPI_Comm_group",
    "MPI_Comm_rank",
    "MPI_Comm_set_errhandler",
    "MPI_Comm_size",
    "MPI_Comm_split",
    "MPI_Comm_split_type",
    "MPI_Compare_and_swap",
    "MPI_Fetch_and_op",
    "MPI_Finalize",
    "MPI_Finalized",
    "MPI_Get",
    "MPI_Get_count",
    "MPI_Grequest_complete",
    "MPI_Group_difference",
    "MPI_Group_free",
    "MPI_Group_size",
    "MPI_Group_translate_ranks",
    "MPI_Iallgather",
    "MPI_Iallreduce",
    "MPI_Ibarrier",
    "MPI_Info_create",
    "MPI_Info_free",
    "MPI_Info_set",
    "MPI_Initialized",
    "MPI_Irecv",
    "MPI_Isend",
    "MPI_Put",
    "MPI_Query_thread",
    "MPI_Raccumulate",
    "MPI_Request_free",
    "MPI_Rget",
    "MPI_Rget_accumulate",
    "MPI_Rput",
    "MPI_Send",
    "MPI_Test",
    "MPI_Testall",
    "MPI_Type_commit",
    "MPI_Type_contiguous",
    "MPI_Type_create_hindexed",
    "MPI_Type_create_hindexed_block",
    "MPI_Type_create_hvector",
    "MPI_Type_free",
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Win_allocate_shared",
    "MPI_Win_create",
    "MPI_Win_flush",
    "MPI_Win_flush_local",
    "MPI_Win_free",
    "MPI_Win_lock_all",
    "MPI_Win_set_errhandler",
    "MPI_Win_shared_query",
    "MPI_Win_unlock_all",
    "malloc",
    /* fault sites: end */
};

static int site_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

/* Parses one SPEC; keeps it when it applies to `rank` (of nranks). */
static rmc_status_t parse(const char *spec, size_t len, int rank, int nranks)
{
    char buf[96];
    if (len == 0 || len >= sizeof buf)
        return rmci_fail(RMC_ERR_ARG, "rmc_init", "RMC_FAULT: bad entry '%.*s'", (int)len, spec);
    memcpy(buf, spec, len);
    buf[len] = 0;
    fault_t f = {.nth = 1};
    char *at = strchr(buf, '@'), *hash = strchr(buf, '#');
    if (hash) {
        *hash++ = 0;
        char *end;
        f.nth = strtol(hash, &end, 10);
        f.forever = *end == '+';
        if (end == hash || f.nth < 1 || (*end && strcmp(end, "+") != 0))
            return rmci_fail(RMC_ERR_ARG, "rmc_init",
                             "RMC_FAULT: bad count in '%.*s' (#N or #N+, N >= 1)", (int)len, spec);
    }
    int mine = 1;
    if (at) {
        *at++ = 0;
        if (strcmp(at, "all") != 0) {
            char *end;
            long r = strtol(at, &end, 10);
            if (end == at || *end || r < 0 || r >= nranks)
                return rmci_fail(RMC_ERR_ARG, "rmc_init",
                                 "RMC_FAULT: bad rank in '%.*s' (0..%d or all)", (int)len, spec,
                                 nranks - 1);
            mine = r == rank;
        }
    }
    if (!buf[0] || strlen(buf) >= sizeof f.site)
        return rmci_fail(RMC_ERR_ARG, "rmc_init", "RMC_FAULT: bad site in '%.*s'", (int)len, spec);
    if (!bsearch(buf, sites, sizeof sites / sizeof sites[0], sizeof sites[0], site_cmp))
        return rmci_fail(RMC_ERR_ARG, "rmc_init",
                         "RMC_FAULT: unknown site '%s' in '%.*s' (malloc or an MPI function comm "
                         "calls, e.g. MPI_Put; comm/fault.c)",
                         buf, (int)len, spec);
    if (!mine)
        return RMC_OK;
    if (nfaults == RMCI_MAX_FAULTS)
        return rmci_fail(RMC_ERR_TOO_BIG, "rmc_init", "RMC_FAULT: more than %d entries",
                         RMCI_MAX_FAULTS);
    strcpy(f.site, buf);
    faults[nfaults++] = f;
    return RMC_OK;
}

rmc_status_t rmci_fault_setup(int rank, int nranks)
{
    nfaults = 0;
    rmci_fault_armed_ = 0;
    setup_thread = pthread_self();
    const char *v = rmc_knob_value("RMC_FAULT");
    rmc_status_t st = RMC_OK;
    while (v && *v && st == RMC_OK) {
        size_t len = strcspn(v, ",");
        st = parse(v, len, rank, nranks);
        v += len + (v[len] == ',');
    }
    if (st != RMC_OK)
        nfaults = 0;
    rmci_fault_armed_ = nfaults > 0;
    return st;
}
