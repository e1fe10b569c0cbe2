#!/usr/bin/env bash
# charts.sh: the SVG charts and the HTML report (sql/code/6*.sql,
# docs/REPORTS.md) on the Liger history plus runs made here by the worker.
#   - every chart is well-formed XML (xmllint), renders to PNG with
#     rsvg-convert, and the PNG is not blank; its labels and legend are there;
#   - the same query gives the same bytes;
#   - a chart over an empty selection says so; bad input raises its SQLSTATE;
#   - text from the catalog is escaped;
#   - the report is self-contained, opens in headless Chromium, and every
#     chart in it renders there; it lists only the jobs the caller may see.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
bash bin/setup_charts.sh >/dev/null || { echo "not ok - xmllint, rsvg-convert and chromium are installed (bin/setup_charts.sh)"; exit 1; }
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
TMP=$(mktemp -d /tmp/kernelindex-charts.XXXXXX)
trap 'ki_cluster_stop; rm -rf "$TMP"' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'charts'" \
                 "kernelindex.devices = 'cpu'" || { echo "not ok - the cluster starts"; exit 1; }
createdb charts && psql -X -q -d charts -c "CREATE EXTENSION kernelindex" >/dev/null || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=charts
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
source test/lib/tap.sh
has() { if grep -qF -- "$2" "$1"; then echo "ok - $3"; else echo "not ok - $3 ('$2' missing from $(basename "$1"))"; fi; }
# hastext: the same in the chart's text (its <text> elements joined: a wrapped sentence whole)
hastext() { if python3 test/charts/svg_labels.py --text "$1" | grep -qF -- "$2"; then echo "ok - $3"; else echo "not ok - $3 ('$2' missing from $(basename "$1")'s text)"; fi; }
CSV="$ROOT/data/liger/all_benchmark_data.csv"
[ -f "$CSV" ] || CSV="$ROOT/../shared/data/liger/all_benchmark_data.csv"
cp "$CSV" "$TMP/liger.csv" && chmod a+r "$TMP/liger.csv" && chmod a+rx "$TMP"
q "SELECT import_id FROM kbench_import_liger(pg_read_file('$TMP/liger.csv'))" >/dev/null
ok "$(q "SELECT inserted - memory_inserted FROM kbench_imports ORDER BY id DESC LIMIT 1")" 1649 "the Liger history imports (1649 runs beside 799 memory observations)"

# Runs of our own, through the worker on the CPU: layer_norm forward at two of
# Liger's workloads, so that the sweep draws ours beside theirs.
TINY='{"warmup_ms": 0, "rep_ms": 1, "flush_bytes": 0, "max_samples": 5}'
q "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 4096, 'hidden', h, 'dtype', 'fp32'), protocol => '$TINY')
     FROM unnest(ARRAY[1024, 2048]) h" >/dev/null
for i in $(seq 1 600); do
  [ "$(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" = 0 ] && break
  sleep 0.2
done
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status = 'passed'")" 2 "two layer_norm jobs ran on the CPU worker"
# the device our runs name: this machine's CPU (an AMD EPYC on one CI machine, an Intel Xeon on another)
OUR_CPU=$(q "SELECT DISTINCT concat_ws(' ', e.product, e.form_factor) FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
             JOIN kbench_environments e ON e.digest = r.environment_digest WHERE j.status = 'passed'")
ok "$([ -n "$OUR_CPU" ] && [ "$(wc -l <<<"$OUR_CPU")" = 1 ] && echo one)" one "our two runs name one CPU ($OUR_CPU)"
export OUR_CPU

# chart NAME SQL: write the chart, check it is XML, render it, check the PNG
# is drawn (over 1% of its pixels inked, over 8 colours).
chart() {
  local name=$1 sql=$2
  if ! q "$sql" >"$TMP/$name.svg" 2>"$TMP/$name.err"; then
    echo "not ok - $name: $sql"; sed 's/^/# /' "$TMP/$name.err" | head -5; return 1
  fi
  if xmllint --noout "$TMP/$name.svg" 2>"$TMP/$name.err"; then echo "ok - $name is well-formed XML"
  else echo "not ok - $name is well-formed XML"; sed 's/^/# /' "$TMP/$name.err" | head -5; fi
  if rsvg-convert "$TMP/$name.svg" -o "$TMP/$name.png" 2>"$TMP/$name.err"; then echo "ok - $name renders to PNG (rsvg-convert)"
  else echo "not ok - $name renders to PNG (rsvg-convert)"; sed 's/^/# /' "$TMP/$name.err" | head -5; return 1; fi
  python3 test/charts/png_stats.py "$TMP/$name.png" | awk -v n="$name" \
    '{ if ($4 > 0.01 && $5 > 8) print "ok - " n " is drawn (" $2 "x" $3 ", " $4 * 100 "% inked, " $5 " colours)";
       else print "not ok - " n " is drawn (" $2 "x" $3 ", " $4 * 100 "% inked, " $5 " colours)" }'
}

# 1. The sweep: time against hidden, a line per implementation, ours told apart.
chart sweep "SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden')"
has "$TMP/sweep.svg" '>liger-layer-norm forward: time against hidden — GPU</text>' "sweep: title (of its GPU panel)"
has "$TMP/sweep.svg" '>median time (log scale)</text>' "sweep: y axis, log over a decade"
has "$TMP/sweep.svg" '>hidden (log scale)</text>' "sweep: x axis named after the swept axis"
has "$TMP/sweep.svg" 'font-weight="bold" fill="#333333">NVIDIA H100 80GB HBM3</text>' "sweep: a legend heading per device"
has "$TMP/sweep.svg" '(ours)</text>' "sweep: runs made here are labelled ours in the legend"
ok "$(grep -o 'stroke-width="2.6"' "$TMP/sweep.svg" | wc -l | awk '{print ($1 > 0)}')" 1 "sweep: runs made here are drawn thicker"
ok "$(grep -o '<polygon ' "$TMP/sweep.svg" | wc -l | awk '{print ($1 >= 4)}')" 1 "sweep: a spread band per imported line"
has "$TMP/sweep.svg" "95% interval of the median" "sweep: our runs' band is the 95% interval of the median (raw samples)"
has "$TMP/sweep.svg" '<title>Liger · hidden=4096 · NVIDIA H100 80GB HBM3 fp32 {&quot;rows&quot;: 4096}: median ' "sweep: a title per point for hover"
chart sweep_bw "SELECT kbench_chart_sweep('cross_entropy', 'forward', 'vocab', 'A100', metric => 'bandwidth')"
has "$TMP/sweep_bw.svg" '>achieved bandwidth (GB/s)</text>' "sweep: bandwidth in GB/s from the cost formulas"
chart sweep_flops "SELECT kbench_chart_sweep('layer_norm', 'backward', 'hidden', 'NVIDIA H100 80GB HBM3', metric => 'flops')"
has "$TMP/sweep_flops.svg" '>achieved TFLOP/s' "sweep: FLOP rate in TFLOP/s"

