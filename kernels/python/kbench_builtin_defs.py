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


def rms_norm(ctx, impl):
    H = ctx.axes["hidden"]
    if impl == "liger":
        from liger_kernel.transformers.rms_norm import LigerRMSNorm
        m = LigerRMSNorm(H, eps=EPS)
    else:
        m = _LlamaStyleRMSNorm(H, EPS)
    m = m.to(ctx.device, ctx.torch_dtype)
    x = _leaf(ctx.inputs["x"])
    copies = [(x, ctx.inputs["x"]), (m.weight, ctx.inputs["weight"].reshape(H))]
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(H))
    return _graph_modes(ctx, lambda: {"y": m(x)}, {"dx": x, "dweight": m.weight}, {"y": "dy"}, copies)


def _graph_modes(ctx, fwd, grads, upstream, copies=(), differentiate=None):
    """forward / backward / full of fwd() -> {output: tensor} as Liger's scripts time them: the
    backward is torch.autograd.backward of the outputs with the random upstream gradients kbench
    filled (upstream: {output: upstream input}; an output without one is a loss, differentiated with
    1 as loss.backward() does), retaining the graph; grads: {gradient name: leaf}; copies: (leaf,
    kbench's input) pairs, copied before each call; differentiate: the outputs the backward starts
    from, where a script differentiates only some (qwen2vl_mrope's q_out), else all."""
    leaves = list(grads.values())
    if ctx.mode == "forward":
        return Step(fwd, leaves, copies)

    def backward_of(out):
        out = {k: v for k, v in out.items() if differentiate is None or k in differentiate}
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


# Liger's tiled_swiglu / tiled_geglu config: the sequence split into 4 shards
TILED_SHARDS = 4


class _SeqTiledMLP(torch.autograd.Function):
    """A pure-torch seq-sharded (tiled) execution of an MLP over batch x seq x hidden (torch_tiled,
    ours; not DeepSpeed's TiledMLP, which is not installed here): the forward runs shard by shard
    along seq without keeping a graph; the backward recomputes each shard's forward and
    differentiates it, summing the weight gradients over the shards (in fp32)."""

    @staticmethod
    def forward(ctx, x, shards, mlp, *params):
        ctx.shards, ctx.mlp, ctx.params = shards, mlp, params
        ctx.save_for_backward(x)
        with torch.no_grad():
            return torch.cat([mlp(part) for part in x.chunk(shards, dim=1)], dim=1)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dxs = []
        dparams = [torch.zeros_like(p, dtype=torch.float32) for p in ctx.params]
        for part, dpart in zip(x.chunk(ctx.shards, dim=1), dy.chunk(ctx.shards, dim=1)):
            part = part.detach().requires_grad_(True)
            with torch.enable_grad():
                out = ctx.mlp(part)
            g = torch.autograd.grad(out, [part] + list(ctx.params), dpart)
            dxs.append(g[0])
            for acc, gp in zip(dparams, g[1:]):
                acc += gp
        return (torch.cat(dxs, dim=1), None, None) + tuple(d.to(p.dtype) for d, p in zip(dparams, ctx.params))


def _gated_mlp(ctx, impl, act_name):
    """swiglu, geglu and their tiled benchmarks (tiled_swiglu, tiled_geglu: the same computation,
    Liger's benchmark_tiled_mlp.py): huggingface/torch the LlamaMLP-style module, liger Liger's
    fused MLP, liger_tiled Liger's seq-sharded one (4 shards), torch_tiled ours (_SeqTiledMLP)."""
    B, T, H, I = (ctx.axes[k] for k in ("batch", "seq", "hidden", "intermediate"))

    class _Cfg:
        hidden_size, intermediate_size, hidden_act = H, I, act_name
    if impl == "liger":
        from liger_kernel.transformers.swiglu import LigerSwiGLUMLP
        from liger_kernel.transformers.geglu import LigerGEGLUMLP
        m = (LigerSwiGLUMLP if act_name == "silu" else LigerGEGLUMLP)(_Cfg())
    elif impl == "liger_tiled":
        from liger_kernel.transformers.tiled_mlp import LigerTiledSwiGLUMLP, LigerTiledGEGLUMLP
        m = (LigerTiledSwiGLUMLP if act_name == "silu" else LigerTiledGEGLUMLP)(_Cfg(), num_shards=TILED_SHARDS)
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
    if impl == "torch_tiled":
        fwd = lambda: {"y": _SeqTiledMLP.apply(x, TILED_SHARDS, m, *params.values())}  # noqa: E731
    else:
        fwd = lambda: {"y": m(x)}  # noqa: E731
    return _graph_modes(ctx, fwd, grads, {"y": "dy"}, copies)


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


def _torch_sparsemax(x):
    z = torch.sort(x, dim=-1, descending=True).values
    k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
    cs = z.cumsum(-1)
    k_star = (1 + k * z > cs).sum(-1, keepdim=True)
    tau = (cs.gather(-1, k_star - 1) - 1) / k_star.to(x.dtype)
    return torch.clamp(x - tau, min=0)


def sparsemax(ctx, impl):
    """The torch baseline of Liger's sparsemax script: the sort-based sparsemax written in torch
    over the last dimension (dim -1), differentiated by autograd."""
    if impl == "liger":
        from liger_kernel.transformers.sparsemax import LigerSparsemax
        return _elementwise(ctx, LigerSparsemax(dim=-1))
    return _elementwise(ctx, _torch_sparsemax)


class _TorchDyT(torch.nn.Module):
    """The torch baseline of Liger's dyt script (its test's TorchDyT with beta): alpha a one-value
    parameter (initialized 0.5), gamma and beta hidden-size parameters; y = gamma tanh(x alpha) + beta."""

    def __init__(self, hidden):
        super().__init__()
        self.alpha = torch.nn.Parameter(torch.ones(1) * 0.5)
        self.gamma = torch.nn.Parameter(torch.ones(hidden))
        self.beta = torch.nn.Parameter(torch.zeros(hidden))

    def forward(self, x):
        return self.gamma * torch.tanh(x * self.alpha) + self.beta


