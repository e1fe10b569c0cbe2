/*
 * spec_text.c: the OperationSpec and WorkloadCase manifests, written from
 * tables.  kbench (kernels/workload.c, from its registry) and the Liger
 * mapping (src/liger/liger_build.c, from its kernel tables) both build them
 * here, so an operation and a workload kbench measures are the very ones
 * the Liger import stores (same members, same values, same digests).
 */
#include "ki_json.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/*
 * Slug form: ASCII letters lowered, every run of anything other than
 * [a-z0-9] becomes one "-", no "-" at either end, then cut to 100 bytes
 * (the cut may leave a trailing "-").
 */
char *
ki_kebab(ki_arena *a, const char *s)
{
	size_t		n = strlen(s);
	char	   *out = ki_alloc(a, n + 1);
	size_t		o = 0;
	bool		pending = false;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char) (c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		{
			if (pending && o > 0)
				out[o++] = '-';
			pending = false;
			out[o++] = (char) c;
		}
		else
			pending = true;
	}
	if (o > 100)
		o = 100;
	out[o] = '\0';
	return out;
}

static bool
is_literal_dim(const char *d)
{
	return isdigit((unsigned char) d[0]);
}

/* A tensor's dtype in a workload: the case's float dtype, or the tensor's fixed one. */
static const char *
case_dtype(const ki_spec_tensor *t, const ki_spec_case *c)
{
	return t->dtype == NULL || strcmp(t->dtype, "float") == 0 ? c->dtype : t->dtype;
}

/* The value an axis name has in a case: its variable axes, then its derived ones. */
static bool
bound_value(const ki_spec_case *c, const char *name, double *v)
{
	for (int i = 0; i < c->naxes; i++)
		if (strcmp(c->axis[i], name) == 0)
		{
			*v = c->value[i];
			return true;
		}
	for (int i = 0; i < c->nderived; i++)
		if (strcmp(c->derived[i], name) == 0)
		{
			*v = c->derived_value[i];
			return true;
		}
	return false;
}

static void
write_arguments(ki_jw *w, const char *key, const ki_spec_tensor *ts, int n)
{
	ki_jw_key(w, key);
	ki_jw_arr(w);
	for (int i = 0; i < n; i++)
	{
		const ki_spec_tensor *t = &ts[i];

		ki_jw_obj(w);
		ki_jw_kstr(w, "name", t->name);
		ki_jw_key(w, "tensor");
		ki_jw_obj(w);
		ki_jw_key(w, "shape");
		ki_jw_arr(w);
		for (int d = 0; d < KI_SPEC_MAX_DIMS && t->dims[d]; d++)
		{
			if (is_literal_dim(t->dims[d]))
				ki_jw_num(w, strtod(t->dims[d], NULL));
			else
				ki_jw_str(w, t->dims[d]);
		}
		ki_jw_end_arr(w);
		ki_jw_kstr(w, "dtype", t->dtype ? t->dtype : "float");
		ki_jw_end_obj(w);
		ki_jw_end_obj(w);
	}
	ki_jw_end_arr(w);
}

void
ki_spec_write_operation(ki_jw *w, const ki_spec_op *op)
{
	ki_jw_manifest(w, "OperationSpec", op->name, op->title);
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
		ki_jw_kstr(w, "role", op->axes[i].expression ? "derived" : "variable");
		ki_jw_kstr(w, "type", "integer");
		if (op->axes[i].expression)
			ki_jw_kstr(w, "expression", op->axes[i].expression);
		ki_jw_end_obj(w);
	}
	ki_jw_end_obj(w);
	write_arguments(w, "inputs", op->inputs, op->ninputs);
	write_arguments(w, "outputs", op->outputs, op->noutputs);
	ki_jw_key(w, "semantics");
	ki_jw_obj(w);
	ki_jw_kstr(w, "mutation", "none");
	ki_jw_kstr(w, "determinism", "unspecified");
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
}

