import torch


class LigerRMSNorm(torch.nn.Module):
    """A Llama-style RMSNorm in torch under Liger's class name (test stand-in): x * rsqrt(mean(x^2) +
    eps) in fp32, cast back, times the weight (ones)."""

    def __init__(self, hidden_size, eps=1e-6, offset=0.0, casting_mode="llama", init_fn="ones", in_place=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x):
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)
