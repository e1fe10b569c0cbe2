#!/usr/bin/env bash
# bench/device_ncu.sh: Nsight Compute over the kernels that still miss their targets, in the
# minutes a device call has left (the last phase of bench/device.sh before its table).
#
# One `ncu` per workload and variant, v2 first (the designs on trial), each kernel of one call of
# kbench's run (no warm-up, one sample, no L2 flush, no correctness check) with a few metrics:
# duration, DRAM and SM throughput as % of peak, DRAM bytes, registers per thread, achieved
# occupancy -- the numbers that say whether a kernel moves the bytes it should at the rate it
# could.  --clock-control none: the card's clocks are left as they are (METHOD.md).  Prints one
# line per kernel; the CSV and ncu's messages stay in $OUT/ncu/.
#
#   bench/device_ncu.sh [cuda:N]
#   env: OUT (default /tmp/kbench-device); NCU_S (default 60): this phase's budget, each ncu cut
#        off at what is left of it; NCU_BIN (default ncu); KB (default kernels/kbench)
set -u
cd "$(dirname "$0")/.." || exit 1
DEV=${1:-cuda:0}
DIR=${OUT:-/tmp/kbench-device}/ncu
NCU=${NCU_BIN:-ncu}
KB=${KB:-kernels/kbench}
BUDGET=${NCU_S:-60}
T0=$SECONDS
mkdir -p "$DIR"
if ! command -v "$NCU" >/dev/null 2>&1; then  # not on PATH: where CUDA and Nsight install it
	for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do [ -x "$c" ] && NCU=$c && break; done
fi
command -v "$NCU" >/dev/null 2>&1 || { echo "# ncu: not on this host, phase skipped"; exit 0; }
METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
echo "# ncu (--clock-control none): per kernel of one call: duration, DRAM %, SM %, DRAM bytes, registers, achieved occupancy"
# the targets of issue 4, v2 first; distill_jsd_loss at 2048 tokens (the same kernels, a quarter
# of the memory ncu saves and restores between its passes)
for spec in "v2 layer_norm backward rows=4096 hidden=4096 dtype=fp32" \
	"v2 megatron_cross_entropy backward seq=2048 batch=4 vocab=131072 dtype=bf16" \
	"v2 distill_jsd_loss forward tokens=2048 hidden=4096 vocab=128256 dtype=bf16" \
	"v1 layer_norm backward rows=4096 hidden=4096 dtype=fp32" \
	"v1 megatron_cross_entropy backward seq=2048 batch=4 vocab=131072 dtype=bf16" \
	"v1 jsd forward tokens=8192 vocab=128256 dtype=fp32" \
	"v1 distill_jsd_loss forward tokens=2048 hidden=4096 vocab=128256 dtype=bf16"; do
	read -r var op mode axes <<<"$spec"
	name="$op-$mode-$var"
	t=$((BUDGET - (SECONDS - T0)))
	if [ "$t" -lt 10 ]; then
		echo "#   $name: skipped (NCU_S=$BUDGET spent)"
		continue
	fi
	# shellcheck disable=SC2086
	timeout -k 5 "$t" "$NCU" --clock-control none --csv --print-units base --metrics "$METRICS" --launch-count 40 \
		"$KB" run "$op" "$mode" $axes --device "$DEV" --impl "cuda/$var" --warmup-ms 0 --rep-ms 0.01 --max-samples 1 \
		--flush-bytes 0 --no-check >"$DIR/$name.csv" 2>"$DIR/$name.err"
	rc=$?
	python3 - "$DIR/$name.csv" "$name ($axes)" "$rc" <<'PY'
import csv, sys
path, title, rc = sys.argv[1:4]
kernels = {}  # ID -> (name, {metric: value}); columns found by the header's names
col = None
with open(path, newline="") as f:
    for row in csv.reader(line for line in f if line.startswith('"')):
        if col is None:
            if "ID" in row and "Metric Name" in row:
                col = {n: row.index(n) for n in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
            continue
        if len(row) <= max(col.values()):
            continue
        k = kernels.setdefault(row[col["ID"]], (row[col["Kernel Name"]], {}))
        k[1][row[col["Metric Name"]]] = row[col["Metric Value"]].replace(",", "")
print(f"#   {title}: exit {rc}, {len(kernels)} kernels")
def num(m, key, scale=1.0, fmt="{:.1f}"):
    try:
        return fmt.format(float(m[key]) * scale)
    except (KeyError, ValueError):
        return "-"
for _, (name, m) in sorted(kernels.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else 0):
    print(f"#     {name[:60]:60s} {num(m, 'gpu__time_duration.sum', 1e-3):>10s} us"
          f"  dram {num(m, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):>5s}%"
          f"  sm {num(m, 'sm__throughput.avg.pct_of_peak_sustained_elapsed'):>5s}%"
          f"  {num(m, 'dram__bytes.sum', 1e-6):>9s} MB"
          f"  regs {num(m, 'launch__registers_per_thread', 1, '{:.0f}'):>3s}"
          f"  occ {num(m, 'sm__warps_active.avg.pct_of_peak_sustained_active'):>5s}%")
PY
	[ "$rc" = 0 ] || sed 's/^/#     ncu: /' "$DIR/$name.err" | grep -v '==PROF==' | tail -3
done
echo "# ncu done in $((SECONDS - T0)) s (CSV in $DIR)"
