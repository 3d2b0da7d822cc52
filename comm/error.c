/* Status strings, the error channel (rmc_last_error, RMC_VERBOSE) and the count of MPI objects
 * comm holds (rmc_resources). */
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "core.h"

const char *rmc_status_string(rmc_status_t s)
{
#define RMCI_STATUS_CASE_(name, value, text)                                                       \
    case name:                                                                                     \
        return text;
    switch (s) {
        RMC_STATUS_TABLE(RMCI_STATUS_CASE_)
    }
#undef RMCI_STATUS_CASE_
    return "unknown status code";
}

const char *rmc_version(void)
{
    return PACKAGE_VERSION;
}

/* ------------------------------------------------------------------ last error --- */

static _Thread_local char last_error[RMCI_ERRMSG];
static _Thread_local unsigned long nerrors; /* failures recorded by this thread */

unsigned long rmci_error_count(void)
{
    return nerrors;
}

const char *rmc_last_error(void)
{
    return last_error;
}

void rmc_last_error_clear(void)
{
    last_error[0] = 0;
}

static int verbose_ = -1; /* RMC_VERBOSE: -1 not read yet (rmci_error_reset) */

static int verbose(void)
{
    int v = __atomic_load_n(&verbose_, __ATOMIC_RELAXED);
    if (v < 0) {
        v = rmci_env_switch("RMC_VERBOSE") > 0;
        __atomic_store_n(&verbose_, v, __ATOMIC_RELAXED);
    }
    return v;
}

void rmci_error_reset(void)
{
    __atomic_store_n(&verbose_, -1, __ATOMIC_RELAXED); /* read again at the next failure */
}

unsigned long rmci_error_save(char *buf)
{
    memcpy(buf, last_error, RMCI_ERRMSG);
    return nerrors;
}

void rmci_error_restore(const char *buf, unsigned long count)
{
    memcpy(last_error, buf, RMCI_ERRMSG);
    nerrors = count;
}

static void record(const char *where, const char *fmt, va_list ap)
{
    nerrors++;
    int n = snprintf(last_error, RMCI_ERRMSG, "%s: ", where ? where : "rmc");
    if (n < 0 || n >= RMCI_ERRMSG)
        n = 0;
    vsnprintf(last_error + n, RMCI_ERRMSG - (size_t)n, fmt, ap);
}

static void print(const char *msg)
{
    fprintf(stderr, "rmc[%d]: %s\n", rmci_info_.initialized ? rmci_info_.rank : -1, msg);
}

rmc_status_t rmci_fail(rmc_status_t st, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(where, fmt, ap);
    va_end(ap);
    if (verbose())
        print(last_error);
    return st;
}

rmc_status_t rmc_error_vset(rmc_status_t st, const char *where, const char *fmt, va_list ap)
{
    if (st == RMC_OK) /* not a failure: the last error stays the last one */
        return st;
    if (!fmt)
        fmt = "";
    record(where, fmt, ap);
    if (verbose())
        print(last_error);
    return st;
}

rmc_status_t rmc_error_set(rmc_status_t st, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    rmc_error_vset(st, where, fmt, ap);
    va_end(ap);
    return st;
}

rmc_status_t rmc_error_in(rmc_status_t st, const char *where)
{
    return where ? rmci_in(st, where) : st;
}

rmc_status_t rmci_mpi_fail(const char *call, const char *where, int rc)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    return rmci_fail(RMC_ERR_MPI, where, "%s failed: %s", call, text);
}

rmc_status_t rmci_in(rmc_status_t st, const char *fn)
{
    if (st == RMC_OK)
        return st; /* success: the last error (of an earlier call) stays as it was */
    size_t n = strlen(fn);
    if (strncmp(last_error, fn, n) == 0 && last_error[n] == ':')
        return st;
    char old[RMCI_ERRMSG];
    memcpy(old, last_error, sizeof old);
    if (snprintf(last_error, RMCI_ERRMSG, "%s: %s", fn, old[0] ? old : rmc_status_string(st)) >=
        RMCI_ERRMSG)
        memcpy(last_error + RMCI_ERRMSG - 4, "...", 4); /* cut: say so */
    return st;
}

