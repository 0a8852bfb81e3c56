#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests: `start DIR` creates one in DIR (initdb, as the
# postgres user when run as root), starts it on a free port on 127.0.0.1 with its socket in DIR,
# and prints its URL; `stop DIR` stops it (the caller removes DIR); `stop DIR immediate` as a
# crash would; `restart DIR` starts a stopped one again on its port. Used by .ci/run and, when
# $ONBOARD_TEST_DATABASE_URL is unset, by the tests themselves (Tests/TestSupport/TestDatabase.swift).
set -euo pipefail

usage() { echo "usage: pg-test-cluster.sh start DIR | stop DIR [fast|immediate] | restart DIR" >&2; exit 64; }
[[ $# -eq 2 || ($# -eq 3 && $1 == stop) ]] || usage
command=$1
dir=$(realpath -m "$2")
# The postgres user may not be allowed into the caller's directory.
cd /

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z $bin || ! -x $bin/initdb ]]; then
    echo "pg-test-cluster.sh: no PostgreSQL server binaries in /usr/lib/postgresql/*/bin; install the postgresql package (tools/setup.sh does)" >&2
    exit 69
fi

as_postgres=()
if [[ $(id -u) -eq 0 ]]; then
    as_postgres=(runuser -u postgres --)
fi

case $command in
start)
    mkdir -p "$dir"
    [[ ${#as_postgres[@]} -eq 0 ]] || chown postgres "$dir"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "${as_postgres[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 70; }
    "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null ||
        { cat "$dir/server.log" >&2; exit 70; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    # `stop DIR immediate` stops it as a crash would (no checkpoint; recovery at the next start).
    [[ -d $dir/data ]] || exit 0
    "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -m "${3:-fast}" -w -t 60 stop >/dev/null
    ;;
restart)
    # Starts a stopped cluster again on the same port and options.
    "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "$(sed -n 's/^[^ ]* //p' "$dir/data/postmaster.opts" | sed 's/"//g; s/-D [^ ]*//')" start >/dev/null
    ;;
*)
    usage
    ;;
esac
