import torch


class LigerFusedLinearCosineSimilarityFunction:
    """apply() with the argument order of Liger's autograd function (student_input, student_weight,
    teacher_input, teacher_weight, true_labels, student_bias, teacher_bias, weight_hard_loss,
    weight_soft_loss, beta, ignore_index, temperature, ...) (test stand-in, plain torch differentiated
    by autograd): the student's logits in fp32, the teacher's without gradient; the hard loss the
    cross entropy against the labels (mean over the kept tokens), the soft loss beta (1 - cosine) of
    the L2-normalized logits / temperature, summed over tokens, / tokens; weighted and added."""

    @staticmethod
    def apply(student_input, student_weight, teacher_input, teacher_weight, true_labels, student_bias=None,
              teacher_bias=None, weight_hard_loss=0.5, weight_soft_loss=0.5, beta=0.5, ignore_index=-100,
              temperature=1.0, compiled=True, chunk_size=1024, return_soft_hard_loss=False):
        s = torch.nn.functional.linear(student_input, student_weight, student_bias).float()
        with torch.no_grad():
            t = torch.nn.functional.linear(teacher_input, teacher_weight, teacher_bias).float()
        hard = torch.nn.functional.cross_entropy(s, true_labels, ignore_index=ignore_index)
        sn = torch.nn.functional.normalize(s / temperature, p=2, dim=-1)
        tn = torch.nn.functional.normalize(t / temperature, p=2, dim=-1)
        soft = (beta * (1 - torch.nn.functional.cosine_similarity(sn, tn, dim=-1))).sum() / s.shape[0]
        loss = weight_hard_loss * hard + weight_soft_loss * soft
        return (loss, soft, hard) if return_soft_hard_loss else loss
