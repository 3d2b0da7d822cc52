#!/bin/sh
# The test suite's MPI launcher: MPICH's mpiexec (RMC_TEST_MPIEXEC, the launcher configure found)
# with each rank bound to a processing unit of its own (hydra's HYDRA_BINDING=hwthread) when the
# job's ranks fit the processing units this process may use. Every MPI run of `make check` goes
# through it (tests/mpi/run-mpi.sh, and the scripts run with MPIEXEC set to it).
#
# Why: MPICH's waits spin without yielding. Two 2-rank tests side by side (make -j2) are four
# spinning processes on two cores, and the scheduler may keep both ranks of one job on the same
# core for a long time (each core has two tasks: to it the load is even). Every round trip between
# those ranks then waits for a time slice: test_kmer with RMC_NODE_SIZE=1 took 70-300 s instead of
# 1.3 s in about half of such pairs; with the ranks bound, 8 pairs of 8 took 1.3-2.3 s. A job with
# more ranks than processing units is left to the scheduler (bound, the same ranks would share a
# core for the whole run; RMC's own waits yield there, docs/testing.md). A HYDRA_BINDING the caller
# set is kept.
real=${RMC_TEST_MPIEXEC:-mpiexec.mpich}
np=
prev=
for a in "$@"; do
  case "$prev" in -n | -np) np=$a ;; esac
  prev=$a
done
if [ -z "${HYDRA_BINDING+set}" ] && [ -n "$np" ] && [ "$np" -le "$(nproc)" ] 2>/dev/null; then
  HYDRA_BINDING=hwthread
  export HYDRA_BINDING
fi
exec "$real" "$@"
