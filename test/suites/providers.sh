#!/usr/bin/env bash
# providers.sh: Liger's other providers as kbench's built-in implementations (docs/OPERATIONS.md,
# "Liger's other providers"; kernels/impl_name.c kb_providers, kernels/python/kbench_providers.py):
# each runs for the operations Liger benchmarks it with, built as Liger's script builds it, and is
# refused for others (CLI exit 2, kbench_run at queue time); torch_compile through the CPU worker
# lands in the WorkloadCase digest the Liger import gives its rows and is named for torch_compile;
# a provider names one implementation (resolve, reproduction); a missing library fails the run
# saying which.  Needs /usr/bin/python3 with torch.  KI_OPS="op1 op2" limits it to the providers
# of those operations.  TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
PY=/usr/bin/python3
source test/lib/tap.sh
require_torch "$PY"
KB=kernels/kbench
[ -x $KB ] || { echo "not ok - kernels/kbench is built (make -C kernels)"; exit 1; }
FAST="--rep-ms 1 --warmup-ms 0 --flush-bytes 0 --max-samples 3 --python $PY"
TMPDIR_OPS=$(mktemp -d /tmp/kernelindex-prov.XXXXXX)
trap 'rm -rf "$TMPDIR_OPS"' EXIT

# Liger's other providers (docs/OPERATIONS.md, "Liger's other providers"): built-in names for the
# operations Liger benchmarks each with only.  torch_compile runs through the worker with torch's
# torch.compile where torch has it (2.0 or later), else with the stand-in of
# test/operations/compile_standin (torch 1.13 here has no torch.compile: a run with the plain
# interpreter fails saying so); deepspeed_tiled is the TiledMLP algorithm Liger's script carries
# (no deepspeed import) and runs here; the liger_* ones run with test/byo/fake_liger's stand-ins
# (the wiring, not Liger); the megatron ones need megatron.core, which is not installed here.
echo "# Liger's other providers"
refused() {  # op mode axes impl: refused at queue time by the CLI, exit 2, naming what it serves
  out=$($KB run $1 $2 $3 --impl $4 $FAST 2>&1); rc=$?
  has "$out $rc" "implementation '$4' is Liger's provider for $5 only; Liger benchmarks no $1 with it" \
      "kbench run --impl $4 for $1 is refused, naming the operations it serves"
  ok "$rc" 2 "... exit 2"
}
if only embedding; then
  refused layer_norm forward "rows=4 hidden=8" torch_compile embedding
  if $PY -c 'import torch, sys; sys.exit(0 if hasattr(torch, "compile") else 1)'; then
    out=$($KB run embedding forward batch=2 seq=4 hidden=8 vocab=16 --impl torch_compile $FAST 2>&1)
    has "$out" "embedding forward: passed" "torch_compile embedding runs with torch's own torch.compile"
  else
    out=$($KB run embedding forward batch=2 seq=4 hidden=8 vocab=16 --impl torch_compile $FAST 2>&1)
    has "$out" "torch_compile needs torch.compile (torch 2.0 or later); this torch is $($PY -c 'import torch; print(torch.__version__)'), which has none; it is torch.compile(torch.nn.Embedding(vocab, hidden))" \
        "torch_compile where torch has no torch.compile: a failed run saying so and how it is built"
    has "$(echo "$out" | grep -c Traceback)" "0" "... not a traceback"
  fi
  SI="--rep-ms 1 --warmup-ms 0 --flush-bytes 0 --max-samples 3 --python test/operations/python_compile_standin.sh"
  for m in forward backward full; do
    for dt in fp32 bf16; do
      rm -f "$TMPDIR_OPS/compile.log"
      out=$(KBENCH_COMPILE_STANDIN_LOG="$TMPDIR_OPS/compile.log" $KB run embedding $m batch=2 seq=8 hidden=16 vocab=64 dtype=$dt --impl torch_compile $SI 2>&1)
      has "$out" "embedding $m: passed" "torch_compile embedding $m $dt passes the float64 check"
    done
  done
  ok "$(cat "$TMPDIR_OPS/compile.log" 2>/dev/null)" "Embedding" "... torch.compile was called on the torch.nn.Embedding baseline (the stand-in's log)"
  ok "$($KB describe embedding full batch=2 seq=8 hidden=16 vocab=64 --impl torch_compile --json 2>/dev/null | $PY -c 'import json,sys; print(json.load(sys.stdin)["digests"]["workload"])')" \
     "$($KB describe embedding full batch=2 seq=8 hidden=16 vocab=64 --impl torch --json 2>/dev/null | $PY -c 'import json,sys; print(json.load(sys.stdin)["digests"]["workload"])')" \
     "torch_compile's WorkloadCase at a shape is torch's (the same workload, another implementation)"
