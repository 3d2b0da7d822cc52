#!/bin/sh
# Install test of ga-compat: the install rules into DESTDIR=tmp, then a GA program (tests/ga/gat_basic.c)
# compiled and linked against the staged install only, with
#   mpicc.mpich prog.c $(pkg-config --cflags --libs rmc-ga)
#   mpicc.mpich prog.c $(ga-config --cflags) $(ga-config --ldflags) $(ga-config --libs)
# and, against a copy of the install holding only the static libraries (librmc*.a),
#   mpicc.mpich prog.c $(pkg-config --static --cflags --libs rmc-ga)
#   mpicc.mpich prog.c $(ga-config --cppflags) $(ga-config --ldflags) $(ga-config --libs)
# (every library the static ones need must be named), and each run on 2 ranks. ga-config must
# also answer every option of GA's own ga-config (its --help list; GA's installed script, when
# there is one, is compared), each with exit status 0. The staged .pc files and ga-config name the
# configure prefix, so their prefix lines are pointed at the staging directory first (what an
# installed copy would say). Costs two more links and runs (a few seconds).
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
# the static copy: the same headers, .pc files and ga-config, only the .a libraries
st=$tmp/static
mkdir -p "$st/lib/pkgconfig" "$st/bin"
ln -s "$prefix/include" "$st/include"
for l in "$b/.libs/librmc.a" "$b/containers/.libs/librmc_containers.a" \
  "$b/ga-compat/.libs/librmc_ga.a"; do
  cp "$l" "$st/lib/" || { echo "ga-install.sh: $l not built (configure --enable-static)"; exit 1; }
done
cp "$libdir/pkgconfig/rmc.pc" "$pc" "$st/lib/pkgconfig/"
cp "$cfg" "$st/bin/ga-config"
for f in "$st/lib/pkgconfig/rmc.pc" "$st/lib/pkgconfig/rmc-ga.pc" "$st/bin/ga-config"; do
  sed -i "s|^prefix=.*|prefix=$st|" "$f"
done
# ga-config answers every option it lists and every option of GA's ga-config
sh "$cfg" --help > "$tmp/help" || { echo "ga-install.sh: ga-config --help failed"; exit 1; }
opts=$(sed -n 's/^  \(--[a-z0-9_-]*\).*/\1/p' "$tmp/help")
[ -n "$opts" ] || { echo "ga-install.sh: ga-config --help lists no option"; exit 1; }
gacfg=
for g in /usr/lib/x86_64-linux-gnu/ga/mpich/bin/ga-config /usr/bin/ga-config; do
  [ -f "$g" ] && { gacfg=$g; break; }
done
if [ -n "$gacfg" ]; then
  for o in $(sh "$gacfg" --help | sed -n 's/^  \(--[a-z0-9_-]*\).*/\1/p'); do
    echo "$opts" | grep -qx -- "$o" || { echo "ga-install.sh: ga-config lacks $o of $gacfg"; exit 1; }
  done
else
  echo "ga-install.sh: no GA ga-config installed: option set not compared"
fi
for o in $opts; do
  v=$(sh "$cfg" "$o") || { echo "ga-install.sh: ga-config $o failed"; exit 1; }
  echo "ga-config $o: $v"
done
sh "$cfg" --no-such-option 2>/dev/null && { echo "ga-install.sh: an unknown option passed"; exit 1; }
want=0
grep -q '^SCALAPACK_LIBS = .' "$b/Makefile" && want=1
[ "$(sh "$cfg" --use_scalapack)" = $want ] || { echo "ga-install.sh: --use_scalapack is not $want"; exit 1; }
[ "$(sh "$cfg" --enable-f77)" = no ] || { echo "ga-install.sh: --enable-f77 is not no"; exit 1; }
cp "$src/tests/ga/gat_basic.c" "$src/tests/ga/gatest.h" "$tmp/"
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cc=$(sh "$cfg" --cc)
set -x
$cc "$tmp/gat_basic.c" -o "$tmp/pc" $(pkg-config --cflags --libs rmc-ga) -Wl,-rpath,"$libdir" || exit 1
$cc "$tmp/gat_basic.c" -o "$tmp/cfg" $(sh "$cfg" --cflags) $(sh "$cfg" --ldflags) $(sh "$cfg" --libs) \
  -Wl,-rpath,"$libdir" || exit 1
PKG_CONFIG_PATH="$st/lib/pkgconfig" $cc "$tmp/gat_basic.c" -o "$tmp/pc_static" \
  $(PKG_CONFIG_PATH="$st/lib/pkgconfig" pkg-config --static --cflags --libs rmc-ga) || exit 1
$cc "$tmp/gat_basic.c" -o "$tmp/cfg_static" $(sh "$st/bin/ga-config" --cppflags) \
  $(sh "$st/bin/ga-config" --ldflags) $(sh "$st/bin/ga-config" --libs) || exit 1
set +x
for p in pc cfg pc_static cfg_static; do
  LD_LIBRARY_PATH="$libdir" timeout -k 10 "${RMC_TEST_TIMEOUT:-300}" $mpiexec -n 2 "$tmp/$p" >"$tmp/$p.out" 2>&1
  rc=$?
  tail -3 "$tmp/$p.out"
  [ $rc -eq 0 ] && ! grep -q '^FAIL' "$tmp/$p.out" || { cat "$tmp/$p.out"; echo "ga-install.sh: $p failed"; exit 1; }
done
echo "ga-install.sh: installed headers, librmc_ga, rmc-ga.pc and ga-config build and run a GA program"
