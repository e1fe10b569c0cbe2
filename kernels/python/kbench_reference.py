"""kbench_reference.py: the float64 references of the operations defined as data.

Each operation of kernels/ops/defs/NAME.json names its reference here
("reference": {"python": "fn"}).  A reference is the forward in float64 on
the CPU: fn(inputs, scalars) -> {output name: tensor}, inputs a dict of
float64 tensors in their definition's shapes (int64 inputs arrive as float64
too: a reference converts them back), scalars the definition's scalars and the
case's axes, derived ones included.  An output without an upstream gradient
(a loss) is differentiated with 1, as loss.backward() does.  The gradients of the
backward and full modes are torch.autograd's of that forward, with the
upstream gradients kbench filled (kbench_harness.py's check).  Each
reference is tested against an independent formulation (a closed-form
backward, a second formula) in test/operations/test_references.py.
Our own code, written from the operations' definitions; nothing is copied.
"""
import torch


def rms_norm(inputs, scalars):
    x, w = inputs["x"], inputs["weight"]
    rstd = torch.rsqrt((x * x).mean(-1, keepdim=True) + scalars["eps"])
    return {"y": x * rstd * w}


def _gated_mlp(inputs, act):
    x = inputs["x"]
    gate = x @ inputs["w_gate"].transpose(0, 1)
    up = x @ inputs["w_up"].transpose(0, 1)
    return {"y": (act(gate) * up) @ inputs["w_down"].transpose(0, 1)}


def swiglu(inputs, scalars):
    return _gated_mlp(inputs, torch.nn.functional.silu)


def geglu(inputs, scalars):
    return _gated_mlp(inputs, lambda a: torch.nn.functional.gelu(a, approximate="tanh"))


def megatron_swiglu(inputs, scalars):
    """silu of the first half of y's last dimension times the second half."""
    y = inputs["y"]
    half = y.shape[-1] // 2
    return {"out": torch.nn.functional.silu(y[..., :half]) * y[..., half:]}


def relu_squared(inputs, scalars):
    return {"y": torch.relu(inputs["x"]).square()}


def softmax(inputs, scalars):
    return {"y": torch.softmax(inputs["x"], dim=-1)}


SPARSEMAX_UNSURE = 1e-4
# A reference may return, under this key, {tensor: a bool mask broadcastable to it} of the values
# whose reference is not decidable from the implementation's precision (a discontinuity within
# rounding of the input): they are not compared, and the comparison says how many were left out.
UNSURE = "_unsure"


def sparsemax(inputs, scalars):
    """Sparsemax over the last dimension (the sort-based threshold): y = max(x - tau, 0), tau =
    (sum of the k largest - 1) / k for the largest k with 1 + k z_k > sum of the k largest."""
    x = inputs["x"]
    z = torch.sort(x, dim=-1, descending=True).values
    k = torch.arange(1, x.shape[-1] + 1, dtype=x.dtype, device=x.device)
    cs = z.cumsum(-1)
    support = (1 + k * z > cs).sum(-1, keepdim=True)
    tau = (cs.gather(-1, support - 1) - 1) / support.to(x.dtype)
    # a row with a value within SPARSEMAX_UNSURE of the threshold: an fp32 implementation may put
    # it on either side (its running sum misses tau by ~1e-7 and more on long rows), and the
    # gradient of the whole row changes with the support; its dx is not compared (y still is)
    unsure = ((x - tau).abs() < SPARSEMAX_UNSURE).any(-1, keepdim=True)
    return {"y": torch.clamp(x - tau, min=0), UNSURE: {"dx": unsure}}


def dyt(inputs, scalars):
    """Dynamic Tanh: y = gamma tanh(alpha x) + beta, alpha one scalar, gamma and beta per hidden unit."""
    return {"y": inputs["gamma"] * torch.tanh(inputs["alpha"] * inputs["x"]) + inputs["beta"]}


