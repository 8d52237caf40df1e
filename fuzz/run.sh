#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 20), two at a time, on a copy of the committed
# seed corpus; fails on any crash, leak or sanitizer report and prints executions per target.
#   fuzz/run.sh [SECONDS] [TARGET ...]
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}; shift || true
targets=${*:-json manifest config safetensors llama2c_checkpoint tokenizer_bin msbpe tokenizer_json bpe_encode chat regex sp_encode}
[ -x build/fuzz/json ] || ./build.sh fuzz || exit 1
work=$(mktemp -d)
run() {
  local t=$1
  mkdir -p "$work/$t"
  cp -r "fuzz/corpus/$t/." "$work/$t/" 2>/dev/null
  build/fuzz/$t "$work/$t" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$work/$t-" >"$work/$t.log" 2>&1
  local rc=$?
  local n; n=$(grep -o 'number_of_executed_units: [0-9]*' "$work/$t.log" | grep -o '[0-9]*$')
  if [ $rc -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error' "$work/$t.log"; then
    echo "FAIL $t (exit $rc)"; grep -E 'ERROR|runtime error|SUMMARY' "$work/$t.log" | head -5; return 1
  fi
  printf 'ok   %-20s %10s executions in %ss\n' "$t" "${n:-?}" "$secs"
}
fail=0; pids=(); names=()
for t in $targets; do
  run "$t" & pids+=($!); names+=("$t")
  if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}" || fail=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
rm -rf "$work"
exit $fail
