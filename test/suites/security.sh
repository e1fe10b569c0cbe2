#!/usr/bin/env bash
# security.sh: the runner attacked, on a server with kernelindex preloaded,
# by roles of different rights (issue 10: items 1, 2 and 7).
#   - name resolution: no SQL in the C code calls a bare function name; every
#     SECURITY DEFINER and trigger function has a pinned search_path; shadow
#     functions and operators in a role's own schema and in public (that
#     record whether they ran, and try ALTER ROLE ... SUPERUSER) never run as
#     the owner or the worker; nothing is queued or run while another role
#     may create objects in the extension's schema;
#   - rights: PUBLIC reads only; _kernelindex.* that write are not executable by
#     PUBLIC; the internals are in _kernelindex only, where no role creates
#     or reads, and the API that calls them works for each role; cross-role wait, cancel, NOTIFY, kbench_workers, import paths;
#   - reproductions (issue 24): linked by the system only, verified on the
#     same device class only, others' job ids hidden;
#   - limits: timeouts, sample counts, intervals with months, per-role queue;
#     a job whose worker is gone for good (its device removed) can be
#     cancelled, and is ended when a worker starts;
#   - bad input to every SQL entry point of the runner.
# Counts through test/lib/attacks.sh; prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/attacks.sh
trap 'ki_cluster_stop' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" || { echo "not ok - the cluster starts"; exit 1; }
export PGDATABASE=kbench
# the superuser's own statements see neither public nor a role's schema
q() { PGOPTIONS="-c search_path=kernelindex" psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
# as a role, with that role's own settings (its search_path)
as() { local r=$1; shift; psql -X -At -q -U "$r" -v ON_ERROR_STOP=1 -c "$@"; }
# a script on stdin, as a role
as_script() { psql -X -At -q -U "$1" -v ON_ERROR_STOP=1; }
# a crash: the server stops at once, the worker with it, and starts again
restart_hard() {
  ki_as_owner "$PGBIN/pg_ctl" -D "$KI_CLUSTER_DIR/data" -m immediate -w stop >/dev/null
  ki_as_owner "$PGBIN/pg_ctl" -D "$KI_CLUSTER_DIR/data" -l "$KI_CLUSTER_DIR/server.log" -w start >/dev/null
}
source test/lib/tap.sh
# wait_for as tap.sh has it, but through q (the extension's schema on the search_path)
wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ "$(q "$1" 2>/dev/null)" = "t" ] && return 0
    sleep 0.1
  done
  return 1
}
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
LONG='{"warmup_ms": 0, "rep_ms": 20000, "flush_bytes": 0, "max_samples": 100000000}'
BIG='{"rows": 2048, "hidden": 2048, "dtype": "fp32"}'
SMALL='{"rows": 8, "hidden": 8}'

