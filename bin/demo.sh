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
# one more job runs through it (device => 'agent:demo-agent').
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

device=$(command psql -X -At -c "SELECT device FROM kbench_workers WHERE device LIKE 'cuda:%' AND product NOT LIKE 'unavailable%' ORDER BY device LIMIT 1")
# 1. the seeds, 2. the Liger history, 3. jobs on the best device present
bash bin/demo_data.sh --jobs "${device:-cpu}"
if $agent; then
  # one kbench agent beside the worker: a GPU host without a database would run the same
  # command with --db pointing here (docs/FLEET.md); its role may only do what an agent does
  echo
  echo "== 3b. One job through a kbench agent"
  psql -c "CREATE ROLE demo_agent LOGIN IN ROLE kbench_agent"
  PGUSER=demo_agent kernels/kbench agent --name demo-agent --spool "$KI_CLUSTER_DIR/agent-spool" \
    2>"$KI_CLUSTER_DIR/agent.log" &
  agent_pid=$!
  for _ in $(seq 1 100); do
    [ "$(command psql -X -At -c "SELECT count(*) FROM kbench_agent_status WHERE name = 'demo-agent' AND state = 'alive'")" = 1 ] && break
    sleep 0.1
  done
  psql -o /dev/null -c "CALL kbench_bench('layer_norm', 'forward', '{\"rows\": 1024, \"hidden\": 1024, \"dtype\": \"fp32\"}', device => 'agent:demo-agent', protocol => '{\"warmup_ms\": 10, \"rep_ms\": 200, \"flush_bytes\": 0}')"
  psql -c "SELECT s.id, s.operation, s.mode, s.shape, s.implementation, s.device, coalesce(j.agent, 'worker') AS ran_on,
                  s.status, s.median, s.tolerance_ratio
             FROM kbench_job_status s JOIN kbench_jobs j USING (id) ORDER BY s.id"
  echo "(the agent's log: $KI_CLUSTER_DIR/agent.log)"
fi

echo
echo "== 4. Our runs beside what Liger reported for the same workload (same workload digest)"
psql <<'SQL'
SELECT o.name AS operation, j.mode, s.shape, s.implementation, e.product AS device,
       s.median AS our_median, s.tolerance_ratio,
       round((r.manifest->'spec'->'sourceNative'->'metrics'->>'achieved_gb_per_s')::numeric, 1) AS our_gb_s,
       (SELECT string_agg(format('%s %s (%s)', split_part(i2.name, '-', array_length(string_to_array(i2.name, '-'), 1)),
                                 kbench_format_ns(r2.median_ns), e2.product), '; ' ORDER BY r2.median_ns)
          FROM kbench_runs r2 JOIN kbench_implementations i2 ON i2.digest = r2.implementation_digest
          JOIN kbench_environments e2 ON e2.digest = r2.environment_digest
          JOIN kbench_protocols p2 ON p2.digest = r2.protocol_digest
         WHERE r2.workload_digest = r.workload_digest AND r2.source = 'liger-kernel-bench'
           AND p2.name = 'liger-bench-do-bench-' || CASE WHEN j.mode = 'full' THEN 'full' WHEN j.mode = 'forward' THEN 'forward' ELSE 'backward' END
           AND r2.status = 'passed') AS liger_reported
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
  JOIN kbench_job_status s ON s.id = j.id
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
SELECT pass, device, dtype, workloads, round(geomean_speedup::numeric, 2) AS geomean_speedup,
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
  echo "Stop it (and remove its directory) with:"
  as=""; [ "$(id -u)" -eq 0 ] && as="runuser -u postgres -- "
  echo "  $as$PGBIN/pg_ctl -D $KI_CLUSTER_DIR/data -m fast stop && rm -rf $KI_CLUSTER_DIR"
fi
