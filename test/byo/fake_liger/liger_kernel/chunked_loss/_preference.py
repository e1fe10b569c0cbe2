"""What the preference-loss stand-ins share (test stand-in, plain torch, not Liger's chunked
kernels): the batch holds the chosen sequences, then as many rejected ones."""
import torch


def sequence_logps(lin_weight, _input, target, bias, ignore_index, average):
    """(all logits in fp32, the per-sequence log-probabilities of the targets: masked by
    ignore_index, summed or averaged over the kept tokens)."""
    logits = torch.nn.functional.linear(_input, lin_weight, bias).float()
    keep = target != ignore_index
    tok = torch.log_softmax(logits, dim=-1).gather(-1, torch.where(keep, target, 0).unsqueeze(-1)).squeeze(-1)
    logps = (tok * keep).sum(-1)
    if average:
        logps = logps / keep.sum(-1)
    return logits, logps


def chosen_nll(logits, target, ignore_index):
    """The chosen half's cross entropy, mean over its kept tokens."""
    half = logits.shape[0] // 2
    return torch.nn.functional.cross_entropy(logits[:half].reshape(-1, logits.shape[-1]), target[:half].reshape(-1),
                                             ignore_index=ignore_index)


def smoothed_sigmoid_loss(z, label_smoothing):
    f = torch.nn.functional.logsigmoid
    return -f(z) * (1 - label_smoothing) - f(-z) * label_smoothing
