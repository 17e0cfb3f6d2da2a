#!/usr/bin/env bash
# A throwaway PostgreSQL server (Debian's postgresql package) for the collector's tests and
# load benchmark: its own data directory, 127.0.0.1 only, trust authentication, run as the
# postgres user. Prints the URL to export as SERVERTRUST_POSTGRES_URL.
#
#   scripts/postgres-test-server.sh start   # initdb if needed, start, create the database
#   scripts/postgres-test-server.sh stop
#   scripts/postgres-test-server.sh url
#
# Environment: SERVERTRUST_PG_PORT (default 54329), SERVERTRUST_PG_DIR (default
# /tmp/servertrust-postgres), SERVERTRUST_PG_DATABASE (default servertrust_test).
set -euo pipefail
PORT="${SERVERTRUST_PG_PORT:-54329}"
DIR="${SERVERTRUST_PG_DIR:-/tmp/servertrust-postgres}"
DATABASE="${SERVERTRUST_PG_DATABASE:-servertrust_test}"
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
URL="postgresql://postgres@127.0.0.1:$PORT/$DATABASE"
# The postgres user may not read the caller's directory (a clone under /root): work from /.
cd /

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; elif [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    [ -n "$BIN" ] || { echo "postgres-test-server: no /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2; exit 1; }
    if [ ! -f "$DIR/data/PG_VERSION" ]; then
      mkdir -p "$DIR"
      [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
      as_postgres "$BIN/initdb" -D "$DIR/data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 \
        || { cat "$DIR/initdb.log" >&2; exit 1; }
    fi
    if ! as_postgres "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
      as_postgres "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
        -o "-p $PORT -c listen_addresses=127.0.0.1 -k $DIR -c max_connections=200 -c fsync=on -c synchronous_commit=on" start >/dev/null \
        || { tail -20 "$DIR/server.log" >&2; exit 1; }
    fi
    if ! as_postgres "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'" postgres | grep -q 1; then
      as_postgres "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -qc "CREATE DATABASE $DATABASE" postgres
    fi
    echo "$URL"
    ;;
  stop)
    [ -f "$DIR/data/PG_VERSION" ] && as_postgres "$BIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true
    ;;
  url) echo "$URL" ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