/* "axis<value>-..." over the variable axes sorted by name, then the dtype. */
const char *
ki_spec_case_key(ki_arena *a, const ki_spec_case *c)
{
	int			order[KI_SPEC_MAX_AXES];
	ki_buf		buf;

	for (int i = 0; i < c->naxes; i++)
		order[i] = i;
	for (int i = 1; i < c->naxes; i++)
		for (int j = i; j > 0 && strcmp(c->axis[order[j - 1]], c->axis[order[j]]) > 0; j--)
		{
			int			t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	ki_buf_init(&buf, a, 128);
	for (int i = 0; i < c->naxes; i++)
	{
		char		tmp[32];

		ki_buf_puts(&buf, c->axis[order[i]]);
		ki_format_number(c->value[order[i]], tmp);
		ki_buf_puts(&buf, tmp);
		ki_buf_putc(&buf, '-');
	}
	ki_buf_puts(&buf, c->dtype);
	return ki_buf_cstr(&buf);
}

const char *
ki_spec_write_workload(ki_jw *w, ki_arena *a, const ki_spec_op *op, const ki_spec_case *c,
					   const char *operation_digest)
{
	ki_buf		name;
	ki_buf		title;
	double		v;

	for (int i = 0; i < op->ninputs; i++)
		for (int d = 0; d < KI_SPEC_MAX_DIMS && op->inputs[i].dims[d]; d++)
			if (!is_literal_dim(op->inputs[i].dims[d]) && !bound_value(c, op->inputs[i].dims[d], &v))
			{
				ki_buf_init(&name, a, 128);
				ki_buf_puts(&name, "axis ");
				ki_buf_puts(&name, op->inputs[i].dims[d]);
				ki_buf_puts(&name, " of tensor ");
				ki_buf_puts(&name, op->inputs[i].name);
				ki_buf_puts(&name, " is not bound");
				return ki_buf_cstr(&name);
			}

	ki_buf_init(&name, a, 128);
	ki_buf_puts(&name, op->name);
	ki_buf_putc(&name, '-');
	ki_buf_puts(&name, ki_spec_case_key(a, c));
	ki_buf_init(&title, a, 128);
	ki_buf_puts(&title, op->title);
	ki_buf_puts(&title, " \xc2\xb7 ");
	for (int i = 0; i < c->naxes; i++)
	{
		char		tmp[32];

		if (i)
			ki_buf_puts(&title, ", ");
		ki_buf_puts(&title, c->axis[i]);
		ki_buf_putc(&title, '=');
		ki_format_number(c->value[i], tmp);
		ki_buf_puts(&title, tmp);
	}
	ki_buf_puts(&title, " \xc2\xb7 ");
	ki_buf_puts(&title, c->dtype);

	ki_jw_manifest(w, "WorkloadCase", ki_kebab(a, ki_buf_cstr(&name)), ki_buf_cstr(&title));
	ki_jw_spec(w);
	ki_jw_kstr(w, "operationSpecDigest", operation_digest);
	ki_jw_key(w, "axes");
	ki_jw_obj(w);
	for (int i = 0; i < c->naxes; i++)
		ki_jw_knum(w, c->axis[i], c->value[i]);
	ki_jw_end_obj(w);
	ki_jw_key(w, "tensors");
	ki_jw_obj(w);
	for (int i = 0; i < op->ninputs; i++)
	{
		const ki_spec_tensor *t = &op->inputs[i];

		ki_jw_key(w, t->name);
		ki_jw_obj(w);
		ki_jw_key(w, "shape");
		ki_jw_arr(w);
		for (int d = 0; d < KI_SPEC_MAX_DIMS && t->dims[d]; d++)
		{
			if (is_literal_dim(t->dims[d]))
				v = strtod(t->dims[d], NULL);
			else
				bound_value(c, t->dims[d], &v);
			ki_jw_num(w, v);
		}
		ki_jw_end_arr(w);
		ki_jw_kstr(w, "dtype", case_dtype(t, c));
		ki_jw_end_obj(w);
	}
	ki_jw_end_obj(w);
	if (c->nscalars > 0)
	{
		ki_jw_key(w, "scalars");
		ki_jw_obj(w);
		for (int i = 0; i < c->nscalars; i++)
		{
			ki_jw_key(w, c->scalar[i]);
			ki_jw_obj(w);
			ki_jw_kstr(w, "dtype", c->scalar_dtype[i]);
			ki_jw_knum(w, "value", c->scalar_value[i]);
			ki_jw_end_obj(w);
		}
		ki_jw_end_obj(w);
	}
	/* The workload itself asserts no comparator: a harness's tolerances are part of its protocol. */
	ki_jw_key(w, "correctness");
	ki_jw_obj(w);
	ki_jw_kstr(w, "comparator", "not_asserted");
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return NULL;
}
