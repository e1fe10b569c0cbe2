#!/usr/bin/env bash
# demo.sh: the main job, on a fresh Debian 12 machine.
# Installs what is missing, builds, starts a throwaway PostgreSQL with
# kernelindex preloaded, checks the three seed documents' digests, imports
# the real Liger-Kernel history, runs benchmark jobs through the background
# worker on the best device present (a GPU when there is one, else the CPU),
# and prints how they compare with what Liger reported for the same
# workloads, and writes the HTML report of it all to kernelindex-report.html
# ($KI_REPORT).  --keep leaves the server running (it prints how to connect).
# --agent also starts one `kbench agent` beside the worker (docs/FLEET.md):
# the last job of step 3 runs through it (device => 'agent:demo-agent').
set -euo pipefail
cd "$(dirname "$0")/.."
keep=false; agent=false
for a in "$@"; do
  case "$a" in
    --keep) keep=true ;;
    --agent) agent=true ;;
    *) echo "usage: bin/demo.sh [--keep] [--agent]" >&2; exit 2 ;;
  esac
done
bash bin/setup.sh
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
agent_pid=""
stop_agent() { [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; agent_pid=""; }
if $keep; then trap 'stop_agent' EXIT; else trap 'stop_agent; ki_cluster_stop' EXIT; fi
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kernelindex'"
createdb kernelindex
export PGDATABASE=kernelindex
psql() { command psql -X -q -v ON_ERROR_STOP=1 "$@"; }
psql -c "CREATE EXTENSION kernelindex"

echo
echo "== 1. The seed documents: canonical digests and consistency"
for f in test/data/seeds/*.json; do
  psql -At -F ' ' -v doc="$(cat "$f")" <<'SQL'
SELECT rpad(substr(d.run_digest, 1, 23) || '…', 26), 'protocol ' || substr(d.protocol_digest, 8, 12) || '…',
       'environment ' || substr(d.environment_digest, 8, 12) || '…',
       CASE WHEN (SELECT count(*) FROM kbench_validate_run(:'doc'::json)) = 0 THEN 'consistent' ELSE 'INCONSISTENT' END,
       (:'doc'::json)->'run'->'spec'->'sourceNative'->>'benchmark'
  FROM kbench_run_digests(:'doc'::json) d;
SQL
  echo "SELECT * FROM kbench_ingest(:'doc'::json, 'seed');" | psql -o /dev/null -v doc="$(cat "$f")"
done

echo
echo "== 2. The Liger-Kernel history (data/liger/all_benchmark_data.csv)"
psql <<'SQL'
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT lines, inserted AS imported, present AS already_there, skipped, rejected FROM kbench_import_liger(:'csv');
SELECT inserted - memory_inserted AS runs, memory_inserted AS memory_observations FROM kbench_imports ORDER BY id DESC LIMIT 1;
SQL
psql -c "SELECT count(*) AS runs, count(DISTINCT workload_digest) AS workloads, count(DISTINCT environment_digest) AS gpus,
                count(*) FILTER (WHERE cardinality(unresolved) > 0) AS unresolved FROM kbench_runs"

echo
echo "== 3. Benchmark jobs through the background worker"
if $agent; then
  # one kbench agent beside the worker: a GPU host without a database would run the same
  # command with --db pointing here (docs/FLEET.md); its role may only do what an agent does
  psql -c "CREATE ROLE demo_agent LOGIN IN ROLE kbench_agent"
  PGUSER=demo_agent kernels/kbench agent --name demo-agent --spool "$KI_CLUSTER_DIR/agent-spool" \
    2>"$KI_CLUSTER_DIR/agent.log" &
  agent_pid=$!
  for _ in $(seq 1 100); do
    [ "$(command psql -X -At -c "SELECT count(*) FROM kbench_agent_status WHERE name = 'demo-agent' AND state = 'alive'")" = 1 ] && break
    sleep 0.1
  done
fi
psql -c "SELECT kind, device, product, state FROM kbench_workers"
device=$(command psql -X -At -c "SELECT device FROM kbench_workers WHERE device LIKE 'cuda:%' AND product NOT LIKE 'unavailable%' ORDER BY device LIMIT 1")
if [ -n "$device" ]; then
  proto='{}'     # the full protocol: 25 ms warm-up, 100 ms of samples, 256 MiB L2 flush
  jobs=(
    "layer_norm|backward|{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}"
    "megatron_cross_entropy|backward|{\"batch\": 4, \"seq\": 2048, \"vocab\": 131072, \"dtype\": \"bf16\"}"
    "distill_jsd_loss|forward|{\"tokens\": 8192, \"hidden\": 4096, \"vocab\": 128256, \"dtype\": \"bf16\"}"
    "jsd|forward|{\"tokens\": 8192, \"vocab\": 128256, \"dtype\": \"fp32\"}"
  )
else
  device=cpu
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
for i in "${!jobs[@]}"; do
  IFS='|' read -r op mode wl <<<"${jobs[$i]}"
  on=$device
  # with --agent the last job runs on the agent's own best device
  if $agent && [ "$i" -eq $((${#jobs[@]} - 1)) ]; then on=agent:demo-agent; fi
  psql -c "CALL kbench_bench('$op', '$mode', '$wl', device => '$on', protocol => '$proto')" \
    | sed -n '1,3p' | cut -c1-160
done
if $agent; then
  psql -c "SELECT id, operation, mode, device, coalesce(agent, 'worker') AS ran_on, status FROM kbench_jobs ORDER BY id"
  echo "(the agent's log: $KI_CLUSTER_DIR/agent.log)"
fi

echo
echo "== 4. Our runs beside what Liger reported for the same workload (same workload digest)"
psql <<'SQL'
SELECT o.name AS operation, j.mode, w.name AS workload, e.product AS device,
       round(r.median_ns / 1e3, 1) AS our_median_us,
       round((r.manifest->'spec'->'sourceNative'->'metrics'->>'achieved_gb_per_s')::numeric, 1) AS our_gb_s,
       (SELECT string_agg(format('%s %s µs (%s)', split_part(i2.name, '-', array_length(string_to_array(i2.name, '-'), 1)),
                                 round(r2.median_ns / 1e3, 1), e2.product), '; ' ORDER BY r2.median_ns)
          FROM kbench_runs r2 JOIN kbench_implementations i2 ON i2.digest = r2.implementation_digest
          JOIN kbench_environments e2 ON e2.digest = r2.environment_digest
          JOIN kbench_protocols p2 ON p2.digest = r2.protocol_digest
         WHERE r2.workload_digest = r.workload_digest AND r2.source = 'liger-kernel-bench'
           AND p2.name = 'liger-bench-do-bench-' || CASE WHEN j.mode = 'full' THEN 'full' WHEN j.mode = 'forward' THEN 'forward' ELSE 'backward' END
           AND r2.status = 'passed') AS liger_reported
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
  JOIN kbench_workloads w ON w.digest = r.workload_digest
  JOIN kbench_operations o ON o.digest = w.operation_digest
  JOIN kbench_environments e ON e.digest = r.environment_digest
 ORDER BY j.id;
SQL
echo "(Liger's numbers are GPU runs from its CSV; where our device is the CPU, the comparison shows the"
echo " gap a GPU closes, not a contest. Every run above is in kbench_runs with its raw samples.)"

echo
echo "== 5. What the Liger history says"
psql <<'SQL'
-- Liger against Transformers (huggingface) on LayerNorm, per pass and GPU: geometric mean over the hidden sizes
SELECT protocol AS pass, device, dtype, workloads, round(geomean_speedup::numeric, 2) AS geomean_speedup,
       round(min_speedup::numeric, 2) AS min, round(max_speedup::numeric, 2) AS max
  FROM kbench_speedup_summary('layer_norm', 'huggingface', 'liger');
-- the records: the implementations that lead the most cohorts (operation, workload, pass, GPU)
SELECT implementation, count(*) AS cohorts_led, count(*) FILTER (WHERE cardinality(tied_implementations) > 0) AS shared
  FROM kbench_leaders GROUP BY 1 ORDER BY 2 DESC LIMIT 8;
SQL

echo
report=${KI_REPORT:-$(pwd)/kernelindex-report.html}
command psql -X -At -q -v ON_ERROR_STOP=1 -c "SELECT kbench_report(title => 'kernelindex: the Liger-Kernel history and our runs')" >"$report"
echo "== 6. The report (kbench_report(), docs/REPORTS.md): $report"

if $keep; then
  echo
  echo "The server keeps running: PGHOST=$PGHOST PGPORT=$PGPORT PGUSER=$PGUSER psql kernelindex"
fi
