"""kbench_builtin.py: the built-in python implementations of kbench's operations.

"huggingface" and "torch" are the PyTorch baselines Liger-Kernel's benchmark
scripts (benchmark/scripts/benchmark_<op>.py) time against its kernels, and
"liger" is Liger-Kernel's own module, used when liger_kernel is importable
(a checkout on PYTHONPATH or an install).  Both names run the same PyTorch
code; Liger's scripts call it "huggingface" for layer_norm (torch.nn.LayerNorm,
what Transformers uses) and "torch" for the losses.  Our own code, written
from the operations' definitions (kernels/ops/<op>.c); nothing is copied.

Each factory builds the call as those scripts do (modules, leaves that
require gradients, the untimed forward of a backward) from kbench's inputs
and returns the timed step; step.reset sets every gradient to None before
each call (do_bench's grad_to_none, for all leaves so that the check sees
one call's gradients).  Differences from kbench's own definitions of a
mode are in docs/BYO.md.
"""
import torch
import torch.nn.functional as F

EPS = 1e-6
BETA = 0.5


def versions(name):
    if name != "liger":
        return {}
    import liger_kernel
    out = {}
    try:
        from importlib.metadata import version
        out["liger_kernel"] = version("liger-kernel")
    except Exception:  # noqa: BLE001 -- a checkout without metadata
        out["liger_kernel"] = getattr(liger_kernel, "__version__", "checkout")
    try:
        import os
        import subprocess
        d = os.path.dirname(os.path.abspath(liger_kernel.__file__))
        c = subprocess.run(["git", "-C", d, "rev-parse", "--show-toplevel", "HEAD"], capture_output=True,
                           text=True, timeout=10)
        lines = c.stdout.split()
        # only a checkout of Liger-Kernel itself, not some repository the install happens to sit in
        if c.returncode == 0 and len(lines) == 2 and "liger" in os.path.basename(lines[0]).lower() \
                and len(lines[1]) == 40:
            out["liger_kernel_commit"] = lines[1]
    except Exception:  # noqa: BLE001 -- no git: the version alone
        pass
    return out


class Step:
    """The timed step.  reset (untimed, before every call, after kbench changed the inputs in place):
    copies the current inputs into the leaves made from them, redoes what the step needs from them
    (a backward step's forward), sets every gradient to None."""
    def __init__(self, fn, leaves, copies=(), redo=None):
        self.fn = fn
        self.leaves = leaves
        self.copies = list(copies)
        self.redo = redo

    def __call__(self):
        return self.fn()

    def reset(self):
        with torch.no_grad():
            for leaf, src in self.copies:
                leaf.copy_(src)
        for t in self.leaves:
            t.grad = None
        if self.redo:
            self.redo()


def _leaf(t, grad=True):
    return t.detach().clone().requires_grad_(grad)


def layer_norm(ctx, impl):
    H = ctx.axes["hidden"]
    if impl == "liger":
        from liger_kernel.transformers.layer_norm import LigerLayerNorm
        m = LigerLayerNorm(H, eps=EPS)
    else:
        m = torch.nn.LayerNorm(H, eps=EPS)
    m = m.to(ctx.device, ctx.torch_dtype)
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(H))
        m.bias.copy_(ctx.inputs["bias"].reshape(H))
    x = _leaf(ctx.inputs["x"])
    leaves = [x, m.weight, m.bias]
    copies = [(x, ctx.inputs["x"]), (m.weight, ctx.inputs["weight"].reshape(H)),
              (m.bias, ctx.inputs["bias"].reshape(H))]
    if ctx.mode == "forward":
        return Step(lambda: {"y": m(x)}, leaves, copies)
    dy = ctx.inputs["dy"]

    def grads():
        return {"dx": x.grad, "dweight": m.weight.grad, "dbias": m.bias.grad}
    if ctx.mode == "backward":
        st = {"y": m(x)}

        def backward():
            st["y"].backward(dy, retain_graph=True)
            return grads()
        # the forward the backward needs, redone (untimed) from the current inputs
        return Step(backward, leaves, copies, lambda: st.update(y=m(x)))

    def full():
        y = m(x)
        y.backward(dy, retain_graph=True)
        out = grads()
        out["y"] = y
        return out
    return Step(full, leaves, copies)


def _jsd_rows(log_q, log_p, beta=BETA):
    """Generalized JSD per row, batchmean: beta KL(P||M) + (1-beta) KL(Q||M), / rows."""
    log_q, log_p = log_q.float(), log_p.float()
    log_m = torch.log(torch.lerp(torch.exp(log_q), torch.exp(log_p), beta))
    rows = beta * F.kl_div(log_m, log_p, reduction="none", log_target=True).sum(-1) \
        + (1 - beta) * F.kl_div(log_m, log_q, reduction="none", log_target=True).sum(-1)
    return rows / log_q.shape[0]


