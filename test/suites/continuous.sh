#!/usr/bin/env bash
# continuous.sh: continuous benchmarking with the CPU worker: a sweep of 12
# workloads queued in one call and read back with kbench_sweep; an alert on
# a series this server can rerun queues a confirmation rerun that confirms a
# real slowdown and refutes a false one; NOTIFY kbench_alerts; the GUC that
# turns confirmation off; the CI gate failing and passing a psql job; alerts
# kept by pg_dump/pg_restore; who may silence an alert, for how long, and
# that no statement text hides a run from the rules (issue 24).  Slowdowns are made by ingesting runs with
# made-up timings into the worker's own series.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
DUMP=$(mktemp /tmp/kernelindex-continuous.XXXXXX)
trap 'ki_cluster_stop; rm -f "$DUMP"' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
source test/lib/tap.sh
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
# the series that are rerun: medians of many samples, so that a rerun on a busy machine stays
# within the margins below (a confirmation needs the rerun at over ~1/2 of the alerting run's time,
# by design; the made-up runs are 1000x off, so the rest holds within 100x of the machine's speed).
# A fixed count (adaptive false): on this shared CPU an adaptive run often stops at its cap,
# unstable, and an unstable run opens no alert and gives no verdict on its own (docs/ANALYTICS.md;
# that rule is test/suites/stopping.sh's); these series test the alerts of settled runs.
MED='{"warmup_ms": 1, "rep_ms": 5, "flush_bytes": 0, "adaptive": false}'
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"
idle() { wait_for "SELECT count(*) = 0 FROM kbench_jobs WHERE status IN ('queued', 'running')" "$1"; }
# the seeded rules watch every series; here only the rules made below count
q "UPDATE kbench_alert_rules SET enabled = false WHERE seeded" >/dev/null

# 1. a sweep: 3 rows x 2 hidden x 2 dtypes = 12 workloads in one call
jobs=$(q "SELECT string_agg(j::text, ',') FROM kbench_sweep_run('layer_norm', 'forward',
          '{\"rows\": [8, 16, 32], \"hidden\": [8, 16], \"dtype\": [\"fp32\", \"bf16\"]}', protocol => '$TINY') j")
ok "$(echo "$jobs" | tr ',' '\n' | grep -c .)" 12 "kbench_sweep_run queues the 12 combinations and returns their job ids"
idle 120 || echo "# the sweep did not finish"
ok "$(q "SELECT count(*) FILTER (WHERE status = 'passed') || ' ' || count(DISTINCT workload) FROM kbench_jobs WHERE id IN ($jobs)")" \
   "12 12" "the sweep's 12 jobs ran and passed, one per workload"
ok "$(q "SELECT count(*) || ' ' || count(DISTINCT axis_value) || ' ' || count(DISTINCT fixed_axes || jsonb_build_object('dtype', dtype))
         FROM kbench_sweep('layer_norm', 'forward', 'rows', implementation => 'kbench-layer-norm-cpu')")" "12 3 4" \
   "kbench_sweep reads the sweep back: 3 values of rows for each of 4 (hidden, dtype)"
ok "$(q "SELECT string_agg(workload->>'rows' || '/' || (workload->>'hidden') || '/' || (workload->>'dtype'), ' ' ORDER BY id)
         FROM kbench_jobs WHERE id IN ($jobs)")" \
   "8/8/fp32 16/8/fp32 32/8/fp32 8/16/fp32 16/16/fp32 32/16/fp32 8/8/bf16 16/8/bf16 32/8/bf16 8/16/bf16 16/16/bf16 32/16/bf16" \
   "the jobs come in the grid's order (axes by name, the last varying fastest; values as given)"
ok "$(q "SELECT count(*) FROM kbench_sweep_run('layer_norm', 'forward', '{\"rows\": [8, 16], \"hidden\": 8}',
          implementations => '{cpu, cpu}', protocol => '$TINY')")" 4 "a sweep over two implementations queues each combination for each"
idle 60

# a paired A/B comparison: one job, both sides interleaved on the worker's device (the rest
# of it, the fake GPU, cancel and timeout: test/suites/compare.sh)
cmp=$(q "SELECT kbench_compare('layer_norm', 'forward', '{\"rows\": 48, \"hidden\": 64, \"dtype\": \"fp32\"}', 'cpu', 'cpu', rounds => 4, protocol => '$TINY')")
ok "$(q "SELECT count(*) FROM kbench_jobs j JOIN kbench_comparisons c ON c.job_id = j.id WHERE c.id = $cmp")" 1 "kbench_compare queues one job for 4 rounds"
idle 60
ok "$(q "SELECT status || ' ' || rounds_done || ' ' || (ratio_low <= ratio AND ratio <= ratio_high) || ' ' || (verdict IN ('same', 'ambiguous', 'faster', 'slower'))
            || ' ' || (a_run IS NOT NULL AND b_run IS NOT NULL AND a_run <> b_run)
         FROM kbench_comparison($cmp)")" "done 4 true true true" \
   "kbench_comparison: both sides' runs, the ratio of medians inside its bootstrap interval, a verdict"