# peak memory: absent from the runs, then present on one of them
chart sweep_mem0 "SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden', 'NVIDIA H100 80GB HBM3', metric => 'peak_memory')"
has "$TMP/sweep_mem0.svg" 'No run of this selection carries a peak_memory measurement.' "sweep: peak memory absent says so (Liger's runs carry none)"
if [ "$(q "SELECT count(*) > 0 FROM kbench_measurements m JOIN kbench_runs r ON r.digest = m.run_digest WHERE r.source = 'kbench' AND m.metric = 'peak_memory'")" = t ]; then
  chart sweep_mem_ours "SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden', metric => 'peak_memory')"
  has "$TMP/sweep_mem_ours.svg" ' MiB peak; ' "sweep: the peak memory our CPU runs measured"
  has "$TMP/sweep_mem_ours.svg" '(ours)</text>' "sweep: the peak memory of our runs labelled ours"
fi
q "INSERT INTO kbench_measurements (run_digest, ordinal, metric, unit, statistic, value)
   SELECT b.run_digest, 1000 + row_number() OVER (ORDER BY b.run_digest), 'peak_memory', 'bytes', 'max', 64.0 * 1048576 * (w.axes->>'hidden')::int / 1024
     FROM kbench_cohort_bests b JOIN kbench_workloads w ON w.digest = b.workload_digest
     JOIN kbench_operations o ON o.digest = w.operation_digest JOIN kbench_protocols p ON p.digest = b.protocol_digest
    WHERE o.name = 'liger-layer-norm' AND p.name LIKE '%forward'" >/dev/null
chart sweep_mem "SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden', metric => 'peak_memory')"
has "$TMP/sweep_mem.svg" '>peak memory (MiB) (log scale)</text>' "sweep: peak memory in MiB when runs carry peak_memory"
has "$TMP/sweep_mem.svg" ': 256 MiB peak;' "sweep: peak memory values from the measurements (4096 hidden: 256 MiB)"

# peak memory from kbench_memory_sweep (issue 15: memory rows imported without
# a latency) when the extension provides it, never from one a role created
MEMSWEEP="SELECT kbench_chart_sweep('layer_norm', 'backward', 'hidden', 'NVIDIA H100 80GB HBM3', metric => 'peak_memory')"
if [ "$(q "SELECT kbench_chart_has('function', 'kbench_memory_sweep(text, text, text, text, text)')")" = f ]; then
  q "DO \$\$ BEGIN CREATE ROLE charts_intruder; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$; GRANT CREATE ON SCHEMA public TO charts_intruder" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -c "SET ROLE charts_intruder" -f test/charts/issue15_mocks.sql >/dev/null
  q "$MEMSWEEP" >"$TMP/sweep_mem_intruder.svg"
  has "$TMP/sweep_mem_intruder.svg" 'No run of this selection carries a peak_memory measurement.' "sweep: a kbench_memory_sweep a role created is not used"
  q "ALTER EXTENSION kernelindex ADD FUNCTION kbench_memory_sweep(text, text, text, text, text)" >/dev/null
  chart sweep_mem2 "$MEMSWEEP"
  has "$TMP/sweep_mem2.svg" ': 256 MiB peak (p20–p80 234–273 MiB); liger-kernel-bench/' "sweep: peak memory and its p20–p80 from kbench_memory_sweep when the extension has it"
  ok "$(grep -o '<polygon ' "$TMP/sweep_mem2.svg" | wc -l)" 2 "sweep: a memory band per line"
  q "ALTER EXTENSION kernelindex DROP FUNCTION kbench_memory_sweep(text, text, text, text, text);
     DROP FUNCTION kbench_memory_sweep(text, text, text, text, text); REVOKE CREATE ON SCHEMA public FROM charts_intruder" >/dev/null
else
  echo "# this version has its own kbench_memory_sweep: the stand-in is not loaded"
  chart sweep_mem2 "$MEMSWEEP"
fi

# 2. The series, its regressions marked.
chart series "SELECT kbench_chart_series('liger-bench-fused-add-rms-norm-liger-fused-add-rms-norm', 'liger-fused-add-rms-norm-hidden8192-rows2048-fp32', 'backward', 'H100')"
has "$TMP/series.svg" '>+149.6% backward</text>' "series: the regression of kbench_regressions marked with its change"
has "$TMP/series.svg" '<title>regression: NVIDIA H100 80GB HBM3 backward: 386 µs against a baseline of 154 µs (+149.6%, percent, 1 point)</title>' "series: the regression's title for hover"
has "$TMP/series.svg" '>#2 0.7.0 ' "series: points labelled with their version"
has "$TMP/series.svg" '>regression</text>' "series: regressions in the legend"

# Change points and alerts (issue 16): drawn when the extension provides
# them, never from objects of those names that a role created.
SERIES="SELECT kbench_chart_series('liger-bench-fused-add-rms-norm-liger-fused-add-rms-norm', 'liger-fused-add-rms-norm-hidden8192-rows2048-fp32', environment => 'H100')"
if [ "$(q "SELECT kbench_chart_has('function', 'kbench_change_points(text, text, text, text, text, double precision, integer, double precision)')
              OR kbench_chart_has('relation', 'kbench_alert_status')")" = f ]; then
  q "DO \$\$ BEGIN CREATE ROLE charts_intruder; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$; GRANT CREATE ON SCHEMA public TO charts_intruder" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -c "SET ROLE charts_intruder" -f test/charts/issue16_mocks.sql >/dev/null
  q "$SERIES" >"$TMP/series_intruder.svg"
  ok "$(grep -c '<title>\(alert\|change point\):' "$TMP/series_intruder.svg")" 0 "series: a kbench_change_points or kbench_alert_status a role created is not used"
  q "ALTER EXTENSION kernelindex ADD FUNCTION kbench_change_points(text, text, text, text, text, float8, int, float8);
     ALTER EXTENSION kernelindex ADD VIEW kbench_alert_status" >/dev/null
  chart series_marks "$SERIES"
  has "$TMP/series_marks.svg" '<title>change point: NVIDIA H100 80GB HBM3 liger-bench-do-bench-full: a step from 291 µs to 559 µs (+92.5%)</title>' "series: change points marked when the extension has kbench_change_points"
  has "$TMP/series_marks.svg" '<title>alert: alert 7 (open, percent): 177 µs, +87.1%</title>' "series: alerts marked when the extension has kbench_alert_status"
  has "$TMP/series_marks.svg" '>change point</text>' "series: change points in the legend"
  q "SELECT kbench_report('fused_add_rms_norm')" >"$TMP/report-alerts.html"
  has "$TMP/report-alerts.html" '<td class="n">7</td><td>open</td><td>Liger fused</td><td>liger-fused-add-rms-norm-hidden8192-rows2048-fp32</td><td>forward</td>' "the report lists the open alerts"
  q "ALTER EXTENSION kernelindex DROP FUNCTION kbench_change_points(text, text, text, text, text, float8, int, float8);
     ALTER EXTENSION kernelindex DROP VIEW kbench_alert_status;
     DROP FUNCTION kbench_change_points(text, text, text, text, text, float8, int, float8); DROP VIEW kbench_alert_status;
     REVOKE CREATE ON SCHEMA public FROM charts_intruder" >/dev/null
