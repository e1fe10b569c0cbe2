/*
 * liger_kernels.c: Liger kernels other than losses (norms, activations,
 * MLPs, embeddings, rotary embeddings, attention variants, MoE, Megatron
 * layouts), the kernel lookup, and the helpers every binder uses.
 *
 * One table entry per kernel_name.  An entry names the OperationSpec (slug,
 * family, title, description), its tensor signature, derived axes, and a
 * binder that turns (x_name, x_value, extra_benchmark_config_str) into
 * integer axes, the float dtype and scalars.  A binder accepts only the
 * config shape the kernel's benchmark script writes.
 */
#include "liger_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------ binder helpers */

double
ki_liger_cfg_int(const ki_value *cfg, const char *key)
{
	const ki_value *v = ki_get(cfg, key);

	if (v == NULL || v->type != KI_NUMBER)
		return 0;
	if (!(v->u.num > 0) || v->u.num != floor(v->u.num) || !isfinite(v->u.num))
		return 0;
	return v->u.num;
}

double
ki_liger_cfg_pos(const ki_value *cfg, const char *key)
{
	const ki_value *v = ki_get(cfg, key);

	if (v == NULL || v->type != KI_NUMBER || !isfinite(v->u.num) || !(v->u.num > 0))
		return 0;
	return v->u.num;
}

bool
ki_liger_cfg_num(const ki_value *cfg, const char *key, double *out)
{
	const ki_value *v = ki_get(cfg, key);

	if (v == NULL || v->type != KI_NUMBER || !isfinite(v->u.num))
		return false;
	*out = v->u.num;
	return true;
}

static bool
str_is(const ki_value *v, const char *s)
{
	size_t		n = strlen(s);

	return v != NULL && v->type == KI_STRING && v->u.str.len == n &&
		memcmp(v->u.str.ptr, s, n) == 0;
}

const char *
ki_liger_cfg_dtype(const ki_value *cfg, const char *key)
{
	static const char *const torch_dtypes[][2] = {
		{"torch.bfloat16", "bf16"},
		{"torch.float16", "fp16"},
		{"torch.float32", "fp32"},
	};
	const ki_value *v = ki_get(cfg, key);

	for (size_t i = 0; i < sizeof(torch_dtypes) / sizeof(torch_dtypes[0]); i++)
		if (str_is(v, torch_dtypes[i][0]))
			return torch_dtypes[i][1];
	return NULL;
}

bool
ki_liger_cfg_str_is(const ki_value *cfg, const char *key, const char *s)
{
	return str_is(ki_get(cfg, key), s);
}

bool
ki_liger_cfg_bool_is(const ki_value *cfg, const char *key, bool b)
{
	const ki_value *v = ki_get(cfg, key);

	return v != NULL && v->type == (b ? KI_TRUE : KI_FALSE);
}

bool
ki_liger_divisible(double x, double y)
{
	const double limit = 9007199254740992.0;	/* 2^53 */

	if (!(x >= 0 && x <= limit && y >= 1 && y <= limit))
		return false;
	return (int64_t) x % (int64_t) y == 0;
}

void
ki_liger_bind_axis(ki_liger_binding *b, const char *axis, double v)
{
	if (b->naxes < KI_LIGER_MAX_AXES)
	{
		b->axis[b->naxes] = axis;
		b->value[b->naxes] = v;
		b->naxes++;
	}
}

void
ki_liger_bind_scalar(ki_liger_binding *b, const char *name, double v)
{
	if (b->nscalars < KI_LIGER_MAX_SCALARS)
	{
		b->scalar[b->nscalars] = name;
		b->scalar_value[b->nscalars] = v;
		b->nscalars++;
	}
}

bool
ki_liger_bind_fail(const ki_liger_input *in, ki_liger_binding *b, const char *fmt,...)
{
	char		msg[256];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	b->reason = ki_strndup(in->arena, msg, strlen(msg));
	return false;
}

/* ------------------------------------------------------ binders */

/*
 * rows x hidden modules (rms_norm, fused_add_rms_norm, layer_norm: k->arg
 * "eps"; softmax: no eps): the hidden size swept as H or N, config {M,
 * dtype[, eps]}.
 */
