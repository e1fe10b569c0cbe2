"""kbench_providers.py: Liger's other providers (the kernel_provider column of Liger-Kernel's
benchmark results beside huggingface, torch and liger), each a built-in python implementation of
the operations Liger benchmarks it with only, built as Liger's benchmark script for that operation
builds it (benchmark/scripts/benchmark_<op>.py; the tiled ones benchmark_tiled_mlp.py).

Kept apart from kbench_builtin.py and kbench_builtin_defs.py, whose bytes are digested into the
ImplementationRevisions of huggingface, torch and liger: adding a provider leaves those digests as
they are.  The ImplementationRevision of a provider digests this file.  Where a provider needs a
library beside torch (liger_kernel, megatron.core) that is not importable, the factory fails saying
which library and how the provider is built.  Our own code, written from the scripts' descriptions;
nothing is copied.

PROVIDERS is kernels/impl_name.c's kb_providers, per provider the operations it serves and the
library it needs (test/kernels/builtin_names.py checks they agree).
"""
import torch

import kbench_builtin
import kbench_builtin_defs as defs
from kbench_builtin import Step, _leaf

# provider -> ({operation: how Liger's script builds it}, the module it needs beside torch or None)
PROVIDERS = {
    "torch_compile": ({"embedding": "torch.compile(torch.nn.Embedding(vocab, hidden)) with default inductor "
                                    "settings (benchmark_embedding.py)"}, None),
    "liger_fused_add_rms_norm": ({"fused_add_rms_norm": "Liger-Kernel's LigerFusedAddRMSNorm "
                                                        "(benchmark_fused_add_rms_norm.py)"}, "liger_kernel"),
    "liger_rms_norm": ({"fused_add_rms_norm": "the residual add in fp32, then Liger-Kernel's LigerRMSNorm "
                                              "(benchmark_fused_add_rms_norm.py's AddLigerRMSNorm)"}, "liger_kernel"),
    "megatron-fused": ({"megatron_cross_entropy": "Megatron-Core's fused_vocab_parallel_cross_entropy on a "
                                                  "one-process tensor-parallel group "
                                                  "(benchmark_megatron_cross_entropy.py)"}, "megatron.core"),
    "megatron-unfused": ({"megatron_cross_entropy": "Megatron-Core's vocab_parallel_cross_entropy on a "
                                                    "one-process tensor-parallel group "
                                                    "(benchmark_megatron_cross_entropy.py)"}, "megatron.core"),
    "megatron": ({"megatron_rms_norm": "Megatron-Core's WrappedTorchNorm (benchmark_megatron_rms_norm.py)",
                  "megatron_swiglu": "Megatron-Core's bias_swiglu_impl (benchmark_megatron_swiglu.py)"},
                 "megatron.core"),
    "liger_in_place": ({"megatron_swiglu": "Liger-Kernel's LigerMegatronSwiGLU(in_place=True) "
                                           "(benchmark_megatron_swiglu.py)"}, "liger_kernel"),
    "liger_tiled": ({"tiled_swiglu": "Liger-Kernel's LigerTiledSwiGLUMLP, 4 shards (benchmark_tiled_mlp.py)",
                     "tiled_geglu": "Liger-Kernel's LigerTiledGEGLUMLP, 4 shards (benchmark_tiled_mlp.py)"},
                    "liger_kernel"),
    "deepspeed_tiled": ({"tiled_swiglu": "DeepSpeed's TiledMLP algorithm as benchmark_tiled_mlp.py carries it "
                                         "(no deepspeed import), 4 shards",
                         "tiled_geglu": "DeepSpeed's TiledMLP algorithm as benchmark_tiled_mlp.py carries it "
                                        "(no deepspeed import), 4 shards"}, None),
}

# what each library is installed as
PACKAGES = {"liger_kernel": "liger-kernel", "megatron.core": "megatron-core"}


def versions(name):
    lib = PROVIDERS[name][1]
    if lib == "liger_kernel":
        return kbench_builtin.versions("liger")
    if lib == "megatron.core":
        try:
            from importlib.metadata import version
            return {"megatron_core": version("megatron-core")}
        except Exception:  # noqa: BLE001 -- a checkout without metadata
            import megatron.core
            return {"megatron_core": getattr(megatron.core, "__version__", "checkout")}
    return {}