else
  echo "# this version has its own kbench_change_points / kbench_alert_status: the stand-ins are not loaded"
  chart series_marks "$SERIES"
fi

# 3. The roofline.
chart roofline "SELECT kbench_chart_roofline('NVIDIA H100 80GB HBM3')"
has "$TMP/roofline.svg" '>roof fp32: 3.35T B/s × intensity, 67T FLOP/s</text>' "roofline: the fp32 roof in the legend"
has "$TMP/roofline.svg" '>roof bf16 matrix: ' "roofline: the matrix roof of the tensor-bound runs"
has "$TMP/roofline.svg" 'the roofline floor (' "roofline: each point's title gives its multiple of the floor"
has "$TMP/roofline.svg" '>arithmetic intensity (FLOP/byte) (log scale)</text>' "roofline: log axes with units"
# the roofs lie on the roofline model, min(bandwidth x intensity, peak), read back through the
# chart's own ticks: on every run of the device (the ridge inside the range) and on layer_norm's
# alone (intensity about 1: the ridge, 20 FLOP/B, beyond the range, so the roof is one straight line)
ok "$(python3 test/charts/roof_points.py "$TMP/roofline.svg")" "roofs 2, points 6, worst error under 2%" \
   "roofline: the fp32 and bf16 matrix roofs lie on min(bandwidth x intensity, peak)"
chart roofline_ln "SELECT kbench_chart_roofline('NVIDIA H100 80GB HBM3', 'layer_norm')"
ok "$(python3 test/charts/roof_points.py "$TMP/roofline_ln.svg")" "roofs 1, points 3, worst error under 2%" \
   "roofline of layer_norm alone: its roof, left of the ridge, is the bandwidth line to the range's end"

# 4. The record timeline.
chart records "SELECT kbench_chart_records('liger-layer-norm-hidden1024-rows4096-fp32', 'forward')"
has "$TMP/records.svg" '>Records of liger-layer-norm-hidden1024-rows4096-fp32 — GPU</text>' "records: title (of its GPU panel)"
has "$TMP/records.svg" ' first: ' "records: the first leader in a point's title"

# Empty selections say so.
chart empty_sweep "SELECT kbench_chart_sweep('layer_norm', 'backward', 'hidden', 'B200')"
has "$TMP/empty_sweep.svg" 'No competing run of layer_norm backward on B200 along hidden.' "an empty sweep says so"
chart empty_roofline "SELECT kbench_chart_roofline('NVIDIA GeForce RTX 4090', 'layer_norm')"
hastext "$TMP/empty_roofline.svg" 'The selection is empty: no run of layer_norm on NVIDIA GeForce RTX 4090 is in the catalog.' "an empty roofline says so (the selection is empty: no LayerNorm run on the 4090; issue 29: it blamed a cost formula)"
# issue 29: an empty selection says it is empty and what the device holds, not that a cost formula is missing
chart empty_selection_roofline "SELECT kbench_chart_roofline('B200', 'layer_norm', 'backward')"
hastext "$TMP/empty_selection_roofline.svg" 'The selection is empty: no run of layer_norm (backward) on B200 is in the catalog. On B200 it holds (most runs first, up to 8): ' "an empty roofline selection says it is empty, and what the device holds"
if grep -qF 'has a cost formula' "$TMP/empty_selection_roofline.svg"; then echo "not ok - and does not blame a cost formula"; else echo "ok - and does not blame a cost formula"; fi
# issue 29: one device resolver: the docs' spelling 'H100 SXM5' (docs/ANALYTICS.md, kbench_devices) names
# the 80GB HBM3 environments; 'H100' is judged as everywhere (kbench_speedup takes it), drawn without roofs
chart roofline_sxm5 "SELECT kbench_chart_roofline('H100 SXM5')"
has "$TMP/roofline_sxm5.svg" '>roof fp32: 3.35T B/s × intensity, 67T FLOP/s</text>' "roofline of 'H100 SXM5' (the docs' spelling) has the SXM5 roofs"
ok "$(q "SELECT count(*) > 0 FROM kbench_speedup('layer_norm', 'huggingface', 'liger', environment => 'H100 SXM5')")" t "kbench_speedup takes 'H100 SXM5' too"
chart roofline_h100 "SELECT kbench_chart_roofline('H100')"
has "$TMP/roofline_h100.svg" 'no roofs: the runs are on H100 PCIe 80GB, H100 SXM5 80GB (name one, e.g. ' "roofline of 'H100' (two datasheet devices) draws the runs without roofs and says why"
ok "$(q "SELECT count(*) > 0 FROM kbench_speedup('layer_norm', 'huggingface', 'liger', environment => 'H100')")" t "kbench_speedup takes 'H100' as the roofline does"
chart empty_chart "SELECT kbench_chart('{\"title\": \"nothing\"}')"
has "$TMP/empty_chart.svg" 'Nothing to draw: the selection holds no data.' "an empty spec draws a chart that says so"

# Issue 29 item 7: what a newcomer found in the demo's and the docs' charts.
# svg_labels.py reads the SVG: tick labels (--ticks), each series' look
# (--styles), the legend's headings (--headings), and text boxes that overlap.
lab() { python3 test/charts/svg_labels.py "$@"; }
# (1) time axes in ns/µs/ms/s, each tick in the unit that reads naturally, never "1M µs"
ok "$(q "SELECT string_agg(kbench_svg_duration(v, 'µs'), '|' ORDER BY n) FROM unnest(ARRAY[1360, 1e6, 999.7, 0.5, 250, 1.36e6, 12.5e6]) WITH ORDINALITY u(v, n)")" \
   "1.36 ms|1 s|1 ms|500 ns|250 µs|1.36 s|12.5 s" "kbench_svg_duration: 1.36 ms, 1 s, 500 ns (the unit that keeps it at 1 or more)"
q "SELECT kbench_chart(jsonb_build_object('title', 'long times', 'y', jsonb_build_object('label', 'median time', 'unit', 'µs', 'log', false),
     'series', jsonb_build_array(jsonb_build_object('name', 'slow', 'points', (SELECT jsonb_agg(jsonb_build_object('x', i, 'y', i * 3.4e5)) FROM generate_series(1, 5) i)))))" >"$TMP/units_linear.svg"
q "SELECT kbench_chart(jsonb_build_object('title', 'wide times', 'y', jsonb_build_object('label', 'median time', 'unit', 'µs'),
     'series', jsonb_build_array(jsonb_build_object('name', 'wide', 'points', (SELECT jsonb_agg(jsonb_build_object('x', i, 'y', 10 ^ i)) FROM generate_series(0, 6) i)))))" >"$TMP/units_log.svg"
