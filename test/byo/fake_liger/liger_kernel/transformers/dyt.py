import torch


class LigerDyT(torch.nn.Module):
    """Dynamic tanh, gamma tanh(alpha x) + beta, under Liger's class name and constructor
    (hidden_size, beta, init_alpha; alpha one value, gamma ones, beta zeros or None); y in x's
    dtype (test stand-in, plain torch)."""

    def __init__(self, hidden_size, beta=True, init_alpha=0.5):
        super().__init__()
        self.hidden_size, self.init_alpha = hidden_size, init_alpha
        self.alpha = torch.nn.Parameter(torch.ones(1) * init_alpha)
        self.gamma = torch.nn.Parameter(torch.ones(hidden_size))
        self.beta = torch.nn.Parameter(torch.zeros(hidden_size)) if beta else None

    def forward(self, x):
        y = self.gamma * torch.tanh(x * self.alpha)
        if self.beta is not None:
            y = y + self.beta
        return y.to(x.dtype)
