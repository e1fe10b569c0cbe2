#!/usr/bin/env python3
"""bench/liger_time.py: Liger-Kernel's time for one kbench workload, in ms.

Imports liger_kernel from third_party/Liger-Kernel/src (a git-ignored
checkout) and times it with triton.testing.do_bench (warm-up 25 ms, rep
100 ms, median) the way Liger's benchmark scripts do.  Usage:
    bench/liger_time.py OP MODE DTYPE key=value...
Prints the median in ms on the last line.  Used by bench/device.sh.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "third_party", "Liger-Kernel", "src"))

import torch  # noqa: E402
import triton  # noqa: E402

op, mode, dtype = sys.argv[1:4]
ax = {k: int(v) for k, v in (a.split("=", 1) for a in sys.argv[4:] if not a.startswith("dtype="))}
dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
dev = "cuda"


def bench(fwd, params, grad_out=None):
    """Time forward, backward (of a forward done once) or full, as Liger's scripts do."""
    if mode == "forward":
        fn = fwd
    elif mode == "backward":
        y = fwd()
        g = grad_out if grad_out is not None else torch.randn_like(y)
        fn = lambda: y.backward(g, retain_graph=True)  # noqa: E731
    else:
        def fn():
            y = fwd()
            y.backward(grad_out if grad_out is not None else torch.ones_like(y))
    return triton.testing.do_bench(fn, warmup=25, rep=100, grad_to_none=params, quantiles=[0.5])


if op == "layer_norm":
    from liger_kernel.transformers.layer_norm import LigerLayerNorm
    R, H = ax["rows"], ax["hidden"]
    x = torch.randn(R, H, device=dev, dtype=dt, requires_grad=True)
    m = LigerLayerNorm(H, eps=1e-6).to(dev).to(dt)
    ms = bench(lambda: m(x), [x])
elif op == "jsd":
    from liger_kernel.transformers.jsd import LigerJSD
    T, V = ax["tokens"], ax["vocab"]
    inp = torch.randn(T, V, device=dev, dtype=dt).log_softmax(-1).requires_grad_()
    tgt = torch.randn(T, V, device=dev, dtype=dt).log_softmax(-1)
    f = LigerJSD(beta=0.5)
    ms = bench(lambda: f(inp, tgt), [inp], torch.tensor(1.0, device=dev))
elif op == "megatron_cross_entropy":
    from liger_kernel.transformers.cross_entropy import LigerCrossEntropyLoss
    S, B, V = ax["seq"], ax["batch"], ax["vocab"]
    z = torch.randn(S * B, V, device=dev, dtype=dt, requires_grad=True)
    t = torch.randint(0, V, (S * B,), device=dev)
    f = LigerCrossEntropyLoss(reduction="none")
    m2 = "full" if mode == "backward" else mode  # Liger's harness times fwd+bwd as "backward"
    mode = m2
    ms = bench(lambda: f(z, t), [z])
elif op == "distill_jsd_loss":
    from liger_kernel.chunked_loss import LigerFusedLinearJSDLoss
    T, H, V = ax["tokens"], ax["hidden"], ax["vocab"]
    xs = torch.rand(T, H // 2, device=dev, dtype=dt, requires_grad=True)
    xt = torch.rand(T, H, device=dev, dtype=dt)
    ws = torch.nn.Linear(H // 2, V, bias=False, device=dev, dtype=dt)
    wt = torch.nn.Linear(H, V, bias=False, device=dev, dtype=dt)
    tg = torch.randint(0, V, (T,), device=dev)
    f = LigerFusedLinearJSDLoss(weight_hard_loss=0.5, weight_soft_loss=0.5, beta=0.5)
    ms = bench(lambda: f(xs, ws.weight, xt, wt.weight, tg), [xs, ws.weight], torch.tensor(1.0, device=dev))
else:
    sys.exit(f"unknown op {op}")
print(f"{ms:.4f}")
