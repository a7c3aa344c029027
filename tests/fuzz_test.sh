#!/usr/bin/env bash
# Each fuzz target: the corpus and the kept crashers replay clean, a
# PERFBENCH_FUZZ_SECONDS run (default 60; ctest sets 10, bench/fuzz.sh is the long search) finds no crash or hang, and a run
# with the planted bug finds it (so the target can find one).
#   fuzz_test.sh FUZZ_INPUTS SOURCE_DIR
set -euo pipefail
fuzz="$(realpath "$1")"; fuzz_dir="$(realpath "$2")/tests/fuzz"
seconds="${PERFBENCH_FUZZ_SECONDS:-60}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
for t in import push baseline policy; do
  mkdir -p "crash-$t" "keep-$t" "plant-$t"
  cp "$fuzz_dir"/crashers/"$t"-* "keep-$t"/ 2>/dev/null || true
  "$fuzz" --target "$t" --replay "$fuzz_dir/corpus/$t" "keep-$t"
  "$fuzz" --target "$t" --corpus "$fuzz_dir/corpus/$t" --seconds "$seconds" --seed 1 --crashers "crash-$t" \
    || { echo "FAIL: fuzzing $t found inputs that crash or hang: keep them in tests/fuzz/crashers/ once fixed"; \
         for f in crash-$t/*; do echo "--- $f"; head -c 2000 "$f"; echo; done; exit 1; }
  "$fuzz" --target "$t" --corpus "$fuzz_dir/corpus/$t" --seconds 120 --seed 2 --crashers "plant-$t" --plant >plant.txt 2>&1 \
    || { cat plant.txt; echo "FAIL: $t did not find its planted bug in 120 s"; exit 1; }
  grep "executions" plant.txt
done
echo "fuzz: all targets clean"
