"""Implementations of affine.json (test/suites/operations.sh, docs/OPERATIONS.md): honest follows
the inputs kbench gives each call; no_bias forgets the shift (fails every mode)."""
import torch


def _affine(ctx, with_bias):
    x, w, b = ctx.inputs["x"], ctx.inputs["w"].reshape(-1), ctx.inputs["b"].reshape(-1)

    def forward():
        return {"y": x * w + b if with_bias else x * w}

    def backward(full):
        # leaves made from the current inputs on every call: kbench changes them between calls
        xl, wl, bl = (t.detach().requires_grad_(True) for t in (x, w, b))
        y = xl * wl + bl if with_bias else xl * wl
        y.backward(ctx.inputs["dy"].reshape(y.shape))
        out = {"dx": xl.grad, "dw": wl.grad, "db": bl.grad if bl.grad is not None else torch.zeros_like(bl)}
        if full:
            out["y"] = y.detach()
        return out
    if ctx.mode == "forward":
        return forward
    return lambda: backward(ctx.mode == "full")


def honest(ctx):
    return _affine(ctx, True)


def no_bias(ctx):
    return _affine(ctx, False)