def dyt(ctx, impl):
    """Liger's dyt script with beta: x (tokens x hidden, the dtype) requires gradients, the layer's
    alpha, gamma and beta are parameters (their gradients computed by the backward too).  As the
    script, the module is moved to the device only: its parameters stay fp32 (kbench's values of
    the dtype copied in), so type promotion computes a bf16 x's y and the parameters' gradients in
    fp32 (dalpha, a sum over every value, is then not a bf16 sum)."""
    H = ctx.axes["hidden"]
    if impl == "liger":
        from liger_kernel.transformers.dyt import LigerDyT
        m = LigerDyT(hidden_size=H, beta=True)
    else:
        m = _TorchDyT(H)
    m = m.to(ctx.device)
    x = _leaf(ctx.inputs["x"])
    params = {"alpha": m.alpha, "gamma": m.gamma, "beta": m.beta}
    copies = [(x, ctx.inputs["x"])] + [(p, ctx.inputs[n].reshape(p.shape)) for n, p in params.items()]
    with torch.no_grad():
        for p, src in copies[1:]:
            p.copy_(src)
    grads = {"dx": x}
    grads.update({"d" + n: p for n, p in params.items()})
    return _graph_modes(ctx, lambda: {"y": m(x)}, grads, {"y": "dy"}, copies)


class _NaivePolyNorm(torch.nn.Module):
    """The torch baseline of Liger's poly_norm script (its NaivePolyNorm, after PolyCom): the input
    in fp32, x^3, x^2 and x each RMS-normalized over hidden, weighted by the three weights
    (initialized 1/3) plus the bias (a 0-dim parameter, initialized 1), cast back to the dtype."""

    def __init__(self, eps):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.full((3,), 1.0 / 3.0))
        self.bias = torch.nn.Parameter(torch.tensor(1.0))
        self.eps = eps

    def _norm(self, u):
        return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        dt = x.dtype
        h = x.to(torch.float32)
        out = self.weight[0] * self._norm(h ** 3) + self.weight[1] * self._norm(h ** 2) \
            + self.weight[2] * self._norm(h) + self.bias
        return out.to(dt)


def poly_norm(ctx, impl):
    """Liger's poly_norm script: x (seq x hidden, the dtype) requires gradients, the layer's weight
    and bias are parameters.  As the script, the module is moved to the device only: its parameters
    stay fp32 (kbench's values of the dtype copied in); the forward works in fp32 and casts y back."""
    if impl == "liger":
        from liger_kernel.transformers.poly_norm import LigerPolyNorm
        m = LigerPolyNorm(eps=EPS)
    else:
        m = _NaivePolyNorm(EPS)
    m = m.to(ctx.device)
    x = _leaf(ctx.inputs["x"])
    copies = [(x, ctx.inputs["x"]), (m.weight, ctx.inputs["weight"].reshape(m.weight.shape)),
              (m.bias, ctx.inputs["bias"].reshape(m.bias.shape))]
    with torch.no_grad():
        for p, src in copies[1:]:
            p.copy_(src)
    return _graph_modes(ctx, lambda: {"y": m(x)}, {"dx": x, "dweight": m.weight, "dbias": m.bias}, {"y": "dy"},
                        copies)


def fused_add_rms_norm(ctx, impl):
    """The huggingface baseline of Liger's fused_add_rms_norm script: the residual add, then the
    Llama RMSNorm; returns the normalized activation and the post-add residual."""
    H = ctx.axes["hidden"]
    if impl == "liger":
        from liger_kernel.transformers.fused_add_rms_norm import LigerFusedAddRMSNorm
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


def kl_div(ctx, impl):
    """The torch baseline of Liger's kl_div script: torch.nn.KLDivLoss(reduction="batchmean") of
    log-probabilities that require gradients against target probabilities that do not; backward is
    loss.backward()."""
    if impl == "liger":
        from liger_kernel.transformers.kl_div import LigerKLDIVLoss
        loss_fn = LigerKLDIVLoss(reduction="batchmean")
    else:
        loss_fn = torch.nn.KLDivLoss(reduction="batchmean")
    lp = _leaf(ctx.inputs["log_probs"])
    target = ctx.inputs["target_probs"]
    return _graph_modes(ctx, lambda: {"loss": loss_fn(lp, target).reshape(1)}, {"dlog_probs": lp}, {},
                        [(lp, ctx.inputs["log_probs"])])


class _TorchTVDLoss(torch.nn.Module):
    """The torch baseline of Liger's tvd script, batchmean reduction: the elementwise |p - q| / 2
    summed, divided by the rows."""

    def forward(self, p, q):
        return torch.sum(torch.abs(p - q) / 2.0) / p.size(0)


def tvd(ctx, impl):
    """Liger's tvd script: p requires gradients, q (the target) does not; backward is loss.backward()."""
    if impl == "liger":
        from liger_kernel.transformers.tvd import LigerTVDLoss
        loss_fn = LigerTVDLoss(reduction="batchmean")
    else:
        loss_fn = _TorchTVDLoss()
    p = _leaf(ctx.inputs["p"])
    q = ctx.inputs["q"]
    return _graph_modes(ctx, lambda: {"loss": loss_fn(p, q).reshape(1)}, {"dp": p}, {}, [(p, ctx.inputs["p"])])
def fused_linear_cross_entropy(ctx, impl):
    """The huggingface (torch) baseline of Liger's fused_linear_cross_entropy script: a bias-free
    torch.nn.Linear(hidden, vocab) LM head, then torch.nn.CrossEntropyLoss(ignore_index=-100,
    reduction="mean") on the materialized logits; the input and the head's weight require
    gradients; backward is loss.backward()."""
    H, V = ctx.axes["hidden"], ctx.axes["vocab"]
    lin = torch.nn.Linear(H, V, bias=False).to(ctx.device, ctx.torch_dtype)
    if impl == "liger":
        from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss
        fused = LigerFusedLinearCrossEntropyLoss(ignore_index=-100, reduction="mean")
        loss_of = lambda x, t: fused(lin.weight, x, t)  # noqa: E731
    else:
        ce = torch.nn.CrossEntropyLoss(ignore_index=-100, reduction="mean")
        loss_of = lambda x, t: ce(lin(x), t)  # noqa: E731
    x = _leaf(ctx.inputs["x"])
    target = ctx.inputs["target"].reshape(-1)
    copies = [(x, ctx.inputs["x"]), (lin.weight, ctx.inputs["weight"].reshape(V, H))]
    with torch.no_grad():
        lin.weight.copy_(ctx.inputs["weight"].reshape(V, H))
    return _graph_modes(ctx, lambda: {"loss": loss_of(x, target).reshape(1)}, {"dx": x, "dweight": lin.weight}, {},
                        copies)


