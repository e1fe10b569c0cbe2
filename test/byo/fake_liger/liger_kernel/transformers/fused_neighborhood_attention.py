import math

import torch


class LigerFusedNeighborhoodAttention(torch.nn.Module):
    """Neighborhood attention under Liger's class name and constructor (hidden_size, num_heads,
    kernel_size odd, dilation, bias, dropout, scale; q_proj, k_proj, v_proj and out_proj Linear
    layers) (test stand-in, plain torch, dense): per head, the scores q k^T scale with the keys j of
    query i kept where |j - i| <= (kernel_size // 2) dilation and j - i is a multiple of dilation,
    softmax, times v, then the output projection."""

    def __init__(self, hidden_size, num_heads, kernel_size=7, dilation=1, bias=True, dropout=0.0, scale=None):
        super().__init__()
        if hidden_size % num_heads != 0 or kernel_size <= 0 or kernel_size % 2 == 0 or dilation < 1:
            raise ValueError("hidden_size must divide by num_heads, kernel_size be odd and positive, dilation >= 1")
        self.hidden_size, self.num_heads, self.head_dim = hidden_size, num_heads, hidden_size // num_heads
        self.kernel_size, self.dilation = kernel_size, dilation
        self.scale = scale if scale is not None else 1.0 / math.sqrt(self.head_dim)
        self.dropout_p = dropout
        self.q_proj = torch.nn.Linear(hidden_size, hidden_size, bias=bias)
        self.k_proj = torch.nn.Linear(hidden_size, hidden_size, bias=bias)
        self.v_proj = torch.nn.Linear(hidden_size, hidden_size, bias=bias)
        self.out_proj = torch.nn.Linear(hidden_size, hidden_size, bias=bias)
        self.dropout = torch.nn.Dropout(dropout) if dropout > 0.0 else None

    def forward(self, hidden_states, attention_mask=None):
        if attention_mask is not None:
            raise NotImplementedError("Attention mask is not yet supported in LigerFusedNeighborhoodAttention")
        b, n, h = hidden_states.shape

        def heads(t):
            return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        q, k, v = heads(self.q_proj(hidden_states)), heads(self.k_proj(hidden_states)), heads(self.v_proj(hidden_states))
        pos = torch.arange(n, device=hidden_states.device)
        rel = pos[None, :] - pos[:, None]
        near = (rel.abs() <= (self.kernel_size // 2) * self.dilation) & (rel % self.dilation == 0)
        s = (q @ k.transpose(-2, -1)) * self.scale
        o = torch.softmax(s.masked_fill(~near, float("-inf")), dim=-1) @ v
        o = o.transpose(1, 2).contiguous().view(b, n, h)
        if self.dropout is not None:
            o = self.dropout(o)
        return self.out_proj(o)
