#!/usr/bin/env bash
# test/suites/kernels.sh: build kernels/ and test it on the CPU (TAP lines).
# Run from the repository root.  Needs a C compiler, make, zstd (for the
# digest comparison with the Liger expectation; skipped without it) and
# optionally nvcc (the CUDA sources must compile; skipped without it).
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
# the repository's copy of the expected Liger import (data/, see data/NOTICE.md)
EXPECTED=$ROOT/data/liger/kernelindex_expected.jsonl.zst
KB=$ROOT/kernels/kbench
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }

NVCC_BIN=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
if make -s -C kernels -j2 libkbench.a kbench build/test_kernels NVCC= >/tmp/kbench-build.$$ 2>&1; then
	ok "kernels/ builds with plain cc (libkbench.a, kbench, unit tests)"
else
	notok "kernels/ builds with plain cc"; sed 's/^/# /' /tmp/kbench-build.$$; rm -f /tmp/kbench-build.$$; exit 1
fi
rm -f /tmp/kbench-build.$$
if [ -n "$NVCC_BIN" ]; then
	if make -s -C kernels -j2 libkbench_cuda.so NVCC="$NVCC_BIN" >/tmp/kbench-nvcc.$$ 2>&1; then
		ok "CUDA sources compile with nvcc (-Werror all-warnings, sm_90 + PTX) into libkbench_cuda.so"
	else
		notok "CUDA sources compile with nvcc"; sed 's/^/# /' /tmp/kbench-nvcc.$$
	fi
	rm -f /tmp/kbench-nvcc.$$
	check "libkbench_cuda.so exports kbc_get_api and links no libcuda" \
		bash -c "nm -D kernels/libkbench_cuda.so | grep -q ' T kbc_get_api' && ! ldd kernels/libkbench_cuda.so | grep -q 'libcuda\.'"
	export KBENCH_CUDA_LIB=$ROOT/kernels/libkbench_cuda.so
else
	ok "# SKIP needs=nvcc CUDA sources not compiled"
	ok "# SKIP needs=nvcc libkbench_cuda.so not checked"
fi
check "libkbench.a references no CUDA symbol (loads without a driver)" \
	bash -c "! nm kernels/libkbench.a | grep -Eq ' U (cuda|cu[A-Z]|nvml)'"
check "libkbench.a is position-independent (links into a shared object)" \
	bash -c "cc -shared -o /tmp/kbtest.$$.so -Wl,--whole-archive kernels/libkbench.a -Wl,--no-whole-archive -lm -ldl -lpthread $(echo '#include <openssl/evp.h>' | cc -E - >/dev/null 2>&1 && echo -lcrypto) && rm -f /tmp/kbtest.$$.so"

# C unit tests, numbered after ours.
out=$(TAP_START=$n kernels/build/test_kernels)
rc=$?
echo "$out" | grep -E '^(ok|not ok) |^#'
n=$((n + $(echo "$out" | grep -cE '^(ok|not ok) ')))
[ $rc -eq 0 ] || fails=$((fails + 1))

