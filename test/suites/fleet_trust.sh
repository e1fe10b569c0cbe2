#!/usr/bin/env bash
# fleet_trust.sh: what an agent role may do, attacked (issue 24, "Trust at
# the boundaries").  An agent role (a member of kbench_agent) talks to the
# server by hand here, as a hostile agent would, through the kbench_agent_*
# functions; the results it sends are real `kbench run --json` outputs of
# this host's CPU (the same machine as the agent's registered CPU), so that
# only what the attack changes is wrong in them:
#   1. kbench_agent_finish: a job that does not exist, another agent's
#      leased job, the agent's own job with the run of another workload or
#      of another device, a run already stored sent back as a new one, a
#      passed job without a run: refused, nothing stored; the honest run of
#      the job is stored;
#   2. device names: a GPU whose product is empty, digits, "cpu", "cuda:1"
#      or holds a control character is refused (its class would name an
#      in-server worker's device); a job queued with no device never goes to
#      an agent, one queued for "cpu" does;
#   3. confirmation reruns are matched by their job: an agent that claims
#      with the worker's pid gets no verdict from the worker's unrelated run;
#      an agent's own rerun is judged;
#   4. limits on registered devices (per role, in all), by their errors; the
#      routing's index, by the plan.
# The honest agent (`kbench agent`) passing these checks is fleet.sh.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
if ! make -s -C kernels NVCC= libkbench.a kbench fake-cuda >/tmp/fleet-trust-build.$$ 2>&1; then
  echo "not ok - kbench and the fake CUDA backend build"; sed 's/^/# /' /tmp/fleet-trust-build.$$
  rm -f /tmp/fleet-trust-build.$$; exit 1
fi
rm -f /tmp/fleet-trust-build.$$
W=$(mktemp -d /tmp/kernelindex-fleet-trust.XXXXXX)
chmod 755 "$W"
trap 'ki_cluster_stop; rm -rf "$W"' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.queue_limit_per_role = 0" ||
  { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
source test/lib/tap.sh
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
as() { local r=$1; shift; psql -X -At -q -v ON_ERROR_STOP=1 -U "$r" -c "$1" 2>&1; }
# refused ROLE SQL SQLSTATE WHAT [PATTERN]: the statement fails with that SQLSTATE (and message)
refused() {
  local got
  got=$(psql -X -At -q -v ON_ERROR_STOP=1 -U "$1" -c "\\set VERBOSITY verbose" -c "$2" 2>&1)
  case "$got" in *"ERROR:  $3"*"${5:-}"*) echo "ok - $4";;
    *) echo "not ok - $4"; echo "$got" | head -3 | sed 's/^/# /';; esac
}
# (a fixed count, adaptive false: three samples are under the adaptive minimum, so an adaptive run
# would stop at its cap, unstable, and an unstable confirmation rerun gives no verdict)
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3, "adaptive": false}'
# what `kbench run --json` prints for layer_norm forward ROWS x 8 under TINY, on this CPU, kept in a table
q "CREATE TABLE results (name text PRIMARY KEY, doc json); GRANT SELECT ON results TO PUBLIC"
result() {
  local f="$W/$1.json"
  KBENCH_CUDA_LIB=/nonexistent kernels/kbench run layer_norm forward rows="$2" hidden=8 --warmup-ms 0 --rep-ms 0.01 \
    --flush-bytes 0 --max-samples 3 --fixed --json >"$f" 2>/dev/null || { echo "# kbench run $2 failed"; return 1; }
  psql -X -q -v ON_ERROR_STOP=1 -v doc="$(cat "$f")" <<<"INSERT INTO results VALUES ('$1', :'doc')"
}
result r8 8 && result r8b 8 && result r8c 8 && result r16 16
digest() { q "SELECT digests->>'run' FROM (SELECT doc::jsonb->'digests' AS digests FROM results WHERE name = '$1') s"; }
R() { echo "(SELECT doc FROM results WHERE name = '$1')"; }
runs() { q "SELECT count(*) FROM kbench_runs"; }

