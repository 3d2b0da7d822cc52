#!/bin/sh
# Runs one test command (the LOG_COMPILER of every test kind) and ends its log with its wall time,
# "run time: S s", which scripts/check.sh ranks to show the slowest runs. The exit status is the
# command's own.
t0=$(date +%s.%N)
"$@"
rc=$?
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "run time: %.1f s\n", b - a }'
exit $rc