static bool
bind_rows_hidden(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	bool		with_eps = k->arg != NULL && strcmp(k->arg, "eps") == 0;
	double		rows = ki_liger_cfg_int(in->config, "M");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	double		eps = with_eps ? ki_liger_cfg_pos(in->config, "eps") : 0;

	if (strcmp(in->x_name, "H") != 0 && strcmp(in->x_name, "N") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is neither H nor N", in->x_name);
	if (!rows || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks a positive integer M or a torch dtype");
	if (with_eps && !eps)
		return ki_liger_bind_fail(in, b, "config lacks a positive eps");
	ki_liger_bind_axis(b, "rows", rows);
	ki_liger_bind_axis(b, "hidden", in->x);
	b->dtype = dtype;
	if (with_eps)
		ki_liger_bind_scalar(b, "eps", eps);
	return true;
}

/* relu_squared: N swept, config {M, dtype}. */
static bool
bind_relu_squared(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		rows = ki_liger_cfg_int(in->config, "M");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");

	(void) k;
	if (strcmp(in->x_name, "N") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not N", in->x_name);
	if (!rows || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks a positive integer M or a torch dtype");
	ki_liger_bind_axis(b, "rows", rows);
	ki_liger_bind_axis(b, "hidden", in->x);
	b->dtype = dtype;
	return true;
}

/* group_norm: channels C swept, config {M, H, channels_per_group, dtype, eps}. */
static bool
bind_group_norm(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		batch = ki_liger_cfg_int(in->config, "M");
	double		hidden = ki_liger_cfg_int(in->config, "H");
	double		per_group = ki_liger_cfg_int(in->config, "channels_per_group");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	double		eps = ki_liger_cfg_pos(in->config, "eps");

	(void) k;
	if (strcmp(in->x_name, "C") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not C", in->x_name);
	if (!batch || !hidden || !per_group || !dtype || !eps)
		return ki_liger_bind_fail(in, b, "config lacks M, H, channels_per_group, a torch dtype or eps");
	if (!ki_liger_divisible(in->x, per_group))
		return ki_liger_bind_fail(in, b, "channels are not a multiple of channels_per_group");
	ki_liger_bind_axis(b, "batch", batch);
	ki_liger_bind_axis(b, "channels", in->x);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "channels_per_group", per_group);
	b->dtype = dtype;
	ki_liger_bind_scalar(b, "eps", eps);
	return true;
}

/* sparsemax: features V swept, config {B, T, dim: -1, dtype}. */
static bool
bind_sparsemax(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		bsz = ki_liger_cfg_int(in->config, "B");
	double		seq = ki_liger_cfg_int(in->config, "T");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	double		dim;

	(void) k;
	if (strcmp(in->x_name, "V") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not V", in->x_name);
	if (!bsz || !seq || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks positive integers B, T or a torch dtype");
	if (!ki_liger_cfg_num(in->config, "dim", &dim) || dim != -1)
		return ki_liger_bind_fail(in, b, "config dim is not -1");
	ki_liger_bind_axis(b, "tokens", bsz * seq);
	ki_liger_bind_axis(b, "features", in->x);
	b->dtype = dtype;
	return true;
}

/* embedding: vocab V swept, config {B, T, D, dtype}. */
static bool
bind_embedding(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		bsz = ki_liger_cfg_int(in->config, "B");
	double		seq = ki_liger_cfg_int(in->config, "T");
	double		hidden = ki_liger_cfg_int(in->config, "D");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");

	(void) k;
	if (strcmp(in->x_name, "V") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not V", in->x_name);
	if (!bsz || !seq || !hidden || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks positive integers B, T, D or a torch dtype");
	ki_liger_bind_axis(b, "batch", bsz);
	ki_liger_bind_axis(b, "seq", seq);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "vocab", in->x);
	b->dtype = dtype;
	return true;
}

/*
 * rope, llama4_rope: either the sequence (T) or the hidden size (H) is
 * swept; the other comes from the config (seq_len / hidden_size), with
 * {num_q_heads, num_kv_heads, dtype}.  hidden must split evenly over heads.
 */
static bool
bind_rope(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		q_heads = ki_liger_cfg_int(in->config, "num_q_heads");
	double		kv_heads = ki_liger_cfg_int(in->config, "num_kv_heads");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	double		seq,
				hidden;

	(void) k;
	if (strcmp(in->x_name, "T") == 0)
	{
		seq = in->x;
		hidden = ki_liger_cfg_int(in->config, "hidden_size");
	}
	else if (strcmp(in->x_name, "H") == 0)
	{
		seq = ki_liger_cfg_int(in->config, "seq_len");
		hidden = in->x;
	}
	else
		return ki_liger_bind_fail(in, b, "x_name '%s' is neither T nor H", in->x_name);
	if (!q_heads || !kv_heads || !dtype || !seq || !hidden)
		return ki_liger_bind_fail(in, b, "config lacks num_q_heads, num_kv_heads, seq_len/hidden_size or a torch dtype");
	if (!ki_liger_divisible(hidden, q_heads))
		return ki_liger_bind_fail(in, b, "hidden size is not a multiple of num_q_heads");
	ki_liger_bind_axis(b, "seq", seq);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "q_heads", q_heads);
	ki_liger_bind_axis(b, "kv_heads", kv_heads);
	b->dtype = dtype;
	return true;
}

/*
 * Gated MLPs (swiglu, geglu, tiled_swiglu, tiled_geglu): sequence T swept,
 * config {<batch key>, hidden_size, intermediate_size, hidden_act, dtype}.
 * k->arg is "<batch key>:<hidden_act>" (swiglu wrote B, the others bsz).
 */
static bool
bind_gated_mlp(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	const char *colon = strchr(k->arg, ':');
	char		batch_key[16];
	double		bsz,
				hidden = ki_liger_cfg_int(in->config, "hidden_size"),
				inter = ki_liger_cfg_int(in->config, "intermediate_size");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	size_t		n = (size_t) (colon - k->arg);

	if (n >= sizeof batch_key)
		n = sizeof batch_key - 1;
	memcpy(batch_key, k->arg, n);
	batch_key[n] = '\0';
	bsz = ki_liger_cfg_int(in->config, batch_key);
	if (strcmp(in->x_name, "T") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not T", in->x_name);
	if (!bsz || !hidden || !inter || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks %s, hidden_size, intermediate_size or a torch dtype",
								  batch_key);
	if (!ki_liger_cfg_str_is(in->config, "hidden_act", colon + 1))
		return ki_liger_bind_fail(in, b, "config hidden_act is not '%s'", colon + 1);
	ki_liger_bind_axis(b, "batch", bsz);
	ki_liger_bind_axis(b, "seq", in->x);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "intermediate", inter);
	b->dtype = dtype;
	return true;
}

/*
 * Megatron sbh-layout kernels, config {S, B}, bf16.  k->arg names the swept
 * axis: "hidden" (megatron_rms_norm, x_name H, eps 1e-6 as in the script) or
 * "ffn" (megatron_swiglu, x_name ffn_local).
 */
static bool
bind_megatron_sbh(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	bool		norm = strcmp(k->arg, "hidden") == 0;
	const char *want = norm ? "H" : "ffn_local";
	double		seq = ki_liger_cfg_int(in->config, "S");
	double		bsz = ki_liger_cfg_int(in->config, "B");

	if (strcmp(in->x_name, want) != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not %s", in->x_name, want);
	if (!seq || !bsz)
		return ki_liger_bind_fail(in, b, "config lacks positive integers S and B");
	ki_liger_bind_axis(b, "seq", seq);
	ki_liger_bind_axis(b, "batch", bsz);
	ki_liger_bind_axis(b, k->arg, in->x);
	b->dtype = "bf16";
	if (norm)
		ki_liger_bind_scalar(b, "eps", 1e-6);
	return true;
}

/* fused_moe: tokens T or experts E swept, config {T, E, H, intermediate_dim, K, dtype}. */
static bool
bind_fused_moe(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		hidden = ki_liger_cfg_int(in->config, "H");
	double		inter = ki_liger_cfg_int(in->config, "intermediate_dim");
	double		topk = ki_liger_cfg_int(in->config, "K");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	double		tokens,
				experts;

	(void) k;
	if (strcmp(in->x_name, "T") == 0)
	{
		tokens = in->x;
		experts = ki_liger_cfg_int(in->config, "E");
	}
	else if (strcmp(in->x_name, "E") == 0)
	{
		tokens = ki_liger_cfg_int(in->config, "T");
		experts = in->x;
	}
	else
		return ki_liger_bind_fail(in, b, "x_name '%s' is neither T nor E", in->x_name);
	if (!hidden || !inter || !topk || !dtype || !tokens || !experts)
		return ki_liger_bind_fail(in, b, "config lacks T, E, H, intermediate_dim, K or a torch dtype");
	ki_liger_bind_axis(b, "tokens", tokens);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "intermediate", inter);
	ki_liger_bind_axis(b, "experts", experts);
	ki_liger_bind_axis(b, "k", topk);
	b->dtype = dtype;
	return true;
}

/* fused_neighborhood_attention: seq_len swept, config {batch_size, hidden_size, num_heads, kernel_size, dilation, bias: true, dtype}. */
static bool
bind_neighborhood(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		batch = ki_liger_cfg_int(in->config, "batch_size");
	double		hidden = ki_liger_cfg_int(in->config, "hidden_size");
	double		heads = ki_liger_cfg_int(in->config, "num_heads");
	double		kernel = ki_liger_cfg_int(in->config, "kernel_size");
	double		dilation = ki_liger_cfg_int(in->config, "dilation");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");

	(void) k;
	if (strcmp(in->x_name, "seq_len") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not seq_len", in->x_name);
	if (!batch || !hidden || !heads || !kernel || !dilation || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks batch_size, hidden_size, num_heads, kernel_size, dilation or a torch dtype");
	if (!ki_liger_cfg_bool_is(in->config, "bias", true))
		return ki_liger_bind_fail(in, b, "config bias is not true");
	if (!ki_liger_divisible(hidden, heads))
		return ki_liger_bind_fail(in, b, "hidden_size is not a multiple of num_heads");
	ki_liger_bind_axis(b, "batch", batch);
	ki_liger_bind_axis(b, "seq", in->x);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "heads", heads);
	ki_liger_bind_axis(b, "kernel_size", kernel);
	ki_liger_bind_axis(b, "dilation", dilation);
	b->dtype = dtype;
	return true;
}

/* (sparse_)multi_token_attention: L swept, config {B, C_in, C_out, K, groups: 1, bias: true, dtype}. */
static bool
bind_mta(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		batch = ki_liger_cfg_int(in->config, "B");
	double		c_in = ki_liger_cfg_int(in->config, "C_in");
	double		c_out = ki_liger_cfg_int(in->config, "C_out");
	double		kk = ki_liger_cfg_int(in->config, "K");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	double		groups;

	(void) k;
	if (strcmp(in->x_name, "L") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not L", in->x_name);
	if (!batch || !c_in || !c_out || !kk || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks B, C_in, C_out, K or a torch dtype");
	if (!ki_liger_cfg_num(in->config, "groups", &groups) || groups != 1)
		return ki_liger_bind_fail(in, b, "config groups is not 1");
	if (!ki_liger_cfg_bool_is(in->config, "bias", true))
		return ki_liger_bind_fail(in, b, "config bias is not true");
	ki_liger_bind_axis(b, "batch", batch);
	ki_liger_bind_axis(b, "heads_in", c_in);
	ki_liger_bind_axis(b, "heads_out", c_out);
	ki_liger_bind_axis(b, "seq", in->x);
	ki_liger_bind_axis(b, "k", kk);
	b->dtype = dtype;
	return true;
}

/* ------------------------------------------------------ the table */

#define END {NULL, {NULL}, NULL}
#define Y_ROWS_HIDDEN (const ki_liger_tensor[]) { {"y", {"rows", "hidden"}, NULL}, END }
#define Y_BSH (const ki_liger_tensor[]) { {"y", {"batch", "seq", "hidden"}, NULL}, END }

static const ki_liger_tensor gated_mlp_inputs[] = {
	{"x", {"batch", "seq", "hidden"}, NULL},
	{"w_gate", {"intermediate", "hidden"}, NULL},
	{"w_up", {"intermediate", "hidden"}, NULL},
	{"w_down", {"hidden", "intermediate"}, NULL},
	END
};

static const ki_liger_derived rope_derived[] = {
	{"head_dim", "hidden // q_heads"}, {NULL, NULL}
};

static const ki_liger_tensor mta_inputs[] = {
	{"scores", {"batch", "heads_in", "seq", "seq"}, NULL},
	{"weight", {"heads_out", "heads_in", "k", "k"}, NULL},
	{"bias", {"heads_out"}, NULL},
	END
};
static const ki_liger_tensor mta_outputs[] = {
	{"y", {"batch", "heads_out", "seq", "seq"}, NULL},
	END
};

const ki_liger_kernel ki_liger_kernels_core[] = {
	{
		"rms_norm", "liger-rms-norm", "rmsnorm", "RMSNorm",
		"Root-mean-square normalization of a rows×hidden activation with a learned "
		"hidden-size weight.",
		(const ki_liger_tensor[]) {
			{"x", {"rows", "hidden"}, NULL},
			{"weight", {"hidden"}, NULL},
			END
		},
		Y_ROWS_HIDDEN, NULL, bind_rows_hidden, "eps"
	},
	{
		"fused_add_rms_norm", "liger-fused-add-rms-norm", "rmsnorm", "Fused add + RMSNorm",
		"Residual add followed by RMSNorm, returning the normalized activation and the "
		"post-add residual.",
		(const ki_liger_tensor[]) {
			{"x", {"rows", "hidden"}, NULL},
			{"residual", {"rows", "hidden"}, NULL},
			{"weight", {"hidden"}, NULL},
			END
		},
		(const ki_liger_tensor[]) {
			{"y", {"rows", "hidden"}, NULL},
			{"residual_out", {"rows", "hidden"}, NULL},
			END
		},
		NULL, bind_rows_hidden, "eps"
	},
	{
		"layer_norm", "liger-layer-norm", "layernorm", "LayerNorm",
		"Layer normalization of a rows×hidden activation with learned weight and bias.",
		(const ki_liger_tensor[]) {
			{"x", {"rows", "hidden"}, NULL},
			{"weight", {"hidden"}, NULL},
			{"bias", {"hidden"}, NULL},
			END
		},
		Y_ROWS_HIDDEN, NULL, bind_rows_hidden, "eps"
	},
	{
		"softmax", "liger-softmax", "softmax", "Softmax",
		"Softmax over the last dimension of a rows×hidden tensor.",
		(const ki_liger_tensor[]) { {"x", {"rows", "hidden"}, NULL}, END },
		Y_ROWS_HIDDEN, NULL, bind_rows_hidden, NULL
	},
	{
		"relu_squared", "liger-relu-squared", "relu-squared", "ReLU squared",
		"Elementwise relu(x)^2 activation over a rows×hidden tensor; the benchmark sweeps the "
		"hidden size.",
		(const ki_liger_tensor[]) { {"x", {"rows", "hidden"}, NULL}, END },
		Y_ROWS_HIDDEN, NULL, bind_relu_squared, NULL
	},
	{
		"group_norm", "liger-group-norm", "groupnorm", "GroupNorm",
		"Group normalization of a batch×channels×hidden tensor with affine channel weight and "
		"bias; groups = channels / channels_per_group.",
		(const ki_liger_tensor[]) {
			{"x", {"batch", "channels", "hidden"}, NULL},
			{"weight", {"channels"}, NULL},
			{"bias", {"channels"}, NULL},
			END
		},
		(const ki_liger_tensor[]) { {"y", {"batch", "channels", "hidden"}, NULL}, END },
		(const ki_liger_derived[]) { {"groups", "channels // channels_per_group"}, {NULL, NULL} },
		bind_group_norm, NULL
	},
	{
		"sparsemax", "liger-sparsemax", "sparsemax", "Sparsemax",
		"Sparsemax projection over the last dimension of a tokens×features tensor.",
		(const ki_liger_tensor[]) { {"x", {"tokens", "features"}, NULL}, END },
		(const ki_liger_tensor[]) { {"y", {"tokens", "features"}, NULL}, END },
		NULL, bind_sparsemax, NULL
	},
	{
		"embedding", "liger-embedding", "embedding", "Embedding lookup",
		"Embedding table lookup: batch×seq integer ids gathered from a vocab×hidden weight.",
		(const ki_liger_tensor[]) {
			{"input_ids", {"batch", "seq"}, "int64"},
			{"weight", {"vocab", "hidden"}, NULL},
			END
		},
		Y_BSH, NULL, bind_embedding, NULL
	},
	{
		"rope", "liger-rope", "rope", "Rotary position embedding",
		"Rotary position embedding applied to query and key tensors (batch 1, Llama-style head "
		"layout).",
		(const ki_liger_tensor[]) {
			{"q", {"1", "q_heads", "seq", "head_dim"}, NULL},
			{"k", {"1", "kv_heads", "seq", "head_dim"}, NULL},
			END
		},
		(const ki_liger_tensor[]) {
			{"q_out", {"1", "q_heads", "seq", "head_dim"}, NULL},
			{"k_out", {"1", "kv_heads", "seq", "head_dim"}, NULL},
			END
		},
		rope_derived, bind_rope, NULL
	},
	{
		"llama4_rope", "liger-llama4-rope", "rope", "Llama 4 rotary position embedding",
		"Llama-4-style rotary embedding applied to query and key tensors in "
		"batch×seq×heads×head_dim layout (batch 1, complex-frequency formulation).",
		(const ki_liger_tensor[]) {
			{"q", {"1", "seq", "q_heads", "head_dim"}, NULL},
			{"k", {"1", "seq", "kv_heads", "head_dim"}, NULL},
			END
		},
		(const ki_liger_tensor[]) {
			{"q_out", {"1", "seq", "q_heads", "head_dim"}, NULL},
			{"k_out", {"1", "seq", "kv_heads", "head_dim"}, NULL},
			END
		},
		rope_derived, bind_rope, NULL
	},
	{
		"swiglu", "liger-swiglu", "swiglu", "SwiGLU MLP",
		"Llama-style SwiGLU MLP: silu(x·Wgate)·(x·Wup) projected back down, over "
		"batch×seq×hidden activations.",
		gated_mlp_inputs, Y_BSH, NULL, bind_gated_mlp, "B:silu"
	},
	{
		"geglu", "liger-geglu", "geglu", "GeGLU MLP",
		"GeGLU MLP (tanh-approximated GELU gate) over batch×seq×hidden activations.",
		gated_mlp_inputs, Y_BSH, NULL, bind_gated_mlp, "bsz:gelu_pytorch_tanh"
	},
	{
		"tiled_swiglu", "liger-tiled-swiglu", "swiglu", "SwiGLU MLP (tiled benchmark)",
		"Llama-style SwiGLU MLP over batch×seq×hidden activations; providers include "
		"seq-sharded tiled executions of the same computation.",
		gated_mlp_inputs, Y_BSH, NULL, bind_gated_mlp, "bsz:silu"
	},
	{
		"tiled_geglu", "liger-tiled-geglu", "geglu", "GeGLU MLP (tiled benchmark)",
		"GeGLU MLP (tanh-approximated GELU gate) over batch×seq×hidden activations; providers "
		"include seq-sharded tiled executions of the same computation.",
		gated_mlp_inputs, Y_BSH, NULL, bind_gated_mlp, "bsz:gelu_pytorch_tanh"
	},
	{
		"megatron_rms_norm", "liger-megatron-rms-norm", "rmsnorm", "RMSNorm, Megatron layout",
		"RMSNorm over the hidden dimension of a seq×batch×hidden activation (Megatron sbh "
		"layout) with a learned hidden-size weight; the benchmark runs bf16.",
		(const ki_liger_tensor[]) {
			{"x", {"seq", "batch", "hidden"}, NULL},
			{"weight", {"hidden"}, NULL},
			END
		},
		(const ki_liger_tensor[]) { {"y", {"seq", "batch", "hidden"}, NULL}, END },
		NULL, bind_megatron_sbh, "hidden"
	},
	{
		"megatron_swiglu", "liger-megatron-swiglu", "swiglu", "SwiGLU activation, Megatron layout",
		"SwiGLU activation over a seq×batch×(2·ffn) tensor: chunk in two on the last "
		"dimension, silu(gate)·up. The projections are outside the timed region; the "
		"benchmark runs bf16 and sweeps the per-rank FFN size.",
		(const ki_liger_tensor[]) { {"y", {"seq", "batch", "ffn_double"}, NULL}, END },
		(const ki_liger_tensor[]) { {"out", {"seq", "batch", "ffn"}, NULL}, END },
		(const ki_liger_derived[]) { {"ffn_double", "ffn * 2"}, {NULL, NULL} },
		bind_megatron_sbh, "ffn"
	},
	{
		"fused_moe", "liger-fused-moe", "moe", "Fused MoE expert MLP",
		"Top-k routed mixture-of-experts silu-gated MLP: tokens×hidden activations dispatched "
		"to experts holding fused gate/up and down projections, weighted by softmaxed router "
		"scores.",
		(const ki_liger_tensor[]) {
			{"x", {"tokens", "hidden"}, NULL},
			{"gate_up_proj", {"experts", "intermediate_double", "hidden"}, NULL},
			{"down_proj", {"experts", "hidden", "intermediate"}, NULL},
			{"top_k_index", {"tokens", "k"}, "int32"},
			{"top_k_weights", {"tokens", "k"}, NULL},
			END
		},
		(const ki_liger_tensor[]) { {"y", {"tokens", "hidden"}, NULL}, END },
		(const ki_liger_derived[]) { {"intermediate_double", "intermediate * 2"}, {NULL, NULL} },
		bind_fused_moe, NULL
	},
	{
		"fused_neighborhood_attention", "liger-fused-neighborhood-attention",
		"neighborhood-attention", "Fused neighborhood attention",
		"Neighborhood attention module over batch×seq×hidden states: q/k/v projections, banded "
		"(kernel_size, dilation) softmax attention, and output projection — the projections "
		"are inside the timed module.",
		(const ki_liger_tensor[]) {
			{"hidden_states", {"batch", "seq", "hidden"}, NULL},
			{"q_weight", {"hidden", "hidden"}, NULL},
			{"k_weight", {"hidden", "hidden"}, NULL},
			{"v_weight", {"hidden", "hidden"}, NULL},
			{"out_weight", {"hidden", "hidden"}, NULL},
			{"q_bias", {"hidden"}, NULL},
			{"k_bias", {"hidden"}, NULL},
			{"v_bias", {"hidden"}, NULL},
			{"out_bias", {"hidden"}, NULL},
			END
		},
		Y_BSH,
		(const ki_liger_derived[]) { {"head_dim", "hidden // heads"}, {NULL, NULL} },
		bind_neighborhood, NULL
	},
	{
		"multi_token_attention", "liger-multi-token-attention", "multi-token-attention",
		"Multi-token attention",
		"Multi-token attention over batch×heads_in×seq×seq scores: causal mask, softmax, then "
		"a K×K convolution to heads_out with bias, re-masked causally.",
		mta_inputs, mta_outputs, NULL, bind_mta, NULL
	},
	{
		"sparse_multi_token_attention", "liger-sparse-multi-token-attention",
		"multi-token-attention", "Sparse multi-token attention",
		"Multi-token attention over batch×heads_in×seq×seq scores: causal mask, sparsemax, "
		"then a K×K convolution to heads_out with bias, re-masked causally.",
		mta_inputs, mta_outputs, NULL, bind_mta, NULL
	},
	{NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};

/* ------------------------------------------------------ lookup */

const ki_liger_kernel *
ki_liger_kernel_at(size_t i)
{
	size_t		n = 0;

	for (const ki_liger_kernel *k = ki_liger_kernels_core; k->csv_name; k++, n++)
		if (n == i)
			return k;
	for (const ki_liger_kernel *k = ki_liger_kernels_losses; k->csv_name; k++, n++)
		if (n == i)
			return k;
	return NULL;
}

const ki_liger_kernel *
ki_liger_kernel_find(const char *csv_name)
{
	for (const ki_liger_kernel *k = ki_liger_kernels_core; k->csv_name; k++)
		if (strcmp(k->csv_name, csv_name) == 0)
			return k;
	for (const ki_liger_kernel *k = ki_liger_kernels_losses; k->csv_name; k++)
		if (strcmp(k->csv_name, csv_name) == 0)
			return k;
	return NULL;
}
