import torch


class LigerCrossEntropyLoss(torch.nn.Module):
    """Cross entropy of logits against int64 targets under Liger's class name, with its constructor
    (test stand-in, plain torch: the loss in fp32 as Liger accumulates it; the z-loss, softcap and
    returned extras are not modelled)."""

    def __init__(self, weight=None, ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0,
                 reduction="mean", softcap=None, return_z_loss=False, return_token_accuracy=False,
                 return_predicted_tokens=False):
        super().__init__()
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing
        self.reduction = reduction

    def forward(self, _input, target):
        return torch.nn.functional.cross_entropy(_input.float(), target, weight=self.weight,
                                                 ignore_index=self.ignore_index, reduction=self.reduction,
                                                 label_smoothing=self.label_smoothing)
