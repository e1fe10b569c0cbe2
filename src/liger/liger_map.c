/*
 * liger_map.c: one Liger CSV row -> six kernelindex.dev/v1alpha1 manifests.
 *
 *   kernel_name            -> OperationSpec (per-kernel table)
 *   x_name, x_value and
 *   extra_benchmark_config -> WorkloadCase (the kernel's binder)
 *   kernel_provider        -> ImplementationRevision (provider table)
 *   kernel_operation_mode  -> BenchmarkProtocol (timed-pass table)
 *   gpu_name               -> ExecutionEnvironment (GPU rules)
 *   the row                -> BenchmarkRun naming the other five digests
 *
 * Each manifest is written as JSON text, parsed, validated and normalized
 * by the core, then digested.  docs/LIGER.md states the rules in prose.
 *
 * This file holds the mode and provider tables and the entry point; the
 * builders are in liger_build.c (writing with the core's ki_jw), with
 * liger_expr.c for derived axes, liger_time.c for timestamps and
 * liger_text.c for names and numbers; the kernel and GPU tables are in
 * liger_kernels*.c and liger_gpus.c.
 */
#include "liger_internal.h"
#include "liger_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *const ki_liger_part_names[KI_LIGER_NPARTS] = {
	"run", "protocol", "environment", "workload", "implementation", "operation"
};

/* ---------------------------------------------------------------- tables */

static const ki_liger_mode liger_modes[] = {
	{"forward", "the module forward pass"},
	{"backward", "the backward pass of the module output given a random upstream gradient"},
	{"full", "the forward pass plus the backward pass"},
};

#define LIGER_BSD2 "BSD-2-Clause", "BSD-2-Clause", "liger-kernel"

static const ki_liger_provider liger_providers[] = {
	{"liger", "Liger", "triton", "Liger-Kernel Triton implementation.", LIGER_BSD2, false},
	{"liger_fused_add_rms_norm", "Liger fused", "triton",
	 "Liger-Kernel fused add + RMSNorm Triton implementation.", LIGER_BSD2, false},
	{"liger_rms_norm", "Liger unfused", "triton",
	 "Residual add in PyTorch followed by the Liger RMSNorm Triton kernel (unfused baseline).",
	 LIGER_BSD2, false},
	{"liger_in_place", "Liger in-place", "triton",
	 "Liger-Kernel Triton implementation, in-place variant.", LIGER_BSD2, false},
	{"liger_tiled", "Liger tiled", "triton",
	 "Liger-Kernel MLP under seq-sharded tiled execution (same computation, chunked over the sequence).",
	 LIGER_BSD2, false},
	{"huggingface", "Transformers", "python", "Hugging Face Transformers reference module.",
	 "Apache-2.0", NULL, NULL, true},
	{"torch", "PyTorch", "python", "PyTorch reference module.", "BSD-3-Clause", NULL, NULL, true},
	{"torch_compile", "torch.compile", "python",
	 "PyTorch reference module compiled with torch.compile.", "BSD-3-Clause", NULL, NULL, false},
	{"megatron", "Megatron", "python", "Megatron-Core module for the benchmarked operation.",
	 "BSD-3-Clause", NULL, NULL, false},
	{"megatron-fused", "Megatron fused", "python",
	 "Megatron-Core fused_vocab_parallel_cross_entropy (fused kernel path).",
	 "BSD-3-Clause", NULL, NULL, false},
	{"megatron-unfused", "Megatron unfused", "python",
	 "Megatron-Core vocab_parallel_cross_entropy (unfused reference path).",
	 "BSD-3-Clause", NULL, NULL, true},
	{"deepspeed_tiled", "DeepSpeed tiled", "python", "DeepSpeed TiledMLP seq-sharded execution.",
	 "Apache-2.0", NULL, NULL, false},
};

/* ---------------------------------------------------------------- entry */

/*
 * MiB -> bytes: max_memory_allocated() is a whole number of bytes and the
 * CSV writes bytes / 2^20 in full (a power-of-two scale is exact in binary
 * floating point), so the product must be whole; anything else is refused,
 * not rounded.
 */
static bool
mib_bytes(double mib, int64_t *bytes)
{
	double		b = mib * 1048576.0;

	if (!(b > 0) || b > 9007199254740992.0 || b != floor(b))
		return false;
	*bytes = (int64_t) b;
	return true;
}

static ki_liger_outcome
skip(ki_liger_result *out, const char *reason)
{
	out->outcome = KI_LIGER_SKIPPED;
	out->reason = reason ? reason : "out of memory";
	for (int i = 0; i < KI_LIGER_NPARTS; i++)
	{
		out->manifest[i] = NULL;
		out->digest[i][0] = '\0';
	}
	out->external_id = NULL;
	return KI_LIGER_SKIPPED;
}

