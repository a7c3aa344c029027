#!/usr/bin/env bash
# The interleaved gate's power on this machine, through the real binary:
# GATES gates (default 10) each of A/A, +5% and +10%
# (bench/paired_power_models.py: one MLP exported under one name, the copies
# with more work), interleaved gate by gate, each `perfbench gate
# --reference-model base --model-file COPY` of PAIRS pairs (default 10;
# --quick, 1 thread, offline, no control, --order-seed the gate's number).
# Prints one line per gate (the offline throughput's verdict, ratio,
# interval and the unpaired noise floor reported beside it, the exit code,
# the seconds), the counts per scheme, and the seconds of one default run
# (3 processes) of the same selection, for the gate's cost against it.
#   bench/paired_power.sh BUILD_DIR [GATES] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath "$1")"; gates="${2:-10}"; pairs="${3:-10}"
python="${PERFBENCH_VENV:-.venv}/bin/python"
work="$(mktemp -d /tmp/perfbench-power.XXXXXX)"
trap 'rm -rf "$work"' EXIT
for m in base plus5 plus10; do
  mkdir -p "$work/$m"
  "$python" scripts/export-model.py "bench/paired_power_models.py:$m" --format torchscript --name mlp \
    --out "$work/$m/mlp.pt" >/dev/null 2>&1
done
declare -A caught=()
for i in $(seq 1 "$gates"); do
  for m in base plus5 plus10; do
    start=$(date +%s.%N)
    rc=0
    "$build/perfbench" gate --reference-model "$work/base/mlp.pt" --model-file "$work/$m/mlp.pt" --suite model \
      --quick --threads 1 --filter offline --pairs "$pairs" --no-control --order-seed "$i" --db "$work/g$i$m.db" \
      --format json > "$work/g.json" 2>/dev/null || rc=$?
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    line=$("$python" - "$work/g.json" <<'PY'
import json, sys
for m in json.load(open(sys.argv[1])).get("metrics", []):
    if m.get("suite") == "model" and m.get("metric") == "throughput":
        print(m["verdict"], "%.4f [%.4f, %.4f] floor %.3f" % (m["ratio"], m["ci_low"], m["ci_high"], m.get("noise_floor") or 0))
PY
)
    printf '%-6s gate %2d  exit %d  %5.1f s  %s\n' "$m" "$i" "$rc" "$seconds" "$line"
    [[ "$line" == regression* ]] && caught[$m]=$(( ${caught[$m]:-0} + 1 ))
  done
done
echo "regressions in $gates gates of $pairs pairs: A/A ${caught[base]:-0}, +5% ${caught[plus5]:-0}, +10% ${caught[plus10]:-0}"
start=$(date +%s.%N)
"$build/perfbench" run --model-file "$work/base/mlp.pt" --suite model --quick --threads 1 --filter offline --no-control \
  --db "$work/run.db" --format none 2>/dev/null
echo "one default run (3 processes) of the selection: $(echo "$(date +%s.%N) - $start" | bc) s"
