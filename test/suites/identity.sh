#!/usr/bin/env bash
# identity.sh: one identity for an implementation (issue 29 item 1).  Liger's
# imported history and the runs measured here by kbench's built-in
# huggingface are what 'huggingface' names; a C library registered in SQL
# and the same library run through the CLI (the same entry and content
# digest) are one implementation; an analytics function whose names
# resolve but whose answer is empty says why in a NOTICE.  On the CPU,
# through the background worker.  Needs Debian's python3-torch
# (/usr/bin/python3).  TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
PY=/usr/bin/python3
if ! $PY -c 'import torch' 2>/dev/null; then
  echo "ok - # SKIP needs=python3-torch"
  exit 0
fi
source bin/pgcluster.sh
IMPL_DIR=$(mktemp -d /tmp/kbench-identity.XXXXXX)
trap 'ki_cluster_stop; rm -rf "$IMPL_DIR"' EXIT
chmod 755 "$IMPL_DIR"
cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Ikernels -o "$IMPL_DIR/libln.so" test/byo/ln_lib.c -lm ||
  { echo "not ok - the test library builds"; exit 1; }
chmod -R a+rX "$IMPL_DIR"
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.python = '$PY'" \
                 "kernelindex.implementation_directory = '$IMPL_DIR'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
qe() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1" 2>&1; }
source test/lib/tap.sh
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
SHAPE='{"rows": 64, "hidden": 256, "dtype": "fp32"}'
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"
run() {
  JOB=$(q "SELECT kbench_run($1)") || { RES="queue-error"; JOB=0; return; }
  wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" "${2:-180}" || { RES="still-running"; return; }
  RES=$(q "SELECT status || ' ' || coalesce(run_status::text, '-') FROM kbench_jobs WHERE id = $JOB")
}

q "SELECT count(*) FROM kbench_import_liger(pg_read_file('$(pwd)/data/liger/all_benchmark_data.csv'))" >/dev/null ||
  echo "not ok - Liger's CSV imports"

# --- 'huggingface' names Liger's imported history and the runs measured here
run "'layer_norm', 'forward', '$SHAPE', implementation => 'huggingface', protocol => '$TINY'"
ok "$RES" "passed passed" "the built-in huggingface LayerNorm forward runs on the CPU"
q "SELECT kbench_register_implementation('my-c-ln-fwd', 'layer_norm', 'library:$IMPL_DIR/libln.so:ln_good', '1.0')" >/dev/null ||
  echo "not ok - the C library registers"
run "'layer_norm', 'forward', '$SHAPE', implementation => 'my-c-ln-fwd', protocol => '$TINY'"
ok "$RES" "passed passed" "the registered C library runs on the CPU"

ok "$(q "SELECT string_agg(name, ',' ORDER BY name) FROM kbench_implementations
          WHERE digest = ANY (_kernelindex.resolve_implementation(_kernelindex.resolve_operation('layer_norm'), 'huggingface'))")" \
   "kbench-python-huggingface-layer-norm,liger-bench-layer-norm-huggingface" \
   "'huggingface' resolves to Liger's imported implementation and kbench's built-in one"
ok "$(q "SELECT count(*) > 0 AND bool_and(baseline_implementation = 'kbench-python-huggingface-layer-norm')
          FROM kbench_speedup('layer_norm', 'huggingface', 'my-c-ln-fwd', 'forward', 'cpu')")" t \
   "kbench_speedup('layer_norm', 'huggingface', 'my-c-ln-fwd', 'forward', 'cpu') returns the local huggingface runs"
ok "$(q "SELECT count(*) > 0 AND bool_and(baseline_implementation = 'liger-bench-layer-norm-huggingface')
          FROM kbench_speedup('layer_norm', 'huggingface', 'liger', 'forward')")" t \
   "the same name against liger returns Liger's imported history"
ok "$(q "SELECT string_agg(DISTINCT baseline_implementation, ',' ORDER BY baseline_implementation)
          FROM kbench_speedup(NULL, 'huggingface', 'my-c-ln-fwd')")" "kbench-python-huggingface-layer-norm" \
   "with no operation named, the provider still finds the local runs"