def fused_linear_jsd(ctx, impl):
    """The torch baseline of Liger's fused_linear_jsd script: bias-free student and teacher
    torch.nn.Linear(hidden, vocab) heads, log_softmax of each head's logits / temperature 1 in the
    dtype, then the JSD in fp32 (m = lerp(q, p, beta), beta KL(p || m) + (1 - beta) KL(q || m) by
    KLDivLoss(reduction="none", log_target=True), summed over vocab, / tokens, summed), cast back to
    the dtype.  The student input requires gradients, the teacher input does not; both heads'
    weights are Parameters, so the baseline's backward computes the teacher head's gradient too, as
    the script's does (timed, not returned: the definition's gradients are the student's, the ones
    Liger's fused function returns)."""
    H, V, beta, temperature = ctx.axes["hidden"], ctx.axes["vocab"], 0.5, 1.0
    s_lin = torch.nn.Linear(H, V, bias=False).to(ctx.device, ctx.torch_dtype)
    t_lin = torch.nn.Linear(H, V, bias=False).to(ctx.device, ctx.torch_dtype)
    xs = _leaf(ctx.inputs["student_input"])
    xt = ctx.inputs["teacher_input"]
    copies = [(xs, ctx.inputs["student_input"]), (s_lin.weight, ctx.inputs["student_weight"].reshape(V, H)),
              (t_lin.weight, ctx.inputs["teacher_weight"].reshape(V, H))]
    with torch.no_grad():
        for p, src in copies[1:]:
            p.copy_(src)
    if impl == "liger":
        from liger_kernel.transformers.fused_linear_jsd import LigerFusedLinearJSD
        fused = LigerFusedLinearJSD(jsd_beta=beta, ignore_index=-100, temperature=temperature)

        def loss():
            return fused(xs, s_lin.weight, xt, t_lin.weight, None)
    else:
        kl = torch.nn.KLDivLoss(reduction="none", log_target=True)

        def loss():
            log_q = torch.log_softmax(s_lin(xs) / temperature, dim=-1).float()
            log_p = torch.log_softmax(t_lin(xt) / temperature, dim=-1).float()
            m = torch.lerp(torch.exp(log_q), torch.exp(log_p), beta)
            rows = beta * kl(torch.log(m), log_p).sum(dim=-1) + (1 - beta) * kl(torch.log(m), log_q).sum(dim=-1)
            return (rows / log_q.shape[0]).sum().to(ctx.torch_dtype)
    step = _graph_modes(ctx, lambda: {"loss": loss().reshape(1)},
                        {"dstudent_input": xs, "dstudent_weight": s_lin.weight}, {}, copies)
    step.leaves.append(t_lin.weight)  # its gradient reset before each call, as the student's
    return step

def distill_cosine_loss(ctx, impl):
    """The torch baseline of Liger's distill_cosine_loss script (its TorchCosineSimilarityLoss, the
    test suite's HFCosineLoss): bias-free student (hidden/2 -> vocab) and teacher (hidden -> vocab)
    torch.nn.Linear heads; the student's logits x_s @ W_s^T cast to fp32, the teacher's computed
    under no_grad (the teacher takes no gradient); hard = torch.nn.CrossEntropyLoss(ignore_index=-100)
    on the student's logits; both logits / temperature 1; soft = mean over tokens of beta (1 -
    cosine_similarity(normalize(s), normalize(t))), beta 1 (HFCosineLoss's default, which the script
    does not change); loss = 0.5 hard + 0.5 soft.  The student input and head's weight require
    gradients.  Liger's module is called with beta 1 here, the torch provider's (Liger's script
    leaves its Function at its own default, 0.5: its liger and torch rows then differ in the soft
    term's weight)."""
    Hs, H, V = ctx.axes["student_hidden"], ctx.axes["hidden"], ctx.axes["vocab"]
    w_hard, w_soft, beta, temperature = 0.5, 0.5, 1.0, 1.0
    s_lin = torch.nn.Linear(Hs, V, bias=False).to(ctx.device, ctx.torch_dtype)
    t_lin = torch.nn.Linear(H, V, bias=False).to(ctx.device, ctx.torch_dtype)
    xs = _leaf(ctx.inputs["student_input"])
    xt = ctx.inputs["teacher_input"]
    target = ctx.inputs["target"].reshape(-1)
    copies = [(xs, ctx.inputs["student_input"]), (s_lin.weight, ctx.inputs["student_weight"].reshape(V, Hs)),
              (t_lin.weight, ctx.inputs["teacher_weight"].reshape(V, H))]
    with torch.no_grad():
        for p, src in copies[1:]:
            p.copy_(src)
    if impl == "liger":
        from liger_kernel.chunked_loss.cosine_similarity_loss import LigerFusedLinearCosineSimilarityFunction

        def loss():
            return LigerFusedLinearCosineSimilarityFunction.apply(xs, s_lin.weight, xt, t_lin.weight, target, None, None,
                                                                  w_hard, w_soft, beta)
    else:
        ce = torch.nn.CrossEntropyLoss(ignore_index=-100)

        def loss():
            s = (xs @ s_lin.weight.t()).float()
            with torch.no_grad():
                t = (xt @ t_lin.weight.t()).float()
            hard = ce(s, target)
            s, t = s / temperature, t / temperature
            unit = torch.nn.functional.normalize
            cos = torch.nn.functional.cosine_similarity(unit(s, p=2, dim=-1), unit(t, p=2, dim=-1), dim=-1)
            return w_hard * hard + w_soft * (beta * (1 - cos)).mean()
    return _graph_modes(ctx, lambda: {"loss": loss().reshape(1)},
                        {"dstudent_input": xs, "dstudent_weight": s_lin.weight}, {}, copies)


ROPE_BASE = 10000.0  # Transformers' default rope_theta, which Liger's rope and llama4_rope scripts keep


def _rope_inv_freq(ctx):
    hd = ctx.axes["head_dim"]
    return 1.0 / ROPE_BASE ** (torch.arange(0, hd, 2, dtype=torch.int64).to(ctx.device, torch.float32) / hd)


