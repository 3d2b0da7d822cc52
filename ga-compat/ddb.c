/* GA's default blocking (gai_ddb, ga_impl.h). A first version: the process grid of
 * rmc_dist_pgrid and blocks of ceil(dims / grid), at least chunk. */
#include "ga_impl.h"

void gai_ddb(int ndim, const int64_t dims[], const int64_t chunk[], int nproc, int nblock[],
             int64_t map[])
{
    int grid[GA_MAX_DIM];
    if (rmc_dist_pgrid(ndim, dims, nproc, grid) != RMC_OK)
        for (int d = 0; d < ndim; d++)
            grid[d] = d == 0 ? nproc : 1;
    int64_t *mp = map;
    for (int d = 0; d < ndim; d++) {
        int64_t b = (dims[d] + grid[d] - 1) / grid[d];
        if (chunk && chunk[d] > b)
            b = chunk[d] < dims[d] ? chunk[d] : dims[d];
        if (b < 1)
            b = 1;
        nblock[d] = (int)((dims[d] + b - 1) / b);
        for (int i = 0; i < nblock[d]; i++)
            *mp++ = (int64_t)i * b;
    }
}
