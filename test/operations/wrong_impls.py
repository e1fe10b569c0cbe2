"""Deliberately wrong implementations of the operations defined as data (test/suites/operations.sh):
each must fail the float64 check (incorrect_numerical)."""
import torch


def _modes(ctx, fwd, leaves, grads):
    if ctx.mode == "forward":
        return lambda: {"y": fwd()}
    dy = ctx.inputs["dy"]

    def step():
        for t in leaves:
            t.grad = None
        y = fwd()
        y.backward(dy)
        out = grads()
        if ctx.mode == "full":
            out["y"] = y
        return out
    return step


def rms_norm_centered(ctx):
    """An RMSNorm that subtracts the row mean first (a LayerNorm without bias): close, but wrong."""
    x = ctx.inputs["x"].detach().clone().requires_grad_(True)
    w = ctx.inputs["weight"].reshape(-1).detach().clone().requires_grad_(True)

    def fwd():
        h = x.float()
        h = h - h.mean(-1, keepdim=True)
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w
    return _modes(ctx, fwd, [x, w], lambda: {"dx": x.grad, "dweight": w.grad})


def rms_norm_no_dweight(ctx):
    """A correct RMSNorm whose backward does not return dweight: the check must not skip it."""
    x = ctx.inputs["x"].detach().clone().requires_grad_(True)
    w = ctx.inputs["weight"].reshape(-1).detach().clone().requires_grad_(True)

    def fwd():
        h = x.float()
        return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w
    return _modes(ctx, fwd, [x, w], lambda: {"dx": x.grad})
