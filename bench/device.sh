#!/usr/bin/env bash
# bench/device.sh: check and time every kernels/ operation on one GPU.
#
# For a GPU host with nvcc and no PostgreSQL.  First (phase 1, bench/device_db.sh, at
# most PHASE_S seconds, default 240): the carried PostgreSQL bundle (build/pgbundle) is
# started with one worker for the GPU, Liger's CSV imported, the seed workloads and jsd
# queued with kbench_run() under cuda, cuda/v2 (and the python implementations when this
# build has them), waited for, printed beside Liger's reported rows from SQL, and the
# catalog exported (into RETURN_DIR, default $OUT/db).  Then builds kernels/ (libkbench,
# libkbench_cuda.so, kbench), runs each operation at its seed workload and
# a smaller and a larger one under the kernelindex protocol (correctness
# checked against the float64 reference on every run), and prints a table:
# median, p20-p80, achieved GB/s or TFLOP/s, and the multiple of the floor
# (bytes / peak bandwidth, or FLOPs / peak dense bf16 FLOP/s).  When a
# Liger-Kernel checkout is present in third_party/Liger-Kernel (git-ignored)
# and PyTorch + Triton import, Liger's time for the same workloads is
# measured after the kbench rows, all rows in ONE python process
# (bench/liger_time.py --batch: median, p20-p80 and the GPU kernel time per
# call, or "err: reason" for a row that failed), and joined into the table.
#
#   bench/device.sh [cuda:N]
#   env: PEAK_GBPS, PEAK_TFLOPS override the device table; OUT (default /tmp/kbench-device);
#        BUDGET_S (default 480): the whole script, phase 1 and build included; DB=0 skips phase 1;
#        BUDGET_AFTER_DB_S: instead, a budget for what follows phase 1 (the fault suite's dry run);
#        SANITIZE_S (default 60): compute-sanitizer's share, counted from the end of phase 1;
#        MAX_ROWS: time only the first N kbench rows, mark the rest skipped (the dry run: a
#        cut that does not depend on the machine's speed); LIGER=0 skips Liger;
#        LIGER_GPU_TIME (default 3): calls profiled per Liger row for its GPU time, 0 = off;
#        EDGE_TIMEOUT_S (default 60): the limit of each v2 edge-shape line (the fault suite, where
#        the fake device runs them on a loaded CPU, gives more);
#        NCU=0 skips the last phase (bench/device_ncu.sh: Nsight Compute over the kernels that
#        miss their targets, NCU_S seconds, default 60, kept out of Liger's share).
# Budget: under 8 minutes on an H100/H200.  kbench rows took 71 s on an H200
# (protocol 25 ms + 100 ms per run); each kbench row is limited to 120 s and
# to what is left of BUDGET_S, the Liger batch to what is left after them.
set -u
cd "$(dirname "$0")/.." || exit 1
DEV=${1:-cuda:0}
OUT=${OUT:-/tmp/kbench-device}
BUDGET=${BUDGET_S:-480}
mkdir -p "$OUT"
left() { echo $((BUDGET - SECONDS)); }

# phase 1: PostgreSQL, the worker and kbench_run on this GPU (bench/device_db.sh)
if [ "${DB:-1}" != 0 ]; then
	echo "# phase 1: the database (bench/device_db.sh, at most ${PHASE_S:-240} s)"
	OUT=$OUT PHASE_S=${PHASE_S:-240} timeout -k 10 $((${PHASE_S:-240} + 20)) bash bench/device_db.sh "$DEV" 2>&1
	echo "# phase 1 done at ${SECONDS} s (exit $?)"
	# a phase cut off by its timeout leaves no server holding the GPU
	KI_BUNDLE_RUN=${KI_BUNDLE_RUN:-/tmp/kernelindex-bundle} bash bin/pgbundle.sh stop 2>&1 | grep -v '^pgbundle: no server' | sed 's/^/# /'
fi
[ -n "${BUDGET_AFTER_DB_S:-}" ] && BUDGET=$((SECONDS + BUDGET_AFTER_DB_S))
T2=$SECONDS

