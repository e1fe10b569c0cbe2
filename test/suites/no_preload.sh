#!/usr/bin/env bash
# no_preload.sh: the extension without shared_preload_libraries: it loads,
# identity and catalog work, and the runner says what it needs.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
trap 'ki_cluster_stop' EXIT
# The postmaster-level settings in postgresql.conf without the preload: the
# GUCs exist either way, so loading the library warns about nothing.
ki_cluster_start "kernelindex.database = 'postgres'" "kernelindex.devices = 'cpu'" ||
  { echo "not ok - the cluster starts"; exit 1; }
out=$(psql -X -At -c "CREATE EXTENSION kernelindex" -c "SELECT kbench_canonical('{\"b\":1,\"a\":2}'::json)" 2>&1)
case "$out" in *'{"a":2,"b":1}'*) echo "ok - loads and canonicalizes without preload";; *) echo "not ok - loads without preload: $out";; esac
case "$out" in *WARNING*|*ERROR*|*FATAL*) echo "not ok - loading with kernelindex.database set and no preload: $out";;
  *'{"a":2,"b":1}'*) echo "ok - loading with kernelindex.database and kernelindex.devices set and no preload warns about nothing";;
  *) echo "not ok - loading with kernelindex.database set and no preload: $out";; esac
ok_show=$(psql -X -At -c "SELECT kbench_canonical(1::text)" -c "SHOW kernelindex.database" -c "SHOW kernelindex.devices" 2>&1 | tail -2 | tr '\n' ' ')
[ "$ok_show" = "postgres cpu " ] && echo "ok - the postmaster-level settings read back without preload" ||
  echo "not ok - SHOW kernelindex.database, kernelindex.devices without preload: $ok_show"
out=$(psql -X -At -c "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}')" 2>&1)
case "$out" in *"kernelindex workers are not running"*) echo "ok - kbench_run says the workers need the preload";; *) echo "not ok - kbench_run without preload: $out";; esac
out=$(psql -X -At -c "SELECT count(*) FROM kbench_workers" 2>&1)
[ "$out" = 0 ] && echo "ok - kbench_workers is empty without preload" || echo "not ok - kbench_workers without preload: $out"
out=$(psql -X -At -c "SELECT kbench_canonical(1::text)" -c "SHOW kernelindex.queue_limit" 2>&1 | tail -1)
[ "$out" = 1000 ] && echo "ok - reloadable settings exist without preload" || echo "not ok - kernelindex.queue_limit: $out"
