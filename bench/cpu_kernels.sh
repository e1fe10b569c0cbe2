#!/usr/bin/env bash
# cpu_kernels.sh: kbench's own CPU implementations of the four C operations
# against PyTorch on one thread (OMP_NUM_THREADS=1, the huggingface/torch
# baselines of kernels/python/kbench_builtin.py), paired in one process by
# `kbench compare` (alternating blocks, docs/KERNELS.md "Comparing two
# implementations"), so both sides see the same load.  Prints one line per
# operation and mode: the two medians and torch/cpu (> 1: kbench's CPU code is
# faster).  The goal of issue 31 is cpu within 1.5x of torch (ratio >= 0.67).
# Not a test.   bench/cpu_kernels.sh [ROUNDS]   (default 6; about 5 min here)
set -uo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-6}
PY=${KI_PYTHON:-/usr/bin/python3}
make -s -C kernels -j2 NVCC= kbench >/dev/null || exit 1
CORES=$(nproc)
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
printf '# %s, %s, load %s, %d rounds of 3 calls a side\n' "$(date -u +%FT%TZ)" "$(uname -m) $CORES cores" "$(cut -d' ' -f1-3 /proc/loadavg)" "$ROUNDS"
printf '%-24s %-9s %-34s %14s %14s %9s\n' operation mode shape "cpu median" "torch median" torch/cpu
while read -r op mode base shape; do
  out=$(kernels/kbench compare "$op" "$mode" $shape --a cpu --b "$base" --python "$PY" --rounds "$ROUNDS" 2>&1)
  a=$(sed -n 's/^  a [^ ]* *median \([0-9.]*\) us.*/\1/p' <<<"$out")
  b=$(sed -n 's/^  b [^ ]* *median \([0-9.]*\) us.*/\1/p' <<<"$out")
  if [ -n "$a" ] && [ -n "$b" ]; then
    printf '%-24s %-9s %-34s %11.1f us %11.1f us %9.2f\n' "$op" "$mode" "$shape" "$a" "$b" "$(echo "$b / $a" | bc -l)"
  else
    printf '%-24s %-9s %-34s %s\n' "$op" "$mode" "$shape" "no comparison: $(head -c 160 <<<"$(grep -v warning <<<"$out" | head -1)")"
  fi
done <<'CASES'
layer_norm forward huggingface rows=1024 hidden=1024 dtype=fp32
layer_norm backward huggingface rows=1024 hidden=1024 dtype=fp32
layer_norm full huggingface rows=1024 hidden=1024 dtype=fp32
layer_norm backward huggingface rows=4096 hidden=4096 dtype=fp32
megatron_cross_entropy forward torch seq=2 batch=64 vocab=32000 dtype=fp32
megatron_cross_entropy full torch seq=2 batch=64 vocab=32000 dtype=fp32
jsd forward torch tokens=128 vocab=32000 dtype=fp32
jsd full torch tokens=128 vocab=32000 dtype=fp32
distill_jsd_loss forward torch tokens=256 vocab=4096 hidden=256
CASES
