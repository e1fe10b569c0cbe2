"""Each float64 reference of kernels/python/kbench_reference.py against an independent
formulation, on one shape per mode (test/suites/operations.sh).  Prints TAP lines."""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../kernels/python"))
import kbench_reference  # noqa: E402

torch.manual_seed(26)
n = 0
failed = 0


def ok(cond, what):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))


def close(a, b):
    return torch.allclose(a, b, rtol=1e-12, atol=1e-12)


def rms_norm_tensors():
    return [{"name": "x", "role": "input"}, {"name": "weight", "role": "input"}, {"name": "y", "role": "output"},
            {"name": "dy", "role": "upstream", "of": "y"}, {"name": "dx", "role": "gradient", "of": "x"},
            {"name": "dweight", "role": "gradient", "of": "weight"}]


# rms_norm: the forward against x / ||x|| * sqrt(H) * w (a second formula), the gradients
# against the closed form dx = rstd (w dy - xhat mean(xhat w dy)), dweight = sum_rows dy xhat
R, H, eps = 7, 33, 1e-6
x = torch.randn(R, H, dtype=torch.float64)
w = torch.randn(H, dtype=torch.float64)
dy = torch.randn(R, H, dtype=torch.float64)
inputs = {"x": x, "weight": w, "dy": dy}
for mode in ("forward", "backward", "full"):
    ref = kbench_reference.run("rms_norm", inputs, {"eps": eps}, rms_norm_tensors(), mode)
    rstd = 1.0 / torch.sqrt(torch.linalg.vector_norm(x, dim=-1, keepdim=True) ** 2 / H + eps)
    xhat = x * rstd
    if mode != "backward":
        ok(close(ref["y"], xhat * w), "rms_norm %s: y equals x / sqrt(||x||^2 / H + eps) * w" % mode)
    if mode != "forward":
        c = (xhat * w * dy).mean(-1, keepdim=True)
        ok(close(ref["dx"], rstd * (w * dy - xhat * c)), "rms_norm %s: dx equals the closed-form backward" % mode)
        ok(close(ref["dweight"], (dy * xhat).sum(0)), "rms_norm %s: dweight equals sum over rows of dy xhat" % mode)

def definition(name):
    return json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../kernels/ops/defs/%s.json" % name)))


def tensors_of(name):
    """The definition's tensors (roles and links), as kbench sends them to the reference."""
    return definition(name)["tensors"]


def close_to(a, b, tol=1e-10):
    return torch.allclose(a, b, rtol=tol, atol=tol)


def modes_of(name, inputs, scalars, expect):
    """Every mode's reference (the one the definition names: tiled_swiglu's is swiglu's) against
    expect(mode) -> {tensor: independent value}."""
    fn = definition(name)["reference"]["python"]
    for mode in ("forward", "backward", "full"):
        ref = kbench_reference.run(fn, inputs, scalars, tensors_of(name), mode)
        for k, v in expect.items():
            if (mode == "forward") == k.startswith("d") and mode != "full":
                continue
            ok(close_to(ref[k], v), "%s %s: %s equals the independent formulation" % (name, mode, k))


# swiglu, geglu: the forward written with the activation's own formula (silu(a) = a / (1 + e^-a),
# gelu_tanh(a) = a/2 (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))), the gradients in closed form:
# dh = dy Wd, dWd = dy^T h, da = dh * up * act'(gate), dup = dh * act(gate), dx = da Wg + dup Wu,
# dWg = da^T x, dWu = dup^T x
def gated_closed_form(act, dact):
    B, T, H, I = 2, 3, 5, 7
    x = torch.randn(B, T, H, dtype=torch.float64)
    wg, wu, wd = (torch.randn(*s, dtype=torch.float64) for s in ((I, H), (I, H), (H, I)))
    dy = torch.randn(B, T, H, dtype=torch.float64)
    a, u = x @ wg.T, x @ wu.T
    h = act(a) * u
    dh = dy @ wd
    da, du = dh * u * dact(a), dh * act(a)
    flat = lambda t: t.reshape(-1, t.shape[-1])  # noqa: E731
    exp = {"y": h @ wd.T, "dx": da @ wg + du @ wu, "dw_gate": flat(da).T @ flat(x),
           "dw_up": flat(du).T @ flat(x), "dw_down": flat(dy).T @ flat(h)}
    return {"x": x, "w_gate": wg, "w_up": wu, "w_down": wd, "dy": dy}, exp


def _sig(a):
    return 1.0 / (1.0 + torch.exp(-a))


inputs, exp = gated_closed_form(lambda a: a * _sig(a), lambda a: _sig(a) * (1 + a * (1 - _sig(a))))
modes_of("swiglu", inputs, {}, exp)
# tiled_swiglu, tiled_geglu: swiglu's and geglu's reference through their own definitions
modes_of("tiled_swiglu", inputs, {}, exp)
C = math.sqrt(2.0 / math.pi)


def _gelu_tanh(a):
    return 0.5 * a * (1 + torch.tanh(C * (a + 0.044715 * a ** 3)))


def _dgelu_tanh(a):
    t = torch.tanh(C * (a + 0.044715 * a ** 3))
    return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * C * (1 + 3 * 0.044715 * a * a)


inputs, exp = gated_closed_form(_gelu_tanh, _dgelu_tanh)
modes_of("geglu", inputs, {}, exp)
modes_of("tiled_geglu", inputs, {}, exp)

# megatron_swiglu: y = [gate | up] on the last dimension (seq x batch x 2 ffn), out = gate
# sigmoid(gate) up with the sigmoid written out; closed-form gradients d gate = dout up sig (1 +
# gate (1 - sig)), d up = dout gate sig, concatenated back on the last dimension
S, Bm, F = 3, 2, 5
g, u = torch.randn(S, Bm, F, dtype=torch.float64), torch.randn(S, Bm, F, dtype=torch.float64)
dout = torch.randn(S, Bm, F, dtype=torch.float64)
sg = _sig(g)
modes_of("megatron_swiglu", {"y": torch.cat([g, u], -1), "dout": dout}, {"seq": S, "batch": Bm, "ffn": F, "ffn_double": 2 * F},
         {"out": g * sg * u, "dy": torch.cat([dout * u * sg * (1 + g * (1 - sg)), dout * g * sg], -1)})

