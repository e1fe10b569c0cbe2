/*
 * impl_name.c: the one mapping between the name of one of kbench's own
 * implementations and what it is: its backend and CUDA kernel variant, the
 * name and title of its ImplementationRevision, its CUDA entry point.  The
 * kbench CLI (--impl), kb_run and the extension (kbench_run's
 * implementation argument, the registry it shows SQL) all resolve names
 * here.
 */
#include <stdio.h>
#include <string.h>

#include <ctype.h>

#include "kb_int.h"

/* the built-in python implementations (kernels/python/kbench_builtin.py), for every operation */
const char *const kb_builtin_python[] = {"huggingface", "torch", "liger"};
const int	kb_builtin_python_count = sizeof(kb_builtin_python) / sizeof(kb_builtin_python[0]);

/*
 * Liger's other providers, for the operations Liger benchmarks each with
 * (docs/OPERATIONS.md, "Liger's other providers"), as its benchmark scripts
 * build them; kernels/python/kbench_providers.py has the same table
 * (test/kernels/builtin_names.py checks they agree).
 */
const kb_provider kb_providers[] = {
	{"torch_compile", "embedding", NULL, "benchmark_embedding.py",
	 "torch.compile (default inductor settings) of the torch baseline, torch.nn.Embedding(vocab, hidden)"},
	{"liger_fused_add_rms_norm", "fused_add_rms_norm", "liger_kernel", "benchmark_fused_add_rms_norm.py",
	 "Liger-Kernel's LigerFusedAddRMSNorm(hidden, eps 1e-6)"},
	{"liger_rms_norm", "fused_add_rms_norm", "liger_kernel", "benchmark_fused_add_rms_norm.py",
	 "the residual add in PyTorch in fp32, Liger-Kernel's LigerRMSNorm(hidden, eps 1e-6, in_place=False) on the sum, "
	 "then the weight in the dtype (the script's AddLigerRMSNorm)"},
	{"megatron-fused", "megatron_cross_entropy", "megatron.core", "benchmark_megatron_cross_entropy.py",
	 "Megatron-Core's fused_vocab_parallel_cross_entropy (megatron.core.fusions.fused_cross_entropy) on a "
	 "one-process tensor-parallel group"},
	{"megatron-unfused", "megatron_cross_entropy", "megatron.core", "benchmark_megatron_cross_entropy.py",
	 "Megatron-Core's vocab_parallel_cross_entropy (megatron.core.tensor_parallel.cross_entropy, label smoothing 0) "
	 "on a one-process tensor-parallel group"},
	{"megatron", "megatron_rms_norm", "megatron.core", "benchmark_megatron_rms_norm.py",
	 "Megatron-Core's WrappedTorchNorm (megatron.core.transformer.torch_norm) for an RMSNorm config, eps 1e-6"},
	{"megatron", "megatron_swiglu", "megatron.core", "benchmark_megatron_swiglu.py",
	 "Megatron-Core's bias_swiglu_impl (megatron.core.fusions.fused_bias_swiglu), no bias, not fp8, not offloaded"},
	{"liger_in_place", "megatron_swiglu", "liger_kernel", "benchmark_megatron_swiglu.py",
	 "Liger-Kernel's LigerMegatronSwiGLU(in_place=True)"},
	{"liger_tiled", "tiled_swiglu", "liger_kernel", "benchmark_tiled_mlp.py",
	 "Liger-Kernel's LigerTiledSwiGLUMLP (num_shards 4)"},
	{"liger_tiled", "tiled_geglu", "liger_kernel", "benchmark_tiled_mlp.py",
	 "Liger-Kernel's LigerTiledGEGLUMLP (num_shards 4)"},
	{"deepspeed_tiled", "tiled_swiglu", NULL, "benchmark_tiled_mlp.py",
	 "DeepSpeed's TiledMLP algorithm as the script carries it (no deepspeed import): the Llama MLP (silu) run "
	 "shard by shard along seq without a graph, each shard's forward recomputed and differentiated in the backward (4 shards)"},
	{"deepspeed_tiled", "tiled_geglu", NULL, "benchmark_tiled_mlp.py",
	 "DeepSpeed's TiledMLP algorithm as the script carries it (no deepspeed import): the Llama MLP (gelu tanh) run "
	 "shard by shard along seq without a graph, each shard's forward recomputed and differentiated in the backward (4 shards)"},
};
const int	kb_providers_count = sizeof(kb_providers) / sizeof(kb_providers[0]);

