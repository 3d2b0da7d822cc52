#!/bin/sh
# Median of several benchmark runs: reads the long-format CSV files the benchmarks write (--csv;
# bench,mode,ranks,table,row,x,column,unit,value) and prints one markdown table per (bench, mode,
# table) whose cells are the medians over the files of that cell (ratio columns likewise: the
# median of the per-run ratios, as the benchmarks wrote them).
# Usage: scripts/bench-median.sh [--tables REGEX] RUN1.csv RUN2.csv ...
# --tables keeps only the tables whose name matches REGEX (awk syntax, e.g. 'strided_|fadd').
set -e
lib_median="$(cd "$(dirname "$0")" && pwd)/median.awk" # median() shared by the bench scripts
re=.
if [ "${1:-}" = "--tables" ]; then
    re=$2
    shift 2
fi
if [ $# -lt 1 ]; then
    echo "usage: $0 [--tables REGEX] RUN.csv ..." >&2
    exit 2
fi
awk -F, -v re="$re" "$(cat "$lib_median")"'
{ csv_resplit() }
FNR == 1 { next }
$4 !~ re { next }
{
    k = $1 SUBSEP $2 SUBSEP $4
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k; kname[k] = $1 " [" $2 "] " $4 }
    if (!((k, FILENAME) in fseen)) { fseen[k, FILENAME] = 1; nf[k]++ }
    if (!((k, $7) in cseen)) { cseen[k, $7] = 1; cols[k, ++nc[k]] = $7; cunit[k, $7] = $8 }
    if (!((k, $5) in rseen)) { rseen[k, $5] = 1; rows[k, ++nr[k]] = $5 }
    v[k, $5, $7] = v[k, $5, $7] " " $9
    cnt[k, $5, $7]++
}
END {
    for (i = 1; i <= nk; i++) {
        k = keys[i]
        printf "\n%s (median of %d runs)\n\n| row |", kname[k], nf[k]
        for (c = 1; c <= nc[k]; c++) {
            u = cunit[k, cols[k, c]]
            printf " %s%s |", cols[k, c], u == "" ? "" : " [" u "]"
        }
        printf "\n|---|"
        for (c = 1; c <= nc[k]; c++) printf "---|"
        printf "\n"
        for (r = 1; r <= nr[k]; r++) {
            printf "| %s |", rows[k, r]
            for (c = 1; c <= nc[k]; c++) {
                l = v[k, rows[k, r], cols[k, c]]
                printf " %s |", l == "" ? "-" : sprintf("%.4g", median(l))
            }
            printf "\n"
        }
    }
}' "$@"
