"""bench/run_line.py: one kbench --json result on stdin as a short line for bench/device.sh:
"passed 4.21 us" (the median per call), with "(n calls a graph)" for a CUDA-graph run, or the
status and the start of its message when it did not pass."""
import json
import sys

try:
    d = json.load(sys.stdin)
except ValueError:
    print("no result")
    sys.exit(0)
m = d.get("composite", {}).get("run", {}).get("spec", {}).get("sourceNative", {}).get("metrics", {})
s = d.get("summary", {})
if d.get("status") != "passed" or "median_ns" not in s:
    print("%s: %s" % (d.get("status", "?"), d.get("message", "")[:60]))
else:
    g = m.get("graph_calls")
    print("passed %.3f us%s" % (s["median_ns"] / 1e3, " (%d calls a graph)" % g if g else ""))
