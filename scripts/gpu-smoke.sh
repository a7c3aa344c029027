#!/usr/bin/env bash
# First light on a GPU machine: builds perfbench and runs every suite once on
# the device, each step under its own time limit, keeping everything it
# produced, and ends with a one-screen summary.
#
#   scripts/gpu-smoke.sh [--device cuda|cpu] [--steps LIST] [--skip-build] OUTDIR
#
# Made for a Linux machine with a CUDA GPU, nvcc, CMake and a Python
# environment holding torch 2.11, but no package manager and no network:
#   PERFBENCH_VENV   the environment with torch (default: the first of .venv,
#                    /opt/torch/.venv and python3 whose torch imports)
#   PERFBENCH_DEPS   scripts/gpu-deps.sh's folder, for the Debian libraries
#                    such a machine lacks (default .gpu-deps, when present)
#   BUILD_DIR        build directory (default build-smoke; an existing,
#                    configured one is built incrementally as it is)
#   SMOKE_SCALE      multiplies every step's time limit (default 1)
#
# Steps (the time limit of each, in seconds, before SMOKE_SCALE):
#   build       CMake Release, -j$(nproc), target perfbench, no tests   900
#   env         perfbench env --format json                               60
#   amp         run --quick, amp's mlp, cnn, transformer                  300
#   ddp         run --quick, ddp at world size 1 (nccl on cuda)           300
#   dataloader  run --quick, dataloader (pin_memory:on on cuda)           300
#   quant       run --quick, quant's mlp and cnn                          300
#   micro       run --quick, micro                                        300
#   models      run --quick, the MLPerf models (resnet50|bert|decoder)    600
#   show        show latest --format json (each run step also keeps its own)
#   diagnose    diagnose --quick on amp/mlp                               300
#   profile     profile --quick on amp/mlp (Kineto traces)                300
#   peak        peak --quick (achievable GEMM FLOP/s, memory bandwidth)   300
# --steps a,b,c runs only those (build is always first unless --skip-build).
# Every run step stores into OUTDIR/smoke.db and keeps its table (NAME.out),
# its stderr (NAME.err) and its run as JSON (NAME.json). The summary (also
# OUTDIR/summary.txt) gives per step its exit status and, for runs, the
# variants ok / failed / skipped and the first failure's reason. Exit status:
# 0 when every step exited 0 and no variant failed, 1 otherwise, 2 on bad use.
#
# --device cpu runs the same steps on the CPU, each run in one process (a
# dry run that keeps the script from rotting; CI runs the steps
# gpu-check.sh's dry run lacks, with --skip-build on its own build).
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { printf 'gpu-smoke: %s\n' "$*" >&2; exit 2; }

device=cuda steps="" skip_build=0 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --device) [ $# -ge 2 ] || die "--device needs cuda or cpu"; device="$2"; shift ;;
    --steps) [ $# -ge 2 ] || die "--steps needs a list"; steps="$2"; shift ;;
    --skip-build) skip_build=1 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$out" ] || die "one OUTDIR only (see --help)"; out="$1" ;;
  esac
  shift
done
[ -n "$out" ] || die "missing OUTDIR (see --help)"
case "$device" in cuda|cpu) ;; *) die "--device must be cuda or cpu, not '$device'" ;; esac
all_steps="env amp ddp dataloader quant micro models show diagnose profile peak"
steps="${steps:-$all_steps}"
for s in ${steps//,/ }; do
  case " $all_steps " in *" $s "*) ;; *) die "unknown step '$s' (steps: $all_steps)" ;; esac
done
scale="${SMOKE_SCALE:-1}"
mkdir -p "$out" || die "cannot create $out"
out="$(cd "$out" && pwd)"
build="${BUILD_DIR:-build-smoke}"
exe="$build/perfbench"
db="$out/smoke.db"
: >"$out/steps.tsv"

say() { printf 'gpu-smoke: %s\n' "$*" >&2; }

# Runs step NAME under LIMIT seconds: stdout to NAME.out, stderr to NAME.err.
step() {
  local name="$1" limit="$2"
  shift 2
  limit=$(awk -v l="$limit" -v s="$scale" 'BEGIN { printf "%d", l * s }')
  say "$name (at most ${limit} s): $*"
  local t0 rc
  t0=$(date +%s)
  # A new bash runs the command, so that it may be one of this script's
  # (exported) functions; timeout cannot run a function itself.
  timeout --kill-after=20 "$limit" bash -c '"$@"' "$name" "$@" >"$out/$name.out" 2>"$out/$name.err"
  rc=$?
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && echo "timed out after ${limit} s" >>"$out/$name.err"
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - t0))" >>"$out/steps.tsv"
  return 0
}

find_python() {
  local c
  for c in "${PERFBENCH_VENV:+$PERFBENCH_VENV/bin/python}" .venv/bin/python /opt/torch/.venv/bin/python python3; do
    [ -n "$c" ] || continue
    if "$c" -c 'import torch' 2>/dev/null; then echo "$c"; return 0; fi
    [ -n "${PERFBENCH_VENV:-}" ] && [ "$c" = "$PERFBENCH_VENV/bin/python" ] && die "PERFBENCH_VENV=$PERFBENCH_VENV: its python cannot import torch"
  done
  return 1
}