# ---------------------------------------------------------------- torch_compile

def embedding_torch_compile(ctx, name):
    """torch.compile of the torch baseline of Liger's embedding script: torch.nn.Embedding(vocab,
    hidden) in the dtype, compiled with torch's default (inductor) settings; the compiled module is
    called, the gradient is the original module's weight's."""
    B, T, D, V = (ctx.axes[k] for k in ("batch", "seq", "hidden", "vocab"))
    m = torch.nn.Embedding(V, D).to(ctx.device, ctx.torch_dtype)
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(V, D))
    compiled = torch.compile(m)
    ids = ctx.inputs["input_ids"].reshape(B, T)
    return defs._graph_modes(ctx, lambda: {"y": compiled(ids)}, {"dweight": m.weight}, {"y": "dy"},
                             [(m.weight, ctx.inputs["weight"].reshape(V, D))])


# ---------------------------------------------------------------- fused_add_rms_norm

class _AddThenLigerRMSNorm(torch.nn.Module):
    """The script's AddLigerRMSNorm: x and the residual added in fp32 (the sum is the residual
    output), Liger's RMSNorm (its own weight, ones) on the sum, then the module's weight times the
    normalized sum cast back to the input dtype."""

    def __init__(self, hidden, eps):
        super().__init__()
        from liger_kernel.transformers.rms_norm import LigerRMSNorm
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.rms_norm = LigerRMSNorm(hidden, eps, in_place=False)

    def forward(self, x, residual):
        dtype = x.dtype
        h = x.to(torch.float32) + residual.to(torch.float32)
        return self.weight * self.rms_norm(h).to(dtype), h.to(dtype)


def fused_add_rms_norm(ctx, name):
    H = ctx.axes["hidden"]
    if name == "liger_fused_add_rms_norm":
        from liger_kernel.transformers.fused_add_rms_norm import LigerFusedAddRMSNorm
        m = LigerFusedAddRMSNorm(hidden_size=H, eps=defs.EPS)
    else:
        m = _AddThenLigerRMSNorm(H, defs.EPS)
    m = m.to(ctx.device, ctx.torch_dtype)
    x, r = _leaf(ctx.inputs["x"]), _leaf(ctx.inputs["residual"])
    copies = [(x, ctx.inputs["x"]), (r, ctx.inputs["residual"]), (m.weight, ctx.inputs["weight"].reshape(H))]
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(H))

    def fwd():
        y, h = m(x, r)
        return {"y": y, "residual_out": h}
    return defs._graph_modes(ctx, fwd, {"dx": x, "dresidual": r, "dweight": m.weight},
                             {"y": "dy", "residual_out": "dresidual_out"}, copies)


# ---------------------------------------------------------------- Megatron-Core

def _one_process_group(device):
    """The tensor-parallel group of Liger's megatron_cross_entropy script at TP=1: a process group
    of this process alone (gloo on the CPU, nccl on a GPU)."""
    import os
    import tempfile
    import torch.distributed as dist
    if not dist.is_initialized():
        store = os.path.join(tempfile.mkdtemp(prefix="kbench-tp1-"), "store")
        dist.init_process_group("nccl" if str(device).startswith("cuda") else "gloo",
                                init_method="file://" + store, rank=0, world_size=1)
    return dist.group.WORLD


