#!/bin/sh
# make check: RMC_FAULT's list of sites (comm/fault.c, between "fault sites: begin" and "end") is
# exactly malloc and the MPI functions comm calls through RMCI_MPI, RMCI_MPI_RC or RMCI_MPI_ST, in
# strcmp order (fault.c looks names up with bsearch). A site the code no longer calls would be
# accepted and never fire; a call missing from the list could not be faulted. With an argument
# (a tree with comm/), checks that tree only; without, checks this one and that a planted call
# missing from the list is reported.
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-$(cd "$here/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$src/comm" -name '*.[ch]' | LC_ALL=C sort | xargs cat |
    perl -0777 -ne 'while (/RMCI_MPI(?:_RC|_ST)?\s*\(\s*(MPI_\w+)/g) { print "$1\n" }' |
    { cat; echo malloc; } | LC_ALL=C sort -u >"$tmp/called"
sed -n '/fault sites: begin/,/fault sites: end/p' "$src/comm/fault.c" |
    sed -n 's/^ *"\([^"]*\)",$/\1/p' >"$tmp/listed"
if [ "$(wc -l <"$tmp/called")" -lt 10 ]; then
    echo "check-fault-sites: found only $(wc -l <"$tmp/called") MPI calls in $src/comm"
    exit 1
fi
LC_ALL=C sort -u "$tmp/listed" >"$tmp/sorted"
if ! cmp -s "$tmp/listed" "$tmp/sorted"; then
    echo "check-fault-sites: comm/fault.c's sites[] is not in strcmp order (or has duplicates)"
    diff "$tmp/listed" "$tmp/sorted"
    exit 1
fi
if ! cmp -s "$tmp/called" "$tmp/sorted"; then
    echo "check-fault-sites: comm/fault.c's sites[] differs from the calls in comm/ (< called, > listed):"
    diff "$tmp/called" "$tmp/sorted"
    exit 1
fi
echo "check-fault-sites: $(wc -l <"$tmp/listed") sites, as comm calls them"
[ -n "$1" ] && exit 0
mkdir -p "$tmp/t/comm/amo"
cp "$src/comm/fault.c" "$src/comm/rma.c" "$tmp/t/comm/"
printf 'int f(void) { return RMCI_MPI_RC(\n    MPI_Win_sync, (w)); }\n' >"$tmp/t/comm/amo/x.c"
out=$(sh "$0" "$tmp/t" 2>&1)
case "$out" in
*"< MPI_Win_sync"*) echo "check-fault-sites: a planted call missing from the list is reported" ;;
*) echo "check-fault-sites: a planted MPI_Win_sync was not reported:"; echo "$out"; exit 1 ;;
esac
