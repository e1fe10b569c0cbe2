#!/usr/bin/env bash
# names.sh: one name per concept (docs/ARCHITECTURE.md, "Layout and
# names").  In the extension's schema no function shares its name with a
# type, a table or a view (as a function and a view both called
# kbench_workers did, or the function kbench_run beside a composite type
# kbench_run), in a fresh install and in one updated from every released
# version; every function, table, view and type of the extension is named
# kbench_* (one underscore), or is an internal in the schema _kernelindex.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
trap 'ki_cluster_stop' EXIT
ki_cluster_start || { echo "not ok - the cluster starts"; exit 1; }
CUR=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control)
q() { psql -X -At -q -v ON_ERROR_STOP=1 -d "$1" -c "$2" 2>&1; }

# Functions whose name is also a type's in the extension's schema (a table's
# or a view's row type counts), where either is the extension's.
MEMBER="EXISTS (SELECT 1 FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
                 WHERE e.extname = 'kernelindex' AND d.deptype = 'e' AND d.classid = %s AND d.objid = %s)"
CLASHES="SELECT coalesce(string_agg(DISTINCT p.proname || ' (' || CASE t.typtype WHEN 'c' THEN
           coalesce((SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'view'
                                           WHEN 'c' THEN 'type' ELSE 'relation' END
                       FROM pg_class c WHERE c.oid = t.typrelid), 'type') ELSE 'type' END || ')', ', '), '')
   FROM pg_proc p
   JOIN pg_type t ON t.typname = p.proname AND t.typnamespace = p.pronamespace
   JOIN pg_extension x ON x.extname = 'kernelindex' AND p.pronamespace IN (x.extnamespace, to_regnamespace('_kernelindex'))
  WHERE $(printf "$MEMBER" "'pg_proc'::regclass" p.oid) OR $(printf "$MEMBER" "'pg_type'::regclass" t.oid)
     OR $(printf "$MEMBER" "'pg_class'::regclass" t.typrelid)"
# (the internals, in the schema _kernelindex, have no prefix; none is kbench__ any more)  (internals_rename: keep)
PREFIX="SELECT coalesce(string_agg(pg_describe_object(d.classid, d.objid, 0), ', '), '')
   FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'kernelindex' AND d.deptype = 'e'
  WHERE CASE d.classid WHEN 'pg_proc'::regclass THEN (SELECT proname FROM pg_proc WHERE oid = d.objid)
                       WHEN 'pg_class'::regclass THEN (SELECT relname FROM pg_class WHERE oid = d.objid)
                       WHEN 'pg_type'::regclass THEN (SELECT typname FROM pg_type WHERE oid = d.objid)
                       ELSE 'kbench_other' END !~ '^kbench_[a-z0-9]'
    AND CASE d.classid WHEN 'pg_proc'::regclass THEN (SELECT pronamespace FROM pg_proc WHERE oid = d.objid)
                       WHEN 'pg_class'::regclass THEN (SELECT relnamespace FROM pg_class WHERE oid = d.objid)
                       WHEN 'pg_type'::regclass THEN (SELECT typnamespace FROM pg_type WHERE oid = d.objid)
                       END IS DISTINCT FROM to_regnamespace('_kernelindex')"

createdb fresh
q fresh "CREATE EXTENSION kernelindex" >/dev/null || echo "not ok - CREATE EXTENSION kernelindex"
out=$(q fresh "$CLASHES")
[ -z "$out" ] && echo "ok - a fresh $CUR install: no function shares its name with a type, table or view" ||
  echo "not ok - a fresh $CUR install: functions that share their name with a type, table or view: $out"
out=$(q fresh "$PREFIX")
[ -z "$out" ] && echo "ok - every function, table, view and type of the extension is named kbench_*, or is an internal in _kernelindex" ||
  echo "not ok - objects of the extension neither named kbench_* nor in _kernelindex: $out"

# The check sees a clash: a function named as the view kbench_records, and
# one named as the table kbench_runs (rolled back).
out=$(psql -X -At -q -v ON_ERROR_STOP=1 -d fresh 2>&1 <<SQL
BEGIN;
CREATE FUNCTION kbench_records() RETURNS int LANGUAGE sql RETURN 1;
CREATE FUNCTION kbench_runs(int) RETURNS int LANGUAGE sql RETURN 1;
$CLASHES;
ROLLBACK;
SQL
)
[ "$out" = "kbench_records (view), kbench_runs (table)" ] &&
  echo "ok - the check names a function that shares its name with a view or a table" ||
  echo "not ok - the check on a function named as a view and one named as a table: '$out'"

# The names the documentation uses are there.
out=$(q fresh "SELECT to_regtype('kbench_run_row') IS NOT NULL, to_regtype('kbench_run') IS NULL,
                      to_regprocedure('kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8)') IS NOT NULL,
                      to_regclass('kbench_workers') IS NOT NULL, to_regproc('kbench_workers') IS NULL,
                      to_regclass('kbench_memory_records') IS NOT NULL, to_regprocedure('kbench_memory_records_of(text, text, text)') IS NOT NULL")
[ "$out" = "t|t|t|t|t|t|t" ] && echo "ok - kbench_run is the function, kbench_run_row the type; kbench_workers and kbench_memory_records the views" ||
  echo "not ok - the renamed objects: $out"

source test/lib/released.sh
for old in $(ki_released_versions); do
  createdb "old_$old"
  if ki_install_released "$old" && q "old_$old" "CREATE EXTENSION kernelindex VERSION '$old'" >/dev/null &&
     q "old_$old" "ALTER EXTENSION kernelindex UPDATE" >/dev/null; then
    out=$(q "old_$old" "$CLASHES")
    [ -z "$out" ] && echo "ok - $old updated to $CUR: no function shares its name with a type, table or view" ||
      echo "not ok - $old updated to $CUR: functions that share their name with a type, table or view: $out"
  else
    echo "not ok - $old installs and updates to $CUR"
  fi
done

# The C symbols the extension's library and the kernels' library export
# carry the project's prefixes (ki_ core and extension, kb_ kernels, kbench_
# SQL-callable; PostgreSQL's own Pg_magic_func, pg_finfo_*, _PG_init), so
# they cannot clash with another library loaded into the same server.
LIB="$(pg_config --pkglibdir)/kernelindex.so"
out=$( { nm -D --defined-only "$LIB"; nm -g --defined-only kernels/libkbench.a 2>/dev/null; } |
       awk 'NF >= 3 && $2 ~ /^[TDBR]$/ {print $3}' | sort -u |
       grep -v -E '^(ki_|kb_|kbench_|pg_finfo_|Pg_magic_func$|_PG_init$|_init$|_fini$|_edata$|_end$|__bss_start$)' | tr '\n' ' ')
[ -z "$out" ] && echo "ok - every C symbol kernelindex.so and libkbench.a export is prefixed (ki_, kb_, kbench_)" ||
  echo "not ok - C symbols exported without the project's prefix: $out"
