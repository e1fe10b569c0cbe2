"""kbench_builtin_defs.py: the built-in python implementations of the operations defined as data
(kernels/ops/defs/NAME.json, docs/OPERATIONS.md).

Kept apart from kbench_builtin.py (the four C operations' baselines), whose bytes are digested into
their ImplementationRevisions: adding an operation here leaves those digests as they are.  The
ImplementationRevision of a baseline of an operation defined as data digests this file.

"huggingface" and "torch" are the PyTorch baselines of Liger-Kernel's benchmark scripts
(benchmark/scripts/benchmark_<op>.py), built as they build them; "liger" is Liger-Kernel's module,
where liger_kernel is importable.  Our own code, written from the operations' definitions;
nothing is copied.
"""
import torch

from kbench_builtin import Step, _leaf, versions  # noqa: F401 -- versions: the harness asks this module

EPS = 1e-6


class _LlamaStyleRMSNorm(torch.nn.Module):
    """The huggingface baseline of Liger's rms_norm script (Transformers' Llama RMSNorm): the
    normalization in fp32, cast back to the input dtype, then scaled by the weight."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        dt = x.dtype
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(dt)


def _modes(ctx, fwd, x, params, grad_names):
    """forward / backward / full of a module-like fwd(x) as Liger's scripts time them."""
    leaves = [x] + [p for _, p in params]
    if ctx.mode == "forward":
        return Step(lambda: {"y": fwd(x)}, leaves)
    dy = ctx.inputs["dy"]

    def grads():
        out = {grad_names[0]: x.grad}
        for (name, p), g in zip(params, grad_names[1:]):
            out[g] = p.grad
        return out
    if ctx.mode == "backward":
        y = fwd(x)

        def backward():
            y.backward(dy, retain_graph=True)
            return grads()
        return Step(backward, leaves)

    def full():
        y = fwd(x)
        y.backward(dy, retain_graph=True)
        out = grads()
        out["y"] = y
        return out
    return Step(full, leaves)


def rms_norm(ctx, impl):
    H = ctx.axes["hidden"]
    if impl == "liger":
        from liger_kernel.transformers.rms_norm import LigerRMSNorm
        m = LigerRMSNorm(H, eps=EPS)
    else:
        m = _LlamaStyleRMSNorm(H, EPS)
    m = m.to(ctx.device, ctx.torch_dtype)
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(H))
    x = _leaf(ctx.inputs["x"])
    return _modes(ctx, m, x, [("weight", m.weight)], ["dx", "dweight"])


OPS = {"rms_norm": rms_norm}


def factory(name, op):
    if name not in ("huggingface", "torch", "liger"):
        raise ValueError("no built-in python implementation %r" % name)
    if op not in OPS:
        raise ValueError("no built-in python implementation of %s" % op)
    if name == "liger":
        import liger_kernel  # noqa: F401 -- fails here, with its reason, when it is not importable
    return lambda ctx: OPS[op](ctx, name)
