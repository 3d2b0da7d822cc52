/* The machine's figures for the roofline of seed 001 §7.6 (bench_gemm, bench_spmul): memory
 * bandwidth and the inter-rank bandwidth RMC's blocks move at. Collective over MPI_COMM_WORLD
 * (RMC initialized, 2 ranks or more); every rank gets the same values. */
#ifndef BENCH_ROOF_H
#define BENCH_ROOF_H

/* This process's memory bandwidth (GB/s): the best of 3 copies of 256 MiB, counted as 2 x the
 * bytes (read and write). Local. */
double bench_roof_mem_bw(void);

/* Inter-rank bandwidth (GB/s): rank 0's best of 5 rmc_get of 8 MiB from rank 1 (shared memory in
 * the real node mode, MPI RMA with RMC_NODE_SIZE=1). Collective. */
double bench_roof_net_bw(void);

#endif
