# median(list): the median of the numbers in the space-separated string `list` (insertion sort:
# lists are a handful of benchmark runs). Shared by bench-median.sh, bench-armci.sh and
# bench-ab.sh: awk -f scripts/median.awk -f PROGRAM ...
function median(list,    n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) {
        t = a[i] + 0
        for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# csv_resplit(): re-splits the record as CSV (awk -F, splits inside quoted fields: bench_util's
# csv_field quotes a field holding a comma or a quote and doubles its quotes), so $1..$NF are the
# fields unquoted. Call it first for every record of a benchmark CSV.
function csv_resplit(    s, n, f, c, q, i, out) {
    if (index($0, "\"") == 0) return
    s = $0; n = 0; f = ""; q = 0
    for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (q) {
            if (c != "\"") f = f c
            else if (substr(s, i + 1, 1) == "\"") { f = f "\""; i++ }
            else q = 0
        } else if (c == "\"") q = 1
        else if (c == ",") { out[++n] = f; f = "" }
        else f = f c
    }
    out[++n] = f
    NF = n
    for (i = 1; i <= n; i++) $i = out[i]
}
