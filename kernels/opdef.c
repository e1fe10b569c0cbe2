/*
 * opdef.c: operations defined as data (kernels/ops/defs/NAME.json, docs/OPERATIONS.md).
 *
 * Each definition is embedded into libkbench at build time (build/opdefs_data.c,
 * written by tools/embed_opdefs.sh) and parsed here, on first use, with the
 * core's strict JSON parser into a kb_op like the four C operations': the
 * registry (registry.c) finds it by name, parse.c validates requests against
 * its axes, workload.c derives its OperationSpec and WorkloadCase from it,
 * cost.c evaluates its cost texts.  What differs from a C operation: no C
 * reference and no kbench implementation; the float64 reference is python
 * (kernels/python/kbench_reference.py), run in the python implementation's
 * supervised child, which compares every returned output and gradient under
 * the definition's tolerance and reports the comparison (kb_opdef_check).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impl_int.h"
#include "kb_int.h"
#include "opdef.h"

#define LIGER_SCRIPTS "https://github.com/linkedin/Liger-Kernel/blob/2120862ba532c9449e72d603ba6324310ae756e7/benchmark/scripts/benchmark_"

extern const char *const kb_opdef_texts[];
extern const char *const kb_opdef_files[];
extern const int kb_opdef_ntexts;

static kb_op data_ops[KB_OPDEF_MAX];
static kb_opdef defs[KB_OPDEF_MAX];
static int	ndata;
static int	nbuiltin;		/* ndata once the built-in definitions are loaded */
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static ki_arena arena;			/* holds every string of the definitions, for the process's life */

static const char *
dup_str(const ki_value *v)
{
	return v && v->type == KI_STRING ? ki_strndup(&arena, v->u.str.ptr, v->u.str.len) : NULL;
}

static const char *
get_str(const ki_value *o, const char *key)
{
	return dup_str(ki_get(o, key));
}

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return false; } while (0)

static int
tensor_index(const kb_opdef *d, const char *name)
{
	for (int i = 0; name && i < d->ntensors; i++)
		if (strcmp(d->tensors[i].name, name) == 0)
			return i;
	return -1;
}

static int
axis_of(const kb_op *op, const char *name)
{
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].name, name) == 0)
			return i;
	return -1;
}

static bool
derive(const kb_op *op, int64_t *ax, char *err, size_t errlen)
{
	const kb_opdef *d = op->def;
	const char *names[KB_MAX_AXES];
	double		vals[KB_MAX_AXES];

	for (int i = 0; i < op->naxes; i++)
	{
		names[i] = op->axes[i].name;
		vals[i] = (double) ax[i];
		if (strcmp(op->axes[i].role, "variable") == 0 &&
			(ax[i] < d->axis_min[i] || (d->axis_max[i] > 0 && ax[i] > d->axis_max[i])))
		{
			kb_seterr(err, errlen, "axis '%s' of %s must be in [%lld, %lld], got %lld", op->axes[i].name, op->name,
					  (long long) d->axis_min[i], (long long) d->axis_max[i], (long long) ax[i]);
			return false;
		}
		if (strcmp(op->axes[i].role, "variable") == 0 && d->axis_multiple[i] > 1 && ax[i] % d->axis_multiple[i] != 0)
		{
			kb_seterr(err, errlen, "axis '%s' of %s must be a multiple of %lld, got %lld", op->axes[i].name, op->name,
					  (long long) d->axis_multiple[i], (long long) ax[i]);
			return false;
		}
	}
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "derived") == 0)
		{
			double		v;

			if (!ki_cost_eval(op->axes[i].expression, names, vals, i, &v, err, errlen))
				return false;
			if (!(v >= 1) || v != floor(v) || v > 9.0e15)
			{
				kb_seterr(err, errlen, "derived axis '%s' = %s is %g, not a positive integer", op->axes[i].name,
						  op->axes[i].expression, v);
				return false;
			}
			ax[i] = (int64_t) v;
			vals[i] = v;
		}
	return true;
}

bool
kb_opdef_derive(const kb_op *op, int64_t *ax, char *err, size_t errlen)
{
	return derive(op, ax, err, errlen);
}

/* The tensors of a call: every tensor of the definition, in its order, rows = all dims but the last. */
void
kb_opdef_plan(const kb_op *op, kb_call *c, kb_plan *p)
{
	const kb_opdef *d = op->def;

	c->ntensors = d->ntensors;
	for (int i = 0; i < d->ntensors; i++)
	{
		const kb_opdef_tensor *t = &d->tensors[i];
		int64_t		rows = 1,
					cols = 1;

		for (int k = 0; k < t->ndims; k++)
		{
			int64_t		n = t->dim_axis[k] >= 0 ? c->ax[t->dim_axis[k]] : t->dim_literal[k];

			if (k == t->ndims - 1)
				cols = n;
			else
				rows *= n;
		}
		c->rows[i] = rows;
		c->cols[i] = cols;
		c->tdtype[i] = t->dtype >= 0 ? t->dtype : c->dtype;
		p->name[i] = t->name;
		p->init[i] = t->init;
		p->scale[i] = t->scale;
		p->modulo[i] = t->high_axis >= 0 ? c->ax[t->high_axis] : t->modulo;
		p->is_output[i] = 0;
		for (int k = 0; k < d->nreturns[c->mode]; k++)
			if (d->returns[c->mode][k] == i)
				p->is_output[i] = 1;
	}
}

