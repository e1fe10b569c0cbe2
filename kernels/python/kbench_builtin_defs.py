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


OPS = {"rms_norm": rms_norm, "megatron_rms_norm": rms_norm, "swiglu": swiglu, "geglu": geglu, "relu_squared": relu_squared, "softmax": softmax,
       "sparsemax": sparsemax,
       "fused_add_rms_norm": fused_add_rms_norm, "group_norm": group_norm,
       "cross_entropy": cross_entropy, "rope": rope, "llama4_rope": llama4_rope, "embedding": embedding,
       "multi_token_attention": multi_token_attention, "sparse_multi_token_attention": sparse_multi_token_attention,
       "fused_neighborhood_attention": fused_neighborhood_attention, "fused_moe": fused_moe}


def factory(name, op):
    if name not in ("huggingface", "torch", "liger"):
        raise ValueError("no built-in python implementation %r" % name)
    if op not in OPS:
        raise ValueError("no built-in python implementation of %s" % op)
    if name == "liger":
        import liger_kernel  # noqa: F401 -- fails here, with its reason, when it is not importable
    return lambda ctx: OPS[op](ctx, name)