for f in units_linear units_log sweep series records; do
  got=$(lab --ticks "$TMP/$f.svg" | python3 -c '
import json, re, sys
y = [t for panel in json.load(sys.stdin)["y"] for t in panel]
bad = [t for t in y if t != "0" and not re.fullmatch(r"[0-9]+(\.[0-9]+)? (ns|µs|ms|s)", t) or re.search(r"[0-9][kMGT] ", t)]
print("units" if y and not bad else "bad: %s" % (bad or "no ticks"))')
  ok "$got" units "$f: every time tick reads like 1.36 ms (a number and ns, µs, ms or s), none like 1M µs"
done
ok "$(lab --ticks "$TMP/units_linear.svg")" '{"x": [["0", "1", "2", "3", "4", "5", "6"]], "y": [["0", "0.5 s", "1 s", "1.5 s", "2 s"]]}' \
   "a linear time axis up to 1.7 s: its ticks in seconds"
# a linear axis's step: 1, 2, 5 or 10 times a power of ten, the least at or over a fifth of the
# range (0 to the top: the zero baseline), worked by hand: 5/5 = 1 -> 1; 9/5 = 1.8 and 10/5 = 2 -> 2;
# 10.5/5 = 2.1 and 25/5 = 5 -> 5; 27/5 = 5.4 and 48/5 = 9.6 -> 10; 51/5 = 10.2 -> 20
got=""
for top in 5 9 10 10.5 25 27 48 51; do
  q "SELECT kbench_chart(jsonb_build_object('title', 'ticks', 'y', jsonb_build_object('label', 'v', 'log', false),
       'series', jsonb_build_array(jsonb_build_object('name', 's', 'points',
         jsonb_build_array(jsonb_build_object('x', 1, 'y', $top / 2.0), jsonb_build_object('x', 2, 'y', $top))))))" >"$TMP/step.svg"
  got+="$top:$(lab --ticks "$TMP/step.svg" | python3 -c 'import json, sys; print(",".join(json.load(sys.stdin)["y"][0]))') "
done
ok "$got" "5:0,1,2,3,4,5 9:0,2,4,6,8,10 10:0,2,4,6,8,10 10.5:0,5,10,15 25:0,5,10,15,20,25 27:0,10,20,30 48:0,10,20,30,40,50 51:0,20,40,60 " \
   "a linear axis's tick step is the least of 1, 2, 5, 10 x 10^k at or over a fifth of its range (a hand table)"
ok "$(lab --ticks "$TMP/units_log.svg" | python3 -c 'import json, sys; print(" ".join(json.load(sys.stdin)["y"][0]))')" "1 µs 10 µs 100 µs 1 ms 10 ms 100 ms 1 s" \
   "a log time axis over six decades: each tick in its own unit (1 µs ... 1 s)"

# (2) past eight series: eight colours, then dash patterns and shapes; no two series alike
q "SELECT kbench_chart(jsonb_build_object('title', 'sixteen', 'series', (SELECT jsonb_agg(jsonb_build_object('name', 'impl ' || i,
     'points', (SELECT jsonb_agg(jsonb_build_object('x', x, 'y', i * 10 + x)) FROM generate_series(1, 5) x)) ORDER BY i) FROM generate_series(1, 16) i)))" >"$TMP/sixteen.svg"
q "SELECT kbench_chart(jsonb_build_object('title', 'grouped', 'series', (SELECT jsonb_agg(jsonb_build_object('name', 'impl ' || i, 'group', 'device ' || g,
     'points', (SELECT jsonb_agg(jsonb_build_object('x', x, 'y', i * 10 + g + x)) FROM generate_series(1, 5) x)) ORDER BY g, i)
     FROM generate_series(1, 4) g, generate_series(1, 4) i)))" >"$TMP/grouped.svg"
looks='import json, sys
s = json.load(sys.stdin)
print(len(s), len({x["colour"] for x in s}), len({(x["colour"], x["dash"], x["shape"]) for x in s}))'
ok "$(lab --styles "$TMP/sixteen.svg" | python3 -c "$looks")" "16 8 16" "16 series: eight colours, and 16 looks (colour, dash pattern, marker shape) all different"
ok "$(lab --styles "$TMP/grouped.svg" | python3 -c "$looks")" "16 4 16" "16 series in 4 groups of 4 names: a colour per name, 16 different looks"
ok "$(lab --styles "$TMP/grouped.svg" | python3 -c 'import json, sys; s = json.load(sys.stdin); print(all(s[i]["colour"] == s[i % 4]["colour"] and s[i]["dash"] == s[4 * (i // 4)]["dash"] for i in range(16)))')" True \
   "... a name keeps its colour in every group, each group has its own dash pattern"
ok "$(lab --headings "$TMP/grouped.svg")" '["device 1", "device 2", "device 3", "device 4"]' "... and the legend groups the 16 entries under a heading per group"
ok "$(lab --headings "$TMP/sweep.svg" | python3 -c 'import json, os, sys
h = json.load(sys.stdin); cpu = os.environ["OUR_CPU"]
# (a heading longer than the legend column is cut, with an ellipsis)
print(h[:2] == ["NVIDIA A100 SXM4-80GB", "NVIDIA H100 80GB HBM3"] and len(h) == 3
      and (h[2] == cpu or h[2].endswith("…") and cpu.startswith(h[2][:-1])))')" True \
   "sweep: the legend groups the lines by device (A100, H100, then our CPU: $OUR_CPU)"
has "$TMP/sweep.svg" '>Liger</text>' "sweep: a legend entry names the implementation under its device's heading"
ok "$(lab --headings "$TMP/roofline.svg")" '["roofs", "runs by operation"]' "roofline: the legend groups the roofs and the runs (by operation), each group in its own columns"

# (3) labels never overlap: on every chart this suite draws (the demo's report and
# the docs' pictures are among them, below), and on charts made to crowd them
q "SELECT kbench_chart(jsonb_build_object('title', 'crowded', 'x', jsonb_build_object('label', 'point', 'kind', 'index'),
     'series', (SELECT jsonb_agg(jsonb_build_object('name', 'impl ' || i, 'label_end', 'implementation ' || i,
                  'points', (SELECT jsonb_agg(jsonb_build_object('x', x, 'y', 100 + i * 0.5 + x)) FROM generate_series(1, 10) x)) ORDER BY i) FROM generate_series(1, 12) i),
     'marks', (SELECT jsonb_agg(jsonb_build_object('x', 1 + i * 0.1, 'kind', CASE WHEN i % 3 = 0 THEN 'alert' ELSE 'regression' END,
                  'label', format('+%s%% backward', round(i * 1.7, 1))) ORDER BY i) FROM generate_series(1, 80) i)))" >"$TMP/crowded.svg"
