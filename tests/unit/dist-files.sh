#!/bin/sh
# make check: the release tarball holds every file git tracks (but .gitignore): `make distdir` into
# a temporary directory, compared with `git ls-files`. A file the build needs but EXTRA_DIST does
# not name builds here and fails from the tarball (tests/cmocka_main.h once did). Skipped (77)
# outside a git checkout.
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd -P)
build=$(cd "${top_builddir:-.}" && pwd)
top=$(command -v git >/dev/null 2>&1 && git -C "$src" rev-parse --show-toplevel 2>/dev/null)
if [ "$top" != "$src" ]; then # not a checkout of its own (or inside another repository)
    echo "dist-files: $src is not the top of a git checkout: skipped"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! make -s -C "$build" distdir distdir="$tmp/d" >"$tmp/log" 2>&1; then
    echo "dist-files: make distdir failed:"
    cat "$tmp/log"
    exit 1
fi
(cd "$tmp/d" && find . -type f | sed 's#^\./##' | sort) >"$tmp/dist"
git -C "$src" ls-files | grep -v '^\.gitignore$' | sort >"$tmp/git"
missing=$(comm -13 "$tmp/dist" "$tmp/git")
if [ -n "$missing" ]; then
    echo "dist-files: tracked files missing from the tarball (add them to EXTRA_DIST):"
    echo "$missing"
    exit 1
fi
echo "dist-files: the tarball holds all $(wc -l <"$tmp/git") tracked files"
