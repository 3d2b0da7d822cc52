/* For code built on comm: operation counters, RMC's communicator, the attentive MPI wait. */
#include "config.h"
#include <string.h>
#include "core.h"

int rmci_opc_on_;
rmc_op_counts_t rmci_opc_;

rmc_status_t rmc_op_counts(rmc_op_counts_t *counts)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT_QUERY(__func__);
    if (!counts)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL counts pointer");
    *counts = rmci_opc_;
    return RMC_OK;
}

rmc_status_t rmc_op_counts_enable(int on)
{
    RMCI_SERIAL();
    RMCI_CHECK_INIT(__func__);
    memset(&rmci_opc_, 0, sizeof(rmci_opc_));
    rmci_opc_on_ = on != 0;
    return RMC_OK;
}

rmc_status_t rmc_comm(MPI_Comm *comm)
{
    if (comm)
        *comm = MPI_COMM_NULL;
    RMCI_CHECK_INIT_QUERY(__func__);
    if (!comm)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL communicator pointer");
    *comm = rmci_info_.comm;
    return RMC_OK;
}

rmc_status_t rmc_wait_mpi(MPI_Request *req)
{
    RMCI_SERIAL();
    if (!req)
        return rmci_fail(RMC_ERR_ARG, __func__, "NULL request pointer");
    if (rmci_info_.initialized && rmci_in_handler_)
        return rmci_not_init_or_handler(__func__);
    if (!rmci_info_.initialized)
        return rmci_mpi_status("MPI_Wait", __func__,
                               RMCI_MPI_RC(MPI_Wait, (req, MPI_STATUS_IGNORE)));
    return rmci_wait_top(req, __func__);
}
