#!/usr/bin/env bash
# catalog_store.sh: the set-based store gives what the row-at-a-time store
# gave, and the catalog's history survives a dump.
#   - the Liger CSV then the whole catalog export (read from its .zst by
#     kbench_import_catalog, no shell): every table's rows, digests,
#     manifests, measurements, counts and record history equal the
#     fingerprint recorded from the 0.1.0 store (test/data/import/);
#   - a path with a quote imports; a missing file and a truncated .zst say so;
#   - pg_dump / pg_restore keep the record history exactly (ids, order,
#     recorded_at), retractions and supersessions included;
#   - two transactions storing the first runs of one new cohort at once give
#     one 'first';
#   - lossless: raw samples (kbench --json through kbench_ingest), retractions
#     and supersessions go out in the export and come back; export, import
#     into an empty database, export: identical bytes.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
TMP=$(mktemp -d /tmp/kernelindex-store.XXXXXX)
chmod 755 "$TMP"
trap 'ki_cluster_stop; rm -rf "$TMP"' EXIT
ki_cluster_start || { echo "not ok - the cluster starts"; exit 1; }
source test/lib/tap.sh
q() { psql -X -At -q -d "$1" -c "$2" 2>&1; }
ZST="$ROOT/data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst"
QUOTED="$TMP/it's a \"catalog\".jsonl.zst"
cp "$ZST" "$QUOTED"; chmod a+r "$QUOTED"
head -c 100000 "$ZST" > "$TMP/truncated.jsonl.zst"; chmod a+r "$TMP/truncated.jsonl.zst"

# the records and the alerts are kept per statement: importing the Liger CSV (1,649 runs, stored by
# the flushes of one import: every 2,000 lines) calls each trigger once per INSERT into kbench_runs,
# not once per run (counted by track_functions in the importing transaction)
createdb perstmt
q perstmt "CREATE EXTENSION kernelindex" >/dev/null
out=$(psql -X -At -q -d perstmt -v ON_ERROR_STOP=1 <<'SQL' 2>&1
\set csv `cat data/liger/all_benchmark_data.csv`
BEGIN;
SET LOCAL track_functions = 'pl';
SELECT count(*) FROM kbench_import_liger(:'csv') \gset
SELECT (SELECT count(*) FROM kbench_runs) || ' ' || coalesce(string_agg(funcname || ':' || (calls BETWEEN 1 AND 2), ' ' ORDER BY funcname), 'none')
  FROM pg_stat_xact_user_functions WHERE schemaname = '_kernelindex' AND funcname IN ('records_after_insert', 'alerts_after_insert');
SELECT string_agg(funcname || ' ' || calls, ', ') FROM pg_stat_xact_user_functions WHERE schemaname = '_kernelindex' AND funcname LIKE '%after\_insert';
COMMIT;
SQL
)
ok "$(head -1 <<<"$out")" "1649 alerts_after_insert:true records_after_insert:true" \
   "the records and alerts triggers run once per statement of the store, not once per run (calls: $(tail -1 <<<"$out"))"
# (first, and fatal: with a trigger per run, the catalog import below would take hours)
[ "$(head -1 <<<"$out")" = "1649 alerts_after_insert:true records_after_insert:true" ] ||
  { echo "not ok - the rest of the suite is not run (its imports would not end)"; exit 1; }
# the same CSV again: every line present, nothing inserted or rejected (the store's ON CONFLICT DO
# NOTHING: a manifest already in the catalog is not an error)
out=$(psql -X -At -q -d perstmt -v ON_ERROR_STOP=1 <<'SQL' 2>&1
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT import_id FROM kbench_import_liger(:'csv') \gset
SELECT concat_ws(' ', lines, inserted, present, rejected, memory_present, (SELECT count(*) FROM kbench_runs)) FROM kbench_imports WHERE id = :import_id;
SQL
)
ok "$out" "2448 0 2448 0 799 1649" "the Liger CSV imported again: every line present (799 memory rows too), nothing inserted or rejected"

