#!/usr/bin/env bash
# The read commands on databases nobody may write (a shared baseline
# database): a current one whose newest run is still in its -wal file, kept
# beside its -wal and -shm in a read-only folder, and an older-schema fixture.
# Root writes to a 0444 file, so as root the folder is also bind-mounted
# read-only in a private mount namespace. Every command must succeed, nothing
# may appear in the folder, and the fixture's bytes must not change.
#   readonly_db_test.sh PERFBENCH FIXTURE_DB
set -euo pipefail
bin="$1"
fixture="$2"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
ro="$work/ro"
mkdir -p "$ro"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The current database: run 1 checkpointed into the main file, run 2 left in
# the -wal (a reader holds the database open while it is written, then dies
# without closing, as a crashed reader would).
"$bin" run --quick --suite selftest --filter fake/mode:ok --processes 1 --label first --db "$ro/current.db" >/dev/null
python3 - "$ro/current.db" "$bin" <<'PY'
import os, sqlite3, subprocess, sys
db, binary = sys.argv[1], sys.argv[2]
held = sqlite3.connect(db)
held.execute("SELECT count(*) FROM runs").fetchone()
subprocess.run([binary, "run", "--quick", "--suite", "selftest", "--filter", "fake/mode:ok", "--processes", "1", "--label", "second",
                "--db", db], check=True, stdout=subprocess.DEVNULL)
os._exit(0)
PY
[ -s "$ro/current.db-wal" ] || fail "the set-up left no -wal file to read"
cp "$fixture" "$ro/old.db"
chmod 0444 "$ro"/*
chmod 0555 "$ro"
before="$(cd "$ro" && ls -lA --time-style=+%s && sha256sum ./*)"

checks() {
  local out="$work/out"
  mkdir -p "$out"
  "$bin" runs --db "$ro/current.db" | grep -q second || fail "runs does not list the run kept in the -wal"
  "$bin" show latest --db "$ro/current.db" >/dev/null
  "$bin" show first --format json --db "$ro/current.db" >/dev/null
  "$bin" compare first second --db "$ro/current.db" >/dev/null || [ $? -eq 1 ] || fail "compare on read-only"
  "$bin" history --db "$ro/current.db" >/dev/null
  "$bin" report --db "$ro/current.db" --output "$out/report.html" >/dev/null
  "$bin" procure first second --db "$ro/current.db" >/dev/null
  "$bin" diagnose latest --db "$ro/current.db" >/dev/null
  "$bin" baseline list --db "$ro/current.db" >/dev/null
  # The older schema: read through an in-memory upgrade, never migrated on disk.
  "$bin" runs --db "$ro/old.db" | grep -q . || fail "runs on the older fixture"
  "$bin" show 1 --format json --db "$ro/old.db" >/dev/null
  "$bin" compare 1 2 --across-hardware --db "$ro/old.db" >/dev/null || [ $? -eq 1 ] || fail "compare on the older fixture"
  "$bin" history --db "$ro/old.db" >/dev/null
  # A write command says what is wrong in one line (exit 2).
  if "$bin" run --quick --suite selftest --filter fake/mode:ok --processes 1 --db "$ro/current.db" >/dev/null 2>"$out/err"; then
    fail "a run wrote into a read-only database"
  fi
  [ "$(wc -l <"$out/err")" -le 1 ] || { cat "$out/err" >&2; fail "the write error is not one line"; }
  grep -q "is read-only" "$out/err" || { cat "$out/err" >&2; fail "the write error does not say read-only"; }
}
export -f checks fail
export bin ro work

if [ "$(id -u)" -eq 0 ]; then
  # shellcheck disable=SC2016
  unshare -m bash -c 'set -euo pipefail; mount --bind "$ro" "$ro"; mount -o remount,bind,ro "$ro"; checks'
else
  checks
fi
after="$(cd "$ro" && ls -lA --time-style=+%s && sha256sum ./*)"
[ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after") >&2; fail "the read-only folder changed"; }
echo "ok: read commands on read-only databases"
