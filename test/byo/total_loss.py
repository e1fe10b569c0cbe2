"""test/byo/total_loss.py: python implementations of jsd and distill_jsd_loss for
test/suites/kernels.sh: ones that return the total loss only (as Liger's modules do), per-row
values or not, right or wrong.  Each computes in float64 from kbench's inputs and stores the
result in the output's dtype, so that a right one is within kbench's tolerance on the CPU.
Our own code, from the operations' definitions (kernels/ops/jsd.c, distill_jsd_loss.c).
"""
import torch

BETA = 0.5


def _jsd_rows(x, y):
    """Generalized JSD per row (beta 0.5), batchmean: a [T] float64 tensor."""
    q, p = torch.exp(x), torch.exp(y)
    lm = torch.log(BETA * p + (1 - BETA) * q)
    return (BETA * p * (y - lm) + (1 - BETA) * q * (x - lm)).sum(-1) / x.shape[0]


def _jsd(ctx, total_scale=1.0, rows_scale=None, drop=()):
    """loss, grad_input and (rows_scale not None) row_loss; the total times total_scale, the rows
    times rows_scale; outputs named in drop left out."""
    def step():
        x = ctx.inputs["student_log_probs"].double().detach().requires_grad_(True)
        y = ctx.inputs["teacher_log_probs"].double()
        rows = _jsd_rows(x, y)
        loss = rows.sum()
        loss.backward()
        out = {"loss": (loss.detach() * total_scale).float().reshape(1, 1),
               "grad_input": x.grad.to(ctx.torch_dtype)}
        if rows_scale is not None:
            out["row_loss"] = (rows.detach() * rows_scale).float().reshape(-1, 1)
        for name in drop:
            del out[name]
        return out
    return step


def jsd_total_only(ctx):
    """the total loss and grad_input, no row_loss (as LigerJSD): passes."""
    return _jsd(ctx)


def jsd_total_only_wrong(ctx):
    """the total 1% off, no row_loss: incorrect_numerical."""
    return _jsd(ctx, total_scale=1.01)


def jsd_rows_right_total_wrong(ctx):
    """row_loss right, the total 1% off: incorrect_numerical."""
    return _jsd(ctx, total_scale=1.01, rows_scale=1.0)


def jsd_rows_wrong_total_right(ctx):
    """row_loss 1% off, the total right: incorrect_numerical (row_loss is still checked)."""
    return _jsd(ctx, rows_scale=1.01)


def jsd_no_loss(ctx):
    """grad_input only: the loss is missing, incorrect_numerical."""
    return _jsd(ctx, drop=("loss",))


def jsd_no_grad(ctx):
    """the total loss only: grad_input is missing, incorrect_numerical."""
    return _jsd(ctx, drop=("grad_input",))


def _distill(ctx, total_scale=1.0, token_scale=None, drop=()):
    """distill_jsd_loss (0.5 hard cross-entropy + 0.5 JSD, temperature 1), in float64."""
    T = ctx.axes["tokens"]

    def step():
        xs = ctx.inputs["student_input"].double().detach().requires_grad_(True)
        ws = ctx.inputs["student_weight"].double().detach().requires_grad_(True)
        xt = ctx.inputs["teacher_input"].double()
        wt = ctx.inputs["teacher_weight"].double()
        target = ctx.inputs["target"].reshape(T)
        ls = torch.log_softmax(xs @ ws.t(), -1)
        lt = torch.log_softmax(xt @ wt.t(), -1)
        hard = torch.nn.functional.nll_loss(ls, target, reduction="none") / T
        tokens = 0.5 * hard + 0.5 * _jsd_rows(ls, lt)
        loss = tokens.sum()
        loss.backward()
        out = {"loss": (loss.detach() * total_scale).float().reshape(1, 1),
               "grad_student_input": xs.grad.to(ctx.torch_dtype),
               "grad_student_weight": ws.grad.to(ctx.torch_dtype)}
        if token_scale is not None:
            out["token_loss"] = (tokens.detach() * token_scale).float().reshape(T, 1)
        for name in drop:
            del out[name]
        return out
    return step


def distill_total_only(ctx):
    """the total and both gradients, no token_loss (as LigerFusedLinearJSDFunction): passes."""
    return _distill(ctx)


def distill_total_only_wrong(ctx):
    """the total 1% off, no token_loss: incorrect_numerical."""
    return _distill(ctx, total_scale=1.01)


def distill_tokens_wrong_total_right(ctx):
    """token_loss 1% off, the total right: incorrect_numerical."""
    return _distill(ctx, token_scale=1.01)


def distill_no_weight_grad(ctx):
    """no grad_student_weight: incorrect_numerical."""
    return _distill(ctx, drop=("grad_student_weight",))


def _jsd_backward(ctx, through_log_softmax=True):
    """jsd backward in float64: grad_logits = grad_loss * (dX - exp(X) rowsum(dX)), or (False) the
    loss's backward alone, grad_loss * dX (log_softmax's backward left out)."""
    def step():
        x = ctx.inputs["student_log_probs"].double().detach().requires_grad_(True)
        y = ctx.inputs["teacher_log_probs"].double()
        g = ctx.inputs["grad_loss"].double().reshape(())
        src = x.log_softmax(-1) if through_log_softmax else x
        _jsd_rows(src, y).sum().backward(g)
        return {"grad_logits": x.grad.to(ctx.torch_dtype)}
    return step


def jsd_backward_right(ctx):
    """jsd backward through log_softmax, in float64: passes."""
    return _jsd_backward(ctx)


def jsd_backward_no_log_softmax(ctx):
    """jsd backward without log_softmax's backward (grad_loss * grad_input): incorrect_numerical."""
    return _jsd_backward(ctx, through_log_softmax=False)