ok "$(lab "$TMP/crowded.svg" | awk 'NR == 1 { print $3 }')" 0 "80 change labels 0.1 points apart and 12 end labels at one point: no two overlap"
has "$TMP/crowded.svg" 'labels left out where they would overlap (hover the marks)</text>' "... those with no free place are left out, and the legend says how many"
ok "$(grep -c '>+[0-9.]*% backward</text>' "$TMP/crowded.svg" | awk '{ print ($1 >= 40) }')" 1 "... and most are drawn"
q "SELECT kbench_chart(jsonb_build_object('title', 'close', 'series', jsonb_build_array(jsonb_build_object('name', 's', 'points', jsonb_build_array(jsonb_build_object('x', 0, 'y', 1), jsonb_build_object('x', 100, 'y', 2)))),
     'marks', (SELECT jsonb_agg(jsonb_build_object('x', 40 + i, 'kind', 'change point', 'label', format('+%s%% forward', i)) ORDER BY i) FROM generate_series(1, 6) i)))" >"$TMP/close.svg"
ok "$(lab "$TMP/close.svg" | awk 'NR == 1 { print $3 }')$(grep -c '% forward</text>' "$TMP/close.svg")" 06 "six change labels one unit apart: all six drawn, none overlapping"

# (4) dates on time axes: the date always; the time of day only under two days
q "SELECT kbench_chart_records('liger-layer-norm-hidden1024-rows4096-fp32', environment => 'cpu')" >"$TMP/records_cpu.svg"
ok "$(lab --ticks "$TMP/records_cpu.svg" | python3 -c 'import json, re, sys; x = json.load(sys.stdin)["x"][0]; print(bool(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", x[0])) and all(re.fullmatch(r"(\d{4}-\d\d-\d\d )?\d\d:\d\d", t) for t in x))')" True \
   "records of runs minutes apart: the time of day, the first tick with its date"
ok "$(lab --ticks "$TMP/records.svg" | python3 -c 'import json, re, sys; x = json.load(sys.stdin)["x"][0]; print(len(x) > 2 and all(re.fullmatch(r"\d{4}-\d\d-\d\d|[A-Z][a-z]{2} \d{4}", t) for t in x))')" True \
   "records over a year (the GPU panel): dates (Oct 2024 ...), no time of day"
q "SELECT kbench_chart(jsonb_build_object('title', 'two and a half days', 'x', jsonb_build_object('kind', 'time'),
     'series', jsonb_build_array(jsonb_build_object('name', 's', 'points', (SELECT jsonb_agg(jsonb_build_object('x', 1767225600 + h * 3600, 'y', h)) FROM generate_series(0, 60) h)))))" >"$TMP/days.svg"
ok "$(lab --ticks "$TMP/days.svg")" '{"x": [["2025-12-31", "2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"]], "y": [["0", "20", "40", "60"]]}' \
   "a time axis over two and a half days: a tick a day, each a date (not twice a day with the time)"

# (5) CPU and GPU runs in one sweep: a panel each (the GPUs' first), each on its own scale
ok "$(grep -c '<g class="panel" ' "$TMP/sweep.svg")" 2 "sweep of CPU and GPU runs: two panels"
ok "$(grep -o '>liger-layer-norm forward: time against hidden — [A-Z]*</text>' "$TMP/sweep.svg" | tr '\n' ' ')" \
   ">liger-layer-norm forward: time against hidden — GPU</text> >liger-layer-norm forward: time against hidden — CPU</text> " "... titled GPU and CPU"
ok "$(python3 - "$TMP/sweep.svg" <<'PY'
import os, re, sys
svg = open(sys.argv[1], encoding="utf-8").read()
gpu, cpu = svg.split('<g class="panel" ')[1:3]
print("ours-cpu" if "(ours)</text>" in cpu and "(ours)</text>" not in gpu else "ours-gpu",
      # (a heading of the GPU panel, not a run's hover title, which may name its host's CPU)
      "ourcpu-cpu" if os.environ["OUR_CPU"][:12] in cpu
      and not re.search(re.escape(os.environ["OUR_CPU"][:12]) + r"[^<]*</text>", gpu) else "ourcpu-gpu",
      "h100-gpu" if "NVIDIA H100 80GB HBM3</text>" in gpu and "NVIDIA H100" not in cpu.split("</title>", 1)[1] else "h100-cpu")
PY
)" "ours-cpu ourcpu-cpu h100-gpu" "... our CPU runs (under this machine's CPU, $OUR_CPU) in the CPU panel, the Liger GPU runs in the GPU panel"
ok "$(lab --ticks "$TMP/sweep.svg" | python3 -c 'import json, sys; y = json.load(sys.stdin)["y"]; print(y[0][-1].split()[-1], y[1][-1].split()[-1])')" "µs ms" \
   "... each on its own scale (µs for the GPUs, ms for the CPU)"
ok "$(q "SELECT count(*) FROM regexp_matches(kbench_chart_sweep('layer_norm', 'forward', 'hidden', 'H100'), '<g class=\"panel\" ', 'g')")" 0 "a sweep of GPU runs only: one chart, no panels"

# Empty for a name: the charts, kbench_memory_ratio and kbench_regressions say why (as kbench_sweep does)
notice() {   # notice SQL FUNCTION WHAT: the NOTICE names the function and what the names resolved to
  local out
  out=$(psql -X -At -q -c "$1" 2>&1 >/dev/null)
  case "$out" in *"NOTICE:  $2: "*"$3"*) echo "ok - $2 says why it is empty ($3)";;
    *) echo "not ok - $2 says why it is empty (expected a NOTICE with '$3')"; echo "$out" | head -3 | sed 's/^/# /';; esac
}
notice "SELECT kbench_chart_series('liger', 'liger-layer-norm-hidden1024-rows4096-fp32', environment => 'cpu')" kbench_chart_series \
       'implementation "liger" is liger-bench-layer-norm-liger, with runs on NVIDIA A100 SXM4-80GB'
notice "SELECT kbench_chart_records('liger-layer-norm-hidden1024-rows4096-fp32', 'backward', 'cpu')" kbench_chart_records \
       'no record in liger-layer-norm-hidden1024-rows4096-fp32 (backward) on cpu yet'
notice "SELECT kbench_chart_roofline('B200', 'layer_norm', 'backward')" kbench_chart_roofline 'the selection is empty: no run of layer_norm (backward) on B200'
# ... and lists what the device holds, most runs first: the counts it gives never grow (and differ,
# so the order is seen), against the catalog counted here
held=$(psql -X -At -q -c "SELECT kbench_chart_roofline('B200', 'layer_norm', 'backward')" 2>&1 >/dev/null)
ok "$(python3 -c 'import re, sys
m = re.search(r"it holds \(most runs first, up to 8\): (.*)", sys.argv[1])
n = [int(x) for x in re.findall(r"\((\d+) runs\)", m.group(1))] if m else []
print("counts %s: %s" % (n, "most first" if len(set(n)) > 1 and n == sorted(n, reverse=True) else "not most first"))' "$held" | sed 's/^counts [^:]*: //')" \
   "most first" "... what B200 holds is listed most runs first ($(grep -o 'it holds.*' <<<"$held" | cut -c1-120))"