timeout "$(left)" make -C kernels -j"$(nproc)" >"$OUT/build.log" 2>&1 || {
	echo "build failed, see $OUT/build.log"
	tail -30 "$OUT/build.log"
	exit 1
}
KB=kernels/kbench
"$KB" devices
PRODUCT=$("$KB" devices --json | grep -oE "\"name\":\"$DEV\"[^}]*\"product\":\"[^\"]*\"" | sed 's/.*"product":"//; s/"$//')
[ -n "$PRODUCT" ] || {
	echo "no device $DEV"
	exit 1
}
case "$PRODUCT" in
*H200*) BW=4800 TF=989 ;;
*H100*PCIe*) BW=2000 TF=756 ;;
*H100*) BW=3350 TF=989 ;;
*) BW=3350 TF=989 && echo "# unknown product '$PRODUCT': assuming H100 SXM peaks" ;;
esac
BW=${PEAK_GBPS:-$BW}
TF=${PEAK_TFLOPS:-$TF}
echo "# $PRODUCT: floor from peak ${BW} GB/s, ${TF} dense bf16 TFLOP/s"

WITH_LIGER=""
if [ "${LIGER:-1}" != 0 ] && [ -d third_party/Liger-Kernel/src/liger_kernel ] && python3 -c 'import torch, triton' 2>/dev/null; then
	WITH_LIGER=1
fi

ROWS="$OUT/rows.txt"  # one workload a line: op mode dtype key=value... (what Liger times)
TABLE="$OUT/table.txt"  # one kbench run a line: variant op mode dtype key=value...
LIGER_OUT="$OUT/liger.tsv"
: >"$ROWS"
: >"$TABLE"
rm -f "$LIGER_OUT"
N=0
run() { # op mode dtype axes...   (env VARIANT=v2: the CUDA kernel variant; v1 rows also go to Liger)
	local op=$1 mode=$2 dtype=$3 t rc variant=${VARIANT:-v1}
	shift 3
	local key
	key="$op:$mode:$dtype:$(IFS=,; echo "$*")"
	local json
	json="$OUT/$(echo "$key" | tr ':,=' '__-')$([ "$variant" = v1 ] || echo "-$variant").json"
	[ "$variant" = v1 ] && echo "$op $mode $dtype $*" >>"$ROWS"
	echo "$variant $op $mode $dtype $*" >>"$TABLE"
	key="$key@$variant"
	N=$((N + 1))
	t=$(left)
	[ "$t" -gt 120 ] && t=120
	if [ "$t" -lt 5 ] || [ "$N" -gt "${MAX_ROWS:-1000}" ]; then
		if [ "$t" -lt 5 ]; then echo "skipped: the script's budget of ${BUDGET} s is spent"; else echo "skipped: MAX_ROWS=$MAX_ROWS"; fi >"$json.err"
		: >"$json"
		echo "# kbench $N $key: skipped ($(cut -d' ' -f2- "$json.err"))"
		return
	fi
	timeout "$t" "$KB" run "$op" "$mode" "$@" dtype="$dtype" --device "$DEV" --impl "cuda/$variant" --json >"$json" 2>"$json.err"
	rc=$?
	[ $rc = 124 ] && echo "timed out after $t s" >>"$json.err"
	echo "# kbench $N $key: exit $rc ($((SECONDS))s)"
}

# compute-sanitizer (memcheck, racecheck, synccheck) over the v2 kernels on small shapes, when the
# host has it (SANITIZE=0 skips): a blind-written kernel's races and out-of-bounds accesses show
# here before any timing.  One line per tool and shape; each run is cut off after 60 s, and no
# new one starts after SANITIZE_S (default 60 s from the end of phase 1).
if [ "${SANITIZE:-1}" != 0 ] && command -v compute-sanitizer >/dev/null 2>&1; then
	echo "# compute-sanitizer on the v2 kernels"
	for shape in "layer_norm backward rows=37 hidden=1000 dtype=fp32" "layer_norm full rows=9 hidden=6144 dtype=bf16" \
		"megatron_cross_entropy backward seq=3 batch=1 vocab=50304 dtype=bf16" \
		"megatron_cross_entropy backward seq=2 batch=1 vocab=131072 dtype=fp32" \
		"distill_jsd_loss forward tokens=3 hidden=64 vocab=32000 dtype=bf16"; do
		for tool in memcheck racecheck synccheck; do
			if [ $((SECONDS - T2)) -gt "${SANITIZE_S:-60}" ]; then
				echo "#   (compute-sanitizer stopped at ${SECONDS} s: SANITIZE_S=${SANITIZE_S:-60})"
				break 2
			fi
			# shellcheck disable=SC2086
			out=$(timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 "$KB" run $shape --device "$DEV" \
				--impl cuda/v2 --warmup-ms 0 --rep-ms 0.01 --max-samples 1 --flush-bytes 0 2>&1)
			rc=$?
			printf '#   %-10s %-66s exit %s %s\n' "$tool" "$shape" "$rc" \
				"$(printf '%s\n' "$out" | grep -m1 -E 'ERROR SUMMARY|Invalid|Race|Barrier|timeout|kbench:' | head -c 120)"
		done
	done
	echo "# compute-sanitizer done at ${SECONDS} s"
