#!/usr/bin/env bash
# The fuzz targets' bench run: each target for SECONDS (default 600), as many
# at once as there are cores, from the corpus in tests/fuzz; crashers land in
# OUT (default ./fuzz-out). Prints each target's executions; exit 1 if any
# target found a crash or a hang (then keep the input in tests/fuzz/crashers).
#   bench/fuzz.sh BUILD_DIR [SECONDS] [OUT]
set -uo pipefail
build="$(realpath "$1")"; seconds="${2:-600}"; out="${3:-fuzz-out}"
src="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
jobs="$(nproc 2>/dev/null || echo 2)"
status=0
run() {
  mkdir -p "$out/$1"
  "$build/bench/fuzz_inputs" --target "$1" --corpus "$src/tests/fuzz/corpus/$1" --seconds "$seconds" --seed "$RANDOM" \
    --crashers "$out/$1" > "$out/$1.log" 2>&1
}
pids=()
for t in import push baseline policy; do
  run "$t" & pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
for t in import push baseline policy; do grep "executions" "$out/$t.log"; done
exit $status
