import torch


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def liger_multimodal_rotary_pos_emb(q, k, cos, sin, mrope_section, unsqueeze_dim=1):
    """Qwen2-VL's multimodal rotary embedding under Liger's function name and signature (test
    stand-in, plain torch): cos and sin 3 x batch x seq x head_dim (the temporal, height and width
    rows); head_dim split by mrope_section repeated for both halves, chunk i taken from row i mod 3;
    then q cos + rotate_half(q) sin, likewise k, with cos and sin unsqueezed at unsqueeze_dim."""
    sec = list(mrope_section) * 2

    def pick(t):
        return torch.cat([part[i % 3] for i, part in enumerate(t.split(sec, dim=-1))], dim=-1).unsqueeze(unsqueeze_dim)
    c, s = pick(cos), pick(sin)
    return q * c + _rotate_half(q) * s, k * c + _rotate_half(k) * s
