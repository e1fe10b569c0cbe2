#!/usr/bin/env bash
# memory.sh: memory as a measurement (issue 15).  Liger's memory rows are
# imported as memory observations (799, none silently dropped, bytes =
# MiB x 2^20 for every row, computed here from the CSV with exact decimal
# arithmetic), linked to their speed twins' digests; append-only; exported
# and re-imported losslessly; bad rows rejected with reasons; the memory
# records and ratio on the Liger history checked against values computed by
# hand from the CSV (fused_linear_cross_entropy full on the A100: liger
# against huggingface); a hand-ingested run's peak_memory measurement beside
# the imported rows; an updated 0.1.0 install imports them; PUBLIC reads.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
TMP=$(mktemp -d /tmp/kernelindex-memory.XXXXXX)
chmod 755 "$TMP"
trap 'ki_cluster_stop; rm -rf "$TMP"' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'src'" "kernelindex.devices = 'cpu'" ||
  { echo "not ok - the cluster starts"; exit 1; }
CSV="$(pwd)/data/liger/all_benchmark_data.csv"
source test/lib/tap.sh
q() { psql -X -At -q -v ON_ERROR_STOP=1 -d "${DB:-src}" -c "$1"; }
createdb src && createdb dst || { echo "not ok - databases created"; exit 1; }
q "CREATE EXTENSION kernelindex" && DB=dst q "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }

# ---- the CSV, read independently of src/liger: PostgreSQL's own CSV reader
# into a database without the extension, numbers as exact numerics
createdb hand
H() { psql -X -At -q -v ON_ERROR_STOP=1 -d hand -c "$1"; }
H "CREATE TABLE csv (n bigserial, kernel_name text, kernel_provider text, kernel_operation_mode text,
     metric_name text, metric_unit text, x_name text, x_label text, x_value text, y50 numeric, y20 numeric,
     y80 numeric, config text, gpu_name text, ts text, liger_version text)"
H "\\copy csv (kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit, x_name, x_label, x_value, y50, y20, y80, config, gpu_name, ts, liger_version) FROM '$CSV' WITH (FORMAT csv, HEADER)"
# one physical line per record (2,448 records and the header): the line of record n is n + 1
ok "$(wc -l <"$CSV") $(H "SELECT count(*) FROM csv")" "2449 2448" "the CSV has one line per record, so a record's line is its number + 1"
ok "$(H "SELECT count(*) || ' ' || count(*) FILTER (WHERE metric_unit = 'MB' AND y50 * 1048576 = trunc(y50 * 1048576)
              AND y20 * 1048576 = trunc(y20 * 1048576) AND y80 * 1048576 = trunc(y80 * 1048576)) FROM csv WHERE metric_name = 'memory'")" \
   "799 799" "the CSV holds 799 memory rows, each a whole number of bytes (MiB x 2^20 in exact numeric arithmetic)"
H "SELECT n + 1, kernel_name, kernel_provider, kernel_operation_mode, (y50 * 1048576)::bigint, (y20 * 1048576)::bigint,
          (y80 * 1048576)::bigint, liger_version FROM csv WHERE metric_name = 'memory' ORDER BY n" | tr '|' '\t' >"$TMP/expected.tsv"

# ---- import
ok "$(q "SELECT lines || ' ' || inserted || ' ' || present || ' ' || skipped || ' ' || rejected FROM kbench_import_liger(pg_read_file('$CSV'))")" \
   "2448 2448 0 0 0" "the Liger import stores all 2448 rows: 1649 runs and 799 memory observations"
ok "$(q "SELECT memory_inserted || ' ' || memory_present || ' ' || memory_rejected FROM kbench_imports ORDER BY id DESC LIMIT 1")" \
   "799 0 0" "the import's report counts 799 memory observations imported, 0 already there, 0 rejected"
ok "$(q "SELECT count(*) || ' ' || count(DISTINCT source_line) FROM kbench_memory_observations")" "799 799" \
   "799 memory observations, one per memory line of the CSV: none silently dropped"
ok "$(q "SELECT count(*) FROM kbench_runs")" 1649 "the 1649 speed runs stay runs (no run for a memory row)"
q "SELECT FROM kbench_import_liger(pg_read_file('$CSV'))"
ok "$(q "SELECT memory_inserted || ' ' || memory_present || ' ' || inserted || ' ' || present FROM kbench_imports ORDER BY id DESC LIMIT 1")" \
   "0 799 0 2448" "importing the CSV again: 799 memory observations already there, nothing new"

