#!/usr/bin/env bash
# cron.sh: the nightly sweep scheduled with pg_cron (Debian's postgresql-15-cron), as
# docs/ANALYTICS.md's recipe "A nightly sweep with pg_cron" sets it up: a login role in
# kbench_user with USAGE on schema cron schedules
#   cron.schedule('nightly', '0 3 * * *', $$SELECT count(*) FROM kbench_sweep_run(...)$$)
# and the row is checked.  A test cannot wait for 03:00, and pg_cron 1.4 (bookworm's) has
# no seconds syntax ('N seconds' came in 1.5): the very command of the 'nightly' row is
# scheduled a second time '* * * * *' and pg_cron runs it, as the role, within the next
# minute (cron.job_run_details says so).  The sweep's jobs run through the worker, one of
# them a step against a history of made-up fast runs (as test/suites/continuous.sh makes
# slowdowns), the alert opens and is confirmed, and kbench_check fails the gate (KB001).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh
if [ ! -f "$(pg_config --pkglibdir)/pg_cron.so" ]; then
  echo "ok - # SKIP needs=pg_cron postgresql-15-cron is not installed (bin/setup.sh installs it)"; exit 0
fi
trap 'ki_cluster_stop' EXIT
# the recipe's settings: pg_cron runs its jobs in background workers (no libpq login to
# configure) in the database kernelindex serves
ki_cluster_start "shared_preload_libraries = 'kernelindex,pg_cron'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "cron.database_name = 'kbench'" "cron.use_background_workers = on" \
                 "max_worker_processes = 16" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" -c "CREATE EXTENSION pg_cron" ||
  { echo "not ok - kernelindex and pg_cron created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
qn() { psql -X -At -q -v ON_ERROR_STOP=1 -U kbench_nightly -c "$1"; }
ok "$(q "SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'")" "1.4-1" "pg_cron 1.4 (Debian 12's postgresql-15-cron) is created beside kernelindex"
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 60 || echo "# the worker did not start"
idle() { wait_for "SELECT count(*) = 0 FROM kbench_jobs WHERE status IN ('queued', 'running')" "$1"; }
q "UPDATE kbench_alert_rules SET enabled = false WHERE seeded" >/dev/null
# a fixed count (adaptive false): an adaptive run on this shared CPU often ends unstable, and an
# unstable run opens no alert and gives no verdict on its own (docs/ANALYTICS.md; stopping.sh)
MED='{"warmup_ms": 1, "rep_ms": 5, "flush_bytes": 0, "adaptive": false}'

# the recipe's role: runs the sweep (kbench_user) and may schedule (USAGE on schema cron)
q "CREATE ROLE kbench_nightly LOGIN IN ROLE kbench_user; GRANT USAGE ON SCHEMA cron TO kbench_nightly" >/dev/null

# a history for one workload of the sweep: the worker's run, then ten made-up runs a thousand
# times faster in the same series, and a rule: the nightly run is a step up from them
q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 64, \"hidden\": 64, \"dtype\": \"fp32\"}', protocol => '$MED')" >/dev/null
idle 60
read -r impl wl proto env ns <<<"$(q "SELECT r.implementation_digest || ' ' || r.workload_digest || ' ' || r.protocol_digest || ' ' ||
  r.environment_digest || ' ' || r.primary_ns FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.status = 'passed' LIMIT 1")"
[ -n "${ns:-}" ] || echo "not ok - the baseline job ran"
for i in $(seq 10 19); do
  q "SELECT count(*) FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
       'metadata', jsonb_build_object('name', 'fast-$i'),
       'spec', jsonb_build_object('implementationDigest', '$impl', 'workloadDigest', '$wl', 'protocolDigest', '$proto',
         'environmentDigest', '$env', 'status', 'passed', 'observedAt', '2020-01-${i}T00:00:00Z',
         'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', $((ns / 1000 > 0 ? ns / 1000 : 1)))))))" >/dev/null
