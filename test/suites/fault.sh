#!/usr/bin/env bash
# fault.sh: the CUDA fault paths of the runner on a host without a GPU,
# through the fake CUDA backend of test/fake_cuda (loaded with
# KBENCH_CUDA_LIB; its behaviour chosen by KBENCH_FAKE_CUDA): the kbench CLI
# under each fault, and bench/device.sh end to end on the fake device.  (The
# worker under the same faults, a server whose only worker serves cuda:0, is
# the Perl test test/t/004_fault.pl.)  Every kbench command runs under
# `timeout`, every wait is bounded.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
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
trap 'rm -rf "$FAKE"' EXIT
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
expect "kbench, a kernel that never finishes: exit 1, timeout" hang 1 \
  "kbench: timeout: prepare: the device did not finish within 2 s"
# (exit 1 above means kbench ended by itself, not by `timeout 30` (124): a hang on cleanup never
# ends.  How long it took is the machine's speed, not a behaviour: bench/fault_timing.sh prints it.)
ok "$(grep -cE ' (free|close|open)' "$FAKE/calls.log")" 1 "... and nothing that waits for the device is called after it (one open, no free or close)"

# The backend's wait never returns: only kbench's watchdog (--timeout S, fires at S + 5 s) ends it.
t0=$(date +%s.%N)
expect "kbench --timeout 1, a backend that never returns: the watchdog exits 1 and says why" hang_forever 1 \
  "kbench: timeout: the device did not return within the deadline's grace; exiting" --timeout 1
# (at least the timeout and its 5 s grace: a lower bound no machine is too fast for; that it ended
# at all, before `timeout 30`, is the exit status 1 above; how soon after the grace: bench/fault_timing.sh)
ok "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print (b - a >= 6) }')" 1 "... not before 6 s after the start (the timeout + 5 s grace)"

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
# (`timeout` only ends a hang: phase 1 alone may take its 240 s + 20 and the rest its budget.  The
# budget and the edge-shape lines' limit (seconds, device.sh's own, right on a GPU) are far above
# what the fake device needs, so that what runs is cut by MAX_ROWS, a count: with three builds beside
# it here, 240 s of timeout cut device.sh off (exit 124), 60 s a line passed 11 of the 16
# edge-shape lines, the fake running the large shapes on the CPU, and a budget of 600 s was spent
# by them before the timed row)
dev=$(NCU_BIN=$FAKE/ncu KBENCH_FAKE_CUDA=ok DEVICE_DRY=1 IMPLS="cuda cuda/v2 no-such-impl" BUDGET_AFTER_DB_S=3600 EDGE_TIMEOUT_S=600 MAX_ROWS=1 LIGER=0 SANITIZE=0 OUT=$DOUT \
  RETURN_DIR=$DOUT/ret KI_BUNDLE_RUN=$DOUT/run timeout 4000 bash bench/device.sh cuda:0 2>&1); rc=$?
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
ok "$(printf '%s\n' "$dev" | grep -cE '^#   graph .* events: passed [0-9.]+ us +graphs: passed [0-9.]+ us \([0-9]+ calls a graph\)$')" 4 \
  "... and its 4 CUDA-graph lines, each kernel timed per call and in graphs, both checked and passed"
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
  KI_BUNDLE_RUN=$DOUT/run timeout 600 bash bench/device_db.sh cuda:0 2>&1); rc=$?
ok "$rc $(printf '%s\n' "$dev" | grep -c "^# db: the bundle's libkbench_cuda.so does not serve cuda:0 here; building kernels/ and restarting") $(grep -c '| failed device_unavailable: cuda:0 is not available' "$DOUT/ret/db_table.txt")" \
  "1 1 4" "device.sh phase 1 without a usable GPU: tries a libkbench_cuda.so built here once, then the 4 jobs fail with the device's reason"
rm -rf "$DOUT"
