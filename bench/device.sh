#!/usr/bin/env bash
# bench/device.sh: check and time every kernels/ operation on one GPU.
#
# For a GPU host with nvcc and no PostgreSQL.  Builds kernels/ (libkbench,
# libkbench_cuda.so, kbench), runs each operation at its seed workload and
# a smaller and a larger one under the kernelindex protocol (correctness
# checked against the float64 reference on every run), and prints a table:
# median, p20-p80, achieved GB/s or TFLOP/s, and the multiple of the floor
# (bytes / peak bandwidth, or FLOPs / peak dense bf16 FLOP/s).  When a
# Liger-Kernel checkout is present in third_party/Liger-Kernel (git-ignored)
# and PyTorch + Triton import, Liger's time for the same workload is
# measured in the same run by bench/liger_time.py.
#
#   bench/device.sh [cuda:N]        env: PEAK_GBPS, PEAK_TFLOPS override the device table
# Budget: under 8 minutes on an H100/H200 (protocol 25 ms + 100 ms per run).
set -u
cd "$(dirname "$0")/.."
DEV=${1:-cuda:0}
OUT=${OUT:-/tmp/kbench-device}
mkdir -p "$OUT"
make -C kernels -j"$(nproc)" >"$OUT/build.log" 2>&1 || { echo "build failed, see $OUT/build.log"; tail -30 "$OUT/build.log"; exit 1; }
KB=kernels/kbench
$KB devices
PRODUCT=$($KB devices --json | grep -oE "\"name\":\"$DEV\"[^}]*\"product\":\"[^\"]*\"" | sed 's/.*"product":"//; s/"$//')
[ -n "$PRODUCT" ] || { echo "no device $DEV"; exit 1; }
case "$PRODUCT" in
	*H200*) BW=4800; TF=989 ;;
	*H100*PCIe*) BW=2000; TF=756 ;;
	*H100*) BW=3350; TF=989 ;;
	*) BW=3350; TF=989; echo "# unknown product '$PRODUCT': assuming H100 SXM peaks" ;;
esac
BW=${PEAK_GBPS:-$BW}
TF=${PEAK_TFLOPS:-$TF}
echo "# $PRODUCT: floor from peak ${BW} GB/s, ${TF} dense bf16 TFLOP/s"

LIGER=""
if [ -d third_party/Liger-Kernel/src/liger_kernel ] && python3 -c 'import torch, triton' 2>/dev/null; then
	LIGER=1
fi

printf '%-24s %-9s %-34s %-5s %12s %21s %10s %10s %7s %12s %s\n' op mode shape dtype median_ms p20-p80_ms GB/s TFLOP/s xfloor liger_ms status
run() { # op mode dtype axes...
	local op=$1 mode=$2 dtype=$3; shift 3
	local json="$OUT/${op}-${mode}-${dtype}-$(echo "$*" | tr ' =' '_-').json"
	timeout 120 $KB run "$op" "$mode" "$@" dtype="$dtype" --device "$DEV" --json >"$json" 2>"$json.err"
	python3 - "$json" "$op" "$mode" "$dtype" "$BW" "$TF" "$*" "${LIGER:-}" <<'PY'
import json, subprocess, sys
path, op, mode, dtype, bw, tf, shape, liger = sys.argv[1:9]
bw, tf = float(bw), float(tf)
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{op:24s} {mode:9s} {shape:34s} {dtype:5s} {'-':>12s} {'-':>21s} {'-':>10s} {'-':>10s} {'-':>7s} {'-':>12s} no result: {open(path + '.err').read().strip()[:120]}")
    sys.exit(0)
run = r.get("composite", {}).get("run", {}).get("spec", {})
m = run.get("sourceNative", {}).get("metrics", {})
lat = run.get("timing", {}).get("latencyNs", {})
meas = {x["statistic"]: x["value"] for x in run.get("measurements", []) if x["metric"] == "latency"}
med = lat.get("median", 0) / 1e6
b, f = m.get("bytes", 0), m.get("flops", 0)
floor_ms = max(b / (bw * 1e9), (f / (tf * 1e12)) if op == "distill_jsd_loss" else 0) * 1e3
lg = "-"
if liger:
    try:
        out = subprocess.run([sys.executable, "bench/liger_time.py", op, mode, dtype] + shape.split(),
                             capture_output=True, text=True, timeout=300)
        lg = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else "err"
    except Exception:
        lg = "err"
p = f"{meas.get('p20', 0)/1e6:.4f}-{meas.get('p80', 0)/1e6:.4f}"
x = f"{med / floor_ms:.2f}" if floor_ms > 0 and med > 0 else "-"
print(f"{op:24s} {mode:9s} {shape:34s} {dtype:5s} {med:12.4f} {p:>21s} {m.get('achieved_gb_per_s', 0):10.1f} "
      f"{m.get('achieved_tflop_per_s', 0):10.2f} {x:>7s} {lg:>12s} {r['status']} {r.get('message', '')[:80]}")
PY
}

for mode in forward backward full; do
	for h in 1024 4096 16384; do run layer_norm $mode fp32 rows=4096 hidden=$h; done
done
run layer_norm backward bf16 rows=4096 hidden=4096
for mode in forward backward full; do
	for v in 32768 131072; do run megatron_cross_entropy $mode bf16 seq=2048 batch=4 vocab=$v; done
done
run megatron_cross_entropy backward bf16 seq=4096 batch=4 vocab=131072
run megatron_cross_entropy backward fp32 seq=2048 batch=4 vocab=32768
for mode in forward full; do
	for t in 8192; do run jsd $mode fp32 tokens=$t vocab=128256; done
done
run jsd forward fp32 tokens=1024 vocab=128256
run jsd forward fp32 tokens=16384 vocab=128256
run jsd forward bf16 tokens=8192 vocab=128256
for t in 1024 8192 16384; do run distill_jsd_loss forward bf16 tokens=$t hidden=4096 vocab=128256; done
run distill_jsd_loss full bf16 tokens=8192 hidden=4096 vocab=128256
echo "# raw results (manifests and raw samples) in $OUT/"