q "CREATE ROLE gpu9 LOGIN IN ROLE kbench_agent, kbench_user; CREATE ROLE gpu8 LOGIN IN ROLE kbench_agent;
   CREATE ROLE gpu7 LOGIN IN ROLE kbench_agent; CREATE ROLE alice LOGIN IN ROLE kbench_user"
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"
CPU=$(KBENCH_CUDA_LIB=/nonexistent kernels/kbench devices --json)
FAKE=$(KBENCH_CUDA_LIB="$PWD/kernels/build/libkbench_fake_cuda.so" KBENCH_FAKE_CUDA=ok kernels/kbench devices --json)
# register ROLE NAME DEVICES-JSON: the session
register() { psql -X -At -q -v ON_ERROR_STOP=1 -U "$1" -v dev="$3" <<<"SELECT session FROM kbench_agent_register('$2', 'host', 1, 'test', :'dev')"; }
S1=$(register gpu9 m1 "$FAKE")
S2=$(register gpu8 m2 "$CPU")
ok "$(q "SELECT string_agg(name || ' ' || array_to_string(devices, ' '), ', ' ORDER BY name) FROM kbench_agent_status")" \
  "m1 cuda:0=cuda:Fake-GPU-kernelindex-test-double cpu=cpu, m2 cpu=cpu" "two agents registered by hand, m1 with the fake GPU"
# queue DEVICE [ROWS]: a job of layer_norm forward ROWS x 8 under TINY; claim NAME SESSION ROLE [PID]: the job id claimed
queue() { q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": ${2:-8}, \"hidden\": 8}', device => '$1', protocol => '$TINY')"; }
claim() { as "$3" "SELECT id FROM kbench_agent_claim('$1', $2, ${4:-1})"; }

echo "# 1. kbench_agent_finish: only the agent's leased job, only with the job's run"
n=$(runs)
ok "$(as gpu9 "SELECT kbench_agent_finish('m1', $S1, 999999, 1, 'passed', $(R r8))")" f \
  "an agent finishing a job that does not exist is told no"
ok "$(( $(runs) - n ))" 0 "... and its run is not stored"
j1=$(queue agent:m2)
ok "$(claim m2 "$S2" gpu8)" "$j1" "agent m2 (role gpu8) holds the lease of job $j1"
ok "$(as gpu9 "SELECT kbench_agent_finish('m1', $S1, $j1, 1, 'passed', $(R r8))")" f \
  "agent m1 (role gpu9) finishing m2's leased job is told no"
ok "$(( $(runs) - n )) $(q "SELECT status || ' ' || agent || ' ' || (run_digest IS NULL) FROM kbench_jobs WHERE id = $j1")" \
  "0 running m2 true" "... nothing is stored and the job still runs on m2, without a run"
ok "$(as gpu8 "SELECT kbench_agent_finish('m2', $S2, $j1, 2, 'passed', $(R r8))")" f \
  "m2 finishing its job in another attempt than its lease's is told no, nothing stored"
j2=$(queue agent:m1/cpu)
ok "$(claim m1 "$S1" gpu9)" "$j2" "agent m1 holds the lease of job $j2 (rows 8, on its CPU)"
refused gpu9 "SELECT kbench_agent_finish('m1', $S1, $j2, 1, 'passed', $(R r16))" 22023 \
  "finishing it with the run of another workload (rows 16) is refused" "its workload"
refused gpu9 "SELECT kbench_agent_finish('m1', $S1, $j2, 1, 'passed', NULL)" 22023 \
  "finishing it passed without a run is refused" "cannot pass without its run"
refused gpu9 "SELECT kbench_agent_finish('m1', $S1, $j2, 1, 'failed', $(R r8))" 22023 \
  "finishing it failed with a passed run is refused" "its run's status is passed"
ok "$(( $(runs) - n )) $(q "SELECT status FROM kbench_jobs WHERE id = $j2")" "0 running" "... nothing stored, the job still runs"
ok "$(as gpu9 "SELECT kbench_agent_finish('m1', $S1, $j2, 1, 'passed', $(R r8))")" t "the job's own run finishes it"
ok "$(( $(runs) - n )) $(q "SELECT status || ' ' || (run_digest = '$(digest r8)') FROM kbench_jobs WHERE id = $j2")" \
  "1 passed true" "... the run is stored and is the job's"
j3=$(queue agent:m1/cpu)
ok "$(claim m1 "$S1" gpu9)" "$j3" "agent m1 holds the lease of job $j3, the same request"
refused gpu9 "SELECT kbench_agent_finish('m1', $S1, $j3, 1, 'passed', $(R r8))" 22023 \
  "sending back the stored run of job $j2 as job $j3's (a reproduction of itself) is refused" "stored already"
