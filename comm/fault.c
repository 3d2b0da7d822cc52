/* Fault injection for tests: RMC_FAULT=SPEC[,SPEC...], read at every rmc_init. A SPEC is
 *   SITE[@RANK][#N[+]]
 * SITE   the name of an MPI function comm calls (e.g. MPI_Win_flush): the call is not made and
 *        fails with MPI_ERR_OTHER; or "malloc": an allocation of comm returns NULL.
 * RANK   the rank (in the communicator given to rmc_init) where it happens; omitted or "all": every
 *        rank. A collective MPI call must fail on every rank (one rank skipping it would leave the
 *        others waiting, which is not a failure MPI can produce).
 * N      the N-th such call since rmc_init fails (default 1); "N+": that one and every later one.
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