ok "$(q "SELECT round((b_median_ns / a_median_ns)::numeric, 6) = round(ratio::numeric, 6) FROM kbench_comparison($cmp)")" t \
   "the ratio is B's median over A's"
echo "# A/B cpu vs cpu: $(q "SELECT format('ratio %s [%s, %s] %s', round(ratio::numeric, 3), round(ratio_low::numeric, 3), round(ratio_high::numeric, 3), verdict) FROM kbench_comparison($cmp)")"

# the worker's series for a workload: its run, digests and time
series_of() {  # rows -> "impl wl proto env primary_ns"
  q "SELECT r.implementation_digest || ' ' || r.workload_digest || ' ' || r.protocol_digest || ' ' || r.environment_digest
            || ' ' || r.primary_ns FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
      WHERE j.workload = jsonb_build_object('rows', $1, 'hidden', 64, 'dtype', 'fp32') AND j.status = 'passed' ORDER BY j.id LIMIT 1"
}
# ingest a run with a made-up time into a series
fake() {  # impl wl proto env ns observed_at name
  q "SELECT count(*) FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
       'metadata', jsonb_build_object('name', '$7'),
       'spec', jsonb_build_object('implementationDigest', '$1', 'workloadDigest', '$2', 'protocolDigest', '$3',
         'environmentDigest', '$4', 'status', 'passed', 'observedAt', '$6',
         'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', $5)))))" >/dev/null
}
run_job() {  # rows
  q "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', $1, 'hidden', 64, 'dtype', 'fp32'), protocol => '$MED')" >/dev/null
  idle 60
}

# 2. a real slowdown: ten runs at a thousandth of the worker's time, then the worker again
run_job 64
read -r impl wl proto env ns <<<"$(series_of 64)"
for i in $(seq 10 19); do fake "$impl" "$wl" "$proto" "$env" $((ns / 1000 > 0 ? ns / 1000 : 1)) "2020-01-$i""T00:00:00Z" "fast-64-$i"; done
q "SELECT name, confirm FROM kbench_alert_rule('cpu-slowdowns', 'percent', implementation => 'kbench-layer-norm-cpu', threshold => 50)" >/dev/null
alerts_before=$(q "SELECT count(*) FROM kbench_alerts")
run_job 64
ok "$(q "SELECT count(*) - $alerts_before FROM kbench_alerts WHERE rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")" 1 \
   "the worker's run a thousand times slower than the baseline opens an alert"
alert=$(q "SELECT max(id) FROM kbench_alerts WHERE rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")
wait_for "SELECT verdict IS NOT NULL FROM kbench_alert_confirmations WHERE alert_id = $alert" 60 || echo "# no verdict for alert $alert"
ok "$(q "SELECT j.status || ' ' || j.operation || ' ' || (j.workload->>'rows') || ' ' || c.verdict || ' ' || a.status
         FROM kbench_alert_confirmations c JOIN kbench_jobs j ON j.id = c.job_id JOIN kbench_alerts a ON a.id = c.alert_id
         WHERE c.alert_id = $alert")" "passed layer_norm 64 confirmed confirmed" \
   "the alert queued a confirmation rerun of the same request, which confirmed it"
ok "$(q "SELECT c.run_digest = j.run_digest AND c.change_pct > 9900 FROM kbench_alert_confirmations c JOIN kbench_jobs j ON j.id = c.job_id WHERE c.alert_id = $alert")" t \
   "the verdict comes from the rerun's own run, slower than the baseline again"
ok "$(q "SELECT count(*) FROM kbench_alerts a WHERE a.run_digest = (SELECT run_digest FROM kbench_alert_confirmations WHERE alert_id = $alert)")" 0 \
   "the rerun is judged, not checked against the rules again"

# 3. the CI gate fails the job, then passes once the alert is acknowledged
out=$(psql -X -q -v ON_ERROR_STOP=1 -c "SELECT kbench_check('kbench-layer-norm-cpu')" 2>&1); rc=$?
ok "$rc" 1 "psql -v ON_ERROR_STOP=1 -c \"SELECT kbench_check(...)\" fails on the confirmed regression"
case "$out" in *"kbench_check: 1 regression alert (1 confirmed)"*) echo "ok - the error says what blocks";;
  *) echo "not ok - the error says what blocks"; echo "$out" | sed 's/^/# /';; esac
