#!/usr/bin/env bash
# make_report_pictures.sh: the pictures of docs/REPORTS.md, from the Liger-Kernel
# history (data/liger/all_benchmark_data.csv) and nothing else.  Builds and
# installs kernelindex (bin/setup.sh), starts a throwaway PostgreSQL, imports
# the CSV, and writes each chart as SVG (the bytes the SQL returns) and PNG
# (rsvg-convert), plus a PNG of the report's first screen in headless Chromium,
# into docs/pictures/.  Run it again after a change to the charts: the same
# data gives the same SVG bytes, so git shows only what the change did.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${1:-$ROOT/docs/pictures}
bash bin/setup.sh >/dev/null
bash bin/setup_charts.sh
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
TMP=$(mktemp -d /tmp/kernelindex-pictures.XXXXXX)
trap 'ki_cluster_stop; rm -rf "$TMP"' EXIT
ki_cluster_start
createdb pictures
export PGDATABASE=pictures
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION kernelindex"
cp data/liger/all_benchmark_data.csv "$TMP/liger.csv" && chmod a+rx "$TMP" && chmod a+r "$TMP/liger.csv"
psql -X -q -v ON_ERROR_STOP=1 -c "SELECT inserted FROM kbench_import_liger(pg_read_file('$TMP/liger.csv'))" >/dev/null
mkdir -p "$OUT"

picture() {   # picture NAME SQL
  psql -X -At -q -v ON_ERROR_STOP=1 -c "$2" >"$OUT/$1.svg"
  xmllint --noout "$OUT/$1.svg"
  rsvg-convert "$OUT/$1.svg" -o "$OUT/$1.png"
  echo "$OUT/$1.svg and .png: $2"
}
picture sweep-layer-norm-h100 "SELECT kbench_chart_sweep('layer_norm', 'backward', 'hidden', 'NVIDIA H100 80GB HBM3')"
picture sweep-cross-entropy-bandwidth-a100 "SELECT kbench_chart_sweep('cross_entropy', 'forward', 'vocab', 'A100', metric => 'bandwidth')"
picture sweep-embedding-a100 "SELECT kbench_chart_sweep('embedding', 'forward', 'vocab', 'A100')"
picture series-fused-add-rms-norm "SELECT kbench_chart_series('liger-bench-fused-add-rms-norm-liger-fused-add-rms-norm', 'liger-fused-add-rms-norm-hidden8192-rows2048-fp32', environment => 'H100')"
picture roofline-h100 "SELECT kbench_chart_roofline('NVIDIA H100 80GB HBM3')"
picture records-layer-norm "SELECT kbench_chart_records('liger-layer-norm-hidden1024-rows4096-fp32')"

psql -X -At -q -v ON_ERROR_STOP=1 -c "SELECT kbench_report(title => 'kernelindex report: the Liger-Kernel history')" >"$TMP/report.html"
mkdir -p "$TMP/chromium"
timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$TMP/chromium" --hide-scrollbars \
  --window-size=1000,1300 --screenshot="$OUT/report-top.png" "file://$TMP/report.html" 2>/dev/null
echo "$OUT/report-top.png: the first screen of kbench_report() in headless Chromium ($(wc -c <"$TMP/report.html") bytes of HTML)"
