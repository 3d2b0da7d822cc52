#!/bin/sh
# ARMCI-level benchmark: RMC's libarmci against ARMCI-MPI, one source compiled twice
# (bench/bench_armci and bench/bench_armci_ampi), both run at 2 ranks in the real node mode and with
# RMC_NODE_SIZE=1, back to back; their CSV files are merged into one table per measurement:
#
#   ARMCI-MPI | RMC-ARMCI | native | RMC/ARMCI-MPI (speedup, >= 1.00x is the target) |
#   ARMCI/native (RMC's ARMCI as a share of RMC's native API speed, >= 90% is the target)
#
# With --ga (first option after BUILD_DIR) the pair is bench/bench_ga (Global Arrays, Debian's prebuilt
# libga-mpich.a, on RMC's libarmci) and bench/bench_ga_ampi (the same GA on ARMCI-MPI); there is no
# native column.
#
# Usage: scripts/bench-armci.sh [BUILD_DIR] [--ga] [bench options, e.g. --quick or --reps 11]
# Environment: MPIEXEC (default mpiexec.mpich), RMC_BENCH_OUT (directory for the CSV files and the
# merged table, default BUILD_DIR/bench-armci-results), ROUNDS (default 1): with ROUNDS=k the two
# programs run alternately k times per mode and every cell is the median of the k runs (use it on a
# busy machine). Misses are marked '!' and counted at the end (the exit status stays 0: a benchmark
# reports, it does not fail).
set -e
lib_median="$(cd "$(dirname "$0")" && pwd)/median.awk" # median() shared by the bench scripts
build=${1:-.}
[ $# -gt 0 ] && shift
rmc_prog=bench_armci
peer_prog=bench_armci_ampi
what=bench-armci
if [ "${1:-}" = "--ga" ]; then
    shift
    rmc_prog=bench_ga
    peer_prog=bench_ga_ampi
    what=bench-ga
fi
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
out=${RMC_BENCH_OUT:-$build/$what-results}
mkdir -p "$out"
for p in $rmc_prog $peer_prog; do
    if [ ! -x "$build/bench/$p" ]; then
        echo "bench-armci.sh: $build/bench/$p not built (make bench/$p; bench_armci_ampi needs" \
             "ARMCI-MPI at configure time)" >&2
        exit 1
    fi
done

ROUNDS=${ROUNDS:-1}
files=
for mode in real node1; do
    if [ $mode = node1 ]; then RMC_NODE_SIZE=1; export RMC_NODE_SIZE; else unset RMC_NODE_SIZE; fi
    r=1
    while [ $r -le "$ROUNDS" ]; do
        for p in $peer_prog $rmc_prog; do
            echo "== $p, 2 ranks, mode $mode, round $r of $ROUNDS" >&2
            f="$out/$p.$mode.r$r"
            timeout -k 10 1800 "$MPIEXEC" -n 2 "$build/bench/$p" --csv "$f.csv" "$@" \
                < /dev/null > "$f.txt" 2>&1 ||
                { echo "bench-armci.sh: $p failed ($mode), see $f.txt" >&2; exit 1; }
            files="$files $f.csv"
        done
        r=$((r + 1))
    done
done
unset RMC_NODE_SIZE

knobs="RMC_PROGRESS_THREAD=${RMC_PROGRESS_THREAD:-default} RMC_AMO=${RMC_AMO:-default}"
echo "$what: 2 ranks, $ROUNDS round(s) per mode; RMC knobs: $knobs;" \
     "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" |
    tee "$out/$what.txt"

# Merge: one table per (mode, table); rows in the order the benchmark printed them; a cell measured
# in several rounds is their median.
merged="$out/$what.csv"
awk -F, -v merged="$merged" "$(cat "$lib_median")"'
function isbw(u) { return u == "GB/s" }
{ csv_resplit() }
FNR == 1 { next }
{
    # bench,mode,ranks,table,row,x,column,unit,value (no quoted fields in these tables)
    mode = $2; tab = $4; row = $5; col = $7; unit = $8; val = $9
    if (col != "ARMCI-MPI" && col != "RMC-ARMCI" && col != "native") next
    k = mode SUBSEP tab
    if (!(k in seen)) {
        seen[k] = 1; keys[++nk] = k; kmode[k] = mode; ktab[k] = tab; kunit[k] = unit
    }
    r = k SUBSEP row
    if (!(r in rseen)) { rseen[r] = 1; rows[k, ++nr[k]] = row; rx[r] = $6 }
    vl[r, col] = vl[r, col] " " val
}
END {
    print "mode,table,row,x,unit,ARMCI-MPI,RMC-ARMCI,native,RMC/ARMCI-MPI,ARMCI/native" > merged
    misses = 0
    for (i = 1; i <= nk; i++) {
        k = keys[i]; u = kunit[k]
        printf "\n[%s] %s (%s; speedup = %s; share = RMC-ARMCI speed / native speed)\n", \
            kmode[k], ktab[k], u,
            isbw(u) ? "RMC-ARMCI / ARMCI-MPI" : "ARMCI-MPI time / RMC-ARMCI time"
        printf "%-16s %11s %11s %11s %14s %13s\n", "row", "ARMCI-MPI", "RMC-ARMCI", "native", \
            "RMC/ARMCI-MPI", "ARMCI/native"
        for (j = 1; j <= nr[k]; j++) {
            row = rows[k, j]; r = k SUBSEP row
            a = vl[r, "ARMCI-MPI"]; m = vl[r, "RMC-ARMCI"]; n = vl[r, "native"]
            a = a == "" ? "" : sprintf("%.4g", median(a))
            m = m == "" ? "" : sprintf("%.4g", median(m))
            n = n == "" ? "" : sprintf("%.4g", median(n))
            sp = ""; sh = ""; f1 = " "; f2 = " "
            if (a != "" && m != "" && a + 0 > 0 && m + 0 > 0) {
                sp = isbw(u) ? m / a : a / m
                if (sp < 1.0) { f1 = "!"; misses++ }
            }
            if (n != "" && m != "" && n + 0 > 0 && m + 0 > 0) {
                sh = isbw(u) ? 100 * m / n : 100 * n / m
                if (sh < 90.0) { f2 = "!"; misses++ }
            }
            printf "%-16s %11s %11s %11s %13s%s %12s%s\n", row, a == "" ? "-" : a, \
                m == "" ? "-" : m, n == "" ? "-" : n, sp == "" ? "-" : sprintf("%.2fx", sp), f1, \
                sh == "" ? "-" : sprintf("%.0f%%", sh), f2
            printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", kmode[k], ktab[k], row, rx[r], u, a, m, n, \
                sp == "" ? "" : sprintf("%.4f", sp), sh == "" ? "" : sprintf("%.2f", sh) >> merged
        }
    }
    printf "\ntargets: RMC/ARMCI-MPI >= 1.00x on every row, ARMCI/native >= 90%%: " \
        "%d miss(es) marked !\n", misses
}' $files | tee -a "$out/$what.txt"
echo "merged CSV: $merged; per-run output: $out/*.txt" >&2
