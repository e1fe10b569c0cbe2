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
#include "opdef.h"

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
static const char *const dtype_names[KB_DTYPE_COUNT] = {"fp32", "bf16", "int64", "int32", "bool"};

const kb_op *
kb_find_op(const char *name)
{
	for (int i = 0; name && i < kb_op_count(); i++)
		if (strcmp(kb_op_at(i)->name, name) == 0)
			return kb_op_at(i);
	return NULL;
}

int
kb_op_count(void)
{
	return KB_OP_COUNT + kb_opdef_count();
}

const kb_op *
kb_op_at(int i)
{
	return i >= 0 && i < KB_OP_COUNT ? kb_ops[i] : kb_opdef_at(i - KB_OP_COUNT);
}

/* Levenshtein distance of two short names. */
static int
distance(const char *a, const char *b)
{
	int			la = (int) strlen(a),
				lb = (int) strlen(b);
	int			row[128];

	if (la > 120 || lb > 120)
		return 1000;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++)
	{
		int			prev = row[0];

		row[0] = i;
		for (int j = 1; j <= lb; j++)
		{
			int			cur = row[j];
			int			best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

void
kb_op_suggest(const char *name, char *out, size_t len)
{
	size_t		n = 0;
	int			best = 1000;

	out[0] = '\0';
	for (int i = 0; i < kb_op_count(); i++)
	{
		int			d = distance(name ? name : "", kb_op_at(i)->name);

		if (strstr(kb_op_at(i)->name, name ? name : "") && name && *name)
			d = 1;
		if (d < best)
			best = d;
	}
	for (int i = 0; i < kb_op_count() && best <= 4; i++)
	{
		int			d = distance(name ? name : "", kb_op_at(i)->name);

		if (strstr(kb_op_at(i)->name, name ? name : "") && name && *name)
			d = 1;
		if (d == best)
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "", kb_op_at(i)->name);
	}
}

int
kb_variant_count(const kb_op *op)
{
	int			n = 0;

	while (n < (int) (sizeof(op->variant_notes) / sizeof(op->variant_notes[0])) && op->variant_notes[n])
		n++;
	return n > 0 ? n : 1;
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
	return dtype == KB_FP32 || dtype == KB_I32 ? 4 : dtype == KB_BF16 ? 2 : dtype == KB_BOOL ? 1 : 8;
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
