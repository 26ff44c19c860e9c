#!/usr/bin/env bash
# A throw-away PostgreSQL server for tests and trials: Debian's postgresql,
# initdb in a directory of its own, listening on a Unix socket there (and on
# 127.0.0.1 only, on a free port).
#   scripts/postgres.sh start DIR [--password PW]
#                                   prints the study storage URL; DIR/env holds it too. A server of DIR
#                                   that is running, or was halted: the same server, the same URL.
#                                   With --password, a role "iotuner" that logs in with that password
#                                   (scram-sha-256) owns the database, and the URL is that role's, with PW
#   scripts/postgres.sh halt DIR    stops the server, keeps its data (tests of a lost connection)
#   scripts/postgres.sh stop DIR    stops the server and removes DIR
set -euo pipefail
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR [--password PW] | halt DIR | stop DIR" >&2; exit 2; }
password=
if [ "${3:-}" = "--password" ]; then
  password=${4:-}
  [ -n "$password" ] || { echo "postgres.sh: --password needs a password" >&2; exit 2; }
fi

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/postgres" ] || { echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
# the server refuses to run as root: run it as the postgres user then
as_owner=()
if [ "$(id -u)" -eq 0 ]; then as_owner=(runuser -u postgres --); fi

url_of() {  # the URL recorded at the first start
  sed -n 's/^IOTUNER_TEST_POSTGRES=//p' "$dir/env" | python3 -c 'import shlex,sys; print(shlex.split(sys.stdin.read())[0])'
}
serve() {  # start the server of DIR on its port
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-k $dir -p $1 -h 127.0.0.1 -c fsync=off -c max_connections=300" start >/dev/null
}

case $cmd in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ -f "$dir/env" ]; then  # started before: running now, or halted
    if ! "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      serve "$(sed -n 's/^POSTGRES_PORT=//p' "$dir/env")"
    fi
    url_of
    exit 0
  fi
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  "${as_owner[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if [ -n "$password" ]; then  # the superuser keeps trust on the socket; everyone else logs in with a password
    printf 'local all postgres trust\nlocal all all scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\n' \
      >"$dir/data/pg_hba.conf"
  fi
  serve "$port"
  if [ -n "$password" ]; then
    echo "CREATE ROLE iotuner LOGIN PASSWORD :'pw';" |
      "${as_owner[@]}" "$bin/psql" -q -h "$dir" -p "$port" -U postgres -d postgres -v pw="$password" >/dev/null
    "${as_owner[@]}" "$bin/createdb" -h "$dir" -p "$port" -U postgres -O iotuner iotuner
    encoded=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$password")
    url="postgresql+psycopg2://iotuner:$encoded@127.0.0.1:$port/iotuner"
  else
    "${as_owner[@]}" "$bin/createdb" -h "$dir" -p "$port" -U postgres iotuner
    url="postgresql+psycopg2://postgres@/iotuner?host=$dir&port=$port"
  fi
  printf 'IOTUNER_TEST_POSTGRES=%q\nPOSTGRES_PORT=%s\n' "$url" "$port" >"$dir/env"
  chmod 600 "$dir/env"
  echo "$url"
  ;;
halt)
  "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
  ;;
stop)
  [ -d "$dir/data" ] && "${as_owner[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*) echo "usage: $0 start DIR [--password PW] | halt DIR | stop DIR" >&2; exit 2 ;;
esac
