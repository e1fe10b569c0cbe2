import torch


class LigerFusedLinearCrossEntropyLoss(torch.nn.Module):
    """The LM head and cross entropy in one call, forward(lin_weight, _input, target, bias=None),
    under Liger's class name and constructor (test stand-in, plain torch: the logits materialized and
    upcast to fp32, as Liger upcasts each chunk; the z-loss, softcap and returned extras are not
    modelled)."""

    def __init__(self, ce_weight=None, ignore_index=-100, lse_square_scale=0.0, label_smoothing=0.0,
                 reduction="mean", softcap=None, return_z_loss=False, accum_dtype=None,
                 use_token_scaling=False, return_token_accuracy=False, return_predicted_tokens=False):
        super().__init__()
        self.ce_weight, self.ignore_index, self.label_smoothing = ce_weight, ignore_index, label_smoothing
        self.reduction = reduction

    def forward(self, lin_weight, _input, target, bias=None):
        logits = torch.nn.functional.linear(_input, lin_weight, bias).float()
        return torch.nn.functional.cross_entropy(logits, target, weight=self.ce_weight,
                                                 ignore_index=self.ignore_index, reduction=self.reduction,
                                                 label_smoothing=self.label_smoothing)