done
q "SELECT name FROM kbench_alert_rule('nightly-steps', 'percent', implementation => 'kbench-layer-norm-cpu', threshold => 50)" >/dev/null
ok "$(psql -X -At -q -v ON_ERROR_STOP=1 -c "SELECT kbench_check('kbench-layer-norm-cpu')" 2>&1)" \
   "ok: no open or confirmed regression alert (0 acknowledged, suppressed or refuted)" "before the nightly sweep the gate passes"

# the recipe's schedule, as the role
CMD="SELECT count(*) FROM kbench_sweep_run('layer_norm', 'forward', '{\"rows\": [64, 128], \"hidden\": 64, \"dtype\": \"fp32\"}', protocol => '$MED')"
nightly=$(qn "SELECT cron.schedule('nightly', '0 3 * * *', \$kb\$$CMD\$kb\$)" 2>&1)
ok "$(q "SELECT schedule || ' ' || username || ' ' || database || ' ' || active || ' ' || (command = \$kb\$$CMD\$kb\$) FROM cron.job WHERE jobid = '${nightly//\'/}'" 2>&1)" \
   "0 3 * * * kbench_nightly kbench true true" \
   "cron.schedule('nightly', '0 3 * * *', ...kbench_sweep_run...) by the recipe's role: the row in cron.job"
q "CREATE ROLE kbench_other LOGIN IN ROLE kbench_user" >/dev/null
ok "$(psql -X -At -q -U kbench_other -c "SELECT cron.schedule('x', '* * * * *', 'SELECT 1')" 2>&1 | grep -c 'permission denied for schema cron')" 1 \
   "a kbench_user without USAGE on schema cron cannot schedule"

# pg_cron runs the nightly row's own command (scheduled every minute: no test waits for 03:00)
now=$(qn "SELECT cron.schedule('nightly-now', '* * * * *', command) FROM cron.job WHERE jobname = 'nightly'")
if wait_for "SELECT count(*) > 0 FROM cron.job_run_details WHERE jobid = $now AND status = 'succeeded'" 150; then
  echo "ok - pg_cron ran the nightly sweep's command within a minute, as kbench_nightly"
else
  echo "not ok - pg_cron ran the nightly sweep's command: $(q "SELECT string_agg(status || ' ' || coalesce(return_message, ''), '; ') FROM cron.job_run_details")"
fi
qn "SELECT cron.unschedule('nightly-now')" >/dev/null
ok "$(q "SELECT return_message FROM cron.job_run_details WHERE jobid = $now AND status = 'succeeded' ORDER BY runid LIMIT 1")" "SELECT 1" \
   "its run details: the sweep's SELECT returned its row"
idle 120 || echo "# the sweep did not finish"
ok "$(q "SELECT string_agg(DISTINCT workload->>'rows', ' ') FROM kbench_jobs WHERE owner = 'kbench_nightly' AND status = 'passed'")" "128 64" \
   "the worker ran the sweep's jobs, owned by the role pg_cron ran it as"
alert=$(q "SELECT max(id) FROM kbench_alerts WHERE rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'nightly-steps')")
ok "$([ -n "$alert" ] && echo opened)" opened "the nightly run of rows=64, a thousand times slower than its history, opens an alert"
[ -n "$alert" ] && { wait_for "SELECT verdict IS NOT NULL FROM kbench_alert_confirmations WHERE alert_id = $alert" 60 || echo "# no verdict for alert $alert"; }
ok "$(q "SELECT status FROM kbench_alerts WHERE id = ${alert:-0}")" confirmed "its confirmation rerun confirms the step"
out=$(psql -X -q -v ON_ERROR_STOP=1 -c "SELECT kbench_check('kbench-layer-norm-cpu')" 2>&1); rc=$?
ok "$rc" 1 "the gate (psql -v ON_ERROR_STOP=1 -c \"SELECT kbench_check(...)\") fails after the nightly sweep"
case "$out" in *"kbench_check: 1 regression alert (1 confirmed)"*) echo "ok - kbench_check names the nightly sweep's confirmed alert";;
  *) echo "not ok - kbench_check names the nightly sweep's confirmed alert"; echo "$out" | sed 's/^/# /';; esac
