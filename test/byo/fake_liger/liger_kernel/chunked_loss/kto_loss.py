import torch


def _logps(logits, target, ignore_index, average):
    keep = target != ignore_index
    tok = torch.log_softmax(logits, dim=-1).gather(-1, torch.where(keep, target, 0).unsqueeze(-1)).squeeze(-1)
    s = (tok * keep).sum(-1)
    return s / keep.sum(-1) if average else s


class LigerFusedLinearKTOLoss(torch.nn.Module):
    """The LM head and the KTO loss under Liger's class name, constructor (ignore_index, beta,
    compiled, use_ref_model, average_log_prob default False: the log-probabilities summed, as
    Liger's) and forward(_input, lin_weight, target, bias, preference_labels, ref_input, ref_weight,
    ref_bias, kl), returning (loss, metrics) (test stand-in, plain torch): each sequence's target
    log-probability (policy logits in fp32; the reference model's under no_grad), the log-ratio to
    the reference; chosen sequences 1 - sigmoid(beta (ratio - kl)), rejected ones
    1 - sigmoid(beta (kl - ratio)), averaged over the batch."""

    def __init__(self, ignore_index=-100, beta=0.1, compiled=True, use_ref_model=False, average_log_prob=False,
                 chunk_size=1):
        super().__init__()
        self.ignore_index, self.beta, self.use_ref_model = ignore_index, beta, use_ref_model
        self.average_log_prob = average_log_prob

    def forward(self, _input, lin_weight, target, bias=None, preference_labels=None, ref_input=None,
                ref_weight=None, ref_bias=None, kl=None):
        logps = _logps(torch.nn.functional.linear(_input, lin_weight, bias).float(), target, self.ignore_index,
                       self.average_log_prob)
        ratio = logps
        if self.use_ref_model:
            with torch.no_grad():
                ref = _logps(torch.nn.functional.linear(ref_input, ref_weight, ref_bias).float(), target,
                             self.ignore_index, self.average_log_prob)
            ratio = logps - ref
        k = 0.0 if kl is None else kl
        labels = preference_labels.bool()
        chosen = 1 - torch.sigmoid(self.beta * (ratio - k))
        rejected = 1 - torch.sigmoid(self.beta * (k - ratio))
        loss = torch.where(labels, chosen, rejected).sum() / target.shape[0]
        return loss, (logps[labels], logps[~labels])