def poly_norm(inputs, scalars):
    """PolyNorm: y = w0 norm(x^3) + w1 norm(x^2) + w2 norm(x) + b, norm(u) = u rsqrt(mean(u^2) + eps)
    over the last dimension."""
    x, w, eps = inputs["x"], inputs["weight"], scalars["eps"]

    def norm(u):
        return u * torch.rsqrt((u * u).mean(-1, keepdim=True) + eps)
    return {"y": w[0] * norm(x ** 3) + w[1] * norm(x ** 2) + w[2] * norm(x) + inputs["bias"]}


def fused_add_rms_norm(inputs, scalars):
    h = inputs["x"] + inputs["residual"]
    return {"y": rms_norm({"x": h, "weight": inputs["weight"]}, scalars)["y"], "residual_out": h}


def group_norm(inputs, scalars):
    x = inputs["x"]
    groups = scalars["groups"]
    return {"y": torch.nn.functional.group_norm(x, groups, inputs["weight"], inputs["bias"], scalars["eps"])}


def cross_entropy(inputs, scalars):
    loss = torch.nn.functional.cross_entropy(inputs["logits"], inputs["target"].long().reshape(-1))
    return {"loss": loss.reshape(1)}


def kl_div(inputs, scalars):
    """KLDivLoss(reduction="batchmean"): sum of target (log target - log_probs), divided by the rows."""
    lp, t = inputs["log_probs"], inputs["target_probs"]
    return {"loss": torch.nn.functional.kl_div(lp, t, reduction="batchmean").reshape(1)}


def tvd(inputs, scalars):
    """The batchmean total variation distance: sum of |p - q| / 2, divided by the rows."""
    p, q = inputs["p"], inputs["q"]
    return {"loss": ((p - q).abs().sum() / 2 / p.shape[0]).reshape(1)}


def fused_linear_cross_entropy(inputs, scalars):
    """The bias-free LM head x @ weight^T, then the cross-entropy against the targets, mean over tokens."""
    logits = inputs["x"] @ inputs["weight"].transpose(0, 1)
    target = inputs["target"].long().reshape(-1)
    loss = torch.nn.functional.cross_entropy(logits, target, reduction="mean")
    return {"loss": loss.reshape(1)}


def fused_linear_jsd(inputs, scalars):
    """Student and teacher log-distributions from their bias-free heads (temperature 1), then the
    generalized JSD beta KL(P_t || M) + (1 - beta) KL(P_s || M), M = (1 - beta) P_s + beta P_t,
    summed over vocab and averaged over tokens (batchmean)."""
    beta = scalars["beta"]
    ls = torch.log_softmax(inputs["student_input"] @ inputs["student_weight"].transpose(0, 1), dim=-1)
    lt = torch.log_softmax(inputs["teacher_input"] @ inputs["teacher_weight"].transpose(0, 1), dim=-1)
    log_m = torch.log((1 - beta) * ls.exp() + beta * lt.exp())
    rows = beta * (lt.exp() * (lt - log_m)).sum(-1) + (1 - beta) * (ls.exp() * (ls - log_m)).sum(-1)
    return {"loss": rows.mean().reshape(1)}

def distill_cosine_loss(inputs, scalars):
    """Hard cross-entropy of the hidden/2 student's logits against the targets (mean over tokens)
    plus the soft cosine term, the mean over tokens of 1 - cos(student logits, teacher logits)
    (beta 1 and temperature 1, as the script's torch provider; the cosine does not see a
    temperature: it is invariant to scaling either side), weighted by weight_hard_loss and
    weight_soft_loss."""
    zs = inputs["student_input"] @ inputs["student_weight"].transpose(0, 1)
    zt = inputs["teacher_input"] @ inputs["teacher_weight"].transpose(0, 1)
    hard = torch.nn.functional.cross_entropy(zs, inputs["target"].long().reshape(-1))
    unit = torch.nn.functional.normalize
    cos = torch.nn.functional.cosine_similarity(unit(zs, p=2, dim=-1), unit(zt, p=2, dim=-1), dim=-1)
    soft = (1 - cos).mean()
    return {"loss": (scalars["weight_hard_loss"] * hard + scalars["weight_soft_loss"] * soft).reshape(1)}