createdb src
q src "CREATE EXTENSION kernelindex" >/dev/null
psql -X -q -d src -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT * FROM kbench_import_liger(:'csv');
SQL
zstd -q -dc "$ZST" | psql -X -q -d src -c "\copy kbench_import_staging (line) FROM STDIN WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')"
q src "SELECT * FROM kbench_import_catalog_staged('bench')" >/dev/null
createdb quoted
q quoted "CREATE EXTENSION kernelindex" >/dev/null
out=$(echo "SELECT lines || ' ' || rejected FROM kbench_import_catalog(:'path')" | psql -X -At -q -d quoted -v path="$QUOTED" 2>&1)
ok "$out" "40795 0" "kbench_import_catalog reads the .zst export by libzstd, at a path with quotes in it"
ok "$(psql -X -At -q -F ' ' -d src -f test/data/import/fingerprint.sql | sort)" "$(cat test/data/import/fingerprint.txt)" \
   "Liger CSV + catalog export: every row, digest, manifest, measurement, count and the record history equal the 0.1.0 store's"

out=$(q quoted "SELECT * FROM kbench_import_catalog('$TMP/missing.jsonl.zst')")
case "$out" in *"could not open catalog export"*"No such file"*) echo "ok - a missing file says so";; *) echo "not ok - a missing file says so: $out";; esac
out=$(q quoted "SELECT * FROM kbench_import_catalog('$TMP/truncated.jsonl.zst')")
case "$out" in *"could not decompress"*) echo "ok - a truncated .zst says so";; *) echo "not ok - a truncated .zst says so: $out";; esac
ok "$(q quoted "SELECT count(*) FROM kbench_imports WHERE source LIKE '%truncated%'")" 0 "the failed import left nothing behind"

# the record history through pg_dump / pg_restore, withdrawals included
q src "SELECT kbench_retract(run_digest, 'retracted before the dump') FROM (SELECT run_digest FROM kbench_leaders ORDER BY run_digest LIMIT 2) l" >/dev/null
q src "SELECT kbench_supersede(l.run_digest, (SELECT b.run_digest FROM kbench_cohort_bests b WHERE b.run_digest <> l.run_digest LIMIT 1), 'superseded before the dump')
         FROM (SELECT run_digest FROM kbench_leaders ORDER BY run_digest DESC LIMIT 1) l" >/dev/null
history="SELECT count(*) || ' ' || count(*) FILTER (WHERE cause IN ('retracted', 'superseded')) || ' ' ||
                md5(string_agg(concat_ws('|', id, workload_digest, protocol_digest, environment_digest, run_digest, implementation_digest,
                                         primary_ns, previous_run_digest, previous_primary_ns, at, cause, recorded_at), ',' ORDER BY id))
           FROM kbench_record_history"
before=$(q src "$history")
pg_dump -Fc -d src -f "$TMP/dump" 2>&1 | sed 's/^/# /'
createdb dst
pg_restore -d dst "$TMP/dump" 2>&1 | sed 's/^/# /'
ok "$(q dst "$history")" "$before" "pg_dump/pg_restore keep the record history exactly: ids, order, recorded_at, withdrawals"
ok "$(q dst "SELECT nextval('kbench_record_history_id_seq') > max(id) FROM kbench_record_history")" t "the restored history goes on after its last id"
ok "$(q dst "SELECT count(*) FROM kbench_cohort_bests")" "$(q src "SELECT count(*) FROM kbench_cohort_bests")" "the restored bests are rebuilt the same"

# two first runs of one new cohort at once: one 'first'
seed=$(cat test/data/seeds/000_04bb0f8f111ec531.json)
createdb conc
q conc "CREATE EXTENSION kernelindex" >/dev/null
variant() { # $1: observedAt, $2: median
  printf '%s' "$seed" | python3 -c "import json,sys; d=json.load(sys.stdin); d['run']['spec']['observedAt']='$1'; d['run']['spec']['timing']['latencyNs']['median']=$2; print(json.dumps(d))"
}
A=$(variant 2026-07-01T00:00:00.000Z 5000000); B=$(variant 2026-07-02T00:00:00.000Z 4000000)
{
  psql -X -q -d conc -v doc="$A" <<'SQL'
BEGIN;
SELECT count(*) FROM kbench_ingest(:'doc'::json);
-- hold the transaction until the other session waits for the cohort (or 20 s)
DO $$ BEGIN
  FOR i IN 1..400 LOOP
    EXIT WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)
           OR EXISTS (SELECT 1 FROM kbench_runs WHERE observed_at = '2026-07-02T00:00:00Z');
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
COMMIT;
SQL
} >/dev/null 2>&1 &
p1=$!
for i in $(seq 1 200); do
  [ "$(q conc "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")" != 0 ] && break
  sleep 0.05
done
echo "SELECT count(*) FROM kbench_ingest(:'doc'::json)" | psql -X -q -d conc -v doc="$B" >/dev/null
wait $p1
ok "$(q conc "SELECT string_agg(cause, ',' ORDER BY id) FROM kbench_record_history")" "first,faster" \
   "two transactions storing the first runs of a new cohort at once: one 'first', then 'faster'"

