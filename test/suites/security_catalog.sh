#!/usr/bin/env bash
# security_catalog.sh: attacks on the catalog (issue 10, items 3-5), each a
# TAP line; ends with "# attacks tried: N, got through: M".
#   - imports aborted at several points (statement_timeout, an error raised
#     by a trigger, a rolled-back subtransaction), then an ingest in the
#     same session: it stores (no digest cache survives an abort);
#   - U+0000: identity functions keep it, storing it fails naming the path,
#     nothing is truncated; 1e-400 and 1e400 mean the same as json, jsonb, text;
#   - TRUNCATE, DELETE and UPDATE as the owner (a superuser) on every catalog
#     table; a retraction or supersession by hand; one to a run that does not
#     exist; the store's functions called by a role without rights;
#   - kbench_import_liger(NULL) and kbench_import_liger_file(NULL): an error, not a crash.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
ki_cluster_start || { echo "not ok - the cluster starts"; exit 1; }
tried=0; through=0
attack() { # what got expected
  tried=$((tried + 1))
  if [ "$2" = "$3" ]; then echo "ok - attack held: $1"; else through=$((through + 1)); echo "not ok - attack got through: $1 (got '$2', expected '$3')"; fi
}
refused() { # what sqlstate sql
  local out
  tried=$((tried + 1))
  out=$(psql -X -At -q -v VERBOSITY=verbose -c "$3" 2>&1)
  # a here-string, not a pipe: grep -q leaving early would fail the pipe's writer under pipefail
  if grep -qE "^ERROR:  $2: [a-z]" <<<"$out"; then echo "ok - attack held ($2): $1"
  else through=$((through + 1)); echo "not ok - attack got through: $1"; printf '%s\n' "$out" | head -3 | sed 's/^/#   /'; fi
}
q() { psql -X -At -q -c "$1" 2>&1; }
trap 'ki_cluster_stop' EXIT
psql -X -q -c "CREATE EXTENSION kernelindex" >/dev/null
SEED="$(pwd)/test/data/seeds/000_04bb0f8f111ec531.json"
CSV="$(pwd)/data/liger/all_benchmark_data.csv"
chmod a+r "$SEED" "$CSV"

# 1. aborted imports, then an ingest in the same session.  What is ingested
# is the first CSV row's operation and {run, protocol, environment}: the
# manifests an import stores first, so the ones a per-session digest cache
# that survived the abort would claim are already there.
TMP=$(mktemp -d /tmp/kernelindex-sec.XXXXXX); chmod 755 "$TMP"
trap 'ki_cluster_stop; rm -rf "$TMP"' EXIT
zstd -q -dc data/liger/kernelindex_expected.jsonl.zst | head -1 | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
json.dump(d['operation'], open('$TMP/op.json', 'w'))
json.dump({'run': d['run'], 'protocol': d['protocol'], 'environment': d['environment']}, open('$TMP/doc.json', 'w'))"
chmod a+r "$TMP"/*.json
after_abort="SELECT string_agg(kind || ':' || inserted, ',' ORDER BY kind) FROM (
               SELECT * FROM kbench_ingest(pg_read_file('$TMP/op.json')::json)
               UNION ALL SELECT * FROM kbench_ingest(pg_read_file('$TMP/doc.json')::json)) i;
             SELECT (SELECT count(*) FROM kbench_operations) || ' ' || (SELECT count(*) FROM kbench_protocols) || ' ' ||
                    (SELECT count(*) FROM kbench_environments) || ' ' || (SELECT count(*) FROM kbench_runs);"
expect="BenchmarkProtocol:true,BenchmarkRun:true,ExecutionEnvironment:true,OperationSpec:true 1 1 1 1 "
CREATE_RAISE="CREATE FUNCTION pg_temp.boom() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN RAISE EXCEPTION 'boom'; END \$\$;"
for how in "SET statement_timeout = '100ms'" "SET statement_timeout = '300ms'" "SET statement_timeout = '900ms'" \
           "$CREATE_RAISE CREATE TRIGGER boom BEFORE INSERT ON kbench_runs FOR EACH ROW EXECUTE FUNCTION pg_temp.boom()" \
           "$CREATE_RAISE CREATE TRIGGER boom BEFORE INSERT ON kbench_environments FOR EACH ROW EXECUTE FUNCTION pg_temp.boom()" \
           "$CREATE_RAISE CREATE TRIGGER boom BEFORE INSERT ON kbench_workloads FOR EACH ROW EXECUTE FUNCTION pg_temp.boom()"; do
  out=$(psql -X -At -q 2>&1 <<SQL
BEGIN;
$how;
DO \$\$ BEGIN PERFORM kbench_import_liger(pg_read_file('$CSV')); END \$\$;
ROLLBACK;
$after_abort
SQL
)
  attack "import aborted ($(printf '%s' "$how" | sed 's/.*CREATE TRIGGER boom BEFORE INSERT ON \([a-z_]*\).*/an error inserting into \1/')), then an ingest in the same session stores" \
    "$(printf '%s\n' "$out" | grep -E '^(Bench|[0-9])' | tr '\n' ' ')" "$expect"
  q "DROP EXTENSION kernelindex CASCADE; CREATE EXTENSION kernelindex" >/dev/null