createdb kbench
psql -X -q -v ON_ERROR_STOP=1 <<'SQL' || { echo "not ok - setup"; exit 1; }
CREATE SCHEMA kernelindex;
CREATE EXTENSION kernelindex SCHEMA kernelindex;
GRANT USAGE ON SCHEMA kernelindex TO PUBLIC;
-- what 0.1.0's documentation had one grant (sql/code/90_privileges.sql grants it already)
GRANT EXECUTE ON FUNCTION kernelindex.kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8) TO kbench_user;
CREATE ROLE alice LOGIN IN ROLE kbench_user;
CREATE ROLE bob LOGIN IN ROLE kbench_user;
CREATE ROLE mallory LOGIN IN ROLE kbench_user;
CREATE ROLE watcher LOGIN IN ROLE kbench_user, pg_read_all_data;
CREATE ROLE boss LOGIN IN ROLE kbench_admin;
-- eve: a kbench_admin who is neither a superuser nor the extension's owner,
-- with shadows of her own first on her search_path (as mallory's)
CREATE ROLE eve LOGIN IN ROLE kbench_admin;
CREATE SCHEMA eve AUTHORIZATION eve;
ALTER ROLE eve SET search_path = eve, pg_catalog, kernelindex, public;
CREATE ROLE reader LOGIN;
ALTER ROLE alice SET search_path = kernelindex, public;
ALTER ROLE bob SET search_path = kernelindex, public;
ALTER ROLE watcher SET search_path = kernelindex, public;
ALTER ROLE boss SET search_path = kernelindex, public;
ALTER ROLE reader SET search_path = kernelindex, public;
-- mallory's own schema comes before pg_catalog, and she may create in public
CREATE SCHEMA mallory AUTHORIZATION mallory;
ALTER ROLE mallory SET search_path = mallory, pg_catalog, kernelindex, public;
GRANT CREATE ON SCHEMA public TO mallory;
-- what the shadow functions record: which ran, as whom
CREATE TABLE public.shadow_ran (fn text, who name);
GRANT INSERT ON public.shadow_ran TO PUBLIC;
SQL

# Shadows of what the runner's SQL calls, in mallory's schema and in public.
# Each records that it ran and as whom, tries to make mallory a superuser,
# and then does what the real one does.
shadow() {  # schema name args rettype body-returning-the-real-value
  cat <<SQL
CREATE FUNCTION $1.$2($3) RETURNS $4 LANGUAGE plpgsql AS \$f\$
BEGIN
  INSERT INTO public.shadow_ran VALUES ('$1.$2', current_user);
  BEGIN EXECUTE 'ALTER ROLE mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
  $([ "$4" = void ] && echo "PERFORM $5; RETURN;" || echo "RETURN $5;")
END \$f\$;
SQL
}
shadow_set() {  # schema: the shadows of what the runner's and the catalog writers' SQL calls
  local s=$1
  shadow $s clock_timestamp "" timestamptz "pg_catalog.clock_timestamp()"
  shadow $s now "" timestamptz "pg_catalog.now()"
  shadow $s make_interval "secs integer" interval "pg_catalog.make_interval(secs => secs)"
  shadow $s json_build_object "a text, b bigint, c text, d text, e text, f text" json "pg_catalog.json_build_object(a, b, c, d, e, f)"
  shadow $s pg_notify "a text, b text" void "pg_catalog.pg_notify(a, b)"
  shadow $s format "a text, b interval, c text, d integer" text "pg_catalog.format(a, b, c, d)"
  shadow $s format "a text, b text, c integer" text "pg_catalog.format(a, b, c)"
  shadow $s format "a text, b text, c integer, d text" text "pg_catalog.format(a, b, c, d)"
  shadow $s current_setting "a text, b boolean" text "pg_catalog.current_setting(a, b)"
  shadow $s shadow_int8eq "a bigint, b bigint" boolean "a OPERATOR(pg_catalog.=) b"
  shadow $s shadow_texteq "a text, b text" boolean "a OPERATOR(pg_catalog.=) b"
  shadow $s shadow_tstzlt "a timestamptz, b timestamptz" boolean "a OPERATOR(pg_catalog.<) b"
  echo "CREATE OPERATOR $s.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = $s.shadow_int8eq);
CREATE OPERATOR $s.= (LEFTARG = text, RIGHTARG = text, FUNCTION = $s.shadow_texteq);
CREATE OPERATOR $s.< (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = $s.shadow_tstzlt);
"
  # what the store, the imports' bookkeeping, kbench_retract and kbench_supersede call
  shadow $s jsonb_typeof "a jsonb" text "pg_catalog.jsonb_typeof(a)"
  shadow $s array_remove "a text[], b text" "text[]" "pg_catalog.array_remove(a, b)"
  shadow $s btrim "a text" text "pg_catalog.btrim(a)"
  shadow $s set_config "a text, b text, c boolean" text "pg_catalog.set_config(a, b, c)"
  shadow $s to_regclass "a text" regclass "pg_catalog.to_regclass(a)"
  shadow $s to_regprocedure "a text" regprocedure "pg_catalog.to_regprocedure(a)"
  shadow $s shadow_jsonbarrow "a jsonb, b text" jsonb "a OPERATOR(pg_catalog.->) b"
  echo "CREATE OPERATOR $s.-> (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = $s.shadow_jsonbarrow);"
}
shadows="$(shadow_set mallory)
$(shadow_set public)"
printf '%s\n' "$shadows" | psql -X -q -U mallory -v ON_ERROR_STOP=1 >/dev/null ||
  echo "not ok - mallory creates her shadow functions"
shadow_set eve | psql -X -q -U eve -v ON_ERROR_STOP=1 >/dev/null || echo "not ok - eve creates her shadow functions"
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"

echo "# 1. name resolution"
# the SQL in the C code names pg_catalog's functions in full
lint=$(perl test/lib/sql_names.pl src/*.c)
attack "SQL built in C calls no function by a bare name (test/lib/sql_names.pl src/*.c)" "$lint" ""
# every SECURITY DEFINER and every trigger function pins its search_path
# (pg_catalog first if named, pg_temp last, nothing but the extension's schema between)
attack "every SECURITY DEFINER or trigger function of the extension has a pinned search_path" "$(q "
  SELECT coalesce(string_agg(p.oid::regprocedure::text, ', '), '')
    FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'kernelindex'
   WHERE (p.prosecdef OR p.prorettype = 'trigger'::regtype)
     AND coalesce((SELECT c FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%'), '') NOT IN
         ('search_path=pg_catalog, kernelindex, pg_temp', 'search_path=kernelindex, pg_temp')")" ""
attack "no _kernelindex.* function that writes (VOLATILE) or is a trigger is executable by PUBLIC" "$(q "
  SELECT coalesce(string_agg(p.oid::regprocedure::text, ', '), '')
    FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'kernelindex'
   WHERE p.pronamespace = '_kernelindex'::regnamespace AND (p.provolatile = 'v' OR p.prorettype = 'trigger'::regtype)
     AND has_function_privilege('reader', p.oid, 'EXECUTE')")" ""

# The internals (issue 25): in _kernelindex, none in the extension's schema;
# a role without rights calls none that writes, reads nothing there, creates
# nothing there; the API that calls them works for each role.
attack "the extension's schema and every other but _kernelindex hold no kbench__ object" "$(q "  -- internals_rename: keep
  SELECT (SELECT count(*) FROM pg_proc WHERE proname LIKE 'kbench\_\_%')  -- internals_rename: keep
       + (SELECT count(*) FROM pg_type WHERE typname LIKE 'kbench\_\_%' OR typname LIKE '\_kbench\_\_%')  -- internals_rename: keep
       + (SELECT count(*) FROM pg_class WHERE relname LIKE 'kbench\_\_%')")" 0  # internals_rename: keep
attack "\\df kbench__* and \\dT kbench__* list nothing" "$(as reader '\df kbench__*' 2>&1)$(as reader '\dT kbench__*' 2>&1)" ""  # internals_rename: keep
attack "every member of the extension outside _kernelindex is the API (named kbench_)" "$(q "
  SELECT coalesce(string_agg(pg_describe_object(d.classid, d.objid, 0), ', '), '')
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'kernelindex'
   WHERE d.deptype = 'e' AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass, 'pg_type'::regclass)
     AND coalesce((SELECT pronamespace FROM pg_proc WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid),
                  (SELECT relnamespace FROM pg_class WHERE d.classid = 'pg_class'::regclass AND oid = d.objid),
                  (SELECT typnamespace FROM pg_type WHERE d.classid = 'pg_type'::regclass AND oid = d.objid))
         <> '_kernelindex'::regnamespace
     AND coalesce((SELECT proname FROM pg_proc WHERE d.classid = 'pg_proc'::regclass AND oid = d.objid),
                  (SELECT relname FROM pg_class WHERE d.classid = 'pg_class'::regclass AND oid = d.objid),
                  (SELECT typname FROM pg_type WHERE d.classid = 'pg_type'::regclass AND oid = d.objid))
         !~ '^_?kbench_[a-z0-9]'")" ""
attack "the internal schema is a member of the extension, and no role but the owner may create in it" "$(q "
  SELECT (SELECT count(*) FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'kernelindex'
           WHERE d.classid = 'pg_namespace'::regclass AND d.objid = '_kernelindex'::regnamespace AND d.deptype = 'e')
         || ' ' || count(*) FILTER (WHERE has_schema_privilege(r.oid, '_kernelindex', 'CREATE'))
    FROM pg_roles r WHERE NOT r.rolsuper AND r.rolname NOT LIKE 'pg\_%'")" "1 0"
attack "no role but the owner reads a table, view or sequence of _kernelindex" "$(q "
  SELECT count(*) FROM pg_class c CROSS JOIN pg_roles r
   WHERE c.relnamespace = '_kernelindex'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
     AND NOT r.rolsuper AND has_table_privilege(r.oid, c.oid, 'SELECT')")" 0
attack_refused reader 42501 "CREATE FUNCTION _kernelindex.slug(t text) RETURNS text LANGUAGE sql AS 'SELECT t'" "PUBLIC creates a function in _kernelindex"
attack_refused mallory 42501 "CREATE FUNCTION _kernelindex.series_filter() RETURNS text LANGUAGE sql AS 'SELECT 1::text'" "a kbench_user creates a function in _kernelindex"
attack_refused reader 42501 "SELECT * FROM _kernelindex.claim('cpu', 1)" "PUBLIC claims a job through the internal claim"
attack_refused mallory 42501 "SELECT _kernelindex.set_storing_job(1)" "a kbench_user calls an internal function that writes"
attack_refused boss 42501 "SELECT _kernelindex.store_runs(ARRAY['sha256:00'], ARRAY['{}'::jsonb], ARRAY[NULL::text], ARRAY[NULL::text])" "a kbench_admin calls the internal store directly"
# (the catalog is empty here: kbench_speedup's own answer once its internal
# resolvers ran as the caller, not a permission error on _kernelindex)
ok "$(as reader "SELECT count(*) FROM kbench_speedup(NULL, 'no_such_baseline', 'no_such_candidate')" 2>&1 | grep -c 'no operation has both')" 1 \
  "PUBLIC runs an analytics function that calls the internals under its own rights (kbench_speedup -> _kernelindex.resolve_protocols)"

# mallory queues, waits, cancels and benchmarks with her shadows in place;
# the worker runs and finishes her jobs (NOTIFY) and recovers, the owner counts
# the queue and writes the rows
mj=$(as mallory "SELECT kbench_run('layer_norm', 'forward', '$SMALL', protocol => '$TINY')")
as mallory "SELECT status FROM kbench_wait($mj, '60 s')" >/dev/null
as_script mallory >/dev/null <<SQL
BEGIN;
SELECT kbench_run('layer_norm', 'forward', '$SMALL') AS j \gset
SELECT kbench_cancel(:j);
COMMIT;
SQL
as mallory "CALL kbench_bench('layer_norm', 'forward', '$SMALL', protocol => '$TINY')" >/dev/null
as mallory "SELECT count(*) FROM kbench_workers" >/dev/null
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $mj")" passed "mallory's job ran with her shadows in place"

# eve, a kbench_admin who is neither a superuser nor the owner, writes the
# catalog with her shadows in place: the Liger CSV as client text, a run
# document, a retraction, a supersession, export lines she \copy's
CSV="$ROOT/data/liger/all_benchmark_data.csv"
SEED="$ROOT/test/data/seeds/000_04bb0f8f111ec531.json"
EXPORT="$ROOT/data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst"
ok "$(as_script eve 2>&1 <<SQL
\\set seed \`cat $SEED\`
SELECT string_agg(kind || ':' || inserted, ',' ORDER BY kind) FROM kbench_ingest(:'seed'::json);
SQL
)" "BenchmarkProtocol:true,BenchmarkRun:true,ExecutionEnvironment:true" "a kbench_admin who is not the owner ingests a run document"
ok "$(as_script eve 2>&1 <<SQL
\\set csv \`cat $CSV\`
SELECT lines, inserted > 0 FROM kbench_import_liger(:'csv');
SELECT memory_inserted > 0 FROM kbench_imports ORDER BY id DESC LIMIT 1;
SQL
)" "2448|t
t" "... imports the Liger CSV given as text, its memory observations with it"
seed_run=$(q "SELECT digest FROM kbench_ingest(pg_read_file('$SEED')::json) WHERE kind = 'BenchmarkRun'")
liger_run=$(q "SELECT min(digest) FROM kbench_runs WHERE source = 'liger-kernel-bench' AND digest <> '$seed_run'")
# (kbench_retract and kbench_supersede return the digest of the run withdrawn)
ok "$(as eve "SELECT kbench_retract('$liger_run', 'eve measured it wrong')")|$(q "SELECT retraction_reason FROM kbench_runs WHERE digest = '$liger_run'")" \
   "$liger_run|eve measured it wrong" "... retracts a run"
old_run=$(as eve "SELECT kbench_supersede((SELECT max(digest) FROM kbench_runs WHERE source = 'liger-kernel-bench' AND digest <> '$seed_run'), '$seed_run', 'remeasured')")
ok "$(q "SELECT superseded_by = '$seed_run' FROM kbench_runs WHERE digest = '$old_run'")" t "... supersedes a run"
zstd -dc "$EXPORT" | head -300 | as eve "\\copy kbench_import_staging (line) FROM STDIN WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')" >/dev/null
ok "$(as eve "SELECT lines || ' ' || (rejected = 0) FROM kbench_import_catalog_staged('eve')")" "300 true" "... imports export lines she \\copy'd from the client"
# two admins staging at once: each imports only the lines she staged
zstd -dc "$EXPORT" | sed -n '401,405p' | as boss "\\copy kbench_import_staging (line) FROM STDIN WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')" >/dev/null
attack "a kbench_admin imports the lines another admin staged" \
  "$(as eve "SELECT lines FROM kbench_import_catalog_staged('eve again')") $(q "SELECT string_agg(staged_by || ':' || n, ',') FROM (SELECT staged_by, count(*) n FROM kbench_import_staging GROUP BY 1) s")" \
  "0 boss:5"
attack_refused eve 42501 "SELECT line FROM kbench_import_staging" "a kbench_admin reads the lines another admin staged"
attack_refused eve 42501 "INSERT INTO kbench_import_staging (line, staged_by) VALUES ('{}', 'boss')" "a kbench_admin stages a line in another admin's name"
ok "$(as boss "SELECT lines || ' ' || (rejected = 0) FROM kbench_import_catalog_staged('boss')") $(q "SELECT count(*) FROM kbench_import_staging")" \
   "5 true 0" "the other admin imports her own staged lines, and they are deleted"
attack_refused eve 42501 "SELECT kbench_import_catalog('$EXPORT')" "a kbench_admin without pg_read_server_files reads a server file through kbench_import_catalog"
attack_refused eve 42501 "SELECT kbench_import_liger_file('$CSV')" "... through kbench_import_liger_file"
q "GRANT pg_read_server_files TO eve"
zstd -dc "$EXPORT" | sed -n '301,400p' > "$KI_CLUSTER_DIR/slice.jsonl"; chmod a+r "$KI_CLUSTER_DIR/slice.jsonl"
ok "$(as eve "SELECT lines || ' ' || (rejected = 0) FROM kbench_import_catalog('$KI_CLUSTER_DIR/slice.jsonl')")" "100 true" "with pg_read_server_files, she imports a server file"
q "REVOKE pg_read_server_files FROM eve"
# an error after the switch to the owner (U+0000 is refused when the manifest is staged),
# caught in a subtransaction: eve is eve again, with her own search_path
nul_doc=$(python3 -c "import json; d=json.load(open('$SEED')); p=d['protocol']; p['spec']['comparability']['notes']='NUL \u0000'; print(json.dumps(p).replace(\"'\", \"''\"))")
ok "$(as_script eve 2>&1 <<SQL
DO \$\$ BEGIN PERFORM kbench_ingest('$nul_doc'::json); EXCEPTION WHEN untranslatable_character THEN NULL; END \$\$;
SELECT current_user || ' ' || current_setting('search_path');
SQL
)" "eve eve, pg_catalog, kernelindex, public" "after an ingest fails as the owner, the caller is herself again, with her search_path"
attack_refused eve 42501 "SELECT _kernelindex.store_operations(ARRAY['sha256:00'], ARRAY['{}'::jsonb], ARRAY[NULL::text])" "a kbench_admin stores an unvalidated manifest through the store's function"
attack_refused eve 42501 "INSERT INTO kbench_runs (digest) VALUES ('x')" "a kbench_admin writes a catalog table directly"
attack_refused eve 42501 "SELECT _kernelindex.withdraw('$seed_run', now(), 'x', NULL, NULL)" "a kbench_admin withdraws a run without kbench_retract's checks"
SEED_SQL=$(sed "s/'/''/g" "$SEED" | tr '\n' ' ')
attack_refused alice 42501 "SELECT kbench_ingest('$SEED_SQL'::json)" "kbench_user: kbench_ingest of a run document"
for f in "kbench_ingest('{}'::jsonb)" "kbench_import_liger('x')" \
         "kbench_import_catalog_staged()" "kbench_retract('$seed_run', 'x')" "kbench_supersede('$seed_run', '$liger_run', 'x')"; do
  attack_refused alice 42501 "SELECT $f" "kbench_user: $f"
done
attack_refused alice 42501 "INSERT INTO kbench_import_staging (line) VALUES ('{}')" "kbench_user stages export lines"
attack_refused reader 42501 "INSERT INTO kbench_import_staging (line) VALUES ('{}')" "PUBLIC stages export lines"
ok "$(q "SELECT retraction_reason IS NULL FROM kbench_runs WHERE digest = '$seed_run'")" t "... and the run is not retracted"
q "GRANT CREATE ON SCHEMA kernelindex TO mallory"
attack_refused eve 42501 "SELECT kbench_ingest('$SEED_SQL'::json)" "a kbench_admin's ingest while mallory may create objects in the extension's schema"
attack_refused eve 42501 "SELECT kbench_import_catalog_staged()" "... her import"
ok "$(q "SELECT count(*) > 0 FROM kbench_ingest(pg_read_file('$SEED')::json)")" t "the owner still ingests then"
q "REVOKE CREATE ON SCHEMA kernelindex FROM mallory"
attack "shadow functions and operators (mallory's and eve's schemas first on their search_paths, and public) never run as another role" \
  "$(q "SELECT coalesce(string_agg(DISTINCT fn || ' as ' || who, ', '), '') FROM public.shadow_ran WHERE who NOT IN ('mallory', 'eve')")" ""
attack "eve's shadows ran as nobody but eve" "$(q "SELECT count(*) FROM public.shadow_ran WHERE fn LIKE 'eve.%' AND who <> 'eve'")" 0
attack "mallory did not make herself a superuser" "$(q "SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'")" f

# a schema another role may create objects in: nothing is queued, nothing runs
long=$(as alice "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $long" 30
queued=$(as alice "SELECT kbench_run('layer_norm', 'forward', '$SMALL', protocol => '$TINY')")
q "GRANT CREATE ON SCHEMA kernelindex TO mallory"
attack_refused alice 42501 "SELECT kbench_run('layer_norm', 'forward', '$SMALL')" "kbench_run while mallory may create objects in the extension's schema"
as boss "SELECT kbench_cancel($long)" >/dev/null
wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $long" 30
sleep 1
attack "the worker claims no job while mallory may create objects in the extension's schema" \
  "$(q "SELECT status FROM kbench_jobs WHERE id = $queued")" queued
q "REVOKE CREATE ON SCHEMA kernelindex FROM mallory"
q "ALTER SCHEMA kernelindex OWNER TO mallory"
attack_refused alice 42501 "SELECT kbench_run('layer_norm', 'forward', '$SMALL')" "kbench_run while the extension's schema belongs to mallory"
# PostgreSQL 15's public is owned by pg_database_owner: safe only while the database's owner is a superuser
q "ALTER SCHEMA kernelindex OWNER TO pg_database_owner"
q "ALTER DATABASE kbench OWNER TO mallory"
attack_refused alice 42501 "SELECT kbench_run('layer_norm', 'forward', '$SMALL')" "kbench_run while the schema belongs to pg_database_owner and the database to mallory"
q "ALTER DATABASE kbench OWNER TO postgres"
ok "$(as alice "BEGIN; SELECT kbench_run('layer_norm', 'forward', '$SMALL') > 0; ROLLBACK;")" t "a schema of pg_database_owner in a database a superuser owns is safe"
q "ALTER SCHEMA kernelindex OWNER TO postgres"
as alice "SELECT kbench_run('layer_norm', 'forward', '$SMALL', protocol => '$TINY')" >/dev/null
wait_for "SELECT status = 'passed' FROM kbench_jobs WHERE id = $queued" 60
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $queued")" passed "the held job runs once the schema is safe again"

echo "# 2. rights"
for f in "kbench_run('layer_norm', 'forward', '$SMALL')" "kbench_wait(1)" "kbench_cancel(1)" \
         "kbench_prune_jobs()" "_kernelindex.claim('cpu', 1)" \
         "_kernelindex.store_operations(ARRAY['sha256:00'], ARRAY['{}'::jsonb], ARRAY[NULL::text])" \
         "kbench_ingest('{}'::jsonb)" "kbench_import_liger('x')" "kbench_import_catalog_staged()" \
         "kbench_import_catalog('/etc/passwd')" "kbench_import_liger_file('/etc/passwd')" \
         "kbench_retract('sha256:00', 'x')" "kbench_supersede('sha256:00', 'sha256:01', 'x')" \
         "kbench_rebuild_records()"; do
  attack_refused reader 42501 "SELECT $f" "a role without kbench_user or kbench_admin: $f"
done
attack_refused reader 42501 "CALL kbench_bench('layer_norm', 'forward', '$SMALL')" "a role without kbench_user: kbench_bench"
attack_refused alice 42501 "SELECT kbench_prune_jobs('0 s')" "kbench_user prunes the job list"
attack_refused alice 42501 "SELECT kbench_import_catalog('/etc/passwd')" "kbench_user imports a server file"
attack_refused boss 42501 "SELECT kbench_import_liger_file('/etc/passwd')" "kbench_admin without file rights reads a server file"
attack_refused alice 42501 "INSERT INTO kbench_jobs (operation, mode, workload, device, timeout, owner) VALUES ('x', 'y', '{}', 'cpu', '1 s', 'bob')" "kbench_user writes kbench_jobs directly"
attack_refused alice 42501 "UPDATE kbench_jobs SET owner = 'alice'" "kbench_user updates kbench_jobs"
attack_refused alice 42501 "DELETE FROM kbench_jobs" "kbench_user deletes from kbench_jobs"
ok "$(as boss "SELECT kbench_prune_jobs('1 day') >= 0")" t "kbench_admin prunes the job list"
ok "$(as reader "SELECT count(*) > 0 FROM kbench_device_operations")" t "PUBLIC reads the runner's views"
ok "$(as reader "SELECT count(*) >= 0 FROM kbench_export_catalog()")" t "PUBLIC exports the catalog"

# cross-role: bob and watcher wait for alice's running job and give up
job=$(as alice "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
as bob "SET statement_timeout = '300ms'; SELECT kbench_wait($job, '10 s')" >/dev/null 2>&1
as watcher "SET statement_timeout = '300ms'; SELECT kbench_wait($job, '10 s')" >/dev/null 2>&1
attack_refused bob P0002 "SELECT kbench_cancel($job)" "bob cancels alice's job (he cannot even see it)"
attack_refused watcher 42501 "SELECT kbench_cancel($job)" "a pg_read_all_data member, who sees alice's job, cancels it"
sleep 0.5
attack "bob's and watcher's cancelled waits and cancels leave alice's job running" "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" running
attack "bob cannot see alice's job" "$(as bob "SELECT count(*) FROM kbench_jobs WHERE id = $job")" 0
attack "kbench_workers shows bob no job id of alice's" "$(as bob "SELECT count(*) FROM kbench_workers WHERE job_id IS NOT NULL OR progress IS NOT NULL OR started_at IS NOT NULL")" 0
ok "$(as alice "SELECT count(*) FROM kbench_workers WHERE job_id = $job")" 1 "kbench_workers shows alice her own job"
ok "$(as watcher "SELECT count(*) FROM kbench_workers WHERE job_id = $job")" 1 "kbench_workers shows a pg_read_all_data member the job"
# bob listens while an admin cancels alice's job
# (by events, not sleeps: bob is listening once his session sleeps; his sleep is cut short once the
# job is canceled, and the notification is printed after his next statement)
out_file=$(mktemp)
psql -X -q -U bob -c "LISTEN kbench_jobs" -c "SELECT pg_sleep(120)" -c "SELECT 1" >"$out_file" 2>&1 &
listener=$!
wait_for "SELECT count(*) = 1 FROM pg_stat_activity WHERE usename = 'bob' AND query = 'SELECT pg_sleep(120)'" 30 ||
  echo "# bob's listener did not start"
ok "$(as boss "SELECT kbench_cancel($job)")" t "kbench_admin cancels anyone's job"
wait_for "SELECT status = 'canceled' FROM kbench_jobs WHERE id = $job" 30
q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'bob' AND query = 'SELECT pg_sleep(120)'" >/dev/null
wait "$listener"
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" canceled "... and it is canceled"
ok "$(grep -c 'Asynchronous notification "kbench_jobs"' "$out_file")" 1 "a listener hears that a job finished"
attack "the NOTIFY payload names no job" "$(grep -c 'with payload' "$out_file")" 0
rm -f "$out_file"
# alice's own cancelled wait still cancels her job
job=$(as alice "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
as alice "SET statement_timeout = '300ms'; SELECT kbench_wait($job, '10 s')" >/dev/null 2>&1
wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 30
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" canceled "a cancelled wait by the job's owner cancels the job"
# server paths of imports
printf '' > "$KI_CLUSTER_DIR/empty.jsonl"; chmod a+r "$KI_CLUSTER_DIR/empty.jsonl"
q "SELECT import_id FROM kbench_import_catalog('$KI_CLUSTER_DIR/empty.jsonl')" >/dev/null
attack_refused reader 42501 "SELECT source FROM kbench_imports" "PUBLIC reads the server path of an import"
attack_refused bob 42501 "SELECT * FROM kbench_imports" "kbench_user reads the server path of an import"
ok "$(as reader "SELECT count(*) FROM (SELECT id, kind, lines FROM kbench_imports) i")" "$(q "SELECT count(*) FROM kbench_imports")" "PUBLIC reads what each import did"
ok "$(as boss "SELECT count(*) FROM kbench_imports WHERE source LIKE '%empty.jsonl'")" 1 "kbench_admin reads the import's source"

echo "# reproductions (issue 24, items 3 and 17)"
# a reproduction is another run, by another job, of the same workload, linked by the system only:
# mallory links her own run to the job that measured it (ratio 1), and alice's run to alice's job
R16='{"rows": 16, "hidden": 16, "dtype": "fp32"}'   # as _kernelindex.reproduction_request names it (the old link compared it)
aj=$(as alice "SELECT kbench_run('layer_norm', 'forward', '$R16', implementation => 'cpu', protocol => '$TINY')")
as alice "SELECT status FROM kbench_wait($aj, '60 s')" >/dev/null
arun=$(q "SELECT run_digest FROM kbench_jobs WHERE id = $aj")
mj=$(as mallory "SELECT kbench_run('layer_norm', 'forward', '$R16', implementation => 'cpu', protocol => '$TINY')")
as mallory "SELECT status FROM kbench_wait($mj, '60 s')" >/dev/null
mrun=$(q "SELECT run_digest FROM kbench_jobs WHERE id = $mj")
as mallory "SELECT _kernelindex.link_reproduction('$mrun', $mj)" >/dev/null 2>&1
as mallory "SELECT _kernelindex.link_reproduction('$arun', $aj)" >/dev/null 2>&1
attack "a kbench_user links the job that measured a run (hers, or another role's) as its reproduction" \
  "$(q "SELECT count(*) FROM kbench_reproductions WHERE reported_run IN ('$arun', '$mrun')")" 0
marked() { q "SELECT count(*) FROM kbench_export_catalog() r(row) WHERE r.row::jsonb->'row'->>'runDigest' = '$1' AND r.row::jsonb->'row' ? 'reproducedByKernelindex'"; }
attack "... and the export marks neither run as reproduced" "$(marked "$arun") $(marked "$mrun")" "0 0"
# the real thing: mallory reproduces alice's run on the same device class, by a job of her own
rj=$(as mallory "SELECT kbench_reproduce('$arun', 'cpu')")
as mallory "SELECT status FROM kbench_wait($rj, '60 s')" >/dev/null
ok "$(as mallory "SELECT job_id = $rj AND job_status = 'passed' AND reproduced_run <> reported_run AND tier = 'verified' AND verified FROM kbench_reproductions WHERE reported_run = '$arun'")" t \
   "kbench_reproduce: another job's run of the same workload on the same device class verifies the run (mallory sees her job)"
ok "$(marked "$arun")" 1 "... and the export marks it"
attack "kbench_reproductions shows alice neither the id nor the status of mallory's job" \
  "$(as alice "SELECT count(*) || ' ' || count(job_id) || ' ' || count(job_status) || ' ' || bool_and(verified) FROM kbench_reproductions WHERE reported_run = '$arun'")" "1 0 0 true"
attack_refused reader 42501 "SELECT job_id FROM kbench_reproduction_jobs" "PUBLIC reads the job ids of reproductions"
attack_refused reader 42501 "SELECT owner FROM kbench_reproduction_jobs" "PUBLIC reads whose reproductions they are"
ok "$(as boss "SELECT count(job_id) FROM kbench_reproductions WHERE reported_run = '$arun'") $(as reader "SELECT count(*) FROM (SELECT reported_run, reproduced_run FROM kbench_reproduction_jobs) l")" "1 1" \
   "kbench_admin sees the job; PUBLIC reads which run reproduced which"
# an H100 run of the same workload reproduced on the CPU: re-run elsewhere, with its ratio, not verified, not marked
read -r aimpl awl aproto ans <<<"$(q "SELECT implementation_digest || ' ' || workload_digest || ' ' || protocol_digest || ' ' || primary_ns FROM kbench_runs WHERE digest = '$arun'")"
h100=$(q "SELECT min(digest) FROM kbench_environments WHERE product ILIKE '%H100%'")
hrun=$(q "SELECT digest FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
       'metadata', jsonb_build_object('name', 'layer-norm-16-on-h100'),
       'spec', jsonb_build_object('implementationDigest', '$aimpl', 'workloadDigest', '$awl', 'protocolDigest', '$aproto',
         'environmentDigest', '$h100', 'status', 'passed', 'observedAt', '2026-01-01T00:00:00Z',
         'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', $ans))))) WHERE kind = 'BenchmarkRun'")
hj=$(as alice "SELECT kbench_reproduce('$hrun', 'cpu')")
as alice "SELECT status FROM kbench_wait($hj, '60 s')" >/dev/null
attack "an H100 run re-run on the CPU is re-run elsewhere, with its ratio, and not verified" \
  "$(as alice "SELECT tier || ' ' || verified || ' ' || (ratio > 0) || ' ' || reported_device_key || ' ' || reproduced_device_key FROM kbench_reproductions WHERE job_id = $hj")" \
  "re-run elsewhere false true $(q "SELECT _kernelindex.device_key(e) FROM kbench_environments e WHERE digest = '$h100'") cpu"
attack "... and the export does not mark the H100 run" "$(marked "$hrun")" 0

echo "# 7. limits"
for set in "queue_limit_per_role = 2" "max_job_timeout = '1h'" "job_timeout = '2h'"; do
  q "ALTER SYSTEM SET kernelindex.$set" >/dev/null
done
q "SELECT pg_reload_conf()" >/dev/null
wait_for "SELECT current_setting('kernelindex.job_timeout') = '2h'" 30 || echo "# the settings were not reloaded"
out=$(psql -X -q -At -U mallory -v VERBOSITY=verbose -c "BEGIN" \
  -c "SELECT kbench_run('layer_norm', 'forward', '$SMALL') FROM generate_series(1, 3)" -c "ROLLBACK" 2>&1)
case "$out" in *"ERROR:  53400: role mallory has 2 jobs waiting"*) attack "a role queues more than kernelindex.queue_limit_per_role jobs" refused refused;;
  *) attack "a role queues more than kernelindex.queue_limit_per_role jobs" "$out" refused;; esac
timeout_of() {  # the timeout a job queued with these kbench_run arguments gets
  as_script alice <<SQL
BEGIN;
SELECT kbench_run('layer_norm', 'forward', '$SMALL'$1) AS j \gset
SELECT timeout FROM kbench_jobs WHERE id = :j;
ROLLBACK;
SQL
}
t=$(timeout_of "")
ok "$t" "01:00:00" "kernelindex.job_timeout above kernelindex.max_job_timeout is cut to it"
t=$(timeout_of ", timeout => '1 day -23 hours -30 minutes'")
ok "$t" "00:30:00" "a timeout given with days is taken as hours"
bad_input alice 22023 "SELECT kbench_run('layer_norm', 'forward', '$SMALL', timeout => '2 hours')" "a timeout above kernelindex.max_job_timeout"
for set in queue_limit_per_role max_job_timeout job_timeout; do q "ALTER SYSTEM RESET kernelindex.$set" >/dev/null; done
q "SELECT pg_reload_conf()" >/dev/null
wait_for "SELECT current_setting('kernelindex.job_timeout') <> '2h'" 30 || echo "# the settings were not reloaded"

echo "# bad input to every SQL entry point of the runner"
run() { bad_input alice "$1" "SELECT kbench_run($2)" "kbench_run($2)"; }
run 22004 "NULL, 'forward', '$SMALL'"
run 22004 "'layer_norm', NULL, '$SMALL'"
run 22004 "'layer_norm', 'forward', NULL"
run 22023 "'', 'forward', '$SMALL'"
run 22023 "repeat('x', 100000), 'forward', '$SMALL'"
run 22023 "'layer_norm''; DROP TABLE kbench_jobs; --', 'forward', '$SMALL'"
run 22023 "'../../etc/passwd', 'forward', '$SMALL'"
run 22023 "'layer_norm', '', '$SMALL'"
run 22023 "'layer_norm', 'sideways', '$SMALL'"
for w in '[]' '1' '"x"' 'null' 'true' '{}' '{"rows": 8}' '{"rows": 1.5, "hidden": 8}' '{"rows": -8, "hidden": 8}' \
         '{"rows": 0, "hidden": 8}' '{"rows": "8", "hidden": 8}' '{"rows": true, "hidden": 8}' '{"rows": null, "hidden": 8}' \
         '{"rows": 1e308, "hidden": 8}' '{"rows": 1e400, "hidden": 8}' '{"rows": 9223372036854775808, "hidden": 8}' \
         '{"rows": {"a": 1}, "hidden": 8}' '{"rows": [8], "hidden": 8}' '{"rows": 8, "hidden": 8, "dtype": 1}' \
         '{"rows": 8, "hidden": 8, "dtype": "fp32;rm -rf /"}' '{"rows": 8, "hidden": 8, "": 1}' \
         '{"rows": 8, "hidden": 8, "extra": 1}'; do
  run 22023 "'layer_norm', 'forward', '$w'"
done
run 22023 "'layer_norm', 'forward', '{\"rows\": 100000000, \"hidden\": 100000000}'"
for i in "''" "'cuda/../../x'" "'cpu;id'" "'triton'" "repeat('c', 100000)" "'cuda/v99'"; do
  run 22023 "'layer_norm', 'forward', '$SMALL', implementation => $i"
done
# (a device in any case, blanks around it ignored, is a name the resolver takes: CPU and 'cpu ' queue on cpu, sql/resolve.sql)
for d in "''" "'cuda:'" "'cuda:-1'" "'cuda:99999999999999999999'" "'c pu'" "'gpu'" "'cpu:0'" "repeat('d', 100000)"; do
  run 22023 "'layer_norm', 'forward', '$SMALL', device => $d"
done
for p in '[]' 'null' '1' '"x"' '{"max_samples": 1.5}' '{"max_samples": 0}' '{"max_samples": 1e20}' \
         '{"max_samples": -1}' '{"max_samples": null}' '{"flush_bytes": 0.5}' '{"flush_bytes": -1}' \
         '{"seed": -1}' '{"seed": 1.5}' '{"seed": 1e300}' '{"warmup_ms": "1"}' '{"warmup_ms": -1}' \
         '{"warmup_ms": 1e10}' '{"rep_ms": 0}' '{"rep_ms": 1e300}' '{"check": 1}' '{"check": "true"}' \
         '{"x": 1}' '{"": 1}'; do
  run 22023 "'layer_norm', 'forward', '$SMALL', protocol => '$p'"
done
for t in "'1 month'" "'1 year'" "'1 day 1 month'" "'-1 s'" "'0 s'" "'-1 day'" "'8760000 hours'" \
         "'178000000 years'" "'1 mon -30 days'"; do
  run 22023 "'layer_norm', 'forward', '$SMALL', timeout => $t"
done
run 22007 "'layer_norm', 'forward', '$SMALL', timeout => 'forever'"
job=$(as alice "SELECT kbench_run('layer_norm', 'forward', '$SMALL', protocol => '$TINY')")
for t in "'1 month'" "'1 year'" "'-1 s'" "'-1 day'" "'2 mons -60 days'"; do
  bad_input alice 22023 "SELECT kbench_wait($job, $t)" "kbench_wait($job, $t)"
done
for id in -1 0 9223372036854775807 "$mj"; do
  bad_input alice P0002 "SELECT kbench_wait($id, '1 s')" "kbench_wait($id) (not alice's or no job)"
  bad_input alice P0002 "SELECT kbench_cancel($id)" "kbench_cancel($id) (not alice's or no job)"
done
bad_input alice 22023 "CALL kbench_bench('softmaxx', 'forward', '$SMALL')" "kbench_bench of an unknown operation"
bad_input alice 22023 "CALL kbench_bench('layer_norm', 'forward', '$SMALL', protocol => '{\"max_samples\": 2.5}')" "kbench_bench with a fractional sample count"
bad_input boss 22007 "SELECT kbench_prune_jobs('soon')" "kbench_prune_jobs('soon')"
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE owner = 'alice' AND id > $job")" 0 "no bad input left a job behind"

echo "# 7. a job whose worker is gone for good"
job=$(as alice "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
q "ALTER SYSTEM SET kernelindex.devices = 'none'" >/dev/null
restart_hard
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" running "with its device removed, the job is left running"
ok "$(as alice "SELECT kbench_cancel($job)")" t "kbench_cancel of a job whose worker is gone returns true"
attack "... and the job is canceled, not left running" "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" canceled
q "ALTER SYSTEM SET kernelindex.devices = 'cpu'" >/dev/null
# a database owner's search_path for everyone, mallory's schema first: the worker starts with it
q "ALTER DATABASE kbench SET search_path = mallory, pg_catalog, kernelindex, public"
restart_hard
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30
mj=$(as mallory "SELECT kbench_run('layer_norm', 'forward', '$SMALL', protocol => '$TINY')")
as mallory "SELECT status FROM kbench_wait($mj, '60 s')" >/dev/null
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $mj")" passed "a job runs with the database's search_path set to mallory's schema first"
attack "the worker, started under ALTER DATABASE ... SET search_path = mallory, ..., runs none of her shadows" \
  "$(q "SELECT coalesce(string_agg(DISTINCT fn || ' as ' || who, ', '), '') FROM public.shadow_ran WHERE who NOT IN ('mallory', 'eve')")" ""
q "ALTER DATABASE kbench RESET search_path"
job=$(as alice "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')")
left=$(as alice "SELECT kbench_run('layer_norm', 'forward', '$SMALL')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
q "ALTER SYSTEM SET kernelindex.devices = 'cuda:0'" >/dev/null
restart_hard
if wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 30; then :; fi
ok "$(q "SELECT status || ': ' || error FROM kbench_jobs WHERE id = $job" | sed 's/(pid [0-9]*)/(pid N)/')" \
   "failed: the worker for cpu (pid N) stopped while running the job, and no worker serves cpu any more (kernelindex.devices)" \
   "a worker that starts fails the running jobs of a device no worker serves"
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $left")" canceled "... and cancels its queued ones"
q "ALTER SYSTEM RESET kernelindex.devices" >/dev/null

echo "# 8. trust at the boundaries (issue 24)"
# kbench_summary_markdown: the names of the runs it reports are whoever ingested them; its
# table goes into pull requests and CI summaries.  A device named with HTML, a row break,
# cell pipes, a code span, links to javascript: (inline and <autolink>) and an e-mail
# autolink, in product and form factor (free text; implementation, operation and workload
# names are refused with anything but [a-z0-9._-], below).
as_script boss >/dev/null 2>&1 <<'SQL'
SELECT digest AS proto FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkProtocol",
  "metadata": {"name": "hostile-backward"},
  "spec": {"harness": {"name": "hostile"}, "measurement": {"timer": "cuda_event", "primaryStatistic": "median"},
           "comparability": {"family": "hostile", "notes": "Made up for the security suite."}}}'::jsonb) \gset
SELECT digest AS env FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'ExecutionEnvironment',
  'metadata', jsonb_build_object('name', 'hostile-gpu'),
  'spec', jsonb_build_object('hardware', jsonb_build_object('vendor', 'nvidia', 'architecture', 'sm_100',
     'product', E'NVIDIA <img src=x onerror=alert(1)> | x\n## `code` [click](javascript:alert(1)) <javascript:alert(2)> ![i](javascript:y) x@evil.example',
     'formFactor', E'SXM\r\n| 1 | open | [x](javascript:alert(3)) |\u2028<script>alert(4)</script>'), 'software', '{}'::jsonb))) \gset
SELECT digest AS impl FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ImplementationRevision",
  "metadata": {"name": "hostile_kernel"},
  "spec": {"projectRevision": {"version": "1.0"}, "operation": {"specDigest": "sha256:6666666666666666666666666666666666666666666666666666666666666666"},
           "callable": {"language": "cuda"}, "support": {"hardwareArchitectures": ["sm_100"], "dtypes": ["fp32"]},
           "licensing": {"declared": "MIT", "concluded": "MIT"}}}'::jsonb) \gset
-- two runs of one series, the second twice as slow: the seeded percent rule opens an alert
SELECT count(*) FROM generate_series(1, 2) i,
  kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
    'metadata', jsonb_build_object('name', 'hostile-' || i),
    'spec', jsonb_build_object('implementationDigest', :'impl', 'workloadDigest', 'sha256:' || repeat('7', 64),
      'protocolDigest', :'proto', 'environmentDigest', :'env', 'status', 'passed', 'observedAt', '2025-01-0' || i || 'T00:00:00Z',
      'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', i * 1000000)))));
SQL
md=$(as reader "SELECT kbench_summary_markdown('hostile_kernel')")
ok "$(as reader "SELECT count(*) FROM kbench_alert_status WHERE family = 'hostile_kernel' AND device LIKE '%<img%'")" 1 \
   "an alert on the device with the hostile name is open (what the summary reports)"
row=$(printf '%s\n' "$md" | grep '^| [0-9]')
# the row with its backslash escapes taken out: what is left must be plain text between 11 pipes
bare=$(printf '%s' "$row" | sed 's/\\.//g')
attack "kbench_summary_markdown keeps a hostile device name on its row (4 lines: title, header, rule, one alert)" \
  "$(printf '%s\n' "$md" | grep -c .)" 4
attack "... its cell pipes escaped (11 table pipes on the row)" "$(printf '%s' "$bare" | tr -cd '|' | wc -c)" 11
attack "... and no HTML, code span, link or image syntax, <autolink> or e-mail autolink written raw" \
  "$(printf '%s' "$bare" | grep -c '[][<>`()@]')" 0
attack "... the device's words still there, escaped (&lt;img, \\[click\\])" \
  "$(printf '%s' "$row" | grep -cF 'NVIDIA &lt;img src=x onerror=alert\(1\)&gt; \| x ## \`code\` \[click\]\(javascript:alert\(1\)\)')" 1
for kind in ImplementationRevision OperationSpec WorkloadCase; do
  bad_input boss 22023 "SELECT kbench_ingest('{\"apiVersion\": \"kernelindex.dev/v1alpha1\", \"kind\": \"$kind\", \"metadata\": {\"name\": \"x|<b>[a](javascript:b)\"}, \"spec\": {}}'::jsonb)" \
    "a manifest of kind $kind named with Markdown and HTML (the summary's implementation, operation and workload cells)"
done

# Import rejections: a reason quotes at most 200 characters of its line (an unknown table's
# name, a member's path in an invalid manifest, the path of a JSON error), and the rejections
# are read by the role that ran the import, kbench_admin and pg_read_all_data, not by PUBLIC.
# carol may import (granted the staged import) but is no kbench_admin.
q "CREATE ROLE carol LOGIN; ALTER ROLE carol SET search_path = kernelindex, public;
   GRANT EXECUTE ON FUNCTION kbench_import_catalog_staged(text) TO carol; GRANT INSERT (line) ON kbench_import_staging TO carol;
   GRANT USAGE ON SEQUENCE kbench_import_staging_n_seq TO carol" >/dev/null
secret=$(head -c 6000 /dev/zero | tr '\0' 'S')
stage() {  # role, lines on stdin
  as "$1" "\\copy kbench_import_staging (line) FROM STDIN WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')" >/dev/null
}
printf '{"table": "boss-%s", "row": {}}\n{"table": "operations", "row": {"manifest": {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "OperationSpec", "metadata": {"name": "x", "%s": 1}}}}\n{"%s": 1,}\n' \
  "$secret" "$secret" "$secret" | stage boss
boss_import=$(as boss "SELECT import_id FROM kbench_import_catalog_staged('hostile lines')")
printf '{"table": "carol-%s", "row": {}}\n' "$secret" | stage carol
carol_import=$(as carol "SELECT import_id FROM kbench_import_catalog_staged('carol')")
ok "$(q "SELECT count(*) FROM kbench_import_rejections WHERE import_id IN ($boss_import, $carol_import)")" 4 \
   "the hostile lines are rejected (3 of boss's, 1 of carol's)"
attack "a rejection reason quotes at most 200 characters of a 6000-character line, with a marker" \
  "$(as boss "SELECT bool_and(length(reason) < 500 AND reason LIKE '%... (% more characters)%' AND position(repeat('S', 201) IN reason) = 0)
                 FROM kbench_import_rejections WHERE import_id IN ($boss_import, $carol_import)")" t
ok "$(as boss "SELECT length(reason) || ' ' || left(reason, 21) || ' ' || length(replace(reason, 'S', '')) || ' ' || right(reason, 27)
               FROM kbench_import_rejections WHERE import_id = $carol_import")" \
   '242 unknown table "carol- 48 ... (5806 more characters)"' "... the cut at 200 characters (the table's name: 6 and 194 of its 6000 S), and how many were left out"
attack "PUBLIC reads an import's rejection reasons" "$(as reader "SELECT count(*) FROM kbench_import_rejections")" 0
attack "a kbench_user reads an import's rejection reasons" "$(as bob "SELECT count(*) FROM kbench_import_rejections")" 0
attack "a role that may import reads the rejections of another role's import (carol: her own only)" \
  "$(as carol "SELECT count(*) FILTER (WHERE import_id = $carol_import) || ' ' || count(*) FILTER (WHERE import_id = $boss_import) FROM kbench_import_rejections")" "1 0"
ok "$(as boss "SELECT count(*) FILTER (WHERE import_id = $carol_import) || ' ' || count(*) FILTER (WHERE import_id = $boss_import) FROM kbench_import_rejections")" \
   "1 3" "kbench_admin reads every import's rejections"
ok "$(as watcher "SELECT count(*) FROM kbench_import_rejections WHERE import_id IN ($boss_import, $carol_import)")" 4 "... and so does pg_read_all_data"
ok "$(as reader "SELECT rejected FROM kbench_imports WHERE id = $boss_import")" 3 "PUBLIC still reads how many lines an import rejected"
ok "$(q "SELECT string_agg(imported_by, ',' ORDER BY id) FROM kbench_imports WHERE id IN ($boss_import, $carol_import)")" "boss,carol" \
   "kbench_imports names the role that ran each import"


attacks_summary
