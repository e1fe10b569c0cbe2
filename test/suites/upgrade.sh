#!/usr/bin/env bash
# upgrade.sh: ALTER EXTENSION kernelindex UPDATE from every released version
# gives the same database as a fresh install of the current one.
#   - the old version is installed from its release commit's own install
#     script (test/lib/released.sh) and jobs queued (no worker serves the old install: the library serves a schema
#     of its own version only, so nothing here runs on an old schema beyond
#     loading its rows);
#   - ALTER EXTENSION kernelindex UPDATE; the Liger history imported;
#   - the schema (pg_dump --schema-only --binary-upgrade, which lists the
#     extension's member objects, with the OID-setting calls removed) equals
#     a fresh install's, and so do the catalog's rows.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
trap 'ki_cluster_stop' EXIT
CUR=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control)
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'fresh'" \
                 "kernelindex.devices = 'cpu'" || { echo "not ok - the cluster starts"; exit 1; }
source test/lib/tap.sh
source test/lib/released.sh
q() { psql -X -At -q -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
CSV="$(pwd)/data/liger/all_benchmark_data.csv"
chmod a+r "$CSV" 2>/dev/null

# The schema of a database, extension members included, without OIDs.
schema_of() {
  pg_dump --schema-only --binary-upgrade -d "$1" |
    grep -v -E '^(SELECT pg_catalog\.binary_upgrade_|-- Dumped |SET |SELECT pg_catalog\.set_config)' |
    grep -v -E '^(--|.restrict |.unrestrict |SELECT pg_catalog\.setval)' | sed -e "s/WHERE oid = '[0-9]*'/WHERE oid = N/" -e '/^$/d'
}
# Every row of every table of the extension, timestamps left out (they
# say when a row was written, which differs between two databases).
rows_of() {
  psql -X -At -q -d "$1" <<'SQL'
SELECT c.relname || ': ' || count(*) FROM pg_class c
  JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'kernelindex'
 WHERE c.relkind = 'r' GROUP BY c.relname ORDER BY 1;
SQL
}

for old in $(ki_released_versions); do
  # a worker whose database was dropped (dropdb --force, below) exits for
  # good: a restart gives the new database 'fresh' its worker
  ki_cluster_restart
  createdb old && createdb fresh
  if ! ki_install_released "$old" || ! q old "CREATE EXTENSION kernelindex VERSION '$old'" >/dev/null; then
    echo "not ok - $old installs from its release commit's install script"; dropdb --force old; dropdb --force fresh; continue
  fi
  echo "ok - $old installs from its release commit's install script"
  q fresh "CREATE EXTENSION kernelindex" >/dev/null
  # jobs queued on the old install, as rows (no worker serves it, and
  # kbench_run queues only where one does)
  q old "INSERT INTO kbench_jobs (operation, mode, workload, device, timeout, owner)
         SELECT 'layer_norm', 'forward', jsonb_build_object('rows', 8 + g, 'hidden', 8), 'cpu', '1 minute', current_user
           FROM generate_series(1, 3) g" >/dev/null
  jobs_before=$(q old "SELECT string_agg(id || ':' || operation || ':' || workload::text, ',' ORDER BY id) FROM kbench_jobs")
  # the old install seeded the registry's cost formulas from the library it runs with here (this
  # one): put back what 0.2.0's library seeded for the rows issue 26 item 3 changed (jsd backward,
  # full; kernels/ops/jsd.c at 0.2.0's commit), so that the update has 0.2.0's rows to replace
  q old "UPDATE kbench_operation_costs SET bytes = '3 * dtype_bytes * tokens * vocab + 4 * tokens + 4',
         flops = '12 * tokens * vocab', note = 'as forward (kernels/ops/jsd.c has one cost for every pass)'
         WHERE operation = 'jsd' AND mode IN ('backward', 'full') AND seeded" >/dev/null
  if q old "ALTER EXTENSION kernelindex UPDATE" >/dev/null; then
    ok "$(q old "SELECT extversion FROM pg_extension WHERE extname = 'kernelindex'")" "$CUR" "$old updates to $CUR"
  else
    echo "not ok - ALTER EXTENSION kernelindex UPDATE from $old"
  fi
  d=$(diff <(schema_of old) <(schema_of fresh))
  if [ -z "$d" ]; then echo "ok - $old updated to $CUR has the schema of a fresh $CUR install"
  else echo "not ok - $old updated to $CUR has the schema of a fresh $CUR install"; echo "$d" | head -60 | sed 's/^/# /'; fi
  # the seeded cost formulas are the registry's, as on a fresh install (jsd backward's, issue 26 item 3)
  costs_sql="SELECT md5(string_agg(concat_ws('|', operation, mode, bytes, flops, compute, note), ',' ORDER BY operation, mode))
               FROM kbench_operation_costs WHERE seeded"
  ok "$(q old "$costs_sql")" "$(q fresh "$costs_sql")" "$old updated to $CUR has a fresh install's seeded cost formulas"
  # (once updated, the worker serves the database: the jobs may be running or done by now)
  ok "$(q old "SELECT string_agg(id || ':' || operation || ':' || workload::text, ',' ORDER BY id) FROM kbench_jobs")" "$jobs_before" "$old's jobs survive the update"
  # the library serves only its own version (version_gate.sh): the history is imported after the update
  for db in old fresh; do
    q "$db" "SELECT count(*) FROM kbench_import_liger(pg_read_file('$CSV'))" >/dev/null ||
      echo "not ok - the Liger history imports into $db"
  done
  ok "$(q old "SELECT md5(string_agg(digest, ',' ORDER BY digest)) FROM kbench_runs WHERE digest NOT IN (SELECT run_digest FROM kbench_jobs WHERE run_digest IS NOT NULL)")" \
     "$(q fresh "SELECT md5(string_agg(digest, ',' ORDER BY digest)) FROM kbench_runs")" "the imported runs are the same in the updated and the fresh database"
  dropdb --force old; dropdb --force fresh
done

# A schema _kernelindex that is not the extension's (made by a role with
# CREATE on the database, before the install or the update) is never
# adopted: CREATE SCHEMA IF NOT EXISTS in the script refuses a non-member
# (sql/prelude/00_internal_schema.sql), and the install or update fails
# whole, leaving the squatter's schema as it was and nothing of the
# extension in it.
squat() {  # database: the squatter's schema, with a function of its own
  q "$1" "DROP ROLE IF EXISTS ki_squatter; CREATE ROLE ki_squatter; GRANT CREATE ON DATABASE $1 TO ki_squatter" >/dev/null
  q "$1" "SET ROLE ki_squatter; CREATE SCHEMA _kernelindex;
          CREATE FUNCTION _kernelindex.squat() RETURNS int LANGUAGE sql AS 'SELECT 1'" >/dev/null
}
squatted() {  # database, what: the schema is still the squatter's, no member of the extension in it
  ok "$(q "$1" "SELECT pg_get_userbyid(n.nspowner) || ' ' || (SELECT count(*) FROM pg_depend d WHERE d.deptype = 'e'
                    AND (d.classid = 'pg_namespace'::regclass AND d.objid = n.oid
                         OR d.classid = 'pg_proc'::regclass AND d.objid IN (SELECT oid FROM pg_proc WHERE pronamespace = n.oid)))
                  || ' ' || (SELECT count(*) FROM pg_proc p WHERE p.pronamespace = n.oid)
                  FROM pg_namespace n WHERE n.nspname = '_kernelindex'")" "ki_squatter 0 1" "$2"
}
last=$(ki_released_versions | tail -1)
ki_cluster_restart
createdb squat
if ki_install_released "$last" && q squat "CREATE EXTENSION kernelindex VERSION '$last'" >/dev/null; then
  squat squat
  if q squat "ALTER EXTENSION kernelindex UPDATE" >/dev/null 2>&1; then
    echo "not ok - $last does not update beside a schema _kernelindex that is not the extension's"
  else
    ok "$(q squat "SELECT extversion FROM pg_extension WHERE extname = 'kernelindex'")" "$last" \
       "$last does not update beside a schema _kernelindex that is not the extension's (it stays $last)"
  fi
  squatted squat "the failed update leaves the squatter's _kernelindex as it was, nothing of the extension in it"
else
  echo "not ok - $last installs from its release commit's install script (squatter)"
fi
dropdb --force squat
createdb squat
squat squat
if q squat "CREATE EXTENSION kernelindex" >/dev/null 2>&1; then
  echo "not ok - $CUR does not install beside a schema _kernelindex that is not the extension's"
else
  ok "$(q squat "SELECT count(*) FROM pg_extension WHERE extname = 'kernelindex'")" "0" \
     "$CUR does not install beside a schema _kernelindex that is not the extension's"
fi
squatted squat "the failed install leaves the squatter's _kernelindex as it was"
dropdb --force squat
q postgres "DROP ROLE IF EXISTS ki_squatter" >/dev/null
