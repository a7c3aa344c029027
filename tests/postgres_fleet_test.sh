#!/usr/bin/env bash
# The fleet against a real PostgreSQL server: one started here from Debian's
# packages (initdb and pg_ctl in a temporary folder, a free port, stopped at
# the end; both refuse root, so as root the server runs as `nobody`). No
# server means a failure, not a skip.
#   postgres_fleet_test.sh PERFBENCH CORE_TEST STORE_LOAD
# Covers: the store contract (core_test's postgres cases), bad URLs and
# logins (exit 2 / 4, one line, no password shown), three machines' runs
# pushed (idempotently) and read back by runs, procure, report, history,
# compare and a gate (which writes its run there), a push killed at each failpoint (no partial run; the next push
# completes), the server restarted mid-push, text that is not UTF-8 pushed as
# U+FFFD, and 8 concurrent writers into
# the server and into one SQLite file.
set -euo pipefail
bin="$(realpath "$1")"; core_test="$(realpath "$2")"; store_load="$(realpath "$3")"
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "== $*"; }

source "$(dirname "$(realpath "$0")")/../scripts/pg-test-server.sh"
work="$(mktemp -d /tmp/perfbench-pg.XXXXXX)"
trap 'pg_test_stop; rm -rf "$work"' EXIT
pg_test_start "$work"
port="$pg_port"
pg_test_psql postgres -c "CREATE DATABASE fleet" -c "CREATE DATABASE contract" -c "CREATE DATABASE load" >/dev/null
url="postgresql://fleetadmin@127.0.0.1:$port/fleet"
cd "$work"

say "the store contract on the server"
PERFBENCH_TEST_POSTGRES_URL="postgresql://fleetadmin@127.0.0.1:$port/contract" \
  "$core_test" --gtest_filter='Engines/StoreContract.*' >contract.log 2>&1 || { cat contract.log; fail "contract tests"; }
grep -q "SKIPPED" contract.log && { cat contract.log; fail "contract tests skipped"; }
grep -q "postgres" contract.log || fail "no postgres contract case ran"

# expect CODE CMD...: exits CODE with exactly one line on stderr.
expect() {
  local code="$1"; shift
  set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
  [ "$rc" = "$code" ] || { cat err.txt; fail "'$*' exited $rc, expected $code"; }
  [ "$(wc -l < err.txt)" = 1 ] || { cat err.txt; fail "'$*' printed not one line on stderr"; }
}
say "bad URLs and logins"
expect 2 "$bin" runs --db "postgresql://127.0.0.1:$port/fleet?nosuchoption=1"
expect 4 "$bin" runs --db "postgresql://fleetadmin@127.0.0.1:1/fleet?connect_timeout=3"
PGPASSFILE=/dev/null expect 4 "$bin" runs --db "postgresql://fleetadmin:wrong-secret@127.0.0.1:$port/fleet"
grep -q "wrong-secret" err.txt && fail "the password was printed: $(cat err.txt)"
grep -q "fleetadmin:\*\*\*@" err.txt || fail "the error does not name the server: $(cat err.txt)"
expect 2 "$bin" runs --db "postgresql://fleetadmin@127.0.0.1:$port/postgres"   # no perfbench tables there
expect 2 "$bin" push --db nothing-here.db --to "$url"

say "three machines, measured and imported, pushed"
PERFBENCH_MACHINE=m1 "$bin" run --suite selftest --filter fake/mode:ok --repetitions 5 --processes 2 --label nightly \
  --db m1.db >/dev/null
"$bin" show nightly --db m1.db --format json > m1.json
python3 - <<'PY'
import json, uuid
doc = json.load(open("m1.json"))
for name, scale in (("m2", 1.5), ("m3", 0.7)):
    d = json.loads(json.dumps(doc))
    d["run"].update(uuid=uuid.uuid4().hex, machine=name, hostname=name + ".example")
    d["run"]["fingerprint"]["cpu_model"] = "Imported CPU " + name
    d["run"]["profile_key"] = (name * 8)[:16]
    for r in d["results"]:
        r["samples"] = [s * (scale if r["higher_is_better"] else 1 / scale) for s in r["samples"]]
    json.dump(d, open(name + ".json", "w"))