ok "$(psql -X -At -q -c "DO \$\$BEGIN PERFORM kbench_check('kbench-layer-norm-cpu'); EXCEPTION WHEN OTHERS THEN RAISE NOTICE '%', SQLSTATE; END\$\$" 2>&1)" \
   "NOTICE:  KB001" "its SQLSTATE is KB001"
q "SELECT kbench_alert_acknowledge($alert, 'expected: the reference got the slower exact sum')" >/dev/null
out=$(psql -X -At -q -v ON_ERROR_STOP=1 -c "SELECT kbench_check('kbench-layer-norm-cpu')" 2>&1); rc=$?
ok "$rc $out" "0 ok: no open or confirmed regression alert (1 acknowledged, suppressed or refuted)" "the gate passes once the alert is acknowledged"

# 4. a false alarm: one made-up slow run among the worker's own; the rerun refutes it, with NOTIFY
run_job 128
read -r impl wl proto env ns <<<"$(series_of 128)"
for i in $(seq 10 19); do fake "$impl" "$wl" "$proto" "$env" "$ns" "2020-01-$i""T00:00:00Z" "same-128-$i"; done
out=$(psql -X -q -c "LISTEN kbench_alerts" -c "SELECT 1 FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1',
       'kind', 'BenchmarkRun', 'metadata', jsonb_build_object('name', 'slow-128'),
       'spec', jsonb_build_object('implementationDigest', '$impl', 'workloadDigest', '$wl', 'protocolDigest', '$proto',
         'environmentDigest', '$env', 'status', 'passed', 'observedAt', '2030-01-01T00:00:00Z',
         'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', $((ns * 1000)))))))" \
       -c "SELECT 1" 2>&1)
case "$out" in *'Asynchronous notification "kbench_alerts" with payload "{"id" : '*', "status" : "open", "rule_id" : '*'"family" : "kbench-layer-norm-cpu"'*) echo "ok - NOTIFY kbench_alerts when an alert opens";;
  *) echo "not ok - NOTIFY kbench_alerts when an alert opens"; echo "$out" | sed 's/^/# /';; esac
alert=$(q "SELECT a.id FROM kbench_alerts a JOIN kbench_runs r ON r.digest = a.run_digest
           WHERE r.name = 'slow-128' AND a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")
wait_for "SELECT verdict IS NOT NULL FROM kbench_alert_confirmations WHERE alert_id = $alert" 60 || echo "# no verdict for alert $alert"
ok "$(q "SELECT c.verdict || ' ' || a.status || ' ' || (abs(c.change_pct) < 10000) FROM kbench_alert_confirmations c
         JOIN kbench_alerts a ON a.id = c.alert_id WHERE c.alert_id = $alert")" "refuted refuted true" \
   "the rerun of a false alarm refutes it"
out=$(psql -X -At -q -v ON_ERROR_STOP=1 -c "SELECT kbench_check('kbench-layer-norm-cpu')" 2>&1)
ok "$out" "ok: no open or confirmed regression alert (2 acknowledged, suppressed or refuted)" "a refuted alert does not block the gate"

# 5. kernelindex.confirm_alerts = off: the alert opens, nothing is queued
run_job 256
read -r impl wl proto env ns <<<"$(series_of 256)"
jobs_before=$(q "SELECT count(*) FROM kbench_jobs")
for i in $(seq 10 19); do fake "$impl" "$wl" "$proto" "$env" "$ns" "2020-01-$i""T00:00:00Z" "same-256-$i"; done
psql -X -q -v ON_ERROR_STOP=1 -c "SET kernelindex.confirm_alerts = off" -c "SELECT 1 FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1',
       'kind', 'BenchmarkRun', 'metadata', jsonb_build_object('name', 'slow-256'),
       'spec', jsonb_build_object('implementationDigest', '$impl', 'workloadDigest', '$wl', 'protocolDigest', '$proto',
         'environmentDigest', '$env', 'status', 'passed', 'observedAt', '2030-01-01T00:00:00Z',
         'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', $((ns * 20)))))))" >/dev/null
ok "$(q "SELECT count(*) || ' ' || count(c.alert_id) FROM kbench_alerts a JOIN kbench_runs r ON r.digest = a.run_digest
         LEFT JOIN kbench_alert_confirmations c ON c.alert_id = a.id
         WHERE r.name = 'slow-256' AND a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")" "1 0" \
   "with kernelindex.confirm_alerts off the alert opens and no rerun is queued"
