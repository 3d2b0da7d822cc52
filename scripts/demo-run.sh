#!/usr/bin/env bash
# The RMC demonstration (about a minute), run from the build directory by `make demo`:
#   1. examples/hello_rmc at 2 ranks, in the real node mode (neighbour reached through shared
#      memory) and with RMC_NODE_SIZE=1 (every peer remote, MPI RMA),
#   2. examples/hello_containers in both node modes, tools/rmc_info at 2 ranks (version, topology,
#      knobs),
#   3. a short bench_contig (--quick, sizes 64 B .. 4 MiB in steps of 4) in both node modes (and
#      RMC_NODE_SIZE=1 once more without RMC's progress thread): RMC against ARMCI-MPI, plain MPI
#      RMA and memcpy, with the targets marked.
# Usage: scripts/demo-run.sh MPIEXEC
set -uo pipefail

if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: $0 MPIEXEC" >&2
    exit 2
fi
mpiexec=$1
rc=0
t_all=$SECONDS

step() { # title, command...
    local title=$1
    shift
    echo
    echo "================================================================ $title"
    if ! "$@"; then
        echo "demo: FAILED: $title"
        rc=1
    fi
}

step "hello_rmc, 2 ranks, real node mode" \
    env -u RMC_NODE_SIZE timeout 60 $mpiexec -n 2 examples/hello_rmc
step "hello_rmc, 2 ranks, RMC_NODE_SIZE=1 (every peer remote)" \
    env RMC_NODE_SIZE=1 timeout 60 $mpiexec -n 2 examples/hello_rmc
step "hello_containers, 2 ranks, real node mode (queue, array, global memory)" \
    env -u RMC_NODE_SIZE timeout 60 $mpiexec -n 2 examples/hello_containers
step "hello_containers, 2 ranks, RMC_NODE_SIZE=1" \
    env RMC_NODE_SIZE=1 timeout 60 $mpiexec -n 2 examples/hello_containers
step "rmc_info, 2 ranks" \
    env -u RMC_NODE_SIZE timeout 60 $mpiexec -n 2 tools/rmc_info
step "bench_contig --quick, real node mode (rank 1 node-local: loads/stores)" \
    env -u RMC_NODE_SIZE timeout 120 $mpiexec -n 2 bench/bench_contig --quick --sizes 64:4M:4
step "bench_contig --quick, RMC_NODE_SIZE=1 (rank 1 remote: MPI RMA)" \
    env RMC_NODE_SIZE=1 timeout 120 $mpiexec -n 2 bench/bench_contig --quick --sizes 64:4M:4
# The default RMC_PROGRESS_THREAD=auto starts a progress thread only when the ranks of the (real)
# node leave a processing unit free (docs/environment.md), whatever RMC_NODE_SIZE says; where it
# runs (or is forced with RMC_PROGRESS_THREAD=1) on few cores, it competes with the ranks. The same
# run with RMC_PROGRESS_THREAD=0 shows the RMA path alone in any case (docs/benchmarks.md).
step "bench_contig --quick, RMC_NODE_SIZE=1 RMC_PROGRESS_THREAD=0 (no progress thread)" \
    env RMC_NODE_SIZE=1 RMC_PROGRESS_THREAD=0 timeout 120 $mpiexec -n 2 bench/bench_contig --quick \
    --sizes 64:4M:4

echo
echo "demo: $((SECONDS - t_all)) s, $([ $rc = 0 ] && echo 'all steps succeeded' || echo 'some steps FAILED')"
echo "demo: full benchmarks with CSV and plots: make bench (results in bench-results/)"
exit $rc