fi
for op in tiled_swiglu tiled_geglu; do
  only "$op" || continue
  for m in forward backward full; do
    for dt in fp32 bf16; do
      bf16_gemm_checked $PY $op $dt "deepspeed_tiled and liger_tiled $op $m $dt pass the float64 check" || continue
      out=$($KB run $op $m batch=2 seq=8 hidden=64 intermediate=128 dtype=$dt --impl deepspeed_tiled $FAST 2>&1)
      has "$out" "$op $m: passed" "deepspeed_tiled $op $m $dt passes the float64 check"
      out=$(PYTHONPATH=test/byo/fake_liger $KB run $op $m batch=2 seq=8 hidden=64 intermediate=128 dtype=$dt --impl liger_tiled $FAST 2>&1)
      has "$out" "$op $m: passed" "liger_tiled $op $m $dt (test/byo/fake_liger's stand-in) passes the float64 check"
    done
  done
  out=$($KB run $op full batch=2 seq=8 hidden=64 intermediate=128 --impl liger_tiled $FAST 2>&1)
  has "$out" "liger_tiled needs liger_kernel (pip package liger-kernel), which is not importable here (No module named 'liger_kernel'); it is Liger-Kernel's LigerTiled" \
      "liger_tiled $op without liger_kernel: a failed run saying which library and how it is built"
done
only tiled_swiglu && refused swiglu forward "batch=2 seq=8 hidden=64 intermediate=128" deepspeed_tiled "tiled_swiglu, tiled_geglu"
if only fused_add_rms_norm; then
  for p in liger_fused_add_rms_norm liger_rms_norm; do
    for m in forward backward full; do
      out=$(PYTHONPATH=test/byo/fake_liger $KB run fused_add_rms_norm $m rows=8 hidden=64 dtype=bf16 --impl $p $FAST 2>&1)
      has "$out" "fused_add_rms_norm $m: passed" "$p fused_add_rms_norm $m (test/byo/fake_liger's stand-ins) passes the float64 check"
    done
    out=$($KB run fused_add_rms_norm full rows=8 hidden=64 --impl $p $FAST 2>&1)
    has "$out" "$p needs liger_kernel (pip package liger-kernel), which is not importable here" "$p without liger_kernel: a failed run saying which library"
  done
  refused rms_norm forward "rows=4 hidden=8" liger_rms_norm fused_add_rms_norm
fi
if only megatron_swiglu; then
  for m in forward backward full; do
    out=$(PYTHONPATH=test/byo/fake_liger $KB run megatron_swiglu $m seq=4 batch=2 ffn=16 dtype=bf16 --impl liger_in_place $FAST 2>&1)
    has "$out" "megatron_swiglu $m: passed" "liger_in_place megatron_swiglu $m (test/byo/fake_liger's stand-in) passes the float64 check"
  done
  out=$($KB run megatron_swiglu full seq=4 batch=2 ffn=16 --impl megatron $FAST 2>&1)
  has "$out" "megatron needs megatron.core (pip package megatron-core), which is not importable here (No module named 'megatron'); it is Megatron-Core's bias_swiglu_impl" \
      "megatron megatron_swiglu without megatron-core: a failed run saying which library and how it is built"
  has "$(echo "$out" | grep -c Traceback)" "0" "... not a traceback"
  refused swiglu forward "batch=2 seq=8 hidden=64 intermediate=128" megatron "megatron_rms_norm, megatron_swiglu"
fi
if only megatron_rms_norm; then
  out=$($KB run megatron_rms_norm full seq=4 batch=2 hidden=16 --impl megatron $FAST 2>&1)
  has "$out" "megatron needs megatron.core (pip package megatron-core), which is not importable here (No module named 'megatron'); it is Megatron-Core's WrappedTorchNorm" \
      "megatron megatron_rms_norm without megatron-core: a failed run saying which library and how it is built"