PY
for m in m2 m3; do "$bin" import "$m.json" --db "$m.db" >/dev/null; done
for m in m1 m2 m3; do "$bin" push --to "$url" --db "$m.db" > "push-$m.txt"; grep -q "pushed 1 run" "push-$m.txt" || fail "push $m: $(cat push-$m.txt)"; done
"$bin" push --to "$url" --db m1.db > again.txt
grep -q "pushed 0 run(s) .*; 1 already there" again.txt || fail "a second push landed again: $(cat again.txt)"
"$bin" runs --db "$url" --format json --limit 0 > runs.json
python3 - <<'PY' || fail "runs on the server"
import json
runs = json.load(open("runs.json"))["runs"]
assert sorted(r["machine"] for r in runs) == ["m1", "m2", "m3"], runs
local = json.load(open("m1.json"))["run"]["uuid"]
assert local in [r["uuid"] for r in runs], "m1's uuid did not survive the push"
PY
[ "$("$bin" runs --machines --db "$url" | sort | tr '\n' ' ')" = "m1 m2 m3 " ] || fail "runs --machines"
"$bin" runs --machine m2 --db "$url" | grep -q m2 || fail "runs --machine m2"
"$bin" show "$(python3 -c 'import json; print([r["id"] for r in json.load(open("runs.json"))["runs"] if r["machine"]=="m1"][0])')" \
  --db "$url" --format json > m1-server.json
python3 - <<'PY' || fail "samples or fingerprint changed on the way"
import json
a, b = json.load(open("m1.json")), json.load(open("m1-server.json"))
assert a["run"]["fingerprint"] == b["run"]["fingerprint"]
assert [r["samples"] for r in a["results"]] == [r["samples"] for r in b["results"]]
assert [r.get("process") for r in a["results"]] == [r.get("process") for r in b["results"]]
PY

say "read across the fleet: procure, report, history, compare"
"$bin" procure --label nightly --db "$url" --format json > procure.json
python3 - <<'PY' || fail "procure over the fleet"
import json
p = json.load(open("procure.json"))
assert [m["ref"] for m in p["machines"]] == ["m1", "m2", "m3"], p["machines"]
row = p["rows"][0]
ranks = {p["machines"][i]["ref"]: e["rank"] for i, e in enumerate(row["entries"])}
assert ranks["m2"] < ranks["m1"] < ranks["m3"], ranks
PY
"$bin" procure machine:m1 machine:m3 --db "$url" >/dev/null || fail "procure machine:NAME"
"$bin" report --label nightly --db "$url" --output fleet.html 2>/dev/null || fail "report"
for m in m1 m2 m3; do grep -q "$m (run" fleet.html || fail "the report lacks machine $m"; done
"$bin" history --label nightly --db "$url" >/dev/null || fail "history"
ids=($(python3 -c 'import json; print(" ".join(str(r["id"]) for r in json.load(open("runs.json"))["runs"]))'))
set +e; "$bin" compare "${ids[2]}" "${ids[1]}" --db "$url" --across-hardware >/dev/null; rc=$?; set -e
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "compare on the server exited $rc"

say "a gate against a baseline on the server, writing its run there"
m1_id="$(python3 -c 'import json; print([r["id"] for r in json.load(open("runs.json"))["runs"] if r["machine"]=="m1"][0])')"
"$bin" baseline set fleet-m1 "$m1_id" --db "$url" >/dev/null
before="$(pg_test_psql fleet -c "SELECT count(*) FROM runs")"
set +e; PERFBENCH_MACHINE=m1 "$bin" gate --baseline fleet-m1 --processes 2 --db "$url" >gate.out 2>gate.err; rc=$?; set -e
case "$rc" in 0|1|3) ;; *) cat gate.err; fail "gate on the server exited $rc";; esac
[ "$(pg_test_psql fleet -c "SELECT count(*) FROM runs")" -gt "$before" ] || fail "the gate's run is not on the server"
[ "$(pg_test_psql fleet -c "SELECT machine FROM runs ORDER BY id DESC LIMIT 1")" = m1 ] || fail "the gate's run lost its machine"

say "credentials never reach a stored run"
"$bin" run --suite selftest --filter fake/mode:ok --repetitions 3 --processes 1 --label direct \
  --db "postgresql://fleetadmin:fleet-secret@127.0.0.1:$port/fleet" >/dev/null
"$bin" show direct --db "$url" --format json > direct.json
grep -q "fleet-secret" direct.json && fail "the password was stored with the run"
grep -q 'fleetadmin:\*\*\*@' direct.json || fail "the stored command lost its --db"