def _rope_leaves(ctx, layout):
    """q and k as Liger's scripts make them: leaves of 1 x seq x heads x head_dim; layout "bhsd"
    (rope) uses their transposed views, as the script's .transpose(1, 2).  Returns (q, k, the
    leaves, the copies, a function turning the leaves' gradients into the definition's layout)."""
    T, hd = ctx.axes["seq"], ctx.axes["head_dim"]
    leaves, copies, views = [], [], []
    for name, heads in (("q", ctx.axes["q_heads"]), ("k", ctx.axes["kv_heads"])):
        if layout == "bhsd":
            src = ctx.inputs[name].reshape(1, heads, T, hd).transpose(1, 2)
        else:
            src = ctx.inputs[name].reshape(1, T, heads, hd)
        leaf = _leaf(src.contiguous())
        leaves.append(leaf)
        copies.append((leaf, src))
        views.append(leaf.transpose(1, 2) if layout == "bhsd" else leaf)

    def grads_layout(g):
        return g.transpose(1, 2) if layout == "bhsd" else g
    return views[0], views[1], leaves, copies, grads_layout


def _rope_modes(ctx, fwd, leaves, copies, grads_layout):
    step = _graph_modes(ctx, fwd, {"dq": leaves[0], "dk": leaves[1]}, {"q_out": "dq_out", "k_out": "dk_out"},
                        copies)
    inner = step.fn

    def fn():
        out = inner()
        for g in ("dq", "dk"):
            if g in out:
                out[g] = grads_layout(out[g])
        return out
    step.fn = fn
    return step


def rope(ctx, impl):
    """The huggingface baseline of Liger's rope script: Transformers' Llama rotary embedding
    (LlamaRotaryEmbedding(head_dim), base 10000): cos and sin of positions 0..seq-1, computed in fp32
    and cast to the dtype before timing; apply_rotary_pos_emb: q cos + rotate_half(q) sin on the
    1 x heads x seq x head_dim views of 1 x seq x heads x head_dim leaves."""
    T = ctx.axes["seq"]
    q, k, leaves, copies, layout = _rope_leaves(ctx, "bhsd")
    pos = torch.arange(T, device=ctx.device, dtype=torch.int64)[None, :]
    freqs = (_rope_inv_freq(ctx)[None, :, None] @ pos[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(ctx.torch_dtype), emb.sin().to(ctx.torch_dtype)
    if impl == "liger":
        from liger_kernel.transformers.rope import liger_rotary_pos_emb

        def fwd():
            qo, ko = liger_rotary_pos_emb(q, k, cos, sin, pos)
            return {"q_out": qo, "k_out": ko}
    else:
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)

        def rotate_half(x):
            h = x.shape[-1] // 2
            return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

        def fwd():
            return {"q_out": q * c + rotate_half(q) * s, "k_out": k * c + rotate_half(k) * s}
    return _rope_modes(ctx, fwd, leaves, copies, layout)


def llama4_rope(ctx, impl):
    """The huggingface baseline of Liger's llama4_rope script: Transformers' Llama 4 text rotary
    embedding (base 10000, no scaling): freqs_cis = polar(1, angle) of positions 0..seq-1 before
    timing; apply_rotary_emb: adjacent pairs of q and k in fp32 as complex numbers times freqs_cis,
    cast back to the dtype, on 1 x seq x heads x head_dim leaves."""
    T = ctx.axes["seq"]
    q, k, leaves, copies, layout = _rope_leaves(ctx, "bshd")
    pos = torch.arange(T, device=ctx.device, dtype=torch.int64)[None, :]
    freqs = (_rope_inv_freq(ctx)[None, :, None] @ pos[:, None, :].float()).transpose(1, 2)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    if impl == "liger":
        from liger_kernel.transformers.llama4_rope import liger_llama4_text_rotary_pos_emb

        def fwd():
            qo, ko = liger_llama4_text_rotary_pos_emb(q, k, freqs_cis)
            return {"q_out": qo, "k_out": ko}
    else:
        f = freqs_cis[:, :, None, :]

        def rot(x):
            xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(xc * f).flatten(3).type_as(x)

        def fwd():
            return {"q_out": rot(q), "k_out": rot(k)}
    return _rope_modes(ctx, fwd, leaves, copies, layout)


MROPE_THETA = 1000000.0  # the rope_theta of Liger's qwen2vl_mrope script's Qwen2VLTextConfig


def qwen2vl_mrope(ctx, impl):
    """The huggingface baseline of Liger's qwen2vl_mrope script: Transformers' Qwen2-VL rotary
    embedding and apply_multimodal_rotary_pos_emb (written here: Transformers is not a dependency).
    Before timing, cos and sin of the position ids 0..3 seq-1 viewed as 3 x 1 x seq (the temporal,
    height and width rows), inv_freq of rope_theta 1e6 over head_dim, in fp32, cast to the dtype;
    timed: the rows gathered by mrope_section [section_t, section_hw, section_hw] repeated for both
    halves of head_dim, then q cos + rotate_half(q) sin and k likewise, on the 1 x heads x seq x
    head_dim views of 1 x seq x heads x head_dim leaves (both require gradients, as the script's);
    the backward is q_out's alone, as the script's fwd_fn()[0]."""
    T, hd = ctx.axes["seq"], ctx.axes["head_dim"]
    section = [ctx.axes["section_t"], ctx.axes["section_hw"], ctx.axes["section_hw"]]
    q, k, leaves, copies, layout = _rope_leaves(ctx, "bhsd")
    inv_freq = 1.0 / MROPE_THETA ** (torch.arange(0, hd, 2, dtype=torch.int64).to(ctx.device, torch.float32) / hd)
    pos = torch.arange(3 * T, device=ctx.device, dtype=torch.int64).view(3, 1, T)
    freqs = (inv_freq[None, None, :, None].expand(3, 1, -1, 1) @ pos[:, :, None, :].float()).transpose(2, 3)
    emb = torch.cat((freqs, freqs), dim=-1)                  # 3 x 1 x seq x head_dim
    cos, sin = emb.cos().to(ctx.torch_dtype), emb.sin().to(ctx.torch_dtype)
    if impl == "liger":
        from liger_kernel.transformers.qwen2vl_mrope import liger_multimodal_rotary_pos_emb

        def fwd():
            qo, ko = liger_multimodal_rotary_pos_emb(q, k, cos, sin, section)
            return {"q_out": qo, "k_out": ko}
    else:
        def rotate_half(x):
            h = x.shape[-1] // 2
            return torch.cat((-x[..., h:], x[..., :h]), dim=-1)

        def by_section(t):
            parts = t.split(section * 2, dim=-1)
            return torch.cat([p[i % 3] for i, p in enumerate(parts)], dim=-1).unsqueeze(1)

        def fwd():
            c, s = by_section(cos), by_section(sin)
            return {"q_out": q * c + rotate_half(q) * s, "k_out": k * c + rotate_half(k) * s}
    step = _graph_modes(ctx, fwd, {"dq": leaves[0]}, {"q_out": "dq_out"}, copies, differentiate=("q_out",))
    inner = step.fn

    def fn():
        out = inner()
        if "dq" in out:
            out["dq"] = layout(out["dq"])
        return out
    step.fn = fn
    step.leaves = leaves
    return step


def embedding(ctx, impl):
    """The huggingface baseline of Liger's embedding script: torch.nn.Embedding(vocab, hidden) on
    batch x seq int64 ids drawn in [0, vocab); backward is y.backward(dy)."""
    B, T, D, V = (ctx.axes[k] for k in ("batch", "seq", "hidden", "vocab"))
    if impl == "liger":
        from liger_kernel.transformers.experimental.embedding import LigerEmbedding
        m = LigerEmbedding(V, D)
    else:
        m = torch.nn.Embedding(V, D)
    m = m.to(ctx.device, ctx.torch_dtype)
    copies = [(m.weight, ctx.inputs["weight"].reshape(V, D))]
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(V, D))
    ids = ctx.inputs["input_ids"].reshape(B, T)
    return _graph_modes(ctx, lambda: {"y": m(ids)}, {"dweight": m.weight}, {"y": "dy"}, copies)