def megatron_cross_entropy(ctx, name):
    """Megatron-Core's vocab-parallel cross-entropy (fused or not) at tensor-parallel size 1 on
    seq x batch x vocab logits, per-token losses; kbench's backward is forward + backward, as for
    the other providers of this operation (kbench_builtin.megatron_cross_entropy)."""
    S, B, V = ctx.axes["seq"], ctx.axes["batch"], ctx.axes["vocab"]
    if name == "megatron-fused":
        from megatron.core.fusions.fused_cross_entropy import fused_vocab_parallel_cross_entropy as fused
        group = _one_process_group(ctx.device)

        def ce(lg, tg):
            return fused(lg, tg, group)
    else:
        from megatron.core.tensor_parallel.cross_entropy import vocab_parallel_cross_entropy as unfused
        group = _one_process_group(ctx.device)

        def ce(lg, tg):
            return unfused(lg, tg, 0.0, group)
    logits = _leaf(ctx.inputs["logits"], ctx.mode != "forward")
    target = ctx.inputs["target"].reshape(S, B)
    grad_loss = ctx.inputs["grad_loss"].reshape(S * B)

    def loss_of():
        return ce(logits.view(S, B, V), target).reshape(S * B)
    if ctx.mode == "forward":
        def forward():
            with torch.no_grad():
                return {"loss": loss_of()}
        return Step(forward, [], [(logits, ctx.inputs["logits"])])

    def step():
        loss = loss_of()
        loss.backward(grad_loss)
        return {"loss": loss.detach(), "grad_logits": logits.grad}
    return Step(step, [logits], [(logits, ctx.inputs["logits"])])


def _megatron_norm_config():
    """The duck-typed TransformerConfig of Liger's megatron_rms_norm script: RMSNorm, no sequence
    parallelism, no zero-centred gamma, no persistent or memory-efficient layer norm."""
    from types import SimpleNamespace
    return SimpleNamespace(normalization="RMSNorm", sequence_parallel=False, layernorm_zero_centered_gamma=False,
                           persist_layer_norm=False, memory_efficient_layer_norm=False)


def megatron_rms_norm(ctx, name):
    from megatron.core.transformer.torch_norm import WrappedTorchNorm
    H = ctx.axes["hidden"]
    m = WrappedTorchNorm(config=_megatron_norm_config(), hidden_size=H, eps=defs.EPS).to(ctx.device, ctx.torch_dtype)
    x = _leaf(ctx.inputs["x"])
    copies = [(x, ctx.inputs["x"]), (m.weight, ctx.inputs["weight"].reshape(H))]
    with torch.no_grad():
        m.weight.copy_(ctx.inputs["weight"].reshape(H))
    return defs._graph_modes(ctx, lambda: {"y": m(x)}, {"dx": x, "dweight": m.weight}, {"y": "dy"}, copies)


def megatron_swiglu(ctx, name):
    """megatron_swiglu over the seq x batch x (2 ffn) fc1 output: Megatron's bias_swiglu_impl (no
    bias, not fp8, not cpu-offloaded) or Liger's LigerMegatronSwiGLU in place, called as the script
    calls them; the forward is rerun before each backward (kbench's backward step redoes it)."""
    if name == "megatron":
        from megatron.core.fusions.fused_bias_swiglu import bias_swiglu_impl

        def fn(t):
            return bias_swiglu_impl(t, None, False, False)
    else:
        from liger_kernel.megatron import LigerMegatronSwiGLU
        m = LigerMegatronSwiGLU(in_place=True)

        def fn(t):
            return m(t, None, False, False)
    y = _leaf(ctx.inputs["y"])
    return defs._graph_modes(ctx, lambda: {"out": fn(y)}, {"dy": y}, {"out": "dout"}, [(y, ctx.inputs["y"])])


# ---------------------------------------------------------------- tiled MLPs

class _DeepSpeedTiled(torch.autograd.Function):
    """DeepSpeed's TiledMLP as Liger's benchmark_tiled_mlp.py carries it: the forward runs the MLP
    on each of `shards` chunks along the sequence (dim -2) without a graph; the backward flattens
    batch and sequence, recomputes each chunk's forward with a graph and back-propagates the chunk's
    upstream gradient through it, the input's gradient written into its slice of one zeroed buffer
    (the chunk's .grad), the weights' gradients accumulating in their .grad in their own dtype."""

    @staticmethod
    def forward(ctx, mlp, x, shards):
        ctx.mlp, ctx.shards = mlp, shards
        ctx.save_for_backward(x)
        with torch.no_grad():
            return torch.cat([mlp(part) for part in torch.chunk(x, shards, dim=-2)], dim=-2)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        shape, H = x.shape, x.shape[-1]
        flat = x.detach().view(-1, H)
        up = dy.reshape(-1, H)
        dx = torch.zeros_like(flat)
        parts = torch.chunk(flat, ctx.shards, dim=0)
        offset = 0
        for part in parts:
            n = part.shape[0]
            part = part.detach().requires_grad_(x.requires_grad)
            part.grad = dx.narrow(0, offset, n).view_as(part)
            with torch.enable_grad():
                out = ctx.mlp(part)
            torch.autograd.backward(out, up.narrow(0, offset, n).view_as(part))
            offset += n
        return None, dx.view(shape), None