fi
if only megatron_cross_entropy; then
  for p in megatron-fused megatron-unfused; do
    out=$($KB run megatron_cross_entropy full seq=4 batch=2 vocab=32 dtype=bf16 --impl $p $FAST 2>&1)
    has "$out" "$p needs megatron.core (pip package megatron-core), which is not importable here (No module named 'megatron'); it is Megatron-Core's" \
        "$p megatron_cross_entropy without megatron-core: a failed run saying which library and how it is built"
  done
  refused cross_entropy forward "tokens=8 vocab=16" megatron-fused megatron_cross_entropy
fi

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
echo "# Liger's other providers through the worker"
if only embedding; then
  # Liger's torch_compile rows: B 32, T 512, D 768, V swept, fp32
  ce_wl=$(q "SELECT DISTINCT r.workload_digest FROM kbench_runs r JOIN kbench_workloads w ON w.digest = r.workload_digest
             JOIN kbench_implementations i ON i.digest = r.implementation_digest
             WHERE i.name = 'liger-bench-embedding-torch-compile' AND w.name = 'liger-embedding-batch32-hidden768-seq512-vocab1024-fp32'")
  ok "$([ -n "$ce_wl" ] && [ "$(echo "$ce_wl" | wc -l)" = 1 ] && echo yes)" yes "the Liger import has torch_compile embedding rows at 32x512x768, vocab 1024, fp32"
  # the worker's interpreter: the stand-in's wrapper, its log in this suite's directory
  printf '#!/bin/sh\nKBENCH_COMPILE_STANDIN_LOG=%s/worker-compile.log exec %s/test/operations/python_compile_standin.sh "$@"\n' \
         "$TMPDIR_OPS" "$(pwd)" > "$TMPDIR_OPS/python-compile"
  chmod +x "$TMPDIR_OPS/python-compile"
  # the server runs as postgres: it reads the wrapper and writes the log
  chmod 755 "$TMPDIR_OPS"; : > "$TMPDIR_OPS/worker-compile.log"; chmod 666 "$TMPDIR_OPS/worker-compile.log"
  q "ALTER SYSTEM SET kernelindex.python = '$TMPDIR_OPS/python-compile'" >/dev/null; q "SELECT pg_reload_conf()" >/dev/null; sleep 1
  for m in forward backward full; do
    run "'embedding', '$m', '{\"batch\": 32, \"seq\": 512, \"hidden\": 768, \"vocab\": 1024, \"dtype\": \"fp32\"}', implementation => 'torch_compile', protocol => '$TINY'"
    ok "$RES" "passed passed" "torch_compile embedding $m at Liger's 32x512x768x1024 fp32 runs through the CPU worker and passes"
    ok "$(q "SELECT r.workload_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" \
       "$ce_wl" "its run lands in the WorkloadCase digest of Liger's torch_compile row of that shape ($m)"
    ok "$(q "SELECT i.name FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_implementations i ON i.digest = r.implementation_digest WHERE j.id = $JOB")" \
       "kbench-python-torch_compile-embedding" "... and its implementation is torch_compile's, kbench-python-torch_compile-embedding ($m)"
  done
  ok "$(sort -u "$TMPDIR_OPS/worker-compile.log" 2>/dev/null)" "Embedding" "the worker's runs called torch.compile on the Embedding baseline"
  q "ALTER SYSTEM RESET kernelindex.python" >/dev/null; q "SELECT pg_reload_conf()" >/dev/null; sleep 1
  # one provider, one implementation: the imported Liger provider and the runs measured here, not
  # torch's (a torch embedding run measured here first: 'torch' is a prefix of 'torch_compile')
  run "'embedding', 'forward', '{\"batch\": 2, \"seq\": 8, \"hidden\": 16, \"vocab\": 64}', implementation => 'torch', protocol => '$TINY'"
  ok "$RES" "passed passed" "torch embedding runs through the CPU worker"
  ok "$(q "SELECT string_agg(DISTINCT i.name, ' ' ORDER BY i.name) FROM kbench_implementations i
           WHERE i.digest = ANY (_kernelindex.resolve_implementation(_kernelindex.resolve_operation('embedding'), 'torch_compile'))")" \
     "kbench-python-torch_compile-embedding liger-bench-embedding-torch-compile" \
     "'torch_compile' resolves to Liger's imported torch_compile embedding and the runs measured here, as 'huggingface' does"
  ok "$(q "SELECT string_agg(DISTINCT i.name, ' ' ORDER BY i.name) FROM kbench_implementations i
           WHERE i.digest = ANY (_kernelindex.resolve_implementation(_kernelindex.resolve_operation('embedding'), 'torch'))")" \
     "kbench-python-torch-embedding" "'torch' resolves to torch's embedding run here ..."
  ok "$(q "SELECT count(*) FROM kbench_implementations i WHERE i.name LIKE '%torch%compile%'
           AND i.digest = ANY (_kernelindex.resolve_implementation(_kernelindex.resolve_operation('embedding'), 'torch'))")" \
     0 "... and not to torch_compile's (not a name prefix)"
  imp=$(q "SELECT r.digest FROM kbench_runs r JOIN kbench_implementations i ON i.digest = r.implementation_digest
           WHERE i.name = 'liger-bench-embedding-torch-compile' LIMIT 1")
  ok "$(q "SELECT implementation FROM _kernelindex.reproduction_request('$imp')")" torch_compile \
     "a Liger torch_compile embedding run is reproduced by kbench's torch_compile"
  # (kbench_device_operations has the operations with a kbench implementation: the C ones)
  ok "$(q "SELECT 'megatron-fused' = ANY (other_implementations) AND 'megatron-unfused' = ANY (other_implementations) FROM kbench_device_operations WHERE device = 'cpu' AND operation = 'megatron_cross_entropy'")" t \
     "kbench_device_operations lists megatron-fused and megatron-unfused for megatron_cross_entropy"
  ok "$(q "SELECT 'megatron-fused' = ANY (other_implementations) FROM kbench_device_operations WHERE device = 'cpu' AND operation = 'layer_norm'")" f \
     "... and not for layer_norm"
  has "$(psql -X -At -q -c "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 4, \"hidden\": 8}', implementation => 'torch_compile')" 2>&1)" \
      "implementation 'torch_compile' is Liger's provider for embedding only; Liger benchmarks no layer_norm with it" \
      "kbench_run of torch_compile for layer_norm is refused at queue time, naming the operations it serves"
  has "$(psql -X -At -q -c "SELECT kbench_register_implementation('torch_compile', 'embedding', 'python:/tmp/x.py:f')" 2>&1)" \
      '"torch_compile" is the name of a built-in implementation' "a registered implementation may not take a provider's name"
fi
if only tiled_swiglu; then
  # the import gives deepspeed_tiled huggingface's ImplementationRevision (their specs agree)
  ds=$(q "SELECT r.digest FROM kbench_runs r WHERE r.manifest->'spec'->'sourceNative'->>'externalId' LIKE 'tiled_swiglu/%/deepspeed_tiled/%' LIMIT 1")
  ok "$(q "SELECT implementation FROM _kernelindex.reproduction_request('$ds')")" deepspeed_tiled \
     "a Liger deepspeed_tiled tiled_swiglu run is reproduced by kbench's deepspeed_tiled, not huggingface"
  if bf16_gemm_checked $PY tiled_swiglu bf16 "deepspeed_tiled tiled_swiglu full runs through the CPU worker and passes"; then
    run "'tiled_swiglu', 'full', '{\"batch\": 2, \"seq\": 8, \"hidden\": 64, \"intermediate\": 128, \"dtype\": \"bf16\"}', implementation => 'deepspeed_tiled', protocol => '$TINY'"
    ok "$RES" "passed passed" "deepspeed_tiled tiled_swiglu full runs through the CPU worker and passes"
  fi
fi
if only megatron_rms_norm; then
  run "'megatron_rms_norm', 'full', '{\"seq\": 4, \"batch\": 2, \"hidden\": 16}', implementation => 'MEGATRON', protocol => '$TINY'"
  ok "$(echo "$RES" | cut -d' ' -f1)" failed "megatron megatron_rms_norm through the worker (the name in any case) fails without megatron-core"
  has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "megatron needs megatron.core (pip package megatron-core), which is not importable here" \
      "... its error says which library is missing"
fi
if only megatron_cross_entropy; then
  # the import gives megatron-unfused megatron-fused's ImplementationRevision (their specs agree):
  # the run's externalId says which provider measured it
  mu=$(q "SELECT r.digest FROM kbench_runs r WHERE r.manifest->'spec'->'sourceNative'->>'externalId' LIKE 'megatron_cross_entropy/%/megatron-unfused/%' LIMIT 1")
  ok "$(q "SELECT implementation FROM _kernelindex.reproduction_request('$mu')")" megatron-unfused \
     "a Liger megatron-unfused run is reproduced by kbench's megatron-unfused, not megatron-fused (whose ImplementationRevision the import gave it)"
fi
