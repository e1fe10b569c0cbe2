import torch


class LigerSparsemax(torch.nn.Module):
    """Sparsemax (Martins & Astudillo) over dim, under Liger's class name (test stand-in, plain torch:
    the threshold tau from the values sorted in descending order, y = max(x - tau, 0); autograd
    differentiates it)."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        xt = x.transpose(self.dim, -1)
        srt = torch.sort(xt, dim=-1, descending=True).values
        n = xt.shape[-1]
        ks = torch.arange(1, n + 1, device=x.device, dtype=x.dtype)
        csum = srt.cumsum(dim=-1)
        support = (srt * ks > csum - 1).sum(dim=-1, keepdim=True)
        tau = (torch.gather(csum, -1, support - 1) - 1) / support.to(x.dtype)
        return torch.relu(xt - tau).transpose(self.dim, -1)