ok "$(q "SELECT count(*) - $jobs_before FROM kbench_jobs")" 0 "no job was queued"
# the Liger history cannot be rerun here: a confirming rule over it queues nothing
chmod a+r data/liger/all_benchmark_data.csv 2>/dev/null
q "SELECT name FROM kbench_alert_rule('liger-confirm', 'percent', threshold => 50)" >/dev/null
q "SELECT count(*) FROM kbench_import_liger(pg_read_file('$(pwd)/data/liger/all_benchmark_data.csv'))" >/dev/null
ok "$(q "SELECT count(*) > 10 AND count(c.alert_id) = 0 FROM kbench_alerts a JOIN kbench_runs r ON r.digest = a.run_digest
         LEFT JOIN kbench_alert_confirmations c ON c.alert_id = a.id WHERE r.source = 'liger-kernel-bench'") $(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" \
   "t 0" "alerts on the imported Liger history queue no rerun (nothing of it runs here)"

# a run landing through a COPY (SELECT kbench_ingest(...)) TO STDOUT is checked like any other
# (only a COPY into kbench_runs itself, a restore, is not)
read -r impl wl proto env ns <<<"$(series_of 256)"
cwl="sha256:$(echo -n 'copy series' | sha256sum | cut -c1-64)"
for i in $(seq 10 19); do fake "$impl" "$cwl" "$proto" "$env" "$ns" "2020-01-$i""T00:00:00Z" "copy-$i"; done
psql -X -q -v ON_ERROR_STOP=1 -o /dev/null -c "COPY (SELECT * FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1',
       'kind', 'BenchmarkRun', 'metadata', jsonb_build_object('name', 'slow-copy'),
       'spec', jsonb_build_object('implementationDigest', '$impl', 'workloadDigest', '$cwl', 'protocolDigest', '$proto',
         'environmentDigest', '$env', 'status', 'passed', 'observedAt', '2030-01-01T00:00:00Z',
         'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', $((ns * 20)))))))) TO STDOUT"
ok "$(q "SELECT count(*) FROM kbench_alerts a JOIN kbench_runs r ON r.digest = a.run_digest
         WHERE r.name = 'slow-copy' AND a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")" 1 \
   "a run ingested inside COPY (SELECT ...) TO STDOUT opens its alert too"

# a COPY kbench_runs TO STDOUT before the ingest, in the same query string, does not hide its run
# from the rules either (issue 24, item 7: a restore is told by the parsed statement, not its text)
cwl="sha256:$(echo -n 'copy-to series' | sha256sum | cut -c1-64)"
for i in $(seq 10 19); do fake "$impl" "$cwl" "$proto" "$env" "$ns" "2020-01-$i""T00:00:00Z" "copy-to-$i"; done
psql -X -q -v ON_ERROR_STOP=1 -o /dev/null -c "COPY kbench_runs TO STDOUT; SELECT * FROM kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1',
       'kind', 'BenchmarkRun', 'metadata', jsonb_build_object('name', 'slow-copy-to'),
       'spec', jsonb_build_object('implementationDigest', '$impl', 'workloadDigest', '$cwl', 'protocolDigest', '$proto',
         'environmentDigest', '$env', 'status', 'passed', 'observedAt', '2030-01-01T00:00:00Z',
         'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', $((ns * 20)))))))"
ok "$(q "SELECT count(*) FROM kbench_alerts a JOIN kbench_runs r ON r.digest = a.run_digest
         WHERE r.name = 'slow-copy-to' AND a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")" 1 \
   "a run ingested after COPY kbench_runs TO STDOUT in one query string opens its alert"

# 7. who silences an alert, and for how long (issue 24, item 11): a kbench_user only alerts on
# her own jobs' runs, kbench_admin any; a suppression lapses within 90 days
source test/lib/attacks.sh
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE ROLE alice LOGIN IN ROLE kbench_user" -c "CREATE ROLE mallory LOGIN IN ROLE kbench_user" \
     -c "CREATE ROLE boss LOGIN IN ROLE kbench_admin"
