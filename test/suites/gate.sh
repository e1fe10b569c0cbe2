#!/usr/bin/env bash
# gate.sh: wrong results reach the correctness gate.  Through the fake CUDA
# backend (test/fake_cuda) in its two wrong modes:
#   wrong      the CPU implementation with one value of the first output
#              made wrong: one value among thousands fails the run;
#   wrong_last the same with its last value wrong: the sampled checks read
#              the last row of every operation (more rows than they sample);
#   wrong_eps  a deliberately wrong layer_norm forward (eps 1e-5, not 1e-6):
#              only a tolerance derived from the arithmetic catches it;
# through kbench (exit 1, incorrect_numerical, the value named) and through
# the worker of a cuda:0 device (the job fails, run_status
# incorrect_numerical, one NOTIFY).  And the correct code passes at
# the documented shapes, with the figure the gate uses (worst error over
# its tolerance, at most 1) reported.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh
if ! make -s -C kernels NVCC= libkbench.a kbench fake-cuda >/tmp/gate-build.$$ 2>&1; then
  echo "not ok - kbench and the fake CUDA backend build"; sed 's/^/# /' /tmp/gate-build.$$; rm -f /tmp/gate-build.$$; exit 1
fi
rm -f /tmp/gate-build.$$
FAKE=$(mktemp -d /tmp/kernelindex-gate.XXXXXX)
chmod 755 "$FAKE"
trap 'ki_cluster_stop; rm -rf "$FAKE"' EXIT
cp kernels/build/libkbench_fake_cuda.so "$FAKE/"
echo ok >"$FAKE/mode"; chmod 644 "$FAKE/mode"
export KBENCH_CUDA_LIB=$FAKE/libkbench_fake_cuda.so
KB=kernels/kbench

# ---------------------------------------------------------------- kbench
got=$(KBENCH_FAKE_CUDA=bogus timeout 60 $KB run layer_norm forward rows=8 hidden=8 --device cuda:0 2>&1); rc=$?
ok "$rc $(head -1 <<<"$got")" "3 kbench: cuda:0 is not available: KBENCH_FAKE_CUDA: unknown mode 'bogus'; allowed: ok, fault_open, fault_call, fault_sync, nomem, hang, hang_forever, wrong, wrong_last, wrong_eps, slow_v2" \
  "the fake refuses an unknown mode, naming the modes (the device is unavailable, exit 3)"
expect_run() { # description, fake mode, wanted exit status, wanted text, kbench run arguments...
  local d=$1 mode=$2 want=$3 text=$4 got rc
  got=$(KBENCH_FAKE_CUDA=$mode timeout 120 $KB run "${@:5}" --warmup-ms 1 --rep-ms 3 --flush-bytes 0 2>&1); rc=$?
  if [ "$rc" = "$want" ] && grep -qF -- "$text" <<<"$got"; then echo "ok - $d"
  else echo "not ok - $d (exit $rc, wanted $want; output: $(printf '%s' "$got" | grep -v '^  {' | head -c 400))"; fi
}
for m in forward backward full; do
  # the first checked timed call already differs (issue 27's guard): the message names the call and the value
  expect_run "kbench, a kernel with one wrong value (layer_norm $m, 64x128): exit 1, incorrect_numerical naming it" wrong 1 \
    "differs from the float64 reference for its own inputs (its outputs do not follow its inputs, or the work was skipped on this call or finished after it returned): $([ $m = backward ] && echo dx || echo y)[0][0]: got" \
    layer_norm $m rows=64 hidden=128 --device cuda:0
done
expect_run "kbench, one wrong value in bf16 (layer_norm backward): incorrect_numerical" wrong 1 \
  "layer_norm backward: incorrect_numerical" layer_norm backward rows=64 hidden=128 dtype=bf16 --device cuda:0
for m in forward backward full; do
  expect_run "kbench, one wrong value (jsd $m): incorrect_numerical" wrong 1 \
    "jsd $m: incorrect_numerical" jsd $m tokens=64 vocab=77 --device cuda:0
done
for m in forward backward full; do
  expect_run "kbench, one wrong value (megatron_cross_entropy $m, bf16): incorrect_numerical" wrong 1 \
    "megatron_cross_entropy $m: incorrect_numerical" megatron_cross_entropy $m seq=3 batch=2 vocab=257 dtype=bf16 --device cuda:0
done
for m in forward full; do
  expect_run "kbench, one wrong value (distill_jsd_loss $m): incorrect_numerical" wrong 1 \
    "distill_jsd_loss $m: incorrect_numerical" distill_jsd_loss $m tokens=4 hidden=12 vocab=19 --device cuda:0
done
# the last value of the first output: each operation's check reads the last row (and its rows
# are the operation's: tokens, not tokens over again) at a case with more rows than it samples
for m in forward backward full; do
  expect_run "kbench, the last value wrong (layer_norm $m, 64x128): incorrect_numerical" wrong_last 1 \
    "layer_norm $m: incorrect_numerical" layer_norm $m rows=64 hidden=128 --device cuda:0
  expect_run "kbench, the last value wrong (jsd $m, 70 tokens): incorrect_numerical" wrong_last 1 \
    "jsd $m: incorrect_numerical" jsd $m tokens=70 vocab=33 --device cuda:0
  expect_run "kbench, the last value wrong (megatron_cross_entropy $m, seq 20 x batch 3, bf16): incorrect_numerical" wrong_last 1 \
    "megatron_cross_entropy $m: incorrect_numerical" megatron_cross_entropy $m seq=20 batch=3 vocab=65 dtype=bf16 --device cuda:0