# ---- two sessions importing the CSV at once: each observation stored once, counted once
createdb conc && DB=conc q "CREATE EXTENSION kernelindex"
for i in 1 2; do DB=conc q "SELECT FROM kbench_import_liger(pg_read_file('$CSV'))" & done
wait
ok "$(DB=conc q "SELECT (SELECT count(*) FROM kbench_memory_observations) || ' ' || sum(memory_inserted) || ' ' || sum(memory_present) || ' ' || sum(memory_rejected) FROM kbench_imports")" \
   "799 799 799 0" "two concurrent imports: 799 observations, inserted by one and found present by the other"

# ---- values: every row against the CSV's MiB x 2^20
q "CREATE TABLE expected (line bigint, kernel text, provider text, pass text, p50 bigint, p20 bigint, p80 bigint, version text)"
psql -X -q -d src -c "\\copy expected FROM '$TMP/expected.tsv'"
ok "$(q "SELECT count(*) FROM expected e JOIN kbench_memory_observations m ON m.source_line = e.line
          WHERE m.p50_bytes = e.p50 AND m.p20_bytes = e.p20 AND m.p80_bytes = e.p80 AND m.pass = e.pass
            AND m.liger_version = e.version AND m.external_id LIKE e.kernel || '/' || e.pass || '/' || e.provider || '/%'")" \
   799 "every memory observation's p50/p20/p80 bytes, pass, version and identity equal its CSV line's"
ok "$(q "SELECT p50_bytes FROM kbench_memory_observations WHERE source_line = 26")" 268780032 \
   "line 26: 256.32861328125 MiB is 268780032 bytes"

# ---- linked to the speed rows' digests
ok "$(q "SELECT count(*) FILTER (WHERE same_pass) || ' ' || count(*) FILTER (WHERE same_rest) FROM (
          SELECT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.workload_digest = m.workload_digest AND r.protocol_digest = m.protocol_digest
                           AND r.implementation_digest = m.implementation_digest AND r.environment_digest = m.environment_digest) AS same_pass,
                 EXISTS (SELECT 1 FROM kbench_runs r WHERE r.workload_digest = m.workload_digest
                           AND r.implementation_digest = m.implementation_digest AND r.environment_digest = m.environment_digest) AS same_rest
            FROM kbench_memory_observations m) x")" "791 799" \
   "all 799 observations share workload, implementation and environment with a speed run, 791 the protocol too (the CSV times swiglu's full pass not at all)"
ok "$(q "SELECT count(*) FROM kbench_memory_observations m JOIN kbench_workloads w ON w.digest = m.workload_digest
          JOIN kbench_implementations i ON i.digest = m.implementation_digest AND i.operation_digest = m.operation_digest
          JOIN kbench_protocols p ON p.digest = m.protocol_digest JOIN kbench_environments e ON e.digest = m.environment_digest
         WHERE w.operation_digest = m.operation_digest")" 799 "every observation's five digests are manifests in the catalog"

# ---- by hand from the CSV: fused_linear_cross_entropy, full, A100, liger against huggingface
H "WITH m AS (SELECT x_value::int AS bt, kernel_provider AS p, metric_name AS metric, y50 FROM csv
             WHERE kernel_name = 'fused_linear_cross_entropy' AND kernel_operation_mode = 'full' AND gpu_name LIKE 'NVIDIA A100%')
   SELECT hf.bt, (hf.y50 * 1048576)::bigint, (lg.y50 * 1048576)::bigint, round(lg.y50 / hf.y50, 9), round(shf.y50 / slg.y50, 6)
     FROM m hf JOIN m lg ON lg.bt = hf.bt AND lg.p = 'liger' AND lg.metric = 'memory'
     JOIN m shf ON shf.bt = hf.bt AND shf.p = 'huggingface' AND shf.metric = 'speed'
     JOIN m slg ON slg.bt = hf.bt AND slg.p = 'liger' AND slg.metric = 'speed'
    WHERE hf.p = 'huggingface' AND hf.metric = 'memory' ORDER BY hf.bt" | tr '|' ' ' >"$TMP/flce.txt"