GRPO_EPS = 0.2  # clip epsilon, low and high, of Liger's GRPO scripts (not bound by Liger's mapping)


def _torch_grpo_loss(logits, ids, adv, level):
    """The torch GRPO loss of Liger's grpo scripts, on-policy (old logps None: the ratio is
    exp(logp - logp.detach())), temperature 1, beta 0, eps 0.2, every completion token masked in:
    the per-sequence mean of the clipped per-token loss, then the mean over sequences."""
    logp = torch.log_softmax(logits[:, :-1, :], dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    log_ratio = logp - logp.detach()
    mask = torch.ones(ids.shape, device=logits.device)
    if level == "sequence":  # GSPO: the masked mean log-ratio of each sequence, one ratio for its tokens
        log_ratio = ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
    coef_1 = torch.exp(log_ratio)
    coef_2 = torch.clamp(coef_1, 1 - GRPO_EPS, 1 + GRPO_EPS)
    a = adv.unsqueeze(-1)
    per_token = -torch.minimum(coef_1 * a, coef_2 * a)
    return ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()


def _grpo_loss(ctx, impl, level):
    """The torch baseline of Liger's GRPO loss (token or sequence importance sampling) on batch x
    (seq + 1) x vocab logits that require gradients, int64 completion ids, per-sequence advantages
    that do not; returns the loss only (Liger's function returns (loss, metrics))."""
    B, T, V = ctx.axes["batch"], ctx.axes["seq"], ctx.axes["vocab"]
    src = ctx.inputs["logits"].reshape(B, T + 1, V)
    logits = _leaf(src)
    ids = ctx.inputs["completion_ids"].reshape(B, T)
    adv = ctx.inputs["advantages"].reshape(B)
    if impl == "liger":
        from liger_kernel.transformers.grpo_loss import triton_grpo_loss

        def loss_fn():
            return triton_grpo_loss(logits, None, None, ids, adv, None, temperature=1.0, beta=0.0,
                                    eps_low=GRPO_EPS, eps_high=GRPO_EPS, inplace=False, loss_type="grpo",
                                    importance_sampling_level=level, reduce=True)[0]
    else:
        def loss_fn():
            return _torch_grpo_loss(logits, ids, adv, level)
    return _graph_modes(ctx, lambda: {"loss": loss_fn().reshape(1)}, {"dlogits": logits}, {}, [(logits, src)])


def grpo_loss_token(ctx, impl):
    return _grpo_loss(ctx, impl, "token")


def grpo_loss_sequence(ctx, impl):
    return _grpo_loss(ctx, impl, "sequence")


# The preference losses: Liger's benchmark scripts (benchmark_orpo_loss.py, benchmark_simpo_loss.py,
# benchmark_cpo_loss.py) time an LM head (torch.nn.Linear(H, V, bias=False) in the dtype) followed by
# the loss, forward = the loss (element [0] of the returned tuple: the auxiliary metrics are not
# timed outputs), backward = loss.backward().  The huggingface provider is Liger's torch reference
# (test/utils.py's HFAlignmentLoss.get_batch_loss_metrics with HFORPOLoss / HFCPOLoss): the logits
# cast to fp32, the chosen half's NLL (CrossEntropyLoss, ignore_index -100), the per-sequence
# log-probabilities of the targets (log_softmax, gathered, masked by ignore_index; averaged over the
# sequence or summed), then loss = alpha * NLL + mean of the pairwise losses.  Defaults of Liger's
# modules, fixed (the Liger import binds no scalar): alpha 1, beta 0.1, SimPO's gamma 0.5,
# label smoothing 0.
PREF_IGNORE, PREF_ALPHA, PREF_BETA, SIMPO_GAMMA = -100, 1.0, 0.1, 0.5


def _hf_alignment_loss(x, weight, target, kind):
    """HFAlignmentLoss.get_batch_loss_metrics's loss for kind 'orpo', 'simpo' or 'cpo'."""
    F = torch.nn.functional
    half = x.shape[0] // 2
    all_logits = (x @ weight.t()).float()
    V = all_logits.shape[-1]
    nll = torch.nn.CrossEntropyLoss(ignore_index=PREF_IGNORE)(all_logits[:half].reshape(-1, V),
                                                              target[:half].reshape(-1))
    mask = target != PREF_IGNORE
    labels = torch.where(mask, target, 0)
    tok = torch.gather(all_logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
    if kind == "cpo":  # TorchLMHeadCPO: average_log_prob = (loss_type == "simpo"), False for sigmoid
        logps = (tok * mask).sum(-1)
    else:
        logps = (tok * mask).sum(-1) / mask.sum(-1)
    c, r = logps[:half], logps[half:]
    if kind == "orpo":
        log_odds = (c - r) - (torch.log1p(-torch.exp(c)) - torch.log1p(-torch.exp(r)))
        losses = -PREF_BETA * F.logsigmoid(log_odds)
    elif kind == "simpo":  # HFCPOLoss(loss_type="simpo"): logits - gamma / beta, then beta * logits
        losses = -F.logsigmoid(PREF_BETA * ((c - r) - SIMPO_GAMMA / PREF_BETA))
    else:
        losses = -F.logsigmoid(PREF_BETA * (c - r))
    return nll * PREF_ALPHA + losses.mean()


def _preference(ctx, impl, kind):
    B, T, H, V = (ctx.axes[k] for k in ("batch", "seq", "hidden", "vocab"))
    if B % 2:
        raise ValueError("batch %d is odd: it holds the chosen sequences, then as many rejected ones" % B)
    lin = torch.nn.Linear(H, V, bias=False).to(ctx.device, ctx.torch_dtype)
    copies = [(lin.weight, ctx.inputs["weight"].reshape(V, H))]
    x = _leaf(ctx.inputs["x"].reshape(B, T, H))
    copies.append((x, ctx.inputs["x"].reshape(B, T, H)))
    with torch.no_grad():
        for p, src in copies:
            p.copy_(src)
    target = ctx.inputs["target"].reshape(B, T)
    if impl == "liger":
        from liger_kernel.chunked_loss import (LigerFusedLinearCPOLoss, LigerFusedLinearORPOLoss,
                                               LigerFusedLinearSimPOLoss)
        if kind == "orpo":
            m = LigerFusedLinearORPOLoss(ignore_index=PREF_IGNORE, beta=PREF_BETA)
        elif kind == "simpo":
            m = LigerFusedLinearSimPOLoss(ignore_index=PREF_IGNORE, beta=PREF_BETA, alpha=PREF_ALPHA,
                                          gamma=SIMPO_GAMMA)
        else:
            m = LigerFusedLinearCPOLoss(ignore_index=PREF_IGNORE, beta=PREF_BETA, alpha=PREF_ALPHA)

        def fwd():
            return {"loss": m(lin.weight, x, target)[0].reshape(1)}
    else:
        def fwd():
            return {"loss": _hf_alignment_loss(x, lin.weight, target, kind).reshape(1)}
    return _graph_modes(ctx, fwd, {"dx": x, "dweight": lin.weight}, {}, copies)


def fused_linear_orpo_loss(ctx, impl):
    return _preference(ctx, impl, "orpo")


def fused_linear_simpo_loss(ctx, impl):
    return _preference(ctx, impl, "simpo")


def fused_linear_cpo_loss(ctx, impl):
    return _preference(ctx, impl, "cpo")


# kto_loss: Liger's benchmark_kto_loss.py times a policy and a reference LM head
# (torch.nn.Linear(H, V, bias=True) each, in the dtype) followed by the loss, forward = the loss
# (element [0] of the returned tuple), backward = loss.backward().  The huggingface provider is
# Liger's torch reference HFKTOLoss (test/chunked_loss/test_kto_loss.py through test/utils.py's
# HFAlignmentLoss.get_batch_loss_metrics, unpaired, no NLL term): the policy logits cast to fp32, the
# reference logits in the dtype under no_grad, each sequence's average target log-probability
# (targets equal to ignore_index masked out), split by the boolean preference labels, then the mean
# of 1 - sigmoid(beta (chosen log-ratio - kl)) and 1 - sigmoid(beta (kl - rejected log-ratio)).
# ignore_index 42 and beta 0.1 as the CSV's config (beta is the WorkloadCase's scalar, fixed here
# as the other baselines fix theirs).  x, weight and bias take gradients (Liger's test_kto_loss; the
# script's own _input does not require grad), the reference model's tensors do not.
KTO_IGNORE, KTO_BETA = 42, 0.1


def _hf_kto_logps(logits, target):
    """HFAlignmentLoss.get_batch_logps, average_log_prob=True."""
    mask = target != KTO_IGNORE
    labels = torch.where(mask, target, 0)
    tok = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
    return (tok * mask).sum(-1) / mask.sum(-1)


def _hf_kto_loss(x, weight, bias, ref_x, ref_weight, ref_bias, target, labels, kl):
    F = torch.nn.functional
    logps = _hf_kto_logps((x @ weight.t() + bias).float(), target)
    with torch.no_grad():
        ref_logps = _hf_kto_logps(ref_x @ ref_weight.t() + ref_bias, target)
    chosen = 1 - F.sigmoid(KTO_BETA * ((logps[labels] - ref_logps[labels]) - kl))
    rejected = 1 - F.sigmoid(KTO_BETA * (kl - (logps[~labels] - ref_logps[~labels])))
    return torch.cat((chosen, rejected), 0).mean()


def kto_loss(ctx, impl):
    B, T, H, V = (ctx.axes[k] for k in ("batch", "seq", "hidden", "vocab"))
    lin = torch.nn.Linear(H, V, bias=True).to(ctx.device, ctx.torch_dtype)
    ref_lin = torch.nn.Linear(H, V, bias=True).to(ctx.device, ctx.torch_dtype)
    x = _leaf(ctx.inputs["x"].reshape(B, T, H))
    copies = [(x, ctx.inputs["x"].reshape(B, T, H)),
              (lin.weight, ctx.inputs["weight"].reshape(V, H)), (lin.bias, ctx.inputs["bias"].reshape(V)),
              (ref_lin.weight, ctx.inputs["ref_weight"].reshape(V, H)),
              (ref_lin.bias, ctx.inputs["ref_bias"].reshape(V))]
    with torch.no_grad():
        for p, src in copies:
            p.copy_(src)
    # views of kbench's inputs: they follow each input set by themselves
    ref_x = ctx.inputs["ref_x"].reshape(B, T, H)
    target = ctx.inputs["target"].reshape(B, T)
    labels = ctx.inputs["preference_labels"].reshape(B)
    kl = ctx.inputs["kl"].reshape(1)
    if impl == "liger":
        from liger_kernel.chunked_loss import LigerFusedLinearKTOLoss
        m = LigerFusedLinearKTOLoss(ignore_index=KTO_IGNORE, beta=KTO_BETA, use_ref_model=True, average_log_prob=True)

        def fwd():
            return {"loss": m(_input=x, lin_weight=lin.weight, target=target, preference_labels=labels,
                              bias=lin.bias, ref_input=ref_x, ref_weight=ref_lin.weight,
                              ref_bias=ref_lin.bias, kl=kl)[0].reshape(1)}
    else:
        def fwd():
            return {"loss": _hf_kto_loss(x, lin.weight, lin.bias, ref_x, ref_lin.weight, ref_lin.bias,
                                         target, labels, kl).reshape(1)}
    return _graph_modes(ctx, fwd, {"dx": x, "dweight": lin.weight, "dbias": lin.bias}, {}, copies)


def _torch_chunk_swiglu(y):
    """The torch baseline of Liger's megatron_swiglu script: eager silu(first half) * second half
    of y's last dimension (torch.chunk(y, 2, -1))."""
    gate, up = torch.chunk(y, 2, -1)
    return torch.nn.functional.silu(gate) * up


def megatron_swiglu(ctx, impl):
    """megatron_swiglu over Megatron's seq x batch x (2 ffn) fc1 output: torch the eager chunk,
    liger LigerMegatronSwiGLU (no bias, not fp8, not in place, as the script calls it)."""
    if impl == "liger":
        from liger_kernel.megatron import LigerMegatronSwiGLU
        m = LigerMegatronSwiGLU()
        fn = lambda t: m(t, None, False, False)  # noqa: E731
    else:
        fn = _torch_chunk_swiglu
    y = _leaf(ctx.inputs["y"])
    return _graph_modes(ctx, lambda: {"out": fn(y)}, {"dy": y}, {"out": "dout"}, [(y, ctx.inputs["y"])])


class _TorchMultiTokenAttention(torch.nn.Module):
    """The torch baseline of Liger's multi_token_attention and sparse_multi_token_attention scripts:
    the scores above the diagonal filled with -1e9, softmax (or, in fp32, the sort-based sparsemax)
    over the last dimension, conv2d(heads_in -> heads_out, K x K, stride 1, padding K // 2, groups
    1, bias), the output above the diagonal set to zero (the sparse one cast back to the dtype)."""

    def __init__(self, c_in, c_out, k, sparse):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(c_out, c_in, k, k))
        self.bias = torch.nn.Parameter(torch.empty(c_out))
        self.k = k
        self.sparse = sparse

    def _sparsemax(self, z):
        # as the script: masked values (-1e9) are kept out of the support by z > -1e8
        L = z.shape[-1]
        zs = torch.sort(z, dim=-1, descending=True).values
        cs = zs.cumsum(-1)
        kk = torch.arange(1, L + 1, device=z.device, dtype=z.dtype)
        support = ((1 + kk * zs > cs) & (zs > -1e8)).sum(-1, keepdim=True)
        safe = torch.clamp(support, min=1)
        tau = (cs.gather(-1, safe - 1) - 1) / safe.to(z.dtype)
        tau = torch.where(support == 0, torch.full_like(tau, float("inf")), tau)
        return torch.clamp(z - tau, min=0)

    def forward(self, scores):
        L = scores.shape[-1]
        keep = torch.ones(L, L, dtype=torch.bool, device=scores.device).tril().view(1, 1, L, L)
        if self.sparse:
            z = scores.to(torch.float32).masked_fill(~keep, -1e9)
            p = self._sparsemax(z)
            w, b = self.weight.to(torch.float32), self.bias.to(torch.float32)
        else:
            p = torch.softmax(scores.masked_fill(~keep, -1e9), dim=-1)
            w, b = self.weight, self.bias
        y = torch.nn.functional.conv2d(p, w, b, stride=1, padding=self.k // 2, groups=1)
        return y.masked_fill(~keep, 0.0).to(scores.dtype)


def _multi_token_attention(ctx, impl, sparse):
    B, C, O, L, K = (ctx.axes[k] for k in ("batch", "heads_in", "heads_out", "seq", "k"))
    if impl == "liger":
        from liger_kernel.transformers.multi_token_attention import LigerMultiTokenAttention
        m = LigerMultiTokenAttention(in_channels=C, out_channels=O, kernel_size=K, stride=1, padding=K // 2,
                                     dilation=1, groups=1, bias=True, sparse=sparse)
    else:
        m = _TorchMultiTokenAttention(C, O, K, sparse)
    m = m.to(ctx.device, ctx.torch_dtype)
    x = _leaf(ctx.inputs["scores"].reshape(B, C, L, L))
    copies = [(x, ctx.inputs["scores"].reshape(B, C, L, L)), (m.weight, ctx.inputs["weight"].reshape(O, C, K, K)),
              (m.bias, ctx.inputs["bias"].reshape(O))]
    with torch.no_grad():
        for p, src in copies:
            p.copy_(src)
    return _graph_modes(ctx, lambda: {"y": m(x)}, {"dscores": x, "dweight": m.weight, "dbias": m.bias},
                        {"y": "dy"}, copies)


def multi_token_attention(ctx, impl):
    return _multi_token_attention(ctx, impl, False)


def sparse_multi_token_attention(ctx, impl):
    return _multi_token_attention(ctx, impl, True)


class _TorchNeighborhoodAttention(torch.nn.Module):
    """The torch baseline of Liger's fused_neighborhood_attention script: q, k, v and output
    projections (torch.nn.Linear with bias), dense per-head scores q k^T / sqrt(head_dim) with the
    keys outside the neighborhood (|j - i| > (kernel_size // 2) * dilation, or j - i not a multiple
    of dilation) set to -inf, softmax, times v.  The script builds the mask inside the forward with a
    python loop over the positions; here it is built inside the forward too, with tensor ops (the
    same mask)."""

    def __init__(self, hidden, heads, kernel_size, dilation):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.kernel_size, self.dilation = kernel_size, dilation
        self.scale = 1.0 / self.head_dim ** 0.5
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (torch.nn.Linear(hidden, hidden, bias=True)
                                                                for _ in range(4))

    def forward(self, x):
        B, L, H = x.shape

        def split(t):
            return t.view(B, L, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
        d = torch.arange(L, device=x.device)[None, :] - torch.arange(L, device=x.device)[:, None]
        keep = (d.abs() <= (self.kernel_size // 2) * self.dilation) & (d % self.dilation == 0)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        a = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).contiguous().view(B, L, H)
        return self.out_proj(o)


def fused_neighborhood_attention(ctx, impl):
    B, L, H = (ctx.axes[k] for k in ("batch", "seq", "hidden"))
    heads, ks, dil = (ctx.axes[k] for k in ("heads", "kernel_size", "dilation"))
    if impl == "liger":
        from liger_kernel.transformers.fused_neighborhood_attention import LigerFusedNeighborhoodAttention
        m = LigerFusedNeighborhoodAttention(hidden_size=H, num_heads=heads, kernel_size=ks, dilation=dil, bias=True,
                                            dropout=0.0)
    else:
        m = _TorchNeighborhoodAttention(H, heads, ks, dil)
    m = m.to(ctx.device, ctx.torch_dtype)
    x = _leaf(ctx.inputs["hidden_states"].reshape(B, L, H))
    copies, grads = [(x, ctx.inputs["hidden_states"].reshape(B, L, H))], {"dhidden_states": x}
    for n in ("q", "k", "v", "out"):
        proj = getattr(m, n + "_proj")
        copies += [(proj.weight, ctx.inputs[n + "_weight"].reshape(H, H)), (proj.bias, ctx.inputs[n + "_bias"].reshape(H))]
        grads.update({"d%s_weight" % n: proj.weight, "d%s_bias" % n: proj.bias})
    with torch.no_grad():
        for p, src in copies:
            p.copy_(src)
    step = _graph_modes(ctx, lambda: {"y": m(x)}, grads, {"y": "dy"}, copies)
    # k_bias keeps requires_grad, as in the script, but dk_bias (zero in exact arithmetic: a key
    # bias shifts every score of a row alike) is not one of the definition's returns
    inner = step.fn
    step.fn = lambda: {k: v for k, v in inner().items() if k != "dk_bias"}
    return step


def _huggingface_moe(x, gate_up_proj, down_proj, top_k_index, top_k_weights):
    """The huggingface baseline of Liger's fused_moe script (Transformers' Mixtral sparse MoE block
    after routing, a python loop over the experts hit): each expert's tokens through
    silu(gate) * up (gate, up the halves of x W_gate_up^T) and W_down^T, scaled by their routing
    weight, index_add-ed into the output."""
    E = gate_up_proj.shape[0]
    out = torch.zeros_like(x)
    with torch.no_grad():
        hits = torch.nn.functional.one_hot(top_k_index.long(), num_classes=E).permute(2, 1, 0)
        experts_hit = (hits.sum(dim=(-1, -2)) > 0).nonzero()
    for eh in experts_hit:
        e = eh[0]
        route, tok = torch.where(hits[e])
        gate, up = torch.nn.functional.linear(x[tok], gate_up_proj[e]).chunk(2, dim=-1)
        h = torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, down_proj[e])
        out.index_add_(0, tok, (h * top_k_weights[tok, route, None]).to(out.dtype))
    return out


def fused_moe(ctx, impl):
    T, H, I, E, K = (ctx.axes[k] for k in ("tokens", "hidden", "intermediate", "experts", "k"))
    shapes = {"x": (T, H), "gate_up_proj": (E, 2 * I, H), "down_proj": (E, H, I), "top_k_weights": (T, K)}
    leaves = {n: _leaf(ctx.inputs[n].reshape(shp)) for n, shp in shapes.items()}
    copies = [(leaves[n], ctx.inputs[n].reshape(shp)) for n, shp in shapes.items()]
    idx = ctx.inputs["top_k_index"].reshape(T, K)   # int32, as the script's topk(...).to(torch.int32)
    if impl == "liger":
        from liger_kernel.ops import LigerFusedMoEFunction

        def run(*a):
            return LigerFusedMoEFunction.apply(*a)
    else:
        run = _huggingface_moe
    lv = leaves

    def fwd():
        return {"y": run(lv["x"], lv["gate_up_proj"], lv["down_proj"], idx, lv["top_k_weights"])}
    return _graph_modes(ctx, fwd, {"d" + n: t for n, t in leaves.items()}, {"y": "dy"}, copies)


OPS = {"rms_norm": rms_norm, "megatron_rms_norm": rms_norm, "swiglu": swiglu, "geglu": geglu,
       "tiled_swiglu": swiglu, "tiled_geglu": geglu, "megatron_swiglu": megatron_swiglu, "relu_squared": relu_squared, "softmax": softmax,
       "sparsemax": sparsemax, "dyt": dyt, "poly_norm": poly_norm,
       "fused_add_rms_norm": fused_add_rms_norm, "group_norm": group_norm,
       "cross_entropy": cross_entropy, "kl_div": kl_div, "tvd": tvd, "rope": rope, "llama4_rope": llama4_rope,
       "qwen2vl_mrope": qwen2vl_mrope,
       "embedding": embedding,
       "fused_linear_orpo_loss": fused_linear_orpo_loss, "fused_linear_simpo_loss": fused_linear_simpo_loss,
       "fused_linear_cpo_loss": fused_linear_cpo_loss,
       "kto_loss": kto_loss,
       "fused_linear_grpo_loss_token": grpo_loss_token, "fused_linear_grpo_loss_sequence": grpo_loss_sequence,
       "fused_linear_cross_entropy": fused_linear_cross_entropy, "fused_linear_jsd": fused_linear_jsd,
       "distill_cosine_loss": distill_cosine_loss,
       "multi_token_attention": multi_token_attention, "sparse_multi_token_attention": sparse_multi_token_attention,
       "fused_neighborhood_attention": fused_neighborhood_attention, "fused_moe": fused_moe}


def torch_tiled(ctx):
    """The pure-torch seq-sharded execution of tiled_swiglu / tiled_geglu (_SeqTiledMLP), run as
    --impl python:kernels/python/kbench_builtin_defs.py:torch_tiled (kbench's built-in names,
    kernels/impl_name.c, are huggingface, torch and liger only)."""
    if ctx.op not in ("tiled_swiglu", "tiled_geglu"):
        raise ValueError("torch_tiled is an execution of tiled_swiglu and tiled_geglu, not of %s" % ctx.op)
    return OPS[ctx.op](ctx, "torch_tiled")


def factory(name, op):
    # kbench's built-in names (kernels/impl_name.c): liger_tiled and torch_tiled are not among them
    # (torch_tiled runs as the python entry kbench_builtin_defs.py:torch_tiled)
    if name not in ("huggingface", "torch", "liger"):
        raise ValueError("no built-in python implementation %r" % name)
    if op not in OPS:
        raise ValueError("no built-in python implementation of %s" % op)
    if name.endswith("_tiled") and op not in ("tiled_swiglu", "tiled_geglu"):
        raise ValueError("%s is an execution of tiled_swiglu and tiled_geglu, not of %s" % (name, op))
    if name in ("liger", "liger_tiled"):
        import liger_kernel  # noqa: F401 -- fails here, with its reason, when it is not importable
    return lambda ctx: OPS[op](ctx, name)
