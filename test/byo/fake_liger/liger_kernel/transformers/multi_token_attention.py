import math

import torch


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class LigerMultiTokenAttention(torch.nn.Module):
    """Multi-token attention, mask_0(conv2d(softmax or sparsemax(mask_-inf(scores)))), the masks
    causal (above the diagonal: -1e9 before, 0 after), under Liger's class name and constructor
    (in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, sparse; weight
    out x in/groups x k x k, bias out) (test stand-in, plain torch in fp32, cast back)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, sparse=False):
        super().__init__()
        self.in_channels, self.out_channels, self.groups, self.sparse = in_channels, out_channels, groups, sparse
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.weight = torch.nn.Parameter(torch.empty(out_channels, in_channels // groups, *self.kernel_size))
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if bias:
            self.bias = torch.nn.Parameter(torch.zeros(out_channels))
        else:
            self.register_parameter("bias", None)

    @staticmethod
    def _sparsemax(z):
        srt = torch.sort(z, dim=-1, descending=True).values
        ks = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
        csum = srt.cumsum(-1)
        support = (srt * ks > csum - 1).sum(-1, keepdim=True)
        tau = (torch.gather(csum, -1, support - 1) - 1) / support.to(z.dtype)
        return torch.relu(z - tau)

    def forward(self, scores):
        L = scores.shape[-1]
        future = torch.ones(L, L, dtype=torch.bool, device=scores.device).triu(1)
        z = scores.float().masked_fill(future, -1e9)
        p = self._sparsemax(z) if self.sparse else torch.softmax(z, dim=-1)
        b = None if self.bias is None else self.bias.float()
        y = torch.nn.functional.conv2d(p, self.weight.float(), b, self.stride, self.padding, self.dilation,
                                       self.groups)
        return y.masked_fill(future, 0.0).to(scores.dtype)
