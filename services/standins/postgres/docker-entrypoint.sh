#!/bin/bash
# Stand-in entrypoint: first start runs initdb with POSTGRES_USER/PASSWORD and
# creates POSTGRES_DB, then the server runs in the foreground as `postgres`.
set -euo pipefail
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
[ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD is required" >&2; exit 1; }
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ "${1:-postgres}" = "postgres" ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile="$(mktemp)"; printf '%s' "$POSTGRES_PASSWORD" >"$pwfile"; chown postgres "$pwfile"
    as_pg initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA"
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    as_pg pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    if [ "$POSTGRES_DB" != "postgres" ]; then
      as_pg psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
        -c "CREATE DATABASE \"$POSTGRES_DB\""
    fi
    as_pg pg_ctl -D "$PGDATA" -m fast -w stop
  fi
  shift || true
  exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
