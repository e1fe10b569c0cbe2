import torch

from .rms_norm import LigerRMSNorm


class LigerFusedAddRMSNorm(torch.nn.Module):
    """The residual add, then the stand-in RMSNorm, under Liger's class name (test stand-in):
    returns (normalized sum, sum)."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.norm = LigerRMSNorm(hidden_size, eps)
        self.weight = self.norm.weight

    def forward(self, x, residual):
        h = x + residual
        return self.norm(h), h
