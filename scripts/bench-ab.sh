#!/usr/bin/env bash
# A/B benchmark: one benchmark program from two builds of RMC (e.g. before and after a change, or
# with and without --disable-checks), run alternately so both see the same machine, in each node
# mode, ROUNDS times; prints per table the median of each RMC column for A and B, their speed ratio
# (B faster than A above 1x), and the peers' medians side by side; tables without a column named
# RMC list every cell with both medians and the ratio.
#   scripts/bench-ab.sh [-r ROUNDS] [-m "real node1"] [-o OUTDIR] [-s] NAME_A BUILD_A NAME_B BUILD_B \
#       PROG [benchmark options ...]
# -s: no runs, only the tables from the CSV files already in OUTDIR.
# BUILD_A/bench/PROG and BUILD_B/bench/PROG must exist. Writes OUTDIR/PROG.MODE.{A,B}.N.csv and
# OUTDIR/PROG.ab.md (the tables), default OUTDIR bench-ab. Environment: MPIEXEC (mpiexec.mpich).
set -euo pipefail
lib_median="$(cd "$(dirname "$0")" && pwd)/median.awk" # median() shared by the bench scripts
rounds=5 modes="real node1" out=bench-ab summarize_only=0
while getopts "r:m:o:s" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    m) modes=$OPTARG ;;
    o) out=$OPTARG ;;
    s) summarize_only=1 ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -lt 5 ]; then
    sed -n '2,10p' "$0" >&2
    exit 2
fi
na=$1 ba=$2 nb=$3 bb=$4 prog=$5
shift 5
mpiexec=${MPIEXEC:-mpiexec.mpich}
for b in "$ba" "$bb"; do
    [ -x "$b/bench/$prog" ] || { echo "bench-ab: $b/bench/$prog not built" >&2; exit 1; }
done
mkdir -p "$out"
run() { # build tag mode round [benchmark options]
    local b=$1 tag=$2 mode=$3 r=$4 envs
    shift 4
    if [ "$mode" = real ]; then envs=(env -u RMC_NODE_SIZE); else envs=(env RMC_NODE_SIZE=${mode#node}); fi
    "${envs[@]}" timeout 900 $mpiexec -n 2 "$b/bench/$prog" "$@" --csv "$out/$prog.$mode.$tag.$r.csv" \
        > "$out/$prog.$mode.$tag.$r.txt" 2>&1 || { echo "bench-ab: $tag run $r ($mode) failed" >&2; exit 1; }
}
for mode in $modes; do
    [ $summarize_only = 1 ] && break
    for r in $(seq 1 "$rounds"); do
        # alternate which build goes first, so neither always runs on a warmer machine
        if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
        for t in $order; do
            if [ $t = A ]; then run "$ba" A "$mode" "$r" "$@"; else run "$bb" B "$mode" "$r" "$@"; fi
        done
        echo "bench-ab: $prog $mode round $r/$rounds done" >&2
    done
done
for mode in $modes; do
    awk -F, -v na="$na" -v nb="$nb" -v mode="$mode" "$(cat "$lib_median")"'
    # A table without a column "RMC" (RMC in rows or several RMC columns, e.g. bench_amo,
    # bench_strided): every cell with both medians and their ratio; peers measure the noise.
    function long_table(T,   r, c, R, C, a, b, u, ma, mb, lower) {
        printf "\n%s [%s]: %s against %s, every cell (medians of the runs; speed ratio %s/%s, above 1x %s is faster)\n\n", T, mode, nb, na, nb, na, nb
        printf "| row | column | %s | %s | %s/%s |\n|---|---|---|---|---|\n", na, nb, nb, na
        for (r = 1; r <= nr[T]; r++) for (c = 1; c <= nc[T]; c++) {
            R = rows[T, r]; C = cols[T, c]
            a = v["A", T SUBSEP R SUBSEP C]; b = v["B", T SUBSEP R SUBSEP C]
            if (a == "" || b == "") continue
            u = unit[T, C]; lower = (u == "us" || u == "ns" || u == "ms" || u == "s")
            ma = median(a); mb = median(b)
            printf "| %s | %s | %.4g %s | %.4g %s | %.3gx |\n", R, C, ma, u, mb, u, lower ? (mb > 0 ? ma / mb : 0) : (ma > 0 ? mb / ma : 0)
        }
    }
    { csv_resplit() }
    FNR == 1 { split(FILENAME, p, "."); tag = p[length(p) - 2]; next }
    $8 == "" || $8 == "x" || $8 == "%" { next } # ratio columns
    {
        k = $4 SUBSEP $5 SUBSEP $7
        if (!(($4) in tseen)) { tseen[$4] = 1; tabs[++nt] = $4 }
        if (!(($4, $5) in rseen)) { rseen[$4, $5] = 1; rows[$4, ++nr[$4]] = $5 }
        if (!(($4, $7) in cseen)) { cseen[$4, $7] = 1; cols[$4, ++nc[$4]] = $7; unit[$4, $7] = $8 }
        v[tag, k] = v[tag, k] " " $9
    }
    END {
        for (t = 1; t <= nt; t++) {
            T = tabs[t]
            if (!((T, "RMC") in cseen)) { long_table(T); continue }
            printf "\n%s [%s]: RMC %s against %s (medians of the runs; speed ratio %s/%s, above 1x %s is faster)\n\n", T, mode, nb, na, nb, na, nb
            printf "| row | RMC %s | RMC %s | %s/%s |", na, nb, nb, na
            for (c = 1; c <= nc[T]; c++) if (cols[T, c] != "RMC") printf " %s |", cols[T, c]
            printf "\n|---|---|---|---|"
            for (c = 1; c <= nc[T]; c++) if (cols[T, c] != "RMC") printf "---|"
            printf "\n"
            u = unit[T, "RMC"]
            lower = (u == "us" || u == "ns" || u == "ms" || u == "s")
            for (r = 1; r <= nr[T]; r++) {
                R = rows[T, r]
                a = v["A", T SUBSEP R SUBSEP "RMC"]; b = v["B", T SUBSEP R SUBSEP "RMC"]
                if (a == "" || b == "") continue
                ma = median(a); mb = median(b)
                ratio = lower ? (mb > 0 ? ma / mb : 0) : (ma > 0 ? mb / ma : 0)
                printf "| %s | %.4g %s | %.4g %s | %.3gx |", R, ma, u, mb, u, ratio
                for (c = 1; c <= nc[T]; c++) {
                    C = cols[T, c]
                    if (C == "RMC") continue
                    l = v["A", T SUBSEP R SUBSEP C] v["B", T SUBSEP R SUBSEP C]
                    printf " %s |", l == "" ? "-" : sprintf("%.4g %s", median(l), unit[T, C])
                }
                printf "\n"
            }
        }
    }' "$out/$prog.$mode".[AB].*.csv
done | tee "$out/$prog.ab.md"