ROPE_BASE = 10000.0  # the rotary base of Liger's rope and llama4_rope scripts (Transformers' default rope_theta)


def _rope_angles(seq, head_dim):
    """angle[t, i] = t / base^(2i / head_dim): position t, frequency i of head_dim / 2, in float64."""
    inv_freq = 1.0 / ROPE_BASE ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return torch.arange(seq, dtype=torch.float64)[:, None] * inv_freq[None, :]


def rope(inputs, scalars):
    """Llama's rotary embedding on 1 x heads x seq x head_dim: value i and i + head_dim/2 of a head
    are rotated together by angle[t, i] (rotate_half)."""
    a = _rope_angles(scalars["seq"], scalars["head_dim"])
    cos, sin = torch.cat([a.cos(), a.cos()], -1), torch.cat([a.sin(), a.sin()], -1)

    def rot(x):
        h = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., h:], x[..., :h]], -1) * sin
    return {"q_out": rot(inputs["q"]), "k_out": rot(inputs["k"])}


def llama4_rope(inputs, scalars):
    """Llama 4's rotary embedding on 1 x seq x heads x head_dim: values 2i and 2i + 1 of a head are
    rotated together by angle[t, i] (a complex product)."""
    a = _rope_angles(scalars["seq"], scalars["head_dim"])
    cos, sin = a.cos()[None, :, None, :], a.sin()[None, :, None, :]

    def rot(x):
        re, im = x[..., 0::2], x[..., 1::2]
        return torch.stack([re * cos - im * sin, re * sin + im * cos], -1).reshape(x.shape)
    return {"q_out": rot(inputs["q"]), "k_out": rot(inputs["k"])}


def qwen2vl_mrope(inputs, scalars):
    """Qwen2-VL's M-RoPE on 1 x heads x seq x head_dim, rotate_half's pairing (i with i + head_dim/2):
    frequency j < head_dim/2 (theta^(-2j / head_dim)) belongs to the temporal, height or width
    section (the first section_t, the next section_hw, the last section_hw) and is rotated by that
    section's position of token t, t + s seq for section s: Liger's script's position ids 0..3 seq-1
    viewed as three rows of seq."""
    T, hd = scalars["seq"], scalars["head_dim"]
    st, shw = scalars["section_t"], scalars["section_hw"]
    inv_freq = 1.0 / scalars["rope_theta"] ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    section = torch.tensor([0] * st + [1] * shw + [2] * shw, dtype=torch.float64)
    a = (torch.arange(T, dtype=torch.float64)[:, None] + section[None, :] * T) * inv_freq[None, :]
    cos, sin = torch.cat([a.cos(), a.cos()], -1), torch.cat([a.sin(), a.sin()], -1)

    def rot(x):
        h = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., h:], x[..., :h]], -1) * sin
    return {"q_out": rot(inputs["q"]), "k_out": rot(inputs["k"])}


def embedding(inputs, scalars):
    return {"y": inputs["weight"][inputs["input_ids"].long()]}


# The preference losses (fused_linear_orpo_loss, fused_linear_simpo_loss, fused_linear_cpo_loss):
# Liger's torch references of the loss with their defaults, fixed here (no scalar of the call, as
# the Liger import's WorkloadCase has none): NLL weight alpha 1, beta 0.1, SimPO's gamma 0.5.
PREF_ALPHA, PREF_BETA, SIMPO_GAMMA = 1.0, 0.1, 0.5


