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
write_op_tensor(kb_jw *w, const kb_tensor_def *t)
{
	kb_jw_obj(w);
	kb_jw_kstr(w, "name", t->name);
	kb_jw_key(w, "tensor");
	kb_jw_obj(w);
	kb_jw_key(w, "shape");
	kb_jw_arr(w);
	for (int k = 0; k < 3 && t->shape[k]; k++)
	{
		if (isdigit((unsigned char) t->shape[k][0]))
			kb_jw_int(w, atoll(t->shape[k]));
		else
			kb_jw_str(w, t->shape[k]);
	}
	kb_jw_end_arr(w);
	kb_jw_kstr(w, "dtype", t->dtype);
	kb_jw_end_obj(w);
	kb_jw_end_obj(w);
}

char *
kb_operation_text(const kb_op *op)
{
	kb_jw		w;
	char		name[128];

	snprintf(name, sizeof(name), "liger-%s", op->slug);
	kb_jw_manifest(&w, "OperationSpec", name, op->title);
	kb_jw_kstr(&w, "description", op->description);
	kb_jw_key(&w, "sourceRefs");
	kb_jw_arr(&w);
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "url", op->source_url);
	kb_jw_end_obj(&w);
	kb_jw_end_arr(&w);
	kb_jw_spec(&w);
	kb_jw_kstr(&w, "family", op->family);
	kb_jw_key(&w, "axes");
	kb_jw_obj(&w);
	for (int i = 0; i < op->naxes; i++)
	{
		kb_jw_key(&w, op->axes[i].name);
		kb_jw_obj(&w);
		kb_jw_kstr(&w, "role", op->axes[i].role);
		kb_jw_kstr(&w, "type", "integer");
		if (op->axes[i].expression)
			kb_jw_kstr(&w, "expression", op->axes[i].expression);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "inputs");
	kb_jw_arr(&w);
	for (int i = 0; i < op->ninputs; i++)
		write_op_tensor(&w, &op->inputs[i]);
	kb_jw_end_arr(&w);
	kb_jw_key(&w, "outputs");
	kb_jw_arr(&w);
	for (int i = 0; i < op->noutputs; i++)
		write_op_tensor(&w, &op->outputs[i]);
	kb_jw_end_arr(&w);
	kb_jw_key(&w, "semantics");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "mutation", "none");
	kb_jw_kstr(&w, "determinism", "unspecified");
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	return kb_jw_take(&w);
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
	kb_jw		w;

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

	kb_jw_manifest(&w, "WorkloadCase", name, title);
	kb_jw_spec(&w);
	kb_jw_kstr(&w, "operationSpecDigest", operation_digest);
	kb_jw_key(&w, "axes");
	kb_jw_obj(&w);
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0)
			kb_jw_kint(&w, op->axes[i].name, cs->ax[i]);
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "tensors");
	kb_jw_obj(&w);
	for (int i = 0; i < op->ninputs; i++)
	{
		const kb_tensor_def *t = &op->inputs[i];

		kb_jw_key(&w, t->name);
		kb_jw_obj(&w);
		kb_jw_key(&w, "shape");
		kb_jw_arr(&w);
		for (int k = 0; k < 3 && t->shape[k]; k++)
			kb_jw_int(&w, axis_value(cs, t->shape[k]));
		kb_jw_end_arr(&w);
		kb_jw_kstr(&w, "dtype", strcmp(t->dtype, "float") == 0 ? kb_dtype_name(cs->dtype) : t->dtype);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_obj(&w);
	if (op->nscalars)
	{
		kb_jw_key(&w, "scalars");
		kb_jw_obj(&w);
		for (int i = 0; i < op->nscalars; i++)
		{
			kb_jw_key(&w, op->scalars[i].name);
			kb_jw_obj(&w);
			kb_jw_kstr(&w, "dtype", op->scalars[i].dtype);
			kb_jw_knum(&w, "value", op->scalars[i].value);
			kb_jw_end_obj(&w);
		}
		kb_jw_end_obj(&w);
	}
	/* Like the Liger import: the workload itself asserts no comparator;
	 * kbench's tolerances are part of its protocol and each run's result. */
	kb_jw_key(&w, "correctness");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "comparator", "not_asserted");
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	return kb_jw_take(&w);
}
