#!/usr/bin/env bash
# fault.sh: the CUDA fault paths of the runner on a host without a GPU,
# through the fake CUDA backend of test/fake_cuda (loaded with
# KBENCH_CUDA_LIB; its behaviour chosen by KBENCH_FAKE_CUDA).  The kbench CLI
# under each fault, then a server whose only worker serves cuda:0: a fault
# fails the job with the CUDA message and the worker goes on; too little
# memory is refused before allocating; a kernel that never finishes ends as
# timeout and the worker is replaced, also when the backend itself never
# returns.  Every kbench command runs under `timeout`, every wait for the
# server is bounded.
# Prints TAP lines.  KEEP_LOG=FILE keeps a copy of the server log.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh

# ---------------------------------------------------------------- the fake
if make -s -C kernels NVCC= libkbench.a kbench fake-cuda >/tmp/fault-build.$$ 2>&1; then
  echo "ok - the fake CUDA backend builds (C11, -Wall -Wextra -Werror)"
else
  echo "not ok - the fake CUDA backend builds"; sed 's/^/# /' /tmp/fault-build.$$; rm -f /tmp/fault-build.$$; exit 1
fi
rm -f /tmp/fault-build.$$
# The real backend cannot run here, so its waits cannot be observed (the fake's hang modes below test
# what the runner does with a backend that keeps the promise); what its source must not contain is
# checked instead: a source check, the one kept in this suite.
waits=$(grep -nE 'cuda(Stream|Event|Device|Ctx)Synchronize|cudaMemcpy(2D|3D)?\(' kernels/cuda/*.cu kernels/ops/*.cu |
  grep -vE '^[^:]+:[0-9]+:\s*(\*|/\*|//)')
reset=$(grep -c 'if (g_wedged\[dev\])' kernels/cuda/backend.cu)
if [ -z "$waits" ] && [ "$reset" = 1 ]; then
  echo "ok - the CUDA sources wait only through deadlines (no *Synchronize, no synchronous copy; no reset of a wedged device)"
else
  echo "not ok - the CUDA sources wait only through deadlines"; printf '%s\n' "$waits" | sed 's/^/# /'
fi
# A directory the server's user can read: the library, the mode file, the call log.
FAKE=$(mktemp -d /tmp/kernelindex-fake.XXXXXX)
chmod 755 "$FAKE"
trap '[ -n "${KEEP_LOG:-}" ] && cp "$KI_CLUSTER_DIR/server.log" "$KEEP_LOG"; ki_cluster_stop; rm -rf "$FAKE"' EXIT
cp kernels/build/libkbench_fake_cuda.so "$FAKE/"
echo ok >"$FAKE/mode"
touch "$FAKE/calls.log"
chmod 644 "$FAKE/mode"; chmod 666 "$FAKE/calls.log"
export KBENCH_CUDA_LIB=$FAKE/libkbench_fake_cuda.so KBENCH_FAKE_CUDA_LOG=$FAKE/calls.log

# ---------------------------------------------------------------- the CLI
KB=kernels/kbench
LN=(run layer_norm forward rows=8 hidden=8 --device cuda:0)
# description, mode, wanted exit status, wanted text; the run is cut off after 30 s
expect() {
  local d=$1 mode=$2 want=$3 text=$4 got rc
  got=$(KBENCH_FAKE_CUDA=$mode KBENCH_FAKE_CUDA_MAX_WAIT_S=2 timeout 30 $KB "${LN[@]}" "${@:5}" 2>&1); rc=$?
  if [ "$rc" = "$want" ] && grep -qF -- "$text" <<<"$got"; then echo "ok - $d"
  else echo "not ok - $d (exit $rc, wanted $want; output: $(printf '%s' "$got" | grep -v '^  ' | head -c 300))"; fi
}
ok "$(KBENCH_FAKE_CUDA=ok timeout 30 $KB devices | grep '^cuda:')" "$(printf 'cuda:0\tFake GPU (kernelindex test double)')" \
  "kbench devices shows the fake device"
expect "kbench on the fake, ok: passes the correctness check (the CPU implementation ran)" ok 0 "matched 1.000000" \
  --warmup-ms 1 --rep-ms 5 --flush-bytes 0
expect "kbench, open fails: exit 3, device unavailable with CUDA's words" fault_open 3 \
  "cuda:0 is not available: cudaErrorDevicesUnavailable"
expect "kbench, a kernel faults: exit 1, runtime_error with CUDA's message" fault_call 1 \
  "kbench: runtime_error: prepare: cudaErrorIllegalAddress (an illegal memory access was encountered)"
expect "kbench, the fault surfaces at the wait: exit 1, runtime_error" fault_sync 1 \
  "runtime_error: prepare: cudaErrorIllegalAddress (an illegal memory access was encountered) at fake_cuda.c: waiting"
: >"$FAKE/calls.log"
expect "kbench, too little device memory: exit 4, resource_exceeded" nomem 4 \
  "resource_exceeded: workload needs 0.06 GiB on cuda:0, which has 0.00 GiB free of 16.00 GiB" --flush-bytes 0
ok "$(grep -c ' alloc' "$FAKE/calls.log")" 0 "... refused before allocating anything"
: >"$FAKE/calls.log"
t0=$(date +%s.%N)
expect "kbench, a kernel that never finishes: exit 1, timeout" hang 1 \
  "kbench: timeout: prepare: the device did not finish within 2 s"
# (exit 1 above means kbench ended by itself, not by `timeout 30`; the bound is generous: a loaded
# machine starts kbench slowly, a hang on cleanup never ends)
ok "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a < 25) }')" 1 "... within seconds of the wait's deadline (no hang on cleanup)"
ok "$(grep -cE ' (free|close|open)' "$FAKE/calls.log")" 1 "... and nothing that waits for the device is called after it (one open, no free or close)"

# The backend's wait never returns: only kbench's watchdog (--timeout S, fires at S + 5 s) ends it.
t0=$(date +%s.%N)
expect "kbench --timeout 1, a backend that never returns: the watchdog exits 1 and says why" hang_forever 1 \
  "kbench: timeout: the device did not return within the deadline's grace; exiting" --timeout 1
ok "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a >= 6 && b - a < 20) }')" 1 "... 6 s or more after the start (timeout + 5 s grace), well before the suite's 30 s"

# bench/device.sh, the one script a GPU session runs, end to end on the fake device (the CPU
# implementations behind it).  Phase 1 (bench/device_db.sh) on small shapes: the PostgreSQL bundle
# (build/pgbundle; test/suites/bundle.sh builds and refreshes it, made here when absent) with a
# worker for the fake cuda:0, Liger's CSV, kbench_run jobs, the SQL table, the export.  Then the
# kbench phases cut short after their first row (MAX_ROWS=1; the budget is generous, so the cut does
# not depend on the machine's speed): their flow, edge checks and table.
# The bundle must hold this checkout's extension, not one built earlier: it is refreshed here
# (seconds with its PostgreSQL cached; KI_PGBUNDLE_CACHE, see tools/pgbundle_build.sh).
if out=$(bash tools/pgbundle_build.sh 2>&1); then
  echo "ok - the bundle is built or refreshed from this checkout for phase 1 (tools/pgbundle_build.sh)"
else
  echo "not ok - tools/pgbundle_build.sh builds the bundle for phase 1"; printf '%s\n' "$out" | tail -15 | sed 's/^/# /'
fi
DOUT=$(mktemp -d /tmp/kernelindex-devsh.XXXXXX)
chmod 755 "$DOUT"
# a stand-in for ncu: records its arguments, answers two kernels in ncu's CSV
cat >"$FAKE/ncu" <<'EOF'
#!/bin/sh
echo "$*" >>"$(dirname "$0")/ncu.args"
echo '==PROF== Connected to process 1'
echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
echo '"0","1","kbench","h","k_main(float const*)","1","7","(256, 1, 1)","(396, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","61,234"'
echo '"0","1","kbench","h","k_main(float const*)","1","7","(256, 1, 1)","(396, 1, 1)","0","9.0","Command line profiler metrics","dram__throughput.avg.pct_of_peak_sustained_elapsed","%","71.52"'
echo '"1","1","kbench","h","k_sum","1","7","(512, 1, 1)","(128, 1, 1)","0","9.0","Command line profiler metrics","launch__registers_per_thread","register/thread","40"'
EOF
chmod 755 "$FAKE/ncu"
dev=$(NCU_BIN=$FAKE/ncu KBENCH_FAKE_CUDA=ok DEVICE_DRY=1 IMPLS="cuda cuda/v2 no-such-impl" BUDGET_AFTER_DB_S=200 MAX_ROWS=1 LIGER=0 SANITIZE=0 OUT=$DOUT \
  RETURN_DIR=$DOUT/ret KI_BUNDLE_RUN=$DOUT/run timeout 240 bash bench/device.sh cuda:0 2>&1); rc=$?
ok "$(printf '%s\n' "$dev" | grep -cE '^# db: (worker: cuda:0 Fake GPU|importing Liger.s CSV: 2448 lines, 1649 runs inserted|7 jobs queued|phase done: 7 jobs, 0 not passed)')" 4 \
  "device.sh phase 1 on the fake device: the bundle's worker serves cuda:0, Liger's CSV imported, 7 kbench_run jobs passed"
ok "$(grep -cE '^ [a-z_]+ +\| (forward|backward) +\| liger-[a-z0-9-]+ +\| cuda(/v2)? +\| Fake GPU .*\| passed/passed *$' "$DOUT/ret/db_table.txt")" 7 \
  "... its SQL table has our 7 runs (3 seeds x cuda, cuda/v2; jsd x cuda), under the Liger workload names"
ok "$(grep -cE '^ layer_norm +\| backward +\| liger-layer-norm-hidden1024-rows4096-fp32 +\| reported: (liger|huggingface) +\| NVIDIA H100 80GB HBM3, liger 0.6.0 ' "$DOUT/ret/db_table.txt")" 2 \
  "... beside the rows Liger reported for the same workload digest and mode"
ok "$(grep -cE '^ liger-[a-z-]+ +\| (forward|backward) +\| kbench-[a-z-]+-cuda(-v2)? +\| +[0-9.]+ +\| +[0-9.]+ +\| +[0-9.]+ +\| +[12] +\| +[0-9.]+ *$' "$DOUT/ret/db_table.txt")" 7 \
  "... and the same 7 runs ranked in their cohorts on this card by kbench_records"
ok "$(grep -c "not queued: cannot queue jsd forward: unknown variant 'v2' for jsd; allowed: v1" "$DOUT/ret/db_table.txt") $(grep -c "no-such-impl .*not queued: cannot queue .*unknown implementation 'no-such-impl'" "$DOUT/ret/db_table.txt")" "1 4" \
  "... and lists what kbench_run refused, with its reason (jsd has no v2; an implementation not in this build)"
ok "$(gzip -dc "$DOUT/ret/catalog.jsonl.gz" | grep -c 'Fake GPU') $(gzip -dc "$DOUT/ret/server.log.gz" | wc -c | awk '{print ($1 > 0)}') $([ -f "$DOUT/run/data/postmaster.pid" ] && echo running || echo stopped)" \
  "7 1 stopped" "... exports the catalog with the 7 runs as JSON lines, keeps the server log, and stops the server"
ok "$rc $(printf '%s\n' "$dev" | grep -c '^#   .*: passed | correctness:')" "0 16" \
  "bench/device.sh on the fake device: exits 0, its 16 edge-shape lines run and report (the fake runs the CPU code, so this checks the script, not v2)"
ok "$(printf '%s\n' "$dev" | grep -cE '^(op +mode +var|layer_norm +forward +v1 +rows=4096 hidden=1024 .* passed|distill_jsd_loss +forward +v2 +tokens=8192 .*no result: skipped)')" 3 \
  "... prints the table: the first v1 row timed, the rows past MAX_ROWS marked skipped"
ok "$(printf '%s\n' "$dev" | grep -E '^# kbench [0-9]+ [^ ]+: exit ' | sed 's/ ([0-9]*s)$//') $(printf '%s\n' "$dev" | grep -cE '^# kbench [0-9]+ [^ ]+: skipped \(MAX_ROWS=1\)$')" \
  "# kbench 1 layer_norm:forward:fp32:rows=4096,hidden=1024@v1: exit 0 39" \
  "... MAX_ROWS=1 times exactly one kbench row and skips the other 39 (a cut by count, whatever the machine's speed)"
ok "$(printf '%s\n' "$dev" | grep -cE '^#   [a-z_]+-(forward|backward)-v[12] \(.*\): exit 0, 2 kernels$') $(printf '%s\n' "$dev" | grep -cE '^#     k_main\(float const\*\) +61\.2 us +dram +71\.5%')" "7 7" \
  "... then Nsight Compute over the 7 target kernels and variants (a stand-in ncu), one line per kernel from its CSV"
ok "$(grep -c -- '--clock-control none --csv --print-units base --metrics gpu__time_duration.sum,.* --launch-count 40 kernels/kbench run .* --impl cuda/v[12] --warmup-ms 0 --rep-ms 0.01 --max-samples 1 --flush-bytes 0 --no-check$' "$FAKE/ncu.args")" 7 \
  "... ncu leaves the clocks alone and profiles one unchecked call of kbench's run"
rm -rf "$DOUT"
out=$(KI_BUNDLE=/nonexistent/pgbundle bash bench/device_db.sh cuda:0 2>&1); rc=$?
ok "$rc ${out% (*}" "1 # db: no bundle in /nonexistent/pgbundle: phase skipped (tools/pgbundle_build.sh, then carry build/pgbundle)" \
  "device.sh phase 1 without the bundle says what to carry and fails (the other phases go on)"
# Phase 1 on a host where the bundle's libkbench_cuda.so cannot serve the GPU (here: none, or one
# built with nvcc and no driver): it says so, tries once with one built from kernels/, and the jobs
# fail with the device's reason instead of hanging.
DOUT=$(mktemp -d /tmp/kernelindex-devsh.XXXXXX)
chmod 755 "$DOUT"
dev=$(env -u KBENCH_CUDA_LIB -u KBENCH_FAKE_CUDA DEVICE_DRY=1 IMPLS=cuda PHASE_S=90 OUT=$DOUT RETURN_DIR=$DOUT/ret \
  KI_BUNDLE_RUN=$DOUT/run timeout 150 bash bench/device_db.sh cuda:0 2>&1); rc=$?
ok "$rc $(printf '%s\n' "$dev" | grep -c "^# db: the bundle's libkbench_cuda.so does not serve cuda:0 here; building kernels/ and restarting") $(grep -c '| failed device_unavailable: cuda:0 is not available' "$DOUT/ret/db_table.txt")" \
  "1 1 4" "device.sh phase 1 without a usable GPU: tries a libkbench_cuda.so built here once, then the 4 jobs fail with the device's reason"
rm -rf "$DOUT"

# ---------------------------------------------------------------- the server
# The postmaster inherits this environment (pg_ctl, through runuser as root);
# the worker reads the fake's mode from the file at every open.
export KBENCH_FAKE_CUDA=@$FAKE/mode
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cuda:0'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
# queue a layer_norm job on cuda:0 in mode $1 (timeout $2, default the GUC's); prints its id
job() {
  echo "$1" >"$FAKE/mode"
  q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cuda:0',
       protocol => '$TINY'${2:+, timeout => '$2'})"
}
finished() { wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $1" "$2"; }
idle_worker() { wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle' AND pid IS NOT NULL AND pid <> ${1:-0}" "$2"; }
worker_pid() { q "SELECT pid FROM kbench_workers"; }

idle_worker 0 30 || echo "# the worker did not start"
ok "$(q "SELECT device || ' | ' || product FROM kbench_workers")" "cuda:0 | Fake GPU (kernelindex test double)" \
  "kbench_workers shows the fake device"

j=$(job ok); finished "$j" 30
ok "$(q "SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j")" "passed passed" "a job on the fake device passes"

# A kernel variant asked for by name from SQL, on the GPU worker: filed under its own implementation.
echo ok >"$FAKE/mode"
for impl in cuda cuda/v2; do
  j=$(q "SELECT kbench_run('layer_norm', 'backward', '{\"rows\": 8, \"hidden\": 8}', implementation => '$impl',
          device => 'cuda:0', protocol => '$TINY')"); finished "$j" 30
  ok "$(q "SELECT j.status || ' ' || i.name || ' ' || (i.manifest->'spec'->'callable'->>'symbol') FROM kbench_jobs j
           JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_implementations i ON i.digest = r.implementation_digest
           WHERE j.id = $j")" \
    "passed kbench-layer-norm-cuda$([ $impl = cuda ] || echo -v2) layer_norm_cuda$([ $impl = cuda ] || echo /v2)" \
    "kbench_run(implementation => '$impl') on cuda:0 goes to the GPU worker and files the run under $impl's implementation (the fake runs the CPU code: no CUDA kernel runs here)"
done
ok "$(q "SELECT string_agg(operation || ' ' || implementations::text, '; ' ORDER BY operation) FROM kbench_device_operations")" \
  "distill_jsd_loss {cuda,cuda/v2}; jsd {cuda}; layer_norm {cuda,cuda/v2}; megatron_cross_entropy {cuda,cuda/v2}" \
  "kbench_device_operations lists each operation's kernel variants for the GPU worker"
ok "$(psql -X -At -q -c "SELECT kbench_run('jsd', 'forward', '{\"tokens\": 8, \"vocab\": 8}', implementation => 'cuda/v2', device => 'cuda:0')" 2>&1 | head -1)" \
  "ERROR:  cannot queue jsd forward: unknown variant 'v2' for jsd; allowed: v1" "an unknown variant is refused when queued"

j=$(job fault_call); finished "$j" 30
pid=$(q "SELECT worker_pid FROM kbench_jobs WHERE id = $j")
ok "$(q "SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j")" "failed runtime_error" \
  "a kernel fault fails the job, run_status runtime_error"
ok "$(q "SELECT error FROM kbench_jobs WHERE id = $j")" \
  "runtime_error: prepare: cudaErrorIllegalAddress (an illegal memory access was encountered) at fake_cuda.c: layer_norm_cuda" \
  "... its error names runtime_error and CUDA's message"
ok "$(q "SELECT r.status FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $j")" runtime_error \
  "... and its run is stored with status runtime_error (docs/SQL.md: the run is in kbench_runs either way)"
j=$(job ok); finished "$j" 30
ok "$(q "SELECT status || ' ' || worker_pid FROM kbench_jobs WHERE id = $j")" "passed $pid" \
  "the next job runs in the same worker (the sticky error is reset at the next open)"

j=$(job fault_sync); finished "$j" 30
ok "$(q "SELECT status || ' ' || run_status || ' ' || (error LIKE 'runtime_error: prepare: %an illegal memory access was encountered%') FROM kbench_jobs WHERE id = $j")" \
  "failed runtime_error true" "a fault that surfaces at the wait fails the job the same way"

j=$(job fault_open); finished "$j" 30
ok "$(q "SELECT status || ' ' || coalesce(run_status::text, 'no run') FROM kbench_jobs WHERE id = $j")" "failed no run" \
  "a device that cannot be opened fails the job without a run"
ok "$(q "SELECT error LIKE 'device_unavailable: cuda:0 is not available: cudaErrorDevicesUnavailable%' FROM kbench_jobs WHERE id = $j")" t \
  "... with CUDA's words"

: >"$FAKE/calls.log"
j=$(job nomem); finished "$j" 30
ok "$(q "SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j")" "failed resource_exceeded" \
  "too little device memory: resource_exceeded"
ok "$(q "SELECT error FROM kbench_jobs WHERE id = $j")" \
  "resource_exceeded: workload needs 0.06 GiB on cuda:0, which has 0.00 GiB free of 16.00 GiB" "... saying what was needed"
ok "$(grep -c ' alloc' "$FAKE/calls.log")" 0 "... refused before allocating anything"

# A kernel that never finishes; the backend keeps its promise and times out.
: >"$FAKE/calls.log"
pid=$(worker_pid)
j=$(job hang '3 seconds')
finished "$j" 20
ok "$(q "SELECT status || ' ' || run_status FROM kbench_jobs WHERE id = $j")" "timeout timeout" \
  "a kernel that never finishes: the job ends as timeout, its run recorded"
ok "$(q "SELECT error FROM kbench_jobs WHERE id = $j")" \
  "stopped after the job's timeout of 3 s (prepare: the device did not finish within 3 s)" "... saying where it stopped"
ok "$(q "SELECT finished_at - started_at < interval '3 s' + interval '3 s' FROM kbench_jobs WHERE id = $j")" t \
  "... within seconds of its timeout"
ok "$(grep -c 'blocked forever' "$FAKE/calls.log")" 0 "... without waiting for the device after the timeout"
idle_worker "$pid" 15 || echo "# no new worker"
ok "$(q "SELECT pid <> $pid FROM kbench_workers")" t "the worker exits after the timeout and a new one starts"
j=$(job ok); finished "$j" 30
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $j")" passed "... and runs the next job"

# The worst case: the backend's wait itself never returns.  The watchdog.
pid=$(worker_pid)
j=$(job hang_forever '2 seconds')
finished "$j" 30
ok "$(q "SELECT status || ' ' || coalesce(run_status::text, 'no run') FROM kbench_jobs WHERE id = $j")" "timeout no run" \
  "a backend that never returns: the job ends as timeout"
ok "$(q "SELECT error FROM kbench_jobs WHERE id = $j")" \
  "stopped after the job's timeout of 00:00:02: the device did not return, and the worker for cuda:0 (pid $pid) was restarted" \
  "... saying why"
ok "$(q "SELECT finished_at - started_at < interval '2 s' + interval '10 s' FROM kbench_jobs WHERE id = $j")" t \
  "... within seconds of its timeout (the watchdog's grace is 5 s)"
idle_worker "$pid" 15 || echo "# no new worker"
j=$(job ok); finished "$j" 30
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $j") $(q "SELECT pid <> $pid FROM kbench_workers")" "passed t" \
  "a new worker runs the next job"
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" 0 "nothing left queued or running"