# ---------------------------------------------------------------- CLI behaviour
expect() { # description, wanted exit code, wanted text (stderr+stdout), command...
	local d=$1 want=$2 text=$3; shift 3
	local got rc
	got=$("$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ] && printf '%s' "$got" | grep -qF -- "$text"; then ok "$d"
	else notok "$d (exit $rc, wanted $want; output: $(printf '%s' "$got" | head -c 300))"; fi
}
expect "kbench list shows the four operations" 0 "distill_jsd_loss" $KB list
expect "kbench list --json names operation digests" 0 '"operationDigest":"sha256:' $KB list --json
expect "kbench devices lists the cpu" 0 "cpu" $KB devices
expect "kbench without a command: usage, exit 2" 2 "usage:" $KB
expect "unknown command: exit 2, allowed commands named" 2 "allowed: list, devices, describe, run" $KB frobnicate
expect "unknown operation: exit 2, the nearest name suggested" 2 "unknown operation 'layernorm' (did you mean layer_norm?); kbench list" $KB run layernorm forward rows=1 hidden=1
expect "unknown mode: exit 2, modes listed" 2 "allowed: forward, full" $KB run distill_jsd_loss backward tokens=1 vocab=2 hidden=4
expect "unknown axis: exit 2, axes listed" 2 "unknown axis 'batch' for jsd; allowed: tokens, vocab, dtype" $KB run jsd forward tokens=1 vocab=2 batch=3
expect "unknown dtype: exit 2, dtypes listed" 2 "allowed: fp32, bf16" $KB run layer_norm forward rows=1 hidden=2 dtype=fp8
expect "zero size: exit 2" 2 "axis 'rows' must be a positive integer, got '0'" $KB run layer_norm forward rows=0 hidden=2
expect "negative size: exit 2" 2 "must be a positive integer, got '-4'" $KB run layer_norm forward rows=-4 hidden=2
expect "non-numeric size: exit 2" 2 "must be a positive integer, got 'big'" $KB run layer_norm forward rows=big hidden=2
expect "missing axis: exit 2, required axes listed" 2 "missing axis 'hidden' for layer_norm (required: rows, hidden" $KB run layer_norm forward rows=3
expect "argument without '=': exit 2" 2 "expected key=value" $KB run layer_norm forward rows
expect "unknown option: exit 2" 2 "unknown option --fast" $KB run layer_norm forward rows=1 hidden=2 --fast
expect "bad device: exit 2" 2 "allowed: cpu, cuda:N" $KB run layer_norm forward rows=1 hidden=2 --device tpu
expect "cuda impl on the cpu device: exit 2" 2 "does not run on device" $KB run layer_norm forward rows=1 hidden=2 --impl cuda
expect "workload larger than memory: resource_exceeded, exit 4" 4 "resource_exceeded" $KB run jsd forward tokens=1048576 vocab=131072 --rep-ms 1
# host memory is what the kernel could give (MemAvailable: free plus reclaimable page cache), not
# only the free pages, which a busy machine keeps low; a stand-in meminfo pins both
printf 'MemTotal: 25165824 kB\nMemFree: 262144 kB\nMemAvailable: 23068672 kB\n' >/tmp/kbench-meminfo.$$
expect "a workload above MemFree but below MemAvailable runs (0.25 GiB free, 22 GiB available)" 0 '"status":"passed"' \
	env KBENCH_MEMINFO=/tmp/kbench-meminfo.$$ $KB run layer_norm forward rows=4 hidden=8 --rep-ms 1 --warmup-ms 1 --json
printf 'MemTotal: 25165824 kB\nMemFree: 23068672 kB\nMemAvailable: 1024 kB\n' >/tmp/kbench-meminfo.$$
expect "a workload above MemAvailable is refused, saying what is available: resource_exceeded, exit 4" 4 \
	"workload needs 0.31 GiB of host memory, 0.00 GiB are available" \
	env KBENCH_MEMINFO=/tmp/kbench-meminfo.$$ $KB run layer_norm forward rows=4 hidden=8 --rep-ms 1 --warmup-ms 1 --flush-bytes 268435456
rm -f /tmp/kbench-meminfo.$$
# CUDA kernel variants: v2 exists for three operations; an implementation name says which (cuda/v2),
# as kbench_run's implementation argument does in SQL, and the ImplementationRevision is named after it.
expect "kbench list shows the implementations by the names --impl and SQL take" 0 "cpu,cuda,cuda/v2" $KB list
expect "kbench list --json names each implementation, its device, revision name and symbol" 0 \
	'{"implementation":"cuda/v2","device":"cuda","name":"kbench-layer-norm-cuda-v2","symbol":"layer_norm_cuda/v2"}' $KB list --json
if out=$(python3 test/kernels/builtin_names.py $KB kernels/python/kbench_builtin.py 2>&1); then
	ok "the built-in python implementations kbench lists (impl_name.c) are the ones kbench_builtin.py accepts, for the same operations"
else
	notok "built-in python implementation names: kbench and kbench_builtin.py differ: $(echo "$out" | head -3 | tr '\n' ' ')"
fi
expect "unknown variant: exit 2, variants listed" 2 "unknown variant 'v3' for layer_norm; allowed: v1, v2" $KB run layer_norm backward rows=1 hidden=4 --device cuda:0 --impl cuda/v3
expect "variant of an operation that has one kernel: exit 2" 2 "unknown variant 'v2' for jsd; allowed: v1" $KB run jsd forward tokens=1 vocab=2 --device cuda:0 --impl cuda/v2
expect "not a variant: exit 2" 2 "unknown variant 'x' for jsd; allowed: v1" $KB run jsd forward tokens=1 vocab=2 --device cuda:0 --impl cuda/x
expect "cuda/v2 on the cpu: exit 2, says where it runs" 2 "implementation 'cuda/v2' does not run on device 'cpu' (cpu runs on cpu, cuda and cuda/vN on cuda:N)" $KB run layer_norm backward rows=1 hidden=4 --impl cuda/v2
expect "--variant was removed: exit 2, says to write --impl cuda/vN" 2 "kbench: --variant was removed: a CUDA kernel variant is named as an implementation, as kbench_run names it in SQL: --impl cuda/v2" $KB run layer_norm backward rows=1 hidden=4 --device cuda:0 --variant v2
expect "--variant without a value: exit 2, the same advice" 2 "--impl cuda/vN" $KB describe layer_norm backward rows=1 hidden=4 --variant
# every flag checked as kbench_run checks its protocol (kernels/kb_protocol.h); list takes only --json (issue 13)
expect "kbench list --xml: exit 2" 2 "list takes only --json, got '--xml'" $KB list --xml
expect "kbench devices --csv: exit 2" 2 "devices takes only --json" $KB devices --csv
expect "--rep-ms -5: exit 2, the range kbench_run allows" 2 "--rep-ms must be a number from 0.001 to 3.6e+06, got '-5'" $KB run layer_norm forward rows=1 hidden=2 --rep-ms -5
expect "--warmup-ms abc: exit 2" 2 "--warmup-ms must be a number, got 'abc'" $KB run layer_norm forward rows=1 hidden=2 --warmup-ms abc
expect "--warmup-ms 5ms: exit 2" 2 "--warmup-ms must be a number, got '5ms'" $KB run layer_norm forward rows=1 hidden=2 --warmup-ms 5ms
expect "--max-samples 2.5: exit 2" 2 "--max-samples must be a whole number, got '2.5'" $KB run layer_norm forward rows=1 hidden=2 --max-samples 2.5
expect "--max-samples 0: exit 2" 2 "--max-samples must be a number from 1 to" $KB run layer_norm forward rows=1 hidden=2 --max-samples 0
expect "--flush-bytes -1: exit 2" 2 "--flush-bytes must be a number from 0 to" $KB run layer_norm forward rows=1 hidden=2 --flush-bytes -1
expect "--seed 1.5: exit 2" 2 "--seed must be a whole number" $KB run layer_norm forward rows=1 hidden=2 --seed 1.5
# kbench run prints a summary, the manifests only when asked; --json has a top-level summary
sum=$($KB run layer_norm forward rows=8 hidden=32 --warmup-ms 0 --rep-ms 1 --flush-bytes 0 2>&1)
if printf '%s' "$sum" | grep -q '^  median .* us' && printf '%s' "$sum" | grep -q 'samples kept' \
   && printf '%s' "$sum" | grep -q 'of its tolerance (pass <= 1)' && printf '%s' "$sum" | grep -q '^  run sha256:[0-9a-f]\{64\}' \
   && ! printf '%s' "$sum" | grep -q '"kind"'; then ok "kbench run prints a summary (median, samples, correctness, digest) and no manifest"
else notok "kbench run prints a summary and no manifest: $(printf '%s' "$sum" | head -c 300)"; fi
expect "kbench run --manifests prints the manifests too" 0 '"kind":"BenchmarkProtocol"' $KB run layer_norm forward rows=8 hidden=32 --warmup-ms 0 --rep-ms 1 --flush-bytes 0 --manifests
expect "kbench run --json has a top-level summary" 0 '"summary":{"status":"passed","median_ns":' $KB run layer_norm forward rows=8 hidden=32 --warmup-ms 0 --rep-ms 1 --flush-bytes 0 --json
v1=$($KB describe layer_norm backward rows=8 hidden=8 --device cuda:0 --json 2>&1 | grep -oE '"implementation":"sha256:[0-9a-f]{64}"')
v1b=$($KB describe layer_norm backward rows=8 hidden=8 --device cuda:0 --impl cuda/v1 --json 2>&1 | grep -oE '"implementation":"sha256:[0-9a-f]{64}"')
v2=$($KB describe layer_norm backward rows=8 hidden=8 --device cuda:0 --impl cuda/v2 --json 2>&1)
check "v1 is the default variant (the same implementation digest on cuda:0 and with --impl cuda/v1)" test -n "$v1" -a "$v1" = "$v1b"
# What v1's digest is made of, pinned: its ImplementationRevision keeps the name and symbol it had
# before variants existed (the digest itself also covers the commit, so it cannot be pinned).
v1m=$($KB describe layer_norm backward rows=8 hidden=8 --device cuda:0 --json 2>&1 | grep -o '"kind":"ImplementationRevision","metadata":{[^}]*}' | grep -o '"name":"[^"]*"')
v1s=$($KB describe layer_norm backward rows=8 hidden=8 --device cuda:0 --json 2>&1 | grep -o '"callable":{[^}]*}')
check "v1's ImplementationRevision keeps its pinned name and callable (kbench-layer-norm-cuda, layer_norm_cuda in layer_norm.cu)" \
	test "$v1m $v1s" = '"name":"kbench-layer-norm-cuda" "callable":{"interface":"kbench","language":"cuda","path":"kernels/ops/layer_norm.cu","symbol":"layer_norm_cuda"}'
check "--impl cuda/v2 is its own ImplementationRevision (kbench-layer-norm-cuda-v2, another digest)" \
	bash -c 'printf "%s" "$1" | grep -q "\"name\":\"kbench-layer-norm-cuda-v2\"" && ! printf "%s" "$1" | grep -qF "$2"' _ "$v2" "$v1"
# kbench describe: the tensors an implementation takes and returns (issue 29, docs/BYO.md)
d=$($KB describe layer_norm forward rows=8 hidden=32 2>&1)
check "kbench describe lists layer_norm forward's tensors: name, shape, dtype, role" \
	bash -c 'for l in "x +\[8, 32\] +fp32 +input" "weight +\[1, 32\] +fp32 +input" "y +\[8, 32\] +fp32 +output" "rstd +\[8, 1\] +fp32 +output" "dx +\[8, 32\] +fp32 +scratch"; do printf "%s" "$1" | grep -Eq "^    $l\$" || exit 1; done' _ "$d"
d=$($KB describe layer_norm backward rows=8 hidden=32 dtype=bf16 --impl huggingface --json 2>&1)
check "describe --json of huggingface's layer_norm backward bf16: dx an output in bf16, y scratch, mean fp32" \
	bash -c 'printf "%s" "$1" | python3 -c "
import json, sys
t = {x[\"name\"]: x for x in json.load(sys.stdin)[\"tensors\"]}
assert t[\"dx\"][\"role\"] == \"output\" and t[\"dx\"][\"dtype\"] == \"bf16\" and t[\"dx\"][\"shape\"] == [8, 32], t[\"dx\"]
assert t[\"y\"][\"role\"] == \"scratch\" and t[\"mean\"][\"dtype\"] == \"fp32\" and t[\"dy\"][\"role\"] == \"input\"
"' _ "$d"
d=$($KB describe rms_norm forward rows=4 hidden=16 --impl huggingface 2>&1)
check "describe of an operation defined as data (rms_norm) lists its tensors" \
	bash -c 'printf "%s" "$1" | grep -Eq "^    y +\[4, 16\] +fp32 +output\$" && printf "%s" "$1" | grep -Eq "^    x +\[4, 16\] +fp32 +input\$"' _ "$d"
d=$($KB describe layer_norm forward rows=8 hidden=32 --impl python:test/byo/impls.py:good 2>&1)
check "describe of a python entry names it and lists the same tensors (what ctx.inputs and the returned dict hold)" \
	bash -c 'printf "%s" "$1" | grep -q "^layer_norm forward rows=8 hidden=32: byo-impls-py-good\$" && printf "%s" "$1" | grep -Eq "^    bias +\[1, 32\] +fp32 +input\$"' _ "$d"
# peak memory by one rule for every kind (issue 29 item 9, docs/KERNELS.md "Peak memory"): the inputs,
# the outputs compared and what the implementation allocates as far as it is known
FAST="--rep-ms 1 --warmup-ms 0 --flush-bytes 0"
# layer_norm forward 64x256 fp32: inputs x, dy (64x256), weight, bias (256); outputs y (64x256), mean, rstd (64)
io=$(( (3*64*256 + 2*256) * 4 + 2*64*4 ))
pk=$($KB run layer_norm forward rows=64 hidden=256 $FAST 2>&1 | sed -n 's/^  peak memory \([0-9]*\) bytes$/\1/p')
check "kbench's own cpu run: peak memory = inputs + outputs + its workspace (2 x 256 doubles), by hand" test "$pk" = "$(( io + 2*256*8 ))"
cc -std=c11 -O2 -fPIC -shared -Ikernels -o /tmp/kbench-ln.$$.so test/byo/ln_lib.c -lm
pk=$($KB run layer_norm forward rows=64 hidden=256 --impl library:/tmp/kbench-ln.$$.so:ln_good $FAST 2>&1 | sed -n 's/^  peak memory \([0-9]*\) bytes$/\1/p')
check "a C library's run: peak memory = the same inputs + outputs + what it reports allocating (2 x 256 floats), by hand" test "$pk" = "$(( io + 2*256*4 ))"
rm -f /tmp/kbench-ln.$$.so
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	pk=$($KB run layer_norm forward rows=64 hidden=256 --impl huggingface --python /usr/bin/python3 $FAST 2>&1 | sed -n 's/^  peak memory \([0-9]*\) bytes$/\1/p')
	check "huggingface's run: peak memory = the same inputs + the output it returns (y; mean and rstd not returned, not compared)" test "$pk" = "$(( io - 2*64*4 ))"
else
	ok "# SKIP needs=python3-torch huggingface's peak memory not checked"
fi
# the total loss alone (issue 26 item 3): an implementation that returns no per-row loss (Liger's
# modules) has its total checked against the float64 reference over every row; per-row values,
# where returned, are checked as ever; a loss or gradient not returned fails (test/byo/total_loss.py)
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	TL="--python /usr/bin/python3 $FAST --impl python:test/byo/total_loss.py"
	expect "jsd: the total loss and grad_input only, right (100 tokens: the total over every row, 32 sampled for grad_input): passed" \
		0 "jsd forward: passed" $KB run jsd forward tokens=100 vocab=300 $TL:jsd_total_only
	expect "jsd: the total loss only, right, every row sampled (20 tokens): passed" \
		0 "jsd full: passed" $KB run jsd full tokens=20 vocab=300 $TL:jsd_total_only
	expect "jsd: the total loss only, 1% off: incorrect_numerical at the loss" \
		1 "jsd forward: incorrect_numerical - timed call 0 (input set 0 of 4) differs from the float64 reference for its own inputs (its outputs do not follow its inputs, or the work was skipped on this call or finished after it returned): loss[0]" \
		$KB run jsd forward tokens=100 vocab=300 $TL:jsd_total_only_wrong
	expect "jsd: per-row losses right, the total 1% off: incorrect_numerical at the loss" \
		1 "incorrect_numerical - timed call 0 (input set 0 of 4) differs from the float64 reference for its own inputs (its outputs do not follow its inputs, or the work was skipped on this call or finished after it returned): loss[0]" \
		$KB run jsd forward tokens=100 vocab=300 $TL:jsd_rows_right_total_wrong
	expect "jsd: per-row losses 1% off, the total right: incorrect_numerical at row_loss (still checked per row)" \
		1 "its outputs do not follow its inputs, or the work was skipped on this call or finished after it returned): row_loss[" \
		$KB run jsd forward tokens=100 vocab=300 $TL:jsd_rows_wrong_total_right
	expect "jsd: no loss returned: incorrect_numerical, naming it" 1 "loss: not returned by the implementation" \
		$KB run jsd forward tokens=20 vocab=300 $TL:jsd_no_loss
	expect "jsd: no grad_input returned: incorrect_numerical, naming it" 1 "grad_input: not returned by the implementation" \
		$KB run jsd forward tokens=20 vocab=300 $TL:jsd_no_grad
	expect "distill_jsd_loss: the total and both gradients only, right: passed" \
		0 "distill_jsd_loss forward: passed" $KB run distill_jsd_loss forward tokens=6 hidden=16 vocab=40 $TL:distill_total_only
	expect "distill_jsd_loss: the total only, 1% off: incorrect_numerical at the loss" 1 "finished after it returned): loss[0]" \
		$KB run distill_jsd_loss forward tokens=6 hidden=16 vocab=40 $TL:distill_total_only_wrong
	expect "distill_jsd_loss: token_loss 1% off, the total right: incorrect_numerical at token_loss" 1 "finished after it returned): token_loss[" \
		$KB run distill_jsd_loss forward tokens=6 hidden=16 vocab=40 $TL:distill_tokens_wrong_total_right
	expect "distill_jsd_loss: no grad_student_weight returned: incorrect_numerical, naming it" 1 "grad_student_weight: not returned by the implementation" \
		$KB run distill_jsd_loss forward tokens=6 hidden=16 vocab=40 $TL:distill_no_weight_grad
	# Liger's modules (a stand-in, test/byo/fake_liger: LigerJSD and LigerFusedLinearJSDFunction return the total only)
	for m in forward backward full; do
		expect "liger (stand-in) jsd $m: passes (the total checked over every row; backward through log_softmax)" 0 "jsd $m: passed" \
			env PYTHONPATH=test/byo/fake_liger $KB run jsd $m tokens=40 vocab=300 --impl liger --python /usr/bin/python3 $FAST
	done
	for m in forward full; do
		expect "liger (stand-in) distill_jsd_loss $m bf16: passes (no token_loss: the total checked over every token)" 0 "distill_jsd_loss $m: passed" \
			env PYTHONPATH=test/byo/fake_liger $KB run distill_jsd_loss $m tokens=6 hidden=16 vocab=40 --impl liger --python /usr/bin/python3 $FAST
	done
	# jsd backward (issue 26 item 3): torch's autograd through log_softmax, against kbench's float64 reference
	expect "torch jsd backward fp32 passes (grad_logits: the JSD's and log_softmax's backward)" 0 "jsd backward: passed" \
		$KB run jsd backward tokens=40 vocab=3000 --impl torch --python /usr/bin/python3 $FAST
	expect "a python jsd backward in float64 through log_softmax, scaled by grad_loss: passed" 0 "jsd backward: passed" \
		$KB run jsd backward tokens=40 vocab=300 $TL:jsd_backward_right
	expect "a python jsd backward without log_softmax's backward (grad_loss * grad_input): incorrect_numerical at grad_logits" \
		1 "finished after it returned): grad_logits[" $KB run jsd backward tokens=40 vocab=300 $TL:jsd_backward_no_log_softmax
	expect "a python jsd backward that returns no grad_logits: incorrect_numerical, naming it" 1 "grad_logits: not returned by the implementation" \
		$KB run jsd backward tokens=8 vocab=30 $TL:jsd_total_only
	# the built-in python baselines of three C operations (kernels/python/kbench_builtin.py), every
	# mode: before, only some modes ran anywhere, and a generated mutation that ran
	# megatron_cross_entropy's backward step in forward mode and its forward in the others survived.
	# (distill_jsd_loss is bf16 only, and torch's bf16 on the CPU is refused before it runs, above.)
	for spec in "layer_norm huggingface rows=16 hidden=64 dtype=fp32" "megatron_cross_entropy torch seq=2 batch=4 vocab=64 dtype=fp32" \
	            "jsd torch tokens=8 vocab=64 dtype=fp32"; do
		read -r op impl axes <<<"$spec"
		for m in forward backward full; do
			expect "$impl $op $m fp32 (kbench_builtin.py) passes the float64 check" 0 "$op $m: passed" \
				$KB run $op $m $axes --impl $impl --python /usr/bin/python3 $FAST
		done
	done
	# distill_jsd_loss's torch baseline, which kbench never runs on the CPU, called directly
	bt=$(/usr/bin/python3 test/kernels/test_builtin.py 2>&1); rc=$?
	while IFS= read -r l; do
		case "$l" in "ok "*) ok "${l#ok * - }" ;; "not ok "*) notok "${l#not ok * - }" ;; esac
	done <<<"$bt"
	[ "$rc" = 0 ] || notok "test/kernels/test_builtin.py runs to its end and passes (status $rc: $(tail -1 <<<"$bt"))"
	# liger_kernel's commit is recorded only from a checkout of Liger-Kernel itself: the stand-in
	# copied into a git repository of another name (as when Liger sits inside some project's
	# checkout), none; into one named Liger-Kernel, that checkout's HEAD (by hand: git rev-parse)
	reqs() { env PYTHONPATH="$1" $KB run layer_norm forward rows=4 hidden=8 --impl liger --python /usr/bin/python3 $FAST --json 2>&1 |
		/usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)["implementation"]["spec"]["buildVariants"][0]["requirements"]; print(r.get("liger_kernel"), r.get("liger_kernel_commit", "no commit"))' 2>&1; }
	lk=$(mktemp -d /tmp/kernelindex-liger.XXXXXX)
	for d in some-project Liger-Kernel; do
		mkdir "$lk/$d" && cp -r test/byo/fake_liger/liger_kernel "$lk/$d/" && git -C "$lk/$d" init -q &&
			git -C "$lk/$d" add -A && git -C "$lk/$d" -c user.name=t -c user.email=t@t commit -q -m stand-in
	done
	expect "the stand-in liger_kernel in a git checkout that is not Liger-Kernel's: its version, no commit" 0 \
		"0.0.0-kbench-test no commit" reqs "$lk/some-project"
	expect "the stand-in in a checkout named Liger-Kernel: its version and that checkout's HEAD" 0 \
		"0.0.0-kbench-test $(git -C "$lk/Liger-Kernel" rev-parse HEAD)" reqs "$lk/Liger-Kernel"
	rm -rf "$lk"
else
	ok "# SKIP needs=python3-torch total-loss-only checks not run"
fi
d=$($KB describe jsd backward tokens=8 vocab=32 2>&1)
check "kbench describe jsd backward: grad_logits the output, grad_input the prepared forward's (scratch)" \
	bash -c 'printf "%s" "$1" | grep -Eq "^    grad_logits +\[8, 32\] +fp32 +output\$" && printf "%s" "$1" | grep -Eq "^    grad_input +\[8, 32\] +fp32 +scratch\$"' _ "$d"
d=$($KB describe jsd forward tokens=8 vocab=32 2>&1)
check "kbench describe jsd forward: the tensors it always had (no grad_logits)" \
	bash -c 'printf "%s" "$1" | grep -Eq "^    grad_input +\[8, 32\] +fp32 +output\$" && ! printf "%s" "$1" | grep -q grad_logits' _ "$d"
expect "bf16 on the CPU: huggingface's LayerNorm is refused before it runs, with the reason and the way out" 2 "misses kbench's derived tolerance" \
	$KB run layer_norm forward rows=64 hidden=256 dtype=bf16 --impl huggingface --python /usr/bin/python3 $FAST
if ! $KB devices | grep -q '^cuda:'; then
	expect "cuda:0 without a GPU: exit 3, says why" 3 "not available" $KB run jsd forward tokens=1 vocab=2 --device cuda:0
fi

# The manifests kbench writes, byte for byte, as an earlier kbench wrote them (recorded with the
# kbench of a32f2e9, before the writer moved into core; the protocol text and the builtin python digests rerecorded for issue 27: input sets and checked calls; the builtin python digests again for issue 26 item 3: kbench_builtin.py gained jsd backward): names, symbols, numbers, protocol text.
# KI_MANIFESTS_SOURCE=any (test/mutate_gen.py sets it to judge a mutation of kbench_builtin.py): the
# python implementations' source digest and size are left out on both sides, since those bytes pin
# the file and would "catch" any change to it whether or not a test saw its behaviour change.
source_any() {
	if [ "${KI_MANIFESTS_SOURCE:-}" = any ]; then
		sed -E 's/"contentDigest":"sha256:[0-9a-f]+","fileName":"([^"]+[.]py)","sizeBytes":[0-9]+/"contentDigest":"any","fileName":"\1","sizeBytes":"any"/'
	else cat; fi
}
if command -v python3 >/dev/null; then
	mdiff=$(python3 test/kernels/manifests.py "$KB" 2>&1 | source_any | diff - <(source_any <test/kernels/manifests.expected) | head -c 600)
	check "kbench's operation/workload/implementation/protocol manifests equal test/kernels/manifests.expected${mdiff:+: $mdiff}" \
		test -z "$mdiff"
else
	ok "# SKIP needs=python3 recorded manifests not compared"
fi

# Every op x mode x dtype on the cpu, quick protocol, JSON output with raw samples.
Q="--warmup-ms 1 --rep-ms 4 --flush-bytes 65536"
runcase() {
	local d="kbench run $* (cpu): passed, manifests and raw samples printed"
	local got
	got=$($KB run "$@" $Q --json 2>&1)
	if [ $? -eq 0 ] && printf '%s' "$got" | grep -q '"status":"passed"' && printf '%s' "$got" | grep -q '"rawSamplesNs":\[[0-9]' \
		&& printf '%s' "$got" | grep -q '"composite":{"run":' && printf '%s' "$got" | grep -q '"kind":"BenchmarkProtocol"' \
		&& printf '%s' "$got" | grep -q '"kind":"ImplementationRevision"'; then ok "$d"; else notok "$d: $(printf '%s' "$got" | head -c 300)"; fi
}
for dt in fp32 bf16; do
	for m in forward backward full; do runcase layer_norm $m rows=17 hidden=96 dtype=$dt; done
	for m in forward backward full; do runcase megatron_cross_entropy $m seq=3 batch=2 vocab=257 dtype=$dt; done
	for m in forward full; do runcase jsd $m tokens=5 vocab=77 dtype=$dt; done
done
for m in forward full; do runcase distill_jsd_loss $m tokens=4 hidden=12 vocab=19; done

# ---------------------------------------------------------------- digests against the Liger import
if [ -f "$EXPECTED" ] && command -v zstd >/dev/null; then
	tmp=$(mktemp)
	zstd -dc "$EXPECTED" > "$tmp"
	# Every distinct workload of the four operations: its name encodes the axes.
	names=$(grep -oE '"kind":"WorkloadCase","metadata":\{"name":"liger-(layer-norm|megatron-cross-entropy|distill-jsd-loss|jsd)-[a-z0-9-]+"' "$tmp" \
		| sed 's/.*"name":"//; s/"$//' | sort -u)
	count=0; bad=0; badlist=""
	for name in $names; do
		case $name in
			liger-layer-norm-*) op=layer_norm; mode=backward; rest=${name#liger-layer-norm-} ;;
			liger-megatron-cross-entropy-*) op=megatron_cross_entropy; mode=backward; rest=${name#liger-megatron-cross-entropy-} ;;
			liger-distill-jsd-loss-*) op=distill_jsd_loss; mode=forward; rest=${name#liger-distill-jsd-loss-} ;;
			liger-jsd-*) op=jsd; mode=forward; rest=${name#liger-jsd-} ;;
		esac
		args=()
		IFS=- read -ra parts <<< "$rest"
		last=$(( ${#parts[@]} - 1 ))
		for i in "${!parts[@]}"; do
			p=${parts[$i]}
			if [ "$i" = "$last" ]; then args+=("dtype=$p"); else args+=("$(echo "$p" | sed -E 's/^([a-z_]+)([0-9]+)$/\1=\2/')"); fi
		done
		line=$(grep -m1 -F "\"name\":\"$name\"" "$tmp")
		want_w=$(printf '%s' "$line" | grep -oE '"workload":"sha256:[0-9a-f]{64}"' | head -1 | grep -oE 'sha256:[0-9a-f]{64}')
		want_o=$(printf '%s' "$line" | grep -oE '"operation":"sha256:[0-9a-f]{64}"' | head -1 | grep -oE 'sha256:[0-9a-f]{64}')
		got=$($KB describe $op $mode "${args[@]}" --json 2>&1)
		got_w=$(printf '%s' "$got" | grep -oE '"workload":"sha256:[0-9a-f]{64}"' | grep -oE 'sha256:[0-9a-f]{64}')
		got_o=$(printf '%s' "$got" | grep -oE '"operation":"sha256:[0-9a-f]{64}"' | grep -oE 'sha256:[0-9a-f]{64}')
		count=$((count + 1))
		if [ -z "$want_w" ] || [ "$want_w" != "$got_w" ] || [ "$want_o" != "$got_o" ]; then
			bad=$((bad + 1)); badlist="$badlist $name"
		fi
		case $name in
			liger-layer-norm-hidden4096-rows4096-fp32|liger-megatron-cross-entropy-batch4-seq2048-vocab131072-bf16|liger-distill-jsd-loss-hidden4096-tokens8192-vocab128256-bf16)
				check "seed workload $name: workload $got_w and operation $got_o equal the Liger import's" \
					test "$want_w" = "$got_w" -a "$want_o" = "$got_o" ;;
		esac
	done
	check "all $count Liger workloads of the four operations digest equal (workload and operation)${badlist:+; differ:$badlist}" \
		test "$bad" = 0 -a "$count" -gt 20
	for o in layer-norm megatron-cross-entropy distill-jsd-loss jsd; do
		want=$(grep -m1 -F "\"name\":\"liger-$o\"" "$tmp" | grep -oE '"operation":"sha256:[0-9a-f]{64}"' | head -1 | grep -oE 'sha256:[0-9a-f]{64}')
		got=$($KB list --json | sed 's/{"name":"/\n&/g' | grep -F "{\"name\":\"${o//-/_}\"," | grep -oE '"operationDigest":"sha256:[0-9a-f]{64}"' | grep -oE 'sha256:[0-9a-f]{64}')
		check "OperationSpec ${o//-/_} in kbench list equals the Liger import's digests.operation ($want)" test -n "$want" -a "$want" = "$got"
	done
	rm -f "$tmp"
else
	ok "# SKIP needs=zstd Liger digest comparison not run"
fi

# Measured ceilings (issue 27, item 5): kbench probe measures the CPU (copy,
# triad, fp32 FMA; one thread and all) and, through the fake CUDA's
# kbc_probe, a "GPU"; every figure is a positive number (no speed
# threshold), a figure not measured is absent (never made up), and the
# environment digest is the one runs on that device carry.
make -s -C kernels build/libkbench_fake_cuda.so NVCC= >/dev/null 2>&1
pj=$($KB probe --json --bytes 4194304 2>&1)
check "kbench probe (cpu) prints its environment's digest, 1 and all threads, the vector unit" \
	python3 -c 'import json,sys; p=json.loads(sys.argv[1]); assert p["device"]=="cpu" and p["environment_digest"].startswith("sha256:") and p["threads"]>=1 and p["isa"] and p["array_bytes"]==4194304, p' "$pj"
check "kbench probe (cpu): copy, triad and FMA are positive on one thread and on all; no GEMM figure is made up" \
	python3 -c 'import json,sys; p=json.loads(sys.argv[1]); ks=["copy_bytes_per_s","triad_bytes_per_s","fma_flops_per_s"]; assert all(p[k]>0 and p[k+"_1t"]>0 for k in ks), p; assert not any(k.startswith("gemm_") for k in p), p' "$pj"
envd=$($KB run layer_norm forward rows=64 hidden=64 dtype=fp32 --device cpu --json --rep-ms 5 --warmup-ms 1 2>/dev/null | grep -oE '"environmentDigest":"sha256:[0-9a-f]{64}"' | head -1 | grep -oE 'sha256:[0-9a-f]{64}')
check "kbench probe (cpu) names the environment a cpu run carries ($envd)" \
	python3 -c 'import json,sys; assert json.loads(sys.argv[1])["environment_digest"]==sys.argv[2]' "$pj" "$envd"
gj=$(KBENCH_CUDA_LIB=$ROOT/kernels/build/libkbench_fake_cuda.so $KB probe --json --device cuda:0 --bytes 1048576 2>&1)
check "kbench probe (fake cuda:0): copy, FMA and the tf32/bf16/fp16 GEMMs positive; fp8 not measured, so absent" \
	python3 -c 'import json,sys; p=json.loads(sys.argv[1]); assert all(p[k]>0 for k in ["copy_bytes_per_s","fma_flops_per_s","gemm_tf32_flops_per_s","gemm_bf16_flops_per_s","gemm_fp16_flops_per_s"]), p; assert "gemm_fp8_flops_per_s" not in p and "threads" not in p, p' "$gj"
out=$(KBENCH_CUDA_LIB=$ROOT/kernels/build/libkbench_fake_cuda.so KBENCH_FAKE_CUDA=fault_open $KB probe --device cuda:0 2>&1); rc=$?
check "kbench probe of a device that cannot be opened exits 3 and says why (rc $rc)" \
	test "$rc" = 3 -a -n "$(echo "$out" | grep -F 'cudaErrorDevicesUnavailable')"
out=$($KB probe --device gpu 2>&1); rc=$?
check "kbench probe of an unknown device exits 2 (rc $rc)" test "$rc" = 2 -a -n "$(echo "$out" | grep -F 'unknown device "gpu"')"
# CUDA-graph timing (the protocol's cuda_graph; its measurement is test/suites/compare.sh's): what
# the protocol says of it, on the fake GPU, and who is refused it
gj=$(KBENCH_CUDA_LIB=$ROOT/kernels/build/libkbench_fake_cuda.so KBENCH_FAKE_CUDA=ok KBENCH_FAKE_CUDA_TIMES=steady:50000 \
	$KB run layer_norm forward rows=8 hidden=8 --device cuda:0 --warmup-ms 0 --rep-ms 1 --flush-bytes 4096 --cuda-graph --json 2>/dev/null)
check "--cuda-graph: the protocol says cuda_graph_events, per graph, CUDA graphs in its title and notes; the run its graph_calls" \
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); p=d["composite"]["protocol"]; m=p["spec"]["measurement"]; n=p["spec"]["comparability"]["notes"]
assert d["status"]=="passed", d["message"]
assert (m["timer"], m["synchronization"]) == ("cuda_graph_events", "event_synchronize_per_graph"), m
assert p["metadata"]["title"].endswith("CUDA graphs"), p["metadata"]["title"]
assert "a sample is one graph of up to 1024 calls (1 ms by the five-call estimate), each after a clear of a 4096-byte buffer" in n, n
assert "the last call of 16 random graphs checked on its inputs" in n, n
assert d["composite"]["run"]["spec"]["sourceNative"]["metrics"]["graph_calls"] == 20' "$gj"
g1=$(KBENCH_CUDA_LIB=$ROOT/kernels/build/libkbench_fake_cuda.so KBENCH_FAKE_CUDA=ok KBENCH_FAKE_CUDA_TIMES=steady:3000000 \
	$KB run layer_norm forward rows=8 hidden=8 --device cuda:0 --warmup-ms 0 --rep-ms 1 --flush-bytes 4096 --max-samples 2 --min-samples 1 --cuda-graph --json 2>/dev/null)
ev=$(KBENCH_CUDA_LIB=$ROOT/kernels/build/libkbench_fake_cuda.so KBENCH_FAKE_CUDA=ok KBENCH_FAKE_CUDA_TIMES=steady:50000 \
	$KB run layer_norm forward rows=8 hidden=8 --device cuda:0 --warmup-ms 0 --rep-ms 1 --flush-bytes 4096 --json 2>/dev/null)
check "... a graph of one call says graph_calls 1; a run timed per call says no graph_calls, cuda_events, per sample" \
	python3 -c 'import json,sys; g=json.loads(sys.argv[1]); e=json.loads(sys.argv[2]); mt=lambda d: d["composite"]["run"]["spec"]["sourceNative"]["metrics"]; pm=lambda d: d["composite"]["protocol"]["spec"]["measurement"]
assert mt(g)["graph_calls"] == 1, mt(g)
assert "graph_calls" not in mt(e) and (pm(e)["timer"], pm(e)["synchronization"]) == ("cuda_events", "event_synchronize_per_sample"), (mt(e), pm(e))
assert "graph" not in e["composite"]["protocol"]["spec"]["comparability"]["notes"] and e["composite"]["protocol"]["metadata"]["title"].endswith("CUDA events")' "$g1" "$ev"
expect "--cuda-graph on the CPU: exit 2, the CPU is timed call by call" 2 "cuda_graph timing needs a CUDA device (cuda:N): the CPU is timed call by call" \
	$KB run layer_norm forward rows=8 hidden=8 --cuda-graph
expect "--cuda-graph of a python implementation: exit 2, its child times its calls" 2 "cuda_graph timing is for kbench's own CUDA kernels (cuda, cuda/vN): 'torch' runs in a child process" \
	$KB run layer_norm forward rows=8 hidden=8 --device cuda:0 --impl torch --cuda-graph

# Every usage error exits 2 (a request the user must change), never 1 (the
# run failed) or 3 (the device failed), and says what was wrong: one line a
# case, the arguments and the words the message must hold.
while IFS='|' read -r args words; do
	out=$($KB $args 2>&1); rc=$?
	check "kbench $args: exits 2 (rc $rc) saying '$words'" \
		test "$rc" = 2 -a -n "$(echo "$out" | grep -F -- "$words")"
done <<'CASES'
|usage: kbench
frobnicate|unknown command 'frobnicate'
run layer_norm forward rows=4 hidden=8 --rep-ms|option --rep-ms needs a value
run layer_norm forward rows=4 hidden=8 --rep-ms abc|--rep-ms must be a number
run layer_norm forward rows=4 hidden=8 --impl python:x.py|write python:file.py:function
run layer_norm forward rows=4 hidden=8 --impl python:/no/such.py:f|cannot find /no/such.py
run layer_norm forward rows=4 hidden=8 --variant v1|--impl cuda/v1
run layer_norm forward rows=4 hidden=8 --timeout 0|--timeout must be a number of seconds
run layer_norm forward rows=4 hidden=8 --bogus|unknown option --bogus
run layer_norm forward rows=4 hidden=8 notkv|expected key=value, got 'notkv'
run no_such_op forward rows=4|unknown operation 'no_such_op'
probe --bogus|probe takes --device
probe --bytes 100|got '--bytes'
CASES

echo "# kernels suite: $n tests, $fails failed"
[ $fails -eq 0 ]
