"""Each float64 reference of kernels/python/kbench_reference.py against an independent
formulation, on one shape per mode (test/suites/operations.sh).  Prints TAP lines."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../kernels/python"))
import kbench_reference  # noqa: E402

torch.manual_seed(26)
n = 0
failed = 0


def ok(cond, what):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))


def close(a, b):
    return torch.allclose(a, b, rtol=1e-12, atol=1e-12)


def rms_norm_tensors():
    return [{"name": "x", "role": "input"}, {"name": "weight", "role": "input"}, {"name": "y", "role": "output"},
            {"name": "dy", "role": "upstream", "of": "y"}, {"name": "dx", "role": "gradient", "of": "x"},
            {"name": "dweight", "role": "gradient", "of": "weight"}]


# rms_norm: the forward against x / ||x|| * sqrt(H) * w (a second formula), the gradients
# against the closed form dx = rstd (w dy - xhat mean(xhat w dy)), dweight = sum_rows dy xhat
R, H, eps = 7, 33, 1e-6
x = torch.randn(R, H, dtype=torch.float64)
w = torch.randn(H, dtype=torch.float64)
dy = torch.randn(R, H, dtype=torch.float64)
inputs = {"x": x, "weight": w, "dy": dy}
for mode in ("forward", "backward", "full"):
    ref = kbench_reference.run("rms_norm", inputs, {"eps": eps}, rms_norm_tensors(), mode)
    rstd = 1.0 / torch.sqrt(torch.linalg.vector_norm(x, dim=-1, keepdim=True) ** 2 / H + eps)
    xhat = x * rstd
    if mode != "backward":
        ok(close(ref["y"], xhat * w), "rms_norm %s: y equals x / sqrt(||x||^2 / H + eps) * w" % mode)
    if mode != "forward":
        c = (xhat * w * dy).mean(-1, keepdim=True)
        ok(close(ref["dx"], rstd * (w * dy - xhat * c)), "rms_norm %s: dx equals the closed-form backward" % mode)
        ok(close(ref["dweight"], (dy * xhat).sum(0)), "rms_norm %s: dweight equals sum over rows of dy xhat" % mode)

# the comparison itself: equal passes, a perturbation beyond the tolerance fails, a missing output fails
ref = {"y": torch.ones(4, dtype=torch.float64)}
r = kbench_reference.compare(ref, {"y": ref["y"].clone()}, {"y"}, ["y"], 1e-5, 1e-5)
ok(r["matched"] == r["compared"] == 4, "compare: equal values all match")
r = kbench_reference.compare(ref, {"y": ref["y"] + 1e-3}, {"y"}, ["y"], 1e-5, 1e-5)
ok(r["matched"] == 0 and r["worst_ratio"] > 1, "compare: values off by 1e-3 under a 1e-5 tolerance fail")
r = kbench_reference.compare(ref, {}, set(), ["y"], 1e-5, 1e-5)
ok(r["matched"] < r["compared"] and "not returned" in r["detail"], "compare: an output not returned fails")
print("1..%d" % n)
sys.exit(1 if failed else 0)
