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


def _graph(ctx, fwd, grads, upstream):
    """Like _modes for fwd() -> {output: tensor}: upstream {output: upstream input} (an output without
    one is a loss, differentiated with 1), grads {gradient name: leaf}."""
    def step():
        for t in grads.values():
            t.grad = None
        out = fwd()
        if ctx.mode == "forward":
            return out
        outs = list(out.values())
        ups = [ctx.inputs[upstream[k]].reshape(v.shape) if k in upstream else torch.ones_like(v)
               for k, v in out.items()]
        torch.autograd.backward(outs, ups)
        res = {g: t.grad for g, t in grads.items()}
        if ctx.mode == "full":
            res.update(out)
        return res
    return step


def _leaf(ctx, name, shape=None):
    t = ctx.inputs[name]
    return (t.reshape(shape) if shape else t).detach().clone().requires_grad_(t.is_floating_point())


def _gated_swapped(ctx, act):
    """A gated MLP with the activation on the up projection instead of the gate: act(up) * gate."""
    B, T, H = ctx.axes["batch"], ctx.axes["seq"], ctx.axes["hidden"]
    x = _leaf(ctx, "x", (B, T, H))
    wg, wu, wd = _leaf(ctx, "w_gate"), _leaf(ctx, "w_up"), _leaf(ctx, "w_down")
    fwd = lambda: {"y": (act(x @ wu.T) * (x @ wg.T)) @ wd.T}  # noqa: E731
    return _graph(ctx, fwd, {"dx": x, "dw_gate": wg, "dw_up": wu, "dw_down": wd}, {"y": "dy"})


def swiglu_swapped(ctx):
    return _gated_swapped(ctx, torch.nn.functional.silu)


def geglu_swapped(ctx):
    return _gated_swapped(ctx, lambda a: torch.nn.functional.gelu(a, approximate="tanh"))


def _tiled_cat_dim0(ctx, act):
    """A seq-tiled gated MLP (4 shards along seq) whose shard outputs are concatenated on the batch
    dimension and then reshaped back to batch x seq x hidden: the tokens come out in the wrong order."""
    B, T, H = ctx.axes["batch"], ctx.axes["seq"], ctx.axes["hidden"]
    x = _leaf(ctx, "x", (B, T, H))
    wg, wu, wd = _leaf(ctx, "w_gate"), _leaf(ctx, "w_up"), _leaf(ctx, "w_down")
    mlp = lambda p: (act(p @ wg.T) * (p @ wu.T)) @ wd.T  # noqa: E731
    fwd = lambda: {"y": torch.cat([mlp(p) for p in x.chunk(4, dim=1)], dim=0).reshape(B, T, H)}  # noqa: E731
    return _graph(ctx, fwd, {"dx": x, "dw_gate": wg, "dw_up": wu, "dw_down": wd}, {"y": "dy"})


def tiled_swiglu_cat_dim0(ctx):
    return _tiled_cat_dim0(ctx, torch.nn.functional.silu)


def tiled_geglu_cat_dim0(ctx):
    return _tiled_cat_dim0(ctx, lambda a: torch.nn.functional.gelu(a, approximate="tanh"))


def megatron_swiglu_halves_swapped(ctx):
    """silu on the second half of y's last dimension times the first (the halves' roles swapped)."""
    y = _leaf(ctx, "y")

    def fwd():
        up, gate = torch.chunk(y, 2, -1)
        return {"out": torch.nn.functional.silu(gate) * up}
    return _graph(ctx, fwd, {"dy": y}, {"out": "dout"})


def relu_squared_leaky(ctx):
    """relu(x)^2 that lets the negative side through as 0.01 x^2: wrong where x < 0."""
    x = _leaf(ctx, "x")
    return _graph(ctx, lambda: {"y": torch.where(x > 0, x * x, 0.01 * x * x)}, {"dx": x}, {"y": "dy"})


