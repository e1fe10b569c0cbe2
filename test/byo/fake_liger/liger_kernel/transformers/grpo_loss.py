import torch


def triton_grpo_loss(logits, old_logp, ref_logp, completion_ids, advantages, completion_mask=None, temperature=0.9,
                     beta=0.04, eps_low=0.2, eps_high=0.4, inplace=True, loss_type="dapo",
                     max_completion_length=None, importance_sampling_level="token", reduce=False, **kwargs):
    """Liger's GRPO loss under its function name and signature, for what kbench's branch asks:
    loss_type "grpo", beta 0 (no KL term), returning (loss, metrics) (test stand-in, plain torch
    differentiated by autograd; other loss types and the KL term are refused).  logits batch x
    (seq + 1) x vocab, the last position dropped, / temperature; logp of the completion ids; the
    ratio exp(logp - old_logp) (old_logp None: logp detached), per token or (sequence level) one per
    sequence from the masked mean log-ratio; the clipped loss -min(r A, clip(r) A); with reduce, the
    masked mean over each sequence, then the mean over sequences."""
    if loss_type != "grpo" or beta != 0.0:
        raise NotImplementedError("the stand-in models loss_type 'grpo' with beta 0 only")
    logp = torch.log_softmax(logits[:, :-1, :].float() / temperature, dim=-1)
    logp = logp.gather(-1, completion_ids.unsqueeze(-1)).squeeze(-1)
    mask = torch.ones_like(logp) if completion_mask is None else completion_mask.to(logp.dtype)
    old = logp.detach() if old_logp is None else old_logp
    log_ratio = logp - old
    if importance_sampling_level == "sequence":
        log_ratio = ((log_ratio * mask).sum(-1, keepdim=True) / mask.sum(-1, keepdim=True).clamp(min=1.0))
    r = torch.exp(log_ratio)
    a = advantages.unsqueeze(-1)
    per_token = -torch.minimum(r * a, torch.clamp(r, 1 - eps_low, 1 + eps_high) * a)
    per_token = per_token.expand_as(mask) * mask
    if not reduce:
        return per_token, []
    return ((per_token.sum(-1) / mask.sum(-1).clamp(min=1.0)).mean(), [])
