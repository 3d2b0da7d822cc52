#!/usr/bin/env bash
# Sets up a fresh machine, builds RMC and runs the demonstration: the hello example in both node
# modes, rmc_info, and a short benchmark summary against ARMCI-MPI, plain MPI and memcpy.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
bash scripts/install-deps.sh
./autogen.sh >/dev/null 2>&1
bash scripts/build.sh build/demo
cd build/demo && make -s demo