void rmci_verbose_note(const char *fmt, ...)
{
    if (!verbose())
        return;
    char msg[RMCI_ERRMSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print(msg);
}

void rmci_async_fail(const char *where, const char *fmt, ...)
{
    char msg[RMCI_ERRMSG];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(msg, sizeof msg, "%s: ", where);
    vsnprintf(msg + (n > 0 && n < RMCI_ERRMSG ? n : 0), sizeof msg - (size_t)(n > 0 ? n : 0), fmt,
              ap);
    va_end(ap);
    print(msg);
}

rmc_status_t rmci_not_init(const char *fn)
{
    return rmci_fail(RMC_ERR_NOT_INIT, fn, "RMC is not initialized");
}

rmc_status_t rmci_not_init_or_handler(const char *fn)
{
    if (!rmci_info_.initialized)
        return rmci_not_init(fn);
    return rmci_fail(RMC_ERR_STATE, fn,
                     "called inside an active-message handler: handlers may not call RMC's "
                     "communication functions (a wait there could only hang: the rank that sent "
                     "the request may be waiting for this handler's reply); they read and write "
                     "their own rank's memory directly and answer through their reply buffer");
}

rmc_status_t rmci_bad_rank(const char *fn, int rank)
{
    return rmci_fail(RMC_ERR_RANK, fn, "rank %d outside [0, %d)", rank, rmci_info_.nranks);
}

/* ------------------------------------------------------------------ resources --- */

static long res[RMCI_RES_TYPE + 1];

void rmci_res_count(rmci_res_t kind, int delta)
{
    __atomic_fetch_add(&res[kind], delta, __ATOMIC_RELAXED);
}

void rmc_resources(rmc_resources_t *r)
{
    RMCI_SERIAL();
    if (!r)
        return;
    r->comms = __atomic_load_n(&res[RMCI_RES_COMM], __ATOMIC_RELAXED);
    r->wins = __atomic_load_n(&res[RMCI_RES_WIN], __ATOMIC_RELAXED);
    r->groups = __atomic_load_n(&res[RMCI_RES_GROUP], __ATOMIC_RELAXED);
    r->infos = __atomic_load_n(&res[RMCI_RES_INFO], __ATOMIC_RELAXED);
    r->types = __atomic_load_n(&res[RMCI_RES_TYPE], __ATOMIC_RELAXED);
}

rmc_status_t rmci_comm_dup(MPI_Comm comm, MPI_Comm *out, const char *where)
{
    *out = MPI_COMM_NULL;
    rmc_status_t st =
        rmci_mpi_status("MPI_Comm_dup", where, RMCI_MPI_RC(MPI_Comm_dup, (comm, out)));
    if (st != RMC_OK) {
        *out = MPI_COMM_NULL;
        return st;
    }
    rmci_res_count(RMCI_RES_COMM, 1);
    st = rmci_mpi_status("MPI_Comm_set_errhandler", where,
                         RMCI_MPI_RC(MPI_Comm_set_errhandler, (*out, MPI_ERRORS_RETURN)));
    if (st != RMC_OK)
        rmci_comm_free(out);
    return st;
}

void rmci_comm_free(MPI_Comm *comm)
{
    if (*comm == MPI_COMM_NULL)
        return;
    rmci_mpi_status("MPI_Comm_free", __func__, RMCI_MPI_RC(MPI_Comm_free, (comm)));
    *comm = MPI_COMM_NULL;
    rmci_res_count(RMCI_RES_COMM, -1);
}

void rmci_group_free(MPI_Group *g)
{
    if (*g == MPI_GROUP_NULL)
        return;
    rmci_mpi_status("MPI_Group_free", __func__, RMCI_MPI_RC(MPI_Group_free, (g)));
    *g = MPI_GROUP_NULL;
    rmci_res_count(RMCI_RES_GROUP, -1);
}

void rmci_type_free(MPI_Datatype *t)
{
    if (*t == MPI_DATATYPE_NULL)
        return;
    rmci_mpi_status("MPI_Type_free", __func__, RMCI_MPI_RC(MPI_Type_free, (t)));
    *t = MPI_DATATYPE_NULL;
    rmci_res_count(RMCI_RES_TYPE, -1);
}