def tiled(ctx, name):
    """tiled_swiglu / tiled_geglu: liger_tiled Liger's tiled MLP (kbench_builtin_defs' gated MLP);
    deepspeed_tiled the Llama-style MLP (as the huggingface baseline) under _DeepSpeedTiled."""
    if name == "liger_tiled":
        return defs.OPS[ctx.op](ctx, "liger_tiled")
    B, T, H, I = (ctx.axes[k] for k in ("batch", "seq", "hidden", "intermediate"))
    act = torch.nn.SiLU() if ctx.op == "tiled_swiglu" else torch.nn.GELU(approximate="tanh")
    m = defs._LlamaStyleMLP(H, I, act).to(ctx.device, ctx.torch_dtype)
    params = {"w_gate": m.gate_proj.weight, "w_up": m.up_proj.weight, "w_down": m.down_proj.weight}
    x = _leaf(ctx.inputs["x"].reshape(B, T, H))
    copies = [(p, ctx.inputs[n].reshape(p.shape)) for n, p in params.items()] + [(x, ctx.inputs["x"].reshape(B, T, H))]
    with torch.no_grad():
        for p, src in copies:
            p.copy_(src)
    grads = {"dx": x, "dw_gate": params["w_gate"], "dw_up": params["w_up"], "dw_down": params["w_down"]}
    return defs._graph_modes(ctx, lambda: {"y": _DeepSpeedTiled.apply(m, x, defs.TILED_SHARDS)}, grads,
                             {"y": "dy"}, copies)


BUILD = {"torch_compile": {"embedding": embedding_torch_compile},
         "liger_fused_add_rms_norm": {"fused_add_rms_norm": fused_add_rms_norm},
         "liger_rms_norm": {"fused_add_rms_norm": fused_add_rms_norm},
         "megatron-fused": {"megatron_cross_entropy": megatron_cross_entropy},
         "megatron-unfused": {"megatron_cross_entropy": megatron_cross_entropy},
         "megatron": {"megatron_rms_norm": megatron_rms_norm, "megatron_swiglu": megatron_swiglu},
         "liger_in_place": {"megatron_swiglu": megatron_swiglu},
         "liger_tiled": {"tiled_swiglu": tiled, "tiled_geglu": tiled},
         "deepspeed_tiled": {"tiled_swiglu": tiled, "tiled_geglu": tiled}}


class ProviderUnavailable(RuntimeError):
    pass


def _needs(name, op):
    """Fails, saying which library is missing and how the provider is built, where it cannot be
    built here."""
    how, lib = PROVIDERS[name][0][op], PROVIDERS[name][1]
    if lib:
        try:
            __import__(lib)
        except ImportError as e:
            raise ProviderUnavailable("%s needs %s (pip package %s), which is not importable here (%s); it is %s"
                                      % (name, lib, PACKAGES[lib], e, how)) from None
    if name == "torch_compile" and not hasattr(torch, "compile"):
        raise ProviderUnavailable("torch_compile needs torch.compile (torch 2.0 or later); this torch is %s, which "
                                  "has none; it is %s" % (torch.__version__, how))


def factory(name, op):
    if name not in PROVIDERS:
        raise ValueError("no built-in python implementation %r" % name)
    if op not in PROVIDERS[name][0]:
        raise ValueError("%s is Liger's provider for %s only, not for %s" % (name, ", ".join(PROVIDERS[name][0]), op))
    _needs(name, op)
    build = BUILD[name][op]
    return lambda ctx: build(ctx, name)
