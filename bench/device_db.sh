#!/usr/bin/env bash
# bench/device_db.sh: the first phase of bench/device.sh -- the whole product on the GPU host.
#
# Starts the PostgreSQL bundle (build/pgbundle, made here by tools/pgbundle_build.sh and
# carried) with the preload and one worker for DEVICE, imports Liger-Kernel's benchmark
# CSV, queues with kbench_run() the three seed workloads and jsd under each implementation
# of IMPLS, waits for the worker, prints from SQL a table of our runs beside the runs of
# the same workload digest and mode that Liger reported (the CSV: other cards, other
# dates), and exports the catalog as JSON lines.  Then it stops the server.
#
#   bench/device_db.sh [cuda:N]
#   env: OUT (default /tmp/kbench-device): work files; RETURN_DIR (default $OUT/db): the
#        few files meant to come back (db_table.txt, catalog.jsonl.gz, server.log.gz);
#        PHASE_S (default 240): this phase's budget, start to stop;
#        IMPLS (default "cuda cuda/v2 huggingface liger"): what kbench_run is asked for;
#        an implementation it refuses is listed with its reason (a kernel without a v2,
#        an implementation not yet in this build), and the rest go on;
#        DEVICE_DRY=1: small shapes and a short protocol, for the fake CUDA backend
#        (test/suites/fault.sh); KI_BUNDLE, KI_BUNDLE_RUN: see bin/pgbundle.sh.
# Exit status: 0 when every queued job passed, 1 otherwise (the table says which).
set -u
cd "$(dirname "$0")/.." || exit 1
DEV=${1:-cuda:0}
OUT=${OUT:-/tmp/kbench-device}
RET=${RETURN_DIR:-$OUT/db}
PHASE=${PHASE_S:-240}
IMPLS=${IMPLS:-cuda cuda/v2 huggingface liger}
B=${KI_BUNDLE:-$PWD/build/pgbundle}
export KI_BUNDLE=$B KI_BUNDLE_RUN=${KI_BUNDLE_RUN:-/tmp/kernelindex-bundle} KI_DEVICES=$DEV
mkdir -p "$OUT" "$RET"
T0=$SECONDS
left() { echo $((PHASE - (SECONDS - T0))); }
say() { echo "# db: $* ($((SECONDS - T0)) s)"; }
PB=(bash bin/pgbundle.sh)

[ -x "$B/bin/postgres" ] || { say "no bundle in $B: phase skipped (tools/pgbundle_build.sh, then carry build/pgbundle)"; exit 1; }
head -2 "$B/BUNDLE.txt" 2>/dev/null | sed 's/^/# db: bundle: /'

# libkbench_cuda.so: the bundle's, built here; where this host cannot load it (libcublasLt
# elsewhere), one built on this host from kernels/, copied where the server's user reads it.
if [ -z "${KBENCH_CUDA_LIB:-}" ] && [ -f "$B/lib/postgresql/libkbench_cuda.so" ] &&
	ldd "$B/lib/postgresql/libkbench_cuda.so" 2>/dev/null | grep -q 'not found'; then
	say "the bundle's libkbench_cuda.so lacks $(ldd "$B/lib/postgresql/libkbench_cuda.so" | awk '/not found/ {print $1}' | tr '\n' ' ')here; building kernels/"
	if timeout "$(($(left) / 2))" make -s -C kernels -j"$(nproc)" libkbench_cuda.so >"$OUT/db-kernels.log" 2>&1; then
		d=$(mktemp -d /tmp/kbench-cuda.XXXXXX) && chmod 755 "$d" && cp kernels/libkbench_cuda.so "$d/" && chmod 755 "$d/libkbench_cuda.so"
		export KBENCH_CUDA_LIB=$d/libkbench_cuda.so
	else
		say "building libkbench_cuda.so here failed (see $OUT/db-kernels.log)"
	fi
