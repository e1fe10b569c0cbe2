import torch


class LigerJSD(torch.nn.Module):
    """Generalized JSD (batchmean) under Liger's class name, returning the total loss only as
    LigerJSD does; computed in float64 (test stand-in, not Liger's kernel)."""

    def __init__(self, beta=0.5, ignore_index=-100):
        super().__init__()
        self.beta = beta

    def forward(self, log_q, log_p):
        x, y = log_q.double(), log_p.double()
        q, p = torch.exp(x), torch.exp(y)
        lm = torch.log(self.beta * p + (1 - self.beta) * q)
        return (self.beta * p * (y - lm) + (1 - self.beta) * q * (x - lm)).sum() / x.shape[0]
