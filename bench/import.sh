#!/usr/bin/env bash
# import.sh: the catalog export and the Liger CSV imported into an empty
# catalog, the export written back out; manifests/s for each, and the
# catalog import's time as a multiple of a plain COPY of the same lines into
# a text table in the same cluster.  Not a test.
# Goals (issue 11): catalog import <= 4x the COPY; Liger CSV <= 0.5 s.
#
# Each step runs in one session and is timed twice: by the clock (ms) and by
# the CPU time its server process used (cpu ms, from /proc): on a machine
# that others load, the clock counts their work too and the CPU time much
# less of it, so the ratio of CPU times is the steadier one.  The load
# average is printed before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
KI_SKIP_KERNELS=1 bash bin/setup.sh >/dev/null
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
tmp=/tmp/kernelindex-import.$$
trap 'ki_cluster_stop; rm -f $tmp.*' EXIT
ki_cluster_start >/dev/null
psql -X -q -c "CREATE EXTENSION kernelindex"
hz=$(getconf CLK_TCK)

# session [psql options] <<SQL: run SQL in one session; WALL_MS and CPU_MS are what it took
session() {
  local sql out
  sql=$(cat)
  out=$(psql -X -q -At -v ON_ERROR_STOP=1 "$@" <<EOF
\\o /dev/null
SELECT pg_backend_pid() AS pid \\gset
\\setenv BPID :pid
\\! awk '{print \$14 + \$15}' /proc/\$BPID/stat > $tmp.cpu0
SELECT clock_timestamp() AS t0 \\gset
$sql
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000) AS wall \\gset
\\setenv WALL :wall
\\! echo "\$WALL \$(( (\$(awk '{print \$14 + \$15}' /proc/\$BPID/stat) - \$(cat $tmp.cpu0)) * 1000 / $hz ))"
EOF
)
  read -r WALL_MS CPU_MS <<<"$(tail -1 <<<"$out")"
}
row() { printf '%-58s %7s %7s %7s %12s\n' "$@"; }
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
row "step" "items" "ms" "cpu ms" "items/s"

session <<'SQL'
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT * FROM kbench_import_liger(:'csv');
SQL
n=$(psql -X -At -c "SELECT count(*) FROM kbench_runs")
row "Liger CSV: 2,448 lines -> runs (6 manifests each)" "$n" "$WALL_MS" "$CPU_MS" "$(echo "$n * 6 * 1000 / $WALL_MS" | bc) manifests"

zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst > $tmp.lines
chmod a+r $tmp.lines
psql -X -q -c "CREATE TABLE plain_lines (line text)"
session <<SQL
\\copy plain_lines (line) FROM '$tmp.lines' WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')
SQL
copy_ms=$WALL_MS copy_cpu=$CPU_MS
row "plain COPY of the same 40,795 lines into a text table" 40795 "$copy_ms" "$copy_cpu" "$(echo "40795 * 1000 / $copy_ms" | bc) lines"

session <<SQL
\\copy kbench_import_staging (line) FROM '$tmp.lines' WITH (FORMAT csv, QUOTE E'\\x01', DELIMITER E'\\x02')
SELECT * FROM kbench_import_catalog_staged('bench');
SQL
row "catalog export: 40,795 lines (34,843 manifests), staged" 40795 "$WALL_MS" "$CPU_MS" "$(echo "34843 * 1000 / $WALL_MS" | bc) manifests"
echo "catalog import (\\copy into the staging table, then imported) / plain COPY:" \
     "$(echo "scale=2; $WALL_MS / $copy_ms" | bc)x by the clock, $(echo "scale=2; $CPU_MS / $copy_cpu" | bc)x by CPU time (goal <= 4x)"

# the same export read by the server from its file (.zst, libzstd), into an empty catalog
chmod a+r data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst
psql -X -q -c "CREATE DATABASE fromfile"
psql -X -q -d fromfile -c "CREATE EXTENSION kernelindex"
session -d fromfile <<SQL
SELECT * FROM kbench_import_catalog('$(pwd)/data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst');
SQL
row "the same from the server's .zst file (kbench_import_catalog)" 40795 "$WALL_MS" "$CPU_MS" "$(echo "34843 * 1000 / $WALL_MS" | bc) manifests"
echo "catalog import from the file / plain COPY:" \
     "$(echo "scale=2; $WALL_MS / $copy_ms" | bc)x by the clock, $(echo "scale=2; $CPU_MS / $copy_cpu" | bc)x by CPU time"

t0=$(psql -X -At -c "SELECT clock_timestamp()")
psql -X -At -c "SELECT * FROM kbench_export_catalog()" > $tmp.export
t=$(psql -X -At -c "SELECT round(extract(epoch FROM clock_timestamp() - '$t0'::timestamptz) * 1000)")
n=$(wc -l < $tmp.export)
row "export of the whole catalog to JSON lines" "$n" "$t" "" "$(echo "$n * 1000 / $t" | bc) lines"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
