#!/usr/bin/env bash
# tolerance_margins.sh [REPS] [OP...]: how close each operation defined as data comes to its
# tolerance on fresh inputs.  Every case of test/suites/operations.sh's two lists (OPS_SMALL: its
# small shape and dtypes, the huggingface baseline; OPS_LIGER: the shape the worker runs, Liger's
# dtype and provider), every mode, REPS runs (default 3) with 16
# timed calls: the guard (kernels/measure.c) checks all 16, over 4 input sets, three of them drawn
# with getrandom() for the run, so each run sees new inputs.  Prints one row per case: the runs
# that failed and the worst |got - ref| / tolerance seen (of the last call on a pass, of the value
# named on a failure).  A tolerance is safe when no run fails and the worst stays well under 1.
# Not a test (its inputs are random by design); run it after changing a tolerance or a baseline.
# KI_DTYPES="bf16": only those dtypes.
set -uo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}; shift || true
KB=kernels/kbench
PY=/usr/bin/python3
F="--rep-ms 1 --warmup-ms 0 --flush-bytes 0 --min-samples 16 --max-samples 16 --python $PY"
# op|axes|dtypes|provider, from both lists
list_cases() {
  $PY - <<'PYEOF'
import json, re
text = open("test/suites/operations.sh").read()
def block(name):
    body = re.search(r"^%s=\(\n(.*?)^\)" % name, text, re.S | re.M).group(1)
    return [l.strip()[1:-1].replace('\\"', '"') for l in body.splitlines() if l.strip().startswith('"')]
for line in block("OPS_SMALL"):
    op, axes, dts = line.split("|")[:3]
    print("|".join((op, axes, dts, "huggingface")))
for line in block("OPS_LIGER"):
    op, prov, _, axes, dt, small = line.split("|")
    if small:
        axes = " ".join("%s=%s" % kv for kv in json.loads(small).items())
    print("|".join((op, axes, dt, prov)))
PYEOF
}
mapfile -t cases < <(list_cases)
printf '%-32s %-9s %-5s %-12s %5s %8s  %s\n' operation mode dtype provider fails worst "where"
for spec in "${cases[@]}"; do
  IFS='|' read -r op axes dts prov <<<"$spec"
  if [ $# -gt 0 ]; then case " $* " in *" $op "*) ;; *) continue;; esac; fi
  for m in forward backward full; do
    for dt in $dts; do
      case " ${KI_DTYPES:-$dt} " in *" $dt "*) ;; *) continue;; esac
      fails=0 worst=0 at=-
      for _ in $(seq "$reps"); do
        out=$($KB run $op $m $axes dtype=$dt --impl $prov $F 2>&1)
        r=$(echo "$out" | $PY -c '
import re, sys
s = sys.stdin.read()
m = re.search(r"worst error ([0-9.e+-]+) of its tolerance \(pass <= 1\) at (\S+);", s)
if m:
    print("pass", m.group(1), m.group(2)); sys.exit()
m = re.search(r"(\w+\[\d+\]): got ([-0-9.e+naif]+), reference ([-0-9.e+naif]+) \(tolerance ([0-9.e+-]+)\)", s)
if m:
    print("fail", abs(float(m.group(2)) - float(m.group(3))) / float(m.group(4)), m.group(1)); sys.exit()
print("fail inf", (s.strip().splitlines() or ["?"])[0][:60].replace(" ", "_"))')
        read -r verdict ratio where <<<"$r"
        [ "$verdict" = fail ] && fails=$((fails + 1))
        if $PY -c "import sys; sys.exit(0 if float('$ratio') > float('$worst') else 1)"; then worst=$ratio at=$where; fi
      done
      printf '%-32s %-9s %-5s %-12s %2d/%-2d %8.3g  %s\n' "$op" "$m" "$dt" "$prov" "$fails" "$reps" "$worst" "$at"
    done
  done
done