ok "$(cat "$TMP/flce.txt" | tr '\n' ';')" \
   "4096 6388220928 4451779584 0.696873141 0.460896;8192 9607382016 4683957248 0.487537317 0.668560;16384 16045704192 5148967936 0.320893859 0.796717;32768 28922347520 6076105728 0.210083422 0.885352;" \
   "by hand from the CSV: FLCE full on the A100, huggingface and liger peak bytes, liger/huggingface memory and speed ratios"
ok "$(q "SELECT string_agg(concat_ws(' ', axes->>'tokens', baseline_peak_bytes, candidate_peak_bytes, round(memory_ratio::numeric, 9), round(speedup::numeric, 6)), ';' ORDER BY (axes->>'tokens')::int) || ';'
          FROM kbench_memory_ratio('fused_linear_cross_entropy', 'huggingface', 'liger', 'full', 'A100')")" \
   "$(cat "$TMP/flce.txt" | tr '\n' ';')" "kbench_memory_ratio (FLCE, huggingface -> liger, full, A100) equals the hand computation, speedup beside it"
ok "$(q "SELECT string_agg(concat_ws(' ', axes->>'tokens', regexp_replace(implementation, '.*-', ''), peak_bytes, rank, leader, vs_leader), ';' ORDER BY (axes->>'tokens')::int, rank)
          FROM kbench_memory_records WHERE operation = 'liger-fused-linear-cross-entropy' AND mode = 'full' AND product = 'NVIDIA A100'")" \
   "$(awk '{printf "%s liger %s 1 t 1.000;%s huggingface %s 2 f %.3f;", $1, $3, $1, $2, $2 / $3}' "$TMP/flce.txt" | sed 's/;$//')" \
   "kbench_memory_records: liger holds every FLCE full A100 memory record, huggingface ranks 2 at the hand-computed multiple"
ok "$(q "SELECT (SELECT count(*) FROM kbench_memory_records) || ' ' || count(*) || ' ' || count(*) FILTER (WHERE (r.*)::text IN (SELECT (v.*)::text FROM kbench_memory_records v))
          FROM kbench_operations o, kbench_memory_records_of(o.digest) r")" "692 692 692" \
   "kbench_memory_records_of(operation) over every operation gives the view's 692 records, row for row"
ok "$(q "SELECT string_agg(DISTINCT operation_key || ' ' || device_key, ',') FROM kbench_memory_records
          WHERE operation = 'liger-fused-linear-cross-entropy' AND product = 'NVIDIA A100'")" "fused_linear_cross_entropy a100" \
   "kbench_memory_records names the operation and the device by their short names too (operation_key, device_key)"
ok "$(q "SELECT count(*) FROM kbench_memory WHERE operation_key IS NULL OR device_key IS NULL")" 0 \
   "kbench_memory gives operation_key and device_key on every row, observations and runs alike"
ok "$(q "SELECT count(*) FROM kbench_memory_records_of('fused_linear_cross_entropy', 'full', 'A100')")" 8 \
   "kbench_memory_records_of('fused_linear_cross_entropy', ...) answers by short name from the imported rows"
ok "$(q "SELECT round(geomean_memory_ratio::numeric, 6) FROM kbench_memory_ratio_summary('fused_linear_cross_entropy', 'huggingface', 'liger', 'full', 'A100')")" \
   "$(awk '{s += log($4)} END {printf "%.6f", exp(s / NR)}' "$TMP/flce.txt")" "kbench_memory_ratio_summary: the geometric mean of the hand-computed ratios"
ok "$(q "SELECT round(min_memory_ratio::numeric, 6) || ' ' || round(max_memory_ratio::numeric, 6) || ' ' || workloads FROM kbench_memory_ratio_summary('fused_linear_cross_entropy', 'huggingface', 'liger', 'full', 'A100')")" \
   "$(awk 'NR == 1 || $4 < lo {lo = $4} NR == 1 || $4 > hi {hi = $4} END {printf "%.6f %.6f %d", lo, hi, NR}' "$TMP/flce.txt")" \
   "kbench_memory_ratio_summary: the least and the greatest of the hand-computed ratios (they differ), and their count"
