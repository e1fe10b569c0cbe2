#!/usr/bin/env bash
# continuous.sh: the cost of alert maintenance and the change-point, gate and
# alert queries on the synthetic history of 1,000,000 runs
# (bench/synthetic_history.sql, loaded with the alerts trigger off), in a
# throwaway cluster.  Not a test.  See docs/PERFORMANCE.md for the results.
#   bench/continuous.sh                      build, install, run
#   KI_BENCH_SKIP_SETUP=1 bench/continuous.sh    use what is installed
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${KI_BENCH_SKIP_SETUP:-}" ] || bin/setup.sh
source bin/pgcluster.sh
[ -z "${KI_PGBIN:-}" ] || PGBIN=$KI_PGBIN
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "shared_buffers = '2GB'" "work_mem = '64MB'"
trap ki_cluster_stop EXIT
export PATH="$PGBIN:$PATH"

# The Liger import (1,649 runs, one kbench__store INSERT each) into an empty
# catalog, the alerts trigger with the default rules on, and off, in turns.
chmod a+r data/liger/all_benchmark_data.csv 2>/dev/null || true
echo "== Liger import, alerts trigger on (default rules) and off, 4 times each"
for t in 1 2 3 4; do
  for mode in on off; do
    psql -q -d postgres -c "DROP DATABASE IF EXISTS liger" -c "CREATE DATABASE liger"
    psql -q -d liger -c "CREATE EXTENSION kernelindex"
    [ "$mode" = off ] && psql -q -d liger -c "ALTER TABLE kbench_runs DISABLE TRIGGER alerts"
    ms=$(psql -X -q -At -d liger -c '\timing on' -c "SELECT inserted FROM kbench_import_liger(pg_read_file('$(pwd)/data/liger/all_benchmark_data.csv'))" |
         sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    echo "  $mode, pass $t: $ms ms, $(psql -X -At -d liger -c "SELECT count(*) FROM kbench_alerts") alerts"
  done
done
psql -q -d postgres -c "DROP DATABASE liger"

psql -q -c "CREATE DATABASE bench"
export PGDATABASE=bench
psql -q -c "CREATE EXTENSION kernelindex"
echo "== loading 1,000,000 synthetic runs (alerts trigger off)"
start=$(date +%s)
psql -q -f bench/synthetic_history.sql
echo "loaded in $(( $(date +%s) - start )) s"

# Alert maintenance: 200 new runs, one INSERT each (as kbench__store stores
# them), each the next point of a series of bench-op-11..17 (every family,
# two workloads, both passes and devices; 250 points before it), the
# records trigger on; the alerts trigger off and on in turns.
land() {  # tag trigger(on|off)
  psql -X -q -At <<SQL
\set ON_ERROR_STOP on
ALTER TABLE kbench_runs $( [ "$2" = on ] && echo ENABLE || echo DISABLE ) TRIGGER alerts;
\timing on
DO \$\$
DECLARE s record;
BEGIN
  FOR s IN SELECT w.digest AS wd, p.digest AS pd, e.digest AS ed, i.digest AS id, w.name || '/' || p.name || '/' || e.name || '/' || i.name || '/$1' AS k
             FROM kbench_workloads w JOIN kbench_operations o ON o.digest = w.operation_digest
             JOIN kbench_implementations i ON i.operation_digest = o.digest AND i.version = '5.0'
             CROSS JOIN kbench_protocols p CROSS JOIN kbench_environments e
            WHERE o.name BETWEEN 'bench-op-11' AND 'bench-op-17' AND p.name LIKE 'bench-protocol-%'
              AND (w.name LIKE '%-hidden512-%' OR w.name LIKE '%-hidden1024-%')
            ORDER BY 5 LIMIT 200 LOOP
    INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest, status,
                             observed_at, primary_statistic, primary_ns, median_ns, p20_ns, p80_ns, source, external_id, name, manifest)
    VALUES ('sha256:' || md5(s.k) || md5(s.k || '/2'), s.id, s.wd, s.pd, s.ed, 'passed', clock_timestamp(),
            'median', 100000, 100000, 99500, 100500, 'bench', s.k, s.k, jsonb_build_object('kind', 'BenchmarkRun', 'synthetic', true));
  END LOOP;
END \$\$;
SQL
}
echo
echo "== alert maintenance: 200 runs landing one INSERT each, default rules (percent, changepoint)"
for t in 1 2; do
  echo "  trigger off, pass $t: $(land off$t off | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p') ms"
  echo "  trigger on,  pass $t: $(land on$t on | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p') ms"
done
psql -X -q -c "SELECT kbench_alert_rule('bench-zscore', 'zscore'), kbench_alert_rule('bench-ttest', 'ttest')" >/dev/null
echo "== the same with four rules (and zscore, ttest over every series)"
for t in 3 4; do
  echo "  trigger off, pass $t: $(land off$t off | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p') ms"
  echo "  trigger on,  pass $t: $(land on$t on | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p') ms"
done
psql -X -q -At -c "SELECT 'alerts opened: ' || count(*) FROM kbench_alerts"

echo
echo "== kbench_alert_scan of a changepoint rule over one family (10,000 runs)"
psql -X -q -At -c "SELECT kbench_alert_rule('bench-cp', 'changepoint', implementation => 'bench-op-01-impl-1', confirm => false)" >/dev/null
psql -X -q -At -c '\timing on' -c "SELECT 'opened ' || kbench_alert_scan('bench-cp')"
psql -X -q -At -c "SELECT kbench_alert_rule('bench-pct', 'percent', implementation => 'bench-op-01-impl-1', confirm => false)" >/dev/null
psql -X -q -At -c '\timing on' -c "SELECT 'opened ' || kbench_alert_scan('bench-pct')"

queries=(
  "change points, one cohort family (250 points)|SELECT * FROM kbench_change_points('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "change points, one family on one device and pass (2,500 points)|SELECT * FROM kbench_change_points('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100')"
  "change points, one family everywhere (10,000 points)|SELECT * FROM kbench_change_points('bench-op-01-impl-1')"
  "change points, one operation everywhere (40,000 points)|SELECT * FROM kbench_change_points(NULL, 'bench-op-01')"
  "change points, one operation on one device and pass (10,000 points)|SELECT * FROM kbench_change_points(NULL, 'bench-op-01', 'forward', 'NVIDIA H100')"
  "alerts: kbench_alert_status, all|SELECT * FROM kbench_alert_status"
  "CI gate: kbench_check over everything|SELECT _kernelindex.gate_alerts(NULL, NULL, NULL, NULL, NULL)"
  "CI gate: kbench_check, one family on one device|SELECT _kernelindex.gate_alerts('bench-op-01-impl-1', NULL, NULL, 'NVIDIA H100', NULL)"
  "PR summary: kbench_summary_markdown, one family|SELECT length(kbench_summary_markdown('bench-op-01-impl-1'))"
)
for entry in "${queries[@]}"; do
  title=${entry%%|*}
  sql=${entry#*|}
  echo
  echo "== $title"
  echo "$sql;"
  best=""
  for i in 1 2 3; do
    ms=$(psql -X -q -At -c '\timing on' -c "SELECT count(*) FROM ($sql) q" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    echo "  run $i: $ms ms ($(psql -X -q -At -c "SELECT count(*) FROM ($sql) q") rows)"
    if [ -z "$best" ] || awk "BEGIN{exit !($ms < $best)}"; then best=$ms; fi
  done
  echo "  best: $best ms"
done
