import torch


def liger_llama4_text_rotary_pos_emb(xq, xk, freqs_cis):
    """Llama 4's text rotary embedding under Liger's function name and signature (test stand-in,
    plain torch): adjacent pairs of head_dim of the batch x seq x heads x head_dim q and k, as
    complex numbers in fp32, times freqs_cis ((batch or 1) x seq x head_dim/2 complex, or its
    real view with a last dimension of 2), cast back."""
    f = freqs_cis
    if not torch.is_complex(f):
        f = torch.view_as_complex(f.float().contiguous())
    f = f.reshape(-1, xq.shape[1], 1, xq.shape[-1] // 2)

    def rot(x):
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * f).reshape(x.shape).type_as(x)
    return rot(xq), rot(xk)