# ... in the order it documents, device then protocol then dtype: SwiGLU's three passes on the
# RTX 4090 (the Liger CSV measures its memory forward, backward and full there, full only on the A100)
ok "$(q "SELECT string_agg(split_part(device, ' ', -1) || ' ' || split_part(protocol, '-', -1) || ' ' || workloads, ', ' ORDER BY n)
          FROM kbench_memory_ratio_summary('swiglu', 'huggingface', 'liger') WITH ORDINALITY s(protocol, device, dtype, workloads, g, lo, hi, sp, n)")" \
   "SXM4-80GB full 4, 4090 backward 5, 4090 forward 5, 4090 full 5" \
   "kbench_memory_ratio_summary over every pass: ordered by device, then protocol (three on the RTX 4090)"
ok "$(q "SELECT string_agg(axis_value || ':' || peak_bytes, ',' ORDER BY axis_value) FROM kbench_memory_sweep('fused_linear_cross_entropy', 'full', 'tokens', 'A100', 'liger')")" \
   "$(awk '{printf "%s%s:%s", (NR > 1 ? "," : ""), $1, $3}' "$TMP/flce.txt")" "kbench_memory_sweep: liger's peak along tokens"

# ---- a run's peak_memory measurement beside the imported rows
run=$(q "SELECT jsonb_set(jsonb_set(jsonb_set(manifest, '{spec,measurements}',
            '[{\"metric\": \"peak_memory\", \"unit\": \"bytes\", \"statistic\": \"max\", \"value\": 4000000000}]'),
            '{spec,sourceNative,externalId}', '\"hand-made/peak-memory\"'), '{spec,observedAt}', '\"2026-01-01T00:00:00.000Z\"')
          FROM kbench_runs WHERE external_id LIKE 'fused_linear_cross_entropy/full/liger/nvidia-a100%/hidden4096-tokens4096-%'")
digest=$(q "SELECT digest FROM kbench_ingest('$run'::json) WHERE kind = 'BenchmarkRun'")
ok "$(q "SELECT origin || ' ' || peak_bytes || ' ' || (ref = '$digest') || ' ' || rank || ' ' || leader FROM kbench_memory_records
          WHERE operation = 'liger-fused-linear-cross-entropy' AND mode = 'full' AND product = 'NVIDIA A100'
            AND axes->>'tokens' = '4096' AND implementation LIKE '%-liger'")" "run 4000000000 true 1 true" \
   "a run carrying peak_memory (bytes) joins the imported observations of its cohort and takes the record"
ok "$(q "SELECT candidate_peak_bytes || ' ' || (candidate_ref = '$digest') FROM kbench_memory_ratio('fused_linear_cross_entropy', 'huggingface', 'liger', 'full', 'A100') WHERE axes->>'tokens' = '4096'")" \
   "4000000000 true" "kbench_memory_ratio reads the run's peak_memory too"
q "SELECT kbench_retract('$digest', 'a test run')" >/dev/null
ok "$(q "SELECT count(*) FROM kbench_memory WHERE ref = '$digest'")" 0 "a retracted run's peak_memory no longer counts"

# ---- a run the worker makes on the CPU, when it carries peak_memory (issue 15 item 2, the
# "byo" branch): it joins the memory analytics.  Until runs carry it this prints a skip, which
# counts as nothing.
job=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 64, \"hidden\": 256, \"dtype\": \"fp32\"}',
          protocol => '{\"warmup_ms\": 0, \"rep_ms\": 0.01, \"flush_bytes\": 0, \"max_samples\": 3}')")
q "SELECT status FROM kbench_wait($job, '60 seconds')" >/dev/null
run=$(q "SELECT run_digest FROM kbench_jobs WHERE id = $job AND status = 'passed'")
peak=$(q "SELECT round(value)::bigint FROM kbench_measurements WHERE run_digest = '$run' AND metric = 'peak_memory' AND unit = 'bytes' ORDER BY ordinal LIMIT 1")
if [ -z "$run" ]; then
  echo "not ok - the worker runs a CPU job (job $job: $(q "SELECT status || ' ' || coalesce(error, '') FROM kbench_jobs WHERE id = $job"))"
elif [ -z "$peak" ]; then
  echo "# skip: the worker's runs carry no peak_memory measurement yet (issue 15 item 2)"
