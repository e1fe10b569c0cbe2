#!/usr/bin/env bash
# operations.sh: operations defined as data (issue 26, docs/OPERATIONS.md).  For each operation of
# kernels/ops/defs: its float64 python reference against an independent formulation (one shape per
# mode); the huggingface/torch baseline through kbench and through the CPU worker, every mode,
# passing the float64 check and landing in the WorkloadCase digest that kbench_import_liger gives
# Liger's row of the same shape (data/liger); a deliberately wrong implementation fails the check;
# kbench list/describe show it; the unknown-operation error suggests the nearest name; a request for
# kbench's own cpu or CUDA implementation of it says there is none.  Needs /usr/bin/python3 with
# torch.  TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
PY=/usr/bin/python3
source test/lib/tap.sh
require_torch "$PY"
KB=kernels/kbench
[ -x $KB ] || { echo "not ok - kernels/kbench is built (make -C kernels)"; exit 1; }
FAST="--rep-ms 1 --warmup-ms 0 --flush-bytes 0 --max-samples 3 --python $PY"
TMPDIR_OPS=$(mktemp -d /tmp/kernelindex-ops.XXXXXX)
trap 'rm -rf "$TMPDIR_OPS"' EXIT

echo "# references against independent formulations"
refs=$($PY test/operations/test_references.py 2>&1); rc=$?
echo "$refs" | grep '^ok \|^not ok ' | sed -e 's/^ok [0-9]* /ok /' -e 's/^not ok [0-9]* /not ok /'
ok "$rc" 0 "test/operations/test_references.py runs to its end and passes"
[ $rc = 0 ] || echo "$refs" | tail -5 | sed 's/^/# /'

