#!/usr/bin/env bash
# Builds if needed and runs every test through ctest. Extra arguments go to
# ctest (e.g. scripts/test.sh -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  scripts/setup.sh
else
  cmake --build "$BUILD_DIR" -j"$(nproc 2>/dev/null || echo 2)"
fi
cd "$BUILD_DIR"
ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" "$@"
