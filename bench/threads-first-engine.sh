#!/bin/bash
# Runs bench/threads-first-engine.mjs COPIES processes at a time, ROUNDS times, with two busy-looping
# processes beside them (the load under which the race shows), and counts the processes in which a
# 2-thread engine differed from one thread. Arguments after -- go to the script, e.g. --reps 20;
# NODE_FLAGS=... goes to node (e.g. --expose-gc for --gc).
#   bash bench/threads-first-engine.sh [ROUNDS=200] [COPIES=4] [OUT=/tmp/mlpscope-first-engine] [-- options]
set -u
rounds=${1:-200}; copies=${2:-4}; out=${3:-/tmp/mlpscope-first-engine}
shift $(( $# < 3 ? $# : 3 )); [ "${1:-}" = "--" ] && shift
cd "$(dirname "$0")/.."
mkdir -p "$out"
busy='const end = Date.now() + 6e6; let x = 0; while (Date.now() < end) x++;'
node -e "$busy" & b1=$!; node -e "$busy" & b2=$!
trap 'kill $b1 $b2 2>/dev/null' EXIT
fails=0; runs=0
for r in $(seq 1 "$rounds"); do
  for k in $(seq 1 "$copies"); do
    ( node ${NODE_FLAGS:-} bench/threads-first-engine.mjs "$@" > "$out/r$r-$k.log" 2>&1; echo $? > "$out/r$r-$k.rc" ) &
  done
  wait $(jobs -p | grep -v -e "^$b1\$" -e "^$b2\$")
  for k in $(seq 1 "$copies"); do
    runs=$((runs + 1))
    if [ "$(cat "$out/r$r-$k.rc")" != 0 ]; then fails=$((fails + 1)); echo "round $r copy $k: $(tail -c 300 "$out/r$r-$k.log")"
    else rm -f "$out/r$r-$k.log"; fi
    rm -f "$out/r$r-$k.rc"
  done
done
echo "$runs processes: $fails had a 2-thread engine that differed (logs in $out)"
