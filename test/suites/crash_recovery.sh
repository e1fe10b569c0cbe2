#!/usr/bin/env bash
# crash_recovery.sh: the server crashes right after a staged catalog import
# that was rolled back, and comes back with the catalog it had (issue 24).
# PostgreSQL 15 cannot finish crash recovery after an UNLOGGED table's
# TRUNCATE was rolled back and the abort record did not reach the disk
# ("could not create file ...: File exists", the cluster stays down); 0.2.0
# truncated its unlogged staging table at the end of every staged import.
# Each round: a staged import committed, then one rolled back (another session
# commits meanwhile, so the WAL of the import is on disk up to there), then at
# once a crash:
#   - a backend killed with SIGKILL (what a crashing function does: the
#     postmaster restarts every process through crash recovery);
#   - an immediate stop (pg_ctl stop -m immediate), then a start;
#   - kill -9 of the postmaster, its processes gone, then a start.
# After each: the server accepts connections, the log has no FATAL, and the
# catalog, the imports and the staged lines are what was committed.  Then lines
# staged by a kbench_admin and not imported survive an immediate stop.
# wal_writer_delay = 10s keeps the wal writer from writing the abort record
# before the crash (the window in which PostgreSQL's bug bites, made wide).
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh
ki_cluster_start "wal_writer_delay = 10s" || { echo "not ok - the cluster starts"; exit 1; }
TMP=$(mktemp -d /tmp/kernelindex-crash.XXXXXX); chmod 755 "$TMP"
trap 'ki_cluster_stop; rm -rf "$TMP"' EXIT
q() { psql -X -At -q -c "$1" 2>&1; }
DATA=$KI_CLUSTER_DIR/data
LOG=$KI_CLUSTER_DIR/server.log
q "CREATE EXTENSION kernelindex" >/dev/null
q "CREATE TABLE crash_marker (n int)" >/dev/null
q "CREATE ROLE crash_admin LOGIN IN ROLE kbench_admin" >/dev/null
zstd -q -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | head -3000 >"$TMP/a.jsonl"
zstd -q -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | sed -n '3001,6000p' >"$TMP/b.jsonl"
chmod a+r "$TMP"/*.jsonl
COPY_OPTS="WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')"

ok "$(q "SELECT relpersistence FROM pg_class WHERE oid = 'kbench_import_staging'::regclass")" p \
  "the staging table is a logged table (no unlogged table is truncated)"

# What must survive: the catalog's digests and rows, the finished imports, the staged lines.
state() {
  q "SELECT (SELECT count(*) || ':' || md5(coalesce(string_agg(digest, ',' ORDER BY digest), '')) FROM (
             SELECT digest FROM kbench_operations UNION ALL SELECT digest FROM kbench_workloads
             UNION ALL SELECT digest FROM kbench_implementations UNION ALL SELECT digest FROM kbench_runs) d)
          || ' rows ' || (SELECT count(*) FROM kbench_catalog_rows)
          || ' imports ' || (SELECT coalesce(string_agg(source || '=' || inserted, ',' ORDER BY id), '') FROM kbench_imports)
          || ' staged ' || (SELECT count(*) FROM kbench_import_staging)"
}
# One round: a committed staged import of FILE, then a rolled-back one (nothing else staged:
# 0.2.0 truncated the table then); the crash comes right after the ROLLBACK.
round() {
  local file=$1 name=$2
  psql -X -q -v ON_ERROR_STOP=1 >"$TMP/round.out" 2>&1 <<SQL
\\copy kbench_import_staging (line) FROM '$file' $COPY_OPTS
SELECT lines FROM kbench_import_catalog_staged('$name');
SQL
  before=$(state)
  psql -X -q -v ON_ERROR_STOP=1 >>"$TMP/round.out" 2>&1 <<SQL
BEGIN;
\\copy kbench_import_staging (line) FROM '$file' $COPY_OPTS
SELECT lines FROM kbench_import_catalog_staged('$name rolled back');
\\! psql -X -q -c "INSERT INTO crash_marker VALUES (1)"
ROLLBACK;
SQL
}
# Up again: accepts connections within 120 s, no FATAL in the log since offset $1.
came_back() {
  local from=$1 what=$2 fatal
  wait_for "SELECT true" 120
  fatal=$(tail -c +"$from" "$LOG" | grep -E 'FATAL|PANIC' | grep -vE 'the database system is (starting up|in recovery mode|shutting down|not yet accepting connections)' | head -2)
  if [ "$(q "SELECT true")" = t ] && [ -z "$fatal" ]; then echo "ok - $what: the server comes back up"
  else echo "not ok - $what: the server comes back up"; printf '%s\n' "$fatal" | sed 's/^/#   /'
    tail -c +"$from" "$LOG" | tail -5 | sed 's/^/#   /'; return 1; fi
}
start_again() { ki_as_owner pg_ctl -D "$DATA" -l "$LOG" -w -t 120 start >/dev/null 2>&1; }

# 1. a backend killed with SIGKILL: the postmaster's own crash recovery
sleeper_pid() { # a session that only waits, killed as a crashing function would die
  psql -X -q -c "SELECT pg_sleep(600)" >/dev/null 2>&1 &
  wait_for "SELECT count(*) = 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'" 60
  q "SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(600)'"
}
pid=$(sleeper_pid)
round "$TMP/a.jsonl" first
from=$(($(stat -c %s "$LOG") + 1))
kill -9 "$pid"
came_back "$from" "a backend killed (SIGKILL) right after a rolled-back staged import" || exit 1
ok "$(state)" "$before" "... the catalog, the imports and the staged lines are what was committed"
ok "$(grep -c 'terminated by signal 9' "$LOG")" 1 "... (it went through crash recovery)"

# 2. an immediate stop
round "$TMP/a.jsonl" second
from=$(($(stat -c %s "$LOG") + 1))
ki_as_owner pg_ctl -D "$DATA" -m immediate -w stop >/dev/null 2>&1
start_again
came_back "$from" "an immediate stop right after a rolled-back staged import, then a start" || exit 1
ok "$(state)" "$before" "... the catalog, the imports and the staged lines are what was committed"

# 3. kill -9 of the postmaster; its processes end when they see it gone
pm=$(head -1 "$DATA/postmaster.pid")
children=$(ps -o pid= --ppid "$pm" | tr '\n' ' ')
round "$TMP/a.jsonl" third
from=$(($(stat -c %s "$LOG") + 1))
kill -9 "$pm"
for i in $(seq 1 600); do
  alive=0; for c in $children; do kill -0 "$c" 2>/dev/null && alive=1; done
  [ "$alive" = 0 ] && break; sleep 0.1
done
start_again
came_back "$from" "kill -9 of the postmaster right after a rolled-back staged import, then a start" || exit 1
ok "$(state)" "$before" "... the catalog, the imports and the staged lines are what was committed"

# 4. lines staged by a kbench_admin and not imported yet survive a crash (the table is logged)
# (and another role's staged import, meanwhile, leaves them there)
psql -X -q -v ON_ERROR_STOP=1 -U crash_admin -c "\\copy kbench_import_staging (line) FROM '$TMP/b.jsonl' $COPY_OPTS" >/dev/null 2>&1
psql -X -q -v ON_ERROR_STOP=1 >/dev/null 2>&1 <<SQL
\\copy kbench_import_staging (line) FROM '$TMP/a.jsonl' $COPY_OPTS
SELECT lines FROM kbench_import_catalog_staged('fourth');
SQL
from=$(($(stat -c %s "$LOG") + 1))
ki_as_owner pg_ctl -D "$DATA" -m immediate -w stop >/dev/null 2>&1
start_again
came_back "$from" "an immediate stop with lines staged" || exit 1
ok "$(q "SELECT count(*) FROM kbench_import_staging WHERE staged_by = 'crash_admin'")" 3000 \
  "lines staged and not imported survive another role's import and the crash (a logged table)"
out=$(psql -X -At -q -U crash_admin -c "SELECT lines, rejected FROM kbench_import_catalog_staged('after')" 2>&1)
ok "$out $(q "SELECT count(*) FROM kbench_import_staging")" "3000|0 0" \
  "... and a staged import after recovery imports them (none rejected) and empties the table by DELETE"
ok "$(q "SELECT count(*) FROM kbench_imports WHERE source LIKE '%rolled back'")" 0 "no rolled-back import is recorded"