# ... and where the device holds more than 8 (the RTX 3090: 11 operation and mode pairs, 12 to 56
# runs each), the 8 it lists are the 8 most run, counted here from kbench_runs
held=$(psql -X -At -q -c "SELECT kbench_chart_roofline('RTX 3090', 'layer_norm', 'backward')" 2>&1 >/dev/null)
ok "$(python3 -c 'import re, sys
m = re.search(r"it holds \(most runs first, up to 8\): (.*)", sys.argv[1])
print(",".join(re.findall(r"\((\d+) runs\)", m.group(1))) if m else "no list")' "$held") of $(q "SELECT count(*) FROM (SELECT 1 FROM kbench_runs r JOIN kbench_environments e ON e.digest = r.environment_digest JOIN kbench_workloads w ON w.digest = r.workload_digest WHERE e.product = 'NVIDIA GeForce RTX 3090' GROUP BY w.operation_digest, r.protocol_digest) q")" \
   "$(q "SELECT string_agg(n::text, ',' ORDER BY n DESC) FROM (SELECT count(*) AS n FROM kbench_runs r JOIN kbench_environments e ON e.digest = r.environment_digest JOIN kbench_workloads w ON w.digest = r.workload_digest WHERE e.product = 'NVIDIA GeForce RTX 3090' GROUP BY w.operation_digest, r.protocol_digest ORDER BY 1 DESC LIMIT 8) q") of 11" \
   "... on a device holding more than 8 (RTX 3090, 11 pairs), the 8 most run of them, as counted here"
notice "SELECT kbench_chart_sweep('embedding', 'forward', 'vocab', 'cpu', metric => 'peak_memory')" kbench_chart_sweep \
       'no run of this selection carries a peak_memory measurement'
notice "SELECT * FROM kbench_memory_ratio('layer_norm', 'huggingface', 'liger', environment => 'cpu')" kbench_memory_ratio \
       'baseline "huggingface" is liger-bench-layer-norm-huggingface, with runs on'
notice "SELECT * FROM kbench_regressions('liger', 'layer_norm', environment => 'cpu')" kbench_regressions \
       'implementation "liger" is liger-bench-layer-norm-liger, with runs on NVIDIA A100 SXM4-80GB'
ok "$(psql -X -At -q -c "SELECT count(*) FROM kbench_regressions('liger', 'layer_norm', environment => 'H100')" 2>&1 | grep -c NOTICE)" 0 \
   "kbench_regressions without a regression among points that exist says nothing"

# Determinism: the same query, in another session, gives the same bytes.
for c in "sweep|SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden')" \
         "series|SELECT kbench_chart_series('liger-bench-fused-add-rms-norm-liger-fused-add-rms-norm', 'liger-fused-add-rms-norm-hidden8192-rows2048-fp32', 'backward', 'H100')" \
         "roofline|SELECT kbench_chart_roofline('NVIDIA H100 80GB HBM3')" \
         "records|SELECT kbench_chart_records('liger-layer-norm-hidden1024-rows4096-fp32', 'forward')"; do
  name=${c%%|*}
  q "SET timezone = 'Pacific/Auckland'; SET extra_float_digits = 0; SET datestyle = 'German, DMY'; SET intervalstyle = 'sql_standard'; ${c#*|}" >"$TMP/$name.again.svg"
  if cmp -s "$TMP/$name.svg" "$TMP/$name.again.svg"; then echo "ok - $name: the same query gives the same bytes (another session, time zone, float and date output)"
  else echo "not ok - $name: the same query gives the same bytes"; fi
done

# Text from the catalog is escaped (and control characters dropped).
q "SELECT kbench_chart(jsonb_build_object('title', 'a <b> & \"c\" ''d'' ' || chr(1), 'x', '{\"label\": \"<x>\"}',
     'series', jsonb_build_array(jsonb_build_object('name', '</text><script>alert(1)</script>',
       'points', jsonb_build_array(jsonb_build_object('x', 1, 'y', 2, 'title', '<&>'), jsonb_build_object('x', 2, 'y', 3))))))" >"$TMP/escape.svg"
if xmllint --noout "$TMP/escape.svg" 2>/dev/null && ! grep -q '<script' "$TMP/escape.svg" \
   && grep -qF 'a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39; </text>' "$TMP/escape.svg"; then
  echo "ok - text in a chart is escaped (markup, quotes, control characters)"
else echo "not ok - text in a chart is escaped (markup, quotes, control characters)"; head -c 600 "$TMP/escape.svg" | sed 's/^/# /'; fi

# Bad input: each raises its error.
err() {   # err SQL SQLSTATE WHAT
  local out
  out=$(psql -X -At -q -v VERBOSITY=verbose -c "$1" 2>&1 >/dev/null)
  case "$out" in *"ERROR:  $2:"*) echo "ok - $3 ($2)";; *) echo "not ok - $3 (expected $2)"; echo "$out" | head -3 | sed 's/^/# /';; esac
}
err "SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden', metric => 'joules')" 22023 "an unknown metric"
err "SELECT kbench_chart_sweep('no_such_op', 'forward', 'hidden')" 42704 "an unknown operation"
err "SELECT kbench_chart_sweep('layer_norm', 'forward', 'depth')" 42704 "an unknown axis"
err "SELECT kbench_chart_sweep('layer_norm', 'sideways', 'hidden')" 42704 "an unknown mode"
err "SELECT kbench_chart_sweep('layer_norm', NULL, 'hidden')" 22004 "no mode"
err "SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden', 'TPU v5')" 42704 "an unknown device"
err "SELECT kbench_chart_series('liger', NULL)" 22004 "a series without a workload"
err "SELECT kbench_chart_series('liger', 'no-such-workload')" 42704 "a series of an unknown workload"
err "SELECT kbench_chart_series('nobody', 'liger-layer-norm-hidden1024-rows4096-fp32')" 42704 "a series of an unknown implementation"
err "SELECT kbench_chart_series('liger', 'liger-layer-norm-hidden1024-rows4096-fp32', method => 'vibes')" 22023 "a series with an unknown regression method"
err "SELECT kbench_chart_roofline(NULL)" 22004 "a roofline without a device"
err "SELECT kbench_chart_records(NULL)" 22004 "a record timeline without a workload"
err "SELECT kbench_chart_records('no-such-workload')" 42704 "a record timeline of an unknown workload"
err "SELECT kbench_chart('[1, 2]')" 22023 "a chart spec that is not an object"
err "SELECT kbench_chart('{\"series\": {}}')" 22023 "a chart spec whose series is not an array"
# (each with its own message: a later step's error on a scalar has the same SQLSTATE)
for spec in '{"series": [], "marks": "x"}' '{"series": "x", "marks": []}' '{"marks": 3}'; do
  out=$(psql -X -At -q -c "SELECT kbench_chart('$spec')" 2>&1 >/dev/null)
  case "$out" in *"a chart spec's series and marks must be json arrays"*) echo "ok - a chart spec $spec is refused: series and marks must be arrays";;
    *) echo "not ok - a chart spec $spec is refused: series and marks must be arrays (got: $(head -1 <<<"$out"))";; esac