run_job 512
read -r impl wl proto env ns <<<"$(series_of 512)"
# (the baseline lands with the rules off, as test 2's before its rule: landing before the job's run, it would
# open the series' alert on that run)
q "UPDATE kbench_alert_rules SET enabled = false WHERE name IN ('cpu-slowdowns', 'liger-confirm')" >/dev/null
for i in $(seq 10 19); do fake "$impl" "$wl" "$proto" "$env" $((ns / 1000 > 0 ? ns / 1000 : 1)) "2020-01-$i""T00:00:00Z" "fast-512-$i"; done
q "UPDATE kbench_alert_rules SET enabled = true WHERE name IN ('cpu-slowdowns', 'liger-confirm')" >/dev/null
aj=$(psql -X -At -q -v ON_ERROR_STOP=1 -U alice -c "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 512, 'hidden', 64, 'dtype', 'fp32'), protocol => '$MED')")
idle 60
mine=$(q "SELECT min(a.id) FROM kbench_alerts a JOIN kbench_jobs j ON j.run_digest = a.run_digest WHERE j.id = $aj
          AND a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")
theirs=$(q "SELECT a.id FROM kbench_alerts a JOIN kbench_runs r ON r.digest = a.run_digest
            WHERE r.name = 'slow-copy-to' AND a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'cpu-slowdowns')")
ok "$([ -n "$mine" ] && [ -n "$theirs" ] && echo t)" t "an alert on alice's job's run and one on an ingested run"
attack_refused mallory 42501 "SELECT kbench_alert_suppress($mine, 'not mine', now() + interval '1 day')" "a kbench_user suppresses an alert on another role's job's run"
attack_refused mallory 42501 "SELECT kbench_alert_acknowledge($mine, 'not mine')" "a kbench_user acknowledges an alert on another role's job's run"
attack_refused alice 42501 "SELECT kbench_alert_suppress($theirs, 'not mine', now() + interval '1 day')" "a kbench_user suppresses an alert on an ingested run"
blocking="SELECT count(*) FROM kbench_alert_status WHERE status IN ('open', 'confirmed')"
before=$(q "$blocking")
for who in mallory alice; do
  psql -X -q -U "$who" -c "DO \$\$DECLARE a record; BEGIN FOR a IN SELECT id FROM kbench_alert_status WHERE status IN ('open', 'confirmed') LOOP
      BEGIN PERFORM kbench_alert_suppress(a.id, 'noise', 'infinity'); EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP; END\$\$" 2>/dev/null
done
attack "a kbench_user (and the owner of one of them) suppresses every blocking alert until infinity: none is silenced" "$(q "$blocking")" "$before"
out=$(psql -X -q -v ON_ERROR_STOP=1 -c "SELECT kbench_check()" 2>&1); rc=$?
attack "... and the gate still fails" "$rc" 1
bad_input alice 22023 "SELECT kbench_alert_suppress($mine, 'forever', 'infinity')" "a suppression until infinity"
bad_input alice 22023 "SELECT kbench_alert_suppress($mine, 'for a season', now() + interval '91 days')" "a suppression of more than 90 days"
bad_input alice 22023 "SELECT kbench_alert_acknowledge($mine, 'forever', 'infinity')" "an acknowledgement until infinity (NULL is for good)"
ok "$(psql -X -At -q -v ON_ERROR_STOP=1 -U alice -c "SELECT status || ' ' || changed_by FROM kbench_alert_suppress($mine, 'my change, being fixed', now() + interval '90 days' - interval '1 minute')")" \
   "suppressed alice" "alice suppresses the alert on her own job's run, for up to 90 days"
ok "$(psql -X -At -q -v ON_ERROR_STOP=1 -U boss -c "SELECT status || ' ' || changed_by FROM kbench_alert_suppress($theirs, 'the lab machine is shared this week', now() + interval '7 days')")" \
   "suppressed boss" "kbench_admin suppresses any alert"
attacks_summary

# 6. pg_dump/pg_restore keeps the alerts, their rules and confirmations as they were
idle 60
fingerprint="SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
  SELECT format('%s %s %s %s %s %s %s', a.id, a.rule_id, a.run_digest, a.runs, a.status, a.verdict, a.reason) AS x FROM kbench_alerts a
  UNION ALL SELECT format('%s %s %s', c.alert_id, c.job_id, c.verdict) FROM kbench_alert_confirmations c
  UNION ALL SELECT format('%s %s %s %s', r.id, r.name, r.method, r.enabled) FROM kbench_alert_rules r WHERE NOT r.seeded) y"
before=$(q "$fingerprint")
pg_dump -Fc -d kbench -f "$DUMP" 2>&1 | sed 's/^/# /'
createdb restored && pg_restore -d restored "$DUMP" 2>&1 | sed 's/^/# /'
after=$(psql -X -At -q -v ON_ERROR_STOP=1 -d restored -c "$fingerprint")
ok "$after $(q "SELECT count(*) > 20 FROM kbench_alerts")" "$before t" "pg_dump/pg_restore keeps the alerts, rules and confirmations unchanged"
