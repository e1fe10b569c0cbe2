#!/usr/bin/env bash
# liger_standins.sh: kbench's built-in `liger` implementation of each operation defined as data
# (kernels/python/kbench_builtin_defs.py, the impl == "liger" branches) runs, on a host without
# Triton, through test/byo/fake_liger's plain-torch stand-ins of the Liger-Kernel modules it imports
# (the same module paths, constructors, call signatures and attributes as Liger's; not Liger's
# kernels): every mode and dtype of each operation with a stand-in passes kbench's float64 check,
# so the branch's wiring (the import path, the constructor arguments, the weights it copies in, the
# call and what it reads back) is exercised.  Without the stand-ins the liger implementation fails
# saying liger_kernel is not importable.  Every mode runs in the definition's first dtype, the other
# dtypes in full mode (KI_ALL_MODES=1: every mode of every dtype).  CLI only; needs /usr/bin/python3
# with torch.  KI_OPS="op1 op2" limits it to some operations.  TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
source test/lib/tap.sh
require_torch "$PY"
KB=kernels/kbench
[ -x $KB ] || { echo "not ok - kernels/kbench is built (make -C kernels)"; exit 1; }
FAST="--rep-ms 1 --warmup-ms 0 --flush-bytes 0 --max-samples 3 --python $PY"

# op|small axes|dtypes (the definition's; the axes those of operations.sh's OPS_SMALL)
STANDINS=(
  "rms_norm|rows=16 hidden=32|fp32 bf16"
  "fused_add_rms_norm|rows=16 hidden=32|fp32 bf16"
  "swiglu|batch=2 seq=4 hidden=16 intermediate=32|bf16 fp32"
  "geglu|batch=2 seq=4 hidden=16 intermediate=32|bf16 fp32"
  "relu_squared|rows=16 hidden=32|bf16 fp32"
  "softmax|rows=16 hidden=32|fp32 bf16"
  "sparsemax|tokens=16 features=32|fp32"
  "dyt|tokens=16 hidden=32|bf16 fp32"
  "poly_norm|seq=16 hidden=32|bf16 fp32"
  "group_norm|batch=2 channels=8 hidden=16 channels_per_group=4|fp32 bf16"
  "cross_entropy|tokens=16 vocab=64|fp32 bf16"
  "kl_div|tokens=16 vocab=64|fp32 bf16"
  "tvd|tokens=16 vocab=64|fp32 bf16"
  "fused_linear_cross_entropy|tokens=16 hidden=16 vocab=64|bf16 fp32"
  "fused_linear_jsd|tokens=16 hidden=16 vocab=64|bf16 fp32"
  "rope|seq=8 hidden=32 q_heads=4 kv_heads=2|bf16 fp32"
  "llama4_rope|seq=8 hidden=32 q_heads=4 kv_heads=2|bf16 fp32"
  "qwen2vl_mrope|seq=8 hidden=128 q_heads=4 kv_heads=2|bf16 fp32"
  "embedding|batch=2 seq=4 hidden=16 vocab=32|fp32 bf16"
  "multi_token_attention|batch=2 heads_in=3 heads_out=2 seq=8 k=3|bf16 fp32"
  "sparse_multi_token_attention|batch=2 heads_in=3 heads_out=2 seq=8 k=3|fp32 bf16"
  "fused_neighborhood_attention|batch=2 seq=8 hidden=16 heads=2 kernel_size=3 dilation=2|fp32"
  "distill_cosine_loss|tokens=16 hidden=32 vocab=64|bf16 fp32"
  "fused_linear_grpo_loss_token|batch=2 seq=4 vocab=32|bf16 fp32"
  "fused_linear_grpo_loss_sequence|batch=2 seq=4 vocab=32|bf16 fp32"
  "fused_linear_orpo_loss|batch=2 seq=4 hidden=16 vocab=32|fp32 bf16"
  "fused_linear_simpo_loss|batch=2 seq=4 hidden=16 vocab=32|fp32 bf16"
  "fused_linear_cpo_loss|batch=2 seq=4 hidden=16 vocab=32|fp32 bf16"
  "kto_loss|batch=4 seq=4 hidden=16 vocab=32|fp32 bf16"
  "fused_moe|tokens=8 hidden=16 intermediate=8 experts=4 k=2|bf16 fp32"
  "megatron_swiglu|seq=4 batch=2 ffn=16|bf16 fp32"
)

LIST=$($KB list)
echo "# kbench's liger implementation through test/byo/fake_liger's stand-ins"
for entry in "${STANDINS[@]}"; do
  IFS='|' read -r op axes dtypes <<<"$entry"
  only "$op" || continue
  modes=$(echo "$LIST" | awk -v o="$op" '$1 == o {print $2}' | tr , ' ')
  [ -n "$modes" ] || { echo "not ok - kbench list has $op"; continue; }
  first=1
  for dt in $dtypes; do
    # every mode in the first dtype; the other dtypes in full mode (the outputs and every gradient,
    # what forward and backward check, in one run), to keep the suite near 2 minutes on a loaded
    # 2-core machine; KI_ALL_MODES=1 runs every mode of every dtype
    if [ $first = 1 ] || [ "${KI_ALL_MODES:-0}" = 1 ]; then dt_modes=$modes; else dt_modes=full; fi
    first=0
    for m in $dt_modes; do
      bf16_gemm_checked $PY $op $dt "liger $op $m $dt (stand-in) passes the float64 check" || continue
      out=$(PYTHONPATH=test/byo/fake_liger $KB run $op $m $axes dtype=$dt --impl liger $FAST 2>&1)
      has "$out" "$op $m: passed" "liger $op $m $dt (stand-in) passes the float64 check"
    done
  done
done

if only softmax; then
  echo "# without the stand-ins"
  out=$(env -u PYTHONPATH $KB run softmax forward rows=16 hidden=32 dtype=fp32 --impl liger $FAST 2>&1); rc=$?
  has "$out" "starting the implementation: liger: ModuleNotFoundError: No module named 'liger_kernel'" "liger softmax without liger_kernel on the path fails saying liger_kernel is not importable"
  ok "$([ $rc -ne 0 ] && echo failed)" failed "... the run fails (exit $rc)"
  has "$(echo "$out" | grep -c Traceback)" "0" "... not a traceback"
fi
exit 0