fi

# v2 on edge shapes first (one grid stride, ragged chunks, uneven cluster segments, fallbacks to
# v1): correctness only, a short protocol, one line each
echo "# v2 edge-shape checks (correctness against the float64 reference)"
edge() { # op mode dtype axes...
	local out
	out=$(timeout "${EDGE_TIMEOUT_S:-60}" "$KB" run "$@" --device "$DEV" --impl cuda/v2 --warmup-ms 1 --rep-ms 2 --flush-bytes 0 2>&1)
	printf '#   %-62s %s | %s\n' "$*" "$(printf '%s\n' "$out" | head -1 | head -c 100)" \
		"$(printf '%s\n' "$out" | grep -m1 'correctness:' | sed 's/^ *//' | head -c 120)"
}
edge layer_norm backward rows=1 hidden=8 dtype=fp32
edge layer_norm backward rows=7 hidden=1000 dtype=fp32
edge layer_norm backward rows=5000 hidden=3072 dtype=fp32
edge layer_norm backward rows=3 hidden=6144 dtype=bf16
edge layer_norm full rows=1031 hidden=8192 dtype=fp32
edge layer_norm backward rows=64 hidden=1001 dtype=fp32
edge megatron_cross_entropy backward seq=1 batch=1 vocab=8 dtype=bf16
edge megatron_cross_entropy backward seq=3 batch=5 vocab=50304 dtype=bf16
edge megatron_cross_entropy forward seq=3 batch=5 vocab=50304 dtype=bf16
edge megatron_cross_entropy backward seq=16 batch=2 vocab=131072 dtype=fp32
edge megatron_cross_entropy backward seq=4 batch=1 vocab=262144 dtype=bf16
edge megatron_cross_entropy backward seq=2 batch=1 vocab=524288 dtype=bf16
edge megatron_cross_entropy backward seq=7 batch=1 vocab=50257 dtype=bf16
edge distill_jsd_loss forward tokens=5 hidden=64 vocab=32000 dtype=bf16
edge distill_jsd_loss forward tokens=3 hidden=64 vocab=128256 dtype=bf16
edge distill_jsd_loss forward tokens=3 hidden=16 vocab=19 dtype=bf16
echo "# v2 edge-shape checks done at ${SECONDS} s"

# CUDA-graph timing (the protocol's cuda_graph, docs/KERNELS.md) beside per-call events, on
# kernels short enough that the launch counts; warm cache, checked; one line each
echo "# CUDA-graph timing against per-call events (median per call, flush_bytes 0)"
graphline() { # op mode axes...
	local ev gr
	ev=$(timeout "${EDGE_TIMEOUT_S:-60}" "$KB" run "$@" --device "$DEV" --warmup-ms 1 --rep-ms 20 --flush-bytes 0 --json 2>/dev/null | python3 bench/run_line.py)
	gr=$(timeout "${EDGE_TIMEOUT_S:-60}" "$KB" run "$@" --device "$DEV" --warmup-ms 1 --rep-ms 20 --flush-bytes 0 --cuda-graph --json 2>/dev/null | python3 bench/run_line.py)
	printf '#   graph %-52s events: %-28s graphs: %s\n' "$*" "$ev" "$gr"
}
graphline layer_norm forward rows=64 hidden=1024 dtype=fp32
graphline layer_norm backward rows=64 hidden=1024 dtype=fp32
graphline megatron_cross_entropy forward seq=16 batch=1 vocab=32768 dtype=bf16
graphline jsd forward tokens=16 vocab=4096 dtype=fp32
echo "# CUDA-graph lines done at ${SECONDS} s"

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
	run jsd $mode fp32 tokens=8192 vocab=128256
done
run jsd forward fp32 tokens=1024 vocab=128256
run jsd forward fp32 tokens=16384 vocab=128256
run jsd forward bf16 tokens=8192 vocab=128256
for t in 1024 8192 16384; do run distill_jsd_loss forward bf16 tokens=$t hidden=4096 vocab=128256; done
run distill_jsd_loss full bf16 tokens=8192 hidden=4096 vocab=128256

# v2 kernels side by side with v1 on the same card (the v2/v1 column): the rows the v2 designs target
for h in 1024 4096 16384; do VARIANT=v2 run layer_norm backward fp32 rows=4096 hidden=$h; done
VARIANT=v2 run layer_norm full fp32 rows=4096 hidden=4096
VARIANT=v2 run layer_norm backward bf16 rows=4096 hidden=4096
for mode in forward backward; do
	for v in 32768 131072; do VARIANT=v2 run megatron_cross_entropy $mode bf16 seq=2048 batch=4 vocab=$v; done
