#!/usr/bin/env bash
# memory.sh: time the memory analytics on the Liger history grown to about
# 200,000 memory observations (each of Liger's 799 copied 250 times into
# workloads of their own: same operation, implementation, pass and GPU) and
# about 100,000 runs carrying peak_memory (each Liger run copied 60 times
# into its own cohort, timed a little later), in a throwaway cluster.  Prints each query's time (best of 3, warm).  Not a
# test.  See docs/ANALYTICS.md, "Memory", for the results.
#   bench/memory.sh                          build, install, run
#   KI_BENCH_SKIP_SETUP=1 bench/memory.sh    use what is installed
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${KI_BENCH_SKIP_SETUP:-}" ] || bin/setup.sh
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
ki_cluster_start "shared_buffers = '512MB'" "work_mem = '64MB'" >/dev/null
trap ki_cluster_stop EXIT
psql -X -q -c "CREATE EXTENSION kernelindex"
psql -X -q -o /dev/null -c "SELECT * FROM kbench_import_liger(pg_read_file('$(pwd)/data/liger/all_benchmark_data.csv'))"
start=$(date +%s)
psql -X -q <<'SQL'
INSERT INTO kbench_memory_observations (source, external_id, operation_digest, workload_digest, implementation_digest,
                                        protocol_digest, environment_digest, pass, p50_bytes, p20_bytes, p80_bytes,
                                        liger_version, observed_at, source_line)
SELECT 'bench', m.external_id || '/' || g, m.operation_digest,
       'sha256:' || encode(sha256(convert_to(m.workload_digest || '/' || g, 'UTF8')), 'hex'),
       m.implementation_digest, m.protocol_digest, m.environment_digest, m.pass,
       m.p50_bytes + g, m.p20_bytes + g, m.p80_bytes + g, m.liger_version, m.observed_at, NULL
  FROM kbench_memory_observations m, generate_series(1, 250) g;
INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest, status,
                         observed_at, primary_statistic, primary_ns, median_ns, source, external_id, name, manifest)
SELECT 'sha256:' || encode(sha256(convert_to(r.digest || '/' || g, 'UTF8')), 'hex'), r.implementation_digest,
       r.workload_digest, r.protocol_digest, r.environment_digest, r.status, r.observed_at + g * interval '1 s',
       r.primary_statistic, r.primary_ns + g, r.median_ns + g, 'bench', r.external_id || '/' || g, r.name, r.manifest
  FROM kbench_runs r, generate_series(1, 60) g;
INSERT INTO kbench_measurements (run_digest, ordinal, metric, unit, statistic, value)
SELECT digest, 1, 'peak_memory', 'bytes', 'max', 1000 + (random() * 1e9)::bigint FROM kbench_runs WHERE source = 'bench';
ANALYZE;
SQL
echo "== $(psql -X -At -c "SELECT count(*) FROM kbench_memory_observations") memory observations and $(psql -X -At -c "SELECT count(*) FROM kbench_memory WHERE origin = 'run'") runs with peak_memory, loaded in $(( $(date +%s) - start )) s"

queries=(
  "kbench_memory_records_of one operation (FLCE: ~2,000 observations, ~1,000 runs)|SELECT * FROM kbench_memory_records_of('fused_linear_cross_entropy')"
  "kbench_memory_records_of one operation, pass and GPU|SELECT * FROM kbench_memory_records_of('fused_linear_cross_entropy', 'full', 'A100')"
  "kbench_memory_ratio, one operation (huggingface -> liger)|SELECT * FROM kbench_memory_ratio('fused_linear_cross_entropy', 'huggingface', 'liger')"
  "kbench_memory_sweep, one operation and pass|SELECT * FROM kbench_memory_sweep('cross_entropy', 'full', 'vocab')"
  "the view kbench_memory_records, every record|SELECT * FROM kbench_memory_records"
  "the view, filtered by operation name|SELECT * FROM kbench_memory_records WHERE operation = 'liger-fused-linear-cross-entropy'"
)
printf '%-64s %10s %8s\n' "query" "best ms" "rows"
for q in "${queries[@]}"; do
  name=${q%%|*}; sql=${q#*|}
  best=
  for i in 1 2 3 4; do
    out=$(psql -X -At -c "\\timing on" -c "SELECT count(*) FROM ($sql) x" 2>&1)
    rows=$(printf "%s\n" "$out" | sed -n 2p)
    ms=$(printf '%s\n' "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    [ "$i" -eq 1 ] && continue	# cold
    if [ -z "$best" ] || awk -v a="$ms" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$ms; fi
  done
  printf '%-64s %10s %8s\n' "$name" "$best" "$rows"
done