else
  ok "$(q "SELECT origin || ' ' || peak_bytes || ' ' || rank FROM kbench_memory_records WHERE ref = '$run'")" "run $peak 1" \
     "a CPU run of the worker carries peak_memory ($peak bytes) and holds its cohort's memory record"
  ok "$(q "SELECT count(*) FROM kbench_memory_records_of('layer_norm', 'forward') WHERE ref = '$run'")" 1 \
     "kbench_memory_records_of('layer_norm', 'forward', ...) finds it by name"
fi

# ---- append-only
for stmt in "UPDATE kbench_memory_observations SET p50_bytes = 1" "DELETE FROM kbench_memory_observations" \
            "TRUNCATE kbench_memory_observations"; do
  out=$(q "$stmt" 2>&1)
  case "$out" in *"append-only"*) echo "ok - refused: $stmt";; *) echo "not ok - refused: $stmt ($out)";; esac
done
ok "$(q "SELECT count(*) FROM kbench_memory_observations")" 799 "the observations are all still there"

# ---- export and import: lossless, byte for byte
q "SELECT l FROM kbench_export_catalog() l" >"$TMP/export1.jsonl"
ok "$(grep -c '"table": "memory_observations"' "$TMP/export1.jsonl")" 799 "the export carries 799 memory_observations rows"
chmod 644 "$TMP/export1.jsonl"
ok "$(DB=dst q "SELECT lines - inserted || ' ' || rejected FROM kbench_import_catalog('$TMP/export1.jsonl')")" "0 0" \
   "the export imports into an empty database: every line new, none rejected"
ok "$(DB=dst q "SELECT memory_inserted || ' ' || memory_present || ' ' || memory_rejected FROM kbench_imports ORDER BY id DESC LIMIT 1")" \
   "799 0 0" "the catalog import counts 799 memory observations imported"
fp="SELECT md5(string_agg(concat_ws('|', source, external_id, operation_digest, workload_digest, implementation_digest,
      protocol_digest, environment_digest, pass, p50_bytes, p20_bytes, p80_bytes, liger_version, observed_at, source_line), ',' ORDER BY source, external_id))
    FROM kbench_memory_observations"
ok "$(DB=dst q "$fp")" "$(q "$fp")" "every memory observation comes back with every column"
DB=dst q "SELECT l FROM kbench_export_catalog() l" >"$TMP/export2.jsonl"
ok "$(md5sum <"$TMP/export2.jsonl")" "$(md5sum <"$TMP/export1.jsonl")" "export -> import -> export gives the same bytes"
ok "$(DB=dst q "SELECT present || ' ' || inserted FROM kbench_import_catalog('$TMP/export1.jsonl')")" "$(wc -l <"$TMP/export1.jsonl") 0" \
   "importing the export again adds nothing"

# ---- bad memory rows of an export are rejected with reasons
line=$(grep -m1 '"table": "memory_observations"' "$TMP/export1.jsonl")
bad() {	# one export line edited: $1 an SQL expression over the line as jsonb d
  psql -X -At -q -v ON_ERROR_STOP=1 -d src -v line="$line" <<<"SELECT ($1)::text FROM (SELECT :'line'::jsonb AS d) x"
}
{
  bad "d #- '{row,p50Bytes}'"
  bad "jsonb_set(d, '{row,p50Bytes}', '1.5')"
  bad "jsonb_set(d, '{row,p20Bytes}', '\"12\"')"
  bad "jsonb_set(d, '{row,p80Bytes}', '-3')"
  bad "jsonb_set(d, '{row,pass}', '\"sideways\"')"
  bad "jsonb_set(d, '{row,observedAt}', '\"2024-09-03 15:31:42\"')"
  bad "jsonb_set(d, '{row,workloadDigest}', '\"sha256:abc\"')"
  bad "jsonb_set(d, '{row,protocolDigest}', to_jsonb('sha256:' || repeat('0', 64)))"
  bad "jsonb_set(d, '{row,environment,spec,hardware,product}', '\"Another GPU\"')"
  bad "jsonb_set(jsonb_set(d, '{row,externalId}', '\"new/one\"'), '{row,p50Bytes}', '100000000000000000000')"
  bad "jsonb_set(d, '{row,operationDigest}', to_jsonb('sha256:' || repeat('1', 64)))"
  bad "jsonb_set(jsonb_set(d, '{row,pass}', '\"forward\"'), '{row,externalId}', '\"new/two\"')"
  bad "jsonb_set(d, '{row,protocol}', jsonb_build_object('run', d->'row'->'protocol'))"
  # digests the table's CHECK refuses: upper case, 65 and 63 digits, a newline after 64
  bad "jsonb_set(d, '{row,workloadDigest}', to_jsonb('sha256:' || repeat('A', 64)))"
  bad "jsonb_set(d, '{row,workloadDigest}', to_jsonb('sha256:' || repeat('a', 65)))"
  bad "jsonb_set(d, '{row,implementationDigest}', to_jsonb('sha256:' || repeat('a', 63)))"
  bad "jsonb_set(d, '{row,implementationDigest}', to_jsonb('sha256:' || repeat('a', 64) || E'\\n'))"
} >"$TMP/bad.jsonl"
chmod 644 "$TMP/bad.jsonl"
ok "$(DB=dst q "SELECT lines || ' ' || rejected || ' ' || inserted FROM kbench_import_catalog('$TMP/bad.jsonl')")" "17 17 0" \
   "17 bad memory_observations rows: all rejected, nothing stored"
