#!/usr/bin/env bash
# docs.sh: the documentation is a test.  Every fenced ```sql example of
# README.md and docs/*.md runs in psql, in reading order, against the demo
# database (bin/demo_data.sh: the seeds, the Liger-Kernel history and a few
# CPU jobs) on a server whose worker runs on the CPU; an example followed by a
# ```text block must print that output (placeholders, '...' lines: see
# docs/TESTING.md), any other must run without an error.  Files the examples
# read are under /srv/kbench/, which names this suite's scratch directory,
# where psql runs (data/ is the repository's).
# TAP lines, one per example.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
PY=/usr/bin/python3
source bin/pgcluster.sh
SCRATCH=$(mktemp -d /tmp/kbench-docs.XXXXXX)
trap 'ki_cluster_stop; rm -rf "$SCRATCH"' EXIT
chmod 755 "$SCRATCH"
# what the examples read: the Liger CSV, the catalog export, a run document, registered code
cp data/liger/all_benchmark_data.csv data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst "$SCRATCH/"
cp test/data/seeds/004_5d22a04506fce857.json "$SCRATCH/run.json"
cp test/byo/impls.py "$SCRATCH/ln_torch.py"
cp test/operations/user/affine.json test/operations/user/affine_ref.py test/operations/user/affine_impl.py "$SCRATCH/"
ln -s "$(pwd)/data" "$SCRATCH/data"
kernels/kbench run layer_norm forward rows=64 hidden=256 dtype=fp32 --device cpu --warmup-ms 0 --rep-ms 1 \
  --flush-bytes 0 --json >"$SCRATCH/kbench-result.json" || { echo "not ok - kbench run --json for the ingest example"; exit 1; }
cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Ikernels -o "$SCRATCH/libln.so" test/byo/ln_lib.c -lm ||
  { echo "not ok - the example library builds"; exit 1; }
chmod -R a+rX "$SCRATCH"

ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kernelindex'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.python = '$PY'" \
                 "kernelindex.implementation_directory = '$SCRATCH'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kernelindex && psql -X -q -d kernelindex -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kernelindex
# docs/SQL.md's settings table against the server's own (every setting, its default and bounds)
psql -X -At -F $'\t' -c "SELECT name, boot_val, min_val, max_val, coalesce(unit, ''), vartype FROM pg_settings
                          WHERE name LIKE 'kernelindex.%' ORDER BY name" | $PY test/lib/settings_doc.py docs/SQL.md
psql -X -q -c "CREATE ROLE alice LOGIN" || { echo "not ok - the examples' role alice"; exit 1; }
if bash bin/demo_data.sh -q --jobs cpu; then echo "ok - the demo database loads (bin/demo_data.sh)"
else echo "not ok - the demo database loads (bin/demo_data.sh)"; exit 1; fi

# the runner itself: it fails an empty result, a wrong output and an error, and passes a match
self=$($PY test/lib/doc_examples.py --scratch "$SCRATCH" test/lib/doc_examples_selftest.md | grep -E '^(not )?ok' | cut -d' ' -f1-2 | tr '\n' ' ')
if [ "$self" = "not ok ok - not ok not ok " ]; then echo "ok - the example runner fails an empty result, a wrong output and an error"
else echo "not ok - the example runner fails an empty result, a wrong output and an error (got: $self)"; fi

docs=(README.md docs/SQL.md)
for f in docs/*.md; do [ "$f" = docs/SQL.md ] || docs+=("$f"); done
out=$($PY test/lib/doc_examples.py --scratch "$SCRATCH" "${docs[@]}")
echo "$out"
# every example printed its line: the runner did not stop part way
n=$($PY test/lib/doc_examples.py --list "${docs[@]}" | wc -l)
m=$(printf '%s\n' "$out" | grep -cE '^(not )?ok - ')
if [ "$n" -eq "$m" ] && [ "$n" -gt 20 ]; then echo "ok - all $n documented examples ran"
else echo "not ok - all documented examples ran ($m of $n)"; fi