ok "$(q "SELECT status || ' ' || (run_digest IS NULL) FROM kbench_jobs WHERE id = $j3")" "running true" "... the job still runs, without a run"
ok "$(as gpu9 "SELECT kbench_agent_finish('m1', $S1, $j3, 1, 'failed', NULL, 'given up')")" t "the agent may end it failed without a run"
j4=$(queue agent:m1/cuda:0)
ok "$(claim m1 "$S1" gpu9)" "$j4" "agent m1 holds the lease of job $j4, on its GPU"
refused gpu9 "SELECT kbench_agent_finish('m1', $S1, $j4, 1, 'passed', $(R r8b))" 22023 \
  "finishing the GPU job with a run measured on another device (the CPU) is refused" "its environment"
ok "$(( $(runs) - n ))" 1 "... nothing stored"
as gpu9 "SELECT kbench_agent_finish('m1', $S1, $j4, 1, 'failed', NULL, 'given up')" >/dev/null

echo "# 2. device names; jobs queued with no device"
for p in "''" "'0'" "'123'" "'NVIDIA 7'" "'cpu'" "'CPU-x'" "'cuda:1'" "'cuda'" "E'H100\\nrogue'" "repeat('A', 201)"; do
  refused gpu7 "SELECT kbench_agent_register('m3', 'host', 1, 'test', jsonb_build_array(jsonb_build_object('name', 'cuda:0', 'product', $p)))" \
    22023 "a GPU whose product is $p is refused" "is refused"
done
refused gpu7 "SELECT kbench_agent_register('m3', 'host', 1, 'test', '[{\"name\": \"cuda:0\"}]')" 22023 \
  "a GPU without a product is refused" "is refused"
ok "$(q "SELECT count(*) FROM kbench_agents WHERE name = 'm3'")" 0 "... none of them registered"
ok "$(q "SELECT count(*) FROM kbench_agent_devices WHERE class !~ '^(cpu|cuda:[A-Za-z].*)$' OR class ~* '^cuda:(cpu|cuda)(-|$)'")" 0 \
  "no agent device's class names an in-server worker's device"
# in one transaction, so that the worker cannot take the job first: an agent claims right after it is queued
ok "$(psql -X -At -q -v ON_ERROR_STOP=1 -U gpu9 -c "BEGIN" -c "SELECT 1 FROM kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', protocol => '$TINY')" \
      -c "SELECT count(*) FROM kbench_agent_claim('m1', $S1, 1)" -c "ROLLBACK" | tail -1)" 0 \
  "a job queued with no device (the worker's best, cpu) never goes to an agent"
ok "$(psql -X -At -q -v ON_ERROR_STOP=1 -U gpu9 -c "BEGIN" -c "SELECT 1 FROM kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cpu', protocol => '$TINY')" \
      -c "SELECT count(*) FROM kbench_agent_claim('m1', $S1, 1)" -c "ROLLBACK" | tail -1)" 1 \
  "... while one queued for device cpu may (every CPU's class)"

echo "# 3. confirmation reruns are matched by their job"
alert() { q "INSERT INTO kbench_alerts (rule_id, workload_digest, protocol_digest, environment_digest, family, run_digest,
             last_run_digest, runs, method, value_ns, baseline_ns, change_pct)
             VALUES (0, 'w', 'p', 'e', 'f', '$1', '$1', '{$1}', 'percent', 2, 1, 100) RETURNING id"; }
# (a baseline of 1 ns: any run of 2 ns or more confirms, whatever this machine's speed)
a1=$(alert x1)
wpid=$(q "SELECT pid FROM kbench_workers WHERE kind = 'worker'")
j5=$(queue agent:m1/cpu)
ok "$(claim m1 "$S1" gpu9 "$wpid")" "$j5" "agent m1 claims job $j5 giving the worker's pid ($wpid)"
q "INSERT INTO kbench_alert_confirmations (alert_id, job_id) VALUES ($a1, $j5)"
other=$(psql -X -At -q -U alice -c "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 12, \"hidden\": 8}', protocol => '$TINY')")
wait_for "SELECT status = 'passed' FROM kbench_jobs WHERE id = $other" 120 || echo "# the worker's job $other did not pass"
ok "$(q "SELECT status || ' ' || (agent IS NULL) FROM kbench_jobs WHERE id = $other")" "passed true" "the worker ran an unrelated job"
ok "$(q "SELECT coalesce(verdict, 'none') || ' ' || coalesce(run_digest, 'none') FROM kbench_alert_confirmations WHERE alert_id = $a1")" "none none" \
  "... whose run does not judge job $j5's confirmation (claimed with the worker's pid)"