const kb_provider *
kb_provider_for(const char *name, const char *op)
{
	for (int i = 0; name && op && i < kb_providers_count; i++)
		if (strcmp(name, kb_providers[i].name) == 0 && strcmp(op, kb_providers[i].op) == 0)
			return &kb_providers[i];
	return NULL;
}

bool
kb_provider_name(const char *name)
{
	for (int i = 0; name && i < kb_providers_count; i++)
		if (strcmp(name, kb_providers[i].name) == 0)
			return true;
	return false;
}

void
kb_provider_ops(const char *name, char *out, size_t len)
{
	size_t		n = 0;

	if (len)
		out[0] = '\0';
	for (int i = 0; name && i < kb_providers_count; i++)
		if (strcmp(name, kb_providers[i].name) == 0 && n < len)
			n += snprintf(out + n, len - n, "%s%s", n ? ", " : "", kb_providers[i].op);
}

bool
kb_impl_valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > 100 || !(islower((unsigned char) s[0]) || isdigit((unsigned char) s[0])))
		return false;
	for (; *s; s++)
		if (!(islower((unsigned char) *s) || isdigit((unsigned char) *s) || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

int
kb_impl_builtin(const char *impl)
{
	kb_impl_id	id;

	if (!impl)
		return 0;
	if (kb_impl_resolve(impl, NULL, &id, NULL, 0) != KB_PASSED || id.own)
		return 1;
	for (int i = 0; i < kb_builtin_python_count; i++)
		if (strcmp(impl, kb_builtin_python[i]) == 0)
			return 1;
	if (kb_provider_name(impl))
		return 1;
	return strcmp(impl, "python") == 0 || strcmp(impl, "library") == 0;
}

const char *
kb_ext_label(const kb_case *cs)
{
	if (cs->ext_name)
		return cs->ext_name;
	return cs->ext == KB_EXT_PYTHON ? "python" : "library";
}


kb_status
kb_impl_resolve(const char *impl, const char *opname, kb_impl_id *id, char *err, size_t errlen)
{
	const kb_op *op = opname ? kb_find_op(opname) : NULL;
	int			n = op ? kb_variant_count(op) : 9;

	memset(id, 0, sizeof(*id));
	if (strcmp(impl, "cpu") == 0)
		id->cuda = 0;
	else if (strcmp(impl, "cuda") == 0)
		id->cuda = 1;
	else if (strncmp(impl, "cuda/", 5) == 0)
	{
		const char *v = impl + 5;

		if (v[0] != 'v' || v[1] < '1' || v[1] > '9' || v[2] != '\0' || v[1] - '0' > n)
		{
			char		allowed[64] = "";

			for (int i = 1; i <= n; i++)
				snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%sv%d", i > 1 ? ", " : "", i);
			if (op)
				kb_seterr(err, errlen, "unknown variant '%s' for %s; allowed: %s", v, op->name, allowed);
			else
				kb_seterr(err, errlen, "unknown implementation '%s': a CUDA kernel variant is cuda/vN", impl);
			return KB_INVALID_REQUEST;
		}
		id->cuda = 1;
		id->variant = v[1] - '0';
	}
	else
		return KB_PASSED;		/* not kbench's own */
	id->own = 1;
	if (id->variant == 0)
		id->variant = 1;
	if (!id->cuda)
		snprintf(id->impl, sizeof(id->impl), "cpu");
	else if (id->variant == 1)
		snprintf(id->impl, sizeof(id->impl), "cuda");
	else
		snprintf(id->impl, sizeof(id->impl), "cuda/v%d", id->variant);
	if (!op)
		return KB_PASSED;

	/* v1 keeps the names it always had, so its history stays one implementation */
	if (id->cuda && id->variant > 1)
	{
		snprintf(id->name, sizeof(id->name), "kbench-%s-cuda-v%d", op->slug, id->variant);
		snprintf(id->title, sizeof(id->title), "%s \xc2\xb7 kbench CUDA v%d", op->title, id->variant);
		/* the entry point called with kb_call.variant: part of the identity, so v2 is its own implementation */
		snprintf(id->symbol, sizeof(id->symbol), "%s/v%d", op->cu_symbol, id->variant);
	}
	else
	{
		snprintf(id->name, sizeof(id->name), "kbench-%s-%s", op->slug, id->cuda ? "cuda" : "cpu");
		snprintf(id->title, sizeof(id->title), "%s \xc2\xb7 kbench %s", op->title, id->cuda ? "CUDA" : "C");
		if (id->cuda)
			snprintf(id->symbol, sizeof(id->symbol), "%s", op->cu_symbol);
	}
	return KB_PASSED;
}
