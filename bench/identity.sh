#!/usr/bin/env bash
# identity.sh: canonicalize + digest every manifest of the catalog export
# inside PostgreSQL (kbench_digest: strict parse, validation, normalization,
# RFC 8785, SHA-256) and, in the same run, the same work in Node.js with the
# npm package `canonicalize` (what kernelindex.dev uses) and node:crypto
# (JSON.parse + canonicalize of the identity body + sha256; no validation).
# Both sides start from the manifests' JSON text in memory, one thread each.
# Prints manifests/s for both and the ratio.  Not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
KI_SKIP_KERNELS=1 bash bin/setup.sh >/dev/null   # the kernels are not part of this benchmark
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
WORK=$(mktemp -d /tmp/kernelindex-bench.XXXXXX)
chmod 755 "$WORK"
trap 'ki_cluster_stop; rm -rf "$WORK"' EXIT

# the npm package, once, in a git-ignored folder
if [ ! -d bench/node/node_modules/canonicalize ]; then
  mkdir -p bench/node
  (cd bench/node && npm install --silent --no-audit --no-fund canonicalize@2 >/dev/null)
fi

# one manifest per line: composite run documents split into their three parts
zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | node -e '
  const rl = require("readline").createInterface({ input: process.stdin });
  rl.on("line", (l) => {
    const d = JSON.parse(l); const m = d.row && d.row.manifest;
    if (!m) return;
    if (d.table === "projects") return;
    if (d.table === "benchmark_runs") { for (const k of ["run", "protocol", "environment"]) console.log(JSON.stringify(m[k])); }
    else console.log(JSON.stringify(m));
  });' > "$WORK/manifests.jsonl"
n=$(wc -l < "$WORK/manifests.jsonl")

node_pass() {
  node -e '
  const canonicalize = require(process.argv[1] + "/bench/node/node_modules/canonicalize");
  const { createHash } = require("node:crypto");
  const lines = require("fs").readFileSync(process.argv[2], "utf8").trim().split("\n");
  function digest(text) {
    const m = JSON.parse(text);
    const body = canonicalize({ apiVersion: m.apiVersion, kind: m.kind, spec: m.spec });
    return "sha256:" + createHash("sha256").update(body).digest("hex");
  }
  let sink = 0;
  for (const l of lines) sink += digest(l).length;                // warm-up pass (JIT)
  const t0 = process.hrtime.bigint();
  for (const l of lines) sink += digest(l).length;
  console.log(Number(process.hrtime.bigint() - t0) / 1e6);' "$ROOT" "$WORK/manifests.jsonl"
}
exec_ms() {
  psql -X -At -c "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) $1" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0]["Execution Time"]))'
}
pg_pass() { exec_ms "SELECT count(kbench_digest(m)) FROM bench_manifests"; }
# PostgreSQL's own floor for the same bytes: parse into jsonb (its keys sorted
# by length, then bytes: not RFC 8785), write it out, SHA-256; no validation
floor_pass() { exec_ms "SELECT count(sha256(convert_to(m::jsonb::text, 'UTF8'))) FROM bench_manifests"; }
ki_cluster_start >/dev/null
psql -q -X -c "CREATE EXTENSION kernelindex" -c "CREATE TABLE bench_manifests (m text)" \
     -c "\copy bench_manifests FROM '$WORK/manifests.jsonl' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')" \
     -c "VACUUM (FREEZE, ANALYZE) bench_manifests" \
     -c "SELECT count(kbench_digest(m)) FROM bench_manifests" >/dev/null   # warm-up: caches, schema compile
# (frozen: every page all-visible, so neither side pays a visibility check per row)
# rounds alternate between the two sides, so both see the same machine; best of 7 each
pg_best=999999; node_best=999999; floor_best=999999
for r in 1 2 3 4 5 6 7; do
  pg_best=$(node -e "console.log(Math.min($pg_best, $(pg_pass)))")
  node_best=$(node -e "console.log(Math.min($node_best, $(node_pass)))")
  floor_best=$(node -e "console.log(Math.min($floor_best, $(floor_pass)))")
done
pg_rate=$(node -e "console.log(($n / ($pg_best / 1000)).toFixed(0))")
node_rate=$(node -e "console.log(($n / ($node_best / 1000)).toFixed(0))")
floor_rate=$(node -e "console.log(($n / ($floor_best / 1000)).toFixed(0))")
ratio=$(node -e "console.log(($pg_rate / $node_rate).toFixed(2))")
floor_ratio=$(node -e "console.log(($pg_rate / $floor_rate).toFixed(2))")

printf '%-52s %12s\n' "canonicalize + sha256 of $n manifests, best of 7" "manifests/s"
printf '%-52s %12s\n' "PostgreSQL kbench_digest(text) (+validation)" "$pg_rate"
printf '%-52s %12s\n' "Node.js $(node --version) canonicalize + node:crypto" "$node_rate"
printf '%-52s %12s\n' "PostgreSQL sha256(m::jsonb::text) (no validation)" "$floor_rate"
printf '%-52s %12s\n' "ratio kbench_digest / Node.js (goal 5x)" "${ratio}x"
printf '%-52s %12s\n' "ratio kbench_digest / json->jsonb->sha256 (goal 2.5x)" "${floor_ratio}x"