/* ------------------------------------------------------------ parsing */

static bool
parse_shape(kb_op *op, kb_opdef_tensor *t, const ki_value *shape, const char *where, char *err, size_t errlen)
{
	if (!shape || shape->type != KI_ARRAY || shape->u.arr.count < 1 || shape->u.arr.count > KI_SPEC_MAX_DIMS)
		FAIL("%s.shape must be an array of 1 to %d axis names or positive integers", where, KI_SPEC_MAX_DIMS);
	t->ndims = (int) shape->u.arr.count;
	for (int k = 0; k < t->ndims; k++)
	{
		const ki_value *e = shape->u.arr.items[k];

		if (e->type == KI_NUMBER)
		{
			char		lit[32];

			if (!(e->u.num >= 1) || e->u.num != floor(e->u.num) || e->u.num > 1e9)
				FAIL("%s.shape[%d] is %g, not a positive integer", where, k, e->u.num);
			t->dim_axis[k] = -1;
			t->dim_literal[k] = (int64_t) e->u.num;
			snprintf(lit, sizeof(lit), "%lld", (long long) e->u.num);
			t->dims[k] = ki_strndup(&arena, lit, strlen(lit));
		}
		else if (e->type == KI_STRING)
		{
			t->dims[k] = dup_str(e);
			t->dim_axis[k] = axis_of(op, t->dims[k]);
			if (t->dim_axis[k] < 0)
				FAIL("%s.shape[%d] names the unknown axis '%s'", where, k, t->dims[k]);
		}
		else
			FAIL("%s.shape[%d] is neither an axis name nor an integer", where, k);
	}
	return true;
}

static bool
parse_fill(const kb_op *op, kb_opdef_tensor *t, const ki_value *f, const char *where, char *err, size_t errlen)
{
	const ki_value *dist = f ? ki_get(f, "dist") : NULL;
	const ki_value *scale = f ? ki_get(f, "scale") : NULL;
	const ki_value *high = f ? ki_get(f, "high") : NULL;

	t->scale = scale && scale->type == KI_NUMBER ? scale->u.num : 1.0;
	t->high_axis = -1;
	if (!dist || dist->type != KI_STRING)
		FAIL("%s.fill.dist must be one of uniform, log_softmax, softmax, index", where);
	if (dist->u.str.len == 7 && memcmp(dist->u.str.ptr, "uniform", 7) == 0)
		t->init = KB_INIT_UNIFORM;
	else if (dist->u.str.len == 11 && memcmp(dist->u.str.ptr, "log_softmax", 11) == 0)
		t->init = KB_INIT_LOGSOFTMAX;
	else if (dist->u.str.len == 7 && memcmp(dist->u.str.ptr, "softmax", 7) == 0)
		t->init = KB_INIT_SOFTMAX;
	else if (dist->u.str.len == 5 && memcmp(dist->u.str.ptr, "index", 5) == 0)
	{
		t->init = KB_INIT_TARGETS;
		if (high && high->type == KI_STRING)
		{
			/* an axis: cross_entropy's targets and embedding's ids in [0, vocab) */
			const char *name = dup_str(high);

			t->high_axis = axis_of(op, name);
			if (t->high_axis < 0)
				FAIL("%s.fill.high names the unknown axis '%s'", where, name);
			t->modulo = 1;
			return true;
		}
		if (!high || high->type != KI_NUMBER || !(high->u.num >= 1))
			FAIL("%s.fill.high must be a positive integer or an axis name (indices are drawn in [0, high))", where);
		t->modulo = (int64_t) high->u.num;
	}
	else
		FAIL("%s.fill.dist '%.*s' is not one of uniform, log_softmax, softmax, index", where, (int) dist->u.str.len,
			 dist->u.str.ptr);
	return true;
}

