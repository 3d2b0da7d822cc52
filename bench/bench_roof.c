/* The roofline's machine figures (bench_roof.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <rmc.h>
#include "bench_util.h"
#include "bench_roof.h"

static double wtime(void)
{
    return (double)bench_now_ns() * 1e-9;
}

double bench_roof_mem_bw(void)
{
    size_t n = (size_t)32 << 20;
    double *x = bench_alloc(n * 8), *y = bench_alloc(n * 8), best = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = wtime();
        memcpy(y, x, n * 8);
        double bw = 2.0 * (double)n * 8 / (wtime() - t0) * 1e-9;
        if (bw > best)
            best = bw;
    }
    free(x);
    free(y);
    return best;
}

double bench_roof_net_bw(void)
{
    size_t bytes = (size_t)8 << 20;
    int np = rmc_nranks();
    void **bases = bench_alloc((size_t)np * sizeof(void *));
    rmc_region_h reg;
    bench_ck(rmc_region_alloc(bytes, bases, &reg), "rmc_region_alloc");
    char *dst = bench_alloc(bytes);
    double best = 0;
    bench_ck(rmc_barrier(), "rmc_barrier");
    if (rmc_rank() == 0)
        for (int r = 0; r < 5; r++) {
            double t0 = wtime();
            bench_ck(rmc_get(bases[1], dst, bytes, 1), "rmc_get");
            double bw = (double)bytes / (wtime() - t0) * 1e-9;
            if (bw > best)
                best = bw;
        }
    bench_ck(rmc_barrier(), "rmc_barrier");
    bench_mck(MPI_Bcast(&best, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    bench_ck(rmc_region_free(reg), "rmc_region_free");
    free(dst);
    free(bases);
    return best;
}
