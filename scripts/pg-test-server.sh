# A throwaway PostgreSQL server for the fleet test and benchmark (sourced):
# Debian's initdb and pg_ctl in a temporary folder, a free port on
# 127.0.0.1, fsync off, a password login (scram) whose password is in a
# pgpass file (PGPASSFILE), as `nobody` when run as root (initdb and the
# server refuse root).
#   source scripts/pg-test-server.sh
#   pg_test_start DIR      # sets pg_port, pg_sock, pg_url_base (postgresql://fleetadmin@127.0.0.1:PORT)
#   pg_test_psql DB SQL... # as the admin, over the socket
#   pg_test_restart        # pg_ctl stop -m fast, then start again
#   pg_test_stop
pg_test_fail() { echo "FAIL: $*" >&2; exit 1; }

pg_test_start() {
  pg_dir="$1"
  pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  [ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] || pg_test_fail "no PostgreSQL server here (initdb): scripts/setup.sh installs postgresql"
  command -v psql >/dev/null || pg_test_fail "no psql: scripts/setup.sh installs postgresql-client"
  pg_as=()
  if [ "$(id -u)" = 0 ]; then pg_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups --); fi
  chmod 755 "$pg_dir"
  mkdir -p "$pg_dir/data" "$pg_dir/sock"
  [ "${#pg_as[@]}" -gt 0 ] && chown nobody:nogroup "$pg_dir/data" "$pg_dir/sock"
  pg_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  pg_sock="$pg_dir/sock"
  printf 'fleet-secret\n' > "$pg_dir/pw"; chmod 644 "$pg_dir/pw"
  "${pg_as[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U fleetadmin --pwfile="$pg_dir/pw" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 >"$pg_dir/initdb.log" 2>&1 || { cat "$pg_dir/initdb.log"; pg_test_fail "initdb"; }
  rm -f "$pg_dir/pw"
  pg_test_run
  # The documented way to give a password: a pgpass file, not the URL.
  printf '127.0.0.1:%s:*:fleetadmin:fleet-secret\n' "$pg_port" > "$pg_dir/pgpass"; chmod 600 "$pg_dir/pgpass"
  export PGPASSFILE="$pg_dir/pgpass"
  pg_url_base="postgresql://fleetadmin@127.0.0.1:$pg_port"
}

pg_test_run() {
  "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_sock/server.log" -w -t 60 \
    -o "-p $pg_port -k $pg_sock -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50" start >/dev/null \
    || { cat "$pg_sock/server.log"; pg_test_fail "the server did not start"; }
}

pg_test_psql() {
  local db="$1"; shift
  psql -h "$pg_sock" -p "$pg_port" -U fleetadmin -d "$db" -qAt "$@"
}

pg_test_restart() {
  "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast stop >/dev/null
  pg_test_run
}

pg_test_stop() {
  [ -n "${pg_dir:-}" ] && "${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate stop >/dev/null 2>&1 || true
}
