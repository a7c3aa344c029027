#!/usr/bin/env bash
# The stores under load: W concurrent writers x N runs (default 8 x 100) into
# a throwaway PostgreSQL server (scripts/pg-test-server.sh: fsync off) and
# into one SQLite file (WAL, synchronous=NORMAL), each run shaped like a
# selftest run (3 results, its samples), every run, result and sample counted
# afterwards. Prints the runs per second each store sustained.
#   bench/fleet_load.sh BUILD_DIR [WRITERS] [RUNS]
set -euo pipefail
build="$(realpath "$1")"; writers="${2:-8}"; runs="${3:-100}"
source "$(cd "$(dirname "$0")/.." && pwd)/scripts/pg-test-server.sh"
work="$(mktemp -d /tmp/perfbench-load.XXXXXX)"
trap 'pg_test_stop; rm -rf "$work"' EXIT
pg_test_start "$work"
pg_test_psql postgres -c "CREATE DATABASE load" >/dev/null
cd "$work"
"$build/perfbench" run --suite selftest --filter fake/mode:ok --repetitions 5 --processes 2 --label template \
  --db template.db --format none >/dev/null 2>&1
"$build/perfbench" show template --db template.db --format json > template.json
"$build/bench/store_load" --db "$pg_url_base/load" --template template.json --writers "$writers" --runs "$runs"
"$build/bench/store_load" --db "$work/load.db" --template template.json --writers "$writers" --runs "$runs"