fi
# the python implementations import Liger-Kernel from its carried checkout, copied where the
# server's user (nobody, when this runs as root) can read it
if [ -d third_party/Liger-Kernel/src ]; then
	d=$(mktemp -d /tmp/kbench-liger.XXXXXX) && cp -r third_party/Liger-Kernel/src "$d/" && chmod -R a+rX "$d" &&
		export PYTHONPATH=$d/src${PYTHONPATH:+:$PYTHONPATH}
fi

# the python implementations (huggingface, liger) run under this host's python3 (the one with torch)
PYCONF="kernelindex.python = '$(command -v python3 2>/dev/null)'"
"${PB[@]}" start "kernelindex.job_timeout = '150s'" "$PYCONF" || { say "the bundle did not start"; exit 1; }
trap '"${PB[@]}" stop >/dev/null; gzip -c "$KI_BUNDLE_RUN/server.log" >"$RET/server.log.gz" 2>/dev/null' EXIT
P=$(bash bin/pgbundle.sh env | sed -n 's/.*PSQL=//p')
q() { env -i PATH=/usr/bin:/bin TZ=UTC LANG=C "$P" -X -At -q -h "$KI_BUNDLE_RUN" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }

# the worker for DEVICE, idle
wait_worker() {
	for ((i = 0; i < 300; i++)); do
		[ "$(q -c "SELECT count(*) FROM kbench_workers WHERE device = '$DEV' AND state = 'idle'" 2>/dev/null)" = 1 ] && break
		sleep 0.2
	done
	say "worker: $(q -c "SELECT string_agg(format('%s %s (pid %s, %s)', device, product, pid, state), '; ') FROM kbench_workers")"
}
wait_worker
# a worker that cannot use the GPU through the bundle's libkbench_cuda.so: once, one built here
if [ -z "${KBENCH_CUDA_LIB:-}" ] && [ "$(q -c "SELECT count(*) FROM kbench_workers WHERE device = '$DEV' AND product LIKE 'unavailable:%'")" = 1 ]; then
	say "the bundle's libkbench_cuda.so does not serve $DEV here; building kernels/ and restarting"
	if timeout "$(($(left) / 2))" make -s -C kernels -j"$(nproc)" libkbench_cuda.so >"$OUT/db-kernels.log" 2>&1; then
		d=$(mktemp -d /tmp/kbench-cuda.XXXXXX) && chmod 755 "$d" && cp kernels/libkbench_cuda.so "$d/" && chmod 755 "$d/libkbench_cuda.so"
		export KBENCH_CUDA_LIB=$d/libkbench_cuda.so
		"${PB[@]}" stop >/dev/null
		"${PB[@]}" start "kernelindex.job_timeout = '150s'" "$PYCONF" || { say "the bundle did not start again"; exit 1; }
		wait_worker
	else
		say "building libkbench_cuda.so here failed (see $OUT/db-kernels.log)"
	fi
fi

