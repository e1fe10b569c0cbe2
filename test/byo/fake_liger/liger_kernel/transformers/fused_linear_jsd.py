import torch


class LigerFusedLinearJSD(torch.nn.Module):
    """The student and teacher LM heads and the generalized JSD in one call,
    forward(student_input, student_weight, teacher_input, teacher_weight, shift_labels), under Liger's
    class name and constructor (jsd_beta, ignore_index, temperature, accum_dtype) (test stand-in,
    plain torch): log-softmax of each head's logits / temperature, in fp32, M = beta P + (1 - beta) Q
    (P the teacher's, Q the student's), beta KL(P || M) + (1 - beta) KL(Q || M) summed over the
    vocabulary and the kept tokens, divided by the kept tokens (those whose shift label is not
    ignore_index; every token without labels); the loss in the student input's dtype."""

    def __init__(self, jsd_beta=0.5, ignore_index=-100, temperature=1.0, accum_dtype=None):
        super().__init__()
        assert temperature != 0, "temperature cannot be 0."
        self.jsd_beta, self.ignore_index, self.temperature = jsd_beta, ignore_index, temperature

    def forward(self, student_input, student_weight, teacher_input, teacher_weight, shift_labels=None):
        lq = torch.log_softmax((student_input @ student_weight.t()).float() / self.temperature, dim=-1)
        lp = torch.log_softmax((teacher_input @ teacher_weight.t()).float() / self.temperature, dim=-1)
        b = self.jsd_beta
        lm = torch.log(b * torch.exp(lp) + (1 - b) * torch.exp(lq))
        rows = (b * torch.exp(lp) * (lp - lm) + (1 - b) * torch.exp(lq) * (lq - lm)).sum(-1)
        n = rows.shape[0]
        if shift_labels is not None:
            keep = shift_labels != self.ignore_index
            rows = rows * keep.to(rows.dtype)
            n = int(keep.sum())
        return (rows.sum() / max(n, 1)).to(student_input.dtype)
