#!/usr/bin/env bash
# The gate's A/A check on this machine (issue 11's "done when"): a baseline of
# RUNS runs of the selection, then GATES consecutive gates of the same,
# unchanged build; prints each gate's exit code and the tally. A gate of an
# unchanged build should exit 0 (pass), never 1 (regression).
#
#   scripts/gate-aa.sh [--runs 5] [--gates 10] [--db FILE] [-- run options]
#   default run options: --suite amp --quick --filter mlp
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${PERFBENCH_BIN:-$here/build/perfbench}"
runs=5 gates=10 db="$(mktemp -d)/gate-aa.db"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --gates) gates="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "gate-aa.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
sel=("$@")
[[ ${#sel[@]} -eq 0 ]] && sel=(--suite amp --quick --filter mlp)
echo "database $db; selection ${sel[*]}"
for i in $(seq "$runs"); do "$bin" run "${sel[@]}" --db "$db" --label aa-base --format none; done
"$bin" baseline set aa "$(printf 'aa-base')" --db "$db"
declare -A tally=()
for g in $(seq "$gates"); do
  start=$(date +%s.%N)
  set +e
  "$bin" gate --baseline aa --db "$db" --label aa-gate --format none --json "${db%.db}-gate-$g.json" 2>/dev/null
  code=$?
  set -e
  printf 'gate %2d: exit %d (%.1f s)\n' "$g" "$code" "$(echo "$(date +%s.%N) - $start" | bc)"
  tally[$code]=$(( ${tally[$code]:-0} + 1 ))
done
for c in "${!tally[@]}"; do echo "exit $c: ${tally[$c]} of $gates"; done
