import torch


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def liger_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    """Llama's rotary embedding under Liger's function name and signature (test stand-in, plain
    torch): q and k batch x heads x seq x head_dim, cos and sin (1 or batch) x seq x head_dim,
    unsqueezed at unsqueeze_dim; q cos + rotate_half(q) sin, likewise k (position_ids unused, as
    Liger's)."""
    c, s = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s
