#!/bin/bash
# The way the thread race was first seen: tests/threads.test.js, four copies at once on the machine's
# cores, round after round. Keeps the log of every failing copy (its message names the token rows
# that differ) and prints a running count. Not a test: a run of a few hundred copies takes an hour.
#   bash bench/threads-tests-at-once.sh [ROUNDS=100] [COPIES=4] [OUT=/tmp/mlpscope-threads-at-once]
set -u
rounds=${1:-100}; copies=${2:-4}; out=${3:-/tmp/mlpscope-threads-at-once}
cd "$(dirname "$0")/.."
mkdir -p "$out"
fails=0; runs=0
for r in $(seq 1 "$rounds"); do
  for k in $(seq 1 "$copies"); do
    ( home=$(mktemp -d); HOME=$home node --test tests/threads.test.js > "$out/r$r-$k.log" 2>&1; echo $? > "$out/r$r-$k.rc"; rm -rf "$home" ) &
  done
  wait
  for k in $(seq 1 "$copies"); do
    runs=$((runs + 1))
    if [ "$(cat "$out/r$r-$k.rc")" != 0 ]; then
      fails=$((fails + 1))
      echo "round $r copy $k: $(grep -m1 -o 'threads differ from 1.*' "$out/r$r-$k.log" || grep -m1 'not ok' "$out/r$r-$k.log")"
    else rm -f "$out/r$r-$k.log"; fi
    rm -f "$out/r$r-$k.rc"
  done
done
echo "$runs runs of tests/threads.test.js, $copies at a time: $fails failed (logs in $out)"
