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


def _graph_modes(ctx, fwd, grads, upstream, copies=()):
    """forward / backward / full of fwd() -> {output: tensor} as Liger's scripts time them: the
    backward is torch.autograd.backward of the outputs with the random upstream gradients kbench
    filled (upstream: {output: upstream input}; an output without one is a loss, differentiated with
    1 as loss.backward() does), retaining the graph; grads: {gradient name: leaf}; copies: (leaf,
    kbench's input) pairs, copied before each call."""
    leaves = list(grads.values())
    if ctx.mode == "forward":
        return Step(fwd, leaves, copies)

    def backward_of(out):
        outs = list(out.values())
        ups = [ctx.inputs[upstream[k]].reshape(v.shape) if k in upstream else torch.ones_like(v)
               for k, v in out.items()]
        torch.autograd.backward(outs, ups, retain_graph=True)
        return {g: leaf.grad for g, leaf in grads.items()}
    if ctx.mode == "backward":
        st = {}
        st["out"] = fwd()

        def backward():
            return backward_of(st["out"])
        return Step(backward, leaves, copies, lambda: st.update(out=fwd()))

    def full():
        out = fwd()
        res = backward_of(out)
        res.update(out)
        return res
    return Step(full, leaves, copies)


class _LlamaStyleMLP(torch.nn.Module):
    """The huggingface baseline of Liger's swiglu and geglu scripts (Transformers' LlamaMLP with
    hidden_act silu or gelu_pytorch_tanh): three bias-free projections, down(act(gate(x)) * up(x))."""

    def __init__(self, hidden, intermediate, act):
        super().__init__()
        self.gate_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = torch.nn.Linear(intermediate, hidden, bias=False)
        self.act = act

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


def _gated_mlp(ctx, impl, act_name):
    B, T, H, I = (ctx.axes[k] for k in ("batch", "seq", "hidden", "intermediate"))
    if impl == "liger":
        from liger_kernel.transformers.swiglu import LigerSwiGLUMLP
        from liger_kernel.transformers.geglu import LigerGEGLUMLP

        class _Cfg:
            hidden_size, intermediate_size, hidden_act = H, I, act_name
        m = (LigerSwiGLUMLP if act_name == "silu" else LigerGEGLUMLP)(_Cfg())
    else:
        act = torch.nn.SiLU() if act_name == "silu" else torch.nn.GELU(approximate="tanh")
        m = _LlamaStyleMLP(H, I, act)
    m = m.to(ctx.device, ctx.torch_dtype)
    params = {"w_gate": m.gate_proj.weight, "w_up": m.up_proj.weight, "w_down": m.down_proj.weight}
    copies = [(p, ctx.inputs[name].reshape(p.shape)) for name, p in params.items()]
    x = _leaf(ctx.inputs["x"].reshape(B, T, H))
    copies.append((x, ctx.inputs["x"].reshape(B, T, H)))
    with torch.no_grad():
        for p, src in copies:
            p.copy_(src)
    grads = {"dx": x, "dw_gate": params["w_gate"], "dw_up": params["w_up"], "dw_down": params["w_down"]}
    return _graph_modes(ctx, lambda: {"y": m(x)}, grads, {"y": "dy"}, copies)


def swiglu(ctx, impl):
    return _gated_mlp(ctx, impl, "silu")


def geglu(ctx, impl):
    return _gated_mlp(ctx, impl, "gelu_pytorch_tanh")


def _elementwise(ctx, fn):
    x = _leaf(ctx.inputs["x"])
    return _graph_modes(ctx, lambda: {"y": fn(x)}, {"dx": x}, {"y": "dy"}, [(x, ctx.inputs["x"])])


def relu_squared(ctx, impl):
    """The torch baseline of Liger's relu_squared script (Transformers' relu2: relu(x) squared)."""
    if impl == "liger":
        from liger_kernel.transformers.functional import liger_relu_squared
        return _elementwise(ctx, liger_relu_squared)
    return _elementwise(ctx, lambda x: torch.square(torch.relu(x)))


