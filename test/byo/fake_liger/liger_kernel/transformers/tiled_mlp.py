import torch


class _GatedMLP(torch.nn.Module):
    def __init__(self, config, act, num_shards=None):
        super().__init__()
        h, i = config.hidden_size, config.intermediate_size
        self.gate_proj = torch.nn.Linear(h, i, bias=False)
        self.up_proj = torch.nn.Linear(h, i, bias=False)
        self.down_proj = torch.nn.Linear(i, h, bias=False)
        self.act = act

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class LigerTiledSwiGLUMLP(_GatedMLP):
    """The Llama MLP (silu), untiled, under Liger's class name (test stand-in)."""

    def __init__(self, config, num_shards=None):
        super().__init__(config, torch.nn.SiLU(), num_shards)


class LigerTiledGEGLUMLP(_GatedMLP):
    """The Llama MLP (gelu tanh), untiled, under Liger's class name (test stand-in)."""

    def __init__(self, config, num_shards=None):
        super().__init__(config, torch.nn.GELU(approximate="tanh"), num_shards)