# relu_squared: x * x where x > 0 (a second formula), dx = 2 x dy where x > 0
R, H = 6, 11
x, dy = torch.randn(R, H, dtype=torch.float64), torch.randn(R, H, dtype=torch.float64)
pos = (x > 0).to(torch.float64)
modes_of("relu_squared", {"x": x, "dy": dy}, {}, {"y": x * x * pos, "dx": 2 * x * pos * dy})

# softmax: exp(x - max) / sum (written out), dx = y (dy - sum(dy y))
e = torch.exp(x - x.max(-1, keepdim=True).values)
y = e / e.sum(-1, keepdim=True)
modes_of("softmax", {"x": x, "dy": dy}, {}, {"y": y, "dx": y * (dy - (dy * y).sum(-1, keepdim=True))})

# sparsemax: the threshold tau found by bisection on sum(max(x - tau, 0)) = 1 (not the sort), the
# gradient in closed form dx = s (dy - sum(s dy) / sum(s)), s the support (y > 0)
lo, hi = x.min(-1, keepdim=True).values - 1, x.max(-1, keepdim=True).values
for _ in range(200):
    mid = (lo + hi) / 2
    big = torch.clamp(x - mid, min=0).sum(-1, keepdim=True) > 1
    lo, hi = torch.where(big, mid, lo), torch.where(big, hi, mid)