echo "# kbench (the CLI): list, describe, errors"
list=$($KB list 2>&1)
has "$list" "rms_norm" "kbench list shows rms_norm"
ndefs=$(ls kernels/ops/defs/*.json | wc -l)
ok "$($KB list --json 2>/dev/null | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["operations"]))')" "$((ndefs + 4))" \
   "kbench list has every definition of kernels/ops/defs ($ndefs) and the 4 C operations: none was dropped"
$KB list >/dev/null 2>/tmp/ki_list_err.$$; rc=$?
ok "$rc:$(cat /tmp/ki_list_err.$$)" "0:" "kbench list exits 0 with nothing on stderr (no built-in definition failed to load)"
rm -f /tmp/ki_list_err.$$
has "$($KB list --json)" '"definition":"kernels/ops/defs/rms_norm.json"' "kbench list --json names rms_norm's definition"
has "$($KB run rms_nrm forward rows=4 hidden=8 --impl torch 2>&1)" "did you mean rms_norm?" \
    "an unknown operation's error suggests the nearest name"
has "$($KB run rms_norm forward rows=4 hidden=8 2>&1)" "rms_norm has no own cpu implementation in kbench" \
    "kbench's own cpu implementation of an operation defined as data is refused, saying why"
has "$($KB run rms_norm forward rows=4 hidden=8 --impl cuda --device cuda:0 2>&1)" "has no CUDA kernel" \
    "a GPU request for an operation without a CUDA kernel says so"
has "$($KB run rms_norm forward rows=4 hidden=8 weird=3 --impl torch 2>&1)" "unknown axis 'weird' for rms_norm" \
    "an unknown axis is refused against the definition's axes"
has "$($KB run fused_linear_orpo_loss forward batch=3 seq=4 hidden=8 vocab=16 --impl huggingface 2>&1)" \
    "axis 'batch' of fused_linear_orpo_loss must be a multiple of 2, got 3" \
    "an odd batch of a preference loss (chosen, then as many rejected) is refused (multiple_of)"
has "$($KB describe fused_moe backward tokens=16 hidden=64 intermediate=32 experts=8 k=2 --impl huggingface 2>&1)" \
    "top_k_index  [16, 2]            int32 input" "fused_moe's top_k_index is an int32 input (kbench's int32 dtype, 4 bytes, an index fill)"
has "$($KB describe kto_loss backward batch=4 seq=8 hidden=32 vocab=64 --impl huggingface 2>&1)" \
    "preference_labels [1, 4]             bool  input" "kto_loss's preference_labels is a bool input (kbench's bool dtype, 1 byte, an index fill with high 2)"

echo "# kbench: every mode and dtype of the baseline passes; wrong implementations fail"
for m in forward backward full; do
  for dt in fp32 bf16; do
    out=$($KB run rms_norm $m rows=64 hidden=256 dtype=$dt --impl huggingface $FAST 2>&1)
    has "$out" "rms_norm $m: passed" "huggingface rms_norm $m $dt passes the float64 check"
  done
  out=$($KB run rms_norm $m rows=64 hidden=256 dtype=fp32 --impl python:test/operations/wrong_impls.py:rms_norm_centered $FAST 2>&1)
  has "$out" "incorrect_numerical: timed call 0 (input set" \
      "an RMSNorm that subtracts the row mean fails the $m check at its first timed call"
done
out=$($KB run rms_norm backward rows=64 hidden=256 dtype=fp32 --impl python:test/operations/wrong_impls.py:rms_norm_no_dweight $FAST 2>&1)
has "$out" "dweight: not returned by the implementation" "a backward that does not return dweight fails the check"

echo "# the guard on an operation defined as data: cheats fail, the timed calls are checked (issue 27)"
# Four input sets rotate through the timed calls; the python child checks each chosen call against
# the reference for its own set.  8 samples: every timed call is checked (16 or fewer).
CHEAT="--rep-ms 1 --warmup-ms 0 --flush-bytes 0 --max-samples 8 --python $PY"
for spec in "replays|computes the answer once and returns it from every call" \
            "first_call_only|does the work on its first timed call only" \
            "every_other_call|does the work on every other call only" \
            "ignores_inputs|works every call on a private copy of the first inputs"; do
  IFS='|' read -r c what <<<"$spec"
  for m in forward backward; do
    out=$($KB run rms_norm $m rows=64 hidden=256 dtype=fp32 --impl python:test/operations/cheats.py:$c $CHEAT 2>&1)
    has "$out" "differs from the float64 reference for its own inputs" "an rms_norm that $what fails $m at a timed call"
  done
done
out=$($KB run rms_norm backward rows=64 hidden=256 dtype=fp32 --impl huggingface $CHEAT --json 2>/dev/null)
ok "$(echo "$out" | $PY -c 'import json,sys; d = json.load(sys.stdin); m = d["composite"]["run"]["spec"]["sourceNative"]["metrics"]; print(d["status"], m.get("checked_calls"), m.get("input_sets"))' 2>&1)" "passed 8 4" \
   "the honest baseline passes with all 8 timed calls checked over 4 input sets"

echo "# a user's own operation (--op-file, test/operations/user): it runs and is checked; a bad definition is refused"
UD=test/operations/user
UOP="--op-file $UD/affine.json"
has "$($KB list $UOP 2>&1)" "affine " "kbench list --op-file lists the user's operation"
has "$($KB list 2>&1)" "rms_norm" "kbench list without it still lists the built-in ones"
case "$($KB list 2>&1)" in *"affine "*) echo "not ok - the user's operation is not kept beyond its process";; *) echo "ok - the user's operation is not kept beyond its process";; esac
out=$($KB describe affine backward rows=64 cols=32 --impl python:$UD/affine_impl.py:honest $UOP 2>&1)
has "$out" "db           [1, 32]            fp32  output" "kbench describe --op-file prints the tensors an implementation returns"
has "$out" "one call: 24960 bytes, 8192 FLOPs" "... and the cost the definition's formulas give (3*64*32+3*32 fp32 values, 4*64*32 FLOPs)"
for m in forward backward full; do
  for dt in fp32 bf16; do
    out=$($KB run affine $m rows=64 cols=32 dtype=$dt --impl python:$UD/affine_impl.py:honest $UOP $CHEAT 2>&1)
    has "$out" "affine $m: passed" "the user's honest affine $m $dt passes its own float64 reference (reference.file)"
  done
  out=$($KB $UOP run affine $m rows=64 cols=32 --impl python:$UD/affine_impl.py:no_bias $CHEAT 2>&1)
  has "$out" "incorrect_numerical: timed call 0 (input set" "an affine without its shift fails $m (--op-file before the command too)"
done
out=$($KB run affine forward rows=64 cols=32 --impl python:$UD/affine_impl.py:honest $CHEAT 2>&1); rc=$?
has "$out" "unknown operation 'affine'" "without --op-file the operation is unknown"
out=$($KB run affine forward rows=64 cols=32 --impl torch $UOP 2>&1); rc=$?
ok "$rc" 2 "a built-in baseline name for the user's operation is a usage error"
has "$out" "affine has no built-in 'torch' implementation: it is a user's operation" "... saying that kbench's baselines are for its own definitions"
mkdir -p "$TMPDIR_OPS/bad"
while IFS='|' read -r f want; do
  out=$($KB --op-file "$f" list 2>&1); rc=$?
  ok "$rc" 2 "a definition $(basename "$f" .json | tr _ ' ') is refused with a usage error (exit 2)"
  has "$out" "$want" "... and the message names the field: $want"
done < <($PY $UD/bad_defs.py "$TMPDIR_OPS/bad")
while IFS='|' read -r f want; do
  out=$($KB --op-file "$f" run affine forward rows=64 cols=32 --impl python:$UD/affine_impl.py:honest $CHEAT 2>&1); rc=$?
  ok "$([ $rc != 0 ] && echo failed)" failed "a run with a $(basename "$f" .json | tr _ ' ') does not pass"
  has "$out" "$want" "... and says why: $want"
done < <($PY $UD/bad_defs.py "$TMPDIR_OPS/bad" run)
out=$($KB list --op-file 2>&1); rc=$?
ok "$rc" 2 "--op-file without its file is a usage error"
has "$out" "--op-file needs the definition file" "... saying what is missing"
out=$($KB --op-file "$TMPDIR_OPS/no_such.json" list 2>&1)
has "$out" "the definition '$TMPDIR_OPS/no_such.json' cannot be read: No such file or directory" "a definition file that does not exist is named"

echo "# the other operations: every mode of the baseline passes at a small shape, a wrong implementation fails"
# op|axes of a small shape|dtypes|the wrong implementation of test/operations/wrong_impls.py|what it gets wrong
OPS_SMALL=(
  "swiglu|batch=2 seq=8 hidden=64 intermediate=128|fp32 bf16|swiglu_swapped|silu on the up projection instead of the gate"
  "geglu|batch=2 seq=8 hidden=64 intermediate=128|fp32 bf16|geglu_swapped|gelu on the up projection instead of the gate"
  "megatron_rms_norm|seq=4 batch=2 hidden=64|bf16 fp32|rms_norm_centered|the mean subtracted before normalizing"
  "tiled_swiglu|batch=2 seq=8 hidden=64 intermediate=128|fp32 bf16|tiled_swiglu_cat_dim0|its seq shards concatenated on the batch dimension"
  "tiled_geglu|batch=2 seq=8 hidden=64 intermediate=128|fp32 bf16|tiled_geglu_cat_dim0|its seq shards concatenated on the batch dimension"
  "megatron_swiglu|seq=4 batch=2 ffn=64|bf16 fp32|megatron_swiglu_halves_swapped|silu on the second half instead of the first"
  "relu_squared|rows=64 hidden=128|fp32 bf16|relu_squared_leaky|0.01 x^2 on the negative side"
  "softmax|rows=64 hidden=128|fp32 bf16|softmax_no_max|the last column left out of the sum"
  "sparsemax|tokens=64 features=128|fp32|sparsemax_no_minus_one|the threshold's - 1 left out (rows summing to zero)"
  "fused_add_rms_norm|rows=64 hidden=128|fp32 bf16|fused_add_rms_norm_stale_residual|the input residual returned as residual_out"
  "group_norm|batch=4 channels=8 hidden=32 channels_per_group=4|fp32 bf16|group_norm_per_channel|one group per channel"
  "cross_entropy|tokens=64 vocab=256|fp32 bf16|cross_entropy_sum|the loss summed over tokens, not averaged"
  "kl_div|tokens=64 vocab=256|fp32 bf16|kl_div_mean|reduction mean (divided by tokens x vocab), not batchmean"
  "tvd|tokens=64 vocab=256|fp32 bf16|tvd_no_half|the 1/2 left out (the L1 distance)"
  "rope|seq=16 hidden=64 q_heads=4 kv_heads=2|bf16 fp32|rope_adjacent_pairs|adjacent values of head_dim rotated together (Llama 4's pairing)"
  "llama4_rope|seq=16 hidden=64 q_heads=4 kv_heads=2|bf16 fp32|llama4_rope_half_pairs|value i rotated with i + head_dim/2 (rotate_half's pairing)"
  "embedding|batch=2 seq=8 hidden=16 vocab=32|fp32 bf16|embedding_off_by_one|the row of id + 1 gathered"
  "fused_linear_orpo_loss|batch=4 seq=8 hidden=32 vocab=64|fp32 bf16|orpo_interleaved|chosen and rejected interleaved (even and odd rows) instead of the two halves"
  "fused_linear_simpo_loss|batch=4 seq=8 hidden=32 vocab=64|fp32 bf16|simpo_nll_all|the NLL over every sequence, not only the chosen ones"
  "fused_linear_cpo_loss|batch=4 seq=8 hidden=32 vocab=64|fp32 bf16|cpo_averaged|the sequences' log-probabilities averaged over seq instead of summed"
  "kto_loss|batch=4 seq=8 hidden=32 vocab=64|fp32 bf16|kto_logsigmoid|DPO's -logsigmoid(beta s u) in place of KTO's 1 - sigmoid(beta s u)"
  "fused_linear_grpo_loss_token|batch=2 seq=8 vocab=64|bf16 fp32|grpo_loss_token_sum|the per-token losses summed over each sequence, not averaged"
  "fused_linear_grpo_loss_sequence|batch=2 seq=8 vocab=64|bf16 fp32|grpo_loss_sequence_sum|the per-token losses summed over each sequence, not averaged"
  "fused_linear_cross_entropy|tokens=64 hidden=64 vocab=256|bf16 fp32|fused_linear_cross_entropy_shifted|the targets off by one token"
  "fused_linear_jsd|tokens=64 hidden=64 vocab=256|bf16 fp32|fused_linear_jsd_reversed_kl|each KL's arguments swapped (KL(M || P), not KL(P || M))"
  "distill_cosine_loss|tokens=64 hidden=128 vocab=256|bf16 fp32|distill_cosine_loss_token_dim|the cosine taken over the token dimension, not over each token's logits"
  "multi_token_attention|batch=2 heads_in=3 heads_out=2 seq=16 k=3|bf16 fp32|multi_token_attention_unmasked_softmax|the softmax over every column (no causal mask before it)"
  "sparse_multi_token_attention|batch=2 heads_in=3 heads_out=2 seq=16 k=3|fp32 bf16|sparse_multi_token_attention_no_remask|the output not re-masked above the diagonal"
  "fused_neighborhood_attention|batch=2 seq=16 hidden=32 heads=4 kernel_size=3 dilation=2|fp32|fused_neighborhood_attention_undilated|every key within the dilated reach attended (the dilation's gaps left in)"
  "fused_moe|tokens=16 hidden=64 intermediate=32 experts=8 k=2|bf16 fp32|fused_moe_swapped_halves|silu on the up half of gate_up_proj instead of the gate half"
  "dyt|tokens=64 hidden=128|bf16 fp32|dyt_alpha_outside|alpha scaling tanh's output instead of its input"
  "poly_norm|seq=64 hidden=128|bf16 fp32|poly_norm_weights_reversed|its three weights applied in the reverse order"
  "qwen2vl_mrope|seq=16 hidden=128 q_heads=4 kv_heads=2|bf16 fp32|qwen2vl_mrope_temporal_only|every frequency rotated by the temporal position (the height and width sections ignored)"
)
# KI_OPS="op1 op2": only those operations in the two per-operation loops (a developer's quick
# pass while adding one; CI leaves it unset and runs them all).
for spec in "${OPS_SMALL[@]}"; do
  IFS='|' read -r op axes dts wrong why <<<"$spec"
  only "$op" || continue
  for m in forward backward full; do
    for dt in $dts; do
      bf16_gemm_checked $PY $op $dt "huggingface $op $m $dt passes the float64 check" || continue
      out=$($KB run $op $m $axes dtype=$dt --impl huggingface $FAST 2>&1)
      has "$out" "$op $m: passed" "huggingface $op $m $dt passes the float64 check"
    done
    out=$($KB run $op $m $axes dtype=fp32 --impl python:test/operations/wrong_impls.py:$wrong $FAST 2>&1)
    has "$out" "incorrect_numerical: timed call 0 (input set" "a $op with $why fails the $m check"
  done
done

# tiled_swiglu, tiled_geglu: the pure-torch seq-sharded execution (torch_tiled, 4 shards; ours, not
# one of Liger's providers: deepspeed_tiled and liger_tiled are, test/suites/providers.sh) passes
# too; it is not one of kbench's built-in names, so it runs as a python entry of kbench_builtin_defs.py
for op in tiled_swiglu tiled_geglu; do
  only "$op" || continue
  for m in forward backward full; do
    for dt in fp32 bf16; do
      bf16_gemm_checked $PY $op $dt "torch_tiled $op $m $dt passes the float64 check" || continue
      out=$($KB run $op $m batch=2 seq=8 hidden=64 intermediate=128 dtype=$dt --impl python:kernels/python/kbench_builtin_defs.py:torch_tiled $FAST 2>&1)
      has "$out" "$op $m: passed" "torch_tiled $op $m $dt passes the float64 check"
    done
  done
done

echo "# through the worker: Liger's shape, Liger's WorkloadCase"
source bin/pgcluster.sh
trap 'ki_cluster_stop; rm -rf "$TMPDIR_OPS"' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.python = '$PY'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"
run() {
  JOB=$(q "SELECT kbench_run($1)") || { RES="queue-error"; JOB=0; return; }
  wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" "${2:-300}" || { RES="still-running"; return; }
  RES=$(q "SELECT status || ' ' || coalesce(run_status::text, '-') FROM kbench_jobs WHERE id = $JOB")
}
q "SELECT count(*) FROM kbench_import_liger(pg_read_file('$(pwd)/data/liger/all_benchmark_data.csv'))" >/dev/null
# Liger's rms_norm rows: M 2048 (rows), H swept, bf16, eps 1e-6
liger_wl=$(q "SELECT DISTINCT r.workload_digest FROM kbench_runs r JOIN kbench_workloads w ON w.digest = r.workload_digest
              WHERE r.name LIKE 'liger-rms-norm-%huggingface%' AND w.name = 'liger-rms-norm-hidden1024-rows2048-bf16'")
ok "$([ -n "$liger_wl" ] && echo yes)" yes "the Liger import has huggingface rms_norm rows at rows 2048, hidden 1024, bf16"
for m in forward backward full; do
  run "'rms_norm', '$m', '{\"rows\": 2048, \"hidden\": 1024, \"dtype\": \"bf16\"}', implementation => 'huggingface', protocol => '$TINY'"
  ok "$RES" "passed passed" "huggingface rms_norm $m at Liger's 2048x1024 bf16 runs through the CPU worker and passes"
  ok "$(q "SELECT r.workload_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" \
     "$liger_wl" "its run lands in the WorkloadCase digest of Liger's row of that shape ($m)"
done
ok "$(q "SELECT r.workload_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" \
   "$($KB describe rms_norm full rows=2048 hidden=1024 dtype=bf16 --impl huggingface --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["digests"]["workload"])')" \
   "kbench describe derives the same WorkloadCase digest as the worker"
ok "$(q "SELECT string_agg(mode || '|' || bytes || '|' || flops, ';' ORDER BY mode) FROM kbench_operation_costs WHERE operation = 'rms_norm'")" \
   "$($PY -c 'import json; d = json.load(open("kernels/ops/defs/rms_norm.json"))["cost"]; print(";".join("%s|%s|%s" % (m, d[m]["bytes"], d[m]["flops"]) for m in sorted(["forward", "backward", "full"])))')" \
   "rms_norm's cost texts are the ones kbench_operation_costs holds"
out=$(psql -X -At -q -c "SELECT kbench_run('rms_nrm', 'forward', '{\"rows\": 4, \"hidden\": 8}', implementation => 'torch')" 2>&1)
has "$out" "did you mean rms_norm?" "kbench_run of an unknown operation suggests the nearest name"

# The other operations through the worker.  Each: the Liger import's WorkloadCase digest of a
# baseline row of Liger's CSV (its smallest shape), kbench describe's digest at that shape, and
# every mode run through the worker, at that shape where it is CPU-sized, else at a small one
# ("small": the digest is then checked by describe, which derives it as the worker does, above).
# op|provider|Liger's WorkloadCase name|kbench axes at that shape|dtype|small axes (JSON) or empty
# (fused_linear_grpo_loss_sequence: the mapping gives the token- and sequence-level GRPO rows the
# same OperationSpec and WorkloadCase content, importance_sampling_level being neither an axis nor a
# scalar of it, so their one WorkloadCase digest is stored under the token-level name)
OPS_LIGER=(
  "swiglu|huggingface|liger-swiglu-batch4-hidden4096-intermediate11008-seq1024-bf16|batch=4 seq=1024 hidden=4096 intermediate=11008|bf16|{\"batch\": 2, \"seq\": 8, \"hidden\": 64, \"intermediate\": 128}"
  "geglu|huggingface|liger-geglu-batch8-hidden4096-intermediate11008-seq1024-bf16|batch=8 seq=1024 hidden=4096 intermediate=11008|bf16|{\"batch\": 2, \"seq\": 8, \"hidden\": 64, \"intermediate\": 128}"
  "relu_squared|torch|liger-relu-squared-hidden128-rows4096-bf16|rows=4096 hidden=128|bf16|"
  "softmax|torch|liger-softmax-hidden128-rows2048-fp32|rows=2048 hidden=128|fp32|"
  "sparsemax|torch|liger-sparsemax-features1024-tokens2048-fp32|tokens=2048 features=1024|fp32|"
  "fused_add_rms_norm|huggingface|liger-fused-add-rms-norm-hidden1024-rows2048-fp32|rows=2048 hidden=1024|fp32|"
  "group_norm|huggingface|liger-group-norm-batch128-channels32-channels-per-group4-hidden512-fp32|batch=128 channels=32 hidden=512 channels_per_group=4|fp32|"
  "cross_entropy|huggingface|liger-cross-entropy-tokens16384-vocab4096-fp32|tokens=16384 vocab=4096|fp32|{\"tokens\": 64, \"vocab\": 256}"
  "kl_div|torch|liger-kl-div-tokens16384-vocab4096-fp32|tokens=16384 vocab=4096|fp32|{\"tokens\": 64, \"vocab\": 256}"
  "tvd|torch|liger-tvd-tokens16384-vocab4096-fp32|tokens=16384 vocab=4096|fp32|{\"tokens\": 64, \"vocab\": 256}"
  "megatron_rms_norm|torch|liger-megatron-rms-norm-batch1-hidden1024-seq4096-bf16|seq=4096 batch=1 hidden=1024|bf16|"
  "tiled_swiglu|huggingface|liger-tiled-swiglu-batch2-hidden2048-intermediate4096-seq1024-bf16|batch=2 seq=1024 hidden=2048 intermediate=4096|bf16|{\"batch\": 2, \"seq\": 8, \"hidden\": 64, \"intermediate\": 128}"
  "tiled_geglu|huggingface|liger-tiled-geglu-batch2-hidden2048-intermediate4096-seq1024-bf16|batch=2 seq=1024 hidden=2048 intermediate=4096|bf16|{\"batch\": 2, \"seq\": 8, \"hidden\": 64, \"intermediate\": 128}"
  "megatron_swiglu|torch|liger-megatron-swiglu-batch4-ffn1024-seq2048-bf16|seq=2048 batch=4 ffn=1024|bf16|"
  "rope|huggingface|liger-rope-hidden512-kv-heads8-q-heads32-seq2048-bf16|seq=2048 hidden=512 q_heads=32 kv_heads=8|bf16|"
  "llama4_rope|huggingface|liger-llama4-rope-hidden512-kv-heads8-q-heads32-seq2048-bf16|seq=2048 hidden=512 q_heads=32 kv_heads=8|bf16|"
  "embedding|huggingface|liger-embedding-batch32-hidden768-seq512-vocab1024-fp32|batch=32 seq=512 hidden=768 vocab=1024|fp32|"
  "fused_linear_orpo_loss|huggingface|liger-fused-linear-orpo-loss-batch2-hidden4096-seq1024-vocab128256-bf16|batch=2 seq=1024 hidden=4096 vocab=128256|bf16|{\"batch\": 2, \"seq\": 16, \"hidden\": 64, \"vocab\": 256}"
  "fused_linear_simpo_loss|huggingface|liger-fused-linear-simpo-loss-batch2-hidden4096-seq1024-vocab128256-bf16|batch=2 seq=1024 hidden=4096 vocab=128256|bf16|{\"batch\": 2, \"seq\": 16, \"hidden\": 64, \"vocab\": 256}"
  "fused_linear_cpo_loss|huggingface|liger-fused-linear-cpo-loss-batch2-hidden4096-seq1024-vocab128256-bf16|batch=2 seq=1024 hidden=4096 vocab=128256|bf16|{\"batch\": 2, \"seq\": 16, \"hidden\": 64, \"vocab\": 256}"
  "kto_loss|huggingface|liger-fused-linear-kto-loss-batch2-hidden1024-seq512-vocab128256-bf16|batch=2 seq=512 hidden=1024 vocab=128256|bf16|{\"batch\": 2, \"seq\": 16, \"hidden\": 64, \"vocab\": 256}"
  "fused_linear_grpo_loss_token|torch|liger-grpo-loss-token-batch2-seq1024-vocab128256-bf16|batch=2 seq=1024 vocab=128256|bf16|{\"batch\": 2, \"seq\": 16, \"vocab\": 256}"
  "fused_linear_grpo_loss_sequence|torch|liger-grpo-loss-token-batch2-seq1024-vocab128256-bf16|batch=2 seq=1024 vocab=128256|bf16|{\"batch\": 2, \"seq\": 16, \"vocab\": 256}"
  "fused_linear_cross_entropy|huggingface|liger-fused-linear-cross-entropy-hidden4096-tokens4096-vocab128256-bf16|tokens=4096 hidden=4096 vocab=128256|bf16|{\"tokens\": 64, \"hidden\": 64, \"vocab\": 256}"
  "fused_linear_jsd|torch|liger-fused-linear-jsd-hidden4096-tokens1024-vocab128256-bf16|tokens=1024 hidden=4096 vocab=128256|bf16|{\"tokens\": 64, \"hidden\": 64, \"vocab\": 256}"
  "distill_cosine_loss|torch|liger-distill-cosine-loss-hidden4096-tokens1024-vocab128256-bf16|tokens=1024 hidden=4096 vocab=128256|bf16|{\"tokens\": 64, \"hidden\": 128, \"vocab\": 256}"
  "multi_token_attention|torch|liger-multi-token-attention-batch2-heads-in4-heads-out4-k3-seq32-bf16|batch=2 heads_in=4 heads_out=4 seq=32 k=3|bf16|"
  "sparse_multi_token_attention|torch|liger-sparse-multi-token-attention-batch2-heads-in4-heads-out4-k3-seq32-fp32|batch=2 heads_in=4 heads_out=4 seq=32 k=3|fp32|"
  "fused_neighborhood_attention|torch|liger-fused-neighborhood-attention-batch2-dilation1-heads8-hidden512-kernel-size7-seq64-fp32|batch=2 seq=64 hidden=512 heads=8 kernel_size=7 dilation=1|fp32|"
  "fused_moe|huggingface|liger-fused-moe-experts128-hidden2048-intermediate768-k8-tokens128-bf16|tokens=128 hidden=2048 intermediate=768 experts=128 k=8|bf16|{\"tokens\": 16, \"hidden\": 64, \"intermediate\": 32, \"experts\": 8, \"k\": 2}"
)
json_axes() { $PY -c 'import json,sys; d = {k: int(v) for k, v in (a.split("=") for a in sys.argv[1].split())}; d["dtype"] = sys.argv[2]; print(json.dumps(d))' "$1" "$2"; }
for spec in "${OPS_LIGER[@]}"; do
  IFS='|' read -r op prov wname axes dt small <<<"$spec"
  only "$op" || continue
  wl=$(q "SELECT DISTINCT r.workload_digest FROM kbench_runs r JOIN kbench_workloads w ON w.digest = r.workload_digest
          WHERE r.name LIKE 'liger-%$prov%' AND w.name = '$wname'")
  ok "$([ -n "$wl" ] && [ "$(echo "$wl" | wc -l)" = 1 ] && echo yes)" yes "the Liger import has $prov $op rows in one WorkloadCase, $wname"
  ok "$($KB describe $op full $axes dtype=$dt --impl $prov --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["digests"]["workload"])')" \
     "$wl" "kbench describe $op at Liger's shape ($axes $dt) derives that WorkloadCase digest"
  if [ -n "$small" ]; then req="${small%\}}, \"dtype\": \"$dt\"}"; where="a small shape"; else req=$(json_axes "$axes" "$dt"); where="Liger's shape"; fi
  for m in forward backward full; do
    bf16_gemm_checked $PY $op $dt "$prov $op $m at $where runs through the CPU worker and passes" || continue
    run "'$op', '$m', '$req', implementation => '$prov', protocol => '$TINY'"
    ok "$RES" "passed passed" "$prov $op $m at $where runs through the CPU worker and passes"
    if [ -z "$small" ]; then
      ok "$(q "SELECT r.workload_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" \
         "$wl" "its run lands in the WorkloadCase digest of Liger's row of that shape ($op $m)"
    fi
  done
  seeded=$(q "SELECT string_agg(mode || '|' || bytes || '|' || flops, ';' ORDER BY mode) FROM kbench_operation_costs WHERE operation = '$op'")
  if [ -n "$seeded" ]; then
    ok "$seeded" "$($PY -c 'import json,sys; d = json.load(open("kernels/ops/defs/%s.json" % sys.argv[1]))["cost"]; print(";".join("%s|%s|%s" % (m, d[m]["bytes"], d[m]["flops"]) for m in sorted(["forward", "backward", "full"])))' $op)" \
       "$op's cost texts are the ones kbench_operation_costs seeds"
  fi
done

# The operations beyond Liger's CSV (Liger's current benchmark scripts benchmark them; the CSV has
# no row of them, so there is no import digest to match): kbench lists them, describe derives
# their digests, and every mode of the script's baseline runs through the worker at a small shape,
# passes, and lands in the WorkloadCase digest describe derives at that shape.
# op|provider|kbench axes
OPS_BEYOND=(
  "dyt|torch|tokens=64 hidden=128"
  "poly_norm|torch|seq=64 hidden=128"
  "qwen2vl_mrope|huggingface|seq=16 hidden=128 q_heads=4 kv_heads=2"
)
for spec in "${OPS_BEYOND[@]}"; do
  IFS='|' read -r op prov axes <<<"$spec"
  only "$op" || continue
  has "$list" "$op " "kbench list shows $op"
  for dt in $($PY -c 'import json,sys; print(" ".join(json.load(open("kernels/ops/defs/%s.json" % sys.argv[1]))["dtypes"]))' $op); do
    wl=$($KB describe $op full $axes dtype=$dt --impl $prov --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["digests"]["workload"])' 2>&1)
    ok "$(echo "$wl" | grep -c '^sha256:[0-9a-f]\{64\}$')" 1 "kbench describe $op full $axes $dt --json derives a WorkloadCase digest"
    for m in forward backward full; do
      bf16_gemm_checked $PY $op $dt "$prov $op $m $dt at $axes runs through the CPU worker and passes" || continue
      run "'$op', '$m', '$(json_axes "$axes" "$dt")', implementation => '$prov', protocol => '$TINY'"
      ok "$RES" "passed passed" "$prov $op $m $dt at $axes runs through the CPU worker and passes"
      ok "$(q "SELECT r.workload_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" \
         "$wl" "its run lands in the WorkloadCase digest describe derives ($op $m $dt)"
    done
  done
done
