/*
 * liger_kernels_losses.c: Liger kernels that end in a loss (cross-entropy
 * and its fused / vocab-parallel variants, divergences, distillation,
 * preference and GRPO losses).
 *
 * One table entry per kernel_name.  Each binder reads the config keys that
 * Liger's benchmark_<kernel>.py wrote for that kernel (the CSV spans several
 * eras of the scripts) and refuses any other shape, so an unfamiliar row is
 * skipped with a reason instead of being guessed.
 */
#include "liger_internal.h"

#include <math.h>
#include <string.h>

/* cross_entropy, kl_div, tvd: V swept, config {B, T}; inputs are fp32. */
static bool
bind_tokens_vocab(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		bsz = ki_liger_cfg_int(in->config, "B");
	double		seq = ki_liger_cfg_int(in->config, "T");

	(void) k;
	if (strcmp(in->x_name, "V") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not V", in->x_name);
	if (!bsz || !seq)
		return ki_liger_bind_fail(in, b, "config lacks positive integers B and T");
	ki_liger_bind_axis(b, "tokens", bsz * seq);
	ki_liger_bind_axis(b, "vocab", in->x);
	b->dtype = "fp32";
	return true;
}

/* jsd: either the V sweep ({B, T}) or the BT sweep ({vocab_size, ...}). */
static bool
bind_jsd(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	if (strcmp(in->x_name, "BT") == 0)
	{
		double		vocab = ki_liger_cfg_int(in->config, "vocab_size");

		if (!vocab)
			return ki_liger_bind_fail(in, b, "config lacks a positive integer vocab_size");
		ki_liger_bind_axis(b, "tokens", in->x);
		ki_liger_bind_axis(b, "vocab", vocab);
		b->dtype = "fp32";
		return true;
	}
	if (strcmp(in->x_name, "V") == 0)
		return bind_tokens_vocab(k, in, b);
	return ki_liger_bind_fail(in, b, "x_name '%s' is neither V nor BT", in->x_name);
}

/*
 * Fused linear + loss over BT tokens: config {H, V, dtype}.  fused_linear_jsd
 * carries the script's fixed beta 0.5 as a scalar (k->arg = "beta").
 */
static bool
bind_fused_linear_bt(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		hidden = ki_liger_cfg_int(in->config, "H");
	double		vocab = ki_liger_cfg_int(in->config, "V");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");

	if (strcmp(in->x_name, "BT") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not BT", in->x_name);
	if (!hidden || !vocab || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks positive integers H, V or a torch dtype");
	ki_liger_bind_axis(b, "tokens", in->x);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "vocab", vocab);
	b->dtype = dtype;
	if (k->arg != NULL && strcmp(k->arg, "beta") == 0)
		ki_liger_bind_scalar(b, "beta", 0.5);
	return true;
}

/* Distillation losses: BT swept, {H, V, dtype, bias: false, weights}. */
static bool
bind_distill(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		hidden = ki_liger_cfg_int(in->config, "H");
	double		vocab = ki_liger_cfg_int(in->config, "V");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	double		hard,
				soft;

	(void) k;
	if (strcmp(in->x_name, "BT") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not BT", in->x_name);
	if (!hidden || !vocab || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks positive integers H, V or a torch dtype");
	if (!ki_liger_cfg_bool_is(in->config, "bias", false))
		return ki_liger_bind_fail(in, b, "config bias is not false");
	if (!ki_liger_divisible(hidden, 2))
		return ki_liger_bind_fail(in, b, "H is odd: the student hidden size is H/2");
	if (!ki_liger_cfg_num(in->config, "weight_hard_loss", &hard) ||
		!ki_liger_cfg_num(in->config, "weight_soft_loss", &soft))
		return ki_liger_bind_fail(in, b, "config lacks numeric weight_hard_loss and weight_soft_loss");
	ki_liger_bind_axis(b, "tokens", in->x);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "vocab", vocab);
	b->dtype = dtype;
	ki_liger_bind_scalar(b, "weight_hard_loss", hard);
	ki_liger_bind_scalar(b, "weight_soft_loss", soft);
	return true;
}

/* Batch-swept chunked losses: {T, H, V, dtype}; kto also {bias: true, beta}. */
static bool
bind_preference(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		seq = ki_liger_cfg_int(in->config, "T");
	double		hidden = ki_liger_cfg_int(in->config, "H");
	double		vocab = ki_liger_cfg_int(in->config, "V");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");
	bool		kto = k->arg != NULL && strcmp(k->arg, "kto") == 0;
	double		beta = 0;

	if (strcmp(in->x_name, "B") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not B", in->x_name);
	if (!seq || !hidden || !vocab || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks positive integers T, H, V or a torch dtype");
	if (kto)
	{
		if (!ki_liger_cfg_bool_is(in->config, "bias", true))
			return ki_liger_bind_fail(in, b, "config bias is not true");
		if (!ki_liger_cfg_num(in->config, "beta", &beta))
			return ki_liger_bind_fail(in, b, "config lacks a numeric beta");
	}
	ki_liger_bind_axis(b, "batch", in->x);
	ki_liger_bind_axis(b, "seq", seq);
	ki_liger_bind_axis(b, "hidden", hidden);
	ki_liger_bind_axis(b, "vocab", vocab);
	b->dtype = dtype;
	if (kto)
		ki_liger_bind_scalar(b, "beta", beta);
	return true;
}

/* GRPO on logits: B swept, {T, V, dtype, importance_sampling_level}. */
static bool
bind_grpo(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		seq = ki_liger_cfg_int(in->config, "T");
	double		vocab = ki_liger_cfg_int(in->config, "V");
	const char *dtype = ki_liger_cfg_dtype(in->config, "dtype");

	if (strcmp(in->x_name, "B") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not B", in->x_name);
	if (!seq || !vocab || !dtype)
		return ki_liger_bind_fail(in, b, "config lacks positive integers T, V or a torch dtype");
	if (!ki_liger_cfg_str_is(in->config, "importance_sampling_level", k->arg))
		return ki_liger_bind_fail(in, b, "config importance_sampling_level is not '%s'", k->arg);
	ki_liger_bind_axis(b, "batch", in->x);
	ki_liger_bind_axis(b, "seq", seq);
	ki_liger_bind_axis(b, "vocab", vocab);
	b->dtype = dtype;
	return true;
}

/* Megatron vocab-parallel cross-entropy: V swept, {S, B, TP: 1}, bf16. */
static bool
bind_megatron_ce(const ki_liger_kernel *k, const ki_liger_input *in, ki_liger_binding *b)
{
	double		seq = ki_liger_cfg_int(in->config, "S");
	double		bsz = ki_liger_cfg_int(in->config, "B");
	double		tp;

	(void) k;
	if (strcmp(in->x_name, "V") != 0)
		return ki_liger_bind_fail(in, b, "x_name '%s' is not V", in->x_name);
	if (!seq || !bsz)
		return ki_liger_bind_fail(in, b, "config lacks positive integers S and B");
	if (!ki_liger_cfg_num(in->config, "TP", &tp) || tp != 1)
		return ki_liger_bind_fail(in, b, "config TP is not 1 (a sharded vocab changes the logits shape)");
	ki_liger_bind_axis(b, "seq", seq);
	ki_liger_bind_axis(b, "batch", bsz);
	ki_liger_bind_axis(b, "vocab", in->x);
	b->dtype = "bf16";
	return true;
}

#define LOSS1 (const ki_liger_tensor[]) { {"loss", {"1"}, NULL}, {NULL, {NULL}, NULL} }
#define END {NULL, {NULL}, NULL}

static const ki_liger_tensor distill_inputs[] = {
	{"student_input", {"tokens", "student_hidden"}, NULL},
	{"student_weight", {"vocab", "student_hidden"}, NULL},
	{"teacher_input", {"tokens", "hidden"}, NULL},
	{"teacher_weight", {"vocab", "hidden"}, NULL},
	{"target", {"tokens"}, "int64"},
	END
};
static const ki_liger_derived distill_derived[] = {
	{"student_hidden", "hidden // 2"}, {NULL, NULL}
};

static const ki_liger_tensor preference_inputs[] = {
	{"x", {"batch", "seq", "hidden"}, NULL},
	{"weight", {"vocab", "hidden"}, NULL},
	{"target", {"batch", "seq"}, "int64"},
	END
};

static const ki_liger_tensor grpo_inputs[] = {
	{"logits", {"batch", "seq_next", "vocab"}, NULL},
	{"completion_ids", {"batch", "seq"}, "int64"},
	{"advantages", {"batch"}, NULL},
	END
};
static const ki_liger_derived grpo_derived[] = {
	{"seq_next", "seq + 1"}, {NULL, NULL}
};

const ki_liger_kernel ki_liger_kernels_losses[] = {
	{
		"cross_entropy", "liger-cross-entropy", "cross-entropy", "Cross-entropy loss",
		"Cross-entropy loss over tokens×vocab logits against integer targets; "
		"the benchmark generates fp32 logits.",
		(const ki_liger_tensor[]) {
			{"logits", {"tokens", "vocab"}, NULL},
			{"target", {"tokens"}, "int64"},
			END
		},
		LOSS1, NULL, bind_tokens_vocab, NULL
	},
	{
		"kl_div", "liger-kl-div", "kl-divergence", "KL-divergence loss",
		"KL divergence between tokens×vocab log-probabilities and target probabilities "
		"(batchmean reduction); the benchmark generates fp32 inputs.",
		(const ki_liger_tensor[]) {
			{"log_probs", {"tokens", "vocab"}, NULL},
			{"target_probs", {"tokens", "vocab"}, NULL},
			END
		},
		LOSS1, NULL, bind_tokens_vocab, NULL
	},
	{
		"tvd", "liger-tvd", "tvd", "Total variation distance loss",
		"Total variation distance between two tokens×vocab probability distributions "
		"(batchmean reduction); the benchmark generates fp32 inputs.",
		(const ki_liger_tensor[]) {
			{"p", {"tokens", "vocab"}, NULL},
			{"q", {"tokens", "vocab"}, NULL},
			END
		},
		LOSS1, NULL, bind_tokens_vocab, NULL
	},
	{
		"jsd", "liger-jsd", "jsd", "Jensen-Shannon divergence loss",
		"Generalized JSD between student and teacher log-probabilities over tokens×vocab; "
		"the benchmark generates fp32 log-probs.",
		(const ki_liger_tensor[]) {
			{"student_log_probs", {"tokens", "vocab"}, NULL},
			{"teacher_log_probs", {"tokens", "vocab"}, NULL},
			END
		},
		LOSS1, NULL, bind_jsd, NULL
	},
	{
		"fused_linear_cross_entropy", "liger-fused-linear-cross-entropy", "cross-entropy",
		"Fused linear + cross-entropy",
		"LM-head projection of tokens×hidden activations through a vocab×hidden weight fused "
		"with cross-entropy against integer targets, without materializing the logits.",
		(const ki_liger_tensor[]) {
			{"x", {"tokens", "hidden"}, NULL},
			{"weight", {"vocab", "hidden"}, NULL},
			{"target", {"tokens"}, "int64"},
			END
		},
		LOSS1, NULL, bind_fused_linear_bt, NULL
	},
	{
		"fused_linear_jsd", "liger-fused-linear-jsd", "jsd", "Fused linear + JSD",
		"Student and teacher tokens×hidden activations projected through separate "
		"vocab×hidden heads fused with generalized JSD (beta 0.5, batchmean) between the "
		"resulting log-distributions.",
		(const ki_liger_tensor[]) {
			{"student_input", {"tokens", "hidden"}, NULL},
			{"student_weight", {"vocab", "hidden"}, NULL},
			{"teacher_input", {"tokens", "hidden"}, NULL},
			{"teacher_weight", {"vocab", "hidden"}, NULL},
			END
		},
		LOSS1, NULL, bind_fused_linear_bt, "beta"
	},
	{
		"distill_jsd_loss", "liger-distill-jsd-loss", "jsd", "Chunked distillation JSD loss",
		"Distillation loss combining hard cross-entropy and soft JSD between a hidden/2 "
		"student and a hidden teacher, each projected through its own LM head (equal "
		"hard/soft weights).",
		distill_inputs, LOSS1, distill_derived, bind_distill, NULL
	},
	{
		"distill_cosine_loss", "liger-distill-cosine-loss", "cosine-similarity-loss",
		"Chunked distillation cosine loss",
		"Distillation loss combining hard cross-entropy and a soft cosine-similarity term "
		"between a hidden/2 student and a hidden teacher, each projected through its own LM "
		"head (equal hard/soft weights).",
		distill_inputs, LOSS1, distill_derived, bind_distill, NULL
	},
	{
		"fused_linear_orpo_loss", "liger-fused-linear-orpo-loss", "orpo", "Fused linear + ORPO loss",
		"ORPO preference loss over batch×seq×hidden activations projected through a "
		"vocab×hidden LM head against integer targets, computed chunked without "
		"materializing logits.",
		preference_inputs, LOSS1, NULL, bind_preference, NULL
	},
	{
		"fused_linear_cpo_loss", "liger-fused-linear-cpo-loss", "cpo", "Fused linear + CPO loss",
		"CPO preference loss over batch×seq×hidden activations projected through a "
		"vocab×hidden LM head against integer targets, computed chunked without "
		"materializing logits.",
		preference_inputs, LOSS1, NULL, bind_preference, NULL
	},
	{
		"fused_linear_simpo_loss", "liger-fused-linear-simpo-loss", "simpo", "Fused linear + SimPO loss",
		"SimPO preference loss over batch×seq×hidden activations projected through a "
		"vocab×hidden LM head against integer targets, computed chunked without "
		"materializing logits.",
		preference_inputs, LOSS1, NULL, bind_preference, NULL
	},
	{
		"kto_loss", "liger-fused-linear-kto-loss", "kto", "Fused linear + KTO loss",
		"KTO preference loss: policy and reference batch×seq×hidden activations project "
		"through separate biased vocab×hidden LM heads against integer targets, with "
		"per-sequence boolean preference labels and a precomputed KL term (beta 0.1).",
		(const ki_liger_tensor[]) {
			{"x", {"batch", "seq", "hidden"}, NULL},
			{"ref_x", {"batch", "seq", "hidden"}, NULL},
			{"weight", {"vocab", "hidden"}, NULL},
			{"bias", {"vocab"}, NULL},
			{"ref_weight", {"vocab", "hidden"}, NULL},
			{"ref_bias", {"vocab"}, NULL},
			{"target", {"batch", "seq"}, "int64"},
			{"preference_labels", {"batch"}, "bool"},
			{"kl", {"1"}, NULL},
			END
		},
		LOSS1, NULL, bind_preference, "kto"
	},
	{
		"fused_linear_grpo_loss_token", "liger-grpo-loss-token", "grpo",
		"GRPO loss, token-level importance sampling",
		"GRPO policy loss over batch×(seq+1)×vocab logits with per-sequence advantages and "
		"token-level importance sampling (clip 0.2, no KL reference term).",
		grpo_inputs, LOSS1, grpo_derived, bind_grpo, "token"
	},
	{
		"fused_linear_grpo_loss_sequence", "liger-grpo-loss-sequence", "grpo",
		"GRPO loss, sequence-level importance sampling",
		"GRPO policy loss over batch×(seq+1)×vocab logits with per-sequence advantages and "
		"sequence-level importance sampling (clip 0.2, no KL reference term).",
		grpo_inputs, LOSS1, grpo_derived, bind_grpo, "sequence"
	},
	{
		"megatron_cross_entropy", "liger-megatron-cross-entropy", "cross-entropy",
		"Vocab-parallel cross-entropy, Megatron layout",
		"Vocab-parallel cross-entropy over seq×batch×vocab bf16 logits against integer "
		"targets, returning per-token fp32 losses. Only TP=1 rows import; sharded-vocab rows "
		"would change the local logits shape.",
		(const ki_liger_tensor[]) {
			{"logits", {"seq", "batch", "vocab"}, NULL},
			{"target", {"seq", "batch"}, "int64"},
			END
		},
		(const ki_liger_tensor[]) {
			{"loss", {"seq", "batch"}, "fp32"},
			END
		},
		NULL, bind_megatron_ce, NULL
	},
	{NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
};
