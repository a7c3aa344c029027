#!/usr/bin/env bash
# Proves the README's set-up on a machine that never installed a CUDA toolkit:
# in a private mount namespace every /usr/local/cuda* folder is covered by an
# empty one and every CUDA tool on PATH by an empty file, CUDA_HOME, CUDA_PATH
# and the cuda folders on PATH are cleared, and nvcc is asserted absent; then
# scripts/setup.sh builds the binary into its own folder (the tests and
# benches, which compile the same sources, are the main build's:
# PERFBENCH_CMAKE_ARGS=-DPERFBENCH_BUILD_TESTS=OFF, PERFBENCH_BUILD_TARGET=
# perfbench; after the main build, all but the CUDA sources come from ccache:
# docs/building.md) and `run --quick --suite selftest` must pass. Needs root (or unprivileged user namespaces) for
# `unshare -m`; where the namespace cannot be made it fails, it never skips.
#
#   BUILD_DIR  build folder for the toolkit-less set-up (default: build-notoolkit)
set -euo pipefail
cd "$(dirname "$0")/.."
export BUILD_DIR="${BUILD_DIR:-build-notoolkit}"

if [ "${1:-}" != "--inside" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    exec unshare -m "$0" --inside
  fi
  exec unshare -r -m "$0" --inside
fi

say() { printf 'no-toolkit-check: %s\n' "$*" >&2; }
empty="$(mktemp -d)"
blank="$(mktemp)"
mount --make-rprivate / 2>/dev/null || true
for d in /usr/local/cuda /usr/local/cuda-*; do
  [ -d "$d" ] && mount --bind "$empty" "$d" && say "hid $d"
done
IFS=: read -ra path_dirs <<<"$PATH"
for d in "${path_dirs[@]}"; do
  for tool in nvcc ptxas nvlink fatbinary cudafe++ bin2c __nvcc_device_query; do
    [ -e "$d/$tool" ] && mount --bind "$blank" "$d/$tool" && say "hid $d/$tool"
  done
done
unset CUDA_HOME CUDA_PATH CUDACXX CUDAToolkit_ROOT CUDA_TOOLKIT_ROOT_DIR
export LIBRARY_PATH=""
PATH="$(printf '%s' "$PATH" | tr ':' '\n' | grep -vi cuda | paste -sd:)"
export PATH
if nvcc --version >/dev/null 2>&1 || [ -n "$(ls -A /usr/local/cuda 2>/dev/null)" ]; then
  say "FAIL: the CUDA toolkit is still visible"
  exit 1
fi
say "toolkit hidden (nvcc absent); set-up into $BUILD_DIR"
start=$(date +%s)
rm -rf "$BUILD_DIR"
PERFBENCH_CMAKE_ARGS="${PERFBENCH_CMAKE_ARGS:--DPERFBENCH_BUILD_TESTS=OFF}" \
  PERFBENCH_BUILD_TARGET="${PERFBENCH_BUILD_TARGET:-perfbench}" scripts/setup.sh
say "set-up took $(( $(date +%s) - start )) s"
db="$(mktemp -d)/no-toolkit.db"
# selftest/fake/mode:throw fails on purpose (exit 4); every other variant must
# be ok, or skipped as selftest/fake/mode:skip is.
code=0
"$BUILD_DIR/perfbench" run --quick --suite selftest --db "$db" || code=$?
"$BUILD_DIR/perfbench" show latest --format json --db "$db" | python3 -c '
import json, sys
code = int(sys.argv[1])
bad = sorted({r["workload"] + str(r["params"]) + ": " + r["status"] for r in json.load(sys.stdin)["results"]
              if (r["status"] != "ok") != (r["workload"] == "fake" and r["params"].get("mode") in ("throw", "skip"))})
if code != 4 or bad:
    sys.exit("no-toolkit-check: FAIL: run exited %d (4 expected: mode:throw fails on purpose); unexpected: %s" % (code, bad))
' "$code"
"$BUILD_DIR/perfbench" env | grep -q '^cuda_compiled *false' || { say "FAIL: env does not say cuda_compiled false"; exit 1; }
say "ok: set-up and run --quick --suite selftest without a CUDA toolkit"
