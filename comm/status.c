#include "rmc/status.h"
#include "config.h"
#include "rmc/comm.h"

const char *rmc_status_string(rmc_status_t s)
{
    switch (s) {
    case RMC_OK: return "success";
    case RMC_ERR_NOT_INIT: return "RMC is not initialized (call rmc_init first, not after rmc_finalize)";
    case RMC_ERR_ALREADY_INIT: return "RMC is already initialized";
    case RMC_ERR_ARG: return "invalid argument";
    case RMC_ERR_RANK: return "rank out of range";
    case RMC_ERR_NOT_REGION: return "address is not inside a live region of that rank";
    case RMC_ERR_BOUNDS: return "range crosses the end of its region";
    case RMC_ERR_HANDLE: return "unknown, freed or invalid handle";
    case RMC_ERR_ALIGN: return "address or size misaligned for the element type";
    case RMC_ERR_STRIDE: return "invalid strided or vector descriptor";
    case RMC_ERR_TYPE: return "unknown datatype or operation";
    case RMC_ERR_NOMEM: return "out of memory";
    case RMC_ERR_MPI: return "an MPI call failed";
    case RMC_ERR_STATE: return "operation not valid in the current state";
    case RMC_ERR_NOT_FOUND: return "not found";
    case RMC_ERR_TOO_BIG: return "size or count beyond a limit";
    case RMC_ERR_UNSUPPORTED: return "not supported in this build or mode";
    case RMC_ERR_INTERNAL: return "internal error";
    }
    return "unknown status code";
}

const char *rmc_version(void)
{
    return PACKAGE_VERSION;
}
