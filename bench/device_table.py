#!/usr/bin/env python3
"""bench/device_table.py: bench/device.sh's table, from the files a run leaves in its OUT.

    bench/device_table.py TABLE OUT PEAK_GBPS PEAK_TFLOPS [LIGER_TSV [LIGER_NOTES_TSV]]

TABLE: one kbench run a line, "variant op mode dtype key=value..." (OUT/table.txt); each run's
manifest is OUT/<key>[-variant].json (its error in .json.err); LIGER_TSV: bench/liger_time.py
--batch's answer (OUT/liger.tsv); LIGER_NOTES_TSV: bench/liger_time.py --notes's (codes per row
and their legend), printed as the l_diff column and the legend under the table.  An empty
LIGER_TSV argument: no Liger columns.  Re-renders a returned GPU run here too (raw.tgz).
"""
import json, os, sys
if len(sys.argv) < 5:
    sys.exit(__doc__)
rows_path, out, bw, tf, liger_path, notes_path = (sys.argv[1:] + ["", ""])[:6]
v1_median = {}
bw, tf = float(bw), float(tf)
liger = {}
if liger_path and os.path.exists(liger_path):
    for line in open(liger_path):
        if line.startswith("#") or "\t" not in line:
            continue
        key, rest = line.rstrip("\n").split("\t", 1)
        liger[key] = rest.split("\t")
notes, legend = {}, []
if notes_path and os.path.exists(notes_path):
    for line in open(notes_path):
        if line.startswith("# "):
            legend.append(line.rstrip("\n"))
        elif "\t" in line:
            key, codes = line.rstrip("\n").split("\t", 1)
            notes[key] = codes
print(f"{'op':24s} {'mode':9s} {'var':3s} {'shape':38s} {'dtype':5s} {'median_ms':>10s} {'p20-p80_ms':>21s} {'GB/s':>8s} "
      f"{'TFLOP/s':>8s} {'xfloor':>6s} {'v2/v1':>6s} {'liger_ms':>10s} {'liger_p20-p80':>19s} {'liger_gpu':>9s} "
      f"{'l_diff':>6s} status")
for line in open(rows_path):
    var, op, mode, dtype, *axes = line.split()
    key = f"{op}:{mode}:{dtype}:{','.join(axes)}"
    shape = " ".join(axes)
    path = os.path.join(out, key.replace(":", "_").replace(",", "_").replace("=", "-")
                        + ("" if var == "v1" else "-" + var) + ".json")
    lg = liger.get(key)
    if not liger_path:
        lcols, lnote = ("-", "-", "-"), ""
    elif lg is None:
        lcols, lnote = ("-", "-", "-"), " liger: killed (no line)"
    elif lg[0].startswith("err"):
        lcols, lnote = ("err", "-", "-"), " liger " + lg[0][:100]
    else:
        lcols, lnote = (lg[0], f"{lg[1]}-{lg[2]}", lg[3] if len(lg) > 3 else "-"), ""
    lpart = f"{lcols[0]:>10s} {lcols[1]:>19s} {lcols[2]:>9s} {(notes.get(key, '-') if liger_path else '-')[:6]:>6s}"
    try:
        r = json.load(open(path))
    except Exception:
        err = open(path + ".err").read().strip().replace("\n", " ")[:100] if os.path.exists(path + ".err") else ""
        print(f"{op:24s} {mode:9s} {var:3s} {shape:38s} {dtype:5s} {'-':>10s} {'-':>21s} {'-':>8s} {'-':>8s} {'-':>6s} "
              f"{'-':>6s} {lpart} no result: {err}{lnote}")
        continue
    run = r.get("composite", {}).get("run", {}).get("spec", {})
    m = run.get("sourceNative", {}).get("metrics", {})
    lat = run.get("timing", {}).get("latencyNs", {})
    meas = {x["statistic"]: x["value"] for x in run.get("measurements", []) if x["metric"] == "latency"}
    med = lat.get("median", 0) / 1e6
    b, f = m.get("bytes", 0), m.get("flops", 0)
    floor_ms = max(b / (bw * 1e9), (f / (tf * 1e12)) if op == "distill_jsd_loss" else 0) * 1e3
    p = f"{meas.get('p20', 0) / 1e6:.4f}-{meas.get('p80', 0) / 1e6:.4f}"
    x = f"{med / floor_ms:.2f}" if floor_ms > 0 and med > 0 else "-"
    if var == "v1" and r.get("status") == "passed" and med > 0:
        v1_median[key] = med
    ratio = f"{med / v1_median[key]:.3f}" if var != "v1" and key in v1_median and med > 0 else "-"
    print(f"{op:24s} {mode:9s} {var:3s} {shape:38s} {dtype:5s} {med:10.4f} {p:>21s} {m.get('achieved_gb_per_s', 0):8.1f} "
          f"{m.get('achieved_tflop_per_s', 0):8.2f} {x:>6s} {ratio:>6s} {lpart} {r.get('status', '?')} "
          f"{r.get('message', '')[:80]}{lnote}")
if legend:
    print("# l_diff: where the Liger timing still departs from Liger's own benchmark scripts (bench/liger_time.py --notes):")
    print("\n".join(legend))