done
# a catalog import of one line whose run cannot be stored, rolled back in a subtransaction
line=$(python3 -c "import json; d=json.load(open('$TMP/doc.json')); print(json.dumps({'table': 'benchmark_runs', 'row': {'runDigest': 'sha256:' + '0' * 64, 'manifest': d}}))")
out=$(psql -X -At -q -v line="$line" 2>&1 <<SQL
$CREATE_RAISE
CREATE TRIGGER boom BEFORE INSERT ON kbench_runs FOR EACH ROW EXECUTE FUNCTION pg_temp.boom();
BEGIN;
INSERT INTO kbench_import_staging (line) VALUES (:'line');
DO \$\$ BEGIN PERFORM kbench_import_catalog_staged('aborted'); EXCEPTION WHEN others THEN NULL; END \$\$;
DROP TRIGGER boom ON kbench_runs;
$after_abort
COMMIT;
SQL
)
attack "catalog import rolled back in a subtransaction, then an ingest in the same transaction stores" \
  "$(printf '%s\n' "$out" | grep -E '^(Bench|[0-9])' | tr '\n' ' ')" "$expect"
q "DROP EXTENSION kernelindex CASCADE; CREATE EXTENSION kernelindex" >/dev/null

# 2. U+0000 and the same number in json, jsonb and text
attack "kbench_canonical keeps U+0000 (RFC 8785 writes \\u0000)" "$(q "SELECT kbench_canonical('{\"a\": \"NUL \\u0000 Project\"}'::json)")" '{"a":"NUL \u0000 Project"}'
attack "kbench_digest of json and text with U+0000 agree" \
  "$(q "SELECT kbench_canonical(t::json) = kbench_canonical(t) FROM (SELECT '[\"x\\u0000y\"]'::text t) x")" t
proto=$(python3 -c "import json; d=json.load(open('$SEED')); p=d['protocol']; p['spec']['comparability']['notes']='NUL \u0000 Project'; print(json.dumps(p))")
out=$(echo "SELECT * FROM kbench_ingest(:'doc'::json)" | psql -X -At -q -v VERBOSITY=verbose -v doc="$proto" 2>&1)
attack "storing a manifest with U+0000 fails naming the path" \
  "$(printf '%s\n' "$out" | grep -oE '^ERROR:  22P05: cannot store a document containing U\+0000 at spec\.comparability\.notes')" \
  "ERROR:  22P05: cannot store a document containing U+0000 at spec.comparability.notes"
