#!/usr/bin/env bash
# Configures and builds RMC out of tree: scripts/build.sh BUILD_DIR [configure options...]
# Re-running reuses an existing configuration.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$1; shift
[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null 2>&1) || { echo "autogen failed" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
if [ ! -f Makefile ]; then
  "$src/configure" -q "$@"
fi
make -j"$(nproc)" -s >/dev/null
echo "build: $dir ready"
