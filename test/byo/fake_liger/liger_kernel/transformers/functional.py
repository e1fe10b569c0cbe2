"""The one function of liger_kernel.transformers.functional that kbench's liger branches call
(test stand-in, plain torch)."""
import torch


def liger_relu_squared(x):
    """relu(x)^2, as Liger's LigerReLUSquaredFunction."""
    r = torch.relu(x)
    return r * r