def softmax_no_max(ctx):
    """A softmax over all but the last column of each row (the last one left out of the sum)."""
    x = _leaf(ctx, "x")

    def fwd():
        e = torch.exp(x - x.max(-1, keepdim=True).values)
        return {"y": e / e[:, :-1].sum(-1, keepdim=True)}
    return _graph(ctx, fwd, {"dx": x}, {"y": "dy"})


def sparsemax_no_minus_one(ctx):
    """A sparsemax whose threshold is the support's mean (the - 1 left out): rows sum to zero."""
    x = _leaf(ctx, "x")

    def fwd():
        z = torch.sort(x, dim=-1, descending=True).values
        k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype)
        cs = z.cumsum(-1)
        k_star = (1 + k * z > cs).sum(-1, keepdim=True)
        return {"y": torch.clamp(x - cs.gather(-1, k_star - 1) / k_star.to(x.dtype), min=0)}
    return _graph(ctx, fwd, {"dx": x}, {"y": "dy"})


def dyt_alpha_outside(ctx):
    """A DyT that scales tanh's output by alpha instead of its input: gamma alpha tanh(x) + beta."""
    x, a, g, b = (_leaf(ctx, n) for n in ("x", "alpha", "gamma", "beta"))
    return _graph(ctx, lambda: {"y": g * a * torch.tanh(x) + b},
                  {"dx": x, "dalpha": a, "dgamma": g, "dbeta": b}, {"y": "dy"})


def poly_norm_weights_reversed(ctx):
    """A PolyNorm with its weights in the reverse order: w2 norm(x^3) + w1 norm(x^2) + w0 norm(x) + b."""
    x, w, b = _leaf(ctx, "x"), _leaf(ctx, "weight", (3,)), _leaf(ctx, "bias", (1,))

    def norm(u):
        return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + 1e-6)

    def fwd():
        h = x.float()
        return {"y": (w[2] * norm(h ** 3) + w[1] * norm(h ** 2) + w[0] * norm(h) + b).to(x.dtype)}
    return _graph(ctx, fwd, {"dx": x, "dweight": w, "dbias": b}, {"y": "dy"})


def fused_add_rms_norm_stale_residual(ctx):
    """Fused add + RMSNorm that returns the input residual as residual_out, not the sum."""
    x, r, w = _leaf(ctx, "x"), _leaf(ctx, "residual"), _leaf(ctx, "weight", (-1,))

    def fwd():
        h = x + r
        y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        return {"y": y, "residual_out": r * 1}
    return _graph(ctx, fwd, {"dx": x, "dresidual": r, "dweight": w}, {"y": "dy", "residual_out": "dresidual_out"})


def group_norm_per_channel(ctx):
    """A GroupNorm that normalizes each channel on its own (groups = channels): wrong grouping."""
    B, C, H = ctx.axes["batch"], ctx.axes["channels"], ctx.axes["hidden"]
    x, w, b = _leaf(ctx, "x", (B, C, H)), _leaf(ctx, "weight", (-1,)), _leaf(ctx, "bias", (-1,))
    fwd = lambda: {"y": torch.nn.functional.group_norm(x, C, w, b, 1e-6)}  # noqa: E731
    return _graph(ctx, fwd, {"dx": x, "dweight": w, "dbias": b}, {"y": "dy"})


def cross_entropy_sum(ctx):
    """Cross entropy summed over tokens instead of averaged (reduction 'sum' for 'mean')."""
    logits = _leaf(ctx, "logits")
    target = ctx.inputs["target"].reshape(-1)
    fwd = lambda: {"loss": torch.nn.functional.cross_entropy(logits, target, reduction="sum").reshape(1)}  # noqa: E731
    return _graph(ctx, fwd, {"dlogits": logits}, {})


def fused_linear_cross_entropy_shifted(ctx):
    """LM head + cross-entropy whose targets are off by one token (target[t + 1] scored at token t,
    the next-token shift applied twice)."""
    x, w = _leaf(ctx, "x"), _leaf(ctx, "weight")
    target = torch.roll(ctx.inputs["target"].reshape(-1), -1)
    fwd = lambda: {"loss": torch.nn.functional.cross_entropy(x @ w.T, target).reshape(1)}  # noqa: E731
    return _graph(ctx, fwd, {"dx": x, "dweight": w}, {})


