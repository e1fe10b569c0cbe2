import torch

from ._preference import chosen_nll, sequence_logps


class LigerFusedLinearORPOLoss(torch.nn.Module):
    """The LM head and the ORPO loss under Liger's class name, constructor and forward(lin_weight,
    _input, target, bias=None, nll_target=None), returning (loss, metrics) (test stand-in, plain
    torch): the chosen half's NLL plus the mean over pairs of -beta logsigmoid(log odds ratio), the
    sequences' log-probabilities averaged over their kept tokens."""

    def __init__(self, ignore_index=-100, beta=0.1, compute_nll_loss=True, compiled=True, chunk_size=1):
        super().__init__()
        self.ignore_index, self.beta, self.compute_nll_loss = ignore_index, beta, compute_nll_loss

    def forward(self, lin_weight, _input, target, bias=None, nll_target=None):
        logits, logps = sequence_logps(lin_weight, _input, target, bias, self.ignore_index, True)
        half = logps.shape[0] // 2
        c, r = logps[:half], logps[half:]
        log_odds = (c - r) - (torch.log1p(-torch.exp(c)) - torch.log1p(-torch.exp(r)))
        loss = (-self.beta * torch.nn.functional.logsigmoid(log_odds)).mean()
        if self.compute_nll_loss:
            nt = target if nll_target is None else nll_target
            loss = loss + chosen_nll(logits, nt, self.ignore_index)
        return loss, (c, r)