done
err "SELECT kbench_chart('{\"width\": 50}')" 22023 "a chart too small"
err "SELECT kbench_chart('{\"x\": {\"kind\": \"calendar\"}}')" 22023 "an unknown x axis kind"
err "SELECT kbench_report(max_charts => -1)" 22023 "a report with a negative chart budget"
err "SELECT kbench_report('no_such_op')" 42704 "a report of an unknown operation"
err "SELECT kbench_report(environment => 'TPU v5')" 42704 "a report of an unknown device"
err "SELECT kbench_chart_sweep('layer_norm', 'forward', 'hidden', implementation => 'nobody')" 42704 "a sweep of an unknown implementation"
err "SELECT kbench_chart_roofline('H100 PCIe', 'no_such_op')" 42704 "a roofline of an unknown operation"
err "SELECT kbench_chart_records('liger-layer-norm-hidden1024-rows4096-fp32', 'sideways')" 42704 "a record timeline of an unknown mode"
err "SELECT kbench_chart('{\"width\": \"wide\"}')" 22023 "a chart width that is not a number"
err "SELECT kbench_chart('{\"height\": 1e30}')" 22023 "a chart height far out of range"

# The report: self-contained, the same bytes twice, every section there.
q "SELECT kbench_report()" >"$TMP/report.html"
q "SET timezone = 'America/St_Johns'; SET extra_float_digits = -5; SELECT kbench_report()" >"$TMP/report.again.html"
if cmp -s "$TMP/report.html" "$TMP/report.again.html"; then echo "ok - the report: the same query gives the same bytes"; else echo "not ok - the report: the same query gives the same bytes"; fi
# its regression series: the four workloads whose largest regression is largest (a workload of a
# family regresses on several devices and passes here: the largest of each counts), computed apart
ok "$(grep -o 'kbench_chart_series([^<]*)' "$TMP/report.html" | sed "s/&#39;/'/g" | tr '\n' '|')" \
   "$(q "SELECT string_agg(format('kbench_chart_series(%L, %L)', family, workload), '|' ORDER BY mx DESC, family, workload) || '|'
           FROM (SELECT family, workload, max(change_pct) AS mx FROM kbench_regressions(NULL, NULL, NULL, NULL, 'percent')
                  GROUP BY 1, 2 ORDER BY mx DESC, family, workload LIMIT 4) t")" \
   "the report's regression series are the 4 workloads whose largest regression is largest, in that order"
# the figures' captions are the calls that draw them, escaped ('quote' as &#39;: a family or a
# workload's name reaches the page through them), each a call a user can paste: every name quoted,
# as a literal; in a report of one device (the RTX 4090: a name with a space) the device too
q "SELECT kbench_report(environment => 'RTX 4090')" >"$TMP/report-4090.html"
for f in report report-4090; do
  want='\(&#39;[^&]+&#39;, &#39;[^&]+&#39;\)'
  [ "$f" = report-4090 ] && want='\(&#39;[^&]+&#39;, &#39;[^&]+&#39;, environment =&gt; &#39;RTX 4090&#39;\)'
  caps=$(grep -o '<figcaption>kbench_chart_series([^<]*</figcaption>' "$TMP/$f.html")
  if [ -n "$caps" ] && ! grep -qF "<figcaption>kbench_chart_series('" "$TMP/$f.html" \
     && ! grep -vqE "^<figcaption>kbench_chart_series$want</figcaption>\$" <<<"$caps"; then
    echo "ok - $f: the figure captions are the calls, escaped for HTML and quoted ($(wc -l <<<"$caps") of them)"
  else
    echo "not ok - $f: the figure captions are the calls, escaped for HTML and quoted"; head -2 <<<"$caps" | sed 's/^/# /'
  fi
done
for s in '<h2 id="leaders">' '<h2 id="speedups">' '<h2 id="regressions">' '<h2 id="jobs">' '<h2 id="charts">' \
         '>Records of liger-' '>Roofline of NVIDIA H100 80GB HBM3</text>' 'Runs made here beside the history' \
         '<td>layer_norm</td><td>forward</td>'; do
  has "$TMP/report.html" "$s" "the report holds $s"
done
if grep -qiE '<script|<link|<img|<iframe|src=|@import|url\(http|href="http' "$TMP/report.html"; then
  echo "not ok - the report is self-contained (no script, no external asset)"; grep -oiE '.{40}(<script|<link|<img|<iframe|src=|@import|url\(http|href="http).{40}' "$TMP/report.html" | head -3 | sed 's/^/# /'
else echo "ok - the report is self-contained (no script, no external asset)"; fi
nsvg=$(grep -o '<svg ' "$TMP/report.html" | wc -l)
ok "$(awk -v n="$nsvg" 'BEGIN { print (n >= 30) }')" 1 "the report holds its charts ($nsvg)"
# every chart in it on its own: XML and rsvg
python3 - "$TMP/report.html" "$TMP" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
for i, m in enumerate(re.finditer(r"<svg .*?</svg>", html, re.S)):
    open("%s/report-%03d.svg" % (sys.argv[2], i), "w", encoding="utf-8").write(m.group(0))
PY
bad=0
for f in "$TMP"/report-*.svg; do
  xmllint --noout "$f" 2>/dev/null && rsvg-convert "$f" -o "${f%.svg}.png" 2>/dev/null || { bad=$((bad + 1)); echo "# $(basename "$f") fails"; }
done
ok "$bad" 0 "every chart of the report is well-formed XML and renders with rsvg-convert"