def fused_linear_jsd_reversed_kl(ctx):
    """Fused linear + JSD with each KL's arguments swapped (KL(M || P_t) and KL(M || P_s), kl_div's
    input/target order mixed up): a divergence still, but not the JSD."""
    xs, ws = _leaf(ctx, "student_input"), _leaf(ctx, "student_weight")
    xt, wt = ctx.inputs["teacher_input"], ctx.inputs["teacher_weight"]

    def fwd():
        ls, lt = torch.log_softmax(xs @ ws.T, -1), torch.log_softmax(xt @ wt.T, -1)
        log_m = torch.log(0.5 * ls.exp() + 0.5 * lt.exp())
        rows = 0.5 * (log_m.exp() * (log_m - lt)).sum(-1) + 0.5 * (log_m.exp() * (log_m - ls)).sum(-1)
        return {"loss": rows.mean().reshape(1)}
    return _graph(ctx, fwd, {"dstudent_input": xs, "dstudent_weight": ws}, {})

def distill_cosine_loss_token_dim(ctx):
    """Distillation cosine loss whose cosine runs over the token dimension (dim 0: one value per
    vocab column) instead of over each token's logits."""
    xs, ws = _leaf(ctx, "student_input"), _leaf(ctx, "student_weight")
    xt, wt = ctx.inputs["teacher_input"], ctx.inputs["teacher_weight"]
    target = ctx.inputs["target"].reshape(-1)

    def fwd():
        s, t = xs @ ws.T, xt @ wt.T
        soft = (1 - torch.nn.functional.cosine_similarity(s, t, dim=0)).mean()
        return {"loss": (0.5 * torch.nn.functional.cross_entropy(s, target) + 0.5 * soft).reshape(1)}
    return _graph(ctx, fwd, {"dstudent_input": xs, "dstudent_weight": ws}, {})


def _rope_wrong(ctx, layout, adjacent):
    """A rotary embedding that rotates the wrong pairs of head_dim: adjacent ones (2i, 2i + 1), as
    Llama 4 does, where rope pairs i with i + head_dim/2, or the other way round."""
    T, qh, kh, hd = (ctx.axes[a] for a in ("seq", "q_heads", "kv_heads", "head_dim"))
    shp = (lambda h: (1, h, T, hd)) if layout == "bhsd" else (lambda h: (1, T, h, hd))
    q, k = _leaf(ctx, "q", shp(qh)), _leaf(ctx, "k", shp(kh))
    ang = torch.arange(T, dtype=torch.float32)[:, None] / 10000.0 ** (torch.arange(0, hd, 2).float() / hd)
    ang = ang[None, None] if layout == "bhsd" else ang[None, :, None]
    c, s = ang.cos(), ang.sin()

    def rot(x):
        if adjacent:
            a, b = x[..., 0::2], x[..., 1::2]
            return torch.stack([a * c - b * s, a * s + b * c], -1).reshape(x.shape)
        a, b = x[..., :hd // 2], x[..., hd // 2:]
        return torch.cat([a * c - b * s, a * s + b * c], -1)
    return _graph(ctx, lambda: {"q_out": rot(q), "k_out": rot(k)}, {"dq": q, "dk": k},
                  {"q_out": "dq_out", "k_out": "dk_out"})


def rope_adjacent_pairs(ctx):
    return _rope_wrong(ctx, "bhsd", True)


def llama4_rope_half_pairs(ctx):
    return _rope_wrong(ctx, "bshd", False)


def qwen2vl_mrope_temporal_only(ctx):
    """An M-RoPE that rotates every frequency by the temporal position (plain 1-D RoPE with rope_theta
    1e6): the height and width sections' positions ignored."""
    T, hd = ctx.axes["seq"], ctx.axes["head_dim"]
    q = _leaf(ctx, "q", (1, ctx.axes["q_heads"], T, hd))
    k = _leaf(ctx, "k", (1, ctx.axes["kv_heads"], T, hd))
    inv = 1.0 / 1e6 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd)
    a = torch.arange(T, dtype=torch.float32)[:, None] * inv[None, :]
    c, s = torch.cat([a.cos(), a.cos()], -1).to(q.dtype), torch.cat([a.sin(), a.sin()], -1).to(q.dtype)

    def rot(x):
        h = hd // 2
        return x * c + torch.cat([-x[..., h:], x[..., :h]], -1) * s

    def step():
        q.grad = None
        qo, ko = rot(q), rot(k)
        if ctx.mode == "forward":
            return {"q_out": qo, "k_out": ko}
        qo.backward(ctx.inputs["dq_out"].reshape(qo.shape))
        res = {"dq": q.grad}
        if ctx.mode == "full":
            res.update(q_out=qo, k_out=ko)
        return res
    return step