done
VARIANT=v2 run megatron_cross_entropy backward bf16 seq=4096 batch=4 vocab=131072
VARIANT=v2 run megatron_cross_entropy backward fp32 seq=2048 batch=4 vocab=32768
for t in 1024 8192; do VARIANT=v2 run distill_jsd_loss forward bf16 tokens=$t hidden=4096 vocab=128256; done
echo "# kbench rows done at ${SECONDS} s"

# Liger-Kernel's and PyTorch's implementations through kbench's own protocol and check (issue 14,
# docs/BYO.md): the python harness in a child process, the same inputs and float64 reference.
# Only with the checkout and torch + triton (WITH_LIGER), and BYO=0 skips it.
if [ -n "$WITH_LIGER" ] && [ "${BYO:-1}" != 0 ]; then
	for row in "layer_norm backward rows=4096 hidden=4096 dtype=fp32" "jsd forward tokens=8192 vocab=128256 dtype=fp32" \
		"megatron_cross_entropy backward seq=2048 batch=4 vocab=131072 dtype=bf16"; do
		for impl in liger torch; do
			t=$(left)
			[ "$t" -gt 60 ] || { echo "# byo $impl $row: skipped (budget)"; continue; }
			# shellcheck disable=SC2086
			out=$(PYTHONPATH="third_party/Liger-Kernel/src${PYTHONPATH:+:$PYTHONPATH}" timeout 60 "$KB" run $row \
				--device "$DEV" --impl "$impl" --python "$(command -v python3)" --timeout 50 2>&1)
			printf '# byo %-6s %-66s %s | %s\n' "$impl" "$row" "$(printf '%s\n' "$out" | head -1 | head -c 140)" \
				"$(printf '%s\n' "$out" | grep -m1 -E '^  median' | head -c 60)"
		done
	done
	echo "# byo rows done at ${SECONDS} s"
fi

# the last phase, Nsight Compute (bench/device_ncu.sh), keeps NCU_S seconds of the budget
NCU_KEEP=0
if [ "${NCU:-1}" != 0 ] && command -v "${NCU_BIN:-ncu}" >/dev/null 2>&1; then NCU_KEEP=${NCU_S:-60}; fi
if [ -n "$WITH_LIGER" ]; then
	t=$(($(left) - 10 - NCU_KEEP))
	if [ "$t" -ge 30 ]; then
		# one process for every row; a row that fails answers "err: ..." and the rest go on
		timeout -k 5 "$t" python3 bench/liger_time.py --batch "$ROWS" --device "$DEV" \
			--budget-s $((t - 5)) --row-timeout-s 150 --gpu-time "${LIGER_GPU_TIME:-3}" \
			>"$LIGER_OUT" 2>"$OUT/liger.err"
		rc=$?
		[ $rc = 124 ] || [ $rc = 137 ] && echo "# liger_time.py stopped at its ${t} s limit (rows without a line show 'killed')"
		grep '^#' "$LIGER_OUT" | grep -v ' took ' | head -3
		echo "# Liger rows done at ${SECONDS} s (exit $rc; stderr in $OUT/liger.err)"
	else
		echo "# no time left for Liger (${t} s)"
		WITH_LIGER=""
	fi
fi

if [ "${NCU:-1}" != 0 ]; then
	t=$(($(left) - 5))
	[ "$t" -gt "${NCU_S:-60}" ] && t=${NCU_S:-60}
	if [ "$t" -ge 10 ]; then OUT=$OUT NCU_S=$t KB=$KB bash bench/device_ncu.sh "$DEV"; else echo "# ncu: no time left (${t} s)"; fi
fi

# where each Liger row still departs from Liger's own scripts: codes per row, legend under the table
LIGER_NOTES="$OUT/liger_notes.tsv"
[ -n "$WITH_LIGER" ] && python3 bench/liger_time.py --notes --batch "$ROWS" >"$LIGER_NOTES" 2>&1

python3 bench/device_table.py "$TABLE" "$OUT" "$BW" "$TF" "${WITH_LIGER:+$LIGER_OUT}" "${WITH_LIGER:+$LIGER_NOTES}"
echo "# v2/v1: median of the v2 kernel over v1's on this card in this run (< 1: v2 faster); a v2 run must also pass its check"
echo "# liger_ms: Liger's own definition of each mode (see bench/liger_time.py's docstring); liger_gpu: its GPU kernel time per call"
echo "# raw results (manifests and raw samples) in $OUT/; done in ${SECONDS} s"
