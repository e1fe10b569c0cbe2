#!/usr/bin/env bash
# costs.sh: a cost formula is written once.  The bytes and FLOPs of kbench's
# operations are formulas in the kernels registry (kernels/ops/<op>.c):
# kbench evaluates them for its runs (and prints them with describe --json),
# and the extension loads the same texts into kbench_operation_costs
# (_kernelindex.registry_costs).  Checks: SQL's seeded rows are the registry's,
# for every operation and pass; SQL's bytes and FLOPs (kbench_cost_eval, and
# kbench_workload_cost on the ingested workload) equal kbench's, bit for
# bit, for every operation, its passes and a few workloads; a bad formula is
# refused by the C evaluator with its reason.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
KB=$PWD/kernels/kbench
make -s -C kernels kbench NVCC= >/dev/null || { echo "not ok - kernels/kbench builds"; exit 1; }
source bin/pgcluster.sh
trap 'ki_cluster_stop' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'costs'" "kernelindex.devices = 'cpu'" ||
  { echo "not ok - the cluster starts"; exit 1; }
source test/lib/tap.sh
q() { psql -X -At -q -v ON_ERROR_STOP=1 -d costs -c "$1"; }
createdb costs && q "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }

# ---- the table's rows are the registry's
ok "$(q "SELECT count(*) || ' ' || count(*) FILTER (WHERE k.bytes = c.bytes AND k.flops = c.flops AND k.compute = c.compute
              AND k.note IS NOT DISTINCT FROM c.note AND k.seeded)
         FROM jsonb_to_recordset(_kernelindex.registry_costs()) AS c(operation text, mode text, bytes text, flops text, compute text, note text)
         LEFT JOIN kbench_operation_costs k USING (operation, mode)")" "12 12" \
  "kbench_operation_costs holds the registry's 12 formulas (4 operations x 3 passes) as seeded rows, text for text"
ok "$(q "SELECT string_agg(DISTINCT operation, ',' ORDER BY operation) FROM jsonb_to_recordset(_kernelindex.registry_costs()) AS c(operation text)")" \
  "distill_jsd_loss,jsd,layer_norm,megatron_cross_entropy" "_kernelindex.registry_costs covers every operation of the registry"

# ---- SQL's numbers are kbench's, for every operation, its passes and a few workloads
n=0; bad=""
check_case() { # op mode dtype_bytes key=value...
  local op=$1 mode=$2 db=$3; shift 3
  local out axes kbytes kflops sqlok wok op_json wl_json wl_digest
  out=$($KB describe "$op" "$mode" "$@" --json 2>&1) || { bad="$bad $op/$mode($*): describe failed"; return; }
  { read -r axes; read -r kbytes; read -r kflops; read -r op_json; read -r wl_json; } < <(printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(json.dumps(d["workload"]["spec"]["axes"])); print(repr(float(d["bytes"]))); print(repr(float(d["flops"])))
print(json.dumps(d["operation"])); print(json.dumps(d["workload"]))')
  sqlok=$(q "SELECT kbench_cost_eval(bytes, '$axes', $db) = '$kbytes'::float8 AND kbench_cost_eval(flops, '$axes', $db) = '$kflops'::float8
              AND '$kbytes'::float8 > 0 FROM kbench_operation_costs WHERE operation = '$op' AND mode = '$mode'")
  # through the catalog: the workload ingested, kbench_workload_cost by its digest
  q "SELECT kbench_ingest(\$j\$$op_json\$j\$::jsonb)" >/dev/null
  wl_digest=$(q "SELECT digest FROM kbench_ingest(\$j\$$wl_json\$j\$::jsonb)")
  wok=$(q "SELECT bytes = '$kbytes'::float8 AND flops = '$kflops'::float8 FROM kbench_workload_cost('$wl_digest', '$mode')")
  n=$((n + 1))
  [ "$sqlok $wok" = "t t" ] || bad="$bad $op/$mode($*): kbench $kbytes $kflops, SQL eval=$sqlok workload_cost=$wok;"
}
for m in forward backward full; do
  check_case layer_norm $m 4 rows=4096 hidden=4096
  check_case layer_norm $m 2 rows=4097 hidden=1023 dtype=bf16
  check_case megatron_cross_entropy $m 2 seq=2048 batch=4 vocab=131072 dtype=bf16
  check_case megatron_cross_entropy $m 4 seq=3 batch=5 vocab=50257 dtype=fp32
done
for m in forward backward full; do
  check_case jsd $m 4 tokens=8192 vocab=128256
  check_case jsd $m 2 tokens=7 vocab=33 dtype=bf16
done
for m in forward full; do
  check_case distill_jsd_loss $m 2 tokens=8192 hidden=4096 vocab=128256
  check_case distill_jsd_loss $m 2 tokens=3 hidden=10 vocab=17
done
ok "$n${bad:+ differ:$bad}" "22" \
  "bytes and FLOPs: SQL (kbench_cost_eval and kbench_workload_cost on the ingested workload) equal kbench describe's, bit for bit, in 22 cases (every operation and pass, two workloads each)"
# jsd backward by hand (issue 26 item 3): read the log-probs, grad_input and grad_loss, write grad_logits
ok "$($KB describe jsd backward tokens=2 vocab=3 --json | grep -c '"bytes":76,"flops":30')" "1" \
  "kbench describe: jsd backward 2x3 fp32 moves 3 x 4 x 2 x 3 + 4 = 76 bytes, 5 x 2 x 3 = 30 FLOPs (by hand)"

# ---- by hand: 4 x (2x2x2 + 2x2) + 8x2 = 64 bytes, 8x2x2 = 32 FLOPs
ok "$($KB describe layer_norm forward rows=2 hidden=2 --json | grep -c '"bytes":64,"flops":32')" "1" \
  "kbench describe prints the floors of one call (layer_norm forward 2x2 fp32: 64 bytes, 32 FLOPs, by hand)"
