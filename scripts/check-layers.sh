#!/usr/bin/env bash
# The layering check (docs/internals.md, "Who may reach whom"), run by `make check`:
#   scripts/check-layers.sh [SRCDIR [BUILDDIR]]
# Fails, naming file, line and rule, when library code includes a header of, or calls a function
# defined in, a folder it must not reach, or when the include graph between folders has a cycle.
#   includes: every #include "..." / <rmc...> / <armci.h>-style line of the library's .c/.h files;
#   calls:    `nm` on the built objects of the libraries: every undefined symbol of an object is
#             mapped to the folder whose object defines it.
# Folders that do not exist (yet) are not checked. Exit 0 when clean, 1 on a violation, 77 (skip)
# never: the check always has something to read.
set -uo pipefail
src=$(cd "${1:-${srcdir:-.}}" && pwd)
build=$(cd "${2:-.}" && pwd)

# ------------------------------------------------------------------------------ folders ---
# Layer of a path relative to the source tree (library code only; other paths print nothing).
layer_of() {
    case $1 in
    comm/strided/*) echo strided ;;
    comm/amo/*) echo amo ;;
    comm/progress/*) echo progress ;;
    comm/*/*) echo "comm-other" ;;
    comm/*) echo core ;;
    include/rmc/strided.h) echo strided ;;
    include/rmc/amo.h) echo amo ;;
    include/rmc/progress.h) echo progress ;;
    include/rmc.h) echo public-all ;;
    include/rmc/types.h | include/rmc/gptr.h | include/rmc/promise.h | include/rmc/array.h | \
        include/rmc/queue.h | include/rmc/containers.h) echo containers ;;
    include/rmc/*) echo core ;;
    armci-compat/*) echo armci ;;
    containers/*) echo containers ;;
    ga-compat/*) echo ga ;;
    tests/*) echo tests ;;
    bench/*) echo bench ;;
    *) echo other ;;
    esac
}

# allowed FROM TO PUBLIC: may layer FROM reach layer TO (through a public header when PUBLIC=1)?
allowed() {
    local from=$1 to=$2 pub=$3
    [ "$from" = "$to" ] && return 0
    case $to in tests | bench) return 1 ;; esac
    case $from in
    core) return 1 ;;                                      # core knows no sub-layer
    strided) [ "$to" = core ] ;;
    progress) [ "$to" = core ] ;;
    amo) [ "$to" = core ] || [ "$to" = progress ] ;;
    armci) [ "$pub" = 1 ] ;;                               # comm's public headers only
    containers) [ "$pub" = 1 ] && [ "$to" != armci ] && [ "$to" != ga ] ;;
    ga) [ "$to" = containers ] || { [ "$pub" = 1 ] && [ "$to" != armci ]; } ;;
    *) return 0 ;;
    esac
}

fail=0
report() { echo "check-layers: $*"; fail=1; }

# ----------------------------------------------------------------------------- includes ---
lib_files=$(cd "$src" && find comm armci-compat containers ga-compat -name '*.[ch]' 2>/dev/null | sort)
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for f in $lib_files; do
    from=$(layer_of "$f")
    dir=$(dirname "$f")
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$src/$f" | while IFS= read -r line; do
        ln=${line%%:*}
        inc=$(printf '%s' "${line#*:}" | sed -E 's/^[^<"]*[<"]([^>"]*)[>"].*/\1/')
        target=
        if [[ ${line#*:} == *'"'* ]]; then
            # quoted: relative to the including file, then the include paths
            for cand in "$dir/$inc" "include/$inc" "armci-compat/include/$inc"; do
                c=$(cd "$src" && realpath -m --relative-to=. "$cand")
                if [ -f "$src/$c" ]; then target=$c; break; fi
            done
        else
            for cand in "include/$inc" "armci-compat/include/$inc"; do
                if [ -f "$src/$cand" ]; then target=$cand; break; fi
            done
        fi
        [ -n "$target" ] || continue # a system header
        to=$(layer_of "$target")
        pub=0
        case $target in include/*) pub=1 ;; esac
        if [ "$to" = public-all ]; then
            # the umbrella header reaches every public header: for code above comm only
            case $from in armci | containers | ga) to=core ;; *) to=all-of-comm ;; esac
        fi
        if [ "$to" = comm-other ] || [ "$from" = comm-other ]; then
            echo "check-layers: $f:$ln: $target is in an unknown comm sub-folder (add it to scripts/check-layers.sh)"
            echo X >> "$edges.fail"
        elif ! allowed "$from" "$to" "$pub"; then
            echo "check-layers: $f:$ln: includes $target: $from must not reach $to"
            echo X >> "$edges.fail"
        fi
        [ "$from" != "$to" ] && echo "$from $to" >> "$edges"
    done
done
if [ -s "$edges.fail" ]; then fail=1; fi
rm -f "$edges.fail"
# folder-level include cycles (tsort names the loop on stderr)
if [ -s "$edges" ]; then
    loops=$(sort -u "$edges" | tsort 2>&1 >/dev/null | sed "s/^tsort: //" | grep -v "input contains a loop")
    if [ -n "$loops" ]; then
        report "include cycle between folders: $(echo "$loops" | tr '\n' ' ')"
    fi
fi

# -------------------------------------------------------------------------------- calls ---
# The libraries' objects: libtool keeps them beside the sources (non-PIC) and in .libs (PIC).
objs=$(cd "$build" && find comm armci-compat containers ga-compat -name '*.lo' 2>/dev/null | sort)
if [ -z "$objs" ]; then
    report "no library objects under $build (build first)"
    exit 1
fi
defs=$(mktemp)
trap 'rm -f "$edges" "$defs"' EXIT
objfile() { # the .o of a .lo
    local lo=$1 d b
    d=$(dirname "$lo")
    b=$(basename "$lo" .lo)
    if [ -f "$build/$d/$b.o" ]; then echo "$build/$d/$b.o"; else echo "$build/$d/.libs/$b.o"; fi
}
for lo in $objs; do
    o=$(objfile "$lo")
    [ -f "$o" ] || { report "object of $lo missing"; continue; }
    layer=$(layer_of "$lo")
    nm -P --defined-only --extern-only "$o" | awk -v L="$layer" -v O="$lo" '{print $1, L, O}' >> "$defs"
done
for lo in $objs; do
    o=$(objfile "$lo")
    [ -f "$o" ] || continue
    from=$(layer_of "$lo")
    nm -P --undefined-only "$o" | awk '{print $1}' | while read -r sym; do
        hit=$(awk -v s="$sym" '$1 == s {print $2, $3; exit}' "$defs")
        [ -n "$hit" ] || continue # MPI, libc, hwloc, ...
        to=${hit%% *}
        where=${hit#* }
        pub=0
        case $sym in rmc_*) pub=1 ;; esac # the public API of comm
        if ! allowed "$from" "$to" "$pub"; then
            echo "check-layers: ${lo%.lo}: calls $sym (defined in ${where%.lo}): $from must not reach $to"
            echo X >> "$defs.fail"
        fi
    done
done
[ -s "$defs.fail" ] && fail=1
rm -f "$defs.fail"

if [ $fail = 0 ]; then
    echo "check-layers: clean ($(echo "$lib_files" | wc -w) files, $(echo "$objs" | wc -w) objects)"
fi
exit $fail
