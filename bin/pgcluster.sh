#!/usr/bin/env bash
# pgcluster.sh: a throwaway PostgreSQL 15 cluster for tests and the demo.
#   source bin/pgcluster.sh; ki_cluster_start [extra postgresql.conf lines]; ...; ki_cluster_stop
# PostgreSQL refuses to run as root: as root the cluster runs as the
# postgres user.  Connections go through a Unix socket in the cluster's
# directory with trust authentication; PGHOST, PGPORT, PGUSER and
# PGDATABASE are exported for psql and pg_regress.
# KI_PGBIN: another PostgreSQL 15 (tools/pg_sandbox.sh makes one per working copy).
PGBIN=${KI_PGBIN:-/usr/lib/postgresql/15/bin}

ki_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

ki_cluster_start() {
  KI_CLUSTER_DIR=$(mktemp -d /tmp/kernelindex-pg.XXXXXX)
  chmod 755 "$KI_CLUSTER_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres "$KI_CLUSTER_DIR"
  ki_as_owner "$PGBIN/initdb" -D "$KI_CLUSTER_DIR/data" -U postgres --auth=trust \
    --encoding=UTF8 --locale=C.UTF-8 >"$KI_CLUSTER_DIR/initdb.log" 2>&1 ||
    { cat "$KI_CLUSTER_DIR/initdb.log"; return 1; }
  {
    echo "listen_addresses = ''"
    echo "unix_socket_directories = '$KI_CLUSTER_DIR'"
    echo "port = 5432"
    echo "fsync = off"
    echo "log_min_messages = warning"
    for line in "$@"; do echo "$line"; done
  } | ki_as_owner tee -a "$KI_CLUSTER_DIR/data/postgresql.conf" >/dev/null
  ki_as_owner "$PGBIN/pg_ctl" -D "$KI_CLUSTER_DIR/data" -l "$KI_CLUSTER_DIR/server.log" -w start >/dev/null ||
    { cat "$KI_CLUSTER_DIR/server.log"; return 1; }
  export PGHOST="$KI_CLUSTER_DIR" PGPORT=5432 PGUSER=postgres PGDATABASE=postgres
}

ki_cluster_restart() {
  ki_as_owner "$PGBIN/pg_ctl" -D "$KI_CLUSTER_DIR/data" -l "$KI_CLUSTER_DIR/server.log" -w -m fast restart >/dev/null
}

ki_cluster_stop() {
  [ -n "${KI_CLUSTER_DIR:-}" ] || return 0
  ki_as_owner "$PGBIN/pg_ctl" -D "$KI_CLUSTER_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$KI_CLUSTER_DIR"
  KI_CLUSTER_DIR=""
}