out=$(echo "SELECT * FROM kbench_ingest(:'doc'::text)" | psql -X -At -q -v VERBOSITY=verbose -v doc="$proto" 2>&1)
attack "storing it as text fails the same way" "$(printf '%s\n' "$out" | grep -c 'U+0000 at spec.comparability.notes')" 1
attack "nothing was stored, truncated or not" "$(q "SELECT count(*) FROM kbench_protocols")" 0
attack "1e-400 is the same number as json, jsonb and text" \
  "$(q "SELECT kbench_canonical('[1e-400]'::json) || kbench_canonical('[1e-400]'::jsonb) || kbench_canonical('[1e-400]'::text)")" "[0][0][0]"
for t in json jsonb text; do
  refused "1e400 as $t is out of range" 22003 "SELECT kbench_canonical('{\"a\": [1e400]}'::$t)"
done
attack "the error names the same path for jsonb as for json" \
  "$(q "SELECT kbench_canonical('{\"a\": [1, 1e400]}'::jsonb)" | grep -o 'at a\[1\]')" "at a[1]"

# 3. append-only for the owner, a superuser
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT count(*) FROM kbench_import_liger(pg_read_file('$CSV'));
\copy kbench_import_staging (line) FROM PROGRAM 'zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | head -3000' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')
\copy kbench_import_staging (line) FROM PROGRAM 'zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | tail -2000' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')
SELECT count(*) FROM kbench_import_catalog_staged('slice');
SQL
for t in kbench_operations kbench_workloads kbench_implementations kbench_protocols kbench_environments kbench_projects \
         kbench_serving_manifests kbench_runs kbench_measurements kbench_catalog_rows kbench_catalog_source_rows; do
  [ "$(q "SELECT count(*) > 0 FROM $t")" = t ] || echo "not ok - $t has rows to attack"
  refused "TRUNCATE $t" 23001 "TRUNCATE $t CASCADE"
  refused "DELETE FROM $t" 23001 "DELETE FROM $t"
  col=$(q "SELECT attname FROM pg_attribute WHERE attrelid = '$t'::regclass AND attnum > 0 AND NOT attisdropped AND atttypid = 'text'::regtype AND attname NOT IN ('digest') ORDER BY attnum LIMIT 1")
  refused "UPDATE $t SET $col" 23001 "UPDATE $t SET $col = $col || 'x'"
done
refused "UPDATE kbench_runs SET primary_ns" 23001 "UPDATE kbench_runs SET primary_ns = 1"
refused "a retraction by UPDATE" 23001 "UPDATE kbench_runs SET retracted_at = now(), retraction_reason = 'by hand'"
refused "a supersession by UPDATE" 23001 "UPDATE kbench_runs SET superseded_by = (SELECT min(digest) FROM kbench_runs), supersession_reason = 'x' WHERE digest <> (SELECT min(digest) FROM kbench_runs)"
refused "a supersession by UPDATE to a run that does not exist, with the functions' setting forged" P0002 \
  "BEGIN; SELECT set_config('kbench.withdrawal', (SELECT min(digest) FROM kbench_runs), true); UPDATE kbench_runs SET superseded_by = 'nothing', supersession_reason = 'x' WHERE digest = (SELECT min(digest) FROM kbench_runs)"
