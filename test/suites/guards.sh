#!/usr/bin/env bash
# guards.sh: what the catalog and the queue promise, tested by behaviour on a
# server with three workers on one device (the CPU):
#   - append-only: DELETE and TRUNCATE refused on every catalog table, the
#     measurements included; a retraction and a supersession are permanent;
#   - the claim race: jobs taken by several workers of one device, and by
#     concurrent claimers that hold their claim open, each run exactly once
#     (no job with attempts > 1, no job claimed twice);
#   - NOTIFY kbench_jobs for every way a job ends (no payload: every role may
#     LISTEN; the job is the only one in flight, so the notification is its);
#   - a job's deadline is its timeout: stopped within 2 s of it.
# Prints TAP lines.  Waits are bounded by counts of polls, never by the
# machine's speed: a slow machine takes longer, it does not fail.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
trap 'ki_cluster_stop' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu, cpu, cpu'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
source test/lib/tap.sh
# the error of a statement that must fail (its first line), or "no error"
err() { local o; o=$(psql -X -At -q -v ON_ERROR_STOP=1 -c "$1" 2>&1) && echo "no error: $o" || printf '%s\n' "$o" | grep -m1 ERROR; }
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
LONG='{"warmup_ms": 0, "rep_ms": 20000, "flush_bytes": 0, "max_samples": 100000000}'
BIG='{"rows": 2048, "hidden": 2048, "dtype": "fp32"}'

wait_for "SELECT count(*) = 3 FROM kbench_workers WHERE state = 'idle' AND pid IS NOT NULL" 60 ||
  echo "# three workers did not start: $(q "SELECT string_agg(device || ' ' || state, ', ') FROM kbench_workers")"

# ---------------------------------------------------------------- append-only
# three passed runs of our own to retract and supersede
for r in 8 9 10; do
  q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": $r, \"hidden\": 8}', protocol => '$TINY')" >/dev/null
done
wait_for "SELECT count(*) = 3 FROM kbench_jobs WHERE status = 'passed'" 60
psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
\set s `cat test/data/seeds/000_04bb0f8f111ec531.json`
SELECT count(*) FROM kbench_ingest(:'s'::json);
SQL
for t in kbench_runs kbench_measurements kbench_operations kbench_workloads kbench_implementations kbench_protocols kbench_environments; do
  ok "$(q "SELECT count(*) > 0 FROM $t") $(err "DELETE FROM $t")" "t ERROR:  cannot delete from $t: the catalog is append-only" \
    "DELETE FROM $t (which has rows) is refused"
done
for t in kbench_runs kbench_measurements; do
  ok "$(err "TRUNCATE $t CASCADE")" "ERROR:  cannot truncate $t: the catalog is append-only" "TRUNCATE $t is refused"
done
ok "$(q "SELECT count(*) FROM kbench_measurements m WHERE NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = m.run_digest)")" 0 \
  "... and no measurement lost its run"

read -r A B C <<<"$(q "SELECT string_agg(run_digest, ' ' ORDER BY id) FROM kbench_jobs WHERE status = 'passed'")"
q "SELECT 1 FROM kbench_supersede('$A', '$B', 'rerun with a fixed harness')" >/dev/null
ok "$(err "SELECT kbench_supersede('$A', '$C', 'another')")" "ERROR:  run $A is already superseded by $B" \
  "a supersession is permanent: superseding the run again is refused"
ok "$(err "UPDATE kbench_runs SET superseded_by = NULL, supersession_reason = NULL WHERE digest = '$A'")" \
  "ERROR:  cannot change the retraction or supersession of kbench_runs $A by UPDATE" "... and undoing it by UPDATE"
ok "$(q "SELECT superseded_by FROM kbench_runs WHERE digest = '$A'")" "$B" "... which still points to the run that superseded it"
q "SELECT 1 FROM kbench_retract('$C', 'measured on a throttled host')" >/dev/null
ok "$(err "SELECT kbench_retract('$C', 'nothing happened')")" \
  "ERROR:  run $C is already retracted" "a retraction is permanent: retracting the run again (another reason) is refused"
ok "$(err "UPDATE kbench_runs SET retracted_at = NULL, retraction_reason = NULL WHERE digest = '$C'")" \
  "ERROR:  cannot change the retraction or supersession of kbench_runs $C by UPDATE" "... and undoing it by UPDATE"

# ---------------------------------------------------------------- the claim race
# Three workers of one device take 150 jobs queued at once.
q "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 8 + g % 7, 'hidden', 8 * (1 + g / 7)), protocol => '$TINY')
     FROM generate_series(1, 150) g" >/dev/null
