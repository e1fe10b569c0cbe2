"""distill_jsd_loss's torch baseline (kernels/python/kbench_builtin.py), called directly: kbench
never runs it on the CPU (the operation is bf16 only, and torch's bf16 on the CPU is refused
before it runs, docs/KERNELS.md "bf16 on the CPU"), so no suite reached it through kbench.  Its
step, on bf16 inputs, against the loss written out here in float64 from the definition
(kernels/ops/distill_jsd_loss.c: per token, 0.5 x the student's cross-entropy on the target + 0.5 x
the JSD of student and teacher at beta 0.5, each / T (batchmean); the loss their sum), and the shapes kbench expects
(loss [1, 1], token_loss [T, 1], the gradients those of their inputs).  Prints TAP lines;
test/suites/kernels.sh runs it."""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../kernels/python"))
import kbench_builtin  # noqa: E402

n = failed = 0


def ok(cond, what):
    global n, failed
    n += 1
    failed += 0 if cond else 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))


class Ctx:
    pass


torch.manual_seed(7)
T, H, V = 6, 16, 40
ctx = Ctx()
ctx.axes = {"tokens": T, "hidden": H, "vocab": V}
ctx.mode = "full"
ctx.device = "cpu"
ctx.torch_dtype = torch.bfloat16
ctx.inputs = {"student_input": torch.randn(T, H // 2).bfloat16(), "student_weight": torch.randn(V, H // 2).bfloat16(),
              "teacher_input": torch.randn(T, H).bfloat16(), "teacher_weight": torch.randn(V, H).bfloat16(),
              "target": torch.randint(0, V, (T,))}
step = kbench_builtin.factory("torch", "distill_jsd_loss")(ctx)
step.reset()
try:
    out = step()
except Exception as e:  # noqa: BLE001 -- a step that cannot run is the failure reported
    out = {"error": repr(e)}
ok("error" not in out, "torch distill_jsd_loss's step runs on bf16 inputs (%s)" % out.get("error", "ran"))
shapes = {k: tuple(v.shape) for k, v in out.items() if torch.is_tensor(v)}
want = {"loss": (1, 1), "token_loss": (T, 1), "grad_student_input": (T, H // 2), "grad_student_weight": (V, H // 2)}
ok(shapes == want, "its outputs have the shapes kbench describes: %s" % shapes)

# float64, from the definition
xs, ws = ctx.inputs["student_input"].double(), ctx.inputs["student_weight"].double()
xt, wt = ctx.inputs["teacher_input"].double(), ctx.inputs["teacher_weight"].double()
tgt = ctx.inputs["target"]
want_tok = []
for t in range(T):
    zs = [sum(xs[t, k].item() * ws[v, k].item() for k in range(H // 2)) for v in range(V)]
    zt = [sum(xt[t, k].item() * wt[v, k].item() for k in range(H)) for v in range(V)]
    ms, mt = max(zs), max(zt)
    lse_s = ms + math.log(sum(math.exp(z - ms) for z in zs))
    lse_t = mt + math.log(sum(math.exp(z - mt) for z in zt))
    p = [math.exp(z - lse_s) for z in zs]
    q = [math.exp(z - lse_t) for z in zt]
    m = [(a + b) / 2 for a, b in zip(p, q)]
    jsd = 0.5 * sum(a * math.log(a / c) for a, c in zip(p, m)) + 0.5 * sum(b * math.log(b / c) for b, c in zip(q, m))
    hard = (lse_s - zs[int(tgt[t])]) / T
    want_tok.append(0.5 * hard + 0.5 * jsd / T)
if "token_loss" in out and shapes.get("token_loss") == (T, 1):
    got = [float(x) for x in out["token_loss"].reshape(-1)]
    worst = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(got, want_tok))
    # (the baseline's logits are a bf16 matmul's, rounded to bf16: 2^-9 of each, about 0.3% of a loss here)
    ok(worst < 1e-2, "its token losses equal the definition's in float64 within 1%% (worst relative error %.2g; "
       "its logits are rounded to bf16)" % worst)
    ok(abs(float(out["loss"].reshape(-1)[0]) - sum(want_tok)) < 1e-2 * max(1.0, abs(sum(want_tok))),
       "its loss is the sum of the token losses (%.6g against %.6g)" % (float(out["loss"].reshape(-1)[0]), sum(want_tok)))
else:
    ok(False, "its token losses equal the definition's in float64 (no token_loss of shape [T, 1])")
    ok(False, "its loss is the sum of the token losses")
print("1..%d" % n)
sys.exit(1 if failed else 0)
