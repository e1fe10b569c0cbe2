#!/usr/bin/env bash
# analytics.sh: time the records and regression queries on synthetic
# histories of N runs each (bench/synthetic_history.sql), in a throwaway
# cluster.  Prints each query's time (best of 3, warm) and its
# EXPLAIN (ANALYZE, BUFFERS) at each size, then one table of every query at
# every size with the growth ratio (largest over smallest; 1.0: flat in the
# history's size).  See docs/ANALYTICS.md for the results.
#   bench/analytics.sh                         1,000,000 runs; build, install, run
#   bench/analytics.sh --runs 1000000,3000000,10000000
#   KI_BENCH_SKIP_SETUP=1 bench/analytics.sh    use what is installed
#   KI_PGBIN=/path/to/bin bench/analytics.sh    another PostgreSQL 15
# The history grows by points per series (N / 4,000: 1,000 cohorts of 4
# implementation families), so records, leaders and every cohort's bests
# stay the same rows at every size (20,000 bests, 1,000 leaders): a leader
# query that grows with N is reading history it need not.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=1000000 explain=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) sizes=${2:?--runs needs N[,N...]}; shift 2;;
    --no-explain) explain=; shift;;
    *) echo "usage: bench/analytics.sh [--runs N[,N...]] [--no-explain]" >&2; exit 2;;
  esac
done
IFS=, read -r -a sizes <<<"$sizes"
for n in "${sizes[@]}"; do
  if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 20000 ] || [ $((n % 20000)) -ne 0 ]; then
    echo "analytics.sh: --runs takes multiples of 20000 (1,000 cohorts x 4 families x N/4000 points, in 5 versions), not $n" >&2; exit 2
  fi
done
[ -n "${KI_BENCH_SKIP_SETUP:-}" ] || bin/setup.sh
source bin/pgcluster.sh
[ -z "${KI_PGBIN:-}" ] || PGBIN=$KI_PGBIN
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "shared_buffers = '2GB'" "work_mem = '64MB'" \
                 "max_wal_size = '8GB'" "checkpoint_timeout = '30min'"
trap ki_cluster_stop EXIT
export PATH="$PGBIN:$PATH"
RES=$(mktemp /tmp/kernelindex-analytics.XXXXXX)
queries=(
  "records of one operation|SELECT * FROM kbench_records WHERE operation = 'bench-op-07'"
  "records: every cohort's leader|SELECT * FROM kbench_records WHERE leader"
  "records: kbench_leaders (every cohort's record)|SELECT * FROM kbench_leaders"
  "records: all (20,000 bests)|SELECT * FROM kbench_records"
  "record history of one cohort|SELECT * FROM kbench_record_history_of(kbench_cohort_of('sha256:' || md5('bench/7/3/forward/NVIDIA H100/0/1') || md5('bench/7/3/forward/NVIDIA H100/0/1' || '/2')))"
  "regressions percent, one cohort family (N/4000 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'percent', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions zscore, one cohort family (N/4000 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'zscore', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions ttest, one cohort family (N/4000 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'ttest', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions mwu, one cohort family (N/4000 runs x 64 samples)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'mwu', in_workload => 'bench-op-01-rows4096-hidden512-fp32')"
  "regressions percent, one family on one device and pass (N/400 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'percent')"
  "regressions zscore, one family on one device and pass (N/400 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'zscore')"
  "regressions ttest, one family on one device and pass (N/400 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', mode => 'forward', environment => 'NVIDIA H100', method => 'ttest')"
  "regressions zscore, one family everywhere (N/100 points)|SELECT * FROM kbench_regressions('bench-op-01-impl-1', method => 'zscore')"
  "resolve_run, a whole run digest|SELECT _kernelindex.resolve_run('sha256:' || md5('bench/7/3/forward/NVIDIA H100/0/1') || md5('bench/7/3/forward/NVIDIA H100/0/1' || '/2'))"
  "resolve_run, a 16-digit prefix|SELECT _kernelindex.resolve_run(substr('sha256:' || md5('bench/7/3/forward/NVIDIA H100/0/1'), 1, 23))"
  "speedup, one operation|SELECT * FROM kbench_speedup('bench-op-07', 'bench-op-07-impl-0', 'bench-op-07-impl-2')"
)
for n in "${sizes[@]}"; do
  db=bench_$n
  psql -q -d postgres -c "CREATE DATABASE $db"
  export PGDATABASE=$db
  psql -q -c "CREATE EXTENSION kernelindex"
  echo "== loading $n synthetic runs ($((n / 4000)) points a series)"
  start=$(date +%s)
  psql -q -v points=$((n / 4000)) -f bench/synthetic_history.sql
  echo "loaded in $(( $(date +%s) - start )) s"
  for entry in "${queries[@]}"; do
    title=${entry%%|*}
    sql=${entry#*|}
    echo
    echo "== $title ($n runs)"
    echo "$sql;"
    best=""
    for i in 1 2 3; do
      ms=$(psql -X -q -At -c '\timing on' -c "SELECT count(*) FROM ($sql) q" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
      echo "  run $i: $ms ms ($(psql -X -q -At -c "SELECT count(*) FROM ($sql) q") rows)"
      if [ -z "$best" ] || awk "BEGIN{exit !($ms < $best)}"; then best=$ms; fi
    done
    echo "  best: $best ms"
    printf '%s\t%s\t%s\n' "$n" "$title" "$best" >>"$RES"
    [ -z "$explain" ] || psql -X -q -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) $sql" | sed 's/^/    /'
  done
  psql -q -d postgres -c "DROP DATABASE $db"
done
echo
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), best of 3 warm calls (ms)"
python3 - "$RES" "${sizes[@]}" <<'PY'
import sys
rows, sizes = {}, sys.argv[2:]
order = []
for line in open(sys.argv[1], encoding="utf-8"):
    n, title, ms = line.rstrip("\n").split("\t")
    if title not in rows:
        rows[title] = {}
        order.append(title)
    rows[title][n] = float(ms)
w = max(len(t) for t in order)
print("%-*s %s %8s" % (w, "query", " ".join("%12s" % ("%g runs" % int(n) if int(n) < 1000000 else "%gM runs" % (int(n) / 1e6)) for n in sizes), "growth"))
for t in order:
    r = rows[t]
    g = r[sizes[-1]] / r[sizes[0]] if len(sizes) > 1 and r.get(sizes[0]) else float("nan")
    print("%-*s %s %8s" % (w, t, " ".join("%12.3f" % r[n] for n in sizes), "%.2fx" % g if len(sizes) > 1 else "-"))
PY
rm -f "$RES"