done
for m in forward full; do
  expect_run "kbench, the last value wrong (distill_jsd_loss $m, 40 tokens): incorrect_numerical" wrong_last 1 \
    "distill_jsd_loss $m: incorrect_numerical" distill_jsd_loss $m tokens=40 hidden=12 vocab=19 --device cuda:0
done
expect_run "kbench, one wrong value with --json: status incorrect_numerical in the run manifest" wrong 1 \
  '"status":"incorrect_numerical"' layer_norm forward rows=64 hidden=128 --device cuda:0 --json
expect_run "kbench --no-check on a wrong kernel: nothing compared, and it says so" wrong 0 \
  'correctness: not checked' layer_norm forward rows=64 hidden=128 --device cuda:0 --no-check
expect_run "... its run is filed as incomplete_evidence, not passed (it cannot compete)" wrong 0 \
  '"status":"incomplete_evidence"' layer_norm forward rows=64 hidden=128 --device cuda:0 --no-check --json

# The deliberately wrong implementation: LayerNorm with eps 1e-5, fp32, at the shapes the suites use.
for shape in "rows=17 hidden=96" "rows=64 hidden=1024" "rows=8 hidden=4096"; do
  expect_run "kbench, layer_norm forward with eps 1e-5 instead of 1e-6 ($shape, fp32): incorrect_numerical" wrong_eps 1 \
    "layer_norm forward: incorrect_numerical" layer_norm forward $shape --device cuda:0
done
# ... while the right code passes there, and reports the figure the gate uses.
for shape in "rows=17 hidden=96" "rows=64 hidden=1024" "rows=8 hidden=4096"; do
  for m in forward backward full; do
    expect_run "kbench, layer_norm $m ($shape, fp32), the right code: passed, worst error at most its tolerance" ok 0 \
      "of its tolerance (pass <= 1)" layer_norm $m $shape
  done
done

# ---------------------------------------------------------------- the worker
export KBENCH_FAKE_CUDA=@$FAKE/mode   # the postmaster inherits it; the worker reads the mode at every open
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cuda:0'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
# queue in fake mode $1 the workload $2 ($3: the operation, default layer_norm forward); LISTEN; prints the
# job's id, its final status and how many notifications came (the payload is empty by design)
through_worker() {
  local out j final
  echo "$1" >"$FAKE/mode"
  out=$(psql -X -q -v ON_ERROR_STOP=1 <<SQL 2>&1
LISTEN kbench_jobs;
SELECT kbench_run(${3:-'layer_norm', 'forward'}, '$2', device => 'cuda:0', protocol => '${4:-$TINY}') AS job \gset
SELECT status AS final FROM kbench_wait(:job, '120 seconds') \gset
SELECT pg_sleep(0.2);
\echo job :job :final
SQL
)
  read -r _ j final <<<"$(printf '%s\n' "$out" | grep '^job ' | tail -1)"
  echo "$j $final $(grep -c 'Asynchronous notification "kbench_jobs" received' <<<"$out")"
}
read -r j final n <<<"$(through_worker wrong '{"rows": 64, "hidden": 256}')"
ok "$final $n $(q "SELECT run_status FROM kbench_jobs WHERE id = ${j:-0}")" "failed 1 incorrect_numerical" \
  "the worker, a kernel with one wrong value of 16384: the job fails, run_status incorrect_numerical, one NOTIFY"
ok "$(q "SELECT error LIKE 'incorrect_numerical: timed call % differs from the float64 reference for its own inputs %: y[0]%' FROM kbench_jobs WHERE id = ${j:-0}")" t \
  "... its error names the value"
ok "$(q "SELECT r.status FROM kbench_runs r JOIN kbench_jobs j ON j.run_digest = r.digest WHERE j.id = ${j:-0}")" incorrect_numerical \
  "... and its run is stored as incorrect_numerical"
read -r j final n <<<"$(through_worker wrong_eps '{"rows": 64, "hidden": 1024, "dtype": "fp32"}')"
ok "$final $n $(q "SELECT run_status FROM kbench_jobs WHERE id = ${j:-0}")" "failed 1 incorrect_numerical" \
  "the worker, layer_norm with eps 1e-5: the job fails as incorrect_numerical"
read -r j final n <<<"$(through_worker ok '{"rows": 64, "hidden": 1024, "dtype": "fp32"}')"
ok "$final $n $(q "SELECT run_status FROM kbench_jobs WHERE id = ${j:-0}")" "passed 1 passed" \
  "the worker, the right code at the same shape: passed"
# An unchecked run ("check": false) of the right code: the job runs, the run cannot compete.
read -r j final n <<<"$(through_worker ok '{"rows": 64, "hidden": 1024, "dtype": "fp32"}' "'layer_norm', 'forward'" \
  '{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3, "check": false}')"
ok "$final $(q "SELECT j.run_status || ' ' || r.status || ' ' || kbench_competes(r) || ' ' ||
                      (SELECT count(*) FROM kbench_cohort_runs c WHERE c.run_digest = r.digest) || ' ' ||
                      (SELECT count(*) FROM kbench_cohort_bests b WHERE b.run_digest = r.digest)
                 FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = ${j:-0}")" \
  "passed incomplete_evidence incomplete_evidence false 0 0" \
  "the worker, \"check\": false: the job runs, its run is incomplete_evidence and competes nowhere (no cohort, no record)"
