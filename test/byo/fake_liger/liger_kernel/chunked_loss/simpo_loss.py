import torch

from ._preference import chosen_nll, sequence_logps, smoothed_sigmoid_loss


class LigerFusedLinearSimPOLoss(torch.nn.Module):
    """The LM head and the SimPO loss under Liger's class name, constructor and forward(lin_weight,
    _input, target, bias=None), returning (loss, metrics) (test stand-in, plain torch): alpha times
    the chosen half's NLL plus the mean over pairs of -logsigmoid(beta (c - r) - gamma) (label
    smoothed), the sequences' log-probabilities averaged over their kept tokens."""

    def __init__(self, ignore_index=-100, beta=0.1, alpha=1.0, label_smoothing=0.0, compute_nll_loss=True,
                 compiled=True, gamma=0.5, chunk_size=1):
        super().__init__()
        self.ignore_index, self.beta, self.alpha, self.gamma = ignore_index, beta, alpha, gamma
        self.label_smoothing, self.compute_nll_loss = label_smoothing, compute_nll_loss

    def forward(self, lin_weight, _input, target, bias=None):
        logits, logps = sequence_logps(lin_weight, _input, target, bias, self.ignore_index, True)
        half = logps.shape[0] // 2
        c, r = logps[:half], logps[half:]
        loss = smoothed_sigmoid_loss(self.beta * (c - r) - self.gamma, self.label_smoothing).mean()
        if self.compute_nll_loss:
            loss = loss + self.alpha * chosen_nll(logits, target, self.ignore_index)
        return loss, (c, r)
