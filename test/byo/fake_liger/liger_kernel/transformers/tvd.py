import torch


class LigerTVDLoss(torch.nn.Module):
    """Total variation distance, 0.5 |p - q| per value, under Liger's class name (test stand-in,
    plain torch; shift_labels' ignored rows are left out of the sum and the divisor, as Liger's)."""

    def __init__(self, reduction="batchmean", ignore_index=-100):
        super().__init__()
        self.reduction, self.ignore_index = reduction, ignore_index

    def forward(self, p, q, shift_labels=None):
        per = 0.5 * torch.abs(p - q)
        rows = p.shape[0]
        if shift_labels is not None:
            keep = (shift_labels != self.ignore_index)
            per = per * keep.unsqueeze(-1).to(per.dtype)
            rows = int(keep.sum())
        if self.reduction == "none":
            return per
        if self.reduction == "sum":
            return per.sum()
        if self.reduction == "mean":
            return per.sum() / (rows * p.shape[-1])
        return per.sum() / rows
