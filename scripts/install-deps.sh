#!/usr/bin/env bash
# Installs every Debian package RMC needs to build, test and benchmark. Run as root (or with sudo).
# Skips apt-get entirely when everything is already installed.
set -euo pipefail

PKGS=(
  build-essential autoconf automake libtool pkg-config   # build system
  mpich libmpich-dev                                     # MPI (RMC names MPICH explicitly)
  libhwloc-dev                                           # topology (CPU atomics: GCC builtins)
  libudev-dev                                            # hwloc's static libs (pkg-config --static)
  libcmocka-dev                                          # tests
  libarmci-mpi-dev                                       # ARMCI-MPI: peer in tests and benchmarks
  libglobalarrays-dev libscalapack-mpich-dev             # Global Arrays: peer (GA links ScaLAPACK);
                                                         # ScaLAPACK: pdgemm, the GEMM peer
  libopenblas-dev                                        # BLAS of the matrices (one thread per rank)
  gnuplot-nox                                            # benchmark plots (PNG)
)

missing=()
for p in "${PKGS[@]}"; do
  [[ $p == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-deps: need root (or sudo) to apt-get install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
