#!/bin/sh
# make check: tests/ga/gat_fuzz with GAT_FUZZ_ALL=1 (also the cases GA 5.8.2 aborts on or gets
# wrong, which the differential runs skip: strided access of block-cyclic and ghost arrays, complex
# element-wise patches, periodic patches wider than the array, ...) against its serial reference
# alone, for a few seeds in both node modes. Any difference from the reference fails.
build=${top_builddir:-.}
prog=$build/tests/ga/gat_fuzz
[ -x "$prog" ] || { echo "gat-fuzz-all: $prog is missing (make check builds it)"; exit 1; }
mpiexec=${MPIEXEC:-mpiexec.mpich}
limit=${RMC_TEST_TIMEOUT:-300}
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export ASAN_OPTIONS GAT_FUZZ_ALL=1
fail=0
for run in "2 real 101" "2 node1 102" "3 node1 103" "3 node2 104"; do
    set -- $run
    case $2 in
    real) unset RMC_NODE_SIZE ;;
    node*) RMC_NODE_SIZE=${2#node}; export RMC_NODE_SIZE ;;
    esac
    out=$(timeout -k 10 "$limit" $mpiexec -n "$1" "$prog" "$3" 30 2>&1)
    rc=$?
    echo "$out" | grep -E '^# (fuzz|REF)|^(ok|FAIL) '
    if [ $rc -ne 0 ] || echo "$out" | grep -q '^FAIL'; then
        echo "gat-fuzz-all: np$1 $2 seed $3 failed (exit $rc)"
        echo "$out" | tail -20
        fail=1
    fi
done
exit $fail
