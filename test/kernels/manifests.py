#!/usr/bin/env python3
"""Print the manifests kbench writes for fixed requests, one per line:
"<request> | <part> | <canonical JSON>", with what the request does not
decide left out (an ImplementationRevision's projectRevision.commit, which
is the build's).  test/suites/kernels.sh compares this with
test/kernels/manifests.expected, recorded with the kbench of an earlier
commit: a change to how kbench writes manifests, or to the names it gives
(cuda/v2), shows here as a changed line.

usage: manifests.py path/to/kbench
"""
import json
import subprocess
import sys

REQUESTS = [
    "describe layer_norm backward rows=8 hidden=8",
    "describe layer_norm backward rows=8 hidden=8 --device cuda:0",
    "describe layer_norm backward rows=8 hidden=8 --device cuda:0 --impl cuda/v2",
    "describe megatron_cross_entropy forward seq=4 batch=2 vocab=32 dtype=bf16 --device cuda:0 --impl cuda/v2",
    "describe distill_jsd_loss full tokens=8 hidden=16 vocab=32 dtype=bf16",
    "describe jsd forward tokens=4 vocab=8 dtype=bf16 --impl torch",
    "describe layer_norm forward rows=2 hidden=4 --impl huggingface",
    "run layer_norm forward rows=4 hidden=8 --warmup-ms 1 --rep-ms 1 --flush-bytes 4096 --seed 3",
    "run jsd full tokens=3 vocab=8 dtype=bf16 --warmup-ms 1 --rep-ms 1 --flush-bytes 4096",
]


def main():
    kb = sys.argv[1]
    for req in REQUESTS:
        out = subprocess.run([kb] + req.split() + ["--json"], capture_output=True, text=True)
        d = json.loads(out.stdout)
        parts = {k: d[k] for k in ("operation", "workload", "implementation") if k in d}
        if "composite" in d:
            parts["protocol"] = d["composite"]["protocol"]
        rev = parts.get("implementation", {}).get("spec", {}).get("projectRevision", {})
        rev.pop("commit", None)
        print("%s | status | %s" % (req, d["status"]))
        for k in sorted(parts):
            print("%s | %s | %s" % (req, k, json.dumps(parts[k], sort_keys=True, ensure_ascii=False,
                                                     separators=(",", ":"))))


if __name__ == "__main__":
    main()
