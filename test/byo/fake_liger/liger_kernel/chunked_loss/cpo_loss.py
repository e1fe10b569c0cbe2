import torch

from ._preference import chosen_nll, sequence_logps, smoothed_sigmoid_loss


class LigerFusedLinearCPOLoss(torch.nn.Module):
    """The LM head and the CPO loss under Liger's class name, constructor and forward(lin_weight,
    _input, target, bias=None), returning (loss, metrics) (test stand-in, plain torch): alpha times
    the chosen half's NLL plus the mean over pairs of -logsigmoid(beta (c - r)) (label smoothed),
    the sequences' log-probabilities summed over their kept tokens (averaged with average_log_prob)."""

    def __init__(self, ignore_index=-100, beta=0.1, alpha=1.0, label_smoothing=0.0, compute_nll_loss=True,
                 compiled=True, average_log_prob=False, chunk_size=1):
        super().__init__()
        self.ignore_index, self.beta, self.alpha = ignore_index, beta, alpha
        self.label_smoothing, self.compute_nll_loss, self.average_log_prob = label_smoothing, compute_nll_loss, average_log_prob

    def forward(self, lin_weight, _input, target, bias=None):
        logits, logps = sequence_logps(lin_weight, _input, target, bias, self.ignore_index, self.average_log_prob)
        half = logps.shape[0] // 2
        c, r = logps[:half], logps[half:]
        loss = smoothed_sigmoid_loss(self.beta * (c - r), self.label_smoothing).mean()
        if self.compute_nll_loss:
            loss = loss + self.alpha * chosen_nll(logits, target, self.ignore_index)
        return loss, (c, r)
