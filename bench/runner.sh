#!/usr/bin/env bash
# runner.sh: enqueue-to-start latency and throughput of the runner.
# 1,000 trivial jobs (layer_norm forward 8x8 on the CPU worker, protocol cut
# to a few microseconds of timing), queued one per transaction from one
# session, as a user would; the worker is woken by the enqueueing commit.
# Prints p50/p99 of started_at - queued_at and jobs per second.  Then the
# same two phases for a kbench agent (docs/FLEET.md) connected over
# loopback TCP (127.0.0.1), its jobs routed with device => 'agent:loop',
# beside the in-server worker's.  For each burst, the CPU (user + system,
# /proc/PID/stat) of the worker's process, then the agent's, per job: what
# one trivial job costs the process that runs and stores it.  Not a test.
#   bench/runner.sh [N]    N jobs per phase (default 1,000)
set -euo pipefail
cd "$(dirname "$0")/.."
KI_SKIP_KERNELS= bash bin/setup.sh >/dev/null
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
agent_pid=""
trap '[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; ki_cluster_stop' EXIT
n=${1:-1000}
# TCP on loopback for the agent: a private port (the socket stays in the cluster's directory)
PORT=${KI_BENCH_PORT:-$((20000 + $$ % 20000))}
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.queue_limit = 100000" \
                 "kernelindex.queue_limit_per_role = 0" \
                 "listen_addresses = '127.0.0.1'" "port = $PORT" >/dev/null
export PGPORT=$PORT
createdb kbench
export PGDATABASE=kbench
psql -X -q -c "CREATE EXTENSION kernelindex"
sleep 2
P='{"warmup_ms": 0, "rep_ms": 0.001, "flush_bytes": 0, "max_samples": 1, "check": false}'
report() {  # $1: label, $2: first job id, $3: seconds
  psql -X -At -F ' ' -c "
    SELECT count(*),
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - queued_at) * 1000)::numeric, 2),
           round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - queued_at) * 1000)::numeric, 2),
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at) * 1000)::numeric, 2),
           count(*) FILTER (WHERE status = 'passed')
      FROM kbench_jobs WHERE id >= $2" | while read -r cnt p50 p99 run passed; do
    printf '%-58s %8s %8s %8s %9s %8s\n' "$1" "$cnt/$passed" "$p50" "$p99" "$run" "$(echo "$cnt / $3" | bc -l | xargs printf '%.0f')"
  done
}
printf '%-58s %8s %8s %8s %9s %8s\n' "phase" "jobs/ok" "p50 ms" "p99 ms" "run ms" "jobs/s"

# serial LABEL [DEVICE_ARG]: one job at a time, queued and waited for (CALL kbench_bench), n times
serial() {
  local first start end i
  first=$(psql -X -At -c "SELECT coalesce(max(id), 0) + 1 FROM kbench_jobs")
  start=$(date +%s.%N)
  for ((i = 0; i < n; i++)); do
    echo "CALL kbench_bench('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}'${2:-}, protocol => '$P');"
  done | psql -X -q -o /dev/null
  end=$(date +%s.%N)
  report "$1" "$first" "$(echo "$end - $start" | bc -l)"
}
# CPU time (user + system, ms) of a process so far, from /proc (clock ticks)
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1000 / hz}' "/proc/$1/stat"; }
# burst LABEL [DEVICE_ARG] [PID]: n jobs queued back to back, one transaction each, then drained;
# with PID (the process that runs them), its CPU per job over the burst
burst() {
  local first start end i c0 c1
  first=$(psql -X -At -c "SELECT coalesce(max(id), 0) + 1 FROM kbench_jobs")
  [ -z "${3:-}" ] || c0=$(cpu_ms "$3")
  start=$(date +%s.%N)
  for ((i = 0; i < n; i++)); do
    echo "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}'${2:-}, protocol => '$P');"
  done | psql -X -q -o /dev/null
  until [ "$(psql -X -At -c "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" = 0 ]; do sleep 0.05; done
  end=$(date +%s.%N)
  report "$1" "$first" "$(echo "$end - $start" | bc -l)"
  [ -z "${3:-}" ] || { c1=$(cpu_ms "$3"); printf '  CPU of pid %s over the burst: %.2f ms per job\n' "$3" "$(echo "($c1 - $c0) / $n" | bc -l)"; }
}

# 1. and 2. the in-server worker
serial "enqueue-to-start, one job at a time (idle worker)"
worker=$(psql -X -At -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'kernelindex worker' LIMIT 1")
burst "burst of $n (queueing dominates latency; jobs/s = drain)" "" "$worker"

# 3. and 4. the same through a kbench agent over loopback TCP
psql -X -q -c "CREATE ROLE loop_agent LOGIN IN ROLE kbench_agent"
KBENCH_CUDA_LIB=/nonexistent kernels/kbench agent --db "host=127.0.0.1 port=$PORT dbname=kbench user=loop_agent" \
  --name loop --devices cpu --spool "$KI_CLUSTER_DIR/spool" 2>"$KI_CLUSTER_DIR/agent.log" &
agent_pid=$!
until [ "$(psql -X -At -c "SELECT count(*) FROM kbench_agent_status WHERE name = 'loop' AND state = 'alive'")" = 1 ]; do sleep 0.1; done
serial "agent over loopback TCP, one job at a time (idle agent)" ", device => 'agent:loop'"
burst "agent over loopback TCP, burst of $n" ", device => 'agent:loop'" "$agent_pid"
