import torch


class LigerLayerNorm(torch.nn.LayerNorm):
    """torch's LayerNorm under Liger's class name (test stand-in)."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__(hidden_size, eps=eps)
