#!/usr/bin/env bash
# fleet.sh: kbench agents (kernels/agent/, sql/*/85_fleet.sql) beside the
# in-server worker, on a real server: three agents and the worker drain
# 1,000 queued jobs, each run once; routing to a device class and to a
# named agent; cancel and timeout of an agent's job; kill -9 of an agent
# mid-job (its job recovered after kernelindex.agent_lease); SIGTERM; a
# server restart while agents run; a result finished while the server was
# down stored when it is back; the rights of the agent role.  Agents run the
# CPU backend, two of them also the fake CUDA backend (test/fake_cuda).
# Everything is decided by counts and events (job states, agent log lines),
# not by the clock; the waits are only upper bounds.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
if ! make -s -C kernels NVCC= libkbench.a kbench kbench-agent fake-cuda >/tmp/fleet-build.$$ 2>&1; then
  echo "not ok - kbench-agent and the fake CUDA backend build"; sed 's/^/# /' /tmp/fleet-build.$$; rm -f /tmp/fleet-build.$$; exit 1
fi
rm -f /tmp/fleet-build.$$
AG=$(mktemp -d /tmp/kernelindex-fleet.XXXXXX)
chmod 755 "$AG"
cp kernels/build/libkbench_fake_cuda.so "$AG/"
# code to register (as test/suites/byo.sh): a C library and a python file
mkdir "$AG/impl" && cp test/byo/impls.py "$AG/impl/" && cp test/operations/user/affine.json test/operations/user/affine_ref.py test/operations/user/affine_impl.py "$AG/impl/"
cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Ikernels -o "$AG/impl/libln.so" test/byo/ln_lib.c -lm ||
  { echo "not ok - the test library builds"; exit 1; }