def _preference_logps(inputs, average):
    """The LM head and the per-sequence target log-probabilities: (chosen, rejected, chosen NLL).
    The batch holds the chosen sequences first, the rejected second (batch/2 each); the NLL is the
    mean cross-entropy over the chosen sequences' tokens; the sequences' log-probabilities are the
    mean (average) or the sum over seq of log softmax(x weight^T)[target]."""
    x, w = inputs["x"], inputs["weight"]
    tgt = inputs["target"].long()
    half = x.shape[0] // 2
    logp = torch.log_softmax(x @ w.transpose(0, 1), dim=-1)
    tok = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    seq = tok.mean(-1) if average else tok.sum(-1)
    return seq[:half], seq[half:], -tok[:half].mean()


def fused_linear_orpo_loss(inputs, scalars):
    c, r, nll = _preference_logps(inputs, True)
    log_odds = (c - r) - (torch.log1p(-torch.exp(c)) - torch.log1p(-torch.exp(r)))
    pref = -PREF_BETA * torch.nn.functional.logsigmoid(log_odds)
    return {"loss": (PREF_ALPHA * nll + pref.mean()).reshape(1)}


def fused_linear_simpo_loss(inputs, scalars):
    c, r, nll = _preference_logps(inputs, True)
    pref = -torch.nn.functional.logsigmoid(PREF_BETA * (c - r) - SIMPO_GAMMA)
    return {"loss": (PREF_ALPHA * nll + pref.mean()).reshape(1)}


def fused_linear_cpo_loss(inputs, scalars):
    c, r, nll = _preference_logps(inputs, False)
    pref = -torch.nn.functional.logsigmoid(PREF_BETA * (c - r))
    return {"loss": (PREF_ALPHA * nll + pref.mean()).reshape(1)}


# kto_loss: Liger's torch reference HFKTOLoss (unpaired: each sequence is chosen or rejected by its
# own preference label).  Targets equal to KTO_IGNORE are left out of a sequence's average, fixed
# here as in Liger's CSV config (ignore_index 42; the WorkloadCase binds only beta).
KTO_IGNORE = 42


def _kto_seq_logps(x, w, b, tgt):
    """The average over a sequence's kept tokens of log softmax(x w^T + b)[target]."""
    keep = tgt != KTO_IGNORE
    logp = torch.log_softmax(x @ w.transpose(0, 1) + b, dim=-1)
    tok = logp.gather(-1, torch.where(keep, tgt, torch.zeros_like(tgt)).unsqueeze(-1)).squeeze(-1)
    return (tok * keep).sum(-1) / keep.sum(-1)


def kto_loss(inputs, scalars):
    """mean over the batch of 1 - sigmoid(beta s (policy - reference log-probability - kl)), s = +1 for
    a chosen sequence (label true), -1 for a rejected one; the reference model takes no gradient."""
    tgt = inputs["target"].long()
    pol = _kto_seq_logps(inputs["x"], inputs["weight"], inputs["bias"], tgt)
    with torch.no_grad():
        ref = _kto_seq_logps(inputs["ref_x"], inputs["ref_weight"], inputs["ref_bias"], tgt)
    sign = 2 * (inputs["preference_labels"] != 0).to(pol.dtype) - 1
    losses = 1 - torch.sigmoid(scalars["beta"] * sign * (pol - ref - inputs["kl"].reshape(())))
    return {"loss": losses.mean().reshape(1)}


GRPO_EPS = 0.2  # the clip epsilon (low and high) of Liger's GRPO scripts; Liger's mapping does not bind it


def _grpo_loss(inputs, level):
    """GRPO's policy loss on logits, on-policy (old logps = the logps detached, so every ratio is 1
    in value and carries logp's gradient), temperature 1, no KL term, every completion token kept:
    loss = mean over sequences of the mean over tokens of -min(r A, clip(r, 1 - eps, 1 + eps) A)."""
    z = inputs["logits"][:, :-1]  # the logit at position t predicts completion token t
    ids = inputs["completion_ids"].long()
    logp = torch.log_softmax(z, dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)
    log_ratio = logp - logp.detach()
    if level == "sequence":
        log_ratio = log_ratio.mean(-1, keepdim=True)  # GSPO: one ratio per sequence
    r = torch.exp(log_ratio)
    a = inputs["advantages"].reshape(-1, 1)
    per_token = -torch.minimum(r * a, torch.clamp(r, 1 - GRPO_EPS, 1 + GRPO_EPS) * a)
    per_token = per_token.expand(ids.shape)
    return {"loss": per_token.mean(-1).mean().reshape(1)}