build_perfbench() {
  local py torch_prefix version deps=() gen=()
  py="$(find_python)" || { echo "no Python with torch: set PERFBENCH_VENV" >&2; return 1; }
  version="$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
  torch_prefix="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)"
  echo "torch $version from $py" >&2
  case "$version" in 2.11.*) ;; *) echo "warning: perfbench pins torch 2.11, this is $version" >&2 ;; esac
  local deps_dir="${PERFBENCH_DEPS:-.gpu-deps}"
  if [ -d "$deps_dir/prefix/usr" ]; then
    deps=(-DPERFBENCH_DEPS_PREFIX="$(cd "$deps_dir/prefix/usr" && pwd)")
    echo "Debian libraries from $deps_dir" >&2
  fi
  command -v nvcc >/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH="/usr/local/cuda/bin:$PATH"; }
  command -v ninja >/dev/null && gen=(-G Ninja)
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
      -DPERFBENCH_BUILD_TESTS=OFF "${deps[@]}" || return 1
  fi
  cmake --build "$build" -j"$(nproc)" --target perfbench
}

if [ "$skip_build" = 0 ]; then
  export build
  export -f build_perfbench find_python die
  step build 900 build_perfbench
fi
[ -x "$exe" ] || die "no $exe (the build failed: $out/build.err)"

# Where the machine differs by device.
if [ "$device" = cuda ]; then
  ddp_params=(--param world_size=1 --param backend=nccl)
  loader_params=(--param pin_memory=on)
else
  ddp_params=(--param world_size=1 --param backend=gloo)
  loader_params=()
fi
models='resnet50|bert|decoder'
pb="$root/$exe"
run_suite() {  # NAME LIMIT ARGS...: a run, then that run as JSON
  local name="$1" limit="$2" one=()
  shift 2
  [ "$device" = cpu ] && one=(--processes 1)  # the dry run checks paths, not spreads
  step "$name" "$limit" "$pb" run --db "$db" --device "$device" --quick --label "smoke-$name" "$@" "${one[@]}"
  "$pb" show latest --db "$db" --format json >"$out/$name.json" 2>>"$out/$name.err"
}

for s in ${steps//,/ }; do
  case "$s" in
    env) step env 60 "$pb" env --format json ;;
    amp) run_suite amp 300 --suite amp --filter "^amp/(?!.*($models))" ;;
    ddp) run_suite ddp 300 --suite ddp "${ddp_params[@]}" ;;
    dataloader) run_suite dataloader 300 --suite dataloader "${loader_params[@]}" ;;
    quant) run_suite quant 300 --suite quant --filter "^quant/(?!.*($models))" ;;
    micro) run_suite micro 300 --suite micro ;;
    models) run_suite models 600 --filter "^(amp|quant)/.*($models)|^ddp/.*model:($models)" ;;
    show) step show 60 "$pb" show latest --db "$db" --format json ;;
    diagnose) step diagnose 300 "$pb" diagnose --db "$db" --device "$device" --quick --filter '^amp/mlp/' ;;
    profile) step profile 300 "$pb" profile --db "$db" --device "$device" --quick --filter '^amp/mlp/' --steps 3 --output "$out/traces" ;;
    peak) step peak 300 "$pb" peak --db "$db" --device "$device" --quick ;;
  esac
done

# The summary: one line per step, and per run its variants' outcomes.
python_for_summary="$(command -v python3 || find_python)"
"$python_for_summary" - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
bad = False
print(f"{'step':<11} {'exit':>4} {'s':>5}  {'ok':>4} {'fail':>4} {'skip':>4}  first failure")
for line in open(os.path.join(out, "steps.tsv")):
    name, rc, secs = line.rstrip("\n").split("\t")
    ok = fail = skip = "-"
    first = ""
    path = os.path.join(out, name + ".json")
    if os.path.exists(path) and name != "show":
        try:
            variants = {}  # one row per metric: a variant's status is its rows'
            for r in json.load(open(path)).get("results", []):
                key = r.get("suite", "?") + "/" + r.get("workload", "?") + "/" + \
                    "/".join(f"{k}:{v}" for k, v in r.get("params", {}).items())
                variants.setdefault(key, (r.get("status", "?"), r.get("reason", "")))
            counts = {"ok": 0, "failed": 0, "skipped": 0}
            for key, (st, why) in variants.items():
                counts[st] = counts.get(st, 0) + 1
                if st == "failed" and not first:
                    first = f"{key}: {why}"
            ok, fail, skip = counts["ok"], counts["failed"], counts["skipped"]
            bad |= counts["failed"] > 0
        except (ValueError, OSError) as e:
            first = f"unreadable run JSON: {e}"
            bad = True
    if rc != "0":
        bad = True
        if not first:
            err = [l.strip() for l in open(os.path.join(out, name + ".err"), errors="replace") if l.strip()]
            first = err[-1] if err else f"exit status {rc}"
    print(f"{name:<11} {rc:>4} {secs:>5}  {ok!s:>4} {fail!s:>4} {skip!s:>4}  {first[:160]}")
print("verdict:", "FAILURES (see the .err files and the first failures above)" if bad else "all steps ran, no variant failed")
sys.exit(1 if bad else 0)
PY
