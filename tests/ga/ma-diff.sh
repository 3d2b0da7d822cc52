#!/bin/sh
# make check: tests/ga/ma_diff.c's scenario against ga-compat's MA and against GA 5.8.2's own
# (Debian's libga-mpich.a); the outputs (stdout and stderr in order) must be identical once
# addresses and base-array indices are masked. Skips (77) when GA is not there (configure found no
# Global Arrays, so ma_diff_ga was not built).
build=${top_builddir:-.}
rmc=$build/tests/ga/ma_diff_rmc
ga=$build/tests/ga/ma_diff_ga
[ -x "$rmc" ] || { echo "ma-diff: $rmc is missing (make check builds it)"; exit 1; }
[ -x "$ga" ] || { echo "ma-diff: no GA build ($ga): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# masked: addresses, base-array indices, and AddressSanitizer's note (ASan build) on the
# petabyte malloc that must fail
mask() {
    sed -e '/^==[0-9]*==WARNING: AddressSanitizer failed to allocate/d' \
        -e 's/0x[0-9a-f]*/0xADDR/g' \
        -e 's/\(index for client space:[[:space:]]*\)-\{0,1\}[0-9]*/\1IDX/'
}
"$rmc" > "$tmp/rmc.raw" 2>&1; echo "exit $?" >> "$tmp/rmc.raw"
"$ga" > "$tmp/ga.raw" 2>&1; echo "exit $?" >> "$tmp/ga.raw"
mask < "$tmp/rmc.raw" > "$tmp/rmc.out"
mask < "$tmp/ga.raw" > "$tmp/ga.out"
# ma_set_error_callback: GA 5.8.2 declares it without defining it; the GA build of ma_diff.c
# defines it (-DMA_DIFF_GA) with ga-compat's meaning.
if ! diff -u "$tmp/ga.out" "$tmp/rmc.out"; then
    echo "ma-diff: ga-compat's MA differs from GA's (- GA, + ga-compat)"
    exit 1
fi
lines=$(wc -l < "$tmp/rmc.out")
if [ "$lines" -lt 800 ] || ! grep -q 'calls per routine' "$tmp/rmc.out"; then
    echo "ma-diff: only $lines lines of output: the scenario did not run to its end"
    exit 1
fi
echo "ma-diff: $lines lines identical (GA 5.8.2 and ga-compat)"
