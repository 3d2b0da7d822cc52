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
