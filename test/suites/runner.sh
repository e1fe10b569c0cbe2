#!/usr/bin/env bash
# runner.sh: the background workers on a real server with the library
# preloaded: NOTIFY on completion, 200 jobs from 4 concurrent sessions each
# run exactly once, a worker killed with SIGKILL mid-job, a retried job, a
# server restart mid-job, a job past its timeout, cancelling a running job,
# and a cancelled wait (statement_timeout) cancelling its job.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
trap 'ki_cluster_stop' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
source test/lib/tap.sh
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
LONG='{"warmup_ms": 0, "rep_ms": 20000, "flush_bytes": 0, "max_samples": 100000000}'
BIG='{"rows": 2048, "hidden": 2048, "dtype": "fp32"}'

wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"

# NOTIFY kbench_jobs when a job finishes
out=$(psql -X -q -c "LISTEN kbench_jobs" \
  -c "CALL kbench_bench('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', protocol => '$TINY')" \
  -c "SELECT 1" 2>&1)
# (no payload: every role may LISTEN, and a job id is its owner's business)
case "$out" in *'Asynchronous notification "kbench_jobs" received'*) echo "ok - NOTIFY kbench_jobs on completion";;
  *) echo "not ok - NOTIFY kbench_jobs on completion"; echo "$out" | sed 's/^/# /';; esac

# 200 jobs from 4 concurrent sessions: each runs exactly once
runs_before=$(q "SELECT count(*) FROM kbench_runs")
for s in 1 2 3 4; do
  psql -X -q -c "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 8 + g % 5, 'hidden', 8 * $s), protocol => '$TINY') FROM generate_series(1, 50) g" >/dev/null &
done
wait
if wait_for "SELECT count(*) = 0 FROM kbench_jobs WHERE status IN ('queued', 'running')" 240; then
  ok "$(q "SELECT count(*) FROM kbench_jobs WHERE id > 1")" 200 "200 jobs queued by 4 concurrent sessions"
  ok "$(q "SELECT count(*) FROM kbench_jobs WHERE id > 1 AND status = 'passed' AND attempts = 1")" 200 "each of the 200 jobs ran exactly once and passed"
  ok "$(q "SELECT count(DISTINCT run_digest) FROM kbench_jobs WHERE id > 1")" 200 "200 distinct runs recorded"
  ok "$(q "SELECT count(*) - $runs_before FROM kbench_runs")" 200 "200 runs in the catalog"
  # the worker stores kb_run's manifests under the digests kb_run gave them (validated once, in
  # kb_run; src/worker_jobs.c): each must be its manifest's digest, and the job's run must be there
  ok "$(q "SELECT count(*) FILTER (WHERE kbench_digest(m.manifest) IS DISTINCT FROM m.digest) || ' ' || (count(*) > 200)::int
             FROM (SELECT r.digest, r.manifest FROM kbench_runs r JOIN kbench_jobs j ON j.run_digest = r.digest
                   UNION ALL SELECT p.digest, p.manifest FROM kbench_protocols p WHERE p.source = 'kbench'
                   UNION ALL SELECT e.digest, e.manifest FROM kbench_environments e WHERE e.source = 'kbench'
                   UNION ALL SELECT w.digest, w.manifest FROM kbench_workloads w WHERE w.source = 'kbench'
                   UNION ALL SELECT i.digest, i.manifest FROM kbench_implementations i WHERE i.source = 'kbench'
                   UNION ALL SELECT o.digest, o.manifest FROM kbench_operations o WHERE o.source = 'kbench') m")" "0 1" \
     "every manifest a job stored digests to its key (the worker takes kb_run's validated manifests and digests)"
  ok "$(q "SELECT count(*) FROM kbench_jobs j WHERE j.id > 1 AND NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = j.run_digest
             AND r.raw_samples_ns IS NOT NULL AND cardinality(r.unresolved) = 0)")" 0 "each job's run is stored with its raw samples and nothing unresolved"
  echo "# $(q "SELECT format('queue-to-start p50 %s ms, p99 %s ms; run p50 %s ms', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - queued_at) * 1000)::numeric, 1), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - queued_at) * 1000)::numeric, 1), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - started_at) * 1000)::numeric, 1)) FROM kbench_jobs WHERE id > 1")"
else
  echo "not ok - 200 jobs from 4 sessions finished within 240 s"
fi

# SIGKILL of the worker mid-job: the job is failed with the reason
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
pid=$(q "SELECT worker_pid FROM kbench_jobs WHERE id = $job")
kill -9 "$pid"
sleep 1
if wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 60; then
  ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" failed "a job whose worker was killed is marked failed"
  case "$(q "SELECT error FROM kbench_jobs WHERE id = $job")" in
    *"stopped while running the job: it was killed or the server restarted"*) echo "ok - the failure says why";;
    *) echo "not ok - the failure says why";; esac
else
  echo "not ok - the killed worker's job left running"
fi
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status = 'running'")" 0 "no job left running after the crash"

# a job that asked for one retry is re-queued after a kill, and then runs
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '{\"warmup_ms\": 0, \"rep_ms\": 3000, \"flush_bytes\": 0}', retry => true)")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
kill -9 "$(q "SELECT worker_pid FROM kbench_jobs WHERE id = $job")"
sleep 1
wait_for "SELECT status IN ('passed', 'failed') FROM kbench_jobs WHERE id = $job" 90
ok "$(q "SELECT status || ' ' || attempts FROM kbench_jobs WHERE id = $job")" "passed 2" "a retried job runs again after its worker was killed"

# a server restart mid-job re-queues it (fast shutdown) and it runs after
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '{\"warmup_ms\": 0, \"rep_ms\": 3000, \"flush_bytes\": 0}')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
ki_cluster_restart
wait_for "SELECT status IN ('passed', 'failed') FROM kbench_jobs WHERE id = $job" 90
ok "$(q "SELECT status || ' ' || attempts FROM kbench_jobs WHERE id = $job")" "passed 2" "a job interrupted by a server restart is re-queued and runs"

# timeout
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG', timeout => '1 second')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 60
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" timeout "a job past its timeout is stopped and marked timeout"
ok "$(q "SELECT run_status FROM kbench_jobs WHERE id = $job")" timeout "its run is recorded with status timeout"
ok "$(q "SELECT finished_at - started_at < interval '1 s' + interval '2 s' FROM kbench_jobs WHERE id = $job")" t "stopped within 2 s of the 1 s timeout"

# cancel a running job
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
ok "$(q "SELECT kbench_cancel($job)")" t "kbench_cancel accepts a running job"
wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 30
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" canceled "a cancelled running job stops and is marked canceled"

# cancelling the waiting statement cancels the job
out=$(psql -X -q -c "SET statement_timeout = '2s'" \
  -c "CALL kbench_bench('layer_norm', 'backward', '$BIG', protocol => '$LONG')" 2>&1)
case "$out" in *"canceling statement due to statement timeout"*) echo "ok - statement_timeout cancels the wait";;
  *) echo "not ok - statement_timeout cancels the wait"; echo "$out" | sed 's/^/# /';; esac
job=$(q "SELECT max(id) FROM kbench_jobs")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 30
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" canceled "... and the job with it"
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" 0 "nothing left queued or running"
