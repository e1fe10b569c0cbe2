import torch


class LigerGroupNorm(torch.nn.Module):
    """Group norm of a batch x channels x ... input under Liger's class name and constructor
    (num_channels, num_groups, eps, bias, init_fn; weight and bias per channel), in fp32 with the
    biased variance, cast back (test stand-in, plain torch)."""

    def __init__(self, num_channels, num_groups, eps=1e-6, bias=False, init_fn="ones"):
        super().__init__()
        assert num_channels % num_groups == 0
        self.num_channels, self.num_groups, self.eps = num_channels, num_groups, eps
        self.variance_epsilon = eps
        self.weight = torch.nn.Parameter(torch.ones(num_channels) if init_fn == "ones" else torch.zeros(num_channels))
        self.bias = torch.nn.Parameter(torch.randn(num_channels) if bias else torch.zeros(num_channels))

    def forward(self, hidden_states):
        assert hidden_states.dim() >= 3 and hidden_states.size(1) == self.num_channels
        b = hidden_states.shape[0]
        g = hidden_states.float().reshape(b, self.num_groups, -1)
        mean = g.mean(-1, keepdim=True)
        var = ((g - mean) ** 2).mean(-1, keepdim=True)
        y = ((g - mean) * torch.rsqrt(var + self.eps)).reshape(hidden_states.shape)
        shape = (1, self.num_channels) + (1,) * (hidden_states.dim() - 2)
        y = y * self.weight.float().reshape(shape) + self.bias.float().reshape(shape)
        return y.to(hidden_states.dtype)
