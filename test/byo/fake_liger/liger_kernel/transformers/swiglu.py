import torch


class LigerSwiGLUMLP(torch.nn.Module):
    """The Llama MLP, down(silu(gate(x)) * up(x)), bias-free projections from config.hidden_size and
    config.intermediate_size, under Liger's class name (test stand-in, plain torch, not Liger's kernel)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.hidden_size, self.intermediate_size = config.hidden_size, config.intermediate_size
        self.gate_proj = torch.nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = torch.nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = torch.nn.Linear(self.intermediate_size, self.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
