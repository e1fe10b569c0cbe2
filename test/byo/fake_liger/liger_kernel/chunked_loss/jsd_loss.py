import torch


class LigerFusedLinearJSDFunction:
    """The distillation loss (weight_hard_loss cross-entropy + weight_soft_loss JSD of the two
    heads' log-softmax) under Liger's name, returning the total only as Liger's function does;
    computed in float64 (test stand-in, not Liger's chunked kernel)."""

    @staticmethod
    def apply(student_input, student_weight, teacher_input, teacher_weight, true_labels, student_bias=None,
              teacher_bias=None, weight_hard_loss=0.5, weight_soft_loss=0.5, beta=0.5, ignore_index=-100,
              temperature=1.0):
        T = student_input.shape[0]
        ls = torch.log_softmax(student_input.double() @ student_weight.double().t() / temperature, -1)
        lt = torch.log_softmax(teacher_input.double() @ teacher_weight.double().t() / temperature, -1)
        hard = torch.nn.functional.nll_loss(ls, true_labels, reduction="sum") / T
        ps, pt = torch.exp(ls), torch.exp(lt)
        lm = torch.log(beta * pt + (1 - beta) * ps)
        soft = (beta * pt * (lt - lm) + (1 - beta) * ps * (ls - lm)).sum() / T
        return weight_hard_loss * hard + weight_soft_loss * soft
