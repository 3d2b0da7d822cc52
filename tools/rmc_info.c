/* rmc_info: prints RMC's version, topology, node mode, every RMC_* knob with its value (the
 * containers' too: it links librmc_containers) and each rank's container segment.
 * Run it under mpiexec.mpich to see the topology of a job; alone it shows a one-rank job. */
#include <stdio.h>
#include <string.h>
#include <rmc.h>
#include <rmc/gptr.h>

int main(int argc, char **argv)
{
    int help = argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
    if (help) {
        printf("usage: [mpiexec.mpich -n N] rmc_info\n"
               "Prints RMC's version, the topology RMC sees and every RMC_* environment knob.\n");
        return 0;
    }
    rmc_status_t st = rmc_init(MPI_COMM_WORLD);
    if (st != RMC_OK) {
        fprintf(stderr, "rmc_info: rmc_init failed: %s (%s)\n", rmc_status_string(st),
                rmc_last_error());
        return 1;
    }
    rmc_topology_t t;
    rmc_topology(&t);
    if (t.rank == 0) {
        printf("RMC %s\n", rmc_version());
        printf("ranks            : %d\n", t.nranks);
        printf("nodes            : %d (%s)\n", t.node_count,
               t.emulated ? "emulated by RMC_NODE_SIZE" : "real, from MPI shared-memory split");
        printf("node mode        : %s\n",
               t.emulated == 1 ? "RMC_NODE_SIZE=1: every peer remote (MPI RMA)"
               : t.emulated    ? "emulated nodes of RMC_NODE_SIZE ranks"
                               : "real: node-local peers by loads/stores, others by MPI RMA");
        printf("hardware         : %d cores, %d PUs\n", t.hw_cores, t.hw_pus);
        printf("\nenvironment knobs:\n");
        for (size_t i = 0; i < rmc_knob_count(); i++) {
            const rmc_knob_t *k = rmc_knob_get(i);
            printf("  %-22s = %-8s (default %s)\n      %s\n", k->name, rmc_knob_value(k->name), k->defval,
                   k->help);
        }
        printf("\nper rank:\n");
    }
    fflush(stdout);
    for (int r = 0; r < t.nranks; r++) {
        rmc_barrier();
        if (r == t.rank) {
            rmc_segment_info_t si = {0};
            rmc_segment_info(&si);
            printf("  rank %d: node %d, node rank %d of %d, bound to %d PU(s); container segment "
                   "%zu MiB committed of %zu MiB reserved\n",
                   t.rank, t.node_id, t.node_rank, t.node_size, t.hw_bound_pus,
                   si.committed >> 20, si.reserved >> 20);
            fflush(stdout);
        }
    }
    rmc_barrier();
    rmc_finalize();
    return 0;
}
