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
#     one 'first'.
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
ok() { if [ "$1" = "$2" ]; then echo "ok - $3"; else echo "not ok - $3 (got '$1', expected '$2')"; fi; }
q() { psql -X -At -q -d "$1" -c "$2" 2>&1; }
ZST="$ROOT/data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst"
QUOTED="$TMP/it's a \"catalog\".jsonl.zst"
cp "$ZST" "$QUOTED"; chmod a+r "$QUOTED"
head -c 100000 "$ZST" > "$TMP/truncated.jsonl.zst"; chmod a+r "$TMP/truncated.jsonl.zst"

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
