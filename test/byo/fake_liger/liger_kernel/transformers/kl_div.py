import torch


class LigerKLDIVLoss(torch.nn.KLDivLoss):
    """KL divergence under Liger's class name (a torch.nn.KLDivLoss subclass with eps, as Liger's):
    y_true (log(max(y_true, eps)) - y_pred) per value (log_target False), reduced as
    torch.nn.KLDivLoss's reduction says (test stand-in, plain torch)."""

    def __init__(self, eps=1e-10, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.eps = eps

    def forward(self, y_pred, y_true):
        if self.log_target:
            per = torch.exp(y_true) * (y_true - y_pred)
        else:
            per = y_true * (torch.log(torch.clamp(y_true, min=self.eps)) - y_pred)
        if self.reduction == "none":
            return per
        if self.reduction == "sum":
            return per.sum()
        if self.reduction == "mean":
            return per.sum() / per.numel()
        return per.sum() / y_pred.reshape(-1, y_pred.shape[-1]).shape[0]
