#!/usr/bin/env bash
# compare.sh: paired A/B comparisons in one job, honest CPU timing and the
# progress of a job (issue 16 item 3, issue 13 items 3 and 7), on the CPU
# and on the fake CUDA backend (test/fake_cuda).
#   - the kernels library's unit tests of them (test/kernels/test_runner.c);
#   - `kbench compare` without a database: an implementation against itself
#     is the same, a deliberately slow kernel variant (the fake's slow_v2)
#     is slower, bad usage is refused; `kbench run` at the seed layer_norm
#     shape takes at least 10 samples, and one with fewer says so;
#   - through the workers of a server serving cpu and the fake cuda:0:
#     kbench_compare queues ONE job that stores both runs (raw samples,
#     identical workload, protocol and environment digests) and the
#     comparison (ratio, interval, verdict, the order ABAB...); cpu against
#     huggingface on the CPU; cuda against cuda/v2, and the slow v2; a compare
#     job canceled and one past its timeout; the phases of a job seen one by
#     one (the fake holds a named call, a row lock holds the store: events,
#     not clocks), a canceled job keeping the phase it stopped in; the
#     queue-time estimate from a past run; the seed shape's run through the
#     worker with at least 10 samples.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh
PY=/usr/bin/python3

# ---------------------------------------------------------------- kernels/
if make -s -C kernels NVCC= libkbench.a kbench fake-cuda build/test_runner >/tmp/compare-build.$$ 2>&1; then
  echo "ok - kernels/, kbench, the fake CUDA backend and the runner's unit tests build"
else
  echo "not ok - kernels/ builds"; sed 's/^/# /' /tmp/compare-build.$$; rm -f /tmp/compare-build.$$; exit 1
fi
rm -f /tmp/compare-build.$$
kernels/build/test_runner | sed -E 's/^(not )?ok [0-9]+ /\1ok /'

FAKE=$(mktemp -d /tmp/kernelindex-compare.XXXXXX)
chmod 755 "$FAKE"
trap 'ki_cluster_stop; rm -rf "$FAKE"' EXIT
cp kernels/build/libkbench_fake_cuda.so "$FAKE/"
echo ok >"$FAKE/mode"
: >"$FAKE/hold"
chmod 644 "$FAKE/mode" "$FAKE/hold"
mkdir "$FAKE/held" && chmod 777 "$FAKE/held"   # the worker (another user) says there which call it is held at
export KBENCH_CUDA_LIB=$FAKE/libkbench_fake_cuda.so KBENCH_FAKE_CUDA=@$FAKE/mode KBENCH_FAKE_CUDA_HOLD=$FAKE/hold \
       KBENCH_FAKE_CUDA_HELD=$FAKE/held/call
