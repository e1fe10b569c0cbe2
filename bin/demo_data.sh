#!/usr/bin/env bash
# demo_data.sh: loads the demo database into a running server (PGHOST, PGPORT,
# PGUSER, PGDATABASE set; kernelindex created there): the three seed documents,
# the Liger-Kernel history (data/liger/all_benchmark_data.csv) and, with
# --jobs DEVICE, a few benchmark jobs through the worker on DEVICE (small CPU
# shapes and a short protocol on 'cpu').  Used by bin/demo.sh, which prints
# what it loads, and by test/suites/docs.sh, which runs every documented
# example against it.  -q: print nothing but errors.
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=false; device=""
while [ $# -gt 0 ]; do
  case "$1" in
    -q) quiet=true ;;
    --jobs) device=$2; shift ;;
    *) echo "demo_data.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
say() { $quiet || echo "$@"; }
out() { if $quiet; then cat >/dev/null; else cat; fi; }

say
say "== 1. The seed documents: canonical digests and consistency"
for f in test/data/seeds/*.json; do
  psql -At -F ' ' -v doc="$(cat "$f")" <<'SQL' | out
SELECT rpad(substr(d.run_digest, 1, 23) || '…', 26), 'protocol ' || substr(d.protocol_digest, 8, 12) || '…',
       'environment ' || substr(d.environment_digest, 8, 12) || '…',
       CASE WHEN (SELECT count(*) FROM kbench_validate_run(:'doc'::json)) = 0 THEN 'consistent' ELSE 'INCONSISTENT' END,
       (:'doc'::json)->'run'->'spec'->'sourceNative'->>'benchmark'
  FROM kbench_run_digests(:'doc'::json) d;
SQL
  echo "SELECT * FROM kbench_ingest(:'doc'::json, 'seed');" | psql -o /dev/null -v doc="$(cat "$f")"
done

say
say "== 2. The Liger-Kernel history (data/liger/all_benchmark_data.csv)"
psql <<'SQL' | out
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT lines, inserted AS imported, present AS already_there, skipped, rejected FROM kbench_import_liger(:'csv');
SELECT inserted - memory_inserted AS runs, memory_inserted AS memory_observations FROM kbench_imports ORDER BY id DESC LIMIT 1;
SQL
psql -c "SELECT count(*) AS runs, count(DISTINCT workload_digest) AS workloads, count(DISTINCT environment_digest) AS gpus,
                count(*) FILTER (WHERE cardinality(unresolved) > 0) AS unresolved FROM kbench_runs" | out

[ -n "$device" ] || exit 0
say
say "== 3. Benchmark jobs through the background worker"
psql -c "SELECT device, product, state FROM kbench_workers" | out
if [ "$device" != cpu ]; then
  proto='{}'     # the full protocol: 25 ms warm-up, 100 ms of samples, 256 MiB L2 flush
  jobs=(
    "layer_norm|backward|{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}"
    "megatron_cross_entropy|backward|{\"batch\": 4, \"seq\": 2048, \"vocab\": 131072, \"dtype\": \"bf16\"}"
    "distill_jsd_loss|forward|{\"tokens\": 8192, \"hidden\": 4096, \"vocab\": 128256, \"dtype\": \"bf16\"}"
    "jsd|forward|{\"tokens\": 8192, \"vocab\": 128256, \"dtype\": \"fp32\"}"
  )
else
  # the C reference on the CPU: the LayerNorm seed workload itself, smaller
  # shapes for the others; a short protocol with no cache flush
  proto='{"warmup_ms": 10, "rep_ms": 1000, "flush_bytes": 0}'
  jobs=(
    "layer_norm|backward|{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}"
    "layer_norm|forward|{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}"
    "megatron_cross_entropy|backward|{\"batch\": 1, \"seq\": 256, \"vocab\": 32768, \"dtype\": \"bf16\"}"
    "jsd|forward|{\"tokens\": 512, \"vocab\": 32768, \"dtype\": \"fp32\"}"
  )
fi
for j in "${jobs[@]}"; do
  IFS='|' read -r op mode wl <<<"$j"
  psql -o /dev/null -c "CALL kbench_bench('$op', '$mode', '$wl', device => '$device', protocol => '$proto')"
done
# what ran, for people: the shape, the implementation, human times, the ratio to 3 digits
psql -c "SELECT id, operation, mode, shape, implementation, device, status, median, p20, p80, tolerance_ratio
           FROM kbench_job_status ORDER BY id" | out
