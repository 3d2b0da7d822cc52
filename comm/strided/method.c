/* The strided layer (a layer of the core's registry), its protocol knob and the automatic choice
 * among the protocols, and its counters. */
#include "config.h"
#include <string.h>
#include <strings.h>
#include "strided_rt.h"

rmc_strided_stats_t rmci_sstats;
unsigned long rmci_strided_epoch;
static rmc_strided_method_t method;

static const char *const method_names[] = {"auto", "datatype", "list", "pack"};

const char *rmc_strided_method_name(rmc_strided_method_t m)
{
    return (unsigned)m < 4 ? method_names[m] : "?";
}

rmc_strided_method_t rmci_strided_method(void)
{
    return method;
}

rmc_status_t rmc_strided_method_set(rmc_strided_method_t m)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if ((unsigned)m > RMC_STRIDED_PACK)
        return rmci_fail(RMC_ERR_ARG, __func__, "unknown method %d", (int)m);
    method = m;
    rmci_strided_epoch++;
    return RMC_OK;
}

rmc_strided_method_t rmc_strided_method_get(void)
{
    RMCI_SERIAL();
    return method;
}

rmc_status_t rmc_strided_stats(rmc_strided_stats_t *s)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    if (!s)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL stats pointer");
    *s = rmci_sstats;
    return RMC_OK;
}

MPI_Datatype rmci_acc_mpi_type(rmc_acc_type_t t)
{
#define MPI_TYPE_(code, T, U, lanes, mpi)                                                          \
    case code:                                                                                     \
        return mpi;
    switch (t) {
        RMCI_ACC_TYPES(MPI_TYPE_)
    }
#undef MPI_TYPE_
    return MPI_DATATYPE_NULL;
}

/* Automatic protocol choice for a remote patch of nchunks (>= 2) chunks of l0 bytes whose local
 * side is dense (one contiguous block) or not. Measured on this machine with RMC_NODE_SIZE=1
 * (bench/bench_strided protocol sweep; MPICH 4.0.2 ch4:ucx, same-host UCX transports):
 *  - list: each chunk is one RDMA-style op of cost o (seed 004 eq. 9, T = o.m/l0 + m.G); it reaches
 *    5-9 GB/s for chunks of 4 KiB and more, but only ~0.02-0.5 GB/s for chunks below 256 B;
 *  - datatype / pack (8- or 4-byte element types, 16 KiB pieces): active-message transfers at
 *    4-5 GB/s (get/put) and 1-4.5 GB/s (accumulate, rising with l0), nearly independent of l0;
 *  - with a dense local side "datatype" is "pack" without the copy; with a scattered local side
 *    packing locally beats MPI's origin datatype by up to 1.5x for chunks up to 256 B.
 * So: get/put use the list from 4 KiB chunks (at 4 KiB list and typed are within 5%, list
 * ahead on a quiet machine) and for at most 4 chunks; accumulates from 4 KiB chunks when there are
 * at most 256; everything else is typed. */
static rmc_strided_method_t auto_method(int kind, size_t l0, size_t nchunks, int ldense)
{
    if (kind != SK_ACC) {
        if (nchunks <= 4 || l0 >= 4096)
            return RMC_STRIDED_LIST;
    } else if (l0 >= 4096 && nchunks <= 256) {
        return RMC_STRIDED_LIST;
    }
    return ldense ? RMC_STRIDED_DATATYPE : RMC_STRIDED_PACK;
}

rmc_strided_method_t rmci_strided_choose(int kind, size_t l0, size_t nchunks, int ldense)
{
    return method != RMC_STRIDED_AUTO ? method : auto_method(kind, l0, nchunks, ldense);
}

/* Segments are chunks whose local side is scattered: the same thresholds as a strided patch with
 * a non-dense local side. */
rmc_strided_method_t rmci_vector_auto(int kind, size_t seg, size_t nseg)
{
    return auto_method(kind, seg, nseg, 0);
}

/* ------------------------------------------------------------------------- the layer --- */

static rmc_status_t strided_init(void *arg)
{
    (void)arg;
    memset(&rmci_sstats, 0, sizeof(rmci_sstats));
    const char *v = rmc_knob_value("RMC_STRIDED_METHOD");
    int m = -1;
    for (int i = 0; i < 4; i++)
        if (strcasecmp(v, method_names[i]) == 0)
            m = i;
    if (m < 0 && RMCI.rank == 0) /* a tuning knob: a typo costs speed, not the job */
        rmci_async_fail("rmc_init",
                        "RMC_STRIDED_METHOD=%s unknown (auto|datatype|list|pack); "
                        "using auto",
                        v);
    method = m < 0 ? RMC_STRIDED_AUTO : (rmc_strided_method_t)m;
    rmci_strided_epoch++;
    return RMC_OK; /* the same on every rank */
}

static void strided_finalize(void *arg)
{
    (void)arg;
    rmci_stage_release(); /* the windows are still alive: layers finalize before regions go */
    rmci_dt_clear();
    method = RMC_STRIDED_AUTO;
}

static void strided_region_freed(rmc_region_h r, void *arg)
{
    (void)arg;
    rmci_stage_forget(r);
}

static const rmc_layer_t strided_layer = {
    .name = "strided",
    .init = strided_init,
    .finalize = strided_finalize,
    .region_freed = strided_region_freed,
};

__attribute__((constructor(203))) static void strided_register(void)
{
    rmc_layer_register(&strided_layer);
}
