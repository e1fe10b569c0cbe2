#!/usr/bin/env bash
# liger_harness.sh: bench/liger_time.py without a GPU or torch -- what it would time for
# each row (--dry-run: Liger's module, inputs, upstream gradient, do_bench's rep and
# quantiles or the megatron loop) and where each row still departs from Liger's own
# benchmark scripts (--notes: the codes bench/device.sh prints in its l_diff column).
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
source test/lib/tap.sh
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

# bench/device_table.py (device.sh's table): Liger's columns and the l_diff codes beside a kbench run
O=$T/out
mkdir -p "$O"
echo "v1 layer_norm backward fp32 rows=4096 hidden=4096" >"$O/table.txt"
echo "layer_norm backward fp32 rows=4096 hidden=4096" >"$O/rows.txt"
cat >"$O/layer_norm_backward_fp32_rows-4096_hidden-4096.json" <<'JSON'
{"status": "passed", "composite": {"run": {"spec": {"timing": {"latencyNs": {"median": 85300}},
 "measurements": [{"metric": "latency", "statistic": "p20", "value": 84400}, {"metric": "latency", "statistic": "p80", "value": 86300}],
 "sourceNative": {"metrics": {"bytes": 201326592, "achieved_gb_per_s": 2360.0}}}}}}
JSON
printf 'layer_norm:backward:fp32:rows=4096,hidden=4096\t0.4222\t0.4100\t0.4300\t0.0900\n' >"$O/liger.tsv"
"${LT[@]}" --notes --batch "$O/rows.txt" >"$O/notes.tsv"
out=$(python3 bench/device_table.py "$O/table.txt" "$O" 4800 989 "$O/liger.tsv" "$O/notes.tsv" 2>&1); rc=$?
ok "$rc $(printf '%s\n' "$out" | grep -cE '^layer_norm +backward +v1 +rows=4096 hidden=4096 +fp32 +0\.0853 +0\.0844-0\.0863 +2360\.0 .* 2\.03 +- +0\.4222 +0\.4100-0\.4300 +0\.0900 +s passed')" "0 1" \
	"device_table.py: a kbench row with its floor multiple beside Liger's median, p20-p80, GPU time and l_diff code"
ok "$(printf '%s\n' "$out" | grep -c "^# s: layer_norm fp32 R x H: Liger's current script runs the model dtype")" 1 "... and the code's legend under the table"
out=$(python3 bench/device_table.py "$O/table.txt" "$O" 4800 989 2>&1)
ok "$(printf '%s\n' "$out" | grep -cE ' 2\.03 +- +- +- +- +- passed')" 1 "device_table.py without Liger: its columns are dashes, no legend"

# tools/liger_checkout.sh: third_party/Liger-Kernel from a git repository (here a tiny one made
# on the spot), only src/, benchmark/scripts/ and LICENSE, with the commit written down
R=$T/liger-src
mkdir -p "$R/src/liger_kernel" "$R/benchmark/scripts" "$R/test"
echo 'x = 1' >"$R/src/liger_kernel/__init__.py"; echo 'pass' >"$R/benchmark/scripts/utils.py"
echo 'BSD' >"$R/LICENSE"; echo 'big' >"$R/test/data.bin"
git -C "$R" init -q && git -C "$R" add -A && git -C "$R" -c user.name=t -c user.email=t@t commit -q -m t
W=$T/work
mkdir -p "$W/tools" && cp tools/liger_checkout.sh "$W/tools/"
out=$(bash "$W/tools/liger_checkout.sh" "$R" 2>&1); rc=$?
ok "$rc $(cd "$W/third_party/Liger-Kernel" && find . -type f | sort | tr '\n' ' ')" \
	"0 ./COMMIT ./LICENSE ./benchmark/scripts/utils.py ./src/liger_kernel/__init__.py " \
	"tools/liger_checkout.sh: src/, benchmark/scripts/ and LICENSE of the source's HEAD, nothing else"
ok "$(cut -d' ' -f1 "$W/third_party/Liger-Kernel/COMMIT")" "$(git -C "$R" rev-parse HEAD)" "... and its COMMIT names the commit"
out=$(bash "$W/tools/liger_checkout.sh" "$T/no-such-repo" 2>&1); rc=$?
ok "$([ "$rc" -ne 0 ] && echo failed) $([ -d "$W/third_party/Liger-Kernel/src" ] && echo kept)" "failed kept" \
	"... a source that is no repository fails and leaves the checkout there alone"
