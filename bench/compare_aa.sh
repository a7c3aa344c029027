#!/usr/bin/env bash
# compare's false changes on this machine, through the real binary: PAIRS
# A/A pairs (default 10) of default runs (3 processes each) of one build and
# one selection (default: --suite amp --quick --filter mlp), one after
# another in one store, each pair then compared (`compare A B`, which learns
# the machine's run-to-run spread from the store's earlier runs). A false
# change is a judged metric called a regression or an improvement. Prints
# one line per pair (its verdict counts and the run's earlier runs) and the
# totals.
#   bench/compare_aa.sh BUILD_DIR [PAIRS] [run options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(realpath "$1")"; pairs="${2:-10}"; shift $(( $# > 1 ? 2 : 1 ))
args=("$@"); [ ${#args[@]} -eq 0 ] && args=(--suite amp --quick --filter mlp)
work="$(mktemp -d /tmp/perfbench-compare-aa.XXXXXX)"
trap 'rm -rf "$work"' EXIT
db="$work/aa.db"
false_pairs=0; false_metrics=0
for i in $(seq 1 "$pairs"); do
  for side in a b; do
    "$build/perfbench" run "${args[@]}" --db "$db" --label "p$i$side" --format none 2>/dev/null
  done
  rc=0
  "$build/perfbench" compare "p${i}a" "p${i}b" --db "$db" --format json > "$work/c.json" || rc=$?
  line=$(python3 - "$work/c.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
judged = [m for m in doc["metrics"] if m["threshold_kind"] != "informational" and not m["control"] and m["p_value"] is not None]
changed = [m for m in judged if m["verdict"] in ("regression", "improvement")]
counts = {}
for m in judged:
    counts[m["verdict"]] = counts.get(m["verdict"], 0) + 1
hist = max([m["history_runs"] for m in judged] or [0])
print(len(changed), doc["verdict"], " ".join("%s %d" % kv for kv in sorted(counts.items())), "history %d" % hist,
      "; ".join("%s/%s %s %s %.3f" % (m["workload"], "/".join(m["params"].values()), m["metric"], m["verdict"], m["ratio"]) for m in changed))
PY
)
  n=${line%% *}
  printf 'pair %2d  exit %d  %s\n' "$i" "$rc" "${line#* }"
  if [ "$n" -gt 0 ]; then false_pairs=$((false_pairs + 1)); false_metrics=$((false_metrics + n)); fi
done
echo "false changes: $false_pairs of $pairs pairs ($false_metrics metrics)"