# lossless: raw samples (from kbench --json through kbench_ingest), retractions
# and supersessions go out in the export and come back; export -> import into
# an empty database -> export gives the same bytes
createdb lossless
q lossless "CREATE EXTENSION kernelindex" >/dev/null
psql -X -q -d lossless -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT * FROM kbench_import_liger(:'csv');
SQL
if kb=$(timeout 120 kernels/kbench run layer_norm forward rows=8 hidden=8 dtype=fp32 --device cpu --json \
          --warmup-ms 0 --rep-ms 0.01 --flush-bytes 0 --max-samples 5 2>/dev/null); then
  out=$(echo "SELECT string_agg(kind || ':' || inserted, ',' ORDER BY kind) FROM kbench_ingest(:'doc'::json)" |
        psql -X -At -q -d lossless -v doc="$kb" 2>&1)
  ok "$out" "BenchmarkProtocol:true,BenchmarkRun:true,ExecutionEnvironment:true,ImplementationRevision:true,OperationSpec:false,WorkloadCase:true" \
     "kbench_ingest takes what kbench --json prints: its six manifests (the operation already there from Liger)"
  expected_raw=$(printf '%s' "$kb" | python3 -c "import json,sys; d=json.load(sys.stdin); drop=set(d['discardedSamples']); print('{' + ','.join(str(round(x)) for i, x in enumerate(d['rawSamplesNs']) if i not in drop) + '}')")
  ok "$(q lossless "SELECT raw_samples_ns FROM kbench_runs WHERE source = 'kbench' OR name LIKE 'kbench-%'")" "$expected_raw" \
     "... with its kept raw samples (rawSamplesNs less discardedSamples, in ns)"
else
  echo "not ok - kernels/kbench runs on the CPU (build kernels/ first)"
fi
q lossless "SELECT kbench_retract((SELECT min(digest) FROM kbench_runs), 'retracted for the round trip')" >/dev/null
q lossless "SELECT kbench_supersede((SELECT max(digest) FROM kbench_runs), (SELECT min(digest) FROM kbench_runs WHERE retracted_at IS NULL), 'superseded for the round trip')" >/dev/null
psql -X -At -q -d lossless -c "SELECT * FROM kbench_export_catalog()" > "$TMP/export1.jsonl"
chmod a+r "$TMP/export1.jsonl"
createdb lossless2
q lossless2 "CREATE EXTENSION kernelindex" >/dev/null
out=$(q lossless2 "SELECT lines || ' ' || inserted || ' ' || rejected FROM kbench_import_catalog('$TMP/export1.jsonl')")
ok "$out" "$(wc -l < "$TMP/export1.jsonl") $(wc -l < "$TMP/export1.jsonl") 0" "the export imports into an empty database, every line new, none rejected"
counts="SELECT count(*) FILTER (WHERE retracted_at IS NOT NULL) || ' ' || count(*) FILTER (WHERE superseded_by IS NOT NULL) || ' ' ||
               count(*) FILTER (WHERE raw_samples_ns IS NOT NULL) || ' ' || count(*) FROM kbench_runs"
ok "$(q lossless2 "$counts")" "$(q lossless "$counts")" "retractions, supersessions and raw samples come back (retracted, superseded, with raw samples, runs)"
ok "$(q lossless2 "SELECT md5(string_agg(concat_ws('|', digest, retracted_at, retraction_reason, superseded_by, supersession_reason, raw_samples_ns), ',' ORDER BY digest)) FROM kbench_runs")" \
   "$(q lossless "SELECT md5(string_agg(concat_ws('|', digest, retracted_at, retraction_reason, superseded_by, supersession_reason, raw_samples_ns), ',' ORDER BY digest)) FROM kbench_runs")" \
   "... with their times, reasons, targets and values"
psql -X -At -q -d lossless2 -c "SELECT * FROM kbench_export_catalog()" > "$TMP/export2.jsonl"
if cmp -s "$TMP/export1.jsonl" "$TMP/export2.jsonl"; then echo "ok - export -> import into an empty database -> export gives identical bytes ($(wc -c < "$TMP/export1.jsonl") bytes)"
else echo "not ok - export -> import into an empty database -> export gives identical bytes"; diff "$TMP/export1.jsonl" "$TMP/export2.jsonl" | head -5 | cut -c1-300 | sed 's/^/# /'; fi

