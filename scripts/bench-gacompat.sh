#!/bin/sh
# ga-compat against Global Arrays 5.8.2 (issue 14): runs bench/bench_gacompat_ga (GA 5.8.2 on
# ARMCI-MPI, ARMCI_USE_WIN_ALLOCATE=0), bench/bench_gacompat_rmc (GA 5.8.2 on RMC's libarmci) and
# bench/bench_gacompat (ga-compat) at 2 ranks in the real node mode and with RMC_NODE_SIZE=1 (the
# ARMCI-MPI build runs in both too: it ignores the knob, so its column is measured twice),
# alternately ROUNDS times, and merges their rows (medians of the rounds) into one table per mode:
#
#   op size | GA/ARMCI-MPI | GA/RMC-ARMCI | ga-compat (us per operation) | ratios: ga-compat's
#   speedup over each (their time / ga-compat's time)
#
# Targets (issue 14): >= 2x GA on ARMCI-MPI on every communication row (put/get/acc, 2-D patches,
# read_inc, scatter/gather, sync, transpose), >= 1x GA on RMC's libarmci on every row, and GA_Dgemm
# >= 1.3x both GAs. Misses are marked '!' and counted (the exit status stays 0: a benchmark reports).
#
# Usage: scripts/bench-gacompat.sh [BUILD_DIR] [bench options, e.g. --quick or --reps 5]
# Environment: MPIEXEC (default mpiexec.mpich), ROUNDS (default 3), RMC_BENCH_OUT (default
# BUILD_DIR/bench-gacompat-results: per-run outputs, bench-gacompat.txt, .csv, .png).
set -e
lib_median="$(cd "$(dirname "$0")" && pwd)/median.awk" # median() shared by the bench scripts
build=${1:-.}
[ $# -gt 0 ] && shift
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
ROUNDS=${ROUNDS:-3}
out=${RMC_BENCH_OUT:-$build/bench-gacompat-results}
mkdir -p "$out"
progs="bench_gacompat_ga bench_gacompat_rmc bench_gacompat"
for p in $progs; do
    if [ ! -x "$build/bench/$p" ]; then
        echo "bench-gacompat.sh: $build/bench/$p not built (make bench/$p; the GA builds need" \
             "GA 5.8.2 and ARMCI-MPI at configure time)" >&2
        exit 1
    fi
done

files=
for mode in real node1; do
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        for p in $progs; do
            echo "== $p, 2 ranks, mode $mode, round $r of $ROUNDS" >&2
            f="$out/$p.$mode.r$r.txt"
            if [ $mode = node1 ]; then RMC_NODE_SIZE=1; export RMC_NODE_SIZE; else unset RMC_NODE_SIZE; fi
            ARMCI_USE_WIN_ALLOCATE=0 timeout -k 10 1800 "$MPIEXEC" -n 2 "$build/bench/$p" "$@" \
                < /dev/null > "$f" 2>&1 ||
                { echo "bench-gacompat.sh: $p failed ($mode), see $f" >&2; exit 1; }
            files="$files $f"
        done
        r=$((r + 1))
    done
done
unset RMC_NODE_SIZE

echo "bench-gacompat: 2 ranks, $ROUNDS round(s) per mode, medians of the rounds; load average" \
     "after the runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" | tee "$out/bench-gacompat.txt"
merged="$out/bench-gacompat.csv"
dat="$out/bench-gacompat.dat"
# Each run's file: comment lines, "op,size,us", then one op,size,us row per measurement.
awk -F, -v merged="$merged" -v dat="$dat" "$(cat "$lib_median")"'
function comm(op) { return op !~ /^(ddot|dgemm|scf_iter)$/ }
FNR == 1 {
    n = split(FILENAME, parts, "/"); base = parts[n]           # PROG.MODE.rK.txt
    split(base, f, "."); prog = f[1]; mode = f[2]
    col = prog == "bench_gacompat_ga" ? 1 : prog == "bench_gacompat_rmc" ? 2 : 3
}
/^#/ || /^op,size,us$/ || NF != 3 { next }
{
    k = mode SUBSEP $1 SUBSEP $2
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k; kmode[k] = mode; kop[k] = $1; ksz[k] = $2 }
    vl[k, col] = vl[k, col] " " $3
}
END {
    print "mode,op,size,ga_armci_mpi_us,ga_rmc_armci_us,gacompat_us,speedup_vs_armci_mpi," \
          "speedup_vs_rmc_armci,miss" > merged
    misses = 0; last = ""
    for (i = 1; i <= nk; i++) {
        k = keys[i]; m = kmode[k]; op = kop[k]
        if (m != last) {
            printf "\n[%s] us per operation (medians); speedup = GA time / ga-compat time\n", m
            printf "%-9s %-10s %12s %12s %12s %11s %11s\n", "op", "size", "GA/ARMCI-MPI", \
                "GA/RMC-ARMCI", "ga-compat", "vs A-MPI", "vs RMC-A"
            last = m
        }
        for (c = 1; c <= 3; c++) v[c] = vl[k, c] == "" ? "" : median(vl[k, c])
        s1 = v[1] != "" && v[3] > 0 ? v[1] / v[3] : ""
        s2 = v[2] != "" && v[3] > 0 ? v[2] / v[3] : ""
        t1 = op == "dgemm" ? 1.3 : comm(op) ? 2.0 : 0
        t2 = op == "dgemm" ? 1.3 : 1.0
        f1 = s1 != "" && s1 < t1 ? "!" : " "; f2 = s2 != "" && s2 < t2 ? "!" : " "
        misses += (f1 == "!") + (f2 == "!")
        printf "%-9s %-10s %12s %12s %12s %10s%s %10s%s\n", op, ksz[k], \
            v[1] == "" ? "-" : sprintf("%.4g", v[1]), v[2] == "" ? "-" : sprintf("%.4g", v[2]), \
            v[3] == "" ? "-" : sprintf("%.4g", v[3]), s1 == "" ? "-" : sprintf("%.2fx", s1), f1, \
            s2 == "" ? "-" : sprintf("%.2fx", s2), f2
        printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", m, op, ksz[k], v[1], v[2], v[3], \
            s1 == "" ? "" : sprintf("%.4f", s1), s2 == "" ? "" : sprintf("%.4f", s2), \
            (f1 == "!" ? "vs_armci_mpi" : "") (f2 == "!" ? " vs_rmc_armci" : "") >> merged
        # gnuplot data: one block per mode (index 0 real, 1 node1)
        if (s1 != "" && s2 != "") {
            if (m != dlast) { if (dlast != "") printf "\n\n" > dat; dlast = m; di = 0 }
            printf "%d \"%s %s\" %.4f %.4f\n", di++, op, ksz[k], s1, s2 > dat
        }
    }
    printf "\ntargets: ga-compat >= 2x GA/ARMCI-MPI on communication rows (all but ddot, dgemm, " \
        "scf_iter), >= 1x GA/RMC-ARMCI on every row, dgemm >= 1.3x both: %d miss(es) marked !\n", \
        misses
}' $files | tee -a "$out/bench-gacompat.txt"
# Each run's machine state (its "# machine state" line, bench/bench_util.h): on this project's VMs
# ~100 ns fast, ~400 ns slow; a round in the slow state moves every cell of its column.
{
    printf "\nmachine state per run (one cache line's round trip between two cores, ns):"
    for f in $files; do
        b=$(basename "$f" .txt)
        printf " %s %s" "${b#bench_}" "$(sed -n 's/^# machine state: .* \([0-9][0-9]*\) ns$/\1/p' "$f")"
    done
    printf "\n"
} | tee -a "$out/bench-gacompat.txt"

if command -v gnuplot > /dev/null 2>&1 && [ -s "$dat" ]; then
    gnuplot <<EOF || echo "bench-gacompat.sh: gnuplot failed, no PNG" >&2
set terminal pngcairo noenhanced size 1400,900 font ",9"
set output "$out/bench-gacompat.png"
set multiplot layout 2,1 title "ga-compat speedup over GA 5.8.2 (2 ranks; GA time / ga-compat time)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y 2
set ylabel "speedup (log)"
set xtics rotate by -45 scale 0
set grid ytics
set key top left
set arrow from graph 0, first 2 to graph 1, first 2 nohead dt 2 lc rgb "red"
set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb "black"
set title "real node mode"
plot "$dat" index 0 using 3:xtic(2) title "vs GA on ARMCI-MPI", "" index 0 using 4 title "vs GA on RMC's libarmci"
set title "RMC_NODE_SIZE=1"
plot "$dat" index 1 using 3:xtic(2) title "vs GA on ARMCI-MPI", "" index 1 using 4 title "vs GA on RMC's libarmci"
unset multiplot
EOF
fi
echo "merged CSV: $merged; plot: $out/bench-gacompat.png; per-run output: $out/*.txt" >&2
