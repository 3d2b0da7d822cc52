#!/usr/bin/env bash
# Runs every benchmark program bench/bench_* of the current build directory at 2 ranks, in the real
# node mode and with RMC_NODE_SIZE=1 (every peer remote), and writes for each run
#   bench-results/<prog>.<mode>.txt   the printed tables
#   bench-results/<prog>.<mode>.csv   long-format CSV (bench,mode,ranks,table,row,x,column,unit,value)
#   bench-results/<prog>.<mode>.png   gnuplot plot (+ .gp script), when gnuplot is installed
# Usage (from the build directory; `make bench` does this):
#   scripts/bench-run.sh MPIEXEC [--quick] [more options passed to every benchmark]
# Environment: RMC_BENCH_QUICK=1 acts as --quick; RMC_BENCH_OUT=DIR replaces bench-results;
# RMC_BENCH_TIMEOUT=SECONDS per run (default 900, 300 with --quick).
# Exit status: 0 when every run succeeded (benchmarks abort on wrong data), else 1.
set -uo pipefail

if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: $0 MPIEXEC [--quick] [benchmark options]" >&2
    exit 2
fi
mpiexec=$1
shift
args=()
quick=0
for a in "$@"; do
    [ "$a" = "--quick" ] && quick=1
    args+=("$a")
done
if [ "${RMC_BENCH_QUICK:-0}" = 1 ] && [ $quick = 0 ]; then
    quick=1
    args+=("--quick")
fi
out=${RMC_BENCH_OUT:-bench-results}
limit=${RMC_BENCH_TIMEOUT:-$([ $quick = 1 ] && echo 300 || echo 900)}
mkdir -p "$out" || exit 1

progs=()
for p in bench/bench_*; do
    name=$(basename "$p")
    case "$name" in *.*) continue ;; esac # objects, sources, logs
    [ -f "$p" ] && [ -x "$p" ] && progs+=("$p")
done
if [ ${#progs[@]} -eq 0 ]; then
    echo "bench-run: no benchmark programs in $(pwd)/bench (run make first)" >&2
    exit 1
fi

echo "bench-run: ${progs[*]} at 2 ranks, real node mode and RMC_NODE_SIZE=1$([ $quick = 1 ] && echo ', quick') -> $out/"
failed=()
missed=()
t_all=$SECONDS
for p in "${progs[@]}"; do
    name=$(basename "$p")
    for mode in real node1; do
        base="$out/$name.$mode"
        if [ $mode = real ]; then envs=(env -u RMC_NODE_SIZE); else envs=(env RMC_NODE_SIZE=1); fi
        echo "=== $name ($mode)"
        t0=$SECONDS
        files=(--csv "$base.csv" --png "$base.png")
        case "$name" in bench_gacompat*)
            # its rows are CSV on stdout (so in .txt); scripts/bench-gacompat.sh merges the three
            # builds into the table with ratios
            files=() ;;
        esac
        "${envs[@]}" timeout "$limit" $mpiexec -n 2 "$p" "${args[@]}" "${files[@]}" > "$base.txt" 2>&1
        rc=$?
        cat "$base.txt"
        if [ $rc -ne 0 ]; then
            [ $rc -eq 124 ] && echo "=== $name ($mode): TIMEOUT after ${limit}s"
            echo "=== $name ($mode): FAILED (status $rc)"
            failed+=("$name.$mode")
        else
            echo "=== $name ($mode): done in $((SECONDS - t0)) s"
            grep -q 'MISSED' "$base.txt" && missed+=("$name.$mode")
        fi
    done
done

echo
echo "bench-run: $((SECONDS - t_all)) s; results in $out/:"
ls "$out" | sed 's/^/  /'
[ ${#missed[@]} -gt 0 ] && echo "bench-run: targets missed in: ${missed[*]} (cells marked ! in the tables)"
if [ ${#failed[@]} -gt 0 ]; then
    echo "bench-run: FAILED runs: ${failed[*]}"
    exit 1
fi
echo "bench-run: all runs completed"
exit 0