DB=dst q "SELECT line || ': ' || reason FROM kbench_import_rejections WHERE import_id = (SELECT max(id) FROM kbench_imports) ORDER BY line" >"$TMP/reasons.txt"
n=0
for want in "needs p50Bytes (a whole number)" "needs p50Bytes (a whole number)" "needs p20Bytes (a whole number)" \
            "violates check constraint" "pass sideways, but its protocol" "is not an ISO 8601 UTC instant with milliseconds" \
            "violates check constraint" "digest mismatch: protocolDigest" "digest mismatch: environmentDigest" "out of range" \
            "its workload is of operation sha256:14cde8c6" "pass forward, but its protocol liger-bench-do-bench-full times full" \
            "protocol is not a BenchmarkProtocol manifest" "violates check constraint" "violates check constraint" \
            "violates check constraint" "violates check constraint"; do
  n=$((n + 1))
  got=$(sed -n "${n}p" "$TMP/reasons.txt")
  case "$got" in "$n: "*"$want"*) echo "ok - bad row $n rejected: $want";; *) echo "not ok - bad row $n rejected: $want (got '$got')";; esac
done
ok "$(DB=dst q "SELECT memory_rejected FROM kbench_imports ORDER BY id DESC LIMIT 1")" 17 "the report counts them as rejected memory observations"

# ---- bad memory rows of a Liger CSV are rejected with reasons, not dropped
hdr=$(head -1 "$CSV")
printf '%s\n%s\n%s\n%s\n' "$hdr" \
  'cross_entropy,liger,full,memory,GB,V,vocab size,4096,1,1,1,"{""B"": 8, ""T"": 2048}",NVIDIA A100-SXM4-80GB,2026-01-01 00:00:00,0.9.0' \
  'cross_entropy,liger,full,memory,MB,V,vocab size,4096,0.1,0.1,0.1,"{""B"": 8, ""T"": 2048}",NVIDIA A100-SXM4-80GB,2026-01-01 00:00:00,0.9.0' \
  'cross_entropy,liger,full,memory,MB,V,vocab size,4096,2,1,3,"{""B"": 8, ""T"": 2048}",NVIDIA A100-SXM4-80GB,2026-01-01 00:00:00,0.9.0' >"$TMP/bad.csv"
DB=dst q "SELECT FROM kbench_import_liger(pg_read_file('$TMP/bad.csv'))"
ok "$(DB=dst q "SELECT inserted || ' ' || skipped || ' ' || memory_inserted || ' ' || memory_rejected FROM kbench_imports ORDER BY id DESC LIMIT 1")" \
   "1 2 1 2" "a Liger CSV with two bad memory rows and a good one: 1 imported, 2 rejected and counted"
ok "$(DB=dst q "SELECT string_agg(line || ': ' || reason, '; ' ORDER BY line) FROM kbench_import_rejections WHERE import_id = (SELECT max(id) FROM kbench_imports)")" \
   "2: memory unit 'GB' is not MB; 3: memory '0.1' MiB is not a positive whole number of bytes below 2^53" "their reasons and lines are recorded"
ok "$(DB=dst q "SELECT p20_bytes || ' ' || p50_bytes || ' ' || p80_bytes FROM kbench_memory_observations WHERE liger_version = '0.9.0'")" \
   "1048576 2097152 3145728" "the good one: 1, 2, 3 MiB as bytes"

