#!/usr/bin/env bash
# The GPU acceptance test: one command on a GPU machine that builds perfbench
# with scripts/gpu-smoke.sh's build (same BUILD_DIR, torch, deps prefix),
# runs what it must, asserts, and prints one table (check | value | bound |
# result). Meant to end within 10 minutes, build included, on an H200 with
# 16 cores (6 before the quant steps).
#
#   scripts/gpu-check.sh [--device cuda|cpu] [--skip-build] [--full-peak] OUTDIR
#
# Steps (time limit in s, times CHECK_SCALE) and the checks on them, in the
# table's order; the exit names the first check that failed:
#   build         gpu-smoke.sh --steps env OUTDIR/smoke (510): exit 0
#   amp_quick, ddp_quick, dataloader_quick, micro_quick: run --quick of each
#                 suite (180, 180, 120, 120): no failed variant, exit 0; ddp
#                 at the world sizes the GPUs allow (1; 1,2 with two), nccl
#   amp_models    run --suite amp --filter '^amp/(resnet50|bert|decoder)/',
#                 default sizes (300): no failed variant
#   resnet_b256   run --suite amp --filter 'amp/resnet50/.*precision:(tf32|bf16)'
#                 --param batch=256 --param memory_format=channels_last
#                 (180): no failed variant
#     resnet50 bf16 / tf32 throughput, from resnet_b256:  >= 1.3
#     bert bf16 / fp32 throughput, from amp_models:       >= 3
#     energy: every ok amp variant of amp_quick, amp_models and resnet_b256
#                 has `energy` samples (J per step) or the attribute energy =
#                 "unavailable: <why>"; a measured median lies within
#                 [IDLE_W, BOARD_W] x the median step_time (a variant whose
#                 median step is under ENERGY_MIN_STEP_S is counted, not
#                 judged; default 0: energy comes from a window of at
#                 least 10 counter updates, so short steps are measurable)
#   anchor_resnet Python eager, torchvision ResNet-50, the same step (180):
#                 batch 256 channels_last, SGD momentum 0.9, autocast bf16,
#                 cudnn.benchmark on, fp32 matmul/conv math (ieee or tf32)
#                 as perfbench's math.fp32_precision.cuda.* attributes say,
#                 CUDA-event step times after warm-up
#     perfbench / Python images/s (bf16, batch_size 256): 0.95..1.05
#   quant_quick   run --suite quant --quick --processes 1 (240; the dry run
#                 leaves bert to quant_bert, which runs it at quick size): no failed
#                 variant
#   quant_bert    run --suite quant --filter '^quant/bert/' at default
#                 (full) size, single_stream and offline, every precision
#                 (300): no failed variant
#     bert fp8 / bf16 offline throughput:                   >= 1.0, at an
#                 fp8 accuracy ratio >= 0.99 (GEMMs weighted by BERT-base's
#                 shapes gain 1.1-1.18x at most; the GEMM share of the step
#                 is not measured here: a profile would say)
#     bert int8_dynamic offline, TN / NN (quant_bert_nn):   >= 3
#     bert int8_dynamic / bf16 offline throughput:          >= 0.5
#     bert single-stream p50, fp8 / bf16 and int8 / bf16:   <= 1.5
#   quant_bert_nn bert int8_dynamic offline in the old NN layout (120)
#   quant_server  bert's server scenario, every precision, 300 queries a
#                 rate, 5 repetitions (2 in the CPU dry run), 1 process (300)
#     a server_rate for every bert precision that ran
#   gemm_8k       run --suite micro --filter 'gemm/n:[0-9]+/dtype:(bf16|fp8)/'
#                 --param n=8192 (120)
#     micro gemm fp8 / bf16 at 8192^3:                      >= 1.3
#   peak          perfbench peak --quick (300), read back with `show peak
#                 --format json`; anchor_gemm: torch bf16 GEMM at 8192^3,
#                 best of 50 after 100 warm-ups (120)
#     peak gemm bf16 (median at its best shape) / torch's best: 0.95..1.05
#   wall time     the whole check: <= CHECK_BUDGET_S
#
# --device cpu is the dry run CI uses (scripts/gpu-dry-run.sh): the same
# steps on the CPU at small sizes, in one process each (everything --quick, gemm_8k at n = 256;
# amp_quick leaves the
# three models to amp_models, which runs them at quick size; resnet50 at
# batch 8; ddp at world size 1 with gloo; the anchors at toy sizes, the
# ResNet one only compiled where torchvision is missing), asserting what
# needs no GPU: no failed variant, energy measured or "unavailable", every
# step ran. The GPU-only checks read "n/a (cpu dry run)" unless their step
# crashed. --skip-build uses BUILD_DIR's perfbench as it is (CI: build).
# --full-peak runs `perfbench peak` without --quick (did not finish within
# 130 s on an H200: beyond the 6 minutes).
#
# Environment:
#   PYTHON             the anchors' python, with torch and torchvision
#                      (default: the first of PERFBENCH_VENV's, .venv,
#                      /opt/torch/.venv, python3 whose torch imports)
#   BUILD_DIR          build directory (default build-smoke, the smoke's)
#   PERFBENCH_VENV, PERFBENCH_DEPS   the build's torch and Debian libraries
#                      (gpu-smoke.sh's; see its --help)
#   IDLE_W             idle power, W, the energy floor (default 50)
#   BOARD_W            board power limit, W (default 700, an H200's)
#   ENERGY_MIN_STEP_S  shortest median step judged for energy (default 0)
#   CHECK_BUDGET_S     the wall-time bound, s (default 600)
#   CHECK_SCALE        multiplies every step's time limit (default 1)
#
# OUTDIR (made if missing) gets per step NAME.out (a run's JSON, an anchor's
# JSON line) and NAME.err, the smoke's build output in OUTDIR/smoke, and
# check.db, steps.tsv, anchors.py, peak.json, table.txt, checks.json.
# Exit status: 0 every check passed, 1 one failed (named on stderr), 2 bad use.
set -euo pipefail
caller="$(pwd)"
cd "$(dirname "$0")/.."
root="$(pwd)"
t_start=$(date +%s)

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { printf 'gpu-check: %s\n' "$*" >&2; exit 2; }
say() { printf 'gpu-check: %s\n' "$*" >&2; }