y = torch.clamp(x - (lo + hi) / 2, min=0)
s = (y > 0).to(torch.float64)
modes_of("sparsemax", {"x": x, "dy": dy}, {}, {"y": y, "dx": s * (dy - (s * dy).sum(-1, keepdim=True) / s.sum(-1, keepdim=True))})
# sparsemax's rows left out of the dx comparison: only a row with a value within
# SPARSEMAX_UNSURE of the threshold (here row 0, one value moved onto it), and few of random rows
xs = x.clone()
tau0 = (lo + hi)[0, 0] / 2
xs[0, 5] = tau0 + kbench_reference.SPARSEMAX_UNSURE / 10
ref = kbench_reference.run("sparsemax", {"x": xs, "dy": dy}, {}, tensors_of("sparsemax"), "backward")
unsure = ref[kbench_reference.UNSURE]["dx"].reshape(-1)
ok(bool(unsure[0]), "sparsemax: a row with a value on its threshold is left out of the dx comparison")
ok(int(unsure.sum()) <= max(1, unsure.numel() // 20),
   "sparsemax: few rows are left out (%d of %d)" % (int(unsure.sum()), unsure.numel()))
cmp = kbench_reference.compare(ref, {"dx": ref["dx"] + 1.0}, {"dx"}, ["dx"], 1e-4, 1e-3)
ok(cmp["left_out"] == int(unsure.sum()) * xs.shape[-1] and cmp["compared"] == xs.numel() - cmp["left_out"]
   and cmp["matched"] == 0, "sparsemax: the comparison counts the values left out and judges the others")

# fused_add_rms_norm: h = x + residual, y the closed-form RMSNorm of h, residual_out = h; the
# gradients in closed form: dx = dresidual = rstd (w dy - hhat mean(hhat w dy)) + dresidual_out
r, w = torch.randn(R, H, dtype=torch.float64), torch.randn(H, dtype=torch.float64)
dr = torch.randn(R, H, dtype=torch.float64)
h = x + r
rstd = 1.0 / torch.sqrt((h * h).sum(-1, keepdim=True) / H + 1e-6)
hhat = h * rstd
g = rstd * (w * dy - hhat * (hhat * w * dy).mean(-1, keepdim=True)) + dr
modes_of("fused_add_rms_norm", {"x": x, "residual": r, "weight": w, "dy": dy, "dresidual_out": dr}, {"eps": 1e-6},
         {"y": hhat * w, "residual_out": h, "dx": g, "dresidual": g, "dweight": (dy * hhat).sum(0)})

# group_norm: the statistics written out per (batch, group) over channels_per_group x hidden values,
# the gradients in closed form: dxhat = dy w, dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
# per group, dweight = sum over batch and hidden of dy xhat, dbias = sum of dy
B, C, H, cpg = 3, 6, 5, 2
G = C // cpg
x, dy = torch.randn(B, C, H, dtype=torch.float64), torch.randn(B, C, H, dtype=torch.float64)
w, b = torch.randn(C, dtype=torch.float64), torch.randn(C, dtype=torch.float64)
xg = x.reshape(B, G, cpg * H)
mu = xg.mean(-1, keepdim=True)
rstd = 1.0 / torch.sqrt(((xg - mu) ** 2).mean(-1, keepdim=True) + 1e-6)
xhat = ((xg - mu) * rstd).reshape(B, C, H)
dxhat = (dy * w[None, :, None]).reshape(B, G, cpg * H)
xh = xhat.reshape(B, G, cpg * H)
dx = (rstd * (dxhat - dxhat.mean(-1, keepdim=True) - xh * (dxhat * xh).mean(-1, keepdim=True))).reshape(B, C, H)
modes_of("group_norm", {"x": x, "weight": w, "bias": b, "dy": dy},
         {"eps": 1e-6, "batch": B, "channels": C, "hidden": H, "channels_per_group": cpg, "groups": G},
         {"y": xhat * w[None, :, None] + b[None, :, None], "dx": dx, "dweight": (dy * xhat).sum((0, 2)),
          "dbias": dy.sum((0, 2))})

# cross_entropy: the loss written out, mean over tokens of logsumexp(z) - z[target], the gradient in
# closed form (softmax(z) - onehot(target)) / tokens; the targets arrive as float64, as kbench sends them
N, V = 5, 9
z = torch.randn(N, V, dtype=torch.float64)
tgt = torch.randint(0, V, (N,))
lse = torch.log(torch.exp(z - z.max(-1, keepdim=True).values).sum(-1)) + z.max(-1).values
onehot = torch.zeros(N, V, dtype=torch.float64)
onehot[torch.arange(N), tgt] = 1
modes_of("cross_entropy", {"logits": z, "target": tgt.to(torch.float64)}, {},
         {"loss": (lse - z[torch.arange(N), tgt]).mean().reshape(1), "dlogits": (torch.softmax(z, -1) - onehot) / N})

# fused_linear_orpo_loss, fused_linear_simpo_loss, fused_linear_cpo_loss: the per-token
# log-probabilities written out token by token (z[y] - logsumexp(z), logsumexp with the max shifted
# out), the pairwise losses with sigmoid written as 1 / (1 + e^-u), and the gradients in closed
# form: dloss/dtok from the NLL (-alpha / (half T) on the chosen tokens) and from the pairwise loss
# (df/dc, df/dr times 1/T for an average, 1 for a sum, over half), dlogits = dtok (onehot - softmax),
# dx = dlogits W, dweight = dlogits^T x
def preference_closed_form(name, kind):
    B, T, H, V = 4, 3, 5, 7
    half, alpha, beta, gamma = B // 2, 1.0, 0.1, 0.5
    x = torch.randn(B, T, H, dtype=torch.float64)
    w = torch.randn(V, H, dtype=torch.float64) * 0.5
    tgt = torch.randint(0, V, (B, T))
    z = torch.einsum("bth,vh->btv", x, w)
    tok = torch.zeros(B, T, dtype=torch.float64)
    for b in range(B):
        for t in range(T):
            m = max(float(v) for v in z[b, t])
            tok[b, t] = z[b, t, tgt[b, t]] - (m + math.log(sum(math.exp(float(v) - m) for v in z[b, t])))
    agg = 1.0 if kind == "cpo" else 1.0 / T
    seq = tok.sum(-1) * agg
    c, r = seq[:half], seq[half:]
    sig = lambda u: 1.0 / (1.0 + torch.exp(-u))  # noqa: E731
    if kind == "orpo":
        lo = (c - r) - (torch.log(1 - torch.exp(c)) - torch.log(1 - torch.exp(r)))
        f = beta * torch.log(1 + torch.exp(-lo))
        dfdl = -beta * sig(-lo)
        dfdc, dfdr = dfdl / (1 - torch.exp(c)), -dfdl / (1 - torch.exp(r))
    else:
        u = beta * (c - r) - (gamma if kind == "simpo" else 0.0)
        f = torch.log(1 + torch.exp(-u))
        dfdc = -beta * sig(-u)
        dfdr = -dfdc
    nll = -tok[:half].sum() / (half * T)
    loss = alpha * nll + f.mean()
    dtok = torch.zeros(B, T, dtype=torch.float64)
    dtok[:half] = -alpha / (half * T) + (dfdc * agg / half)[:, None]
    dtok[half:] = (dfdr * agg / half)[:, None]
    onehot = torch.nn.functional.one_hot(tgt, V).to(torch.float64)
    dz = dtok[..., None] * (onehot - torch.softmax(z, -1))
    modes_of(name, {"x": x, "weight": w, "target": tgt.to(torch.float64)}, {},
             {"loss": loss.reshape(1), "dx": torch.einsum("btv,vh->bth", dz, w),
              "dweight": torch.einsum("btv,bth->vh", dz, x)})


for _name, _kind in (("fused_linear_orpo_loss", "orpo"), ("fused_linear_simpo_loss", "simpo"),
                     ("fused_linear_cpo_loss", "cpo")):
    if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../kernels/ops/defs/%s.json" % _name)):
        preference_closed_form(_name, _kind)
# kto_loss: each sequence's average target log-probability written out token by token (z[y] -
# logsumexp(z) with the max shifted out, targets equal to 42 skipped), the loss with sigmoid written
# as 1 / (1 + e^-u), chosen and rejected by an explicit branch, and the gradients in closed form:
# dL/dp_b = -(beta s_b / B) sig (1 - sig), dtok = dL/dp_b / kept_b on the kept tokens,
# dlogits = dtok (onehot - softmax), dx = dlogits W, dweight = dlogits^T x, dbias = sum of dlogits;
# the reference head takes none
def kto_closed_form():
    B, T, H, V, beta, ign = 5, 4, 6, 50, 0.1, 42
    x, rx = (torch.randn(B, T, H, dtype=torch.float64) for _ in range(2))
    w, rw = (torch.randn(V, H, dtype=torch.float64) * 0.5 for _ in range(2))
    b, rb = (torch.randn(V, dtype=torch.float64) * 0.5 for _ in range(2))
    tgt = torch.randint(0, V, (B, T))
    tgt[0, 1] = tgt[2, 0] = tgt[2, 3] = tgt[4, 2] = ign  # ignored tokens in three sequences
    labels = torch.tensor([True, False, True, True, False])
    kl = torch.tensor([0.3], dtype=torch.float64)
    z = torch.einsum("bth,vh->btv", x, w) + b

    def seq_logps(zz):
        out = []
        for i in range(B):
            tot, kept = 0.0, 0
            for t in range(T):
                y = int(tgt[i, t])
                if y == ign:
                    continue
                m = max(float(v) for v in zz[i, t])
                tot += float(zz[i, t, y]) - (m + math.log(sum(math.exp(float(v) - m) for v in zz[i, t])))
                kept += 1
            out.append((tot / kept, kept))
        return out
    pol = seq_logps(z)
    ref = seq_logps(torch.einsum("bth,vh->btv", rx, rw) + rb)
    sig = lambda u: 1.0 / (1.0 + math.exp(-u))  # noqa: E731
    loss, dp = 0.0, []
    for i in range(B):
        u = pol[i][0] - ref[i][0] - float(kl)
        if labels[i]:
            g = sig(beta * u)
            loss += 1 - g
            dp.append(-beta * g * (1 - g) / B)
        else:
            g = sig(-beta * u)
            loss += 1 - g
            dp.append(beta * g * (1 - g) / B)
    loss /= B
    dtok = torch.zeros(B, T, dtype=torch.float64)
    for i in range(B):
        for t in range(T):
            if int(tgt[i, t]) != ign:
                dtok[i, t] = dp[i] / pol[i][1]
    onehot = torch.nn.functional.one_hot(torch.where(tgt == ign, 0, tgt), V).to(torch.float64)
    dz = dtok[..., None] * (onehot - torch.softmax(z, -1))
    modes_of("kto_loss", {"x": x, "ref_x": rx, "weight": w, "bias": b, "ref_weight": rw, "ref_bias": rb,
                          "target": tgt.to(torch.float64), "preference_labels": labels.to(torch.float64),
                          "kl": kl}, {"beta": beta},
             {"loss": torch.tensor([loss], dtype=torch.float64), "dx": torch.einsum("btv,vh->bth", dz, w),
              "dweight": torch.einsum("btv,bth->vh", dz, x), "dbias": dz.sum((0, 1))})


kto_closed_form()
# kl_div: the loss as a loop over rows of the row's KL divergence sum_j t_j log(t_j / e^lp_j) (not
# torch's kl_div), averaged over the rows; the gradient in closed form -target / tokens; the target
# takes no gradient (Liger's script: only the log-probabilities require it)
N, V = 5, 9
lp = torch.log_softmax(torch.randn(N, V, dtype=torch.float64), -1)
t = torch.softmax(torch.randn(N, V, dtype=torch.float64), -1)
rows = [sum(float(t[i, j]) * math.log(float(t[i, j]) / math.exp(float(lp[i, j]))) for j in range(V)) for i in range(N)]
modes_of("kl_div", {"log_probs": lp, "target_probs": t}, {},
         {"loss": torch.tensor([sum(rows) / N], dtype=torch.float64), "dlog_probs": -t / N})

# tvd: for two rows that each sum to one, half the L1 distance is the sum of the positive parts of
# p - q (a different formula); the loss averages it over the rows; the gradient in closed form
# sign(p - q) / (2 tokens); q takes no gradient (Liger's script: only p requires it)
p = torch.softmax(torch.randn(N, V, dtype=torch.float64), -1)
qq = torch.softmax(torch.randn(N, V, dtype=torch.float64), -1)
modes_of("tvd", {"p": p, "q": qq}, {},
         {"loss": (p - qq).clamp(min=0).sum(-1).mean().reshape(1), "dp": torch.sign(p - qq) / (2 * N)})
# fused_linear_cross_entropy: the logits as an explicit sum over hidden (einsum), the loss written out
# (logsumexp(z) - z[target], mean over tokens), the gradients in closed form: dz = (softmax(z) -
# onehot(target)) / tokens, dx = dz weight, dweight = dz^T x
N, H, V = 5, 6, 9
xf = torch.randn(N, H, dtype=torch.float64)
wf = torch.randn(V, H, dtype=torch.float64)
tgt = torch.randint(0, V, (N,))
z = torch.einsum("nh,vh->nv", xf, wf)
lse = torch.log(torch.exp(z - z.max(-1, keepdim=True).values).sum(-1)) + z.max(-1).values
onehot = torch.zeros(N, V, dtype=torch.float64)
onehot[torch.arange(N), tgt] = 1
dz = (torch.exp(z - lse[:, None]) - onehot) / N
modes_of("fused_linear_cross_entropy", {"x": xf, "weight": wf, "target": tgt.to(torch.float64)}, {},
         {"loss": (lse - z[torch.arange(N), tgt]).mean().reshape(1), "dx": dz @ wf, "dweight": dz.T @ xf})

# fused_linear_jsd: the JSD through entropies, H(M) - beta H(P_t) - (1 - beta) H(P_s), M = (1 - beta)
# P_s + beta P_t, mean over tokens; the student's gradients in closed form: dz = q (g - sum(q g)) /
# tokens with q = P_s, g = (1 - beta) (log q - log m); dstudent_input = dz W_s, dstudent_weight = dz^T x_s
N, H, V, beta = 5, 6, 9, 0.3
xs, ws = torch.randn(N, H, dtype=torch.float64), torch.randn(V, H, dtype=torch.float64)
xt, wt = torch.randn(N, H, dtype=torch.float64), torch.randn(V, H, dtype=torch.float64)
q, p = torch.softmax(xs @ ws.T, -1), torch.softmax(xt @ wt.T, -1)
mq = (1 - beta) * q + beta * p


def entropy(d):
    return -(d * d.log()).sum(-1)


g = (1 - beta) * (q.log() - mq.log())
dz = q * (g - (q * g).sum(-1, keepdim=True)) / N
modes_of("fused_linear_jsd", {"student_input": xs, "student_weight": ws, "teacher_input": xt, "teacher_weight": wt},
         {"beta": beta},
         {"loss": (entropy(mq) - beta * entropy(p) - (1 - beta) * entropy(q)).mean().reshape(1),
          "dstudent_input": dz @ ws, "dstudent_weight": dz.T @ xs})

# distill_cosine_loss: the cosine written out, s.t / (|s| |t|), the student's logit gradient in closed
# form: dz = w_hard (softmax(s) - onehot) / tokens - w_soft (t / (|s| |t|) - cos s / |s|^2) / tokens;
# dstudent_input = dz W_s, dstudent_weight = dz^T x_s (unequal weights, so swapping them is seen)
N, H, V, w_hard, w_soft = 5, 8, 9, 0.3, 0.7
xs, ws = torch.randn(N, H // 2, dtype=torch.float64), torch.randn(V, H // 2, dtype=torch.float64)
xt, wt = torch.randn(N, H, dtype=torch.float64), torch.randn(V, H, dtype=torch.float64)
tgt = torch.randint(0, V, (N,))
s, t = xs @ ws.T, xt @ wt.T
ns, nt = s.norm(dim=-1, keepdim=True), t.norm(dim=-1, keepdim=True)
cos = (s * t).sum(-1, keepdim=True) / (ns * nt)
onehot = torch.zeros(N, V, dtype=torch.float64)
onehot[torch.arange(N), tgt] = 1
lse = torch.logsumexp(s, -1)
dz = w_hard * (torch.softmax(s, -1) - onehot) / N - w_soft * (t / (ns * nt) - cos * s / ns ** 2) / N
modes_of("distill_cosine_loss",
         {"student_input": xs, "student_weight": ws, "teacher_input": xt, "teacher_weight": wt,
          "target": tgt.to(torch.float64)},
         {"weight_hard_loss": w_hard, "weight_soft_loss": w_soft, "hidden": H, "student_hidden": H // 2},
         {"loss": (w_hard * (lse - s[torch.arange(N), tgt]).mean() + w_soft * (1 - cos).mean()).reshape(1),
          "dstudent_input": dz @ ws, "dstudent_weight": dz.T @ xs})

# rope, llama4_rope: the rotation written as a complex product e^(i t theta_j), theta_j = 10000^(-2j /
# head_dim), on the pairs each pairs (rope: j and j + head_dim/2; llama4_rope: 2j and 2j + 1); the
# rotation is orthogonal, so the gradient is the upstream rotated back, by e^(-i t theta_j)
T, QH, KH, HD = 5, 3, 2, 8
theta = 10000.0 ** (-torch.arange(0, HD, 2, dtype=torch.float64) / HD)
phase = torch.polar(torch.ones(T, HD // 2, dtype=torch.float64), torch.arange(T, dtype=torch.float64)[:, None] * theta)
sc = {"seq": T, "hidden": QH * HD, "q_heads": QH, "kv_heads": KH, "head_dim": HD}


def rot_half(x, ph):  # x: 1 x heads x seq x head_dim
    z = torch.complex(x[..., :HD // 2], x[..., HD // 2:]) * ph[None, None]
    return torch.cat([z.real, z.imag], -1)


def rot_adjacent(x, ph):  # x: 1 x seq x heads x head_dim
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], HD // 2, 2).contiguous()) * ph[None, :, None]
    return torch.view_as_real(z).reshape(x.shape)


for name, rot, shp in (("rope", rot_half, lambda h: (1, h, T, HD)), ("llama4_rope", rot_adjacent, lambda h: (1, T, h, HD))):
    q, k, dq, dk = (torch.randn(*shp(h), dtype=torch.float64) for h in (QH, KH, QH, KH))
    modes_of(name, {"q": q, "k": k, "dq_out": dq, "dk_out": dk}, sc,
             {"q_out": rot(q, phase), "k_out": rot(k, phase), "dq": rot(dq, phase.conj()), "dk": rot(dk, phase.conj())})

# embedding: y = onehot(ids) W (a product, not an index), dweight = onehot(ids)^T dy (the rows of dy
# summed per id); the ids arrive as float64, as kbench sends them
B, T, D, V = 2, 7, 4, 5
ids = torch.randint(0, V, (B, T))
W, dy = torch.randn(V, D, dtype=torch.float64), torch.randn(B, T, D, dtype=torch.float64)
oh = torch.nn.functional.one_hot(ids, V).to(torch.float64)
modes_of("embedding", {"input_ids": ids.to(torch.float64), "weight": W, "dy": dy}, {},
         {"y": oh @ W, "dweight": oh.reshape(-1, V).T @ dy.reshape(-1, D)})

# fused_linear_grpo_loss_token, _sequence: on-policy (old logps = logps detached) every ratio is 1,
# inside the clip, so the loss is -mean(advantages) and d loss / d logp_bt = -A_b / (B T) for either
# importance-sampling level; through the log-softmax of the logit before each completion token,
# dlogits[b, t] = -A_b / (B T) (onehot(id_bt) - softmax(logits[b, t])), and zero at the last position
B, T, V = 3, 4, 6
z = torch.randn(B, T + 1, V, dtype=torch.float64)
ids = torch.randint(0, V, (B, T))
adv = torch.randn(B, dtype=torch.float64)
dz = torch.zeros(B, T + 1, V, dtype=torch.float64)
dz[:, :T] = -adv[:, None, None] / (B * T) * (torch.nn.functional.one_hot(ids, V).to(torch.float64)
                                           - torch.softmax(z[:, :T], -1))
for level in ("token", "sequence"):
    modes_of("fused_linear_grpo_loss_" + level, {"logits": z, "completion_ids": ids.to(torch.float64), "advantages": adv},
             {}, {"loss": -adv.mean().reshape(1), "dlogits": dz})
# multi_token_attention, sparse_multi_token_attention: the convolution written as a sum of K x K
# shifted copies of the zero-padded probabilities (not conv2d), softmax as exp / sum over the causal
# columns, sparsemax's threshold by bisection; the gradients in closed form: g = dy below the
# diagonal, dbias = sum g, dweight[o, c, u, v] = sum g[o] p_pad[c] shifted by (u, v), dp = the
# shifted copies of g through w summed back, then dscores = p (dp - sum p dp) (softmax) or
# s (dp - mean over the support s of dp) (sparsemax)
B, C, O, L, K = 2, 3, 2, 7, 3
P = K // 2
sc = torch.randn(B, C, L, L, dtype=torch.float64)
w, b = torch.randn(O, C, K, K, dtype=torch.float64), torch.randn(O, dtype=torch.float64)
dy = torch.randn(B, O, L, L, dtype=torch.float64)
low = torch.ones(L, L, dtype=torch.float64).tril()
e = torch.exp(sc - sc.max(-1, keepdim=True).values) * low
soft = e / e.sum(-1, keepdim=True)
lo = sc.min(-1, keepdim=True).values - 1
hi = sc.max(-1, keepdim=True).values
for _ in range(200):
    mid = (lo + hi) / 2
    big = (torch.clamp(sc - mid, min=0) * low).sum(-1, keepdim=True) > 1
    lo, hi = torch.where(big, mid, lo), torch.where(big, hi, mid)
sparse = torch.clamp(sc - (lo + hi) / 2, min=0) * low


def mta_closed_form(p, dnorm):
    pp = torch.nn.functional.pad(p, (P, P, P, P))
    y = b.view(1, O, 1, 1).expand(B, O, L, L).clone()
    for u in range(K):
        for v in range(K):
            y += torch.einsum("bcij,oc->boij", pp[:, :, u:u + L, v:v + L], w[:, :, u, v])
    g = dy * low
    dw = torch.zeros_like(w)
    dpp = torch.zeros_like(pp)
    for u in range(K):
        for v in range(K):
            dw[:, :, u, v] = torch.einsum("boij,bcij->oc", g, pp[:, :, u:u + L, v:v + L])
            dpp[:, :, u:u + L, v:v + L] += torch.einsum("boij,oc->bcij", g, w[:, :, u, v])
    return {"y": y * low, "dscores": dnorm(dpp[:, :, P:P + L, P:P + L]), "dweight": dw, "dbias": g.sum((0, 2, 3))}


sup = (sparse > 0).to(torch.float64)
for name, p, dnorm in (
        ("multi_token_attention", soft, lambda dp: soft * (dp - (soft * dp).sum(-1, keepdim=True))),
        ("sparse_multi_token_attention", sparse,
         lambda dp: sup * (dp - (sup * dp).sum(-1, keepdim=True) / sup.sum(-1, keepdim=True)))):
    modes_of(name, {"scores": sc, "weight": w, "bias": b, "dy": dy}, {}, mta_closed_form(p, dnorm))

# fused_neighborhood_attention: the forward as an explicit loop over the queries, each attending to
# the list of its neighbors j = i + m * dilation, |m| <= kernel_size // 2, inside the sequence; the
# gradients in closed form through the attention (dV = A^T dO, dA = dO V^T, dS = A (dA - sum A dA),
# dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d)) and the four projections (dW = dout^T in, db = sum dout)
B, L, H, NH, KS, DIL = 2, 11, 12, 3, 5, 2
HD = H // NH
x = torch.randn(B, L, H, dtype=torch.float64)
prm = {}
for pn in ("q", "k", "v", "out"):
    prm[pn + "_weight"], prm[pn + "_bias"] = torch.randn(H, H, dtype=torch.float64) / 3, torch.randn(H, dtype=torch.float64)
dy = torch.randn(B, L, H, dtype=torch.float64)


def proj(t, pn):
    return t @ prm[pn + "_weight"].T + prm[pn + "_bias"]


def split(t):
    return t.reshape(B, L, NH, HD).transpose(1, 2)


q, k, v = (split(proj(x, pn)) for pn in ("q", "k", "v"))
o_loop = torch.zeros(B, NH, L, HD, dtype=torch.float64)
keep = torch.zeros(L, L, dtype=torch.float64)
for i in range(L):
    nb = [i + m * DIL for m in range(-(KS // 2), KS // 2 + 1) if 0 <= i + m * DIL < L]
    keep[i, nb] = 1
    sc = (q[:, :, i:i + 1, :] * k[:, :, nb, :]).sum(-1) / math.sqrt(HD)
    wts = torch.exp(sc - sc.max(-1, keepdim=True).values)
    wts = wts / wts.sum(-1, keepdim=True)
    o_loop[:, :, i, :] = (wts[..., None] * v[:, :, nb, :]).sum(-2)
merged = o_loop.transpose(1, 2).reshape(B, L, H)
e = torch.exp(q @ k.transpose(-1, -2) / math.sqrt(HD)) * keep
att = e / e.sum(-1, keepdim=True)
dmerged = dy @ prm["out_weight"]
do = split(dmerged)
dv, da = att.transpose(-1, -2) @ do, do @ v.transpose(-1, -2)
ds = att * (da - (att * da).sum(-1, keepdim=True))
dq, dk = ds @ k / math.sqrt(HD), ds.transpose(-1, -2) @ q / math.sqrt(HD)
expect = {"y": proj(merged, "out"), "dout_weight": dy.reshape(-1, H).T @ merged.reshape(-1, H),
          "dout_bias": dy.sum((0, 1))}
dx = torch.zeros_like(x)
for pn, g in (("q", dq), ("k", dk), ("v", dv)):
    g = g.transpose(1, 2).reshape(B, L, H)
    dx += g @ prm[pn + "_weight"]
    expect["d%s_weight" % pn], expect["d%s_bias" % pn] = g.reshape(-1, H).T @ x.reshape(-1, H), g.sum((0, 1))
expect["dhidden_states"] = dx
ok(close_to(expect.pop("dk_bias"), torch.zeros(H, dtype=torch.float64)), "fused_neighborhood_attention: dk_bias is zero (a key bias shifts a row's scores alike)")
modes_of("fused_neighborhood_attention", dict(prm, hidden_states=x, dy=dy),
         {"heads": NH, "head_dim": HD, "kernel_size": KS, "dilation": DIL}, expect)

# fused_moe: every route's expert weights gathered (no loop over experts) and the routes summed by
# einsum; the gradients in closed form: do = w dy, dw = o . dy, da = do W2, dW2 = sum do a^T,
# du = da silu(g), dg = da u silu'(g) (silu' = s (1 + g (1 - s)), s = sigmoid(g)), dW1 = sum [dg, du] x^T,
# dx = sum [dg, du] W1; a token is routed twice to expert 0 to check repeats add up
T, H, I, E, KR = 6, 5, 4, 3, 2
x = torch.randn(T, H, dtype=torch.float64)
W1, W2 = torch.randn(E, 2 * I, H, dtype=torch.float64), torch.randn(E, H, I, dtype=torch.float64)
idx = torch.randint(0, E, (T, KR))
idx[0] = 0
wts, dy = torch.rand(T, KR, dtype=torch.float64), torch.randn(T, H, dtype=torch.float64)
w1, w2 = W1[idx], W2[idx]                                   # T x K x 2I x H, T x K x H x I
hh = torch.einsum("tkjh,th->tkj", w1, x)
g, u = hh[..., :I], hh[..., I:]
sg = torch.sigmoid(g)
a = g * sg * u
o = torch.einsum("tkhi,tki->tkh", w2, a)
do = wts[..., None] * dy[:, None, :]
da = torch.einsum("tkh,tkhi->tki", do, w2)
dh = torch.cat([da * u * sg * (1 + g * (1 - sg)), da * g * sg], -1)
oh = torch.nn.functional.one_hot(idx, E).to(torch.float64)  # T x K x E
modes_of("fused_moe", {"x": x, "gate_up_proj": W1, "down_proj": W2, "top_k_index": idx.to(torch.float64),
                       "top_k_weights": wts, "dy": dy}, {"intermediate": I},
         {"y": (wts[..., None] * o).sum(1), "dx": torch.einsum("tkj,tkjh->th", dh, w1),
          "dgate_up_proj": torch.einsum("tke,tkj,th->ejh", oh, dh, x),
          "ddown_proj": torch.einsum("tke,tkh,tki->ehi", oh, do, a), "dtop_k_weights": (o * dy[:, None, :]).sum(-1)})

# dyt: tanh written out, (e^2z - 1) / (e^2z + 1); the closed-form backward with s = 1 - t^2:
# dx = dy gamma alpha s, dalpha = sum(dy gamma x s), dgamma = sum over tokens of dy t, dbeta = sum of dy
N, H = 6, 9
x, dy = 2 * torch.randn(N, H, dtype=torch.float64), torch.randn(N, H, dtype=torch.float64)
al, ga, be = torch.randn(1, dtype=torch.float64), torch.randn(H, dtype=torch.float64), torch.randn(H, dtype=torch.float64)
e2 = torch.exp(2 * al * x)
t = (e2 - 1) / (e2 + 1)
s = 1 - t * t
modes_of("dyt", {"x": x, "alpha": al, "gamma": ga, "beta": be, "dy": dy}, {},
         {"y": ga * t + be, "dx": dy * ga * al * s, "dalpha": (dy * ga * x * s).sum().reshape(1),
          "dgamma": (dy * t).sum(0), "dbeta": dy.sum(0)})

# poly_norm: each norm written as u / sqrt(||u||^2 / H + eps); the closed-form backward: with
# n_p = r_p u_p (u_p = x^p) and g_p = w_p dy, du_p = r_p (g_p - n_p mean(n_p g_p)), dx = du_3 3x^2
# + du_2 2x + du_1, dweight = the sums of dy n_3, dy n_2, dy n_1, dbias = the sum of dy
N, H, eps = 5, 12, 1e-6
x, dy = 2 * torch.randn(N, H, dtype=torch.float64), torch.randn(N, H, dtype=torch.float64)
w, b = torch.randn(3, dtype=torch.float64), torch.randn(1, dtype=torch.float64)
u = {p: x ** p for p in (3, 2, 1)}
r = {p: 1.0 / torch.sqrt(torch.linalg.vector_norm(u[p], dim=-1, keepdim=True) ** 2 / H + eps) for p in u}
nrm = {p: u[p] * r[p] for p in u}
wp = {3: w[0], 2: w[1], 1: w[2]}
du = {p: r[p] * (wp[p] * dy - nrm[p] * (nrm[p] * wp[p] * dy).mean(-1, keepdim=True)) for p in u}
modes_of("poly_norm", {"x": x, "weight": w, "bias": b, "dy": dy}, {"eps": eps},
         {"y": w[0] * nrm[3] + w[1] * nrm[2] + w[2] * nrm[1] + b,
          "dx": du[3] * 3 * x * x + du[2] * 2 * x + du[1],
          "dweight": torch.stack([(dy * nrm[p]).sum() for p in (3, 2, 1)]), "dbias": dy.sum().reshape(1)})

# qwen2vl_mrope: Transformers' construction, written independently of the reference's section
# index: three position rows (t, seq + t, 2 seq + t), the frequencies split into mrope_section's
# chunks [section_t, section_hw, section_hw], chunk i taking its angles from row i, and the
# rotation a complex product e^(i angle) on the pairs (j, j + head_dim/2); dq is dq_out rotated
# back by e^(-i angle); k takes no gradient (Liger's script differentiates q_out alone)
T, QH, KH, HD = 5, 3, 2, 16
hw = HD * 3 // 16
sect = [HD // 2 - 2 * hw, hw, hw]
theta = 1e6 ** (-torch.arange(0, HD, 2, dtype=torch.float64) / HD)
rows = [(torch.arange(T, dtype=torch.float64) + r * T)[:, None] * theta for r in range(3)]
ang = torch.cat([rows[i].split(sect, dim=-1)[i] for i in range(3)], -1)
ph = torch.polar(torch.ones_like(ang), ang)
q, k, dq = (torch.randn(1, h, T, HD, dtype=torch.float64) for h in (QH, KH, QH))


def rot_mrope(x, p):
    z = torch.complex(x[..., :HD // 2], x[..., HD // 2:]) * p[None, None]
    return torch.cat([z.real, z.imag], -1)


modes_of("qwen2vl_mrope", {"q": q, "k": k, "dq_out": dq},
         {"seq": T, "hidden": QH * HD, "q_heads": QH, "kv_heads": KH, "head_dim": HD, "section_hw": hw,
          "section_t": sect[0], "rope_theta": 1e6},
         {"q_out": rot_mrope(q, ph), "k_out": rot_mrope(k, ph), "dq": rot_mrope(dq, ph.conj())})
ok(sect == [2, 3, 3] and not torch.allclose(rows[0][:, 2:], rows[1][:, 2:]),
   "qwen2vl_mrope's test shape has all three sections (head_dim 16: [2, 3, 3]) and distinct rows")

# the comparison itself: equal passes, a perturbation beyond the tolerance fails, a missing output fails
ref = {"y": torch.ones(4, dtype=torch.float64)}
r = kbench_reference.compare(ref, {"y": ref["y"].clone()}, {"y"}, ["y"], 1e-5, 1e-5)
ok(r["matched"] == r["compared"] == 4, "compare: equal values all match")
r = kbench_reference.compare(ref, {"y": ref["y"] + 1e-3}, {"y"}, ["y"], 1e-5, 1e-5)
ok(r["matched"] == 0 and r["worst_ratio"] > 1, "compare: values off by 1e-3 under a 1e-5 tolerance fail")
r = kbench_reference.compare(ref, {}, set(), ["y"], 1e-5, 1e-5)
ok(r["matched"] < r["compared"] and "not returned" in r["detail"], "compare: an output not returned fails")

# the comparison's numbers against hand arithmetic: y = [1, -2, 4, 0.5] got [1.1, -2, 4.2, 0.5], rtol
# 0.01, atol 0.001 of the rms of y (sqrt(21.25 / 4) = 2.3048861...): tolerances 0.0123049,
# 0.0223049, 0.0423049, 0.0073049; errors 0.1, 0, 0.2, 0.  So the largest |error| (0.2, at y[2]),
# the largest relative error (0.1, at y[0]) and the worst error / tolerance (0.1 / 0.0123049 =
# 8.1268..., at y[0]) are three different values; z = [3] got [3.5] fails too, after y.
def near(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


sc = math.sqrt(21.25 / 4)
ref = {"y": torch.tensor([1.0, -2.0, 4.0, 0.5], dtype=torch.float64), "z": torch.tensor([3.0], dtype=torch.float64)}
got = {"y": torch.tensor([1.1, -2.0, 4.2, 0.5], dtype=torch.float64), "z": torch.tensor([3.5], dtype=torch.float64)}
r = kbench_reference.compare(ref, got, {"y", "z"}, ["y"], 0.01, 0.001)
ok(r["compared"] == 4 and r["matched"] == 2 and r["left_out"] == 0, "compare by hand: 4 compared, 2 matched (y[1], y[3])")
ok(near(r["max_abs"], 0.2), "compare by hand: max_abs is the largest |got - ref| (0.2 at y[2]), got %r" % r["max_abs"])
ok(near(r["max_rel"], 0.1), "compare by hand: max_rel is the largest |got - ref| / |ref| (0.1 at y[0]), got %r" % r["max_rel"])
ok(near(r["worst_ratio"], 0.1 / (0.01 + 0.001 * sc)) and r["worst_at"] == "y[0]",
   "compare by hand: worst_ratio 8.1268 at y[0] (error / tolerance), got %r at %s" % (r["worst_ratio"], r["worst_at"]))
ok(r["detail"] == "y[0]: got 1.1, reference 1 (tolerance %.3g)" % (0.01 + 0.001 * sc),
   "compare by hand: the detail names the first mismatch with its tolerance: %s" % r["detail"])
r2 = kbench_reference.compare(ref, got, {"y", "z"}, ["y", "z"], 0.01, 0.001)
ok(r2["detail"].startswith("y[0]:") and r2["compared"] == 5 and r2["matched"] == 2,
   "compare by hand: two failing outputs, the detail is the first one's (y, not z): %s" % r2["detail"])
ok(near(r2["max_abs"], 0.5) and near(r2["worst_ratio"], 0.5 / (0.03 + 0.001 * 3)) and r2["worst_at"] == "z[0]",
   "compare by hand: over y and z the worst is z[0] (0.5 / 0.033 = 15.15), got %r at %s" % (r2["worst_ratio"], r2["worst_at"]))
r3 = kbench_reference.compare(ref, {"y": got["y"], "z": ref["z"].clone()}, {"y", "z"}, ["y", "z"], 0.01, 0.001)
ok(r3["detail"].startswith("y[0]:") and r3["worst_at"] == "y[0]",
   "compare by hand: a passing output after a failing one leaves the detail and the worst as they were: %s" % r3["detail"])
# a value the reference is unsure of is left out: y[2] (error 0.2) unjudged
ref_u = dict(ref, **{kbench_reference.UNSURE: {"y": torch.tensor([False, False, True, False])}})
r = kbench_reference.compare(ref_u, got, {"y"}, ["y"], 0.01, 0.001)
ok(r["compared"] == 3 and r["left_out"] == 1 and r["matched"] == 2 and near(r["max_abs"], 0.1)
   and near(r["worst_ratio"], 0.1 / (0.01 + 0.001 * math.sqrt(5.25 / 3))),
   "compare by hand: an unsure value is left out (3 compared, 1 left out, max_abs 0.1 and the rms scale "
   "sqrt(5.25 / 3) without y[2]): %r" % r)
# a NaN answer is infinitely wrong, reported as the largest finite double
r = kbench_reference.compare(ref, {"y": torch.tensor([1.0, float("nan"), 4.0, 0.5], dtype=torch.float64)}, {"y"}, ["y"], 0.01, 0.001)
ok(r["matched"] == 3 and r["worst_ratio"] == 1e308 and r["max_abs"] == 1e308 and r["worst_at"] == "y[1]",
   "compare by hand: a NaN fails its value, its error reported as 1e308: %r" % r)
# all equal: every number zero
r = kbench_reference.compare(ref, {"y": ref["y"].clone()}, {"y"}, ["y"], 0.01, 0.001)
ok(r["max_abs"] == r["max_rel"] == r["worst_ratio"] == 0.0 and r["detail"] == "" and r["worst_at"] == "y[0]",
   "compare by hand: equal values: every error 0 and no detail: %r" % r)
print("1..%d" % n)
sys.exit(1 if failed else 0)