refused "marking a reference unresolved by hand" 23001 "UPDATE kbench_runs SET unresolved = '{implementation}'"
refused "marking an operation unresolved by hand" 23001 "UPDATE kbench_workloads SET operation_resolved = false"
# (a digest no run has; 'sha256:0000' is not a digest, refused with 22023 by the resolver)
refused "kbench_supersede to a run that does not exist" P0002 "SELECT kbench_supersede((SELECT min(digest) FROM kbench_runs), 'sha256:' || repeat('0', 64), 'x')"
refused "kbench_retract of a run that does not exist" P0002 "SELECT kbench_retract('sha256:' || repeat('0', 64), 'x')"
refused "kbench_retract of what is not a digest" 22023 "SELECT kbench_retract('sha256:0000', 'x')"
# (they return the digest of the run withdrawn)
attack "kbench_retract still works" "$(q "SELECT kbench_retract((SELECT min(digest) FROM kbench_runs), 'measured wrong') IS NOT NULL")|$(q "SELECT retraction_reason FROM kbench_runs WHERE digest = (SELECT min(digest) FROM kbench_runs)")" "t|measured wrong"
attack "kbench_supersede still works" "$(q "SELECT kbench_supersede((SELECT max(digest) FROM kbench_runs), (SELECT min(digest) FROM kbench_runs), 'remeasured') IS NOT NULL")|$(q "SELECT supersession_reason FROM kbench_runs WHERE digest = (SELECT max(digest) FROM kbench_runs)")" "t|remeasured"
refused "a retraction is permanent" 23001 "SELECT kbench_retract((SELECT min(digest) FROM kbench_runs), 'again')"
q "CREATE ROLE ki_nobody LOGIN" >/dev/null
# (15: the eight kinds' store_*, stored_digests, run_columns, store_catalog_rows, store_source_rows,
# store_rejections, store_memory_observations and withdraw)
internal="pronamespace = '_kernelindex'::regnamespace AND (proname LIKE 'store%' OR proname IN ('run_columns', 'withdraw'))"
attack "the store's functions and _kernelindex.withdraw are not executable by PUBLIC" \
  "$(q "SELECT count(*) FROM pg_proc WHERE $internal") $(q "SELECT count(*) FILTER (WHERE has_function_privilege('ki_nobody', oid, 'EXECUTE')) FROM pg_proc WHERE $internal")" "15 0"
q "GRANT kbench_admin TO ki_nobody" >/dev/null 2>&1
out=$(psql -X -At -q -U ki_nobody -v VERBOSITY=verbose -c "SELECT * FROM kbench_import_catalog('$(pwd)/data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst')" 2>&1)
tried=$((tried + 1))
case "$out" in
  *"ERROR:  42501: permission denied"*) echo "ok - attack held (42501): a role without pg_read_server_files reads a server file through kbench_import_catalog";;
  *) through=$((through + 1)); echo "not ok - attack got through: a role without pg_read_server_files reads a server file through kbench_import_catalog"; printf '%s\n' "$out" | head -3 | sed 's/^/#   /';;
esac
attack "the unvalidated row-at-a-time kbench__store is gone" "$(q "SELECT count(*) FROM pg_proc WHERE proname IN ('store', 'kbench__store')")" 0  # internals_rename: keep

# A NULL CSV (issue 24): 0.2.0 read it as text and crashed the server (SIGSEGV), for any kbench_admin
# (ki_nobody is one now); kbench_import_liger_file(NULL) passes pg_read_file's NULL on.
pm=$(head -1 "$KI_CLUSTER_DIR/data/postmaster.pid")
for who in "ki_nobody kbench_import_liger(NULL)" "ki_nobody kbench_import_liger(NULL, 'x')" \
           "postgres kbench_import_liger_file(NULL)"; do
  out=$(psql -X -At -q -U "${who%% *}" -v VERBOSITY=verbose -c "SELECT * FROM ${who#* }" 2>&1)
  attack "${who%% *} calls ${who#* }: refused (22004, lower case), the server stays up (same postmaster, nothing terminated by a signal)" \
    "$(grep -oE '^ERROR:  [0-9A-Z]{5}: [a-z]' <<<"$out" | head -1)|$(q "SELECT 1")|$(head -1 "$KI_CLUSTER_DIR/data/postmaster.pid")|$(grep -c 'terminated by signal' "$KI_CLUSTER_DIR/server.log")" \
    "ERROR:  22004: c|1|$pm|0"
done

echo "# attacks tried: $tried, got through: $through"