static bool
parse_def(const char *file, const char *text, kb_op *op, kb_opdef *d, char *err, size_t errlen)
{
	ki_errors	errs;
	ki_value   *v;
	const ki_value *axes,
			   *tensors,
			   *modes,
			   *cost,
			   *scalars,
			   *dtypes,
			   *tol,
			   *ref,
			   *title_axes;
	static const char *const mode_keys[KB_MODE_COUNT] = {"forward", "backward", "full"};
	char		where[64];
	int			nsig_in = 0,
				nsig_out = 0;

	memset(op, 0, sizeof(*op));
	memset(d, 0, sizeof(*d));
	ki_errors_init(&errs, &arena);
	v = ki_parse(&arena, text, strlen(text), &errs);
	if (!v)
		FAIL("%s is not JSON: %s%s%s", file, errs.count ? errs.items[0].message : "a parse error",
			 errs.count && errs.items[0].path[0] ? " at " : "", errs.count ? errs.items[0].path : "");
	if (v->type != KI_OBJECT)
		FAIL("%s is not a JSON object", file);
	op->def = d;
	d->file = file;
	op->name = get_str(v, "name");
	op->slug = get_str(v, "slug");
	op->title = get_str(v, "title");
	op->family = get_str(v, "family");
	op->description = get_str(v, "description");
	if (!op->name || !op->slug || !op->title || !op->family || !op->description)
		FAIL("%s: name, slug, title, family and description must be strings", file);
	d->liger_kernel = get_str(v, "liger_kernel");
	op->source_url = get_str(v, "source_url");
	if (!op->source_url && d->liger_kernel)
	{
		char		url[512];

		snprintf(url, sizeof(url), "%s%s.py", LIGER_SCRIPTS, d->liger_kernel);
		op->source_url = ki_strndup(&arena, url, strlen(url));
	}
	if (!op->source_url)
		FAIL("%s: source_url (or liger_kernel) must be a string", file);
	op->c_path = op->cu_path = op->cu_symbol = NULL;

	axes = ki_get(v, "axes");
	if (!axes || axes->type != KI_ARRAY || axes->u.arr.count < 1 || axes->u.arr.count > KB_MAX_AXES)
		FAIL("%s: axes must be an array of 1 to %d axes", file, KB_MAX_AXES);
	/* variable axes first, then derived ones (the order kb_op keeps) */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < axes->u.arr.count; i++)
		{
			const ki_value *a = axes->u.arr.items[i];
			const char *name = get_str(a, "name");
			const char *expr = get_str(a, "derived");
			const ki_value *mn = ki_get(a, "min"),
					   *mx = ki_get(a, "max");

			if (!name)
				FAIL("%s: axes[%zu].name must be a string", file, i);
			if ((expr != NULL) != (pass == 1))
				continue;
			if (axis_of(op, name) >= 0)
				FAIL("%s: axes[%zu].name '%s' is given twice", file, i, name);
			op->axes[op->naxes] = (kb_axis_def) {name, expr ? "derived" : "variable", expr};
			{
				const ki_value *inop = ki_get(a, "in_operation");

				if (inop && inop->type != KI_TRUE && inop->type != KI_FALSE)
					FAIL("%s: axes[%zu].in_operation must be true or false", file, i);
				if (inop && inop->type == KI_FALSE)
				{
					if (expr)
						FAIL("%s: axes[%zu].in_operation: a derived axis is always the OperationSpec's", file, i);
					d->case_only[op->naxes] = true;
				}
			}
			d->axis_min[op->naxes] = mn && mn->type == KI_NUMBER ? (int64_t) mn->u.num : 1;
			d->axis_max[op->naxes] = mx && mx->type == KI_NUMBER ? (int64_t) mx->u.num : 0;
			{
				/* "multiple_of": a request's value must be a multiple of it (a preference loss's
				 * batch holds chosen and rejected halves: 2) */
				const ki_value *mul = ki_get(a, "multiple_of");

				if (mul && (mul->type != KI_NUMBER || mul->u.num < 1 || mul->u.num != floor(mul->u.num)))
					FAIL("%s: axes[%zu].multiple_of must be a positive integer", file, i);
				if (mul && expr)
					FAIL("%s: axes[%zu].multiple_of: a derived axis is computed, not requested", file, i);
				d->axis_multiple[op->naxes] = mul ? (int64_t) mul->u.num : 1;
			}
			op->naxes++;
		}
	/* a derived axis may use only the axes before it: a cycle or a forward reference fails here */
	{
		int64_t		ax[KB_MAX_AXES];

		for (int i = 0; i < op->naxes; i++)
			ax[i] = 2;
		for (int i = 0; i < op->naxes; i++)
			if (op->axes[i].expression)
			{
				const char *names[KB_MAX_AXES];
				double		vals[KB_MAX_AXES],
							out;
				char		why[200];

				for (int k = 0; k < i; k++)
				{
					names[k] = op->axes[k].name;
					vals[k] = (double) ax[k];
				}
				if (!ki_cost_eval(op->axes[i].expression, names, vals, i, &out, why, sizeof(why)))
					FAIL("%s: axes '%s'.derived: %s (a derived axis may use the variable axes and the derived axes before it)",
						 file, op->axes[i].name, why);
			}
	}
	title_axes = ki_get(v, "title_axes");
	for (size_t i = 0; title_axes && title_axes->type == KI_ARRAY && i < title_axes->u.arr.count && i < KB_MAX_AXES - 1; i++)
	{
		op->title_axes[i] = dup_str(title_axes->u.arr.items[i]);
		if (!op->title_axes[i] || axis_of(op, op->title_axes[i]) < 0)
			FAIL("%s: title_axes[%zu] is not an axis", file, i);
	}

	dtypes = ki_get(v, "dtypes");
	if (!dtypes || dtypes->type != KI_ARRAY || dtypes->u.arr.count < 1 || dtypes->u.arr.count > KB_DTYPE_COUNT)
		FAIL("%s: dtypes must be a non-empty array of fp32, bf16", file);
	for (size_t i = 0; i < dtypes->u.arr.count; i++)
	{
		const char *s = dup_str(dtypes->u.arr.items[i]);
		int			dt = s ? kb_dtype_from_name(s) : -1;

		if (dt != KB_FP32 && dt != KB_BF16)
			FAIL("%s: dtypes[%zu] is not fp32 or bf16 (the float dtypes kbench fills)", file, i);
		op->dtypes[op->ndtypes++] = dt;
	}

	scalars = ki_get(v, "scalars");
	for (size_t i = 0; scalars && scalars->type == KI_ARRAY && i < scalars->u.arr.count; i++)
	{
		const ki_value *s = scalars->u.arr.items[i];
		const ki_value *val = ki_get(s, "value");

		if (i >= 4 || !get_str(s, "name") || !get_str(s, "dtype") || !val || val->type != KI_NUMBER)
			FAIL("%s: scalars[%zu] needs a name, a dtype and a numeric value (at most 4 scalars)", file, i);
		op->scalars[op->nscalars++] = (kb_scalar_def) {get_str(s, "name"), get_str(s, "dtype"), val->u.num};
	}

	tensors = ki_get(v, "tensors");
	if (!tensors || tensors->type != KI_ARRAY || tensors->u.arr.count < 1 || tensors->u.arr.count > KB_MAX_TENSORS)
		FAIL("%s: tensors must be an array of 1 to %d tensors", file, KB_MAX_TENSORS);
	for (size_t i = 0; i < tensors->u.arr.count; i++)
	{
		const ki_value *t = tensors->u.arr.items[i];
		kb_opdef_tensor *dt = &d->tensors[d->ntensors];
		const char *role;
		const char *dts;

		snprintf(where, sizeof(where), "tensors[%zu]", i);
		dt->name = get_str(t, "name");
		role = get_str(t, "role");
		if (!dt->name || !role)
			FAIL("%s: %s needs a name and a role", file, where);
		if (tensor_index(d, dt->name) >= 0)
			FAIL("%s: %s.name '%s' is given twice", file, where, dt->name);
		dt->role = strcmp(role, "input") == 0 ? KB_TROLE_INPUT : strcmp(role, "output") == 0 ? KB_TROLE_OUTPUT :
			strcmp(role, "upstream") == 0 ? KB_TROLE_UPSTREAM : strcmp(role, "gradient") == 0 ? KB_TROLE_GRADIENT :
			strcmp(role, "saved") == 0 ? KB_TROLE_SAVED : -1;
		if (dt->role < 0)
			FAIL("%s: %s.role '%s' is not one of input, output, saved, upstream, gradient", file, where, role);
		if (!parse_shape(op, dt, ki_get(t, "shape"), where, err, errlen))
		{
			char		tmp[400];

			snprintf(tmp, sizeof(tmp), "%s: %s", file, err);
			snprintf(err, errlen, "%s", tmp);
			return false;
		}
		dts = get_str(t, "dtype");
		dt->dtype = !dts || strcmp(dts, "float") == 0 ? -1 : kb_dtype_from_name(dts);
		if (dts && strcmp(dts, "float") != 0 && dt->dtype < 0)
			FAIL("%s: %s.dtype '%s' is not float, fp32, bf16, int64, int32 or bool", file, where, dts);
		dt->of = get_str(t, "of");
		dt->grad = get_str(t, "grad");
		dt->upstream = get_str(t, "upstream");
		if (dt->role == KB_TROLE_INPUT || dt->role == KB_TROLE_UPSTREAM)
		{
			char		tmp[400];

			if (!parse_fill(op, dt, ki_get(t, "fill"), where, err, errlen))
			{
				snprintf(tmp, sizeof(tmp), "%s: %s", file, err);
				snprintf(err, errlen, "%s", tmp);
				return false;
			}
		}
		else
		{
			dt->init = KB_INIT_NONE;
			dt->high_axis = -1;
		}
		for (int k = 0; k < dt->ndims; k++)
			dt->sig.dims[k] = dt->dims[k];
		dt->sig.name = dt->name;
		dt->sig.dtype = dts ? dts : "float";
		if (dt->role == KB_TROLE_INPUT)
		{
			if (nsig_in >= KB_MAX_OP_INPUTS)
				FAIL("%s: at most %d input tensors", file, KB_MAX_OP_INPUTS);
			op->inputs[nsig_in++] = dt->sig;
		}
		else if (dt->role == KB_TROLE_OUTPUT)
		{
			if (nsig_out >= 4)
				FAIL("%s: at most 4 output tensors", file);
			op->outputs[nsig_out++] = dt->sig;
		}
		d->ntensors++;
	}
	op->ninputs = nsig_in;
	op->noutputs = nsig_out;
	/* the links between tensors must name tensors of the right roles */
	for (int i = 0; i < d->ntensors; i++)
	{
		const kb_opdef_tensor *t = &d->tensors[i];
		int			of = tensor_index(d, t->of);

		if ((t->role == KB_TROLE_UPSTREAM || t->role == KB_TROLE_GRADIENT) &&
			(of < 0 || d->tensors[of].role != (t->role == KB_TROLE_UPSTREAM ? KB_TROLE_OUTPUT : KB_TROLE_INPUT)))
			FAIL("%s: tensors '%s'.of must name %s tensor", file, t->name,
				 t->role == KB_TROLE_UPSTREAM ? "an output" : "an input");
	}

	modes = ki_get(v, "modes");
	cost = ki_get(v, "cost");
	if (!modes || modes->type != KI_OBJECT)
		FAIL("%s: modes must be an object of forward, backward, full", file);
	if (!cost || cost->type != KI_OBJECT || !get_str(cost, "compute"))
		FAIL("%s: cost must be an object with compute and a bytes and flops text per mode", file);
	op->cost_compute = get_str(cost, "compute");
	for (int m = 0; m < KB_MODE_COUNT; m++)
	{
		const ki_value *mo = ki_get(modes, mode_keys[m]);
		const ki_value *co = ki_get(cost, mode_keys[m]);
		const ki_value *ret;

		/* every pass has a cost (SQL's table has all three), also one the operation does not time */
		if (!co || !get_str(co, "bytes") || !get_str(co, "flops"))
			FAIL("%s: cost.%s needs bytes and flops texts", file, mode_keys[m]);
		op->cost_bytes[m] = get_str(co, "bytes");
		op->cost_flops[m] = get_str(co, "flops");
		op->cost_note[m] = get_str(co, "note") ? get_str(co, "note") : "";
		{
			const char *names[KB_MAX_AXES + 1];
			double		vals[KB_MAX_AXES + 1],
						out;
			char		why[200];

			for (int k = 0; k < op->naxes; k++)
			{
				names[k] = op->axes[k].name;
				vals[k] = 2;
			}
			names[op->naxes] = "dtype_bytes";
			vals[op->naxes] = 2;
			if (!ki_cost_eval(op->cost_bytes[m], names, vals, op->naxes + 1, &out, why, sizeof(why)) ||
				!ki_cost_eval(op->cost_flops[m], names, vals, op->naxes + 1, &out, why, sizeof(why)))
				FAIL("%s: cost.%s: %s", file, mode_keys[m], why);
		}
		if (!mo)
			continue;
		op->modes[m] = true;
		op->timed[m] = get_str(mo, "timed") ? get_str(mo, "timed") : mode_keys[m];
		ret = ki_get(mo, "returns");
		if (!ret || ret->type != KI_ARRAY || ret->u.arr.count < 1 || ret->u.arr.count > KB_MAX_TENSORS)
			FAIL("%s: modes.%s.returns must name the tensors the mode returns", file, mode_keys[m]);
		for (size_t k = 0; k < ret->u.arr.count; k++)
		{
			const char *n = dup_str(ret->u.arr.items[k]);
			int			ti = tensor_index(d, n);

			if (ti < 0 || d->tensors[ti].role == KB_TROLE_INPUT || d->tensors[ti].role == KB_TROLE_UPSTREAM)
				FAIL("%s: modes.%s.returns[%zu] '%s' is not an output, saved or gradient tensor", file, mode_keys[m],
					 k, n ? n : "?");
			if (d->tensors[ti].role == KB_TROLE_GRADIENT && m == KB_FORWARD)
				FAIL("%s: modes.forward.returns[%zu] '%s' is a gradient", file, k, n);
			d->returns[m][d->nreturns[m]++] = ti;
		}
	}

	tol = ki_get(v, "tolerance");
	for (int i = 0; i < op->ndtypes; i++)
	{
		const ki_value *t = tol ? ki_get(tol, kb_dtype_name(op->dtypes[i])) : NULL;
		const ki_value *r = t ? ki_get(t, "rtol") : NULL,
				   *a = t ? ki_get(t, "atol") : NULL;

		if (!r || r->type != KI_NUMBER || !a || a->type != KI_NUMBER || !(r->u.num >= 0) || !(a->u.num >= 0))
			FAIL("%s: tolerance.%s needs non-negative rtol and atol", file, kb_dtype_name(op->dtypes[i]));
		d->rtol[op->dtypes[i]] = r->u.num;
		d->atol[op->dtypes[i]] = a->u.num;
	}
	ref = ki_get(v, "reference");
	d->reference = ref ? get_str(ref, "python") : NULL;
	d->reference_file = ref ? get_str(ref, "file") : NULL;
	if (!d->reference)
		FAIL("%s: reference.python must name the float64 reference (a function of kernels/python/kbench_reference.py, "
			 "or of reference.file)", file);
	return true;
}