if wait_for "SELECT count(*) = 0 FROM kbench_jobs WHERE status IN ('queued', 'running')" 600; then
  ok "$(q "SELECT count(*) FILTER (WHERE attempts <> 1) || ' ' || count(*) FILTER (WHERE status <> 'passed') FROM kbench_jobs")" "0 0" \
    "three workers on one device: every job ran exactly once (attempts = 1) and passed"
  ok "$(q "SELECT count(DISTINCT worker_pid) > 1 FROM kbench_jobs")" t "... and more than one worker took jobs (the claims raced)"
  ok "$(q "SELECT count(DISTINCT run_digest) FROM kbench_jobs")" 153 "... 153 distinct runs recorded"
else
  echo "not ok - 150 jobs on three workers finished"
fi

# Concurrent claimers that keep their claim open a while: without SKIP
# LOCKED the others would wait for the same job and then take it again.
q "CREATE TABLE claims (session int, id bigint)"
q "INSERT INTO kbench_jobs (operation, mode, workload, device, timeout, owner)
   SELECT 'layer_norm', 'forward', jsonb_build_object('rows', 8, 'hidden', 8), 'race', '1 minute', 'postgres'
     FROM generate_series(1, 60)" >/dev/null
for s in 1 2 3 4; do
  for i in $(seq 1 15); do
    echo "BEGIN; INSERT INTO claims SELECT $s, id FROM _kernelindex.claim('race', $s); SELECT pg_sleep(0.02); COMMIT;"
  done | psql -X -q >/dev/null 2>&1 &
done
wait
ok "$(q "SELECT count(*) || ' ' || count(DISTINCT id) FROM claims")" "60 60" "4 concurrent claimers: 60 claims, 60 different jobs"
ok "$(q "SELECT count(*) FILTER (WHERE attempts = 1 AND status = 'running') FROM kbench_jobs WHERE device = 'race'")" 60 \
  "... each claimed once (attempts = 1)"
q "DELETE FROM kbench_jobs WHERE device = 'race'" >/dev/null

# ---------------------------------------------------------------- NOTIFY, every ending
# LISTEN, queue, wait for the end, then print the job's id and final status:
# one notification must have come (the payload is empty by design).
notify_of() { # SQL that queues a job (its id), [SQL run after queueing], [begin: both in one transaction]
  psql -X -q -v ON_ERROR_STOP=1 <<SQL 2>&1
LISTEN kbench_jobs;
${3:+BEGIN;}
SELECT ($1) AS job \gset
${2:-}
${3:+COMMIT;}
SELECT status AS final FROM kbench_wait(:job, '60 seconds') \gset
SELECT pg_sleep(0.2);
\echo job :job :final
SQL
}
check_notify() { # description, wanted status, output of notify_of
  local job final
  read -r _ job final <<<"$(printf '%s\n' "$3" | grep '^job ' | tail -1)"
  if [ "$final" = "$2" ] && ! grep -q 'running before the cancel: false' <<<"$3" &&
     [ "$(grep -c 'Asynchronous notification "kbench_jobs" received' <<<"$3")" = 1 ]; then
    echo "ok - NOTIFY kbench_jobs when a job ends $2$1 (one notification, job $job)"
  else
    echo "not ok - NOTIFY kbench_jobs when a job ends $2$1 (job '$job', ended '$final')"; printf '%s\n' "$3" | sed 's/^/# /' | head -8
  fi
}
check_notify "" passed "$(notify_of "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 11, \"hidden\": 8}', protocol => '$TINY')")"
check_notify "" timeout "$(notify_of "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG', timeout => '1 second')")"
# cancelled while running (waited for, however long the start takes) and before it started (in the
# queueing transaction, so no worker can have it)
check_notify " while running" canceled "$(notify_of "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')" \
  "SELECT pg_catalog.set_config('guards.job', :'job', false);
DO \$\$ BEGIN
  FOR i IN 1..6000 LOOP
    EXIT WHEN (SELECT status FROM kbench_jobs WHERE id = current_setting('guards.job')::bigint) = 'running';
    PERFORM pg_sleep(0.1);
  END LOOP;
END \$\$;
SELECT 'running before the cancel: ' || (status = 'running') AS r FROM kbench_jobs WHERE id = :job;
SELECT kbench_cancel(:job);")"
check_notify " before it started" canceled "$(notify_of "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG')" \
  "SELECT kbench_cancel(:job);" begin)"

# ---------------------------------------------------------------- the deadline
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$BIG', protocol => '$LONG', timeout => '1 second')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 60
ok "$(q "SELECT status || ' ' || (finished_at - started_at < interval '1 s' + interval '2 s') FROM kbench_jobs WHERE id = $job")" \
  "timeout true" "a job with a 1 s timeout is stopped within 2 s of it"
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" 0 "nothing left queued or running"