device=cuda skip_build=0 full_peak=0 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --device) [ $# -ge 2 ] || die "--device needs cuda or cpu"; device="$2"; shift ;;
    --skip-build) skip_build=1 ;;
    --full-peak) full_peak=1 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$out" ] || die "one OUTDIR only (see --help)"; out="$1" ;;
  esac
  shift
done
[ -n "$out" ] || die "missing OUTDIR (see --help)"
case "$device" in cuda|cpu) ;; *) die "--device must be cuda or cpu, not '$device'" ;; esac
case "$out" in /*) ;; *) out="$caller/$out" ;; esac
mkdir -p "$out" || die "cannot create $out"
out="$(cd "$out" && pwd)"
scale="${CHECK_SCALE:-1}"
build="${BUILD_DIR:-build-smoke}"
case "$build" in /*) pb="$build/perfbench" ;; *) pb="$root/$build/perfbench" ;; esac
db="$out/check.db"
: >"$out/steps.tsv"
rm -f "$db" "$db"-wal "$db"-shm

# Runs step NAME under LIMIT seconds (times CHECK_SCALE): stdout to
# NAME.out, stderr to NAME.err; its exit status and seconds to steps.tsv.
step() {
  local name="$1" limit="$2" t0 rc=0
  shift 2
  limit=$(awk -v l="$limit" -v s="$scale" 'BEGIN { printf "%d", l * s }')
  say "$name (at most ${limit} s): $*"
  t0=$(date +%s)
  timeout --kill-after=20 "$limit" "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "timed out after ${limit} s" >>"$out/$name.err"; fi
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - t0))" >>"$out/steps.tsv"
}

# The anchors' python: PYTHON, else the first whose torch imports.
find_python() {
  local c
  for c in "${PERFBENCH_VENV:+$PERFBENCH_VENV/bin/python}" .venv/bin/python /opt/torch/.venv/bin/python python3; do
    if [ -n "$c" ] && "$c" -c 'import torch' 2>/dev/null; then echo "$c"; return 0; fi
  done
  return 1
}
if [ -n "${PYTHON:-}" ]; then
  "$PYTHON" -c 'import torch' 2>/dev/null || die "PYTHON=$PYTHON cannot import torch"
  torch_py="$PYTHON"
else
  torch_py="$(find_python || true)"
fi
# The JSON reader: any python3 (always present; torch not needed).
py3="$(command -v python3 || true)"
py3="${py3:-$torch_py}"
[ -n "$py3" ] || die "no python3"

# 1. The build: gpu-smoke.sh's own (and its env step), its limits scaled
# so that they end before this step's.
if [ "$skip_build" = 0 ]; then
  build_limit=420
  smoke_scale=$(awk -v l="$build_limit" -v s="$scale" 'BEGIN { printf "%.4f", l * s / 900 }')
  step build $((build_limit + 90)) env BUILD_DIR="$build" SMOKE_SCALE="$smoke_scale" \
    "$root/scripts/gpu-smoke.sh" --device "$device" --steps env "$out/smoke"
fi

# Where the machine differs by device.
models='resnet50|bert|decoder'
if [ "$device" = cuda ]; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  world_sizes=1
  [ "${gpus:-0}" -ge 2 ] && world_sizes=1,2
  ddp_args=(--world-sizes "$world_sizes" --param backend=nccl)
  amp_quick_args=(--suite amp)
  models_args=(--suite amp --filter "^amp/($models)/")
  anchor_batch=256 anchor_image=224 anchor_warmup=15 anchor_steps=30
  gemm_n=8192 gemm_warmup=100 gemm_reps=50
  server_reps=5
  quant_size=()
  quant_quick_args=()
else
  world_sizes=1
  ddp_args=(--world-sizes 1 --param backend=gloo)
  # The models at quick size are the models step's: not twice on 2 cores.
  amp_quick_args=(--suite amp --filter "^amp/(?!($models)/)")
  models_args=(--suite amp --quick --filter "^amp/($models)/")
  anchor_batch=8 anchor_image=32 anchor_warmup=1 anchor_steps=2
  gemm_n=256 gemm_warmup=1 gemm_reps=5
  # The dry run checks the server step's path, not its spread: 2 searches.
  server_reps=2
  quant_size=(--quick)
  # bert at quick size is the quant_bert step's: not twice on 2 cores.
  quant_quick_args=(--filter '^quant/(?!bert/)')
fi
resnet_args=(--suite amp --filter 'amp/resnet50/.*precision:(tf32|bf16)' --param memory_format=channels_last)
# Quick variants have no batch param (their size sets it), and an unknown
# --param is refused.
if [ "$device" = cpu ]; then resnet_args+=(--quick); else resnet_args+=(--param batch="$anchor_batch"); fi

# A run as JSON (NAME.out); where stdout is not clean JSON, the stored run
# read back by its label instead.
run_step() {
  local name="$1" limit="$2" one=()
  shift 2
  # The dry run checks paths, not spreads: one process where none is named.
  [ "$device" = cpu ] && [[ " $* " != *" --processes "* ]] && one=(--processes 1)
  step "$name" "$limit" "$pb" run --db "$db" --device "$device" --label "check-$name" --format json "$@" "${one[@]}"
  if ! "$py3" -c 'import json, sys; json.load(open(sys.argv[1]))' "$out/$name.out" 2>/dev/null; then
    echo "stdout was not JSON: read back with show check-$name" >>"$out/$name.err"
    "$pb" show "check-$name" --db "$db" --format json >"$out/$name.out" 2>>"$out/$name.err" || true
  fi
}

# The Python anchors, written out so that a failure names a line.
cat >"$out/anchors.py" <<'PY'
"""perfbench's anchors in Python eager: resnet (a ResNet-50 training step,
images/s) and gemm (best-of-N bf16 GEMM, TFLOP/s). One JSON line on stdout."""
import argparse, json, statistics, sys, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("what", choices=["resnet", "gemm"])
ap.add_argument("--device", default="cuda")
ap.add_argument("--batch", type=int, default=256)
ap.add_argument("--image", type=int, default=224)
ap.add_argument("--n", type=int, default=8192)
ap.add_argument("--warmup", type=int, default=10)
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--matmul-fp32", choices=["ieee", "tf32"], default="ieee")
ap.add_argument("--conv-fp32", choices=["ieee", "tf32"], default="ieee")
a = ap.parse_args()
dev = torch.device(a.device)
cuda = dev.type == "cuda"
torch.manual_seed(0)
# fp32 math as perfbench's variant held it (torch >= 2.9's API, else the old one).
if hasattr(torch.backends.cudnn, "conv"):
    torch.backends.cuda.matmul.fp32_precision = a.matmul_fp32
    torch.backends.cudnn.conv.fp32_precision = a.conv_fp32
else:
    torch.backends.cuda.matmul.allow_tf32 = a.matmul_fp32 == "tf32"
    torch.backends.cudnn.allow_tf32 = a.conv_fp32 == "tf32"
torch.backends.cudnn.benchmark = True  # as perfbench's amp resnet50


def timed(fn):
    """Seconds of one call: CUDA events on a GPU (the device idle at the
    start), the wall clock on the CPU."""
    if cuda:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        r = fn()
        e.record()
        e.synchronize()
        if isinstance(r, torch.Tensor) and r.dim() == 0:
            r.item()
        return s.elapsed_time(e) / 1e3
    t = time.perf_counter()
    r = fn()
    if isinstance(r, torch.Tensor) and r.dim() == 0:
        r.item()
    return time.perf_counter() - t


info = {"what": a.what, "device": a.device, "torch": torch.__version__, "matmul_fp32": a.matmul_fp32,
        "conv_fp32": a.conv_fp32, "cudnn_benchmark": torch.backends.cudnn.benchmark}
if a.what == "resnet":
    import torchvision
    model = torchvision.models.resnet50(weights=None).to(dev).to(memory_format=torch.channels_last)
    # perfbench's full-size ResNet-50 recipe: SGD momentum 0.9, weight decay 5e-5, lr 0.1 x batch / 256.
    # (Python's SGD updates through foreach kernels, LibTorch's C++ SGD parameter by parameter.)
    opt = torch.optim.SGD(model.parameters(), lr=0.1 * a.batch / 256, momentum=0.9, weight_decay=5e-5)
    x = torch.randn(a.batch, 3, a.image, a.image, device=dev).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (a.batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=dev.type, dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(a.warmup):
        step().item()
    times = [timed(step) for _ in range(a.steps)]
    med = statistics.median(times)
    info.update(batch=a.batch, image=a.image, steps=a.steps, step_s_median=med, images_per_s=a.batch / med,
                torchvision=torchvision.__version__)
else:
    m = torch.randn(a.n, a.n, device=dev, dtype=torch.bfloat16)
    k = torch.randn(a.n, a.n, device=dev, dtype=torch.bfloat16)
    c = torch.empty(a.n, a.n, device=dev, dtype=torch.bfloat16)
    for _ in range(a.warmup):
        torch.mm(m, k, out=c)
    if cuda:
        torch.cuda.synchronize()
    times = [timed(lambda: torch.mm(m, k, out=c)) for _ in range(a.steps)]
    flop = 2.0 * a.n ** 3
    info.update(n=a.n, reps=a.steps, best_tflops=flop / min(times) / 1e12,
                median_tflops=flop / statistics.median(times) / 1e12)
print(json.dumps(info))
PY

# The anchor's fp32 math as the perfbench resnet50 bf16 variant held it:
# "--matmul-fp32 M --conv-fp32 C" from its attributes
# math.fp32_precision.cuda.{matmul,conv} (ieee where absent). The anchor keeps
# cudnn.benchmark on either way; the table checks perfbench's.
anchor_math() {
  "$py3" - "$out/resnet_b256.out" <<'PY' 2>/dev/null || echo "--matmul-fp32 ieee --conv-fp32 ieee"
import json, sys
got = {"matmul": "ieee", "conv": "ieee"}
for r in json.load(open(sys.argv[1])).get("results", []):
    if r.get("workload") == "resnet50" and r.get("params", {}).get("precision") == "bf16":
        for op in got:
            if r.get("attributes", {}).get(f"math.fp32_precision.cuda.{op}") == "tf32":
                got[op] = "tf32"
        break
print(f"--matmul-fp32 {got['matmul']} --conv-fp32 {got['conv']}")
PY
}

# The runs, on a fresh build only (not on a stale binary after a failed one).
built=1
if [ "$skip_build" = 0 ] && ! awk -F'\t' '$1 == "build" && $2 == 0 { ok = 1 } END { exit !ok }' "$out/steps.tsv"; then
  built=0
fi
if [ "$built" = 1 ] && [ -x "$pb" ]; then
  run_step amp_quick 180 --quick "${amp_quick_args[@]}"
  run_step ddp_quick 180 --quick --suite ddp "${ddp_args[@]}"
  run_step dataloader_quick 120 --quick --suite dataloader
  run_step micro_quick 120 --quick --suite micro
  run_step amp_models 300 "${models_args[@]}"
  run_step resnet_b256 180 "${resnet_args[@]}"
  run_step quant_quick 240 --quick --suite quant --processes 1 "${quant_quick_args[@]}"
  run_step quant_bert 300 --suite quant --filter '^quant/bert/' --processes 1 "${quant_size[@]}"
  run_step quant_bert_nn 120 --suite quant --filter '^quant/bert/scenario:offline/precision:int8_dynamic/' \
    --param layout=NN --processes 1 "${quant_size[@]}"
  run_step quant_server 300 --suite quant --filter '^quant/bert/' --param scenario=server \
    --param server_queries=300 --repetitions "$server_reps" --warmup 1 --processes 1 "${quant_size[@]}"
  run_step gemm_8k 120 --suite micro --filter 'gemm/n:[0-9]+/dtype:(bf16|fp8)/' --param n="$gemm_n" --processes 1
  if [ -n "$torch_py" ]; then
    if "$torch_py" -c 'import torchvision' 2>/dev/null; then
      read -ra math_args <<<"$(anchor_math)"
      step anchor_resnet 180 "$torch_py" "$out/anchors.py" resnet --device "$device" --batch "$anchor_batch" \
        --image "$anchor_image" --warmup "$anchor_warmup" --steps "$anchor_steps" "${math_args[@]}"
    else
      # No torchvision (CI's wheel-only venv): at least the file compiles.
      step anchor_resnet 60 "$torch_py" -c 'import py_compile, sys; py_compile.compile(sys.argv[1], doraise=True); print("{\"skipped\": \"no torchvision\"}")' "$out/anchors.py"
    fi
  fi
  peak_args=(--device "$device" --db "$db")
  [ "$full_peak" = 1 ] || peak_args+=(--quick)
  step peak 300 "$pb" peak "${peak_args[@]}"
  "$pb" show peak --db "$db" --format json >"$out/peak.json" 2>>"$out/peak.err" || true
  if [ -n "$torch_py" ]; then
    step anchor_gemm 120 "$torch_py" "$out/anchors.py" gemm --device "$device" --n "$gemm_n" \
      --warmup "$gemm_warmup" --steps "$gemm_reps"
  fi
else
  say "no fresh $pb: nothing to run (see $out/build.err and $out/smoke/)"
fi

# The table.
set +e
IDLE_W="${IDLE_W:-50}" BOARD_W="${BOARD_W:-700}" ENERGY_MIN_STEP_S="${ENERGY_MIN_STEP_S:-0}" \
CHECK_BUDGET_S="${CHECK_BUDGET_S:-600}" "$py3" - "$out" "$device" "$skip_build" "$t_start" "$build" \
  "$world_sizes" "$anchor_batch" "${torch_py:-}" "$gemm_n" <<'PY'
import json, os, sys, time

out, device, skip_build, t_start, build, world_sizes, batch, torch_py, gemm_n = sys.argv[1:10]
cpu = device == "cpu"
NA = "n/a (cpu dry run)"
idle_w, board_w = float(os.environ["IDLE_W"]), float(os.environ["BOARD_W"])
min_step = float(os.environ["ENERGY_MIN_STEP_S"])
budget = float(os.environ["CHECK_BUDGET_S"])

steps = {}
for line in open(os.path.join(out, "steps.tsv")):
    name, rc, secs = line.rstrip("\n").split("\t")
    steps[name] = (int(rc), int(secs))


def last_err(name):
    try:
        lines = [l.strip() for l in open(os.path.join(out, name + ".err"), errors="replace") if l.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def load(path):
    try:
        return json.load(open(path)), ""
    except (OSError, ValueError) as e:
        return None, str(e)


class Fail(Exception):
    """A check that does not hold (on the CPU: a GPU-only one that cannot)."""


class Broken(Fail):
    """A step that crashed, timed out or wrote nothing readable: a failure on
    every device."""


def results(name, allowed_rc=(0, 4)):
    """The run's result rows; Broken when the step did not run or ended badly."""
    if name not in steps:
        raise Broken("not run")
    rc, _ = steps[name]
    doc, err = load(os.path.join(out, name + ".out"))
    if rc not in allowed_rc:
        raise Broken(f"exit {rc}: {last_err(name)[:120]}")
    if doc is None:
        raise Broken(f"unreadable JSON: {err[:100]}")
    # The rows of suites measured around the run (the control, the harness's own time) are not the step's.
    return [r for r in doc.get("results", []) if r.get("suite") not in ("control", "harness")]


def key(r):
    return r.get("suite", "?") + "/" + r.get("workload", "?") + "/" + \
        "/".join(f"{k}:{v}" for k, v in r.get("params", {}).items())


def variants(rows):
    """One entry per variant (a variant has one row per metric)."""
    v = {}
    for r in rows:
        v.setdefault(key(r), {"status": r.get("status", "?"), "reason": r.get("reason", ""),
                              "params": r.get("params", {}), "attributes": r.get("attributes", {}),
                              "workload": r.get("workload", ""), "metrics": {}})
        v[key(r)]["metrics"][r.get("metric", "?")] = r
    return v


def median(v, metric):
    r = v["metrics"].get(metric)
    return None if r is None or r.get("median") is None else float(r["median"])


def cudnn_benchmark(attributes):
    """cuDNN autotuning as the run's math attributes state it ("math.<flag>"
    -> "on", or "math_mode" -> "fp32=ieee cudnn_benchmark=on ..."); None
    where they do not."""
    for k, v in attributes.items():
        if not k.startswith("math"):
            continue
        pairs = [t.split("=", 1) for t in str(v).split() if "=" in t] if k == "math_mode" else [(k, str(v))]
        for flag, value in pairs:
            if "benchmark" in flag:
                return value in ("on", "true", "1")
    return None


table = []  # (check, value, bound, result)


def check(name, bound, fn, gpu_only=False):
    """fn() -> (value, ok). On the CPU a GPU-only check reads n/a unless
    its step broke."""
    broken = False
    try:
        value, ok = fn()
    except Broken as e:
        value, ok, broken = str(e), False, True
    except Fail as e:
        value, ok = str(e), False
    except Exception as e:  # a bug here must not pass silently
        value, ok, broken = f"check error: {type(e).__name__}: {e}", False, True
    if gpu_only and cpu:
        result = "FAIL" if broken else NA
    else:
        result = "pass" if ok else "FAIL"
    table.append((name, value, bound, result))


def build_check():
    if skip_build == "1":
        ok = os.access(os.path.join(build, "perfbench"), os.X_OK)
        if not ok:
            raise Broken(f"skipped (--skip-build) and {build}/perfbench is missing")
        return f"skipped (--skip-build): {build}/perfbench", True
    if "build" not in steps:
        raise Broken("not run")
    rc, secs = steps["build"]
    if rc != 0:
        raise Broken(f"exit {rc} after {secs} s: see smoke/build.err ({last_err('build')[:80]})")
    return f"ok, {secs} s (gpu-smoke.sh --steps env)", True


def no_failed(name):
    def fn():
        vs = variants(results(name))
        if not vs:
            raise Broken("no variant ran")
        count = {"ok": 0, "failed": 0, "skipped": 0}
        first = ""
        for k, v in vs.items():
            count[v["status"]] = count.get(v["status"], 0) + 1
            if v["status"] == "failed" and not first:
                first = f"; first {k}: {v['reason'][:100]}"
        rc = steps[name][0]
        value = f"{count['failed']} failed (ok {count['ok']}, skipped {count['skipped']}, {steps[name][1]} s)"
        value += (f", exit {rc}" if rc != 0 else "") + first
        ok = count["failed"] == 0 and rc == 0
        if not ok:
            raise Broken(value)  # a failed variant fails the dry run too
        return value, ok
    return fn


def by_precision(name, workload):
    got = {}
    for v in variants(results(name)).values():
        if v["workload"] == workload and v["status"] == "ok":
            got[v["params"].get("precision")] = v
    return got


def ratio_check(name, workload, num, den, least, unit):
    def fn():
        p = by_precision(name, workload)
        missing = [x for x in (num, den) if x not in p]
        if missing:
            raise Fail(f"no ok precision:{','.join(missing)} variant of {workload}")
        a, b = median(p[num], "throughput"), median(p[den], "throughput")
        if not a or not b:
            raise Fail("no throughput median")
        r = a / b
        return f"{r:.2f}x ({a:.4g} / {b:.4g} {unit})", r >= least
    return fn


def energy_check():
    judged = measured = unavailable = short = 0
    bad, reasons = [], set()
    for name in ("amp_quick", "amp_models", "resnet_b256"):
        try:
            vs = variants(results(name))
        except Fail:
            continue  # its own row says why
        for k, v in vs.items():
            if v["status"] != "ok":
                continue
            e, t = median(v, "energy"), median(v, "step_time")
            why = str(v["attributes"].get("energy", ""))
            if e is None:
                if why.startswith("unavailable: ") and why[len("unavailable: "):].strip():
                    unavailable += 1
                    reasons.add(why[len("unavailable: "):][:60])
                else:
                    bad.append(f"{k}: neither energy samples nor an 'unavailable: <why>' attribute")
                continue
            measured += 1
            if cpu:
                continue
            if t is None:
                bad.append(f"{k}: energy without step_time")
            elif t < min_step:
                short += 1
            else:
                judged += 1
                lo, hi = idle_w * t, board_w * t
                if not lo <= e <= hi:
                    bad.append(f"{k}: {e:.4g} J/step outside [{lo:.3g}, {hi:.3g}] J (step {t * 1e3:.3g} ms)")
    if measured + unavailable == 0 and not bad:
        raise Broken("no ok amp variant to judge")
    value = f"{measured} measured, {unavailable} unavailable"
    if reasons:
        value += f" ({'; '.join(sorted(reasons))[:80]})"
    if not cpu:
        value += f"; {judged} judged, {short} with a median step under {min_step:g} s not judged"
    if bad:
        value += f"; {len(bad)} bad, first {bad[0]}"
        raise Fail(value)
    return value, True


def anchor(name):
    if not torch_py:
        raise Fail("no python with torch (set PYTHON)")
    if name not in steps:
        raise Broken("not run")
    rc, _ = steps[name]
    if rc != 0:
        raise Broken(f"exit {rc}: {last_err(name)[:120]}")
    lines = [l for l in open(os.path.join(out, name + ".out")) if l.strip().startswith("{")]
    if not lines:
        raise Broken("no JSON line on stdout")
    return json.loads(lines[-1])


def within(r, tol=0.05):
    return abs(r - 1) <= tol


def resnet_anchor_check():
    a = anchor("anchor_resnet")
    if "skipped" in a:
        raise Fail(f"anchor skipped: {a['skipped']} (anchors.py compiles)")
    p = by_precision("resnet_b256", "resnet50")
    if "bf16" not in p:
        raise Fail(f"no ok perfbench resnet50 bf16 variant (python {a['images_per_s']:.4g} images/s)")
    v = p["bf16"]
    got_batch = str(v["attributes"].get("batch_size", "?"))
    if got_batch != batch:
        raise Fail(f"perfbench ran batch {got_batch}, not {batch} (no `batch` param?)")
    bench = cudnn_benchmark(v["attributes"])
    if bench is False:
        raise Fail("perfbench ran cudnn_benchmark off, the anchor on")
    mine = median(v, "throughput")
    r = mine / a["images_per_s"]
    stated = "" if bench else ", perfbench states no cudnn_benchmark"
    return (f"{r:.3f} ({mine:.4g} / {a['images_per_s']:.4g} images/s; fp32 matmul {a['matmul_fp32']}, "
            f"conv {a['conv_fp32']}{stated})", within(r))


def peak_check():
    a = anchor("anchor_gemm")
    if "peak" not in steps:
        raise Broken("not run")
    if steps["peak"][0] != 0:
        raise Broken(f"peak exit {steps['peak'][0]}: {last_err('peak')[:100]}")
    doc, err = load(os.path.join(out, "peak.json"))
    if doc is None:
        raise Broken(f"show peak: unreadable JSON: {err[:80]}")
    mine = shape = None
    top = ""
    for r in doc.get("results", []):
        if r.get("workload") == "gemm" and r.get("metric") == "flops" and r.get("params", {}).get("dtype") == "bf16":
            if r.get("status") != "ok" or r.get("median") is None:
                raise Fail(f"peak gemm bf16 {r.get('status')}: {r.get('reason', '')[:80]}")
            attrs = r.get("attributes", {})
            mine, shape = float(r["median"]) / 1e12, attrs.get("shape", "?")
            try:  # MAMF's maximum (the largest sample of any shape), where stored
                top = f"; perfbench max {float(attrs['max']) / 1e12:.4g} at {attrs.get('max_shape', '?')}"
            except (KeyError, ValueError):
                pass
    if mine is None:
        raise Broken("no peak/gemm/dtype:bf16 flops in `show peak`")
    r = mine / a["best_tflops"]
    return (f"{r:.3f} (median {mine:.4g} at {shape} / best {a['best_tflops']:.4g} TFLOP/s at {a['n']}^3; "
            f"torch median {a['median_tflops']:.4g}{top})", within(r))


def quant_variant(name, scenario, precision, layout=None):
    for v in variants(results(name)).values():
        p = v["params"]
        if (v["workload"] == "bert" and p.get("scenario") == scenario and p.get("precision") == precision
                and p.get("layout", "TN") == (layout or "TN") and v["status"] == "ok"):
            return v
    raise Fail(f"no ok bert {scenario} {precision}" + (f" layout {layout}" if layout else "") + f" in {name}")


def quant_ratio(num, den, metric, bound, at_least=True, accuracy=None):
    """num / den of `metric`; num, den = (step, scenario, precision[, layout])."""
    def fn():
        a, b = quant_variant(*num), quant_variant(*den)
        x, y = median(a, metric), median(b, metric)
        if not x or not y:
            raise Fail(f"no {metric} median")
        r = x / y
        ok = r >= bound if at_least else r <= bound
        text = f"{r:.2f}x ({x:.4g} / {y:.4g})"
        if accuracy is not None:
            acc = median(a, "accuracy_ratio")
            text += f", accuracy ratio {acc:.4f}" if acc is not None else ", no accuracy ratio"
            ok = ok and acc is not None and acc >= accuracy
        return text, ok
    return fn


def server_check():
    got, missing = [], []
    for v in variants(results("quant_server")).values():
        if v["workload"] != "bert":
            continue
        rate = median(v, "server_rate")
        prec = v["params"].get("precision")
        if v["status"] == "ok" and rate:
            got.append(f"{prec} {rate:.4g}/s")
        elif v["status"] != "skipped":
            missing.append(f"{prec} {v['status']}")
    if not got:
        raise Fail("no server_rate")
    return ", ".join(got + missing), not missing


def gemm8k_check():
    rates = {}
    for v in variants(results("gemm_8k")).values():
        if v["workload"] == "gemm" and v["status"] == "ok":
            rates[v["params"].get("dtype")] = median(v, "flops")
    if not rates.get("fp8") or not rates.get("bf16"):
        raise Fail(f"no ok fp8 and bf16 gemm ({sorted(rates)})")
    r = rates["fp8"] / rates["bf16"]
    return f"{r:.2f}x ({rates['fp8'] / 1e12:.4g} / {rates['bf16'] / 1e12:.4g} TFLOP/s)", r >= 1.3


check("build", "exit 0", build_check)
check("amp --quick", "0 failed", no_failed("amp_quick"))
check(f"ddp --quick (world sizes {world_sizes})", "0 failed", no_failed("ddp_quick"))
check("dataloader --quick", "0 failed", no_failed("dataloader_quick"))
check("micro --quick", "0 failed", no_failed("micro_quick"))
check("amp resnet50|bert|decoder" + (" (quick)" if cpu else " (default sizes)"), "0 failed", no_failed("amp_models"))
check(f"amp resnet50 tf32|bf16 b{batch} channels_last", "0 failed", no_failed("resnet_b256"))
check(f"resnet50 bf16/tf32 throughput (b{batch} channels_last)", ">= 1.3x",
      ratio_check("resnet_b256", "resnet50", "bf16", "tf32", 1.3, "images/s"), gpu_only=True)
check("bert bf16/fp32 throughput" + (" (quick)" if cpu else " (default sizes)"), ">= 3x",
      ratio_check("amp_models", "bert", "bf16", "fp32", 3.0, "tokens/s"), gpu_only=True)
check("energy per step, amp variants",
      "measured or 'unavailable: <why>'" if cpu else f"{idle_w:g} W..{board_w:g} W x median step_time", energy_check)
check(f"perfbench / python resnet50 bf16 b{batch} channels_last", "0.95..1.05", resnet_anchor_check, gpu_only=True)
check("peak bf16 / torch best bf16 GEMM", "0.95..1.05", peak_check, gpu_only=True)
check("quant --quick", "0 failed", no_failed("quant_quick"))
check("quant bert" + (" (quick)" if cpu else " (full)"), "0 failed", no_failed("quant_bert"))
check("quant bert int8 NN layout", "0 failed", no_failed("quant_bert_nn"))
check("quant bert server scenario", "0 failed", no_failed("quant_server"))
check("bert fp8 / bf16 offline throughput", ">= 1.0x, accuracy ratio >= 0.99",
      quant_ratio(("quant_bert", "offline", "fp8"), ("quant_bert", "offline", "bf16"), "throughput", 1.0,
                  accuracy=0.99), gpu_only=True)
check("bert int8 offline TN / NN throughput", ">= 3x",
      quant_ratio(("quant_bert", "offline", "int8_dynamic"), ("quant_bert_nn", "offline", "int8_dynamic", "NN"),
                  "throughput", 3.0), gpu_only=True)
check("bert int8 / bf16 offline throughput", ">= 0.5x",
      quant_ratio(("quant_bert", "offline", "int8_dynamic"), ("quant_bert", "offline", "bf16"), "throughput", 0.5),
      gpu_only=True)
for prec in ("fp8", "int8_dynamic"):
    check(f"bert single-stream p50 {prec} / bf16", "<= 1.5x",
          quant_ratio(("quant_bert", "single_stream", prec), ("quant_bert", "single_stream", "bf16"), "latency_p50",
                      1.5, at_least=False), gpu_only=True)
check("bert server rate, every precision", "a rate each", server_check)
check(f"micro gemm fp8 / bf16 at {gemm_n}^3", ">= 1.3x", gemm8k_check, gpu_only=True)
wall = time.time() - float(t_start)
check("wall time, build included", f"<= {budget:g} s", lambda: (f"{wall:.0f} s", wall <= budget), gpu_only=True)

head = ("check", "value", "bound", "result")
w = [max(len(str(r[i])) for r in table + [head]) for i in range(4)]
w[1] = min(w[1], 100)  # longer values run past their column
lines = ["| " + " | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)) + " |" for r in [head] + table]
lines.insert(1, "|" + "|".join("-" * (x + 2) for x in w) + "|")
text = "\n".join(lines)
print(text)
open(os.path.join(out, "table.txt"), "w").write(text + "\n")
json.dump([dict(zip(head, r)) for r in table], open(os.path.join(out, "checks.json"), "w"), indent=2)
failed = [r for r in table if r[3] == "FAIL"]
if failed:
    print(f"gpu-check: FAILED: {failed[0][0]}: {failed[0][1]} (bound {failed[0][2]})", file=sys.stderr)
    sys.exit(1)
print(f"gpu-check: all checks passed ({'cpu dry run' if cpu else device})", file=sys.stderr)
PY
rc=$?
exit "$rc"
