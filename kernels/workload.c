/*
 * workload.c: the OperationSpec and WorkloadCase manifests built from the
 * registry tables, exactly as the Liger import builds them (same members,
 * same values, so the same digests).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

/* Write a tensor/shape description as the OperationSpec has it. */
static void
write_op_tensor(ki_jw *w, const kb_tensor_def *t)
{
	ki_jw_obj(w);
	ki_jw_kstr(w, "name", t->name);
	ki_jw_key(w, "tensor");
	ki_jw_obj(w);
	ki_jw_key(w, "shape");
	ki_jw_arr(w);
	for (int k = 0; k < 3 && t->shape[k]; k++)
	{
		if (isdigit((unsigned char) t->shape[k][0]))
			ki_jw_int(w, atoll(t->shape[k]));
		else
			ki_jw_str(w, t->shape[k]);
	}
	ki_jw_end_arr(w);
	ki_jw_kstr(w, "dtype", t->dtype);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
}

char *
kb_operation_text(const kb_op *op)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		name[128];

	snprintf(name, sizeof(name), "liger-%s", op->slug);
	kb_text_open(&t);
	ki_jw_manifest(w, "OperationSpec", name, op->title);
	ki_jw_kstr(w, "description", op->description);
	ki_jw_key(w, "sourceRefs");
	ki_jw_arr(w);
	ki_jw_obj(w);
	ki_jw_kstr(w, "url", op->source_url);
	ki_jw_end_obj(w);
	ki_jw_end_arr(w);
	ki_jw_spec(w);
	ki_jw_kstr(w, "family", op->family);
	ki_jw_key(w, "axes");
	ki_jw_obj(w);
	for (int i = 0; i < op->naxes; i++)
	{
		ki_jw_key(w, op->axes[i].name);
		ki_jw_obj(w);
		ki_jw_kstr(w, "role", op->axes[i].role);
		ki_jw_kstr(w, "type", "integer");
		if (op->axes[i].expression)
			ki_jw_kstr(w, "expression", op->axes[i].expression);
		ki_jw_end_obj(w);
	}
	ki_jw_end_obj(w);
	ki_jw_key(w, "inputs");
	ki_jw_arr(w);
	for (int i = 0; i < op->ninputs; i++)
		write_op_tensor(w, &op->inputs[i]);
	ki_jw_end_arr(w);
	ki_jw_key(w, "outputs");
	ki_jw_arr(w);
	for (int i = 0; i < op->noutputs; i++)
		write_op_tensor(w, &op->outputs[i]);
	ki_jw_end_arr(w);
	ki_jw_key(w, "semantics");
	ki_jw_obj(w);
	ki_jw_kstr(w, "mutation", "none");
	ki_jw_kstr(w, "determinism", "unspecified");
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

/* Value of the axis called name in cs (variable or derived), or -1. */
static int64_t
axis_value(const kb_case *cs, const char *name)
{
	for (int j = 0; j < cs->op->naxes; j++)
		if (strcmp(cs->op->axes[j].name, name) == 0)
			return cs->ax[j];
	return isdigit((unsigned char) name[0]) ? atoll(name) : -1;
}

/* qsort comparator for axis names (the workload name lists them sorted). */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

char *
kb_workload_text(const kb_case *cs, const char *operation_digest)
{
	const kb_op *op = cs->op;
	const char *sorted[KB_MAX_AXES];
	int			nvar = 0;
	char		name[256];
	char		title[256];
	size_t		n;
	kb_text		t;
	ki_jw	   *w = &t.w;

	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0)
			sorted[nvar++] = op->axes[i].name;
	qsort(sorted, nvar, sizeof(sorted[0]), cmp_str);
	n = snprintf(name, sizeof(name), "liger-%s", op->slug);
	for (int i = 0; i < nvar; i++)
		n += snprintf(name + n, n < sizeof(name) ? sizeof(name) - n : 0, "-%s%lld",
					  sorted[i], (long long) axis_value(cs, sorted[i]));
	if (n < sizeof(name))
		snprintf(name + n, sizeof(name) - n, "-%s", kb_dtype_name(cs->dtype));
	n = snprintf(title, sizeof(title), "%s \xc2\xb7 ", op->title);
	for (int i = 0; op->title_axes[i] && i < KB_MAX_AXES; i++)
		n += snprintf(title + n, n < sizeof(title) ? sizeof(title) - n : 0, "%s%s=%lld",
					  i ? ", " : "", op->title_axes[i], (long long) axis_value(cs, op->title_axes[i]));
	if (n < sizeof(title))
		snprintf(title + n, sizeof(title) - n, " \xc2\xb7 %s", kb_dtype_name(cs->dtype));

	kb_text_open(&t);
	ki_jw_manifest(w, "WorkloadCase", name, title);
	ki_jw_spec(w);
	ki_jw_kstr(w, "operationSpecDigest", operation_digest);
	ki_jw_key(w, "axes");
	ki_jw_obj(w);
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0)
			ki_jw_kint(w, op->axes[i].name, cs->ax[i]);
	ki_jw_end_obj(w);
	ki_jw_key(w, "tensors");
	ki_jw_obj(w);
	for (int i = 0; i < op->ninputs; i++)
	{
		const kb_tensor_def *t = &op->inputs[i];

		ki_jw_key(w, t->name);
		ki_jw_obj(w);
		ki_jw_key(w, "shape");
		ki_jw_arr(w);
		for (int k = 0; k < 3 && t->shape[k]; k++)
			ki_jw_int(w, axis_value(cs, t->shape[k]));
		ki_jw_end_arr(w);
		ki_jw_kstr(w, "dtype", strcmp(t->dtype, "float") == 0 ? kb_dtype_name(cs->dtype) : t->dtype);
		ki_jw_end_obj(w);
	}
	ki_jw_end_obj(w);
	if (op->nscalars)
	{
		ki_jw_key(w, "scalars");
		ki_jw_obj(w);
		for (int i = 0; i < op->nscalars; i++)
		{
			ki_jw_key(w, op->scalars[i].name);
			ki_jw_obj(w);
			ki_jw_kstr(w, "dtype", op->scalars[i].dtype);
			ki_jw_knum(w, "value", op->scalars[i].value);
			ki_jw_end_obj(w);
		}
		ki_jw_end_obj(w);
	}
	/* Like the Liger import: the workload itself asserts no comparator;
	 * kbench's tolerances are part of its protocol and each run's result. */
	ki_jw_key(w, "correctness");
	ki_jw_obj(w);
	ki_jw_kstr(w, "comparator", "not_asserted");
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}
