#!/usr/bin/env bash
# Sets up a fresh Debian machine and builds perfbench (Release) into build/.
# Idempotent: on a set-up machine it only checks, then builds incrementally.
#
#   PERFBENCH_VENV   virtual environment for the torch wheel (default: .venv, git-ignored)
#   PERFBENCH_TORCH  pinned torch version (default below; the wheel is CUDA-enabled)
#   BUILD_DIR        build directory (default: build)
#   PERFBENCH_CMAKE_ARGS  extra arguments to the first configure (e.g. -DPERFBENCH_BUILD_TESTS=OFF)
#   PERFBENCH_BUILD_TARGET  build only this target (e.g. perfbench; default: everything)
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_VERSION="${PERFBENCH_TORCH:-2.11.0}"
VENV="${PERFBENCH_VENV:-.venv}"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="$(nproc 2>/dev/null || echo 2)"

say() { printf 'setup: %s\n' "$*" >&2; }

# 1. Debian packages: compiler, CMake, the libraries perfbench links, dygraphs (inlined into
#    `perfbench report`), Chromium (the report's rendering test), PyYAML (the CI examples' test),
#    libpq (postgresql:// stores) and a PostgreSQL server with sqlite3 (the fleet test starts one).
packages=(build-essential cmake ccache git python3 python3-venv
          libsqlite3-dev nlohmann-json3-dev libboost-program-options-dev libgtest-dev
          libbenchmark-dev libgloo-dev libjpeg62-turbo-dev libfmt-dev
          libjs-dygraphs chromium python3-yaml
          libpq-dev postgresql postgresql-client sqlite3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A Python that already has venv + ensurepip (pyenv, conda) needs no python3-venv.
if python3 -c 'import venv, ensurepip' 2>/dev/null; then
  missing=("${missing[@]/python3-venv}")
fi
missing=($(printf '%s\n' "${missing[@]}" | sed '/^$/d'))
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. LibTorch from the pinned PyPI wheel, in a virtual environment.
have_torch() {
  "$VENV/bin/python" - "$TORCH_VERSION" 2>/dev/null <<'PY'
import sys, importlib.metadata as m
sys.exit(0 if m.version("torch").split("+")[0] == sys.argv[1] else 1)
PY
}
if ! have_torch; then
  say "installing torch==$TORCH_VERSION into $VENV (a few GB with its CUDA libraries)"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION"
fi
TORCH_PREFIX="$("$VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)"

# 3. The CUDA toolkit compiles perfbench's CUDA paths; without one (a fresh
#    machine) CMake configures a CPU-only build from the same wheel.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
nvcc --version >/dev/null 2>&1 || say "no CUDA toolkit (nvcc): a CPU-only build (a GPU host: docs/gpu.md)"

# 4. Configure once (again if the torch prefix moved, or if an earlier
#    configure failed and left a cache without build files), then build.
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ] || { [ ! -f "$BUILD_DIR/Makefile" ] && [ ! -f "$BUILD_DIR/build.ninja" ]; } || ! grep -q "CMAKE_PREFIX_PATH:.*=$TORCH_PREFIX\$" "$BUILD_DIR/CMakeCache.txt"; then
  say "configuring $BUILD_DIR (Release)"
  # shellcheck disable=SC2086  # word splitting of the extra arguments is meant
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" ${PERFBENCH_CMAKE_ARGS:-} >/dev/null
fi
say "building ${PERFBENCH_BUILD_TARGET:-everything} with $JOBS jobs"
cmake --build "$BUILD_DIR" -j"$JOBS" ${PERFBENCH_BUILD_TARGET:+--target "$PERFBENCH_BUILD_TARGET"}
say "done: $BUILD_DIR/perfbench"
