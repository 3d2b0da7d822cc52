#!/bin/sh
# The genome apps refuse bad numeric options: runs bench/bench_kmer and bench/bench_contigs at 1
# rank with each bad value below and requires exit status 1, "bad option or value:" with the
# option and its value (the case's words) on stderr, and no MPI_Abort; one bad case at 2 ranks must
# also exit 1 with the message printed once (by rank 0). Then a quick run of each app at 2 ranks
# with 3 reads (--quick takes a quarter of them: still one read) must exit 0 (so a broken build
# cannot pass). Every run is killed after 30 s (a hang fails its case).
# Environment: MPIEXEC (default mpiexec.mpich), top_builddir (default .).
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
bin=${top_builddir:-.}/bench
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export ASAN_OPTIONS
out=$(mktemp)
trap 'rm -f "$out"' EXIT
pass=0
fail=0

# adds a reason to fail the case
why_add() {
    why="${why:+$why; }$1"
}

# ranks prog "args" "words": the run must fail with exit status 1 and one message with the words
bad() {
    timeout -k 5 30 "$MPIEXEC" -n "$1" "$bin/$2" $3 < /dev/null > "$out" 2>&1
    rc=$?
    why=
    [ $rc -eq 1 ] || why_add "exit status $rc, expected 1"
    n=$(grep -cF -- "bad option or value: $4" "$out")
    [ "$n" -eq 1 ] || why_add "$n messages with 'bad option or value: $4', expected 1"
    grep -q "MPI_Abort" "$out" && why_add "MPI_Abort"
    report "$1 rank(s) $2 $3" "$(head -1 "$out")"
}

# prog "args" "words": the run must exit 0 and print the words
good() {
    timeout -k 5 30 "$MPIEXEC" -n 2 "$bin/$1" $2 < /dev/null > "$out" 2>&1
    rc=$?
    why=
    [ $rc -eq 0 ] || why_add "exit status $rc, expected 0"
    grep -qF -- "$3" "$out" || why_add "no '$3' in the output"
    report "2 ranks $1 $2" "exit 0"
}

report() {
    if [ -z "$why" ]; then
        echo "ok   $1: $2"
        pass=$((pass + 1))
    else
        echo "FAIL $1: $why"
        sed 's/^/    | /' "$out" | head -20
        fail=$((fail + 1))
    fi
}

K=bench_kmer
C=bench_contigs
big=2305843009213693952 # 2^61: 2^61 reads of 64 bases overflow size_t
bad 1 $K "--reads $big --len 64 --genome 20000" "--genome 20000 --reads $big --len 64"
bad 1 $K "--reads 100000000000 --len 100" "--genome 1000000 --reads 100000000000 --len 100"
bad 1 $K "--genome 20000abc --k 31xyz" "--genome 20000abc"
bad 1 $K "--k 31xyz" "--k 31xyz"
bad 1 $K "--reads -1" "--reads -1"
bad 1 $K "--reads 0" "--reads 0"
bad 1 $K "--len 99999999999999999999" "--len 99999999999999999999"
bad 1 $K "--k 33" "--k 33"
bad 1 $K "--len 20 --k 21" "--k 21 --len 20"
bad 1 $K "--err 1.5" "--err 1.5"
bad 1 $K "--err 0.01x" "--err 0.01x"
bad 1 $C "--min-count 99999999999" "--min-count 99999999999"
bad 1 $C "--min-ext 0" "--min-ext 0"
bad 1 $C "--batch 12x" "--batch 12x"
bad 1 $C "--k 32" "--k 32"
bad 1 $C "--reads -1" "--reads -1"
bad 2 $K "--genome 20000abc" "--genome 20000abc"
good $K "--quick --reps 1 --reads 3 --genome 20000" "1 reads of 100 per rank"
good $C "--quick --reps 1 --reads 3 --genome 20000" "1 reads of 100 per rank"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
