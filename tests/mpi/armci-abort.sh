#!/bin/sh
# Bad input to the ARMCI API aborts the job with a message (as ARMCI-MPI does): runs
# tests/mpi/test_armci_abort once per case at 2 ranks, in the real node mode and (cases that reach
# remote addresses) with RMC_NODE_SIZE=1, and requires for each: a nonzero exit status,
# "ARMCI Error" and the case's own words on stderr/stdout, and no "NOT ABORTED" (the program got
# past the bad call). The case "none"
# must exit 0 (so a broken program cannot pass). With ARMCI_ABORT_PROG=..._ampi (the same source
# built against ARMCI-MPI) only the abort itself is required (ARMCI-MPI's messages differ).
# Environment: MPIEXEC (default mpiexec.mpich), ARMCI_ABORT_PROG, RMC_TEST_TIMEOUT.
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
prog=${ARMCI_ABORT_PROG:-tests/mpi/test_armci_abort}
limit=${RMC_TEST_TIMEOUT:-120}
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export ASAN_OPTIONS
case "$prog" in *_ampi) peer=1 ;; *) peer=0 ;; esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT
pass=0
fail=0

# case | modes | words that must appear in the message (RMC's libarmci). Checks made before any
# data moves run in the real mode only; address / bounds checks also with every peer remote.
# Modes "rmc" marks a case the peer does not abort on (ARMCI-MPI 0.3.1 answers a domain id past
# the end with a count instead).
cases='none|real node1|
put_not_allocated|real node1|ARMCI_Put
put_null_zero_size|real node1|ARMCI_Put
put_out_of_bounds|real node1|ARMCI_Put
get_bad_rank|real node1|ARMCI_Get
acc_bad_type|real|accumulate data type (99)
acc_partial_element|real node1|ARMCI_Acc
puts_bad_levels|real|ARMCI_PutS
puts_out_of_bounds|real node1|ARMCI_PutS
rmw_bad_op|real|invalid operation (42)
lock_no_mutexes|real|unallocated ARMCI mutexes
free_not_allocated|real|invalid shared pointer
gop_bad_op|real|unknown operation '"'"'xor'"'"'
gop_bitwise_float|real|unknown operation '"'"'band'"'"' for type
domain_past_end|real rmc|armci_domain_nprocs: domain
armci_error|real|application says stop
error_rank_subcomm|real|[0] ARMCI Error: error rank check
init_thread_unsafe|real rmc|RMC runs without thread safety (RMC_THREAD_SAFE=0)'

for mode in real node1; do
    if [ $mode = node1 ]; then RMC_NODE_SIZE=1; export RMC_NODE_SIZE; else unset RMC_NODE_SIZE; fi
    [ $peer = 1 ] && [ $mode = node1 ] && continue # RMC_NODE_SIZE means nothing to ARMCI-MPI
    echo "$cases" | while IFS='|' read -r c modes words; do
        case " $modes " in *" $mode "*) ;; *) continue ;; esac
        case " $modes " in *" rmc "*) [ $peer = 1 ] && continue ;; esac
        timeout -k 5 "$limit" "$MPIEXEC" -n 2 "$prog" "$c" < /dev/null > "$out" 2>&1
        rc=$?
        why=
        if [ "$c" = none ]; then
            [ $rc -eq 0 ] || why="exit status $rc, expected 0"
            grep -q "NOT ABORTED (case none)" "$out" || why="$why; the control case did not run"
        else
            [ $rc -ne 0 ] || why="exit status 0"
            [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="timed out"
            grep -q "NOT ABORTED" "$out" && why="$why; returned from the bad call"
            if [ $peer = 0 ]; then
                grep -q "ARMCI Error" "$out" || why="$why; no 'ARMCI Error' message"
                grep -qF -- "$words" "$out" || why="$why; message lacks '$words'"
            fi
        fi
        if [ -z "$why" ]; then
            echo "ok   $mode $c: $(grep -m1 'ARMCI' "$out" || echo 'exit 0')"
            echo pass >> "$out.tally"
        else
            echo "FAIL $mode $c: $why"
            sed 's/^/    | /' "$out" | head -20
            echo fail >> "$out.tally"
        fi
    done
done
pass=$(grep -c pass "$out.tally" 2>/dev/null)
fail=$(grep -c fail "$out.tally" 2>/dev/null)
rm -f "$out.tally"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
