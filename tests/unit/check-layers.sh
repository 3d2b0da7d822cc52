#!/bin/sh
# make check: the layering check on this build (scripts/check-layers.sh), and a check of the check:
# on a copy of a small tree with a known violation it must fail and name it.
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${top_builddir:-.}
sh_=bash
$sh_ "$src/scripts/check-layers.sh" "$src" "$build" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/comm/strided" "$tmp/include/rmc"
printf '#include "strided/bad.h"\n' > "$tmp/comm/init.c"
printf '/* */\n' > "$tmp/comm/strided/bad.h"
out=$($sh_ "$src/scripts/check-layers.sh" "$tmp" "$tmp" 2>&1)
case "$out" in
*"comm/init.c:1: includes comm/strided/bad.h: core must not reach strided"*) ;;
*) echo "check-layers: a core -> strided include was not reported:"; echo "$out"; exit 1 ;;
esac
echo "check-layers: a planted violation is reported"
