import torch


class LigerSoftmax(torch.nn.Module):
    """Softmax over the last dimension under Liger's class name (test stand-in, plain torch)."""

    def forward(self, x):
        return torch.softmax(x, dim=-1)