def embedding_off_by_one(ctx):
    """An embedding that gathers row id + 1 (modulo vocab): the wrong rows."""
    V = ctx.axes["vocab"]
    w = _leaf(ctx, "weight", (V, ctx.axes["hidden"]))
    ids = ctx.inputs["input_ids"].reshape(ctx.axes["batch"], ctx.axes["seq"])
    return _graph(ctx, lambda: {"y": w[(ids + 1) % V]}, {"dweight": w}, {"y": "dy"})


def _preference_wrong(ctx, kind, interleaved=False, nll_all=False, average=None):
    """A preference loss (logits in fp32, chosen NLL + mean pairwise loss, beta 0.1, SimPO's gamma
    0.5) with one plausible bug: interleaved (chosen = even rows, rejected = odd rows, not the two
    halves), nll_all (the NLL over every sequence, not only the chosen), average (CPO's sequence
    log-probabilities averaged over seq instead of summed)."""
    B, T, H = ctx.axes["batch"], ctx.axes["seq"], ctx.axes["hidden"]
    x, w = _leaf(ctx, "x", (B, T, H)), _leaf(ctx, "weight")
    tgt = ctx.inputs["target"].reshape(B, T)
    avg = kind != "cpo" if average is None else average
    F = torch.nn.functional

    def fwd():
        logp = (x @ w.T).float().log_softmax(-1)
        tok = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
        seq = tok.mean(-1) if avg else tok.sum(-1)
        if interleaved:
            c, r, chosen = seq[0::2], seq[1::2], tok[0::2]
        else:
            c, r, chosen = seq[:B // 2], seq[B // 2:], tok[:B // 2]
        nll = -(tok if nll_all else chosen).mean()
        if kind == "orpo":
            lo = (c - r) - (torch.log1p(-torch.exp(c)) - torch.log1p(-torch.exp(r)))
            pref = -0.1 * F.logsigmoid(lo)
        else:
            pref = -F.logsigmoid(0.1 * (c - r) - (0.5 if kind == "simpo" else 0.0))
        return {"loss": (nll + pref.mean()).reshape(1)}
    return _graph(ctx, fwd, {"dx": x, "dweight": w}, {})


def orpo_interleaved(ctx):
    return _preference_wrong(ctx, "orpo", interleaved=True)


def simpo_nll_all(ctx):
    return _preference_wrong(ctx, "simpo", nll_all=True)


def cpo_averaged(ctx):
    return _preference_wrong(ctx, "cpo", average=True)
def kto_logsigmoid(ctx):
    """KTO with DPO's sigmoid loss -logsigmoid(beta s u) in place of KTO's 1 - sigmoid(beta s u) (u the
    policy's minus the reference's average log-probability, minus kl; s +1 chosen, -1 rejected)."""
    B, T, H = ctx.axes["batch"], ctx.axes["seq"], ctx.axes["hidden"]
    x, w, b = _leaf(ctx, "x", (B, T, H)), _leaf(ctx, "weight"), _leaf(ctx, "bias", (-1,))
    rx, rw, rb = (ctx.inputs[k] for k in ("ref_x", "ref_weight", "ref_bias"))
    rx, rb = rx.reshape(B, T, H), rb.reshape(-1)
    tgt = ctx.inputs["target"].reshape(B, T)
    sign = ctx.inputs["preference_labels"].reshape(B).float() * 2 - 1
    kl = ctx.inputs["kl"].reshape(()).float()
    keep = tgt != 42

    def logps(xx, ww, bb):
        tok = (xx @ ww.T + bb).float().log_softmax(-1).gather(-1, torch.where(keep, tgt, 0).unsqueeze(-1))
        return (tok.squeeze(-1) * keep).sum(-1) / keep.sum(-1)

    def fwd():
        with torch.no_grad():
            ref = logps(rx, rw, rb)
        u = logps(x, w, b) - ref - kl
        return {"loss": (-torch.nn.functional.logsigmoid(0.1 * sign * u)).mean().reshape(1)}
    return _graph(ctx, fwd, {"dx": x, "dweight": w, "dbias": b}, {})


def kl_div_mean(ctx):
    """KLDivLoss with reduction 'mean' (divided by tokens x vocab) instead of 'batchmean' (by tokens)."""
    lp = _leaf(ctx, "log_probs")
    target = ctx.inputs["target_probs"]
    fwd = lambda: {"loss": torch.nn.functional.kl_div(lp, target, reduction="mean").reshape(1)}  # noqa: E731
    return _graph(ctx, fwd, {"dlog_probs": lp}, {})


def tvd_no_half(ctx):
    """The TVD without its 1/2: the L1 distance sum |p - q| over the rows."""
    p = _leaf(ctx, "p")
    q = ctx.inputs["q"]
    fwd = lambda: {"loss": (torch.abs(p - q).sum() / p.size(0)).reshape(1)}  # noqa: E731
    return _graph(ctx, fwd, {"dp": p}, {})
def _grpo_token_sum(ctx, level):
    """A GRPO loss summed over each sequence's tokens instead of averaged (the per-sequence mean's
    division by the completion length left out): the loss and its gradient seq times too large."""
    B, T, V = ctx.axes["batch"], ctx.axes["seq"], ctx.axes["vocab"]
    z = _leaf(ctx, "logits", (B, T + 1, V))
    ids = ctx.inputs["completion_ids"].reshape(B, T)
    a = ctx.inputs["advantages"].reshape(B, 1)

    def fwd():
        logp = torch.log_softmax(z[:, :-1], -1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
        lr = logp - logp.detach()
        if level == "sequence":
            lr = lr.mean(-1, keepdim=True)
        r = torch.exp(lr)
        per_token = (-torch.minimum(r * a, torch.clamp(r, 0.8, 1.2) * a)).expand(B, T)
        return {"loss": per_token.sum(-1).mean().reshape(1)}
    return _graph(ctx, fwd, {"dlogits": z}, {})


def grpo_loss_token_sum(ctx):
    return _grpo_token_sum(ctx, "token")


def grpo_loss_sequence_sum(ctx):
    return _grpo_token_sum(ctx, "sequence")
def _mta_wrong(ctx, normalize, premask, remask):
    """Multi-token attention built from leaves of ctx.inputs; premask / remask choose whether the
    causal mask is applied before normalizing / after the convolution."""
    B, C, O, L, K = (ctx.axes[k] for k in ("batch", "heads_in", "heads_out", "seq", "k"))
    x, w, b = _leaf(ctx, "scores", (B, C, L, L)), _leaf(ctx, "weight", (O, C, K, K)), _leaf(ctx, "bias", (-1,))
    keep = torch.ones(L, L, dtype=torch.bool).tril()

    def fwd():
        z = x.float()
        if premask:
            z = z.masked_fill(~keep, -1e9)
        y = torch.nn.functional.conv2d(normalize(z), w.float(), b.float(), padding=K // 2)
        if remask:
            y = y.masked_fill(~keep, 0.0)
        return {"y": y.to(x.dtype)}
    return _graph(ctx, fwd, {"dscores": x, "dweight": w, "dbias": b}, {"y": "dy"})


def multi_token_attention_unmasked_softmax(ctx):
    """Multi-token attention whose softmax runs over every column (the causal mask applied only to
    the output): each row's probabilities take in the future scores."""
    return _mta_wrong(ctx, lambda z: torch.softmax(z, dim=-1), False, True)


def sparse_multi_token_attention_no_remask(ctx):
    """Sparse multi-token attention whose output is not re-masked: the convolution's taps leak onto
    the first column above the diagonal (and dy there flows back)."""
    def sparsemax(z):
        zs = torch.sort(z, dim=-1, descending=True).values
        cs = zs.cumsum(-1)
        kk = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
        k_star = ((1 + kk * zs > cs) & (zs > -1e8)).sum(-1, keepdim=True)
        return torch.clamp(z - (cs.gather(-1, k_star - 1) - 1) / k_star.to(z.dtype), min=0)
    return _mta_wrong(ctx, sparsemax, True, False)


def fused_neighborhood_attention_undilated(ctx):
    """Neighborhood attention over every key within (kernel_size // 2) * dilation of the query: the
    window's reach is dilated but the keys between the dilated ones are not left out."""
    B, L, H = (ctx.axes[k] for k in ("batch", "seq", "hidden"))
    nh, hd = ctx.axes["heads"], ctx.axes["head_dim"]
    x = _leaf(ctx, "hidden_states", (B, L, H))
    p = {n: _leaf(ctx, n, (H, H) if n.endswith("weight") else (H,))
         for n in ("q_weight", "k_weight", "v_weight", "out_weight", "q_bias", "k_bias", "v_bias", "out_bias")}
    d = torch.arange(L)[None, :] - torch.arange(L)[:, None]
    keep = d.abs() <= (ctx.axes["kernel_size"] // 2) * ctx.axes["dilation"]

    def fwd():
        def heads(n):
            return torch.nn.functional.linear(x, p[n + "_weight"], p[n + "_bias"]).view(B, L, nh, hd).transpose(1, 2)
        q, k, v = heads("q"), heads("k"), heads("v")
        a = torch.softmax((q @ k.transpose(-1, -2) / hd ** 0.5).masked_fill(~keep, float("-inf")), dim=-1)
        o = (a @ v).transpose(1, 2).reshape(B, L, H)
        return {"y": torch.nn.functional.linear(o, p["out_weight"], p["out_bias"])}
    grads = {"dhidden_states": x}
    grads.update({"d" + n: t for n, t in p.items()})
    return _graph(ctx, fwd, grads, {"y": "dy"})


def fused_moe_swapped_halves(ctx):
    """A fused MoE that takes the first half of gate_up_proj as up and the second as gate (silu on
    the wrong half)."""
    T, H, I, E, K = (ctx.axes[k] for k in ("tokens", "hidden", "intermediate", "experts", "k"))
    x, w1, w2 = _leaf(ctx, "x", (T, H)), _leaf(ctx, "gate_up_proj", (E, 2 * I, H)), _leaf(ctx, "down_proj", (E, H, I))
    wts = _leaf(ctx, "top_k_weights", (T, K))
    idx = ctx.inputs["top_k_index"].reshape(T, K).long()

    def fwd():
        y = torch.zeros_like(x)
        for e in range(E):
            tok, route = torch.nonzero(idx == e, as_tuple=True)
            up, gate = torch.nn.functional.linear(x[tok], w1[e]).chunk(2, dim=-1)
            h = torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, w2[e])
            y = y.index_add(0, tok, h * wts[tok, route, None])
        return {"y": y}
    return _graph(ctx, fwd, {"dx": x, "dgate_up_proj": w1, "ddown_proj": w2, "dtop_k_weights": wts}, {"y": "dy"})