def fused_linear_grpo_loss_token(inputs, scalars):
    return _grpo_loss(inputs, "token")


def fused_linear_grpo_loss_sequence(inputs, scalars):
    return _grpo_loss(inputs, "sequence")


def _mta(inputs, normalize):
    """Multi-token attention: each score row i keeps its columns j <= i (causal), normalized over
    them (softmax or sparsemax; the masked columns get probability 0), a K x K convolution from
    heads_in to heads_out with bias (stride 1, padding K // 2), then y above the diagonal set to 0."""
    s, w = inputs["scores"], inputs["weight"]
    L, K = s.shape[-1], w.shape[-1]
    causal = torch.ones(L, L, dtype=torch.bool, device=s.device).tril()
    p = normalize(s.masked_fill(~causal, float("-inf")))
    y = torch.nn.functional.conv2d(p, w, inputs["bias"], padding=K // 2)
    return {"y": y.masked_fill(~causal, 0.0)}


def multi_token_attention(inputs, scalars):
    return _mta(inputs, lambda z: torch.softmax(z, dim=-1))


def sparse_multi_token_attention(inputs, scalars):
    # sparsemax's sort-based threshold; a masked column (-inf) never enters the support
    return _mta(inputs, lambda z: sparsemax({"x": z}, scalars)["y"])


def _neighborhood(seq, kernel_size, dilation, device=None):
    """keep[i, j]: key j is in query i's neighborhood, |j - i| <= (kernel_size // 2) * dilation with
    j - i a multiple of dilation (the window cut at the sequence's ends, not shifted)."""
    d = torch.arange(seq, device=device)[None, :] - torch.arange(seq, device=device)[:, None]
    return (d.abs() <= (kernel_size // 2) * dilation) & (d % dilation == 0)


def fused_neighborhood_attention(inputs, scalars):
    """q, k, v = x W^T + b; per head softmax(q k^T / sqrt(head_dim)) over each query's neighborhood,
    times v; the heads merged and projected by the output weight and bias."""
    x = inputs["hidden_states"]
    B, L, H = x.shape
    nh, hd = scalars["heads"], scalars["head_dim"]

    def heads_of(name):
        return torch.nn.functional.linear(x, inputs[name + "_weight"], inputs[name + "_bias"]) \
            .reshape(B, L, nh, hd).transpose(1, 2)
    q, k, v = heads_of("q"), heads_of("k"), heads_of("v")
    keep = _neighborhood(L, scalars["kernel_size"], scalars["dilation"], x.device)
    a = torch.softmax((q @ k.transpose(-1, -2) / hd ** 0.5).masked_fill(~keep, float("-inf")), dim=-1)
    o = (a @ v).transpose(1, 2).reshape(B, L, H)
    return {"y": torch.nn.functional.linear(o, inputs["out_weight"], inputs["out_bias"])}


def fused_moe(inputs, scalars):
    """y[t] = sum over the token's k routes of top_k_weights[t, r] * down_e(silu(gate) * up), e =
    top_k_index[t, r], gate, up = the halves (first, second) of gate_up_proj[e] x[t]; expert by
    expert (a token routed twice to one expert counts twice)."""
    x, w1, w2 = inputs["x"], inputs["gate_up_proj"], inputs["down_proj"]
    idx, wts = inputs["top_k_index"].long(), inputs["top_k_weights"]
    inter = scalars["intermediate"]
    y = torch.zeros_like(x)
    for e in range(w1.shape[0]):
        tok, route = torch.nonzero(idx == e, as_tuple=True)
        if tok.numel() == 0:
            continue
        h = x[tok] @ w1[e].T
        a = torch.nn.functional.silu(h[:, :inter]) * h[:, inter:]
        y = y.index_add(0, tok, (a @ w2[e].T) * wts[tok, route][:, None])
    return {"y": y}


def run(fn, inputs, scalars, tensors, mode):
    """The reference values of every output and gradient of the definition, in float64 (fn: a
    reference of this file, by name or itself, or a user's)."""
    if not callable(fn):
        fn = globals()[fn]
    grads_of = {t["of"]: t["name"] for t in tensors if t["role"] == "gradient"}
    leaves = {}
    for t in tensors:
        if t["role"] == "input":
            v = inputs[t["name"]]
            if mode != "forward" and t["name"] in grads_of and v.is_floating_point():
                v = v.detach().clone().requires_grad_(True)
            leaves[t["name"]] = v
    out = dict(fn(leaves, scalars))
    unsure = out.pop(UNSURE, {})
    ref = {k: v.detach() for k, v in out.items()}
    if mode != "forward" and grads_of:
        ups = [(out[t["of"]], inputs[t["name"]]) for t in tensors if t["role"] == "upstream"]
        has_up = {t["of"] for t in tensors if t["role"] == "upstream"}
        total = sum((o * u.reshape(o.shape)).sum() for o, u in ups)
        # an output without an upstream gradient is a loss: loss.backward() differentiates it with 1
        total = total + sum(v.sum() for k, v in out.items() if k not in has_up)
        wrt = [leaves[name] for name in grads_of]
        got = torch.autograd.grad(total, wrt, allow_unused=True)
        for name, g in zip(grads_of, got):
            ref[grads_of[name]] = g if g is not None else torch.zeros_like(leaves[name])
    if unsure:
        ref[UNSURE] = {k: v.detach() for k, v in unsure.items()}
    return ref


def compare(ref, got, returned, names, rtol, atol):
    """The comparison kbench records: counts, worst |got - ref| / tolerance, the first mismatch."""
    n = matched = left_out = 0
    max_abs = max_rel = worst = 0.0
    worst_at = detail = ""
    for name in names:
        if name not in returned:
            detail = detail or "%s: not returned by the implementation" % name
            n += 1
            worst, worst_at = float("inf"), name
            continue
        r = ref[name].reshape(-1)
        g = got[name].reshape(-1)
        skip = ref.get(UNSURE, {}).get(name)
        keep = torch.ones_like(r, dtype=torch.bool) if skip is None else ~skip.expand(ref[name].shape).reshape(-1)
        kept = int(keep.sum())
        left_out += r.numel() - kept
        scale = float(r[keep].pow(2).mean().sqrt()) if kept else 0.0
        tol = rtol * r.abs() + atol * scale
        err = (g - r).abs()
        err = torch.where(torch.isfinite(g), err, torch.full_like(err, float("inf")))
        err = torch.where(keep, err, torch.zeros_like(err))  # a value left out is not judged
        ok = err <= tol
        n += kept
        matched += int((ok & keep).sum())
        if r.numel():
            max_abs = max(max_abs, float(err.max()))
            rel = err / r.abs().clamp_min(1e-30)
            max_rel = max(max_rel, float(rel.max()))
            ratio = err / tol.clamp_min(1e-300)
            i = int(ratio.argmax())
            if float(ratio[i]) > worst or not worst_at:
                worst, worst_at = float(ratio[i]), "%s[%d]" % (name, i)
            if not detail and not bool(ok.all()):
                j = int((~ok).nonzero()[0])
                detail = "%s[%d]: got %.9g, reference %.9g (tolerance %.3g)" % (
                    name, j, float(g[j]), float(r[j]), float(tol[j]))
    big = 1e308
    return {"compared": n, "matched": matched, "max_abs": min(max_abs, big), "max_rel": min(max_rel, big),
            "worst_ratio": min(worst, big), "worst_at": worst_at[:60], "detail": detail[:250],
            "rtol": rtol, "atol": atol, "left_out": left_out}