def softmax(ctx, impl):
    """The torch baseline of Liger's softmax script: torch.softmax over the last dimension."""
    if impl == "liger":
        from liger_kernel.transformers.softmax import LigerSoftmax
        m = LigerSoftmax()
        return _elementwise(ctx, m)
    return _elementwise(ctx, lambda x: torch.softmax(x, dim=-1))


def fused_add_rms_norm(ctx, impl):
    """The huggingface baseline of Liger's fused_add_rms_norm script: the residual add, then the
    Llama RMSNorm; returns the normalized activation and the post-add residual."""
    H = ctx.axes["hidden"]
    if impl == "liger":
        from liger_kernel.transformers.rms_norm import LigerFusedAddRMSNorm
        m = LigerFusedAddRMSNorm(H, eps=EPS)
    else:
        norm = _LlamaStyleRMSNorm(H, EPS)

        class _AddNorm(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = norm
                self.weight = norm.weight

            def forward(self, x, residual):
                h = x + residual
                return self.norm(h), h
        m = _AddNorm()
    m = m.to(ctx.device, ctx.torch_dtype)
    x, r = _leaf(ctx.inputs["x"]), _leaf(ctx.inputs["residual"])
    copies = [(x, ctx.inputs["x"]), (r, ctx.inputs["residual"]), (m.weight, ctx.inputs["weight"].reshape(H))]
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(H))

    def fwd():
        y, h = m(x, r)
        return {"y": y, "residual_out": h}
    return _graph_modes(ctx, fwd, {"dx": x, "dresidual": r, "dweight": m.weight},
                        {"y": "dy", "residual_out": "dresidual_out"}, copies)


def group_norm(ctx, impl):
    """The huggingface baseline of Liger's group_norm script: torch.nn.GroupNorm(channels //
    channels_per_group, channels, eps) over a batch x channels x hidden input."""
    B, C, H, G = (ctx.axes[k] for k in ("batch", "channels", "hidden", "groups"))
    if impl == "liger":
        from liger_kernel.transformers.group_norm import LigerGroupNorm
        m = LigerGroupNorm(num_channels=C, num_groups=G, eps=EPS)
    else:
        m = torch.nn.GroupNorm(num_groups=G, num_channels=C, eps=EPS)
    m = m.to(ctx.device, ctx.torch_dtype)
    x = _leaf(ctx.inputs["x"].reshape(B, C, H))
    copies = [(x, ctx.inputs["x"].reshape(B, C, H)), (m.weight, ctx.inputs["weight"].reshape(C)),
              (m.bias, ctx.inputs["bias"].reshape(C))]
    with torch.no_grad():
        for p, src in copies:
            p.copy_(src)
    return _graph_modes(ctx, lambda: {"y": m(x)}, {"dx": x, "dweight": m.weight, "dbias": m.bias}, {"y": "dy"},
                        copies)


def cross_entropy(ctx, impl):
    """The huggingface baseline of Liger's cross_entropy script: torch.nn.CrossEntropyLoss() (mean
    over tokens) on logits that require gradients, against int64 targets; backward is
    loss.backward()."""
    if impl == "liger":
        from liger_kernel.transformers.cross_entropy import LigerCrossEntropyLoss
        loss_fn = LigerCrossEntropyLoss()
    else:
        loss_fn = torch.nn.CrossEntropyLoss()
    logits = _leaf(ctx.inputs["logits"])
    target = ctx.inputs["target"].reshape(-1)
    return _graph_modes(ctx, lambda: {"loss": loss_fn(logits, target).reshape(1)}, {"dlogits": logits}, {},
                        [(logits, ctx.inputs["logits"])])


OPS = {"rms_norm": rms_norm, "megatron_rms_norm": rms_norm, "swiglu": swiglu, "geglu": geglu, "relu_squared": relu_squared, "softmax": softmax,
       "fused_add_rms_norm": fused_add_rms_norm, "group_norm": group_norm,
       "cross_entropy": cross_entropy}


def factory(name, op):
    if name not in ("huggingface", "torch", "liger"):
        raise ValueError("no built-in python implementation %r" % name)
    if op not in OPS:
        raise ValueError("no built-in python implementation of %s" % op)
    if name == "liger":
        import liger_kernel  # noqa: F401 -- fails here, with its reason, when it is not importable
    return lambda ctx: OPS[op](ctx, name)
