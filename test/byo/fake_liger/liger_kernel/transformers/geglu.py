import torch


class LigerGEGLUMLP(torch.nn.Module):
    """down(gelu_tanh(gate(x)) * up(x)), bias-free projections from config.hidden_size and
    config.intermediate_size, under Liger's class name (test stand-in, plain torch, not Liger's kernel;
    Liger's GEGLU uses the tanh approximation whatever config.hidden_act says)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.hidden_size, self.intermediate_size = config.hidden_size, config.intermediate_size
        self.gate_proj = torch.nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = torch.nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = torch.nn.Linear(self.intermediate_size, self.hidden_size, bias=False)

    def forward(self, x):
        g = torch.nn.functional.gelu(self.gate_proj(x), approximate="tanh")
        return self.down_proj(g * self.up_proj(x))
