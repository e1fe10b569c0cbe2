/*
 * registry.c: the operation registry: the operations (each one's entry sits
 * at the bottom of its own file, kernels/ops/<op>.c, beside its C
 * reference), and the names of modes, dtypes and statuses.
 *
 * Requests are parsed against it in parse.c; the OperationSpec and
 * WorkloadCase manifests are built from it in workload.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

extern const kb_op kb_op_layer_norm;
extern const kb_op kb_op_megatron_cross_entropy;
extern const kb_op kb_op_distill_jsd_loss;
extern const kb_op kb_op_jsd;

/* Indexed by KB_OP_*. */
const kb_op *const kb_ops[KB_OP_COUNT] = {
	&kb_op_layer_norm,
	&kb_op_megatron_cross_entropy,
	&kb_op_distill_jsd_loss,
	&kb_op_jsd,
};

static const char *const mode_names[KB_MODE_COUNT] = {"forward", "backward", "full"};
static const char *const dtype_names[KB_DTYPE_COUNT] = {"fp32", "bf16", "int64"};

const kb_op *
kb_find_op(const char *name)
{
	for (int i = 0; name && i < KB_OP_COUNT; i++)
		if (strcmp(kb_ops[i]->name, name) == 0)
			return kb_ops[i];
	return NULL;
}

int
kb_variant_count(const kb_op *op)
{
	return op->nvariants > 0 ? op->nvariants : 1;
}

const char *
kb_mode_name(int mode)
{
	return mode >= 0 && mode < KB_MODE_COUNT ? mode_names[mode] : "?";
}

int
kb_mode_from_name(const char *s)
{
	for (int i = 0; s && i < KB_MODE_COUNT; i++)
		if (strcmp(mode_names[i], s) == 0)
			return i;
	return -1;
}

const char *
kb_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < KB_DTYPE_COUNT ? dtype_names[dtype] : "?";
}

int
kb_dtype_from_name(const char *s)
{
	for (int i = 0; s && i < KB_DTYPE_COUNT; i++)
		if (strcmp(dtype_names[i], s) == 0)
			return i;
	return -1;
}

size_t
kb_dtype_size(int dtype)
{
	return dtype == KB_FP32 ? 4 : dtype == KB_BF16 ? 2 : 8;
}

const char *
kb_status_name(kb_status s)
{
	switch (s)
	{
		case KB_PASSED:
			return "passed";
		case KB_INCORRECT_NUMERICAL:
			return "incorrect_numerical";
		case KB_RUNTIME_ERROR:
			return "runtime_error";
		case KB_TIMEOUT:
			return "timeout";
		case KB_RESOURCE_EXCEEDED:
			return "resource_exceeded";
		case KB_CANCELED:
			return "canceled";
		case KB_INVALID_REQUEST:
			return "invalid_request";
		case KB_DEVICE_UNAVAILABLE:
			return "device_unavailable";
	}
	return "unknown";
}

/* snprintf into err, ignoring truncation. */
void
kb_seterr(char *err, size_t errlen, const char *fmt,...)
{
	va_list		ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void
kb_free(void *p)
{
	free(p);
}

void *
kb_xmalloc(size_t n)
{
	return malloc(n ? n : 1);
}
