import torch


class LigerFusedMoEFunction:
    """apply(x, gate_up_proj, down_proj, top_k_index, top_k_weights) as Liger's fused MoE autograd
    function after routing (test stand-in, plain torch differentiated by autograd): x tokens x
    hidden, gate_up_proj experts x 2 intermediate x hidden (the gate half first), down_proj experts x
    hidden x intermediate, top_k_index and top_k_weights tokens x k; each token's output is the sum
    over its k experts of the weight times down(silu(gate) * up), in fp32, cast back to x's dtype."""

    @staticmethod
    def apply(x, gate_up_proj, down_proj, top_k_index, top_k_weights):
        idx = top_k_index.long()
        gu = torch.einsum("th,tkih->tki", x.float(), gate_up_proj.float()[idx])
        gate, up = gu.chunk(2, dim=-1)
        h = torch.einsum("tki,tkhi->tkh", torch.nn.functional.silu(gate) * up, down_proj.float()[idx])
        return (h * top_k_weights.float().unsqueeze(-1)).sum(1).to(x.dtype)
