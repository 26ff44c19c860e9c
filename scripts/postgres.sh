#!/usr/bin/env bash
# A throw-away PostgreSQL server for tests and trials: Debian's postgresql,
# initdb in a directory of its own, listening on a Unix socket there (and on
# 127.0.0.1 only, on a free port).
#   scripts/postgres.sh start DIR   prints the study storage URL; DIR/env holds it too
#                                   (a DIR halted before: the same server again, same URL)
#   scripts/postgres.sh halt DIR    stops the server, keeps its data (tests of a lost connection)
#   scripts/postgres.sh stop DIR    stops the server and removes DIR
set -euo pipefail
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/postgres" ] || { echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
# the server refuses to run as root: run it as the postgres user then
as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi

case $cmd in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ -f "$dir/env" ]; then  # halted before: start the same server again
    port=$(sed -n 's/^POSTGRES_PORT=//p' "$dir/env")
    "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-k $dir -p $port -h 127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null
    sed -n 's/^IOTUNER_TEST_POSTGRES=//p' "$dir/env" | python3 -c 'import shlex,sys; print(shlex.split(sys.stdin.read())[0])'
    exit 0
  fi
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-k $dir -p $port -h 127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null
  "${as_owner[@]}" "$bin/createdb" -h "$dir" -p "$port" -U postgres iotuner
  url="postgresql+psycopg2://postgres@/iotuner?host=$dir&port=$port"
  printf 'IOTUNER_TEST_POSTGRES=%q\nPOSTGRES_PORT=%s\n' "$url" "$port" >"$dir/env"
  echo "$url"
  ;;
halt)
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
  ;;
stop)
  [ -d "$dir/data" ] && "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*) echo "usage: $0 start|halt|stop DIR" >&2; exit 2 ;;
esac