static void
load_all(void)
{
	ki_arena_init_malloc(&arena);
	for (int i = 0; i < kb_opdef_ntexts && ndata < KB_OPDEF_MAX; i++)
	{
		kb_op	   *op = &data_ops[ndata];
		char		err[400];

		if (!parse_def(kb_opdef_files[i], kb_opdef_texts[i], op, &defs[ndata], err, sizeof(err)))
		{
			/* a built-in definition that does not parse is a build error: tests catch it; skip it here */
			if (!load_error[0])
				snprintf(load_error, sizeof(load_error), "%s", err);
			continue;
		}
		op->id = KB_OP_COUNT + ndata;
		op->check = kb_opdef_check;
		ndata++;
	}
	nbuiltin = ndata;
}

int
kb_opdef_count(void)
{
	pthread_once(&once, load_all);
	return ndata;
}

const kb_op *
kb_opdef_at(int i)
{
	pthread_once(&once, load_all);
	return i >= 0 && i < ndata ? &data_ops[i] : NULL;
}

const char *
kb_opdef_load_error(void)
{
	pthread_once(&once, load_all);
	return load_error[0] ? load_error : NULL;
}

const char *
kb_builtin_ops_error(void)
{
	return kb_opdef_load_error();
}

/* ------------------------------------------------------------ a user's definition */

