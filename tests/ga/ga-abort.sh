#!/bin/sh
# Bad input to ga-compat aborts the job with "GA ERROR: <call>: <why>" (as GA does): runs
# tests/ga/gat_abort once per case at 2 ranks, and requires for each: a nonzero exit status
# within the timeout, "GA ERROR: <call>:" naming the call, and no "NOT ABORTED" (the program got
# past the bad call). The case "none" must exit 0 (so a broken program cannot pass).
# Environment: MPIEXEC (default mpiexec.mpich), GA_ABORT_PROG, RMC_TEST_TIMEOUT.
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
prog=${GA_ABORT_PROG:-tests/ga/gat_abort}
limit=${RMC_TEST_TIMEOUT:-120}
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export ASAN_OPTIONS
out=$(mktemp)
trap 'rm -f "$out" "$out.tally"' EXIT

# case | the call the message must name
cases='none|
invalid_handle|NGA_Put
use_after_destroy|NGA_Get
out_of_range_patch|NGA_Get
dimension_mismatch|GA_Copy
read_inc_type|NGA_Read_inc
null_buffer|NGA_Put
ld_too_small|NGA_Get
bad_ndim|NGA_Create
bad_type|NGA_Create
access_nonlocal|NGA_Access
gop_bad_op|GA_Dgop
mutex_out_of_range|GA_Lock
gemm_groups|GA_Dgemm
dot_groups|GA_Ddot
diag_reuse_group|GA_Diag_reuse
mutexes_twice|GA_Create_mutexes
mutexes_none|GA_Destroy_mutexes
user_type_math|GA_Scale
overlay_too_big|GA_Overlay
overlay_mirror|GA_Overlay
assemble_duplicate|GA_Assemble_duplicate
assemble_too_small|GA_Assemble_duplicate
freemem_twice|GA_Freemem
freemem_after_destroy|GA_Freemem
fence_not_init|GA_Fence
lu_solve_trans|GA_Lu_solve
linalg_serial_mismatch|GA_Lu_solve
nonmember_sync|GA_Pgroup_sync
nonmember_igop|GA_Pgroup_igop
nonmember_brdcst|GA_Pgroup_brdcst
nonmember_split|GA_Pgroup_split
nonmember_split_irreg|GA_Pgroup_split_irreg
nonmember_duplicate|GA_Pgroup_duplicate
nonmember_set_default|GA_Pgroup_set_default
property_twice|GA_Set_property'

echo "$cases" | while IFS='|' read -r c call; do
    timeout -k 5 "$limit" "$MPIEXEC" -n 2 "$prog" "$c" < /dev/null > "$out" 2>&1
    rc=$?
    if [ "$c" != none ] && [ $rc -ne 0 ] && [ ! -s "$out" ]; then
        # an aborted job whose launcher forwarded nothing at all (seen twice on a loaded
        # machine, with no output of MPICH's own either): run the case once more, and say so
        echo "note $c: exit status $rc and no output at all: run again"
        timeout -k 5 "$limit" "$MPIEXEC" -n 2 "$prog" "$c" < /dev/null > "$out" 2>&1
        rc=$?
    fi
    why=
    if [ "$c" = none ]; then
        [ $rc -eq 0 ] || why="exit status $rc, expected 0"
        grep -q "NOT ABORTED (case none)" "$out" || why="$why; the control case did not run"
    else
        [ $rc -ne 0 ] || why="exit status 0"
        { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && why="timed out"
        grep -q "NOT ABORTED" "$out" && why="$why; returned from the bad call"
        grep -q "GA ERROR: $call: ." "$out" || why="$why; no 'GA ERROR: $call: <why>' message"
    fi
    if [ -z "$why" ]; then
        echo "ok   $c: $(grep -m1 'GA ERROR' "$out" || echo 'exit 0')"
        echo pass >> "$out.tally"
    else
        echo "FAIL $c: $why"
        sed 's/^/    | /' "$out" | head -20
        echo fail >> "$out.tally"
    fi
done
pass=$(grep -c pass "$out.tally" 2>/dev/null)
fail=$(grep -c fail "$out.tally" 2>/dev/null)
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
