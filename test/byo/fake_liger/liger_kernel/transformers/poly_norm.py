import torch


class LigerPolyNorm(torch.nn.Module):
    """PolyNorm (PolyCom): w0 norm(x^3) + w1 norm(x^2) + w2 norm(x) + bias, each norm an RMS norm
    over the last dimension, in fp32, cast back to x's dtype; under Liger's class name and
    constructor (eps, in_place; weight 3 values of 1/3, bias a 0-dim 1) (test stand-in, plain torch)."""

    def __init__(self, eps=1e-6, in_place=True):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.full((3,), 1.0 / 3.0))
        self.bias = torch.nn.Parameter(torch.tensor(1.0))
        self.variance_epsilon = eps
        self.in_place = in_place

    def forward(self, hidden_states):
        h = hidden_states.float()
        w, out = self.weight.float(), self.bias.float()
        for i, power in enumerate((3, 2, 1)):
            u = h ** power
            out = out + w[i] * (u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))
        return out.to(hidden_states.dtype)