#define OP_FILE_MAX (1 << 20)		/* a definition, and its reference file, at most 1 MiB each */

/* Why n bytes read from a file cannot be a definition or a reference: NULL when they can. */
static const char *
not_text(const void *bytes, size_t n)
{
	return n > OP_FILE_MAX ? "over 1 MiB" : memchr(bytes, '\0', n) ? "not text (it holds a NUL byte)" : NULL;
}

/* The whole file, NUL-terminated, in malloc'd memory; NULL with the reason in err. */
static char *
read_small(const char *path, const char *what, char *err, size_t errlen)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf;
	size_t		n;

	if (!f)
	{
		snprintf(err, errlen, "%s '%s' cannot be read: %s", what, path, strerror(errno));
		return NULL;
	}
	buf = malloc(OP_FILE_MAX + 1);
	n = buf ? fread(buf, 1, OP_FILE_MAX + 1, f) : 0;
	fclose(f);
	if (!buf || not_text(buf, n))
	{
		snprintf(err, errlen, "%s '%s' is %s", what, path, !buf ? "too large for memory" : not_text(buf, n));
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * reference.file of a definition's text, resolved against the definition's
 * path (malloc'd), or NULL when it names none; false when the text is not
 * a definition (kb_add_op_def then says why).
 */
static bool
reference_path(const char *path, const char *text, char **out)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *v;
	const ki_value *ref,
			   *file;
	const char *slash = strrchr(path, '/');

	*out = NULL;
	ki_arena_init_malloc(&a);
	ki_errors_init(&errs, &a);
	v = ki_parse(&a, text, strlen(text), &errs);
	ref = v && v->type == KI_OBJECT ? ki_get(v, "reference") : NULL;
	file = ref && ref->type == KI_OBJECT ? ki_get(ref, "file") : NULL;
	if (file && file->type == KI_STRING)
	{
		size_t		n = file->u.str.len,
					dn = file->u.str.ptr[0] == '/' || !slash ? 0 : (size_t) (slash - path) + 1;

		*out = malloc(dn + n + 1);
		if (*out)
		{
			memcpy(*out, path, dn);
			memcpy(*out + dn, file->u.str.ptr, n);
			(*out)[dn + n] = '\0';
		}
	}
	ki_arena_reset(&a);
	return v != NULL;
}

/*
 * A user's definition: parsed as a built-in one, and its name must be new.
 * Its strings stay in the arena whatever the outcome.
 */
static bool
parse_user(const char *file, const char *text, kb_op *op, kb_opdef *d, char *err, size_t errlen)
{
	size_t		n;

	if (!parse_def(file, text, op, d, err, errlen))
		return false;
	n = strspn(op->name, "abcdefghijklmnopqrstuvwxyz0123456789_");
	if (n == 0 || op->name[n] != '\0' || n > 63)
		FAIL("%s: name '%s' must be 1 to 63 of a-z, 0-9 and _", file, op->name);
	if (kb_find_op(op->name))
		FAIL("%s: name '%s' is already an operation of kbench (a definition adds an operation, "
			 "it does not replace one)", file, op->name);
	return true;
}

/* Whether text is a definition that add_def would take (nothing is added), judged before any file it names is read. */
static bool
validate_user(const char *file, const char *text, char *err, size_t errlen)
{
	kb_op		op;
	kb_opdef	d;

	pthread_once(&once, load_all);
	return parse_user(file, text, &op, &d, err, errlen);
}

/*
 * Add a definition (origin: its file, as messages name it) with its
 * reference's source (reference.file's bytes, read by the caller from
 * ref_path; NULL when the definition names kbench_reference.py's function).
 */
static int
add_def(const char *origin, const char *text, const char *ref_source, const char *ref_path, char *err,
		size_t errlen)
{
	kb_op	   *op;
	kb_opdef   *d;
	char	   *file;
	bool		ok;

	pthread_once(&once, load_all);
	if (ndata >= KB_OPDEF_MAX)
	{
		snprintf(err, errlen, "%s: kbench holds at most %d operations defined as data", origin, KB_OPDEF_MAX);
		return -1;
	}
	file = ki_strndup(&arena, origin, strlen(origin));
	op = &data_ops[ndata];
	d = &defs[ndata];
	ok = parse_user(file, text, op, d, err, errlen);
	if (ok && d->reference_file)
	{
		kb_ext_source src = {(unsigned char *) ref_source, ref_source ? strlen(ref_source) : 0, ""};
		char		why[600];
		const char *rp = ref_path ? ref_path : d->reference_file;

		if (!ref_source)
		{
			snprintf(err, errlen, "%s: reference.file '%s' was not read", file, d->reference_file);
			ok = false;
		}
		/* a reference its file does not define is refused now, not at the first run */
		else if (!kb_ext_entry_defined(KB_EXT_PYTHON, &src, rp, d->reference, why, sizeof(why)))
		{
			snprintf(err, errlen, "%s: reference.python: %s", file, why);
			ok = false;
		}
		else
		{
			d->reference_source = ki_strndup(&arena, ref_source, strlen(ref_source));
			d->reference_file = ki_strndup(&arena, rp, strlen(rp));
		}
	}
	if (!ok)
	{
		/* nothing half-added: the slot is cleared and reused */
		memset(op, 0, sizeof(*op));
		memset(d, 0, sizeof(*d));
		return -1;
	}
	op->def = d;
	d->added = true;
	op->id = KB_OP_COUNT + ndata;
	op->check = kb_opdef_check;
	ndata++;
	return 0;
}

int
kb_load_op_file(const char *path, char *err, size_t errlen)
{
	char	   *text,
			   *rpath = NULL,
			   *src = NULL;
	int			rc = -1;

	if (!(text = read_small(path, "the definition", err, errlen)))
		return -1;
	/* the definition is judged before its reference file is read (the message names the first fault) */
	if (!validate_user(path, text, err, errlen))
		goto done;
	/* relative to the definition's directory, read now: later changes to the file do not reach the runs */
	if (reference_path(path, text, &rpath) && rpath)
	{
		char		why[600];

		if (!(src = read_small(rpath, "reference.file", why, sizeof(why))))
		{
			snprintf(err, errlen, "%s: %s", path, why);
			goto done;
		}
	}
	rc = add_def(path, text, src, rpath, err, errlen);
done:
	free(text);
	free(rpath);
	free(src);
	return rc;
}

int
kb_read_op_def(const char *path, const char *directory, kb_op_source *out, char *err, size_t errlen)
{
	kb_ext_source def,
				ref;
	char	   *rpath = NULL;

	memset(out, 0, sizeof(*out));
	if (!kb_ext_read_source(path, directory, NULL, &def, err, errlen))
		return -1;
	if (not_text(def.bytes, def.len))
	{
		snprintf(err, errlen, "the definition %s is %s", path, not_text(def.bytes, def.len));
		kb_ext_source_free(&def);
		return -1;
	}
	def.bytes[def.len] = '\0';	/* read_all left room for it */
	out->def = (char *) def.bytes;
	snprintf(out->def_digest, sizeof(out->def_digest), "%s", def.digest);
	if (!validate_user(path, out->def, err, errlen))
	{
		kb_op_source_free(out);
		return -1;
	}
	if (reference_path(path, out->def, &rpath) && rpath)
	{
		char		why[600];

		if (!kb_ext_read_source(rpath, directory, NULL, &ref, why, sizeof(why)))
		{
			snprintf(err, errlen, "%s: reference.file: %s", path, why);
			free(rpath);
			kb_op_source_free(out);
			return -1;
		}
		if (not_text(ref.bytes, ref.len))
		{
			snprintf(err, errlen, "%s: reference.file %s is %s", path, rpath, not_text(ref.bytes, ref.len));
			kb_ext_source_free(&ref);
			free(rpath);
			kb_op_source_free(out);
			return -1;
		}
		ref.bytes[ref.len] = '\0';
		out->ref = (char *) ref.bytes;
		out->ref_path = rpath;
		snprintf(out->ref_digest, sizeof(out->ref_digest), "%s", ref.digest);
	}
	return 0;
}

void
kb_op_source_free(kb_op_source *s)
{
	free(s->def);
	free(s->ref);
	free(s->ref_path);
	memset(s, 0, sizeof(*s));
}

int
kb_add_op_def(const char *origin, const char *text, const char *ref_source, const char *ref_path, char *name,
			  size_t namelen, char *err, size_t errlen)
{
	if (add_def(origin, text, ref_source, ref_path, err, errlen) != 0)
		return -1;
	if (name)
		snprintf(name, namelen, "%s", data_ops[ndata - 1].name);
	return 0;
}

void
kb_forget_added_ops(void)
{
	pthread_once(&once, load_all);
	/* the strings stay in the arena (a few KB per definition, for the process's life) */
	for (int i = nbuiltin; i < ndata; i++)
	{
		memset(&data_ops[i], 0, sizeof(data_ops[i]));
		memset(&defs[i], 0, sizeof(defs[i]));
	}
	ndata = nbuiltin;
}

/* ------------------------------------------------------------ the check */

/* Whether kb_opdef_check can ask this backend: a python child holds the reference. */
bool
kb_opdef_checkable(const kb_backend *be)
{
	return be->ext && be->ext->cs.ext == KB_EXT_PYTHON;
}

/*
 * The python child holds the inputs and the outputs it just wrote back: it
 * computes the float64 reference (kbench_reference.py) from the inputs as
 * kbench filled them and compares every returned tensor, answering
 * "ok <json>" with the comparison.  The inputs are those of the child's
 * current input set, so the guard (measure.c) checks a timed call against
 * the reference for the set that call was given.  Implementations that are
 * not python have no child to ask: their check is refused.
 */
int
kb_opdef_check(kb_backend *be, const kb_call *c, const kb_plan *p, kb_correctness *out)
{
	kb_ext	   *x = be->ext;
	char		reply[4096];
	int			rc;
	ki_arena	a;
	ki_errors	errs;
	ki_value   *v;
	const ki_value *f;

	if (!x || x->cs.ext != KB_EXT_PYTHON)
	{
		snprintf(be->err, sizeof(be->err), "the float64 reference of this operation is python: only python "
				 "implementations can be checked against it");
		return -1;
	}
	/* the outputs read back first (child_to_host asks the child for them once after a call) */
	{
		unsigned char byte;

		for (int i = 0; i < c->ntensors; i++)
			if (p->is_output[i] && c->t[i])
			{
				if (kb_be_to_host(be, &byte, c->t[i], 1) != KBC_OK)
					return -1;
				break;
			}
	}
	rc = kb_ext_request(be, "check\n", 600, reply, sizeof(reply));
	if (rc != KBC_OK)
		return -1;
	ki_arena_init_malloc(&a);
	ki_errors_init(&errs, &a);
	v = ki_parse(&a, reply, strlen(reply), &errs);
	if (!v || v->type != KI_OBJECT)
	{
		ki_arena_reset(&a);
		snprintf(be->err, sizeof(be->err), "the python child's check answer is not a JSON object");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->checked = 1;
#define NUM(k, dst) do { f = ki_get(v, k); if (f && f->type == KI_NUMBER && isfinite(f->u.num)) dst = f->u.num; } while (0)
	{
		double		compared = 0,
					matched = 0;

		NUM("compared", compared);
		NUM("matched", matched);
		out->compared = (int64_t) compared;
		out->matched_ratio = compared > 0 ? matched / compared : 0;
	}
	out->max_abs_error = out->max_rel_error = out->worst_ratio = 1e308;
	NUM("max_abs", out->max_abs_error);
	NUM("max_rel", out->max_rel_error);
	NUM("worst_ratio", out->worst_ratio);
	NUM("rtol", out->rtol);
	NUM("atol", out->atol_factor);
#undef NUM
	f = ki_get(v, "worst_at");
	if (f && f->type == KI_STRING)
		snprintf(out->worst_at, sizeof(out->worst_at), "%.*s", (int) f->u.str.len, f->u.str.ptr);
	f = ki_get(v, "detail");
	if (f && f->type == KI_STRING)
		snprintf(out->detail, sizeof(out->detail), "%.*s", (int) f->u.str.len, f->u.str.ptr);
	if (out->compared == 0 && !out->detail[0])
		snprintf(out->detail, sizeof(out->detail), "the check compared no value");
	ki_arena_reset(&a);
	return 0;
}

/* What the python child needs to compute the reference: written into the setup message (impl_python.c). */
void
kb_opdef_setup_json(const kb_op *op, const kb_call *c, ki_jw *w)
{
	const kb_opdef *d = op->def;

	ki_jw_key(w, "reference");
	ki_jw_obj(w);
	ki_jw_kstr(w, "function", d->reference);
	if (d->reference_source)
	{
		/* a user's reference: its bytes as read when the definition was loaded */
		ki_jw_kstr(w, "file", d->reference_file);
		ki_jw_kstr(w, "source", d->reference_source);
	}
	ki_jw_knum(w, "rtol", d->rtol[c->dtype]);
	ki_jw_knum(w, "atol", d->atol[c->dtype]);
	ki_jw_key(w, "scalars");
	ki_jw_obj(w);
	for (int i = 0; i < op->nscalars; i++)
		ki_jw_knum(w, op->scalars[i].name, op->scalars[i].value);
	ki_jw_end_obj(w);
	ki_jw_key(w, "tensors");
	ki_jw_arr(w);
	for (int i = 0; i < d->ntensors; i++)
	{
		const kb_opdef_tensor *t = &d->tensors[i];
		static const char *const roles[] = {"input", "output", "saved", "upstream", "gradient"};

		ki_jw_obj(w);
		ki_jw_kstr(w, "name", t->name);
		ki_jw_kstr(w, "role", roles[t->role]);
		if (t->of)
			ki_jw_kstr(w, "of", t->of);
		ki_jw_key(w, "shape");
		ki_jw_arr(w);
		for (int k = 0; k < t->ndims; k++)
			ki_jw_int(w, t->dim_axis[k] >= 0 ? c->ax[t->dim_axis[k]] : t->dim_literal[k]);
		ki_jw_end_arr(w);
		ki_jw_end_obj(w);
	}
	ki_jw_end_arr(w);
	ki_jw_end_obj(w);
}
