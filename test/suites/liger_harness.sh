#!/usr/bin/env bash
# liger_harness.sh: bench/liger_time.py without a GPU or torch -- what it would time for
# each row (--dry-run: Liger's module, inputs, upstream gradient, do_bench's rep and
# quantiles or the megatron loop) and where each row still departs from Liger's own
# benchmark scripts (--notes: the codes bench/device.sh prints in its l_diff column).
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
ok() { if [ "$1" = "$2" ]; then echo "ok - $3"; else echo "not ok - $3 (got '$1', expected '$2')"; fi; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat >"$T/rows" <<'EOF'
# the seeds, jsd, and rows Liger's scripts do not run as such
layer_norm backward fp32 rows=4096 hidden=4096
megatron_cross_entropy backward bf16 seq=2048 batch=4 vocab=131072
megatron_cross_entropy forward fp32 seq=2048 batch=4 vocab=32768
distill_jsd_loss forward bf16 tokens=8192 hidden=4096 vocab=128256
distill_jsd_loss full bf16 tokens=8192 hidden=4096 vocab=128256
jsd forward fp32 tokens=8192 vocab=128256
jsd full bf16 tokens=8192 vocab=128256
EOF
LT=(python3 bench/liger_time.py)

out=$("${LT[@]}" --notes --batch "$T/rows" 2>&1); rc=$?
ok "$rc $(printf '%s\n' "$out" | grep -v '^#' | tr '\t' ' ' | tr '\n' ';')" \
	"0 layer_norm:backward:fp32:rows=4096,hidden=4096 s;megatron_cross_entropy:backward:bf16:seq=2048,batch=4,vocab=131072 l;megatron_cross_entropy:forward:fp32:seq=2048,batch=4,vocab=32768 dl;distill_jsd_loss:forward:bf16:tokens=8192,hidden=4096,vocab=128256 -;distill_jsd_loss:full:bf16:tokens=8192,hidden=4096,vocab=128256 g;jsd:forward:fp32:tokens=8192,vocab=128256 -;jsd:full:bf16:tokens=8192,vocab=128256 dg;" \
	"--notes: per row, the codes of where it departs from Liger's scripts (dtype, the 0.6.0 layer_norm rows, random upstream gradient, megatron's loop)"
ok "$(printf '%s\n' "$out" | grep -c '^# [dgls]: ')" 4 "--notes: then the legend of every code used, one line each"
ok "$(printf '%s\n' "$out" | grep -c "^# l: Liger's megatron script times 50 back-to-back steps per CUDA-event pair, no L2 flush")" 1 \
	"... in words (the megatron loop: 50 steps per event pair, no L2 flush)"

out=$("${LT[@]}" --dry-run --batch "$T/rows" 2>&1); rc=$?
ok "$rc $(printf '%s\n' "$out" | grep -c 'triton.testing.do_bench(warmup=25, rep=10, quantiles=\[0.5, 0.2, 0.8\], grad_to_none=\[first input\])')" "0 5" \
	"--dry-run: the do_bench rows with Liger's run_speed_benchmark settings (rep 10 ms, quantiles 0.5/0.2/0.8)"
ok "$(printf '%s\n' "$out" | grep -c 'loop: 10 warm-up steps, 5 samples x 50 back-to-back steps, no L2 flush')" 2 \
	"--dry-run: megatron rows in Liger's own loop"
ok "$(printf '%s\n' "$out" | grep -c 'LigerMegatronCrossEntropy(), tp_group None') $(printf '%s\n' "$out" | grep -c 'input = randn(8192, 128256, fp32, requires_grad).log_softmax(-1) (non-leaf)')" "2 1" \
	"--dry-run: Liger's modules and inputs as its scripts build them (the vocab-parallel CE; jsd's log_softmax of a leaf)"
ok "$(printf '%s\n' "$out" | grep -c 'timed: y = ln(x) once, dy = randn_like(y) once; y.backward(dy, retain_graph=True)')" 1 \
	"--dry-run: backward with one random upstream gradient drawn outside the timed call"

printf 'layer_norm sideways fp32 rows=1 hidden=1\njsd forward fp32 tokens=0 vocab=8\n' >"$T/bad"
out=$("${LT[@]}" --notes --batch "$T/bad" 2>&1); rc=$?
ok "$rc $(printf '%s\n' "$out" | tr '\t' ' ' | tr '\n' ';')" \
	"1 layer_norm:sideways:fp32:rows=1,hidden=1 err: invalid row: unknown mode sideways;jsd:forward:fp32:tokens=0,vocab=8 err: invalid row: bad axis 'tokens=0';" \
	"--notes: an invalid row answers err: and why, and the exit status is 1"
