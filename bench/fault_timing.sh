#!/usr/bin/env bash
# fault_timing.sh: how long kbench takes to give up on the fake CUDA device's two hangs, the times
# test/suites/fault.sh used to compare with constants (issue 28 item 6: no test asserts on the
# machine's speed).  The suite checks that kbench ends by itself (exit 1, not `timeout`'s 124) and
# not before the watchdog's grace; this prints the seconds.  Not a test.
#   a kernel that never finishes (the wait's deadline, KBENCH_FAKE_CUDA_MAX_WAIT_S=2)
#   a backend whose wait never returns (kbench --timeout 1: the watchdog fires at 1 + 5 s)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s -C kernels NVCC= libkbench.a kbench fake-cuda >/dev/null
export KBENCH_CUDA_LIB=$(pwd)/kernels/build/libkbench_fake_cuda.so
LN=(run layer_norm forward rows=8 hidden=8 --device cuda:0)
for row in "hang|the wait's deadline (2 s)|" "hang_forever|the watchdog (--timeout 1 + 5 s grace)|--timeout 1"; do
  IFS='|' read -r mode what extra <<<"$row"
  t0=$(date +%s.%N)
  rc=0; KBENCH_FAKE_CUDA=$mode KBENCH_FAKE_CUDA_MAX_WAIT_S=2 timeout 60 kernels/kbench "${LN[@]}" $extra >/dev/null 2>&1 || rc=$?
  printf '%-13s exit %s after %.2f s: %s\n' "$mode" "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" "$what"
done