say "importing Liger's CSV: $(q -F ' ' <<EOF
\set csv \`cat '$PWD/data/liger/all_benchmark_data.csv'\`
SELECT import_id FROM kbench_import_liger(:'csv') \\gset
SELECT format('%s lines, %s runs inserted, %s memory observations, %s skipped, %s rejected', lines,
              inserted - memory_inserted, memory_inserted, skipped, rejected) FROM kbench_imports WHERE id = :import_id;
EOF
)"

# the seed workloads (PRODUCT.md) and jsd, as Liger's CSV names them; DEVICE_DRY: small shapes
# (layer_norm's is in the CSV too, so the join is exercised)
if [ "${DEVICE_DRY:-0}" = 1 ]; then
	PROTOCOL='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
	WORKLOADS=("megatron_cross_entropy backward {\"seq\": 16, \"batch\": 2, \"vocab\": 4096, \"dtype\": \"bf16\"}"
		"distill_jsd_loss forward {\"tokens\": 8, \"hidden\": 64, \"vocab\": 512, \"dtype\": \"bf16\"}"
		"layer_norm backward {\"rows\": 4096, \"hidden\": 1024, \"dtype\": \"fp32\"}"
		"jsd forward {\"tokens\": 16, \"vocab\": 4096, \"dtype\": \"fp32\"}")
else
	PROTOCOL='{}'  # kbench's default: do_bench's, 25 ms warm-up, 100 ms of samples, 256 MiB L2 flush
	WORKLOADS=("megatron_cross_entropy backward {\"seq\": 2048, \"batch\": 4, \"vocab\": 131072, \"dtype\": \"bf16\"}"
		"distill_jsd_loss forward {\"tokens\": 8192, \"hidden\": 4096, \"vocab\": 128256, \"dtype\": \"bf16\"}"
		"layer_norm backward {\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}"
		"jsd forward {\"tokens\": 8192, \"vocab\": 128256, \"dtype\": \"fp32\"}")
fi
IDS=()
: >"$OUT/db-refused.txt"
for w in "${WORKLOADS[@]}"; do
	read -r op mode json <<<"$w"
	for impl in $IMPLS; do
		if id=$(q -c "SELECT kbench_run('$op', '$mode', '$json', implementation => '$impl', device => '$DEV', protocol => '$PROTOCOL')" 2>"$OUT/db-err.txt"); then
			IDS+=("$id")
		else
			printf '%-24s %-9s %-13s not queued: %s\n' "$op" "$mode" "$impl" \
				"$(sed -n 's/^ERROR: *//p' "$OUT/db-err.txt" | head -1 | head -c 150)" | tee -a "$OUT/db-refused.txt"
		fi
	done
done
say "${#IDS[@]} jobs queued: ${IDS[*]}"

# wait, within the phase's budget (30 s kept for the table, the export and the stop)
for id in "${IDS[@]}"; do
	t=$(($(left) - 30))
	[ "$t" -ge 1 ] || break
	q -c "SELECT format('job %s: %s %s', id, status, coalesce(run_status::text, '')) FROM kbench_wait($id, '$t s')" 2>&1 |
		sed "s/^/# db: /"
done
q -c "SELECT kbench_cancel(id) FROM kbench_jobs WHERE status IN ('queued', 'running')" >/dev/null
say "jobs done"

ids=$(IFS=,; echo "${IDS[*]:-0}")
# the card's measured ceilings, once the jobs are done (the device idle): kbench_probe
# (docs/KERNELS.md "Measured ceilings"), beside the datasheet in kbench_roofline
q -c "SELECT 'probe: ' || device || ' copy ' || coalesce(round((bandwidth_bytes_per_s / 1e9)::numeric, 1)::text, '-') || ' GB/s, fp32 '
             || coalesce(round((flops_fp32 / 1e12)::numeric, 1)::text, '-') || ' TFLOP/s, bf16 GEMM '
             || coalesce(round((flops_bf16 / 1e12)::numeric, 1)::text, '-') || ' TFLOP/s'
        FROM kbench_probe('$DEV')" >"$RET/probe.txt" 2>&1 || true
q -P footer=off -F ' | ' >"$RET/db_table.txt" <<EOF
\pset tuples_only off
\pset format aligned
-- our runs (this card, this run) first, then what Liger reported for the same workload digest
-- and mode (the CSV: its own cards and dates); x_cuda = median / our cuda run's median
WITH ours AS (
	SELECT j.id, j.operation AS op, j.mode, coalesce(j.implementation, 'cuda') AS impl, j.status,
	       j.run_status, j.error, r.digest, r.workload_digest, r.median_ns, r.p20_ns, r.p80_ns,
	       e.product, w.name AS workload
	  FROM kbench_jobs j
	  LEFT JOIN kbench_runs r ON r.digest = j.run_digest
	  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
	  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
	 WHERE j.id IN ($ids)),
base AS (SELECT op, mode, median_ns FROM ours WHERE impl = 'cuda' AND status = 'passed'),
reported AS (
	SELECT o.op, o.mode, o.workload, 'reported: ' || split_part(lr.external_id, '/', 3) AS impl,
	       lr.status::text AS status, lr.median_ns, lr.p20_ns, lr.p80_ns,
	       concat_ws(' ', e.product, e.form_factor) || coalesce(', liger ' || (lr.manifest->'metadata'->'labels'->>'liger_version'), '') AS product
	  FROM (SELECT DISTINCT op, mode, workload_digest, workload FROM ours WHERE workload_digest IS NOT NULL) o
	  JOIN kbench_runs lr ON lr.workload_digest = o.workload_digest AND lr.source = 'liger-kernel-bench'
	  JOIN kbench_protocols p ON p.digest = lr.protocol_digest AND kbench_protocol_mode(p.name) = o.mode
	  LEFT JOIN kbench_environments e ON e.digest = lr.environment_digest)
SELECT t.op, t.mode, coalesce(t.workload, '-') AS workload, t.impl, t.product,
       round(t.median_ns / 1e6, 4) AS median_ms, round(t.p20_ns / 1e6, 4) AS p20_ms, round(t.p80_ns / 1e6, 4) AS p80_ms,
       round(t.median_ns::numeric / (SELECT b.median_ns FROM base b WHERE b.op = t.op AND b.mode = t.mode AND b.median_ns > 0), 2) AS x_cuda,
       round((t.median_ns / nullif(rf.floor_ns, 0))::numeric, 2) AS x_floor,
       round((t.median_ns / nullif(rf.measured_floor_ns, 0))::numeric, 2) AS x_measured,
       t.status || coalesce(' ' || left(t.error, 90), '') AS status
  FROM (SELECT 0 AS k, id, op, mode, workload, impl, coalesce(product, '') AS product, median_ns, p20_ns, p80_ns, digest,
               status || coalesce('/' || run_status, '') AS status, error FROM ours
        UNION ALL
        SELECT 1, NULL, op, mode, workload, impl, product, median_ns, p20_ns, p80_ns, NULL, status, NULL FROM reported) t
  LEFT JOIN kbench_roofline rf ON rf.run_digest = t.digest
 ORDER BY t.op, t.mode, t.k, t.id, t.median_ns;
EOF
# the same runs as the catalog's analytics see them: each cohort (workload, protocol, this card)
# with its implementations ranked (kbench_records; ties by the spread of the median)
q -P footer=off -F ' | ' >>"$RET/db_table.txt" <<EOF

\pset tuples_only off
\pset format aligned
SELECT rc.operation, rc.mode, rc.implementation, round(rc.primary_ns / 1e6, 4) AS best_ms,
       round(rc.low_ns / 1e6, 4) AS low_ms, round(rc.high_ns / 1e6, 4) AS high_ms, rc.rank, rc.vs_leader
  FROM kbench_records rc
 WHERE (rc.workload_digest, rc.protocol_digest, rc.environment_digest) IN
       (SELECT r.workload_digest, r.protocol_digest, r.environment_digest
          FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id IN ($ids))
 ORDER BY rc.operation, rc.mode, rc.rank, rc.primary_ns;
EOF
cat "$RET/db_table.txt"
[ -s "$OUT/db-refused.txt" ] && { echo "not queued:"; cat "$OUT/db-refused.txt"; } | tee -a "$RET/db_table.txt" >/dev/null
echo "# x_floor: median over the floor of kbench_roofline (kbench_operation_costs over the card's datasheet peaks)" >>"$RET/db_table.txt"
echo "# x_measured: median over the floor over the card's measured ceilings ($(cat "$RET/probe.txt" 2>/dev/null | head -1))" >>"$RET/db_table.txt"

q -c "SELECT * FROM kbench_export_catalog()" | gzip >"$RET/catalog.jsonl.gz"
say "catalog exported: $(gzip -dc "$RET/catalog.jsonl.gz" | wc -l) JSON lines in $RET/catalog.jsonl.gz"
bad=$(q -c "SELECT count(*) FROM kbench_jobs WHERE id IN ($ids) AND status <> 'passed'")
say "phase done: ${#IDS[@]} jobs, $bad not passed"
[ "$bad" = 0 ] && [ "${#IDS[@]}" -gt 0 ]