# issue 29: the pictures of docs/REPORTS.md (tools/make_report_pictures.sh draws them), then
# no two text boxes overlap on any chart drawn so far: the suite's, the docs', the report's
chart docs_sweep_ln "SELECT kbench_chart_sweep('layer_norm', 'backward', 'hidden', 'NVIDIA H100 80GB HBM3')"
chart docs_sweep_emb "SELECT kbench_chart_sweep('embedding', 'forward', 'vocab', 'A100')"
chart docs_records "SELECT kbench_chart_records('liger-layer-norm-hidden1024-rows4096-fp32')"
python3 test/charts/svg_labels.py "$TMP"/*.svg >"$TMP/labels.txt"
ok "$(awk '!/^ / && $3 != 0' "$TMP/labels.txt" | wc -l)" 0 "no two labels overlap on any of the $(grep -vc '^ ' "$TMP/labels.txt") charts drawn (the suite's, the docs', the report's)"
grep -A3 ' [1-9][0-9]*$' "$TMP/labels.txt" | head -8 | sed 's/^/# /'

q "SELECT kbench_report('layer_norm', title => '</title><script>alert(1)</script> & co')" >"$TMP/report-title.html"
if ! grep -q '<script' "$TMP/report-title.html" && grep -qF '<h1>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; co</h1>' "$TMP/report-title.html"; then
  echo "ok - the report escapes its text (a title with markup)"; else echo "not ok - the report escapes its text (a title with markup)"; fi

# In headless Chromium: the page loads, and each inline chart has a drawn box.
chrome() {
  rm -rf "$TMP/chromium" && mkdir -p "$TMP/chromium"
  timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$TMP/chromium" "$@" 2>"$TMP/chromium.err"
}
sed 's#</body>#<script>addEventListener("load", function () { var s = document.querySelectorAll("svg"), ok = 0, bad = []; for (var i = 0; i < s.length; i++) { var b = s[i].getBBox(), r = s[i].getBoundingClientRect(), n = s[i].querySelectorAll("text,line,polyline,polygon,circle,rect,path").length; if (b.width > 100 \&\& b.height > 100 \&\& r.width > 100 \&\& n > 10) ok++; else bad.push(i); } var p = document.createElement("pre"); p.id = "check"; p.textContent = "charts rendered " + ok + "/" + s.length + (bad.length ? " bad " + bad.join(",") : ""); document.body.appendChild(p); });</script></body>#' \
  "$TMP/report.html" >"$TMP/report-check.html"
chrome --virtual-time-budget=10000 --dump-dom "file://$TMP/report-check.html" >"$TMP/dom.html"
has "$TMP/dom.html" "charts rendered $nsvg/$nsvg<" "the report opens in headless Chromium and all $nsvg charts render there"
chrome --window-size=1000,1400 --hide-scrollbars --screenshot="$TMP/report.png" "file://$TMP/report.html" >/dev/null
if [ -f "$TMP/report.png" ]; then
  python3 test/charts/png_stats.py "$TMP/report.png" | awk '{ if ($4 > 0.02 && $5 > 8) print "ok - the report'"'"'s screenshot in Chromium is not blank (" $4 * 100 "% inked)";
                                                            else print "not ok - the report'"'"'s screenshot in Chromium is not blank (" $4 * 100 "% inked)" }'
else echo "not ok - Chromium takes a screenshot of the report"; sed 's/^/# /' "$TMP/chromium.err" | tail -3; fi

# Jobs: the report lists only those the caller may see; PUBLIC may call it.
q "CREATE ROLE charts_reader" >/dev/null
psql -X -At -q -c "SET ROLE charts_reader" -c "SELECT kbench_report('layer_norm')" >"$TMP/report-reader.html" 2>"$TMP/reader.err"
[ -s "$TMP/reader.err" ] && sed 's/^/# reader: /' "$TMP/reader.err" | head -20
has "$TMP/report-reader.html" 'No job (that you may see) has run here.' "a role without jobs sees none of the others' in the report"
has "$TMP/report-reader.html" '>Roofline of NVIDIA H100 80GB HBM3 · layer_norm</text>' "a role with no grants draws the charts (PUBLIC reads the analytics)"
q "SELECT kbench_report('layer_norm')" >"$TMP/report-owner.html"
has "$TMP/report-owner.html" '<td>layer_norm</td><td>forward</td><td>{&quot;rows&quot;: 4096, &quot;dtype&quot;: &quot;fp32&quot;, &quot;hidden&quot;: 1024}</td>' "the jobs' owner sees them in the report"

# A database with nothing in it: the report and the charts say so.
createdb charts_empty && psql -X -q -d charts_empty -c "CREATE EXTENSION kernelindex" >/dev/null
psql -X -At -q -d charts_empty -c "SELECT kbench_report()" >"$TMP/report-empty.html"
has "$TMP/report-empty.html" 'No chart: the selection holds no data to draw.' "the report of an empty database says so"

# The whole public catalog (issue 29 item 3): up to 260 implementations of
# one operation on one device there, 636,000 pairs in shared cohorts, and
# 0.2.0's report was 48.8 MB that Chromium could not open.  Its report is small, summarises the long tables with the
# query that gives them in full, puts the charts before the tables, and
# opens in Chromium (how long it takes is bench/'s business, not a test's).
createdb charts_catalog && psql -X -q -d charts_catalog -c "CREATE EXTENSION kernelindex" >/dev/null
cp data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst "$TMP/catalog.jsonl.zst" && chmod a+r "$TMP/catalog.jsonl.zst"
ok "$(psql -X -At -q -d charts_catalog -c "SELECT inserted FROM kbench_import_catalog('$TMP/catalog.jsonl.zst')")" 40795 "the public catalog imports (40795 documents)"
psql -X -At -q -d charts_catalog -c "SELECT kbench_report()" >"$TMP/report-catalog.html"
size=$(stat -c %s "$TMP/report-catalog.html")
mkdir -p "$TMP/catalog-charts"
python3 - "$TMP/report-catalog.html" "$TMP/catalog-charts" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
for i, m in enumerate(re.finditer(r"<svg .*?</svg>", html, re.S)):
    open("%s/c%03d.svg" % (sys.argv[2], i), "w", encoding="utf-8").write(m.group(0))
PY
python3 test/charts/svg_labels.py "$TMP"/catalog-charts/*.svg >"$TMP/labels-catalog.txt"
ok "$(awk '!/^ / && $3 != 0' "$TMP/labels-catalog.txt" | wc -l)" 0 "no two labels overlap on the $(grep -vc '^ ' "$TMP/labels-catalog.txt") charts of the whole catalog's report"
ok "$([ "$size" -gt 20000 ] && [ "$size" -lt $((5 * 1024 * 1024)) ] && echo fits)" fits "the whole catalog's report is under 5 MB ($size bytes)"
ok "$(python3 - "$TMP/report-catalog.html" <<'PY'
import re, sys
h = open(sys.argv[1], encoding='utf-8').read()
at = {k: h.find('<h2 id="%s">' % k) for k in ('charts', 'leaders', 'speedups', 'regressions', 'jobs')}
rows = len(re.findall(r'<tr><td>', h[at['speedups']:at['regressions']]))
print(' '.join([
    'summary-first' if 0 < h.find('competing runs') < at['charts'] else 'summary-late',
    'charts-first' if 0 < at['charts'] < min(at['leaders'], at['speedups']) else 'charts-late',
    'pairs-summarised' if re.search(r'the median of its [0-9]{2,} implementations', h) and 0 < rows <= 200 else 'pairs-%d' % rows,
    'query-given' if 'kbench_speedup_summary(' in h and 'kbench_regressions(NULL' in h else 'no-query']))
PY
)" "summary-first charts-first pairs-summarised query-given" \
   "... a summary first, charts before tables, the speedups of many-implementation cohorts summarised (the fastest against the median), each table's full query given"
chrome --virtual-time-budget=10000 --dump-dom "file://$TMP/report-catalog.html" >"$TMP/dom-catalog.html"
has "$TMP/dom-catalog.html" '<h2 id="jobs">' "... and it opens in headless Chromium, to its last section"