def jsd(ctx, impl):
    T = ctx.axes["tokens"]
    src = ctx.inputs["student_log_probs"]
    y = ctx.inputs["teacher_log_probs"]
    if impl == "liger":
        from liger_kernel.transformers.jsd import LigerJSD
        fn = LigerJSD(beta=BETA)

        def loss_of(x):
            return fn(x, y), None
    else:
        def loss_of(x):
            rows = _jsd_rows(x, y)
            return rows.sum(), rows
    if ctx.mode == "backward":
        # Liger's script makes the student log-probs as log_softmax of a leaf and times the loss's
        # backward from there with a random scalar upstream gradient (grad_loss): the loss's own
        # backward (it scales dX), then log_softmax's, into the leaf.  The leaf is the input
        # (log-probabilities already, so log_softmax gives them back); the forward is redone untimed
        # from the current inputs, and the leaf's gradient set to None before each call.
        z = _leaf(src)
        g = ctx.inputs["grad_loss"]
        st = {}

        def forward():
            st["loss"] = loss_of(z.log_softmax(-1))[0]

        def backward():
            loss = st["loss"]
            loss.backward(g.reshape(loss.shape).to(loss.dtype), retain_graph=True)
            return {"grad_logits": z.grad}
        forward()
        return Step(backward, [z], [(z, src)], forward)
    x = _leaf(src)

    # kbench's jsd forward is the loss and its gradient (as Liger's fused forward computes them);
    # LigerJSD returns the total loss only (kbench checks the total then, kernels/ops/jsd.c)
    def step():
        loss, rows = loss_of(x)
        loss.backward()
        out = {"loss": loss.detach().float().reshape(1, 1), "grad_input": x.grad}
        if rows is not None:
            out["row_loss"] = rows.detach().reshape(T, 1)
        return out
    return Step(step, [x], [(x, src)])


def megatron_cross_entropy(ctx, impl):
    S, B, V = ctx.axes["seq"], ctx.axes["batch"], ctx.axes["vocab"]
    logits = _leaf(ctx.inputs["logits"], ctx.mode != "forward")
    target = ctx.inputs["target"].reshape(S * B)
    grad_loss = ctx.inputs["grad_loss"].reshape(S * B)
    if impl == "liger":
        from liger_kernel.megatron import LigerMegatronCrossEntropy
        ce = LigerMegatronCrossEntropy()

        def loss_of():
            return ce(logits.view(S, B, V), target.view(S, B)).reshape(S * B)
    else:
        # Megatron's vocab-parallel cross-entropy at TP=1 computes in fp32
        def loss_of():
            return F.cross_entropy(logits.float(), target, reduction="none")
    if ctx.mode == "forward":
        def forward():
            with torch.no_grad():
                return {"loss": loss_of()}
        return Step(forward, [], [(logits, ctx.inputs["logits"])])

    # kbench's (and Liger's) "backward" is forward + backward
    def step():
        loss = loss_of()
        loss.backward(grad_loss)
        return {"loss": loss.detach(), "grad_logits": logits.grad}
    return Step(step, [logits], [(logits, ctx.inputs["logits"])])


def distill_jsd_loss(ctx, impl):
    T, V = ctx.axes["tokens"], ctx.axes["vocab"]
    xs = _leaf(ctx.inputs["student_input"])
    ws = _leaf(ctx.inputs["student_weight"])
    xt = ctx.inputs["teacher_input"]
    wt = ctx.inputs["teacher_weight"]
    target = ctx.inputs["target"].reshape(T)
    if impl == "liger":
        from liger_kernel.chunked_loss.jsd_loss import LigerFusedLinearJSDFunction

        def losses():
            return LigerFusedLinearJSDFunction.apply(xs, ws, xt, wt, target, None, None, 0.5, 0.5), None
    else:
        def losses():
            # 0.5 hard (cross-entropy on the target) + 0.5 soft (JSD of student and teacher), temperature 1
            zs = (xs @ ws.t()).float()
            zt = (xt @ wt.t()).float()
            ls, lt = torch.log_softmax(zs, -1), torch.log_softmax(zt, -1)
            hard = F.nll_loss(ls, target, reduction="none") / T
            tokens = 0.5 * hard + 0.5 * _jsd_rows(ls, lt)
            return tokens.sum(), tokens

    def step():
        loss, tokens = losses()
        loss.backward()
        out = {"loss": loss.detach().float().reshape(1, 1), "grad_student_input": xs.grad,
               "grad_student_weight": ws.grad}
        if tokens is not None:
            out["token_loss"] = tokens.detach().reshape(T, 1)
        return out
    return Step(step, [xs, ws], [(xs, ctx.inputs["student_input"]), (ws, ctx.inputs["student_weight"])])


OPS = {"layer_norm": layer_norm, "jsd": jsd, "megatron_cross_entropy": megatron_cross_entropy,
       "distill_jsd_loss": distill_jsd_loss}


def factory(name, op):
    if name not in ("huggingface", "torch", "liger"):
        raise ValueError("no built-in python implementation %r" % name)
    if op not in OPS:
        raise ValueError("no built-in python implementation of %s" % op)
    if name == "liger":
        import liger_kernel  # noqa: F401 -- fails here, with its reason, when it is not importable
    return lambda ctx: OPS[op](ctx, name)
