#!/usr/bin/env bash
# The verdict checks of issue 25 on this machine, through the real binary:
#   pairs     PAIRS x 2 consecutive default runs of the selection, compared
#             in pairs: none should report a regression or an improvement;
#   nightly   RUNS runs labelled nightly, then GATES consecutive
#             `gate --baseline label:nightly --last RUNS` of the unchanged
#             build: each should exit 0 (never 1) and print its detectable
#             effect for throughput;
#   selftest  selftest/noisy at its default (measured) noise: a RUNS-run
#             rolling window, then GATES gates with a planted 10% slowdown
#             (each should be a regression) and GATES without (each a pass).
# Prints every exit code, the tallies and the time of a gate against a run.
#
#   scripts/verdict-check.sh [pairs|nightly|selftest|all] [--pairs 10] [--runs 20] [--gates 10]
#                            [--dir DIR] [-- run options]
#   default run options: --suite amp --quick --filter mlp
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${PERFBENCH_BIN:-$here/build/perfbench}"
what=all pairs=10 runs=20 gates=10 dir="$(mktemp -d)"
if [[ $# -gt 0 && "$1" != -* ]]; then what="$1"; shift; fi
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pairs) pairs="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --gates) gates="$2"; shift 2 ;;
    --dir) dir="$2"; mkdir -p "$dir"; shift 2 ;;
    --) shift; break ;;
    *) echo "verdict-check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$what" in pairs|nightly|selftest|all) ;; *) echo "verdict-check.sh: unknown check '$what'" >&2; exit 2 ;; esac
sel=("$@")
[[ ${#sel[@]} -eq 0 ]] && sel=(--suite amp --quick --filter mlp)
echo "directory $dir; selection ${sel[*]}"
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

check_pairs() {
  local db="$dir/pairs.db" moved=0
  for i in $(seq $((2 * pairs))); do "$bin" run "${sel[@]}" --db "$db" --label "p$i" --format none 2>/dev/null; done
  for p in $(seq "$pairs"); do
    local a=$((2 * p - 1)) b=$((2 * p)) out
    set +e
    out=$("$bin" compare "p$a" "p$b" --db "$db" --format json)
    set -e
    local changed
    changed=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(m["verdict"] in ("regression","improvement") for m in d["metrics"]))' <<<"$out")
    printf 'pair %2d (runs p%d, p%d): %s metric(s) called a regression or an improvement\n' "$p" "$a" "$b" "$changed"
    [[ "$changed" -gt 0 ]] && moved=$((moved + 1))
  done
  echo "pairs: $moved of $pairs reported a change"
}

gates_against() {  # db label extra-env... : GATES gates, tally of exit codes
  local db="$1" label="$2"; shift 2
  declare -A tally=()
  for g in $(seq "$gates"); do
    local start code
    start=$(now)
    set +e
    env "$@" "$bin" gate --baseline "label:$label" --last "$runs" --db "$db" --label "$label-gate" --format none \
      --json "$dir/$label-gate-$g.json" 2>"$dir/$label-gate-$g.err"
    code=$?
    set -e
    printf 'gate %2d: exit %d (%.1f s) %s\n' "$g" "$code" "$(since "$start")" \
      "$(grep -o 'this gate [^(]*' "$dir/$label-gate-$g.err" | head -1)"
    tally[$code]=$(( ${tally[$code]:-0} + 1 ))
  done
  for c in "${!tally[@]}"; do echo "exit $c: ${tally[$c]} of $gates"; done
}

check_nightly() {
  local db="$dir/nightly.db" start
  start=$(now)
  for i in $(seq "$runs"); do "$bin" run "${sel[@]}" --db "$db" --label nightly --format none 2>/dev/null; done
  printf 'a default run: %.1f s\n' "$(echo "$(since "$start") / $runs" | bc -l)"
  gates_against "$db" nightly PERFBENCH_SELFTEST_SLOWDOWN=
}

check_selftest() {
  local db="$dir/selftest.db"
  for i in $(seq "$runs"); do "$bin" run --suite selftest --filter noisy --db "$db" --label st --format none 2>/dev/null; done
  # Candidates are labelled st-gate: the window stays the RUNS unplanted runs.
  echo "planted 10% slowdown:"
  gates_against "$db" st PERFBENCH_SELFTEST_SLOWDOWN=0.10
  echo "unplanted:"
  gates_against "$db" st PERFBENCH_SELFTEST_SLOWDOWN=
}

[[ "$what" == pairs || "$what" == all ]] && check_pairs
[[ "$what" == nightly || "$what" == all ]] && check_nightly
[[ "$what" == selftest || "$what" == all ]] && check_selftest
exit 0
