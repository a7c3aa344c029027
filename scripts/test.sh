#!/usr/bin/env bash
# Builds if needed and runs every test through ctest. Extra arguments go to
# ctest: scripts/test.sh -L fast is the developer's loop (every library's
# fast tests, about a minute on 2 cores); -L slow the end-to-end rest; -L
# unit, -L integration and -L torch as before.
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
