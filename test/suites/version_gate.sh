#!/usr/bin/env bash
# version_gate.sh: the library serves only the SQL of its own version
# (src/extension.c, ki_ext_require_current).  For every released version
# (test/lib/released.sh: each built from its commit in sql/updates/RELEASES):
#   - installed with the current library, a call that reaches the
#     extension's objects fails with SQLSTATE 55000, "kernelindex V is
#     installed but the library is CUR", and the hint to run ALTER EXTENSION
#     kernelindex UPDATE; a function that reads none of them still works;
#   - the worker skips the database with one LOG line (not one per naptime,
#     not a crash), and leaves a job queued in it alone;
#   - ALTER EXTENSION kernelindex UPDATE runs (its scripts call the library),
#     the worker then serves the database: the queued job runs, the call
#     works.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
trap 'ki_cluster_stop' EXIT
CUR=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control)
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'gate'" \
                 "kernelindex.devices = 'cpu'" "log_min_messages = log" || { echo "not ok - the cluster starts"; exit 1; }
source test/lib/tap.sh
source test/lib/released.sh
export PGDATABASE=gate
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1" 2>&1; }
LOG=$KI_CLUSTER_DIR/server.log
CSV="$(pwd)/data/liger/all_benchmark_data.csv"
chmod a+r "$CSV" 2>/dev/null
PROTO='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'

for old in $(ki_released_versions); do
  # the worker of a dropped database exits for good: a restart gives the new one its worker
  ki_cluster_restart
  createdb gate
  if ! ki_install_released "$old" || ! q "CREATE EXTENSION kernelindex VERSION '$old'" >/dev/null; then
    echo "not ok - $old installs from its released script"; dropdb --force gate; continue
  fi
  skip_line="kernelindex worker skips database \"gate\": kernelindex $old is installed but the library is $CUR"

  # a call: the error, its SQLSTATE and its hint
  out=$(psql -X -q -v VERBOSITY=verbose -c "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}')" 2>&1)
  ok "$(echo "$out" | grep -E '^(ERROR|HINT):' | tr '\n' '|')" \
     "ERROR:  55000: kernelindex $old is installed but the library is $CUR|HINT:  Run ALTER EXTENSION kernelindex UPDATE.|" \
     "$old with library $CUR: kbench_run fails with 55000 and the hint to update"
  ok "$(psql -X -At -q -c "SELECT count(*) FROM kbench_import_liger(pg_read_file('$CSV'))" 2>&1 | head -1)" \
     "ERROR:  kernelindex $old is installed but the library is $CUR" "$old: an import gets the same error"
  ok "$(q "SELECT kbench_canonical('{\"b\": 1, \"a\": 2}'::jsonb)")" '{"a":2,"b":1}' \
     "$old: a function that reads none of the extension's objects still works"

  # the worker: skips the database with one LOG line, the queued job stays queued
  id=$(q "INSERT INTO kbench_jobs (operation, mode, workload, device, protocol, timeout, owner)
          VALUES ('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8, \"dtype\": \"fp32\"}', 'cpu', '$PROTO', '60 s', 'postgres')
          RETURNING id")
  for i in $(seq 1 300); do grep -qF "$skip_line" "$LOG" && break; sleep 0.1; done
  exits=$(grep -c 'background worker "kernelindex worker" (PID [0-9]*) \(exited\|was terminated\)' "$LOG")
  # the worker looks again every second: a line (or a restart) per look would be several by now
  sleep 3
  ok "$(grep -cF "$skip_line" "$LOG")" 1 "$old: the worker logs once that it skips the database"
  ok "$(grep -c 'background worker "kernelindex worker" (PID [0-9]*) \(exited\|was terminated\)' "$LOG")" "$exits" \
     "$old: the worker waits for the update (no exit, no restart loop)"
  ok "$(q "SELECT status FROM kbench_jobs WHERE id = $id")" queued "$old: the job queued in the database is left alone"
  ok "$(grep -A1 -F "$skip_line" "$LOG" | grep -c 'HINT:  Run ALTER EXTENSION kernelindex UPDATE; the worker serves the database then.')" 1 \
     "$old: the worker's line says how to have it served"

  # the update runs, and the database is served
  if q "ALTER EXTENSION kernelindex UPDATE" >/dev/null; then
    ok "$(q "SELECT extversion FROM pg_extension WHERE extname = 'kernelindex'")" "$CUR" "$old updates to $CUR with the library's calls in its scripts"
  else
    echo "not ok - ALTER EXTENSION kernelindex UPDATE from $old"; q "ALTER EXTENSION kernelindex UPDATE" | sed 's/^/# /'
  fi
  for i in $(seq 1 600); do
    [ "$(q "SELECT status <> 'queued' AND status <> 'running' FROM kbench_jobs WHERE id = $id")" = t ] && break
    sleep 0.1
  done
  ok "$(q "SELECT status || ' ' || (run_digest IS NOT NULL) FROM kbench_jobs WHERE id = $id")" "passed true" \
     "$old updated: the worker serves the database, the queued job ran"
  id2=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 16}', protocol => '$PROTO')")
  case "$id2" in
    [0-9]*) wait_for "SELECT status = 'passed' FROM kbench_jobs WHERE id = $id2" 60
            ok "$(q "SELECT status FROM kbench_jobs WHERE id = $id2")" passed "$old updated: kbench_run queues a job, and it runs";;
    *) echo "not ok - $old updated: kbench_run queues a job"; echo "$id2" | sed 's/^/# /';;
  esac
  dropdb --force gate
done
