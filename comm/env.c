/* The RMC_* knob registry: every environment variable RMC reads is listed here. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "rmci.h"

static const rmc_knob_t knobs[] = {
    {"RMC_NODE_SIZE", "0",
     "emulate nodes of k consecutive ranks within a real node (0 = real nodes, 1 = every peer "
     "remote)"},
    {"RMC_SHM_BARRIER", "auto",
     "rmc_barrier's ranks of one node meet in shared memory, node leaders in an MPI barrier: 1 | "
     "auto (when ranks share a node) | 0 (an MPI barrier of every rank)"},
    {"RMC_MALLOC_TUNE", "auto",
     "rmc_init sets glibc's mmap threshold to 32 MiB and trim threshold to 64 MiB (MPI's large "
     "temporaries come from the heap, not fresh pages): 1 or auto (unless MALLOC_*_ or "
     "GLIBC_TUNABLES set them) | 0"},
    {"RMC_AMO", "auto",
     "atomics: mpi (MPI atomics everywhere) | thread (CPU atomics; remote ones by the target's AM "
     "engine)"
     " | auto (thread on one node or when every rank runs a progress thread, else mpi); same on "
     "all ranks"},
    {"RMC_PROGRESS_THREAD", "auto",
     "asynchronous progress thread serving AMs/atomics: 1 | 0 | auto (on with MPI_THREAD_MULTIPLE "
     "when"
     " there is a free PU for it)"},
    {"RMC_PROGRESS_BACKOFF_US", "200",
     "longest sleep (us) of an idle progress thread sharing its CPU (exponential back-off from 1 "
     "us)"},
    {"RMC_AM_MAX_PAYLOAD", "65536",
     "largest active-message payload / reply in bytes (256 .. 64 MiB)"},
    {"RMC_REGION_CACHE", "64",
     "descriptors of peers' registered ranges cached per rank (LFU eviction), 1 .. 1048576"},
    {"RMC_STRIDED_METHOD", "auto",
     "protocol of strided/vector ops to non-node-local targets: auto | datatype | list | pack"},
    {"RMC_VERBOSE", "0",
     "1: print every failure RMC reports (the text of rmc_last_error) on stderr as it happens"},
    {"RMC_FAULT", "",
     "testing only: inject failures, SITE[@RANK][#N[+]],... (SITE an MPI function or malloc; see"
     " docs/environment.md)"},
    {"RMC_THREAD_SAFE", "auto",
     "threads of a rank may call RMC at once: 1 | 0 | auto (on when MPI provides "
     "MPI_THREAD_MULTIPLE); on costs one uncontended lock per call"},
    {"RMC_STATS", "0",
     "1: count every get/put/accumulate/atomic call per rank from rmc_init (rmc_op_counts)"},
};
#define NCORE (sizeof(knobs) / sizeof(knobs[0]))

/* Knobs of layers built on comm (rmc_knob_register), after comm's own. */
#define MAX_EXTRA 64
static const rmc_knob_t *extra[MAX_EXTRA];
static size_t nextra;

size_t rmc_knob_count(void)
{
    RMCI_SERIAL();
    return NCORE + nextra;
}

const rmc_knob_t *rmc_knob_get(size_t i)
{
    RMCI_SERIAL();
    return i < NCORE ? &knobs[i] : i < NCORE + nextra ? extra[i - NCORE] : NULL;
}

const char *rmc_knob_value(const char *name)
{
    RMCI_SERIAL();
    if (!name)
        return NULL;
    for (size_t i = 0; i < rmc_knob_count(); i++) {
        const rmc_knob_t *k = rmc_knob_get(i);
        if (strcmp(k->name, name) == 0) {
            const char *v = getenv(name);
            return (v && *v) ? v : k->defval;
        }
    }
    return NULL;
}

rmc_status_t rmc_knob_register(const rmc_knob_t *knob)
{
    RMCI_SERIAL();
    const char *fn = __func__;
    if (!knob || !knob->name || !knob->defval || !knob->help)
        return rmci_fail(RMC_ERR_ARG, fn, "NULL knob or knob field");
    if (strncmp(knob->name, "RMC_", 4) != 0)
        return rmci_fail(RMC_ERR_ARG, fn, "knob %s: names start with RMC_", knob->name);
    for (size_t i = 0; i < rmc_knob_count(); i++) {
        const rmc_knob_t *k = rmc_knob_get(i);
        if (k == knob)
            return RMC_OK;
        if (strcmp(k->name, knob->name) == 0)
            return rmci_fail(RMC_ERR_STATE, fn, "knob %s is registered already", knob->name);
    }
    if (nextra == MAX_EXTRA)
        return rmci_fail(RMC_ERR_TOO_BIG, fn, "more than %d knobs of layers", MAX_EXTRA);
    extra[nextra++] = knob;
    return RMC_OK;
}

long rmci_env_long(const char *name)
{
    const char *v = rmc_knob_value(name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    while (end != v && isspace((unsigned char)*end))
        end++;
    return end == v || *end || errno ? LONG_MIN : x;
}

int rmci_env_switch(const char *name)
{
    long x = rmci_env_long(name);
    if (x != LONG_MIN)
        return x > 0;
    int t = rmci_env_tri(name);
    return t == 0 || t == 1 ? t : -1;
}

int rmci_env_tri(const char *name)
{
    const char *v = rmc_knob_value(name);
    if (!v)
        return 2;
    if (!strcasecmp(v, "1") || !strcasecmp(v, "on") || !strcasecmp(v, "yes"))
        return 1;
    if (!strcasecmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no"))
        return 0;
    if (!strcasecmp(v, "auto"))
        return 2;
    return -1;
}