KB=kernels/kbench
# a field of kbench compare --json
field() { $PY -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

# ---------------------------------------------------------------- kbench compare
# ---------------------------------------------------------------- CUDA-graph timing (the protocol's cuda_graph)
# Each sample is one graph of as many calls as the five-call estimate puts in 1 ms (KB_GRAPH_NS),
# 1 to 1024; the fake's per-call time is set (KBENCH_FAKE_CUDA_TIMES=steady:NS) so the count is
# known by hand: 1 ms / 50 us = 20; 1 ms / 400 ns = 2500, cut to 1024; 1 ms / 3 ms = 0, raised to 1.
jf() { python3 -c 'import json, sys
d = json.load(sys.stdin)
m = d.get("composite", {}).get("run", {}).get("spec", {}).get("sourceNative", {}).get("metrics", {})
p = d.get("composite", {}).get("protocol", {}).get("spec", {}).get("measurement", {})
print(eval(sys.argv[1]))' "$1"; }
LN=(run layer_norm forward rows=8 hidden=8 --device cuda:0)
graph_run() { KBENCH_FAKE_CUDA=${GMODE:-ok} KBENCH_FAKE_CUDA_LOG=$FAKE/calls.log timeout 60 $KB "${LN[@]}" --warmup-ms 0 --rep-ms 1 --flush-bytes 0 --json "$@" 2>/dev/null; }
: >"$FAKE/calls.log"; chmod 666 "$FAKE/calls.log"
g=$(KBENCH_FAKE_CUDA_TIMES=steady:50000 graph_run --cuda-graph)
ok "$(jf '[d["status"], p["timer"], p["synchronization"], m.get("graph_calls"), d["summary"]["median_ns"]]' <<<"$g")" \
   "['passed', 'cuda_graph_events', 'event_synchronize_per_graph', 20, 50000]" \
   "--cuda-graph: passed, timed by events around graphs of 20 calls (1 ms / 50 us, by hand), the per-call time its samples"
ok "$(awk '$2 == "time_graph" { print $3 }' "$FAKE/calls.log" | sort -u) $(grep -c ' time_graph ' "$FAKE/calls.log") $(grep -c ' time_one$' "$FAKE/calls.log")" \
   "20 $(jf 'm["raw_samples"]' <<<"$g") 5" \
   "... each sample one graph of 20 (one per raw sample), and single timed calls only for the five-call estimate"
ok "$(KBENCH_FAKE_CUDA_TIMES=steady:400 graph_run --cuda-graph | jf 'm.get("graph_calls")') $(KBENCH_FAKE_CUDA_TIMES=steady:3000000 graph_run --cuda-graph --max-samples 2 --min-samples 1 | jf 'm.get("graph_calls")')" "1024 1" \
   "... at most 1024 calls a graph (1 ms / 400 ns is 2500), at least 1 (a 3 ms call)"
e=$(KBENCH_FAKE_CUDA_TIMES=steady:50000 graph_run)
ok "$([ "$(jf 'd["digests"]["protocol"]' <<<"$e")" != "$(jf 'd["digests"]["protocol"]' <<<"$g")" ] && echo differ) $(jf '[p["timer"], m.get("graph_calls"), "graph" in d["composite"]["protocol"]["spec"]["comparability"]["notes"]]' <<<"$e")" \
   "differ ['cuda_events', None, False]" \
   "... another protocol (its own cohort) than per-call events, whose text says nothing of graphs"
ok "$(GMODE=once graph_run --cuda-graph | jf 'd["status"] + ": " + d["message"][:74]')" \
   "incorrect_numerical: timed graph's last call, graph 1 (input set 1 of 4) differs from the float" \
   "... a kernel whose work is skipped after its first inputs fails the check of a timed graph's last call"
ok "$(GMODE=once graph_run | jf '[d["status"], d["message"].startswith("timed call "), " (input set " in d["message"]]')" "['incorrect_numerical', True, True]" \
   "... as it fails the check of a timed call without graphs"
: >"$FAKE/calls.log"
ok "$(GMODE=once KBENCH_FAKE_CUDA_TIMES=steady:3000000 graph_run --cuda-graph --max-samples 3 --min-samples 1 | jf 'd["status"] + ": " + d["message"][:45]') $(awk '$2 == "time_graph" { print $3 }' "$FAKE/calls.log" | sort -u)" \
   "incorrect_numerical: timed graph's last call, graph 1 (input set 1 1" \
   "... and so does a graph of one call (a 3 ms call), timed as a graph"
ok "$(GMODE=graph_noise KBENCH_FAKE_CUDA_TIMES=steady:400 graph_run --cuda-graph | jf 'd["status"] + ": " + d["message"][:134]')" \
   "runtime_error: timed graph: a CUDA graph of 1024 calls with their clears took no longer than its clears alone: the calls are within the clears' noise" \
   "... a graph whose clears alone took as long as the calls with them is refused, not made a sample of noise"
ok "$(GMODE=fault_timed KBENCH_FAKE_CUDA_TIMES=steady:3000000 graph_run --cuda-graph | jf 'd["status"] + ": " + d["message"][:36]') | $(GMODE=fault_timed graph_run | jf 'd["status"] + ": " + d["message"][:35]')" \
   "runtime_error: timed graph: cudaErrorIllegalAddress | runtime_error: timed call: cudaErrorIllegalAddress" \
   "... a fault in a timed graph (of one call) is said to be in a timed graph, one timed per call in a timed call"
out=$(timeout 30 $KB run layer_norm forward rows=8 hidden=8 --device cpu --cuda-graph 2>&1); rc=$?
ok "$rc $(grep -c 'cuda_graph timing needs a CUDA device (cuda:N): the CPU is timed call by call' <<<"$out")" "2 1" \
   "--cuda-graph on the CPU: exits 2, saying why"
out=$(KBENCH_FAKE_CUDA=ok timeout 30 $KB "${LN[@]}" --impl torch --cuda-graph 2>&1); rc=$?
ok "$rc $(grep -c "cuda_graph timing is for kbench's own CUDA kernels (cuda, cuda/vN): 'torch' runs in a child process" <<<"$out")" "2 1" \
   "--cuda-graph with a python implementation: exits 2, saying why"

SMALL=(layer_norm forward rows=64 hidden=256)
out=$(timeout 120 $KB compare "${SMALL[@]}" --a cpu --b cpu --rounds 12 --same-pct 25 --flush-bytes 0 --rep-ms 50 --json); rc=$?
ok "$rc $(field "d['verdict'], d['order'] == 'AB' * 12, d['rounds']" <<<"$out")" "0 ('same', True, 12)" \
  "kbench compare: cpu against itself, 12 rounds in the order ABAB...: same (within 25%: a shared machine)"
ok "$(field "d['a']['workload_digest'] == d['b']['workload_digest'] and d['a']['environment_digest'] == d['b']['environment_digest'] and d['a']['run_digest'] != d['b']['run_digest'] and len(d['a']['rawSamplesNs']) == 12 * d['callsPerBlock']" <<<"$out")" True \
  "... two runs, the same workload and environment, each with all its blocks' raw samples"
echo "# kbench compare cpu/cpu: $(field "'ratio %.4f [%.4f, %.4f], %d calls a block' % (d['ratio'], d['ratioLow'], d['ratioHigh'], d['callsPerBlock'])" <<<"$out")"
# as above, blocks of ~50 ms without the flush: with the fake GPU's default (a 256 MiB host
# memset before each call) and 10 rounds, two in three runs said 'ambiguous' on an idle machine
# (a statistical verdict: said 'ambiguous' once on this session's Intel VM, 2026-12-07, and passed
# in the run before; one more comparison then: a compare that can never say 'same' fails both)
for try in 1 2; do
  out=$(KBENCH_FAKE_CUDA=ok timeout 120 $KB compare "${SMALL[@]}" --device cuda:0 --a cuda --b cuda/v2 --rounds 12 --same-pct 25 --flush-bytes 0 --rep-ms 50 --json); rc=$?
  [ "$(field "d['verdict']" <<<"$out" 2>/dev/null)" = same ] && break
  echo "# kbench compare cuda/cuda-v2 (try $try): $(field "'%s, ratio %.4f [%.4f, %.4f]' % (d['verdict'], d['ratio'], d['ratioLow'], d['ratioHigh'])" <<<"$out" 2>&1 | head -1)"
done
ok "$rc $(field "d['verdict'], d['a']['implementation'], d['b']['implementation']" <<<"$out")" "0 ('same', 'cuda', 'cuda/v2')" \
  "kbench compare on the fake GPU: cuda against cuda/v2 (the same code there): same"
# (with the fake's default flush, a 256 MiB host memset before each call, three times the kernel's
# work was 1.5-2.4x the call and its interval once fell to 1.486 on the Intel VM of 2026-12-07;
# without the flush and in blocks of ~50 ms the same build measured 2.96-2.97 [2.956, 2.965]
# three times in a row, so the interval is asked to clear 2)
out=$(KBENCH_FAKE_CUDA=slow_v2 timeout 120 $KB compare "${SMALL[@]}" --device cuda:0 --a cuda --b cuda/v2 --rounds 12 --flush-bytes 0 --rep-ms 50 --json); rc=$?
ok "$rc $(field "d['verdict'], d['ratioLow'] > 2" <<<"$out")" "0 ('slower', True)" \
  "... and against a deliberately slow v2 (three times the work): slower, the whole interval above 2"
echo "# kbench compare cuda/cuda-v2 slow: $(field "'ratio %.3f [%.3f, %.3f]' % (d['ratio'], d['ratioLow'], d['ratioHigh'])" <<<"$out")"
out=$(timeout 60 $KB compare "${SMALL[@]}" --a cpu --b cpu --rounds 10 --flush-bytes 0 --rep-ms 5); rc=$?
has "$rc $out" "0 layer_norm forward: b/a " "kbench compare prints the ratio, its interval and the verdict without --json"
for bad in "--a cpu|name both sides: --a IMPL --b IMPL" "--a cpu --b cpu --rounds 2|--rounds must be a whole number from 3 to 1000" \
           "--a cpu --b cpu --same-pct 0|--same-pct must be a number" "--a cpu --b cpu --bogus 1|unknown option --bogus" \
           "--a cpu --b cpu --rep-ms -5|--rep-ms must be a number" "--a cpu --b cpu --rounds|needs a value" \
           "--a cpu --b cuda|implementation 'cuda' does not run on device 'cpu'"; do
  out=$(timeout 60 $KB compare "${SMALL[@]}" ${bad%%|*} 2>&1); rc=$?
  has "$rc $out" "2 " "kbench compare ${bad%%|*}: refused with status 2" 
  has "$out" "${bad#*|}" "... saying: ${bad#*|}"
done
out=$(timeout 60 $KB compare --a cpu --b cpu 2>&1); rc=$?
has "$rc $out" "2 kbench compare: give the operation and the mode first" "kbench compare without an operation: status 2"

# honest CPU timing: the seed layer_norm shape takes at least 10 samples (the 256 MiB flush once gave 1)
out=$(timeout 300 $KB run layer_norm backward rows=4096 hidden=4096 dtype=fp32 --json 2>/tmp/compare-err.$$); rc=$?
ok "$rc $(field "d['composite']['run']['spec']['timing']['samples'] >= 10" <<<"$out")" "0 True" \
  "kbench run at the seed layer_norm shape (4096x4096 fp32 backward) on the CPU takes at least 10 samples"
echo "# seed shape on the CPU: $(field "'%d samples, median %.1f ms, flush %s' % (d['composite']['run']['spec']['timing']['samples'], d['composite']['run']['spec']['timing']['latencyNs']['median'] / 1e6, [w for w in d['composite']['protocol']['spec']['comparability']['notes'].split(';') if 'buffer' in w][0].strip())" <<<"$out")"
ok "$(cat /tmp/compare-err.$$)" "" "... and warns of nothing"
out=$(timeout 60 $KB run layer_norm forward rows=8 hidden=8 --max-samples 3 2>&1 >/dev/null)
has "$out" "kbench: warning: only 3 samples, fewer than the protocol's minimum of 10" "a kbench run with 3 samples warns on stderr"
rm -f /tmp/compare-err.$$
out=$(timeout 120 $KB run layer_norm backward rows=4096 hidden=4096 dtype=fp32 --rep-ms 300000 --timeout 1 2>&1 >/dev/null)
has "$out" "kbench: this run is estimated to take 5." "a kbench run estimated over 2 minutes says so before it starts (5 minutes of samples at the seed shape)"

# ---------------------------------------------------------------- the server
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu,cuda:0'" "kernelindex.python = '$PY'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
finished() { wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $1" "$2"; }
wait_for "SELECT count(*) = 2 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the workers did not start"
# (256 x 1024: a call of about 0.1-0.3 ms on this CPU.  At 64 x 256, once the CPU kernels were
# vectorised (issue 31), a call took a few microseconds and cpu against itself came out
# 'ambiguous' under load in one fresh-clone run out of two: the jitter of so short a call, not a verdict)
WL='{"rows": 256, "hidden": 1024, "dtype": "fp32"}'
P='{"flush_bytes": 0, "rep_ms": 50, "warmup_ms": 1}'
job_of() { q "SELECT job_id FROM kbench_comparisons WHERE id = $1"; }

# 1. cpu against itself through the CPU worker: one job, both runs, the comparison
c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cpu', 'cpu', rounds => 12, same_pct => 25, protocol => '$P', device => 'cpu')")
j=$(job_of "$c")
ok "$(q "SELECT count(*) FROM kbench_jobs") $(q "SELECT comparison->>'b' || ' ' || (comparison->>'rounds') FROM kbench_jobs WHERE id = $j")" "1 cpu 12" \
  "kbench_compare queues ONE job that carries B and the rounds"
finished "$j" 120
# (statistical, as above: one more comparison when the first is not 'same'; the job counted above is the first's)
if [ "$(q "SELECT verdict FROM kbench_comparison($c)")" != same ]; then
  echo "# worker cpu/cpu (first try): $(q "SELECT format('ratio %s [%s, %s] %s', round(ratio::numeric, 4), round(ratio_low::numeric, 4), round(ratio_high::numeric, 4), verdict) FROM kbench_comparisons WHERE id = $c")"
  c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cpu', 'cpu', rounds => 12, same_pct => 25, protocol => '$P', device => 'cpu')")
  j=$(job_of "$c")
  finished "$j" 120
fi
ok "$(q "SELECT status || ' ' || rounds_done || ' ' || verdict || ' ' || (call_order = repeat('AB', 12)) FROM kbench_comparison($c)")" "done 12 same true" \
  "the worker timed 12 rounds in the order ABAB... and stored the verdict: same (within 25%)"
ok "$(q "SELECT count(DISTINCT r.digest) || ' ' || count(DISTINCT r.workload_digest) || ' ' || count(DISTINCT r.protocol_digest) || ' ' || count(DISTINCT r.environment_digest)
            || ' ' || bool_and(cardinality(r.raw_samples_ns) = c.calls_per_block * 12) || ' ' || bool_and(r.status = 'passed')
         FROM kbench_comparisons c JOIN kbench_runs r ON r.digest IN (c.a_run, c.b_run) WHERE c.id = $c")" "2 1 1 1 true true" \
  "both runs stored, each with its raw samples, with identical workload, protocol and environment digests"
ok "$(q "SELECT j.status || ' ' || j.phase || ' ' || (j.run_digest = c.a_run) || ' ' || (c.ratio BETWEEN c.ratio_low AND c.ratio_high)
            || ' ' || (abs(c.ratio - c.b_median_ns / c.a_median_ns) < 1e-9) FROM kbench_jobs j JOIN kbench_comparisons c ON c.job_id = j.id WHERE c.id = $c")" \
  "passed done true true true" "the job is done and names A's run; the ratio is B's median over A's, inside its interval"
ok "$(q "SELECT (x).verdict = c.verdict AND (x).ratio_low = c.ratio_low FROM (SELECT kbench_paired_ratio(a_round_ns, b_round_ns, same_pct) x, c FROM kbench_comparisons c WHERE id = $c) s, kbench_comparisons c WHERE c.id = $c")" t \
  "kbench_paired_ratio over the stored rounds gives the stored interval and verdict (one routine)"
echo "# worker cpu/cpu: $(q "SELECT format('ratio %s [%s, %s] %s, %s calls a block', round(ratio::numeric, 4), round(ratio_low::numeric, 4), round(ratio_high::numeric, 4), verdict, calls_per_block) FROM kbench_comparisons WHERE id = $c")"

# 2. the CPU builtin against huggingface (torch), on the CPU
$PY -c 'import torch' 2>/dev/null || echo "not ok - $PY imports torch (apt-get install python3-torch; bin/setup.sh installs it)"
c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cpu', 'huggingface', rounds => 5, protocol => '$P', device => 'cpu')")
finished "$(job_of "$c")" 240
ok "$(q "SELECT status || ' ' || rounds_done || ' ' || (verdict IS NOT NULL) FROM kbench_comparison($c)")" "done 5 true" \
  "cpu against huggingface through the CPU worker: done, with a verdict"
ok "$(q "SELECT string_agg(i.name, ' ' ORDER BY r.digest = c.b_run) || ' ' || count(DISTINCT r.workload_digest) || ' ' || count(DISTINCT r.environment_digest)
         FROM kbench_comparisons c JOIN kbench_runs r ON r.digest IN (c.a_run, c.b_run) JOIN kbench_implementations i ON i.digest = r.implementation_digest WHERE c.id = $c")" \
  "kbench-layer-norm-cpu kbench-python-huggingface-layer-norm 1 1" "... its two runs: kbench's C code and the python baseline, one workload, one environment"
echo "# worker cpu/huggingface: $(q "SELECT format('ratio %s [%s, %s] %s', round(ratio::numeric, 3), round(ratio_low::numeric, 3), round(ratio_high::numeric, 3), verdict) FROM kbench_comparisons WHERE id = $c")"

# 3. cuda against cuda/v2 on the fake GPU's worker; then a deliberately slow v2
c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cuda', 'cuda/v2', device => 'cuda:0', rounds => 20, same_pct => 25, protocol => '$P')")
finished "$(job_of "$c")" 120
if [ "$(q "SELECT verdict FROM kbench_comparison($c)")" != same ]; then   # (statistical: once more, as above)
  echo "# worker cuda/cuda-v2 (first try): $(q "SELECT format('ratio %s [%s, %s] %s', round(ratio::numeric, 4), round(ratio_low::numeric, 4), round(ratio_high::numeric, 4), verdict) FROM kbench_comparisons WHERE id = $c")"
  c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cuda', 'cuda/v2', device => 'cuda:0', rounds => 20, same_pct => 25, protocol => '$P')")
  finished "$(job_of "$c")" 120
fi
echo "# worker cuda/cuda-v2: $(q "SELECT format('ratio %s [%s, %s] %s, %s calls a block', round(ratio::numeric, 4), round(ratio_low::numeric, 4), round(ratio_high::numeric, 4), verdict, calls_per_block) FROM kbench_comparisons WHERE id = $c")"
ok "$(q "SELECT status || ' ' || verdict FROM kbench_comparison($c)")" "done same" "cuda against cuda/v2 on the fake GPU (the same code there): same"
ok "$(q "SELECT string_agg(i.name, ' ' ORDER BY r.digest = c.b_run) FROM kbench_comparisons c JOIN kbench_runs r ON r.digest IN (c.a_run, c.b_run) JOIN kbench_implementations i ON i.digest = r.implementation_digest WHERE c.id = $c")" \
  "kbench-layer-norm-cuda kbench-layer-norm-cuda-v2" "... two runs, one per variant"
echo slow_v2 >"$FAKE/mode"
c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cuda', 'cuda/v2', device => 'cuda:0', rounds => 10)")
finished "$(job_of "$c")" 120
ok "$(q "SELECT status || ' ' || verdict || ' ' || (ratio_low > 1.2) FROM kbench_comparison($c)")" "done slower true" \
  "a deliberately slow v2 (three times the work): slower, the whole interval above 1.2"
echo ok >"$FAKE/mode"

# 4. a compare job canceled while it samples: nothing stored, the phase kept
echo "time_one:12" >"$FAKE/hold"
c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cuda', 'cuda/v2', device => 'cuda:0', rounds => 10)")
j=$(job_of "$c")
wait_for "SELECT phase = 'sampling' FROM kbench_job_status WHERE id = $j" 60
ok "$(q "SELECT kbench_cancel($j)")" t "a running compare job can be canceled"
: >"$FAKE/hold"
finished "$j" 60
ok "$(q "SELECT status || ' ' || coalesce(rounds_done::text, '-') || ' ' || coalesce(verdict, 'none') || ' ' || coalesce(a_run, 'none') FROM kbench_comparison($c)")" \
  "canceled 0 none none" "... it ends canceled, no verdict, no run stored"
ok "$(q "SELECT status || ' ' || phase || ' ' || (progress > 0 AND progress < 1) FROM kbench_job_status WHERE id = $j")" "canceled sampling true" \
  "... and keeps the phase and progress it stopped at"

# 5. a compare job past its timeout: both runs stored as timeout, no verdict
c=$(q "SELECT kbench_compare('layer_norm', 'forward', '$WL', 'cpu', 'cpu', rounds => 1000, device => 'cpu',
         protocol => '{\"flush_bytes\": 0, \"rep_ms\": 600000, \"max_samples\": 100000000}', timeout => '1 second')")
j=$(job_of "$c")
finished "$j" 60
ok "$(q "SELECT status || ' ' || coalesce(verdict, 'none') || ' ' || (rounds_done < 1000) FROM kbench_comparison($c)")" "timeout none true" \
  "a compare job past its timeout ends as timeout, with no verdict"
ok "$(q "SELECT string_agg(r.status::text, ' ') || ' ' || bool_and(r.samples > 0)::text FROM kbench_comparisons c JOIN kbench_runs r ON r.digest IN (c.a_run, c.b_run) WHERE c.id = $c")" \
  "timeout timeout true" "... both runs stored as timeout, with the samples taken"
ok "$(q "SELECT phase FROM kbench_jobs WHERE id = $j")" sampling "... the job stopped in sampling"

# 6. the phases of a job, one by one: the fake holds a named call, a row lock holds the store
echo fill >"$FAKE/hold"
j=$(q "SELECT kbench_run('layer_norm', 'forward', '$WL', device => 'cuda:0', protocol => '$P')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $j" 30
ok "$(q "SELECT phase || ' ' || (elapsed IS NOT NULL) || ' ' || (remaining IS NOT NULL) FROM kbench_job_status WHERE id = $j")" "setup true true" \
  "held while filling its inputs: phase setup, elapsed time, the queue-time estimate as what remains"
seen() { wait_for "SELECT phase = '$1' FROM kbench_job_status WHERE id = $j" 30 && echo "$1"; }
echo call >"$FAKE/hold"; ok "$(seen warm-up)" warm-up "held at its first call: phase warm-up"
echo "time_one:8" >"$FAKE/hold"; ok "$(seen sampling)" sampling "held at its third timed sample: phase sampling"
ok "$(q "SELECT (progress >= 0.2 AND progress < 0.8) || ' ' || (remaining IS NOT NULL) FROM kbench_job_status WHERE id = $j")" "true true" \
  "... with its progress among the samples and the worker's estimate of the rest"
exec 7> >(psql -X -q >/dev/null 2>&1)
echo "BEGIN; SELECT 1 FROM kbench_jobs WHERE id = $j FOR UPDATE;" >&7
# reading outputs happens while sampling too (the timed calls checked as they return, issue 27):
# held at such a read (phase sampling), the job is moved on to its next call (a timed call, or the
# untimed call after the last), then held at its next read, until that read is the check's.  Each
# step waits for the fake to say it is held (KBENCH_FAKE_CUDA_HELD), not for a time: waiting two
# seconds let a slow job be released from the check's read unseen, once in CI.
held_at() {  # the fake is held at one of the calls (an extended regex), within 60 s
  local k
  for ((k = 0; k < 600; k++)); do
    grep -Eqx "$1" "$FAKE/held/call" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
checking_seen() {
  local k
  for ((k = 0; k < 1000; k++)); do
    echo to_host >"$FAKE/hold.new" && mv "$FAKE/hold.new" "$FAKE/hold"
    held_at to_host || { echo "not held at to_host: $(q "SELECT status || ' ' || phase FROM kbench_job_status WHERE id = $j")"; return; }
    [ "$(q "SELECT phase FROM kbench_job_status WHERE id = $j")" = checking ] && { echo checking; return; }
    echo "time_one|call" >"$FAKE/hold.new" && mv "$FAKE/hold.new" "$FAKE/hold"
    held_at "time_one|call" || { echo "not held at the next call: $(q "SELECT status || ' ' || phase FROM kbench_job_status WHERE id = $j")"; return; }
  done
}
ok "$(checking_seen)" checking "held while reading its outputs for the check: phase checking"
: >"$FAKE/hold"; ok "$(seen storing)" storing "held by a lock on its row while storing: phase storing"
echo "COMMIT;" >&7; exec 7>&-
finished "$j" 30
ok "$(q "SELECT status || ' ' || phase || ' ' || progress || ' ' || (remaining IS NULL) FROM kbench_job_status WHERE id = $j")" "passed done 1 true" \
  "then done, progress 1, nothing remaining"
# a job canceled while sampling keeps that phase and its progress
echo "time_one:8" >"$FAKE/hold"
j=$(q "SELECT kbench_run('layer_norm', 'forward', '$WL', device => 'cuda:0', protocol => '$P')")
wait_for "SELECT phase = 'sampling' FROM kbench_job_status WHERE id = $j" 30
q "SELECT kbench_cancel($j)" >/dev/null; : >"$FAKE/hold"
finished "$j" 30
ok "$(q "SELECT status || ' ' || phase || ' ' || (progress > 0 AND progress < 1) FROM kbench_job_status WHERE id = $j")" "canceled sampling true" \
  "a job canceled while sampling keeps phase sampling and its progress (not 1)"
# a failed run keeps the phase it failed in
echo fault_call >"$FAKE/mode"
j=$(q "SELECT kbench_run('layer_norm', 'forward', '$WL', device => 'cuda:0', protocol => '$P')")
finished "$j" 30
ok "$(q "SELECT status || ' ' || phase || ' ' || (progress < 1) FROM kbench_job_status WHERE id = $j")" "failed setup true" \
  "a job whose device faulted at its prepare call keeps phase setup"
echo ok >"$FAKE/mode"

# 7. estimates from past runs; the seed shape through the worker
out=$(psql -X -q -c "SELECT kbench_run('layer_norm', 'forward', '$WL', device => 'cpu', max_minutes => 0.0000001)" 2>&1)
has "$out" "DETAIL:  The estimate is from a past run on the device" "kbench_run estimates from the device's past run of the workload (max_minutes refuses it with that estimate)"
j=$(q "SELECT kbench_run('layer_norm', 'backward', '{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}', device => 'cpu')")
finished "$j" 300
ok "$(q "SELECT j.status || ' ' || (r.samples >= 10) || ' ' || (cardinality(r.raw_samples_ns) = r.samples) FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $j")" \
  "passed true true" "the seed layer_norm shape through the CPU worker, default protocol: at least 10 samples, all kept"
echo "# seed shape through the worker: $(q "SELECT format('%s samples, median %s ms; estimated %s s, took %s s', r.samples, round(r.median_ns / 1e6, 1), round(j.estimate_s::numeric, 1), round(extract(epoch FROM j.finished_at - j.started_at)::numeric, 1)) FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $j")"