# ---- the analytics' errors
for c in "kbench_memory_records_of('no_such_op')|42704|unknown operation" \
         "kbench_memory_ratio('fused_linear_cross_entropy', 'nobody', 'liger')|42704|unknown baseline implementation" \
         "kbench_memory_ratio('fused_linear_cross_entropy', 'huggingface', 'liger', 'sideways')|42704|unknown mode" \
         "kbench_memory_records_of('fused_linear_cross_entropy', 'full', 'Z80')|42704|unknown environment" \
         "kbench_memory_sweep('fused_linear_cross_entropy', NULL, 'tokens')|22004|a mode is required" \
         "kbench_memory_sweep('fused_linear_cross_entropy', 'full', 'width')|42704|unknown axis" \
         "kbench_memory_records_of(NULL)|22004|an operation is required"; do
  IFS='|' read -r call code msg <<<"$c"
  out=$(psql -X -q -d src -v VERBOSITY=verbose -c "\\set VERBOSITY verbose" -c "SELECT * FROM $call" 2>&1 >/dev/null | head -1)
  case "$out" in *"$code"*"$msg"*) echo "ok - $call: $code $msg";; *) echo "not ok - $call: $code $msg (got '$out')";; esac
done

# ---- PUBLIC reads the memory analytics, writes nothing
q "CREATE ROLE reader LOGIN"
ok "$(psql -X -At -q -U reader -d src -c "SELECT count(*) FROM kbench_memory_records_of('fused_linear_cross_entropy', 'full', 'A100')")" 8 \
   "a role with no grants reads the memory records"
ok "$(psql -X -At -q -U reader -d src -c "SELECT memory_inserted FROM kbench_imports ORDER BY id LIMIT 1")" 799 \
   "a role with no grants reads an import's memory counts"
out=$(psql -X -At -q -U reader -d src -c "INSERT INTO kbench_memory_observations SELECT * FROM kbench_memory_observations LIMIT 1" 2>&1)
case "$out" in *"permission denied"*) echo "ok - a role with no grants cannot insert observations";; *) echo "not ok - a role with no grants cannot insert observations ($out)";; esac
# (_kernelindex.memory_export_row, IMMUTABLE, stays executable: kbench_export_catalog() is for every role)
ok "$(psql -X -At -q -U reader -d src -c "SELECT count(*) FROM kbench_export_catalog() l WHERE l LIKE '%\"table\": \"memory_observations\"}'")" 799 \
   "a role with no grants exports the memory observations"
for f in "_kernelindex.memory_import('{}')"; do
  out=$(psql -X -At -q -U reader -d src -c "SELECT $f" 2>&1)
  case "$out" in *"permission denied for function"*) echo "ok - not executable by PUBLIC: ${f%%(*}";; *) echo "not ok - not executable by PUBLIC: ${f%%(*} ($out)";; esac
done

# ---- pg_dump keeps them
pg_dump -Fc -d src -f "$TMP/src.dump" && createdb restored && pg_restore -d restored "$TMP/src.dump" 2>&1 | sed 's/^/# /'
ok "$(DB=restored q "$fp")" "$(q "$fp")" "pg_dump/pg_restore keeps every memory observation"

# ---- an updated 0.1.0 install: memory rows imported after the update (before it, the
# library serves no call of the install: test/suites/version_gate.sh)
# 0.1.0's install script is not kept in the tree: built from its commit (test/lib/released.sh),
# not left behind by another suite
source test/lib/released.sh
ki_install_released 0.1.0 || echo "# 0.1.0's install script could not be built"
createdb old && DB=old q "CREATE EXTENSION kernelindex VERSION '0.1.0'"
DB=old q "ALTER EXTENSION kernelindex UPDATE"
DB=old q "SELECT FROM kbench_import_liger(pg_read_file('$CSV'))"
ok "$(DB=old q "SELECT inserted || ' ' || present || ' ' || memory_inserted FROM kbench_imports ORDER BY id DESC LIMIT 1")" \
   "2448 0 799" "after ALTER EXTENSION UPDATE from 0.1.0, importing the CSV adds the 1649 runs and the 799 memory observations"
ok "$(DB=old q "$fp")" "$(q "$fp")" "the updated install's observations equal a fresh install's"
