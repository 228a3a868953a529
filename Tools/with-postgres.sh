#!/bin/bash
# Runs a command beside a PostgreSQL server of its own: a new cluster (Debian's postgresql package) in a
# temporary folder, listening on a free loopback port, with HERALD_TEST_POSTGRES_URL naming a superuser
# there. The server is stopped and its folder removed when the command ends, however it ends.
#   Tools/with-postgres.sh swift test --skip-build
set -euo pipefail

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "with-postgres: no PostgreSQL server under /usr/lib/postgresql (install Debian's postgresql package: make test-deps)" >&2
    exit 69
fi

folder=$(mktemp -d /tmp/herald-postgres.XXXXXX)
# The server refuses to run as root: it runs as the postgres user the package made, in a folder it owns.
as_owner=()
if [ "$(id -u)" = 0 ]; then
    chown postgres: "$folder"
    as_owner=(runuser -u postgres --)
fi
stop() {
    "${as_owner[@]}" "$bin/pg_ctl" -D "$folder/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$folder"
}
trap stop EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as_owner[@]}" "$bin/initdb" -D "$folder/data" -U herald -A trust -E UTF8 --locale=C.UTF-8 --no-sync >"$folder/initdb.log" 2>&1 \
    || { cat "$folder/initdb.log" >&2; exit 1; }
# Tests make and drop a database each: durability is not what they check, so the server skips fsync.
"${as_owner[@]}" "$bin/pg_ctl" -D "$folder/data" -w -l "$folder/server.log" \
    -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$folder -c fsync=off -c max_connections=200" start >/dev/null \
    || { cat "$folder/server.log" >&2; exit 1; }

export HERALD_TEST_POSTGRES_URL="postgres://herald@127.0.0.1:$port/postgres?sslmode=disable"
echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2
"$@"