chmod -R a+rX "$AG"
stop_agents() { local f; for f in "$AG"/*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done; return 0; }
trap 'stop_agents; ki_cluster_stop; rm -rf "$AG"' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.queue_limit = 5000" \
                 "kernelindex.queue_limit_per_role = 0" "kernelindex.implementation_directory = '$AG/impl'" ||
  { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
source test/lib/tap.sh
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
LONG='{"warmup_ms": 0, "rep_ms": 20000, "flush_bytes": 0, "max_samples": 100000000}'
BIG='{"rows": 2048, "hidden": 2048, "dtype": "fp32"}'
# wait until agent $1's log has a line matching $2, at most $3 seconds
wait_log() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -qE -- "$2" "$AG/$1.log" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
# start_agent NAME ROLE [fake] [options]: an agent in the background, its
# log in $AG/NAME.log, its pid in $AG/NAME.pid (kbench execs kbench-agent)
start_agent() {
  local n=$1 role=$2 fake=$3
  shift 3
  if [ "$fake" = fake ]; then
    env PGUSER="$role" KBENCH_CUDA_LIB="$AG/libkbench_fake_cuda.so" KBENCH_FAKE_CUDA=ok \
      kernels/kbench agent --name "$n" --spool "$AG/spool-$n" --python /usr/bin/python3 "$@" >>"$AG/$n.log" 2>&1 &
  else
    env PGUSER="$role" KBENCH_CUDA_LIB=/nonexistent kernels/kbench agent --name "$n" --spool "$AG/spool-$n" \
      --python /usr/bin/python3 "$@" >>"$AG/$n.log" 2>&1 &
  fi
  echo $! >"$AG/$n.pid"
  disown $!   # killed on purpose below: no job report from bash
}
q "CREATE ROLE gpu1 LOGIN IN ROLE kbench_agent; CREATE ROLE gpu2 LOGIN IN ROLE kbench_agent;
   CREATE ROLE gpu3 LOGIN IN ROLE kbench_agent; CREATE ROLE alice LOGIN IN ROLE kbench_user;
   CREATE ROLE bob LOGIN IN ROLE kbench_user; CREATE ROLE mallory LOGIN"
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"

echo "# 1. rights"
out=$(env PGUSER=mallory timeout 60 kernels/kbench agent --name intruder --spool "$AG/spool-intruder" 2>&1); rc=$?
ok "$rc" 2 "an agent whose role is not a member of kbench_agent exits with status 2"
case "$out" in *"permission denied for function kbench_agent_register"*) echo "ok - ... refused with the server's words";;
  *) echo "not ok - ... refused with the server's words"; echo "$out" | sed 's/^/# /';; esac
ok "$(q "SELECT count(*) FROM kbench_agents")" 0 "the refused agent left no registration"
out=$(env PGUSER=gpu1 timeout 60 kernels/kbench agent --name a9 --devices "cpu;x" 2>&1); rc=$?
ok "$rc $(printf '%s' "$out" | head -1)" "2 kbench agent: --devices takes auto or a list such as cpu,cuda:0" \
  "kbench agent refuses a --devices that is not a device list"
out=$(env PGUSER=gpu1 timeout 60 kernels/kbench agent --name a9 --devices tpu:0 --spool "$AG/spool-a9" 2>&1); rc=$?
case "$rc $out" in "2 "*'agent "a9" has no device to serve'*) echo "ok - an agent with no device it can serve is refused (exit 2)";;
  *) echo "not ok - an agent with no device it can serve is refused (exit $rc)"; echo "$out" | sed 's/^/# /';; esac
out=$(kernels/kbench agent --frobnicate 1 2>&1); rc=$?
ok "$rc $(printf '%s' "$out" | head -1)" "2 kbench agent: unknown option --frobnicate" "kbench agent refuses an unknown option"
start_agent a1 gpu1 fake
start_agent a2 gpu2 plain --devices cpu
start_agent a3 gpu3 fake
wait_for "SELECT count(*) = 3 FROM kbench_agent_status WHERE state = 'alive'" 60 || echo "# the agents did not register"
ok "$(q "SELECT string_agg(name || ':' || role || ':' || array_to_string(devices, ' '), ', ' ORDER BY name) FROM kbench_agent_status")" \
  "a1:gpu1:cuda:0=cuda:Fake-GPU-kernelindex-test-double cpu=cpu, a2:gpu2:cpu=cpu, a3:gpu3:cuda:0=cuda:Fake-GPU-kernelindex-test-double cpu=cpu" \
  "kbench_agent_status: three agents, their roles and devices (class of the fake GPU from its product)"
out=$(env PGUSER=gpu2 timeout 60 kernels/kbench agent --name a1 --spool "$AG/spool-x" 2>&1); rc=$?
ok "$rc" 2 "an agent role cannot take another role's agent name"
case "$out" in *'agent "a1" belongs to role gpu1'*) echo "ok - ... and is told whose it is";;
  *) echo "not ok - ... and is told whose it is"; echo "$out" | sed 's/^/# /';; esac
refused() {
  local got
  got=$(psql -X -At -q -v ON_ERROR_STOP=1 -U "$1" -c "\\set VERBOSITY verbose" -c "$2" 2>&1)
  case "$got" in *"ERROR:  $3"*) echo "ok - $4";; *) echo "not ok - $4"; echo "$got" | head -3 | sed 's/^/# /';; esac
}
refused gpu1 "UPDATE kbench_jobs SET status = 'passed'" 42501 "an agent role has no right on kbench_jobs"
refused gpu1 "SELECT * FROM _kernelindex.claim(ARRAY['cpu'], 1, 'a1')" 42501 "an agent role cannot call the claim directly"
refused gpu1 "SELECT * FROM kbench_ingest('{}'::jsonb)" 42501 "an agent role cannot ingest but through kbench_agent_finish"
refused gpu1 "INSERT INTO kbench_agents VALUES ('x', 'gpu1', 'h', 1, 'v', 1)" 42501 "an agent role cannot write kbench_agents"
refused gpu2 "SELECT kbench_agent_finish('a1', NULL, 1, 1, 'passed')" 42501 "an agent role cannot finish another agent's job"
refused gpu1 "SELECT kbench_agent_heartbeat('a1', -1)" 55000 "a stale session of a name is refused"
refused alice "SELECT * FROM kbench_agent_claim('a1', 1, 1)" 42501 "kbench_user cannot claim jobs"
refused alice "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cuda:H200')" 22023 \
  "kbench_run refuses a device that no worker or agent serves"
# issue 29: its detail lists what serves now (the live agents' classes and names), its hint no
# device that nothing serves (it named cuda:H200, the very device refused here)
got=$(psql -X -At -q -U alice -c "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cuda:H200')" 2>&1)
case "$got" in *"Live agents serve: agent:a1, agent:a2, agent:a3, cpu, cuda:Fake-GPU-kernelindex-test-double."*)
  echo "ok - ... and its detail lists the live agents' device classes and names";;
  *) echo "not ok - ... and its detail lists the live agents' device classes and names"; echo "$got" | sed 's/^/# /';; esac
case "$got" in *H200*"H200"*) echo "not ok - ... and its hint names no device that nothing serves"; echo "$got" | sed 's/^/# /';;
  *) echo "ok - ... and its hint names no device that nothing serves";; esac
refused gpu1 "SELECT kbench_agent_register('bad name', 'h', 1, 'v', '[]')" 22023 "an agent name with a space is refused"
refused gpu1 "SELECT kbench_agent_register('a9', 'h', 1, 'v', '[{\"name\": \"tpu:0\"}]')" 22023 "an agent with no known device is refused"
refused gpu1 "SELECT kbench_agent_finish('a1', NULL, 1, 1, 'done')" 22023 "a job end that is not a job status is refused"

N=${KI_FLEET_JOBS:-1000}   # (fewer only to develop this suite)
echo "# 2. three agents and the worker drain $N jobs"
runs_before=$(q "SELECT count(*) FROM kbench_runs")
first=$(q "SELECT coalesce(max(id), 0) + 1 FROM kbench_jobs")
queuers=()
for s in 1 2 3 4; do
  psql -X -q -U alice -c "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 8 + g % 7, 'hidden', 8 * $s),
       device => 'cpu', protocol => '$TINY') FROM generate_series(1, $N / 4) g" >/dev/null &
  queuers+=($!)
done
wait "${queuers[@]}"   # (not the agents)
if wait_for "SELECT count(*) = 0 FROM kbench_jobs WHERE status IN ('queued', 'running')" 900; then
  ok "$(q "SELECT count(*) FROM kbench_jobs WHERE id >= $first")" "$N" "$N jobs queued"
  ok "$(q "SELECT count(*) FROM kbench_jobs WHERE id >= $first AND status = 'passed' AND attempts = 1")" "$N" \
     "each of the $N jobs ran exactly once and passed"
  ok "$(q "SELECT count(DISTINCT run_digest) FROM kbench_jobs WHERE id >= $first")" "$N" "$N distinct runs recorded"
  ok "$(q "SELECT count(*) - $runs_before FROM kbench_runs")" "$N" "$N runs in the catalog"
  ok "$(q "SELECT string_agg(DISTINCT coalesce(agent, 'worker'), ',' ORDER BY coalesce(agent, 'worker')) FROM kbench_jobs WHERE id >= $first")" \
     "a1,a2,a3,worker" "the worker and each of the three agents ran some of them"
  ok "$(q "SELECT count(*) FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
           WHERE j.id >= $first AND j.agent IS NOT NULL AND r.raw_samples_ns IS NOT NULL
             AND r.samples = pg_catalog.array_length(r.raw_samples_ns, 1)")" \
     "$(q "SELECT count(*) FROM kbench_jobs WHERE id >= $first AND agent IS NOT NULL")" \
     "the agents' runs carry their kept raw samples"
  echo "# $(q "SELECT string_agg(format('%s %s jobs, queue-to-start p50 %s ms', who, n, p50), '; ') FROM (
       SELECT coalesce(agent, 'worker') AS who, count(*) AS n,
              round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - queued_at) * 1000)::numeric, 1) AS p50
         FROM kbench_jobs WHERE id >= $first GROUP BY 1 ORDER BY 1) s")"
else
  echo "not ok - $N jobs finished within 900 s"
fi

echo "# 3. routing"
job=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'agent:a2', protocol => '$TINY')")
wait_for "SELECT status = 'passed' FROM kbench_jobs WHERE id = $job" 120
ok "$(q "SELECT status || ' ' || agent FROM kbench_jobs WHERE id = $job")" "passed a2" "device => 'agent:a2' runs on agent a2"
job=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cuda:Fake-GPU', protocol => '$TINY')")
wait_for "SELECT status = 'passed' FROM kbench_jobs WHERE id = $job" 120
ok "$(q "SELECT status || ' ' || (agent IN ('a1', 'a3')) FROM kbench_jobs WHERE id = $job")" "passed true" \
  "device => 'cuda:Fake-GPU' (a class prefix) runs on an agent with such a GPU"
ok "$(q "SELECT count(*) FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $job")" 1 \
  "... and its run is stored"
job=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'agent:a3/cpu', protocol => '$TINY')")
wait_for "SELECT status = 'passed' FROM kbench_jobs WHERE id = $job" 120
ok "$(q "SELECT status || ' ' || agent FROM kbench_jobs WHERE id = $job")" "passed a3" "device => 'agent:a3/cpu' runs on a3's CPU"

echo "# 3b. registered implementations run on an agent as in the worker"
for impl in "agent-ln-c|library:$AG/impl/libln.so:ln_good" "agent-ln-py|python:$AG/impl/impls.py:good"; do
  name=${impl%%|*}
  d=$(q "SELECT kbench_register_implementation('$name', 'layer_norm', '${impl#*|}', '1.0')")
  job=$(q "SELECT kbench_run('layer_norm', 'backward', '{\"rows\": 8, \"hidden\": 16}', implementation => '$name',
           device => 'agent:a2', protocol => '$TINY')")
  wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 180
  ok "$(q "SELECT j.status || ' ' || j.agent || ' ' || (r.implementation_digest = '$d') FROM kbench_jobs j
           LEFT JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $job")" "passed a2 true" \
    "a registered $(cut -d: -f1 <<<"${impl#*|}") implementation's job passes on agent a2, its run names the registered revision"
done

echo "# 3c. an operation registered in SQL runs on an agent: its definition and reference come from the server"
q "SELECT kbench_register_operation('$AG/impl/affine.json')" >/dev/null
q "SELECT kbench_register_implementation('agent-affine', 'affine', 'python:$AG/impl/affine_impl.py:honest', '1.0')" >/dev/null
job=$(q "SELECT kbench_run('affine', 'backward', '{\"rows\": 16, \"cols\": 8}', implementation => 'agent-affine',
         device => 'agent:a2', protocol => '$TINY')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 180
ok "$(q "SELECT j.status || ' ' || j.agent || ' ' || coalesce(j.run_status::text, '-') FROM kbench_jobs j WHERE j.id = $job")" "passed a2 passed" \
  "a registered operation's job passes on agent a2 (the agent loads the definition the server stored) and its result is accepted"
q "SELECT coalesce(error, '') FROM kbench_jobs WHERE id = $job AND status <> 'passed'" | sed 's/^/# error: /'

echo "# 4. cancel and timeout"
job=$(psql -X -At -q -U alice -c "SELECT kbench_run('layer_norm', 'backward', '$BIG', device => 'agent:a2', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 60
wait_for "SELECT progress > 0 FROM kbench_jobs WHERE id = $job" 60
ok "$(psql -X -At -q -U alice -c "SELECT state || ' ' || job_id || ' ' || (progress > 0) || ' ' || kind FROM kbench_workers WHERE device = 'agent:a2/cpu'")" \
  "running $job true agent" "kbench_workers shows the agent's device running the job, with the progress its heartbeats carry"
ok "$(psql -X -At -q -U bob -c "SELECT state || ' ' || coalesce(job_id::text, 'hidden') FROM kbench_workers WHERE device = 'agent:a2/cpu'")" \
  "running hidden" "... and hides the job's id from a role that may not see the job"
ok "$(q "SELECT running_jobs FROM kbench_agent_status WHERE name = 'a2'")" 1 "kbench_agent_status counts the agent's running job"
ok "$(q "SELECT kbench_cancel($job)")" t "kbench_cancel accepts an agent's running job"
wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 60
got=$(q "SELECT status || ': ' || coalesce(error, '(no error)') FROM kbench_jobs WHERE id = $job")
ok "$got" "canceled: canceled by request" "the agent stops the job at its next heartbeat and marks it canceled"
if [ "$got" != "canceled: canceled by request" ]; then   # what happened, for whoever reads the log
  q "SELECT id, status, attempts, agent, cancel_requested, progress, started_at, finished_at, run_status FROM kbench_jobs WHERE id = $job" | sed 's/^/# job: /'
  grep -E "job $job[: ]" "$AG/a2.log" | tail -8 | sed 's/^/# a2: /'
fi
job=$(psql -X -At -q -U alice -c "SELECT kbench_run('layer_norm', 'backward', '$BIG', device => 'agent:a2', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 60
out=$(psql -X -q -U alice -c "SET statement_timeout = '1s'" -c "SELECT status FROM kbench_wait($job)" 2>&1)
case "$out" in *"canceling statement due to statement timeout"*) echo "ok - statement_timeout cancels the wait for an agent's job";;
  *) echo "not ok - statement_timeout cancels the wait for an agent's job"; echo "$out" | sed 's/^/# /';; esac
wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 60
ok "$(q "SELECT status || ': ' || error FROM kbench_jobs WHERE id = $job")" "canceled: canceled by request" \
  "... and the agent stops the job at its next heartbeat"
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', device => 'agent:a2', protocol => '$LONG', timeout => '1 second')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 60
ok "$(q "SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $job")" "timeout timeout" \
  "an agent's job past its timeout is stopped, marked timeout, its run recorded"

echo "# 5. kill -9 of an agent mid-job"
q "ALTER SYSTEM SET kernelindex.agent_lease = '4s'" && q "SELECT pg_reload_conf()" >/dev/null
wait_for "SELECT current_setting('kernelindex.agent_lease') = '4s'" 10
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', device => 'agent:a3', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 60
kill -9 "$(cat "$AG/a3.pid")"
if wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 120; then
  ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" failed "the killed agent's job is failed after the lease"
  case "$(q "SELECT error FROM kbench_jobs WHERE id = $job")" in
    *"the agent a3 (pid "*"stopped heartbeating while running the job: no heartbeat for"*"kernelindex.agent_lease is 4 s"*)
      echo "ok - the failure says why";;
    *) echo "not ok - the failure says why: $(q "SELECT error FROM kbench_jobs WHERE id = $job")";; esac
else
  echo "not ok - the killed agent's job was recovered"
fi
ok "$(q "SELECT state FROM kbench_agent_status WHERE name = 'a3'")" lost "kbench_agent_status shows the killed agent lost"
# a job that may retry goes back to the queue and another agent runs it
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', device => 'cuda:Fake-GPU',
         protocol => '{\"warmup_ms\": 0, \"rep_ms\": 3000, \"flush_bytes\": 0}', retry => true)")
start_agent a3 gpu3 fake
wait_for "SELECT state = 'alive' FROM kbench_agent_status WHERE name = 'a3'" 60
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 60
victim=$(q "SELECT agent FROM kbench_jobs WHERE id = $job")
kill -9 "$(cat "$AG/$victim.pid")"
wait_for "SELECT status IN ('passed', 'failed') FROM kbench_jobs WHERE id = $job" 180
ok "$(q "SELECT status || ' ' || attempts || ' ' || (agent <> '$victim') FROM kbench_jobs WHERE id = $job")" "passed 2 true" \
  "a retried job whose agent was killed is re-queued after the lease and run by another agent"
start_agent "$victim" "gpu${victim#a}" fake
q "ALTER SYSTEM SET kernelindex.agent_lease = '60s'" && q "SELECT pg_reload_conf()" >/dev/null
wait_for "SELECT count(*) = 3 FROM kbench_agent_status WHERE state = 'alive'" 60

echo "# 6. SIGTERM: the running job goes back to the queue"
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', device => 'agent:a2', protocol => '$LONG')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 60
kill -TERM "$(cat "$AG/a2.pid")"
wait_log a2 "stopped$" 60
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" queued "a job whose agent got SIGTERM is queued again"
ok "$(q "SELECT state FROM kbench_agent_status WHERE name = 'a2'")" stopped "... and the agent shows stopped"
start_agent a2 gpu2 plain --devices cpu
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 60
q "SELECT kbench_cancel($job)" >/dev/null
wait_for "SELECT status = 'canceled' FROM kbench_jobs WHERE id = $job" 60

echo "# 7. a server restart while agents run"
first=$(q "SELECT max(id) + 1 FROM kbench_jobs")
q "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 64 + g % 7, 'hidden', 64),
     device => 'cpu', protocol => '{\"warmup_ms\": 0, \"rep_ms\": 20, \"flush_bytes\": 0}') FROM generate_series(1, 60) g" >/dev/null
wait_for "SELECT count(*) >= 5 FROM kbench_jobs WHERE id >= $first AND status = 'passed'" 120
ki_cluster_restart
if wait_for "SELECT count(*) = 0 FROM kbench_jobs WHERE id >= $first AND status IN ('queued', 'running')" 300; then
  ok "$(q "SELECT count(*) FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id >= $first AND j.status = 'passed'")" 60 \
    "every job queued before the restart passed, its run stored"
  q "SELECT '# job ' || id || ': ' || status || ' attempts ' || attempts || ' agent ' || coalesce(agent, '(worker)') || ' run ' || coalesce(run_digest, '-') || ' error ' || coalesce(error, '(none)')
       FROM kbench_jobs j WHERE id >= $first AND (status <> 'passed' OR NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = j.run_digest))"
  ok "$(q "SELECT count(*) FROM kbench_jobs WHERE id >= $first AND agent IS NOT NULL AND attempts > 1")" 0 \
    "the agents' jobs ran once (they reconnected and finished them)"
else
  echo "not ok - the jobs finished after the restart: $(q "SELECT string_agg(status || ' ' || count, ', ') FROM (SELECT status, count(*) FROM kbench_jobs WHERE id >= $first GROUP BY 1) s")"
fi
ok "$(q "SELECT count(*) FROM kbench_agent_status WHERE state = 'alive'")" 3 "the three agents are alive after the restart"

echo "# 8. a result finished while the server is down is stored when it is back"
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', device => 'agent:a1/cpu',
         protocol => '{\"warmup_ms\": 0, \"rep_ms\": 2000, \"flush_bytes\": 0}')")
wait_log a1 "job $job attempt 1 on cpu" 60
ki_as_owner pg_ctl -D "$KI_CLUSTER_DIR/data" -m fast -w stop >/dev/null
if wait_log a1 "job $job: passed; the server is unreachable, the result is kept in" 120; then
  echo "ok - the agent keeps the result on disk while the server is down"
else
  echo "not ok - the agent keeps the result on disk while the server is down"; tail -5 "$AG/a1.log" | sed 's/^/# /'
fi
ok "$(ls "$AG/spool-a1" | grep -c "^job-$job-1.spool$")" 1 "... one file for the job's attempt"
ki_as_owner pg_ctl -D "$KI_CLUSTER_DIR/data" -l "$KI_CLUSTER_DIR/server.log" -w start >/dev/null
wait_log a1 "job $job: the result kept while the server was unreachable is stored" 120
wait_for "SELECT status <> 'running' FROM kbench_jobs WHERE id = $job" 60
ok "$(q "SELECT j.status || ' ' || j.attempts || ' ' || (r.digest IS NOT NULL) FROM kbench_jobs j LEFT JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $job")" \
  "passed 1 true" "the job is finished with its run once the server is back"
ok "$(ls "$AG/spool-a1" | wc -l)" 0 "the spool is empty again"

echo "# 9. views"
ok "$(q "SELECT count(*) FROM kbench_agent_devices")" 5 "kbench_agent_devices lists each agent's devices"
ok "$(q "SELECT string_agg(kind || ' ' || device || ' ' || state, ', ' ORDER BY kind DESC, device) FROM kbench_workers")" \
  "worker cpu idle, agent agent:a1/cpu idle, agent agent:a1/cuda:0 idle, agent agent:a2/cpu idle, agent agent:a3/cpu idle, agent agent:a3/cuda:0 idle" \
  "kbench_workers lists the in-server worker and every agent device"
ok "$(q "SELECT string_agg(device || ' ' || kind || ' ' || implementations::text, ', ' ORDER BY device) FROM kbench_device_operations WHERE operation = 'layer_norm' AND device LIKE 'agent:a1/%'")" \
  "agent:a1/cpu agent {cpu}, agent:a1/cuda:0 agent {cuda,cuda/v2}" \
  "kbench_device_operations lists what each agent device runs, as for the worker"
ok "$(q "SELECT string_agg(name || ' ' || running_jobs, ', ' ORDER BY name) FROM kbench_agent_status")" "a1 0, a2 0, a3 0" \
  "kbench_agent_status counts the jobs each agent runs"
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" 0 "nothing left queued or running"
