#!/bin/sh
# Runs one differential ga-compat test: tests/ga/PROG.npN.MODE[.AMO].gadiff runs PROG (built on
# ga-compat) with N ranks in node mode MODE (real, nodeK = RMC_NODE_SIZE=K; AMO amompi / amothread
# sets RMC_AMO; AMO "progress" runs RMC's progress thread instead, RMC_PROGRESS_THREAD=1) and, when it was
# built, PROG_peer (the same source on Debian's GA 5.8.2 over ARMCI-MPI, ARMCI_USE_WIN_ALLOCATE=0:
# its defaults lose data on this MPICH) with N ranks; both must exit 0 without a FAIL line, and
# their outputs, without '#' comment lines, must be equal. The peer's run does not depend on the
# node or AMO mode (RMC's variables are unset for it): its output at N ranks is kept in
# DIR/.peer/PROG.npN.out and reused by the build's other runs of PROG at N ranks while it is newer
# than PROG_peer and this script. Environment: MPIEXEC, RMC_TEST_TIMEOUT, RMC_GADIFF_PEER=no (the
# ASan build: only PROG and its own checks).
t="$1"
dir=$(dirname "$t")
base=$(basename "$t" .gadiff)
prog=${base%%.*}
rest=${base#*.}
np=${rest%%.*}
np=${np#np}
rest=${rest#*.}
mode=${rest%%.*}
amo=
[ "$rest" != "$mode" ] && amo=${rest#*.}
case "$mode" in
  real) unset RMC_NODE_SIZE ;;
  node*) RMC_NODE_SIZE=${mode#node}; export RMC_NODE_SIZE ;;
  *) echo "ga-diff.sh: bad mode in $t" >&2; exit 99 ;;
esac
case "$amo" in
  "") ;;
  amompi | amothread) RMC_AMO=${amo#amo}; export RMC_AMO ;;
  progress) RMC_PROGRESS_THREAD=1; export RMC_PROGRESS_THREAD ;;
  *) echo "ga-diff.sh: bad AMO mode in $t" >&2; exit 99 ;;
esac
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export ASAN_OPTIONS
mpiexec=${MPIEXEC:-mpiexec.mpich}
limit=${RMC_TEST_TIMEOUT:-300}
out=$(mktemp) peer=$(mktemp)
trap 'rm -f "$out" "$peer" "$out.c" "$peer.c"' EXIT
echo "ga-compat: mpiexec -n $np $dir/$prog (RMC_NODE_SIZE=${RMC_NODE_SIZE:-unset}, RMC_AMO=${RMC_AMO:-default}, RMC_PROGRESS_THREAD=${RMC_PROGRESS_THREAD:-default})"
timeout -k 10 "$limit" $mpiexec -n "$np" "$dir/$prog" >"$out"
rc=$?
cat "$out"
[ $rc -ne 0 ] && { echo "ga-diff.sh: $prog exited with $rc"; exit 1; }
grep -q '^FAIL' "$out" && { echo "ga-diff.sh: $prog has failing checks"; exit 1; }
if [ ! -x "$dir/${prog}_peer" ]; then
  echo "# no GA 5.8.2 build of $prog: compared with its own references only"
  exit 0
fi
if [ "${RMC_GADIFF_PEER:-yes}" = no ]; then
  echo "# GA 5.8.2's side not run in this build (RMC_GADIFF_PEER=no: the plain build compares it)"
  exit 0
fi
cache="$dir/.peer/$prog.np$np.out"
if [ -f "$cache" ] && [ "$cache" -nt "$dir/${prog}_peer" ] && [ "$cache" -nt "$0" ]; then
  echo "GA 5.8.2: the output of this build's earlier run of ${prog}_peer at $np ranks ($cache)"
  cp "$cache" "$peer"
else
  echo "GA 5.8.2: mpiexec -n $np $dir/${prog}_peer (ARMCI_USE_WIN_ALLOCATE=0)"
  ARMCI_USE_WIN_ALLOCATE=0 timeout -k 10 "$limit" env -u RMC_NODE_SIZE -u RMC_AMO -u RMC_PROGRESS_THREAD $mpiexec -n "$np" \
    "$dir/${prog}_peer" >"$peer"
  rc=$?
  [ $rc -ne 0 ] && { cat "$peer"; echo "ga-diff.sh: ${prog}_peer exited with $rc"; exit 1; }
  grep -q '^FAIL' "$peer" && { cat "$peer"; echo "ga-diff.sh: ${prog}_peer has failing checks"; exit 1; }
  # (a good run only; written whole, then renamed: a run beside this one reads all of it or none)
  mkdir -p "$dir/.peer" && cp "$peer" "$cache.$$" && mv -f "$cache.$$" "$cache"
fi
grep '^# GA bug' "$peer"
grep -v '^#' "$out" >"$out.c"
grep -v '^#' "$peer" >"$peer.c"
if ! diff "$peer.c" "$out.c" >/dev/null; then
  echo "ga-diff.sh: ga-compat and GA 5.8.2 differ (< GA, > ga-compat):"
  diff "$peer.c" "$out.c"
  exit 1
fi
echo "ga-diff.sh: $(wc -l <"$out.c") lines equal to GA 5.8.2's"
exit 0