ok "$(q "SELECT status FROM kbench_alerts WHERE id = $a1")" open "... the alert stays open"
ok "$(as gpu9 "SELECT kbench_agent_finish('m1', $S1, $j5, 1, 'passed', $(R r8c))")" t "agent m1 finishes the confirmation rerun"
ok "$(q "SELECT c.verdict || ' ' || a.status || ' ' || (c.run_digest = '$(digest r8c)') FROM kbench_alert_confirmations c
         JOIN kbench_alerts a ON a.id = c.alert_id WHERE c.alert_id = $a1")" "confirmed confirmed true" \
  "an agent's confirmation rerun is judged, by its own run"
refused alice "SELECT _kernelindex.set_storing_job($j5)" 42501 "a user cannot name the job whose run is being stored"

echo "# 4. limits on registered devices; the routing's index"
refused gpu7 "SELECT kbench_agent_register('m4', 'host', 1, 'test', (SELECT jsonb_agg(jsonb_build_object('name', 'cuda:' || g, 'product', 'Fake ' || g)) FROM generate_series(0, 64) g))" \
  53400 "an agent role registering 65 devices is refused" "over kernelindex.agent_devices_per_role (64)"
S7=$(register gpu7 m4 "$(q "SELECT jsonb_agg(jsonb_build_object('name', 'cuda:' || g, 'product', 'Fake ' || g)) FROM generate_series(0, 59) g")")
ok "$(q "SELECT count(*) FROM kbench_agent_devices WHERE agent = 'm4'")" 60 "60 devices of one role are registered"
refused gpu7 "SELECT kbench_agent_register('m5', 'host', 1, 'test', (SELECT jsonb_agg(jsonb_build_object('name', 'cuda:' || g, 'product', 'Fake ' || g)) FROM generate_series(0, 4) g))" \
  53400 "... five more under another agent name of the same role are refused" "over kernelindex.agent_devices_per_role (64)"
ok "$(register gpu7 m4 "$CPU" | grep -c '^[0-9]')" 1 "the same name registering again counts its devices once"
q "ALTER SYSTEM SET kernelindex.agent_devices = 4" && q "SELECT pg_reload_conf()" >/dev/null
wait_for "SELECT current_setting('kernelindex.agent_devices') = '4'" 10
refused gpu7 "SELECT kbench_agent_register('m5', 'host', 1, 'test', '$CPU')" 53400 \
  "with kernelindex.agent_devices = 4 and 4 registered, a fifth is refused" "over kernelindex.agent_devices (4)"
q "ALTER SYSTEM RESET kernelindex.agent_devices" && q "SELECT pg_reload_conf()" >/dev/null
ok "$(psql -X -At -q -c "SET enable_seqscan = off" -c "EXPLAIN (COSTS OFF) SELECT d.device FROM kbench_agent_devices d
      WHERE _kernelindex.agent_names(d.agent, d.device, d.class, d.position = 0) @> ARRAY['cuda:Fake-GPU']" | grep -c 'Index Scan on kbench_agent_devices_names_idx')" 1 \
  "the route's lookup of a device name (_kernelindex.agent_route) is an index scan"
ok "$(grep -c "_kernelindex.agent_names(d.agent, d.device, d.class, d.position = 0) @> ARRAY\[p_device\]" sql/code/85_fleet.sql)" 1 \
  "... and _kernelindex.agent_route asks it so"
ok "$(psql -X -At -q -c "SET enable_seqscan = off" -c "EXPLAIN (COSTS OFF) SELECT count(*) FROM kbench_jobs j WHERE j.agent = 'm1' AND j.status = 'running'" | grep -c 'kbench_jobs_agent_running_idx')" 1 \
  "an agent's running jobs (kbench_workers, kbench_agent_status) are an index scan"
