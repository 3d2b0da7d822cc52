#!/bin/sh
# Install test of ga-compat: the install rules into DESTDIR=tmp, then a GA program (tests/ga/gat_basic.c)
# compiled and linked twice against the staged install only, with
#   mpicc.mpich prog.c $(pkg-config --cflags --libs rmc-ga)
#   mpicc.mpich prog.c $(ga-config --cflags) $(ga-config --ldflags) $(ga-config --libs)
# and run on 2 ranks. The staged .pc files and ga-config name the configure prefix, so their
# prefix lines are pointed at the staging directory first (what an installed copy would say).
# Environment (set by the test harness): top_builddir, MPIEXEC, RMC_TEST_TIMEOUT.
set -u
b=$(cd "${top_builddir:-.}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
mpiexec=${MPIEXEC:-mpiexec.mpich}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# ASan builds: the sanitizer runtime must come first; this test is about the install layout
case " $(grep '^ASAN_CFLAGS = ' "$b/Makefile") " in *sanitize*) echo "ASan build: skipped"; exit 77 ;; esac
# Headers, pkg-config files and ga-config by their install rules; the libraries copied from the
# build (libtool's install relinks them in place, which would pull them from under the tests
# running beside this one).
MAKEFLAGS= make -s -C "$b" install-includeHEADERS install-rmcincludeHEADERS \
  install-gaincludeHEADERS install-pkgconfigDATA install-binSCRIPTS DESTDIR="$tmp/stage" \
  >"$tmp/install.log" 2>&1 ||
  { tail -20 "$tmp/install.log"; echo "ga-install.sh: make install failed"; exit 1; }
pc=$(find "$tmp/stage" -name rmc-ga.pc | head -1)
[ -n "$pc" ] || { echo "ga-install.sh: no rmc-ga.pc installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
prefix=$(dirname "$libdir")
for l in "$b/.libs/librmc.so" "$b/containers/.libs/librmc_containers.so" \
  "$b/ga-compat/.libs/librmc_ga.so"; do
  cp -P "$l"* "$libdir/" || { echo "ga-install.sh: $l not built"; exit 1; }
done
cfg=$prefix/bin/ga-config
for f in "$libdir/pkgconfig/rmc.pc" "$pc" "$cfg"; do
  [ -f "$f" ] || { echo "ga-install.sh: $f missing"; exit 1; }
  sed -i "s|^prefix=.*|prefix=$prefix|" "$f"
done
for h in ga.h macdecls.h gacommon.h typesf2c.h ga-mpi.h macommon.h matypes.h; do
  [ -f "$prefix/include/rmc-ga/$h" ] || { echo "ga-install.sh: include/rmc-ga/$h missing"; exit 1; }
done
cp "$src/tests/ga/gat_basic.c" "$src/tests/ga/gatest.h" "$tmp/"
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cc=$(sh "$cfg" --cc)
set -x
$cc "$tmp/gat_basic.c" -o "$tmp/pc" $(pkg-config --cflags --libs rmc-ga) -Wl,-rpath,"$libdir" || exit 1
$cc "$tmp/gat_basic.c" -o "$tmp/cfg" $(sh "$cfg" --cflags) $(sh "$cfg" --ldflags) $(sh "$cfg" --libs) \
  -Wl,-rpath,"$libdir" || exit 1
set +x
for p in pc cfg; do
  LD_LIBRARY_PATH="$libdir" timeout -k 10 "${RMC_TEST_TIMEOUT:-300}" $mpiexec -n 2 "$tmp/$p" >"$tmp/$p.out" 2>&1
  rc=$?
  tail -3 "$tmp/$p.out"
  [ $rc -eq 0 ] && ! grep -q '^FAIL' "$tmp/$p.out" || { cat "$tmp/$p.out"; echo "ga-install.sh: $p failed"; exit 1; }
done
echo "ga-install.sh: installed headers, librmc_ga, rmc-ga.pc and ga-config build and run a GA program"
