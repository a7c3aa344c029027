#!/usr/bin/env bash
# CI's check, on a machine without a GPU, that the GPU scripts do not rot:
#   1. scripts/gpu-deps.sh prepares its folder (download, dpkg -x, Boost
#      pruned, within 48 MiB) and CMake configures against that prefix,
#      finding every library there rather than in /usr;
#   2. scripts/gpu-smoke.sh --device cpu --skip-build runs the steps the
#      check below lacks (env, micro for a run to show, show, diagnose,
#      profile) on the existing build (BUILD_DIR, default build) to its
#      summary, no failure; its suite steps are the check's own (one dry run,
#      not two: amp, ddp, dataloader, quant, models and peak run there);
#   3. scripts/gpu-check.sh --device cpu --skip-build, the GPU acceptance
#      test's dry run on that build: every step at small sizes, its table,
#      no failed variant, energy measured or "unavailable", the Python
#      anchors runnable (GPU-only bounds read "n/a (cpu dry run)").
# Needs apt-get (step 1) and a built perfbench (scripts/setup.sh). Takes a few
# minutes: the check runs the suites at --quick, one process each.
#
#   scripts/gpu-dry-run.sh [--help]
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
say() { printf 'gpu-dry-run: %s\n' "$*" >&2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

say "1. gpu-deps.sh into a scratch folder, then CMake against its prefix"
scripts/gpu-deps.sh "$tmp/deps"
scripts/gpu-deps.sh --check "$tmp/deps"
venv="${PERFBENCH_VENV:-.venv}"
torch_prefix="$("$venv/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
prefix="$tmp/deps/prefix/usr"
if ! cmake -S . -B "$tmp/build" -DPERFBENCH_DEPS_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$torch_prefix" \
     -DPERFBENCH_BUILD_TESTS=OFF >"$tmp/configure.log" 2>&1; then
  tail -20 "$tmp/configure.log" >&2
  say "FAILED: CMake does not configure against $prefix"
  exit 1
fi
missed=()
for var in SQLite3_INCLUDE_DIR Boost_DIR fmt_DIR benchmark_DIR nlohmann_json_DIR JPEG_INCLUDE_DIR PERFBENCH_GLOO_INCLUDE; do
  grep -q "^$var:[A-Z]*=$prefix" "$tmp/build/CMakeCache.txt" || missed+=("$var=$(grep "^$var:" "$tmp/build/CMakeCache.txt" | cut -d= -f2)")
done
if [ "${#missed[@]}" -gt 0 ]; then
  say "FAILED: found outside the prefix: ${missed[*]}"
  exit 1
fi
say "CMake found every library in the prefix"

say "2. gpu-smoke.sh --device cpu on ${BUILD_DIR:-build}"
BUILD_DIR="${BUILD_DIR:-build}" scripts/gpu-smoke.sh --device cpu --skip-build \
  --steps env,micro,show,diagnose,profile "$tmp/smoke"

say "3. gpu-check.sh --device cpu on ${BUILD_DIR:-build}"
BUILD_DIR="${BUILD_DIR:-build}" scripts/gpu-check.sh --device cpu --skip-build "$tmp/check"
say "passed"