# --- the same library through the CLI: one implementation with the registered one
kb=kernels/kbench
$kb run layer_norm forward rows=64 hidden=256 dtype=fp32 --impl library:$IMPL_DIR/libln.so:ln_good \
    --rep-ms 1 --warmup-ms 0 --flush-bytes 0 --manifests > "$IMPL_DIR/cli.txt" 2>&1 || echo "not ok - kbench run of the library"
# every manifest it printed (a line '  {...}'), the composite's run last
$PY - "$IMPL_DIR/cli.txt" > "$IMPL_DIR/cli.sql" <<'EOF'
import json, sys
ms, runs = [], []
for line in open(sys.argv[1]):
    if line.startswith("  {"):
        d = json.loads(line)
        if "kind" in d:
            ms.append(d)
        else:
            ms += [v for k, v in d.items() if k != "run"]
            runs.append(d["run"])
for m in ms + runs:
    print("SELECT kbench_ingest($m$%s$m$::jsonb);" % json.dumps(m))
EOF
psql -X -q -v ON_ERROR_STOP=1 -f "$IMPL_DIR/cli.sql" >/dev/null 2>"$IMPL_DIR/cli.err" || { echo "# the CLI run's manifests:"; sed 's/^/# /' "$IMPL_DIR/cli.err" | head -5; }
cli_name=$(q "SELECT i.name FROM kbench_runs r JOIN kbench_implementations i ON i.digest = r.implementation_digest
               WHERE r.name LIKE '%layer-norm-forward%' AND i.name LIKE 'byo-%'")
ok "$cli_name" "byo-libln-so-ln-good" "the CLI's run of the library is ingested under the CLI's default name"
ok "$(q "SELECT count(DISTINCT _kernelindex.code_key(manifest)) || ' ' || count(*) FROM kbench_implementations WHERE name IN ('my-c-ln-fwd', '$cli_name')")" "1 2" \
   "the registered and the CLI's revisions are the same code (entry and content digest)"
ok "$(q "SELECT string_agg(name, ',' ORDER BY name) FROM kbench_implementations
          WHERE digest = ANY (_kernelindex.resolve_implementation(_kernelindex.resolve_operation('layer_norm'), 'my-c-ln-fwd'))")" \
   "byo-libln-so-ln-good,my-c-ln-fwd" "the registered name resolves to the CLI's revision too"
out=$(qe "SELECT count(*) FROM kbench_speedup('layer_norm', 'my-c-ln-fwd', '$cli_name', 'forward', 'cpu')")
ok "$(echo "$out" | tail -1)" 0 "the library is never ranked against itself under its other name"
has "$out" "are one implementation (the same code), never compared with itself" "... and says so"
ok "$(q "SELECT count(DISTINCT candidate_run) FROM kbench_speedup('layer_norm', 'huggingface', 'my-c-ln-fwd', 'forward', 'cpu')")" 1 \
   "one cohort, one best run of the library, whichever name it ran under"

# --- never silently empty
out=$(qe "SELECT count(*) FROM kbench_speedup('layer_norm', 'huggingface', 'my-c-ln-fwd', 'backward', 'cpu')")
has "$out" 'NOTICE:  kbench_speedup: no workload has runs of both' "an empty speedup says why in a NOTICE"
has "$out" 'baseline "huggingface" is kbench-python-huggingface-layer-norm, liger-bench-layer-norm-huggingface, with runs on' \
   "... naming what the baseline resolved to"
has "$out" 'candidate "my-c-ln-fwd" is byo-libln-so-ln-good, my-c-ln-fwd, with runs on cpu (forward)' \
   "... and where the candidate's runs are"
has "$out" 'Selected: backward on cpu' "... and the selection that left nothing"
out=$(qe "SELECT count(*) FROM kbench_speedup_summary('layer_norm', 'huggingface', 'my-c-ln-fwd', 'backward')")
has "$out" 'NOTICE:  kbench_speedup: no workload has runs of both' "kbench_speedup_summary passes the NOTICE on"
out=$(qe "SELECT count(*) FROM kbench_sweep('layer_norm', 'backward', 'hidden', implementation => 'my-c-ln-fwd')")
has "$out" 'NOTICE:  kbench_sweep: ' "an empty sweep says why in a NOTICE"