say "a push killed inside: no partial run, the next push completes"
for i in 1 2 3 4; do PERFBENCH_MACHINE=m4 "$bin" run --suite selftest --filter fake/mode:ok --repetitions 3 \
  --processes 1 --label killed --db m4.db >/dev/null; done
whole() {  # every m4 run on the server has all its results and samples
  pg_test_psql fleet -c "
    SELECT count(*) FROM runs r WHERE r.machine = 'm4' AND (
      (SELECT count(*) FROM results x WHERE x.run_id = r.id) <> $1 OR
      (SELECT count(*) FROM samples s JOIN results x ON s.result_id = x.id WHERE x.run_id = r.id) <> $2)"
}
results_per_run="$(sqlite3 m4.db 'SELECT count(*) FROM results WHERE run_id = 1')"
samples_per_run="$(sqlite3 m4.db 'SELECT count(*) FROM samples s JOIN results x ON s.result_id = x.id WHERE x.run_id = 1')"
for point in store:after-run-row store:after-results store:before-commit push:after-run; do
  set +e; PERFBENCH_FAILPOINT="$point" "$bin" push --to "$url" --db m4.db >/dev/null 2>&1; rc=$?; set -e
  [ "$rc" = 137 ] || fail "failpoint $point: exit $rc, expected 137 (killed)"
  [ "$(whole "$results_per_run" "$samples_per_run")" = 0 ] || fail "failpoint $point left a partial run"
done
"$bin" push --to "$url" --db m4.db >/dev/null
[ "$("$bin" runs --machine m4 --db "$url" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')" = 4 ] \
  || fail "the push after the kills did not complete"
[ "$(whole "$results_per_run" "$samples_per_run")" = 0 ] || fail "a partial run after the final push"

say "the server restarted mid-push"
for i in 1 2 3; do PERFBENCH_MACHINE=m5 "$bin" run --suite selftest --filter fake/mode:ok --repetitions 3 \
  --processes 1 --label restarted --db m5.db >/dev/null; done
PERFBENCH_FAILPOINT=push:after-run:stop "$bin" push --quiet --to "$url" --db m5.db >restart.out 2>restart.err &
pusher=$!
state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
for _ in $(seq 300); do [ "$(state $pusher)" = T ] && break; sleep 0.1; done
[ "$(state $pusher)" = T ] || fail "the push did not reach its failpoint"
pg_test_restart
kill -CONT $pusher
set +e; wait $pusher; rc=$?; set -e
[ "$rc" = 4 ] || { cat restart.err; fail "a push across a restart exited $rc, expected 4"; }
[ "$(wc -l < restart.err)" = 1 ] || { cat restart.err; fail "not one line"; }
"$bin" push --to "$url" --db m5.db > restart2.out
grep -q "pushed 2 run(s) .*; 1 already there" restart2.out || fail "the second push: $(cat restart2.out)"

say "text that is not UTF-8 in a local file (an older perfbench's) still pushes"
set +e; PERFBENCH_MACHINE=m6 "$bin" run --suite selftest --filter 'fake/mode:(ok|throw)' --repetitions 2 \
  --processes 1 --label bytes --db m6.db >/dev/null 2>&1; set -e
sqlite3 m6.db "UPDATE runs SET hostname = CAST(X'6DFF36' AS TEXT);
  UPDATE results SET reason = CAST(X'E9' AS TEXT) || reason WHERE status = 'failed'"
"$bin" push --to "$url" --db m6.db >/dev/null || fail "a run with bytes that are not UTF-8 did not push"
"$bin" show bytes --db "$url" --format json > bytes.json || fail "show of the pushed run"
python3 - <<'PY' || fail "bytes that are not UTF-8 did not arrive as U+FFFD"
import json
d = json.load(open("bytes.json"))
assert d["run"]["hostname"] == "m\ufffd6", d["run"]["hostname"]
assert any(r["reason"].startswith("\ufffd") for r in d["results"] if r["status"] == "failed"), d["results"]
PY

say "8 concurrent writers x ${PERFBENCH_LOAD_RUNS:-10} runs: the server and one SQLite file"
"$store_load" --db "$pg_url_base/load" --template m1.json --writers 8 \
  --runs "${PERFBENCH_LOAD_RUNS:-10}" || fail "load on the server"
"$store_load" --db "$work/load.db" --template m1.json --writers 8 --runs "${PERFBENCH_LOAD_RUNS:-10}" \
  || fail "load on SQLite"
echo "postgres_fleet: all passed"
