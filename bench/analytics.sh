#!/usr/bin/env bash
# analytics.sh: time the records and regression queries on a synthetic
# history of 1,000,000 runs (bench/synthetic_history.sql), in a throwaway
# cluster.  Prints each query's time (best of 3, warm) and its
# EXPLAIN (ANALYZE, BUFFERS).  See docs/ANALYTICS.md for the results.
#   bench/analytics.sh                      build, install, run
#   KI_BENCH_SKIP_SETUP=1 bench/analytics.sh    use what is installed
#   KI_PGBIN=/path/to/bin bench/analytics.sh    another PostgreSQL 15
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${KI_BENCH_SKIP_SETUP:-}" ] || bin/setup.sh
source bin/pgcluster.sh
[ -z "${KI_PGBIN:-}" ] || PGBIN=$KI_PGBIN
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "shared_buffers = '2GB'" "work_mem = '64MB'"
trap ki_cluster_stop EXIT
export PATH="$PGBIN:$PATH"
psql -q -c "CREATE DATABASE bench"
export PGDATABASE=bench
psql -q -c "CREATE EXTENSION kernelindex"
echo "== loading 1,000,000 synthetic runs"
start=$(date +%s)
psql -q -f bench/synthetic_history.sql
echo "loaded in $(( $(date +%s) - start )) s"

queries=(
  "records of one operation|SELECT * FROM kbench_records WHERE operation = 'bench-op-07'"
  "records: every cohort's leader|SELECT * FROM kbench_records WHERE leader"
  "records: kbench_leaders (every cohort's record)|SELECT * FROM kbench_leaders"
  "records: all (20,000 bests)|SELECT * FROM kbench_records"
  "record history of one cohort|SELECT * FROM kbench_record_history_of(kbench_cohort_of('sha256:' || md5('bench/7/3/forward/NVIDIA H100/0/10') || md5('bench/7/3/forward/NVIDIA H100/0/10' || '/2')))"
  "regressions percent, one cohort family (250 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'percent', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions zscore, one cohort family (250 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'zscore', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions ttest, one cohort family (250 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'ttest', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions mwu, one cohort family (250 runs x 64 samples)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'mwu', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions percent, one family on one device and pass (2,500 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'percent')"
  "regressions zscore, one family on one device and pass (2,500 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'zscore')"
  "regressions ttest, one family on one device and pass (2,500 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'ttest')"
  "regressions zscore, one family everywhere (10,000 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', method => 'zscore')"
  "speedup, one operation|SELECT * FROM kbench_speedup('bench-op-07', 'bench-op-07-impl-0', 'bench-op-07-impl-2')"
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
  psql -X -q -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $sql" | sed 's/^/    /'
done
