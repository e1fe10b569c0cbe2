#!/usr/bin/env bash
# import.sh: the catalog export and the Liger CSV imported into an empty
# catalog, the export written back out; manifests/s for each, and the
# catalog import's time as a multiple of a plain COPY of the same lines into
# a text table in the same cluster.  Not a test.
# Goals (issue 11): catalog import <= 4x the COPY; Liger CSV <= 0.5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
KI_SKIP_KERNELS=1 bash bin/setup.sh >/dev/null
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
trap 'ki_cluster_stop; rm -f /tmp/kernelindex-export.$$' EXIT
ki_cluster_start >/dev/null
psql -X -q -c "CREATE EXTENSION kernelindex"
ms() { psql -X -At -c "SELECT round(extract(epoch FROM clock_timestamp() - '$1'::timestamptz) * 1000)"; }
row() { printf '%-52s %9s %9s %12s\n' "$@"; }
row "step" "items" "ms" "items/s"

t0=$(psql -X -At -c "SELECT clock_timestamp()")
psql -X -q <<'SQL' >/dev/null
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT * FROM kbench_import_liger(:'csv');
SQL
t=$(ms "$t0"); n=$(psql -X -At -c "SELECT count(*) FROM kbench_runs")
row "Liger CSV: 2,448 lines -> runs (6 manifests each)" "$n" "$t" "$(echo "$n * 6 * 1000 / $t" | bc) manifests"

zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst > /tmp/kernelindex-lines.$$
psql -X -q -c "CREATE TABLE plain_lines (line text)"
t0=$(psql -X -At -c "SELECT clock_timestamp()")
psql -X -q -c "\copy plain_lines (line) FROM '/tmp/kernelindex-lines.$$' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')"
tcopy=$(ms "$t0")
row "plain COPY of the same 40,795 lines into a text table" 40795 "$tcopy" "$(echo "40795 * 1000 / $tcopy" | bc) lines"
rm -f /tmp/kernelindex-lines.$$

t0=$(psql -X -At -c "SELECT clock_timestamp()")
zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst |
  psql -X -q -c "\copy kbench_import_staging (line) FROM STDIN WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')"
psql -X -q -o /dev/null -c "SELECT * FROM kbench_import_catalog_staged('bench')"
t=$(ms "$t0")
row "catalog export: 40,795 lines (34,843 manifests)" 40795 "$t" "$(echo "34843 * 1000 / $t" | bc) manifests"
echo "catalog import / plain COPY: $(echo "scale=2; $t / $tcopy" | bc)x (goal <= 4x)"

t0=$(psql -X -At -c "SELECT clock_timestamp()")
psql -X -At -c "SELECT * FROM kbench_export_catalog()" > /tmp/kernelindex-export.$$
t=$(ms "$t0"); n=$(wc -l < /tmp/kernelindex-export.$$)
row "export of the whole catalog to JSON lines" "$n" "$t" "$(echo "$n * 1000 / $t" | bc) lines"