ki_liger_outcome
ki_liger_map(ki_arena *a, const ki_liger_row *row, ki_liger_result *out)
{
	const ki_liger_kernel *k;
	const ki_liger_mode *mode = NULL;
	const ki_liger_provider *prov = NULL;
	ki_liger_hardware hw;
	ki_liger_binding b;
	ki_liger_input in;
	ki_errors	errs;
	ki_value   *config;
	ki_liger_timing		t;
	double		x;
	const char *key;
	bool		memory;
	ki_liger_build		bd = {a, out, NULL};

	memset(out, 0, sizeof *out);

	{
		const char *const cols[KI_LIGER_NCOLUMNS] = {
			row->kernel_name, row->kernel_provider, row->kernel_operation_mode,
			row->metric_name, row->metric_unit, row->x_name, row->x_label, row->x_value,
			row->y_value_50, row->y_value_20, row->y_value_80,
			row->extra_benchmark_config_str, row->gpu_name, row->timestamp, row->liger_version
		};

		for (int c = 0; c < KI_LIGER_NCOLUMNS; c++)
			if (cols[c] == NULL)
				return skip(out, ki_liger_afmt(a, "row lacks column %s", ki_liger_columns[c]));
	}

	memory = strcmp(row->metric_name, "memory") == 0;
	if (memory)
	{
		/* torch.cuda.max_memory_allocated() / 2^20, written "MB" */
		if (strcmp(row->metric_unit, "MB") != 0)
			return skip(out, ki_liger_afmt(a, "memory unit '%s' is not MB", row->metric_unit));
	}
	else if (strcmp(row->metric_name, "speed") != 0)
		return skip(out, ki_liger_afmt(a, "unknown metric_name '%s'", row->metric_name));
	else if (strcmp(row->metric_unit, "ms") != 0)
		return skip(out, ki_liger_afmt(a, "speed unit '%s' is not ms", row->metric_unit));

	k = ki_liger_kernel_find(row->kernel_name);
	if (k == NULL)
		return skip(out, ki_liger_afmt(a, "unknown kernel '%s'", row->kernel_name));
	for (size_t i = 0; i < sizeof liger_modes / sizeof liger_modes[0]; i++)
		if (strcmp(liger_modes[i].mode, row->kernel_operation_mode) == 0)
			mode = &liger_modes[i];
	if (mode == NULL)
		return skip(out, ki_liger_afmt(a, "unknown kernel_operation_mode '%s'", row->kernel_operation_mode));
	for (size_t i = 0; i < sizeof liger_providers / sizeof liger_providers[0]; i++)
		if (strcmp(liger_providers[i].provider, row->kernel_provider) == 0)
			prov = &liger_providers[i];
	if (prov == NULL)
		return skip(out, ki_liger_afmt(a, "unknown provider '%s'", row->kernel_provider));

	ki_errors_init(&errs, a);
	config = ki_parse(a, row->extra_benchmark_config_str, strlen(row->extra_benchmark_config_str), &errs);
	if (config == NULL || config->type != KI_OBJECT)
		return skip(out, ki_liger_afmt(a, "extra_benchmark_config_str of %s is not a JSON object", k->csv_name));
	if (!ki_liger_parse_number(row->x_value, &x) || x <= 0 || x != floor(x))
		return skip(out, ki_liger_afmt(a, "x_value '%s' is not a positive integer", row->x_value));

	memset(&b, 0, sizeof b);
	in.arena = a;
	in.x = x;
	in.x_name = row->x_name;
	in.config = config;
	if (!k->bind(k, &in, &b))
		return skip(out, ki_liger_afmt(a, "config not understood for %s: %s", k->csv_name,
							  b.reason ? b.reason : "no binding"));

	if (!ki_liger_gpu_lookup(a, row->gpu_name, &hw))
		return skip(out, ki_liger_afmt(a, "unknown gpu '%s'", row->gpu_name));

	if (!ki_liger_parse_number(row->y_value_50, &t.ms50) || !(t.ms50 > 0))
		return skip(out, ki_liger_afmt(a, "y_value_50 '%s' is not a positive number", row->y_value_50));
	t.spread = ki_liger_parse_number(row->y_value_20, &t.ms20) && ki_liger_parse_number(row->y_value_80, &t.ms80);
	t.observed_at = ki_liger_utc_instant(a, row->timestamp);
	if (t.observed_at == NULL)
		return skip(out, ki_liger_afmt(a, "timestamp '%s' is not understood", row->timestamp));
	if (memory)
	{
		const char *bad = NULL;

		if (!mib_bytes(t.ms50, &out->memory.p50_bytes))
			bad = row->y_value_50;
		else if (t.spread && !mib_bytes(t.ms20, &out->memory.p20_bytes))
			bad = row->y_value_20;
		else if (t.spread && !mib_bytes(t.ms80, &out->memory.p80_bytes))
			bad = row->y_value_80;
		if (bad)
			return skip(out, ki_liger_afmt(a, "memory '%s' MiB is not a positive whole number of bytes below 2^53", bad));
		if (!t.spread)
			out->memory.p20_bytes = out->memory.p80_bytes = 0;
		out->memory.spread = t.spread;
		out->memory.pass = ki_strndup(a, row->kernel_operation_mode, strlen(row->kernel_operation_mode));
		out->memory.observed_at = t.observed_at;
		out->memory.liger_version = ki_strndup(a, row->liger_version, strlen(row->liger_version));
	}

	key = ki_liger_case_key(a, &b);
	if (!ki_liger_build_operation(&bd, k) ||
		!ki_liger_build_implementation(&bd, k, prov) ||
		!ki_liger_build_workload(&bd, k, &b) ||
		!ki_liger_build_protocol(&bd, mode) ||
		!ki_liger_build_environment(&bd, row->gpu_name, &hw))
		return skip(out, bd.reason);
	if (memory)
		out->external_id = ki_liger_external_id(a, k, row, key);
	else if (!ki_liger_build_run(&bd, k, row, key, &t))
		return skip(out, bd.reason);
	if (a->failed)
		return skip(out, "out of memory");

	out->outcome = memory ? KI_LIGER_MAPPED_MEMORY : KI_LIGER_MAPPED;
	out->reason = NULL;
	return out->outcome;
}
